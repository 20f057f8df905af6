/*
 * spine_batch.c: a decoded Spine 4.2 import (spine.h) to its batch of
 * creates and its report: one node per bone, one child node per slot.
 *
 * Reads the scene only for the ids it has; never changes it.
 */
#include "spine.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of 'len' bytes at 's' (NULL stays NULL), NUL-terminated. */
static int dup_bytes(const char *s, size_t len, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	if (!(*out = malloc(len + 1)))
		return RIGD_E_NOMEM;
	memcpy(*out, s, len);
	(*out)[len] = '\0';
	return 0;
}

/* Bone 'b' as a create: parent, name, and each transform field away from
 * its default. Spine is y-up and rigd 2D y-down: t = (x, -y); an angle,
 * a shear and a scale read the same in both (docs/spine.md). */
static int bone_op(const spine_import *in, const spine_bone *b, edit_op *op)
{
	int rc;

	if (b->parent >= 0 && (rc = edit_op_set_parent(op, in->bones[b->parent].id)) != 0)
		return rc;
	if ((rc = edit_op_set_name(op, b->name)) != 0)
		return rc;
	if (b->x != 0 || b->y != 0) {
		op->fields |= EDIT_F_T;
		op->t = (vec3){ b->x, b->y != 0 ? -b->y : 0, 0 };
	}
	if (b->rotation_deg != 0) {
		op->fields |= EDIT_F_ANGLE;
		op->angle_deg = b->rotation_deg;
	}
	if (b->scale[0] != 1 || b->scale[1] != 1) {
		op->fields |= EDIT_F_S;
		op->s = (vec3){ b->scale[0], b->scale[1], 1 };
	}
	if (b->shear_deg[0] != 0 || b->shear_deg[1] != 0) {
		op->fields |= EDIT_F_SHEAR;
		op->shear_deg[0] = b->shear_deg[0];
		op->shear_deg[1] = b->shear_deg[1];
	}
	if (b->inherit != INHERIT_NORMAL) {
		op->fields |= EDIT_F_INHERIT;
		op->inherit = b->inherit;
	}
	return 0;
}

/* Slot 'k' as a create under its bone: name "slot:NAME", z = k, and the
 * layer of its setup attachment. */
static int slot_op(const spine_import *in, int k, edit_op *op)
{
	const spine_slot *s = &in->slots[k];
	char name[SCENE_NAME_MAX + 6], layer[SCENE_LAYER_MAX + SKEL_FILE_MAX];  /* fit by decode */
	int rc;

	snprintf(name, sizeof(name), "slot:%s", s->name);
	if ((rc = edit_op_set_parent(op, in->bones[s->bone].id)) != 0 ||
	    (rc = edit_op_set_name(op, name)) != 0)
		return rc;
	op->fields |= EDIT_F_Z;
	op->z_right = op->z_left = k;
	if (!s->group[0])
		return 0;
	snprintf(layer, sizeof(layer), "%s#%s", in->file, s->group);
	return edit_op_set_layer(op, layer);
}

/* Whether the scene has node 'id' already (then duplicate_id, naming the
 * element). */
static int check_free(const scene *existing, const char *id, const char *field, const char *what,
		      const char *name, edit_error *err)
{
	char q[80];
	size_t i;

	if (!existing || scene_find(existing, id) < 0)
		return 0;
	for (i = 0; name[i] && i < sizeof(q) - 4; i++)
		q[i] = ((unsigned char)name[i] >= 0x20 && (unsigned char)name[i] < 0x7f &&
			name[i] != '\'') ? name[i] : '?';
	q[i] = '\0';
	edit_error_set(err, RIGD_E_DUPLICATE_ID, -1, field,
		       "%s '%s': the scene already has a node with id '%s'", what, q, id);
	return RIGD_E_DUPLICATE_ID;
}

static int fill_report(const spine_import *in, skel_import_report *rep)
{
	snprintf(rep->file, sizeof(rep->file), "%s", in->file);
	rep->bones = in->n_bones;
	rep->slots = in->n_slots;
	rep->skins = in->n_skins;
	rep->clips = in->n_clips;
	rep->n_ids = in->n_groups;
	rep->n_kept = in->n_kept;
	rep->n_not_applied = in->n_not_applied;
	rep->asset_len = in->skeleton_len;
	rep->ids_len = in->groups_len;
	rep->kept_len = in->kept_len;
	rep->not_applied_len = in->not_applied_len;
	if (dup_bytes(in->skeleton, in->skeleton_len, &rep->asset) ||
	    dup_bytes(in->groups, in->groups_len, &rep->ids) ||
	    dup_bytes(in->kept, in->kept_len, &rep->kept) ||
	    dup_bytes(in->not_applied, in->not_applied_len, &rep->not_applied))
		return RIGD_E_NOMEM;
	return 0;
}

int spine_import_batch(const spine_import *in, const scene *existing, edit_batch *out,
		       skel_import_report *rep, edit_error *err)
{
	char field[EDIT_FIELD_MAX];
	int rc = 0;

	edit_batch_init(out);
	*rep = (skel_import_report){ 0 };
	edit_error_clear(err);
	if (existing && scene_dims(existing) != 2) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, "skeleton",
			       "skeleton: a skeleton goes into a 2D scene; this scene is 3D");
		return RIGD_E_BAD_SKELETON;
	}
	for (int k = 0; k < in->n_bones; k++) {
		snprintf(field, sizeof(field), "skeleton.bones[%d].name", k);
		if ((rc = check_free(existing, in->bones[k].id, field, "bone", in->bones[k].name,
				     err)) != 0)
			return rc;
	}
	for (int k = 0; k < in->n_slots; k++) {
		snprintf(field, sizeof(field), "skeleton.slots[%d].name", k);
		if ((rc = check_free(existing, in->slots[k].id, field, "slot", in->slots[k].name,
				     err)) != 0)
			return rc;
	}
	if (edit_batch_reserve(out, in->n_bones + in->n_slots)) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	for (int k = 0; k < in->n_bones && !rc; k++) {
		edit_op *op = edit_batch_add(out, EDIT_CREATE, in->bones[k].id);
		assert(op); /* reserved */
		rc = bone_op(in, &in->bones[k], op);
	}
	for (int k = 0; k < in->n_slots && !rc; k++) {
		edit_op *op = edit_batch_add(out, EDIT_CREATE, in->slots[k].id);
		assert(op);
		rc = slot_op(in, k, op);
	}
	if (!rc)
		rc = fill_report(in, rep);
out:
	if (rc) {
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		edit_batch_release(out);
		skel_import_report_release(rep);
	}
	return rc;
}
