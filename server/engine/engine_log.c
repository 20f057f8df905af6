/*
 * engine_log.c: a scene's log as NDJSON, out (engine_log) and in
 * (engine_import, into an empty scene, all or nothing).
 *
 * Import reads untrusted text: every line is decoded and validated like a
 * client's batch before it is applied, and a failure names its line.
 */
#include "engine_internal.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Export. */

typedef struct log_ctx {
	engine *e;
	proto_buf buf;
	engine_line_fn fn;
	void *ctx;
} log_ctx;

static int log_cb(void *vctx, const store_edit *row)
{
	log_ctx *c = vctx;
	proto_limits lim = eng_trusted_limits();
	edit_batch b;
	int err = proto_decode_ops(row->ops, row->ops_len, &lim, &b, NULL);
	if (err) {
		eng_set_errmsg(c->e, "seq %lld has unreadable ops", (long long)row->seq);
		return err == RIGD_E_NOMEM ? err : RIGD_E_STORAGE;
	}
	snprintf(b.client, sizeof(b.client), "%s", row->client);
	b.has_client_seq = row->has_client_seq;
	b.client_seq = row->client_seq;
	proto_buf_reset(&c->buf);
	err = proto_encode_log_line(&c->buf, (uint64_t)row->seq, row->time_us, &b);
	edit_batch_release(&b);
	if (err)
		return err;
	return c->fn(c->ctx, proto_buf_str(&c->buf), c->buf.len);
}

int engine_log(engine *e, const char *name, int64_t from, int64_t to, engine_line_fn fn,
	       void *ctx)
{
	scene_rt *rt = eng_find_scene(e, name);
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	log_ctx c = { .e = e, .fn = fn, .ctx = ctx };
	proto_buf_init(&c.buf, 0);
	int err = store_edits(e->st, rt->id, from > 0 ? from - 1 : 0, to, false, log_cb, &c);
	if (err == RIGD_E_STORAGE && !e->errmsg[0])
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	proto_buf_release(&c.buf);
	return err;
}

int engine_import(engine *e, const char *name, const char *ndjson, size_t len,
		  int64_t *n_batches, int *bad_line, edit_error *err)
{
	edit_error_clear(err);
	if (bad_line)
		*bad_line = 0;
	if (n_batches)
		*n_batches = 0;
	scene_rt *rt = eng_find_scene(e, name);
	if (!rt) {
		edit_error_set(err, RIGD_E_UNKNOWN_SCENE, -1, "scene", "unknown scene '%s'",
			       name ? name : "");
		return RIGD_E_UNKNOWN_SCENE;
	}
	if (eng_writable(e, err))
		return RIGD_E_FORBIDDEN;
	if (rt->seq || rt->n_pending || scene_count(rt->sc)) {
		edit_error_set(err, RIGD_E_SCENE_NOT_EMPTY, -1, "scene", "scene '%s' is not empty",
			       rt->name);
		return RIGD_E_SCENE_NOT_EMPTY;
	}
	proto_limits lim = eng_trusted_limits();
	int rc = store_begin(e->st);
	if (rc) {
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
		edit_error_set(err, RIGD_E_STORAGE, -1, "", "%s", err_str(RIGD_E_STORAGE));
		return RIGD_E_STORAGE;
	}
	int64_t seq = 0, weight = 0, n_ops = 0;
	int line_no = 0;
	size_t off = 0;
	while (!rc && off < len) {
		const char *line = ndjson + off;
		const char *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		off += n + (nl ? 1 : 0);
		line_no++;
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
			k++;
		if (k == n)
			continue; /* a blank line */
		proto_log_line ll;
		rc = proto_decode_log_line(line, n, &lim, &ll, err);
		if (rc)
			break;
		if ((int64_t)ll.seq != seq + 1) {
			edit_error_set(err, RIGD_E_BAD_SEQ, -1, "seq", "seq %llu where %lld belongs",
				       (unsigned long long)ll.seq, (long long)(seq + 1));
			edit_batch_release(&ll.batch);
			rc = RIGD_E_BAD_SEQ;
			break;
		}
		edit_batch inv;
		rc = edit_apply_ex(rt->sc, &ll.batch, NULL, NULL, &inv, err);
		if (rc) {
			edit_batch_release(&ll.batch);
			break;
		}
		seq++;
		n_ops += ll.batch.n_ops;
		weight += batch_weight(ll.batch.n_ops);
		store_edit row = {
			.scene_id = rt->id,
			.seq = seq,
			.time_us = ll.time_us,
			.client = ll.batch.client,
			.has_client_seq = ll.batch.has_client_seq,
			.client_seq = ll.batch.client_seq,
			.kind = STORE_EDIT,
			.n_ops = ll.batch.n_ops,
		};
		char *ops = NULL, *inverse = NULL;
		unsigned char *ops_bin = NULL;
		rc = eng_encode_ops(&ll.batch, &ops, &row.ops_len);
		if (!rc)
			rc = eng_encode_ops(&inv, &inverse, &row.inverse_len);
		if (!rc)
			rc = engine_ops_encode_bin(&ll.batch, &ops_bin, &row.ops_bin_len);
		if (!rc) {
			row.ops = ops;
			row.inverse = inverse;
			row.ops_bin = ops_bin;
			rc = store_edit_append(e->st, &row);
			if (rc == RIGD_E_INTERNAL) {
				edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client_seq",
					       "client '%s' client_seq %lld appears twice",
					       ll.batch.client, (long long)ll.batch.client_seq);
				rc = RIGD_E_BAD_FIELD;
			} else if (rc) {
				eng_set_errmsg(e, "%s", store_errmsg(e->st));
				edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			}
		} else {
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		}
		free(ops);
		free(inverse);
		free(ops_bin);
		edit_batch_release(&inv);
		edit_batch_release(&ll.batch);
		if (!rc && eng_snapshot_due(e, rt, weight)) {
			rc = eng_put_snapshot(e, rt, rt->sc, seq);
			if (rc == RIGD_E_NOMEM)
				rc = 0; /* the log is complete without it */
			else if (rc)
				edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			else
				weight = 0;
		}
	}
	if (!rc) {
		rc = store_commit(e->st);
		if (rc) {
			eng_set_errmsg(e, "%s", store_errmsg(e->st));
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		}
	} else {
		store_rollback(e->st);
	}
	if (rc) {
		/* The scene was empty: empty it again. */
		scene *s = scene_new();
		if (s) {
			scene_set_max_nodes(s, e->opts.max_nodes);
			scene_free(rt->sc);
			rt->sc = s;
		} else {
			eng_load_scene(e, rt);
		}
		if (bad_line)
			*bad_line = line_no;
		if (err && err->message[0] && line_no) {
			char msg[EDIT_MESSAGE_MAX];
			snprintf(msg, sizeof(msg), "line %d: %.360s", line_no, err->message);
			memcpy(err->message, msg, sizeof(msg));
		}
		return rc;
	}
	rt->seq = seq;
	rt->next_seq = seq + 1;
	rt->tail_weight = weight;
	eng_hist_clear(rt);
	e->stats.batches += (uint64_t)seq;
	e->stats.ops += (uint64_t)n_ops;
	if (n_batches)
		*n_batches = seq;
	return 0;
}

