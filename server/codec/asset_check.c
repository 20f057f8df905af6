/*
 * asset_check.c: an asset's bytes read again by its kind's reader
 * (asset_check.h). Each kind's reader is the one an import uses, so
 * "accepted here" means "what an import would have stored".
 */
#include "asset_check.h"

#include "atlas.h"
#include "dragonbones.h"
#include "json.h"
#include "png.h"
#include "spine.h"
#include "svg.h"

#include "core/asset.h"
#include "core/err.h"
#include "core/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void asset_checked_release(asset_checked *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n_ids; i++)
		free(c->ids[i]);
	free(c->ids);
	c->ids = NULL;
	c->n_ids = 0;
}

char *asset_checked_lines(const asset_checked *c, size_t *len)
{
	size_t n = 0;
	char *s, *p;

	for (int i = 0; i < c->n_ids; i++)
		n += strlen(c->ids[i]) + 1;
	if (!(s = malloc(n + 1)))
		return NULL;
	p = s;
	for (int i = 0; i < c->n_ids; i++) {
		size_t k = strlen(c->ids[i]);
		memcpy(p, c->ids[i], k);
		p[k] = '\n';
		p += k + 1;
	}
	*p = '\0';
	*len = n;
	return s;
}

/* Whether 'len' bytes have the digest 'sha256' (lowercase hex). */
static bool digest_is(const void *bytes, size_t len, const char *sha256)
{
	unsigned char d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];

	sha256_digest(bytes, len, d);
	for (int i = 0; i < SHA256_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return !strcmp(hex, sha256);
}

/* Rewrites the reader's message in 'err' as "asset 'FILE': message", on
 * 'field', keeping the code. */
static int said(edit_error *err, int rc, const char *field, const char *file)
{
	char why[EDIT_MESSAGE_MAX];

	snprintf(why, sizeof(why), "%s", err->message);
	edit_error_set(err, rc, -1, field, "asset '%s': %.300s", file, why);
	return rc;
}

static int check_svg(const char *file, const void *bytes, size_t len, const char *field,
		     asset_checked *out, edit_error *err)
{
	svg_clean c;
	int rc = svg_sanitize(bytes, len, NULL, &c, err);

	if (rc)
		return said(err, rc, field, file);
	if (c.n_removed_total || c.len != len || memcmp(c.svg, bytes, len)) {
		svg_clean_release(&c);
		edit_error_set(err, RIGD_E_BAD_SVG, -1, field,
			       "asset '%s': its bytes are not what the sanitiser writes", file);
		return RIGD_E_BAD_SVG;
	}
	/* The ids move to *out; the rest of the sanitiser's result goes. */
	out->ids = c.ids;
	out->n_ids = c.n_ids;
	c.ids = NULL;
	c.n_ids = 0;
	svg_clean_release(&c);
	return 0;
}

/* Moves the '\n'-ended lines of 'lines' into out->ids. 0 or nomem. */
static int ids_from_lines(const char *lines, size_t len, asset_checked *out)
{
	int n = 0;

	for (size_t i = 0; i < len; i++)
		n += lines[i] == '\n';
	if (!n)
		return 0;
	if (!(out->ids = calloc((size_t)n, sizeof(char *))))
		return RIGD_E_NOMEM;
	for (size_t off = 0; off < len && out->n_ids < n;) {
		const char *nl = memchr(lines + off, '\n', len - off);
		size_t k = (size_t)(nl - (lines + off));
		if (!(out->ids[out->n_ids] = malloc(k + 1))) {
			asset_checked_release(out);
			return RIGD_E_NOMEM;
		}
		memcpy(out->ids[out->n_ids], lines + off, k);
		out->ids[out->n_ids++][k] = '\0';
		off += k + 1;
	}
	return 0;
}

static int check_png(const char *file, const void *bytes, size_t len, const char *field,
		     edit_error *err)
{
	png_limits lim = png_limits_default();
	unsigned char *canon = NULL;
	size_t canon_len = 0;
	int rc = png_check(bytes, len, &lim, file, NULL, &canon, &canon_len, NULL, err);

	if (rc)
		return said(err, rc, field, file);
	bool same = canon_len == len && !memcmp(canon, bytes, len);
	free(canon);
	if (!same) {
		edit_error_set(err, RIGD_E_BAD_IMAGE, -1, field,
			       "asset '%s': its bytes are not the PNG rigd writes for its pixels", file);
		return RIGD_E_BAD_IMAGE;
	}
	return 0;
}

static int check_atlas(int kind, const char *file, const void *bytes, size_t len,
		       const char *field, edit_error *err)
{
	atlas a;
	int rc = kind == ASSET_SPINE_ATLAS
			 ? atlas_read_spine(bytes, len, NULL, NULL, 0, &a, err)
			 : atlas_read_dragonbones(bytes, len, NULL, NULL, 0, &a, err);

	if (rc)
		return said(err, rc, field, file);
	atlas_release(&a);
	return 0;
}

/* A skeleton file: its format's reader accepts it as the "skeleton" of an
 * import body, prints it back as the same bytes, and finds its ids. */
static int check_skeleton(int kind, const char *file, const void *bytes, size_t len,
			  const char *field, asset_checked *out, edit_error *err)
{
	json_buf body;
	int rc;

	json_buf_init(&body, 0);
	if (JSON_BUF_LIT(&body, "{\"skeleton\":") || json_buf_append(&body, bytes, len) ||
	    JSON_BUF_LIT(&body, "}")) {
		json_buf_release(&body);
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	if (kind == ASSET_SPINE) {
		spine_import in;
		if ((rc = spine_import_decode(body.data + body.head, body.len, SIZE_MAX, &in, err)) == 0) {
			if (in.skeleton_len != len || memcmp(in.skeleton, bytes, len))
				rc = RIGD_E_BAD_SKELETON;
			else
				rc = ids_from_lines(in.groups, in.groups_len, out);
			spine_import_release(&in);
		}
	} else {
		dragonbones_import in;
		if ((rc = dragonbones_import_decode(body.data + body.head, body.len, SIZE_MAX, &in, err)) == 0) {
			if (in.skeleton_len != len || memcmp(in.skeleton, bytes, len))
				rc = RIGD_E_BAD_SKELETON;
			else
				rc = ids_from_lines(in.ids, in.ids_len, out);
			dragonbones_import_release(&in);
		}
	}
	json_buf_release(&body);
	if (rc == RIGD_E_BAD_SKELETON && !err->code) {
		edit_error_set(err, rc, -1, field,
			       "asset '%s': its bytes are not the skeleton file rigd stores for them", file);
		return rc;
	}
	if (rc == RIGD_E_NOMEM)
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
	else if (rc)
		return said(err, rc, field, file);
	return rc;
}

int asset_check(int kind, const char *file, const void *bytes, size_t len, const char *sha256,
		const char *field, asset_checked *out, edit_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	edit_error_clear(err);
	switch (kind) {
	case ASSET_SVG:
		rc = check_svg(file, bytes, len, field, out, err);
		break;
	case ASSET_PNG:
		rc = check_png(file, bytes, len, field, err);
		break;
	case ASSET_SPINE_ATLAS:
	case ASSET_DRAGONBONES_ATLAS:
		rc = check_atlas(kind, file, bytes, len, field, err);
		break;
	case ASSET_SPINE:
	case ASSET_DRAGONBONES:
		rc = check_skeleton(kind, file, bytes, len, field, out, err);
		break;
	default:
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field, "asset '%s': no such kind", file);
		return RIGD_E_BAD_FIELD;
	}
	if (rc)
		return rc;
	if (sha256 && !digest_is(bytes, len, sha256)) {
		static const int codes[ASSET_KIND_COUNT_] = {
			[ASSET_SVG] = RIGD_E_BAD_SVG, [ASSET_PNG] = RIGD_E_BAD_IMAGE,
			[ASSET_SPINE] = RIGD_E_BAD_SKELETON, [ASSET_DRAGONBONES] = RIGD_E_BAD_SKELETON,
			[ASSET_SPINE_ATLAS] = RIGD_E_BAD_ATLAS, [ASSET_DRAGONBONES_ATLAS] = RIGD_E_BAD_ATLAS,
		};
		asset_checked_release(out);
		edit_error_set(err, codes[kind], -1, field,
			       "asset '%s': its bytes do not have the sha256 named with them", file);
		return codes[kind];
	}
	return 0;
}
