/*
 * fanout.c: replies, then updates or snapshots, when a socket can take a
 * frame (see fanout.h).
 */
#include "fanout.h"
#include "clients.h"
#include "interest.h"
#include "journal.h"
#include "metrics.h"
#include "rooms.h"
#include "server.h"
#include "util.h"
#include "views.h"

#include "codec/proto_bin.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* True when the subscription is behind its scene. */
static bool sub_behind(struct server *S, const struct sub *sb)
{
	int64_t seq = engine_seq(S->e, sb->scene);

	return seq >= 0 && (sb->cursor < 0 || sb->cursor != seq || sb->view_pending);
}

/* True when frames may be built from the scene of 'sb': none of its
 * batches awaits a commit (memory holds what is stored). */
static bool sub_quiet(struct server *S, const struct sub *sb)
{
	return engine_scene_pending(S->e, sb->scene) == 0;
}

static bool client_has_work(struct server *S, struct client *c)
{
	if (c->head && !c->head->pending)
		return true;
	if (c->ready)
		return true;
	for (int i = 0; i < c->n_subs; i++)
		if (sub_quiet(S, &c->subs[i]) && sub_behind(S, &c->subs[i]))
			return true;
	return false;  /* the turn wakes everyone it concerns */
}

/* Where the shared frame of a subscription's format is kept: the JSON
 * update's fields or the binary format's slot, seen through one shape. */
struct cache_ref {
	char **frame;
	size_t *len;
	int64_t *from, *to;
	int *covered;
};

static struct cache_ref cache_of(struct room *st, int format)
{
	struct bin_cache *bc;

	if (format == PROTO_FORMAT_JSON)
		return (struct cache_ref){ &st->cache, &st->cache_len, &st->cache_from,
					   &st->cache_to, &st->cache_covered };
	assert(format > 0 && format < PROTO_FORMAT_COUNT);
	bc = &st->bin_cache[format - 1];
	return (struct cache_ref){ &bc->frame, &bc->len, &bc->from, &bc->to, &bc->covered };
}

/* Keeps a copy of update 'f' (with 'head' bytes of room, 'len' bytes of
 * frame) from 'from' to 'to' for the next client at that cursor; without
 * memory the old copy stays (it is keyed by its own cursor). */
static void cache_store(struct cache_ref cr, const char *f, size_t head, size_t len, int64_t from,
			int64_t to, int covered)
{
	char *copy = serve_copy_frame(f, head, len);

	if (!copy)
		return;
	free(*cr.frame);
	*cr.frame = copy;
	*cr.len = len;
	*cr.from = from;
	*cr.to = to;
	*cr.covered = covered;
}

/* Drops every step frame of 'format'. */
static void steps_clear(struct room *st, int format)
{
	for (int i = 0; i < st->n_steps[format]; i++)
		free(st->steps[format][i].frame);
	st->n_steps[format] = 0;
}

/* The step frame of 'format' that starts at 'cursor', or NULL. */
static const struct step_frame *step_at(const struct room *st, int format, int64_t cursor)
{
	for (int i = 0; i < st->n_steps[format]; i++)
		if (st->steps[format][i].from == cursor)
			return &st->steps[format][i];
	return NULL;
}

/* Which formats (bit 1 << format) a subscriber of 'st' without a view (a
 * view gets frames of its own) uses while at most FANOUT_STEPS turns
 * behind 'from': its cursor is where a kept step frame, or the new one,
 * starts. One pass over the subscribers for every format. */
static unsigned steps_wanted(struct server *S, const struct room *st, int64_t from)
{
	unsigned want = 0;

	for (int k = 0; k < st->n_subs; k++) {
		struct client *c = clients_get(S, st->subs[k]);
		struct sub *sb = c ? rooms_sub_find(c, st->name) : NULL;
		int f = sb ? sb->format : 0;

		if (sb && !views_active(sb) && sb->cursor <= from &&
		    sb->cursor >= (st->n_steps[f] ? st->steps[f][0].from : from))
			want |= 1u << f;
	}
	return want;
}

void fanout_turn_end(struct server *S, struct room *st, int64_t from, int64_t to)
{
	const scene *s = engine_scene(S->e, st->name);

	unsigned want;

	if (!s || s != st->scene_seen)
		return;  /* a reloaded scene: the next frame resyncs everyone */
	for (int f = 0; f < PROTO_FORMAT_COUNT; f++)
		if (st->n_steps[f] && st->steps[f][st->n_steps[f] - 1].to != from)
			steps_clear(st, f);  /* not contiguous: start again */
	want = steps_wanted(S, st, from);
	for (int f = 0; f < PROTO_FORMAT_COUNT; f++) {
		struct step_frame *sf;
		proto_buf b;
		int covered = 0;
		size_t len;
		char *frame;

		if (!(want & (1u << f)))
			continue;
		proto_buf_init(&b, S->head);
		if (journal_build_frame(&st->j, s, to, from, f, &b, &covered) ||
		    b.len > FANOUT_STEP_MAX_BYTES || !(frame = serve_take_frame(&b, &len))) {
			proto_buf_release(&b);
			steps_clear(st, f);
			continue;
		}
		if (st->n_steps[f] == FANOUT_STEPS) {
			free(st->steps[f][0].frame);
			memmove(&st->steps[f][0], &st->steps[f][1],
				(FANOUT_STEPS - 1) * sizeof(st->steps[f][0]));
			st->n_steps[f]--;
		}
		sf = &st->steps[f][st->n_steps[f]++];
		*sf = (struct step_frame){ frame, len, from, to, covered };
		S->m.step_frames_total++;
	}
}

/* The subscription's snapshot (JSON or binary) into 'b'. */
static int encode_snapshot(proto_buf *b, const struct sub *sb, int64_t seq, const scene *s)
{
	if (sb->format == PROTO_FORMAT_JSON)
		return proto_encode_snapshot(b, sb->scene, (uint64_t)seq, s);
	return proto_bin_encode_snapshot(b, sb->format, sb->scene, (uint64_t)seq, s);
}

/* One frame for one lagging subscription, or NULL. */
static char *subscription_frame(struct server *S, struct client *c, struct sub *sb, size_t *len)
{
	const scene *s = engine_scene(S->e, sb->scene);
	int64_t seq = engine_seq(S->e, sb->scene);
	struct room *st = rooms_get(S, sb->scene);
	struct cache_ref cr;
	proto_buf b;
	int covered = 0;
	bool snapshot = true;
	char *f;

	if (!s || seq < 0 || !st)
		return NULL;
	/* Cursors only move to a committed seq, and a scene's seq never goes
	 * back while it has subscribers (a deleted scene loses them). */
	assert(sb->cursor <= seq);
	if (st->scene_seen != s) {
		/* The engine reloaded the scene from storage (its last resort
		 * after a failed rollback): handles, the indices of binary
		 * frames, may differ, so every lagging client resyncs from a
		 * snapshot. */
		if (st->scene_seen)
			rooms_restart(st, seq);
		st->scene_seen = s;
		views_scene_reloaded(&st->iv);
	}
	if (views_active(sb))
		return interest_frame(S, c, sb, st, s, seq, len);
	cr = cache_of(st, sb->format);
	if (sb->cursor >= 0) {
		/* A few turns behind: the next turn's own frame, so the
		 * client sees every pose in order. */
		const struct step_frame *sf = step_at(st, sb->format, sb->cursor);

		if (sf) {
			if (!(f = serve_copy_frame(sf->frame, S->head, sf->len)))
				return NULL;
			*len = sf->len;
			snapshot = false;
			covered = sf->covered;
			seq = sf->to;
			goto sent;
		}
	}
	if (sb->cursor >= 0 && *cr.frame && *cr.from == sb->cursor && *cr.to == seq) {
		/* Most clients keep up and share one cursor: encode once per
		 * format. */
		if (!(f = serve_copy_frame(*cr.frame, S->head, *cr.len)))
			return NULL;
		*len = *cr.len;
		snapshot = false;
		covered = *cr.covered;
		goto sent;
	}
	proto_buf_init(&b, S->head);
	if (sb->cursor >= 0 &&
	    journal_build_frame(&st->j, s, seq, sb->cursor, sb->format, &b, &covered) == 0)
		snapshot = false;
	if (snapshot) {
		proto_buf_reset(&b);
		if (encode_snapshot(&b, sb, seq, s)) {
			proto_buf_release(&b);
			return NULL;
		}
	}
	f = serve_take_frame(&b, len);
	if (!f) {
		proto_buf_release(&b);
		return NULL;
	}
	if (!snapshot)
		cache_store(cr, f, S->head, *len, sb->cursor, seq, covered);
sent:
	metrics_count_sent(&S->m, snapshot, covered);
	sb->cursor = seq;
	if (snapshot && sb->peers_pending) {
		sb->peers_pending = false;
		rooms_send_peers(S, c, st);
	}
	return f;
}

char *fanout_writable(void *ctx, uint64_t conn, size_t *len, bool *more, bool *binary)
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
	clients_flow(S, c);
	if (!frame && c->ready) {
		/* An update built in the window after a commit (fanout_prepare),
		 * while its scene was what is stored; unless the client has
		 * unsubscribed from the scene since. */
		bool still = false;

		for (int k = 0; k < c->n_subs && !still; k++)
			still = strcmp(c->subs[k].scene, c->ready_scene) == 0;
		if (still) {
			frame = c->ready;
			*len = c->ready_len;
			*binary = c->ready_binary;
		} else {
			free(c->ready);
		}
		c->ready = NULL;
	}
	bool busy = false;
	for (int k = 0; k < c->n_subs && !busy; k++)
		busy = !sub_quiet(S, &c->subs[k]) && sub_behind(S, &c->subs[k]);
	if (!frame && busy && !c->wake_after_turn) {
		/* Nothing may be built from a scene until its batches commit;
		 * whatever this client is behind on there, it hears of then. */
		uint64_t *v = serve_grow(S->wake, &S->cap_wake, S->n_wake + 1, sizeof(*v));

		if (v) {
			S->wake = v;
			S->wake[S->n_wake++] = c->conn;
			c->wake_after_turn = true;
		}
	}
	if (!frame) {
		for (int k = 0; k < c->n_subs && !frame; k++) {
			struct sub *sb = &c->subs[(c->next_sub + k) % c->n_subs];

			if (!sub_quiet(S, sb) || !sub_behind(S, sb))
				continue;
			frame = subscription_frame(S, c, sb, len);
			if (frame)
				*binary = sb->format != PROTO_FORMAT_JSON;
			c->next_sub = (c->next_sub + k + 1) % c->n_subs;
		}
	}
	*more = client_has_work(S, c);
	return frame;
}

void fanout_prepare(struct server *S)
{
	for (int i = 0; i < S->cap_clients; i++) {
		struct client *c = S->clients[i];

		if (!c || c->dropped || c->ready)
			continue;  /* one held update at a time: the next covers more */
		for (int k = 0; k < c->n_subs && !c->ready; k++) {
			struct sub *sb = &c->subs[(c->next_sub + k) % c->n_subs];
			size_t len = 0;

			if (!sub_quiet(S, sb) || !sub_behind(S, sb))
				continue;
			c->ready = subscription_frame(S, c, sb, &len);
			c->ready_len = len;
			memcpy(c->ready_scene, sb->scene, sizeof(c->ready_scene));
			c->ready_binary = sb->format != PROTO_FORMAT_JSON;
			c->next_sub = (c->next_sub + k + 1) % c->n_subs;
		}
		if (c->ready)
			net_ws_wake(S->n, c->conn);
	}
}
