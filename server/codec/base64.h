/*
 * base64.h: strict base64 (RFC 4648, section 4) of files that travel inside
 * JSON: decoding uploads such as the PNG pages of a skeleton import, and
 * encoding a PNG page on the log line that stored it.
 *
 * Strict means: only the standard alphabet A-Z a-z 0-9 + /, the length a
 * multiple of four, '=' padding only at the end and only as much as the last
 * group needs, and the unused bits of the last symbol zero (so that one
 * byte string has exactly one accepted spelling). No whitespace, line
 * breaks, URL-safe alphabet or missing padding: a JSON string carries the
 * text unbroken, and a lenient decoder would let two different uploads
 * stand for the same bytes. It never allocates more than the size limit.
 */
#ifndef RIGD_BASE64_H
#define RIGD_BASE64_H

#include "json.h"

#include "core/edit.h"

#include <stddef.h>

/* The decoded size of 'len' base64 characters (ignoring padding), an upper
 * bound on what base64_decode writes. */
size_t base64_decoded_max(size_t len);

/*
 * Decodes 'len' characters of 'text' (need not be NUL-terminated) into a new
 * buffer *out of *out_len bytes (the caller frees it; one spare NUL byte
 * follows, not counted). 'max_bytes' bounds the decoded size and is checked
 * from the length alone, before anything is allocated. Returns 0, or
 * RIGD_E_BAD_FIELD (not strict base64: the message gives the offset and
 * what was wrong), RIGD_E_TOO_LARGE (over 'max_bytes') or RIGD_E_NOMEM,
 * with 'err' (may be NULL) naming 'field' and *out NULL.
 */
int base64_decode(const char *text, size_t len, size_t max_bytes, const char *field,
		  unsigned char **out, size_t *out_len, edit_error *err);

/* Appends the base64 of 'len' bytes (the alphabet and padding the decoder
 * takes) as a JSON string, quotes included. 0 or RIGD_E_NOMEM (b may hold
 * part of it: the caller truncates, as with every json_buf write). */
int base64_encode_json(json_buf *b, const void *bytes, size_t len);

#endif
