/*
 * test_assets.c: SVG assets in the engine (server/engine/engine_asset.c,
 * store_asset.c; core/asset.c): stored with their batch or not at all,
 * listed and read as of a seq, refused twice under one file name (also
 * within one turn), taken back with a failed commit (not listed, not
 * known to the scene, so a layer naming it is refused), and known again
 * after a reopen and in time travel.
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
#include "core/asset.h"
#include "core/err.h"
#include "engine/engine.h"
#include "engine/store.h"

#include "tmpdb.h"

static const char art_svg[] =
	"<svg xmlns=\"http://www.w3.org/2000/svg\"><g id=\"torso\"><rect width=\"4\" height=\"6\"/></g>"
	"<g id=\"arm\"/></svg>";

static engine *open_engine(const char *path)
{
	engine_opts o = engine_opts_default();
	char msg[256] = "";
	int err = 0;
	engine *e;

	o.sync_normal = true;
	o.fault_injection = true;
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

/* Submits 'json' with the asset 'file' (art_svg). Returns the code. */
static int submit_asset(engine *e, const char *name, const char *file, const char *json,
			edit_error *er)
{
	svg_clean art;
	edit_batch b;
	int rc;

	assert_int_equal(svg_sanitize(art_svg, strlen(art_svg), NULL, &art, er), 0);
	decode(json, &b);
	rc = engine_asset_submit(e, name, &b, file,
				 &(engine_svg){ art.svg, art.len, art.ids, art.n_ids }, NULL, NULL, er);
	edit_batch_release(&b);
	svg_clean_release(&art);
	return rc;
}

static int submit(engine *e, const char *name, const char *json, edit_error *er)
{
	edit_batch b;
	int rc;

	decode(json, &b);
	rc = engine_submit(e, name, &b, NULL, er);
	edit_batch_release(&b);
	return rc;
}

static int count_cb(void *ctx, const engine_asset_info *a)
{
	(void)a;
	++*(int *)ctx;
	return 0;
}

static int n_assets(engine *e, const char *name, int64_t at)
{
	int n = 0;

	assert_int_equal(engine_assets(e, name, at, count_cb, &n), 0);
	return n;
}

static void test_stored_with_batch(void **state)
{
	(void)state;
	tmpdb t;
	edit_error er;
	char *svg = NULL, sha[65];
	size_t len = 0;
	bool has_file, has_id;

	tmpdb_make(&t, "/tmp", "test_assets");
	engine *e = open_engine(t.path);
	assert_int_equal(engine_scene_create_dims(e, "s", 2), 0);
	assert_int_equal(submit(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"ground\"}]}", &er), 0);
	assert_int_equal(engine_commit(e), 0);
	/* A layer needs its asset. */
	assert_int_equal(submit(e, "s", "{\"ops\":[{\"op\":\"set\",\"id\":\"ground\",\"layer\":\"a.svg#arm\"}]}",
				&er),
			 RIGD_E_BAD_FIELD);
	assert_string_equal(er.field, "layer");
	/* Queued: known to the scene and to engine_asset_has, not listed yet. */
	assert_int_equal(submit_asset(e, "s", "a.svg",
				      "{\"ops\":[{\"op\":\"create\",\"id\":\"torso\",\"layer\":\"a.svg#torso\"}]}",
				      &er),
			 0);
	assert_int_equal(engine_asset_has(e, "s", "a.svg", "arm", &has_file, &has_id), 0);
	assert_true(has_file && has_id);
	assert_int_equal(n_assets(e, "s", -1), 0);
	/* The same file again in the same turn, or a bad name: refused. */
	assert_int_equal(submit_asset(e, "s", "a.svg", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\"}]}", &er),
			 RIGD_E_ASSET_EXISTS);
	assert_int_equal(submit_asset(e, "s", ".a.svg", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\"}]}", &er),
			 RIGD_E_BAD_FIELD);
	assert_string_equal(er.field, "file");
	/* A batch the scene refuses takes its asset back with it. */
	assert_int_equal(submit_asset(e, "s", "b.svg", "{\"ops\":[{\"op\":\"create\",\"id\":\"torso\"}]}", &er),
			 RIGD_E_DUPLICATE_ID);
	assert_int_equal(engine_asset_has(e, "s", "b.svg", NULL, &has_file, NULL), 0);
	assert_false(has_file);
	assert_int_equal(engine_commit(e), 0);
	assert_int_equal(engine_seq(e, "s"), 2);
	assert_int_equal(n_assets(e, "s", -1), 1);
	assert_int_equal(n_assets(e, "s", 1), 0);
	assert_int_equal(engine_asset_get(e, "s", "a.svg", 1, &svg, &len, sha, NULL), RIGD_E_UNKNOWN_ASSET);
	assert_int_equal(engine_asset_get(e, "s", "a.svg", 3, &svg, &len, sha, NULL), RIGD_E_BAD_SEQ);
	assert_int_equal(engine_asset_get(e, "s", "a.svg", -1, &svg, &len, sha, NULL), 0);
	assert_int_equal(len, strlen(svg));
	assert_non_null(strstr(svg, "id=\"torso\""));
	free(svg);
	/* Time travel: the scene as of seq 1 knows no asset, as of 2 it does. */
	scene *at;
	assert_int_equal(engine_at(e, "s", 1, &at), 0);
	assert_int_equal(asset_set_count(scene_assets(at)), 0);
	scene_free(at);
	assert_int_equal(engine_at(e, "s", 2, &at), 0);
	assert_int_equal(asset_set_count(scene_assets(at)), 1);
	scene_free(at);
	engine_close(e);
	/* Reopened: the layer may name it. */
	e = open_engine(t.path);
	assert_int_equal(submit(e, "s", "{\"ops\":[{\"op\":\"set\",\"id\":\"ground\",\"layer\":\"a.svg#arm\"}]}",
				&er),
			 0);
	assert_int_equal(engine_commit(e), 0);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	engine_close(e);
	tmpdb_remove(&t);
}

static void test_failed_commit(void **state)
{
	(void)state;
	tmpdb t;
	edit_error er;
	bool has_file;

	tmpdb_make(&t, "/tmp", "test_assets");
	engine *e = open_engine(t.path);
	assert_int_equal(engine_scene_create_dims(e, "s", 2), 0);
	assert_int_equal(engine_fault(e, STORE_FAULT_WRITE, 0, STORE_FAULT_IOERR), 0);
	assert_int_equal(submit_asset(e, "s", "a.svg",
				      "{\"ops\":[{\"op\":\"create\",\"id\":\"torso\",\"layer\":\"a.svg#torso\"}]}",
				      &er),
			 0);
	assert_int_equal(engine_commit(e), RIGD_E_STORAGE);
	/* Nothing of it: no node, no asset, and the scene no longer knows it. */
	assert_int_equal(engine_seq(e, "s"), 0);
	assert_int_equal(scene_count(engine_scene(e, "s")), 0);
	assert_int_equal(asset_set_count(scene_assets_c(engine_scene(e, "s"))), 0);
	assert_int_equal(engine_asset_has(e, "s", "a.svg", NULL, &has_file, NULL), 0);
	assert_false(has_file);
	engine_fault_clear(e);
	assert_int_equal(n_assets(e, "s", -1), 0);
	assert_int_equal(submit(e, "s", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\",\"layer\":\"a.svg#torso\"}]}",
				&er),
			 RIGD_E_BAD_FIELD);
	/* The same import again, once the fault cleared. */
	assert_int_equal(submit_asset(e, "s", "a.svg",
				      "{\"ops\":[{\"op\":\"create\",\"id\":\"torso\",\"layer\":\"a.svg#torso\"}]}",
				      &er),
			 0);
	assert_int_equal(engine_commit(e), 0);
	assert_int_equal(n_assets(e, "s", -1), 1);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	engine_close(e);
	tmpdb_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stored_with_batch),
		cmocka_unit_test(test_failed_commit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
