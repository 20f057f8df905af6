/*
 * clustered.c: the cluster's side of rigd, as the single-process server
 * reaches it: the hook table (serve/serve_hooks.h) and the wiring of the
 * cluster layer's callbacks to the modules of this folder.
 *
 * The modules: peers.c (the lease every edit passes, GET /api/cluster),
 * relay.c and relay_http.c (writes relayed to a scene's owner),
 * replica.c (every scene kept up to date from its owner's log stream),
 * roster.c (the other processes' participants), lifecycle.c (scenes made
 * and deleted through the catalog). None of them talks to Redis: that is
 * cluster/.
 */
#include "clustered.h"
#include "lifecycle.h"
#include "peers.h"
#include "relay.h"
#include "relay_http.h"
#include "replica.h"
#include "roster.h"
#include "state.h"

#include "serve/http_respond.h"
#include "serve/log.h"
#include "serve/serve_hooks.h"
#include "serve/server.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hook table's check_config: the Redis URL parses. */
static int check_config(const struct config *o, FILE *err)
{
	char host[CLUSTER_HOST_MAX];
	int port;

	if (cluster_parse_url(o->redis, host, &port) != 0) {
		fprintf(err, "rigd: --redis: '%s' is not redis://HOST:PORT\n", o->redis);
		return CONFIG_USAGE;
	}
	return 0;
}

static void on_log(void *ctx, int level, const char *line)
{
	serve_log(level, "cluster: %s", line);
}

/* What the catalog said of a creation: an import's (relay_http.c) or a
 * POST /api/scenes's (lifecycle.c). */
static void on_scene_done(void *ctx, uint64_t ref, const char *name, int rc, int dims,
			  int there, int64_t gen)
{
	if (!relay_http_scene_done(ctx, ref, name, rc, dims, there, gen))
		lifecycle_done(ctx, ref, name, rc, dims, there, gen);
}

/* This process took a lease: the imports waiting for its scene run. */
static void on_lease(void *ctx, const char *name, bool owned, int64_t token)
{
	(void)token;
	if (owned)
		relay_http_lease(ctx, name);
}

/* The hook table's start: joins the cluster (serve_hooks.h). */
static int clustered_start(struct server *S)
{
	cluster_config cfg;
	cluster_callbacks cb;
	char id[CLUSTER_ID_MAX], url[CLUSTER_URL_MAX], msg[256];
	bool v6 = strchr(S->o.host, ':') != NULL;
	engine_scene_info *v = NULL;
	int n;

	if (!(S->cx = calloc(1, sizeof(*S->cx)))) {
		fprintf(stderr, "rigd: out of memory\n");
		return 1;
	}
	snprintf(id, sizeof(id), "p%08x", (unsigned)S->boot_id);
	if (S->o.advertise)
		snprintf(url, sizeof(url), "%s", S->o.advertise);
	else
		snprintf(url, sizeof(url), v6 ? "%s://[%s]:%d" : "%s://%s:%d",
			 net_tls(S->n) ? "https" : "http", S->o.host, net_port(S->n));
	memset(&cfg, 0, sizeof(cfg));
	cfg.url = S->o.redis;
	cfg.loop = net_event_loop(S->n);
	cfg.id = id;
	cfg.advertise = url;
	cfg.lease_ms = S->o.lease_ms;
	cfg.log_keep = S->o.log_keep;
	memset(&cb, 0, sizeof(cb));
	cb.ctx = S;
	cb.log = on_log;  /* the cluster logs its connection and leases */
	cb.request = relay_request;
	cb.answer = relay_answer;
	cb.call = relay_call;
	cb.reply = relay_http_reply;
	cb.lease = on_lease;
	cb.log_line = replica_line;
	cb.published = replica_published;
	cb.scene_event = lifecycle_event;
	cb.scene_done = on_scene_done;
	cb.catalog = lifecycle_catalog;
	cb.presence = roster_entry;
	cb.reader_up = roster_reader_up;
	cb.catchup_ask = replica_catchup_ask;
	cb.catchup_line = replica_catchup_line;
	cb.probed = replica_probed;
	cb.unreplicated = replica_unreplicated;
	cfg.wait_replicas = S->o.redis_wait;
	cfg.wait_ms = S->o.redis_wait_ms;
	S->cx->cl = cluster_new(&cfg, &cb, msg, sizeof(msg));
	if (!S->cx->cl) {
		fprintf(stderr, "rigd: --redis: %s\n", msg);
		return 1;
	}
	/* A batch whose log line a stream entry cannot hold is refused before
	 * it is committed: an owner never commits what it cannot pass on. */
	engine_set_line_max(S->e, CLUSTER_BODY_MAX);
	/* First to ask owns: ask for every scene of the database at once, and
	 * again while another process holds it, to take over when it dies. */
	n = engine_scenes(S->e, NULL, 0);
	if (n > 0 && !(v = calloc((size_t)n, sizeof(*v)))) {
		fprintf(stderr, "rigd: out of memory\n");
		return 1;
	}
	n = engine_scenes(S->e, v, n);
	for (int i = 0; i < n; i++)
		peers_interest(S, v[i].name);
	free(v);
	return 0;
}

static void clustered_stop(struct server *S)
{
	if (!S->cx)
		return;
	cluster_free(S->cx->cl);
	S->cx->cl = NULL;
	relay_free(S);
	replica_free(S);
	roster_free(S);
	free(S->cx);
	S->cx = NULL;
}

static void clustered_tick(void *ctx)
{
	struct server *S = ctx;

	if (S->cx->cl) {
		relay_tick(S);
		roster_tick(S);
		replica_tick(S);
	}
}

/* POST /api/scenes: through the catalog. A scene this process has with
 * other dims or with edits is refused here at once. */
static bool create_scene(struct server *S, uint64_t conn, const char *name, int dims)
{
	if (engine_scene(S->e, name) &&
	    (engine_scene_dims(S->e, name) != dims || engine_seq(S->e, name) > 0)) {
		http_respond_code(S, conn, RIGD_E_SCENE_EXISTS, "name", "there is already a scene '%s'",
				  name);
		return true;
	}
	lifecycle_create(S, conn, name, dims);
	return true;
}

/* DELETE /api/scenes/{name}: through the catalog when the scene is here
 * (an unknown scene is answered by the route, as alone). */
static bool delete_scene(struct server *S, uint64_t conn, const char *name)
{
	if (!engine_scene(S->e, name))
		return false;
	lifecycle_delete(S, conn, name);
	return true;
}

/* The answer to a request another process relayed goes back to it. */
static bool http_answer(struct server *S, uint64_t conn, int status, char *body, size_t len)
{
	if (!relay_http_remote(S, conn))
		return false;
	relay_http_respond(S, conn, status, body, len);
	return true;
}

static const struct serve_hooks hooks = {
	.check_config = check_config,
	.start = clustered_start,
	.stop = clustered_stop,
	.tick = clustered_tick,
	.route_edit = peers_route_edit,
	.check_edit = peers_check_edit,
	.hold_ack = replica_hold,
	.answer_remote = relay_answer_pending,
	.publish_turn = replica_publish,
	.end_turn = replica_turn_end,
	.http_answer = http_answer,
	.relay_write = relay_http_write,
	.relay_create = relay_http_create,
	.scene_create = create_scene,
	.scene_delete = delete_scene,
	.route_cluster = peers_route,
	.metrics = peers_metrics,
	.interest = peers_interest,
	.presence = roster_local_presence,
	.leave = roster_local_leave,
	.send_peers = roster_send_peers,
};

const struct serve_hooks *clustered_hooks(void)
{
	return &hooks;
}
