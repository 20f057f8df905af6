/*
 * scene.h: one scene graph in memory.
 *
 * Nodes are addressed by a handle (an int "node") that stays valid until the
 * node is deleted; handles of deleted nodes are reused. Per-node data lives in
 * arrays indexed by handle; a scene built in preorder (as loading one is) has
 * handle == pos, so the recompute pass reads memory sequentially. The tree order lives
 * in one array of handles in depth-first preorder ("pos"), so every subtree
 * is the contiguous range [pos, pos + subtree_size) and a recompute is one
 * linear pass world[n] = world[parent[n]] * local[n] (a 2D node of an
 * inherit mode other than normal takes its world from its parent's by its
 * mode instead: inherit.h). Several roots are allowed; they follow one
 * another in that array.
 *
 * Every mutating call validates everything first and returns 0 or a negative
 * RIGD_E_* code; on error nothing has changed. No JSON, SQL or sockets here,
 * and no recursion: a chain a million nodes deep works.
 *
 * One interface, several files, by concern: scene.c (lifetime, the
 * recompute pass, world matrices), scene_ids.c (ids, scene_find),
 * scene_check.c (node_props_check, the syntax of a layer), scene_edit.c
 * (the edits), scene_query.c (reads and queries), draw.c (the draw order
 * and facing). The accessors of what a scene hosts besides its nodes,
 * scene_poses and scene_assets (scene_cache.c), are declared in pose.h and
 * asset.h. The layout they share is scene_internal.h, private to core/.
 */
#ifndef RIGD_SCENE_H
#define RIGD_SCENE_H

#include "math.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCENE_ID_MAX 64      /* characters in a node id, not counting NUL */
#define SCENE_NAME_MAX 256   /* bytes in a display name */
#define SCENE_MESH_MAX 256   /* bytes in a mesh reference */
#define SCENE_LAYER_FILE_MAX 128  /* characters of a layer's FILE part */
#define SCENE_LAYER_GROUP_MAX 128 /* characters of a layer's GROUP part */
/* bytes in a layer "FILE#GROUP" */
#define SCENE_LAYER_MAX (SCENE_LAYER_FILE_MAX + 1 + SCENE_LAYER_GROUP_MAX)
#define SCENE_DEFAULT_MAX_NODES 2000000

typedef struct scene scene;

enum node_kind {
	NODE_GROUP = 0,
	NODE_MESH = 1,
	NODE_CAMERA = 2,
};

/* A 2D node's facing: its own, or none (it inherits; see scene_facing). */
enum node_facing {
	FACING_NONE = 0,
	FACING_RIGHT = 1,
	FACING_LEFT = 2,
};

/*
 * What a node takes of its parent's world matrix. INHERIT_NORMAL is
 * W = W_parent * L, bit for bit. The next four are Spine's inherit modes,
 * defined in Spine's y-up frame (docs/transforms.md says how rigd carries
 * them into its y-down one). INHERIT_DB, or'd with DB_NO_ bits, is
 * DragonBones' four inherit flags (a bit set: that flag is false);
 * INHERIT_DB with no bit is not a stored value (it is INHERIT_NORMAL).
 * Only a 2D scene stores a mode other than normal.
 */
enum node_inherit {
	INHERIT_NORMAL = 0,
	INHERIT_ONLY_TRANSLATION = 1,
	INHERIT_NO_ROTATION_OR_REFLECTION = 2,
	INHERIT_NO_SCALE = 3,
	INHERIT_NO_SCALE_OR_REFLECTION = 4,
	INHERIT_DB = 0x10,
	DB_NO_TRANSLATION = 0x01,
	DB_NO_ROTATION = 0x02,
	DB_NO_SCALE = 0x04,
	DB_NO_REFLECTION = 0x08,
};

/* Bits naming fields of struct node_props, for scene_set(). */
enum node_prop {
	PROP_T = 1u << 0,
	PROP_R = 1u << 1,
	PROP_S = 1u << 2,
	PROP_PIVOT = 1u << 3,
	PROP_BOUNDS = 1u << 4,  /* has_bounds and bounds */
	PROP_MESH = 1u << 5,
	PROP_NAME = 1u << 6,
	PROP_KIND = 1u << 7,
	PROP_CAMERA = 1u << 8,  /* fov_deg, znear, zfar */
	PROP_VISIBLE = 1u << 9,
	PROP_LAYER = 1u << 10,
	PROP_Z = 1u << 11,      /* z_right and z_left */
	PROP_FACING = 1u << 12,
	PROP_SHEAR = 1u << 13,
	PROP_INHERIT = 1u << 14,
	PROP_ALL = (1u << 15) - 1,
	PROP_DRAW = PROP_LAYER | PROP_Z | PROP_FACING,
	PROP_TRANSFORM = PROP_T | PROP_R | PROP_S | PROP_PIVOT | PROP_SHEAR | PROP_INHERIT,
};

/*
 * Everything authored about a node except its id and place in the tree.
 * Strings are borrowed: on input the caller keeps them; on output they point
 * into the scene and stay valid until that node is next changed or deleted.
 * NULL means "none".
 */
typedef struct node_props {
	vec3 t;
	quat r;          /* normalised on input */
	vec3 s;
	vec3 pivot;
	bool has_bounds;
	aabb bounds;     /* local box, min <= max on every axis */
	const char *mesh;
	const char *name;
	int kind;        /* enum node_kind */
	double fov_deg;  /* camera: vertical field of view, (0, 180) */
	double znear;    /* camera: 0 < znear < zfar */
	double zfar;
	bool visible;
	/* How a node of a 2D scene is drawn (any scene stores them; the edit
	 * layer accepts them only in a 2D one): the artwork group it shows
	 * ("FILE#GROUP", NULL for none), its draw order for each facing, and
	 * its own facing (enum node_facing; FACING_NONE inherits). */
	const char *layer;
	double z_right;
	double z_left;
	int facing;
	/* A 2D node's shear, degrees, in the screen convention of an angle:
	 * the local 2x2 block has x axis s.x * (cos(a + shear[0]),
	 * -sin(a + shear[0])) and y axis s.y * (sin(a + shear[1]),
	 * cos(a + shear[1])) for the screen angle a (docs/transforms.md).
	 * 0 0 in a 3D scene. And what it inherits (enum node_inherit). */
	double shear[2];
	int inherit;
} node_props;

/* Identity transform, no bounds, group, visible, camera 60 deg 0.1..1000,
 * no layer, z 0 for both facings, no facing of its own. */
node_props node_props_default(void);

/* Validates 'p' for the fields in 'mask' (finite numbers, non-zero
 * quaternion, bounds min <= max, string lengths and UTF-8, kind, camera
 * ranges, the syntax of a layer, a facing of enum node_facing).
 * Returns 0 or the first error; *bad_prop (may be NULL) gets its PROP_ bit. */
int node_props_check(const node_props *p, unsigned mask, unsigned *bad_prop);

/* True when 'id' is 1..SCENE_ID_MAX characters of [A-Za-z0-9_.:-]. */
bool scene_id_valid(const char *id);

/* True when a 2D shear [shx, shy] (degrees) makes a node's x and y axes
 * collinear, which node_props_check refuses: shy - shx is 90 modulo 180,
 * to within 1e-9 degrees. For importers, to name the element at fault. */
bool scene_shear_collinear(const double shear_deg[2]);

/*
 * The syntax of a layer, "FILE#GROUP": FILE 1..SCENE_LAYER_FILE_MAX
 * characters of [A-Za-z0-9_.-] not starting with a dot, GROUP
 * 1..SCENE_LAYER_GROUP_MAX characters of [A-Za-z0-9_.:-]. Returns NULL when
 * 'layer' is well formed, else why not, as a phrase ("FILE is empty",
 * "no '#' between FILE and GROUP", ...). Whether the asset and its group
 * exist is not the scene's business (the edit layer checks that).
 */
const char *scene_layer_syntax_error(const char *layer);

/* An empty scene, or NULL when out of memory. */
scene *scene_new(void);
/* Frees the scene and everything in it; accepts NULL. */
void scene_free(scene *s);
/* The node limit checked by scene_create (RIGD_E_LIMIT beyond it). */
void scene_set_max_nodes(scene *s, int max_nodes);
int scene_max_nodes(const scene *s);
/*
 * The scene's dimensions: 3 (the default) or 2. In a 2D scene every node
 * lives in the xy plane (t.z = 0, rotation about z only, s.z = 1,
 * pivot.z = 0): the edit layer refuses an op that leaves it, and encoders
 * show each node's screen angle (quat_to_angle2d_deg). The scene itself
 * stores and recomputes 2D nodes exactly as 3D ones. scene_set_dims
 * returns 0, or RIGD_E_BAD_FIELD for a value other than 2 or 3 (dims then
 * unchanged). Set it before the first node: nodes already there are not
 * checked (a scene loaded from a snapshot of a 2D scene is in the plane).
 */
int scene_set_dims(scene *s, int dims);
int scene_dims(const scene *s);

/*
 * The draw order of a 2D scene (see draw.c): the ids of its nodes that have
 * a layer, back to front, sorted by the z of each node's effective facing,
 * ties in preorder. Kept by the scene as a cache: every edit that can
 * change it (a layer, z or facing set, a create, delete or reparent, a
 * root whose mirrored state flipped) marks it stale, and the next read
 * rebuilds it, once. The server reads it right after bringing the world
 * matrices of a turn up to date, so it is computed in the same turn, from
 * the same seq.
 *
 * scene_draw_order brings the list up to date when stale and gives its
 * length in *n (0 in a 3D scene, which never builds one). Returns 0, or
 * RIGD_E_NOMEM (the list then stays stale; *n is 0). The list lives until
 * the next edit of the scene; scene_draw_id(s, i) is its i-th id, i in
 * [0, *n).
 */
int scene_draw_order(const scene *s, int *n);
const char *scene_draw_id(const scene *s, int i);
/* Bumped each time a rebuild gives a list that differs from the one
 * before (in ids or their order): equal versions of one scene object mean
 * an equal list. */
uint64_t scene_draw_version(const scene *s);
/*
 * The effective facing of 'node' (FACING_RIGHT or FACING_LEFT): its own,
 * else its nearest ancestor's, else its root's natural facing, FACING_LEFT
 * when the root's world matrix is mirrored (the determinant of its 2x2
 * block is negative), else FACING_RIGHT. O(depth).
 */
int scene_facing(const scene *s, int node);

/* --- structure (reads) --- */
int scene_count(const scene *s);                   /* number of nodes */
int scene_find(const scene *s, const char *id);    /* node, or -1 */
const char *scene_id(const scene *s, int node);
int scene_parent(const scene *s, int node);        /* -1 for a root */
int scene_pos(const scene *s, int node);           /* preorder position */
int scene_at(const scene *s, int pos);             /* node at a position */
int scene_subtree_size(const scene *s, int node);  /* node and descendants */
int scene_depth(const scene *s, int node);         /* 0 for a root; O(depth) */
/* Children of 'node', or the roots when node is -1. O(children). */
int scene_child_count(const scene *s, int node);
int scene_child_at(const scene *s, int node, int index);
int scene_child_index(const scene *s, int node);   /* among its siblings */
bool scene_is_ancestor(const scene *s, int ancestor, int node); /* or equal */
void scene_props(const scene *s, int node, node_props *out);

/* --- structure (edits) --- */
/*
 * Creates node 'id' under 'parent' (-1: a new root) at sibling 'index'
 * (-1 or the child count: append). 'p' may be NULL for the defaults; every
 * field of it is used (mask PROP_ALL). *out_node (may be NULL) gets the handle.
 * Errors: BAD_ID, DUPLICATE_ID, UNKNOWN_NODE (parent), BAD_INDEX, LIMIT,
 * NOMEM, and those of node_props_check.
 */
int scene_create(scene *s, const char *id, int parent, int index, const node_props *p,
		 int *out_node);
/*
 * Bulk load into an EMPTY scene, in O(n) whatever the depth (scene_create
 * updates every ancestor's subtree size and costs O(depth)). Node i has id
 * ids[i], props props[i] (NULL array: defaults), and parent parents[i], an
 * index into the same list that must be smaller than i, or -1 for a root.
 * The list must be in depth-first preorder with siblings in order (a
 * node's parent is its predecessor or one of its predecessor's ancestors);
 * RIGD_E_BAD_INDEX otherwise. On any error (also BAD_ID, DUPLICATE_ID,
 * LIMIT, NOMEM and those of node_props_check) the scene stays empty and
 * *bad (may be NULL) gets the offending entry.
 */
int scene_load(scene *s, int n, const char *const *ids, const int *parents,
	       const node_props *props, int *bad);
/* Deletes 'node' and its whole subtree. */
int scene_delete(scene *s, int node);
/*
 * Moves 'node' (with its subtree) under 'new_parent' (-1: make it a root) at
 * sibling 'index' (-1: append; counted among the siblings without the node
 * itself). With keep_world the node's t, r and s are rewritten so that its
 * world matrix stays the same (the pivot is kept); RIGD_E_NOT_TRS if that
 * needs a shear, RIGD_E_SINGULAR if the new parent's world matrix is
 * singular; RIGD_E_NOT_TRS too for a node with a shear or an inherit mode
 * other than normal (keep_world rewrites t, r and s only).
 * RIGD_E_CYCLE if new_parent is the node or inside its subtree.
 */
int scene_reparent(scene *s, int node, int new_parent, int index, bool keep_world);
/* Sets the fields of 'p' named by 'mask'. Transform fields mark the node's
 * subtree dirty. */
int scene_set(scene *s, int node, unsigned mask, const node_props *p);
/*
 * scene_set with the strings already allocated: 'name' (with PROP_NAME in
 * 'mask'), 'mesh' (with PROP_MESH) and 'layer' (with PROP_LAYER) stand for
 * p->name, p->mesh and p->layer, and on success the scene takes ownership
 * of them (malloc'd, or NULL for none);
 * a string whose bit is not in 'mask' stays the caller's. Allocates
 * nothing, so it fails only on validation; on error nothing has changed
 * and both strings stay the caller's. This is how an edit's rollback
 * restores a name without a copy that could run out of memory.
 */
int scene_set_owned(scene *s, int node, unsigned mask, const node_props *p, char *name,
		    char *mesh, char *layer);

/* --- world matrices --- */
/*
 * Brings every dirty world matrix up to date in one pass over the union of
 * the dirty subtrees and returns how many matrices it recomputed. For each
 * contiguous preorder range it recomputed, calls fn(ctx, first_pos, end_pos)
 * (fn may be NULL), and stamps those nodes with 'stamp' (see
 * scene_world_stamp). Never fails.
 */
typedef void (*scene_range_fn)(void *ctx, int first_pos, int end_pos);
long scene_update(scene *s, uint64_t stamp, scene_range_fn fn, void *ctx);
/* True when some world matrix awaits scene_update. */
bool scene_has_dirty(const scene *s);
bool scene_is_dirty(const scene *s, int node);
/* The stamp of the scene_update that last recomputed 'node' (0: never). */
uint64_t scene_world_stamp(const scene *s, int node);

/* The cached local matrix T(t) T(pivot) R K S T(-pivot), K the shear
 * (mat4_compose_pivot2d; K = I without one). A node of an inherit mode
 * other than normal has W != W_parent * L: its world comes from its
 * parent's world and its channels by the mode (inherit.h). */
mat4 scene_local(const scene *s, int node);
/* The node's world matrix, never stale: a dirty node's is computed from the
 * locals along its path (without touching the cache). */
mat4 scene_world(const scene *s, int node);
/* The cached world matrix of live 'node' as it is stored: the 12 doubles
 * of a mat34 (by rows), for loops that would otherwise pay scene_world's
 * conversion; NULL when it awaits scene_update or the node is not live.
 * Valid until the scene next changes. */
const double *scene_world_rows(const scene *s, int node);

/* --- queries --- */
vec3 scene_to_world(const scene *s, int node, vec3 p);
/* World point to the node's frame. RIGD_E_SINGULAR if W is not invertible. */
int scene_from_world(const scene *s, int node, vec3 p, vec3 *out);
/* p in from's frame to to's frame: W_to^-1 * W_from * p. */
int scene_between(const scene *s, int from, int to, vec3 p, vec3 *out);
/* The frame of 'from' seen from 'to': W_to^-1 * W_from. */
int scene_relative(const scene *s, int from, int to, mat4 *out);
/* View matrix of a node: W^-1 (any node, a camera node being the use). */
int scene_view(const scene *s, int node, mat4 *out);
double scene_det(const scene *s, int node);       /* det of W's 3x3 */
double scene_shear_deg(const scene *s, int node); /* mat4_shear_deg(W) */
/* The world box of the node's own bounds (empty if it has none). */
aabb scene_world_box(const scene *s, int node);
/* The node's own bounds in its own frame (empty if it has none). */
aabb scene_local_box(const scene *s, int node);
/*
 * The shape log, for caches of boxes kept in each node's own frame (a
 * node's bounds and its children's boxes carried by their local
 * matrices): scene_shape_clock counts the changes to such boxes, and
 * scene_shape_since gives the nodes noted since 'clock' (in *nodes, valid
 * until the scene next changes; *n of them), each a node whose box in its
 * own frame changed, as did every ancestor's: bounds set, a child's local
 * matrix set, a child created, deleted or moved away or in. A handle
 * noted may have been deleted since (or reused). World matrices do not
 * count: a root's edit notes nothing. Returns false when the log no longer
 * reaches back to 'clock' (it is bounded, and scene_load forgets it): the
 * reader rebuilds from scratch.
 */
uint64_t scene_shape_clock(const scene *s);
bool scene_shape_since(const scene *s, uint64_t clock, const int **nodes, int *n);
/* The union of the world boxes of the node's subtree. O(subtree). */
aabb scene_subtree_box(const scene *s, int node);
/* Box of every node in the scene, and its bounding sphere. */
aabb scene_box(const scene *s);

/*
 * Hierarchical culling against the intersection of 'n' half-spaces: a
 * subtree box outside any plane is rejected with one test, one inside all is
 * accepted with one test, a straddling one is opened (its node's own box and
 * its children's subtree boxes are tested). Nodes with no bounds are never
 * visible and cost no test. Writes the visible nodes in preorder to
 * 'visible' (up to 'cap'; may be NULL) and returns how many are visible;
 * *tests (may be NULL) receives the number of box tests made.
 */
int scene_cull(const scene *s, const plane *planes, int n, int *visible, int cap, int *tests);

/*
 * The classic matrix-stack traversal: walks the preorder list
 * keeping a stack of parent world matrices, with pushes and pops by depth,
 * and calls fn for every node with its depth and the world matrix it
 * computed. Independent of the cache: a cross-check for scene_update.
 * Returns RIGD_E_NOMEM if the stack cannot grow (nothing visited then), else
 * the maximum stack depth reached.
 */
typedef void (*scene_visit_fn)(void *ctx, int node, int depth, const mat4 *world);
int scene_traverse(const scene *s, scene_visit_fn fn, void *ctx);

/* 64-bit FNV-1a over every node's id and world-matrix bits in preorder:
 * equal hashes mean bit-identical scenes. Brings nothing up to date: call
 * scene_update first. */
uint64_t scene_hash(const scene *s);

#endif
