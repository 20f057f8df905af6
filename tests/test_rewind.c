/*
 * test_rewind.c: engine_rewind (server/engine/engine_rewind.c,
 * store_rewind.c), which a cluster process uses to take a scene back to
 * the log stream's batches: the log rows, snapshots and assets after the
 * seq go in one transaction, the scene is as it was at that seq, a
 * (client, client_seq) of a dropped batch is new again, and bad calls
 * change nothing. The database passes engine_check after it and after a
 * reopen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/proto.h"
#include "codec/svg.h"
#include "core/err.h"
#include "core/scene.h"
#include "engine/engine.h"

#include "tmpdb.h"

static const char art_svg[] =
	"<svg xmlns=\"http://www.w3.org/2000/svg\"><g id=\"torso\"><rect width=\"4\" height=\"6\"/></g>"
	"</svg>";

static engine *open_engine(const char *path)
{
	engine_opts o = engine_opts_default();
	char msg[256] = "";
	int err = 0;
	engine *e;

	o.sync_normal = true;
	o.snapshot_ops = 1;  /* a snapshot at nearly every commit */
	e = engine_open(path, &o, &err, msg, sizeof(msg));
	if (!e)
		fail_msg("engine_open: %s", msg);
	return e;
}

static void decode(const char *json, edit_batch *b)
{
	proto_limits lim = proto_limits_default();
	edit_error er;

	if (proto_decode_batch(json, strlen(json), &lim, b, &er) != 0)
		fail_msg("decode %s: %s", json, er.message);
}

/* Submits 'json' (with asset 'file' when not NULL) and commits it: the
 * batch's seq, or the submit's error code (negative). */
static int64_t commit_one(engine *e, const char *json, const char *file)
{
	svg_clean art;
	edit_batch b;
	engine_ack ack;
	edit_error er;
	int64_t seq;
	int rc;

	decode(json, &b);
	if (file) {
		assert_int_equal(svg_sanitize(art_svg, strlen(art_svg), NULL, &art, &er), 0);
		rc = engine_asset_submit(e, "s", &b, file,
					 &(engine_svg){ art.svg, art.len, art.ids, art.n_ids }, NULL,
					 &ack, &er);
		svg_clean_release(&art);
	} else {
		rc = engine_submit(e, "s", &b, &ack, &er);
	}
	edit_batch_release(&b);
	if (rc)
		return rc;
	seq = ack.seq;
	engine_ack_release(&ack);
	assert_int_equal(engine_commit(e), 0);
	return seq;
}

static int count_cb(void *ctx, const engine_asset_info *a)
{
	(void)a;
	++*(int *)ctx;
	return 0;
}

static int n_assets(engine *e)
{
	int n = 0;

	assert_int_equal(engine_assets(e, "s", -1, count_cb, &n), 0);
	return n;
}

static int count_line(void *ctx, const char *line, size_t len)
{
	(void)line;
	(void)len;
	++*(int *)ctx;
	return 0;
}

static int n_lines(engine *e)
{
	int n = 0;

	assert_int_equal(engine_log(e, "s", 1, -1, count_line, &n), 0);
	return n;
}

static void check_ok(engine *e)
{
	assert_int_equal(engine_check(e, NULL, NULL), 0);
}

/* The world matrix of node 'id' of 's' into m[16]. */
static void world_of(const scene *s, const char *id, double m[16])
{
	int i = scene_find(s, id);

	assert_true(i >= 0);
	memcpy(m, scene_world(s, i).m, sizeof(double) * 16);
}

static void test_rewind_drops_the_tail(void **state)
{
	tmpdb t;
	engine *e;
	scene *ref = NULL;
	double want[16], got[16];

	(void)state;
	tmpdb_make(&t, "/tmp", "test_rewind");
	e = open_engine(t.path);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	assert_int_equal(commit_one(e, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}", NULL), 1);
	assert_int_equal(commit_one(e, "{\"ops\":[{\"op\":\"create\",\"id\":\"b\",\"parent\":\"a\","
				    "\"t\":[0,1,0]}]}", NULL), 2);
	assert_int_equal(engine_at(e, "s", 2, &ref), 0);
	world_of(ref, "b", want);
	/* The tail: a move, an asset, a new node, with a client_seq. */
	assert_int_equal(commit_one(e, "{\"client\":\"c\",\"client_seq\":7,\"ops\":[{\"op\":\"set\","
				    "\"id\":\"a\",\"t\":[5,0,0]}]}", NULL), 3);
	assert_int_equal(commit_one(e, "{\"ops\":[{\"op\":\"create\",\"id\":\"c\"}]}", "x.svg"), 4);
	assert_int_equal(commit_one(e, "{\"ops\":[{\"op\":\"create\",\"id\":\"d\"}]}", NULL), 5);
	assert_int_equal(n_assets(e), 1);

	/* Bad calls change nothing. */
	assert_int_equal(engine_rewind(e, "s", 6), RIGD_E_BAD_SEQ);
	assert_int_equal(engine_rewind(e, "s", -1), RIGD_E_BAD_SEQ);
	assert_int_equal(engine_rewind(e, "nope", 1), RIGD_E_UNKNOWN_SCENE);
	{
		edit_batch b;
		edit_error er;

		decode("{\"ops\":[{\"op\":\"create\",\"id\":\"q\"}]}", &b);
		assert_int_equal(engine_submit(e, "s", &b, NULL, &er), 0);
		edit_batch_release(&b);
		assert_int_equal(engine_rewind(e, "s", 2), RIGD_E_INTERNAL);
		assert_int_equal(engine_commit(e), 0);  /* seq 6 */
	}
	assert_int_equal(engine_seq(e, "s"), 6);
	assert_int_equal(engine_rewind(e, "s", 6), 0);  /* nothing to drop */
	assert_int_equal(n_lines(e), 6);

	/* Back to seq 2: as it was then. */
	assert_int_equal(engine_rewind(e, "s", 2), 0);
	assert_int_equal(engine_seq(e, "s"), 2);
	assert_int_equal(n_lines(e), 2);
	assert_int_equal(n_assets(e), 0);
	assert_int_equal(scene_count(engine_scene(e, "s")), scene_count(ref));
	assert_int_equal(scene_find(engine_scene(e, "s"), "c"), -1);
	assert_int_equal(scene_find(engine_scene(e, "s"), "q"), -1);
	world_of(engine_scene(e, "s"), "b", got);
	assert_memory_equal(got, want, sizeof(want));
	check_ok(e);

	/* What was dropped is new again: the client_seq, the asset's file. */
	assert_int_equal(commit_one(e, "{\"client\":\"c\",\"client_seq\":7,\"ops\":[{\"op\":\"set\","
				    "\"id\":\"a\",\"t\":[1,0,0]}]}", NULL), 3);
	assert_int_equal(commit_one(e, "{\"ops\":[{\"op\":\"create\",\"id\":\"c\"}]}", "x.svg"), 4);
	check_ok(e);
	engine_close(e);

	/* The same after a reopen. */
	e = open_engine(t.path);
	assert_int_equal(engine_seq(e, "s"), 4);
	assert_int_equal(n_lines(e), 4);
	assert_int_equal(n_assets(e), 1);
	check_ok(e);
	assert_int_equal(engine_rewind(e, "s", 0), 0);
	assert_int_equal(engine_seq(e, "s"), 0);
	assert_int_equal(scene_count(engine_scene(e, "s")), 0);
	check_ok(e);
	engine_close(e);
	scene_free(ref);
	tmpdb_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewind_drops_the_tail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
