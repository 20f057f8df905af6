/*
 * clients.h: the table of websocket clients (by connection slot) and each
 * client's reply queue: acks, errors, presence and join/leave notices,
 * queued up to a byte cap. A client that lets its queue overflow is closed
 * with 1008, so memory per client stays bounded however slowly it reads.
 *
 * Never builds a frame from a scene (fanout.c does, when a socket can
 * take it) and never writes to a socket: net asks for frames.
 */
#ifndef RIGD_SERVE_CLIENTS_H
#define RIGD_SERVE_CLIENTS_H

#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"
#include "core/sha256.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct server;

#define REPLY_QUEUE_MAX_COUNT 65536      /* replies queued per client */
/* Replies queued (answers awaiting their commit included: each holds a
 * copy of its batch while a commit is out) past which a client is no
 * longer read (clients_flow), until they are down to a quarter. */
#define REPLY_QUEUE_HOLD_COUNT 4096
/* Batches of one client that may wait for the commit out (turn.c's stash)
 * before its reading stops until that commit returns: so that a client
 * sending as fast as it may fills the next commit with a bounded share,
 * and everyone else's batches ride in it rather than behind thousands.
 * The share is what the last commit says STASH_CLIENT_BUDGET_S of commit
 * takes, within [STASH_CLIENT_MIN, STASH_CLIENT_MAX]: a few hundred
 * batches on a quiet machine, STASH_CLIENT_MIN when commits are slow (a
 * sanitizer build, a busy machine). */
#define STASH_CLIENT_BUDGET_S 0.010
#define STASH_CLIENT_MIN 64
#define STASH_CLIENT_MAX 1024
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
	bool held;                   /* its reading stopped: replies piled up */
	int stashed;                 /* its batches waiting for the commit out */
	bool turn_held;              /* its reading stopped: its share of them is in */
	uint64_t window_id;          /* the commit window its count is of (turn.c) */
	int window_batches;          /* its batches gathered in that window */
	bool gathering;              /* read only in bulk until the window ends */
	double held_at;              /* since then, or since it last read one */
	size_t held_bytes;           /* its queue then */
	/* An update built in the window after a commit (fanout_prepare),
	 * owned, sent after the replies; NULL when none. */
	char *ready;
	size_t ready_len;
	bool ready_binary;
	char ready_scene[SCENE_ID_MAX + 1];  /* whose update it is */
	/* access control (docs/security.md) */
	bool authed;                 /* 'tok' holds the hash of a known token */
	unsigned char tok[SHA256_LEN];
	int principal;               /* the token entry whose bucket it shares */
	double bucket, bucket_t;     /* messages it may send now; when refilled (s) */
};

/* The client of connection 'conn', or NULL when it has gone. */
struct client *clients_get(struct server *S, uint64_t conn);

/*
 * Adds a client for websocket connection 'conn' (whose low 32 bits are its
 * slot) with a fresh id. Returns it, or NULL when memory ran out (nothing
 * added).
 */
struct client *clients_add(struct server *S, uint64_t conn);

/* Takes 'c' out of the table and frees it with its queue. Its rooms and
 * pending answers forget it first (ws_closed), or go too (at shutdown). */
void clients_remove(struct server *S, struct client *c);

/* Frees every reply queued for 'c' and zeroes the queue's accounting. */
void clients_queue_free(struct client *c);

/* Closes 'c' (1008) because its queue overflowed; its queue is freed and
 * its pending answers forgotten. Does nothing for a client already dropped. */
void clients_drop(struct server *S, struct client *c);

/*
 * Appends a reply to the client's queue: takes ownership of 'frame' (NULL
 * with 'pending' for a placeholder the turn fills). Returns the entry, or
 * NULL when the client was dropped for overflow or memory ran out (the
 * frame is freed then).
 */
struct reply *clients_enqueue(struct server *S, struct client *c, char *frame, size_t len,
			      bool pending);

/*
 * Takes the next reply that is ready off the queue of 'c': its frame
 * (owned by the caller) and length in *len, or NULL when the queue is empty
 * or starts with a placeholder still waiting for the turn. Placeholders
 * filled with nothing (a subscribe answered by its snapshot) are skipped.
 */
char *clients_next_reply(struct client *c, size_t *len);

/*
 * Back-pressure: stops reading 'c' while its replies (acks, errors) pile up
 * past half of --reply-queue (bytes) or REPLY_QUEUE_HOLD_COUNT (entries),
 * and reads it again once they are down to a quarter, so that a client
 * that sends faster than it reads is slowed long before it would be
 * closed for overflow.
 */
void clients_flow(struct server *S, struct client *c);

/* Stops (hold) or resumes reading 'c' for its share of the next commit
 * (turn.c); its reading resumes only when neither this nor back-pressure
 * holds it. */
void clients_hold_for_turn(struct server *S, struct client *c, bool hold);

/* Seconds a client held by back-pressure may read none of its replies
 * before it is closed (1008), as one whose queue overflowed. */
#define CLIENTS_HOLD_CLOSE_S 5.0

/* Once a second: closes the clients held for CLIENTS_HOLD_CLOSE_S without
 * reading a reply (while the first of their replies awaits a commit, the
 * clock does not run: they wait for the server, not it for them). */
void clients_tick(struct server *S);

/* Fills placeholder 'r' of 'c' with 'frame' (owned from here; NULL: the
 * placeholder answers nothing) and wakes the client. May drop the client. */
void clients_fill(struct server *S, struct client *c, struct reply *r, char *frame, size_t len);

/* An error frame for 'req' (may be NULL), owned by the caller; NULL when
 * out of memory. */
char *clients_error_frame(struct server *S, const proto_req *req, const edit_error *err,
			  size_t *len);

/* Queues an error reply for 'req' (may be NULL) to 'c'. */
void clients_reply_error(struct server *S, struct client *c, const proto_req *req,
			 const edit_error *err);

/* Queues an error reply with 'code', 'field' and a formatted message. */
void clients_reply_code(struct server *S, struct client *c, const proto_req *req, int code,
			const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
