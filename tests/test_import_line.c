/*
 * test_import_line.c: engine_import names the line that failed exactly
 * once ("line N: reason"), whatever fails on it: a line that is not JSON, a
 * seq out of order, an op that does not apply; blank lines are counted,
 * and after the failure the scene is empty again and takes a good log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/edit.h"
#include "core/err.h"
#include "engine/engine.h"
#include "tmpdb.h"

#define LINE1 "{\"seq\":1,\"time\":1,\"client\":\"a\",\"ops\":[{\"op\":\"create\",\"id\":\"n1\"}]}\n"
#define LINE2 "{\"seq\":2,\"time\":2,\"client\":\"a\",\"ops\":[{\"op\":\"create\",\"id\":\"n2\"}]}\n"

static engine *open_engine(tmpdb *t)
{
	engine_opts o = engine_opts_default();
	o.sync_normal = true;
	tmpdb_make(t, "/tmp", "test_import_line");
	int err = 0;
	char msg[256];
	engine *e = engine_open(t->path, &o, &err, msg, sizeof(msg));
	assert_non_null(e);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	return e;
}

/* Counts the occurrences of 'needle' in 'hay'. */
static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Imports 'log' into the empty scene "s", expects 'code' failing at
 * 'line', and checks the message starts with "line <line>: " once. */
static void expect_failure(engine *e, const char *log, int code, int line)
{
	edit_error er;
	int bad = -1;
	int64_t n = -1;
	char prefix[32];
	assert_int_equal(engine_import(e, "s", log, strlen(log), &n, &bad, &er), code);
	assert_int_equal(er.code, code);
	assert_int_equal(bad, line);
	assert_int_equal(n, 0);
	snprintf(prefix, sizeof(prefix), "line %d: ", line);
	assert_int_equal(strncmp(er.message, prefix, strlen(prefix)), 0);
	assert_int_equal(count(er.message, "line "), 1);
	assert_int_equal(engine_seq(e, "s"), 0);
	assert_int_equal(scene_count(engine_scene(e, "s")), 0);
}

static void test_one_prefix(void **state)
{
	(void)state;
	tmpdb t;
	engine *e = open_engine(&t);
	expect_failure(e, LINE1 "not json\n", RIGD_E_BAD_JSON, 2);
	expect_failure(e, LINE2, RIGD_E_BAD_SEQ, 1);
	expect_failure(e, LINE1 "\n  \n" LINE1, RIGD_E_BAD_SEQ, 4);
	expect_failure(e,
		       LINE1 "{\"seq\":2,\"time\":2,\"client\":\"a\",\"ops\":"
			     "[{\"op\":\"delete\",\"id\":\"nope\"}]}\n",
		       RIGD_E_UNKNOWN_NODE, 2);

	/* The scene is empty after each failure, and a good log goes in. */
	edit_error er;
	int bad = -1;
	int64_t n = 0;
	const char *good = LINE1 "\n" LINE2;
	assert_int_equal(engine_import(e, "s", good, strlen(good), &n, &bad, &er), 0);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 0);
	assert_int_equal(engine_seq(e, "s"), 2);
	engine_close(e);
	tmpdb_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
