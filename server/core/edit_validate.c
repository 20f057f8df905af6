/*
 * edit_validate.c: the checks of one op (see edit.h): its shape (kind,
 * allowed fields, ids, index) without a scene, its values once merged with
 * the node's, and the nodes it names. Every failure becomes an edit_error
 * that names the op, the field and the reason.
 *
 * Never changes a scene: edit_apply.c calls these before each scene call.
 */
#include "edit_internal.h"
#include "asset.h"

#include "err.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- one op ---------- */

/* The scene's PROP_ mask for an op's fields. */
unsigned ed_prop_mask(unsigned fields)
{
	unsigned m = 0;

	if (fields & EDIT_F_T)
		m |= PROP_T;
	if (fields & (EDIT_F_R | EDIT_F_EULER | EDIT_F_ANGLE))
		m |= PROP_R;
	if (fields & EDIT_F_S)
		m |= PROP_S;
	if (fields & EDIT_F_PIVOT)
		m |= PROP_PIVOT;
	if (fields & EDIT_F_BOUNDS)
		m |= PROP_BOUNDS;
	if (fields & EDIT_F_MESH)
		m |= PROP_MESH;
	if (fields & EDIT_F_NAME)
		m |= PROP_NAME;
	if (fields & EDIT_F_KIND)
		m |= PROP_KIND;
	if (fields & CAMERA_FIELDS)
		m |= PROP_CAMERA;
	if (fields & EDIT_F_VISIBLE)
		m |= PROP_VISIBLE;
	if (fields & EDIT_F_LAYER)
		m |= PROP_LAYER;
	if (fields & EDIT_F_Z)
		m |= PROP_Z;
	if (fields & EDIT_F_FACING)
		m |= PROP_FACING;
	if (fields & EDIT_F_SHEAR)
		m |= PROP_SHEAR;
	if (fields & EDIT_F_INHERIT)
		m |= PROP_INHERIT;
	return m;
}

/* Overwrites the fields of 'p' the op carries. */
void ed_props_from_op(const edit_op *op, node_props *p)
{
	unsigned f = op->fields;

	if (f & EDIT_F_T)
		p->t = op->t;
	if (f & EDIT_F_R)
		p->r = op->r;
	if (f & EDIT_F_EULER)
		p->r = quat_from_euler_deg(op->euler_deg);
	if (f & EDIT_F_ANGLE)
		p->r = quat_from_angle2d_deg(op->angle_deg);
	if (f & EDIT_F_S)
		p->s = op->s;
	if (f & EDIT_F_PIVOT)
		p->pivot = op->pivot;
	if (f & EDIT_F_BOUNDS) {
		p->has_bounds = op->has_bounds;
		p->bounds = op->bounds;
	}
	if (f & EDIT_F_MESH)
		p->mesh = op->mesh;
	if (f & EDIT_F_NAME)
		p->name = op->name;
	if (f & EDIT_F_KIND)
		p->kind = op->node_kind;
	if (f & EDIT_F_FOV)
		p->fov_deg = op->fov_deg;
	if (f & EDIT_F_NEAR)
		p->znear = op->znear;
	if (f & EDIT_F_FAR)
		p->zfar = op->zfar;
	if (f & EDIT_F_VISIBLE)
		p->visible = op->visible;
	if (f & EDIT_F_LAYER)
		p->layer = op->layer;
	if (f & EDIT_F_Z) {
		p->z_right = op->z_right;
		p->z_left = op->z_left;
	}
	if (f & EDIT_F_FACING)
		p->facing = op->facing;
	if (f & EDIT_F_SHEAR) {
		p->shear[0] = op->shear_deg[0];
		p->shear[1] = op->shear_deg[1];
	}
	/* DragonBones' flags all true (INHERIT_DB with no bit) are the normal
	 * mode, and stored as it. */
	if (f & EDIT_F_INHERIT)
		p->inherit = op->inherit == INHERIT_DB ? INHERIT_NORMAL : op->inherit;
}

/* Checks 'p' for the fields the op carries, naming the offending field. */
int ed_check_props(const edit_op *op, int k, const node_props *p, edit_error *err)
{
	char q[QUOTED_MAX];
	unsigned bad = 0;
	const char *field = "";
	int rc;

	if ((op->fields & EDIT_F_EULER) &&
	    !(isfinite(op->euler_deg.x) && isfinite(op->euler_deg.y) && isfinite(op->euler_deg.z))) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "euler", "euler: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	if ((op->fields & EDIT_F_ANGLE) && !isfinite(op->angle_deg)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "angle", "angle: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	rc = node_props_check(p, ed_prop_mask(op->fields), &bad);
	if (rc == 0)
		return 0;
	switch (bad) {
	case PROP_T: field = "t"; break;
	case PROP_R:
		field = (op->fields & EDIT_F_EULER) ? "euler" : (op->fields & EDIT_F_ANGLE) ? "angle" : "r";
		break;
	case PROP_S: field = "s"; break;
	case PROP_PIVOT: field = "pivot"; break;
	case PROP_BOUNDS: field = "bounds"; break;
	case PROP_MESH: field = "mesh"; break;
	case PROP_NAME: field = "name"; break;
	case PROP_KIND: field = "kind"; break;
	case PROP_LAYER: field = "layer"; break;
	case PROP_Z: field = "z"; break;
	case PROP_FACING: field = "facing"; break;
	case PROP_SHEAR: field = "shear"; break;
	case PROP_INHERIT: field = "inherit"; break;
	case PROP_CAMERA:
		if (!isfinite(p->fov_deg) || !(p->fov_deg > 0 && p->fov_deg < 180))
			field = "fov";
		else if (!isfinite(p->znear) || !(p->znear > 0))
			field = "near";
		else if (!isfinite(p->zfar) || (op->fields & EDIT_F_FAR))
			field = "far";
		else
			field = "near";
		break;
	default: break;
	}
	if (rc == RIGD_E_BAD_FIELD && bad == PROP_BOUNDS)
		edit_error_set(err, rc, k, field, "bounds: min exceeds max");
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_MESH)
		edit_error_set(err, rc, k, field, "mesh: must be 1 to %d bytes", SCENE_MESH_MAX);
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_NAME)
		edit_error_set(err, rc, k, field, "name: longer than %d bytes", SCENE_NAME_MAX);
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_KIND)
		edit_error_set(err, rc, k, field, "kind: must be group, mesh or camera");
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_LAYER)
		edit_error_set(err, rc, k, field, "layer '%s': %s", ed_quoted(p->layer, q),
			       scene_layer_syntax_error(p->layer));
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_FACING)
		edit_error_set(err, rc, k, field, "facing: must be right, left or null");
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_SHEAR)
		edit_error_set(err, rc, k, field,
			       "shear: [%g, %g] makes the x and y axes collinear (shy - shx is 90 "
			       "modulo 180)", p->shear[0], p->shear[1]);
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_INHERIT)
		edit_error_set(err, rc, k, field,
			       "inherit: %d is not a mode (normal, onlyTranslation, "
			       "noRotationOrReflection, noScale, noScaleOrReflection, or DragonBones' "
			       "flags)", p->inherit);
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_CAMERA)
		edit_error_set(err, rc, k, field, "%s: a camera needs 0 < fov < 180 and 0 < near < far",
			       field);
	else if (rc == RIGD_E_ZERO_QUATERNION)
		edit_error_set(err, rc, k, field, "%s", err_str(rc));
	else
		edit_error_set(err, rc, k, field, "%s: %s", field, err_str(rc));
	return rc;
}

/* The fields a relative op cannot do without. */
static int check_required(const edit_op *op, int k, edit_error *err)
{
	unsigned need = op->kind == EDIT_ROTATE ? EDIT_F_ANGLE
			: op->kind == EDIT_MOVE ? EDIT_F_BY
			: op->kind == EDIT_IK   ? EDIT_F_CHAIN | EDIT_F_TARGET
			: op->kind == EDIT_POSE_SET ? EDIT_F_CHANNELS
			: op->kind == EDIT_BLEND ? EDIT_F_POSE_A | EDIT_F_POSE_B | EDIT_F_WEIGHT
			: op->kind == EDIT_CLIP ? EDIT_F_CLIP_NAME | EDIT_F_CLIP_TIME
						: 0u;
	unsigned missing = need & ~op->fields;

	if (missing) {
		/* The clip op's members have its own wire names (edit.h). */
		const char *f = op->kind != EDIT_CLIP ? edit_field_name(missing & -missing)
				: (missing & EDIT_F_CLIP_NAME) ? "clip" : "time";

		edit_error_set(err, RIGD_E_BAD_FIELD, k, f, "a %s op needs '%s'",
			       edit_op_name(op->kind), f);
		return RIGD_E_BAD_FIELD;
	}
	return 0;
}

/* Validation that needs no scene: kind, allowed fields, ids. */
int ed_check_shape(const edit_op *op, int k, const edit_limits *lim, edit_error *err)
{
	char q[QUOTED_MAX];
	unsigned extra;
	size_t max_id = lim ? (size_t)lim->max_id_len : SCENE_ID_MAX;
	int rc;

	if (op->kind < EDIT_CREATE || op->kind > EDIT_OP_LAST_) {
		edit_error_set(err, RIGD_E_UNKNOWN_OP, k, "op", "unknown op %d", op->kind);
		return RIGD_E_UNKNOWN_OP;
	}
	extra = op->fields & ~edit_fields_allowed(op->kind);
	if (extra) {
		const char *f = edit_field_name(extra & -extra);

		edit_error_set(err, RIGD_E_BAD_FIELD, k, f, "field '%s' is not allowed in a %s op", f,
			       edit_op_name(op->kind));
		return RIGD_E_BAD_FIELD;
	}
	if (op->kind == EDIT_REPARENT && !(op->fields & EDIT_F_PARENT)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "parent",
			       "a reparent op needs 'parent' (null for a root)");
		return RIGD_E_BAD_FIELD;
	}
	if ((op->fields & EDIT_F_R) && (op->fields & EDIT_F_EULER)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "euler", "give either 'r' or 'euler', not both");
		return RIGD_E_BAD_FIELD;
	}
	if ((op->fields & EDIT_F_ANGLE) && (op->fields & (EDIT_F_R | EDIT_F_EULER))) {
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "angle",
			       "give one of 'r', 'euler' or 'angle', not several");
		return RIGD_E_BAD_FIELD;
	}
	if ((rc = check_required(op, k, err)) != 0)
		return rc;
	/* A clip op names no node of its own (its root is 'root'). */
	if (op->kind != EDIT_CLIP && (!scene_id_valid(op->id) || strlen(op->id) > max_id)) {
		/* A pose op's id is the pose's name, a blend's its root node. */
		const char *f = op->kind == EDIT_BLEND ? "root"
				: op->kind >= EDIT_POSE_SAVE ? "pose" : "id";

		edit_error_set(err, RIGD_E_BAD_ID, k, f, "bad %s '%s': %s", f, ed_quoted(op->id, q),
			       err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	if ((op->fields & EDIT_F_PARENT) && op->parent[0] &&
	    (!scene_id_valid(op->parent) || strlen(op->parent) > max_id)) {
		edit_error_set(err, RIGD_E_BAD_ID, k, "parent", "bad parent id '%s': %s",
			       ed_quoted(op->parent, q), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	if ((rc = ed_check_pose_ids(op, k, max_id, err)) != 0)
		return rc;
	if (op->kind == EDIT_IK) {
		const char *ids[2] = { op->chain_mid, op->chain_end };

		for (int i = 0; i < 2; i++)
			if (!scene_id_valid(ids[i]) || strlen(ids[i]) > max_id) {
				edit_error_set(err, RIGD_E_BAD_ID, k, "chain", "chain: bad id '%s': %s",
					       ed_quoted(ids[i], q), err_str(RIGD_E_BAD_ID));
				return RIGD_E_BAD_ID;
			}
	}
	if ((op->fields & EDIT_F_INDEX) && op->index < -1) {
		edit_error_set(err, RIGD_E_BAD_INDEX, k, "index", "index %d: %s", op->index,
			       err_str(RIGD_E_BAD_INDEX));
		return RIGD_E_BAD_INDEX;
	}
	return 0;
}

/* The parent handle an op names (-1 for a root), or UNKNOWN_NODE. */
int ed_find_parent(const scene *s, const edit_op *op, int k, int *parent, edit_error *err)
{
	char q[QUOTED_MAX];

	*parent = -1;
	if (!(op->fields & EDIT_F_PARENT) || !op->parent[0])
		return 0;
	*parent = scene_find(s, op->parent);
	if (*parent < 0) {
		edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, "parent", "unknown node '%s'",
			       ed_quoted(op->parent, q));
		return RIGD_E_UNKNOWN_NODE;
	}
	return 0;
}

int ed_find_node(const scene *s, const edit_op *op, int k, int *node, edit_error *err)
{
	char q[QUOTED_MAX];

	*node = scene_find(s, op->id);
	if (*node < 0) {
		edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, "id", "unknown node '%s'", ed_quoted(op->id, q));
		return RIGD_E_UNKNOWN_NODE;
	}
	return 0;
}


/* ---------- 2D scenes ---------- */

int edit_layer_check(const scene *s, const char *layer, int k, edit_error *err)
{
	char q[QUOTED_MAX], file[SCENE_LAYER_FILE_MAX + 1];
	const char *why, *group;
	bool has_file;

	if (!layer)
		return 0;
	if ((why = scene_layer_syntax_error(layer)) != NULL) {
		/* Quoted as an id is: at most 64 characters, printable ASCII. */
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "layer", "layer '%s': %s",
			       ed_quoted(layer, q), why);
		return RIGD_E_BAD_FIELD;
	}
	/* Well formed: FILE fits, and '#' is there. The asset must be one the
	 * scene holds now (stored by this batch or an earlier one), with an
	 * element of that id. */
	group = strchr(layer, '#');
	snprintf(file, sizeof(file), "%.*s", (int)(group - layer), layer);
	group++;
	if (asset_set_has(scene_assets_c(s), file, group, &has_file))
		return 0;
	if (!has_file)
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "layer",
			       "layer '%s': the scene has no asset '%s'", ed_quoted(layer, q), file);
	else
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "layer",
			       "layer '%s': asset '%s' has no element with id '%s'",
			       ed_quoted(layer, q), file, group);
	return RIGD_E_BAD_FIELD;
}

int ed_check_draw(const scene *s, const edit_op *op, int k, edit_error *err)
{
	unsigned f = op->fields & EDIT_F_DRAW;

	if (!f)
		return 0;
	if (scene_dims(s) != 2) {
		const char *name = edit_field_name(f & -f);

		edit_error_set(err, RIGD_E_BAD_FIELD, k, name, "%s: only in a 2D scene", name);
		return RIGD_E_BAD_FIELD;
	}
	return (f & EDIT_F_LAYER) ? edit_layer_check(s, op->layer, k, err) : 0;
}

static int plane_error(edit_error *err, int k, const char *field, const char *why)
{
	edit_error_set(err, RIGD_E_BAD_FIELD, k, field, "%s: %s in a 2D scene", field, why);
	return RIGD_E_BAD_FIELD;
}

int ed_check_plane(const scene *s, const edit_op *op, int k, const node_props *p,
		   edit_error *err)
{
	unsigned f = op->fields;

	if (scene_dims(s) != 2) {
		if (f & EDIT_F_ANGLE) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "angle",
				       "angle: only nodes of a 2D scene have an angle (use r or euler)");
			return RIGD_E_BAD_FIELD;
		}
		/* A zero shear and the normal mode are every 3D node's, and a
		 * restore may carry them. */
		if ((f & EDIT_F_SHEAR) && (p->shear[0] != 0 || p->shear[1] != 0)) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "shear", "shear: only in a 2D scene");
			return RIGD_E_BAD_FIELD;
		}
		if ((f & EDIT_F_INHERIT) && p->inherit != INHERIT_NORMAL) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "inherit",
				       "inherit: only in a 2D scene");
			return RIGD_E_BAD_FIELD;
		}
		return 0;
	}
	if ((f & EDIT_F_T) && p->t.z != 0)
		return plane_error(err, k, "t", "z must be 0");
	if ((f & EDIT_F_PIVOT) && p->pivot.z != 0)
		return plane_error(err, k, "pivot", "z must be 0");
	if ((f & EDIT_F_S) && p->s.z != 1)
		return plane_error(err, k, "s", "z must be 1");
	/* A rotation about z alone has x = y = 0; the scene normalises without
	 * changing a zero component. */
	if ((f & (EDIT_F_R | EDIT_F_EULER)) && (p->r.x != 0 || p->r.y != 0))
		return plane_error(err, k, (f & EDIT_F_EULER) ? "euler" : "r",
				   "the rotation must be about z only");
	return 0;
}
