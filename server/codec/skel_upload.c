/*
 * skel_upload.c: a skeleton import's atlas and PNG pages checked into the
 * assets the route stores (skel_upload.h).
 *
 * Order: every image decoded (strict base64) and re-encoded (png_check)
 * first, so that the atlas is read against the real sizes of its pages;
 * then each image matched to the page that names it.
 */
#include "skel_upload.h"

#include "atlas.h"
#include "base64.h"
#include "png.h"
#include "svg.h"

#include "core/asset.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void skel_upload_release(skel_upload *u)
{
	if (!u)
		return;
	for (int i = 0; i < u->n_pages; i++)
		free(u->pages[i].png);
	free(u->pages);
	free(u->atlas);
	memset(u, 0, sizeof(*u));
}

/* Decodes and re-encodes image 'in' into *page. 0 or the error. */
static int check_image(const skel_image_in *in, skel_page *page, edit_error *err)
{
	png_limits lim = png_limits_default();
	png_image_info info;
	unsigned char *raw = NULL;
	size_t raw_len = 0;
	char field[160];
	int rc;

	if (strlen(in->file) >= sizeof(page->file) || !svg_file_name_valid(in->file)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "images",
			       "images['%.140s']: a page's file name is 1 to 128 characters of "
			       "[A-Za-z0-9_.-], not starting with a dot", in->file);
		return RIGD_E_BAD_FIELD;
	}
	snprintf(field, sizeof(field), "images['%s']", in->file);
	if ((rc = base64_decode(in->base64, in->base64_len, lim.max_bytes, field, &raw, &raw_len,
				err)) != 0)
		return rc;
	rc = png_check(raw, raw_len, &lim, in->file, &info, &page->png, &page->len, NULL, err);
	free(raw);
	if (rc)
		return rc;
	snprintf(page->file, sizeof(page->file), "%s", in->file);
	page->width = info.width;
	page->height = info.height;
	return 0;
}

/* The page of 'a' named 'file', or -1. */
static int page_named(const atlas *a, const char *file)
{
	for (int i = 0; i < a->n_pages; i++)
		if (!strcmp(a->pages[i].name, file))
			return i;
	return -1;
}

/* Puts the checked pages in the atlas's page order and counts the pages
 * without an image. 0, or bad_field for an image no page names. */
static int match_pages(const atlas *a, skel_upload *out, edit_error *err)
{
	skel_page *sorted = calloc((size_t)(out->n_pages ? out->n_pages : 1), sizeof(*sorted));
	int k = 0;

	if (!sorted) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	for (int i = 0; i < out->n_pages; i++)
		if (page_named(a, out->pages[i].file) < 0) {
			edit_error_set(err, RIGD_E_BAD_FIELD, -1, "images",
				       "images['%s']: no page of the atlas names it", out->pages[i].file);
			free(sorted);
			return RIGD_E_BAD_FIELD;
		}
	for (int p = 0; p < a->n_pages; p++) {
		int found = -1;
		for (int i = 0; i < out->n_pages; i++)
			if (out->pages[i].png && !strcmp(out->pages[i].file, a->pages[p].name))
				found = i;
		if (found < 0) {
			out->n_missing++;
			continue;
		}
		sorted[k++] = out->pages[found];
		out->pages[found].png = NULL;
	}
	free(out->pages);
	out->pages = sorted;
	out->n_pages = k;
	return 0;
}

int skel_upload_check(int kind, const char *skel_file, const char *atlas_text, size_t atlas_len,
		      const skel_image_in *images, int n_images, skel_upload *out,
		      edit_error *err)
{
	const char *suffix = kind == ASSET_SPINE ? ".atlas" : ".tex.json";
	atlas_image *sizes = NULL;
	atlas a;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&a, 0, sizeof(a));
	if (n_images && !atlas_text) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "images",
			       "images: pages come with the atlas that names them, and there is no "
			       "atlas");
		return RIGD_E_BAD_FIELD;
	}
	if (n_images > SKEL_UPLOAD_MAX_PAGES) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "images", "images: %d pages, over the limit of %d",
			       n_images, SKEL_UPLOAD_MAX_PAGES);
		return RIGD_E_LIMIT;
	}
	if (!atlas_text)
		return 0;
	if (strlen(skel_file) + strlen(suffix) >= sizeof(out->atlas_file)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "file",
			       "file: '%s' leaves no room for the atlas's name ('%s%s' is over 128 "
			       "characters)", skel_file, skel_file, suffix);
		return RIGD_E_BAD_FIELD;
	}
	if (n_images && (!(out->pages = calloc((size_t)n_images, sizeof(*out->pages))) ||
			 !(sizes = calloc((size_t)n_images, sizeof(*sizes))))) {
		rc = RIGD_E_NOMEM;
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto fail;
	}
	for (int i = 0; i < n_images; i++) {
		for (int j = 0; j < i; j++)
			if (!strcmp(images[j].file, images[i].file)) {
				rc = RIGD_E_BAD_FIELD;
				edit_error_set(err, rc, -1, "images", "images['%s']: twice", images[i].file);
				goto fail;
			}
		if ((rc = check_image(&images[i], &out->pages[i], err)) != 0)
			goto fail;
		out->n_pages++;
		sizes[i] = (atlas_image){ out->pages[i].file, out->pages[i].width,
					  out->pages[i].height };
	}
	rc = kind == ASSET_SPINE
		? atlas_read_spine(atlas_text, atlas_len, NULL, sizes, n_images, &a, err)
		: atlas_read_dragonbones(atlas_text, atlas_len, NULL, sizes, n_images, &a, err);
	if (rc)
		goto fail;
	if ((rc = match_pages(&a, out, err)) != 0)
		goto fail;
	out->n_regions = a.n_regions;
	if (!(out->atlas = malloc(atlas_len + 1))) {
		rc = RIGD_E_NOMEM;
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto fail;
	}
	memcpy(out->atlas, atlas_text, atlas_len);
	out->atlas[atlas_len] = '\0';
	out->atlas_len = atlas_len;
	out->has_atlas = true;
	out->atlas_kind = kind == ASSET_SPINE ? ASSET_SPINE_ATLAS : ASSET_DRAGONBONES_ATLAS;
	snprintf(out->atlas_file, sizeof(out->atlas_file), "%s%s", skel_file, suffix);
	atlas_release(&a);
	free(sizes);
	return 0;
fail:
	atlas_release(&a);
	free(sizes);
	skel_upload_release(out);
	return rc;
}
