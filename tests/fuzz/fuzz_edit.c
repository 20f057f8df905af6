/*
 * fuzz_edit.c: libFuzzer target for the edit validator (edit_apply_ex).
 *
 * The input is an edit batch in JSON, decoded with proto_decode_batch and
 * applied to a fresh small scene: the demo rig (docs/transforms.md 4) in its rich
 * form (tests/gltf/demo_rig.h: cameras, a mirrored arm, a non-uniform scale
 * over a rotation, a zero scale) plus a chain and a lone root, with a node
 * limit low enough for create ops to reach it. Inputs that do not decode
 * are the message fuzzer's business and stop there. After the apply:
 *   - refused: a real code, named in the error; no result, no inverse; the
 *     scene's hash over everything it stores is what it was;
 *   - accepted: the scene keeps its invariants (fuzz_check_scene: preorder
 *     ranges, valid stored values, finite locals, every world matrix equal
 *     to the product of the locals along its path); the result lists valid
 *     ids; the ack and update encode to JSON; the inverse, sent through its
 *     JSON as the log stores it, applies and gives back the exact scene;
 *     applying the batch once more gives the exact same scene as the first
 *     time, and the same inverse.
 */
#include "codec/proto.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	proto_limits plim = proto_limits_default();
	edit_limits elim = edit_limits_default();
	edit_batch b, inv, inv_read, inv2;
	edit_result res;
	edit_error e;
	proto_buf inv_json, inv2_json;
	uint64_t before, after;
	int count_before, rc;
	scene *s;

	plim.edit.max_ops = elim.max_ops = 64;
	if (proto_decode_batch((const char *)data, size, &plim, &b, &e) != 0)
		return 0;
	s = build_scene();
	before = fuzz_scene_hash(s);
	count_before = scene_count(s);

	rc = edit_apply_ex(s, &b, &elim, &res, &inv, &e);
	if (rc) {
		fuzz_check_failure(rc, &e, &inv);
		FUZZ_CHECK(e.op >= -1 && e.op < b.n_ops, "error names op %d of %d", e.op,
			   b.n_ops);
		FUZZ_CHECK(res.n_created == 0 && res.n_changed == 0 && res.n_removed == 0,
			   "refused batch has a result");
		FUZZ_CHECK(scene_count(s) == count_before, "refused batch changed the count");
		FUZZ_CHECK(fuzz_scene_hash(s) == before, "refused batch (%s: %s) changed the scene",
			   err_code(rc), e.message);
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

	/* Redo: the same batch on the same scene does the same thing. */
	rc = edit_apply_ex(s, &b, &elim, NULL, &inv2, &e);
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
	edit_batch_release(&b);
	scene_free(s);
	return 0;
}
