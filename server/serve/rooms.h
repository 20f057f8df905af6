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

#include "server.h"

/* The room of scene 'name', or NULL when it has none yet. */
struct room *rooms_find(struct server *S, const char *name);

/* The room of existing scene 'name', made on first use; NULL when there
 * is no such scene or memory ran out. */
struct room *rooms_get(struct server *S, const char *name);

/* Frees a room that is no longer in the server's list (NULL: nothing). */
void rooms_free(struct room *st);

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

/* A deferred subscribe or unsubscribe, done after the commit: fills its
 * placeholder and adds or removes the subscription. */
void rooms_subscribe(struct server *S, struct deferred *d);

#endif
