/*
 * proto_msg.c: websocket messages in (proto_decode_msg, see proto.h): the
 * "type" field picks which members a message takes and needs, and the
 * field readers of proto_decode.c read them; also the body of a scene
 * create with its dims (proto_decode_scene_create_dims). Like every decoder
 * it never trusts its input and never keeps a cJSON tree past its return.
 */
#include "proto_bin.h"
#include "proto_internal.h"

#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- reading: websocket messages ---------- */

enum {
	M_TYPE, M_SCENE, M_REQ, M_OPS, M_CLIENT, M_CLIENT_SEQ, M_SELECTION, M_NAME, M_TOKEN,
	M_FORMAT, M_VP, M_PLANES, M_VIEWPORT, M_MIN_PX, M_CLEAR, M_ALWAYS, M_COUNT
};

static const char *const msg_keys[M_COUNT] = {
	"type", "scene", "req", "ops", "client", "client_seq", "selection", "name", "token",
	"format", "vp", "planes", "viewport", "min_px", "clear", "always",
};

static const char *const type_names[] = {
	NULL, "subscribe", "unsubscribe", "edit", "undo", "redo", "presence", "auth", "view",
};

/* Members each type accepts, and those it requires. */
#define BIT(k) (1u << (k))
static const unsigned type_allowed[] = {
	0,
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_FORMAT),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_OPS) | BIT(M_CLIENT) | BIT(M_CLIENT_SEQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_CLIENT) | BIT(M_CLIENT_SEQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_CLIENT) | BIT(M_CLIENT_SEQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_SELECTION) | BIT(M_NAME),
	BIT(M_TYPE) | BIT(M_REQ) | BIT(M_TOKEN),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_VP) | BIT(M_PLANES) | BIT(M_VIEWPORT) |
		BIT(M_MIN_PX) | BIT(M_CLEAR) | BIT(M_ALWAYS),
};
static const unsigned type_required[] = {
	0,
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_OPS),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_SELECTION),
	BIT(M_TYPE) | BIT(M_TOKEN),
	BIT(M_TYPE) | BIT(M_SCENE),
};

static int decode_req(const cJSON *item, proto_req *req, const proto_where *w)
{
	memset(req, 0, sizeof(*req));
	if (cJSON_IsNull(item))
		return 0;
	if (cJSON_IsString(item)) {
		size_t n = strlen(item->valuestring);

		if (n > PROTO_REQ_MAX)
			return proto_bad_field(w, "req", "longer than 64 bytes");
		memcpy(req->str, item->valuestring, n + 1);
		req->is_string = true;
		req->present = true;
		return 0;
	}
	if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) ||
	    item->valuedouble != trunc(item->valuedouble) || item->valuedouble < 0 ||
	    item->valuedouble > EXACT_INT_MAX)
		return proto_bad_field(w, "req", "must be an integer 0..2^53-1 or a string");
	req->num = (int64_t)item->valuedouble;
	req->present = true;
	return 0;
}

/* An array of at most 'max' ids in member 'field' into a new array *out
 * (NULL when empty) of *n; 'what' names the ids in the limit's error. */
static int decode_ids(const cJSON *arr, const char *field, int max, const char *what,
		      const proto_limits *lim, edit_id **out, int *n_out, const proto_where *w)
{
	const cJSON *e;
	int n = 0, rc;

	if (!cJSON_IsArray(arr))
		return proto_bad_field(w, field, "must be an array of ids");
	cJSON_ArrayForEach(e, arr)
		n++;
	if (n > max) {
		edit_error_set(w->err, RIGD_E_LIMIT, -1, field, "%d ids %s; the limit is %d", n, what,
			       max);
		return RIGD_E_LIMIT;
	}
	if (n && !(*out = calloc((size_t)n, sizeof(edit_id)))) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	cJSON_ArrayForEach(e, arr) {
		/* The array was counted above: the slots hold every element. */
		assert(*n_out < n);
		if ((rc = proto_get_id(e, field, false, lim->edit.max_id_len, (*out)[*n_out].s,
				       w)) != 0)
			return rc;
		(*n_out)++;
	}
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	return strcmp(((const edit_id *)a)->s, ((const edit_id *)b)->s);
}

/* A view's "always": its ids sorted and each once, so that two views
 * naming the same nodes in another order are the same view. */
static int decode_always(const cJSON *arr, const proto_limits *lim, proto_msg *m,
			 const proto_where *w)
{
	int rc = decode_ids(arr, "always", PROTO_VIEW_ALWAYS_MAX, "always sent", lim, &m->always,
			    &m->n_always, w);
	int kept = 0;

	if (rc || m->n_always == 0)
		return rc;
	qsort(m->always, (size_t)m->n_always, sizeof(edit_id), id_cmp);
	for (int i = 0; i < m->n_always; i++)
		if (kept == 0 || strcmp(m->always[kept - 1].s, m->always[i].s) != 0)
			m->always[kept++] = m->always[i];
	m->n_always = kept;
	return 0;
}

static void msg_init(proto_msg *m)
{
	memset(m, 0, sizeof(*m));
	edit_batch_init(&m->batch);
}

void proto_msg_release(proto_msg *m)
{
	if (!m)
		return;
	edit_batch_release(&m->batch);
	free(m->selection);
	free(m->always);
	free(m->name);
	free(m->token);
	msg_init(m);
}

/*
 * An auth token: a string of 1..PROTO_TOKEN_MAX visible ASCII characters,
 * copied into m->token. The errors describe the token, never quote it: it
 * is a secret, and error replies may end up in a client's logs.
 */
static int decode_token(const cJSON *item, proto_msg *m, const proto_where *w)
{
	const char *v;
	size_t n;

	if (!cJSON_IsString(item))
		return proto_bad_field(w, "token", "must be a string");
	v = item->valuestring;
	n = strlen(v);
	if (n == 0 || n > PROTO_TOKEN_MAX)
		return proto_bad_field(w, "token", "must be 1 to 256 characters");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
			return proto_bad_field(w, "token",
					       "must be visible ASCII characters, no spaces");
	if (!(m->token = malloc(n + 1))) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	memcpy(m->token, v, n + 1);
	return 0;
}

/*
 * The message's type from f[M_TYPE] into *type, then the members that type
 * takes and needs: bad_field, unknown_type or 0.
 */
static int check_type(const cJSON *const *f, int *type, const proto_where *w)
{
	unsigned present = 0, extra, missing;

	*type = 0;
	if (!f[M_TYPE] || !cJSON_IsString(f[M_TYPE]))
		return proto_bad_field(w, "type", f[M_TYPE] ? "must be a string" : "missing");
	for (int t = PROTO_SUBSCRIBE; t <= PROTO_VIEW; t++)
		if (strcmp(f[M_TYPE]->valuestring, type_names[t]) == 0)
			*type = t;
	if (!*type) {
		char q[72];

		edit_error_set(w->err, RIGD_E_UNKNOWN_TYPE, -1, "type", "unknown message type '%s'",
			       proto_safe_key(f[M_TYPE]->valuestring, q, sizeof(q)));
		return RIGD_E_UNKNOWN_TYPE;
	}
	for (int j = 0; j < M_COUNT; j++)
		if (f[j])
			present |= BIT(j);
	if ((extra = present & ~type_allowed[*type]) != 0) {
		char what[48];

		snprintf(what, sizeof(what), "not allowed in %s %s message",
			 strchr("aeiou", type_names[*type][0]) ? "an" : "a", type_names[*type]);
		return proto_bad_field(w, msg_keys[__builtin_ctz(extra)], what);
	}
	if ((missing = type_required[*type] & ~present) != 0)
		return proto_bad_field(w, msg_keys[__builtin_ctz(missing)], "missing");
	return 0;
}

/* The members after type and req (f from proto_members) into 'out'. */
static int decode_msg_fields(const cJSON *const *f, const proto_limits *lim, proto_msg *out,
			     const proto_where *w)
{
	int rc = 0;

	if (f[M_SCENE] && (rc = proto_get_scene_name(f[M_SCENE], "scene", out->scene, w)) != 0)
		return rc;
	if (f[M_TOKEN] && (rc = decode_token(f[M_TOKEN], out, w)) != 0)
		return rc;
	if (f[M_CLIENT] && (rc = proto_get_id(f[M_CLIENT], "client", true, lim->edit.max_id_len,
					      out->batch.client, w)) != 0)
		return rc;
	if (f[M_CLIENT_SEQ] && (rc = proto_decode_client_seq(f[M_CLIENT_SEQ], &out->batch, w)) != 0)
		return rc;
	if (f[M_OPS] && (rc = proto_decode_op_array(f[M_OPS], lim, &out->batch, w->err)) != 0)
		return rc;
	if (f[M_SELECTION] && (rc = decode_ids(f[M_SELECTION], "selection", lim->max_selection,
					       "selected", lim, &out->selection, &out->n_selection,
					       w)) != 0)
		return rc;
	if (f[M_ALWAYS] && (rc = decode_always(f[M_ALWAYS], lim, out, w)) != 0)
		return rc;
	if (f[M_FORMAT] && (!cJSON_IsString(f[M_FORMAT]) ||
			    proto_format_parse(f[M_FORMAT]->valuestring, &out->format) != 0))
		return proto_bad_field(w, "format", "must be \"json\", \"f32\" or \"f64\"");
	if (f[M_NAME])
		rc = proto_get_text(f[M_NAME], "name", SCENE_NAME_MAX, true, &out->name, w);
	if (rc == 0 && out->type == PROTO_VIEW)
		rc = proto_decode_view(f[M_VP], f[M_PLANES], f[M_VIEWPORT], f[M_MIN_PX], f[M_CLEAR],
				       f[M_ALWAYS], out, w);
	return rc;
}

int proto_decode_msg(const char *json, size_t len, const proto_limits *lim, proto_msg *out,
		     proto_req *req_out, edit_error *err)
{
	proto_limits defaults = proto_limits_default();
	const cJSON *f[M_COUNT] = { 0 };
	cJSON *root;
	proto_where w = { -1, err };
	int rc, type = 0;

	msg_init(out);
	edit_error_clear(err);
	if (req_out)
		memset(req_out, 0, sizeof(*req_out));
	if (!lim)
		lim = &defaults;
	if ((rc = proto_parse(json, len, lim, &root, err)) != 0)
		return rc;
	if ((rc = proto_members(root, "message", msg_keys, M_COUNT, f, &w)) != 0) {
		/* Even with an unknown member, a good req lets the reply carry it
		 * (the first, should req itself be the repeated member). */
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(root, "req");
		proto_where quiet = { -1, NULL };

		if (req && req_out && decode_req(req, req_out, &quiet) != 0)
			memset(req_out, 0, sizeof(*req_out));
		goto out;
	}
	if (f[M_REQ]) {
		if ((rc = decode_req(f[M_REQ], &out->req, &w)) != 0)
			goto out;
		if (req_out)
			*req_out = out->req;
	}
	if ((rc = check_type(f, &type, &w)) != 0)
		goto out;
	out->type = type;
	rc = decode_msg_fields(f, lim, out, &w);
out:
	cJSON_Delete(root);
	if (rc)
		proto_msg_release(out);
	return rc;
}

/* ---------- a client's look at what the server sent ---------- */

/* True when 'item' is a number that is an integer an int64_t holds. */
static bool exact_int(const cJSON *item, int64_t *out)
{
	double v;

	if (!cJSON_IsNumber(item))
		return false;
	v = item->valuedouble;
	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) || v != floor(v))
		return false;
	*out = (int64_t)v;
	return true;
}

int proto_peek_reply(const char *json, size_t len, proto_reply_head *out)
{
	cJSON *root;
	const cJSON *type;

	memset(out, 0, sizeof(*out));
	root = json ? cJSON_ParseWithLength(json, len) : NULL;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return RIGD_E_BAD_JSON;
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (cJSON_IsString(type))
		snprintf(out->type, sizeof(out->type), "%s", type->valuestring);
	out->has_req = exact_int(cJSON_GetObjectItemCaseSensitive(root, "req"), &out->req);
	out->has_seq = exact_int(cJSON_GetObjectItemCaseSensitive(root, "seq"), &out->seq);
	cJSON_Delete(root);
	return 0;
}

/* POST /api/scenes {"name","dims"?}: the name and the scene's dims (3
 * when absent). */
int proto_decode_scene_create_dims(const char *json, size_t len,
				   char name_out[SCENE_ID_MAX + 1], int *dims, edit_error *err)
{
	static const char *const names[] = { "name", "dims" };
	proto_limits lim = proto_limits_default();
	const cJSON *f[2] = { 0 };
	cJSON *root;
	proto_where w = { -1, err };
	int64_t d = 3;
	int rc;

	name_out[0] = '\0';
	*dims = 3;
	edit_error_clear(err);
	if ((rc = proto_parse(json, len, &lim, &root, err)) != 0)
		return rc;
	if ((rc = proto_members(root, "body", names, 2, f, &w)) == 0)
		rc = f[0] ? proto_get_scene_name(f[0], "name", name_out, &w)
			  : proto_bad_field(&w, "name", "missing");
	if (rc == 0 && f[1] && (rc = proto_get_int(f[1], "dims", 2, 3, &d, &w)) != 0)
		rc = proto_bad_field(&w, "dims", "must be 2 or 3");
	cJSON_Delete(root);
	if (rc)
		name_out[0] = '\0';
	else
		*dims = (int)d;
	return rc;
}
