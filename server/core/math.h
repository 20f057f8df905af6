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

/*
 * An affine matrix without its last row, which is always 0 0 0 1: three rows
 * of four, stored by rows (m[row * 4 + col]), unlike mat4. The scene keeps
 * its cached matrices in this form: 96 bytes instead of 128, and a row is one
 * four-wide vector for the hot loop (mat34_mul).
 */
typedef struct mat34 {
	double m[12]; /* row-major */
} mat34;

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
/*
 * The 2D screen convention (transforms.md, "2D scenes"): artwork
 * coordinates with y down, a positive angle counter-clockwise as seen on
 * screen. On screen that is a turn from +x towards -y, so the angle 'deg'
 * is the rotation about z by -deg: quat_from_angle2d_deg(deg) is
 * quat_from_axis_angle((0, 0, 1), -deg in radians).
 */
quat quat_from_angle2d_deg(double deg);
/* The screen angle of a rotation about z, in degrees in (-180, 180]; only
 * the z and w components are read (x and y are zero in a 2D scene). */
double quat_to_angle2d_deg(quat q);

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
 * the pivot. */
mat4 mat4_compose_pivot(vec3 t, quat r, vec3 s, vec3 pivot);
/*
 * The local matrix of a 2D node with a shear (docs/transforms.md, "Shear
 * and inherit modes"): T(t) T(pivot) R K S T(-pivot), where K turns the x
 * axis by -shear_deg[0] and the y axis by -shear_deg[1] about z (the screen
 * convention of an angle), so that for the screen angle a the x axis is
 * s.x (cos(a + shx), -sin(a + shx)) and the y axis s.y (sin(a + shy),
 * cos(a + shy)). With shear_deg 0 0 it is mat4_compose_pivot, bit for bit
 * (the same code runs). The z axis is R's, scaled by s.z.
 */
mat4 mat4_compose_pivot2d(vec3 t, quat r, vec3 s, vec3 pivot, const double shear_deg[2]);
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
 * the same first axis (Gram-Schmidt from x).
 */
bool mat4_decompose(mat4 m, double tol, vec3 *t, quat *r, vec3 *s, double *max_err);
double mat4_max_abs_diff(mat4 a, mat4 b);
bool mat4_is_finite(mat4 m);

/* The first three rows of an affine matrix (its last row is dropped). */
mat34 mat34_from_mat4(mat4 m);
/* The full matrix, with the last row 0 0 0 1 (positive zeros). */
mat4 mat4_from_mat34(mat34 m);

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
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
	for (int c = 0; c < 3; c++) {
		const double b0 = b[c * 4 + 0], b1 = b[c * 4 + 1], b2 = b[c * 4 + 2];

		for (int r = 0; r < 4; r++)
			out[c * 4 + r] = a[r] * b0 + a[4 + r] * b1 + a[8 + r] * b2;
	}
	{
		const double b0 = b[12], b1 = b[13], b2 = b[14];

		for (int r = 0; r < 4; r++)
			out[12 + r] = (a[r] * b0 + a[4 + r] * b1) + (a[8 + r] * b2 + a[12 + r]);
	}
}

/*
 * The hot-loop product out = a * b on raw mat34 arrays (12 doubles, by
 * rows). 'out' may not alias 'a' or 'b'.
 *
 * Every element is (a0 * b0 + a1 * b1) + (a2 * b2 [+ a3]), the same
 * operations in the same order as mat4_mul_affine, so both give the same
 * bits. Two sums of two, not one chain of three additions: in the hot loop
 * a child's product waits for its parent's, and this shortens that wait by
 * one addition. With GCC or Clang a row of the result is one four-wide
 * vector: row r = (a[r][0] * brow0 + a[r][1] * brow1) + (a[r][2] * brow2
 * + (-0, -0, -0, a[r][3])). Adding -0 leaves every double as it was (even
 * -0, which + 0 would turn into +0), so the three columns without a
 * translation term are exact too. Built for AVX2 that is a handful of
 * instructions; for the baseline, twice as many SSE2 ones. Never FMA: GCC
 * does not contract in ISO C mode, Clang does by default wherever the
 * target has FMA (AVX-512F implies it there), hence the pragma in each of
 * these products.
 */
#if defined(__GNUC__)
typedef double mat34_row __attribute__((vector_size(32)));
typedef long long mat34_lanes __attribute__((vector_size(32)));

/* (-0, -0, -0, row[3]): lanes 0..2 of 'zeros', lane 3 of 'row'; one blend. */
#if defined(__clang__)
#define MAT34_TAIL(row, zeros) __builtin_shufflevector((zeros), (row), 0, 1, 2, 7)
#else
#define MAT34_TAIL(row, zeros) __builtin_shuffle((zeros), (row), (mat34_lanes){ 0, 1, 2, 7 })
#endif

static inline void mat34_mul(const double *restrict a, const double *restrict b,
			     double *restrict out)
{
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
	const mat34_row neg_zero = { -0.0, -0.0, -0.0, -0.0 };
	mat34_row b0, b1, b2, a0, a1, a2, r0, r1, r2;

	__builtin_memcpy(&b0, b, sizeof(b0));
	__builtin_memcpy(&b1, b + 4, sizeof(b1));
	__builtin_memcpy(&b2, b + 8, sizeof(b2));
	__builtin_memcpy(&a0, a, sizeof(a0));
	__builtin_memcpy(&a1, a + 4, sizeof(a1));
	__builtin_memcpy(&a2, a + 8, sizeof(a2));
	r0 = (b0 * a[0] + b1 * a[1]) + (b2 * a[2] + MAT34_TAIL(a0, neg_zero));
	r1 = (b0 * a[4] + b1 * a[5]) + (b2 * a[6] + MAT34_TAIL(a1, neg_zero));
	r2 = (b0 * a[8] + b1 * a[9]) + (b2 * a[10] + MAT34_TAIL(a2, neg_zero));
	__builtin_memcpy(out, &r0, sizeof(r0));
	__builtin_memcpy(out + 4, &r1, sizeof(r1));
	__builtin_memcpy(out + 8, &r2, sizeof(r2));
}

/*
 * MAT34_HAVE_WIDE: mat34_mul_wide exists. It gives the same bits as
 * mat34_mul, with rows 0 and 1 of the result in one eight-wide vector: the
 * form for AVX-512, where it is about 15% faster than two four-wide rows
 * (the broadcasts become in-register permutes). Elsewhere it is slower, so
 * the scene uses it only where the CPU has AVX-512F.
 * __builtin_shufflevector came to GCC in version 12.
 */
#if defined(__clang__) || __GNUC__ >= 12
#define MAT34_HAVE_WIDE 1
typedef double mat34_rows2 __attribute__((vector_size(64)));

static inline void mat34_mul_wide(const double *restrict a, const double *restrict b,
				  double *restrict out)
{
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
	const mat34_row neg_zero = { -0.0, -0.0, -0.0, -0.0 };
	const mat34_rows2 neg_zero2 = { -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0 };
	mat34_row b0, b1, b2, a2, r2;
	mat34_rows2 a01, b0d, b1d, b2d, r01;

	__builtin_memcpy(&b0, b, sizeof(b0));
	__builtin_memcpy(&b1, b + 4, sizeof(b1));
	__builtin_memcpy(&b2, b + 8, sizeof(b2));
	__builtin_memcpy(&a01, a, sizeof(a01));
	__builtin_memcpy(&a2, a + 8, sizeof(a2));
	/* Each row of b twice, and a[r][k] spread over the half of row r. */
	b0d = __builtin_shufflevector(b0, b0, 0, 1, 2, 3, 0, 1, 2, 3);
	b1d = __builtin_shufflevector(b1, b1, 0, 1, 2, 3, 0, 1, 2, 3);
	b2d = __builtin_shufflevector(b2, b2, 0, 1, 2, 3, 0, 1, 2, 3);
	r01 = (b0d * __builtin_shufflevector(a01, a01, 0, 0, 0, 0, 4, 4, 4, 4) +
		b1d * __builtin_shufflevector(a01, a01, 1, 1, 1, 1, 5, 5, 5, 5)) +
	       (b2d * __builtin_shufflevector(a01, a01, 2, 2, 2, 2, 6, 6, 6, 6) +
	      __builtin_shufflevector(neg_zero2, a01, 0, 1, 2, 11, 4, 5, 6, 15));
	r2 = (b0 * a[8] + b1 * a[9]) + (b2 * a[10] + MAT34_TAIL(a2, neg_zero));
	__builtin_memcpy(out, &r01, sizeof(r01));
	__builtin_memcpy(out + 8, &r2, sizeof(r2));
}
#endif
#else
static inline void mat34_mul(const double *restrict a, const double *restrict b,
			     double *restrict out)
{
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
	for (int r = 0; r < 3; r++) {
		const double *ar = a + 4 * r;

		for (int c = 0; c < 3; c++)
			out[4 * r + c] = ar[0] * b[c] + ar[1] * b[4 + c] + ar[2] * b[8 + c];
		out[4 * r + 3] = (ar[0] * b[3] + ar[1] * b[7]) + (ar[2] * b[11] + ar[3]);
	}
}
#endif

#endif
