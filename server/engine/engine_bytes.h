/*
 * engine_bytes.h: little-endian byte buffers, written (bytes, put_) and read
 * (reader, get_), for the engine's two binary encodings: snapshots
 * (engine_snap.c) and the image of a batch's ops (engine_opimage.c).
 *
 * Private to server/engine/. The helpers are static inline because replay
 * reads many doubles through them, and each must compile to a few loads. A
 * reader never reads past its 'len' bytes: a short read sets 'bad' and
 * yields zeros. A put_ writes into space reserved with bytes_reserve first;
 * it never checks.
 */
#ifndef RIGD_ENGINE_BYTES_H
#define RIGD_ENGINE_BYTES_H

#include "core/err.h"
#include "core/math.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bytes {
	unsigned char *p;
	size_t len, cap;
} bytes;

static inline int bytes_reserve(bytes *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more) {
		if (cap > SIZE_MAX / 2)
			return RIGD_E_NOMEM;
		cap *= 2;
	}
	unsigned char *p = realloc(b->p, cap);
	if (!p)
		return RIGD_E_NOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* The put_ helpers write into reserved space. */
static inline void put_u8(bytes *b, unsigned v)
{
	b->p[b->len++] = (unsigned char)v;
}

static inline void put_u16(bytes *b, unsigned v)
{
	put_u8(b, v & 0xff);
	put_u8(b, (v >> 8) & 0xff);
}

static inline void put_u32(bytes *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put_u8(b, (v >> (8 * i)) & 0xff);
}

static inline void put_f64(bytes *b, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	for (int i = 0; i < 8; i++)
		put_u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}

static inline void put_vec3(bytes *b, vec3 v)
{
	put_f64(b, v.x);
	put_f64(b, v.y);
	put_f64(b, v.z);
}

static inline void put_raw(bytes *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* Appends the snapshot of 's' to 'out'. 0 or RIGD_E_NOMEM. */
typedef struct reader {
	const unsigned char *p;
	size_t len, off;
	bool bad;
} reader;

static inline const unsigned char *take(reader *r, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		return NULL;
	}
	const unsigned char *p = r->p + r->off;
	r->off += n;
	return p;
}

static inline unsigned get_u8(reader *r)
{
	const unsigned char *p = take(r, 1);
	return p ? p[0] : 0;
}

static inline unsigned get_u16(reader *r)
{
	const unsigned char *p = take(r, 2);
	return p ? (unsigned)p[0] | (unsigned)p[1] << 8 : 0;
}

/* Written out byte by byte (no loop), which compilers turn into one load
 * on little-endian machines: replay reads many of these. */
static inline uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t get_u32(reader *r)
{
	const unsigned char *p = take(r, 4);
	return p ? le32(p) : 0;
}

static inline double get_f64(reader *r)
{
	const unsigned char *p = take(r, 8);
	uint64_t v = p ? (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32 : 0;
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

static inline vec3 get_vec3(reader *r)
{
	vec3 v;
	v.x = get_f64(r);
	v.y = get_f64(r);
	v.z = get_f64(r);
	return v;
}

/* Copies 'n' bytes into the string pool as a NUL-terminated string. */
static inline const char *get_str(reader *r, size_t n, char *pool, size_t *used)
{
	const unsigned char *p = take(r, n);
	if (!p)
		return NULL;
	char *s = pool + *used;
	memcpy(s, p, n);
	s[n] = 0;
	*used += n + 1;
	return s;
}

/*
 * Builds a scene from a snapshot. Returns 0 and a new scene (node limit
 * unlimited: the caller sets it), RIGD_E_STORAGE for bytes that are not a
 * valid snapshot, or RIGD_E_NOMEM.
 */

#endif
