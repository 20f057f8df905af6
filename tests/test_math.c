/*
 * test_math.c: the math module against docs/transforms.md.
 *
 * Every worked number of docs/transforms.md that is pure matrix, quaternion
 * or box arithmetic is reproduced here to the digits printed: the tolerance
 * is half a unit of the last printed digit, and each such number names its
 * section of transforms.md. The three figures that do not hold as often
 * printed use the corrected values of its section 13. The scene-level claims
 * (nodes, dirty counts, the culling walk and its five tests) belong to
 * test_scene.c.
 *
 * "2D" below is the two-bone rig of transforms.md section 11.
 */
#include "core/err.h"
#include "core/math.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define DEG (M_PI / 180.0)

/* Tolerances. D1..D4: half a unit of a figure printed with 1..4 decimals. */
#define D1 0.05
#define D2 0.005
#define D3 0.0005
#define D4 0.00005
#define EXACT 1e-12 /* a figure transforms.md states exactly (0.7, a unit tip...) */

/* ---- assertions on doubles, reporting the caller's line ---- */

static void near_(double got, double want, double tol, const char *what, const char *file,
		  int line)
{
	if (!(fabs(got - want) <= tol)) {
		print_error("%s = %.17g, want %.17g within %g\n", what, got, want, tol);
		_fail(file, line);
	}
}

static void vec_near_(vec3 got, vec3 want, double tol, const char *what, const char *file,
		      int line)
{
	if (!(fabs(got.x - want.x) <= tol && fabs(got.y - want.y) <= tol &&
	      fabs(got.z - want.z) <= tol)) {
		print_error("%s = (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g) within %g\n",
			    what, got.x, got.y, got.z, want.x, want.y, want.z, tol);
		_fail(file, line);
	}
}

static void mat_near_(mat4 got, mat4 want, double tol, const char *what, const char *file,
		      int line)
{
	double d = mat4_max_abs_diff(got, want);

	if (!(d <= tol)) {
		print_error("%s differs by %.17g (tolerance %g); got, row by row:\n", what, d, tol);
		for (int r = 0; r < 4; r++)
			print_error("  %12.9f %12.9f %12.9f %12.9f\n", got.m[r], got.m[4 + r],
				    got.m[8 + r], got.m[12 + r]);
		_fail(file, line);
	}
}

#define NEAR(got, want, tol) near_((got), (want), (tol), #got, __FILE__, __LINE__)
#define VEC_NEAR(got, want, tol) vec_near_((got), (want), (tol), #got, __FILE__, __LINE__)
#define MAT_NEAR(got, want, tol) mat_near_((got), (want), (tol), #got, __FILE__, __LINE__)

/* Row r, column c of m (transforms.md prints matrices by rows). */
static double at(mat4 m, int r, int c)
{
	return m.m[c * 4 + r];
}

/* Compares the top three rows of m with a 3x4 table printed by rows. */
static void rows_near_(mat4 m, const double want[3][4], double tol, const char *what,
		       const char *file, int line)
{
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 4; c++)
			if (!(fabs(at(m, r, c) - want[r][c]) <= tol)) {
				print_error("%s[%d][%d] = %.17g, want %g within %g\n", what, r, c,
					    at(m, r, c), want[r][c], tol);
				_fail(file, line);
			}
	if (at(m, 3, 0) != 0 || at(m, 3, 1) != 0 || at(m, 3, 2) != 0 || at(m, 3, 3) != 1) {
		print_error("%s: last row is not 0 0 0 1\n", what);
		_fail(file, line);
	}
}

#define ROWS_NEAR(m, want, tol) rows_near_((m), (want), (tol), #m, __FILE__, __LINE__)

/* ---- small builders ---- */

static vec3 v3(double x, double y, double z)
{
	return vec3_make(x, y, z);
}

static mat4 T(double x, double y, double z)
{
	return mat4_translation(v3(x, y, z));
}

static mat4 S(double x, double y, double z)
{
	return mat4_scaling(v3(x, y, z));
}

static mat4 Rx(double deg)
{
	return mat4_rotation_axis(v3(1, 0, 0), deg * DEG);
}

static mat4 Ry(double deg)
{
	return mat4_rotation_axis(v3(0, 1, 0), deg * DEG);
}

static mat4 Rz(double deg)
{
	return mat4_rotation_axis(v3(0, 0, 1), deg * DEG);
}

static mat4 mul3(mat4 a, mat4 b, mat4 c)
{
	return mat4_mul(mat4_mul(a, b), c);
}

static vec3 origin_of(mat4 m)
{
	return mat4_column(m, 3);
}

static mat4 must_invert(mat4 m)
{
	mat4 inv;

	assert_int_equal(mat4_invert_affine(m, &inv), 0);
	return inv;
}

/* Angle of a unit quaternion about z, in degrees (for rotations about z). */
static double z_angle_deg(quat q)
{
	return 2 * atan2(q.z, q.w) / DEG;
}

/* ---- the demo rig (transforms.md 4; also 5, 7.2, 8) ----
 *
 * base: t = (0, 0.2, 0), yaw about y.
 * arm:  t = (0, 0.9, 0), pivot = (0, -0.7, 0), bend about z; with the pivot
 *       rule L = T(t) T(p) R T(-p) this is T_joint R_bend T_pivot =
 *       T(0, 0.2, 0) Rz(bend) T(0, 0.7, 0) of transforms.md 4.
 * hand: t = (0, 0.7, 0).
 */
typedef struct rig {
	mat4 l_base, l_arm, l_hand;
	mat4 w_base, w_arm, w_hand;
} rig;

static mat4 local_base(double yaw_deg)
{
	return mat4_compose_pivot(v3(0, 0.2, 0), quat_from_axis_angle(v3(0, 1, 0), yaw_deg * DEG),
				  v3(1, 1, 1), v3(0, 0, 0));
}

static mat4 local_arm(double bend_deg)
{
	return mat4_compose_pivot(v3(0, 0.9, 0), quat_from_axis_angle(v3(0, 0, 1), bend_deg * DEG),
				  v3(1, 1, 1), v3(0, -0.7, 0));
}

static mat4 local_hand(void)
{
	return mat4_compose_pivot(v3(0, 0.7, 0), quat_identity(), v3(1, 1, 1), v3(0, 0, 0));
}

static rig make_rig(double yaw_deg, double bend_deg)
{
	rig r;

	r.l_base = local_base(yaw_deg);
	r.l_arm = local_arm(bend_deg);
	r.l_hand = local_hand();
	r.w_base = r.l_base;
	r.w_arm = mat4_mul(r.w_base, r.l_arm);
	r.w_hand = mat4_mul(r.w_arm, r.l_hand);
	return r;
}

/* ================= transforms.md 2 to 10: the rules in 3D ================= */

/* 2.1: W_arm = Ry(90) T(1, 0, 0). */
static void test_s3_two_node_chain(void **state)
{
	static const double want[3][4] = {
		{ 0, 0, 1, 0 },
		{ 0, 1, 0, 0 },
		{ -1, 0, 0, -1 },
	};
	/* 2.1: the same product from two TRS transforms, Euler (0, 90, 0) and t = (1, 0, 0). */
	mat4 base = mat4_compose(v3(0, 0, 0), quat_from_euler_deg(v3(0, 90, 0)), v3(1, 1, 1));
	mat4 arm = mat4_compose(v3(1, 0, 0), quat_from_euler_deg(v3(0, 0, 0)), v3(1, 1, 1));
	mat4 w = mat4_mul(base, arm);

	(void)state;
	ROWS_NEAR(w, want, EXACT);                                /* 2.1 matrix */
	ROWS_NEAR(mat4_mul(Ry(90), T(1, 0, 0)), want, EXACT);     /* 2.1 Ry(90) T(1,0,0) */
	VEC_NEAR(origin_of(w), v3(0, 0, -1), EXACT);              /* 2.1 origin at (0,0,-1) */
	/* 2.1: linear part Ry(90), translation Ry(90) (1,0,0). */
	VEC_NEAR(mat4_direction(Ry(90), v3(1, 0, 0)), v3(0, 0, -1), EXACT);
}

/* 4.1 to 4.3: the demo's default pose, yaw 90, and the four bends. */
static void test_s4_default_pose(void **state)
{
	static const double want[3][4] = {
		{ 0.66, -0.56, 0.50, -0.78 },
		{ 0.64, 0.77, 0.00, 1.47 },
		{ -0.38, 0.32, 0.87, 0.45 },
	};
	rig r = make_rig(30, 40);

	(void)state;
	ROWS_NEAR(r.w_hand, want, D2);                                   /* 4.1 W_hand */
	VEC_NEAR(origin_of(r.w_hand), v3(-0.78, 1.47, 0.45), D2);        /* 4.1 hand */
	VEC_NEAR(origin_of(r.w_arm), v3(-0.39, 0.94, 0.22), D2);         /* 4.1 arm centre */
	VEC_NEAR(origin_of(r.w_arm), v3(-0.390, 0.936, 0.225), D3);      /* 4.1, 13.4 unrounded */
	VEC_NEAR(origin_of(r.w_base), v3(0, 0.2, 0), EXACT);             /* 4.1 base centre */
	/* 4.1: L_arm = T_joint R_bend T_pivot with T_joint = T(0,0.2,0) and
	 * T_pivot = T(0,0.7,0), as the pivot rule builds it. */
	MAT_NEAR(r.l_arm, mul3(T(0, 0.2, 0), Rz(40), T(0, 0.7, 0)), EXACT);
}

static void test_s4_yaw_90(void **state)
{
	rig r30 = make_rig(30, 40), r90 = make_rig(90, 40);
	vec3 hand = origin_of(r90.w_hand);

	(void)state;
	VEC_NEAR(hand, v3(0.00, 1.47, 0.90), D2);                          /* 4.2 yaw 90 */
	/* 4.2: same height, swung about the vertical: the base's rotation applied
	 * to the hand's offset from the base. */
	NEAR(hand.y, origin_of(r30.w_hand).y, EXACT);
	VEC_NEAR(hand, vec3_add(v3(0, 0.2, 0),
				mat4_direction(Ry(60), vec3_sub(origin_of(r30.w_hand), v3(0, 0.2, 0)))),
		 EXACT);
}

static void test_s4_four_bends(void **state)
{
	static const double bends[4] = { 0, 40, 80, 120 };

	(void)state;
	/* 4.3: the hand goes from (0, 1.8) at bend 0 to (-1.21, -0.3) at
	 * bend 120, base unyawed. */
	VEC_NEAR(origin_of(make_rig(0, 0).w_hand), v3(0, 1.8, 0), EXACT);
	VEC_NEAR(origin_of(make_rig(0, 120).w_hand), v3(-1.21, -0.3, 0), D2);
	for (int i = 0; i < 4; i++) {
		rig r = make_rig(0, bends[i]);
		vec3 joint = mat4_point(r.w_arm, v3(0, -0.7, 0)); /* the arm's lower end */
		vec3 hand = origin_of(r.w_hand);

		/* 4.3: the joint never moves: it sits on the base's
		 * top surface, 0.2 above the base's centre at 0.2. */
		VEC_NEAR(joint, v3(0, 0.4, 0), EXACT);
		/* The hand rides the arm's tip, 1.4 from the joint at angle bend. */
		VEC_NEAR(hand, v3(-1.4 * sin(bends[i] * DEG), 0.4 + 1.4 * cos(bends[i] * DEG), 0),
			 EXACT);
	}
}

/* 7.2: the mirrored sibling L_arm2 = S(-1, 1, 1) L_arm. */
static void test_s6_mirrored_sibling(void **state)
{
	rig r = make_rig(30, 40);
	mat4 l_arm2 = mat4_mul(S(-1, 1, 1), r.l_arm);
	mat4 w_arm2 = mat4_mul(r.w_base, l_arm2);
	mat4 w_hand2 = mat4_mul(w_arm2, r.l_hand);
	/* 7.2: reflected through the base's own yz plane and then yawed */
	mat4 mirror_in_base = mul3(r.w_base, S(-1, 1, 1), must_invert(r.w_base));

	(void)state;
	/* 7.2 stack trace, top's origin per push */
	VEC_NEAR(origin_of(r.w_base), v3(0, 0.2, 0), EXACT);
	VEC_NEAR(origin_of(r.w_arm), v3(-0.39, 0.94, 0.22), D2);
	VEC_NEAR(origin_of(r.w_hand), v3(-0.78, 1.47, 0.45), D2);
	VEC_NEAR(origin_of(w_arm2), v3(0.39, 0.94, -0.22), D2);
	VEC_NEAR(origin_of(w_hand2), v3(0.78, 1.47, -0.45), D2);   /* 7.2 hand2 */
	VEC_NEAR(origin_of(w_hand2), mat4_point(mirror_in_base, origin_of(r.w_hand)), EXACT);
	NEAR(mat4_det3(w_arm2), -1, EXACT);                        /* 7.2, 9.1: det -1 */
	NEAR(mat4_det3(w_hand2), -1, EXACT);                       /* 9.1: every product below */
	NEAR(mat4_det3(r.w_hand), 1, EXACT);
	/* 9.1: a mirror is still a TRS; it does not shear. */
	NEAR(mat4_shear_deg(w_arm2), 90, EXACT);
}

/* 5.1: a tip out, a point back. */
static void test_s8_local_to_world_and_back(void **state)
{
	static const double want_inv[3][4] = {
		{ 0, 0, -1, -1 },
		{ 0, 1, 0, 0 },
		{ 1, 0, 0, 0 },
	};
	mat4 w = mat4_mul(Ry(90), T(1, 0, 0));
	mat4 inv_trs, inv_aff;

	(void)state;
	VEC_NEAR(mat4_point(w, v3(1, 0, 0)), v3(0, 0, -2), EXACT);        /* 5.1 tip */
	assert_int_equal(mat4_invert_trs(w, &inv_trs), 0);
	assert_int_equal(mat4_invert_affine(w, &inv_aff), 0);
	ROWS_NEAR(inv_trs, want_inv, EXACT);                                /* 5.1 W^-1 */
	ROWS_NEAR(inv_aff, want_inv, EXACT);
	VEC_NEAR(mat4_point(inv_trs, v3(0, 0, -1)), v3(0, 0, 0), EXACT);   /* 5.1 origin home */
	/* 5.1: linear part Ry(-90), translation -R^T t = (-1, 0, 0). */
	MAT_NEAR(inv_trs, mat4_mul(Ry(-90), T(0, 0, 1)), EXACT);
	VEC_NEAR(origin_of(inv_trs), v3(-1, 0, 0), EXACT);
}

/* 5.2: between any two nodes. */
static void test_s9_between_nodes(void **state)
{
	rig r = make_rig(30, 40);
	vec3 hand = origin_of(r.w_hand);
	mat4 hand_from_arm = mat4_mul(must_invert(r.w_hand), r.w_arm);
	mat4 inv_trs;

	(void)state;
	VEC_NEAR(hand, v3(-0.779, 1.472, 0.450), D3);                                 /* 5.2 */
	VEC_NEAR(mat4_point(must_invert(r.w_base), hand), v3(-0.900, 1.272, 0), D3);  /* 5.2 */
	/* 5.2: 1.272 = 0.2 + 1.4 cos 40, -0.900 = -1.4 sin 40. */
	VEC_NEAR(mat4_point(must_invert(r.w_base), hand),
		 v3(-1.4 * sin(40 * DEG), 0.2 + 1.4 * cos(40 * DEG), 0), EXACT);
	VEC_NEAR(mat4_point(must_invert(r.w_arm), hand), v3(0, 0.7, 0), EXACT);      /* 5.2 exactly */
	VEC_NEAR(mat4_point(must_invert(r.w_hand), v3(0, 1, 0)), v3(0.386, -0.940, 0), D3); /* 5.2 */
	VEC_NEAR(origin_of(hand_from_arm), v3(0, -0.7, 0), EXACT);                   /* 5.2 */
	/* 5.2: W_B^-1 W_A is itself a rigid transform. */
	NEAR(mat4_det3(hand_from_arm), 1, EXACT);
	NEAR(mat4_shear_deg(hand_from_arm), 90, EXACT);
	/* 5.2: the base's origin in the hand's frame, through the TRS inverse. */
	assert_int_equal(mat4_invert_trs(r.w_hand, &inv_trs), 0);
	VEC_NEAR(mat4_point(inv_trs, v3(0, 0.2, 0)), v3(-0.129, -1.553, 0), D3);
	/* 5.2's derivation: the base's origin relative to the hand, in base
	 * coordinates, turned by Rz(-40). */
	VEC_NEAR(mat4_point(inv_trs, v3(0, 0.2, 0)),
		 mat4_direction(Rz(-40), v3(1.4 * sin(40 * DEG), -0.2 - 1.4 * cos(40 * DEG), 0)),
		 EXACT);
}

/* 5.3: a camera on the hand, L_cam = T(0, 0.3, 0). */
static void test_s10_camera_node(void **state)
{
	static const double want_view[3][4] = {
		{ 0.66, 0.64, -0.38, -0.26 },
		{ -0.56, 0.77, 0.32, -2.01 },
		{ 0.50, 0.00, 0.87, 0.00 },
	};
	rig r = make_rig(30, 40);
	mat4 w_cam = mat4_mul(r.w_hand, T(0, 0.3, 0));
	mat4 view;

	(void)state;
	VEC_NEAR(origin_of(w_cam), v3(-0.946, 1.702, 0.546), D3);              /* 5.3 */
	VEC_NEAR(mat4_point(r.w_hand, v3(0, 0.3, 0)), v3(-0.946, 1.702, 0.546), D3);
	assert_int_equal(mat4_invert_trs(w_cam, &view), 0);
	ROWS_NEAR(view, want_view, D2);                                          /* 5.3 V */
	MAT_NEAR(view, must_invert(w_cam), EXACT);
	/* 5.3: the rows of V are the columns of W_hand's rotation. */
	for (int r_ = 0; r_ < 3; r_++)
		for (int c = 0; c < 3; c++)
			NEAR(at(view, r_, c), at(r.w_hand, c, r_), EXACT);
	/* 5.3: V sends the camera's own world position to the origin. */
	VEC_NEAR(mat4_point(view, origin_of(w_cam)), v3(0, 0, 0), EXACT);
	/* 5.3: the camera looks down the hand's -z. */
	VEC_NEAR(mat4_direction(w_cam, v3(0, 0, -1)), mat4_direction(r.w_hand, v3(0, 0, -1)), EXACT);
}

/* 8.1: world boxes, subtree boxes, the sphere, the plane tests. */
static void test_s11_bounding_volumes(void **state)
{
	rig r = make_rig(30, 40);
	aabb base = aabb_transform(aabb_make(v3(-0.35, -0.2, -0.35), v3(0.35, 0.2, 0.35)), r.w_base);
	aabb arm = aabb_transform(aabb_make(v3(-0.12, -0.7, -0.12), v3(0.12, 0.7, 0.12)), r.w_arm);
	aabb hand = aabb_transform(aabb_make(v3(-0.22, -0.12, -0.22), v3(0.22, 0.12, 0.22)),
				   r.w_hand);
	aabb arm_subtree = aabb_union(arm, hand);
	aabb tree = aabb_union(base, arm_subtree);
	sphere ball = aabb_sphere(tree);
	plane keep_below_1 = { v3(-1, 0, 0), 1 };       /* x < 1: -x + 1 >= 0 */
	plane keep_below_m06 = { v3(-1, 0, 0), -0.6 };  /* x < -0.6 */

	(void)state;
	NEAR(base.min.x, -0.478, D3);                   /* 8.1 base [-0.478, 0.478] */
	NEAR(base.max.x, 0.478, D3);
	NEAR(arm.min.x, -0.919, D3);                    /* 8.1 arm [-0.919, 0.140] */
	NEAR(arm.max.x, 0.140, D3);
	NEAR(hand.min.x, -1.102, D3);                   /* 8.1 hand [-1.102, -0.457] */
	NEAR(hand.max.x, -0.457, D3);
	NEAR(arm_subtree.min.x, -1.102, D3);            /* 8.1 arm subtree [-1.102, 0.140] */
	NEAR(arm_subtree.max.x, 0.140, D3);
	NEAR(tree.min.x, -1.102, D3);                   /* 8.1 tree [-1.102, 0.478] */
	NEAR(tree.max.x, 0.478, D3);
	NEAR(ball.radius, 1.318, D3);                   /* 8.1 sphere */
	VEC_NEAR(ball.center, v3(-0.312, 0.853, 0.143), D3);

	/* 8.1: against x < 1 the tree's box is entirely inside. */
	assert_int_equal(plane_classify(keep_below_1, tree), SIDE_INSIDE);
	/* 8.1: against x < -0.6 the tree straddles, the base is rejected, the
	 * arm subtree straddles and both its children straddle. */
	assert_int_equal(plane_classify(keep_below_m06, tree), SIDE_STRADDLE);
	assert_int_equal(plane_classify(keep_below_m06, base), SIDE_OUTSIDE);
	assert_int_equal(plane_classify(keep_below_m06, arm_subtree), SIDE_STRADDLE);
	assert_int_equal(plane_classify(keep_below_m06, arm), SIDE_STRADDLE);
	assert_int_equal(plane_classify(keep_below_m06, hand), SIDE_STRADDLE);
}

/* 9.2: inherited shear, W = S(2, 1, 1) Rz(45). */
static void test_s13_inherited_shear(void **state)
{
	mat4 w = mat4_mul(S(2, 1, 1), Rz(45));
	vec3 c0 = mat4_column(w, 0), c1 = mat4_column(w, 1);
	vec3 t, s;
	quat q;
	double err = -1;
	bool exact;

	(void)state;
	VEC_NEAR(c0, v3(1.414, 0.707, 0), D3);                          /* 9.2 columns */
	VEC_NEAR(c1, v3(-1.414, 0.707, 0), D3);
	NEAR(vec3_length(c0), 1.581, D3);                               /* 9.2 both 1.581 */
	NEAR(vec3_length(c1), 1.581, D3);
	NEAR(vec3_dot(c0, c1), -1.5, D3);                               /* 9.2: dot -1.5 */
	NEAR(mat4_shear_deg(w), 126.9, D1);                             /* 9.2 126.9 deg */

	/* 9.2: the read-back takes the column lengths as the scale and the
	 * first column's direction as the rotation. */
	exact = mat4_decompose(w, 1e-9, &t, &q, &s, &err);
	assert_false(exact);
	VEC_NEAR(s, v3(1.581, 1.581, 1), D3);                           /* 9.2 S(1.581, 1.581) */
	NEAR(z_angle_deg(q), 26.6, D1);                                 /* 9.2 26.6 deg, not 45 */
	VEC_NEAR(t, v3(0, 0, 0), EXACT);
	NEAR(err, 0.707, D3);                                           /* 9.2 0.707 */
	/* The same figure by hand: Rz(26.6) S(1.581, 1.581) against W. */
	NEAR(mat4_max_abs_diff(mat4_mul(Rz(atan2(c0.y, c0.x) / DEG),
					S(vec3_length(c0), vec3_length(c1), 1)),
			       w),
	     0.707, D3);
	/* 9.2: the composed matrix is correct and draws the parallelogram: the
	 * square's corner (1, 1) under S(2,1,1) Rz(45) is (0, 1.414), which no
	 * rotation and scale of the read-back reproduces. */
	VEC_NEAR(mat4_point(w, v3(1, 1, 0)), v3(0, sqrt(2), 0), EXACT);
	/* The order that keeps a TRS: Rz(45) S(2, 1, 1). */
	NEAR(mat4_shear_deg(mat4_mul(Rz(45), S(2, 1, 1))), 90, EXACT);
}

/* 10: the chain as glTF nodes. */
static void test_s14_gltf_quaternions(void **state)
{
	quat yaw = quat_from_axis_angle(v3(0, 1, 0), 30 * DEG);
	quat bend = quat_from_axis_angle(v3(0, 0, 1), 40 * DEG);
	quat printed;
	mat4 base = mat4_compose(v3(0, 0.2, 0), yaw, v3(1, 1, 1));
	mat4 joint = mat4_compose(v3(0, 0.2, 0), bend, v3(1, 1, 1));
	mat4 arm = mat4_compose(v3(0, 0.7, 0), quat_identity(), v3(1, 1, 1));
	mat4 hand = mat4_compose(v3(0, 0.7, 0), quat_identity(), v3(1, 1, 1));
	rig r = make_rig(30, 40);

	(void)state;
	NEAR(yaw.x, 0, EXACT);                                          /* 10 (0, 0.2588, 0, 0.9659) */
	NEAR(yaw.y, 0.2588, D4);
	NEAR(yaw.z, 0, EXACT);
	NEAR(yaw.w, 0.9659, D4);
	NEAR(yaw.y, sin(15 * DEG), EXACT);                              /* 10 (sin 15, cos 15) */
	NEAR(yaw.w, cos(15 * DEG), EXACT);
	NEAR(bend.x, 0, EXACT);                                         /* 10 (0, 0, 0.3420, 0.9397) */
	NEAR(bend.y, 0, EXACT);
	NEAR(bend.z, 0.3420, D4);
	NEAR(bend.w, 0.9397, D4);
	/* 10: joint * arm is the pivot sandwich T_joint R_bend T_pivot. */
	MAT_NEAR(mat4_mul(joint, arm), r.l_arm, EXACT);
	/* 10: the four glTF nodes give the rig's world matrices. */
	MAT_NEAR(base, r.w_base, EXACT);
	MAT_NEAR(mul3(base, joint, arm), r.w_arm, EXACT);
	MAT_NEAR(mat4_mul(mul3(base, joint, arm), hand), r.w_hand, EXACT);
	/* The file's four-digit quaternions are unit to their printed digits. */
	assert_int_equal(quat_normalize((quat){ 0, 0.2588, 0, 0.9659 }, &printed), 0);
	NEAR(printed.y, yaw.y, D4);
	NEAR(printed.w, yaw.w, D4);
}

/* 2.2 (three levels, the order), 3.1 (a joint at an end), 5.1 (a point back). */
static void test_exercises_1_to_4(void **state)
{
	mat4 w_arm = mat4_mul(Ry(90), T(1, 0, 0));

	(void)state;
	/* 2.2: T(0,1,0) Rz(90) T(2,0,0) sends the origin to (0, 3, 0). */
	VEC_NEAR(origin_of(mul3(T(0, 1, 0), Rz(90), T(2, 0, 0))), v3(0, 3, 0), EXACT);
	/* 2.2: swapped, Rz(90) T(0,1,0) T(2,0,0) gives (-1, 2, 0). */
	VEC_NEAR(origin_of(mul3(Rz(90), T(0, 1, 0), T(2, 0, 0))), v3(-1, 2, 0), EXACT);
	/* 3.1: L = T(0,3,0) Rz(theta) T(0,1,0) is the pivot rule with
	 * pivot (0,-1,0) at t = (0,4,0); its translation is (0,3,0) + Rz(theta)
	 * (0,1,0) and the box's lower end stays at (0, 3, 0). */
	for (double theta = -150; theta <= 180; theta += 30) {
		mat4 l = mat4_compose_pivot(v3(0, 4, 0), quat_from_axis_angle(v3(0, 0, 1), theta * DEG),
					    v3(1, 1, 1), v3(0, -1, 0));

		MAT_NEAR(l, mul3(T(0, 3, 0), Rz(theta), T(0, 1, 0)), EXACT);
		VEC_NEAR(origin_of(l), vec3_add(v3(0, 3, 0), mat4_direction(Rz(theta), v3(0, 1, 0))),
			 EXACT);
		VEC_NEAR(mat4_point(l, v3(0, -1, 0)), v3(0, 3, 0), EXACT);
	}
	/* 5.1: world (1, 0, -1) is (0, 0, 1) in the arm's frame; forward
	 * check W_arm (0,0,1) = (1, 0, -1). */
	VEC_NEAR(mat4_point(must_invert(w_arm), v3(1, 0, -1)), v3(0, 0, 1), EXACT);
	VEC_NEAR(mat4_point(w_arm, v3(0, 0, 1)), v3(1, 0, -1), EXACT);
}

/*
 * 7 and 7.1: the matrix stack driven by a depth-first list with depths,
 * the iterative walk of transforms.md 7. The math
 * it needs is the product order top * L; the matrices it yields must be the
 * root-to-node products. The scene's own traversal is tested in
 * test_scene.c.
 */
static void stack_walk(const int *depth, const mat4 *local, int n, mat4 *world, int *max_depth)
{
	mat4 stack[8];
	int top = 0, current = 0;
	mat4 w = mat4_identity();

	*max_depth = 0;
	for (int i = 0; i < n; i++) {
		if (depth[i] > current) {
			assert_true(top < 8);
			stack[top++] = w;
		} else {
			for (int k = 0; k < current - depth[i]; k++)
				top--;
		}
		assert_true(top > 0);
		w = mat4_mul(stack[top - 1], local[i]);
		world[i] = w;
		current = depth[i];
		if (current > *max_depth)
			*max_depth = current;
	}
}

static void test_stack_walk(void **state)
{
	/* 7: base(1) arm(2) grip1(3) grip2(3) switch(2). */
	const int lecture_depth[5] = { 1, 2, 3, 3, 2 };
	/* 7.1: root, child a, child b with two children, child c. */
	const int ex6_depth[6] = { 1, 2, 2, 3, 3, 2 };
	mat4 l[6] = {
		mat4_compose(v3(1, 2, 3), quat_from_euler_deg(v3(10, 20, 30)), v3(1, 2, 1)),
		mat4_compose(v3(0, 1, 0), quat_from_euler_deg(v3(0, 0, 40)), v3(1, 1, 1)),
		mat4_compose(v3(2, 0, 0), quat_from_euler_deg(v3(-30, 0, 5)), v3(0.5, 1, 1)),
		mat4_compose(v3(0, 0, 1), quat_from_euler_deg(v3(0, 70, 0)), v3(1, 1, -1)),
		mat4_compose(v3(0, 3, 0), quat_from_euler_deg(v3(15, 25, 35)), v3(1, 1, 1)),
		mat4_compose(v3(-1, 0, 0), quat_from_euler_deg(v3(5, 0, 0)), v3(3, 1, 1)),
	};
	mat4 w[6];
	int max_depth;

	(void)state;
	stack_walk(lecture_depth, l, 5, w, &max_depth);
	MAT_NEAR(w[0], l[0], 0);                                  /* base: L0 */
	MAT_NEAR(w[1], mat4_mul(l[0], l[1]), 0);                  /* arm: L0.L1 */
	MAT_NEAR(w[2], mul3(l[0], l[1], l[2]), 0);                /* grip1: L0.L1.L2 */
	MAT_NEAR(w[3], mul3(l[0], l[1], l[3]), 0);                /* grip2: L0.L1.L3 */
	MAT_NEAR(w[4], mat4_mul(l[0], l[4]), 0);                  /* switch: L0.L4 */
	assert_int_equal(max_depth, 3);

	stack_walk(ex6_depth, l, 6, w, &max_depth);
	assert_int_equal(max_depth, 3);                           /* 7.1: maximum depth three */
	MAT_NEAR(w[1], mat4_mul(l[0], l[1]), 0);                  /* 7.1: the three children */
	MAT_NEAR(w[2], mat4_mul(l[0], l[2]), 0);                  /* start from the root's */
	MAT_NEAR(w[5], mat4_mul(l[0], l[5]), 0);
	MAT_NEAR(w[3], mul3(l[0], l[2], l[3]), 0);                /* the grandchildren from */
	MAT_NEAR(w[4], mul3(l[0], l[2], l[4]), 0);                /* the second child's */
	/* The product is not commutative: the reversed order differs. */
	assert_true(mat4_max_abs_diff(w[3], mul3(l[3], l[2], l[0])) > 0.1);
}

/* 9.3: shear depends on the order. */
static void test_exercise_9_shear_order(void **state)
{
	mat4 sheared = mat4_mul(S(1, 3, 1), Rz(30));
	mat4 safe = mat4_mul(Rz(30), S(1, 3, 1));
	vec3 t, s;
	quat q;
	double err;

	(void)state;
	VEC_NEAR(mat4_column(sheared, 0), v3(0.866, 1.5, 0), D3);         /* 9.3 columns */
	VEC_NEAR(mat4_column(sheared, 1), v3(-0.5, 2.598, 0), D3);
	NEAR(vec3_dot(mat4_column(sheared, 0), mat4_column(sheared, 1)), 3.464, D3); /* 9.3 */
	NEAR(vec3_length(mat4_column(sheared, 0)), 1.732, D3);
	NEAR(vec3_length(mat4_column(sheared, 1)), 2.646, D3);
	NEAR(mat4_shear_deg(sheared), 40.9, D1);                           /* 9.3: 40.9 deg */
	assert_false(mat4_decompose(sheared, 1e-9, &t, &q, &s, &err));
	assert_true(err > 0.1);

	VEC_NEAR(mat4_column(safe, 0), v3(0.866, 0.5, 0), D3);             /* 9.3 swapped */
	VEC_NEAR(mat4_column(safe, 1), v3(-1.5, 2.598, 0), D3);
	NEAR(vec3_dot(mat4_column(safe, 0), mat4_column(safe, 1)), 0, EXACT);
	NEAR(mat4_shear_deg(safe), 90, EXACT);                             /* 9.3: still a TRS */
	assert_true(mat4_decompose(safe, 1e-12, &t, &q, &s, &err));
	VEC_NEAR(s, v3(1, 3, 1), EXACT);
	NEAR(z_angle_deg(q), 30, EXACT);
}

/* ================= transforms.md 11: two bones in 2D, embedded in 3D =================
 *
 * The 2D rig is drawn in screen coordinates, y pointing down, and measures
 * angles counter-clockwise as seen on screen (elbow.y = 260 - 155 sin 25).
 * In 3D its plane is z = 0 of a y-up frame seen through a mirror: the
 * screen node is S(1, -1, 1), and below it each bone is built by the
 * local rule of transforms.md 3, local = T(position) T(pivot) R(angle)
 * S(scale) T(-pivot), which is mat4_compose_pivot.
 */
typedef struct bones2d {
	mat4 screen, upper, fore;        /* locals */
	mat4 w_upper, w_fore;            /* worlds, in screen coordinates */
} bones2d;

static mat4 bone_local(double x, double y, double angle_deg, double scale, double px, double py)
{
	return mat4_compose_pivot(v3(x, y, 0), quat_from_axis_angle(v3(0, 0, 1), angle_deg * DEG),
				  v3(scale, scale, 1), v3(px, py, 0));
}

/* Root at screen (x, y), upper bone 155 long at 'upper_deg', forearm at
 * 'fore_deg' relative to it. */
static bones2d make_bones(double x, double y, double upper_deg, double fore_deg)
{
	bones2d b;

	b.screen = S(1, -1, 1);
	b.upper = bone_local(x, -y, upper_deg, 1, 0, 0);
	b.fore = bone_local(155, 0, fore_deg, 1, 0, 0);
	b.w_upper = mat4_mul(b.screen, b.upper);
	b.w_fore = mat4_mul(b.w_upper, b.fore);
	return b;
}

/* The on-screen angle of a bone's x axis, counter-clockwise as seen. */
static double screen_angle_deg(mat4 w)
{
	vec3 x = mat4_column(w, 0);

	return atan2(-x.y, x.x) / DEG;
}

static void test_002_two_bones_by_hand(void **state)
{
	bones2d b = make_bones(180, 260, 25, 40);
	vec3 elbow = origin_of(b.w_fore);
	vec3 hand = mat4_point(b.w_fore, v3(125, 0, 0));

	(void)state;
	VEC_NEAR(elbow, v3(320.48, 194.49, 0), D2);                       /* 11.1 elbow */
	VEC_NEAR(hand, v3(373.305, 81.206, 0), D3);                       /* 11.1, 13.3 unrounded */
	VEC_NEAR(hand, v3(373.31, 81.20, 0), 0.01);                       /* 13.3: as often printed */
	/* 11.1: the forearm's world angle is 25 + 40 = 65, not 40. */
	NEAR(screen_angle_deg(b.w_fore), 65, EXACT);
	/* 11.1: M_world(child) = M_world(parent) M_local(child) and T R differs
	 * from R T. */
	MAT_NEAR(b.w_fore, mul3(b.screen, b.upper, b.fore), 0);
	assert_true(mat4_max_abs_diff(mat4_mul(T(155, 0, 0), Rz(40)),
				      mat4_mul(Rz(40), T(155, 0, 0))) > 1);
	/* The mirror makes the screen frame left-handed; the bones are rigid. */
	NEAR(mat4_det3(b.w_fore), -1, EXACT);
	NEAR(mat4_det3(b.fore), 1, EXACT);
}

/* 11.2, the invariants table, one test per row. */
static void test_002_identity_pose(void **state)
{
	/* Every local matrix is identity, pivot or not: every vertex keeps its
	 * original coordinate. */
	const vec3 verts[4] = { { 0, 0, 0 }, { 42, 18, 0 }, { -7.5, 300, 0 }, { 1e3, -1e-3, 0 } };
	mat4 l_root = bone_local(0, 0, 0, 1, 0, 0);
	mat4 l_child = bone_local(0, 0, 0, 1, 42, 18);
	mat4 w = mat4_mul(l_root, l_child);

	(void)state;
	MAT_NEAR(l_child, mat4_identity(), 0);
	for (int i = 0; i < 4; i++)
		VEC_NEAR(mat4_point(w, verts[i]), verts[i], 0);
}

static void test_002_root_translation_only(void **state)
{
	/* Root moves by (20, -10) on screen: every descendant receives the same
	 * world offset. */
	bones2d a = make_bones(180, 260, 25, 40);
	bones2d b = make_bones(200, 250, 25, 40);
	const vec3 pts[3] = { { 0, 0, 0 }, { 125, 0, 0 }, { 60, -8, 0 } };

	(void)state;
	VEC_NEAR(vec3_sub(origin_of(b.w_upper), origin_of(a.w_upper)), v3(20, -10, 0), EXACT);
	for (int i = 0; i < 3; i++)
		VEC_NEAR(vec3_sub(mat4_point(b.w_fore, pts[i]), mat4_point(a.w_fore, pts[i])),
			 v3(20, -10, 0), EXACT);
}

static void test_002_parent_rotation_only(void **state)
{
	/* Parent 30, child local angle 0: child world angle 30 and the bone
	 * length unchanged. */
	bones2d b = make_bones(180, 260, 30, 0);

	(void)state;
	NEAR(screen_angle_deg(b.w_fore), 30, EXACT);
	NEAR(vec3_length(vec3_sub(origin_of(b.w_fore), origin_of(b.w_upper))), 155, EXACT);
	NEAR(vec3_length(vec3_sub(mat4_point(b.w_fore, v3(125, 0, 0)), origin_of(b.w_fore))), 125,
	     EXACT);
}

static void test_002_pivot_rotation(void **state)
{
	/* Transform the pivot point itself: its world position is unchanged by
	 * the rotation (and by the scale, which also acts about the pivot). */
	const vec3 pivot = { 42, 18, 0 };

	(void)state;
	for (double angle = -180; angle <= 180; angle += 22.5) {
		mat4 l = bone_local(0, 0, angle, 1, pivot.x, pivot.y);
		mat4 scaled = bone_local(5, -3, angle, 2.5, pivot.x, pivot.y);

		VEC_NEAR(mat4_point(l, pivot), pivot, EXACT);
		VEC_NEAR(mat4_point(scaled, pivot), vec3_add(pivot, v3(5, -3, 0)), EXACT);
		/* The local rule of transforms.md 3 written out, and its T(p) R T(-p). */
		MAT_NEAR(l, mul3(T(pivot.x, pivot.y, 0), Rz(angle), T(-pivot.x, -pivot.y, 0)), EXACT);
		MAT_NEAR(scaled,
			 mat4_mul(mul3(T(5, -3, 0), T(pivot.x, pivot.y, 0), Rz(angle)),
				  mat4_mul(S(2.5, 2.5, 1), T(-pivot.x, -pivot.y, 0))),
			 EXACT);
	}
}

static void test_002_length_preservation(void **state)
{
	/* Rotation and translation only: joint distances stay 155 and 125, and
	 * the rotation block's determinant stays 1 (11.2). */
	(void)state;
	for (int i = 0; i < 50; i++) {
		double upper = -170 + 7.3 * i, fore = 95 - 11.1 * i;
		bones2d b = make_bones(180 + 3 * i, 260 - 2 * i, upper, fore);
		vec3 shoulder = origin_of(b.w_upper), elbow = origin_of(b.w_fore);
		vec3 hand = mat4_point(b.w_fore, v3(125, 0, 0));

		NEAR(vec3_length(vec3_sub(elbow, shoulder)), 155, 1e-10);
		NEAR(vec3_length(vec3_sub(hand, elbow)), 125, 1e-10);
		NEAR(mat4_det3(mat4_mul(b.upper, b.fore)), 1, EXACT);
	}
}

/* 12 and 13.2: blending two poses is not element-wise matrix
 * interpolation. */
static mat4 elementwise_mid(mat4 a, mat4 b)
{
	mat4 m;

	for (int i = 0; i < 16; i++)
		m.m[i] = 0.5 * a.m[i] + 0.5 * b.m[i];
	return m;
}

static void test_002_blending(void **state)
{
	mat4 mid90 = elementwise_mid(Rz(0), Rz(90));
	mat4 mid45 = elementwise_mid(Rz(0), Rz(45));

	(void)state;
	/* 12, 13.2: determinant cos^2(theta/2), each axis cos(theta/2). */
	NEAR(mat4_det3(mid90), 0.5, EXACT);                                /* 90 deg: 0.5 */
	NEAR(vec3_length(mat4_column(mid90, 0)), 0.707, D3);               /* each axis 0.707 */
	NEAR(1 - vec3_length(mat4_column(mid90, 1)), 0.29, D2);            /* a 29% shrink */
	NEAR(mat4_det3(mid45), 0.854, D3);                                 /* 45 deg: 0.854 */
	assert_true(fabs(mat4_det3(mid90) - 0.85) > 0.3);                  /* not 0.85 */
	for (double theta = 10; theta < 180; theta += 10) {
		mat4 mid = elementwise_mid(Rx(-20), mat4_mul(Rx(-20), Ry(theta)));
		double c = cos(theta / 2 * DEG);

		NEAR(mat4_det3(mid), c * c, EXACT);
		/* The axis of rotation keeps its length; the other two shrink. */
		NEAR(vec3_length(mat4_column(mid, 0)), c, EXACT);
		NEAR(vec3_length(mat4_column(mid, 1)), 1, EXACT);
	}

	/* The channel blend stays a rotation: lerp the position and the angle
	 * (the shortest path), or nlerp the quaternions, then recompose (12). */
	for (double t = 0; t <= 1; t += 0.125) {
		vec3 pos = vec3_add(vec3_scale(v3(10, 0, 0), 1 - t), vec3_scale(v3(0, 20, 0), t));
		mat4 channel = mat4_compose(pos, quat_from_axis_angle(v3(0, 0, 1), t * 90 * DEG),
					    v3(1, 1, 1));
		quat qa = quat_identity(), qb = quat_from_axis_angle(v3(0, 0, 1), 90 * DEG), q;
		quat mix = { (1 - t) * qa.x + t * qb.x, (1 - t) * qa.y + t * qb.y,
			     (1 - t) * qa.z + t * qb.z, (1 - t) * qa.w + t * qb.w };
		mat4 naive = mat4_identity();

		for (int i = 0; i < 16; i++) /* the element-wise M = (1 - t) M_a + t M_b */
			naive.m[i] = (1 - t) * mat4_compose(v3(10, 0, 0), qa, v3(1, 1, 1)).m[i] +
				     t * mat4_compose(v3(0, 20, 0), qb, v3(1, 1, 1)).m[i];
		assert_int_equal(quat_normalize(mix, &q), 0);
		NEAR(mat4_det3(channel), 1, EXACT);
		NEAR(mat4_det3(mat4_from_quat(q)), 1, EXACT);
		NEAR(mat4_shear_deg(mat4_from_quat(q)), 90, EXACT);
		NEAR(vec3_length(mat4_column(mat4_from_quat(q), 0)), 1, EXACT);
		/* Both blends put the origin in the same place; only the naive
		 * one shrinks, its rotation block's determinant being
		 * (1 - t)^2 + t^2... */
		VEC_NEAR(origin_of(naive), origin_of(channel), EXACT);
		NEAR(mat4_det3(naive), 1 - 2 * t * (1 - t), EXACT);
	}
	/* ...which at t = 0.5 is the 0.5 of 13.2, while the nlerp midpoint
	 * is the 45 degree pose exactly. */
	{
		quat mid = { 0, 0, 0.5 * sin(45 * DEG), 0.5 + 0.5 * cos(45 * DEG) }, q;

		assert_int_equal(quat_normalize(mid, &q), 0);
		MAT_NEAR(mat4_from_quat(q), Rz(45), EXACT);
	}
}

/* ================= the module's own contract ================= */

/* A fixed pseudo-random sequence (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double rnd(double lo, double hi)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return lo + (hi - lo) * (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static quat rnd_quat(void)
{
	quat q;

	assert_int_equal(quat_normalize((quat){ rnd(-1, 1), rnd(-1, 1), rnd(-1, 1), rnd(-1, 1) }, &q),
			 0);
	return q;
}

static void test_compose_matches_products(void **state)
{
	(void)state;
	for (int i = 0; i < 200; i++) {
		vec3 t = v3(rnd(-5, 5), rnd(-5, 5), rnd(-5, 5));
		vec3 s = v3(rnd(-3, 3), rnd(-3, 3), rnd(-3, 3));
		vec3 p = v3(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2));
		quat q = rnd_quat();
		mat4 r = mat4_from_quat(q);

		MAT_NEAR(mat4_compose(t, q, s), mul3(mat4_translation(t), r, mat4_scaling(s)), 1e-14);
		MAT_NEAR(mat4_compose_pivot(t, q, s, p),
			 mat4_mul(mul3(mat4_translation(t), mat4_translation(p), r),
				  mat4_mul(mat4_scaling(s), mat4_translation(vec3_scale(p, -1)))),
			 1e-13);
		/* Quaternion product = matrix product; rotate = matrix times vector. */
		{
			quat q2 = rnd_quat();

			MAT_NEAR(mat4_from_quat(quat_mul(q, q2)),
				 mat4_mul(mat4_from_quat(q), mat4_from_quat(q2)), 1e-14);
			VEC_NEAR(quat_rotate(q, t), mat4_direction(r, t), 1e-14);
		}
		NEAR(mat4_det3(r), 1, 1e-14);
		NEAR(mat4_det3(mat4_compose(t, q, s)), s.x * s.y * s.z, 1e-13);
		/* A direction ignores the translation, a point does not. */
		VEC_NEAR(mat4_direction(mat4_compose(t, q, s), p),
			 vec3_sub(mat4_point(mat4_compose(t, q, s), p), t), 1e-13);
	}
	/* The right-handed axes: Rz(90) sends x to y, Rx(90) y to z, Ry(90) z to x. */
	VEC_NEAR(mat4_direction(Rz(90), v3(1, 0, 0)), v3(0, 1, 0), EXACT);
	VEC_NEAR(mat4_direction(Rx(90), v3(0, 1, 0)), v3(0, 0, 1), EXACT);
	VEC_NEAR(mat4_direction(Ry(90), v3(0, 0, 1)), v3(1, 0, 0), EXACT);
	/* A zero axis gives the identity. */
	MAT_NEAR(mat4_rotation_axis(v3(0, 0, 0), 1.0), mat4_identity(), 0);
	/* The axis need not be unit. */
	MAT_NEAR(mat4_rotation_axis(v3(0, 0, 7), 0.3), mat4_rotation_axis(v3(0, 0, 1), 0.3), 1e-15);
}

/* mat34_mul (and mat34_mul_wide) gives, bit for bit, the first three rows
 * of mat4_mul_affine, signed zeros included (the scene's hot loop relies on
 * it), and the mat34
 * round trip restores an affine matrix with the last row 0 0 0 1. */
static void test_mat34_mul_same_bits(void **state)
{
	(void)state;
	for (int i = 0; i < 500; i++) {
		mat4 a = mat4_compose_pivot(v3(rnd(-5, 5), rnd(-5, 5), rnd(-5, 5)), rnd_quat(),
					    v3(rnd(-3, 3), rnd(-3, 3), rnd(-3, 3)),
					    v3(rnd(-2, 2), rnd(-2, 2), rnd(-2, 2)));
		mat4 b = mat4_compose(v3(rnd(-5, 5), rnd(-5, 5), rnd(-5, 5)), rnd_quat(),
				      v3(rnd(-3, 3), rnd(-3, 3), rnd(-3, 3)));
		mat4 want, got;
		mat34 a34, b34, out;

		/* Zeros of both signs where the products and sums can keep or
		 * lose the sign: a zero row in b, a negative zero translation. */
		if (i % 4 == 1)
			b.m[1] = b.m[5] = b.m[9] = -0.0;
		if (i % 4 == 2)
			b.m[12] = b.m[13] = b.m[14] = -0.0, a.m[12] = -0.0;
		if (i % 4 == 3)
			a = mat4_scaling(v3(-0.0, 1, -0.0));
		a34 = mat34_from_mat4(a);
		b34 = mat34_from_mat4(b);
		mat4_mul_affine(a.m, b.m, want.m);
		mat34_mul(a34.m, b34.m, out.m);
		got = mat4_from_mat34(out);
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < 4; c++)
				assert_memory_equal(&got.m[c * 4 + r], &want.m[c * 4 + r], sizeof(double));
#ifdef MAT34_HAVE_WIDE
		{
			mat34 wide;

			mat34_mul_wide(a34.m, b34.m, wide.m);
			assert_memory_equal(wide.m, out.m, sizeof(out.m));
		}
#endif
		assert_memory_equal(mat4_from_mat34(a34).m, a.m, sizeof(a.m));
	}
	{
		mat4 g = mat4_from_mat34(mat34_from_mat4(mat4_identity()));
		static const double last[4] = { 0, 0, 0, 1 };

		for (int c = 0; c < 4; c++)
			assert_memory_equal(&g.m[c * 4 + 3], &last[c], sizeof(double));
	}
}

static void test_euler_order_and_round_trips(void **state)
{
	quat q;
	vec3 e;

	(void)state;
	/* Order 'XYZ': R = Rx(x) Ry(y) Rz(z). */
	MAT_NEAR(mat4_from_quat(quat_from_euler_deg(v3(10, 20, 30))), mul3(Rx(10), Ry(20), Rz(30)),
		 1e-15);
	/* three.js 0.16x, new Quaternion().setFromEuler(new Euler(10, 20, 30 deg,
	 * 'XYZ')), printed with toFixed(17). */
	q = quat_from_euler_deg(v3(10, 20, 30));
	NEAR(q.x, 0.12767944069578063, 1e-15);
	NEAR(q.y, 0.14487812541736914, 1e-15);
	NEAR(q.z, 0.26853582275156918, 1e-15);
	NEAR(q.w, 0.94371436414748899, 1e-15);
	/* three.js, new Euler().setFromQuaternion(new Quaternion(0.1, -0.7, 0.3,
	 * 0.2).normalize(), 'XYZ'), in degrees. */
	assert_int_equal(quat_normalize((quat){ 0.1, -0.7, 0.3, 0.2 }, &q), 0);
	VEC_NEAR(quat_to_euler_deg(q), v3(128.8113840367584, -20.43877957608153, 153.8689994550614),
		 1e-11);

	/* Euler -> quaternion -> Euler is the identity on x, z in (-180, 180],
	 * y in (-90, 90). */
	for (int i = 0; i < 500; i++) {
		vec3 in = v3(rnd(-180, 180), rnd(-89.9, 89.9), rnd(-180, 180));

		VEC_NEAR(quat_to_euler_deg(quat_from_euler_deg(in)), in, 1e-9);
	}
	/* Quaternion -> Euler -> quaternion gives the same rotation for any q,
	 * including at and a hair away from gimbal lock (y = +-90), where x and
	 * z are individually ill-conditioned but the rotation is not. */
	for (int i = 0; i < 500; i++) {
		quat in = rnd_quat();
		vec3 angles = quat_to_euler_deg(in);

		MAT_NEAR(mat4_from_quat(quat_from_euler_deg(angles)), mat4_from_quat(in), 1e-13);
		assert_true(angles.x > -180 && angles.x <= 180);
		assert_true(angles.y >= -90 && angles.y <= 90);
		assert_true(angles.z > -180 && angles.z <= 180);
	}
	{
		static const double pitches[6] = { 90, -90, 89.99, -89.99, 89.9999999, 89.99999999999 };

		for (int i = 0; i < 6; i++) {
			quat in = quat_from_euler_deg(v3(10, pitches[i], 20));

			e = quat_to_euler_deg(in);
			NEAR(e.y, pitches[i], 1e-9);
			MAT_NEAR(mat4_from_quat(quat_from_euler_deg(e)), mat4_from_quat(in), 1e-13);
		}
	}
	/* Exactly at the lock the split is three.js's: z = 0. Since Ry(+-90)
	 * turns z onto +-x, Rx(a) Ry(90) Rz(c) = Rx(a + c) Ry(90) and
	 * Rx(a) Ry(-90) Rz(c) = Rx(a - c) Ry(-90). */
	e = quat_to_euler_deg(quat_from_euler_deg(v3(10, 90, 20)));
	VEC_NEAR(e, v3(30, 90, 0), 1e-9);
	e = quat_to_euler_deg(quat_from_euler_deg(v3(10, -90, 20)));
	VEC_NEAR(e, v3(-10, -90, 0), 1e-9);
	/* Half-open range: a half turn about x reads as +180, never -180. */
	e = quat_to_euler_deg((quat){ 1, 0, 0, 0 });
	VEC_NEAR(e, v3(180, 0, 0), EXACT);
	e = quat_to_euler_deg((quat){ 0, 0, 1, 0 });
	VEC_NEAR(e, v3(0, 0, 180), EXACT);
}

static void test_invert_affine_sheared(void **state)
{
	mat4 m = mat4_mul(mat4_compose(v3(1, -2, 3), quat_from_euler_deg(v3(30, -50, 70)),
				       v3(2, 0.5, -3)),
			  mat4_compose(v3(0.3, 0, -4), quat_from_euler_deg(v3(-20, 10, 45)),
				       v3(1, 4, 0.25)));
	mat4 inv, before;

	(void)state;
	assert_true(fabs(mat4_shear_deg(m) - 90) > 10); /* really sheared */
	assert_int_equal(mat4_invert_affine(m, &inv), 0);
	MAT_NEAR(mat4_mul(m, inv), mat4_identity(), 1e-12);
	MAT_NEAR(mat4_mul(inv, m), mat4_identity(), 1e-12);
	NEAR(mat4_det3(inv) * mat4_det3(m), 1, 1e-12);
	/* The TRS fast path is only for orthogonal columns; on a TRS both agree. */
	{
		mat4 trs = mat4_compose(v3(4, 5, -6), rnd_quat(), v3(-0.5, 3, 2e-3)), a, b;

		assert_int_equal(mat4_invert_trs(trs, &a), 0);
		assert_int_equal(mat4_invert_affine(trs, &b), 0);
		MAT_NEAR(a, b, 1e-9);
		MAT_NEAR(mat4_mul(trs, a), mat4_identity(), 1e-12);
	}
	/* Tiny and huge scales are not singular: nothing is lost but magnitude,
	 * though det3 itself underflows to 0 (1e-330) or overflows. */
	assert_int_equal(mat4_invert_affine(mat4_mul(Rz(30), S(1e-110, 1e-110, 1e-110)), &inv), 0);
	MAT_NEAR(inv, mat4_mul(S(1e110, 1e110, 1e110), Rz(-30)), 1e96);
	assert_int_equal(mat4_invert_affine(S(1e200, 1e-200, 1e200), &inv), 0);
	VEC_NEAR(v3(inv.m[0] * 1e200, inv.m[5] * 1e-200, inv.m[10] * 1e200), v3(1, 1, 1), 1e-15);

	/* Singular: refused with SINGULAR and *out untouched. */
	{
		mat4 dependent = mat4_identity(), zero_col = S(1, 0, 1), flat = mat4_mul(S(1, 1, 0), m);
		mat4 nonfinite = m;
		static const double v[9] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9 };

		for (int c = 0; c < 3; c++)
			for (int r = 0; r < 3; r++)
				dependent.m[c * 4 + r] = v[c * 3 + r];
		nonfinite.m[13] = NAN;
		memset(&before, 0x5a, sizeof before);
		inv = before;
		assert_int_equal(mat4_invert_affine(zero_col, &inv), RIGD_E_SINGULAR);
		assert_int_equal(mat4_invert_affine(flat, &inv), RIGD_E_SINGULAR);
		/* det rounds to 1.7e-17, not 0: an absolute test would pass it. */
		assert_int_equal(mat4_invert_affine(dependent, &inv), RIGD_E_SINGULAR);
		assert_int_equal(mat4_invert_affine(nonfinite, &inv), RIGD_E_SINGULAR);
		assert_memory_equal(&inv, &before, sizeof inv);
	}
}

static void test_invert_trs(void **state)
{
	mat4 inv, before;

	(void)state;
	for (int i = 0; i < 100; i++) {
		vec3 s = v3(rnd(0.1, 3), rnd(0.1, 3), rnd(0.1, 3));

		if (i % 2)
			s.x = -s.x; /* mirrored */
		{
			mat4 m = mat4_compose(v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9)), rnd_quat(), s);

			assert_int_equal(mat4_invert_trs(m, &inv), 0);
			MAT_NEAR(mat4_mul(m, inv), mat4_identity(), 1e-13);
			MAT_NEAR(mat4_mul(inv, m), mat4_identity(), 1e-13);
		}
	}
	/* Scales whose squares under- or overflow are still ordinary scales. */
	assert_int_equal(mat4_invert_trs(mat4_mul(Rz(30), S(1e-170, 1e160, 1)), &inv), 0);
	VEC_NEAR(v3(inv.m[0] * 1e-170, inv.m[5] * 1e160, inv.m[10]), v3(cos(30 * DEG), cos(30 * DEG), 1),
		 1e-15);

	memset(&before, 0x5a, sizeof before);
	inv = before;
	assert_int_equal(mat4_invert_trs(S(1, 0, 1), &inv), RIGD_E_SINGULAR);
	assert_int_equal(mat4_invert_trs(T(INFINITY, 0, 0), &inv), RIGD_E_SINGULAR);
	/* The inverse's translation, -1e308 / 1e-300, overflows. */
	assert_int_equal(mat4_invert_trs(mat4_mul(T(1e308, 0, 0), S(1e-300, 1, 1)), &inv),
			 RIGD_E_SINGULAR);
	assert_int_equal(mat4_invert_trs(mat4_scaling(v3(1, 1, NAN)), &inv), RIGD_E_SINGULAR);
	assert_memory_equal(&inv, &before, sizeof inv);
}

static void test_decompose(void **state)
{
	vec3 t, s;
	quat q;
	double err;

	(void)state;
	/* Exact TRS, with a negative scale: the flag says exact, and the parts
	 * recompose the matrix. */
	for (int i = 0; i < 200; i++) {
		vec3 tin = v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9));
		vec3 sin_ = v3(rnd(0.2, 4), rnd(0.2, 4), rnd(0.2, 4));
		quat qin = rnd_quat();
		mat4 m;

		if (i % 3 == 0)
			sin_.x = -sin_.x;
		else if (i % 3 == 1)
			sin_.z = -sin_.z; /* comes back as a negative x scale */
		m = mat4_compose(tin, qin, sin_);
		err = -1;
		assert_true(mat4_decompose(m, 1e-12, &t, &q, &s, &err));
		assert_true(err >= 0 && err <= 1e-12);
		MAT_NEAR(mat4_compose(t, q, s), m, 1e-12);
		VEC_NEAR(t, tin, 0);
		NEAR(quat_length(q), 1, 1e-15);
		assert_true((s.x < 0) == (mat4_det3(m) < 0));
		assert_true(s.y > 0 && s.z > 0);
		if (i % 3 == 0) { /* the same parts come back, up to the quaternion's sign */
			VEC_NEAR(s, sin_, 1e-12);
			NEAR(fabs(q.x * qin.x + q.y * qin.y + q.z * qin.z + q.w * qin.w), 1, 1e-12);
		}
	}
	/* The mirrored arm of transforms.md 7.2 is a TRS with s = (-1, 1, 1) (9.1). */
	{
		rig r = make_rig(30, 40);
		mat4 w_arm2 = mat4_mul(r.w_base, mat4_mul(S(-1, 1, 1), r.l_arm));

		assert_true(mat4_decompose(w_arm2, 1e-12, &t, &q, &s, &err));
		VEC_NEAR(s, v3(-1, 1, 1), 1e-15);
	}
	/* A zero scale keeps the rotation it has: S(0, 1, 1) after Rz(30). */
	{
		mat4 m = mat4_compose(v3(1, 2, 3), quat_from_axis_angle(v3(0, 0, 1), 30 * DEG),
				      v3(0, 2, 1));
		mat4 flat = mat4_compose(v3(0, 0, 0), quat_from_euler_deg(v3(10, 20, 30)), v3(0, 0, 3));

		assert_true(mat4_decompose(m, 1e-12, &t, &q, &s, &err));
		VEC_NEAR(s, v3(0, 2, 1), 1e-15);
		NEAR(z_angle_deg(q), 30, 1e-12);
		assert_true(mat4_decompose(flat, 1e-12, &t, &q, &s, &err));
		assert_true(mat4_decompose(S(0, 0, 0), 1e-12, &t, &q, &s, &err));
	}
	/* Sheared: not exact, and max_err may be NULL. */
	assert_false(mat4_decompose(mat4_mul(S(1, 2, 3), Rx(20)), 1e-9, &t, &q, &s, NULL));
	/* Non-finite never reads as exact. */
	assert_false(mat4_decompose(T(NAN, 0, 0), 1e300, &t, &q, &s, &err));
}

/* The definition of transforms.md 8: the min and max of the eight corners. */
static aabb corners_box(aabb b, mat4 m)
{
	aabb out = aabb_empty();

	for (int i = 0; i < 8; i++) {
		vec3 c = v3(i & 1 ? b.max.x : b.min.x, i & 2 ? b.max.y : b.min.y,
			    i & 4 ? b.max.z : b.min.z);
		vec3 w = mat4_point(m, c);

		out = aabb_union(out, aabb_make(w, w));
	}
	return out;
}

static void test_aabb_transform_is_eight_corners(void **state)
{
	(void)state;
	for (int i = 0; i < 300; i++) {
		vec3 lo = v3(rnd(-3, 1), rnd(-3, 1), rnd(-3, 1));
		aabb box = aabb_make(lo, vec3_add(lo, v3(rnd(0, 4), rnd(0, 4), rnd(0, 4))));
		mat4 m = mat4_compose(v3(rnd(-9, 9), rnd(-9, 9), rnd(-9, 9)), rnd_quat(),
				      v3(rnd(-3, 3), rnd(-3, 3), rnd(-3, 3)));
		aabb got, want;

		if (i % 2) /* sheared */
			m = mat4_mul(m, mat4_compose(v3(1, 0, 0), rnd_quat(), v3(rnd(-2, 2), 1, 0.5)));
		got = aabb_transform(box, m);
		want = corners_box(box, m);
		VEC_NEAR(got.min, want.min, 1e-12);
		VEC_NEAR(got.max, want.max, 1e-12);
	}
	/* The union's identity stays empty under any transform. */
	assert_true(aabb_is_empty(aabb_empty()));
	assert_true(aabb_is_empty(aabb_transform(aabb_empty(), Rz(30))));
	assert_false(aabb_is_empty(aabb_make(v3(1, 1, 1), v3(1, 1, 1))));
	{
		aabb b = aabb_make(v3(-1, 2, 0), v3(3, 4, 5));
		aabb u = aabb_union(aabb_empty(), b);

		VEC_NEAR(u.min, b.min, 0);
		VEC_NEAR(u.max, b.max, 0);
	}
	/* The sphere: centre and half-diagonal. */
	{
		sphere sp = aabb_sphere(aabb_make(v3(-1, -2, -3), v3(3, 2, 1)));

		VEC_NEAR(sp.center, v3(1, 0, -1), 0);
		NEAR(sp.radius, sqrt(12), 1e-15);
	}
}

static void test_plane_classify(void **state)
{
	aabb box = aabb_make(v3(-1, -1, -1), v3(1, 1, 1));
	plane tilted = { v3(1 / sqrt(3), 1 / sqrt(3), 1 / sqrt(3)), 0 };

	(void)state;
	/* x >= 2: outside; x >= -2: inside; x >= 0: straddles. */
	assert_int_equal(plane_classify((plane){ v3(1, 0, 0), -2 }, box), SIDE_OUTSIDE);
	assert_int_equal(plane_classify((plane){ v3(1, 0, 0), 2 }, box), SIDE_INSIDE);
	assert_int_equal(plane_classify((plane){ v3(1, 0, 0), 0 }, box), SIDE_STRADDLE);
	/* Negative normals pick the opposite corners. */
	assert_int_equal(plane_classify((plane){ v3(0, -1, 0), -1.5 }, box), SIDE_OUTSIDE);
	assert_int_equal(plane_classify((plane){ v3(0, 0, -1), 1.5 }, box), SIDE_INSIDE);
	/* Tilted: the corner (1,1,1) is sqrt(3) along n. */
	tilted.d = -sqrt(3) - 1e-9;
	assert_int_equal(plane_classify(tilted, box), SIDE_OUTSIDE);
	tilted.d = -sqrt(3) + 1e-9;
	assert_int_equal(plane_classify(tilted, box), SIDE_STRADDLE);
	tilted.d = sqrt(3) + 1e-9;
	assert_int_equal(plane_classify(tilted, box), SIDE_INSIDE);
	tilted.d = sqrt(3) - 1e-9;
	assert_int_equal(plane_classify(tilted, box), SIDE_STRADDLE);
	/* A box touching the plane from inside is inside (dot + d >= 0). */
	assert_int_equal(plane_classify((plane){ v3(1, 0, 0), 1 }, box), SIDE_INSIDE);
}

static void test_quat_normalize(void **state)
{
	quat out, before = { 7, 7, 7, 7 };

	(void)state;
	assert_int_equal(quat_normalize((quat){ 1, 2, 3, 4 }, &out), 0);
	NEAR(out.x, 1 / sqrt(30), 1e-16);
	NEAR(out.w, 4 / sqrt(30), 1e-16);
	NEAR(quat_length(out), 1, 1e-15);
	/* Huge and small but finite quaternions are directions like any other. */
	assert_int_equal(quat_normalize((quat){ 0, 3e200, 0, 4e200 }, &out), 0);
	NEAR(out.y, 0.6, 1e-16);
	NEAR(out.w, 0.8, 1e-16);
	assert_int_equal(quat_normalize((quat){ 0, 0, 3e-11, -4e-11 }, &out), 0);
	NEAR(out.z, 0.6, 1e-16);
	NEAR(out.w, -0.8, 1e-16);

	out = before;
	assert_int_equal(quat_normalize((quat){ 0, 0, 0, 0 }, &out), RIGD_E_ZERO_QUATERNION);
	assert_int_equal(quat_normalize((quat){ 0, 0, -0.0, 0 }, &out), RIGD_E_ZERO_QUATERNION);
	assert_int_equal(quat_normalize((quat){ 1e-13, 0, 0, 0 }, &out), RIGD_E_ZERO_QUATERNION);
	assert_int_equal(quat_normalize((quat){ 0, 0, 0, 1e-300 }, &out), RIGD_E_ZERO_QUATERNION);
	assert_int_equal(quat_normalize((quat){ NAN, 0, 0, 1 }, &out), RIGD_E_NOT_FINITE);
	assert_int_equal(quat_normalize((quat){ 0, INFINITY, 0, 1 }, &out), RIGD_E_NOT_FINITE);
	assert_int_equal(quat_normalize((quat){ 0, 0, 0, -INFINITY }, &out), RIGD_E_NOT_FINITE);
	assert_memory_equal(&out, &before, sizeof out);
}

static void test_shear_measure(void **state)
{
	(void)state;
	NEAR(mat4_shear_deg(mat4_identity()), 90, 0);
	NEAR(mat4_shear_deg(mat4_compose(v3(1, 2, 3), rnd_quat(), v3(-2, 5, 0.1))), 90, 1e-12);
	/* Zero columns are skipped; nothing left reads as 90. */
	NEAR(mat4_shear_deg(S(0, 0, 0)), 90, 0);
	NEAR(mat4_shear_deg(mat4_mul(S(2, 1, 0), Rz(45))), 126.86989764584402, 1e-12);
	/* The pair furthest from 90 wins, whichever side of 90 it is on:
	 * S(1,3,1) Rz(30) has 40.9 between x and y, S(2,1,1) Rz(45) 126.9. */
	NEAR(mat4_shear_deg(mat4_mul(S(1, 3, 1), Rz(30))), acos(2 / sqrt(7)) / DEG, 1e-12);
}

/* Normalising a normalised quaternion changes no bit: undo, replay and glTF
 * round trips store rotations back and must get the same scene. */
static void test_quat_normalize_idempotent(void **state)
{
	unsigned seed = 7;
	int moved = 0;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		double c[4];
		quat a, b;

		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			c[k] = ((seed >> 8) & 0xffff) / 32768.0 - 1.0;
		}
		if (quat_normalize((quat){ c[0], c[1], c[2], c[3] }, &a) != 0)
			continue;
		assert_int_equal(quat_normalize(a, &b), 0);
		moved += memcmp(&a, &b, sizeof(a)) != 0;
	}
	assert_int_equal(moved, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s3_two_node_chain),
		cmocka_unit_test(test_s4_default_pose),
		cmocka_unit_test(test_s4_yaw_90),
		cmocka_unit_test(test_s4_four_bends),
		cmocka_unit_test(test_s6_mirrored_sibling),
		cmocka_unit_test(test_s8_local_to_world_and_back),
		cmocka_unit_test(test_s9_between_nodes),
		cmocka_unit_test(test_s10_camera_node),
		cmocka_unit_test(test_s11_bounding_volumes),
		cmocka_unit_test(test_s13_inherited_shear),
		cmocka_unit_test(test_s14_gltf_quaternions),
		cmocka_unit_test(test_exercises_1_to_4),
		cmocka_unit_test(test_stack_walk),
		cmocka_unit_test(test_exercise_9_shear_order),
		cmocka_unit_test(test_002_two_bones_by_hand),
		cmocka_unit_test(test_002_identity_pose),
		cmocka_unit_test(test_002_root_translation_only),
		cmocka_unit_test(test_002_parent_rotation_only),
		cmocka_unit_test(test_002_pivot_rotation),
		cmocka_unit_test(test_002_length_preservation),
		cmocka_unit_test(test_002_blending),
		cmocka_unit_test(test_compose_matches_products),
		cmocka_unit_test(test_mat34_mul_same_bits),
		cmocka_unit_test(test_euler_order_and_round_trips),
		cmocka_unit_test(test_invert_affine_sheared),
		cmocka_unit_test(test_invert_trs),
		cmocka_unit_test(test_decompose),
		cmocka_unit_test(test_aabb_transform_is_eight_corners),
		cmocka_unit_test(test_plane_classify),
		cmocka_unit_test(test_quat_normalize),
		cmocka_unit_test(test_quat_normalize_idempotent),
		cmocka_unit_test(test_shear_measure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
