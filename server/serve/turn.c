/*
 * turn.c: the loop turn as the unit of group commit (see turn.h).
 *
 * A turn goes: batches are submitted to the engine as they arrive (applied
 * in memory, each with a pending answer); then turn_run hands them all to
 * one commit. Alone (no cluster) the commit writer runs it on its own
 * thread (engine_commit_begin) while the loop goes on reading, decoding
 * and answering everything else; in a cluster, or without a writer, it
 * runs at once on the loop, as it always did. When the commit returns
 * (the writer wakes the loop: net_wake_from_thread), its batches are
 * answered (acks, or "storage" errors), world matrices are brought up to
 * date once per touched scene and one journal entry is recorded per
 * touched scene; then comes the window in which the scenes in memory are
 * exactly what is stored: updates are built for the subscribers of the
 * scenes about to change again, the work that waited for the commit runs
 * (subscribes, scene reads, creates, deletes, imports), the submissions
 * that came while the commit was out (kept as they came: a stash) are
 * applied, and they go to the writer as the next commit. Under load the
 * next commit waits for its window (commit_waits, --commit-delay): the
 * batches that come meanwhile are applied as they come and join it.
 *
 * No frame is built from a scene while one of its batches awaits its
 * commit, and nothing is answered before the commit that holds it.
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

#include "core/edit.h"
#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long before its window's end a commit's gathering editors are read
 * again, so that what they sent joins it (gather_editors). */
#define GATHER_END_S 0.001

/* A submission taken while a commit was out: what submit() needs to apply
 * it later, copied. */
struct stash {
	int type;                    /* PROTO_EDIT, PROTO_UNDO, PROTO_REDO */
	char scene[SCENE_ID_MAX + 1];
	bool has_batch;
	edit_batch batch;
	edit_limits lim;
	char client[sizeof(((edit_batch *)0)->client)];
};

static void stash_free(struct stash *st)
{
	if (!st)
		return;
	if (st->has_batch)
		edit_batch_release(&st->batch);
	free(st);
}

void turn_forget_client(struct server *S, struct client *c)
{
	for (int i = 0; i < S->n_pend; i++)
		if (!S->pend[i].http && S->pend[i].conn == c->conn)
			S->pend[i].reply = NULL;
	for (int i = 0; i < S->n_flight; i++)
		if (!S->flight[i].http && S->flight[i].conn == c->conn)
			S->flight[i].reply = NULL;
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

/* Fills 'p' from what the engine said of its applied batch ('before':
 * the scene's seq before it) and notes its changes in the room's turn.
 * Releases 'ack'. */
static void note_applied(struct server *S, struct pending *p, const char *name,
			 engine_ack *ack, int64_t before)
{
	p->seq = ack->seq;
	p->recomputed = ack->recomputed;
	/* The ik reports travel with the answer (owned by the pending entry). */
	p->ik = ack->changes.ik;
	p->n_ik = ack->changes.n_ik;
	ack->changes.ik = NULL;
	ack->changes.n_ik = 0;
	if (!ack->duplicate) {
		/* Ops are counted from what the engine reports at commit. */
		struct room *st = rooms_get(S, name);

		if (!st || journal_note(&st->j, &ack->changes, before))
			serve_log(LOG_WARN, "out of memory noting changes of %s", name);
	}
	engine_ack_release(ack);
}

/* The pending answer of submission 'u': who asked, and where it goes. */
static void pending_of(const struct submission *u, struct pending *p)
{
	memset(p, 0, sizeof(*p));
	edit_copy_name(p->scene, sizeof(p->scene), u->scene);
	p->http = u->c == NULL;
	p->conn = u->c ? u->c->conn : u->http_conn;
	if (u->req)
		p->req = *u->req;
}

/* While a commit is out, the engine's queue is the commit's: a submission
 * waits, copied, with its answer's place kept, for the window after that
 * commit (apply_stash). Only what a client sends directly comes here (an
 * import's batch with assets is deferred work, run in the window). */
static int stash_submit(struct server *S, const struct submission *u, edit_error *err)
{
	struct stash *st;
	struct pending p;

	if (u->logged || u->n_assets || !u->lim) {
		edit_error_set(err, RIGD_E_INTERNAL, -1, "", "this batch cannot wait for a commit");
		S->m.batches_failed_total++;
		return RIGD_E_INTERNAL;
	}
	if (add_pending_room(S) || !(st = calloc(1, sizeof(*st)))) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		S->m.batches_failed_total++;
		return RIGD_E_NOMEM;
	}
	st->type = u->type;
	edit_copy_name(st->scene, sizeof(st->scene), u->scene);
	edit_copy_name(st->client, sizeof(st->client), u->client ? u->client : "");
	st->lim = *u->lim;
	if (u->batch) {
		if (edit_batch_copy(&st->batch, u->batch)) {
			free(st);
			edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
			S->m.batches_failed_total++;
			return RIGD_E_NOMEM;
		}
		st->has_batch = true;
	}
	pending_of(u, &p);
	p.stash = st;
	if (u->c)
		p.reply = clients_enqueue(S, u->c, NULL, 0, true);
	assert(S->n_pend < S->cap_pend);
	S->pend[S->n_pend++] = p;  /* room reserved above */
	S->n_stashed++;
	if (u->c && ++u->c->stashed >= (S->stash_cap ? S->stash_cap : STASH_CLIENT_MIN))
		clients_hold_for_turn(S, u->c, true);
	return 0;
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
	if (engine_commit_busy(S->e))
		return stash_submit(S, u, err);
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
	pending_of(u, &p);
	p.replica = u->logged;
	note_applied(S, &p, u->scene, &ack, before);
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

/* Whether 'd' only reads one scene (a subscribe, an HTTP GET of it). */
static bool reads_one_scene(const struct deferred *d)
{
	return d->scene[0] &&
	       (d->kind == D_SUBSCRIBE || (d->kind == D_HTTP && d->method == NET_GET));
}

void turn_defer(struct server *S, struct deferred *d)
{
	assert(!d->next && (S->dhead == NULL) == (S->dtail == NULL));
	if ((engine_commit_busy(S->e) || S->commit_waiting) && !S->dhead && reads_one_scene(d) &&
	    turn_scene_quiet(S, d->scene)) {
		/* A commit is out (or waits for its window), but not of this
		 * scene, and nothing of it waits: what is in memory is what
		 * is stored. It runs now. */
		d->run(S, d);
		turn_deferred_free(d);
		return;
	}
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

/* Answers every batch of the commit: acks after it, else "storage". */
static void answer_pending(struct server *S, int commit_rc)
{
	for (int i = 0; i < S->n_flight; i++) {
		assert(!S->flight[i].stash);
		answer_one(S, &S->flight[i], commit_rc);
		free(S->flight[i].ik);
		S->flight[i].ik = NULL;
	}
	S->n_flight = 0;
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

/* One client's share of the next commit (clients.h, STASH_CLIENT_*),
 * from the last commit: 'secs' for 'batches'. */
static void set_stash_cap(struct server *S, double secs, long batches)
{
	double cap = STASH_CLIENT_MAX;

	if (batches > 0 && secs > 0)
		cap = STASH_CLIENT_BUDGET_S / (secs / (double)batches);
	S->stash_cap = cap < STASH_CLIENT_MIN ? STASH_CLIENT_MIN
		     : cap > STASH_CLIENT_MAX ? STASH_CLIENT_MAX : (int)cap;
}

/* Counts the commit that returned 'rc' and answers its batches. */
static void count_commit(struct server *S, int rc)
{
	engine_stats after;

	engine_get_stats(S->e, &after);
	if (after.commits + after.failed_commits !=
	    S->commit_before.commits + S->commit_before.failed_commits)
		metrics_observe_commit(&S->m, after.last_commit_s);
	if (rc) {
		S->m.commit_failures_total++;
		S->m.batches_failed_total += (uint64_t)S->n_flight;
		serve_log(LOG_ERROR, "commit failed: %s", engine_errmsg(S->e));
	} else {
		S->m.commits_total++;
		S->m.batches_total += after.batches - S->commit_before.batches;
		S->m.ops_total += after.ops - S->commit_before.ops;
		S->m.commit_batches = (long)(after.batches - S->commit_before.batches);
		set_stash_cap(S, after.last_commit_s, S->m.commit_batches);
	}
	answer_pending(S, rc);
}

/* The commit has returned 'rc': its answers go out, and each scene it
 * touched ends its turn (matrices, journal, subscribers woken). */
static void commit_finished(struct server *S, int rc)
{
	count_commit(S, rc);
	for (int i = 0; i < S->n_scenes; i++)
		if (S->scenes[i]->j.touched)
			end_scene_turn(S, S->scenes[i], rc);
	if (S->hooks)
		S->hooks->end_turn(S, rc);
}

/*
 * Ends the gathering of every client gathered for the window
 * (net_ws_gather): their sockets wake the loop at every byte again.
 */
static void gather_end(struct server *S)
{
	for (int i = 0; i < S->n_gathered; i++) {
		struct client *c = clients_get(S, S->gathered[i]);

		if (c && c->gathering) {
			c->gathering = false;
			net_ws_gather(S->n, c->conn, false);
		}
	}
	S->n_gathered = 0;
}

/*
 * While a commit waits for its window, each message of a client that
 * streams edits wakes the loop to read a few hundred bytes that could as
 * well be read at the window's end: the batches join the same commit
 * either way. So the clients with two batches or more among those
 * gathered so far stop waking the loop (net_ws_gather) until
 * GATHER_END_S before the window ends; then they are read at once, in
 * bulk, and what they sent joins the commit. A client that sends one
 * batch a window, as a browser at 60 edits/s does, is never gathered: it
 * would cost two calls and save no wake.
 */
static void gather_editors(struct server *S)
{
	S->window_id++;
	for (int i = 0; i < S->n_pend; i++) {
		const struct pending *p = &S->pend[i];
		struct client *c;
		uint64_t *v;

		if (p->http || p->replica || !(c = clients_get(S, p->conn)))
			continue;
		if (c->window_id != S->window_id) {
			c->window_id = S->window_id;
			c->window_batches = 0;
		}
		if (++c->window_batches != 2 || c->gathering)
			continue;
		v = serve_grow(S->gathered, &S->cap_gathered, S->n_gathered + 1, sizeof(*v));
		if (!v)
			return;  /* then it wakes the loop as it sends: only slower */
		S->gathered = v;
		S->gathered[S->n_gathered++] = c->conn;
		S->m.clients_gathered_total++;
		c->gathering = true;
		net_ws_gather(S->n, c->conn, true);
	}
}

/*
 * The group commit's window. Under a steady stream a commit holds what
 * came while the last one ran, and most of its cost is the same however
 * many batches it holds: the fsync, the WAL's locks and header, a frame
 * for every subscriber, the wakes between loop and writer. So while the
 * last commit held COMMIT_SIBLINGS batches or more (the load is there),
 * the next starts no sooner than --commit-delay after the last one
 * started; what arrives meanwhile joins it. The window ends early once
 * COMMIT_GROUP_FULL batches are gathered: by then the fixed cost is
 * spread thin, and a larger group would only add to its batches' wait. A
 * commit that ran longer than the window is followed at once, and below
 * that load (at 60 edits/s every commit holds one batch) nothing waits.
 * Shutting down never waits.
 * True when the commit waits: a turn is asked for at the window's end.
 */
static bool commit_waits(struct server *S)
{
	double due, now;

	if (!S->pipelined || S->o.commit_delay_ms == 0 || S->draining ||
	    S->m.commit_batches < COMMIT_SIBLINGS || S->n_pend >= COMMIT_GROUP_FULL)
		return false;
	due = S->commit_started + S->o.commit_delay_ms / 1e3;
	now = serve_now_s();
	if (now >= due)
		return false;
	if (!S->commit_waiting && now < due - GATHER_END_S)
		gather_editors(S);
	S->commit_waiting = true;  /* counted, and cleared, at the hand-off */
	if (S->n_gathered && now < due - GATHER_END_S)
		due -= GATHER_END_S;  /* asked again then, to end the gathering */
	else if (S->n_gathered)
		gather_end(S);  /* the next poll reads what they sent */
	net_schedule_turn_in(S->n, (int64_t)((due - now) * 1e6) + 1);
	return true;
}

/* The gathered turn becomes the commit: its answers wait in 'flight' and
 * the engine hands its batches to the writer (or commits them at once,
 * without one: then the commit is over when this returns). */
static void hand_off(struct server *S)
{
	struct pending *v = S->flight;
	int cap = S->cap_flight, rc;

	assert(S->n_flight == 0 && S->n_stashed == 0 && !engine_commit_busy(S->e));
	S->flight = S->pend;
	S->cap_flight = S->cap_pend;
	S->n_flight = S->n_pend;
	S->pend = v;
	S->cap_pend = cap;
	S->n_pend = 0;
	engine_get_stats(S->e, &S->commit_before);
	if (S->commit_waiting)
		S->m.commits_waited_total++;
	S->commit_waiting = false;
	gather_end(S);
	S->commit_started = serve_now_s();
	rc = engine_commit_begin(S->e);
	if (!engine_commit_busy(S->e))
		commit_finished(S, rc);
}

/* Applies the submissions that waited for the commit, in arrival order;
 * one the engine refuses is answered with its error at once. */
static void apply_stash(struct server *S)
{
	int kept = 0;

	for (int i = 0; i < S->n_pend; i++) {
		struct pending p = S->pend[i];
		struct stash *st = p.stash;
		engine_ack ack;
		edit_error err;
		int64_t before;
		int rc;

		if (!st) {
			S->pend[kept++] = p;
			continue;
		}
		p.stash = NULL;
		S->n_stashed--;
		if (!p.http) {
			struct client *c = clients_get(S, p.conn);

			if (c && c->stashed > 0 && --c->stashed == 0)
				clients_hold_for_turn(S, c, false);
		}
		struct submission u = {.type = st->type, .scene = st->scene,
			.batch = st->has_batch ? &st->batch : NULL, .lim = &st->lim,
			.client = st->client};
		before = engine_seq(S->e, st->scene);
		edit_error_clear(&err);
		engine_ack_init(&ack);
		rc = apply(S, &u, &ack, &err);
		if (rc) {
			if (!err.code)
				edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
			engine_ack_release(&ack);
			S->m.batches_failed_total++;
			answer_with(S, &p, &err);
		} else {
			note_applied(S, &p, st->scene, &ack, before);
			S->pend[kept++] = p;
		}
		stash_free(st);
	}
	S->n_pend = kept;
	assert(S->n_stashed == 0);
}

/* The window after a commit (or a turn without one): the scenes in memory
 * are what is stored. */
static void window(struct server *S)
{
	/* Clients that could not be served while their scene was busy. */
	for (int i = 0; i < S->n_wake; i++) {
		struct client *c = clients_get(S, S->wake[i]);

		if (c) {
			c->wake_after_turn = false;
			net_ws_wake(S->n, c->conn);
		}
	}
	S->n_wake = 0;
	/* Updates now, while no scene has a batch awaiting a commit: once the
	 * next batch of a scene is applied, nothing can be built from it
	 * until that batch's commit returns. */
	if (S->pipelined)
		fanout_prepare(S);
	run_deferred(S);
	if (S->n_stashed) {
		/* New subscribers get their snapshots now. */
		if (S->pipelined && engine_pending(S->e) == 0)
			fanout_prepare(S);
		apply_stash(S);
	}
	if (S->pipelined && !engine_commit_busy(S->e) &&
	    (S->n_pend > 0 || engine_pending(S->e) > 0)) {
		if (commit_waits(S))
			return;  /* the window's end asks for the turn */
		hand_off(S);
	}
	if (S->n_gathered)
		gather_end(S);  /* no window waits: nothing to gather for */
	if (!engine_commit_busy(S->e) && (S->dhead || S->n_pend > 0 || engine_pending(S->e) > 0))
		net_schedule_turn(S->n);
}

void turn_run(void *ctx)
{
	struct server *S = ctx;

	if (engine_commit_busy(S->e)) {
		bool done;
		int rc = engine_commit_poll(S->e, S->draining, &done);

		if (!done)
			return;  /* the writer wakes the loop when it has */
		commit_finished(S, rc);
	} else if (S->n_pend > 0 || engine_pending(S->e) > 0) {
		if (commit_waits(S))
			return;  /* nothing reads a scene before its batches commit */
		hand_off(S);
		if (engine_commit_busy(S->e))
			return;  /* its window comes when it returns */
	}
	window(S);
}

void turn_wake_from_writer(void *ctx)
{
	struct server *S = ctx;

	net_wake_from_thread(S->n);
}

bool turn_scene_quiet(struct server *S, const char *name)
{
	if (engine_scene_pending(S->e, name) > 0)
		return false;
	for (int i = 0; i < S->n_pend; i++)
		if (strcmp(S->pend[i].scene, name) == 0)
			return false;
	return true;
}
