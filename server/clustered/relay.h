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
#ifndef RIGD_CLUSTERED_RELAY_H
#define RIGD_CLUSTERED_RELAY_H

#include "cluster/cluster.h"
#include "codec/proto.h"
#include "core/edit.h"

#include <stddef.h>
#include <stdint.h>

struct client;
struct pending;
struct server;

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

/* Appends the relay's metrics. 0 or RIGD_E_NOMEM. */
int relay_metrics(struct server *S, proto_buf *b);

#endif
