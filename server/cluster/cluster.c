/*
 * cluster.c: the Redis connection, the registry of live processes and the
 * leases of scenes (see cluster.h).
 *
 * One hiredis asynchronous context runs on the process's libuv loop (the
 * loop libwebsockets runs on), so every reply is handled on the one thread
 * that also serves clients: no lock, no thread. hiredis 0.14 has no command
 * timeouts, so a timer of our own drops a connection whose oldest command
 * has waited longer than timeout_ms (a stopped or unreachable Redis), and
 * reconnects with a backoff. Every reply is checked for its exact shape
 * before it is used: a value that another program wrote into one of our
 * keys is refused and logged, never trusted.
 *
 * Never blocks, never touches a scene or a client.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/adapters/libuv.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_MS 100                 /* the timer's period */
#define BACKOFF_MIN_MS 100          /* first reconnection delay... */
#define BACKOFF_MAX_MS 2000         /* ...doubling up to this */

/*
 * ACQUIRE: KEYS lease, fence; ARGV id, ms. Takes a free lease with the next
 * fencing token, or keeps (and extends) one this process still holds; else
 * answers who holds it. {1, token} or {0, "holder token"}.
 */
static const char acquire_lua[] =
	"local v = redis.call('GET', KEYS[1])\n"
	"if v then\n"
	"  local id, t = string.match(v, '^(%S+) (%d+)$')\n"
	"  if id == ARGV[1] then\n"
	"    redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"    return {1, t}\n"
	"  end\n"
	"  return {0, v}\n"
	"end\n"
	"local t = redis.call('INCR', KEYS[2])\n"
	"redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. t, 'PX', ARGV[2])\n"
	"return {1, tostring(t)}\n";

/* RENEW: KEYS lease; ARGV "id token", ms. 1 when still ours, else 0. */
static const char renew_lua[] =
	"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
	"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"  return 1\n"
	"end\n"
	"return 0\n";

/* RELEASE: KEYS lease; ARGV "id token". Deletes the lease only if ours. */
static const char release_lua[] =
	"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
	"  return redis.call('DEL', KEYS[1])\n"
	"end\n"
	"return 0\n";

/*
 * HEARTBEAT: KEYS procs (sorted set: id by expiry), info (hash: id to
 * "leases url"); ARGV id, ttl ms, "leases url". Forgets the processes whose
 * heartbeat expired, records this one, and answers every live one as
 * {id, info, id, info, ...} in id order. Redis's clock judges expiry, so
 * the processes' clocks need not agree.
 */
static const char heartbeat_lua[] =
	"local t = redis.call('TIME')\n"
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
	"for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do\n"
	"  redis.call('HDEL', KEYS[2], id)\n"
	"end\n"
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"
	"redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])\n"
	"redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])\n"
	"local out = {}\n"
	"for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do\n"
	"  out[#out + 1] = id\n"
	"  out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''\n"
	"end\n"
	"return out\n";

enum cmd_kind { CMD_ACQUIRE, CMD_RENEW, CMD_RELEASE, CMD_HEARTBEAT, CMD_OTHER,
		CMD_PUBLISH = CL_CMD_PUBLISH, CMD_LOG_END, CMD_SCENE, CMD_PROBE = CL_CMD_PROBE,
		CMD_WAIT = CL_CMD_WAIT };

/* What a reply callback needs: freed by it. */
struct cmd {
	int kind;
	uint64_t sent_ms;
	char scene[CLUSTER_SCENE_MAX + 1];
	int64_t token;               /* RENEW: the token renewed */
	uint64_t seq;                /* PUBLISH: the batch; SCENE: the caller's ref */
	bool lose_answer;            /* PUBLISH: RIGD_FAULT_APPEND's lost answer */
};

uint64_t cl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void cl_log(struct cluster *c, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!c->cb.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->cb.log(c->cb.ctx, level, line);
}

/* ---- the connection ---- */

static void on_connect(const redisAsyncContext *ac, int status);
static void on_disconnect(const redisAsyncContext *ac, int status);
static void on_reply(redisAsyncContext *ac, void *r, void *priv);

/* The connection is gone (any way): leases being asked for are forgotten,
 * owned ones stay until their local validity ends (cl_tick), and the next
 * attempt is scheduled. */
static void went_down(struct cluster *c, const char *why)
{
	uint64_t now = cl_now_ms();

	c->n_out = 0;
	cl_wait_lost(c);
	for (int i = 0; i < c->n_leases; i++) {
		struct cl_lease *l = &c->leases[i];

		l->in_flight = false;
		if (l->state == CLUSTER_LEASE_ASKING)
			l->state = CLUSTER_LEASE_NONE;
	}
	if (c->state == CLUSTER_UP || c->state == CLUSTER_CONNECTING) {
		if (c->state == CLUSTER_UP)
			c->stats.disconnects++;
		cl_log(c, CL_LOG_WARN, "redis %s:%d: %s; reconnecting", c->host, c->port, why);
		c->state = CLUSTER_DOWN;
		if (c->cb.state)
			c->cb.state(c->cb.ctx, CLUSTER_DOWN);
	}
	c->next_connect_ms = now + (uint64_t)c->backoff_ms;
	c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
}

/* Drops the connection from our side (a timeout): hiredis answers every
 * waiting command with NULL, and we schedule the next attempt. */
static void drop(struct cluster *c, const char *why)
{
	redisAsyncContext *ac = c->ac;

	c->ac = NULL;
	if (ac)
		redisAsyncFree(ac);
	went_down(c, why);
}

static void start_connect(struct cluster *c)
{
	redisAsyncContext *ac = redisAsyncConnect(c->host, c->port);

	c->connect_ms = cl_now_ms();
	if (!ac || ac->err) {
		if (ac)
			redisAsyncFree(ac);
		c->state = c->state == CLUSTER_UP ? CLUSTER_DOWN : c->state;
		went_down(c, ac ? "cannot connect" : "out of memory");
		return;
	}
	ac->data = c;
	if (redisLibuvAttach(ac, c->loop) != REDIS_OK) {
		redisAsyncFree(ac);
		went_down(c, "cannot attach to the loop");
		return;
	}
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	c->ac = ac;
	if (c->state != CLUSTER_CONNECTING) {
		c->state = CLUSTER_CONNECTING;
		if (c->cb.state)
			c->cb.state(c->cb.ctx, CLUSTER_CONNECTING);
	}
}

static void on_connect(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;

	if (!c || c->ac != ac)
		return;
	if (status != REDIS_OK) {
		c->ac = NULL;  /* hiredis frees it after this call */
		went_down(c, ac->errstr[0] ? ac->errstr : "cannot connect");
		return;
	}
	c->state = CLUSTER_UP;
	c->stats.connects++;
	c->backoff_ms = BACKOFF_MIN_MS;
	cl_log(c, CL_LOG_INFO, "redis %s:%d: connected as %s", c->host, c->port, c->id);
	if (c->cb.state)
		c->cb.state(c->cb.ctx, CLUSTER_UP);
	c->next_round_ms = 0;  /* heartbeat and leases at the next tick */
	cl_tick(c);
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
	struct cluster *c = ac->data;

	if (!c || c->ac != ac)
		return;  /* we dropped it ourselves */
	c->ac = NULL;
	if (c->freeing)
		return;
	went_down(c, ac->errstr[0] ? ac->errstr : "connection closed");
}

/* Sends one command with its callback data (owned by the callback from
 * here); 'lens' NULL: the arguments are strings. 0, or -1 when it could not
 * be sent (then 'cmd' is freed). */
static int send_cmd_lens(struct cluster *c, struct cmd *cmd, int argc, const char **argv,
			 const size_t *lens)
{
	size_t own[24];

	assert(argc <= 24);
	if (!c->ac || c->state != CLUSTER_UP) {
		free(cmd);
		return -1;
	}
	if (!lens) {
		for (int i = 0; i < argc; i++)
			own[i] = strlen(argv[i]);
		lens = own;
	}
	cmd->sent_ms = cl_now_ms();
	if (redisAsyncCommandArgv(c->ac, on_reply, cmd, argc, argv, lens) != REDIS_OK) {
		free(cmd);
		return -1;
	}
	if (c->n_out++ == 0)
		c->wait_since_ms = cmd->sent_ms;
	c->stats.commands++;
	return 0;
}

static int send_cmd(struct cluster *c, struct cmd *cmd, int argc, const char **argv)
{
	return send_cmd_lens(c, cmd, argc, argv, NULL);
}

int cl_send(struct cluster *c, int argc, const char **argv, const size_t *lens)
{
	struct cmd *cmd = calloc(1, sizeof(*cmd));

	if (!cmd)
		return RIGD_E_NOMEM;
	cmd->kind = CMD_OTHER;
	return send_cmd_lens(c, cmd, argc, argv, lens) ? RIGD_E_UNAVAILABLE : 0;
}

int cl_send_scene(struct cluster *c, uint64_t ref, const char *scene, int dims, int argc,
		  const char **argv)
{
	struct cmd *cmd = calloc(1, sizeof(*cmd));

	if (!cmd)
		return RIGD_E_NOMEM;
	cmd->kind = CMD_SCENE;
	cmd->seq = ref;
	cmd->token = dims;
	snprintf(cmd->scene, sizeof(cmd->scene), "%s", scene);
	return send_cmd(c, cmd, argc, argv) ? RIGD_E_UNAVAILABLE : 0;
}

int cl_send_kind(struct cluster *c, int kind, const char *scene, uint64_t seq, int argc,
		 const char **argv, const size_t *lens)
{
	return cl_send_cmd(c, kind, scene, seq, 0, false, argc, argv, lens);
}

int cl_send_cmd(struct cluster *c, int kind, const char *scene, uint64_t seq, int64_t token,
		bool lose_answer, int argc, const char **argv, const size_t *lens)
{
	struct cmd *cmd = calloc(1, sizeof(*cmd));

	if (!cmd)
		return RIGD_E_NOMEM;
	cmd->kind = kind;
	cmd->seq = seq;
	cmd->token = token;
	cmd->lose_answer = lose_answer;
	snprintf(cmd->scene, sizeof(cmd->scene), "%s", scene);
	return send_cmd_lens(c, cmd, argc, argv, lens) ? RIGD_E_UNAVAILABLE : 0;
}

/* ---- leases ---- */

struct cl_lease *cl_lease_find(const struct cluster *c, const char *scene)
{
	int lo = 0, hi = c->n_leases;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int cmp = strcmp(c->leases[mid].scene, scene);

		if (cmp == 0)
			return &c->leases[mid];
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The lease record of 'scene', added (sorted) when missing; NULL out of
 * memory. */
static struct cl_lease *lease_get(struct cluster *c, const char *scene)
{
	struct cl_lease *l = cl_lease_find(c, scene), *v;
	int at = 0;

	if (l)
		return l;
	if (c->n_leases == c->cap_leases) {
		int cap = c->cap_leases ? c->cap_leases * 2 : 16;

		if (!(v = realloc(c->leases, (size_t)cap * sizeof(*v))))
			return NULL;
		c->leases = v;
		c->cap_leases = cap;
	}
	while (at < c->n_leases && strcmp(c->leases[at].scene, scene) < 0)
		at++;
	memmove(&c->leases[at + 1], &c->leases[at],
		(size_t)(c->n_leases - at) * sizeof(*c->leases));
	c->n_leases++;
	l = &c->leases[at];
	memset(l, 0, sizeof(*l));
	snprintf(l->scene, sizeof(l->scene), "%s", scene);
	return l;
}

/* The lease of 'l' is no longer this process's (refused renewal, local
 * expiry, another holder): says so once. */
void cl_lease_lost(struct cluster *c, struct cl_lease *l, const char *why)
{
	int64_t token = l->token;

	if (l->state != CLUSTER_LEASE_OWNED)
		return;
	l->state = CLUSTER_LEASE_NONE;
	l->owner[0] = '\0';
	c->stats.leases_lost++;
	cl_log(c, CL_LOG_WARN, "lease of scene %s (token %" PRId64 ") lost: %s", l->scene, token,
	       why);
	if (c->cb.lease)
		c->cb.lease(c->cb.ctx, l->scene, false, token);
}

/* Asks for the seq of the last entry of the scene's log stream: a new
 * owner commits only once it has applied the log up to there. */
static void ask_log_end(struct cluster *c, struct cl_lease *l)
{
	char key[CLUSTER_SCENE_MAX + 16];
	const char *argv[] = {"XREVRANGE", key, "+", "-", "COUNT", "1"};
	struct cmd *cmd = calloc(1, sizeof(*cmd));

	if (!cmd)
		return;
	snprintf(key, sizeof(key), "rigd:log:%s", l->scene);
	cmd->kind = CMD_LOG_END;
	cmd->token = l->token;
	snprintf(cmd->scene, sizeof(cmd->scene), "%s", l->scene);
	send_cmd(c, cmd, 6, argv);
}

static void lease_taken(struct cluster *c, struct cl_lease *l, int64_t token, uint64_t sent)
{
	bool was = l->state == CLUSTER_LEASE_OWNED && l->token == token;

	l->state = CLUSTER_LEASE_OWNED;
	l->token = token;
	snprintf(l->owner, sizeof(l->owner), "%s", c->id);
	l->valid_until_ms = sent + (uint64_t)c->lease_ms * 3 / 4;
	if (was)
		return;
	l->log_seq = -1;
	ask_log_end(c, l);
	c->stats.leases_taken++;
	cl_log(c, CL_LOG_INFO, "lease of scene %s taken with token %" PRId64, l->scene, token);
	if (c->cb.lease)
		c->cb.lease(c->cb.ctx, l->scene, true, token);
}

static void send_acquire(struct cluster *c, struct cl_lease *l)
{
	char lease[CLUSTER_SCENE_MAX + 16], fence[CLUSTER_SCENE_MAX + 16], ms[24];
	const char *argv[] = {"EVAL", acquire_lua, "2", lease, fence, c->id, ms};
	struct cmd *cmd = calloc(1, sizeof(*cmd));

	if (!cmd || l->in_flight)
		return free(cmd);
	snprintf(lease, sizeof(lease), "rigd:lease:%s", l->scene);
	snprintf(fence, sizeof(fence), "rigd:fence:%s", l->scene);
	snprintf(ms, sizeof(ms), "%d", c->lease_ms);
	cmd->kind = CMD_ACQUIRE;
	snprintf(cmd->scene, sizeof(cmd->scene), "%s", l->scene);
	if (send_cmd(c, cmd, 7, argv) == 0) {
		l->in_flight = true;
		if (l->state == CLUSTER_LEASE_NONE)
			l->state = CLUSTER_LEASE_ASKING;
	}
}

static void send_renew(struct cluster *c, struct cl_lease *l, int kind)
{
	char lease[CLUSTER_SCENE_MAX + 16], holder[CLUSTER_ID_MAX + 24], ms[24];
	const char *argv[] = {"EVAL", kind == CMD_RENEW ? renew_lua : release_lua, "1", lease,
			      holder, ms};
	struct cmd *cmd = calloc(1, sizeof(*cmd));

	if (!cmd || (kind == CMD_RENEW && l->in_flight))
		return free(cmd);
	snprintf(lease, sizeof(lease), "rigd:lease:%s", l->scene);
	snprintf(holder, sizeof(holder), "%s %" PRId64, c->id, l->token);
	snprintf(ms, sizeof(ms), "%d", c->lease_ms);
	cmd->kind = kind;
	cmd->token = l->token;
	snprintf(cmd->scene, sizeof(cmd->scene), "%s", l->scene);
	if (kind == CMD_RELEASE) {
		size_t lens[5];

		free(cmd);  /* at exit: no reply is waited for */
		for (int i = 0; i < 5; i++)
			lens[i] = strlen(argv[i]);
		if (redisAsyncCommandArgv(c->ac, NULL, NULL, 5, argv, lens) == REDIS_OK)
			c->stats.commands++;
		return;
	}
	if (send_cmd(c, cmd, 6, argv) == 0)
		l->in_flight = true;
}

void cl_lease_drop(struct cluster *c, const char *scene)
{
	struct cl_lease *l = cl_lease_find(c, scene);
	int at;

	if (!l)
		return;
	if (l->state == CLUSTER_LEASE_OWNED) {
		if (c->ac && c->state == CLUSTER_UP)
			send_renew(c, l, CMD_RELEASE);
		cl_lease_lost(c, l, "the scene was deleted");
		l = cl_lease_find(c, scene);  /* the callback may not move it, but look again */
		if (!l)
			return;
	}
	at = (int)(l - c->leases);
	memmove(&c->leases[at], &c->leases[at + 1],
		(size_t)(c->n_leases - at - 1) * sizeof(*c->leases));
	c->n_leases--;
}

static void send_heartbeat(struct cluster *c)
{
	char ttl[24], info[CLUSTER_URL_MAX + 24];
	const char *argv[] = {"EVAL", heartbeat_lua, "2", "rigd:procs", "rigd:proc-info", c->id,
			      ttl, info};
	struct cmd *cmd = calloc(1, sizeof(*cmd));
	int owned = 0;

	if (!cmd)
		return;
	for (int i = 0; i < c->n_leases; i++)
		owned += c->leases[i].state == CLUSTER_LEASE_OWNED;
	snprintf(ttl, sizeof(ttl), "%d", c->lease_ms);
	snprintf(info, sizeof(info), "%d %s", owned, c->advertise);
	cmd->kind = CMD_HEARTBEAT;
	send_cmd(c, cmd, 8, argv);
}

/* ---- replies ---- */

static void refused(struct cluster *c, const struct cmd *cmd, const redisReply *r)
{
	static const char *const names[] = {"acquire", "renew", "release", "heartbeat", "command",
					    "publish", "log end", "scene", "probe", "wait"};

	c->stats.errors++;
	cl_log(c, CL_LOG_WARN, "redis: %s%s%s: %s%.*s", names[cmd->kind], cmd->scene[0] ? " of " : "",
	       cmd->scene, r->type == REDIS_REPLY_ERROR ? "" : "reply of an unexpected shape ",
	       r->type == REDIS_REPLY_ERROR ? (int)r->len : 0, r->type == REDIS_REPLY_ERROR ? r->str : "");
}

static void acquire_reply(struct cluster *c, const struct cmd *cmd, const redisReply *r)
{
	struct cl_lease *l = cl_lease_find(c, cmd->scene);
	char owner[CLUSTER_ID_MAX];
	int64_t token;

	if (!l)
		return;
	l->in_flight = false;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER || r->element[1]->type != REDIS_REPLY_STRING) {
		refused(c, cmd, r);
		return;
	}
	if (r->element[0]->integer == 1) {
		if (!cl_parse_token(r->element[1]->str, r->element[1]->len, &token)) {
			refused(c, cmd, r);
			return;
		}
		lease_taken(c, l, token, cmd->sent_ms);
		return;
	}
	if (!cl_parse_holder(r->element[1]->str, r->element[1]->len, owner, &token)) {
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: the lease of scene %s holds %.*s, which is not "
		       "\"PROCESS TOKEN\": refused (it expires by itself)", cmd->scene,
		       (int)(r->element[1]->len > 80 ? 80 : r->element[1]->len), r->element[1]->str);
		if (l->state == CLUSTER_LEASE_ASKING)
			l->state = CLUSTER_LEASE_NONE;
		return;
	}
	cl_lease_lost(c, l, "held by another process");
	l->state = CLUSTER_LEASE_OTHER;
	l->token = token;
	snprintf(l->owner, sizeof(l->owner), "%s", owner);
}

static void renew_reply(struct cluster *c, const struct cmd *cmd, const redisReply *r)
{
	struct cl_lease *l = cl_lease_find(c, cmd->scene);

	if (!l)
		return;
	l->in_flight = false;
	if (r->type != REDIS_REPLY_INTEGER) {
		refused(c, cmd, r);
		return;
	}
	if (l->state != CLUSTER_LEASE_OWNED || l->token != cmd->token)
		return;  /* lost meanwhile */
	if (r->integer == 1)
		l->valid_until_ms = cmd->sent_ms + (uint64_t)c->lease_ms * 3 / 4;
	else
		cl_lease_lost(c, l, "another process holds it now (fencing)");
}

static void heartbeat_reply(struct cluster *c, const struct cmd *cmd, const redisReply *r)
{
	int n = 0;

	if (r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
		refused(c, cmd, r);
		return;
	}
	cl_procs_clear(c);
	for (size_t i = 0; i < r->elements; i += 2) {
		const redisReply *id = r->element[i], *info = r->element[i + 1];

		if (id->type != REDIS_REPLY_STRING || info->type != REDIS_REPLY_STRING ||
		    strlen(id->str) != id->len ||
		    cl_procs_add(c, id->str, info->str, info->len) != 0) {
			c->stats.errors++;
			cl_log(c, CL_LOG_WARN, "redis: a process entry of rigd:procs is not "
			       "\"LEASES URL\": skipped");
			continue;
		}
		n++;
	}
	(void)n;
}

/* XREVRANGE's answer: [] or [[id, [seq, N, token, T, line, L]]]. */
static void log_end_reply(struct cluster *c, const struct cmd *cmd, const redisReply *r)
{
	struct cl_lease *l = cl_lease_find(c, cmd->scene);
	const redisReply *f;
	int64_t seq = 0;

	if (!l || l->state != CLUSTER_LEASE_OWNED || l->token != cmd->token)
		return;
	if (r->type != REDIS_REPLY_ARRAY || r->elements > 1) {
		refused(c, cmd, r);
		ask_log_end(c, l);
		return;
	}
	if (r->elements == 1) {
		f = r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2 ?
			    r->element[0]->element[1] : NULL;
		if (!f || f->type != REDIS_REPLY_ARRAY || f->elements < 2 ||
		    f->element[0]->type != REDIS_REPLY_STRING || strcmp(f->element[0]->str, "seq") ||
		    f->element[1]->type != REDIS_REPLY_STRING ||
		    !cl_parse_token(f->element[1]->str, f->element[1]->len, &seq)) {
			refused(c, cmd, r);
			seq = 0;  /* a garbage entry: the owner trusts its own copy */
		}
	}
	l->log_seq = seq;
	if (c->cb.lease)
		c->cb.lease(c->cb.ctx, l->scene, true, l->token);
}

static void publish_reply(struct cluster *c, const struct cmd *cmd, const redisReply *r)
{
	struct cl_lease *l = cl_lease_find(c, cmd->scene);

	bool fenced = r->type == REDIS_REPLY_ERROR && strstr(r->str, "FENCED");

	if (r->type == REDIS_REPLY_STRING) {
		c->stats.published++;
		if (c->wait_n > 0)
			cl_wait_note(c, cmd->scene, cmd->seq);  /* confirmed by WAIT's answer */
		else if (c->cb.published)
			c->cb.published(c->cb.ctx, cmd->scene, cmd->seq, true, "");
		return;
	}
	refused(c, cmd, r);
	if (fenced) {
		c->stats.fenced++;
		if (l && l->token == cmd->token)
			cl_lease_lost(c, l, "fenced: another process holds it, and a batch this "
				      "process committed could not be published");
	}
	if (c->cb.published)
		c->cb.published(c->cb.ctx, cmd->scene, cmd->seq, false,
				fenced ? "another process owns the scene now" :
				r->type == REDIS_REPLY_ERROR && strncmp(r->str, "SEQ ", 4) == 0 ?
					r->str + 4 : "Redis refused it");
}

static void on_reply(redisAsyncContext *ac, void *reply, void *priv)
{
	struct cmd *cmd = priv;
	struct cluster *c = ac->data;
	const redisReply *r = reply;

	if (!cmd)
		return;  /* sent without a callback (a release at exit) */
	if (!c) {
		free(cmd);
		return;  /* the cluster is gone */
	}
	if (r && cmd->lose_answer && !c->freeing) {
		/* RIGD_FAULT_APPEND: Redis appended it, and the answer is lost
		 * with the connection. */
		cl_log(c, CL_LOG_WARN, "fault injection: the answer to the append of batch %" PRIu64
		       " of scene %s is dropped with the connection", cmd->seq, cmd->scene);
		r = NULL;
		if (c->ac == ac)
			drop(c, "fault injection (RIGD_FAULT_APPEND)");
	}
	if (!r && cmd->kind == CMD_PUBLISH && c->cb.published && !c->freeing)
		c->cb.published(c->cb.ctx, cmd->scene, cmd->seq, false,
				"the connection to Redis was lost before it answered");
	if (!r && cmd->kind == CMD_SCENE && !c->freeing)
		cl_scene_reply(c, cmd->seq, cmd->scene, (int)cmd->token, NULL);
	if (!r && (cmd->kind == CMD_PROBE || cmd->kind == CMD_WAIT) && !c->freeing)
		cmd->kind == CMD_PROBE ? cl_probe_reply(c, cmd->scene, cmd->seq, NULL) :
					 cl_wait_reply(c, NULL);
	if (c->ac == ac && c->n_out > 0 && --c->n_out > 0)
		c->wait_since_ms = cl_now_ms();
	if (r && !c->freeing) {
		switch (cmd->kind) {
		case CMD_ACQUIRE:
			acquire_reply(c, cmd, r);
			break;
		case CMD_RENEW:
			renew_reply(c, cmd, r);
			break;
		case CMD_HEARTBEAT:
			heartbeat_reply(c, cmd, r);
			break;
		case CMD_PUBLISH:
			publish_reply(c, cmd, r);
			break;
		case CMD_LOG_END:
			log_end_reply(c, cmd, r);
			break;
		case CMD_SCENE:
			cl_scene_reply(c, cmd->seq, cmd->scene, (int)cmd->token, r);
			break;
		case CMD_PROBE:
			cl_probe_reply(c, cmd->scene, cmd->seq, r);
			break;
		case CMD_WAIT:
			cl_wait_reply(c, r);
			break;
		default:
			if (r->type == REDIS_REPLY_ERROR)
				refused(c, cmd, r);
			break;
		}
	}
	free(cmd);
}

/* ---- the timer ---- */

void cl_tick(struct cluster *c)
{
	uint64_t now = cl_now_ms();

	if (c->freeing)
		return;
	if (!c->ac && now >= c->next_connect_ms)
		start_connect(c);
	if (c->ac && c->state == CLUSTER_CONNECTING &&
	    cl_elapsed_ms(now, c->connect_ms) > (uint64_t)c->timeout_ms)
		drop(c, "no answer to the connection");
	else if (c->ac && c->n_out > 0 &&
		 cl_elapsed_ms(now, c->wait_since_ms) > (uint64_t)c->timeout_ms)
		drop(c, "no answer within the timeout");
	for (int i = 0; i < c->n_leases; i++) {
		struct cl_lease *l = &c->leases[i];

		if (l->state == CLUSTER_LEASE_OWNED && now >= l->valid_until_ms)
			cl_lease_lost(c, l, "not renewed in time");
	}
	cl_reader_tick(c, now);
	cl_fault_tick(c, now);
	if (c->state != CLUSTER_UP || now < c->next_round_ms)
		return;
	c->next_round_ms = now + (uint64_t)c->lease_ms / 3;
	send_heartbeat(c);
	for (int i = 0; i < c->n_leases; i++) {
		struct cl_lease *l = &c->leases[i];

		if (l->state == CLUSTER_LEASE_OWNED)
			send_renew(c, l, CMD_RENEW);
		else if (l->wanted)
			send_acquire(c, l);
	}
}

static void tick_cb(uv_timer_t *t)
{
	cl_tick(t->data);
}

static void timer_closed(uv_handle_t *h)
{
	free(h);
}

/* ---- public ---- */

cluster *cluster_new(const cluster_config *cfg, const cluster_callbacks *cb, char *msg,
		     size_t msglen)
{
	struct cluster *c = calloc(1, sizeof(*c));

	if (!c || !(c->timer = calloc(1, sizeof(*c->timer)))) {
		free(c);
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	if (cluster_parse_url(cfg->url, c->host, &c->port) != 0) {
		snprintf(msg, msglen, "'%s' is not redis://HOST:PORT", cfg->url ? cfg->url : "");
		goto fail;
	}
	if (!cfg->id || !cl_id_valid(cfg->id, sizeof(c->id)) || !cfg->loop) {
		snprintf(msg, msglen, "a process id of [A-Za-z0-9_.:-] and a loop are needed");
		goto fail;
	}
	snprintf(c->id, sizeof(c->id), "%s", cfg->id);
	snprintf(c->advertise, sizeof(c->advertise), "%s", cfg->advertise ? cfg->advertise : "");
	c->cb = *cb;
	c->loop = cfg->loop;
	c->lease_ms = cfg->lease_ms > 0 ? cfg->lease_ms : CLUSTER_DEFAULT_LEASE_MS;
	c->log_keep = cfg->log_keep > 0 ? cfg->log_keep : CLUSTER_LOG_KEEP;
	c->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : CLUSTER_DEFAULT_TIMEOUT_MS;
	c->backoff_ms = BACKOFF_MIN_MS;
	c->wait_n = cfg->wait_replicas;
	c->wait_ms = cfg->wait_ms;
	cl_fault_init(c);
	c->state = CLUSTER_CONNECTING;
	uv_timer_init(c->loop, c->timer);
	c->timer->data = c;
	uv_timer_start(c->timer, tick_cb, TICK_MS, TICK_MS);
	start_connect(c);
	return c;
fail:
	free(c->timer);
	free(c);
	return NULL;
}

void cluster_free(cluster *c)
{
	uint64_t deadline;

	if (!c)
		return;
	/* Give the leases back so that another process need not wait for
	 * their expiry, and let the connection close after writing them; the
	 * loop turns here (lws' sockets with it) for at most timeout_ms / 4. */
	for (int i = 0; c->ac && c->state == CLUSTER_UP && i < c->n_leases; i++)
		if (c->leases[i].state == CLUSTER_LEASE_OWNED)
			send_renew(c, &c->leases[i], CMD_RELEASE);
	c->freeing = true;
	if (c->ac && c->state == CLUSTER_UP) {
		redisAsyncDisconnect(c->ac);
		deadline = cl_now_ms() + (uint64_t)c->timeout_ms / 4;
		while (c->ac && cl_now_ms() < deadline)
			uv_run(c->loop, UV_RUN_ONCE);  /* the tick wakes it */
	}
	if (c->ac) {
		redisAsyncContext *ac = c->ac;

		c->ac = NULL;
		redisAsyncFree(ac);  /* waiting commands are answered NULL */
	}
	cl_reader_close(c);
	cl_fence_free(c);
	uv_timer_stop(c->timer);
	uv_close((uv_handle_t *)c->timer, timer_closed);
	cl_procs_clear(c);
	free(c->procs);
	free(c->leases);
	free(c->follows);
	free(c);
}

const char *cluster_id(const cluster *c)
{
	return c->id;
}

int cluster_state(const cluster *c)
{
	return c->state;
}

int cluster_want(cluster *c, const char *scene)
{
	struct cl_lease *l = lease_get(c, scene);

	if (!l)
		return RIGD_E_NOMEM;
	l->wanted = true;
	if (l->state == CLUSTER_LEASE_NONE && c->state == CLUSTER_UP)
		send_acquire(c, l);
	return l->state;
}

bool cluster_owns(const cluster *c, const char *scene, int64_t *token)
{
	const struct cl_lease *l = cl_lease_find(c, scene);

	if (!l || l->state != CLUSTER_LEASE_OWNED || cl_now_ms() >= l->valid_until_ms)
		return false;
	if (token)
		*token = l->token;
	return true;
}
