/*
 * skel_clips_read.c: a stored Spine or DragonBones skeleton read into the
 * clips and setup pose the clip op plays (skel_clips_read.h).
 *
 * The stored bytes are the "skeleton" member of the import body, so they
 * are wrapped back into {"skeleton": ...}, parsed once, and decoded by the
 * importer from that tree (which gives the bones, their setup values, the
 * slots and the IK constraints exactly as the import made them); the
 * animations are read by spine_clip.c or dragonbones_clip.c from the same
 * tree. No cJSON tree leaves this file.
 */
#include "skel_clips_read.h"

#include "dragonbones.h"
#include "dragonbones_internal.h"
#include "dragonbones_clip.h"
#include "skel_names.h"
#include "spine.h"
#include "spine_internal.h"
#include "spine_clip.h"

#include "core/asset.h"
#include "core/err.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool skel_clips_kind(int kind)
{
	return kind == ASSET_SPINE || kind == ASSET_DRAGONBONES;
}

static int nomem(edit_error *err)
{
	edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
	return RIGD_E_NOMEM;
}

/* {"skeleton": BYTES}, NUL-terminated, in *out (owned); its length in *n. */
static int wrap(const char *bytes, size_t len, char **out, size_t *n)
{
	static const char head[] = "{\"skeleton\":";

	*n = sizeof(head) - 1 + len + 1;
	if (!(*out = malloc(*n + 1)))
		return RIGD_E_NOMEM;
	memcpy(*out, head, sizeof(head) - 1);
	memcpy(*out + sizeof(head) - 1, bytes, len);
	(*out)[*n - 1] = '}';
	(*out)[*n] = '\0';
	return 0;
}

/* The GROUP of slot 'slot' showing attachment 'name' (NULL: none) into a
 * new string in *out; NULL when there is none or it would be no valid
 * GROUP (too long), which shows nothing. */
static int group_of(const char *slot, const char *name, char **out)
{
	char g[SCENE_LAYER_GROUP_MAX + 1];
	int a, b;

	*out = NULL;
	if (!name)
		return 0;
	a = skel_id_encode(slot, strlen(slot), g, sizeof(g));
	if (a < 0 || (size_t)a + 2 > sizeof(g))
		return 0;
	g[a] = '.';
	b = skel_id_encode(name, strlen(name), g + a + 1, sizeof(g) - (size_t)a - 1);
	if (b < 0)
		return 0;
	return (*out = strdup(g)) ? 0 : RIGD_E_NOMEM;
}

/* Turns every attachment key's name into its GROUP (skel_clips.h); for
 * DragonBones ('displays' non-NULL: per slot its displays' names in the
 * default skin, 'n_displays' of them) from the key's display index. */
static int keys_to_groups(skel_clips *sk, const char *const *slot_names,
			  const char *const *const *displays, const int *n_displays)
{
	for (int c = 0; c < sk->clips.n; c++) {
		clip *cl = &sk->clips.clips[c];

		for (int i = 0; i < cl->n_slot_timelines; i++) {
			clip_slot_timeline *tl = &cl->slots[i];
			const char *slot = slot_names[tl->slot];

			for (int k = 0; k < tl->n_keys; k++) {
				clip_attachment_key *key = &tl->keys[k];
				const char *name = key->name;
				char *g;

				if (displays)
					name = key->index >= 0 && key->index < n_displays[tl->slot]
						       ? displays[tl->slot][key->index] : NULL;
				if (group_of(slot, name, &g))
					return RIGD_E_NOMEM;
				free(key->name);
				key->name = g;
			}
		}
	}
	return 0;
}

static int setup_group(skel_slot *s, const char *group)
{
	s->setup_group = NULL;
	return group[0] && !(s->setup_group = strdup(group)) ? RIGD_E_NOMEM : 0;
}

/* Room for 'n' constraints in sk->iks; false when out of memory. */
static bool iks_new(skel_clips *sk, int n)
{
	sk->n_iks = n;
	return n == 0 || (sk->iks = calloc((size_t)n, sizeof(*sk->iks))) != NULL;
}

/* A constraint named 'name' of the import's bones 'bones[0..n)' toward
 * bone 'target' (indices into the import 'in', whose bone ids and lengths
 * id_of and length_of read), with settings 'p'. */
static void ik_fill(skel_ik *to, const char *name, const int *bones, int n, int target,
		    const char *(*id_of)(const void *in, int b),
		    double (*length_of)(const void *in, int b), const void *in,
		    ik_spine_params p)
{
	snprintf(to->name, sizeof(to->name), "%s", name);
	to->n_bones = n;
	for (int j = 0; j < n; j++) {
		snprintf(to->bones[j], sizeof(to->bones[j]), "%s", id_of(in, bones[j]));
		to->length[j] = length_of(in, bones[j]);
	}
	snprintf(to->target, sizeof(to->target), "%s", id_of(in, target));
	to->p = p;
}

static const char *spine_id(const void *in, int b)
{
	return ((const spine_import *)in)->bones[b].id;
}

static double spine_length(const void *in, int b)
{
	return ((const spine_import *)in)->bones[b].length;
}

static const char *db_id(const void *in, int b)
{
	return ((const dragonbones_import *)in)->bones[b].id;
}

static double db_length(const void *in, int b)
{
	return ((const dragonbones_import *)in)->bones[b].length;
}

static void spine_ik_copy(const spine_import *in, const spine_ik *k, skel_ik *to)
{
	ik_fill(to, k->name, k->bones, k->n_bones, k->target, spine_id, spine_length, in,
		(ik_spine_params){ k->mix, k->softness, k->bend_positive, k->compress, k->stretch,
				   k->uniform });
}

static void dragonbones_ik_copy(const dragonbones_import *in, const dragonbones_ik *k,
				skel_ik *to)
{
	ik_fill(to, k->name, k->bones, k->n_bones, k->target, db_id, db_length, in,
		(ik_spine_params){ .mix = k->weight, .bend_positive = k->bend_positive });
}

static int read_spine(const char *file, const char *body, size_t blen, const cJSON *root,
		      skel_clips **out, edit_error *err)
{
	const cJSON *doc = cJSON_GetObjectItemCaseSensitive(root, "skeleton");
	spine_import in;
	const char **names = NULL;
	skel_clips *sk = NULL;
	clip_names cn;
	int rc;

	if ((rc = spine_import_decode_tree(body, blen, root, &in, err)) != 0)
		return rc;
	rc = RIGD_E_NOMEM;
	if (!(sk = skel_clips_new(file, CLIP_FORMAT_SPINE, in.n_bones, in.n_slots)) ||
	    !(names = malloc(sizeof(*names) * (size_t)(in.n_bones + in.n_slots + 1))) ||
	    !iks_new(sk, in.n_iks))
		goto nomem;
	for (int i = 0; i < in.n_iks; i++)
		spine_ik_copy(&in, &in.iks[i], &sk->iks[i]);
	for (int i = 0; i < in.n_bones; i++) {
		const spine_bone *b = &in.bones[i];
		clip_channels *c = &sk->bones[i].setup;

		snprintf(sk->bones[i].id, sizeof(sk->bones[i].id), "%s", b->id);
		c->x = b->x;
		c->y = b->y;
		c->rotate_deg = b->rotation_deg;
		c->scale_x = b->scale[0];
		c->scale_y = b->scale[1];
		c->shear_x_deg = b->shear_deg[0];
		c->shear_y_deg = b->shear_deg[1];
		names[i] = b->name;
	}
	for (int i = 0; i < in.n_slots; i++) {
		snprintf(sk->slots[i].id, sizeof(sk->slots[i].id), "%s", in.slots[i].id);
		if (setup_group(&sk->slots[i], in.slots[i].group))
			goto nomem;
		names[in.n_bones + i] = in.slots[i].name;
	}
	cn = (clip_names){ names, in.n_bones, names + in.n_bones, in.n_slots };
	if ((rc = spine_clips_read(cJSON_GetObjectItemCaseSensitive(doc, "animations"), &cn,
				   &sk->clips, err)) != 0)
		goto fail;
	if ((rc = keys_to_groups(sk, names + in.n_bones, NULL, NULL)) != 0)
		goto nomem;
	*out = sk;
	sk = NULL;
	goto done;
nomem:
	rc = nomem(err);
fail:
	skel_clips_free(sk);
done:
	free(names);
	spine_import_release(&in);
	return rc;
}

/* The default skin of armature 'arm': named "" or "default", else the first. */
static const cJSON *default_skin(const cJSON *arm)
{
	const cJSON *skins = cJSON_GetObjectItemCaseSensitive(arm, "skin"), *s;

	cJSON_ArrayForEach(s, skins) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "name");

		if (!cJSON_IsString(n) || !n->valuestring[0] || !strcmp(n->valuestring, "default"))
			return s;
	}
	return cJSON_GetArrayItem(skins, 0);
}

/* Slot 'name''s displays' names in 'skin' (borrowed from the tree) into
 * *out (owned, NULL when none), their count in *n. */
static int skin_displays(const cJSON *skin, const char *name, const char ***out, int *n)
{
	const cJSON *e, *d;

	*out = NULL;
	*n = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(skin, "slot")) {
		const cJSON *sn = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(e, "display");
		int k = 0;

		if (!cJSON_IsString(sn) || strcmp(sn->valuestring, name) || !cJSON_IsArray(list))
			continue;
		if (!(*out = calloc((size_t)cJSON_GetArraySize(list) + 1, sizeof(**out))))
			return RIGD_E_NOMEM;
		cJSON_ArrayForEach(d, list) {
			const cJSON *dn = cJSON_GetObjectItemCaseSensitive(d, "name");

			(*out)[k++] = cJSON_IsString(dn) ? dn->valuestring : NULL;
		}
		*n = k;
		return 0;
	}
	return 0;
}

static int read_dragonbones(const char *file, const cJSON *root, skel_clips **out,
			    edit_error *err)
{
	const cJSON *doc = cJSON_GetObjectItemCaseSensitive(root, "skeleton");
	dragonbones_import in;
	const char **names = NULL, ***displays = NULL;
	int *n_displays = NULL;
	skel_clips *sk = NULL;
	const cJSON *arm;
	clip_names cn;
	int rc;

	if ((rc = dragonbones_import_decode_tree(root, &in, err)) != 0)
		return rc;
	arm = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "armature"),
				 in.armature_index);
	if (!(sk = skel_clips_new(file, CLIP_FORMAT_DRAGONBONES, in.n_bones, in.n_slots)) ||
	    !(names = malloc(sizeof(*names) * (size_t)(in.n_bones + in.n_slots + 1))) ||
	    !(displays = calloc((size_t)in.n_slots + 1, sizeof(*displays))) ||
	    !(n_displays = calloc((size_t)in.n_slots + 1, sizeof(*n_displays))) ||
	    !iks_new(sk, in.n_iks))
		goto nomem;
	for (int i = 0; i < in.n_iks; i++)
		dragonbones_ik_copy(&in, &in.iks[i], &sk->iks[i]);
	for (int i = 0; i < in.n_bones; i++) {
		const dragonbones_bone *b = &in.bones[i];
		clip_channels *c = &sk->bones[i].setup;

		snprintf(sk->bones[i].id, sizeof(sk->bones[i].id), "%s", b->id);
		c->x = b->x;
		c->y = b->y;
		c->rotate_deg = b->sky_deg;
		c->shear_x_deg = b->skx_deg - b->sky_deg;
		c->shear_y_deg = 0;
		c->scale_x = b->scx;
		c->scale_y = b->scy;
		names[i] = b->name;
	}
	for (int i = 0; i < in.n_slots; i++) {
		snprintf(sk->slots[i].id, sizeof(sk->slots[i].id), "%s", in.slots[i].id);
		if (setup_group(&sk->slots[i], in.slots[i].group) ||
		    skin_displays(default_skin(arm), in.slots[i].name, &displays[i], &n_displays[i]))
			goto nomem;
		names[in.n_bones + i] = in.slots[i].name;
	}
	cn = (clip_names){ names, in.n_bones, names + in.n_bones, in.n_slots };
	if ((rc = dragonbones_clips_read(cJSON_GetObjectItemCaseSensitive(arm, "animation"),
					 in.armature_index, dragonbones_frame_rate(doc, arm), &cn,
					 &sk->clips, err)) != 0)
		goto fail;
	if ((rc = keys_to_groups(sk, names + in.n_bones, (const char *const *const *)displays,
				 n_displays)) != 0)
		goto nomem;
	*out = sk;
	sk = NULL;
	rc = 0;
	goto done;
nomem:
	rc = nomem(err);
fail:
	skel_clips_free(sk);
done:
	for (int i = 0; displays && i < in.n_slots; i++)
		free(displays[i]);
	free(displays);
	free(n_displays);
	free(names);
	dragonbones_import_release(&in);
	return rc;
}

int skel_clips_read(int kind, const char *file, const char *bytes, size_t len, skel_clips **out,
		    edit_error *err)
{
	proto_limits lim = proto_limits_default();
	char *body = NULL;
	size_t blen;
	cJSON *root = NULL;
	int rc;

	*out = NULL;
	edit_error_clear(err);
	if (!skel_clips_kind(kind)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "kind", "asset '%s' is not a skeleton", file);
		return RIGD_E_BAD_FIELD;
	}
	if (wrap(bytes, len, &body, &blen))
		return nomem(err);
	/* One parse serves the importer's decoder and the clip reader. */
	lim.max_bytes = blen;
	if ((rc = proto_parse(body, blen, &lim, &root, err)) != 0)
		goto out;
	rc = kind == ASSET_SPINE ? read_spine(file, body, blen, root, out, err)
				 : read_dragonbones(file, root, out, err);
out:
	cJSON_Delete(root);
	free(body);
	return rc;
}
