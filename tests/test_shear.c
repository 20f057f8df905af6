/*
 * test_shear.c: a 2D node's shear and inherit mode (server/core: math.c's
 * mat4_compose_pivot2d, inherit.c, the recompute pass and the edit layer).
 *
 * A shear of 0 0 gives today's local matrix bit for bit; a sheared local
 * matrix matches the formula of docs/transforms.md ("Shear and inherit
 * modes"); each of Spine's four other inherit modes matches Spine's
 * formulas, computed here in Spine's own y-up frame from the parent's
 * world carried there by F = diag(1, -1); DragonBones' flags match the
 * rules as docs/transforms.md states them, computed here on DragonBones'
 * own (rotation, skew, scale) values; edits, undo, refusals; the
 * recompute stays incremental and gives normal nodes the bits they had;
 * the worked example of docs/transforms.md 11.8.
 * Expected values are computed in this file from the documented formulas,
 * never taken from the code under test.
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
#define TRIALS 300

/* ---------- helpers ---------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double rnd(double lo, double hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + (hi - lo) * (double)(rng >> 11) / 9007199254740992.0;
}

/* A scale in +-[0.5, 2], negative a third of the time. */
static double rnd_scale(void)
{
	double v = rnd(0.5, 2);

	return rnd(0, 1) < 0.33 ? -v : v;
}

/* A shear whose axes stay well apart from collinear. */
static void rnd_shear(double sh[2])
{
	sh[0] = rnd(-60, 60);
	sh[1] = sh[0] + rnd(-60, 60);
}

static scene *new2d(void)
{
	scene *s = scene_new();

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	return s;
}

/* Random 2D channels: angle, shear, scale, translation; pivot 0. */
static node_props rnd_props(bool sheared)
{
	node_props p = node_props_default();

	p.t = vec3_make(rnd(-5, 5), rnd(-5, 5), 0);
	p.r = quat_from_angle2d_deg(rnd(-180, 180));
	p.s = vec3_make(rnd_scale(), rnd_scale(), 1);
	if (sheared)
		rnd_shear(p.shear);
	return p;
}

static int create(scene *s, const char *id, int parent, const node_props *p)
{
	int n = -1;

	assert_int_equal(scene_create(s, id, parent, -1, p, &n), 0);
	return n;
}

static void assert_near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol * fmax(1, fabs(want))))
		fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* The screen angle in degrees of a node's stored rotation: 2 atan2(z, w)
 * is the turn about z, the screen angle its negative. */
static double angle_of(quat r)
{
	return -2 * atan2(r.z, r.w) / DEG;
}

/* ---------- local matrices ---------- */

static void test_zero_shear_bits(void **state)
{
	static const double zero[2] = { 0, 0 };

	(void)state;
	for (int i = 0; i < TRIALS; i++) {
		node_props p = rnd_props(false);
		mat4 a, b;
		scene *s = new2d();
		int n;

		p.pivot = vec3_make(rnd(-3, 3), rnd(-3, 3), 0);
		a = mat4_compose_pivot(p.t, p.r, p.s, p.pivot);
		b = mat4_compose_pivot2d(p.t, p.r, p.s, p.pivot, zero);
		assert_memory_equal(a.m, b.m, sizeof(a.m));
		n = create(s, "n", -1, &p);
		a = scene_local(s, n);
		/* What the scene stored before shears existed. */
		b = mat4_from_mat34(mat34_from_mat4(mat4_compose_pivot(p.t, p.r, p.s, p.pivot)));
		assert_memory_equal(a.m, b.m, sizeof(a.m));
		scene_free(s);
	}
}

static void test_local_formula(void **state)
{
	(void)state;
	for (int i = 0; i < TRIALS; i++) {
		node_props p = rnd_props(true);
		double a = angle_of(p.r), shx = p.shear[0], shy = p.shear[1], m[4];
		scene *s = new2d();
		mat4 l;
		int n;

		p.pivot = vec3_make(rnd(-3, 3), rnd(-3, 3), 0);
		n = create(s, "n", -1, &p);
		l = scene_local(s, n);
		/* x axis s.x (cos(a + shx), -sin(a + shx)), y axis s.y (sin(a +
		 * shy), cos(a + shy)); L = T(t + pivot) M T(-pivot). */
		m[0] = p.s.x * cos((a + shx) * DEG);
		m[1] = -p.s.x * sin((a + shx) * DEG);
		m[2] = p.s.y * sin((a + shy) * DEG);
		m[3] = p.s.y * cos((a + shy) * DEG);
		assert_near(l.m[0], m[0], 1e-12, "x axis x");
		assert_near(l.m[1], m[1], 1e-12, "x axis y");
		assert_near(l.m[4], m[2], 1e-12, "y axis x");
		assert_near(l.m[5], m[3], 1e-12, "y axis y");
		assert_near(l.m[12], p.t.x + p.pivot.x - (m[0] * p.pivot.x + m[2] * p.pivot.y), 1e-12,
			    "tx");
		assert_near(l.m[13], p.t.y + p.pivot.y - (m[1] * p.pivot.x + m[3] * p.pivot.y), 1e-12,
			    "ty");
		assert_true(l.m[2] == 0 && l.m[6] == 0 && l.m[8] == 0 && l.m[9] == 0 &&
			    l.m[10] == 1 && l.m[14] == 0);
		scene_free(s);
	}
}

/* ---------- Spine's modes ---------- */

typedef struct sp_mat {
	double a, b, c, d, x, y; /* Spine's world: a b / c d, worldX worldY (y-up) */
} sp_mat;

/* A rigd world matrix seen in Spine's frame: F W F, F = diag(1, -1). */
static sp_mat to_spine(mat4 w)
{
	return (sp_mat){ w.m[0], -w.m[4], -w.m[1], w.m[5], w.m[12], -w.m[13] };
}

/* Spine's bone world update for 'mode' from the parent's world 'p' and the
 * bone's x, y, rotation, shearX, shearY (degrees), scaleX, scaleY, with a
 * skeleton scale of 1 (Spine's documented formulas). */
static sp_mat spine_world(int mode, sp_mat p, double x, double y, double rot, double shx,
			  double shy, double sx, double sy)
{
	double pa = p.a, pb = p.b, pc = p.c, pd = p.d, la, lb, lc, ld;
	sp_mat w;

	w.x = pa * x + pb * y + p.x;
	w.y = pc * x + pd * y + p.y;
	switch (mode) {
	case INHERIT_ONLY_TRANSLATION:
		w.a = cos((rot + shx) * DEG) * sx;
		w.b = cos((rot + 90 + shy) * DEG) * sy;
		w.c = sin((rot + shx) * DEG) * sx;
		w.d = sin((rot + 90 + shy) * DEG) * sy;
		break;
	case INHERIT_NO_ROTATION_OR_REFLECTION: {
		double s = pa * pa + pc * pc, prx, rx, ry;

		if (s > 0.0001) {
			s = fabs(pa * pd - pb * pc) / s;
			pb = pc * s;
			pd = pa * s;
			prx = atan2(pc, pa) / DEG;
		} else {
			pa = 0;
			pc = 0;
			prx = 90 - atan2(pd, pb) / DEG;
		}
		rx = rot + shx - prx;
		ry = rot + shy - prx + 90;
		la = cos(rx * DEG) * sx;
		lb = cos(ry * DEG) * sy;
		lc = sin(rx * DEG) * sx;
		ld = sin(ry * DEG) * sy;
		w.a = pa * la - pb * lc;
		w.b = pa * lb - pb * ld;
		w.c = pc * la + pd * lc;
		w.d = pc * lb + pd * ld;
		break;
	}
	default: { /* noScale, noScaleOrReflection */
		double r = rot * DEG, za = pa * cos(r) + pb * sin(r), zc = pc * cos(r) + pd * sin(r);
		double s = sqrt(za * za + zc * zc), zb, zd;

		if (s > 0.00001)
			s = 1 / s;
		za *= s;
		zc *= s;
		s = sqrt(za * za + zc * zc);
		if (mode == INHERIT_NO_SCALE && pa * pd - pb * pc < 0)
			s = -s;
		r = M_PI / 2 + atan2(zc, za);
		zb = cos(r) * s;
		zd = sin(r) * s;
		la = cos(shx * DEG) * sx;
		lb = cos((90 + shy) * DEG) * sy;
		lc = sin(shx * DEG) * sx;
		ld = sin((90 + shy) * DEG) * sy;
		w.a = za * la + zb * lc;
		w.b = za * lb + zb * ld;
		w.c = zc * la + zd * lc;
		w.d = zc * lb + zd * ld;
		break;
	}
	}
	return w;
}

static void assert_sp_near(sp_mat got, sp_mat want, const char *mode, int trial)
{
	char what[64];
	const double g[6] = { got.a, got.b, got.c, got.d, got.x, got.y };
	const double e[6] = { want.a, want.b, want.c, want.d, want.x, want.y };

	for (int i = 0; i < 6; i++) {
		snprintf(what, sizeof(what), "%s trial %d entry %d", mode, trial, i);
		assert_near(g[i], e[i], 1e-12, what);
	}
}

static void check_spine_mode(int mode, const char *name)
{
	for (int i = 0; i < TRIALS; i++) {
		node_props gp = rnd_props(true), pp = rnd_props(true), cp = rnd_props(true);
		scene *s = new2d();
		int g, p, c, cc;
		sp_mat want;
		mat4 wc;

		/* Now and then a parent whose x axis all but vanishes: the other
		 * branch of noRotationOrReflection. */
		if (i % 10 == 0)
			pp.s.x = 0.004;
		cp.inherit = mode;
		g = create(s, "g", -1, &gp);
		p = create(s, "p", g, &pp);
		c = create(s, "c", p, &cp);
		cc = create(s, "cc", c, NULL);
		scene_update(s, 1, NULL, NULL);
		want = spine_world(mode, to_spine(scene_world(s, p)), cp.t.x, -cp.t.y, angle_of(cp.r),
				   cp.shear[0], cp.shear[1], cp.s.x, cp.s.y);
		wc = scene_world(s, c);
		assert_sp_near(to_spine(wc), want, name, i);
		assert_true(wc.m[2] == 0 && wc.m[6] == 0 && wc.m[8] == 0 && wc.m[9] == 0 &&
			    wc.m[10] == 1 && wc.m[14] == 0);
		/* A normal child of a non-normal node: W = W_c * L, bit for bit. */
		{
			mat4 want_cc = mat4_from_mat34(mat34_from_mat4(mat4_mul(wc, scene_local(s, cc))));
			mat4 got_cc = scene_world(s, cc);
			mat34 a = mat34_from_mat4(want_cc), b = mat34_from_mat4(got_cc);

			for (int k = 0; k < 12; k++)
				assert_near(b.m[k], a.m[k], 1e-14, "normal child");
		}
		scene_free(s);
	}
}

static void test_spine_only_translation(void **state)
{
	(void)state;
	check_spine_mode(INHERIT_ONLY_TRANSLATION, "onlyTranslation");
}

static void test_spine_no_rotation_or_reflection(void **state)
{
	(void)state;
	check_spine_mode(INHERIT_NO_ROTATION_OR_REFLECTION, "noRotationOrReflection");
}

static void test_spine_no_scale(void **state)
{
	(void)state;
	check_spine_mode(INHERIT_NO_SCALE, "noScale");
}

static void test_spine_no_scale_or_reflection(void **state)
{
	(void)state;
	check_spine_mode(INHERIT_NO_SCALE_OR_REFLECTION, "noScaleOrReflection");
}

/* The properties the modes are named for, on a parent turned by 30 degrees
 * and scaled by (2, 3): onlyTranslation keeps the local block; noScale
 * with a parent of uniform scale 2 gives the parent's turn times the local
 * block; a pivot keeps its meaning (the pivot point lands where the
 * parent's world puts t + pivot). */
static void test_mode_properties(void **state)
{
	node_props pp = node_props_default(), cp = node_props_default();
	scene *s = new2d();
	int p, c;
	mat4 wp, wc, lc;
	vec3 at;

	(void)state;
	pp.t = vec3_make(10, 20, 0);
	pp.r = quat_from_angle2d_deg(30);
	pp.s = vec3_make(2, 3, 1);
	cp.t = vec3_make(1, 2, 0);
	cp.r = quat_from_angle2d_deg(15);
	cp.s = vec3_make(1.5, 0.5, 1);
	cp.shear[1] = 20;
	cp.pivot = vec3_make(0.25, -0.5, 0);
	cp.inherit = INHERIT_ONLY_TRANSLATION;
	p = create(s, "p", -1, &pp);
	c = create(s, "c", p, &cp);
	scene_update(s, 1, NULL, NULL);
	wp = scene_world(s, p);
	wc = scene_world(s, c);
	lc = scene_local(s, c);
	assert_near(wc.m[0], lc.m[0], 1e-15, "a");
	assert_near(wc.m[1], lc.m[1], 1e-15, "c");
	assert_near(wc.m[4], lc.m[4], 1e-15, "b");
	assert_near(wc.m[5], lc.m[5], 1e-15, "d");
	/* The pivot point. */
	at = mat4_point(wp, vec3_add(cp.t, cp.pivot));
	{
		vec3 got = mat4_point(wc, cp.pivot);

		assert_near(got.x, at.x, 1e-12, "pivot x");
		assert_near(got.y, at.y, 1e-12, "pivot y");
	}
	/* noScale under a uniform scale of 2 turned by 30: the world block is
	 * the local block turned by 30 more degrees (no scale inherited). */
	pp.s = vec3_make(2, 2, 1);
	cp.inherit = INHERIT_NO_SCALE;
	assert_int_equal(scene_set(s, p, PROP_S, &pp), 0);
	assert_int_equal(scene_set(s, c, PROP_INHERIT, &cp), 0);
	scene_update(s, 2, NULL, NULL);
	wc = scene_world(s, c);
	{
		double ca = cos(-30 * DEG), sa = sin(-30 * DEG); /* screen 30: about z by -30 */

		assert_near(wc.m[0], ca * lc.m[0] - sa * lc.m[1], 1e-12, "noScale a");
		assert_near(wc.m[1], sa * lc.m[0] + ca * lc.m[1], 1e-12, "noScale c");
		assert_near(wc.m[4], ca * lc.m[4] - sa * lc.m[5], 1e-12, "noScale b");
		assert_near(wc.m[5], sa * lc.m[4] + ca * lc.m[5], 1e-12, "noScale d");
	}
	scene_free(s);
}

/* The worked example of docs/transforms.md 11.8, its figures computed by
 * hand there: a parent at (100, 50) turned 90 and scaled (2, 1), a child
 * at (10, 0) with shear [0, 30], in each mode; then the mirror that tells
 * the two noScale modes apart. */
static void test_worked_example(void **state)
{
	static const struct {
		int mode;
		double x[2], y[2], t[2];
	} rows[] = {
		{ INHERIT_NORMAL, { 0, -2 }, { 0.8660254037844386, -1 }, { 100, 30 } },
		{ INHERIT_ONLY_TRANSLATION, { 1, 0 }, { 0.5, 0.8660254037844386 }, { 100, 30 } },
		{ INHERIT_NO_ROTATION_OR_REFLECTION, { 1, 0 }, { 0.5, 1.7320508075688772 }, { 100, 30 } },
		{ INHERIT_NO_SCALE, { 0, -1 }, { 0.8660254037844386, -0.5 }, { 100, 30 } },
		{ INHERIT_NO_SCALE_OR_REFLECTION, { 0, -1 }, { 0.8660254037844386, -0.5 }, { 100, 30 } },
		{ INHERIT_DB | DB_NO_SCALE, { 0, -1 }, { 0.8660254037844386, -0.5 }, { 100, 30 } },
		{ INHERIT_DB | DB_NO_ROTATION, { 1, 0 }, { 0.5, 1.7320508075688772 }, { 100, 30 } },
		{ INHERIT_DB | DB_NO_TRANSLATION, { 0, -2 }, { 0.8660254037844386, -1 }, { 10, 0 } },
	};
	static const struct {
		int mode;
		double x[2], y[2];
	} mirror[] = {
		{ INHERIT_NO_SCALE, { 0.8660254037844386, 0.5 }, { 0.5, -0.8660254037844386 } },
		{ INHERIT_NO_SCALE_OR_REFLECTION, { 0.8660254037844386, 0.5 }, { -0.5, 0.8660254037844386 } },
		{ INHERIT_NORMAL, { 0.8660254037844386, 0.5 }, { 0.5, -0.8660254037844386 } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		node_props pp = node_props_default(), cp = node_props_default();
		scene *s = new2d();
		mat4 w;

		pp.t = vec3_make(100, 50, 0);
		pp.r = quat_from_angle2d_deg(90);
		pp.s = vec3_make(2, 1, 1);
		cp.t = vec3_make(10, 0, 0);
		cp.shear[1] = 30;
		cp.inherit = rows[i].mode;
		create(s, "c", create(s, "p", -1, &pp), &cp);
		scene_update(s, 1, NULL, NULL);
		w = scene_world(s, scene_find(s, "c"));
		assert_near(w.m[0], rows[i].x[0], 1e-12, "x.x");
		assert_near(w.m[1], rows[i].x[1], 1e-12, "x.y");
		assert_near(w.m[4], rows[i].y[0], 1e-12, "y.x");
		assert_near(w.m[5], rows[i].y[1], 1e-12, "y.y");
		assert_near(w.m[12], rows[i].t[0], 1e-12, "t.x");
		assert_near(w.m[13], rows[i].t[1], 1e-12, "t.y");
		scene_free(s);
	}
	for (size_t i = 0; i < sizeof(mirror) / sizeof(mirror[0]); i++) {
		node_props pp = node_props_default(), cp = node_props_default();
		scene *s = new2d();
		mat4 w;

		pp.s = vec3_make(1, -1, 1);
		cp.r = quat_from_angle2d_deg(30);
		cp.inherit = mirror[i].mode;
		create(s, "c", create(s, "p", -1, &pp), &cp);
		scene_update(s, 1, NULL, NULL);
		w = scene_world(s, scene_find(s, "c"));
		assert_near(w.m[0], mirror[i].x[0], 1e-12, "mirror x.x");
		assert_near(w.m[1], mirror[i].x[1], 1e-12, "mirror x.y");
		assert_near(w.m[4], mirror[i].y[0], 1e-12, "mirror y.x");
		assert_near(w.m[5], mirror[i].y[1], 1e-12, "mirror y.y");
		scene_free(s);
	}
}

/* ---------- DragonBones' flags ---------- */

typedef struct db_xf {
	double x, y, rot, skew, scx, scy; /* radians; y-down */
} db_xf;

typedef struct db_mat {
	double a, b, c, d, tx, ty;
} db_mat;

/* DragonBones' matrix of a transform: x axis scx (cos rot, sin rot), y
 * axis scy (-sin(rot + skew), cos(rot + skew)). */
static db_mat db_matrix(db_xf t)
{
	return (db_mat){ cos(t.rot) * t.scx, sin(t.rot) * t.scx, -sin(t.rot + t.skew) * t.scy,
			 cos(t.rot + t.skew) * t.scy, t.x, t.y };
}

/* parent applied after local. */
static db_mat db_concat(db_mat p, db_mat l)
{
	return (db_mat){ p.a * l.a + p.c * l.b, p.b * l.a + p.d * l.b, p.a * l.c + p.c * l.d,
			 p.b * l.c + p.d * l.d, p.a * l.tx + p.c * l.ty + p.tx,
			 p.b * l.tx + p.d * l.ty + p.ty };
}

static db_mat db_of(mat4 w)
{
	return (db_mat){ w.m[0], w.m[1], w.m[4], w.m[5], w.m[12], w.m[13] };
}

/* The world of a bone with flags 'bits' (DB_NO_: a flag false) under a
 * parent of world 'p', as docs/transforms.md states DragonBones' rules. */
static db_mat db_world(unsigned bits, db_mat p, db_xf g)
{
	double prot = atan2(p.b, p.a);
	db_mat m;

	if (!(bits & DB_NO_SCALE)) {
		if (bits & DB_NO_ROTATION)
			g.rot -= prot;
		m = db_concat(p, db_matrix(g));
		if (bits & DB_NO_TRANSLATION) {
			m.tx = g.x;
			m.ty = g.y;
		}
		return m;
	}
	if (!(bits & DB_NO_TRANSLATION)) {
		double x = g.x, y = g.y;

		g.x = p.a * x + p.c * y + p.tx;
		g.y = p.b * x + p.d * y + p.ty;
	}
	if (!(bits & DB_NO_ROTATION)) {
		double r = prot;

		if (p.a * p.d - p.b * p.c < 0) {
			r -= 2 * g.rot;
			if (!(bits & DB_NO_REFLECTION))
				g.skew += M_PI;
		}
		g.rot += r;
	}
	return db_matrix(g);
}

static void test_dragonbones_flags(void **state)
{
	(void)state;
	for (unsigned bits = 0; bits < 16; bits++)
		for (int i = 0; i < TRIALS / 3; i++) {
			node_props gp = rnd_props(true), pp = rnd_props(true), cp = node_props_default();
			double skx = rnd(-180, 180), sky = skx + rnd(-60, 60);
			db_xf g = { rnd(-5, 5), rnd(-5, 5), sky * DEG, (skx - sky) * DEG, rnd_scale(),
				    rnd_scale() };
			db_mat want, got, local;
			scene *s = new2d();
			int p, c;
			char what[64];

			/* As an importer maps a DragonBones bone: angle -skY, shear
			 * [0, skY - skX]. */
			cp.t = vec3_make(g.x, g.y, 0);
			cp.r = quat_from_angle2d_deg(-sky);
			cp.shear[1] = sky - skx;
			cp.s = vec3_make(g.scx, g.scy, 1);
			cp.inherit = (int)(INHERIT_DB | bits);
			if (bits == 0)
				cp.inherit = INHERIT_NORMAL; /* all flags true */
			p = create(s, "p", create(s, "g", -1, &gp), &pp);
			c = create(s, "c", p, &cp);
			scene_update(s, 1, NULL, NULL);
			/* The mapping gives DragonBones' own local matrix. */
			local = db_of(scene_local(s, c));
			want = db_matrix(g);
			assert_near(local.a, want.a, 1e-12, "local a");
			assert_near(local.b, want.b, 1e-12, "local b");
			assert_near(local.c, want.c, 1e-12, "local c");
			assert_near(local.d, want.d, 1e-12, "local d");
			want = db_world(bits, db_of(scene_world(s, p)), g);
			got = db_of(scene_world(s, c));
			snprintf(what, sizeof(what), "flags %u trial %d", bits, i);
			assert_near(got.a, want.a, 1e-12, what);
			assert_near(got.b, want.b, 1e-12, what);
			assert_near(got.c, want.c, 1e-12, what);
			assert_near(got.d, want.d, 1e-12, what);
			assert_near(got.tx, want.tx, 1e-12, what);
			assert_near(got.ty, want.ty, 1e-12, what);
			scene_free(s);
		}
}

/* Only reflection off, with scale inherited, is the normal product, bit
 * for bit. */
static void test_dragonbones_reflection_only(void **state)
{
	node_props pp = rnd_props(true), cp = rnd_props(true);
	scene *a = new2d(), *b = new2d();
	mat4 wa, wb;

	(void)state;
	create(a, "c", create(a, "p", -1, &pp), &cp);
	cp.inherit = INHERIT_DB | DB_NO_REFLECTION;
	create(b, "c", create(b, "p", -1, &pp), &cp);
	scene_update(a, 1, NULL, NULL);
	scene_update(b, 1, NULL, NULL);
	wa = scene_world(a, scene_find(a, "c"));
	wb = scene_world(b, scene_find(b, "c"));
	assert_memory_equal(wa.m, wb.m, sizeof(wa.m));
	scene_free(a);
	scene_free(b);
}

/* ---------- the recompute ---------- */

/* A set on a non-normal node's parent recomputes the node (and only that
 * subtree), to the bits a scene built afresh gives; the matrices
 * scene_world gives a dirty node, scene_traverse and scene_update agree. */
static void test_incremental(void **state)
{
	node_props gp = rnd_props(true), pp = rnd_props(true), cp = rnd_props(true);
	node_props qp = rnd_props(true);
	scene *s = new2d(), *fresh = new2d();
	int p;
	mat4 before, dirty, after;

	(void)state;
	cp.inherit = INHERIT_NO_SCALE;
	qp.inherit = INHERIT_NO_ROTATION_OR_REFLECTION;
	p = create(s, "p", create(s, "g", -1, &gp), &pp);
	create(s, "q", create(s, "c", p, &cp), &qp);
	create(s, "other", -1, NULL);
	assert_int_equal(scene_update(s, 1, NULL, NULL), 5);
	before = scene_world(s, scene_find(s, "q"));
	pp.s = vec3_make(-1.25, 0.75, 1);
	pp.shear[0] = 10;
	assert_int_equal(scene_set(s, p, PROP_S | PROP_SHEAR, &pp), 0);
	dirty = scene_world(s, scene_find(s, "q"));
	assert_int_equal(scene_update(s, 2, NULL, NULL), 3);
	after = scene_world(s, scene_find(s, "q"));
	assert_memory_not_equal(before.m, after.m, sizeof(before.m));
	assert_memory_equal(dirty.m, after.m, sizeof(dirty.m));
	assert_int_equal(scene_world_stamp(s, scene_find(s, "q")), 2);
	assert_int_equal(scene_world_stamp(s, scene_find(s, "other")), 1);
	/* Afresh, in one pass. */
	p = create(fresh, "p", create(fresh, "g", -1, &gp), &pp);
	create(fresh, "q", create(fresh, "c", p, &cp), &qp);
	create(fresh, "other", -1, NULL);
	scene_update(fresh, 1, NULL, NULL);
	assert_true(scene_hash(s) == scene_hash(fresh));
	scene_free(s);
	scene_free(fresh);
}

typedef struct visit_check {
	const scene *s;
	int seen;
} visit_check;

static void visit(void *ctx, int node, int depth, const mat4 *world)
{
	visit_check *v = ctx;
	mat4 w = scene_world(v->s, node);

	(void)depth;
	assert_memory_equal(w.m, world->m, sizeof(w.m));
	v->seen++;
}

/* Normal nodes of a scene that also holds non-normal ones get exactly the
 * bits they get without them (the mixed pass); scene_traverse agrees. */
static void test_mixed_pass_bits(void **state)
{
	enum { N = 400 };
	scene *plain = new2d(), *mixed = new2d();
	int parents[N], hp[N], hm[N];
	char id[16];
	visit_check v;

	(void)state;
	for (int i = 0; i < N; i++) {
		node_props p = rnd_props(i % 3 == 0);

		parents[i] = i == 0 || rnd(0, 1) < 0.1 ? -1 : (int)rnd(0, i);
		snprintf(id, sizeof(id), "n%d", i);
		hp[i] = create(plain, id, parents[i] < 0 ? -1 : hp[parents[i]], &p);
		hm[i] = create(mixed, id, parents[i] < 0 ? -1 : hm[parents[i]], &p);
		if (i % 50 == 7) {
			p.inherit = i % 100 == 7 ? INHERIT_NO_SCALE : INHERIT_DB | DB_NO_ROTATION;
			snprintf(id, sizeof(id), "x%d", i);
			create(mixed, id, hm[i], &p);
		}
	}
	scene_update(plain, 1, NULL, NULL);
	scene_update(mixed, 1, NULL, NULL);
	for (int i = 0; i < N; i++) {
		mat4 a, b;

		snprintf(id, sizeof(id), "n%d", i);
		a = scene_world(plain, scene_find(plain, id));
		b = scene_world(mixed, scene_find(mixed, id));
		assert_memory_equal(a.m, b.m, sizeof(a.m));
	}
	v.s = mixed;
	v.seen = 0;
	assert_true(scene_traverse(mixed, visit, &v) > 0);
	assert_int_equal(v.seen, scene_count(mixed));
	scene_free(plain);
	scene_free(mixed);
}

/* ---------- edits ---------- */

static edit_op *add_create(edit_batch *b, const char *id, const char *parent)
{
	edit_op *op = edit_batch_add(b, EDIT_CREATE, id);

	assert_non_null(op);
	if (parent)
		assert_int_equal(edit_op_set_parent(op, parent), 0);
	return op;
}

static void apply_ok(scene *s, edit_batch *b, edit_batch *inverse)
{
	edit_error err;

	if (edit_apply(s, b, NULL, inverse, &err) != 0)
		fail_msg("refused: %s", err.message);
	edit_batch_release(b);
}

static void apply_fails(scene *s, edit_batch *b, int code, const char *field)
{
	edit_error err;

	assert_int_equal(edit_apply(s, b, NULL, NULL, &err), code);
	assert_int_equal(err.op, 0);
	assert_string_equal(err.field, field);
	edit_batch_release(b);
}

static void test_edit_and_undo(void **state)
{
	scene *s = new2d();
	edit_batch b, inv;
	edit_op *op;
	node_props p;
	uint64_t h0, h1;

	(void)state;
	edit_batch_init(&b);
	op = add_create(&b, "arm", NULL);
	op->fields |= EDIT_F_ANGLE | EDIT_F_T;
	op->angle_deg = 30;
	op->t = vec3_make(4, 5, 0);
	op = add_create(&b, "hand", "arm");
	op->fields |= EDIT_F_SHEAR | EDIT_F_INHERIT | EDIT_F_T;
	op->t = vec3_make(2, 0, 0);
	op->shear_deg[0] = 5;
	op->shear_deg[1] = -12.5;
	op->inherit = INHERIT_NO_SCALE_OR_REFLECTION;
	add_create(&b, "finger", "hand");
	apply_ok(s, &b, NULL);
	scene_props(s, scene_find(s, "hand"), &p);
	assert_true(p.shear[0] == 5 && p.shear[1] == -12.5);
	assert_int_equal(p.inherit, INHERIT_NO_SCALE_OR_REFLECTION);
	scene_update(s, 1, NULL, NULL);
	h0 = scene_hash(s);

	/* A set of both, undone bit for bit. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "hand");
	op->fields |= EDIT_F_SHEAR | EDIT_F_INHERIT;
	op->shear_deg[0] = -0.1;
	op->shear_deg[1] = 33;
	op->inherit = INHERIT_DB | DB_NO_SCALE | DB_NO_TRANSLATION;
	edit_batch_init(&inv);
	apply_ok(s, &b, &inv);
	scene_update(s, 2, NULL, NULL);
	h1 = scene_hash(s);
	assert_true(h0 != h1);
	assert_int_equal(edit_revert(s, &inv), 0);
	scene_update(s, 3, NULL, NULL);
	assert_true(scene_hash(s) == h0);
	scene_props(s, scene_find(s, "hand"), &p);
	assert_true(p.shear[0] == 5 && p.shear[1] == -12.5);
	assert_int_equal(p.inherit, INHERIT_NO_SCALE_OR_REFLECTION);

	/* A delete of the subtree, undone: shear and mode come back. */
	edit_batch_init(&b);
	edit_batch_add(&b, EDIT_DELETE, "arm");
	edit_batch_init(&inv);
	apply_ok(s, &b, &inv);
	scene_update(s, 4, NULL, NULL);
	assert_int_equal(scene_count(s), 0);
	assert_int_equal(edit_revert(s, &inv), 0);
	scene_update(s, 5, NULL, NULL);
	assert_true(scene_hash(s) == h0);
	scene_props(s, scene_find(s, "hand"), &p);
	assert_true(p.shear[0] == 5 && p.shear[1] == -12.5);
	assert_int_equal(p.inherit, INHERIT_NO_SCALE_OR_REFLECTION);

	/* DragonBones' flags all true are the normal mode. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "hand");
	op->fields |= EDIT_F_INHERIT;
	op->inherit = INHERIT_DB;
	apply_ok(s, &b, NULL);
	scene_props(s, scene_find(s, "hand"), &p);
	assert_int_equal(p.inherit, INHERIT_NORMAL);
	scene_free(s);
}

static void test_refusals(void **state)
{
	scene *s3 = scene_new(), *s2 = new2d();
	edit_batch b;
	edit_op *op;
	edit_error err;
	static const int bad_modes[] = { 5, 15, -1, 0x20, 0x30, 0x11 | 0x40 };

	(void)state;
	/* 3D: a non-zero shear or a mode is refused; zero and normal pass. */
	edit_batch_init(&b);
	op = add_create(&b, "n", NULL);
	op->fields |= EDIT_F_SHEAR;
	op->shear_deg[1] = 1;
	apply_fails(s3, &b, RIGD_E_BAD_FIELD, "shear");
	edit_batch_init(&b);
	op = add_create(&b, "n", NULL);
	op->fields |= EDIT_F_INHERIT;
	op->inherit = INHERIT_NO_SCALE;
	apply_fails(s3, &b, RIGD_E_BAD_FIELD, "inherit");
	edit_batch_init(&b);
	op = add_create(&b, "n", NULL);
	op->fields |= EDIT_F_INHERIT | EDIT_F_SHEAR;
	apply_ok(s3, &b, NULL);

	/* 2D: collinear axes, whichever way round and to 1e-9. */
	add_create(&b, "n", NULL);
	apply_ok(s2, &b, NULL);
	{
		static const double collinear[][2] = {
			{ 0, 90 }, { 10, -80 }, { 45, 315 }, { -30, 60 + 1e-10 }, { 0, 270 },
		};

		for (size_t i = 0; i < sizeof(collinear) / sizeof(collinear[0]); i++) {
			edit_batch_init(&b);
			op = edit_batch_add(&b, EDIT_SET, "n");
			op->fields |= EDIT_F_SHEAR;
			op->shear_deg[0] = collinear[i][0];
			op->shear_deg[1] = collinear[i][1];
			assert_int_equal(edit_apply(s2, &b, NULL, NULL, &err), RIGD_E_BAD_FIELD);
			assert_string_equal(err.field, "shear");
			assert_non_null(strstr(err.message, "collinear"));
			edit_batch_release(&b);
		}
	}
	/* Near collinear but not within 1e-9: accepted. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "n");
	op->fields |= EDIT_F_SHEAR;
	op->shear_deg[1] = 90 - 1e-6;
	apply_ok(s2, &b, NULL);
	/* Not finite. */
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "n");
	op->fields |= EDIT_F_SHEAR;
	op->shear_deg[0] = NAN;
	apply_fails(s2, &b, RIGD_E_NOT_FINITE, "shear");
	/* Modes that are none. */
	for (size_t i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++) {
		edit_batch_init(&b);
		op = edit_batch_add(&b, EDIT_SET, "n");
		op->fields |= EDIT_F_INHERIT;
		op->inherit = bad_modes[i];
		apply_fails(s2, &b, RIGD_E_BAD_FIELD, "inherit");
	}
	/* keep_world cannot carry a shear. */
	edit_batch_init(&b);
	add_create(&b, "m", NULL);
	op = edit_batch_add(&b, EDIT_REPARENT, "n");
	assert_int_equal(edit_op_set_parent(op, "m"), 0);
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	assert_int_equal(edit_apply(s2, &b, NULL, NULL, &err), RIGD_E_NOT_TRS);
	edit_batch_release(&b);
	scene_free(s3);
	scene_free(s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zero_shear_bits),
		cmocka_unit_test(test_local_formula),
		cmocka_unit_test(test_spine_only_translation),
		cmocka_unit_test(test_spine_no_rotation_or_reflection),
		cmocka_unit_test(test_spine_no_scale),
		cmocka_unit_test(test_spine_no_scale_or_reflection),
		cmocka_unit_test(test_mode_properties),
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_dragonbones_flags),
		cmocka_unit_test(test_dragonbones_reflection_only),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_mixed_pass_bits),
		cmocka_unit_test(test_edit_and_undo),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
