/*
 * scene.c: one scene graph in memory (see scene.h for the model).
 *
 * The file is kept whole, though longer than the others, because the
 * recompute pass is tuned as one unit: its helpers inline into one loop,
 * and the layout they share is measured together.
 *
 * Storage. Per-node data lives in arrays indexed by handle: the local and
 * world matrices side by side as two mat34 (12 doubles each: the last row of
 * an affine matrix is always 0 0 0 1, so it is not stored; together exactly
 * three cache lines), the parent (alone: it is all the full pass reads
 * besides the matrices), one packed record of what a leaf edit needs
 * (subtree size, preorder position, mark, stamp), the channels, the ids.
 * The tree itself is 'order', the handles in depth-first preorder, so a
 * subtree is the range [pos, pos + size). Structural edits move handles in
 * 'order' (4 bytes a node) and never the matrices, which is what keeps an
 * insert or a reparent in a 100k-node scene well under a millisecond. A
 * free handle has pos -1.
 *
 * Memory. In a big scene an edit at a random place misses the cache on
 * every array it touches, and with 4 KiB pages the TLB as well: a 1M-node
 * scene spans some 100k pages. The large arrays are therefore allocated 2 MiB
 * aligned and offered to the kernel as transparent huge pages (array_alloc),
 * which roughly halves the cost of such an edit.
 *
 * Dirty propagation. An edit marks the node it changed, in one write
 * whatever the size of its subtree: a node is dirty (its world matrix
 * stale) when it or an ancestor is marked. Every marked node is listed in
 * dirty_roots or has a marked parent, so the listed subtrees cover
 * everything dirty. scene_update sorts the roots by position, drops those
 * inside another's subtree and recomputes each remaining range in one
 * linear pass, so the count it returns is exactly the size of the union of
 * the dirty subtrees. When the root list cannot grow,
 * 'dirty_all' makes the next pass recompute everything instead of failing.
 *
 * This file never allocates in a way that can leave a half-done edit: every
 * allocation an edit needs happens before the first change.
 */
#include "scene.h"

#include "draw_internal.h"
#include "err.h"
#include "asset.h"
#include "pose.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct node_data {
	vec3 t;
	quat r;
	vec3 s;
	vec3 pivot;
	aabb bounds;
	bool has_bounds;
	bool visible;
	signed char facing; /* enum node_facing; in the padding before 'kind' */
	int kind;
	double fov_deg, znear, zfar;
	char *name; /* owned, NULL for none */
	char *mesh; /* owned, NULL for none */
	char *layer; /* owned, NULL for none */
	double z_right, z_left;
} node_data;

/* What a leaf edit reads and writes of a node besides its matrices, in one
 * place: one cache line instead of one for each of four arrays. 'marked'
 * and 'stamp' hold only while 'gen' equals the scene's 'gen' (see
 * node_marked). */
typedef struct node_hot {
	int size;        /* nodes in the subtree, the node included */
	int pos;         /* index in 'order'; -1 for a free handle */
	uint32_t gen;
	uint8_t marked;  /* edited since the last pass (see mark_dirty) */
	uint64_t stamp;  /* of the pass that computed the world matrix */
} node_hot;

/* Doubles in one stored matrix (a mat34), and in a node's pair of them. */
#define MAT_DOUBLES 12
#define XF_DOUBLES (2 * MAT_DOUBLES)

struct scene {
	int count;     /* live nodes */
	int nslots;    /* handles ever used (high-water mark) */
	int cap;       /* capacity of every per-handle array */
	int max_nodes;
	int dims;        /* 3, or 2 for a scene in the xy plane */
	pose_set *poses; /* named sets of node channels (pose.h) */
	asset_set *assets; /* the SVG assets layers may name (asset.h) */
	draw_cache *draw; /* the draw order of a 2D scene (draw.c) */

	double *xf;      /* XF_DOUBLES * cap: local then world, mat34 each */
	int *parent;     /* -1 for a root; alone, as the full pass reads only it */
	node_hot *hot;
	node_data *nd;
	char (*ids)[SCENE_ID_MAX + 1]; /* "" marks a free handle */

	int *order;      /* count handles in preorder */
	bool order_is_handles; /* order[i] == i for every i (see recompute_nodes) */
	int *free_handles;
	int n_free;

	int *hash;       /* open addressing, linear probing; -1 empty */
	int hash_cap;    /* power of two, >= 2 * cap */

	int *dirty_roots;
	int n_roots, roots_cap;
	bool dirty_all;
	uint32_t gen;          /* bumped by every full pass */
	uint64_t full_stamp;   /* the stamp of the last full pass */

	/* The shape log (scene_shape_since): nodes whose box in their own
	 * frame changed, since clock shape_base. */
	int *shape_log;
	int shape_n, shape_cap;
	uint64_t shape_base;

	/* Every node's index among its siblings, by handle, for encoders
	 * that ask for every node's (scene_child_index): built after
	 * CHILD_INDEX_SCANS asks at one order, valid while child_idx_order
	 * equals order_version, which every change of 'order' or of a
	 * parent bumps. A cache, not part of the scene's value. */
	uint64_t order_version;
	int *child_idx;
	int child_idx_cap;
	uint64_t child_idx_order;   /* order_version + 1 when built; 0 never */
	uint64_t asks_order;        /* the order_version 'asks' counts for */
	int asks;
};

/* ---------- ids and the id index ---------- */

bool scene_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return false;
	for (; id[n]; n++) {
		char c = id[n];

		if (n >= SCENE_ID_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ':' || c == '-'))
			return false;
	}
	return n > 0;
}

static uint32_t id_hash(const char *id)
{
	uint32_t h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (uint8_t)*id) * 16777619u;
	return h;
}

static int hash_lookup_slot(const scene *s, const char *id)
{
	uint32_t mask = (uint32_t)s->hash_cap - 1, i = id_hash(id) & mask;

	while (s->hash[i] >= 0 && strcmp(s->ids[s->hash[i]], id) != 0)
		i = (i + 1) & mask;
	return (int)i;
}

static void hash_insert(scene *s, int node)
{
	s->hash[hash_lookup_slot(s, s->ids[node])] = node;
}

/* Linear-probing removal with backward shift (no tombstones). */
static void hash_remove(scene *s, int node)
{
	uint32_t mask = (uint32_t)s->hash_cap - 1;
	uint32_t i = (uint32_t)hash_lookup_slot(s, s->ids[node]), j = i;

	s->hash[i] = -1;
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (s->hash[j] < 0)
			return;
		home = id_hash(s->ids[s->hash[j]]) & mask;
		/* Move j's entry into the hole at i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			s->hash[i] = s->hash[j];
			s->hash[j] = -1;
			i = j;
		}
	}
}

static void *array_alloc(size_t bytes);
static void array_free(void *p);

static int hash_resize(scene *s, int new_cap)
{
	int *h = array_alloc(sizeof(int) * (size_t)new_cap), *old = s->hash;

	if (!h)
		return RIGD_E_NOMEM;
	memset(h, 0xff, sizeof(int) * (size_t)new_cap);
	s->hash = h;
	s->hash_cap = new_cap;
	for (int n = 0; n < s->nslots; n++)
		if (s->ids[n][0])
			hash_insert(s, n);
	array_free(old);
	return 0;
}

/* ---------- lifetime and capacity ---------- */

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

	if (!s)
		return NULL;
	s->max_nodes = SCENE_DEFAULT_MAX_NODES;
	s->dims = 3;
	s->hash = array_alloc(sizeof(int) * 16);
	s->poses = pose_set_new();
	s->draw = draw_cache_new();
	s->assets = asset_set_new();
	if (!s->hash || !s->poses || !s->draw || !s->assets) {
		array_free(s->hash);
		pose_set_free(s->poses);
		draw_cache_free(s->draw);
		asset_set_free(s->assets);
		free(s);
		return NULL;
	}
	memset(s->hash, 0xff, sizeof(int) * 16);
	s->hash_cap = 16;
	s->order_is_handles = true;
	s->gen = 1;
	return s;
}

pose_set *scene_poses(scene *s)
{
	return s->poses;
}

const pose_set *scene_poses_c(const scene *s)
{
	return s->poses;
}

asset_set *scene_assets(scene *s)
{
	return s->assets;
}

const asset_set *scene_assets_c(const scene *s)
{
	return s->assets;
}

draw_cache *scene_draw_cache(const scene *s)
{
	return s->draw;
}

/* Marks the draw order stale. Only a 2D scene has one; a 3D scene's mark
 * is never read (scene_draw_order answers an empty list), and costs one
 * store. */
static inline void draw_stale(scene *s)
{
	draw_cache_mark(s->draw);
}

/* True when the 2x2 block of a stored matrix (mat34, by rows) has a
 * negative determinant: the node's frame is mirrored in the plane. */
static inline bool mirrored2d(const double *m)
{
	return m[0] * m[5] - m[1] * m[4] < 0;
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
	array_free(s->xf);
	array_free(s->parent);
	array_free(s->hot);
	array_free(s->nd);
	array_free(s->ids);
	array_free(s->order);
	array_free(s->free_handles);
	array_free(s->hash);
	free(s->dirty_roots);
	free(s->shape_log);
	free(s->child_idx);
	pose_set_free(s->poses);
	asset_set_free(s->assets);
	draw_cache_free(s->draw);
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

#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/*
 * Allocates a per-node array, aligned to 64 bytes, or to 2 MiB and offered
 * to the kernel as transparent huge pages when it is at least that big (see
 * "Memory" at the top of this file). The block comes from malloc, so that
 * allocation failures can be injected and counted as everywhere else: it
 * is over-allocated, the aligned start is handed out and the block's own
 * address is kept just before it for array_free. Where huge pages are not
 * available (THP off, another OS) madvise fails or is absent and the array
 * simply stays on small pages. Returns NULL when out of memory.
 */
static void *array_alloc(size_t bytes)
{
	bool huge = bytes >= HUGE_PAGE_BYTES;
	size_t align = huge ? HUGE_PAGE_BYTES : 64;
	char *raw, *p;

	if (huge)
		bytes = (bytes + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
	raw = malloc(bytes + align + sizeof(void *));
	if (!raw)
		return NULL;
	p = raw + sizeof(void *);
	p += (align - (uintptr_t)p % align) % align;
	memcpy(p - sizeof(void *), &raw, sizeof(raw));
#ifdef MADV_HUGEPAGE
	if (huge)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

/* Frees what array_alloc returned; accepts NULL. */
static void array_free(void *p)
{
	void *raw;

	if (!p)
		return;
	memcpy(&raw, (char *)p - sizeof(void *), sizeof(raw));
	free(raw);
}

/* Grows one per-handle array from old_cap to new_cap elements; on failure
 * the old block stays in place, so a partly grown set of arrays is still
 * consistent with the old 'cap'. */
static int grow(void **p, size_t elem, int old_cap, int new_cap)
{
	void *q = array_alloc(elem * (size_t)new_cap);

	if (!q)
		return RIGD_E_NOMEM;
	if (*p)
		memcpy(q, *p, elem * (size_t)old_cap);
	array_free(*p);
	*p = q;
	return 0;
}

/* Grows every per-handle array to 'nc' elements. */
static int grow_all(scene *s, int nc)
{
	int oc = s->cap;

	if (grow((void **)&s->xf, XF_DOUBLES * sizeof(double), oc, nc) ||
	    grow((void **)&s->parent, sizeof(int), oc, nc) ||
	    grow((void **)&s->hot, sizeof(node_hot), oc, nc) ||
	    grow((void **)&s->nd, sizeof(node_data), oc, nc) ||
	    grow((void **)&s->ids, sizeof(*s->ids), oc, nc) ||
	    grow((void **)&s->order, sizeof(int), oc, nc) ||
	    grow((void **)&s->free_handles, sizeof(int), oc, nc))
		return RIGD_E_NOMEM;
	s->cap = nc;
	return 0;
}

/* Makes room for one more node (handle, order slot and id index entry). */
static int reserve_one(scene *s)
{
	int err;

	if (s->n_free == 0 && s->nslots == s->cap &&
	    (err = grow_all(s, s->cap ? s->cap * 2 : 64)) != 0)
		return err;
	if ((s->count + 1) * 2 > s->hash_cap)
		return hash_resize(s, s->hash_cap * 2);
	return 0;
}

static bool live(const scene *s, int node)
{
	return node >= 0 && node < s->nslots && s->hot[node].pos >= 0;
}

/*
 * A node's mark and stamp. A full pass (one that recomputes every node)
 * writes neither node by node: it bumps the scene's 'gen', which turns every
 * node's record into "unmarked, stamped with full_stamp" at once, since a
 * record counts only while its 'gen' is the scene's. That keeps the full
 * pass from writing a record for each node.
 */
static inline bool node_marked(const scene *s, int node)
{
	return s->hot[node].gen == s->gen && s->hot[node].marked;
}

static inline uint64_t node_stamp(const scene *s, int node)
{
	return s->hot[node].gen == s->gen ? s->hot[node].stamp : s->full_stamp;
}

static inline void node_state(scene *s, int node, bool marked, uint64_t stamp)
{
	s->hot[node].gen = s->gen;
	s->hot[node].marked = marked;
	s->hot[node].stamp = stamp;
}

/* Marked, the stamp of the world matrix it holds kept. */
static inline void node_mark(scene *s, int node)
{
	node_state(s, node, true, node_stamp(s, node));
}

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

/* The stored local and world matrices of 'node' (mat34, 12 doubles). */
static inline double *local_of(const scene *s, int node)
{
	return s->xf + XF_DOUBLES * (size_t)node;
}

static inline double *world_of(const scene *s, int node)
{
	return s->xf + XF_DOUBLES * (size_t)node + MAT_DOUBLES;
}

/* ---------- reads ---------- */

int scene_count(const scene *s)
{
	return s->count;
}

int scene_find(const scene *s, const char *id)
{
	if (!id || !id[0] || strlen(id) > SCENE_ID_MAX)
		return -1;
	return s->hash[hash_lookup_slot(s, id)];
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

/* Position of the first child of 'node' (or first root) and the end of the
 * range holding its children. */
static void child_range(const scene *s, int node, int *first, int *end)
{
	if (node < 0) {
		*first = 0;
		*end = s->count;
	} else {
		*first = s->hot[node].pos + 1;
		*end = s->hot[node].pos + s->hot[node].size;
	}
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
}

/* ---------- validation ---------- */

static bool vec3_finite(vec3 v)
{
	return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

/* True when 's' is well-formed UTF-8 (no overlong forms, no encoded
 * surrogates, nothing above U+10FFFF). Names and mesh references travel in
 * JSON to every browser, so a scene never holds bytes that are not text,
 * whatever path (an edit, a log import, a glTF file) brought them. */
static bool utf8_valid(const char *str)
{
	const unsigned char *u = (const unsigned char *)str;

	while (*u) {
		unsigned c = *u, need, cp;

		if (c < 0x80) {
			u++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			need = 1, cp = c & 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			need = 2, cp = c & 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			need = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((u[k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (u[k] & 0x3F);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		u += need + 1;
	}
	return true;
}

int node_props_check(const node_props *p, unsigned mask, unsigned *bad_prop)
{
	unsigned bad = 0;
	int err = 0;
	quat q;

	if ((mask & PROP_T) && !vec3_finite(p->t))
		bad = PROP_T, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_R) && (err = quat_normalize(p->r, &q)) != 0)
		bad = PROP_R;
	else if ((mask & PROP_S) && !vec3_finite(p->s))
		bad = PROP_S, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_PIVOT) && !vec3_finite(p->pivot))
		bad = PROP_PIVOT, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_BOUNDS) && p->has_bounds &&
		 (!vec3_finite(p->bounds.min) || !vec3_finite(p->bounds.max)))
		bad = PROP_BOUNDS, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_BOUNDS) && p->has_bounds && aabb_is_empty(p->bounds))
		bad = PROP_BOUNDS, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_MESH) && p->mesh &&
		 (!p->mesh[0] || strlen(p->mesh) > SCENE_MESH_MAX || !utf8_valid(p->mesh)))
		bad = PROP_MESH, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_NAME) && p->name &&
		 (strlen(p->name) > SCENE_NAME_MAX || !utf8_valid(p->name)))
		bad = PROP_NAME, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_KIND) && (p->kind < NODE_GROUP || p->kind > NODE_CAMERA))
		bad = PROP_KIND, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_LAYER) && p->layer && scene_layer_syntax_error(p->layer))
		bad = PROP_LAYER, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_Z) && !(isfinite(p->z_right) && isfinite(p->z_left)))
		bad = PROP_Z, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_FACING) && (p->facing < FACING_NONE || p->facing > FACING_LEFT))
		bad = PROP_FACING, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_CAMERA) &&
		 (!isfinite(p->fov_deg) || !isfinite(p->znear) || !isfinite(p->zfar)))
		bad = PROP_CAMERA, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_CAMERA) &&
		 !(p->fov_deg > 0 && p->fov_deg < 180 && p->znear > 0 && p->zfar > p->znear))
		bad = PROP_CAMERA, err = RIGD_E_BAD_FIELD;
	if (bad_prop)
		*bad_prop = bad;
	return err;
}

/* Finite channels can still give a non-finite local matrix (a pivot near
 * DBL_MAX times a scale of 2): such a node is refused, never stored, so no
 * world matrix below it can turn into inf or NaN. */
static int check_local(vec3 t, quat r, vec3 sc, vec3 pivot)
{
	quat q;

	if (quat_normalize(r, &q) != 0)
		return RIGD_E_NOT_FINITE;
	return mat4_is_finite(mat4_compose_pivot(t, q, sc, pivot)) ? 0 : RIGD_E_NOT_FINITE;
}

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
	mat34 l = mat34_from_mat4(mat4_compose_pivot(d->t, d->r, d->s, d->pivot));

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
	    (err = check_local(p->t, p->r, p->s, p->pivot)) != 0)
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
	hash_insert(s, node);
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

static int reserve_n(scene *s, int n)
{
	int nc = s->cap ? s->cap : 64, hc = s->hash_cap;

	while (nc < n)
		nc *= 2;
	while (hc < 2 * n)
		hc *= 2;
	if (nc > s->cap && grow_all(s, nc) != 0)
		return RIGD_E_NOMEM;
	return hc > s->hash_cap ? hash_resize(s, hc) : 0;
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
	memset(s->hash, 0xff, sizeof(int) * (size_t)s->hash_cap);
	s->count = s->nslots = s->n_free = s->n_roots = 0;
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
		    (err = check_local(p->t, p->r, p->s, p->pivot)) != 0)
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
		hash_insert(s, i);
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

		hash_remove(s, n);
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
	if (keep_world && ((rc = keep_world_channels(s, node, new_parent, &kw)) != 0 ||
			   (rc = check_local(kw.t, kw.r, kw.s, s->nd[node].pivot)) != 0))
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

		err = check_local(mask & PROP_T ? p->t : d->t, mask & PROP_R ? p->r : d->r,
				  mask & PROP_S ? p->s : d->s, mask & PROP_PIVOT ? p->pivot : d->pivot);
		if (err)
			return err;
	}
	return 0;
}

/* The part of scene_set that cannot fail; takes ownership of the strings
 * in 'copies' as store_props does. A root of a 2D scene whose frame turns
 * mirrored, or back, changes its natural facing: the draw order goes
 * stale then, and only then. */
static void set_checked(scene *s, int node, unsigned mask, const node_props *p,
			node_strings copies)
{
	bool flip_check = s->dims == 2 && s->parent[node] < 0 && (mask & (PROP_R | PROP_S));
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

	recompute_node(&ps, n, false, true);
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

	if (s->dirty_all) {
		recompute_range(s, 0, s->count, stamp, false);
		if (fn && s->count)
			fn(ctx, 0, s->count);
	} else {
		for (int i = 0; i < s->n_roots; i++) {
			int r = s->dirty_roots[i], a = s->hot[r].pos, b = a + s->hot[r].size;

			recompute_one(s, r, stamp);
			recompute_range(s, a + 1, b, stamp, !full);
			if (fn)
				fn(ctx, a, b);
		}
	}
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

/* A stored mat34 (local_of or world_of) as a mat4. */
static mat4 stored_mat4(const double *stored)
{
	mat34 m;

	memcpy(m.m, stored, sizeof(m.m));
	return mat4_from_mat34(m);
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
				memcpy(cur, local_of(s, n), sizeof(cur));
			else {
				mat34_mul(cur, local_of(s, n), tmp);
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
		if (top >= 0)
			mat34_mul(world_of(s, top),
				  local_of(s, path[0]), cur);
		else
			memcpy(cur, local_of(s, path[0]), sizeof(cur));
		for (i = 1; i < depth; i++) {
			mat34_mul(cur, local_of(s, path[i]), tmp);
			memcpy(cur, tmp, sizeof(cur));
		}
		memcpy(w.m, cur, sizeof(w.m));
	}
	if (path != stack_path)
		free(path);
	return mat4_from_mat34(w);
}

/* ---------- queries ---------- */

const double *scene_world_rows(const scene *s, int node)
{
	if (!live(s, node) || stale_depth(s, node) != 0)
		return NULL;
	return world_of(s, node);
}

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
		if (height == 0)
			memcpy(w34.m, local_of(s, node), sizeof(w34.m));
		else
			mat34_mul(stack + MAT_DOUBLES * (size_t)(height - 1),
				  local_of(s, node), w34.m);
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
