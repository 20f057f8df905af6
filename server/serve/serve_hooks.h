/*
 * serve_hooks.h: where the single-process server hands over to the
 * cluster's side (clustered/, --redis). serve_main fills S->hooks with the
 * table the program gave it when --redis is given; without --redis, or in
 * a rigd built without the cluster (RIGD_CLUSTER=OFF), S->hooks is NULL,
 * every call site below does what a lone rigd does, and no code of the
 * cluster runs.
 *
 * Each entry is called at one place, named beside it. serve never calls
 * clustered/ any other way, and clustered/ calls back into serve through
 * serve's own headers (turn_submit, http_respond_*, rooms_*).
 */
#ifndef RIGD_SERVE_HOOKS_H
#define RIGD_SERVE_HOOKS_H

#include "codec/proto.h"
#include "core/edit.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct client;
struct config;
struct http_call;
struct pending;
struct presence;
struct room;
struct server;

struct serve_hooks {
	/* --- the process (serve_main.c) --- */

	/* After the flags are read: checks the cluster's own (the Redis
	 * URL), printing what is wrong on 'err'. 0, or 2 (a usage error). */
	int (*check_config)(const struct config *o, FILE *err);
	/* Joins the cluster on net's loop, S->n open: 0, or 1 after saying on
	 * stderr what was wrong. Makes S->cx. */
	int (*start)(struct server *S);
	/* Leaves it and frees S->cx (before net_free). */
	void (*stop)(struct server *S);
	/* Every second, net's tick ('ctx' the server). */
	void (*tick)(void *ctx);

	/* --- an edit (turn.c, routes.c) --- */

	/* Where a client's edit, undo or redo ('type') of scene 'name' goes:
	 * 0, applied here; 1, relayed to the scene's owner (answered later);
	 * < 0, refused with 'err' set. 'plain': under the client's limits. */
	int (*route_edit)(struct server *S, int type, const char *name, const edit_batch *batch,
			  bool plain, struct client *c, uint64_t http_conn, const proto_req *req,
			  edit_error *err);
	/* Whether this process may write scene 'name' now (a log import): 0,
	 * or RIGD_E_UNAVAILABLE with 'err' saying why. */
	int (*check_edit)(struct server *S, const char *name, edit_error *err);
	/* Committed batch 'p' of a scene this process owns: true when its
	 * answer is kept until the scene's log stream holds it. */
	bool (*hold_ack)(struct server *S, struct pending *p);
	/* Answers batch 'p' that another process relayed ('p->remote'). */
	void (*answer_remote)(struct server *S, const struct pending *p, const edit_error *err);

	/* --- the end of the turn (turn.c, routes.c) --- */

	/* Scene 'name' committed from seq 'from' (excluded) to 'to'. */
	void (*publish_turn)(struct server *S, const char *name, int64_t from, int64_t to);
	/* The turn's commit returned 'commit_rc'. */
	void (*end_turn)(struct server *S, int commit_rc);

	/* --- HTTP (http.c, routes.c, routes_svg.c) --- */

	/* Takes the answer to request 'conn' when another process relayed
	 * it (true: 'body' taken), else false. */
	bool (*http_answer)(struct server *S, uint64_t conn, int status, char *body, size_t len);
	/* A write to a scene ('call'): true when relayed to its owner, or
	 * held until there is one (answered later). */
	bool (*relay_write)(struct server *S, const struct http_call *call);
	/* An import that would create its scene ('dims'): true when the scene
	 * is made through the cluster first (the request runs again then). */
	bool (*relay_create)(struct server *S, const struct http_call *call, int dims);
	/* POST /api/scenes and DELETE /api/scenes/{name} of request 'conn':
	 * true when the cluster took the request (answered once Redis has
	 * said, or at once with an error), false to do it here. */
	bool (*scene_create)(struct server *S, uint64_t conn, const char *name, int dims);
	bool (*scene_delete)(struct server *S, uint64_t conn, const char *name);
	/* GET /api/cluster. */
	void (*route_cluster)(struct server *S, const struct http_call *call);
	/* Appends the cluster's metrics. 0 or RIGD_E_NOMEM. */
	int (*metrics)(struct server *S, proto_buf *b);

	/* --- rooms (rooms.c, routes.c) --- */

	/* A client subscribed to scene 'name', or a scene was made here. */
	void (*interest)(struct server *S, const char *name);
	/* Local participant 'c' of 'st' sent presence 'pr'; left 'scene';
	 * was sent a snapshot of 'st' (it hears the other processes' own). */
	void (*presence)(struct server *S, struct client *c, struct room *st,
			 const struct presence *pr);
	void (*leave)(struct server *S, struct client *c, const char *scene);
	void (*send_peers)(struct server *S, struct client *c, struct room *st);
};

#endif
