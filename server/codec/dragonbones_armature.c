/*
 * dragonbones_armature.c: one armature of a DragonBones 5.x file, checked
 * and decoded: its bones, slots, skins and displays, and what the import
 * keeps without applying (constraints, animations, displays other than
 * images). Every refusal names the element by JSON path and by name.
 *
 * Reads untrusted JSON; members rigd does not use are ignored, since they
 * stay in the stored file.
 */
#include "dragonbones_internal.h"
#include "proto_internal.h"
#include "skel_names.h"

#include "core/err.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A field path into out (EDIT_FIELD_MAX bytes), cut if ever too long. */
static void db_path(char out[EDIT_FIELD_MAX], const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void db_path(char out[EDIT_FIELD_MAX], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, EDIT_FIELD_MAX, fmt, ap);
	va_end(ap);
}

/*
 * The number member 'key' of 'obj' into *out ('def' when absent). 0 or a
 * bad_skeleton at "FIELD.key" with a message that begins with 'who'.
 */
static int get_number(db_ctx *c, const cJSON *obj, const char *key, double def, double *out,
		      const char *field, const char *who)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char msg[EDIT_MESSAGE_MAX];

	*out = def;
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v)) {
		snprintf(msg, sizeof(msg), "%s: %s must be a number", who, key);
		return BAD(c, msg, "%s.%s", field, key);
	}
	if (!isfinite(v->valuedouble)) {
		snprintf(msg, sizeof(msg), "%s: %s must be finite", who, key);
		return BAD(c, msg, "%s.%s", field, key);
	}
	*out = v->valuedouble;
	return 0;
}

/* The boolean member 'key' (true when absent). */
static int get_bool(db_ctx *c, const cJSON *obj, const char *key, bool *out, const char *field,
		    const char *who)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char msg[EDIT_MESSAGE_MAX];

	*out = true;
	if (!v)
		return 0;
	if (!cJSON_IsBool(v)) {
		snprintf(msg, sizeof(msg), "%s: %s must be true or false", who, key);
		return BAD(c, msg, "%s.%s", field, key);
	}
	*out = cJSON_IsTrue(v);
	return 0;
}

/*
 * The "name" of element 'field' ('kind' "bone", "slot", ...): a string of
 * 1..max bytes, copied into *out (malloc'd). 0, bad_skeleton or nomem.
 */
static int get_name(db_ctx *c, const cJSON *obj, const char *field, const char *kind, size_t max,
		    char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "name");
	char msg[EDIT_MESSAGE_MAX], b[80];

	if (!cJSON_IsString(v) || !v->valuestring[0]) {
		snprintf(msg, sizeof(msg), "%s: name must be a non-empty string", field);
		return BAD(c, msg, "%s.name", field);
	}
	if (strlen(v->valuestring) > max) {
		snprintf(msg, sizeof(msg), "%s '%s': the name is longer than %zu bytes", kind,
			 q(v->valuestring, b, sizeof(b)), max);
		return BAD(c, msg, "%s.name", field);
	}
	if (!(*out = strdup(v->valuestring)))
		return db_nomem(c->err);
	return 0;
}

/* The id of 'name' with 'prefix' into out, or bad_skeleton when too long. */
static int make_id(db_ctx *c, const char *prefix, const char *name, const char *kind,
		   const char *field, char out[SCENE_ID_MAX + 1])
{
	size_t pre = strlen(prefix);
	char msg[EDIT_MESSAGE_MAX], b[80];

	memcpy(out, prefix, pre + 1);
	if (skel_id_encode(name, strlen(name), out + pre, SCENE_ID_MAX + 1 - pre) < 0) {
		snprintf(msg, sizeof(msg),
			 "%s '%s': its node id would be %zu characters, more than %d "
			 "([A-Za-z0-9-] kept, every other byte written as _XX)",
			 kind, q(name, b, sizeof(b)), pre + skel_id_length(name, strlen(name)),
			 SCENE_ID_MAX);
		return BAD(c, msg, "%s.name", field);
	}
	return 0;
}

/* The bone's transform members into *b. */
static int decode_transform(db_ctx *c, const cJSON *t, const char *field, const char *who,
			    dragonbones_bone *b)
{
	char f[EDIT_FIELD_MAX], msg[EDIT_MESSAGE_MAX];
	int rc;

	b->scx = b->scy = 1;
	if (!t)
		return 0;
	db_path(f, "%s.transform", field);
	if (!cJSON_IsObject(t)) {
		snprintf(msg, sizeof(msg), "%s: transform must be an object", who);
		return BAD(c, msg, "%s", f);
	}
	if ((rc = get_number(c, t, "x", 0, &b->x, f, who)) || (rc = get_number(c, t, "y", 0, &b->y, f, who)) ||
	    (rc = get_number(c, t, "skX", 0, &b->skx_deg, f, who)) ||
	    (rc = get_number(c, t, "skY", 0, &b->sky_deg, f, who)) ||
	    (rc = get_number(c, t, "scX", 1, &b->scx, f, who)) ||
	    (rc = get_number(c, t, "scY", 1, &b->scy, f, who)))
		return rc;
	/* The older spelling, which the runtime prefers when present: rotate
	 * is skY, and skew is skX - skY. */
	if (cJSON_GetObjectItemCaseSensitive(t, "rotate") || cJSON_GetObjectItemCaseSensitive(t, "skew")) {
		double rot, skew;
		if ((rc = get_number(c, t, "rotate", 0, &rot, f, who)) ||
		    (rc = get_number(c, t, "skew", 0, &skew, f, who)))
			return rc;
		b->sky_deg = rot;
		b->skx_deg = rot + skew;
	}
	/* rigd's shear is [0, skY - skX]. */
	if (scene_shear_collinear((double[2]){ 0, b->sky_deg - b->skx_deg })) {
		snprintf(msg, sizeof(msg), "%s: skX %g and skY %g make its x and y axes collinear "
			 "(skX - skY is 90 modulo 180)", who, b->skx_deg, b->sky_deg);
		return BAD(c, msg, "%s.skX", f);
	}
	return 0;
}

/* Bone k of the armature's "bone" array. */
static int decode_bone(db_ctx *c, const cJSON *arr, const cJSON *item, int k)
{
	dragonbones_bone *b = &c->out->bones[k];
	char field[EDIT_FIELD_MAX], who[EDIT_MESSAGE_MAX / 2], msg[EDIT_MESSAGE_MAX], b1[80], b2[80];
	const cJSON *v;
	bool flag[4];
	static const char *const flags[4] = { "inheritTranslation", "inheritRotation",
					      "inheritScale", "inheritReflection" };
	static const int bits[4] = { DB_NO_TRANSLATION, DB_NO_ROTATION, DB_NO_SCALE,
				     DB_NO_REFLECTION };
	int rc;

	b->parent = -1;
	db_path(field, "%s.bone[%d]", c->arm, k);
	if (!cJSON_IsObject(item))
		return BAD(c, "a bone must be an object", "%s", field);
	if ((rc = get_name(c, item, field, "bone", SCENE_NAME_MAX, &b->name)) != 0)
		return rc;
	snprintf(who, sizeof(who), "bone '%s'", q(b->name, b1, sizeof(b1)));
	if ((rc = make_id(c, "", b->name, "bone", field, b->id)) != 0)
		return rc;
	for (int j = 0; j < k; j++)
		if (!strcmp(c->out->bones[j].name, b->name)) {
			snprintf(msg, sizeof(msg), "%s: the armature has it twice (bone[%d])", who, j);
			return BAD(c, msg, "%s.name", field);
		}
	v = cJSON_GetObjectItemCaseSensitive(item, "type");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, "bone")) &&
	    !(cJSON_IsNumber(v) && v->valuedouble == 0)) {
		snprintf(msg, sizeof(msg), "%s: only bones of type \"bone\" are imported (not surfaces)",
			 who);
		return BAD(c, msg, "%s.type", field);
	}
	v = cJSON_GetObjectItemCaseSensitive(item, "parent");
	if (v && !cJSON_IsNull(v)) {
		if (!cJSON_IsString(v)) {
			snprintf(msg, sizeof(msg), "%s: parent must be a bone's name", who);
			return BAD(c, msg, "%s.parent", field);
		}
		for (int j = 0; j < k && b->parent < 0; j++)
			if (!strcmp(c->out->bones[j].name, v->valuestring))
				b->parent = j;
		if (b->parent < 0) {
			bool later = false;
			const cJSON *o;
			cJSON_ArrayForEach(o, arr) {
				const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
				if (o != item && cJSON_IsString(n) && !strcmp(n->valuestring, v->valuestring))
					later = true;
			}
			snprintf(msg, sizeof(msg), "%s: parent '%s' %s", who,
				 q(v->valuestring, b2, sizeof(b2)),
				 later ? "comes later in the file (a parent must come first)"
				       : "is not a bone of the armature");
			return BAD(c, msg, "%s.parent", field);
		}
	}
	if ((rc = get_number(c, item, "length", 0, &b->length, field, who)) != 0 ||
	    (rc = decode_transform(c, cJSON_GetObjectItemCaseSensitive(item, "transform"), field, who, b)))
		return rc;
	b->inherit = 0;
	for (int i = 0; i < 4; i++) {
		if ((rc = get_bool(c, item, flags[i], &flag[i], field, who)) != 0)
			return rc;
		if (!flag[i])
			b->inherit |= bits[i];
	}
	b->inherit = b->inherit ? (INHERIT_DB | b->inherit) : INHERIT_NORMAL;
	return 0;
}

/* Slot k of the armature's "slot" array (its display is resolved later). */
static int decode_slot(db_ctx *c, const cJSON *item, int k)
{
	dragonbones_slot *s = &c->out->slots[k];
	char field[EDIT_FIELD_MAX], who[EDIT_MESSAGE_MAX / 2], msg[EDIT_MESSAGE_MAX], b1[80], b2[80];
	const cJSON *v;
	double di;
	int rc;

	s->bone = -1;
	db_path(field, "%s.slot[%d]", c->arm, k);
	if (!cJSON_IsObject(item))
		return BAD(c, "a slot must be an object", "%s", field);
	if ((rc = get_name(c, item, field, "slot", SCENE_NAME_MAX - strlen(DRAGONBONES_SLOT_PREFIX),
			   &s->name)) != 0)
		return rc;
	snprintf(who, sizeof(who), "slot '%s'", q(s->name, b1, sizeof(b1)));
	if ((rc = make_id(c, DRAGONBONES_SLOT_PREFIX, s->name, "slot", field, s->id)) != 0)
		return rc;
	for (int j = 0; j < k; j++)
		if (!strcmp(c->out->slots[j].name, s->name)) {
			snprintf(msg, sizeof(msg), "%s: the armature has it twice (slot[%d])", who, j);
			return BAD(c, msg, "%s.name", field);
		}
	v = cJSON_GetObjectItemCaseSensitive(item, "parent");
	for (int j = 0; cJSON_IsString(v) && j < c->out->n_bones && s->bone < 0; j++)
		if (!strcmp(c->out->bones[j].name, v->valuestring))
			s->bone = j;
	if (s->bone < 0) {
		snprintf(msg, sizeof(msg), "%s: parent %s%s%s is not a bone of the armature", who,
			 cJSON_IsString(v) ? "'" : "",
			 cJSON_IsString(v) ? q(v->valuestring, b2, sizeof(b2)) : "(missing or not a string)",
			 cJSON_IsString(v) ? "'" : "");
		return BAD(c, msg, "%s.parent", field);
	}
	if ((rc = get_number(c, item, "displayIndex", 0, &di, field, who)) != 0)
		return rc;
	if (di < -1 || di != floor(di) || di > DRAGONBONES_MAX_DISPLAYS) {
		snprintf(msg, sizeof(msg), "%s: displayIndex must be -1 (nothing shown) or a display's index",
			 who);
		return BAD(c, msg, "%s.displayIndex", field);
	}
	s->display_index = (int)di;
	v = cJSON_GetObjectItemCaseSensitive(item, "color");
	if (v) {
		if (!cJSON_IsObject(v)) {
			snprintf(msg, sizeof(msg), "%s: color must be an object", who);
			return BAD(c, msg, "%s.color", field);
		}
		if (!(s->color = cJSON_PrintUnformatted(v)))
			return db_nomem(c->err);
	}
	return 0;
}

/* Display j of skin slot entry 'ss' (slot index 'slot') in skin 'sk'. */
static int decode_display(db_ctx *c, const cJSON *d, const char *field, int slot, const char *skin,
			  bool is_default)
{
	const dragonbones_slot *s = &c->out->slots[slot];
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(d, "type");
	char *name = NULL, group[SCENE_LAYER_GROUP_MAX + 1], msg[EDIT_MESSAGE_MAX], b1[80], b2[80], b3[80];
	int n, m, rc;

	if (++c->n_displays > DRAGONBONES_MAX_DISPLAYS)
		return db_fail(c->err, RIGD_E_LIMIT, field, "%s: more than %d displays", c->arm,
			       DRAGONBONES_MAX_DISPLAYS);
	if (!cJSON_IsObject(d))
		return BAD(c, "a display must be an object", "%s", field);
	if (type && !cJSON_IsString(type)) {
		snprintf(msg, sizeof(msg), "slot '%s': a display's type must be a string",
			 q(s->name, b1, sizeof(b1)));
		return BAD(c, msg, "%s.type", field);
	}
	if ((rc = get_name(c, d, field, "display", SCENE_NAME_MAX, &name)) != 0)
		return rc;
	n = skel_id_encode(s->name, strlen(s->name), group, sizeof(group));
	m = n < 0 ? -1 : skel_id_encode(name, strlen(name), group + n + 1, sizeof(group) - (size_t)n - 1);
	if (n < 0 || m < 0) {
		snprintf(msg, sizeof(msg),
			 "slot '%s': display '%s': its GROUP (slot and display names encoded, "
			 "joined by '.') would be longer than %d characters",
			 q(s->name, b1, sizeof(b1)), q(name, b2, sizeof(b2)), SCENE_LAYER_GROUP_MAX);
		free(name);
		return BAD(c, msg, "%s.name", field);
	}
	group[n] = '.';
	if ((rc = db_text_add(&c->ids, "%s\n", group)) != 0) {
		free(name);
		return db_nomem(c->err);
	}
	if (type && strcmp(type->valuestring, "image")) {
		const char *why = !strcmp(type->valuestring, "mesh") ? "drawn undeformed (no mesh deformation live)"
				: !strcmp(type->valuestring, "armature") ? "the child armature is not built"
				: !strcmp(type->valuestring, "boundingBox") ? "not drawn"
				: "not drawn (an unknown display type)";
		if (db_text_add(&c->kept, "%s '%s' in slot '%s' (skin '%s'): %s\n",
				q(type->valuestring, b3, sizeof(b3)), q(name, b2, sizeof(b2)),
				q(s->name, b1, sizeof(b1)), skin, why)) {
			free(name);
			return db_nomem(c->err);
		}
		c->n_kept++;
	}
	free(name);
	if (is_default) {
		if (c->n_def_groups == c->cap_def_groups) {
			int cap = c->cap_def_groups ? 2 * c->cap_def_groups : 64;
			void *p = realloc(c->def_groups, sizeof(*c->def_groups) * (size_t)cap);
			if (!p)
				return db_nomem(c->err);
			c->def_groups = p;
			c->cap_def_groups = cap;
		}
		/* The displays of one slot entry are contiguous (decode_skin
		 * starts each entry afresh). */
		memcpy(c->def_groups[c->n_def_groups++], group, strlen(group) + 1);
		c->def_count[slot]++;
	}
	return 0;
}

/* The index of the slot named 'name', or -1. */
static int find_slot(const dragonbones_import *in, const char *name)
{
	for (int i = 0; i < in->n_slots; i++)
		if (!strcmp(in->slots[i].name, name))
			return i;
	return -1;
}

/* Skin k: its slot entries and their displays. */
static int decode_skin(db_ctx *c, const cJSON *skin, int k, bool is_default)
{
	char field[EDIT_FIELD_MAX], f2[EDIT_FIELD_MAX], f3[EDIT_FIELD_MAX], msg[EDIT_MESSAGE_MAX];
	char sname[80], b1[80];
	const cJSON *v, *entry, *d;
	int j = 0, rc;

	db_path(field, "%s.skin[%d]", c->arm, k);
	if (!cJSON_IsObject(skin))
		return BAD(c, "a skin must be an object", "%s", field);
	v = cJSON_GetObjectItemCaseSensitive(skin, "name");
	if (v && !cJSON_IsString(v))
		return BAD(c, "a skin's name must be a string", "%s.name", field);
	q(v ? v->valuestring : "", sname, sizeof(sname));
	v = cJSON_GetObjectItemCaseSensitive(skin, "slot");
	if (v && !cJSON_IsArray(v)) {
		snprintf(msg, sizeof(msg), "skin '%s': slot must be an array", sname);
		return BAD(c, msg, "%s.slot", field);
	}
	cJSON_ArrayForEach(entry, v) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(entry, "name");
		const cJSON *ds = cJSON_GetObjectItemCaseSensitive(entry, "display");
		int slot, i = 0;

		db_path(f2, "%s.slot[%d]", field, j++);
		/* Each entry costs a search of the slots: bounded in all. */
		if (++c->n_entries > DRAGONBONES_MAX_DISPLAYS)
			return db_fail(c->err, RIGD_E_LIMIT, f2, "%s: more than %d skin entries", c->arm,
				       DRAGONBONES_MAX_DISPLAYS);
		if (!cJSON_IsObject(entry) || !cJSON_IsString(n)) {
			snprintf(msg, sizeof(msg), "skin '%s': an entry must be an object with a slot's name",
				 sname);
			return BAD(c, msg, "%s", f2);
		}
		if ((slot = find_slot(c->out, n->valuestring)) < 0) {
			snprintf(msg, sizeof(msg), "skin '%s': slot '%s' is not a slot of the armature", sname,
				 q(n->valuestring, b1, sizeof(b1)));
			return BAD(c, msg, "%s.name", f2);
		}
		if (ds && !cJSON_IsArray(ds)) {
			snprintf(msg, sizeof(msg), "skin '%s': slot '%s': display must be an array", sname,
				 q(n->valuestring, b1, sizeof(b1)));
			return BAD(c, msg, "%s.display", f2);
		}
		if (is_default) {
			/* A slot listed again in the same skin: the later entry wins. */
			c->def_first[slot] = c->n_def_groups;
			c->def_count[slot] = 0;
		}
		cJSON_ArrayForEach(d, ds) {
			db_path(f3, "%s.display[%d]", f2, i++);
			if ((rc = decode_display(c, d, f3, slot, sname, is_default)) != 0)
				return rc;
		}
	}
	return 0;
}

/* The default skin: the one named "" or "default", else the first. */
static int default_skin(const cJSON *skins)
{
	const cJSON *sk;
	int k = 0;

	cJSON_ArrayForEach(sk, skins) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(sk, "name");
		if (!n || (cJSON_IsString(n) && (!n->valuestring[0] || !strcmp(n->valuestring, "default"))))
			return k;
		k++;
	}
	return 0;
}

/* Each slot's setup display, from the default skin. */
static int resolve_displays(db_ctx *c)
{
	char msg[EDIT_MESSAGE_MAX], b1[80];

	for (int i = 0; i < c->out->n_slots; i++) {
		dragonbones_slot *s = &c->out->slots[i];
		int n = c->def_count[i];

		if (s->display_index < 0 || (s->display_index == 0 && n == 0))
			continue;
		if (s->display_index >= n) {
			snprintf(msg, sizeof(msg),
				 "slot '%s': displayIndex %d is past the default skin's %d display%s of the slot",
				 q(s->name, b1, sizeof(b1)), s->display_index, n, n == 1 ? "" : "s");
			return BAD(c, msg, "%s.slot[%d].displayIndex", c->arm, i);
		}
		snprintf(s->group, sizeof(s->group), "%s", c->def_groups[c->def_first[i] + s->display_index]);
	}
	return 0;
}

/* The index of the bone named by member 'key' of 'item', or a
 * bad_skeleton at FIELD.key. */
static int bone_ref(db_ctx *c, const cJSON *item, const char *key, const char *field,
		    const char *who, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, key);
	char msg[EDIT_MESSAGE_MAX], b1[80];

	*out = -1;
	for (int i = 0; cJSON_IsString(v) && i < c->out->n_bones && *out < 0; i++)
		if (!strcmp(c->out->bones[i].name, v->valuestring))
			*out = i;
	if (*out >= 0)
		return 0;
	if (cJSON_IsString(v))
		snprintf(msg, sizeof(msg), "%s: %s '%s' is not a bone of the armature", who, key,
			 q(v->valuestring, b1, sizeof(b1)));
	else
		snprintf(msg, sizeof(msg), "%s: %s must be a bone's name", who, key);
	return BAD(c, msg, "%s.%s", field, key);
}

/* An IK constraint, checked as the runtime solves it, into c->out->iks
 * (which has room) when its weight is not 0. */
static int decode_ik(db_ctx *c, const cJSON *item, const char *field, const char *who,
		     const char *name, double weight, double chain)
{
	dragonbones_import *in = c->out;
	dragonbones_ik *ik = &in->iks[in->n_iks];
	char msg[EDIT_MESSAGE_MAX], w[96];
	int bone, rc;

	snprintf(w, sizeof(w), "%.90s", who);
	who = w;

	memset(ik, 0, sizeof(*ik));
	if ((rc = bone_ref(c, item, "bone", field, who, &bone)) != 0 ||
	    (rc = bone_ref(c, item, "target", field, who, &ik->target)) != 0 ||
	    (rc = get_bool(c, item, "bendPositive", &ik->bend_positive, field, who)) != 0)
		return rc;
	if (chain != 0 && chain != 1) {
		snprintf(msg, sizeof(msg), "%s: chain must be 0 or 1, not %g", who, chain);
		return BAD(c, msg, "%s.chain", field);
	}
	if (chain == 1 && in->bones[bone].parent < 0) {
		snprintf(msg, sizeof(msg), "%s: chain 1 needs a bone with a parent", who);
		return BAD(c, msg, "%s.chain", field);
	}
	ik->n_bones = chain == 1 ? 2 : 1;
	ik->bones[0] = chain == 1 ? in->bones[bone].parent : bone;
	ik->bones[1] = chain == 1 ? bone : -1;
	for (int b = ik->target; b >= 0; b = in->bones[b].parent)
		if (b == ik->bones[0]) {
			snprintf(msg, sizeof(msg), "%s: target is driven by the constraint itself", who);
			return BAD(c, msg, "%s.target", field);
		}
	if (weight == 0)
		return 0; /* the runtime leaves the bones as they are */
	snprintf(ik->name, sizeof(ik->name), "%s", name);
	ik->weight = weight;
	in->n_iks++;
	return 0;
}

/* What "ik" and "path" hold: kept, and not applied where they move bones. */
static int decode_constraints(db_ctx *c, const cJSON *arm)
{
	static const char *const kinds[2] = { "ik", "path" };
	char msg[EDIT_MESSAGE_MAX], b1[80], b2[80];

	for (int kind = 0; kind < 2; kind++) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(arm, kinds[kind]), *item;
		int k = 0, rc;

		if (!arr)
			continue;
		if (!cJSON_IsArray(arr)) {
			snprintf(msg, sizeof(msg), "%s must be an array", kinds[kind]);
			return BAD(c, msg, "%s.%s", c->arm, kinds[kind]);
		}
		if (cJSON_GetArraySize(arr) > DRAGONBONES_MAX_CONSTRAINTS) {
			char field[EDIT_FIELD_MAX];
			db_path(field, "%s.%s", c->arm, kinds[kind]);
			return db_fail(c->err, RIGD_E_LIMIT, field, "%s: more than %d", field,
				       DRAGONBONES_MAX_CONSTRAINTS);
		}
		if (kind == 0 && cJSON_GetArraySize(arr) > 0) {
			free(c->out->iks);
			c->out->n_iks = 0;
			if (!(c->out->iks = calloc((size_t)cJSON_GetArraySize(arr), sizeof(*c->out->iks))))
				return db_nomem(c->err);
		}
		cJSON_ArrayForEach(item, arr) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(item, "name");
			const char *name = cJSON_IsString(n) ? n->valuestring : "";
			char field[EDIT_FIELD_MAX];
			double weight = 1, chain = 0;
			db_text moved = { 0 };

			db_path(field, "%s.%s[%d]", c->arm, kinds[kind], k++);
			if (!cJSON_IsObject(item))
				return BAD(c, "a constraint must be an object", "%s", field);
			q(name, b1, sizeof(b1));
			snprintf(msg, sizeof(msg), "%s '%s'", kinds[kind], b1);
			/* IK has one weight; a path constraint a rotate and a
			 * translate mix, and moves its bones when either is not 0. */
			double mix2 = 0;
			if ((rc = get_number(c, item, kind ? "rotateMix" : "weight", 1, &weight, field, msg)) ||
			    (kind && (rc = get_number(c, item, "translateMix", 1, &mix2, field, msg))) ||
			    (rc = get_number(c, item, "chain", 0, &chain, field, msg)))
				return rc;
			if (fabs(mix2) > fabs(weight))
				weight = mix2;
			if (kind == 0) {
				/* IK is solved live: kept in the file, named, and not
				 * a difference from the runtime. */
				if ((rc = decode_ik(c, item, field, msg, name, weight, chain)) != 0)
					return rc;
				if (db_text_add(&c->kept, "ik '%s': %s\n", b1,
						weight == 0 ? "not solved (weight 0: the setup pose is the same)"
							    : "solved live"))
					return db_nomem(c->err);
				c->n_kept++;
				continue;
			}
			if (db_text_add(&c->kept, "%s '%s': not applied live\n", kinds[kind], b1))
				return db_nomem(c->err);
			c->n_kept++;
			if (weight == 0)
				continue;
			{
				const cJSON *bs = cJSON_GetObjectItemCaseSensitive(item, "bones"), *bn;
				int n_moved = 0;
				cJSON_ArrayForEach(bn, bs)
					if (cJSON_IsString(bn) &&
					    db_text_add(&moved, "%s%s", n_moved++ ? ", " : "",
							q(bn->valuestring, b2, sizeof(b2))))
						return db_nomem(c->err);
			}
			rc = db_text_add(&c->not_applied,
					 "not applied: the setup pose's worlds differ from the runtime's for "
					 "bones %s (%s '%s', %s %g)\n",
					 moved.p ? moved.p : "(none found)", kinds[kind], b1,
					 kind ? "mix" : "weight", weight);
			free(moved.p);
			if (rc)
				return db_nomem(c->err);
			c->n_not_applied++;
		}
	}
	return 0;
}

/* The armature's animations: counted and named in the report. */
static int decode_animations(db_ctx *c, const cJSON *arm)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(arm, "animation"), *a;
	char b[80];

	if (!arr)
		return 0;
	if (!cJSON_IsArray(arr))
		return BAD(c, "animation must be an array", "%s.animation", c->arm);
	cJSON_ArrayForEach(a, arr) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
		c->out->n_clips++;
		if (db_text_add(&c->kept, "animation '%s': kept for the clip importer\n",
				q(cJSON_IsString(n) ? n->valuestring : "", b, sizeof(b))))
			return db_nomem(c->err);
		c->n_kept++;
	}
	return 0;
}

/* An array member of the armature, of at most 'max' items: *n its size. */
static int armature_array(db_ctx *c, const cJSON *arm, const char *key, int max, const cJSON **arr,
			  int *n)
{
	char msg[EDIT_MESSAGE_MAX];

	*arr = cJSON_GetObjectItemCaseSensitive(arm, key);
	*n = 0;
	if (!*arr)
		return 0;
	if (!cJSON_IsArray(*arr)) {
		snprintf(msg, sizeof(msg), "%s must be an array", key);
		return BAD(c, msg, "%s.%s", c->arm, key);
	}
	if ((*n = cJSON_GetArraySize(*arr)) > max) {
		char field[EDIT_FIELD_MAX];
		db_path(field, "%s.%s", c->arm, key);
		return db_fail(c->err, RIGD_E_LIMIT, field, "%s: more than %d", field, max);
	}
	return 0;
}

/* The chosen armature: bones, slots, skins, constraints, animations. */
int db_decode_armature(db_ctx *c, const cJSON *arm)
{
	const cJSON *bones, *slots, *skins, *item;
	int n_bones, n_slots, n_skins, k, def, rc;

	if ((rc = armature_array(c, arm, "bone", DRAGONBONES_MAX_BONES, &bones, &n_bones)) ||
	    (rc = armature_array(c, arm, "slot", DRAGONBONES_MAX_SLOTS, &slots, &n_slots)) ||
	    (rc = armature_array(c, arm, "skin", DRAGONBONES_MAX_SLOTS, &skins, &n_skins)))
		return rc;
	if (n_bones == 0)
		return BAD(c, "the armature has no bone", "%s.bone", c->arm);
	c->out->bones = calloc((size_t)n_bones, sizeof(*c->out->bones));
	c->out->slots = calloc((size_t)n_slots + 1, sizeof(*c->out->slots));
	c->def_count = calloc((size_t)n_slots + 1, sizeof(int));
	c->def_first = calloc((size_t)n_slots + 1, sizeof(int));
	if (!c->out->bones || !c->out->slots || !c->def_count || !c->def_first)
		return db_nomem(c->err);
	k = 0;
	cJSON_ArrayForEach(item, bones) {
		c->out->n_bones = k + 1;
		if ((rc = decode_bone(c, bones, item, k++)) != 0)
			return rc;
	}
	k = 0;
	cJSON_ArrayForEach(item, slots) {
		c->out->n_slots = k + 1;
		if ((rc = decode_slot(c, item, k++)) != 0)
			return rc;
	}
	def = default_skin(skins);
	k = 0;
	cJSON_ArrayForEach(item, skins) {
		if ((rc = decode_skin(c, item, k, k == def)) != 0)
			return rc;
		k++;
	}
	c->out->n_skins = n_skins;
	if ((rc = resolve_displays(c)) || (rc = decode_constraints(c, arm)))
		return rc;
	return decode_animations(c, arm);
}

