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
static uint64_t digest(scene *s)
{
	uint64_t h = DIGEST_SEED;
	node_props p;

	scene_update(s, 1, NULL, NULL);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_encode),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_3d_defaults),
		cmocka_unit_test(test_node_records),
		cmocka_unit_test(test_gltf_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
