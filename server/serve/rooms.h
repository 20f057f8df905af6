/*
 * rooms.h: who is in each scene. A room is the serving state of one scene:
 * its subscribers, the presence of its participants (a subscriber that
 * announced itself), and its journal (journal.h). Subscribing, leaving,
 * presence relay (a newer presence replaces an unsent older one) and
 * telling subscribers that their scene was deleted.
 *
 * Never builds a frame from a scene's nodes (fanout.c does) and never
 * changes a scene.
 */
#ifndef RIGD_SERVE_ROOMS_H
#define RIGD_SERVE_ROOMS_H

#include "journal.h"
#include "views.h"

#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct client;
struct reply;
struct server;
struct sub;

/* Turns of step frames a room keeps per format, and the largest frame
 * kept (a bigger update, a root edit of a huge scene say, is sent to the
 * clients at its cursor from the cache but not kept for those behind). */
#define FANOUT_STEPS 4
#define FANOUT_STEP_MAX_BYTES (256 * 1024)

/* The selection a participant last announced in a room. */
struct presence {
	uint64_t conn;
	edit_id *selection;
	int n_selection;
};

/* The serving state of one scene: its subscribers, presence, journal,
 * views and the frames built for them. */
struct room {
	char name[SCENE_ID_MAX + 1];
	uint64_t *subs;              /* subscribed connections */
	int n_subs, cap_subs;
	struct presence *pres;
	int n_pres, cap_pres;
	/* The last update built, shared by every client at the same cursor
	 * (with net's head room). */
	char *cache;
	size_t cache_len;
	int64_t cache_from, cache_to;
	int cache_covered;
	/* The same for binary subscribers, one per binary format (float32,
	 * float64): a frame is encoded once per distinct (cursor, format). */
	struct bin_cache {
		char *frame;             /* with net's head room; NULL when none */
		size_t len;
		int64_t from, to;
		int covered;
	} bin_cache[PROTO_FORMAT_COUNT - 1];
	/* The update of each of the last FANOUT_STEPS turns (from -> to), per
	 * format (JSON, float32, float64), encoded when the turn ended (so
	 * with that turn's matrices), oldest first, each 'from' the 'to' of
	 * the one before: a client a few turns behind gets every pose in
	 * order (fanout.c). */
	struct step_frame {
		char *frame;             /* with net's head room */
		size_t len;
		int64_t from, to;
		int covered;
	} steps[PROTO_FORMAT_COUNT][FANOUT_STEPS];
	int n_steps[PROTO_FORMAT_COUNT];
	/* The scene object frames were last built from: binary indices are its
	 * handles, so a scene the engine reloaded restarts the journal. */
	const scene *scene_seen;
	struct journal j;            /* what its turns did (journal.h) */
	struct room_views iv;        /* per-viewer interest (views.h) */
};

/* The room of scene 'name', or NULL when it has none yet. */
struct room *rooms_find(struct server *S, const char *name);

/* The room of existing scene 'name', made on first use; NULL when there
 * is no such scene or memory ran out. */
struct room *rooms_get(struct server *S, const char *name);

/* Frees a room that is no longer in the server's list (NULL: nothing). */
void rooms_free(struct room *st);

/* Restarts the journal of 'st' at 'epoch' (journal_clear) and drops the
 * frames built from it: every subscriber behind 'epoch' gets a snapshot. */
void rooms_restart(struct room *st, int64_t epoch);

/* Takes 'st' out of the server's list and frees it. */
void rooms_remove(struct server *S, struct room *st);

/* The subscription of 'c' to 'scene_name', or NULL. */
struct sub *rooms_sub_find(struct client *c, const char *scene_name);

/*
 * Queues a copy of 'frame' (len bytes of payload after net's head room;
 * borrowed) for every subscriber of 'st' but 'except'. With a
 * 'presence_key' ("scene/client") the frame is a presence that replaces
 * the same participant's unsent one in each queue.
 */
void rooms_broadcast(struct server *S, struct room *st, uint64_t except, const char *frame,
		     size_t len, const char *presence_key);

/* Removes the subscription of 'c' to 'scene_name' (if any) and, when it
 * was a participant, tells the others it left. */
void rooms_unsubscribe(struct server *S, struct client *c, const char *scene_name);

/* After a snapshot: queues to 'c' a join notice and the last presence of
 * every other participant of 'st'. */
void rooms_send_peers(struct server *S, struct client *c, struct room *st);

/* A presence message of 'c': relays it (and, the first time, a join) to
 * the room. Takes the name and selection out of 'msg'. */
void rooms_presence(struct server *S, struct client *c, proto_msg *msg);

/* Scene 'name' was deleted: every subscriber hears of it once, and its
 * room goes. */
void rooms_scene_gone(struct server *S, const char *name);

/* A subscribe or unsubscribe of connection 'conn', run after the commit
 * of the turn it came in: its answer fills placeholder 'reply' (NULL:
 * none), in the order the client sent it. */
struct rooms_request {
	uint64_t conn;
	struct reply *reply;
	proto_req req;
	const char *scene;
	int format;                  /* subscribe: enum proto_format */
	bool leave;                  /* an unsubscribe */
};

/* Adds (or, 'leave', removes) the subscription of 'q' and answers it. */
void rooms_subscribe(struct server *S, const struct rooms_request *q);

#endif
