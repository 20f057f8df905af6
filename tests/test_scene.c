/*
 * test_scene.c: the scene module against the worked numbers of
 * docs/transforms.md (sections 4 to 9, the 59-bone skeleton of 6.2 and the
 * unrounded figures of 13.4), plus structure edits, dirty counts, errors and
 * a chain a million nodes deep.
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

#define DEG (M_PI / 180.0)

static void assert_near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol)) {
		print_error("%s: got %.9f, want %.9f (tol %g)\n", what, got, want, tol);
		fail();
	}
}

static void assert_vec3(vec3 got, double x, double y, double z, double tol)
{
	assert_near(got.x, x, tol, "x");
	assert_near(got.y, y, tol, "y");
	assert_near(got.z, z, tol, "z");
}

/* Every structural invariant: positions match order, subtree sizes add up,
 * each node's parent precedes it and contains it. */
static void check_invariants(const scene *s)
{
	for (int i = 0; i < scene_count(s); i++) {
		int n = scene_at(s, i), p = scene_parent(s, n), sum = 1;

		assert_int_equal(scene_pos(s, n), i);
		assert_ptr_equal(scene_find(s, scene_id(s, n)), n);
		for (int c = 0; c < scene_child_count(s, n); c++) {
			int ch = scene_child_at(s, n, c);

			assert_int_equal(scene_parent(s, ch), n);
			assert_int_equal(scene_child_index(s, ch), c);
			sum += scene_subtree_size(s, ch);
		}
		assert_int_equal(scene_subtree_size(s, n), sum);
		if (p >= 0)
			assert_true(scene_is_ancestor(s, p, n));
	}
}

static int add(scene *s, const char *id, const char *parent, node_props p)
{
	int node = -1;
	int pn = parent ? scene_find(s, parent) : -1;

	assert_int_equal(scene_create(s, id, pn, -1, &p, &node), 0);
	return node;
}

static node_props box(double hx, double hy, double hz)
{
	node_props p = node_props_default();

	p.has_bounds = true;
	p.bounds = aabb_make(vec3_make(-hx, -hy, -hz), vec3_make(hx, hy, hz));
	p.kind = NODE_MESH;
	p.mesh = "box";
	return p;
}

/* The demo rig of transforms.md 4: base yaw 30, bend 40, the boxes of 8.1. */
static scene *demo(double yaw_deg, double bend_deg)
{
	scene *s = scene_new();
	node_props base = box(0.35, 0.2, 0.35), arm = box(0.12, 0.7, 0.12), hand = box(0.22, 0.12, 0.22);

	base.t = vec3_make(0, 0.2, 0);
	base.r = quat_from_axis_angle(vec3_make(0, 1, 0), yaw_deg * DEG);
	arm.t = vec3_make(0, 0.9, 0);
	arm.pivot = vec3_make(0, -0.7, 0);
	arm.r = quat_from_axis_angle(vec3_make(0, 0, 1), bend_deg * DEG);
	hand.t = vec3_make(0, 0.7, 0);
	add(s, "base", NULL, base);
	add(s, "arm", "base", arm);
	add(s, "hand", "arm", hand);
	return s;
}

static vec3 origin_of(const scene *s, const char *id)
{
	return mat4_column(scene_world(s, scene_find(s, id)), 3);
}

/* 4.1 to 4.3: the default pose, yaw 90, and the hand at four bends. */
static void test_demo_pose(void **state)
{
	scene *s = demo(30, 40);
	mat4 w;
	static const double want[4][4] = {
		{ 0.66, -0.56, 0.50, -0.78 },
		{ 0.64, 0.77, 0.00, 1.47 },
		{ -0.38, 0.32, 0.87, 0.45 },
		{ 0, 0, 0, 1 },
	};

	(void)state;
	assert_int_equal(scene_update(s, 1, NULL, NULL), 3);
	w = scene_world(s, scene_find(s, "hand"));
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++)
			assert_near(w.m[c * 4 + r], want[r][c], 0.005, "W_hand");
	/* The unrounded hand and arm of 4.1 (and 13.4). */
	assert_vec3(origin_of(s, "hand"), -0.779, 1.472, 0.450, 0.0005);
	assert_vec3(origin_of(s, "arm"), -0.390, 0.936, 0.225, 0.0005);
	assert_vec3(origin_of(s, "base"), 0, 0.2, 0, 1e-15);
	scene_free(s);

	s = demo(90, 40);
	scene_update(s, 1, NULL, NULL);
	assert_vec3(origin_of(s, "hand"), 0, 1.47, 0.90, 0.005);
	scene_free(s);

	/* 4.3: base unyawed, hand (x, y) at bends 0 and 120. */
	s = demo(0, 0);
	assert_vec3(origin_of(s, "hand"), 0, 1.8, 0, 1e-12);
	scene_free(s);
	s = demo(0, 120);
	assert_vec3(origin_of(s, "hand"), -1.21, -0.3, 0, 0.005);
	scene_free(s);
}

/* 6.1: what an edit touches, as counts reported by the pass. */
static void test_demo_dirty_counts(void **state)
{
	scene *s = demo(30, 40);
	node_props p = node_props_default();

	(void)state;
	scene_update(s, 1, NULL, NULL);
	assert_false(scene_has_dirty(s));
	p.r = quat_from_axis_angle(vec3_make(0, 1, 0), 0.3);
	assert_int_equal(scene_set(s, scene_find(s, "hand"), PROP_R, &p), 0);
	assert_int_equal(scene_update(s, 2, NULL, NULL), 1);
	assert_int_equal(scene_set(s, scene_find(s, "arm"), PROP_R, &p), 0);
	assert_int_equal(scene_update(s, 3, NULL, NULL), 2);
	assert_int_equal(scene_set(s, scene_find(s, "base"), PROP_R, &p), 0);
	assert_int_equal(scene_update(s, 4, NULL, NULL), 3);
	assert_int_equal(scene_world_stamp(s, scene_find(s, "hand")), 4);
	/* Several edits before one pass: the union, counted once. */
	scene_set(s, scene_find(s, "hand"), PROP_R, &p);
	scene_set(s, scene_find(s, "base"), PROP_R, &p);
	scene_set(s, scene_find(s, "arm"), PROP_T, &p);
	assert_int_equal(scene_update(s, 5, NULL, NULL), 3);
	assert_int_equal(scene_update(s, 6, NULL, NULL), 0);
	/* Non-transform fields touch no matrix. */
	p.name = "Hand";
	scene_set(s, scene_find(s, "hand"), PROP_NAME | PROP_VISIBLE, &p);
	assert_int_equal(scene_update(s, 7, NULL, NULL), 0);
	scene_free(s);
}

/* Editing the yaw of the hand moves only its orientation (6.1). */
static void test_hand_yaw_keeps_position(void **state)
{
	scene *s = demo(30, 40);
	node_props p = node_props_default();
	vec3 before = origin_of(s, "hand");

	(void)state;
	p.r = quat_from_axis_angle(vec3_make(0, 1, 0), 1.0);
	scene_set(s, scene_find(s, "hand"), PROP_R, &p);
	scene_update(s, 2, NULL, NULL);
	assert_vec3(origin_of(s, "hand"), before.x, before.y, before.z, 1e-12);
	scene_free(s);
}

/* 6.2 and 13.1: the 59-bone skeleton and its subtree sizes. */
static scene *skeleton(void)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	char id[64], parent[64];

	p.t = vec3_make(0, 0.1, 0);
	add(s, "root", NULL, p);
	for (int i = 1; i <= 5; i++) {
		snprintf(id, sizeof(id), "spine%d", i);
		snprintf(parent, sizeof(parent), i == 1 ? "root" : "spine%d", i - 1);
		add(s, id, parent, p);
	}
	add(s, "neck", "spine5", p);
	add(s, "head", "neck", p);
	add(s, "head_end", "head", p);
	for (int side = 0; side < 2; side++) {
		const char *lr = side ? "r" : "l";
		static const char *arm[] = { "upper_arm", "forearm", "wrist", "hand" };
		static const char *leg[] = { "thigh", "shin", "ankle", "foot" };

		for (int i = 0; i < 4; i++) {
			snprintf(id, sizeof(id), "%s_%s", lr, arm[i]);
			if (i == 0)
				snprintf(parent, sizeof(parent), "spine5");
			else
				snprintf(parent, sizeof(parent), "%s_%s", lr, arm[i - 1]);
			add(s, id, parent, p);
		}
		for (int f = 0; f < 5; f++)
			for (int b = 0; b < 3; b++) {
				snprintf(id, sizeof(id), "%s_finger%d_%d", lr, f, b);
				if (b == 0)
					snprintf(parent, sizeof(parent), "%s_hand", lr);
				else
					snprintf(parent, sizeof(parent), "%s_finger%d_%d", lr, f, b - 1);
				add(s, id, parent, p);
			}
		for (int i = 0; i < 4; i++) {
			snprintf(id, sizeof(id), "%s_%s", lr, leg[i]);
			if (i == 0)
				snprintf(parent, sizeof(parent), "root");
			else
				snprintf(parent, sizeof(parent), "%s_%s", lr, leg[i - 1]);
			add(s, id, parent, p);
		}
		for (int t = 0; t < 2; t++) {
			snprintf(id, sizeof(id), "%s_toe%d", lr, t);
			add(s, id, side ? "r_foot" : "l_foot", p);
		}
	}
	return s;
}

static void test_skeleton_counts(void **state)
{
	scene *s = skeleton();
	node_props p = node_props_default();
	static const struct {
		const char *id;
		long want;
	} rows[] = {
		{ "root", 59 }, { "spine1", 46 }, { "l_upper_arm", 19 }, { "l_hand", 16 },
		{ "l_finger2_2", 1 }, { "spine5", 42 }, /* the top spine bone */
	};

	(void)state;
	assert_int_equal(scene_count(s), 59);
	check_invariants(s);
	assert_int_equal(scene_update(s, 1, NULL, NULL), 59);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		p.r = quat_from_axis_angle(vec3_make(1, 0, 0), 0.1 * (double)(i + 1));
		assert_int_equal(scene_set(s, scene_find(s, rows[i].id), PROP_R, &p), 0);
		assert_int_equal(scene_update(s, 2 + i, NULL, NULL), rows[i].want);
	}
	scene_free(s);
}

/* 7.2 and 9.1: the mirrored sibling, its determinant, and the stack trace. */
struct trace {
	int n;
	int depth[8];
	vec3 origin[8];
};

static void record(void *ctx, int node, int depth, const mat4 *world)
{
	struct trace *t = ctx;

	(void)node;
	if (t->n < 8) {
		t->depth[t->n] = depth;
		t->origin[t->n] = mat4_column(*world, 3);
	}
	t->n++;
}

static void test_mirrored_sibling_and_stack(void **state)
{
	scene *s = demo(30, 40);
	node_props arm2 = box(0.12, 0.7, 0.12), hand2 = box(0.22, 0.12, 0.22);
	struct trace tr = { 0 };

	(void)state;
	/* S(-1,1,1) * L_arm = T(0,0.9,0) T(p) Rz(-40) S(-1,1,1) T(-p). */
	arm2.t = vec3_make(0, 0.9, 0);
	arm2.pivot = vec3_make(0, -0.7, 0);
	arm2.r = quat_from_axis_angle(vec3_make(0, 0, 1), -40 * DEG);
	arm2.s = vec3_make(-1, 1, 1);
	hand2.t = vec3_make(0, 0.7, 0);
	add(s, "arm2", "base", arm2);
	add(s, "hand2", "arm2", hand2);
	scene_update(s, 1, NULL, NULL);
	assert_vec3(origin_of(s, "arm2"), 0.39, 0.94, -0.22, 0.005);
	assert_vec3(origin_of(s, "hand2"), 0.78, 1.47, -0.45, 0.005);
	assert_near(scene_det(s, scene_find(s, "arm2")), -1, 1e-12, "det arm2");
	assert_near(scene_det(s, scene_find(s, "hand2")), -1, 1e-12, "det hand2");
	assert_near(scene_det(s, scene_find(s, "hand")), 1, 1e-12, "det hand");

	/* Five pushes, maximum depth three, the table's origins. */
	assert_int_equal(scene_traverse(s, record, &tr), 3);
	assert_int_equal(tr.n, 5);
	assert_int_equal(tr.depth[0], 0);
	assert_int_equal(tr.depth[2], 2);
	assert_int_equal(tr.depth[3], 1);
	assert_vec3(tr.origin[0], 0, 0.2, 0, 0.005);
	assert_vec3(tr.origin[1], -0.39, 0.94, 0.22, 0.005);
	assert_vec3(tr.origin[2], -0.78, 1.47, 0.45, 0.005);
	assert_vec3(tr.origin[3], 0.39, 0.94, -0.22, 0.005);
	assert_vec3(tr.origin[4], 0.78, 1.47, -0.45, 0.005);
	scene_free(s);
}

/* 7.1: a root with three children, the second with two. */
static void test_stack_exercise6(void **state)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	struct trace tr = { 0 };

	(void)state;
	add(s, "root", NULL, p);
	add(s, "a", "root", p);
	add(s, "b", "root", p);
	add(s, "c", "root", p);
	add(s, "b1", "b", p);
	add(s, "b2", "b", p);
	assert_int_equal(scene_traverse(s, record, &tr), 3);
	assert_int_equal(tr.n, 6);
	scene_free(s);
}

/* 5.2: between frames. */
static void test_between_frames(void **state)
{
	scene *s = demo(30, 40);
	int base, arm, hand;
	vec3 p;
	mat4 rel;

	(void)state;
	scene_update(s, 1, NULL, NULL);
	base = scene_find(s, "base");
	arm = scene_find(s, "arm");
	hand = scene_find(s, "hand");
	assert_int_equal(scene_between(s, hand, base, vec3_make(0, 0, 0), &p), 0);
	assert_vec3(p, -0.900, 1.272, 0, 0.0005);
	assert_int_equal(scene_between(s, hand, arm, vec3_make(0, 0, 0), &p), 0);
	assert_vec3(p, 0, 0.7, 0, 1e-12);
	assert_int_equal(scene_from_world(s, hand, vec3_make(0, 1, 0), &p), 0);
	assert_vec3(p, 0.386, -0.940, 0, 0.0005);
	assert_int_equal(scene_relative(s, arm, hand, &rel), 0);
	assert_vec3(mat4_column(rel, 3), 0, -0.7, 0, 1e-12);
	/* 5.2: the base's origin (world (0,0.2,0)) in the hand's frame. */
	assert_int_equal(scene_from_world(s, hand, vec3_make(0, 0.2, 0), &p), 0);
	assert_vec3(p, -0.129, -1.553, 0, 0.0005);
	/* And back again. */
	assert_vec3(scene_to_world(s, hand, p), 0, 0.2, 0, 1e-12);
	scene_free(s);
}

/* 5.3: a camera on the hand. */
static void test_camera_node(void **state)
{
	scene *s = demo(30, 40);
	node_props cam = node_props_default();
	mat4 v;
	static const double want[3][4] = {
		{ 0.66, 0.64, -0.38, -0.26 },
		{ -0.56, 0.77, 0.32, -2.01 },
		{ 0.50, 0.00, 0.87, 0.00 },
	};

	(void)state;
	cam.kind = NODE_CAMERA;
	cam.t = vec3_make(0, 0.3, 0);
	add(s, "cam", "hand", cam);
	scene_update(s, 1, NULL, NULL);
	assert_vec3(origin_of(s, "cam"), -0.946, 1.702, 0.546, 0.0005);
	assert_int_equal(scene_view(s, scene_find(s, "cam"), &v), 0);
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 4; c++)
			assert_near(v.m[c * 4 + r], want[r][c], 0.005, "V");
	assert_vec3(mat4_point(v, origin_of(s, "cam")), 0, 0, 0, 1e-12);
	scene_free(s);
}

/* 8.1: world boxes, subtree boxes, sphere, and the five tests. */
static void test_bounds_and_culling(void **state)
{
	scene *s = demo(30, 40);
	int vis[8], tests = 0;
	aabb b;
	sphere sp;
	plane keep_lt1 = { { -1, 0, 0 }, 1 }, keep_lt_m06 = { { -1, 0, 0 }, -0.6 };

	(void)state;
	scene_update(s, 1, NULL, NULL);
	b = scene_world_box(s, scene_find(s, "base"));
	assert_near(b.min.x, -0.478, 0.0005, "base min");
	assert_near(b.max.x, 0.478, 0.0005, "base max");
	b = scene_world_box(s, scene_find(s, "arm"));
	assert_near(b.min.x, -0.919, 0.0005, "arm min");
	assert_near(b.max.x, 0.140, 0.0005, "arm max");
	b = scene_world_box(s, scene_find(s, "hand"));
	assert_near(b.min.x, -1.102, 0.0005, "hand min");
	assert_near(b.max.x, -0.457, 0.0005, "hand max");
	b = scene_subtree_box(s, scene_find(s, "arm"));
	assert_near(b.min.x, -1.102, 0.0005, "arm subtree min");
	assert_near(b.max.x, 0.140, 0.0005, "arm subtree max");
	b = scene_subtree_box(s, scene_find(s, "base"));
	assert_near(b.min.x, -1.102, 0.0005, "tree min");
	assert_near(b.max.x, 0.478, 0.0005, "tree max");
	sp = aabb_sphere(scene_box(s));
	assert_near(sp.radius, 1.318, 0.0005, "radius");
	assert_vec3(sp.center, -0.312, 0.853, 0.143, 0.0005);

	assert_int_equal(scene_cull(s, &keep_lt1, 1, vis, 8, &tests), 3);
	assert_int_equal(tests, 1);
	assert_int_equal(scene_cull(s, &keep_lt_m06, 1, vis, 8, &tests), 2);
	assert_int_equal(tests, 5);
	assert_int_equal(vis[0], scene_find(s, "arm"));
	assert_int_equal(vis[1], scene_find(s, "hand"));
	scene_free(s);
}

/* 9.2: inherited shear, and keep_world refusing it. */
static void test_inherited_shear(void **state)
{
	scene *s = scene_new();
	node_props parent = node_props_default(), child = node_props_default();
	int c;
	vec3 before;

	(void)state;
	parent.s = vec3_make(2, 1, 1);
	child.r = quat_from_axis_angle(vec3_make(0, 0, 1), 45 * DEG);
	add(s, "p", NULL, parent);
	c = add(s, "c", "p", child);
	add(s, "gc", "c", node_props_default());
	scene_update(s, 1, NULL, NULL);
	assert_vec3(mat4_column(scene_world(s, c), 0), 1.414, 0.707, 0, 0.0005);
	assert_vec3(mat4_column(scene_world(s, c), 1), -1.414, 0.707, 0, 0.0005);
	assert_near(scene_shear_deg(s, c), 126.9, 0.05, "shear");
	assert_near(scene_shear_deg(s, scene_find(s, "p")), 90, 1e-9, "parent");

	/* Moving the sheared child to the root with keep_world needs a shear in
	 * its local: refused, nothing changed. */
	uint64_t h = scene_hash(s);
	assert_int_equal(scene_reparent(s, c, -1, -1, true), RIGD_E_NOT_TRS);
	assert_int_equal(scene_hash(s), h);
	assert_int_equal(scene_parent(s, c), scene_find(s, "p"));
	/* Without keep_world it moves, and its world matrix changes. */
	before = mat4_column(scene_world(s, c), 0);
	assert_int_equal(scene_reparent(s, c, -1, -1, false), 0);
	assert_false(fabs(mat4_column(scene_world(s, c), 0).x - before.x) < 1e-3);
	check_invariants(s);
	scene_free(s);
}

/* keep_world where it is possible: every world matrix stays. */
static void test_reparent_keep_world(void **state)
{
	scene *s = demo(30, 40);
	int hand, base;
	mat4 before, after;

	(void)state;
	scene_update(s, 1, NULL, NULL);
	hand = scene_find(s, "hand");
	base = scene_find(s, "base");
	before = scene_world(s, hand);
	assert_int_equal(scene_reparent(s, hand, base, 0, true), 0);
	assert_int_equal(scene_parent(s, hand), base);
	assert_int_equal(scene_child_index(s, hand), 0);
	check_invariants(s);
	assert_int_equal(scene_update(s, 2, NULL, NULL), 1);
	after = scene_world(s, hand);
	assert_true(mat4_max_abs_diff(before, after) < 1e-12);
	/* To the root, keeping the world again; the pivot is kept. */
	assert_int_equal(scene_reparent(s, scene_find(s, "arm"), -1, -1, true), 0);
	check_invariants(s);
	scene_update(s, 3, NULL, NULL);
	assert_vec3(origin_of(s, "arm"), -0.390, 0.936, 0.225, 0.0005);
	scene_free(s);
}

/* A dirty node's world matrix is never stale, and equals the pass's bits. */
static void test_world_never_stale(void **state)
{
	scene *s = demo(30, 40);
	node_props p = node_props_default();
	mat4 lazy, passed;

	(void)state;
	scene_update(s, 1, NULL, NULL);
	p.r = quat_from_axis_angle(vec3_make(0, 1, 0), 90 * DEG);
	scene_set(s, scene_find(s, "base"), PROP_R, &p);
	assert_true(scene_is_dirty(s, scene_find(s, "hand")));
	lazy = scene_world(s, scene_find(s, "hand"));
	assert_vec3(mat4_column(lazy, 3), 0, 1.47, 0.90, 0.005);
	scene_update(s, 2, NULL, NULL);
	passed = scene_world(s, scene_find(s, "hand"));
	assert_memory_equal(lazy.m, passed.m, sizeof(lazy.m));
	scene_free(s);
}

static void test_structure_edits_and_errors(void **state)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	int a, b, c, n;
	uint64_t h;
	char long_id[SCENE_ID_MAX + 2];

	(void)state;
	a = add(s, "a", NULL, p);
	b = add(s, "b", "a", p);
	c = add(s, "c", "a", p);
	assert_int_equal(scene_create(s, "first", a, 0, &p, &n), 0);
	assert_int_equal(scene_child_at(s, a, 0), n);
	assert_int_equal(scene_child_at(s, a, 1), b);
	assert_int_equal(scene_child_at(s, a, 2), c);
	assert_int_equal(scene_create(s, "root2", -1, 0, &p, &n), 0);
	assert_int_equal(scene_at(s, 0), n);
	check_invariants(s);
	scene_update(s, 1, NULL, NULL);
	h = scene_hash(s);

	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	assert_int_equal(scene_create(s, "a", -1, -1, &p, NULL), RIGD_E_DUPLICATE_ID);
	assert_int_equal(scene_create(s, "a/b", -1, -1, &p, NULL), RIGD_E_BAD_ID);
	assert_int_equal(scene_create(s, "..", -1, -1, NULL, NULL), 0); /* dots are allowed */
	assert_int_equal(scene_delete(s, scene_find(s, "..")), 0);
	assert_int_equal(scene_create(s, "", -1, -1, &p, NULL), RIGD_E_BAD_ID);
	assert_int_equal(scene_create(s, long_id, -1, -1, &p, NULL), RIGD_E_BAD_ID);
	assert_int_equal(scene_create(s, "x", 12345, -1, &p, NULL), RIGD_E_UNKNOWN_NODE);
	assert_int_equal(scene_create(s, "x", a, 4, &p, NULL), RIGD_E_BAD_INDEX);
	assert_int_equal(scene_create(s, "x", a, -2, &p, NULL), RIGD_E_BAD_INDEX);
	p.r = (quat){ 0, 0, 0, 0 };
	assert_int_equal(scene_create(s, "x", a, -1, &p, NULL), RIGD_E_ZERO_QUATERNION);
	p.r = quat_identity();
	p.t.y = NAN;
	assert_int_equal(scene_create(s, "x", a, -1, &p, NULL), RIGD_E_NOT_FINITE);
	p.t.y = INFINITY;
	assert_int_equal(scene_set(s, a, PROP_T, &p), RIGD_E_NOT_FINITE);
	p.t.y = 0;
	p.has_bounds = true;
	p.bounds = aabb_make(vec3_make(1, 0, 0), vec3_make(0, 1, 1));
	assert_int_equal(scene_set(s, a, PROP_BOUNDS, &p), RIGD_E_BAD_FIELD);
	p = node_props_default();
	p.name = "caf\xc3\xa9 \xe2\x9c\x93"; /* valid UTF-8 */
	assert_int_equal(scene_set(s, a, PROP_NAME, &p), 0);
	p.name = "bad \xff";
	assert_int_equal(scene_set(s, a, PROP_NAME, &p), RIGD_E_BAD_FIELD);
	p.name = "overlong \xc0\xaf";
	assert_int_equal(scene_set(s, a, PROP_NAME, &p), RIGD_E_BAD_FIELD);
	p.mesh = "surrogate \xed\xa0\x80";
	assert_int_equal(scene_set(s, a, PROP_MESH, &p), RIGD_E_BAD_FIELD);
	p = node_props_default();
	assert_int_equal(scene_set(s, a, PROP_NAME, &p), 0); /* back to no name */
	/* Finite channels whose local matrix overflows (fuzz finding). */
	p.s = vec3_make(2, 1, 1);
	p.pivot = vec3_make(1.7976931348623157e308, 0, 0);
	assert_int_equal(scene_set(s, a, PROP_S | PROP_PIVOT, &p), RIGD_E_NOT_FINITE);
	assert_int_equal(scene_create(s, "huge", -1, -1, &p, NULL), RIGD_E_NOT_FINITE);
	p = node_props_default();
	p.kind = NODE_CAMERA;
	p.znear = 2;
	p.zfar = 1;
	assert_int_equal(scene_set(s, a, PROP_KIND | PROP_CAMERA, &p), RIGD_E_BAD_FIELD);
	assert_int_equal(scene_reparent(s, a, b, -1, false), RIGD_E_CYCLE);
	assert_int_equal(scene_reparent(s, a, a, -1, false), RIGD_E_CYCLE);
	assert_int_equal(scene_reparent(s, b, c, 1, false), RIGD_E_BAD_INDEX);
	assert_int_equal(scene_delete(s, 9999), RIGD_E_UNKNOWN_NODE);
	scene_set_max_nodes(s, scene_count(s));
	assert_int_equal(scene_create(s, "x", -1, -1, NULL, NULL), RIGD_E_LIMIT);
	scene_set_max_nodes(s, SCENE_DEFAULT_MAX_NODES);
	assert_int_equal(scene_hash(s), h); /* nothing above changed anything */
	check_invariants(s);

	/* Reorder among siblings, then delete a subtree; handles are reused. */
	assert_int_equal(scene_reparent(s, c, a, 0, false), 0);
	assert_int_equal(scene_child_at(s, a, 0), c);
	check_invariants(s);
	assert_int_equal(scene_delete(s, a), 0);
	assert_int_equal(scene_count(s), 1);
	assert_int_equal(scene_find(s, "b"), -1);
	check_invariants(s);
	assert_int_equal(scene_create(s, "again", -1, -1, NULL, &n), 0);
	assert_true(n < 5);
	check_invariants(s);
	assert_int_equal(scene_update(s, 2, NULL, NULL), 1);
	scene_free(s);
}

static unsigned rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) & 0xffff;
}

/* scene_traverse callback: counts in *ctx the nodes whose traversal matrix
 * differs in any bit from scene_world. */
static const scene *traverse_scene;

static void traverse_same_bits(void *ctx, int node, int depth, const mat4 *world)
{
	mat4 w = scene_world(traverse_scene, node);

	(void)depth;
	if (memcmp(w.m, world->m, sizeof(w.m)) != 0)
		(*(int *)ctx)++;
}

/* The model of dirtiness the random edits are checked against: a node is
 * dirty when it or an ancestor was created, set or moved since the last
 * scene_update; that pass recomputes exactly the dirty nodes and gives
 * them its stamp. Indexed by handle. */
enum { MODEL_HANDLES = 8192 };
static bool model_edited[MODEL_HANDLES];
static uint64_t model_stamp[MODEL_HANDLES];

static bool model_dirty(const scene *s, int node)
{
	for (int n = node; n >= 0; n = scene_parent(s, n))
		if (model_edited[n])
			return true;
	return false;
}

/* scene_is_dirty and scene_world_stamp of every node against the model;
 * then, with 'stamp', the pass: its count, and every node's new stamp. */
static void check_dirty_model(scene *s, uint64_t stamp, bool update)
{
	int n = scene_count(s), want = 0;

	for (int i = 0; i < n; i++) {
		int h = scene_at(s, i);

		assert_true(h >= 0 && h < MODEL_HANDLES);
		assert_int_equal(scene_is_dirty(s, h), model_dirty(s, h));
		assert_int_equal(scene_world_stamp(s, h), model_stamp[h]);
		want += model_dirty(s, h);
	}
	assert_int_equal(scene_has_dirty(s), want > 0);
	if (!update)
		return;
	for (int i = 0; i < n; i++)
		if (model_dirty(s, scene_at(s, i)))
			model_stamp[scene_at(s, i)] = stamp;
	assert_int_equal(scene_update(s, stamp, NULL, NULL), want);
	memset(model_edited, 0, sizeof(model_edited));
	for (int i = 0; i < n; i++) {
		int h = scene_at(s, i);

		assert_false(scene_is_dirty(s, h));
		assert_int_equal(scene_world_stamp(s, h), model_stamp[h]);
	}
}

/* Random edits against the dirtiness model as they go, then against a
 * from-scratch recomputation of every world matrix. */
static void test_random_edits_match_traversal(void **state)
{
	scene *s = scene_new();
	unsigned seed = 12345;
	char id[32];
	int made = 0;

	(void)state;
	memset(model_edited, 0, sizeof(model_edited));
	for (int step = 0; step < 4000; step++) {
		int op = (int)(rnd(&seed) % 10), n = scene_count(s);
		int any = n ? scene_at(s, (int)(rnd(&seed) % (unsigned)n)) : -1;
		node_props p = node_props_default();

		p.t = vec3_make(rnd(&seed) / 65536.0, rnd(&seed) / 65536.0, rnd(&seed) / 65536.0);
		p.r = quat_from_euler_deg(vec3_make(rnd(&seed) % 360, rnd(&seed) % 360, rnd(&seed) % 360));
		p.s = vec3_make(0.5 + rnd(&seed) / 65536.0, (rnd(&seed) % 2 ? -1 : 1) * (0.5 + rnd(&seed) / 65536.0), 1);
		p.pivot = vec3_make(rnd(&seed) / 65536.0, 0, 0);
		if (op < 4 || n < 3) {
			snprintf(id, sizeof(id), "n%d", made++);
			int par = rnd(&seed) % 5 == 0 ? -1 : any, made_node;
			assert_int_equal(scene_create(s, id, par, -1, &p, &made_node), 0);
			model_edited[made_node] = true;
			model_stamp[made_node] = 0;
		} else if (op < 7) {
			assert_int_equal(scene_set(s, any, PROP_TRANSFORM, &p), 0);
			model_edited[any] = true;
		} else if (op < 9) {
			int to = scene_at(s, (int)(rnd(&seed) % (unsigned)n));
			int rc = scene_reparent(s, any, scene_is_ancestor(s, any, to) ? -1 : to, -1, false);

			assert_int_equal(rc, 0);
			assert_int_equal(scene_parent(s, any), scene_is_ancestor(s, any, to) ? -1 : to);
			model_edited[any] = true;
		} else if (scene_subtree_size(s, any) < 10) {
			assert_int_equal(scene_delete(s, any), 0);
		}
		if (step % 500 == 250) {
			/* Every root edited: a full pass, which leaves the nodes'
			 * records as they are (see node_marked in scene_internal.h). */
			for (int i = 0; i < scene_count(s); i += scene_subtree_size(s, scene_at(s, i))) {
				assert_int_equal(scene_set(s, scene_at(s, i), PROP_T, &p), 0);
				model_edited[scene_at(s, i)] = true;
			}
			check_dirty_model(s, (uint64_t)step + 1, true);
		}
		if (step % 7 == 0 || step % 97 == 0)
			check_dirty_model(s, (uint64_t)step + 1, step % 97 == 0);
	}
	check_invariants(s);
	scene_update(s, 99999, NULL, NULL);
	{
		struct {
			int bad;
		} ctx = { 0 };

		for (int i = 0; i < scene_count(s); i++) {
			int n = scene_at(s, i), p = scene_parent(s, n);
			mat4 want = p < 0 ? scene_local(s, n) : mat4_mul(scene_world(s, p), scene_local(s, n));

			if (mat4_max_abs_diff(want, scene_world(s, n)) > 1e-9 * (1 + fabs(want.m[12])))
				ctx.bad++;
		}
		assert_int_equal(ctx.bad, 0);
	}
	/* The stored matrices drop the last row: it comes back as exactly
	 * +0 +0 +0 1, and the traversal, computed apart from the cache, agrees
	 * with the cache bit for bit. */
	{
		static const double last[4] = { 0, 0, 0, 1 };
		int bad = 0;

		for (int i = 0; i < scene_count(s); i++) {
			mat4 w = scene_world(s, scene_at(s, i)), l = scene_local(s, scene_at(s, i));

			for (int c = 0; c < 4; c++)
				bad += memcmp(&w.m[c * 4 + 3], &last[c], sizeof(double)) != 0 ||
				       memcmp(&l.m[c * 4 + 3], &last[c], sizeof(double)) != 0;
		}
		assert_int_equal(bad, 0);
		bad = 0;
		traverse_scene = s;
		assert_true(scene_traverse(s, traverse_same_bits, &bad) > 0);
		assert_int_equal(bad, 0);
	}
	scene_free(s);
}

/*
 * A long dirty range is recomputed as three parts in lockstep, with handles
 * in preorder (a loaded scene) and out of it (a scene built by inserts under
 * random parents): every world matrix has the bits the separate traversal
 * gives.
 */
static void test_long_ranges_match_traversal(void **state)
{
	enum { N = 3000 };
	scene *s = scene_new();
	unsigned seed = 777;
	char id[32];
	int bad = 0;

	(void)state;
	for (int i = 0; i < N; i++) {
		node_props p = node_props_default();
		int parent = i < 2 ? -1 : scene_at(s, (int)(rnd(&seed) % (unsigned)scene_count(s)));

		p.t = vec3_make(rnd(&seed) / 65536.0, rnd(&seed) / 65536.0, rnd(&seed) / 65536.0);
		p.r = quat_from_euler_deg(vec3_make(rnd(&seed) % 360, rnd(&seed) % 360, 0));
		p.s = vec3_make(0.5 + rnd(&seed) / 65536.0, -1, 1);
		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(scene_create(s, id, parent, -1, &p, NULL), 0);
	}
	for (int i = 0; i < scene_count(s); i += scene_subtree_size(s, scene_at(s, i))) {
		node_props p;

		scene_props(s, scene_at(s, i), &p);
		assert_int_equal(scene_set(s, scene_at(s, i), PROP_T, &p), 0);
	}
	assert_int_equal(scene_update(s, 1, NULL, NULL), N);
	traverse_scene = s;
	assert_true(scene_traverse(s, traverse_same_bits, &bad) > 0);
	assert_int_equal(bad, 0);
	scene_free(s);
}

/*
 * Child indices while the structure changes: a wide scene (so that asking
 * for every node's index builds scene_child_index's cache) under random
 * creates at an index, deletes, and reparents to an index, the same parent
 * included; after each, every node's index equals its place in a walk of
 * its parent's children, and a snapshot-sized walk (every node asked)
 * agrees with single asks made before it.
 */
static void test_child_index_under_edits(void **state)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	unsigned seed = 12345;
	char id[32];
	int made = 0;

	(void)state;
	for (; made < 200; made++) {
		int parent = made < 4 ? -1 : scene_at(s, (int)((seed = seed * 1103515245u + 12345u) >> 8) % scene_count(s));

		snprintf(id, sizeof(id), "n%d", made);
		assert_int_equal(scene_create(s, id, parent, -1, &p, NULL), 0);
	}
	check_invariants(s);
	for (int step = 0; step < 400; step++) {
		unsigned r = (seed = seed * 1103515245u + 12345u) >> 8;
		int n = scene_at(s, (int)(r % (unsigned)scene_count(s)));
		int before = scene_child_index(s, n);   /* one ask at the old order */
		int parent, index;

		assert_true(before >= 0);
		switch (r % 3) {
		case 0:
			index = (int)(r % (unsigned)(scene_child_count(s, n) + 1));
			snprintf(id, sizeof(id), "n%d", made++);
			assert_int_equal(scene_create(s, id, n, index, &p, NULL), 0);
			assert_int_equal(scene_child_index(s, scene_find(s, id)), index);
			break;
		case 1:
			if (scene_count(s) > 150 && scene_subtree_size(s, n) < 20)
				assert_int_equal(scene_delete(s, n), 0);
			break;
		default:
			parent = scene_parent(s, n);
			if (r & 8)
				parent = scene_at(s, (int)((r >> 4) % (unsigned)scene_count(s)));
			if (parent >= 0 && scene_is_ancestor(s, n, parent))
				parent = scene_parent(s, n);
			/* Counted among the siblings without the node itself. */
			index = (int)((r >> 6) % (unsigned)(scene_child_count(s, parent) + 1 -
							    (parent == scene_parent(s, n))));
			assert_int_equal(scene_reparent(s, n, parent, index, false), 0);
			assert_int_equal(scene_child_index(s, n), index);
			break;
		}
		check_invariants(s);
	}
	scene_free(s);

	/* A move that keeps the node's place in the preorder: the first of
	 * second of 70 children moved under the first (appended), with the
	 * cache built just before. */
	s = scene_new();
	assert_int_equal(scene_create(s, "root", -1, -1, &p, NULL), 0);
	for (int k = 0; k < 70; k++) {
		snprintf(id, sizeof(id), "c%d", k);
		assert_int_equal(scene_create(s, id, scene_find(s, "root"), -1, &p, NULL), 0);
	}
	check_invariants(s);
	assert_int_equal(scene_child_index(s, scene_find(s, "c1")), 1);
	assert_int_equal(scene_reparent(s, scene_find(s, "c1"), scene_find(s, "c0"), -1, false), 0);
	assert_int_equal(scene_pos(s, scene_find(s, "c1")), 2);
	assert_int_equal(scene_child_index(s, scene_find(s, "c1")), 0);
	assert_int_equal(scene_child_index(s, scene_find(s, "c2")), 1);
	check_invariants(s);
	scene_free(s);
}

/*
 * Reparents to explicit sibling indices, forward and backward in preorder
 * (the subtree is moved in place by a rotation of 'order'): the node lands
 * at the index asked for, every invariant holds, and moving it back to its
 * old parent and index gives back the same preorder, as a rollback does.
 */
static void test_reparent_to_index_and_back(void **state)
{
	scene *s = scene_new();
	unsigned seed = 777;
	char id[32];
	int order_before[64];

	(void)state;
	for (int i = 0; i < 64; i++) {
		int n = scene_count(s), par = n && rnd(&seed) % 4 ? scene_at(s, (int)(rnd(&seed) % (unsigned)n)) : -1;

		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(scene_create(s, id, par, -1, NULL, NULL), 0);
	}
	for (int step = 0; step < 500; step++) {
		int node = scene_at(s, (int)(rnd(&seed) % 64)), to = scene_at(s, (int)(rnd(&seed) % 64));
		int old_parent = scene_parent(s, node), old_index = scene_child_index(s, node);
		int siblings, index;

		if (scene_is_ancestor(s, node, to))
			to = -1;
		siblings = scene_child_count(s, to) - (scene_parent(s, node) == to ? 1 : 0);
		index = (int)(rnd(&seed) % (unsigned)(siblings + 1));
		for (int i = 0; i < 64; i++)
			order_before[i] = scene_at(s, i);
		assert_int_equal(scene_reparent(s, node, to, index, false), 0);
		check_invariants(s);
		assert_int_equal(scene_parent(s, node), to);
		assert_int_equal(scene_child_index(s, node), index);
		if (step % 2) {
			assert_int_equal(scene_reparent(s, node, old_parent, old_index, false), 0);
			for (int i = 0; i < 64; i++)
				assert_int_equal(scene_at(s, i), order_before[i]);
		}
	}
	scene_free(s);
}

/* scene_set_owned takes the strings it is handed, and only those its mask
 * names; on a validation error it takes nothing. */
static void test_set_owned_takes_strings(void **state)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	char *name = strdup("arm"), *mesh = strdup("arm_mesh"), *long_name;
	int n = add(s, "a", NULL, p);

	(void)state;
	assert_int_equal(scene_set_owned(s, n, PROP_NAME, &p, name, mesh, NULL), 0);
	scene_props(s, n, &p);
	assert_ptr_equal(p.name, name);
	assert_null(p.mesh);
	assert_int_equal(scene_set_owned(s, n, PROP_MESH | PROP_NAME, &p, NULL, mesh, NULL), 0);
	scene_props(s, n, &p);
	assert_null(p.name);
	assert_ptr_equal(p.mesh, mesh);
	long_name = malloc(SCENE_NAME_MAX + 2);
	assert_non_null(long_name);
	memset(long_name, 'x', SCENE_NAME_MAX + 1);
	long_name[SCENE_NAME_MAX + 1] = '\0';
	assert_int_equal(scene_set_owned(s, n, PROP_NAME, &p, long_name, NULL, NULL), RIGD_E_BAD_FIELD);
	scene_props(s, n, &p);
	assert_null(p.name);
	free(long_name);
	assert_int_equal(scene_set_owned(s, 99, PROP_NAME, &p, NULL, NULL, NULL), RIGD_E_UNKNOWN_NODE);
	scene_free(s);
}

/* No recursion anywhere: a chain a million nodes deep. */
static void test_million_deep_chain(void **state)
{
	enum { N = 1000000 };
	scene *s = scene_new();
	char (*ids)[16] = malloc(sizeof(*ids) * N);
	const char **idp = malloc(sizeof(*idp) * N);
	int *parents = malloc(sizeof(int) * N), tests = 0, vis = 0;
	node_props *props = malloc(sizeof(*props) * N), p = node_props_default();
	plane everything = { { 1, 0, 0 }, 10 };

	(void)state;
	for (int i = 0; i < N; i++) {
		snprintf(ids[i], sizeof(ids[i]), "c%d", i);
		idp[i] = ids[i];
		parents[i] = i - 1;
		props[i] = node_props_default();
		props[i].t = vec3_make(0, 1, 0);
	}
	props[N - 1] = box(0.5, 0.5, 0.5);
	props[N - 1].t = vec3_make(0, 1, 0);
	assert_int_equal(scene_load(s, N, idp, parents, props, NULL), 0);
	assert_int_equal(scene_subtree_size(s, 0), N);
	assert_vec3(origin_of(s, ids[N - 1]), 0, N, 0, 0); /* lazily, no pass yet */
	assert_int_equal(scene_update(s, 1, NULL, NULL), N);
	assert_vec3(origin_of(s, ids[N - 1]), 0, N, 0, 0);
	assert_int_equal(scene_depth(s, N - 1), N - 1);
	assert_int_equal(scene_traverse(s, NULL, NULL), N);
	vis = scene_cull(s, &everything, 1, NULL, 0, &tests);
	assert_int_equal(vis, 1);
	/* A leaf edit recomputes one matrix; a mid-chain edit the rest. */
	p.t = vec3_make(0, 2, 0);
	scene_set(s, N - 1, PROP_T, &p);
	assert_int_equal(scene_update(s, 2, NULL, NULL), 1);
	scene_set(s, N / 2, PROP_T, &p);
	assert_int_equal(scene_update(s, 3, NULL, NULL), N - N / 2);
	assert_vec3(origin_of(s, ids[N - 1]), 0, N + 2, 0, 0);
	/* Moving the deep half to the root and deleting it. */
	assert_int_equal(scene_reparent(s, N / 2, -1, -1, true), 0);
	assert_int_equal(scene_delete(s, 0), 0);
	assert_int_equal(scene_count(s), N - N / 2);
	assert_int_equal(scene_update(s, 4, NULL, NULL), N - N / 2);
	assert_vec3(origin_of(s, ids[N - 1]), 0, N + 2, 0, 1e-6);
	scene_free(s);
	free(ids);
	free(idp);
	free(parents);
	free(props);
}

static void test_load_rejects_bad_lists(void **state)
{
	scene *s = scene_new();
	const char *ids[] = { "a", "b", "c", "d" };
	int not_preorder[] = { -1, 0, -1, 1 }, dup_parents[] = { -1, 0, 1, 2 }, bad = -1;
	const char *dup[] = { "a", "b", "a", "d" };

	(void)state;
	assert_int_equal(scene_load(s, 4, ids, not_preorder, NULL, &bad), RIGD_E_BAD_INDEX);
	assert_int_equal(bad, 3);
	assert_int_equal(scene_count(s), 0);
	assert_int_equal(scene_load(s, 4, dup, dup_parents, NULL, &bad), RIGD_E_DUPLICATE_ID);
	assert_int_equal(bad, 2);
	assert_int_equal(scene_find(s, "a"), -1);
	assert_int_equal(scene_load(s, 4, ids, dup_parents, NULL, &bad), 0);
	check_invariants(s);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demo_pose),
		cmocka_unit_test(test_demo_dirty_counts),
		cmocka_unit_test(test_hand_yaw_keeps_position),
		cmocka_unit_test(test_skeleton_counts),
		cmocka_unit_test(test_mirrored_sibling_and_stack),
		cmocka_unit_test(test_stack_exercise6),
		cmocka_unit_test(test_between_frames),
		cmocka_unit_test(test_camera_node),
		cmocka_unit_test(test_bounds_and_culling),
		cmocka_unit_test(test_inherited_shear),
		cmocka_unit_test(test_reparent_keep_world),
		cmocka_unit_test(test_world_never_stale),
		cmocka_unit_test(test_structure_edits_and_errors),
		cmocka_unit_test(test_random_edits_match_traversal),
		cmocka_unit_test(test_reparent_to_index_and_back),
		cmocka_unit_test(test_child_index_under_edits),
		cmocka_unit_test(test_long_ranges_match_traversal),
		cmocka_unit_test(test_set_owned_takes_strings),
		cmocka_unit_test(test_million_deep_chain),
		cmocka_unit_test(test_load_rejects_bad_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
