/*
 * test_spine_ik.c: Spine IK constraints solved live (core/scene_ik.c,
 * core/ik_solve.c), against values derived by hand from the geometry of
 * docs/transforms.md ("IK constraints"): a bone aims its x axis at the
 * target; two bones close the triangle of their lengths and the target's
 * distance (law of cosines), bending the way bendPositive says; mix
 * blends from the pose; stretch and compress scale to the distance;
 * softness pulls the target in by the quadratic of the docs; constraints
 * solve in their order, each seeing the earlier ones' results.
 *
 * Each skeleton is imported as the server imports it (decode, batch,
 * asset ids, the skeleton given to the scene as the engine gives it) and
 * then edited with plain set ops, a pass after each batch: the
 * constrained bones must follow. Numbers are checked in Spine's y-up
 * frame (rigd's worlds carried there by the flip of docs/spine.md).
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

#include "codec/skel_clips_read.h"
#include "codec/spine.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "core/skel_clips.h"

#define TOL 1e-9

static uint64_t stamp = 1;

/* A 2D scene holding Spine skeleton 'skeleton' (its JSON text) as an
 * import leaves it, worlds up to date. */
static scene *import(const char *skeleton)
{
	size_t n = strlen(skeleton) + 32;
	char *body = malloc(n);
	spine_import in;
	skel_import_report rep;
	skel_clips *k = NULL;
	edit_batch b;
	edit_error err;
	scene *s = scene_new();

	assert_non_null(body);
	assert_non_null(s);
	snprintf(body, n, "{\"skeleton\":%s}", skeleton);
	assert_int_equal(scene_set_dims(s, 2), 0);
	if (spine_import_decode(body, strlen(body), 1 << 20, &in, &err) != 0)
		fail_msg("refused: %s (field %s)", err.message, err.field);
	if (spine_import_batch(&in, s, &b, &rep, &err) != 0)
		fail_msg("batch refused: %s", err.message);
	assert_int_equal(asset_set_add(scene_assets(s), rep.file, rep.ids ? rep.ids : "", rep.ids_len), 0);
	if (skel_clips_read(ASSET_SPINE, rep.file, in.skeleton, in.skeleton_len, &k, &err) != 0)
		fail_msg("skeleton not read: %s", err.message);
	assert_int_equal(scene_skel_add(s, k), 0);
	if (edit_apply(s, &b, NULL, NULL, &err) != 0)
		fail_msg("apply refused: %s (field %s)", err.message, err.field);
	scene_update(s, stamp++, NULL, NULL);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	spine_import_release(&in);
	free(body);
	return s;
}

/* One batch: set bone 'id''s position to Spine's (x, y); then a pass. */
static long move(scene *s, const char *id, double x, double y)
{
	edit_batch b;
	edit_error err;
	edit_op *op;

	edit_batch_init(&b);
	assert_non_null(op = edit_batch_add(&b, EDIT_SET, id));
	op->fields = EDIT_F_T;
	op->t = vec3_make(x, -y, 0);
	if (edit_apply(s, &b, NULL, NULL, &err) != 0)
		fail_msg("set refused: %s", err.message);
	edit_batch_release(&b);
	return scene_update(s, stamp++, NULL, NULL);
}

/* A world in Spine's frame: [a b; c d] and the origin. */
typedef struct sp {
	double a, b, c, d, x, y;
} sp;

static sp world(const scene *s, const char *id)
{
	int n = scene_find(s, id);
	mat4 m;

	assert_true(n >= 0);
	m = scene_world(s, n);
	return (sp){ m.m[0], -m.m[4], -m.m[1], m.m[5], m.m[12], -m.m[13] };
}

static void near(double got, double want, const char *what)
{
	if (!(fabs(got - want) <= TOL * fmax(1, fabs(want))))
		fail_msg("%s: got %.12f, want %.12f", what, got, want);
}

/* Bone 'id' at Spine's (x, y) with its x axis at 'deg' degrees and of
 * length 'len'. */
static void bone_is(const scene *s, const char *id, double x, double y, double deg, double len)
{
	sp w = world(s, id);
	char what[96];

	snprintf(what, sizeof(what), "%s x", id);
	near(w.x, x, what);
	snprintf(what, sizeof(what), "%s y", id);
	near(w.y, y, what);
	snprintf(what, sizeof(what), "%s x axis x", id);
	near(w.a, len * cos(deg * M_PI / 180), what);
	snprintf(what, sizeof(what), "%s x axis y", id);
	near(w.c, len * sin(deg * M_PI / 180), what);
}

/* Where the tip of bone 'id' (its x axis times 'length') lies. */
static void tip_of(const scene *s, const char *id, double length, double *x, double *y)
{
	sp w = world(s, id);

	*x = w.x + w.a * length;
	*y = w.y + w.c * length;
}

#define SKEL(bones, iks) \
	"{\"skeleton\":{\"spine\":\"4.2.43\"},\"bones\":[" bones "],\"slots\":[],\"ik\":[" iks "]}"

/* One bone aims at its target, by mix; and follows it when it moves. */
static void one_bone_aims(void **state)
{
	(void)state;
	scene *s = import(SKEL("{\"name\":\"root\"},"
			       "{\"name\":\"arm\",\"parent\":\"root\",\"x\":10,\"length\":20,\"rotation\":-40},"
			       "{\"name\":\"t\",\"parent\":\"root\",\"x\":10,\"y\":30}",
			       "{\"name\":\"aim\",\"bones\":[\"arm\"],\"target\":\"t\"}"));

	/* The target straight above the joint: 90 degrees, whatever the
	 * pose's -40. */
	bone_is(s, "arm", 10, 0, 90, 1);
	assert_int_equal(scene_ik_live(s), 1);
	/* Moved left of the joint: 180. */
	move(s, "t", -20, 0);
	bone_is(s, "arm", 10, 0, 180, 1);
	/* Moved below-right: -45. */
	move(s, "t", 20, -10);
	bone_is(s, "arm", 10, 0, -45, 1);
	scene_free(s);

	/* mix 0.5: half way from the pose's -40 to 90. */
	s = import(SKEL("{\"name\":\"root\"},"
			"{\"name\":\"arm\",\"parent\":\"root\",\"x\":10,\"length\":20,\"rotation\":-40},"
			"{\"name\":\"t\",\"parent\":\"root\",\"x\":10,\"y\":30}",
			"{\"name\":\"aim\",\"bones\":[\"arm\"],\"target\":\"t\",\"mix\":0.5}"));
	bone_is(s, "arm", 10, 0, 25, 1);
	scene_free(s);
}

/* Under a rotated parent, every inherit mode aims the world x axis at the
 * target: the constraint makes up for what the bone inherits. */
static void one_bone_modes(void **state)
{
	static const char *const modes[] = { "normal", "onlyTranslation",
					     "noRotationOrReflection", "noScale",
					     "noScaleOrReflection" };
	(void)state;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char text[1024];
		scene *s;
		sp w;

		snprintf(text, sizeof(text),
			 SKEL("{\"name\":\"root\",\"rotation\":30},"
			      "{\"name\":\"arm\",\"parent\":\"root\",\"x\":10,\"length\":20,"
			      "\"inherit\":\"%s\"},"
			      "{\"name\":\"t\"}",
			      "{\"name\":\"aim\",\"bones\":[\"arm\"],\"target\":\"t\"}"),
			 modes[i]);
		s = import(text);
		/* The joint at (10 cos 30, 10 sin 30); the target 20 above it. */
		move(s, "t", 10 * cos(M_PI / 6), 10 * sin(M_PI / 6) + 20);
		w = world(s, "arm");
		near(atan2(w.c, w.a) * 180 / M_PI, 90, modes[i]);
		near(w.x, 10 * cos(M_PI / 6), modes[i]);
		scene_free(s);
	}
}

/* Stretch and compress scale the bone to the target's distance. */
static void one_bone_stretch(void **state)
{
	(void)state;
	scene *s = import(SKEL("{\"name\":\"root\"},"
			       "{\"name\":\"arm\",\"parent\":\"root\",\"x\":10,\"length\":20},"
			       "{\"name\":\"t\",\"parent\":\"root\",\"x\":10,\"y\":30}",
			       "{\"name\":\"aim\",\"bones\":[\"arm\"],\"target\":\"t\","
			       "\"stretch\":true,\"compress\":true,\"uniform\":true}"));
	sp w;

	bone_is(s, "arm", 10, 0, 90, 1.5); /* 30 away: 20 stretched by 1.5 */
	w = world(s, "arm");
	near(hypot(w.b, w.d), 1.5, "uniform: the y axis too");
	move(s, "t", 10, 10);
	bone_is(s, "arm", 10, 0, 90, 0.5); /* 10 away: compressed to half */
	scene_free(s);
}

/* The 3-4-5 triangle: bones of 30 and 40 reach a target 50 away with a
 * right angle at the elbow, bending either way. */
static void two_bones_triangle(void **state)
{
	(void)state;
	for (int bend = 0; bend < 2; bend++) {
		char text[1024];
		double a1 = atan2(4, 3) * 180 / M_PI, x, y; /* 53.13 degrees */
		scene *s;

		snprintf(text, sizeof(text),
			 SKEL("{\"name\":\"root\"},"
			      "{\"name\":\"upper\",\"parent\":\"root\",\"length\":30,\"rotation\":10},"
			      "{\"name\":\"lower\",\"parent\":\"upper\",\"x\":30,\"length\":40,\"rotation\":-20},"
			      "{\"name\":\"t\",\"x\":50}",
			      "{\"name\":\"leg\",\"bones\":[\"upper\",\"lower\"],\"target\":\"t\","
			      "\"bendPositive\":%s}"),
			 bend ? "true" : "false");
		s = import(text);
		/* bendPositive: the elbow below the line, the lower bone
		 * turned +90 from the upper one; else mirrored. */
		bone_is(s, "upper", 0, 0, bend ? -a1 : a1, 1);
		bone_is(s, "lower", 18, bend ? -24 : 24, bend ? 90 - a1 : a1 - 90, 1);
		tip_of(s, "lower", 40, &x, &y);
		near(x, 50, "tip x");
		near(y, 0, "tip y");
		/* The target moves to (0, 50): the same triangle turned 90. */
		move(s, "t", 0, 50);
		tip_of(s, "lower", 40, &x, &y);
		near(x, 0, "moved tip x");
		near(y, 50, "moved tip y");
		bone_is(s, "upper", 0, 0, bend ? 90 - a1 : 90 + a1, 1);
		scene_free(s);
	}
}

/* Out of reach the chain points straight at the target; with stretch the
 * parent scales so that the tip reaches it; softness pulls the target in
 * near full reach. */
static void two_bones_reach(void **state)
{
	(void)state;
	scene *s = import(SKEL("{\"name\":\"root\"},"
			       "{\"name\":\"upper\",\"parent\":\"root\",\"length\":30},"
			       "{\"name\":\"lower\",\"parent\":\"upper\",\"x\":30,\"length\":40},"
			       "{\"name\":\"t\",\"x\":60,\"y\":80}",
			       "{\"name\":\"leg\",\"bones\":[\"upper\",\"lower\"],\"target\":\"t\"}"));
	double deg = atan2(80, 60) * 180 / M_PI, x, y;

	bone_is(s, "upper", 0, 0, deg, 1);
	bone_is(s, "lower", 18, 24, deg, 1);
	scene_free(s);

	s = import(SKEL("{\"name\":\"root\"},"
			"{\"name\":\"upper\",\"parent\":\"root\",\"length\":30},"
			"{\"name\":\"lower\",\"parent\":\"upper\",\"x\":30,\"length\":40},"
			"{\"name\":\"t\",\"x\":100}",
			"{\"name\":\"leg\",\"bones\":[\"upper\",\"lower\"],\"target\":\"t\","
			"\"stretch\":true}"));
	tip_of(s, "lower", 40, &x, &y);
	near(x, 100, "stretched tip x");
	near(y, 0, "stretched tip y");
	bone_is(s, "upper", 0, 0, 0, 100.0 / 70);
	scene_free(s);

	/* Softness 10 at 65 of a reach of 70: sd = 65 - 70 + 10 = 5, so
	 * p = min(1, 5 / 20) - 1 = -0.75 and the target is pulled in by
	 * (5 - 10 (1 - p^2)) / 65: the tip lands 64.375 out. */
	s = import(SKEL("{\"name\":\"root\"},"
			"{\"name\":\"upper\",\"parent\":\"root\",\"length\":30},"
			"{\"name\":\"lower\",\"parent\":\"upper\",\"x\":30,\"length\":40},"
			"{\"name\":\"t\",\"x\":65}",
			"{\"name\":\"leg\",\"bones\":[\"upper\",\"lower\"],\"target\":\"t\","
			"\"softness\":10}"));
	tip_of(s, "lower", 40, &x, &y);
	near(x, 64.375, "soft tip x");
	near(y, 0, "soft tip y");
	/* Far inside full reach softness does nothing. */
	move(s, "t", 40, 0);
	tip_of(s, "lower", 40, &x, &y);
	near(x, 40, "inner tip x");
	scene_free(s);
}

/* Constraints solve in their order: 'gun' aims at a target that hangs
 * below 'arm', so it sees the arm as 'aim' left it only when 'aim' comes
 * first. */
static void constraint_order(void **state)
{
	(void)state;
	for (int first = 0; first < 2; first++) {
		char text[1024];
		scene *s;
		sp w;

		snprintf(text, sizeof(text),
			 SKEL("{\"name\":\"root\"},"
			      "{\"name\":\"arm\",\"parent\":\"root\",\"length\":20},"
			      "{\"name\":\"hand\",\"parent\":\"arm\",\"x\":20},"
			      "{\"name\":\"gun\",\"parent\":\"root\",\"x\":-20,\"length\":5},"
			      "{\"name\":\"t\",\"y\":40}",
			      "{\"name\":\"gun\",\"order\":%d,\"bones\":[\"gun\"],\"target\":\"hand\"},"
			      "{\"name\":\"aim\",\"order\":1,\"bones\":[\"arm\"],\"target\":\"t\"}"),
			 first ? 2 : 0);
		s = import(text);
		bone_is(s, "arm", 0, 0, 90, 1);
		bone_is(s, "hand", 0, 20, 90, 1);
		w = world(s, "gun");
		/* After aim: the hand at (0, 20), 20 right and 20 up of the
		 * gun; before it: the hand at (20, 0), 40 right. */
		near(atan2(w.c, w.a) * 180 / M_PI, first ? 45 : 0, "gun");
		scene_free(s);
	}
}

/* A constraint that can no longer be solved (its target deleted, its
 * chain broken) leaves its bones to the plain hierarchy. */
static void unbound(void **state)
{
	(void)state;
	scene *s = import(SKEL("{\"name\":\"root\"},"
			       "{\"name\":\"upper\",\"parent\":\"root\",\"length\":30,\"rotation\":10},"
			       "{\"name\":\"lower\",\"parent\":\"upper\",\"x\":30,\"length\":40},"
			       "{\"name\":\"t\",\"x\":50}",
			       "{\"name\":\"leg\",\"bones\":[\"upper\",\"lower\"],\"target\":\"t\"}"));
	edit_batch b;
	edit_error err;
	edit_op *op;

	assert_int_equal(scene_ik_live(s), 1);
	edit_batch_init(&b);
	assert_non_null(op = edit_batch_add(&b, EDIT_DELETE, "t"));
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), 0);
	edit_batch_release(&b);
	scene_update(s, stamp++, NULL, NULL);
	assert_int_equal(scene_ik_live(s), 0);
	bone_is(s, "upper", 0, 0, 10, 1);
	bone_is(s, "lower", 30 * cos(M_PI / 18), 30 * sin(M_PI / 18), 10, 1);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_bone_aims),
		cmocka_unit_test(one_bone_modes),
		cmocka_unit_test(one_bone_stretch),
		cmocka_unit_test(two_bones_triangle),
		cmocka_unit_test(two_bones_reach),
		cmocka_unit_test(constraint_order),
		cmocka_unit_test(unbound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
