/*
 * views.h: the views declared in one room (per-viewer interest, interest.h)
 * as records: each distinct view once, with its cull and its last frames,
 * shared by every subscription that declared it; and the room's boxes and
 * buffers the culls use. A room holds one struct room_views.
 *
 * Only the records and their release live here, so that a room can free
 * its views without knowing how they are culled or framed.
 */
#ifndef RIGD_SERVE_VIEWS_H
#define RIGD_SERVE_VIEWS_H

#include "clients.h"
#include "journal.h"

#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"
#include "core/view.h"

#include <stdbool.h>
#include <stdint.h>

/* One view declared in a room, shared by every subscription that declared
 * an identical one (interest.h). */
struct rview {
	uint64_t id;                 /* unique in its room, never reused; never 0 */
	view v;
	edit_id *always;             /* ids visible wherever v looks (owned), */
	int n_always;                /* sorted, each once */
	int refs;                    /* subscriptions that hold it */
	const scene *culled_scene;   /* 'visible' is the cull of this scene ... */
	int64_t culled_seq;          /* ... at this seq; -1: not culled yet */
	uint64_t gen;                /* counts the culls; names 'visible' */
	uint64_t *visible;           /* bitset by handle */
	int words;
	/* The last frame built for this view, per format, shared by every
	 * client at the same cursor that knows the same cull. */
	struct rview_frame {
		char *frame;             /* with net's head room; NULL when none */
		size_t len;
		int64_t from, to;
		uint64_t known_gen, gen;
		int covered;
	} cache[PROTO_FORMAT_COUNT];
};

/*
 * What the journal says between 'from' and 'to' of one scene, gathered
 * once for every view subscription at that cursor: the update's lists and
 * a bitset of the nodes whose matrix changed, so that each view picks its
 * matrices word by word from its own visible set.
 */
struct interest_parts {
	const scene *s;
	int64_t from, to;
	int rc;                      /* journal_collect's: not 0, a snapshot */
	int covered;
	struct journal_update u;
	uint64_t *world_bits;
	int words;
};

/* The views of one room, and what their culls share. */
struct room_views {
	struct rview **views;
	int n_views, cap_views;
	uint64_t next_view_id;
	view_boxes boxes;            /* of 'boxes_scene' at 'boxes_seq' */
	const scene *boxes_scene;
	int64_t boxes_seq;
	int *scratch;                /* room for one cull's visible list */
	int cap_scratch;
	struct interest_parts *parts; /* the journal's update last gathered for views */
};

/* One reference less to view 'id' of 'rv' (NULL: none); the last one
 * frees it. */
void views_unref(struct room_views *rv, uint64_t id);

/* Drops the view and known set of 'sb' (a subscription of the room of
 * 'rv', which may be NULL when the room is going anyway). */
void views_sub_release(struct room_views *rv, struct sub *sb);

/* Frees every view, box and buffer of 'rv'. */
void views_free(struct room_views *rv);

/* The engine reloaded the room's scene: every cull and box is stale. */
void views_scene_reloaded(struct room_views *rv);

/* True when 'sb' declared a view or is leaving one: interest_frame
 * serves it. */
bool views_active(const struct sub *sb);

/* Frees parts 'p' (NULL: nothing). */
void views_parts_free(struct interest_parts *p);

#endif
