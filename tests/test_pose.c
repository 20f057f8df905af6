/*
 * test_pose.c: poses (server/core/pose.c, edit_pose.c): saving, replacing
 * and deleting poses as edit ops, blending two poses by channels (the
 * matrix-midpoint figures of docs/transforms.md: determinant 0.5 for the
 * element-wise mean of two rotations 90 degrees apart, 1 for the blend),
 * the shorter arc, exact ends, the resolved batch a log stores, inverses
 * that restore scene and poses bit for bit, every refusal, and a 2D
 * node's shear saved, set and blended as a channel of its own.
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
#include "core/pose.h"
#include "core/scene.h"

/* ---------- helpers ---------- */

static void apply_ok(scene *s, edit_batch *b)
{
	edit_error err;
	int rc = edit_apply(s, b, NULL, NULL, &err);

	if (rc)
		fail_msg("batch refused: %s", err.message);
	edit_batch_release(b);
}

static edit_op *add(edit_batch *b, int kind, const char *id)
{
	edit_op *op = edit_batch_add(b, kind, id);

	assert_non_null(op);
	return op;
}

static void node2d(edit_batch *b, const char *id, const char *parent, double x, double y,
		   double angle)
{
	edit_op *op = add(b, EDIT_CREATE, id);

	if (parent)
		assert_int_equal(edit_op_set_parent(op, parent), 0);
	op->fields |= EDIT_F_T | EDIT_F_ANGLE;
	op->t = vec3_make(x, y, 0);
	op->angle_deg = angle;
}

static void turn(edit_batch *b, const char *id, double angle)
{
	edit_op *op = add(b, EDIT_SET, id);

	op->fields = EDIT_F_ANGLE;
	op->angle_deg = angle;
}

static void save(edit_batch *b, const char *name, const char *root)
{
	edit_op *op = add(b, EDIT_POSE_SAVE, name);

	if (root) {
		op->fields |= EDIT_F_ROOT;
		snprintf(op->root, sizeof(op->root), "%s", root);
	}
}

static edit_op *blend(edit_batch *b, const char *root, const char *a, const char *pb, double w)
{
	edit_op *op = add(b, EDIT_BLEND, root);

	op->fields = EDIT_F_POSE_A | EDIT_F_POSE_B | EDIT_F_WEIGHT;
	snprintf(op->pose_a, sizeof(op->pose_a), "%s", a);
	snprintf(op->pose_b, sizeof(op->pose_b), "%s", pb);
	op->weight = w;
	return op;
}

/*
 * A 2D arm (hips -> upper -> fore, and a leg beside it) with two poses:
 * "p0" with the upper arm at 0 degrees, "p90" at 90, the forearm at 10 and
 * 40, the leg at 170 and -170; the scene is left in a third pose.
 */
static scene *arm_scene(void)
{
	scene *s = scene_new();
	edit_batch b;

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	edit_batch_init(&b);
	node2d(&b, "hips", NULL, 180, 260, 0);
	node2d(&b, "upper", "hips", 0, 0, 0);
	node2d(&b, "fore", "upper", 155, 0, 10);
	node2d(&b, "leg", "hips", 0, 40, 170);
	save(&b, "p0", NULL);
	turn(&b, "upper", 90);
	turn(&b, "fore", 40);
	turn(&b, "leg", -170);
	add(&b, EDIT_SET, "fore")->fields |= EDIT_F_S;
	b.ops[b.n_ops - 1].s = vec3_make(2, 3, 1);
	save(&b, "p90", NULL);
	turn(&b, "upper", 33);
	turn(&b, "fore", -20);
	apply_ok(s, &b);
	return s;
}

static node_props props_of(const scene *s, const char *id)
{
	node_props p;
	int n = scene_find(s, id);

	assert_true(n >= 0);
	scene_props(s, n, &p);
	return p;
}

static double angle_of(const scene *s, const char *id)
{
	return quat_to_angle2d_deg(props_of(s, id).r);
}

static double det3(mat4 m)
{
	return m.m[0] * (m.m[5] * m.m[10] - m.m[9] * m.m[6]) -
	       m.m[4] * (m.m[1] * m.m[10] - m.m[9] * m.m[2]) +
	       m.m[8] * (m.m[1] * m.m[6] - m.m[5] * m.m[2]);
}

/* Asserts that 's' holds what 'ref' holds: world matrices and poses. */
static void assert_same(scene *s, scene *ref)
{
	scene_update(s, 1, NULL, NULL);
	scene_update(ref, 1, NULL, NULL);
	assert_int_equal(scene_hash(s), scene_hash(ref));
	assert_true(pose_set_equal(scene_poses_c(s), scene_poses_c(ref)));
	for (int i = 0; i < scene_count(s); i++) {
		node_props p = props_of(s, scene_id(s, scene_at(s, i)));
		node_props q = props_of(ref, scene_id(s, scene_at(s, i)));

		assert_memory_equal(&p.t, &q.t, sizeof(p.t));
		assert_memory_equal(&p.r, &q.r, sizeof(p.r));
		assert_memory_equal(&p.s, &q.s, sizeof(p.s));
		assert_memory_equal(p.shear, q.shear, sizeof(p.shear));
	}
}

/* ---------- the article's figure ---------- */

static void test_midpoint_determinant(void **state)
{
	scene *s = arm_scene();
	edit_batch b;
	mat4 m0 = mat4_from_quat(quat_from_angle2d_deg(0));
	mat4 m90 = mat4_from_quat(quat_from_angle2d_deg(90)), mid;
	int upper = scene_find(s, "upper");

	(void)state;
	/* Element-wise, the mean of two rotations 90 degrees apart is
	 * cos(45 deg) times a rotation: each axis 0.707 long, det 0.5. */
	for (int i = 0; i < 16; i++)
		mid.m[i] = 0.5 * (m0.m[i] + m90.m[i]);
	assert_true(fabs(det3(mid) - 0.5) < 1e-12);
	assert_true(fabs(hypot(mid.m[0], mid.m[1]) - sqrt(0.5)) < 1e-12);
	edit_batch_init(&b);
	blend(&b, "hips", "p0", "p90", 0.5);
	apply_ok(s, &b);
	scene_update(s, 2, NULL, NULL);
	/* The blend: rotation by slerp, so the local and world linear parts
	 * stay rotations (hips is at identity). */
	assert_true(fabs(det3(scene_local(s, upper)) - 1) < 1e-12);
	assert_true(fabs(scene_det(s, upper) - 1) < 1e-12);
	assert_true(fabs(angle_of(s, "upper") - 45) < 1e-12);
	/* s halfway from (1, 1) to (2, 3): (1.5, 2), det 3 */
	assert_true(fabs(scene_det(s, scene_find(s, "fore")) - 3) < 1e-12);
	assert_true(fabs(angle_of(s, "fore") - 25) < 1e-12);
	scene_free(s);
}

static void test_shorter_arc(void **state)
{
	scene *s = arm_scene();
	edit_batch b;

	(void)state;
	edit_batch_init(&b);
	blend(&b, "leg", "p0", "p90", 0.5);
	apply_ok(s, &b);
	/* 170 and -170 are 20 degrees apart across 180, not 340 across 0. */
	assert_true(fabs(fabs(angle_of(s, "leg")) - 180) < 1e-9);
	edit_batch_init(&b);
	blend(&b, "leg", "p0", "p90", 0.25);
	apply_ok(s, &b);
	assert_true(fabs(angle_of(s, "leg") - 175) < 1e-9);
	/* Only the subtree of the root moved: the arm kept its third pose. */
	assert_true(fabs(angle_of(s, "upper") - 33) < 1e-12);
	scene_free(s);
}

static void test_ends_exact(void **state)
{
	scene *s = arm_scene();
	const pose_set *ps = scene_poses_c(s);
	const char *names[2] = { "p0", "p90" };

	(void)state;
	for (int e = 0; e < 2; e++) {
		edit_batch b;
		const pose *p = pose_at(ps, pose_find(ps, names[e]));

		edit_batch_init(&b);
		blend(&b, "hips", "p0", "p90", e);
		apply_ok(s, &b);
		for (int i = 0; i < p->n; i++) {
			node_props q = props_of(s, p->ch[i].id);

			assert_memory_equal(&q.t, &p->ch[i].t, sizeof(q.t));
			assert_memory_equal(&q.r, &p->ch[i].r, sizeof(q.r));
			assert_memory_equal(&q.s, &p->ch[i].s, sizeof(q.s));
		}
	}
	scene_free(s);
}

static void test_blend_3d(void **state)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;
	quat r;

	(void)state;
	edit_batch_init(&b);
	op = add(&b, EDIT_CREATE, "j");
	op->fields = EDIT_F_R;
	op->r = quat_from_axis_angle(vec3_make(1, 1, 0), 0.2);
	save(&b, "a", "j");
	op = add(&b, EDIT_SET, "j");
	op->fields = EDIT_F_R;
	/* -q: the same rotation as the pose's neighbour, far side of the sphere */
	r = quat_from_axis_angle(vec3_make(1, 1, 0), 1.0);
	op->r = (quat){ -r.x, -r.y, -r.z, -r.w };
	save(&b, "b", "j");
	blend(&b, "j", "a", "b", 0.5);
	apply_ok(s, &b);
	r = props_of(s, "j").r;
	/* Halfway along the shorter arc: 0.6 rad about (1, 1, 0). */
	assert_true(fabs(2 * acos(fabs(r.w)) - 0.6) < 1e-12);
	assert_true(fabs(quat_length(r) - 1) < 1e-15);
	assert_true(fabs(scene_det(s, scene_find(s, "j")) - 1) < 1e-12);
	scene_free(s);
}

/* ---------- what a log stores ---------- */

static void test_resolved_replays(void **state)
{
	scene *s = arm_scene(), *replay = arm_scene();
	edit_batch b, resolved;
	edit_error err;

	(void)state;
	edit_batch_init(&b);
	save(&b, "now", "upper");
	blend(&b, "hips", "p0", "now", 0.3);
	assert_int_equal(edit_apply_resolve(s, &b, NULL, NULL, NULL, &resolved, &err), 0);
	assert_false(edit_batch_is_absolute(&b));
	assert_true(edit_batch_is_absolute(&resolved));
	/* pose_save became the pose_set of the two nodes under upper, sorted
	 * by id; the blend one set per node both poses hold. */
	assert_int_equal(resolved.ops[0].kind, EDIT_POSE_SET);
	assert_string_equal(resolved.ops[0].id, "now");
	assert_int_equal(resolved.ops[0].n_channels, 2);
	assert_string_equal(resolved.ops[0].channels[0].id, "fore");
	assert_string_equal(resolved.ops[0].channels[1].id, "upper");
	assert_int_equal(resolved.n_ops, 3);
	assert_int_equal(resolved.ops[1].kind, EDIT_SET);
	assert_string_equal(resolved.ops[1].id, "upper");
	assert_string_equal(resolved.ops[2].id, "fore");
	edit_batch_release(&b);
	/* The resolved batch replays exactly on a scene whose channels differ
	 * (a pose_set carries values; nothing reads the scene). */
	edit_batch_init(&b);
	turn(&b, "upper", 1);
	apply_ok(replay, &b);
	apply_ok(replay, &resolved);
	edit_batch_init(&b);
	turn(&b, "upper", 1);
	apply_ok(s, &b);
	edit_batch_init(&b);
	turn(&b, "upper", angle_of(s, "upper"));
	apply_ok(replay, &b);
	assert_same(s, replay);
	scene_free(s);
	scene_free(replay);
}

/* ---------- inverses ---------- */

/* The inverse of a batch with a blend and a pose_save equals, op for op,
 * the inverse of its resolved batch: a log's stored inverse is what its
 * replay records. */
static void test_inverse_matches_resolved(void **state)
{
	scene *s = arm_scene(), *replay = arm_scene();
	edit_batch b, resolved, inv, inv2;
	edit_error err;

	(void)state;
	edit_batch_init(&b);
	blend(&b, "hips", "p0", "p90", 0.4);
	save(&b, "p0", "upper");
	assert_int_equal(edit_apply_resolve(s, &b, NULL, NULL, &inv, &resolved, &err), 0);
	assert_int_equal(edit_apply(replay, &resolved, NULL, &inv2, &err), 0);
	assert_int_equal(inv.n_ops, inv2.n_ops);
	for (int i = 0; i < inv.n_ops; i++) {
		const edit_op *x = &inv.ops[i], *y = &inv2.ops[i];

		assert_int_equal(x->kind, y->kind);
		assert_string_equal(x->id, y->id);
		assert_int_equal(x->fields, y->fields);
		assert_memory_equal(&x->r, &y->r, sizeof(x->r));
		assert_int_equal(x->n_channels, y->n_channels);
		for (int c = 0; c < x->n_channels; c++) {
			assert_string_equal(x->channels[c].id, y->channels[c].id);
			assert_memory_equal(&x->channels[c].t, &y->channels[c].t, 3 * sizeof(double));
			assert_memory_equal(&x->channels[c].r, &y->channels[c].r, 4 * sizeof(double));
			assert_memory_equal(&x->channels[c].s, &y->channels[c].s, 3 * sizeof(double));
		}
	}
	edit_batch_release(&b);
	edit_batch_release(&resolved);
	edit_batch_release(&inv);
	edit_batch_release(&inv2);
	scene_free(s);
	scene_free(replay);
}

static void check_undo(edit_batch *b, bool by_revert)
{
	scene *s = arm_scene(), *ref = arm_scene();
	edit_batch inverse;
	edit_error err;

	assert_int_equal(edit_apply(s, b, NULL, &inverse, &err), 0);
	if (by_revert) {
		assert_int_equal(edit_revert(s, &inverse), 0);
	} else {
		assert_int_equal(edit_apply(s, &inverse, NULL, NULL, &err), 0);
		edit_batch_release(&inverse);
	}
	assert_same(s, ref);
	scene_free(s);
	scene_free(ref);
}

static void test_inverses(void **state)
{
	(void)state;
	for (int by_revert = 0; by_revert < 2; by_revert++) {
		edit_batch b;
		edit_op *op;

		edit_batch_init(&b);
		save(&b, "p0", "upper");        /* replaces a pose */
		check_undo(&b, by_revert);
		edit_batch_release(&b);
		edit_batch_init(&b);
		save(&b, "new", NULL);          /* a new pose */
		add(&b, EDIT_POSE_DELETE, "p90");
		blend(&b, "hips", "p0", "new", 0.7);
		check_undo(&b, by_revert);
		edit_batch_release(&b);
		edit_batch_init(&b);
		op = add(&b, EDIT_POSE_SET, "p0"); /* an empty pose over p0 */
		op->fields = EDIT_F_CHANNELS;
		add(&b, EDIT_POSE_DELETE, "p0");
		save(&b, "p0", "leg");
		blend(&b, "hips", "p0", "p90", 0.1);
		check_undo(&b, by_revert);
		edit_batch_release(&b);
	}
}

/* ---------- refusals ---------- */

static void refused(edit_batch *b, int code, int op_index, const char *field)
{
	scene *s = arm_scene(), *ref = arm_scene();
	edit_error err;

	assert_int_equal(edit_apply(s, b, NULL, NULL, &err), code);
	assert_int_equal(err.code, code);
	assert_int_equal(err.op, op_index);
	assert_string_equal(err.field, field);
	assert_same(s, ref);
	edit_batch_release(b);
	scene_free(s);
	scene_free(ref);
}

/* A batch that saves a pose and blends first, so that a refusal of its
 * last op must take them back. */
static void prefix(edit_batch *b)
{
	edit_batch_init(b);
	save(b, "p0", "leg");
	blend(b, "hips", "p0", "p90", 0.5);
}

static void test_refusals(void **state)
{
	edit_batch b;
	edit_op *op;

	(void)state;
	prefix(&b);
	blend(&b, "hips", "nope", "p90", 0.5);
	refused(&b, RIGD_E_UNKNOWN_POSE, 2, "a");
	prefix(&b);
	blend(&b, "hips", "p0", "nope", 0.5);
	refused(&b, RIGD_E_UNKNOWN_POSE, 2, "b");
	prefix(&b);
	add(&b, EDIT_POSE_DELETE, "nope");
	refused(&b, RIGD_E_UNKNOWN_POSE, 2, "pose");
	prefix(&b);
	blend(&b, "hips", "p0", "p90", 1.5);
	refused(&b, RIGD_E_BAD_FIELD, 2, "t");
	prefix(&b);
	blend(&b, "hips", "p0", "p90", -0.1);
	refused(&b, RIGD_E_BAD_FIELD, 2, "t");
	prefix(&b);
	blend(&b, "hips", "p0", "p90", NAN);
	refused(&b, RIGD_E_NOT_FINITE, 2, "t");
	prefix(&b);
	blend(&b, "ghost", "p0", "p90", 0.5);
	refused(&b, RIGD_E_UNKNOWN_NODE, 2, "root");
	prefix(&b);                      /* p0 now holds only leg: nothing under upper */
	blend(&b, "upper", "p0", "p90", 0.5);
	refused(&b, RIGD_E_BAD_FIELD, 2, "root");
	prefix(&b);
	save(&b, "x", "ghost");
	refused(&b, RIGD_E_UNKNOWN_NODE, 2, "root");
	prefix(&b);
	save(&b, "bad name", NULL);
	refused(&b, RIGD_E_BAD_ID, 2, "pose");
	prefix(&b);
	blend(&b, "no root", "p0", "p90", 0.5);
	refused(&b, RIGD_E_BAD_ID, 2, "root");
	prefix(&b);
	blend(&b, "hips", "p0", "bad/b", 0.5);
	refused(&b, RIGD_E_BAD_ID, 2, "b");
	prefix(&b);
	blend(&b, "hips", "p0", "p90", 0.5)->fields &= ~EDIT_F_WEIGHT;
	refused(&b, RIGD_E_BAD_FIELD, 2, "t");
	prefix(&b);
	add(&b, EDIT_POSE_SET, "q");
	refused(&b, RIGD_E_BAD_FIELD, 2, "channels");
	prefix(&b);
	add(&b, EDIT_BLEND, "hips")->fields = EDIT_F_POSE_A | EDIT_F_POSE_B | EDIT_F_WEIGHT |
					      EDIT_F_T;
	refused(&b, RIGD_E_BAD_FIELD, 2, "t");

	/* pose_set's channels: sorted and once each, finite, non-zero r */
	/* ... and in the plane of the 2D scene: t.z, s.z, r off z */
	for (int c = 0; c < 7; c++) {
		static const int codes[7] = { RIGD_E_BAD_FIELD, RIGD_E_BAD_FIELD, RIGD_E_NOT_FINITE,
					      RIGD_E_ZERO_QUATERNION, RIGD_E_BAD_FIELD,
					      RIGD_E_BAD_FIELD, RIGD_E_BAD_FIELD };
		pose_channel *ch = calloc(2, sizeof(*ch));

		assert_non_null(ch);
		strcpy(ch[0].id, "a");
		strcpy(ch[1].id, c == 0 ? "a" : c == 1 ? "0" : "b");
		for (int i = 0; i < 2; i++) {
			ch[i].r = quat_identity();
			ch[i].s = vec3_make(1, 1, 1);
		}
		if (c == 2)
			ch[1].t.y = INFINITY;
		if (c == 3)
			ch[1].r = (quat){ 0, 0, 0, 0 };
		if (c == 4)
			ch[1].t.z = 1;
		if (c == 5)
			ch[1].s.z = 2;
		if (c == 6)
			ch[1].r = (quat){ 0.1, 0, 0, 1 };
		prefix(&b);
		op = add(&b, EDIT_POSE_SET, "q");
		op->fields = EDIT_F_CHANNELS;
		op->channels = ch;
		op->n_channels = 2;
		refused(&b, codes[c], 2, "channels");
	}
}

/* A pose naming nodes that are gone: blend skips them, and the nodes the
 * poses do not both hold keep their channels. */
static void test_missing_nodes(void **state)
{
	scene *s = arm_scene();
	edit_batch b;
	double fore;

	(void)state;
	edit_batch_init(&b);
	add(&b, EDIT_DELETE, "leg");
	save(&b, "arm", "upper");
	turn(&b, "upper", 0);
	turn(&b, "fore", 0);
	save(&b, "up", "fore");
	apply_ok(s, &b);
	fore = angle_of(s, "fore");
	edit_batch_init(&b);
	blend(&b, "hips", "p0", "p90", 0.5);  /* both name the deleted leg */
	blend(&b, "hips", "arm", "up", 0.5);  /* only fore in both */
	turn(&b, "upper", 12);
	blend(&b, "hips", "arm", "up", 1);
	apply_ok(s, &b);
	assert_true(fabs(angle_of(s, "upper") - 12) < 1e-12);
	assert_true(fabs(angle_of(s, "fore") - fore) < 1e-12);
	assert_non_null(pose_channel_find(pose_at(scene_poses_c(s),
						  pose_find(scene_poses_c(s), "p0")), "leg"));
	scene_free(s);
}

static void test_batch_copy(void **state)
{
	scene *s = arm_scene();
	edit_batch b, copy;

	(void)state;
	edit_batch_init(&b);
	save(&b, "c", NULL);
	assert_int_equal(edit_apply_resolve(s, &b, NULL, NULL, NULL, &copy, NULL), 0);
	edit_batch_release(&b);
	assert_int_equal(edit_batch_copy(&b, &copy), 0);
	assert_int_equal(b.ops[0].n_channels, 4);
	assert_ptr_not_equal(b.ops[0].channels, copy.ops[0].channels);
	for (int c = 0; c < 4; c++) {
		assert_string_equal(b.ops[0].channels[c].id, copy.ops[0].channels[c].id);
		assert_memory_equal(&b.ops[0].channels[c].r, &copy.ops[0].channels[c].r, sizeof(quat));
	}
	assert_string_equal(edit_op_name(EDIT_BLEND), "blend");
	assert_int_equal(edit_op_from_name("pose_save"), EDIT_POSE_SAVE);
	assert_true(edit_op_is_relative(EDIT_BLEND));
	assert_false(edit_op_is_relative(EDIT_POSE_SET));
	edit_batch_release(&b);
	edit_batch_release(&copy);
	scene_free(s);
}

/* ---------- shear, a 2D channel ---------- */

static void shear_node(edit_batch *b, const char *id, double shx, double shy)
{
	edit_op *op = add(b, EDIT_SET, id);

	op->fields = EDIT_F_SHEAR;
	op->shear_deg[0] = shx;
	op->shear_deg[1] = shy;
}

/* The arm of arm_scene with pose "sh": the forearm sheared [10, -30], the
 * upper arm [4, 0]; the scene is left with no shear. */
static scene *sheared_scene(void)
{
	scene *s = arm_scene();
	edit_batch b;

	edit_batch_init(&b);
	shear_node(&b, "fore", 10, -30);
	shear_node(&b, "upper", 4, 0);
	save(&b, "sh", "upper");
	shear_node(&b, "fore", 0, 0);
	shear_node(&b, "upper", 0, 0);
	apply_ok(s, &b);
	return s;
}

static void test_shear_saved_and_blended(void **state)
{
	scene *s = sheared_scene(), *ref;
	const pose *sh = pose_at(scene_poses_c(s), pose_find(scene_poses_c(s), "sh"));
	const pose_channel *fore = pose_channel_find(sh, "fore");
	edit_batch b, resolved;
	edit_error err;
	node_props p;

	(void)state;
	/* pose_save captured the shear, a node's own, not a matrix's. */
	assert_non_null(fore);
	assert_true(fore->shear[0] == 10 && fore->shear[1] == -30);
	assert_true(pose_channel_find(sh, "upper")->shear[0] == 4);
	assert_false(pose_channel_sheared(pose_channel_find(
		pose_at(scene_poses_c(s), pose_find(scene_poses_c(s), "p0")), "fore")));
	/* blend: linear in shear, (1 - t) a + t b, resolved into sets that
	 * carry it, and exact at the ends. */
	edit_batch_init(&b);
	blend(&b, "upper", "p0", "sh", 0.25);
	assert_int_equal(edit_apply_resolve(s, &b, NULL, NULL, NULL, &resolved, &err), 0);
	p = props_of(s, "fore");
	assert_true(p.shear[0] == 0.75 * 0 + 0.25 * 10 && p.shear[1] == 0.25 * -30);
	for (int i = 0; i < resolved.n_ops; i++)
		assert_true(resolved.ops[i].fields & EDIT_F_SHEAR);
	edit_batch_release(&b);
	/* Two poses without shear over nodes without one: no shear set (the
	 * leg), as before shear was a channel. */
	{
		scene *plain = arm_scene();
		edit_batch r2;

		edit_batch_init(&b);
		blend(&b, "hips", "p0", "p90", 0.5);
		assert_int_equal(edit_apply_resolve(plain, &b, NULL, NULL, NULL, &r2, &err), 0);
		assert_true(r2.n_ops > 0);
		for (int i = 0; i < r2.n_ops; i++)
			assert_false(r2.ops[i].fields & EDIT_F_SHEAR);
		edit_batch_release(&b);
		edit_batch_release(&r2);
		scene_free(plain);
	}
	/* The resolved sets replay to the same scene. */
	ref = sheared_scene();
	apply_ok(ref, &resolved);
	assert_same(s, ref);
	scene_free(ref);
	edit_batch_init(&b);
	blend(&b, "upper", "p0", "sh", 1);
	apply_ok(s, &b);
	p = props_of(s, "fore");
	assert_memory_equal(p.shear, fore->shear, sizeof(p.shear));
	/* The shear changes the world the recompute gives: it is the pose's. */
	scene_update(s, 1, NULL, NULL);
	assert_true(fabs(scene_shear_deg(s, scene_find(s, "fore"))) > 1);
	scene_free(s);
}

/* A new batch 'b' of one pose_set of pose 'name': the forearm at rest with
 * shear [shx, shy]. */
static void one_sheared_channel(edit_batch *b, const char *name, double shx, double shy)
{
	edit_op *op;

	edit_batch_init(b);
	op = add(b, EDIT_POSE_SET, name);
	op->fields = EDIT_F_CHANNELS;
	op->n_channels = 1;
	assert_non_null(op->channels = calloc(1, sizeof(pose_channel)));
	strcpy(op->channels[0].id, "fore");
	op->channels[0].r = (quat){ 0, 0, 0, 1 };
	op->channels[0].s = vec3_make(1, 1, 1);
	op->channels[0].shear[0] = shx;
	op->channels[0].shear[1] = shy;
}

static void test_shear_pose_set(void **state)
{
	scene *s = sheared_scene(), *ref = sheared_scene();
	edit_batch b, undo;
	edit_error err;
	const pose *q;

	(void)state;
	one_sheared_channel(&b, "sh", 0, 15);
	edit_batch_init(&undo);
	assert_int_equal(edit_apply(s, &b, NULL, &undo, &err), 0);
	q = pose_at(scene_poses_c(s), pose_find(scene_poses_c(s), "sh"));
	assert_int_equal(q->n, 1);
	assert_true(q->ch[0].shear[0] == 0 && q->ch[0].shear[1] == 15);
	/* Undone: the old channels, shear included, bit for bit. */
	assert_int_equal(edit_apply(s, &undo, NULL, NULL, &err), 0);
	assert_same(s, ref);
	edit_batch_release(&undo);
	/* Refused: a shear that folds the axes (shy - shx = 90), one that is
	 * not finite; and any shear in a 3D scene. */
	b.ops[0].channels[0].shear[0] = 10;
	b.ops[0].channels[0].shear[1] = 100;
	refused(&b, RIGD_E_BAD_FIELD, 0, "channels");
	one_sheared_channel(&b, "x", NAN, 0);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), RIGD_E_NOT_FINITE);
	assert_string_equal(err.field, "channels");
	b.ops[0].channels[0].shear[0] = 5;
	scene_free(s);
	s = scene_new();
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "channels");
	assert_non_null(strstr(err.message, "2D"));
	assert_int_equal(pose_count(scene_poses_c(s)), 0);
	edit_batch_release(&b);
	scene_free(s);
	scene_free(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_midpoint_determinant),
		cmocka_unit_test(test_shorter_arc),
		cmocka_unit_test(test_ends_exact),
		cmocka_unit_test(test_blend_3d),
		cmocka_unit_test(test_resolved_replays),
		cmocka_unit_test(test_inverses),
		cmocka_unit_test(test_inverse_matches_resolved),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_missing_nodes),
		cmocka_unit_test(test_batch_copy),
		cmocka_unit_test(test_shear_saved_and_blended),
		cmocka_unit_test(test_shear_pose_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
