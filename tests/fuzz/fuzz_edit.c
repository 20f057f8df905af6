/*
 * fuzz_edit.c: libFuzzer target for the edit validator (edit_apply_ex).
 *
 * The input is an edit batch in JSON, decoded with proto_decode_batch and
 * applied to a fresh small scene: the demo rig (docs/transforms.md 4) in its rich
 * form (tests/gltf/demo_rig.h: cameras, a mirrored arm, a non-uniform scale
 * over a rotation, a zero scale) plus a chain and a lone root, with a node
 * limit low enough for create ops to reach it. Inputs that do not decode
 * are the message fuzzer's business and stop there. The batch is applied
 * twice, each time to a fresh scene: that one, and a small 2D scene (a
 * character with artwork layers, z per facing, an own facing, a mirrored
 * root, sheared nodes and every kind of inherit mode: Spine's and
 * DragonBones' flags), where the drawing fields, the draw order, shear
 * and inherit are in play.
 * After each apply:
 *   - refused: a real code, named in the error; no result, no inverse; the
 *     scene's hash over everything it stores is what it was;
 *   - accepted: the scene keeps its invariants (fuzz_check_scene: preorder
 *     ranges, valid stored values, finite locals, every world matrix equal
 *     to what the traversal computes along its path: the product of the
 *     locals, or a node's inherit mode); the result lists valid
 *     ids; the ack and update encode to JSON; the inverse, sent through its
 *     JSON as the log stores it, applies and gives back the exact scene;
 *     applying the batch once more gives the exact same scene as the first
 *     time, and the same inverse;
 *   - either way, the draw order (2D) is the one the stored values give:
 *     after a refusal and after the inverse it is the order before.
 */
#include "codec/proto.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include "demo_rig.h"
#include "fuzz_common.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_EDIT_MAX_NODES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The demo rig (13 nodes) plus a chain c0 > c1 > c2 under "prop" and a
 * lone root, 17 nodes in all. */
static scene *build_scene(void)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	int parent;

	FUZZ_CHECK(s != NULL, "scene_new");
	FUZZ_CHECK(demo_rig_build(s, true) == 0, "demo_rig_build");
	parent = scene_find(s, "prop");
	for (int i = 0; i < 3; i++) {
		char id[8];

		snprintf(id, sizeof(id), "c%d", i);
		p.t = vec3_make(0, 1, 0);
		p.s = vec3_make(1, 1, 2);
		FUZZ_CHECK(scene_create(s, id, parent, -1, &p, &parent) == 0, "chain");
	}
	p = node_props_default();
	p.name = "lone";
	FUZZ_CHECK(scene_create(s, "lone", -1, -1, &p, NULL) == 0, "lone");
	scene_set_max_nodes(s, FUZZ_EDIT_MAX_NODES);
	return s;
}

/* A character in a 2D scene: layers, z per facing, an own facing, a
 * second root mirrored (it faces left), shears and inherit modes (a
 * Spine mode under a mirrored root, DragonBones' flags, a normal child
 * of a node of another mode). */
static scene *build_scene_2d(void)
{
	static const struct {
		const char *id, *parent, *layer;
		double x, sx, z_right, z_left;
		int facing;
		double shx, shy;
		int inherit;
	} nodes[] = {
		{ "hero", NULL, NULL, 300, 1, 0, 0, FACING_NONE, 0, 0, INHERIT_NORMAL },
		{ "torso", "hero", "h.svg#torso", 0, 1, 0, 0, FACING_NONE, 0, 15, INHERIT_NORMAL },
		{ "arm", "torso", "h.svg#arm", 20, 1, -1, 2, FACING_NONE, -5, 5,
		  INHERIT_NO_SCALE },
		{ "fore", "arm", "h.svg#fore", 60, 1, -1, 2, FACING_LEFT, 0, 0, INHERIT_NORMAL },
		{ "leg", "hero", "h.svg#leg", 0, 1, 1, 1, FACING_NONE, 0, -30,
		  INHERIT_DB | DB_NO_ROTATION | DB_NO_SCALE },
		{ "flip", NULL, NULL, 100, -1, 0, 0, FACING_NONE, 0, 0, INHERIT_NORMAL },
		{ "fl", "flip", "f.svg#a:b", 5, 1, 3, -3, FACING_NONE, 10, 0,
		  INHERIT_NO_ROTATION_OR_REFLECTION },
	};
	/* The artwork its layers name: a layer must name an asset the scene
	 * knows and one of its elements (edit_layer_check), also when an
	 * inverse puts it back. */
	static const char h_ids[] = "torso\narm\nfore\nleg\n", f_ids[] = "a:b\n";
	scene *s = scene_new();

	FUZZ_CHECK(s != NULL && scene_set_dims(s, 2) == 0, "scene_new 2D");
	FUZZ_CHECK(asset_set_add(scene_assets(s), "h.svg", h_ids, sizeof(h_ids) - 1) == 0 &&
			   asset_set_add(scene_assets(s), "f.svg", f_ids, sizeof(f_ids) - 1) == 0,
		   "2D rig's assets");
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		node_props p = node_props_default();

		p.t = vec3_make(nodes[i].x, 0, 0);
		p.s = vec3_make(nodes[i].sx, 1, 1);
		p.layer = nodes[i].layer;
		p.z_right = nodes[i].z_right;
		p.z_left = nodes[i].z_left;
		p.facing = nodes[i].facing;
		p.shear[0] = nodes[i].shx;
		p.shear[1] = nodes[i].shy;
		p.inherit = nodes[i].inherit;
		FUZZ_CHECK(scene_create(s, nodes[i].id,
					nodes[i].parent ? scene_find(s, nodes[i].parent) : -1, -1, &p,
					NULL) == 0,
			   "2D rig");
	}
	scene_set_max_nodes(s, FUZZ_EDIT_MAX_NODES);
	return s;
}

/* The draw order as one value: its ids hashed in order (0 for a 3D
 * scene's empty list), after checking each names a node with a layer. */
static uint64_t order_hash(const scene *s)
{
	uint64_t h = DIGEST_SEED;
	node_props p;
	int n = -1;

	FUZZ_CHECK(scene_draw_order(s, &n) == 0 && n >= 0 && n <= scene_count(s), "draw order");
	for (int i = 0; i < n; i++) {
		int node = scene_find(s, scene_draw_id(s, i));

		FUZZ_CHECK(node >= 0, "the order names no node");
		scene_props(s, node, &p);
		FUZZ_CHECK(p.layer != NULL, "the order names a node without a layer");
		h = digest_mix_str(h, scene_draw_id(s, i));
	}
	return h;
}

static void check_json(const proto_buf *b, const char *what)
{
	fuzz_check_json(proto_buf_str(b), b->len, what);
}

/* The ack and the update a subscriber would get for the accepted batch. */
static void encode_replies(const scene *s, const edit_result *r)
{
	int world[FUZZ_EDIT_MAX_NODES], changed[2 * FUZZ_EDIT_MAX_NODES];
	int n_world = 0, n_changed;
	proto_req req = { .present = true, .is_string = false, .num = 1 };
	proto_buf b;

	for (int pos = 0; pos < scene_count(s) && n_world < FUZZ_EDIT_MAX_NODES; pos++)
		world[n_world++] = scene_at(s, pos);
	n_changed = digest_live_handles(s, r->created, r->n_created, changed);
	n_changed += digest_live_handles(s, r->changed, r->n_changed, changed + n_changed);
	proto_buf_init(&b, 16);
	FUZZ_CHECK(proto_encode_ack(&b, &req, 2, r->recomputed) == 0, "encode_ack");
	check_json(&b, "ack");
	proto_buf_reset(&b);
	FUZZ_CHECK(proto_encode_update(&b, "demo", 2, s, world, n_world, changed, n_changed,
				       r->removed, r->n_removed) == 0,
		   "encode_update");
	check_json(&b, "update");
	proto_buf_reset(&b);
	FUZZ_CHECK(proto_encode_snapshot(&b, "demo", 2, s) == 0, "encode_snapshot");
	check_json(&b, "snapshot");
	proto_buf_release(&b);
}

/* The inverse as the log stores it (JSON) and reads it back for undo. */
static void through_json(const edit_batch *inverse, edit_batch *out, proto_buf *json)
{
	proto_limits lim = proto_limits_default();
	edit_error e;
	int rc;

	lim.edit.max_ops = INT_MAX;
	FUZZ_CHECK(proto_encode_ops(json, inverse) == 0, "encode_ops(inverse)");
	rc = proto_decode_ops(proto_buf_str(json), json->len, &lim, out, &e);
	FUZZ_CHECK(rc == 0, "inverse JSON refused (%s: %s): %.300s", err_code(rc), e.message,
		   proto_buf_str(json));
	FUZZ_CHECK(out->n_ops == inverse->n_ops, "inverse lost ops");
}

/* Applies 'b' to 's' and checks everything the header says; frees 's'. */
static void run(scene *s, const edit_batch *b, const edit_limits *elim)
{
	edit_batch inv, inv_read, inv2;
	edit_result res;
	edit_error e;
	proto_buf inv_json, inv2_json;
	uint64_t before, after, order_before;
	int count_before, rc;

	before = fuzz_scene_hash(s);
	order_before = order_hash(s);
	count_before = scene_count(s);

	rc = edit_apply_ex(s, b, elim, &res, &inv, &e);
	if (rc) {
		fuzz_check_failure(rc, &e, &inv);
		FUZZ_CHECK(e.op >= -1 && e.op < b->n_ops, "error names op %d of %d", e.op,
			   b->n_ops);
		FUZZ_CHECK(res.n_created == 0 && res.n_changed == 0 && res.n_removed == 0,
			   "refused batch has a result");
		FUZZ_CHECK(scene_count(s) == count_before, "refused batch changed the count");
		FUZZ_CHECK(fuzz_scene_hash(s) == before, "refused batch (%s: %s) changed the scene",
			   err_code(rc), e.message);
		FUZZ_CHECK(order_hash(s) == order_before, "refused batch changed the order");
		fuzz_check_scene(s);
		goto out;
	}
	fuzz_check_scene(s);
	fuzz_check_result(&res);
	FUZZ_CHECK(scene_count(s) <= FUZZ_EDIT_MAX_NODES, "node limit passed: %d",
		   scene_count(s));
	after = fuzz_scene_hash(s);
	encode_replies(s, &res);

	/* Undo through the log's JSON: back to the exact scene. */
	proto_buf_init(&inv_json, 0);
	proto_buf_init(&inv2_json, 0);
	through_json(&inv, &inv_read, &inv_json);
	rc = edit_apply(s, &inv_read, NULL, NULL, &e);
	FUZZ_CHECK(rc == 0, "inverse refused (%s: %s)", err_code(rc), e.message);
	fuzz_check_scene(s);
	FUZZ_CHECK(fuzz_scene_hash(s) == before, "inverse did not restore the scene");
	FUZZ_CHECK(order_hash(s) == order_before, "inverse did not restore the order");

	/* Redo: the same batch on the same scene does the same thing. */
	rc = edit_apply_ex(s, b, elim, NULL, &inv2, &e);
	FUZZ_CHECK(rc == 0, "batch refused the second time (%s: %s)", err_code(rc), e.message);
	FUZZ_CHECK(fuzz_scene_hash(s) == after, "batch not deterministic");
	FUZZ_CHECK(proto_encode_ops(&inv2_json, &inv2) == 0, "encode_ops(inverse 2)");
	FUZZ_CHECK(inv_json.len == inv2_json.len &&
			   memcmp(proto_buf_str(&inv_json), proto_buf_str(&inv2_json),
				  inv_json.len) == 0,
		   "the second inverse differs");
	edit_batch_release(&inv_read);
	edit_batch_release(&inv2);
	proto_buf_release(&inv_json);
	proto_buf_release(&inv2_json);
out:
	edit_result_release(&res);
	edit_batch_release(&inv);
	scene_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	proto_limits plim = proto_limits_default();
	edit_limits elim = edit_limits_default();
	edit_batch b;
	edit_error e;

	plim.edit.max_ops = elim.max_ops = 64;
	if (proto_decode_batch((const char *)data, size, &plim, &b, &e) != 0)
		return 0;
	run(build_scene(), &b, &elim);
	run(build_scene_2d(), &b, &elim);
	edit_batch_release(&b);
	return 0;
}
