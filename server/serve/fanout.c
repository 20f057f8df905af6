/*
 * fanout.c: replies, then updates or snapshots, when a socket can take a
 * frame (see fanout.h).
 */
#include "fanout.h"
#include "clients.h"
#include "journal.h"
#include "metrics.h"
#include "rooms.h"
#include "util.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* True when the subscription is behind its scene. */
static bool sub_behind(struct server *S, const struct sub *sb)
{
	int64_t seq = engine_seq(S->e, sb->scene);

	return seq >= 0 && (sb->cursor < 0 || sb->cursor != seq);
}

static bool client_has_work(struct server *S, struct client *c)
{
	if (c->head && !c->head->pending)
		return true;
	if (engine_pending(S->e) > 0)
		return false;  /* the turn wakes everyone it concerns */
	for (int i = 0; i < c->n_subs; i++)
		if (sub_behind(S, &c->subs[i]))
			return true;
	return false;
}

/* One frame for one lagging subscription, or NULL. */
static char *subscription_frame(struct server *S, struct client *c, struct sub *sb, size_t *len)
{
	const scene *s = engine_scene(S->e, sb->scene);
	int64_t seq = engine_seq(S->e, sb->scene);
	struct room *st = rooms_get(S, sb->scene);
	proto_buf b;
	int covered = 0;
	bool snapshot = true;
	char *f;

	if (!s || seq < 0 || !st)
		return NULL;
	/* Cursors only move to a committed seq, and a scene's seq never goes
	 * back while it has subscribers (a deleted scene loses them). */
	assert(sb->cursor <= seq);
	if (sb->cursor >= 0 && st->cache && st->cache_from == sb->cursor && st->cache_to == seq) {
		/* Most clients keep up and share one cursor: encode once. */
		f = malloc(S->head + st->cache_len + 1);
		if (!f)
			return NULL;
		memcpy(f, st->cache, S->head + st->cache_len + 1);
		*len = st->cache_len;
		snapshot = false;
		covered = st->cache_covered;
		goto sent;
	}
	proto_buf_init(&b, S->head);
	if (sb->cursor >= 0 && journal_build_update(st, s, seq, sb->cursor, &b, &covered) == 0)
		snapshot = false;
	if (snapshot) {
		proto_buf_reset(&b);
		if (proto_encode_snapshot(&b, sb->scene, (uint64_t)seq, s)) {
			proto_buf_release(&b);
			return NULL;
		}
	}
	f = serve_take_frame(&b, len);
	if (!f) {
		proto_buf_release(&b);
		return NULL;
	}
	if (!snapshot) {
		char *copy = malloc(S->head + *len + 1);

		if (copy) {
			memcpy(copy, f, S->head + *len + 1);
			free(st->cache);
			st->cache = copy;
			st->cache_len = *len;
			st->cache_from = sb->cursor;
			st->cache_to = seq;
			st->cache_covered = covered;
		}
	}
sent:
	if (snapshot) {
		S->m.snapshots_sent_total++;
	} else {
		S->m.updates_sent_total++;
		if (covered > 1)
			S->m.updates_coalesced_total += (uint64_t)(covered - 1);
	}
	sb->cursor = seq;
	if (snapshot && sb->peers_pending) {
		sb->peers_pending = false;
		rooms_send_peers(S, c, st);
	}
	return f;
}
char *fanout_writable(void *ctx, uint64_t conn, size_t *len, bool *more)
{
	struct server *S = ctx;
	struct client *c = clients_get(S, conn);
	char *frame = NULL;

	if (!c || c->dropped)
		return NULL;
	/* Replies first, in request order; placeholders filled with nothing
	 * (a subscribe answered by its snapshot) are skipped. */
	frame = clients_next_reply(c, len);
	if (frame)
		S->m.replies_sent_total++;
	if (!frame && engine_pending(S->e) > 0 && !c->wake_after_turn) {
		/* Nothing may be built from the scenes until the turn commits;
		 * whatever this client is behind on, it hears of then. */
		uint64_t *v = serve_grow(S->wake, &S->cap_wake, S->n_wake + 1, sizeof(*v));

		if (v) {
			S->wake = v;
			S->wake[S->n_wake++] = c->conn;
			c->wake_after_turn = true;
		}
	}
	if (!frame && engine_pending(S->e) == 0) {
		for (int k = 0; k < c->n_subs && !frame; k++) {
			struct sub *sb = &c->subs[(c->next_sub + k) % c->n_subs];

			if (!sub_behind(S, sb))
				continue;
			frame = subscription_frame(S, c, sb, len);
			c->next_sub = (c->next_sub + k + 1) % c->n_subs;
		}
	}
	*more = client_has_work(S, c);
	return frame;
}
