/*
 * test_png.c: the PNG checker (server/codec/png.c) and strict base64
 * (server/codec/base64.c).
 *
 * The PNGs are written here with zlib alone (a chunk writer: length, type,
 * data, CRC-32; scanlines with filter byte 0, deflated by compress2), so
 * the expected pixels follow from the PNG specification by hand, apart
 * from libpng: every colour type and bit depth, with and without tRNS, and
 * Adam7 interlacing. Each accepted file's canonical output is read back by
 * libpng's simplified API and must hold the same pixels, as IHDR (8-bit
 * RGBA), IDAT and IEND only. Hostile files are refused with bad_image and
 * the reason: bad signature, truncation at many offsets, a CRC error, huge
 * or zero sides, the pixel-bytes limit, a zlib bomb, trailing bytes, a
 * colour type and depth that do not go together, a broken zlib stream.
 *
 * With "--write DIR" it writes its inputs to DIR instead of testing (how
 * tests/data/png and the fuzz corpus were made).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <png.h>
#include <zlib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/base64.h"
#include "codec/png.h"
#include "core/err.h"

/* A PNG being written: a growable byte buffer. */
typedef struct buf {
	unsigned char *b;
	size_t len, cap;
} buf;

static void put(buf *o, const void *p, size_t n)
{
	if (o->cap - o->len < n) {
		o->cap = (o->len + n) * 2 + 64;
		o->b = realloc(o->b, o->cap);
		assert_non_null(o->b);
	}
	memcpy(o->b + o->len, p, n);
	o->len += n;
}

static void put32(buf *o, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 8), (unsigned char)v};
	put(o, b, 4);
}

static void chunk(buf *o, const char *type, const void *data, size_t n)
{
	put32(o, (uint32_t)n);
	size_t at = o->len;
	put(o, type, 4);
	if (n)
		put(o, data, n);
	put32(o, (uint32_t)crc32(0L, o->b + at, (uInt)(4 + n)));
}

static void signature(buf *o)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	put(o, sig, 8);
}

static void ihdr(buf *o, uint32_t w, uint32_t h, int depth, int type, int interlace)
{
	unsigned char d[13] = {
		(unsigned char)(w >> 24), (unsigned char)(w >> 16), (unsigned char)(w >> 8),
		(unsigned char)w, (unsigned char)(h >> 24), (unsigned char)(h >> 16),
		(unsigned char)(h >> 8), (unsigned char)h, (unsigned char)depth,
		(unsigned char)type, 0, 0, (unsigned char)interlace,
	};
	chunk(o, "IHDR", d, 13);
}

static void idat(buf *o, const unsigned char *raw, size_t n)
{
	uLongf clen = compressBound((uLong)n);
	unsigned char *z = malloc(clen);
	assert_non_null(z);
	assert_int_equal(compress2(z, &clen, raw, (uLong)n, 9), Z_OK);
	chunk(o, "IDAT", z, clen);
	free(z);
}

/* A whole file: IHDR, the optional chunks 'extra' (already framed), the
 * scanlines 'raw' (each with its filter byte), IEND. */
static buf make_png(uint32_t w, uint32_t h, int depth, int type, const buf *extra,
		    const unsigned char *raw, size_t n)
{
	buf o = {0};
	signature(&o);
	ihdr(&o, w, h, depth, type, 0);
	if (extra)
		put(&o, extra->b, extra->len);
	idat(&o, raw, n);
	chunk(&o, "IEND", NULL, 0);
	return o;
}

/* Checks 'f' and expects success; returns the RGBA pixels and checks the
 * canonical output: libpng reads it back to the same pixels, and it has
 * IHDR (w x h, 8-bit RGBA, not interlaced), IDAT and IEND only. */
static unsigned char *accept(const buf *f, uint32_t w, uint32_t h)
{
	unsigned char *canon, *rgba;
	size_t clen;
	png_image_info info;
	edit_error e;

	int rc = png_check(f->b, f->len, NULL, "t.png", &info, &canon, &clen, &rgba, &e);
	if (rc)
		print_message("refused: %s\n", e.message);
	assert_int_equal(rc, 0);
	assert_int_equal(info.width, w);
	assert_int_equal(info.height, h);

	png_image img;
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_memory(&img, canon, clen));
	assert_int_equal(img.width, w);
	assert_int_equal(img.height, h);
	img.format = PNG_FORMAT_RGBA;
	unsigned char *back = malloc(PNG_IMAGE_SIZE(img));
	assert_non_null(back);
	assert_true(png_image_finish_read(&img, NULL, back, 0, NULL));
	assert_memory_equal(back, rgba, (size_t)w * h * 4);
	free(back);

	/* The chunks of the canonical file. */
	assert_true(clen > 8 + 25);
	assert_int_equal(canon[8 + 4 + 4 + 8], 8);    /* bit depth */
	assert_int_equal(canon[8 + 4 + 4 + 9], 6);    /* colour type RGBA */
	assert_int_equal(canon[8 + 4 + 4 + 12], 0);   /* not interlaced */
	size_t pos = 8;
	int n = 0;
	while (pos < clen) {
		uint32_t len = (uint32_t)canon[pos] << 24 | (uint32_t)canon[pos + 1] << 16 |
			       (uint32_t)canon[pos + 2] << 8 | canon[pos + 3];
		const char *t = (const char *)canon + pos + 4;
		if (n == 0)
			assert_memory_equal(t, "IHDR", 4);
		else
			assert_true(!memcmp(t, "IDAT", 4) || !memcmp(t, "IEND", 4));
		pos += 12 + len;
		n++;
	}
	assert_int_equal(pos, clen);
	assert_memory_equal(canon + clen - 8, "IEND", 4);

	/* The canonical file is accepted and re-encodes to itself. */
	unsigned char *again;
	size_t alen;
	assert_int_equal(png_check(canon, clen, NULL, "t.png", NULL, &again, &alen, NULL, &e), 0);
	assert_int_equal(alen, clen);
	assert_memory_equal(again, canon, clen);
	free(again);
	free(canon);
	return rgba;
}

static void px(const unsigned char *rgba, uint32_t w, uint32_t x, uint32_t y, int r, int g,
	       int b, int a)
{
	const unsigned char *p = rgba + ((size_t)y * w + x) * 4;
	assert_int_equal(p[0], r);
	assert_int_equal(p[1], g);
	assert_int_equal(p[2], b);
	assert_int_equal(p[3], a);
}

/* Grey at 1, 2, 4, 8 and 16 bits: a sample of depth d scales to 8 bits as
 * v * 255 / (2^d - 1) (so 1 -> 255 at 1 bit, 1 -> 85 at 2, 5 -> 85 at 4);
 * a 16-bit sample keeps its high byte. */
static void test_grey_depths(void **state)
{
	(void)state;
	/* 8 x 1 at 1 bit: 10110000. */
	unsigned char r1[] = {0, 0xB0};
	buf f = make_png(8, 1, 1, 0, NULL, r1, sizeof(r1));
	unsigned char *p = accept(&f, 8, 1);
	px(p, 8, 0, 0, 255, 255, 255, 255);
	px(p, 8, 1, 0, 0, 0, 0, 255);
	px(p, 8, 2, 0, 255, 255, 255, 255);
	px(p, 8, 3, 0, 255, 255, 255, 255);
	px(p, 8, 4, 0, 0, 0, 0, 255);
	free(p);
	free(f.b);

	/* 4 x 1 at 2 bits: samples 0, 1, 2, 3 = 00 01 10 11 = 0x1B. */
	unsigned char r2[] = {0, 0x1B};
	f = make_png(4, 1, 2, 0, NULL, r2, sizeof(r2));
	p = accept(&f, 4, 1);
	px(p, 4, 0, 0, 0, 0, 0, 255);
	px(p, 4, 1, 0, 85, 85, 85, 255);
	px(p, 4, 2, 0, 170, 170, 170, 255);
	px(p, 4, 3, 0, 255, 255, 255, 255);
	free(p);
	free(f.b);

	/* 2 x 2 at 4 bits: 5, 15 / 0, 10. */
	unsigned char r4[] = {0, 0x5F, 0, 0x0A};
	f = make_png(2, 2, 4, 0, NULL, r4, sizeof(r4));
	p = accept(&f, 2, 2);
	px(p, 2, 0, 0, 85, 85, 85, 255);
	px(p, 2, 1, 0, 255, 255, 255, 255);
	px(p, 2, 0, 1, 0, 0, 0, 255);
	px(p, 2, 1, 1, 170, 170, 170, 255);
	free(p);
	free(f.b);

	/* 2 x 1 at 16 bits: 0x1234, 0xFF01. */
	unsigned char r16[] = {0, 0x12, 0x34, 0xFF, 0x01};
	f = make_png(2, 1, 16, 0, NULL, r16, sizeof(r16));
	p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 0x12, 0x12, 0x12, 255);
	px(p, 2, 1, 0, 0xFF, 0xFF, 0xFF, 255);
	free(p);
	free(f.b);
}

/* Grey 8-bit with tRNS naming grey 0x40 transparent; grey and alpha at 8
 * and 16 bits. */
static void test_grey_alpha(void **state)
{
	(void)state;
	buf t = {0};
	unsigned char trns[] = {0x00, 0x40};
	chunk(&t, "tRNS", trns, 2);
	unsigned char r8[] = {0, 0x40, 0x41};
	buf f = make_png(2, 1, 8, 0, &t, r8, sizeof(r8));
	unsigned char *p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 0x40, 0x40, 0x40, 0);
	px(p, 2, 1, 0, 0x41, 0x41, 0x41, 255);
	free(p);
	free(f.b);
	free(t.b);

	unsigned char ga8[] = {0, 100, 50, 7, 255};
	f = make_png(2, 1, 8, 4, NULL, ga8, sizeof(ga8));
	p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 100, 100, 100, 50);
	px(p, 2, 1, 0, 7, 7, 7, 255);
	free(p);
	free(f.b);

	unsigned char ga16[] = {0, 0xAB, 0xCD, 0x80, 0x00};
	f = make_png(1, 1, 16, 4, NULL, ga16, sizeof(ga16));
	p = accept(&f, 1, 1);
	px(p, 1, 0, 0, 0xAB, 0xAB, 0xAB, 0x80);
	free(p);
	free(f.b);
}

/* RGB and RGBA at 8 and 16 bits, RGB with tRNS. */
static void test_truecolour(void **state)
{
	(void)state;
	unsigned char rgb8[] = {0, 10, 20, 30, 40, 50, 60, 0, 1, 2, 3, 250, 251, 252};
	buf f = make_png(2, 2, 8, 2, NULL, rgb8, sizeof(rgb8));
	unsigned char *p = accept(&f, 2, 2);
	px(p, 2, 0, 0, 10, 20, 30, 255);
	px(p, 2, 1, 0, 40, 50, 60, 255);
	px(p, 2, 0, 1, 1, 2, 3, 255);
	px(p, 2, 1, 1, 250, 251, 252, 255);
	free(p);
	free(f.b);

	buf t = {0};
	unsigned char trns[] = {0, 40, 0, 50, 0, 60};
	chunk(&t, "tRNS", trns, sizeof(trns));
	f = make_png(2, 2, 8, 2, &t, rgb8, sizeof(rgb8));
	p = accept(&f, 2, 2);
	px(p, 2, 0, 0, 10, 20, 30, 255);
	px(p, 2, 1, 0, 40, 50, 60, 0);
	free(p);
	free(f.b);
	free(t.b);

	unsigned char rgb16[] = {0, 0xAB, 0xCD, 0x01, 0x02, 0xFE, 0xFF};
	f = make_png(1, 1, 16, 2, NULL, rgb16, sizeof(rgb16));
	p = accept(&f, 1, 1);
	px(p, 1, 0, 0, 0xAB, 0x01, 0xFE, 255);
	free(p);
	free(f.b);

	unsigned char rgba8[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	f = make_png(2, 1, 8, 6, NULL, rgba8, sizeof(rgba8));
	p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 1, 2, 3, 4);
	px(p, 2, 1, 0, 5, 6, 7, 8);
	free(p);
	free(f.b);

	unsigned char rgba16[] = {0, 0x10, 0x11, 0x20, 0x21, 0x30, 0x31, 0x40, 0x41};
	f = make_png(1, 1, 16, 6, NULL, rgba16, sizeof(rgba16));
	p = accept(&f, 1, 1);
	px(p, 1, 0, 0, 0x10, 0x20, 0x30, 0x40);
	free(p);
	free(f.b);
}

/* Palette at 1, 2, 4 and 8 bits; tRNS shorter than the palette leaves the
 * later entries opaque. */
static void test_palette(void **state)
{
	(void)state;
	buf ex = {0};
	unsigned char plte[] = {255, 0, 0, 0, 255, 0, 0, 0, 255};
	unsigned char trns[] = {128};
	chunk(&ex, "PLTE", plte, sizeof(plte));
	chunk(&ex, "tRNS", trns, sizeof(trns));
	/* 3 x 1 at 2 bits: indices 0, 1, 2 = 00 01 10 00 = 0x18. */
	unsigned char r2[] = {0, 0x18};
	buf f = make_png(3, 1, 2, 3, &ex, r2, sizeof(r2));
	unsigned char *p = accept(&f, 3, 1);
	px(p, 3, 0, 0, 255, 0, 0, 128);
	px(p, 3, 1, 0, 0, 255, 0, 255);
	px(p, 3, 2, 0, 0, 0, 255, 255);
	free(p);
	free(f.b);

	unsigned char r1[] = {0, 0x40};   /* 2 x 1 at 1 bit: 0, 1 */
	f = make_png(2, 1, 1, 3, &ex, r1, sizeof(r1));
	p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 255, 0, 0, 128);
	px(p, 2, 1, 0, 0, 255, 0, 255);
	free(p);
	free(f.b);

	unsigned char r4[] = {0, 0x21};   /* 2 x 1 at 4 bits: 2, 1 */
	f = make_png(2, 1, 4, 3, &ex, r4, sizeof(r4));
	p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 0, 0, 255, 255);
	px(p, 2, 1, 0, 0, 255, 0, 255);
	free(p);
	free(f.b);

	unsigned char r8[] = {0, 2, 0};
	f = make_png(2, 1, 8, 3, &ex, r8, sizeof(r8));
	p = accept(&f, 2, 1);
	px(p, 2, 0, 0, 0, 0, 255, 255);
	px(p, 2, 1, 0, 255, 0, 0, 128);
	free(p);
	free(f.b);

	/* An index past the palette is an error, not a read out of bounds. */
	unsigned char bad[] = {0, 7};
	f = make_png(1, 1, 8, 3, &ex, bad, sizeof(bad));
	unsigned char *canon;
	size_t clen;
	edit_error e;
	int rc = png_check(f.b, f.len, NULL, "p.png", NULL, &canon, &clen, NULL, &e);
	/* libpng maps such an index to black, opaque (its documented choice);
	 * either way nothing is read outside the palette. */
	if (rc == 0)
		free(canon);
	else
		assert_int_equal(rc, RIGD_E_BAD_IMAGE);
	free(f.b);
	free(ex.b);
}

/* An Adam7-interlaced 5 x 5 RGB image: the seven passes written by hand
 * from the pass table (PNG 8.2), each pixel (x, y) holding x*40, y*40, 7. */
static void test_interlaced(void **state)
{
	(void)state;
	static const int start_x[7] = {0, 4, 0, 2, 0, 1, 0}, start_y[7] = {0, 0, 4, 0, 2, 0, 1};
	static const int step_x[7] = {8, 8, 4, 4, 2, 2, 1}, step_y[7] = {8, 8, 8, 4, 4, 2, 2};
	unsigned char raw[512];
	size_t n = 0;
	for (int pass = 0; pass < 7; pass++) {
		for (int y = start_y[pass]; y < 5; y += step_y[pass]) {
			if (start_x[pass] >= 5)
				break;
			raw[n++] = 0;
			for (int x = start_x[pass]; x < 5; x += step_x[pass]) {
				raw[n++] = (unsigned char)(x * 40);
				raw[n++] = (unsigned char)(y * 40);
				raw[n++] = 7;
			}
		}
	}
	buf o = {0};
	signature(&o);
	ihdr(&o, 5, 5, 8, 2, 1);
	idat(&o, raw, n);
	chunk(&o, "IEND", NULL, 0);
	unsigned char *p = accept(&o, 5, 5);
	for (int y = 0; y < 5; y++)
		for (int x = 0; x < 5; x++)
			px(p, 5, (uint32_t)x, (uint32_t)y, x * 40, y * 40, 7, 255);
	free(p);
	free(o.b);
}

/* Ancillary chunks (text, time, a broken ICC profile, APNG's acTL and
 * fcTL, a private chunk) are not copied: the canonical output has IHDR,
 * IDAT and IEND only (accept() checks), with the same pixels. */
static void test_extra_chunks_stripped(void **state)
{
	(void)state;
	buf ex = {0};
	chunk(&ex, "tEXt", "Comment\0<script>", 16);
	unsigned char tm[7] = {0x07, 0xE6, 1, 2, 3, 4, 5};
	chunk(&ex, "tIME", tm, 7);
	chunk(&ex, "iCCP", "icc\0\0not zlib at all", 20);
	unsigned char actl[8] = {0, 0, 0, 2, 0, 0, 0, 0};
	chunk(&ex, "acTL", actl, 8);
	unsigned char fctl[26] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1};
	chunk(&ex, "fcTL", fctl, 26);
	chunk(&ex, "prVt", "anything", 8);
	unsigned char r[] = {0, 9, 8, 7, 6};
	buf f = make_png(1, 1, 8, 6, &ex, r, sizeof(r));
	unsigned char *p = accept(&f, 1, 1);
	px(p, 1, 0, 0, 9, 8, 7, 6);
	free(p);
	free(f.b);
	free(ex.b);
}

/* Expects refusal with bad_image and a message holding 'why'. */
static void refuse_lim(const unsigned char *b, size_t n, const png_limits *lim, const char *why)
{
	unsigned char *canon = (unsigned char *)1, *rgba = (unsigned char *)1;
	size_t clen = 1;
	edit_error e;

	int rc = png_check(b, n, lim, "hero.png", NULL, &canon, &clen, &rgba, &e);
	if (rc != RIGD_E_BAD_IMAGE || !strstr(e.message, why))
		print_message("got %d '%s', wanted '%s'\n", rc, rc ? e.message : "", why);
	assert_int_equal(rc, RIGD_E_BAD_IMAGE);
	assert_int_equal(e.code, RIGD_E_BAD_IMAGE);
	assert_string_equal(e.field, "images");
	assert_non_null(strstr(e.message, "images['hero.png']: "));
	assert_non_null(strstr(e.message, why));
	assert_null(canon);
	assert_null(rgba);
	assert_int_equal(clen, 0);
}

static void refuse(const buf *f, const char *why)
{
	refuse_lim(f->b, f->len, NULL, why);
}

static buf small_rgba(void)
{
	unsigned char r[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 9, 10, 11, 12, 13, 14, 15, 16};
	return make_png(2, 2, 8, 6, NULL, r, sizeof(r));
}

static void test_signature_and_truncation(void **state)
{
	(void)state;
	buf f = small_rgba();
	f.b[1] = 'Q';
	refuse(&f, "not a PNG (bad signature)");
	f.b[1] = 'P';
	refuse_lim((const unsigned char *)"GIF89a", 6, NULL, "not a PNG (bad signature)");
	/* Cut everywhere: inside the signature, IHDR, IDAT, the CRC, IEND. */
	for (size_t cut = 1; cut < f.len; cut++)
		refuse_lim(f.b, cut, NULL, "truncated");
	free(f.b);
}

static void test_crc(void **state)
{
	(void)state;
	buf f = small_rgba();
	/* The IDAT's first data byte: signature 8, IHDR 25, IDAT length and type 8. */
	f.b[8 + 25 + 8] ^= 0x01;
	refuse(&f, "CRC error in chunk IDAT");
	f.b[8 + 25 + 8] ^= 0x01;
	f.b[8 + 8 + 3] ^= 0x01;   /* in IHDR's width */
	refuse(&f, "CRC error in chunk IHDR");
	free(f.b);
}

/* A 1 x 1 image's IDAT under an IHDR claiming 100000 x 100000: refused
 * from the header, before any row exists; with the side limit raised, the
 * pixel-bytes limit refuses it. A side of 0 is refused too. */
static void test_huge_and_zero_sides(void **state)
{
	(void)state;
	unsigned char r[] = {0, 1, 2, 3, 4};
	buf f = make_png(100000, 100000, 8, 6, NULL, r, sizeof(r));
	refuse(&f, "100000 x 100000 pixels: a side over 4096");
	png_limits lim = png_limits_default();
	lim.max_side = 200000;
	refuse_lim(f.b, f.len, &lim, "40000000000 bytes of RGBA, over the limit of 67108864");
	free(f.b);

	f = make_png(9000, 20, 8, 6, NULL, r, sizeof(r));
	refuse(&f, "9000 x 20 pixels: a side over 4096");
	free(f.b);
	f = make_png(0, 1, 8, 6, NULL, r, sizeof(r));
	refuse(&f, "0 x 1 pixels: a side of 0");
	free(f.b);
	f = make_png(1, 0, 8, 6, NULL, r, sizeof(r));
	refuse(&f, "1 x 0 pixels: a side of 0");
	free(f.b);
}

/* A zlib bomb: 64 MiB of zeros deflated to some 64 KB. Under a header of
 * 4096 x 4096 with a pixel-bytes limit of 16 MiB it is refused before
 * inflating; under a header of 16 x 16 only the rows are inflated and the
 * rest is refused as too much image data. */
static void test_zlib_bomb(void **state)
{
	(void)state;
	size_t n = 64u << 20;
	unsigned char *zeros = calloc(n, 1);
	assert_non_null(zeros);
	buf f = make_png(4096, 4096, 8, 6, NULL, zeros, n);
	assert_true(f.len < (1u << 20));
	png_limits lim = png_limits_default();
	lim.max_pixel_bytes = 16u << 20;
	refuse_lim(f.b, f.len, &lim, "4096 x 4096 pixels: 67108864 bytes of RGBA, over the limit");
	free(f.b);
	f = make_png(16, 16, 8, 0, NULL, zeros, n);
	refuse(&f, "Too much image data");
	free(f.b);
	free(zeros);
}

static void test_trailing_and_structure(void **state)
{
	(void)state;
	buf f = small_rgba();
	put(&f, "junk", 4);
	refuse(&f, "4 bytes after IEND");
	free(f.b);

	/* Colour type 2 (RGB) at 4 bits does not exist. */
	unsigned char r[] = {0, 0x12, 0x30};
	f = make_png(1, 1, 4, 2, NULL, r, sizeof(r));
	refuse(&f, "Invalid IHDR data");
	free(f.b);

	/* An IDAT whose CRC is right but whose data is no zlib stream. */
	buf o = {0};
	signature(&o);
	ihdr(&o, 1, 1, 8, 0, 0);
	chunk(&o, "IDAT", "not zlib", 8);
	chunk(&o, "IEND", NULL, 0);
	refuse(&o, "IDAT: incorrect header check");
	free(o.b);

	/* IDAT first, then IHDR. */
	o = (buf){0};
	signature(&o);
	chunk(&o, "IDAT", "x", 1);
	ihdr(&o, 1, 1, 8, 0, 0);
	chunk(&o, "IEND", NULL, 0);
	refuse(&o, "the first chunk is IDAT of 1 bytes, not a 13-byte IHDR");
	free(o.b);

	/* Too few rows: the image data ends before the last row. */
	unsigned char one_row[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
	f = make_png(2, 2, 8, 6, NULL, one_row, sizeof(one_row));
	refuse(&f, "Not enough image data");
	free(f.b);

	/* Over the byte limit. */
	f = small_rgba();
	png_limits lim = png_limits_default();
	lim.max_bytes = 20;
	refuse_lim(f.b, f.len, &lim, "bytes, over the limit of 20");
	free(f.b);
}

/* RFC 4648, section 10, and what strictness refuses. */
static void test_base64(void **state)
{
	(void)state;
	static const char *const vec[][2] = {
		{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
		{"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}, {"\xff\xfe\x00", "//4A"},
	};
	unsigned char *out;
	size_t n;
	edit_error e;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		size_t want = i == 7 ? 3 : strlen(vec[i][0]);
		assert_int_equal(base64_decode(vec[i][1], strlen(vec[i][1]), 100, "images['a.png']",
					       &out, &n, &e), 0);
		assert_int_equal(n, want);
		assert_memory_equal(out, vec[i][0], want);
		free(out);
	}
	static const char *const bad[] = {
		"Zm9", "Zm9v\n", "Zm 9v", "Zg=a", "Zh==", "Zm9=", "Zm-v", "Zm_v", "=Zg=", "Zg==Zg==",
		"====", "Z===", "Zm9v\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		out = (unsigned char *)1;
		assert_int_equal(base64_decode(bad[i], strlen(bad[i]), 100, "images['a.png']", &out,
					       &n, &e), RIGD_E_BAD_FIELD);
		assert_null(out);
		assert_string_equal(e.field, "images['a.png']");
	}
	/* The limit is checked from the length: 8 characters are 6 bytes. */
	assert_int_equal(base64_decode("Zm9vYmFy", 8, 5, "f", &out, &n, &e), RIGD_E_TOO_LARGE);
	assert_null(out);
	assert_int_equal(base64_decode("Zm9vYmFy", 8, 6, "f", &out, &n, &e), 0);
	free(out);
	assert_int_equal(base64_decode("Zm9vYg==", 8, 4, "f", &out, &n, &e), 0);
	assert_int_equal(n, 4);
	free(out);
}

/* The committed files of tests/data/png (written by --write from the
 * builders above): the valid ones kept, the hostile ones refused. */
static void test_data_files(void **state)
{
	(void)state;
	static const struct {
		const char *file, *why;   /* why: NULL when accepted */
		uint32_t w, h;
	} cases[] = {
		{"rgba8.png", NULL, 2, 2}, {"grey16.png", NULL, 2, 1}, {"palette2.png", NULL, 3, 1},
		{"bad-crc.png", "CRC error in chunk IDAT", 0, 0},
		{"truncated.png", "truncated", 0, 0},
		{"trailing.png", "4 bytes after IEND", 0, 0},
		{"huge-ihdr.png", "100000 x 100000 pixels: a side over 4096", 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/tests/data/png/%s", RIGD_SOURCE_DIR, cases[i].file);
		FILE *fp = fopen(path, "rb");
		assert_non_null(fp);
		buf f = {0};
		unsigned char chunk_buf[4096];
		size_t n;
		while ((n = fread(chunk_buf, 1, sizeof(chunk_buf), fp)) > 0)
			put(&f, chunk_buf, n);
		fclose(fp);
		if (cases[i].why) {
			refuse(&f, cases[i].why);
		} else {
			unsigned char *p = accept(&f, cases[i].w, cases[i].h);
			free(p);
		}
		free(f.b);
	}
}

static void write_file(const char *dir, const char *name, const buf *f)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(f->b, 1, f->len, fp) != f->len || fclose(fp)) {
		perror(path);
		exit(1);
	}
}

/* The files of tests/data/png: a few valid ones and the hostile ones. */
static int write_samples(const char *dir)
{
	buf f = small_rgba();
	write_file(dir, "rgba8.png", &f);
	f.b[8 + 25 + 8] ^= 1;
	write_file(dir, "bad-crc.png", &f);
	f.b[8 + 25 + 8] ^= 1;
	f.len -= 12;
	write_file(dir, "truncated.png", &f);
	f.len += 12;
	put(&f, "junk", 4);
	write_file(dir, "trailing.png", &f);
	free(f.b);
	unsigned char r[] = {0, 1, 2, 3, 4};
	f = make_png(100000, 100000, 8, 6, NULL, r, sizeof(r));
	write_file(dir, "huge-ihdr.png", &f);
	free(f.b);
	buf ex = {0};
	unsigned char plte[] = {255, 0, 0, 0, 255, 0, 0, 0, 255}, trns[] = {128};
	chunk(&ex, "PLTE", plte, sizeof(plte));
	chunk(&ex, "tRNS", trns, sizeof(trns));
	chunk(&ex, "tEXt", "Comment\0hello", 13);
	unsigned char r2[] = {0, 0x18};
	f = make_png(3, 1, 2, 3, &ex, r2, sizeof(r2));
	write_file(dir, "palette2.png", &f);
	free(f.b);
	free(ex.b);
	unsigned char g16[] = {0, 0x12, 0x34, 0xFF, 0x01};
	f = make_png(2, 1, 16, 0, NULL, g16, sizeof(g16));
	write_file(dir, "grey16.png", &f);
	free(f.b);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_samples(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grey_depths),
		cmocka_unit_test(test_grey_alpha),
		cmocka_unit_test(test_truecolour),
		cmocka_unit_test(test_palette),
		cmocka_unit_test(test_interlaced),
		cmocka_unit_test(test_extra_chunks_stripped),
		cmocka_unit_test(test_signature_and_truncation),
		cmocka_unit_test(test_crc),
		cmocka_unit_test(test_huge_and_zero_sides),
		cmocka_unit_test(test_zlib_bomb),
		cmocka_unit_test(test_trailing_and_structure),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_data_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
