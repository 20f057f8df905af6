/*
 * asset_check.c: an asset's bytes read again by its kind's reader
 * (asset_check.h). Each kind's reader is the one an import uses, so
 * "accepted here" means "what an import would have stored".
 */
#include "asset_check.h"

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
	default:
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field, "asset '%s': no such kind", file);
		return RIGD_E_BAD_FIELD;
	}
	if (rc)
		return rc;
	if (sha256 && !digest_is(bytes, len, sha256)) {
		asset_checked_release(out);
		edit_error_set(err, kind == ASSET_SVG ? RIGD_E_BAD_SVG : RIGD_E_BAD_FIELD, -1, field,
			       "asset '%s': its bytes do not have the sha256 named with them", file);
		return kind == ASSET_SVG ? RIGD_E_BAD_SVG : RIGD_E_BAD_FIELD;
	}
	return 0;
}
