/*
 * lifecycle.c: scenes created and deleted across a cluster (see
 * lifecycle.h). Every change reaches the engine after a commit, in a
 * D_SCENE deferred item, so that no batch of the scene awaits its commit
 * when it is created or deleted.
 */
#include "lifecycle.h"
#include "http.h"
#include "log.h"
#include "peers.h"
#include "replica.h"
#include "rooms.h"
#include "roster.h"
#include "turn.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Queues a D_SCENE item; false out of memory (logged). */
static struct deferred *defer_scene(struct server *S, uint64_t conn, const char *name, int dims,
				    int rc)
{
	struct deferred *d = calloc(1, sizeof(*d));

	if (!d) {
		serve_log(LOG_ERROR, "cluster: out of memory applying scene %s", name);
		return NULL;
	}
	d->kind = D_SCENE;
	d->conn = conn;
	d->dims = dims;
	d->scene_rc = rc;
	snprintf(d->scene, sizeof(d->scene), "%s", name);
	turn_defer(S, d);
	return d;
}

void lifecycle_create(struct server *S, uint64_t conn, const char *name, int dims)
{
	int rc = cluster_scene_create(S->cl, conn, name, dims);

	if (rc == RIGD_E_UNAVAILABLE)
		http_respond_code(S, conn, rc, "name", "redis is unreachable: scene '%s' cannot be "
				  "created in the cluster until it returns", name);
	else if (rc)
		http_respond_code(S, conn, rc, "", "%s", err_str(rc));
}

void lifecycle_delete(struct server *S, uint64_t conn, const char *name)
{
	int rc = cluster_scene_delete(S->cl, conn, name);

	if (rc == RIGD_E_UNAVAILABLE)
		http_respond_code(S, conn, rc, "scene", "redis is unreachable: scene '%s' cannot be "
				  "deleted in the cluster until it returns", name);
	else if (rc)
		http_respond_code(S, conn, rc, "", "%s", err_str(rc));
}

void lifecycle_event(void *ctx, const char *name, int dims, const char *from)
{
	struct server *S = ctx;

	serve_log(LOG_DEBUG, "cluster: scene %s %s by process %s", name,
		  dims ? "created" : "deleted", from);
	defer_scene(S, 0, name, dims, 0);
}

void lifecycle_done(void *ctx, uint64_t ref, const char *name, int rc, int dims, int there)
{
	struct server *S = ctx;
	struct deferred *d = defer_scene(S, ref, name, dims, rc);

	if (d)
		d->dims_there = there;
	else
		http_respond_code(S, ref, RIGD_E_NOMEM, "", "out of memory");
}

void lifecycle_state(void *ctx, int state)
{
	struct server *S = ctx;
	proto_scene_info *v = NULL;
	int n;

	if (state != CLUSTER_UP)
		return;
	n = engine_scenes(S->e, NULL, 0);
	if (n > 0 && !(v = calloc((size_t)n, sizeof(*v)))) {
		serve_log(LOG_ERROR, "cluster: out of memory recording the scenes in the catalog");
		return;
	}
	n = engine_scenes(S->e, v, n);
	for (int i = 0; i < n; i++)
		cluster_scene_known(S->cl, v[i].name, engine_scene_dims(S->e, v[i].name));
	free(v);
}

/* Makes scene 'name' ('dims') here unless it is; 0, or the engine's error. */
static int create_here(struct server *S, const char *name, int dims)
{
	int rc;

	if (engine_scene(S->e, name))
		return engine_scene_dims(S->e, name) == dims ? 0 : RIGD_E_SCENE_EXISTS;
	if ((rc = engine_scene_create_dims(S->e, name, dims)) == 0) {
		serve_log(LOG_INFO, "scene %s created (%dD)", name, dims);
		peers_interest(S, name);
	}
	return rc;
}

/* Deletes scene 'name' here if it is; its subscribers hear of it. */
static void delete_here(struct server *S, const char *name)
{
	cluster_forget(S->cl, name);
	replica_forget(S, name);
	if (!engine_scene(S->e, name))
		return;
	if (engine_scene_delete(S->e, name) != 0) {
		serve_log(LOG_WARN, "cluster: cannot delete scene %s here", name);
		return;
	}
	serve_log(LOG_INFO, "scene %s deleted", name);
	rooms_scene_gone(S, name);
	roster_scene_gone(S, name);
}

/* {"name","seq":0,"nodes":0} (and "dims":2), status 201. */
static void answer_created(struct server *S, uint64_t conn, const char *name, int dims)
{
	proto_buf b;
	int rc;

	proto_buf_init(&b, 0);
	rc = PROTO_BUF_LIT(&b, "{\"name\":") || proto_buf_json_string(&b, name) ||
	     PROTO_BUF_LIT(&b, ",\"seq\":0,\"nodes\":0") ||
	     (dims == 2 && PROTO_BUF_LIT(&b, ",\"dims\":2")) || PROTO_BUF_LIT(&b, "}");
	http_respond_built(S, conn, 201, &b, rc ? RIGD_E_NOMEM : 0);
}

/* Answers this process's own create of 'd->scene' once the cluster said. */
static void answer_create(struct server *S, const struct deferred *d)
{
	int rc = d->scene_rc, there = rc == RIGD_E_SCENE_EXISTS ? d->dims_there : d->dims;

	/* The cluster had the name: a twin create (same dims, nothing edited
	 * here yet) is the same scene; anything else is refused. */
	if (rc == RIGD_E_SCENE_EXISTS && there == d->dims && engine_seq(S->e, d->scene) <= 0)
		rc = 0;
	if (rc == 0 && create_here(S, d->scene, d->dims) != 0) {
		rc = RIGD_E_SCENE_EXISTS;
		there = engine_scene_dims(S->e, d->scene);
	}
	if (rc == 0)
		answer_created(S, d->conn, d->scene, d->dims);
	else if (rc == RIGD_E_SCENE_EXISTS)
		http_respond_code(S, d->conn, rc, "name", "there is already a scene '%s' in the "
				  "cluster (%dD)%s", d->scene, there,
				  there == d->dims ? ", with edits" : "");
	else
		http_respond_code(S, d->conn, RIGD_E_UNAVAILABLE, "name", "redis did not take the "
				  "creation of scene '%s' (refused, or the connection was lost "
				  "before it answered: it may exist now): retry", d->scene);
}

void lifecycle_apply(struct server *S, struct deferred *d)
{
	int rc;

	if (!S->cl)
		return;
	if (!d->conn && d->dims) {
		if ((rc = create_here(S, d->scene, d->dims)) != 0)
			serve_log(LOG_WARN, "cluster: scene %s (%dD) cannot be created here: %s",
				  d->scene, d->dims, rc == RIGD_E_SCENE_EXISTS ?
				  "this database has it with other dims" : err_str(rc));
	} else if (!d->conn) {
		delete_here(S, d->scene);
	} else if (d->dims) {
		answer_create(S, d);
	} else if (d->scene_rc) {
		http_respond_code(S, d->conn, RIGD_E_UNAVAILABLE, "scene", "redis did not take the "
				  "deletion of scene '%s' (refused, or the connection was lost "
				  "before it answered): retry", d->scene);
	} else {
		proto_buf b;

		delete_here(S, d->scene);
		proto_buf_init(&b, 0);
		rc = PROTO_BUF_LIT(&b, "{\"deleted\":") || proto_buf_json_string(&b, d->scene) ||
		     PROTO_BUF_LIT(&b, "}");
		http_respond_built(S, d->conn, 200, &b, rc ? RIGD_E_NOMEM : 0);
	}
}
