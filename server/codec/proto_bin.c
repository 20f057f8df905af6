/*
 * proto_bin.c: binary snapshot and update frames out, and back into the
 * JSON message they stand for (see proto_bin.h; the layout is the table in
 * docs/protocol.md, "Binary frames"). Every multi-byte field is written
 * and read byte by byte, little-endian, so the code is the same on any
 * host. The decoder trusts nothing: every count is checked against the
 * bytes the frame has before anything is read.
 */
#include "proto_bin.h"
#include "proto_internal.h"

#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Byte offsets of the header's fields. */
enum {
	OFF_VERSION = 4, OFF_KIND = 5, OFF_ELEM = 6, OFF_RESERVED = 7, OFF_SEQ = 8,
	OFF_FROM = 16, OFF_NODES = 24, OFF_WORLD = 28, OFF_JSON = 32, OFF_SCENE_LEN = 36,
};

static const char magic[4] = { 'R', 'I', 'G', 'B' };

static const char *const format_names[PROTO_FORMAT_COUNT] = { "json", "f32", "f64" };

int proto_format_parse(const char *name, int *format)
{
	for (int f = 0; f < PROTO_FORMAT_COUNT; f++)
		if (strcmp(name, format_names[f]) == 0) {
			*format = f;
			return 0;
		}
	return RIGD_E_BAD_FIELD;
}

const char *proto_format_name(int format)
{
	assert(format >= 0 && format < PROTO_FORMAT_COUNT);
	return format_names[format];
}

bool proto_bin_is_frame(const char *data, size_t len)
{
	return len >= sizeof(magic) && memcmp(data, magic, sizeof(magic)) == 0;
}

/* ---------- writing ---------- */

static int put_le(proto_buf *b, uint64_t v, int bytes)
{
	char o[8];

	for (int i = 0; i < bytes; i++)
		o[i] = (char)(v >> (8 * i) & 0xff);
	return proto_buf_append(b, o, (size_t)bytes);
}

static void patch_u32(proto_buf *b, size_t at, uint32_t v)
{
	unsigned char *p = (unsigned char *)b->data + b->head + at;

	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i) & 0xff);
}

/* The 12 elements a frame carries of world matrix 'w': the first three rows
 * of the column-major 4x4, column by column (the fourth row of an affine
 * matrix is 0 0 0 1). */
static int put_matrix(proto_buf *b, int format, mat4 w)
{
	char o[12 * 8];
	int elem = format == PROTO_FORMAT_F32 ? 4 : 8, at = 0;

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 3; r++) {
			double v = w.m[c * 4 + r];
			uint64_t bits;

			if (elem == 4) {
				float f = (float)v;
				uint32_t fb;

				memcpy(&fb, &f, sizeof(fb));
				bits = fb;
			} else {
				memcpy(&bits, &v, sizeof(bits));
			}
			for (int i = 0; i < elem; i++)
				o[at++] = (char)(bits >> (8 * i) & 0xff);
		}
	/* One append per matrix: a snapshot of a big scene has millions. */
	return proto_buf_append(b, o, (size_t)at);
}

/* The header with the JSON length left 0 (patched once it is known). */
static int put_header(proto_buf *b, int format, int kind, const char *scene_name,
		      uint64_t seq, uint64_t from, int n_nodes, int n_world)
{
	size_t name_len = strlen(scene_name);
	const char fixed[4] = { PROTO_BIN_VERSION, (char)kind,
				format == PROTO_FORMAT_F32 ? 4 : 8, 0 };

	assert(format == PROTO_FORMAT_F32 || format == PROTO_FORMAT_F64);
	assert(name_len <= SCENE_ID_MAX && n_nodes >= 0 && n_world >= 0);
	return proto_buf_append(b, magic, 4) || proto_buf_append(b, fixed, 4) ||
	       put_le(b, seq, 8) || put_le(b, from, 8) || put_le(b, (uint64_t)n_nodes, 4) ||
	       put_le(b, (uint64_t)n_world, 4) || put_le(b, 0, 4) ||
	       put_le(b, name_len, 2) || proto_buf_append(b, scene_name, name_len);
}

/* The matrices of 'nodes': their indices, then their 12 elements each. */
static int put_world(proto_buf *b, int format, const scene *s, const int *nodes, int n)
{
	for (int i = 0; i < n; i++)
		if (put_le(b, (uint64_t)nodes[i], 4))
			return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if (put_matrix(b, format, scene_world(s, nodes[i])))
			return RIGD_E_NOMEM;
	return 0;
}

/* The JSON section's "nodes" array of records without matrices. */
static int put_records(proto_buf *b, const scene *s, const int *nodes, int n)
{
	if (PROTO_BUF_LIT(b, "\"nodes\":["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && PROTO_BUF_LIT(b, ",")) || proto_encode_node_record(b, s, nodes[i]))
			return RIGD_E_NOMEM;
	return PROTO_BUF_LIT(b, "]");
}

static int finish(proto_buf *b, size_t start, size_t json_start)
{
	assert(b->len - json_start <= UINT32_MAX);
	patch_u32(b, start + OFF_JSON, (uint32_t)(b->len - json_start));
	return 0;
}

int proto_bin_encode_snapshot(proto_buf *b, int format, const char *scene_name, uint64_t seq,
			      const scene *s)
{
	size_t start = b->len, json_start;
	int n = scene_count(s);
	int *nodes = n ? malloc((size_t)n * sizeof(int)) : NULL;
	int rc = RIGD_E_NOMEM;

	if (n && !nodes)
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++)
		nodes[pos] = scene_at(s, pos);
	if (put_header(b, format, PROTO_BIN_SNAPSHOT, scene_name, seq, 0, n, n))
		goto out;
	for (int i = 0; i < n; i++)
		if (put_le(b, (uint64_t)nodes[i], 4))
			goto out;
	if (put_world(b, format, s, nodes, n))
		goto out;
	json_start = b->len;
	if (PROTO_BUF_LIT(b, "{") || put_records(b, s, nodes, n) ||
	    (scene_dims(s) == 2 && (PROTO_BUF_LIT(b, ",") || proto_encode_order(b, s))) ||
	    PROTO_BUF_LIT(b, "}"))
		goto out;
	rc = finish(b, start, json_start);
out:
	free(nodes);
	if (rc)
		json_buf_truncate(b, start);
	return rc;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* world_nodes followed by the changed nodes not among them, into *out
 * (malloc'd, the caller frees). */
static int matrix_nodes(const int *world_nodes, int n_world, const int *changed, int n_changed,
			int **out, int *n_out)
{
	int *sorted = n_world ? malloc((size_t)n_world * sizeof(int)) : NULL;
	int *all = malloc(((size_t)n_world + (size_t)n_changed + 1) * sizeof(int));
	int n = n_world;

	if ((n_world && !sorted) || !all) {
		free(sorted);
		free(all);
		return RIGD_E_NOMEM;
	}
	if (n_world) {
		memcpy(all, world_nodes, (size_t)n_world * sizeof(int));
		memcpy(sorted, world_nodes, (size_t)n_world * sizeof(int));
		qsort(sorted, (size_t)n_world, sizeof(int), cmp_int);
	}
	for (int i = 0; i < n_changed; i++)
		if (!n_world || !bsearch(&changed[i], sorted, (size_t)n_world, sizeof(int), cmp_int))
			all[n++] = changed[i];
	free(sorted);
	*out = all;
	*n_out = n;
	return 0;
}

int proto_bin_encode_update(proto_buf *b, int format, const char *scene_name, uint64_t seq,
			    uint64_t from, const scene *s, const int *world_nodes, int n_world,
			    const int *changed_nodes, int n_changed, const edit_id *removed,
			    int n_removed)
{
	return proto_bin_encode_update_order(b, format, scene_name, seq, from, s, world_nodes,
					     n_world, changed_nodes, n_changed, removed, n_removed,
					     false);
}

int proto_bin_encode_update_order(proto_buf *b, int format, const char *scene_name,
				  uint64_t seq, uint64_t from, const scene *s,
				  const int *world_nodes, int n_world, const int *changed_nodes,
				  int n_changed, const edit_id *removed, int n_removed,
				  bool with_order)
{
	size_t start = b->len, json_start;
	int *mat = NULL, n_mat = 0;
	int rc = RIGD_E_NOMEM;

	assert(n_world >= 0 && n_changed >= 0 && n_removed >= 0);
	if (matrix_nodes(world_nodes, n_world, changed_nodes, n_changed, &mat, &n_mat))
		return RIGD_E_NOMEM;
	if (put_header(b, format, PROTO_BIN_UPDATE, scene_name, seq, from, n_changed, n_mat))
		goto out;
	for (int i = 0; i < n_changed; i++)
		if (put_le(b, (uint64_t)changed_nodes[i], 4))
			goto out;
	if (put_world(b, format, s, mat, n_mat))
		goto out;
	json_start = b->len;
	if (PROTO_BUF_LIT(b, "{") || put_records(b, s, changed_nodes, n_changed) ||
	    PROTO_BUF_LIT(b, ",\"removed\":["))
		goto out;
	for (int i = 0; i < n_removed; i++)
		if ((i && PROTO_BUF_LIT(b, ",")) || proto_buf_json_string(b, removed[i].s))
			goto out;
	if (PROTO_BUF_LIT(b, "]") ||
	    (with_order && (PROTO_BUF_LIT(b, ",") || proto_encode_order(b, s))) ||
	    PROTO_BUF_LIT(b, "}"))
		goto out;
	rc = finish(b, start, json_start);
out:
	free(mat);
	if (rc)
		json_buf_truncate(b, start);
	return rc;
}

/* ---------- reading ---------- */

void proto_bin_names_init(proto_bin_names *n)
{
	memset(n, 0, sizeof(*n));
}

static void names_clear(proto_bin_names *n)
{
	for (int i = 0; i < n->cap; i++) {
		free(n->ids[i]);
		n->ids[i] = NULL;
	}
	n->n = 0;
}

void proto_bin_names_release(proto_bin_names *n)
{
	if (!n)
		return;
	names_clear(n);
	free(n->keys);
	free(n->ids);
	proto_bin_names_init(n);
}

/* The slot of 'index', or of the empty slot where it would go (cap > 0). */
static int names_slot(const proto_bin_names *n, uint32_t index)
{
	uint32_t mask = (uint32_t)n->cap - 1, i = (index * 2654435761u) & mask;

	while (n->ids[i] && n->keys[i] != index)
		i = (i + 1) & mask;
	return (int)i;
}

/* Twice the slots (at least 64), every binding moved over. */
static int names_grow(proto_bin_names *n)
{
	proto_bin_names bigger = { 0 };

	bigger.cap = n->cap ? n->cap * 2 : 64;
	bigger.keys = malloc((size_t)bigger.cap * sizeof(uint32_t));
	bigger.ids = calloc((size_t)bigger.cap, sizeof(char *));
	if (!bigger.keys || !bigger.ids) {
		free(bigger.keys);
		free(bigger.ids);
		return RIGD_E_NOMEM;
	}
	for (int i = 0; i < n->cap; i++)
		if (n->ids[i]) {
			int to = names_slot(&bigger, n->keys[i]);

			bigger.keys[to] = n->keys[i];
			bigger.ids[to] = n->ids[i];
			bigger.n++;
		}
	free(n->keys);
	free(n->ids);
	*n = bigger;
	return 0;
}

/* Binds 'index' to a copy of 'id'. */
static int names_bind(proto_bin_names *n, uint32_t index, const char *id)
{
	char *copy;
	int slot;

	if ((n->n + 1) * 2 > n->cap && names_grow(n))
		return RIGD_E_NOMEM;
	if (!(copy = strdup(id)))
		return RIGD_E_NOMEM;
	slot = names_slot(n, index);
	if (!n->ids[slot])
		n->n++;
	free(n->ids[slot]);
	n->keys[slot] = index;
	n->ids[slot] = copy;
	return 0;
}

static const char *names_get(const proto_bin_names *n, uint32_t index)
{
	return n->cap ? n->ids[names_slot(n, index)] : NULL;
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A frame's parts, every pointer inside the frame, every length checked. */
struct frame {
	int kind, elem;                /* elem: bytes per matrix element */
	uint64_t seq, from;
	uint32_t n_nodes, n_world, json_len;
	char scene[SCENE_ID_MAX + 1];
	const unsigned char *node_index, *world_index, *matrices;
	const char *json;
};

static int bad(edit_error *err, const char *field, const char *what)
{
	edit_error_set(err, RIGD_E_BAD_FIELD, -1, field, "binary frame: %s", what);
	return RIGD_E_BAD_FIELD;
}

static int read_header(const unsigned char *d, size_t len, struct frame *f, edit_error *err)
{
	uint64_t need, name_len;

	if (len < PROTO_BIN_HEAD)
		return bad(err, "length", "shorter than its header");
	if (memcmp(d, magic, sizeof(magic)) != 0)
		return bad(err, "magic", "does not start with RIGB");
	if (d[OFF_VERSION] != PROTO_BIN_VERSION)
		return bad(err, "version", "unknown version");
	f->kind = d[OFF_KIND];
	if (f->kind != PROTO_BIN_SNAPSHOT && f->kind != PROTO_BIN_UPDATE)
		return bad(err, "kind", "unknown kind");
	f->elem = d[OFF_ELEM];
	if ((f->elem != 4 && f->elem != 8) || d[OFF_RESERVED] != 0)
		return bad(err, "format", "element size must be 4 or 8, reserved byte 0");
	f->seq = get_le(d + OFF_SEQ, 8);
	f->from = get_le(d + OFF_FROM, 8);
	f->n_nodes = (uint32_t)get_le(d + OFF_NODES, 4);
	f->n_world = (uint32_t)get_le(d + OFF_WORLD, 4);
	f->json_len = (uint32_t)get_le(d + OFF_JSON, 4);
	name_len = get_le(d + OFF_SCENE_LEN, 2);
	/* Every count is below 2^32, so the sum cannot overflow 64 bits. */
	need = PROTO_BIN_HEAD + name_len + 4ull * f->n_nodes +
	       (uint64_t)f->n_world * (4 + 12ull * (uint64_t)f->elem) + f->json_len;
	if (need != len)
		return bad(err, "length", need > len ? "counts run past the end" : "trailing bytes");
	if (name_len > SCENE_ID_MAX)
		return bad(err, "scene", "scene name too long");
	memcpy(f->scene, d + PROTO_BIN_HEAD, name_len);
	f->scene[name_len] = '\0';
	if (!scene_id_valid(f->scene))
		return bad(err, "scene", "not a valid scene name");
	f->node_index = d + PROTO_BIN_HEAD + name_len;
	f->world_index = f->node_index + 4ull * f->n_nodes;
	f->matrices = f->world_index + 4ull * f->n_world;
	f->json = (const char *)(f->matrices + (uint64_t)f->n_world * 12 * (uint64_t)f->elem);
	return 0;
}

/* Element 'e' (0..11) of matrix 'k'. */
static double element(const struct frame *f, uint32_t k, int e)
{
	const unsigned char *p = f->matrices + ((uint64_t)k * 12 + (uint64_t)e) * (uint64_t)f->elem;
	uint64_t bits = get_le(p, f->elem);

	if (f->elem == 4) {
		uint32_t b32 = (uint32_t)bits;
		float v;

		memcpy(&v, &b32, sizeof(v));
		return v;
	}
	{
		double v;

		memcpy(&v, &bits, sizeof(v));
		return v;
	}
}

/* Matrix 'k' as the 16 numbers of a JSON world matrix. */
static int put_matrix_json(proto_buf *out, const struct frame *f, uint32_t k)
{
	double m[16] = { 0 };

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 3; r++)
			m[c * 4 + r] = element(f, k, c * 3 + r);
	m[15] = 1;
	if (PROTO_BUF_LIT(out, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < 16; i++) {
		int rc = (i && PROTO_BUF_LIT(out, ",")) ? RIGD_E_NOMEM : proto_buf_json_number(out, m[i]);

		if (rc)
			return rc;
	}
	return PROTO_BUF_LIT(out, "]");
}

/* Any parsed JSON value, numbers in their shortest round-trip form. */
static int put_value(proto_buf *out, const cJSON *v)
{
	const cJSON *e;
	bool first = true;

	if (cJSON_IsNull(v))
		return PROTO_BUF_LIT(out, "null");
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? PROTO_BUF_LIT(out, "true") : PROTO_BUF_LIT(out, "false");
	if (cJSON_IsNumber(v))
		return proto_buf_json_number(out, v->valuedouble);
	if (cJSON_IsString(v))
		return proto_buf_json_string(out, v->valuestring);
	if (proto_buf_append(out, cJSON_IsArray(v) ? "[" : "{", 1))
		return RIGD_E_NOMEM;
	cJSON_ArrayForEach(e, v) {
		int rc;

		if (!first && PROTO_BUF_LIT(out, ","))
			return RIGD_E_NOMEM;
		first = false;
		if (cJSON_IsObject(v) &&
		    (proto_buf_json_string(out, e->string) || PROTO_BUF_LIT(out, ":")))
			return RIGD_E_NOMEM;
		if ((rc = put_value(out, e)) != 0)
			return rc;
	}
	return proto_buf_append(out, cJSON_IsArray(v) ? "]" : "}", 1);
}

struct pair {
	uint32_t index, k;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/*
 * The JSON section's shape: an object with "nodes" (n_nodes objects, each
 * with a valid "id"), in an update "removed" (strings), and, for a 2D
 * scene, "order" (valid ids), nothing else.
 */
static int check_json(const struct frame *f, const cJSON *root, edit_error *err)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
	const cJSON *removed = cJSON_GetObjectItemCaseSensitive(root, "removed");
	const cJSON *order = cJSON_GetObjectItemCaseSensitive(root, "order");
	const cJSON *e;
	int n = 0, members = 0;

	if (!cJSON_IsObject(root))
		return bad(err, "json", "the JSON section is not an object");
	cJSON_ArrayForEach(e, root)
		members++;
	if (!cJSON_IsArray(nodes) || (f->kind == PROTO_BIN_UPDATE && !cJSON_IsArray(removed)) ||
	    (order && !cJSON_IsArray(order)) ||
	    members != (f->kind == PROTO_BIN_UPDATE ? 2 : 1) + (order ? 1 : 0))
		return bad(err, "json", "the JSON section's members are not nodes (and removed, order)");
	cJSON_ArrayForEach(e, order)
		if (!cJSON_IsString(e) || !scene_id_valid(e->valuestring))
			return bad(err, "json", "order holds something other than an id");
	cJSON_ArrayForEach(e, nodes) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");

		if (!cJSON_IsObject(e) || !cJSON_IsString(id) || !scene_id_valid(id->valuestring))
			return bad(err, "json", "a node record without a valid id");
		n++;
	}
	if ((uint32_t)n != f->n_nodes)
		return bad(err, "json", "the node count differs from the header's");
	cJSON_ArrayForEach(e, removed)
		if (!cJSON_IsString(e))
			return bad(err, "json", "removed holds a non-string");
	return 0;
}

/* The matrices' indices, sorted, to find a node's matrix; every one must be
 * bound and every element finite. */
static int index_matrices(const struct frame *f, const proto_bin_names *names,
			  struct pair *pairs, edit_error *err)
{
	for (uint32_t k = 0; k < f->n_world; k++) {
		pairs[k].index = (uint32_t)get_le(f->world_index + 4ull * k, 4);
		pairs[k].k = k;
		if (!names_get(names, pairs[k].index))
			return bad(err, "index", "a matrix for an index no frame bound");
		for (int e = 0; e < 12; e++)
			if (!isfinite(element(f, k, e)))
				return bad(err, "matrix", "a matrix element is not finite");
	}
	if (f->n_world > 1)
		qsort(pairs, f->n_world, sizeof(*pairs), cmp_pair);
	return 0;
}

/* The node records, each followed by its "world" when the frame has one. */
static int put_nodes(proto_buf *out, const struct frame *f, const cJSON *nodes,
		     const struct pair *pairs)
{
	const cJSON *e;
	uint32_t i = 0;

	if (PROTO_BUF_LIT(out, ",\"nodes\":["))
		return RIGD_E_NOMEM;
	cJSON_ArrayForEach(e, nodes) {
		struct pair key = { (uint32_t)get_le(f->node_index + 4ull * i, 4), 0 };
		const struct pair *p = f->n_world ? bsearch(&key, pairs, f->n_world, sizeof(*pairs),
							      cmp_pair) : NULL;
		const cJSON *m;
		int rc;

		if (i && PROTO_BUF_LIT(out, ","))
			return RIGD_E_NOMEM;
		if (PROTO_BUF_LIT(out, "{"))
			return RIGD_E_NOMEM;
		cJSON_ArrayForEach(m, e) {
			if ((m != e->child && PROTO_BUF_LIT(out, ",")) ||
			    proto_buf_json_string(out, m->string) || PROTO_BUF_LIT(out, ":"))
				return RIGD_E_NOMEM;
			if ((rc = put_value(out, m)) != 0)
				return rc;
		}
		if (p && (PROTO_BUF_LIT(out, ",\"world\":") || put_matrix_json(out, f, p->k)))
			return RIGD_E_NOMEM;
		if (PROTO_BUF_LIT(out, "}"))
			return RIGD_E_NOMEM;
		i++;
	}
	return PROTO_BUF_LIT(out, "]");
}

/* The message a JSON subscriber would have received, from a checked frame. */
static int put_message(proto_buf *out, const struct frame *f, const cJSON *root,
		       const proto_bin_names *names, const struct pair *pairs)
{
	bool update = f->kind == PROTO_BIN_UPDATE;
	int rc;

	if (PROTO_BUF_LIT(out, "{\"type\":") ||
	    proto_buf_json_string(out, update ? "update" : "snapshot") ||
	    PROTO_BUF_LIT(out, ",\"scene\":") || proto_buf_json_string(out, f->scene) ||
	    PROTO_BUF_LIT(out, ",\"seq\":") || json_buf_int(out, (int64_t)f->seq))
		return RIGD_E_NOMEM;
	if (update) {
		if (PROTO_BUF_LIT(out, ",\"world\":{"))
			return RIGD_E_NOMEM;
		for (uint32_t k = 0; k < f->n_world; k++) {
			uint32_t index = (uint32_t)get_le(f->world_index + 4ull * k, 4);

			if ((k && PROTO_BUF_LIT(out, ",")) ||
			    proto_buf_json_string(out, names_get(names, index)) ||
			    PROTO_BUF_LIT(out, ":") || put_matrix_json(out, f, k))
				return RIGD_E_NOMEM;
		}
		if (PROTO_BUF_LIT(out, "}"))
			return RIGD_E_NOMEM;
	}
	if ((rc = put_nodes(out, f, cJSON_GetObjectItemCaseSensitive(root, "nodes"), pairs)) != 0)
		return rc;
	if (update && (PROTO_BUF_LIT(out, ",\"removed\":") ||
		       put_value(out, cJSON_GetObjectItemCaseSensitive(root, "removed"))))
		return RIGD_E_NOMEM;
	if (cJSON_GetObjectItemCaseSensitive(root, "order") &&
	    (PROTO_BUF_LIT(out, ",\"order\":") ||
	     put_value(out, cJSON_GetObjectItemCaseSensitive(root, "order"))))
		return RIGD_E_NOMEM;
	return PROTO_BUF_LIT(out, "}");
}

/* Binds each node record's index to its id (a snapshot starts afresh). */
static int bind_nodes(proto_bin_names *names, const struct frame *f, const cJSON *nodes,
		      edit_error *err)
{
	const cJSON *e;
	uint32_t i = 0;

	if (f->kind == PROTO_BIN_SNAPSHOT)
		names_clear(names);
	cJSON_ArrayForEach(e, nodes) {
		uint32_t index = (uint32_t)get_le(f->node_index + 4ull * i++, 4);

		if (index >= PROTO_BIN_MAX_INDEX)
			return bad(err, "index", "an index beyond the largest scene");
		if (names_bind(names, index, cJSON_GetObjectItemCaseSensitive(e, "id")->valuestring)) {
			edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
			return RIGD_E_NOMEM;
		}
	}
	return 0;
}

int proto_bin_to_json(proto_bin_names *names, const unsigned char *data, size_t len,
		      proto_buf *out, edit_error *err)
{
	proto_limits lim = proto_limits_default();
	struct frame f;
	struct pair *pairs = NULL;
	cJSON *root = NULL;
	size_t start = out->len;
	int rc;

	edit_error_clear(err);
	memset(&f, 0, sizeof(f));
	if ((rc = read_header(data, len, &f, err)) != 0)
		return rc;
	lim.max_bytes = f.json_len;
	if ((rc = proto_parse(f.json, f.json_len, &lim, &root, err)) != 0) {
		if (rc == RIGD_E_BAD_JSON)
			rc = bad(err, "json", "the JSON section is not JSON");
		return rc;
	}
	if ((rc = check_json(&f, root, err)) != 0 ||
	    (rc = bind_nodes(names, &f, cJSON_GetObjectItemCaseSensitive(root, "nodes"), err)) != 0)
		goto out;
	if (f.n_world && !(pairs = malloc((size_t)f.n_world * sizeof(*pairs)))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	if ((rc = index_matrices(&f, names, pairs, err)) != 0)
		goto out;
	if ((rc = put_message(out, &f, root, names, pairs)) != 0) {
		json_buf_truncate(out, start);
		if (rc == RIGD_E_NOT_FINITE)
			rc = bad(err, "json", "a number in the JSON section overflows a double");
		else
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
	}
out:
	free(pairs);
	cJSON_Delete(root);
	return rc;
}
