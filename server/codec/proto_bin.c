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

#include "bytes.h"
#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Byte offsets of the header's fields. */
enum {
	OFF_VERSION = 4, OFF_KIND = 5, OFF_ELEM = 6, OFF_RESERVED = 7, OFF_SEQ = 8,
	OFF_FROM = 16, OFF_NODES = 24, OFF_WORLD = 28, OFF_JSON = 32,
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

/* Appends the low 'bytes' bytes of 'v', little-endian. */
static int append_le(proto_buf *b, uint64_t v, int bytes)
{
	unsigned char o[8];

	le_put(o, v, bytes);
	return proto_buf_append(b, (const char *)o, (size_t)bytes);
}

static void patch_u32(proto_buf *b, size_t at, uint32_t v)
{
	le_put((unsigned char *)b->data + b->head + at, v, 4);
}

#define MATRIX_BYTES_MAX (12 * 8) /* bytes of one matrix in a frame */
#define WORLD_CHUNK 32               /* matrices written per append */

/* The 12 elements a frame carries of a world matrix into 'o' (room for
 * MATRIX_BYTES_MAX): the first three rows of the column-major 4x4, column
 * by column (the fourth row of an affine matrix is 0 0 0 1), read from 'm'
 * with element (row r, column c) at m[r * row_stride + c * col_stride]: a
 * mat4 (1, 4) or a scene's stored rows (4, 1), which spares the conversion
 * to a mat4 in the hot loop. Returns the bytes written. */
static inline int matrix_bytes(unsigned char *o, int format, const double *m, int row_stride,
			       int col_stride)
{
	int at = 0;

	if (format == PROTO_FORMAT_F32) {
		for (int c = 0; c < 4; c++)
			for (int r = 0; r < 3; r++, at += 4)
				le_put_f32(o + at, (float)m[r * row_stride + c * col_stride]);
		return at;
	}
	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 3; r++, at += 8)
			le_put_f64(o + at, m[r * row_stride + c * col_stride]);
	return at;
}

/* The header with the JSON length left 0 (patched once it is known): of
 * version 1 when 'n_locals' < 0, else of version 2 with that many locals
 * entries of 'channels' elements each. */
static int put_header(proto_buf *b, int format, int kind, const char *scene_name,
		      uint64_t seq, uint64_t from, int n_nodes, int n_world, int n_locals,
		      int channels)
{
	size_t name_len = strlen(scene_name);
	const char fixed[4] = { n_locals < 0 ? PROTO_BIN_VERSION : PROTO_BIN_VERSION_LOCALS,
				(char)kind, format == PROTO_FORMAT_F32 ? 4 : 8,
				(char)(n_locals < 0 ? 0 : channels) };

	assert(format == PROTO_FORMAT_F32 || format == PROTO_FORMAT_F64);
	assert(name_len <= SCENE_ID_MAX && n_nodes >= 0 && n_world >= 0);
	return proto_buf_append(b, magic, 4) || proto_buf_append(b, fixed, 4) ||
	       append_le(b, seq, 8) || append_le(b, from, 8) ||
	       append_le(b, (uint64_t)n_nodes, 4) || append_le(b, (uint64_t)n_world, 4) ||
	       append_le(b, 0, 4) ||
	       (n_locals >= 0 && append_le(b, (uint64_t)n_locals, 4)) ||
	       append_le(b, name_len, 2) || proto_buf_append(b, scene_name, name_len);
}

/* Appends a double's 8 bytes, little-endian. */
static int append_f64(proto_buf *b, double v)
{
	unsigned char o[8];

	le_put_f64(o, v);
	return proto_buf_append(b, (const char *)o, sizeof(o));
}

/*
 * One locals entry of 'node': its index, its sibling index, then its
 * channels as float64, exactly the numbers of its JSON record: t, r, (a 2D
 * scene's angle), s, pivot, euler.
 */
static int put_locals(proto_buf *b, const scene *s, int node)
{
	node_props p;
	vec3 euler;
	double v[PROTO_BIN_CHANNELS_2D];
	int n = 0;

	scene_props(s, node, &p);
	/* As the JSON record's: + 0.0 shows -0 as 0. */
	euler = quat_to_euler_deg(p.r);
	v[n++] = p.t.x; v[n++] = p.t.y; v[n++] = p.t.z;
	v[n++] = p.r.x; v[n++] = p.r.y; v[n++] = p.r.z; v[n++] = p.r.w;
	if (scene_dims(s) == 2)
		v[n++] = quat_to_angle2d_deg(p.r);
	v[n++] = p.s.x; v[n++] = p.s.y; v[n++] = p.s.z;
	v[n++] = p.pivot.x; v[n++] = p.pivot.y; v[n++] = p.pivot.z;
	v[n++] = euler.x + 0.0; v[n++] = euler.y + 0.0; v[n++] = euler.z + 0.0;
	assert(n == (scene_dims(s) == 2 ? PROTO_BIN_CHANNELS_2D : PROTO_BIN_CHANNELS_3D));
	if (append_le(b, (uint64_t)node, 4) ||
	    append_le(b, (uint64_t)scene_child_index(s, node), 4))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if (append_f64(b, v[i]))
			return RIGD_E_NOMEM;
	return 0;
}

/* The matrices of 'nodes': their indices, then their 12 elements each,
 * WORLD_CHUNK at a time into one append (a frame of a view carries about a
 * thousand, and a hundred views' frames are built per edit). */
static int put_matrices(proto_buf *b, int format, const scene *s, const int *nodes, int n)
{
	unsigned char o[WORLD_CHUNK * MATRIX_BYTES_MAX];
	int at = 0;

	for (int i = 0; i < n; i++) {
		le_put(o + at, (uint32_t)nodes[i], 4);
		at += 4;
		if (at + 4 > (int)sizeof(o) || i == n - 1) {
			if (proto_buf_append(b, (const char *)o, (size_t)at))
				return RIGD_E_NOMEM;
			at = 0;
		}
	}
	for (int i = 0; i < n; i++) {
		const double *rows = scene_world_rows(s, nodes[i]);

		if (rows) {
			at += matrix_bytes(o + at, format, rows, 4, 1);
		} else {
			mat4 w = scene_world(s, nodes[i]);

			at += matrix_bytes(o + at, format, w.m, 1, 4);
		}
		if (at + MATRIX_BYTES_MAX > (int)sizeof(o) || i == n - 1) {
			if (proto_buf_append(b, (const char *)o, (size_t)at))
				return RIGD_E_NOMEM;
			at = 0;
		}
	}
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
	if (put_header(b, format, PROTO_BIN_SNAPSHOT, scene_name, seq, 0, n, n, -1, 0))
		goto out;
	for (int i = 0; i < n; i++)
		if (append_le(b, (uint64_t)nodes[i], 4))
			goto out;
	if (put_matrices(b, format, s, nodes, n))
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
 * (malloc'd, the caller frees). The lookup needs world_nodes sorted: a
 * copy is sorted unless they come in ascending order already (as a view's
 * frame gives them, by handle), or there are no changed nodes to look up. */
static int matrix_nodes(const int *world_nodes, int n_world, const int *changed, int n_changed,
			int **out, int *n_out)
{
	bool ascending = true;
	int *sorted = NULL;
	int *all = malloc(((size_t)n_world + (size_t)n_changed + 1) * sizeof(int));
	int n = n_world;

	for (int i = 1; i < n_world && ascending; i++)
		ascending = world_nodes[i - 1] <= world_nodes[i];
	if (n_world && n_changed && !ascending &&
	    (sorted = malloc((size_t)n_world * sizeof(int))) != NULL) {
		memcpy(sorted, world_nodes, (size_t)n_world * sizeof(int));
		qsort(sorted, (size_t)n_world, sizeof(int), cmp_int);
	}
	if (!all || (n_world && n_changed && !ascending && !sorted)) {
		free(sorted);
		free(all);
		return RIGD_E_NOMEM;
	}
	if (n_world)
		memcpy(all, world_nodes, (size_t)n_world * sizeof(int));
	for (int i = 0; i < n_changed; i++)
		if (!n_world || !bsearch(&changed[i], sorted ? sorted : world_nodes, (size_t)n_world,
					 sizeof(int), cmp_int))
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
	return proto_bin_encode_update_locals(b, format, scene_name, seq, from, s, world_nodes,
					      n_world, changed_nodes, NULL, n_changed, removed,
					      n_removed, with_order);
}

/* The changed nodes sent whole ('want_locals' false) or as locals entries. */
static int split_changed(const int *changed, const bool *locals, int n_changed,
			 bool want_locals, int **out, int *n_out)
{
	*n_out = 0;
	if (!(*out = malloc(((size_t)n_changed + 1) * sizeof(int))))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n_changed; i++)
		if ((locals && locals[i]) == want_locals)
			(*out)[(*n_out)++] = changed[i];
	return 0;
}

int proto_bin_encode_update_locals(proto_buf *b, int format, const char *scene_name,
				   uint64_t seq, uint64_t from, const scene *s,
				   const int *world_nodes, int n_world, const int *changed_nodes,
				   const bool *locals, int n_changed, const edit_id *removed,
				   int n_removed, bool with_order)
{
	size_t start = b->len, json_start;
	int *mat = NULL, n_mat = 0, *whole = NULL, n_whole = 0, *compact = NULL, n_compact = 0;
	int channels = scene_dims(s) == 2 ? PROTO_BIN_CHANNELS_2D : PROTO_BIN_CHANNELS_3D;
	int rc = RIGD_E_NOMEM;

	assert(n_world >= 0 && n_changed >= 0 && n_removed >= 0);
	if (matrix_nodes(world_nodes, n_world, changed_nodes, n_changed, &mat, &n_mat) ||
	    split_changed(changed_nodes, locals, n_changed, false, &whole, &n_whole) ||
	    split_changed(changed_nodes, locals, n_changed, true, &compact, &n_compact))
		goto out;
	/* Without locals entries the frame is of version 1, as before them. */
	if (put_header(b, format, PROTO_BIN_UPDATE, scene_name, seq, from, n_whole, n_mat,
		       n_compact ? n_compact : -1, channels))
		goto out;
	for (int i = 0; i < n_whole; i++)
		if (append_le(b, (uint64_t)whole[i], 4))
			goto out;
	if (put_matrices(b, format, s, mat, n_mat))
		goto out;
	for (int i = 0; i < n_compact; i++)
		if (put_locals(b, s, compact[i]))
			goto out;
	json_start = b->len;
	if (PROTO_BUF_LIT(b, "{") || put_records(b, s, whole, n_whole) ||
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
	free(whole);
	free(compact);
	if (rc)
		json_buf_truncate(b, start);
	return rc;
}

int proto_bin_append_hidden(proto_buf *b, size_t start, const scene *s, const int *hidden,
			    int n_hidden)
{
	const unsigned char *p = (const unsigned char *)b->data + b->head + start + OFF_JSON;
	size_t before = b->len;
	uint32_t json_len;
	int rc;

	if (before < start + PROTO_BIN_HEAD)
		return RIGD_E_INTERNAL;
	json_len = le_get32(p);
	if ((rc = proto_append_hidden(b, before - json_len, s, hidden, n_hidden)) != 0)
		return rc;
	/* The JSON section is the frame's last part: it grew by what was
	 * appended. */
	patch_u32(b, start + OFF_JSON, (uint32_t)(json_len + (b->len - before)));
	return 0;
}
