/*
 * test_num.c: the one integer parser (server/core/num.c).
 */
#include "core/num.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void accepts_decimal_in_range(void **state)
{
	int64_t v = 0;

	(void)state;
	assert_true(num_parse_i64("0", 0, 10, &v));
	assert_int_equal(v, 0);
	assert_true(num_parse_i64("10", 0, 10, &v));
	assert_int_equal(v, 10);
	assert_true(num_parse_i64("-7", -10, 10, &v));
	assert_int_equal(v, -7);
	assert_true(num_parse_i64("007", 0, 10, &v));
	assert_int_equal(v, 7);
	assert_true(num_parse_i64("9007199254740992", 0, NUM_SEQ_MAX, &v));
	assert_true(v == NUM_SEQ_MAX);
	assert_true(num_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX, &v));
	assert_true(v == INT64_MAX);
	assert_true(num_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v));
	assert_true(v == INT64_MIN);
}

static void refuses_what_strtoll_would_take(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "+1", "1x", "0x10", "--1", "-", "1.0", "1e3",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999",
	};
	int64_t v = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(num_parse_i64(bad[i], INT64_MIN, INT64_MAX, &v));
		assert_int_equal(v, 42);
	}
	assert_false(num_parse_i64(NULL, 0, 1, &v));
	assert_int_equal(v, 42);
}

static void refuses_out_of_range(void **state)
{
	int64_t v = 42;

	(void)state;
	assert_false(num_parse_i64("11", 0, 10, &v));
	assert_false(num_parse_i64("-1", 0, 10, &v));
	assert_false(num_parse_i64("9007199254740993", 0, NUM_SEQ_MAX, &v));
	assert_int_equal(v, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_decimal_in_range),
		cmocka_unit_test(refuses_what_strtoll_would_take),
		cmocka_unit_test(refuses_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
