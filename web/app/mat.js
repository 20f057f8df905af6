/*
 * mat.js: the little matrix arithmetic the viewer does on server matrices.
 *
 * Conventions are the server's (docs/architecture.md): 4x4 matrices as 16
 * numbers, column-major (m[col * 4 + row]), column vectors, double
 * precision. These functions read world matrices and derive things from
 * them (a determinant, the angle between axes, a world box, an inverse for
 * a camera's view); they never compose a node's world matrix from its
 * parent's: that is the server's job, and the browser draws what it sent.
 */

export const IDENTITY = Object.freeze([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);

/* Column 'i' (0..3) of 'm' as [x, y, z]. */
export function column(m, i) {
	return [m[i * 4], m[i * 4 + 1], m[i * 4 + 2]];
}

/* The world position: the translation column. */
export function position(m) {
	return column(m, 3);
}

/* Determinant of the upper-left 3x3 (the linear part). */
export function det3(m) {
	return (
		m[0] * (m[5] * m[10] - m[9] * m[6]) -
		m[4] * (m[1] * m[10] - m[9] * m[2]) +
		m[8] * (m[1] * m[6] - m[5] * m[2])
	);
}

/*
 * The angle in degrees between the pair of axis columns that is furthest
 * from perpendicular (90 when all three are orthogonal), the same measure as
 * the server's mat4_shear_deg. Zero-length columns are skipped.
 * Returns { deg, axes: 'xy' | 'xz' | 'yz' | null }.
 */
export function shear(m) {
	const names = ['x', 'y', 'z'];
	let worst = 90;
	let worstDev = 0;
	let axes = null;
	for (let i = 0; i < 3; i++) {
		for (let j = i + 1; j < 3; j++) {
			const a = column(m, i);
			const b = column(m, j);
			const la = Math.hypot(...a);
			const lb = Math.hypot(...b);
			if (!(la > 0) || !(lb > 0)) continue;
			const c = Math.max(-1, Math.min(1, (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (la * lb)));
			const deg = (Math.acos(c) * 180) / Math.PI;
			if (Math.abs(deg - 90) > worstDev) {
				worstDev = Math.abs(deg - 90);
				worst = deg;
				axes = names[i] + names[j];
			}
		}
	}
	return { deg: worst, axes };
}

/* Tolerance in degrees below which world axes count as orthogonal: far
 * above the rounding of a long chain of products, far below any shear a
 * rigger could see. */
export const SHEAR_TOLERANCE_DEG = 1e-6;

/* a * b (both column-major 4x4). */
export function multiply(a, b) {
	const out = new Array(16);
	for (let col = 0; col < 4; col++) {
		for (let row = 0; row < 4; row++) {
			out[col * 4 + row] =
				a[row] * b[col * 4] + a[4 + row] * b[col * 4 + 1] + a[8 + row] * b[col * 4 + 2] + a[12 + row] * b[col * 4 + 3];
		}
	}
	return out;
}

/*
 * The inverse of an affine matrix (last row 0 0 0 1), or null when the
 * linear part is singular (|det| below 1e-300, or not finite).
 */
export function invertAffine(m) {
	const d = det3(m);
	if (!Number.isFinite(d) || Math.abs(d) < 1e-300) return null;
	const [a, b, c] = [m[0], m[1], m[2]];
	const [e, f, g] = [m[4], m[5], m[6]];
	const [i, j, k] = [m[8], m[9], m[10]];
	const inv = 1 / d;
	// Inverse of the 3x3 (column-major in, column-major out) by cofactors.
	const r00 = (f * k - j * g) * inv;
	const r01 = -(e * k - i * g) * inv;
	const r02 = (e * j - i * f) * inv;
	const r10 = -(b * k - j * c) * inv;
	const r11 = (a * k - i * c) * inv;
	const r12 = -(a * j - i * b) * inv;
	const r20 = (b * g - f * c) * inv;
	const r21 = -(a * g - e * c) * inv;
	const r22 = (a * f - e * b) * inv;
	const [tx, ty, tz] = [m[12], m[13], m[14]];
	return [
		r00, r10, r20, 0,
		r01, r11, r21, 0,
		r02, r12, r22, 0,
		-(r00 * tx + r01 * ty + r02 * tz),
		-(r10 * tx + r11 * ty + r12 * tz),
		-(r20 * tx + r21 * ty + r22 * tz),
		1,
	];
}

/* W * (p, 1) for an affine W. */
export function transformPoint(m, p) {
	return [
		m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12],
		m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13],
		m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14],
	];
}

/*
 * The world-space AABB of a local box under W (docs/transforms.md 8): Arvo's
 * method, which gives the min/max of the eight transformed corners without
 * transforming them. 'box' is {min:[3], max:[3]}. Returns {min, max}.
 */
export function worldBox(m, box) {
	const min = [m[12], m[13], m[14]];
	const max = [m[12], m[13], m[14]];
	for (let row = 0; row < 3; row++) {
		for (let col = 0; col < 3; col++) {
			const k = m[col * 4 + row];
			const a = k * box.min[col];
			const b = k * box.max[col];
			min[row] += Math.min(a, b);
			max[row] += Math.max(a, b);
		}
	}
	return { min, max };
}

/* The smallest box holding 'a' and 'b'; either may be null. */
export function unionBox(a, b) {
	if (!a) return b ? { min: [...b.min], max: [...b.max] } : null;
	if (!b) return { min: [...a.min], max: [...a.max] };
	return {
		min: [Math.min(a.min[0], b.min[0]), Math.min(a.min[1], b.min[1]), Math.min(a.min[2], b.min[2])],
		max: [Math.max(a.max[0], b.max[0]), Math.max(a.max[1], b.max[1]), Math.max(a.max[2], b.max[2])],
	};
}

/* Largest absolute difference between two equal-length number lists. */
export function maxAbsDiff(a, b) {
	let worst = 0;
	for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
	return worst;
}

/* The length of each of the three axis columns: how much W stretches the
 * node's own x, y and z (for sizing gizmos and reporting scale). */
export function axisLengths(m) {
	return [Math.hypot(...column(m, 0)), Math.hypot(...column(m, 1)), Math.hypot(...column(m, 2))];
}

/*
 * Quaternion [x, y, z, w] from Euler angles in degrees, intrinsic 'XYZ'
 * (R = Rx * Ry * Rz), exactly the server's quat_from_euler_deg. Used only to
 * preview a value in the inspector; the server converts Euler edits itself.
 */
export function quatFromEulerDeg([x, y, z]) {
	const h = Math.PI / 360;
	const [c1, c2, c3] = [Math.cos(x * h), Math.cos(y * h), Math.cos(z * h)];
	const [s1, s2, s3] = [Math.sin(x * h), Math.sin(y * h), Math.sin(z * h)];
	return [
		s1 * c2 * c3 + c1 * s2 * s3,
		c1 * s2 * c3 - s1 * c2 * s3,
		c1 * c2 * s3 + s1 * s2 * c3,
		c1 * c2 * c3 - s1 * s2 * s3,
	];
}

/* Euler degrees 'XYZ' from a quaternion (the inverse of quatFromEulerDeg),
 * angles in (-180, 180]. */
export function eulerDegFromQuat(q) {
	const len = Math.hypot(...q) || 1;
	const [x, y, z, w] = q.map((v) => v / len);
	const m11 = 1 - 2 * (y * y + z * z);
	const m12 = 2 * (x * y - z * w);
	const m13 = 2 * (x * z + y * w);
	const m22 = 1 - 2 * (x * x + z * z);
	const m23 = 2 * (y * z - x * w);
	const m32 = 2 * (y * z + x * w);
	const m33 = 1 - 2 * (x * x + y * y);
	const d = 180 / Math.PI;
	const ey = Math.asin(Math.max(-1, Math.min(1, m13)));
	let ex;
	let ez;
	if (Math.abs(m13) < 0.9999999) {
		ex = Math.atan2(-m23, m33);
		ez = Math.atan2(-m12, m11);
	} else {
		ex = Math.atan2(m32, m22);
		ez = 0;
	}
	const norm = (a) => (a * d <= -180 ? a * d + 360 : a * d);
	return [norm(ex), norm(ey), norm(ez)];
}
