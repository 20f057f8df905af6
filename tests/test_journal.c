/*
 * test_journal.c: the per-scene turn journal of the server and the
 * updates built from it (server/serve/journal.c), without sockets or an
 * engine: a scene in memory, turns recorded by hand.
 *
 * Entries are added in seq order and the oldest dropped when the ring is
 * full; a turn too big to remember restarts the journal; an update from a
 * cursor carries the world matrices, nodes and removals of exactly the
 * turns after it; a cursor the journal cannot serve (older than it, newer
 * than the scene, inside a turn) is refused so that a snapshot is sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/scene.h"
#include "serve/journal.h"
#include "serve/util.h"

/* ---------- fixtures ---------- */

struct fx {
	struct journal *st;
	scene *s;
};

static struct journal *room_new(int cap)
{
	struct journal *st = calloc(1, sizeof(*st));

	assert_non_null(st);
	st->ring = calloc((size_t)cap, sizeof(struct jentry));
	assert_non_null(st->ring);
	st->ring_cap = cap;
	st->name = "demo";
	return st;
}

static void room_free(struct journal *st)
{
	journal_clear(st, 0);
	journal_turn_drop(st);
	free(st->ring);
	free(st);
}

static int node(const scene *s, const char *id)
{
	int n = scene_find(s, id);

	assert_true(n >= 0);
	return n;
}

/* Ids as an edit_id array (at most 8). */
static int ids(edit_id *out, const char *const *list)
{
	int n = 0;

	for (; list && list[n]; n++)
		snprintf(out[n].s, sizeof(out[n].s), "%s", list[n]);
	return n;
}

/*
 * One turn from 'from' to 'to': the scene was already changed by the
 * caller; notes the lists, recomputes world matrices (stamping them 'to')
 * and records the entry.
 */
static void turn(struct journal *st, scene *s, int64_t from, int64_t to, const char *const *created,
		 const char *const *changed, const char *const *removed)
{
	edit_id c[8], ch[8], rm[8];
	edit_result r = {0};
	struct journal_roots roots = {.s = s, .roots = &st->turn_roots};

	r.created = c;
	r.n_created = ids(c, created);
	r.changed = ch;
	r.n_changed = ids(ch, changed);
	r.removed = rm;
	r.n_removed = ids(rm, removed);
	assert_int_equal(journal_note(st, &r, from), 0);
	scene_update(s, (uint64_t)to, journal_collect_roots, &roots);
	assert_int_equal(roots.rc, 0);
	journal_add(st, to);
	st->touched = false;
}

static const struct jentry *entry(const struct journal *st, int i)
{
	assert_true(i >= 0 && i < st->n);
	return &st->ring[(st->head + i) % st->ring_cap];
}

static void set_t(scene *s, const char *id, double x)
{
	node_props p = node_props_default();

	p.t = (vec3){x, 0, 0};
	assert_int_equal(scene_set(s, node(s, id), PROP_T, &p), 0);
}

/* Turn 1 (0 -> 1) creates a, a/b and c; turn 2 (1 -> 2) moves c;
 * turn 3 (2 -> 3) moves a (so a and b get new matrices). */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int a;

	assert_non_null(f);
	f->st = room_new(4);
	f->s = scene_new();
	assert_non_null(f->s);
	assert_int_equal(scene_create(f->s, "a", -1, -1, NULL, &a), 0);
	assert_int_equal(scene_create(f->s, "b", a, -1, NULL, NULL), 0);
	assert_int_equal(scene_create(f->s, "c", -1, -1, NULL, NULL), 0);
	turn(f->st, f->s, 0, 1, (const char *[]){"a", "b", "c", NULL}, NULL, NULL);
	set_t(f->s, "c", 1);
	turn(f->st, f->s, 1, 2, NULL, (const char *[]){"c", NULL}, NULL);
	set_t(f->s, "a", 2);
	turn(f->st, f->s, 2, 3, NULL, (const char *[]){"a", NULL}, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	room_free(f->st);
	scene_free(f->s);
	free(f);
	return 0;
}

/* The update from 'cursor' to 'seq' as text in 'b' (released by caller). */
static int update(struct fx *f, int64_t seq, int64_t cursor, proto_buf *b, int *covered)
{
	proto_buf_init(b, 0);
	*covered = -1;
	return journal_build_update(f->st, f->s, seq, cursor, b, covered);
}

/* Whether the update's "world" object has a matrix for 'id'. */
static bool has_world(const proto_buf *b, const char *id)
{
	char key[80];
	const char *w = strstr(proto_buf_str(b), "\"world\":{");
	const char *end = w ? strchr(w, '}') : NULL;
	const char *hit;

	snprintf(key, sizeof(key), "\"%s\":[", id);
	hit = w ? strstr(w, key) : NULL;
	return hit && hit < end;
}

/* Whether the update's "nodes" list has node 'id'. */
static bool has_node(const proto_buf *b, const char *id)
{
	char key[80];
	const char *n = strstr(proto_buf_str(b), "\"nodes\":[");

	snprintf(key, sizeof(key), "\"id\":\"%s\"", id);
	return n && strstr(n, key);
}

/* Whether the update's "removed" list has 'id'. */
static bool has_removed(const proto_buf *b, const char *id)
{
	char key[80];
	const char *r = strstr(proto_buf_str(b), "\"removed\":[");
	const char *end = r ? strchr(r, ']') : NULL;
	const char *hit;

	snprintf(key, sizeof(key), "\"%s\"", id);
	hit = r ? strstr(r, key) : NULL;
	return hit && hit < end;
}

/* ---------- the journal ---------- */

static void test_entries_in_order(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->st->n, 3);
	assert_int_equal(f->st->epoch, 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(entry(f->st, i)->from, i);
		assert_int_equal(entry(f->st, i)->to, i + 1);
	}
	assert_int_equal(entry(f->st, 0)->n_changed, 3);
	assert_int_equal(entry(f->st, 1)->n_changed, 1);
	assert_string_equal(entry(f->st, 1)->changed[0].s, "c");
	/* The first turn recomputed both roots; the third only a's subtree. */
	assert_int_equal(entry(f->st, 0)->n_roots, 2);
	assert_int_equal(entry(f->st, 2)->n_roots, 1);
	assert_string_equal(entry(f->st, 2)->roots[0].s, "a");
	assert_int_equal(f->st->journal_ids, 3 + 2 + 1 + 1 + 1 + 1);
	/* The turn's lists were handed over to the entry. */
	assert_int_equal(f->st->turn_changed.n, 0);
	assert_int_equal(f->st->turn_roots.n, 0);
}

static void test_drop_oldest_when_full(void **state)
{
	struct fx *f = *state;

	set_t(f->s, "c", 4);
	turn(f->st, f->s, 3, 4, NULL, (const char *[]){"c", NULL}, NULL);
	assert_int_equal(f->st->n, 4);
	set_t(f->s, "c", 5);
	turn(f->st, f->s, 4, 5, NULL, (const char *[]){"c", NULL}, NULL);
	/* Ring of 4: the first turn went, and with it cursor 0. */
	assert_int_equal(f->st->n, 4);
	assert_int_equal(f->st->epoch, 1);
	assert_int_equal(entry(f->st, 0)->from, 1);
	assert_int_equal(entry(f->st, 3)->to, 5);
	journal_drop_oldest(f->st);
	assert_int_equal(f->st->n, 3);
	assert_int_equal(f->st->epoch, 2);
	assert_int_equal(f->st->journal_ids, 2 + 2 + 2);
}

static void test_clear(void **state)
{
	struct fx *f = *state;
	proto_buf b;
	int covered;

	journal_clear(f->st, 3);
	assert_int_equal(f->st->n, 0);
	assert_int_equal(f->st->epoch, 3);
	assert_int_equal(f->st->journal_ids, 0);
	/* Nothing to tell a client at the new epoch; older ones: snapshots. */
	assert_int_equal(update(f, 3, 3, &b, &covered), 0);
	assert_int_equal(covered, 0);
	proto_buf_release(&b);
	assert_int_equal(update(f, 3, 2, &b, &covered), RIGD_E_BAD_SEQ);
	proto_buf_release(&b);
}

static void test_big_turn_restarts(void **state)
{
	struct fx *f = *state;
	char id[16];

	/* More ids than a turn may leave in the journal. */
	for (int i = 0; i <= JOURNAL_TURN_MAX_IDS; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(idlist_add(&f->st->turn_changed, id), 0);
	}
	f->st->turn_from = 3;
	journal_add(f->st, 4);
	assert_int_equal(f->st->n, 0);
	assert_int_equal(f->st->epoch, 4);
	assert_int_equal(f->st->turn_changed.n, 0);
}

/* ---------- updates ---------- */

static void test_update_from_each_cursor(void **state)
{
	struct fx *f = *state;
	proto_buf b;
	int covered;

	/* From 2: turn 3 only, which moved a (and so b's world matrix). */
	assert_int_equal(update(f, 3, 2, &b, &covered), 0);
	assert_int_equal(covered, 1);
	assert_true(has_world(&b, "a"));
	assert_true(has_world(&b, "b"));
	assert_false(has_world(&b, "c"));
	assert_true(has_node(&b, "a"));
	assert_false(has_node(&b, "c"));
	proto_buf_release(&b);
	/* From 1: turns 2 and 3 folded into one update. */
	assert_int_equal(update(f, 3, 1, &b, &covered), 0);
	assert_int_equal(covered, 2);
	assert_true(has_world(&b, "c"));
	assert_true(has_node(&b, "c"));
	assert_true(has_node(&b, "a"));
	assert_false(has_node(&b, "b"));
	proto_buf_release(&b);
	/* From 0: everything, each node once. */
	assert_int_equal(update(f, 3, 0, &b, &covered), 0);
	assert_int_equal(covered, 3);
	assert_true(has_node(&b, "b"));
	assert_true(has_world(&b, "b"));
	proto_buf_release(&b);
	/* At the scene's seq: an empty update. */
	assert_int_equal(update(f, 3, 3, &b, &covered), 0);
	assert_int_equal(covered, 0);
	assert_false(has_world(&b, "a"));
	proto_buf_release(&b);
}

static void test_update_refused(void **state)
{
	struct fx *f = *state;
	proto_buf b;
	int covered;

	/* Newer than the scene. */
	assert_int_equal(update(f, 3, 4, &b, &covered), RIGD_E_BAD_SEQ);
	proto_buf_release(&b);
	/* Older than the journal. */
	journal_drop_oldest(f->st);
	assert_int_equal(f->st->epoch, 1);
	assert_int_equal(update(f, 3, 0, &b, &covered), RIGD_E_BAD_SEQ);
	proto_buf_release(&b);
	/* A seq the journal has no entry up to. */
	assert_int_equal(update(f, 5, 3, &b, &covered), RIGD_E_BAD_SEQ);
	proto_buf_release(&b);
}

static void test_update_inside_a_turn(void **state)
{
	struct fx *f = *state;
	proto_buf b;
	int covered;

	/* One turn of two batches: 3 -> 5. Seq 4 never was a turn boundary. */
	set_t(f->s, "c", 7);
	turn(f->st, f->s, 3, 5, NULL, (const char *[]){"c", NULL}, NULL);
	assert_int_equal(update(f, 5, 4, &b, &covered), RIGD_E_BAD_SEQ);
	proto_buf_release(&b);
	assert_int_equal(update(f, 5, 3, &b, &covered), 0);
	assert_int_equal(covered, 1);
	proto_buf_release(&b);
}

static void test_update_removed(void **state)
{
	struct fx *f = *state;
	proto_buf b;
	int covered;

	assert_int_equal(scene_delete(f->s, node(f->s, "c")), 0);
	turn(f->st, f->s, 3, 4, NULL, NULL, (const char *[]){"c", NULL});
	assert_int_equal(update(f, 4, 3, &b, &covered), 0);
	assert_int_equal(covered, 1);
	assert_true(has_removed(&b, "c"));
	assert_false(has_node(&b, "c"));
	proto_buf_release(&b);
	/* Removed, then created again later: not reported as removed. */
	assert_int_equal(scene_create(f->s, "c", -1, -1, NULL, NULL), 0);
	turn(f->st, f->s, 4, 5, (const char *[]){"c", NULL}, NULL, NULL);
	assert_int_equal(update(f, 5, 3, &b, &covered), 0);
	assert_int_equal(covered, 2);
	assert_false(has_removed(&b, "c"));
	assert_true(has_node(&b, "c"));
	proto_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_entries_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drop_oldest_when_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_big_turn_restarts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_from_each_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_inside_a_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_removed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
