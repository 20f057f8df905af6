/*
 * rooms.c: subscribers and presence of each scene (see rooms.h).
 */
#include "rooms.h"
#include "clients.h"
#include "journal.h"
#include "serve_hooks.h"
#include "server.h"
#include "util.h"
#include "views.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct room *rooms_find(struct server *S, const char *name)
{
	for (int i = 0; i < S->n_scenes; i++)
		if (strcmp(S->scenes[i]->name, name) == 0)
			return S->scenes[i];
	return NULL;
}

/* The serving state of an existing scene, made on first use. */
struct room *rooms_get(struct server *S, const char *name)
{
	struct room *st = rooms_find(S, name);
	struct room **v;
	int64_t seq;

	if (st)
		return st;
	seq = engine_seq(S->e, name);
	if (seq < 0)
		return NULL;
	v = serve_grow(S->scenes, &S->cap_scenes, S->n_scenes + 1, sizeof(*v));
	if (!v)
		return NULL;
	S->scenes = v;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->j.ring = calloc((size_t)S->o.journal, sizeof(struct jentry));
	if (!st->j.ring) {
		free(st);
		return NULL;
	}
	st->j.ring_cap = S->o.journal;
	snprintf(st->name, sizeof(st->name), "%s", name);
	st->j.name = st->name;
	st->j.epoch = seq;
	S->scenes[S->n_scenes++] = st;
	return st;
}

/* Forgets the presence of 'conn'; true when it had one. */
static bool presence_remove(struct room *st, uint64_t conn)
{
	for (int i = 0; i < st->n_pres; i++)
		if (st->pres[i].conn == conn) {
			free(st->pres[i].selection);
			st->pres[i] = st->pres[--st->n_pres];
			return true;
		}
	return false;
}

/* Drops every update the room built (the caches and step frames). */
static void frames_free(struct room *st)
{
	free(st->cache);
	st->cache = NULL;
	for (int f = 0; f < PROTO_FORMAT_COUNT - 1; f++) {
		free(st->bin_cache[f].frame);
		st->bin_cache[f].frame = NULL;
	}
	for (int f = 0; f < PROTO_FORMAT_COUNT; f++) {
		for (int i = 0; i < st->n_steps[f]; i++)
			free(st->steps[f][i].frame);
		st->n_steps[f] = 0;
	}
}

void rooms_restart(struct room *st, int64_t epoch)
{
	frames_free(st);
	journal_clear(&st->j, epoch);
}

void rooms_free(struct room *st)
{
	if (!st)
		return;
	rooms_restart(st, 0);
	journal_turn_drop(&st->j);
	views_free(&st->iv);
	free(st->j.ring);
	free(st->subs);
	for (int i = 0; i < st->n_pres; i++)
		free(st->pres[i].selection);
	free(st->pres);
	free(st);
}

void rooms_remove(struct server *S, struct room *st)
{
	for (int i = 0; i < S->n_scenes; i++)
		if (S->scenes[i] == st) {
			S->scenes[i] = S->scenes[--S->n_scenes];
			break;
		}
	rooms_free(st);
}

struct sub *rooms_sub_find(struct client *c, const char *scene_name)
{
	for (int i = 0; i < c->n_subs; i++)
		if (strcmp(c->subs[i].scene, scene_name) == 0)
			return &c->subs[i];
	return NULL;
}

/* Sends 'frame' (owned; consumed) to every subscriber of 'st' but 'except'. */
void rooms_broadcast(struct server *S, struct room *st, uint64_t except,
			    const char *frame, size_t len, const char *presence_key)
{
	for (int i = 0; i < st->n_subs; i++) {
		struct client *c = clients_get(S, st->subs[i]);
		struct reply *r;
		char *copy;

		if (!c || c->conn == except || c->dropped)
			continue;
		if (presence_key) {
			/* Coalesce: the peer's older presence, not yet sent, is
			 * replaced in place. */
			for (r = c->head; r; r = r->next)
				if (r->presence && !r->pending && strcmp(r->key, presence_key) == 0)
					break;
			if (r) {
				char *nf = serve_copy_frame(frame, S->head, len);

				if (!nf)
					continue;
				c->queued_bytes = c->queued_bytes - r->len + len;
				free(r->frame);
				r->frame = nf;
				r->len = len;
				S->m.presence_coalesced_total++;
				continue;
			}
		}
		if (!(copy = serve_copy_frame(frame, S->head, len)))
			continue;
		r = clients_enqueue(S, c, copy, len, false);
		if (r && presence_key) {
			r->presence = true;
			snprintf(r->key, sizeof(r->key), "%s", presence_key);
		}
	}
}

static char *leave_frame(struct server *S, const char *scene_name, const char *client,
			 size_t *len)
{
	proto_buf b;

	proto_buf_init(&b, S->head);
	if (proto_encode_leave(&b, scene_name, client)) {
		proto_buf_release(&b);
		return NULL;
	}
	return serve_take_frame(&b, len);
}

/* Removes the subscription of 'c' to 'scene' and tells the others. */
void rooms_unsubscribe(struct server *S, struct client *c, const char *scene_name)
{
	struct room *st = rooms_find(S, scene_name);
	struct sub *sb = rooms_sub_find(c, scene_name);

	if (sb) {
		views_sub_release(st ? &st->iv : NULL, sb);
		*sb = c->subs[--c->n_subs];
	}
	assert(c->n_subs >= 0 && (!sb || st));  /* a subscription has a room */
	if (!st)
		return;
	for (int i = 0; i < st->n_subs; i++)
		if (st->subs[i] == c->conn) {
			st->subs[i] = st->subs[--st->n_subs];
			break;
		}
	/* Only a participant (a client that announced itself with presence)
	 * has joined, so only a participant leaves. */
	if (presence_remove(st, c->conn)) {
		size_t len;
		char *f = leave_frame(S, scene_name, c->id, &len);

		if (f) {
			rooms_broadcast(S, st, c->conn, f, len, NULL);
			free(f);
		}
		if (S->hooks)  /* the other processes hear it */
			S->hooks->leave(S, c, scene_name);
	}
}
/* After a snapshot: a join notice and the last presence of every other
 * participant. */
void rooms_send_peers(struct server *S, struct client *c, struct room *st)
{
	for (int k = 0; k < st->n_pres; k++) {
		struct client *p = clients_get(S, st->pres[k].conn);
		proto_buf b;
		size_t len;
		char *f;

		if (!p || p == c)
			continue;
		proto_buf_init(&b, S->head);
		if (proto_encode_join(&b, st->name, p->id, p->name) == 0 &&
		    (f = serve_take_frame(&b, &len)) != NULL)
			clients_enqueue(S, c, f, len, false);
		proto_buf_release(&b);
		proto_buf_init(&b, S->head);
		if (proto_encode_presence(&b, st->name, p->id, p->name, st->pres[k].selection,
					  st->pres[k].n_selection) == 0 &&
		    (f = serve_take_frame(&b, &len)) != NULL)
			clients_enqueue(S, c, f, len, false);
		proto_buf_release(&b);
	}
	if (S->hooks)  /* those of the other processes */
		S->hooks->send_peers(S, c, st);
}
void rooms_presence(struct server *S, struct client *c, proto_msg *msg)
{
	struct room *st;
	struct presence *pr = NULL;
	proto_buf b;
	char key[sizeof(((struct reply *)0)->key)];
	size_t len;
	char *f;

	if (!rooms_sub_find(c, msg->scene) || !(st = rooms_find(S, msg->scene))) {
		clients_reply_code(S, c, NULL, RIGD_E_NOT_SUBSCRIBED, "scene",
				 "not subscribed to scene '%s'", msg->scene);
		return;
	}
	if (msg->name) {
		free(c->name);
		c->name = msg->name;
		msg->name = NULL;
	}
	for (int i = 0; i < st->n_pres; i++)
		if (st->pres[i].conn == c->conn)
			pr = &st->pres[i];
	if (!pr) {
		struct presence *v = serve_grow(st->pres, &st->cap_pres, st->n_pres + 1,
						    sizeof(*v));
		if (!v)
			return;
		st->pres = v;
		pr = &st->pres[st->n_pres++];
		memset(pr, 0, sizeof(*pr));
		pr->conn = c->conn;
		/* Its first presence makes it a participant: the others hear it
		 * join, then what it selected. */
		proto_buf_init(&b, S->head);
		if (proto_encode_join(&b, st->name, c->id, c->name) == 0 &&
		    (f = serve_take_frame(&b, &len)) != NULL) {
			rooms_broadcast(S, st, c->conn, f, len, NULL);
			free(f);
		}
		proto_buf_release(&b);
	}
	free(pr->selection);
	pr->selection = msg->selection;
	pr->n_selection = msg->n_selection;
	msg->selection = NULL;
	msg->n_selection = 0;

	proto_buf_init(&b, S->head);
	if (proto_encode_presence(&b, st->name, c->id, c->name, pr->selection, pr->n_selection) ||
	    !(f = serve_take_frame(&b, &len))) {
		proto_buf_release(&b);
		return;
	}
	snprintf(key, sizeof(key), "%s/%s", st->name, c->id);
	rooms_broadcast(S, st, c->conn, f, len, key);
	free(f);
	if (S->hooks)  /* the other processes hear it */
		S->hooks->presence(S, c, st, pr);
}
/* Every subscriber of a scene that is gone hears of it, once. */
void rooms_scene_gone(struct server *S, const char *name)
{
	struct room *st = rooms_find(S, name);

	if (!st)
		return;
	while (st->n_subs > 0) {
		struct client *c = clients_get(S, st->subs[st->n_subs - 1]);
		struct sub *sb;

		st->n_subs--;
		if (!c)
			continue;
		if ((sb = rooms_sub_find(c, name))) {
			views_sub_release(&st->iv, sb);
			*sb = c->subs[--c->n_subs];
		}
		clients_reply_code(S, c, NULL, RIGD_E_UNKNOWN_SCENE, "scene",
				 "scene '%s' was deleted", name);
	}
	rooms_remove(S, st);
}
/* An unsubscribe: acked with the scene's seq when it carried an
 * id, refused when there was no such subscription. */
static void unsubscribe(struct server *S, struct client *c, const struct rooms_request *q)
{
	proto_buf b;
	size_t len;
	char *f;

	if (!rooms_sub_find(c, q->scene)) {
		edit_error err;

		edit_error_set(&err, RIGD_E_NOT_SUBSCRIBED, -1, "scene",
			       "not subscribed to scene '%s'", q->scene);
		if (q->reply && (f = clients_error_frame(S, &q->req, &err, &len)))
			clients_fill(S, c, q->reply, f, len);
		return;
	}
	rooms_unsubscribe(S, c, q->scene);
	if (q->reply && q->req.present) {
		proto_buf_init(&b, S->head);
		if (proto_encode_ack(&b, &q->req, (uint64_t)engine_seq(S->e, q->scene), 0) == 0 &&
		    (f = serve_take_frame(&b, &len)))
			clients_fill(S, c, q->reply, f, len);
		proto_buf_release(&b);
	} else if (q->reply) {
		clients_fill(S, c, q->reply, NULL, 0);
	}
}

void rooms_subscribe(struct server *S, const struct rooms_request *q)
{
	struct client *c = clients_get(S, q->conn);
	struct room *st;
	struct sub *v;
	char *f;
	size_t len;

	if (!c)
		return;
	if (q->leave) {
		unsubscribe(S, c, q);
		return;
	}
	if (!engine_scene(S->e, q->scene)) {
		edit_error err;

		edit_error_set(&err, RIGD_E_UNKNOWN_SCENE, -1, "scene", "no scene '%s'", q->scene);
		if (q->reply && (f = clients_error_frame(S, &q->req, &err, &len)))
			clients_fill(S, c, q->reply, f, len);
		return;
	}
	if (S->hooks)  /* its lease and its log stream */
		S->hooks->interest(S, q->scene);
	if (q->reply)
		clients_fill(S, c, q->reply, NULL, 0);  /* the snapshot answers */
	if (rooms_sub_find(c, q->scene)) {
		/* Again: a fresh snapshot, in the format asked for this time. */
		rooms_sub_find(c, q->scene)->cursor = -1;
		rooms_sub_find(c, q->scene)->format = q->format;
		net_ws_wake(S->n, c->conn);
		return;
	}
	if (c->n_subs >= S->o.max_subs) {
		clients_reply_code(S, c, &q->req, RIGD_E_LIMIT, "scene",
				 "a connection may subscribe to %d scenes (--max-subs)", S->o.max_subs);
		return;
	}
	st = rooms_get(S, q->scene);
	v = serve_grow(c->subs, &c->cap_subs, c->n_subs + 1, sizeof(*v));
	if (!st || !v) {
		if (v)
			c->subs = v;
		clients_reply_code(S, c, &q->req, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	c->subs = v;
	{
		uint64_t *sv = st->subs;
		int cap = st->cap_subs;

		sv = serve_grow(sv, &cap, st->n_subs + 1, sizeof(*sv));
		if (!sv) {
			clients_reply_code(S, c, &q->req, RIGD_E_NOMEM, "", "out of memory");
			return;
		}
		st->subs = sv;
		st->cap_subs = cap;
	}
	memset(&c->subs[c->n_subs], 0, sizeof(c->subs[0]));
	snprintf(c->subs[c->n_subs].scene, sizeof(c->subs[0].scene), "%s", q->scene);
	c->subs[c->n_subs].cursor = -1;
	c->subs[c->n_subs].format = q->format;
	c->subs[c->n_subs].peers_pending = true;
	c->n_subs++;
	assert(c->n_subs <= S->o.max_subs && st->n_subs < st->cap_subs);
	/* A watcher is not announced: it joins with its first presence. */
	st->subs[st->n_subs++] = c->conn;
	net_ws_wake(S->n, c->conn);
}
