/*
 * test_auth.c: access control of the server (server/serve/auth.c) without
 * sockets or clocks: token specs (good ones added, bad ones refused with
 * the list unchanged), the role a token has on each scene, Bearer headers,
 * rate buckets taken and refilled over time, the websocket checks, and the
 * HTTP decision for the role of every route of the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/sha256.h"
#include "serve/auth.h"
#include "serve/clients.h"
#include "serve/routes.h"
#include "serve/server.h"

#define VIEWER "viewer-token-0123456789"
#define EDITOR "editor-token-0123456789"
#define ADMIN "admin-token-0123456789ab"
#define OTHER "other-token-0123456789ab"

static struct server *server_new(void)
{
	struct server *S = calloc(1, sizeof(*S));

	assert_non_null(S);
	S->o.max_rate = 10;
	S->o.max_token_rate = 100;
	return S;
}

static void server_free_(struct server *S)
{
	free(S->tokens);
	free(S);
}

static void add(struct server *S, const char *spec)
{
	char why[128];

	assert_int_equal(auth_token_spec(S, spec, why, sizeof(why)), 0);
}

/* viewer of demo, editor of demo (and viewer of other, same secret as
 * nothing else), admin of everything, editor of other. */
static int setup(void **state)
{
	struct server *S = server_new();

	add(S, "viewer:demo:" VIEWER);
	add(S, "editor:demo:" EDITOR);
	add(S, "admin:*:" ADMIN);
	add(S, "editor:other:" OTHER);
	add(S, "viewer:demo:" OTHER);
	*state = S;
	return 0;
}

static int teardown(void **state)
{
	server_free_(*state);
	return 0;
}

static void digest(const char *secret, unsigned char hash[SHA256_LEN])
{
	sha256_digest(secret, strlen(secret), hash);
}

static int role(const struct server *S, const char *secret, const char *scene_name)
{
	unsigned char hash[SHA256_LEN];

	digest(secret, hash);
	return auth_role_for(S, hash, scene_name, NULL);
}

/* ---------- tokens ---------- */

static void test_bad_specs_refused(void **state)
{
	static const char *const bad[] = {
		"viewer:demo",                         /* no token */
		"viewer",                              /* nothing */
		"boss:demo:" VIEWER,                   /* no such role */
		"none:demo:" VIEWER,                   /* not a role one can give */
		"admin:demo:" ADMIN,                   /* admin is for every scene */
		"viewer:demo:short",                   /* too short */
		"viewer:demo:has a space in it 0123",  /* not visible ASCII */
		"viewer:bad name:" VIEWER,             /* not a scene name */
		"viewer::" VIEWER,                     /* empty scene */
		"viewer:demo:sha256:0123",             /* digest too short */
		"viewer:demo:sha256:zz23456789012345678901234567890123456789012345678901234567890123",
	};
	struct server *S = server_new();
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(auth_token_spec(S, bad[i], why, sizeof(why)), -1);
		assert_true(why[0] != '\0');
		assert_int_equal(S->n_tokens, 0);
	}
	server_free_(S);
}

static void test_long_token_refused(void **state)
{
	struct server *S = server_new();
	char spec[TOKEN_MAX + 32], why[128];

	(void)state;
	snprintf(spec, sizeof(spec), "viewer:demo:");
	memset(spec + strlen(spec), 'x', TOKEN_MAX + 1);
	spec[strlen("viewer:demo:") + TOKEN_MAX + 1] = '\0';
	assert_int_equal(auth_token_spec(S, spec, why, sizeof(why)), -1);
	spec[strlen("viewer:demo:") + TOKEN_MAX] = '\0';
	assert_int_equal(auth_token_spec(S, spec, why, sizeof(why)), 0);
	assert_int_equal(S->n_tokens, 1);
	server_free_(S);
}

static void test_sha256_spec(void **state)
{
	struct server *S = server_new();
	unsigned char hash[SHA256_LEN];
	char spec[128];
	int n;

	(void)state;
	digest(VIEWER, hash);
	n = snprintf(spec, sizeof(spec), "viewer:demo:sha256:");
	for (int i = 0; i < SHA256_LEN; i++)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, "%02X", hash[i]);
	add(S, spec);
	/* The digest stands for the secret, which never had to be written. */
	assert_int_equal(role(S, VIEWER, "demo"), ROLE_VIEWER);
	assert_int_equal(role(S, EDITOR, "demo"), -1);
	server_free_(S);
}

static void test_roles_per_scene(void **state)
{
	struct server *S = *state;

	assert_int_equal(S->n_tokens, 5);
	assert_int_equal(role(S, VIEWER, "demo"), ROLE_VIEWER);
	assert_int_equal(role(S, VIEWER, "other"), ROLE_NONE);
	assert_int_equal(role(S, EDITOR, "demo"), ROLE_EDITOR);
	assert_int_equal(role(S, EDITOR, "other"), ROLE_NONE);
	assert_int_equal(role(S, ADMIN, "demo"), ROLE_ADMIN);
	assert_int_equal(role(S, ADMIN, "anything"), ROLE_ADMIN);
	/* One secret, two entries: the best role where it applies. */
	assert_int_equal(role(S, OTHER, "other"), ROLE_EDITOR);
	assert_int_equal(role(S, OTHER, "demo"), ROLE_VIEWER);
	assert_int_equal(role(S, OTHER, "third"), ROLE_NONE);
	/* No scene: the best role anywhere. */
	assert_int_equal(role(S, VIEWER, NULL), ROLE_VIEWER);
	assert_int_equal(role(S, OTHER, NULL), ROLE_EDITOR);
	/* Unknown tokens. */
	assert_int_equal(role(S, "not-a-token-at-all-0123", "demo"), -1);
	assert_int_equal(role(S, VIEWER "x", "demo"), -1);
}

static void test_principal_shared(void **state)
{
	struct server *S = *state;
	unsigned char hash[SHA256_LEN];
	int p1 = -1, p2 = -1;

	digest(OTHER, hash);
	assert_true(auth_role_for(S, hash, "other", &p1) >= 0);
	assert_true(auth_role_for(S, hash, "demo", &p2) >= 0);
	/* Both entries of the secret share the first one's bucket. */
	assert_int_equal(p1, 3);
	assert_int_equal(p2, 3);
	assert_int_equal(S->tokens[4].principal, 3);
	assert_int_equal(S->tokens[0].principal, 0);
}

static void test_bearer(void **state)
{
	unsigned char got[SHA256_LEN], want[SHA256_LEN];

	(void)state;
	digest(VIEWER, want);
	assert_true(auth_bearer_hash("Bearer " VIEWER, got));
	assert_memory_equal(got, want, SHA256_LEN);
	assert_true(auth_bearer_hash("bearer   " VIEWER "  ", got));
	assert_memory_equal(got, want, SHA256_LEN);
	assert_false(auth_bearer_hash(NULL, got));
	assert_false(auth_bearer_hash("Basic " VIEWER, got));
	assert_false(auth_bearer_hash("Bearer ", got));
	assert_false(auth_bearer_hash("Bearer    ", got));
}

/* ---------- rate buckets ---------- */

static void test_bucket_take_and_refill(void **state)
{
	double bucket = 0, refilled = 0;

	(void)state;
	/* A full second's worth to start with, then empty. */
	for (int i = 0; i < 10; i++)
		assert_true(auth_bucket_take(&bucket, &refilled, 10, 100.0));
	assert_false(auth_bucket_take(&bucket, &refilled, 10, 100.0));
	assert_true(bucket < 1);
	/* A tenth of a second later: one more. */
	assert_true(auth_bucket_take(&bucket, &refilled, 10, 100.1001));
	assert_false(auth_bucket_take(&bucket, &refilled, 10, 100.1001));
	/* Never more than one second's worth however long it rested. */
	for (int i = 0; i < 10; i++)
		assert_true(auth_bucket_take(&bucket, &refilled, 10, 1000.0));
	assert_false(auth_bucket_take(&bucket, &refilled, 10, 1000.0));
	/* No rate: no limit. */
	for (int i = 0; i < 1000; i++)
		assert_true(auth_bucket_take(&bucket, &refilled, 0, 1000.0));
}

static void test_bucket_wait(void **state)
{
	(void)state;
	assert_int_equal(auth_bucket_wait_ms(0.0, 10), 101);
	assert_int_equal(auth_bucket_wait_ms(0.5, 10), 51);
	assert_int_equal(auth_bucket_wait_ms(0.0, 1000), 2);
	assert_int_equal(auth_bucket_wait_ms(1.0, 10), 1);
	assert_int_equal(auth_bucket_wait_ms(0.0, 0), 1);
}

/* ---------- websockets ---------- */

static void test_ws_allowed(void **state)
{
	struct server *S = *state;
	struct server *open = server_new();
	struct client c = {0};

	assert_int_equal(auth_ws_allowed(open, &c, ROLE_EDITOR, "demo"), 0);
	assert_int_equal(auth_ws_allowed(S, &c, ROLE_VIEWER, "demo"), RIGD_E_UNAUTHORIZED);
	digest(VIEWER, c.tok);
	c.authed = true;
	assert_int_equal(auth_ws_allowed(S, &c, ROLE_VIEWER, "demo"), 0);
	assert_int_equal(auth_ws_allowed(S, &c, ROLE_EDITOR, "demo"), RIGD_E_FORBIDDEN);
	assert_int_equal(auth_ws_allowed(S, &c, ROLE_VIEWER, "other"), RIGD_E_FORBIDDEN);
	digest(EDITOR, c.tok);
	assert_int_equal(auth_ws_allowed(S, &c, ROLE_EDITOR, "demo"), 0);
	server_free_(open);
}

static void test_ws_rate(void **state)
{
	struct server *S = *state;
	struct client c = {0}, d = {0};
	int pause = -1;

	/* The connection's own rate: 10 a second, then refused and paused. */
	for (int i = 0; i < 9; i++) {
		assert_true(auth_ws_rate(S, &c, 5.0, &pause));
		assert_int_equal(pause, 0);
	}
	assert_true(auth_ws_rate(S, &c, 5.0, &pause));
	assert_true(pause > 0);  /* dry now: stop reading it for a while */
	assert_false(auth_ws_rate(S, &c, 5.0, &pause));
	assert_int_equal(pause, 101);
	assert_true(auth_ws_rate(S, &c, 5.2, &pause));
	/* A token's rate is shared by its connections. */
	S->o.max_token_rate = 3;
	S->o.max_rate = 100;
	c = (struct client){.authed = true, .principal = 2};
	d = (struct client){.authed = true, .principal = 2};
	assert_true(auth_ws_rate(S, &c, 7.0, &pause));
	assert_true(auth_ws_rate(S, &d, 7.0, &pause));
	assert_true(auth_ws_rate(S, &c, 7.0, &pause));
	assert_false(auth_ws_rate(S, &d, 7.0, &pause));
	assert_true(pause > 0);
	/* Refused by the token: the connection was not charged. */
	assert_true(d.bucket > 98.9 && d.bucket < 99.1);
}

/* ---------- HTTP ---------- */

static int http(struct server *S, int need, const char *scene_name, const char *header)
{
	unsigned char tok[SHA256_LEN];
	char msg[160] = "";
	int rc = auth_http(S, need, scene_name, header, 1.0, tok, msg, sizeof(msg));

	assert_true(rc == 0 || msg[0] != '\0');
	return rc;
}

static void test_http_every_route(void **state)
{
	struct server *S = *state;
	static const struct {
		const char *header;
		int role;                    /* on scene "demo" */
	} callers[] = {
		{NULL, -1},
		{"Bearer wrong-token-0123456789", -1},
		{"Bearer " VIEWER, ROLE_VIEWER},
		{"Bearer " EDITOR, ROLE_EDITOR},
		{"Bearer " ADMIN, ROLE_ADMIN},
	};
	uint64_t forbidden = S->m.forbidden_total, unauthorized = S->m.unauthorized_total;
	int n_forbidden = 0, n_unauthorized = 0;

	S->o.max_token_rate = 0;
	for (int r = 0; r < routes_count; r++) {
		const char *scene_name = strstr(routes[r].pattern, "{name}") ? "demo" : NULL;

		if (routes[r].role == ROLE_NONE)
			continue;  /* public: auth_http is not asked */
		for (size_t k = 0; k < sizeof(callers) / sizeof(callers[0]); k++) {
			int rc = http(S, routes[r].role, scene_name, callers[k].header);
			int want = callers[k].role < 0 ? RIGD_E_UNAUTHORIZED
				   : callers[k].role >= routes[r].role ? 0 : RIGD_E_FORBIDDEN;

			assert_int_equal(rc, want);
			n_forbidden += want == RIGD_E_FORBIDDEN;
			n_unauthorized += want == RIGD_E_UNAUTHORIZED;
		}
		/* A token of another scene only. */
		if (scene_name) {
			assert_int_equal(http(S, routes[r].role, "third", "Bearer " OTHER),
					 RIGD_E_FORBIDDEN);
			n_forbidden++;
		}
	}
	assert_int_equal(S->m.forbidden_total - forbidden, (uint64_t)n_forbidden);
	assert_int_equal(S->m.unauthorized_total - unauthorized, (uint64_t)n_unauthorized);
	/* A request no route answers needs a valid token of any role. */
	assert_int_equal(http(S, ROLE_VIEWER, NULL, NULL), RIGD_E_UNAUTHORIZED);
	assert_int_equal(http(S, ROLE_VIEWER, NULL, "Bearer " VIEWER), 0);
	assert_int_equal(http(S, ROLE_VIEWER, NULL, "Bearer " OTHER), 0);
}

static void test_http_rate(void **state)
{
	struct server *S = *state;
	unsigned char tok[SHA256_LEN];
	char msg[160];

	S->o.max_token_rate = 2;
	assert_int_equal(auth_http(S, ROLE_VIEWER, "demo", "Bearer " VIEWER, 1.0, tok, msg,
				   sizeof(msg)), 0);
	assert_int_equal(auth_http(S, ROLE_VIEWER, "demo", "Bearer " VIEWER, 1.0, tok, msg,
				   sizeof(msg)), 0);
	assert_int_equal(auth_http(S, ROLE_VIEWER, "demo", "Bearer " VIEWER, 1.0, tok, msg,
				   sizeof(msg)), RIGD_E_RATE_LIMITED);
	assert_int_equal(S->m.rate_limited_total, 1);
	/* Another token has its own bucket; time refills this one. */
	assert_int_equal(auth_http(S, ROLE_VIEWER, "demo", "Bearer " EDITOR, 1.0, tok, msg,
				   sizeof(msg)), 0);
	assert_int_equal(auth_http(S, ROLE_VIEWER, "demo", "Bearer " VIEWER, 1.6, tok, msg,
				   sizeof(msg)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_specs_refused),
		cmocka_unit_test(test_long_token_refused),
		cmocka_unit_test(test_sha256_spec),
		cmocka_unit_test_setup_teardown(test_roles_per_scene, setup, teardown),
		cmocka_unit_test_setup_teardown(test_principal_shared, setup, teardown),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_bucket_take_and_refill),
		cmocka_unit_test(test_bucket_wait),
		cmocka_unit_test_setup_teardown(test_ws_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ws_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_every_route, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_rate, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
