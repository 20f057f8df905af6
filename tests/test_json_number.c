/*
 * test_json_number.c: json_format_number, byte for byte, against the
 * algorithm it replaced: printf's "%.16e" for the 17 digits, the 15- and
 * 16-digit candidates rounded half up from them, laid out as %g lays them
 * out, and strtod deciding which reads back. The writer's text is in logs,
 * exports and on the wire, so it must never change.
 *
 * Millions of doubles: random bits (every exponent, subnormals included),
 * and the values rigs are made of (sines and cosines, small decimals,
 * integers and their neighbours, powers of ten and their neighbours,
 * quarters near 2^50, whose 18th digit is an exact tie). The count per
 * family is the first argument (default below), so a longer run is
 * `test_json_number 20000000`.
 */
#include "codec/json.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define DEFAULT_PER_FAMILY 100000

static long per_family = DEFAULT_PER_FAMILY;
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible, no libc state. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A uniform double in [0, 1). */
static double unit(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* ---------- the reference: the writer as it was ---------- */

static void ref_layout(char *out, bool neg, const char *dig, int n, int exp10, int prec)
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
}

static int ref_round_digits(const char *dig, int exp10, int prec, char *r)
{
	int i = prec - 1;

	memcpy(r, dig, (size_t)prec);
	if (dig[prec] < '5')
		return exp10;
	while (i >= 0 && r[i] == '9')
		r[i--] = '0';
	if (i >= 0) {
		r[i]++;
		return exp10;
	}
	memmove(r + 1, r, (size_t)prec - 1);
	r[0] = '1';
	return exp10 + 1;
}

static void ref_format(char *out, double v)
{
	char e17[40], dig[20];
	int exp10;
	bool neg = signbit(v);

	if (v == 0) {
		sprintf(out, "%s", neg ? "-0" : "0");
		return;
	}
	if (fabs(v) <= 9007199254740991.0 && v == trunc(v)) {
		sprintf(out, "%" PRId64, (int64_t)v);
		return;
	}
	snprintf(e17, sizeof(e17), "%.16e", fabs(v));
	dig[0] = e17[0];
	memcpy(dig + 1, e17 + 2, 16);
	exp10 = atoi(strchr(e17, 'e') + 1);
	for (int prec = 15; prec <= 17; prec++) {
		char r[20], cand[40];
		int re = exp10, n;

		if (prec < 17)
			re = ref_round_digits(dig, exp10, prec, r);
		else
			memcpy(r, dig, 17);
		n = prec;
		while (n > 1 && r[n - 1] == '0')
			n--;
		ref_layout(cand, neg, r, n, re, prec);
		if (prec == 17 || strtod(cand, NULL) == v) {
			strcpy(out, cand);
			return;
		}
	}
}

/* ---------- the comparison ---------- */

static long compared, differed;

static void check(double v)
{
	char got[JSON_NUMBER_MAX], want[64];
	int n;

	if (!isfinite(v))
		return;
	for (int sign = 0; sign < 2; sign++, v = -v) {
		n = json_format_number(got, v);
		ref_format(want, v);
		compared++;
		if (strcmp(got, want) != 0 || (size_t)n != strlen(got)) {
			if (differed++ < 10)
				print_error("%a: got %s, want %s\n", v, got, want);
		}
	}
}

static void finish(void)
{
	assert_int_equal(differed, 0);
	assert_true(compared > 0);
	compared = differed = 0;
}

static void random_bits(void **state)
{
	(void)state;
	for (long i = 0; i < per_family; i++) {
		uint64_t bits = rnd();
		double v;

		memcpy(&v, &bits, sizeof(v));
		check(v);
	}
	finish();
}

/* Every binary exponent alike, subnormals and the largest included. */
static void random_exponents(void **state)
{
	(void)state;
	for (long i = 0; i < per_family; i++) {
		uint64_t bits = (rnd() & ((1ull << 52) - 1)) | ((rnd() % 2047) << 52);
		double v;

		memcpy(&v, &bits, sizeof(v));
		check(v);
		if (i % 4 == 0) {
			bits &= (1ull << 52) - 1;  /* a subnormal */
			memcpy(&v, &bits, sizeof(v));
			check(v);
		}
	}
	finish();
}

/* What rotations and matrices hold: sines, cosines, half-angle quaternion
 * parts, their products, and float32 values widened. */
static void rotations(void **state)
{
	(void)state;
	for (long i = 0; i < per_family; i++) {
		double a = (unit() * 2 - 1) * 6.283185307179586;
		double s = sin(a), c = cos(a), h = sin(a / 2);

		check(s);
		check(c);
		check(h * cos(a / 2));
		check(s * c * 0.1);
		check((double)(float)s);
		check(nextafter(c, 2.0));
	}
	finish();
}

/* Small decimals as a slider or a script writes them, and sums of them. */
static void decimals(void **state)
{
	(void)state;
	for (long k = -per_family / 2; k < per_family / 2; k++) {
		check(0.1 * (double)k);
		check((double)k / 100.0);
		check((double)k * 0.001);
		check(0.1 * (double)k + 0.2);
		check((double)k / 3.0);
		check((double)(rnd() % 2000001) / 1000.0 - 1000.0);
	}
	finish();
}

/* Integers (the integer path and its end at 2^53), their neighbours, and
 * quarters and eighths near 2^50, where the 18th significant digit is an
 * exact 5 (a tie the rounding must leave to printf). */
static void integers_and_ties(void **state)
{
	(void)state;
	for (long i = 0; i < per_family; i++) {
		double n = (double)(int64_t)(rnd() >> (rnd() % 64));
		double big = (double)((rnd() % (1ull << 51)) | (1ull << 49));

		check(n);
		check(nextafter(n, INFINITY));
		check(nextafter(n, -INFINITY));
		check(n + 0.5);
		check(big + 0.25);
		check(big + 0.75);
		check(big / 2 + 0.125);
		check(9007199254740992.0 + 2.0 * (double)(rnd() % 1000000));
	}
	finish();
}

/* Powers of ten, where the decimal exponent steps, and their neighbours a
 * few ulps either side (9.99..95 rounding up to 10.0.. among them); and
 * random values at each decimal exponent. */
static void powers_of_ten(void **state)
{
	(void)state;
	for (int e = -325; e <= 309; e++) {
		double p;
		char text[16];

		snprintf(text, sizeof(text), "1e%d", e);
		p = strtod(text, NULL);
		for (int k = 0; k < 64; k++) {
			double up = p, down = p;

			for (int j = 0; j < k; j++) {
				up = nextafter(up, INFINITY);
				down = nextafter(down, 0);
			}
			check(up);
			check(down);
			check(p * (1 - (double)k * 1e-17));
			check(p * (9.9999999999999995 - (double)k * 1e-16));
		}
		for (long i = 0; i < per_family / 600; i++)
			check(p * (1 + 9 * unit()));
	}
	finish();
}

/* json_buf_int writes as "%" PRId64 writes, both ends included. */
static void buffer_integers(void **state)
{
	json_buf b;

	(void)state;
	json_buf_init(&b, 0);
	for (long i = 0; i < per_family; i++) {
		int64_t v = i < 4 ? (int64_t[]){ 0, -1, INT64_MIN, INT64_MAX }[i]
				  : (int64_t)(rnd() >> (rnd() % 64));
		char want[24];

		snprintf(want, sizeof(want), "%" PRId64, v);
		json_buf_reset(&b);
		assert_int_equal(json_buf_int(&b, v), 0);
		assert_string_equal(json_buf_str(&b), want);
	}
	json_buf_release(&b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_bits),
		cmocka_unit_test(random_exponents),
		cmocka_unit_test(rotations),
		cmocka_unit_test(decimals),
		cmocka_unit_test(integers_and_ties),
		cmocka_unit_test(powers_of_ten),
		cmocka_unit_test(buffer_integers),
	};

	if (argc > 1 && atol(argv[1]) > 0)
		per_family = atol(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
