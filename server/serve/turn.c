/*
 * turn.c: the loop turn as the unit of group commit (see turn.h).
 *
 * A turn goes: batches are submitted to the engine as they arrive (applied
 * in memory, each with a pending answer); then turn_run commits them all at
 * once, answers them (acks, or "storage" errors), brings world matrices up
 * to date once per touched scene and records one journal entry per touched
 * scene; then the work that waited for the commit runs (subscribes, scene
 * reads, creates, deletes, imports). No frame is built from a scene while
 * a batch awaits its commit.
 */
#include "turn.h"
#include "clients.h"
#include "fanout.h"
#include "http_respond.h"
#include "journal.h"
#include "log.h"
#include "metrics.h"
#include "rooms.h"
#include "serve_hooks.h"
#include "server.h"
#include "util.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void turn_forget_client(struct server *S, struct client *c)
{
	for (int i = 0; i < S->n_pend; i++)
		if (!S->pend[i].http && S->pend[i].conn == c->conn)
			S->pend[i].reply = NULL;
	for (struct deferred *d = S->dhead; d; d = d->next)
		if (d->kind != D_HTTP && d->conn == c->conn)
			d->reply = NULL;
}

/* Makes room for one more pending answer. 0 or RIGD_E_NOMEM. */
static int add_pending_room(struct server *S)
{
	struct pending *v = serve_grow(S->pend, &S->cap_pend, S->n_pend + 1, sizeof(*v));

	if (!v)
		return RIGD_E_NOMEM;
	S->pend = v;
	return 0;
}

int turn_submit(struct server *S, int type, const char *scene_name, const edit_batch *batch,
		  const char *client, struct client *c, uint64_t http_conn, const proto_req *req,
		  edit_error *err)
{
	return turn_submit_limits(S, type, scene_name, batch, &S->lim.edit, client, c, http_conn, req,
			     err);
}

int turn_submit_limits(struct server *S, int type, const char *scene_name,
			 const edit_batch *batch, const edit_limits *lim, const char *client,
			 struct client *c, uint64_t http_conn, const proto_req *req, edit_error *err)
{
	return turn_submit_asset(S, type, scene_name, batch, lim, NULL, 0, client, c, http_conn,
				 req, err);
}

/* One submission, as the entry points below describe it. */
struct submission {
	int type;                    /* PROTO_EDIT, PROTO_UNDO, PROTO_REDO */
	const char *scene;
	const edit_batch *batch;
	const edit_limits *lim;
	const engine_asset *assets;  /* stored with the batch: n_assets of them */
	int n_assets;
	bool logged;                 /* a log stream's line: 'log_kind', 'log_target' */
	int log_kind;
	int64_t log_target;
	const char *client;
	struct client *c;
	uint64_t http_conn;
	const proto_req *req;
};

/* The engine's part of a submission: applies it in memory. */
static int apply(struct server *S, const struct submission *u, engine_ack *ack, edit_error *err)
{
	const edit_batch *batch = u->batch;

	if (u->type == PROTO_EDIT && u->logged && u->log_kind != ENGINE_LOG_EDIT)
		return engine_submit_logged(S->e, u->scene, batch, u->log_kind, u->log_target, u->lim,
					    ack, err);
	if (u->type == PROTO_EDIT && u->n_assets)
		return engine_assets_submit(S->e, u->scene, batch, u->assets, u->n_assets, u->lim,
					    ack, err);
	if (u->type == PROTO_EDIT)
		return engine_submit_limits(S->e, u->scene, batch, u->lim, ack, err);
	if (u->type == PROTO_UNDO)
		return engine_undo(S->e, u->scene, u->client, batch && batch->has_client_seq,
				   batch ? batch->client_seq : 0, ack, err);
	return engine_redo(S->e, u->scene, u->client, batch && batch->has_client_seq,
			   batch ? batch->client_seq : 0, ack, err);
}

static int submit(struct server *S, const struct submission *u, edit_error *err)
{
	engine_ack ack;
	struct pending p;
	int64_t before = engine_seq(S->e, u->scene);
	int rc;

	/* In a cluster only the owner of the scene's lease applies its edits;
	 * another process relays a client's edit to it. A log stream's line
	 * is applied where it is read. */
	if (S->hooks && !u->logged &&
	    (rc = S->hooks->route_edit(S, u->type, u->scene, u->batch, u->lim == &S->lim.edit,
				       u->c, u->http_conn, u->req, err)) != 0) {
		if (rc < 0)
			S->m.batches_failed_total++;
		return rc < 0 ? rc : 0;
	}
	/* Room for the answer first: once submitted, a batch must be answered. */
	if (add_pending_room(S)) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	engine_ack_init(&ack);
	rc = apply(S, u, &ack, err);
	if (rc) {
		if (!err->code)
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		engine_ack_release(&ack);
		S->m.batches_failed_total++;
		return rc;
	}
	memset(&p, 0, sizeof(p));
	snprintf(p.scene, sizeof(p.scene), "%s", u->scene);
	p.http = u->c == NULL;
	p.conn = u->c ? u->c->conn : u->http_conn;
	if (u->req)
		p.req = *u->req;
	p.seq = ack.seq;
	p.recomputed = ack.recomputed;
	p.replica = u->logged;
	/* The ik reports travel with the answer (owned by the pending entry). */
	p.ik = ack.changes.ik;
	p.n_ik = ack.changes.n_ik;
	ack.changes.ik = NULL;
	ack.changes.n_ik = 0;
	if (!ack.duplicate) {
		/* Ops are counted from what the engine reports at commit. */
		struct room *st = rooms_get(S, u->scene);

		if (!st || journal_note(&st->j, &ack.changes, before))
			serve_log(LOG_WARN, "out of memory noting changes of %s", u->scene);
	}
	engine_ack_release(&ack);
	if (u->c)
		p.reply = clients_enqueue(S, u->c, NULL, 0, true);
	assert(S->n_pend < S->cap_pend);
	S->pend[S->n_pend++] = p;  /* room reserved above */
	net_schedule_turn(S->n);
	return 0;
}

int turn_submit_asset(struct server *S, int type, const char *scene_name,
		      const edit_batch *batch, const edit_limits *lim, const engine_asset *a,
		      int n_assets, const char *client, struct client *c, uint64_t http_conn,
		      const proto_req *req, edit_error *err)
{
	struct submission u = {.type = type, .scene = scene_name, .batch = batch, .lim = lim,
		.assets = a, .n_assets = n_assets, .client = client, .c = c,
		.http_conn = http_conn, .req = req};

	return submit(S, &u, err);
}

int turn_submit_logged(struct server *S, const char *scene_name, const edit_batch *batch,
		       int kind, int64_t target, const engine_asset *a, int n_assets,
		       edit_error *err)
{
	struct submission u = {.type = PROTO_EDIT, .scene = scene_name, .batch = batch,
		.lim = NULL, .assets = a, .n_assets = n_assets, .logged = true,
		.log_kind = kind, .log_target = target, .client = batch->client};

	return submit(S, &u, err);
}

void turn_defer(struct server *S, struct deferred *d)
{
	assert(!d->next && (S->dhead == NULL) == (S->dtail == NULL));
	if (S->dtail)
		S->dtail->next = d;
	else
		S->dhead = d;
	S->dtail = d;
	net_schedule_turn(S->n);
}

void turn_deferred_free(struct deferred *d)
{
	free(d->path);
	for (int i = 0; i < d->n_args; i++)
		free(d->args[i]);
	free(d->body);
	free(d->always);
	if (d->data_free)
		d->data_free(d->data);
	free(d);
}

/* Answers one batch that is not a glTF import: its ack ('err' NULL), or
 * 'err'. */
static void answer_with(struct server *S, struct pending *p, const edit_error *err)
{
	proto_buf b;
	size_t len;
	char *f;

	if (p->remote) {
		if (S->hooks)
			S->hooks->answer_remote(S, p, err);
		return;
	}
	if (p->http) {
		proto_buf_init(&b, 0);
		if (err) {
			http_respond_error(S, p->conn, err);
		} else if (proto_encode_http_ack_ik(&b, (uint64_t)p->seq, p->recomputed, p->ik,
						    p->n_ik) == 0) {
			http_respond_json(S, p->conn, 200, &b);
			return;
		} else {
			http_respond_code(S, p->conn, RIGD_E_NOMEM, "", "out of memory");
		}
		proto_buf_release(&b);
		return;
	}
	if (!p->reply)
		return;  /* the client has gone */
	struct client *c = clients_get(S, p->conn);

	if (!c || c->dropped)
		return;
	proto_buf_init(&b, S->head);
	if (err ? proto_encode_error(&b, &p->req, err)
		: proto_encode_ack_ik(&b, &p->req, (uint64_t)p->seq, p->recomputed, p->ik, p->n_ik)) {
		proto_buf_release(&b);
		f = NULL;
		len = 0;
	} else {
		f = serve_take_frame(&b, &len);
	}
	clients_fill(S, c, p->reply, f, len);
}

void turn_answer_later(struct server *S, struct pending *p, const edit_error *err)
{
	answer_with(S, p, err);
	free(p->ik);
	p->ik = NULL;
}

/* The answer to a committed glTF import: {"seq","recomputed","report"}. */
static void answer_import(struct server *S, const struct pending *p)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	if (PROTO_BUF_LIT(&b, "{\"seq\":") || serve_append_i64(&b, p->seq) ||
	    PROTO_BUF_LIT(&b, ",\"recomputed\":") || serve_append_i64(&b, p->recomputed) ||
	    PROTO_BUF_LIT(&b, ",\"report\":") ||
	    proto_buf_append(&b, p->report, strlen(p->report)) || PROTO_BUF_LIT(&b, "}")) {
		proto_buf_release(&b);
		http_respond_code(S, p->conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	http_respond_json(S, p->conn, 200, &b);
}

/* Answers one batch of the turn: its ack after a commit, else "storage". */
static void answer_one(struct server *S, struct pending *p, int commit_rc)
{
	edit_error err;

	if (commit_rc)
		edit_error_set(&err, RIGD_E_STORAGE, -1, "", "the edit could not be stored: %s",
			       engine_errmsg(S->e));
	if (p->replica)
		return;  /* applied from the scene's log stream: nobody waits */
	if (p->report) {
		/* A glTF import: the scene it created goes again when
		 * the import could not be stored. */
		if (commit_rc)
			http_respond_error(S, p->conn, &err);
		else
			answer_import(S, p);
		if (commit_rc && p->created[0]) {
			if (engine_scene_delete(S->e, p->created) == 0)
				rooms_scene_gone(S, p->created);
			else
				serve_log(LOG_WARN, "cannot delete scene %s after a failed import",
				      p->created);
		}
		free(p->report);
		p->report = NULL;
		return;
	}
	/* In a cluster the owner acknowledges once the scene's log stream
	 * holds the batch (replica.c keeps the answer until then). */
	if (!commit_rc && S->hooks && S->hooks->hold_ack(S, p))
		return;
	answer_with(S, p, commit_rc ? &err : NULL);
}

/* Answers every batch of the turn: acks after a commit, else "storage". */
static void answer_pending(struct server *S, int commit_rc)
{
	for (int i = 0; i < S->n_pend; i++) {
		answer_one(S, &S->pend[i], commit_rc);
		free(S->pend[i].ik);
		S->pend[i].ik = NULL;
	}
	S->n_pend = 0;
}

/* Commits the turn's batches, answers them, and counts the commit. */
static int commit_turn(struct server *S)
{
	engine_stats before, after;
	double t0 = serve_now_s();
	int rc;

	engine_get_stats(S->e, &before);
	rc = engine_commit(S->e);
	metrics_observe_commit(&S->m, serve_now_s() - t0);
	engine_get_stats(S->e, &after);
	if (rc) {
		S->m.commit_failures_total++;
		S->m.batches_failed_total += (uint64_t)S->n_pend;
		serve_log(LOG_ERROR, "commit failed: %s", engine_errmsg(S->e));
	} else {
		S->m.commits_total++;
		S->m.batches_total += after.batches - before.batches;
		S->m.ops_total += after.ops - before.ops;
	}
	answer_pending(S, rc);
	return rc;
}

/* The end of the turn for one touched scene: world matrices brought up to
 * date, one journal entry, and its subscribers woken. */
static void end_scene_turn(struct server *S, struct room *st, int commit_rc)
{
	struct journal_roots roots;
	int64_t seq;
	long n;
	int order_rc;

	st->j.touched = false;
	if (commit_rc) {
		journal_turn_drop(&st->j);
		return;
	}
	roots.s = engine_scene(S->e, st->name);
	roots.roots = &st->j.turn_roots;
	roots.rc = 0;
	n = roots.s ? engine_update(S->e, st->name, journal_collect_roots, &roots) : 0;
	if (n > 0)
		S->m.recomputed_matrices_total += (uint64_t)n;
	/* The draw order in the same turn as the matrices, from the same seq. */
	order_rc = roots.s ? journal_note_order(&st->j, roots.s) : 0;
	seq = engine_seq(S->e, st->name);
	if (S->hooks)  /* to the scene's log stream, as its owner */
		S->hooks->publish_turn(S, st->name, st->j.turn_from, seq);
	if (roots.rc || st->j.turn_lost || order_rc) {
		/* Without the roots, the changes or the order no delta is exact:
		 * snapshots. */
		journal_turn_drop(&st->j);
		rooms_restart(st, seq);
	} else if (seq > st->j.turn_from) {
		int64_t from = st->j.turn_from;

		journal_add(&st->j, seq);
		fanout_turn_end(S, st, from, seq);
	} else {
		journal_turn_drop(&st->j);
	}
	for (int k = 0; k < st->n_subs; k++)
		net_ws_wake(S->n, st->subs[k]);
}

/* Runs what waited for the commit, in arrival order. */
static void run_deferred(struct server *S)
{
	while (S->dhead) {
		struct deferred *d = S->dhead;

		assert(S->dtail && !S->dtail->next);
		S->dhead = d->next;
		if (!S->dhead)
			S->dtail = NULL;
		d->run(S, d);
		turn_deferred_free(d);
		/* A glTF import submits a batch: what comes after it waits for
		 * its commit, in the next turn (submit scheduled one), so that
		 * nothing reads a scene with a batch awaiting its commit. */
		if (engine_pending(S->e) > 0)
			break;
	}
}

void turn_run(void *ctx)
{
	struct server *S = ctx;

	if (S->n_pend > 0 || engine_pending(S->e) > 0) {
		int rc = commit_turn(S);

		for (int i = 0; i < S->n_scenes; i++)
			if (S->scenes[i]->j.touched)
				end_scene_turn(S, S->scenes[i], rc);
		if (S->hooks)
			S->hooks->end_turn(S, rc);
	}
	/* Clients that could not be served while the turn was open. */
	for (int i = 0; i < S->n_wake; i++) {
		struct client *c = clients_get(S, S->wake[i]);

		if (c) {
			c->wake_after_turn = false;
			net_ws_wake(S->n, c->conn);
		}
	}
	S->n_wake = 0;
	run_deferred(S);
}
