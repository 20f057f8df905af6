/*
 * edit_internal.h: what the edit module's files share (edit.c,
 * edit_validate.c, edit_apply.c, edit_invert.c).
 *
 * Private to server/core/: the public interface is edit.h. Functions here
 * carry the prefix ed_ so that they never read as part of it.
 */
#ifndef RIGD_EDIT_INTERNAL_H
#define RIGD_EDIT_INTERNAL_H

#include "edit.h"

#include <stdbool.h>

/* Fields each op accepts (see edit.h). */
#define CREATE_FIELDS                                                                      \
	(EDIT_F_PARENT | EDIT_F_INDEX | EDIT_F_NAME | EDIT_F_T | EDIT_F_R | EDIT_F_S |     \
	 EDIT_F_PIVOT | EDIT_F_EULER | EDIT_F_BOUNDS | EDIT_F_MESH | EDIT_F_KIND | EDIT_F_FOV | \
	 EDIT_F_NEAR | EDIT_F_FAR | EDIT_F_VISIBLE | EDIT_F_ANGLE | EDIT_F_DRAW |         \
	 EDIT_F_SHEAR | EDIT_F_INHERIT)
#define SET_FIELDS (CREATE_FIELDS & ~(EDIT_F_PARENT | EDIT_F_INDEX))
#define ROTATE_FIELDS (EDIT_F_ANGLE | EDIT_F_AXIS)
#define MOVE_FIELDS EDIT_F_BY
#define IK_FIELDS (EDIT_F_CHAIN | EDIT_F_TARGET | EDIT_F_POLE)
#define REPARENT_FIELDS (EDIT_F_PARENT | EDIT_F_INDEX | EDIT_F_KEEP_WORLD)
#define DELETE_FIELDS 0u
/* Everything a create restoring a deleted node carries. */
#define RESTORE_FIELDS (CREATE_FIELDS & ~(EDIT_F_EULER | EDIT_F_ANGLE))
#define CAMERA_FIELDS (EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR)
/* The fields of a set op that change a node's transform channels only (its
 * record's t, r, s, pivot and what derives from them: euler, angle). A
 * shear or an inherit mode changes the world matrices too, but is not one
 * of the channels an update's locals entry carries: it counts as another
 * field. */
#define LOCALS_FIELDS \
	(EDIT_F_T | EDIT_F_R | EDIT_F_S | EDIT_F_PIVOT | EDIT_F_EULER | EDIT_F_ANGLE)
#define TRANSFORM_FIELDS (LOCALS_FIELDS | EDIT_F_SHEAR | EDIT_F_INHERIT)
/* The fields of a 2D node's shape beyond TRS: a create that restores a
 * node carries them only when they differ from the defaults, so that a 3D
 * scene's restores keep to the fields every log format holds. */
#define SHAPE2D_FIELDS (EDIT_F_SHEAR | EDIT_F_INHERIT)

/* Bytes of the buffer ed_quoted writes. */
#define QUOTED_MAX (SCENE_ID_MAX + 4)

/* --- edit.c --- */

/*
 * An id from a batch, fit to be quoted in a message: at most 64 characters,
 * anything outside printable ASCII (and the quote) shown as '?', and "..."
 * when it was longer. 'out' holds QUOTED_MAX bytes. Returns 'out'.
 */
const char *ed_quoted(const char *id, char *out);

/* Frees the op's strings (the op itself is in its batch's array). */
void ed_op_release(edit_op *op);

/* --- edit_validate.c: checks that need the op and at most a lookup --- */

/* The scene's PROP_ mask for an op's fields. */
unsigned ed_prop_mask(unsigned fields);

/* Overwrites the fields of 'p' the op carries (strings borrowed from op). */
void ed_props_from_op(const edit_op *op, node_props *p);

/* Checks 'p' for the fields op k carries, naming the offending field in
 * 'err'. 0 or the error. */
int ed_check_props(const edit_op *op, int k, const node_props *p, edit_error *err);

/* Validation of op k that needs no scene: kind, allowed fields, ids. 0 or
 * the error, set in 'err'. 'lim' may be NULL (no limits). */
int ed_check_shape(const edit_op *op, int k, const edit_limits *lim, edit_error *err);

/* The parent handle op k names (*parent -1 for a root): 0, or
 * RIGD_E_UNKNOWN_NODE set in 'err'. */
int ed_find_parent(const scene *s, const edit_op *op, int k, int *parent, edit_error *err);

/* The handle of the node op k names: 0, or RIGD_E_UNKNOWN_NODE set in 'err'. */
int ed_find_node(const scene *s, const edit_op *op, int k, int *node, edit_error *err);

/* 0, or RIGD_E_BAD_FIELD set in 'err' naming the field, when op k's
 * merged values 'p' leave the xy plane in a 2D scene (t.z, pivot.z not 0,
 * s.z not 1, a rotation not about z), or op k gives an angle in a 3D
 * scene. Checks only the fields the op carries. */
int ed_check_plane(const scene *s, const edit_op *op, int k, const node_props *p,
		   edit_error *err);

/* 0, or RIGD_E_BAD_FIELD set in 'err' naming the field: op k carries
 * layer, z or facing in a 3D scene, or a layer edit_layer_check refuses.
 * Runs before the op's other values are checked, so that a bad layer is
 * refused with the reason it is bad. */
int ed_check_draw(const scene *s, const edit_op *op, int k, edit_error *err);

/* --- edit_relative.c: relative ops resolved into absolute ones --- */

/* The world position of a node's joint: its pivot carried by its world
 * matrix (where t + pivot sits in the parent's frame). */
vec3 ed_joint_world(const scene *s, int node);

/*
 * Resolves op k, a rotate, move or ik op, or a create or set with an angle,
 * against the scene as the ops before it left it: writes to out[0..*n_out)
 * (at most 2) the absolute ops it amounts to (sets, or the create with r;
 * their strings borrowed from 'op'), and for ik fills *ik. Changes nothing.
 * 0, or an error set in 'err' naming op k and the field.
 */
int ed_resolve(const scene *s, const edit_op *op, int k, edit_op out[2], int *n_out,
	       edit_ik_report *ik, edit_error *err);

/* --- edit_pose.c: the pose ops --- */

/* The names and root a pose op carries (root, a, b) are valid ids no
 * longer than 'max_id': 0 or RIGD_E_BAD_ID set in 'err'. */
int ed_check_pose_ids(const edit_op *op, int k, size_t max_id, edit_error *err);

/*
 * Applies pose_set or pose_delete op k to the scene's poses and, when
 * 'undo' is not NULL, appends its inverse there (a pose_delete of a new
 * pose, a pose_set of the old channels, moved from the store). 0, or an
 * error set in 'err' with nothing changed.
 */
int ed_apply_pose(scene *s, const edit_op *op, int k, edit_batch *undo, edit_error *err);

/* Takes back a pose_set or pose_delete recorded by ed_apply_pose; takes the
 * op's channels. Allocates nothing. 0, or RIGD_E_INTERNAL when the poses
 * are not as the op left them (a bug). */
int ed_undo_pose(scene *s, edit_op *op);

/* Resolves pose_save op k into the pose_set 'out' that carries the
 * captured channels (owned by 'out': release with ed_op_release). 0 or
 * the error set in 'err'. */
int ed_resolve_pose_save(const scene *s, const edit_op *op, int k, edit_op *out,
			 edit_error *err);

/* Resolves blend op k into 'out' (initialised by the call): one set of t,
 * r and s for each node of the subtree both poses hold, in preorder. 0 or
 * the error set in 'err' ('out' then empty). */
int ed_resolve_blend(const scene *s, const edit_op *op, int k, edit_batch *out,
		     edit_error *err);

/* --- edit_clip.c --- */

/* Resolves clip op k into 'out' (initialised by the call): one set per
 * animated bone node, per slot node whose attachment the clip keys, and
 * with a draw-order timeline one z per slot node, in the skeleton's order
 * (docs/clips.md, "Playing a clip"). 0 or the error set in 'err' ('out'
 * then empty). */
int ed_resolve_clip(const scene *s, const edit_op *op, int k, edit_batch *out, edit_error *err);

/* --- edit_invert.c: recording inverses and applying them --- */

/* Appends to 'undo' a create that restores 'node' exactly under its parent,
 * at sibling 'index' (-1: appended). 0 or RIGD_E_NOMEM (an op may be left
 * in 'undo': drop it with ed_undo_truncate). */
int ed_record_restore(const scene *s, int node, int index, edit_batch *undo);

/* Appends to 'undo' a set of the node's old values of 'fields'. 0 or
 * RIGD_E_NOMEM, as ed_record_restore. */
int ed_record_old_values(const scene *s, int node, unsigned fields, edit_batch *undo);

/* Drops the ops appended to 'undo' (may be NULL) since it held 'n_before'. */
void ed_undo_truncate(edit_batch *undo, int n_before);

/* Reorders the recorded inverses into the order that undoes the batch:
 * groups last to first, each in its own order (op i's inverses are
 * undo->ops[starts[i] .. starts[i + 1])). Allocates nothing. */
void ed_reorder_inverse(edit_batch *undo, const int *starts, int n_groups);

/* Rolls back ops 0..n_done-1 of a batch, whose inverses 'undo' recorded;
 * cannot run out of memory. Empties 'undo'. */
void ed_rollback(scene *s, edit_batch *undo, const int *starts, int n_done);

#endif
