/*
 * edit_relative.c: relative ops (rotate, move, two-bone ik) and angles
 * resolved into the absolute ops they amount to (see edit.h).
 *
 * Each relative op is read against the scene as the ops before it left it
 * and becomes one or two set ops of absolute channels (r, t), which are
 * what gets applied, inverted and logged: the channels stay the state and
 * every matrix is rebuilt from them, so a million small turns leave no
 * drift in a matrix, and a replayed log gives the same bits whatever the
 * solver. Never changes a scene, never parses JSON.
 */
#include "edit_internal.h"

#include "err.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEG_RAD (M_PI / 180.0)

vec3 ed_joint_world(const scene *s, int node)
{
	node_props p;

	scene_props(s, node, &p);
	return mat4_point(scene_world(s, node), p.pivot);
}

static int bad_field(edit_error *err, int k, const char *field, const char *fmt, const char *a,
		     const char *b)
{
	char m[EDIT_MESSAGE_MAX];

	snprintf(m, sizeof(m), fmt, a, b);
	edit_error_set(err, RIGD_E_BAD_FIELD, k, field, "%s: %s", field, m);
	return RIGD_E_BAD_FIELD;
}

static bool vec3_ok(vec3 v)
{
	return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

/* 'v' divided by its largest component, so that its length cannot
 * overflow (1e308 on two axes); a direction keeps its direction. */
static vec3 tame(vec3 v)
{
	double big = fmax(fabs(v.x), fmax(fabs(v.y), fabs(v.z)));

	return big > 0 ? vec3_scale(v, 1 / big) : v;
}

/* A set op of node 'id' with no field yet. */
static edit_op set_op(const char *id)
{
	edit_op o;

	memset(&o, 0, sizeof(o));
	o.kind = EDIT_SET;
	o.index = -1;
	snprintf(o.id, sizeof(o.id), "%s", id);
	return o;
}

/* A rotation kept in the plane of a 2D scene: x and y exactly zero (they
 * are zero to rounding already), then normalised. */
static quat planar(const scene *s, quat q)
{
	quat out = q;

	if (scene_dims(s) == 2)
		q.x = q.y = 0;
	if (quat_normalize(q, &out) != 0)
		out = quat_identity();
	return out;
}

/* ---------- create and set with an angle ---------- */

static int resolve_angle(const scene *s, const edit_op *op, int k, edit_op *out,
			 edit_error *err)
{
	if (scene_dims(s) != 2)
		return bad_field(err, k, "angle", "only nodes of a 2D scene have an angle (use r or euler)",
				 "", "");
	if (!isfinite(op->angle_deg)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "angle", "angle: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	*out = *op;
	out->fields = (op->fields & ~EDIT_F_ANGLE) | EDIT_F_R;
	out->r = quat_from_angle2d_deg(op->angle_deg);
	out->angle_deg = 0;
	return 0;
}

/* ---------- rotate and move ---------- */

static int resolve_rotate(const scene *s, const edit_op *op, int k, int node, edit_op *out,
			  edit_error *err)
{
	node_props p;
	quat delta, r;
	bool flat = scene_dims(s) == 2;

	if (!isfinite(op->angle_deg)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "angle", "angle: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	if (flat && (op->fields & EDIT_F_AXIS))
		return bad_field(err, k, "axis", "not used in a 2D scene (angle turns in the plane)", "",
				 "");
	if (!flat && !(op->fields & EDIT_F_AXIS))
		return bad_field(err, k, "axis", "a rotate op in a 3D scene needs an axis", "", "");
	if (!flat && (!vec3_ok(op->axis) || !(vec3_length(tame(op->axis)) > 0)))
		return bad_field(err, k, "axis", "must be a finite, non-zero vector", "", "");
	delta = flat ? quat_from_angle2d_deg(op->angle_deg)
		     : quat_from_axis_angle(tame(op->axis), op->angle_deg * DEG_RAD);
	scene_props(s, node, &p);
	/* r' = r * delta: the turn is made in the node's own frame (about its
	 * pivot, before its own rotation), so an axis names a local axis. */
	r = planar(s, quat_mul(p.r, delta));
	*out = set_op(op->id);
	out->fields = EDIT_F_R;
	out->r = r;
	return 0;
}

static int resolve_move(const scene *s, const edit_op *op, int k, int node, edit_op *out,
			edit_error *err)
{
	node_props p;

	if (!vec3_ok(op->by)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "by", "by: %s", err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	if (scene_dims(s) == 2 && op->by.z != 0)
		return bad_field(err, k, "by", "z must be 0 in a 2D scene", "", "");
	scene_props(s, node, &p);
	*out = set_op(op->id);
	out->fields = EDIT_F_T;
	out->t = vec3_add(p.t, op->by);
	if (!vec3_ok(out->t)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "by", "by: t + by overflows");
		return RIGD_E_NOT_FINITE;
	}
	return 0;
}

/* ---------- two-bone ik ---------- */

/* The 3x3 part of a matrix, translation dropped. */
static mat4 linear_part(mat4 m)
{
	m.m[12] = m.m[13] = m.m[14] = 0;
	return m;
}

/*
 * The shortest rotation taking unit vector u to unit vector v; for opposite
 * vectors the half turn about 'fallback' (a unit vector perpendicular to u,
 * or the best one can find).
 */
static quat rotation_between(vec3 u, vec3 v, vec3 fallback)
{
	vec3 axis = vec3_cross(u, v);
	double sin_a = vec3_length(axis), cos_a = vec3_dot(u, v);

	if (sin_a < 1e-15 && cos_a < 0) {
		vec3 f = vec3_sub(fallback, vec3_scale(u, vec3_dot(fallback, u)));

		if (!(vec3_length(f) > 1e-9))
			f = fabs(u.x) < 0.9 ? vec3_cross(u, vec3_make(1, 0, 0))
					    : vec3_cross(u, vec3_make(0, 1, 0));
		return quat_from_axis_angle(f, M_PI);
	}
	if (!(sin_a > 0))
		return quat_identity();
	return quat_from_axis_angle(axis, atan2(sin_a, cos_a));
}

/*
 * The local rotation that turns a node about its joint by world rotation
 * 'q' when its parent's world linear part is 'parent_lin': with
 * L = T(t + pivot) R S T(-pivot), rotating the world matrix about the joint
 * by q is R' = (P^-1 q P) R. Exact when P has no shear or non-uniform scale
 * (a mirror is fine); otherwise the nearest rotation.
 */
static int local_turn(mat4 parent_lin, quat q, quat r, quat *out)
{
	mat4 inv, d;
	vec3 t, sc;
	quat dq;
	int rc = mat4_invert_affine(parent_lin, &inv);

	if (rc)
		return rc;
	d = mat4_mul(inv, mat4_mul(mat4_from_quat(q), parent_lin));
	mat4_decompose(d, 0, &t, &dq, &sc, NULL);
	*out = quat_mul(dq, r);
	return 0;
}

/* The chain's nodes, checked: they exist and each is the next one's parent. */
static int ik_nodes(const scene *s, const edit_op *op, int k, int n[3], edit_error *err)
{
	const char *ids[3] = { op->id, op->chain_mid, op->chain_end };
	char q[QUOTED_MAX], q2[QUOTED_MAX];

	for (int i = 0; i < 3; i++) {
		if ((n[i] = scene_find(s, ids[i])) < 0) {
			edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, "chain", "chain: unknown node '%s'",
				       ed_quoted(ids[i], q));
			return RIGD_E_UNKNOWN_NODE;
		}
	}
	for (int i = 1; i < 3; i++)
		if (scene_parent(s, n[i]) != n[i - 1])
			return bad_field(err, k, "chain", "'%s' is not a child of '%s'",
					 ed_quoted(ids[i], q), ed_quoted(ids[i - 1], q2));
	return 0;
}

/* The direction, perpendicular to the root-to-target line 'dir', towards
 * which the middle joint bends. */
static int ik_bend(const scene *s, const edit_op *op, int k, vec3 dir, vec3 a, vec3 b, vec3 c,
		   vec3 *out, edit_error *err)
{
	if (scene_dims(s) == 2) {
		/* The side the middle joint is on now, of the line from the root
		 * joint to the end; a straight chain bends to the right of the
		 * root-to-target line as seen on screen (y down). */
		vec3 ac = vec3_sub(c, a), ab = vec3_sub(b, a);
		double side = ac.x * ab.y - ac.y * ab.x;
		double sgn = side < 0 ? -1 : 1;

		*out = vec3_make(-dir.y * sgn, dir.x * sgn, 0);
		return 0;
	}
	vec3 pole = tame(op->pole);
	vec3 pp = vec3_sub(pole, vec3_scale(dir, vec3_dot(pole, dir)));
	double len = vec3_length(pp);

	if (!(len > 1e-12 * vec3_length(pole)))
		return bad_field(err, k, "pole", "parallel to the line from the root joint to the target",
				 "", "");
	*out = vec3_scale(pp, 1 / len);
	return 0;
}

static int ik_check_fields(const scene *s, const edit_op *op, int k, edit_error *err)
{
	bool flat = scene_dims(s) == 2;

	if (!vec3_ok(op->target)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "target", "target: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	if (flat && op->target.z != 0)
		return bad_field(err, k, "target", "z must be 0 in a 2D scene", "", "");
	if (flat && (op->fields & EDIT_F_POLE))
		return bad_field(err, k, "pole", "not used in a 2D scene (the chain keeps its bend side)",
				 "", "");
	if (!flat && !(op->fields & EDIT_F_POLE))
		return bad_field(err, k, "pole", "an ik op in a 3D scene needs a pole direction", "", "");
	if (!flat && (!vec3_ok(op->pole) || !(vec3_length(tame(op->pole)) > 0)))
		return bad_field(err, k, "pole", "must be a finite, non-zero vector", "", "");
	return 0;
}

static int resolve_ik(const scene *s, const edit_op *op, int k, edit_op out[2],
		      edit_ik_report *rep, edit_error *err)
{
	int n[3], rc, pa;
	vec3 a, b, c, dir, bend, e, v2;
	double l1, l2, d, cos_a, sin_a;
	quat q1, q2, r1, r2;
	node_props pr;
	mat4 parent_lin, a_lin;
	char q[QUOTED_MAX];

	if ((rc = ik_check_fields(s, op, k, err)) != 0 || (rc = ik_nodes(s, op, k, n, err)) != 0)
		return rc;
	a = ed_joint_world(s, n[0]);
	b = ed_joint_world(s, n[1]);
	c = ed_joint_world(s, n[2]);
	l1 = vec3_length(vec3_sub(b, a));
	l2 = vec3_length(vec3_sub(c, b));
	if (!(l1 > 0) || !(l2 > 0))
		return bad_field(err, k, "chain", "the bone from '%s' has zero length",
				 ed_quoted(l1 > 0 ? op->chain_mid : op->id, q), "");
	d = vec3_length(vec3_sub(op->target, a));
	if (!isfinite(d) || !isfinite(l1 + l2)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "target",
			       "target: too far from the chain to compute");
		return RIGD_E_NOT_FINITE;
	}
	if (!(d > 1e-12 * (l1 + l2)))
		return bad_field(err, k, "target", "at the chain's root joint: no direction to point in",
				 "", "");
	dir = vec3_scale(vec3_sub(op->target, a), 1 / d);
	if ((rc = ik_bend(s, op, k, dir, a, b, c, &bend, err)) != 0)
		return rc;
	/* The triangle root, middle, target by the law of cosines; out of
	 * reach (too far or too near) the cosine clamps and the chain points
	 * at the target, stretched or folded. */
	rep->op = k;
	rep->reached = d <= l1 + l2 && d >= fabs(l1 - l2);
	cos_a = fmax(-1, fmin(1, (l1 * l1 + d * d - l2 * l2) / (2 * l1 * d)));
	sin_a = sqrt(fmax(0, 1 - cos_a * cos_a));
	e = vec3_add(a, vec3_scale(vec3_add(vec3_scale(dir, cos_a), vec3_scale(bend, sin_a)), l1));
	v2 = vec3_sub(op->target, e);
	v2 = vec3_length(v2) > 0 ? vec3_scale(v2, 1 / vec3_length(v2)) : dir;
	/* World turns: q1 about the root joint takes the middle joint to e;
	 * q2 about e then takes the end onto the line to the target. */
	q1 = rotation_between(vec3_scale(vec3_sub(b, a), 1 / l1),
			      vec3_scale(vec3_sub(e, a), 1 / l1), vec3_cross(dir, bend));
	c = vec3_add(a, quat_rotate(q1, vec3_sub(c, a)));
	q2 = rotation_between(vec3_scale(vec3_sub(c, e), 1 / l2), v2, vec3_cross(dir, bend));
	pa = scene_parent(s, n[0]);
	parent_lin = pa >= 0 ? linear_part(scene_world(s, pa)) : mat4_identity();
	a_lin = mat4_mul(mat4_from_quat(q1), linear_part(scene_world(s, n[0])));
	scene_props(s, n[0], &pr);
	if ((rc = local_turn(parent_lin, q1, pr.r, &r1)) == 0) {
		scene_props(s, n[1], &pr);
		rc = local_turn(a_lin, q2, pr.r, &r2);
	}
	if (rc)
		return bad_field(err, k, "chain", "a joint's parent has a singular world matrix", "", "");
	if (!(isfinite(r1.x + r1.y + r1.z + r1.w) && isfinite(r2.x + r2.y + r2.z + r2.w))) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "target", "target: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	out[0] = set_op(op->id);
	out[0].fields = EDIT_F_R;
	out[0].r = planar(s, r1);
	out[1] = set_op(op->chain_mid);
	out[1].fields = EDIT_F_R;
	out[1].r = planar(s, r2);
	return 0;
}

/* ---------- the entry point ---------- */

int ed_resolve(const scene *s, const edit_op *op, int k, edit_op out[2], int *n_out,
	       edit_ik_report *ik, edit_error *err)
{
	int node = -1, rc;

	*n_out = 1;
	switch (op->kind) {
	case EDIT_CREATE:
	case EDIT_SET:
		assert(op->fields & EDIT_F_ANGLE);
		return resolve_angle(s, op, k, &out[0], err);
	case EDIT_ROTATE:
		if ((rc = ed_find_node(s, op, k, &node, err)) != 0)
			return rc;
		return resolve_rotate(s, op, k, node, &out[0], err);
	case EDIT_MOVE:
		if ((rc = ed_find_node(s, op, k, &node, err)) != 0)
			return rc;
		return resolve_move(s, op, k, node, &out[0], err);
	default:
		assert(op->kind == EDIT_IK);
		*n_out = 2;
		return resolve_ik(s, op, k, out, ik, err);
	}
}
