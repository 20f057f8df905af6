/*
 * proto_asset.c: assets in the protocol's JSON: on the log line of the
 * batch that stored them (export and import of a scene's log) and in the
 * asset list of GET /api/scenes/{name}/assets.
 *
 * Reads untrusted text (an imported log); it never judges the bytes
 * themselves, which log import passes through their kind's reader (the
 * SVG sanitiser, the PNG check, the skeleton readers).
 */
#include "base64.h"
#include "proto.h"
#include "proto_internal.h"
#include "svg.h"

#include "core/asset.h"
#include "core/err.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void proto_log_assets_free(proto_log_asset *a, int n)
{
	for (int i = 0; a && i < n; i++)
		free(a[i].bytes);
	free(a);
}

static bool sha256_hex_valid(const char *s)
{
	size_t n = strlen(s);

	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The member that carries the bytes of an asset of 'kind' on a log line. */
static const char *bytes_member(int kind)
{
	return kind == ASSET_SVG ? "svg" : kind == ASSET_PNG ? "base64" : "text";
}

/* One asset of an "assets" array into *a: {"file","sha256","svg"}, or
 * {"file","kind","sha256","text"|"base64"}. */
static int decode_asset(const cJSON *item, int k, proto_log_asset *a, const proto_where *w)
{
	static const char *const names[] = { "file", "sha256", "kind", "svg", "text", "base64" };
	const cJSON *f[6] = { 0 };
	char field[48], what[PROTO_ASSET_FILE_MAX + 200];
	int rc;

	snprintf(field, sizeof(field), "assets[%d]", k);
	if ((rc = proto_members(item, field, names, 6, f, w)) != 0)
		return rc;
	if (!f[0] || !f[1])
		return proto_bad_field(w, "assets", "an asset needs file and sha256");
	if (!cJSON_IsString(f[0]) || strlen(f[0]->valuestring) > PROTO_ASSET_FILE_MAX ||
	    !svg_file_name_valid(f[0]->valuestring))
		return proto_bad_field(w, "assets",
				       "file: 1 to 128 characters of [A-Za-z0-9_.-], not starting with a dot");
	if (!cJSON_IsString(f[1]) || !sha256_hex_valid(f[1]->valuestring))
		return proto_bad_field(w, "assets", "sha256: 64 lowercase hex digits");
	a->kind = ASSET_SVG;
	if (f[2] && (!cJSON_IsString(f[2]) || (a->kind = asset_kind_parse(f[2]->valuestring)) < 0)) {
		snprintf(what, sizeof(what), "asset '%s': kind: one of svg, png, spine, spine-atlas, "
			 "dragonbones, dragonbones-atlas", f[0]->valuestring);
		return proto_bad_field(w, "assets", what);
	}
	const char *want = bytes_member(a->kind);
	const cJSON *v = NULL;
	int given = 0;
	for (int i = 3; i < 6; i++)
		if (f[i]) {
			given++;
			if (!strcmp(names[i], want))
				v = f[i];
		}
	if (given != 1 || !v) {
		snprintf(what, sizeof(what), "asset '%s': a %s asset carries its bytes in \"%s\", "
			 "and only there", f[0]->valuestring, asset_kind_name(a->kind), want);
		return proto_bad_field(w, "assets", what);
	}
	if (!cJSON_IsString(v)) {
		snprintf(what, sizeof(what), "asset '%s': %s: a string", f[0]->valuestring, want);
		return proto_bad_field(w, "assets", what);
	}
	snprintf(a->file, sizeof(a->file), "%s", f[0]->valuestring);
	snprintf(a->sha256, sizeof(a->sha256), "%s", f[1]->valuestring);
	if (a->kind == ASSET_PNG) {
		unsigned char *out = NULL;
		snprintf(field, sizeof(field), "assets[%d].base64", k);
		rc = base64_decode(v->valuestring, strlen(v->valuestring),
				   PROTO_LOG_ASSET_MAX_BYTES, field, &out, &a->len, w->err);
		if (rc) {
			if (rc != RIGD_E_NOMEM) {
				snprintf(what, sizeof(what), "asset '%s': %.150s", a->file,
					 w->err->message);
				return proto_bad_field(w, "assets", what);
			}
			return rc;
		}
		a->bytes = (char *)out;
		return 0;
	}
	a->len = strlen(v->valuestring);
	a->bytes = malloc(a->len + 1);
	if (!a->bytes) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	memcpy(a->bytes, v->valuestring, a->len + 1);
	return 0;
}

static int decode_assets(const cJSON *arr, proto_log_asset **out, int *n_out,
			 const proto_where *w)
{
	int n = cJSON_GetArraySize(arr), k = 0, rc = 0;
	const cJSON *item;

	if (!cJSON_IsArray(arr))
		return proto_bad_field(w, "assets", "an array");
	if (n == 0)
		return 0;
	proto_log_asset *a = calloc((size_t)n, sizeof(*a));
	if (!a) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	cJSON_ArrayForEach(item, arr) {
		if ((rc = decode_asset(item, k, &a[k], w)) != 0)
			break;
		k++;
	}
	if (rc) {
		proto_log_assets_free(a, k + 1);
		return rc;
	}
	*out = a;
	*n_out = n;
	return 0;
}

/* The "undo" or "redo" member of the line of batch 'seq' (either may be
 * NULL, not both) into out->kind and out->target: the seq of an earlier
 * batch, on the line of a client's batch, never both. */
static int decode_kind(const cJSON *undo, const cJSON *redo, int64_t seq, proto_log_line *out,
		       const proto_where *w)
{
	const char *field = undo ? "undo" : "redo";
	char what[96];

	if (undo && redo)
		return proto_bad_field(w, "redo", "a line is an undo or a redo, not both");
	if (!out->batch.client[0])
		return proto_bad_field(w, field, "an undo or a redo is a client's: the line needs "
				       "a client");
	if (seq < 2)
		return proto_bad_field(w, field, "the seq of an earlier batch, and the line of seq 1 "
				       "has none");
	snprintf(what, sizeof(what), "the seq of an earlier batch: an integer 1..%lld",
		 (long long)(seq - 1));
	const cJSON *v = undo ? undo : redo;
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= (double)(seq - 1)) ||
	    v->valuedouble != (double)(int64_t)v->valuedouble)
		return proto_bad_field(w, field, what);
	out->target = (int64_t)v->valuedouble;
	out->kind = undo ? PROTO_LOG_UNDO : PROTO_LOG_REDO;
	return 0;
}

int proto_decode_log_line_assets(const char *json, size_t len, const proto_limits *lim,
				 proto_log_line *out, proto_log_asset **assets, int *n_assets,
				 edit_error *err)
{
	static const char *const names[] = { "seq", "time", "client", "client_seq", "ops", "assets",
					     "undo", "redo" };
	proto_limits defaults = proto_limits_default();
	const cJSON *f[8] = { 0 };
	cJSON *root;
	proto_where w = { -1, err };
	int64_t seq = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	edit_batch_init(&out->batch);
	edit_error_clear(err);
	*assets = NULL;
	*n_assets = 0;
	if (!lim)
		lim = &defaults;
	if ((rc = proto_parse(json, len, lim, &root, err)) != 0)
		return rc;
	if ((rc = proto_members(root, "line", names, 8, f, &w)) != 0)
		goto out;
	if (!f[0] || !f[1] || !f[4]) {
		rc = proto_bad_field(&w, !f[0] ? "seq" : !f[1] ? "time" : "ops", "missing");
		goto out;
	}
	if ((rc = proto_get_int(f[0], "seq", 1, EXACT_INT_MAX, &seq, &w)) != 0 ||
	    (rc = proto_get_int(f[1], "time", -EXACT_INT_MAX, EXACT_INT_MAX, &out->time_us,
				&w)) != 0 ||
	    (f[2] && (rc = proto_get_id(f[2], "client", true, lim->edit.max_id_len,
					out->batch.client, &w)) != 0) ||
	    (f[3] && (rc = proto_decode_client_seq(f[3], &out->batch, &w)) != 0) ||
	    (rc = proto_decode_op_array(f[4], lim, &out->batch, err)) != 0 ||
	    (f[5] && (rc = decode_assets(f[5], assets, n_assets, &w)) != 0) ||
	    ((f[6] || f[7]) && (rc = decode_kind(f[6], f[7], seq, out, &w)) != 0))
		goto out;
	out->seq = (uint64_t)seq;
out:
	cJSON_Delete(root);
	if (rc) {
		edit_batch_release(&out->batch);
		proto_log_assets_free(*assets, *n_assets);
		*assets = NULL;
		*n_assets = 0;
		out->seq = 0;
		out->time_us = 0;
		out->kind = PROTO_LOG_EDIT;
		out->target = 0;
	}
	return rc;
}

int proto_encode_log_line_assets(proto_buf *b, uint64_t seq, int64_t time_us,
				 const edit_batch *batch, const proto_log_asset *a, int n)
{
	return proto_encode_log_line_kind(b, seq, time_us, batch, PROTO_LOG_EDIT, 0, a, n);
}

int proto_encode_log_line_kind(proto_buf *b, uint64_t seq, int64_t time_us,
			       const edit_batch *batch, int kind, int64_t target,
			       const proto_log_asset *a, int n)
{
	size_t start = b->len;
	int rc = proto_encode_log_line_head(b, seq, time_us, batch, kind, target);

	if (rc || n == 0)
		return rc;
	/* The line ends "}\n": the assets go in before the brace. */
	json_buf_truncate(b, b->len - 2);
	if (JSON_BUF_LIT(b, ",\"assets\":["))
		goto fail;
	for (int i = 0; i < n; i++) {
		/* An SVG's entry is the one schema 5 wrote: no kind. */
		if ((i && JSON_BUF_LIT(b, ",")) || JSON_BUF_LIT(b, "{\"file\":") ||
		    json_buf_string(b, a[i].file, 0) ||
		    (a[i].kind != ASSET_SVG &&
		     (JSON_BUF_LIT(b, ",\"kind\":") ||
		      json_buf_string(b, asset_kind_name(a[i].kind), 0))) ||
		    JSON_BUF_LIT(b, ",\"sha256\":") || json_buf_string(b, a[i].sha256, 0) ||
		    JSON_BUF_LIT(b, ",\"") || json_buf_puts(b, bytes_member(a[i].kind)) ||
		    JSON_BUF_LIT(b, "\":"))
			goto fail;
		if (a[i].kind == ASSET_PNG ? base64_encode_json(b, a[i].bytes, a[i].len)
					   : json_buf_string(b, a[i].bytes, JSON_STR_SHORT_ESCAPES))
			goto fail;
		if (JSON_BUF_LIT(b, "}"))
			goto fail;
	}
	if (JSON_BUF_LIT(b, "]}\n"))
		goto fail;
	return 0;
fail:
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}

int proto_encode_asset_list(proto_buf *b, const proto_asset_info *a, int n)
{
	size_t start = b->len;

	if (JSON_BUF_LIT(b, "["))
		goto fail;
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || JSON_BUF_LIT(b, "{\"file\":") ||
		    json_buf_string(b, a[i].file, 0) || JSON_BUF_LIT(b, ",\"kind\":") ||
		    json_buf_string(b, asset_kind_name(a[i].kind), 0) ||
		    JSON_BUF_LIT(b, ",\"sha256\":") ||
		    json_buf_string(b, a[i].sha256, 0) || JSON_BUF_LIT(b, ",\"bytes\":") ||
		    json_buf_int(b, a[i].bytes) || JSON_BUF_LIT(b, ",\"seq\":") ||
		    json_buf_int(b, a[i].seq) || JSON_BUF_LIT(b, "}"))
			goto fail;
	if (JSON_BUF_LIT(b, "]"))
		goto fail;
	return 0;
fail:
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}
