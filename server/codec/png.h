/*
 * png.h: the checker of uploaded PNG pages (texture atlases of skeleton
 * imports). An uploaded PNG is hostile input: libpng decodes the whole
 * image from memory under limits checked from the header before any pixel
 * row is allocated, and the pixels are written out again as a canonical
 * 8-bit RGBA PNG of our own encoding. What the server stores and serves is
 * that encoding, never the uploaded bytes.
 *
 * Refused (RIGD_E_BAD_IMAGE, nothing written): a file over the byte limit,
 * a bad signature, a chunk with a bad CRC, a file that ends before IEND
 * (truncated), bytes after IEND, a width or height of 0 or over the side
 * limit, width * height * 4 over the pixel-bytes limit (which makes a zlib
 * bomb harmless: the inflated size is bounded by the header before
 * inflating), a colour type or bit depth libpng cannot read, and whatever
 * else libpng reports as an error. Ancillary chunks (text, time, ICC,
 * gamma, APNG's acTL/fcTL/fdAT, private ones) are read past and never
 * copied: the canonical file has IHDR, IDAT and IEND only.
 *
 * This file and png.c are the only users of libpng; no other folder may
 * include <png.h>.
 */
#ifndef RIGD_PNG_H
#define RIGD_PNG_H

#include "core/edit.h"

#include <stddef.h>
#include <stdint.h>

#define PNG_DEFAULT_MAX_SIDE 4096                /* pixels of a width or a height */
#define PNG_DEFAULT_MAX_PIXEL_BYTES (64u << 20)  /* width * height * 4, the decoded RGBA */
#define PNG_DEFAULT_MAX_BYTES (16u << 20)        /* bytes of the uploaded file */

typedef struct png_limits {
	uint32_t max_side;
	size_t max_pixel_bytes;
	size_t max_bytes;
} png_limits;

/* PNG_DEFAULT_MAX_SIDE, _PIXEL_BYTES and _BYTES. */
png_limits png_limits_default(void);

/* What the checker learnt of an accepted image. */
typedef struct png_image_info {
	uint32_t width, height;    /* pixels */
	int color_type;            /* of the upload, as in IHDR: 0, 2, 3, 4 or 6 */
	int bit_depth;             /* of the upload: 1, 2, 4, 8 or 16 */
	int interlaced;            /* 1 when the upload was Adam7-interlaced */
} png_image_info;

/*
 * Checks 'len' bytes of the PNG file 'bytes' under 'lim' (NULL: the
 * defaults) and re-encodes it. 'file' names the upload in messages
 * ("images['hero.png']: truncated"; NULL: "image"). On success returns 0
 * with *info filled (may be NULL), *canon a new buffer of *canon_len bytes
 * holding the canonical 8-bit RGBA PNG (the caller frees it), and, when
 * 'rgba' is not NULL, *rgba a new buffer of width * height * 4 bytes, the
 * pixels row by row from the top (the caller frees it). Returns
 * RIGD_E_BAD_IMAGE or RIGD_E_NOMEM with 'err' (may be NULL) naming field
 * "images" and what was wrong; the outputs are then NULL and 0.
 */
int png_check(const unsigned char *bytes, size_t len, const png_limits *lim, const char *file,
	      png_image_info *info, unsigned char **canon, size_t *canon_len,
	      unsigned char **rgba, edit_error *err);

#endif
