/*
 * proto_shape2d.c: a 2D node's shear and inherit mode on the wire (see
 * docs/protocol.md, "Fields"): the members "shear" ([shx, shy], degrees)
 * and "inherit" (a name, or DragonBones' four flags as an object) read
 * into an edit_op, and the names the encoders write. Reads the shape and
 * types only: that the scene is 2D and the axes are not collinear is the
 * edit layer's check (ed_check_props, ed_check_plane), so that every path
 * that sets them (requests, undo, replay, log import) is held to the same
 * rules.
 */
#include "proto_internal.h"

#include "core/err.h"

#include <stdio.h>
#include <string.h>

/* Spine's names, by mode (INHERIT_NORMAL .. INHERIT_NO_SCALE_OR_REFLECTION). */
static const char *const inherit_names[] = {
	"normal", "onlyTranslation", "noRotationOrReflection", "noScale", "noScaleOrReflection",
};

/* DragonBones' flags, by DB_NO_ bit (1, 2, 4, 8 in that order). */
static const char *const flag_names[] = { "translation", "rotation", "scale", "reflection" };

#define INHERIT_WHAT                                                                        \
	"must be \"normal\", \"onlyTranslation\", \"noRotationOrReflection\", \"noScale\", " \
	"\"noScaleOrReflection\" or an object of translation, rotation, scale and reflection " \
	"(true or false)"

const char *proto_inherit_name(int mode)
{
	return mode >= INHERIT_NORMAL && mode <= INHERIT_NO_SCALE_OR_REFLECTION ? inherit_names[mode]
										 : NULL;
}

const char *proto_inherit_flag_name(int i)
{
	return i >= 0 && i < 4 ? flag_names[i] : "";
}

/* {"translation": bool, "rotation": bool, "scale": bool, "reflection":
 * bool}, each optional (true when absent): INHERIT_DB with a DB_NO_ bit
 * for each false, or INHERIT_NORMAL when all are true. */
static int decode_flags(const cJSON *item, int *mode, const proto_where *w)
{
	const cJSON *m;
	unsigned bits = 0, seen = 0;

	/* Members checked here rather than by proto_members, so that every
	 * refusal names the field, inherit. */
	cJSON_ArrayForEach(m, item) {
		int j = -1;

		for (int i = 0; i < 4; i++)
			if (strcmp(m->string, flag_names[i]) == 0)
				j = i;
		if (j < 0)
			return proto_bad_field(w, "inherit", "an object has only translation, rotation, "
							    "scale and reflection");
		if (seen & (1u << j))
			return proto_bad_field(w, "inherit", "a flag given twice");
		seen |= 1u << j;
		if (!cJSON_IsBool(m))
			return proto_bad_field(w, "inherit", "each flag must be true or false");
		if (cJSON_IsFalse(m))
			bits |= 1u << j;
	}
	*mode = bits ? (int)(INHERIT_DB | bits) : INHERIT_NORMAL;
	return 0;
}

int proto_decode_shape2d(const cJSON *shear, const cJSON *inherit, edit_op *op,
			 const proto_where *w)
{
	int rc;

	if (shear) {
		const cJSON *e;
		int i = 0;

		if (!cJSON_IsArray(shear) || cJSON_GetArraySize(shear) != 2)
			return proto_bad_field(w, "shear", "must be an array of 2 numbers (degrees)");
		cJSON_ArrayForEach(e, shear) {
			if (!cJSON_IsNumber(e))
				return proto_bad_field(w, "shear", "must be an array of 2 numbers (degrees)");
			if ((rc = proto_get_number(e, "shear", &op->shear_deg[i++], w)) != 0)
				return rc;
		}
		op->fields |= EDIT_F_SHEAR;
	}
	if (inherit) {
		int mode = -1;

		if (cJSON_IsString(inherit)) {
			for (int i = 0; i < 5; i++)
				if (strcmp(inherit->valuestring, inherit_names[i]) == 0)
					mode = i;
			if (mode < 0) {
				char q[72], what[400];

				snprintf(what, sizeof(what), "unknown mode '%s': " INHERIT_WHAT,
					 proto_safe_key(inherit->valuestring, q, sizeof(q)));
				return proto_bad_field(w, "inherit", what);
			}
		} else if (cJSON_IsObject(inherit)) {
			if ((rc = decode_flags(inherit, &mode, w)) != 0)
				return rc;
		} else {
			return proto_bad_field(w, "inherit", INHERIT_WHAT);
		}
		op->inherit = mode;
		op->fields |= EDIT_F_INHERIT;
	}
	return 0;
}
