/*
 * proto_bin_read.c: binary frames back into the JSON message they stand for
 * (see proto_bin.h; the layout is the table in docs/protocol.md, "Binary
 * frames"), for rigctl and tests. Every multi-byte field is read byte by
 * byte, little-endian. The decoder trusts nothing: every count is checked
 * against the bytes the frame has before anything is read. It keeps each
 * index's last record, so that a locals entry (version 2) becomes the
 * whole record a JSON subscriber gets.
 */
#include "proto_bin.h"
#include "proto_internal.h"

#include "bytes.h"
#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Byte offsets of the header's fields; version 2 has the locals count
 * where version 1 has the scene name's length, which follows it. */
enum {
	OFF_VERSION = 4, OFF_KIND = 5, OFF_ELEM = 6, OFF_RESERVED = 7, OFF_SEQ = 8,
	OFF_FROM = 16, OFF_NODES = 24, OFF_WORLD = 28, OFF_JSON = 32, OFF_SCENE_LEN = 36,
	OFF_LOCALS = 36, OFF_SCENE_LEN_2 = 40,
};

static const char magic[4] = { 'R', 'I', 'G', 'B' };

/* ---------- reading ---------- */

void proto_bin_names_init(proto_bin_names *n)
{
	memset(n, 0, sizeof(*n));
}

static void names_clear(proto_bin_names *n)
{
	for (int i = 0; i < n->cap; i++) {
		free(n->ids[i]);
		free(n->records[i]);
		n->ids[i] = NULL;
		n->records[i] = NULL;
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
	free(n->records);
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
	bigger.records = calloc((size_t)bigger.cap, sizeof(char *));
	if (!bigger.keys || !bigger.ids || !bigger.records) {
		free(bigger.keys);
		free(bigger.ids);
		free(bigger.records);
		return RIGD_E_NOMEM;
	}
	for (int i = 0; i < n->cap; i++)
		if (n->ids[i]) {
			int to = names_slot(&bigger, n->keys[i]);

			bigger.keys[to] = n->keys[i];
			bigger.ids[to] = n->ids[i];
			bigger.records[to] = n->records[i];
			bigger.n++;
		}
	free(n->keys);
	free(n->ids);
	free(n->records);
	*n = bigger;
	return 0;
}

/* Binds 'index' to a copy of 'id' and takes 'record' (malloc'd JSON text,
 * freed on error too). */
static int names_bind(proto_bin_names *n, uint32_t index, const char *id, char *record)
{
	char *copy;
	int slot;

	if (((n->n + 1) * 2 > n->cap && names_grow(n)) || !(copy = strdup(id))) {
		free(record);
		return RIGD_E_NOMEM;
	}
	slot = names_slot(n, index);
	if (!n->ids[slot])
		n->n++;
	free(n->ids[slot]);
	free(n->records[slot]);
	n->keys[slot] = index;
	n->ids[slot] = copy;
	n->records[slot] = record;
	return 0;
}

static const char *names_record(const proto_bin_names *n, uint32_t index)
{
	return n->cap ? n->records[names_slot(n, index)] : NULL;
}

static const char *names_get(const proto_bin_names *n, uint32_t index)
{
	return n->cap ? n->ids[names_slot(n, index)] : NULL;
}

/* A frame's parts, every pointer inside the frame, every length checked. */
struct frame {
	int kind, elem;                /* elem: bytes per matrix element */
	uint64_t seq, from;
	uint32_t n_nodes, n_world, json_len;
	uint32_t n_locals, channels;   /* locals entries (version 2), elements each */
	char scene[SCENE_ID_MAX + 1];
	const unsigned char *node_index, *world_index, *matrices, *locals;
	const char *json;
};

static int bad(edit_error *err, const char *field, const char *what)
{
	edit_error_set(err, RIGD_E_BAD_FIELD, -1, field, "binary frame: %s", what);
	return RIGD_E_BAD_FIELD;
}

/* Version 2's fields: the locals count and the channels per entry. */
static int read_locals_header(const unsigned char *d, size_t len, struct frame *f,
			      edit_error *err)
{
	if (len < PROTO_BIN_HEAD_LOCALS)
		return bad(err, "length", "shorter than its header");
	f->channels = d[OFF_RESERVED];
	if (f->channels != PROTO_BIN_CHANNELS_3D && f->channels != PROTO_BIN_CHANNELS_2D)
		return bad(err, "version", "version 2 needs 16 or 17 channels (byte 7)");
	f->n_locals = (uint32_t)le_get(d + OFF_LOCALS, 4);
	if (f->kind != PROTO_BIN_UPDATE || f->n_locals == 0)
		return bad(err, "locals", "version 2 is an update with locals entries");
	return 0;
}

static int read_header(const unsigned char *d, size_t len, struct frame *f, edit_error *err)
{
	uint64_t need, name_len, head = PROTO_BIN_HEAD;
	int rc;

	if (len < PROTO_BIN_HEAD)
		return bad(err, "length", "shorter than its header");
	if (memcmp(d, magic, sizeof(magic)) != 0)
		return bad(err, "magic", "does not start with RIGB");
	if (d[OFF_VERSION] != PROTO_BIN_VERSION && d[OFF_VERSION] != PROTO_BIN_VERSION_LOCALS)
		return bad(err, "version", "unknown version");
	f->kind = d[OFF_KIND];
	if (f->kind != PROTO_BIN_SNAPSHOT && f->kind != PROTO_BIN_UPDATE)
		return bad(err, "kind", "unknown kind");
	f->elem = d[OFF_ELEM];
	if (f->elem != 4 && f->elem != 8)
		return bad(err, "format", "element size must be 4 or 8");
	if (d[OFF_VERSION] == PROTO_BIN_VERSION && d[OFF_RESERVED] != 0)
		return bad(err, "format", "element size must be 4 or 8, reserved byte 0");
	if (d[OFF_VERSION] == PROTO_BIN_VERSION_LOCALS) {
		if ((rc = read_locals_header(d, len, f, err)) != 0)
			return rc;
		head = PROTO_BIN_HEAD_LOCALS;
	}
	f->seq = le_get(d + OFF_SEQ, 8);
	f->from = le_get(d + OFF_FROM, 8);
	f->n_nodes = (uint32_t)le_get(d + OFF_NODES, 4);
	f->n_world = (uint32_t)le_get(d + OFF_WORLD, 4);
	f->json_len = (uint32_t)le_get(d + OFF_JSON, 4);
	name_len = le_get(d + (f->n_locals ? OFF_SCENE_LEN_2 : OFF_SCENE_LEN), 2);
	/* Every count is below 2^32, so the sum cannot overflow 64 bits. */
	need = head + name_len + 4ull * f->n_nodes +
	       (uint64_t)f->n_world * (4 + 12ull * (uint64_t)f->elem) +
	       (uint64_t)f->n_locals * (8 + 8ull * f->channels) + f->json_len;
	if (need != len)
		return bad(err, "length", need > len ? "counts run past the end" : "trailing bytes");
	if (name_len > SCENE_ID_MAX)
		return bad(err, "scene", "scene name too long");
	memcpy(f->scene, d + head, name_len);
	f->scene[name_len] = '\0';
	if (!scene_id_valid(f->scene))
		return bad(err, "scene", "not a valid scene name");
	f->node_index = d + head + name_len;
	f->world_index = f->node_index + 4ull * f->n_nodes;
	f->matrices = f->world_index + 4ull * f->n_world;
	f->locals = f->matrices + (uint64_t)f->n_world * 12 * (uint64_t)f->elem;
	f->json = (const char *)(f->locals + (uint64_t)f->n_locals * (8 + 8ull * f->channels));
	return 0;
}

/* Element 'e' (0..11) of matrix 'k'. */
static double element(const struct frame *f, uint32_t k, int e)
{
	const unsigned char *p = f->matrices + ((uint64_t)k * 12 + (uint64_t)e) * (uint64_t)f->elem;

	return f->elem == 4 ? le_get_f32(p) : le_get_f64(p);
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
 * scene, "order" (valid ids), for a subscription with a view "hidden"
 * (valid ids), nothing else.
 */
static int check_json(const struct frame *f, const cJSON *root, edit_error *err)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
	const cJSON *removed = cJSON_GetObjectItemCaseSensitive(root, "removed");
	const cJSON *order = cJSON_GetObjectItemCaseSensitive(root, "order");
	const cJSON *hidden = cJSON_GetObjectItemCaseSensitive(root, "hidden");
	const cJSON *e;
	int n = 0, members = 0;

	if (!cJSON_IsObject(root))
		return bad(err, "json", "the JSON section is not an object");
	cJSON_ArrayForEach(e, root)
		members++;
	if (!cJSON_IsArray(nodes) || (f->kind == PROTO_BIN_UPDATE && !cJSON_IsArray(removed)) ||
	    (order && !cJSON_IsArray(order)) || (hidden && !cJSON_IsArray(hidden)) ||
	    members != (f->kind == PROTO_BIN_UPDATE ? 2 : 1) + (order ? 1 : 0) + (hidden ? 1 : 0))
		return bad(err, "json",
			   "the JSON section's members are not nodes (and removed, order, hidden)");
	cJSON_ArrayForEach(e, order)
		if (!cJSON_IsString(e) || !scene_id_valid(e->valuestring))
			return bad(err, "json", "order holds something other than an id");
	cJSON_ArrayForEach(e, hidden)
		if (!cJSON_IsString(e) || !scene_id_valid(e->valuestring))
			return bad(err, "json", "hidden holds something other than ids");
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
		pairs[k].index = (uint32_t)le_get(f->world_index + 4ull * k, 4);
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

/* The node records, each followed by its "world" when the frame has one;
 * record i's index is at 'index' + i * 'stride'. 'first': no comma before. */
static int put_records_json(proto_buf *out, const struct frame *f, const cJSON *nodes,
			    const unsigned char *index, uint64_t stride, bool first,
			    const struct pair *pairs)
{
	const cJSON *e;
	uint32_t i = 0;

	cJSON_ArrayForEach(e, nodes) {
		struct pair key = { (uint32_t)le_get(index + stride * i, 4), 0 };
		const struct pair *p = f->n_world ? bsearch(&key, pairs, f->n_world, sizeof(*pairs),
							      cmp_pair) : NULL;
		const cJSON *m;
		int rc;

		if ((i || !first) && PROTO_BUF_LIT(out, ","))
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
	return 0;
}

/* "nodes": the JSON section's records, then those of the locals entries. */
static int put_nodes(proto_buf *out, const struct frame *f, const cJSON *nodes,
		     const cJSON *locals, const struct pair *pairs)
{
	int rc;

	if (PROTO_BUF_LIT(out, ",\"nodes\":["))
		return RIGD_E_NOMEM;
	if ((rc = put_records_json(out, f, nodes, f->node_index, 4, true, pairs)) != 0 ||
	    (rc = put_records_json(out, f, locals, f->locals, 8 + 8ull * f->channels,
				   f->n_nodes == 0, pairs)) != 0)
		return rc;
	return PROTO_BUF_LIT(out, "]");
}

/* The message a JSON subscriber would have received, from a checked frame. */
static int put_message(proto_buf *out, const struct frame *f, const cJSON *root,
		       const cJSON *locals, const proto_bin_names *names,
		       const struct pair *pairs)
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
			uint32_t index = (uint32_t)le_get(f->world_index + 4ull * k, 4);

			if ((k && PROTO_BUF_LIT(out, ",")) ||
			    proto_buf_json_string(out, names_get(names, index)) ||
			    PROTO_BUF_LIT(out, ":") || put_matrix_json(out, f, k))
				return RIGD_E_NOMEM;
		}
		if (PROTO_BUF_LIT(out, "}"))
			return RIGD_E_NOMEM;
	}
	if ((rc = put_nodes(out, f, cJSON_GetObjectItemCaseSensitive(root, "nodes"), locals,
			    pairs)) != 0)
		return rc;
	if (update && (PROTO_BUF_LIT(out, ",\"removed\":") ||
		       put_value(out, cJSON_GetObjectItemCaseSensitive(root, "removed"))))
		return RIGD_E_NOMEM;
	if (cJSON_GetObjectItemCaseSensitive(root, "order") &&
	    (PROTO_BUF_LIT(out, ",\"order\":") ||
	     put_value(out, cJSON_GetObjectItemCaseSensitive(root, "order"))))
		return RIGD_E_NOMEM;
	if (cJSON_GetObjectItemCaseSensitive(root, "hidden") &&
	    (PROTO_BUF_LIT(out, ",\"hidden\":") ||
	     put_value(out, cJSON_GetObjectItemCaseSensitive(root, "hidden"))))
		return RIGD_E_NOMEM;
	return PROTO_BUF_LIT(out, "}");
}

/* Binds 'index' to record 'e' (an object with a valid "id"), kept as text. */
static int bind_record(proto_bin_names *names, uint32_t index, const cJSON *e, edit_error *err)
{
	proto_buf text;
	char *record;
	int rc;

	proto_buf_init(&text, 0);
	rc = put_value(&text, e);
	record = rc == 0 ? proto_buf_take(&text) : NULL;
	proto_buf_release(&text);
	if (rc == 0 && !record)
		rc = RIGD_E_NOMEM;
	if (rc == 0)
		rc = names_bind(names, index, cJSON_GetObjectItemCaseSensitive(e, "id")->valuestring,
				record);
	if (rc == RIGD_E_NOT_FINITE)
		return bad(err, "json", "a number in the JSON section overflows a double");
	if (rc)
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
	return rc;
}

/* Binds each node record's index to its id and record (a snapshot starts
 * afresh). */
static int bind_nodes(proto_bin_names *names, const struct frame *f, const cJSON *nodes,
		      edit_error *err)
{
	const cJSON *e;
	uint32_t i = 0;
	int rc;

	if (f->kind == PROTO_BIN_SNAPSHOT)
		names_clear(names);
	cJSON_ArrayForEach(e, nodes) {
		uint32_t index = (uint32_t)le_get(f->node_index + 4ull * i++, 4);

		if (index >= PROTO_BIN_MAX_INDEX)
			return bad(err, "index", "an index beyond the largest scene");
		if ((rc = bind_record(names, index, e, err)) != 0)
			return rc;
	}
	return 0;
}

/* Sets member 'key' of 'record' to the 'n' numbers at 'v' (one: a number). */
static int set_numbers(cJSON *record, const char *key, const double *v, int n)
{
	cJSON *item = n == 1 ? cJSON_CreateNumber(v[0]) : cJSON_CreateDoubleArray(v, n);

	if (!item)
		return RIGD_E_NOMEM;
	if (cJSON_GetObjectItemCaseSensitive(record, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(record, key, item) ? 0 : RIGD_E_NOMEM;
	return cJSON_AddItemToObject(record, key, item) ? 0 : RIGD_E_NOMEM;
}

/* Locals entry 'k' applied to its index's last record, into *out. */
static int apply_locals(const proto_bin_names *names, const struct frame *f, uint32_t k,
			cJSON **out, edit_error *err)
{
	static const char *const keys[2][6] = {
		{ "t", "r", "s", "pivot", "euler", NULL },
		{ "t", "r", "angle", "s", "pivot", "euler" },
	};
	static const int sizes[2][6] = { { 3, 4, 3, 3, 3, 0 }, { 3, 4, 1, 3, 3, 3 } };
	const unsigned char *at = f->locals + (uint64_t)k * (8 + 8ull * f->channels);
	const char *text = names_record(names, (uint32_t)le_get(at, 4));
	bool two = f->channels == PROTO_BIN_CHANNELS_2D;
	double v[PROTO_BIN_CHANNELS_2D + 1];
	int rc = 0;

	v[0] = (double)le_get(at + 4, 4);
	for (uint32_t c = 0; c < f->channels; c++) {
		v[c + 1] = le_get_f64(at + 8 + 8ull * c);
		if (!isfinite(v[c + 1]))
			return bad(err, "locals", "a channel is not finite");
	}
	if (!text)
		return bad(err, "index", "a locals entry for an index no frame bound");
	if (!(*out = cJSON_Parse(text)))
		return RIGD_E_NOMEM;  /* the text was written by put_value */
	rc = set_numbers(*out, "index", v, 1);
	for (int m = 0, c = 1; m < 6 && keys[two][m] && rc == 0; c += sizes[two][m], m++)
		rc = set_numbers(*out, keys[two][m], v + c, sizes[two][m]);
	if (rc)
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
	return rc;
}

/* The records of the frame's locals entries into 'locals' (an array), each
 * bound again to its index. */
static int bind_locals(proto_bin_names *names, const struct frame *f, cJSON *locals,
		       edit_error *err)
{
	for (uint32_t k = 0; k < f->n_locals; k++) {
		const unsigned char *at = f->locals + (uint64_t)k * (8 + 8ull * f->channels);
		uint32_t index = (uint32_t)le_get(at, 4);
		cJSON *record = NULL;
		int rc = apply_locals(names, f, k, &record, err);

		if (rc == 0 && !cJSON_AddItemToArray(locals, record))
			rc = RIGD_E_NOMEM;
		if (rc) {
			cJSON_Delete(record);
			return rc;
		}
		if ((rc = bind_record(names, index, record, err)) != 0)
			return rc;
	}
	return 0;
}

int proto_bin_to_json(proto_bin_names *names, const unsigned char *data, size_t len,
		      proto_buf *out, edit_error *err)
{
	proto_limits lim = proto_limits_default();
	struct frame f;
	struct pair *pairs = NULL;
	cJSON *root = NULL, *locals = cJSON_CreateArray();
	size_t start = out->len;
	int rc;

	edit_error_clear(err);
	memset(&f, 0, sizeof(f));
	if (!locals) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	if ((rc = read_header(data, len, &f, err)) != 0)
		goto out;
	lim.max_bytes = f.json_len;
	if ((rc = proto_parse(f.json, f.json_len, &lim, &root, err)) != 0) {
		if (rc == RIGD_E_BAD_JSON)
			rc = bad(err, "json", "the JSON section is not JSON");
		goto out;
	}
	if ((rc = check_json(&f, root, err)) != 0 ||
	    (rc = bind_nodes(names, &f, cJSON_GetObjectItemCaseSensitive(root, "nodes"), err)) != 0 ||
	    (rc = bind_locals(names, &f, locals, err)) != 0)
		goto out;
	if (f.n_world && !(pairs = malloc((size_t)f.n_world * sizeof(*pairs)))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	if ((rc = index_matrices(&f, names, pairs, err)) != 0)
		goto out;
	if ((rc = put_message(out, &f, root, locals, names, pairs)) != 0) {
		json_buf_truncate(out, start);
		if (rc == RIGD_E_NOT_FINITE)
			rc = bad(err, "json", "a number in the JSON section overflows a double");
		else
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
	}
out:
	free(pairs);
	cJSON_Delete(root);
	cJSON_Delete(locals);
	return rc;
}
