/*
 * ws.h: the websocket side of the server, as net calls it: a connection
 * opens, a message arrives, a connection closes. A message is rate
 * checked, decoded (codec/proto), authorised (auth.c), then handed on:
 * edits, undos and redos to turn.c, subscribes to the turn's deferred work,
 * presence to rooms.c. Frames go out through fanout.c, never from here.
 */
#ifndef RIGD_SERVE_WS_H
#define RIGD_SERVE_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* net's ws_open callback ('ctx' the server): adds a client for 'conn'
 * (closing the connection when memory runs out). */
void ws_open(void *ctx, uint64_t conn);

/* net's ws_message callback: handles one whole message (borrowed). */
void ws_message(void *ctx, uint64_t conn, const char *data, size_t len, bool binary);

/* net's ws_closed callback: forgets the client, its subscriptions and
 * its queue; its pending batches are still committed. */
void ws_closed(void *ctx, uint64_t conn);

#endif
