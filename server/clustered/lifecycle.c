/*
 * lifecycle.c: scenes created and deleted across a cluster (see
 * lifecycle.h). Every change reaches the engine after a commit, in a
 * deferred item (D_CALL, run by lifecycle_apply), so that no batch of the scene awaits its commit
 * when it is created or deleted. Each copy of a cluster's scene records
 * the incarnation it belongs to (engine_scene_gen), which is how a
 * process that was away tells a scene deleted meanwhile from one the
 * cluster never heard of.
 */
#include "lifecycle.h"
#include "peers.h"
#include "replica.h"
#include "roster.h"
#include "state.h"

#include "serve/http_respond.h"
#include "serve/log.h"
#include "serve/rooms.h"
#include "serve/server.h"
#include "serve/turn.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a deferred item of this file carries besides the scene's name, the
 * request (conn) and the catalog (body): a scene created (dims 2, 3) or
 * deleted (dims 0) in the cluster; with conn, the answer to this process's
 * own request ('rc' what the cluster said, 'there' the cluster's dims when
 * it has the name already). */
struct scene_event {
	int dims;
	int rc;
	int there;
	int64_t gen;                 /* the scene's incarnation in the cluster (0 unknown) */
};

static struct scene_event *ev_of(const struct deferred *d)
{
	return d->data;
}

static void lifecycle_apply(struct server *S, struct deferred *d);

/* Queues an item for after the commit; NULL out of memory (logged). */
static struct deferred *defer_scene(struct server *S, uint64_t conn, const char *name, int dims,
				    int rc)
{
	struct deferred *d = calloc(1, sizeof(*d));
	struct scene_event *ev = calloc(1, sizeof(*ev));

	if (!d || !ev) {
		serve_log(LOG_ERROR, "cluster: out of memory applying scene %s", name);
		free(d);
		free(ev);
		return NULL;
	}
	d->kind = D_CALL;
	d->run = lifecycle_apply;
	d->data = ev;
	d->data_free = free;
	d->conn = conn;
	ev->dims = dims;
	ev->rc = rc;
	snprintf(d->scene, sizeof(d->scene), "%s", name);
	turn_defer(S, d);
	return d;
}

void lifecycle_create(struct server *S, uint64_t conn, const char *name, int dims)
{
	int rc = cluster_scene_create(S->cx->cl, conn, name, dims);

	if (rc == RIGD_E_UNAVAILABLE)
		http_respond_code(S, conn, rc, "name", "redis is unreachable: scene '%s' cannot be "
				  "created in the cluster until it returns", name);
	else if (rc)
		http_respond_code(S, conn, rc, "", "%s", err_str(rc));
}

void lifecycle_delete(struct server *S, uint64_t conn, const char *name)
{
	int rc = cluster_scene_delete(S->cx->cl, conn, name);

	if (rc == RIGD_E_UNAVAILABLE)
		http_respond_code(S, conn, rc, "scene", "redis is unreachable: scene '%s' cannot be "
				  "deleted in the cluster until it returns", name);
	else if (rc)
		http_respond_code(S, conn, rc, "", "%s", err_str(rc));
}

void lifecycle_event(void *ctx, const char *name, int dims, const char *from, int64_t gen)
{
	struct server *S = ctx;
	struct deferred *d;

	serve_log(LOG_DEBUG, "cluster: scene %s %s by process %s", name,
		  dims ? "created" : "deleted", from);
	if ((d = defer_scene(S, 0, name, dims, 0)))
		ev_of(d)->gen = gen;
}

void lifecycle_done(void *ctx, uint64_t ref, const char *name, int rc, int dims, int there,
		    int64_t gen)
{
	struct server *S = ctx;
	struct deferred *d = defer_scene(S, ref, name, dims, rc);

	if (d) {
		ev_of(d)->there = there;
		ev_of(d)->gen = gen;
	} else {
		http_respond_code(S, ref, RIGD_E_NOMEM, "", "out of memory");
	}
}

void lifecycle_catalog(void *ctx, const cluster_catalog_entry *v, int n)
{
	struct server *S = ctx;
	struct deferred *d;
	proto_buf b;
	char line[SCENE_ID_MAX + 64], *body = NULL;
	size_t len;
	int rc = 0;

	proto_buf_init(&b, 0);
	for (int i = 0; !rc && i < n; i++) {
		int n_line = snprintf(line, sizeof(line), "%s %d %" PRId64 " %" PRId64 "\n",
				      v[i].scene, v[i].dims, v[i].gen, v[i].deleted_gen);

		rc = proto_buf_append(&b, line, (size_t)n_line);
	}
	rc = rc || PROTO_BUF_LIT(&b, "\n");  /* never empty: an empty catalog too is one */
	len = b.len;
	if (rc || !(body = proto_buf_take(&b)) || !(d = defer_scene(S, 0, "", 0, 0))) {
		serve_log(LOG_ERROR, "cluster: out of memory reading the catalog");
		free(body);
		proto_buf_release(&b);
		return;
	}
	d->body = body;
	d->body_len = len;
}

/* The incarnation of local scene 'name' (0 none, or unreadable: logged). */
static int64_t gen_here(struct server *S, const char *name)
{
	int64_t g = engine_scene_gen(S->e, name);

	if (g < 0 && g != RIGD_E_UNKNOWN_SCENE)
		serve_log(LOG_WARN, "cluster: scene %s: its incarnation cannot be read: %s", name,
			  err_str((int)g));
	return g > 0 ? g : 0;
}

/* Records incarnation 'gen' for local scene 'name' (logged on failure). */
static void note_gen(struct server *S, const char *name, int64_t gen)
{
	int rc;

	if (gen > 0 && (rc = engine_scene_set_gen(S->e, name, gen)) != 0)
		serve_log(LOG_WARN, "cluster: scene %s: incarnation %" PRId64 " cannot be recorded "
			  "here: %s", name, gen, err_str(rc));
}

/* Makes scene 'name' ('dims', incarnation 'gen', 0 unknown) here unless it
 * is; a copy without an incarnation takes this one. 0, or the engine's
 * error (RIGD_E_SCENE_EXISTS: it is here with other dims). */
static int create_here(struct server *S, const char *name, int dims, int64_t gen)
{
	int rc;

	if (engine_scene(S->e, name)) {
		if (engine_scene_dims(S->e, name) != dims)
			return RIGD_E_SCENE_EXISTS;
		if (gen && !gen_here(S, name))
			note_gen(S, name, gen);
		return 0;
	}
	if ((rc = engine_scene_create_dims(S->e, name, dims)) == 0) {
		serve_log(LOG_INFO, "scene %s created (%dD)", name, dims);
		note_gen(S, name, gen);
		peers_interest(S, name);
	}
	return rc;
}

/* Deletes scene 'name' here if it is; its subscribers hear of it. */
static void delete_here(struct server *S, const char *name)
{
	cluster_forget(S->cx->cl, name);
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

/* Scene 'name' as the cluster has it ('dims', incarnation 'gen', 0
 * unknown), from an event or the catalog: made here, or, when this copy
 * belongs to another incarnation of the name (deleted and created again
 * while this process was away), replaced (its subscribers told). */
static void take_cluster_scene(struct server *S, const char *name, int dims, int64_t gen)
{
	int64_t here = engine_scene(S->e, name) ? gen_here(S, name) : 0;
	int rc;

	if (gen && here && here != gen) {
		serve_log(LOG_INFO, "cluster: scene %s here is incarnation %" PRId64 " and the "
			  "cluster's is %" PRId64 " (deleted and created again meanwhile): replaced",
			  name, here, gen);
		delete_here(S, name);
	}
	if ((rc = create_here(S, name, dims, gen)) != 0)
		serve_log(LOG_WARN, "cluster: scene %s (%dD) cannot be created here: %s", name, dims,
			  rc == RIGD_E_SCENE_EXISTS ? "this database has it with other dims" :
			  err_str(rc));
}

/* One line of a catalog item: "NAME DIMS GEN DELETED_GEN". */
struct entry {
	char scene[SCENE_ID_MAX + 1];
	int dims;
	int64_t gen, deleted_gen;
};

/* The entries of catalog item 'd' (sorted by name, as the cluster gave
 * them) into a new array *out; their number, or -1 out of memory. */
static int catalog_entries(const struct deferred *d, struct entry **out)
{
	int n = 0, lines = 0;
	struct entry *v;
	const char *p = d->body, *end = d->body + d->body_len;

	for (const char *q = p; q < end; q++)
		lines += *q == '\n';
	if (!(v = calloc((size_t)lines + 1, sizeof(*v))))
		return -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		long long g = 0, t = 0;

		if (sscanf(p, "%64s %d %lld %lld", v[n].scene, &v[n].dims, &g, &t) == 4) {
			v[n].gen = g;
			v[n++].deleted_gen = t;
		}
		p = nl ? nl + 1 : end;
	}
	*out = v;
	return n;
}

static int entry_cmp(const void *key, const void *e)
{
	return strcmp(key, ((const struct entry *)e)->scene);
}

/*
 * Reconciles this database with the catalog the reader found on connecting
 * (d->body): every scene of the catalog is made here (or replaced, when this
 * copy is of an earlier incarnation) and filled from its log stream, or from
 * the other processes when the stream no longer keeps its start; a scene
 * here whose incarnation the cluster deleted meanwhile is deleted (its
 * subscribers told); a scene the cluster never heard of is recorded in the
 * catalog, as before incarnations.
 */
static void reconcile(struct server *S, const struct deferred *d)
{
	struct entry *v = NULL, *e;
	char (*names)[SCENE_ID_MAX + 1] = NULL;
	engine_scene_info *local = NULL;
	int n = catalog_entries(d, &v), n_local = engine_scenes(S->e, NULL, 0);

	if (n < 0 || !(local = calloc((size_t)n_local + 1, sizeof(*local))) ||
	    !(names = calloc((size_t)n_local + 1, sizeof(*names)))) {
		serve_log(LOG_ERROR, "cluster: out of memory reconciling with the catalog");
		goto out;
	}
	n_local = engine_scenes(S->e, local, n_local);
	for (int i = 0; i < n_local; i++)
		snprintf(names[i], sizeof(names[i]), "%s", local[i].name);
	for (int i = 0; i < n; i++)
		if (v[i].dims)
			take_cluster_scene(S, v[i].scene, v[i].dims, v[i].gen);
	for (int i = 0; i < n_local; i++) {
		int64_t here = gen_here(S, names[i]);

		e = bsearch(names[i], v, (size_t)n, sizeof(*v), entry_cmp);
		if (e && e->dims)
			continue;  /* taken above */
		if (here && e && e->deleted_gen >= here) {
			serve_log(LOG_INFO, "cluster: scene %s (incarnation %" PRId64 ") was deleted in "
				  "the cluster while this process was away: deleted here", names[i],
				  here);
			delete_here(S, names[i]);
		} else if (cluster_scene_known(S->cx->cl, names[i], engine_scene_dims(S->e, names[i]),
					       here) != 0) {
			serve_log(LOG_WARN, "cluster: scene %s cannot be recorded in the catalog now",
				  names[i]);
		}
	}
	S->cx->catalog_synced = true;
	serve_log(LOG_INFO, "cluster: reconciled with the catalog (%d names, %d scenes here)", n,
		  n_local);
out:
	free(v);
	free(local);
	free(names);
}

/* {"name","seq":0,"nodes":0} (and "dims":2), status 201. */
/* Answers this process's own create of 'd->scene' once the cluster said. */
static void answer_create(struct server *S, const struct deferred *d)
{
	int rc = ev_of(d)->rc, there = rc == RIGD_E_SCENE_EXISTS ? ev_of(d)->there : ev_of(d)->dims;

	/* The cluster had the name: a twin create (same dims, nothing edited
	 * here yet) is the same scene; anything else is refused. */
	if (rc == RIGD_E_SCENE_EXISTS && there == ev_of(d)->dims && engine_seq(S->e, d->scene) <= 0)
		rc = 0;
	if (rc == 0 && create_here(S, d->scene, ev_of(d)->dims, ev_of(d)->gen) != 0) {
		rc = RIGD_E_SCENE_EXISTS;
		there = engine_scene_dims(S->e, d->scene);
	}
	if (rc == 0)
		http_respond_created(S, d->conn, d->scene, ev_of(d)->dims);
	else if (rc == RIGD_E_SCENE_EXISTS)
		http_respond_code(S, d->conn, rc, "name", "there is already a scene '%s' in the "
				  "cluster (%dD)%s", d->scene, there,
				  there == ev_of(d)->dims ? ", with edits" : "");
	else
		http_respond_code(S, d->conn, RIGD_E_UNAVAILABLE, "name", "redis did not take the "
				  "creation of scene '%s' (refused, or the connection was lost "
				  "before it answered: it may exist now): retry", d->scene);
}

/* A deferred item of this file, after the commit: applies it, and
 * answers its HTTP request when it has one. */
static void lifecycle_apply(struct server *S, struct deferred *d)
{
	if (!S->cx->cl)
		return;
	if (d->body) {
		reconcile(S, d);
	} else if (!d->conn && ev_of(d)->dims) {
		take_cluster_scene(S, d->scene, ev_of(d)->dims, ev_of(d)->gen);
	} else if (!d->conn) {
		delete_here(S, d->scene);
	} else if (ev_of(d)->dims) {
		answer_create(S, d);
	} else if (ev_of(d)->rc) {
		http_respond_code(S, d->conn, RIGD_E_UNAVAILABLE, "scene", "redis did not take the "
				  "deletion of scene '%s' (refused, or the connection was lost "
				  "before it answered): retry", d->scene);
	} else {
		delete_here(S, d->scene);
		http_respond_deleted(S, d->conn, d->scene);
	}
}
