/*
 * spine_kept.c: the sections of a Spine 4.2 skeleton that an import keeps
 * in the stored file without applying them live (spine_internal.h): IK,
 * transform, path and physics constraints, events, animations.
 *
 * Each is checked for its JSON type and for the bones and slots it names,
 * and named in the report. A constraint that is active in the setup pose
 * (not skin-required) with a mix other than 0 moves bones when the Spine
 * runtime poses the skeleton, which the nodes here do not: the report's
 * not-applied lines name those bones and the bones below them. Physics at
 * rest adds no offset, so it leaves the setup pose alone.
 */
#include "spine_internal.h"

#include "core/err.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_MAX EDIT_FIELD_MAX
#define PATH_LEN 40   /* bytes of an element's path, "skeleton.transform[999]" */

/* One constraint section: its key, the element's name in messages and
 * what the live scene does not do with it. */
typedef struct section {
	const char *key;     /* "ik" */
	const char *what;    /* "ik" */
	const char *verb;    /* "not solved live" */
} section;

/* Member 'key' of 'c' (NULL when absent) and its path "PATH.key". */
static const cJSON *member(const cJSON *c, const char *key, const char *path,
			   char field[FIELD_MAX])
{
	snprintf(field, FIELD_MAX, "%s.%s", path, key);
	return cJSON_GetObjectItemCaseSensitive(c, key);
}

/* A mix member (default 'def'), finite. */
static int read_mix(spine_reader *r, const cJSON *c, const char *key, double def, double *out,
		    const char *path, const char *what)
{
	char field[FIELD_MAX];
	const cJSON *v = member(c, key, path, field);

	*out = def;
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: %s must be a finite number",
				  what, key);
	*out = v->valuedouble;
	return 0;
}

/* A bone name member ("target", "bone") or one item of "bones": marks it
 * in 'mark' (may be NULL). */
static int read_bone_ref(spine_reader *r, const cJSON *v, const char *field, const char *what,
			 bool *mark)
{
	char q[SPINE_QUOTE_MAX];
	int b;

	if (!cJSON_IsString(v))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: a bone's name expected",
				  what);
	if ((b = spine_bone_find(r->out, r->out->n_bones, v->valuestring)) < 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: bone '%s' is not a bone", what,
				  spine_quote(v->valuestring, q));
	if (mark)
		mark[b] = true;
	return 0;
}

/* The bones marked and every bone below one, as "a, b, c" (cut short to
 * fit 'cap'). */
static void affected_list(const spine_import *in, bool *mark, char *out, size_t cap)
{
	size_t at = 0;
	char q[SPINE_QUOTE_MAX];

	for (int k = 0; k < in->n_bones; k++)
		if (in->bones[k].parent >= 0 && mark[in->bones[k].parent])
			mark[k] = true; /* parents come first */
	out[0] = '\0';
	for (int k = 0; k < in->n_bones; k++) {
		if (!mark[k])
			continue;
		int n = snprintf(out + at, cap - at, "%s%s", at ? ", " : "",
				 spine_quote(in->bones[k].name, q));
		if (n < 0 || (size_t)n >= cap - at) {
			snprintf(out + (at < cap - 6 ? at : cap - 6), 6, ", ...");
			return;
		}
		at += (size_t)n;
	}
}

/* The mixes of one constraint: 'mixed' set when any is not 0. */
static int read_mixes(spine_reader *r, const section *sec, const cJSON *c, const char *path,
		      const char *what, bool *mixed)
{
	double m[6];
	int rc;

	*mixed = false;
	if (!strcmp(sec->key, "ik") || !strcmp(sec->key, "physics")) {
		if ((rc = read_mix(r, c, "mix", 1, &m[0], path, what)) != 0)
			return rc;
		*mixed = m[0] != 0;
		return 0;
	}
	/* transform and path: mixY defaults to mixX, mixScaleY to mixScaleX. */
	if ((rc = read_mix(r, c, "mixRotate", 1, &m[0], path, what)) != 0 ||
	    (rc = read_mix(r, c, "mixX", 1, &m[1], path, what)) != 0 ||
	    (rc = read_mix(r, c, "mixY", m[1], &m[2], path, what)) != 0)
		return rc;
	m[3] = m[4] = m[5] = 0;
	if (!strcmp(sec->key, "transform") &&
	    ((rc = read_mix(r, c, "mixScaleX", 1, &m[3], path, what)) != 0 ||
	     (rc = read_mix(r, c, "mixScaleY", m[3], &m[4], path, what)) != 0 ||
	     (rc = read_mix(r, c, "mixShearY", 1, &m[5], path, what)) != 0))
		return rc;
	for (int i = 0; i < 6; i++)
		*mixed = *mixed || m[i] != 0;
	return 0;
}

/* The bones a constraint drives ("bones", or physics' "bone") and its
 * target (a bone; a slot for path), checked; the driven ones marked. */
static int read_refs(spine_reader *r, const section *sec, const cJSON *c, const char *path,
		     const char *what, bool *mark)
{
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX];
	const cJSON *v, *b;
	int rc, k = 0;

	if (!strcmp(sec->key, "physics")) {
		snprintf(field, sizeof(field), "%s.bone", path);
		return read_bone_ref(r, cJSON_GetObjectItemCaseSensitive(c, "bone"), field, what,
				     mark);
	}
	v = cJSON_GetObjectItemCaseSensitive(c, "bones");
	snprintf(field, sizeof(field), "%s.bones", path);
	if (!cJSON_IsArray(v))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: bones must be an array of bone names", what);
	if (cJSON_GetArraySize(v) > SPINE_IMPORT_MAX_BONES)
		return spine_fail(r, RIGD_E_LIMIT, field, "%s: more than %d bones", what,
				  SPINE_IMPORT_MAX_BONES);
	cJSON_ArrayForEach(b, v) {
		snprintf(field, sizeof(field), "%s.bones[%d]", path, k++);
		if ((rc = read_bone_ref(r, b, field, what, mark)) != 0)
			return rc;
	}
	v = cJSON_GetObjectItemCaseSensitive(c, "target");
	snprintf(field, sizeof(field), "%s.target", path);
	if (strcmp(sec->key, "path") != 0)
		return read_bone_ref(r, v, field, what, NULL);
	if (!cJSON_IsString(v) || spine_slot_find(r->out, r->out->n_slots, v->valuestring) < 0)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: target '%s' is not a slot",
				  what, cJSON_IsString(v) ? spine_quote(v->valuestring, q) : "");
	return 0;
}

/* A boolean member (default 'def'). */
static int read_flag(spine_reader *r, const cJSON *c, const char *key, bool def, bool *out,
		     const char *path, const char *what)
{
	char field[FIELD_MAX];
	const cJSON *v = member(c, key, path, field);

	*out = def;
	if (!v)
		return 0;
	if (!cJSON_IsBool(v))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: %s must be true or false",
				  what, key);
	*out = cJSON_IsTrue(v);
	return 0;
}

/* Whether bone 'b' is 'top' or lies below it. */
static bool below(const spine_import *in, int b, int top)
{
	for (; b >= 0; b = in->bones[b].parent)
		if (b == top)
			return true;
	return false;
}

/* An IK constraint the setup pose applies, read into out->iks (which has
 * room) and checked as the runtime needs it: one bone, or a bone and its
 * child; a target outside the chain's subtree; a finite softness; an
 * integer order. */
static int read_ik(spine_reader *r, const cJSON *c, const char *path, const char *what,
		   double mix)
{
	spine_import *in = r->out;
	spine_ik *ik = &in->iks[in->n_iks];
	const cJSON *bones = cJSON_GetObjectItemCaseSensitive(c, "bones");
	const cJSON *target = cJSON_GetObjectItemCaseSensitive(c, "target");
	const cJSON *order = cJSON_GetObjectItemCaseSensitive(c, "order");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX], q2[SPINE_QUOTE_MAX];
	int rc, n = cJSON_GetArraySize(bones);

	memset(ik, 0, sizeof(*ik));
	snprintf(ik->name, sizeof(ik->name), "%s", name->valuestring);
	snprintf(field, sizeof(field), "%s.bones", path);
	if (n < 1 || n > 2)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: an ik constraint drives 1 or 2 bones, not %d", what, n);
	for (int i = 0; i < n; i++)
		ik->bones[i] = spine_bone_find(in, in->n_bones,
					       cJSON_GetArrayItem(bones, i)->valuestring);
	ik->n_bones = n;
	if (n == 2 && in->bones[ik->bones[1]].parent != ik->bones[0])
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: bone '%s' is not a child of bone '%s'", what,
				  spine_quote(in->bones[ik->bones[1]].name, q),
				  spine_quote(in->bones[ik->bones[0]].name, q2));
	ik->target = spine_bone_find(in, in->n_bones, target->valuestring);
	if (below(in, ik->target, ik->bones[0])) {
		snprintf(field, sizeof(field), "%s.target", path);
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: target '%s' is driven by the constraint itself", what,
				  spine_quote(target->valuestring, q));
	}
	if (order && (!cJSON_IsNumber(order) || !(fabs(order->valuedouble) <= 1e9) ||
		      order->valuedouble != floor(order->valuedouble))) {
		snprintf(field, sizeof(field), "%s.order", path);
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: order must be an integer of at most 9 digits",
				  what);
	}
	ik->order = order ? (int)order->valuedouble : 0;
	ik->index = in->n_iks;
	ik->mix = mix;
	if ((rc = read_mix(r, c, "softness", 0, &ik->softness, path, what)) != 0 ||
	    (rc = read_flag(r, c, "bendPositive", true, &ik->bend_positive, path, what)) != 0 ||
	    (rc = read_flag(r, c, "compress", false, &ik->compress, path, what)) != 0 ||
	    (rc = read_flag(r, c, "stretch", false, &ik->stretch, path, what)) != 0 ||
	    (rc = read_flag(r, c, "uniform", false, &ik->uniform, path, what)) != 0)
		return rc;
	in->n_iks++;
	return 0;
}

static int read_constraint(spine_reader *r, const section *sec, const cJSON *c, int k,
			   bool *mark)
{
	char path[PATH_LEN], field[FIELD_MAX], what[SPINE_QUOTE_MAX + 24], q[SPINE_QUOTE_MAX];
	char bones[400];
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
	const cJSON *skin = cJSON_GetObjectItemCaseSensitive(c, "skin");
	bool mixed;
	int rc;

	snprintf(path, sizeof(path), "skeleton.%s[%d]", sec->key, k);
	snprintf(field, sizeof(field), "%s.name", path);
	if (!cJSON_IsObject(c))
		return spine_fail(r, RIGD_E_BAD_SKELETON, path, "%s: a constraint must be an object",
				  path);
	if (!cJSON_IsString(name) || !name->valuestring[0])
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "%s: a constraint's name must be a non-empty string", path);
	snprintf(what, sizeof(what), "%s '%s'", sec->what, spine_quote(name->valuestring, q));
	memset(mark, 0, sizeof(*mark) * (size_t)r->out->n_bones);
	if ((rc = read_refs(r, sec, c, path, what, mark)) != 0 ||
	    (rc = read_mixes(r, sec, c, path, what, &mixed)) != 0)
		return rc;
	if (skin && !cJSON_IsBool(skin)) {
		snprintf(field, sizeof(field), "%s.skin", path);
		return spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s: skin must be true or false",
				  what);
	}
	if (cJSON_IsTrue(skin))
		return spine_lines_add(r, &r->kept,
				       "%s: %s (skin-required: off in the setup pose)", what,
				       sec->verb);
	if (!strcmp(sec->key, "physics"))
		return spine_lines_add(r, &r->kept,
				       "%s: %s (at rest it leaves the setup pose as it is)", what,
				       sec->verb);
	if (!mixed)
		return spine_lines_add(r, &r->kept, "%s: %s (mix 0: the setup pose is the same)",
				       what, sec->verb);
	if (!strcmp(sec->key, "ik")) {
		double mix;

		if ((rc = read_mix(r, c, "mix", 1, &mix, path, what)) != 0 ||
		    (rc = read_ik(r, c, path, what, mix)) != 0)
			return rc;
		return spine_lines_add(r, &r->kept, "%s: solved live", what);
	}
	if ((rc = spine_lines_add(r, &r->kept, "%s: %s", what, sec->verb)) != 0)
		return rc;
	affected_list(r->out, mark, bones, sizeof(bones));
	return spine_lines_add(r, &r->not_applied,
			       "not applied: the setup pose's worlds differ from the runtime's for "
			       "bones %s (%s)", bones, what);
}

/* "events" and "animations": objects of named entries, counted. */
static int read_named(spine_reader *r, const cJSON *sk)
{
	const cJSON *ev = cJSON_GetObjectItemCaseSensitive(sk, "events");
	const cJSON *an = cJSON_GetObjectItemCaseSensitive(sk, "animations"), *a;
	char names[300], q[SPINE_QUOTE_MAX];
	size_t at = 0;
	int rc;

	if (ev && !cJSON_IsObject(ev))
		return spine_fail(r, RIGD_E_BAD_SKELETON, "skeleton.events",
				  "skeleton.events must be an object {name: {...}}");
	if (an && !cJSON_IsObject(an))
		return spine_fail(r, RIGD_E_BAD_SKELETON, "skeleton.animations",
				  "skeleton.animations must be an object {name: {...}}");
	if (ev && cJSON_GetArraySize(ev) &&
	    (rc = spine_lines_add(r, &r->kept, "events: %d, kept in the file, not fired live",
				  cJSON_GetArraySize(ev))) != 0)
		return rc;
	r->out->n_clips = an ? cJSON_GetArraySize(an) : 0;
	if (!r->out->n_clips)
		return 0;
	names[0] = '\0';
	cJSON_ArrayForEach(a, an) {
		int n = snprintf(names + at, sizeof(names) - at, "%s'%s'", at ? ", " : "",
				 spine_quote(a->string, q));
		if (n < 0 || (size_t)n >= sizeof(names) - at) {
			snprintf(names + (at < sizeof(names) - 6 ? at : sizeof(names) - 6), 6, ", ...");
			break;
		}
		at += (size_t)n;
	}
	return spine_lines_add(r, &r->kept, "clips: %d (%s), kept in the file, not played live",
			       r->out->n_clips, names);
}

static int cmp_ik(const void *x, const void *y)
{
	const spine_ik *a = x, *b = y;

	if (a->order != b->order)
		return (a->order > b->order) - (a->order < b->order);
	return (a->index > b->index) - (a->index < b->index);
}

/* The constraints into the order the runtime solves them: by 'order',
 * the file's order among equals. */
static void sort_iks(spine_import *in)
{
	if (in->n_iks > 1)
		qsort(in->iks, (size_t)in->n_iks, sizeof(*in->iks), cmp_ik);
}

int spine_read_kept(spine_reader *r, const cJSON *sk)
{
	static const section sections[] = {
		{ "ik", "ik", "not solved live" }, /* when skin-required or of mix 0 */
		{ "transform", "transform constraint", "not applied live" },
		{ "path", "path constraint", "not applied live" },
		{ "physics", "physics", "not simulated live" },
	};
	const cJSON *iks = cJSON_GetObjectItemCaseSensitive(sk, "ik");
	int n_iks = cJSON_IsArray(iks) ? cJSON_GetArraySize(iks) : 0;
	bool *mark = calloc((size_t)r->out->n_bones, sizeof(*mark));
	int rc = 0;

	if (!mark)
		return spine_nomem(r);
	free(r->out->iks);
	r->out->n_iks = 0;
	r->out->iks = NULL;
	if (n_iks > 0 && n_iks <= SPINE_IMPORT_MAX_CONSTRAINTS &&
	    !(r->out->iks = calloc((size_t)n_iks, sizeof(*r->out->iks)))) {
		free(mark);
		return spine_nomem(r);
	}
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]) && !rc; i++) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(sk, sections[i].key), *c;
		char field[FIELD_MAX];
		int k = 0;

		if (!arr)
			continue;
		snprintf(field, sizeof(field), "skeleton.%s", sections[i].key);
		if (!cJSON_IsArray(arr)) {
			rc = spine_fail(r, RIGD_E_BAD_SKELETON, field, "%s must be an array", field);
			break;
		}
		if (cJSON_GetArraySize(arr) > SPINE_IMPORT_MAX_CONSTRAINTS) {
			rc = spine_fail(r, RIGD_E_LIMIT, field, "%s: %d constraints; the limit is %d",
					field, cJSON_GetArraySize(arr), SPINE_IMPORT_MAX_CONSTRAINTS);
			break;
		}
		cJSON_ArrayForEach(c, arr) {
			if ((rc = read_constraint(r, &sections[i], c, k++, mark)) != 0)
				break;
		}
	}
	free(mark);
	if (!rc)
		sort_iks(r->out);
	return rc ? rc : read_named(r, sk);
}
