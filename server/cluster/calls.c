/*
 * calls.c: requests other than edit batches relayed to a scene's owner
 * (see cluster.h, cluster_call): undo, redo and the HTTP writes that are
 * not edits (log, glTF and SVG imports), and the HTTP answers to them.
 *
 * A call is an entry of the owner's request stream rigd:fwd:OWNER with
 * exactly the fields from, rid, scene, kind, args and body; an HTTP answer
 * an entry of the caller's answer stream rigd:ans:ID with exactly rid,
 * status and body. Both are told apart from relayed edits, their answers
 * and the entries of a catch-up by their number of fields, and checked
 * field by field before use. 'args' and 'body' are bytes (a .glb body
 * holds NULs): their lengths travel with them. Nothing here reads them
 * beyond their size; serve/ decodes them.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define KIND_MAX 16                 /* bytes of a call's kind */

/* Whether 'kind' is 1..KIND_MAX bytes of [a-z]. */
static bool kind_ok(const char *kind, size_t len)
{
	if (len == 0 || len > KIND_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (kind[i] < 'a' || kind[i] > 'z')
			return false;
	return true;
}

int cluster_call(cluster *c, const char *owner, const cluster_call_info *k)
{
	char key[CLUSTER_ID_MAX + 16], num[24];
	const char *f[12] = {"from", c->id, "rid", num, "scene", k->scene, "kind", k->kind,
			     "args", k->args ? k->args : "", "body", k->body ? k->body : ""};
	size_t l[12];

	if (!cl_id_valid(owner, CLUSTER_ID_MAX))
		return RIGD_E_BAD_ID;
	if (k->body_len > CLUSTER_BODY_MAX || k->args_len > CLUSTER_ARGS_MAX)
		return RIGD_E_TOO_LARGE;
	if (!kind_ok(k->kind, strlen(k->kind)) || k->rid == 0)
		return RIGD_E_BAD_FIELD;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(key, sizeof(key), "rigd:fwd:%s", owner);
	snprintf(num, sizeof(num), "%" PRIu64, k->rid);
	for (int i = 0; i < 12; i++)  /* args and body are bytes: their lengths are given */
		l[i] = i == 9 ? k->args_len : i == 11 ? k->body_len : strlen(f[i]);
	return cl_append(c, key, f, l, 12);
}

int cluster_reply(cluster *c, const char *to, uint64_t rid, int status, const char *body,
		  size_t len)
{
	char key[CLUSTER_ID_MAX + 16], num[24], st[8];
	const char *f[6] = {"rid", num, "status", st, "body", body ? body : ""};
	size_t l[6];

	if (!cl_id_valid(to, CLUSTER_ID_MAX))
		return RIGD_E_BAD_ID;
	if (len > CLUSTER_BODY_MAX)
		return RIGD_E_TOO_LARGE;
	if (status < 100 || status > 599 || rid == 0)
		return RIGD_E_BAD_FIELD;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	snprintf(key, sizeof(key), "rigd:ans:%s", to);
	snprintf(num, sizeof(num), "%" PRIu64, rid);
	snprintf(st, sizeof(st), "%d", status);
	for (int i = 0; i < 6; i++)
		l[i] = i == 5 ? (body ? len : 0) : strlen(f[i]);
	return cl_append(c, key, f, l, 6);
}

bool cl_take_call(struct cluster *c, const void *fields)
{
	const redisReply *f = fields, *from, *rid, *scene, *kind, *args, *body;
	cluster_call_info k;
	int64_t n;

	if (f->elements != 12 || !(from = cl_entry_field(f, "from")) ||
	    !(rid = cl_entry_field(f, "rid")) || !(scene = cl_entry_field(f, "scene")) ||
	    !(kind = cl_entry_field(f, "kind")) || !(args = cl_entry_bytes(f, "args")) ||
	    !(body = cl_entry_bytes(f, "body")))
		return false;
	if (!cl_id_valid(from->str, CLUSTER_ID_MAX) || !cl_parse_token(rid->str, rid->len, &n) ||
	    !cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) || !kind_ok(kind->str, kind->len) ||
	    args->len > CLUSTER_ARGS_MAX || body->len > CLUSTER_BODY_MAX ||
	    (args->len > 0 && args->str[args->len - 1] != '\0'))
		return false;
	k.from = from->str;
	k.rid = (uint64_t)n;
	k.scene = scene->str;
	k.kind = kind->str;
	k.args = args->str;
	k.args_len = args->len;
	k.body = body->str;
	k.body_len = body->len;
	if (c->cb.call)
		c->cb.call(c->cb.ctx, &k);
	return true;
}

bool cl_take_reply(struct cluster *c, const void *fields)
{
	const redisReply *f = fields, *rid, *status, *body;
	int64_t n, st;

	if (f->elements != 6 || !(rid = cl_entry_field(f, "rid")) ||
	    !(status = cl_entry_field(f, "status")) || !(body = cl_entry_field(f, "body")) ||
	    !cl_parse_token(rid->str, rid->len, &n) ||
	    !cl_parse_token(status->str, status->len, &st) || st < 100 || st > 599 ||
	    body->len > CLUSTER_BODY_MAX)
		return false;
	if (c->cb.reply)
		c->cb.reply(c->cb.ctx, (uint64_t)n, (int)st, body->str, body->len);
	return true;
}
