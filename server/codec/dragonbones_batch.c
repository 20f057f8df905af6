/*
 * dragonbones_batch.c: a decoded DragonBones import to its batch of creates
 * and its report (dragonbones.h): the bones in the file's order, then the
 * slots in draw order, each a child of its bone.
 *
 * Reads the scene only for the ids it has; never changes it.
 */
#include "dragonbones_internal.h"
#include "skel_names.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of 'len' bytes at 'p' with a NUL after them, or NULL
 * (also for p NULL). */
static char *copy(const char *p, size_t len, bool *failed)
{
	char *c;

	if (!p)
		return NULL;
	if (!(c = malloc(len + 1))) {
		*failed = true;
		return NULL;
	}
	memcpy(c, p, len);
	c[len] = '\0';
	return c;
}

static int fill_report(const dragonbones_import *in, skel_import_report *rep)
{
	bool failed = false;

	snprintf(rep->file, sizeof(rep->file), "%s", in->file);
	rep->asset = copy(in->skeleton, in->skeleton_len, &failed);
	rep->asset_len = in->skeleton_len;
	rep->ids = copy(in->ids, in->ids_len, &failed);
	rep->ids_len = in->ids_len;
	rep->n_ids = in->n_ids;
	rep->bones = in->n_bones;
	rep->slots = in->n_slots;
	rep->skins = in->n_skins;
	rep->clips = in->n_clips;
	rep->kept = copy(in->kept, in->kept_len, &failed);
	rep->kept_len = in->kept_len;
	rep->n_kept = in->n_kept;
	rep->not_applied = copy(in->not_applied, in->not_applied_len, &failed);
	rep->not_applied_len = in->not_applied_len;
	rep->n_not_applied = in->n_not_applied;
	return failed ? RIGD_E_NOMEM : 0;
}

/* The create op of bone 'b'. */
static int bone_op(const dragonbones_import *in, const dragonbones_bone *b, edit_op *op)
{
	int rc;

	if (b->parent >= 0 && (rc = edit_op_set_parent(op, in->bones[b->parent].id)) != 0)
		return rc;
	if ((rc = edit_op_set_name(op, b->name)) != 0)
		return rc;
	/* y-down both: DragonBones' matrix is a = cos(skY) scX, b = sin(skY)
	 * scX, c = -sin(skX) scY, d = cos(skX) scY, which is rigd's local
	 * 2x2 for the screen angle -skY and the shear [0, skY - skX]. */
	op->fields |= EDIT_F_T;
	op->t = (vec3){ b->x, b->y, 0 };
	if (b->sky_deg != 0) {
		op->fields |= EDIT_F_ANGLE;
		op->angle_deg = -b->sky_deg;
	}
	if (b->scx != 1 || b->scy != 1) {
		op->fields |= EDIT_F_S;
		op->s = (vec3){ b->scx, b->scy, 1 };
	}
	if (b->sky_deg != b->skx_deg) {
		op->fields |= EDIT_F_SHEAR;
		op->shear_deg[0] = 0;
		op->shear_deg[1] = b->sky_deg - b->skx_deg;
	}
	if (b->inherit != INHERIT_NORMAL) {
		op->fields |= EDIT_F_INHERIT;
		op->inherit = b->inherit;
	}
	return 0;
}

/* The create op of slot 'k'. */
static int slot_op(const dragonbones_import *in, int k, edit_op *op)
{
	const dragonbones_slot *s = &in->slots[k];
	char name[SCENE_NAME_MAX + 1], layer[SCENE_LAYER_MAX + 1];
	int rc;

	snprintf(name, sizeof(name), "%s%s", DRAGONBONES_SLOT_PREFIX, s->name);
	if ((rc = edit_op_set_parent(op, in->bones[s->bone].id)) != 0 ||
	    (rc = edit_op_set_name(op, name)) != 0)
		return rc;
	op->fields |= EDIT_F_Z;
	op->z_right = op->z_left = k;
	if (s->group[0]) {
		snprintf(layer, sizeof(layer), "%s#%s", in->file, s->group);
		if ((rc = edit_op_set_layer(op, layer)) != 0)
			return rc;
	}
	return 0;
}

int dragonbones_import_batch(const dragonbones_import *in, const scene *existing,
			     edit_batch *out, skel_import_report *rep, edit_error *err)
{
	int rc = 0;

	edit_batch_init(out);
	edit_error_clear(err);
	memset(rep, 0, sizeof(*rep));
	for (int i = 0; existing && i < in->n_bones + in->n_slots; i++) {
		bool bone = i < in->n_bones;
		const char *id = bone ? in->bones[i].id : in->slots[i - in->n_bones].id;
		char b[80], field[EDIT_FIELD_MAX];
		if (scene_find(existing, id) < 0)
			continue;
		snprintf(field, sizeof(field), "skeleton.armature[%d].%s[%d]", in->armature_index,
			 bone ? "bone" : "slot", bone ? i : i - in->n_bones);
		return db_fail(err, RIGD_E_DUPLICATE_ID, field, "%s '%s': the scene already has node '%s'",
			       bone ? "bone" : "slot",
			       q(bone ? in->bones[i].name : in->slots[i - in->n_bones].name, b, sizeof(b)),
			       id);
	}
	if (edit_batch_reserve(out, in->n_bones + in->n_slots))
		return db_nomem(err);
	for (int i = 0; i < in->n_bones && !rc; i++) {
		edit_op *op = edit_batch_add(out, EDIT_CREATE, in->bones[i].id);
		assert(op); /* reserved */
		rc = bone_op(in, &in->bones[i], op);
	}
	for (int k = 0; k < in->n_slots && !rc; k++) {
		edit_op *op = edit_batch_add(out, EDIT_CREATE, in->slots[k].id);
		assert(op);
		rc = slot_op(in, k, op);
	}
	if (!rc)
		rc = fill_report(in, rep);
	if (rc) {
		edit_batch_release(out);
		skel_import_report_release(rep);
		db_fail(err, rc, "", "%s", err_str(rc));
	}
	return rc;
}
