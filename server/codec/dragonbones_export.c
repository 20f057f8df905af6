/*
 * dragonbones_export.c: the stored DragonBones file rewritten from a scene
 * (see dragonbones_export.h), on the cJSON tree of the file, printed back
 * with spine_export.c's writer so that what it does not rewrite passes
 * through unchanged. Never changes the scene.
 */
#include "dragonbones_export.h"

#include "core/err.h"
#include "core/math.h"
#include "skel_names.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num_or(const cJSON *o, const char *key, double def)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(m) ? m->valuedouble : def;
}

/* As spine_export.c's put_number: rewritten when present, added when
 * absent and not 'def'. */
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

/* An inherit flag: rewritten when present, added only when false. */
static int put_flag(cJSON *o, const char *key, bool v)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!m && v)
		return 0;
	cJSON *n = cJSON_CreateBool(v);
	if (!n)
		return RIGD_E_NOMEM;
	if (m)
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, n) ? 0 : RIGD_E_NOMEM;
	return cJSON_AddItemToObject(o, key, n) ? 0 : (cJSON_Delete(n), RIGD_E_NOMEM);
}

static const char *name_of(const cJSON *o)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");

	return cJSON_IsString(n) ? n->valuestring : NULL;
}

/* The node of 'prefix' + the encoded 'name', or -1; 'enc' gets the
 * encoded name. */
static int node_of(const scene *s, const char *prefix, const char *name, char *enc,
		   size_t enc_size)
{
	char id[SCENE_ID_MAX + 1];

	if (!name || skel_id_encode(name, strlen(name), enc, enc_size) < 0 ||
	    strlen(prefix) + strlen(enc) > SCENE_ID_MAX)
		return -1;
	size_t pn = strlen(prefix), en = strlen(enc);

	memcpy(id, prefix, pn);
	memcpy(id + pn, enc, en + 1);
	return scene_find(s, id);
}

/* One bone from its node. */
static int export_bone(cJSON *bone, int a, int i, const node_props *p, edit_error *err)
{
	const char *name = name_of(bone);
	cJSON *tr = cJSON_GetObjectItemCaseSensitive(bone, "transform"), *made = NULL;
	char field[64];
	int rc, inh = p->inherit;

	snprintf(field, sizeof(field), "armature[%d].bone[%d]", a, i);
	if (p->shear[0] != 0) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "bone '%s': shear[0] %.17g (its x axis turned apart from its "
			       "rotation) cannot be expressed in DragonBones", name, p->shear[0]);
		return RIGD_E_BAD_SKELETON;
	}
	if (inh != INHERIT_NORMAL && !(inh & INHERIT_DB)) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "bone '%s': inherit %d is a Spine mode, which DragonBones cannot "
			       "express", name, inh);
		return RIGD_E_BAD_SKELETON;
	}
	if (!cJSON_IsObject(tr)) {
		if (tr)
			cJSON_DeleteItemFromObjectCaseSensitive(bone, "transform");
		if (!(tr = made = cJSON_CreateObject()))
			return RIGD_E_NOMEM;
	}
	double sky = skel_export_angle_near(-quat_to_angle2d_deg(p->r), num_or(tr, "skY", 0));
	double skx = skel_export_angle_near(sky - p->shear[1], num_or(tr, "skX", 0));
	rc = put_number(tr, "x", p->t.x, 0);
	rc = rc ? rc : put_number(tr, "y", p->t.y, 0);
	rc = rc ? rc : put_number(tr, "skX", skx, 0);
	rc = rc ? rc : put_number(tr, "skY", sky, 0);
	rc = rc ? rc : put_number(tr, "scX", p->s.x, 1);
	rc = rc ? rc : put_number(tr, "scY", p->s.y, 1);
	if (!rc && made) {
		if (made->child) {
			if (!cJSON_AddItemToObject(bone, "transform", made))
				rc = RIGD_E_NOMEM;
			else
				made = NULL;
		}
	}
	cJSON_Delete(made);
	bool db = inh & INHERIT_DB;
	rc = rc ? rc : put_flag(bone, "inheritTranslation", !(db && (inh & DB_NO_TRANSLATION)));
	rc = rc ? rc : put_flag(bone, "inheritRotation", !(db && (inh & DB_NO_ROTATION)));
	rc = rc ? rc : put_flag(bone, "inheritScale", !(db && (inh & DB_NO_SCALE)));
	rc = rc ? rc : put_flag(bone, "inheritReflection", !(db && (inh & DB_NO_REFLECTION)));
	if (rc)
		edit_error_set(err, rc, -1, field, "bone '%s': %s", name, err_str(rc));
	return rc;
}

/* The default skin's display list of slot 'name' (NULL when none): the
 * skin named "" or "default", else the first, as the import chooses. */
static const cJSON *displays_of(const cJSON *arm, const char *name)
{
	const cJSON *skins = cJSON_GetObjectItemCaseSensitive(arm, "skin"), *skin = NULL;

	if (!cJSON_IsArray(skins) || !skins->child)
		return NULL;
	for (const cJSON *k = skins->child; k && !skin; k = k->next) {
		const char *n = name_of(k);
		if (!n || !*n || !strcmp(n, "default"))
			skin = k;
	}
	if (!skin)
		skin = skins->child;
	const cJSON *slots = cJSON_GetObjectItemCaseSensitive(skin, "slot");
	for (const cJSON *c = cJSON_IsArray(slots) ? slots->child : NULL; c; c = c->next) {
		const char *n = name_of(c);
		if (n && !strcmp(n, name)) {
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "display");
			return cJSON_IsArray(d) ? d : NULL;
		}
	}
	return NULL;
}

/* One slot's displayIndex from its node's layer. */
static int export_slot(const cJSON *arm, cJSON *slot, int a, int i, const char *file,
		       const char *enc, const node_props *p, edit_error *err)
{
	const char *name = name_of(slot);
	const cJSON *displays = displays_of(arm, name);
	int n_displays = displays ? cJSON_GetArraySize(displays) : 0;
	char disp[SCENE_LAYER_GROUP_MAX + 1], field[64];
	int n = skel_export_layer_name(p->layer, file, enc, disp, sizeof(disp));
	double index = -1, now = num_or(slot, "displayIndex", 0);
	int rc;

	snprintf(field, sizeof(field), "armature[%d].slot[%d].displayIndex", a, i);
	if (n > 0) {
		int k = 0;
		for (const cJSON *d = displays ? displays->child : NULL; d; d = d->next, k++) {
			const char *dn = name_of(d);
			if (dn && !strcmp(dn, disp))
				break;
		}
		if (k == n_displays)
			n = -1;
		index = k;
	} else if (n == 0 && (now < 0 || now >= n_displays)) {
		index = now;  /* it shows nothing already */
	}
	if (n < 0) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "slot '%s': layer '%s' is not a display of this slot in the default "
			       "skin of '%s'", name, p->layer, file);
		return RIGD_E_BAD_SKELETON;
	}
	if ((rc = put_number(slot, "displayIndex", index, 0)) != 0)
		edit_error_set(err, rc, -1, field, "slot '%s': %s", name, err_str(rc));
	return rc;
}

/* The armature to rewrite, or NULL with the refusal in 'err'. */
static cJSON *pick_armature(cJSON *root, const char *file, const char *want, const scene *s,
			    int *index, edit_error *err)
{
	cJSON *arms = cJSON_GetObjectItemCaseSensitive(root, "armature");
	char enc[SCENE_ID_MAX + 1];
	int i = 0;

	*index = -1;
	for (cJSON *a = cJSON_IsArray(arms) ? arms->child : NULL; a; a = a->next, i++) {
		const char *n = name_of(a);
		if (want) {
			if (n && !strcmp(n, want)) {
				*index = i;
				return a;
			}
			continue;
		}
		const cJSON *bones = cJSON_GetObjectItemCaseSensitive(a, "bone");
		for (const cJSON *b = cJSON_IsArray(bones) ? bones->child : NULL; b; b = b->next)
			if (node_of(s, "", name_of(b), enc, sizeof(enc)) >= 0) {
				*index = i;
				return a;
			}
	}
	if (!want && cJSON_IsArray(arms) && cJSON_IsObject(arms->child)) {
		*index = 0;
		return arms->child;
	}
	if (want)
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, "armature",
			       "'%s' has no armature named '%s'", file, want);
	else
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, "armature",
			       "the stored file has no armature");
	return NULL;
}

int dragonbones_export(const char *json, size_t len, const char *file, const char *armature,
		       const scene *s, json_buf *out, skel_export_info *info, edit_error *err)
{
	cJSON *root = cJSON_ParseWithLength(json, len), *arm;
	skel_export_info inf = { 0 };
	skel_slot_key *keys = NULL;
	size_t start = out->len;
	char enc[SCENE_ID_MAX + 1];
	node_props p;
	int rc = 0, i = 0, a, n_slots = 0;

	edit_error_clear(err);
	if (!cJSON_IsObject(root)) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, "", "the stored file '%s' is not a "
			       "JSON object", file);
		rc = RIGD_E_BAD_SKELETON;
		goto out;
	}
	if (!(arm = pick_armature(root, file, armature, s, &a, err))) {
		rc = RIGD_E_BAD_SKELETON;
		goto out;
	}
	cJSON *bones = cJSON_GetObjectItemCaseSensitive(arm, "bone");
	cJSON *slots = cJSON_GetObjectItemCaseSensitive(arm, "slot");
	for (cJSON *b = cJSON_IsArray(bones) ? bones->child : NULL; b; b = b->next, i++) {
		int node = node_of(s, "", name_of(b), enc, sizeof(enc));
		if (node < 0) {
			inf.kept++;
			continue;
		}
		scene_props(s, node, &p);
		if ((rc = export_bone(b, a, i, &p, err)) != 0)
			goto out;
		inf.bones++;
	}
	if (!cJSON_IsArray(slots))
		slots = NULL;
	n_slots = slots ? cJSON_GetArraySize(slots) : 0;
	if (n_slots && !(keys = calloc((size_t)n_slots, sizeof(*keys)))) {
		rc = RIGD_E_NOMEM;
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	i = 0;
	for (cJSON *c = slots ? slots->child : NULL; c; c = c->next, i++) {
		int node = node_of(s, "slot:", name_of(c), enc, sizeof(enc));
		keys[i] = (skel_slot_key){ c, i, i };
		if (node < 0) {
			inf.kept++;
			continue;
		}
		scene_props(s, node, &p);
		keys[i].z = p.z_right;
		if ((rc = export_slot(arm, c, a, i, file, enc, &p, err)) != 0)
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
