/*
 * presence.c: presence across the processes of a cluster (see cluster.h).
 * One cluster-wide stream, rigd:presence, trimmed to about 1,000 entries,
 * carries each participant's presence and leave from the process it is
 * connected to, and a "sync" a process appends when its reader first
 * connects, asking the others to append the presence of their participants
 * again. The reader (forward.c) reads it from the moment it connects;
 * every entry is checked field by field, and this process's own entries
 * are skipped.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <stdio.h>
#include <string.h>

#define PRESENCE_KEY "rigd:presence"
#define PRESENCE_MAXLEN "1000"
#define PRESENCE_MSG_MAX (1u << 20)   /* bytes of a presence message */

int cluster_presence_send(cluster *c, const char *kind, const char *scene, const char *client,
			  const char *msg, size_t len)
{
	const char *argv[] = {"XADD", PRESENCE_KEY, "MAXLEN", "~", PRESENCE_MAXLEN, "*",
			      "from", c->id, "kind", kind, "scene", scene, "client", client,
			      "msg", msg};
	size_t lens[16];

	if (len > PRESENCE_MSG_MAX)
		return RIGD_E_TOO_LARGE;
	if (c->state != CLUSTER_UP)
		return RIGD_E_UNAVAILABLE;
	for (int i = 0; i < 16; i++)
		lens[i] = strlen(argv[i]);
	lens[15] = len;
	return cl_send(c, 16, argv, lens);
}

bool cl_take_presence(struct cluster *c, const void *fields)
{
	const redisReply *f = fields;
	const redisReply *from, *kind, *scene, *client, *msg;
	bool sync;

	if (f->type != REDIS_REPLY_ARRAY || f->elements != 10 || !(from = cl_entry_field(f, "from")) ||
	    !(kind = cl_entry_field(f, "kind")) || !(scene = cl_entry_field(f, "scene")) ||
	    !(client = cl_entry_field(f, "client")) || !(msg = cl_entry_field(f, "msg")))
		return false;
	if (!cl_id_valid(from->str, CLUSTER_ID_MAX) || msg->len > PRESENCE_MSG_MAX)
		return false;
	sync = strcmp(kind->str, "sync") == 0;
	if (sync ? strcmp(scene->str, "*") || strcmp(client->str, "*") || msg->len :
		   !cl_id_valid(scene->str, CLUSTER_SCENE_MAX + 1) ||
			   !cl_id_valid(client->str, CLUSTER_ID_MAX))
		return false;
	if (!sync && strcmp(kind->str, "leave") != 0 &&
	    (strcmp(kind->str, "presence") != 0 || msg->len == 0))
		return false;
	if (strcmp(kind->str, "leave") == 0 && msg->len)
		return false;
	if (strcmp(from->str, c->id) == 0)
		return true;  /* this process's own */
	if (c->cb.presence)
		c->cb.presence(c->cb.ctx, from->str, kind->str, scene->str, client->str, msg->str,
			       msg->len);
	return true;
}
