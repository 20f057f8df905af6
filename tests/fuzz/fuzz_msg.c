/*
 * fuzz_msg.c: libFuzzer target for the message decoders of the codec
 * (proto_decode.c, proto_msg.c).
 *
 * Every input goes through each decoder of untrusted JSON: the websocket
 * message (proto_decode_msg), the edit batch, the bare ops array of the log,
 * the NDJSON log line and the scene-create body. Besides "no crash, no leak,
 * no undefined behaviour" (the sanitizers) it checks:
 *   - a refusal returns a real code, names it in the error and leaves the
 *     output empty; a req echoed on refusal is well formed;
 *   - whatever decodes re-encodes, and the encoding is a fixed point:
 *     decode(encode(x)) succeeds and encodes to the same bytes (numbers
 *     print to the shortest text that reads back to the same bits);
 *   - every encoder's output, the error replies included, is valid JSON
 *     (checked with cJSON, independently of the codec's own reader).
 * The input is passed with its exact length and no NUL after it, as the
 * network hands it over, so AddressSanitizer sees any over-read.
 */
#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include "fuzz_common.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The encoders' output must be JSON (one value, nothing after it). */
static void check_json(const proto_buf *b, const char *what)
{
	fuzz_check_json(proto_buf_str(b), b->len, what);
}

static void check_req(const proto_req *r)
{
	if (!r->present)
		return;
	if (r->is_string)
		FUZZ_CHECK(memchr(r->str, '\0', sizeof(r->str)) != NULL, "req string unterminated");
	else
		FUZZ_CHECK(r->num >= 0 && r->num <= (INT64_C(1) << 53) - 1, "req %lld",
			   (long long)r->num);
}

/* The error reply a refused message gets, over websockets and HTTP. */
static void encode_error(const proto_req *req, const edit_error *e)
{
	proto_buf b;

	proto_buf_init(&b, 16);
	FUZZ_CHECK(proto_encode_error(&b, req, e) == 0, "encode_error");
	check_json(&b, "error reply");
	proto_buf_reset(&b);
	FUZZ_CHECK(proto_encode_http_error(&b, e) == 0, "encode_http_error");
	check_json(&b, "http error");
	proto_buf_release(&b);
}

/* Operations on a batch that the round trip needs: encode it as 'shape'
 * (0 batch object, 1 bare ops array) and decode that shape back. */
static int encode_shape(proto_buf *b, const edit_batch *batch, int shape)
{
	return shape ? proto_encode_ops(b, batch) : proto_encode_batch(b, batch);
}

static int decode_shape(const proto_buf *b, const proto_limits *lim, edit_batch *out,
			edit_error *e, int shape)
{
	return shape ? proto_decode_ops(proto_buf_str(b), b->len, lim, out, e)
		     : proto_decode_batch(proto_buf_str(b), b->len, lim, out, e);
}

/* decode(encode(batch)) encodes to the same bytes as encode(batch). The
 * encoding may be longer than the input (escapes, "1e5" as "100000"), so
 * it is read back without the input's byte limit. */
static void roundtrip_batch(const edit_batch *batch, const proto_limits *input_lim, int shape)
{
	proto_limits roomy = *input_lim, *lim = &roomy;
	proto_buf first, second;
	edit_batch again;
	edit_error e;
	int rc;

	roomy.max_bytes = PROTO_DEFAULT_MAX_BYTES;
	proto_buf_init(&first, 0);
	proto_buf_init(&second, 0);
	FUZZ_CHECK(encode_shape(&first, batch, shape) == 0, "encode");
	check_json(&first, "encoded batch");
	rc = decode_shape(&first, lim, &again, &e, shape);
	FUZZ_CHECK(rc == 0, "own encoding refused (%s: %s): %.300s", err_code(rc), e.message,
		   proto_buf_str(&first));
	FUZZ_CHECK(again.n_ops == batch->n_ops, "%d ops became %d", batch->n_ops, again.n_ops);
	FUZZ_CHECK(encode_shape(&second, &again, shape) == 0, "re-encode");
	FUZZ_CHECK(first.len == second.len &&
			   memcmp(proto_buf_str(&first), proto_buf_str(&second), first.len) == 0,
		   "encoding is not a fixed point:\n%.300s\n%.300s", proto_buf_str(&first),
		   proto_buf_str(&second));
	edit_batch_release(&again);
	proto_buf_release(&first);
	proto_buf_release(&second);
}

static void fuzz_decode_msg(const char *json, size_t len, const proto_limits *lim)
{
	proto_msg m;
	proto_req req;
	edit_error e;
	int rc;

	memset(&req, 0, sizeof(req));
	rc = proto_decode_msg(json, len, lim, &m, &req, &e);
	if (rc) {
		FUZZ_CHECK(rc > RIGD_E_FIRST_ && rc < RIGD_E_LAST_ && rc != RIGD_E_INTERNAL,
			   "code %d", rc);
		FUZZ_CHECK(e.code == rc, "err.code %d vs %d", e.code, rc);
		check_req(&req);
		encode_error(&req, &e);
		return;
	}
	FUZZ_CHECK((m.type >= PROTO_SUBSCRIBE && m.type <= PROTO_PRESENCE) || m.type == PROTO_VIEW,
		   "type %d", m.type);
	FUZZ_CHECK(scene_id_valid(m.scene), "scene name '%s'", m.scene);
	check_req(&m.req);
	if (m.type == PROTO_VIEW && !m.view_clear) {
		/* An accepted view is one the core can cull with: six planes with
		 * a normal, a viewport in range, a size test only with a matrix. */
		aabb box = aabb_make(vec3_make(-1, -2, -3), vec3_make(4, 5, 6));

		for (int k = 0; k < VIEW_PLANES; k++)
			FUZZ_CHECK(m.view.planes[k].n.x != 0 || m.view.planes[k].n.y != 0 ||
					   m.view.planes[k].n.z != 0, "plane %d has no normal", k);
		FUZZ_CHECK(m.view.width_px >= 1 && m.view.width_px <= VIEW_MAX_PX &&
				   m.view.height_px >= 1 && m.view.height_px <= VIEW_MAX_PX,
			   "viewport %g x %g", m.view.width_px, m.view.height_px);
		FUZZ_CHECK(m.view.min_px >= 0 && (m.view.has_vp || m.view.min_px == 0), "min_px %g",
			   m.view.min_px);
		FUZZ_CHECK(!(view_node_px(&m.view, box) < 0), "negative projected size");
		/* "always": valid ids, sorted, each once, at most the limit. */
		FUZZ_CHECK(m.n_always >= 0 && m.n_always <= PROTO_VIEW_ALWAYS_MAX, "%d always ids",
			   m.n_always);
		for (int k = 0; k < m.n_always; k++)
			FUZZ_CHECK(scene_id_valid(m.always[k].s) &&
					   (k == 0 || strcmp(m.always[k - 1].s, m.always[k].s) < 0),
				   "always id %d '%s'", k, m.always[k].s);
	}
	FUZZ_CHECK(m.type == PROTO_VIEW || m.n_always == 0, "always ids outside a view");
	if (m.type == PROTO_EDIT) {
		FUZZ_CHECK(m.batch.n_ops >= 1, "edit with no ops");
		roundtrip_batch(&m.batch, lim, 0);
	}
	if (m.type == PROTO_PRESENCE) {
		proto_buf b;

		FUZZ_CHECK(m.n_selection >= 0 && m.n_selection <= lim->max_selection,
			   "selection %d", m.n_selection);
		for (int i = 0; i < m.n_selection; i++)
			FUZZ_CHECK(scene_id_valid(m.selection[i].s), "selected id");
		proto_buf_init(&b, 0);
		FUZZ_CHECK(proto_encode_presence(&b, m.scene, "c1-2", m.name, m.selection,
						 m.n_selection) == 0,
			   "encode_presence");
		check_json(&b, "presence");
		proto_buf_reset(&b);
		FUZZ_CHECK(proto_encode_join(&b, m.scene, "c1-2", m.name) == 0, "encode_join");
		check_json(&b, "join");
		proto_buf_release(&b);
	}
	{
		proto_buf b;

		proto_buf_init(&b, 16);
		FUZZ_CHECK(proto_encode_ack(&b, &m.req, 7, 3) == 0, "encode_ack");
		check_json(&b, "ack");
		proto_buf_release(&b);
	}
	proto_msg_release(&m);
}

static void fuzz_decode_batch(const char *json, size_t len, const proto_limits *lim, int shape)
{
	edit_batch b;
	edit_error e;
	int rc = shape ? proto_decode_ops(json, len, lim, &b, &e)
		       : proto_decode_batch(json, len, lim, &b, &e);

	if (rc) {
		fuzz_check_failure(rc, &e, &b);
		encode_error(NULL, &e);
		return;
	}
	FUZZ_CHECK(b.n_ops >= 0 && b.n_ops <= lim->edit.max_ops, "%d ops", b.n_ops);
	for (int i = 0; i < b.n_ops; i++) {
		const edit_op *op = &b.ops[i];

		FUZZ_CHECK(op->kind >= EDIT_CREATE && op->kind <= EDIT_OP_LAST_, "op kind %d",
			   op->kind);
		FUZZ_CHECK((op->fields & ~edit_fields_allowed(op->kind)) == 0,
			   "op %d carries fields %#x its kind refuses", i, op->fields);
		FUZZ_CHECK(scene_id_valid(op->id), "op %d id", i);
	}
	roundtrip_batch(&b, lim, shape);
	edit_batch_release(&b);
}

static void fuzz_decode_log_line(const char *json, size_t len, const proto_limits *lim)
{
	proto_limits roomy = *lim;
	proto_log_line l, again;
	proto_buf first, second;
	edit_error e;
	int rc = proto_decode_log_line(json, len, lim, &l, &e);

	if (rc) {
		fuzz_check_failure(rc, &e, &l.batch);
		FUZZ_CHECK(l.kind == PROTO_LOG_EDIT && l.target == 0, "a refused line has a kind");
		return;
	}
	FUZZ_CHECK(l.seq >= 1, "seq %llu", (unsigned long long)l.seq);
	FUZZ_CHECK(l.kind == PROTO_LOG_EDIT ? l.target == 0
					     : (l.kind == PROTO_LOG_UNDO || l.kind == PROTO_LOG_REDO) &&
						       l.target >= 1 && (uint64_t)l.target < l.seq &&
						       l.batch.client[0],
		   "kind %d target %lld of seq %llu", l.kind, (long long)l.target,
		   (unsigned long long)l.seq);
	proto_buf_init(&first, 0);
	proto_buf_init(&second, 0);
	FUZZ_CHECK(proto_encode_log_line_kind(&first, l.seq, l.time_us, &l.batch, l.kind, l.target,
					      NULL, 0) == 0,
		   "encode_log_line");
	FUZZ_CHECK((l.kind != PROTO_LOG_EDIT) ==
			   (strstr(proto_buf_str(&first), l.kind == PROTO_LOG_REDO ? "\"redo\":"
										   : "\"undo\":") != NULL),
		   "an undo or redo written only on its own line");
	FUZZ_CHECK(first.len > 0 && proto_buf_str(&first)[first.len - 1] == '\n',
		   "log line without its newline");
	roomy.max_bytes = PROTO_DEFAULT_MAX_BYTES;
	rc = proto_decode_log_line(proto_buf_str(&first), first.len, &roomy, &again, &e);
	FUZZ_CHECK(rc == 0, "own log line refused (%s: %s): %.300s", err_code(rc), e.message,
		   proto_buf_str(&first));
	FUZZ_CHECK(again.seq == l.seq && again.time_us == l.time_us, "seq or time changed");
	FUZZ_CHECK(again.kind == l.kind && again.target == l.target, "kind or target changed");
	FUZZ_CHECK(strcmp(again.batch.client, l.batch.client) == 0 &&
			   again.batch.has_client_seq == l.batch.has_client_seq &&
			   (!l.batch.has_client_seq ||
			    again.batch.client_seq == l.batch.client_seq),
		   "client or client_seq changed");
	FUZZ_CHECK(proto_encode_log_line_kind(&second, again.seq, again.time_us, &again.batch,
					      again.kind, again.target, NULL, 0) == 0,
		   "re-encode_log_line");
	FUZZ_CHECK(first.len == second.len &&
			   memcmp(proto_buf_str(&first), proto_buf_str(&second), first.len) == 0,
		   "log line encoding is not a fixed point");
	edit_batch_release(&again.batch);
	edit_batch_release(&l.batch);
	proto_buf_release(&first);
	proto_buf_release(&second);
}

static void fuzz_decode_scene_create(const char *json, size_t len)
{
	char name[SCENE_ID_MAX + 1];
	edit_error e;
	int rc = proto_decode_scene_create(json, len, name, &e);

	if (rc)
		fuzz_check_failure(rc, &e, NULL);
	else
		FUZZ_CHECK(scene_id_valid(name), "scene name '%s'", name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *json = (const char *)data;
	proto_limits lim = proto_limits_default();

	/* Small limits, so that the limit paths are reachable by inputs of
	 * -max_len bytes; the defaults for the decoders that take none. */
	lim.max_bytes = 3000;
	lim.max_selection = 8;
	lim.edit.max_ops = 16;
	fuzz_decode_msg(json, size, &lim);
	fuzz_decode_batch(json, size, &lim, 0);
	fuzz_decode_batch(json, size, &lim, 1);
	fuzz_decode_log_line(json, size, &lim);
	fuzz_decode_scene_create(json, size);
	return 0;
}
