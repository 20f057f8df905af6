/*
 * spine.c: the body of a Spine 4.2 skeleton import in, its batch of
 * creates and its report out (spine.h): the body's members, the version,
 * the bones, the slots, the skins. The sections kept without being
 * applied (constraints, events, animations) are read in spine_kept.c.
 *
 * Reads untrusted JSON: every refusal names the element and its JSON path
 * from the body. Never changes a scene, never parses the atlas or the
 * images.
 */
#include "spine_internal.h"
#include "proto.h"
#include "proto_internal.h"
#include "skel_names.h"
#include "svg.h"

#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The values of a bone's "inherit", in enum node_inherit's order. */
static const char *const INHERIT_NAMES[] = {
	"normal", "onlyTranslation", "noRotationOrReflection", "noScale", "noScaleOrReflection",
};

#define FIELD_MAX EDIT_FIELD_MAX
#define PATH_LEN 40   /* bytes of an element's path, "skeleton.transform[999]" */

/* ---------- shared helpers (spine_internal.h) ---------- */

int spine_fail(spine_reader *r, int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	edit_error_vset(r->err, code, -1, field, fmt, ap);
	va_end(ap);
	return code;
}

int spine_nomem(spine_reader *r)
{
	return spine_fail(r, RIGD_E_NOMEM, "", "%s", err_str(RIGD_E_NOMEM));
}

int spine_lines_add(spine_reader *r, spine_lines *l, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	size_t n;

	if (l->n >= SPINE_KEPT_LINES_MAX) {
		l->dropped++;
		return 0;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	if (l->len + n + 2 > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		char *s;

		while (cap < l->len + n + 2)
			cap *= 2;
		if (!(s = realloc(l->s, cap)))
			return spine_nomem(r);
		l->s = s;
		l->cap = cap;
	}
	memcpy(l->s + l->len, line, n);
	l->len += n;
	l->s[l->len++] = '\n';
	l->s[l->len] = '\0';
	l->n++;
	return 0;
}

const char *spine_quote(const char *name, char out[SPINE_QUOTE_MAX])
{
	return proto_safe_key(name, out, SPINE_QUOTE_MAX);
}

int spine_bone_find(const spine_import *in, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(in->bones[i].name, name))
			return i;
	return -1;
}

/* ---------- members ---------- */

/* A member of a Spine element that must be a finite number when present
 * (else *out = def). 'path' is the element's JSON path, 'what' names it
 * ("bone 'arm'"). */
static int read_number(spine_reader *r, const cJSON *obj, const char *key, double def, double *out,
		       const char *path, const char *what)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char field[FIELD_MAX];

	*out = def;
	if (!v)
		return 0;
	snprintf(field, sizeof(field), "%s.%s", path, key);
	if (!cJSON_IsNumber(v))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: %s must be a number", what, key);
	if (!isfinite(v->valuedouble))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: %s must be finite", what, key);
	*out = v->valuedouble;
	return 0;
}

/* The "name" of element 'path' (what: "bone", "slot", "skin"): a string of
 * 1..max_bytes bytes, into *name (a pointer into the tree). */
int spine_read_name(spine_reader *r, const cJSON *obj, const char *path, const char *what,
		     size_t max_bytes, const char **name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "name");
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX];

	snprintf(field, sizeof(field), "%s.name", path);
	if (!cJSON_IsObject(obj))
		return spine_fail(r, RIGD_E_BAD_SKELETON, path, "%s: a %s must be an object", path,
				  what);
	if (!v)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: the %s has no name", path, what);
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: a %s's name must be a non-empty string", path, what);
	if (strlen(v->valuestring) > max_bytes)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s '%s': the name is %zu bytes; the limit is %zu", what,
				  spine_quote(v->valuestring, q), strlen(v->valuestring), max_bytes);
	*name = v->valuestring;
	return 0;
}

/* The node id of 'name' with 'prefix' into id[SCENE_ID_MAX + 1], or
 * bad_skeleton naming the element. */
static int make_id(spine_reader *r, const char *prefix, const char *name, char *id,
		   const char *field, const char *what)
{
	size_t p = strlen(prefix), n = skel_id_length(name, strlen(name));
	char q[SPINE_QUOTE_MAX];

	if (p + n > SCENE_ID_MAX)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s '%s': its node id would be %zu characters; the limit is %d",
				  what, spine_quote(name, q), p + n, SCENE_ID_MAX);
	memcpy(id, prefix, p);
	skel_id_encode(name, strlen(name), id + p, SCENE_ID_MAX + 1 - p);
	return 0;
}

/* ---------- the body ---------- */

static int copy_text(spine_reader *r, const char *text, char **out, size_t *out_len)
{
	size_t n = strlen(text);

	if (!(*out = malloc(n + 1)))
		return spine_nomem(r);
	memcpy(*out, text, n + 1);
	*out_len = n;
	return 0;
}

/* "images": {"page.png": "<base64>", ...}, types only. */
static int read_images(spine_reader *r, const cJSON *images)
{
	proto_where w = { -1, r->err };
	int n = cJSON_GetArraySize(images), k = 0, rc;
	const cJSON *item;

	if (!cJSON_IsObject(images))
		return proto_bad_field(&w, "images",
				       "must be an object {\"page file\": \"base64 PNG\", ...}");
	if (n > SPINE_IMPORT_MAX_IMAGES)
		return spine_fail(r, RIGD_E_LIMIT, "images", "images: more than %d pages",
				  SPINE_IMPORT_MAX_IMAGES);
	if (n && !(r->out->images = calloc((size_t)n, sizeof(*r->out->images))))
		return spine_nomem(r);
	cJSON_ArrayForEach(item, images) {
		spine_image *im = &r->out->images[k];
		char q[SPINE_QUOTE_MAX], what[160];

		if (!cJSON_IsString(item)) {
			snprintf(what, sizeof(what), "'%s' must be a string (base64 PNG)",
				 spine_quote(item->string, q));
			return proto_bad_field(&w, "images", what);
		}
		size_t file_len;

		r->out->n_images = ++k; /* released whole on error */
		if ((rc = copy_text(r, item->string, &im->file, &file_len)) != 0 ||
		    (rc = copy_text(r, item->valuestring, &im->base64, &im->base64_len)) != 0)
			return rc;
	}
	return 0;
}

/* skeleton.skeleton.spine: "4.2" or "4.2.<anything>". */
static int read_version(spine_reader *r, const cJSON *sk)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(sk, "skeleton");
	const cJSON *v = cJSON_IsObject(meta) ? cJSON_GetObjectItemCaseSensitive(meta, "spine") : NULL;
	const char *field = "skeleton.skeleton.spine";
	char q[SPINE_QUOTE_MAX];

	if (!cJSON_IsObject(meta))
		return spine_fail(r, RIGD_E_BAD_SKELETON, "skeleton.skeleton",
				  "skeleton.skeleton: the file has no skeleton section (with its "
				  "\"spine\" version)");
	if (!cJSON_IsString(v))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "skeleton.spine: the version string is missing; only Spine 4.2 "
				  "files are read");
	if (strcmp(v->valuestring, "4.2") != 0 && strncmp(v->valuestring, "4.2.", 4) != 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "skeleton.spine is '%s'; only Spine 4.2 files (4.2.x) are read",
				  spine_quote(v->valuestring, q));
	snprintf(r->out->version, sizeof(r->out->version), "%s", v->valuestring);
	return 0;
}

/* ---------- bones ---------- */

static int read_inherit(spine_reader *r, const cJSON *b, spine_bone *bone, const char *path,
			const char *what)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, "inherit");
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX];

	snprintf(field, sizeof(field), "%s.transform", path);
	if (cJSON_GetObjectItemCaseSensitive(b, "transform"))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: \"transform\" is the name Spine used before 4.2 for "
				  "\"inherit\"; this is not a Spine 4.2 export", what);
	bone->inherit = INHERIT_NORMAL;
	if (!v)
		return 0;
	snprintf(field, sizeof(field), "%s.inherit", path);
	for (int i = 0; cJSON_IsString(v) && i < 5; i++)
		if (!strcmp(v->valuestring, INHERIT_NAMES[i])) {
			bone->inherit = INHERIT_NORMAL + i;
			return 0;
		}
	return spine_fail(r, RIGD_E_BAD_SKELETON, field,
			  "%s: inherit '%s' is not one of normal, onlyTranslation, "
			  "noRotationOrReflection, noScale, noScaleOrReflection",
			  what, cJSON_IsString(v) ? spine_quote(v->valuestring, q) : "(not a string)");
}

/* The parent of bone 'k': absent or null (a root), or an earlier bone. */
static int read_parent(spine_reader *r, const cJSON *bones, const cJSON *b, int k,
		       spine_bone *bone, const char *path, const char *what)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, "parent"), *later;
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX];
	int j = 0;

	bone->parent = -1;
	if (!v || cJSON_IsNull(v))
		return 0;
	snprintf(field, sizeof(field), "%s.parent", path);
	if (!cJSON_IsString(v))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: parent must be a bone's name", what);
	if ((bone->parent = spine_bone_find(r->out, k, v->valuestring)) >= 0)
		return 0;
	cJSON_ArrayForEach(later, bones) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(later, "name");

		if (j++ >= k && cJSON_IsString(name) && !strcmp(name->valuestring, v->valuestring))
			return spine_fail(r, RIGD_E_BAD_SKELETON, field,
					  "%s: parent '%s' comes later in the list (bones[%d]); a "
					  "parent must come before its children",
					  what, spine_quote(v->valuestring, q), j - 1);
	}
	return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: parent '%s' is not a bone", what,
			  spine_quote(v->valuestring, q));
}

static int read_bone(spine_reader *r, const cJSON *bones, const cJSON *b, int k)
{
	spine_bone *bone = &r->out->bones[k];
	char path[PATH_LEN], field[FIELD_MAX], what[SPINE_QUOTE_MAX + 16], q[SPINE_QUOTE_MAX];
	const cJSON *skin;
	const char *name;
	int rc, twin;

	snprintf(path, sizeof(path), "skeleton.bones[%d]", k);
	if ((rc = spine_read_name(r, b, path, "bone", SCENE_NAME_MAX, &name)) != 0)
		return rc;
	snprintf(what, sizeof(what), "bone '%s'", spine_quote(name, q));
	snprintf(field, sizeof(field), "%s.name", path);
	if ((twin = spine_bone_find(r->out, k, name)) >= 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: the name is also bones[%d]'s", what, twin);
	snprintf(bone->name, sizeof(bone->name), "%s", name);
	if ((rc = make_id(r, "", name, bone->id, field, "bone")) != 0 ||
	    (rc = read_parent(r, bones, b, k, bone, path, what)) != 0 ||
	    (rc = read_inherit(r, b, bone, path, what)) != 0 ||
	    (rc = read_number(r, b, "length", 0, &bone->length, path, what)) != 0 ||
	    (rc = read_number(r, b, "x", 0, &bone->x, path, what)) != 0 ||
	    (rc = read_number(r, b, "y", 0, &bone->y, path, what)) != 0 ||
	    (rc = read_number(r, b, "rotation", 0, &bone->rotation_deg, path, what)) != 0 ||
	    (rc = read_number(r, b, "scaleX", 1, &bone->scale[0], path, what)) != 0 ||
	    (rc = read_number(r, b, "scaleY", 1, &bone->scale[1], path, what)) != 0 ||
	    (rc = read_number(r, b, "shearX", 0, &bone->shear_deg[0], path, what)) != 0 ||
	    (rc = read_number(r, b, "shearY", 0, &bone->shear_deg[1], path, what)) != 0)
		return rc;
	if (scene_shear_collinear(bone->shear_deg)) {
		snprintf(field, sizeof(field), "%s.shearY", path);
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: shearX %g and shearY %g make its x and y axes collinear "
				  "(shearY - shearX is 90 modulo 180)", what, bone->shear_deg[0],
				  bone->shear_deg[1]);
	}
	skin = cJSON_GetObjectItemCaseSensitive(b, "skin");
	if (skin && !cJSON_IsBool(skin)) {
		snprintf(field, sizeof(field), "%s.skin", path);
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: skin must be true or false",
				  what);
	}
	if (cJSON_IsTrue(skin))
		return spine_lines_add(r, &r->kept,
				       "%s: skin-required (the runtime shows it only with a skin "
				       "that lists it); always a node here", what);
	return 0;
}

static int read_bones(spine_reader *r, const cJSON *sk)
{
	const cJSON *bones = cJSON_GetObjectItemCaseSensitive(sk, "bones"), *b;
	int n = cJSON_GetArraySize(bones), k = 0, rc;

	if (!cJSON_IsArray(bones) || n == 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, "skeleton.bones",
				  "skeleton.bones: an array of one bone or more");
	if (n > SPINE_IMPORT_MAX_BONES)
		return spine_fail(r, RIGD_E_LIMIT, "skeleton.bones",
				  "skeleton.bones: %d bones; the limit is %d", n,
				  SPINE_IMPORT_MAX_BONES);
	if (!(r->out->bones = calloc((size_t)n, sizeof(*r->out->bones))))
		return spine_nomem(r);
	cJSON_ArrayForEach(b, bones) {
		if ((rc = read_bone(r, bones, b, k)) != 0)
			return rc;
		r->out->n_bones = ++k;
	}
	return 0;
}

/* ---------- slots ---------- */

int spine_slot_find(const spine_import *in, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(in->slots[i].name, name))
			return i;
	return -1;
}

/* Slot 'k'; its setup attachment's name (a pointer into the tree, NULL
 * for none) into *attachment, checked against the skins later. */
static int read_slot(spine_reader *r, const cJSON *s, int k, const char **attachment)
{
	spine_slot *slot = &r->out->slots[k];
	char path[PATH_LEN], field[FIELD_MAX], what[SPINE_QUOTE_MAX + 16], q[SPINE_QUOTE_MAX];
	const cJSON *bone, *att;
	const char *name;
	int rc, twin;

	*attachment = NULL;
	snprintf(path, sizeof(path), "skeleton.slots[%d]", k);
	if ((rc = spine_read_name(r, s, path, "slot", SCENE_NAME_MAX - 5, &name)) != 0)
		return rc;
	snprintf(what, sizeof(what), "slot '%s'", spine_quote(name, q));
	snprintf(field, sizeof(field), "%s.name", path);
	if ((twin = spine_slot_find(r->out, k, name)) >= 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: the name is also slots[%d]'s", what, twin);
	snprintf(slot->name, sizeof(slot->name), "%s", name);
	if ((rc = make_id(r, "slot:", name, slot->id, field, "slot")) != 0)
		return rc;
	bone = cJSON_GetObjectItemCaseSensitive(s, "bone");
	snprintf(field, sizeof(field), "%s.bone", path);
	if (!cJSON_IsString(bone))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: bone must be the name of a bone", what);
	if ((slot->bone = spine_bone_find(r->out, r->out->n_bones, bone->valuestring)) < 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: bone '%s' is not a bone",
				  what, spine_quote(bone->valuestring, q));
	att = cJSON_GetObjectItemCaseSensitive(s, "attachment");
	if (att && !cJSON_IsNull(att)) {
		snprintf(field, sizeof(field), "%s.attachment", path);
		if (!cJSON_IsString(att))
			return spine_fail(r, RIGD_E_BAD_SKELETON, field,
					  "%s: attachment must be an attachment's name or null",
					  what);
		*attachment = att->valuestring;
	}
	return 0;
}

static int read_slots(spine_reader *r, const cJSON *sk, spine_groups *l)
{
	const cJSON *slots = cJSON_GetObjectItemCaseSensitive(sk, "slots"), *s, *def;
	int n = cJSON_GetArraySize(slots), k = 0, rc = 0;
	const char **setup = NULL;
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX], q2[SPINE_QUOTE_MAX];

	if (slots && !cJSON_IsArray(slots))
		return spine_fail(r, RIGD_E_BAD_SKELETON, "skeleton.slots",
				  "skeleton.slots must be an array of slots");
	if (n > SPINE_IMPORT_MAX_SLOTS)
		return spine_fail(r, RIGD_E_LIMIT, "skeleton.slots",
				  "skeleton.slots: %d slots; the limit is %d", n,
				  SPINE_IMPORT_MAX_SLOTS);
	if (n && (!(r->out->slots = calloc((size_t)n, sizeof(*r->out->slots))) ||
		  !(setup = calloc((size_t)n, sizeof(*setup)))))
		return spine_nomem(r);
	cJSON_ArrayForEach(s, slots) {
		if ((rc = read_slot(r, s, k, &setup[k])) != 0)
			goto out;
		r->out->n_slots = ++k;
	}
	if ((rc = spine_read_skins(r, sk, l, &def)) != 0)
		goto out;
	/* The attachment each slot shows in the setup pose, from the default skin. */
	for (k = 0; k < n && !rc; k++) {
		const cJSON *in_slot;
		spine_slot *slot = &r->out->slots[k];

		if (!setup[k])
			continue;
		snprintf(field, sizeof(field), "skeleton.slots[%d].attachment", k);
		in_slot = def ? cJSON_GetObjectItemCaseSensitive(def, slot->name) : NULL;
		if (!in_slot || !cJSON_GetObjectItemCaseSensitive(in_slot, setup[k]))
			rc = spine_fail(r, RIGD_E_BAD_SKELETON, field,
					"slot '%s': setup attachment '%s' is not in the default skin",
					spine_quote(slot->name, q), spine_quote(setup[k], q2));
		else
			rc = spine_make_group(r, slot->name, setup[k], slot->group, field);
	}
out:
	free(setup);
	return rc;
}

/* ---------- the posted bytes of the skeleton ---------- */

static size_t skip_space(const char *j, size_t len, size_t i)
{
	while (i < len && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r'))
		i++;
	return i;
}

/* The index just past the string that starts at j[i] ('"'). */
static size_t string_end(const char *j, size_t len, size_t i)
{
	for (i++; i < len && j[i] != '"'; i++)
		if (j[i] == '\\')
			i++;
	return i + 1;
}

/* The index just past the value that starts at j[i]. */
static size_t value_end(const char *j, size_t len, size_t i)
{
	int depth = 0;

	if (j[i] == '"')
		return string_end(j, len, i);
	if (j[i] != '{' && j[i] != '[') {
		while (i < len && !strchr(",}] \t\n\r", j[i]))
			i++;
		return i;
	}
	while (i < len) {
		if (j[i] == '"') {
			i = string_end(j, len, i);
			continue;
		}
		if (j[i] == '{' || j[i] == '[')
			depth++;
		else if ((j[i] == '}' || j[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return i;
}

/*
 * Where the value of the top-level member 'key' sits in the body 'j' (the
 * text cJSON has just parsed whole, so it is well formed and every member
 * name appears once): true with *at and *n, or false when the member's
 * name is written with escapes (then the caller prints the tree instead).
 */
static bool member_span(const char *j, size_t len, const char *key, size_t *at, size_t *n)
{
	size_t i = skip_space(j, len, 0), klen = strlen(key);

	if (i >= len || j[i] != '{')
		return false;
	for (i++;;) {
		size_t k0, k1, v0;

		i = skip_space(j, len, i);
		if (i >= len || j[i] != '"')
			return false;
		k0 = i + 1;
		i = string_end(j, len, i);
		k1 = i - 1;
		i = skip_space(j, len, i);
		if (i >= len || j[i] != ':')
			return false;
		v0 = i = skip_space(j, len, i + 1);
		if (i >= len)
			return false;
		i = value_end(j, len, i);
		if (k1 - k0 == klen && !memcmp(j + k0, key, klen)) {
			*at = v0;
			*n = i - v0;
			return true;
		}
		i = skip_space(j, len, i);
		if (i >= len || j[i] != ',')
			return false;
		i++;
	}
}

/* ---------- decode ---------- */

static int read_skeleton(spine_reader *r, const cJSON *sk)
{
	static const char *const known[] = {
		"skeleton", "bones", "slots", "skins", "ik", "transform", "path", "physics",
		"events", "animations",
	};
	spine_groups l = { 0 };
	const cJSON *item;
	char q[SPINE_QUOTE_MAX];
	int rc;

	if ((rc = read_version(r, sk)) != 0 || (rc = read_bones(r, sk)) != 0)
		return rc;
	if ((rc = read_slots(r, sk, &l)) == 0 && (rc = spine_join_groups(r, &l)) == 0)
		rc = spine_read_kept(r, sk);
	free(l.g);
	cJSON_ArrayForEach(item, sk) {
		size_t i = 0;

		while (i < sizeof(known) / sizeof(known[0]) && strcmp(item->string, known[i]))
			i++;
		if (!rc && i == sizeof(known) / sizeof(known[0]))
			rc = spine_lines_add(r, &r->kept, "section '%s': kept in the file, not read",
					     spine_quote(item->string, q));
	}
	return rc;
}

/* Moves the lines into the import (with the count of those left out). */
static int take_lines(spine_reader *r, spine_lines *l, char **s, size_t *len, int *n)
{
	int rc = 0, held = l->n;

	if (l->dropped) {
		/* Past the cap, one more line says how many were left out. */
		l->n = 0;
		rc = spine_lines_add(r, l, "... and %d more", l->dropped);
		l->n += held;
	}
	*s = l->s;
	*len = l->len;
	*n = l->n;
	*l = (spine_lines){ 0 };
	return rc;
}

int spine_import_decode(const char *json, size_t len, size_t max_bytes, spine_import *out,
			edit_error *err)
{
	proto_limits lim = proto_limits_default();
	cJSON *root;
	int rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	lim.max_bytes = max_bytes;
	if ((rc = proto_parse(json, len, &lim, &root, err)) != 0)
		return rc;
	rc = spine_import_decode_tree(json, len, root, out, err);
	cJSON_Delete(root);
	return rc;
}

int spine_import_decode_tree(const char *json, size_t len, const cJSON *root, spine_import *out,
			     edit_error *err)
{
	static const char *const names[] = { "skeleton", "atlas", "images", "file" };
	spine_reader r = { out, err, { 0 }, { 0 } };
	const cJSON *f[4] = { 0 };
	proto_where w = { -1, err };
	char *printed = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	if ((rc = proto_members(root, "body", names, 4, f, &w)) != 0)
		goto out;
	if (!f[0]) {
		rc = proto_bad_field(&w, "skeleton", "missing (the Spine 4.2 JSON export, an object)");
		goto out;
	}
	if (!cJSON_IsObject(f[0])) {
		rc = proto_bad_field(&w, "skeleton", "must be an object (the Spine 4.2 JSON export)");
		goto out;
	}
	if (f[3] && (!cJSON_IsString(f[3]) || strlen(f[3]->valuestring) > SKEL_FILE_MAX ||
		     !svg_file_name_valid(f[3]->valuestring))) {
		rc = proto_bad_field(&w, "file",
				     "1 to 128 characters of [A-Za-z0-9_.-], not starting with a dot");
		goto out;
	}
	snprintf(out->file, sizeof(out->file), "%s", f[3] ? f[3]->valuestring : SPINE_DEFAULT_FILE);
	if (f[1] && !cJSON_IsString(f[1])) {
		rc = proto_bad_field(&w, "atlas", "must be a string (the .atlas text)");
		goto out;
	}
	if (f[1] && (rc = copy_text(&r, f[1]->valuestring, &out->atlas, &out->atlas_len)) != 0)
		goto out;
	if (f[2] && (rc = read_images(&r, f[2])) != 0)
		goto out;
	if ((rc = read_skeleton(&r, f[0])) != 0)
		goto out;
	/* The file to store: the posted bytes, else the tree printed back. */
	size_t at, n;
	if (member_span(json, len, "skeleton", &at, &n)) {
		if (!(printed = malloc(n + 1))) {
			rc = spine_nomem(&r);
			goto out;
		}
		memcpy(printed, json + at, n);
		printed[n] = '\0';
	} else if (!(printed = cJSON_PrintUnformatted(f[0]))) {
		rc = spine_nomem(&r);
		goto out;
	}
	out->skeleton = printed;
	out->skeleton_len = strlen(printed);
	if ((rc = take_lines(&r, &r.kept, &out->kept, &out->kept_len, &out->n_kept)) == 0)
		rc = take_lines(&r, &r.not_applied, &out->not_applied, &out->not_applied_len,
				&out->n_not_applied);
out:
	free(r.kept.s);
	free(r.not_applied.s);
	if (rc)
		spine_import_release(out);
	return rc;
}

void spine_import_release(spine_import *in)
{
	if (!in)
		return;
	free(in->skeleton);
	free(in->atlas);
	for (int i = 0; i < in->n_images; i++) {
		free(in->images[i].file);
		free(in->images[i].base64);
	}
	free(in->images);
	free(in->bones);
	free(in->slots);
	free(in->iks);
	free(in->groups);
	free(in->kept);
	free(in->not_applied);
	memset(in, 0, sizeof(*in));
}
