/*
 * routes_svg.c: the HTTP routes of SVG artwork (routes.h's table names
 * them): an SVG rig import (the asset and its nodes, one batch), a scene's
 * asset list, and one asset's sanitised bytes, now or as of a seq.
 *
 * An asset is served with a Content-Security-Policy of its own that runs
 * nothing, so that even a document the sanitiser missed something in can
 * neither script nor load anything when opened on its own.
 */
#include "http_respond.h"
#include "log.h"
#include "routes.h"
#include "serve_hooks.h"
#include "server.h"
#include "turn.h"

#include "codec/svg.h"
#include "codec/svg_import.h"
#include "core/asset.h"
#include "core/err.h"
#include "core/num.h"
#include "core/sha256.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The policy of a served asset: nothing runs or loads, inline styles (the
 * artwork's own) apply, and no page may frame it. */
#define ASSET_CSP "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox"

/* ?at=SEQ into *at (-1 when absent); answers and returns false on a bad one. */
static bool asset_at(struct server *S, const struct http_call *call, int64_t *at)
{
	const char *s = routes_arg(call->args, call->n_args, "at");

	*at = -1;
	if (s && !num_parse_i64(s, 0, NUM_SEQ_MAX, at)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_SEQ, "at", "at must be a seq 0..2^53");
		return false;
	}
	return true;
}

static void respond_asset_error(struct server *S, const struct http_call *call, int rc,
				const char *file, int64_t at)
{
	if (rc == RIGD_E_BAD_SEQ)
		http_respond_code(S, call->conn, rc, "at", "scene '%s' has no seq %" PRId64, call->name,
				  at);
	else if (rc == RIGD_E_UNKNOWN_ASSET)
		http_respond_code(S, call->conn, rc, "file", "scene '%s' has no asset '%s'%s",
				  call->name, file, at >= 0 ? " at that seq" : "");
	else
		http_respond_engine(S, call->conn, rc, call->name);
}

/* The assets of a listing, copied out of the engine's callback. */
typedef struct asset_row {
	char file[PROTO_ASSET_FILE_MAX + 1];
	int kind;
	char sha256[65];
	int64_t bytes, seq;
} asset_row;

typedef struct list_acc {
	asset_row *v;
	int n, cap;
} list_acc;

static int list_cb(void *ctx, const engine_asset_info *a)
{
	list_acc *acc = ctx;

	if (acc->n == acc->cap) {
		int cap = acc->cap ? 2 * acc->cap : 8;
		asset_row *v = realloc(acc->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return RIGD_E_NOMEM;
		acc->v = v;
		acc->cap = cap;
	}
	asset_row *r = &acc->v[acc->n++];
	snprintf(r->file, sizeof(r->file), "%s", a->file);
	r->kind = a->kind;
	snprintf(r->sha256, sizeof(r->sha256), "%s", a->sha256);
	r->bytes = a->bytes;
	r->seq = a->seq;
	return 0;
}

/* GET /api/scenes/{name}/assets[?at=SEQ]: [{"file","sha256","bytes","seq"}]. */
void routes_asset_list(struct server *S, const struct http_call *call)
{
	list_acc acc = { 0 };
	proto_asset_info *info = NULL;
	proto_buf b;
	int64_t at;
	int rc;

	if (!asset_at(S, call, &at))
		return;
	rc = engine_assets(S->e, call->name, at, list_cb, &acc);
	if (rc) {
		free(acc.v);
		respond_asset_error(S, call, rc, "", at);
		return;
	}
	if (acc.n && !(info = calloc((size_t)acc.n, sizeof(*info))))
		rc = RIGD_E_NOMEM;
	for (int i = 0; !rc && i < acc.n; i++)
		info[i] = (proto_asset_info){ acc.v[i].file, acc.v[i].kind, acc.v[i].sha256,
					      acc.v[i].bytes, acc.v[i].seq };
	proto_buf_init(&b, 0);
	if (!rc)
		rc = proto_encode_asset_list(&b, info, acc.n) || PROTO_BUF_LIT(&b, "\n");
	free(info);
	free(acc.v);
	http_respond_built(S, call->conn, 200, &b, rc ? RIGD_E_NOMEM : 0);
}

/* GET /api/scenes/{name}/assets/{file}[?at=SEQ]: the asset's bytes with
 * its kind's media type (a sanitised SVG, a re-encoded PNG page, a
 * skeleton file or an atlas), each under the policy that runs nothing. */
void routes_asset_get(struct server *S, const struct http_call *call)
{
	const char *file = strrchr(call->path, '/') + 1;
	char sha[65], etag[80];
	char *svg = NULL;
	size_t len = 0;
	int64_t at;
	int kind = ASSET_SVG, rc;

	if (!svg_file_name_valid(file)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_FIELD, "file",
				  "file: 1 to 128 characters of [A-Za-z0-9_.-], not starting with a dot");
		return;
	}
	if (!asset_at(S, call, &at))
		return;
	rc = engine_asset_get(S->e, call->name, file, at, &svg, &len, sha, &kind);
	if (rc) {
		respond_asset_error(S, call, rc, file, at);
		return;
	}
	snprintf(etag, sizeof(etag), "\"%s\"", sha);
	net_http_respond_doc(S->n, call->conn, asset_kind_media_type(kind), svg, len, ASSET_CSP,
			     etag);
}

/* The import's report: the asset, the nodes made, what the sanitiser
 * removed. A malloc'd string, or NULL when out of memory. */
static char *import_report(const char *file, const svg_clean *art, int nodes)
{
	unsigned char d[32];
	char hex[65];
	proto_buf b;

	sha256_digest(art->svg, art->len, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	proto_buf_init(&b, 0);
	if (PROTO_BUF_LIT(&b, "{\"file\":") || proto_buf_json_string(&b, file) ||
	    PROTO_BUF_LIT(&b, ",\"sha256\":") || proto_buf_json_string(&b, hex) ||
	    PROTO_BUF_LIT(&b, ",\"bytes\":") || json_buf_int(&b, (int64_t)art->len) ||
	    PROTO_BUF_LIT(&b, ",\"nodes\":") || json_buf_int(&b, nodes) ||
	    PROTO_BUF_LIT(&b, ",\"sanitiser\":") || svg_encode_report(&b, art) ||
	    PROTO_BUF_LIT(&b, "}")) {
		proto_buf_release(&b);
		return NULL;
	}
	return proto_buf_take(&b);
}

bool routes_import_scene(struct server *S, const struct http_call *call, const char *what,
			 bool *created)
{
	const char *name = call->name;
	int rc;

	*created = false;
	if (engine_scene(S->e, name)) {
		if (engine_scene_dims(S->e, name) == 2)
			return true;
		http_respond_code(S, call->conn, RIGD_E_BAD_FIELD, "scene",
				  "scene '%s' is 3D; %s needs a 2D scene", name, what);
		return false;
	}
	if (engine_scenes(S->e, NULL, 0) >= S->o.max_scenes) {
		http_respond_code(S, call->conn, RIGD_E_LIMIT, "", "there are %d scenes already (--max-scenes)",
				  S->o.max_scenes);
		return false;
	}
	/* In a cluster the scene is made through the catalog first, and the
	 * request runs again then: nothing to answer now. */
	if (S->hooks && S->hooks->relay_create(S, call, 2))
		return false;
	if ((rc = engine_scene_create_dims(S->e, name, 2)) != 0) {
		http_respond_engine(S, call->conn, rc, name);
		return false;
	}
	*created = true;
	return true;
}

/*
 * POST /api/scenes/{name}/svg: an SVG rig, {"file","svg","manifest"}, as
 * one batch with its asset (svg_import.h), into the 2D scene 'name' (made
 * when missing). Runs between turns; a body that does not import creates
 * nothing, not even the scene; one that does is answered after its commit
 * with {"seq","recomputed","report"}.
 */
void routes_svg_import(struct server *S, const struct http_call *call)
{
	const char *client = routes_arg(call->args, call->n_args, "client");
	svg_import in;
	svg_clean art;
	edit_batch batch;
	edit_limits lim = S->lim.edit;
	edit_error err;
	char *report = NULL;
	bool created = false;
	int rc;

	if (S->hooks && S->hooks->relay_write(S, call))
		return;  /* relayed to the owner, or waiting for one */
	if ((rc = svg_import_prepare(call->body, call->body_len, engine_scene(S->e, call->name), &in,
				     &art, &batch, &err)) != 0) {
		http_respond_error(S, call->conn, &err);
		return;
	}
	if (client && !scene_id_valid(client)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_ID, "client", "bad client id");
		goto out;
	}
	if (client)
		snprintf(batch.client, sizeof(batch.client), "%s", client);
	if (!(report = import_report(in.file, &art, batch.n_ops))) {
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
		goto out;
	}
	if (!routes_import_scene(S, call, "an SVG rig", &created))
		goto out;
	if (lim.max_ops < batch.n_ops)
		lim.max_ops = batch.n_ops;
	edit_error_clear(&err);
	engine_asset asset = { in.file, ASSET_SVG, art.svg, art.len, art.ids, art.n_ids };
	rc = turn_submit_asset(S, PROTO_EDIT, call->name, &batch, &lim, &asset, 1, batch.client,
			       NULL, call->conn, NULL, &err);
	if (rc) {
		http_respond_error(S, call->conn, &err);
		if (created && engine_scene_delete(S->e, call->name) != 0)
			serve_log(LOG_WARN, "cannot delete scene %s after a failed import: %s", call->name,
				  engine_errmsg(S->e));
		goto out;
	}
	S->pend[S->n_pend - 1].report = report;
	report = NULL;
	if (created)
		memcpy(S->pend[S->n_pend - 1].created, call->name, strlen(call->name) + 1);
	serve_log(LOG_INFO, "SVG import into %s: %s, %d nodes, %d removed", call->name, in.file,
		  batch.n_ops, art.n_removed_total);
out:
	free(report);
	edit_batch_release(&batch);
	svg_clean_release(&art);
	svg_import_release(&in);
}
