/*
 * roster.h: the participants of other processes (--redis). A participant's
 * presence and leave are appended to the cluster's presence stream by the
 * process it is connected to (cluster_presence_send), and every other
 * process relays them to its own subscribers of that scene with the same
 * rules as its own participants: a join before the first presence, a newer
 * presence replacing an unsent older one, the participants listed to a new
 * subscriber after its snapshot, a leave when the participant leaves or its
 * process is gone from the cluster.
 *
 * Without --redis nothing here runs and every call is a no-op.
 */
#ifndef RIGD_CLUSTERED_ROSTER_H
#define RIGD_CLUSTERED_ROSTER_H

#include <stddef.h>

struct client;
struct presence;
struct room;
struct server;

/* Local participant 'c' of room 'st' sent a presence ('pr'): the other
 * processes hear it. */
void roster_local_presence(struct server *S, struct client *c, struct room *st,
			   const struct presence *pr);

/* Local participant 'c' left scene 'scene': the other processes hear it. */
void roster_local_leave(struct server *S, struct client *c, const char *scene);

/* After a snapshot to 'c': a join and the presence of every participant
 * of 'st' on another process. */
void roster_send_peers(struct server *S, struct client *c, struct room *st);

/* The cluster's callbacks (ctx the server): an entry of the presence
 * stream, and the reader's connection, first or again (asks for a sync). */
void roster_entry(void *ctx, const char *from, const char *kind, const char *scene,
		  const char *client, const char *msg, size_t len);
void roster_reader_up(void *ctx);

/* Every second: the participants of processes no longer live leave. */
void roster_tick(struct server *S);

/* Scene 'name' was deleted: its remote participants are forgotten. */
void roster_scene_gone(struct server *S, const char *name);

/* Frees the roster (clustered_stop). */
void roster_free(struct server *S);

#endif
