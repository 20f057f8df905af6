/*
 * json.h: the one JSON writer of the codec. A growable byte buffer and the
 * writers of JSON strings and numbers that the protocol's encoders
 * (proto_encode.c) and the glTF export (gltf_export.c) both append with.
 *
 * Numbers are printed with the fewest significant digits (15, 16 or 17)
 * that read back to the same bits, laid out as printf's %g lays them out
 * (integers up to 2^53 - 1 as integers, -0 as "-0"), so a value written and
 * read again is bit-identical. Strings are escaped with the few rules JSON
 * requires.
 *
 * This module only writes: it parses nothing, includes no parser and knows
 * nothing of scenes, SQL or sockets.
 */
#ifndef RIGD_JSON_H
#define RIGD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_NUMBER_MAX 32  /* bytes json_format_number writes, NUL included */

/*
 * Bytes under construction. 'head' bytes are reserved in front of the text
 * (for libwebsockets' LWS_PRE), so the text is data + head, len bytes long
 * and always NUL-terminated once anything was appended. Appending keeps no
 * pointer into 'data' valid. Invariant: len <= cap whenever data is set.
 */
typedef struct json_buf {
	char *data;
	size_t head;    /* bytes reserved before the text */
	size_t len;     /* bytes of text */
	size_t cap;     /* bytes allocated after head, the NUL not counted */
} json_buf;

/* An empty buffer reserving 'head' bytes in front of the text. */
void json_buf_init(json_buf *b, size_t head);
/* Frees the memory; 'b' is then empty (same head). Accepts NULL. */
void json_buf_release(json_buf *b);
/* Empties the text, keeping the memory. */
void json_buf_reset(json_buf *b);
/* Cuts the text back to its first 'len' bytes (len <= b->len): how a
 * writer that failed half-way leaves the buffer as it found it. */
void json_buf_truncate(json_buf *b, size_t len);
/* The text ("" when empty); valid until the next append or release. */
const char *json_buf_str(const json_buf *b);
/*
 * Hands the text to the caller as a malloc'd NUL-terminated string (the
 * caller frees it) and leaves 'b' empty. With head > 0 the string starts at
 * the returned pointer + head, and the caller frees the returned pointer.
 * Returns NULL when out of memory (b unchanged).
 */
char *json_buf_take(json_buf *b);
/* Appends raw bytes. 0 or RIGD_E_NOMEM (b unchanged). */
int json_buf_append(json_buf *b, const char *bytes, size_t n);
/* Appends the NUL-terminated 'str' as it is. 0 or RIGD_E_NOMEM (b unchanged). */
int json_buf_puts(json_buf *b, const char *str);
/* Appends the string literal 'lit', its length counted by the compiler (a
 * non-literal does not compile). 0 or RIGD_E_NOMEM (b unchanged). */
#define JSON_BUF_LIT(b, lit) json_buf_append((b), "" lit, sizeof(lit) - 1)

/* How json_buf_string escapes (flags, or'ed). */
enum json_string_flags {
	/* \n, \t and \r as those two-character escapes (else \u000a, ...). */
	JSON_STR_SHORT_ESCAPES = 1u << 0,
	/* Bytes that are not valid UTF-8 become U+FFFD (else they pass through
	 * as they are, for text already checked to be UTF-8). */
	JSON_STR_REPAIR_UTF8 = 1u << 1,
};

/*
 * Appends 'str' as a JSON string literal: quotes, \" and \\, control
 * characters as \u00XX (lowercase hex) or, with JSON_STR_SHORT_ESCAPES,
 * \n \t \r; everything else as it is (see JSON_STR_REPAIR_UTF8). 0 or
 * RIGD_E_NOMEM (b unchanged).
 */
int json_buf_string(json_buf *b, const char *str, unsigned flags);

/* Appends 'v' as the shortest JSON number that reads back to the same bits
 * (see the header). RIGD_E_NOT_FINITE for NaN or infinity, RIGD_E_NOMEM;
 * b unchanged on either. */
int json_buf_number(json_buf *b, double v);
/* As json_buf_number, but a non-finite 'v' is written as null, which keeps
 * the document valid. 0 or RIGD_E_NOMEM (b unchanged). */
int json_buf_number_or_null(json_buf *b, double v);
/* Appends 'v' in decimal. 0 or RIGD_E_NOMEM (b unchanged). */
int json_buf_int(json_buf *b, int64_t v);

/* Writes finite 'v' as json_buf_number does, NUL-terminated, into 'out'
 * (JSON_NUMBER_MAX bytes); returns its length. */
int json_format_number(char out[JSON_NUMBER_MAX], double v);

/* The length of the valid UTF-8 sequence at 'p' ('n' >= 1 bytes left), or
 * 0 when it is not one: no overlong forms, no surrogates, nothing above
 * U+10FFFF. Shared with the readers, which refuse what it refuses. */
size_t json_utf8_len(const unsigned char *p, size_t n);

#endif
