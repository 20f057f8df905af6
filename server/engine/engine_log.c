/*
 * engine_log.c: a scene's log as NDJSON, out (engine_log) and in
 * (engine_import, into an empty scene, all or nothing).
 *
 * Import reads untrusted text: every line is decoded and validated like a
 * client's batch before it is applied, and a failure names its line.
 */
#include "engine_internal.h"

#include "codec/asset_check.h"
#include "core/asset.h"
#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Export. */

/* An asset of the exported range: the seq of its line and its file. */
typedef struct log_asset_ref {
	int64_t seq;
	char file[PROTO_ASSET_FILE_MAX + 1];
} log_asset_ref;

typedef struct log_ctx {
	engine *e;
	proto_buf buf;
	engine_line_fn fn;
	void *ctx;
	log_asset_ref *assets;    /* the range's assets, in (seq, file) order */
	int n_assets, cap_assets;
	int next_asset;           /* the first not yet written */
} log_ctx;

static int asset_ref_cb(void *vctx, const store_asset *a)
{
	log_ctx *c = vctx;

	if (c->n_assets == c->cap_assets) {
		int cap = c->cap_assets ? 2 * c->cap_assets : 8;
		log_asset_ref *v = realloc(c->assets, sizeof(*v) * (size_t)cap);
		if (!v)
			return RIGD_E_NOMEM;
		c->assets = v;
		c->cap_assets = cap;
	}
	c->assets[c->n_assets].seq = a->seq;
	snprintf(c->assets[c->n_assets].file, sizeof(c->assets[0].file), "%s", a->file);
	c->n_assets++;
	return 0;
}

static int asset_bytes_cb(void *vctx, const store_asset *a)
{
	proto_log_asset *out = vctx;

	snprintf(out->sha256, sizeof(out->sha256), "%s", a->sha256);
	out->kind = asset_kind_parse(a->kind);
	out->bytes = malloc((size_t)a->bytes + 1);
	if (!out->bytes)
		return RIGD_E_NOMEM;
	memcpy(out->bytes, a->svg, (size_t)a->bytes);
	out->bytes[a->bytes] = '\0';
	out->len = (size_t)a->bytes;
	return 0;
}

/* The assets stored by batch 'seq' (the next ones of c's list), read with
 * their bytes into a malloc'd *out of *n entries. */
static int row_assets(log_ctx *c, int64_t scene_id, int64_t seq, proto_log_asset **out, int *n)
{
	int first = c->next_asset, k = 0, rc = 0;

	*out = NULL;
	*n = 0;
	while (c->next_asset < c->n_assets && c->assets[c->next_asset].seq < seq)
		first = ++c->next_asset;
	while (c->next_asset < c->n_assets && c->assets[c->next_asset].seq == seq)
		c->next_asset++;
	if (c->next_asset == first)
		return 0;
	proto_log_asset *a = calloc((size_t)(c->next_asset - first), sizeof(*a));
	if (!a)
		return RIGD_E_NOMEM;
	for (int i = first; i < c->next_asset && !rc; i++, k++) {
		snprintf(a[k].file, sizeof(a[k].file), "%s", c->assets[i].file);
		rc = store_assets(c->e->st, scene_id, a[k].file, seq, seq, true, asset_bytes_cb, &a[k]);
		if (!rc && !a[k].bytes)
			rc = RIGD_E_STORAGE;
	}
	if (rc) {
		proto_log_assets_free(a, k);
		return rc;
	}
	*out = a;
	*n = k;
	return 0;
}

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
	proto_log_asset *assets = NULL;
	int n_assets = 0;
	err = row_assets(c, row->scene_id, row->seq, &assets, &n_assets);
	proto_buf_reset(&c->buf);
	if (!err)
		err = proto_encode_log_line_kind(&c->buf, (uint64_t)row->seq, row->time_us, &b,
						 row->kind, row->target, assets, n_assets);
	proto_log_assets_free(assets, n_assets);
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
	/* The few assets of the range first, so that each line asks for the
	 * bytes of its own only. */
	int err = store_assets(e->st, rt->id, NULL, from > 0 ? from : 0, to, false, asset_ref_cb, &c);
	if (!err)
		err = store_edits(e->st, rt->id, from > 0 ? from - 1 : 0, to, false, log_cb, &c);
	if (err == RIGD_E_STORAGE && !e->errmsg[0])
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	proto_buf_release(&c.buf);
	free(c.assets);
	return err;
}

/* ------------------------------------------------------------------------ */
/* Import. */

/* The state of an import: the scene it fills and what it stored so far. */
typedef struct import_ctx {
	engine *e;
	scene_rt *rt;
	proto_limits lim;
	int64_t seq;              /* the last batch stored */
	int64_t weight;           /* logged since the last snapshot */
	int64_t n_ops;
} import_ctx;

/* Stores batch 'll' (applied to the scene, with inverse 'inv') as row
 * c->seq, in the import's transaction. 0 or an error set in 'err'. */
static int import_store_row(import_ctx *c, const proto_log_line *ll, const edit_batch *inv,
			    const proto_log_asset *assets, int n_assets, edit_error *err)
{
	engine *e = c->e;
	store_edit row = {
		.scene_id = c->rt->id,
		.seq = c->seq,
		.time_us = ll->time_us,
		.client = ll->batch.client,
		.has_client_seq = ll->batch.has_client_seq,
		.client_seq = ll->batch.client_seq,
		.kind = ll->kind,
		.target = ll->target,
		.n_ops = ll->batch.n_ops,
	};
	char *ops = NULL, *inverse = NULL;
	unsigned char *ops_bin = NULL;
	size_t line_len = 0;
	assert(store_in_transaction(e->st) && c->seq >= 1);
	int rc = eng_encode_ops(&ll->batch, &ops, &row.ops_len);
	if (!rc && e->line_max) {
		/* The line as this database will write it must fit. */
		rc = eng_line_len(c->seq, ll->time_us, ll->batch.client, ll->batch.has_client_seq,
				  ll->batch.client_seq, ll->kind, ll->target, row.ops_len, assets,
				  n_assets, &line_len);
		if (!rc && (rc = eng_line_fits(e, "the batch", line_len, err)) != 0) {
			free(ops);
			return rc;
		}
	}
	if (!rc)
		rc = eng_encode_ops(inv, &inverse, &row.inverse_len);
	if (!rc)
		rc = engine_ops_encode_bin(&ll->batch, &ops_bin, &row.ops_bin_len);
	if (!rc) {
		row.ops = ops;
		row.inverse = inverse;
		row.ops_bin = ops_bin;
		rc = store_edit_append(e->st, &row);
		if (rc == RIGD_E_INTERNAL) {
			/* The store's unique (scene, client, client_seq) key. */
			edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client_seq",
				       "client '%s' client_seq %lld appears twice",
				       ll->batch.client, (long long)ll->batch.client_seq);
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
	return rc;
}

/* Stores the assets of line 'seq', in the import's transaction, each
 * checked first: its bytes are what its kind's reader keeps, under the
 * SHA-256 the line names (asset_check). 0 or an error set in 'err'. */
static int import_store_assets(import_ctx *c, int64_t seq, const proto_log_asset *a, int n,
			       edit_error *err)
{
	for (int i = 0; i < n; i++) {
		asset_checked ids;
		size_t ids_len = 0;
		int rc = asset_check(a[i].kind, a[i].file, a[i].bytes, a[i].len, a[i].sha256,
				     "assets", &ids, err);
		if (rc)
			return rc;
		char *list = asset_checked_lines(&ids, &ids_len);
		asset_checked_release(&ids);
		if (!list) {
			edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
			return RIGD_E_NOMEM;
		}
		store_asset row = {
			.file = a[i].file,
			.kind = asset_kind_name(a[i].kind),
			.seq = seq,
			.sha256 = a[i].sha256,
			.bytes = (int64_t)a[i].len,
			.svg = a[i].bytes,
			.ids = list,
			.ids_len = ids_len,
		};
		rc = store_asset_put(c->e->st, c->rt->id, &row);
		if (!rc)
			rc = asset_set_add(scene_assets(c->rt->sc), a[i].file, list, ids_len);
		free(list);
		if (!rc)
			rc = eng_skel_add(c->rt->sc, a[i].file, a[i].kind, a[i].bytes, a[i].len);
		if (rc == RIGD_E_INTERNAL) {
			edit_error_set(err, RIGD_E_ASSET_EXISTS, -1, "assets",
				       "asset '%s' appears twice", a[i].file);
			return RIGD_E_ASSET_EXISTS;
		}
		if (rc) {
			eng_set_errmsg(c->e, "%s", store_errmsg(c->e->st));
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			return rc;
		}
	}
	return 0;
}

/* Imports one decoded line: checks its seq and ops, stores its assets
 * (first, so that its ops may name them), applies it to the scene and
 * stores its row, with a snapshot when one is due. Releases ll's batch.
 * 0 or an error set in 'err' (without the line number, which the caller
 * adds). */
static int import_batch(import_ctx *c, proto_log_line *ll_in, const proto_log_asset *assets,
			int n_assets, edit_error *err)
{
	proto_log_line ll = *ll_in;
	edit_batch inv;
	int rc;

	if ((int64_t)ll.seq != c->seq + 1) {
		edit_error_set(err, RIGD_E_BAD_SEQ, -1, "seq", "seq %llu where %lld belongs",
			       (unsigned long long)ll.seq, (long long)(c->seq + 1));
		edit_batch_release(&ll.batch);
		return RIGD_E_BAD_SEQ;
	}
	/* A log holds the absolute channels relative ops resolved to; a line
	 * with a relative op was not written by rigd and would store one. */
	for (int i = 0; i < ll.batch.n_ops; i++) {
		const edit_op *op = &ll.batch.ops[i];
		if (edit_op_is_relative(op->kind) || (op->fields & EDIT_F_ANGLE)) {
			const char *f = edit_op_is_relative(op->kind) ? "op" : "angle";
			edit_error_set(err, RIGD_E_BAD_FIELD, i, f,
				       "%s: a log holds only create, set, reparent, delete, pose_set and "
				       "pose_delete ops with absolute channels (r, not angle)", f);
			edit_batch_release(&ll.batch);
			return RIGD_E_BAD_FIELD;
		}
	}
	/* An undo or redo names an earlier batch of its own client. */
	rc = eng_check_target(c->e, c->rt, ll.batch.client, (int64_t)ll.seq, ll.kind, ll.target,
			      err);
	if (!rc)
		rc = import_store_assets(c, (int64_t)ll.seq, assets, n_assets, err);
	if (!rc)
		rc = edit_apply_ex(c->rt->sc, &ll.batch, NULL, NULL, &inv, err);
	if (rc) {
		edit_batch_release(&ll.batch);
		return rc;
	}
	c->seq++;
	c->n_ops += ll.batch.n_ops;
	c->weight += batch_weight(ll.batch.n_ops);
	rc = import_store_row(c, &ll, &inv, assets, n_assets, err);
	edit_batch_release(&inv);
	edit_batch_release(&ll.batch);
	if (!rc && eng_snapshot_due(c->e, c->rt, c->weight)) {
		rc = eng_put_snapshot(c->e, c->rt, c->rt->sc, c->seq);
		if (rc == RIGD_E_NOMEM)
			rc = 0; /* the log is complete without it */
		else if (rc)
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		else
			c->weight = 0;
	}
	return rc;
}

/* Decodes one non-blank line ('n' bytes) and imports it. 0 or an error
 * set in 'err'. */
static int import_line(import_ctx *c, const char *line, size_t n, edit_error *err)
{
	proto_log_line ll;
	proto_log_asset *assets = NULL;
	int n_assets = 0;
	int rc = proto_decode_log_line_assets(line, n, &c->lim, &ll, &assets, &n_assets, err);

	if (!rc)
		rc = import_batch(c, &ll, assets, n_assets, err);
	proto_log_assets_free(assets, n_assets);
	return rc;
}

/* Walks the lines of 'ndjson', importing each that is not blank, until
 * one fails. Returns 0 or its error; *line_no gets the last line read. */
static int import_lines(import_ctx *c, const char *ndjson, size_t len, int *line_no,
			edit_error *err)
{
	size_t off = 0;
	int rc = 0;
	*line_no = 0;
	while (!rc && off < len) {
		const char *line = ndjson + off;
		const char *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		off += n + (nl ? 1 : 0);
		(*line_no)++;
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
			k++;
		if (k < n)
			rc = import_line(c, line, n, err);
	}
	assert(rc || off == len);
	return rc;
}

/* After a failed import: the scene is emptied again (it was empty), and
 * the message names the line that failed. This is the one place that adds
 * the "line N: " prefix; callers pass the message on as it is. */
static void import_undo(import_ctx *c, int line_no, int *bad_line, edit_error *err)
{
	engine *e = c->e;
	scene_rt *rt = c->rt;
	scene *s = scene_new();
	if (s) {
		scene_set_max_nodes(s, e->opts.max_nodes);
		scene_set_dims(s, rt->dims);
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
	import_ctx c = { .e = e, .rt = rt, .lim = eng_trusted_limits() };
	int line_no = 0;
	int rc = store_begin(e->st);
	if (rc) {
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
		edit_error_set(err, RIGD_E_STORAGE, -1, "", "%s", err_str(RIGD_E_STORAGE));
		return RIGD_E_STORAGE;
	}
	rc = import_lines(&c, ndjson, len, &line_no, err);
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
		import_undo(&c, line_no, bad_line, err);
		return rc;
	}
	rt->seq = c.seq;
	rt->next_seq = c.seq + 1;
	rt->tail_weight = c.weight;
	eng_hist_clear(rt);
	e->stats.batches += (uint64_t)c.seq;
	e->stats.ops += (uint64_t)c.n_ops;
	if (n_batches)
		*n_batches = c.seq;
	return 0;
}
