/*
 * fuzz_skeleton.c: libFuzzer target for the two skeleton importers
 * (codec/spine.c and codec/dragonbones.c, their decoders and batch
 * builders).
 *
 * The input is an import body; its first byte picks the format (even:
 * Spine, odd: DragonBones), the rest is the JSON body of POST
 * .../spine or .../dragonbones. It is decoded, then built into a batch
 * and applied, as the route does (the skeleton's asset added to the
 * scene's set first, so that the slots' layers validate), once against an
 * empty 2D scene and once against a 2D scene holding a few nodes, some
 * with the ids a skeleton's root bone and slot take.
 *   - a refusal (decode, batch or apply) is a real code with a terminated
 *     message, leaves no ops, and leaves the scene bit for bit as it was,
 *     its asset set included;
 *   - an accepted import adds one node per bone and slot, keeps the
 *     scene's invariants (fuzz_check_scene), and every world matrix is
 *     finite unless the locals along its path are large enough to
 *     overflow honestly (the product of their bounds is not finite);
 *   - the batch applies whole: a batch the builder made is refused by the
 *     scene only for the node limit or memory.
 */
#include "codec/dragonbones.h"
#include "codec/spine.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include "fuzz_common.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_SKELETON_MAX_BYTES (1u << 20)  /* the body limit the decoders get */
#define FUZZ_SKELETON_MAX_NODES 4096        /* the scenes' node limit */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A 2D scene: empty, or with a root "root" (the id of a bone named root),
 * a slot-like child "slot:body" and an unrelated pair. */
static scene *build_scene(bool with_nodes)
{
	static const struct {
		const char *id, *parent;
		double x, sx;
	} nodes[] = {
		{ "root", NULL, 3, 1 },
		{ "slot:body", "root", 0, 2 },
		{ "prop", NULL, -5, -1 },
		{ "prop_arm", "prop", 1, 0.5 },
	};
	scene *s = scene_new();

	FUZZ_CHECK(s != NULL && scene_set_dims(s, 2) == 0, "scene_new 2D");
	for (size_t i = 0; with_nodes && i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		node_props p = node_props_default();

		p.t = vec3_make(nodes[i].x, 0, 0);
		p.s = vec3_make(nodes[i].sx, 1, 1);
		FUZZ_CHECK(scene_create(s, nodes[i].id,
					nodes[i].parent ? scene_find(s, nodes[i].parent) : -1, -1, &p,
					NULL) == 0,
			   "scene node");
	}
	scene_set_max_nodes(s, FUZZ_SKELETON_MAX_NODES);
	return s;
}

/* The largest magnitude of a matrix's entries. */
static double max_abs(mat4 m)
{
	double v = 0;

	for (int i = 0; i < 16; i++)
		v = fmax(v, fabs(m.m[i]));
	return v;
}

/*
 * Every world matrix is finite where it cannot have overflowed: a bound of
 * its entries is the product, along its path, of 16 times each local's
 * largest entry (a 4x4 product's entry is at most 4 times the two largest
 * entries multiplied; the inherit modes only take scale and rotation
 * away, which the wider factor covers).
 */
static void check_worlds(scene *s)
{
	int n_nodes = scene_count(s);
	double *bound = calloc((size_t)n_nodes + 1, sizeof(double));

	FUZZ_CHECK(bound != NULL, "calloc");
	for (int pos = 0; pos < n_nodes; pos++) {
		int n = scene_at(s, pos), parent = scene_parent(s, n);
		double b = 16 * fmax(1, max_abs(scene_local(s, n)));

		if (parent >= 0)
			b *= bound[scene_pos(s, parent)];
		bound[pos] = b;
		if (isfinite(b) && b < DBL_MAX / 16)
			FUZZ_CHECK(mat4_is_finite(scene_world(s, n)),
				   "'%s': world not finite though its locals are bounded (%g)",
				   scene_id(s, n), b);
	}
	free(bound);
}

/* A refusal: a real code, named, terminated. */
static void check_refusal(int rc, const edit_error *err, const edit_batch *b)
{
	FUZZ_CHECK(rc != 0, "refusal with code 0");
	fuzz_check_failure(rc, err, b);
}

/* The decoded import of either format, for the shared steps. */
struct decoded {
	bool dragonbones;
	spine_import sp;
	dragonbones_import db;
	int bones, slots;
};

static int build_batch(const struct decoded *d, const scene *s, edit_batch *b,
		       skel_import_report *rep, edit_error *err)
{
	return d->dragonbones ? dragonbones_import_batch(&d->db, s, b, rep, err)
			      : spine_import_batch(&d->sp, s, b, rep, err);
}

/* Builds and applies the import against 's', as the route does, and
 * checks the outcome. */
static void import_into(const struct decoded *d, scene *s)
{
	uint64_t before = fuzz_scene_hash(s);
	int n_before = scene_count(s), assets_before = asset_set_count(scene_assets(s));
	edit_limits lim = edit_limits_default();
	skel_import_report rep;
	edit_result res;
	edit_batch batch, inverse;
	edit_error err;
	int rc;

	edit_error_clear(&err);
	rc = build_batch(d, s, &batch, &rep, &err);
	if (rc) {
		check_refusal(rc, &err, &batch);
		FUZZ_CHECK(rep.asset == NULL && rep.ids == NULL, "refused build left a report");
		FUZZ_CHECK(fuzz_scene_hash(s) == before, "refused build changed the scene");
		edit_batch_release(&batch);
		skel_import_report_release(&rep);
		return;
	}
	FUZZ_CHECK(batch.n_ops == d->bones + d->slots, "%d ops for %d bones and %d slots",
		   batch.n_ops, d->bones, d->slots);
	FUZZ_CHECK(rep.bones == d->bones && rep.slots == d->slots, "report counts");
	FUZZ_CHECK(rep.asset && rep.asset_len > 0, "no asset");
	/* The engine hands asset_set_add "" for an asset without ids (its
	 * copy of the ids is never NULL); the report's ids are NULL then. */
	FUZZ_CHECK(asset_set_add(scene_assets(s), rep.file, rep.ids ? rep.ids : "", rep.ids_len) == 0,
		   "asset_set_add");
	if (lim.max_ops < batch.n_ops)
		lim.max_ops = batch.n_ops;
	edit_result_init(&res);
	rc = edit_apply_ex(s, &batch, &lim, &res, &inverse, &err);
	if (rc) {
		check_refusal(rc, &err, NULL);
		FUZZ_CHECK(rc == RIGD_E_LIMIT || rc == RIGD_E_NOMEM,
			   "the scene refused the importer's batch: %s: %s (%s)", err_code(err.code),
			   err.message, err.field);
		/* The route stores the asset only with the batch: take it back. */
		if (asset_set_count(scene_assets(s)) != assets_before)
			asset_set_remove(scene_assets(s), rep.file);
		FUZZ_CHECK(asset_set_count(scene_assets(s)) == assets_before, "asset left behind");
		FUZZ_CHECK(fuzz_scene_hash(s) == before, "refused apply changed the scene");
	} else {
		FUZZ_CHECK(scene_count(s) == n_before + batch.n_ops, "%d nodes after %d + %d",
			   scene_count(s), n_before, batch.n_ops);
		fuzz_check_result(&res);
		fuzz_check_scene(s);
		check_worlds(s);
		edit_batch_release(&inverse);
	}
	edit_result_release(&res);
	edit_batch_release(&batch);
	skel_import_report_release(&rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct decoded d = { 0 };
	const char *body;
	size_t len;
	edit_error err;
	int rc;

	if (size < 1)
		return 0;
	d.dragonbones = data[0] & 1;
	body = (const char *)data + 1;
	len = size - 1;
	edit_error_clear(&err);
	if (d.dragonbones) {
		rc = dragonbones_import_decode(body, len, FUZZ_SKELETON_MAX_BYTES, &d.db, &err);
		d.bones = d.db.n_bones;
		d.slots = d.db.n_slots;
	} else {
		rc = spine_import_decode(body, len, FUZZ_SKELETON_MAX_BYTES, &d.sp, &err);
		d.bones = d.sp.n_bones;
		d.slots = d.sp.n_slots;
	}
	if (rc) {
		check_refusal(rc, &err, NULL);
		FUZZ_CHECK(d.bones == 0 && d.slots == 0, "refused decode left %d bones", d.bones);
		return 0;
	}
	for (int with_nodes = 0; with_nodes < 2; with_nodes++) {
		scene *s = build_scene(with_nodes);

		import_into(&d, s);
		scene_free(s);
	}
	if (d.dragonbones)
		dragonbones_import_release(&d.db);
	else
		spine_import_release(&d.sp);
	return 0;
}
