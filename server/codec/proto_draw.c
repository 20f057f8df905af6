/*
 * proto_draw.c: the members that say how a node of a 2D scene is drawn
 * (layer, z, facing) read from an op's JSON into its edit_op (see
 * docs/protocol.md, "Fields"). Reads the shape and types only: that a
 * layer is well formed, and that the scene is 2D, is the edit layer's
 * check (edit_layer_check, ed_check_draw), so that every path that sets
 * them (requests, undo, replay, log import) is held to the same rules.
 */
#include "proto_internal.h"

#include "core/err.h"

#include <string.h>

/* Bytes of a layer the decoder reads; the edit layer checks its syntax
 * (at most SCENE_LAYER_MAX) and says what is wrong with a longer one. */
#define LAYER_TEXT_MAX 1024

/* z: a number (both facings) or {"right": N, "left": N}. */
static int decode_z(const cJSON *item, edit_op *op, const proto_where *w)
{
	const cJSON *f[2] = { 0 }, *m;
	int rc;

	if (cJSON_IsNumber(item)) {
		if ((rc = proto_get_number(item, "z", &op->z_right, w)) != 0)
			return rc;
		op->z_left = op->z_right;
	} else if (cJSON_IsObject(item)) {
		/* Members checked here rather than by proto_members, so that
		 * every refusal names the field, z. */
		cJSON_ArrayForEach(m, item) {
			int j = strcmp(m->string, "right") == 0 ? 0 : strcmp(m->string, "left") == 0 ? 1 : -1;

			if (j < 0 || f[j])
				return proto_bad_field(w, "z", j < 0 ? "an object has only right and left"
									: "right or left given twice");
			f[j] = m;
		}
		if (!f[0] || !f[1])
			return proto_bad_field(w, "z", "an object needs both right and left");
		if ((rc = proto_get_number(f[0], "z", &op->z_right, w)) != 0 ||
		    (rc = proto_get_number(f[1], "z", &op->z_left, w)) != 0)
			return rc;
	} else {
		return proto_bad_field(w, "z", "must be a number or {\"right\": N, \"left\": N}");
	}
	op->fields |= EDIT_F_Z;
	return 0;
}

int proto_decode_draw(const cJSON *layer, const cJSON *z, const cJSON *facing, edit_op *op,
		      const proto_where *w)
{
	int rc;

	if (layer) {
		rc = proto_get_text(layer, "layer", LAYER_TEXT_MAX, true, &op->layer, w);
		if (rc != 0)
			return rc;
		op->fields |= EDIT_F_LAYER;
	}
	if (z && (rc = decode_z(z, op, w)) != 0)
		return rc;
	if (facing) {
		const cJSON *v = facing;

		if (cJSON_IsNull(v))
			op->facing = FACING_NONE;
		else if (cJSON_IsString(v) && strcmp(v->valuestring, "right") == 0)
			op->facing = FACING_RIGHT;
		else if (cJSON_IsString(v) && strcmp(v->valuestring, "left") == 0)
			op->facing = FACING_LEFT;
		else
			return proto_bad_field(w, "facing", "must be \"right\", \"left\" or null");
		op->fields |= EDIT_F_FACING;
	}
	return 0;
}

