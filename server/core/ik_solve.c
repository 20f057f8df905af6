/*
 * ik_solve.c: Spine's and DragonBones' IK constraints (ik_solve.h), from
 * the geometry docs/transforms.md ("IK constraints") sets out.
 *
 * Spine is solved in its own y-up frame: a world matrix of rigd's is
 * carried there by the flip F = diag(1, -1) (F W F), a bone's channels by
 * negating y (the angle and shear carry over: docs/spine.md), and the new
 * channels back the same way. DragonBones is y-down like rigd: its
 * solvers read and write the matrices as they are.
 */
#include "ik_solve.h"

#include "scene.h"

#include <math.h>

#define RAD_DEG (180.0 / M_PI)
#define DEG_RAD (M_PI / 180.0)

/* ---------- Spine ---------- */

/* A world transform in Spine's frame: the 2x2 [a b; c d] (column 0 is the
 * bone's x axis) and the origin (x, y). */
typedef struct sp_world {
	double a, b, c, d, x, y;
} sp_world;

static sp_world sp_of(const double *rows)
{
	if (!rows)
		return (sp_world){ 1, 0, 0, 1, 0, 0 };
	return (sp_world){ rows[0], -rows[1], -rows[4], rows[5], rows[3], -rows[7] };
}

/* The world of a bone of normal mode with channels 'b' under 'g'. */
static sp_world sp_child(sp_world g, const ik_channels *b)
{
	double r = b->angle_deg * DEG_RAD;
	double la = cos(r + b->shear_deg[0] * DEG_RAD) * b->s[0];
	double lc = sin(r + b->shear_deg[0] * DEG_RAD) * b->s[0];
	double lb = cos(r + (90 + b->shear_deg[1]) * DEG_RAD) * b->s[1];
	double ld = sin(r + (90 + b->shear_deg[1]) * DEG_RAD) * b->s[1];
	double x = b->t[0], y = -b->t[1];

	return (sp_world){ g.a * la + g.b * lc, g.a * lb + g.b * ld, g.c * la + g.d * lc,
			   g.c * lb + g.d * ld, g.a * x + g.b * y + g.x, g.c * x + g.d * y + g.y };
}

/* One turn of at most half a circle each way: Spine brings an angle in
 * (-540, 540) into [-180, 180] by one step. */
static double wrap_deg(double a)
{
	if (a > 180)
		return a - 360;
	if (a < -180)
		return a + 360;
	return a;
}

/* Point (x, y) of the world into the frame of 'g' less (ox, oy): where a
 * bone placed at (ox, oy) under 'g' sees it. (0, 0) when 'g' is singular. */
static void sp_into(sp_world g, double x, double y, double ox, double oy, double *tx, double *ty)
{
	double det = g.a * g.d - g.b * g.c, id = fabs(det) <= 1e-4 ? 0 : 1 / det;

	x -= g.x;
	y -= g.y;
	*tx = (x * g.d - y * g.b) * id - ox;
	*ty = (y * g.a - x * g.c) * id - oy;
}

void ik_spine_one(const double *parent, int inherit, double length, const double target[2],
		  const ik_spine_params *p, ik_channels *b)
{
	sp_world pw = sp_of(parent);
	double bx = b->t[0], by = -b->t[1], gx = target[0], gy = -target[1];
	double wx = pw.a * bx + pw.b * by + pw.x, wy = pw.c * bx + pw.d * by + pw.y;
	double turn = -b->shear_deg[0] - b->angle_deg, tx, ty, sx = b->s[0], sy = b->s[1];

	if (inherit == INHERIT_ONLY_TRANSLATION) {
		/* The bone's axes are its own: the target as the world sees it. */
		tx = gx - wx;
		ty = gy - wy;
	} else {
		if (inherit == INHERIT_NO_ROTATION_OR_REFLECTION) {
			/* The parent's turn is not inherited: its axes untwisted,
			 * and the turn added back. */
			double k = fabs(pw.a * pw.d - pw.b * pw.c) / fmax(1e-4, pw.a * pw.a + pw.c * pw.c);

			pw.b = -pw.c * k;
			pw.d = pw.a * k;
			turn += atan2(pw.c, pw.a) * RAD_DEG;
		}
		sp_into(pw, gx, gy, bx, by, &tx, &ty);
	}
	turn += atan2(ty, tx) * RAD_DEG;
	if (sx < 0)
		turn += 180;
	turn = wrap_deg(turn);
	if (p->compress || p->stretch) {
		double reach;

		if (inherit == INHERIT_NO_SCALE || inherit == INHERIT_NO_SCALE_OR_REFLECTION) {
			tx = gx - wx;
			ty = gy - wy;
		}
		reach = length * sx;
		if (reach > 1e-4) {
			double dd = tx * tx + ty * ty;

			if ((p->compress && dd < reach * reach) || (p->stretch && dd > reach * reach)) {
				double k = (sqrt(dd) / reach - 1) * p->mix + 1;

				sx *= k;
				if (p->uniform)
					sy *= k;
			}
		}
	}
	b->angle_deg += turn * p->mix;
	b->s[0] = sx;
	b->s[1] = sy;
}

bool ik_spine_two(const double *grand, bool modes, double parent_length, double child_length,
		  const double target[2], const ik_spine_params *p, ik_channels *parent,
		  ik_channels *child)
{
	sp_world g = sp_of(grand), pw;
	double px = parent->t[0], py = -parent->t[1], psx = parent->s[0], psy = parent->s[1];
	double sx = psx, sy = psy, cx = child->t[0], cy = -child->t[1], csx = child->s[0];
	double os1 = 0, os2 = 0, s2 = 1, bend = p->bend_positive ? 1 : -1;
	double dx, dy, tx, ty, dd, l1, l2, cosv, a1, a2, os, turn;

	if (modes)
		return false;
	/* A mirrored parent solves as its mirror image, turned back after. */
	if (psx < 0) {
		psx = -psx;
		os1 = 180;
		s2 = -1;
	}
	if (psy < 0) {
		psy = -psy;
		s2 = -s2;
	}
	if (csx < 0) {
		csx = -csx;
		os2 = 180;
	}
	if (fabs(psx - psy) > 1e-4)
		return false; /* the ellipse case: not solved (docs/transforms.md) */
	pw = sp_child(g, parent);
	if (p->stretch)
		cy = 0; /* a stretching chain is the line through the child's x */
	/* The first bone: parent joint to child joint, in the parent's frame. */
	sp_into(g, pw.a * cx + pw.b * cy + pw.x, pw.c * cx + pw.d * cy + pw.y, px, py, &dx, &dy);
	l1 = sqrt(dx * dx + dy * dy);
	l2 = child_length * csx;
	if (l1 < 1e-4) {
		/* The child sits on the parent's joint: the parent alone aims. */
		ik_spine_params one = *p;

		one.compress = false;
		one.uniform = false;
		ik_spine_one(grand, INHERIT_NORMAL, parent_length, target, &one, parent);
		child->t[0] = cx;
		child->t[1] = cy != 0 ? -cy : 0;
		child->angle_deg = 0;
		return true;
	}
	sp_into(g, target[0], -target[1], px, py, &tx, &ty);
	dd = tx * tx + ty * ty;
	if (p->softness != 0) {
		/* Within 'softness' of full reach the target is pulled in
		 * along a quadratic, so the chain never snaps straight. */
		double soft = p->softness * psx * (csx + 1) * 0.5, td = sqrt(dd);
		double sd = td - l1 - l2 * psx + soft;

		if (sd > 0) {
			double k = fmin(1, sd / (soft * 2)) - 1;

			k = (sd - soft * (1 - k * k)) / td;
			tx -= k * tx;
			ty -= k * ty;
			dd = tx * tx + ty * ty;
		}
	}
	l2 *= psx;
	cosv = (dd - l1 * l1 - l2 * l2) / (2 * l1 * l2);
	if (!isfinite(cosv))
		return false; /* a child of length 0: nothing to bend */
	if (cosv < -1) {
		cosv = -1;
		a2 = M_PI * bend;
	} else if (cosv > 1) {
		cosv = 1;
		a2 = 0;
		if (p->stretch) {
			double k = (sqrt(dd) / (l1 + l2) - 1) * p->mix + 1;

			sx *= k;
			if (p->uniform)
				sy *= k;
		}
	} else {
		a2 = acos(cosv) * bend;
	}
	{
		double ka = l1 + l2 * cosv, kb = l2 * sin(a2);

		a1 = atan2(ty * ka - tx * kb, tx * ka + ty * kb);
	}
	os = atan2(cy, cx) * s2;
	turn = wrap_deg((a1 - os) * RAD_DEG + os1 - parent->angle_deg);
	parent->angle_deg += turn * p->mix;
	parent->s[0] = sx;
	parent->s[1] = sy;
	parent->shear_deg[0] = parent->shear_deg[1] = 0;
	turn = wrap_deg(((a2 + os) * RAD_DEG - child->shear_deg[0]) * s2 + os2 - child->angle_deg);
	child->angle_deg += turn * p->mix;
	child->t[0] = cx;
	child->t[1] = cy != 0 ? -cy : 0;
	return true;
}

/* ---------- DragonBones ---------- */

/* A world transform as DragonBones' runtime keeps it beside the matrix:
 * origin, rotation of the x axis, skew of the y axis from it, and the
 * axes' lengths (radians). */
typedef struct db_global {
	double x, y, rotation, skew, scale_x, scale_y;
} db_global;

static db_global db_of(const double *w)
{
	double a = w[0], b = w[4], c = w[1], d = w[5];
	double rot = atan2(b, a);

	return (db_global){ w[3], w[7], rot, atan2(-c, d) - rot, hypot(a, b), hypot(c, d) };
}

static void db_write(const db_global *g, double *w)
{
	w[0] = cos(g->rotation) * g->scale_x;
	w[4] = sin(g->rotation) * g->scale_x;
	w[1] = -sin(g->rotation + g->skew) * g->scale_y;
	w[5] = cos(g->rotation + g->skew) * g->scale_y;
	w[3] = g->x;
	w[7] = g->y;
}

/* An angle into (-pi, pi], as the runtime brings it. */
static double norm_rad(double v)
{
	v = fmod(v + M_PI, 2 * M_PI);
	return v + (v > 0 ? -M_PI : M_PI);
}

void ik_db_one(double *world, const double target[2], double weight)
{
	db_global g = db_of(world);
	double aim = atan2(target[1] - g.y, target[0] - g.x);

	g.rotation += norm_rad(aim - g.rotation) * weight;
	db_write(&g, world);
}

void ik_db_two(double *parent_world, double *child_world, const double *grand, double length,
	       const double target[2], double weight, bool bend_positive)
{
	db_global p = db_of(parent_world), c = db_of(child_world);
	double lx = child_world[0] * length, ly = child_world[4] * length;
	double lLL = lx * lx + ly * ly, lL = sqrt(lLL);
	double dx = c.x - p.x, dy = c.y - p.y, lPP = dx * dx + dy * dy, lP = sqrt(lPP);
	double raw = c.rotation, raw_parent = p.rotation, raw_a = atan2(dy, dx);
	double lTT, lT, aim_a, turn, cur_a, aim_b;

	dx = target[0] - p.x;
	dy = target[1] - p.y;
	lTT = dx * dx + dy * dy;
	lT = sqrt(lTT);
	if (lL + lP <= lT || lT + lL <= lP || lT + lP <= lL) {
		/* No triangle: the chain points at the target (or away, when
		 * the target is inside a longer second bone's reach). */
		aim_a = atan2(dy, dx);
		if (!(lL + lP <= lT) && lP < lL)
			aim_a += M_PI;
	} else {
		/* The elbow: on the line to the target at the foot h (a fraction
		 * of it), off it by r (a fraction of the line's normal), on the
		 * side bendPositive picks, mirrored under a mirrored grandparent. */
		double h = (lPP - lLL + lTT) / (2 * lTT), r = sqrt(lPP - h * h * lTT) / lT;
		double hx = p.x + dx * h, hy = p.y + dy * h, rx = -dy * r, ry = dx * r, ex, ey;
		bool mirrored = grand && grand[0] * grand[5] - grand[4] * grand[1] < 0;

		if (mirrored != bend_positive) {
			ex = hx - rx;
			ey = hy - ry;
		} else {
			ex = hx + rx;
			ey = hy + ry;
		}
		aim_a = atan2(ey - p.y, ex - p.x);
	}
	turn = norm_rad(aim_a - raw_a);
	p.rotation = raw_parent + turn * weight;
	db_write(&p, parent_world);
	cur_a = raw_a + turn * weight;
	c.x = p.x + cos(cur_a) * lP;
	c.y = p.y + sin(cur_a) * lP;
	aim_b = atan2(target[1] - c.y, target[0] - c.x);
	c.rotation = p.rotation + raw - raw_parent + norm_rad(aim_b - turn - raw) * weight;
	db_write(&c, child_world);
}
