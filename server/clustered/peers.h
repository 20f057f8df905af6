/*
 * peers.h: this rigd among the other processes of a cluster (--redis):
 * the lease check every edit passes, where an edit goes, GET /api/cluster
 * and the cluster's lines of /metrics. Never talks to Redis itself: that
 * is cluster/.
 */
#ifndef RIGD_CLUSTERED_PEERS_H
#define RIGD_CLUSTERED_PEERS_H

#include "codec/proto.h"
#include "core/edit.h"

#include <stdbool.h>
#include <stdint.h>

struct client;
struct http_call;
struct server;

/*
 * Whether this process may apply an edit, undo, redo or import of scene
 * 'name' now. 0 when it runs alone, holds the scene's lease, or the scene
 * does not exist here (the engine answers that); otherwise
 * RIGD_E_UNAVAILABLE with 'err' (may be NULL) saying why (Redis
 * unreachable; another process owns the scene, naming it and its URL; the
 * lease is being taken) and the lease asked for, so a retry may succeed.
 */
int peers_check_edit(struct server *S, const char *name, edit_error *err);

/*
 * Where an edit, undo or redo ('type') of scene 'name' goes: 0, applied
 * here (alone, the owner, or an unknown scene); 1, relayed to the owner
 * (for websocket client 'c' or HTTP request 'http_conn'; its answer comes
 * later: relay.h); or the error of peers_check_edit with 'err' set. Only a
 * client's edit, undo or redo ('plain': the client's limits) is relayed
 * here, never a remote submission (c NULL and http_conn 0) or the batch of
 * an import (relay_http_write relays the import's request before).
 */
int peers_route_edit(struct server *S, int type, const char *name, const edit_batch *batch,
		     bool plain, struct client *c, uint64_t http_conn, const proto_req *req,
		     edit_error *err);

/* A client shows interest in scene 'name' (a subscribe): this process asks
 * for its lease, first to ask being its owner. No-op when alone. */
void peers_interest(struct server *S, const char *name);

/* GET /api/cluster: this process, its Redis, the leases it knows and the
 * live processes (docs/protocol.md); 404 not_found when rigd runs alone. */
void peers_route(struct server *S, const struct http_call *call);

/* Appends the cluster's metrics (none when alone). 0 or RIGD_E_NOMEM. */
int peers_metrics(struct server *S, proto_buf *b);

#endif
