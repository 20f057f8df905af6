/*
 * test_gltf.c: glTF import and export (server/codec/gltf_*.c).
 *
 * Import: every glTF sample model (RIGD_GLTF_SAMPLES) against world matrices
 * composed here straight from the file (plain products of the file's
 * matrices and TRS, no decomposition), counts from the samples' README,
 * every malformed fixture of tests/gltf/malformed (code, node, nothing
 * produced), GLB containers good and bad, ids, mesh references, scenes,
 * cameras, skins, limits, deep chains and cycles, and mutated input.
 * Export: the demo rig as in docs/transforms.md section 10, exact round trips of the
 * demo, a rich scene and every sample, edited pivot pairs.
 * The three.js and Khronos validator checks are in gltf/gltf.test.mjs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_rig.h"
#include "codec/gltf.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#define SAMPLES RIGD_GLTF_SAMPLES "/"
#define MALFORMED RIGD_SOURCE_DIR "/tests/gltf/malformed/"

/* ---------- helpers ---------- */

/* Reads a whole file. A sample model read while the samples folder is
 * absent skips the test (before it has allocated anything) and says why. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f;
	char *data;
	long n;

	if (strncmp(path, SAMPLES, strlen(SAMPLES)) == 0 && access(RIGD_GLTF_SAMPLES, R_OK) != 0) {
		print_message("glTF samples not found at %s\n", RIGD_GLTF_SAMPLES);
		skip();
	}
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return data;
}

/* Imports 'len' bytes expecting success; the caller releases both. */
static void import_ok(const char *data, size_t len, const gltf_import_opts *opts, edit_batch *b,
		      gltf_report *r)
{
	edit_error err;
	int rc = gltf_import(data, len, opts, b, r, &err);

	if (rc != 0)
		fail_msg("import failed: %s (%s)", err.message, err_code(rc));
	assert_int_equal(err.code, 0);
}

/* Imports a NUL-terminated document expecting refusal with 'code' naming
 * glTF node 'bad_node' (-1: none); checks that nothing was produced. */
static void import_refused(const char *json, size_t len, const gltf_import_opts *opts, int code,
			   int bad_node)
{
	edit_batch b;
	gltf_report r;
	edit_error err;
	int rc = gltf_import(json, len, opts, &b, &r, &err);

	if (rc != code)
		fail_msg("expected %s, got %s: %s", err_code(code), rc ? err_code(rc) : "success",
			 rc ? err.message : "");
	assert_int_equal(err.code, code);
	assert_int_equal(err.op, -1);
	assert_true(strlen(err.message) > 0);
	assert_int_equal(r.bad_node, bad_node);
	if (bad_node >= 0) {
		char want[32];

		snprintf(want, sizeof(want), "node %d", bad_node);
		if (strncmp(err.message, want, strlen(want)) != 0)
			fail_msg("message '%s' does not start with '%s'", err.message, want);
	}
	/* Nothing produced. */
	assert_int_equal(b.n_ops, 0);
	assert_null(b.ops);
	assert_int_equal(r.n_created, 0);
	assert_null(r.nodes);
	assert_int_equal(r.n_skins, 0);
	assert_int_equal(r.n_warnings, 0);
	edit_batch_release(&b);
	gltf_report_release(&r);
}

static void refused(const char *json, int code, int bad_node)
{
	import_refused(json, strlen(json), NULL, code, bad_node);
}

/* Brings world matrices up to date. scene_update is only called when
 * something is dirty: on a clean scene it hands qsort a NULL array, which
 * UBSan reports (scene.c). */
static void update(scene *s)
{
	if (scene_has_dirty(s))
		scene_update(s, 1, NULL, NULL);
}

/* A new scene holding batch 'b'. */
static scene *apply_new(const edit_batch *b)
{
	scene *s = scene_new();
	edit_error err;
	int rc;

	assert_non_null(s);
	rc = edit_apply(s, b, NULL, NULL, &err);
	if (rc != 0)
		fail_msg("apply failed: %s", err.message);
	update(s);
	return s;
}

static scene *import_new(const char *data, size_t len, const gltf_import_opts *opts,
			 gltf_report *r)
{
	edit_batch b;
	gltf_report local;
	scene *s;

	import_ok(data, len, opts, &b, r ? r : &local);
	s = apply_new(&b);
	edit_batch_release(&b);
	if (!r)
		gltf_report_release(&local);
	return s;
}

/* Not inlined: gcc 12 at -O3 then takes pointers into the returned text for
 * pointers to the local 'json' and warns (-Wdangling-pointer, a false
 * positive). */
__attribute__((noinline)) static char *export_str(const scene *s, size_t *len)
{
	char *json = NULL;
	size_t n = 0;

	assert_int_equal(gltf_export(s, NULL, &json, &n), 0);
	assert_non_null(json);
	assert_int_equal(strlen(json), n);
	if (len)
		*len = n;
	return json;
}

/* Largest element difference relative to the largest element of the upper
 * three rows of 'ref' (the oracle tests' measure). */
static double rel_diff(mat4 a, mat4 ref)
{
	double scale = 0, diff = mat4_max_abs_diff(a, ref);

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 3; r++)
			scale = fmax(scale, fabs(ref.m[c * 4 + r]));
	return diff == 0 ? 0 : diff / fmax(scale, 1e-300);
}

static bool same_bits(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/*
 * Two scenes hold the same nodes, in the same tree order, with every stored
 * value bit for bit equal, and world matrices within 'tol' relative (exact
 * when stored values are, but the tolerance is what the issue asks).
 */
static void assert_same_scene(scene *a, scene *b, double tol)
{
	update(a);
	update(b);
	assert_int_equal(scene_count(a), scene_count(b));
	for (int pos = 0; pos < scene_count(a); pos++) {
		int na = scene_at(a, pos), nb = scene_at(b, pos);
		int pa = scene_parent(a, na), pb = scene_parent(b, nb);
		node_props x, y;

		assert_string_equal(scene_id(a, na), scene_id(b, nb));
		assert_true((pa < 0) == (pb < 0));
		if (pa >= 0)
			assert_string_equal(scene_id(a, pa), scene_id(b, pb));
		scene_props(a, na, &x);
		scene_props(b, nb, &y);
		if (!same_bits(&x.t, &y.t, sizeof(vec3)) || !same_bits(&x.r, &y.r, sizeof(quat)) ||
		    !same_bits(&x.s, &y.s, sizeof(vec3)) || !same_bits(&x.pivot, &y.pivot, sizeof(vec3)))
			fail_msg("node %s: transform differs", scene_id(a, na));
		assert_int_equal(x.has_bounds, y.has_bounds);
		if (x.has_bounds)
			assert_true(same_bits(&x.bounds, &y.bounds, sizeof(aabb)));
		assert_true(same_str(x.name, y.name));
		assert_true(same_str(x.mesh, y.mesh));
		assert_int_equal(x.kind, y.kind);
		assert_true(same_bits(&x.fov_deg, &y.fov_deg, sizeof(double)));
		assert_true(same_bits(&x.znear, &y.znear, sizeof(double)));
		assert_true(same_bits(&x.zfar, &y.zfar, sizeof(double)));
		assert_int_equal(x.visible, y.visible);
		if (rel_diff(scene_world(a, na), scene_world(b, nb)) > tol)
			fail_msg("node %s: world matrices differ by %g", scene_id(a, na),
				 rel_diff(scene_world(a, na), scene_world(b, nb)));
	}
	assert_true(scene_hash(a) == scene_hash(b));
}

/* ---------- an independent reading of a sample's nodes ---------- */

typedef struct ref_node {
	mat4 local;
	int parent;
	bool reached;
	bool from_matrix;
} ref_node;

/*
 * World matrices composed directly from the file: the "matrix" as given, or
 * T * R(normalised) * S, multiplied down from the default scene's roots.
 * Written apart from the codec's glTF reader: cJSON walked by index, parents from children.
 */
static int ref_worlds(const char *json, mat4 **worlds, ref_node **out)
{
	cJSON *root = cJSON_Parse(json);
	cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
	cJSON *scenes = cJSON_GetObjectItemCaseSensitive(root, "scenes");
	cJSON *def = cJSON_GetObjectItemCaseSensitive(root, "scene");
	cJSON *roots = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(scenes, def ? def->valueint : 0), "nodes");
	int n = cJSON_GetArraySize(nodes);
	ref_node *r = calloc((size_t)n, sizeof(ref_node));
	mat4 *w = calloc((size_t)n, sizeof(mat4));
	int *order = malloc(sizeof(int) * (size_t)n), n_order = 0;

	assert_non_null(root);
	assert_true(r && w && order);
	for (int i = 0; i < n; i++)
		r[i].parent = -1;
	for (int i = 0; i < n; i++) {
		cJSON *node = cJSON_GetArrayItem(nodes, i);
		cJSON *m = cJSON_GetObjectItemCaseSensitive(node, "matrix");
		cJSON *t = cJSON_GetObjectItemCaseSensitive(node, "translation");
		cJSON *q = cJSON_GetObjectItemCaseSensitive(node, "rotation");
		cJSON *sc = cJSON_GetObjectItemCaseSensitive(node, "scale");
		cJSON *kids = cJSON_GetObjectItemCaseSensitive(node, "children");

		r[i].local = mat4_identity();
		if (m) {
			for (int k = 0; k < 16; k++)
				r[i].local.m[k] = cJSON_GetArrayItem(m, k)->valuedouble;
			r[i].from_matrix = true;
		} else {
			vec3 tv = vec3_make(0, 0, 0), sv = vec3_make(1, 1, 1);
			quat qv = quat_identity();

			if (t)
				tv = vec3_make(cJSON_GetArrayItem(t, 0)->valuedouble,
					       cJSON_GetArrayItem(t, 1)->valuedouble,
					       cJSON_GetArrayItem(t, 2)->valuedouble);
			if (q) {
				qv = (quat){ cJSON_GetArrayItem(q, 0)->valuedouble,
					     cJSON_GetArrayItem(q, 1)->valuedouble,
					     cJSON_GetArrayItem(q, 2)->valuedouble,
					     cJSON_GetArrayItem(q, 3)->valuedouble };
				assert_int_equal(quat_normalize(qv, &qv), 0);
			}
			if (sc)
				sv = vec3_make(cJSON_GetArrayItem(sc, 0)->valuedouble,
					       cJSON_GetArrayItem(sc, 1)->valuedouble,
					       cJSON_GetArrayItem(sc, 2)->valuedouble);
			r[i].local = mat4_mul(mat4_translation(tv),
					      mat4_mul(mat4_from_quat(qv), mat4_scaling(sv)));
		}
		for (int k = 0; k < cJSON_GetArraySize(kids); k++)
			r[cJSON_GetArrayItem(kids, k)->valueint].parent = i;
	}
	/* Breadth-first from the roots: parents before children. */
	for (int k = 0; k < cJSON_GetArraySize(roots); k++) {
		int i = cJSON_GetArrayItem(roots, k)->valueint;

		w[i] = r[i].local;
		r[i].reached = true;
		order[n_order++] = i;
	}
	for (int head = 0; head < n_order; head++) {
		cJSON *kids = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, order[head]),
								"children");

		for (int k = 0; k < cJSON_GetArraySize(kids); k++) {
			int i = cJSON_GetArrayItem(kids, k)->valueint;

			w[i] = mat4_mul(w[order[head]], r[i].local);
			r[i].reached = true;
			order[n_order++] = i;
		}
	}
	free(order);
	cJSON_Delete(root);
	*worlds = w;
	*out = r;
	return n;
}

/* ---------- import: the samples ---------- */

static const struct sample {
	const char *file;
	int nodes, roots, max_depth, matrix_nodes;
} samples[] = {
	/* From the README's table. */
	{ "RiggedSimple.gltf", 5, 1, 3, 1 },
	{ "SimpleSkin.gltf", 3, 2, 1, 0 },
	{ "RiggedFigure.gltf", 22, 1, 7, 1 },
	{ "CesiumMan.gltf", 22, 1, 7, 1 },
	{ "Fox.gltf", 26, 1, 8, 0 },
	{ "NegativeScaleTest.gltf", 14, 8, 1, 0 },
	{ "OrientationTest.gltf", 13, 13, 0, 3 },
};

static void test_samples(void **state)
{
	for (size_t k = 0; k < sizeof(samples) / sizeof(samples[0]); k++) {
		char path[512];
		size_t len;
		char *json;
		gltf_report r;
		scene *s;
		mat4 *ref;
		ref_node *rn;
		int n, max_depth = 0, neg_local = 0, neg_world = 0;

		snprintf(path, sizeof(path), "%s%s", SAMPLES, samples[k].file);
		json = read_file(path, &len);
		s = import_new(json, len, NULL, &r);
		n = ref_worlds(json, &ref, &rn);

		assert_int_equal(r.n_nodes, n);
		assert_int_equal(r.n_created, samples[k].nodes);
		assert_int_equal(scene_count(s), samples[k].nodes);
		assert_int_equal(r.n_roots, samples[k].roots);
		assert_int_equal(scene_child_count(s, -1), samples[k].roots);
		assert_int_equal(r.n_matrix, samples[k].matrix_nodes);
		assert_int_equal(r.n_inexact, 0);
		assert_true(r.max_matrix_err < 1e-12);
		assert_int_equal(r.scene_index, 0);
		for (int i = 0; i < n; i++) {
			const gltf_node_info *info = &r.nodes[i];
			int node;

			assert_int_equal(info->role, rn[i].reached ? GLTF_NODE_PLAIN : GLTF_NODE_SKIPPED);
			if (!rn[i].reached)
				continue;
			node = scene_find(s, info->id);
			assert_true(node >= 0);
			assert_int_equal(info->from_matrix, rn[i].from_matrix);
			if (rel_diff(scene_world(s, node), ref[i]) > 1e-9)
				fail_msg("%s node %d: world differs by %g", samples[k].file, i,
					 rel_diff(scene_world(s, node), ref[i]));
			/* The tree is the file's. */
			if (rn[i].parent < 0)
				assert_int_equal(scene_parent(s, node), -1);
			else
				assert_string_equal(scene_id(s, scene_parent(s, node)),
						    r.nodes[rn[i].parent].id);
			if (scene_depth(s, node) > max_depth)
				max_depth = scene_depth(s, node);
			neg_local += mat4_det3(scene_local(s, node)) < 0;
			neg_world += scene_det(s, node) < 0;
		}
		assert_int_equal(max_depth, samples[k].max_depth);
		if (strcmp(samples[k].file, "NegativeScaleTest.gltf") == 0) {
			/* README: 6 nodes with local det < 0, 6 with world det < 0. */
			assert_int_equal(neg_local, 6);
			assert_int_equal(neg_world, 6);
		}
		free(ref);
		free(rn);
		free(json);
		gltf_report_release(&r);
		scene_free(s);
	}
	(void)state;
}

/* Ids, names, mesh references and skins of particular samples. */
static void test_sample_details(void **state)
{
	size_t len;
	char *json = read_file(SAMPLES "OrientationTest.gltf", &len);
	gltf_report r;
	scene *s = import_new(json, len, NULL, &r);
	node_props p;
	int n = scene_find(s, "ArrowX2");

	/* Named nodes keep their names as ids; the scene's roots keep the
	 * scene's order (5, 12, 10, ...). */
	assert_true(n >= 0);
	assert_string_equal(scene_id(s, scene_child_at(s, -1, 0)), "ArrowZ2");
	assert_string_equal(scene_id(s, scene_child_at(s, -1, 1)), "TargetZ2");
	scene_props(s, n, &p);
	assert_string_equal(p.name, "ArrowX2");
	assert_string_equal(p.mesh, "ArrowMeshX2");
	assert_int_equal(p.kind, NODE_MESH);
	assert_string_equal(r.scene_name, "Scene");
	for (int i = 0; i < r.n_nodes; i++)
		if (r.nodes[i].from_matrix)
			assert_true(r.nodes[i].matrix_exact);
	gltf_report_release(&r);
	scene_free(s);
	free(json);

	/* Unnamed nodes get ids from their indices; skins go to the report. */
	json = read_file(SAMPLES "RiggedSimple.gltf", &len);
	s = import_new(json, len, NULL, &r);
	assert_string_equal(r.nodes[0].id, "node_0");
	assert_string_equal(r.nodes[2].id, "node_2");
	scene_props(s, scene_find(s, "node_1"), &p);
	assert_string_equal(p.mesh, "Cylinder");
	assert_null(p.name);
	assert_int_equal(r.nodes[1].skin, 0);
	assert_int_equal(r.n_skins, 1);
	assert_string_equal(r.skins[0].name, "Armature");
	assert_int_equal(r.skins[0].skeleton, 2);
	assert_int_equal(r.skins[0].n_joints, 2);
	assert_int_equal(r.skins[0].joints[0], 2);
	assert_int_equal(r.skins[0].joints[1], 3);
	{
		char *rj = NULL;
		cJSON *doc, *skin;

		assert_int_equal(gltf_report_json(&r, &rj, NULL), 0);
		doc = cJSON_Parse(rj);
		assert_non_null(doc);
		assert_int_equal(cJSON_GetObjectItem(doc, "created")->valueint, 5);
		assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "ids"), 4)->valuestring,
				    "node_4");
		skin = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "skins"), 0);
		assert_string_equal(cJSON_GetObjectItem(skin, "skeleton")->valuestring, "node_2");
		assert_string_equal(
			cJSON_GetArrayItem(cJSON_GetObjectItem(skin, "joints"), 1)->valuestring, "node_3");
		assert_string_equal(
			cJSON_GetArrayItem(cJSON_GetObjectItem(skin, "used_by"), 0)->valuestring,
			"node_1");
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
			cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "matrix_nodes"), 0), "exact")));
		cJSON_Delete(doc);
		free(rj);
	}
	gltf_report_release(&r);
	scene_free(s);
	free(json);
	(void)state;
}

/* ---------- import: malformed input ---------- */

static void test_malformed_fixtures(void **state)
{
	FILE *f = fopen(MALFORMED "expect.txt", "r");
	char line[256];
	int count = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char file[128], code[64], kind[16], path[512];
		int bad_node;
		size_t len;
		char *data;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		assert_int_equal(sscanf(line, "%127s %63s %d %15s", file, code, &bad_node, kind), 4);
		snprintf(path, sizeof(path), "%s%s", MALFORMED, file);
		data = read_file(path, &len);
		assert_true(err_from_code(code) != 0);
		import_refused(data, len, NULL, err_from_code(code), bad_node);
		free(data);
		count++;
	}
	fclose(f);
	assert_true(count >= 30);
	(void)state;
}

#define DOC_HEAD "{\"asset\":{\"version\":\"2.0\"},"

static void test_malformed_more(void **state)
{
	gltf_import_opts o = gltf_import_opts_default();

	refused("", RIGD_E_BAD_JSON, -1);
	refused("   ", RIGD_E_BAD_JSON, -1);
	refused(DOC_HEAD "\"nodes\":[]} trailing", RIGD_E_BAD_JSON, -1);
	refused(DOC_HEAD "\"nodes\":{}}", RIGD_E_BAD_GLTF, -1);
	refused("{\"asset\":{\"version\":2}}", RIGD_E_BAD_GLTF, -1);
	refused("{\"asset\":{\"version\":\"2.0\",\"minVersion\":\"2.1\"}}", RIGD_E_BAD_GLTF, -1);
	refused("{\"asset\":{\"version\":\"3.0\"}}", RIGD_E_BAD_GLTF, -1);
	refused("{\"asset\":{\"version\":\"2.0x\"}}", RIGD_E_BAD_GLTF, -1);
	/* Duplicate keys anywhere, even deep in extras. */
	refused(DOC_HEAD "\"nodes\":[{\"extras\":{\"a\":[{\"k\":1,\"k\":2}]}}]}", RIGD_E_BAD_GLTF, -1);
	/* Each field of a node, wrongly typed. */
	refused(DOC_HEAD "\"nodes\":[{\"name\":\"a\",\"rotation\":null}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"scale\":[1,1,\"1\"]}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"matrix\":{}}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"camera\":0}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"skin\":1.5}],\"skins\":[{\"joints\":[0]}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{},{\"mesh\":1e300}],\"meshes\":[{}]}", RIGD_E_BAD_GLTF, 1);
	refused(DOC_HEAD "\"nodes\":[{\"rotation\":[0,0,0,1e-13]}]}", RIGD_E_ZERO_QUATERNION, 0);
	refused(DOC_HEAD "\"nodes\":[{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,1e999,1]}]}",
		RIGD_E_NOT_FINITE, 0);
	/* Meshes, cameras, skins and scenes: their own shapes. */
	refused(DOC_HEAD "\"meshes\":[{\"name\":7}]}", RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"meshes\":[3]}", RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"nodes\":[{\"camera\":0}],\"cameras\":[{\"type\":\"fisheye\"}]}",
		RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"camera\":0}],\"cameras\":[{\"type\":\"perspective\","
			 "\"perspective\":{\"yfov\":0.5}}]}",
		RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"camera\":0}],\"cameras\":[{\"type\":\"perspective\","
			 "\"perspective\":{\"yfov\":0.5,\"znear\":1,\"zfar\":0.5}}]}",
		RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"camera\":0}],\"cameras\":[{\"type\":\"perspective\","
			 "\"perspective\":{\"yfov\":3.2,\"znear\":1}}]}",
		RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"cameras\":[{\"type\":\"orthographic\",\"orthographic\":"
			 "{\"xmag\":1,\"ymag\":1,\"znear\":2,\"zfar\":1}}]}",
		RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"nodes\":[{}],\"skins\":[{\"joints\":[]}]}", RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"nodes\":[{}],\"skins\":[{\"joints\":[0],\"skeleton\":4}]}", RIGD_E_BAD_GLTF,
		-1);
	refused(DOC_HEAD "\"nodes\":[{}],\"scenes\":[{\"nodes\":[0]},{\"nodes\":[2]}]}",
		RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"nodes\":[{}],\"scenes\":[{\"nodes\":0}]}", RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"nodes\":[{}],\"scenes\":[{\"name\":1}]}", RIGD_E_BAD_GLTF, -1);
	refused(DOC_HEAD "\"scene\":0,\"nodes\":[{}]}", RIGD_E_BAD_GLTF, -1);
	/* extras.rigd is ours: malformed, it is refused. */
	refused(DOC_HEAD "\"nodes\":[{\"extras\":{\"rigd\":[]}}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"extras\":{\"rigd\":{\"kind\":\"light\"}}}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"extras\":{\"rigd\":{\"visible\":0}}}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"extras\":{\"rigd\":{\"fov\":190}}}]}", RIGD_E_BAD_GLTF, 0);
	refused(DOC_HEAD "\"nodes\":[{\"extras\":{\"rigd\":{\"t\":[0,0,1e400]}}}]}", RIGD_E_NOT_FINITE,
		0);
	/* A NUL inside the text. */
	import_refused(DOC_HEAD "\"nodes\":[]}\0", sizeof(DOC_HEAD "\"nodes\":[]}"), NULL,
		       RIGD_E_BAD_JSON, -1);
	/* Bad options. */
	o.parent = "not an id";
	import_refused(DOC_HEAD "\"nodes\":[]}", strlen(DOC_HEAD "\"nodes\":[]}"), &o, RIGD_E_BAD_ID,
		       -1);
	o = gltf_import_opts_default();
	o.scene_index = 2;
	import_refused(DOC_HEAD "\"scenes\":[{}]}", strlen(DOC_HEAD "\"scenes\":[{}]}"), &o,
		       RIGD_E_NOT_FOUND, -1);
	o = gltf_import_opts_default();
	o.scene_name = "nope";
	import_refused(DOC_HEAD "\"scenes\":[{\"name\":\"yes\"}]}",
		       strlen(DOC_HEAD "\"scenes\":[{\"name\":\"yes\"}]}"), &o, RIGD_E_NOT_FOUND, -1);
	(void)state;
}

/* Every prefix and many byte mutations of a real file: refused or imported,
 * never a crash, leak or sanitizer report, and never half a batch. */
static void test_mutations(void **state)
{
	size_t len;
	char *json = read_file(SAMPLES "RiggedFigure.gltf", &len);
	char *copy = malloc(len);
	uint32_t rng = 12345;
	int ok = 0, bad = 0;

	assert_non_null(copy);
	for (size_t cut = 0; cut < len; cut += 7) {
		edit_batch b;
		gltf_report r;
		int rc = gltf_import(json, cut, NULL, &b, &r, NULL);

		assert_true(rc != 0 || b.n_ops == r.n_created);
		if (rc)
			assert_int_equal(b.n_ops, 0);
		edit_batch_release(&b);
		gltf_report_release(&r);
	}
	for (int round = 0; round < 3000; round++) {
		edit_batch b;
		gltf_report r;
		int rc;

		memcpy(copy, json, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			rng = rng * 1664525u + 1013904223u;
			size_t at = (rng >> 8) % len;
			rng = rng * 1664525u + 1013904223u;
			/* Mostly characters that keep JSON plausible. */
			copy[at] = "0123456789[]{},:-.e\" "[(rng >> 8) % 21];
		}
		rc = gltf_import(copy, len, NULL, &b, &r, NULL);
		if (rc == 0) {
			scene *s = apply_new(&b);

			assert_int_equal(scene_count(s), r.n_created);
			scene_free(s);
			ok++;
		} else {
			assert_int_equal(b.n_ops, 0);
			bad++;
		}
		edit_batch_release(&b);
		gltf_report_release(&r);
	}
	assert_true(ok > 0 && bad > 0);
	free(copy);
	free(json);
	(void)state;
}

/* ---------- import: GLB ---------- */

static void put32(unsigned char *p, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		p[k] = (unsigned char)(v >> (8 * k));
}

/* A GLB with 'json' padded by spaces and a 16-byte BIN chunk. */
static unsigned char *make_glb(const char *json, size_t *out_len)
{
	size_t jl = strlen(json), jpad = (jl + 3) / 4 * 4, total = 12 + 8 + jpad + 8 + 16;
	unsigned char *g = calloc(1, total);

	assert_non_null(g);
	memcpy(g, "glTF", 4);
	put32(g + 4, 2);
	put32(g + 8, (uint32_t)total);
	put32(g + 12, (uint32_t)jpad);
	memcpy(g + 16, "JSON", 4);
	memcpy(g + 20, json, jl);
	memset(g + 20 + jl, ' ', jpad - jl);
	put32(g + 20 + jpad, 16);
	memcpy(g + 24 + jpad, "BIN\0", 4);
	*out_len = total;
	return g;
}

static void test_glb(void **state)
{
	size_t len, glen;
	char *json = read_file(SAMPLES "CesiumMan.gltf", &len);
	unsigned char *g = make_glb(json, &glen), *bad = malloc(glen + 8);
	scene *a = import_new(json, len, NULL, NULL);
	scene *b = import_new((const char *)g, glen, NULL, NULL);
	size_t jpad = (len + 3) / 4 * 4;

	/* The same scene either way. */
	assert_same_scene(a, b, 0);
	assert_non_null(bad);

	/* Header and chunk errors, each on its own. */
	import_refused((const char *)g, 11, NULL, RIGD_E_BAD_GLTF, -1);
	memcpy(bad, g, glen);
	put32(bad + 4, 1);
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_GLTF, -1);
	memcpy(bad, g, glen);
	put32(bad + 8, (uint32_t)glen + 4);
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_GLTF, -1);
	memcpy(bad, g, glen);
	put32(bad + 12, (uint32_t)jpad + 2);
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_GLTF, -1);
	memcpy(bad, g, glen);
	put32(bad + 12, (uint32_t)glen);
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_GLTF, -1);
	memcpy(bad, g, glen);
	memcpy(bad + 16, "BIN\0", 4);
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_GLTF, -1);
	memcpy(bad, g, glen);
	memcpy(bad + 24 + jpad, "JSON", 4);
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_GLTF, -1);
	/* A header promising a chunk that is not there. */
	memcpy(bad, g, 20 + jpad);
	put32(bad + 8, (uint32_t)(20 + jpad + 4));
	memset(bad + 20 + jpad, 0, 4);
	import_refused((const char *)bad, 20 + jpad + 4, NULL, RIGD_E_BAD_GLTF, -1);
	/* Bad JSON inside a good container is bad_json. */
	memcpy(bad, g, glen);
	bad[20] = '[';
	import_refused((const char *)bad, glen, NULL, RIGD_E_BAD_JSON, -1);

	free(bad);
	free(g);
	free(json);
	scene_free(a);
	scene_free(b);
	(void)state;
}

/* ---------- import: matrices ---------- */

static char *matrix_doc(const double *m)
{
	char *doc = malloc(1024);
	int n;

	assert_non_null(doc);
	n = snprintf(doc, 1024, DOC_HEAD "\"nodes\":[{\"name\":\"m\",\"matrix\":[");
	for (int i = 0; i < 16; i++)
		n += snprintf(doc + n, (size_t)(1024 - n), "%s%.17g", i ? "," : "", m[i]);
	snprintf(doc + n, (size_t)(1024 - n), "]}]}");
	return doc;
}

static void test_matrices(void **state)
{
	const double deg = M_PI / 180;
	/* docs/transforms.md 9.2: S(2,1,1) Rz(45) reads back as Rz(26.6)
	 * S(1.581, 1.581) and misses by 0.707. */
	mat4 sheared = mat4_mul(mat4_scaling(vec3_make(2, 1, 1)),
				mat4_rotation_axis(vec3_make(0, 0, 1), 45 * deg));
	char *doc = matrix_doc(sheared.m);
	gltf_import_opts o = gltf_import_opts_default();
	gltf_report r;
	scene *s;
	node_props p;
	char *rj;

	refused(doc, RIGD_E_NOT_TRS, 0);
	o.nearest_trs = true;
	s = import_new(doc, strlen(doc), &o, &r);
	scene_props(s, scene_find(s, "m"), &p);
	assert_float_equal(p.s.x, 1.581, 1e-3);
	assert_float_equal(p.s.y, 1.581, 1e-3);
	assert_float_equal(p.s.z, 1, 1e-12);
	assert_float_equal(2 * atan2(p.r.z, p.r.w) / deg, 26.565, 1e-3);
	assert_int_equal(r.n_inexact, 1);
	assert_float_equal(r.nodes[0].matrix_err, 0.707, 1e-3);
	assert_false(r.nodes[0].matrix_exact);
	assert_float_equal(r.max_matrix_err, 0.707, 1e-3);
	assert_int_equal(r.n_warnings, 1);
	assert_non_null(strstr(r.warnings[0], "nearest TRS"));
	assert_int_equal(gltf_report_json(&r, &rj, NULL), 0);
	assert_non_null(strstr(rj, "\"exact\":false"));
	free(rj);
	gltf_report_release(&r);
	scene_free(s);
	free(doc);

	/* A mirror with translation: exact, the negative determinant carried
	 * by the scale; a zero scale: exact too. */
	{
		mat4 cases[2];

		cases[0] = mat4_compose(vec3_make(1, -2, 3), quat_from_euler_deg(vec3_make(10, 70, -20)),
					vec3_make(-1, 2, 0.5));
		cases[1] = mat4_compose(vec3_make(0, 1, 0), quat_from_euler_deg(vec3_make(0, 30, 0)),
					vec3_make(0, 1, 1));
		for (int k = 0; k < 2; k++) {
			doc = matrix_doc(cases[k].m);
			s = import_new(doc, strlen(doc), NULL, &r);
			assert_true(rel_diff(scene_world(s, scene_find(s, "m")), cases[k]) < 1e-12);
			assert_true(r.nodes[0].matrix_exact);
			gltf_report_release(&r);
			scene_free(s);
			free(doc);
		}
	}

	/* float32 noise (2e-8) passes the default tolerance and fails a
	 * tight one. */
	{
		mat4 m = mat4_compose(vec3_make(0, 0, 0), quat_from_euler_deg(vec3_make(0, 0, 30)),
				      vec3_make(1, 1, 1));

		m.m[1] += 2e-8;
		doc = matrix_doc(m.m);
		s = import_new(doc, strlen(doc), NULL, NULL);
		scene_free(s);
		o = gltf_import_opts_default();
		o.matrix_tol = 1e-12;
		import_refused(doc, strlen(doc), &o, RIGD_E_NOT_TRS, 0);
		free(doc);
	}
	(void)state;
}

/* ---------- import: ids, meshes, scenes, cameras ---------- */

static void test_ids(void **state)
{
	const char *doc = DOC_HEAD
		"\"nodes\":["
		"{\"name\":\"bone\",\"children\":[1,2,3,4,5,6,7]},"
		"{\"name\":\"bone\"},"
		"{\"name\":\"bone-2\"},"
		"{\"name\":\"left arm (L)\"},"
		"{\"name\":\"\xe6\x97\xa5\xe6\x9c\xac\"},"
		"{},"
		"{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},"
		"{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\"}"
		"]}";
	static const char *const want[8] = {
		"bone", "bone-2", "bone-2-2", "left_arm_L_", "node_4", "node_5",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-2",
	};
	gltf_import_opts o = gltf_import_opts_default();
	edit_batch b;
	gltf_report r;
	scene *s;
	node_props p;

	s = import_new(doc, strlen(doc), NULL, &r);
	for (int i = 0; i < 8; i++) {
		assert_string_equal(r.nodes[i].id, want[i]);
		assert_true(scene_find(s, want[i]) >= 0);
	}
	/* Names are kept as they were. */
	scene_props(s, scene_find(s, "node_4"), &p);
	assert_string_equal(p.name, "\xe6\x97\xa5\xe6\x9c\xac");
	scene_props(s, scene_find(s, "node_5"), &p);
	assert_null(p.name);
	gltf_report_release(&r);

	/* Into the same scene again, under "bone": every id avoids the
	 * scene's. */
	o.existing = s;
	o.parent = "bone";
	import_ok(doc, strlen(doc), &o, &b, &r);
	assert_string_equal(b.ops[0].parent, "bone");
	assert_string_equal(r.nodes[0].id, "bone-3");
	assert_string_equal(r.nodes[1].id, "bone-4");
	assert_string_equal(r.nodes[4].id, "node_4-2");
	assert_int_equal(edit_apply(s, &b, NULL, NULL, NULL), 0);
	assert_int_equal(scene_count(s), 16);
	assert_string_equal(scene_id(s, scene_parent(s, scene_find(s, "bone-3"))), "bone");
	edit_batch_release(&b);
	gltf_report_release(&r);
	scene_free(s);
	(void)state;
}

static void test_meshes(void **state)
{
	const char *doc = DOC_HEAD
		"\"nodes\":[{\"mesh\":0},{\"mesh\":1},{\"mesh\":2},{\"mesh\":3},{\"mesh\":4},{\"mesh\":0},"
		"{\"mesh\":0}],"
		"\"meshes\":[{\"name\":\"Wheel\"},{\"name\":\"Wheel\"},{},{\"name\":\"mesh:4\"},{}]}";
	/* A repeated name, no name, and a name that is another mesh's
	 * fallback; mesh 0 shared by three nodes (instancing). */
	static const char *const want[7] = { "Wheel", "mesh:1", "mesh:2", "mesh:4", "mesh:4-2", "Wheel",
					     "Wheel" };
	gltf_report r;
	scene *s = import_new(doc, strlen(doc), NULL, &r);

	/* No scenes: every parentless node, in index order. */
	assert_int_equal(r.scene_index, -1);
	assert_int_equal(scene_count(s), 7);
	for (int i = 0; i < 7; i++) {
		node_props p;

		scene_props(s, scene_find(s, r.nodes[i].id), &p);
		assert_string_equal(p.mesh, want[i]);
		assert_int_equal(p.kind, NODE_MESH);
		assert_int_equal(r.nodes[i].mesh, i < 5 ? i : 0);
	}
	gltf_report_release(&r);
	scene_free(s);
	(void)state;
}

static void test_scenes(void **state)
{
	const char *doc = DOC_HEAD "\"scene\":1,"
		"\"scenes\":[{\"name\":\"A\",\"nodes\":[0,2]},{\"name\":\"B\",\"nodes\":[1,2]}],"
		"\"nodes\":[{\"name\":\"a\"},{\"name\":\"b\",\"children\":[3]},{\"name\":\"shared\"},"
		"{\"name\":\"b_child\"}]}";
	gltf_import_opts o = gltf_import_opts_default();
	gltf_report r;
	scene *s;

	s = import_new(doc, strlen(doc), NULL, &r);
	assert_int_equal(r.scene_index, 1);
	assert_string_equal(r.scene_name, "B");
	assert_int_equal(scene_count(s), 3);
	assert_int_equal(r.nodes[0].role, GLTF_NODE_SKIPPED);
	assert_string_equal(r.nodes[0].id, "");
	assert_true(scene_find(s, "b_child") >= 0);
	gltf_report_release(&r);
	scene_free(s);

	o.scene_index = 0;
	s = import_new(doc, strlen(doc), &o, &r);
	assert_int_equal(r.scene_index, 0);
	assert_int_equal(scene_count(s), 2);
	assert_string_equal(scene_id(s, scene_child_at(s, -1, 1)), "shared");
	gltf_report_release(&r);
	scene_free(s);

	o = gltf_import_opts_default();
	o.scene_name = "A";
	s = import_new(doc, strlen(doc), &o, &r);
	assert_int_equal(r.scene_index, 0);
	gltf_report_release(&r);
	scene_free(s);
	(void)state;
}

static void test_cameras(void **state)
{
	const char *doc = DOC_HEAD
		"\"nodes\":[{\"name\":\"c\",\"camera\":0},{\"name\":\"inf\",\"camera\":1},"
		"{\"name\":\"ortho\",\"camera\":2},{\"name\":\"both\",\"camera\":0,\"mesh\":0}],"
		"\"meshes\":[{\"name\":\"lens\"}],"
		"\"cameras\":[{\"type\":\"perspective\",\"perspective\":{\"yfov\":0.8,\"znear\":0.1,"
		"\"zfar\":100,\"aspectRatio\":1.5}},"
		"{\"type\":\"perspective\",\"perspective\":{\"yfov\":1,\"znear\":2}},"
		"{\"type\":\"orthographic\",\"orthographic\":{\"xmag\":1,\"ymag\":1,\"znear\":0,"
		"\"zfar\":10}}]}";
	gltf_report r;
	scene *s = import_new(doc, strlen(doc), NULL, &r);
	node_props p, def = node_props_default();

	scene_props(s, scene_find(s, "c"), &p);
	assert_int_equal(p.kind, NODE_CAMERA);
	assert_float_equal(p.fov_deg, 0.8 * 180 / M_PI, 1e-12);
	assert_true(p.znear == 0.1 && p.zfar == 100);
	scene_props(s, scene_find(s, "inf"), &p);
	assert_true(p.znear == 2 && p.zfar == 2000);
	scene_props(s, scene_find(s, "ortho"), &p);
	assert_int_equal(p.kind, NODE_CAMERA);
	assert_true(p.fov_deg == def.fov_deg && p.znear == def.znear && p.zfar == def.zfar);
	scene_props(s, scene_find(s, "both"), &p);
	assert_int_equal(p.kind, NODE_CAMERA);
	assert_string_equal(p.mesh, "lens");
	assert_int_equal(r.n_warnings, 2);
	assert_non_null(strstr(r.warnings[0], "infinite"));
	assert_non_null(strstr(r.warnings[1], "orthographic"));
	gltf_report_release(&r);
	scene_free(s);
	(void)state;
}

/* ---------- import: limits and depth ---------- */

/* A chain 0 -> 1 -> ... -> n-1, or a cycle 1 -> 2 -> ... -> n-1 -> 1 with
 * node 0 a root of its own. */
static char *chain_doc(int n, bool cycle)
{
	size_t cap = 64 + (size_t)n * 32, len;
	char *doc = malloc(cap);

	assert_non_null(doc);
	len = (size_t)snprintf(doc, cap, DOC_HEAD "\"nodes\":[");
	for (int i = 0; i < n; i++) {
		int kid = cycle ? (i == 0 ? -1 : (i == n - 1 ? 1 : i + 1)) : (i + 1 < n ? i + 1 : -1);

		if (kid >= 0)
			len += (size_t)snprintf(doc + len, cap - len, "%s{\"children\":[%d]}", i ? "," : "",
						kid);
		else
			len += (size_t)snprintf(doc + len, cap - len, "%s{}", i ? "," : "");
	}
	snprintf(doc + len, cap - len, "]}");
	return doc;
}

static void test_limits(void **state)
{
	gltf_import_opts o = gltf_import_opts_default();
	char *doc;
	edit_batch b;
	gltf_report r;

	/* Too many nodes, with the default limit and a configured one. */
	doc = chain_doc(GLTF_DEFAULT_MAX_NODES + 1, true);
	refused(doc, RIGD_E_LIMIT, -1);
	free(doc);
	doc = chain_doc(50, false);
	o.max_nodes = 49;
	import_refused(doc, strlen(doc), &o, RIGD_E_LIMIT, -1);
	o.max_nodes = 50;
	o.max_depth = 48;
	/* Node 49 sits 49 levels below the root. */
	import_refused(doc, strlen(doc), &o, RIGD_E_LIMIT, 49);
	o.max_depth = 49;
	import_ok(doc, strlen(doc), &o, &b, &r);
	edit_batch_release(&b);
	gltf_report_release(&r);
	free(doc);

	/* The default depth limit, on a deep chain. */
	doc = chain_doc(5000, false);
	refused(doc, RIGD_E_LIMIT, GLTF_DEFAULT_MAX_DEPTH + 1);
	/* With a higher limit the whole chain imports in preorder, each node
	 * under the one before: nothing recursed. */
	o = gltf_import_opts_default();
	o.max_depth = 10000;
	import_ok(doc, strlen(doc), &o, &b, &r);
	assert_int_equal(b.n_ops, 5000);
	assert_string_equal(b.ops[4999].parent, "node_4998");
	{
		scene *s = apply_new(&b);

		assert_int_equal(scene_depth(s, scene_find(s, "node_4999")), 4999);
		scene_free(s);
	}
	edit_batch_release(&b);
	gltf_report_release(&r);
	free(doc);

	/* The longest cycle the node limit allows. */
	doc = chain_doc(GLTF_DEFAULT_MAX_NODES, true);
	refused(doc, RIGD_E_CYCLE, 1);
	free(doc);
	(void)state;
}

/* ---------- export ---------- */

static const cJSON *node_named(const cJSON *nodes, const char *name)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, nodes)
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(n, "name");

		if (cJSON_IsString(v) && strcmp(v->valuestring, name) == 0)
			return n;
	}
	fail_msg("no node named %s", name);
	return NULL;
}

static void assert_array(const cJSON *a, const double *want, int n, double tol)
{
	assert_int_equal(cJSON_GetArraySize(a), n);
	for (int i = 0; i < n; i++)
		assert_float_equal(cJSON_GetArrayItem(a, i)->valuedouble, want[i], tol);
}

/* The demo rig reads like section 14: base with the yaw quaternion, a
 * joint node with T(0, 0.2, 0) and the bend, the arm with T(0, 0.7, 0) and
 * the mesh, the hand with T(0, 0.7, 0). */
static void test_demo_export(void **state)
{
	scene *s = scene_new(), *back;
	char *json = NULL;
	cJSON *doc, *nodes;
	const cJSON *base, *joint, *arm, *hand;
	gltf_report r;
	size_t len;

	assert_int_equal(demo_rig_build(s, false), 0);
	json = export_str(s, &len);
	doc = cJSON_Parse(json);
	assert_non_null(doc);
	nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
	assert_int_equal(cJSON_GetArraySize(nodes), 4);
	base = node_named(nodes, "base");
	joint = node_named(nodes, "arm");
	arm = node_named(nodes, "arm.pivot");
	hand = node_named(nodes, "hand");
	assert_array(cJSON_GetObjectItem(base, "translation"), (double[]){ 0, 0.2, 0 }, 3, 0);
	assert_array(cJSON_GetObjectItem(base, "rotation"), (double[]){ 0, 0.2588, 0, 0.9659 }, 4, 5e-5);
	assert_array(cJSON_GetObjectItem(joint, "translation"), (double[]){ 0, 0.2, 0 }, 3, 1e-15);
	assert_array(cJSON_GetObjectItem(joint, "rotation"), (double[]){ 0, 0, 0.3420, 0.9397 }, 4,
		     5e-5);
	assert_null(cJSON_GetObjectItem(joint, "mesh"));
	assert_array(cJSON_GetObjectItem(arm, "translation"), (double[]){ 0, 0.7, 0 }, 3, 0);
	assert_null(cJSON_GetObjectItem(arm, "rotation"));
	assert_non_null(cJSON_GetObjectItem(arm, "mesh"));
	assert_array(cJSON_GetObjectItem(hand, "translation"), (double[]){ 0, 0.7, 0 }, 3, 0);
	/* The chain as children: base -> joint -> arm -> hand. */
	assert_array(cJSON_GetObjectItem(base, "children"), (double[]){ 1 }, 1, 0);
	assert_array(cJSON_GetObjectItem(joint, "children"), (double[]){ 2 }, 1, 0);
	assert_array(cJSON_GetObjectItem(arm, "children"), (double[]){ 3 }, 1, 0);
	/* Meshes are unit boxes, each named by its reference. */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "meshes"),
								   cJSON_GetObjectItem(arm, "mesh")->valueint),
						"name")->valuestring,
			    "arm_mesh");
	cJSON_Delete(doc);

	/* Back in: the pair folds into one node with its pivot, every stored
	 * value and world matrix as before; the hand at the position of docs/transforms.md 4.1. */
	back = import_new(json, len, NULL, &r);
	assert_int_equal(r.n_pivots, 1);
	assert_int_equal(r.nodes[1].role, GLTF_NODE_PIVOT_OUTER);
	assert_int_equal(r.nodes[2].role, GLTF_NODE_PIVOT_INNER);
	assert_string_equal(r.nodes[2].id, "arm");
	assert_same_scene(s, back, 1e-12);
	{
		vec3 hand_pos = mat4_column(scene_world(back, scene_find(back, "hand")), 3);

		assert_float_equal(hand_pos.x, -0.779, 5e-4);
		assert_float_equal(hand_pos.y, 1.472, 5e-4);
		assert_float_equal(hand_pos.z, 0.450, 5e-4);
	}
	gltf_report_release(&r);
	scene_free(back);
	free(json);
	scene_free(s);
	(void)state;
}

/* Export, import, export again: the same scene and the same text. */
static void roundtrip(scene *s)
{
	size_t len, len2;
	char *json = export_str(s, &len), *json2;
	scene *back = import_new(json, len, NULL, NULL);

	assert_same_scene(s, back, 1e-12);
	json2 = export_str(back, &len2);
	assert_int_equal(len, len2);
	assert_string_equal(json, json2);
	free(json);
	free(json2);
	scene_free(back);
}

static void test_roundtrips(void **state)
{
	scene *s = scene_new();

	/* The rich demo: a camera, mirrored and hidden nodes, escapes, odd
	 * numbers, pivots with negative zeros, a zero scale. */
	assert_int_equal(demo_rig_build(s, true), 0);
	roundtrip(s);
	{
		/* The camera on the hand sits where section 10 puts it. */
		vec3 cam = mat4_column(scene_world(s, scene_find(s, "cam")), 3);

		assert_float_equal(cam.x, -0.946, 5e-4);
		assert_float_equal(cam.y, 1.702, 5e-4);
		assert_float_equal(cam.z, 0.546, 5e-4);
	}
	scene_free(s);

	/* An empty scene. */
	s = scene_new();
	roundtrip(s);
	scene_free(s);

	/* Every sample, once imported. */
	for (size_t k = 0; k < sizeof(samples) / sizeof(samples[0]); k++) {
		char path[512];
		size_t len;
		char *json;

		snprintf(path, sizeof(path), "%s%s", SAMPLES, samples[k].file);
		json = read_file(path, &len);
		s = import_new(json, len, NULL, NULL);
		roundtrip(s);
		scene_free(s);
		free(json);
	}
	(void)state;
}

/* A pivot pair changed by another tool imports as two nodes (or folds with
 * t recomputed), and the world matrices stay right either way. */
static void test_edited_pivot_pair(void **state)
{
	scene *s = scene_new(), *back;
	char *json, *at;
	size_t len;
	gltf_report r;

	assert_int_equal(demo_rig_build(s, false), 0);
	update(s);
	json = export_str(s, &len);

	/* Outer translation edited (0.2 -> 0.25): still a pair, t = outer - p. */
	at = strstr(json, "0.20000000000000007");
	assert_non_null(at);
	memcpy(at, "0.25               ", 19);
	back = import_new(json, len, NULL, &r);
	assert_int_equal(r.n_pivots, 1);
	{
		node_props p;

		scene_props(back, scene_find(back, "arm"), &p);
		assert_float_equal(p.t.y, 0.25 + 0.7, 1e-15);
		assert_float_equal(p.pivot.y, -0.7, 0);
	}
	gltf_report_release(&r);
	scene_free(back);
	free(json);

	/* Inner translation edited: two plain nodes, with a warning. */
	json = export_str(s, &len);
	at = strstr(json, "\"arm.pivot\", \"translation\": [0, 0.7, 0]");
	assert_non_null(at);
	at = strstr(at, "0.7");
	memcpy(at, "0.8", 3);
	back = import_new(json, len, NULL, &r);
	assert_int_equal(r.n_pivots, 0);
	assert_int_equal(r.n_created, 4);
	assert_int_equal(r.nodes[2].role, GLTF_NODE_PLAIN);
	assert_string_equal(r.nodes[2].id, "arm.pivot");
	assert_int_equal(r.n_warnings, 1);
	{
		/* The hand moved by exactly the edit: 0.1 along the arm. */
		mat4 before = scene_world(s, scene_find(s, "hand"));
		mat4 after = scene_world(back, scene_find(back, "hand"));
		vec3 d = vec3_sub(mat4_column(after, 3), mat4_column(before, 3));
		vec3 along = mat4_direction(scene_world(s, scene_find(s, "arm")), vec3_make(0, 0.1, 0));

		assert_true(vec3_length(vec3_sub(d, along)) < 1e-12);
	}
	gltf_report_release(&r);
	scene_free(back);
	free(json);
	scene_free(s);
	(void)state;
}

/* Export never changes the scene it reads, and options land in the text. */
static void test_export_options(void **state)
{
	scene *s = scene_new();
	gltf_export_opts o = { .scene_name = "my \"rig\"", .generator = "rigd test" };
	char *json = NULL;
	cJSON *doc;
	uint64_t before;

	assert_int_equal(demo_rig_build(s, true), 0);
	update(s);
	before = scene_hash(s);
	assert_int_equal(gltf_export(s, &o, &json, NULL), 0);
	assert_true(scene_hash(s) == before);
	assert_false(scene_has_dirty(s));
	doc = cJSON_Parse(json);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "asset"), "generator")
				    ->valuestring,
			    "rigd test");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "scenes"), 0),
						"name")
				    ->valuestring,
			    "my \"rig\"");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "asset"), "version")
				    ->valuestring,
			    "2.0");
	cJSON_Delete(doc);
	free(json);
	scene_free(s);
	(void)state;
}

/* Odds and ends of reading: a byte order mark, versions, required
 * extensions, long names, the parent's id, and the warning cap. */
static void test_reading_details(void **state)
{
	gltf_import_opts o = gltf_import_opts_default();
	gltf_report r;
	edit_batch b;
	scene *s;
	char *doc, *rj;
	size_t n;

	/* A BOM is skipped (glTF 2.7 allows readers to); "2.1" is a 2.x. */
	s = import_new("\xEF\xBB\xBF{\"asset\":{\"version\":\"2.1\"},\"nodes\":[{}]}",
		       strlen("\xEF\xBB\xBF{\"asset\":{\"version\":\"2.1\"},\"nodes\":[{}]}"), NULL,
		       NULL);
	assert_int_equal(scene_count(s), 1);
	scene_free(s);
	refused("{\"asset\":{\"version\":\" 2.0\"}}", RIGD_E_BAD_GLTF, -1);
	refused("{\"asset\":{\"version\":\"2.-1\"}}", RIGD_E_BAD_GLTF, -1);
	refused("{\"asset\":{\"version\":\"2\"}}", RIGD_E_BAD_GLTF, -1);

	/* Required extensions are named in the warnings. */
	doc = DOC_HEAD "\"extensionsRequired\":[\"KHR_draco_mesh_compression\"],\"nodes\":[{}]}";
	s = import_new(doc, strlen(doc), NULL, &r);
	assert_int_equal(r.n_warnings, 1);
	assert_non_null(strstr(r.warnings[0], "KHR_draco_mesh_compression"));
	gltf_report_release(&r);
	scene_free(s);

	/* A 300-byte name is cut to 256 bytes at a character boundary. */
	doc = malloc(600);
	assert_non_null(doc);
	n = (size_t)snprintf(doc, 600, DOC_HEAD "\"nodes\":[{\"name\":\"");
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(doc + n, 600 - n, "\xe2\x82\xac"); /* the euro sign, 3 bytes */
	snprintf(doc + n, 600 - n, "\"}]}");
	s = import_new(doc, strlen(doc), NULL, &r);
	{
		node_props p;

		scene_props(s, scene_at(s, 0), &p);
		assert_int_equal(strlen(p.name), 255);
		assert_int_equal(strncmp(p.name, "\xe2\x82\xac", 3), 0);
		assert_int_equal(r.n_warnings, 1);
		assert_string_equal(scene_id(s, scene_at(s, 0)), "node_0");
	}
	gltf_report_release(&r);
	scene_free(s);
	free(doc);

	/* The parent's id is taken even when no scene was given. */
	doc = DOC_HEAD "\"nodes\":[{\"name\":\"rig\"}]}";
	o.parent = "rig";
	import_ok(doc, strlen(doc), &o, &b, &r);
	assert_string_equal(b.ops[0].id, "rig-2");
	assert_string_equal(b.ops[0].parent, "rig");
	edit_batch_release(&b);
	gltf_report_release(&r);

	/* Warnings stop at GLTF_MAX_WARNINGS and count the rest: 40 pivot
	 * claims without their pair. */
	doc = malloc(8192);
	assert_non_null(doc);
	n = (size_t)snprintf(doc, 8192, DOC_HEAD "\"nodes\":[");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(doc + n, 8192 - n,
				      "%s{\"extras\":{\"rigd\":{\"id\":\"p%d\",\"pivot\":[0,1,0]}}}",
				      i ? "," : "", i);
	snprintf(doc + n, 8192 - n, "]}");
	s = import_new(doc, strlen(doc), NULL, &r);
	assert_int_equal(r.n_warnings, GLTF_MAX_WARNINGS);
	assert_int_equal(r.n_warnings_dropped, 40 - GLTF_MAX_WARNINGS);
	assert_int_equal(r.n_pivots, 0);
	assert_true(scene_find(s, "p39") >= 0);
	assert_int_equal(gltf_report_json(&r, &rj, NULL), 0);
	assert_non_null(strstr(rj, "and 8 more warnings"));
	{
		cJSON *j = cJSON_Parse(rj);

		assert_non_null(j);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")),
				 GLTF_MAX_WARNINGS + 1);
		cJSON_Delete(j);
	}
	free(rj);
	gltf_report_release(&r);
	scene_free(s);
	free(doc);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_sample_details),
		cmocka_unit_test(test_malformed_fixtures),
		cmocka_unit_test(test_malformed_more),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_glb),
		cmocka_unit_test(test_matrices),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_meshes),
		cmocka_unit_test(test_scenes),
		cmocka_unit_test(test_cameras),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_demo_export),
		cmocka_unit_test(test_roundtrips),
		cmocka_unit_test(test_edited_pivot_pair),
		cmocka_unit_test(test_export_options),
		cmocka_unit_test(test_reading_details),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
