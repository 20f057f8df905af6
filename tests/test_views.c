/*
 * test_views.c: the views of a room as records (server/serve/views.c),
 * driven alone, without a server or a socket: a view shared by several
 * subscriptions goes with its last reference, a subscription's release
 * forgets its view and known set, a reloaded scene makes every cull stale,
 * and freeing the room's views frees all (ASan's leak check runs this).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "serve/views.h"

/* A room's views with 'n' entries, ids 1..n, each with 'refs' references
 * and a cull of its own. */
static void add_views(struct room_views *rv, int n, int refs)
{
	rv->views = calloc((size_t)n, sizeof(*rv->views));
	assert_non_null(rv->views);
	rv->cap_views = n;
	for (int i = 0; i < n; i++) {
		struct rview *v = calloc(1, sizeof(*v));

		assert_non_null(v);
		v->id = ++rv->next_view_id;
		v->refs = refs;
		v->words = 1;
		v->visible = calloc(1, sizeof(uint64_t));
		v->culled_scene = (const scene *)rv;  /* any non-NULL scene object */
		rv->views[rv->n_views++] = v;
	}
}

static void shared_view_goes_with_its_last_reference(void **state)
{
	struct room_views rv = {0};
	struct sub a = {.view_id = 1}, b = {.view_id = 1}, c = {.view_id = 2};

	(void)state;
	add_views(&rv, 2, 0);
	rv.views[0]->refs = 2;  /* a and b */
	rv.views[1]->refs = 1;  /* c */
	a.known = calloc(1, sizeof(uint64_t));
	a.known_words = 1;
	assert_true(views_active(&a));

	views_sub_release(&rv, &a);
	assert_int_equal(rv.n_views, 2);
	assert_int_equal(rv.views[0]->refs, 1);
	assert_false(views_active(&a));
	assert_null(a.known);
	assert_int_equal(a.view_id, 0);

	views_sub_release(&rv, &b);
	assert_int_equal(rv.n_views, 1);
	assert_int_equal(rv.views[0]->id, 2);

	views_sub_release(&rv, &c);
	assert_int_equal(rv.n_views, 0);
	views_free(&rv);
}

static void release_without_a_room(void **state)
{
	struct sub a = {.view_id = 7, .view_pending = true};

	(void)state;
	a.known = calloc(2, sizeof(uint64_t));
	a.known_words = 2;
	views_sub_release(NULL, &a);  /* the room is going anyway */
	assert_false(views_active(&a));
	assert_false(a.view_pending);
	assert_int_equal(a.known_words, 0);
}

static void reloaded_scene_makes_every_cull_stale(void **state)
{
	struct room_views rv = {0};

	(void)state;
	add_views(&rv, 3, 1);
	rv.boxes_scene = (const scene *)&rv;
	views_scene_reloaded(&rv);
	assert_null(rv.boxes_scene);
	for (int i = 0; i < rv.n_views; i++)
		assert_null(rv.views[i]->culled_scene);
	views_free(&rv);
	assert_int_equal(rv.n_views, 0);
	assert_null(rv.views);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shared_view_goes_with_its_last_reference),
		cmocka_unit_test(release_without_a_room),
		cmocka_unit_test(reloaded_scene_makes_every_cull_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
