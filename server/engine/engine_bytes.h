/*
 * engine_bytes.h: growing byte buffers written (bytes, bytes_put_) and
 * bounded ones read (reader, reader_get_), for the engine's two binary
 * encodings: snapshots (engine_snap.c) and the image of a batch's ops
 * (engine_opimage.c), including the pose channel both of them hold.
 *
 * Private to server/engine/. The byte order itself is codec/bytes.h's,
 * which the binary frames use too; this adds the buffer, the bounds and
 * the engine's compound values. The helpers are static inline because
 * replay reads many doubles through them, and each must compile to a few
 * loads. A reader never reads past its 'len' bytes: a short read sets
 * 'bad' and yields zeros. A bytes_put_ writes into space reserved with
 * bytes_reserve first; it never checks.
 */
#ifndef RIGD_ENGINE_BYTES_H
#define RIGD_ENGINE_BYTES_H

#include "codec/bytes.h"
#include "core/err.h"
#include "core/math.h"
#include "core/pose.h"

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

/* The bytes of a pose channel with an id of 0 bytes: u8 id_len, then
 * f64 t[3] r[4] s[3]. Both encodings lay a channel out so. */
#define ENG_CHANNEL_MIN 81

/* The bytes_put_ helpers write into reserved space. */
static inline void bytes_put_u8(bytes *b, unsigned v)
{
	b->p[b->len++] = (unsigned char)v;
}

static inline void bytes_put_u16(bytes *b, unsigned v)
{
	le_put(b->p + b->len, v, 2);
	b->len += 2;
}

static inline void bytes_put_u32(bytes *b, uint32_t v)
{
	le_put(b->p + b->len, v, 4);
	b->len += 4;
}

static inline void bytes_put_f64(bytes *b, double d)
{
	le_put_f64(b->p + b->len, d);
	b->len += 8;
}

static inline void bytes_put_vec3(bytes *b, vec3 v)
{
	bytes_put_f64(b, v.x);
	bytes_put_f64(b, v.y);
	bytes_put_f64(b, v.z);
}

/* x y z w, the order both encodings store a quaternion in. */
static inline void bytes_put_quat(bytes *b, quat q)
{
	bytes_put_f64(b, q.x);
	bytes_put_f64(b, q.y);
	bytes_put_f64(b, q.z);
	bytes_put_f64(b, q.w);
}

static inline void bytes_put_raw(bytes *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* One pose channel: u8 id_len, id, f64 t[3] r[4] s[3]; the caller has
 * reserved ENG_CHANNEL_MIN + strlen(c->id) bytes. */
static inline void bytes_put_channel(bytes *b, const pose_channel *c)
{
	size_t len = strlen(c->id);

	bytes_put_u8(b, (unsigned)len);
	bytes_put_raw(b, c->id, len);
	bytes_put_vec3(b, c->t);
	bytes_put_quat(b, c->r);
	bytes_put_vec3(b, c->s);
}

/* A 2D pose channel's shear, f64 shx shy, after bytes_put_channel in the
 * formats that carry it; the caller has reserved ENG_CHANNEL_SHEAR bytes. */
#define ENG_CHANNEL_SHEAR 16
static inline void bytes_put_channel_shear(bytes *b, const pose_channel *c)
{
	bytes_put_f64(b, c->shear[0]);
	bytes_put_f64(b, c->shear[1]);
}

typedef struct reader {
	const unsigned char *p;
	size_t len, off;
	bool bad;
} reader;

/* The next 'n' bytes, or NULL (and r->bad) when fewer are left. */
static inline const unsigned char *reader_take(reader *r, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		return NULL;
	}
	const unsigned char *p = r->p + r->off;
	r->off += n;
	return p;
}

static inline unsigned reader_get_u8(reader *r)
{
	const unsigned char *p = reader_take(r, 1);
	return p ? p[0] : 0;
}

static inline unsigned reader_get_u16(reader *r)
{
	const unsigned char *p = reader_take(r, 2);
	return p ? (unsigned)le_get(p, 2) : 0;
}

static inline uint32_t reader_get_u32(reader *r)
{
	const unsigned char *p = reader_take(r, 4);
	return p ? le_get32(p) : 0;
}

static inline double reader_get_f64(reader *r)
{
	const unsigned char *p = reader_take(r, 8);
	return p ? le_get_f64(p) : 0;
}

static inline vec3 reader_get_vec3(reader *r)
{
	vec3 v;
	v.x = reader_get_f64(r);
	v.y = reader_get_f64(r);
	v.z = reader_get_f64(r);
	return v;
}

static inline quat reader_get_quat(reader *r)
{
	quat q;
	q.x = reader_get_f64(r);
	q.y = reader_get_f64(r);
	q.z = reader_get_f64(r);
	q.w = reader_get_f64(r);
	return q;
}

/* The values of a pose channel after its id (which each encoding reads
 * and checks in its own way): t, r, s into 'c'. */
static inline void reader_get_channel_trs(reader *r, pose_channel *c)
{
	c->t = reader_get_vec3(r);
	c->r = reader_get_quat(r);
	c->s = reader_get_vec3(r);
}

/* The shear bytes_put_channel_shear wrote. */
static inline void reader_get_channel_shear(reader *r, pose_channel *c)
{
	c->shear[0] = reader_get_f64(r);
	c->shear[1] = reader_get_f64(r);
}

/* Copies 'n' bytes into the string pool as a NUL-terminated string. */
static inline const char *reader_get_str(reader *r, size_t n, char *pool, size_t *used)
{
	const unsigned char *p = reader_take(r, n);
	if (!p)
		return NULL;
	char *s = pool + *used;
	memcpy(s, p, n);
	s[n] = 0;
	*used += n + 1;
	return s;
}

#endif
