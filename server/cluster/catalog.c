/*
 * catalog.c: scenes created and deleted across the cluster (see cluster.h).
 * The catalog rigd:scenes is a hash of every scene's name to its dims; the
 * stream rigd:scene-events holds the creations and deletions in the order
 * Redis took them, and every process reads it (forward.c's reader) and
 * applies each event to its own database. A name is created by one script
 * that adds it to the catalog only when it is absent there and appends the
 * event in the same step, so of two processes creating one name at once
 * exactly one succeeds and the other learns the dims it was given.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVENTS_KEY "rigd:scene-events"
#define CATALOG_KEY "rigd:scenes"
#define EVENTS_MAXLEN "10000"

/*
 * CREATE: KEYS catalog, events; ARGV name, dims, from, maxlen. 1 when the
 * name was absent (now recorded, the event appended); else an error
 * "EXISTS DIMS" with the dims the catalog holds.
 */
static const char create_lua[] =
	"if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then\n"
	"  return redis.error_reply('EXISTS ' .. tostring(redis.call('HGET', KEYS[1], ARGV[1])))\n"
	"end\n"
	"redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'op', 'create', 'scene', ARGV[1],\n"
	"           'dims', ARGV[2], 'from', ARGV[3])\n"
	"return 1\n";

/*
 * DELETE: KEYS catalog, events, log, lease; ARGV name, from, maxlen. Forgets
 * the name, its log stream and its lease, and appends the event. 1.
 */
static const char delete_lua[] =
	"redis.call('HDEL', KEYS[1], ARGV[1])\n"
	"redis.call('DEL', KEYS[3], KEYS[4])\n"
	"redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'op', 'delete', 'scene', ARGV[1],\n"
	"           'dims', '0', 'from', ARGV[2])\n"
	"return 1\n";

int cluster_scene_create(cluster *c, uint64_t ref, const char *name, int dims)
{
	char d[4];
	const char *argv[] = {"EVAL", create_lua, "2", CATALOG_KEY, EVENTS_KEY, name, d, c->id,
			      EVENTS_MAXLEN};

	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(d, sizeof(d), "%d", dims == 2 ? 2 : 3);
	return cl_send_scene(c, ref, name, dims == 2 ? 2 : 3, 9, argv);
}

int cluster_scene_delete(cluster *c, uint64_t ref, const char *name)
{
	char log[CLUSTER_SCENE_MAX + 16], lease[CLUSTER_SCENE_MAX + 16];
	const char *argv[] = {"EVAL", delete_lua, "4", CATALOG_KEY, EVENTS_KEY, log, lease, name,
			      c->id, EVENTS_MAXLEN};

	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(log, sizeof(log), "rigd:log:%s", name);
	snprintf(lease, sizeof(lease), "rigd:lease:%s", name);
	return cl_send_scene(c, ref, name, 0, 10, argv);
}

int cluster_scene_known(cluster *c, const char *name, int dims)
{
	char d[4];
	const char *argv[] = {"HSETNX", CATALOG_KEY, name, d};

	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(d, sizeof(d), "%d", dims == 2 ? 2 : 3);
	return cl_send(c, 4, argv, NULL);
}

void cluster_forget(cluster *c, const char *name)
{
	cl_lease_drop(c, name);
	for (int i = 0; i < c->n_follows; i++)
		if (strcmp(c->follows[i].scene, name) == 0) {
			c->follows[i] = c->follows[--c->n_follows];
			break;
		}
}

void cl_scene_reply(struct cluster *c, uint64_t ref, const char *scene, int dims,
		    const void *reply)
{
	const redisReply *r = reply;
	int rc = 0, there = 0;

	if (!r) {
		rc = RIGD_E_UNAVAILABLE;
	} else if (r->type == REDIS_REPLY_ERROR && r->len == 8 && strncmp(r->str, "EXISTS ", 7) == 0 &&
		   (r->str[7] == '2' || r->str[7] == '3')) {
		rc = RIGD_E_SCENE_EXISTS;
		there = r->str[7] - '0';
	} else if (r->type != REDIS_REPLY_INTEGER || r->integer != 1) {
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: scene %s: the catalog answered %s%.*s: refused", scene,
		       r->type == REDIS_REPLY_ERROR ? "" : "a reply of an unexpected shape",
		       r->type == REDIS_REPLY_ERROR ? (int)(r->len > 200 ? 200 : r->len) : 0,
		       r->type == REDIS_REPLY_ERROR ? r->str : "");
		rc = RIGD_E_UNAVAILABLE;
	}
	if (c->cb.scene_done)
		c->cb.scene_done(c->cb.ctx, ref, scene, rc, dims, there);
}

bool cl_take_scene_event(struct cluster *c, const void *fields)
{
	const redisReply *f = fields;
	const redisReply *op, *scene, *dims, *from;
	int d;

	if (f->type != REDIS_REPLY_ARRAY || f->elements != 8 || !(op = cl_entry_field(f, "op")) ||
	    !(scene = cl_entry_field(f, "scene")) || !(dims = cl_entry_field(f, "dims")) ||
	    !(from = cl_entry_field(f, "from")))
		return false;
	if (!cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) || !cl_id_valid(from->str, CLUSTER_ID_MAX) ||
	    dims->len != 1)
		return false;
	d = dims->str[0] - '0';
	if (strcmp(op->str, "create") == 0 && (d == 2 || d == 3)) {
		/* applied below */
	} else if (strcmp(op->str, "delete") == 0 && d == 0) {
		/* applied below */
	} else {
		return false;
	}
	if (c->cb.scene_event)
		c->cb.scene_event(c->cb.ctx, scene->str, d, from->str);
	return true;
}
