/*
 * spine_skins.c: the skins of a Spine 4.2 skeleton (spine_internal.h):
 * every (slot, attachment) pair of every skin to its layer group, the
 * asset's sorted id list, the default skin the slots' setup attachments
 * are looked up in, a line for each attachment that is not a region.
 *
 * Reads untrusted JSON; never changes a scene.
 */
#include "spine_internal.h"
#include "skel_names.h"

#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_MAX EDIT_FIELD_MAX
#define PATH_LEN 40   /* bytes of an element's path, "skeleton.skins[999]" */

/* The GROUP of (slot, attachment) into group[SCENE_LAYER_GROUP_MAX + 1],
 * or bad_skeleton when it would be too long. */
int spine_make_group(spine_reader *r, const char *slot, const char *att, char *group,
		      const char *field)
{
	size_t ns = skel_id_length(slot, strlen(slot)), na = skel_id_length(att, strlen(att));
	char q1[SPINE_QUOTE_MAX], q2[SPINE_QUOTE_MAX];

	if (!att[0])
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "slot '%s': an attachment's name is empty", spine_quote(slot, q1));
	if (ns + 1 + na > SCENE_LAYER_GROUP_MAX)
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "slot '%s', attachment '%s': its layer group would be %zu "
				  "characters; the limit is %d",
				  spine_quote(slot, q1), spine_quote(att, q2), ns + 1 + na,
				  SCENE_LAYER_GROUP_MAX);
	skel_id_encode(slot, strlen(slot), group, SCENE_LAYER_GROUP_MAX + 1);
	group[ns] = '.';
	skel_id_encode(att, strlen(att), group + ns + 1, SCENE_LAYER_GROUP_MAX + 1 - ns - 1);
	return 0;
}

static int group_add(spine_reader *r, spine_groups *l, const char *group)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 64;
		void *g;

		if (l->n >= SPINE_IMPORT_MAX_GROUPS)
			return spine_fail(r, RIGD_E_LIMIT, "skeleton.skins",
					  "skeleton.skins: more than %d attachments",
					  SPINE_IMPORT_MAX_GROUPS);
		if (cap > SPINE_IMPORT_MAX_GROUPS)
			cap = SPINE_IMPORT_MAX_GROUPS;
		if (!(g = realloc(l->g, sizeof(*l->g) * (size_t)cap)))
			return spine_nomem(r);
		l->g = g;
		l->cap = cap;
	}
	snprintf(l->g[l->n++], sizeof(l->g[0]), "%s", group);
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* The sorted, unique groups as '\n'-ended lines into r->out->groups. */
int spine_join_groups(spine_reader *r, spine_groups *l)
{
	size_t len = 0;
	int n = 0;

	if (!l->n)
		return 0;
	qsort(l->g, (size_t)l->n, sizeof(l->g[0]), cmp_group);
	for (int i = 0; i < l->n; i++)
		len += strlen(l->g[i]) + 1;
	if (!(r->out->groups = malloc(len + 1)))
		return spine_nomem(r);
	len = 0;
	for (int i = 0; i < l->n; i++) {
		size_t m = strlen(l->g[i]);

		if (i && !strcmp(l->g[i], l->g[i - 1]))
			continue;
		memcpy(r->out->groups + len, l->g[i], m);
		len += m;
		r->out->groups[len++] = '\n';
		n++;
	}
	r->out->groups[len] = '\0';
	r->out->groups_len = len;
	r->out->n_groups = n;
	return 0;
}

/* The attachments of skin 'k' ({slot: {attachment: {...}}}): each slot a
 * slot, each attachment an object; its group added to 'l'; a type other
 * than region reported. */
static int read_skin_attachments(spine_reader *r, const cJSON *atts, int k, const char *skin,
				 spine_groups *l)
{
	char field[FIELD_MAX], q[SPINE_QUOTE_MAX], q2[SPINE_QUOTE_MAX], q3[SPINE_QUOTE_MAX];
	char q4[SPINE_QUOTE_MAX], group[SCENE_LAYER_GROUP_MAX + 1];
	const cJSON *slot, *att;
	int rc;

	snprintf(field, sizeof(field), "skeleton.skins[%d].attachments", k);
	if (!atts)
		return 0;
	if (!cJSON_IsObject(atts))
		return spine_fail(r, RIGD_E_BAD_SKELETON, field,
				  "skin '%s': attachments must be an object {slot: {attachment: "
				  "{...}}}", spine_quote(skin, q));
	cJSON_ArrayForEach(slot, atts) {
		if (++l->slot_entries > SPINE_IMPORT_MAX_GROUPS)
			return spine_fail(r, RIGD_E_LIMIT, "skeleton.skins",
					  "skeleton.skins: more than %d slot entries",
					  SPINE_IMPORT_MAX_GROUPS);
		if (spine_slot_find(r->out, r->out->n_slots, slot->string) < 0)
			return spine_fail(r, RIGD_E_BAD_SKELETON, field,
					  "skin '%s': slot '%s' is not a slot", spine_quote(skin, q),
					  spine_quote(slot->string, q2));
		if (!cJSON_IsObject(slot))
			return spine_fail(r, RIGD_E_BAD_SKELETON, field,
					  "skin '%s', slot '%s': must be an object {attachment: "
					  "{...}}", spine_quote(skin, q), spine_quote(slot->string, q2));
		cJSON_ArrayForEach(att, slot) {
			const cJSON *type = cJSON_GetObjectItemCaseSensitive(att, "type");

			if (!cJSON_IsObject(att))
				return spine_fail(r, RIGD_E_BAD_SKELETON, field,
						  "skin '%s', slot '%s': attachment '%s' must be an "
						  "object", spine_quote(skin, q),
						  spine_quote(slot->string, q2),
						  spine_quote(att->string, q3));
			if (type && !cJSON_IsString(type))
				return spine_fail(r, RIGD_E_BAD_SKELETON, field,
						  "skin '%s', slot '%s': attachment '%s': type must "
						  "be a string", spine_quote(skin, q),
						  spine_quote(slot->string, q2),
						  spine_quote(att->string, q3));
			if ((rc = spine_make_group(r, slot->string, att->string, group, field)) != 0 ||
			    (rc = group_add(r, l, group)) != 0)
				return rc;
			if (type && strcmp(type->valuestring, "region") != 0 &&
			    (rc = spine_lines_add(r, &r->kept,
						  "%s '%s' (skin '%s', slot '%s'): kept in the "
						  "file, not drawn as such live",
						  spine_quote(type->valuestring, q3),
						  spine_quote(att->string, q4), spine_quote(skin, q),
						  spine_quote(slot->string, q2))) != 0)
				return rc;
		}
	}
	return 0;
}

/* "skins": an array of {name, attachments, ...}; the default skin's
 * attachments into *def (NULL when there is no skin "default"). */
int spine_read_skins(spine_reader *r, const cJSON *sk, spine_groups *l, const cJSON **def)
{
	const cJSON *skins = cJSON_GetObjectItemCaseSensitive(sk, "skins"), *s;
	char path[PATH_LEN], field[FIELD_MAX], q[SPINE_QUOTE_MAX];
	int k = 0, rc;

	*def = NULL;
	if (!skins)
		return 0;
	if (!cJSON_IsArray(skins))
		return spine_fail(r, RIGD_E_BAD_SKELETON, "skeleton.skins",
				  "skeleton.skins must be an array of skins (an object is the "
				  "Spine 3.x form)");
	if (cJSON_GetArraySize(skins) > SPINE_IMPORT_MAX_SKINS)
		return spine_fail(r, RIGD_E_LIMIT, "skeleton.skins",
				  "skeleton.skins: %d skins; the limit is %d", cJSON_GetArraySize(skins),
				  SPINE_IMPORT_MAX_SKINS);
	cJSON_ArrayForEach(s, skins) {
		const cJSON *t;
		const char *name;
		int j = 0;

		snprintf(path, sizeof(path), "skeleton.skins[%d]", k);
		if ((rc = spine_read_name(r, s, path, "skin", SCENE_NAME_MAX, &name)) != 0)
			return rc;
		cJSON_ArrayForEach(t, skins) {
			const cJSON *tn = cJSON_GetObjectItemCaseSensitive(t, "name");

			if (j++ >= k)
				break;
			if (cJSON_IsString(tn) && !strcmp(tn->valuestring, name)) {
				snprintf(field, sizeof(field), "%s.name", path);
				return spine_fail(r, RIGD_E_BAD_SKELETON, field,
						  "skin '%s': the name is also skins[%d]'s",
						  spine_quote(name, q), j - 1);
			}
		}
		const cJSON *atts = cJSON_GetObjectItemCaseSensitive(s, "attachments");
		if ((rc = read_skin_attachments(r, atts, k, name, l)) != 0)
			return rc;
		if (!strcmp(name, "default"))
			*def = atts;
		r->out->n_skins = ++k;
	}
	return 0;
}

