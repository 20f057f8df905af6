/*
 * gltf.c: glTF 2.0 node hierarchies in (as one edit batch) and out (as
 * glTF JSON). See gltf.h for the mapping.
 *
 * This file includes cJSON.h although HOUSE-STYLE names proto.c the only
 * one that does: glTF is a file format of its own, with its own rules
 * (indices instead of ids, its own error cases, base64 buffers), not rigd's
 * wire protocol, and keeping it out of proto.c keeps both readable. No cJSON
 * tree leaves this file.
 *
 * It must never recurse over a node tree (every walk keeps an explicit
 * stack; a hostile file can be a chain a million nodes deep), never change
 * a scene (import produces a batch, export only reads), and never include
 * SQL or socket headers.
 */
#include "gltf.h"
#include "json.h"

#include "core/err.h"
#include "core/math.h"

#include <cjson/cJSON.h>

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLB_MAGIC 0x46546C67u      /* "glTF" */
#define GLB_CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define GLB_CHUNK_BIN 0x004E4942u  /* "BIN\0" */
#define EXACT_INT_MAX 9007199254740992.0 /* 2^53 */
#define LABEL_NAME_MAX 40          /* characters of a name quoted in a message */

/* calloc for 'n' elements counted in an int: NULL for n <= 0 (callers ask
 * only for n > 0) or when the size overflows. */
static void *alloc_array(int n, size_t size)
{
	if (n <= 0 || (size_t)n > SIZE_MAX / size)
		return NULL;
	return calloc((size_t)n, size);
}

/* ====================================================================== */
/* The JSON writer (json.h) with a sticky failure: writers append without  */
/* checking and look at 'failed' once at the end.                          */
/* ====================================================================== */

typedef struct sbuf {
	json_buf buf;
	bool failed;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (!b->failed && json_buf_append(&b->buf, s, n) != 0)
		b->failed = true;
}

static void sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sb_put(b, small, (size_t)n);
		return;
	}
	{
		char *big = malloc((size_t)n + 1);

		if (!big) {
			b->failed = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		sb_put(b, big, (size_t)n);
		free(big);
	}
}

/* The shortest of %.15g, %.16g, %.17g that reads back to the same bits;
 * integers below 2^53 as integers, -0 as "-0"; null when not finite (a
 * scene holds finite values only). */
static void sb_num(sbuf *b, double v)
{
	if (!b->failed && json_buf_number_or_null(&b->buf, v) != 0)
		b->failed = true;
}

static void sb_vec(sbuf *b, const double *v, int n)
{
	sb_puts(b, "[");
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_num(b, v[i]);
	}
	sb_puts(b, "]");
}

/* Appends 'str' as a JSON string literal. Bytes that are not valid UTF-8
 * become U+FFFD, so the document stays valid whatever the scene holds. */
static void sb_str(sbuf *b, const char *str)
{
	if (!b->failed && json_buf_string(&b->buf, str, JSON_STR_REPAIR_UTF8) != 0)
		b->failed = true;
}

/* Hands the text to the caller: 0, or RIGD_E_NOMEM with the text freed. */
static int sb_take(sbuf *b, char **out, size_t *out_len)
{
	size_t len = b->buf.len;
	char *text = b->failed ? NULL : json_buf_take(&b->buf);

	json_buf_release(&b->buf);
	b->failed = false;
	if (!text)
		return RIGD_E_NOMEM;
	*out = text;
	if (out_len)
		*out_len = len;
	return 0;
}

/* ====================================================================== */
/* A set of strings with a counter each: ids and mesh references taken,    */
/* and for a base name the next suffix to try. Open addressing, sized once */
/* for everything that will be inserted, so entries never move.            */
/* ====================================================================== */

typedef struct sset_entry {
	char *key;
	int next;   /* next suffix to try for this base (from 2) */
} sset_entry;

typedef struct sset {
	sset_entry *slots;
	size_t mask;
} sset;

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Room for 'n' keys at load below one half. */
static int sset_init(sset *set, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n + 2) {
		if (cap > SIZE_MAX / 4 / sizeof(sset_entry))
			return RIGD_E_NOMEM;
		cap *= 2;
	}
	set->slots = calloc(cap, sizeof(sset_entry));
	set->mask = cap - 1;
	return set->slots ? 0 : RIGD_E_NOMEM;
}

static void sset_free(sset *set)
{
	if (!set->slots)
		return;
	for (size_t i = 0; i <= set->mask; i++)
		free(set->slots[i].key);
	free(set->slots);
	set->slots = NULL;
}

/* The entry of 'key', or the empty slot where it belongs (key NULL). */
static sset_entry *sset_slot(sset *set, const char *key)
{
	size_t i = (size_t)str_hash(key) & set->mask;

	while (set->slots[i].key && strcmp(set->slots[i].key, key) != 0)
		i = (i + 1) & set->mask;
	return &set->slots[i];
}

static sset_entry *sset_add(sset *set, const char *key)
{
	sset_entry *e = sset_slot(set, key);

	if (e->key)
		return e;
	if (!(e->key = strdup(key)))
		return NULL;
	e->next = 2;
	return e;
}

/*
 * Makes 'base' unique against 'set' (and the ids of 'existing', may be
 * NULL): 'base' itself when free, else base-2, base-3, ... with the base cut
 * so that the whole fits 'max_len' characters. Writes the result to 'out'
 * (max_len + 1 bytes) and records it. Each set may insert up to two keys per
 * call: size it for that.
 */
static int make_unique(sset *set, const scene *existing, const char *base, size_t max_len,
		       char *out)
{
	sset_entry *be = sset_slot(set, base);
	bool in_scene = existing && scene_find(existing, base) >= 0;

	if (!be->key && !in_scene) {
		if (!sset_add(set, base))
			return RIGD_E_NOMEM;
		snprintf(out, max_len + 1, "%s", base);
		return 0;
	}
	if (!be->key && !(be = sset_add(set, base)))
		return RIGD_E_NOMEM;
	for (int k = be->next;; k++) {
		char suffix[16];
		size_t sl = (size_t)snprintf(suffix, sizeof(suffix), "-%d", k);
		size_t bl = strlen(base);

		if (bl > max_len - sl)
			bl = max_len - sl;
		memcpy(out, base, bl);
		memcpy(out + bl, suffix, sl + 1);
		if (!sset_slot(set, out)->key && !(existing && scene_find(existing, out) >= 0)) {
			if (!sset_add(set, out))
				return RIGD_E_NOMEM;
			be->next = k + 1;
			return 0;
		}
	}
}

/* ====================================================================== */
/* Import                                                                  */
/* ====================================================================== */

/* extras.rigd of one node, as gltf_export writes it. */
typedef struct rigd_extras {
	const char *id;         /* NULL: none */
	int kind;               /* -1: none */
	bool has_pivot, has_t, has_r, has_bounds, has_fov, has_near, has_far;
	vec3 pivot, t;
	quat r;                 /* what the scene normalises into the rotation */
	aabb bounds;
	double fov_deg, znear, zfar;
	int visible;            /* -1: none, else 0 / 1 */
	bool unnamed;
	const char *pivot_of;   /* NULL: none */
} rigd_extras;

typedef struct gnode {
	const cJSON *json;
	const char *name;       /* NULL: none */
	int parent;             /* glTF index, -1 */
	int first_kid, n_kids;  /* slice of ctx.kids */
	bool has_t, has_r, has_s, has_matrix;
	vec3 t;
	quat r;
	vec3 s;
	double matrix_err;
	bool inexact;
	int mesh, camera, skin;
	rigd_extras x;
	int fold;               /* outer of a pivot pair: index of the inner node, else -1 */
	bool visited;
} gnode;

typedef struct gcamera {
	bool perspective;
	double fov_deg, yfov, znear, zfar;
	bool infinite;
} gcamera;

typedef struct import_ctx {
	gltf_import_opts o;
	edit_error *err;
	edit_batch *out;
	gltf_report *rep;        /* never NULL inside: a local one stands in */
	cJSON *root;
	int n_nodes, n_meshes, n_cameras, n_skins, n_scenes;
	const cJSON **node_json, **mesh_json, **camera_json, **skin_json, **scene_json;
	gnode *nodes;
	int *kids;               /* children of every node, node by node */
	int n_kids;
	char **mesh_ref;         /* per mesh, the reference nodes get */
	gcamera *cameras;
	int *roots;
	int n_roots;
} import_ctx;

/* A node's name fit to quote: printable ASCII (others as '?'), at most
 * LABEL_NAME_MAX characters and "..." beyond. 'out' has LABEL_NAME_MAX + 4. */
static const char *quoted(const char *s, char *out)
{
	size_t i;

	for (i = 0; s[i] && i < LABEL_NAME_MAX; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'') ? s[i] : '?';
	if (s[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

/* "node 3 ('arm')" or "node 3". */
static void node_label(const import_ctx *c, int node, char *out, size_t cap)
{
	char q[LABEL_NAME_MAX + 4];
	const char *name = c->nodes ? c->nodes[node].name : NULL;

	if (!name && c->node_json) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(c->node_json[node], "name");

		name = cJSON_IsString(n) ? n->valuestring : NULL;
	}
	if (name)
		snprintf(out, cap, "node %d ('%s')", node, quoted(name, q));
	else
		snprintf(out, cap, "node %d", node);
}

/* Records an error not about one node; returns 'code'. */
static int fail(import_ctx *c, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(import_ctx *c, int code, const char *field, const char *fmt, ...)
{
	char msg[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(c->err, code, -1, field, "%s", msg);
	c->rep->bad_node = -1;
	return code;
}

/* Records an error about glTF node 'node', named first; returns 'code'. */
static int fail_node(import_ctx *c, int code, int node, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail_node(import_ctx *c, int code, int node, const char *field, const char *fmt, ...)
{
	char label[LABEL_NAME_MAX + 32], msg[EDIT_MESSAGE_MAX];
	va_list ap;

	node_label(c, node, label, sizeof(label));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(c->err, code, -1, field, "%s: %s", label, msg);
	c->rep->bad_node = node;
	return code;
}

static int nomem(import_ctx *c)
{
	return fail(c, RIGD_E_NOMEM, "", "%s", err_str(RIGD_E_NOMEM));
}

static void warn(import_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(import_ctx *c, const char *fmt, ...)
{
	gltf_report *r = c->rep;
	char msg[EDIT_MESSAGE_MAX];
	char **w;
	va_list ap;

	if (r->n_warnings >= GLTF_MAX_WARNINGS) {
		r->n_warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A warning lost to memory exhaustion is counted as dropped: the import
	 * itself does not depend on it. */
	if (!(w = realloc(r->warnings, sizeof(char *) * (size_t)(r->n_warnings + 1)))) {
		r->n_warnings_dropped++;
		return;
	}
	r->warnings = w;
	if (!(w[r->n_warnings] = strdup(msg))) {
		r->n_warnings_dropped++;
		return;
	}
	r->n_warnings++;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Finds the JSON chunk of a GLB container (glTF 2.0 section 4.4). */
static int unwrap_glb(import_ctx *c, const unsigned char *d, size_t len, const char **json,
		      size_t *json_len)
{
	size_t off = 12;
	int chunk = 0;

	if (len < 12)
		return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: %zu bytes is shorter than the 12-byte header",
			    len);
	if (rd32(d + 4) != 2)
		return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: container version %" PRIu32 ", not 2",
			    rd32(d + 4));
	if (rd32(d + 8) != len)
		return fail(c, RIGD_E_BAD_GLTF, "glb",
			    "glb: the header says %" PRIu32 " bytes but there are %zu", rd32(d + 8), len);
	while (off < len) {
		uint32_t clen, ctype;

		if (len - off < 8)
			return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: chunk %d: truncated header", chunk);
		clen = rd32(d + off);
		ctype = rd32(d + off + 4);
		if (clen % 4)
			return fail(c, RIGD_E_BAD_GLTF, "glb",
				    "glb: chunk %d: length %" PRIu32 " is not a multiple of 4", chunk, clen);
		if (clen > len - off - 8)
			return fail(c, RIGD_E_BAD_GLTF, "glb",
				    "glb: chunk %d: %" PRIu32 " bytes run past the end of the file", chunk,
				    clen);
		if (chunk == 0) {
			if (ctype != GLB_CHUNK_JSON)
				return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: the first chunk is not JSON");
			*json = (const char *)d + off + 8;
			*json_len = clen;
		} else if (ctype == GLB_CHUNK_JSON) {
			return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: chunk %d: a second JSON chunk", chunk);
		} else if (ctype == GLB_CHUNK_BIN && chunk != 1) {
			return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: chunk %d: BIN must be the second chunk",
				    chunk);
		}
		off += 8 + (size_t)clen;
		chunk++;
	}
	if (chunk == 0)
		return fail(c, RIGD_E_BAD_GLTF, "glb", "glb: no JSON chunk");
	/* The chunk is padded with spaces; some old writers padded with NULs,
	 * which the JSON parser would stop at: trim those. */
	while (*json_len > 0 && (*json)[*json_len - 1] == '\0')
		(*json_len)--;
	return 0;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* glTF forbids duplicate keys in any object (section 2.7); cJSON keeps them
 * all and finds the first. Checks the whole document, iteratively. */
static int check_duplicate_keys(import_ctx *c)
{
	const cJSON **stack = NULL;
	const char **keys = NULL;
	size_t n_stack = 0, cap_stack = 0, cap_keys = 0;
	int rc = 0;

	for (const cJSON *item = c->root; item || n_stack;) {
		if (!item)
			item = stack[--n_stack];
		if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
			size_t n = 0;

			for (const cJSON *k = item->child; k; k = k->next) {
				if (cJSON_IsObject(item)) {
					if (n == cap_keys) {
						size_t nc = cap_keys ? cap_keys * 2 : 64;
						const char **nk = realloc(keys, nc * sizeof(*keys));

						if (!nk) {
							rc = nomem(c);
							goto out;
						}
						keys = nk;
						cap_keys = nc;
					}
					keys[n++] = k->string ? k->string : "";
				}
				if (k->child) {
					if (n_stack == cap_stack) {
						size_t nc = cap_stack ? cap_stack * 2 : 64;
						const cJSON **ns = realloc(stack, nc * sizeof(*stack));

						if (!ns) {
							rc = nomem(c);
							goto out;
						}
						stack = ns;
						cap_stack = nc;
					}
					stack[n_stack++] = k;
				}
			}
			if (n > 1) {
				qsort(keys, n, sizeof(*keys), cmp_keys);
				for (size_t i = 1; i < n; i++) {
					if (strcmp(keys[i - 1], keys[i]) == 0) {
						char q[LABEL_NAME_MAX + 4];

						rc = fail(c, RIGD_E_BAD_GLTF, "json",
							  "duplicate key '%s' in a JSON object", quoted(keys[i], q));
						goto out;
					}
				}
			}
		}
		item = NULL;
	}
out:
	free(stack);
	free(keys);
	return rc;
}

static int parse_json(import_ctx *c, const char *json, size_t len)
{
	const char *end = NULL;
	char *text;

	if (len >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0) {
		/* glTF 2.7: a reader may ignore a byte order mark. */
		json += 3;
		len -= 3;
	}
	if (memchr(json, '\0', len))
		return fail(c, RIGD_E_BAD_JSON, "json", "bad JSON: a NUL byte at byte %zu",
			    (size_t)((const char *)memchr(json, '\0', len) - json));
	/* glTF JSON is UTF-8 (glTF 2.0, 3.2) and cJSON does not check it; a name
	 * that is not text would reach every browser's snapshot. */
	for (size_t i = 0, k; i < len; i += k)
		if ((k = json_utf8_len((const unsigned char *)json + i, len - i)) == 0)
			return fail(c, RIGD_E_BAD_JSON, "json", "bad JSON: not UTF-8 at byte %zu", i);
	if (len == SIZE_MAX || !(text = malloc(len + 1)))
		return nomem(c);
	memcpy(text, json, len);
	text[len] = '\0';
	c->root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
	if (!c->root) {
		size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;

		free(text);
		return fail(c, RIGD_E_BAD_JSON, "json", "bad JSON at byte %zu", at);
	}
	free(text);
	if (!cJSON_IsObject(c->root))
		return fail(c, RIGD_E_BAD_GLTF, "json", "the document is not a JSON object");
	return check_duplicate_keys(c);
}

/* Reads an optional top-level array into a pointer table. */
static int top_array(import_ctx *c, const char *key, const cJSON ***table, int *count)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->root, key);
	int n = 0;

	*count = 0;
	*table = NULL;
	if (!a)
		return 0;
	if (!cJSON_IsArray(a))
		return fail(c, RIGD_E_BAD_GLTF, key, "'%s' is not an array", key);
	for (const cJSON *e = a->child; e; e = e->next) {
		if (n == INT_MAX)
			return fail(c, RIGD_E_LIMIT, key, "'%s' has too many entries", key);
		n++;
	}
	if (n == 0)
		return 0;
	if (!(*table = alloc_array(n, sizeof(**table))))
		return nomem(c);
	n = 0;
	for (const cJSON *e = a->child; e; e = e->next) {
		if (!cJSON_IsObject(e) && strcmp(key, "nodes") == 0)
			return fail_node(c, RIGD_E_BAD_GLTF, n, key, "not a JSON object");
		if (!cJSON_IsObject(e))
			return fail(c, RIGD_E_BAD_GLTF, key, "%s[%d] is not an object", key, n);
		(*table)[n++] = e;
	}
	*count = n;
	return 0;
}

/* An index 0 <= i < count; -1 when it is not one. */
static int as_index(const cJSON *v, int count)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != trunc(v->valuedouble) ||
	    v->valuedouble < 0 || v->valuedouble >= count)
		return -1;
	return (int)v->valuedouble;
}

/* Why 'v' is not an index below 'count', for messages ("7 is out of range:
 * there are 3 nodes"). */
static void index_problem(const cJSON *v, int count, const char *what, char *out, size_t cap)
{
	if (!cJSON_IsNumber(v))
		snprintf(out, cap, "is not an integer");
	else if (!isfinite(v->valuedouble) || v->valuedouble != trunc(v->valuedouble))
		snprintf(out, cap, "%g is not an integer", v->valuedouble);
	else if (v->valuedouble < 0)
		snprintf(out, cap, "%.0f is negative", v->valuedouble);
	else
		snprintf(out, cap, "%.0f is out of range: there are %d %s", v->valuedouble, count, what);
}

/* An array of exactly 'n' finite numbers, property 'field' of node 'node'. */
static int read_numbers(import_ctx *c, int node, const cJSON *a, const char *field, int n,
			double *out)
{
	int i = 0;

	if (!cJSON_IsArray(a))
		return fail_node(c, RIGD_E_BAD_GLTF, node, field, "%s is not an array of %d numbers",
				 field, n);
	for (const cJSON *e = a->child; e && i < n; e = e->next, i++) {
		if (!cJSON_IsNumber(e))
			return fail_node(c, RIGD_E_BAD_GLTF, node, field, "%s[%d] is not a number",
					 field, i);
		if (!isfinite(e->valuedouble))
			return fail_node(c, RIGD_E_NOT_FINITE, node, field, "%s[%d] is not finite", field,
					 i);
		out[i] = e->valuedouble;
	}
	if (cJSON_GetArraySize(a) != n)
		return fail_node(c, RIGD_E_BAD_GLTF, node, field, "%s has %d numbers, not %d", field,
				 cJSON_GetArraySize(a), n);
	return 0;
}

static bool bits_equal(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Reads extras.rigd of node i (written by gltf_export). */
static int read_extras(import_ctx *c, int i)
{
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(c->node_json[i], "extras");
	const cJSON *x, *v;
	rigd_extras *r = &c->nodes[i].x;
	double d[3];
	int rc;

	*r = (rigd_extras){ .kind = -1, .visible = -1 };
	if (!cJSON_IsObject(ex) || !(x = cJSON_GetObjectItemCaseSensitive(ex, "rigd")))
		return 0;
	if (!cJSON_IsObject(x))
		return fail_node(c, RIGD_E_BAD_GLTF, i, "extras", "extras.rigd is not an object");
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "id"))) {
		if (!cJSON_IsString(v) || !scene_id_valid(v->valuestring))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.id is not a valid node id");
		r->id = v->valuestring;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "kind"))) {
		if (!cJSON_IsString(v) || (r->kind = edit_kind_from_name(v->valuestring)) < 0)
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.kind is not group, mesh or camera");
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "pivot"))) {
		if ((rc = read_numbers(c, i, v, "extras.rigd.pivot", 3, d)) != 0)
			return rc;
		r->has_pivot = true;
		r->pivot = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "t"))) {
		if ((rc = read_numbers(c, i, v, "extras.rigd.t", 3, d)) != 0)
			return rc;
		r->has_t = true;
		r->t = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "r"))) {
		double q[4];
		quat unit;

		if ((rc = read_numbers(c, i, v, "extras.rigd.r", 4, q)) != 0)
			return rc;
		r->has_r = true;
		r->r = (quat){ q[0], q[1], q[2], q[3] };
		if (quat_normalize(r->r, &unit) != 0)
			return fail_node(c, RIGD_E_ZERO_QUATERNION, i, "extras",
					 "extras.rigd.r has zero length");
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "bounds"))) {
		double lo[3], hi[3];

		if (!cJSON_IsObject(v))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.bounds is not an object with min and max");
		if ((rc = read_numbers(c, i, cJSON_GetObjectItemCaseSensitive(v, "min"),
				       "extras.rigd.bounds.min", 3, lo)) != 0 ||
		    (rc = read_numbers(c, i, cJSON_GetObjectItemCaseSensitive(v, "max"),
				       "extras.rigd.bounds.max", 3, hi)) != 0)
			return rc;
		if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.bounds: min exceeds max");
		r->has_bounds = true;
		r->bounds = aabb_make(vec3_make(lo[0], lo[1], lo[2]), vec3_make(hi[0], hi[1], hi[2]));
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "visible"))) {
		if (!cJSON_IsBool(v))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.visible is not true or false");
		r->visible = cJSON_IsTrue(v);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "unnamed"))) {
		if (!cJSON_IsBool(v))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.unnamed is not true or false");
		r->unnamed = cJSON_IsTrue(v);
	}
	{
		static const char *const keys[3] = { "fov", "near", "far" };
		bool *has[3] = { &r->has_fov, &r->has_near, &r->has_far };
		double *val[3] = { &r->fov_deg, &r->znear, &r->zfar };

		for (int k = 0; k < 3; k++) {
			if (!(v = cJSON_GetObjectItemCaseSensitive(x, keys[k])))
				continue;
			if (!cJSON_IsNumber(v))
				return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
						 "extras.rigd.%s is not a number", keys[k]);
			if (!isfinite(v->valuedouble))
				return fail_node(c, RIGD_E_NOT_FINITE, i, "extras",
						 "extras.rigd.%s is not finite", keys[k]);
			*has[k] = true;
			*val[k] = v->valuedouble;
		}
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "pivot_of"))) {
		if (!cJSON_IsString(v))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					 "extras.rigd.pivot_of is not a string");
		r->pivot_of = v->valuestring;
	}
	return 0;
}

/* Splits node i's matrix into TRS (or refuses it). */
static int read_matrix(import_ctx *c, int i, const cJSON *a)
{
	gnode *g = &c->nodes[i];
	double biggest = 1, tol, e;
	mat4 m;
	int rc;

	if ((rc = read_numbers(c, i, a, "matrix", 16, m.m)) != 0)
		return rc;
	if (m.m[3] != 0 || m.m[7] != 0 || m.m[11] != 0 || m.m[15] != 1)
		return fail_node(c, RIGD_E_BAD_GLTF, i, "matrix",
				 "matrix is not affine: its last row is (%g, %g, %g, %g), not (0, 0, 0, 1)",
				 m.m[3], m.m[7], m.m[11], m.m[15]);
	for (int col = 0; col < 3; col++)
		for (int row = 0; row < 3; row++)
			biggest = fmax(biggest, fabs(m.m[col * 4 + row]));
	tol = c->o.matrix_tol * biggest;
	g->has_matrix = true;
	g->inexact = !mat4_decompose(m, tol, &g->t, &g->r, &g->s, &e);
	g->matrix_err = e;
	/* Finite entries can still overflow on the way (a column of length
	 * above 1e308): such a matrix has no TRS, nearest or not. */
	if (!isfinite(e) || !isfinite(g->s.x) || !isfinite(g->s.y) || !isfinite(g->s.z) ||
	    !isfinite(g->r.x) || !isfinite(g->r.y) || !isfinite(g->r.z) || !isfinite(g->r.w))
		return fail_node(c, RIGD_E_NOT_FINITE, i, "matrix",
				 "matrix overflows when split into translation, rotation and scale");
	if (g->inexact && !c->o.nearest_trs)
		return fail_node(c, RIGD_E_NOT_TRS, i, "matrix",
				 "matrix is not translation * rotation * scale (shear %.3g degrees, "
				 "largest element error %.3g); import with nearest TRS to keep the "
				 "nearest one",
				 fabs(mat4_shear_deg(m) - 90), e);
	return 0;
}

/* Node i's own properties. */
static int read_node(import_ctx *c, int i)
{
	const cJSON *n = c->node_json[i], *v;
	gnode *g = &c->nodes[i];
	char why[96];
	double d[4];
	int rc;

	g->parent = -1;
	g->mesh = g->camera = g->skin = -1;
	g->fold = -1;
	g->t = vec3_make(0, 0, 0);
	g->r = quat_identity();
	g->s = vec3_make(1, 1, 1);
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "name"))) {
		if (!cJSON_IsString(v))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "name", "name is not a string");
		g->name = v->valuestring;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "children"))) {
		int k = 0;

		if (!cJSON_IsArray(v))
			return fail_node(c, RIGD_E_BAD_GLTF, i, "children",
					 "children is not an array of node indices");
		g->first_kid = c->n_kids;
		for (const cJSON *e = v->child; e; e = e->next, k++) {
			int kid = as_index(e, c->n_nodes);

			if (kid < 0) {
				index_problem(e, c->n_nodes, "nodes", why, sizeof(why));
				return fail_node(c, RIGD_E_BAD_GLTF, i, "children", "children[%d] %s", k,
						 why);
			}
			if (kid == i)
				return fail_node(c, RIGD_E_CYCLE, i, "children",
						 "lists itself as a child (children[%d])", k);
			c->kids[c->n_kids++] = kid;
		}
		g->n_kids = k;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "translation"))) {
		if ((rc = read_numbers(c, i, v, "translation", 3, d)) != 0)
			return rc;
		g->has_t = true;
		g->t = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "rotation"))) {
		quat unit;

		if ((rc = read_numbers(c, i, v, "rotation", 4, d)) != 0)
			return rc;
		g->has_r = true;
		g->r = (quat){ d[0], d[1], d[2], d[3] };
		if (quat_normalize(g->r, &unit) != 0)
			return fail_node(c, RIGD_E_ZERO_QUATERNION, i, "rotation",
					 "rotation has zero length");
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "scale"))) {
		if ((rc = read_numbers(c, i, v, "scale", 3, d)) != 0)
			return rc;
		g->has_s = true;
		g->s = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "matrix"))) {
		if (g->has_t || g->has_r || g->has_s)
			return fail_node(c, RIGD_E_BAD_GLTF, i, "matrix",
					 "has both matrix and translation/rotation/scale");
		if ((rc = read_matrix(c, i, v)) != 0)
			return rc;
	}
	{
		static const char *const keys[3] = { "mesh", "camera", "skin" };
		static const char *const plural[3] = { "meshes", "cameras", "skins" };
		int count[3] = { c->n_meshes, c->n_cameras, c->n_skins };
		int *slot[3] = { &g->mesh, &g->camera, &g->skin };

		for (int k = 0; k < 3; k++) {
			if (!(v = cJSON_GetObjectItemCaseSensitive(n, keys[k])))
				continue;
			if ((*slot[k] = as_index(v, count[k])) < 0) {
				index_problem(v, count[k], plural[k], why, sizeof(why));
				return fail_node(c, RIGD_E_BAD_GLTF, i, keys[k], "%s %s", keys[k], why);
			}
		}
	}
	return read_extras(c, i);
}

/* Every node has at most one parent and the hierarchy has no cycle. */
static int link_parents(import_ctx *c)
{
	int *stack = NULL, n_stack = 0;

	for (int i = 0; i < c->n_nodes; i++) {
		const gnode *g = &c->nodes[i];

		for (int k = 0; k < g->n_kids; k++) {
			int kid = c->kids[g->first_kid + k];
			gnode *kg = &c->nodes[kid];

			if (kg->parent == i)
				return fail_node(c, RIGD_E_BAD_GLTF, kid, "children",
						 "listed twice in the children of node %d", i);
			if (kg->parent >= 0)
				return fail_node(c, RIGD_E_BAD_GLTF, kid, "children",
						 "is a child of both node %d and node %d", kg->parent, i);
			kg->parent = i;
		}
	}
	/* With one parent each, a node no parentless node reaches hangs from a
	 * cycle: walk down from every root, then look for leftovers. */
	if (c->n_nodes && !(stack = alloc_array(c->n_nodes, sizeof(int))))
		return nomem(c);
	for (int i = 0; i < c->n_nodes; i++) {
		if (c->nodes[i].parent >= 0)
			continue;
		stack[n_stack++] = i;
		while (n_stack) {
			const gnode *g = &c->nodes[stack[--n_stack]];

			for (int k = 0; k < g->n_kids; k++) {
				int kid = c->kids[g->first_kid + k];

				c->nodes[kid].visited = true;
				stack[n_stack++] = kid;
			}
		}
		c->nodes[i].visited = true;
	}
	free(stack);
	for (int i = 0; i < c->n_nodes; i++) {
		int on_cycle = i, steps;

		if (c->nodes[i].visited)
			continue;
		/* Climbing n steps from any unreached node lands on the cycle;
		 * once round it finds the cycle's lowest index, the node named. */
		for (steps = 0; steps < c->n_nodes; steps++)
			on_cycle = c->nodes[on_cycle].parent;
		for (int k = c->nodes[on_cycle].parent, lowest = on_cycle;; k = c->nodes[k].parent) {
			if (k < lowest)
				lowest = k;
			if (k == on_cycle) {
				on_cycle = lowest;
				break;
			}
		}
		return fail_node(c, RIGD_E_CYCLE, on_cycle, "children",
				 "the children lists form a cycle through this node (it is its own "
				 "ancestor)");
	}
	return 0;
}

static int read_meshes(import_ctx *c)
{
	sset names = { 0 };
	int rc = 0;

	if (c->n_meshes == 0)
		return 0;
	if (!(c->mesh_ref = alloc_array(c->n_meshes, sizeof(char *))) ||
	    sset_init(&names, 2 * (size_t)c->n_meshes) != 0) {
		rc = nomem(c);
		goto out;
	}
	for (int i = 0; i < c->n_meshes; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->mesh_json[i], "name");
		char base[SCENE_MESH_MAX + 1], ref[SCENE_MESH_MAX + 1];

		if (v && !cJSON_IsString(v)) {
			rc = fail(c, RIGD_E_BAD_GLTF, "meshes", "mesh %d: name is not a string", i);
			goto out;
		}
		/* A name too long for a mesh reference, or shared with an earlier
		 * mesh, would merge different meshes: those get their index. */
		if (v && v->valuestring[0] && strlen(v->valuestring) <= SCENE_MESH_MAX &&
		    !sset_slot(&names, v->valuestring)->key)
			snprintf(base, sizeof(base), "%s", v->valuestring);
		else
			snprintf(base, sizeof(base), "mesh:%d", i);
		if ((rc = make_unique(&names, NULL, base, SCENE_MESH_MAX, ref)) != 0 ||
		    !(c->mesh_ref[i] = strdup(ref))) {
			rc = nomem(c);
			goto out;
		}
	}
out:
	sset_free(&names);
	return rc;
}

/* The first node using camera k, for messages (-1: none). */
static int camera_user(const import_ctx *c, int k)
{
	for (int i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].camera == k)
			return i;
	return -1;
}

/* Records an error about camera k, naming the first node that uses it. */
static int camera_fail(import_ctx *c, int code, int k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int camera_fail(import_ctx *c, int code, int k, const char *fmt, ...)
{
	char msg[EDIT_MESSAGE_MAX];
	int user = camera_user(c, k);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (user >= 0)
		return fail_node(c, code, user, "camera", "camera %d: %s", k, msg);
	return fail(c, code, "cameras", "camera %d: %s", k, msg);
}

static int camera_number(import_ctx *c, const cJSON *obj, const char *key, int k, bool required,
			 double *out, bool *present)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (present)
		*present = v != NULL;
	if (!v && !required)
		return 0;
	if (!cJSON_IsNumber(v))
		return camera_fail(c, RIGD_E_BAD_GLTF, k, "%s is %s", key,
				   v ? "not a number" : "missing");
	if (!isfinite(v->valuedouble))
		return camera_fail(c, RIGD_E_NOT_FINITE, k, "%s is not finite", key);
	*out = v->valuedouble;
	return 0;
}

static int read_cameras(import_ctx *c)
{
	if (c->n_cameras == 0)
		return 0;
	if (!(c->cameras = alloc_array(c->n_cameras, sizeof(gcamera))))
		return nomem(c);
	for (int k = 0; k < c->n_cameras; k++) {
		const cJSON *cam = c->camera_json[k];
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(cam, "type");
		gcamera *g = &c->cameras[k];
		const char *problem = NULL;
		int rc = 0;

		if (!cJSON_IsString(type) ||
		    (strcmp(type->valuestring, "perspective") != 0 &&
		     strcmp(type->valuestring, "orthographic") != 0)) {
			problem = "type is not \"perspective\" or \"orthographic\"";
		} else if (strcmp(type->valuestring, "perspective") == 0) {
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(cam, "perspective");
			double aspect;
			bool has_far = false;

			g->perspective = true;
			if (!cJSON_IsObject(p))
				problem = "perspective is missing or not an object";
			else if ((rc = camera_number(c, p, "yfov", k, true, &g->yfov, NULL)) != 0 ||
				 (rc = camera_number(c, p, "znear", k, true, &g->znear, NULL)) != 0 ||
				 (rc = camera_number(c, p, "zfar", k, false, &g->zfar, &has_far)) != 0 ||
				 (rc = camera_number(c, p, "aspectRatio", k, false, &aspect, NULL)) != 0)
				return rc;
			else if (!(g->yfov > 0 && g->yfov * (180.0 / M_PI) < 180))
				problem = "yfov must be between 0 and pi";
			else if (!(g->znear > 0))
				problem = "znear must be positive";
			else if (has_far && !(g->zfar > g->znear))
				problem = "zfar must exceed znear";
			g->fov_deg = g->yfov * (180.0 / M_PI);
			g->infinite = !has_far;
			if (!has_far)
				g->zfar = fmax(1000, 1000 * g->znear);
		} else {
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(cam, "orthographic");
			double mag = 0, zn = 0, zf = 0; /* set when read; gcc -O3 cannot tell */

			if (!cJSON_IsObject(o))
				problem = "orthographic is missing or not an object";
			else if ((rc = camera_number(c, o, "xmag", k, true, &mag, NULL)) != 0 ||
				 (rc = camera_number(c, o, "ymag", k, true, &mag, NULL)) != 0 ||
				 (rc = camera_number(c, o, "znear", k, true, &zn, NULL)) != 0 ||
				 (rc = camera_number(c, o, "zfar", k, true, &zf, NULL)) != 0)
				return rc;
			else if (!(zn >= 0 && zf > zn))
				problem = "orthographic needs 0 <= znear < zfar";
		}
		if (problem)
			return camera_fail(c, RIGD_E_BAD_GLTF, k, "%s", problem);
	}
	return 0;
}

static int read_skins(import_ctx *c)
{
	gltf_report *r = c->rep;
	char why[96];

	if (c->n_skins == 0)
		return 0;
	if (!(r->skins = alloc_array(c->n_skins, sizeof(gltf_skin_info))))
		return nomem(c);
	r->n_skins = c->n_skins;
	for (int k = 0; k < c->n_skins; k++) {
		const cJSON *skin = c->skin_json[k];
		const cJSON *joints = cJSON_GetObjectItemCaseSensitive(skin, "joints");
		const cJSON *v;
		gltf_skin_info *s = &r->skins[k];
		int j = 0;

		s->skeleton = -1;
		if ((v = cJSON_GetObjectItemCaseSensitive(skin, "name"))) {
			if (!cJSON_IsString(v))
				return fail(c, RIGD_E_BAD_GLTF, "skins", "skin %d: name is not a string", k);
			if (!(s->name = strdup(v->valuestring)))
				return nomem(c);
		}
		if ((v = cJSON_GetObjectItemCaseSensitive(skin, "skeleton")) &&
		    (s->skeleton = as_index(v, c->n_nodes)) < 0) {
			index_problem(v, c->n_nodes, "nodes", why, sizeof(why));
			return fail(c, RIGD_E_BAD_GLTF, "skins", "skin %d: skeleton %s", k, why);
		}
		if (!cJSON_IsArray(joints) || !joints->child)
			return fail(c, RIGD_E_BAD_GLTF, "skins",
				    "skin %d: joints is not a non-empty array of node indices", k);
		if (!(s->joints = alloc_array(cJSON_GetArraySize(joints), sizeof(int))))
			return nomem(c);
		for (const cJSON *e = joints->child; e; e = e->next, j++) {
			if ((s->joints[j] = as_index(e, c->n_nodes)) < 0) {
				index_problem(e, c->n_nodes, "nodes", why, sizeof(why));
				return fail(c, RIGD_E_BAD_GLTF, "skins", "skin %d: joints[%d] %s", k, j, why);
			}
			s->n_joints = j + 1;
		}
	}
	return 0;
}

/* A scene's "nodes": indices in range, each once, each without a parent.
 * With 'roots' non-NULL they are also written there. */
static int read_scene_roots(import_ctx *c, int k, int *roots, int *n_roots)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->scene_json[k], "nodes");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->scene_json[k], "name");
	char why[96];
	int j = 0;

	if (name && !cJSON_IsString(name))
		return fail(c, RIGD_E_BAD_GLTF, "scenes", "scene %d: name is not a string", k);
	if (!a) {
		*n_roots = 0;
		return 0;
	}
	if (!cJSON_IsArray(a))
		return fail(c, RIGD_E_BAD_GLTF, "scenes", "scene %d: nodes is not an array", k);
	for (const cJSON *e = a->child; e; e = e->next, j++) {
		int i = as_index(e, c->n_nodes);

		if (i < 0) {
			index_problem(e, c->n_nodes, "nodes", why, sizeof(why));
			return fail(c, RIGD_E_BAD_GLTF, "scenes", "scene %d: nodes[%d] %s", k, j, why);
		}
		if (c->nodes[i].parent >= 0)
			return fail_node(c, RIGD_E_BAD_GLTF, i, "scenes",
					 "listed as a root of scene %d but is a child of node %d", k,
					 c->nodes[i].parent);
		/* 'visited' is free again after link_parents: reuse it to find
		 * a root listed twice, then clear it. */
		if (c->nodes[i].visited) {
			for (const cJSON *f = a->child; f != e; f = f->next)
				c->nodes[as_index(f, c->n_nodes)].visited = false;
			return fail_node(c, RIGD_E_BAD_GLTF, i, "scenes",
					 "listed twice as a root of scene %d", k);
		}
		c->nodes[i].visited = true;
		if (roots)
			roots[j] = i;
	}
	for (const cJSON *e = a->child; e; e = e->next)
		c->nodes[as_index(e, c->n_nodes)].visited = false;
	*n_roots = j;
	return 0;
}

/* Picks the scene to import and lists its roots. */
static int choose_scene(import_ctx *c)
{
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(c->root, "scene");
	int chosen = -1, n;
	char why[96];

	for (int i = 0; i < c->n_nodes; i++)
		c->nodes[i].visited = false;
	for (int k = 0; k < c->n_scenes; k++) {
		int rc = read_scene_roots(c, k, NULL, &n);

		if (rc)
			return rc;
	}
	if (def && (chosen = as_index(def, c->n_scenes)) < 0) {
		index_problem(def, c->n_scenes, "scenes", why, sizeof(why));
		return fail(c, RIGD_E_BAD_GLTF, "scene", "scene %s", why);
	}
	if (c->o.scene_index >= 0) {
		if (c->o.scene_index >= c->n_scenes)
			return fail(c, RIGD_E_NOT_FOUND, "scene", "no scene %d: the file has %d",
				    c->o.scene_index, c->n_scenes);
		chosen = c->o.scene_index;
	} else if (c->o.scene_name) {
		char q[LABEL_NAME_MAX + 4];

		chosen = -1;
		for (int k = 0; k < c->n_scenes && chosen < 0; k++) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->scene_json[k], "name");

			if (cJSON_IsString(name) && strcmp(name->valuestring, c->o.scene_name) == 0)
				chosen = k;
		}
		if (chosen < 0)
			return fail(c, RIGD_E_NOT_FOUND, "scene", "no scene named '%s'",
				    quoted(c->o.scene_name, q));
	} else if (chosen < 0 && c->n_scenes > 0) {
		chosen = 0;
	}
	if (c->n_nodes && !(c->roots = alloc_array(c->n_nodes, sizeof(int))))
		return nomem(c);
	c->rep->scene_index = chosen;
	if (chosen < 0) {
		/* No scenes at all: every node without a parent is a root. */
		c->n_roots = 0;
		for (int i = 0; i < c->n_nodes; i++)
			if (c->nodes[i].parent < 0)
				c->roots[c->n_roots++] = i;
		return 0;
	}
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->scene_json[chosen], "name");

		if (cJSON_IsString(name) && !(c->rep->scene_name = strdup(name->valuestring)))
			return nomem(c);
	}
	return read_scene_roots(c, chosen, c->roots, &c->n_roots);
}

static bool same_quat_bits(quat a, quat b)
{
	return bits_equal(a.x, b.x) && bits_equal(a.y, b.y) && bits_equal(a.z, b.z) &&
	       bits_equal(a.w, b.w);
}

static bool vec3_bits_equal(vec3 a, vec3 b)
{
	return bits_equal(a.x, b.x) && bits_equal(a.y, b.y) && bits_equal(a.z, b.z);
}

/*
 * Recognises the pivot pairs gltf_export writes: an outer node with
 * extras.rigd.pivot p (non-zero) and id, TRS only, no mesh, camera or skin,
 * and exactly one child; that child with extras.rigd.pivot_of naming the
 * outer's id, translation exactly 0 - p and no rotation, scale or matrix. A
 * pair that no longer reads so (edited by another tool) stays two nodes,
 * which keeps every world matrix.
 */
static void find_pivot_pairs(import_ctx *c)
{
	for (int i = 0; i < c->n_nodes; i++) {
		gnode *o = &c->nodes[i];
		const gnode *in;
		int kid;

		if (!o->x.has_pivot)
			continue;
		if (vec3_bits_equal(o->x.pivot, vec3_make(0, 0, 0)))
			continue;
		if (!o->x.id || o->has_matrix || o->mesh >= 0 || o->camera >= 0 || o->skin >= 0 ||
		    o->n_kids != 1)
			goto unfolded;
		kid = c->kids[o->first_kid];
		in = &c->nodes[kid];
		if (!in->x.pivot_of || strcmp(in->x.pivot_of, o->x.id) != 0 || in->has_matrix ||
		    in->has_r || in->has_s || !in->has_t ||
		    !vec3_bits_equal(in->t, vec3_sub(vec3_make(0, 0, 0), o->x.pivot)))
			goto unfolded;
		o->fold = kid;
		continue;
unfolded:
		{
			char label[LABEL_NAME_MAX + 32];

			node_label(c, i, label, sizeof(label));
			warn(c, "%s: extras.rigd.pivot ignored: the pivot pair was changed, so it is "
				"imported as two nodes", label);
		}
	}
}

/* Cuts 'name' to at most SCENE_NAME_MAX bytes at a UTF-8 boundary. */
static size_t name_len(const char *name)
{
	size_t n = strlen(name);

	if (n <= SCENE_NAME_MAX)
		return n;
	n = SCENE_NAME_MAX;
	while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* The id a node asks for before it is made unique. */
static void base_id(const import_ctx *c, int i, char *out)
{
	const gnode *g = &c->nodes[i];
	size_t n = 0;
	bool alnum = false;

	if (g->x.id) {
		snprintf(out, SCENE_ID_MAX + 1, "%s", g->x.id);
		return;
	}
	if (g->name) {
		for (const char *p = g->name; *p && n < SCENE_ID_MAX; p++) {
			char ch = *p;

			if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
				out[n++] = ch;
				alnum = true;
			} else if (ch == '_' || ch == '.' || ch == ':' || ch == '-') {
				out[n++] = ch;
			} else if (n == 0 || out[n - 1] != '_') {
				/* One '_' for a run of other bytes (a UTF-8 character
				 * is several). */
				out[n++] = '_';
			}
		}
	}
	out[n] = '\0';
	if (!alnum)
		snprintf(out, SCENE_ID_MAX + 1, "node_%d", i);
}

/* Camera values from extras.rigd of a node that is no glTF camera. */
static int extras_camera(import_ctx *c, int i, edit_op *op)
{
	const rigd_extras *x = &c->nodes[i].x;
	node_props def = node_props_default();
	double fov = x->has_fov ? x->fov_deg : def.fov_deg;
	double znear = x->has_near ? x->znear : def.znear;
	double zfar = x->has_far ? x->zfar : def.zfar;

	if (!(fov > 0 && fov < 180 && znear > 0 && zfar > znear))
		return fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
				 "extras.rigd camera values need 0 < fov < 180 and 0 < near < far");
	if (x->has_fov)
		op->fov_deg = fov, op->fields |= EDIT_F_FOV;
	if (x->has_near)
		op->znear = znear, op->fields |= EDIT_F_NEAR;
	if (x->has_far)
		op->zfar = zfar, op->fields |= EDIT_F_FAR;
	return 0;
}

/* Appends the create op for glTF node i (the outer node when it folds a
 * pivot pair) with id 'id' under 'parent_id' (NULL: a root). */
static int add_op(import_ctx *c, int i, const char *id, const char *parent_id)
{
	const gnode *g = &c->nodes[i];
	const gnode *geo = g->fold >= 0 ? &c->nodes[g->fold] : g; /* carries mesh and camera */
	const rigd_extras *x = &g->x;
	char label[LABEL_NAME_MAX + 32];
	int kind = NODE_GROUP, rc;
	edit_op *op;

	node_label(c, i, label, sizeof(label));
	if (!(op = edit_batch_add(c->out, EDIT_CREATE, id)))
		return nomem(c);
	if (parent_id && edit_op_set_parent(op, parent_id) != 0)
		return fail(c, RIGD_E_BAD_ID, "parent", "%s", err_str(RIGD_E_BAD_ID));
	if (g->name && !x->unnamed) {
		char name[SCENE_NAME_MAX + 1];
		size_t n = name_len(g->name);

		memcpy(name, g->name, n);
		name[n] = '\0';
		if (n < strlen(g->name))
			warn(c, "%s: name cut to %d bytes", label, SCENE_NAME_MAX);
		if (edit_op_set_name(op, name) != 0)
			return nomem(c);
	}
	if (g->fold >= 0) {
		/* The outer node carries t + p. The exact t rides along in the
		 * extras, used while t + p still gives the outer translation bit
		 * for bit (else the file was edited: t = outer - p). */
		op->pivot = x->pivot;
		op->t = vec3_sub(g->t, x->pivot);
		if (x->has_t && vec3_bits_equal(vec3_add(x->t, x->pivot), g->t))
			op->t = x->t;
		op->fields |= EDIT_F_T | EDIT_F_PIVOT;
	} else if (g->has_t || g->has_matrix) {
		op->t = g->t;
		op->fields |= EDIT_F_T;
	}
	if (g->has_r || g->has_matrix) {
		quat q;

		op->r = g->r;
		op->fields |= EDIT_F_R;
		/* The exact rotation rides along in the extras while it still
		 * normalises to the glTF rotation bit for bit. */
		if (g->has_r && x->has_r && quat_normalize(x->r, &q) == 0 && same_quat_bits(q, g->r))
			op->r = x->r;
	}
	if (g->has_s || g->has_matrix)
		op->s = g->s, op->fields |= EDIT_F_S;
	if (geo->mesh >= 0) {
		if (edit_op_set_mesh(op, c->mesh_ref[geo->mesh]) != 0)
			return nomem(c);
		kind = NODE_MESH;
	}
	if (geo->camera >= 0) {
		const gcamera *cam = &c->cameras[geo->camera];

		kind = NODE_CAMERA;
		if (cam->perspective) {
			op->fov_deg = cam->fov_deg;
			/* The exact degrees ride along in the extras while they
			 * still give yfov bit for bit. */
			if (x->has_fov && bits_equal(x->fov_deg * (M_PI / 180.0), cam->yfov))
				op->fov_deg = x->fov_deg;
			op->znear = cam->znear;
			op->zfar = cam->zfar;
			op->fields |= EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR;
			if (cam->infinite)
				warn(c, "%s: camera %d has an infinite far plane; far set to %g", label,
				     geo->camera, cam->zfar);
		} else {
			warn(c, "%s: camera %d is orthographic; rigd cameras are perspective, so it "
				"keeps the default field of view and planes", label, geo->camera);
		}
	} else if (x->has_fov || x->has_near || x->has_far) {
		if ((rc = extras_camera(c, i, op)) != 0)
			return rc;
	}
	if (x->kind >= 0)
		kind = x->kind;
	if (kind != NODE_GROUP)
		op->node_kind = kind, op->fields |= EDIT_F_KIND;
	if (x->has_bounds)
		op->has_bounds = true, op->bounds = x->bounds, op->fields |= EDIT_F_BOUNDS;
	if (x->visible >= 0)
		op->visible = x->visible == 1, op->fields |= EDIT_F_VISIBLE;
	return 0;
}

/* Walks the chosen scene in depth-first preorder (explicit stack) and
 * appends one create op per rigd node. */
static int walk(import_ctx *c)
{
	gltf_report *r = c->rep;
	sset ids = { 0 };
	int *stack = NULL, *depth = NULL, n_stack = 0, rc = 0;

	if (c->n_nodes == 0)
		return 0;
	if (!(stack = alloc_array(c->n_nodes, sizeof(int))) ||
	    !(depth = alloc_array(c->n_nodes, sizeof(int))) ||
	    sset_init(&ids, 2 * (size_t)c->n_nodes + 1) != 0) {
		rc = nomem(c);
		goto out;
	}
	/* The node the roots go under is taken, whether or not the caller
	 * named the scene that holds it. */
	if (c->o.parent && c->o.parent[0] && !sset_add(&ids, c->o.parent)) {
		rc = nomem(c);
		goto out;
	}
	for (int k = c->n_roots - 1; k >= 0; k--) {
		stack[n_stack] = c->roots[k];
		depth[n_stack++] = 0;
	}
	while (n_stack) {
		int i = stack[--n_stack], d = depth[n_stack];
		const gnode *g = &c->nodes[i];
		const gnode *src = g->fold >= 0 ? &c->nodes[g->fold] : g; /* holds the children */
		gltf_node_info *info = &r->nodes[i];
		const char *parent_id = c->o.parent && c->o.parent[0] ? c->o.parent : NULL;
		char base[SCENE_ID_MAX + 1];

		if (d > c->o.max_depth) {
			rc = fail_node(c, RIGD_E_LIMIT, i, "children",
				       "deeper than the limit of %d levels below a root", c->o.max_depth);
			goto out;
		}
		base_id(c, i, base);
		if ((rc = make_unique(&ids, c->o.existing, base, SCENE_ID_MAX, info->id)) != 0) {
			rc = nomem(c);
			goto out;
		}
		info->role = GLTF_NODE_PLAIN;
		if (g->fold >= 0) {
			info->role = GLTF_NODE_PIVOT_OUTER;
			r->nodes[g->fold].role = GLTF_NODE_PIVOT_INNER;
			memcpy(r->nodes[g->fold].id, info->id, sizeof(info->id));
			r->n_pivots++;
		}
		if (g->parent >= 0)
			parent_id = r->nodes[g->parent].id;
		if ((rc = add_op(c, i, info->id, parent_id)) != 0)
			goto out;
		r->n_created++;
		if (g->has_matrix) {
			r->n_matrix++;
			r->max_matrix_err = fmax(r->max_matrix_err, g->matrix_err);
			if (g->inexact) {
				char label[LABEL_NAME_MAX + 32];

				r->n_inexact++;
				node_label(c, i, label, sizeof(label));
				warn(c, "%s: matrix kept as the nearest TRS (largest element error %.3g)",
				     label, g->matrix_err);
			}
		}
		for (int k = src->n_kids - 1; k >= 0; k--) {
			stack[n_stack] = c->kids[src->first_kid + k];
			depth[n_stack++] = d + 1;
		}
	}
out:
	sset_free(&ids);
	free(stack);
	free(depth);
	return rc;
}

/* Reads "MAJOR.MINOR" (digits only, as glTF 2.0 section 3.2 writes it). */
static bool parse_version(const char *v, long *major, long *minor)
{
	char *end;

	if (!(v[0] >= '0' && v[0] <= '9'))
		return false;
	*major = strtol(v, &end, 10);
	if (*end != '.' || !(end[1] >= '0' && end[1] <= '9'))
		return false;
	*minor = strtol(end + 1, &end, 10);
	return *end == '\0';
}

static int check_asset(import_ctx *c)
{
	const cJSON *asset = cJSON_GetObjectItemCaseSensitive(c->root, "asset");
	const cJSON *v, *req;
	char q[LABEL_NAME_MAX + 4];
	long major, minor;

	if (!cJSON_IsObject(asset))
		return fail(c, RIGD_E_BAD_GLTF, "asset", "asset is missing or not an object");
	v = cJSON_GetObjectItemCaseSensitive(asset, "version");
	if (!cJSON_IsString(v))
		return fail(c, RIGD_E_BAD_GLTF, "asset", "asset.version is missing or not a string");
	if (!parse_version(v->valuestring, &major, &minor) || major != 2)
		return fail(c, RIGD_E_BAD_GLTF, "asset", "asset.version is '%s': only glTF 2.x is read",
			    quoted(v->valuestring, q));
	if ((v = cJSON_GetObjectItemCaseSensitive(asset, "minVersion")) &&
	    (!cJSON_IsString(v) || !parse_version(v->valuestring, &major, &minor) || major != 2 ||
	     minor > 0))
		return fail(c, RIGD_E_BAD_GLTF, "asset",
			    "asset.minVersion is not 2.0: the file needs a newer reader");
	if ((req = cJSON_GetObjectItemCaseSensitive(c->root, "extensionsRequired"))) {
		if (!cJSON_IsArray(req))
			return fail(c, RIGD_E_BAD_GLTF, "extensionsRequired",
				    "extensionsRequired is not an array");
		/* No extension changes how node transforms compose, and rigd
		 * reads nothing but nodes: say what was ignored. */
		for (const cJSON *e = req->child; e; e = e->next)
			if (cJSON_IsString(e))
				warn(c, "extension %s is required by the file; rigd reads only the node "
					"hierarchy and ignores it", quoted(e->valuestring, q));
	}
	return 0;
}

gltf_import_opts gltf_import_opts_default(void)
{
	return (gltf_import_opts){ .scene_index = -1 };
}

void gltf_report_init(gltf_report *r)
{
	*r = (gltf_report){ .scene_index = -1, .bad_node = -1 };
}

void gltf_report_release(gltf_report *r)
{
	if (!r)
		return;
	free(r->scene_name);
	free(r->nodes);
	for (int k = 0; k < r->n_skins; k++) {
		free(r->skins[k].name);
		free(r->skins[k].joints);
	}
	free(r->skins);
	for (int k = 0; k < r->n_warnings; k++)
		free(r->warnings[k]);
	free(r->warnings);
	gltf_report_init(r);
}

int gltf_import(const char *data, size_t len, const gltf_import_opts *opts, edit_batch *out,
		gltf_report *report, edit_error *err)
{
	import_ctx c = { 0 };
	gltf_report local;
	int rc, total_kids = 0;

	edit_batch_init(out);
	edit_error_clear(err);
	gltf_report_init(&local);
	if (report)
		gltf_report_init(report);
	c.o = opts ? *opts : gltf_import_opts_default();
	if (!(c.o.matrix_tol > 0) || !isfinite(c.o.matrix_tol))
		c.o.matrix_tol = GLTF_DEFAULT_MATRIX_TOL;
	if (c.o.max_nodes <= 0)
		c.o.max_nodes = GLTF_DEFAULT_MAX_NODES;
	if (c.o.max_depth <= 0)
		c.o.max_depth = GLTF_DEFAULT_MAX_DEPTH;
	c.err = err;
	c.out = out;
	c.rep = report ? report : &local;

	if (c.o.parent && c.o.parent[0] && !scene_id_valid(c.o.parent)) {
		rc = fail(&c, RIGD_E_BAD_ID, "parent", "%s", err_str(RIGD_E_BAD_ID));
		goto out;
	}
	if (!data || len == 0) {
		rc = fail(&c, RIGD_E_BAD_JSON, "json", "the document is empty");
		goto out;
	}
	if (len >= 4 && rd32((const unsigned char *)data) == GLB_MAGIC) {
		if ((rc = unwrap_glb(&c, (const unsigned char *)data, len, &data, &len)) != 0)
			goto out;
	}
	if ((rc = parse_json(&c, data, len)) != 0 || (rc = check_asset(&c)) != 0)
		goto out;
	if ((rc = top_array(&c, "nodes", &c.node_json, &c.n_nodes)) != 0)
		goto out;
	if (c.n_nodes > c.o.max_nodes) {
		rc = fail(&c, RIGD_E_LIMIT, "nodes", "the file has %d nodes; the limit is %d", c.n_nodes,
			  c.o.max_nodes);
		goto out;
	}
	if ((rc = top_array(&c, "meshes", &c.mesh_json, &c.n_meshes)) != 0 ||
	    (rc = top_array(&c, "cameras", &c.camera_json, &c.n_cameras)) != 0 ||
	    (rc = top_array(&c, "skins", &c.skin_json, &c.n_skins)) != 0 ||
	    (rc = top_array(&c, "scenes", &c.scene_json, &c.n_scenes)) != 0)
		goto out;
	for (int i = 0; i < c.n_nodes; i++) {
		const cJSON *kids = cJSON_GetObjectItemCaseSensitive(c.node_json[i], "children");

		if (cJSON_IsArray(kids)) {
			int n = cJSON_GetArraySize(kids);

			if (n > INT_MAX - total_kids) {
				rc = fail(&c, RIGD_E_LIMIT, "nodes", "too many children in all");
				goto out;
			}
			total_kids += n;
		}
	}
	if ((c.n_nodes && !(c.nodes = alloc_array(c.n_nodes, sizeof(gnode)))) ||
	    (total_kids && !(c.kids = alloc_array(total_kids, sizeof(int))))) {
		rc = nomem(&c);
		goto out;
	}
	for (int i = 0; i < c.n_nodes; i++)
		if ((rc = read_node(&c, i)) != 0)
			goto out;
	if ((rc = link_parents(&c)) != 0 || (rc = read_meshes(&c)) != 0 ||
	    (rc = read_cameras(&c)) != 0 || (rc = read_skins(&c)) != 0 ||
	    (rc = choose_scene(&c)) != 0)
		goto out;
	find_pivot_pairs(&c);
	c.rep->n_nodes = c.n_nodes;
	if (c.n_nodes && !(c.rep->nodes = alloc_array(c.n_nodes, sizeof(gltf_node_info)))) {
		rc = nomem(&c);
		goto out;
	}
	for (int i = 0; i < c.n_nodes; i++) {
		gltf_node_info *info = &c.rep->nodes[i];
		const gnode *g = &c.nodes[i];

		info->role = GLTF_NODE_SKIPPED;
		info->mesh = g->mesh;
		info->camera = g->camera;
		info->skin = g->skin;
		info->from_matrix = g->has_matrix;
		info->matrix_err = g->has_matrix ? g->matrix_err : 0;
		info->matrix_exact = g->has_matrix && !g->inexact;
	}
	c.rep->n_roots = c.n_roots;
	rc = walk(&c);
out:
	if (rc) {
		int bad = c.rep->bad_node;

		edit_batch_release(out);
		gltf_report_release(c.rep);
		c.rep->bad_node = bad;
	}
	gltf_report_release(&local);
	cJSON_Delete(c.root);
	free(c.node_json);
	free(c.mesh_json);
	free(c.camera_json);
	free(c.skin_json);
	free(c.scene_json);
	free(c.nodes);
	free(c.kids);
	if (c.mesh_ref)
		for (int i = 0; i < c.n_meshes; i++)
			free(c.mesh_ref[i]);
	free(c.mesh_ref);
	free(c.cameras);
	free(c.roots);
	return rc;
}

/* ---------- the report as JSON ---------- */

static void sb_id_or_null(sbuf *b, const gltf_report *r, int node)
{
	if (node >= 0 && node < r->n_nodes && r->nodes[node].role != GLTF_NODE_SKIPPED)
		sb_str(b, r->nodes[node].id);
	else
		sb_puts(b, "null");
}

int gltf_report_json(const gltf_report *r, char **out, size_t *out_len)
{
	sbuf b = { 0 };
	bool first;

	sb_puts(&b, "{\"scene\":");
	if (r->scene_index >= 0)
		sb_printf(&b, "%d", r->scene_index);
	else
		sb_puts(&b, "null");
	sb_puts(&b, ",\"scene_name\":");
	if (r->scene_name)
		sb_str(&b, r->scene_name);
	else
		sb_puts(&b, "null");
	sb_printf(&b, ",\"created\":%d,\"roots\":%d,\"pivots\":%d,\"ids\":[", r->n_created,
		  r->n_roots, r->n_pivots);
	for (int i = 0; i < r->n_nodes; i++) {
		if (i)
			sb_puts(&b, ",");
		sb_id_or_null(&b, r, i);
	}
	sb_puts(&b, "],\"matrix_nodes\":[");
	first = true;
	for (int i = 0; i < r->n_nodes; i++) {
		const gltf_node_info *n = &r->nodes[i];

		if (!n->from_matrix || n->role == GLTF_NODE_SKIPPED)
			continue;
		sb_printf(&b, "%s{\"node\":%d,\"id\":", first ? "" : ",", i);
		sb_str(&b, n->id);
		sb_puts(&b, ",\"error\":");
		sb_num(&b, n->matrix_err);
		sb_printf(&b, ",\"exact\":%s}", n->matrix_exact ? "true" : "false");
		first = false;
	}
	sb_puts(&b, "],\"skins\":[");
	for (int k = 0; k < r->n_skins; k++) {
		const gltf_skin_info *s = &r->skins[k];

		sb_printf(&b, "%s{\"skin\":%d,\"name\":", k ? "," : "", k);
		if (s->name)
			sb_str(&b, s->name);
		else
			sb_puts(&b, "null");
		sb_puts(&b, ",\"skeleton\":");
		sb_id_or_null(&b, r, s->skeleton);
		sb_puts(&b, ",\"joints\":[");
		for (int j = 0; j < s->n_joints; j++) {
			if (j)
				sb_puts(&b, ",");
			sb_id_or_null(&b, r, s->joints[j]);
		}
		sb_puts(&b, "],\"used_by\":[");
		first = true;
		for (int i = 0; i < r->n_nodes; i++) {
			if (r->nodes[i].skin != k || r->nodes[i].role == GLTF_NODE_SKIPPED)
				continue;
			if (!first)
				sb_puts(&b, ",");
			sb_str(&b, r->nodes[i].id);
			first = false;
		}
		sb_puts(&b, "]}");
	}
	sb_puts(&b, "],\"warnings\":[");
	for (int k = 0; k < r->n_warnings; k++) {
		if (k)
			sb_puts(&b, ",");
		sb_str(&b, r->warnings[k]);
	}
	if (r->n_warnings_dropped)
		sb_printf(&b, "%s\"... and %d more warnings\"", r->n_warnings ? "," : "",
			  r->n_warnings_dropped);
	sb_puts(&b, "]}");
	return sb_take(&b, out, out_len);
}

/* ====================================================================== */
/* Export                                                                  */
/* ====================================================================== */

/* The unit box every mesh reference is written as: 8 corners, 12 triangles
 * wound counter-clockwise seen from outside. */
static const float box_positions[8][3] = {
	{ -0.5f, -0.5f, -0.5f }, { 0.5f, -0.5f, -0.5f }, { 0.5f, 0.5f, -0.5f }, { -0.5f, 0.5f, -0.5f },
	{ -0.5f, -0.5f, 0.5f },  { 0.5f, -0.5f, 0.5f },  { 0.5f, 0.5f, 0.5f },  { -0.5f, 0.5f, 0.5f },
};
static const uint16_t box_indices[36] = {
	0, 2, 1, 0, 3, 2, /* -z */
	4, 5, 6, 4, 6, 7, /* +z */
	0, 1, 5, 0, 5, 4, /* -y */
	3, 7, 6, 3, 6, 2, /* +y */
	0, 4, 7, 0, 7, 3, /* -x */
	1, 2, 6, 1, 6, 5, /* +x */
};
#define BOX_POSITION_BYTES (sizeof(box_positions))  /* 96 */
#define BOX_INDEX_BYTES (sizeof(box_indices))       /* 72 */
#define BOX_BYTES (BOX_POSITION_BYTES + BOX_INDEX_BYTES)

/* The box buffer as a base64 data URI (glTF buffers are little-endian). */
static void sb_box_uri(sbuf *b)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char raw[BOX_BYTES];
	size_t n = 0;

	for (int v = 0; v < 8; v++) {
		for (int k = 0; k < 3; k++) {
			uint32_t bits;

			memcpy(&bits, &box_positions[v][k], sizeof(bits));
			for (int byte = 0; byte < 4; byte++)
				raw[n++] = (unsigned char)(bits >> (8 * byte));
		}
	}
	for (int i = 0; i < 36; i++) {
		raw[n++] = (unsigned char)(box_indices[i] & 0xFF);
		raw[n++] = (unsigned char)(box_indices[i] >> 8);
	}
	sb_puts(b, "data:application/octet-stream;base64,");
	for (size_t i = 0; i < n; i += 3) {
		uint32_t word = (uint32_t)raw[i] << 16;
		char quad[4];

		if (i + 1 < n)
			word |= (uint32_t)raw[i + 1] << 8;
		if (i + 2 < n)
			word |= raw[i + 2];
		quad[0] = digits[(word >> 18) & 63];
		quad[1] = digits[(word >> 12) & 63];
		quad[2] = i + 1 < n ? digits[(word >> 6) & 63] : '=';
		quad[3] = i + 2 < n ? digits[word & 63] : '=';
		sb_put(b, quad, 4);
	}
}

/*
 * A quaternion that the scene's quat_normalize turns into 'stored' bit for
 * bit, when 'stored' itself is not one (normalising a unit quaternion may
 * move it by an ulp). quat_normalize first divides by the largest
 * component, so every stored value has a preimage whose largest component
 * is exactly +-1: 'stored' divided by that component, give or take a few
 * ulps on the other three, which are searched nearest first (two ulps each
 * way finds one in practice). Returns false when there is none; the import
 * is then an ulp off.
 */
static bool rotation_preimage(quat stored, quat *out)
{
	static const int offset[5] = { 0, 1, -1, 2, -2 };
	double *r = &stored.x;
	int big = 0;
	quat base, q;

	for (int k = 1; k < 4; k++)
		if (fabs(r[k]) > fabs(r[big]))
			big = k;
	for (int k = 0; k < 4; k++)
		(&base.x)[k] = k == big ? copysign(1.0, r[k]) : r[k] / fabs(r[big]);
	for (int m = 0; m < 125; m++) {
		quat c = base;
		int digits = m;

		for (int k = 0; k < 4; k++) {
			double *v = &c.x + k;
			int steps;

			if (k == big)
				continue;
			steps = offset[digits % 5];
			digits /= 5;
			for (; steps > 0; steps--)
				*v = nextafter(*v, INFINITY);
			for (; steps < 0; steps++)
				*v = nextafter(*v, -INFINITY);
		}
		if (quat_normalize(c, &q) == 0 && same_quat_bits(q, stored)) {
			*out = c;
			return true;
		}
	}
	return false;
}

static bool is_zero_bits(vec3 v)
{
	return vec3_bits_equal(v, vec3_make(0, 0, 0));
}

typedef struct export_ctx {
	const scene *s;
	sbuf b;
	int *gidx;      /* by preorder position: the glTF index of the (outer) node */
	int *mesh_of;   /* by position: glTF mesh index or -1 */
	int *camera_of; /* by position: glTF camera index or -1 */
} export_ctx;

/* The children list of rigd node 'node' as glTF indices (nothing when it
 * has none). */
static void put_children(export_ctx *x, int node)
{
	int n = scene_child_count(x->s, node);

	if (n == 0)
		return;
	sb_puts(&x->b, ", \"children\": [");
	for (int k = 0; k < n; k++)
		sb_printf(&x->b, "%s%d", k ? ", " : "",
			  x->gidx[scene_pos(x->s, scene_child_at(x->s, node, k))]);
	sb_puts(&x->b, "]");
}

static void put_geometry(export_ctx *x, int pos)
{
	if (x->mesh_of[pos] >= 0)
		sb_printf(&x->b, ", \"mesh\": %d", x->mesh_of[pos]);
	if (x->camera_of[pos] >= 0)
		sb_printf(&x->b, ", \"camera\": %d", x->camera_of[pos]);
}

/* extras.rigd of a node: what glTF has no field for. */
static void put_extras(export_ctx *x, int node, const node_props *p, bool pair)
{
	sbuf *b = &x->b;
	node_props def = node_props_default();

	sb_puts(b, ", \"extras\": {\"rigd\": {\"id\": ");
	sb_str(b, scene_id(x->s, node));
	sb_printf(b, ", \"kind\": \"%s\"", edit_kind_name(p->kind));
	{
		/* glTF gets the stored unit quaternion; when the scene would not
		 * store that same value again, the one it would ride along. */
		quat q, pre;

		if (quat_normalize(p->r, &q) == 0 && !same_quat_bits(q, p->r) &&
		    rotation_preimage(p->r, &pre)) {
			sb_puts(b, ", \"r\": ");
			sb_vec(b, &pre.x, 4);
		}
	}
	if (pair) {
		sb_puts(b, ", \"pivot\": ");
		sb_vec(b, &p->pivot.x, 3);
		sb_puts(b, ", \"t\": ");
		sb_vec(b, &p->t.x, 3);
	}
	if (p->has_bounds) {
		sb_puts(b, ", \"bounds\": {\"min\": ");
		sb_vec(b, &p->bounds.min.x, 3);
		sb_puts(b, ", \"max\": ");
		sb_vec(b, &p->bounds.max.x, 3);
		sb_puts(b, "}");
	}
	if (!p->visible)
		sb_puts(b, ", \"visible\": false");
	if (!p->name)
		sb_puts(b, ", \"unnamed\": true");
	if (p->kind == NODE_CAMERA) {
		/* yfov in radians does not always give the degrees back bit for
		 * bit: keep them. near and far travel exactly in the camera. */
		sb_puts(b, ", \"fov\": ");
		sb_num(b, p->fov_deg);
	} else if (!bits_equal(p->fov_deg, def.fov_deg) || !bits_equal(p->znear, def.znear) ||
		   !bits_equal(p->zfar, def.zfar)) {
		sb_puts(b, ", \"fov\": ");
		sb_num(b, p->fov_deg);
		sb_puts(b, ", \"near\": ");
		sb_num(b, p->znear);
		sb_puts(b, ", \"far\": ");
		sb_num(b, p->zfar);
	}
	sb_puts(b, "}}");
}

/* One rigd node: one glTF node, or the pivot pair. */
static void put_node(export_ctx *x, int pos)
{
	sbuf *b = &x->b;
	int node = scene_at(x->s, pos);
	node_props p;
	bool pair;
	vec3 t;

	scene_props(x->s, node, &p);
	pair = !is_zero_bits(p.pivot);
	t = pair ? vec3_add(p.t, p.pivot) : p.t;
	sb_puts(b, "    {\"name\": ");
	sb_str(b, p.name ? p.name : scene_id(x->s, node));
	if (!is_zero_bits(t)) {
		sb_puts(b, ", \"translation\": ");
		sb_vec(b, &t.x, 3);
	}
	if (!same_quat_bits(p.r, quat_identity())) {
		sb_puts(b, ", \"rotation\": ");
		sb_vec(b, &p.r.x, 4);
	}
	if (!vec3_bits_equal(p.s, vec3_make(1, 1, 1))) {
		sb_puts(b, ", \"scale\": ");
		sb_vec(b, &p.s.x, 3);
	}
	if (pair) {
		vec3 back = vec3_sub(vec3_make(0, 0, 0), p.pivot);

		sb_printf(b, ", \"children\": [%d]", x->gidx[pos] + 1);
		put_extras(x, node, &p, true);
		sb_puts(b, "},\n    {\"name\": ");
		{
			const char *base = p.name ? p.name : scene_id(x->s, node);
			size_t n = strlen(base);
			char *inner = malloc(n + sizeof(".pivot"));

			if (!inner) {
				b->failed = true;
				return;
			}
			memcpy(inner, base, n);
			memcpy(inner + n, ".pivot", sizeof(".pivot"));
			sb_str(b, inner);
			free(inner);
		}
		sb_puts(b, ", \"translation\": ");
		sb_vec(b, &back.x, 3);
		put_geometry(x, pos);
		put_children(x, node);
		sb_puts(b, ", \"extras\": {\"rigd\": {\"pivot_of\": ");
		sb_str(b, scene_id(x->s, node));
		sb_puts(b, "}}}");
	} else {
		put_geometry(x, pos);
		put_children(x, node);
		put_extras(x, node, &p, false);
		sb_puts(b, "}");
	}
}

int gltf_export(const scene *s, const gltf_export_opts *opts, char **out_json, size_t *out_len)
{
	export_ctx x = { .s = s };
	sset meshes = { 0 };
	const char **mesh_names = NULL;
	int n = scene_count(s), n_gltf = 0, n_meshes = 0, n_cameras = 0, n_roots, rc = 0;
	sbuf *b = &x.b;

	if (n > 0 && (!(x.gidx = alloc_array(n, sizeof(int))) ||
		      !(x.mesh_of = alloc_array(n, sizeof(int))) ||
		      !(x.camera_of = alloc_array(n, sizeof(int))) ||
		      !(mesh_names = alloc_array(n, sizeof(char *))))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	if (sset_init(&meshes, (size_t)n) != 0) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	for (int pos = 0; pos < n; pos++) {
		node_props p;

		scene_props(s, scene_at(s, pos), &p);
		if (n_gltf > INT_MAX - 2) {
			rc = RIGD_E_LIMIT;
			goto out;
		}
		x.gidx[pos] = n_gltf;
		n_gltf += is_zero_bits(p.pivot) ? 1 : 2;
		x.mesh_of[pos] = -1;
		x.camera_of[pos] = p.kind == NODE_CAMERA ? n_cameras++ : -1;
		if (p.mesh) {
			sset_entry *e = sset_slot(&meshes, p.mesh);

			if (!e->key) {
				if (!(e = sset_add(&meshes, p.mesh))) {
					rc = RIGD_E_NOMEM;
					goto out;
				}
				/* The slot's counter holds the glTF mesh index. */
				e->next = n_meshes;
				mesh_names[n_meshes++] = e->key;
			}
			x.mesh_of[pos] = e->next;
		}
	}

	sb_puts(b, "{\n  \"asset\": {\"version\": \"2.0\", \"generator\": ");
	sb_str(b, opts && opts->generator ? opts->generator : "rigd");
	sb_puts(b, "},\n  \"scene\": 0,\n  \"scenes\": [{");
	if (opts && opts->scene_name) {
		sb_puts(b, "\"name\": ");
		sb_str(b, opts->scene_name);
	}
	n_roots = scene_child_count(s, -1);
	if (n_roots > 0) {
		sb_printf(b, "%s\"nodes\": [", opts && opts->scene_name ? ", " : "");
		for (int k = 0; k < n_roots; k++)
			sb_printf(b, "%s%d", k ? ", " : "", x.gidx[scene_pos(s, scene_child_at(s, -1, k))]);
		sb_puts(b, "]");
	}
	sb_puts(b, "}]");
	if (n > 0) {
		sb_puts(b, ",\n  \"nodes\": [\n");
		for (int pos = 0; pos < n; pos++) {
			put_node(&x, pos);
			sb_puts(b, pos + 1 < n ? ",\n" : "\n");
		}
		sb_puts(b, "  ]");
	}
	if (n_meshes > 0) {
		sb_puts(b, ",\n  \"meshes\": [\n");
		for (int k = 0; k < n_meshes; k++) {
			sb_puts(b, "    {\"name\": ");
			sb_str(b, mesh_names[k]);
			sb_puts(b, ", \"primitives\": [{\"attributes\": {\"POSITION\": 0}, \"indices\": 1}]}");
			sb_puts(b, k + 1 < n_meshes ? ",\n" : "\n");
		}
		sb_puts(b, "  ]");
	}
	if (n_cameras > 0) {
		bool first = true;

		sb_puts(b, ",\n  \"cameras\": [\n");
		for (int pos = 0; pos < n; pos++) {
			node_props p;

			if (x.camera_of[pos] < 0)
				continue;
			scene_props(s, scene_at(s, pos), &p);
			sb_puts(b, first ? "    {\"name\": " : ",\n    {\"name\": ");
			sb_str(b, scene_id(s, scene_at(s, pos)));
			sb_puts(b, ", \"type\": \"perspective\", \"perspective\": {\"yfov\": ");
			sb_num(b, p.fov_deg * (M_PI / 180.0));
			sb_puts(b, ", \"znear\": ");
			sb_num(b, p.znear);
			sb_puts(b, ", \"zfar\": ");
			sb_num(b, p.zfar);
			sb_puts(b, "}}");
			first = false;
		}
		sb_puts(b, "\n  ]");
	}
	if (n_meshes > 0) {
		sb_printf(b, ",\n  \"accessors\": [\n"
			     "    {\"bufferView\": 0, \"componentType\": 5126, \"count\": 8, \"type\": \"VEC3\", "
			     "\"min\": [-0.5, -0.5, -0.5], \"max\": [0.5, 0.5, 0.5]},\n"
			     "    {\"bufferView\": 1, \"componentType\": 5123, \"count\": 36, \"type\": \"SCALAR\"}\n"
			     "  ],\n  \"bufferViews\": [\n"
			     "    {\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": %zu, \"target\": 34962},\n"
			     "    {\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"target\": 34963}\n"
			     "  ],\n  \"buffers\": [\n    {\"byteLength\": %zu, \"uri\": \"",
			  BOX_POSITION_BYTES, BOX_POSITION_BYTES, BOX_INDEX_BYTES, BOX_BYTES);
		sb_box_uri(b);
		sb_puts(b, "\"}\n  ]");
	}
	sb_puts(b, "\n}\n");
	rc = sb_take(b, out_json, out_len);
out:
	json_buf_release(&b->buf);
	sset_free(&meshes);
	free(mesh_names);
	free(x.gidx);
	free(x.mesh_of);
	free(x.camera_of);
	return rc;
}
