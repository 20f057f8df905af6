/*
 * forward.c: the streams a process reads (see cluster.h). Each process
 * reads two streams of its own, rigd:fwd:ID (edits other processes forward
 * to it as an owner) and rigd:ans:ID (the answers to the edits it
 * forwarded), the cluster's stream of scene events rigd:scene-events
 * (catalog.c) and of presence rigd:presence (presence.c), and the log
 * stream rigd:log:SCENE of every scene it follows, on a second connection
 * that blocks in XREAD: a blocking read on the main connection would hold
 * every lease renewal behind it. Entries are appended
 * on the main connection.
 *
 * The reader starts at Redis's clock when it first connects (a process
 * never acts on requests older than itself) and goes on from the last entry
 * id it read across reconnections, so nothing appended while it reconnects
 * is missed; the scene events it reads from a snapshot of the catalog taken
 * at each connection (catalog.c), which the process reconciles with first.
 * Every entry is checked field by field before it is handed on: what
 * another program appends is refused, logged and counted.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_MS 1000              /* XREAD BLOCK */
#define READ_COUNT "100"           /* entries per read */
#define STREAM_MAXLEN "10000"      /* XADD MAXLEN ~ */
#define STREAM_TTL_MS "60000"      /* a stream expires this long after its last entry */
#define RETRY_MS 200               /* reconnection delay of the reader */
#define ERROR_RETRY_MS 1000        /* after an error reply to XREAD */

static void rd_on_connect(const redisAsyncContext *ac, int status);
static void rd_on_disconnect(const redisAsyncContext *ac, int status);
static void rd_read(struct cluster *c);

/* Drops the reader connection and schedules the next one in 'ms'. */
static void rd_drop(struct cluster *c, const char *why, uint64_t ms)
{
	redisAsyncContext *ac = c->rd;

	c->rd = NULL;
	c->rd_up = false;
	c->rd_waiting_ms = 0;
	c->rd_next_ms = cl_now_ms() + ms;
	if (ac) {
		cl_log(c, CL_LOG_WARN, "redis reader: %s; reconnecting", why);
		redisAsyncFree(ac);
	}
}

static void rd_connect(struct cluster *c)
{
	redisAsyncContext *ac = redisAsyncConnect(c->host, c->port);

	c->rd_connect_ms = cl_now_ms();
	c->rd_next_ms = c->rd_connect_ms + RETRY_MS;
	if (!ac || ac->err || redisLibuvAttach(ac, c->loop) != REDIS_OK) {
		if (ac)
			redisAsyncFree(ac);
		return;
	}
	ac->data = c;
	redisAsyncSetConnectCallback(ac, rd_on_connect);
	redisAsyncSetDisconnectCallback(ac, rd_on_disconnect);
	c->rd = ac;
}

static void rd_on_disconnect(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;

	if (!c || c->rd != ac)
		return;
	c->rd = NULL;
	c->rd_up = false;
	c->rd_waiting_ms = 0;
	c->rd_next_ms = cl_now_ms() + RETRY_MS;
}

static bool entry_id_ok(const char *s, size_t len);

/*
 * The snapshot's answer (catalog.c's script): {sec, usec, last event id,
 * catalog, tombstones}. The first time the reader starts its own streams
 * and presence at Redis's clock (a process never acts on requests older
 * than itself); every time, it reads the scene events from the snapshot's
 * last one on, after the process reconciled its database with the catalog
 * of that same instant (callbacks.catalog): so nothing is missed however
 * long it was away, and nothing is applied twice.
 */
static void rd_on_snapshot(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	const redisReply *r = reply, *id;
	unsigned long long sec, usec;

	(void)priv;
	if (!c || c->rd != ac || !r)
		return;
	c->rd_waiting_ms = 0;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 5 ||
	    r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_STRING ||
	    (id = r->element[2])->type != REDIS_REPLY_STRING ||
	    (id->len && !entry_id_ok(id->str, id->len)) ||
	    sscanf(r->element[0]->str, "%llu", &sec) != 1 ||
	    sscanf(r->element[1]->str, "%llu", &usec) != 1 ||
	    !cl_take_catalog(c, r->element[3], r->element[4])) {
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: the catalog snapshot answered %.*s",
		       r->type == REDIS_REPLY_ERROR ? (int)(r->len > 200 ? 200 : r->len) : 22,
		       r->type == REDIS_REPLY_ERROR ? r->str : "a reply of bad shape");
		rd_drop(c, "the catalog could not be read", ERROR_RETRY_MS);
		return;
	}
	if (!c->fwd_last[0]) {
		snprintf(c->fwd_last, sizeof(c->fwd_last), "%llu-0", sec * 1000 + usec / 1000);
		snprintf(c->ans_last, sizeof(c->ans_last), "%s", c->fwd_last);
		snprintf(c->presence_last, sizeof(c->presence_last), "%s", c->fwd_last);
	}
	snprintf(c->events_last, sizeof(c->events_last), "%s", id->len ? id->str : "0-0");
	c->rd_up = true;
	rd_read(c);
	if (c->cb.reader_up)
		c->cb.reader_up(c->cb.ctx);
}

static void rd_on_connect(const redisAsyncContext *cac, int status)
{
	struct cluster *c = cac->data;
	redisAsyncContext *ac = (redisAsyncContext *)cac;
	const char *argv[] = {"EVAL", cl_snapshot_lua, "3", cl_snapshot_keys[0],
			      cl_snapshot_keys[1], cl_snapshot_keys[2]};

	if (!c || c->rd != ac)
		return;
	if (status != REDIS_OK) {
		c->rd = NULL;  /* hiredis frees it after this call */
		c->rd_next_ms = cl_now_ms() + RETRY_MS;
		return;
	}
	c->rd_waiting_ms = cl_now_ms();
	if (redisAsyncCommandArgv(ac, rd_on_snapshot, NULL, 6, argv, NULL) != REDIS_OK)
		rd_drop(c, "cannot read the catalog", RETRY_MS);
}

/* Whether 's' ('len' bytes) is an entry id "MS-SEQ". */
static bool entry_id_ok(const char *s, size_t len)
{
	const char *dash = memchr(s, '-', len);

	if (!dash || dash == s || len >= 48 || dash + 1 == s + len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s + i != dash && (s[i] < '0' || s[i] > '9'))
			return false;
	return true;
}

/* Reads 'len' bytes of decimal digits ("0" or no leading zero, 1..18
 * digits) into *out. */
static bool read_uint(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 18 || (s[0] == '0' && len > 1))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

const redisReply *cl_entry_bytes(const redisReply *f, const char *name)
{
	const redisReply *found = NULL;

	for (size_t i = 0; i + 1 < f->elements; i += 2) {
		const redisReply *k = f->element[i];

		if (k->type == REDIS_REPLY_STRING && k->len == strlen(name) &&
		    memcmp(k->str, name, k->len) == 0) {
			if (found)
				return NULL;
			found = f->element[i + 1];
		}
	}
	return found && found->type == REDIS_REPLY_STRING ? found : NULL;
}

const redisReply *cl_entry_field(const redisReply *f, const char *name)
{
	const redisReply *found = cl_entry_bytes(f, name);

	if (!found || strlen(found->str) != found->len)
		return NULL;
	return found;
}

/* Whether 'v' holds no NUL and no control character but tab. */
static bool text_ok(const redisReply *v, size_t max)
{
	if (v->len > max)
		return false;
	for (size_t i = 0; i < v->len; i++)
		if ((unsigned char)v->str[i] < 0x20 && v->str[i] != '\t')
			return false;
	return true;
}

/* A request entry: exactly from, rid, scene, body. */
static bool take_request(struct cluster *c, const redisReply *fields)
{
	const redisReply *from = cl_entry_field(fields, "from");
	const redisReply *rid = cl_entry_field(fields, "rid");
	const redisReply *scene = cl_entry_field(fields, "scene");
	const redisReply *body = cl_entry_field(fields, "body");
	uint64_t n;

	if (fields->elements != 8 || !from || !rid || !scene || !body ||
	    strlen(from->str) != from->len || !cl_id_valid(from->str, CLUSTER_ID_MAX) ||
	    !read_uint(rid->str, rid->len, &n) || strlen(scene->str) != scene->len ||
	    !cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) || body->len == 0 ||
	    body->len > CLUSTER_BODY_MAX || memchr(body->str, '\0', body->len))
		return false;
	if (c->cb.request)
		c->cb.request(c->cb.ctx, from->str, n, scene->str, body->str, body->len);
	return true;
}

/* An answer entry: exactly rid, code, seq, recomputed, op, field, message. */
static bool take_answer(struct cluster *c, const redisReply *fields)
{
	const redisReply *v[7];
	static const char *const names[7] = {"rid", "code", "seq", "recomputed", "op", "field",
					     "message"};
	cluster_answer_info a;
	uint64_t rid, seq, rec, op;

	if (fields->elements != 14)
		return false;
	for (int i = 0; i < 7; i++)
		if (!(v[i] = cl_entry_field(fields, names[i])) || strlen(v[i]->str) != v[i]->len)
			return false;
	if (!read_uint(v[0]->str, v[0]->len, &rid) || !read_uint(v[2]->str, v[2]->len, &seq) ||
	    !read_uint(v[3]->str, v[3]->len, &rec) || v[1]->len == 0 || v[1]->len > 32 ||
	    !text_ok(v[5], 64) || !text_ok(v[6], 1024) || rec > 1000000000 ||
	    seq > ((uint64_t)1 << 53))
		return false;
	for (size_t i = 0; i < v[1]->len; i++)
		if (!((v[1]->str[i] >= 'a' && v[1]->str[i] <= 'z') || v[1]->str[i] == '_'))
			return false;
	if (strcmp(v[4]->str, "-1") == 0)
		op = (uint64_t)-1;
	else if (!read_uint(v[4]->str, v[4]->len, &op) || op > 100000000)
		return false;
	a.rid = rid;
	a.code = v[1]->str;
	a.seq = (int64_t)seq;
	a.recomputed = (long)rec;
	a.op = op == (uint64_t)-1 ? -1 : (int)op;
	a.field = v[5]->str;
	a.message = v[6]->str;
	if (c->cb.answer)
		c->cb.answer(c->cb.ctx, &a);
	return true;
}

/* A log entry of followed scene 'f': exactly seq, token, line. */
static bool take_log(struct cluster *c, struct cl_follow *f, const redisReply *fields)
{
	const redisReply *seq = cl_entry_field(fields, "seq");
	const redisReply *tok = cl_entry_field(fields, "token");
	const redisReply *line = cl_entry_field(fields, "line");
	uint64_t n, t;

	if (fields->elements != 6 || !seq || !tok || !line || !read_uint(seq->str, seq->len, &n) ||
	    n == 0 || !read_uint(tok->str, tok->len, &t) || t == 0 || line->len == 0 ||
	    line->len > CLUSTER_BODY_MAX || memchr(line->str, '\0', line->len))
		return false;
	c->stats.log_lines++;
	if (c->cb.log_line)
		c->cb.log_line(c->cb.ctx, f->scene, n, (int64_t)t, line->str, line->len);
	return true;
}

/* The followed scene whose log stream is 'key', or NULL. */
static struct cl_follow *follow_of_key(struct cluster *c, const char *key)
{
	if (strncmp(key, "rigd:log:", 9) != 0)
		return NULL;
	for (int i = 0; i < c->n_follows; i++)
		if (strcmp(c->follows[i].scene, key + 9) == 0)
			return &c->follows[i];
	return NULL;
}

/* The entries of followed scene 'f''s log stream 's'. */
static void take_logs(struct cluster *c, struct cl_follow *f, const redisReply *s)
{
	for (size_t i = 0; i < s->element[1]->elements; i++) {
		const redisReply *e = s->element[1]->element[i];

		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    !entry_id_ok(e->element[0]->str, e->element[0]->len))
			continue;
		memcpy(f->last, e->element[0]->str, e->element[0]->len + 1);
		if (e->element[1]->type != REDIS_REPLY_ARRAY || !take_log(c, f, e->element[1])) {
			c->stats.errors++;
			cl_log(c, CL_LOG_WARN, "redis: entry %s of rigd:log:%s is not a rigd log entry: "
			       "refused", e->element[0]->str, f->scene);
		}
	}
}

/* The entries of rigd:scene-events or (presence) rigd:presence 's'. */
static void take_events(struct cluster *c, const redisReply *s, bool presence)
{
	char *last = presence ? c->presence_last : c->events_last;

	for (size_t i = 0; i < s->element[1]->elements; i++) {
		const redisReply *e = s->element[1]->element[i];

		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    !entry_id_ok(e->element[0]->str, e->element[0]->len))
			continue;
		memcpy(last, e->element[0]->str, e->element[0]->len + 1);
		if (!(presence ? cl_take_presence(c, e->element[1]) :
				 cl_take_scene_event(c, e->element[1]))) {
			c->stats.errors++;
			cl_log(c, CL_LOG_WARN, "redis: entry %s of %s is not a rigd %s: refused",
			       e->element[0]->str, presence ? "rigd:presence" : "rigd:scene-events",
			       presence ? "presence entry" : "scene event");
		}
	}
}

/* One stream of XREAD's answer: [name, [[id, [f, v, ...]], ...]]. */
static void take_stream(struct cluster *c, const redisReply *s, const char *fwd_key)
{
	bool fwd;
	char *last;
	struct cl_follow *f;

	if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 ||
	    s->element[0]->type != REDIS_REPLY_STRING || s->element[1]->type != REDIS_REPLY_ARRAY)
		return;
	if ((f = follow_of_key(c, s->element[0]->str))) {
		take_logs(c, f, s);
		return;
	}
	if (strncmp(s->element[0]->str, "rigd:log:", 9) == 0)
		return;  /* a scene forgotten (deleted) while the read waited */
	if (strcmp(s->element[0]->str, "rigd:scene-events") == 0 ||
	    strcmp(s->element[0]->str, "rigd:presence") == 0) {
		take_events(c, s, s->element[0]->str[5] == 'p');
		return;
	}
	fwd = strcmp(s->element[0]->str, fwd_key) == 0;
	last = fwd ? c->fwd_last : c->ans_last;
	for (size_t i = 0; i < s->element[1]->elements; i++) {
		const redisReply *e = s->element[1]->element[i];
		bool ok;

		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    !entry_id_ok(e->element[0]->str, e->element[0]->len))
			continue;  /* Redis writes ids itself: not expected */
		memcpy(last, e->element[0]->str, e->element[0]->len + 1);
		ok = e->element[1]->type == REDIS_REPLY_ARRAY &&
		     (fwd ? (e->element[1]->elements == 6 ? cl_take_catchup_ask(c, e->element[1]) :
			     e->element[1]->elements == 12 ? cl_take_call(c, e->element[1]) :
						   take_request(c, e->element[1])) :
			    (e->element[1]->elements == 8 ? cl_take_catchup_line(c, e->element[1]) :
			     e->element[1]->elements == 6 ? cl_take_reply(c, e->element[1]) :
						   take_answer(c, e->element[1])));
		if (!ok) {
			c->stats.errors++;
			cl_log(c, CL_LOG_WARN, "redis: entry %s of %s is not a rigd %s: refused",
			       e->element[0]->str, s->element[0]->str, fwd ? "request" : "answer");
		}
	}
}

static void rd_on_read(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cluster *c = ac->data;
	const redisReply *r = reply;
	char fwd_key[CLUSTER_ID_MAX + 16];

	if (!c || c->rd != ac || !r)
		return;
	c->rd_waiting_ms = 0;
	if (r->type == REDIS_REPLY_ERROR) {
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: reading rigd:fwd:%s and rigd:ans:%s: %s", c->id, c->id,
		       r->str);
		rd_drop(c, "XREAD refused", ERROR_RETRY_MS);
		return;
	}
	snprintf(fwd_key, sizeof(fwd_key), "rigd:fwd:%s", c->id);
	if (r->type == REDIS_REPLY_ARRAY)
		for (size_t i = 0; i < r->elements && c->rd == ac; i++)
			take_stream(c, r->element[i], fwd_key);
	for (int i = 0; i < c->n_follows; i++)
		if (c->follows[i].reset) {
			c->follows[i].reset = false;
			snprintf(c->follows[i].last, sizeof(c->follows[i].last), "0-0");
		}
	if (c->rd == ac)
		rd_read(c);
}

static void rd_read(struct cluster *c)
{
	int n = c->n_follows, argc = 14 + 2 * n;
	char fwd[CLUSTER_ID_MAX + 16], ans[CLUSTER_ID_MAX + 16], block[16];
	const char **argv = calloc((size_t)argc, sizeof(*argv));
	char (*keys)[CLUSTER_SCENE_MAX + 16] = calloc((size_t)n + 1, sizeof(*keys));

	if (!argv || !keys) {
		free(argv);
		free(keys);
		rd_drop(c, "out of memory", RETRY_MS);
		return;
	}
	snprintf(fwd, sizeof(fwd), "rigd:fwd:%s", c->id);
	snprintf(ans, sizeof(ans), "rigd:ans:%s", c->id);
	snprintf(block, sizeof(block), "%d", BLOCK_MS);
	argv[0] = "XREAD";
	argv[1] = "COUNT";
	argv[2] = READ_COUNT;
	argv[3] = "BLOCK";
	argv[4] = block;
	argv[5] = "STREAMS";
	argv[6] = fwd;
	argv[7] = ans;
	argv[8] = "rigd:scene-events";
	argv[9] = "rigd:presence";
	for (int i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "rigd:log:%s", c->follows[i].scene);
		argv[10 + i] = keys[i];
	}
	argv[10 + n] = c->fwd_last;
	argv[11 + n] = c->ans_last;
	argv[12 + n] = c->events_last;
	argv[13 + n] = c->presence_last;
	for (int i = 0; i < n; i++)
		argv[14 + n + i] = c->follows[i].last;
	c->rd_waiting_ms = cl_now_ms();
	if (redisAsyncCommandArgv(c->rd, rd_on_read, NULL, argc, argv, NULL) != REDIS_OK)
		rd_drop(c, "cannot read", RETRY_MS);
	free(argv);
	free(keys);
}

int cluster_follow(cluster *c, const char *scene, bool again)
{
	struct cl_follow *f = NULL;

	for (int i = 0; i < c->n_follows; i++)
		if (strcmp(c->follows[i].scene, scene) == 0)
			f = &c->follows[i];
	if (!f) {
		if (c->n_follows == c->cap_follows) {
			int cap = c->cap_follows ? c->cap_follows * 2 : 8;
			struct cl_follow *v = realloc(c->follows, (size_t)cap * sizeof(*v));

			if (!v)
				return RIGD_E_NOMEM;
			c->follows = v;
			c->cap_follows = cap;
		}
		f = &c->follows[c->n_follows++];
		memset(f, 0, sizeof(*f));
		snprintf(f->scene, sizeof(f->scene), "%s", scene);
		snprintf(f->last, sizeof(f->last), "0-0");
	}
	else if (again)
		f->reset = true;  /* applied between two reads */
	if (!c->rd_waiting_ms)
		for (int i = 0; i < c->n_follows; i++)
			if (c->follows[i].reset) {
				c->follows[i].reset = false;
				snprintf(c->follows[i].last, sizeof(c->follows[i].last), "0-0");
			}
	return 0;
}

void cl_reader_tick(struct cluster *c, uint64_t now)
{
	if (!c->rd && c->state == CLUSTER_UP && now >= c->rd_next_ms)
		rd_connect(c);
	else if (c->rd && !c->rd_up && c->rd_waiting_ms == 0 &&
		 cl_elapsed_ms(now, c->rd_connect_ms) > (uint64_t)c->timeout_ms)
		rd_drop(c, "no answer to the connection", RETRY_MS);
	else if (c->rd && c->rd_waiting_ms &&
		 cl_elapsed_ms(now, c->rd_waiting_ms) > (uint64_t)(BLOCK_MS + c->timeout_ms))
		rd_drop(c, "no answer within the timeout", RETRY_MS);
}

void cl_reader_close(struct cluster *c)
{
	redisAsyncContext *ac = c->rd;

	c->rd = NULL;
	c->rd_up = false;
	if (ac) {
		ac->data = NULL;
		redisAsyncFree(ac);
	}
}

int cl_append(struct cluster *c, const char *key, const char **fields, const size_t *lens,
	      int n_fields)
{
	const char *argv[20] = {"XADD", key, "MAXLEN", "~", STREAM_MAXLEN, "*"};
	size_t alen[20];
	const char *exp[] = {"PEXPIRE", key, STREAM_TTL_MS};
	int rc;

	for (int i = 0; i < 6; i++)
		alen[i] = strlen(argv[i]);
	for (int i = 0; i < n_fields; i++) {
		argv[6 + i] = fields[i];
		alen[6 + i] = lens[i];
	}
	if ((rc = cl_send(c, 6 + n_fields, argv, alen)) != 0)
		return rc;
	return cl_send(c, 3, exp, NULL) == RIGD_E_NOMEM ? RIGD_E_NOMEM : 0;
}

int cluster_forward(cluster *c, const char *owner, uint64_t rid, const char *scene,
		    const char *body, size_t len)
{
	char key[CLUSTER_ID_MAX + 16], num[24];
	const char *f[8] = {"from", c->id, "rid", num, "scene", scene, "body", body};
	size_t l[8];

	if (!cl_id_valid(owner, CLUSTER_ID_MAX))
		return RIGD_E_BAD_ID;
	if (len > CLUSTER_BODY_MAX)
		return RIGD_E_TOO_LARGE;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(key, sizeof(key), "rigd:fwd:%s", owner);
	snprintf(num, sizeof(num), "%" PRIu64, rid);
	for (int i = 0; i < 8; i++)
		l[i] = strlen(f[i]);
	l[7] = len;
	return cl_append(c, key, f, l, 8);
}

int cluster_answer(cluster *c, const char *to, const cluster_answer_info *a)
{
	char key[CLUSTER_ID_MAX + 16], rid[24], seq[24], rec[24], op[16];
	const char *f[14] = {"rid", rid, "code", a->code, "seq", seq, "recomputed", rec,
			     "op", op, "field", a->field ? a->field : "", "message",
			     a->message ? a->message : ""};
	size_t l[14];

	if (!cl_id_valid(to, CLUSTER_ID_MAX))
		return RIGD_E_BAD_ID;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(key, sizeof(key), "rigd:ans:%s", to);
	snprintf(rid, sizeof(rid), "%" PRIu64, a->rid);
	snprintf(seq, sizeof(seq), "%" PRId64, a->seq > 0 ? a->seq : 0);
	snprintf(rec, sizeof(rec), "%ld", a->recomputed > 0 ? a->recomputed : 0);
	snprintf(op, sizeof(op), "%d", a->op >= 0 ? a->op : -1);
	for (int i = 0; i < 14; i++)
		l[i] = strlen(f[i]);
	return cl_append(c, key, f, l, 14);
}
