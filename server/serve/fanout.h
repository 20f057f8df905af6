/*
 * fanout.h: what a client's socket gets when it can take a frame. Replies
 * first, in request order; then, round robin over its subscriptions, one
 * frame per lagging subscription: an update from the client's cursor to
 * the scene's seq (built from the journal, shared by every client at the
 * same cursor and format), or a snapshot when the journal cannot say.
 *
 * A client at most FANOUT_STEPS turns behind gets the turns one by one, in
 * order, from the step frames encoded when each turn ended: every viewer
 * that keeps up on average sees every pose, even when one turn's fan-out
 * to a thousand sockets overlaps the next turn. A client further behind (a
 * slow one) gets one frame from its cursor to the latest seq instead.
 *
 * Never builds a frame while batches await their commit, so nobody sees an
 * edit that might still be rolled back.
 */
#ifndef RIGD_SERVE_FANOUT_H
#define RIGD_SERVE_FANOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct room;
struct server;

/*
 * net's ws_writable callback ('ctx' the server): the next frame for
 * connection 'conn' (owned by net from here, with net's head room), its
 * length in *len, or NULL for none; *more says whether more is waiting,
 * *binary whether the frame is a binary one (a subscription's update or
 * snapshot in a binary format).
 */
char *fanout_writable(void *ctx, uint64_t conn, size_t *len, bool *more, bool *binary);

/*
 * The end of a turn that moved scene 'st' from seq 'from' to 'to' (its
 * journal entry added): encodes the turn's update once per format that a
 * subscriber within FANOUT_STEPS turns of it uses, and keeps it as a step
 * frame. Without memory, or for a frame over FANOUT_STEP_MAX_BYTES, the
 * steps are dropped (those clients then get one frame to the latest seq).
 */
void fanout_turn_end(struct server *S, struct room *st, int64_t from, int64_t to);

/*
 * In the window after a commit, while every scene in memory is what is
 * stored: builds, for each client with a subscription that is behind, the
 * frame it is due and holds it in the client (one at a time: a client
 * still holding one gets a frame that covers more once it has sent it), to
 * be sent when the socket can take it, after the client's replies,
 * whatever the scene holds by then (the next batch may make it busy
 * before the socket is writable).
 */
void fanout_prepare(struct server *S);

#endif
