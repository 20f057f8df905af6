/*
 * draw.c: the draw order of a 2D scene (see scene.h): which nodes show
 * artwork (a layer), back to front by the z of each node's effective
 * facing, ties in preorder; and the effective facing itself.
 *
 * The order is derived from the scene's stored values and its roots' world
 * matrices, and cached (draw_cache.h): every edit that can change it moves
 * the scene's draw clock, and the first read after that rebuilds it in one
 * preorder walk and one sort. A 3D scene never builds one. Reads the scene
 * through its public interface and sc_draw_cache only; never changes it,
 * and nothing of the scene calls back here.
 */
#include "draw_cache.h"

#include "err.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---------- facing ---------- */

/* A root's natural facing: left when its world matrix is mirrored (the 2x2
 * block's determinant is negative; column-major, so m0 m4 / m1 m5). */
static int natural_facing(const scene *s, int root)
{
	mat4 w = scene_world(s, root);

	return w.m[0] * w.m[5] - w.m[4] * w.m[1] < 0 ? FACING_LEFT : FACING_RIGHT;
}

int scene_facing(const scene *s, int node)
{
	node_props p;
	int last = node;

	for (int n = node; n >= 0; n = scene_parent(s, n)) {
		scene_props(s, n, &p);
		if (p.facing != FACING_NONE)
			return p.facing;
		last = n;
	}
	return natural_facing(s, last);
}

/* ---------- the order ---------- */

static int cmp_key(const void *x, const void *y)
{
	const draw_key *a = x, *b = y;

	if (a->z != b->z)
		return a->z < b->z ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Grows the rebuild's scratch (keys and facings) for 'n' nodes. 0 or
 * RIGD_E_NOMEM (the buffers as they were, or one of them grown). */
static int reserve(draw_cache *d, int n)
{
	if (n > d->cap_scratch) {
		int nc = d->cap_scratch ? d->cap_scratch : 16;
		draw_key *k;
		unsigned char *f;

		while (nc < n)
			nc *= 2;
		if (!(k = realloc(d->keys, sizeof(*k) * (size_t)nc)))
			return RIGD_E_NOMEM;
		d->keys = k;
		if (!(f = realloc(d->facing, (size_t)nc)))
			return RIGD_E_NOMEM;
		d->facing = f;
		d->cap_scratch = nc;
	}
	return 0;
}

static int reserve_ids(draw_id **v, int *cap, int m)
{
	draw_id *p;
	int nc;

	if (m <= *cap)
		return 0;
	nc = *cap ? *cap : 16;
	while (nc < m)
		nc *= 2;
	if (!(p = realloc(*v, sizeof(draw_id) * (size_t)nc)))
		return RIGD_E_NOMEM;
	*v = p;
	*cap = nc;
	return 0;
}

/* Rebuilds the order: one preorder walk (a parent's effective facing is
 * known before its children's) and one sort. 0 or RIGD_E_NOMEM (the cache
 * then stays stale, its old list kept). */
static int rebuild(const scene *s, draw_cache *d)
{
	int n = scene_count(s), m = 0;
	bool changed;
	node_props p;

	if (reserve(d, n))
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++) {
		int node = scene_at(s, pos), parent = scene_parent(s, node);
		int f;

		scene_props(s, node, &p);
		f = p.facing != FACING_NONE ? p.facing
		    : parent >= 0	    ? d->facing[scene_pos(s, parent)]
					    : natural_facing(s, node);
		assert(parent < 0 || scene_pos(s, parent) < pos);
		d->facing[pos] = (unsigned char)f;
		if (p.layer)
			d->keys[m++] = (draw_key){ f == FACING_LEFT ? p.z_left : p.z_right, pos };
	}
	if (m > 1)
		qsort(d->keys, (size_t)m, sizeof(*d->keys), cmp_key);
	if (reserve_ids(&d->next, &d->cap_next, m))
		return RIGD_E_NOMEM;
	changed = m != d->n;
	for (int i = 0; i < m; i++) {
		const char *id = scene_id(s, scene_at(s, d->keys[i].pos));

		changed = changed || strcmp(id, d->ids[i]) != 0;
		memcpy(d->next[i], id, strlen(id) + 1);
	}
	/* The list just built becomes the order; the old one the next scratch. */
	{
		draw_id *t = d->ids;
		int tc = d->cap;

		d->ids = d->next;
		d->cap = d->cap_next;
		d->next = t;
		d->cap_next = tc;
	}
	d->n = m;
	d->version += changed;
	d->built_at = sc_draw_clock(s);
	return 0;
}

int scene_draw_order(const scene *s, int *n)
{
	draw_cache *d = sc_draw_cache(s);
	int rc;

	*n = 0;
	if (scene_dims(s) != 2)
		return 0;
	if (d->built_at != sc_draw_clock(s) && (rc = rebuild(s, d)) != 0)
		return rc;
	*n = d->n;
	return 0;
}

const char *scene_draw_id(const scene *s, int i)
{
	const draw_cache *d = sc_draw_cache(s);

	assert(d->built_at == sc_draw_clock(s) && i >= 0 && i < d->n);
	return d->ids[i];
}

uint64_t scene_draw_version(const scene *s)
{
	return sc_draw_cache(s)->version;
}
