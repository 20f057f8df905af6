/*
 * interest.h: per-viewer interest. A subscriber may declare its view of a
 * scene (core/view.h: frustum, viewport, minimum projected size; plus the
 * ids it wants wherever the camera looks, "always"); from then on its
 * frames carry world matrices only for the nodes visible in it,
 * the current matrix of every node that entered the view, and "hidden", the
 * nodes that left it (docs/protocol.md, "Views").
 *
 * Cost is bounded: a room builds its scene's boxes once per scene state,
 * culls each distinct view (identical views share one entry) once per
 * scene state, lazily, when a frame is built for it; a frame is built once
 * per (cursor, format, view, known cull) and copied to every client it fits.
 * Each subscription with a view keeps one bitset of what its client may
 * draw (a bit per node handle): its memory follows the scene's size, never
 * how far behind the client is.
 *
 * Never changes a scene, never writes to a socket.
 */
#ifndef RIGD_SERVE_INTEREST_H
#define RIGD_SERVE_INTEREST_H

#include "core/scene.h"

#include <stddef.h>
#include <stdint.h>

struct client;
struct deferred;
struct room;
struct server;
struct sub;

/* A deferred view message of a connection (after the commit of its turn):
 * sets or drops the view of its subscription (a view's entry may take d's
 * "always" ids), answers it (an ack with the scene's seq when it carried a
 * req; not_subscribed when there is no such subscription) and wakes the
 * client for the frame the view owes it. */
void interest_declare(struct server *S, struct deferred *d);

/*
 * The next frame of subscription 'sb' of 'c' (which has a view, or is
 * leaving one: sb->view_id or sb->known) to scene 's' of room 'st' now at
 * 'seq': an update from its cursor, or a snapshot when the journal cannot
 * say, each with its "hidden" list; its length in *len (owned by the
 * caller, with net's head room). Moves the cursor and the client's known
 * set. NULL when memory ran out (nothing changed).
 */
char *interest_frame(struct server *S, struct client *c, struct sub *sb, struct room *st,
		     const scene *s, int64_t seq, size_t *len);

#endif
