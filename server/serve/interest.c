/*
 * interest.c: per-viewer interest (see interest.h): views in a room, their
 * culls, and the frames of subscriptions that declared one.
 *
 * A subscription's known set K is what its client was last told it may
 * draw (NULL: every node). A frame takes the client from K to the view's
 * current cull V: it carries the matrices of the nodes in V that changed
 * since the cursor, the current matrix of every node in V \ K (entered),
 * every record as a plain update would, and "hidden", the live nodes
 * outside V that are in K or whose record (with its matrix) the frame
 * carries. The client applies "hidden" last, so it then draws exactly V.
 */
#include "interest.h"
#include "clients.h"
#include "journal.h"
#include "metrics.h"
#include "rooms.h"
#include "server.h"
#include "turn.h"
#include "util.h"
#include "views.h"

#include "codec/proto_bin.h"
#include "core/err.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---------- bitsets by handle ---------- */

static bool bit_get(const uint64_t *w, int words, int h)
{
	return h >= 0 && h / 64 < words && (w[h / 64] >> (h % 64) & 1);
}

static void bit_set(uint64_t *w, int h)
{
	w[h / 64] |= (uint64_t)1 << (h % 64);
}

/* A growable list of handles. */
struct hlist {
	int *v;
	int n, cap;
};

static int hlist_add(struct hlist *l, int h)
{
	int *v = serve_grow(l->v, &l->cap, l->n + 1, sizeof(int));

	if (!v)
		return RIGD_E_NOMEM;
	l->v = v;
	l->v[l->n++] = h;
	return 0;
}

/* ---------- the journal's update, shared by every view ---------- */

/* 1 + the largest handle of 's': the room's boxes know it when they are
 * of this state, else a walk finds it. */
static int handle_end(const struct room *st, const scene *s, int64_t seq)
{
	int end = 0;

	if (st->iv.boxes_scene == s && st->iv.boxes_seq == seq)
		return st->iv.boxes.handle_end;
	for (int pos = 0; pos < scene_count(s); pos++)
		if (scene_at(s, pos) >= end)
			end = scene_at(s, pos) + 1;
	return end;
}

/* The parts from 'cursor' to 'seq', from the room's cache or gathered now;
 * NULL when the journal cannot say (the caller sends a snapshot) or memory
 * ran out. */
static const struct interest_parts *parts_for(struct room *st, const scene *s, int64_t seq,
					      int64_t cursor)
{
	struct interest_parts *p = st->iv.parts;

	if (!p || p->s != s || p->from != cursor || p->to != seq) {
		views_parts_free(st->iv.parts);
		st->iv.parts = p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->s = s;
		p->from = cursor;
		p->to = seq;
		p->rc = journal_collect(&st->j, s, seq, cursor, &p->u, &p->covered);
		if (p->rc == 0) {
			p->words = (handle_end(st, s, seq) + 63) / 64;
			p->world_bits = calloc(p->words ? (size_t)p->words : 1, sizeof(uint64_t));
			if (!p->world_bits)
				p->rc = RIGD_E_NOMEM;
			for (int i = 0; p->rc == 0 && i < p->u.n_world; i++)
				bit_set(p->world_bits, p->u.world[i]);
		}
	}
	return p->rc == 0 ? p : NULL;
}

/* ---------- views in a room ---------- */

static struct rview *view_find(const struct room *st, uint64_t id)
{
	for (int i = 0; i < st->iv.n_views; i++)
		if (st->iv.views[i]->id == id)
			return st->iv.views[i];
	return NULL;
}

/* True when view entry 'rv' is the view of 'd': the same frustum,
 * viewport and size, and the same "always" ids (both lists sorted). */
static bool view_is(const struct rview *rv, const struct deferred *d)
{
	if (!view_same(&rv->v, &d->view) || rv->n_always != d->n_always)
		return false;
	for (int i = 0; i < d->n_always; i++)
		if (strcmp(rv->always[i].s, d->always[i].s) != 0)
			return false;
	return true;
}

/* The room's entry for the view of 'd' with one more reference, made
 * when there is none (it then takes d's "always" ids). NULL when out of
 * memory. */
static struct rview *view_ref(struct room *st, struct deferred *d)
{
	struct rview **vs, *rv;

	for (int i = 0; i < st->iv.n_views; i++)
		if (view_is(st->iv.views[i], d)) {
			st->iv.views[i]->refs++;
			return st->iv.views[i];
		}
	vs = serve_grow(st->iv.views, &st->iv.cap_views, st->iv.n_views + 1, sizeof(*vs));
	if (!vs)
		return NULL;
	st->iv.views = vs;
	rv = calloc(1, sizeof(*rv));
	if (!rv)
		return NULL;
	rv->id = ++st->iv.next_view_id;
	rv->v = d->view;
	rv->always = d->always;
	rv->n_always = d->n_always;
	d->always = NULL;
	d->n_always = 0;
	rv->refs = 1;
	rv->culled_seq = -1;
	st->iv.views[st->iv.n_views++] = rv;
	return rv;
}

/* ---------- declaring ---------- */

void interest_declare(struct server *S, struct deferred *d)
{
	struct client *c = clients_get(S, d->conn);
	struct room *st = rooms_find(S, d->scene);
	struct sub *sb;
	proto_buf b;
	size_t len;
	char *f;

	if (!c)
		return;
	sb = rooms_sub_find(c, d->scene);
	if (!sb || !st) {
		edit_error err;

		edit_error_set(&err, RIGD_E_NOT_SUBSCRIBED, -1, "scene",
			       "not subscribed to scene '%s': subscribe before declaring a view",
			       d->scene);
		if (d->reply && (f = clients_error_frame(S, &d->req, &err, &len)))
			clients_fill(S, c, d->reply, f, len);
		return;
	}
	if (d->view_clear) {
		/* The next frame sends what the view hid, then the known set
		 * goes: the subscription is served as without a view. */
		if (sb->view_id)
			views_unref(&st->iv, sb->view_id);
		sb->view_id = 0;
		sb->known_gen = 0;
		sb->view_pending = sb->known != NULL;
	} else {
		struct rview *rv = view_ref(st, d);

		if (!rv) {
			edit_error err;

			edit_error_set(&err, RIGD_E_NOMEM, -1, "", "out of memory");
			if (d->reply && (f = clients_error_frame(S, &d->req, &err, &len)))
				clients_fill(S, c, d->reply, f, len);
			return;
		}
		if (sb->view_id)
			views_unref(&st->iv, sb->view_id);
		sb->view_id = rv->id;
		sb->known_gen = 0;
		sb->view_pending = true;
	}
	if (d->reply && d->req.present) {
		proto_buf_init(&b, S->head);
		if (proto_encode_ack(&b, &d->req, (uint64_t)engine_seq(S->e, d->scene), 0) == 0 &&
		    (f = serve_take_frame(&b, &len)))
			clients_fill(S, c, d->reply, f, len);
		else
			clients_fill(S, c, d->reply, NULL, 0);
		proto_buf_release(&b);
	} else if (d->reply) {
		clients_fill(S, c, d->reply, NULL, 0);
	}
	net_ws_wake(S->n, c->conn);
}

/* ---------- culling ---------- */

/* Brings the cull of 'rv' to scene 's' at 'seq' (boxes first, shared by
 * every view of the room, brought up to date once per scene state). 0 or RIGD_E_NOMEM (the old cull stays, marked
 * stale). */
static int cull(struct server *S, struct room *st, struct rview *rv, const scene *s, int64_t seq)
{
	double t0;
	long tests = 0;
	int n, words;
	uint64_t *bits;

	if (rv->culled_scene == s && rv->culled_seq == seq)
		return 0;
	if (st->iv.boxes_scene != s || st->iv.boxes_seq != seq) {
		t0 = serve_now_s();
		/* The same scene object, edited since: only what the edits
		 * changed is refitted (a root edit: nothing). Another one (a
		 * reload): from scratch. */
		int rc = st->iv.boxes_scene == s ? view_boxes_update(s, &st->iv.boxes)
					      : view_boxes_build(s, &st->iv.boxes);

		st->iv.boxes_scene = NULL;
		if (rc)
			return RIGD_E_NOMEM;
		st->iv.boxes_scene = s;
		st->iv.boxes_seq = seq;
		S->m.view_boxes_total++;
		S->m.view_box_refits_total += (uint64_t)st->iv.boxes.refits;
		S->m.view_boxes_seconds_total += serve_now_s() - t0;
	}
	if (scene_count(s) > st->iv.cap_scratch) {
		int *v = realloc(st->iv.scratch, (size_t)scene_count(s) * sizeof(int));

		if (!v)
			return RIGD_E_NOMEM;
		st->iv.scratch = v;
		st->iv.cap_scratch = scene_count(s);
	}
	words = (st->iv.boxes.handle_end + 63) / 64;
	bits = calloc(words ? (size_t)words : 1, sizeof(uint64_t));
	if (!bits)
		return RIGD_E_NOMEM;
	t0 = serve_now_s();
	n = view_cull(s, &st->iv.boxes, &rv->v, VIEW_CULL_UNBOUNDED, st->iv.scratch, st->iv.cap_scratch,
		      &tests);
	assert(n <= st->iv.cap_scratch);
	for (int i = 0; i < n; i++)
		bit_set(bits, st->iv.scratch[i]);
	/* The view's "always" nodes are visible wherever it looks; ids with
	 * no node (yet) select nothing. */
	for (int i = 0; i < rv->n_always; i++) {
		int h = scene_find(s, rv->always[i].s);

		assert(h < st->iv.boxes.handle_end);
		if (h >= 0)
			bit_set(bits, h);
	}
	free(rv->visible);
	rv->visible = bits;
	rv->words = words;
	rv->culled_scene = s;
	rv->culled_seq = seq;
	rv->gen++;
	S->m.view_culls_total++;
	S->m.view_cull_tests_total += (uint64_t)tests;
	S->m.view_cull_seconds_total += serve_now_s() - t0;
	return 0;
}

/* ---------- frames ---------- */

/* What the client may draw after the frame: the view's cull, or (a view
 * being dropped) every live node. */
struct target {
	const uint64_t *bits;        /* NULL: every live node */
	int words;
};

static bool known_has(const struct sub *sb, int h)
{
	return !sb->known || bit_get(sb->known, sb->known_words, h);
}

/* The update's matrices of the nodes in the target, and the current
 * matrix of every node in it the client did not know (entered), into
 * 'world': target & (changed | ~known), word by word. */
static int filter_world(const scene *s, const struct sub *sb, struct target t,
			const struct interest_parts *p, struct hlist *world)
{
	int rc = 0, n = scene_count(s);

	if (t.bits) {
		for (int i = 0; i < t.words && rc == 0; i++) {
			uint64_t changed = i < p->words ? p->world_bits[i] : 0;
			uint64_t known = !sb->known ? ~(uint64_t)0
				       : i < sb->known_words ? sb->known[i] : 0;
			uint64_t x = t.bits[i] & (changed | ~known);

			while (x && rc == 0) {
				int h = i * 64 + __builtin_ctzll(x);

				x &= x - 1;
				rc = hlist_add(world, h);
			}
		}
		return rc;
	}
	/* Leaving the view: every node that changed or that the client did
	 * not know. */
	for (int pos = 0; pos < n && rc == 0; pos++) {
		int h = scene_at(s, pos);

		if (bit_get(p->world_bits, p->words, h) || !known_has(sb, h))
			rc = hlist_add(world, h);
	}
	return rc;
}

/* The live nodes outside the target that the client may draw after the
 * frame's matrices: known ones, and those whose record the frame carries
 * ('records', may be NULL; every node for a snapshot). */
static int hidden_nodes(const scene *s, const struct sub *sb, struct target t, bool snapshot,
			const int *records, int n_records, struct hlist *hidden)
{
	int rc = 0, n = scene_count(s);

	if (!t.bits)
		return 0;  /* everything is drawn */
	if (snapshot || !sb->known) {
		for (int pos = 0; pos < n && rc == 0; pos++)
			if (!bit_get(t.bits, t.words, scene_at(s, pos)))
				rc = hlist_add(hidden, scene_at(s, pos));
		return rc;
	}
	for (int i = 0; i < sb->known_words && rc == 0; i++) {
		uint64_t x = sb->known[i] & ~(i < t.words ? t.bits[i] : 0);

		while (x && rc == 0) {
			int h = i * 64 + __builtin_ctzll(x);

			x &= x - 1;
			if (scene_pos(s, h) >= 0)
				rc = hlist_add(hidden, h);
		}
	}
	for (int i = 0; i < n_records && rc == 0; i++)
		if (!bit_get(t.bits, t.words, records[i]) && !known_has(sb, records[i]))
			rc = hlist_add(hidden, records[i]);
	return rc;
}

/* Encodes the frame (update, or snapshot when 'u' is NULL) into 'b'. */
static int encode(proto_buf *b, const struct room *st, const struct sub *sb, const scene *s,
		  int64_t seq, const struct journal_update *u, const struct hlist *world,
		  const struct hlist *hidden)
{
	size_t start = b->len;
	int rc;

	if (!u)
		rc = sb->format == PROTO_FORMAT_JSON
			     ? proto_encode_snapshot(b, st->name, (uint64_t)seq, s)
			     : proto_bin_encode_snapshot(b, sb->format, st->name, (uint64_t)seq, s);
	else if (sb->format == PROTO_FORMAT_JSON)
		rc = proto_encode_update(b, st->name, (uint64_t)seq, s, world->v, world->n,
					 u->nodes, u->n_nodes, u->gone, u->n_gone);
	else
		rc = proto_bin_encode_update_locals(b, sb->format, st->name, (uint64_t)seq,
						    (uint64_t)sb->cursor, s, world->v, world->n,
						    u->nodes, u->locals, u->n_nodes, u->gone,
						    u->n_gone, false);
	/* Every frame of interest carries "hidden", empty when nothing is:
	 * a client tells by it that the frame answers for a view. */
	if (rc == 0)
		rc = sb->format == PROTO_FORMAT_JSON
			     ? proto_append_hidden(b, start, s, hidden->v, hidden->n)
			     : proto_bin_append_hidden(b, start, s, hidden->v, hidden->n);
	return rc;
}

/* Builds the frame of 'sb' into 'b'; *snapshot says which it is. */
static int build(struct room *st, const struct sub *sb, const scene *s, int64_t seq,
		 struct target t, proto_buf *b, bool *snapshot, int *covered)
{
	const struct interest_parts *p = sb->cursor >= 0 ? parts_for(st, s, seq, sb->cursor) : NULL;
	struct hlist world = { 0 }, hidden = { 0 };
	int rc;

	*snapshot = !p;
	*covered = p ? p->covered : 0;
	rc = p ? filter_world(s, sb, t, p, &world) : 0;
	if (rc == 0)
		rc = hidden_nodes(s, sb, t, *snapshot, p ? p->u.nodes : NULL, p ? p->u.n_nodes : 0,
				  &hidden);
	if (rc == 0)
		rc = encode(b, st, sb, s, seq, p ? &p->u : NULL, &world, &hidden);
	free(world.v);
	free(hidden.v);
	return rc;
}

/* After a frame: the client may draw exactly the target. */
static int settle(struct sub *sb, const struct rview *rv)
{
	if (!rv) {
		free(sb->known);
		sb->known = NULL;
		sb->known_words = 0;
		sb->known_gen = 0;
		return 0;
	}
	if (sb->known_words < rv->words || !sb->known) {
		uint64_t *k = realloc(sb->known, (size_t)(rv->words ? rv->words : 1) * sizeof(uint64_t));

		if (!k)
			return RIGD_E_NOMEM;
		sb->known = k;
	}
	sb->known_words = rv->words;
	if (rv->words)
		memcpy(sb->known, rv->visible, (size_t)rv->words * sizeof(uint64_t));
	sb->known_gen = rv->gen;
	return 0;
}

char *interest_frame(struct server *S, struct client *c, struct sub *sb, struct room *st,
		     const scene *s, int64_t seq, size_t *len)
{
	struct rview *rv = sb->view_id ? view_find(st, sb->view_id) : NULL;
	struct rview_frame *cf = NULL;
	struct target t = { NULL, 0 };
	bool snapshot = false;
	int covered = 0;
	proto_buf b;
	char *f;

	assert(views_active(sb) && (!sb->view_id || rv));
	if (rv) {
		if (cull(S, st, rv, s, seq))
			return NULL;
		t.bits = rv->visible;
		t.words = rv->words;
		cf = &rv->cache[sb->format];
	}
	if (cf && cf->frame && sb->cursor >= 0 && sb->known_gen && cf->from == sb->cursor &&
	    cf->to == seq && cf->known_gen == sb->known_gen && cf->gen == rv->gen) {
		/* A client with the same view, at the same cursor, knowing the
		 * same cull: the frame is the same. */
		if (!(f = serve_copy_frame(cf->frame, S->head, cf->len)))
			return NULL;
		*len = cf->len;
		covered = cf->covered;
		S->m.view_frames_shared_total++;
	} else {
		proto_buf_init(&b, S->head);
		if (build(st, sb, s, seq, t, &b, &snapshot, &covered) ||
		    !(f = serve_take_frame(&b, len))) {
			proto_buf_release(&b);
			return NULL;
		}
		/* Kept for the other clients of the view; a view of one
		 * client has none to share it with. */
		if (cf && rv->refs > 1 && !snapshot && sb->cursor >= 0 && sb->known_gen) {
			char *copy = serve_copy_frame(f, S->head, *len);

			if (copy) {
				free(cf->frame);
				*cf = (struct rview_frame){ copy, *len, sb->cursor, seq,
							    sb->known_gen, rv->gen, covered };
			}
		}
	}
	if (settle(sb, rv)) {
		free(f);
		return NULL;
	}
	S->m.view_frames_total++;
	metrics_count_sent(&S->m, snapshot, covered);
	sb->cursor = seq;
	sb->view_pending = false;
	if (snapshot && sb->peers_pending) {
		sb->peers_pending = false;
		rooms_send_peers(S, c, st);
	}
	return f;
}
