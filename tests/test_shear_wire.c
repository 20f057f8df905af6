/*
 * test_shear_wire.c: a 2D node's shear and inherit mode outside the core:
 * the JSON members "shear" and "inherit" of ops (decoded, refused with
 * the field and the reason, encoded and decoded again to the same bits),
 * the node records of trees and snapshots (shown when not the default),
 * the log's op image (format 3; older formats still read), and an engine
 * on a real SQLite file: snapshots, time travel, undo, a reopened
 * database and a log exported and imported all give the same bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/gltf.h"
#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "engine/engine.h"

#include "edit_equal.h"
#include "scene_digest.h"
#include "tmpdb.h"

#include <sqlite3.h>

/* ---------- helpers ---------- */

static scene *new_scene(int dims)
{
	scene *s = scene_new();

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, dims), 0);
	return s;
}

static int apply_json(scene *s, const char *json, edit_batch *inverse, edit_error *err)
{
	proto_limits lim = proto_limits_default();
	edit_batch b;
	int rc = proto_decode_batch(json, strlen(json), &lim, &b, err);

	if (rc == 0)
		rc = edit_apply(s, &b, NULL, inverse, err);
	edit_batch_release(&b);
	return rc;
}

static void apply_ok(scene *s, const char *json)
{
	edit_error err;

	if (apply_json(s, json, NULL, &err) != 0)
		fail_msg("%s: %s", json, err.message);
	scene_update(s, 1, NULL, NULL);
}

/* Every stored property of every node, in preorder, the tree, and every
 * world matrix's bits. */
static uint64_t digest(const scene *s)
{
	uint64_t h = DIGEST_SEED;
	node_props p;

	for (int pos = 0; pos < scene_count(s); pos++) {
		int n = scene_at(s, pos), parent = scene_parent(s, n);
		mat4 w = scene_world(s, n);

		h = digest_mix_str(h, scene_id(s, n));
		h = digest_mix_str(h, parent >= 0 ? scene_id(s, parent) : NULL);
		scene_props(s, n, &p);
		h = digest_mix_props(h, &p);
		h = digest_mix(h, w.m, sizeof(w.m));
	}
	return h;
}

static char *tree_json(const scene *s)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	assert_int_equal(proto_encode_tree(&b, "x", 1, s), 0);
	return proto_buf_take(&b);
}

/* A rig with every kind of mode, and sets of both fields. */
static const char rig_json[] =
	"{\"ops\":["
	"{\"op\":\"create\",\"id\":\"root\",\"t\":[10,20,0],\"angle\":30,\"s\":[2,-1.5,1],"
	"\"shear\":[0,12.5]},"
	"{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"root\",\"t\":[3,0,0],\"angle\":-20,"
	"\"shear\":[5,-7.25],\"inherit\":\"noScale\"},"
	"{\"op\":\"create\",\"id\":\"hand\",\"parent\":\"arm\",\"t\":[2,1,0],"
	"\"inherit\":\"noRotationOrReflection\"},"
	"{\"op\":\"create\",\"id\":\"tip\",\"parent\":\"hand\",\"t\":[1,0,0],"
	"\"inherit\":\"onlyTranslation\"},"
	"{\"op\":\"create\",\"id\":\"leg\",\"parent\":\"root\",\"t\":[0,4,0],"
	"\"inherit\":\"noScaleOrReflection\"},"
	"{\"op\":\"create\",\"id\":\"db\",\"parent\":\"leg\",\"t\":[1,1,0],\"angle\":45,"
	"\"inherit\":{\"rotation\":false,\"reflection\":false}},"
	"{\"op\":\"create\",\"id\":\"plain\",\"parent\":\"db\",\"t\":[1,0,0]}]}";

/* ---------- JSON ---------- */

static void test_decode_encode(void **state)
{
	static const char json[] =
		"{\"ops\":["
		"{\"op\":\"create\",\"id\":\"a\",\"shear\":[5,-12.5],\"inherit\":\"noScale\"},"
		"{\"op\":\"set\",\"id\":\"a\",\"inherit\":{\"rotation\":false,\"reflection\":false}},"
		"{\"op\":\"set\",\"id\":\"a\",\"inherit\":{}},"
		"{\"op\":\"set\",\"id\":\"a\",\"inherit\":{\"translation\":true,\"rotation\":true,"
		"\"scale\":true,\"reflection\":true}},"
		"{\"op\":\"set\",\"id\":\"a\",\"inherit\":{\"translation\":false,\"scale\":false}},"
		"{\"op\":\"set\",\"id\":\"a\",\"shear\":[-0,0],\"inherit\":\"normal\"}]}";
	static const char *const names[] = { "normal", "onlyTranslation", "noRotationOrReflection",
					     "noScale", "noScaleOrReflection" };
	proto_limits lim = proto_limits_default();
	edit_batch b, again;
	edit_error err;
	proto_buf buf;
	const char *text;
	char one[160];

	(void)state;
	assert_int_equal(proto_decode_batch(json, sizeof(json) - 1, &lim, &b, &err), 0);
	assert_int_equal(b.n_ops, 6);
	assert_true(b.ops[0].fields & EDIT_F_SHEAR);
	assert_true(b.ops[0].shear_deg[0] == 5 && b.ops[0].shear_deg[1] == -12.5);
	assert_int_equal(b.ops[0].inherit, INHERIT_NO_SCALE);
	assert_int_equal(b.ops[1].inherit, INHERIT_DB | DB_NO_ROTATION | DB_NO_REFLECTION);
	assert_false(b.ops[1].fields & EDIT_F_SHEAR);
	assert_int_equal(b.ops[2].inherit, INHERIT_NORMAL);
	assert_int_equal(b.ops[3].inherit, INHERIT_NORMAL);
	assert_int_equal(b.ops[4].inherit, INHERIT_DB | DB_NO_TRANSLATION | DB_NO_SCALE);
	assert_int_equal(b.ops[5].inherit, INHERIT_NORMAL);
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_batch(&buf, &b), 0);
	text = proto_buf_str(&buf);
	assert_non_null(strstr(text, "\"shear\":[5,-12.5],\"inherit\":\"noScale\""));
	assert_non_null(strstr(text, "\"inherit\":{\"translation\":true,\"rotation\":false,"
				     "\"scale\":true,\"reflection\":false}"));
	assert_non_null(strstr(text, "\"inherit\":{\"translation\":false,\"rotation\":true,"
				     "\"scale\":false,\"reflection\":true}"));
	/* -0 keeps its sign through the text, as every number does. */
	assert_non_null(strstr(text, "\"shear\":[-0,0],\"inherit\":\"normal\""));
	assert_int_equal(proto_decode_batch(text, buf.len, &lim, &again, &err), 0);
	assert_same_ops(&b, &again);
	proto_buf_release(&buf);
	edit_batch_release(&b);
	edit_batch_release(&again);
	/* Every name reads as its mode. */
	for (int i = 0; i < 5; i++) {
		snprintf(one, sizeof(one), "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"inherit\":\"%s\"}]}",
			 names[i]);
		assert_int_equal(proto_decode_batch(one, strlen(one), &lim, &b, &err), 0);
		assert_int_equal(b.ops[0].inherit, i);
		edit_batch_release(&b);
	}
}

/* 'op_json' refused with 'code' naming op 0's 'field', the message saying
 * 'why'; decoded and applied to a scene of 'dims' holding node "a". */
static void refused(int dims, const char *op_json, int code, const char *field, const char *why)
{
	scene *s = new_scene(dims);
	char json[1024];
	edit_error err;
	uint64_t before;

	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}");
	before = digest(s);
	snprintf(json, sizeof(json), "{\"ops\":[%s]}", op_json);
	assert_int_equal(apply_json(s, json, NULL, &err), code);
	assert_int_equal(err.op, 0);
	assert_string_equal(err.field, field);
	if (why && !strstr(err.message, why))
		fail_msg("message '%s' should say '%s'", err.message, why);
	assert_true(digest(s) == before);
	scene_free(s);
}

static void test_refused(void **state)
{
	(void)state;
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"shear\":[1]}", RIGD_E_BAD_FIELD, "shear",
		"2 numbers");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"shear\":[1,2,3]}", RIGD_E_BAD_FIELD, "shear",
		"2 numbers");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"shear\":[1,\"2\"]}", RIGD_E_BAD_FIELD, "shear",
		"2 numbers");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"shear\":10}", RIGD_E_BAD_FIELD, "shear", NULL);
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"shear\":[30,120]}", RIGD_E_BAD_FIELD, "shear",
		"collinear");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":\"sideways\"}", RIGD_E_BAD_FIELD,
		"inherit", "unknown mode 'sideways'");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":\"NoScale\"}", RIGD_E_BAD_FIELD,
		"inherit", "unknown mode");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":2}", RIGD_E_BAD_FIELD, "inherit",
		"noScale");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":null}", RIGD_E_BAD_FIELD, "inherit",
		NULL);
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":{\"size\":false}}", RIGD_E_BAD_FIELD,
		"inherit", "translation, rotation");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":{\"scale\":0}}", RIGD_E_BAD_FIELD,
		"inherit", "true or false");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":{\"scale\":false,\"scale\":true}}",
		RIGD_E_BAD_FIELD, "inherit", "twice");
	refused(2, "{\"op\":\"move\",\"id\":\"a\",\"by\":[1,0,0],\"shear\":[1,2]}", RIGD_E_BAD_FIELD,
		"shear", NULL);
	/* A 3D scene: a shear that is not zero, a mode that is not normal. */
	refused(3, "{\"op\":\"set\",\"id\":\"a\",\"shear\":[0,1]}", RIGD_E_BAD_FIELD, "shear",
		"only in a 2D scene");
	refused(3, "{\"op\":\"set\",\"id\":\"a\",\"inherit\":\"onlyTranslation\"}",
		RIGD_E_BAD_FIELD, "inherit", "only in a 2D scene");
	refused(3, "{\"op\":\"create\",\"id\":\"b\",\"inherit\":{\"scale\":false}}",
		RIGD_E_BAD_FIELD, "inherit", "only in a 2D scene");
}

/* A 3D scene takes a zero shear and the normal mode, and shows neither. */
static void test_3d_defaults(void **state)
{
	scene *s = new_scene(3);
	char *tree;

	(void)state;
	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"shear\":[0,0],"
		    "\"inherit\":\"normal\"}]}");
	tree = tree_json(s);
	assert_null(strstr(tree, "shear"));
	assert_null(strstr(tree, "inherit"));
	free(tree);
	scene_free(s);
}

/* Node records show the fields when not the default, and the tree read
 * back as ops (a create per node, the record's fields) is the same scene. */
static void test_node_records(void **state)
{
	scene *s = new_scene(2), *copy = new_scene(2);
	char *tree, *tree2, *p;
	proto_buf snap;

	(void)state;
	apply_ok(s, rig_json);
	tree = tree_json(s);
	assert_non_null(strstr(tree, "\"shear\":[0,12.5]"));
	assert_non_null(strstr(tree, "\"shear\":[5,-7.25],\"inherit\":\"noScale\""));
	assert_non_null(strstr(tree, "\"inherit\":\"noRotationOrReflection\""));
	assert_non_null(strstr(tree, "\"inherit\":{\"translation\":true,\"rotation\":false,"
				     "\"scale\":true,\"reflection\":false}"));
	/* The plain node's record has neither. */
	p = strstr(tree, "{\"id\":\"plain\"");
	assert_non_null(p);
	assert_null(strstr(p, "shear"));
	assert_null(strstr(p, "inherit"));
	proto_buf_init(&snap, 0);
	assert_int_equal(proto_encode_snapshot(&snap, "x", 1, s), 0);
	assert_non_null(strstr(proto_buf_str(&snap), "\"inherit\":\"onlyTranslation\""));
	proto_buf_release(&snap);
	/* The same ops, a node at a time, give the same tree. */
	apply_ok(copy, rig_json);
	tree2 = tree_json(copy);
	assert_string_equal(tree, tree2);
	assert_true(digest(s) == digest(copy));
	free(tree);
	free(tree2);
	scene_free(s);
	scene_free(copy);
}

/* glTF has no form for a shear or a mode: the export is refused, and a
 * 2D scene without them still exports. */
static void test_gltf_refused(void **state)
{
	scene *s = new_scene(2);
	char *json = NULL;

	(void)state;
	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"angle\":10}]}");
	assert_int_equal(gltf_export(s, NULL, &json, NULL), 0);
	free(json);
	json = NULL;
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"shear\":[0,3]}]}");
	assert_int_equal(gltf_export(s, NULL, &json, NULL), RIGD_E_NOT_TRS);
	assert_null(json);
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"shear\":[0,0],"
		    "\"inherit\":\"noScale\"}]}");
	assert_int_equal(gltf_export(s, NULL, &json, NULL), RIGD_E_NOT_TRS);
	scene_free(s);
}

/* ---------- the log and the store ---------- */

static void test_op_image(void **state)
{
	proto_limits lim = proto_limits_default();
	static const char plain[] = "{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"z\":1}]}";
	edit_batch b, back;
	edit_error err;
	unsigned char *img;
	size_t len;

	(void)state;
	assert_int_equal(proto_decode_batch(rig_json, sizeof(rig_json) - 1, &lim, &b, &err), 0);
	/* The angles resolve to r before a batch is logged. */
	for (int i = 0; i < b.n_ops; i++)
		if (b.ops[i].fields & EDIT_F_ANGLE) {
			b.ops[i].fields = (b.ops[i].fields & ~EDIT_F_ANGLE) | EDIT_F_R;
			b.ops[i].r = quat_from_angle2d_deg(b.ops[i].angle_deg);
		}
	b.ops[1].shear_deg[1] = -0.0; /* a sign bit the image must keep */
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT_SHAPE2D);
	assert_int_equal(engine_ops_decode_bin(img, len, &back), 0);
	assert_same_ops(&b, &back);
	edit_batch_release(&back);
	for (size_t cut = 0; cut < len; cut++) {
		edit_batch part;

		assert_int_equal(engine_ops_decode_bin(img, cut, &part), RIGD_E_IO);
	}
	/* A format-2 image may not hold the new bits: the format byte of a
	 * format-3 image turned to 2 is refused. */
	img[0] = ENGINE_OPS_BIN_FORMAT_DRAW;
	assert_int_equal(engine_ops_decode_bin(img, len, &back), RIGD_E_IO);
	free(img);
	edit_batch_release(&b);
	/* A batch without them keeps its old format, and decodes. */
	assert_int_equal(proto_decode_batch(plain, sizeof(plain) - 1, &lim, &b, &err), 0);
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT_DRAW);
	assert_int_equal(engine_ops_decode_bin(img, len, &back), 0);
	assert_same_ops(&b, &back);
	edit_batch_release(&back);
	free(img);
	edit_batch_release(&b);
}

static void submit_commit(engine *e, const char *name, const char *json)
{
	proto_limits lim = proto_limits_default();
	edit_batch b;
	edit_error er;

	if (proto_decode_batch(json, strlen(json), &lim, &b, &er) != 0)
		fail_msg("decode %s: %s", json, er.message);
	if (engine_submit(e, name, &b, NULL, &er) != 0)
		fail_msg("submit %s: %s", json, er.message);
	edit_batch_release(&b);
	assert_int_equal(engine_commit(e), 0);
	assert_true(engine_update(e, name, NULL, NULL) >= 0);
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

/* The largest snapshot format and ops_bin format byte in the file. */
static void max_formats(const char *path, int *snap, int *ops)
{
	sqlite3 *db;
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT max(format) FROM snapshots", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	*snap = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT max(unicode(substr(ops_bin, 1, 1))) "
					       "FROM edits WHERE ops_bin IS NOT NULL",
					    -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	*ops = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

struct log_text {
	char *p;
	size_t len;
};

static int collect_line(void *ctx, const char *line, size_t len)
{
	struct log_text *t = ctx;
	char *q = realloc(t->p, t->len + len + 1);

	assert_non_null(q);
	memcpy(q + t->len, line, len);
	t->p = q;
	t->len += len;
	t->p[t->len] = '\0';
	return 0;
}

/* Through a real SQLite file: every seq's scene (its stored values and
 * its world matrices, bit for bit) from time travel, after a reopen, after
 * an undo, and from the log exported and imported. */
static void test_engine(void **state)
{
	static const char *const batches[] = {
		rig_json,
		"{\"ops\":[{\"op\":\"set\",\"id\":\"root\",\"s\":[-1,2,1]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"shear\":[-0,33.5],"
		"\"inherit\":{\"scale\":false}}]}",
		"{\"ops\":[{\"op\":\"rotate\",\"id\":\"root\",\"angle\":17}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"hand\",\"inherit\":\"normal\"}]}",
		"{\"ops\":[{\"op\":\"delete\",\"id\":\"leg\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"tip\",\"shear\":[1,2]}]}",
	};
	enum { N = sizeof(batches) / sizeof(batches[0]) };
	uint64_t digests[N];
	struct log_text log = { 0 };
	edit_error er;
	int64_t n_batches = 0;
	int bad_line = 0, snap_format, ops_format;
	char *tree, *tree2;
	scene *at;
	engine *e;
	tmpdb t;

	(void)state;
	tmpdb_make(&t, "/tmp", "test_shear_wire");
	e = open_engine(t.path);
	assert_int_equal(engine_scene_create_dims(e, "s", 2), 0);
	for (int i = 0; i < N; i++) {
		submit_commit(e, "s", batches[i]);
		digests[i] = digest(engine_scene(e, "s"));
	}
	assert_true(digests[1] != digests[2]);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	max_formats(t.path, &snap_format, &ops_format);
	assert_int_equal(snap_format, 4);
	assert_int_equal(ops_format, ENGINE_OPS_BIN_FORMAT_SHAPE2D);
	/* The scene at each seq. */
	for (int i = 1; i <= N; i++) {
		assert_int_equal(engine_at(e, "s", i, &at), 0);
		assert_true(digest(at) == digests[i - 1]);
		scene_free(at);
	}
	tree = tree_json(engine_scene(e, "s"));
	engine_close(e);
	/* Reopened: the latest snapshot and the log's tail. */
	e = open_engine(t.path);
	assert_true(digest(engine_scene(e, "s")) == digests[N - 1]);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	/* The log exported and imported into a new 2D scene: the same tree
	 * and bits. */
	assert_int_equal(engine_log(e, "s", 1, -1, collect_line, &log), 0);
	assert_non_null(strstr(log.p, "\"inherit\":\"noScale\""));
	assert_int_equal(engine_scene_create_dims(e, "copy", 2), 0);
	assert_int_equal(engine_import(e, "copy", log.p, log.len, &n_batches, &bad_line, &er), 0);
	assert_int_equal(n_batches, N);
	assert_true(engine_update(e, "copy", NULL, NULL) >= 0);
	tree2 = tree_json(engine_scene(e, "copy"));
	assert_string_equal(tree, tree2);
	assert_true(digest(engine_scene(e, "copy")) == digests[N - 1]);
	/* A 3D scene refuses the log at its first line. */
	assert_int_equal(engine_scene_create(e, "flat"), 0);
	assert_int_equal(engine_import(e, "flat", log.p, log.len, &n_batches, &bad_line, &er),
			 RIGD_E_BAD_FIELD);
	assert_int_equal(bad_line, 1);
	engine_close(e);
	free(tree);
	free(tree2);
	free(log.p);
	tmpdb_remove(&t);
}

/* Undo in memory, batch by batch back to empty, with the bits of each
 * seq on the way (edit_revert of each batch's inverse). */
static void test_undo_chain(void **state)
{
	static const char *const batches[] = {
		rig_json,
		"{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"shear\":[3,4],"
		"\"inherit\":{\"translation\":false}}]}",
		"{\"ops\":[{\"op\":\"delete\",\"id\":\"arm\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"db\",\"shear\":[0,0],\"inherit\":\"normal\"}]}",
	};
	enum { N = sizeof(batches) / sizeof(batches[0]) };
	scene *s = new_scene(2);
	edit_batch inv[N];
	uint64_t digests[N + 1];
	edit_error err;

	(void)state;
	digests[0] = digest(s);
	for (int i = 0; i < N; i++) {
		edit_batch_init(&inv[i]);
		if (apply_json(s, batches[i], &inv[i], &err) != 0)
			fail_msg("%s: %s", batches[i], err.message);
		digests[i + 1] = digest(s);
	}
	for (int i = N - 1; i >= 0; i--) {
		assert_int_equal(edit_revert(s, &inv[i]), 0);
		assert_true(digest(s) == digests[i]);
	}
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_encode),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_3d_defaults),
		cmocka_unit_test(test_node_records),
		cmocka_unit_test(test_gltf_refused),
		cmocka_unit_test(test_op_image),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_undo_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
