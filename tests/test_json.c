/*
 * test_json.c: the codec's one JSON writer (server/codec/json.c): the
 * buffer, string escapes in both modes, numbers that read back bit for bit,
 * and the UTF-8 check the readers share.
 */
#include "codec/json.h"
#include "codec/proto.h"
#include "core/err.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void buffer_grows_truncates_and_hands_over(void **state)
{
	json_buf b;
	char *taken;

	(void)state;
	json_buf_init(&b, 8);
	assert_string_equal(json_buf_str(&b), "");
	for (int i = 0; i < 1000; i++)
		assert_int_equal(JSON_BUF_LIT(&b, "abcdefghij"), 0);
	assert_int_equal(b.len, 10000);
	assert_true(b.len <= b.cap);
	json_buf_truncate(&b, 3);
	assert_string_equal(json_buf_str(&b), "abc");
	assert_int_equal(json_buf_puts(&b, "de"), 0);
	assert_int_equal(json_buf_int(&b, -42), 0);
	assert_string_equal(json_buf_str(&b), "abcde-42");
	taken = json_buf_take(&b);
	assert_non_null(taken);
	assert_string_equal(taken + 8, "abcde-42");
	free(taken);
	assert_null(b.data);
	assert_int_equal(b.head, 8);
	json_buf_reset(&b);
	json_buf_release(&b);
	json_buf_release(NULL);
}

static void strings_escape_in_both_modes(void **state)
{
	json_buf b;

	(void)state;
	json_buf_init(&b, 0);
	/* The protocol's mode: short escapes, bytes >= 0x80 as they are. */
	assert_int_equal(json_buf_string(&b, "a\"b\\c\n\t\r\x01\x1f \xc3\xa9/\x7f",
					 JSON_STR_SHORT_ESCAPES), 0);
	assert_string_equal(json_buf_str(&b), "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u001f \xc3\xa9/\x7f\"");
	json_buf_reset(&b);
	/* The glTF export's mode: \u00XX for every control character, and
	 * bytes that are not UTF-8 (a lone 0xff, an overlong '/', a cut
	 * sequence, an encoded surrogate) as U+FFFD. */
	assert_int_equal(json_buf_string(&b, "n\nq\"\xff\xc0\xaf\xe2\x82\xed\xa0\x80\xf0\x9f\x98\x80",
					 JSON_STR_REPAIR_UTF8), 0);
	assert_string_equal(json_buf_str(&b),
			    "\"n\\u000aq\\\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xf0\x9f\x98\x80\"");
	json_buf_reset(&b);
	assert_int_equal(json_buf_string(&b, "", 0), 0);
	assert_string_equal(json_buf_str(&b), "\"\"");
	json_buf_release(&b);
}

static void utf8_lengths(void **state)
{
	(void)state;
	assert_int_equal(json_utf8_len((const unsigned char *)"a", 1), 1);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xc3\xa9", 2), 2);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xc3\xa9", 1), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xf4\x8f\xbf\xbf", 4), 4);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xc0\xaf", 2), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xe0\x80\xaf", 3), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\xed\xa0\x80", 3), 0);
	assert_int_equal(json_utf8_len((const unsigned char *)"\x80", 1), 0);
}

static void numbers_are_shortest_and_laid_out_as_g(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.0, "0" },
		{ -0.0, "-0" },
		{ 1.0, "1" },
		{ -42.0, "-42" },
		{ 0.1, "0.1" },
		{ 1e-5, "1e-05" },
		{ 0.0001, "0.0001" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 9007199254740991.0, "9007199254740991" },
		{ 9007199254740992.0, "9007199254740992" },
		{ 1e300, "1e+300" },
		{ 5e-324, "4.94065645841247e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		/* The 17 digits rounded half up: printf's %.16g would give
		 * 0.8378139104067281, which reads back to the same bits too. */
		{ 0.8378139104067281, "0.8378139104067282" },
	};
	char out[JSON_NUMBER_MAX];
	json_buf b;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_format_number(out, cases[i].v);
		assert_string_equal(out, cases[i].text);
	}
	json_buf_init(&b, 0);
	assert_int_equal(json_buf_number(&b, NAN), RIGD_E_NOT_FINITE);
	assert_int_equal(json_buf_number(&b, INFINITY), RIGD_E_NOT_FINITE);
	assert_int_equal(b.len, 0);
	assert_int_equal(json_buf_number_or_null(&b, -INFINITY), 0);
	assert_int_equal(json_buf_number_or_null(&b, 0.5), 0);
	assert_string_equal(json_buf_str(&b), "null0.5");
	json_buf_release(&b);
}

/* Random doubles of every exponent read back to the same bits, in at most
 * 17 significant digits. */
static void numbers_read_back(void **state)
{
	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t bits = rnd();
		char out[JSON_NUMBER_MAX];
		double v, back;
		int n, digits = 0;

		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v))
			continue;
		n = json_format_number(out, v);
		assert_int_equal((size_t)n, strlen(out));
		back = strtod(out, NULL);
		assert_memory_equal(&back, &v, sizeof(v));
		assert_true(n < JSON_NUMBER_MAX);
		/* Significant digits: from the first non-zero one to the exponent. */
		for (const char *p = out; *p && *p != 'e'; p++)
			if ((*p >= '1' && *p <= '9') || (digits && *p == '0'))
				digits++;
		assert_true(digits >= 1 && digits <= 17);
	}
}

/* A client's look at a server message: type, req and seq at the top level
 * only, integers only; anything but a JSON object is refused. */
static void reply_head_reads_top_level_integers(void **state)
{
	static const char ack[] = "{\"type\":\"ack\",\"req\":7,\"seq\":9007199254740992}";
	static const char nested[] = "{\"type\":\"update\",\"x\":{\"req\":3,\"seq\":4},\"seq\":1.5}";
	proto_reply_head h;

	(void)state;
	assert_int_equal(proto_peek_reply(ack, sizeof(ack) - 1, &h), 0);
	assert_string_equal(h.type, "ack");
	assert_true(h.has_req && h.req == 7);
	assert_true(h.has_seq && h.seq == 9007199254740992LL);
	assert_int_equal(proto_peek_reply(nested, sizeof(nested) - 1, &h), 0);
	assert_string_equal(h.type, "update");
	assert_false(h.has_req);
	assert_false(h.has_seq);
	assert_int_equal(proto_peek_reply("[1]", 3, &h), RIGD_E_BAD_JSON);
	assert_int_equal(proto_peek_reply("{\"type\":", 8, &h), RIGD_E_BAD_JSON);
	assert_string_equal(h.type, "");
	assert_false(h.has_req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buffer_grows_truncates_and_hands_over),
		cmocka_unit_test(strings_escape_in_both_modes),
		cmocka_unit_test(utf8_lengths),
		cmocka_unit_test(numbers_are_shortest_and_laid_out_as_g),
		cmocka_unit_test(numbers_read_back),
		cmocka_unit_test(reply_head_reads_top_level_integers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
