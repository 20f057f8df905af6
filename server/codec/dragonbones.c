/*
 * dragonbones.c: the body of a DragonBones 5.x import in, checked and
 * decoded (dragonbones.h): the body's members, the version, the armature
 * chosen, the asset's file name and ids; the armature itself is read by
 * dragonbones_armature.c, the batch and report built by
 * dragonbones_batch.c. Every refusal names the element by its JSON path
 * and by name.
 *
 * Reads untrusted JSON; members a DragonBones file may carry that rigd
 * does not use (userData, blendMode, aabb, actions, ...) are ignored, not
 * refused, since they stay in the stored file. Never changes a scene.
 */
#include "dragonbones.h"
#include "dragonbones_internal.h"
#include "proto.h"
#include "proto_internal.h"
#include "skel_names.h"
#include "svg.h"

#include "core/err.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db_fail(edit_error *err, int code, const char *field, const char *fmt, ...)
{
	char msg[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(err, code, -1, field, "%s", msg);
	return code;
}

int db_nomem(edit_error *err)
{
	return db_fail(err, RIGD_E_NOMEM, "", "%s", err_str(RIGD_E_NOMEM));
}

int db_text_add(db_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return RIGD_E_INTERNAL;
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		char *p = realloc(t->p, cap);
		if (!p)
			return RIGD_E_NOMEM;
		t->p = p;
		t->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(t->p + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
	return 0;
}

int db_bad(db_ctx *c, const char *what, const char *field_fmt, ...)
{
	char field[EDIT_FIELD_MAX];
	va_list ap;

	va_start(ap, field_fmt);
	vsnprintf(field, sizeof(field), field_fmt, ap);
	va_end(ap);
	return db_fail(c->err, RIGD_E_BAD_SKELETON, field, "%s", what);
}

/* "5.0" .. "5.x": the top-level version (a string or a number). */
static int check_version(db_ctx *c, const cJSON *skel)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(skel, "version");
	double ver = NAN;
	char *end = NULL;

	if (cJSON_IsString(v)) {
		ver = strtod(v->valuestring, &end);
		if (end == v->valuestring || *end)
			ver = NAN;
	} else if (cJSON_IsNumber(v)) {
		ver = v->valuedouble;
	}
	if (!isfinite(ver))
		return BAD(c, "skeleton: version must be a DragonBones data version such as \"5.5\"",
			   "skeleton.version");
	if (ver < 5.0 || ver >= 6.0) {
		char msg[EDIT_MESSAGE_MAX], b[40];
		snprintf(msg, sizeof(msg),
			 "skeleton: version %s is not supported (DragonBones 5.0 to 5.x only)",
			 cJSON_IsString(v) ? q(v->valuestring, b, sizeof(b)) : "(a number)");
		return BAD(c, msg, "skeleton.version");
	}
	return 0;
}

/* The armature named 'name' (NULL: the first) into *arm and its index. */
static int find_armature(db_ctx *c, const cJSON *skel, const char *name, const cJSON **arm)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(skel, "armature"), *a;
	char msg[EDIT_MESSAGE_MAX], b[80];
	int k = 0;

	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
		return BAD(c, "skeleton: armature must be an array of one armature or more",
			   "skeleton.armature");
	cJSON_ArrayForEach(a, arr) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
		if (!cJSON_IsObject(a) || !cJSON_IsString(n) || !n->valuestring[0]) {
			snprintf(msg, sizeof(msg), "skeleton: armature[%d] must be an object with a name", k);
			return BAD(c, msg, "skeleton.armature[%d]", k);
		}
		if (!name || !strcmp(n->valuestring, name)) {
			*arm = a;
			c->out->armature_index = k;
			if (!(c->out->armature = strdup(n->valuestring)))
				return db_nomem(c->err);
			snprintf(c->arm, sizeof(c->arm), "skeleton.armature[%d]", k);
			return 0;
		}
		k++;
	}
	snprintf(msg, sizeof(msg), "the skeleton has no armature '%s'", q(name, b, sizeof(b)));
	return BAD(c, msg, "armature");
}

/* "images": an object of base64 strings, kept as posted. */
static int decode_images(db_ctx *c, const cJSON *images, const proto_where *w)
{
	const cJSON *im;
	int n = cJSON_GetArraySize(images), k = 0;

	if (!cJSON_IsObject(images))
		return proto_bad_field(w, "images", "must be an object of {\"FILE\": \"BASE64\"}");
	if (n > DRAGONBONES_MAX_IMAGES)
		return db_fail(c->err, RIGD_E_LIMIT, "images", "images: more than %d",
			       DRAGONBONES_MAX_IMAGES);
	if (!(c->out->images = calloc((size_t)n + 1, sizeof(*c->out->images))))
		return db_nomem(c->err);
	cJSON_ArrayForEach(im, images) {
		if (!cJSON_IsString(im))
			return proto_bad_field(w, "images", "each image must be a base64 string");
		c->out->n_images = k + 1;
		if (!(c->out->images[k].file = strdup(im->string)) ||
		    !(c->out->images[k].base64 = strdup(im->valuestring)))
			return db_nomem(c->err);
		k++;
	}
	return 0;
}

/* The asset's element ids sorted, each once. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int finish_ids(db_ctx *c)
{
	dragonbones_import *out = c->out;
	char **lines;
	int n = 0;

	if (!c->ids.len)
		return 0;
	for (size_t i = 0; i < c->ids.len; i++)
		n += c->ids.p[i] == '\n';
	if (!(lines = malloc(sizeof(*lines) * (size_t)n)) ||
	    !(out->ids = malloc(c->ids.len + 1))) {
		free(lines);
		return db_nomem(c->err);
	}
	n = 0;
	for (char *p = c->ids.p, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = '\0';
		lines[n++] = p;
	}
	qsort(lines, (size_t)n, sizeof(*lines), cmp_str);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(lines[i]);
		if (i && !strcmp(lines[i], lines[i - 1]))
			continue;
		memcpy(out->ids + out->ids_len, lines[i], len);
		out->ids_len += len;
		out->ids[out->ids_len++] = '\n';
		out->n_ids++;
	}
	out->ids[out->ids_len] = '\0';
	free(lines);
	return 0;
}

/*
 * Finds a number that is not finite anywhere under 'node' (JSON allows
 * none, but the parser turns 1e999 into infinity, which the stored file
 * could not carry), writing its path after 'path' (of 'len' bytes, in a
 * buffer of EDIT_FIELD_MAX). True when one is found.
 */
static bool find_not_finite(const cJSON *node, char *path, size_t len)
{
	const cJSON *item;
	int k = 0;

	if (cJSON_IsNumber(node))
		return !isfinite(node->valuedouble);
	cJSON_ArrayForEach(item, node) {
		int n = cJSON_IsArray(node)
			? snprintf(path + len, EDIT_FIELD_MAX - len, "[%d]", k)
			: snprintf(path + len, EDIT_FIELD_MAX - len, ".%s", item->string);
		size_t at = n < 0 || (size_t)n >= EDIT_FIELD_MAX - len ? EDIT_FIELD_MAX - 1 : len + (size_t)n;
		if (find_not_finite(item, path, at))
			return true;
		path[len] = '\0';
		k++;
	}
	return false;
}

/* The body's "file", or the default: the armature's name encoded +
 * "_ske.json". */
static int decode_file(db_ctx *c, const cJSON *file, const proto_where *w)
{
	dragonbones_import *out = c->out;

	if (file) {
		if (!cJSON_IsString(file) || strlen(file->valuestring) > SKEL_FILE_MAX ||
		    !svg_file_name_valid(file->valuestring))
			return proto_bad_field(w, "file",
					       "1 to 128 characters of [A-Za-z0-9_.-], not starting with a dot");
		snprintf(out->file, sizeof(out->file), "%s", file->valuestring);
		return 0;
	}
	int n = skel_id_encode(out->armature, strlen(out->armature), out->file,
			       sizeof(out->file) - strlen("_ske.json"));
	if (n < 0)
		return proto_bad_field(w, "file",
				       "the armature's name is too long for the default file name; give one");
	memcpy(out->file + n, "_ske.json", sizeof("_ske.json"));
	return 0;
}

int dragonbones_import_decode(const char *json, size_t len, size_t max_bytes,
			      dragonbones_import *out, edit_error *err)
{
	proto_limits lim = proto_limits_default();
	cJSON *root = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	lim.max_bytes = max_bytes;
	if ((rc = proto_parse(json, len, &lim, &root, err)) != 0)
		return rc;
	rc = dragonbones_import_decode_tree(root, out, err);
	cJSON_Delete(root);
	return rc;
}

int dragonbones_import_decode_tree(const cJSON *root, dragonbones_import *out, edit_error *err)
{
	static const char *const names[] = { "skeleton", "armature", "atlas", "images", "file" };
	const cJSON *f[5] = { 0 }, *arm = NULL;
	proto_where w = { -1, err };
	db_ctx c = { .out = out, .err = err };
	int rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	if ((rc = proto_members(root, "body", names, 5, f, &w)) != 0)
		goto out;
	if (!f[0] || !cJSON_IsObject(f[0])) {
		rc = proto_bad_field(&w, "skeleton", "must be the _ske.json object");
		goto out;
	}
	if (f[1] && !cJSON_IsString(f[1])) {
		rc = proto_bad_field(&w, "armature", "must be an armature's name");
		goto out;
	}
	if (f[2] && !cJSON_IsObject(f[2])) {
		rc = proto_bad_field(&w, "atlas", "must be the _tex.json object");
		goto out;
	}
	if ((rc = check_version(&c, f[0])) ||
	    (rc = find_armature(&c, f[0], f[1] ? f[1]->valuestring : NULL, &arm)) ||
	    (rc = decode_file(&c, f[4], &w)) || (f[3] && (rc = decode_images(&c, f[3], &w))) ||
	    (rc = db_decode_armature(&c, arm)) || (rc = finish_ids(&c)))
		goto out;
	{
		char path[EDIT_FIELD_MAX] = "skeleton";
		if (find_not_finite(f[0], path, strlen(path))) {
			rc = BAD(&c, "skeleton: a number is not finite", "%s", path);
			goto out;
		}
	}
	if (!(out->skeleton = cJSON_PrintUnformatted(f[0])) ||
	    (f[2] && !(out->atlas = cJSON_PrintUnformatted(f[2])))) {
		rc = db_nomem(err);
		goto out;
	}
	out->skeleton_len = strlen(out->skeleton);
	out->atlas_len = out->atlas ? strlen(out->atlas) : 0;
	out->kept = c.kept.p, out->kept_len = c.kept.len, out->n_kept = c.n_kept;
	out->not_applied = c.not_applied.p, out->not_applied_len = c.not_applied.len;
	out->n_not_applied = c.n_not_applied;
	c.kept.p = c.not_applied.p = NULL;
out:
	free(c.def_count);
	free(c.def_first);
	free(c.def_groups);
	free(c.ids.p);
	free(c.kept.p);
	free(c.not_applied.p);
	if (rc)
		dragonbones_import_release(out);
	return rc;
}

void dragonbones_import_release(dragonbones_import *in)
{
	if (!in)
		return;
	for (int i = 0; i < in->n_bones; i++)
		free(in->bones[i].name);
	for (int i = 0; i < in->n_slots; i++) {
		free(in->slots[i].name);
		free(in->slots[i].color);
	}
	for (int i = 0; i < in->n_images; i++) {
		free(in->images[i].file);
		free(in->images[i].base64);
	}
	free(in->bones);
	free(in->slots);
	free(in->iks);
	free(in->images);
	free(in->armature);
	free(in->skeleton);
	free(in->atlas);
	free(in->ids);
	free(in->kept);
	free(in->not_applied);
	memset(in, 0, sizeof(*in));
}
