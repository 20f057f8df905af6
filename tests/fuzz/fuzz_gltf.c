/*
 * fuzz_gltf.c: libFuzzer target for the glTF importer (gltf_import).
 *
 * The input is a .gltf (JSON) or .glb file, imported with the default
 * options (and, when that refuses a shear, again with nearest_trs). Checks:
 *   - refused: a real code named in the error, an empty batch, bad_node -1
 *     or a node index;
 *   - accepted: the report agrees with the batch and prints as JSON; the
 *     batch applies to an empty scene (import validates everything a fresh
 *     scene could refuse), which then keeps its invariants (fuzz_common.h)
 *     and encodes for its subscribers as JSON in valid UTF-8;
 *     exporting that scene gives JSON that imports and applies to a scene
 *     storing bit for bit the same values (gltf.h's round-trip promise);
 *     importing the input again under an existing node of that scene, with
 *     the scene given as opts.existing, gives ids that do not collide, so
 *     that batch applies too.
 */
#include "codec/gltf.h"
#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include "fuzz_common.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Imports with 'opts'; on success checks the report and returns 0 with
 * *out filled (the caller releases it), else checks the refusal. */
static int import(const char *data, size_t size, const gltf_import_opts *opts, edit_batch *out)
{
	gltf_report rep;
	edit_error e;
	char *json = NULL;
	size_t json_len = 0;
	int rc = gltf_import(data, size, opts, out, &rep, &e);

	if (rc) {
		fuzz_check_failure(rc, &e, out);
		FUZZ_CHECK(rep.bad_node >= -1, "bad_node %d", rep.bad_node);
		FUZZ_CHECK(rep.nodes == NULL && rep.n_created == 0, "refusal with a report");
		gltf_report_release(&rep);
		return rc;
	}
	FUZZ_CHECK(rep.n_created == out->n_ops, "report says %d created, batch has %d",
		   rep.n_created, out->n_ops);
	FUZZ_CHECK(rep.n_roots <= rep.n_created && rep.n_inexact <= rep.n_matrix,
		   "report counts");
	FUZZ_CHECK(rep.n_warnings <= GLTF_MAX_WARNINGS, "%d warnings", rep.n_warnings);
	for (int i = 0; i < out->n_ops; i++) {
		FUZZ_CHECK(out->ops[i].kind == EDIT_CREATE, "op %d is not a create", i);
		FUZZ_CHECK(scene_id_valid(out->ops[i].id), "op %d id '%s'", i, out->ops[i].id);
	}
	for (int i = 0; i < rep.n_nodes; i++)
		FUZZ_CHECK(rep.nodes[i].role == GLTF_NODE_SKIPPED || scene_id_valid(rep.nodes[i].id),
			   "node %d maps to id '%s'", i, rep.nodes[i].id);
	FUZZ_CHECK(gltf_report_json(&rep, &json, &json_len) == 0, "gltf_report_json");
	fuzz_check_json(json, json_len, "report");
	free(json);
	gltf_report_release(&rep);
	return 0;
}

/* Applies an accepted import to 's'; it must be accepted. */
static void apply_ok(scene *s, const edit_batch *b, const char *what)
{
	edit_error e;
	int rc = edit_apply(s, b, NULL, NULL, &e);

	FUZZ_CHECK(rc == 0, "%s: the imported batch is refused (%s: %s)", what, err_code(rc),
		   e.message);
	fuzz_check_scene(s);
}

/* What subscribers of the scene would be sent: JSON, and UTF-8. */
static void check_snapshot(const scene *s)
{
	proto_buf b;

	proto_buf_init(&b, 16);
	FUZZ_CHECK(proto_encode_snapshot(&b, "imported", 1, s) == 0, "encode_snapshot");
	fuzz_check_json(proto_buf_str(&b), b.len, "snapshot of the import");
	proto_buf_release(&b);
}

/* Export, import, apply: the same stored values. */
static void check_roundtrip(scene *s)
{
	char *json = NULL;
	size_t len = 0;
	edit_batch b;
	scene *again;
	int rc;

	FUZZ_CHECK(gltf_export(s, NULL, &json, &len) == 0, "gltf_export");
	fuzz_check_json(json, len, "export");
	rc = import(json, len, NULL, &b);
	FUZZ_CHECK(rc == 0, "own export refused: %s", err_code(rc));
	FUZZ_CHECK(b.n_ops == scene_count(s), "export of %d nodes imports as %d",
		   scene_count(s), b.n_ops);
	again = scene_new();
	FUZZ_CHECK(again != NULL, "scene_new");
	apply_ok(again, &b, "export");
	FUZZ_CHECK(fuzz_scene_hash(again) == fuzz_scene_hash(s),
		   "export then import changed stored values");
	scene_free(again);
	edit_batch_release(&b);
	free(json);
}

/* The same file again, under the first root of 's', avoiding its ids. */
static void check_import_into(scene *s, const char *data, size_t size,
			      const gltf_import_opts *base)
{
	gltf_import_opts opts = *base;
	edit_batch b;
	int count = scene_count(s);

	if (count == 0)
		return;
	opts.existing = s;
	opts.parent = scene_id(s, scene_at(s, 0));
	FUZZ_CHECK(import(data, size, &opts, &b) == 0, "second import refused");
	apply_ok(s, &b, "import into");
	FUZZ_CHECK(scene_count(s) == count + b.n_ops, "count after the second import");
	edit_batch_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	gltf_import_opts opts = gltf_import_opts_default();
	edit_batch b;
	scene *s;
	int rc;

	rc = import(text, size, &opts, &b);
	if (rc == RIGD_E_NOT_TRS) {
		opts.nearest_trs = true;
		rc = import(text, size, &opts, &b);
	}
	if (rc)
		return 0;
	s = scene_new();
	FUZZ_CHECK(s != NULL, "scene_new");
	apply_ok(s, &b, "import");
	edit_batch_release(&b);
	check_snapshot(s);
	check_roundtrip(s);
	check_import_into(s, text, size, &opts);
	scene_free(s);
	return 0;
}
