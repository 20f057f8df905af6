/*
 * relay.c: edits relayed to the owner of their scene and answered back
 * (see relay.h).
 */
#include "relay.h"
#include "clients.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "turn.h"
#include "util.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIVE_UP_S 30.0               /* a forward is answered unavailable after this */

/* One forwarded edit waiting for its answer. */
struct fwd {
	uint64_t rid;
	uint64_t conn;               /* ws client or HTTP request */
	bool http;
	struct reply *reply;         /* ws: its placeholder */
	proto_req req;
	char scene[SCENE_ID_MAX + 1];
	char *body;                  /* the batch's JSON (owned) */
	size_t len;
	bool resendable;             /* it carries a client_seq */
	double first_s, sent_s;
};

struct relay {
	struct fwd *v;
	int n, cap;
	uint64_t next_rid;
	uint64_t forwarded, resent, answered, gave_up, served;
};

static struct relay *relay_of(struct server *S)
{
	if (!S->relay)
		S->relay = calloc(1, sizeof(*S->relay));
	return S->relay;
}

/* How long a forward waits for its answer before it is sent again. */
static double resend_after_s(const struct server *S)
{
	double s = S->o.lease_ms * 1.5 / 1000.0;

	return s < 2.0 ? 2.0 : s;
}

int relay_forward(struct server *S, const char *owner, const char *name,
		  const edit_batch *batch, struct client *c, uint64_t http_conn,
		  const proto_req *req, edit_error *err)
{
	struct relay *R = relay_of(S);
	struct fwd *f;
	proto_buf b;
	int rc;

	if (!R || !(f = serve_grow(R->v, &R->cap, R->n + 1, sizeof(*R->v)))) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "out of memory");
		return RIGD_E_NOMEM;
	}
	R->v = f;
	f = &R->v[R->n];
	memset(f, 0, sizeof(*f));
	proto_buf_init(&b, 0);
	if (proto_encode_batch(&b, batch) || !(f->body = json_buf_take(&b))) {
		proto_buf_release(&b);
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "out of memory");
		return RIGD_E_NOMEM;
	}
	f->len = strlen(f->body);
	f->rid = ++R->next_rid;
	rc = cluster_forward(S->cl, owner, f->rid, name, f->body, f->len);
	if (rc) {
		free(f->body);
		edit_error_set(err, rc == RIGD_E_TOO_LARGE ? RIGD_E_TOO_LARGE : RIGD_E_UNAVAILABLE,
			       -1, "scene", "scene '%s' is owned by process %s, and the edit could "
			       "not be relayed to it: %s", name, owner, err_str(rc));
		return err->code;
	}
	f->http = c == NULL;
	f->conn = c ? c->conn : http_conn;
	if (req)
		f->req = *req;
	snprintf(f->scene, sizeof(f->scene), "%s", name);
	f->resendable = batch->has_client_seq;
	f->first_s = f->sent_s = serve_now_s();
	if (c)
		f->reply = clients_enqueue(S, c, NULL, 0, true);
	R->n++;
	R->forwarded++;
	return 0;
}

/* Answers forward 'f' with an ack (err NULL, 'seq', 'recomputed') or with
 * 'err', then removes it. */
static void finish(struct server *S, int i, const edit_error *err, int64_t seq, long recomputed)
{
	struct relay *R = S->relay;
	struct fwd *f = &R->v[i];
	struct client *c;
	proto_buf b;
	size_t len;
	char *frame = NULL;

	if (f->http) {
		proto_buf_init(&b, 0);
		if (err)
			http_respond_error(S, f->conn, err);
		else if (proto_encode_http_ack(&b, (uint64_t)seq, recomputed) == 0)
			http_respond_json(S, f->conn, 200, &b);
		else
			http_respond_code(S, f->conn, RIGD_E_NOMEM, "", "out of memory");
		proto_buf_release(&b);
	} else if ((c = clients_get(S, f->conn)) && !c->dropped && f->reply) {
		proto_buf_init(&b, S->head);
		if (!(err ? proto_encode_error(&b, &f->req, err)
			  : proto_encode_ack(&b, &f->req, (uint64_t)seq, recomputed)))
			frame = serve_take_frame(&b, &len);
		proto_buf_release(&b);
		clients_fill(S, c, f->reply, frame, frame ? len : 0);
	}
	free(f->body);
	R->v[i] = R->v[--R->n];
}

void relay_answer(void *ctx, const cluster_answer_info *a)
{
	struct server *S = ctx;
	struct relay *R = S->relay;
	edit_error err;
	int code;

	for (int i = 0; R && i < R->n; i++) {
		if (R->v[i].rid != a->rid)
			continue;
		R->answered++;
		if (strcmp(a->code, "ok") == 0) {
			finish(S, i, NULL, a->seq, a->recomputed);
			return;
		}
		code = err_from_code(a->code);
		/* The message already names the op: set it as it came. */
		edit_error_set(&err, code < 0 ? code : RIGD_E_INTERNAL, -1, a->field, "%s",
			       a->message);
		err.op = a->op;
		finish(S, i, &err, 0, 0);
		return;
	}
}

/* Sends the owner's answer for request 'rid' of process 'to'. */
static void answer_to(struct server *S, const char *to, uint64_t rid, const edit_error *err,
		      int64_t seq, long recomputed)
{
	cluster_answer_info a;

	memset(&a, 0, sizeof(a));
	a.rid = rid;
	a.code = err ? err_code(err->code) : "ok";
	a.seq = seq;
	a.recomputed = recomputed;
	a.op = err ? err->op : -1;
	a.field = err ? err->field : "";
	a.message = err ? err->message : "";
	if (cluster_answer(S->cl, to, &a) != 0)
		serve_log(LOG_WARN, "cluster: cannot answer request %" PRIu64 " of %s", rid, to);
}

void relay_request(void *ctx, const char *from, uint64_t rid, const char *name,
		   const char *body, size_t len)
{
	struct server *S = ctx;
	struct relay *R = relay_of(S);
	edit_batch batch;
	edit_error err;
	int rc;

	edit_error_clear(&err);
	if (R)
		R->served++;
	rc = proto_decode_batch(body, len, &S->lim, &batch, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		answer_to(S, from, rid, &err, 0, 0);
		return;
	}
	/* No client connection and no HTTP request: a remote submission,
	 * which is never forwarded again. */
	rc = turn_submit(S, PROTO_EDIT, name, &batch, batch.client, NULL, 0, NULL, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		answer_to(S, from, rid, &err, 0, 0);
	} else {
		struct pending *p = &S->pend[S->n_pend - 1];

		p->remote = true;
		p->remote_rid = rid;
		snprintf(p->remote_to, sizeof(p->remote_to), "%s", from);
	}
	edit_batch_release(&batch);
}

void relay_answer_pending(struct server *S, const struct pending *p, const edit_error *err)
{
	answer_to(S, p->remote_to, p->remote_rid, err, p->seq, p->recomputed);
}

/* Forward 'i' waited too long: sent again where the scene is owned now, or
 * submitted here, or answered unavailable. */
static void retry(struct server *S, int i, double now)
{
	struct relay *R = S->relay;
	struct fwd *f = &R->v[i], take;
	cluster_lease_info li;
	edit_error err;
	edit_batch batch;
	struct client *c;

	cluster_lease_of(S->cl, f->scene, &li);
	if (!f->resendable || now - f->first_s >= GIVE_UP_S ||
	    cluster_state(S->cl) != CLUSTER_UP) {
		R->gave_up++;
		edit_error_set(&err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "no answer from the owner of scene '%s'%s", f->scene,
			       f->resendable ? "" : " (the edit may have been applied: send it "
						    "with a client_seq to resend it safely)");
		finish(S, i, &err, 0, 0);
		return;
	}
	if (li.state == CLUSTER_LEASE_OTHER &&
	    cluster_forward(S->cl, li.owner, f->rid, f->scene, f->body, f->len) == 0) {
		R->resent++;
		f->sent_s = now;
		return;
	}
	if (!cluster_owns(S->cl, f->scene, NULL)) {
		f->sent_s = now;  /* no owner known yet: try again later */
		return;
	}
	/* This process owns the scene now: apply it here. The entry goes
	 * first, since submitting may relay again and move the array. */
	take = *f;
	R->v[i] = R->v[--R->n];
	c = take.http ? NULL : clients_get(S, take.conn);
	if ((!take.http && (!c || c->dropped)) ||
	    proto_decode_batch(take.body, take.len, &S->lim, &batch, &err) != 0) {
		free(take.body);
		return;
	}
	if (c && take.reply)
		clients_fill(S, c, take.reply, NULL, 0);  /* the local answer replaces it */
	if (turn_submit(S, PROTO_EDIT, take.scene, &batch, batch.client, c,
			take.http ? take.conn : 0, &take.req, &err)) {
		if (c)
			clients_reply_error(S, c, &take.req, &err);
		else
			http_respond_error(S, take.conn, &err);
	}
	edit_batch_release(&batch);
	free(take.body);
}

void relay_tick(struct server *S)
{
	struct relay *R = S->relay;
	double now = serve_now_s(), after = resend_after_s(S);

	for (int i = R ? R->n - 1 : -1; i >= 0; i--)
		if (now - R->v[i].sent_s >= after)
			retry(S, i, now);
}

void relay_free(struct server *S)
{
	struct relay *R = S->relay;

	if (!R)
		return;
	for (int i = 0; i < R->n; i++)
		free(R->v[i].body);
	free(R->v);
	free(R);
	S->relay = NULL;
}

int relay_metrics(struct server *S, proto_buf *b)
{
	struct relay *R = S->relay;
	struct {
		const char *name, *type, *help;
		uint64_t value;
	} m[] = {
		{ "rigd_cluster_forwarded_total", "counter",
		  "Edits relayed to their scene's owner.",
		  R ? (uint64_t)R->forwarded : 0 },
		{ "rigd_cluster_forwards_resent_total", "counter",
		  "Relayed edits sent again for want of an answer.",
		  R ? (uint64_t)R->resent : 0 },
		{ "rigd_cluster_forwards_failed_total", "counter",
		  "Relayed edits answered unavailable for want of an answer.",
		  R ? (uint64_t)R->gave_up : 0 },
		{ "rigd_cluster_forwards_waiting", "gauge",
		  "Relayed edits waiting for their answer.",
		  R ? (uint64_t)R->n : 0 },
		{ "rigd_cluster_requests_served_total", "counter",
		  "Edits other processes relayed to this one.",
		  R ? (uint64_t)R->served : 0 },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (metrics_put(b, m[i].name, m[i].type, m[i].help, m[i].value))
			return RIGD_E_NOMEM;
	return 0;
}

