/*
 * bytes.h: little-endian integers and IEEE doubles and floats in byte
 * arrays, the one place that spells out the byte order of rigd's binary
 * formats: the binary frames (proto_bin.c, proto_bin_read.c) and, above
 * codec, the engine's snapshots and op images (engine/engine_bytes.h).
 *
 * Everything is static inline because the hot loops (a frame's matrices,
 * replay's doubles) call these per number and each must compile to a load
 * or a store. They never check a length: the caller has checked that the
 * bytes are there (engine_bytes.h's reader does it for the engine). They
 * read and write nothing else, so the header needs no library.
 */
#ifndef RIGD_CODEC_BYTES_H
#define RIGD_CODEC_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* On a little-endian host a number's bytes are already in file order. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BYTES_LE_HOST 1
#else
#define BYTES_LE_HOST 0
#endif

/* Stores the low 'n' bytes (1 to 8) of 'v' at 'p', least significant first. */
static inline void le_put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i) & 0xff);
}

/* The 'n' bytes (1 to 8) at 'p' as an unsigned integer, least significant
 * first. */
static inline uint64_t le_get(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Written out byte by byte (no loop), which compilers turn into one load
 * on little-endian machines: replay reads many of these. */
static inline uint32_t le_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le_get64(const unsigned char *p)
{
	return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

/* The 'size' bytes (4 or 8) of the float or double at 'value' at 'p',
 * little-endian, bit for bit: one copy on a little-endian host (compilers
 * merge no byte loop into one store), the bytes reversed elsewhere. */
static inline void le_put_number(unsigned char *p, const void *value, size_t size)
{
#if BYTES_LE_HOST
	memcpy(p, value, size);
#else
	for (size_t i = 0; i < size; i++)
		p[i] = ((const unsigned char *)value)[size - 1 - i];
#endif
}

static inline void le_put_f64(unsigned char *p, double d)
{
	le_put_number(p, &d, sizeof(d));
}

static inline void le_put_f32(unsigned char *p, float f)
{
	le_put_number(p, &f, sizeof(f));
}

static inline double le_get_f64(const unsigned char *p)
{
	uint64_t v = le_get64(p);
	double d;

	memcpy(&d, &v, sizeof(d));
	return d;
}

static inline float le_get_f32(const unsigned char *p)
{
	uint32_t v = le_get32(p);
	float f;

	memcpy(&f, &v, sizeof(f));
	return f;
}

#endif
