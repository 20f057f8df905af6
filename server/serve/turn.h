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

#include "server.h"

#include "codec/svg.h"

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

/* turn_submit_limits() of an edit that stores SVG asset 'asset' (sanitised,
 * borrowed) under 'asset_file' with the batch (engine_asset_submit), or, with
 * 'asset' NULL, just the batch. */
int turn_submit_asset(struct server *S, int type, const char *scene_name,
		      const edit_batch *batch, const edit_limits *lim, const char *asset_file,
		      const svg_clean *asset, const char *client, struct client *c,
		      uint64_t http_conn, const proto_req *req, edit_error *err);

/*
 * Answers pending batch 'p' of a turn that has committed, after the turn
 * (a copy kept by replica.c until the scene's log stream holds it): its
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

/* net's turn callback ('ctx' the server): commits, answers, records the
 * journal, wakes whoever waited, then runs the deferred work. */
void turn_run(void *ctx);

#endif
