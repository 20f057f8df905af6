/*
 * server.h: the one struct server every module of serve works on, and the
 * records it holds (clients and their reply queues, tokens, the serving
 * state of each scene, the turn's pending answers and deferred work).
 *
 * Like Redis's server.h, this is the shared vocabulary of the folder: the
 * modules (auth, clients, ws, turn, journal, rooms, fanout, http, routes,
 * metrics) each act on a part of it. It declares data only, no behaviour,
 * and never includes libwebsockets.h, cJSON.h or sqlite3.h.
 */
#ifndef RIGD_SERVE_SERVER_H
#define RIGD_SERVE_SERVER_H

#include "config.h"
#include "metrics.h"

#include "cluster/cluster.h"
#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"
#include "core/sha256.h"
#include "engine/engine.h"
#include "net/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLY_QUEUE_MAX_COUNT 65536      /* replies queued per client */
#define CLIENT_ID_MAX 32

/* One queued frame for one client. */
struct reply {
	struct reply *next;
	char *frame;                 /* net_frame_head() + len bytes; NULL: none */
	size_t len;                  /* bytes of payload */
	bool pending;                /* waits for this turn to fill it */
	bool presence;               /* coalescible: a newer presence replaces it */
	char key[SCENE_ID_MAX + CLIENT_ID_MAX + 2]; /* presence: scene '/' client */
};

/* One subscription of a client: where it is in one scene. */
struct sub {
	char scene[SCENE_ID_MAX + 1];
	int64_t cursor;              /* the seq the client has; -1: owes a snapshot */
	bool peers_pending;          /* after the snapshot: who else is here */
	int format;                  /* enum proto_format: JSON text or binary frames */
	/* Per-viewer interest (interest.h): the room's view this subscription
	 * declared (0: none), and the nodes the client was last told it may
	 * draw, a bitset by handle (NULL: every node, as without a view). */
	uint64_t view_id;
	uint64_t *known;
	int known_words;
	uint64_t known_gen;          /* 'known' is that cull of the view (0: its own) */
	bool view_pending;           /* owes the client a frame for a new view */
};

struct client {
	uint64_t conn;
	char id[CLIENT_ID_MAX];      /* "c" + boot id + "-" + counter */
	char *name;                  /* display name from its last presence */
	struct sub *subs;
	int n_subs, cap_subs;
	int next_sub;                /* round robin over subscriptions */
	struct reply *head, *tail;
	size_t queued_bytes;         /* sum of 'len' over the queue */
	int queued;                  /* entries in the queue */
	bool dropped;                /* closed for overflow; ignore its input */
	bool wake_after_turn;        /* was writable while a turn was open */
	/* access control (docs/security.md) */
	bool authed;                 /* 'tok' holds the hash of a known token */
	unsigned char tok[SHA256_LEN];
	int principal;               /* the token entry whose bucket it shares */
	double bucket, bucket_t;     /* messages it may send now; when refilled (s) */
};

/* Roles, each allowing what the one before it does. */
enum role { ROLE_NONE, ROLE_VIEWER, ROLE_EDITOR, ROLE_ADMIN };

/*
 * One configured token: the SHA-256 of the secret (never the secret), its
 * role and scene ("*": all). The same secret may appear several times (an
 * editor of one scene and a viewer of another); its first entry, the
 * principal, holds the rate bucket all its connections share.
 */
struct token {
	unsigned char hash[SHA256_LEN];
	int role;
	char scene[SCENE_ID_MAX + 1];
	int principal;
	double bucket, bucket_t;     /* requests it may make now; when refilled (s) */
};

/* A growable list of node ids. */
struct idlist {
	edit_id *v;
	int n, cap;
};

/* What one turn did to a scene, for the updates of lagging clients. */
struct jentry {
	int64_t from, to;            /* seqs (from, to] */
	edit_id *roots;              /* subtrees whose matrices were recomputed */
	int n_roots;
	edit_id *changed;            /* created or changed nodes */
	int n_changed;
	edit_id *removed;
	int n_removed;
	edit_id *full;               /* of 'changed': created, or changed in a
				      * field besides t, r, s, pivot */
	int n_full;
	bool order;                  /* the draw order (2D) changed in the turn */
};

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

struct interest_parts;

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

/* The serving state of one scene: its journal, subscribers and presence. */
struct room {
	char name[SCENE_ID_MAX + 1];
	struct jentry *ring;         /* journal, oldest at 'head' */
	int ring_cap;                /* entries 'ring' holds (--journal) */
	int head, n;
	int64_t epoch;               /* deltas are possible from cursors >= epoch */
	long journal_ids;            /* ids held by the journal's entries */
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
	/* The draw order of a 2D scene as the last turn left it: the scene
	 * object and its scene_draw_version, to tell whether a turn changed
	 * it. */
	const scene *order_scene;
	uint64_t order_version;
	/* this turn */
	bool touched;
	int64_t turn_from;
	struct idlist turn_changed, turn_removed;
	struct idlist turn_full;     /* as jentry's 'full' */
	struct idlist turn_roots;
	bool turn_lost;              /* a change could not be noted: snapshots */
	bool turn_order;             /* the turn changed the draw order */
	/* per-viewer interest (interest.h) */
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

/* A batch submitted this turn, answered when the turn commits. */
struct pending {
	char scene[SCENE_ID_MAX + 1];
	uint64_t conn;
	bool http;
	struct reply *reply;         /* ws: its placeholder (NULL once gone) */
	proto_req req;
	int64_t seq;
	long recomputed;
	/* A glTF import: its report (JSON, owned), answered with the ack, and
	 * the scene the import created, deleted again if the commit fails. */
	char *report;
	char created[SCENE_ID_MAX + 1];
	/* What the batch's ik ops did (owned; NULL when it had none),
	 * reported in its ack. */
	edit_ik_report *ik;
	int n_ik;
	/* A batch of the scene's log stream (serve/replica.c): no answer. */
	bool replica;
	/* A batch another process relayed (serve/relay.c): answered to it. */
	bool remote;
	uint64_t remote_rid;
	char remote_to[CLUSTER_ID_MAX];
};

/*
 * An HTTP request as a route's handler sees it: the request's own fields
 * (answered now) or the deferred copy of them (answered after the commit).
 * 'name' is the scene the path names ("" for none), already checked valid.
 */
struct http_call {
	uint64_t conn;
	int method;                  /* enum net_method */
	const char *path;
	const char *name;
	char *const *args;           /* "name=value" */
	int n_args;
	const char *body;            /* NUL-terminated */
	size_t body_len;             /* bytes */
	const unsigned char *tok;    /* with tokens: the caller's digest; else NULL */
};

enum deferred_kind { D_SUBSCRIBE, D_UNSUBSCRIBE, D_HTTP, D_VIEW, D_SCENE };

/* Work that reads or changes scenes outside a batch: done after the commit. */
struct deferred {
	struct deferred *next;
	int kind;
	uint64_t conn;
	struct reply *reply;
	proto_req req;
	char scene[SCENE_ID_MAX + 1];
	int format;                  /* D_SUBSCRIBE: enum proto_format */
	view view;                   /* D_VIEW: the view declared ... */
	bool view_clear;             /* ... or dropped */
	edit_id *always;             /* D_VIEW: its "always" ids (owned), sorted */
	int n_always;
	/* D_SCENE (lifecycle.c): a scene created (dims 2, 3) or deleted
	 * (dims 0) in the cluster; with conn, the answer to that process's
	 * own request ('scene_rc' what the cluster said) */
	int dims;
	int scene_rc;
	int dims_there;              /* scene_rc scene_exists: the cluster's dims */
	int64_t gen;                 /* the scene's incarnation in the cluster (0 unknown) */
	/* ... or, with 'body' set (and no scene), the catalog as the reader
	 * found it on connecting: one "NAME DIMS GEN DELETED_GEN" line a
	 * name, for lifecycle.c to reconcile the database with */
	/* D_HTTP: the route and a copy of the request */
	int route;                   /* index into the route table */
	int method;
	char *path;
	char *args[NET_MAX_ARGS];
	int n_args;
	char *body;
	size_t body_len;
	bool authed;                 /* with tokens: 'tok' is the caller's token */
	unsigned char tok[SHA256_LEN];
};

struct relay;
struct relay_http;
struct replica;
struct roster;

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
	struct pending *pend;
	int n_pend, cap_pend;
	struct deferred *dhead, *dtail;
	uint64_t *wake;              /* clients to wake when the turn ends */
	int n_wake, cap_wake;
	struct metrics m;
	size_t head;                 /* net_frame_head() */
	double started;              /* serve_now_s() at start */
	struct token *tokens;        /* none: access control is off (loopback) */
	int n_tokens, cap_tokens;
	cluster *cl;                 /* --redis: this process in the cluster; else NULL */
	struct relay *relay;         /* edits relayed to owners (serve/relay.c) */
	struct relay_http *relay_http; /* imports relayed (serve/relay_http.c) */
	struct replica *replica;     /* log streams followed (serve/replica.c) */
	int replica_kind;            /* while 'replicating': the kind of the
	                                batch's line (enum proto_log_kind) */
	int64_t replica_target;      /* and the seq it undoes or redoes */
	struct roster *roster;       /* other processes' participants (serve/roster.c) */
	bool replicating;            /* submitting a batch of a log stream */
	bool catalog_synced;         /* --redis: reconciled with the catalog once */
};

#endif
