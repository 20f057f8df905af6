/*
 * scene_ik.c: the IK constraints of a scene's skeletons, solved live
 * (scene_ik.h; the rules in docs/transforms.md, "IK constraints").
 *
 * A constraint names its bones and its target by node id (skel_clips.h).
 * The binding finds their handles once per change of the tree or of the
 * skeletons, and keeps a constraint only while its bones still form the
 * chain it names and its target lies outside the chain's subtree (a
 * target it moves itself would chase itself). Each solve reads the plain
 * channels of the bones (the runtime's pose before constraints), the
 * current world of the chain's parent and of the target, and leaves an
 * override per bone (scene_internal.h) that node_world then takes
 * wherever the bone's world is computed, until the next solve.
 *
 * The runtimes pose every frame from scratch: bones, then each constraint
 * in its order, each constrained subtree brought up again after its
 * constraint. Here the pass recomputes only the dirty subtrees, and this
 * file re-solves exactly the constraints whose inputs that pass changed,
 * in the same order, so the worlds are the ones a pose from scratch gives.
 */
#include "scene_ik.h"
#include "skel_clips.h"

#include "ik_solve.h"
#include "math.h"
#include "scene_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ik_bound {
	const skel_ik *k;
	int format;          /* enum clip_format */
	int bones[2];        /* handles, top first */
	int target;
	char top_id[SCENE_ID_MAX + 1]; /* to bring the top back when unbound */
};

void scene_ik_free(scene *s)
{
	scene_ik *k = s->ik;

	if (!k)
		return;
	free(k->c);
	free(k->of);
	free(k->over);
	free(k);
	s->ik = NULL;
}

int scene_ik_live(const scene *s)
{
	return s->ik ? s->ik->n : 0;
}

static bool in_subtree(const scene *s, int node, int top)
{
	int a = s->hot[top].pos;

	return s->hot[node].pos >= a && s->hot[node].pos < a + s->hot[top].size;
}

/* The handles of constraint 'k', checked; false when it cannot be solved
 * in the tree as it is. */
static bool bind_one(const scene *s, const skel_ik *k, int format, struct ik_bound *b)
{
	b->k = k;
	b->format = format;
	b->bones[1] = -1;
	for (int i = 0; i < k->n_bones; i++)
		if ((b->bones[i] = scene_find(s, k->bones[i])) < 0)
			return false;
	if ((b->target = scene_find(s, k->target)) < 0)
		return false;
	if (k->n_bones == 2 && s->parent[b->bones[1]] != b->bones[0])
		return false;
	/* Solved from the joint: a bone with a pivot has its joint elsewhere. */
	for (int i = 0; i < k->n_bones; i++) {
		const node_data *d = &s->nd[b->bones[i]];

		if (d->pivot.x != 0 || d->pivot.y != 0)
			return false;
	}
	snprintf(b->top_id, sizeof(b->top_id), "%s", k->bones[0]);
	return !in_subtree(s, b->target, b->bones[0]);
}

/* A new binding for the scene as it is, or NULL: none to bind, or out of
 * memory (the bones then take their plain worlds). */
static scene_ik *bind(const scene *s)
{
	const skel_set *ks = s->skels;
	int total = 0, n = 0;
	scene_ik *k;

	for (int i = 0; i < skel_set_count(ks); i++)
		total += skel_set_at(ks, i)->n_iks;
	if (total == 0 || s->dims != 2)
		return NULL;
	if (!(k = calloc(1, sizeof(*k))) || !(k->c = calloc((size_t)total, sizeof(*k->c))) ||
	    !(k->over = calloc((size_t)total * 2, sizeof(*k->over))) ||
	    !(k->of = malloc(sizeof(int) * (size_t)(s->nslots ? s->nslots : 1)))) {
		if (k) {
			free(k->c);
			free(k->over);
			free(k);
		}
		return NULL;
	}
	for (int i = 0; i < skel_set_count(ks); i++) {
		const skel_clips *sk = skel_set_at(ks, i);

		for (int j = 0; j < sk->n_iks; j++)
			if (bind_one(s, &sk->iks[j], sk->format, &k->c[n]))
				n++;
	}
	k->n = n;
	k->of_n = s->nslots;
	for (int i = 0; i < k->of_n; i++)
		k->of[i] = -1;
	k->order = s->order_version;
	k->skels = s->skel_clock;
	return k;
}

/* A node's channels as the solvers read them. */
static ik_channels channels_of(const node_data *d)
{
	return (ik_channels){ { d->t.x, d->t.y }, quat_to_angle2d_deg(d->r), { d->s.x, d->s.y },
			      { d->shear[0], d->shear[1] } };
}

/* The override for channels 'c' of node 'd' taken by mode 'mode'. */
static void override_from_channels(const node_data *d, const ik_channels *c, ik_override *o)
{
	mat34 l = mat34_from_mat4(mat4_compose_pivot2d(
		(vec3){ c->t[0], c->t[1], d->t.z }, quat_from_angle2d_deg(c->angle_deg),
		(vec3){ c->s[0], c->s[1], d->s.z }, d->pivot, c->shear_deg));

	memcpy(o->local, l.m, sizeof(o->local));
	o->c = (inherit_channels){ c->angle_deg, { c->shear_deg[0], c->shear_deg[1] },
				   { c->s[0], c->s[1] }, { c->t[0], c->t[1] },
				   { d->pivot.x, d->pivot.y }, false };
	o->mode = d->inherit;
}

/* The override that gives world 'w' under 'parent' (NULL: a root) by the
 * plain product; false when the parent is singular. */
static bool override_from_world(const double *parent, const double *w, ik_override *o)
{
	mat4 inv;

	memset(o, 0, sizeof(*o));
	o->mode = INHERIT_NORMAL;
	if (!parent) {
		memcpy(o->local, w, sizeof(o->local));
		return true;
	}
	{
		mat34 p, ww, l;

		memcpy(p.m, parent, sizeof(p.m));
		memcpy(ww.m, w, sizeof(ww.m));
		if (mat4_invert_affine(mat4_from_mat34(p), &inv) != 0)
			return false;
		l = mat34_from_mat4(mat4_mul(inv, mat4_from_mat34(ww)));
		memcpy(o->local, l.m, sizeof(o->local));
	}
	return true;
}

static const double *parent_world(const scene *s, int node)
{
	int p = s->parent[node];

	return p >= 0 ? world_of(s, p) : NULL;
}

/* Solves constraint 'b' (index i) into its overrides; false when the
 * runtime leaves its bones as they are (their overrides are then
 * cleared, so they take their plain worlds). */
static bool solve(scene *s, int i, const struct ik_bound *b)
{
	scene_ik *k = s->ik;
	const skel_ik *c = b->k;
	const double *tw = world_of(s, b->target);
	double target[2] = { tw[3], tw[7] };
	int top = b->bones[0], end = b->bones[1];
	ik_override *o = &k->over[2 * i];
	bool ok = true;

	if (b->format == CLIP_FORMAT_SPINE && c->n_bones == 1) {
		ik_channels ch = channels_of(&s->nd[top]);

		ik_spine_one(parent_world(s, top), s->nd[top].inherit, c->length[0], target, &c->p,
			     &ch);
		override_from_channels(&s->nd[top], &ch, &o[0]);
	} else if (b->format == CLIP_FORMAT_SPINE) {
		ik_channels pc = channels_of(&s->nd[top]), cc = channels_of(&s->nd[end]);
		bool modes = s->nd[top].inherit != INHERIT_NORMAL || s->nd[end].inherit != INHERIT_NORMAL;

		ok = ik_spine_two(parent_world(s, top), modes, c->length[0], c->length[1], target,
				  &c->p, &pc, &cc);
		if (ok) {
			override_from_channels(&s->nd[top], &pc, &o[0]);
			override_from_channels(&s->nd[end], &cc, &o[1]);
		}
	} else {
		/* DragonBones solves on the worlds the plain hierarchy gives. */
		const double *g = parent_world(s, top);
		double wt[MAT_DOUBLES], we[MAT_DOUBLES];

		node_world_plain(s, top, g, wt);
		if (c->n_bones == 1) {
			ik_db_one(wt, target, c->p.mix);
			ok = override_from_world(g, wt, &o[0]);
		} else {
			node_world_plain(s, end, wt, we);
			ik_db_two(wt, we, g, c->length[1], target, c->p.mix, c->p.bend_positive);
			ok = override_from_world(g, wt, &o[0]) && override_from_world(wt, we, &o[1]);
		}
	}
	for (int j = 0; j < c->n_bones; j++)
		k->of[b->bones[j]] = ok ? 2 * i + j : -1;
	return ok;
}

/* Recomputes the subtree of 'top' (overrides taken); the count of its
 * matrices the pass had not recomputed. */
static long recompute_subtree(scene *s, int top, uint64_t stamp, bool full)
{
	int a = s->hot[top].pos, b = a + s->hot[top].size;
	long extra = 0;

	for (int i = a; i < b; i++) {
		int n = s->order[i];

		node_world(s, n, parent_world(s, n), world_of(s, n));
		if (!full) {
			extra += node_stamp(s, n) != stamp;
			node_state(s, n, false, stamp);
		}
	}
	return extra;
}

static bool touched(const scene *s, const struct ik_bound *b, uint64_t stamp)
{
	if (node_stamp(s, b->target) == stamp || node_stamp(s, b->bones[0]) == stamp)
		return true;
	return b->bones[1] >= 0 && node_stamp(s, b->bones[1]) == stamp;
}

long scene_ik_update(scene *s, uint64_t stamp, bool full, long recomputed, scene_range_fn fn,
		     void *ctx)
{
	scene_ik *old = NULL;
	bool rebound = false;
	long extra = 0;

	if (!s->skels && !s->ik)
		return 0;
	if (s->ik && s->ik->order == s->order_version && s->ik->skels == s->skel_clock &&
	    recomputed == 0)
		return 0; /* nothing moved: every solve stands */
	if (!s->ik || s->ik->order != s->order_version || s->ik->skels != s->skel_clock) {
		old = s->ik;
		s->ik = bind(s);
		rebound = true;
	}
	for (int i = 0; s->ik && i < s->ik->n; i++) {
		const struct ik_bound *b = &s->ik->c[i];

		if (!full && !rebound && !touched(s, b, stamp))
			continue;
		solve(s, i, b);
		extra += recompute_subtree(s, b->bones[0], stamp, full);
		if (fn)
			fn(ctx, s->hot[b->bones[0]].pos, s->hot[b->bones[0]].pos + s->hot[b->bones[0]].size);
	}
	/* A constraint no longer bound leaves its bones' solved worlds behind:
	 * their subtrees are brought back to what the tree gives now. */
	for (int i = 0; old && i < old->n; i++) {
		int top = scene_find(s, old->c[i].top_id);
		bool again = top >= 0;

		for (int j = 0; again && s->ik && j < s->ik->n; j++)
			again = s->ik->c[j].bones[0] != top;
		if (!again)
			continue;
		extra += recompute_subtree(s, top, stamp, full);
		if (fn)
			fn(ctx, s->hot[top].pos, s->hot[top].pos + s->hot[top].size);
	}
	if (old) {
		scene_ik *keep = s->ik;

		s->ik = old;
		scene_ik_free(s);
		s->ik = keep;
	}
	return extra;
}
