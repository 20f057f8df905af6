/*
 * edit_invert.c: the inverse of a batch. Before each op is made, its
 * inverse is recorded from the values the scene stores, so undoing never
 * recomputes a value; applying the inverses (a rollback, edit_revert)
 * allocates nothing and so cannot fail, even out of memory.
 *
 * Restoring a rotation hands the scene the unit quaternion it stored. That
 * is exact only because normalising is idempotent (quat_normalize returns a
 * quaternion that is already unit to within rounding unchanged); were it
 * not, dividing by a computed length of 1 - 1ulp would move the value.
 */
#include "edit_internal.h"

#include "err.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- recording inverses ---------- */

/* Copies every value of 'p' but its strings into the op's fields (which
 * of them the op carries is the caller's business). */
static void op_from_props(edit_op *op, const node_props *p)
{
	op->t = p->t;
	op->r = p->r;
	op->s = p->s;
	op->pivot = p->pivot;
	op->has_bounds = p->has_bounds;
	op->bounds = p->bounds;
	op->node_kind = p->kind;
	op->fov_deg = p->fov_deg;
	op->znear = p->znear;
	op->zfar = p->zfar;
	op->visible = p->visible;
	op->z_right = p->z_right;
	op->z_left = p->z_left;
	op->facing = p->facing;
	op->shear_deg[0] = p->shear[0];
	op->shear_deg[1] = p->shear[1];
	op->inherit = p->inherit;
}

/* The shear and inherit fields of 'p' that differ from a create's
 * defaults (a shear of +0 +0, the normal mode): none in a 3D scene. */
static unsigned shape2d_fields_set(const node_props *p)
{
	static const double zero = 0;

	return (memcmp(&p->shear[0], &zero, sizeof(zero)) || memcmp(&p->shear[1], &zero, sizeof(zero))
			? EDIT_F_SHEAR : 0u) |
	       (p->inherit != INHERIT_NORMAL ? EDIT_F_INHERIT : 0u);
}

/* The draw fields (layer, z, facing) of 'p' that differ from a create's
 * defaults: all a create needs to restore them, and none in a 3D scene,
 * whose creates take none. */
static unsigned draw_fields_set(const node_props *p)
{
	static const double zero = 0;

	return (p->layer ? EDIT_F_LAYER : 0u) |
	       (memcmp(&p->z_right, &zero, sizeof(zero)) || memcmp(&p->z_left, &zero, sizeof(zero))
			? EDIT_F_Z : 0u) |
	       (p->facing != FACING_NONE ? EDIT_F_FACING : 0u);
}

/*
 * Appends to 'undo' a create that restores 'node' exactly, with every
 * field, under its parent: at sibling 'index', or appended when index is
 * -1 (which, for restores made in preorder under a parent just restored,
 * is the same place).
 */
int ed_record_restore(const scene *s, int node, int index, edit_batch *undo)
{
	node_props p;
	int parent = scene_parent(s, node);
	edit_op *op = edit_batch_add(undo, EDIT_CREATE, scene_id(s, node));

	if (!op)
		return RIGD_E_NOMEM;
	scene_props(s, node, &p);
	op->fields = (RESTORE_FIELDS & ~(index < 0 ? EDIT_F_INDEX : 0u) & ~EDIT_F_DRAW &
		      ~SHAPE2D_FIELDS) |
		     draw_fields_set(&p) | shape2d_fields_set(&p);
	snprintf(op->parent, sizeof(op->parent), "%s", parent >= 0 ? scene_id(s, parent) : "");
	op->index = index;
	op_from_props(op, &p);
	assert((op->fields & ~edit_fields_allowed(EDIT_CREATE)) == 0);
	if ((p.name && !(op->name = strdup(p.name))) || (p.mesh && !(op->mesh = strdup(p.mesh))) ||
	    (p.layer && !(op->layer = strdup(p.layer))))
		return RIGD_E_NOMEM; /* the op is released with 'undo' */
	return 0;
}

/* Appends to 'undo' a set of the old values of the fields in 'fields'. */
int ed_record_old_values(const scene *s, int node, unsigned fields, edit_batch *undo)
{
	node_props p;
	edit_op *op = edit_batch_add(undo, EDIT_SET, scene_id(s, node));

	if (!op)
		return RIGD_E_NOMEM;
	scene_props(s, node, &p);
	if (fields & (EDIT_F_EULER | EDIT_F_ANGLE))
		fields = (fields & ~(EDIT_F_EULER | EDIT_F_ANGLE)) | EDIT_F_R;
	if (fields & CAMERA_FIELDS)
		fields |= CAMERA_FIELDS; /* the scene sets the three together */
	op->fields = fields;
	op_from_props(op, &p);
	assert((op->fields & ~edit_fields_allowed(EDIT_SET)) == 0);
	if (((fields & EDIT_F_NAME) && p.name && !(op->name = strdup(p.name))) ||
	    ((fields & EDIT_F_MESH) && p.mesh && !(op->mesh = strdup(p.mesh))) ||
	    ((fields & EDIT_F_LAYER) && p.layer && !(op->layer = strdup(p.layer))))
		return RIGD_E_NOMEM;
	return 0;
}

/* Drops the ops appended to 'undo' since it held 'n_before'. */
void ed_undo_truncate(edit_batch *undo, int n_before)
{
	assert(!undo || (n_before >= 0 && n_before <= undo->n_ops));
	while (undo && undo->n_ops > n_before)
		ed_op_release(&undo->ops[--undo->n_ops]);
}

/* ---------- taking a batch back ---------- */

static void reverse_ops(edit_op *ops, int lo, int hi)
{
	for (hi--; lo < hi; lo++, hi--) {
		edit_op t = ops[lo];

		ops[lo] = ops[hi];
		ops[hi] = t;
	}
}

/* Whether the node holds exactly, bit for bit, the transform channels the
 * inverse op 'op' carries: an inverse restores the values it recorded. */
static bool restored(const scene *s, int node, const edit_op *op)
{
	node_props p;
	unsigned f = op->fields;

	scene_props(s, node, &p);
	return (!(f & EDIT_F_T) || memcmp(&p.t, &op->t, sizeof(p.t)) == 0) &&
	       (!(f & EDIT_F_R) || memcmp(&p.r, &op->r, sizeof(p.r)) == 0) &&
	       (!(f & EDIT_F_S) || memcmp(&p.s, &op->s, sizeof(p.s)) == 0) &&
	       (!(f & EDIT_F_PIVOT) || memcmp(&p.pivot, &op->pivot, sizeof(p.pivot)) == 0);
}

/*
 * Applies one recorded inverse op to 's', which is as the op it undoes left
 * it, with the scene calls that allocate nothing: the op's name and mesh
 * move into the scene (scene_set_owned), a subtree is moved in place, and
 * a restored node takes a handle and an id-table slot that the delete it
 * undoes freed. No validation beyond the scene's own: the op was recorded
 * from values the scene stored. Returns 0, or the scene's error when the
 * scene is not as the op left it, or RIGD_E_INTERNAL when the node does
 * not hold the channels the op restores (both bugs: the caller then
 * treats the scene as no longer matching its log).
 */
static int undo_op(scene *s, edit_op *op)
{
	node_props p = node_props_default();
	unsigned strings = PROP_NAME | PROP_MESH | PROP_LAYER;
	int node, parent = -1, rc;

	if (op->kind == EDIT_POSE_SET || op->kind == EDIT_POSE_DELETE)
		return ed_undo_pose(s, op);
	node = scene_find(s, op->id);
	if ((op->fields & EDIT_F_PARENT) && op->parent[0] && (parent = scene_find(s, op->parent)) < 0)
		return RIGD_E_UNKNOWN_NODE;
	ed_props_from_op(op, &p);
	switch (op->kind) {
	case EDIT_CREATE:
		p.name = p.mesh = p.layer = NULL;
		if ((rc = scene_create(s, op->id, parent, op->index, &p, &node)) != 0)
			return rc;
		break;
	case EDIT_SET:
		strings = ed_prop_mask(op->fields);
		break;
	case EDIT_REPARENT:
		return scene_reparent(s, node, parent, op->index, false);
	default:
		return scene_delete(s, node);
	}
	if ((rc = scene_set_owned(s, node, strings, &p, op->name, op->mesh, op->layer)) != 0)
		return rc;
	/* The strings are the scene's now, whatever the check below says. */
	if (strings & PROP_NAME)
		op->name = NULL;
	if (strings & PROP_MESH)
		op->mesh = NULL;
	if (strings & PROP_LAYER)
		op->layer = NULL;
	/* An inverse restores the bits it recorded: checked in every build
	 * type, since a mismatch means the scene no longer matches its log. */
	return restored(s, node, op) ? 0 : RIGD_E_INTERNAL;
}

/*
 * Applies the ops of 'inverse', in order, to 's', which is as the batch
 * they undo left it. Raises the scene's node limit meanwhile: restoring a
 * scene that held more nodes than the limit now allows is not a new edit.
 */
static int revert(scene *s, edit_batch *inverse)
{
	int max_nodes = scene_max_nodes(s), rc = 0;

	scene_set_max_nodes(s, INT_MAX);
	for (int i = 0; i < inverse->n_ops && rc == 0; i++)
		rc = undo_op(s, &inverse->ops[i]);
	scene_set_max_nodes(s, max_nodes);
	assert(rc == 0);
	return rc;
}

/*
 * Reorders the recorded inverses, in place, into the order that undoes the
 * batch: op groups last to first, each group in its own order (the inverse
 * ops of op i are undo->ops[starts[i] .. starts[i + 1])). Reversing the
 * whole list and then each group back allocates nothing.
 */
void ed_reorder_inverse(edit_batch *undo, const int *starts, int n_groups)
{
	int n = starts[n_groups];

	assert(n_groups >= 0 && starts[0] == 0 && n == undo->n_ops);
	reverse_ops(undo->ops, 0, n);
	for (int i = 0; i < n_groups; i++)
		reverse_ops(undo->ops, n - starts[i + 1], n - starts[i]);
}

/* Rolls back the ops 0..n_done-1 of a batch, whose inverses 'undo'
 * recorded; cannot run out of memory. Empties 'undo'. */
void ed_rollback(scene *s, edit_batch *undo, const int *starts, int n_done)
{
	ed_reorder_inverse(undo, starts, n_done);
	revert(s, undo);
	edit_batch_release(undo);
}

int edit_revert(scene *s, edit_batch *inverse)
{
	int rc = revert(s, inverse);

	edit_batch_release(inverse);
	return rc;
}

