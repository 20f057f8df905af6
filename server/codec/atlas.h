/*
 * atlas.h: texture atlases of skeleton imports, read from Spine's .atlas
 * text (the 4.x keys and the older libgdx ones) and DragonBones' _tex.json,
 * into one list of pages (images) and regions (rectangles of a page). Both
 * are hostile input: every number is a finite integer in range, every
 * region lies inside its page, names are unique on a page, and the sizes
 * of the whole are limited. docs/atlas.md describes both formats and the
 * checks.
 *
 * Refused with RIGD_E_BAD_ATLAS (or RIGD_E_NOMEM), field "atlas", and a
 * message naming the line (Spine) or SubTexture (DragonBones), the region
 * and the page: "atlas line 14: region 'head': bounds 300,10,64,64 leave
 * page 'hero.png' (256 x 256)".
 *
 * It reads JSON with cJSON, which never leaves this folder.
 */
#ifndef RIGD_ATLAS_H
#define RIGD_ATLAS_H

#include "core/edit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ATLAS_DEFAULT_MAX_BYTES (4u << 20)  /* bytes of the atlas file */
#define ATLAS_DEFAULT_MAX_LINE 4096         /* bytes of one line of a Spine atlas */
#define ATLAS_DEFAULT_MAX_PAGES 64
#define ATLAS_DEFAULT_MAX_REGIONS 65536
#define ATLAS_NAME_MAX 255                  /* bytes of a page or region name */
#define ATLAS_COORD_MAX 65535               /* pixels: the largest coordinate or size */

typedef struct atlas_limits {
	size_t max_bytes;
	int max_line;
	int max_pages;
	int max_regions;
} atlas_limits;

/* The ATLAS_DEFAULT_* limits. */
atlas_limits atlas_limits_default(void);

/* A key the reader knows no meaning for, kept with its raw value (Spine's
 * split and pad, for example). */
typedef struct atlas_kv {
	char *key;
	char *value;
} atlas_kv;

typedef struct atlas_page {
	char *name;                /* the image file, as the atlas names it */
	int width, height;         /* pixels (the atlas's size, else the image's) */
	char *format;              /* Spine: "RGBA8888" when absent; DragonBones: NULL */
	char *filter_min, *filter_mag;   /* Spine: "Nearest" when absent */
	char *repeat;              /* Spine: "none" when absent */
	bool pma;                  /* premultiplied alpha */
	double scale;              /* 1 when absent */
	int first_region, n_regions;     /* this page's range in atlas.regions */
	atlas_kv *extra;
	int n_extra;
} atlas_page;

/*
 * A region. x, y, w and h are the rectangle it covers in its page, top-left
 * origin, after rotation: a region stored turned by 90 or 270 degrees
 * covers its height across and its width down. The trim is in the
 * region's own, unrotated, orientation: orig_width x orig_height is the
 * image before blank edges were stripped, offset_x the columns stripped on
 * the left, offset_y the rows stripped at the bottom (Spine's convention;
 * DragonBones' frameY from the top is converted).
 */
typedef struct atlas_region {
	char *name;
	int page;                  /* index in atlas.pages */
	int x, y, w, h;            /* pixels, the rectangle covered in the page */
	int rotate_deg;            /* 0, 90, 180 or 270, as the file says */
	int offset_x, offset_y, orig_width, orig_height;
	int index;                 /* Spine's index (frame number); -1 when absent */
	int line;                  /* Spine: the line of its name; DragonBones: SubTexture + 1 */
	atlas_kv *extra;
	int n_extra;
} atlas_region;

typedef struct atlas {
	atlas_page *pages;
	int n_pages;
	atlas_region *regions;     /* page by page, in file order */
	int n_regions;
} atlas;

/* An uploaded image an atlas may name: its file name and pixel size (from
 * png_check). */
typedef struct atlas_image {
	const char *file;
	uint32_t width, height;
} atlas_image;

/*
 * Reads a Spine .atlas of 'len' bytes (need not be NUL-terminated) under
 * 'lim' (NULL: the defaults). With 'images' (n_images of them; NULL and 0:
 * none given) every page must be one of them and have its size. Returns 0
 * with *out filled (release with atlas_release), or RIGD_E_BAD_ATLAS /
 * RIGD_E_NOMEM with 'err' (may be NULL) filled and *out empty.
 */
int atlas_read_spine(const char *text, size_t len, const atlas_limits *lim,
		     const atlas_image *images, int n_images, atlas *out, edit_error *err);

/* The same for a DragonBones _tex.json (one page). */
int atlas_read_dragonbones(const char *json, size_t len, const atlas_limits *lim,
			   const atlas_image *images, int n_images, atlas *out, edit_error *err);

/* Frees everything *a owns and empties it; accepts NULL. */
void atlas_release(atlas *a);

/* The region of page 'page' named 'name' with Spine index 'index' (-1 for
 * none), or -1. */
int atlas_find_region(const atlas *a, int page, const char *name, int index);

#endif
