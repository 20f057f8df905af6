/*
 * proto_decode.c: the protocol's JSON in (see proto.h): the text checks,
 * the parse, the field readers, ops, batches, log lines and small bodies.
 * Websocket messages are in proto_msg.c, which uses the readers here
 * through proto_internal.h.
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
 * strtod, correctly rounded, so whatever json.c prints reads back to the
 * same bits.
 *
 * Decoding never trusts its input: every problem becomes an error code
 * with the op index and field, never an assert. It knows nothing of SQL or
 * sockets.
 */
#include "proto_internal.h"

#include "core/err.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * tree). The allocator, installed once for the process, notes the failure
 * so that proto_parse() can answer nomem instead of bad_json. The glTF
 * parses go through it too, which changes nothing for them.
 *
 * The trees proto_parse builds come from a bump arena, one per thread: a
 * one-op edit is about 25 cJSON allocations, and malloc and free were a
 * tenth of the server's time under a stream of edits. Inside proto_parse
 * an allocation takes the arena's next bytes (malloc's once the arena is
 * full, as for a skeleton file); freeing a block of the arena only counts
 * it; a parse that finds every block of the arena freed starts it again
 * from its first byte. Every caller of proto_parse deletes its tree before
 * it returns, on its own thread, so the arena starts again at each message;
 * a tree kept longer only makes the next ones come from malloc. A block
 * carries its size before it, so that AddressSanitizer builds can poison
 * each freed block and the arena's unused bytes: a tree read after its
 * cJSON_Delete is found there as it would be with malloc.
 */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define ARENA_POISON(p, n) ((void)(p), (void)(n))
#define ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_BYTES (32u << 10)
#define ARENA_ALIGN 16u  /* the block header's size too */

typedef struct parse_arena {
	_Alignas(ARENA_ALIGN) unsigned char bytes[ARENA_BYTES];
	size_t top;     /* bytes handed out since the arena last started again */
	long live;      /* blocks handed out and not yet freed */
	bool active;    /* inside proto_parse's cJSON call */
} parse_arena;

static _Thread_local parse_arena arena;
static bool arena_off;
static bool cjson_alloc_failed;

static void *cjson_malloc(size_t n)
{
	/* The block: its size header, then n bytes, rounded up to the alignment. */
	size_t step = n <= ARENA_BYTES ? (n + 2 * ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN : 0;
	void *p;

	if (arena.active && !arena_off && step && step <= ARENA_BYTES - arena.top) {
		unsigned char *b = arena.bytes + arena.top;

		ARENA_UNPOISON(b, step);
		memcpy(b, &step, sizeof(step));
		ARENA_POISON(b, ARENA_ALIGN);
		arena.top += step;
		arena.live++;
		return b + ARENA_ALIGN;
	}
	p = malloc(n);
	if (!p)
		cjson_alloc_failed = true;
	return p;
}

static void cjson_free(void *p)
{
	unsigned char *b = p;

	if (b >= arena.bytes && b < arena.bytes + ARENA_BYTES) {
		size_t step;

		assert(arena.live > 0);
		ARENA_UNPOISON(b - ARENA_ALIGN, ARENA_ALIGN);
		memcpy(&step, b - ARENA_ALIGN, sizeof(step));
		ARENA_POISON(b - ARENA_ALIGN, step);
		arena.live--;
		return;
	}
	free(p);
}

static void cjson_hooks_once(void)
{
	static bool installed;

	if (!installed) {
		cJSON_Hooks hooks = { cjson_malloc, cjson_free };

		cJSON_InitHooks(&hooks);
		ARENA_POISON(arena.bytes, ARENA_BYTES);
		installed = true;
	}
}

void proto_parse_arena(bool on)
{
	arena_off = !on;
}

/*
 * Parses 'len' bytes of 'json' into *root, which the caller frees with
 * cJSON_Delete: 0, too_large, nomem or bad_json (then *root is NULL).
 */
int proto_parse(const char *json, size_t len, const proto_limits *lim, cJSON **root,
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
	if (arena.live == 0)
		arena.top = 0;
	if (json && text_ok(json, len)) {
		arena.active = true;
		*root = cJSON_ParseWithLengthOpts(json, len, &end, false);
		arena.active = false;
	}
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

/* A member name fit to quote: printable ASCII, at most 64 characters. */
const char *proto_safe_key(const char *key, char *out, size_t cap)
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

int proto_bad_field(const proto_where *w, const char *field, const char *what)
{
	char k[72];

	edit_error_set(w->err, RIGD_E_BAD_FIELD, w->op, proto_safe_key(field, k, sizeof(k)),
		       "%s: %s", k, what);
	return RIGD_E_BAD_FIELD;
}

/*
 * Matches the members of 'obj' against 'names' (n entries): the member
 * named names[j] lands in found[j]. Unknown and repeated names are
 * bad_field; so is an object that is not one. cJSON keeps a repeated key as
 * one more child (and cJSON_GetObjectItemCaseSensitive finds only the
 * first), so every child is visited.
 */
int proto_members(const cJSON *obj, const char *obj_name, const char *const *names, int n,
		  const cJSON **found, const proto_where *w)
{
	const cJSON *m;

	if (!cJSON_IsObject(obj))
		return proto_bad_field(w, obj_name, "must be an object");
	for (int j = 0; j < n; j++)
		found[j] = NULL;
	cJSON_ArrayForEach(m, obj) {
		int j;

		for (j = 0; j < n; j++)
			if (strcmp(m->string, names[j]) == 0)
				break;
		if (j == n)
			return proto_bad_field(w, m->string, "unknown field");
		if (found[j])
			return proto_bad_field(w, m->string, "repeated field");
		found[j] = m;
	}
	return 0;
}

static int get_number(const cJSON *item, const char *field, double *out, const proto_where *w)
{
	if (!cJSON_IsNumber(item))
		return proto_bad_field(w, field, "must be a number");
	if (!isfinite(item->valuedouble)) {
		edit_error_set(w->err, RIGD_E_NOT_FINITE, w->op, field, "%s: %s", field,
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	*out = item->valuedouble;
	return 0;
}

int proto_get_number(const cJSON *item, const char *field, double *out, const proto_where *w)
{
	return get_number(item, field, out, w);
}

/* An exact integer in [min, max]. */
int proto_get_int(const cJSON *item, const char *field, double min, double max, int64_t *out,
		  const proto_where *w)
{
	double v = 0; /* set when rc is 0; the initialiser quiets gcc -O3 */
	int rc = get_number(item, field, &v, w);

	if (rc)
		return rc;
	if (v != trunc(v) || v < min || v > max)
		return proto_bad_field(w, field, "must be an integer in range");
	*out = (int64_t)v;
	return 0;
}

/* An array of exactly n numbers. */
static int get_numbers(const cJSON *item, const char *field, double *out, int n,
		       const proto_where *w)
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
	return proto_bad_field(w, field, n == 3 ? "must be an array of 3 numbers"
			       : "must be an array of 4 numbers");
}

static int get_vec3(const cJSON *item, const char *field, vec3 *out, const proto_where *w)
{
	double v[3];
	int rc = get_numbers(item, field, v, 3, w);

	if (rc == 0)
		*out = (vec3){ v[0], v[1], v[2] };
	return rc;
}

static int get_bool(const cJSON *item, const char *field, bool *out, const proto_where *w)
{
	if (!cJSON_IsBool(item))
		return proto_bad_field(w, field, "must be true or false");
	*out = cJSON_IsTrue(item);
	return 0;
}

/* An id (scene_id_valid, at most max_len) into out; with allow_null, null
 * gives "". */
int proto_get_id(const cJSON *item, const char *field, bool allow_null, int max_len,
		 char out[SCENE_ID_MAX + 1], const proto_where *w)
{
	const char *v;

	if (allow_null && cJSON_IsNull(item)) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(item))
		return proto_bad_field(w, field,
				       allow_null ? "must be an id or null" : "must be an id");
	v = item->valuestring;
	if (!scene_id_valid(v) || strlen(v) > (size_t)max_len) {
		char k[72];

		edit_error_set(w->err, RIGD_E_BAD_ID, w->op, field, "%s: bad id '%s': %s", field,
			       proto_safe_key(v, k, sizeof(k)), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	/* scene_id_valid holds ids to SCENE_ID_MAX bytes, so 'out' has room. */
	assert(strlen(v) <= SCENE_ID_MAX);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* A scene name: an id that is not "." or "..", which name directories in
 * the URL paths that carry scene names. */
int proto_get_scene_name(const cJSON *item, const char *field, char out[SCENE_ID_MAX + 1],
			 const proto_where *w)
{
	int rc = proto_get_id(item, field, false, SCENE_ID_MAX, out, w);

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
int proto_get_text(const cJSON *item, const char *field, size_t max_bytes, bool allow_null,
		   char **out, const proto_where *w)
{
	*out = NULL;
	if (allow_null && cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsString(item))
		return proto_bad_field(w, field, allow_null ? "must be a string or null"
				       : "must be a string");
	if (strlen(item->valuestring) > max_bytes) {
		char what[48];

		snprintf(what, sizeof(what), "longer than %zu bytes", max_bytes);
		return proto_bad_field(w, field, what);
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
	K_MESH, K_KIND, K_CAMERA, K_VISIBLE, K_KEEP_WORLD, K_ANGLE, K_AXIS, K_BY, K_CHAIN,
	K_TARGET, K_POLE, K_LAYER, K_Z, K_FACING, K_SHEAR, K_INHERIT, K_COUNT
};

static const char *const op_keys[K_COUNT] = {
	"op", "id", "parent", "index", "name", "t", "r", "s", "pivot", "euler", "bounds",
	"mesh", "kind", "camera", "visible", "keep_world", "angle", "axis", "by", "chain",
	"target", "pole", "layer", "z", "facing", "shear", "inherit",
};

/* The EDIT_F_ bits a member stands for (camera: any of fov, near, far). */
static const unsigned key_fields[K_COUNT] = {
	0, 0, EDIT_F_PARENT, EDIT_F_INDEX, EDIT_F_NAME, EDIT_F_T, EDIT_F_R, EDIT_F_S,
	EDIT_F_PIVOT, EDIT_F_EULER, EDIT_F_BOUNDS, EDIT_F_MESH, EDIT_F_KIND,
	EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR, EDIT_F_VISIBLE, EDIT_F_KEEP_WORLD, EDIT_F_ANGLE,
	EDIT_F_AXIS, EDIT_F_BY, EDIT_F_CHAIN, EDIT_F_TARGET, EDIT_F_POLE, EDIT_F_LAYER, EDIT_F_Z,
	EDIT_F_FACING, EDIT_F_SHEAR, EDIT_F_INHERIT,
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
	{ K_AXIS, offsetof(edit_op, axis) },
	{ K_BY, offsetof(edit_op, by) },
	{ K_POLE, offsetof(edit_op, pole) },
};

static int decode_bounds(const cJSON *item, edit_op *op, const proto_where *w)
{
	static const char *const names[] = { "min", "max" };
	const cJSON *f[2] = { 0 };
	int rc;

	op->has_bounds = false;
	op->bounds = aabb_make(vec3_make(0, 0, 0), vec3_make(0, 0, 0));
	if (cJSON_IsNull(item))
		return 0;
	if ((rc = proto_members(item, "bounds", names, 2, f, w)) != 0)
		return rc;
	if (!f[0] || !f[1])
		return proto_bad_field(w, "bounds", "needs both min and max");
	if ((rc = get_vec3(f[0], "bounds", &op->bounds.min, w)) != 0 ||
	    (rc = get_vec3(f[1], "bounds", &op->bounds.max, w)) != 0)
		return rc;
	op->has_bounds = true;
	return 0;
}

static int decode_camera(const cJSON *item, edit_op *op, const proto_where *w)
{
	static const char *const names[] = { "fov", "near", "far" };
	const cJSON *f[3] = { 0 };
	int rc;

	if ((rc = proto_members(item, "camera", names, 3, f, w)) != 0)
		return rc;
	if (!f[0] && !f[1] && !f[2])
		return proto_bad_field(w, "camera", "needs fov, near or far");
	if (f[0] && (rc = get_number(f[0], "fov", &op->fov_deg, w)) != 0)
		return rc;
	if (f[1] && (rc = get_number(f[1], "near", &op->znear, w)) != 0)
		return rc;
	if (f[2] && (rc = get_number(f[2], "far", &op->zfar, w)) != 0)
		return rc;
	op->fields |= (f[0] ? EDIT_F_FOV : 0) | (f[1] ? EDIT_F_NEAR : 0) | (f[2] ? EDIT_F_FAR : 0);
	return 0;
}

/* An ik chain: three ids, root joint first, into the op's id, chain_mid
 * and chain_end. */
static int decode_chain(const cJSON *item, const proto_limits *lim, edit_op *op,
			const proto_where *w)
{
	char *slots[3] = { op->id, op->chain_mid, op->chain_end };
	const cJSON *e;
	int i = 0, rc;

	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 3)
		return proto_bad_field(w, "chain", "must be an array of 3 ids (root joint, middle joint, end)");
	cJSON_ArrayForEach(e, item)
		if ((rc = proto_get_id(e, "chain", false, lim->edit.max_id_len, slots[i++], w)) != 0)
			return rc;
	op->fields |= EDIT_F_CHAIN;
	return 0;
}

/* An ik target: [x, y] (z = 0) or [x, y, z]. */
static int decode_target(const cJSON *item, edit_op *op, const proto_where *w)
{
	double v[3] = { 0, 0, 0 };
	int n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
	int rc;

	if (n != 2 && n != 3)
		return proto_bad_field(w, "target", "must be an array of 2 or 3 numbers");
	if ((rc = get_numbers(item, "target", v, n, w)) != 0)
		return rc;
	op->target = vec3_make(v[0], v[1], v[2]);
	op->fields |= EDIT_F_TARGET;
	return 0;
}

/* The members of the relative ops (angle, chain, target) into 'op'; the
 * vectors axis, by and pole are read with the other vectors. */
static int decode_relative_fields(const cJSON *const *f, const proto_limits *lim, edit_op *op,
				  const proto_where *w)
{
	int rc;

	if (f[K_ANGLE]) {
		if ((rc = get_number(f[K_ANGLE], "angle", &op->angle_deg, w)) != 0)
			return rc;
		op->fields |= EDIT_F_ANGLE;
	}
	if (f[K_CHAIN] && (rc = decode_chain(f[K_CHAIN], lim, op, w)) != 0)
		return rc;
	if (f[K_TARGET] && (rc = decode_target(f[K_TARGET], op, w)) != 0)
		return rc;
	return 0;
}

/* The members after op and id (f from check_op) into 'op'. */
static int decode_op_fields(const cJSON *const *f, const proto_limits *lim, edit_op *op,
			    const proto_where *w)
{
	int64_t index;
	double r[4];
	int rc;

	if (f[K_PARENT]) {
		op->fields |= EDIT_F_PARENT;
		if ((rc = proto_get_id(f[K_PARENT], "parent", true, lim->edit.max_id_len,
				       op->parent, w)) != 0)
			return rc;
	}
	if (f[K_INDEX]) {
		if ((rc = proto_get_int(f[K_INDEX], "index", 0, INT_MAX, &index, w)) != 0)
			return rc;
		op->fields |= EDIT_F_INDEX;
		op->index = (int)index;
	}
	if (f[K_NAME]) {
		rc = proto_get_text(f[K_NAME], "name", SCENE_NAME_MAX, true, &op->name, w);
		if (rc != 0)
			return rc;
		op->fields |= EDIT_F_NAME;
	}
	for (size_t j = 0; j < sizeof(vec3_members) / sizeof(vec3_members[0]); j++) {
		int key = vec3_members[j].key;

		if (!f[key])
			continue;
		if ((rc = get_vec3(f[key], op_keys[key], (vec3 *)((char *)op + vec3_members[j].offset),
				   w)) != 0)
			return rc;
		op->fields |= key_fields[key];
	}
	if (f[K_R]) {
		if ((rc = get_numbers(f[K_R], "r", r, 4, w)) != 0)
			return rc;
		op->r = (quat){ r[0], r[1], r[2], r[3] };
		op->fields |= EDIT_F_R;
	}
	if (f[K_BOUNDS]) {
		if ((rc = decode_bounds(f[K_BOUNDS], op, w)) != 0)
			return rc;
		op->fields |= EDIT_F_BOUNDS;
	}
	if (f[K_MESH]) {
		rc = proto_get_text(f[K_MESH], "mesh", SCENE_MESH_MAX, true, &op->mesh, w);
		if (rc != 0)
			return rc;
		op->fields |= EDIT_F_MESH;
	}
	if (f[K_KIND]) {
		if (!cJSON_IsString(f[K_KIND]) ||
		    (op->node_kind = edit_kind_from_name(f[K_KIND]->valuestring)) < 0)
			return proto_bad_field(w, "kind", "must be group, mesh or camera");
		op->fields |= EDIT_F_KIND;
	}
	if (f[K_CAMERA] && (rc = decode_camera(f[K_CAMERA], op, w)) != 0)
		return rc;
	if (f[K_VISIBLE]) {
		if ((rc = get_bool(f[K_VISIBLE], "visible", &op->visible, w)) != 0)
			return rc;
		op->fields |= EDIT_F_VISIBLE;
	}
	if (f[K_KEEP_WORLD]) {
		if ((rc = get_bool(f[K_KEEP_WORLD], "keep_world", &op->keep_world, w)) != 0)
			return rc;
		op->fields |= EDIT_F_KEEP_WORLD;
	}
	if ((rc = proto_decode_draw(f[K_LAYER], f[K_Z], f[K_FACING], op, w)) != 0)
		return rc;
	if ((rc = proto_decode_shape2d(f[K_SHEAR], f[K_INHERIT], op, w)) != 0)
		return rc;
	return decode_relative_fields(f, lim, op, w);
}

/*
 * The checks that come before an op exists: the members of op object 'item'
 * into f (K_COUNT entries), a known op name into *kind, a valid id into
 * 'id', and no member the kind does not take.
 */
static int check_op(const cJSON *item, const proto_limits *lim, const cJSON **f, int *kind,
		    char id[SCENE_ID_MAX + 1], const proto_where *w)
{
	unsigned allowed;
	int rc;

	if ((rc = proto_members(item, "ops", op_keys, K_COUNT, f, w)) != 0)
		return rc;
	if (!f[K_OP] || !cJSON_IsString(f[K_OP]))
		return proto_bad_field(w, "op",
				       "must be create, set, reparent, delete, rotate, move, ik, "
				       "pose_save, pose_set, pose_delete, blend or clip");
	if ((*kind = edit_op_from_name(f[K_OP]->valuestring)) < 0) {
		char q[72];

		edit_error_set(w->err, RIGD_E_UNKNOWN_OP, w->op, "op", "unknown op '%s'",
			       proto_safe_key(f[K_OP]->valuestring, q, sizeof(q)));
		return RIGD_E_UNKNOWN_OP;
	}
	/* An ik op names its nodes in its chain, the root joint standing as its
	 * id once decoded. */
	if (*kind == EDIT_IK && f[K_ID])
		return proto_bad_field(w, "id", "not allowed in an ik op (chain names its nodes)");
	if (*kind == EDIT_IK && !f[K_CHAIN])
		return proto_bad_field(w, "chain", "missing");
	if (*kind != EDIT_IK && !f[K_ID])
		return proto_bad_field(w, "id", "missing");
	id[0] = '\0';
	if (f[K_ID] && (rc = proto_get_id(f[K_ID], "id", false, lim->edit.max_id_len, id, w)) != 0)
		return rc;
	allowed = edit_fields_allowed(*kind);
	for (int j = K_PARENT; j < K_COUNT; j++)
		if (f[j] && !(key_fields[j] & allowed)) {
			char what[48];

			snprintf(what, sizeof(what), "not allowed in a %s op", edit_op_name(*kind));
			return proto_bad_field(w, op_keys[j], what);
		}
	if (*kind == EDIT_REPARENT && !f[K_PARENT])
		return proto_bad_field(w, "parent", "missing (null makes the node a root)");
	if (f[K_R] && f[K_EULER])
		return proto_bad_field(w, "euler", "give either r or euler, not both");
	if (f[K_ANGLE] && (f[K_R] || f[K_EULER]) && *kind != EDIT_ROTATE)
		return proto_bad_field(w, "angle", "give one of r, euler or angle, not several");
	return 0;
}

/* Decodes op object 'item' (index k) and appends it to 'b'. */
static int decode_op(const cJSON *item, int k, const proto_limits *lim, edit_batch *b,
		     edit_error *err)
{
	const cJSON *f[K_COUNT] = { 0 };
	proto_where w = { k, err };
	edit_op *op;
	int kind = 0, rc;
	char id[SCENE_ID_MAX + 1];
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "op");

	/* Pose ops name a pose rather than a node, and a clip op a clip:
	 * their own members. */
	if (cJSON_IsObject(item) && cJSON_IsString(name) &&
	    (kind = edit_op_from_name(name->valuestring)) == EDIT_CLIP)
		return proto_decode_clip_op(item, k, lim, b, err);
	if (kind >= EDIT_POSE_SAVE)
		return proto_decode_pose_op(item, k, kind, lim, b, err);
	if ((rc = check_op(item, lim, f, &kind, id, &w)) != 0)
		return rc;
	if (!(op = edit_batch_add(b, kind, id))) {
		edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	/* From here the op belongs to 'b', which the caller releases on error. */
	return decode_op_fields(f, lim, op, &w);
}

/* Decodes the ops array into 'b' (which holds no ops yet). */
int proto_decode_op_array(const cJSON *arr, const proto_limits *lim, edit_batch *b,
			  edit_error *err)
{
	const cJSON *e;
	proto_where w = { -1, err };
	int n = 0, rc;

	if (!cJSON_IsArray(arr))
		return proto_bad_field(&w, "ops", "must be an array of ops");
	cJSON_ArrayForEach(e, arr)
		n++;
	if (n == 0)
		return proto_bad_field(&w, "ops", "a batch needs at least one op");
	if (n > lim->edit.max_ops) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "ops", "%d ops in one batch; the limit is %d", n,
			       lim->edit.max_ops);
		return RIGD_E_LIMIT;
	}
	if (edit_batch_reserve(b, n) != 0) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	assert(b->n_ops == 0);
	n = 0;
	cJSON_ArrayForEach(e, arr)
		if ((rc = decode_op(e, n++, lim, b, err)) != 0)
			return rc;
	return 0;
}

int proto_decode_client_seq(const cJSON *item, edit_batch *b, const proto_where *w)
{
	int rc;

	b->has_client_seq = false;
	if (cJSON_IsNull(item))
		return 0;
	if ((rc = proto_get_int(item, "client_seq", 0, EXACT_INT_MAX, &b->client_seq, w)) != 0)
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
	proto_where w = { -1, err };
	int rc;

	edit_batch_init(out);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = proto_parse(json, len, lim, &root, err)) != 0)
		return rc;
	if ((rc = proto_members(root, "batch", names, 3, f, &w)) != 0)
		goto out;
	if (!f[0]) {
		rc = proto_bad_field(&w, "ops", "missing");
		goto out;
	}
	if ((f[1] &&
	     (rc = proto_get_id(f[1], "client", true, lim->edit.max_id_len, out->client, &w))) ||
	    (f[2] && (rc = proto_decode_client_seq(f[2], out, &w))) ||
	    (rc = proto_decode_op_array(f[0], lim, out, err)))
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
	if ((rc = proto_parse(json, len, lim, &root, err)) != 0)
		return rc;
	rc = proto_decode_op_array(root, lim, out, err);
	cJSON_Delete(root);
	if (rc)
		edit_batch_release(out);
	return rc;
}

/* ---------- reading: log lines and small bodies ---------- */

int proto_decode_log_line(const char *json, size_t len, const proto_limits *lim,
			  proto_log_line *out, edit_error *err)
{
	proto_log_asset *assets = NULL;
	int n_assets = 0;
	int rc = proto_decode_log_line_assets(json, len, lim, out, &assets, &n_assets, err);

	if (rc == 0 && n_assets > 0) {
		/* A line that carries artwork is read only where assets are. */
		proto_where w = { -1, err };

		proto_log_assets_free(assets, n_assets);
		edit_batch_release(&out->batch);
		out->seq = 0;
		out->time_us = 0;
		return proto_bad_field(&w, "assets", "unknown field");
	}
	proto_log_assets_free(assets, n_assets);
	return rc;
}

int proto_decode_scene_create(const char *json, size_t len, char name_out[SCENE_ID_MAX + 1],
			      edit_error *err)
{
	static const char *const names[] = { "name" };
	proto_limits lim = proto_limits_default();
	const cJSON *f[1] = { 0 };
	cJSON *root;
	proto_where w = { -1, err };
	int rc;

	name_out[0] = '\0';
	edit_error_clear(err);
	if ((rc = proto_parse(json, len, &lim, &root, err)) != 0)
		return rc;
	if ((rc = proto_members(root, "body", names, 1, f, &w)) == 0)
		rc = f[0] ? proto_get_scene_name(f[0], "name", name_out, &w)
			  : proto_bad_field(&w, "name", "missing");
	cJSON_Delete(root);
	if (rc)
		name_out[0] = '\0';
	return rc;
}
