/*
 * test_gltf_nodes.c: the oracle's glTF node loader refuses what is not a
 * node hierarchy and lists what is in depth-first preorder, so that the
 * oracle test compares the trees it believes it compares.
 *
 * The sample models are read from RIGD_GLTF_SAMPLES (a folder outside the
 * repository, set by CMake); without it the sample case is skipped with a
 * message naming the folder.
 */
#include "gltf_nodes.h"

#include "core/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* Writes 'json' to a fresh temporary file and loads it. */
static int load_text(const char *json, gltf_nodes *out, char *why, size_t why_len)
{
	char path[] = "/tmp/rigd-gltf-nodes-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_true(fputs(json, f) >= 0);
	assert_int_equal(fclose(f), 0);
	rc = gltf_nodes_load(path, out, why, why_len);
	unlink(path);
	return rc;
}

static void test_preorder_and_channels(void **state)
{
	/* Roots in scene order (2 then 0), children in array order. */
	static const char *json =
		"{\"scene\":0,\"scenes\":[{\"nodes\":[2,0]}],\"nodes\":["
		"{\"children\":[3,1],\"translation\":[1,2,3]},"
		"{\"rotation\":[0,0,1,0],\"scale\":[2,2,2]},"
		"{\"matrix\":[1,0,0,0, 0,1,0,0, 0,0,1,0, 5,6,7,1]},"
		"{\"children\":[4]},"
		"{},"
		"{\"name\":\"unreachable\"}]}";
	static const int want_index[] = { 2, 0, 3, 4, 1 };
	static const int want_parent[] = { -1, -1, 1, 2, 1 };
	gltf_nodes g;
	char why[256] = "";

	(void)state;
	assert_int_equal(load_text(json, &g, why, sizeof(why)), 0);
	assert_int_equal(g.n, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(g.nodes[i].index, want_index[i]);
		assert_int_equal(g.nodes[i].parent, want_parent[i]);
	}
	assert_true(g.nodes[0].has_matrix);
	assert_true(g.nodes[0].matrix.m[12] == 5 && g.nodes[0].matrix.m[14] == 7);
	assert_false(g.nodes[1].has_matrix);
	assert_true(g.nodes[1].t.x == 1 && g.nodes[1].t.z == 3);
	assert_true(g.nodes[1].r.w == 1 && g.nodes[1].s.x == 1); /* defaults */
	assert_true(g.nodes[4].r.z == 1 && g.nodes[4].r.w == 0 && g.nodes[4].s.y == 2);
	gltf_nodes_free(&g);
	gltf_nodes_free(&g); /* safe twice */
}

static void test_refusals(void **state)
{
	static const struct {
		const char *json;
		int err;
	} cases[] = {
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[1]},{\"children\":[0]}]}",
		  RIGD_E_BAD_GLTF }, /* a cycle through the root */
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[1,2]},{\"children\":[2]},{}]}",
		  RIGD_E_BAD_GLTF }, /* node 2 has two parents */
		{ "{\"scenes\":[{\"nodes\":[0,0]}],\"nodes\":[{}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[1,1]},{}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"children\":[7]}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[1.5]}],\"nodes\":[{},{}]}", RIGD_E_BAD_GLTF },
		{ "{\"scene\":1,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"matrix\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1],"
		  "\"translation\":[1,0,0]}]}",
		  RIGD_E_BAD_GLTF }, /* matrix and TRS together */
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"matrix\":[1,0,0]}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"rotation\":[0,0,1]}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"scale\":[1,\"2\",1]}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[7]}", RIGD_E_BAD_GLTF },
		{ "{\"nodes\":[{}]}", RIGD_E_BAD_GLTF },
		{ "{\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{}]", RIGD_E_BAD_GLTF }, /* bad JSON */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gltf_nodes g;
		char why[256] = "";

		assert_int_equal(load_text(cases[i].json, &g, why, sizeof(why)), cases[i].err);
		assert_int_equal(g.n, 0);
		assert_null(g.nodes);
		assert_true(why[0] != '\0'); /* says what was wrong */
	}
}

static void test_missing_file(void **state)
{
	gltf_nodes g;

	(void)state;
	assert_int_equal(gltf_nodes_load("/nonexistent/rigd.gltf", &g, NULL, 0), RIGD_E_IO);
	assert_int_equal(g.n, 0);
}

static void test_samples_load(void **state)
{
	/* Node counts from the samples' README. */
	static const struct {
		const char *file;
		int nodes;
	} samples[] = {
		{ "RiggedSimple.gltf", 5 },  { "SimpleSkin.gltf", 3 },
		{ "RiggedFigure.gltf", 22 }, { "CesiumMan.gltf", 22 },
		{ "Fox.gltf", 26 },          { "NegativeScaleTest.gltf", 14 },
		{ "OrientationTest.gltf", 13 },
	};

	struct stat st;

	(void)state;
	if (stat(RIGD_GLTF_SAMPLES, &st) != 0 || !S_ISDIR(st.st_mode)) {
		print_message("glTF samples not found at %s\n", RIGD_GLTF_SAMPLES);
		skip();
	}
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		char path[512], why[256] = "";
		gltf_nodes g;

		snprintf(path, sizeof(path), "%s/%s", RIGD_GLTF_SAMPLES, samples[i].file);
		assert_int_equal(gltf_nodes_load(path, &g, why, sizeof(why)), 0);
		assert_int_equal(g.n, samples[i].nodes);
		for (int k = 0; k < g.n; k++)
			assert_true(g.nodes[k].parent < k); /* preorder: parents first */
		gltf_nodes_free(&g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preorder_and_channels),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_samples_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
