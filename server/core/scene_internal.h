/*
 * scene_internal.h: the layout of a scene, shared by the files that
 * implement scene.h (scene.c, scene_array.c, scene_ids.c, scene_edit.c,
 * scene_query.c, scene_cache.c), and the one-line helpers they all read it
 * with. Private to server/core/: nothing outside the scene_*.c files
 * includes it, draw.c included (it reads the scene through scene.h).
 * Declares no function (node_world is an inline helper): what one of
 * those files offers the others is in that file's own header.
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
 */
#ifndef RIGD_SCENE_INTERNAL_H
#define RIGD_SCENE_INTERNAL_H

#include "inherit.h"
#include "scene.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct pose_set pose_set;
typedef struct asset_set asset_set;
typedef struct draw_cache draw_cache;
typedef struct skel_set skel_set;
typedef struct scene_ik scene_ik;

typedef struct node_data {
	vec3 t;
	quat r;
	vec3 s;
	vec3 pivot;
	aabb bounds;
	bool has_bounds;
	bool visible;
	signed char facing; /* enum node_facing; in the padding before 'kind' */
	signed char inherit; /* enum node_inherit (0..0x1f); likewise */
	int kind;
	double fov_deg, znear, zfar;
	char *name; /* owned, NULL for none */
	char *mesh; /* owned, NULL for none */
	char *layer; /* owned, NULL for none */
	double z_right, z_left;
	double shear[2]; /* degrees, [shx, shy]; 0 0 in a 3D scene */
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
	/* Live nodes whose inherit mode is not INHERIT_NORMAL. While it is 0
	 * the recompute pass is the plain product everywhere; otherwise it
	 * takes a path that asks each node (see scene.c). */
	int n_inherit;
	pose_set *poses; /* named sets of node channels (pose.h) */
	asset_set *assets; /* the SVG assets layers may name (asset.h) */
	draw_cache *draw; /* the draw order of a 2D scene (draw.c) */
	skel_set *skels;  /* its skeletons and their clips (skel_clips.h); NULL = none */
	uint64_t skel_clock; /* bumped by every change of 'skels' */
	/* Its skeletons' IK constraints bound to its nodes, with the channels
	 * the last solve gave the constrained bones (scene_ik.c); NULL = none. */
	scene_ik *ik;

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
	/* Bumped by every edit that can change the draw order (draw_stale);
	 * the draw cache remembers the value it was built at (draw.c). */
	uint64_t draw_clock;

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

static inline bool live(const scene *s, int node)
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

/* The stored local and world matrices of 'node' (mat34, 12 doubles). */
static inline double *local_of(const scene *s, int node)
{
	return s->xf + XF_DOUBLES * (size_t)node;
}

static inline double *world_of(const scene *s, int node)
{
	return s->xf + XF_DOUBLES * (size_t)node + MAT_DOUBLES;
}

/* A stored mat34 (local_of or world_of) as a mat4. */
static inline mat4 stored_mat4(const double *stored)
{
	mat34 m;

	memcpy(m.m, stored, sizeof(m.m));
	return mat4_from_mat34(m);
}

/*
 * The world matrix of 'node' from its parent's 'parent_world' (NULL for a
 * root) into 'out', leaving IK constraints aside (node_world below takes
 * them), as the recompute pass computes it: the product
 * parent_world * local, or inherit_world for a node of a mode other than
 * normal. The pass in scene.c keeps its own copy of the product for
 * speed; both give the same bits.
 */
static inline void node_world_plain(const scene *s, int node, const double *parent_world,
				    double *out)
{
	const node_data *d = &s->nd[node];

	if (s->n_inherit > 0 && d->inherit != INHERIT_NORMAL) {
		inherit_channels c = {
			quat_to_angle2d_deg(d->r), { d->shear[0], d->shear[1] }, { d->s.x, d->s.y },
			{ d->t.x, d->t.y }, { d->pivot.x, d->pivot.y }, false,
		};
		int p = s->parent[node];

		if (p >= 0 && (d->inherit & INHERIT_DB) && s->nd[p].s.x < 0) {
			/* How DragonBones' runtime keeps the parent's rotation
			 * (inherit.h): built for a root or a no-scale parent, read
			 * back from the matrix otherwise. */
			int pm = s->nd[p].inherit;
			bool built = s->parent[p] < 0 || ((pm & INHERIT_DB) && (pm & DB_NO_SCALE));
			c.parent_turned = built || parent_world[0] < 0;
		}

		inherit_world(parent_world, local_of(s, node), &c, d->inherit, out);
	} else if (parent_world) {
		mat34_mul(parent_world, local_of(s, node), out);
	} else {
		memcpy(out, local_of(s, node), MAT_DOUBLES * sizeof(double));
	}
}

/*
 * What the last solve of an IK constraint gave a bone it drives: a local
 * matrix with the channels it was made from and the inherit mode to take
 * the parent's world by (scene_ik.c). The scene's binding of its
 * constraints to nodes, valid while 'order' equals the scene's
 * order_version: 'of' gives, by handle, the index in 'over' of a bone's
 * override, or -1.
 */
typedef struct ik_override {
	double local[MAT_DOUBLES];
	inherit_channels c;
	int mode;
} ik_override;

struct scene_ik {
	uint64_t order, skels;   /* the order_version and skel_clock bound for */
	struct ik_bound *c;      /* the constraints, in the order they solve */
	int n;
	int *of;                 /* of_n handles */
	int of_n;
	ik_override *over;       /* 2 * n */
};

/* The override of 'node', or NULL: the bone is no constrained one, or has
 * not been solved since the binding was made. */
static inline const ik_override *node_override(const scene *s, int node)
{
	const scene_ik *k = s->ik;

	if (!k || k->order != s->order_version || node >= k->of_n || k->of[node] < 0)
		return NULL;
	return &k->over[k->of[node]];
}

/* The world matrix of 'node' as its IK constraint last left it: its
 * override's local taken by the override's mode. */
static inline void override_world(const ik_override *o, const double *parent_world, double *out)
{
	if (o->mode != INHERIT_NORMAL)
		inherit_world(parent_world, o->local, &o->c, o->mode, out);
	else if (parent_world)
		mat34_mul(parent_world, o->local, out);
	else
		memcpy(out, o->local, MAT_DOUBLES * sizeof(double));
}

/* node_world_plain for a node no IK constraint drives; for one that a
 * constraint drives, its world as the constraint's last solve left it. */
static inline void node_world(const scene *s, int node, const double *parent_world, double *out)
{
	const ik_override *o = s->ik ? node_override(s, node) : NULL;

	if (o)
		override_world(o, parent_world, out);
	else
		node_world_plain(s, node, parent_world, out);
}

/* Position of the first child of 'node' (or first root) and the end of the
 * range holding its children. */
static inline void child_range(const scene *s, int node, int *first, int *end)
{
	if (node < 0) {
		*first = 0;
		*end = s->count;
	} else {
		*first = s->hot[node].pos + 1;
		*end = s->hot[node].pos + s->hot[node].size;
	}
}

/* Marks the draw order stale: the draw cache sees the clock move and
 * rebuilds on its next read. Only a 2D scene has one; a 3D scene's clock
 * is never read (scene_draw_order answers an empty list). */
static inline void draw_stale(scene *s)
{
	s->draw_clock++;
}

#endif
