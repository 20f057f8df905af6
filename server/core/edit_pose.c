/*
 * edit_pose.c: the pose ops of the edit language (see edit.h, pose.h).
 *
 * pose_save is resolved into the pose_set that carries the channels it
 * captured, and blend into the set ops of the channels it produces, so a
 * log holds values, never requests that read the scene. pose_set and
 * pose_delete change only the scene's poses; their inverses move the old
 * channels out of the store and back, so undoing allocates nothing.
 *
 * Poses are blended by channels, never by matrices: translation, scale and
 * a 2D node's shear linearly (the runtimes' alpha), rotation by slerp along the shorter arc, and the matrix is
 * rebuilt from the channels by the scene's rule. (The element-wise mean of
 * two rotation matrices theta apart is a rotation scaled by cos(theta/2):
 * 90 degrees apart it has determinant 0.5.) Never parses JSON.
 */
#include "edit_internal.h"

#include "err.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int bad_pose_id(edit_error *err, int k, const char *field, const char *id)
{
	char q[QUOTED_MAX];

	edit_error_set(err, RIGD_E_BAD_ID, k, field, "%s: bad id '%s': %s", field,
		       ed_quoted(id, q), err_str(RIGD_E_BAD_ID));
	return RIGD_E_BAD_ID;
}

int ed_check_pose_ids(const edit_op *op, int k, size_t max_id, edit_error *err)
{
	const struct {
		unsigned bit;
		const char *field, *id;
	} ids[3] = { { EDIT_F_ROOT, "root", op->root },
		     { EDIT_F_POSE_A, "a", op->pose_a },
		     { EDIT_F_POSE_B, "b", op->pose_b } };

	for (int i = 0; i < 3; i++)
		if ((op->fields & ids[i].bit) &&
		    (!scene_id_valid(ids[i].id) || strlen(ids[i].id) > max_id))
			return bad_pose_id(err, k, ids[i].field, ids[i].id);
	return 0;
}

static bool vec3_finite(vec3 v)
{
	return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

/* Checks pose_set op k's channels: ids valid and strictly ascending,
 * numbers finite, rotations non-zero, in a 2D scene ('flat') in the plane
 * (t.z 0, s.z 1, r about z only) with a shear that keeps the axes apart,
 * and in a 3D scene without shear. */
static int check_channels(const edit_op *op, int k, bool flat, edit_error *err)
{
	char q[QUOTED_MAX];

	for (int i = 0; i < op->n_channels; i++) {
		const pose_channel *c = &op->channels[i];
		quat unit;

		if (!scene_id_valid(c->id))
			return bad_pose_id(err, k, "channels", c->id);
		if (i > 0 && strcmp(op->channels[i - 1].id, c->id) >= 0) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "channels",
				       "channels: '%s' is out of order or twice (sorted by id, once each)",
				       ed_quoted(c->id, q));
			return RIGD_E_BAD_FIELD;
		}
		if (!vec3_finite(c->t) || !vec3_finite(c->s) ||
		    !isfinite(c->r.x + c->r.y + c->r.z + c->r.w) ||
		    !isfinite(c->shear[0] + c->shear[1])) {
			edit_error_set(err, RIGD_E_NOT_FINITE, k, "channels", "channels: '%s': %s",
				       ed_quoted(c->id, q), err_str(RIGD_E_NOT_FINITE));
			return RIGD_E_NOT_FINITE;
		}
		if (quat_normalize(c->r, &unit) != 0) {
			edit_error_set(err, RIGD_E_ZERO_QUATERNION, k, "channels", "channels: '%s': %s",
				       ed_quoted(c->id, q), err_str(RIGD_E_ZERO_QUATERNION));
			return RIGD_E_ZERO_QUATERNION;
		}
		if (flat && (c->t.z != 0 || c->s.z != 1 || unit.x != 0 || unit.y != 0)) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "channels",
				       "channels: '%s' leaves the plane of a 2D scene (t.z 0, s.z 1, "
				       "r about z only)", ed_quoted(c->id, q));
			return RIGD_E_BAD_FIELD;
		}
		if (!flat && (c->shear[0] != 0 || c->shear[1] != 0)) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "channels",
				       "channels: '%s': shear only in a 2D scene", ed_quoted(c->id, q));
			return RIGD_E_BAD_FIELD;
		}
		if (flat && scene_shear_collinear(c->shear)) {
			edit_error_set(err, RIGD_E_BAD_FIELD, k, "channels",
				       "channels: '%s': shear [%g, %g] makes the x and y axes collinear "
				       "(shy - shx is 90 modulo 180)", ed_quoted(c->id, q), c->shear[0],
				       c->shear[1]);
			return RIGD_E_BAD_FIELD;
		}
	}
	return 0;
}

static int nomem(edit_error *err, int k)
{
	edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
	return RIGD_E_NOMEM;
}

static int unknown_pose(edit_error *err, int k, const char *field, const char *name)
{
	char q[QUOTED_MAX];

	edit_error_set(err, RIGD_E_UNKNOWN_POSE, k, field, "%s: unknown pose '%s'", field,
		       ed_quoted(name, q));
	return RIGD_E_UNKNOWN_POSE;
}

static int apply_pose_set(scene *s, const edit_op *op, int k, edit_batch *undo,
			  edit_error *err)
{
	pose_set *ps = scene_poses(s);
	pose_channel *ch, *old;
	edit_op *back = NULL;
	bool oom;
	int rc, n_old, at = pose_find(ps, op->id);

	if ((rc = check_channels(op, k, scene_dims(s) == 2, err)) != 0)
		return rc;
	if (at < 0 && pose_count(ps) >= POSE_DEFAULT_MAX) {
		edit_error_set(err, RIGD_E_LIMIT, k, "pose", "the scene holds its maximum of %d poses",
			       POSE_DEFAULT_MAX);
		return RIGD_E_LIMIT;
	}
	if ((at < 0 && pose_reserve(ps) != 0) ||
	    (undo && !(back = edit_batch_add(undo, at < 0 ? EDIT_POSE_DELETE : EDIT_POSE_SET, op->id))))
		return nomem(err, k);
	ch = pose_channels_dup(op->channels, op->n_channels, &oom);
	if (oom) {
		if (back)
			undo->n_ops--; /* nothing of it allocated yet */
		return nomem(err, k);
	}
	/* The store holds unit quaternions, as the scene does (normalising a
	 * unit one is the identity, so a saved pose round-trips bit for bit). */
	for (int i = 0; i < op->n_channels; i++)
		quat_normalize(ch[i].r, &ch[i].r);
	pose_put(ps, op->id, ch, op->n_channels, &old, &n_old);
	if (back && at >= 0) {
		back->fields = EDIT_F_CHANNELS;
		back->channels = old;
		back->n_channels = n_old;
	} else {
		free(old);
	}
	return 0;
}

int ed_apply_pose(scene *s, const edit_op *op, int k, edit_batch *undo, edit_error *err)
{
	pose_set *ps = scene_poses(s);
	edit_op *back;
	int at;

	assert(op->kind == EDIT_POSE_SET || op->kind == EDIT_POSE_DELETE);
	if (op->kind == EDIT_POSE_SET)
		return apply_pose_set(s, op, k, undo, err);
	if ((at = pose_find(ps, op->id)) < 0)
		return unknown_pose(err, k, "pose", op->id);
	if (undo && !(back = edit_batch_add(undo, EDIT_POSE_SET, op->id)))
		return nomem(err, k);
	if (undo) {
		back->fields = EDIT_F_CHANNELS;
		pose_remove(ps, at, &back->channels, &back->n_channels);
	} else {
		pose_channel *ch;
		int n;

		pose_remove(ps, at, &ch, &n);
		free(ch);
	}
	return 0;
}

int ed_undo_pose(scene *s, edit_op *op)
{
	pose_set *ps = scene_poses(s);
	pose_channel *old;
	int n_old, at = pose_find(ps, op->id);

	if (op->kind == EDIT_POSE_DELETE) {
		if (at < 0)
			return RIGD_E_INTERNAL;
		pose_remove(ps, at, &old, &n_old);
		free(old);
		return 0;
	}
	assert(op->kind == EDIT_POSE_SET);
	/* A pose deleted by the op this undoes left its room in the store. */
	if (at < 0 && pose_reserve(ps) != 0)
		return RIGD_E_INTERNAL;
	pose_put(ps, op->id, op->channels, op->n_channels, &old, &n_old);
	op->channels = NULL;
	op->n_channels = 0;
	free(old);
	return 0;
}

/* ---------- pose_save ---------- */

static int cmp_channel(const void *x, const void *y)
{
	return strcmp(((const pose_channel *)x)->id, ((const pose_channel *)y)->id);
}

/* The preorder range [*first, *end) of op k's root (all nodes without one). */
static int subtree_range(const scene *s, int k, const char *root,
			 const char *field, int *first, int *end, edit_error *err)
{
	char q[QUOTED_MAX];
	int node;

	if (!root) {
		*first = 0;
		*end = scene_count(s);
		return 0;
	}
	if ((node = scene_find(s, root)) < 0) {
		edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, field, "%s: unknown node '%s'", field,
			       ed_quoted(root, q));
		return RIGD_E_UNKNOWN_NODE;
	}
	*first = scene_pos(s, node);
	*end = *first + scene_subtree_size(s, node);
	return 0;
}

int ed_resolve_pose_save(const scene *s, const edit_op *op, int k, edit_op *out,
			 edit_error *err)
{
	int first, end, rc;
	pose_channel *ch = NULL;

	memset(out, 0, sizeof(*out));
	if ((rc = subtree_range(s, k, (op->fields & EDIT_F_ROOT) ? op->root : NULL, "root",
				&first, &end, err)) != 0)
		return rc;
	if (end > first && !(ch = malloc(sizeof(*ch) * (size_t)(end - first))))
		return nomem(err, k);
	for (int i = first; i < end; i++) {
		node_props p;
		int node = scene_at(s, i);
		pose_channel *c = &ch[i - first];

		scene_props(s, node, &p);
		memset(c->id, 0, sizeof(c->id));
		strncpy(c->id, scene_id(s, node), SCENE_ID_MAX);
		c->t = p.t;
		c->r = p.r;
		c->s = p.s;
		c->shear[0] = p.shear[0];
		c->shear[1] = p.shear[1];
	}
	if (ch)
		qsort(ch, (size_t)(end - first), sizeof(*ch), cmp_channel);
	out->kind = EDIT_POSE_SET;
	out->fields = EDIT_F_CHANNELS;
	out->index = -1;
	memcpy(out->id, op->id, sizeof(out->id));
	out->channels = ch;
	out->n_channels = end - first;
	return 0;
}

/* ---------- blend ---------- */

static vec3 lerp3(vec3 a, vec3 b, double w)
{
	/* (1 - w) a + w b, not a + w (b - a): exact at both ends. */
	return vec3_make((1 - w) * a.x + w * b.x, (1 - w) * a.y + w * b.y,
			 (1 - w) * a.z + w * b.z);
}

/*
 * Spherical interpolation of unit quaternions along the shorter arc: q and
 * -q are one rotation, so b is negated when it lies on the far side of a
 * (in 2D, the shortest angle delta: 170 and -170 degrees meet at 180).
 */
static quat slerp_short(quat a, quat b, double w)
{
	double d = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w, wa, wb;
	quat q;

	if (d < 0) {
		b = (quat){ -b.x, -b.y, -b.z, -b.w };
		d = -d;
	}
	if (d > 1 - 1e-12) {
		wa = 1 - w; /* nearly equal: the chord is the arc */
		wb = w;
	} else {
		double theta = acos(fmin(d, 1)), st = sin(theta);

		wa = sin((1 - w) * theta) / st;
		wb = sin(w * theta) / st;
	}
	q = (quat){ wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z,
		    wa * a.w + wb * b.w };
	if (quat_normalize(q, &q) != 0)
		q = a;
	return q;
}

static int blend_pose(const scene *s, int k, const char *field,
		      const char *name, const pose **out, edit_error *err)
{
	int at = pose_find(scene_poses_c(s), name);

	if (at < 0)
		return unknown_pose(err, k, field, name);
	*out = pose_at(scene_poses_c(s), at);
	return 0;
}

/* True when the blend of 'ca' and 'cb' must set node 'node''s shear: a
 * pose has one, or the node has one now (a blend to [0, 0] clears it).
 * Otherwise the set leaves it out, so that a rig without shear blends as
 * before (a set of shear sends the node whole, not as locals). */
static bool blends_shear(const scene *s, int node, const pose_channel *ca,
			 const pose_channel *cb)
{
	node_props p;

	if (scene_dims(s) != 2)
		return false;  /* a 3D node has no shear */
	if (pose_channel_sheared(ca) || pose_channel_sheared(cb))
		return true;
	scene_props(s, node, &p);
	return memcmp(p.shear, (const double[2]){ 0, 0 }, sizeof(p.shear)) != 0;
}

/* The set op for node 'node' ('id'), held by both poses. */
static int blend_node(const scene *s, int node, const char *id, const pose_channel *ca,
		      const pose_channel *cb, double w, edit_batch *out)
{
	edit_op *set = edit_batch_add(out, EDIT_SET, id);

	if (!set)
		return RIGD_E_NOMEM;
	set->fields = EDIT_F_T | EDIT_F_R | EDIT_F_S | (blends_shear(s, node, ca, cb) ? EDIT_F_SHEAR : 0);
	if (w == 0 || w == 1) {
		/* The ends are the poses themselves, bit for bit. */
		const pose_channel *c = w == 0 ? ca : cb;

		set->t = c->t;
		set->r = c->r;
		set->s = c->s;
		set->shear_deg[0] = c->shear[0];
		set->shear_deg[1] = c->shear[1];
	} else {
		set->t = lerp3(ca->t, cb->t, w);
		set->s = lerp3(ca->s, cb->s, w);
		set->shear_deg[0] = (1 - w) * ca->shear[0] + w * cb->shear[0];
		set->shear_deg[1] = (1 - w) * ca->shear[1] + w * cb->shear[1];
		set->r = slerp_short(ca->r, cb->r, w);
		if (scene_dims(s) == 2) {
			/* Both are turns about z; keep the result exactly so. */
			set->r.x = set->r.y = 0;
			quat_normalize(set->r, &set->r);
		}
	}
	return 0;
}

int ed_resolve_blend(const scene *s, const edit_op *op, int k, edit_batch *out,
		     edit_error *err)
{
	const pose *a, *b;
	int first, end, rc;

	edit_batch_init(out);
	if (!isfinite(op->weight)) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "t", "t: %s", err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	if (!(op->weight >= 0 && op->weight <= 1)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "t", "t: the weight must be in [0, 1]");
		return RIGD_E_BAD_FIELD;
	}
	if ((rc = subtree_range(s, k, op->id, "root", &first, &end, err)) != 0 ||
	    (rc = blend_pose(s, k, "a", op->pose_a, &a, err)) != 0 ||
	    (rc = blend_pose(s, k, "b", op->pose_b, &b, err)) != 0)
		return rc;
	for (int i = first; i < end; i++) {
		int node = scene_at(s, i);
		const char *id = scene_id(s, node);
		const pose_channel *ca = pose_channel_find(a, id), *cb = pose_channel_find(b, id);

		/* A node one of the poses does not hold keeps its channels. */
		if (ca && cb && blend_node(s, node, id, ca, cb, op->weight, out) != 0) {
			edit_batch_release(out);
			return nomem(err, k);
		}
	}
	/* A blend that would set nothing is a mistake (a wrong root or pose),
	 * and would log an empty batch. */
	if (out->n_ops == 0) {
		char q[QUOTED_MAX], q2[QUOTED_MAX];

		edit_error_set(err, RIGD_E_BAD_FIELD, k, "root",
			       "root: poses '%s' and '%s' hold no node of this subtree in common",
			       ed_quoted(op->pose_a, q), ed_quoted(op->pose_b, q2));
		return RIGD_E_BAD_FIELD;
	}
	return 0;
}
