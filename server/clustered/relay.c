/*
 * relay.c: edits, undos and redos relayed to the owner of their scene and
 * answered back (see relay.h). An edit travels as its batch's JSON
 * (cluster_forward); an undo or redo as a call of kind "undo" or "redo"
 * whose arguments are "client=ID" and, when it has one, "client_seq=N"
 * (cluster_call). Both are answered with the same answer entry: an ack's
 * seq and recomputed count, or the error.
 */
#include "relay.h"
#include "relay_http.h"
#include "state.h"

#include "serve/clients.h"
#include "serve/http_respond.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/server.h"
#include "serve/turn.h"
#include "serve/util.h"

#include "cluster/cluster.h"
#include "core/err.h"
#include "core/num.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIVE_UP_S 30.0               /* a forward is answered unavailable after this */

/* One forwarded edit, undo or redo waiting for its answer. */
struct fwd {
	uint64_t rid;
	int type;                    /* PROTO_EDIT, PROTO_UNDO, PROTO_REDO */
	uint64_t conn;               /* ws client or HTTP request */
	bool http;
	struct reply *reply;         /* ws: its placeholder */
	proto_req req;
	char scene[SCENE_ID_MAX + 1];
	char *body;                  /* edit: the batch's JSON (owned) */
	size_t len;
	char args[SCENE_ID_MAX + 48]; /* undo, redo: the call's arguments */
	size_t args_len;
	bool resendable;             /* it carries a client_seq */
	double first_s, sent_s;
};

/* A relayed batch's pending entry names the process to answer. */
_Static_assert(TURN_PEER_ID_MAX >= CLUSTER_ID_MAX, "a process id fits a pending entry");

struct relay {
	struct fwd *v;
	int n, cap;
	uint64_t next_rid;
	uint64_t forwarded, resent, answered, gave_up, served;
};

static struct relay *relay_of(struct server *S)
{
	if (!S->cx->relay)
		S->cx->relay = calloc(1, sizeof(*S->cx->relay));
	return S->cx->relay;
}

/* The call of undo or redo 'f' (its kind and arguments). */
static cluster_call_info call_of(const struct fwd *f)
{
	cluster_call_info k;

	memset(&k, 0, sizeof(k));
	k.rid = f->rid;
	k.scene = f->scene;
	k.kind = f->type == PROTO_UNDO ? "undo" : "redo";
	k.args = f->args;
	k.args_len = f->args_len;
	return k;
}

/* Sends forward 'f' to process 'owner'. 0 or the error of cluster/. */
static int send_to(struct server *S, const struct fwd *f, const char *owner)
{
	cluster_call_info k;

	if (f->type == PROTO_EDIT)
		return cluster_forward(S->cx->cl, owner, f->rid, f->scene, f->body, f->len);
	k = call_of(f);
	return cluster_call(S->cx->cl, owner, &k);
}

/* The arguments of an undo or redo of 'batch''s client (and client_seq)
 * into f->args: "client=ID\0" and "client_seq=N\0". */
static void undo_args(struct fwd *f, const edit_batch *batch)
{
	int n = snprintf(f->args, sizeof(f->args), "client=%s", batch->client);

	f->args_len = (size_t)n + 1;
	if (batch->has_client_seq)
		f->args_len += (size_t)snprintf(f->args + f->args_len,
						sizeof(f->args) - f->args_len,
						"client_seq=%" PRId64, batch->client_seq) + 1;
}

int relay_forward(struct server *S, const char *owner, const char *name, int type,
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
	f->type = type;
	snprintf(f->scene, sizeof(f->scene), "%s", name);
	if (type != PROTO_EDIT) {
		undo_args(f, batch);
	} else {
		proto_buf_init(&b, 0);
		if (proto_encode_batch(&b, batch) || !(f->body = json_buf_take(&b))) {
			proto_buf_release(&b);
			edit_error_set(err, RIGD_E_NOMEM, -1, "", "out of memory");
			return RIGD_E_NOMEM;
		}
		f->len = strlen(f->body);
	}
	f->rid = ++R->next_rid;
	rc = send_to(S, f, owner);
	if (rc) {
		free(f->body);
		edit_error_set(err, rc == RIGD_E_TOO_LARGE ? RIGD_E_TOO_LARGE : RIGD_E_UNAVAILABLE,
			       -1, "scene", "scene '%s' is owned by process %s, and the %s could "
			       "not be relayed to it: %s", name, owner,
			       type == PROTO_EDIT ? "edit" : type == PROTO_UNDO ? "undo" : "redo",
			       err_str(rc));
		return err->code;
	}
	f->http = c == NULL;
	f->conn = c ? c->conn : http_conn;
	if (req)
		f->req = *req;
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
	struct relay *R = S->cx->relay;
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
	struct relay *R = S->cx->relay;
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
	if (cluster_answer(S->cx->cl, to, &a) != 0)
		serve_log(LOG_WARN, "cluster: cannot answer request %" PRIu64 " of %s", rid, to);
}

/* Submits 'batch' (an edit, or the client of an undo or redo: 'type')
 * that process 'from' relayed as its request 'rid' to this turn, answered
 * after the commit, or answers the error that refused it. */
static void submit_remote(struct server *S, const char *from, uint64_t rid, int type,
			  const char *name, const edit_batch *batch)
{
	edit_error err;
	int rc;

	edit_error_clear(&err);
	/* No client connection and no HTTP request: a remote submission,
	 * which is never forwarded again. */
	rc = turn_submit(S, type, name, batch, batch->client, NULL, 0, NULL, &err);
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
	submit_remote(S, from, rid, PROTO_EDIT, name, &batch);
	edit_batch_release(&batch);
}

/* The arguments of a relayed undo or redo ("client=ID", and
 * "client_seq=N" when it has one) into the client of 'b'. 0, or
 * RIGD_E_BAD_FIELD with 'err' naming the argument. */
static int read_undo_args(const cluster_call_info *k, edit_batch *b, edit_error *err)
{
	const char *p = k->args, *end = k->args + k->args_len;

	edit_batch_init(b);
	while (p < end) {
		size_t n = strlen(p);  /* cl_take_call: the last one ends with a NUL */

		if (strncmp(p, "client=", 7) == 0 && !b->client[0] && n - 7 <= SCENE_ID_MAX)
			memcpy(b->client, p + 7, n - 7 + 1);
		else if (strncmp(p, "client_seq=", 11) == 0 && !b->has_client_seq &&
			 num_parse_i64(p + 11, 0, NUM_SEQ_MAX, &b->client_seq))
			b->has_client_seq = true;
		else
			break;
		p += n + 1;
	}
	if (p < end || !b->client[0] || !scene_id_valid(b->client)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client", "a relayed %s needs "
			       "client=ID and may have client_seq=N, nothing else", k->kind);
		return RIGD_E_BAD_FIELD;
	}
	return 0;
}

void relay_call(void *ctx, const cluster_call_info *k)
{
	struct server *S = ctx;
	struct relay *R = relay_of(S);
	int type = strcmp(k->kind, "undo") == 0   ? PROTO_UNDO
		   : strcmp(k->kind, "redo") == 0 ? PROTO_REDO
						  : 0;
	edit_batch batch;
	edit_error err;

	if (!type) {
		relay_http_call(S, k);
		return;
	}
	if (R)
		R->served++;
	edit_error_clear(&err);
	if (read_undo_args(k, &batch, &err)) {
		answer_to(S, k->from, k->rid, &err, 0, 0);
		return;
	}
	submit_remote(S, k->from, k->rid, type, k->scene, &batch);
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
	struct relay *R = S->cx->relay;
	struct fwd *f = &R->v[i], take;
	cluster_call_info k;
	cluster_lease_info li;
	edit_error err;
	edit_batch batch;
	struct client *c;

	cluster_lease_of(S->cx->cl, f->scene, &li);
	if (!f->resendable || now - f->first_s >= GIVE_UP_S ||
	    cluster_state(S->cx->cl) != CLUSTER_UP) {
		R->gave_up++;
		edit_error_set(&err, RIGD_E_UNAVAILABLE, -1, "scene",
			       "no answer from the owner of scene '%s'%s%s%s", f->scene,
			       f->resendable ? "" : " (the ",
			       f->resendable ? "" : f->type == PROTO_EDIT ? "edit"
						  : f->type == PROTO_UNDO ? "undo" : "redo",
			       f->resendable ? "" : " may have been applied: send it with a "
						    "client_seq to resend it safely)");
		finish(S, i, &err, 0, 0);
		return;
	}
	if (li.state == CLUSTER_LEASE_OTHER && send_to(S, f, li.owner) == 0) {
		R->resent++;
		f->sent_s = now;
		return;
	}
	if (!cluster_owns(S->cx->cl, f->scene, NULL)) {
		f->sent_s = now;  /* no owner known yet: try again later */
		return;
	}
	/* This process owns the scene now: apply it here. The entry goes
	 * first, since submitting may relay again and move the array. */
	take = *f;
	R->v[i] = R->v[--R->n];
	c = take.http ? NULL : clients_get(S, take.conn);
	k = call_of(&take);
	if ((!take.http && (!c || c->dropped)) ||
	    (take.type == PROTO_EDIT
		     ? proto_decode_batch(take.body, take.len, &S->lim, &batch, &err)
		     : read_undo_args(&k, &batch, &err)) != 0) {
		free(take.body);
		return;
	}
	if (c && take.reply)
		clients_fill(S, c, take.reply, NULL, 0);  /* the local answer replaces it */
	if (turn_submit(S, take.type, take.scene, &batch, batch.client, c,
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
	struct relay *R = S->cx->relay;
	double now = serve_now_s(), after = cx_answer_wait_s(S->o.lease_ms);

	for (int i = R ? R->n - 1 : -1; i >= 0; i--)
		if (now - R->v[i].sent_s >= after)
			retry(S, i, now);
	relay_http_tick(S);
}

void relay_free(struct server *S)
{
	struct relay *R = S->cx->relay;

	relay_http_free(S);
	if (!R)
		return;
	for (int i = 0; i < R->n; i++)
		free(R->v[i].body);
	free(R->v);
	free(R);
	S->cx->relay = NULL;
}

int relay_metrics(struct server *S, proto_buf *b)
{
	struct relay *R = S->cx->relay;
	const struct metrics_row m[] = {
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

	return metrics_put_rows(b, m, (int)(sizeof(m) / sizeof(m[0]))) || relay_http_metrics(S, b)
		       ? RIGD_E_NOMEM : 0;
}

