/*
 * test_view.c: views and their cull (server/core/view.c): frustum planes
 * from a view-projection matrix, the projected-size rule on a worked case,
 * refused views, and the hierarchical cull against a brute-force test of
 * every node on random scenes (with and without the size test, with nodes
 * without bounds visible or not), and against scene_cull where they must
 * agree; the boxes kept up to date through random edits (local matrices,
 * bounds, reparents, creates, deletes) equal boxes built from scratch, and
 * both culls stay the brute-force rule's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/scene.h"
#include "core/view.h"

#define DEG (M_PI / 180.0)

/* out = a * b, column-major 4x4. */
static void mul4(const double *a, const double *b, double *out)
{
	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++) {
			double sum = 0;

			for (int k = 0; k < 4; k++)
				sum += a[k * 4 + r] * b[c * 4 + k];
			out[c * 4 + r] = sum;
		}
}

/* A perspective camera at 'eye' looking down -z (three.js's projection:
 * vertical fov, aspect, near, far), as a view-projection matrix. */
static void perspective_vp(double fov_deg, double aspect, double n, double f, vec3 eye,
			   double *vp)
{
	double p[16] = { 0 }, v[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
	double t = 1 / tan(fov_deg * DEG / 2);

	p[0] = t / aspect;
	p[5] = t;
	p[10] = (f + n) / (n - f);
	p[11] = -1;
	p[14] = 2 * f * n / (n - f);
	v[12] = -eye.x;
	v[13] = -eye.y;
	v[14] = -eye.z;
	mul4(p, v, vp);
}

/* The six planes: a point in front of the camera is inside, one behind it,
 * beyond the far plane or off to a side is outside. */
static void test_planes_from_vp(void **state)
{
	double vp[16];
	view v;
	aabb in = aabb_make(vec3_make(-0.1, -0.1, -10.1), vec3_make(0.1, 0.1, -9.9));
	aabb behind = aabb_make(vec3_make(-0.1, -0.1, 1), vec3_make(0.1, 0.1, 2));
	aabb far = aabb_make(vec3_make(-0.1, -0.1, -300), vec3_make(0.1, 0.1, -200));
	aabb left = aabb_make(vec3_make(-30, -0.1, -10.1), vec3_make(-20, 0.1, -9.9));

	(void)state;
	perspective_vp(90, 1, 0.5, 100, vec3_make(0, 0, 0), vp);
	assert_int_equal(view_from_vp(vp, 800, 600, 0, &v), 0);
	for (int k = 0; k < VIEW_PLANES; k++)
		assert_int_equal(plane_classify(v.planes[k], in), SIDE_INSIDE);
	assert_int_equal(plane_classify(v.planes[4], behind), SIDE_OUTSIDE);  /* near */
	assert_int_equal(plane_classify(v.planes[5], far), SIDE_OUTSIDE);     /* far */
	assert_int_equal(plane_classify(v.planes[0], left), SIDE_OUTSIDE);    /* left */
}

/* The worked case of docs/protocol.md: fov 90, a 100 x 100 viewport, a
 * box of half-size 1 centred 10 in front: sqrt(3) * 100 / 10 pixels. */
static void test_node_px(void **state)
{
	double vp[16];
	view v;
	aabb box = aabb_make(vec3_make(-1, -1, -11), vec3_make(1, 1, -9));
	aabb at_eye = aabb_make(vec3_make(-1, -1, -1), vec3_make(1, 1, 1));

	(void)state;
	perspective_vp(90, 1, 0.5, 100, vec3_make(0, 0, 0), vp);
	assert_int_equal(view_from_vp(vp, 100, 100, 10, &v), 0);
	assert_true(fabs(view_node_px(&v, box) - sqrt(3) * 100 / 10) < 1e-9);
	assert_true(isinf(view_node_px(&v, at_eye)));
}

/* Refused views change nothing. */
static void test_bad_views(void **state)
{
	double vp[16], zero[16] = { 0 }, planes[6][4] = { { 1, 0, 0, 1 }, { -1, 0, 0, 1 },
		{ 0, 1, 0, 1 }, { 0, -1, 0, 1 }, { 0, 0, 1, 1 }, { 0, 0, -1, 1 } };
	view v, before;

	(void)state;
	memset(&v, 0x5a, sizeof(v));
	before = v;
	perspective_vp(60, 1.5, 0.1, 100, vec3_make(0, 0, 5), vp);
	assert_int_equal(view_from_vp(vp, 0, 600, 0, &v), RIGD_E_BAD_FIELD);
	assert_int_equal(view_from_vp(vp, 800, 600, -1, &v), RIGD_E_BAD_FIELD);
	assert_int_equal(view_from_vp(vp, 800, VIEW_MAX_PX + 1, 0, &v), RIGD_E_BAD_FIELD);
	assert_int_equal(view_from_vp(zero, 800, 600, 0, &v), RIGD_E_BAD_FIELD);
	vp[5] = NAN;
	assert_int_equal(view_from_vp(vp, 800, 600, 0, &v), RIGD_E_BAD_FIELD);
	vp[5] = INFINITY;
	assert_int_equal(view_from_vp(vp, 800, 600, 0, &v), RIGD_E_BAD_FIELD);
	assert_int_equal(view_from_planes(planes, 800, 600, 2, &v), RIGD_E_BAD_FIELD);
	planes[3][1] = 0;
	assert_int_equal(view_from_planes(planes, 800, 600, 0, &v), RIGD_E_BAD_FIELD);
	assert_memory_equal(&v, &before, sizeof(v));
	planes[3][1] = -1;
	assert_int_equal(view_from_planes(planes, 800, 600, 0, &v), 0);
	assert_false(v.has_vp);
	assert_true(isinf(view_node_px(&v, aabb_make(vec3_make(0, 0, 0), vec3_make(1, 1, 1)))));
}

static double frand(double lo, double hi)
{
	return lo + (hi - lo) * (rand() / (double)RAND_MAX);
}

/* A random forest of 'n' nodes, a quarter without bounds, every matrix up
 * to date. */
static scene *random_scene(int n)
{
	scene *s = scene_new();
	char id[16];

	for (int i = 0; i < n; i++) {
		node_props p = node_props_default();
		int parent = i == 0 || rand() % 10 == 0 ? -1 : scene_at(s, rand() % scene_count(s));

		p.t = vec3_make(frand(-20, 20), frand(-20, 20), frand(-20, 20));
		if (parent >= 0)
			p.t = vec3_scale(p.t, 0.2);
		p.r = quat_from_axis_angle(vec3_make(frand(-1, 1), frand(-1, 1), 1), frand(-3, 3));
		p.s = vec3_make(frand(0.5, 1.5), frand(0.5, 1.5), frand(0.5, 1.5));
		if (rand() % 4) {
			double h = frand(0.01, 2);

			p.has_bounds = true;
			p.bounds = aabb_make(vec3_make(-h, -h * 0.5, -h), vec3_make(h, h, h * 0.3));
		}
		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(scene_create(s, id, parent, -1, &p, NULL), 0);
	}
	scene_update(s, 1, NULL, NULL);
	return s;
}

/* The rule, node by node, without the hierarchy. */
static bool brute_visible(const scene *s, int node, const view *v, unsigned flags)
{
	aabb box = scene_world_box(s, node);

	if (aabb_is_empty(box))
		return flags & VIEW_CULL_UNBOUNDED;
	for (int k = 0; k < VIEW_PLANES; k++)
		if (plane_classify(v->planes[k], box) == SIDE_OUTSIDE)
			return false;
	return !(v->min_px > 0) || view_node_px(v, box) >= v->min_px;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The walk finds exactly the nodes the brute-force rule keeps, in
 * preorder, with fewer tests than nodes when the view sees a part. */
static void test_cull_matches_brute_force(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 40; round++) {
		scene *s = random_scene(400);
		view_boxes b = { 0 };
		int n = scene_count(s), *got = malloc((size_t)n * sizeof(int));
		int *want = malloc((size_t)n * sizeof(int));
		double vp[16];
		view v;

		perspective_vp(frand(20, 90), frand(0.5, 2), 0.1, frand(20, 80),
			       vec3_make(frand(-20, 20), frand(-20, 20), frand(10, 40)), vp);
		assert_int_equal(view_from_vp(vp, 640, 480, round % 3 ? frand(0, 40) : 0, &v), 0);
		assert_int_equal(view_boxes_build(s, &b), 0);
		assert_int_equal(b.n, n);
		for (unsigned flags = 0; flags <= VIEW_CULL_UNBOUNDED; flags++) {
			long tests = 0;
			int ng = view_cull(s, &b, &v, flags, got, n, &tests), nw = 0;

			for (int pos = 0; pos < n; pos++)
				if (brute_visible(s, scene_at(s, pos), &v, flags))
					want[nw++] = scene_at(s, pos);
			assert_int_equal(ng, nw);
			assert_memory_equal(got, want, (size_t)nw * sizeof(int));
			assert_true(tests >= 0);
			/* Counting only, no list. */
			assert_int_equal(view_cull(s, &b, &v, flags, NULL, 0, NULL), nw);
		}
		if (v.min_px == 0) {
			/* Without the size test and with nodes without bounds
			 * invisible, the walk is scene_cull's. */
			int *sc = malloc((size_t)n * sizeof(int));
			int ns = scene_cull(s, v.planes, VIEW_PLANES, sc, n, NULL);
			int ng = view_cull(s, &b, &v, 0, got, n, NULL);

			assert_int_equal(ns, ng);
			qsort(sc, (size_t)ns, sizeof(int), cmp_int);
			qsort(got, (size_t)ng, sizeof(int), cmp_int);
			assert_memory_equal(sc, got, (size_t)ns * sizeof(int));
			free(sc);
		}
		free(got);
		free(want);
		view_boxes_release(&b);
		scene_free(s);
	}
}

/* A view of a small part of a big grid opens few subtrees: the tests made
 * stay far below the node count. */
static void test_cull_is_hierarchical(void **state)
{
	scene *s = scene_new();
	view_boxes b = { 0 };
	char id[32];
	double vp[16];
	view v;
	long tests = 0;
	int vis;

	(void)state;
	for (int g = 0; g < 100; g++) {
		node_props p = node_props_default();
		int group;

		p.t = vec3_make((g % 10) * 100.0, (g / 10) * 100.0, 0);
		snprintf(id, sizeof(id), "g%d", g);
		assert_int_equal(scene_create(s, id, -1, -1, &p, &group), 0);
		for (int k = 0; k < 100; k++) {
			node_props q = node_props_default();

			q.t = vec3_make((k % 10) * 8.0, (k / 10) * 8.0, 0);
			q.has_bounds = true;
			q.bounds = aabb_make(vec3_make(-1, -1, -1), vec3_make(1, 1, 1));
			snprintf(id, sizeof(id), "g%d-%d", g, k);
			assert_int_equal(scene_create(s, id, group, -1, &q, NULL), 0);
		}
	}
	scene_update(s, 1, NULL, NULL);
	assert_int_equal(view_boxes_build(s, &b), 0);
	/* Looking straight down at group g0 from 40 up, 90 degrees wide. */
	perspective_vp(90, 1, 1, 100, vec3_make(36, 36, 40), vp);
	assert_int_equal(view_from_vp(vp, 512, 512, 0, &v), 0);
	vis = view_cull(s, &b, &v, VIEW_CULL_UNBOUNDED, NULL, 0, &tests);
	/* The 100 boxes of g0 and every group node (no bounds: visible). */
	assert_int_equal(vis, 100 + 100);
	assert_true(tests < 600);
	/* Without unbounded nodes only g0's boxes. */
	assert_int_equal(view_cull(s, &b, &v, 0, NULL, 0, NULL), 100);
	/* Boxes of 2 units 40 away are about 2 * sqrt(3) * 256 / 40 = 22 px:
	 * a 30 px minimum drops them all. */
	v.min_px = 30;
	assert_int_equal(view_cull(s, &b, &v, 0, NULL, 0, NULL), 0);
	v.min_px = 20;
	assert_int_equal(view_cull(s, &b, &v, 0, NULL, 0, NULL), 100);
	view_boxes_release(&b);
	view_boxes_release(NULL);
	scene_free(s);
}

/* A random node of 's' other than 'not' (-1: any), or -1 when none. */
static int any_node(const scene *s, int not)
{
	int n = scene_count(s), h;

	if (n == 0 || (n == 1 && scene_at(s, 0) == not))
		return -1;
	do
		h = scene_at(s, rand() % n);
	while (h == not);
	return h;
}

/* One random edit of 's': a local matrix, bounds on or off, a reparent
 * (keeping the world or not), a create, a delete of a small subtree. */
static void random_edit(scene *s, int *next_id)
{
	node_props p = node_props_default();
	int node = any_node(s, -1), kind = rand() % 6, parent;
	char id[16];

	if (node < 0 || kind == 3) {
		parent = node >= 0 && rand() % 4 ? node : -1;
		p.t = vec3_make(frand(-4, 4), frand(-4, 4), frand(-4, 4));
		if (rand() % 3) {
			p.has_bounds = true;
			p.bounds = aabb_make(vec3_make(-1, -0.5, -0.2), vec3_make(0.3, 1, 0.7));
		}
		snprintf(id, sizeof(id), "e%d", (*next_id)++);
		assert_int_equal(scene_create(s, id, parent, -1, &p, NULL), 0);
		return;
	}
	switch (kind) {
	case 0: /* a local matrix */
		p.t = vec3_make(frand(-5, 5), frand(-5, 5), frand(-5, 5));
		p.r = quat_from_axis_angle(vec3_make(frand(-1, 1), 1, frand(-1, 1)), frand(-3, 3));
		p.s = vec3_make(frand(0.5, 2), frand(0.5, 2), frand(0.5, 2));
		assert_int_equal(scene_set(s, node, PROP_T | PROP_R | PROP_S, &p), 0);
		break;
	case 1: /* bounds on, changed or off */
		p.has_bounds = rand() % 3 != 0;
		p.bounds = aabb_make(vec3_make(-frand(0, 3), -1, -frand(0, 2)),
				     vec3_make(frand(0, 2), 1, frand(0, 3)));
		assert_int_equal(scene_set(s, node, PROP_BOUNDS, &p), 0);
		break;
	case 2: /* a reparent, or a new root */
		parent = rand() % 5 ? any_node(s, node) : -1;
		if (parent >= 0 && scene_is_ancestor(s, node, parent))
			parent = -1;
		{
			int rc = scene_reparent(s, node, parent, -1, rand() % 2);

			assert_true(rc == 0 || rc == RIGD_E_NOT_TRS || rc == RIGD_E_SINGULAR);
			if (rc)
				assert_int_equal(scene_reparent(s, node, parent, -1, false), 0);
		}
		break;
	case 4: /* a delete, of a leaf or a small subtree */
		if (scene_subtree_size(s, node) <= 8)
			assert_int_equal(scene_delete(s, node), 0);
		break;
	default: /* a root edit: nothing for the boxes to refit */
		while (scene_parent(s, node) >= 0)
			node = scene_parent(s, node);
		p.t = vec3_make(frand(-5, 5), frand(-5, 5), 0);
		assert_int_equal(scene_set(s, node, PROP_T, &p), 0);
		break;
	}
}

/* The boxes of every live node agree bit for bit. */
static void assert_boxes_equal(const scene *s, const view_boxes *a, const view_boxes *b)
{
	assert_int_equal(a->n, b->n);
	for (int pos = 0; pos < scene_count(s); pos++) {
		int h = scene_at(s, pos);

		assert_true(h < a->handle_end && h < b->handle_end);
		assert_memory_equal(&a->sub[h], &b->sub[h], sizeof(aabb));
		assert_int_equal(a->unbounded[h], b->unbounded[h]);
	}
}

/* Both culls give the brute-force rule's nodes, in preorder. */
static void assert_culls(const scene *s, const view_boxes *inc, const view_boxes *fresh,
			 const view *v)
{
	int n = scene_count(s), nw = 0;
	int *got = malloc((size_t)(n ? n : 1) * sizeof(int)), *want = malloc((size_t)(n ? n : 1) * sizeof(int));

	for (unsigned flags = 0; flags <= VIEW_CULL_UNBOUNDED; flags++) {
		nw = 0;
		for (int pos = 0; pos < n; pos++)
			if (brute_visible(s, scene_at(s, pos), v, flags))
				want[nw++] = scene_at(s, pos);
		assert_int_equal(view_cull(s, inc, v, flags, got, n, NULL), nw);
		assert_memory_equal(got, want, (size_t)nw * sizeof(int));
		assert_int_equal(view_cull(s, fresh, v, flags, got, n, NULL), nw);
		assert_memory_equal(got, want, (size_t)nw * sizeof(int));
	}
	free(got);
	free(want);
}

/* Boxes kept up to date edit after edit equal boxes built from scratch,
 * and the culls over them stay the brute-force rule's. */
static void test_boxes_follow_edits(void **state)
{
	int next_id = 0;

	(void)state;
	srand(11);
	for (int round = 0; round < 12; round++) {
		scene *s = random_scene(300);
		view_boxes inc = { 0 }, fresh = { 0 };
		double vp[16];
		view v;

		perspective_vp(frand(30, 90), frand(0.5, 2), 0.1, frand(30, 80),
			       vec3_make(frand(-10, 10), frand(-10, 10), frand(15, 40)), vp);
		assert_int_equal(view_from_vp(vp, 640, 480, round % 2 ? frand(0, 20) : 0, &v), 0);
		assert_int_equal(view_boxes_update(s, &inc), 0);  /* never built: builds */
		assert_int_equal(inc.refits, scene_count(s));
		for (int step = 0; step < 40; step++) {
			int edits = 1 + rand() % 4;

			for (int e = 0; e < edits; e++)
				random_edit(s, &next_id);
			scene_update(s, (uint64_t)step + 2, NULL, NULL);
			assert_int_equal(view_boxes_update(s, &inc), 0);
			assert_int_equal(view_boxes_build(s, &fresh), 0);
			assert_boxes_equal(s, &inc, &fresh);
			assert_culls(s, &inc, &fresh, &v);
		}
		view_boxes_release(&inc);
		view_boxes_release(&fresh);
		scene_free(s);
	}
}

/* A root edit refits no box, a leaf's edit only its ancestors, and a
 * shape log that no longer reaches back makes the update rebuild. */
static void test_boxes_refit_little(void **state)
{
	scene *s = scene_new();
	view_boxes b = { 0 }, fresh = { 0 };
	node_props p = node_props_default();
	int root, group, leaf = -1;
	char id[32];

	(void)state;
	assert_int_equal(scene_create(s, "root", -1, -1, &p, &root), 0);
	for (int g = 0; g < 10; g++) {
		snprintf(id, sizeof(id), "g%d", g);
		p.t = vec3_make(g * 10.0, 0, 0);
		assert_int_equal(scene_create(s, id, root, -1, &p, &group), 0);
		for (int k = 0; k < 50; k++) {
			node_props q = node_props_default();

			q.t = vec3_make(k, 0, 0);
			q.has_bounds = true;
			q.bounds = aabb_make(vec3_make(-0.5, -0.5, -0.5), vec3_make(0.5, 0.5, 0.5));
			snprintf(id, sizeof(id), "g%d-%d", g, k);
			assert_int_equal(scene_create(s, id, group, -1, &q, &leaf), 0);
		}
	}
	scene_update(s, 1, NULL, NULL);
	assert_int_equal(view_boxes_update(s, &b), 0);
	assert_int_equal(b.refits, 511);
	p.t = vec3_make(3, 2, 1);
	assert_int_equal(scene_set(s, root, PROP_T, &p), 0);
	scene_update(s, 2, NULL, NULL);
	assert_int_equal(view_boxes_update(s, &b), 0);
	assert_int_equal(b.refits, 0);
	/* The last leaf moves: its group and the root are refitted. */
	p.t = vec3_make(100, 5, 0);
	assert_int_equal(scene_set(s, leaf, PROP_T, &p), 0);
	scene_update(s, 3, NULL, NULL);
	assert_int_equal(view_boxes_update(s, &b), 0);
	assert_int_equal(b.refits, 2);
	assert_int_equal(view_boxes_build(s, &fresh), 0);
	assert_boxes_equal(s, &b, &fresh);
	/* More edits than the log holds: a rebuild, still right. */
	for (int i = 0; i < 5000; i++) {
		p.t = vec3_make(i % 7, 0, 0);
		assert_int_equal(scene_set(s, leaf, PROP_T, &p), 0);
	}
	scene_update(s, 4, NULL, NULL);
	assert_int_equal(view_boxes_update(s, &b), 0);
	assert_int_equal(b.refits, 511);
	assert_int_equal(view_boxes_build(s, &fresh), 0);
	assert_boxes_equal(s, &b, &fresh);
	view_boxes_release(&b);
	view_boxes_release(&fresh);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_planes_from_vp),
		cmocka_unit_test(test_node_px),
		cmocka_unit_test(test_bad_views),
		cmocka_unit_test(test_cull_matches_brute_force),
		cmocka_unit_test(test_cull_is_hierarchical),
		cmocka_unit_test(test_boxes_follow_edits),
		cmocka_unit_test(test_boxes_refit_little),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
