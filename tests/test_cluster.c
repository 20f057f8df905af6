/*
 * test_cluster.c: the checked readers of the cluster layer
 * (server/cluster/): the --redis URL, and what Redis answers about leases
 * and processes, fed the values another program could have written into
 * those keys. The layer's behaviour against a real Redis is tested end to
 * end (tests/e2e/cluster.js).
 */
#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"
#include "core/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void reads_redis_urls(void **state)
{
	char host[CLUSTER_HOST_MAX];
	int port = 0;

	(void)state;
	assert_int_equal(cluster_parse_url("redis://127.0.0.1:6380", host, &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 6380);
	assert_int_equal(cluster_parse_url("redis://redis", host, &port), 0);
	assert_string_equal(host, "redis");
	assert_int_equal(port, 6379);
	assert_int_equal(cluster_parse_url("redis://my-redis.internal_1:1", host, &port), 0);
	assert_int_equal(port, 1);
}

static void refuses_other_urls(void **state)
{
	static const char *const bad[] = {
		"", "redis://", "redis://:6379", "rediss://h:1", "http://h:1", "redis://h:",
		"redis://h:0", "redis://h:65536", "redis://h:-1", "redis://h:1x", "redis://h:+1",
		"redis://user:pw@h:1", "redis://h:1/0", "redis://[::1]:6379", "redis://h h:1",
		"redis:/h:1", "REDIS://h:1",
	};
	char host[CLUSTER_HOST_MAX] = "unchanged";
	int port = 42;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cluster_parse_url(bad[i], host, &port), RIGD_E_BAD_FIELD);
		assert_string_equal(host, "unchanged");
		assert_int_equal(port, 42);
	}
	assert_int_equal(cluster_parse_url(NULL, host, &port), RIGD_E_BAD_FIELD);
}

static void reads_lease_holders(void **state)
{
	char owner[CLUSTER_ID_MAX] = "";
	int64_t token = 0;
	const char *v = "p0a1b2c3d 17";

	(void)state;
	assert_true(cl_parse_holder(v, strlen(v), owner, &token));
	assert_string_equal(owner, "p0a1b2c3d");
	assert_true(token == 17);
	v = "a 999999999999999999";
	assert_true(cl_parse_holder(v, strlen(v), owner, &token));
	assert_true(token == 999999999999999999LL);
}

/* What another program could leave in a lease key: refused, and nothing
 * written. */
static void refuses_hostile_holders(void **state)
{
	static const char *const bad[] = {
		"", " ", "p1", "p1 ", " 1", "p1  1", "p1 0", "p1 01", "p1 -1", "p1 +1", "p1 1x",
		"p1 1 ", "p1 1 2", "p/1 1", "p\x01 1", "p1 9999999999999999999",
		"p1 1\n", "p\xc3\xa9 1",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1",
	};
	char owner[CLUSTER_ID_MAX] = "unchanged";
	int64_t token = 5;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(cl_parse_holder(bad[i], strlen(bad[i]), owner, &token));
		assert_string_equal(owner, "unchanged");
		assert_true(token == 5);
	}
	/* A NUL inside the value (Redis strings are binary). */
	assert_false(cl_parse_holder("p1\0 1", 5, owner, &token));
	assert_false(cl_parse_holder("p1 1\0", 5, owner, &token));
}

static void reads_and_refuses_process_entries(void **state)
{
	struct cluster c;
	static const char *const bad[] = {
		"", "1", "1 ", " http://h:1", "x http://h:1", "-1 http://h:1", "12345678 http://h:1",
		"1 http://h:1 x", "1 http://h:\x01", "1 http://h\xc3\xa9",
	};

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(cl_procs_add(&c, "p1", "3 http://127.0.0.1:8080", 23), 0);
	assert_int_equal(c.n_procs, 1);
	assert_string_equal(c.procs[0].url, "http://127.0.0.1:8080");
	assert_int_equal(c.procs[0].leases, 3);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cl_procs_add(&c, "p2", bad[i], strlen(bad[i])), RIGD_E_BAD_FIELD);
	assert_int_equal(cl_procs_add(&c, "bad id", "1 http://h:1", 12), RIGD_E_BAD_FIELD);
	assert_int_equal(cl_procs_add(&c, "", "1 http://h:1", 12), RIGD_E_BAD_FIELD);
	assert_int_equal(c.n_procs, 1);
	assert_string_equal(cluster_process_url(&c, "p1"), "http://127.0.0.1:8080");
	assert_null(cluster_process_url(&c, "p2"));
	cl_procs_clear(&c);
	free(c.procs);
}

static void names_its_states(void **state)
{
	(void)state;
	assert_string_equal(cluster_state_name(CLUSTER_UP), "up");
	assert_string_equal(cluster_state_name(CLUSTER_DOWN), "down");
	assert_string_equal(cluster_state_name(CLUSTER_CONNECTING), "connecting");
	assert_string_equal(cluster_lease_state_name(CLUSTER_LEASE_OWNED), "owned");
	assert_string_equal(cluster_lease_state_name(CLUSTER_LEASE_OTHER), "other");
	assert_string_equal(cluster_state_name(7), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_redis_urls),
		cmocka_unit_test(refuses_other_urls),
		cmocka_unit_test(reads_lease_holders),
		cmocka_unit_test(refuses_hostile_holders),
		cmocka_unit_test(reads_and_refuses_process_entries),
		cmocka_unit_test(names_its_states),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
