/*
 * views.c: the views declared in a room, as records (see views.h): their
 * references, and what is freed when a subscription, the room or the
 * scene object goes. Declaring, culling and framing are interest.c's.
 */
#include "views.h"

#include <assert.h>
#include <stdlib.h>

void views_parts_free(struct interest_parts *p)
{
	if (!p)
		return;
	journal_update_release(&p->u);
	free(p->world_bits);
	free(p);
}

static void rview_free(struct rview *rv)
{
	if (!rv)
		return;
	for (int f = 0; f < PROTO_FORMAT_COUNT; f++)
		free(rv->cache[f].frame);
	free(rv->visible);
	free(rv->always);
	free(rv);
}

/* One reference less to view 'id'; the last one frees it. */
void views_unref(struct room_views *rv, uint64_t id)
{
	for (int i = 0; rv && i < rv->n_views; i++)
		if (rv->views[i]->id == id) {
			assert(rv->views[i]->refs > 0);
			if (--rv->views[i]->refs == 0) {
				rview_free(rv->views[i]);
				rv->views[i] = rv->views[--rv->n_views];
			}
			return;
		}
}

void views_sub_release(struct room_views *rv, struct sub *sb)
{
	if (sb->view_id)
		views_unref(rv, sb->view_id);
	free(sb->known);
	sb->view_id = 0;
	sb->known = NULL;
	sb->known_words = 0;
	sb->known_gen = 0;
	sb->view_pending = false;
}

void views_free(struct room_views *rv)
{
	for (int i = 0; i < rv->n_views; i++)
		rview_free(rv->views[i]);
	free(rv->views);
	rv->views = NULL;
	rv->n_views = rv->cap_views = 0;
	view_boxes_release(&rv->boxes);
	views_parts_free(rv->parts);
	rv->parts = NULL;
	free(rv->scratch);
	rv->scratch = NULL;
	rv->cap_scratch = 0;
}

void views_scene_reloaded(struct room_views *rv)
{
	rv->boxes_scene = NULL;
	views_parts_free(rv->parts);
	rv->parts = NULL;
	for (int i = 0; i < rv->n_views; i++)
		rv->views[i]->culled_scene = NULL;
}

bool views_active(const struct sub *sb)
{
	return sb->view_id != 0 || sb->known != NULL;
}
