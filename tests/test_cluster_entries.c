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

static void on_event(void *ctx, const char *name, int dims, const char *from)
{
	(void)ctx;
	calls++;
	snprintf(seen, sizeof(seen), "%s %d %s", name, dims, from);
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

/* An entry of string fields "f1", "v1", ... (n strings; "\x01" a NUL
 * inside a value, for the test of embedded NULs). Freed by free_entry. */
static redisReply *entry(int n, const char *const *s)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_ARRAY;
	r->elements = (size_t)n;
	r->element = calloc((size_t)n + 1, sizeof(*r->element));
	for (int i = 0; i < n; i++) {
		redisReply *e = calloc(1, sizeof(*e));

		e->type = REDIS_REPLY_STRING;
		e->str = strdup(s[i]);
		e->len = strlen(s[i]);
		for (size_t k = 0; k < e->len; k++)
			if (e->str[k] == '\x01')
				e->str[k] = '\0';
		r->element[i] = e;
	}
	return r;
}

static void free_entry(redisReply *r)
{
	for (size_t i = 0; i < r->elements; i++) {
		free(r->element[i]->str);
		free(r->element[i]);
	}
	free(r->element);
	free(r);
}

static struct cluster *make(void)
{
	struct cluster *c = calloc(1, sizeof(*c));

	snprintf(c->id, sizeof(c->id), "pself");
	c->cb.scene_event = on_event;
	c->cb.presence = on_presence;
	c->cb.catchup_ask = on_ask;
	c->cb.catchup_line = on_line;
	return c;
}

#define TAKE(fn, ...) do { \
	static const char *const f_[] = {__VA_ARGS__}; \
	redisReply *r_ = entry((int)(sizeof(f_) / sizeof(*f_)), f_); \
	ok = fn(c, r_); \
	free_entry(r_); \
} while (0)

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
		cmocka_unit_test(presence_entries),
		cmocka_unit_test(catchup_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
