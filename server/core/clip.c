/*
 * clip.c: the clip data model and its sampler (clip.h, docs/clips.md).
 *
 * The arithmetic follows the formats' runtimes step by step where they
 * approximate (Spine's ten-piece Bezier, DragonBones' quantised easings and
 * sampled curves), so that a sampled number equals the runtime's to
 * rounding. Knows no JSON and no scene.
 */
#include "clip.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- building --- */

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

static void clip_release(clip *c)
{
	int i, k;

	free(c->name);
	for (i = 0; i < c->n_bone_timelines; i++)
		free(c->bones[i].keys);
	free(c->bones);
	for (i = 0; i < c->n_slot_timelines; i++) {
		for (k = 0; k < c->slots[i].n_keys; k++)
			free(c->slots[i].keys[k].name);
		free(c->slots[i].keys);
	}
	free(c->slots);
	for (i = 0; i < c->n_order_keys; i++)
		free(c->order[i].order);
	free(c->order);
	free(c->samples);
	for (i = 0; i < c->n_unsampled; i++)
		free(c->unsampled[i]);
	free(c->unsampled);
	memset(c, 0, sizeof(*c));
}

void clip_set_release(clip_set *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		clip_release(&s->clips[i]);
	free(s->clips);
	s->clips = NULL;
	s->n = 0;
}

clip *clip_set_add(clip_set *s, const char *name, int format, int n_bones, int n_slots)
{
	clip *grown, *c;
	char *copy = dup_str(name);

	if (!copy)
		return NULL;
	grown = realloc(s->clips, (size_t)(s->n + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return NULL;
	}
	s->clips = grown;
	c = &s->clips[s->n++];
	memset(c, 0, sizeof(*c));
	c->name = copy;
	c->format = format;
	c->n_bones = n_bones;
	c->n_slots = n_slots;
	return c;
}

clip_timeline *clip_add_timeline(clip *c, int bone, int channel, int n_keys)
{
	clip_timeline *grown, *tl;
	clip_key *keys = calloc((size_t)(n_keys > 0 ? n_keys : 1), sizeof(*keys));

	if (!keys)
		return NULL;
	grown = realloc(c->bones, (size_t)(c->n_bone_timelines + 1) * sizeof(*grown));
	if (!grown) {
		free(keys);
		return NULL;
	}
	c->bones = grown;
	tl = &c->bones[c->n_bone_timelines++];
	tl->bone = bone;
	tl->channel = channel;
	tl->keys = keys;
	tl->n_keys = n_keys;
	return tl;
}

clip_slot_timeline *clip_add_slot_timeline(clip *c, int slot, int n_keys)
{
	clip_slot_timeline *grown, *tl;
	clip_attachment_key *keys = calloc((size_t)(n_keys > 0 ? n_keys : 1), sizeof(*keys));
	int k;

	if (!keys)
		return NULL;
	grown = realloc(c->slots, (size_t)(c->n_slot_timelines + 1) * sizeof(*grown));
	if (!grown) {
		free(keys);
		return NULL;
	}
	for (k = 0; k < n_keys; k++)
		keys[k].index = -1;
	c->slots = grown;
	tl = &c->slots[c->n_slot_timelines++];
	tl->slot = slot;
	tl->keys = keys;
	tl->n_keys = n_keys;
	return tl;
}

int clip_attachment_key_set(clip_attachment_key *k, const char *name)
{
	char *copy = NULL;

	if (name && !(copy = dup_str(name)))
		return RIGD_E_NOMEM;
	free(k->name);
	k->name = copy;
	return 0;
}

int clip_set_order_keys(clip *c, int n_keys)
{
	clip_order_key *keys = calloc((size_t)(n_keys > 0 ? n_keys : 1), sizeof(*keys));

	if (!keys)
		return RIGD_E_NOMEM;
	free(c->order);
	c->order = keys;
	c->n_order_keys = n_keys;
	return 0;
}

int *clip_order_key_alloc(clip *c, int k)
{
	int *order = calloc((size_t)(c->n_slots > 0 ? c->n_slots : 1), sizeof(*order));

	if (!order)
		return NULL;
	free(c->order[k].order);
	c->order[k].order = order;
	return order;
}

int clip_add_samples(clip *c, int n)
{
	double *grown = realloc(c->samples, (size_t)(c->n_samples + n + 1) * sizeof(*grown));
	int first = c->n_samples;

	if (!grown)
		return -1;
	c->samples = grown;
	memset(c->samples + first, 0, (size_t)n * sizeof(*grown));
	c->n_samples += n;
	return first;
}

int clip_add_unsampled(clip *c, const char *line)
{
	char **grown;
	char *copy = dup_str(line);

	if (!copy)
		return RIGD_E_NOMEM;
	grown = realloc(c->unsampled, (size_t)(c->n_unsampled + 1) * sizeof(*grown));
	if (!grown) {
		free(copy);
		return RIGD_E_NOMEM;
	}
	c->unsampled = grown;
	c->unsampled[c->n_unsampled++] = copy;
	return 0;
}

int clip_list(const clip_set *s, clip_summary *out, int n)
{
	int i;

	for (i = 0; i < s->n && i < n; i++) {
		const clip *c = &s->clips[i];

		out[i].name = c->name;
		out[i].duration = c->duration;
		out[i].frame_rate = c->frame_rate;
		out[i].n_bone_timelines = c->n_bone_timelines;
		out[i].n_slot_timelines = c->n_slot_timelines;
		out[i].n_order_keys = c->n_order_keys;
		out[i].n_unsampled = c->n_unsampled;
	}
	return s->n;
}

const clip *clip_set_find(const clip_set *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->clips[i].name, name) == 0)
			return &s->clips[i];
	return NULL;
}

int clip_name_index(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], name) == 0)
			return i;
	return -1;
}

/* --- curves --- */

double clip_ease(const clip *c, const clip_key *k, double p)
{
	double eased = p;

	switch (k->curve) {
	case CLIP_CURVE_STEPPED:
		return 0.0;
	case CLIP_CURVE_QUAD_IN:
		eased = p * p;
		break;
	case CLIP_CURVE_QUAD_OUT:
		eased = 1.0 - (1.0 - p) * (1.0 - p);
		break;
	case CLIP_CURVE_QUAD_IN_OUT:
		eased = 0.5 * (1.0 - cos(p * M_PI));
		break;
	case CLIP_CURVE_SAMPLED: {
		/* The samples are the eased progress at p = (i + 1) / (n + 1),
		 * in units of 1/10000 as the runtime stores them; between them,
		 * and from (0, 0) and to (1, 1), straight lines. */
		const double *s = c->samples + k->samples_at;
		int pieces = k->n_samples + 1;
		int at;
		double from, to;

		if (p <= 0.0)
			return 0.0;
		if (p >= 1.0)
			return 1.0;
		at = (int)floor(p * pieces);
		from = at == 0 ? 0.0 : s[at - 1];
		to = at == pieces - 1 ? 10000.0 : s[at];
		return (from + (to - from) * (p * pieces - at)) * 0.0001;
	}
	default:
		return p;
	}
	/* A DragonBones easing of amount e moves the progress the fraction e
	 * of the way from linear to the quadratic curve. */
	return (eased - p) * k->easing + p;
}

/* The cubic through p0, p1, p2, p3 at parameter u. */
static double cubic(double p0, double p1, double p2, double p3, double u)
{
	double v = 1.0 - u;

	return v * v * v * p0 + 3.0 * v * v * u * p1 + 3.0 * v * u * u * p2 + u * u * u * p3;
}

/* A key's number as the runtime keeps it: in a 32-bit float when 'f32'. */
static double kept(double v, bool f32)
{
	return f32 ? (double)(float)v : v;
}

/* The runtime's scheme: the points of the curve at u = 0.1, ..., 0.9 by
 * forward differences of step h = 0.1 (third difference 6 a h^3, second
 * 6 a h^3 + 2 b h^2 at the start, first a h^3 + b h^2 + c h for
 * B(u) = a u^3 + b u^2 + c u + d; the runtime writes the 1/6 in the first
 * as 0.16666667), kept in 32-bit floats when 'f32' as the keys are, then
 * straight lines between those points and the two keys, looked up by
 * time: the first point at or past it closes the piece. */
static double bezier_runtime(double t1, double v1, const double ctrl[4], double t2, double v2,
			     double time, bool f32)
{
	double cx1 = ctrl[0], cy1 = ctrl[1], cx2 = ctrl[2], cy2 = ctrl[3];
	double px[9], py[9];
	double tmpx = (t1 - cx1 * 2.0 + cx2) * 0.03, tmpy = (v1 - cy1 * 2.0 + cy2) * 0.03;
	double dddx = ((cx1 - cx2) * 3.0 - t1 + t2) * 0.006;
	double dddy = ((cy1 - cy2) * 3.0 - v1 + v2) * 0.006;
	double ddx = tmpx * 2.0 + dddx, ddy = tmpy * 2.0 + dddy;
	double dx = (cx1 - t1) * 0.3 + tmpx + dddx * 0.16666667;
	double dy = (cy1 - v1) * 0.3 + tmpy + dddy * 0.16666667;
	double x = t1 + dx, y = v1 + dy;
	double x0, y0, x1, y1;
	int i;

	for (i = 0; i < 9; i++) {
		px[i] = kept(x, f32);
		py[i] = kept(y, f32);
		dx += ddx;
		dy += ddy;
		ddx += dddx;
		ddy += dddy;
		x += dx;
		y += dy;
	}
	if (px[0] > time) {
		x0 = kept(t1, f32), y0 = kept(v1, f32), x1 = px[0], y1 = py[0];
	} else {
		for (i = 1; i < 9 && px[i] < time; i++)
			;
		if (i < 9)
			x0 = px[i - 1], y0 = py[i - 1], x1 = px[i], y1 = py[i];
		else
			x0 = px[8], y0 = py[8], x1 = kept(t2, f32), y1 = kept(v2, f32);
	}
	if (x1 == x0)
		return y1;
	return y0 + (time - x0) / (x1 - x0) * (y1 - y0);
}

double clip_bezier(double t1, double v1, const double ctrl[4], double t2, double v2, double time,
		   bool exact)
{
	double lo = 0.0, hi = 1.0, u;
	int i;

	if (!exact)
		return bezier_runtime(t1, v1, ctrl, t2, v2, time, false);
	/* x(u) rises from t1 to t2 when the control times lie between them
	 * (Spine keeps them there): bisection finds u. */
	for (i = 0; i < 60; i++) {
		u = 0.5 * (lo + hi);
		if (cubic(t1, ctrl[0], ctrl[2], t2, u) < time)
			lo = u;
		else
			hi = u;
	}
	return cubic(v1, ctrl[1], ctrl[3], v2, 0.5 * (lo + hi));
}

/* --- sampling --- */

/* The last key at or before 'time' (keys sorted by time), or -1. */
static int key_before(const clip_key *keys, int n, double time, bool f32)
{
	int lo = 0, hi = n - 1, found = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (kept(keys[mid].time, f32) <= time) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

/* Value j of timeline 'tl' at 'time', or 'before' ahead of its first key. */
static double timeline_value(const clip *c, const clip_timeline *tl, int j, double time,
			     double before, unsigned flags)
{
	bool f32 = c->float32;
	int i = key_before(tl->keys, tl->n_keys, time, f32);
	const clip_key *k, *next;
	double p, t0, t1, v0, v1;

	if (i < 0)
		return before;
	k = &tl->keys[i];
	if (i == tl->n_keys - 1 || k->curve == CLIP_CURVE_STEPPED)
		return kept(k->v[j], f32);
	next = k + 1;
	if (k->curve == CLIP_CURVE_BEZIER) {
		if (flags & CLIP_SAMPLE_EXACT_BEZIER)
			return clip_bezier(k->time, k->v[j], k->bezier[j], next->time, next->v[j],
					   time, true);
		return bezier_runtime(k->time, k->v[j], k->bezier[j], next->time, next->v[j], time,
				      f32);
	}
	t0 = kept(k->time, f32), t1 = kept(next->time, f32);
	v0 = kept(k->v[j], f32), v1 = kept(next->v[j], f32);
	/* t1 > time >= t0, so the segment has a length. */
	p = (time - t0) / (t1 - t0);
	if (k->curve != CLIP_CURVE_LINEAR)
		p = clip_ease(c, k, p);
	return v0 + (v1 - v0) * p;
}

clip_channels clip_channels_identity(void)
{
	clip_channels ch = { 0 };

	ch.scale_x = ch.scale_y = 1.0;
	return ch;
}

void clip_sample(const clip *c, double time, unsigned flags, clip_bone_pose *out)
{
	int i;

	for (i = 0; i < c->n_bones; i++) {
		out[i].ch = clip_channels_identity();
		out[i].mask = 0;
	}
	for (i = 0; i < c->n_bone_timelines; i++) {
		const clip_timeline *tl = &c->bones[i];
		clip_bone_pose *p;

		if (tl->bone < 0 || tl->bone >= c->n_bones || tl->n_keys < 1)
			continue;
		p = &out[tl->bone];
		switch (tl->channel) {
		case CLIP_CH_ROTATE:
			p->ch.rotate_deg = timeline_value(c, tl, 0, time, 0.0, flags);
			p->mask |= CLIP_M_ROTATE;
			if (c->format == CLIP_FORMAT_DRAGONBONES) {
				p->ch.shear_x_deg = timeline_value(c, tl, 1, time, 0.0, flags);
				p->mask |= CLIP_M_SKEW;
			}
			break;
		case CLIP_CH_TRANSLATE:
			p->ch.x = timeline_value(c, tl, 0, time, 0.0, flags);
			p->ch.y = timeline_value(c, tl, 1, time, 0.0, flags);
			p->mask |= CLIP_M_X | CLIP_M_Y;
			break;
		case CLIP_CH_TRANSLATE_X:
			p->ch.x = timeline_value(c, tl, 0, time, 0.0, flags);
			p->mask |= CLIP_M_X;
			break;
		case CLIP_CH_TRANSLATE_Y:
			p->ch.y = timeline_value(c, tl, 0, time, 0.0, flags);
			p->mask |= CLIP_M_Y;
			break;
		case CLIP_CH_SCALE:
			p->ch.scale_x = timeline_value(c, tl, 0, time, 1.0, flags);
			p->ch.scale_y = timeline_value(c, tl, 1, time, 1.0, flags);
			p->mask |= CLIP_M_SCALE_X | CLIP_M_SCALE_Y;
			break;
		case CLIP_CH_SCALE_X:
			p->ch.scale_x = timeline_value(c, tl, 0, time, 1.0, flags);
			p->mask |= CLIP_M_SCALE_X;
			break;
		case CLIP_CH_SCALE_Y:
			p->ch.scale_y = timeline_value(c, tl, 0, time, 1.0, flags);
			p->mask |= CLIP_M_SCALE_Y;
			break;
		case CLIP_CH_SHEAR:
			p->ch.shear_x_deg = timeline_value(c, tl, 0, time, 0.0, flags);
			p->ch.shear_y_deg = timeline_value(c, tl, 1, time, 0.0, flags);
			p->mask |= CLIP_M_SHEAR_X | CLIP_M_SHEAR_Y;
			break;
		case CLIP_CH_SHEAR_X:
			p->ch.shear_x_deg = timeline_value(c, tl, 0, time, 0.0, flags);
			p->mask |= CLIP_M_SHEAR_X;
			break;
		case CLIP_CH_SHEAR_Y:
			p->ch.shear_y_deg = timeline_value(c, tl, 0, time, 0.0, flags);
			p->mask |= CLIP_M_SHEAR_Y;
			break;
		default:
			break;
		}
	}
}

const clip_attachment_key *clip_slot_at(const clip *c, const clip_slot_timeline *tl, double time)
{
	int lo = 0, hi = tl->n_keys - 1, found = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (kept(tl->keys[mid].time, c->float32) <= time) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found < 0 ? NULL : &tl->keys[found];
}

const int *clip_order_at(const clip *c, double time)
{
	int lo = 0, hi = c->n_order_keys - 1, found = -1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (kept(c->order[mid].time, c->float32) <= time) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found < 0 ? NULL : c->order[found].order;
}

/* --- applying --- */

void clip_apply(const clip_channels *setup, const clip_bone_pose *p, clip_channels *out)
{
	clip_channels r;

	r.rotate_deg = setup->rotate_deg + p->ch.rotate_deg;
	r.x = setup->x + p->ch.x;
	r.y = setup->y + p->ch.y;
	r.scale_x = setup->scale_x * p->ch.scale_x;
	r.scale_y = setup->scale_y * p->ch.scale_y;
	r.shear_x_deg = setup->shear_x_deg + p->ch.shear_x_deg;
	r.shear_y_deg = setup->shear_y_deg + p->ch.shear_y_deg;
	*out = r;
}

/* 'd' degrees wrapped to (-180, 180]. */
static double short_way(double d)
{
	d = fmod(d, 360.0);
	if (d > 180.0)
		d -= 360.0;
	else if (d <= -180.0)
		d += 360.0;
	return d;
}

void clip_blend(const clip_channels *current, const clip_channels *target, double w,
		clip_channels *out)
{
	clip_channels r;

	r.rotate_deg = current->rotate_deg + short_way(target->rotate_deg - current->rotate_deg) * w;
	r.x = current->x + (target->x - current->x) * w;
	r.y = current->y + (target->y - current->y) * w;
	r.scale_x = current->scale_x + (target->scale_x - current->scale_x) * w;
	r.scale_y = current->scale_y + (target->scale_y - current->scale_y) * w;
	r.shear_x_deg = current->shear_x_deg + (target->shear_x_deg - current->shear_x_deg) * w;
	r.shear_y_deg = current->shear_y_deg + (target->shear_y_deg - current->shear_y_deg) * w;
	*out = r;
}

void clip_spine_to_local(const clip_channels *abs, clip_local2d *out)
{
	out->t[0] = abs->x;
	out->t[1] = -abs->y;
	out->angle_deg = abs->rotate_deg;
	out->s[0] = abs->scale_x;
	out->s[1] = abs->scale_y;
	out->shear_deg[0] = abs->shear_x_deg;
	out->shear_deg[1] = abs->shear_y_deg;
}

void clip_dragonbones_to_local(const clip_channels *abs, clip_local2d *out)
{
	double sk_y = abs->rotate_deg, sk_x = abs->rotate_deg + abs->shear_x_deg;

	out->t[0] = abs->x;
	out->t[1] = abs->y;
	out->angle_deg = -sk_y;
	out->s[0] = abs->scale_x;
	out->s[1] = abs->scale_y;
	out->shear_deg[0] = 0.0;
	out->shear_deg[1] = sk_y - sk_x;
}

void clip_spine_local(const clip_channels *setup, const clip_bone_pose *p, clip_local2d *out)
{
	clip_channels abs;

	clip_apply(setup, p, &abs);
	clip_spine_to_local(&abs, out);
}

void clip_dragonbones_local(const clip_channels *setup, const clip_bone_pose *p, clip_local2d *out)
{
	clip_channels abs;

	clip_apply(setup, p, &abs);
	clip_dragonbones_to_local(&abs, out);
}
