/*
 * proto_clip.c: the JSON of clips: the clip op
 *   {"op":"clip","clip":"walk","time":0.4,"file"?:"spine.json","root"?:"hip","weight"?:1}
 * in and out, and the clip list of GET /api/scenes/{name}/clips (see
 * docs/protocol.md, "Clips").
 *
 * Decoding checks the JSON's shape and hands the values to the edit layer,
 * which validates them against the scene and its skeletons (edit_clip.c).
 * No cJSON tree leaves this file.
 */
#include "proto_internal.h"

#include "core/clip.h"
#include "core/err.h"
#include "core/skel_clips.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLIP_NAME_MAX SCENE_NAME_MAX  /* bytes of a clip's name in an op */

enum { C_OP, C_CLIP, C_TIME, C_FILE, C_ROOT, C_WEIGHT, C_COUNT };

static const char *const clip_keys[C_COUNT] = { "op", "clip", "time", "file", "root", "weight" };

int proto_decode_clip_op(const cJSON *item, int k, const proto_limits *lim, edit_batch *b,
			 edit_error *err)
{
	const cJSON *f[C_COUNT] = { 0 };
	proto_where w = { k, err };
	edit_op *op;
	int rc;

	if ((rc = proto_members(item, "ops", clip_keys, C_COUNT, f, &w)) != 0)
		return rc;
	if (!f[C_CLIP])
		return proto_bad_field(&w, "clip", "missing");
	if (!f[C_TIME])
		return proto_bad_field(&w, "time", "missing");
	if (!(op = edit_batch_add(b, EDIT_CLIP, ""))) {
		edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	/* From here the op belongs to 'b', which the caller releases on error. */
	if ((rc = proto_get_text(f[C_CLIP], "clip", CLIP_NAME_MAX, false, &op->name, &w)) != 0)
		return rc;
	op->fields |= EDIT_F_CLIP_NAME;
	if ((rc = proto_get_number(f[C_TIME], "time", &op->time_s, &w)) != 0)
		return rc;
	op->fields |= EDIT_F_CLIP_TIME;
	if (f[C_FILE]) {
		if ((rc = proto_get_text(f[C_FILE], "file", PROTO_ASSET_FILE_MAX, false, &op->mesh,
					 &w)) != 0)
			return rc;
		op->fields |= EDIT_F_CLIP_FILE;
	}
	if (f[C_ROOT]) {
		if ((rc = proto_get_id(f[C_ROOT], "root", false, lim->edit.max_id_len, op->root, &w)))
			return rc;
		op->fields |= EDIT_F_ROOT;
	}
	if (f[C_WEIGHT]) {
		if (!cJSON_IsNumber(f[C_WEIGHT]))
			return proto_bad_field(&w, "weight", "must be a number in [0, 1]");
		op->weight = f[C_WEIGHT]->valuedouble;
		op->fields |= EDIT_F_WEIGHT;
	}
	return 0;
}

/* ---------- writing ---------- */

/* "KEY":"VALUE" with a leading comma. */
static int put_member(proto_buf *b, const char *k, const char *value)
{
	return JSON_BUF_LIT(b, ",\"") || json_buf_puts(b, k) || JSON_BUF_LIT(b, "\":") ||
	       proto_buf_json_string(b, value ? value : "");
}

int proto_encode_clip_op(proto_buf *b, const edit_op *op)
{
	size_t start = b->len;

	if (JSON_BUF_LIT(b, "{\"op\":\"clip\"") || put_member(b, "clip", op->name) ||
	    JSON_BUF_LIT(b, ",\"time\":") || json_buf_number_or_null(b, op->time_s) ||
	    ((op->fields & EDIT_F_CLIP_FILE) && put_member(b, "file", op->mesh)) ||
	    ((op->fields & EDIT_F_ROOT) && put_member(b, "root", op->root)) ||
	    ((op->fields & EDIT_F_WEIGHT) &&
	     (JSON_BUF_LIT(b, ",\"weight\":") || json_buf_number_or_null(b, op->weight))) ||
	    JSON_BUF_LIT(b, "}")) {
		json_buf_truncate(b, start);
		return RIGD_E_NOMEM;
	}
	return 0;
}

/* One row of the list: a clip of skeleton 'sk'. */
static int put_clip(proto_buf *b, const skel_clips *sk, const clip *c, const clip_summary *r)
{
	char num[32];

	if (JSON_BUF_LIT(b, "{\"file\":") || proto_buf_json_string(b, sk->file) ||
	    put_member(b, "name", r->name) || JSON_BUF_LIT(b, ",\"duration\":") ||
	    json_buf_number_or_null(b, r->duration) || JSON_BUF_LIT(b, ",\"frame_rate\":") ||
	    json_buf_number_or_null(b, r->frame_rate))
		return RIGD_E_NOMEM;
	snprintf(num, sizeof(num), ",\"bones\":%d", r->n_bone_timelines);
	if (json_buf_puts(b, num))
		return RIGD_E_NOMEM;
	snprintf(num, sizeof(num), ",\"slots\":%d", r->n_slot_timelines);
	if (json_buf_puts(b, num))
		return RIGD_E_NOMEM;
	snprintf(num, sizeof(num), ",\"draw_order\":%d", r->n_order_keys);
	if (json_buf_puts(b, num) || JSON_BUF_LIT(b, ",\"unsampled\":["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < c->n_unsampled; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || proto_buf_json_string(b, c->unsampled[i]))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "]}");
}

int proto_encode_clips(proto_buf *b, const scene *s)
{
	const skel_set *ks = scene_skels(s);
	size_t start = b->len;
	bool first = true;

	if (JSON_BUF_LIT(b, "["))
		goto nomem;
	for (int i = 0; i < skel_set_count(ks); i++) {
		const skel_clips *sk = skel_set_at(ks, i);
		int n = sk->clips.n;
		clip_summary *rows = n ? malloc(sizeof(*rows) * (size_t)n) : NULL;

		if (n && !rows)
			goto nomem;
		clip_list(&sk->clips, rows, n);
		for (int j = 0; j < n; j++) {
			if ((!first && JSON_BUF_LIT(b, ",")) ||
			    put_clip(b, sk, &sk->clips.clips[j], &rows[j])) {
				free(rows);
				goto nomem;
			}
			first = false;
		}
		free(rows);
	}
	if (JSON_BUF_LIT(b, "]\n"))
		goto nomem;
	return 0;
nomem:
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}
