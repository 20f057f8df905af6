/*
 * test_cluster_entries.c: the checked readers of the cluster's stream
 * entries (server/cluster/): scene events (catalog.c), presence entries
 * (presence.c), and the asks and batches of a catch-up (catchup.c), fed
 * well-formed entries and what another program could have appended
 * instead. Only well-formed ones reach the callbacks.
 */
#include "cluster/cluster.h"
#include "cluster/cluster_internal.h"

#include <hiredis/hiredis.h>

#include "fake_entry.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int calls;
static char seen[256];

static void on_event(void *ctx, const char *name, int dims, const char *from, int64_t gen)
{
	(void)ctx;
	calls++;
	if (gen)
		snprintf(seen, sizeof(seen), "%s %d %s %lld", name, dims, from, (long long)gen);
	else
		snprintf(seen, sizeof(seen), "%s %d %s", name, dims, from);
}

static void on_catalog(void *ctx, const cluster_catalog_entry *v, int n)
{
	size_t at = 0;

	(void)ctx;
	calls++;
	seen[0] = '\0';
	for (int i = 0; i < n && at < sizeof(seen); i++)
		at += (size_t)snprintf(seen + at, sizeof(seen) - at, "%s%s %d %lld %lld", i ? "," : "",
				       v[i].scene, v[i].dims, (long long)v[i].gen,
				       (long long)v[i].deleted_gen);
}

static void on_presence(void *ctx, const char *from, const char *kind, const char *scene,
			const char *client, const char *msg, size_t len)
{
	(void)ctx;
	calls++;
	snprintf(seen, sizeof(seen), "%s %s %s %s %.*s", from, kind, scene, client, (int)len, msg);
}

static void on_ask(void *ctx, const char *from, const char *scene, uint64_t since)
{
	(void)ctx;
	calls++;
	snprintf(seen, sizeof(seen), "%s %s %llu", from, scene, (unsigned long long)since);
}

static void on_line(void *ctx, const char *scene, uint64_t seq, const char *line, size_t len,
		    bool more)
{
	(void)ctx;
	calls++;
	snprintf(seen, sizeof(seen), "%s %llu %.*s %d", scene, (unsigned long long)seq, (int)len,
		 line, more);
}

static struct cluster *make(void)
{
	struct cluster *c = calloc(1, sizeof(*c));

	snprintf(c->id, sizeof(c->id), "pself");
	c->cb.scene_event = on_event;
	c->cb.catalog = on_catalog;
	c->cb.presence = on_presence;
	c->cb.catchup_ask = on_ask;
	c->cb.catchup_line = on_line;
	return c;
}

static void scene_events(void **state)
{
	struct cluster *c = make();
	bool ok;

	(void)state;
	calls = 0;
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "2", "from", "p1");
	assert_true(ok);
	assert_string_equal(seen, "shot 2 p1");
	TAKE(cl_take_scene_event, "op", "delete", "scene", "shot", "dims", "0", "from", "p1");
	assert_true(ok);
	assert_string_equal(seen, "shot 0 p1");
	assert_int_equal(calls, 2);
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "4", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "0", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "delete", "scene", "shot", "dims", "3", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "drop", "scene", "shot", "dims", "0", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "bad name", "dims", "3", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "a\x01" "b", "dims", "3", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "op", "create", "dims", "3", "from", "p1");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "3");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "3", "from", "p 1");
	assert_false(ok);
	assert_int_equal(calls, 2);
	free(c);
}

/* Events with the scene's incarnation (creates only), and their refusals. */
static void scene_event_gens(void **state)
{
	struct cluster *c = make();
	bool ok;

	(void)state;
	calls = 0;
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "3", "from", "p1", "gen",
	     "17");
	assert_true(ok);
	assert_string_equal(seen, "shot 3 p1 17");
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "3", "from", "p1", "gen",
	     "0");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "3", "from", "p1", "gen",
	     "x");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "create", "scene", "shot", "dims", "3", "from", "p1", "gem",
	     "4");
	assert_false(ok);
	TAKE(cl_take_scene_event, "op", "delete", "scene", "shot", "dims", "0", "from", "p1", "gen",
	     "4");
	assert_false(ok);
	assert_int_equal(calls, 1);
	free(c);
}

/* A reply of string elements (n strings). Freed by free_entry. */
#define PAIRS(var, ...) do { \
	static const char *const p_[] = {__VA_ARGS__}; \
	var = fake_entry((int)(sizeof(p_) / sizeof(*p_)), p_); \
} while (0)

/* The catalog and tombstones read when the reader connects. */
static void catalog_snapshot(void **state)
{
	struct cluster *c = make();
	redisReply *h, *t;
	int64_t g;
	int d;

	(void)state;
	calls = 0;
	PAIRS(h, "shot", "2 7", "demo", "3 1", "old", "3", "junk", "4 1", "bad name", "3 2",
	      "neg", "3 -1", "zero", "3 0");
	PAIRS(t, "shot", "5", "gone", "3", "worse", "x");
	assert_true(cl_take_catalog(c, h, t));
	assert_int_equal(calls, 1);
	assert_string_equal(seen, "demo 3 1 0,gone 0 0 3,old 3 0 0,shot 2 7 5");
	assert_true(c->stats.errors == 5);
	fake_entry_free(h);
	fake_entry_free(t);
	PAIRS(h, "shot");
	PAIRS(t, "x", "1");
	assert_false(cl_take_catalog(c, h, t));
	assert_int_equal(calls, 1);
	fake_entry_free(h);
	fake_entry_free(t);
	PAIRS(h, "x", "3 1");
	PAIRS(t, "x");
	assert_false(cl_take_catalog(c, h, t));
	fake_entry_free(h);
	fake_entry_free(t);
	/* An empty catalog is one too. */
	h = fake_entry(0, NULL);
	t = fake_entry(0, NULL);
	assert_true(cl_take_catalog(c, h, t));
	assert_int_equal(calls, 2);
	assert_string_equal(seen, "");
	fake_entry_free(h);
	fake_entry_free(t);
	assert_true(cl_parse_catalog_value("3 12", 4, &d, &g) && d == 3 && g == 12);
	assert_true(cl_parse_catalog_value("2", 1, &d, &g) && d == 2 && g == 0);
	assert_false(cl_parse_catalog_value("2 ", 2, &d, &g));
	assert_false(cl_parse_catalog_value("2 012", 5, &d, &g));
	assert_false(cl_parse_catalog_value("23", 2, &d, &g));
	assert_false(cl_parse_catalog_value("", 0, &d, &g));
	free(c);
}

static void presence_entries(void **state)
{
	struct cluster *c = make();
	bool ok;

	(void)state;
	calls = 0;
	TAKE(cl_take_presence, "from", "p1", "kind", "presence", "scene", "demo", "client", "c1-1",
	     "msg", "{}");
	assert_true(ok);
	assert_string_equal(seen, "p1 presence demo c1-1 {}");
	TAKE(cl_take_presence, "from", "p1", "kind", "leave", "scene", "demo", "client", "c1-1",
	     "msg", "");
	assert_true(ok);
	TAKE(cl_take_presence, "from", "p1", "kind", "sync", "scene", "*", "client", "*", "msg", "");
	assert_true(ok);
	assert_int_equal(calls, 3);
	/* its own: taken, not handed on */
	TAKE(cl_take_presence, "from", "pself", "kind", "sync", "scene", "*", "client", "*",
	     "msg", "");
	assert_true(ok);
	assert_int_equal(calls, 3);
	TAKE(cl_take_presence, "from", "p1", "kind", "presence", "scene", "demo", "client", "c1",
	     "msg", "");
	assert_false(ok);
	TAKE(cl_take_presence, "from", "p1", "kind", "leave", "scene", "demo", "client", "c1",
	     "msg", "x");
	assert_false(ok);
	TAKE(cl_take_presence, "from", "p1", "kind", "sync", "scene", "demo", "client", "*",
	     "msg", "");
	assert_false(ok);
	TAKE(cl_take_presence, "from", "p1", "kind", "join", "scene", "demo", "client", "c1",
	     "msg", "{}");
	assert_false(ok);
	TAKE(cl_take_presence, "from", "bad id!", "kind", "leave", "scene", "demo", "client", "c1",
	     "msg", "");
	assert_false(ok);
	TAKE(cl_take_presence, "from", "p1", "kind", "leave", "scene", "demo", "client", "c1");
	assert_false(ok);
	TAKE(cl_take_presence, "from", "p1", "kind", "presence", "scene", "demo", "client", "c1",
	     "msg", "{\x01}");
	assert_false(ok);
	assert_int_equal(calls, 3);
	free(c);
}

static void catchup_entries(void **state)
{
	struct cluster *c = make();
	bool ok;

	(void)state;
	calls = 0;
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "demo", "since", "41");
	assert_true(ok);
	assert_string_equal(seen, "p2 demo 41");
	TAKE(cl_take_catchup_line, "scene", "demo", "seq", "41", "line", "{}", "more", "1");
	assert_true(ok);
	assert_string_equal(seen, "demo 41 {} 1");
	assert_int_equal(calls, 2);
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "demo", "since", "0");
	assert_false(ok);
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "demo", "since", "-1");
	assert_false(ok);
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "demo", "since", "99999999999999999999");
	assert_false(ok);
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "demo", "since", "007");
	assert_false(ok);
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "de mo", "since", "7");
	assert_false(ok);
	TAKE(cl_take_catchup_ask, "from", "p2", "scene", "demo", "till", "7");
	assert_false(ok);
	TAKE(cl_take_catchup_line, "scene", "demo", "seq", "4", "line", "", "more", "0");
	assert_false(ok);
	TAKE(cl_take_catchup_line, "scene", "demo", "seq", "4", "line", "{}", "more", "2");
	assert_false(ok);
	TAKE(cl_take_catchup_line, "scene", "demo", "seq", "x", "line", "{}", "more", "0");
	assert_false(ok);
	TAKE(cl_take_catchup_line, "scene", "demo", "seq", "4", "line", "{\x01}", "more", "0");
	assert_false(ok);
	TAKE(cl_take_catchup_line, "scene", "demo", "seq", "4", "seq", "4", "more", "0");
	assert_false(ok);
	assert_int_equal(calls, 2);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scene_events),
		cmocka_unit_test(scene_event_gens),
		cmocka_unit_test(catalog_snapshot),
		cmocka_unit_test(presence_entries),
		cmocka_unit_test(catchup_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
