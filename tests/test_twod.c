/*
 * test_twod.c: 2D scenes (server/core): the screen convention and the
 * worked two-bone example of docs/transforms.md (section 8), the plane
 * rules and their errors, the five invariants of a bone hierarchy, the
 * relative ops rotate and move (a million small turns without drift),
 * two-bone ik in 2D and 3D against hand-computed answers, and the
 * resolved batch that replays a relative edit bit for bit.
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

#include "core/edit.h"
#include "core/err.h"
#include "core/math.h"
#include "core/scene.h"

#define DEG (M_PI / 180.0)

/* ---------- helpers ---------- */

static scene *new_scene(int dims)
{
	scene *s = scene_new();

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, dims), 0);
	return s;
}

/* Applies 'b' and asserts it succeeded; releases it. */
static void apply_ok(scene *s, edit_batch *b)
{
	edit_error err;
	int rc = edit_apply(s, b, NULL, NULL, &err);

	if (rc)
		fail_msg("batch refused: %s", err.message);
	edit_batch_release(b);
}

/* Applies 'b', asserts it failed with 'code' naming op 'op' and 'field',
 * and that the scene did not change; releases it. */
static void apply_fails(scene *s, edit_batch *b, int code, int op, const char *field)
{
	edit_error err;
	uint64_t before, after;

	scene_update(s, 1, NULL, NULL);
	before = scene_hash(s);
	assert_int_equal(edit_apply(s, b, NULL, NULL, &err), code);
	assert_int_equal(err.code, code);
	assert_int_equal(err.op, op);
	assert_string_equal(err.field, field);
	scene_update(s, 1, NULL, NULL);
	after = scene_hash(s);
	assert_true(before == after);
	edit_batch_release(b);
}

static edit_op *add_node(edit_batch *b, const char *id, const char *parent, vec3 t)
{
	edit_op *op = edit_batch_add(b, EDIT_CREATE, id);

	assert_non_null(op);
	if (parent)
		assert_int_equal(edit_op_set_parent(op, parent), 0);
	op->fields |= EDIT_F_T;
	op->t = t;
	return op;
}

/* The world position of a node's joint: its pivot under its world matrix. */
static vec3 joint(const scene *s, const char *id)
{
	int n = scene_find(s, id);
	node_props p;

	assert_true(n >= 0);
	scene_props(s, n, &p);
	return mat4_point(scene_world(s, n), p.pivot);
}

static double angle_of(const scene *s, const char *id)
{
	node_props p;

	scene_props(s, scene_find(s, id), &p);
	return quat_to_angle2d_deg(p.r);
}

static void assert_near(double got, double want, double tol)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void assert_vec_near(vec3 got, vec3 want, double tol)
{
	assert_near(got.x, want.x, tol);
	assert_near(got.y, want.y, tol);
	assert_near(got.z, want.z, tol);
}

/* The article's arm: shoulder at (180, 260) turned 'a1', a 155-long upper
 * bone to the elbow turned 'a2', a 125-long forearm to the hand. */
static scene *arm(double a1, double a2)
{
	scene *s = new_scene(2);
	edit_batch b;
	edit_op *op;

	edit_batch_init(&b);
	op = add_node(&b, "shoulder", NULL, vec3_make(180, 260, 0));
	op->fields |= EDIT_F_ANGLE;
	op->angle_deg = a1;
	op = add_node(&b, "elbow", "shoulder", vec3_make(155, 0, 0));
	op->fields |= EDIT_F_ANGLE;
	op->angle_deg = a2;
	add_node(&b, "hand", "elbow", vec3_make(125, 0, 0));
	apply_ok(s, &b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

/* ---------- the convention and the worked example ---------- */

static void test_worked_example(void **state)
{
	scene *s = arm(25, 40);
	vec3 elbow = joint(s, "elbow"), hand = joint(s, "hand");

	(void)state;
	/* y down, counter-clockwise on screen: the elbow goes up the screen. */
	assert_near(elbow.x, 180 + 155 * cos(25 * DEG), 1e-12);
	assert_near(elbow.y, 260 - 155 * sin(25 * DEG), 1e-12);
	assert_near(elbow.x, 320.48, 0.005);
	assert_near(elbow.y, 194.49, 0.005);
	/* The forearm's world angle is 25 + 40 = 65, not 40. */
	assert_near(hand.x, elbow.x + 125 * cos(65 * DEG), 1e-12);
	assert_near(hand.y, elbow.y - 125 * sin(65 * DEG), 1e-12);
	assert_near(hand.x, 373.305, 0.01);
	assert_near(hand.y, 81.206, 0.01);
	assert_near(angle_of(s, "shoulder"), 25, 1e-12);
	assert_near(angle_of(s, "elbow"), 40, 1e-12);
	assert_int_equal(scene_dims(s), 2);
	scene_free(s);
}

static void test_angle_convention(void **state)
{
	quat q = quat_from_angle2d_deg(90);

	(void)state;
	/* +90 on screen turns +x to -y (up the screen): about z by -90. */
	assert_vec_near(quat_rotate(q, vec3_make(1, 0, 0)), vec3_make(0, -1, 0), 1e-15);
	assert_near(quat_to_angle2d_deg(q), 90, 1e-12);
	assert_near(quat_to_angle2d_deg(quat_from_angle2d_deg(180)), 180, 1e-12);
	assert_near(quat_to_angle2d_deg(quat_from_angle2d_deg(-180)), 180, 1e-12);
	assert_near(quat_to_angle2d_deg(quat_from_angle2d_deg(270)), -90, 1e-12);
	assert_near(quat_to_angle2d_deg(quat_from_angle2d_deg(-30)), -30, 1e-12);
	assert_near(quat_to_angle2d_deg((quat){ 0, 0, -q.z, -q.w }), 90, 1e-12);
}

/* ---------- the plane ---------- */

static void test_plane_refusals(void **state)
{
	scene *s = arm(0, 0), *s3 = new_scene(3);
	edit_batch b;
	edit_op *op;

	(void)state;
	assert_int_equal(scene_set_dims(s3, 4), RIGD_E_BAD_FIELD);
	assert_int_equal(scene_dims(s3), 3);
	static const struct {
		unsigned field;
		const char *name;
	} cases[] = {
		{ EDIT_F_T, "t" }, { EDIT_F_S, "s" }, { EDIT_F_PIVOT, "pivot" },
		{ EDIT_F_R, "r" }, { EDIT_F_EULER, "euler" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int kind = EDIT_CREATE; kind <= EDIT_SET; kind++) {
			edit_batch_init(&b);
			op = edit_batch_add(&b, kind, kind == EDIT_CREATE ? "new" : "elbow");
			op->fields = cases[i].field;
			op->t = vec3_make(1, 2, 3);
			op->s = vec3_make(1, 1, 2);
			op->pivot = vec3_make(0, 0, 1);
			op->r = quat_from_axis_angle(vec3_make(1, 0, 0), 0.5);
			op->euler_deg = vec3_make(0, 10, 0);
			apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, cases[i].name);
		}
	}
	/* In the plane all is well, euler about z included. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "elbow");
	op->fields = EDIT_F_T | EDIT_F_S | EDIT_F_PIVOT | EDIT_F_EULER;
	op->t = vec3_make(155, 0, 0);
	op->s = vec3_make(2, -1, 1);
	op->pivot = vec3_make(3, 4, 0);
	op->euler_deg = vec3_make(0, 0, -30);
	apply_ok(s, &b);
	assert_near(angle_of(s, "elbow"), 30, 1e-12);
	/* angle with r is refused, and angle in a 3D scene. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "elbow");
	op->fields = EDIT_F_ANGLE | EDIT_F_R;
	op->r = quat_identity();
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "angle");
	edit_batch_init(&b);
	op = add_node(&b, "n", NULL, vec3_make(0, 0, 0));
	op->fields |= EDIT_F_ANGLE;
	apply_fails(s3, &b, RIGD_E_BAD_FIELD, 0, "angle");
	/* A move out of the plane, a rotate with an axis in 2D. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_MOVE, "hand");
	op->fields = EDIT_F_BY;
	op->by = vec3_make(1, 1, 1);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "by");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_ROTATE, "hand");
	op->fields = EDIT_F_ANGLE | EDIT_F_AXIS;
	op->axis = vec3_make(0, 0, 1);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "axis");
	/* A rotate needs its angle; a 3D one its axis. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_ROTATE, "hand");
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "angle");
	edit_batch_init(&b);
	add_node(&b, "n", NULL, vec3_make(0, 0, 0));
	apply_ok(s3, &b);
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_ROTATE, "n");
	op->fields = EDIT_F_ANGLE;
	op->angle_deg = 10;
	apply_fails(s3, &b, RIGD_E_BAD_FIELD, 0, "axis");
	/* keep_world under a turned parent stays in the plane. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_REPARENT, "hand");
	edit_op_set_parent(op, "shoulder");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	apply_ok(s, &b);
	{
		node_props p;

		scene_props(s, scene_find(s, "hand"), &p);
		assert_true(p.t.z == 0 && p.r.x == 0 && p.r.y == 0 && p.s.z == 1);
	}
	scene_free(s);
	scene_free(s3);
}

/* ---------- the five invariants ---------- */

static void test_invariants(void **state)
{
	edit_batch b;
	edit_op *op;
	scene *s;
	vec3 before[3], after[3];
	const char *ids[3] = { "shoulder", "elbow", "hand" };

	(void)state;
	/* Identity pose: every local identity keeps every point where it is. */
	s = new_scene(2);
	edit_batch_init(&b);
	add_node(&b, "a", NULL, vec3_make(0, 0, 0));
	add_node(&b, "b", "a", vec3_make(0, 0, 0));
	apply_ok(s, &b);
	scene_update(s, 1, NULL, NULL);
	assert_vec_near(scene_to_world(s, scene_find(s, "b"), vec3_make(42, 18, 0)),
			vec3_make(42, 18, 0), 0);
	scene_free(s);

	/* Root translation only: every descendant moves by the same offset. */
	s = arm(25, 40);
	for (int i = 0; i < 3; i++)
		before[i] = joint(s, ids[i]);
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_MOVE, "shoulder");
	op->fields = EDIT_F_BY;
	op->by = vec3_make(20, -10, 0);
	apply_ok(s, &b);
	for (int i = 0; i < 3; i++)
		assert_vec_near(vec3_sub(joint(s, ids[i]), before[i]), vec3_make(20, -10, 0), 1e-12);
	scene_free(s);

	/* Parent rotation only: child world angle 30, bone length unchanged. */
	s = arm(30, 0);
	{
		mat4 w = scene_world(s, scene_find(s, "elbow"));

		assert_near(-atan2(w.m[1], w.m[0]) / DEG, 30, 1e-12);
		assert_near(vec3_length(vec3_sub(joint(s, "hand"), joint(s, "elbow"))), 125, 1e-12);
	}
	scene_free(s);

	/* Pivot rotation: the pivot itself stays where it is. */
	s = new_scene(2);
	edit_batch_init(&b);
	op = add_node(&b, "part", NULL, vec3_make(100, 50, 0));
	op->fields |= EDIT_F_PIVOT;
	op->pivot = vec3_make(42, 18, 0);
	apply_ok(s, &b);
	before[0] = joint(s, "part");
	assert_vec_near(before[0], vec3_make(142, 68, 0), 0);
	for (double a = -170; a <= 180; a += 37) {
		edit_batch_init(&b);
		op = edit_batch_add(&b, EDIT_SET, "part");
		op->fields = EDIT_F_ANGLE;
		op->angle_deg = a;
		apply_ok(s, &b);
		assert_vec_near(joint(s, "part"), before[0], 1e-12);
	}
	scene_free(s);

	/* Length preservation under rotation and translation. */
	s = arm(0, 0);
	for (int i = 0; i < 50; i++) {
		edit_batch_init(&b);
		op = edit_batch_add(&b, EDIT_ROTATE, ids[i % 2]);
		op->fields = EDIT_F_ANGLE;
		op->angle_deg = 13.7 * (i + 1);
		op = edit_batch_add(&b, EDIT_MOVE, "shoulder");
		op->fields = EDIT_F_BY;
		op->by = vec3_make(i, -2 * i, 0);
		apply_ok(s, &b);
		after[0] = joint(s, "shoulder");
		after[1] = joint(s, "elbow");
		after[2] = joint(s, "hand");
		assert_near(vec3_length(vec3_sub(after[1], after[0])), 155, 1e-9);
		assert_near(vec3_length(vec3_sub(after[2], after[1])), 125, 1e-9);
	}
	scene_free(s);
}

/* ---------- relative edits ---------- */

static void test_million_rotations(void **state)
{
	scene *s = arm(25, 40);
	edit_batch b;
	edit_op *op;
	edit_error err;
	int elbow = scene_find(s, "elbow");

	(void)state;
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_ROTATE, "elbow");
	op->fields = EDIT_F_ANGLE;
	op->angle_deg = 0.001;
	for (int i = 0; i < 1000000; i++)
		if (edit_apply(s, &b, NULL, NULL, &err) != 0)
			fail_msg("rotation %d refused: %s", i, err.message);
	edit_batch_release(&b);
	scene_update(s, 2, NULL, NULL);
	/* 40 + 1000 degrees is 1040, which reads as -40 in (-180, 180]. */
	assert_near(angle_of(s, "elbow"), -40, 1e-9);
	assert_near(vec3_length(vec3_sub(joint(s, "hand"), joint(s, "elbow"))), 125, 1e-9);
	assert_near(scene_det(s, elbow), 1, 1e-12);
	assert_near(scene_det(s, scene_find(s, "hand")), 1, 1e-12);
	scene_free(s);
}

static void test_rotate_move_resolved(void **state)
{
	scene *s = arm(25, 40), *copy = arm(25, 40), *s3 = new_scene(3);
	edit_batch b, resolved, inverse;
	edit_result res;
	edit_error err;
	edit_op *op;
	node_props p;

	(void)state;
	edit_batch_init(&b);
	snprintf(b.client, sizeof(b.client), "c1");
	op = edit_batch_add(&b, EDIT_ROTATE, "elbow");
	op->fields = EDIT_F_ANGLE;
	op->angle_deg = 20;
	op = edit_batch_add(&b, EDIT_MOVE, "shoulder");
	op->fields = EDIT_F_BY;
	op->by = vec3_make(-30, 5, 0);
	op = edit_batch_add(&b, EDIT_SET, "hand");
	op->fields = EDIT_F_ANGLE;
	op->angle_deg = -15;
	assert_false(edit_batch_is_absolute(&b));
	assert_int_equal(edit_apply_resolve(s, &b, NULL, &res, &inverse, &resolved, &err), 0);
	assert_true(edit_batch_is_absolute(&resolved));
	assert_string_equal(resolved.client, "c1");
	assert_int_equal(resolved.n_ops, 3);
	assert_int_equal(resolved.ops[0].kind, EDIT_SET);
	assert_int_equal(resolved.ops[0].fields, EDIT_F_R);
	assert_int_equal(resolved.ops[1].fields, EDIT_F_T);
	assert_vec_near(resolved.ops[1].t, vec3_make(150, 265, 0), 0);
	assert_int_equal(resolved.ops[2].fields, EDIT_F_R);
	assert_near(angle_of(s, "elbow"), 60, 1e-12);
	assert_near(angle_of(s, "hand"), -15, 1e-12);
	assert_int_equal(res.n_changed, 3);
	/* The resolved batch replays to the same bits. */
	assert_int_equal(edit_apply(copy, &resolved, NULL, NULL, &err), 0);
	scene_update(s, 3, NULL, NULL);
	scene_update(copy, 3, NULL, NULL);
	assert_true(scene_hash(s) == scene_hash(copy));
	/* The inverse takes it back exactly. */
	assert_int_equal(edit_apply(s, &inverse, NULL, NULL, &err), 0);
	scene_update(s, 4, NULL, NULL);
	assert_near(angle_of(s, "elbow"), 40, 1e-12);
	assert_vec_near(joint(s, "shoulder"), vec3_make(180, 260, 0), 0);
	edit_result_release(&res);
	edit_batch_release(&b);
	edit_batch_release(&resolved);
	edit_batch_release(&inverse);

	/* 3D: a turn about a local axis, composed after the stored rotation. */
	edit_batch_init(&b);
	op = add_node(&b, "n", NULL, vec3_make(0, 0, 0));
	op->fields |= EDIT_F_R;
	op->r = quat_from_axis_angle(vec3_make(0, 0, 1), M_PI / 2);
	op = edit_batch_add(&b, EDIT_ROTATE, "n");
	op->fields = EDIT_F_ANGLE | EDIT_F_AXIS;
	op->axis = vec3_make(2, 0, 0);
	op->angle_deg = 90;
	apply_ok(s3, &b);
	scene_props(s3, scene_find(s3, "n"), &p);
	/* r * Rx(90): local y goes to local z first, then z turns it not. */
	assert_vec_near(quat_rotate(p.r, vec3_make(0, 1, 0)), vec3_make(0, 0, 1), 1e-15);
	assert_vec_near(quat_rotate(p.r, vec3_make(1, 0, 0)), vec3_make(0, 1, 0), 1e-15);
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_ROTATE, "n");
	op->fields = EDIT_F_ANGLE | EDIT_F_AXIS;
	apply_fails(s3, &b, RIGD_E_BAD_FIELD, 0, "axis");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_MOVE, "nobody");
	op->fields = EDIT_F_BY;
	apply_fails(s3, &b, RIGD_E_UNKNOWN_NODE, 0, "id");
	scene_free(s);
	scene_free(copy);
	scene_free(s3);
}

/* ---------- two-bone ik ---------- */

/* Applies one ik op to 's' and returns its report. */
static edit_ik_report ik(scene *s, const char *a, const char *b_id, const char *c, vec3 target,
			 const vec3 *pole)
{
	edit_batch b, resolved, inverse, again;
	edit_result res;
	edit_error err;
	edit_ik_report rep;
	edit_op *op;
	uint64_t hash;

	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, a);
	snprintf(op->chain_mid, sizeof(op->chain_mid), "%s", b_id);
	snprintf(op->chain_end, sizeof(op->chain_end), "%s", c);
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET | (pole ? EDIT_F_POLE : 0);
	op->target = target;
	if (pole)
		op->pole = *pole;
	if (edit_apply_resolve(s, &b, NULL, &res, &inverse, &resolved, &err) != 0)
		fail_msg("ik refused: %s", err.message);
	assert_int_equal(res.n_ik, 1);
	assert_int_equal(resolved.n_ops, 2);
	assert_true(edit_batch_is_absolute(&resolved));
	/* Taken back, and made again from the resolved batch as a replay of
	 * the log would: the same scene and the same inverse, op for op. */
	scene_update(s, 7, NULL, NULL);
	hash = scene_hash(s);
	assert_int_equal(edit_apply(s, &inverse, NULL, NULL, &err), 0);
	assert_int_equal(edit_apply(s, &resolved, NULL, &again, &err), 0);
	scene_update(s, 8, NULL, NULL);
	assert_true(scene_hash(s) == hash);
	assert_int_equal(again.n_ops, inverse.n_ops);
	for (int i = 0; i < again.n_ops; i++) {
		assert_string_equal(again.ops[i].id, inverse.ops[i].id);
		assert_int_equal(again.ops[i].fields, inverse.ops[i].fields);
		assert_memory_equal(&again.ops[i].r, &inverse.ops[i].r, sizeof(quat));
	}
	edit_batch_release(&inverse);
	edit_batch_release(&again);
	rep = res.ik[0];
	assert_int_equal(rep.op, 0);
	edit_result_release(&res);
	edit_batch_release(&resolved);
	edit_batch_release(&b);
	scene_update(s, 9, NULL, NULL);
	return rep;
}

static void test_ik_2d(void **state)
{
	scene *s = arm(0, 0);
	edit_ik_report rep;
	edit_batch b;
	edit_op *op;
	vec3 hand = vec3_make(180 + 155 * cos(25 * DEG) + 125 * cos(65 * DEG),
			      260 - 155 * sin(25 * DEG) - 125 * sin(65 * DEG), 0);

	(void)state;
	/* From the straight arm to the worked example's hand: the chain bends
	 * to the right of the root-to-target line on screen, which gives back
	 * exactly the example's angles, 25 and 40. */
	rep = ik(s, "shoulder", "elbow", "hand", hand, NULL);
	assert_true(rep.reached);
	assert_true(rep.distance < 1e-9);
	assert_vec_near(joint(s, "hand"), hand, 1e-9);
	assert_near(angle_of(s, "shoulder"), 25, 1e-9);
	assert_near(angle_of(s, "elbow"), 40, 1e-9);
	/* Solving again keeps the bend side and changes nothing. */
	rep = ik(s, "shoulder", "elbow", "hand", hand, NULL);
	assert_near(angle_of(s, "elbow"), 40, 1e-9);
	/* Out of reach: stretched, pointing at the target (up the screen). */
	rep = ik(s, "shoulder", "elbow", "hand", vec3_make(180, -200, 0), NULL);
	assert_false(rep.reached);
	assert_near(rep.distance, 180, 1e-9);
	assert_vec_near(joint(s, "elbow"), vec3_make(180, 105, 0), 1e-9);
	assert_vec_near(joint(s, "hand"), vec3_make(180, -20, 0), 1e-9);
	assert_near(angle_of(s, "shoulder"), 90, 1e-9);
	assert_near(angle_of(s, "elbow"), 0, 1e-9);
	/* Too near (closer than 155 - 125): folded, pointing at it. */
	rep = ik(s, "shoulder", "elbow", "hand", vec3_make(190, 260, 0), NULL);
	assert_false(rep.reached);
	assert_vec_near(joint(s, "elbow"), vec3_make(335, 260, 0), 1e-9);
	assert_vec_near(joint(s, "hand"), vec3_make(210, 260, 0), 1e-9);
	assert_near(rep.distance, 20, 1e-9);
	/* Refusals: a broken chain, an unknown node, z off the plane, a pole. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "shoulder");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "hand");
	snprintf(op->chain_end, sizeof(op->chain_end), "elbow");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET;
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "chain");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "shoulder");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "elbow");
	snprintf(op->chain_end, sizeof(op->chain_end), "foot");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET;
	apply_fails(s, &b, RIGD_E_UNKNOWN_NODE, 0, "chain");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "shoulder");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "elbow");
	snprintf(op->chain_end, sizeof(op->chain_end), "hand");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET;
	op->target = vec3_make(200, 200, 1);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "target");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "shoulder");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "elbow");
	snprintf(op->chain_end, sizeof(op->chain_end), "hand");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET | EDIT_F_POLE;
	op->target = vec3_make(200, 200, 0);
	op->pole = vec3_make(0, 0, 1);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "pole");
	/* A target too far to compute, a move that overflows. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "shoulder");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "elbow");
	snprintf(op->chain_end, sizeof(op->chain_end), "hand");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET;
	op->target = vec3_make(1e308, -1e308, 0);
	apply_fails(s, &b, RIGD_E_NOT_FINITE, 0, "target");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_MOVE, "shoulder");
	op->fields = EDIT_F_BY;
	op->by = vec3_make(1.7e308, 0, 0);
	op = edit_batch_add(&b, EDIT_MOVE, "shoulder");
	op->fields = EDIT_F_BY;
	op->by = vec3_make(1.7e308, 0, 0);
	apply_fails(s, &b, RIGD_E_NOT_FINITE, 1, "by");
	/* A zero-length bone. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "hand");
	op->fields = EDIT_F_T;
	apply_ok(s, &b);
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "shoulder");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "elbow");
	snprintf(op->chain_end, sizeof(op->chain_end), "hand");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET;
	op->target = vec3_make(200, 200, 0);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "chain");
	scene_free(s);
}

static void test_ik_2d_mirrored_parent(void **state)
{
	scene *s = new_scene(2);
	edit_batch b;
	edit_op *op;
	edit_ik_report rep;

	(void)state;
	/* A root mirrored in x (facing left) carries the arm. */
	edit_batch_init(&b);
	op = add_node(&b, "root", NULL, vec3_make(400, 300, 0));
	op->fields |= EDIT_F_S;
	op->s = vec3_make(-1, 1, 1);
	add_node(&b, "shoulder", "root", vec3_make(10, 0, 0));
	add_node(&b, "elbow", "shoulder", vec3_make(155, 0, 0));
	add_node(&b, "hand", "elbow", vec3_make(125, 0, 0));
	apply_ok(s, &b);
	rep = ik(s, "shoulder", "elbow", "hand", vec3_make(250, 200, 0), NULL);
	assert_true(rep.reached);
	assert_vec_near(joint(s, "hand"), vec3_make(250, 200, 0), 1e-9);
	assert_near(vec3_length(vec3_sub(joint(s, "elbow"), joint(s, "shoulder"))), 155, 1e-9);
	scene_free(s);
}

static scene *arm3d(void)
{
	scene *s = new_scene(3);
	edit_batch b;

	edit_batch_init(&b);
	add_node(&b, "a", NULL, vec3_make(0, 0, 0));
	add_node(&b, "b", "a", vec3_make(0, 1, 0));
	add_node(&b, "c", "b", vec3_make(0, 1, 0));
	apply_ok(s, &b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

static void test_ik_3d(void **state)
{
	scene *s = arm3d();
	vec3 pole = vec3_make(0, 0, 1), pole_x = vec3_make(1, 0, 0);
	edit_ik_report rep;
	edit_batch b;
	edit_op *op;

	(void)state;
	/* Target (1, 1, 0) with the elbow towards +z: by hand, d = sqrt 2,
	 * the upper bone 45 degrees off the line, the elbow at
	 * (1/2, 1/2, 1/sqrt 2). */
	rep = ik(s, "a", "b", "c", vec3_make(1, 1, 0), &pole);
	assert_true(rep.reached);
	assert_vec_near(joint(s, "b"), vec3_make(0.5, 0.5, 1 / sqrt(2)), 1e-12);
	assert_vec_near(joint(s, "c"), vec3_make(1, 1, 0), 1e-12);
	assert_true(rep.distance < 1e-12);
	assert_near(scene_det(s, scene_find(s, "c")), 1, 1e-12);
	/* Out of reach along +z: stretched. */
	rep = ik(s, "a", "b", "c", vec3_make(0, 0, 5), &pole_x);
	assert_false(rep.reached);
	assert_near(rep.distance, 3, 1e-12);
	assert_vec_near(joint(s, "b"), vec3_make(0, 0, 1), 1e-12);
	assert_vec_near(joint(s, "c"), vec3_make(0, 0, 2), 1e-12);
	/* A pole along the target line has no bend plane; 3D needs a pole. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "a");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "b");
	snprintf(op->chain_end, sizeof(op->chain_end), "c");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET | EDIT_F_POLE;
	op->target = vec3_make(0, 0, 1);
	op->pole = vec3_make(0, 0, 2);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "pole");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_IK, "a");
	snprintf(op->chain_mid, sizeof(op->chain_mid), "b");
	snprintf(op->chain_end, sizeof(op->chain_end), "c");
	op->fields = EDIT_F_CHAIN | EDIT_F_TARGET;
	op->target = vec3_make(0, 0, 1);
	apply_fails(s, &b, RIGD_E_BAD_FIELD, 0, "pole");
	scene_free(s);
}

static void test_ik_3d_turned_parent(void **state)
{
	scene *s = new_scene(3);
	vec3 pole = vec3_make(0, 0, 1), target = vec3_make(2.5, 1.2, -0.4);
	edit_batch b;
	edit_op *op;
	edit_ik_report rep;

	(void)state;
	/* Under a turned, uniformly scaled parent with pivots, the end still
	 * lands on the target and the bones keep their lengths. */
	edit_batch_init(&b);
	op = add_node(&b, "root", NULL, vec3_make(1, 2, 3));
	op->fields |= EDIT_F_R | EDIT_F_S;
	op->r = quat_from_axis_angle(vec3_make(1, 2, 3), 0.7);
	op->s = vec3_make(2, 2, 2);
	op = add_node(&b, "a", "root", vec3_make(0.1, 0.2, 0));
	op->fields |= EDIT_F_PIVOT;
	op->pivot = vec3_make(0, -0.3, 0);
	add_node(&b, "b", "a", vec3_make(0, 0.7, 0));
	add_node(&b, "c", "b", vec3_make(0.6, 0, 0));
	apply_ok(s, &b);
	scene_update(s, 1, NULL, NULL);
	double l1 = vec3_length(vec3_sub(joint(s, "b"), joint(s, "a")));
	double l2 = vec3_length(vec3_sub(joint(s, "c"), joint(s, "b")));
	target = vec3_add(joint(s, "a"), vec3_make(0.9, -1.3, 1.0));
	rep = ik(s, "a", "b", "c", target, &pole);
	assert_true(rep.reached);
	assert_vec_near(joint(s, "c"), target, 1e-9);
	assert_near(vec3_length(vec3_sub(joint(s, "b"), joint(s, "a"))), l1, 1e-9);
	assert_near(vec3_length(vec3_sub(joint(s, "c"), joint(s, "b"))), l2, 1e-9);
	/* The elbow bends towards the pole: its offset from the line to the
	 * target has a positive part along the pole. */
	{
		vec3 dir = vec3_sub(target, joint(s, "a")), ab = vec3_sub(joint(s, "b"), joint(s, "a"));

		dir = vec3_scale(dir, 1 / vec3_length(dir));
		ab = vec3_sub(ab, vec3_scale(dir, vec3_dot(ab, dir)));
		pole = vec3_sub(pole, vec3_scale(dir, vec3_dot(pole, dir)));
		assert_true(vec3_dot(ab, pole) > 0);
	}
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_angle_convention),
		cmocka_unit_test(test_plane_refusals),
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_million_rotations),
		cmocka_unit_test(test_rotate_move_resolved),
		cmocka_unit_test(test_ik_2d),
		cmocka_unit_test(test_ik_2d_mirrored_parent),
		cmocka_unit_test(test_ik_3d),
		cmocka_unit_test(test_ik_3d_turned_parent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
