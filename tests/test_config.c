/*
 * test_config.c: the server's flags (server/serve/config.c): every flag
 * reaches its field, every bad value is refused with status 2 and a message
 * that names the flag, --help and --hash-token stop without running, and
 * the defaults are the documented ones.
 *
 * Messages are captured with open_memstream; the checks are on codes,
 * fields and the flag's name in the message, not on wording.
 */
#include "serve/config.h"

#include "core/edit.h"
#include "core/scene.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ARGS_MAX 32

/* One parse, with what it printed. */
struct run {
	struct config o;
	int rc;
	char *out, *err;
	size_t out_len, err_len;
};

/* Parses "rigd" followed by the NULL-terminated arguments. */
static void parse(struct run *r, ...)
{
	char *argv[ARGS_MAX + 1];
	int argc = 0;
	FILE *out, *err;
	va_list ap;

	argv[argc++] = (char *)"rigd";
	va_start(ap, r);
	for (char *a; (a = va_arg(ap, char *)) != NULL;) {
		assert_true(argc < ARGS_MAX);
		argv[argc++] = a;
	}
	va_end(ap);
	argv[argc] = NULL;
	out = open_memstream(&r->out, &r->out_len);
	err = open_memstream(&r->err, &r->err_len);
	assert_non_null(out);
	assert_non_null(err);
	r->rc = config_parse_to(argc, argv, &r->o, out, err);
	fclose(out);
	fclose(err);
}

static void run_release(struct run *r)
{
	config_release(&r->o);
	free(r->out);
	free(r->err);
}

/* A parse of the given arguments that must be refused, naming 'flag'. */
#define REFUSED(flag, ...)                                                        \
	do {                                                                      \
		struct run r_;                                                    \
		parse(&r_, __VA_ARGS__, NULL);                                    \
		assert_int_equal(r_.rc, CONFIG_USAGE);                            \
		if (!strstr(r_.err, (flag)))                                      \
			fail_msg("'%s' not named in: %s", (flag), r_.err);        \
		assert_int_equal(r_.out_len, 0);                                  \
		run_release(&r_);                                                 \
	} while (0)

static void defaults(void **state)
{
	struct run r;

	(void)state;
	parse(&r, NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.host, "127.0.0.1");
	assert_int_equal(r.o.port, 8080);
	assert_string_equal(r.o.db, "data/rig.db");
	assert_string_equal(r.o.web, "web");
	assert_int_equal(r.o.n_origins, 0);
	assert_int_equal(r.o.max_message, 1u << 20);
	assert_int_equal(r.o.max_fragments, 4096);
	assert_int_equal(r.o.max_body, 8u << 20);
	assert_int_equal(r.o.max_gltf, 16u << 20);
	assert_int_equal(r.o.idle_timeout_s, 60);
	assert_int_equal(r.o.max_clients, 1024);
	assert_int_equal(r.o.max_ops, EDIT_DEFAULT_MAX_OPS);
	assert_int_equal(r.o.max_nodes, SCENE_DEFAULT_MAX_NODES);
	assert_int_equal(r.o.reply_queue, 1u << 20);
	assert_int_equal(r.o.journal, 256);
	assert_false(r.o.sync_normal);
	assert_int_equal(r.o.log_level, LOG_WARN);
	assert_int_equal(r.o.n_token_args, 0);
	assert_null(r.o.tokens_file);
	assert_false(r.o.insecure_remote);
	assert_int_equal(r.o.max_rate, 2000);
	assert_int_equal(r.o.max_token_rate, 5000);
	assert_int_equal(r.o.max_subs, 64);
	assert_int_equal(r.o.max_scenes, 1000);
	assert_null(r.o.tls_cert);
	assert_null(r.o.tls_key);
	assert_int_equal(r.out_len, 0);
	assert_int_equal(r.err_len, 0);
	run_release(&r);
}

static void every_flag_reaches_its_field(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--listen", "0.0.0.0:9000", "--db", "x.db", "--web", "www", "--origin",
	      "http://a", "--origin", "http://b", "--max-message", "2048", "--max-fragments", "7",
	      "--max-body", "4096", "--max-gltf", "5000", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.host, "0.0.0.0");
	assert_int_equal(r.o.port, 9000);
	assert_string_equal(r.o.db, "x.db");
	assert_string_equal(r.o.web, "www");
	assert_int_equal(r.o.n_origins, 2);
	assert_string_equal(r.o.origins[0], "http://a");
	assert_string_equal(r.o.origins[1], "http://b");
	assert_int_equal(r.o.max_message, 2048);
	assert_int_equal(r.o.max_fragments, 7);
	assert_int_equal(r.o.max_body, 4096);
	assert_int_equal(r.o.max_gltf, 5000);
	run_release(&r);

	parse(&r, "--max-ops", "3", "--max-nodes", "4", "--max-clients", "5", "--idle-timeout", "0",
	      "--reply-queue", "8192", "--journal", "9", "--sync", "normal", "--log-level", "debug",
	      "--tokens", "t.txt", "--insecure-allow-remote", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.max_ops, 3);
	assert_int_equal(r.o.max_nodes, 4);
	assert_int_equal(r.o.max_clients, 5);
	assert_int_equal(r.o.idle_timeout_s, 0);
	assert_int_equal(r.o.reply_queue, 8192);
	assert_int_equal(r.o.journal, 9);
	assert_true(r.o.sync_normal);
	assert_int_equal(r.o.log_level, LOG_DEBUG);
	assert_string_equal(r.o.tokens_file, "t.txt");
	assert_true(r.o.insecure_remote);
	run_release(&r);

	parse(&r, "--max-rate", "11", "--max-token-rate", "12", "--max-subs", "13", "--max-scenes",
	      "14", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--sync", "full", "--log-level",
	      "error", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.max_rate, 11);
	assert_int_equal(r.o.max_token_rate, 12);
	assert_int_equal(r.o.max_subs, 13);
	assert_int_equal(r.o.max_scenes, 14);
	assert_string_equal(r.o.tls_cert, "c.pem");
	assert_string_equal(r.o.tls_key, "k.pem");
	assert_false(r.o.sync_normal);
	assert_int_equal(r.o.log_level, LOG_ERROR);
	run_release(&r);
}

static void listen_forms(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--listen", "[::1]:0", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.host, "::1");
	assert_int_equal(r.o.port, 0);
	run_release(&r);
	parse(&r, "--listen", "localhost:65535", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.host, "127.0.0.1");
	assert_int_equal(r.o.port, 65535);
	run_release(&r);
	parse(&r, "--listen=10.0.0.1:80", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.host, "10.0.0.1");
	assert_int_equal(r.o.port, 80);
	run_release(&r);

	REFUSED("--listen", "--listen", "nowhere");
	REFUSED("--listen", "--listen", "127.0.0.1:70000");
	REFUSED("--listen", "--listen", "127.0.0.1:");
	REFUSED("--listen", "--listen", ":8080");
	REFUSED("--listen", "--listen", "::1:8080");
	REFUSED("--listen", "--listen", "[::1]8080");
	REFUSED("--listen", "--listen", "[]:8080");
	REFUSED("--listen", "--listen", "[::1:8080");
	REFUSED("--listen", "--listen", "127.0.0.1:-1");
	REFUSED("--listen", "--listen", "127.0.0.1:+80");
	REFUSED("--listen", "--listen", "127.0.0.1:80x");
}

static void tokens(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--token", "editor:demo:0123456789abcdef", "--admin-token", "fedcba9876543210",
	      "--token", "viewer:*:sha256:abc", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.n_token_args, 3);
	assert_string_equal(r.o.token_args[0], "editor:demo:0123456789abcdef");
	assert_string_equal(r.o.token_args[1], "admin:*:fedcba9876543210");
	/* A digest's form is the server's to check; its length is not a token's. */
	assert_string_equal(r.o.token_args[2], "viewer:*:sha256:abc");
	run_release(&r);
	assert_int_equal(r.o.n_token_args, 0);

	REFUSED("--token", "--token", "editor:demo:short");
	REFUSED("--admin-token", "--admin-token", "short");
	REFUSED("--admin-token", "--admin-token", "");
	REFUSED("--token", "--token");
	REFUSED("--admin-token", "--admin-token");
}

static void bad_values(void **state)
{
	static const char *const numbers[] = {
		"--max-message", "--max-fragments", "--max-body", "--max-gltf", "--max-ops",
		"--max-nodes", "--max-clients", "--idle-timeout", "--reply-queue", "--journal",
		"--max-rate", "--max-token-rate", "--max-subs", "--max-scenes",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		const char *f = numbers[i];

		REFUSED(f, f, "12x");         /* not a number */
		REFUSED(f, f, "");
		REFUSED(f, f, " 5");
		REFUSED(f, f, "-1");          /* below every range */
		REFUSED(f, f, "99999999999"); /* above every range */
		REFUSED(f, f);                /* missing value */
	}
	/* The ends of a range. */
	REFUSED("--max-message", "--max-message", "1023");
	REFUSED("--max-message", "--max-message", "1073741825");
	REFUSED("--idle-timeout", "--idle-timeout", "65536");
	REFUSED("--reply-queue", "--reply-queue", "4095");
	REFUSED("--sync", "--sync", "sometimes");
	REFUSED("--sync", "--sync");
	REFUSED("--log-level", "--log-level", "loud");
	REFUSED("--log-level", "--log-level", "WARN");
	REFUSED("--db", "--db");
	REFUSED("--web", "--web");
	REFUSED("--origin", "--origin");
	REFUSED("--tokens", "--tokens");
	REFUSED("--hash-token", "--hash-token");
	REFUSED("--bogus", "--bogus");
	REFUSED("stray", "stray");
	REFUSED("--insecure-allow-remote", "--insecure-allow-remote=yes");
	REFUSED("--tls-cert", "--tls-cert", "c.pem");
	REFUSED("--tls-key", "--tls-key", "k.pem");
}

static void too_many_origins(void **state)
{
	char *argv[2 * (ORIGINS_MAX + 1) + 2]; /* rigd, the pairs, NULL */
	struct config o;
	FILE *err;
	char *text = NULL;
	size_t len = 0;
	int argc = 0, rc;

	(void)state;
	argv[argc++] = (char *)"rigd";
	for (int i = 0; i <= ORIGINS_MAX; i++) {
		argv[argc++] = (char *)"--origin";
		argv[argc++] = (char *)"http://a";
	}
	argv[argc] = NULL;
	err = open_memstream(&text, &len);
	rc = config_parse_to(argc, argv, &o, stdout, err);
	fclose(err);
	assert_int_equal(rc, CONFIG_USAGE);
	assert_non_null(strstr(text, "--origin"));
	config_release(&o);
	free(text);
}

static const char *const all_flags[] = {
	"--listen", "--db", "--web", "--origin", "--max-message", "--max-fragments", "--max-body",
	"--max-gltf", "--max-ops", "--max-nodes", "--max-clients", "--idle-timeout",
	"--reply-queue", "--journal", "--sync", "--log-level", "--token", "--admin-token",
	"--tokens", "--hash-token", "--insecure-allow-remote", "--max-rate", "--max-token-rate",
	"--max-subs", "--max-scenes", "--tls-cert", "--tls-key", "--help",
};

static void help_and_hash_token_stop_without_running(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--help", NULL);
	assert_int_equal(r.rc, CONFIG_DONE);
	assert_non_null(strstr(r.out, "usage: rigd"));
	/* The usage names every flag. */
	for (size_t i = 0; i < sizeof(all_flags) / sizeof(all_flags[0]); i++)
		if (!strstr(r.out, all_flags[i]))
			fail_msg("the usage does not name %s", all_flags[i]);
	run_release(&r);

	parse(&r, "-h", NULL);
	assert_int_equal(r.rc, CONFIG_DONE);
	run_release(&r);

	parse(&r, "--hash-token", "abc", NULL);
	assert_int_equal(r.rc, CONFIG_DONE);
	assert_string_equal(r.out, "sha256:ba7816bf8f01cfea414140de5dae2223"
				   "b00361a396177a9cb410ff61f20015ad\n");
	assert_int_equal(r.err_len, 0);
	run_release(&r);

	/* What comes before is parsed first: a bad flag still wins. */
	REFUSED("--bogus", "--bogus", "--help");
}

/* --redis-wait N[:TIMEOUT_MS]: off by default; the timeout defaults to a
 * quarter of --lease (at most 1000 ms) and may not exceed it; it needs
 * --redis. */
static void redis_wait(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--redis", "redis://127.0.0.1:6379", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.redis_wait, 0);
	run_release(&r);
	parse(&r, "--redis", "redis://127.0.0.1:6379", "--redis-wait", "1", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.redis_wait, 1);
	assert_int_equal(r.o.redis_wait_ms, 750);  /* --lease 3000 / 4 */
	run_release(&r);
	parse(&r, "--redis-wait", "2:200", "--lease", "1000", "--redis", "redis://h:1", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.redis_wait, 2);
	assert_int_equal(r.o.redis_wait_ms, 200);
	run_release(&r);
	parse(&r, "--redis", "redis://h:1", "--lease", "10000", "--redis-wait", "1", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.redis_wait_ms, 1000);
	run_release(&r);
	REFUSED("--redis-wait", "--redis-wait", "1");  /* without --redis */
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--lease", "1000", "--redis-wait", "1:300");
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--redis-wait", "17");
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--redis-wait", "1:0");
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--redis-wait", "1:");
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--redis-wait", ":5");
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--redis-wait", "x");
	REFUSED("--redis-wait", "--redis", "redis://h:1", "--redis-wait");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_flag_reaches_its_field),
		cmocka_unit_test(listen_forms),
		cmocka_unit_test(tokens),
		cmocka_unit_test(bad_values),
		cmocka_unit_test(too_many_origins),
		cmocka_unit_test(help_and_hash_token_stop_without_running),
		cmocka_unit_test(redis_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
