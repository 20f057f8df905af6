/*
 * test_pose_wire.c: poses in their stored and wire forms: the pose ops'
 * JSON decoded, encoded and decoded again to the same ops (channels sorted
 * by id whatever the JSON's order), their refusals naming the op and
 * field, a resolved pose batch through the log's binary op image and
 * back, bit for bit, and poses in the engine: snapshots of format 2 that
 * rigd check proves equal to the log, a reopened database and time travel
 * that see the poses of each seq; and a 2D pose's shear through all of
 * them (JSON "shear", op image format 4, snapshot format 5).
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

#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/pose.h"
#include "core/scene.h"
#include "engine/engine.h"

#include <sqlite3.h>

#include "edit_equal.h"
#include "tmpdb.h"

static const char batch_json[] =
	"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"walk1\",\"root\":\"hips\"},"
	"{\"op\":\"pose_save\",\"pose\":\"all\"},"
	"{\"op\":\"pose_set\",\"pose\":\"w2\",\"channels\":{"
	"\"z\":{\"t\":[1,2,0],\"r\":[0,0,0.1,0.99],\"s\":[1,1,1]},"
	"\"a\":{\"t\":[0.1,0.2,0.3],\"r\":[0,0,0,1],\"s\":[2,3,1]}}},"
	"{\"op\":\"pose_set\",\"pose\":\"empty\",\"channels\":{}},"
	"{\"op\":\"pose_delete\",\"pose\":\"walk1\"},"
	"{\"op\":\"blend\",\"root\":\"hips\",\"a\":\"walk1\",\"b\":\"w2\",\"t\":0.1}]}";

static void test_json_roundtrip(void **state)
{
	proto_limits lim = proto_limits_default();
	edit_batch b, again;
	edit_error err;
	proto_buf buf;

	(void)state;
	assert_int_equal(proto_decode_batch(batch_json, sizeof(batch_json) - 1, &lim, &b, &err), 0);
	assert_int_equal(b.n_ops, 6);
	assert_int_equal(b.ops[0].kind, EDIT_POSE_SAVE);
	assert_string_equal(b.ops[0].id, "walk1");
	assert_string_equal(b.ops[0].root, "hips");
	assert_int_equal(b.ops[1].fields, 0);
	assert_int_equal(b.ops[2].n_channels, 2);
	assert_string_equal(b.ops[2].channels[0].id, "a"); /* sorted */
	assert_true(b.ops[2].channels[1].r.z == 0.1);
	assert_int_equal(b.ops[3].fields, EDIT_F_CHANNELS);
	assert_int_equal(b.ops[3].n_channels, 0);
	assert_int_equal(b.ops[4].kind, EDIT_POSE_DELETE);
	assert_int_equal(b.ops[5].kind, EDIT_BLEND);
	assert_string_equal(b.ops[5].id, "hips");
	assert_true(b.ops[5].weight == 0.1);
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_batch(&buf, &b), 0);
	assert_int_equal(proto_decode_batch(proto_buf_str(&buf), buf.len, &lim, &again, &err), 0);
	assert_same_ops(&b, &again);
	proto_buf_release(&buf);
	edit_batch_release(&b);
	edit_batch_release(&again);
}

static void refused(const char *op_json, int code, const char *field)
{
	proto_limits lim = proto_limits_default();
	char json[512];
	edit_batch b;
	edit_error err;

	snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"pose_delete\",\"pose\":\"p\"},%s]}", op_json);
	assert_int_equal(proto_decode_batch(json, strlen(json), &lim, &b, &err), code);
	assert_int_equal(err.op, 1);
	assert_string_equal(err.field, field);
}

static void test_json_refusals(void **state)
{
	(void)state;
	refused("{\"op\":\"blend\",\"a\":\"x\",\"b\":\"y\",\"t\":0.5}", RIGD_E_BAD_FIELD, "root");
	refused("{\"op\":\"blend\",\"root\":\"r\",\"b\":\"y\",\"t\":0.5}", RIGD_E_BAD_FIELD, "a");
	refused("{\"op\":\"blend\",\"root\":\"r\",\"a\":\"x\",\"b\":\"y\",\"t\":\"1\"}",
		RIGD_E_BAD_FIELD, "t");
	refused("{\"op\":\"blend\",\"root\":\"r\",\"a\":\"x\",\"b\":\"y\",\"t\":1,\"pose\":\"p\"}",
		RIGD_E_BAD_FIELD, "pose");
	refused("{\"op\":\"pose_save\"}", RIGD_E_BAD_FIELD, "pose");
	refused("{\"op\":\"pose_save\",\"pose\":\"a/b\"}", RIGD_E_BAD_ID, "pose");
	refused("{\"op\":\"pose_save\",\"pose\":\"p\",\"id\":\"n\"}", RIGD_E_BAD_FIELD, "id");
	refused("{\"op\":\"pose_delete\",\"pose\":\"p\",\"root\":\"n\"}", RIGD_E_BAD_FIELD, "root");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\"}", RIGD_E_BAD_FIELD, "channels");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":[]}", RIGD_E_BAD_FIELD, "channels");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":{\"n\":{\"t\":[0,0,0],"
		"\"r\":[0,0,1],\"s\":[1,1,1]}}}", RIGD_E_BAD_FIELD, "channels");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":{\"n\":{\"t\":[0,0,0],"
		"\"r\":[0,0,0,1],\"s\":[1,1,1],\"pivot\":[0,0,0]}}}", RIGD_E_BAD_FIELD, "pivot");
}

/* A resolved pose batch through the binary op image a log row stores. */
static void test_op_image(void **state)
{
	scene *s = scene_new();
	edit_batch b, resolved, back;
	edit_error err;
	edit_op *op;
	unsigned char *img;
	size_t len;

	(void)state;
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_CREATE, "hips");
	op->fields = EDIT_F_T;
	op->t = vec3_make(0.1, 0.2, 0.3);
	edit_batch_add(&b, EDIT_CREATE, "leg")->fields = 0;
	edit_batch_add(&b, EDIT_POSE_SAVE, "p");
	edit_batch_add(&b, EDIT_POSE_SAVE, "q");
	edit_batch_add(&b, EDIT_POSE_DELETE, "q");
	assert_int_equal(edit_apply_resolve(s, &b, NULL, NULL, NULL, &resolved, &err), 0);
	assert_int_equal(engine_ops_encode_bin(&resolved, &img, &len), 0);
	assert_int_equal(engine_ops_decode_bin(img, len, &back), 0);
	assert_same_ops(&resolved, &back);
	assert_int_equal(back.ops[2].n_channels, 2);
	/* Every shorter image is refused, none is read past its end. */
	for (size_t cut = 0; cut < len; cut++) {
		edit_batch junk;

		assert_int_equal(engine_ops_decode_bin(img, cut, &junk), RIGD_E_IO);
	}
	free(img);
	edit_batch_release(&b);
	edit_batch_release(&resolved);
	edit_batch_release(&back);
	/* Relative pose ops never enter an image. */
	edit_batch_init(&b);
	edit_batch_add(&b, EDIT_POSE_SAVE, "p");
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), RIGD_E_TOO_LARGE);
	edit_batch_release(&b);
	scene_free(s);
}

/* ---------- the engine ---------- */

static void submit_commit(engine *e, const char *json)
{
	proto_limits lim = proto_limits_default();
	edit_batch b;
	edit_error er;

	assert_int_equal(proto_decode_batch(json, strlen(json), &lim, &b, &er), 0);
	if (engine_submit(e, "s", &b, NULL, &er) != 0)
		fail_msg("submit %s: %s", json, er.message);
	edit_batch_release(&b);
	assert_int_equal(engine_commit(e), 0);
}

static engine *open_engine(const char *path)
{
	engine_opts o = engine_opts_default();
	char msg[256] = "";
	int err = 0;
	engine *e;

	o.sync_normal = true;
	o.snapshot_ops = 3; /* a snapshot every few batches */
	e = engine_open(path, &o, &err, msg, sizeof(msg));
	if (!e)
		fail_msg("engine_open: %s", msg);
	return e;
}

/* The largest snapshot format stored. */
static int max_snapshot_format(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int format = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT max(format) FROM snapshots", -1, &st, NULL),
			 SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		format = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return format;
}

/* Closes 'e' (scene "s" at seq 'seq') and opens 't' again: the latest
 * snapshot and the log's tail give the poses time travel gave, and rigd
 * check passes; then removes the database. */
static void closed_and_reopened(engine *e, tmpdb *t, int seq)
{
	scene *at;

	assert_int_equal(engine_at(e, "s", seq, &at), 0);
	assert_true(pose_set_equal(scene_poses_c(at), scene_poses_c(engine_scene(e, "s"))));
	engine_close(e);
	e = open_engine(t->path);
	assert_true(pose_set_equal(scene_poses_c(at), scene_poses_c(engine_scene(e, "s"))));
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	scene_free(at);
	engine_close(e);
	tmpdb_remove(t);
}

static void test_engine_snapshots(void **state)
{
	static const char *const batches[] = {
		"{\"ops\":[{\"op\":\"create\",\"id\":\"hips\",\"t\":[1,2,0]},"
		"{\"op\":\"create\",\"id\":\"upper\",\"parent\":\"hips\",\"angle\":10},"
		"{\"op\":\"create\",\"id\":\"fore\",\"parent\":\"upper\",\"t\":[3,0,0]}]}",
		"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"a\",\"root\":\"hips\"}]}",
		"{\"ops\":[{\"op\":\"rotate\",\"id\":\"upper\",\"angle\":80},"
		"{\"op\":\"set\",\"id\":\"fore\",\"s\":[2,1,1]}]}",
		"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"b\"}]}",
		"{\"ops\":[{\"op\":\"blend\",\"root\":\"hips\",\"a\":\"a\",\"b\":\"b\",\"t\":0.3}]}",
		"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"c\",\"root\":\"fore\"},"
		"{\"op\":\"pose_delete\",\"pose\":\"a\"}]}",
		"{\"ops\":[{\"op\":\"delete\",\"id\":\"fore\"}]}",
		"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"a\",\"root\":\"upper\"},"
		"{\"op\":\"blend\",\"root\":\"hips\",\"a\":\"a\",\"b\":\"b\",\"t\":0.5}]}",
	};
	static const int n_poses[] = { 0, 0, 1, 1, 2, 2, 2, 2, 3 };
	static const char refused_json[] = "{\"ops\":[{\"op\":\"blend\",\"root\":\"hips\","
					   "\"a\":\"c\",\"b\":\"b\",\"t\":0.5}]}";
	proto_limits lim = proto_limits_default();
	edit_batch nothing;
	edit_error er;
	const int n = (int)(sizeof(batches) / sizeof(batches[0]));
	uint64_t hashes[16];
	scene *at;
	engine *e;
	tmpdb t;

	(void)state;
	tmpdb_make(&t, "/tmp", "test_pose_wire");
	e = open_engine(t.path);
	assert_int_equal(engine_scene_create_dims(e, "s", 2), 0);
	for (int i = 0; i < n; i++) {
		submit_commit(e, batches[i]);
		assert_true(engine_update(e, "s", NULL, NULL) >= 0);
		hashes[i] = scene_hash(engine_scene(e, "s"));
	}
	/* A blend of poses with no node of the subtree in common is refused
	 * (pose c holds only the deleted fore). */
	assert_int_equal(proto_decode_batch(refused_json, sizeof(refused_json) - 1, &lim, &nothing,
					    &er), 0);
	assert_int_equal(engine_submit(e, "s", &nothing, NULL, &er), RIGD_E_BAD_FIELD);
	assert_string_equal(er.field, "root");
	edit_batch_release(&nothing);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	assert_int_equal(max_snapshot_format(t.path), 2);
	/* Time travel: the poses of each seq. */
	for (int i = 0; i <= n; i++) {
		assert_int_equal(engine_at(e, "s", i, &at), 0);
		assert_int_equal(pose_count(scene_poses_c(at)), n_poses[i]);
		if (i > 0)
			assert_true(scene_hash(at) == hashes[i - 1]);
		scene_free(at);
	}
	closed_and_reopened(e, &t, n);
}

/* A 2D pose's shear: in the JSON (absent for +0 +0, so old lines read as
 * before), in the op image (format 4, only when a channel has one), in
 * snapshots (format 5) that rigd check proves equal to the log, and after
 * a reopen and time travel. */
static void test_shear(void **state)
{
	static const char set_json[] =
		"{\"ops\":[{\"op\":\"pose_set\",\"pose\":\"sk\",\"channels\":{"
		"\"b\":{\"t\":[1,2,0],\"r\":[0,0,0,1],\"s\":[1,1,1],\"shear\":[12.5,-3]},"
		"\"a\":{\"t\":[0,0,0],\"r\":[0,0,0,1],\"s\":[1,1,1]}}}]}";
	static const char *const batches[] = {
		("{\"ops\":[{\"op\":\"create\",\"id\":\"hips\",\"t\":[1,2,0]},"
		 "{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"hips\",\"shear\":[0,20]}]}"),
		"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"a\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"shear\":[0,0]}]}",
		"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"b\"}]}",
		"{\"ops\":[{\"op\":\"blend\",\"root\":\"hips\",\"a\":\"a\",\"b\":\"b\",\"t\":0.25}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"hips\",\"t\":[5,5,0]}]}",
	};
	proto_limits lim = proto_limits_default();
	const int n = (int)(sizeof(batches) / sizeof(batches[0]));
	edit_batch b, again;
	edit_error err;
	proto_buf buf;
	unsigned char *img;
	size_t len;
	scene *at;
	engine *e;
	node_props p;
	tmpdb t;

	(void)state;
	assert_int_equal(proto_decode_batch(set_json, sizeof(set_json) - 1, &lim, &b, &err), 0);
	assert_true(b.ops[0].channels[1].shear[0] == 12.5 && b.ops[0].channels[1].shear[1] == -3);
	assert_false(pose_channel_sheared(&b.ops[0].channels[0]));
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_batch(&buf, &b), 0);
	assert_non_null(strstr(proto_buf_str(&buf), "\"s\":[1,1,1],\"shear\":[12.5,-3]}"));
	assert_null(strstr(strstr(proto_buf_str(&buf), "\"a\":"), "\"shear\":[0"));
	assert_int_equal(proto_decode_batch(proto_buf_str(&buf), buf.len, &lim, &again, &err), 0);
	assert_same_ops(&b, &again);
	edit_batch_release(&again);
	proto_buf_release(&buf);
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT_POSE_SHEAR);
	assert_int_equal(engine_ops_decode_bin(img, len, &again), 0);
	assert_same_ops(&b, &again);
	edit_batch_release(&again);
	for (size_t cut = 0; cut < len; cut++) {
		edit_batch junk;

		assert_int_equal(engine_ops_decode_bin(img, cut, &junk), RIGD_E_IO);
	}
	free(img);
	/* Without a shear the image is what it was before shear was posed. */
	b.ops[0].channels[1].shear[0] = b.ops[0].channels[1].shear[1] = 0;
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT);
	free(img);
	edit_batch_release(&b);
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":{\"n\":{\"t\":[0,0,0],"
		"\"r\":[0,0,0,1],\"s\":[1,1,1],\"shear\":[1]}}}", RIGD_E_BAD_FIELD, "channels");

	tmpdb_make(&t, "/tmp", "test_pose_wire_shear");
	e = open_engine(t.path);
	assert_int_equal(engine_scene_create_dims(e, "s", 2), 0);
	for (int i = 0; i < n; i++) {
		submit_commit(e, batches[i]);
		assert_true(engine_update(e, "s", NULL, NULL) >= 0);
	}
	scene_props(engine_scene(e, "s"), scene_find(engine_scene(e, "s"), "arm"), &p);
	assert_true(p.shear[0] == 0 && p.shear[1] == 0.75 * 20);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	assert_int_equal(max_snapshot_format(t.path), 5);
	assert_int_equal(engine_at(e, "s", 2, &at), 0);
	assert_int_equal(pose_count(scene_poses_c(at)), 1);
	assert_true(pose_at(scene_poses_c(at), 0)->ch[0].id[0] == 'a'); /* "arm" */
	assert_true(pose_at(scene_poses_c(at), 0)->ch[0].shear[1] == 20);
	scene_free(at);
	closed_and_reopened(e, &t, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_json_refusals),
		cmocka_unit_test(test_op_image),
		cmocka_unit_test(test_engine_snapshots),
		cmocka_unit_test(test_shear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
