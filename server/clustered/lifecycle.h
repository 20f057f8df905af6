/*
 * lifecycle.h: scenes created and deleted across a cluster (--redis).
 * POST /api/scenes and DELETE /api/scenes/{name} go through Redis's scene
 * catalog (cluster.h, cluster_scene_create), and every process applies the
 * cluster's stream of scene events to its own database, after the turn's
 * commit (a deferred item), telling the subscribers of a deleted
 * scene as a lone rigd does.
 *
 * Without --redis nothing here runs: the routes create and delete locally.
 */
#ifndef RIGD_CLUSTERED_LIFECYCLE_H
#define RIGD_CLUSTERED_LIFECYCLE_H

#include "cluster/cluster.h"

#include <stdint.h>

struct server;

/*
 * POST /api/scenes in a cluster: scene 'name' ('dims'), checked already
 * by the route (name, dims, --max-scenes), for HTTP request 'conn'. Asks
 * the catalog; the answer (201, 409 scene_exists, 503 unavailable) comes
 * once Redis has said. A name the cluster already has with the same dims
 * and no edit here answers 201: two processes creating one name at once
 * make one scene. Answers 503 at once when Redis is not connected.
 */
void lifecycle_create(struct server *S, uint64_t conn, const char *name, int dims);

/* DELETE /api/scenes/{name} in a cluster, of a scene this process has:
 * deleted everywhere once Redis has taken it (200), else 503. */
void lifecycle_delete(struct server *S, uint64_t conn, const char *name);

/* The cluster's callbacks (ctx the server): an event of the stream of
 * scene events (with the scene's incarnation); the answer to this
 * process's own request; the catalog the reader found on connecting, with
 * which the database is reconciled after the turn's commit: scenes made,
 * replaced or deleted here, and the scenes the cluster never heard of
 * recorded in it (docs/deploy.md, "A process that was away"). */
void lifecycle_event(void *ctx, const char *name, int dims, const char *from, int64_t gen);
void lifecycle_done(void *ctx, uint64_t ref, const char *name, int rc, int dims, int there,
		    int64_t gen);
void lifecycle_catalog(void *ctx, const cluster_catalog_entry *v, int n);

#endif
