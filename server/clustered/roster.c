/*
 * roster.c: the participants of other processes (see roster.h). Each is
 * kept by (scene, client) with the process it is on, its name and its last
 * selection, whether or not this process has subscribers of the scene, so
 * that a subscriber arriving later is told of it.
 */
#include "roster.h"
#include "state.h"

#include "serve/clients.h"
#include "serve/log.h"
#include "serve/rooms.h"
#include "serve/server.h"
#include "serve/util.h"

#include "cluster/cluster.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One participant of another process. */
struct remote {
	char proc[CLUSTER_ID_MAX];
	char scene_name[SCENE_ID_MAX + 1];
	char client[CLIENT_ID_MAX];
	char *name;                  /* owned; NULL: none */
	edit_id *selection;          /* owned */
	int n_selection;
};

struct roster {
	struct remote *v;
	int n, cap;
};

static struct remote *find(struct server *S, const char *scene_name, const char *client)
{
	struct roster *R = S->cx->roster;

	for (int i = 0; R && i < R->n; i++)
		if (strcmp(R->v[i].scene_name, scene_name) == 0 && strcmp(R->v[i].client, client) == 0)
			return &R->v[i];
	return NULL;
}

/* Removes entry 'i' (its strings freed). */
static void drop(struct roster *R, int i)
{
	free(R->v[i].name);
	free(R->v[i].selection);
	R->v[i] = R->v[--R->n];
}

/* The client-format presence message of a participant: {"type":"presence",
 * "scene","selection":[ids],"name"} (name null when none). 0 or an error. */
static int presence_msg(proto_buf *b, const char *scene_name, const char *name, const edit_id *sel,
			int n)
{
	int rc = PROTO_BUF_LIT(b, "{\"type\":\"presence\",\"scene\":") ||
		 json_buf_string(b, scene_name, 0) || PROTO_BUF_LIT(b, ",\"selection\":[");

	for (int i = 0; !rc && i < n; i++)
		rc = (i && PROTO_BUF_LIT(b, ",")) || json_buf_string(b, sel[i].s, 0);
	rc = rc || PROTO_BUF_LIT(b, "],\"name\":") ||
	     (name ? json_buf_string(b, name, 0) : PROTO_BUF_LIT(b, "null")) ||
	     PROTO_BUF_LIT(b, "}");
	return rc ? RIGD_E_NOMEM : 0;
}

void roster_local_presence(struct server *S, struct client *c, struct room *st,
			   const struct presence *pr)
{
	proto_buf b;

	if (!S->cx->cl)
		return;
	proto_buf_init(&b, 0);
	if (presence_msg(&b, st->name, c->name, pr->selection, pr->n_selection) == 0 &&
	    cluster_presence_send(S->cx->cl, "presence", st->name, c->id, b.data, b.len) == RIGD_E_NOMEM)
		serve_log(LOG_WARN, "cluster: out of memory relaying a presence of %s", c->id);
	proto_buf_release(&b);
}

void roster_local_leave(struct server *S, struct client *c, const char *scene_name)
{
	if (S->cx->cl)
		cluster_presence_send(S->cx->cl, "leave", scene_name, c->id, "", 0);
}

/* Builds a frame with 'enc' status; NULL when it failed. */
static char *frame_of(proto_buf *b, int rc, size_t *len)
{
	char *f = rc ? NULL : serve_take_frame(b, len);

	proto_buf_release(b);
	return f;
}

void roster_send_peers(struct server *S, struct client *c, struct room *st)
{
	struct roster *R = S->cx->roster;
	proto_buf b;
	size_t len;
	char *f;

	for (int i = 0; R && i < R->n; i++) {
		const struct remote *r = &R->v[i];

		if (strcmp(r->scene_name, st->name) != 0)
			continue;
		proto_buf_init(&b, S->head);
		if ((f = frame_of(&b, proto_encode_join(&b, st->name, r->client, r->name), &len)))
			clients_enqueue(S, c, f, len, false);
		proto_buf_init(&b, S->head);
		f = frame_of(&b, proto_encode_presence(&b, st->name, r->client, r->name, r->selection,
						       r->n_selection), &len);
		if (f)
			clients_enqueue(S, c, f, len, false);
	}
}

/* Tells the local subscribers of 'scene' that remote 'client' left. */
static void tell_leave(struct server *S, const char *scene_name, const char *client)
{
	struct room *st = rooms_find(S, scene_name);
	proto_buf b;
	size_t len;
	char *f;

	if (!st)
		return;
	proto_buf_init(&b, S->head);
	if ((f = frame_of(&b, proto_encode_leave(&b, scene_name, client), &len))) {
		rooms_broadcast(S, st, 0, f, len, NULL);
		free(f);
	}
}

/* A presence of remote 'client' (msg decoded and checked): recorded, and
 * relayed to the local subscribers (a join first when it is new). */
static void take_presence(struct server *S, const char *from, const char *client, proto_msg *m)
{
	struct roster *R = S->cx->roster;
	struct remote *r = find(S, m->scene, client), *v;
	struct room *st = rooms_find(S, m->scene);
	char key[SCENE_ID_MAX + CLIENT_ID_MAX + 2];
	proto_buf b;
	size_t len;
	char *f;

	if (!r) {
		if (!(v = serve_grow(R->v, &R->cap, R->n + 1, sizeof(*v))))
			return;
		R->v = v;
		r = &R->v[R->n++];
		memset(r, 0, sizeof(*r));
		snprintf(r->scene_name, sizeof(r->scene_name), "%s", m->scene);
		snprintf(r->client, sizeof(r->client), "%s", client);
		if (st) {
			proto_buf_init(&b, S->head);
			if ((f = frame_of(&b, proto_encode_join(&b, m->scene, client, m->name), &len))) {
				rooms_broadcast(S, st, 0, f, len, NULL);
				free(f);
			}
		}
	}
	snprintf(r->proc, sizeof(r->proc), "%s", from);
	free(r->name);
	free(r->selection);
	r->name = m->name;
	r->selection = m->selection;
	r->n_selection = m->n_selection;
	m->name = NULL;
	m->selection = NULL;
	m->n_selection = 0;
	if (!st)
		return;
	proto_buf_init(&b, S->head);
	f = frame_of(&b, proto_encode_presence(&b, r->scene_name, client, r->name, r->selection,
					       r->n_selection), &len);
	if (!f)
		return;
	snprintf(key, sizeof(key), "%s/%s", r->scene_name, client);
	rooms_broadcast(S, st, 0, f, len, key);  /* coalesced like a local one */
	free(f);
}

/* Appends the presence of every local participant again (a sync). */
static void resend_all(struct server *S)
{
	for (int i = 0; i < S->n_scenes; i++) {
		struct room *st = S->scenes[i];

		for (int k = 0; k < st->n_pres; k++) {
			struct client *c = clients_get(S, st->pres[k].conn);

			if (c)
				roster_local_presence(S, c, st, &st->pres[k]);
		}
	}
}

void roster_entry(void *ctx, const char *from, const char *kind, const char *scene_name,
		  const char *client, const char *msg, size_t len)
{
	struct server *S = ctx;
	struct remote *r;
	proto_msg m;
	edit_error err;

	if (!S->cx->roster && !(S->cx->roster = calloc(1, sizeof(*S->cx->roster))))
		return;
	if (strcmp(kind, "sync") == 0) {
		resend_all(S);
		return;
	}
	if (strcmp(kind, "leave") == 0) {
		if ((r = find(S, scene_name, client)) && strcmp(r->proc, from) == 0) {
			drop(S->cx->roster, (int)(r - S->cx->roster->v));
			tell_leave(S, scene_name, client);
		}
		return;
	}
	if (proto_decode_msg(msg, len, &S->lim, &m, NULL, &err) != 0 || m.type != PROTO_PRESENCE ||
	    strcmp(m.scene, scene_name) != 0) {
		serve_log(LOG_WARN, "cluster: a presence of %s on process %s is refused: %s", client,
			  from, err.code ? err.message : "it is not a presence of that scene");
		proto_msg_release(&m);
		return;
	}
	if (engine_scene(S->e, scene_name))
		take_presence(S, from, client, &m);
	proto_msg_release(&m);
}

void roster_reader_up(void *ctx)
{
	struct server *S = ctx;

	if (S->cx->cl)
		cluster_presence_send(S->cx->cl, "sync", "*", "*", "", 0);
}

void roster_tick(struct server *S)
{
	struct roster *R = S->cx->roster;
	char scene_name[SCENE_ID_MAX + 1], client[CLIENT_ID_MAX];

	if (!R || !S->cx->cl || cluster_state(S->cx->cl) != CLUSTER_UP ||
	    cluster_processes(S->cx->cl, NULL, 0) == 0)
		return;
	for (int i = R->n - 1; i >= 0; i--)
		if (!cluster_process_url(S->cx->cl, R->v[i].proc)) {
			snprintf(scene_name, sizeof(scene_name), "%s", R->v[i].scene_name);
			snprintf(client, sizeof(client), "%s", R->v[i].client);
			drop(R, i);
			tell_leave(S, scene_name, client);
		}
}

void roster_scene_gone(struct server *S, const char *name)
{
	struct roster *R = S->cx->roster;

	for (int i = R ? R->n - 1 : -1; i >= 0; i--)
		if (strcmp(R->v[i].scene_name, name) == 0)
			drop(R, i);
}

void roster_free(struct server *S)
{
	struct roster *R = S->cx->roster;

	while (R && R->n)
		drop(R, R->n - 1);
	if (R)
		free(R->v);
	free(R);
	S->cx->roster = NULL;
}
