/*
 * serve_main.h: the rigd server: command-line flags, and the wiring between the
 * engine (scenes, log, group commit) and net (HTTP and websockets).
 *
 * serve owns the protocol's behaviour: routes, subscriptions, per-client
 * cursors instead of frame queues, presence relay, and the loop turn as the
 * unit of group commit (docs/protocol.md). It never includes
 * libwebsockets.h, cJSON.h or sqlite3.h: bytes go through net, JSON through
 * proto, storage through engine.
 */
#ifndef RIGD_SERVE_MAIN_H
#define RIGD_SERVE_MAIN_H

struct serve_hooks;

/*
 * Runs rigd with the given arguments (argv[0] is the program name) until
 * SIGINT or SIGTERM, then commits what is pending, closes every websocket
 * with 1001 and returns 0. Returns 2 for bad arguments (after printing the
 * usage) and 1 when the server cannot start (database locked, address in
 * use, ...), with a one-line reason on stderr. 'cluster' is the table of
 * the cluster's side (clustered.h: clustered_hooks()) used when --redis
 * is given, or NULL in a rigd built without it (--redis is refused then).
 */
int serve_main(int argc, char **argv, const struct serve_hooks *cluster);

#endif
