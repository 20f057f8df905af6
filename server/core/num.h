/*
 * num.h: the one parser of decimal integers in text rigd reads: command-line
 * flags, query arguments, header values. Strict where strtoll is lenient: no
 * leading space, no '+', no trailing characters, no overflow.
 *
 * No allocation, no global state, no dependency beyond the C library.
 */
#ifndef RIGD_NUM_H
#define RIGD_NUM_H

#include <stdbool.h>
#include <stdint.h>

/* The largest seq rigd hands out or accepts: 2^53, the largest integer a
 * JSON number read as a double holds exactly. */
#define NUM_SEQ_MAX ((int64_t)1 << 53)

/*
 * Parses 's', an optional '-' and one or more decimal digits and nothing
 * else, as an integer in lo..hi. Returns true and sets *out; returns false
 * (and leaves *out unchanged) for NULL, an empty string, any other
 * character, or a value outside lo..hi (overflow included).
 */
bool num_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);

#endif
