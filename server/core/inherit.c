/*
 * inherit.c: the world matrix of a node whose inherit mode is not normal
 * (see inherit.h and docs/transforms.md, "Shear and inherit modes").
 *
 * Spine states its modes in a y-up frame. rigd's frame is y-down, and the
 * two are conjugate by F = diag(1, -1): a rigd 2x2 block [[m00, m01],
 * [m10, m11]] is Spine's [[m00, -m01], [-m10, m11]] and a rigd point
 * (x, y) is Spine's (x, -y); a rigd screen angle and shear are Spine's
 * rotation and shear unchanged. So each Spine mode is computed by carrying
 * the parent's world into Spine's frame, applying the mode there, and
 * carrying the result back. DragonBones is y-down already and is computed
 * in rigd's frame directly.
 *
 * Never reads a scene; never allocates.
 */
#include "inherit.h"

#include "math.h"
#include "scene.h"

#include <math.h>
#include <string.h>

#define DEG (M_PI / 180.0)

bool inherit_mode_valid(int mode)
{
	if (mode >= INHERIT_NORMAL && mode <= INHERIT_NO_SCALE_OR_REFLECTION)
		return true;
	return (mode & ~0x0f) == INHERIT_DB && (mode & 0x0f) != 0;
}

/* A world 2x2 block a (by rows: a00 a01 a10 a11) and the position 'pos'
 * of the pivot point, written into 'world' as [A | pos - A pivot]. */
static void put_world(double *world, const double a[4], const double pos[2],
		      const double pivot[2])
{
	world[0] = a[0];
	world[1] = a[1];
	world[4] = a[2];
	world[5] = a[3];
	world[3] = pos[0] - (a[0] * pivot[0] + a[1] * pivot[1]);
	world[7] = pos[1] - (a[2] * pivot[0] + a[3] * pivot[1]);
}

/* The parent's world applied to the pivot point t + pivot. */
static void parent_point(const double *p, const inherit_channels *c, double pos[2])
{
	double x = c->t[0] + c->pivot[0], y = c->t[1] + c->pivot[1];

	pos[0] = p[0] * x + p[1] * y + p[3];
	pos[1] = p[4] * x + p[5] * y + p[7];
}

/* One of Spine's modes, in Spine's y-up frame: pa pb pc pd is the parent's
 * world block there, the result a b c d (by rows) in 'out'. */
static void spine_block(int mode, double pa, double pb, double pc, double pd,
			const inherit_channels *c, const double *local, double out[4])
{
	double rot = c->angle_deg, shx = c->shear_deg[0], shy = c->shear_deg[1];
	double sx = c->s[0], sy = c->s[1];
	double la, lb, lc, ld;

	if (mode == INHERIT_ONLY_TRANSLATION) {
		/* The local block itself, carried into Spine's frame. */
		out[0] = local[0];
		out[1] = -local[1];
		out[2] = -local[4];
		out[3] = local[5];
		return;
	}
	if (mode == INHERIT_NO_ROTATION_OR_REFLECTION) {
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
		rx = (rot + shx - prx) * DEG;
		ry = (rot + shy - prx + 90) * DEG;
		la = cos(rx) * sx;
		lb = cos(ry) * sy;
		lc = sin(rx) * sx;
		ld = sin(ry) * sy;
		out[0] = pa * la - pb * lc;
		out[1] = pa * lb - pb * ld;
		out[2] = pc * la + pd * lc;
		out[3] = pc * lb + pd * ld;
		return;
	}
	/* INHERIT_NO_SCALE and INHERIT_NO_SCALE_OR_REFLECTION. */
	{
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
		out[0] = za * la + zb * lc;
		out[1] = za * lb + zb * ld;
		out[2] = zc * la + zd * lc;
		out[3] = zc * lb + zd * ld;
	}
}

/* The block of DragonBones' (rotation, rotation + skew, scale): x axis
 * sx (cos x_rad, sin x_rad), y axis sy (-sin y_rad, cos y_rad), by rows. */
static void db_block(double x_rad, double y_rad, double sx, double sy, double out[4])
{
	out[0] = cos(x_rad) * sx;
	out[2] = sin(x_rad) * sx;
	out[1] = -sin(y_rad) * sy;
	out[3] = cos(y_rad) * sy;
}

/* DragonBones' flags, in rigd's (y-down) frame. 'world' holds
 * parent * local on entry. */
static void db_world(int mode, const double *p, const inherit_channels *c, double *world)
{
	/* DragonBones' rotation is the direction of the x axis, its rotation
	 * plus skew that of the y axis, both y-down: minus rigd's screen
	 * angles of the two axes. */
	double xr = -(c->angle_deg + c->shear_deg[0]) * DEG;
	double yr = -(c->angle_deg + c->shear_deg[1]) * DEG;
	double pr = atan2(p[4], p[0]), a[4], pos[2];

	if (!(mode & DB_NO_SCALE)) {
		if (mode & DB_NO_ROTATION) {
			double l[4];

			/* The local turned back by the parent's rotation, then
			 * W = W_parent * L. */
			db_block(xr - pr, yr - pr, c->s[0], c->s[1], l);
			a[0] = p[0] * l[0] + p[1] * l[2];
			a[1] = p[0] * l[1] + p[1] * l[3];
			a[2] = p[4] * l[0] + p[5] * l[2];
			a[3] = p[4] * l[1] + p[5] * l[3];
		} else {
			a[0] = world[0];
			a[1] = world[1];
			a[2] = world[4];
			a[3] = world[5];
		}
	} else {
		double xf = xr, yf = yr;

		if (!(mode & DB_NO_ROTATION)) {
			double r = pr;
			bool mirrored = p[0] * p[5] - p[1] * p[4] < 0;

			if (mirrored)
				r -= 2 * xr;
			xf = xr + r;
			yf = xf + (yr - xr) + (mirrored && !(mode & DB_NO_REFLECTION) ? M_PI : 0);
		}
		db_block(xf, yf, c->s[0], c->s[1], a);
	}
	if (mode & DB_NO_TRANSLATION) {
		pos[0] = c->t[0] + c->pivot[0];
		pos[1] = c->t[1] + c->pivot[1];
	} else {
		parent_point(p, c, pos);
	}
	put_world(world, a, pos, c->pivot);
}

void inherit_world(const double *parent, const double *local, const inherit_channels *c,
		   int mode, double *world)
{
	double a[4], pos[2];

	if (!parent) {
		memcpy(world, local, 12 * sizeof(double));
		return;
	}
	mat34_mul(parent, local, world);
	if (mode & INHERIT_DB) {
		db_world(mode, parent, c, world);
		return;
	}
	spine_block(mode, parent[0], -parent[1], -parent[4], parent[5], c, local, a);
	/* Back to rigd's frame. Translation always inherits. */
	a[1] = -a[1];
	a[2] = -a[2];
	parent_point(parent, c, pos);
	put_world(world, a, pos, c->pivot);
}
