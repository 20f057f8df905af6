/*
 * oracle_dump.c: builds a scene and prints, as JSON on stdout, every node's
 * channels and the world matrix rigd computed for it, for oracle.test.mjs to
 * compare with three.js.
 *
 *   oracle_dump gltf FILE          the default scene of a glTF file
 *   oracle_dump random N SEED      a random tree (random_tree.h), pivots zero
 *   oracle_dump random N SEED pivots   the same with pivots on a third of it
 *
 * The channels printed are the ones the scene stores (read back with
 * scene_props), so the quaternion is the normalised one. A glTF "matrix" is
 * split into TRS with mat4_decompose and must split exactly (within 1e-12
 * of the matrix's largest element); the residual is printed too. Numbers are
 * printed with 17 significant digits, which round-trip every double.
 *
 * Exit status 0, or 1 with a message on stderr.
 */
#include "gltf_nodes.h"
#include "random_tree.h"
#include "core/scene.h"

#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECOMPOSE_TOL_REL 1e-12

static void print_numbers(const char *key, const double *v, int n)
{
	printf(",\"%s\":[", key);
	for (int i = 0; i < n; i++)
		printf(i ? ",%.17g" : "%.17g", v[i]);
	printf("]");
}

static void print_node(const scene *s, int node, int preorder_parent, int gltf_index)
{
	node_props p;
	mat4 w = scene_world(s, node);
	double t[3], r[4], sc[3], pv[3];

	scene_props(s, node, &p);
	t[0] = p.t.x, t[1] = p.t.y, t[2] = p.t.z;
	r[0] = p.r.x, r[1] = p.r.y, r[2] = p.r.z, r[3] = p.r.w;
	sc[0] = p.s.x, sc[1] = p.s.y, sc[2] = p.s.z;
	pv[0] = p.pivot.x, pv[1] = p.pivot.y, pv[2] = p.pivot.z;
	printf("{\"id\":\"%s\",\"parent\":%d", scene_id(s, node), preorder_parent);
	if (gltf_index >= 0)
		printf(",\"gltf\":%d", gltf_index);
	print_numbers("t", t, 3);
	print_numbers("r", r, 4);
	print_numbers("s", sc, 3);
	print_numbers("pivot", pv, 3);
	print_numbers("world", w.m, 16);
	printf(",\"det\":%.17g,\"shear_deg\":%.17g}", scene_det(s, node), scene_shear_deg(s, node));
}

/* Prints the scene's nodes in preorder; every node's parent as a preorder
 * position. 'gltf_index' (may be NULL) maps a position to a glTF index. */
static void print_scene(const scene *s, long recomputed, const int *gltf_index)
{
	printf(",\"count\":%d,\"recomputed\":%ld,\"nodes\":[", scene_count(s), recomputed);
	for (int i = 0; i < scene_count(s); i++) {
		int node = scene_at(s, i), parent = scene_parent(s, node);

		if (i)
			printf(",");
		print_node(s, node, parent < 0 ? -1 : scene_pos(s, parent),
			   gltf_index ? gltf_index[i] : -1);
	}
	printf("]}\n");
}

static double max_abs(mat4 m)
{
	double v = 0;

	for (int i = 0; i < 16; i++)
		v = fmax(v, fabs(m.m[i]));
	return v;
}

static int dump_gltf(const char *path)
{
	gltf_nodes g;
	char why[256];
	scene *s = NULL;
	node_props *props = NULL;
	const char **ids = NULL;
	char (*id_buf)[16] = NULL;
	int *parents = NULL, *gltf_index = NULL, decomposed = 0, bad = -1, rc = 1, err;
	double worst = 0;

	if ((err = gltf_nodes_load(path, &g, why, sizeof(why))) != 0) {
		fprintf(stderr, "oracle_dump: %s: %s (%s)\n", path, why, err_code(err));
		return 1;
	}
	s = scene_new();
	props = malloc(sizeof(*props) * (size_t)(g.n + 1));
	ids = malloc(sizeof(*ids) * (size_t)(g.n + 1));
	id_buf = malloc(sizeof(*id_buf) * (size_t)(g.n + 1));
	parents = malloc(sizeof(*parents) * (size_t)(g.n + 1));
	gltf_index = malloc(sizeof(*gltf_index) * (size_t)(g.n + 1));
	if (!s || !props || !ids || !id_buf || !parents || !gltf_index) {
		fprintf(stderr, "oracle_dump: out of memory\n");
		goto out;
	}
	for (int i = 0; i < g.n; i++) {
		const gltf_node *gn = &g.nodes[i];

		props[i] = node_props_default();
		if (gn->has_matrix) {
			double e;

			if (!mat4_decompose(gn->matrix, DECOMPOSE_TOL_REL * fmax(1, max_abs(gn->matrix)),
					    &props[i].t, &props[i].r, &props[i].s, &e)) {
				fprintf(stderr, "oracle_dump: %s: node %d: matrix is not TRS (residual %g)\n",
					path, gn->index, e);
				goto out;
			}
			worst = fmax(worst, e);
			decomposed++;
		} else {
			props[i].t = gn->t;
			props[i].r = gn->r;
			props[i].s = gn->s;
		}
		/* glTF names need not be valid ids ("Not Shiny Parent"), so ids
		 * are made from the glTF index. */
		snprintf(id_buf[i], sizeof(id_buf[i]), "g%d", gn->index);
		ids[i] = id_buf[i];
		parents[i] = gn->parent;
		gltf_index[i] = gn->index;
	}
	if ((err = scene_load(s, g.n, ids, parents, props, &bad)) != 0) {
		fprintf(stderr, "oracle_dump: %s: node %d refused: %s\n", path,
			bad >= 0 ? gltf_index[bad] : -1, err_code(err));
		goto out;
	}
	printf("{\"kind\":\"gltf\",\"decomposed\":%d,\"decompose_max_err\":%.17g", decomposed, worst);
	print_scene(s, scene_update(s, 1, NULL, NULL), gltf_index);
	rc = 0;
out:
	scene_free(s);
	free(props);
	free(ids);
	free(id_buf);
	free(parents);
	free(gltf_index);
	gltf_nodes_free(&g);
	return rc;
}

static int dump_random(int n, uint64_t seed, unsigned flags)
{
	rtree t;
	scene *s = scene_new();
	int rc = 1, err;

	if (!s || (err = rtree_make(&t, n, seed, flags)) != 0) {
		fprintf(stderr, "oracle_dump: out of memory\n");
		scene_free(s);
		return 1;
	}
	if ((err = rtree_load(&t, s)) != 0) {
		fprintf(stderr, "oracle_dump: random tree refused: %s\n", err_code(err));
		goto out;
	}
	printf("{\"kind\":\"random\",\"seed\":%llu,\"pivots\":%s,\"roots\":%d,\"max_depth\":%d",
	       (unsigned long long)seed, (flags & RTREE_PIVOTS) ? "true" : "false", t.roots,
	       t.max_depth);
	print_scene(s, scene_update(s, 1, NULL, NULL), NULL);
	rc = 0;
out:
	rtree_free(&t);
	scene_free(s);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: oracle_dump gltf FILE\n"
			"       oracle_dump random N SEED [pivots]\n");
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "gltf") == 0)
		return dump_gltf(argv[2]);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "random") == 0) {
		char *end1, *end2;
		long n = strtol(argv[2], &end1, 10);
		unsigned long long seed = strtoull(argv[3], &end2, 10);

		if (*end1 || *end2 || n < 1 || n > SCENE_DEFAULT_MAX_NODES ||
		    (argc == 5 && strcmp(argv[4], "pivots") != 0)) {
			usage();
			return 2;
		}
		return dump_random((int)n, seed, argc == 5 ? RTREE_PIVOTS : 0);
	}
	usage();
	return 2;
}
