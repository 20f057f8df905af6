/*
 * turn.h: the loop turn as the unit of group commit. Edits, undos and redos
 * are submitted to the engine as they arrive and answered when the turn
 * commits them together; work that reads or changes whole scenes is
 * deferred until after the commit.
 *
 * Never builds a frame from a scene while a batch awaits its commit.
 */
#ifndef RIGD_SERVE_TURN_H
#define RIGD_SERVE_TURN_H

#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"
#include "core/sha256.h"
#include "core/view.h"
#include "engine/engine.h"
#include "net/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct client;
struct reply;
struct server;

/* Bytes of the id of another process that relayed a batch, with its NUL. */
#define TURN_PEER_ID_MAX 48

/* A batch submitted this turn, answered when the turn commits. */
struct pending {
	char scene[SCENE_ID_MAX + 1];
	uint64_t conn;
	bool http;
	struct reply *reply;         /* ws: its placeholder (NULL once gone) */
	proto_req req;
	int64_t seq;
	long recomputed;
	/* A glTF import: its report (JSON, owned), answered with the ack, and
	 * the scene the import created, deleted again if the commit fails. */
	char *report;
	char created[SCENE_ID_MAX + 1];
	/* What the batch's ik ops did (owned; NULL when it had none),
	 * reported in its ack. */
	edit_ik_report *ik;
	int n_ik;
	/* A batch of the scene's log stream (clustered/replica.c): no answer. */
	bool replica;
	/* A batch another process relayed (clustered/relay.c): answered to it
	 * through the cluster's hook, request 'remote_rid' of process
	 * 'remote_to'. */
	bool remote;
	uint64_t remote_rid;
	char remote_to[TURN_PEER_ID_MAX];
	/* A submission taken while the previous turn's commit was out: kept
	 * as it came (owned), applied when that commit returns (turn.c). */
	struct stash *stash;
};

enum deferred_kind { D_SUBSCRIBE, D_UNSUBSCRIBE, D_HTTP, D_VIEW, D_CALL };

/* Work that reads or changes scenes outside a batch: done after the commit. */
struct deferred {
	struct deferred *next;
	int kind;
	/* What runs it, set by the module that deferred it (rooms_subscribe,
	 * interest_declare, http_run_deferred, or a D_CALL's own function). */
	void (*run)(struct server *S, struct deferred *d);
	uint64_t conn;
	struct reply *reply;
	proto_req req;
	char scene[SCENE_ID_MAX + 1];
	int format;                  /* D_SUBSCRIBE: enum proto_format */
	view view;                   /* D_VIEW: the view declared ... */
	bool view_clear;             /* ... or dropped */
	edit_id *always;             /* D_VIEW: its "always" ids (owned), sorted */
	int n_always;
	/* D_CALL: the caller's own record (freed with 'data_free'), and, in
	 * 'body', bytes it keeps with it */
	void *data;
	void (*data_free)(void *data);
	/* D_HTTP: the route and a copy of the request */
	int route;                   /* index into the route table */
	int method;
	char *path;
	char *args[NET_MAX_ARGS];
	int n_args;
	char *body;
	size_t body_len;
	bool authed;                 /* with tokens: 'tok' is the caller's token */
	unsigned char tok[SHA256_LEN];
};

/*
 * Submits an edit, undo or redo (PROTO_EDIT, PROTO_UNDO, PROTO_REDO) on
 * 'scene_name' for websocket client 'c' or, with 'c' NULL, for HTTP
 * request 'http_conn'. On success the answer waits for the turn (a
 * placeholder in the client's queue for ws) and 0 is returned; on error
 * nothing is pending, 'err' says why, and the caller answers at once.
 * 'batch', 'req' (may be NULL) and 'client' are borrowed.
 */
int turn_submit(struct server *S, int type, const char *scene_name, const edit_batch *batch,
		const char *client, struct client *c, uint64_t http_conn, const proto_req *req,
		edit_error *err);

/* turn_submit() with edit limits 'lim' for an edit (the server's own
 * batches, such as a glTF import, may hold more ops than a client's). */
int turn_submit_limits(struct server *S, int type, const char *scene_name,
		       const edit_batch *batch, const edit_limits *lim, const char *client,
		       struct client *c, uint64_t http_conn, const proto_req *req, edit_error *err);

/* turn_submit_limits() of an edit that stores assets a[0..n_assets) (each
 * checked by its kind's reader, borrowed) with the batch
 * (engine_assets_submit), or, with n_assets 0, just the batch. */
int turn_submit_asset(struct server *S, int type, const char *scene_name,
		      const edit_batch *batch, const edit_limits *lim, const engine_asset *a,
		      int n_assets, const char *client, struct client *c, uint64_t http_conn,
		      const proto_req *req, edit_error *err);

/*
 * Submits batch 'batch' of scene 'scene_name''s log stream (the cluster's
 * copy, clustered/replica.c): applied as its line says ('kind' an enum
 * proto_log_kind; an undo or redo of seq 'target' stays one here), with
 * the assets a[0..n_assets) it stores (checked: asset_check), never
 * relayed, and answered to nobody (the pending entry's 'replica'). Returns
 * as turn_submit.
 */
int turn_submit_logged(struct server *S, const char *scene_name, const edit_batch *batch,
		       int kind, int64_t target, const engine_asset *a, int n_assets,
		       edit_error *err);

/*
 * Answers pending batch 'p' of a turn that has committed, after the turn
 * (a copy the cluster's side kept until the scene's log stream held it): its
 * ack ('err' NULL) or 'err'. Frees its ik report. A client that has gone
 * is skipped.
 */
void turn_answer_later(struct server *S, struct pending *p, const edit_error *err);

/* Queues 'd' (owned from here) to run after the turn's commit. */
void turn_defer(struct server *S, struct deferred *d);

/* Frees a deferred item and its copies (NULL: nothing). */
void turn_deferred_free(struct deferred *d);

/* Forgets the placeholders of 'c' (it has gone or was dropped): its
 * batches are still committed, their answers go nowhere. */
void turn_forget_client(struct server *S, struct client *c);

/* net's turn callback ('ctx' the server): hands the turn's batches to a
 * commit, or, when the commit out has returned, answers it, records the
 * journal, wakes whoever waited, runs the deferred work and applies what
 * came meanwhile (handing it to the next commit). */
void turn_run(void *ctx);

/* The commit writer's notify callback ('ctx' the server): wakes the loop
 * from the writer's thread, for turn_run. */
void turn_wake_from_writer(void *ctx);

/* Whether scene 'name' has nothing awaiting a commit (applied, or kept
 * for the next one), so that what memory holds of it is what is stored. */
bool turn_scene_quiet(struct server *S, const char *name);

#endif
