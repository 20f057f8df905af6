/*
 * scene.c: one scene graph in memory (see scene.h for the model): its
 * lifetime and the recompute pass that brings its world matrices up to
 * date. The layout it shares with the other scene_*.c files is in
 * scene_internal.h; the id index is scene_ids.c, the checks of a node's
 * values scene_check.c, the edits and their dirty marks scene_edit.c, the
 * reads and queries scene_query.c, where the arrays live in memory
 * scene_array.c, and what a scene hosts besides its nodes (poses, assets,
 * the draw-order cache) scene_cache.c.
 *
 * The recompute pass is kept whole in this file because it is tuned as
 * one unit: its helpers inline into one loop, and the layout they share is
 * measured together.
 *
 * The pass. Edits mark nodes (scene_edit.c); scene_update sorts the
 * listed dirty roots by position, drops those inside another's subtree and
 * recomputes each remaining range in one linear pass, so the count it
 * returns is exactly the size of the union of the dirty subtrees. Under
 * 'dirty_all' it recomputes everything.
 *
 * Never changes a node's stored values: only world matrices, marks and
 * stamps.
 */
#include "scene.h"

#include "err.h"
#include "scene_array.h"
#include "scene_cache.h"
#include "scene_ik.h"
#include "scene_ids.h"
#include "scene_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---------- lifetime ---------- */

node_props node_props_default(void)
{
	node_props p;

	memset(&p, 0, sizeof(p));
	p.r = quat_identity();
	p.s = vec3_make(1, 1, 1);
	p.bounds = aabb_make(vec3_make(0, 0, 0), vec3_make(0, 0, 0));
	p.kind = NODE_GROUP;
	p.fov_deg = 60;
	p.znear = 0.1;
	p.zfar = 1000;
	p.visible = true;
	return p;
}

scene *scene_new(void)
{
	scene *s = calloc(1, sizeof(*s));
	int ids_err, caches_err;

	if (!s)
		return NULL;
	s->max_nodes = SCENE_DEFAULT_MAX_NODES;
	s->dims = 3;
	/* The caches are made even when the index could not be: whatever
	 * fails, a new scene makes the same allocations in the same order,
	 * which is what a test that fails the N-th one counts on (test_oom). */
	ids_err = sc_ids_init(s);
	caches_err = sc_caches_new(s);
	if (ids_err || caches_err) {
		sc_ids_free(s);
		sc_caches_free(s);
		free(s);
		return NULL;
	}
	s->order_is_handles = true;
	s->gen = 1;
	return s;
}

void scene_free(scene *s)
{
	if (!s)
		return;
	for (int n = 0; n < s->nslots; n++) {
		free(s->nd[n].name);
		free(s->nd[n].mesh);
		free(s->nd[n].layer);
	}
	sc_array_free(s->xf);
	sc_array_free(s->parent);
	sc_array_free(s->hot);
	sc_array_free(s->nd);
	sc_array_free(s->ids);
	sc_array_free(s->order);
	sc_array_free(s->free_handles);
	sc_ids_free(s);
	free(s->dirty_roots);
	free(s->shape_log);
	free(s->child_idx);
	sc_caches_free(s);
	free(s);
}

void scene_set_max_nodes(scene *s, int max_nodes)
{
	s->max_nodes = max_nodes > 0 ? max_nodes : 0;
}

int scene_max_nodes(const scene *s)
{
	return s->max_nodes;
}

int scene_set_dims(scene *s, int dims)
{
	if (dims != 2 && dims != 3)
		return RIGD_E_BAD_FIELD;
	s->dims = dims;
	draw_stale(s);
	return 0;
}

int scene_dims(const scene *s)
{
	return s->dims;
}

/* ---------- marks and stamps ---------- */

/* How many nodes from 'node' up are stale: up to its topmost marked
 * ancestor-or-self, or to its root under dirty_all; 0 if it is current. */
static int stale_depth(const scene *s, int node)
{
	int depth = 0, stale = 0;

	if (!s->dirty_all && s->n_roots == 0)
		return 0; /* nothing is marked */
	for (int n = node; n >= 0; n = s->parent[n]) {
		depth++;
		if (s->dirty_all || node_marked(s, n))
			stale = depth;
	}
	return stale;
}

/* After a full pass stamped 'stamp': every node clean, with that stamp. */
static void next_gen(scene *s, uint64_t stamp)
{
	s->full_stamp = stamp;
	if (s->gen == UINT32_MAX) {
		/* Once in four billion full passes: no record may keep the new gen. */
		for (int n = 0; n < s->nslots; n++)
			s->hot[n].gen = 0;
		s->gen = 0;
	}
	s->gen++;
	assert(s->gen != 0);
}

/* ---------- world matrices ---------- */

/* qsort has no context argument (qsort_r is a GNU extension), so the scene
 * being sorted is passed through this file-local pointer. */
static const scene *sort_scene;

static int cmp_roots(const void *x, const void *y)
{
	int a = sort_scene->hot[*(const int *)x].pos, b = sort_scene->hot[*(const int *)y].pos;

	return (a > b) - (a < b);
}

/* What the hot loop reads and writes, copied out of the scene so that the
 * compiler knows a store into a matrix or a record moves none of it. */
typedef struct pass {
	double *xf;
	const int *parent;
	const int *order;
	node_hot *hot;
	uint32_t gen;
	uint64_t stamp;
} pass;

static inline pass pass_of(const scene *s, uint64_t stamp)
{
	return (pass){ s->xf, s->parent, s->order, s->hot, s->gen, stamp };
}

/* One node of the hot loop: its world from its parent's world (already
 * current) and its local matrix, with mat34_mul_wide when 'wide'; with
 * 'record', its mark and stamp as well (a full pass leaves those to the gen
 * bump, see node_marked). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void recompute_node(const pass *ps, int n, bool wide, bool record)
{
	int p = ps->parent[n];
	const double *l = ps->xf + XF_DOUBLES * (size_t)n;
	double *w = ps->xf + XF_DOUBLES * (size_t)n + MAT_DOUBLES;

	if (p < 0)
		memcpy(w, l, MAT_DOUBLES * sizeof(double));
#ifdef MAT34_HAVE_WIDE
	else if (wide)
		mat34_mul_wide(ps->xf + XF_DOUBLES * (size_t)p + MAT_DOUBLES, l, w);
#endif
	else
		mat34_mul(ps->xf + XF_DOUBLES * (size_t)p + MAT_DOUBLES, l, w);
	if (record) {
		ps->hot[n].gen = ps->gen;
		ps->hot[n].marked = 0;
		ps->hot[n].stamp = ps->stamp;
	}
}

/* Ranges of at least SPLIT_MIN nodes are walked as STREAMS streams (see
 * recompute_nodes); each stream's first node may have up to SPLIT_PATH_MAX
 * ancestors inside the range, else one stream it is. */
#define SPLIT_MIN 128
#define SPLIT_PATH_MAX 64
#define STREAMS 3

/* The handle at preorder position i; 'seq' when order[i] == i throughout. */
static inline int handle_at(const int *order, int i, bool seq)
{
	return seq ? i : order[i];
}

/* Computes the ancestors of the node at position c that lie at positions
 * >= a, top-down. False, with nothing done, if there are more than
 * SPLIT_PATH_MAX of them. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline bool recompute_path(const pass *ps, int a, int c, bool wide, bool record)
{
	int path[SPLIT_PATH_MAX], depth = 0, p = ps->parent[ps->order[c]];

	for (; p >= 0 && ps->hot[p].pos >= a; p = ps->parent[p]) {
		if (depth == SPLIT_PATH_MAX)
			return false;
		path[depth++] = p;
	}
	while (depth > 0)
		recompute_node(ps, path[--depth], wide, record);
	return true;
}

/*
 * The hot loop: a linear pass over the preorder range [a, b), given that
 * every node outside it that a node inside needs is current. 'wide' picks
 * mat34_mul_wide, 'seq' says that handles equal positions (true from
 * scene_load until an edit moves a node, and always for the benchmarks'
 * trees), so the matrices stream in order without reading 'order',
 * 'record' writes each node's mark and stamp; all three are
 * constants once inlined, so this is eight loops.
 *
 * In a preorder walk a node's parent is often the node just before it, so
 * one stream of products would be one long dependency chain, each product
 * waiting for the previous one to be stored and loaded again. A long range
 * is therefore cut into STREAMS parts walked in lockstep, independent
 * chains for the CPU to overlap. A node whose parent lies in an earlier
 * part is a descendant of one of the ancestors of its own part's first node
 * that lie in the range; recompute_path computes those before the walk
 * (they are computed again, to the same bits, in their turn).
 */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void recompute_nodes(const pass *ps, int a, int b, bool wide, bool seq, bool record)
{
	int q = (b - a) / STREAMS;
	bool split = b - a >= SPLIT_MIN;

	for (int k = 1; split && k < STREAMS; k++)
		split = recompute_path(ps, a, a + k * q, wide, record);
	if (split) {
		/* Unrolled, so that each stream has load instructions of its own:
		 * the CPU predicts by instruction whether a load depends on a
		 * recent store, and one load serving all streams (a parent just
		 * stored in one, long ago in the next) ran the pass two to three
		 * times slower out of cache. */
		for (int i = a; i < a + q; i++)
#if defined(__GNUC__)
#pragma GCC unroll 8 /* >= STREAMS: unrolled fully */
#endif
			for (int k = 0; k < STREAMS; k++)
				recompute_node(ps, handle_at(ps->order, i + k * q, seq), wide, record);
		a += STREAMS * q; /* the odd nodes at the end, if any */
	}
	for (int i = a; i < b; i++)
		recompute_node(ps, handle_at(ps->order, i, seq), wide, record);
}

/*
 * recompute_nodes, built for the CPU at hand: on x86-64 three times, for
 * AVX-512 (where the wide product is taken), AVX2 and the baseline, and the
 * loader picks the best the CPU can run; twice as fast as the baseline in
 * cache. Neither AVX2 nor AVX-512F brings FMA contraction here (ISO C mode
 * keeps -ffp-contract=off), so every build gives the same bits.
 */
#if defined(__x86_64__) && defined(__GNUC__) && defined(MAT34_HAVE_WIDE)
__attribute__((target_clones("avx512f", "avx2", "default")))
#elif defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
static void recompute_range(scene *s, int a, int b, uint64_t stamp, bool record)
{
	const pass ps = pass_of(s, stamp);
	bool wide = false;

#if defined(__x86_64__) && defined(__GNUC__) && defined(MAT34_HAVE_WIDE)
	wide = __builtin_cpu_supports("avx512f");
#endif
	switch ((wide ? 4 : 0) | (s->order_is_handles ? 2 : 0) | (record ? 1 : 0)) {
	case 0: recompute_nodes(&ps, a, b, false, false, false); break;
	case 1: recompute_nodes(&ps, a, b, false, false, true); break;
	case 2: recompute_nodes(&ps, a, b, false, true, false); break;
	case 3: recompute_nodes(&ps, a, b, false, true, true); break;
#ifdef MAT34_HAVE_WIDE
	case 4: recompute_nodes(&ps, a, b, true, false, false); break;
	case 5: recompute_nodes(&ps, a, b, true, false, true); break;
	case 6: recompute_nodes(&ps, a, b, true, true, false); break;
	case 7: recompute_nodes(&ps, a, b, true, true, true); break;
#endif
	}
}

/* The first node of a dirty range, by its handle: a leaf edit then never
 * reads 'order', one cache miss less in a big scene. */
static void recompute_one(scene *s, int n, uint64_t stamp)
{
	const pass ps = pass_of(s, stamp);

	if (s->n_inherit > 0 || s->ik) {
		int p = s->parent[n];

		node_world(s, n, p >= 0 ? world_of(s, p) : NULL, world_of(s, n));
		node_state(s, n, false, stamp);
		return;
	}
	recompute_node(&ps, n, false, true);
}

/*
 * The pass over [a, b) of a scene where some node has an inherit mode
 * other than normal: one stream in preorder, each node asked for its mode
 * (node_world). Kept apart from recompute_range so that the fast pass
 * carries no per-node test in the scenes (all 3D ones, most 2D ones) where
 * every node is normal; its normal nodes get the same bits the fast pass
 * would give (mat34_mul and mat34_mul_wide agree).
 */
static void recompute_range_mixed(scene *s, int a, int b, uint64_t stamp, bool record)
{
	for (int i = a; i < b; i++) {
		int n = s->order[i], p = s->parent[n];

		node_world(s, n, p >= 0 ? world_of(s, p) : NULL, world_of(s, n));
		if (record)
			node_state(s, n, false, stamp);
	}
}

/*
 * Sorts the dirty roots by position and keeps those not inside another's
 * subtree (subtrees nest or are disjoint, so a root inside one starts
 * before that one ends). Returns how many nodes their subtrees hold.
 */
static long prune_roots(scene *s)
{
	long total = 0;
	int k = 0, end = -1;

	sort_scene = s;
	if (s->n_roots > 1)
		qsort(s->dirty_roots, (size_t)s->n_roots, sizeof(int), cmp_roots);
	sort_scene = NULL;
	for (int i = 0; i < s->n_roots; i++) {
		int r = s->dirty_roots[i];

		if (!live(s, r) || !node_marked(s, r) || s->hot[r].pos < end)
			continue;
		s->dirty_roots[k++] = r;
		end = s->hot[r].pos + s->hot[r].size;
		total += s->hot[r].size;
	}
	s->n_roots = k;
	assert(total <= s->count);
	return total;
}

long scene_update(scene *s, uint64_t stamp, scene_range_fn fn, void *ctx)
{
	long total = s->dirty_all ? s->count : prune_roots(s);
	bool full = total == s->count;

	void (*range)(scene *, int, int, uint64_t, bool) =
		s->n_inherit > 0 || s->ik ? recompute_range_mixed : recompute_range;

	if (s->dirty_all) {
		range(s, 0, s->count, stamp, false);
		if (fn && s->count)
			fn(ctx, 0, s->count);
	} else {
		for (int i = 0; i < s->n_roots; i++) {
			int r = s->dirty_roots[i], a = s->hot[r].pos, b = a + s->hot[r].size;

			recompute_one(s, r, stamp);
			range(s, a + 1, b, stamp, !full);
			if (fn)
				fn(ctx, a, b);
		}
	}
	/* The constraints, after the plain pass: they read its worlds. */
	total += scene_ik_update(s, stamp, full, total, fn, ctx);
	assert(total >= 0 && total <= s->count);
	if (full)
		next_gen(s, stamp);
	s->n_roots = 0;
	s->dirty_all = false;
	return total;
}

bool scene_has_dirty(const scene *s)
{
	return s->dirty_all || s->n_roots > 0;
}

bool scene_is_dirty(const scene *s, int node)
{
	return live(s, node) && stale_depth(s, node) > 0;
}

uint64_t scene_world_stamp(const scene *s, int node)
{
	return live(s, node) ? node_stamp(s, node) : 0;
}

mat4 scene_local(const scene *s, int node)
{
	return stored_mat4(local_of(s, node));
}

mat4 scene_world(const scene *s, int node)
{
	int stack_path[64] = { 0 }, *path = stack_path, depth = 0, top;
	double cur[MAT_DOUBLES], tmp[MAT_DOUBLES];
	mat34 w;

	if (!live(s, node) || (depth = stale_depth(s, node)) == 0)
		return stored_mat4(world_of(s, node));
	/* Collect the dirty part of the path, then multiply top-down exactly as
	 * scene_update would, so both give the same bits. */
	top = node;
	for (int i = 0; i < depth; i++)
		top = s->parent[top];
	if (depth > 64 && !(path = malloc(sizeof(int) * (size_t)depth))) {
		/* Out of memory for a very deep path: walk it again for each level
		 * (quadratic, but exact and allocation-free). */
		int parent_clean = top;

		if (parent_clean >= 0)
			memcpy(cur, world_of(s, parent_clean), sizeof(cur));
		for (int level = depth - 1; level >= 0; level--) {
			int n = node;

			for (int j = 0; j < level; j++)
				n = s->parent[n];
			if (level == depth - 1 && parent_clean < 0)
				node_world(s, n, NULL, cur);
			else {
				node_world(s, n, cur, tmp);
				memcpy(cur, tmp, sizeof(cur));
			}
		}
		memcpy(w.m, cur, sizeof(w.m));
		return mat4_from_mat34(w);
	}
	{
		int n = node, i = depth;

		while (i > 0) {
			path[--i] = n;
			n = s->parent[n];
		}
		node_world(s, path[0], top >= 0 ? world_of(s, top) : NULL, cur);
		for (i = 1; i < depth; i++) {
			node_world(s, path[i], cur, tmp);
			memcpy(cur, tmp, sizeof(cur));
		}
		memcpy(w.m, cur, sizeof(w.m));
	}
	if (path != stack_path)
		free(path);
	return mat4_from_mat34(w);
}

const double *scene_world_rows(const scene *s, int node)
{
	if (!live(s, node) || stale_depth(s, node) != 0)
		return NULL;
	return world_of(s, node);
}
