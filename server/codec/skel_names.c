/*
 * skel_names.c: a skeleton's bone and slot names to node ids and back
 * (skel_names.h). Pure byte work: no allocation, no scene.
 */
#include "skel_names.h"

#include <stdbool.h>

static const char HEX[] = "0123456789abcdef";

/* True for the bytes an id keeps as they are: [A-Za-z0-9-]. */
static bool kept(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

/* The value of a lowercase hex digit, or -1 (uppercase is not an encoding
 * the encoder writes, so it is refused to keep ids unique). */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

size_t skel_id_length(const char *name, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += kept((unsigned char)name[i]) ? 1 : 3;
	return n;
}

int skel_id_encode(const char *name, size_t len, char *out, size_t out_size)
{
	size_t n;

	if (out_size > 0)
		out[0] = '\0';
	n = skel_id_length(name, len);
	if (len == 0 || n + 1 > out_size || n > (size_t)0x7fffffff)
		return -1;
	n = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (kept(c)) {
			out[n++] = (char)c;
		} else {
			out[n++] = '_';
			out[n++] = HEX[c >> 4];
			out[n++] = HEX[c & 15];
		}
	}
	out[n] = '\0';
	return (int)n;
}

int skel_id_decode(const char *id, char *out, size_t out_size)
{
	size_t n = 0;

	if (out_size > 0)
		out[0] = '\0';
	if (!id[0])
		return -1;
	for (size_t i = 0; id[i]; ) {
		unsigned char c = (unsigned char)id[i];
		int hi, lo;

		if (n + 2 > out_size || n >= (size_t)0x7fffffff)
			goto bad;
		if (kept(c)) {
			out[n++] = (char)c;
			i++;
			continue;
		}
		if (c != '_')
			goto bad;
		hi = hex_value(id[i + 1]);
		lo = hi < 0 ? -1 : hex_value(id[i + 2]);
		if (lo < 0 || kept((unsigned char)(hi << 4 | lo)))
			goto bad;
		out[n++] = (char)(hi << 4 | lo);
		i += 3;
	}
	out[n] = '\0';
	return (int)n;
bad:
	if (out_size > 0)
		out[0] = '\0';
	return -1;
}
