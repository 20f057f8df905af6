/*
 * base64.c: strict RFC 4648 base64 (base64.h), decoding and encoding. The
 * decoder reads untrusted text and must never read past 'len' or allocate
 * before the size check.
 */
#include "base64.h"

#include "core/err.h"

#include <stdlib.h>

/* The value of a base64 symbol, or -1. */
static int symbol_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

size_t base64_decoded_max(size_t len)
{
	return len / 4 * 3;
}

static const char *describe(unsigned char c)
{
	if (c == '=')
		return "padding before the end";
	if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
		return "whitespace";
	if (c == '-' || c == '_')
		return "a URL-safe symbol";
	return "a character outside the base64 alphabet";
}

int base64_decode(const char *text, size_t len, size_t max_bytes, const char *field,
		  unsigned char **out, size_t *out_len, edit_error *err)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t pad = 0;

	*out = NULL;
	*out_len = 0;
	if (len % 4) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field,
			       "%s: base64 of %zu characters, not a multiple of 4", field, len);
		return RIGD_E_BAD_FIELD;
	}
	if (len && t[len - 1] == '=')
		pad = len >= 2 && t[len - 2] == '=' ? 2 : 1;
	size_t n = base64_decoded_max(len) - pad;
	if (n > max_bytes) {
		edit_error_set(err, RIGD_E_TOO_LARGE, -1, field,
			       "%s: %zu bytes once decoded, over the limit of %zu", field, n,
			       max_bytes);
		return RIGD_E_TOO_LARGE;
	}
	for (size_t i = 0; i < len - pad; i++)
		if (symbol_value(t[i]) < 0) {
			edit_error_set(err, RIGD_E_BAD_FIELD, -1, field,
				       "%s: base64 character %zu (0x%02x) is %s", field, i, t[i],
				       describe(t[i]));
			return RIGD_E_BAD_FIELD;
		}
	/* The unused low bits of the last symbol before padding must be zero. */
	if (pad && (symbol_value(t[len - pad - 1]) & (pad == 2 ? 0x0f : 0x03))) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field,
			       "%s: base64 ends in a symbol with unused bits set", field);
		return RIGD_E_BAD_FIELD;
	}
	unsigned char *buf = malloc(n + 1);
	if (!buf) {
		edit_error_set(err, RIGD_E_NOMEM, -1, field, "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < len; i += 4) {
		unsigned v = 0;
		for (size_t j = 0; j < 4; j++) {
			int s = t[i + j] == '=' && i + j >= len - pad ? 0 : symbol_value(t[i + j]);
			v = v << 6 | (unsigned)s;
		}
		unsigned char group[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8),
					  (unsigned char)v};
		for (size_t j = 0; j < 3 && k < n; j++)
			buf[k++] = group[j];
	}
	buf[n] = 0;
	*out = buf;
	*out_len = n;
	return 0;
}

int base64_encode_json(json_buf *b, const void *bytes, size_t len)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = bytes;
	char quad[4];

	if (JSON_BUF_LIT(b, "\""))
		return RIGD_E_NOMEM;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		size_t left = len - i;
		if (left > 1)
			v |= (unsigned)p[i + 1] << 8;
		if (left > 2)
			v |= p[i + 2];
		quad[0] = abc[v >> 18 & 63];
		quad[1] = abc[v >> 12 & 63];
		quad[2] = left > 1 ? abc[v >> 6 & 63] : '=';
		quad[3] = left > 2 ? abc[v & 63] : '=';
		if (json_buf_append(b, quad, 4))
			return RIGD_E_NOMEM;
	}
	return JSON_BUF_LIT(b, "\"") ? RIGD_E_NOMEM : 0;
}
