/*
 * dragonbones_clip.c: DragonBones 5.x animations in, clips out
 * (dragonbones_clip.h).
 *
 * Frames become keys as the runtime places them: a frame starts where the
 * previous one's duration ends (one frame later at least), the last frame
 * lasts to the end of the animation, frames past the end are dropped, and
 * in a looping animation (playTimes 0) the last frame tweens back to the
 * first over what is left of the duration. Rotations are unwound with the
 * clockwise turns at read time; easing amounts and curve samples are
 * quantised as the runtime stores them (docs/clips.md).
 *
 * Reads untrusted JSON: every refusal names the JSON path of the offending
 * member and, in its message, the clip, bone or slot, timeline and frame.
 * Never changes a scene.
 */
#include "dragonbones_clip.h"
#include "proto_internal.h"

#include "core/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_ 320                /* bytes of a JSON path built here */
#define NO_TWEEN -2.0                /* the runtime's "no tweenEasing" */
#define MAX_FRAMES 100000            /* an animation's duration, frames (over an hour at 24 fps) */
#define MAX_SAMPLES (1 << 20)        /* curve samples of one clip */
#define MAX_TURNS 1000               /* |clockwise| */

typedef struct reader {
	const clip_names *names;
	clip *c;
	char clip_name[80];              /* safe to quote */
	double frame_rate;
	int frames;                      /* the animation's duration in frames (>= 1) */
	bool loop;                       /* playTimes 0 */
	edit_error *err;
} reader;

/* Where a timeline's frames fall: frame k starts at start[k] (frames) and
 * lasts count[k]; 'used' frames of the array are placed. */
typedef struct layout {
	int *start, *count;
	int used;
} layout;

/* snprintf for the paths and messages built here: a long name cuts them
 * short, which edit_error's fixed fields would do anyway. */
static void put(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void put(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, cap, fmt, ap);
	va_end(ap);
}

static int refuse(reader *r, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(reader *r, const char *field, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	int code = RIGD_E_BAD_SKELETON;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	edit_error_set(r->err, code, -1, field, "animation '%s': %s", r->clip_name, what);
	return code;
}

static int nomem(reader *r)
{
	edit_error_set(r->err, RIGD_E_NOMEM, -1, "", "animation '%s': out of memory", r->clip_name);
	return RIGD_E_NOMEM;
}

#define DEG_RAD (M_PI / 180.0)

/* An angle in radians wrapped as the runtime wraps it: into [-pi, pi) but
 * pi for an odd multiple of pi. */
static double normalize_rad(double rad)
{
	rad = fmod(rad + M_PI, M_PI * 2.0);
	rad += rad > 0.0 ? -M_PI : M_PI;
	return rad;
}

/* A frame value as the runtime keeps it: in a 32-bit float. */
static double stored(double v)
{
	return (double)(float)v;
}

/* JavaScript's Math.round: halves up. */
static double js_round(double x)
{
	return floor(x + 0.5);
}

static int get_number(reader *r, const cJSON *obj, const char *name, double dflt,
		      const char *path, const char *what, double *out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
	char field[PATH_MAX_];

	if (!item || cJSON_IsNull(item)) {
		*out = dflt;
		return 0;
	}
	put(field, sizeof(field), "%s.%s", path, name);
	if (!cJSON_IsNumber(item))
		return refuse(r, field, "%s: %s must be a number", what, name);
	if (!isfinite(item->valuedouble))
		return refuse(r, field, "%s: %s must be finite", what, name);
	*out = item->valuedouble;
	return 0;
}

static int get_whole(reader *r, const cJSON *obj, const char *name, double dflt,
		     const char *path, const char *what, int *out)
{
	char field[PATH_MAX_];
	double v;
	int rc = get_number(r, obj, name, dflt, path, what, &v);

	if (rc)
		return rc;
	if (v != floor(v) || v < 0.0 || v > MAX_FRAMES) {
		put(field, sizeof(field), "%s.%s", path, name);
		return refuse(r, field, "%s: %s %g is not a whole number of frames up to %d", what,
			      name, v, MAX_FRAMES);
	}
	*out = (int)v;
	return 0;
}

/* Places the frames of 'frames' (an array of frame objects). */
static int lay_out(reader *r, const cJSON *frames, const char *path, const char *where,
		   layout *lay)
{
	int n = cJSON_GetArraySize(frames), i, k = 0, start = 0, count = 0, rc;

	lay->used = 0;
	lay->start = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
	lay->count = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
	if (!lay->start || !lay->count)
		return nomem(r);
	if (n == 1) {
		lay->used = 1;
		return 0;
	}
	for (i = 0; i <= r->frames && k < n; i++) {
		const cJSON *f;
		char fpath[PATH_MAX_], what[200];

		if (start + count > i)
			continue;
		f = cJSON_GetArrayItem(frames, k);
		put(fpath, sizeof(fpath), "%s[%d]", path, k);
		put(what, sizeof(what), "%s frame %d", where, k);
		if (!cJSON_IsObject(f))
			return refuse(r, fpath, "%s must be an object", what);
		start = i;
		if (k == n - 1) {
			count = r->frames - start;
		} else if ((rc = get_whole(r, f, "duration", 1.0, fpath, what, &count))) {
			return rc;
		}
		lay->start[k] = start;
		lay->count[k] = count;
		k++;
	}
	lay->used = k;
	return 0;
}

static void layout_release(layout *lay)
{
	free(lay->start);
	free(lay->count);
}

/* x and y of the cubic from (x1, y1) over (x2, y2), (x3, y3) to (x4, y4). */
static void curve_point(const double p[8], double u, double *x, double *y)
{
	double l = 1.0 - u, a = l * l * l, b = 3.0 * u * l * l, c = 3.0 * l * u * u, d = u * u * u;

	*x = a * p[0] + b * p[2] + c * p[4] + d * p[6];
	*y = a * p[1] + b * p[3] + c * p[5] + d * p[7];
}

/*
 * A frame's "curve" (the easing's control points between (0, 0) and
 * (1, 1): c1, c2, then for each further piece its point and two controls)
 * sampled as the runtime samples it: 'count' values, the i-th the curve's
 * y where its x is (i + 1) / (count + 1), found by halving the parameter
 * interval down to 0.0001, then kept in units of 1/10000.
 */
static void sample_curve(const double *curve, int n, int count, double *out)
{
	int i, step = -2;

	for (i = 0; i < count; i++) {
		double t = (double)(i + 1) / (double)(count + 1);
		double p[8], lo = 0.0, hi = 1.0, x = 0.0, y = 0.0;
		bool inside;

		while ((step + 6 < n ? curve[step + 6] : 1.0) < t)
			step += 6;
		inside = step >= 0 && step + 6 < n;
		p[0] = inside ? curve[step] : 0.0;
		p[1] = inside ? curve[step + 1] : 0.0;
		p[2] = curve[step + 2];
		p[3] = curve[step + 3];
		p[4] = curve[step + 4];
		p[5] = curve[step + 5];
		p[6] = inside ? curve[step + 6] : 1.0;
		p[7] = inside ? curve[step + 7] : 1.0;
		while (hi - lo > 0.0001) {
			double u = (hi + lo) * 0.5;

			curve_point(p, u, &x, &y);
			if (t - x > 0.0)
				lo = u;
			else
				hi = u;
		}
		out[i] = js_round(y * 10000.0);
	}
}

/* The tween of frame 'f' lasting 'count' frames into key 'k'. */
static int read_tween(reader *r, const cJSON *f, int count, clip_key *k, const char *path,
		      const char *what)
{
	const cJSON *curve = cJSON_GetObjectItemCaseSensitive(f, "curve");
	const cJSON *ease = cJSON_GetObjectItemCaseSensitive(f, "tweenEasing");
	char field[PATH_MAX_];
	double te = NO_TWEEN;

	k->curve = CLIP_CURVE_STEPPED;
	if (count <= 0)
		return 0;
	if (curve) {
		double pts[64];
		const cJSON *num;
		int n = cJSON_GetArraySize(curve), m = 0, at;

		put(field, sizeof(field), "%s.curve", path);
		if (!cJSON_IsArray(curve) || n < 4 || (n - 4) % 6 != 0 || n > 64)
			return refuse(r, field, "%s: curve must be 4 + 6k numbers (up to 64)", what);
		cJSON_ArrayForEach(num, curve) {
			if (!cJSON_IsNumber(num) || !isfinite(num->valuedouble))
				return refuse(r, field, "%s: curve[%d] must be a finite number", what, m);
			pts[m++] = num->valuedouble;
		}
		if (r->c->n_samples + count + 1 > MAX_SAMPLES)
			return refuse(r, field, "%s: the clip's curves need more than %d samples", what,
				      MAX_SAMPLES);
		if ((at = clip_add_samples(r->c, count + 1)) < 0)
			return nomem(r);
		sample_curve(pts, n, count + 1, r->c->samples + at);
		k->curve = CLIP_CURVE_SAMPLED;
		k->samples_at = at;
		k->n_samples = count + 1;
		return 0;
	}
	if (ease && !cJSON_IsNull(ease)) {
		put(field, sizeof(field), "%s.tweenEasing", path);
		if (!cJSON_IsNumber(ease) || !isfinite(ease->valuedouble))
			return refuse(r, field, "%s: tweenEasing must be a finite number or null", what);
		te = ease->valuedouble;
	}
	if (te == NO_TWEEN) {
		k->curve = CLIP_CURVE_STEPPED;
	} else if (te == 0.0) {
		k->curve = CLIP_CURVE_LINEAR;
	} else if (te < 0.0) {
		k->curve = CLIP_CURVE_QUAD_IN;
		k->easing = js_round(-te * 100.0) * 0.01;
	} else if (te <= 1.0) {
		k->curve = CLIP_CURVE_QUAD_OUT;
		k->easing = js_round(te * 100.0) * 0.01;
	} else {
		k->curve = CLIP_CURVE_QUAD_IN_OUT;
		k->easing = js_round(te * 100.0 - 100.0) * 0.01;
	}
	return 0;
}

/* The values one frame of a bone timeline carries: v[0], v[1] and the
 * clockwise turns that follow it (rotate only). */
typedef struct frame_values {
	double v[2];
	int clockwise;
} frame_values;

enum bone_kind { K_TRANSLATE, K_ROTATE, K_SCALE, K_ALL_T, K_ALL_R, K_ALL_S };

static int frame_values_read(reader *r, const cJSON *f, int kind, const char *path,
			     const char *what, frame_values *fv)
{
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(f, "transform");
	char tpath[PATH_MAX_];
	double cw = 0.0, a, b;
	int rc;

	fv->clockwise = 0;
	switch (kind) {
	case K_TRANSLATE:
		if ((rc = get_number(r, f, "x", 0.0, path, what, &fv->v[0])) ||
		    (rc = get_number(r, f, "y", 0.0, path, what, &fv->v[1])))
			return rc;
		return 0;
	case K_SCALE:
		if ((rc = get_number(r, f, "x", 1.0, path, what, &fv->v[0])) ||
		    (rc = get_number(r, f, "y", 1.0, path, what, &fv->v[1])))
			return rc;
		return 0;
	case K_ROTATE:
		if ((rc = get_number(r, f, "rotate", 0.0, path, what, &fv->v[0])) ||
		    (rc = get_number(r, f, "skew", 0.0, path, what, &fv->v[1])) ||
		    (rc = get_number(r, f, "clockwise", 0.0, path, what, &cw)))
			return rc;
		if (cw != floor(cw) || fabs(cw) > MAX_TURNS) {
			put(tpath, sizeof(tpath), "%s.clockwise", path);
			return refuse(r, tpath, "%s: clockwise %g is not a whole number of turns up to %d",
				      what, cw, MAX_TURNS);
		}
		fv->clockwise = (int)cw;
		fv->v[0] *= DEG_RAD;
		fv->v[1] *= DEG_RAD;
		return 0;
	default:
		break;
	}
	/* The all-in-one frame of older files: a transform as a bone's. */
	put(tpath, sizeof(tpath), "%s.transform", path);
	if (tr && !cJSON_IsObject(tr))
		return refuse(r, tpath, "%s: transform must be an object", what);
	switch (kind) {
	case K_ALL_T:
		if ((rc = get_number(r, tr, "x", 0.0, tpath, what, &fv->v[0])) ||
		    (rc = get_number(r, tr, "y", 0.0, tpath, what, &fv->v[1])))
			return rc;
		return 0;
	case K_ALL_S:
		if ((rc = get_number(r, tr, "scX", 1.0, tpath, what, &fv->v[0])) ||
		    (rc = get_number(r, tr, "scY", 1.0, tpath, what, &fv->v[1])))
			return rc;
		return 0;
	default:
		break;
	}
	if ((rc = get_number(r, f, "tweenRotate", 0.0, path, what, &cw)))
		return rc;
	if (cw != floor(cw) || fabs(cw) > MAX_TURNS) {
		put(tpath, sizeof(tpath), "%s.tweenRotate", path);
		return refuse(r, tpath, "%s: tweenRotate %g is not a whole number of turns up to %d",
			      what, cw, MAX_TURNS);
	}
	fv->clockwise = (int)cw;
	fv->v[0] = fv->v[1] = 0.0;
	if (tr && (cJSON_GetObjectItemCaseSensitive(tr, "rotate") ||
		   cJSON_GetObjectItemCaseSensitive(tr, "skew"))) {
		if ((rc = get_number(r, tr, "rotate", 0.0, tpath, what, &a)) ||
		    (rc = get_number(r, tr, "skew", 0.0, tpath, what, &b)))
			return rc;
		fv->v[0] = normalize_rad(a * DEG_RAD);
		fv->v[1] = normalize_rad(b * DEG_RAD);
	} else if (tr && (cJSON_GetObjectItemCaseSensitive(tr, "skX") ||
			  cJSON_GetObjectItemCaseSensitive(tr, "skY"))) {
		if ((rc = get_number(r, tr, "skX", 0.0, tpath, what, &a)) ||
		    (rc = get_number(r, tr, "skY", 0.0, tpath, what, &b)))
			return rc;
		fv->v[0] = normalize_rad(b * DEG_RAD);
		fv->v[1] = normalize_rad(a * DEG_RAD) - fv->v[0];
	}
	return 0;
}

/* One bone timeline of 'kind' from 'frames' into a clip timeline. */
static int read_bone_frames(reader *r, const cJSON *frames, int bone, int kind, const char *where,
			    const char *path)
{
	static const int channel[] = { CLIP_CH_TRANSLATE, CLIP_CH_ROTATE, CLIP_CH_SCALE,
				       CLIP_CH_TRANSLATE, CLIP_CH_ROTATE, CLIP_CH_SCALE };
	bool rotate = kind == K_ROTATE || kind == K_ALL_R;
	layout lay = { 0 };
	clip_timeline *tl;
	double prev_rot = 0.0;
	int prev_cw = 0, k, n_keys, rc;

	if (!cJSON_IsArray(frames))
		return refuse(r, path, "%s must be an array of frames", where);
	if (cJSON_GetArraySize(frames) == 0)
		return 0;
	if ((rc = lay_out(r, frames, path, where, &lay)))
		goto out;
	n_keys = lay.used;
	/* A looping animation tweens the last frame back to the first. */
	if (r->loop && lay.used > 1 && lay.count[lay.used - 1] > 0)
		n_keys++;
	if (!(tl = clip_add_timeline(r->c, bone, channel[kind], n_keys))) {
		rc = nomem(r);
		goto out;
	}
	for (k = 0; k < lay.used; k++) {
		const cJSON *f = cJSON_GetArrayItem(frames, k);
		clip_key *ck = &tl->keys[k];
		char fpath[PATH_MAX_], what[200];
		frame_values fv;

		put(fpath, sizeof(fpath), "%s[%d]", path, k);
		put(what, sizeof(what), "%s frame %d", where, k);
		if (!cJSON_IsObject(f)) {
			rc = refuse(r, fpath, "%s must be an object", what);
			goto out;
		}
		if ((rc = frame_values_read(r, f, kind, fpath, what, &fv)))
			goto out;
		if (rotate) {
			double rot = fv.v[0];

			if (lay.start[k] != 0) {
				if (prev_cw == 0) {
					rot = prev_rot + normalize_rad(rot - prev_rot);
				} else {
					if (prev_cw > 0 ? rot >= prev_rot : rot <= prev_rot)
						prev_cw = prev_cw > 0 ? prev_cw - 1 : prev_cw + 1;
					rot = prev_rot + rot - prev_rot + M_PI * 2.0 * prev_cw;
				}
			}
			prev_cw = fv.clockwise;
			prev_rot = rot;
			fv.v[0] = rot;
		}
		ck->time = lay.start[k] * (1.0 / r->frame_rate);
		ck->v[0] = stored(fv.v[0]);
		ck->v[1] = stored(fv.v[1]);
		if ((rc = read_tween(r, f, lay.used > 1 ? lay.count[k] : 0, ck, fpath, what)))
			goto out;
		if (k == lay.used - 1 && n_keys == lay.used)
			ck->curve = CLIP_CURVE_STEPPED;
	}
	if (n_keys > lay.used) {
		clip_key *last = &tl->keys[lay.used - 1], *end = &tl->keys[lay.used];

		end->time = r->frames / r->frame_rate;
		end->curve = CLIP_CURVE_STEPPED;
		end->v[0] = tl->keys[0].v[0];
		end->v[1] = tl->keys[0].v[1];
		if (rotate)
			end->v[0] = last->v[0] + normalize_rad(tl->keys[0].v[0] - last->v[0]);
	}
	/* The runtime tweens rotations in radians; the clip keeps degrees. */
	if (rotate)
		for (k = 0; k < n_keys; k++) {
			tl->keys[k].v[0] /= DEG_RAD;
			tl->keys[k].v[1] /= DEG_RAD;
		}
out:
	layout_release(&lay);
	return rc;
}

static int read_bones(reader *r, const cJSON *bones, const char *apath)
{
	static const struct {
		const char *name;
		int kinds[3];
	} members[] = {
		{ "translateFrame", { K_TRANSLATE, -1, -1 } },
		{ "rotateFrame", { K_ROTATE, -1, -1 } },
		{ "scaleFrame", { K_SCALE, -1, -1 } },
		{ "frame", { K_ALL_T, K_ALL_R, K_ALL_S } },
	};
	const cJSON *bone, *m;
	int j = 0;

	cJSON_ArrayForEach(bone, bones) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(bone, "name");
		char bpath[PATH_MAX_], safe[80];
		int index;

		put(bpath, sizeof(bpath), "%s.bone[%d]", apath, j);
		if (!cJSON_IsObject(bone) || !cJSON_IsString(name))
			return refuse(r, bpath, "bone timeline %d must be an object with a name", j);
		proto_safe_key(name->valuestring, safe, sizeof(safe));
		index = clip_name_index(r->names->bones, r->names->n_bones, name->valuestring);
		if (index < 0)
			return refuse(r, bpath, "unknown bone '%s'", safe);
		cJSON_ArrayForEach(m, bone) {
			char mpath[PATH_MAX_], where[200], msafe[40];
			size_t i;
			int q, rc;

			if (strcmp(m->string, "name") == 0)
				continue;
			for (i = 0; i < sizeof(members) / sizeof(members[0]); i++)
				if (strcmp(m->string, members[i].name) == 0)
					break;
			proto_safe_key(m->string, msafe, sizeof(msafe));
			if (i == sizeof(members) / sizeof(members[0])) {
				put(where, sizeof(where), "bone '%s': %s", safe, msafe);
				if (clip_add_unsampled(r->c, where))
					return nomem(r);
				continue;
			}
			put(mpath, sizeof(mpath), "%s.%s", bpath, msafe);
			put(where, sizeof(where), "bone '%s': %s", safe, msafe);
			for (q = 0; q < 3 && members[i].kinds[q] >= 0; q++)
				if ((rc = read_bone_frames(r, m, index, members[i].kinds[q], where, mpath)))
					return rc;
		}
		j++;
	}
	return 0;
}

/* A slot's display timeline from 'frames' ("value" or "displayIndex"). */
static int read_display(reader *r, const cJSON *frames, int slot, const char *where,
			const char *path)
{
	layout lay = { 0 };
	clip_slot_timeline *tl;
	int k, rc;

	if (!cJSON_IsArray(frames))
		return refuse(r, path, "%s must be an array of frames", where);
	if (cJSON_GetArraySize(frames) == 0)
		return 0;
	if ((rc = lay_out(r, frames, path, where, &lay)))
		goto out;
	if (!(tl = clip_add_slot_timeline(r->c, slot, lay.used))) {
		rc = nomem(r);
		goto out;
	}
	for (k = 0; k < lay.used; k++) {
		const cJSON *f = cJSON_GetArrayItem(frames, k);
		char fpath[PATH_MAX_], what[200];
		double v;

		put(fpath, sizeof(fpath), "%s[%d]", path, k);
		put(what, sizeof(what), "%s frame %d", where, k);
		if (!cJSON_IsObject(f)) {
			rc = refuse(r, fpath, "%s must be an object", what);
			goto out;
		}
		rc = get_number(r, f, cJSON_GetObjectItemCaseSensitive(f, "value") ? "value" : "displayIndex",
				0.0, fpath, what, &v);
		if (rc)
			goto out;
		if (v != floor(v) || v < -1.0 || v > 1e6) {
			rc = refuse(r, fpath, "%s: display index %g is not a whole number >= -1", what, v);
			goto out;
		}
		tl->keys[k].time = lay.start[k] * (1.0 / r->frame_rate);
		tl->keys[k].index = (int)v;
	}
out:
	layout_release(&lay);
	return rc;
}

static int read_slots(reader *r, const cJSON *slots, const char *apath)
{
	const cJSON *slot, *m;
	int j = 0, rc;

	cJSON_ArrayForEach(slot, slots) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(slot, "name");
		char spath[PATH_MAX_], safe[80];
		int index;

		put(spath, sizeof(spath), "%s.slot[%d]", apath, j);
		if (!cJSON_IsObject(slot) || !cJSON_IsString(name))
			return refuse(r, spath, "slot timeline %d must be an object with a name", j);
		proto_safe_key(name->valuestring, safe, sizeof(safe));
		index = clip_name_index(r->names->slots, r->names->n_slots, name->valuestring);
		if (index < 0)
			return refuse(r, spath, "unknown slot '%s'", safe);
		cJSON_ArrayForEach(m, slot) {
			char mpath[PATH_MAX_], where[200], msafe[40];

			if (strcmp(m->string, "name") == 0)
				continue;
			proto_safe_key(m->string, msafe, sizeof(msafe));
			put(mpath, sizeof(mpath), "%s.%s", spath, msafe);
			put(where, sizeof(where), "slot '%s': %s", safe, msafe);
			if (strcmp(m->string, "displayFrame") == 0 ||
			    (strcmp(m->string, "frame") == 0 &&
			     !cJSON_GetObjectItemCaseSensitive(slot, "displayFrame"))) {
				if ((rc = read_display(r, m, index, where, mpath)))
					return rc;
			}
			if (strcmp(m->string, "displayFrame") != 0) {
				/* colorFrame, or the colours of an older "frame". */
				if (clip_add_unsampled(r->c, where))
					return nomem(r);
			}
		}
		j++;
	}
	return 0;
}

/* One zOrder frame's [slot, offset, ...] pairs as the full order: the
 * moved slots, in setup order, go their offset from their setup place;
 * the others keep their order and fill the places left from the end. */
static int order_from_pairs(reader *r, const cJSON *pairs, int *order, const char *path,
			    const char *what)
{
	int n = r->names->n_slots, m = cJSON_GetArraySize(pairs), original = 0, kept = 0, i;
	int *unchanged = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
	int rc = 0;

	if (!unchanged)
		return nomem(r);
	if (!cJSON_IsArray(pairs) || m % 2 != 0 || m / 2 > n) {
		rc = refuse(r, path, "%s: zOrder must be pairs of slot index and offset", what);
		goto out;
	}
	for (i = 0; i < n; i++)
		order[i] = -1;
	for (i = 0; i < m; i += 2) {
		const cJSON *s = cJSON_GetArrayItem(pairs, i), *o = cJSON_GetArrayItem(pairs, i + 1);
		int slot, to;

		if (!cJSON_IsNumber(s) || !cJSON_IsNumber(o) || s->valuedouble != floor(s->valuedouble) ||
		    o->valuedouble != floor(o->valuedouble) || fabs(o->valuedouble) > n ||
		    s->valuedouble < original || s->valuedouble >= n) {
			rc = refuse(r, path, "%s: zOrder pair %d must be a slot index (ascending, below %d) and a whole offset",
				    what, i / 2, n);
			goto out;
		}
		slot = (int)s->valuedouble;
		while (original != slot)
			unchanged[kept++] = original++;
		to = original + (int)o->valuedouble;
		if (to < 0 || to >= n || order[to] != -1) {
			rc = refuse(r, path, "%s: zOrder pair %d moves slot %d to place %d, %s", what,
				    i / 2, slot, to, to < 0 || to >= n ? "outside the order" : "already taken");
			goto out;
		}
		order[to] = original++;
	}
	while (original < n)
		unchanged[kept++] = original++;
	for (i = n - 1; i >= 0; i--)
		if (order[i] == -1)
			order[i] = unchanged[--kept];
out:
	free(unchanged);
	return rc;
}

static int read_z_order(reader *r, const cJSON *z, const char *apath)
{
	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(z, "frame");
	char path[PATH_MAX_];
	layout lay = { 0 };
	int k, rc;

	put(path, sizeof(path), "%s.zOrder.frame", apath);
	if (!cJSON_IsObject(z) || !cJSON_IsArray(frames))
		return refuse(r, path, "zOrder must hold an array of frames");
	if (cJSON_GetArraySize(frames) == 0)
		return 0;
	if ((rc = lay_out(r, frames, path, "zOrder", &lay)))
		goto out;
	if (clip_set_order_keys(r->c, lay.used)) {
		rc = nomem(r);
		goto out;
	}
	for (k = 0; k < lay.used; k++) {
		const cJSON *f = cJSON_GetArrayItem(frames, k);
		const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(f, "zOrder");
		char fpath[PATH_MAX_], what[80];
		int *order;

		put(fpath, sizeof(fpath), "%s[%d]", path, k);
		put(what, sizeof(what), "zOrder frame %d", k);
		r->c->order[k].time = lay.start[k] * (1.0 / r->frame_rate);
		if (!pairs || cJSON_GetArraySize(pairs) == 0)
			continue;
		if (!(order = clip_order_key_alloc(r->c, k))) {
			rc = nomem(r);
			goto out;
		}
		if ((rc = order_from_pairs(r, pairs, order, fpath, what)))
			goto out;
	}
out:
	layout_release(&lay);
	return rc;
}

static int read_animation(reader *r, const cJSON *anim, const char *apath)
{
	static const char *const playback[] = { "name", "duration", "playTimes", "fadeInTime", "scale" };
	const cJSON *m;
	double play_times;
	int rc;

	if ((rc = get_whole(r, anim, "duration", 1.0, apath, "duration", &r->frames)))
		return rc;
	if (r->frames < 1)
		r->frames = 1;
	if ((rc = get_number(r, anim, "playTimes", 1.0, apath, "playTimes", &play_times)))
		return rc;
	r->loop = play_times == 0.0;
	r->c->frame_rate = r->frame_rate;
	r->c->duration = r->frames / r->frame_rate;
	cJSON_ArrayForEach(m, anim) {
		char path[PATH_MAX_], line[80];
		size_t i;

		for (i = 0; i < sizeof(playback) / sizeof(playback[0]); i++)
			if (strcmp(m->string, playback[i]) == 0)
				break;
		if (i < sizeof(playback) / sizeof(playback[0]))
			continue;
		put(path, sizeof(path), "%s.%s", apath, m->string);
		if (strcmp(m->string, "bone") == 0) {
			if (!cJSON_IsArray(m))
				return refuse(r, path, "bone must be an array of timelines");
			rc = read_bones(r, m, apath);
		} else if (strcmp(m->string, "slot") == 0) {
			if (!cJSON_IsArray(m))
				return refuse(r, path, "slot must be an array of timelines");
			rc = read_slots(r, m, apath);
		} else if (strcmp(m->string, "zOrder") == 0) {
			rc = read_z_order(r, m, apath);
		} else {
			char safe[40];

			proto_safe_key(m->string, safe, sizeof(safe));
			if (cJSON_IsArray(m))
				put(line, sizeof(line), "%s (%d timelines or frames)", safe,
					 cJSON_GetArraySize(m));
			else
				put(line, sizeof(line), "%s", safe);
			rc = clip_add_unsampled(r->c, line) ? nomem(r) : 0;
		}
		if (rc)
			return rc;
	}
	return 0;
}

double dragonbones_frame_rate(const cJSON *doc, const cJSON *armature)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(armature, "frameRate");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(doc, "frameRate");

	if (cJSON_IsNumber(a) && isfinite(a->valuedouble) && a->valuedouble > 0.0)
		return a->valuedouble;
	if (cJSON_IsNumber(d) && isfinite(d->valuedouble) && d->valuedouble > 0.0)
		return d->valuedouble;
	return 24.0;
}

int dragonbones_clips_read(const cJSON *animations, int armature, double frame_rate,
			   const clip_names *names, clip_set *out, edit_error *err)
{
	clip_set set = { 0 };
	const cJSON *anim;
	reader r = { 0 };
	int rc = 0, i = 0;

	out->clips = NULL;
	out->n = 0;
	r.names = names;
	r.err = err;
	r.frame_rate = frame_rate;
	if (!animations || cJSON_IsNull(animations))
		return 0;
	if (!cJSON_IsArray(animations) || !(frame_rate > 0.0) || !isfinite(frame_rate)) {
		char field[PATH_MAX_];

		put(field, sizeof(field), "skeleton.armature[%d].animation", armature);
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, field,
			       "armature %d: animation must be an array (at a frame rate above 0)",
			       armature);
		return RIGD_E_BAD_SKELETON;
	}
	cJSON_ArrayForEach(anim, animations) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(anim, "name");
		char apath[PATH_MAX_];

		put(apath, sizeof(apath), "skeleton.armature[%d].animation[%d]", armature, i);
		put(r.clip_name, sizeof(r.clip_name), "#%d", i);
		if (!cJSON_IsObject(anim) || !cJSON_IsString(name) || !name->valuestring[0]) {
			rc = refuse(&r, apath, "an animation must be an object with a name");
			goto out;
		}
		proto_safe_key(name->valuestring, r.clip_name, sizeof(r.clip_name));
		if (!(r.c = clip_set_add(&set, name->valuestring, CLIP_FORMAT_DRAGONBONES,
					 names->n_bones, names->n_slots))) {
			rc = nomem(&r);
			goto out;
		}
		if ((rc = read_animation(&r, anim, apath)))
			goto out;
		i++;
	}
out:
	if (rc)
		clip_set_release(&set);
	else
		*out = set;
	return rc;
}
