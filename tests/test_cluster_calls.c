/*
 * test_cluster_calls.c: the checked readers of relayed calls and their
 * HTTP answers (server/cluster/calls.c), fed well-formed entries and what
 * another program could have appended to rigd:fwd:ID and rigd:ans:ID
 * instead. Only well-formed ones reach the callbacks; the arguments and
 * the body of a call are bytes and keep their NULs.
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
static size_t seen_args, seen_body;

static void on_call(void *ctx, const cluster_call_info *k)
{
	(void)ctx;
	calls++;
	seen_args = k->args_len;
	seen_body = k->body_len;
	snprintf(seen, sizeof(seen), "%s %llu %s %s %s", k->from, (unsigned long long)k->rid,
		 k->scene, k->kind, k->args_len ? k->args : "-");
}

static void on_reply(void *ctx, uint64_t rid, int status, const char *body, size_t len)
{
	(void)ctx;
	calls++;
	snprintf(seen, sizeof(seen), "%llu %d %.*s", (unsigned long long)rid, status, (int)len, body);
}

static struct cluster *make(void)
{
	struct cluster *c = calloc(1, sizeof(*c));

	snprintf(c->id, sizeof(c->id), "pself");
	c->cb.call = on_call;
	c->cb.reply = on_reply;
	return c;
}

static void call_entries(void **state)
{
	struct cluster *c = make();
	bool ok;

	(void)state;
	calls = 0;
	TAKE(cl_take_call, "from", "p2", "rid", "7", "scene", "demo", "kind", "undo",
	     "args", "client=c1\x01" "client_seq=4\x01", "body", "");
	assert_true(ok);
	assert_string_equal(seen, "p2 7 demo undo client=c1");
	assert_int_equal(seen_args, strlen("client=c1.client_seq=4."));
	/* A binary body keeps its NULs. */
	TAKE(cl_take_call, "from", "p2", "rid", "8", "scene", "demo", "kind", "gltf",
	     "args", "", "body", "glTF\x01\x01\x01x");
	assert_true(ok);
	assert_int_equal(seen_body, 8);
	assert_string_equal(seen, "p2 8 demo gltf -");
	/* Arguments that do not end with a NUL, a bad kind, rid, scene or
	 * sender, a missing or repeated field, an extra one. */
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo", "kind", "undo",
	     "args", "client=c1", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo", "kind", "Undo",
	     "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo", "kind", "",
	     "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo",
	     "kind", "averyveryverylongkind", "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "0", "scene", "demo", "kind", "log",
	     "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "-1", "scene", "demo", "kind", "log",
	     "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "de mo", "kind", "log",
	     "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p 2", "rid", "9", "scene", "demo", "kind", "log",
	     "args", "", "body", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo", "kind", "log",
	     "args", "", "args", "");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo", "kind", "log",
	     "args", "", "body", "", "more", "1");
	assert_false(ok);
	TAKE(cl_take_call, "from", "p2", "rid", "9", "scene", "demo", "kind", "log", "body", "");
	assert_false(ok);
	assert_int_equal(calls, 2);
	free(c);
}

static void reply_entries(void **state)
{
	struct cluster *c = make();
	bool ok;

	(void)state;
	calls = 0;
	TAKE(cl_take_reply, "rid", "3", "status", "200", "body", "{\"seq\":1}");
	assert_true(ok);
	assert_string_equal(seen, "3 200 {\"seq\":1}");
	TAKE(cl_take_reply, "rid", "3", "status", "99", "body", "{}");
	assert_false(ok);
	TAKE(cl_take_reply, "rid", "3", "status", "600", "body", "{}");
	assert_false(ok);
	TAKE(cl_take_reply, "rid", "3", "status", "2x0", "body", "{}");
	assert_false(ok);
	TAKE(cl_take_reply, "rid", "03", "status", "200", "body", "{}");
	assert_false(ok);
	TAKE(cl_take_reply, "rid", "3", "status", "200", "body", "{\x01}");
	assert_false(ok);
	TAKE(cl_take_reply, "rid", "3", "code", "200", "body", "{}");
	assert_false(ok);
	assert_int_equal(calls, 1);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(call_entries),
		cmocka_unit_test(reply_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
