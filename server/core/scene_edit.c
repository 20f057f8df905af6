/*
 * scene_edit.c: the structural edits of a scene (scene.h: create, load,
 * delete, reparent, set) and the dirty marks they leave for the recompute
 * pass in scene.c.
 *
 * Dirty propagation. An edit marks the node it changed, in one write
 * whatever the size of its subtree: a node is dirty (its world matrix
 * stale) when it or an ancestor is marked. Every marked node is listed in
 * dirty_roots or has a marked parent, so the listed subtrees cover
 * everything dirty; scene_update takes it from there. When the root list
 * cannot grow, 'dirty_all' makes the next pass recompute everything
 * instead of failing. An edit also notes the boxes it changed in the shape
 * log and moves the draw clock when the draw order may have changed.
 *
 * This file never allocates in a way that can leave a half-done edit: every
 * allocation an edit needs happens before the first change. It never
 * computes a world matrix itself (keep_world asks scene_world).
 */
#include "scene.h"

#include "err.h"
#include "scene_array.h"
#include "scene_check.h"
#include "scene_ids.h"
#include "scene_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- dirty marking ---------- */

static void push_root(scene *s, int node)
{
	if (s->dirty_all)
		return;
	if (s->n_roots == s->roots_cap) {
		int nc = s->roots_cap ? s->roots_cap * 2 : 16;
		int *r = realloc(s->dirty_roots, sizeof(int) * (size_t)nc);

		if (!r) {
			/* Out of memory: fall back to a full pass, never to a stale matrix. */
			s->dirty_all = true;
			return;
		}
		s->dirty_roots = r;
		s->roots_cap = nc;
	}
	s->dirty_roots[s->n_roots++] = node;
}

/* Forgets the shape log: a reader at any earlier clock rebuilds. */
static void shape_forget(scene *s)
{
	s->shape_base += (uint64_t)s->shape_n + 1;
	s->shape_n = 0;
}

/* Notes that the box of 'node' (-1: nothing) in its own frame changed:
 * its bounds, a child's local matrix or its set of children. The log
 * holds at most max(4096, count) entries; past that, or out of memory, it
 * is forgotten, and its readers rebuild in O(n), no more often than once
 * per that many edits. */
static void shape_note(scene *s, int node)
{
	if (node < 0)
		return;
	if (s->shape_n == s->shape_cap) {
		int limit = s->count > 4096 ? s->count : 4096;
		int nc = s->shape_cap ? s->shape_cap * 2 : 64;
		int *log = nc <= limit ? realloc(s->shape_log, sizeof(int) * (size_t)nc) : NULL;

		if (!log) {
			shape_forget(s);
			if (s->shape_cap == 0)
				return;
		} else {
			s->shape_log = log;
			s->shape_cap = nc;
		}
	}
	s->shape_log[s->shape_n++] = node;
}

/* Marks node's subtree dirty: the node is marked, and listed as a root
 * unless its parent is marked (then it lies in a listed subtree already).
 * A node 'moved' is marked again, as it may have left the subtree that
 * covered it. */
static void mark_dirty(scene *s, int node, bool moved)
{
	int p = s->parent[node];

	if (node_marked(s, node) && !moved)
		return; /* listed, or under a marked parent */
	node_mark(s, node);
	if (p < 0 || !node_marked(s, p))
		push_root(s, node);
}

static void set_local(scene *s, int node)
{
	const node_data *d = &s->nd[node];
	mat34 l = mat34_from_mat4(mat4_compose_pivot2d(d->t, d->r, d->s, d->pivot, d->shear));

	memcpy(local_of(s, node), l.m, sizeof(l.m));
}

/*
 * Starts loading what an edit of live 'node' is about to write or read, so
 * that the cache misses of an edit at a random place in a big scene overlap
 * instead of following one another: the node's three lines of matrices
 * (written by set_local and then by scene_update; a store that misses holds
 * up every later store), the two lines of its parent's world matrix (read
 * by scene_update) and both records (mark_dirty). Only a hint: it changes nothing. Always inlined:
 * GCC's mod/ref analysis sees no effect in a function that only prefetches
 * and deletes the call.
 */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void prefetch_for_edit(const scene *s, int node)
{
#if defined(__GNUC__)
	const double *xf = local_of(s, node);
	int p = s->parent[node];

	for (int k = 0; k < XF_DOUBLES; k += 8)
		__builtin_prefetch(xf + k, 1);
	__builtin_prefetch(&s->hot[node], 1);
	if (p >= 0) {
		__builtin_prefetch(world_of(s, p));
		__builtin_prefetch(world_of(s, p) + MAT_DOUBLES - 1);
		__builtin_prefetch(&s->hot[p]);
	}
#else
	(void)s;
	(void)node;
#endif
}

/* ---------- room for an edit ---------- */

/* Makes room for one more node (handle, order slot and id index entry). */
static int reserve_one(scene *s)
{
	int err;

	if (s->n_free == 0 && s->nslots == s->cap &&
	    (err = sc_arrays_grow(s, s->cap ? s->cap * 2 : 64)) != 0)
		return err;
	if ((s->count + 1) * 2 > s->hash_cap)
		return sc_ids_resize(s, s->hash_cap * 2);
	return 0;
}

/* Makes room for 'n' nodes in one step (scene_load into an empty scene). */
static int reserve_n(scene *s, int n)
{
	int nc = s->cap ? s->cap : 64, hc = s->hash_cap;

	while (nc < n)
		nc *= 2;
	while (hc < 2 * n)
		hc *= 2;
	if (nc > s->cap && sc_arrays_grow(s, nc) != 0)
		return RIGD_E_NOMEM;
	return hc > s->hash_cap ? sc_ids_resize(s, hc) : 0;
}

/* ---------- edits ---------- */

static void renumber(scene *s, int from, int to)
{
	assert(0 <= from && from <= to && to <= s->count);
	s->order_version++;
	for (int i = from; i < to; i++)
		s->hot[s->order[i]].pos = i;
}

static void add_to_ancestors(scene *s, int parent, int delta)
{
	for (int p = parent; p >= 0; p = s->parent[p])
		s->hot[p].size += delta;
}

/* The position at which a new child of 'parent' (-1: a root) lands at
 * sibling 'index' (-1 or the child count: after the last), counting the
 * siblings other than 'skip' (-1: none), which is the node being moved. */
static int insert_pos(const scene *s, int parent, int index, int skip)
{
	int i, end, k = 0;

	assert(parent == -1 || live(s, parent));
	child_range(s, parent, &i, &end);
	assert(0 <= i && i <= end && end <= s->count);
	if (index < 0)
		return end;
	for (; i < end; i += s->hot[s->order[i]].size) {
		if (s->order[i] == skip)
			continue;
		if (k++ == index)
			return i;
	}
	return end;
}

static void reverse(int *v, int lo, int hi)
{
	for (hi--; lo < hi; lo++, hi--) {
		int t = v[lo];

		v[lo] = v[hi];
		v[hi] = t;
	}
}

/* Swaps the adjacent blocks v[lo, mid) and v[mid, hi) in place with three
 * reversals: moving a subtree in 'order' needs no buffer, so it cannot fail
 * (an edit batch's rollback moves subtrees back and must not fail). */
static void rotate(int *v, int lo, int mid, int hi)
{
	reverse(v, lo, mid);
	reverse(v, mid, hi);
	reverse(v, lo, hi);
}

/* The three strings a node owns, copied (or handed over) by the caller of
 * store_props. */
typedef struct node_strings {
	char *name, *mesh, *layer;
} node_strings;

static char *dup_or_null(const char *str, int *err)
{
	char *c;

	if (!str)
		return NULL;
	c = strdup(str);
	if (!c)
		*err = RIGD_E_NOMEM;
	return c;
}

/* Copies of p's strings whose bits are in 'mask' into *out (the others
 * NULL); 0, or RIGD_E_NOMEM with nothing kept. */
static int dup_strings(const node_props *p, unsigned mask, node_strings *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (mask & PROP_NAME)
		out->name = dup_or_null(p->name, &err);
	if (mask & PROP_MESH)
		out->mesh = dup_or_null(p->mesh, &err);
	if (mask & PROP_LAYER)
		out->layer = dup_or_null(p->layer, &err);
	if (err) {
		free(out->name);
		free(out->mesh);
		free(out->layer);
		memset(out, 0, sizeof(*out));
	}
	return err;
}

/* Writes the fields in 'mask' of 'p' into node's data; strings already
 * copied by the caller (ownership of those in 'copies' moves here). */
static void store_props(scene *s, int node, unsigned mask, const node_props *p,
			node_strings copies)
{
	node_data *d = &s->nd[node];

	if (mask & PROP_T)
		d->t = p->t;
	if (mask & PROP_R)
		quat_normalize(p->r, &d->r); /* checked by node_props_check */
	if (mask & PROP_S)
		d->s = p->s;
	if (mask & PROP_PIVOT)
		d->pivot = p->pivot;
	if (mask & PROP_BOUNDS) {
		d->has_bounds = p->has_bounds;
		d->bounds = p->has_bounds ? p->bounds : aabb_make(vec3_make(0, 0, 0), vec3_make(0, 0, 0));
	}
	if (mask & PROP_MESH) {
		free(d->mesh);
		d->mesh = copies.mesh;
	}
	if (mask & PROP_NAME) {
		free(d->name);
		d->name = copies.name;
	}
	if (mask & PROP_LAYER) {
		free(d->layer);
		d->layer = copies.layer;
	}
	if (mask & PROP_Z) {
		d->z_right = p->z_right;
		d->z_left = p->z_left;
	}
	if (mask & PROP_FACING)
		d->facing = (signed char)p->facing; /* checked: FACING_NONE..FACING_LEFT */
	if (mask & PROP_DRAW)
		draw_stale(s);
	if (mask & PROP_KIND)
		d->kind = p->kind;
	if (mask & PROP_CAMERA) {
		d->fov_deg = p->fov_deg;
		d->znear = p->znear;
		d->zfar = p->zfar;
	}
	if (mask & PROP_VISIBLE)
		d->visible = p->visible;
	if (mask & PROP_SHEAR) {
		d->shear[0] = p->shear[0];
		d->shear[1] = p->shear[1];
	}
	if (mask & PROP_INHERIT) {
		/* The count that picks the recompute pass (scene.c). */
		s->n_inherit += (p->inherit != INHERIT_NORMAL) - (d->inherit != INHERIT_NORMAL);
		d->inherit = (signed char)p->inherit; /* checked: inherit_mode_valid */
	}
}

int scene_create(scene *s, const char *id, int parent, int index, const node_props *p,
		 int *out_node)
{
	node_props defaults = node_props_default();
	node_strings str;
	int err = 0, node, at;

	if (!p)
		p = &defaults;
	if (!scene_id_valid(id))
		return RIGD_E_BAD_ID;
	if (scene_find(s, id) >= 0)
		return RIGD_E_DUPLICATE_ID;
	if (parent != -1 && !live(s, parent))
		return RIGD_E_UNKNOWN_NODE;
	/* Counting children walks them all: only an explicit index needs it. */
	if (index < -1 || (index >= 0 && index > scene_child_count(s, parent)))
		return RIGD_E_BAD_INDEX;
	if ((err = node_props_check(p, PROP_ALL, NULL)) != 0 ||
	    (err = sc_check_local(p->t, p->r, p->s, p->pivot, p->shear)) != 0)
		return err;
	if (s->count >= s->max_nodes)
		return RIGD_E_LIMIT;
	if ((err = reserve_one(s)) != 0 || (err = dup_strings(p, PROP_ALL, &str)) != 0)
		return err;

	/* Nothing below can fail. */
	node = s->n_free ? s->free_handles[--s->n_free] : s->nslots++;
	at = insert_pos(s, parent, index, -1);
	memmove(s->order + at + 1, s->order + at, sizeof(int) * (size_t)(s->count - at));
	s->order[at] = node;
	s->order_is_handles = s->order_is_handles && at == s->count && node == at;
	s->count++;
	renumber(s, at, s->count);
	s->parent[node] = parent;
	s->hot[node].size = 1;
	add_to_ancestors(s, parent, 1);
	memcpy(s->ids[node], id, strlen(id) + 1);
	sc_ids_insert(s, node);
	memset(&s->nd[node], 0, sizeof(node_data));
	store_props(s, node, PROP_ALL, p, str);
	set_local(s, node);
	node_state(s, node, false, 0);
	mark_dirty(s, node, false);
	shape_note(s, node);
	draw_stale(s);
	/* A parent comes before its children in preorder, and a child lies
	 * inside its parent's subtree range [pos, pos + size). */
	assert(s->order[at] == node && s->hot[node].pos == at);
	assert(parent < 0 || (s->hot[parent].pos < at &&
			      at < s->hot[parent].pos + s->hot[parent].size));
	if (out_node)
		*out_node = node;
	return 0;
}


/* Empties a scene that scene_load was filling; handles restart at 0. */
static void unload(scene *s, int loaded)
{
	for (int n = 0; n < loaded; n++) {
		free(s->nd[n].name);
		free(s->nd[n].mesh);
		free(s->nd[n].layer);
		s->ids[n][0] = '\0';
		s->hot[n].pos = -1;
	}
	sc_ids_clear(s);
	s->count = s->nslots = s->n_free = s->n_roots = 0;
	s->n_inherit = 0;
	s->dirty_all = false;
	s->order_is_handles = true;
	s->order_version++;
}

int scene_load(scene *s, int n, const char *const *ids, const int *parents,
	       const node_props *props, int *bad)
{
	node_props defaults = node_props_default();
	int *stack = NULL, height = 0, err = 0, i;

	if (s->count != 0 || s->nslots != 0)
		return RIGD_E_LIMIT;
	if (n > s->max_nodes)
		return RIGD_E_LIMIT;
	if (n <= 0)
		return 0;
	if ((err = reserve_n(s, n)) != 0 || !(stack = malloc(sizeof(int) * (size_t)n))) {
		free(stack);
		return RIGD_E_NOMEM;
	}
	for (i = 0; i < n; i++) {
		const node_props *p = props ? &props[i] : &defaults;
		int parent = parents[i];
		node_strings str;

		if (!scene_id_valid(ids[i])) {
			err = RIGD_E_BAD_ID;
			break;
		}
		if (scene_find(s, ids[i]) >= 0) {
			err = RIGD_E_DUPLICATE_ID;
			break;
		}
		/* Preorder: the parent is on the stack of open ancestors. */
		while (height > 0 && stack[height - 1] != parent)
			height--;
		if (parent < -1 || parent >= i || (parent >= 0 && height == 0)) {
			err = RIGD_E_BAD_INDEX;
			break;
		}
		if ((err = node_props_check(p, PROP_ALL, NULL)) != 0 ||
		    (err = sc_check_local(p->t, p->r, p->s, p->pivot, p->shear)) != 0)
			break;
		if ((err = dup_strings(p, PROP_ALL, &str)) != 0)
			break;
		stack[height++] = i;
		s->order[i] = i;
		s->hot[i].pos = i;
		s->parent[i] = parent;
		s->hot[i].size = 1;
		node_state(s, i, true, 0);
		memcpy(s->ids[i], ids[i], strlen(ids[i]) + 1);
		sc_ids_insert(s, i);
		memset(&s->nd[i], 0, sizeof(node_data));
		store_props(s, i, PROP_ALL, p, str);
		set_local(s, i);
		s->count = s->nslots = i + 1;
	}
	free(stack);
	if (err) {
		if (bad)
			*bad = i;
		unload(s, i);
		return err;
	}
	assert(i == n && s->count == n);
	/* Subtree sizes bottom-up: in reverse preorder children precede parents. */
	for (i = n - 1; i >= 0; i--)
		if (s->parent[i] >= 0)
			s->hot[s->parent[i]].size += s->hot[i].size;
	s->dirty_all = true;
	s->order_is_handles = true;
	s->order_version++;
	shape_forget(s);
	draw_stale(s);
	return 0;
}

static void drop_roots_in(scene *s, int a, int b)
{
	int k = 0;

	for (int i = 0; i < s->n_roots; i++) {
		int r = s->dirty_roots[i];

		if (!live(s, r) || s->hot[r].pos < a || s->hot[r].pos >= b)
			s->dirty_roots[k++] = r;
	}
	s->n_roots = k;
}

int scene_delete(scene *s, int node)
{
	int a, k;

	if (!live(s, node))
		return RIGD_E_UNKNOWN_NODE;
	a = s->hot[node].pos;
	k = s->hot[node].size;
	assert(s->order[a] == node && k >= 1 && a + k <= s->count);
	assert(s->n_free + k <= s->cap);
	drop_roots_in(s, a, a + k);
	shape_note(s, s->parent[node]);
	add_to_ancestors(s, s->parent[node], -k);
	for (int i = a; i < a + k; i++) {
		int n = s->order[i];

		sc_ids_remove(s, n);
		s->n_inherit -= s->nd[n].inherit != INHERIT_NORMAL;
		free(s->nd[n].name);
		free(s->nd[n].mesh);
		free(s->nd[n].layer);
		s->nd[n].name = s->nd[n].mesh = s->nd[n].layer = NULL;
		s->ids[n][0] = '\0';
		s->hot[n].pos = -1;
		s->free_handles[s->n_free++] = n;
	}
	memmove(s->order + a, s->order + a + k, sizeof(int) * (size_t)(s->count - a - k));
	s->order_is_handles = s->order_is_handles && a + k == s->count;
	s->count -= k;
	renumber(s, a, s->count);
	draw_stale(s);
	return 0;
}

/* The local channels that keep 'node' where it is in the world under
 * 'new_parent'; fails with NOT_TRS when the needed local has a shear. */
static int keep_world_channels(const scene *s, int node, int new_parent, node_props *out)
{
	mat4 w = scene_world(s, node), pinv = mat4_identity(), l;
	vec3 t, sc, pivot = s->nd[node].pivot;
	double err, scale = 0;
	quat r;
	int rc;

	if (new_parent >= 0 && (rc = mat4_invert_affine(scene_world(s, new_parent), &pinv)) != 0)
		return rc;
	l = mat4_mul(pinv, w);
	if (!mat4_is_finite(l))
		return RIGD_E_SINGULAR;
	for (int i = 0; i < 16; i++)
		scale = fmax(scale, fabs(l.m[i]));
	if (!mat4_decompose(l, 1e-9 * fmax(1, scale), &t, &r, &sc, &err))
		return RIGD_E_NOT_TRS;
	/* L = T(t) T(p) R S T(-p): the translation column is t + p - RS p. */
	out->t = vec3_add(vec3_sub(t, pivot), mat4_direction(mat4_compose(vec3_make(0, 0, 0), r, sc), pivot));
	out->r = r;
	out->s = sc;
	return 0;
}

int scene_reparent(scene *s, int node, int new_parent, int index, bool keep_world)
{
	int a, k, old_parent, siblings, at;
	node_props kw;
	int rc;

	if (!live(s, node) || (new_parent != -1 && !live(s, new_parent)))
		return RIGD_E_UNKNOWN_NODE;
	if (new_parent >= 0 && scene_is_ancestor(s, node, new_parent))
		return RIGD_E_CYCLE;
	old_parent = s->parent[node];
	siblings = index <= 0 ? 0 : scene_child_count(s, new_parent) - (old_parent == new_parent ? 1 : 0);
	if (index < -1 || index > siblings)
		return RIGD_E_BAD_INDEX;
	/* keep_world rewrites t, r and s alone: a node with a shear or an
	 * inherit mode other than normal would need its shear or mode
	 * rewritten too, which is refused as a local that is not TRS. */
	if (keep_world && (s->nd[node].shear[0] != 0 || s->nd[node].shear[1] != 0 ||
			   s->nd[node].inherit != INHERIT_NORMAL))
		return RIGD_E_NOT_TRS;
	if (keep_world && ((rc = keep_world_channels(s, node, new_parent, &kw)) != 0 ||
			   (rc = sc_check_local(kw.t, kw.r, kw.s, s->nd[node].pivot,
						s->nd[node].shear)) != 0))
		return rc;
	a = s->hot[node].pos;
	k = s->hot[node].size;
	/* Where the subtree [a, a + k) lands, as a position in 'order' without
	 * it: a new sibling's start (never inside the subtree, which cannot
	 * hold the new parent) or the end of the new parent's range. */
	at = insert_pos(s, new_parent, index, node);
	if (at > a)
		at -= k;

	/* Swap the subtree with the nodes between its old and new place. */
	if (at < a) {
		rotate(s->order, at, a, a + k);
		renumber(s, at, a + k);
		s->order_is_handles = false;
	} else if (at > a) {
		rotate(s->order, a, a + k, at + k);
		renumber(s, a, at + k);
		s->order_is_handles = false;
	}
	add_to_ancestors(s, old_parent, -k);
	s->parent[node] = new_parent;
	s->order_version++;  /* the same place in 'order' may be another parent's */
	add_to_ancestors(s, new_parent, k);

	assert(s->order[s->hot[node].pos] == node && s->hot[node].size == k);
	assert(new_parent < 0 ||
	       (s->hot[new_parent].pos < s->hot[node].pos &&
		s->hot[node].pos + k <= s->hot[new_parent].pos + s->hot[new_parent].size));
	if (keep_world) {
		store_props(s, node, PROP_T | PROP_R | PROP_S, &kw, (node_strings){ 0 });
		set_local(s, node);
	}
	mark_dirty(s, node, true);
	shape_note(s, old_parent);
	shape_note(s, node);
	draw_stale(s);
	return 0;
}

/* What scene_set and scene_set_owned check before changing anything. */
static int check_set(const scene *s, int node, unsigned mask, const node_props *p)
{
	int err;

	if (!live(s, node))
		return RIGD_E_UNKNOWN_NODE;
	prefetch_for_edit(s, node);
	if ((err = node_props_check(p, mask, NULL)) != 0)
		return err;
	if (mask & PROP_TRANSFORM) {
		const node_data *d = &s->nd[node];

		err = sc_check_local(mask & PROP_T ? p->t : d->t, mask & PROP_R ? p->r : d->r,
				  mask & PROP_S ? p->s : d->s, mask & PROP_PIVOT ? p->pivot : d->pivot,
				  mask & PROP_SHEAR ? p->shear : d->shear);
		if (err)
			return err;
	}
	return 0;
}

/* True when the 2x2 block of a stored matrix (mat34, by rows) has a
 * negative determinant: the node's frame is mirrored in the plane. */
static inline bool mirrored2d(const double *m)
{
	return m[0] * m[5] - m[1] * m[4] < 0;
}

/* The part of scene_set that cannot fail; takes ownership of the strings
 * in 'copies' as store_props does. A root of a 2D scene whose frame turns
 * mirrored, or back, changes its natural facing: the draw order goes
 * stale then, and only then. */
static void set_checked(scene *s, int node, unsigned mask, const node_props *p,
			node_strings copies)
{
	bool flip_check = s->dims == 2 && s->parent[node] < 0 &&
			  (mask & (PROP_R | PROP_S | PROP_SHEAR));
	bool was_mirrored = flip_check && mirrored2d(local_of(s, node));

	store_props(s, node, mask, p, copies);
	if (mask & PROP_TRANSFORM) {
		set_local(s, node);
		mark_dirty(s, node, false);
		shape_note(s, s->parent[node]);
	}
	if (mask & PROP_BOUNDS)
		shape_note(s, node);
	if (flip_check && mirrored2d(local_of(s, node)) != was_mirrored)
		draw_stale(s);
}

int scene_set(scene *s, int node, unsigned mask, const node_props *p)
{
	node_strings str;
	int err;

	if ((err = check_set(s, node, mask, p)) != 0 || (err = dup_strings(p, mask, &str)) != 0)
		return err;
	set_checked(s, node, mask, p, str);
	return 0;
}

int scene_set_owned(scene *s, int node, unsigned mask, const node_props *p, char *name,
		    char *mesh, char *layer)
{
	node_props q = *p;
	int err;

	q.name = name;
	q.mesh = mesh;
	q.layer = layer;
	if ((err = check_set(s, node, mask, &q)) != 0)
		return err;
	set_checked(s, node, mask, &q,
		    (node_strings){ mask & PROP_NAME ? name : NULL, mask & PROP_MESH ? mesh : NULL,
				    mask & PROP_LAYER ? layer : NULL });
	return 0;
}
