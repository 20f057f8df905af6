/*
 * spine_clip.c: Spine 4.x animations in, clips out (spine_clip.h).
 *
 * Reads untrusted JSON: every refusal names the JSON path of the offending
 * member and, in its message, the clip, bone or slot, timeline and key.
 * Never changes a scene.
 */
#include "spine_clip.h"
#include "proto_internal.h"

#include "core/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_ 320                /* bytes of a JSON path built here */

typedef struct reader {
	const clip_names *names;
	clip *c;
	char clip_name[80];              /* safe to quote */
	edit_error *err;
} reader;

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

/* The largest "time" anywhere under 'node' (Spine's duration is the last
 * key's time over every timeline, sampled or not). */
static void max_time(const cJSON *node, double *t)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, node) {
		if (item->string && strcmp(item->string, "time") == 0 && cJSON_IsNumber(item) &&
		    isfinite(item->valuedouble) && item->valuedouble > *t)
			*t = item->valuedouble;
		if (cJSON_IsObject(item) || cJSON_IsArray(item))
			max_time(item, t);
	}
}

/* Member 'name' of key 'key': absent gives 'dflt'; else a finite number. */
static int key_number(reader *r, const cJSON *key, const char *name, double dflt, const char *path,
		      const char *what, double *out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(key, name);
	char field[PATH_MAX_];

	if (!item) {
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

/* The key's time: a finite number after the previous key's ('prev', or
 * -inf for the first key). */
static int key_time(reader *r, const cJSON *key, double prev, const char *path, const char *what,
		    double *out)
{
	char field[PATH_MAX_];
	int rc = key_number(r, key, "time", 0.0, path, what, out);

	if (rc)
		return rc;
	if (*out < 0.0) {
		put(field, sizeof(field), "%s.time", path);
		return refuse(r, field, "%s: time %g is negative", what, *out);
	}
	if (*out <= prev) {
		put(field, sizeof(field), "%s.time", path);
		return refuse(r, field, "%s: time %g does not come after the previous key's %g", what,
			      *out, prev);
	}
	return 0;
}

/* The timeline's keys as an array (an empty one is no timeline, as in
 * Spine), or a refusal. */
static int key_array(reader *r, const cJSON *keys, const char *path, const char *what)
{
	if (!cJSON_IsArray(keys))
		return refuse(r, path, "%s must be an array of keys", what);
	return 0;
}

/* A bone timeline of 'n_values' values named members[] (defaults 'dflt'). */
static int read_bone_timeline(reader *r, const cJSON *keys, int bone, int channel, int n_values,
			      const char *const members[2], double dflt, const char *where,
			      const char *path)
{
	clip_timeline *tl;
	const cJSON *key;
	double prev = -INFINITY;
	int k = 0, n, rc;

	if ((rc = key_array(r, keys, path, where)))
		return rc;
	n = cJSON_GetArraySize(keys);
	if (n == 0)
		return 0;
	if (!(tl = clip_add_timeline(r->c, bone, channel, n)))
		return nomem(r);
	cJSON_ArrayForEach(key, keys) {
		clip_key *ck = &tl->keys[k];
		const cJSON *curve;
		char kpath[PATH_MAX_], what[200], field[PATH_MAX_];
		int j;

		put(kpath, sizeof(kpath), "%s[%d]", path, k);
		put(what, sizeof(what), "%s key %d", where, k);
		if (!cJSON_IsObject(key))
			return refuse(r, kpath, "%s must be an object", what);
		if ((rc = key_time(r, key, prev, kpath, what, &ck->time)))
			return rc;
		prev = ck->time;
		for (j = 0; j < n_values; j++)
			if ((rc = key_number(r, key, members[j], dflt, kpath, what, &ck->v[j])))
				return rc;
		ck->curve = CLIP_CURVE_LINEAR;
		curve = cJSON_GetObjectItemCaseSensitive(key, "curve");
		put(field, sizeof(field), "%s.curve", kpath);
		if (!curve) {
			/* linear */
		} else if (cJSON_IsString(curve) && strcmp(curve->valuestring, "stepped") == 0) {
			ck->curve = CLIP_CURVE_STEPPED;
		} else if (cJSON_IsArray(curve) && cJSON_GetArraySize(curve) == 4 * n_values) {
			const cJSON *num;
			int m = 0;

			cJSON_ArrayForEach(num, curve) {
				if (!cJSON_IsNumber(num) || !isfinite(num->valuedouble))
					return refuse(r, field, "%s: curve[%d] must be a finite number",
						      what, m);
				ck->bezier[m / 4][m % 4] = num->valuedouble;
				m++;
			}
			ck->curve = CLIP_CURVE_BEZIER;
		} else {
			return refuse(r, field, "%s: curve must be \"stepped\" or %d numbers (cx1, cy1, cx2, cy2 per value)",
				      what, 4 * n_values);
		}
		k++;
	}
	return 0;
}

static int read_bones(reader *r, const cJSON *bones, const char *apath)
{
	static const char *const one[2] = { "value", NULL };
	static const char *const two[2] = { "x", "y" };
	static const struct {
		const char *name;
		int channel, n_values;
		double dflt;
	} kinds[] = {
		{ "rotate", CLIP_CH_ROTATE, 1, 0.0 },
		{ "translate", CLIP_CH_TRANSLATE, 2, 0.0 },
		{ "translatex", CLIP_CH_TRANSLATE_X, 1, 0.0 },
		{ "translatey", CLIP_CH_TRANSLATE_Y, 1, 0.0 },
		{ "scale", CLIP_CH_SCALE, 2, 1.0 },
		{ "scalex", CLIP_CH_SCALE_X, 1, 1.0 },
		{ "scaley", CLIP_CH_SCALE_Y, 1, 1.0 },
		{ "shear", CLIP_CH_SHEAR, 2, 0.0 },
		{ "shearx", CLIP_CH_SHEAR_X, 1, 0.0 },
		{ "sheary", CLIP_CH_SHEAR_Y, 1, 0.0 },
	};
	const cJSON *bone, *tl;
	char path[PATH_MAX_];

	put(path, sizeof(path), "%s.bones", apath);
	if (!cJSON_IsObject(bones))
		return refuse(r, path, "bones must be an object");
	cJSON_ArrayForEach(bone, bones) {
		char safe[80], bpath[PATH_MAX_];
		int index = clip_name_index(r->names->bones, r->names->n_bones, bone->string);

		proto_safe_key(bone->string, safe, sizeof(safe));
		put(bpath, sizeof(bpath), "%s.%s", path, safe);
		if (index < 0)
			return refuse(r, bpath, "unknown bone '%s'", safe);
		if (!cJSON_IsObject(bone))
			return refuse(r, bpath, "bone '%s' must be an object of timelines", safe);
		cJSON_ArrayForEach(tl, bone) {
			char tpath[PATH_MAX_], where[160], tsafe[40];
			size_t i;
			int rc;

			proto_safe_key(tl->string, tsafe, sizeof(tsafe));
			put(tpath, sizeof(tpath), "%s.%s", bpath, tsafe);
			put(where, sizeof(where), "bone '%s': %s", safe, tsafe);
			if (strcmp(tl->string, "inherit") == 0) {
				char line[160];

				put(line, sizeof(line), "bone '%s': inherit", safe);
				if (clip_add_unsampled(r->c, line))
					return nomem(r);
				continue;
			}
			for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				if (strcmp(tl->string, kinds[i].name) == 0)
					break;
			if (i == sizeof(kinds) / sizeof(kinds[0]))
				return refuse(r, tpath, "bone '%s': unknown timeline '%s'", safe, tsafe);
			rc = read_bone_timeline(r, tl, index, kinds[i].channel, kinds[i].n_values,
						kinds[i].n_values == 1 ? one : two, kinds[i].dflt, where,
						tpath);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int read_attachments(reader *r, const cJSON *keys, int slot, const char *where,
			    const char *path)
{
	clip_slot_timeline *tl;
	const cJSON *key;
	double prev = -INFINITY;
	int k = 0, n, rc;

	if ((rc = key_array(r, keys, path, where)))
		return rc;
	if ((n = cJSON_GetArraySize(keys)) == 0)
		return 0;
	if (!(tl = clip_add_slot_timeline(r->c, slot, n)))
		return nomem(r);
	cJSON_ArrayForEach(key, keys) {
		const cJSON *name;
		char kpath[PATH_MAX_], what[200], field[PATH_MAX_];

		put(kpath, sizeof(kpath), "%s[%d]", path, k);
		put(what, sizeof(what), "%s key %d", where, k);
		if (!cJSON_IsObject(key))
			return refuse(r, kpath, "%s must be an object", what);
		if ((rc = key_time(r, key, prev, kpath, what, &tl->keys[k].time)))
			return rc;
		prev = tl->keys[k].time;
		name = cJSON_GetObjectItemCaseSensitive(key, "name");
		if (name && !cJSON_IsNull(name)) {
			put(field, sizeof(field), "%s.name", kpath);
			if (!cJSON_IsString(name))
				return refuse(r, field, "%s: name must be a string or null", what);
			if (clip_attachment_key_set(&tl->keys[k], name->valuestring))
				return nomem(r);
		}
		k++;
	}
	return 0;
}

static int read_slots(reader *r, const cJSON *slots, const char *apath)
{
	static const char *const colours[] = { "rgba", "rgb", "alpha", "rgba2", "rgb2" };
	const cJSON *slot, *tl;
	char path[PATH_MAX_];

	put(path, sizeof(path), "%s.slots", apath);
	if (!cJSON_IsObject(slots))
		return refuse(r, path, "slots must be an object");
	cJSON_ArrayForEach(slot, slots) {
		char safe[80], spath[PATH_MAX_];
		int index = clip_name_index(r->names->slots, r->names->n_slots, slot->string);

		proto_safe_key(slot->string, safe, sizeof(safe));
		put(spath, sizeof(spath), "%s.%s", path, safe);
		if (index < 0)
			return refuse(r, spath, "unknown slot '%s'", safe);
		if (!cJSON_IsObject(slot))
			return refuse(r, spath, "slot '%s' must be an object of timelines", safe);
		cJSON_ArrayForEach(tl, slot) {
			char tpath[PATH_MAX_], where[160], tsafe[40];
			size_t i;
			int rc;

			proto_safe_key(tl->string, tsafe, sizeof(tsafe));
			put(tpath, sizeof(tpath), "%s.%s", spath, tsafe);
			put(where, sizeof(where), "slot '%s': %s", safe, tsafe);
			if (strcmp(tl->string, "attachment") == 0) {
				if ((rc = read_attachments(r, tl, index, where, tpath)))
					return rc;
				continue;
			}
			for (i = 0; i < sizeof(colours) / sizeof(colours[0]); i++)
				if (strcmp(tl->string, colours[i]) == 0)
					break;
			if (i == sizeof(colours) / sizeof(colours[0]))
				return refuse(r, tpath, "slot '%s': unknown timeline '%s'", safe, tsafe);
			if (clip_add_unsampled(r->c, where))
				return nomem(r);
		}
	}
	return 0;
}

/*
 * One draw-order key's offsets as the full order. Spine lists the slots
 * that move, in setup order, each with how many places it moves; the
 * others keep their relative order and fill the places left, from the
 * end backwards.
 */
static int order_from_offsets(reader *r, const cJSON *offsets, int *order, const char *path,
			      const char *what)
{
	int n = r->names->n_slots, original = 0, unchanged_n = 0, i, k = 0;
	int *unchanged = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
	const cJSON *o;
	int rc = 0;

	if (!unchanged)
		return nomem(r);
	for (i = 0; i < n; i++)
		order[i] = -1;
	cJSON_ArrayForEach(o, offsets) {
		const cJSON *slot = cJSON_GetObjectItemCaseSensitive(o, "slot");
		const cJSON *offset = cJSON_GetObjectItemCaseSensitive(o, "offset");
		char opath[PATH_MAX_];
		int index, to;

		put(opath, sizeof(opath), "%s.offsets[%d]", path, k);
		if (!cJSON_IsObject(o) || !cJSON_IsString(slot)) {
			rc = refuse(r, opath, "%s: offset %d must name a slot", what, k);
			goto out;
		}
		index = clip_name_index(r->names->slots, n, slot->valuestring);
		if (index < 0) {
			char safe[80];

			rc = refuse(r, opath, "%s: unknown slot '%s'", what,
				    proto_safe_key(slot->valuestring, safe, sizeof(safe)));
			goto out;
		}
		if (index < original) {
			rc = refuse(r, opath, "%s: offset %d's slot comes before the previous one's in setup order",
				    what, k);
			goto out;
		}
		if (offset && (!cJSON_IsNumber(offset) || offset->valuedouble != floor(offset->valuedouble) ||
			       fabs(offset->valuedouble) > n)) {
			rc = refuse(r, opath, "%s: offset %d must be a whole number of places", what, k);
			goto out;
		}
		while (original != index)
			unchanged[unchanged_n++] = original++;
		to = original + (offset ? (int)offset->valuedouble : 0);
		if (to < 0 || to >= n || order[to] != -1) {
			rc = refuse(r, opath, "%s: offset %d moves its slot to place %d, %s", what, k, to,
				    to < 0 || to >= n ? "outside the order" : "already taken");
			goto out;
		}
		order[to] = original++;
		k++;
	}
	while (original < n)
		unchanged[unchanged_n++] = original++;
	for (i = n - 1; i >= 0; i--)
		if (order[i] == -1)
			order[i] = unchanged[--unchanged_n];
out:
	free(unchanged);
	return rc;
}

static int read_draw_order(reader *r, const cJSON *keys, const char *path)
{
	const cJSON *key;
	double prev = -INFINITY;
	int k = 0, n, rc;

	if ((rc = key_array(r, keys, path, "drawOrder")))
		return rc;
	if ((n = cJSON_GetArraySize(keys)) == 0)
		return 0;
	if (clip_set_order_keys(r->c, n))
		return nomem(r);
	cJSON_ArrayForEach(key, keys) {
		const cJSON *offsets;
		char kpath[PATH_MAX_], what[80];
		int *order;

		put(kpath, sizeof(kpath), "%s[%d]", path, k);
		put(what, sizeof(what), "drawOrder key %d", k);
		if (!cJSON_IsObject(key))
			return refuse(r, kpath, "%s must be an object", what);
		if ((rc = key_time(r, key, prev, kpath, what, &r->c->order[k].time)))
			return rc;
		prev = r->c->order[k].time;
		offsets = cJSON_GetObjectItemCaseSensitive(key, "offsets");
		if (offsets && !cJSON_IsNull(offsets)) {
			if (!cJSON_IsArray(offsets))
				return refuse(r, kpath, "%s: offsets must be an array", what);
			if (!(order = clip_order_key_alloc(r->c, k)))
				return nomem(r);
			if ((rc = order_from_offsets(r, offsets, order, kpath, what)))
				return rc;
		}
		k++;
	}
	return 0;
}

/* A member of an animation that is kept, not sampled: one line per named
 * constraint or attachment skin, else one for the member. */
static int keep_unsampled(reader *r, const cJSON *member)
{
	static const char *const named[] = { "ik", "transform", "path", "physics" };
	char safe[40], line[160];
	size_t i;

	proto_safe_key(member->string, safe, sizeof(safe));
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (strcmp(member->string, named[i]) == 0 && cJSON_IsObject(member)) {
			const cJSON *c;

			cJSON_ArrayForEach(c, member) {
				char csafe[80];

				put(line, sizeof(line), "%s '%s'", safe,
					 proto_safe_key(c->string, csafe, sizeof(csafe)));
				if (clip_add_unsampled(r->c, line))
					return nomem(r);
			}
			return 0;
		}
	}
	if (cJSON_IsArray(member))
		put(line, sizeof(line), "%s (%d keys)", safe, cJSON_GetArraySize(member));
	else
		put(line, sizeof(line), "%s", safe);
	return clip_add_unsampled(r->c, line) ? nomem(r) : 0;
}

static int read_animation(reader *r, const cJSON *anim)
{
	const cJSON *member;
	char apath[PATH_MAX_];
	double duration = 0.0;
	int rc;

	put(apath, sizeof(apath), "skeleton.animations.%s", r->clip_name);
	if (!cJSON_IsObject(anim))
		return refuse(r, apath, "an animation must be an object of timelines");
	cJSON_ArrayForEach(member, anim) {
		char path[PATH_MAX_];

		if (strcmp(member->string, "bones") == 0) {
			rc = read_bones(r, member, apath);
		} else if (strcmp(member->string, "slots") == 0) {
			rc = read_slots(r, member, apath);
		} else if (strcmp(member->string, "drawOrder") == 0 ||
			   strcmp(member->string, "draworder") == 0) {
			put(path, sizeof(path), "%s.%s", apath, member->string);
			rc = read_draw_order(r, member, path);
		} else {
			rc = keep_unsampled(r, member);
		}
		if (rc)
			return rc;
	}
	max_time(anim, &duration);
	r->c->duration = duration;
	return 0;
}

int spine_clips_read(const cJSON *animations, const clip_names *names, clip_set *out,
		     edit_error *err)
{
	clip_set set = { 0 };
	const cJSON *anim;
	reader r = { 0 };
	int rc = 0;

	out->clips = NULL;
	out->n = 0;
	r.names = names;
	r.err = err;
	if (!animations || cJSON_IsNull(animations))
		return 0;
	if (!cJSON_IsObject(animations)) {
		edit_error_set(err, RIGD_E_BAD_SKELETON, -1, "skeleton.animations",
			       "animations must be an object of named animations");
		return RIGD_E_BAD_SKELETON;
	}
	cJSON_ArrayForEach(anim, animations) {
		proto_safe_key(anim->string, r.clip_name, sizeof(r.clip_name));
		if (!(r.c = clip_set_add(&set, anim->string, CLIP_FORMAT_SPINE, names->n_bones,
					 names->n_slots))) {
			rc = nomem(&r);
			goto out;
		}
		/* Spine's runtimes keep key times, values and curve points in
		 * 32-bit floats; the clip samples them so. */
		r.c->float32 = true;
		if ((rc = read_animation(&r, anim)))
			goto out;
	}
out:
	if (rc)
		clip_set_release(&set);
	else
		*out = set;
	return rc;
}
