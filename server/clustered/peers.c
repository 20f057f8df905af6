/*
 * peers.c: this rigd among the other processes of a cluster (see peers.h).
 *
 * The cluster layer (server/cluster/) owns the Redis connection and the
 * leases; this file wires it to the server: it starts it on net's libuv
 * loop, turns its state into the answers clients get (an edit of a scene
 * another process owns is refused with `unavailable`, naming the owner),
 * and shows it in GET /api/cluster and /metrics. It never talks to Redis.
 */
#include "peers.h"
#include "relay.h"
#include "replica.h"
#include "state.h"

#include "serve/http_respond.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/routes.h"
#include "serve/server.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int peers_route_edit(struct server *S, int type, const char *name, const edit_batch *batch,
		     bool plain, struct client *c, uint64_t http_conn, const proto_req *req,
		     edit_error *err)
{
	cluster_lease_info li;
	int rc;

	rc = peers_check_edit(S, name, err);

	if (rc != RIGD_E_UNAVAILABLE || !plain || (!c && !http_conn) ||
	    cluster_state(S->cx->cl) != CLUSTER_UP)
		return rc;
	cluster_lease_of(S->cx->cl, name, &li);
	if (li.state != CLUSTER_LEASE_OTHER)
		return rc;
	edit_error_clear(err);
	rc = relay_forward(S, li.owner, name, type, batch, c, http_conn, req, err);
	return rc ? rc : 1;
}

int peers_check_edit(struct server *S, const char *name, edit_error *err)
{
	cluster_lease_info li;
	const char *url;
	int st;

	if (!S->cx->cl || !engine_scene(S->e, name))
		return 0;
	if (cluster_state(S->cx->cl) == CLUSTER_UP && cluster_owns(S->cx->cl, name, NULL) &&
	    replica_caught_up(S, name))
		return replica_check_settled(S, name, err);
	st = cluster_want(S->cx->cl, name);
	cluster_lease_of(S->cx->cl, name, &li);
	if (st < 0) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "out of memory");
		return RIGD_E_NOMEM;
	}
	if (cluster_state(S->cx->cl) != CLUSTER_UP)
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "redis is unreachable: scene '%s' takes no edits until it returns",
			       name);
	else if (li.state == CLUSTER_LEASE_OTHER && (url = cluster_process_url(S->cx->cl, li.owner)))
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "scene '%s' is owned by process %s (%s), which alone applies its "
			       "edits", name, li.owner, url);
	else if (li.state == CLUSTER_LEASE_OTHER)
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "scene '%s' is owned by process %s, which alone applies its edits",
			       name, li.owner);
	else if (li.state == CLUSTER_LEASE_OWNED)
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "this process owns scene '%s' and is applying its log up to where "
			       "the last owner left it: retry in a moment", name);
	else
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "this process is taking the lease of scene '%s': retry in a moment",
			       name);
	return RIGD_E_UNAVAILABLE;
}

void peers_interest(struct server *S, const char *name)
{
	if (S->cx->cl && (cluster_want(S->cx->cl, name) < 0 || cluster_follow(S->cx->cl, name, false) < 0))
		serve_log(LOG_WARN, "cluster: out of memory asking for the lease of %s", name);
}

/* {"scene","state","owner","token","valid_ms"} of one lease. */
static int lease_json(proto_buf *b, const cluster_lease_info *l)
{
	int rc = PROTO_BUF_LIT(b, "{\"scene\":");

	rc = rc || json_buf_string(b, l->scene, 0);
	rc = rc || PROTO_BUF_LIT(b, ",\"state\":");
	rc = rc || json_buf_string(b, cluster_lease_state_name(l->state), 0);
	rc = rc || PROTO_BUF_LIT(b, ",\"owner\":");
	rc = rc || (l->owner[0] ? json_buf_string(b, l->owner, 0) : PROTO_BUF_LIT(b, "null"));
	rc = rc || PROTO_BUF_LIT(b, ",\"token\":");
	rc = rc || (l->token ? json_buf_int(b, l->token) : PROTO_BUF_LIT(b, "null"));
	rc = rc || PROTO_BUF_LIT(b, ",\"valid_ms\":");
	rc = rc || json_buf_int(b, l->valid_ms);
	return rc || PROTO_BUF_LIT(b, "}");
}

/* The body of GET /api/cluster. 0 or RIGD_E_NOMEM. */
static int cluster_json(struct server *S, proto_buf *b)
{
	int n_l = cluster_leases(S->cx->cl, NULL, 0), n_p = cluster_processes(S->cx->cl, NULL, 0);
	cluster_lease_info *l = calloc((size_t)n_l + 1, sizeof(*l));
	cluster_process_info *p = calloc((size_t)n_p + 1, sizeof(*p));
	int rc = !l || !p;

	n_l = l ? cluster_leases(S->cx->cl, l, n_l) : 0;
	n_p = p ? cluster_processes(S->cx->cl, p, n_p) : 0;
	rc = rc || PROTO_BUF_LIT(b, "{\"process\":");
	rc = rc || json_buf_string(b, cluster_id(S->cx->cl), 0);
	rc = rc || PROTO_BUF_LIT(b, ",\"redis\":{\"url\":");
	rc = rc || json_buf_string(b, S->o.redis, 0);
	rc = rc || PROTO_BUF_LIT(b, ",\"state\":");
	rc = rc || json_buf_string(b, cluster_state_name(cluster_state(S->cx->cl)), 0);
	rc = rc || PROTO_BUF_LIT(b, "},\"lease_ms\":");
	rc = rc || json_buf_int(b, S->o.lease_ms);
	rc = rc || PROTO_BUF_LIT(b, ",\"leases\":[");
	for (int i = 0; !rc && i < n_l; i++)
		rc = (i && PROTO_BUF_LIT(b, ",")) || lease_json(b, &l[i]);
	rc = rc || PROTO_BUF_LIT(b, "],\"processes\":[");
	for (int i = 0; !rc && i < n_p; i++) {
		rc = i && PROTO_BUF_LIT(b, ",");
		rc = rc || PROTO_BUF_LIT(b, "{\"id\":");
		rc = rc || json_buf_string(b, p[i].id, 0);
		rc = rc || PROTO_BUF_LIT(b, ",\"url\":");
		rc = rc || json_buf_string(b, p[i].url, 0);
		rc = rc || PROTO_BUF_LIT(b, ",\"leases\":");
		rc = rc || json_buf_int(b, p[i].leases);
		rc = rc || PROTO_BUF_LIT(b, "}");
	}
	rc = rc || PROTO_BUF_LIT(b, "]}");
	free(l);
	free(p);
	return rc ? RIGD_E_NOMEM : 0;
}

void peers_route(struct server *S, const struct http_call *call)
{
	proto_buf b;

	if (!S->cx->cl) {
		http_respond_code(S, call->conn, RIGD_E_NOT_FOUND, "",
				  "rigd runs alone (started without --redis)");
		return;
	}
	proto_buf_init(&b, 0);
	http_respond_built(S, call->conn, 200, &b, cluster_json(S, &b));
}

int peers_metrics(struct server *S, proto_buf *b)
{
	cluster_stats st;
	cluster_lease_info *l;
	int n, rc = 0;

	if (!S->cx->cl)
		return 0;
	if (relay_metrics(S, b) || replica_metrics(S, b))
		return RIGD_E_NOMEM;
	cluster_get_stats(S->cx->cl, &st);
	const struct metrics_row m[] = {
		{ "rigd_cluster_redis_up", "gauge", "1 while Redis answers, else 0.",
		  st.state == CLUSTER_UP },
		{ "rigd_cluster_redis_connects_total", "counter", "Connections to Redis made.",
		  st.connects },
		{ "rigd_cluster_redis_disconnects_total", "counter", "Connections to Redis lost.",
		  st.disconnects },
		{ "rigd_cluster_redis_errors_total", "counter", "Error and refused replies.",
		  st.errors },
		{ "rigd_cluster_leases_taken_total", "counter", "Scene leases taken.",
		  st.leases_taken },
		{ "rigd_cluster_leases_lost_total", "counter", "Scene leases lost.", st.leases_lost },
		{ "rigd_cluster_leases_owned", "gauge", "Scene leases this process holds.",
		  (uint64_t)st.leases_owned },
	};

	rc = metrics_appendf(b, "# HELP rigd_cluster_info This process in the cluster (its id).\n"
			     "# TYPE rigd_cluster_info gauge\nrigd_cluster_info{process=\"%s\"} 1\n",
			     cluster_id(S->cx->cl));
	rc = rc || metrics_put_rows(b, m, (int)(sizeof(m) / sizeof(m[0])));
	n = cluster_leases(S->cx->cl, NULL, 0);
	if (!(l = calloc((size_t)n + 1, sizeof(*l))))
		return RIGD_E_NOMEM;
	n = cluster_leases(S->cx->cl, l, n);
	rc = rc || metrics_appendf(b, "# HELP rigd_cluster_lease_token The fencing token of each "
				   "scene lease this process holds.\n"
				   "# TYPE rigd_cluster_lease_token gauge\n");
	for (int i = 0; !rc && i < n; i++)
		if (cluster_owns(S->cx->cl, l[i].scene, NULL))
			rc = metrics_appendf(b, "rigd_cluster_lease_token{scene=\"%s\"} %" PRId64 "\n",
					     l[i].scene, l[i].token);
	free(l);
	return rc ? RIGD_E_NOMEM : 0;
}
