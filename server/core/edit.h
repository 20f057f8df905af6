/*
 * edit.h: the edit language as C structs: a batch of create / set / reparent
 * / delete ops, applied to a scene atomically, with its exact inverse.
 *
 * A batch is applied op by op; each op is validated against the scene as the
 * ops before it left it. If op k fails, the inverses of ops 0..k-1 are applied
 * in reverse order, which restores the stored values themselves (never values
 * recomputed from world matrices), so the scene is bit-identical to before and
 * the error names op k, the field and the reason. The inverse batch of an
 * accepted batch is its undo.
 *
 * This module knows no JSON, SQL or sockets (proto.* turns JSON into these
 * structs), and never brings world matrices up to date: the server calls
 * scene_update once per event-loop turn for every batch of that turn.
 */
#ifndef RIGD_EDIT_H
#define RIGD_EDIT_H

#include "pose.h"
#include "scene.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EDIT_DEFAULT_MAX_OPS 10000    /* ops per batch */
#define EDIT_FIELD_MAX 72             /* bytes of a field name in edit_error */
#define EDIT_MESSAGE_MAX 384          /* bytes of an edit_error message */

enum edit_op_kind {
	EDIT_CREATE = 1,
	EDIT_SET = 2,
	EDIT_REPARENT = 3,
	EDIT_DELETE = 4,
	/* Relative ops: resolved against the scene into the absolute set ops
	 * they amount to (edit_apply_resolve), which is what a log stores. */
	EDIT_ROTATE = 5,
	EDIT_MOVE = 6,
	EDIT_IK = 7,
	/* Poses (pose.h): pose_save is relative (it captures the channels the
	 * scene holds and is resolved into the pose_set that carries them);
	 * pose_set and pose_delete are absolute; blend is relative (resolved
	 * into the set ops of the channels it produces). */
	EDIT_POSE_SAVE = 8,
	EDIT_POSE_DELETE = 9,
	EDIT_POSE_SET = 10,
	EDIT_BLEND = 11,
	/* A skeleton's clip sampled at a time (skel_clips.h, docs/clips.md):
	 * relative, resolved into the set ops of the bones and slots it
	 * animates. */
	EDIT_CLIP = 12,
	EDIT_OP_LAST_ = EDIT_CLIP,
};

/*
 * Bits naming the fields an op carries (edit_op.fields). Which fields each
 * op accepts:
 *   create:   parent index name t r s pivot euler bounds mesh kind fov near
 *             far visible layer z facing (all optional; no parent = a new
 *             root; absent fields take node_props_default())
 *   set:      name t r s pivot euler bounds mesh kind fov near far visible
 *             layer z facing
 *   reparent: parent (required; "" = make it a root), index, keep_world
 *   delete:   none (deletes the whole subtree)
 *   rotate:   angle (required), axis (required in 3D, refused in 2D)
 *   move:     by (required)
 *   ik:       chain, target (required), pole (required in 3D, refused in 2D)
 *   pose_save:   id is the pose's name; root (optional: the subtree saved;
 *                absent = the whole scene)
 *   pose_set:    id is the pose's name; channels (required)
 *   pose_delete: id is the pose's name
 *   blend:    id is the subtree's root node; a, b (pose names) and
 *             weight (the wire's "t") required
 *   clip:     clip (required), time (required), file, root, weight (2D
 *             only); id is unused (""). Its members ride on bits of other
 *             ops with the clip op's own wire names, as blend's weight is
 *             "t": EDIT_F_CLIP_NAME (EDIT_F_NAME, the clip's name in
 *             'name'), EDIT_F_CLIP_FILE (EDIT_F_MESH, the skeleton asset's
 *             file in 'mesh'), EDIT_F_CLIP_TIME (EDIT_F_BY, seconds in
 *             'time_s'), EDIT_F_ROOT ('root') and EDIT_F_WEIGHT
 *             ('weight', default 1). The op is resolved into plain sets
 *             before anything stores it, so these bits never reach a log
 *             (whose binary op image holds absolute ops only), and the
 *             field bits, all 32 of which are taken, need not widen.
 * r, euler and angle exclude each other; angle, layer, z and facing
 * (create, set) only in a 2D scene. Any other field is RIGD_E_BAD_FIELD.
 */
enum edit_field {
	EDIT_F_PARENT = 1u << 0,
	EDIT_F_INDEX = 1u << 1,
	EDIT_F_NAME = 1u << 2,
	EDIT_F_T = 1u << 3,
	EDIT_F_R = 1u << 4,
	EDIT_F_S = 1u << 5,
	EDIT_F_PIVOT = 1u << 6,
	EDIT_F_EULER = 1u << 7,
	EDIT_F_BOUNDS = 1u << 8,
	EDIT_F_MESH = 1u << 9,
	EDIT_F_KIND = 1u << 10,
	EDIT_F_FOV = 1u << 11,
	EDIT_F_NEAR = 1u << 12,
	EDIT_F_FAR = 1u << 13,
	EDIT_F_VISIBLE = 1u << 14,
	EDIT_F_KEEP_WORLD = 1u << 15,
	/* The fields of the absolute ops (create, set, reparent, delete) as a
	 * log stores them: bits below EDIT_F_COUNT_, and EDIT_F_DRAW (below). */
	EDIT_F_COUNT_ = 16,
	/* The fields only a request carries: an angle, and the members of the
	 * relative ops, which are resolved into absolute fields before a batch
	 * is logged. */
	EDIT_F_ANGLE = 1u << 16,
	EDIT_F_AXIS = 1u << 17,
	EDIT_F_BY = 1u << 18,
	EDIT_F_CHAIN = 1u << 19,
	EDIT_F_TARGET = 1u << 20,
	EDIT_F_POLE = 1u << 21,
	EDIT_F_ROOT = 1u << 22,
	EDIT_F_POSE_A = 1u << 23,
	EDIT_F_POSE_B = 1u << 24,
	EDIT_F_WEIGHT = 1u << 25,       /* a blend's weight; "t" on the wire */
	EDIT_F_CHANNELS = 1u << 26,
	/* How a node of a 2D scene is drawn: absolute fields that a log
	 * stores, numbered after the others so that the bits above keep their
	 * values (a log's binary image of format 1 holds bits below
	 * EDIT_F_COUNT_ only; format 2 holds these too). */
	EDIT_F_LAYER = 1u << 27,
	EDIT_F_Z = 1u << 28,            /* z_right and z_left */
	EDIT_F_FACING = 1u << 29,
	/* A 2D node's shear (degrees, [shx, shy]) and inherit mode (enum
	 * node_inherit): absolute fields a log stores (format 3). */
	EDIT_F_SHEAR = 1u << 30,
	EDIT_F_INHERIT = 1u << 31,
	EDIT_F_ALL_COUNT_ = 32,         /* every field bit */
	EDIT_F_DRAW = EDIT_F_LAYER | EDIT_F_Z | EDIT_F_FACING,
	/* The clip op's members (see above). */
	EDIT_F_CLIP_NAME = EDIT_F_NAME,  /* "clip" on the wire */
	EDIT_F_CLIP_FILE = EDIT_F_MESH,  /* "file" */
	EDIT_F_CLIP_TIME = EDIT_F_BY,    /* "time" */
};

/* The wire name of one EDIT_F_ bit ("t", "keep_world", ...), "" if none. */
const char *edit_field_name(unsigned field_bit);
/* The EDIT_F_ bits an op of 'op_kind' accepts (0 for an unknown kind). */
unsigned edit_fields_allowed(int op_kind);

/*
 * One op. Only the fields whose EDIT_F_ bit is set in 'fields' are read.
 * 'name', 'mesh' and 'layer' are owned by the op (malloc'd, freed by
 * edit_batch_release); NULL with the bit set clears the value.
 */
typedef struct edit_op {
	int kind;                        /* enum edit_op_kind */
	unsigned fields;                 /* EDIT_F_ bits present */
	char id[SCENE_ID_MAX + 1];
	char parent[SCENE_ID_MAX + 1];   /* "" = root */
	int index;                       /* sibling index; -1 = append */
	char *name;                      /* owned; NULL = no name */
	vec3 t;
	quat r;                          /* need not be unit; normalised by the scene */
	vec3 s;
	vec3 pivot;
	vec3 euler_deg;                  /* intrinsic 'XYZ' as quat_from_euler_deg */
	bool has_bounds;                 /* EDIT_F_BOUNDS with false clears the box */
	aabb bounds;
	char *mesh;                      /* owned; NULL = no mesh */
	int node_kind;                   /* enum node_kind */
	double fov_deg;                  /* camera: vertical field of view */
	double znear;
	double zfar;
	bool visible;
	bool keep_world;                 /* reparent: rewrite t, r, s to keep the world matrix */
	char *layer;                     /* owned; "FILE#GROUP", NULL = no layer */
	double z_right;                  /* draw order when facing right */
	double z_left;                   /* and left (equal for a plain number) */
	int facing;                      /* enum node_facing; FACING_NONE inherits */
	double shear_deg[2];             /* 2D: [shx, shy], screen convention */
	int inherit;                     /* enum node_inherit */
	double angle_deg;                /* 2D screen angle (create, set), or the turn of a rotate */
	vec3 axis;                       /* rotate in 3D: the axis, in the node's local frame */
	vec3 by;                         /* move: added to t */
	/* ik: the chain is id (root joint), chain_mid (middle joint), chain_end
	 * (end); target a world point, pole a world direction (3D). */
	char chain_mid[SCENE_ID_MAX + 1];
	char chain_end[SCENE_ID_MAX + 1];
	vec3 target;
	vec3 pole;
	/* Poses: pose_save's subtree root (pose name in id); blend's poses a
	 * and b and its weight in [0, 1]; pose_set's channels, sorted by id
	 * strictly ascending, owned by the op (freed by edit_batch_release). */
	char root[SCENE_ID_MAX + 1];
	char pose_a[SCENE_ID_MAX + 1];
	char pose_b[SCENE_ID_MAX + 1];
	double weight;
	pose_channel *channels;
	int n_channels;
	double time_s;                   /* clip: the time sampled, seconds */
} edit_op;

/* True for the ops a log never stores because they are resolved into
 * absolute ones first: rotate, move, ik, pose_save, blend, clip. */
bool edit_op_is_relative(int op_kind);

/*
 * A batch: 'ops' is owned (with the strings of every op). 'client' is ""
 * for an anonymous batch; client_seq is meaningful when has_client_seq.
 */
typedef struct edit_batch {
	edit_op *ops;
	int n_ops;
	int cap_ops;
	char client[SCENE_ID_MAX + 1];
	bool has_client_seq;
	int64_t client_seq;
} edit_batch;

/* A node id by value, so that lists of ids outlive the nodes they name. */
typedef struct edit_id {
	char s[SCENE_ID_MAX + 1];
} edit_id;

/*
 * What an accepted batch did, for acks and broadcasts. Ids are listed once,
 * in the order the batch first touched them:
 *   created: nodes that exist after the batch and did not before;
 *   changed: nodes that existed before and after and whose locals, name,
 *            mesh, bounds, kind, camera, visibility or place in the tree
 *            the batch set (a node deleted and re-created is "changed");
 *   removed: nodes that existed before and not after (every node of a
 *            deleted subtree).
 * 'recomputed' is the number of world matrices the batch made stale: the size
 * of the union of the subtrees of the nodes it created, reparented or whose
 * t, r, s or pivot it set, measured on the tree after the batch.
 */
/* What an ik op did: whether its end reached the target (else the chain
 * points at it, stretched or folded), and the distance left from the end's
 * joint to the target (world units). */
typedef struct edit_ik_report {
	int op;                          /* index of the ik op in its batch */
	bool reached;
	double distance;
} edit_ik_report;

typedef struct edit_result {
	long recomputed;
	edit_id *created;
	int n_created;
	edit_id *changed;
	int n_changed;
	bool *changed_locals;            /* one per changed: true when only its
					  * transform channels (t, r, s, pivot) changed */
	edit_id *removed;
	int n_removed;
	edit_ik_report *ik;              /* one per ik op, in batch order */
	int n_ik;
} edit_result;

/*
 * Why a batch was refused. 'op' is the index of the failing op or -1 when
 * the error is not about one op; 'field' is the wire name of the offending
 * field ("t", "parent", "ops", "client_seq", ...) or "". 'message' reads
 * like "op 3: quaternion has zero length" or "op 0: unknown node 'arm2'".
 */
typedef struct edit_error {
	int code;                        /* RIGD_E_*; 0 = no error */
	int op;
	char field[EDIT_FIELD_MAX];
	char message[EDIT_MESSAGE_MAX];
} edit_error;

/* Limits on untrusted batches; node count is scene_set_max_nodes(). */
typedef struct edit_limits {
	int max_ops;                     /* ops per batch (RIGD_E_LIMIT beyond) */
	int max_id_len;                  /* 1..SCENE_ID_MAX (RIGD_E_BAD_ID beyond) */
} edit_limits;

/* max_ops EDIT_DEFAULT_MAX_OPS, max_id_len SCENE_ID_MAX. */
edit_limits edit_limits_default(void);

/* --- batches --- */

/* An empty batch (no ops, anonymous). */
void edit_batch_init(edit_batch *b);
/* Frees the ops and their strings and leaves 'b' empty (re-initialised).
 * Accepts NULL. */
void edit_batch_release(edit_batch *b);
/* A heap batch, initialised, or NULL when out of memory. */
edit_batch *edit_batch_new(void);
/* Releases and frees a batch from edit_batch_new; accepts NULL. */
void edit_batch_free(edit_batch *b);

/*
 * Appends an op of 'kind' for node 'id' with no fields set and index -1.
 * Returns a pointer into b->ops, valid until the batch next grows or is
 * released, or NULL when out of memory or when 'id' is longer than
 * SCENE_ID_MAX (then 'b' is unchanged). The id is copied as is: edit_apply
 * validates it.
 */
edit_op *edit_batch_add(edit_batch *b, int kind, const char *id);

/* Makes room for 'n' ops in all, so that adding up to that many allocates
 * nothing. Returns 0 or RIGD_E_NOMEM (b unchanged). */
int edit_batch_reserve(edit_batch *b, int n);

/* Sets the op's parent (NULL or "" = root) and EDIT_F_PARENT. Returns 0, or
 * RIGD_E_BAD_ID when it is longer than SCENE_ID_MAX (op unchanged). */
int edit_op_set_parent(edit_op *op, const char *parent);
/* Copy 'name' / 'mesh' (NULL clears) into the op and set the field bit.
 * Returns 0 or RIGD_E_NOMEM (op unchanged). */
int edit_op_set_name(edit_op *op, const char *name);
int edit_op_set_mesh(edit_op *op, const char *mesh);
/* Copies 'layer' (NULL clears) into the op and sets EDIT_F_LAYER; 0 or
 * RIGD_E_NOMEM (op unchanged). Its syntax is checked when applied. */
int edit_op_set_layer(edit_op *op, const char *layer);

/*
 * The check of the layer op k gives, in scene 's', before it is applied:
 * 0 for none (NULL) or a valid one, else RIGD_E_BAD_FIELD set in 'err'
 * (field "layer") saying what is wrong with it. Today that is its syntax
 * (scene_layer_syntax_error); this is the one place a check that the
 * asset and its group exist in 's' belongs, so that every path that sets
 * a layer (create, set, undo, redo, replay, log import) goes through it.
 */
int edit_layer_check(const scene *s, const char *layer, int k, edit_error *err);

/* Deep copy of 'src' into 'dst' (initialised by this call). Returns 0 or
 * RIGD_E_NOMEM (dst then empty). */
int edit_batch_copy(edit_batch *dst, const edit_batch *src);

/* Frees the old contents of 'dst' and moves those of 'src' into it; 'src'
 * is left empty. */
void edit_batch_move(edit_batch *dst, edit_batch *src);

/* --- results and errors --- */

void edit_result_init(edit_result *r);
/* Frees the id lists and re-initialises 'r'. Accepts NULL. */
void edit_result_release(edit_result *r);

/* Fills 'e' (may be NULL) with code, op, field and a printf-style message.
 * Used by the codec's decoders for their errors so that both speak one format. */
void edit_error_set(edit_error *e, int code, int op, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* edit_error_set with the message's arguments as a va_list (for callers that
 * take a format and arguments of their own). */
void edit_error_vset(edit_error *e, int code, int op, const char *field, const char *fmt,
		     va_list ap) __attribute__((format(printf, 5, 0)));
/* Resets 'e' to "no error" (code 0, op -1). */
void edit_error_clear(edit_error *e);

/* --- applying --- */

/*
 * Applies batch 'b' to 's' atomically, with limits 'lim' (NULL: no op-count
 * limit and ids up to SCENE_ID_MAX, for trusted batches such as undo
 * inverses and log replay, which may exceed max_ops).
 *
 * Returns 0 when every op was applied. Then 'res' (may be NULL; initialised
 * by this call) receives what changed, and 'inverse' (may be NULL;
 * initialised by this call) receives the batch that undoes 'b' exactly:
 * applying it gives back a scene whose every stored value and tree order is
 * bit-identical (equal scene_hash after scene_update). The inverse carries
 * 'b's client and no client_seq; it may hold more ops than 'b' (the delete of
 * a subtree is undone by one create per node).
 *
 * Returns a negative RIGD_E_* code when an op fails, RIGD_E_NOMEM included;
 * then 's' is exactly as before, 'err' (may be NULL) names the op, the
 * field and the reason, and 'res' and 'inverse' are empty. Taking the ops
 * before the failing one back allocates nothing (everything it needs is
 * recorded before each op runs), so it cannot fail.
 *
 * World matrices are marked dirty, never recomputed: call scene_update.
 */
int edit_apply_ex(scene *s, const edit_batch *b, const edit_limits *lim, edit_result *res,
		  edit_batch *inverse, edit_error *err);

/*
 * Takes back a batch that edit_apply_ex applied to 's' and gave 'inverse'
 * for; 's' must be as that batch left it (later batches taken back first).
 * Unlike applying 'inverse' with edit_apply_ex, this allocates nothing and
 * so cannot run out of memory: the inverse's strings are handed to the
 * scene, and the handles and id-table room a restored node needs were
 * freed by the batch itself. Takes ownership of the contents of 'inverse'
 * and leaves it empty. Returns 0, or a negative code only when 's' is not
 * as the batch left it (a bug; the scene is then partly reverted).
 */
int edit_revert(scene *s, edit_batch *inverse);

/*
 * edit_apply_ex that also writes the batch as applied to 'resolved' (may be
 * NULL; initialised by the call, with 'b's client and client_seq): every
 * relative op (rotate, move, ik) replaced by the set ops of the absolute
 * channels it produced, and every angle by the r it stands for. Applying
 * 'resolved' to the scene 'b' was applied to gives bit-identical stored
 * values, so a log stores 'resolved' and replays exactly whatever the
 * solver. On error 'resolved' is empty. edit_apply_ex applies relative ops
 * the same way and merely does not hand the resolved batch out.
 */
int edit_apply_resolve(scene *s, const edit_batch *b, const edit_limits *lim, edit_result *res,
		       edit_batch *inverse, edit_batch *resolved, edit_error *err);

/* True when 'b' holds only absolute ops (create, set, reparent, delete)
 * and no angle: then edit_apply_resolve's 'resolved' equals 'b'. */
bool edit_batch_is_absolute(const edit_batch *b);

/* edit_apply_ex with lim NULL. */
int edit_apply(scene *s, const edit_batch *b, edit_result *res, edit_batch *inverse,
	       edit_error *err);

/* Helpers for code that names kinds on the wire: "group", "mesh", "camera";
 * edit_kind_from_name returns -1 for an unknown name. */
const char *edit_kind_name(int node_kind);
int edit_kind_from_name(const char *name);
/* "create", "set", "reparent", "delete", "rotate", "move", "ik",
 * "pose_save", "pose_set", "pose_delete", "blend", "clip"; -1 for an unknown op
 * name. */
const char *edit_op_name(int op_kind);
int edit_op_from_name(const char *name);

/* Copies the name 'src' into 'dst' of 'cap' >= 1 bytes, cut to cap - 1
 * bytes and NUL-terminated, as snprintf(dst, cap, "%s", src) would: the
 * scene and client names a batch carries from module to module, once or
 * more per edit, without printf's cost. */
void edit_copy_name(char *dst, size_t cap, const char *src);

#endif
