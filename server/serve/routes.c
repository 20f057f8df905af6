/*
 * routes.c: the HTTP API's route table and its handlers (see routes.h).
 *
 * A handler is reached only through its row, after the row's role was
 * checked and the scene name in the path was found valid; it answers its
 * request exactly once.
 */
#include "routes.h"
#include "auth.h"
#include "http_respond.h"
#include "log.h"
#include "metrics.h"
#include "rooms.h"
#include "serve_hooks.h"
#include "server.h"
#include "turn.h"
#include "util.h"

#include "codec/gltf.h"
#include "core/err.h"
#include "core/num.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* GET /api/scenes: every scene, or with tokens those the caller may read. */
static void route_scene_list(struct server *S, const struct http_call *call)
{
	uint64_t conn = call->conn;
	int n = engine_scenes(S->e, NULL, 0);
	engine_scene_info *es = n > 0 ? calloc((size_t)n, sizeof(*es)) : NULL;
	proto_scene_info *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;
	int *dims;
	proto_buf b;

	if (n > 0 && (!es || !v)) {
		free(es);
		free(v);
		http_respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	n = engine_scenes(S->e, es, n);
	for (int i = 0; i < n; i++)
		v[i] = (proto_scene_info){ es[i].name, (uint64_t)es[i].seq, es[i].nodes };
	free(es);
	if (call->tok) {
		int w = 0;

		for (int i = 0; i < n; i++)
			if (auth_role_for(S, call->tok, v[i].name, NULL) >= ROLE_VIEWER)
				v[w++] = v[i];
		n = w;
	}
	dims = n > 0 ? calloc((size_t)n, sizeof(*dims)) : NULL;
	for (int i = 0; dims && i < n; i++)
		dims[i] = engine_scene_dims(S->e, v[i].name);
	proto_buf_init(&b, 0);
	if ((n > 0 && !dims) || proto_encode_scene_list_dims(&b, v, dims, n)) {
		free(v);
		free(dims);
		proto_buf_release(&b);
		http_respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	free(v);
	free(dims);
	http_respond_json(S, conn, 200, &b);
}

/* The value of query argument 'name' ("name=value"), or NULL. */
const char *routes_arg(char *const *args, int n_args, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n_args; i++)
		if (strncmp(args[i], name, len) == 0 && args[i][len] == '=')
			return args[i] + len + 1;
	return NULL;
}


static int log_line(void *ctx, const char *line, size_t len)
{
	return proto_buf_append(ctx, line, len);
}

/* GET /api/scenes/{name}/log[?from=SEQ&to=SEQ]: the log as NDJSON. */
static void route_log_get(struct server *S, const struct http_call *call)
{
	uint64_t conn = call->conn;
	const char *name = call->name;
	const char *from_s = routes_arg(call->args, call->n_args, "from");
	const char *to_s = routes_arg(call->args, call->n_args, "to");
	int64_t from = 1, to = -1;
	bool from_ok = !from_s || num_parse_i64(from_s, 0, NUM_SEQ_MAX, &from);
	proto_buf b;
	int rc;

	if (!from_ok || (to_s && !num_parse_i64(to_s, 0, NUM_SEQ_MAX, &to))) {
		http_respond_code(S, conn, RIGD_E_BAD_SEQ, from_ok ? "to" : "from",
				  "from and to must be seqs 0..2^53");
		return;
	}
	proto_buf_init(&b, 0);
	rc = engine_log(S->e, name, from, to, log_line, &b);
	if (rc) {
		proto_buf_release(&b);
		http_respond_engine(S, conn, rc, name);
		return;
	}
	http_respond_buf(S, conn, 200, "application/x-ndjson", &b);
}

/*
 * POST /api/scenes/{name}/log: replays an exported log (NDJSON) into an
 * empty scene; its subscribers then get a snapshot. In a cluster a process
 * that does not own the scene relays the request to the owner, which
 * appends the batches to the scene's log stream for the others.
 */
static void route_log_import(struct server *S, const struct http_call *call)
{
	uint64_t conn = call->conn;
	const char *name = call->name;
	int64_t n = 0;
	int bad_line = 0, rc;
	edit_error err;
	proto_buf b;

	if (S->hooks && S->hooks->relay_write(S, call))
		return;  /* relayed to the owner, or waiting for one */
	edit_error_clear(&err);
	/* In a cluster the owner alone writes a scene. */
	rc = S->hooks ? S->hooks->check_edit(S, name, &err) : 0;
	if (rc == 0)
		rc = engine_import(S->e, name, call->body, call->body_len, &n, &bad_line, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		/* The engine's message names the bad line ("line N: ..."). */
		http_respond_error(S, conn, &err);
		return;
	}
	{
		struct room *st = rooms_find(S, name);
		int64_t seq = engine_seq(S->e, name);

		engine_update(S->e, name, NULL, NULL);
		if (S->hooks)  /* to the scene's log stream */
			S->hooks->publish_turn(S, name, 0, seq);
		if (st) {
			/* Subscribers get a snapshot of the imported scene. */
			rooms_restart(st, seq);
			for (int i = 0; i < st->n_subs; i++)
				net_ws_wake(S->n, st->subs[i]);
		}
		proto_buf_init(&b, 0);
		rc = PROTO_BUF_LIT(&b, "{\"scene\":") || proto_buf_json_string(&b, name) ||
		     PROTO_BUF_LIT(&b, ",\"batches\":") || serve_append_i64(&b, n) ||
		     PROTO_BUF_LIT(&b, ",\"seq\":") || serve_append_i64(&b, seq) || PROTO_BUF_LIT(&b, "}");
		http_respond_built(S, conn, 200, &b, rc ? RIGD_E_NOMEM : 0);
	}
}

/* ---- glTF in and out ---- */

/*
 * The scene 'name' now (at NULL) or right after seq 'at': *out points at the
 * live scene, or at *past (a copy the caller frees with scene_free), with
 * its seq in *seq. On error answers the request and returns false.
 */
static bool read_scene_at(struct server *S, uint64_t conn, const char *name, const char *at,
			  const scene **out, scene **past, int64_t *seq)
{
	int rc;

	*past = NULL;
	if (!at) {
		*out = engine_scene(S->e, name);
		if (!*out) {
			http_respond_code(S, conn, RIGD_E_UNKNOWN_SCENE, "", "no scene '%s'", name);
			return false;
		}
		*seq = engine_seq(S->e, name);
		return true;
	}
	if (!num_parse_i64(at, 0, NUM_SEQ_MAX, seq)) {
		http_respond_code(S, conn, RIGD_E_BAD_SEQ, "at", "at must be a seq 0..2^53");
		return false;
	}
	/* Seq 0 is the empty scene by definition: no history to read. */
	if (*seq == 0 && engine_seq(S->e, name) >= 0) {
		rc = (*past = scene_new()) ? 0 : RIGD_E_NOMEM;
		if (*past)
			scene_set_dims(*past, engine_scene_dims(S->e, name));
	} else
		rc = engine_at(S->e, name, *seq, past);
	if (rc == RIGD_E_BAD_SEQ) {
		http_respond_code(S, conn, rc, "at", "scene '%s' has no seq %" PRId64, name, *seq);
		return false;
	}
	if (rc) {
		http_respond_engine(S, conn, rc, name);
		return false;
	}
	*out = *past;
	return true;
}

/* GET /api/scenes/{name}/gltf[?at=SEQ]: the scene as glTF 2.0 JSON. */
static void route_gltf_export(struct server *S, const struct http_call *call)
{
	uint64_t conn = call->conn;
	const char *name = call->name, *at = routes_arg(call->args, call->n_args, "at");
	const scene *s;
	scene *past;
	int64_t seq;
	gltf_export_opts eo = {.scene_name = name, .generator = "rigd"};
	char *json = NULL;
	size_t len = 0;
	int rc;

	if (!read_scene_at(S, conn, name, at, &s, &past, &seq))
		return;
	rc = gltf_export(s, &eo, &json, &len);
	scene_free(past);
	if (rc) {
		http_respond_code(S, conn, rc, "", "cannot export scene '%s': %s", name, err_str(rc));
		return;
	}
	net_http_respond(S->n, conn, 200, "model/gltf+json", json, len);
}

/* A query flag: absent, "0" or "false" is false; "", "1" or "true" true. */
static bool parse_flag(const char *v, bool *out)
{
	if (!v) {
		*out = false;
		return true;
	}
	if (!*v || strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
		*out = false;
	else
		return false;
	return true;
}

/*
 * The import options of a POST .../gltf from its query: ?scene= (index of
 * a scene of the file), ?scene_name=, ?parent= (a node of an existing
 * scene), ?nearest=, ?client=. False after answering when one is wrong or
 * does not fit the scene ('existing', NULL when it is new).
 */
static bool import_opts(struct server *S, const struct http_call *d, const scene *existing,
			gltf_import_opts *opts)
{
	const char *name = d->name;
	const char *scene_s = routes_arg(d->args, d->n_args, "scene");
	const char *parent = routes_arg(d->args, d->n_args, "parent");
	const char *client = routes_arg(d->args, d->n_args, "client");
	int64_t idx = -1;

	if (parent && !*parent)
		parent = NULL;
	if (scene_s && !num_parse_i64(scene_s, 0, INT_MAX, &idx)) {
		http_respond_code(S, d->conn, RIGD_E_BAD_FIELD, "scene",
			     "scene must be the index of a scene of the file");
		return false;
	}
	if (!parse_flag(routes_arg(d->args, d->n_args, "nearest"), &opts->nearest_trs)) {
		http_respond_code(S, d->conn, RIGD_E_BAD_FIELD, "nearest", "nearest must be 0 or 1");
		return false;
	}
	if (client && !scene_id_valid(client)) {
		http_respond_code(S, d->conn, RIGD_E_BAD_ID, "client", "bad client id");
		return false;
	}
	if (!existing && parent) {
		http_respond_code(S, d->conn, RIGD_E_UNKNOWN_SCENE, "scene",
			     "no scene '%s' to import under node '%s'", name, parent);
		return false;
	}
	if (existing && !parent && scene_count(existing) > 0) {
		http_respond_code(S, d->conn, RIGD_E_SCENE_NOT_EMPTY, "scene",
			     "scene '%s' has %d nodes: import into a new scene, or under a node "
			     "with ?parent=", name, scene_count(existing));
		return false;
	}
	opts->scene_index = scene_s ? (int)idx : -1;
	opts->scene_name = routes_arg(d->args, d->n_args, "scene_name");
	opts->parent = parent;
	opts->existing = existing;
	return true;
}

/*
 * POST /api/scenes/{name}/gltf: imports a .gltf or .glb body as ONE batch
 * of creates, into a new scene (created here) or an empty one, or under
 * node ?parent= of an existing scene. Runs between turns (nothing else is
 * pending): a file that does not import creates nothing; one that does is
 * submitted like an edit and answered after its commit, with the report.
 */
static void route_gltf_import(struct server *S, const struct http_call *d)
{
	const char *name = d->name;
	const char *client = routes_arg(d->args, d->n_args, "client");
	const scene *existing = engine_scene(S->e, name);
	gltf_import_opts opts = gltf_import_opts_default();
	gltf_report report;
	edit_batch batch;
	edit_limits lim = S->lim.edit;
	edit_error err;
	char *report_json = NULL;
	bool created = false;
	int rc;

	if (S->hooks && S->hooks->relay_write(S, d))
		return;  /* relayed to the owner, or waiting for one */
	existing = engine_scene(S->e, name);  /* made by relay_http_write, maybe */
	if (!import_opts(S, d, existing, &opts))
		return;
	edit_error_clear(&err);
	rc = gltf_import(d->body, d->body_len, &opts, &batch, &report, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		http_respond_error(S, d->conn, &err);
		gltf_report_release(&report);
		return;
	}
	if (client)
		snprintf(batch.client, sizeof(batch.client), "%s", client);
	if ((rc = gltf_report_json(&report, &report_json, NULL)) != 0) {
		http_respond_code(S, d->conn, rc, "", "out of memory");
		goto out;
	}
	if (!existing && engine_scenes(S->e, NULL, 0) >= S->o.max_scenes) {
		http_respond_code(S, d->conn, RIGD_E_LIMIT, "", "there are %d scenes already (--max-scenes)",
			     S->o.max_scenes);
		goto out;
	}
	/* In a cluster the scene is made through the catalog first, and the
	 * request runs again then. */
	if (!existing && S->hooks && S->hooks->relay_create(S, d, 3))
		goto out;
	if (!existing) {
		rc = engine_scene_create(S->e, name);
		if (rc) {
			http_respond_engine(S, d->conn, rc, name);
			goto out;
		}
		created = true;
	}
	/* The import is one batch, as large as the file: gltf_import's own
	 * node limit bounds it, not the ops limit of a client's batch. */
	if (lim.max_ops < batch.n_ops)
		lim.max_ops = batch.n_ops;
	edit_error_clear(&err);
	rc = turn_submit_limits(S, PROTO_EDIT, name, &batch, &lim, batch.client, NULL, d->conn, NULL,
			   &err);
	if (rc) {
		http_respond_error(S, d->conn, &err);
		if (created && engine_scene_delete(S->e, name) != 0)
			serve_log(LOG_WARN, "cannot delete scene %s after a failed import: %s", name,
			      engine_errmsg(S->e));
		goto out;
	}
	S->pend[S->n_pend - 1].report = report_json;
	report_json = NULL;
	if (created)  /* 'name' is a valid scene name: it fits */
		memcpy(S->pend[S->n_pend - 1].created, name, strlen(name) + 1);
	serve_log(LOG_INFO, "glTF import into %s: %d nodes", name, report.n_created);
out:
	free(report_json);
	edit_batch_release(&batch);
	gltf_report_release(&report);
}

/* The answer to a committed glTF import: {"seq","recomputed","report"}. */
static void route_edits(struct server *S, const struct http_call *call)
{
	edit_batch batch;
	edit_error err;
	int rc;

	rc = proto_decode_batch(call->body, call->body_len, &S->lim, &batch, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		http_respond_error(S, call->conn, &err);
		S->m.batches_failed_total++;
		return;
	}
	edit_error_clear(&err);
	if (turn_submit(S, PROTO_EDIT, call->name, &batch, batch.client, NULL, call->conn, NULL,
			&err))
		http_respond_error(S, call->conn, &err);
	edit_batch_release(&batch);
}

/* Answers with what 'encode' writes of the scene, now or at the seq of the
 * request's ?at= argument. */
static void respond_scene_at(struct server *S, const struct http_call *call,
			     int (*encode)(proto_buf *, const char *, uint64_t, const scene *))
{
	const scene *s;
	scene *past;
	int64_t seq;
	proto_buf b;
	int rc;

	if (!read_scene_at(S, call->conn, call->name, routes_arg(call->args, call->n_args, "at"), &s,
			   &past, &seq))
		return;
	proto_buf_init(&b, 0);
	rc = encode(&b, call->name, (uint64_t)seq, s);
	scene_free(past);
	http_respond_built(S, call->conn, 200, &b, rc);
}

/* GET /api/scenes/{name}[?at=SEQ]: the scene's tree, now or at a seq. */
static void route_tree(struct server *S, const struct http_call *call)
{
	respond_scene_at(S, call, proto_encode_tree);
}

static void route_healthz(struct server *S, const struct http_call *call)
{
	static const char ok[] = "{\"status\":\"ok\"}\n";
	char *body = strdup(ok);

	net_http_respond(S->n, call->conn, 200, "application/json", body, body ? strlen(ok) : 0);
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The values /metrics reads when it is scraped (the READ rows). */
static void read_sample(struct server *S, struct metrics_sample *v)
{
	net_stats ns;
	engine_stats es;
	struct rusage ru;

	net_get_stats(S->n, &ns);
	engine_get_stats(S->e, &es);
	getrusage(RUSAGE_SELF, &ru);
	v->clients = ns.ws_clients;
	v->subscriptions = 0;
	for (int i = 0; i < S->n_scenes; i++)
		v->subscriptions += S->scenes[i]->n_subs;
	v->scenes = engine_scenes(S->e, NULL, 0);
	v->connections_total = ns.ws_opened;
	v->connections_rejected_total = ns.ws_rejected;
	v->bytes_sent_total = ns.bytes_sent;
	v->bytes_received_total = ns.bytes_received;
	v->http_requests_total = ns.http_requests;
	v->ws_closed_too_big_total = ns.ws_closed_too_big;
	v->snapshots_written_total = es.snapshots;
	v->commit_queue = engine_writer_queued(S->e);
	v->batches_waiting = S->n_stashed;
	v->acks_waiting = S->n_pend + S->n_flight;
	v->resident_memory_bytes = rss_kb() * 1024;
	v->cpu_seconds_total = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
			       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	v->uptime_seconds = serve_now_s() - S->started;
}

/* GET /metrics: the server's counters, the values read now, and the
 * cluster's (with --redis). */
static void route_metrics(struct server *S, const struct http_call *call)
{
	struct metrics_sample v;
	proto_buf b;

	read_sample(S, &v);
	proto_buf_init(&b, 0);
	if (metrics_render(&S->m, &v, &b) || (S->hooks && S->hooks->metrics(S, &b))) {
		proto_buf_release(&b);
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	http_respond_buf(S, call->conn, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
}

/* GET /api/cluster: the cluster's, or 404 when rigd runs alone. */
static void route_cluster(struct server *S, const struct http_call *call)
{
	if (S->hooks)
		S->hooks->route_cluster(S, call);
	else
		http_respond_code(S, call->conn, RIGD_E_NOT_FOUND, "",
				  "rigd runs alone (started without --redis)");
}

/*
 * GET /api/scenes/{name}/debug/{node}[?at=SEQ]: the debug record of one
 * node (bone id, local and world angle, pivot world position, determinant,
 * the scale-or-shear flag).
 */
static void route_debug(struct server *S, const struct http_call *call)
{
	const char *node_id = strrchr(call->path, '/') + 1;
	const scene *s;
	scene *past;
	int64_t seq;
	proto_buf b;
	int node, rc;

	if (!scene_id_valid(node_id)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_ID, "node", "bad node id");
		return;
	}
	if (!read_scene_at(S, call->conn, call->name, routes_arg(call->args, call->n_args, "at"), &s,
			   &past, &seq))
		return;
	if ((node = scene_find(s, node_id)) < 0) {
		scene_free(past);
		http_respond_code(S, call->conn, RIGD_E_UNKNOWN_NODE, "node",
				  "scene '%s' has no node '%s'", call->name, node_id);
		return;
	}
	proto_buf_init(&b, 0);
	rc = proto_encode_debug(&b, call->name, (uint64_t)seq, s, node);
	scene_free(past);
	http_respond_built(S, call->conn, 200, &b, rc);
}

/*
 * GET /api/scenes/{name}/poses[?at=SEQ]: the scene's poses, each with the
 * channels of its nodes and the ids of those the scene no longer holds.
 */
static void route_poses(struct server *S, const struct http_call *call)
{
	respond_scene_at(S, call, proto_encode_poses);
}

/* POST /api/scenes {"name","dims"}: a new, empty scene (3D unless dims 2). */
static void route_scene_create(struct server *S, const struct http_call *call)
{
	char name[SCENE_ID_MAX + 2];
	edit_error err;
	int dims = 3, rc;

	rc = proto_decode_scene_create_dims(call->body, call->body_len, name, &dims, &err);
	if (rc == 0 && engine_seq(S->e, name) < 0 &&
	    engine_scenes(S->e, NULL, 0) >= S->o.max_scenes) {
		rc = RIGD_E_LIMIT;
		edit_error_set(&err, rc, -1, "name", "there are %d scenes already (--max-scenes)",
			       S->o.max_scenes);
	} else if (rc == 0 && S->hooks && S->hooks->scene_create(S, call->conn, name, dims)) {
		return;  /* made through the cluster's catalog, answered once Redis said */
	} else if (rc == 0 && (rc = engine_scene_create_dims(S->e, name, dims)) != 0) {
		edit_error_set(&err, rc, -1, "name", "%s '%s'",
			       rc == RIGD_E_SCENE_EXISTS ? "there is already a scene" : err_str(rc),
			       name);
	}
	if (rc) {
		http_respond_error(S, call->conn, &err);
		return;
	}
	serve_log(LOG_INFO, "scene %s created (%dD)", name, dims);
	if (S->hooks)  /* its lease and its log stream */
		S->hooks->interest(S, name);
	http_respond_created(S, call->conn, name, dims);
}

/* DELETE /api/scenes/{name}: the scene and its log go; subscribers hear. */
static void route_scene_delete(struct server *S, const struct http_call *call)
{
	int rc;

	if (S->hooks && S->hooks->scene_delete(S, call->conn, call->name))
		return;  /* deleted through the cluster's catalog, answered once Redis said */
	if ((rc = engine_scene_delete(S->e, call->name)) != 0) {
		http_respond_engine(S, call->conn, rc, call->name);
		return;
	}
	serve_log(LOG_INFO, "scene %s deleted", call->name);
	rooms_scene_gone(S, call->name);
	http_respond_deleted(S, call->conn, call->name);
}

#define NOW ROUTE_NOW
#define AFTER ROUTE_AFTER_COMMIT
#define ANY ROUTE_ANY_METHOD

/* Rows with the same pattern are adjacent; their methods, in order, make a
 * 405's "use GET or POST". */
const struct route routes[] = {
	/* method     pattern                     role         when   body             handler */
	{ANY,        "/healthz",                 ROLE_NONE,   NOW,   ROUTE_BODY_ANY,  route_healthz},
	{ANY,        "/metrics",                 ROLE_ADMIN,  NOW,   ROUTE_BODY_ANY,  route_metrics},
	{NET_GET,    "/api/cluster",             ROLE_VIEWER, NOW,   ROUTE_BODY_API,  route_cluster},
	{NET_GET,    "/api/scenes",              ROLE_VIEWER, AFTER, ROUTE_BODY_API,  route_scene_list},
	{NET_POST,   "/api/scenes",              ROLE_ADMIN,  AFTER, ROUTE_BODY_API,  route_scene_create},
	{NET_GET,    "/api/scenes/{name}",       ROLE_VIEWER, AFTER, ROUTE_BODY_API,  route_tree},
	{NET_DELETE, "/api/scenes/{name}",       ROLE_ADMIN,  AFTER, ROUTE_BODY_API,  route_scene_delete},
	{NET_POST,   "/api/scenes/{name}/edits", ROLE_EDITOR, NOW,   ROUTE_BODY_API,  route_edits},
	{NET_GET,    "/api/scenes/{name}/log",   ROLE_VIEWER, AFTER, ROUTE_BODY_API,  route_log_get},
	{NET_POST,   "/api/scenes/{name}/log",   ROLE_EDITOR, AFTER, ROUTE_BODY_API,  route_log_import},
	{NET_GET,    "/api/scenes/{name}/gltf",  ROLE_VIEWER, AFTER, ROUTE_BODY_API,  route_gltf_export},
	{NET_POST,   "/api/scenes/{name}/gltf",  ROLE_EDITOR, AFTER, ROUTE_BODY_GLTF, route_gltf_import},
	{NET_GET,    "/api/scenes/{name}/debug/{node}", ROLE_VIEWER, AFTER, ROUTE_BODY_API, route_debug},
	{NET_GET,    "/api/scenes/{name}/poses", ROLE_VIEWER, AFTER, ROUTE_BODY_API,  route_poses},
	{NET_GET,    "/api/scenes/{name}/clips", ROLE_VIEWER, AFTER, ROUTE_BODY_API,  routes_clips},
	{NET_POST,   "/api/scenes/{name}/svg",   ROLE_EDITOR, AFTER, ROUTE_BODY_API,  routes_svg_import},
	{NET_GET,    "/api/scenes/{name}/spine", ROLE_VIEWER, AFTER, ROUTE_BODY_API,  routes_spine_export},
	{NET_POST,   "/api/scenes/{name}/spine", ROLE_EDITOR, AFTER, ROUTE_BODY_API,  routes_spine_import},
	{NET_GET,    "/api/scenes/{name}/dragonbones", ROLE_VIEWER, AFTER, ROUTE_BODY_API, routes_dragonbones_export},
	{NET_POST,   "/api/scenes/{name}/dragonbones", ROLE_EDITOR, AFTER, ROUTE_BODY_API, routes_dragonbones_import},
	{NET_GET,    "/api/scenes/{name}/assets", ROLE_VIEWER, AFTER, ROUTE_BODY_API, routes_asset_list},
	{NET_GET,    "/api/scenes/{name}/assets/{node}", ROLE_VIEWER, AFTER, ROUTE_BODY_API, routes_asset_get},
};
const int routes_count = (int)(sizeof(routes) / sizeof(routes[0]));

#undef NOW
#undef AFTER
#undef ANY

bool routes_covers(const char *path)
{
	if (strncmp(path, "/api/", 5) == 0)
		return true;
	for (int i = 0; i < routes_count; i++)
		if (strcmp(routes[i].pattern, path) == 0)
			return true;
	return false;
}

/* True when the rest of a path fits the rest of a pattern after its
 * "{name}": equal text, or a final "{node}" segment standing for a non-empty
 * segment without '/' (its handler reads it from the path's end). */
static bool tail_fits(const char *pattern_tail, const char *path_tail)
{
	const char *node = strstr(pattern_tail, "{node}");
	size_t lit = node ? (size_t)(node - pattern_tail) : 0;

	if (!node)
		return strcmp(pattern_tail, path_tail) == 0;
	assert(strcmp(node, "{node}") == 0); /* only ever the last segment */
	return strncmp(pattern_tail, path_tail, lit) == 0 && path_tail[lit] &&
	       !strchr(path_tail + lit, '/');
}

/* True when 'path' fits 'pattern'; its "{name}" segment goes to 'name'. */
static bool pattern_fits(const char *pattern, const char *path, char *name, size_t cap)
{
	const char *var = strstr(pattern, "{name}");
	size_t lit = var ? (size_t)(var - pattern) : strlen(pattern), len;

	if (strncmp(pattern, path, lit) != 0)
		return false;
	if (!var)
		return path[lit] == '\0';
	path += lit;
	len = strcspn(path, "/");
	if (len == 0 || len >= cap)
		return false;
	if (!tail_fits(var + strlen("{name}"), path + len))
		return false;
	memcpy(name, path, len);
	name[len] = '\0';
	return true;
}

int routes_match(const char *path, int method, char *name, size_t cap)
{
	bool path_known = false;

	assert(cap > 0);
	for (int i = 0; i < routes_count; i++) {
		name[0] = '\0';
		if (!pattern_fits(routes[i].pattern, path, name, cap))
			continue;
		path_known = true;
		if (routes[i].method == ROUTE_ANY_METHOD || routes[i].method == method)
			return i;
	}
	name[0] = '\0';
	return path_known ? RIGD_E_BAD_METHOD : RIGD_E_NOT_FOUND;
}

void routes_methods(const char *path, char *out, size_t cap)
{
	static const char *const names[] = {"GET", "HEAD", "POST", "PUT", "DELETE"};
	char name[SCENE_ID_MAX + 2];
	size_t used = 0;

	assert(cap > 0);
	out[0] = '\0';
	for (int i = 0; i < routes_count; i++) {
		int m = routes[i].method;

		if (m < 0 || m >= (int)(sizeof(names) / sizeof(names[0])) ||
		    !pattern_fits(routes[i].pattern, path, name, sizeof(name)))
			continue;
		used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s",
					 used ? " or " : "", names[m]);
		if (used >= cap)
			break;
	}
}
