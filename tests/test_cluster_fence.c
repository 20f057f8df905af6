/*
 * test_cluster_fence.c: the checked readers of server/cluster/fence.c: the
 * answer to a probe of a log stream (what it holds at a seq, where it
 * ends), fed well-formed replies and what another program (or a Redis of
 * another version) could answer instead; and the settling of appends by
 * WAIT's answer (enough replicas, too few, lost). Only well-formed
 * answers reach the callbacks as such; anything else is reported as no
 * answer (last -1).
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

static void on_probed(void *ctx, const char *name, uint64_t seq, int64_t last, int64_t token,
		      const char *line, size_t len)
{
	(void)ctx;
	calls++;
	snprintf(seen, sizeof(seen), "%s %llu %lld %lld %.*s", name, (unsigned long long)seq,
		 (long long)last, (long long)token, line ? (int)len : 4, line ? line : "none");
}

static void on_published(void *ctx, const char *name, uint64_t seq, bool ok, const char *why)
{
	(void)ctx;
	calls++;
	snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "[%s %llu %s %s]", name,
		 (unsigned long long)seq, ok ? "ok" : "no", why);
}

static void on_unreplicated(void *ctx, const char *name, uint64_t seq, int got)
{
	(void)ctx;
	calls++;
	snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "[%s %llu short %d]", name,
		 (unsigned long long)seq, got);
}

static redisReply *r_str(const char *s)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_STRING;
	r->str = strdup(s);
	r->len = strlen(s);
	return r;
}

static redisReply *r_int(long long v)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_INTEGER;
	r->integer = v;
	return r;
}

static redisReply *r_arr(int n, ...)
{
	redisReply *r = calloc(1, sizeof(*r));
	va_list ap;

	r->type = REDIS_REPLY_ARRAY;
	r->elements = (size_t)n;
	r->element = calloc((size_t)n + 1, sizeof(*r->element));
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		r->element[i] = va_arg(ap, redisReply *);
	va_end(ap);
	return r;
}

static void rfree(redisReply *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
		rfree(r->element[i]);
	free(r->element);
	free(r->str);
	free(r);
}

static struct cluster *new_cluster(void)
{
	struct cluster *c = calloc(1, sizeof(*c));

	c->cb.probed = on_probed;
	c->cb.published = on_published;
	c->cb.unreplicated = on_unreplicated;
	return c;
}

/* Feeds one probe answer for seq 5 of "demo" and frees it. */
static void probe(struct cluster *c, redisReply *r)
{
	calls = 0;
	seen[0] = '\0';
	cl_probe_reply(c, "demo", 5, r);
	rfree(r);
	assert_int_equal(calls, 1);
}

static void reads_probe_answers(void **state)
{
	struct cluster *c = new_cluster();

	(void)state;
	probe(c, r_arr(1, r_int(0)));
	assert_string_equal(seen, "demo 5 0 0 none");                /* an empty stream */
	probe(c, r_arr(1, r_int(4)));
	assert_string_equal(seen, "demo 5 4 0 none");                /* it ends before */
	probe(c, r_arr(3, r_int(9), r_str("12"), r_str("{\"seq\":5}\n")));
	assert_string_equal(seen, "demo 5 9 12 {\"seq\":5}\n");      /* the entry */
	calls = 0;
	cl_probe_reply(c, "demo", 5, NULL);                          /* lost */
	assert_int_equal(calls, 1);
	assert_string_equal(seen, "demo 5 -1 0 none");
	assert_int_equal(c->stats.errors, 0);
	free(c);
}

static void refuses_hostile_probe_answers(void **state)
{
	struct cluster *c = new_cluster();
	redisReply *err = calloc(1, sizeof(*err));

	(void)state;
	err->type = REDIS_REPLY_ERROR;
	err->str = strdup("BADENTRY the last entry is not a rigd log entry");
	err->len = strlen(err->str);
	probe(c, err);
	assert_string_equal(seen, "demo 5 -1 0 none");
	probe(c, r_int(3));                                           /* not an array */
	assert_string_equal(seen, "demo 5 -1 0 none");
	probe(c, r_arr(0));
	probe(c, r_arr(2, r_int(9), r_str("12")));                      /* two elements */
	probe(c, r_arr(1, r_int(-1)));                                 /* a negative end */
	probe(c, r_arr(1, r_str("4")));                                /* an end not an integer */
	probe(c, r_arr(3, r_int(9), r_str("0"), r_str("x")));            /* token 0 */
	probe(c, r_arr(3, r_int(9), r_str("-3"), r_str("x")));           /* a signed token */
	probe(c, r_arr(3, r_int(9), r_str("12"), r_str("")));            /* an empty line */
	probe(c, r_arr(3, r_int(9), r_int(12), r_str("x")));             /* a token not a string */
	probe(c, r_arr(3, r_int(4), r_str("12"), r_str("x")));           /* an entry past the end */
	assert_string_equal(seen, "demo 5 -1 0 none");
	assert_int_equal(c->stats.errors, 11);
	free(c);
}

static void wait_settles_noted_appends(void **state)
{
	struct cluster *c = new_cluster();
	redisReply *r;

	(void)state;
	c->wait_n = 2;
	c->wait_ms = 100;
	/* Enough replicas: each noted append is published ok, in order. */
	cl_wait_note(c, "a", 3);
	cl_wait_note(c, "b", 7);
	calls = 0;
	seen[0] = '\0';
	cl_wait_reply(c, r = r_int(2));
	rfree(r);
	assert_int_equal(calls, 2);
	assert_string_equal(seen, "[a 3 ok ][b 7 ok ]");
	assert_int_equal(c->n_unrep, 0);
	/* Too few: said short, with the count. */
	cl_wait_note(c, "a", 4);
	calls = 0;
	seen[0] = '\0';
	cl_wait_reply(c, r = r_int(1));
	rfree(r);
	assert_string_equal(seen, "[a 4 short 1]");
	/* A reply of another shape counts as none. */
	cl_wait_note(c, "a", 5);
	seen[0] = '\0';
	cl_wait_reply(c, r = r_str("OK"));
	rfree(r);
	assert_string_equal(seen, "[a 5 short 0]");
	assert_int_equal(c->stats.errors, 1);
	/* Lost with the connection: not confirmed. */
	cl_wait_note(c, "a", 6);
	seen[0] = '\0';
	cl_wait_lost(c);
	assert_string_equal(seen, "[a 6 no the connection to Redis was lost before WAIT answered]");
	/* Nothing noted: nothing said. */
	calls = 0;
	cl_wait_reply(c, NULL);
	assert_int_equal(calls, 0);
	cl_fence_free(c);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_probe_answers),
		cmocka_unit_test(refuses_hostile_probe_answers),
		cmocka_unit_test(wait_settles_noted_appends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
