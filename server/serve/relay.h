/*
 * relay.h: edits, undos, redos and the other HTTP writes relayed to the
 * owner of their scene through Redis, and answered back (--redis;
 * docs/protocol.md, "Several processes on one Redis").
 *
 * A process that receives an edit of a scene another process owns forwards
 * the batch (its JSON, with the client and client_seq it carries) to that
 * owner and keeps the client's answer waiting: a placeholder in its reply
 * queue, or the HTTP request. The owner decodes, applies and commits it in
 * its own turn and answers through Redis; the answer fills the placeholder.
 * A batch with a client_seq is forwarded again, to whoever owns the scene
 * then, when no answer comes (the engine of the owner applies a pair once);
 * one without is answered `unavailable` instead, since it cannot be resent
 * safely. An undo or redo goes the same way, as a call naming its client
 * (and client_seq). The HTTP writes that are not edit batches (log, glTF
 * and SVG imports: relay_http.c) are relayed as the request itself (its
 * route, query arguments and body); the owner runs the route's own handler
 * on it and its answer, status and body, is sent back as it is. Never
 * talks to Redis itself: that is cluster/.
 */
#ifndef RIGD_SERVE_RELAY_H
#define RIGD_SERVE_RELAY_H

#include "server.h"

/*
 * Forwards edit 'batch' of scene 'name' (type PROTO_EDIT), or an undo or
 * redo (PROTO_UNDO, PROTO_REDO) of the client and client_seq of 'batch',
 * to process 'owner' for websocket client 'c' (its answer to 'req' waits in
 * a placeholder) or, with 'c' NULL, for HTTP request 'http_conn'. 0 once
 * forwarded (the answer comes later), or an error with 'err' set and
 * nothing pending. 'batch' and 'req' are borrowed.
 */
int relay_forward(struct server *S, const char *owner, const char *name, int type,
		  const edit_batch *batch, struct client *c, uint64_t http_conn,
		  const proto_req *req, edit_error *err);

/* cluster callback ('ctx' the server): another process relays call 'k':
 * an undo or redo, submitted to this turn like relay_request, or an HTTP
 * write (relay_http_call). */
void relay_call(void *ctx, const cluster_call_info *k);

/* ---- HTTP writes (relay_http.c) ---- */

/*
 * At the start of the handler of an HTTP write that is not an edit batch
 * (POST .../log, .../gltf, .../svg): false when the handler is to run
 * here (alone, this process owns the scene, Redis is unreachable, the
 * scene is not here: the handler answers; or the request was relayed to
 * this process); true when the request was taken: relayed to the scene's
 * owner, waiting for the scene's lease to be taken, or answered. A request
 * whose scene this process just created through the catalog
 * (relay_http_create) finds the scene made here first.
 */
bool relay_http_write(struct server *S, const struct http_call *call);

/*
 * Where the handler of an import would create scene 'call->name' ('dims'
 * 2 or 3): in a cluster, and for a request a client made here, the scene is
 * created through the cluster's catalog (cluster_scene_create), and the
 * request runs again once Redis took it (or answered that the cluster has
 * the name: it then goes to that scene), and true is returned: the handler
 * stops without answering. False when the handler creates the scene itself
 * (alone, or a request relayed to this process).
 */
bool relay_http_create(struct server *S, const struct http_call *call, int dims);

/* Whether HTTP connection id 'conn' is a request another process relayed
 * to this one (its answer goes back through Redis). */
bool relay_http_remote(const struct server *S, uint64_t conn);

/* The answer to relayed request 'conn' (relay_http_remote): 'status' and
 * 'body' ('len' bytes, owned from here, may be NULL) go back to the
 * process that relayed it. */
void relay_http_respond(struct server *S, uint64_t conn, int status, char *body, size_t len);

/* cluster callbacks ('ctx' the server): an HTTP write relayed to this
 * process (deferred like a request of its own, with a connection id of its
 * own that relay_http_remote knows); the answer to one this process
 * relayed, sent to its client as it came. */
void relay_http_call(struct server *S, const cluster_call_info *k);
void relay_http_reply(void *ctx, uint64_t rid, int status, const char *body, size_t len);

/* What Redis said of catalog reference 'ref' (cluster callback
 * scene_done's arguments; 'gen' the incarnation the catalog gave, recorded
 * with the scene when it is made here): true when 'ref' is one of relay_http_create's
 * (its request then runs again, or is answered), false when it is not. */
bool relay_http_scene_done(struct server *S, uint64_t ref, const char *name, int rc, int dims,
			   int there, int64_t gen);

/* This process took the lease of scene 'name': requests waiting for it run. */
void relay_http_lease(struct server *S, const char *name);

/* cluster callback ('ctx' the server): process 'from' forwards request
 * 'rid', the batch 'body' of scene 'name'. Submitted to this turn (answered
 * after its commit by relay_answer_pending) or answered at once with the
 * error that refused it. */
void relay_request(void *ctx, const char *from, uint64_t rid, const char *name,
		   const char *body, size_t len);

/* cluster callback: the owner's answer to one of this process's requests,
 * relayed to its client; an answer to nothing waiting is ignored. */
void relay_answer(void *ctx, const cluster_answer_info *a);

/* Answers the forwarded batch of pending entry 'p' after the turn's commit:
 * its ack, or 'err' (NULL: committed). */
void relay_answer_pending(struct server *S, const struct pending *p, const edit_error *err);

/* Every second: forwards that waited too long are sent again (to the
 * scene's owner then, or submitted here if this process owns it now) or
 * answered `unavailable`. */
void relay_tick(struct server *S);

/* Answers nothing more and frees what waits (shutdown). Accepts none. */
void relay_free(struct server *S);

/* relay_tick and relay_free of the HTTP writes. */
void relay_http_tick(struct server *S);
void relay_http_free(struct server *S);
int relay_http_metrics(struct server *S, proto_buf *b);

/* Appends the relay's metrics. 0 or RIGD_E_NOMEM. */
int relay_metrics(struct server *S, proto_buf *b);

#endif
