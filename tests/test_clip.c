/*
 * test_clip.c: the clip sampler (server/core/clip.c).
 *
 * Clips built key by key with clip.h's builders, sampled and checked
 * against values worked out by hand from the formats' documented rules
 * (docs/clips.md): linear and stepped keys, Spine's ten-piece Bezier and
 * the exact curve, before the first key and after the last, rotation the
 * short way, multiplicative scale, weight blending, attachment and draw
 * order keys, DragonBones easings and sampled curves, the conversions to
 * rigd's frame. Prints the time to sample a 100-bone clip (a figure, not
 * a limit).
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
#include <time.h>

#include "core/clip.h"

/* |a - b| <= eps in doubles (cmocka's assert_float_equal compares floats). */
#define assert_near(a, b, eps)                                                              \
	do {                                                                                \
		double a_ = (a), b_ = (b);                                                  \
		if (!(fabs(a_ - b_) <= (eps)))                                              \
			fail_msg("%s = %.17g, expected %.17g (within %g)", #a, a_, b_,       \
				 (double)(eps));                                            \
	} while (0)
#define NEAR(a, b) assert_near((a), (b), 1e-9)

/* A clip of 'format' for 3 bones and 3 slots in a set the test releases. */
static clip *new_clip(clip_set *set, int format)
{
	clip *c;

	memset(set, 0, sizeof(*set));
	c = clip_set_add(set, "test", format, 3, 3);
	assert_non_null(c);
	return c;
}

/* A one-value timeline of 'n' keys (time, value) pairs, all 'curve'. */
static clip_timeline *timeline(clip *c, int bone, int channel, int n, const double *tv, int curve)
{
	clip_timeline *tl = clip_add_timeline(c, bone, channel, n);
	int k;

	assert_non_null(tl);
	for (k = 0; k < n; k++) {
		tl->keys[k].time = tv[2 * k];
		tl->keys[k].v[0] = tv[2 * k + 1];
		tl->keys[k].curve = curve;
	}
	return tl;
}

static void test_linear_and_stepped(void **state)
{
	static const double rot[] = { 0.0, 0.0, 1.0, 90.0 };
	static const double x[] = { 0.0, 10.0, 1.0, 50.0 };
	clip_bone_pose p[3];
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_SPINE);

	(void)state;
	timeline(c, 0, CLIP_CH_ROTATE, 2, rot, CLIP_CURVE_LINEAR);
	timeline(c, 1, CLIP_CH_TRANSLATE_X, 2, x, CLIP_CURVE_STEPPED);
	clip_sample(c, 0.25, 0, p);
	NEAR(p[0].ch.rotate_deg, 22.5);          /* 90 * 0.25 */
	assert_int_equal(p[0].mask, CLIP_M_ROTATE);
	NEAR(p[1].ch.x, 10.0);                   /* stepped: the key's value */
	assert_int_equal(p[1].mask, CLIP_M_X);
	assert_int_equal(p[2].mask, 0);          /* not animated: identity */
	NEAR(p[2].ch.scale_x, 1.0);
	clip_sample(c, 0.5, 0, p);
	NEAR(p[0].ch.rotate_deg, 45.0);
	clip_sample(c, 0.999, 0, p);
	NEAR(p[1].ch.x, 10.0);
	clip_sample(c, 1.0, 0, p);
	NEAR(p[1].ch.x, 50.0);
	clip_set_release(&set);
}

static void test_before_first_after_last(void **state)
{
	static const double rot[] = { 0.5, 30.0, 1.0, 60.0 };
	static const double sx[] = { 0.5, 2.0, 1.0, 3.0 };
	clip_bone_pose p[3];
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_SPINE);

	(void)state;
	timeline(c, 0, CLIP_CH_ROTATE, 2, rot, CLIP_CURVE_LINEAR);
	timeline(c, 0, CLIP_CH_SCALE_X, 2, sx, CLIP_CURVE_LINEAR);
	/* Before the first key Spine shows the setup pose: nothing added,
	 * scale times 1, and the channel still counts as animated. */
	clip_sample(c, 0.2, 0, p);
	NEAR(p[0].ch.rotate_deg, 0.0);
	NEAR(p[0].ch.scale_x, 1.0);
	assert_int_equal(p[0].mask, CLIP_M_ROTATE | CLIP_M_SCALE_X);
	clip_sample(c, 0.75, 0, p);
	NEAR(p[0].ch.rotate_deg, 45.0);
	NEAR(p[0].ch.scale_x, 2.5);
	/* After the last key its value holds. */
	clip_sample(c, 7.0, 0, p);
	NEAR(p[0].ch.rotate_deg, 60.0);
	NEAR(p[0].ch.scale_x, 3.0);
	clip_set_release(&set);
}

/*
 * The curve from (0, 0) to (1, 100) with controls (0.25, 0), (0.75, 100).
 * Its points: x(u) = 0.75 u + 0.75 u^2 - 0.5 u^3, y(u) = 100 (3 u^2 - 2 u^3).
 * The runtime's ten pieces end at
 *   u    0.1    0.2    0.3    0.4    0.5  ...  0.9
 *   x    0.082  0.176  0.279  0.388  0.5  ...  0.918
 *   y    2.8    10.4   21.6   35.2   50   ...  97.2
 * At time 0.25 (between u = 0.2 and 0.3):
 *   10.4 + (0.25 - 0.176) / (0.279 - 0.176) * (21.6 - 10.4)
 *   = 10.4 + 0.074 / 0.103 * 11.2 = 18.446601941747...
 * At time 0.05 (before the first point): 0.05 / 0.082 * 2.8 = 1.707317073170...
 * At time 0.95 (after the last): 97.2 + 0.032 / 0.082 * 2.8 = 98.292682926829...
 * Exactly: x(u) = 0.25 at u = 0.27256..., y = 18.236... (Newton by hand),
 * 0.21 below the runtime's value. The runtime writes the 1/6 of its forward
 * differences as 0.16666667, which moves the points by about 1e-8: hence
 * the 1e-7 tolerances.
 */
static void test_spine_bezier(void **state)
{
	static const double rot[] = { 0.0, 0.0, 1.0, 100.0 };
	static const double ctrl[4] = { 0.25, 0.0, 0.75, 100.0 };
	clip_bone_pose p[3];
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_SPINE);
	clip_timeline *tl;
	double exact;

	(void)state;
	tl = timeline(c, 0, CLIP_CH_ROTATE, 2, rot, CLIP_CURVE_BEZIER);
	memcpy(tl->keys[0].bezier[0], ctrl, sizeof(ctrl));
	clip_sample(c, 0.25, 0, p);
	assert_near(p[0].ch.rotate_deg, 10.4 + 0.074 / 0.103 * 11.2, 1e-7);
	clip_sample(c, 0.05, 0, p);
	assert_near(p[0].ch.rotate_deg, 0.05 / 0.082 * 2.8, 1e-7);
	clip_sample(c, 0.95, 0, p);
	assert_near(p[0].ch.rotate_deg, 97.2 + 0.032 / 0.082 * 2.8, 1e-7);
	clip_sample(c, 0.5, 0, p);
	assert_near(p[0].ch.rotate_deg, 50.0, 1e-7);   /* a sample point */
	/* The exact curve, behind the flag: close, not equal. */
	clip_sample(c, 0.25, CLIP_SAMPLE_EXACT_BEZIER, p);
	exact = p[0].ch.rotate_deg;
	assert_near(exact, 18.236, 2e-3);
	assert_true(fabs(exact - (10.4 + 0.074 / 0.103 * 11.2)) > 0.1);
	assert_true(fabs(exact - (10.4 + 0.074 / 0.103 * 11.2)) < 0.5);
	/* Over the whole curve the two part by less than one degree of its
	 * 100 (0.62 at time 0.961, where the ten pieces cut the bend most). */
	{
		double t, worst = 0.0;

		for (t = 0.0; t <= 1.0; t += 0.001) {
			double a = clip_bezier(0.0, 0.0, ctrl, 1.0, 100.0, t, false);
			double b = clip_bezier(0.0, 0.0, ctrl, 1.0, 100.0, t, true);

			if (fabs(a - b) > worst)
				worst = fabs(a - b);
		}
		assert_true(worst < 1.0);
		assert_true(worst > 0.1);
		print_message("Spine Bezier: runtime scheme vs exact curve, worst %.4f of 100\n", worst);
	}
	clip_set_release(&set);
}

static void test_two_value_bezier(void **state)
{
	/* translate: x on the curve above, y linear (controls on the line). */
	clip_bone_pose p[3];
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_SPINE);
	clip_timeline *tl = clip_add_timeline(c, 2, CLIP_CH_TRANSLATE, 2);
	static const double bx[4] = { 0.25, 0.0, 0.75, 100.0 };
	static const double by[4] = { 1.0 / 3.0, 10.0 / 3.0, 2.0 / 3.0, 20.0 / 3.0 };

	(void)state;
	assert_non_null(tl);
	tl->keys[0].curve = CLIP_CURVE_BEZIER;
	tl->keys[1].time = 1.0;
	tl->keys[1].v[0] = 100.0;
	tl->keys[1].v[1] = 10.0;
	memcpy(tl->keys[0].bezier[0], bx, sizeof(bx));
	memcpy(tl->keys[0].bezier[1], by, sizeof(by));
	clip_sample(c, 0.25, 0, p);
	assert_near(p[2].ch.x, 10.4 + 0.074 / 0.103 * 11.2, 1e-7);
	assert_near(p[2].ch.y, 2.5, 1e-7);   /* a straight "curve" stays straight */
	assert_int_equal(p[2].mask, CLIP_M_X | CLIP_M_Y);
	clip_set_release(&set);
}

static void test_scale_and_local(void **state)
{
	static const double s[] = { 0.0, 1.5, 1.0, 1.5 };
	static const double rot[] = { 0.0, 20.0 };
	clip_channels setup = { 10.0, 3.0, 4.0, 2.0, -1.0, 5.0, 6.0 };
	clip_bone_pose p[3];
	clip_local2d l;
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_SPINE);

	(void)state;
	timeline(c, 0, CLIP_CH_SCALE_X, 2, s, CLIP_CURVE_LINEAR);
	timeline(c, 0, CLIP_CH_ROTATE, 1, rot, CLIP_CURVE_LINEAR);
	clip_sample(c, 0.5, 0, p);
	clip_spine_local(&setup, &p[0], &l);
	NEAR(l.s[0], 3.0);           /* 2 * 1.5: multiplied */
	NEAR(l.s[1], -1.0);
	NEAR(l.angle_deg, 30.0);     /* 10 + 20: added */
	NEAR(l.t[0], 3.0);
	NEAR(l.t[1], -4.0);          /* Spine is y up */
	NEAR(l.shear_deg[0], 5.0);
	NEAR(l.shear_deg[1], 6.0);
	clip_set_release(&set);
}

static void test_blend(void **state)
{
	clip_channels cur = { 170.0, 10.0, 0.0, 1.0, 1.0, 0.0, 0.0 };
	clip_channels tgt = { -170.0, 20.0, 4.0, 3.0, 1.0, 10.0, 0.0 };
	clip_channels out;

	(void)state;
	clip_blend(&cur, &tgt, 0.5, &out);
	NEAR(out.rotate_deg, 180.0);     /* 170 -> -170 is 20 degrees the short way */
	NEAR(out.x, 15.0);
	NEAR(out.scale_x, 2.0);
	clip_blend(&cur, &tgt, 0.25, &out);
	NEAR(out.rotate_deg, 175.0);
	NEAR(out.x, 12.5);
	NEAR(out.y, 1.0);
	NEAR(out.shear_x_deg, 2.5);
	clip_blend(&cur, &tgt, 0.0, &out);
	NEAR(out.rotate_deg, 170.0);
	clip_blend(&cur, &tgt, 1.0, &out);
	NEAR(fmod(out.rotate_deg + 360.0, 360.0), 190.0);
	/* -90 -> 180 goes back through -180, not forward through 0: +/-180
	 * is the difference 270 wrapped to -90. */
	cur.rotate_deg = -90.0;
	tgt.rotate_deg = 180.0;
	clip_blend(&cur, &tgt, 0.5, &out);
	NEAR(out.rotate_deg, -135.0);
	/* Exactly half a turn goes +180 (the range is (-180, 180]). */
	cur.rotate_deg = 0.0;
	tgt.rotate_deg = -180.0;
	clip_blend(&cur, &tgt, 0.5, &out);
	NEAR(out.rotate_deg, 90.0);
}

static void test_attachments_and_order(void **state)
{
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_SPINE);
	clip_slot_timeline *tl = clip_add_slot_timeline(c, 1, 2);
	const clip_attachment_key *k;
	const int *order;
	int *o;

	(void)state;
	assert_non_null(tl);
	tl->keys[0].time = 0.5;
	assert_int_equal(clip_attachment_key_set(&tl->keys[0], "eyes_closed"), 0);
	tl->keys[1].time = 1.0;                  /* no attachment */
	assert_null(clip_slot_at(c, tl, 0.2));      /* the setup attachment */
	k = clip_slot_at(c, tl, 0.7);
	assert_non_null(k);
	assert_string_equal(k->name, "eyes_closed");
	k = clip_slot_at(c, tl, 3.0);
	assert_non_null(k);
	assert_null(k->name);

	assert_int_equal(clip_set_order_keys(c, 2), 0);
	c->order[0].time = 0.25;
	o = clip_order_key_alloc(c, 0);
	assert_non_null(o);
	o[0] = 2, o[1] = 0, o[2] = 1;
	c->order[1].time = 0.75;                 /* back to the setup order */
	assert_null(clip_order_at(c, 0.1));
	order = clip_order_at(c, 0.5);
	assert_non_null(order);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[2], 1);
	assert_null(clip_order_at(c, 0.8));
	clip_set_release(&set);
}

static void test_dragonbones_easing(void **state)
{
	clip_set set;
	clip *c = new_clip(&set, CLIP_FORMAT_DRAGONBONES);
	clip_key k = { 0 };
	int at;

	(void)state;
	k.curve = CLIP_CURVE_QUAD_IN;
	k.easing = 1.0;
	NEAR(clip_ease(c, &k, 0.5), 0.25);
	k.easing = 0.5;                          /* halfway to the quadratic */
	NEAR(clip_ease(c, &k, 0.5), 0.375);
	k.curve = CLIP_CURVE_QUAD_OUT;
	NEAR(clip_ease(c, &k, 0.5), 0.625);      /* (0.75 - 0.5) * 0.5 + 0.5 */
	k.curve = CLIP_CURVE_QUAD_IN_OUT;
	k.easing = 1.0;
	NEAR(clip_ease(c, &k, 0.25), 0.5 * (1.0 - sqrt(0.5)));
	k.curve = CLIP_CURVE_STEPPED;
	NEAR(clip_ease(c, &k, 0.7), 0.0);

	/* A sampled curve of three samples (in 1/10000): four pieces. */
	at = clip_add_samples(c, 3);
	assert_true(at >= 0);
	c->samples[at] = 1000.0, c->samples[at + 1] = 4000.0, c->samples[at + 2] = 9000.0;
	k.curve = CLIP_CURVE_SAMPLED;
	k.samples_at = at;
	k.n_samples = 3;
	NEAR(clip_ease(c, &k, 0.1), 0.04);       /* 0 + 1000 * 0.4 */
	NEAR(clip_ease(c, &k, 0.55), 0.5);       /* 4000 + 5000 * 0.2 */
	NEAR(clip_ease(c, &k, 0.9), 0.96);       /* 9000 + 1000 * 0.6 */
	NEAR(clip_ease(c, &k, 1.2), 1.0);

	/* In a timeline: rotate 0 -> 40 eased in (amount 1) and skew 0 -> 10. */
	{
		clip_timeline *tl = clip_add_timeline(c, 0, CLIP_CH_ROTATE, 2);
		clip_channels setup = { 30.0, 1.0, 2.0, 1.0, 1.0, 10.0, 0.0 };
		clip_bone_pose p[3];
		clip_local2d l;

		assert_non_null(tl);
		tl->keys[0].curve = CLIP_CURVE_QUAD_IN;
		tl->keys[0].easing = 1.0;
		tl->keys[1].time = 1.0;
		tl->keys[1].v[0] = 40.0;
		tl->keys[1].v[1] = 10.0;
		clip_sample(c, 0.5, 0, p);
		NEAR(p[0].ch.rotate_deg, 10.0);      /* 40 * 0.25 */
		NEAR(p[0].ch.shear_x_deg, 2.5);      /* the skew, same easing */
		assert_int_equal(p[0].mask, CLIP_M_ROTATE | CLIP_M_SKEW);
		/* skY = 30 + 10 = 40, skX = skY + skew 10 + 2.5 = 52.5. */
		clip_dragonbones_local(&setup, &p[0], &l);
		NEAR(l.angle_deg, -40.0);
		NEAR(l.shear_deg[0], 0.0);
		NEAR(l.shear_deg[1], -12.5);
		NEAR(l.t[0], 1.0);
		NEAR(l.t[1], 2.0);                   /* DragonBones is y down */
	}
	clip_set_release(&set);
}

static void test_list(void **state)
{
	clip_set set;
	clip_summary rows[2];
	clip *c = new_clip(&set, CLIP_FORMAT_DRAGONBONES);
	static const double x[] = { 0.0, 1.0 };

	(void)state;
	c->duration = 1.25;
	c->frame_rate = 24.0;
	timeline(c, 0, CLIP_CH_TRANSLATE_X, 1, x, CLIP_CURVE_LINEAR);
	assert_non_null(clip_set_add(&set, "second", CLIP_FORMAT_DRAGONBONES, 3, 3));
	assert_int_equal(clip_add_unsampled(&set.clips[1], "ffd"), 0);
	assert_int_equal(clip_list(&set, rows, 2), 2);
	assert_string_equal(rows[0].name, "test");
	NEAR(rows[0].duration, 1.25);
	NEAR(rows[0].frame_rate, 24.0);
	assert_int_equal(rows[0].n_bone_timelines, 1);
	assert_int_equal(rows[1].n_unsampled, 1);
	assert_non_null(clip_set_find(&set, "second"));
	assert_null(clip_set_find(&set, "third"));
	clip_set_release(&set);
	clip_set_release(NULL);
}

/* 100 bones, each with rotate, translate and scale timelines of 30 Bezier
 * keys: the time of one clip_sample, printed. */
static void test_timing(void **state)
{
	enum { BONES = 100, KEYS = 30, RUNS = 2000 };
	static clip_bone_pose p[BONES];
	static const int channels[] = { CLIP_CH_ROTATE, CLIP_CH_TRANSLATE, CLIP_CH_SCALE };
	clip_set set = { 0 };
	clip *c = clip_set_add(&set, "bench", CLIP_FORMAT_SPINE, BONES, 0);
	struct timespec t0, t1;
	double sum = 0.0, us;
	int b, q, k, run;

	(void)state;
	assert_non_null(c);
	for (b = 0; b < BONES; b++)
		for (q = 0; q < 3; q++) {
			clip_timeline *tl = clip_add_timeline(c, b, channels[q], KEYS);

			assert_non_null(tl);
			for (k = 0; k < KEYS; k++) {
				clip_key *ck = &tl->keys[k];
				int j;

				ck->time = k / 30.0;
				ck->v[0] = sin(k + b);
				ck->v[1] = cos(k + q);
				ck->curve = CLIP_CURVE_BEZIER;
				for (j = 0; j < 2; j++) {
					ck->bezier[j][0] = ck->time + 1.0 / 90.0;
					ck->bezier[j][1] = ck->v[j];
					ck->bezier[j][2] = ck->time + 2.0 / 90.0;
					ck->bezier[j][3] = ck->v[j] + 0.1;
				}
			}
		}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (run = 0; run < RUNS; run++) {
		clip_sample(c, (run % 997) / 997.0, 0, p);
		sum += p[run % BONES].ch.rotate_deg;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / RUNS;
	print_message("clip_sample: %d bones x 3 timelines x %d Bezier keys: %.2f us per sample (%g)\n",
		      BONES, KEYS, us, sum);
	clip_set_release(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear_and_stepped),
		cmocka_unit_test(test_before_first_after_last),
		cmocka_unit_test(test_spine_bezier),
		cmocka_unit_test(test_two_value_bezier),
		cmocka_unit_test(test_scale_and_local),
		cmocka_unit_test(test_blend),
		cmocka_unit_test(test_attachments_and_order),
		cmocka_unit_test(test_dragonbones_easing),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_timing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
