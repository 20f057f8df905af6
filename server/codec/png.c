/*
 * png.c: the checker of uploaded PNG pages (png.h). A walk over the chunks
 * checks the file's structure and CRCs and the header's limits before
 * libpng sees a byte; libpng then decodes from memory into 8-bit RGBA with
 * its own limits set, and writes the canonical file.
 *
 * It must never allocate pixel rows before the header's size is checked,
 * write to stderr (libpng's warnings are swallowed, its errors become the
 * message), or copy an uploaded chunk other than the pixels.
 */
#include "png.h"

#include "core/err.h"

#include <png.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MALLOC_MAX (1u << 20)   /* bytes of one chunk libpng may buffer */
#define CHUNK_CACHE_MAX 256           /* ancillary chunks libpng may keep */
#define MESSAGE_MAX 200               /* bytes of libpng's error text kept */

static const unsigned char SIGNATURE[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

png_limits png_limits_default(void)
{
	png_limits l = {
		.max_side = PNG_DEFAULT_MAX_SIDE,
		.max_pixel_bytes = PNG_DEFAULT_MAX_PIXEL_BYTES,
		.max_bytes = PNG_DEFAULT_MAX_BYTES,
	};
	return l;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The state of one check, shared with libpng's callbacks. Everything that
 * a longjmp must find again lives here, not in locals of png_check. */
typedef struct check {
	const unsigned char *in;
	size_t in_len, in_pos;
	unsigned char *pixels;     /* width * height * 4, owned until handed out */
	png_bytep *rows;
	unsigned char *out;        /* the canonical file being written */
	size_t out_len, out_cap;
	bool out_nomem;
	char message[MESSAGE_MAX];
} check;

static void fail(const char *prefix, edit_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(const char *prefix, edit_error *err, int code, const char *fmt, ...)
{
	char what[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	edit_error_set(err, code, -1, "images", "%s: %s", prefix, what);
}

static bool chunk_type_valid(const unsigned char *t)
{
	for (int i = 0; i < 4; i++)
		if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z')))
			return false;
	return true;
}

/*
 * The walk before decoding: the signature, each chunk's length, type and
 * CRC, IHDR first with sides and pixel bytes within 'lim', an IEND with
 * nothing after it. Returns 0 or RIGD_E_BAD_IMAGE with 'err' filled.
 */
static int walk_chunks(const unsigned char *b, size_t len, const png_limits *lim,
		       const char *prefix, edit_error *err)
{
	if (len < sizeof(SIGNATURE)) {
		if (len && !memcmp(b, SIGNATURE, len)) {
			fail(prefix, err, RIGD_E_BAD_IMAGE, "truncated (%zu bytes, inside the signature)",
			     len);
			return RIGD_E_BAD_IMAGE;
		}
		fail(prefix, err, RIGD_E_BAD_IMAGE, "not a PNG (bad signature)");
		return RIGD_E_BAD_IMAGE;
	}
	if (memcmp(b, SIGNATURE, sizeof(SIGNATURE))) {
		fail(prefix, err, RIGD_E_BAD_IMAGE, "not a PNG (bad signature)");
		return RIGD_E_BAD_IMAGE;
	}
	size_t pos = sizeof(SIGNATURE);
	for (int n = 0;; n++) {
		if (len - pos < 12) {
			fail(prefix, err, RIGD_E_BAD_IMAGE,
			     "truncated (%zu bytes, chunk %d cut short, no IEND)", len, n);
			return RIGD_E_BAD_IMAGE;
		}
		uint32_t clen = be32(b + pos);
		const unsigned char *type = b + pos + 4;
		char name[5] = {0};
		if (!chunk_type_valid(type)) {
			fail(prefix, err, RIGD_E_BAD_IMAGE, "chunk %d at byte %zu has no valid type", n,
			     pos);
			return RIGD_E_BAD_IMAGE;
		}
		memcpy(name, type, 4);
		if (clen > 0x7fffffffu) {
			fail(prefix, err, RIGD_E_BAD_IMAGE, "chunk %s: length %u over 2^31 - 1", name,
			     (unsigned)clen);
			return RIGD_E_BAD_IMAGE;
		}
		if (len - pos - 12 < clen) {
			fail(prefix, err, RIGD_E_BAD_IMAGE,
			     "truncated (%zu bytes, chunk %s of %u bytes cut short)", len, name,
			     (unsigned)clen);
			return RIGD_E_BAD_IMAGE;
		}
		uLong crc = crc32(0L, type, 4 + clen);
		if (crc != be32(b + pos + 8 + clen)) {
			fail(prefix, err, RIGD_E_BAD_IMAGE, "CRC error in chunk %s", name);
			return RIGD_E_BAD_IMAGE;
		}
		if (n == 0) {
			if (memcmp(name, "IHDR", 4) || clen != 13) {
				fail(prefix, err, RIGD_E_BAD_IMAGE,
				     "the first chunk is %s of %u bytes, not a 13-byte IHDR", name,
				     (unsigned)clen);
				return RIGD_E_BAD_IMAGE;
			}
			uint32_t w = be32(b + pos + 8), h = be32(b + pos + 12);
			if (!w || !h) {
				fail(prefix, err, RIGD_E_BAD_IMAGE, "%u x %u pixels: a side of 0",
				     (unsigned)w, (unsigned)h);
				return RIGD_E_BAD_IMAGE;
			}
			if (w > lim->max_side || h > lim->max_side) {
				fail(prefix, err, RIGD_E_BAD_IMAGE, "%u x %u pixels: a side over %u",
				     (unsigned)w, (unsigned)h, (unsigned)lim->max_side);
				return RIGD_E_BAD_IMAGE;
			}
			uint64_t bytes = (uint64_t)w * h * 4;
			if (bytes > lim->max_pixel_bytes) {
				fail(prefix, err, RIGD_E_BAD_IMAGE,
				     "%u x %u pixels: %llu bytes of RGBA, over the limit of %zu",
				     (unsigned)w, (unsigned)h, (unsigned long long)bytes,
				     lim->max_pixel_bytes);
				return RIGD_E_BAD_IMAGE;
			}
		}
		pos += 12 + (size_t)clen;
		if (!memcmp(name, "IEND", 4)) {
			if (pos != len) {
				fail(prefix, err, RIGD_E_BAD_IMAGE, "%zu bytes after IEND", len - pos);
				return RIGD_E_BAD_IMAGE;
			}
			return 0;
		}
	}
}

static void on_error(png_structp png, png_const_charp msg)
{
	check *c = png_get_error_ptr(png);

	snprintf(c->message, sizeof(c->message), "%s", msg);
	png_longjmp(png, 1);
}

/* libpng's warnings (an ignored chunk, a benign oddity) are not errors and
 * must not reach stderr. */
static void on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void on_read(png_structp png, png_bytep data, size_t len)
{
	check *c = png_get_io_ptr(png);

	if (c->in_len - c->in_pos < len)
		png_error(png, "truncated");
	memcpy(data, c->in + c->in_pos, len);
	c->in_pos += len;
}

static void on_write(png_structp png, png_bytep data, size_t len)
{
	check *c = png_get_io_ptr(png);

	if (c->out_cap - c->out_len < len) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap - c->out_len < len)
			cap *= 2;
		unsigned char *p = realloc(c->out, cap);
		if (!p) {
			c->out_nomem = true;
			png_error(png, "out of memory");
		}
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
}

static void on_flush(png_structp png)
{
	(void)png;
}

/* Decodes c->in into c->pixels (8-bit RGBA) and fills *info. Returns 0, or
 * -1 with c->message set (c->pixels and c->rows are freed by the caller). */
static int decode(check *c, const png_limits *lim, png_image_info *info)
{
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, on_error, on_warning);
	png_infop pi = png ? png_create_info_struct(png) : NULL;
	int rc = -1;

	if (!pi) {
		snprintf(c->message, sizeof(c->message), "out of memory");
		goto out;
	}
	if (setjmp(png_jmpbuf(png)))
		goto out;
	png_set_read_fn(png, c, on_read);
	png_set_user_limits(png, lim->max_side, lim->max_side);
	png_set_chunk_cache_max(png, CHUNK_CACHE_MAX);
	png_set_chunk_malloc_max(png, CHUNK_MALLOC_MAX);
	/* Image data after the last row, or a bad filter byte, is an error,
	 * not a warning: the file is not what its header says. */
	png_set_benign_errors(png, 0);
	/* Every chunk but IHDR, PLTE, tRNS, IDAT and IEND is skipped unread:
	 * no text, profile or private chunk is parsed, let alone kept. */
	png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
	png_read_info(png, pi);

	png_uint_32 w, h;
	int depth, type, interlace;
	png_get_IHDR(png, pi, &w, &h, &depth, &type, &interlace, NULL, NULL);
	info->width = w;
	info->height = h;
	info->bit_depth = depth;
	info->color_type = type;
	info->interlaced = interlace != PNG_INTERLACE_NONE;
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (png_get_valid(png, pi, PNG_INFO_tRNS))
		png_set_tRNS_to_alpha(png);
	/* A 16-bit sample keeps its high byte. */
	if (depth == 16)
		png_set_strip_16(png);
	if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA)
		png_set_gray_to_rgb(png);
	if (!(type & PNG_COLOR_MASK_ALPHA))
		png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
	png_set_interlace_handling(png);
	png_read_update_info(png, pi);
	if (png_get_rowbytes(png, pi) != (size_t)w * 4 || png_get_bit_depth(png, pi) != 8) {
		snprintf(c->message, sizeof(c->message), "colour type %d at depth %d not readable",
			 type, depth);
		goto out;
	}
	c->pixels = malloc((size_t)w * h * 4);
	c->rows = malloc(sizeof(*c->rows) * h);
	if (!c->pixels || !c->rows) {
		snprintf(c->message, sizeof(c->message), "out of memory");
		goto out;
	}
	for (png_uint_32 y = 0; y < h; y++)
		c->rows[y] = c->pixels + (size_t)y * w * 4;
	png_read_image(png, c->rows);
	png_read_end(png, NULL);
	rc = 0;
out:
	png_destroy_read_struct(png ? &png : NULL, pi ? &pi : NULL, NULL);
	return rc;
}

/* Writes c->pixels as the canonical PNG into c->out. 0 or -1 with
 * c->message set. */
static int encode(check *c, uint32_t w, uint32_t h)
{
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, on_error, on_warning);
	png_infop pi = png ? png_create_info_struct(png) : NULL;
	int rc = -1;

	if (!pi) {
		snprintf(c->message, sizeof(c->message), "out of memory");
		goto out;
	}
	if (setjmp(png_jmpbuf(png)))
		goto out;
	png_set_write_fn(png, c, on_write, on_flush);
	png_set_compression_level(png, 9);
	png_set_IHDR(png, pi, w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, pi);
	png_write_image(png, c->rows);
	png_write_end(png, NULL);
	rc = 0;
out:
	png_destroy_write_struct(png ? &png : NULL, pi ? &pi : NULL);
	return rc;
}

int png_check(const unsigned char *bytes, size_t len, const png_limits *lim, const char *file,
	      png_image_info *info, unsigned char **canon, size_t *canon_len,
	      unsigned char **rgba, edit_error *err)
{
	png_limits dflt = png_limits_default();
	png_image_info got = {0};
	char prefix[200];
	check c = {.in = bytes, .in_len = len};
	int rc;

	if (!lim)
		lim = &dflt;
	*canon = NULL;
	*canon_len = 0;
	if (rgba)
		*rgba = NULL;
	if (file)
		snprintf(prefix, sizeof(prefix), "images['%s']", file);
	else
		snprintf(prefix, sizeof(prefix), "image");
	if (len > lim->max_bytes) {
		fail(prefix, err, RIGD_E_BAD_IMAGE, "%zu bytes, over the limit of %zu", len,
		     lim->max_bytes);
		return RIGD_E_BAD_IMAGE;
	}
	rc = walk_chunks(bytes, len, lim, prefix, err);
	if (rc)
		return rc;
	if (decode(&c, lim, &got)) {
		rc = strcmp(c.message, "out of memory") ? RIGD_E_BAD_IMAGE : RIGD_E_NOMEM;
		fail(prefix, err, rc, "%s", c.message);
		goto out;
	}
	if (encode(&c, got.width, got.height)) {
		rc = c.out_nomem || !strcmp(c.message, "out of memory") ? RIGD_E_NOMEM
									: RIGD_E_INTERNAL;
		fail(prefix, err, rc, "re-encoding: %s", c.message);
		goto out;
	}
	*canon = c.out;
	*canon_len = c.out_len;
	c.out = NULL;
	if (rgba) {
		*rgba = c.pixels;
		c.pixels = NULL;
	}
	if (info)
		*info = got;
out:
	free(c.out);
	free(c.pixels);
	free(c.rows);
	return rc;
}
