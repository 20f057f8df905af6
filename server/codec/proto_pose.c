/*
 * proto_pose.c: the JSON of poses: the pose ops (pose_save, pose_set,
 * pose_delete, blend) in and out, and the pose list of
 * GET /api/scenes/{name}/poses (see docs/protocol.md, "Poses").
 *
 * Decoding checks the JSON's shape and hands the values to the edit layer,
 * which validates them against the scene; a pose_set's channels are sorted
 * by node id here, so the op the core sees is in its canonical order.
 * No cJSON tree leaves this file.
 */
#include "proto_internal.h"

#include "core/err.h"
#include "core/pose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_OP, P_POSE, P_ROOT, P_A, P_B, P_T, P_CHANNELS, P_COUNT };

static const char *const pose_keys[P_COUNT] = { "op", "pose", "root", "a", "b", "t", "channels" };

/* The members each pose op takes (bit j = pose_keys[j]) and needs. */
static unsigned keys_allowed(int kind)
{
	switch (kind) {
	case EDIT_POSE_SAVE: return 1u << P_POSE | 1u << P_ROOT;
	case EDIT_POSE_SET: return 1u << P_POSE | 1u << P_CHANNELS;
	case EDIT_POSE_DELETE: return 1u << P_POSE;
	default: return 1u << P_ROOT | 1u << P_A | 1u << P_B | 1u << P_T;
	}
}

static unsigned keys_required(int kind)
{
	return kind == EDIT_BLEND ? keys_allowed(kind) : keys_allowed(kind) & ~(1u << P_ROOT);
}

/* 'n' JSON numbers of array 'item' into 'out'. */
static int get_array(const cJSON *item, const char *field, double *out, int n,
		     const proto_where *w)
{
	const cJSON *e;
	int i = 0;

	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != n)
		return proto_bad_field(w, field, n == 2   ? "must be an array of 2 numbers"
						 : n == 3 ? "must be an array of 3 numbers"
							  : "must be an array of 4 numbers");
	cJSON_ArrayForEach(e, item) {
		if (!cJSON_IsNumber(e))
			return proto_bad_field(w, field, "must hold numbers");
		out[i++] = e->valuedouble;
	}
	return 0;
}

static int cmp_channel(const void *x, const void *y)
{
	return strcmp(((const pose_channel *)x)->id, ((const pose_channel *)y)->id);
}

/* One channel {"t","r","s","shear"?} (the first three required; shear
 * [shx, shy] degrees, +0 +0 when absent) of node 'id'. */
static int decode_channel(const cJSON *item, pose_channel *c, const proto_where *w)
{
	static const char *const names[4] = { "t", "r", "s", "shear" };
	const cJSON *f[4] = { 0 };
	double v[4];
	int rc;

	if ((rc = proto_members(item, "channels", names, 4, f, w)) != 0)
		return rc;
	if (!f[0] || !f[1] || !f[2])
		return proto_bad_field(w, "channels", "each node needs t, r and s");
	if ((rc = get_array(f[0], "channels", v, 3, w)) != 0)
		return rc;
	c->t = vec3_make(v[0], v[1], v[2]);
	if ((rc = get_array(f[1], "channels", v, 4, w)) != 0)
		return rc;
	c->r = (quat){ v[0], v[1], v[2], v[3] };
	if ((rc = get_array(f[2], "channels", v, 3, w)) != 0)
		return rc;
	c->s = vec3_make(v[0], v[1], v[2]);
	if (f[3] && (rc = get_array(f[3], "channels", c->shear, 2, w)) != 0)
		return rc;
	return 0;
}

/* The channels object {"id": {...}, ...} into the op (sorted by id). */
static int decode_channels(const cJSON *item, edit_op *op, const proto_where *w)
{
	const cJSON *e;
	int n = 0, rc;

	if (!cJSON_IsObject(item))
		return proto_bad_field(w, "channels", "must be an object of node ids");
	cJSON_ArrayForEach(e, item)
		n++;
	op->fields |= EDIT_F_CHANNELS;
	if (n == 0)
		return 0;
	if (!(op->channels = calloc((size_t)n, sizeof(pose_channel)))) {
		edit_error_set(w->err, RIGD_E_NOMEM, w->op, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	cJSON_ArrayForEach(e, item) {
		pose_channel *c = &op->channels[op->n_channels];
		char q[72];

		if (!scene_id_valid(e->string)) {
			edit_error_set(w->err, RIGD_E_BAD_ID, w->op, "channels", "channels: bad id '%s': %s",
				       proto_safe_key(e->string, q, sizeof(q)), err_str(RIGD_E_BAD_ID));
			return RIGD_E_BAD_ID;
		}
		strcpy(c->id, e->string);
		op->n_channels++;
		if ((rc = decode_channel(e, c, w)) != 0)
			return rc;
	}
	qsort(op->channels, (size_t)n, sizeof(pose_channel), cmp_channel);
	return 0;
}

/* The named members of op object 'item' into op. */
static int decode_members(const cJSON *const *f, const proto_limits *lim, edit_op *op,
			  const proto_where *w)
{
	int rc;

	if (f[P_ROOT] && op->kind == EDIT_POSE_SAVE) {
		if ((rc = proto_get_id(f[P_ROOT], "root", false, lim->edit.max_id_len, op->root, w)))
			return rc;
		op->fields |= EDIT_F_ROOT;
	}
	if (f[P_A]) {
		if ((rc = proto_get_id(f[P_A], "a", false, lim->edit.max_id_len, op->pose_a, w)))
			return rc;
		op->fields |= EDIT_F_POSE_A;
	}
	if (f[P_B]) {
		if ((rc = proto_get_id(f[P_B], "b", false, lim->edit.max_id_len, op->pose_b, w)))
			return rc;
		op->fields |= EDIT_F_POSE_B;
	}
	if (f[P_T]) {
		if (!cJSON_IsNumber(f[P_T]))
			return proto_bad_field(w, "t", "must be a number in [0, 1]");
		op->weight = f[P_T]->valuedouble;
		op->fields |= EDIT_F_WEIGHT;
	}
	if (f[P_CHANNELS])
		return decode_channels(f[P_CHANNELS], op, w);
	return 0;
}

int proto_decode_pose_op(const cJSON *item, int k, int kind, const proto_limits *lim,
			 edit_batch *b, edit_error *err)
{
	const cJSON *f[P_COUNT] = { 0 };
	proto_where w = { k, err };
	unsigned allowed = keys_allowed(kind), required = keys_required(kind);
	char id[SCENE_ID_MAX + 1];
	const char *id_key = kind == EDIT_BLEND ? "root" : "pose";
	edit_op *op;
	int rc;

	if ((rc = proto_members(item, "ops", pose_keys, P_COUNT, f, &w)) != 0)
		return rc;
	for (int j = P_POSE; j < P_COUNT; j++) {
		char what[48];

		if (f[j] && !(allowed & 1u << j)) {
			snprintf(what, sizeof(what), "not allowed in a %s op", edit_op_name(kind));
			return proto_bad_field(&w, pose_keys[j], what);
		}
		if (!f[j] && (required & 1u << j))
			return proto_bad_field(&w, pose_keys[j], "missing");
	}
	if ((rc = proto_get_id(f[kind == EDIT_BLEND ? P_ROOT : P_POSE], id_key, false,
			       lim->edit.max_id_len, id, &w)) != 0)
		return rc;
	if (!(op = edit_batch_add(b, kind, id))) {
		edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	/* From here the op belongs to 'b', which the caller releases on error. */
	return decode_members(f, lim, op, &w);
}

/* ---------- writing ---------- */

static int put_nums(proto_buf *b, const double *v, int n)
{
	if (JSON_BUF_LIT(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || json_buf_number_or_null(b, v[i]))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "]");
}

/* "KEY":"VALUE" with a leading comma. */
static int put_member(proto_buf *b, const char *k, const char *value)
{
	return JSON_BUF_LIT(b, ",\"") || json_buf_puts(b, k) || JSON_BUF_LIT(b, "\":") ||
	       proto_buf_json_string(b, value);
}

/* {"t":[..],"r":[..],"s":[..]}, with "shear" when it is not +0 +0 (so a
 * pose without one reads as before shear was posed) and "angle" in a 2D
 * scene (dims 2). */
static int put_channel(proto_buf *b, const pose_channel *c, int dims)
{
	const double t[3] = { c->t.x, c->t.y, c->t.z }, r[4] = { c->r.x, c->r.y, c->r.z, c->r.w };
	const double s[3] = { c->s.x, c->s.y, c->s.z };

	if (JSON_BUF_LIT(b, "{\"t\":") || put_nums(b, t, 3) || JSON_BUF_LIT(b, ",\"r\":") ||
	    put_nums(b, r, 4) || JSON_BUF_LIT(b, ",\"s\":") || put_nums(b, s, 3))
		return RIGD_E_NOMEM;
	if (pose_channel_sheared(c) &&
	    (JSON_BUF_LIT(b, ",\"shear\":") || put_nums(b, c->shear, 2)))
		return RIGD_E_NOMEM;
	if (dims == 2 && (JSON_BUF_LIT(b, ",\"angle\":") ||
			  json_buf_number_or_null(b, quat_to_angle2d_deg(c->r))))
		return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "}");
}

/* {"ID":{channel},...} */
static int put_channels(proto_buf *b, const pose_channel *ch, int n, int dims)
{
	if (JSON_BUF_LIT(b, "{"))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || proto_buf_json_string(b, ch[i].id) ||
		    JSON_BUF_LIT(b, ":") || put_channel(b, &ch[i], dims))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "}");
}

int proto_encode_pose_op(proto_buf *b, const edit_op *op)
{
	size_t start = b->len;
	int rc;

	if (op->kind == EDIT_CLIP)
		return proto_encode_clip_op(b, op);
	if (JSON_BUF_LIT(b, "{\"op\":") || proto_buf_json_string(b, edit_op_name(op->kind)))
		goto nomem;
	if (op->kind == EDIT_BLEND)
		rc = put_member(b, "root", op->id) || put_member(b, "a", op->pose_a) ||
		     put_member(b, "b", op->pose_b) || JSON_BUF_LIT(b, ",\"t\":") ||
		     json_buf_number_or_null(b, op->weight);
	else
		rc = put_member(b, "pose", op->id) ||
		     ((op->fields & EDIT_F_ROOT) && put_member(b, "root", op->root)) ||
		     ((op->fields & EDIT_F_CHANNELS) &&
		      (JSON_BUF_LIT(b, ",\"channels\":") ||
		       put_channels(b, op->channels, op->n_channels, 3)));
	if (rc || JSON_BUF_LIT(b, "}"))
		goto nomem;
	return 0;
nomem:
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}

int proto_encode_poses(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	const pose_set *ps = scene_poses_c(s);
	size_t start = b->len;

	if (JSON_BUF_LIT(b, "{\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    JSON_BUF_LIT(b, ",\"seq\":") || json_buf_int(b, (int64_t)seq) ||
	    JSON_BUF_LIT(b, ",\"poses\":["))
		goto nomem;
	for (int i = 0; i < pose_count(ps); i++) {
		const pose *p = pose_at(ps, i);
		bool first = true;

		if ((i && JSON_BUF_LIT(b, ",")) || JSON_BUF_LIT(b, "{\"name\":") ||
		    proto_buf_json_string(b, p->name) || JSON_BUF_LIT(b, ",\"nodes\":") ||
		    put_channels(b, p->ch, p->n, scene_dims(s)) || JSON_BUF_LIT(b, ",\"missing\":["))
			goto nomem;
		/* The nodes the pose names that the scene no longer holds: a
		 * blend leaves them out. */
		for (int k = 0; k < p->n; k++) {
			if (scene_find(s, p->ch[k].id) >= 0)
				continue;
			if ((!first && JSON_BUF_LIT(b, ",")) || proto_buf_json_string(b, p->ch[k].id))
				goto nomem;
			first = false;
		}
		if (JSON_BUF_LIT(b, "]}"))
			goto nomem;
	}
	if (JSON_BUF_LIT(b, "]}"))
		goto nomem;
	return 0;
nomem:
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}
