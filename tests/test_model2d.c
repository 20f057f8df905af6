/*
 * test_model2d.c: how the nodes of a 2D scene are drawn: the fields layer,
 * z and facing (decoded, refused with the op, the field and the reason,
 * applied, undone, encoded, in the log's op image, in snapshots, time
 * travel, a reopened database and a log exported and imported), and the
 * draw order: effective facing inherited down the tree, a mirrored root
 * facing left, sorting by the z of each node's facing with ties in
 * preorder, and a version that moves only when the list does.
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
#include "codec/proto_bin.h"
#include "codec/svg.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "engine/engine.h"

#include <sqlite3.h>

#include "edit_equal.h"
#include "scene_digest.h"
#include "tmpdb.h"

/* ---------- helpers ---------- */

/* The SVG assets the layers of these tests name, with their element ids
 * (a layer must name an asset the scene holds and one of its elements). */
static const struct {
	const char *file, *ids;
} test_assets[] = {
	{"h.svg", "t\na\ntorso\nhead\narmL\narmR\nlegL\nlegR\nbone\n"},
	{"f", "g\nh\na\nb\nc\n"},
	{"hero.svg", "torso\narm\narm:1\n"},
	{"a-b_c.svg", "g.1:x-y_z\n"},
};

static scene *new_scene(int dims)
{
	scene *s = scene_new();

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, dims), 0);
	for (size_t i = 0; i < sizeof(test_assets) / sizeof(test_assets[0]); i++)
		assert_int_equal(asset_set_add(scene_assets(s), test_assets[i].file, test_assets[i].ids,
					       strlen(test_assets[i].ids)),
				 0);
	return s;
}

/* Decodes batch 'json' and applies it to 's'; returns the error code of
 * either step, with 'err' filled. The inverse goes to 'inverse' (may be
 * NULL). */
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

/* Every stored property of every node, in preorder, and the tree. */
static uint64_t digest(const scene *s)
{
	uint64_t h = DIGEST_SEED;
	node_props p;

	for (int pos = 0; pos < scene_count(s); pos++) {
		int n = scene_at(s, pos), parent = scene_parent(s, n);

		h = digest_mix_str(h, scene_id(s, n));
		h = digest_mix_str(h, parent >= 0 ? scene_id(s, parent) : NULL);
		scene_props(s, n, &p);
		h = digest_mix_props(h, &p);
	}
	return h;
}

/* The draw order as one string, "a b c". */
static const char *order_str(const scene *s)
{
	static char buf[1024];
	int n = -1;
	size_t at = 0;

	assert_int_equal(scene_draw_order(s, &n), 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s", i ? " " : "",
				       scene_draw_id(s, i));
	return buf;
}

static int facing_of(const scene *s, const char *id)
{
	return scene_facing(s, scene_find(s, id));
}

/* ---------- the fields on the wire ---------- */

static const char fields_json[] =
	"{\"ops\":["
	"{\"op\":\"create\",\"id\":\"torso\",\"layer\":\"hero.svg#torso\",\"z\":2,"
	"\"facing\":\"left\"},"
	"{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"torso\",\"layer\":\"hero.svg#arm:1\","
	"\"z\":{\"right\":3,\"left\":-1}},"
	"{\"op\":\"set\",\"id\":\"arm\",\"z\":{\"right\":5,\"left\":5},\"facing\":null,"
	"\"layer\":null},"
	"{\"op\":\"set\",\"id\":\"torso\",\"facing\":\"right\",\"z\":{\"right\":-0,\"left\":0}}]}";

static void test_fields_decode_encode(void **state)
{
	proto_limits lim = proto_limits_default();
	edit_batch b, again;
	edit_error err;
	proto_buf buf;
	const char *text;

	(void)state;
	assert_int_equal(proto_decode_batch(fields_json, sizeof(fields_json) - 1, &lim, &b, &err), 0);
	assert_int_equal(b.n_ops, 4);
	assert_true(b.ops[0].fields & EDIT_F_LAYER);
	assert_string_equal(b.ops[0].layer, "hero.svg#torso");
	assert_true(b.ops[0].z_right == 2 && b.ops[0].z_left == 2);
	assert_int_equal(b.ops[0].facing, FACING_LEFT);
	assert_true(b.ops[1].z_right == 3 && b.ops[1].z_left == -1);
	assert_false(b.ops[1].fields & EDIT_F_FACING);
	assert_null(b.ops[2].layer);
	assert_true(b.ops[2].fields & EDIT_F_LAYER);
	assert_int_equal(b.ops[2].facing, FACING_NONE);
	assert_int_equal(b.ops[3].facing, FACING_RIGHT);
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_batch(&buf, &b), 0);
	text = proto_buf_str(&buf);
	/* Equal z's are one number; -0 and 0 are not equal bits: an object. */
	assert_non_null(strstr(text, "\"z\":2,\"facing\":\"left\""));
	assert_non_null(strstr(text, "\"z\":{\"right\":3,\"left\":-1}"));
	assert_non_null(strstr(text, "\"z\":5,\"facing\":null"));
	assert_non_null(strstr(text, "\"z\":{\"right\":-0,\"left\":0}"));
	assert_int_equal(proto_decode_batch(text, buf.len, &lim, &again, &err), 0);
	assert_same_ops(&b, &again);
	proto_buf_release(&buf);
	edit_batch_release(&b);
	edit_batch_release(&again);
}

/* Op 1 of a batch (after a valid set) is refused with 'code' and 'field',
 * the message naming the field and saying 'why', and the scene unchanged. */
static void refused(int dims, const char *op_json, int code, const char *field, const char *why)
{
	scene *s = new_scene(dims);
	char json[2048];
	edit_error err;
	uint64_t before;

	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}");
	before = digest(s);
	snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1,2,0]},%s]}",
		 op_json);
	assert_int_equal(apply_json(s, json, NULL, &err), code);
	assert_int_equal(err.op, 1);
	assert_string_equal(err.field, field);
	if (!strstr(err.message, field) || (why && !strstr(err.message, why)))
		fail_msg("message '%s' should name '%s' and say '%s'", err.message, field,
			 why ? why : "");
	assert_true(digest(s) == before);
	scene_free(s);
}

static void test_fields_refused(void **state)
{
	char long_file[300], long_group[300], json[600];

	(void)state;
	/* The syntax of a layer. */
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"hero.svg\"}", RIGD_E_BAD_FIELD, "layer",
		"no '#'");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"#arm\"}", RIGD_E_BAD_FIELD, "layer",
		"FILE (before '#') is empty");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"hero.svg#\"}", RIGD_E_BAD_FIELD,
		"layer", "GROUP (after '#') is empty");
	refused(2, "{\"op\":\"create\",\"id\":\"b\",\"layer\":\".hero.svg#arm\"}", RIGD_E_BAD_FIELD,
		"layer", "dot");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"he/ro.svg#arm\"}", RIGD_E_BAD_FIELD,
		"layer", "FILE (before '#') may hold only");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"hero.svg#arm#2\"}", RIGD_E_BAD_FIELD,
		"layer", "GROUP (after '#') may hold only");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"hero:svg#arm\"}", RIGD_E_BAD_FIELD,
		"layer", "FILE");
	memset(long_file, 'f', 129);
	long_file[129] = '\0';
	snprintf(json, sizeof(json), "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"%s#g\"}", long_file);
	refused(2, json, RIGD_E_BAD_FIELD, "layer", "longer than 128");
	memset(long_group, 'g', 129);
	long_group[129] = '\0';
	snprintf(json, sizeof(json), "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"f#%s\"}", long_group);
	refused(2, json, RIGD_E_BAD_FIELD, "layer", "longer than 128");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"layer\":3}", RIGD_E_BAD_FIELD, "layer",
		"string or null");
	/* z and facing. */
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"z\":\"1\"}", RIGD_E_BAD_FIELD, "z", "number");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"z\":{\"right\":1}}", RIGD_E_BAD_FIELD, "z",
		"both right and left");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"z\":{\"right\":1,\"left\":2,\"up\":3}}",
		RIGD_E_BAD_FIELD, "z", NULL);
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"z\":{\"right\":1,\"left\":null}}",
		RIGD_E_BAD_FIELD, "z", NULL);
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"z\":1e400}", RIGD_E_NOT_FINITE, "z", NULL);
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"facing\":\"up\"}", RIGD_E_BAD_FIELD, "facing",
		"right");
	refused(2, "{\"op\":\"set\",\"id\":\"a\",\"facing\":1}", RIGD_E_BAD_FIELD, "facing", NULL);
	/* Not in a reparent or delete, and only in a 2D scene. */
	refused(2, "{\"op\":\"reparent\",\"id\":\"a\",\"parent\":null,\"z\":1}", RIGD_E_BAD_FIELD,
		"z", "not allowed");
	refused(3, "{\"op\":\"set\",\"id\":\"a\",\"layer\":\"hero.svg#arm\"}", RIGD_E_BAD_FIELD,
		"layer", "only in a 2D scene");
	refused(3, "{\"op\":\"create\",\"id\":\"b\",\"z\":1}", RIGD_E_BAD_FIELD, "z",
		"only in a 2D scene");
	refused(3, "{\"op\":\"set\",\"id\":\"a\",\"facing\":null}", RIGD_E_BAD_FIELD, "facing",
		"only in a 2D scene");
}

/* The layer check another module can call: the same reasons. */
static void test_layer_check(void **state)
{
	scene *s = new_scene(2);
	edit_error err;

	(void)state;
	assert_int_equal(edit_layer_check(s, NULL, 0, &err), 0);
	assert_int_equal(edit_layer_check(s, "a-b_c.svg#g.1:x-y_z", 0, &err), 0);
	assert_int_equal(edit_layer_check(s, "nohash", 4, &err), RIGD_E_BAD_FIELD);
	assert_int_equal(err.op, 4);
	assert_string_equal(err.field, "layer");
	assert_null(scene_layer_syntax_error("x#y"));
	assert_non_null(scene_layer_syntax_error("x#"));
	assert_non_null(scene_layer_syntax_error("x y#z"));
	scene_free(s);
}

/* ---------- applying and undoing ---------- */

static void test_fields_apply_undo(void **state)
{
	scene *s = new_scene(2);
	edit_batch inv, inv2;
	edit_error err;
	node_props p;
	uint64_t empty, made, set;

	(void)state;
	empty = digest(s);
	assert_int_equal(apply_json(s,
				    "{\"ops\":[{\"op\":\"create\",\"id\":\"torso\",\"layer\":\"h.svg#t\","
				    "\"z\":{\"right\":1,\"left\":2},\"facing\":\"left\"},"
				    "{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"torso\","
				    "\"layer\":\"h.svg#a\",\"z\":-3}]}",
				    &inv, &err),
			 0);
	made = digest(s);
	scene_props(s, scene_find(s, "torso"), &p);
	assert_string_equal(p.layer, "h.svg#t");
	assert_true(p.z_right == 1 && p.z_left == 2);
	assert_int_equal(p.facing, FACING_LEFT);
	scene_props(s, scene_find(s, "arm"), &p);
	assert_int_equal(p.facing, FACING_NONE);
	assert_true(p.z_right == -3 && p.z_left == -3);
	/* A set, and its undo: the old values back, bit for bit. */
	assert_int_equal(apply_json(s,
				    "{\"ops\":[{\"op\":\"set\",\"id\":\"torso\",\"layer\":null,"
				    "\"z\":7,\"facing\":null}]}",
				    &inv2, &err),
			 0);
	set = digest(s);
	assert_true(set != made);
	scene_props(s, scene_find(s, "torso"), &p);
	assert_null(p.layer);
	assert_int_equal(edit_revert(s, &inv2), 0);
	assert_true(digest(s) == made);
	/* A delete of the subtree, undone through its inverse batch applied as
	 * an edit (as undo does): every field restored. */
	assert_int_equal(apply_json(s, "{\"ops\":[{\"op\":\"delete\",\"id\":\"torso\"}]}", &inv2,
				    &err),
			 0);
	assert_int_equal(scene_count(s), 0);
	assert_int_equal(edit_apply(s, &inv2, NULL, NULL, &err), 0);
	assert_true(digest(s) == made);
	edit_batch_release(&inv2);
	assert_int_equal(edit_revert(s, &inv), 0);
	assert_true(digest(s) == empty);
	scene_free(s);
}

/* A failing op takes the draw fields of the ops before it back. */
static void test_fields_rollback(void **state)
{
	scene *s = new_scene(2);
	edit_error err;
	uint64_t before;

	(void)state;
	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"layer\":\"f#g\",\"z\":1}]}");
	before = digest(s);
	assert_int_equal(apply_json(s,
				    "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"layer\":\"f#h\",\"z\":4,"
				    "\"facing\":\"left\"},{\"op\":\"set\",\"id\":\"nope\",\"z\":1}]}",
				    NULL, &err),
			 RIGD_E_UNKNOWN_NODE);
	assert_true(digest(s) == before);
	scene_free(s);
}

/* ---------- the log's op image ---------- */

static void test_op_image(void **state)
{
	proto_limits lim = proto_limits_default();
	static const char plain[] = "{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"t\":[1,2,0]}]}";
	edit_batch b, back;
	edit_error err;
	unsigned char *img;
	size_t len;

	(void)state;
	assert_int_equal(proto_decode_batch(fields_json, sizeof(fields_json) - 1, &lim, &b, &err), 0);
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT_DRAW);
	assert_int_equal(engine_ops_decode_bin(img, len, &back), 0);
	assert_same_ops(&b, &back);
	/* Truncated anywhere: refused, never read past the end. */
	for (size_t cut = 0; cut < len; cut++) {
		edit_batch part;

		assert_int_equal(engine_ops_decode_bin(img, cut, &part), RIGD_E_IO);
	}
	free(img);
	edit_batch_release(&back);
	edit_batch_release(&b);
	/* A batch without draw fields keeps format 1, byte for byte. */
	assert_int_equal(proto_decode_batch(plain, sizeof(plain) - 1, &lim, &b, &err), 0);
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), 0);
	assert_int_equal(img[0], ENGINE_OPS_BIN_FORMAT);
	free(img);
	edit_batch_release(&b);
}

/* ---------- the draw order ---------- */

static void test_facing_inherited(void **state)
{
	scene *s = new_scene(2);

	(void)state;
	apply_ok(s, "{\"ops\":["
		    "{\"op\":\"create\",\"id\":\"root\"},"
		    "{\"op\":\"create\",\"id\":\"a\",\"parent\":\"root\",\"facing\":\"left\"},"
		    "{\"op\":\"create\",\"id\":\"a1\",\"parent\":\"a\"},"
		    "{\"op\":\"create\",\"id\":\"a2\",\"parent\":\"a1\",\"facing\":\"right\"},"
		    "{\"op\":\"create\",\"id\":\"a3\",\"parent\":\"a2\"},"
		    "{\"op\":\"create\",\"id\":\"b\",\"parent\":\"root\"}]}");
	assert_int_equal(facing_of(s, "root"), FACING_RIGHT);
	assert_int_equal(facing_of(s, "a"), FACING_LEFT);
	assert_int_equal(facing_of(s, "a1"), FACING_LEFT);
	assert_int_equal(facing_of(s, "a2"), FACING_RIGHT);
	assert_int_equal(facing_of(s, "a3"), FACING_RIGHT);
	assert_int_equal(facing_of(s, "b"), FACING_RIGHT);
	/* A mirrored root faces left, and so does all it does not override. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"root\",\"s\":[-1,1,1]}]}");
	assert_int_equal(facing_of(s, "root"), FACING_LEFT);
	assert_int_equal(facing_of(s, "b"), FACING_LEFT);
	assert_int_equal(facing_of(s, "a2"), FACING_RIGHT);
	/* Mirrored twice is not mirrored; a turned root is not mirrored. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"root\",\"s\":[-1,-1,1],\"angle\":130}]}");
	assert_int_equal(facing_of(s, "b"), FACING_RIGHT);
	/* A mirrored node under the root does not make its subtree face left:
	 * only the root's matrix decides. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"root\",\"s\":[1,1,1]},"
		    "{\"op\":\"set\",\"id\":\"b\",\"s\":[-1,1,1]}]}");
	assert_int_equal(facing_of(s, "b"), FACING_RIGHT);
	/* The root's own facing beats its matrix. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"root\",\"s\":[-1,1,1],\"facing\":\"right\"}]}");
	assert_int_equal(facing_of(s, "b"), FACING_RIGHT);
	scene_free(s);
}

static const char rig_json[] =
	"{\"ops\":["
	"{\"op\":\"create\",\"id\":\"hero\"},"
	"{\"op\":\"create\",\"id\":\"torso\",\"parent\":\"hero\",\"layer\":\"h.svg#torso\"},"
	"{\"op\":\"create\",\"id\":\"head\",\"parent\":\"torso\",\"layer\":\"h.svg#head\",\"z\":1},"
	"{\"op\":\"create\",\"id\":\"armL\",\"parent\":\"torso\",\"layer\":\"h.svg#armL\","
	"\"z\":{\"right\":-1,\"left\":2}},"
	"{\"op\":\"create\",\"id\":\"armR\",\"parent\":\"torso\",\"layer\":\"h.svg#armR\","
	"\"z\":{\"right\":2,\"left\":-1}},"
	"{\"op\":\"create\",\"id\":\"bone\",\"parent\":\"torso\",\"z\":-5},"
	"{\"op\":\"create\",\"id\":\"legL\",\"parent\":\"hero\",\"layer\":\"h.svg#legL\"},"
	"{\"op\":\"create\",\"id\":\"legR\",\"parent\":\"hero\",\"layer\":\"h.svg#legR\"}]}";

static void test_order_sorted(void **state)
{
	scene *s = new_scene(2);
	uint64_t v;

	(void)state;
	apply_ok(s, rig_json);
	/* Facing right: armL (-1), then the z 0 ties in preorder (torso, legL,
	 * legR), head (1), armR (2). A node without a layer is not listed. */
	assert_string_equal(order_str(s), "armL torso legL legR head armR");
	v = scene_draw_version(s);
	/* The same list read again, or after an edit that cannot change it,
	 * keeps its version. */
	assert_string_equal(order_str(s), "armL torso legL legR head armR");
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"head\",\"angle\":30,\"t\":[5,5,0]}]}");
	assert_string_equal(order_str(s), "armL torso legL legR head armR");
	assert_true(scene_draw_version(s) == v);
	/* Facing left (the whole rig): armR (-1), ties, head (1), armL (2). */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"hero\",\"facing\":\"left\"}]}");
	assert_string_equal(order_str(s), "armR torso legL legR head armL");
	assert_true(scene_draw_version(s) == v + 1);
	/* Mirrored instead of told: the same. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"hero\",\"facing\":null,\"s\":[-1,1,1]}]}");
	assert_string_equal(order_str(s), "armR torso legL legR head armL");
	assert_true(scene_draw_version(s) == v + 1);
	/* One arm told to face right under a rig facing left: both arms at -1,
	 * tied, in preorder. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"armL\",\"facing\":\"right\"}]}");
	assert_string_equal(order_str(s), "armL armR torso legL legR head");
	/* Ties follow preorder: a reparent moves legR before legL... */
	apply_ok(s, "{\"ops\":[{\"op\":\"reparent\",\"id\":\"legR\",\"parent\":\"hero\",\"index\":0}]}");
	assert_string_equal(order_str(s), "armL armR legR torso legL head");
	/* ...a layer taken away drops a node, a new one adds it. */
	apply_ok(s, "{\"ops\":[{\"op\":\"set\",\"id\":\"torso\",\"layer\":null},"
		    "{\"op\":\"set\",\"id\":\"bone\",\"layer\":\"h.svg#bone\"}]}");
	assert_string_equal(order_str(s), "bone armL armR legR legL head");
	/* A delete removes its subtree's nodes from the order. */
	apply_ok(s, "{\"ops\":[{\"op\":\"delete\",\"id\":\"torso\"}]}");
	assert_string_equal(order_str(s), "legR legL");
	scene_free(s);
}

/* Negative zero ties with zero; a node re-created under the same id at
 * the same place is still the same list. */
static void test_order_ties_and_versions(void **state)
{
	scene *s = new_scene(2);
	uint64_t v;

	(void)state;
	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\",\"layer\":\"f#a\",\"z\":-0},"
		    "{\"op\":\"create\",\"id\":\"b\",\"layer\":\"f#b\",\"z\":0},"
		    "{\"op\":\"create\",\"id\":\"c\",\"layer\":\"f#c\",\"z\":-0}]}");
	assert_string_equal(order_str(s), "a b c");
	v = scene_draw_version(s);
	apply_ok(s, "{\"ops\":[{\"op\":\"delete\",\"id\":\"c\"},"
		    "{\"op\":\"create\",\"id\":\"c\",\"layer\":\"f#c\"}]}");
	assert_string_equal(order_str(s), "a b c");
	assert_true(scene_draw_version(s) == v);
	apply_ok(s, "{\"ops\":[{\"op\":\"delete\",\"id\":\"c\"},"
		    "{\"op\":\"create\",\"id\":\"d\",\"layer\":\"f#c\"}]}");
	assert_string_equal(order_str(s), "a b d");
	assert_true(scene_draw_version(s) == v + 1);
	scene_free(s);
}

/* A 3D scene has no order and builds none. */
static void test_order_3d(void **state)
{
	scene *s = new_scene(3);
	int n = -1;

	(void)state;
	apply_ok(s, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}");
	assert_int_equal(scene_draw_order(s, &n), 0);
	assert_int_equal(n, 0);
	assert_true(scene_draw_version(s) == 0);
	scene_free(s);
}

/* ---------- the order on the wire ---------- */

/* The JSON message a binary frame stands for (as rigctl prints it). */
static char *frame_json(proto_bin_names *names, const proto_buf *frame)
{
	proto_buf out;
	edit_error err;

	proto_buf_init(&out, 0);
	assert_int_equal(proto_bin_to_json(names, (const unsigned char *)proto_buf_str(frame),
					   frame->len, &out, &err), 0);
	return proto_buf_take(&out);
}

static void test_order_wire(void **state)
{
	static const char want[] = "\"order\":[\"armL\",\"torso\",\"legL\",\"legR\",\"head\",\"armR\"]";
	scene *s = new_scene(2), *flat = new_scene(3);
	int arm, n_world;
	proto_bin_names names;
	proto_buf b;
	char *text;

	(void)state;
	apply_ok(s, rig_json);
	apply_ok(flat, "{\"ops\":[{\"op\":\"create\",\"id\":\"a\"}]}");
	arm = scene_find(s, "armL");
	n_world = 1;
	proto_bin_names_init(&names);
	proto_buf_init(&b, 0);
	/* JSON: a snapshot and a tree always, after "nodes"; an update when
	 * asked, after "removed". */
	assert_int_equal(proto_encode_snapshot(&b, "s", 1, s), 0);
	assert_non_null(strstr(proto_buf_str(&b), want));
	assert_true(strstr(proto_buf_str(&b), want) > strstr(proto_buf_str(&b), "\"nodes\""));
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_tree(&b, "s", 1, s), 0);
	assert_non_null(strstr(proto_buf_str(&b), want));
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_update_order(&b, "s", 2, s, &arm, n_world, &arm, 1, NULL, 0,
						   true), 0);
	assert_non_null(strstr(proto_buf_str(&b), "\"removed\":[],\"order\":["));
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_update(&b, "s", 2, s, &arm, n_world, &arm, 1, NULL, 0), 0);
	assert_null(strstr(proto_buf_str(&b), "\"order\""));
	/* Binary: the JSON section carries it, and the decoder gives it back. */
	proto_buf_reset(&b);
	assert_int_equal(proto_bin_encode_snapshot(&b, PROTO_FORMAT_F32, "s", 1, s), 0);
	text = frame_json(&names, &b);
	assert_non_null(strstr(text, want));
	free(text);
	proto_buf_reset(&b);
	assert_int_equal(proto_bin_encode_update_order(&b, PROTO_FORMAT_F64, "s", 2, 1, s, &arm, 1,
						       &arm, 1, NULL, 0, true), 0);
	text = frame_json(&names, &b);
	assert_non_null(strstr(text, want));
	free(text);
	proto_buf_reset(&b);
	assert_int_equal(proto_bin_encode_update_order(&b, PROTO_FORMAT_F64, "s", 3, 2, s, &arm, 1,
						       NULL, 0, NULL, 0, false), 0);
	text = frame_json(&names, &b);
	assert_null(strstr(text, "\"order\""));
	free(text);
	/* A 3D scene: no order anywhere. */
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_snapshot(&b, "f", 1, flat), 0);
	assert_null(strstr(proto_buf_str(&b), "\"order\""));
	proto_buf_reset(&b);
	assert_int_equal(proto_bin_encode_snapshot(&b, PROTO_FORMAT_F32, "f", 1, flat), 0);
	text = frame_json(&names, &b);
	assert_null(strstr(text, "\"order\""));
	free(text);
	proto_buf_release(&b);
	proto_bin_names_release(&names);
	scene_free(s);
	scene_free(flat);
}

/* ---------- the engine: snapshots, time travel, reopen, log ---------- */

/* Submits batch 'json' and commits it; with 'with_asset' the batch stores
 * the SVG asset h.svg its layers name (as an SVG import does). */
static void submit_commit_asset(engine *e, const char *name, const char *json, bool with_asset)
{
	static const char h_svg[] =
		"<svg xmlns=\"http://www.w3.org/2000/svg\"><g id=\"torso\"/><g id=\"head\"/>"
		"<g id=\"armL\"/><g id=\"armR\"/><g id=\"legL\"/><g id=\"legR\"/><g id=\"bone\"/></svg>";
	proto_limits lim = proto_limits_default();
	svg_clean art;
	edit_batch b;
	edit_error er;

	if (proto_decode_batch(json, strlen(json), &lim, &b, &er) != 0)
		fail_msg("decode %s: %s", json, er.message);
	if (with_asset) {
		assert_int_equal(svg_sanitize(h_svg, strlen(h_svg), NULL, &art, &er), 0);
		if (engine_asset_submit(e, name, &b, "h.svg",
					&(engine_svg){ art.svg, art.len, art.ids, art.n_ids }, NULL,
					NULL, &er) != 0)
			fail_msg("submit %s: %s", json, er.message);
		svg_clean_release(&art);
	} else if (engine_submit(e, name, &b, NULL, &er) != 0) {
		fail_msg("submit %s: %s", json, er.message);
	}
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

/* The tree of 's' as JSON, under one scene name. */
static char *tree_json(const scene *s)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	assert_int_equal(proto_encode_tree(&b, "x", 1, s), 0);
	return proto_buf_take(&b);
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

static void test_engine(void **state)
{
	static const char *const batches[] = {
		rig_json,
		"{\"ops\":[{\"op\":\"set\",\"id\":\"hero\",\"facing\":\"left\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"armL\",\"z\":{\"right\":-0,\"left\":4}}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"hero\",\"facing\":null,\"s\":[-1,1,1]}]}",
		"{\"ops\":[{\"op\":\"delete\",\"id\":\"head\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"torso\",\"layer\":null}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"bone\",\"layer\":\"h.svg#bone\",\"z\":9}]}",
	};
	const int n = (int)(sizeof(batches) / sizeof(batches[0]));
	uint64_t digests[8];
	char *orders[8], *tree, *tree2;
	struct log_text log = { 0 };
	edit_error er;
	int64_t n_batches = 0;
	int bad_line = 0;
	scene *at;
	engine *e;
	tmpdb t;

	(void)state;
	tmpdb_make(&t, "/tmp", "test_model2d");
	e = open_engine(t.path);
	assert_int_equal(engine_scene_create_dims(e, "s", 2), 0);
	for (int i = 0; i < n; i++) {
		submit_commit_asset(e, "s", batches[i], i == 0);
		digests[i] = digest(engine_scene(e, "s"));
		orders[i] = strdup(order_str(engine_scene(e, "s")));
	}
	assert_string_equal(orders[1], "armR torso legL legR head armL");
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	assert_int_equal(max_snapshot_format(t.path), 3);
	/* Time travel: the fields and the order of each seq. */
	for (int i = 1; i <= n; i++) {
		assert_int_equal(engine_at(e, "s", i, &at), 0);
		assert_true(digest(at) == digests[i - 1]);
		assert_string_equal(order_str(at), orders[i - 1]);
		scene_free(at);
	}
	tree = tree_json(engine_scene(e, "s"));
	engine_close(e);
	/* Reopened: the latest snapshot and the log's tail. */
	e = open_engine(t.path);
	assert_true(digest(engine_scene(e, "s")) == digests[n - 1]);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	/* The log exported and imported into a new 2D scene: the same tree. */
	assert_int_equal(engine_log(e, "s", 1, -1, collect_line, &log), 0);
	assert_non_null(strstr(log.p, "\"layer\":\"h.svg#torso\""));
	assert_int_equal(engine_scene_create_dims(e, "copy", 2), 0);
	assert_int_equal(engine_import(e, "copy", log.p, log.len, &n_batches, &bad_line, &er), 0);
	assert_int_equal(n_batches, n);
	assert_true(engine_update(e, "copy", NULL, NULL) >= 0);
	tree2 = tree_json(engine_scene(e, "copy"));
	assert_string_equal(tree, tree2);
	assert_string_equal(order_str(engine_scene(e, "copy")), orders[n - 1]);
	/* A 3D scene refuses such a log, naming the line, and stays empty. */
	assert_int_equal(engine_scene_create(e, "flat"), 0);
	assert_int_equal(engine_import(e, "flat", log.p, log.len, &n_batches, &bad_line, &er),
			 RIGD_E_BAD_FIELD);
	assert_int_equal(bad_line, 1);
	assert_int_equal(scene_count(engine_scene(e, "flat")), 0);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	engine_close(e);
	for (int i = 0; i < n; i++)
		free(orders[i]);
	free(tree);
	free(tree2);
	free(log.p);
	tmpdb_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_decode_encode),
		cmocka_unit_test(test_fields_refused),
		cmocka_unit_test(test_layer_check),
		cmocka_unit_test(test_fields_apply_undo),
		cmocka_unit_test(test_fields_rollback),
		cmocka_unit_test(test_op_image),
		cmocka_unit_test(test_facing_inherited),
		cmocka_unit_test(test_order_sorted),
		cmocka_unit_test(test_order_ties_and_versions),
		cmocka_unit_test(test_order_3d),
		cmocka_unit_test(test_order_wire),
		cmocka_unit_test(test_engine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
