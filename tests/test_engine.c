/*
 * test_engine.c: the engine facade over scenes and their durable log.
 *
 * Gapless seqs and group commit; idempotent resend (in the same turn, after
 * the commit, after a restart); a scene reopened from snapshot plus log
 * bit-identical to the live one; time travel to every seq; log export and
 * import giving bit-identical world matrices; undo and redo with their
 * conflicts and their persistence; injected I/O faults (nothing
 * acknowledged, the scene rolled back exactly, reads going on, writes
 * resuming); engine_check finding a tampered snapshot; a deep chain through
 * snapshots; the binary image of ops (round trip bit for bit, truncated and
 * corrupted images refused without reading past them, a database of schema
 * version 2 upgraded and replayed, a tampered image caught by check).
 *
 * This file includes sqlite3.h, as test_oom.c does, to tamper with a log
 * row's image the way a bad disk or a hand would: the store has no call
 * that rewrites a logged row, and should not have one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "engine/engine.h"
#include "engine/store.h"
#include "edit_equal.h"
#include "tmpdb.h"

#include <sqlite3.h>

/* ---------- fixtures ---------- */

static void tmpdb_make_here(tmpdb *t)
{
	tmpdb_make(t, "/tmp", "test_engine");
}

/* Options for tests: NORMAL sync (durability is the crash test's subject;
 * here fsyncs would only cost time), small snapshot interval. */
static engine_opts test_opts(int snapshot_ops)
{
	engine_opts o = engine_opts_default();
	o.sync_normal = true;
	o.snapshot_ops = snapshot_ops;
	return o;
}

static engine *open_ok(const char *path, const engine_opts *o)
{
	int err = -1;
	char msg[512] = "";
	engine *e = engine_open(path, o, &err, msg, sizeof(msg));
	if (!e)
		print_error("engine_open: %s (%s)\n", msg, err_code(err));
	assert_non_null(e);
	return e;
}

static void parse(edit_batch *b, const char *json)
{
	edit_error er;
	int rc = proto_decode_batch(json, strlen(json), NULL, b, &er);
	if (rc)
		print_error("bad test batch %s: %s\n", json, er.message);
	assert_int_equal(rc, 0);
}

/* Submits a batch given as JSON; returns the code, *seq its seq. */
static int submit(engine *e, const char *scene_name, const char *json, int64_t *seq, bool *dup)
{
	edit_batch b;
	engine_ack ack;
	edit_error er;
	parse(&b, json);
	int rc = engine_submit(e, scene_name, &b, &ack, &er);
	if (rc == 0) {
		if (seq)
			*seq = ack.seq;
		if (dup)
			*dup = ack.duplicate;
	} else {
		assert_int_equal(er.code, rc);
	}
	engine_ack_release(&ack);
	edit_batch_release(&b);
	return rc;
}

static int64_t submit_ok(engine *e, const char *scene_name, const char *json)
{
	int64_t seq = 0;
	bool dup = true;
	int rc = submit(e, scene_name, json, &seq, &dup);
	if (rc)
		print_error("submit %s: %s\n", json, err_code(rc));
	assert_int_equal(rc, 0);
	assert_false(dup);
	return seq;
}

static void commit_ok(engine *e)
{
	int rc = engine_commit(e);
	if (rc)
		print_error("commit: %s\n", engine_errmsg(e));
	assert_int_equal(rc, 0);
	assert_int_equal(engine_pending(e), 0);
}

static uint64_t live_hash(engine *e, const char *scene_name)
{
	assert_true(engine_update(e, scene_name, NULL, NULL) >= 0);
	return scene_hash(engine_scene(e, scene_name));
}

static void check_ok(engine *e)
{
	int rc = engine_check(e, NULL, NULL);
	if (rc)
		print_error("engine_check: %s\n", err_code(rc));
	assert_int_equal(rc, 0);
}

/* The demo rig (docs/transforms.md 4): the base's centre 0.2 up,
 * yawed 30 degrees; the arm hinged at the base's top (0.2 above its centre)
 * and bent 40 degrees, L = T(0, 0.2, 0) Rz(40) T(0, 0.7, 0), which is t =
 * (0, 0.9, 0) with pivot (0, -0.7, 0); the hand 0.7 above the arm's centre. */
static void make_demo(engine *e, const char *name)
{
	assert_int_equal(engine_scene_create(e, name), 0);
	submit_ok(e, name,
		  "{\"ops\":[{\"op\":\"create\",\"id\":\"base\",\"t\":[0,0.2,0],"
		  "\"euler\":[0,30,0]},"
		  "{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"base\",\"t\":[0,0.9,0],"
		  "\"pivot\":[0,-0.7,0],\"euler\":[0,0,40]},"
		  "{\"op\":\"create\",\"id\":\"hand\",\"parent\":\"arm\",\"t\":[0,0.7,0]}],"
		  "\"client\":\"setup\",\"client_seq\":1}");
	commit_ok(e);
}

/* ---------- random batches ---------- */

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double rnd_unit(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1;
}

static int rnd_int(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

static const char *rnd_node(const scene *s, char *buf)
{
	if (scene_count(s) == 0 || rnd_int(50) == 0) {
		snprintf(buf, 16, "n%d", rnd_int(100));
		return buf;
	}
	return scene_id(s, scene_at(s, rnd_int(scene_count(s))));
}

static void rnd_fields(edit_op *op)
{
	if (rnd_int(2)) {
		op->fields |= EDIT_F_T;
		op->t = vec3_make(rnd_unit() * 10, rnd_unit() * 10, rnd_unit() * 10);
	}
	if (rnd_int(2)) {
		op->fields |= EDIT_F_R;
		op->r = (quat){ rnd_unit(), rnd_unit(), rnd_unit(), rnd_unit() };
	} else if (rnd_int(4) == 0) {
		op->fields |= EDIT_F_EULER;
		op->euler_deg = vec3_make(rnd_unit() * 180, rnd_unit() * 180, rnd_unit() * 180);
	}
	if (rnd_int(3) == 0) {
		op->fields |= EDIT_F_S;
		op->s = vec3_make(0.5 + rnd_unit(), 0.5 + rnd_unit(), 2 + rnd_unit());
	}
	if (rnd_int(4) == 0) {
		op->fields |= EDIT_F_PIVOT;
		op->pivot = vec3_make(rnd_unit(), rnd_unit(), rnd_unit());
	}
	if (rnd_int(4) == 0) {
		op->fields |= EDIT_F_BOUNDS;
		op->has_bounds = rnd_int(4) != 0;
		op->bounds = aabb_make(vec3_make(-1, -2, -3), vec3_make(1, 2 + rnd_unit(), 3));
	}
	if (rnd_int(6) == 0)
		assert_int_equal(edit_op_set_name(op, rnd_int(3) ? "Some name" : NULL), 0);
	if (rnd_int(6) == 0)
		assert_int_equal(edit_op_set_mesh(op, rnd_int(3) ? "box" : NULL), 0);
	if (rnd_int(6) == 0) {
		op->fields |= EDIT_F_VISIBLE;
		op->visible = rnd_int(2);
	}
}

/* A random batch of 1..4 ops against 's' (it may well be refused). */
static void rnd_batch(const scene *s, edit_batch *b, const char *client, int64_t client_seq)
{
	char buf[16], buf2[16];
	int n = 1 + rnd_int(4);
	edit_batch_init(b);
	snprintf(b->client, sizeof(b->client), "%s", client);
	b->has_client_seq = client_seq > 0;
	b->client_seq = client_seq;
	for (int i = 0; i < n; i++) {
		int kind = rnd_int(12);
		edit_op *op;
		if (kind < 4 || scene_count(s) < 5) {
			snprintf(buf, sizeof(buf), "n%d", rnd_int(100));
			op = edit_batch_add(b, EDIT_CREATE, buf);
			assert_non_null(op);
			if (rnd_int(5))
				assert_int_equal(edit_op_set_parent(op, rnd_node(s, buf2)), 0);
			rnd_fields(op);
		} else if (kind < 9) {
			op = edit_batch_add(b, EDIT_SET, rnd_node(s, buf));
			assert_non_null(op);
			rnd_fields(op);
		} else if (kind < 11) {
			op = edit_batch_add(b, EDIT_REPARENT, rnd_node(s, buf));
			assert_non_null(op);
			assert_int_equal(edit_op_set_parent(op, rnd_int(6) ? rnd_node(s, buf2) : NULL), 0);
			if (rnd_int(2)) {
				op->fields |= EDIT_F_KEEP_WORLD;
				op->keep_world = true;
			}
		} else {
			assert_non_null(edit_batch_add(b, EDIT_DELETE, rnd_node(s, buf)));
		}
	}
}

/*
 * Runs 'turns' turns of up to 'per_turn' random batches on scene 'name',
 * committing each; records in hashes[seq] the scene's hash after each seq
 * (hashes sized for the final seq + 1; NULL: not recorded). Returns the
 * number of accepted batches.
 */
static int random_turns(engine *e, const char *name, int turns, int per_turn, uint64_t *hashes,
			int64_t hashes_len)
{
	int accepted = 0;
	for (int t = 0; t < turns; t++) {
		int n = 1 + rnd_int(per_turn);
		for (int i = 0; i < n; i++) {
			edit_batch b;
			engine_ack ack;
			edit_error er;
			rnd_batch(engine_scene(e, name), &b, rnd_int(3) ? "rnd" : "", 0);
			int rc = engine_submit(e, name, &b, &ack, &er);
			edit_batch_release(&b);
			if (rc == 0) {
				accepted++;
				/* The hash after each batch: update between batches
				 * of a turn is allowed (it only brings matrices up to
				 * date) and lets every seq be checked. */
				if (hashes) {
					assert_true(ack.seq < hashes_len);
					hashes[ack.seq] = live_hash(e, name);
				}
			} else {
				assert_int_equal(er.code, rc);
				assert_true(er.message[0] != 0);
			}
			engine_ack_release(&ack);
		}
		commit_ok(e);
	}
	return accepted;
}

/* ---------- seqs and group commit ---------- */

static void test_seqs_gapless(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	assert_int_equal(engine_seq(e, "s"), 0);
	assert_int_equal(engine_commit(e), 0); /* nothing queued */

	/* One turn, three batches, one refused in the middle: seqs 1, 2. */
	assert_int_equal(submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}"), 1);
	assert_int_equal(submit(e, "s", "{\"ops\":[{\"op\":\"set\",\"id\":\"zz\",\"t\":[1,2,3]}]}",
				NULL, NULL),
			 RIGD_E_UNKNOWN_NODE);
	assert_int_equal(submit_ok(e, "s",
				   "{\"ops\":[{\"op\":\"create\",\"id\":\"b\",\"parent\":\"a\"}]}"),
			 2);
	assert_int_equal(engine_pending(e), 2);
	/* Before the commit the seq is not yet the scene's. */
	assert_int_equal(engine_seq(e, "s"), 0);
	commit_ok(e);
	assert_int_equal(engine_seq(e, "s"), 2);
	/* Atomicity: a batch failing at its last op leaves no trace. */
	assert_int_equal(submit(e, "s",
				"{\"ops\":[{\"op\":\"create\",\"id\":\"c\"},"
				"{\"op\":\"set\",\"id\":\"a\",\"t\":[5,5,5]},"
				"{\"op\":\"delete\",\"id\":\"nope\"}]}",
				NULL, NULL),
			 RIGD_E_UNKNOWN_NODE);
	assert_int_equal(scene_find(engine_scene(e, "s"), "c"), -1);
	assert_int_equal(submit_ok(e, "s", "{\"ops\":[{\"op\":\"delete\",\"id\":\"b\"}]}"), 3);
	commit_ok(e);
	engine_close(e);

	/* After a restart the next batch continues the sequence. */
	e = open_ok(t.path, &o);
	assert_int_equal(engine_seq(e, "s"), 3);
	assert_int_equal(submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"d\"}]}"), 4);
	commit_ok(e);
	engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.batches, 1);
	assert_int_equal(st.commits, 1);
	check_ok(e);
	engine_close(e);
	tmpdb_remove(&t);
}

static void test_idempotent_resend(void **state)
{
	tmpdb t;
	int64_t seq;
	bool dup;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	assert_int_equal(engine_scene_create(e, "other"), 0);
	const char *b1 = "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}],\"client\":\"c\",\"client_seq\":7}";
	const char *b2 = "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1,0,0]}],\"client\":\"c\","
			 "\"client_seq\":8}";
	assert_int_equal(submit_ok(e, "s", b1), 1);
	/* Resent in the same turn: the original seq, nothing applied (a second
	 * create of 'a' would have been a duplicate_id). */
	assert_int_equal(submit(e, "s", b1, &seq, &dup), 0);
	assert_true(dup);
	assert_int_equal(seq, 1);
	assert_int_equal(engine_pending(e), 1);
	commit_ok(e);
	assert_int_equal(submit_ok(e, "s", b2), 2);
	commit_ok(e);
	uint64_t h = live_hash(e, "s");
	/* Resent after the commit. */
	assert_int_equal(submit(e, "s", b2, &seq, &dup), 0);
	assert_true(dup);
	assert_int_equal(seq, 2);
	assert_int_equal(engine_pending(e), 0);
	/* The same client_seq of another client, or in another scene, is new. */
	assert_int_equal(submit_ok(e, "s",
				   "{\"ops\":[{\"op\":\"create\",\"id\":\"b\"}],\"client\":\"d\","
				   "\"client_seq\":7}"),
			 3);
	assert_int_equal(submit_ok(e, "other", b1), 1);
	commit_ok(e);
	/* Even a resend with different ops is the original batch. */
	assert_int_equal(submit(e, "s",
				"{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client\":\"c\","
				"\"client_seq\":8}",
				&seq, &dup),
			 0);
	assert_true(dup);
	assert_int_equal(seq, 2);
	engine_close(e);

	/* And after a restart. */
	e = open_ok(t.path, &o);
	assert_int_equal(submit(e, "s", b1, &seq, &dup), 0);
	assert_true(dup);
	assert_int_equal(seq, 1);
	assert_int_equal(engine_seq(e, "s"), 3);
	assert_int_equal(scene_count(engine_scene(e, "s")), 2);
	(void)h;
	engine_close(e);
	tmpdb_remove(&t);
}

/* ---------- restart, time travel, export and import ---------- */

static void test_reopen_bit_identical(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(40); /* snapshots every few turns */
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "r"), 0);
	make_demo(e, "demo");
	random_turns(e, "r", 150, 6, NULL, 0);
	uint64_t h = live_hash(e, "r"), hd = live_hash(e, "demo");
	int64_t seq = engine_seq(e, "r");
	engine_stats st;
	engine_get_stats(e, &st);
	assert_true(st.snapshots >= 3);
	engine_close(e);

	/* Loaded from its latest snapshot plus the log after it. */
	e = open_ok(t.path, &o);
	assert_int_equal(engine_seq(e, "r"), seq);
	assert_true(h == live_hash(e, "r"));
	assert_true(hd == live_hash(e, "demo"));
	/* The demo rig's hand (docs/transforms.md 4.1), through snapshot and log. */
	const scene *d = engine_scene(e, "demo");
	mat4 w = scene_world(d, scene_find(d, "hand"));
	assert_true(fabs(w.m[12] - -0.779) < 5e-4);
	assert_true(fabs(w.m[13] - 1.472) < 5e-4);
	assert_true(fabs(w.m[14] - 0.450) < 5e-4);
	check_ok(e);
	engine_close(e);
	tmpdb_remove(&t);
}

static void test_time_travel(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(30);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	uint64_t *hashes = calloc(2000, sizeof(*hashes));
	assert_non_null(hashes);
	random_turns(e, "s", 100, 5, hashes, 2000);
	int64_t last = engine_seq(e, "s");
	assert_true(last > 50);
	scene *empty = scene_new();
	scene_update(empty, 0, NULL, NULL);
	hashes[0] = scene_hash(empty);
	scene_free(empty);
	for (int64_t k = 0; k <= last; k++) {
		scene *at = NULL;
		assert_int_equal(engine_at(e, "s", k, &at), 0);
		if (hashes[k] != scene_hash(at))
			print_error("seq %lld differs\n", (long long)k);
		assert_true(hashes[k] == scene_hash(at));
		/* Stamped with the seq asked for. */
		if (scene_count(at))
			assert_int_equal(scene_world_stamp(at, scene_at(at, 0)), k);
		scene_free(at);
	}
	scene *at = NULL;
	assert_int_equal(engine_at(e, "s", last + 1, &at), RIGD_E_BAD_SEQ);
	assert_int_equal(engine_at(e, "s", -1, &at), RIGD_E_BAD_SEQ);
	assert_int_equal(engine_at(e, "nope", 1, &at), RIGD_E_UNKNOWN_SCENE);
	assert_null(at);
	/* Uncommitted batches are not history. */
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"fresh\"}]}");
	assert_int_equal(engine_at(e, "s", last + 1, &at), RIGD_E_BAD_SEQ);
	commit_ok(e);
	free(hashes);
	engine_close(e);
	tmpdb_remove(&t);
}

typedef struct text {
	char *p;
	size_t len, cap;
	int lines;
} text;

static int collect(void *ctx, const char *line, size_t len)
{
	text *t = ctx;
	if (t->len + len + 1 > t->cap) {
		t->cap = (t->len + len + 1) * 2;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->len, line, len);
	t->len += len;
	t->p[t->len] = 0;
	t->lines++;
	assert_true(len > 0 && line[len - 1] == '\n');
	return 0;
}

static int import(engine *e, const char *name, const char *log, int64_t *n, int *bad_line)
{
	edit_error er;
	int rc = engine_import(e, name, log, strlen(log), n, bad_line, &er);
	if (rc)
		assert_int_equal(er.code, rc);
	return rc;
}

static void test_export_import(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(50);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "src"), 0);
	uint64_t *hashes = calloc(2000, sizeof(*hashes));
	assert_non_null(hashes);
	random_turns(e, "src", 120, 5, hashes, 2000);
	int64_t last = engine_seq(e, "src");
	text log = { 0 };
	assert_int_equal(engine_log(e, "src", 0, -1, collect, &log), 0);
	assert_int_equal(log.lines, last);

	/* Replayed into another scene: bit-identical at the same seq. */
	assert_int_equal(engine_scene_create(e, "copy"), 0);
	int64_t n = 0;
	int bad = -1;
	assert_int_equal(import(e, "copy", log.p, &n, &bad), 0);
	assert_int_equal(n, last);
	assert_int_equal(bad, 0);
	assert_int_equal(engine_seq(e, "copy"), last);
	assert_true(live_hash(e, "copy") == live_hash(e, "src"));
	for (int64_t k = 1; k <= last; k += 7) {
		scene *at = NULL;
		assert_int_equal(engine_at(e, "copy", k, &at), 0);
		assert_true(scene_hash(at) == hashes[k]);
		scene_free(at);
	}
	/* Its export is the source's, line for line. */
	text log2 = { 0 };
	assert_int_equal(engine_log(e, "copy", 0, -1, collect, &log2), 0);
	assert_int_equal(log2.len, log.len);
	assert_memory_equal(log2.p, log.p, log.len);
	/* A window of the log. */
	text part = { 0 };
	assert_int_equal(engine_log(e, "src", 5, 9, collect, &part), 0);
	assert_int_equal(part.lines, 5);
	assert_non_null(strstr(part.p, "{\"seq\":5,"));
	/* Lines carry the seq, time, client, client_seq and ops. */
	assert_non_null(strstr(part.p, "\"time\":"));
	assert_non_null(strstr(part.p, "\"ops\":["));

	/* Refusals: the scene stays empty each time. */
	assert_int_equal(import(e, "copy", log.p, &n, &bad), RIGD_E_SCENE_NOT_EMPTY);
	assert_int_equal(import(e, "missing", log.p, &n, &bad), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(engine_scene_create(e, "c2"), 0);
	const char *skip = "{\"seq\":1,\"time\":1,\"client\":null,\"client_seq\":null,"
			   "\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}\n"
			   "{\"seq\":3,\"time\":2,\"client\":null,\"client_seq\":null,"
			   "\"ops\":[{\"op\":\"create\",\"id\":\"b\"}]}\n";
	assert_int_equal(import(e, "c2", skip, &n, &bad), RIGD_E_BAD_SEQ);
	assert_int_equal(bad, 2);
	const char *broken = "{\"seq\":1,\"time\":1,\"client\":null,\"client_seq\":null,"
			     "\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}\n\n"
			     "{\"seq\":2,\"time\":2,\"client\":null,\"client_seq\":null,"
			     "\"ops\":[{\"op\":\"set\",\"id\":\"b\",\"t\":[1,1,1]}]}\n";
	assert_int_equal(import(e, "c2", broken, &n, &bad), RIGD_E_UNKNOWN_NODE);
	assert_int_equal(bad, 3); /* blank lines are counted, not imported */
	assert_int_equal(import(e, "c2", "{\"seq\":1,", &n, &bad), RIGD_E_BAD_JSON);
	assert_int_equal(bad, 1);
	const char *twice = "{\"seq\":1,\"time\":1,\"client\":\"x\",\"client_seq\":4,"
			    "\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}\n"
			    "{\"seq\":2,\"time\":2,\"client\":\"x\",\"client_seq\":4,"
			    "\"ops\":[{\"op\":\"create\",\"id\":\"b\"}]}\n";
	assert_int_equal(import(e, "c2", twice, &n, &bad), RIGD_E_BAD_FIELD);
	assert_int_equal(bad, 2);
	assert_int_equal(scene_count(engine_scene(e, "c2")), 0);
	assert_int_equal(engine_seq(e, "c2"), 0);
	/* An empty log is a valid, empty import. */
	assert_int_equal(import(e, "c2", "", &n, &bad), 0);
	assert_int_equal(n, 0);
	/* Nothing of the refused imports reached the database. */
	check_ok(e);
	engine_close(e);
	e = open_ok(t.path, &o);
	assert_int_equal(engine_seq(e, "c2"), 0);
	assert_int_equal(engine_seq(e, "copy"), last);
	assert_true(live_hash(e, "copy") == hashes[last]);
	check_ok(e);
	engine_close(e);
	free(hashes);
	free(log.p);
	free(log2.p);
	free(part.p);
	tmpdb_remove(&t);
}

/* ---------- undo and redo ---------- */

static int undo(engine *e, const char *client, int64_t *seq)
{
	engine_ack ack;
	edit_error er;
	int rc = engine_undo(e, "s", client, false, 0, &ack, &er);
	if (rc)
		assert_int_equal(er.code, rc);
	else if (seq)
		*seq = ack.seq;
	engine_ack_release(&ack);
	return rc;
}

static int redo(engine *e, const char *client, int64_t *seq)
{
	engine_ack ack;
	edit_error er;
	int rc = engine_redo(e, "s", client, false, 0, &ack, &er);
	if (rc)
		assert_int_equal(er.code, rc);
	else if (seq)
		*seq = ack.seq;
	engine_ack_release(&ack);
	return rc;
}

static void test_undo_redo(void **state)
{
	tmpdb t;
	int64_t seq = 0;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	uint64_t h0 = live_hash(e, "s");
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\",\"euler\":[10,20,30]}],"
			  "\"client\":\"a\"}");
	commit_ok(e);
	uint64_t h1 = live_hash(e, "s");
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"set\",\"id\":\"x\",\"t\":[1,2,3],"
			  "\"r\":[0.1,0.2,0.3,0.9]}],\"client\":\"a\"}");
	/* Someone else's batch in between is not a's to undo. */
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"y\"}],\"client\":\"b\"}");
	commit_ok(e);
	uint64_t h2 = live_hash(e, "s"); /* x moved, y exists */

	assert_int_equal(undo(e, "a", &seq), 0); /* the set of x */
	assert_int_equal(seq, 4);
	commit_ok(e);
	/* x is back where it was, y untouched: h1 plus y. */
	const scene *s = engine_scene(e, "s");
	assert_true(scene_find(s, "y") >= 0);
	assert_int_equal(undo(e, "a", &seq), 0); /* the create of x */
	commit_ok(e);
	assert_int_equal(scene_find(engine_scene(e, "s"), "x"), -1);
	assert_int_equal(undo(e, "a", NULL), RIGD_E_NOTHING_TO_UNDO);
	assert_int_equal(undo(e, "nobody", NULL), RIGD_E_NOTHING_TO_UNDO);
	assert_int_equal(undo(e, "", NULL), RIGD_E_BAD_FIELD);
	/* b undoes its create: the scene is back to empty, bit for bit. */
	assert_int_equal(undo(e, "b", NULL), 0);
	commit_ok(e);
	assert_true(live_hash(e, "s") == h0);
	/* Redo in order: x created, then moved; b redoes y. */
	assert_int_equal(redo(e, "a", NULL), 0);
	commit_ok(e);
	assert_true(live_hash(e, "s") == h1);
	assert_int_equal(redo(e, "b", NULL), 0);
	assert_int_equal(redo(e, "a", NULL), 0); /* in the same turn */
	commit_ok(e);
	assert_true(live_hash(e, "s") == h2);
	assert_int_equal(redo(e, "a", NULL), RIGD_E_NOTHING_TO_UNDO);

	/* The history survives a restart: undo, then a new edit clears redo. */
	engine_close(e);
	e = open_ok(t.path, &o);
	assert_int_equal(undo(e, "a", NULL), 0);
	commit_ok(e);
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"set\",\"id\":\"x\",\"s\":[2,2,2]}],\"client\":\"a\"}");
	assert_int_equal(redo(e, "a", NULL), RIGD_E_NOTHING_TO_UNDO);
	commit_ok(e);
	assert_int_equal(undo(e, "a", NULL), 0); /* the scale */
	assert_int_equal(undo(e, "a", NULL), 0); /* the create (the move is undone) */
	commit_ok(e);
	assert_int_equal(scene_find(engine_scene(e, "s"), "x"), -1);

	/* Undo with a client_seq is idempotent like any batch. */
	engine_ack ack;
	edit_error er;
	assert_int_equal(engine_redo(e, "s", "a", true, 100, &ack, &er), 0);
	int64_t redo_seq = ack.seq;
	engine_ack_release(&ack);
	assert_int_equal(engine_redo(e, "s", "a", true, 100, &ack, &er), 0);
	assert_true(ack.duplicate);
	assert_int_equal(ack.seq, redo_seq);
	engine_ack_release(&ack);
	commit_ok(e);
	assert_true(scene_find(engine_scene(e, "s"), "x") >= 0);
	check_ok(e);
	engine_close(e);
	tmpdb_remove(&t);
}

static void test_undo_conflicts(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"n\"}],\"client\":\"b\"}");
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"set\",\"id\":\"n\",\"t\":[1,1,1]}],\"client\":\"a\"}");
	commit_ok(e);
	/* b deletes the node a moved: a's undo (set n back) cannot apply. */
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"delete\",\"id\":\"n\"}],\"client\":\"b\"}");
	commit_ok(e);
	uint64_t h = live_hash(e, "s");
	int64_t seq = engine_seq(e, "s");
	engine_ack ack;
	edit_error er;
	assert_int_equal(engine_undo(e, "s", "a", false, 0, &ack, &er), RIGD_E_UNDO_CONFLICT);
	assert_int_equal(er.code, RIGD_E_UNDO_CONFLICT);
	assert_int_equal(er.op, 0);
	assert_non_null(strstr(er.message, "'n'"));
	engine_ack_release(&ack);
	/* Nothing changed; the same undo is refused again. */
	assert_int_equal(engine_pending(e), 0);
	assert_true(live_hash(e, "s") == h);
	assert_int_equal(undo(e, "a", NULL), RIGD_E_UNDO_CONFLICT);
	assert_int_equal(engine_seq(e, "s"), seq);

	/* Redo conflict: c creates m, undoes it, b takes the id. */
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"m\"}],\"client\":\"c\"}");
	commit_ok(e);
	assert_int_equal(undo(e, "c", NULL), 0);
	commit_ok(e);
	submit_ok(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"m\",\"t\":[9,9,9]}],"
			  "\"client\":\"b\"}");
	commit_ok(e);
	assert_int_equal(redo(e, "c", NULL), RIGD_E_UNDO_CONFLICT);
	assert_int_equal(engine_pending(e), 0);
	check_ok(e);
	engine_close(e);
	tmpdb_remove(&t);
}

/* ---------- injected faults ---------- */

/*
 * A committed state, then a turn of batches (creates, sets, a delete, an
 * undo) whose commit hits 'ops' faults after 'after' calls: nothing is
 * acknowledged, every scene is back bit for bit, the seqs are free again,
 * reads work; once the fault clears the same batches commit with the same
 * seqs.
 */
static void fault_case(unsigned ops, long after, int kind, int snapshot_ops)
{
	tmpdb t;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(snapshot_ops);
	o.sync_normal = false; /* FULL: the commit syncs, so sync faults hit it */
	o.fault_injection = true;
	engine *e = open_ok(t.path, &o);
	make_demo(e, "demo");
	assert_int_equal(engine_scene_create(e, "r"), 0);
	random_turns(e, "r", 10, 4, NULL, 0);
	submit_ok(e, "demo", "{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"euler\":[0,0,10]}],"
			     "\"client\":\"u\"}");
	commit_ok(e);
	uint64_t h_demo = live_hash(e, "demo"), h_r = live_hash(e, "r");
	int64_t seq_demo = engine_seq(e, "demo"), seq_r = engine_seq(e, "r");
	text log_before = { 0 };
	assert_int_equal(engine_log(e, "demo", 0, -1, collect, &log_before), 0);

	const char *turn[] = {
		"{\"ops\":[{\"op\":\"create\",\"id\":\"finger\",\"parent\":\"hand\","
		"\"t\":[0,0.1,0]}],\"client\":\"f\",\"client_seq\":1}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"base\",\"euler\":[0,75,0]}],\"client\":\"f\","
		"\"client_seq\":2}",
		"{\"ops\":[{\"op\":\"reparent\",\"id\":\"hand\",\"parent\":\"base\","
		"\"keep_world\":true}],\"client\":\"f\",\"client_seq\":3}",
		"{\"ops\":[{\"op\":\"delete\",\"id\":\"arm\"}],\"client\":\"f\",\"client_seq\":4}",
	};
	for (int round = 0; round < 2; round++) {
		if (round == 0)
			assert_int_equal(engine_fault(e, ops, after, kind), 0);
		assert_int_equal(engine_undo(e, "demo", "u", false, 0, NULL, NULL), 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(submit_ok(e, "demo", turn[i]), seq_demo + 2 + i);
		edit_batch b;
		rnd_batch(engine_scene(e, "r"), &b, "f", 0);
		engine_submit(e, "r", &b, NULL, NULL); /* accepted or not */
		edit_batch_release(&b);
		if (round == 0) {
			assert_int_equal(engine_commit(e), RIGD_E_STORAGE);
			assert_true(strlen(engine_errmsg(e)) > 0);
			assert_int_equal(engine_pending(e), 0);
			/* Back to the committed state, exactly. */
			assert_int_equal(engine_seq(e, "demo"), seq_demo);
			assert_int_equal(engine_seq(e, "r"), seq_r);
			assert_true(live_hash(e, "demo") == h_demo);
			assert_true(live_hash(e, "r") == h_r);
			const scene *d = engine_scene(e, "demo");
			assert_int_equal(scene_count(d), 3);
			assert_int_equal(scene_find(d, "finger"), -1);
			/* Reads go on while the fault lasts. */
			scene *at = NULL;
			assert_int_equal(engine_at(e, "demo", seq_demo, &at), 0);
			assert_true(scene_hash(at) == h_demo);
			scene_free(at);
			text log = { 0 };
			assert_int_equal(engine_log(e, "demo", 0, -1, collect, &log), 0);
			assert_int_equal(log.len, log_before.len);
			free(log.p);
			/* A commit while the fault lasts fails again. */
			submit_ok(e, "demo", turn[0]);
			assert_int_equal(engine_commit(e), RIGD_E_STORAGE);
			assert_true(live_hash(e, "demo") == h_demo);
			engine_fault_clear(e);
		} else {
			commit_ok(e);
		}
	}
	/* Committed with the seqs the failed turn had been given. */
	assert_int_equal(engine_seq(e, "demo"), seq_demo + 5);
	assert_int_equal(scene_find(engine_scene(e, "demo"), "arm"), -1);
	engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.failed_commits, 2);
	uint64_t h_after = live_hash(e, "demo");
	check_ok(e);
	engine_close(e);
	e = open_ok(t.path, &o);
	assert_true(live_hash(e, "demo") == h_after);
	check_ok(e);
	engine_close(e);
	free(log_before.p);
	tmpdb_remove(&t);
}

static void test_fault_write_ioerr(void **state)
{
	(void)state;
	fault_case(STORE_FAULT_WRITE, 0, STORE_FAULT_IOERR, 0);
}

static void test_fault_disk_full(void **state)
{
	(void)state;
	fault_case(STORE_FAULT_WRITE, 0, STORE_FAULT_FULL, 0);
}

static void test_fault_sync(void **state)
{
	(void)state;
	fault_case(STORE_FAULT_SYNC, 0, STORE_FAULT_IOERR, 0);
}

/* Faults a few calls into the commit, with a snapshot due in it. */
static void test_fault_mid_commit(void **state)
{
	(void)state;
	for (long after = 1; after <= 4; after++)
		fault_case(STORE_FAULT_WRITE | STORE_FAULT_SYNC, after,
			   after % 2 ? STORE_FAULT_FULL : STORE_FAULT_IOERR, 1);
}

/* ---------- scenes, stamps, check, depth ---------- */

static void test_scenes(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "b"), 0);
	assert_int_equal(engine_scene_create(e, "a"), 0);
	assert_int_equal(engine_scene_create(e, "a"), RIGD_E_SCENE_EXISTS);
	assert_int_equal(engine_scene_create(e, "bad name"), RIGD_E_BAD_ID);
	assert_int_equal(engine_scene_create(e, ""), RIGD_E_BAD_ID);
	submit_ok(e, "b", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\"}]}");
	/* A scene with uncommitted batches cannot go. */
	assert_int_equal(engine_scene_delete(e, "b"), RIGD_E_INTERNAL);
	commit_ok(e);
	engine_scene_info info[4];
	assert_int_equal(engine_scenes(e, info, 4), 2);
	assert_string_equal(info[0].name, "a");
	assert_string_equal(info[1].name, "b");
	assert_int_equal(info[1].seq, 1);
	assert_int_equal(info[1].nodes, 1);
	assert_int_equal(engine_scenes(e, NULL, 0), 2);
	assert_int_equal(engine_scene_delete(e, "b"), 0);
	assert_int_equal(engine_scene_delete(e, "b"), RIGD_E_UNKNOWN_SCENE);
	assert_null(engine_scene(e, "b"));
	assert_int_equal(engine_seq(e, "b"), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(submit(e, "b", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\"}]}", NULL, NULL),
			 RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(engine_update(e, "b", NULL, NULL), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(engine_undo(e, "b", "c", false, 0, NULL, NULL), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(engine_log(e, "b", 0, -1, collect, NULL), RIGD_E_UNKNOWN_SCENE);
	/* A re-created scene starts from seq 1 again, with no old history. */
	assert_int_equal(engine_scene_create(e, "b"), 0);
	assert_int_equal(submit_ok(e, "b", "{\"ops\":[{\"op\":\"create\",\"id\":\"y\"}]}"), 1);
	commit_ok(e);
	engine_close(e);
	e = open_ok(t.path, &o);
	assert_int_equal(engine_scenes(e, info, 4), 2);
	assert_int_equal(scene_find(engine_scene(e, "b"), "x"), -1);
	assert_true(scene_find(engine_scene(e, "b"), "y") >= 0);
	check_ok(e);
	/* A second engine on the same file is refused, a reader too. */
	int err = 0;
	char msg[256];
	assert_null(engine_open(t.path, &o, &err, msg, sizeof(msg)));
	assert_int_equal(err, RIGD_E_LOCKED);
	engine_opts ro = o;
	ro.read_only = true;
	assert_null(engine_open(t.path, &ro, &err, msg, sizeof(msg)));
	assert_int_equal(err, RIGD_E_LOCKED);
	uint64_t h = live_hash(e, "b");
	engine_close(e);

	/* Readers side by side: they read, and refuse every write. */
	engine *r1 = open_ok(t.path, &ro), *r2 = open_ok(t.path, &ro);
	assert_true(live_hash(r2, "b") == h);
	check_ok(r1);
	assert_int_equal(submit(r1, "b", "{\"ops\":[{\"op\":\"create\",\"id\":\"z\"}]}", NULL,
				NULL),
			 RIGD_E_FORBIDDEN);
	assert_int_equal(engine_undo(r1, "b", "c", false, 0, NULL, NULL), RIGD_E_FORBIDDEN);
	assert_int_equal(engine_scene_create(r1, "new"), RIGD_E_FORBIDDEN);
	assert_int_equal(engine_scene_delete(r1, "b"), RIGD_E_FORBIDDEN);
	assert_int_equal(engine_import(r1, "a", "", 0, NULL, NULL, NULL), RIGD_E_FORBIDDEN);
	assert_int_equal(engine_pending(r1), 0);
	assert_int_equal(engine_commit(r1), 0);
	engine_close(r1);
	engine_close(r2);
	tmpdb_remove(&t);
}

typedef struct ranges {
	int n;
	int covered;
} ranges;

static void range_cb(void *ctx, int first, int end)
{
	ranges *r = ctx;
	r->n++;
	r->covered += end - first;
}

static void test_update_stamps(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	make_demo(e, "demo");
	assert_true(engine_update(e, "demo", NULL, NULL) == 3);
	assert_true(engine_update(e, "demo", NULL, NULL) == 0);
	engine_ack ack;
	edit_batch b;
	parse(&b, "{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"euler\":[0,0,20]}]}");
	assert_int_equal(engine_submit(e, "demo", &b, &ack, NULL), 0);
	edit_batch_release(&b);
	assert_int_equal(ack.recomputed, 2); /* arm and hand */
	assert_int_equal(ack.changes.n_changed, 1);
	assert_string_equal(ack.changes.changed[0].s, "arm");
	engine_ack_release(&ack);
	commit_ok(e);
	ranges r = { 0 };
	assert_int_equal(engine_update(e, "demo", range_cb, &r), 2);
	assert_int_equal(r.covered, 2);
	const scene *s = engine_scene(e, "demo");
	assert_int_equal(scene_world_stamp(s, scene_find(s, "hand")), 2);
	assert_int_equal(scene_world_stamp(s, scene_find(s, "arm")), 2);
	assert_int_equal(scene_world_stamp(s, scene_find(s, "base")), 1);
	engine_close(e);
	tmpdb_remove(&t);
}

/* A database whose latest snapshot was replaced by another valid one: the
 * engine loads it (it cannot know), engine_check proves it wrong. A
 * snapshot whose bytes no longer match its checksum is refused at open. */
static int copy_snap_cb(void *ctx, const store_snapshot *sn)
{
	store_snapshot *out = ctx;
	if (out->data)
		return 0; /* keep the first */
	*out = *sn;
	void *p = malloc(sn->len);
	assert_non_null(p);
	memcpy(p, sn->data, sn->len);
	out->data = p;
	return 0;
}

static void test_check_finds_tampering(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(20);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	random_turns(e, "s", 60, 5, NULL, 0);
	engine_stats stats;
	engine_get_stats(e, &stats);
	assert_true(stats.snapshots >= 3);
	check_ok(e);
	engine_close(e);

	store *st = store_open(t.path, NULL, NULL, NULL, 0);
	assert_non_null(st);
	store_snapshot first = { 0 }, middle = { 0 }, latest = { 0 };
	assert_int_equal(store_snapshots(st, 1, true, copy_snap_cb, &first), 0);
	assert_int_equal(store_snapshot_latest(st, 1, -1, copy_snap_cb, &latest), 0);
	assert_int_equal(store_snapshot_latest(st, 1, latest.seq - 1, copy_snap_cb, &middle), 0);
	assert_true(first.seq < middle.seq && middle.seq < latest.seq);
	/* The first snapshot's state filed under a later seq: well-formed,
	 * and wrong. Opening does not use it (the latest is later). */
	store_snapshot fake = first;
	fake.seq = middle.seq;
	assert_int_equal(store_snapshot_put(st, &fake), 0);
	store_close(st);

	e = open_ok(t.path, &o);
	assert_int_equal(engine_check(e, NULL, NULL), RIGD_E_STORAGE);
	engine_close(e);

	st = store_open(t.path, NULL, NULL, NULL, 0);
	assert_non_null(st);
	((unsigned char *)latest.data)[latest.len / 2] ^= 1;
	assert_int_equal(store_snapshot_put(st, &latest), 0);
	store_close(st);
	int err = 0;
	char msg[512];
	assert_null(engine_open(t.path, &o, &err, msg, sizeof(msg)));
	assert_int_equal(err, RIGD_E_STORAGE);
	assert_non_null(strstr(msg, "corrupt"));
	free((void *)first.data);
	free((void *)middle.data);
	free((void *)latest.data);
	tmpdb_remove(&t);
}

/* ---------- the binary image of ops ---------- */

/* Any 64 bits as a double: NaNs, infinities, -0 and subnormals included,
 * which the codec must copy as they are (validation is edit_apply's). */
static double rnd_bits(void)
{
	uint64_t v = rnd();
	double d;
	switch (rnd_int(6)) {
	case 0: v = 0x8000000000000000ull; break;             /* -0 */
	case 1: v = 0x7ff8000000000001ull; break;             /* a NaN with payload */
	case 2: v &= 0x000fffffffffffffull; break;            /* subnormal */
	default: break;
	}
	memcpy(&d, &v, sizeof(d));
	return d;
}

static vec3 rnd_vec3_bits(void)
{
	return vec3_make(rnd_bits(), rnd_bits(), rnd_bits());
}

static void rnd_str(char *buf, int max)
{
	int n = rnd_int(max + 1);
	for (int i = 0; i < n; i++)
		buf[i] = (char)(1 + rnd_int(255)); /* any byte but NUL */
	buf[n] = 0;
}

/* A batch of 0..12 ops of every kind with any subset of the fields. */
static void rnd_any_batch(edit_batch *b)
{
	char id[SCENE_ID_MAX + 1], str[SCENE_NAME_MAX + 1];
	edit_batch_init(b);
	int n = rnd_int(13);
	for (int i = 0; i < n; i++) {
		rnd_str(id, SCENE_ID_MAX);
		edit_op *op = edit_batch_add(b, EDIT_CREATE + rnd_int(4), id);
		assert_non_null(op);
		unsigned f = (unsigned)rnd() & ((1u << EDIT_F_COUNT_) - 1);
		op->fields = f;
		rnd_str(op->parent, SCENE_ID_MAX);
		op->index = rnd_int(3) ? (int)(uint32_t)rnd() : -1;
		if (f & EDIT_F_NAME) {
			rnd_str(str, SCENE_NAME_MAX);
			assert_int_equal(edit_op_set_name(op, rnd_int(4) ? str : NULL), 0);
		}
		op->t = rnd_vec3_bits();
		op->r = (quat){ rnd_bits(), rnd_bits(), rnd_bits(), rnd_bits() };
		op->s = rnd_vec3_bits();
		op->pivot = rnd_vec3_bits();
		op->euler_deg = rnd_vec3_bits();
		op->has_bounds = rnd_int(2);
		op->bounds = aabb_make(rnd_vec3_bits(), rnd_vec3_bits());
		if (f & EDIT_F_MESH) {
			rnd_str(str, SCENE_MESH_MAX);
			assert_int_equal(edit_op_set_mesh(op, rnd_int(4) ? str : NULL), 0);
		}
		op->fields = f; /* set_name / set_mesh add their bits */
		op->node_kind = (int)(uint32_t)rnd();
		op->fov_deg = rnd_bits();
		op->znear = rnd_bits();
		op->zfar = rnd_bits();
		op->visible = rnd_int(2);
		op->keep_world = rnd_int(2);
	}
}

/* Decodes from an exact-size heap copy, so that AddressSanitizer catches a
 * read past the end. */
static int decode_copy(const unsigned char *img, size_t len, edit_batch *out)
{
	unsigned char *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, img, len);
	int rc = engine_ops_decode_bin(copy, len, out);
	free(copy);
	return rc;
}

static void test_ops_bin_round_trip(void **state)
{
	(void)state;
	for (int k = 0; k < 2000; k++) {
		edit_batch b, back;
		rnd_any_batch(&b);
		unsigned char *img = NULL, *again = NULL;
		size_t len = 0, again_len = 0;
		assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
		assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT);
		assert_int_equal(decode_copy(img, len, &back), 0);
		assert_same_ops(&b, &back);
		assert_int_equal(engine_ops_encode_bin(&back, &again, &again_len), 0);
		assert_int_equal(again_len, len);
		assert_memory_equal(again, img, len);
		free(img);
		free(again);
		edit_batch_release(&b);
		edit_batch_release(&back);
	}
}

static void test_ops_bin_refuses_bad_images(void **state)
{
	(void)state;
	/* Every op kind and field in one batch. */
	edit_batch b;
	parse(&b, "{\"ops\":[{\"op\":\"create\",\"id\":\"cam\",\"parent\":\"base\",\"index\":2,"
		  "\"name\":\"Camera\",\"t\":[1,2,3],\"r\":[0,0,0,1],\"s\":[1,1,1],"
		  "\"pivot\":[0,-0.5,0],\"bounds\":{\"min\":[-1,-1,-1],\"max\":[1,1,1]},"
		  "\"mesh\":\"box\",\"kind\":\"camera\",\"camera\":{\"fov\":50,\"near\":0.1,"
		  "\"far\":100},\"visible\":false},"
		  "{\"op\":\"set\",\"id\":\"cam\",\"euler\":[10,20,30],\"name\":null,"
		  "\"bounds\":null,\"mesh\":null},"
		  "{\"op\":\"reparent\",\"id\":\"cam\",\"parent\":null,\"keep_world\":true},"
		  "{\"op\":\"delete\",\"id\":\"cam\"}]}");
	unsigned char *img = NULL;
	size_t len = 0;
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	edit_batch out;
	assert_int_equal(decode_copy(img, len, &out), 0);
	assert_same_ops(&b, &out);
	edit_batch_release(&out);

	/* Every truncation, and one byte too many. */
	for (size_t n = 0; n < len; n++) {
		assert_int_equal(decode_copy(img, n, &out), RIGD_E_IO);
		assert_int_equal(out.n_ops, 0);
	}
	unsigned char *longer = malloc(len + 1);
	assert_non_null(longer);
	memcpy(longer, img, len);
	longer[len] = 0;
	assert_int_equal(decode_copy(longer, len + 1, &out), RIGD_E_IO);
	free(longer);
	assert_int_equal(engine_ops_decode_bin(NULL, 0, &out), RIGD_E_IO);

	/* Named corruptions: another format, an op count beyond the bytes, an
	 * unknown kind, an id too long or holding a NUL. (Every bit of the
	 * u16 of fields names a field.) */
	unsigned char *bad = malloc(len);
	assert_non_null(bad);
	struct {
		size_t at;
		unsigned char v;
	} cases[] = {
		{ 0, 2 }, { 0, 0 },   /* format */
		{ 4, 0x7f },          /* n_ops high byte */
		{ 1, 200 },           /* n_ops: more ops than bytes */
		{ 5, 0 }, { 5, 9 },   /* op kind */
		{ 8, SCENE_ID_MAX + 1 }, /* id length */
		{ 9, 0 },             /* a NUL inside the id */
		{ len - 1, 0 },       /* the delete's id ends in a NUL */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, img, len);
		bad[cases[i].at] = cases[i].v;
		assert_int_equal(decode_copy(bad, len, &out), RIGD_E_IO);
	}
	/* The reparent's keep_world boolean is the byte before the delete op
	 * (kind, fields, id "cam"): 2 is not a boolean. */
	memcpy(bad, img, len);
	assert_int_equal(bad[len - 8], 1);
	bad[len - 8] = 2;
	assert_int_equal(decode_copy(bad, len, &out), RIGD_E_IO);

	/* Any single byte changed: refused or decoded, never a crash or a read
	 * past the end (ASan watches the exact-size copies). */
	for (size_t at = 0; at < len; at++) {
		for (int v = 0; v < 256; v += 17) {
			memcpy(bad, img, len);
			bad[at] ^= (unsigned char)(v | 1);
			int rc = decode_copy(bad, len, &out);
			assert_true(rc == 0 || rc == RIGD_E_IO);
			assert_true(rc == 0 || out.n_ops == 0);
			edit_batch_release(&out);
		}
	}
	/* Random bytes behind a valid header. */
	for (int k = 0; k < 5000; k++) {
		size_t n = 5 + (size_t)rnd_int(200);
		unsigned char *junk = malloc(n);
		assert_non_null(junk);
		for (size_t i = 0; i < n; i++)
			junk[i] = (unsigned char)rnd();
		junk[0] = ENGINE_OPS_BIN_FORMAT;
		junk[1] = (unsigned char)rnd_int(4);
		junk[2] = junk[3] = junk[4] = 0;
		int rc = engine_ops_decode_bin(junk, n, &out);
		assert_true(rc == 0 || rc == RIGD_E_IO);
		edit_batch_release(&out);
		free(junk);
	}
	free(bad);
	free(img);
	edit_batch_release(&b);
}

/* Log rows as store_edits_ex hands them over, copied. */
typedef struct row_log {
	int n;
	int64_t seq[64];
	bool has_bin[64];
	unsigned char *bin[64];
	size_t bin_len[64];
	bool has_json[64];
} row_log;

static int row_log_cb(void *ctx, const store_edit *e)
{
	row_log *l = ctx;
	assert_true(l->n < 64);
	int i = l->n++;
	l->seq[i] = e->seq;
	l->has_bin[i] = e->ops_bin != NULL;
	l->has_json[i] = e->ops != NULL;
	l->bin[i] = NULL;
	l->bin_len[i] = e->ops_bin_len;
	if (e->ops_bin) {
		l->bin[i] = malloc(e->ops_bin_len + 1);
		assert_non_null(l->bin[i]);
		memcpy(l->bin[i], e->ops_bin, e->ops_bin_len);
	}
	return 0;
}

static void row_log_free(row_log *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->bin[i]);
	l->n = 0;
}

/* Counts the report lines of engine_check that contain 'needle'. */
typedef struct line_count {
	const char *needle;
	int n;
} line_count;

static void count_line_cb(void *ctx, const char *line)
{
	line_count *c = ctx;
	if (strstr(line, c->needle))
		c->n++;
}

/* A database written at schema version 2 (no ops_bin): the new code
 * upgrades it, replays its rows from JSON, stores an image with every new
 * row, and check proves both kinds of row. */
static void test_ops_bin_migration(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store_opts so = store_opts_default();
	so.sync_normal = true;
	so.migrate_to = 2;
	store *st = store_open(t.path, &so, NULL, NULL, 0);
	assert_non_null(st);
	assert_int_equal(store_version(st), 2);
	int64_t scene_id = 0;
	assert_int_equal(store_scene_create(st, "old", 1, &scene_id), 0);
	/* Rows as the old engine wrote them: ops and inverse as JSON. */
	scene *ref = scene_new();
	assert_non_null(ref);
	const char *batches[] = {
		("{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"t\":[0.1,0.2,0.3]},"
		 "{\"op\":\"create\",\"id\":\"b\",\"parent\":\"a\",\"euler\":[0,45,0]}]}"),
		"{\"ops\":[{\"op\":\"set\",\"id\":\"b\",\"t\":[1,2,3],\"name\":\"Bee\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"s\":[2,2,2]}]}",
	};
	assert_int_equal(store_begin(st), 0);
	for (int i = 0; i < 3; i++) {
		edit_batch b, inv;
		parse(&b, batches[i]);
		assert_int_equal(edit_apply(ref, &b, NULL, &inv, NULL), 0);
		proto_buf ops, inverse;
		proto_buf_init(&ops, 0);
		proto_buf_init(&inverse, 0);
		assert_int_equal(proto_encode_ops(&ops, &b), 0);
		assert_int_equal(proto_encode_ops(&inverse, &inv), 0);
		unsigned char *img = NULL;
		size_t img_len = 0;
		assert_int_equal(engine_ops_encode_bin(&b, &img, &img_len), 0);
		store_edit row = {
			.scene_id = scene_id,
			.seq = i + 1,
			.time_us = 1000 + i,
			.client = "",
			.n_ops = b.n_ops,
			.ops = proto_buf_str(&ops),
			.ops_len = ops.len,
			.inverse = proto_buf_str(&inverse),
			.inverse_len = inverse.len,
			/* Offered, but a version 2 database has nowhere to
			 * keep it: the store leaves it out. */
			.ops_bin = img,
			.ops_bin_len = img_len,
		};
		assert_int_equal(store_edit_append(st, &row), 0);
		free(img);
		proto_buf_release(&ops);
		proto_buf_release(&inverse);
		edit_batch_release(&b);
		edit_batch_release(&inv);
	}
	assert_int_equal(store_commit(st), 0);
	row_log rows = { 0 };
	assert_int_equal(store_edits_ex(st, scene_id, 0, -1, 0, row_log_cb, &rows), 0);
	assert_int_equal(rows.n, 3);
	for (int i = 0; i < 3; i++)
		assert_false(rows.has_bin[i]);
	row_log_free(&rows);
	store_close(st);
	scene_update(ref, 3, NULL, NULL);

	engine_opts o = test_opts(1000);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_seq(e, "old"), 3);
	assert_int_equal(live_hash(e, "old"), scene_hash(ref));
	submit_ok(e, "old", "{\"ops\":[{\"op\":\"set\",\"id\":\"b\",\"t\":[4,5,6]}]}");
	submit_ok(e, "old", "{\"ops\":[{\"op\":\"create\",\"id\":\"c\",\"parent\":\"b\"}]}");
	commit_ok(e);
	uint64_t h = live_hash(e, "old");
	line_count old_rows = { "logged before binary images", 0 };
	assert_int_equal(engine_check(e, count_line_cb, &old_rows), 0);
	assert_int_equal(old_rows.n, 1);
	scene *at2 = NULL;
	assert_int_equal(engine_at(e, "old", 2, &at2), 0);
	engine_close(e);
	scene_free(at2);

	st = store_open(t.path, NULL, NULL, NULL, 0);
	assert_non_null(st);
	assert_int_equal(store_version(st), store_schema_latest());
	assert_int_equal(store_edits_ex(st, scene_id, 0, -1, 0, row_log_cb, &rows), 0);
	assert_int_equal(rows.n, 5);
	for (int i = 0; i < 5; i++) {
		/* Replay reads one form of each row: JSON for the old ones,
		 * the image for the new. */
		assert_int_equal(rows.has_bin[i], i >= 3);
		assert_int_equal(rows.has_json[i], i < 3);
	}
	edit_batch dec;
	assert_int_equal(engine_ops_decode_bin(rows.bin[3], rows.bin_len[3], &dec), 0);
	assert_int_equal(dec.n_ops, 1);
	assert_string_equal(dec.ops[0].id, "b");
	assert_int_equal(dec.ops[0].fields, EDIT_F_T);
	assert_true(dec.ops[0].t.x == 4 && dec.ops[0].t.y == 5 && dec.ops[0].t.z == 6);
	edit_batch_release(&dec);
	row_log_free(&rows);
	store_close(st);

	e = open_ok(t.path, &o);
	assert_int_equal(live_hash(e, "old"), h);
	check_ok(e);
	engine_close(e);
	scene_free(ref);
	tmpdb_remove(&t);
}

/* Replaces the image of row 'seq' of scene 1 ('len' bytes at 'img'). */
static void put_image(const char *path, int64_t seq, const void *img, size_t len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "UPDATE edits SET ops_bin = ?1"
						" WHERE scene_id = 1 AND seq = ?2",
					    -1, &s, NULL),
			 SQLITE_OK);
	sqlite3_bind_blob(s, 1, img, (int)len, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, seq);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	assert_int_equal(sqlite3_changes(db), 1);
	sqlite3_finalize(s);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* An image changed behind the engine's back: one that still decodes (a
 * translation one bit off) is loaded without complaint and caught by
 * check, which compares it with the row's JSON; one cut short stops the
 * open with "corrupt". */
static void test_check_finds_tampered_image(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(1000);
	engine *e = open_ok(t.path, &o);
	make_demo(e, "s");
	for (int i = 0; i < 8; i++) {
		char json[128];
		snprintf(json, sizeof(json),
			 "{\"ops\":[{\"op\":\"set\",\"id\":\"hand\",\"t\":[%d,0.5,0.25]}]}", i);
		submit_ok(e, "s", json);
	}
	commit_ok(e);
	check_ok(e);
	engine_close(e);

	store *st = store_open(t.path, NULL, NULL, NULL, 0);
	assert_non_null(st);
	row_log rows = { 0 };
	assert_int_equal(store_edits_ex(st, 1, 4, 5, 0, row_log_cb, &rows), 0);
	store_close(st);
	assert_int_equal(rows.n, 1);
	assert_true(rows.has_bin[0]);
	unsigned char *img = rows.bin[0];
	size_t len = rows.bin_len[0];

	/* The last 8 bytes are t.z (0.25): flip its lowest mantissa bit. */
	img[len - 8] ^= 1;
	put_image(t.path, 5, img, len);
	e = open_ok(t.path, &o);
	line_count lines = { "binary image", 0 };
	assert_int_equal(engine_check(e, count_line_cb, &lines), RIGD_E_STORAGE);
	assert_true(lines.n >= 1);
	engine_close(e);

	/* Cut short: the open refuses the log. */
	put_image(t.path, 5, img, len - 3);
	int err = 0;
	char msg[512] = "";
	assert_null(engine_open(t.path, &o, &err, msg, sizeof(msg)));
	assert_int_equal(err, RIGD_E_STORAGE);
	assert_non_null(strstr(msg, "corrupt"));
	/* An empty image likewise. */
	put_image(t.path, 5, "", 0);
	assert_null(engine_open(t.path, &o, &err, msg, sizeof(msg)));
	assert_int_equal(err, RIGD_E_STORAGE);

	/* The original back: all is well again. */
	img[len - 8] ^= 1;
	put_image(t.path, 5, img, len);
	e = open_ok(t.path, &o);
	check_ok(e);
	engine_close(e);
	row_log_free(&rows);
	tmpdb_remove(&t);
}

/* A chain 10,000 nodes deep, logged, snapshotted, reloaded, checked and
 * time-travelled. (Its length is bounded by the cost of building it through
 * edits, each create updating every ancestor's subtree size; the scene and
 * edit tests take chains a million deep.) */
static void test_deep_chain(void **state)
{
	enum { DEPTH = 10000, PER_BATCH = 1000 };
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(1000);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create(e, "deep"), 0);
	char id[16], parent[16];
	for (int base = 0; base < DEPTH; base += PER_BATCH) {
		edit_batch b;
		edit_batch_init(&b);
		for (int i = base; i < base + PER_BATCH; i++) {
			snprintf(id, sizeof(id), "c%d", i);
			edit_op *op = edit_batch_add(&b, EDIT_CREATE, id);
			assert_non_null(op);
			if (i > 0) {
				snprintf(parent, sizeof(parent), "c%d", i - 1);
				assert_int_equal(edit_op_set_parent(op, parent), 0);
			}
			op->fields |= EDIT_F_T | EDIT_F_R;
			op->t = vec3_make(0, 1e-3, 0);
			op->r = (quat){ 0, 0, sin(1e-4), cos(1e-4) };
		}
		engine_ack ack;
		assert_int_equal(engine_submit(e, "deep", &b, &ack, NULL), 0);
		engine_ack_release(&ack);
		edit_batch_release(&b);
		commit_ok(e);
	}
	/* Sets at the root, each moving every node, until the log since the
	 * first snapshot outweighs the scene and the chain is snapshotted. */
	for (int k = 0; k < 2; k++) {
		edit_batch b;
		edit_batch_init(&b);
		for (int i = 0; i < PER_BATCH; i++) {
			edit_op *op = edit_batch_add(&b, EDIT_SET, "c0");
			assert_non_null(op);
			op->fields |= EDIT_F_T;
			op->t = vec3_make(k, i, 3);
		}
		assert_int_equal(engine_submit(e, "deep", &b, NULL, NULL), 0);
		edit_batch_release(&b);
		commit_ok(e);
	}
	uint64_t h = live_hash(e, "deep");
	engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.snapshots, 2); /* after the first batch and the first sets */
	engine_close(e);
	e = open_ok(t.path, &o);
	assert_true(live_hash(e, "deep") == h);
	const scene *s = engine_scene(e, "deep");
	assert_int_equal(scene_depth(s, scene_find(s, "c9999")), DEPTH - 1);
	scene *at = NULL;
	assert_int_equal(engine_at(e, "deep", DEPTH / PER_BATCH, &at), 0);
	assert_int_equal(scene_count(at), DEPTH);
	scene_free(at);
	check_ok(e);
	engine_close(e);
	tmpdb_remove(&t);
}

/* An optional argument selects tests by name (cmocka's filter pattern). */
/* The cluster incarnation of a scene through the engine: none, recorded,
 * kept across a reopen; unknown scenes and bad numbers refused, changing
 * nothing; a read-only engine refuses to record one. */
static void test_scene_gen(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	engine_opts o = test_opts(0);
	engine *e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_create_dims(e, "flat", 2), 0);
	assert_int_equal(engine_scene_gen(e, "flat"), 0);
	assert_int_equal(engine_scene_gen(e, "nope"), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(engine_scene_set_gen(e, "nope", 2), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(engine_scene_set_gen(e, "flat", -1), RIGD_E_BAD_FIELD);
	assert_int_equal(engine_scene_gen(e, "flat"), 0);
	assert_int_equal(engine_scene_set_gen(e, "flat", 12), 0);
	assert_int_equal(engine_scene_gen(e, "flat"), 12);
	engine_close(e);
	o.read_only = true;
	e = open_ok(t.path, &o);
	assert_int_equal(engine_scene_gen(e, "flat"), 12);
	assert_int_equal(engine_scene_set_gen(e, "flat", 13), RIGD_E_FORBIDDEN);
	engine_close(e);
	tmpdb_remove(&t);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seqs_gapless),
		cmocka_unit_test(test_idempotent_resend),
		cmocka_unit_test(test_reopen_bit_identical),
		cmocka_unit_test(test_time_travel),
		cmocka_unit_test(test_export_import),
		cmocka_unit_test(test_undo_redo),
		cmocka_unit_test(test_undo_conflicts),
		cmocka_unit_test(test_fault_write_ioerr),
		cmocka_unit_test(test_fault_disk_full),
		cmocka_unit_test(test_fault_sync),
		cmocka_unit_test(test_fault_mid_commit),
		cmocka_unit_test(test_scenes),
		cmocka_unit_test(test_update_stamps),
		cmocka_unit_test(test_check_finds_tampering),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_ops_bin_round_trip),
		cmocka_unit_test(test_ops_bin_refuses_bad_images),
		cmocka_unit_test(test_ops_bin_migration),
		cmocka_unit_test(test_check_finds_tampered_image),
		cmocka_unit_test(test_scene_gen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
