/*
 * relay_http.h: the HTTP writes that are not edit batches (POST .../log,
 * .../gltf, .../svg) in a cluster (--redis): relayed to the owner of
 * their scene, waiting for an owner, or run here; and the requests other
 * processes relay to this one, run like its own and answered back through
 * Redis.
 */
#ifndef RIGD_CLUSTERED_RELAY_HTTP_H
#define RIGD_CLUSTERED_RELAY_HTTP_H

#include "cluster/cluster.h"
#include "codec/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct http_call;
struct server;

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

/* Every second: requests that waited too long; at shutdown, what waits
 * is freed; and the metrics of the HTTP relay. */
void relay_http_tick(struct server *S);
void relay_http_free(struct server *S);
int relay_http_metrics(struct server *S, proto_buf *b);

#endif
