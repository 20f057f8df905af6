/*
 * catchup.c: a process that fell behind what a scene's log stream keeps
 * asks the other processes, the owner or not, for the batches it lacks
 * (see cluster.h). The request is an entry of the asked process's request
 * stream rigd:fwd:ID with exactly the
 * fields from, scene and since; each batch comes back as an entry of the
 * asker's answer stream rigd:ans:ID with exactly scene, seq, line and more.
 * Both are told apart from relayed edits and their answers by their
 * number of fields, and checked field by field before use.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int cluster_catchup_ask(cluster *c, const char *owner, const char *scene, uint64_t since)
{
	char key[CLUSTER_ID_MAX + 16], num[24];
	const char *f[6] = {"from", c->id, "scene", scene, "since", num};
	size_t l[6];

	if (!cl_id_valid(owner, CLUSTER_ID_MAX))
		return RIGD_E_BAD_ID;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(key, sizeof(key), "rigd:fwd:%s", owner);
	snprintf(num, sizeof(num), "%" PRIu64, since);
	for (int i = 0; i < 6; i++)
		l[i] = strlen(f[i]);
	return cl_append(c, key, f, l, 6);
}

int cluster_catchup_line(cluster *c, const char *to, const char *scene, uint64_t seq,
			 const char *line, size_t len, bool more)
{
	char key[CLUSTER_ID_MAX + 16], num[24];
	const char *f[8] = {"scene", scene, "seq", num, "line", line, "more", more ? "1" : "0"};
	size_t l[8];

	if (!cl_id_valid(to, CLUSTER_ID_MAX))
		return RIGD_E_BAD_ID;
	if (len > CLUSTER_BODY_MAX)
		return RIGD_E_TOO_LARGE;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(key, sizeof(key), "rigd:ans:%s", to);
	snprintf(num, sizeof(num), "%" PRIu64, seq);
	for (int i = 0; i < 8; i++)
		l[i] = strlen(f[i]);
	l[5] = len;
	return cl_append(c, key, f, l, 8);
}

/* A seq: 1..2^53 in decimal, no sign, no leading zero. */
static bool read_seq(const redisReply *v, uint64_t *out)
{
	int64_t n;

	if (!cl_parse_token(v->str, v->len, &n) || n < 1 || n > ((int64_t)1 << 53))
		return false;
	*out = (uint64_t)n;
	return true;
}

bool cl_take_catchup_ask(struct cluster *c, const void *fields)
{
	const redisReply *f = fields, *from, *scene, *since;
	uint64_t n;

	if (f->elements != 6 || !(from = cl_entry_field(f, "from")) ||
	    !(scene = cl_entry_field(f, "scene")) ||
	    !(since = cl_entry_field(f, "since")) || !cl_id_valid(from->str, CLUSTER_ID_MAX) ||
	    !cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) || !read_seq(since, &n))
		return false;
	if (c->cb.catchup_ask)
		c->cb.catchup_ask(c->cb.ctx, from->str, scene->str, n);
	return true;
}

bool cl_take_catchup_line(struct cluster *c, const void *fields)
{
	const redisReply *f = fields, *scene, *seq, *line, *more;
	uint64_t n;

	if (f->elements != 8 || !(scene = cl_entry_field(f, "scene")) ||
	    !(seq = cl_entry_field(f, "seq")) ||
	    !(line = cl_entry_field(f, "line")) || !(more = cl_entry_field(f, "more")) ||
	    !cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) || !read_seq(seq, &n) ||
	    line->len == 0 || line->len > CLUSTER_BODY_MAX || more->len != 1 ||
	    (more->str[0] != '0' && more->str[0] != '1'))
		return false;
	if (c->cb.catchup_line)
		c->cb.catchup_line(c->cb.ctx, scene->str, n, line->str, line->len,
				   more->str[0] == '1');
	return true;
}
