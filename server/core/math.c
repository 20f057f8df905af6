/*
 * math.c: see math.h for the conventions. Pure functions, no allocation.
 */
#include "math.h"

#include "err.h"

#include <float.h>
#include <math.h>

#define DEG (M_PI / 180.0)

/* mat4_invert_affine refuses a matrix whose determinant, with its columns
 * scaled to unit length, is at most this: the columns are then dependent to
 * within a few dozen roundings. */
#define SINGULAR_REL (64 * DBL_EPSILON)

vec3 vec3_make(double x, double y, double z)
{
	return (vec3){ x, y, z };
}

vec3 vec3_add(vec3 a, vec3 b)
{
	return (vec3){ a.x + b.x, a.y + b.y, a.z + b.z };
}

vec3 vec3_sub(vec3 a, vec3 b)
{
	return (vec3){ a.x - b.x, a.y - b.y, a.z - b.z };
}

vec3 vec3_scale(vec3 a, double k)
{
	return (vec3){ a.x * k, a.y * k, a.z * k };
}

double vec3_dot(vec3 a, vec3 b)
{
	return a.x * b.x + a.y * b.y + a.z * b.z;
}

vec3 vec3_cross(vec3 a, vec3 b)
{
	return (vec3){ a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x };
}

double vec3_length(vec3 a)
{
	return sqrt(vec3_dot(a, a));
}

quat quat_identity(void)
{
	return (quat){ 0, 0, 0, 1 };
}

quat quat_from_axis_angle(vec3 axis, double angle_rad)
{
	double len = vec3_length(axis);
	double h = 0.5 * angle_rad, k;

	if (!(len > 0))
		return quat_identity();
	k = sin(h) / len;
	return (quat){ axis.x * k, axis.y * k, axis.z * k, cos(h) };
}

quat quat_mul(quat a, quat b)
{
	return (quat){
		a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
		a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
		a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
		a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
	};
}

quat quat_from_angle2d_deg(double deg)
{
	return quat_from_axis_angle(vec3_make(0, 0, 1), -deg * DEG);
}

double quat_to_angle2d_deg(quat q)
{
	/* The rotation about z is 2 atan2(z, w); the screen angle its negative,
	 * folded into (-180, 180]. q and -q give angles 360 degrees apart. */
	double a = -2 * atan2(q.z, q.w) / DEG;

	while (a > 180)
		a -= 360;
	while (a <= -180)
		a += 360;
	return a + 0.0;
}

quat quat_from_euler_deg(vec3 deg)
{
	quat qx = quat_from_axis_angle(vec3_make(1, 0, 0), deg.x * DEG);
	quat qy = quat_from_axis_angle(vec3_make(0, 1, 0), deg.y * DEG);
	quat qz = quat_from_axis_angle(vec3_make(0, 0, 1), deg.z * DEG);

	return quat_mul(quat_mul(qx, qy), qz);
}

/* Below this |cos(y)| the pitch is at +-90 degrees to within rounding (gimbal
 * lock): x and z then turn about the same axis and only their combination is
 * defined, so z is set to 0 (three.js does the same). */
#define EULER_LOCK_COS 1e-14

/* An angle from atan2 in [-pi, pi], folded into (-pi, pi] and turned into
 * degrees. atan2 returns exactly -pi for (-0, negative). */
static double half_open_deg(double a)
{
	return (a <= -M_PI ? M_PI : a) / DEG;
}

vec3 quat_to_euler_deg(quat q)
{
	/*
	 * Read the angles off R = Rx * Ry * Rz (three.js order 'XYZ'), whose first
	 * row is (cy cz, -cy sz, sy) and third column (sy, -sx cy, cx cy). The
	 * pitch comes from atan2, not asin, because asin loses half the digits
	 * near +-90 degrees. z is then read from Rx(-x) * R = Ry(y) * Rz(z),
	 * whose middle row is (sz, cz, 0): that z absorbs any rounding in x, so
	 * quat_from_euler_deg(result) reproduces q to rounding even a hair away
	 * from gimbal lock, where three.js's fixed threshold (|sy| < 0.9999999)
	 * would be off by up to 4e-4.
	 */
	mat4 m = mat4_from_quat(q);
	double m11 = m.m[0], m12 = m.m[4], m13 = m.m[8];
	double m21 = m.m[1], m22 = m.m[5], m23 = m.m[9];
	double m31 = m.m[2], m32 = m.m[6], m33 = m.m[10];
	double cos_y = hypot(m11, m12);
	double x, y = atan2(m13, cos_y), z;

	if (cos_y > EULER_LOCK_COS) {
		double sx, cx;

		x = atan2(-m23, m33);
		sx = sin(x);
		cx = cos(x);
		z = atan2(cx * m21 + sx * m31, cx * m22 + sx * m32);
	} else {
		/* R = Rx(x) * Ry(+-90): its middle column is (0, cx, sx). */
		x = atan2(m32, m22);
		z = 0;
	}
	return (vec3){ half_open_deg(x), half_open_deg(y), half_open_deg(z) };
}

double quat_length(quat q)
{
	return sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
}

int quat_normalize(quat q, quat *out)
{
	/* Divide by the largest component first, so that neither a huge finite
	 * quaternion (1e200) overflows nor a small one underflows on the way. */
	double big = fmax(fmax(fabs(q.x), fabs(q.y)), fmax(fabs(q.z), fabs(q.w)));
	double len;

	if (!isfinite(q.x) || !isfinite(q.y) || !isfinite(q.z) || !isfinite(q.w))
		return RIGD_E_NOT_FINITE;
	if (!(big > 0))
		return RIGD_E_ZERO_QUATERNION;
	/* A quaternion that is unit to within rounding is returned as it is, so
	 * normalising is idempotent: a stored rotation written back (an undo, a
	 * replayed log, a glTF round trip) keeps every bit. */
	len = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
	if (fabs(len - 1) <= 8 * DBL_EPSILON) {
		*out = q;
		return 0;
	}
	q = (quat){ q.x / big, q.y / big, q.z / big, q.w / big };
	len = quat_length(q); /* in [1, 2] */
	if (big * len < 1e-12)
		return RIGD_E_ZERO_QUATERNION;
	*out = (quat){ q.x / len, q.y / len, q.z / len, q.w / len };
	return 0;
}

vec3 quat_rotate(quat q, vec3 v)
{
	return mat4_direction(mat4_from_quat(q), v);
}

mat4 mat4_identity(void)
{
	return (mat4){ { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 } };
}

mat4 mat4_mul(mat4 a, mat4 b)
{
	mat4 out;

	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++)
			out.m[c * 4 + r] = a.m[r] * b.m[c * 4] + a.m[4 + r] * b.m[c * 4 + 1] +
					   a.m[8 + r] * b.m[c * 4 + 2] + a.m[12 + r] * b.m[c * 4 + 3];
	return out;
}

mat4 mat4_translation(vec3 t)
{
	mat4 m = mat4_identity();

	m.m[12] = t.x;
	m.m[13] = t.y;
	m.m[14] = t.z;
	return m;
}

mat4 mat4_scaling(vec3 s)
{
	mat4 m = mat4_identity();

	m.m[0] = s.x;
	m.m[5] = s.y;
	m.m[10] = s.z;
	return m;
}

mat4 mat4_rotation_axis(vec3 axis, double angle_rad)
{
	return mat4_from_quat(quat_from_axis_angle(axis, angle_rad));
}

mat4 mat4_from_quat(quat q)
{
	double x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
	double xx = q.x * x2, xy = q.x * y2, xz = q.x * z2;
	double yy = q.y * y2, yz = q.y * z2, zz = q.z * z2;
	double wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;

	return (mat4){ {
		1 - (yy + zz), xy + wz, xz - wy, 0,
		xy - wz, 1 - (xx + zz), yz + wx, 0,
		xz + wy, yz - wx, 1 - (xx + yy), 0,
		0, 0, 0, 1,
	} };
}

mat4 mat4_compose(vec3 t, quat r, vec3 s)
{
	mat4 m = mat4_from_quat(r);

	for (int i = 0; i < 3; i++) {
		m.m[i] *= s.x;
		m.m[4 + i] *= s.y;
		m.m[8 + i] *= s.z;
	}
	m.m[12] = t.x;
	m.m[13] = t.y;
	m.m[14] = t.z;
	return m;
}

mat4 mat4_compose_pivot(vec3 t, quat r, vec3 s, vec3 pivot)
{
	/* T(t) T(p) R S T(-p) = [RS | t + p - RS p]: one compose and one
	 * correction of the translation, no full products. */
	mat4 m = mat4_compose(t, r, s);
	vec3 rsp = mat4_direction(m, pivot);

	m.m[12] = t.x + pivot.x - rsp.x;
	m.m[13] = t.y + pivot.y - rsp.y;
	m.m[14] = t.z + pivot.z - rsp.z;
	return m;
}

mat4 mat4_compose_pivot2d(vec3 t, quat r, vec3 s, vec3 pivot, const double shear_deg[2])
{
	mat4 m;
	vec3 kx, ky, rsp;

	if (shear_deg[0] == 0 && shear_deg[1] == 0)
		return mat4_compose_pivot(t, r, s, pivot);
	/* R K S: K's columns are the unit axes turned by -shx and -shy about
	 * z, carried by R and scaled. */
	m = mat4_from_quat(r);
	kx = vec3_make(cos(shear_deg[0] * DEG), -sin(shear_deg[0] * DEG), 0);
	ky = vec3_make(sin(shear_deg[1] * DEG), cos(shear_deg[1] * DEG), 0);
	{
		vec3 ax = mat4_direction(m, kx), ay = mat4_direction(m, ky);

		m.m[0] = ax.x * s.x;
		m.m[1] = ax.y * s.x;
		m.m[2] = ax.z * s.x;
		m.m[4] = ay.x * s.y;
		m.m[5] = ay.y * s.y;
		m.m[6] = ay.z * s.y;
		m.m[8] *= s.z;
		m.m[9] *= s.z;
		m.m[10] *= s.z;
	}
	rsp = mat4_direction(m, pivot);
	m.m[12] = t.x + pivot.x - rsp.x;
	m.m[13] = t.y + pivot.y - rsp.y;
	m.m[14] = t.z + pivot.z - rsp.z;
	return m;
}

vec3 mat4_point(mat4 m, vec3 p)
{
	return (vec3){
		m.m[0] * p.x + m.m[4] * p.y + m.m[8] * p.z + m.m[12],
		m.m[1] * p.x + m.m[5] * p.y + m.m[9] * p.z + m.m[13],
		m.m[2] * p.x + m.m[6] * p.y + m.m[10] * p.z + m.m[14],
	};
}

vec3 mat4_direction(mat4 m, vec3 d)
{
	return (vec3){
		m.m[0] * d.x + m.m[4] * d.y + m.m[8] * d.z,
		m.m[1] * d.x + m.m[5] * d.y + m.m[9] * d.z,
		m.m[2] * d.x + m.m[6] * d.y + m.m[10] * d.z,
	};
}

vec3 mat4_column(mat4 m, int col)
{
	return (vec3){ m.m[col * 4], m.m[col * 4 + 1], m.m[col * 4 + 2] };
}

double mat4_det3(mat4 m)
{
	return vec3_dot(mat4_column(m, 0), vec3_cross(mat4_column(m, 1), mat4_column(m, 2)));
}

/* |v| without overflow or underflow on the way: a column of length 1e200 or
 * 1e-200 is an ordinary scale. */
static double safe_length(vec3 v)
{
	double big = fmax(fmax(fabs(v.x), fabs(v.y)), fabs(v.z));

	if (!(big > 0) || !isfinite(big))
		return big;
	return big * vec3_length(vec3_scale(v, 1 / big));
}

int mat4_invert_trs(mat4 m, mat4 *out)
{
	/* With orthogonal columns c_i, M3 = Q D where Q has unit columns and D the
	 * column lengths, so M3^-1 = D^-1 Q^T: row i of the inverse is
	 * c_i / |c_i|^2, computed as (c_i / |c_i|) / |c_i| so that |c_i|^2 can
	 * neither underflow (scale 1e-170) nor overflow (1e160). */
	mat4 inv = mat4_identity();
	vec3 t = mat4_column(m, 3);

	for (int i = 0; i < 3; i++) {
		vec3 c = mat4_column(m, i);
		double len = safe_length(c);

		if (!(len > 0) || !isfinite(len))
			return RIGD_E_SINGULAR;
		c = vec3_scale(vec3_scale(c, 1 / len), 1 / len);
		inv.m[0 + i] = c.x;
		inv.m[4 + i] = c.y;
		inv.m[8 + i] = c.z;
	}
	t = mat4_direction(inv, t);
	inv.m[12] = -t.x;
	inv.m[13] = -t.y;
	inv.m[14] = -t.z;
	/* A non-finite translation, or one so large that R^T t overflows, must
	 * not come back as an inverse. */
	if (!mat4_is_finite(inv))
		return RIGD_E_SINGULAR;
	*out = inv;
	return 0;
}

int mat4_invert_affine(mat4 m, mat4 *out)
{
	/*
	 * Write the 3x3 part as M = N D, with D the column lengths and N the
	 * columns scaled to unit length; then M^-1 = D^-1 N^-1. N is inverted by
	 * cofactors (its rows are cross products of pairs of columns over det N).
	 *
	 * det N is 1 for any TRS whatever its scale and 0 when the columns are
	 * dependent, so it is the singularity test: scale-free, and immune to the
	 * under- and overflow of det M itself. An absolute test on det M would
	 * both refuse S(1e-110) (det 1e-330 rounds to 0) and accept (0.1 0.4 0.7;
	 * 0.2 0.5 0.8; 0.3 0.6 0.9), whose determinant rounds to 1.7e-17 and whose
	 * "inverse" is 1e15 of rounding noise.
	 */
	vec3 n[3];
	double len[3], det;
	vec3 rows[3];
	mat4 inv = mat4_identity();
	vec3 t;

	for (int i = 0; i < 3; i++) {
		vec3 c = mat4_column(m, i);

		len[i] = safe_length(c);
		if (!(len[i] > 0) || !isfinite(len[i]))
			return RIGD_E_SINGULAR;
		n[i] = vec3_scale(c, 1 / len[i]);
	}
	rows[0] = vec3_cross(n[1], n[2]);
	rows[1] = vec3_cross(n[2], n[0]);
	rows[2] = vec3_cross(n[0], n[1]);
	det = vec3_dot(n[0], rows[0]);
	if (!(fabs(det) > SINGULAR_REL))
		return RIGD_E_SINGULAR;
	for (int i = 0; i < 3; i++) {
		vec3 r = vec3_scale(rows[i], 1 / (det * len[i]));

		inv.m[0 + i] = r.x;
		inv.m[4 + i] = r.y;
		inv.m[8 + i] = r.z;
	}
	t = mat4_direction(inv, mat4_column(m, 3));
	inv.m[12] = -t.x;
	inv.m[13] = -t.y;
	inv.m[14] = -t.z;
	if (!mat4_is_finite(inv))
		return RIGD_E_SINGULAR;
	*out = inv;
	return 0;
}

double mat4_shear_deg(mat4 m)
{
	double worst = 90, worst_dev = 0;

	for (int i = 0; i < 3; i++) {
		for (int j = i + 1; j < 3; j++) {
			vec3 a = mat4_column(m, i), b = mat4_column(m, j);
			double la = vec3_length(a), lb = vec3_length(b), c, deg;

			if (!(la > 0) || !(lb > 0))
				continue;
			c = vec3_dot(a, b) / (la * lb);
			c = c > 1 ? 1 : (c < -1 ? -1 : c);
			deg = acos(c) / DEG;
			if (fabs(deg - 90) > worst_dev) {
				worst_dev = fabs(deg - 90);
				worst = deg;
			}
		}
	}
	return worst;
}

/* Rotation matrix (orthonormal, det +1) to a unit quaternion (Shepperd's
 * method: branch on the largest diagonal term for accuracy). */
static quat quat_from_rotation(const double *m)
{
	double m00 = m[0], m11 = m[5], m22 = m[10];
	double tr = m00 + m11 + m22, s;
	quat q;

	if (tr > 0) {
		s = 0.5 / sqrt(tr + 1.0);
		q = (quat){ (m[6] - m[9]) * s, (m[8] - m[2]) * s, (m[1] - m[4]) * s, 0.25 / s };
	} else if (m00 > m11 && m00 > m22) {
		s = 2.0 * sqrt(1.0 + m00 - m11 - m22);
		q = (quat){ 0.25 * s, (m[4] + m[1]) / s, (m[8] + m[2]) / s, (m[6] - m[9]) / s };
	} else if (m11 > m22) {
		s = 2.0 * sqrt(1.0 + m11 - m00 - m22);
		q = (quat){ (m[4] + m[1]) / s, 0.25 * s, (m[9] + m[6]) / s, (m[8] - m[2]) / s };
	} else {
		s = 2.0 * sqrt(1.0 + m22 - m00 - m11);
		q = (quat){ (m[8] + m[2]) / s, (m[9] + m[6]) / s, 0.25 * s, (m[1] - m[4]) / s };
	}
	if (quat_normalize(q, &q) != 0)
		q = quat_identity();
	return q;
}

/*
 * The rotation of a TRS read-back: Gram-Schmidt on the columns divided by
 * their scales 'sc', in order x, y, z, completed by cross products into a
 * right-handed orthonormal basis. For a TRS matrix this is its rotation; for
 * a sheared one it keeps the first axis's direction and column lengths
 * (S(2,1,1) Rz(45) reads back as Rz(26.6) S(1.581, 1.581)).
 * A zero scale or a column dependent on the earlier ones leaves its axis to
 * the cross product of the other two, so a node scaled to nothing on one
 * axis still reads back its rotation.
 */
static mat4 trs_rotation(mat4 m, vec3 sc)
{
	const double scale[3] = { sc.x, sc.y, sc.z };
	vec3 axis[3];
	bool have[3] = { false, false, false };
	int count = 0;
	mat4 rot = mat4_identity();

	for (int i = 0; i < 3 && count < 2; i++) {
		vec3 v;
		double len;

		if (scale[i] == 0)
			continue;
		v = vec3_scale(mat4_column(m, i), 1 / scale[i]);
		for (int j = 0; j < i; j++)
			if (have[j])
				v = vec3_sub(v, vec3_scale(axis[j], vec3_dot(v, axis[j])));
		len = vec3_length(v);
		/* v started at unit length; what survives the projections below
		 * this is rounding noise with no direction worth keeping. */
		if (!(len > 1e-9))
			continue;
		axis[i] = vec3_scale(v, 1 / len);
		have[i] = true;
		count++;
	}
	if (count == 0)
		return rot;
	if (count == 1) {
		/* Add the world axis least aligned with the one we have, made
		 * perpendicular to it, as the next axis in cyclic order. */
		int i = have[0] ? 0 : (have[1] ? 1 : 2), next = (i + 1) % 3;
		vec3 a = axis[i], e, v;

		if (fabs(a.x) <= fabs(a.y) && fabs(a.x) <= fabs(a.z))
			e = vec3_make(1, 0, 0);
		else if (fabs(a.y) <= fabs(a.z))
			e = vec3_make(0, 1, 0);
		else
			e = vec3_make(0, 0, 1);
		v = vec3_sub(e, vec3_scale(a, vec3_dot(e, a)));

		axis[next] = vec3_scale(v, 1 / vec3_length(v));
		have[next] = true;
	}
	/* Exactly two axes now; the third is their right-handed completion
	 * (x = y × z, y = z × x, z = x × y). */
	for (int k = 0; k < 3; k++)
		if (!have[k])
			axis[k] = vec3_cross(axis[(k + 1) % 3], axis[(k + 2) % 3]);
	for (int c = 0; c < 3; c++) {
		rot.m[c * 4 + 0] = axis[c].x;
		rot.m[c * 4 + 1] = axis[c].y;
		rot.m[c * 4 + 2] = axis[c].z;
	}
	return rot;
}

bool mat4_decompose(mat4 m, double tol, vec3 *t, quat *r, vec3 *s, double *max_err)
{
	vec3 sc = { vec3_length(mat4_column(m, 0)), vec3_length(mat4_column(m, 1)),
		    vec3_length(mat4_column(m, 2)) };
	double err;

	if (mat4_det3(m) < 0)
		sc.x = -sc.x;
	*t = mat4_column(m, 3);
	*r = quat_from_rotation(trs_rotation(m, sc).m);
	*s = sc;
	err = mat4_max_abs_diff(m, mat4_compose(*t, *r, *s));
	if (max_err)
		*max_err = err;
	return err <= tol;
}

double mat4_max_abs_diff(mat4 a, mat4 b)
{
	double worst = 0;

	for (int i = 0; i < 16; i++) {
		double d = fabs(a.m[i] - b.m[i]);

		if (isnan(d))
			return d; /* a NaN never reads as equal, nor is outvoted */
		if (d > worst)
			worst = d;
	}
	return worst;
}

bool mat4_is_finite(mat4 m)
{
	for (int i = 0; i < 16; i++)
		if (!isfinite(m.m[i]))
			return false;
	return true;
}

mat34 mat34_from_mat4(mat4 m)
{
	mat34 out;

	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 4; c++)
			out.m[r * 4 + c] = m.m[c * 4 + r];
	return out;
}

mat4 mat4_from_mat34(mat34 m)
{
	mat4 out;

	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 4; c++)
			out.m[c * 4 + r] = m.m[r * 4 + c];
	out.m[3] = out.m[7] = out.m[11] = 0;
	out.m[15] = 1;
	return out;
}

aabb aabb_make(vec3 min, vec3 max)
{
	return (aabb){ min, max };
}

aabb aabb_empty(void)
{
	return (aabb){ { INFINITY, INFINITY, INFINITY }, { -INFINITY, -INFINITY, -INFINITY } };
}

bool aabb_is_empty(aabb b)
{
	return !(b.min.x <= b.max.x && b.min.y <= b.max.y && b.min.z <= b.max.z);
}

aabb aabb_union(aabb a, aabb b)
{
	return (aabb){
		{ fmin(a.min.x, b.min.x), fmin(a.min.y, b.min.y), fmin(a.min.z, b.min.z) },
		{ fmax(a.max.x, b.max.x), fmax(a.max.y, b.max.y), fmax(a.max.z, b.max.z) },
	};
}

aabb aabb_transform(aabb box, mat4 m)
{
	/* Arvo's method: the extent along each world axis is the sum of the
	 * extremes of each column's contribution; the same as the eight corners,
	 * with six multiplies per axis instead of 24. */
	const double *lo = &box.min.x, *hi = &box.max.x;
	double out_lo[3], out_hi[3];

	if (aabb_is_empty(box))
		return box;
	for (int r = 0; r < 3; r++) {
		out_lo[r] = out_hi[r] = m.m[12 + r];
		for (int c = 0; c < 3; c++) {
			double a = m.m[c * 4 + r] * lo[c], b = m.m[c * 4 + r] * hi[c];

			out_lo[r] += fmin(a, b);
			out_hi[r] += fmax(a, b);
		}
	}
	return (aabb){ { out_lo[0], out_lo[1], out_lo[2] }, { out_hi[0], out_hi[1], out_hi[2] } };
}

sphere aabb_sphere(aabb b)
{
	vec3 c = vec3_scale(vec3_add(b.min, b.max), 0.5);

	return (sphere){ c, vec3_length(vec3_sub(b.max, c)) };
}

int plane_classify(plane p, aabb b)
{
	/* The box corner furthest along n decides "any part inside", the one
	 * furthest against n decides "all inside". */
	vec3 far = { p.n.x >= 0 ? b.max.x : b.min.x, p.n.y >= 0 ? b.max.y : b.min.y,
		     p.n.z >= 0 ? b.max.z : b.min.z };
	vec3 near = { p.n.x >= 0 ? b.min.x : b.max.x, p.n.y >= 0 ? b.min.y : b.max.y,
		      p.n.z >= 0 ? b.min.z : b.max.z };

	if (vec3_dot(p.n, far) + p.d < 0)
		return SIDE_OUTSIDE;
	if (vec3_dot(p.n, near) + p.d >= 0)
		return SIDE_INSIDE;
	return SIDE_STRADDLE;
}
