/*
 * relay_http.c: the HTTP writes that are not edit batches (POST
 * /api/scenes/{name}/log, .../gltf, .../svg, .../spine, .../dragonbones)
 * relayed to the owner of their scene, and the imports that create a scene made through the cluster's
 * catalog (see relay.h).
 *
 * A process that does not own the scene keeps a copy of the request (a
 * D_HTTP deferred item, as http.c makes of its own requests) and relays the
 * request itself, its kind (the route's last path segment), query
 * arguments and body, as a call (cluster_call). The owner makes a deferred
 * item of it with a connection id of its own (REMOTE_CONN set) and runs the
 * route's own handler on it after its commit, exactly as for a request of
 * its own client; every answer to such an id (http.c's one writer) goes
 * back through Redis as status and body (cluster_reply), and the relaying
 * process answers its client with them unchanged. A request is relayed
 * once: it is not sent again when its answer does not come, since an
 * import is not idempotent (the client is told it may have been applied).
 *
 * A request waits here while nobody holds the scene's lease (a scene just
 * created, an owner that died), or while this process holds it and applies
 * the scene's log up to where the last owner left it: it runs here when
 * this process takes the lease and has caught up, or is relayed once
 * another process has it, or is answered `unavailable` after GIVE_UP_S.
 * A request relayed here waits the same way, but is never relayed on.
 * Never talks to Redis itself.
 */
#include "relay_http.h"
#include "peers.h"
#include "state.h"

#include "serve/http.h"
#include "serve/http_respond.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/routes.h"
#include "serve/server.h"
#include "serve/turn.h"
#include "serve/util.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REMOTE_CONN (UINT64_C(1) << 63)  /* the connection ids of relayed requests */
#define CATALOG_REF (UINT64_C(1) << 62)  /* the catalog references of imports */
#define GIVE_UP_S 30.0                   /* a request waits this long at most */

/* What a request of a client of this process waits for. */
enum hstate {
	H_CATALOG,                   /* the catalog's answer to the scene's creation */
	H_CREATED,                   /* its run again (the scene is to be made here) */
	H_WAIT,                      /* an owner of the scene */
	H_SENT,                      /* the owner's answer */
};

struct hreq {
	int state;                   /* enum hstate */
	uint64_t conn;               /* the client's HTTP request */
	uint64_t id;                 /* H_CATALOG: the catalog reference; H_SENT: rid */
	struct deferred *d;          /* the copy of the request (owned); NULL once
				      * it was handed to the turn again */
	int dims;                    /* H_CATALOG: asked; H_CREATED: to make here */
	int64_t gen;                 /* H_CREATED: the incarnation the catalog gave (0 unknown) */
	char owner[CLUSTER_ID_MAX];  /* H_SENT: the process it went to */
	double first_s, sent_s;
};

/* A request another process relayed to this one, until it is answered. */
struct served {
	uint64_t conn;               /* REMOTE_CONN | a number */
	uint64_t rid;
	char from[CLUSTER_ID_MAX];
};

struct relay_http {
	struct hreq *v;
	int n, cap;
	struct served *s;
	int n_s, cap_s;
	uint64_t next_rid, next_ref, next_conn;
	uint64_t relayed, served, gave_up;
};

/* turn_deferred_free, which wants an item. */
static void free_copy(struct deferred *d)
{
	if (d)
		turn_deferred_free(d);
}

static struct relay_http *state_of(struct server *S)
{
	if (!S->cx->relay_http)
		S->cx->relay_http = calloc(1, sizeof(*S->cx->relay_http));
	return S->cx->relay_http;
}

/* A copy of 'call' as a deferred D_HTTP item (owned by the caller), or
 * NULL when out of memory or its path is no route's. */
static struct deferred *copy_call(const struct http_call *call)
{
	char name[SCENE_ID_MAX + 2];
	int route = routes_match(call->path, call->method, name, sizeof(name));

	return route < 0 ? NULL : http_defer_copy(call, route);
}

/* A new entry for the request of 'call' (its copy made), or NULL after
 * answering it out of memory. */
static struct hreq *add(struct server *S, const struct http_call *call, int state)
{
	struct relay_http *H = state_of(S);
	struct hreq *v;
	struct deferred *d = H ? copy_call(call) : NULL;

	if (!d || !(v = serve_grow(H->v, &H->cap, H->n + 1, sizeof(*v)))) {
		free_copy(d);
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
		return NULL;
	}
	H->v = v;
	v = &H->v[H->n++];
	memset(v, 0, sizeof(*v));
	v->state = state;
	v->conn = call->conn;
	v->d = d;
	v->first_s = v->sent_s = serve_now_s();
	return v;
}

/* Removes entry 'i' (its copy freed). */
static void drop(struct relay_http *H, int i)
{
	free_copy(H->v[i].d);
	H->v[i] = H->v[--H->n];
}

/* Entry 'i''s request runs here again, as the turn's deferred work. */
static void run_here(struct server *S, int i)
{
	struct relay_http *H = S->cx->relay_http;
	struct deferred *d = H->v[i].d;

	H->v[i].d = NULL;
	drop(H, i);
	if (d)
		turn_defer(S, d);
}

/* The query arguments of 'd', each with its NUL, one after the other
 * (malloc'd, *len bytes), or NULL when out of memory. */
static char *args_of(const struct deferred *d, size_t *len)
{
	size_t n = 0;
	char *out;

	for (int i = 0; i < d->n_args; i++)
		n += strlen(d->args[i]) + 1;
	if (!(out = malloc(n + 1)))
		return NULL;
	*len = 0;
	for (int i = 0; i < d->n_args; i++) {
		memcpy(out + *len, d->args[i], strlen(d->args[i]) + 1);
		*len += strlen(d->args[i]) + 1;
	}
	return out;
}

/* Relays entry 'i' to process 'owner'; answers its client and drops it
 * when that cannot be done. */
static void send_to(struct server *S, int i, const char *owner)
{
	struct relay_http *H = S->cx->relay_http;
	struct hreq *h = &H->v[i];
	const struct deferred *d = h->d;
	const char *url = cluster_process_url(S->cx->cl, owner);
	cluster_call_info k;
	char *args;
	size_t args_len = 0;
	int rc = RIGD_E_NOMEM;

	memset(&k, 0, sizeof(k));
	k.rid = ++H->next_rid;
	k.scene = d->scene;
	k.kind = strrchr(d->path, '/') + 1;
	k.body = d->body;
	k.body_len = d->body_len;
	if ((args = args_of(d, &args_len)) != NULL) {
		k.args = args;
		k.args_len = args_len;
		rc = cluster_call(S->cx->cl, owner, &k);
		free(args);
	}
	if (rc == RIGD_E_TOO_LARGE)
		http_respond_code(S, h->conn, rc, "", "the body has %zu bytes, more than a process "
				  "relays to the owner of scene '%s' (%u bytes): send it to that "
				  "process, %s (%s), itself", d->body_len, d->scene,
				  (unsigned)CLUSTER_BODY_MAX, owner, url ? url : "its URL unknown");
	else if (rc)
		http_respond_code(S, h->conn, rc == RIGD_E_NOMEM ? rc : RIGD_E_UNAVAILABLE, "scene",
				  "scene '%s' is owned by process %s, and the request could not "
				  "be relayed to it: %s", d->scene, owner, err_str(rc));
	if (rc) {
		drop(H, i);
		return;
	}
	h->state = H_SENT;
	h->id = k.rid;
	snprintf(h->owner, sizeof(h->owner), "%s", owner);
	h->sent_s = serve_now_s();
	H->relayed++;
}

/* Makes scene 'call->name' ('dims') here if it is not, after the catalog
 * took it. False after answering when it cannot be made. */
static bool make_here(struct server *S, const struct http_call *call, int dims, int64_t gen)
{
	int rc;

	if (engine_scene(S->e, call->name))
		return true;
	if ((rc = engine_scene_create_dims(S->e, call->name, dims)) != 0) {
		http_respond_engine(S, call->conn, rc, call->name);
		return false;
	}
	if (gen > 0 && (rc = engine_scene_set_gen(S->e, call->name, gen)) != 0)
		serve_log(LOG_WARN, "cluster: scene %s: incarnation %" PRId64 " cannot be recorded "
			  "here: %s", call->name, gen, err_str(rc));
	serve_log(LOG_INFO, "scene %s created (%dD)", call->name, dims);
	peers_interest(S, call->name);
	return true;
}

/* The index of the entry in 'state' for 'key' (its conn, or for H_CATALOG
 * and H_SENT its id), or -1. */
static int find(const struct relay_http *H, int state, uint64_t key)
{
	for (int i = 0; H && i < H->n; i++)
		if (H->v[i].state == state &&
		    (state == H_CATALOG || state == H_SENT ? H->v[i].id : H->v[i].conn) == key)
			return i;
	return -1;
}

bool relay_http_write(struct server *S, const struct http_call *call)
{
	struct relay_http *H = S->cx->relay_http;
	cluster_lease_info li;
	struct hreq *h;
	edit_error err;
	int i, rc;

	bool remote;

	if (!S->cx->cl)
		return false;
	remote = relay_http_remote(S, call->conn);
	if (!remote && (i = find(H, H_CREATED, call->conn)) >= 0) {
		int dims = H->v[i].dims;
		int64_t gen = H->v[i].gen;

		drop(H, i);
		if (!make_here(S, call, dims, gen))
			return true;
	}
	if (!engine_scene(S->e, call->name) || cluster_state(S->cx->cl) != CLUSTER_UP)
		return false;
	edit_error_clear(&err);
	if ((rc = peers_check_edit(S, call->name, &err)) == 0)
		return false;
	if (rc != RIGD_E_UNAVAILABLE) {
		http_respond_error(S, call->conn, &err);
		return true;
	}
	cluster_lease_of(S->cx->cl, call->name, &li);
	if (remote && li.state != CLUSTER_LEASE_OWNED)
		return false;  /* the handler answers `unavailable`, naming the owner */
	if (!(h = add(S, call, H_WAIT)))
		return true;
	if (li.state == CLUSTER_LEASE_OTHER)
		send_to(S, S->cx->relay_http->n - 1, li.owner);
	return true;
}

bool relay_http_create(struct server *S, const struct http_call *call, int dims)
{
	struct relay_http *H;
	struct hreq *h;
	int rc;

	if (!S->cx->cl || relay_http_remote(S, call->conn))
		return false;
	if (!(h = add(S, call, H_CATALOG)))
		return true;
	H = S->cx->relay_http;
	h->id = CATALOG_REF | ++H->next_ref;
	h->dims = dims;
	rc = cluster_scene_create(S->cx->cl, h->id, call->name, dims);
	if (rc == RIGD_E_UNAVAILABLE)
		http_respond_code(S, call->conn, rc, "scene", "redis is unreachable: scene '%s' "
				  "cannot be created in the cluster until it returns", call->name);
	else if (rc)
		http_respond_code(S, call->conn, rc, "", "%s", err_str(rc));
	if (rc)
		drop(H, H->n - 1);
	return true;
}

bool relay_http_scene_done(struct server *S, uint64_t ref, const char *name, int rc, int dims,
			   int there, int64_t gen)
{
	struct relay_http *H = S->cx->relay_http;
	int i = (ref & CATALOG_REF) ? find(H, H_CATALOG, ref) : -1;
	struct deferred *d;

	if (i < 0)
		return false;
	if (rc != 0 && rc != RIGD_E_SCENE_EXISTS) {
		http_respond_code(S, H->v[i].conn, RIGD_E_UNAVAILABLE, "scene", "redis did not take "
				  "the creation of scene '%s' (refused, or the connection was lost "
				  "before it answered: it may exist now): retry", name);
		drop(H, i);
		return true;
	}
	/* Made in the catalog now, or the cluster had it already: the
	 * request runs again and goes to that scene, made here first. */
	H->v[i].state = H_CREATED;
	H->v[i].dims = rc ? there : dims;
	H->v[i].gen = gen;
	d = H->v[i].d;
	H->v[i].d = NULL;
	turn_defer(S, d);
	return true;
}

/* Entry 'i' of H_WAIT: runs here, is relayed, waits on, or is answered
 * `unavailable` once it waited GIVE_UP_S. A request relayed to this
 * process waits only while this process holds the lease and applies the
 * scene's log up to where the last owner left it (a lease just taken): it
 * is never relayed on, and the process that relayed it waits GIVE_UP_S
 * from before it came, so it is answered `unavailable` sooner. */
static void wait_step(struct server *S, int i, double now)
{
	struct relay_http *H = S->cx->relay_http;
	const char *name = H->v[i].d->scene;
	bool remote = relay_http_remote(S, H->v[i].conn);
	cluster_lease_info li;
	edit_error err;

	edit_error_clear(&err);
	if (cluster_state(S->cx->cl) != CLUSTER_UP || !engine_scene(S->e, name) ||
	    peers_check_edit(S, name, &err) == 0) {
		run_here(S, i);  /* the handler answers */
		return;
	}
	cluster_lease_of(S->cx->cl, name, &li);
	if (remote && li.state != CLUSTER_LEASE_OWNED) {
		run_here(S, i);  /* the handler answers `unavailable`, naming the owner */
	} else if (li.state == CLUSTER_LEASE_OTHER) {
		send_to(S, i, li.owner);
	} else if (now - H->v[i].first_s >= (remote ? GIVE_UP_S / 2 : GIVE_UP_S)) {
		H->gave_up++;
		http_respond_error(S, H->v[i].conn, &err);
		drop(H, i);
	}
}

void relay_http_lease(struct server *S, const char *name)
{
	struct relay_http *H = S->cx->relay_http;
	double now = serve_now_s();

	for (int i = H ? H->n - 1 : -1; i >= 0; i--)
		if (H->v[i].state == H_WAIT && strcmp(H->v[i].d->scene, name) == 0)
			wait_step(S, i, now);
}

/* Entry 'i' of H_SENT without an answer: waits on while the process it
 * went to still owns the scene (up to GIVE_UP_S), else is answered
 * `unavailable`: it is not sent again. */
static void sent_step(struct server *S, int i, double now)
{
	struct relay_http *H = S->cx->relay_http;
	struct hreq *h = &H->v[i];
	cluster_lease_info li;

	cluster_lease_of(S->cx->cl, h->d->scene, &li);
	if (cluster_state(S->cx->cl) == CLUSTER_UP && li.state == CLUSTER_LEASE_OTHER &&
	    strcmp(li.owner, h->owner) == 0 && now - h->first_s < GIVE_UP_S)
		return;
	H->gave_up++;
	http_respond_code(S, h->conn, RIGD_E_UNAVAILABLE, "scene", "no answer from process %s, "
			  "the owner of scene '%s' when the request was relayed to it: it may have "
			  "been applied or not (read the scene to know); it is not sent again",
			  h->owner, h->d->scene);
	drop(H, i);
}

void relay_http_tick(struct server *S)
{
	struct relay_http *H = S->cx->relay_http;
	double now = serve_now_s(), after = cx_answer_wait_s(S->o.lease_ms);

	for (int i = H ? H->n - 1 : -1; i >= 0; i--) {
		if (H->v[i].state == H_WAIT)
			wait_step(S, i, now);
		else if (H->v[i].state == H_SENT && now - H->v[i].sent_s >= after)
			sent_step(S, i, now);
	}
}

void relay_http_reply(void *ctx, uint64_t rid, int status, const char *body, size_t len)
{
	struct server *S = ctx;
	struct relay_http *H = S->cx->relay_http;
	int i = find(H, H_SENT, rid);
	char *copy;

	if (i < 0)
		return;  /* answered already (given up), or not this process's */
	if ((copy = malloc(len + 1)) != NULL)
		memcpy(copy, body, len);
	if (copy)
		net_http_respond(S->n, H->v[i].conn, status, "application/json", copy, len);
	else
		http_respond_code(S, H->v[i].conn, RIGD_E_NOMEM, "", "out of memory");
	drop(H, i);
}

/* ---- the owner's side ---- */

/* The kinds a call may name: the route's last path segment. */
static bool kind_known(const char *kind)
{
	return strcmp(kind, "log") == 0 || strcmp(kind, "gltf") == 0 || strcmp(kind, "svg") == 0 ||
	       strcmp(kind, "spine") == 0 || strcmp(kind, "dragonbones") == 0;
}

/* Splits the arguments of 'k' into d->args. False when there are too many. */
static bool split_args(const cluster_call_info *k, struct deferred *d)
{
	const char *p = k->args, *end = k->args + k->args_len;

	while (p < end) {
		size_t n = strlen(p);  /* cl_take_call: the last one ends with a NUL */

		if (d->n_args == NET_MAX_ARGS || !(d->args[d->n_args] = strdup(p)))
			return false;
		d->n_args++;
		p += n + 1;
	}
	return true;
}

/* Answers call 'k' at once with 'code' and a message. */
static void refuse(struct server *S, const cluster_call_info *k, int code, const char *msg)
{
	proto_buf b;
	edit_error err;

	edit_error_set(&err, code, -1, "", "%s", msg);
	proto_buf_init(&b, 0);
	if (proto_encode_http_error(&b, &err) || proto_buf_append(&b, "\n", 1) ||
	    cluster_reply(S->cx->cl, k->from, k->rid, err_http_status(code), (const char *)b.data,
			  b.len) != 0)
		serve_log(LOG_WARN, "cluster: cannot answer request %" PRIu64 " of %s", k->rid,
			  k->from);
	proto_buf_release(&b);
}

void relay_http_call(struct server *S, const cluster_call_info *k)
{
	struct relay_http *H = state_of(S);
	char path[SCENE_ID_MAX + 40], name[SCENE_ID_MAX + 2];
	struct served *s;
	struct deferred *d;

	if (!kind_known(k->kind)) {
		refuse(S, k, RIGD_E_NOT_FOUND, "this process relays no such request");
		return;
	}
	snprintf(path, sizeof(path), "/api/scenes/%s/%s", k->scene, k->kind);
	if (!H || !(s = serve_grow(H->s, &H->cap_s, H->n_s + 1, sizeof(*s)))) {
		refuse(S, k, RIGD_E_NOMEM, "out of memory");
		return;
	}
	H->s = s;
	if (!(d = calloc(1, sizeof(*d)))) {
		refuse(S, k, RIGD_E_NOMEM, "out of memory");
		return;
	}
	d->kind = D_HTTP;
	d->run = http_run_deferred;
	d->conn = REMOTE_CONN | ++H->next_conn;
	d->method = NET_POST;
	d->route = routes_match(path, NET_POST, name, sizeof(name));
	snprintf(d->scene, sizeof(d->scene), "%s", k->scene);
	if (d->route < 0 || !split_args(k, d) || !(d->path = strdup(path)) ||
	    !(d->body = malloc(k->body_len + 1))) {
		turn_deferred_free(d);
		refuse(S, k, RIGD_E_BAD_FIELD, "the relayed request does not fit its route");
		return;
	}
	memcpy(d->body, k->body, k->body_len);
	d->body[k->body_len] = '\0';
	d->body_len = k->body_len;
	s = &H->s[H->n_s++];
	s->conn = d->conn;
	s->rid = k->rid;
	snprintf(s->from, sizeof(s->from), "%s", k->from);
	H->served++;
	turn_defer(S, d);  /* runs the route's handler after the commit */
}

bool relay_http_remote(const struct server *S, uint64_t conn)
{
	const struct relay_http *H = S->cx->relay_http;

	if (!(conn & REMOTE_CONN))
		return false;
	for (int i = 0; H && i < H->n_s; i++)
		if (H->s[i].conn == conn)
			return true;
	return false;
}

void relay_http_respond(struct server *S, uint64_t conn, int status, char *body, size_t len)
{
	struct relay_http *H = S->cx->relay_http;
	int rc;

	for (int i = 0; H && i < H->n_s; i++) {
		if (H->s[i].conn != conn)
			continue;
		rc = cluster_reply(S->cx->cl, H->s[i].from, H->s[i].rid, status, body ? body : "",
				   body ? len : 0);
		if (rc == RIGD_E_TOO_LARGE) {
			static const char big[] = "{\"error\":{\"code\":\"too_large\",\"message\":"
						  "\"the answer is too large to relay\"}}\n";

			rc = cluster_reply(S->cx->cl, H->s[i].from, H->s[i].rid, 413, big,
					   sizeof(big) - 1);
		}
		if (rc)
			serve_log(LOG_WARN, "cluster: cannot answer request %" PRIu64 " of %s: %s",
				  H->s[i].rid, H->s[i].from, err_str(rc));
		H->s[i] = H->s[--H->n_s];
		break;
	}
	free(body);
}

void relay_http_free(struct server *S)
{
	struct relay_http *H = S->cx->relay_http;

	if (!H)
		return;
	for (int i = 0; i < H->n; i++)
		free_copy(H->v[i].d);
	free(H->v);
	free(H->s);
	free(H);
	S->cx->relay_http = NULL;
}

int relay_http_metrics(struct server *S, proto_buf *b)
{
	struct relay_http *H = S->cx->relay_http;
	const struct metrics_row m[] = {
		{ "rigd_cluster_writes_relayed_total", "counter",
		  "Imports relayed to their scene's owner.", H ? H->relayed : 0 },
		{ "rigd_cluster_writes_failed_total", "counter",
		  "Imports answered unavailable for want of an owner or an answer.",
		  H ? H->gave_up : 0 },
		{ "rigd_cluster_writes_waiting", "gauge",
		  "Imports waiting for an owner or its answer.", H ? (uint64_t)H->n : 0 },
		{ "rigd_cluster_writes_served_total", "counter",
		  "Imports other processes relayed to this one.", H ? H->served : 0 },
	};

	return metrics_put_rows(b, m, (int)(sizeof(m) / sizeof(m[0])));
}
