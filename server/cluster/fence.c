/*
 * fence.c: the append of a committed batch to its scene's log stream (see
 * cluster.h), and what settles it: the probe of the stream at one seq, WAIT for Redis replicas
 * after appends, and RIGD_FAULT_APPEND, the test-only knob that makes one
 * append fail in a chosen way (docs/deploy.md).
 *
 * Every reply is checked for its exact shape before it is used, as in
 * cluster.c.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * PUBLISH: KEYS lease, log; ARGV "id token", seq, line, maxlen, token, trim
 * ("~": about maxlen, "=": exactly).
 * Appends a committed batch to the scene's log stream only while the lease
 * holds this process's token (the fence of the log), and only as the next
 * seq of the stream when its last entry is a rigd entry: seqs stay gapless
 * and no seq is appended twice (an empty stream takes any seq).
 */
static const char publish_lua[] =
	"if redis.call('GET', KEYS[1]) ~= ARGV[1] then\n"
	"  return redis.error_reply('FENCED the lease is not held with this token')\n"
	"end\n"
	"local e = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)\n"
	"if #e == 1 and e[1][2][1] == 'seq' then\n"
	"  local last = tonumber(e[1][2][2])\n"
	"  if last and last ~= tonumber(ARGV[2]) - 1 then\n"
	"    return redis.error_reply('SEQ the log stream ends at seq ' .. e[1][2][2])\n"
	"  end\n"
	"end\n"
	"return redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[6], ARGV[4], '*', 'seq', ARGV[2],\n"
	"                  'token', ARGV[5], 'line', ARGV[3])\n";

/*
 * PROBE: KEYS log; ARGV seq. {last} when the stream holds no rigd entry of
 * that seq, else {last, token, line}; last is the stream's last seq (0:
 * empty). Entries are found from the end: seqs are gapless, so the entry of
 * seq S is the (last - S + 1)th from it.
 */
static const char probe_lua[] =
	"local function seq_of(x)\n"
	"  if x[2][1] ~= 'seq' then return nil end\n"
	"  return tonumber(x[2][2])\n"
	"end\n"
	"local e = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)\n"
	"if #e == 0 then return {0} end\n"
	"local last = seq_of(e[1])\n"
	"if not last then\n"
	"  return redis.error_reply('BADENTRY the last entry is not a rigd log entry')\n"
	"end\n"
	"local want = tonumber(ARGV[1])\n"
	"if want > last or last - want >= 100000 then return {last} end\n"
	"local n = last - want + 1\n"
	"local r = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', n)\n"
	"local x = r[n]\n"
	"if not x or seq_of(x) ~= want or x[2][3] ~= 'token' or x[2][5] ~= 'line' then\n"
	"  return {last}\n"
	"end\n"
	"return {last, x[2][4], x[2][6]}\n";

int cl_send_publish(struct cluster *c, const char *scene, uint64_t seq, int64_t token,
		    const char *line, size_t len, bool lose_answer)
{
	char lease[CLUSTER_SCENE_MAX + 16], log[CLUSTER_SCENE_MAX + 16], holder[CLUSTER_ID_MAX + 24];
	char num[24], tok[24], keep[16];
	const char *argv[] = {"EVAL", publish_lua, "2", lease, log, holder, num, line, keep, tok,
			      c->log_keep < 1000 ? "=" : "~"};
	size_t lens[11];
	int rc;

	snprintf(lease, sizeof(lease), "rigd:lease:%s", scene);
	snprintf(log, sizeof(log), "rigd:log:%s", scene);
	snprintf(holder, sizeof(holder), "%s %" PRId64, c->id, token);
	snprintf(num, sizeof(num), "%" PRIu64, seq);
	snprintf(tok, sizeof(tok), "%" PRId64, token);
	snprintf(keep, sizeof(keep), "%d", c->log_keep);
	for (int i = 0; i < 11; i++)
		lens[i] = i == 7 ? len : strlen(argv[i]);  /* the line need not end in NUL */
	rc = cl_send_cmd(c, CL_CMD_PUBLISH, scene, seq, token, lose_answer, 11, argv, lens);
	if (rc == 0)
		c->unwaited++;
	return rc;
}

int cluster_publish(cluster *c, const char *scene, uint64_t seq, const char *line, size_t len)
{
	struct cl_lease *l = cl_lease_find(c, scene);
	int fault;

	if (len > CLUSTER_BODY_MAX)
		return RIGD_E_TOO_LARGE;
	if (!l || l->state != CLUSTER_LEASE_OWNED || c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	fault = cl_fault_publish(c, scene, seq, l->token, line, len);
	if (fault <= 0)
		return fault;  /* not sent, or held back (fault injection) */
	return cl_send_publish(c, scene, seq, l->token, line, len, fault == 2);
}

int cluster_log_probe(cluster *c, const char *scene, uint64_t seq)
{
	char key[CLUSTER_SCENE_MAX + 16], num[24];
	const char *argv[] = {"EVAL", probe_lua, "1", key, num};

	snprintf(key, sizeof(key), "rigd:log:%s", scene);
	snprintf(num, sizeof(num), "%" PRIu64, seq);
	return cl_send_kind(c, CL_CMD_PROBE, scene, seq, 5, argv, NULL);
}

void cl_probe_reply(struct cluster *c, const char *scene, uint64_t seq, const void *reply)
{
	const redisReply *r = reply, *tok, *line;
	int64_t token = 0;

	if (!c->cb.probed)
		return;
	if (!r) {
		c->cb.probed(c->cb.ctx, scene, seq, -1, 0, NULL, 0);
		return;
	}
	if (r->type != REDIS_REPLY_ARRAY || (r->elements != 1 && r->elements != 3) ||
	    r->element[0]->type != REDIS_REPLY_INTEGER || r->element[0]->integer < 0)
		goto bad;
	if (r->elements == 1) {
		c->cb.probed(c->cb.ctx, scene, seq, r->element[0]->integer, 0, NULL, 0);
		return;
	}
	tok = r->element[1];
	line = r->element[2];
	if (tok->type != REDIS_REPLY_STRING || line->type != REDIS_REPLY_STRING ||
	    !cl_parse_token(tok->str, tok->len, &token) || line->len == 0 ||
	    (uint64_t)r->element[0]->integer < seq)
		goto bad;
	c->cb.probed(c->cb.ctx, scene, seq, r->element[0]->integer, token, line->str, line->len);
	return;
bad:
	c->stats.errors++;
	cl_log(c, CL_LOG_WARN, "redis: probe of rigd:log:%s at seq %" PRIu64 ": %s%.*s", scene, seq,
	       r->type == REDIS_REPLY_ERROR ? "" : "a reply of an unexpected shape",
	       r->type == REDIS_REPLY_ERROR ? (int)r->len : 0, r->type == REDIS_REPLY_ERROR ? r->str : "");
	c->cb.probed(c->cb.ctx, scene, seq, -1, 0, NULL, 0);
}

/* ---- WAIT ---- */

int cluster_wait_replicas(cluster *c)
{
	char n[16], ms[16];
	const char *argv[] = {"WAIT", n, ms};

	if (c->wait_n <= 0 || c->unwaited == 0)
		return 0;
	snprintf(n, sizeof(n), "%d", c->wait_n);
	snprintf(ms, sizeof(ms), "%d", c->wait_ms);
	c->unwaited = 0;
	return cl_send_kind(c, CL_CMD_WAIT, "", 0, 3, argv, NULL);
}

int cluster_wait_for(cluster *c, const char *scene, uint64_t seq)
{
	char key[CLUSTER_ID_MAX + 24], num[24];
	const char *argv[] = {"SET", key, num, "PX", "60000"};
	int n = c->n_unrep;

	if (c->wait_n <= 0 || c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	/* A write of this connection first: the batch may have been appended
	 * on an earlier one, and WAIT counts the replicas that have this
	 * connection's last write, which the replication stream carries after
	 * every earlier append. */
	snprintf(key, sizeof(key), "rigd:wait-mark:%s", c->id);
	snprintf(num, sizeof(num), "%" PRIu64, seq);
	if (cl_send(c, 5, argv, NULL) != 0)
		return RIGD_E_UNAVAILABLE;
	cl_wait_note(c, scene, seq);
	if (c->n_unrep == n)
		return RIGD_E_NOMEM;  /* reported unconfirmed already */
	c->unwaited++;
	return cluster_wait_replicas(c);
}

void cl_wait_note(struct cluster *c, const char *scene, uint64_t seq)
{
	struct cl_unrep *v;

	if (c->n_unrep == c->cap_unrep) {
		int cap = c->cap_unrep ? c->cap_unrep * 2 : 16;

		if (!(v = realloc(c->unrep, (size_t)cap * sizeof(*v)))) {
			if (c->cb.published)  /* out of memory: said not confirmed */
				c->cb.published(c->cb.ctx, scene, seq, false, "out of memory");
			return;
		}
		c->unrep = v;
		c->cap_unrep = cap;
	}
	v = &c->unrep[c->n_unrep++];
	snprintf(v->scene, sizeof(v->scene), "%s", scene);
	v->seq = seq;
}

/* Reports every noted append: published ok when 'got' replicas suffice,
 * else unreplicated, or lost (got < 0). The list is taken first: a
 * callback may append (and note) again. */
static void wait_settle(struct cluster *c, long long got)
{
	struct cl_unrep *v = c->unrep;
	int n = c->n_unrep;

	c->unrep = NULL;
	c->n_unrep = c->cap_unrep = 0;
	for (int i = 0; i < n; i++) {
		if (got >= c->wait_n) {
			if (c->cb.published)
				c->cb.published(c->cb.ctx, v[i].scene, v[i].seq, true, "");
		} else if (got >= 0) {
			if (c->cb.unreplicated)
				c->cb.unreplicated(c->cb.ctx, v[i].scene, v[i].seq, (int)got);
		} else if (c->cb.published) {
			c->cb.published(c->cb.ctx, v[i].scene, v[i].seq, false,
					"the connection to Redis was lost before WAIT answered");
		}
	}
	free(v);
}

void cl_wait_reply(struct cluster *c, const void *reply)
{
	const redisReply *r = reply;

	if (r && r->type != REDIS_REPLY_INTEGER) {
		c->stats.errors++;
		cl_log(c, CL_LOG_WARN, "redis: WAIT: %s%.*s",
		       r->type == REDIS_REPLY_ERROR ? "" : "a reply of an unexpected shape",
		       r->type == REDIS_REPLY_ERROR ? (int)r->len : 0,
		       r->type == REDIS_REPLY_ERROR ? r->str : "");
		wait_settle(c, 0);
		return;
	}
	if (r && r->integer < c->wait_n)
		cl_log(c, CL_LOG_WARN, "redis: WAIT %d %d: %lld replicas confirmed %d appends",
		       c->wait_n, c->wait_ms, r->integer, c->n_unrep);
	wait_settle(c, r ? r->integer : -1);
}

void cl_wait_lost(struct cluster *c)
{
	c->unwaited = 0;
	if (c->n_unrep)
		wait_settle(c, -1);
}

/* ---- RIGD_FAULT_APPEND (tests only) ---- */

void cl_fault_init(struct cluster *c)
{
	const char *v = getenv("RIGD_FAULT_APPEND");
	char *end;
	long n;

	if (!v || !*v)
		return;
	n = strtol(v, &end, 10);
	if (n < 1 || *end != ':')
		goto bad;
	if (strcmp(end + 1, "unsent") == 0)
		c->fault_kind = 1;
	else if (strcmp(end + 1, "lose-answer") == 0)
		c->fault_kind = 2;
	else if (strncmp(end + 1, "hold:", 5) == 0) {
		long ms = strtol(end + 6, &end, 10);

		if (*end || ms < 1 || ms > 600000)
			goto bad;
		c->fault_kind = 3;
		c->fault_ms = (int)ms;
	} else
		goto bad;
	c->fault_at = n;
	cl_log(c, CL_LOG_WARN, "fault injection (tests only): RIGD_FAULT_APPEND=%s", v);
	return;
bad:
	cl_log(c, CL_LOG_ERROR, "RIGD_FAULT_APPEND=%s is not N:unsent, N:lose-answer or "
	       "N:hold:MS: ignored", v);
}

int cl_fault_publish(struct cluster *c, const char *scene, uint64_t seq, int64_t token,
		     const char *line, size_t len)
{
	struct cl_held *h;

	if (!c->fault_kind || ++c->n_appends != c->fault_at)
		return 1;
	if (c->fault_kind == 2)
		return 2;
	if (c->fault_kind == 1) {
		cl_log(c, CL_LOG_WARN, "fault injection: the append of batch %" PRIu64 " of scene %s "
		       "is not sent", seq, scene);
		return RIGD_E_UNAVAILABLE;
	}
	if (!(h = calloc(1, sizeof(*h))) || !(h->line = malloc(len))) {
		free(h);
		return RIGD_E_NOMEM;
	}
	snprintf(h->scene, sizeof(h->scene), "%s", scene);
	h->seq = seq;
	h->token = token;
	memcpy(h->line, line, len);
	h->len = len;
	h->send_ms = cl_now_ms() + (uint64_t)c->fault_ms;
	c->held = h;
	cl_log(c, CL_LOG_WARN, "fault injection: the append of batch %" PRIu64 " of scene %s is "
	       "held back %d ms", seq, scene, c->fault_ms);
	return 0;
}

void cl_fault_tick(struct cluster *c, uint64_t now)
{
	struct cl_held *h = c->held;
	int rc;

	if (!h || now < h->send_ms)
		return;
	c->held = NULL;
	/* With the token it had: the script fences it if the lease moved. */
	rc = cl_send_publish(c, h->scene, h->seq, h->token, h->line, h->len, false);
	cl_log(c, CL_LOG_WARN, "fault injection: the held append of batch %" PRIu64 " of scene %s "
	       "%s", h->seq, h->scene, rc ? "cannot be sent: Redis is unreachable" : "is sent now");
	if (rc && c->cb.published)
		c->cb.published(c->cb.ctx, h->scene, h->seq, false,
				"the connection to Redis was lost before it answered");
	cluster_wait_replicas(c);
	free(h->line);
	free(h);
}

void cl_fence_free(struct cluster *c)
{
	if (c->held)
		free(c->held->line);
	free(c->held);
	c->held = NULL;
	free(c->unrep);
	c->unrep = NULL;
	c->n_unrep = c->cap_unrep = 0;
}
