/*
 * fanout.h: what a client's socket gets when it can take a frame. Replies
 * first, in request order; then, round robin over its subscriptions, one
 * frame per lagging subscription: an update from the client's cursor to
 * the scene's seq (built from the journal, shared by every client at the
 * same cursor and format), or a snapshot when the journal cannot say.
 *
 * Never builds a frame while batches await their commit, so nobody sees an
 * edit that might still be rolled back.
 */
#ifndef RIGD_SERVE_FANOUT_H
#define RIGD_SERVE_FANOUT_H

#include "server.h"

/*
 * net's ws_writable callback ('ctx' the server): the next frame for
 * connection 'conn' (owned by net from here, with net's head room), its
 * length in *len, or NULL for none; *more says whether more is waiting,
 * *binary whether the frame is a binary one (a subscription's update or
 * snapshot in a binary format).
 */
char *fanout_writable(void *ctx, uint64_t conn, size_t *len, bool *more, bool *binary);

#endif
