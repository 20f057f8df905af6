/*
 * server.h: struct server, the state of one running rigd: its options, the
 * engine and the socket layer it drives, and the tables the modules keep
 * (clients, rooms, the turn's pending answers and deferred work, tokens,
 * counters).
 *
 * Only the table heads live here; each record is declared by the module
 * that owns it (struct client in clients.h, struct room in rooms.h, struct
 * pending and struct deferred in turn.h, struct token in auth.h), so a
 * header includes this one only when its functions take the server, and a
 * module reads the records it uses from their own headers.
 *
 * The cluster's side (clustered/) is reached only through 'hooks', which
 * serve_main fills when --redis is given; without it 'hooks' is NULL and
 * nothing of the cluster runs.
 */
#ifndef RIGD_SERVE_SERVER_H
#define RIGD_SERVE_SERVER_H

#include "config.h"
#include "metrics.h"

#include "codec/proto.h"
#include "engine/engine.h"
#include "net/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct client;
struct clustered;
struct deferred;
struct pending;
struct room;
struct serve_hooks;
struct token;

struct server {
	struct config o;
	engine *e;
	net *n;
	proto_limits lim;
	struct client **clients;     /* by connection slot */
	int cap_clients;
	long n_clients;
	uint64_t next_client;
	uint32_t boot_id;
	struct room **scenes;
	int n_scenes, cap_scenes;
	struct pending *pend;        /* answers of the turn being gathered */
	int n_pend, cap_pend;
	/* The turn whose commit the writer runs (engine_commit_busy): its
	 * answers, sent when the commit returns. */
	struct pending *flight;
	int n_flight, cap_flight;
	int n_stashed;               /* entries of 'pend' with a stash */
	int stash_cap;               /* batches of one client a stash takes (turn.c; 0: the least) */
	bool draining;               /* shutting down: turn_run waits for commits */
	bool pipelined;              /* the commit writer runs the commits */
	engine_stats commit_before;  /* the engine's counters at the last hand-off */
	double commit_started;       /* serve_now_s() at the last hand-off */
	bool commit_waiting;         /* the next commit waits for its window (turn.c) */
	/* Clients gathering (net_ws_gather) while that window is open, and
	 * which window it is (turn.c, gather_editors). */
	uint64_t *gathered;
	int n_gathered, cap_gathered;
	uint64_t window_id;
	struct deferred *dhead, *dtail;
	uint64_t *wake;              /* clients to wake when the turn ends */
	int n_wake, cap_wake;
	struct metrics m;
	size_t head;                 /* net_frame_head() */
	double started;              /* serve_now_s() at start */
	/* Called when clients.c drops a client for overflow, before its
	 * queue goes (turn_forget_client: its placeholders are forgotten). */
	void (*client_dropped)(struct server *S, struct client *c);
	struct token *tokens;        /* none: access control is off (loopback) */
	int n_tokens, cap_tokens;
	/* --redis: the cluster's side (serve_hooks.h) and its state, owned by
	 * clustered/; both NULL when rigd runs alone. */
	const struct serve_hooks *hooks;
	struct clustered *cx;
};

#endif
