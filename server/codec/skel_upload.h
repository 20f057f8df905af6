/*
 * skel_upload.h: the files that come with a skeleton import besides the
 * skeleton itself: its texture atlas (a Spine .atlas or a DragonBones
 * _tex.json) and the atlas's PNG pages, base64 in the body. Each page is
 * decoded and re-encoded by png_check, the atlas is read against the
 * pages' sizes, and what comes out is the list of assets the route stores
 * with the import's batch: the atlas under the skeleton's file name plus
 * ".atlas" (Spine) or ".tex.json" (DragonBones), each page under the file
 * name the atlas gives it.
 *
 * Never touches a scene or the store.
 */
#ifndef RIGD_SKEL_UPLOAD_H
#define RIGD_SKEL_UPLOAD_H

#include "core/edit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SKEL_UPLOAD_MAX_PAGES 32     /* PNG pages of one import */

/* One member of a body's "images": a page file and its base64 text as
 * posted. Borrowed. */
typedef struct skel_image_in {
	const char *file;
	const char *base64;
	size_t base64_len;
} skel_image_in;

/* A checked page: the canonical PNG png_check wrote. */
typedef struct skel_page {
	char file[128 + 1];
	unsigned char *png;          /* owned */
	size_t len;
	uint32_t width, height;
} skel_page;

/* What skel_upload_check keeps. Release with skel_upload_release. */
typedef struct skel_upload {
	bool has_atlas;
	int atlas_kind;              /* ASSET_SPINE_ATLAS or ASSET_DRAGONBONES_ATLAS */
	char atlas_file[128 + 1];    /* the skeleton's file + ".atlas" / ".tex.json" */
	char *atlas;                 /* the atlas's bytes as posted, owned */
	size_t atlas_len;
	int n_regions;
	skel_page *pages;            /* owned, in the atlas's page order */
	int n_pages;
	int n_missing;               /* pages of an atlas that came without images */
} skel_upload;

/*
 * Checks the atlas (atlas_len bytes of 'atlas'; NULL: none) of a skeleton
 * of 'kind' (ASSET_SPINE or ASSET_DRAGONBONES) stored as 'skel_file', and
 * the pages images[0..n_images). Each image must be a PNG png_check
 * accepts, named by a page of the atlas, once; images without an atlas
 * are refused. Either every page of the atlas comes with its image or
 * none does (an atlas alone: n_missing counts its pages, and the viewer
 * draws outlines). The atlas's regions must
 * lie inside their pages, whose sizes must be the images'. 0 with *out
 * filled, or bad_image (field "images", naming the file), bad_atlas (field
 * "atlas", naming the line, page and region), bad_field (an image's file
 * name outside the asset rules, an image no page names, images without an
 * atlas, an atlas file name over 128 characters), too_large, limit (more
 * than SKEL_UPLOAD_MAX_PAGES images), nomem; *out empty on error.
 */
int skel_upload_check(int kind, const char *skel_file, const char *atlas, size_t atlas_len,
		      const skel_image_in *images, int n_images, skel_upload *out,
		      edit_error *err);

/* Frees what *u owns and empties it; accepts NULL. */
void skel_upload_release(skel_upload *u);

#endif
