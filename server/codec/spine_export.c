/*
 * spine_export.c: the stored Spine file rewritten from a scene (see
 * spine_export.h), and the tree printer and layer reader the DragonBones
 * export shares.
 *
 * Works on the cJSON tree of the stored file: the members it does not
 * rewrite are printed back as they were parsed (same order, same values),
 * so skins, constraints, events, animations and unknown members pass
 * through. Never changes the scene.
 */
#include "spine_export.h"

#include "core/err.h"
#include "core/math.h"
#include "skel_names.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const inherit_names[] = {
	[INHERIT_NORMAL] = "normal",
	[INHERIT_ONLY_TRANSLATION] = "onlyTranslation",
	[INHERIT_NO_ROTATION_OR_REFLECTION] = "noRotationOrReflection",
	[INHERIT_NO_SCALE] = "noScale",
	[INHERIT_NO_SCALE_OR_REFLECTION] = "noScaleOrReflection",
};

int skel_export_write(json_buf *out, const cJSON *v)
{
	int rc = 0;

	if (cJSON_IsNull(v))
		return JSON_BUF_LIT(out, "null");
	if (cJSON_IsTrue(v))
		return JSON_BUF_LIT(out, "true");
	if (cJSON_IsFalse(v))
		return JSON_BUF_LIT(out, "false");
	if (cJSON_IsNumber(v))
		return json_buf_number(out, v->valuedouble);
	if (cJSON_IsString(v))
		return json_buf_string(out, v->valuestring, 0);
	if (cJSON_IsRaw(v))
		return json_buf_puts(out, v->valuestring);
	bool obj = cJSON_IsObject(v);
	rc = obj ? JSON_BUF_LIT(out, "{") : JSON_BUF_LIT(out, "[");
	/* The depth is bounded by cJSON's own nesting limit on parsing. */
	for (const cJSON *c = v->child; !rc && c; c = c->next) {
		if (c != v->child)
			rc = JSON_BUF_LIT(out, ",");
		if (!rc && obj)
			rc = json_buf_string(out, c->string, 0) || JSON_BUF_LIT(out, ":");
		if (!rc)
			rc = skel_export_write(out, c);
	}
	if (rc)
		return rc == RIGD_E_NOT_FINITE ? rc : RIGD_E_NOMEM;
	return obj ? JSON_BUF_LIT(out, "}") : JSON_BUF_LIT(out, "]");
}

int skel_export_layer_name(const char *layer, const char *file, const char *slot_enc,
			   char *name, size_t size)
{
	size_t fl = strlen(file), sl = strlen(slot_enc);

	if (!layer || !*layer)
		return 0;
	if (strncmp(layer, file, fl) != 0 || layer[fl] != '#' ||
	    strncmp(layer + fl + 1, slot_enc, sl) != 0 || layer[fl + 1 + sl] != '.')
		return -1;
	int n = skel_id_decode(layer + fl + 1 + sl + 1, name, size);
	/* A name holding a NUL cannot be a JSON string of cJSON's. */
	return n > 0 && strlen(name) == (size_t)n ? n : -1;
}

double skel_export_angle_near(double v, double ref)
{
	double k = round((ref - v) / 360.0);

	if (k != 0)
		v += 360.0 * k;
	return fabs(v - ref) <= SKEL_EXPORT_ANGLE_EPS_DEG ? ref : v;
}

/* The number member 'key' of 'o' set to 'v': rewritten when the file has
 * it, added when it lacks it and 'v' is not 'def'. 0, not_finite, nomem. */
static int put_number(cJSON *o, const char *key, double v, double def)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!isfinite(v))
		return RIGD_E_NOT_FINITE;
	if (cJSON_IsNumber(m)) {
		cJSON_SetNumberValue(m, v);
		return 0;
	}
	if (!m && v == def)
		return 0;
	cJSON *n = cJSON_CreateNumber(v);
	if (!n)
		return RIGD_E_NOMEM;
	if (m)
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, n) ? 0 : RIGD_E_NOMEM;
	return cJSON_AddItemToObject(o, key, n) ? 0 : (cJSON_Delete(n), RIGD_E_NOMEM);
}

/* The string member 'key' of 'o' set to 'v', as put_number does; a NULL
 * 'v' removes it. */
static int put_string(cJSON *o, const char *key, const char *v, const char *def)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
		return 0;
	}
	if (!m && def && !strcmp(v, def))
		return 0;
	if (cJSON_IsString(m) && !strcmp(m->valuestring, v))
		return 0;
	cJSON *n = cJSON_CreateString(v);
	if (!n)
		return RIGD_E_NOMEM;
	if (m)
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, n) ? 0 : RIGD_E_NOMEM;
	return cJSON_AddItemToObject(o, key, n) ? 0 : (cJSON_Delete(n), RIGD_E_NOMEM);
}

static double num_or(const cJSON *o, const char *key, double def)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(m) ? m->valuedouble : def;
}

/* One bone of the file from its node: 0, or the error in 'err'. */
static int export_bone(cJSON *bone, int i, const node_props *p, edit_error *err)
{
	const char *name = cJSON_GetObjectItemCaseSensitive(bone, "name")->valuestring;
	double a = skel_export_angle_near(quat_to_angle2d_deg(p->r), num_or(bone, "rotation", 0));
	char field[48];
	int rc;

	if (p->inherit < INHERIT_NORMAL || p->inherit > INHERIT_NO_SCALE_OR_REFLECTION) {
		snprintf(field, sizeof(field), "bones[%d].inherit", i);
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "bone '%s': its node inherits as DragonBones does (inherit %d), "
			       "which Spine cannot express", name, p->inherit);
		return RIGD_E_BAD_SKELETON;
	}
	rc = put_number(bone, "x", p->t.x, 0);
	rc = rc ? rc : put_number(bone, "y", -p->t.y, 0);
	rc = rc ? rc : put_number(bone, "rotation", a, 0);
	rc = rc ? rc : put_number(bone, "scaleX", p->s.x, 1);
	rc = rc ? rc : put_number(bone, "scaleY", p->s.y, 1);
	rc = rc ? rc : put_number(bone, "shearX", p->shear[0], 0);
	rc = rc ? rc : put_number(bone, "shearY", p->shear[1], 0);
	rc = rc ? rc : put_string(bone, "inherit", inherit_names[p->inherit], "normal");
	if (rc) {
		snprintf(field, sizeof(field), "bones[%d]", i);
		edit_error_set(err, rc, -1, field, "bone '%s': %s", name, err_str(rc));
	}
	return rc;
}

static int by_z(const void *a, const void *b)
{
	const skel_slot_key *x = a, *y = b;

	if (x->z != y->z)
		return x->z < y->z ? -1 : 1;
	return x->index - y->index;
}

void skel_export_reorder(cJSON *slots, skel_slot_key *keys, int n)
{
	if (!n)
		return;
	qsort(keys, (size_t)n, sizeof(*keys), by_z);
	while (slots->child)
		cJSON_DetachItemViaPointer(slots, slots->child);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(slots, keys[i].slot);
}

/* Whether the skin named "default" of 'root' has attachment 'att' for
 * slot 'slot': the only skin Spine's setup pose (and the import) reads. */
static bool in_default_skin(const cJSON *root, const char *slot, const char *att)
{
	const cJSON *skins = cJSON_GetObjectItemCaseSensitive(root, "skins"), *k;

	cJSON_ArrayForEach(k, skins) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(k, "name");
		if (!cJSON_IsString(n) || strcmp(n->valuestring, "default"))
			continue;
		const cJSON *atts = cJSON_GetObjectItemCaseSensitive(k, "attachments");
		return cJSON_GetObjectItemCaseSensitive(
			       cJSON_GetObjectItemCaseSensitive(atts, slot), att) != NULL;
	}
	return false;
}

/* One slot's setup attachment from its node's layer. */
static int export_slot(const cJSON *root, cJSON *slot, int i, const char *file,
		       const char *enc, const node_props *p, edit_error *err)
{
	const char *name = cJSON_GetObjectItemCaseSensitive(slot, "name")->valuestring;
	char att[SCENE_LAYER_GROUP_MAX + 1], field[48];
	int n = skel_export_layer_name(p->layer, file, enc, att, sizeof(att));
	int rc;

	snprintf(field, sizeof(field), "slots[%d].attachment", i);
	if (n < 0) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "slot '%s': layer '%s' is not an attachment of this slot in '%s'",
			       name, p->layer, file);
		return RIGD_E_BAD_SKELETON;
	}
	if (n && !in_default_skin(root, name, att)) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "slot '%s': attachment '%s' is not in the default skin, the only "
			       "one a setup pose shows", name, att);
		return RIGD_E_BAD_SKELETON;
	}
	if ((rc = put_string(slot, "attachment", n ? att : NULL, NULL)) != 0)
		edit_error_set(err, rc, -1, field, "slot '%s': %s", name, err_str(rc));
	return rc;
}

/* Checks that 'arr' (member 'key' of the root) is an array of objects with
 * a string "name" each; refuses in 'err' otherwise. */
static int check_named(const cJSON *arr, const char *key, edit_error *err)
{
	int i = 0;

	if (!cJSON_IsArray(arr)) {
		if (!arr)
			return 0;
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, key, "%s is not an array", key);
		return RIGD_E_BAD_SKELETON;
	}
	for (const cJSON *c = arr->child; c; c = c->next, i++)
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(c, "name"))) {
			char field[48];
			snprintf(field, sizeof(field), "%s[%d].name", key, i);
			edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field, "%s[%d] has no name", key, i);
			return RIGD_E_BAD_SKELETON;
		}
	return 0;
}

/* The node of a bone or slot 'name' ('prefix' + its encoded name), or -1;
 * 'enc' gets the encoded name. */
static int node_of(const scene *s, const char *prefix, const char *name, char *enc,
		   size_t enc_size)
{
	char id[SCENE_ID_MAX + 1];
	size_t pl = strlen(prefix);

	if (skel_id_encode(name, strlen(name), enc, enc_size) < 0 ||
	    pl + strlen(enc) > SCENE_ID_MAX)
		return -1;
	size_t pn = strlen(prefix), en = strlen(enc);

	memcpy(id, prefix, pn);
	memcpy(id + pn, enc, en + 1);
	return scene_find(s, id);
}

int spine_export(const char *json, size_t len, const char *file, const scene *s,
		 json_buf *out, skel_export_info *info, edit_error *err)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	skel_export_info inf = { 0 };
	skel_slot_key *keys = NULL;
	size_t start = out->len;
	char enc[SCENE_ID_MAX + 1];
	node_props p;
	int rc = 0, i = 0, n_slots;

	edit_error_clear(err);
	if (!cJSON_IsObject(root)) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, "", "the stored file '%s' is not a "
			       "JSON object", file);
		rc = RIGD_E_BAD_SKELETON;
		goto out;
	}
	cJSON *bones = cJSON_GetObjectItemCaseSensitive(root, "bones");
	cJSON *slots = cJSON_GetObjectItemCaseSensitive(root, "slots");
	if ((rc = check_named(bones, "bones", err)) || (rc = check_named(slots, "slots", err)))
		goto out;
	for (cJSON *b = bones ? bones->child : NULL; b; b = b->next, i++) {
		int node = node_of(s, "", cJSON_GetObjectItemCaseSensitive(b, "name")->valuestring,
				   enc, sizeof(enc));
		if (node < 0) {
			inf.kept++;
			continue;
		}
		scene_props(s, node, &p);
		if ((rc = export_bone(b, i, &p, err)) != 0)
			goto out;
		inf.bones++;
	}
	n_slots = slots ? cJSON_GetArraySize(slots) : 0;
	if (n_slots && !(keys = calloc((size_t)n_slots, sizeof(*keys)))) {
		rc = RIGD_E_NOMEM;
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	i = 0;
	for (cJSON *c = slots ? slots->child : NULL; c; c = c->next, i++) {
		int node = node_of(s, "slot:", cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring,
				   enc, sizeof(enc));
		/* A slot without a node keeps its place: its import z was its
		 * index. */
		keys[i] = (skel_slot_key){ c, i, i };
		if (node < 0) {
			inf.kept++;
			continue;
		}
		scene_props(s, node, &p);
		keys[i].z = p.z_right;
		if ((rc = export_slot(root, c, i, file, enc, &p, err)) != 0)
			goto out;
		inf.slots++;
	}
	skel_export_reorder(slots, keys, n_slots);
	if ((rc = skel_export_write(out, root)) != 0) {
		json_buf_truncate(out, start);
		edit_error_set(err, rc, -1, "", "cannot write '%s': %s", file, err_str(rc));
	}
out:
	if (!rc && info)
		*info = inf;
	free(keys);
	cJSON_Delete(root);
	return rc;
}
