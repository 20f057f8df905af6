/*
 * test_routes.c: the server's HTTP route table (server/serve/routes.c):
 * every row, with the role it needs, when it runs and the body it takes;
 * the scene name taken from the path; a path no row has (404) and a method
 * a path does not take (405) refused, default deny; which paths are the
 * table's and which are static files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/err.h"
#include "serve/routes.h"

/* Every route of the API, as the table must have it. */
static const struct {
	int method;
	const char *path;            /* a path the route answers */
	const char *name;            /* the scene name it holds */
	int role;
	int when;
	int body;
} expect[] = {
	{NET_GET, "/healthz", "", ROLE_NONE, ROUTE_NOW, ROUTE_BODY_ANY},
	{NET_POST, "/healthz", "", ROLE_NONE, ROUTE_NOW, ROUTE_BODY_ANY},
	{NET_GET, "/metrics", "", ROLE_ADMIN, ROUTE_NOW, ROUTE_BODY_ANY},
	{NET_DELETE, "/metrics", "", ROLE_ADMIN, ROUTE_NOW, ROUTE_BODY_ANY},
	{NET_GET, "/api/cluster", "", ROLE_VIEWER, ROUTE_NOW, ROUTE_BODY_API},
	{NET_GET, "/api/scenes", "", ROLE_VIEWER, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_POST, "/api/scenes", "", ROLE_ADMIN, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo", "demo", ROLE_VIEWER, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_DELETE, "/api/scenes/demo", "demo", ROLE_ADMIN, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_POST, "/api/scenes/demo/edits", "demo", ROLE_EDITOR, ROUTE_NOW, ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo/log", "demo", ROLE_VIEWER, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_POST, "/api/scenes/demo/log", "demo", ROLE_EDITOR, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo/gltf", "demo", ROLE_VIEWER, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_POST, "/api/scenes/a.b-c:d/gltf", "a.b-c:d", ROLE_EDITOR, ROUTE_AFTER_COMMIT,
	 ROUTE_BODY_GLTF},
	{NET_GET, "/api/scenes/demo/debug/hand", "demo", ROLE_VIEWER, ROUTE_AFTER_COMMIT,
	 ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo/poses", "demo", ROLE_VIEWER, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo/clips", "demo", ROLE_VIEWER, ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
	{NET_POST, "/api/scenes/demo2d/svg", "demo2d", ROLE_EDITOR, ROUTE_AFTER_COMMIT,
	 ROUTE_BODY_API},
	{NET_POST, "/api/scenes/hero/spine", "hero", ROLE_EDITOR, ROUTE_AFTER_COMMIT,
	 ROUTE_BODY_API},
	{NET_POST, "/api/scenes/mecha/dragonbones", "mecha", ROLE_EDITOR, ROUTE_AFTER_COMMIT,
	 ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo2d/assets", "demo2d", ROLE_VIEWER, ROUTE_AFTER_COMMIT,
	 ROUTE_BODY_API},
	{NET_GET, "/api/scenes/demo2d/assets/demo2d.svg", "demo2d", ROLE_VIEWER,
	 ROUTE_AFTER_COMMIT, ROUTE_BODY_API},
};
#define N_EXPECT ((int)(sizeof(expect) / sizeof(expect[0])))

static void test_every_route(void **state)
{
	bool used[64] = {false};
	int n_used = 0;

	(void)state;
	assert_true(routes_count < 64);
	for (int i = 0; i < N_EXPECT; i++) {
		char name[SCENE_ID_MAX + 2] = "junk";
		int r = routes_match(expect[i].path, expect[i].method, name, sizeof(name));

		assert_true(r >= 0 && r < routes_count);
		assert_string_equal(name, expect[i].name);
		assert_int_equal(routes[r].role, expect[i].role);
		assert_int_equal(routes[r].when, expect[i].when);
		assert_int_equal(routes[r].max_body, expect[i].body);
		assert_non_null(routes[r].handler);
		assert_true(routes_covers(expect[i].path));
		n_used += !used[r];
		used[r] = true;
	}
	/* No row the list above does not know: a new route needs a line here. */
	assert_int_equal(n_used, routes_count);
}

static void test_unknown_path_refused(void **state)
{
	static const char *const paths[] = {
		"/api/nothing", "/api/scenes/", "/api/scenes//log", "/api/scenes/demo/",
		"/api/scenes/demo/unknown", "/api/scenes/demo/log/more", "/api/scenes/demo/edits/x",
		"/api/", "/api/scenesx", "/api/scenes/demo/gltfx", "/metrics/x", "/healthz/",
		"/api/scenes/demo/debug", "/api/scenes/demo/debug/", "/api/scenes/demo/debug/a/b",
		"/api/scenes/demo/debugx/a",
	};
	char name[SCENE_ID_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (int m = NET_GET; m <= NET_OTHER; m++)
			assert_int_equal(routes_match(paths[i], m, name, sizeof(name)),
					 RIGD_E_NOT_FOUND);
}

static void test_long_name_refused(void **state)
{
	char path[256], name[SCENE_ID_MAX + 2];

	(void)state;
	/* SCENE_ID_MAX + 1 characters still match (and are then a bad id)... */
	strcpy(path, "/api/scenes/");
	memset(path + strlen(path), 'x', SCENE_ID_MAX + 1);
	path[strlen("/api/scenes/") + SCENE_ID_MAX + 1] = '\0';
	assert_true(routes_match(path, NET_GET, name, sizeof(name)) >= 0);
	assert_int_equal(strlen(name), SCENE_ID_MAX + 1);
	/* ...one more does not fit the name and is no route. */
	strcat(path, "x");
	assert_int_equal(routes_match(path, NET_GET, name, sizeof(name)), RIGD_E_NOT_FOUND);
}

static void test_wrong_method_refused(void **state)
{
	static const struct {
		int method;
		const char *path, *allowed;
	} cases[] = {
		{NET_PUT, "/api/scenes", "GET or POST"},
		{NET_DELETE, "/api/scenes", "GET or POST"},
		{NET_HEAD, "/api/scenes", "GET or POST"},
		{NET_POST, "/api/scenes/demo", "GET or DELETE"},
		{NET_PATCH, "/api/scenes/demo", "GET or DELETE"},
		{NET_GET, "/api/scenes/demo/edits", "POST"},
		{NET_PUT, "/api/scenes/demo/log", "GET or POST"},
		{NET_DELETE, "/api/scenes/demo/gltf", "GET or POST"},
		{NET_OPTIONS, "/api/scenes/demo/gltf", "GET or POST"},
		{NET_POST, "/api/scenes/demo/debug/hand", "GET"},
	};
	char name[SCENE_ID_MAX + 2], allowed[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(routes_match(cases[i].path, cases[i].method, name, sizeof(name)),
				 RIGD_E_BAD_METHOD);
		routes_methods(cases[i].path, allowed, sizeof(allowed));
		assert_string_equal(allowed, cases[i].allowed);
	}
}

static void test_covers(void **state)
{
	(void)state;
	assert_true(routes_covers("/api/anything"));
	assert_true(routes_covers("/metrics"));
	assert_true(routes_covers("/healthz"));
	assert_false(routes_covers("/"));
	assert_false(routes_covers("/api"));
	assert_false(routes_covers("/app/main.js"));
	assert_false(routes_covers("/metrics.html"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_route),
		cmocka_unit_test(test_unknown_path_refused),
		cmocka_unit_test(test_long_name_refused),
		cmocka_unit_test(test_wrong_method_refused),
		cmocka_unit_test(test_covers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
