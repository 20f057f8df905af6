/*
 * svg_import.c: the body of an SVG rig import in, its batch of creates out
 * (svg_import.h). Every refusal names the manifest entry by index and id.
 *
 * Reads untrusted JSON; never judges the SVG text itself (svg.c does) and
 * never changes a scene.
 */
#include "svg_import.h"
#include "proto.h"
#include "proto_internal.h"

#include "core/err.h"

#include <cjson/cJSON.h>

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fills 'err' with 'code', field "manifest" and a message that begins with
 * the entry ("manifest[K] ('ID'): "), and returns 'code'. */
static int entry_error(edit_error *err, int code, int k, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int entry_error(edit_error *err, int code, int k, const char *id, const char *fmt, ...)
{
	char what[256], safe[80];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (id && id[0])
		edit_error_set(err, code, -1, "manifest", "manifest[%d] ('%s'): %s", k,
			       proto_safe_key(id, safe, sizeof(safe)), what);
	else
		edit_error_set(err, code, -1, "manifest", "manifest[%d]: %s", k, what);
	return code;
}

/* A finite number, or the entry's error. */
static int entry_number(const cJSON *item, int k, const char *id, const char *what, double *out,
			edit_error *err)
{
	if (!cJSON_IsNumber(item))
		return entry_error(err, RIGD_E_BAD_FIELD, k, id, "%s must be a number", what);
	if (!isfinite(item->valuedouble))
		return entry_error(err, RIGD_E_NOT_FINITE, k, id, "%s must be finite", what);
	*out = item->valuedouble;
	return 0;
}

/* "z": a number, or {"right": N, "left": N} with both keys. */
static int entry_z(const cJSON *z, int k, svg_manifest_entry *e, edit_error *err)
{
	static const char *const names[] = { "right", "left" };
	const cJSON *f[2] = { 0 };
	edit_error sub;
	proto_where w = { -1, &sub };
	int rc;

	e->has_z = true;
	if (cJSON_IsNumber(z)) {
		rc = entry_number(z, k, e->id, "z", &e->z_right, err);
		e->z_left = e->z_right;
		return rc;
	}
	if (!cJSON_IsObject(z) || proto_members(z, "z", names, 2, f, &w) || !f[0] || !f[1])
		return entry_error(err, RIGD_E_BAD_FIELD, k, e->id,
				   "z must be a number or {\"right\": N, \"left\": N}");
	if ((rc = entry_number(f[0], k, e->id, "z.right", &e->z_right, err)) != 0)
		return rc;
	return entry_number(f[1], k, e->id, "z.left", &e->z_left, err);
}

/* The id and parent of entry 'k' (ids by the node id rules). */
static int entry_ids(const cJSON *id, const cJSON *parent, int k, svg_manifest_entry *e,
		     edit_error *err)
{
	if (!id)
		return entry_error(err, RIGD_E_BAD_FIELD, k, NULL, "id is missing");
	if (!cJSON_IsString(id))
		return entry_error(err, RIGD_E_BAD_FIELD, k, NULL, "id must be a string");
	if (!scene_id_valid(id->valuestring) || strlen(id->valuestring) > SCENE_ID_MAX)
		return entry_error(err, RIGD_E_BAD_ID, k, NULL,
				   "id must be 1 to 64 characters of [A-Za-z0-9_.:-]");
	snprintf(e->id, sizeof(e->id), "%s", id->valuestring);
	if (!parent || cJSON_IsNull(parent))
		return 0;
	if (!cJSON_IsString(parent) || !scene_id_valid(parent->valuestring) ||
	    strlen(parent->valuestring) > SCENE_ID_MAX)
		return entry_error(err, cJSON_IsString(parent) ? RIGD_E_BAD_ID : RIGD_E_BAD_FIELD, k,
				   e->id, "parent must be an id or null");
	snprintf(e->parent, sizeof(e->parent), "%s", parent->valuestring);
	return 0;
}

/* One manifest entry. */
static int decode_entry(const cJSON *item, int k, svg_manifest_entry *e, edit_error *err)
{
	static const char *const names[] = { "id", "parent", "pivot", "rotation", "z", "facing" };
	const cJSON *f[6] = { 0 };
	edit_error sub;
	proto_where w = { -1, &sub };
	int rc;

	memset(e, 0, sizeof(*e));
	if (!cJSON_IsObject(item))
		return entry_error(err, RIGD_E_BAD_FIELD, k, NULL, "an entry must be an object");
	if (proto_members(item, "entry", names, 6, f, &w)) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
		return entry_error(err, RIGD_E_BAD_FIELD, k, cJSON_IsString(id) ? id->valuestring : NULL,
				   "%s", sub.message);
	}
	if ((rc = entry_ids(f[0], f[1], k, e, err)) != 0)
		return rc;
	if (!f[2] || !cJSON_IsArray(f[2]) || cJSON_GetArraySize(f[2]) != 2)
		return entry_error(err, RIGD_E_BAD_FIELD, k, e->id, "pivot must be [x, y]");
	for (int i = 0; i < 2; i++)
		if ((rc = entry_number(cJSON_GetArrayItem(f[2], i), k, e->id, "pivot", &e->pivot[i],
				       err)) != 0)
			return rc;
	if (f[3] && (rc = entry_number(f[3], k, e->id, "rotation", &e->rotation_deg, err)) != 0)
		return rc;
	if (f[4] && (rc = entry_z(f[4], k, e, err)) != 0)
		return rc;
	if (f[5] && !cJSON_IsNull(f[5])) {
		const char *v = cJSON_IsString(f[5]) ? f[5]->valuestring : "";
		e->facing = !strcmp(v, "right") ? 1 : !strcmp(v, "left") ? 2 : 0;
		if (!e->facing)
			return entry_error(err, RIGD_E_BAD_FIELD, k, e->id,
					   "facing must be \"right\", \"left\" or null");
	}
	return 0;
}

static int decode_manifest(const cJSON *arr, svg_import *out, edit_error *err)
{
	int n = cJSON_GetArraySize(arr), k = 0, rc;
	const cJSON *item;

	if (!cJSON_IsArray(arr) || n == 0) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "manifest",
			       "manifest: an array of one entry or more");
		return RIGD_E_BAD_FIELD;
	}
	if (n > SVG_IMPORT_MAX_ENTRIES) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "manifest", "manifest: more than %d entries",
			       SVG_IMPORT_MAX_ENTRIES);
		return RIGD_E_LIMIT;
	}
	out->entries = calloc((size_t)n, sizeof(*out->entries));
	if (!out->entries) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	cJSON_ArrayForEach(item, arr) {
		if ((rc = decode_entry(item, k, &out->entries[k], err)) != 0)
			return rc;
		k++;
	}
	out->n_entries = n;
	return 0;
}

int svg_import_decode(const char *json, size_t len, size_t max_bytes, svg_import *out,
		      edit_error *err)
{
	static const char *const names[] = { "file", "svg", "manifest" };
	proto_limits lim = proto_limits_default();
	const cJSON *f[3] = { 0 };
	cJSON *root;
	proto_where w = { -1, err };
	int rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	lim.max_bytes = max_bytes;
	if ((rc = proto_parse(json, len, &lim, &root, err)) != 0)
		return rc;
	if ((rc = proto_members(root, "body", names, 3, f, &w)) != 0)
		goto out;
	if (!f[0] || !f[1] || !f[2]) {
		rc = proto_bad_field(&w, !f[0] ? "file" : !f[1] ? "svg" : "manifest", "missing");
		goto out;
	}
	if (!cJSON_IsString(f[0]) || strlen(f[0]->valuestring) >= sizeof(out->file) ||
	    !svg_file_name_valid(f[0]->valuestring)) {
		rc = proto_bad_field(&w, "file",
				     "1 to 128 characters of [A-Za-z0-9_.-], not starting with a dot");
		goto out;
	}
	snprintf(out->file, sizeof(out->file), "%s", f[0]->valuestring);
	if (!cJSON_IsString(f[1])) {
		rc = proto_bad_field(&w, "svg", "must be a string (the SVG document)");
		goto out;
	}
	out->svg_len = strlen(f[1]->valuestring);
	if (!(out->svg = malloc(out->svg_len + 1))) {
		rc = RIGD_E_NOMEM;
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	memcpy(out->svg, f[1]->valuestring, out->svg_len + 1);
	rc = decode_manifest(f[2], out, err);
out:
	cJSON_Delete(root);
	if (rc)
		svg_import_release(out);
	return rc;
}

void svg_import_release(svg_import *in)
{
	if (!in)
		return;
	free(in->svg);
	free(in->entries);
	memset(in, 0, sizeof(*in));
}

/* The index of the entry with id 'id' among e[0..n), or -1. */
static int entry_find(const svg_manifest_entry *e, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].id, id))
			return i;
	return -1;
}

/* Checks each entry on its own: its group in the artwork, its id free,
 * its parent known. */
static int check_entries(const svg_import *in, const svg_clean *art, const scene *existing,
			 edit_error *err)
{
	const svg_manifest_entry *e = in->entries;

	for (int k = 0; k < in->n_entries; k++) {
		int twin = entry_find(e, k, e[k].id);
		if (twin >= 0)
			return entry_error(err, RIGD_E_DUPLICATE_ID, k, e[k].id,
					   "the id is also manifest[%d]'s", twin);
		if (existing && scene_find(existing, e[k].id) >= 0)
			return entry_error(err, RIGD_E_DUPLICATE_ID, k, e[k].id,
					   "the scene already has a node with this id");
		if (!svg_clean_has_id(art, e[k].id))
			return entry_error(err, RIGD_E_BAD_FIELD, k, e[k].id,
					   "the SVG has no element with id '%s'", e[k].id);
		if (e[k].parent[0] && entry_find(e, in->n_entries, e[k].parent) < 0 &&
		    !(existing && scene_find(existing, e[k].parent) >= 0))
			return entry_error(err, RIGD_E_UNKNOWN_NODE, k, e[k].id,
					   "parent '%s' is neither an entry nor a node of the scene",
					   e[k].parent);
	}
	return 0;
}

/* Orders the entries parents first (else in manifest order) into order[],
 * or names an entry of a parent cycle. */
static int order_entries(const svg_import *in, int *order, edit_error *err)
{
	const svg_manifest_entry *e = in->entries;
	int n = in->n_entries, done = 0;
	bool *placed = calloc((size_t)n, sizeof(*placed));

	if (!placed) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	while (done < n) {
		int before = done;
		for (int k = 0; k < n; k++) {
			if (placed[k])
				continue;
			int p = e[k].parent[0] ? entry_find(e, n, e[k].parent) : -1;
			if (p < 0 || placed[p]) {
				placed[k] = true;
				order[done++] = k;
			}
		}
		if (done == before) {
			int k = 0;
			while (placed[k])
				k++;
			free(placed);
			return entry_error(err, RIGD_E_CYCLE, k, e[k].id,
					   "its parent chain ('%s', ...) comes back to it", e[k].parent);
		}
	}
	free(placed);
	return 0;
}

int svg_import_batch(const svg_import *in, const svg_clean *art, const scene *existing,
		     edit_batch *out, edit_error *err)
{
	int *order = NULL, rc;

	edit_batch_init(out);
	edit_error_clear(err);
	if ((rc = check_entries(in, art, existing, err)) != 0)
		return rc;
	if (!(order = malloc(sizeof(*order) * (size_t)in->n_entries)) ||
	    edit_batch_reserve(out, in->n_entries)) {
		free(order);
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	if ((rc = order_entries(in, order, err)) != 0)
		goto out;
	for (int i = 0; i < in->n_entries && !rc; i++) {
		const svg_manifest_entry *e = &in->entries[order[i]];
		edit_op *op = edit_batch_add(out, EDIT_CREATE, e->id);
		assert(op); /* reserved */
		if (e->parent[0])
			edit_op_set_parent(op, e->parent);
		op->fields |= EDIT_F_T | EDIT_F_PIVOT;
		op->t = (vec3){ 0, 0, 0 };
		op->pivot = (vec3){ e->pivot[0], e->pivot[1], 0 };
		/* A rotation of 0 is the default r: left out, the log shows none. */
		if (e->rotation_deg != 0) {
			op->fields |= EDIT_F_ANGLE;
			op->angle_deg = e->rotation_deg;
		}
		rc = svg_import_bind(op, in->file, e);
		if (rc)
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
	}
out:
	free(order);
	if (rc)
		edit_batch_release(out);
	return rc;
}

int svg_import_prepare(const char *body, size_t len, const scene *existing, svg_import *in,
		       svg_clean *art, edit_batch *batch, edit_error *err)
{
	int rc;

	memset(art, 0, sizeof(*art));
	edit_batch_init(batch);
	if ((rc = svg_import_decode(body, len, SIZE_MAX, in, err)) != 0)
		return rc;
	if ((rc = svg_sanitize(in->svg, in->svg_len, NULL, art, err)) == 0 &&
	    (rc = svg_import_batch(in, art, existing, batch, err)) == 0)
		return 0;
	svg_clean_release(art);
	svg_import_release(in);
	return rc;
}

int svg_import_bind(edit_op *op, const char *file, const svg_manifest_entry *e)
{
	char layer[SCENE_LAYER_MAX + 1];
	int rc;

	snprintf(layer, sizeof(layer), "%s#%s", file, e->id);
	if ((rc = edit_op_set_layer(op, layer)) != 0)
		return rc;
	if (e->has_z) {
		op->fields |= EDIT_F_Z;
		op->z_right = e->z_right;
		op->z_left = e->z_left;
	}
	if (e->facing) {
		op->fields |= EDIT_F_FACING;
		op->facing = e->facing == 1 ? FACING_RIGHT : FACING_LEFT;
	}
	return 0;
}
