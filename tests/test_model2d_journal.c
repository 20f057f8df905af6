/*
 * test_model2d_journal.c: the draw order of a 2D scene in the server's
 * turn journal (server/serve/journal.c), without sockets or an engine: a
 * scene in memory, turns recorded by hand as serve/turn.c records them
 * (world matrices, then journal_note_order, then the entry).
 *
 * A turn that changes the order marks its entry; an update from any cursor
 * before that turn carries the order of the update's seq, even when the
 * turn is folded into a later one (a slow client), in JSON and in binary
 * frames; an update covering only turns that left the order alone carries
 * none; a 3D scene never has one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/proto_bin.h"
#include "core/err.h"
#include "core/scene.h"
#include "serve/journal.h"
#include "serve/util.h"

struct fx {
	struct journal *st;
	scene *s;
	int64_t seq;
};

static int node(const scene *s, const char *id)
{
	int n = scene_find(s, id);

	assert_true(n >= 0);
	return n;
}

/* One turn to seq + 1 that changed 'changed' (already changed in the scene
 * by the caller), recorded as serve/turn.c does. */
static void turn(struct fx *f, const char *changed)
{
	edit_id ch[1];
	edit_result r = { 0 };
	struct journal_roots roots = { .s = f->s, .roots = &f->st->turn_roots };

	snprintf(ch[0].s, sizeof(ch[0].s), "%s", changed);
	r.changed = ch;
	r.n_changed = 1;
	assert_int_equal(journal_note(f->st, &r, f->seq), 0);
	f->seq++;
	scene_update(f->s, (uint64_t)f->seq, journal_collect_roots, &roots);
	assert_int_equal(roots.rc, 0);
	assert_int_equal(journal_note_order(f->st, f->s), 0);
	journal_add(f->st, f->seq);
	f->st->touched = false;
}

static void set(struct fx *f, const char *id, unsigned mask, node_props p)
{
	assert_int_equal(scene_set(f->s, node(f->s, id), mask, &p), 0);
	turn(f, id);
}

static node_props with_s(double sx)
{
	node_props p = node_props_default();

	p.s = (vec3){ sx, 1, 1 };
	return p;
}

/* A rig of three layered nodes under a root, at seq 0 with its first turn
 * recorded (the order seen for the first time). */
static struct fx *fixture(int dims)
{
	struct fx *f = calloc(1, sizeof(*f));
	node_props p = node_props_default();
	int root;

	assert_non_null(f);
	f->st = calloc(1, sizeof(*f->st));
	assert_non_null(f->st);
	f->st->ring = calloc(16, sizeof(struct jentry));
	assert_non_null(f->st->ring);
	f->st->ring_cap = 16;
	f->st->name = "hero";
	f->s = scene_new();
	assert_non_null(f->s);
	assert_int_equal(scene_set_dims(f->s, dims), 0);
	assert_int_equal(scene_create(f->s, "hero", -1, -1, NULL, &root), 0);
	if (dims == 2) {
		p.layer = "h.svg#torso";
		assert_int_equal(scene_create(f->s, "torso", root, -1, &p, NULL), 0);
		p.layer = "h.svg#armL";
		p.z_right = -1;
		p.z_left = 2;
		assert_int_equal(scene_create(f->s, "armL", root, -1, &p, NULL), 0);
		p.layer = "h.svg#armR";
		p.z_right = 2;
		p.z_left = -1;
		assert_int_equal(scene_create(f->s, "armR", root, -1, &p, NULL), 0);
	}
	turn(f, "hero");
	return f;
}

static void fixture_free(struct fx *f)
{
	journal_clear(f->st, 0);
	journal_turn_drop(f->st);
	free(f->st->ring);
	free(f->st);
	scene_free(f->s);
	free(f);
}

/* The JSON update from 'cursor' to the current seq (the caller frees). */
static char *update(struct fx *f, int64_t cursor, int *covered)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	assert_int_equal(journal_build_update(f->st, f->s, f->seq, cursor, &b, covered), 0);
	return proto_buf_take(&b);
}

/* The binary update from 'cursor', as the JSON message it stands for. */
static char *bin_update(struct fx *f, int64_t cursor)
{
	proto_bin_names names;
	proto_buf b, out;
	edit_error err;
	int covered;

	proto_bin_names_init(&names);
	proto_buf_init(&b, 0);
	proto_buf_init(&out, 0);
	assert_int_equal(proto_bin_encode_snapshot(&b, PROTO_FORMAT_F32, "hero", 0, f->s), 0);
	assert_int_equal(proto_bin_to_json(&names, (const unsigned char *)proto_buf_str(&b), b.len,
					   &out, &err), 0);
	proto_buf_reset(&b);
	proto_buf_reset(&out);
	assert_int_equal(journal_build_frame(f->st, f->s, f->seq, cursor, PROTO_FORMAT_F32, &b,
					     &covered), 0);
	assert_int_equal(proto_bin_to_json(&names, (const unsigned char *)proto_buf_str(&b), b.len,
					   &out, &err), 0);
	proto_buf_release(&b);
	proto_bin_names_release(&names);
	return proto_buf_take(&out);
}

static const char right[] = "\"order\":[\"armL\",\"torso\",\"armR\"]";
static const char left[] = "\"order\":[\"armR\",\"torso\",\"armL\"]";

static void test_order_in_updates(void **state)
{
	struct fx *f = fixture(2);
	node_props p = node_props_default();
	int covered;
	char *u;

	(void)state;
	/* Seq 1: the first turn saw the order. Seq 2: a turn of an arm, no
	 * change. Seq 3: the root mirrored, the order flips. Seqs 4 and 5:
	 * turns that leave it alone. */
	p.r = quat_from_angle2d_deg(20);
	set(f, "armL", PROP_R, p);
	set(f, "hero", PROP_S, with_s(-1));
	set(f, "armR", PROP_R, p);
	set(f, "torso", PROP_R, p);
	assert_int_equal(f->seq, 5);
	assert_true(f->st->ring[0].order);  /* the first sight */
	assert_false(f->st->ring[1].order);
	assert_true(f->st->ring[2].order);
	assert_false(f->st->ring[3].order);
	assert_false(f->st->ring[4].order);
	/* A client at 4: no order. At 2 (it skipped seq 3, the change, in one
	 * update to 5): the order of seq 5, with the matrices. At 3: none. */
	u = update(f, 4, &covered);
	assert_int_equal(covered, 1);
	assert_null(strstr(u, "\"order\""));
	free(u);
	u = update(f, 2, &covered);
	assert_int_equal(covered, 3);
	assert_non_null(strstr(u, left));
	assert_non_null(strstr(u, "\"hero\":["));  /* the root's new matrix, same frame */
	free(u);
	u = update(f, 3, &covered);
	assert_null(strstr(u, "\"order\""));
	free(u);
	/* The same in binary frames' JSON section. */
	u = bin_update(f, 2);
	assert_non_null(strstr(u, left));
	free(u);
	u = bin_update(f, 4);
	assert_null(strstr(u, "\"order\""));
	free(u);
	/* Mirrored back and mirrored again within one turn: the list it ends
	 * with is the one before, so the entry says unchanged. */
	p = with_s(1);
	assert_int_equal(scene_set(f->s, node(f->s, "hero"), PROP_S, &p), 0);
	set(f, "hero", PROP_S, with_s(-1));
	assert_false(f->st->ring[5].order);
	set(f, "hero", PROP_S, with_s(1));
	assert_true(f->st->ring[6].order);
	u = update(f, 6, &covered);
	assert_non_null(strstr(u, right));
	free(u);
	fixture_free(f);
}

static void test_no_order_in_3d(void **state)
{
	struct fx *f = fixture(3);
	int covered;
	char *u;

	(void)state;
	set(f, "hero", PROP_S, with_s(-1));
	assert_false(f->st->ring[0].order);
	assert_false(f->st->ring[1].order);
	u = update(f, 0, &covered);
	assert_null(strstr(u, "\"order\""));
	free(u);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_in_updates),
		cmocka_unit_test(test_no_order_in_3d),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
