/*
 * proto.c: every JSON rigd reads or writes (see proto.h).
 *
 * Reading parses each message once with cJSON (cJSON_ParseWithLengthOpts)
 * and walks the tree against the message's schema: every member known and
 * given once, of the right type, arrays of their exact length, numbers
 * finite, integers exact and in range. cJSON keeps a repeated key as a
 * second child and its lookups return the first, so objects are checked by
 * iterating their children. The tree is freed before the decoder returns.
 *
 * cJSON is more lenient than the protocol, so one pass over the raw bytes
 * (text_ok) refuses first what it would let through:
 *   - bytes that are not UTF-8 (overlong forms, encoded surrogates, code
 *     points above U+10FFFF): cJSON copies string bytes as they come, and
 *     names, meshes and ids go on to every browser and into the log;
 *   - control characters but tab, LF and CR, NUL among them: cJSON skips
 *     every byte up to 0x20 as whitespace, and proto.h promises that a NUL
 *     is bad_json;
 *   - a \u escape that is \u0000 or not four hex digits: cJSON turns both
 *     into a NUL that cuts the string short, so "a\u0000/.." would read as
 *     "a";
 *   - a byte-order mark, which cJSON skips.
 * After the value only whitespace may follow (cJSON says where it stopped).
 *
 * What is left to cJSON: number syntax ("01" and "1." read as 1; "+1", ".5"
 * and "1e" are refused; Debian's 1.7.15 reads numbers of any length whole),
 * a raw tab, LF or CR inside a string (accepted: telling them from
 * whitespace would take a tokenizer of our own), and nesting, capped at
 * CJSON_NESTING_LIMIT (1000; deeper text is bad_json). Numbers are read by
 * strtod, correctly rounded, so whatever the writer prints reads back to
 * the same bits. cJSON cannot tell running out of memory from bad text;
 * both are bad_json.
 *
 * Writing appends to a proto_buf with json.h's writers (cJSON's printer
 * does not print the shortest round-trip form): every double is printed
 * with the fewest digits that read back to the same bits, and -0 stays -0.
 *
 * This module knows nothing of SQL or sockets.
 */
#include "proto.h"

#include "core/err.h"

#include <cjson/cJSON.h>

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest integer a double holds exactly; integers beyond are refused. */
#define EXACT_INT_MAX 9007199254740991.0

/* ---------- the byte buffer: proto's names for json.h ---------- */

void proto_buf_init(proto_buf *b, size_t head)
{
	json_buf_init(b, head);
}

void proto_buf_release(proto_buf *b)
{
	json_buf_release(b);
}

void proto_buf_reset(proto_buf *b)
{
	json_buf_reset(b);
}

const char *proto_buf_str(const proto_buf *b)
{
	return json_buf_str(b);
}

char *proto_buf_take(proto_buf *b)
{
	return json_buf_take(b);
}

int proto_buf_append(proto_buf *b, const char *bytes, size_t n)
{
	return json_buf_append(b, bytes, n);
}

int proto_buf_json_string(proto_buf *b, const char *str)
{
	return json_buf_string(b, str, JSON_STR_SHORT_ESCAPES);
}

int proto_buf_json_number(proto_buf *b, double v)
{
	return json_buf_number(b, v);
}

static int put(proto_buf *b, const char *str)
{
	return json_buf_puts(b, str);
}

/* ---------- limits ---------- */

proto_limits proto_limits_default(void)
{
	return (proto_limits){ .max_bytes = PROTO_DEFAULT_MAX_BYTES,
			       .max_selection = PROTO_DEFAULT_MAX_SELECTION,
			       .edit = edit_limits_default() };
}

/* ---------- reading: the text ---------- */

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* True when the 4 bytes at p are hex digits of a code unit other than 0. */
static bool hex4_nonzero(const unsigned char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hex_value(p[i]);

		if (h < 0)
			return false;
		v = v * 16 + h;
	}
	return v != 0;
}

/*
 * The checks cJSON does not make (see the header), in one pass over the raw
 * text: valid UTF-8, no control characters but tab, LF and CR, every \u
 * followed by four hex digits that are not 0000, no byte-order mark.
 * Backslashes are legal only inside strings, where each starts an escape;
 * skipping the second of "\\" is all it takes to find the escapes without
 * telling strings from the rest ("\\u0000" is a backslash and "u0000").
 * Everything else about escapes (surrogate pairs, unknown escapes, a
 * backslash outside a string) cJSON refuses itself.
 */
static bool text_ok(const char *text, size_t n)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		return false;
	while (i < n) {
		unsigned char c = p[i];

		if (c >= 0x20 && c < 0x80 && c != '\\') {
			i++; /* most bytes: printable ASCII */
		} else if (c >= 0x80) {
			size_t u = json_utf8_len(p + i, n - i);

			if (!u)
				return false;
			i += u;
		} else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return false;
		} else if (c == '\\' && i + 1 < n && p[i + 1] == 'u') {
			if (n - i < 6 || !hex4_nonzero(p + i + 2))
				return false;
			i += 6;
		} else if (c == '\\' && i + 1 < n && p[i + 1] == '\\') {
			i += 2;
		} else {
			i++; /* tab, LF, CR, or a backslash before another escape */
		}
	}
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * cJSON answers an allocation failure the same way as bad text (a NULL
 * tree). A pass-through allocator, installed once for the process, notes the
 * failure so that parse() can answer nomem instead of bad_json. gltf.c's
 * parses go through it too, which changes nothing for them.
 */
static bool cjson_alloc_failed;

static void *cjson_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		cjson_alloc_failed = true;
	return p;
}

static void cjson_free(void *p)
{
	free(p);
}

static void cjson_hooks_once(void)
{
	static bool installed;

	if (!installed) {
		cJSON_Hooks hooks = { cjson_malloc, cjson_free };

		cJSON_InitHooks(&hooks);
		installed = true;
	}
}

/*
 * Parses 'len' bytes of 'json' into *root, which the caller frees with
 * cJSON_Delete: 0, too_large, nomem or bad_json (then *root is NULL).
 */
static int parse(const char *json, size_t len, const proto_limits *lim, cJSON **root,
		 edit_error *err)
{
	const char *end = NULL;

	*root = NULL;
	if (len > lim->max_bytes) {
		edit_error_set(err, RIGD_E_TOO_LARGE, -1, "", "the message is %zu bytes; the limit is %zu",
			       len, lim->max_bytes);
		return RIGD_E_TOO_LARGE;
	}
	cjson_hooks_once();
	cjson_alloc_failed = false;
	if (json && text_ok(json, len))
		*root = cJSON_ParseWithLengthOpts(json, len, &end, false);
	if (!*root && cjson_alloc_failed) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	if (*root) {
		while (end < json + len && is_space(*end))
			end++;
		if (end == json + len)
			return 0;
		cJSON_Delete(*root);
		*root = NULL;
	}
	edit_error_set(err, RIGD_E_BAD_JSON, -1, "", "%s", err_str(RIGD_E_BAD_JSON));
	return RIGD_E_BAD_JSON;
}

/* ---------- reading: fields ---------- */

/* Where a field sits, for error messages: op index (-1: none). */
typedef struct where {
	int op;
	edit_error *err;
} where;

/* A member name fit to quote: printable ASCII, at most 64 characters. */
static const char *safe_key(const char *key, char *out, size_t cap)
{
	size_t i;

	for (i = 0; key[i] && i + 4 < cap; i++)
		out[i] = ((unsigned char)key[i] >= 0x20 && (unsigned char)key[i] < 0x7f &&
			  key[i] != '\'') ? key[i] : '?';
	if (key[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

static int bad_field(const where *w, const char *field, const char *what)
{
	char k[72];

	edit_error_set(w->err, RIGD_E_BAD_FIELD, w->op, safe_key(field, k, sizeof(k)), "%s: %s", k,
		       what);
	return RIGD_E_BAD_FIELD;
}

/*
 * Matches the members of 'obj' against 'names' (n entries): the member
 * named names[j] lands in found[j]. Unknown and repeated names are
 * bad_field; so is an object that is not one. cJSON keeps a repeated key as
 * one more child (and cJSON_GetObjectItemCaseSensitive finds only the
 * first), so every child is visited.
 */
static int members(const cJSON *obj, const char *obj_name, const char *const *names, int n,
		   const cJSON **found, const where *w)
{
	const cJSON *m;

	if (!cJSON_IsObject(obj))
		return bad_field(w, obj_name, "must be an object");
	for (int j = 0; j < n; j++)
		found[j] = NULL;
	cJSON_ArrayForEach(m, obj) {
		int j;

		for (j = 0; j < n; j++)
			if (strcmp(m->string, names[j]) == 0)
				break;
		if (j == n)
			return bad_field(w, m->string, "unknown field");
		if (found[j])
			return bad_field(w, m->string, "repeated field");
		found[j] = m;
	}
	return 0;
}

static int get_number(const cJSON *item, const char *field, double *out, const where *w)
{
	if (!cJSON_IsNumber(item))
		return bad_field(w, field, "must be a number");
	if (!isfinite(item->valuedouble)) {
		edit_error_set(w->err, RIGD_E_NOT_FINITE, w->op, field, "%s: %s", field,
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	*out = item->valuedouble;
	return 0;
}

/* An exact integer in [min, max]. */
static int get_int(const cJSON *item, const char *field, double min, double max, int64_t *out,
		   const where *w)
{
	double v = 0; /* set when rc is 0; the initialiser quiets gcc -O3 */
	int rc = get_number(item, field, &v, w);

	if (rc)
		return rc;
	if (v != trunc(v) || v < min || v > max)
		return bad_field(w, field, "must be an integer in range");
	*out = (int64_t)v;
	return 0;
}

/* An array of exactly n numbers. */
static int get_numbers(const cJSON *item, const char *field, double *out, int n, const where *w)
{
	const cJSON *e;
	int i = 0, rc;

	if (!cJSON_IsArray(item))
		goto wrong;
	cJSON_ArrayForEach(e, item) {
		if (i == n)
			goto wrong;
		if ((rc = get_number(e, field, &out[i++], w)) != 0)
			return rc;
	}
	if (i == n)
		return 0;
wrong:
	return bad_field(w, field, n == 3 ? "must be an array of 3 numbers"
					  : "must be an array of 4 numbers");
}

static int get_vec3(const cJSON *item, const char *field, vec3 *out, const where *w)
{
	double v[3];
	int rc = get_numbers(item, field, v, 3, w);

	if (rc == 0)
		*out = (vec3){ v[0], v[1], v[2] };
	return rc;
}

static int get_bool(const cJSON *item, const char *field, bool *out, const where *w)
{
	if (!cJSON_IsBool(item))
		return bad_field(w, field, "must be true or false");
	*out = cJSON_IsTrue(item);
	return 0;
}

/* An id (scene_id_valid, at most max_len) into out; with allow_null, null
 * gives "". */
static int get_id(const cJSON *item, const char *field, bool allow_null, int max_len,
		  char out[SCENE_ID_MAX + 1], const where *w)
{
	const char *v;

	if (allow_null && cJSON_IsNull(item)) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(item))
		return bad_field(w, field, allow_null ? "must be an id or null" : "must be an id");
	v = item->valuestring;
	if (!scene_id_valid(v) || strlen(v) > (size_t)max_len) {
		char k[72];

		edit_error_set(w->err, RIGD_E_BAD_ID, w->op, field, "%s: bad id '%s': %s", field,
			       safe_key(v, k, sizeof(k)), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* A scene name: an id that is not "." or "..", which name directories in
 * the URL paths that carry scene names. */
static int get_scene_name(const cJSON *item, const char *field, char out[SCENE_ID_MAX + 1],
			  const where *w)
{
	int rc = get_id(item, field, false, SCENE_ID_MAX, out, w);

	if (rc == 0 && (strcmp(out, ".") == 0 || strcmp(out, "..") == 0)) {
		edit_error_set(w->err, RIGD_E_BAD_ID, w->op, field, "%s: '%s' cannot name a scene",
			       field, out);
		out[0] = '\0';
		return RIGD_E_BAD_ID;
	}
	return rc;
}

/* A string of at most max_bytes (or null when allow_null: *out NULL),
 * copied into *out (malloc'd). */
static int get_text(const cJSON *item, const char *field, size_t max_bytes, bool allow_null,
		    char **out, const where *w)
{
	*out = NULL;
	if (allow_null && cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsString(item))
		return bad_field(w, field, allow_null ? "must be a string or null" : "must be a string");
	if (strlen(item->valuestring) > max_bytes) {
		char what[48];

		snprintf(what, sizeof(what), "longer than %zu bytes", max_bytes);
		return bad_field(w, field, what);
	}
	if (!(*out = strdup(item->valuestring))) {
		edit_error_set(w->err, RIGD_E_NOMEM, w->op, field, "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	return 0;
}

/* ---------- reading: ops and batches ---------- */

enum {
	K_OP, K_ID, K_PARENT, K_INDEX, K_NAME, K_T, K_R, K_S, K_PIVOT, K_EULER, K_BOUNDS,
	K_MESH, K_KIND, K_CAMERA, K_VISIBLE, K_KEEP_WORLD, K_COUNT
};

static const char *const op_keys[K_COUNT] = {
	"op", "id", "parent", "index", "name", "t", "r", "s", "pivot", "euler", "bounds",
	"mesh", "kind", "camera", "visible", "keep_world",
};

/* The EDIT_F_ bits a member stands for (camera: any of fov, near, far). */
static const unsigned key_fields[K_COUNT] = {
	0, 0, EDIT_F_PARENT, EDIT_F_INDEX, EDIT_F_NAME, EDIT_F_T, EDIT_F_R, EDIT_F_S,
	EDIT_F_PIVOT, EDIT_F_EULER, EDIT_F_BOUNDS, EDIT_F_MESH, EDIT_F_KIND,
	EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR, EDIT_F_VISIBLE, EDIT_F_KEEP_WORLD,
};

/* The members of three numbers, in the order they are checked, and where
 * each goes in an op. */
static const struct {
	int key;
	size_t offset;
} vec3_members[] = {
	{ K_T, offsetof(edit_op, t) },
	{ K_S, offsetof(edit_op, s) },
	{ K_PIVOT, offsetof(edit_op, pivot) },
	{ K_EULER, offsetof(edit_op, euler_deg) },
};

static int decode_bounds(const cJSON *item, edit_op *op, const where *w)
{
	static const char *const names[] = { "min", "max" };
	const cJSON *f[2] = { 0 };
	int rc;

	op->has_bounds = false;
	op->bounds = aabb_make(vec3_make(0, 0, 0), vec3_make(0, 0, 0));
	if (cJSON_IsNull(item))
		return 0;
	if ((rc = members(item, "bounds", names, 2, f, w)) != 0)
		return rc;
	if (!f[0] || !f[1])
		return bad_field(w, "bounds", "needs both min and max");
	if ((rc = get_vec3(f[0], "bounds", &op->bounds.min, w)) != 0 ||
	    (rc = get_vec3(f[1], "bounds", &op->bounds.max, w)) != 0)
		return rc;
	op->has_bounds = true;
	return 0;
}

static int decode_camera(const cJSON *item, edit_op *op, const where *w)
{
	static const char *const names[] = { "fov", "near", "far" };
	const cJSON *f[3] = { 0 };
	int rc;

	if ((rc = members(item, "camera", names, 3, f, w)) != 0)
		return rc;
	if (!f[0] && !f[1] && !f[2])
		return bad_field(w, "camera", "needs fov, near or far");
	if (f[0] && (rc = get_number(f[0], "fov", &op->fov_deg, w)) != 0)
		return rc;
	if (f[1] && (rc = get_number(f[1], "near", &op->znear, w)) != 0)
		return rc;
	if (f[2] && (rc = get_number(f[2], "far", &op->zfar, w)) != 0)
		return rc;
	op->fields |= (f[0] ? EDIT_F_FOV : 0) | (f[1] ? EDIT_F_NEAR : 0) | (f[2] ? EDIT_F_FAR : 0);
	return 0;
}

/* Decodes op object 'item' (index k) and appends it to 'b'. */
static int decode_op(const cJSON *item, int k, const proto_limits *lim, edit_batch *b,
		     edit_error *err)
{
	const cJSON *f[K_COUNT] = { 0 };
	where w = { k, err };
	edit_op *op;
	int kind, rc;
	unsigned allowed;
	char id[SCENE_ID_MAX + 1];
	int64_t index;
	double r[4];

	if ((rc = members(item, "ops", op_keys, K_COUNT, f, &w)) != 0)
		return rc;
	if (!f[K_OP] || !cJSON_IsString(f[K_OP]))
		return bad_field(&w, "op", "must be create, set, reparent or delete");
	if ((kind = edit_op_from_name(f[K_OP]->valuestring)) < 0) {
		char q[72];

		edit_error_set(err, RIGD_E_UNKNOWN_OP, k, "op", "unknown op '%s'",
			       safe_key(f[K_OP]->valuestring, q, sizeof(q)));
		return RIGD_E_UNKNOWN_OP;
	}
	if (!f[K_ID])
		return bad_field(&w, "id", "missing");
	if ((rc = get_id(f[K_ID], "id", false, lim->edit.max_id_len, id, &w)) != 0)
		return rc;
	allowed = edit_fields_allowed(kind);
	for (int j = K_PARENT; j < K_COUNT; j++)
		if (f[j] && !(key_fields[j] & allowed)) {
			char what[48];

			snprintf(what, sizeof(what), "not allowed in a %s op", edit_op_name(kind));
			return bad_field(&w, op_keys[j], what);
		}
	if (kind == EDIT_REPARENT && !f[K_PARENT])
		return bad_field(&w, "parent", "missing (null makes the node a root)");
	if (f[K_R] && f[K_EULER])
		return bad_field(&w, "euler", "give either r or euler, not both");
	if (!(op = edit_batch_add(b, kind, id))) {
		edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	/* From here the op belongs to 'b', which the caller releases on error. */
	if (f[K_PARENT]) {
		op->fields |= EDIT_F_PARENT;
		if ((rc = get_id(f[K_PARENT], "parent", true, lim->edit.max_id_len, op->parent,
				 &w)) != 0)
			return rc;
	}
	if (f[K_INDEX]) {
		if ((rc = get_int(f[K_INDEX], "index", 0, INT_MAX, &index, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_INDEX;
		op->index = (int)index;
	}
	if (f[K_NAME]) {
		if ((rc = get_text(f[K_NAME], "name", SCENE_NAME_MAX, true, &op->name, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_NAME;
	}
	for (size_t j = 0; j < sizeof(vec3_members) / sizeof(vec3_members[0]); j++) {
		int key = vec3_members[j].key;

		if (!f[key])
			continue;
		if ((rc = get_vec3(f[key], op_keys[key], (vec3 *)((char *)op + vec3_members[j].offset),
				   &w)) != 0)
			return rc;
		op->fields |= key_fields[key];
	}
	if (f[K_R]) {
		if ((rc = get_numbers(f[K_R], "r", r, 4, &w)) != 0)
			return rc;
		op->r = (quat){ r[0], r[1], r[2], r[3] };
		op->fields |= EDIT_F_R;
	}
	if (f[K_BOUNDS]) {
		if ((rc = decode_bounds(f[K_BOUNDS], op, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_BOUNDS;
	}
	if (f[K_MESH]) {
		if ((rc = get_text(f[K_MESH], "mesh", SCENE_MESH_MAX, true, &op->mesh, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_MESH;
	}
	if (f[K_KIND]) {
		if (!cJSON_IsString(f[K_KIND]) ||
		    (op->node_kind = edit_kind_from_name(f[K_KIND]->valuestring)) < 0)
			return bad_field(&w, "kind", "must be group, mesh or camera");
		op->fields |= EDIT_F_KIND;
	}
	if (f[K_CAMERA] && (rc = decode_camera(f[K_CAMERA], op, &w)) != 0)
		return rc;
	if (f[K_VISIBLE]) {
		if ((rc = get_bool(f[K_VISIBLE], "visible", &op->visible, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_VISIBLE;
	}
	if (f[K_KEEP_WORLD]) {
		if ((rc = get_bool(f[K_KEEP_WORLD], "keep_world", &op->keep_world, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_KEEP_WORLD;
	}
	return 0;
}

/* Decodes the ops array into 'b' (which holds no ops yet). */
static int decode_op_array(const cJSON *arr, const proto_limits *lim, edit_batch *b,
			   edit_error *err)
{
	const cJSON *e;
	where w = { -1, err };
	int n = 0, rc;

	if (!cJSON_IsArray(arr))
		return bad_field(&w, "ops", "must be an array of ops");
	cJSON_ArrayForEach(e, arr)
		n++;
	if (n == 0)
		return bad_field(&w, "ops", "a batch needs at least one op");
	if (n > lim->edit.max_ops) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "ops", "%d ops in one batch; the limit is %d", n,
			       lim->edit.max_ops);
		return RIGD_E_LIMIT;
	}
	if (edit_batch_reserve(b, n) != 0) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	n = 0;
	cJSON_ArrayForEach(e, arr)
		if ((rc = decode_op(e, n++, lim, b, err)) != 0)
			return rc;
	return 0;
}

static int decode_client_seq(const cJSON *item, edit_batch *b, const where *w)
{
	int rc;

	b->has_client_seq = false;
	if (cJSON_IsNull(item))
		return 0;
	if ((rc = get_int(item, "client_seq", 0, EXACT_INT_MAX, &b->client_seq, w)) != 0)
		return rc;
	b->has_client_seq = true;
	return 0;
}

int proto_decode_batch(const char *json, size_t len, const proto_limits *lim, edit_batch *out,
		       edit_error *err)
{
	static const char *const names[] = { "ops", "client", "client_seq" };
	proto_limits defaults = proto_limits_default();
	const cJSON *f[3] = { 0 };
	cJSON *root;
	where w = { -1, err };
	int rc;

	edit_batch_init(out);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &root, err)) != 0)
		return rc;
	if ((rc = members(root, "batch", names, 3, f, &w)) != 0)
		goto out;
	if (!f[0]) {
		rc = bad_field(&w, "ops", "missing");
		goto out;
	}
	if ((f[1] && (rc = get_id(f[1], "client", true, lim->edit.max_id_len, out->client, &w))) ||
	    (f[2] && (rc = decode_client_seq(f[2], out, &w))) ||
	    (rc = decode_op_array(f[0], lim, out, err)))
		goto out;
out:
	cJSON_Delete(root);
	if (rc)
		edit_batch_release(out);
	return rc;
}

int proto_decode_ops(const char *json, size_t len, const proto_limits *lim, edit_batch *out,
		     edit_error *err)
{
	proto_limits defaults = proto_limits_default();
	cJSON *root;
	int rc;

	edit_batch_init(out);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &root, err)) != 0)
		return rc;
	rc = decode_op_array(root, lim, out, err);
	cJSON_Delete(root);
	if (rc)
		edit_batch_release(out);
	return rc;
}

/* ---------- reading: websocket messages ---------- */

enum {
	M_TYPE, M_SCENE, M_REQ, M_OPS, M_CLIENT, M_CLIENT_SEQ, M_SELECTION, M_NAME, M_TOKEN,
	M_COUNT
};

static const char *const msg_keys[M_COUNT] = {
	"type", "scene", "req", "ops", "client", "client_seq", "selection", "name", "token",
};

static const char *const type_names[] = {
	NULL, "subscribe", "unsubscribe", "edit", "undo", "redo", "presence", "auth",
};

/* Members each type accepts, and those it requires. */
#define BIT(k) (1u << (k))
static const unsigned type_allowed[] = {
	0,
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_OPS) | BIT(M_CLIENT) | BIT(M_CLIENT_SEQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_CLIENT),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_CLIENT),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_SELECTION) | BIT(M_NAME),
	BIT(M_TYPE) | BIT(M_REQ) | BIT(M_TOKEN),
};
static const unsigned type_required[] = {
	0,
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_OPS),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_SELECTION),
	BIT(M_TYPE) | BIT(M_TOKEN),
};

static int decode_req(const cJSON *item, proto_req *req, const where *w)
{
	memset(req, 0, sizeof(*req));
	if (cJSON_IsNull(item))
		return 0;
	if (cJSON_IsString(item)) {
		size_t n = strlen(item->valuestring);

		if (n > PROTO_REQ_MAX)
			return bad_field(w, "req", "longer than 64 bytes");
		memcpy(req->str, item->valuestring, n + 1);
		req->is_string = true;
		req->present = true;
		return 0;
	}
	if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) ||
	    item->valuedouble != trunc(item->valuedouble) || item->valuedouble < 0 ||
	    item->valuedouble > EXACT_INT_MAX)
		return bad_field(w, "req", "must be an integer 0..2^53-1 or a string");
	req->num = (int64_t)item->valuedouble;
	req->present = true;
	return 0;
}

static int decode_selection(const cJSON *arr, const proto_limits *lim, proto_msg *m,
			    const where *w)
{
	const cJSON *e;
	int n = 0, rc;

	if (!cJSON_IsArray(arr))
		return bad_field(w, "selection", "must be an array of ids");
	cJSON_ArrayForEach(e, arr)
		n++;
	if (n > lim->max_selection) {
		edit_error_set(w->err, RIGD_E_LIMIT, -1, "selection",
			       "%d ids selected; the limit is %d", n, lim->max_selection);
		return RIGD_E_LIMIT;
	}
	if (n && !(m->selection = calloc((size_t)n, sizeof(edit_id)))) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	cJSON_ArrayForEach(e, arr) {
		if ((rc = get_id(e, "selection", false, lim->edit.max_id_len,
				 m->selection[m->n_selection].s, w)) != 0)
			return rc;
		m->n_selection++;
	}
	return 0;
}

static void msg_init(proto_msg *m)
{
	memset(m, 0, sizeof(*m));
	edit_batch_init(&m->batch);
}

void proto_msg_release(proto_msg *m)
{
	if (!m)
		return;
	edit_batch_release(&m->batch);
	free(m->selection);
	free(m->name);
	free(m->token);
	msg_init(m);
}

/*
 * An auth token: a string of 1..PROTO_TOKEN_MAX visible ASCII characters,
 * copied into m->token. The errors describe the token, never quote it: it
 * is a secret, and error replies may end up in a client's logs.
 */
static int decode_token(const cJSON *item, proto_msg *m, const where *w)
{
	const char *v;
	size_t n;

	if (!cJSON_IsString(item))
		return bad_field(w, "token", "must be a string");
	v = item->valuestring;
	n = strlen(v);
	if (n == 0 || n > PROTO_TOKEN_MAX)
		return bad_field(w, "token", "must be 1 to 256 characters");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
			return bad_field(w, "token", "must be visible ASCII characters, no spaces");
	if (!(m->token = malloc(n + 1))) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	memcpy(m->token, v, n + 1);
	return 0;
}

int proto_decode_msg(const char *json, size_t len, const proto_limits *lim, proto_msg *out,
		     proto_req *req_out, edit_error *err)
{
	proto_limits defaults = proto_limits_default();
	const cJSON *f[M_COUNT] = { 0 };
	cJSON *root;
	where w = { -1, err };
	int rc, type = 0;
	unsigned present = 0, extra, missing;

	msg_init(out);
	edit_error_clear(err);
	if (req_out)
		memset(req_out, 0, sizeof(*req_out));
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &root, err)) != 0)
		return rc;
	if ((rc = members(root, "message", msg_keys, M_COUNT, f, &w)) != 0) {
		/* Even with an unknown member, a good req lets the reply carry it
		 * (the first, should req itself be the repeated member). */
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(root, "req");
		where quiet = { -1, NULL };

		if (req && req_out && decode_req(req, req_out, &quiet) != 0)
			memset(req_out, 0, sizeof(*req_out));
		goto out;
	}
	if (f[M_REQ]) {
		if ((rc = decode_req(f[M_REQ], &out->req, &w)) != 0)
			goto out;
		if (req_out)
			*req_out = out->req;
	}
	if (!f[M_TYPE] || !cJSON_IsString(f[M_TYPE])) {
		rc = bad_field(&w, "type", f[M_TYPE] ? "must be a string" : "missing");
		goto out;
	}
	for (int t = PROTO_SUBSCRIBE; t <= PROTO_AUTH; t++)
		if (strcmp(f[M_TYPE]->valuestring, type_names[t]) == 0)
			type = t;
	if (!type) {
		char q[72];

		edit_error_set(err, RIGD_E_UNKNOWN_TYPE, -1, "type", "unknown message type '%s'",
			       safe_key(f[M_TYPE]->valuestring, q, sizeof(q)));
		rc = RIGD_E_UNKNOWN_TYPE;
		goto out;
	}
	out->type = type;
	for (int j = 0; j < M_COUNT; j++)
		if (f[j])
			present |= BIT(j);
	if ((extra = present & ~type_allowed[type]) != 0) {
		char what[48];

		snprintf(what, sizeof(what), "not allowed in %s %s message",
			 strchr("aeiou", type_names[type][0]) ? "an" : "a", type_names[type]);
		rc = bad_field(&w, msg_keys[__builtin_ctz(extra)], what);
		goto out;
	}
	if ((missing = type_required[type] & ~present) != 0) {
		rc = bad_field(&w, msg_keys[__builtin_ctz(missing)], "missing");
		goto out;
	}
	if (f[M_SCENE] && (rc = get_scene_name(f[M_SCENE], "scene", out->scene, &w)) != 0)
		goto out;
	if (f[M_TOKEN] && (rc = decode_token(f[M_TOKEN], out, &w)) != 0)
		goto out;
	if (f[M_CLIENT] &&
	    (rc = get_id(f[M_CLIENT], "client", true, lim->edit.max_id_len, out->batch.client, &w)))
		goto out;
	if (f[M_CLIENT_SEQ] && (rc = decode_client_seq(f[M_CLIENT_SEQ], &out->batch, &w)) != 0)
		goto out;
	if (f[M_OPS] && (rc = decode_op_array(f[M_OPS], lim, &out->batch, err)) != 0)
		goto out;
	if (f[M_SELECTION] && (rc = decode_selection(f[M_SELECTION], lim, out, &w)) != 0)
		goto out;
	if (f[M_NAME] && (rc = get_text(f[M_NAME], "name", SCENE_NAME_MAX, true, &out->name, &w)))
		goto out;
out:
	cJSON_Delete(root);
	if (rc)
		proto_msg_release(out);
	return rc;
}

/* ---------- reading: log lines and small bodies ---------- */

int proto_decode_log_line(const char *json, size_t len, const proto_limits *lim,
			  proto_log_line *out, edit_error *err)
{
	static const char *const names[] = { "seq", "time", "client", "client_seq", "ops" };
	proto_limits defaults = proto_limits_default();
	const cJSON *f[5] = { 0 };
	cJSON *root;
	where w = { -1, err };
	int64_t seq = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	edit_batch_init(&out->batch);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &root, err)) != 0)
		return rc;
	if ((rc = members(root, "line", names, 5, f, &w)) != 0)
		goto out;
	if (!f[0] || !f[1] || !f[4]) {
		rc = bad_field(&w, !f[0] ? "seq" : !f[1] ? "time" : "ops", "missing");
		goto out;
	}
	if ((rc = get_int(f[0], "seq", 1, EXACT_INT_MAX, &seq, &w)) != 0 ||
	    (rc = get_int(f[1], "time", -EXACT_INT_MAX, EXACT_INT_MAX, &out->time_us, &w)) != 0 ||
	    (f[2] && (rc = get_id(f[2], "client", true, lim->edit.max_id_len, out->batch.client,
				  &w)) != 0) ||
	    (f[3] && (rc = decode_client_seq(f[3], &out->batch, &w)) != 0) ||
	    (rc = decode_op_array(f[4], lim, &out->batch, err)) != 0)
		goto out;
	out->seq = (uint64_t)seq;
out:
	cJSON_Delete(root);
	if (rc) {
		edit_batch_release(&out->batch);
		out->seq = 0;
		out->time_us = 0;
	}
	return rc;
}

int proto_decode_scene_create(const char *json, size_t len, char name_out[SCENE_ID_MAX + 1],
			      edit_error *err)
{
	static const char *const names[] = { "name" };
	proto_limits lim = proto_limits_default();
	const cJSON *f[1] = { 0 };
	cJSON *root;
	where w = { -1, err };
	int rc;

	name_out[0] = '\0';
	edit_error_clear(err);
	if ((rc = parse(json, len, &lim, &root, err)) != 0)
		return rc;
	if ((rc = members(root, "body", names, 1, f, &w)) == 0)
		rc = f[0] ? get_scene_name(f[0], "name", name_out, &w)
			  : bad_field(&w, "name", "missing");
	cJSON_Delete(root);
	if (rc)
		name_out[0] = '\0';
	return rc;
}

/* ---------- writing ---------- */

/*
 * The writers below chain appends with '||' and, on any failure, cut the
 * buffer back to where the encoder started: an encoder that fails leaves
 * the buffer as it was.
 */
static int undo_to(proto_buf *b, size_t start)
{
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}

static int put_num(proto_buf *b, double v)
{
	/* Non-finite values never reach the scene; null keeps the JSON valid
	 * should one ever be handed in from elsewhere. */
	return json_buf_number_or_null(b, v);
}

static int put_int(proto_buf *b, int64_t v)
{
	return json_buf_int(b, v);
}

static int put_numbers(proto_buf *b, const double *v, int n)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || put_num(b, v[i]))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

static int put_vec3(proto_buf *b, vec3 v)
{
	const double a[3] = { v.x, v.y, v.z };

	return put_numbers(b, a, 3);
}

static int put_quat(proto_buf *b, quat q)
{
	const double a[4] = { q.x, q.y, q.z, q.w };

	return put_numbers(b, a, 4);
}

/* A string, or null for NULL. */
static int put_str_or_null(proto_buf *b, const char *str)
{
	return str ? proto_buf_json_string(b, str) : put(b, "null");
}

/* ',"key":' (no comma when first). */
static int key(proto_buf *b, const char *k, bool first)
{
	return (!first && put(b, ",")) || put(b, "\"") || put(b, k) || put(b, "\":");
}

static int put_bounds(proto_buf *b, bool has, aabb box)
{
	if (!has)
		return put(b, "null");
	return put(b, "{\"min\":") || put_vec3(b, box.min) || put(b, ",\"max\":") ||
	       put_vec3(b, box.max) || put(b, "}");
}

static int put_world(proto_buf *b, const scene *s, int node)
{
	mat4 w = scene_world(s, node);

	return put_numbers(b, w.m, 16);
}

static int node_body(proto_buf *b, const scene *s, int node)
{
	node_props p;
	int parent = scene_parent(s, node);
	vec3 euler;

	scene_props(s, node, &p);
	/* Derived for people, not replayed: + 0.0 shows -0 as 0. */
	euler = quat_to_euler_deg(p.r);
	euler = vec3_make(euler.x + 0.0, euler.y + 0.0, euler.z + 0.0);
	return put(b, "{\"id\":") || proto_buf_json_string(b, scene_id(s, node)) ||
	       key(b, "name", false) || put_str_or_null(b, p.name) ||
	       key(b, "parent", false) || put_str_or_null(b, parent >= 0 ? scene_id(s, parent) : NULL) ||
	       key(b, "index", false) || put_int(b, scene_child_index(s, node)) ||
	       key(b, "t", false) || put_vec3(b, p.t) ||
	       key(b, "r", false) || put_quat(b, p.r) ||
	       key(b, "s", false) || put_vec3(b, p.s) ||
	       key(b, "pivot", false) || put_vec3(b, p.pivot) ||
	       key(b, "euler", false) || put_vec3(b, euler) ||
	       key(b, "bounds", false) || put_bounds(b, p.has_bounds, p.bounds) ||
	       key(b, "mesh", false) || put_str_or_null(b, p.mesh) ||
	       key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(p.kind)) ||
	       key(b, "camera", false) || put(b, "{\"fov\":") || put_num(b, p.fov_deg) ||
	       put(b, ",\"near\":") || put_num(b, p.znear) || put(b, ",\"far\":") ||
	       put_num(b, p.zfar) || put(b, "}") ||
	       key(b, "visible", false) || put(b, p.visible ? "true" : "false") ||
	       key(b, "world", false) || put_world(b, s, node) || put(b, "}");
}

int proto_encode_node(proto_buf *b, const scene *s, int node)
{
	size_t start = b->len;

	return node_body(b, s, node) ? undo_to(b, start) : 0;
}

static int nodes_array(proto_buf *b, const scene *s)
{
	int n = scene_count(s);

	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++)
		if ((pos && put(b, ",")) || node_body(b, s, scene_at(s, pos)))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_tree(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"scene\":") || proto_buf_json_string(b, scene_name) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "nodes", false) || nodes_array(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_snapshot(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"snapshot\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "nodes", false) ||
	    nodes_array(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int put_req(proto_buf *b, const proto_req *req)
{
	if (!req || !req->present)
		return 0;
	if (key(b, "req", false))
		return RIGD_E_NOMEM;
	return req->is_string ? proto_buf_json_string(b, req->str) : put_int(b, req->num);
}

int proto_encode_ack(proto_buf *b, const proto_req *req, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"ack\"") || put_req(b, req) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "recomputed", false) || put_int(b, recomputed) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_ack(proto_buf *b, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "recomputed", false) ||
	    put_int(b, recomputed) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

/* "code","message","op","field" members of an error. */
static int error_members(proto_buf *b, const edit_error *e)
{
	const char *message = e->message[0] ? e->message : err_str(e->code);

	return key(b, "code", true) || proto_buf_json_string(b, err_code(e->code)) ||
	       key(b, "message", false) || proto_buf_json_string(b, message) ||
	       (e->op >= 0 && (key(b, "op", false) || put_int(b, e->op))) ||
	       (e->field[0] && (key(b, "field", false) || proto_buf_json_string(b, e->field)));
}

int proto_encode_error(proto_buf *b, const proto_req *req, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"error\"") || put_req(b, req) || put(b, ",") ||
	    error_members(b, e) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_error(proto_buf *b, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"error\":{") || error_members(b, e) || put(b, "}}"))
		return undo_to(b, start);
	return 0;
}

static int id_array(proto_buf *b, const edit_id *ids, int n)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || proto_buf_json_string(b, ids[i].s))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_update(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
			const int *world_nodes, int n_world, const int *changed_nodes,
			int n_changed, const edit_id *removed, int n_removed)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"update\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "world", false) ||
	    put(b, "{"))
		return undo_to(b, start);
	for (int i = 0; i < n_world; i++)
		if ((i && put(b, ",")) || proto_buf_json_string(b, scene_id(s, world_nodes[i])) ||
		    put(b, ":") || put_world(b, s, world_nodes[i]))
			return undo_to(b, start);
	if (put(b, "}") || key(b, "nodes", false) || put(b, "["))
		return undo_to(b, start);
	for (int i = 0; i < n_changed; i++)
		if ((i && put(b, ",")) || node_body(b, s, changed_nodes[i]))
			return undo_to(b, start);
	if (put(b, "]") || key(b, "removed", false) || id_array(b, removed, n_removed) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_presence(proto_buf *b, const char *scene_name, const char *client,
			  const char *name, const edit_id *selection, int n_selection)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"presence\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || key(b, "selection", false) ||
	    id_array(b, selection, n_selection) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_join(proto_buf *b, const char *scene_name, const char *client, const char *name)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"join\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_leave(proto_buf *b, const char *scene_name, const char *client)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"leave\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int op_body(proto_buf *b, const edit_op *op)
{
	unsigned f = op->fields;

	if (put(b, "{\"op\":") || proto_buf_json_string(b, edit_op_name(op->kind)) ||
	    key(b, "id", false) || proto_buf_json_string(b, op->id))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_PARENT) &&
	    (key(b, "parent", false) || put_str_or_null(b, op->parent[0] ? op->parent : NULL)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_INDEX) && op->index >= 0 && (key(b, "index", false) || put_int(b, op->index)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_NAME) && (key(b, "name", false) || put_str_or_null(b, op->name)))
		return RIGD_E_NOMEM;
	if (((f & EDIT_F_T) && (key(b, "t", false) || put_vec3(b, op->t))) ||
	    ((f & EDIT_F_R) && (key(b, "r", false) || put_quat(b, op->r))) ||
	    ((f & EDIT_F_S) && (key(b, "s", false) || put_vec3(b, op->s))) ||
	    ((f & EDIT_F_PIVOT) && (key(b, "pivot", false) || put_vec3(b, op->pivot))) ||
	    ((f & EDIT_F_EULER) && (key(b, "euler", false) || put_vec3(b, op->euler_deg))))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_BOUNDS) &&
	    (key(b, "bounds", false) || put_bounds(b, op->has_bounds, op->bounds)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_MESH) && (key(b, "mesh", false) || put_str_or_null(b, op->mesh)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KIND) &&
	    (key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(op->node_kind))))
		return RIGD_E_NOMEM;
	if (f & (EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR)) {
		bool first = true;

		if (key(b, "camera", false) || put(b, "{"))
			return RIGD_E_NOMEM;
		if ((f & EDIT_F_FOV) && (key(b, "fov", first) || put_num(b, op->fov_deg)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_FOV);
		if ((f & EDIT_F_NEAR) && (key(b, "near", first) || put_num(b, op->znear)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_NEAR);
		if ((f & EDIT_F_FAR) && (key(b, "far", first) || put_num(b, op->zfar)))
			return RIGD_E_NOMEM;
		if (put(b, "}"))
			return RIGD_E_NOMEM;
	}
	if ((f & EDIT_F_VISIBLE) &&
	    (key(b, "visible", false) || put(b, op->visible ? "true" : "false")))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KEEP_WORLD) &&
	    (key(b, "keep_world", false) || put(b, op->keep_world ? "true" : "false")))
		return RIGD_E_NOMEM;
	return put(b, "}");
}

int proto_encode_op(proto_buf *b, const edit_op *op)
{
	size_t start = b->len;

	return op_body(b, op) ? undo_to(b, start) : 0;
}

static int ops_array(proto_buf *b, const edit_batch *batch)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < batch->n_ops; i++)
		if ((i && put(b, ",")) || op_body(b, &batch->ops[i]))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_ops(proto_buf *b, const edit_batch *batch)
{
	size_t start = b->len;

	return ops_array(b, batch) ? undo_to(b, start) : 0;
}

int proto_encode_batch(proto_buf *b, const edit_batch *batch)
{
	size_t start = b->len;

	if (put(b, "{\"ops\":") || ops_array(b, batch) ||
	    (batch->client[0] &&
	     (key(b, "client", false) || proto_buf_json_string(b, batch->client))) ||
	    (batch->has_client_seq &&
	     (key(b, "client_seq", false) || put_int(b, batch->client_seq))) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_log_line(proto_buf *b, uint64_t seq, int64_t time_us, const edit_batch *batch)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "time", false) ||
	    put_int(b, time_us) || key(b, "client", false) ||
	    put_str_or_null(b, batch->client[0] ? batch->client : NULL) ||
	    key(b, "client_seq", false) ||
	    (batch->has_client_seq ? put_int(b, batch->client_seq) : put(b, "null")) ||
	    key(b, "ops", false) || ops_array(b, batch) || put(b, "}\n"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_scene_list(proto_buf *b, const proto_scene_info *scenes, int n)
{
	size_t start = b->len;

	if (put(b, "{\"scenes\":["))
		return undo_to(b, start);
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || put(b, "{\"name\":") ||
		    proto_buf_json_string(b, scenes[i].name) || key(b, "seq", false) ||
		    put_int(b, (int64_t)scenes[i].seq) || key(b, "nodes", false) ||
		    put_int(b, scenes[i].nodes) || put(b, "}"))
			return undo_to(b, start);
	if (put(b, "]}"))
		return undo_to(b, start);
	return 0;
}
