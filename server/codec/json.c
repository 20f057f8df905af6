/*
 * json.c: the codec's JSON writer (see json.h): the byte buffer, strings
 * and numbers.
 *
 * Numbers: the 17 correctly rounded significant digits of a double, as
 * printf's %.16e gives them (digits17: exact integer arithmetic for the
 * doubles rigd mostly writes, printf itself for the rest and for exact
 * ties, so the digits never differ from printf's). The 15- and 16-digit
 * candidates are those digits rounded half up, and the first candidate
 * that reads back to the same bits is written (decimal_fast, an exact fast
 * path, with strtod only when it cannot decide; 17 digits always read
 * back). The text is laid out as %g lays it out. Rounding the 17 digits
 * rather than the exact value can pick the other of two 16-digit
 * neighbours that both read back (about
 * one double in a hundred): %.16g would print 0.8378139104067281 where this
 * prints 0.8378139104067282. Both read back to the same bits; this writer
 * keeps its choice because logs and replies already carry it.
 *
 * This module only writes JSON; it never parses and never includes a
 * parser's header.
 */
#include "json.h"

#include "core/err.h"

#include <assert.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers up to this magnitude are printed as integers. */
#define EXACT_INT_MAX 9007199254740991.0

/* ---------- the byte buffer ---------- */

void json_buf_init(json_buf *b, size_t head)
{
	memset(b, 0, sizeof(*b));
	b->head = head;
}

void json_buf_release(json_buf *b)
{
	if (!b)
		return;
	free(b->data);
	json_buf_init(b, b->head);
}

void json_buf_reset(json_buf *b)
{
	json_buf_truncate(b, 0);
}

void json_buf_truncate(json_buf *b, size_t len)
{
	assert(len <= b->len);
	b->len = len;
	if (b->data)
		b->data[b->head + len] = '\0';
}

const char *json_buf_str(const json_buf *b)
{
	assert(!b->data || b->len <= b->cap);
	return b->data ? b->data + b->head : "";
}

char *json_buf_take(json_buf *b)
{
	char *data = b->data;

	if (!data) {
		if (!(data = calloc(1, b->head + 1)))
			return NULL;
	}
	json_buf_init(b, b->head);
	return data;
}

/* Makes room for 'n' more bytes of text plus the NUL. */
static int reserve(json_buf *b, size_t n)
{
	size_t need, nc;
	char *d;

	assert(!b->data || b->len <= b->cap);
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

int json_buf_append(json_buf *b, const char *bytes, size_t n)
{
	if (reserve(b, n))
		return RIGD_E_NOMEM;
	memcpy(b->data + b->head + b->len, bytes, n);
	b->len += n;
	assert(b->len <= b->cap);
	b->data[b->head + b->len] = '\0';
	return 0;
}

int json_buf_puts(json_buf *b, const char *str)
{
	return json_buf_append(b, str, strlen(str));
}

/* ---------- strings ---------- */

size_t json_utf8_len(const unsigned char *p, size_t n)
{
	assert(n >= 1);
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

/* The escape of the byte 'c' that cannot stand as it is in a string. */
static int put_escape(json_buf *b, unsigned char c, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	char esc[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };

	if (c == '"')
		return JSON_BUF_LIT(b, "\\\"");
	if (c == '\\')
		return JSON_BUF_LIT(b, "\\\\");
	if (flags & JSON_STR_SHORT_ESCAPES) {
		if (c == '\n')
			return JSON_BUF_LIT(b, "\\n");
		if (c == '\t')
			return JSON_BUF_LIT(b, "\\t");
		if (c == '\r')
			return JSON_BUF_LIT(b, "\\r");
	}
	assert(c < 0x20);
	return json_buf_append(b, esc, 6);
}

int json_buf_string(json_buf *b, const char *str, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)str;
	const unsigned char *end = p + strlen(str);
	bool repair = flags & JSON_STR_REPAIR_UTF8;
	size_t start = b->len;
	int rc = JSON_BUF_LIT(b, "\"");

	/* Copy runs of plain bytes at once; escape quotes, backslashes and
	 * control characters. */
	while (rc == 0 && p < end) {
		const unsigned char *run = p;
		size_t k;

		while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && (*p < 0x80 || !repair))
			p++;
		if (p > run)
			rc = json_buf_append(b, (const char *)run, (size_t)(p - run));
		if (rc || p == end)
			break;
		if (*p < 0x80) {
			rc = put_escape(b, *p++, flags);
		} else if ((k = json_utf8_len(p, (size_t)(end - p))) != 0) {
			rc = json_buf_append(b, (const char *)p, k);
			p += k;
		} else {
			rc = JSON_BUF_LIT(b, "\xEF\xBF\xBD");
			p++;
		}
	}
	if (rc == 0)
		rc = JSON_BUF_LIT(b, "\"");
	if (rc)
		json_buf_truncate(b, start);
	return rc;
}

/* ---------- numbers ---------- */

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
 * The double nearest to m * 10^exp10 (m > 0), exactly as strtod gives it,
 * into *out: true, or false when this cannot tell and strtod must.
 * format_number reads up to two candidates back for every double it
 * writes, so this skips strtod (and printing the candidate for it) for the
 * numbers rigd writes (at most 17 significant digits, modest exponents):
 *   - m < 2^53 and |exp10| <= 22: one correctly rounded IEEE operation on
 *     exact operands (Clinger's fast path);
 *   - with an x87 long double (64-bit significand), m < 2^64 and
 *     |exp10| <= 27: m and 10^exp10 are exact in it, the product or
 *     quotient is rounded once to 64 bits and then to 53. Rounding twice can
 *     only go wrong when the first result lies exactly halfway between two
 *     doubles (its 11 extra bits are 0x400); that case, and everything
 *     else, is left to strtod.
 */
static bool decimal_fast(uint64_t m, int exp10, bool neg, double *out)
{
	assert(m > 0);
	if (m <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
		double d = (double)m;

		d = exp10 >= 0 ? d * exact_pow10[exp10] : d / exact_pow10[-exp10];
		*out = neg ? -d : d;
		return true;
	}
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
	if (exp10 >= -27 && exp10 <= 27) {
		long double x = (long double)m;
		uint64_t significand;

		x = exp10 >= 0 ? x * exact_pow10l[exp10] : x / exact_pow10l[-exp10];
		/* The x87 format keeps its 64-bit significand in the low 8 bytes. */
		memcpy(&significand, &x, sizeof(significand));
		if ((significand & 0x7ff) != 0x400) {
			*out = neg ? -(double)x : (double)x;
			return true;
		}
	}
#endif
	return false;
}

static const char two_digits[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Writes the 'n' (even or odd, <= 10) low decimal digits of 'v' < 10^n,
 * with leading zeros, into out[0..n). */
static void put_fixed(char *out, uint32_t v, int n)
{
	while (n >= 2) {
		memcpy(out + n - 2, two_digits + 2 * (v % 100), 2);
		v /= 100;
		n -= 2;
	}
	if (n)
		out[0] = (char)('0' + v);
}

/* Writes 'v' >= 0 in decimal, without a NUL, as %llu would; returns the
 * number of digits. */
static int put_u64(char *out, uint64_t v)
{
	uint64_t p = 10;
	int n = 1;

	while (n < 20 && v >= p) {
		n++;
		if (n < 20)
			p *= 10;
	}
	/* At most 20 digits: the low 8, the next 8, the rest (at most 4). */
	if (n > 16) {
		put_fixed(out, (uint32_t)(v / 10000000000000000ull), n - 16);
		put_fixed(out + n - 16, (uint32_t)(v / 100000000 % 100000000), 8);
		put_fixed(out + n - 8, (uint32_t)(v % 100000000), 8);
	} else if (n > 8) {
		put_fixed(out, (uint32_t)(v / 100000000), n - 8);
		put_fixed(out + n - 8, (uint32_t)(v % 100000000), 8);
	} else {
		put_fixed(out, (uint32_t)v, n);
	}
	return n;
}

/* Writes "e+XX" or "e-XX" (at least two digits), as "e%c%02d" would;
 * returns its length. */
static int put_exponent(char *out, int exp10)
{
	unsigned a = (unsigned)(exp10 < 0 ? -exp10 : exp10);
	int k = 0;

	out[k++] = 'e';
	out[k++] = exp10 < 0 ? '-' : '+';
	if (a < 10)
		out[k++] = '0';
	return k + put_u64(out + k, a);
}

/*
 * Writes the decimal digits 'dig' (n of them, first one non-zero) times
 * 10^exp10 of the first digit, as printf's %g would lay them out at
 * precision 'prec': fixed notation for exponents -4..prec-1, else d.ddde+XX.
 * Trailing zeros are already gone from 'dig'.
 */
static int layout(char *out, bool neg, const char *dig, int n, int exp10, int prec)
{
	int k = 0;

	assert(n >= 1 && n <= prec && prec <= 17);
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
		k += put_exponent(out + k, exp10);
	}
	out[k] = '\0';
	assert(k < JSON_NUMBER_MAX);
	return k;
}

#if defined(__SIZEOF_INT128__)
/*
 * The 17 significant digits of 'a' (finite, > 0) correctly rounded, as the
 * integer *d17 (10^16 <= *d17 < 10^17), and the exponent of the first one,
 * as printf's "%.16e" gives them:
 * true, or false when this cannot tell them and printf must.
 *
 * a = m * 2^e2 exactly (m < 2^53). For 10^16 <= a * 10^q < 10^17 with
 * 0 <= q <= 27, m * 5^q fits in 116 bits (5^27 < 2^63), so
 * a * 10^q = m * 5^q * 2^(e2 + q) is a 128-bit integer shifted by a known
 * amount: its integer part and remainder are exact, and so is rounding to
 * nearest. That covers 1e-11 <= a < 1e17, every double with a fraction
 * among them. An exact tie (remainder one half) goes to printf, which
 * rounds it by its own rule; so do subnormals and the other exponents.
 */
static bool digits17(double a, uint64_t *d17, int *exp10)
{
	static const uint64_t pow5[28] = {
		1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull,
		1953125ull, 9765625ull, 48828125ull, 244140625ull, 1220703125ull,
		6103515625ull, 30517578125ull, 152587890625ull, 762939453125ull,
		3814697265625ull, 19073486328125ull, 95367431640625ull,
		476837158203125ull, 2384185791015625ull, 11920928955078125ull,
		59604644775390625ull, 298023223876953125ull, 1490116119384765625ull,
		7450580596923828125ull,
	};
	const uint64_t lo17 = 10000000000000000ull, hi17 = 100000000000000000ull;
	uint64_t bits, m, d;
	int e2, q, t;

	memcpy(&bits, &a, sizeof(bits));
	if ((bits >> 52) == 0)
		return false;  /* subnormal */
	m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
	e2 = (int)(bits >> 52) - 1075;
	/* log10(a) lies in [(e2 + 52) log10(2), (e2 + 53) log10(2)), and
	 * 78913 / 2^18 is log10(2) closely enough for a floor over these
	 * exponents: this q is right or one too large, and the loop settles
	 * it either way. */
	t = (e2 + 52) * 78913;
	q = 16 - (t >= 0 ? t >> 18 : -((-t + 262143) >> 18));
	for (int tries = 0; tries < 3; tries++) {
		unsigned __int128 p, rem, half;
		int sh;

		if (q < 0 || q > 27)
			return false;
		p = (unsigned __int128)m * pow5[q];
		sh = e2 + q;
		if (sh >= 0) {
			if (sh > 10)
				return false;  /* a * 10^q >= 2^63: q is far too large */
			p <<= sh;
			rem = 0;
			half = 1;
		} else {
			if (-sh >= 127)
				return false;
			rem = p & (((unsigned __int128)1 << -sh) - 1);
			half = (unsigned __int128)1 << (-sh - 1);
			p >>= -sh;
		}
		if (p >= hi17) {
			q--;
			continue;
		}
		if (p < lo17) {
			q++;
			continue;
		}
		if (rem == half)
			return false;  /* an exact tie: printf's rule decides */
		d = (uint64_t)p + (rem > half);
		*exp10 = 16 - q;
		if (d == hi17) {
			/* 9.99..95 and above rounded up to 10.0... */
			d = lo17;
			(*exp10)++;
		}
		*d17 = d;
		return true;
	}
	return false;
}
#else
static bool digits17(double a, uint64_t *d17, int *exp10)
{
	(void)a, (void)d17, (void)exp10;
	return false;
}
#endif

int json_format_number(char out[JSON_NUMBER_MAX], double v)
{
	uint64_t d17;
	int exp10, k = 0;
	bool neg = signbit(v);

	assert(isfinite(v));
	if (v == 0)
		return sprintf(out, "%s", neg ? "-0" : "0");
	if (fabs(v) <= EXACT_INT_MAX && v == trunc(v)) {
		/* As "%" PRId64 would write it. */
		if (neg)
			out[k++] = '-';
		k += put_u64(out + k, (uint64_t)fabs(v));
		out[k] = '\0';
		return k;
	}
	if (!digits17(fabs(v), &d17, &exp10)) {
		/* e17 is "d.dddddddddddddddde[+-]X..." (the sign dropped). */
		char e17[40];

		snprintf(e17, sizeof(e17), "%.16e", fabs(v));
		d17 = (uint64_t)(e17[0] - '0');
		for (int i = 2; i < 18; i++)
			d17 = d17 * 10 + (uint64_t)(e17[i] - '0');
		exp10 = atoi(strchr(e17, 'e') + 1);
	}
	for (int prec = 15; prec <= 17; prec++) {
		/* The candidate: the 17 digits rounded half up on the next digit
		 * to 'prec' of them (9.99.. becoming 1.00.. of the next decade),
		 * the integer q of 'prec' digits times 10^(re - prec + 1). */
		uint64_t q = d17, scale = prec == 15 ? 100 : prec == 16 ? 10 : 1;
		char r[20], cand[40];
		int re = exp10, n = prec, len;

		if (prec < 17) {
			double back;

			q = d17 / scale + (d17 / (scale / 10) % 10 >= 5);
			if (q == 100000000000000000ull / scale) {
				q /= 10;
				re++;
			}
			/* Does it read back? Printed only when strtod must tell. */
			if (!decimal_fast(q, re - (prec - 1), neg, &back)) {
				put_fixed(r, (uint32_t)(q / 100000000), prec - 8);
				put_fixed(r + prec - 8, (uint32_t)(q % 100000000), 8);
				while (n > 1 && r[n - 1] == '0')
					n--;
				layout(cand, neg, r, n, re, prec);
				back = strtod(cand, NULL);
			}
			if (back != v)
				continue;
		}
		put_fixed(r, (uint32_t)(q / 100000000), prec - 8);
		put_fixed(r + prec - 8, (uint32_t)(q % 100000000), 8);
		n = prec;
		while (n > 1 && r[n - 1] == '0')
			n--;
		len = layout(out, neg, r, n, re, prec);
		return len;
	}
	assert(!"17 significant digits always read back");
	return 0;
}

int json_buf_number(json_buf *b, double v)
{
	char num[JSON_NUMBER_MAX];
	int n;

	if (!isfinite(v))
		return RIGD_E_NOT_FINITE;
	n = json_format_number(num, v);
	return json_buf_append(b, num, (size_t)n);
}

int json_buf_number_or_null(json_buf *b, double v)
{
	return isfinite(v) ? json_buf_number(b, v) : JSON_BUF_LIT(b, "null");
}

int json_buf_int(json_buf *b, int64_t v)
{
	char num[24];
	int n = 0;

	/* As "%" PRId64 would write it; INT64_MIN's magnitude fits a uint64_t. */
	if (v < 0)
		num[n++] = '-';
	n += put_u64(num + n, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
	return json_buf_append(b, num, (size_t)n);
}
