/*
 * math.h: vectors, quaternions and 4x4 affine matrices in double precision.
 *
 * CONVENTIONS
 *   - Matrices are column-major: m[col * 4 + row]. The translation is
 *     m[12], m[13], m[14]. The wire format and glTF use the same order.
 *   - Column vectors, so W = A * B applies B first. Right-handed axes.
 *   - Angles in radians unless the name says _deg.
 *   - Quaternions are (x, y, z, w), glTF order; unit length where a rotation
 *     is meant.
 *   - Arguments by value, output last; functions that can fail return 0 or a
 *     negative RIGD_E_* code and leave the output untouched on failure.
 *   - Euler angles are in degrees, order 'XYZ' as three.js: see
 *     quat_from_euler_deg.
 *
 * This module knows nothing of nodes, JSON, SQL or sockets.
 */
#ifndef RIGD_MATH_H
#define RIGD_MATH_H

#include <stdbool.h>

typedef struct vec3 {
	double x, y, z;
} vec3;

typedef struct quat {
	double x, y, z, w;
} quat;

typedef struct mat4 {
	double m[16]; /* column-major */
} mat4;

typedef struct aabb {
	vec3 min, max;
} aabb;

/* A half-space: a point p is inside when dot(n, p) + d >= 0. */
typedef struct plane {
	vec3 n;
	double d;
} plane;

typedef struct sphere {
	vec3 center;
	double radius;
} sphere;

enum math_side {
	SIDE_INSIDE = 1,    /* the whole box is inside the half-space */
	SIDE_OUTSIDE = -1,  /* the whole box is outside */
	SIDE_STRADDLE = 0   /* the plane cuts the box */
};

/* vec3 */
vec3 vec3_make(double x, double y, double z);
vec3 vec3_add(vec3 a, vec3 b);
vec3 vec3_sub(vec3 a, vec3 b);
vec3 vec3_scale(vec3 a, double k);
double vec3_dot(vec3 a, vec3 b);
vec3 vec3_cross(vec3 a, vec3 b);
double vec3_length(vec3 a);

/* quaternions */
quat quat_identity(void);
/* Rotation of 'angle_rad' about 'axis' (need not be unit; a zero axis gives
 * the identity). */
quat quat_from_axis_angle(vec3 axis, double angle_rad);
/*
 * Rotation from Euler angles in degrees, intrinsic X then Y then Z (three.js
 * order 'XYZ'): R = Rx(x) * Ry(y) * Rz(z). A point is first turned about z,
 * then y, then x, all axes fixed in the parent.
 */
quat quat_from_euler_deg(vec3 deg);
/* The inverse of quat_from_euler_deg, angles in (-180, 180]. */
vec3 quat_to_euler_deg(quat q);
quat quat_mul(quat a, quat b);
double quat_length(quat q);
/* Writes q / |q| to *out. Returns RIGD_E_NOT_FINITE for a non-finite
 * component, RIGD_E_ZERO_QUATERNION for a length below 1e-12. */
int quat_normalize(quat q, quat *out);
vec3 quat_rotate(quat q, vec3 v);

/* matrices */
mat4 mat4_identity(void);
mat4 mat4_mul(mat4 a, mat4 b);
mat4 mat4_translation(vec3 t);
mat4 mat4_scaling(vec3 s);
mat4 mat4_rotation_axis(vec3 axis, double angle_rad);
mat4 mat4_from_quat(quat q);
/* T(t) * R(r) * S(s). */
mat4 mat4_compose(vec3 t, quat r, vec3 s);
/* T(t) * T(pivot) * R(r) * S(s) * T(-pivot): rotation and scale act about
 * the pivot (seed 002, "reference update order"). */
mat4 mat4_compose_pivot(vec3 t, quat r, vec3 s, vec3 pivot);
vec3 mat4_point(mat4 m, vec3 p);     /* m * (p, 1) */
vec3 mat4_direction(mat4 m, vec3 d); /* m * (d, 0) */
vec3 mat4_column(mat4 m, int col);   /* col 0..3, xyz part */
double mat4_det3(mat4 m);            /* determinant of the 3x3 part */
/*
 * Inverse of a matrix whose 3x3 part has orthogonal columns (any product of
 * translation, rotation and non-zero scale along those columns): the fast
 * path. Returns RIGD_E_SINGULAR if a column is zero or not finite, or the
 * inverse overflows.
 */
int mat4_invert_trs(mat4 m, mat4 *out);
/* General affine inverse (last row must be 0 0 0 1). RIGD_E_SINGULAR when,
 * with its columns scaled to unit length, |det3| <= 64 * DBL_EPSILON (a test
 * that does not depend on the matrix's scale), or the result is not finite. */
int mat4_invert_affine(mat4 m, mat4 *out);
/*
 * The angle in degrees between the pair of world axes (columns 0..2) that is
 * furthest from 90: 90 for any TRS matrix, 126.9 for S(2,1,1) * Rz(45).
 * Pairs with a zero-length column are skipped; 90 if none is left.
 */
double mat4_shear_deg(mat4 m);
/*
 * Splits m into T * R * S. A negative determinant is carried by a negative
 * x scale. *max_err receives the largest absolute element difference between
 * m and the recomposed T * R * S (may be NULL). Returns true when that error
 * is at most 'tol' (the decomposition is exact), false otherwise; the outputs
 * are filled either way, with the TRS that has the same column lengths and
 * the same first axis (Gram-Schmidt from x), as seed section 13 reads back.
 */
bool mat4_decompose(mat4 m, double tol, vec3 *t, quat *r, vec3 *s, double *max_err);
double mat4_max_abs_diff(mat4 a, mat4 b);
bool mat4_is_finite(mat4 m);

/* bounds */
aabb aabb_make(vec3 min, vec3 max);
aabb aabb_empty(void); /* min = +inf, max = -inf: the union's identity */
bool aabb_is_empty(aabb b);
aabb aabb_union(aabb a, aabb b);
/* The world box of the eight corners of 'box' transformed by 'm'. */
aabb aabb_transform(aabb box, mat4 m);
/* Centre and half-diagonal of the box. */
sphere aabb_sphere(aabb b);
/* SIDE_INSIDE, SIDE_OUTSIDE or SIDE_STRADDLE. */
int plane_classify(plane p, aabb b);

/*
 * The hot-loop product out = a * b for affine matrices (last rows 0 0 0 1),
 * on raw column-major arrays. 'out' may not alias 'a' or 'b'.
 */
static inline void mat4_mul_affine(const double *restrict a, const double *restrict b,
				   double *restrict out)
{
	for (int c = 0; c < 3; c++) {
		const double b0 = b[c * 4 + 0], b1 = b[c * 4 + 1], b2 = b[c * 4 + 2];

		for (int r = 0; r < 4; r++)
			out[c * 4 + r] = a[r] * b0 + a[4 + r] * b1 + a[8 + r] * b2;
	}
	{
		const double b0 = b[12], b1 = b[13], b2 = b[14];

		for (int r = 0; r < 4; r++)
			out[12 + r] = a[r] * b0 + a[4 + r] * b1 + a[8 + r] * b2 + a[12 + r];
	}
}

#endif
