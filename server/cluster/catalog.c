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
#define GEN_KEY "rigd:scene-gen"
#define TOMBS_KEY "rigd:scene-tombs"
#define EVENTS_MAXLEN "10000"

/*
 * CREATE: KEYS catalog, events, gen; ARGV name, dims, from, maxlen. The
 * name's incarnation (>= 1, from the counter) when it was absent (now
 * recorded as "DIMS GEN", the event appended with its gen); else an error
 * "EXISTS VALUE" with what the catalog holds ("DIMS GEN", or "DIMS" as
 * recorded before incarnations).
 */
static const char create_lua[] =
	"local v = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"if v then return redis.error_reply('EXISTS ' .. tostring(v)) end\n"
	"local g = redis.call('INCR', KEYS[3])\n"
	"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. g)\n"
	"redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'op', 'create', 'scene', ARGV[1],\n"
	"           'dims', ARGV[2], 'from', ARGV[3], 'gen', tostring(g))\n"
	"return g\n";

/*
 * RECORD: KEYS catalog, events, gen, tombs; ARGV name, dims, from, maxlen,
 * gen (0: a new one). A scene of this process's database that the catalog
 * does not have: recorded under the incarnation its copy has (the counter
 * raised to it), or a new one, and announced as a create. 0 when the name
 * is there already, -1 when that incarnation was deleted meanwhile (the
 * delete event follows), else the gen.
 */
static const char record_lua[] =
	"if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end\n"
	"local g = tonumber(ARGV[5])\n"
	"if g > 0 and (tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0') or 0) >= g then\n"
	"  return -1\n"
	"end\n"
	"if g == 0 then\n"
	"  g = redis.call('INCR', KEYS[3])\n"
	"elseif (tonumber(redis.call('GET', KEYS[3]) or '0') or 0) < g then\n"
	"  redis.call('SET', KEYS[3], tostring(g))\n"
	"end\n"
	"redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. g)\n"
	"redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'op', 'create', 'scene', ARGV[1],\n"
	"           'dims', ARGV[2], 'from', ARGV[3], 'gen', tostring(g))\n"
	"return g\n";

/*
 * DELETE: KEYS catalog, events, log, lease, tombs; ARGV name, from, maxlen.
 * Forgets the name, its log stream and its lease, keeps the incarnation it
 * had as the name's tombstone (so that a process that was down learns it
 * was deleted), and appends the event. 1.
 */
static const char delete_lua[] =
	"local v = redis.call('HGET', KEYS[1], ARGV[1])\n"
	"local g = v and string.match(v, '^[23] (%d+)$')\n"
	"if g then redis.call('HSET', KEYS[5], ARGV[1], g) end\n"
	"redis.call('HDEL', KEYS[1], ARGV[1])\n"
	"redis.call('DEL', KEYS[3], KEYS[4])\n"
	"redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'op', 'delete', 'scene', ARGV[1],\n"
	"           'dims', '0', 'from', ARGV[2])\n"
	"return 1\n";

/*
 * SNAPSHOT: KEYS catalog, tombs, events. What the reader needs when it
 * connects, taken at one instant: Redis's clock, the id of the last scene
 * event ("" when the stream holds none), the catalog and the tombstones:
 * {sec, usec, id, {name, value, ...}, {name, gen, ...}}.
 */
const char cl_snapshot_lua[] =
	"local t = redis.call('TIME')\n"
	"local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)\n"
	"local id = ''\n"
	"if #last == 1 then id = last[1][1] end\n"
	"return {t[1], t[2], id, redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}\n";

const char *const cl_snapshot_keys[3] = {CATALOG_KEY, TOMBS_KEY, EVENTS_KEY};

int cluster_scene_create(cluster *c, uint64_t ref, const char *name, int dims)
{
	char d[4];
	const char *argv[] = {"EVAL", create_lua, "3", CATALOG_KEY, EVENTS_KEY, GEN_KEY, name, d,
			      c->id, EVENTS_MAXLEN};

	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(d, sizeof(d), "%d", dims == 2 ? 2 : 3);
	return cl_send_scene(c, ref, name, dims == 2 ? 2 : 3, 10, argv);
}

int cluster_scene_delete(cluster *c, uint64_t ref, const char *name)
{
	char log[CLUSTER_SCENE_MAX + 16], lease[CLUSTER_SCENE_MAX + 16];
	const char *argv[] = {"EVAL", delete_lua, "5", CATALOG_KEY, EVENTS_KEY, log, lease,
			      TOMBS_KEY, name, c->id, EVENTS_MAXLEN};

	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(log, sizeof(log), "rigd:log:%s", name);
	snprintf(lease, sizeof(lease), "rigd:lease:%s", name);
	return cl_send_scene(c, ref, name, 0, 11, argv);
}

int cluster_scene_known(cluster *c, const char *name, int dims, int64_t gen)
{
	char d[4], g[24];
	const char *argv[] = {"EVAL", record_lua, "4", CATALOG_KEY, EVENTS_KEY, GEN_KEY, TOMBS_KEY,
			      name, d, c->id, EVENTS_MAXLEN, g};

	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(d, sizeof(d), "%d", dims == 2 ? 2 : 3);
	snprintf(g, sizeof(g), "%" PRId64, gen > 0 ? gen : 0);
	return cl_send(c, 12, argv, NULL);
}

/*
 * Reads a catalog value "DIMS GEN" (dims 2 or 3, a gen of cl_parse_token),
 * or "DIMS" as recorded before incarnations (gen 0). false for anything
 * else.
 */
bool cl_parse_catalog_value(const char *v, size_t len, int *dims, int64_t *gen)
{
	int64_t g = 0;

	if (len < 1 || (v[0] != '2' && v[0] != '3'))
		return false;
	if (len > 1 && (v[1] != ' ' || !cl_parse_token(v + 2, len - 2, &g)))
		return false;
	*dims = v[0] - '0';
	*gen = g;
	return true;
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
	int64_t gen = 0;

	if (!r) {
		rc = RIGD_E_UNAVAILABLE;
	} else if (r->type == REDIS_REPLY_ERROR && r->len > 7 && strncmp(r->str, "EXISTS ", 7) == 0 &&
		   cl_parse_catalog_value(r->str + 7, r->len - 7, &there, &gen)) {
		rc = RIGD_E_SCENE_EXISTS;
	} else if (r->type != REDIS_REPLY_INTEGER || r->integer < 1 ||
		   (dims == 0 && r->integer != 1)) {
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: scene %s: the catalog answered %s%.*s: refused", scene,
		       r->type == REDIS_REPLY_ERROR ? "" : "a reply of an unexpected shape",
		       r->type == REDIS_REPLY_ERROR ? (int)(r->len > 200 ? 200 : r->len) : 0,
		       r->type == REDIS_REPLY_ERROR ? r->str : "");
		rc = RIGD_E_UNAVAILABLE;
	} else if (dims) {
		gen = r->integer;
	}
	if (c->cb.scene_done)
		c->cb.scene_done(c->cb.ctx, ref, scene, rc, dims, there, gen);
}

bool cl_take_scene_event(struct cluster *c, const void *fields)
{
	const redisReply *f = fields;
	const redisReply *op, *scene, *dims, *from, *gen = NULL;
	int64_t g = 0;
	int d;

	if (f->type != REDIS_REPLY_ARRAY || (f->elements != 8 && f->elements != 10) ||
	    !(op = cl_entry_field(f, "op")) || !(scene = cl_entry_field(f, "scene")) ||
	    !(dims = cl_entry_field(f, "dims")) || !(from = cl_entry_field(f, "from")) ||
	    (f->elements == 10 && !(gen = cl_entry_field(f, "gen"))))
		return false;
	if (!cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) || !cl_id_valid(from->str, CLUSTER_ID_MAX) ||
	    dims->len != 1 || (gen && !cl_parse_token(gen->str, gen->len, &g)))
		return false;
	d = dims->str[0] - '0';
	if (strcmp(op->str, "create") == 0 && (d == 2 || d == 3)) {
		/* applied below */
	} else if (strcmp(op->str, "delete") == 0 && d == 0 && !gen) {
		/* applied below */
	} else {
		return false;
	}
	if (c->cb.scene_event)
		c->cb.scene_event(c->cb.ctx, scene->str, d, from->str, g);
	return true;
}

/* qsort order of catalog entries: by name. */
static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const cluster_catalog_entry *)a)->scene,
		      ((const cluster_catalog_entry *)b)->scene);
}

/* Appends the pairs of HGETALL answer 'h' (the catalog, or with 'tombs' the
 * tombstones) to v[*n] (room for all): a pair of another shape is skipped
 * and counted. */
static void take_pairs(struct cluster *c, const redisReply *h, bool tombs,
		       cluster_catalog_entry *v, int *n)
{
	for (size_t i = 0; i + 1 < h->elements; i += 2) {
		const redisReply *k = h->element[i], *x = h->element[i + 1];
		cluster_catalog_entry e = {0};

		if (k->type == REDIS_REPLY_STRING && x->type == REDIS_REPLY_STRING &&
		    strlen(k->str) == k->len && cl_id_valid(k->str, CLUSTER_SCENE_MAX + 1) &&
		    (tombs ? cl_parse_token(x->str, x->len, &e.deleted_gen) :
			     cl_parse_catalog_value(x->str, x->len, &e.dims, &e.gen))) {
			e.scene = k->str;
			v[(*n)++] = e;
			continue;
		}
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: an entry of %s is not a rigd %s: skipped",
		       tombs ? TOMBS_KEY : CATALOG_KEY, tombs ? "tombstone" : "catalog entry");
	}
}

bool cl_take_catalog(struct cluster *c, const void *catalog, const void *tombs)
{
	const redisReply *h = catalog, *t = tombs;
	cluster_catalog_entry *v;
	int n = 0, m = 0;

	if (h->type != REDIS_REPLY_ARRAY || t->type != REDIS_REPLY_ARRAY || h->elements % 2 ||
	    t->elements % 2)
		return false;
	if (!(v = calloc(h->elements / 2 + t->elements / 2 + 1, sizeof(*v))))
		return false;
	take_pairs(c, h, false, v, &n);
	take_pairs(c, t, true, v, &n);
	qsort(v, (size_t)n, sizeof(*v), entry_cmp);
	/* One entry a name: a name both in the catalog and tombstoned (deleted
	 * once, created again) gets both numbers. */
	for (int i = 0; i < n; i++) {
		if (m > 0 && strcmp(v[m - 1].scene, v[i].scene) == 0) {
			if (v[i].dims) {
				v[m - 1].dims = v[i].dims;
				v[m - 1].gen = v[i].gen;
			}
			if (v[i].deleted_gen)
				v[m - 1].deleted_gen = v[i].deleted_gen;
			continue;
		}
		v[m++] = v[i];
	}
	if (c->cb.catalog)
		c->cb.catalog(c->cb.ctx, v, m);
	free(v);
	return true;
}
