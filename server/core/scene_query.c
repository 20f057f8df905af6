/*
 * scene_query.c: what a scene answers without changing its value (see
 * scene.h): its structure (counts, ids, parents, positions, children and
 * their index), a node's stored values, points and frames between nodes,
 * boxes and the shape log, the hierarchical cull, the matrix-stack
 * traversal and the scene's hash.
 *
 * Changes nothing but the child-index cache (scene_child_index). Every
 * world matrix comes from scene_world, so no answer is ever stale.
 */
#include "scene.h"

#include "err.h"
#include "scene_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------- structure ---------- */

int scene_count(const scene *s)
{
	return s->count;
}


const char *scene_id(const scene *s, int node)
{
	return live(s, node) ? s->ids[node] : NULL;
}

int scene_parent(const scene *s, int node)
{
	return live(s, node) ? s->parent[node] : -1;
}

int scene_pos(const scene *s, int node)
{
	return live(s, node) ? s->hot[node].pos : -1;
}

int scene_at(const scene *s, int pos)
{
	return pos >= 0 && pos < s->count ? s->order[pos] : -1;
}

int scene_subtree_size(const scene *s, int node)
{
	return live(s, node) ? s->hot[node].size : 0;
}

int scene_depth(const scene *s, int node)
{
	int d = 0;

	if (!live(s, node))
		return -1;
	for (int p = s->parent[node]; p >= 0; p = s->parent[p])
		d++;
	return d;
}

int scene_child_count(const scene *s, int node)
{
	int i, end, n = 0;

	if (node >= 0 && !live(s, node))
		return 0;
	child_range(s, node, &i, &end);
	for (; i < end; i += s->hot[s->order[i]].size)
		n++;
	return n;
}

int scene_child_at(const scene *s, int node, int index)
{
	int i, end;

	if ((node >= 0 && !live(s, node)) || index < 0)
		return -1;
	child_range(s, node, &i, &end);
	for (; i < end; i += s->hot[s->order[i]].size)
		if (index-- == 0)
			return s->order[i];
	return -1;
}

/* Numbers the children of 'parent' (-1: the roots) in 'v'. */
static void number_children(const scene *s, int parent, int *v)
{
	int i, end, k = 0;

	child_range(s, parent, &i, &end);
	for (; i < end; i += s->hot[s->order[i]].size)
		v[s->order[i]] = k++;
}

/* Builds the cache of child indices: one pass, O(nodes). 0 or
 * RIGD_E_NOMEM (the cache stays invalid). */
static int child_index_build(scene *s)
{
	if (s->child_idx_cap < s->nslots) {
		int *v = realloc(s->child_idx, sizeof(int) * (size_t)s->nslots);

		if (!v)
			return RIGD_E_NOMEM;
		s->child_idx = v;
		s->child_idx_cap = s->nslots;
	}
	number_children(s, -1, s->child_idx);
	for (int pos = 0; pos < s->count; pos++)
		number_children(s, s->order[pos], s->child_idx);
	s->child_idx_order = s->order_version + 1;
	return 0;
}

/* Asks at one order before the cache is built: a record or two of an
 * update scan their siblings; a snapshot, which asks for every node,
 * builds it once instead of scanning every sibling list once per child. */
#define CHILD_INDEX_SCANS 64

int scene_child_index(const scene *cs, int node)
{
	scene *s = (scene *)cs;  /* only the cache changes */
	int i, end, k = 0;

	if (!live(s, node))
		return -1;
	if (s->child_idx_order == s->order_version + 1)
		return s->child_idx[node];
	if (s->asks_order != s->order_version) {
		s->asks_order = s->order_version;
		s->asks = 0;
	}
	if (++s->asks > CHILD_INDEX_SCANS && child_index_build(s) == 0)
		return s->child_idx[node];
	child_range(s, s->parent[node], &i, &end);
	for (; i < end; i += s->hot[s->order[i]].size, k++)
		if (s->order[i] == node)
			return k;
	return -1;
}

bool scene_is_ancestor(const scene *s, int ancestor, int node)
{
	if (!live(s, ancestor) || !live(s, node))
		return false;
	return s->hot[node].pos >= s->hot[ancestor].pos && s->hot[node].pos < s->hot[ancestor].pos + s->hot[ancestor].size;
}

void scene_props(const scene *s, int node, node_props *out)
{
	const node_data *d = &s->nd[node];

	out->t = d->t;
	out->r = d->r;
	out->s = d->s;
	out->pivot = d->pivot;
	out->has_bounds = d->has_bounds;
	out->bounds = d->bounds;
	out->mesh = d->mesh;
	out->name = d->name;
	out->kind = d->kind;
	out->fov_deg = d->fov_deg;
	out->znear = d->znear;
	out->zfar = d->zfar;
	out->visible = d->visible;
	out->layer = d->layer;
	out->z_right = d->z_right;
	out->z_left = d->z_left;
	out->facing = d->facing;
	out->shear[0] = d->shear[0];
	out->shear[1] = d->shear[1];
	out->inherit = d->inherit;
}

/* ---------- geometry ---------- */

vec3 scene_to_world(const scene *s, int node, vec3 p)
{
	return mat4_point(scene_world(s, node), p);
}

int scene_from_world(const scene *s, int node, vec3 p, vec3 *out)
{
	mat4 inv;
	int rc = mat4_invert_affine(scene_world(s, node), &inv);

	if (rc)
		return rc;
	*out = mat4_point(inv, p);
	return 0;
}

int scene_relative(const scene *s, int from, int to, mat4 *out)
{
	mat4 inv;
	int rc = mat4_invert_affine(scene_world(s, to), &inv);

	if (rc)
		return rc;
	*out = mat4_mul(inv, scene_world(s, from));
	return 0;
}

int scene_between(const scene *s, int from, int to, vec3 p, vec3 *out)
{
	mat4 rel;
	int rc = scene_relative(s, from, to, &rel);

	if (rc)
		return rc;
	*out = mat4_point(rel, p);
	return 0;
}

int scene_view(const scene *s, int node, mat4 *out)
{
	return mat4_invert_affine(scene_world(s, node), out);
}

double scene_det(const scene *s, int node)
{
	return mat4_det3(scene_world(s, node));
}

double scene_shear_deg(const scene *s, int node)
{
	return mat4_shear_deg(scene_world(s, node));
}

aabb scene_world_box(const scene *s, int node)
{
	if (!live(s, node) || !s->nd[node].has_bounds)
		return aabb_empty();
	return aabb_transform(s->nd[node].bounds, scene_world(s, node));
}

aabb scene_local_box(const scene *s, int node)
{
	if (!live(s, node) || !s->nd[node].has_bounds)
		return aabb_empty();
	return s->nd[node].bounds;
}

uint64_t scene_shape_clock(const scene *s)
{
	return s->shape_base + (uint64_t)s->shape_n;
}

bool scene_shape_since(const scene *s, uint64_t clock, const int **nodes, int *n)
{
	if (clock < s->shape_base || clock > scene_shape_clock(s))
		return false;
	*n = (int)(scene_shape_clock(s) - clock);
	*nodes = *n ? s->shape_log + (clock - s->shape_base) : NULL;
	return true;
}

aabb scene_subtree_box(const scene *s, int node)
{
	aabb box = aabb_empty();

	if (!live(s, node))
		return box;
	for (int i = s->hot[node].pos; i < s->hot[node].pos + s->hot[node].size; i++)
		box = aabb_union(box, scene_world_box(s, s->order[i]));
	return box;
}

aabb scene_box(const scene *s)
{
	aabb box = aabb_empty();

	for (int i = 0; i < s->count; i++)
		box = aabb_union(box, scene_world_box(s, s->order[i]));
	return box;
}

static int classify_all(const plane *planes, int n, aabb box)
{
	int side = SIDE_INSIDE;

	for (int i = 0; i < n; i++) {
		int c = plane_classify(planes[i], box);

		if (c == SIDE_OUTSIDE)
			return SIDE_OUTSIDE;
		if (c == SIDE_STRADDLE)
			side = SIDE_STRADDLE;
	}
	return side;
}

int scene_cull(const scene *s, const plane *planes, int n, int *visible, int cap, int *tests)
{
	aabb *own, *sub;
	int nvis = 0, ntests = 0, i;

	own = malloc(sizeof(aabb) * (size_t)(s->count ? s->count : 1));
	sub = malloc(sizeof(aabb) * (size_t)(s->count ? s->count : 1));
	if (!own || !sub) {
		free(own);
		free(sub);
		return RIGD_E_NOMEM;
	}
	/* Subtree boxes bottom-up: in reverse preorder every child comes before
	 * its parent. */
	for (i = 0; i < s->count; i++)
		own[i] = sub[i] = scene_world_box(s, s->order[i]);
	for (i = s->count - 1; i >= 0; i--) {
		int p = s->parent[s->order[i]];

		if (p >= 0)
			sub[s->hot[p].pos] = aabb_union(sub[s->hot[p].pos], sub[i]);
	}

#define ADD_VISIBLE(pos_)                                  \
	do {                                               \
		if (visible && nvis < cap)                 \
			visible[nvis] = s->order[(pos_)];  \
		nvis++;                                    \
	} while (0)

	for (i = 0; i < s->count;) {
		int node = s->order[i], end = i + s->hot[node].size, side;

		if (aabb_is_empty(sub[i])) {
			i = end; /* nothing with bounds below: nothing to draw, no test */
			continue;
		}
		ntests++;
		side = classify_all(planes, n, sub[i]);
		if (side == SIDE_OUTSIDE) {
			i = end;
		} else if (side == SIDE_INSIDE) {
			for (int j = i; j < end; j++)
				if (!aabb_is_empty(own[j]))
					ADD_VISIBLE(j);
			i = end;
		} else if (s->hot[node].size == 1) {
			ADD_VISIBLE(i); /* a leaf: its subtree box is its own box */
			i++;
		} else {
			/* Open the node: its own box, then each child's subtree in turn. */
			if (!aabb_is_empty(own[i])) {
				ntests++;
				if (classify_all(planes, n, own[i]) != SIDE_OUTSIDE)
					ADD_VISIBLE(i);
			}
			i++;
		}
	}
#undef ADD_VISIBLE
	free(own);
	free(sub);
	if (tests)
		*tests = ntests;
	return nvis;
}

int scene_traverse(const scene *s, scene_visit_fn fn, void *ctx)
{
	/* The stack holds the world matrices of the ancestors of the node being
	 * visited, with their handles; its height is the node's depth. */
	double *stack = NULL; /* mat34 each */
	int *who = NULL, height = 0, cap = 0, max_height = 0;
	mat34 w34;
	mat4 w;

	for (int i = 0; i < s->count; i++) {
		int node = s->order[i], p = s->parent[node];

		while (height > 0 && who[height - 1] != p)
			height--; /* pop back to the parent */
		if (height == cap) {
			int nc = cap ? cap * 2 : 32;
			double *ns = realloc(stack, sizeof(double) * MAT_DOUBLES * (size_t)nc);
			int *nw;

			if (!ns) {
				free(stack);
				free(who);
				return RIGD_E_NOMEM;
			}
			stack = ns;
			nw = realloc(who, sizeof(int) * (size_t)nc);
			if (!nw) {
				free(stack);
				free(who);
				return RIGD_E_NOMEM;
			}
			who = nw;
			cap = nc;
		}
		node_world(s, node, height == 0 ? NULL : stack + MAT_DOUBLES * (size_t)(height - 1),
			   w34.m);
		memcpy(stack + MAT_DOUBLES * (size_t)height, w34.m, sizeof(w34.m));
		w = mat4_from_mat34(w34);
		who[height++] = node;
		if (height > max_height)
			max_height = height;
		if (fn)
			fn(ctx, node, height - 1, &w);
	}
	free(stack);
	free(who);
	return max_height;
}

uint64_t scene_hash(const scene *s)
{
	uint64_t h = 14695981039346656037ull;
	mat4 local, world;

#define MIX_BYTES(ptr_, len_)                                    \
	do {                                                     \
		const unsigned char *b_ = (const unsigned char *)(ptr_); \
		for (size_t k_ = 0; k_ < (len_); k_++)             \
			h = (h ^ b_[k_]) * 1099511628211ull;       \
	} while (0)

	for (int i = 0; i < s->count; i++) {
		int n = s->order[i], pp = s->parent[n] >= 0 ? s->hot[s->parent[n]].pos : -1;

		MIX_BYTES(s->ids[n], strlen(s->ids[n]) + 1);
		MIX_BYTES(&pp, sizeof(pp));
		/* The full 4x4 matrices, as scene_local and scene_world give them. */
		local = stored_mat4(local_of(s, n));
		world = stored_mat4(world_of(s, n));
		MIX_BYTES(local.m, sizeof(local.m));
		MIX_BYTES(world.m, sizeof(world.m));
	}
#undef MIX_BYTES
	return h;
}
