/*
 * proto.c: every JSON rigd reads or writes (see proto.h).
 *
 * Reading is one scan and one build over the text, with no recursion and
 * one allocation. The scan checks every token (strict RFC 8259 numbers: no
 * "+1", ".5", "01"; strings of valid UTF-8 without raw control characters,
 * unknown escapes, lone surrogates or \u0000, which would cut an id short),
 * caps the nesting at PARSE_DEPTH_MAX and counts what the document needs;
 * the build checks the structure and links the values. The decoders below
 * then check every member against their schema: known, not repeated, of
 * the right type, arrays of their exact length, numbers finite.
 *
 * Why not cJSON, which the rest of the project has at hand: replaying a
 * log is decoding ops as fast as they can be applied (issue 3 asks for a
 * million set ops a second), and cJSON 1.7.15 reads about 200,000 such ops
 * a second on this machine (a malloc per value and per key, localeconv()
 * and strtod per number). This reader does several million; numbers go
 * through an exact fast path (number_value) and strtod only when that
 * cannot decide.
 *
 * Writing appends to a proto_buf by hand: every double is printed with the
 * fewest digits that read back to the same bits, and -0 stays -0.
 *
 * This module knows nothing of SQL or sockets.
 */
#include "proto.h"

#include "err.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than any message of the protocol needs (an op's bounds.min is at
 * depth 5); deeper text is bad_json. */
#define PARSE_DEPTH_MAX 32
/* Longer numbers are bad_json (rigd writes at most 24 characters). */
#define NUMBER_CHARS_MAX 63
/* The largest integer a double holds exactly; integers beyond are refused. */
#define EXACT_INT_MAX 9007199254740991.0

/* ---------- the byte buffer ---------- */

void proto_buf_init(proto_buf *b, size_t head)
{
	memset(b, 0, sizeof(*b));
	b->head = head;
}

void proto_buf_release(proto_buf *b)
{
	if (!b)
		return;
	free(b->data);
	proto_buf_init(b, b->head);
}

void proto_buf_reset(proto_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[b->head] = '\0';
}

const char *proto_buf_str(const proto_buf *b)
{
	return b->data ? b->data + b->head : "";
}

char *proto_buf_take(proto_buf *b)
{
	char *data = b->data;

	if (!data) {
		if (!(data = calloc(1, b->head + 1)))
			return NULL;
	}
	proto_buf_init(b, b->head);
	return data;
}

/* Makes room for 'n' more bytes of text plus the NUL. */
static int reserve(proto_buf *b, size_t n)
{
	size_t need, nc;
	char *d;

	if (n > SIZE_MAX / 2 - b->len - b->head)
		return RIGD_E_NOMEM;
	need = b->len + n;
	if (b->data && need <= b->cap)
		return 0;
	nc = b->cap ? b->cap : 256;
	while (nc < need)
		nc *= 2;
	if (!(d = realloc(b->data, b->head + nc + 1)))
		return RIGD_E_NOMEM;
	b->data = d;
	b->cap = nc;
	return 0;
}

int proto_buf_append(proto_buf *b, const char *bytes, size_t n)
{
	if (reserve(b, n))
		return RIGD_E_NOMEM;
	memcpy(b->data + b->head + b->len, bytes, n);
	b->len += n;
	b->data[b->head + b->len] = '\0';
	return 0;
}

static int put(proto_buf *b, const char *str)
{
	return proto_buf_append(b, str, strlen(str));
}

int proto_buf_json_string(proto_buf *b, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	size_t start = b->len;
	const unsigned char *p = (const unsigned char *)str;
	int rc = proto_buf_append(b, "\"", 1);

	/* Copy runs of plain bytes at once; escape quotes, backslashes and
	 * control characters. Bytes >= 0x80 pass through (decoded input is
	 * checked to be UTF-8). */
	while (rc == 0 && *p) {
		const unsigned char *run = p;

		while (*p >= 0x20 && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			rc = proto_buf_append(b, (const char *)run, (size_t)(p - run));
		if (rc || !*p)
			break;
		if (*p == '"')
			rc = put(b, "\\\"");
		else if (*p == '\\')
			rc = put(b, "\\\\");
		else if (*p == '\n')
			rc = put(b, "\\n");
		else if (*p == '\t')
			rc = put(b, "\\t");
		else if (*p == '\r')
			rc = put(b, "\\r");
		else {
			char esc[7] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15], 0 };

			rc = put(b, esc);
		}
		p++;
	}
	if (rc == 0)
		rc = proto_buf_append(b, "\"", 1);
	if (rc) {
		b->len = start;
		if (b->data)
			b->data[b->head + start] = '\0';
	}
	return rc;
}

static double number_value(const char *p, size_t len);

/*
 * Writes the decimal digits 'dig' (n of them, first one non-zero) times
 * 10^exp10 of the first digit, as printf's %g would lay them out at
 * precision 'prec': fixed notation for exponents -4..prec-1, else d.ddde+XX.
 * Trailing zeros are already gone from 'dig'.
 */
static int layout(char *out, bool neg, const char *dig, int n, int exp10, int prec)
{
	int k = 0;

	if (neg)
		out[k++] = '-';
	if (exp10 >= -4 && exp10 < prec) {
		if (exp10 < 0) {
			out[k++] = '0';
			out[k++] = '.';
			for (int z = 0; z < -exp10 - 1; z++)
				out[k++] = '0';
			memcpy(out + k, dig, (size_t)n);
			k += n;
		} else {
			for (int i = 0; i <= exp10 || i < n; i++) {
				if (i == exp10 + 1)
					out[k++] = '.';
				out[k++] = i < n ? dig[i] : '0';
			}
		}
	} else {
		out[k++] = dig[0];
		if (n > 1) {
			out[k++] = '.';
			memcpy(out + k, dig + 1, (size_t)n - 1);
			k += n - 1;
		}
		k += sprintf(out + k, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	}
	out[k] = '\0';
	return k;
}

/*
 * The shortest of 15, 16 or 17 significant digits that reads back to the
 * same bits (17 always does), laid out as %g would; integers up to 2^53 as
 * integers, -0 as "-0". printf runs once, for the 17 correctly rounded
 * digits; the shorter candidates are those digits rounded, kept only when
 * number_value reads them back to v. 'out' holds at least 32 bytes.
 */
static int format_number(char *out, double v)
{
	char e17[40], dig[20], cand[40];
	const char *p;
	int exp10, n;
	bool neg = signbit(v);

	if (v == 0)
		return sprintf(out, "%s", neg ? "-0" : "0");
	if (fabs(v) <= EXACT_INT_MAX && v == trunc(v))
		return sprintf(out, "%" PRId64, (int64_t)v);
	/* e17 is "d.dddddddddddddddde[+-]X..." after an optional sign. */
	snprintf(e17, sizeof(e17), "%.16e", fabs(v));
	dig[0] = e17[0];
	memcpy(dig + 1, e17 + 2, 16);
	p = strchr(e17, 'e');
	exp10 = atoi(p + 1);
	for (int prec = 15; prec <= 17; prec++) {
		char r[20];
		int re = exp10, len;

		memcpy(r, dig, 17);
		if (prec < 17 && r[prec] >= '5') {
			int i = prec - 1;

			while (i >= 0 && r[i] == '9')
				r[i--] = '0';
			if (i >= 0) {
				r[i]++;
			} else {
				/* 9.99.. rounded up to 10.0..: one more decade. */
				memmove(r + 1, r, (size_t)prec - 1);
				r[0] = '1';
				re++;
			}
		}
		n = prec;
		while (n > 1 && r[n - 1] == '0')
			n--;
		len = layout(cand, neg, r, n, re, prec);
		if (prec == 17 || number_value(cand, (size_t)len) == v) {
			memcpy(out, cand, (size_t)len + 1);
			return len;
		}
	}
	return 0; /* not reached: 17 digits always read back */
}

int proto_buf_json_number(proto_buf *b, double v)
{
	char num[40];
	int n;

	if (!isfinite(v))
		return RIGD_E_NOT_FINITE;
	n = format_number(num, v);
	return proto_buf_append(b, num, (size_t)n);
}

/* ---------- limits ---------- */

proto_limits proto_limits_default(void)
{
	return (proto_limits){ .max_bytes = PROTO_DEFAULT_MAX_BYTES,
			       .max_selection = PROTO_DEFAULT_MAX_SELECTION,
			       .edit = edit_limits_default() };
}

/* ---------- reading: the document ---------- */

/*
 * A parsed JSON text: one allocation holding every value and every decoded
 * string. Members and elements are linked lists in document order.
 */
enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv jv;
struct jv {
	int type;
	bool boolean;
	double num;
	const char *key;   /* the member name inside an object, else NULL */
	const char *str;   /* J_STR: NUL-terminated (\u0000 is refused) */
	jv *child;         /* first element or member */
	jv *next;          /* next sibling */
};

typedef struct jdoc {
	jv *root;
	void *mem;
} jdoc;

#define J_FOREACH(m, container) for ((m) = (container)->child; (m); (m) = (m)->next)

static bool j_is(const jv *v, int type)
{
	return v && v->type == type;
}

/* ---------- reading: tokens ---------- */

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits at p as a code unit, or -1. */
static long hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hex_value(p[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* True for the characters that may follow a number. */
static bool ends_value(char c)
{
	switch (c) {
	case ',': case ']': case '}': case ' ': case '\t': case '\n': case '\r':
		return true;
	default:
		return false;
	}
}

/* Length of the JSON number at p (RFC 8259 grammar), 0 if it is not one or
 * is not followed by a delimiter ("01" is not two numbers). */
static size_t number_len(const char *p, size_t n)
{
	size_t i = 0;

	if (i < n && p[i] == '-')
		i++;
	if (i < n && p[i] == '0')
		i++;
	else if (i < n && p[i] >= '1' && p[i] <= '9')
		while (i < n && is_digit(p[i]))
			i++;
	else
		return 0;
	if (i < n && p[i] == '.') {
		size_t d = ++i;

		while (i < n && is_digit(p[i]))
			i++;
		if (i == d)
			return 0;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		size_t d;

		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		d = i;
		while (i < n && is_digit(p[i]))
			i++;
		if (i == d)
			return 0;
	}
	if (i < n && !ends_value(p[i]))
		return 0;
	return i;
}

/*
 * Length of the string literal at p (quotes included), 0 if it is bad: an
 * unknown escape, \u0000 (it would end the C string early, so "a\u0000/.."
 * would read as "a"), a surrogate escape out of its pair, a raw control
 * character, or bytes that are not UTF-8. *bytes gets its decoded length.
 */
static size_t string_len(const char *p, size_t n, size_t *bytes)
{
	size_t i = 1, out = 0;

	while (i < n) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"') {
			*bytes = out;
			return i + 1;
		}
		if (c == '\\') {
			char e = i + 1 < n ? p[i + 1] : '\0';

			if (e == 'u') {
				long u = i + 5 < n ? hex4(p + i + 2) : -1, lo;

				if (u <= 0 || (u >= 0xdc00 && u <= 0xdfff))
					return 0;
				if (u >= 0xd800 && u <= 0xdbff) {
					if (i + 11 >= n || p[i + 6] != '\\' || p[i + 7] != 'u')
						return 0;
					lo = hex4(p + i + 8);
					if (lo < 0xdc00 || lo > 0xdfff)
						return 0;
					out += 4;
					i += 12;
				} else {
					out += u < 0x80 ? 1 : u < 0x800 ? 2 : 3;
					i += 6;
				}
			} else if (e && strchr("\"\\/bfnrt", e)) {
				out++;
				i += 2;
			} else {
				return 0;
			}
		} else if (c < 0x20) {
			return 0;
		} else {
			size_t u = utf8_len((const unsigned char *)p + i, n - i);

			if (!u)
				return 0;
			out += u;
			i += u;
		}
	}
	return 0;
}

/* Decodes the string literal at p (checked by string_len) into out, NUL
 * included. */
static void string_decode(const char *p, char *out)
{
	size_t i = 1;

	for (;;) {
		char c = p[i];

		if (c == '"')
			break;
		if (c != '\\') {
			*out++ = c;
			i++;
			continue;
		}
		c = p[i + 1];
		i += 2;
		if (c != 'u') {
			*out++ = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r'
				 : c == 't' ? '\t' : c;
			continue;
		}
		{
			long u = hex4(p + i);

			i += 4;
			if (u >= 0xd800 && u <= 0xdbff) {
				u = 0x10000 + ((u - 0xd800) << 10) + (hex4(p + i + 2) - 0xdc00);
				i += 6;
			}
			if (u < 0x80) {
				*out++ = (char)u;
			} else if (u < 0x800) {
				*out++ = (char)(0xc0 | (u >> 6));
				*out++ = (char)(0x80 | (u & 0x3f));
			} else if (u < 0x10000) {
				*out++ = (char)(0xe0 | (u >> 12));
				*out++ = (char)(0x80 | ((u >> 6) & 0x3f));
				*out++ = (char)(0x80 | (u & 0x3f));
			} else {
				*out++ = (char)(0xf0 | (u >> 18));
				*out++ = (char)(0x80 | ((u >> 12) & 0x3f));
				*out++ = (char)(0x80 | ((u >> 6) & 0x3f));
				*out++ = (char)(0x80 | (u & 0x3f));
			}
		}
	}
	*out = '\0';
}

/* ---------- reading: numbers ---------- */

static const double exact_pow10[] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#if defined(__x86_64__) && LDBL_MANT_DIG == 64
/* Exact in a 64-bit significand: 10^27 = 5^27 * 2^27 and 5^27 < 2^64. */
static const long double exact_pow10l[] = {
	1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
	1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
	1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};
#endif

/*
 * The double nearest to the decimal number at p (len characters, checked
 * by number_len), exactly as strtod gives it, but without strtod's
 * arbitrary-precision path for the numbers rigd writes itself (at most 17
 * significant digits, modest exponents):
 *   - m * 10^e with m < 2^53 and |e| <= 22: one correctly rounded IEEE
 *     operation on exact operands (Clinger's fast path);
 *   - with an x87 long double (64-bit significand), m < 2^64 and |e| <= 27:
 *     m and 10^e are exact in it, the product or quotient is rounded once
 *     to 64 bits and then to 53. Rounding twice can only go wrong when the
 *     first result lies exactly halfway between two doubles (its 11 extra
 *     bits are 0x400); that case, and everything else, goes to strtod.
 */
static double number_value(const char *p, size_t len)
{
	char buf[NUMBER_CHARS_MAX + 1];
	uint64_t m = 0;
	int digits = 0, exp10 = 0, e = 0;
	bool neg = false, dropped = false, in_fraction = false, exp_neg = false;
	size_t i = 0;

	if (p[i] == '-')
		neg = true, i++;
	for (; i < len && (is_digit(p[i]) || p[i] == '.'); i++) {
		if (p[i] == '.') {
			in_fraction = true;
			continue;
		}
		if (digits < 19) {
			m = m * 10 + (uint64_t)(p[i] - '0');
			if (m)
				digits++;
			if (in_fraction)
				exp10--;
		} else {
			dropped |= p[i] != '0';
			if (!in_fraction)
				exp10++;
		}
	}
	if (i < len) {
		i++; /* e or E */
		if (p[i] == '+' || p[i] == '-')
			exp_neg = p[i++] == '-';
		for (; i < len && e < 100000; i++)
			e = e * 10 + (p[i] - '0');
		exp10 += exp_neg ? -e : e;
	}
	if (m == 0 && !dropped)
		return neg ? -0.0 : 0.0;
	if (!dropped && m <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
		double d = (double)m;

		d = exp10 >= 0 ? d * exact_pow10[exp10] : d / exact_pow10[-exp10];
		return neg ? -d : d;
	}
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
	if (!dropped && exp10 >= -27 && exp10 <= 27) {
		long double x = (long double)m;
		uint64_t significand;

		x = exp10 >= 0 ? x * exact_pow10l[exp10] : x / exact_pow10l[-exp10];
		/* The x87 format keeps its 64-bit significand in the low 8 bytes. */
		memcpy(&significand, &x, sizeof(significand));
		if ((significand & 0x7ff) != 0x400)
			return neg ? -(double)x : (double)x;
	}
#endif
	memcpy(buf, p, len);
	buf[len] = '\0';
	return strtod(buf, NULL);
}

/* ---------- reading: structure ---------- */

/*
 * Checks every token and the nesting depth, and counts the values and the
 * string bytes the document will need. Structure (brackets, commas,
 * colons) is checked while building.
 */
static bool scan_text(const char *p, size_t n, size_t *values, size_t *bytes)
{
	int depth = 0;
	size_t i = 0, k, s;

	*values = *bytes = 0;
	while (i < n) {
		switch (p[i]) {
		case ' ': case '\t': case '\n': case '\r': case ',': case ':':
			i++;
			continue;
		case '{': case '[':
			if (++depth > PARSE_DEPTH_MAX)
				return false;
			i++;
			break;
		case '}': case ']':
			depth--;
			i++;
			continue;
		case '"':
			if (!(k = string_len(p + i, n - i, &s)))
				return false;
			*bytes += s + 1;
			i += k;
			break;
		case 't':
			if (n - i < 4 || memcmp(p + i, "true", 4) != 0)
				return false;
			i += 4;
			break;
		case 'f':
			if (n - i < 5 || memcmp(p + i, "false", 5) != 0)
				return false;
			i += 5;
			break;
		case 'n':
			if (n - i < 4 || memcmp(p + i, "null", 4) != 0)
				return false;
			i += 4;
			break;
		default:
			k = number_len(p + i, n - i);
			if (!k || k > NUMBER_CHARS_MAX)
				return false;
			i += k;
			break;
		}
		++*values;
	}
	return true;
}

static size_t skip_ws(const char *p, size_t n, size_t i)
{
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i;
}

/*
 * Builds the document of p (n bytes, scanned by scan_text) into the nodes
 * and string space given. Without recursion: 'open' is the stack of
 * containers being filled (depth is at most PARSE_DEPTH_MAX). False for
 * any structural error.
 */
static bool build(const char *p, size_t n, jv *nodes, char *chars, jv **root)
{
	enum { VALUE, VALUE_OR_END, KEY, KEY_OR_END, AFTER, DONE } st = VALUE;
	jv *open[PARSE_DEPTH_MAX + 1], *last[PARSE_DEPTH_MAX + 1];
	int top = -1;
	size_t i = 0, used = 0, s;
	const char *key = NULL;

	*root = NULL;
	for (;;) {
		jv *v;
		char c;

		i = skip_ws(p, n, i);
		if (i == n)
			return st == DONE;
		c = p[i];
		if (st == DONE)
			return false;
		if (st == KEY || st == KEY_OR_END) {
			if (st == KEY_OR_END && c == '}')
				goto close;
			if (c != '"')
				return false;
			size_t bytes;

			s = string_len(p + i, n - i, &bytes);
			string_decode(p + i, chars);
			key = chars;
			chars += bytes + 1;
			i = skip_ws(p, n, i + s);
			if (i == n || p[i] != ':')
				return false;
			i++;
			st = VALUE;
			continue;
		}
		if (st == AFTER) {
			if (c == ',') {
				i++;
				st = open[top]->type == J_OBJ ? KEY : VALUE;
				continue;
			}
			if ((c == '}' && open[top]->type == J_OBJ) || (c == ']' && open[top]->type == J_ARR))
				goto close;
			return false;
		}
		if (st == VALUE_OR_END && c == ']')
			goto close;
		if (!(c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n' ||
		      c == '-' || is_digit(c)))
			return false; /* a ']' after ',' and the like */
		/* A value. */
		v = &nodes[used++];
		memset(v, 0, sizeof(*v));
		v->key = key;
		key = NULL;
		if (top < 0)
			*root = v;
		else if (last[top])
			last[top]->next = v;
		else
			open[top]->child = v;
		if (top >= 0)
			last[top] = v;
		if (c == '{' || c == '[') {
			v->type = c == '{' ? J_OBJ : J_ARR;
			open[++top] = v;
			last[top] = NULL;
			st = c == '{' ? KEY_OR_END : VALUE_OR_END;
			i++;
			continue;
		}
		if (c == '"') {
			size_t bytes;

			s = string_len(p + i, n - i, &bytes);
			string_decode(p + i, chars);
			v->type = J_STR;
			v->str = chars;
			chars += bytes + 1;
			i += s;
		} else if (c == 't' || c == 'f') {
			v->type = J_BOOL;
			v->boolean = c == 't';
			i += c == 't' ? 4 : 5;
		} else if (c == 'n') {
			v->type = J_NULL;
			i += 4;
		} else {
			s = number_len(p + i, n - i);
			v->type = J_NUM;
			v->num = number_value(p + i, s);
			i += s;
		}
		st = top < 0 ? DONE : AFTER;
		continue;
close:
		i++;
		top--;
		st = top < 0 ? DONE : AFTER;
	}
}

static void jdoc_free(jdoc *doc)
{
	free(doc->mem);
	doc->mem = NULL;
	doc->root = NULL;
}

/* Parses 'len' bytes of 'json' into *doc: too_large, bad_json or nomem. */
static int parse(const char *json, size_t len, const proto_limits *lim, jdoc *doc,
		 edit_error *err)
{
	size_t values, bytes;

	doc->root = NULL;
	doc->mem = NULL;
	if (len > lim->max_bytes) {
		edit_error_set(err, RIGD_E_TOO_LARGE, -1, "", "the message is %zu bytes; the limit is %zu",
			       len, lim->max_bytes);
		return RIGD_E_TOO_LARGE;
	}
	if (!json || memchr(json, '\0', len) || !scan_text(json, len, &values, &bytes) ||
	    values == 0)
		goto bad;
	doc->mem = malloc(values * sizeof(jv) + bytes);
	if (!doc->mem) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	if (build(json, len, doc->mem, (char *)doc->mem + values * sizeof(jv), &doc->root))
		return 0;
	jdoc_free(doc);
bad:
	edit_error_set(err, RIGD_E_BAD_JSON, -1, "", "%s", err_str(RIGD_E_BAD_JSON));
	return RIGD_E_BAD_JSON;
}

/* Where a field sits, for error messages: op index (-1: none). */
typedef struct where {
	int op;
	edit_error *err;
} where;

/* A member name fit to quote: printable ASCII, at most 64 characters. */
static const char *safe_key(const char *key, char *out, size_t cap)
{
	size_t i;

	for (i = 0; key[i] && i + 4 < cap; i++)
		out[i] = ((unsigned char)key[i] >= 0x20 && (unsigned char)key[i] < 0x7f &&
			  key[i] != '\'') ? key[i] : '?';
	if (key[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

static int bad_field(const where *w, const char *field, const char *what)
{
	char k[72];

	edit_error_set(w->err, RIGD_E_BAD_FIELD, w->op, safe_key(field, k, sizeof(k)), "%s: %s", k,
		       what);
	return RIGD_E_BAD_FIELD;
}

/*
 * Matches the members of 'obj' against 'names' (n entries): member i of the
 * object with name names[j] lands in found[j]. Unknown and repeated names
 * are bad_field; so is an object that is not one.
 */
static int members(const jv *obj, const char *obj_name, const char *const *names, int n,
		   const jv **found, const where *w)
{
	const jv *m;

	if (!j_is(obj, J_OBJ))
		return bad_field(w, obj_name, "must be an object");
	for (int j = 0; j < n; j++)
		found[j] = NULL;
	J_FOREACH(m, obj) {
		int j;

		for (j = 0; j < n; j++)
			if (strcmp(m->key, names[j]) == 0)
				break;
		if (j == n)
			return bad_field(w, m->key, "unknown field");
		if (found[j])
			return bad_field(w, m->key, "repeated field");
		found[j] = m;
	}
	return 0;
}

static int get_number(const jv *item, const char *field, double *out, const where *w)
{
	if (!j_is(item, J_NUM))
		return bad_field(w, field, "must be a number");
	if (!isfinite(item->num)) {
		edit_error_set(w->err, RIGD_E_NOT_FINITE, w->op, field, "%s: %s", field,
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	*out = item->num;
	return 0;
}

/* An exact integer in [min, max]. */
static int get_int(const jv *item, const char *field, double min, double max, int64_t *out,
		   const where *w)
{
	double v;
	int rc = get_number(item, field, &v, w);

	if (rc)
		return rc;
	if (v != trunc(v) || v < min || v > max)
		return bad_field(w, field, "must be an integer in range");
	*out = (int64_t)v;
	return 0;
}

/* An array of exactly n numbers. */
static int get_numbers(const jv *item, const char *field, double *out, int n, const where *w)
{
	const jv *e;
	int i = 0, rc;

	if (!j_is(item, J_ARR))
		goto wrong;
	J_FOREACH(e, item) {
		if (i == n)
			goto wrong;
		if ((rc = get_number(e, field, &out[i++], w)) != 0)
			return rc;
	}
	if (i == n)
		return 0;
wrong:
	return bad_field(w, field, n == 3 ? "must be an array of 3 numbers"
					  : "must be an array of 4 numbers");
}

static int get_vec3(const jv *item, const char *field, vec3 *out, const where *w)
{
	double v[3];
	int rc = get_numbers(item, field, v, 3, w);

	if (rc == 0)
		*out = (vec3){ v[0], v[1], v[2] };
	return rc;
}

static int get_bool(const jv *item, const char *field, bool *out, const where *w)
{
	if (!j_is(item, J_BOOL))
		return bad_field(w, field, "must be true or false");
	*out = item->boolean;
	return 0;
}

/* An id (scene_id_valid, at most max_len) into out; with allow_null, null
 * gives "". */
static int get_id(const jv *item, const char *field, bool allow_null, int max_len,
		  char out[SCENE_ID_MAX + 1], const where *w)
{
	const char *v;

	if (allow_null && j_is(item, J_NULL)) {
		out[0] = '\0';
		return 0;
	}
	if (!j_is(item, J_STR))
		return bad_field(w, field, allow_null ? "must be an id or null" : "must be an id");
	v = item->str;
	if (!scene_id_valid(v) || strlen(v) > (size_t)max_len) {
		char k[72];

		edit_error_set(w->err, RIGD_E_BAD_ID, w->op, field, "%s: bad id '%s': %s", field,
			       safe_key(v, k, sizeof(k)), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* A scene name: an id that is not "." or "..", which name directories in
 * the URL paths that carry scene names. */
static int get_scene_name(const jv *item, const char *field, char out[SCENE_ID_MAX + 1],
			  const where *w)
{
	int rc = get_id(item, field, false, SCENE_ID_MAX, out, w);

	if (rc == 0 && (strcmp(out, ".") == 0 || strcmp(out, "..") == 0)) {
		edit_error_set(w->err, RIGD_E_BAD_ID, w->op, field, "%s: '%s' cannot name a scene",
			       field, out);
		out[0] = '\0';
		return RIGD_E_BAD_ID;
	}
	return rc;
}

/* A string of at most max_bytes (or null when allow_null: *out NULL),
 * copied into *out (malloc'd). */
static int get_text(const jv *item, const char *field, size_t max_bytes, bool allow_null,
		    char **out, const where *w)
{
	*out = NULL;
	if (allow_null && j_is(item, J_NULL))
		return 0;
	if (!j_is(item, J_STR))
		return bad_field(w, field, allow_null ? "must be a string or null" : "must be a string");
	if (strlen(item->str) > max_bytes) {
		char what[48];

		snprintf(what, sizeof(what), "longer than %zu bytes", max_bytes);
		return bad_field(w, field, what);
	}
	if (!(*out = strdup(item->str))) {
		edit_error_set(w->err, RIGD_E_NOMEM, w->op, field, "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	return 0;
}

/* ---------- reading: ops and batches ---------- */

enum {
	K_OP, K_ID, K_PARENT, K_INDEX, K_NAME, K_T, K_R, K_S, K_PIVOT, K_EULER, K_BOUNDS,
	K_MESH, K_KIND, K_CAMERA, K_VISIBLE, K_KEEP_WORLD, K_COUNT
};

static const char *const op_keys[K_COUNT] = {
	"op", "id", "parent", "index", "name", "t", "r", "s", "pivot", "euler", "bounds",
	"mesh", "kind", "camera", "visible", "keep_world",
};

/* The EDIT_F_ bits a member stands for (camera: any of fov, near, far). */
static const unsigned key_fields[K_COUNT] = {
	0, 0, EDIT_F_PARENT, EDIT_F_INDEX, EDIT_F_NAME, EDIT_F_T, EDIT_F_R, EDIT_F_S,
	EDIT_F_PIVOT, EDIT_F_EULER, EDIT_F_BOUNDS, EDIT_F_MESH, EDIT_F_KIND,
	EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR, EDIT_F_VISIBLE, EDIT_F_KEEP_WORLD,
};

static int decode_bounds(const jv *item, edit_op *op, const where *w)
{
	static const char *const names[] = { "min", "max" };
	const jv *f[2];
	int rc;

	op->has_bounds = false;
	op->bounds = aabb_make(vec3_make(0, 0, 0), vec3_make(0, 0, 0));
	if (j_is(item, J_NULL))
		return 0;
	if ((rc = members(item, "bounds", names, 2, f, w)) != 0)
		return rc;
	if (!f[0] || !f[1])
		return bad_field(w, "bounds", "needs both min and max");
	if ((rc = get_vec3(f[0], "bounds", &op->bounds.min, w)) != 0 ||
	    (rc = get_vec3(f[1], "bounds", &op->bounds.max, w)) != 0)
		return rc;
	op->has_bounds = true;
	return 0;
}

static int decode_camera(const jv *item, edit_op *op, const where *w)
{
	static const char *const names[] = { "fov", "near", "far" };
	const jv *f[3];
	int rc;

	if ((rc = members(item, "camera", names, 3, f, w)) != 0)
		return rc;
	if (!f[0] && !f[1] && !f[2])
		return bad_field(w, "camera", "needs fov, near or far");
	if (f[0] && (rc = get_number(f[0], "fov", &op->fov_deg, w)) != 0)
		return rc;
	if (f[1] && (rc = get_number(f[1], "near", &op->znear, w)) != 0)
		return rc;
	if (f[2] && (rc = get_number(f[2], "far", &op->zfar, w)) != 0)
		return rc;
	op->fields |= (f[0] ? EDIT_F_FOV : 0) | (f[1] ? EDIT_F_NEAR : 0) | (f[2] ? EDIT_F_FAR : 0);
	return 0;
}

/* Decodes op object 'item' (index k) and appends it to 'b'. */
static int decode_op(const jv *item, int k, const proto_limits *lim, edit_batch *b,
		     edit_error *err)
{
	const jv *f[K_COUNT];
	where w = { k, err };
	edit_op *op;
	int kind, rc;
	unsigned allowed;
	char id[SCENE_ID_MAX + 1];
	int64_t index;
	double r[4];

	if ((rc = members(item, "ops", op_keys, K_COUNT, f, &w)) != 0)
		return rc;
	if (!f[K_OP] || !j_is(f[K_OP], J_STR))
		return bad_field(&w, "op", "must be create, set, reparent or delete");
	if ((kind = edit_op_from_name(f[K_OP]->str)) < 0) {
		char q[72];

		edit_error_set(err, RIGD_E_UNKNOWN_OP, k, "op", "unknown op '%s'",
			       safe_key(f[K_OP]->str, q, sizeof(q)));
		return RIGD_E_UNKNOWN_OP;
	}
	if (!f[K_ID])
		return bad_field(&w, "id", "missing");
	if ((rc = get_id(f[K_ID], "id", false, lim->edit.max_id_len, id, &w)) != 0)
		return rc;
	allowed = edit_fields_allowed(kind);
	for (int j = K_PARENT; j < K_COUNT; j++)
		if (f[j] && !(key_fields[j] & allowed)) {
			char what[48];

			snprintf(what, sizeof(what), "not allowed in a %s op", edit_op_name(kind));
			return bad_field(&w, op_keys[j], what);
		}
	if (kind == EDIT_REPARENT && !f[K_PARENT])
		return bad_field(&w, "parent", "missing (null makes the node a root)");
	if (f[K_R] && f[K_EULER])
		return bad_field(&w, "euler", "give either r or euler, not both");
	if (!(op = edit_batch_add(b, kind, id))) {
		edit_error_set(err, RIGD_E_NOMEM, k, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	/* From here the op belongs to 'b', which the caller releases on error. */
	if (f[K_PARENT]) {
		op->fields |= EDIT_F_PARENT;
		if ((rc = get_id(f[K_PARENT], "parent", true, lim->edit.max_id_len, op->parent,
				 &w)) != 0)
			return rc;
	}
	if (f[K_INDEX]) {
		if ((rc = get_int(f[K_INDEX], "index", 0, INT_MAX, &index, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_INDEX;
		op->index = (int)index;
	}
	if (f[K_NAME]) {
		if ((rc = get_text(f[K_NAME], "name", SCENE_NAME_MAX, true, &op->name, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_NAME;
	}
	if (f[K_T]) {
		if ((rc = get_vec3(f[K_T], "t", &op->t, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_T;
	}
	if (f[K_R]) {
		if ((rc = get_numbers(f[K_R], "r", r, 4, &w)) != 0)
			return rc;
		op->r = (quat){ r[0], r[1], r[2], r[3] };
		op->fields |= EDIT_F_R;
	}
	if (f[K_S]) {
		if ((rc = get_vec3(f[K_S], "s", &op->s, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_S;
	}
	if (f[K_PIVOT]) {
		if ((rc = get_vec3(f[K_PIVOT], "pivot", &op->pivot, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_PIVOT;
	}
	if (f[K_EULER]) {
		if ((rc = get_vec3(f[K_EULER], "euler", &op->euler_deg, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_EULER;
	}
	if (f[K_BOUNDS]) {
		if ((rc = decode_bounds(f[K_BOUNDS], op, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_BOUNDS;
	}
	if (f[K_MESH]) {
		if ((rc = get_text(f[K_MESH], "mesh", SCENE_MESH_MAX, true, &op->mesh, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_MESH;
	}
	if (f[K_KIND]) {
		if (!j_is(f[K_KIND], J_STR) ||
		    (op->node_kind = edit_kind_from_name(f[K_KIND]->str)) < 0)
			return bad_field(&w, "kind", "must be group, mesh or camera");
		op->fields |= EDIT_F_KIND;
	}
	if (f[K_CAMERA] && (rc = decode_camera(f[K_CAMERA], op, &w)) != 0)
		return rc;
	if (f[K_VISIBLE]) {
		if ((rc = get_bool(f[K_VISIBLE], "visible", &op->visible, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_VISIBLE;
	}
	if (f[K_KEEP_WORLD]) {
		if ((rc = get_bool(f[K_KEEP_WORLD], "keep_world", &op->keep_world, &w)) != 0)
			return rc;
		op->fields |= EDIT_F_KEEP_WORLD;
	}
	return 0;
}

/* Decodes the ops array into 'b' (which holds no ops yet). */
static int decode_op_array(const jv *arr, const proto_limits *lim, edit_batch *b,
			   edit_error *err)
{
	const jv *e;
	where w = { -1, err };
	int n = 0, rc;

	if (!j_is(arr, J_ARR))
		return bad_field(&w, "ops", "must be an array of ops");
	J_FOREACH(e, arr)
		n++;
	if (n == 0)
		return bad_field(&w, "ops", "a batch needs at least one op");
	if (n > lim->edit.max_ops) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "ops", "%d ops in one batch; the limit is %d", n,
			       lim->edit.max_ops);
		return RIGD_E_LIMIT;
	}
	if (edit_batch_reserve(b, n) != 0) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	n = 0;
	J_FOREACH(e, arr)
		if ((rc = decode_op(e, n++, lim, b, err)) != 0)
			return rc;
	return 0;
}

static int decode_client_seq(const jv *item, edit_batch *b, const where *w)
{
	int rc;

	b->has_client_seq = false;
	if (j_is(item, J_NULL))
		return 0;
	if ((rc = get_int(item, "client_seq", 0, EXACT_INT_MAX, &b->client_seq, w)) != 0)
		return rc;
	b->has_client_seq = true;
	return 0;
}

int proto_decode_batch(const char *json, size_t len, const proto_limits *lim, edit_batch *out,
		       edit_error *err)
{
	static const char *const names[] = { "ops", "client", "client_seq" };
	proto_limits defaults = proto_limits_default();
	const jv *f[3];
	jdoc doc;
	const jv *root;
	where w = { -1, err };
	int rc;

	edit_batch_init(out);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &doc, err)) != 0)
		return rc;
	root = doc.root;
	if ((rc = members(root, "batch", names, 3, f, &w)) != 0)
		goto out;
	if (!f[0]) {
		rc = bad_field(&w, "ops", "missing");
		goto out;
	}
	if ((f[1] && (rc = get_id(f[1], "client", true, lim->edit.max_id_len, out->client, &w))) ||
	    (f[2] && (rc = decode_client_seq(f[2], out, &w))) ||
	    (rc = decode_op_array(f[0], lim, out, err)))
		goto out;
out:
	jdoc_free(&doc);
	if (rc)
		edit_batch_release(out);
	return rc;
}

int proto_decode_ops(const char *json, size_t len, const proto_limits *lim, edit_batch *out,
		     edit_error *err)
{
	proto_limits defaults = proto_limits_default();
	jdoc doc;
	const jv *root;
	int rc;

	edit_batch_init(out);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &doc, err)) != 0)
		return rc;
	root = doc.root;
	rc = decode_op_array(root, lim, out, err);
	jdoc_free(&doc);
	if (rc)
		edit_batch_release(out);
	return rc;
}

/* ---------- reading: websocket messages ---------- */

enum {
	M_TYPE, M_SCENE, M_REQ, M_OPS, M_CLIENT, M_CLIENT_SEQ, M_SELECTION, M_NAME, M_COUNT
};

static const char *const msg_keys[M_COUNT] = {
	"type", "scene", "req", "ops", "client", "client_seq", "selection", "name",
};

static const char *const type_names[] = {
	NULL, "subscribe", "unsubscribe", "edit", "undo", "redo", "presence",
};

/* Members each type accepts, and those it requires. */
#define BIT(k) (1u << (k))
static const unsigned type_allowed[] = {
	0,
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_OPS) | BIT(M_CLIENT) | BIT(M_CLIENT_SEQ),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_CLIENT),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_REQ) | BIT(M_CLIENT),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_SELECTION) | BIT(M_NAME),
};
static const unsigned type_required[] = {
	0,
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_OPS),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE),
	BIT(M_TYPE) | BIT(M_SCENE) | BIT(M_SELECTION),
};

static int decode_req(const jv *item, proto_req *req, const where *w)
{
	memset(req, 0, sizeof(*req));
	if (j_is(item, J_NULL))
		return 0;
	if (j_is(item, J_STR)) {
		size_t n = strlen(item->str);

		if (n > PROTO_REQ_MAX)
			return bad_field(w, "req", "longer than 64 bytes");
		memcpy(req->str, item->str, n + 1);
		req->is_string = true;
		req->present = true;
		return 0;
	}
	if (!j_is(item, J_NUM) || !isfinite(item->num) ||
	    item->num != trunc(item->num) || item->num < 0 ||
	    item->num > EXACT_INT_MAX)
		return bad_field(w, "req", "must be an integer 0..2^53-1 or a string");
	req->num = (int64_t)item->num;
	req->present = true;
	return 0;
}

static int decode_selection(const jv *arr, const proto_limits *lim, proto_msg *m,
			    const where *w)
{
	const jv *e;
	int n = 0, rc;

	if (!j_is(arr, J_ARR))
		return bad_field(w, "selection", "must be an array of ids");
	J_FOREACH(e, arr)
		n++;
	if (n > lim->max_selection) {
		edit_error_set(w->err, RIGD_E_LIMIT, -1, "selection",
			       "%d ids selected; the limit is %d", n, lim->max_selection);
		return RIGD_E_LIMIT;
	}
	if (n && !(m->selection = calloc((size_t)n, sizeof(edit_id)))) {
		edit_error_set(w->err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	J_FOREACH(e, arr) {
		if ((rc = get_id(e, "selection", false, lim->edit.max_id_len,
				 m->selection[m->n_selection].s, w)) != 0)
			return rc;
		m->n_selection++;
	}
	return 0;
}

static void msg_init(proto_msg *m)
{
	memset(m, 0, sizeof(*m));
	edit_batch_init(&m->batch);
}

void proto_msg_release(proto_msg *m)
{
	if (!m)
		return;
	edit_batch_release(&m->batch);
	free(m->selection);
	free(m->name);
	msg_init(m);
}

int proto_decode_msg(const char *json, size_t len, const proto_limits *lim, proto_msg *out,
		     proto_req *req_out, edit_error *err)
{
	proto_limits defaults = proto_limits_default();
	const jv *f[M_COUNT];
	jdoc doc;
	const jv *root;
	where w = { -1, err };
	int rc, type = 0;
	unsigned present = 0, extra, missing;

	msg_init(out);
	edit_error_clear(err);
	if (req_out)
		memset(req_out, 0, sizeof(*req_out));
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &doc, err)) != 0)
		return rc;
	root = doc.root;
	if ((rc = members(root, "message", msg_keys, M_COUNT, f, &w)) != 0) {
		/* Even with an unknown member, a good req lets the reply carry it. */
		const jv *req = NULL, *m;

		if (j_is(root, J_OBJ))
			J_FOREACH(m, root)
				if (strcmp(m->key, "req") == 0)
					req = m;
		where quiet = { -1, NULL };

		if (req && req_out && decode_req(req, req_out, &quiet) != 0)
			memset(req_out, 0, sizeof(*req_out));
		goto out;
	}
	if (f[M_REQ]) {
		if ((rc = decode_req(f[M_REQ], &out->req, &w)) != 0)
			goto out;
		if (req_out)
			*req_out = out->req;
	}
	if (!f[M_TYPE] || !j_is(f[M_TYPE], J_STR)) {
		rc = bad_field(&w, "type", f[M_TYPE] ? "must be a string" : "missing");
		goto out;
	}
	for (int t = PROTO_SUBSCRIBE; t <= PROTO_PRESENCE; t++)
		if (strcmp(f[M_TYPE]->str, type_names[t]) == 0)
			type = t;
	if (!type) {
		char q[72];

		edit_error_set(err, RIGD_E_UNKNOWN_TYPE, -1, "type", "unknown message type '%s'",
			       safe_key(f[M_TYPE]->str, q, sizeof(q)));
		rc = RIGD_E_UNKNOWN_TYPE;
		goto out;
	}
	out->type = type;
	for (int j = 0; j < M_COUNT; j++)
		if (f[j])
			present |= BIT(j);
	if ((extra = present & ~type_allowed[type]) != 0) {
		char what[48];

		snprintf(what, sizeof(what), "not allowed in a %s message", type_names[type]);
		rc = bad_field(&w, msg_keys[__builtin_ctz(extra)], what);
		goto out;
	}
	if ((missing = type_required[type] & ~present) != 0) {
		rc = bad_field(&w, msg_keys[__builtin_ctz(missing)], "missing");
		goto out;
	}
	if ((rc = get_scene_name(f[M_SCENE], "scene", out->scene, &w)) != 0)
		goto out;
	if (f[M_CLIENT] &&
	    (rc = get_id(f[M_CLIENT], "client", true, lim->edit.max_id_len, out->batch.client, &w)))
		goto out;
	if (f[M_CLIENT_SEQ] && (rc = decode_client_seq(f[M_CLIENT_SEQ], &out->batch, &w)) != 0)
		goto out;
	if (f[M_OPS] && (rc = decode_op_array(f[M_OPS], lim, &out->batch, err)) != 0)
		goto out;
	if (f[M_SELECTION] && (rc = decode_selection(f[M_SELECTION], lim, out, &w)) != 0)
		goto out;
	if (f[M_NAME] && (rc = get_text(f[M_NAME], "name", SCENE_NAME_MAX, true, &out->name, &w)))
		goto out;
out:
	jdoc_free(&doc);
	if (rc)
		proto_msg_release(out);
	return rc;
}

/* ---------- reading: log lines and small bodies ---------- */

int proto_decode_log_line(const char *json, size_t len, const proto_limits *lim,
			  proto_log_line *out, edit_error *err)
{
	static const char *const names[] = { "seq", "time", "client", "client_seq", "ops" };
	proto_limits defaults = proto_limits_default();
	const jv *f[5];
	jdoc doc;
	const jv *root;
	where w = { -1, err };
	int64_t seq = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	edit_batch_init(&out->batch);
	edit_error_clear(err);
	if (!lim)
		lim = &defaults;
	if ((rc = parse(json, len, lim, &doc, err)) != 0)
		return rc;
	root = doc.root;
	if ((rc = members(root, "line", names, 5, f, &w)) != 0)
		goto out;
	if (!f[0] || !f[1] || !f[4]) {
		rc = bad_field(&w, !f[0] ? "seq" : !f[1] ? "time" : "ops", "missing");
		goto out;
	}
	if ((rc = get_int(f[0], "seq", 1, EXACT_INT_MAX, &seq, &w)) != 0 ||
	    (rc = get_int(f[1], "time", -EXACT_INT_MAX, EXACT_INT_MAX, &out->time_us, &w)) != 0 ||
	    (f[2] && (rc = get_id(f[2], "client", true, lim->edit.max_id_len, out->batch.client,
				  &w)) != 0) ||
	    (f[3] && (rc = decode_client_seq(f[3], &out->batch, &w)) != 0) ||
	    (rc = decode_op_array(f[4], lim, &out->batch, err)) != 0)
		goto out;
	out->seq = (uint64_t)seq;
out:
	jdoc_free(&doc);
	if (rc) {
		edit_batch_release(&out->batch);
		out->seq = 0;
		out->time_us = 0;
	}
	return rc;
}

int proto_decode_scene_create(const char *json, size_t len, char name_out[SCENE_ID_MAX + 1],
			      edit_error *err)
{
	static const char *const names[] = { "name" };
	proto_limits lim = proto_limits_default();
	const jv *f[1];
	jdoc doc;
	const jv *root;
	where w = { -1, err };
	int rc;

	name_out[0] = '\0';
	edit_error_clear(err);
	if ((rc = parse(json, len, &lim, &doc, err)) != 0)
		return rc;
	root = doc.root;
	if ((rc = members(root, "body", names, 1, f, &w)) == 0)
		rc = f[0] ? get_scene_name(f[0], "name", name_out, &w)
			  : bad_field(&w, "name", "missing");
	jdoc_free(&doc);
	if (rc)
		name_out[0] = '\0';
	return rc;
}

/* ---------- writing ---------- */

/*
 * The writers below chain appends with '||' and, on any failure, cut the
 * buffer back to where the encoder started: an encoder that fails leaves
 * the buffer as it was.
 */
static int undo_to(proto_buf *b, size_t start)
{
	b->len = start;
	if (b->data)
		b->data[b->head + start] = '\0';
	return RIGD_E_NOMEM;
}

static int put_num(proto_buf *b, double v)
{
	/* Non-finite values never reach the scene; null keeps the JSON valid
	 * should one ever be handed in from elsewhere. */
	return isfinite(v) ? proto_buf_json_number(b, v) : put(b, "null");
}

static int put_int(proto_buf *b, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	return proto_buf_append(b, num, (size_t)n);
}

static int put_numbers(proto_buf *b, const double *v, int n)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || put_num(b, v[i]))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

static int put_vec3(proto_buf *b, vec3 v)
{
	const double a[3] = { v.x, v.y, v.z };

	return put_numbers(b, a, 3);
}

static int put_quat(proto_buf *b, quat q)
{
	const double a[4] = { q.x, q.y, q.z, q.w };

	return put_numbers(b, a, 4);
}

/* A string, or null for NULL. */
static int put_str_or_null(proto_buf *b, const char *str)
{
	return str ? proto_buf_json_string(b, str) : put(b, "null");
}

/* ',"key":' (no comma when first). */
static int key(proto_buf *b, const char *k, bool first)
{
	return (!first && put(b, ",")) || put(b, "\"") || put(b, k) || put(b, "\":");
}

static int put_bounds(proto_buf *b, bool has, aabb box)
{
	if (!has)
		return put(b, "null");
	return put(b, "{\"min\":") || put_vec3(b, box.min) || put(b, ",\"max\":") ||
	       put_vec3(b, box.max) || put(b, "}");
}

static int put_world(proto_buf *b, const scene *s, int node)
{
	mat4 w = scene_world(s, node);

	return put_numbers(b, w.m, 16);
}

static int node_body(proto_buf *b, const scene *s, int node)
{
	node_props p;
	int parent = scene_parent(s, node);
	vec3 euler;

	scene_props(s, node, &p);
	/* Derived for people, not replayed: + 0.0 shows -0 as 0. */
	euler = quat_to_euler_deg(p.r);
	euler = vec3_make(euler.x + 0.0, euler.y + 0.0, euler.z + 0.0);
	return put(b, "{\"id\":") || proto_buf_json_string(b, scene_id(s, node)) ||
	       key(b, "name", false) || put_str_or_null(b, p.name) ||
	       key(b, "parent", false) || put_str_or_null(b, parent >= 0 ? scene_id(s, parent) : NULL) ||
	       key(b, "index", false) || put_int(b, scene_child_index(s, node)) ||
	       key(b, "t", false) || put_vec3(b, p.t) ||
	       key(b, "r", false) || put_quat(b, p.r) ||
	       key(b, "s", false) || put_vec3(b, p.s) ||
	       key(b, "pivot", false) || put_vec3(b, p.pivot) ||
	       key(b, "euler", false) || put_vec3(b, euler) ||
	       key(b, "bounds", false) || put_bounds(b, p.has_bounds, p.bounds) ||
	       key(b, "mesh", false) || put_str_or_null(b, p.mesh) ||
	       key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(p.kind)) ||
	       key(b, "camera", false) || put(b, "{\"fov\":") || put_num(b, p.fov_deg) ||
	       put(b, ",\"near\":") || put_num(b, p.znear) || put(b, ",\"far\":") ||
	       put_num(b, p.zfar) || put(b, "}") ||
	       key(b, "visible", false) || put(b, p.visible ? "true" : "false") ||
	       key(b, "world", false) || put_world(b, s, node) || put(b, "}");
}

int proto_encode_node(proto_buf *b, const scene *s, int node)
{
	size_t start = b->len;

	return node_body(b, s, node) ? undo_to(b, start) : 0;
}

static int nodes_array(proto_buf *b, const scene *s)
{
	int n = scene_count(s);

	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++)
		if ((pos && put(b, ",")) || node_body(b, s, scene_at(s, pos)))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_tree(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"scene\":") || proto_buf_json_string(b, scene_name) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "nodes", false) || nodes_array(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_snapshot(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"snapshot\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "nodes", false) ||
	    nodes_array(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int put_req(proto_buf *b, const proto_req *req)
{
	if (!req || !req->present)
		return 0;
	if (key(b, "req", false))
		return RIGD_E_NOMEM;
	return req->is_string ? proto_buf_json_string(b, req->str) : put_int(b, req->num);
}

int proto_encode_ack(proto_buf *b, const proto_req *req, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"ack\"") || put_req(b, req) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "recomputed", false) || put_int(b, recomputed) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_ack(proto_buf *b, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "recomputed", false) ||
	    put_int(b, recomputed) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

/* "code","message","op","field" members of an error. */
static int error_members(proto_buf *b, const edit_error *e)
{
	const char *message = e->message[0] ? e->message : err_str(e->code);

	return key(b, "code", true) || proto_buf_json_string(b, err_code(e->code)) ||
	       key(b, "message", false) || proto_buf_json_string(b, message) ||
	       (e->op >= 0 && (key(b, "op", false) || put_int(b, e->op))) ||
	       (e->field[0] && (key(b, "field", false) || proto_buf_json_string(b, e->field)));
}

int proto_encode_error(proto_buf *b, const proto_req *req, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"error\"") || put_req(b, req) || put(b, ",") ||
	    error_members(b, e) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_error(proto_buf *b, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"error\":{") || error_members(b, e) || put(b, "}}"))
		return undo_to(b, start);
	return 0;
}

static int id_array(proto_buf *b, const edit_id *ids, int n)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || proto_buf_json_string(b, ids[i].s))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_update(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
			const int *world_nodes, int n_world, const int *changed_nodes,
			int n_changed, const edit_id *removed, int n_removed)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"update\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "world", false) ||
	    put(b, "{"))
		return undo_to(b, start);
	for (int i = 0; i < n_world; i++)
		if ((i && put(b, ",")) || proto_buf_json_string(b, scene_id(s, world_nodes[i])) ||
		    put(b, ":") || put_world(b, s, world_nodes[i]))
			return undo_to(b, start);
	if (put(b, "}") || key(b, "nodes", false) || put(b, "["))
		return undo_to(b, start);
	for (int i = 0; i < n_changed; i++)
		if ((i && put(b, ",")) || node_body(b, s, changed_nodes[i]))
			return undo_to(b, start);
	if (put(b, "]") || key(b, "removed", false) || id_array(b, removed, n_removed) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_presence(proto_buf *b, const char *scene_name, const char *client,
			  const char *name, const edit_id *selection, int n_selection)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"presence\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || key(b, "selection", false) ||
	    id_array(b, selection, n_selection) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_join(proto_buf *b, const char *scene_name, const char *client, const char *name)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"join\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_leave(proto_buf *b, const char *scene_name, const char *client)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"leave\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int op_body(proto_buf *b, const edit_op *op)
{
	unsigned f = op->fields;

	if (put(b, "{\"op\":") || proto_buf_json_string(b, edit_op_name(op->kind)) ||
	    key(b, "id", false) || proto_buf_json_string(b, op->id))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_PARENT) &&
	    (key(b, "parent", false) || put_str_or_null(b, op->parent[0] ? op->parent : NULL)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_INDEX) && op->index >= 0 && (key(b, "index", false) || put_int(b, op->index)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_NAME) && (key(b, "name", false) || put_str_or_null(b, op->name)))
		return RIGD_E_NOMEM;
	if (((f & EDIT_F_T) && (key(b, "t", false) || put_vec3(b, op->t))) ||
	    ((f & EDIT_F_R) && (key(b, "r", false) || put_quat(b, op->r))) ||
	    ((f & EDIT_F_S) && (key(b, "s", false) || put_vec3(b, op->s))) ||
	    ((f & EDIT_F_PIVOT) && (key(b, "pivot", false) || put_vec3(b, op->pivot))) ||
	    ((f & EDIT_F_EULER) && (key(b, "euler", false) || put_vec3(b, op->euler_deg))))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_BOUNDS) &&
	    (key(b, "bounds", false) || put_bounds(b, op->has_bounds, op->bounds)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_MESH) && (key(b, "mesh", false) || put_str_or_null(b, op->mesh)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KIND) &&
	    (key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(op->node_kind))))
		return RIGD_E_NOMEM;
	if (f & (EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR)) {
		bool first = true;

		if (key(b, "camera", false) || put(b, "{"))
			return RIGD_E_NOMEM;
		if ((f & EDIT_F_FOV) && (key(b, "fov", first) || put_num(b, op->fov_deg)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_FOV);
		if ((f & EDIT_F_NEAR) && (key(b, "near", first) || put_num(b, op->znear)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_NEAR);
		if ((f & EDIT_F_FAR) && (key(b, "far", first) || put_num(b, op->zfar)))
			return RIGD_E_NOMEM;
		if (put(b, "}"))
			return RIGD_E_NOMEM;
	}
	if ((f & EDIT_F_VISIBLE) &&
	    (key(b, "visible", false) || put(b, op->visible ? "true" : "false")))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KEEP_WORLD) &&
	    (key(b, "keep_world", false) || put(b, op->keep_world ? "true" : "false")))
		return RIGD_E_NOMEM;
	return put(b, "}");
}

int proto_encode_op(proto_buf *b, const edit_op *op)
{
	size_t start = b->len;

	return op_body(b, op) ? undo_to(b, start) : 0;
}

static int ops_array(proto_buf *b, const edit_batch *batch)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < batch->n_ops; i++)
		if ((i && put(b, ",")) || op_body(b, &batch->ops[i]))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_ops(proto_buf *b, const edit_batch *batch)
{
	size_t start = b->len;

	return ops_array(b, batch) ? undo_to(b, start) : 0;
}

int proto_encode_batch(proto_buf *b, const edit_batch *batch)
{
	size_t start = b->len;

	if (put(b, "{\"ops\":") || ops_array(b, batch) ||
	    (batch->client[0] &&
	     (key(b, "client", false) || proto_buf_json_string(b, batch->client))) ||
	    (batch->has_client_seq &&
	     (key(b, "client_seq", false) || put_int(b, batch->client_seq))) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_log_line(proto_buf *b, uint64_t seq, int64_t time_us, const edit_batch *batch)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "time", false) ||
	    put_int(b, time_us) || key(b, "client", false) ||
	    put_str_or_null(b, batch->client[0] ? batch->client : NULL) ||
	    key(b, "client_seq", false) ||
	    (batch->has_client_seq ? put_int(b, batch->client_seq) : put(b, "null")) ||
	    key(b, "ops", false) || ops_array(b, batch) || put(b, "}\n"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_scene_list(proto_buf *b, const proto_scene_info *scenes, int n)
{
	size_t start = b->len;

	if (put(b, "{\"scenes\":["))
		return undo_to(b, start);
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || put(b, "{\"name\":") ||
		    proto_buf_json_string(b, scenes[i].name) || key(b, "seq", false) ||
		    put_int(b, (int64_t)scenes[i].seq) || key(b, "nodes", false) ||
		    put_int(b, scenes[i].nodes) || put(b, "}"))
			return undo_to(b, start);
	if (put(b, "]}"))
		return undo_to(b, start);
	return 0;
}
