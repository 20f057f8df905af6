/*
 * edit_clip.c: the clip op (edit.h) resolved into the plain set ops it
 * amounts to: a skeleton's clip (skel_clips.h) sampled at a time over the
 * file's setup pose, as the format's runtime samples it, and carried to
 * rigd's local frame (clip.h). The rules are in docs/clips.md, "Playing a
 * clip".
 *
 * A bone's set carries only the transform fields its animated channels
 * touch (t for x or y, r for the rotation, s for a scale, shear for a
 * shear or DragonBones' skew); a channel the clip does not animate keeps
 * the node's value, as a runtime leaves a channel no timeline keys. So a
 * log stores values, never the request, and a replay, an undo and every
 * viewer see plain sets. Never changes a scene, never parses JSON.
 */
#include "edit_internal.h"

#include "err.h"
#include "skel_clips.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bad_field naming 'field', the message "FIELD: ..." */
static int bad_field(edit_error *err, int k, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad_field(edit_error *err, int k, const char *field, const char *fmt, ...)
{
	char m[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	edit_error_set(err, RIGD_E_BAD_FIELD, k, field, "%s: %s", field, m);
	return RIGD_E_BAD_FIELD;
}

static int nomem(edit_error *err, int k)
{
	edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
	return RIGD_E_NOMEM;
}

/* A printable copy of a name from a request ('?' for the bytes a message
 * should not hold), cut to fit. */
static const char *printable(const char *name, char *out, size_t cap)
{
	size_t i;

	for (i = 0; name && name[i] && i + 4 < cap; i++)
		out[i] = ((unsigned char)name[i] >= 0x20 && (unsigned char)name[i] < 0x7f &&
			  name[i] != '\'') ? name[i] : '?';
	out[i] = '\0';
	if (name && name[i])
		snprintf(out + i, cap - i, "...");
	return out;
}

/* The skeleton op k plays: the one its file names, or the scene's only one. */
static int find_skeleton(const scene *s, const edit_op *op, int k, const skel_clips **out,
			 edit_error *err)
{
	const skel_set *ks = scene_skels(s);
	char q[80];

	if (op->fields & EDIT_F_CLIP_FILE) {
		*out = skel_set_find(ks, op->mesh ? op->mesh : "");
		if (!*out)
			return bad_field(err, k, "file", "the scene has no skeleton '%s'",
					 printable(op->mesh, q, sizeof(q)));
		return 0;
	}
	if (skel_set_count(ks) == 0)
		return bad_field(err, k, "clip", "the scene has no skeleton (import a Spine or "
				 "DragonBones file first)");
	if (skel_set_count(ks) > 1)
		return bad_field(err, k, "file", "the scene has %d skeletons: name the file of one "
				 "('%s', ...)", skel_set_count(ks), skel_set_at(ks, 0)->file);
	*out = skel_set_at(ks, 0);
	return 0;
}

/* A bone's current channels in its format's terms, from its node: the
 * inverse of clip_spine_to_local / clip_dragonbones_to_local. */
static clip_channels node_channels(int format, const node_props *p)
{
	clip_channels c;
	double angle = quat_to_angle2d_deg(p->r);

	c.x = p->t.x;
	c.scale_x = p->s.x;
	c.scale_y = p->s.y;
	if (format == CLIP_FORMAT_SPINE) {
		c.y = -p->t.y;
		c.rotate_deg = angle;
		c.shear_x_deg = p->shear[0];
		c.shear_y_deg = p->shear[1];
	} else {
		c.y = p->t.y;
		c.rotate_deg = -angle;
		c.shear_x_deg = -p->shear[1];  /* the skew skX - skY */
		c.shear_y_deg = 0;
	}
	return c;
}

/* 'cur' with the channels 'mask' names taken from 'abs'. */
static clip_channels masked(clip_channels cur, const clip_channels *abs, unsigned mask)
{
	if (mask & CLIP_M_ROTATE)
		cur.rotate_deg = abs->rotate_deg;
	if (mask & (CLIP_M_SKEW | CLIP_M_SHEAR_X))
		cur.shear_x_deg = abs->shear_x_deg;
	if (mask & CLIP_M_SHEAR_Y)
		cur.shear_y_deg = abs->shear_y_deg;
	if (mask & CLIP_M_X)
		cur.x = abs->x;
	if (mask & CLIP_M_Y)
		cur.y = abs->y;
	if (mask & CLIP_M_SCALE_X)
		cur.scale_x = abs->scale_x;
	if (mask & CLIP_M_SCALE_Y)
		cur.scale_y = abs->scale_y;
	return cur;
}

/* The set op of bone 'b' at node 'node' for its sampled pose 'p' at weight 'w'. */
static void bone_set(const scene *s, const skel_clips *sk, int b, int node,
		     const clip_bone_pose *p, double w, edit_op *set)
{
	node_props np;
	clip_channels cur, abs, target, mix;
	clip_local2d loc;
	unsigned m = p->mask;

	scene_props(s, node, &np);
	cur = node_channels(sk->format, &np);
	clip_apply(&sk->bones[b].setup, p, &abs);
	target = masked(cur, &abs, m);
	if (w == 1)
		mix = target;  /* exactly the clip's value, no blend rounding */
	else
		clip_blend(&cur, &target, w, &mix);
	if (sk->format == CLIP_FORMAT_SPINE)
		clip_spine_to_local(&mix, &loc);
	else
		clip_dragonbones_to_local(&mix, &loc);
	if (m & (CLIP_M_X | CLIP_M_Y)) {
		set->fields |= EDIT_F_T;
		/* + 0.0 turns the -0 of a negated zero into 0. */
		set->t = vec3_make(loc.t[0] + 0.0, loc.t[1] + 0.0, 0);
	}
	if (m & CLIP_M_ROTATE) {
		set->fields |= EDIT_F_R;
		set->r = quat_from_angle2d_deg(loc.angle_deg);
	}
	if (m & (CLIP_M_SCALE_X | CLIP_M_SCALE_Y)) {
		set->fields |= EDIT_F_S;
		set->s = vec3_make(loc.s[0], loc.s[1], 1);
	}
	if (m & (CLIP_M_SHEAR_X | CLIP_M_SHEAR_Y | CLIP_M_SKEW)) {
		set->fields |= EDIT_F_SHEAR;
		/* DragonBones has no shear of the x axis: the node's stays. */
		set->shear_deg[0] = sk->format == CLIP_FORMAT_SPINE ? loc.shear_deg[0] : np.shear[0];
		set->shear_deg[1] = loc.shear_deg[1] + 0.0;
	}
}

/* Whether node 'node' lies in the preorder range [first, end). */
static bool in_range(const scene *s, int node, int first, int end)
{
	int pos;

	if (node < 0)
		return false;
	pos = scene_pos(s, node);
	return pos >= first && pos < end;
}

/* The set op of 'out' for node 'id', appended on first use ('*at' its index). */
static edit_op *slot_set(edit_batch *out, int *at, const char *id)
{
	edit_op *set;

	if (*at >= 0)
		return &out->ops[*at];
	if (!(set = edit_batch_add(out, EDIT_SET, id)))
		return NULL;
	*at = out->n_ops - 1;
	return set;
}

/* The slots' sets: the attachment each keyed slot shows at 'time' and,
 * with a draw-order timeline, every slot's z. */
static int slot_sets(const scene *s, const skel_clips *sk, const clip *c, double time, int first,
		     int end, int *slot_op, edit_batch *out)
{
	char layer[SCENE_LAYER_MAX + 1];

	for (int i = 0; i < c->n_slot_timelines; i++) {
		const clip_slot_timeline *tl = &c->slots[i];
		const clip_attachment_key *key;
		const char *group;
		edit_op *set;

		if (tl->slot < 0 || tl->slot >= sk->n_slots ||
		    !in_range(s, scene_find(s, sk->slots[tl->slot].id), first, end))
			continue;
		key = clip_slot_at(c, tl, time);
		group = key ? key->name : sk->slots[tl->slot].setup_group;
		if (!(set = slot_set(out, &slot_op[tl->slot], sk->slots[tl->slot].id)))
			return RIGD_E_NOMEM;
		if (group)
			snprintf(layer, sizeof(layer), "%s#%s", sk->file, group);
		free(set->layer);
		set->layer = NULL;
		set->fields |= EDIT_F_LAYER;
		if (group && !(set->layer = strdup(layer)))
			return RIGD_E_NOMEM;
	}
	if (c->n_order_keys > 0) {
		const int *order = clip_order_at(c, time);

		for (int i = 0; i < sk->n_slots; i++) {
			int slot = order ? order[i] : i;
			edit_op *set;

			if (slot < 0 || slot >= sk->n_slots ||
			    !in_range(s, scene_find(s, sk->slots[slot].id), first, end))
				continue;
			if (!(set = slot_set(out, &slot_op[slot], sk->slots[slot].id)))
				return RIGD_E_NOMEM;
			set->fields |= EDIT_F_Z;
			set->z_right = set->z_left = i;
		}
	}
	return 0;
}

int ed_resolve_clip(const scene *s, const edit_op *op, int k, edit_batch *out, edit_error *err)
{
	const skel_clips *sk;
	const clip *c;
	clip_bone_pose *poses = NULL;
	int *slot_op = NULL;
	int first = 0, end = scene_count(s), rc;
	double w = (op->fields & EDIT_F_WEIGHT) ? op->weight : 1, time;
	char q[80], qr[QUOTED_MAX];

	edit_batch_init(out);
	if (scene_dims(s) != 2)
		return bad_field(err, k, "clip", "clips play in a 2D scene; this scene is 3D");
	if (!isfinite(op->time_s))
		return bad_field(err, k, "time", "must be a finite number of seconds");
	if (!(w >= 0 && w <= 1))
		return bad_field(err, k, "weight", "must be a number in [0, 1]");
	if ((rc = find_skeleton(s, op, k, &sk, err)) != 0)
		return rc;
	if (!(c = clip_set_find(&sk->clips, op->name ? op->name : "")))
		return bad_field(err, k, "clip", "skeleton '%s' has no clip '%s'", sk->file,
				 printable(op->name, q, sizeof(q)));
	if (op->fields & EDIT_F_ROOT) {
		int node = scene_find(s, op->root);

		if (node < 0) {
			edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, "root", "root: unknown node '%s'",
				       ed_quoted(op->root, qr));
			return RIGD_E_UNKNOWN_NODE;
		}
		first = scene_pos(s, node);
		end = first + scene_subtree_size(s, node);
	}
	/* A non-looping apply, as both runtimes play a clip stopped at a
	 * time: before 0 and after the duration it holds the ends. */
	time = fmin(fmax(op->time_s, 0), c->duration);
	if ((sk->n_bones && !(poses = malloc(sizeof(*poses) * (size_t)sk->n_bones))) ||
	    (sk->n_slots && !(slot_op = malloc(sizeof(*slot_op) * (size_t)sk->n_slots))) ||
	    edit_batch_reserve(out, sk->n_bones + sk->n_slots) != 0) {
		rc = nomem(err, k);
		goto out;
	}
	for (int i = 0; i < sk->n_slots; i++)
		slot_op[i] = -1;
	if (sk->n_bones)
		clip_sample(c, time, 0, poses);
	for (int b = 0; b < sk->n_bones; b++) {
		int node;
		edit_op *set;

		/* A bone whose node was deleted (or lies outside the root) is
		 * skipped: the clip plays on what is left of the skeleton. */
		if (!poses[b].mask ||
		    !in_range(s, node = scene_find(s, sk->bones[b].id), first, end))
			continue;
		/* Room is reserved, so this fails only for an id too long,
		 * which a skeleton's ids never are. */
		if (!(set = edit_batch_add(out, EDIT_SET, sk->bones[b].id))) {
			rc = nomem(err, k);
			goto out;
		}
		bone_set(s, sk, b, node, &poses[b], w, set);
	}
	if (slot_sets(s, sk, c, time, first, end, slot_op, out) != 0) {
		rc = nomem(err, k);
		goto out;
	}
	/* A clip that would set nothing is a mistake (a wrong root, or every
	 * node it animates deleted) and would log an empty batch. */
	if (out->n_ops == 0)
		rc = (op->fields & EDIT_F_ROOT)
			     ? bad_field(err, k, "root", "clip '%s' animates no node under '%s'",
					 printable(op->name, q, sizeof(q)), ed_quoted(op->root, qr))
			     : bad_field(err, k, "clip", "clip '%s' animates no node of the scene",
					 printable(op->name, q, sizeof(q)));
out:
	free(poses);
	free(slot_op);
	if (rc)
		edit_batch_release(out);
	return rc;
}
