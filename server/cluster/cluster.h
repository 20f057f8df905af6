/*
 * cluster.h: several rigd processes on one Redis. The connection to Redis
 * (hiredis' asynchronous context on the process's libuv loop, reconnected
 * with backoff), the registry of live processes, one lease per scene (the
 * one process that may apply and commit the scene's edits), and the
 * streams: edits relayed to an owner and its answers, and each scene's
 * log stream, which the owner appends to (fenced by its token) and every
 * process reads; and the catalog of scenes, created and deleted across the
 * cluster (catalog.c).
 *
 * A lease is the Redis key rigd:lease:SCENE holding "PROCESS TOKEN", set
 * only when absent, with an expiry (cluster_config.lease_ms), by a script
 * that takes TOKEN from INCR rigd:fence:SCENE, so every new owner holds a
 * larger token than every owner before it (the fencing token). The owner
 * renews it every lease_ms / 3 by a script that extends the key only while
 * it still holds this process's token. A process holds a lease for itself
 * only until lease_ms * 3/4 after it sent its last renewal that succeeded:
 * it stops committing before the key can expire in Redis, whatever became
 * of the renewal (a paused process, a slow Redis), so two owners never
 * commit at the same time as long as clocks run at about the same rate.
 *
 * Scenes spread by "first to ask": a process asks for the lease of every
 * scene it is told of (cluster_want: serve tells it the scenes of its
 * database at start, and each scene a client subscribes to or edits), and
 * asks again at every renewal while another process holds it, so one of
 * the survivors takes over within about lease_ms of an owner's death.
 *
 * This folder is the only one that includes hiredis (and, through hiredis'
 * libuv adapter, uv.h for its own timer). It knows scenes only by name:
 * nothing here touches a scene, SQL, JSON or a socket of a client. Every
 * call runs on the loop's thread.
 */
#ifndef RIGD_CLUSTER_H
#define RIGD_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_ID_MAX 48           /* bytes of a process id with its NUL */
#define CLUSTER_URL_MAX 300         /* bytes of an advertised URL with its NUL */
#define CLUSTER_HOST_MAX 256        /* bytes of a Redis host name with its NUL */
#define CLUSTER_DEFAULT_LEASE_MS 3000
#define CLUSTER_DEFAULT_TIMEOUT_MS 2000

typedef struct cluster cluster;

#define CLUSTER_BODY_MAX (8u << 20)   /* bytes of a forwarded edit */
#define CLUSTER_LOG_KEEP 10000        /* entries a scene's log stream keeps (about) */
#define CLUSTER_ARGS_MAX (64u << 10)  /* bytes of a relayed call's arguments */

/* A request other than an edit batch relayed to a scene's owner
 * (cluster_call, callbacks.call): undo, redo, or an HTTP write. Strings
 * are borrowed. */
typedef struct cluster_call_info {
	const char *from;         /* the caller's id (callbacks.call only) */
	uint64_t rid;             /* the caller's number for it, >= 1 */
	const char *scene;        /* the scene it acts on */
	const char *kind;         /* 1..16 bytes of [a-z]: what it is */
	const char *args;         /* NUL-terminated strings one after the other */
	size_t args_len;          /* bytes of args, each NUL included */
	const char *body;         /* bytes (may hold NULs) */
	size_t body_len;
} cluster_call_info;

/* The answer to a forwarded edit (cluster_answer, callbacks.answer).
 * Strings are borrowed. */
typedef struct cluster_answer_info {
	uint64_t rid;             /* the forwarder's number for the request */
	const char *code;         /* "ok", or the error's wire name */
	int64_t seq;              /* ok: the batch's seq */
	long recomputed;          /* ok: matrices it made stale */
	int op;                   /* error: the op it names, or -1 */
	const char *field;        /* error: the field it names, or "" */
	const char *message;      /* error: what was wrong */
} cluster_answer_info;

/* The connection to Redis. */
enum cluster_state {
	CLUSTER_CONNECTING,   /* connecting (first time, or again after a loss) */
	CLUSTER_UP,           /* connected; commands answer */
	CLUSTER_DOWN,         /* lost; the next attempt is scheduled */
};

/* What this process knows of a scene's lease. */
enum cluster_lease_state {
	CLUSTER_LEASE_NONE,       /* never asked for, or lost with Redis */
	CLUSTER_LEASE_ASKING,     /* asked for; no answer yet */
	CLUSTER_LEASE_OWNED,      /* held by this process, valid now */
	CLUSTER_LEASE_OTHER,      /* held by another process ('owner') */
};

typedef struct cluster_config {
	const char *url;          /* "redis://HOST:PORT" (cluster_parse_url) */
	void *loop;               /* the uv_loop_t the process runs (net_event_loop) */
	const char *id;           /* this process's id, [A-Za-z0-9_.:-], < CLUSTER_ID_MAX */
	const char *advertise;    /* the URL clients reach this process at */
	int lease_ms;             /* 0: CLUSTER_DEFAULT_LEASE_MS */
	int log_keep;             /* entries a log stream keeps (exactly under
				     1000, else about); 0: CLUSTER_LOG_KEEP */
	int timeout_ms;           /* a command unanswered this long drops the
				     connection; 0: CLUSTER_DEFAULT_TIMEOUT_MS */
	int wait_replicas;        /* > 0: an append is confirmed only once WAIT
				     says this many Redis replicas have it */
	int wait_ms;              /* ...within this many ms (1..timeout_ms/2) */
} cluster_config;

/*
 * One name of the catalog as the reader found it when it connected: in the
 * catalog rigd:scenes ('dims' 2 or 3, 'gen' its incarnation or 0 when it
 * was recorded before incarnations), and/or tombstoned in rigd:scene-tombs
 * ('deleted_gen': the last incarnation of the name that was deleted; 0
 * none). Incarnations come from one counter, so a larger one is a later
 * creation.
 */
typedef struct cluster_catalog_entry {
	const char *scene;
	int dims;                 /* 2 or 3; 0: not in the catalog */
	int64_t gen;
	int64_t deleted_gen;
} cluster_catalog_entry;

/* What the process is told. ctx is passed back to every callback. */
typedef struct cluster_callbacks {
	void *ctx;
	/* The connection changed state (enum cluster_state). May be NULL. */
	void (*state)(void *ctx, int state);
	/* This process took (owned) or lost (!owned) the lease of scene 'name'
	 * with fencing token 'token'; called again, owned, once the end of the
	 * scene's log stream is known (cluster_lease_info.log_seq). May be
	 * NULL. */
	void (*lease)(void *ctx, const char *name, bool owned, int64_t token);
	/* One line for the log at 'level' (0 error, 1 warn, 2 info, 3 debug),
	 * without its newline. May be NULL. */
	void (*log)(void *ctx, int level, const char *line);
	/* Process 'from' forwards its request 'rid': the edit batch 'body'
	 * ('len' bytes of JSON, not checked here) of scene 'scene'. Answer it
	 * with cluster_answer. Strings are valid during the call. May be NULL. */
	void (*request)(void *ctx, const char *from, uint64_t rid, const char *scene,
			const char *body, size_t len);
	/* The answer to a request this process forwarded. May be NULL. */
	void (*answer)(void *ctx, const cluster_answer_info *a);
	/* Another process relays call 'k' (calls.c) to this process, the
	 * owner of its scene (not checked here). Answer it with cluster_answer
	 * or cluster_reply. Strings are valid during the call. May be NULL. */
	void (*call)(void *ctx, const cluster_call_info *k);
	/* The HTTP answer to call 'rid' this process relayed: 'status'
	 * (100..599) and 'body' ('len' bytes of text, not checked here). May
	 * be NULL. */
	void (*reply)(void *ctx, uint64_t rid, int status, const char *body, size_t len);
	/* The owner of scene 'name' (lease 'token') committed batch 'seq':
	 * 'line' is its log line ('len' bytes, NDJSON as GET .../log writes
	 * it, not checked here), from the scene's log stream. Lines come in
	 * stream order. May be NULL. */
	void (*log_line)(void *ctx, const char *name, uint64_t seq, int64_t token,
			 const char *line, size_t len);
	/* What became of cluster_publish of batch 'seq' of scene 'name': in
	 * the stream ('ok'), or not ('why': fenced, an error, or the
	 * connection lost before the answer, when it may be there or not).
	 * May be NULL. */
	void (*published)(void *ctx, const char *name, uint64_t seq, bool ok, const char *why);
	/* A scene was created ('dims' 2 or 3; 'gen' its incarnation, 0 for
	 * an event written before incarnations) or deleted (dims 0, gen 0) in
	 * the cluster, by process 'from' (this one too), read from the stream
	 * of scene events in the order Redis took them. May be NULL. */
	void (*scene_event)(void *ctx, const char *name, int dims, const char *from,
			    int64_t gen);
	/* What became of cluster_scene_create or cluster_scene_delete 'ref'
	 * ('dims' as asked: 2 or 3 for a create, 0 for a delete): 0 done;
	 * RIGD_E_SCENE_EXISTS (create: the cluster has the name already,
	 * with 'there' dims, 2 or 3); RIGD_E_UNAVAILABLE (Redis refused it
	 * or the connection was lost before it answered: it may have been
	 * done or not). 'gen': a create done, the scene's incarnation; a
	 * create refused, the incarnation the cluster has (0 unknown); else
	 * 0. May be NULL. */
	void (*scene_done)(void *ctx, uint64_t ref, const char *name, int rc, int dims,
			   int there, int64_t gen);
	/* Another process 'from' says, of its participant 'client' of scene
	 * 'scene': "presence" (msg: the presence message as a client sends it,
	 * 'len' bytes of JSON, not checked here) or "leave" (msg ""); or
	 * "sync" (scene and client "*"): it has just connected and asks for
	 * the presence of every participant again. May be NULL. */
	void (*presence)(void *ctx, const char *from, const char *kind, const char *scene,
			 const char *client, const char *msg, size_t len);
	/* The reader of the streams connected (the first time, or again after
	 * a loss). May be NULL. */
	void (*reader_up)(void *ctx);
	/* Process 'from' fell behind the log stream of scene 'scene' and asks
	 * this process (its owner or not) for the batches from seq 'since' on
	 * (answer with cluster_catchup_line those it holds). May be NULL. */
	void (*catchup_ask)(void *ctx, const char *from, const char *scene, uint64_t since);
	/* A process sends batch 'seq' of scene 'scene' that this process asked
	 * for ('line', its log line, not checked here); 'more': that process
	 * holds batches after it that it did not send yet. May be NULL. */
	void (*catchup_line)(void *ctx, const char *scene, uint64_t seq, const char *line,
			     size_t len, bool more);
	/* The reader connected (the first time, or again after a loss) and
	 * reads the stream of scene events from now on: 'v' is the catalog
	 * at that instant, 'n' names in name order (see
	 * cluster_catalog_entry), to reconcile this process's database with;
	 * the events that follow are those after it. Borrowed during the
	 * call. May be NULL. */
	void (*catalog)(void *ctx, const struct cluster_catalog_entry *v, int n);
	/* The answer to cluster_log_probe of batch 'seq' of scene 'name':
	 * 'last' the stream's last seq (0: empty; -1: no answer, the
	 * connection was lost or the reply was not of its shape), and the
	 * stream's entry at 'seq' ('line', 'len' bytes, appended with lease
	 * token 'token'), or line NULL when the stream holds no entry of that
	 * seq. May be NULL. */
	void (*probed)(void *ctx, const char *name, uint64_t seq, int64_t last, int64_t token,
		       const char *line, size_t len);
	/* With cluster_config.wait_replicas: batch 'seq' of scene 'name' is in
	 * the log stream, but WAIT counted only 'got' replicas having it
	 * (instead of published ok). May be NULL. */
	void (*unreplicated)(void *ctx, const char *name, uint64_t seq, int got);
} cluster_callbacks;

/* One lease as this process sees it (cluster_leases). */
typedef struct cluster_lease_info {
	const char *scene;        /* borrowed: valid until the next cluster call */
	int state;                /* enum cluster_lease_state */
	int64_t token;            /* OWNED and OTHER: the fencing token; else 0 */
	const char *owner;        /* OWNED and OTHER: the holder's id; else "" */
	int64_t valid_ms;         /* OWNED: how long it is still valid here */
	int64_t log_seq;          /* OWNED: the last seq in the scene's log stream
				     when the lease was taken (0: none), which
				     this process must have before it commits;
				     -1 while Redis has not said */
} cluster_lease_info;

/* One live process of the cluster (cluster_processes). */
typedef struct cluster_process_info {
	const char *id;           /* borrowed: valid until the next cluster call */
	const char *url;          /* the URL it advertises */
	int leases;               /* leases it held at its last heartbeat */
} cluster_process_info;

/* Counters and gauges for /metrics. */
typedef struct cluster_stats {
	int state;                /* enum cluster_state */
	uint64_t connects;        /* connections made */
	uint64_t disconnects;     /* connections lost (errors, timeouts) */
	uint64_t commands;        /* commands sent */
	uint64_t errors;          /* error replies and refused replies */
	uint64_t leases_taken;    /* leases this process took */
	uint64_t leases_lost;     /* leases it lost (another owner, expiry, Redis) */
	uint64_t published;       /* batches appended to log streams */
	uint64_t fenced;          /* appends refused: the lease was another's */
	uint64_t log_lines;       /* log stream entries read */
	int leases_owned;         /* gauge */
} cluster_stats;

/*
 * Reads "redis://HOST:PORT" (PORT 1..65535; "redis://HOST" means 6379)
 * into host (CLUSTER_HOST_MAX bytes) and *port. Returns 0, or
 * RIGD_E_BAD_FIELD with host and *port unchanged for anything else
 * (another scheme, a password, a path, a database number, an empty host).
 */
int cluster_parse_url(const char *url, char *host, int *port);

/*
 * Starts connecting to Redis on cfg->loop (the first attempt is made at
 * once; its outcome arrives through the callbacks). Strings are copied.
 * Returns NULL for a bad URL or id, or out of memory, with a one-line
 * reason in 'msg' (msglen bytes with its NUL).
 */
cluster *cluster_new(const cluster_config *cfg, const cluster_callbacks *cb, char *msg,
		     size_t msglen);

/*
 * Gives up the leases this process holds (deleted in Redis, when it
 * answers, so that another process takes over at once), closes the
 * connection and its timer, and frees everything. Its handles close on the
 * loop's next pass: run the loop once more before closing it. Accepts NULL.
 */
void cluster_free(cluster *c);

/* This process's id. */
const char *cluster_id(const cluster *c);

/* The connection's state (enum cluster_state). */
int cluster_state(const cluster *c);

/*
 * Asks for the lease of 'scene' (a valid scene name) if this process does
 * not hold it, now when connected (else once the connection is up), and at
 * every renewal after that while another process holds it. Returns the
 * lease's state as it is now (enum cluster_lease_state), or RIGD_E_NOMEM.
 */
int cluster_want(cluster *c, const char *scene);

/*
 * Whether this process may commit an edit of 'scene' now: it holds the
 * lease and its last renewal is recent enough (see above). *token (may be
 * NULL) gets the fencing token when it does.
 */
bool cluster_owns(const cluster *c, const char *scene, int64_t *token);

/* Fills *out (owner "" when unknown) with what this process knows of the
 * lease of 'scene'. */
void cluster_lease_of(const cluster *c, const char *scene, cluster_lease_info *out);

/* The URL that process 'id' advertises, or NULL when it is not known to be
 * live. Borrowed: valid until the next cluster call. */
const char *cluster_process_url(const cluster *c, const char *id);

/* Fills up to 'cap' entries of 'out' with the leases this process knows of,
 * in scene name order, and returns their number. */
int cluster_leases(const cluster *c, cluster_lease_info *out, int cap);

/* Fills up to 'cap' entries of 'out' with the live processes of the last
 * heartbeat (this one included), in the order of their heartbeats' expiry,
 * and returns their number. */
int cluster_processes(const cluster *c, cluster_process_info *out, int cap);

/* The counters. */
void cluster_get_stats(const cluster *c, cluster_stats *out);

/*
 * Relays call 'k' (k->from is ignored: this process's id is sent) to
 * process 'owner' through its request stream, like cluster_forward: an
 * entry of exactly from, rid, scene, kind, args and body. 0 once sent,
 * RIGD_E_TOO_LARGE (a body over CLUSTER_BODY_MAX, args over
 * CLUSTER_ARGS_MAX), RIGD_E_BAD_FIELD (a kind that is not 1..16 bytes of
 * [a-z], rid 0), RIGD_E_BAD_ID, RIGD_E_UNAVAILABLE, RIGD_E_NOMEM.
 */
int cluster_call(cluster *c, const char *owner, const cluster_call_info *k);

/*
 * Answers call 'rid' of process 'to' with an HTTP answer: 'status'
 * (100..599) and 'body' ('len' bytes, at most CLUSTER_BODY_MAX), an entry
 * of exactly rid, status and body of its answer stream. 0 once sent,
 * RIGD_E_TOO_LARGE, RIGD_E_BAD_FIELD, RIGD_E_BAD_ID, RIGD_E_UNAVAILABLE,
 * RIGD_E_NOMEM.
 */
int cluster_reply(cluster *c, const char *to, uint64_t rid, int status, const char *body,
		  size_t len);

/*
 * Forwards an edit of 'scene' to process 'owner' through its request stream
 * (rigd:fwd:OWNER, trimmed to about 10,000 entries, expiring a minute after
 * its last entry): 'body' is the batch's JSON ('len' bytes, at most
 * CLUSTER_BODY_MAX), 'rid' this process's number for it, which the answer
 * carries back. 0 once sent (the answer may never come: the caller times
 * out), RIGD_E_UNAVAILABLE when Redis is not connected, RIGD_E_TOO_LARGE,
 * RIGD_E_BAD_ID for an owner that is not an id, RIGD_E_NOMEM.
 */
int cluster_forward(cluster *c, const char *owner, uint64_t rid, const char *scene,
		    const char *body, size_t len);

/*
 * Appends committed batch 'seq' of scene 'scene' ('line', its log line of
 * 'len' bytes) to the scene's log stream rigd:log:SCENE (trimmed to about
 * CLUSTER_LOG_KEEP entries), by a script that appends only while this
 * process holds the scene's lease with the token it thinks it holds: a
 * process whose lease was taken over can never append (it then loses the
 * lease at once, and says so in the log), and only as the seq that follows
 * the stream's last entry (an empty stream takes any seq), so the stream's
 * seqs stay gapless and never repeat. What became of it comes through
 * callbacks.published (with cluster_config.wait_replicas, after the next
 * WAIT's answer). 0 once sent, RIGD_E_UNAVAILABLE (not connected, or the
 * lease is not held here), RIGD_E_TOO_LARGE, RIGD_E_NOMEM.
 */
int cluster_publish(cluster *c, const char *scene, uint64_t seq, const char *line, size_t len);

/*
 * Asks what the log stream of scene 'scene' holds at seq 'seq' and where it
 * ends (callbacks.probed): a process whose append of a committed batch was
 * not confirmed settles it against the stream. 0 once sent,
 * RIGD_E_UNAVAILABLE, RIGD_E_NOMEM.
 */
int cluster_log_probe(cluster *c, const char *scene, uint64_t seq);

/*
 * With cluster_config.wait_replicas, sends WAIT after the appends sent
 * since the last one (on the connection that sent them): their
 * callbacks.published comes with its answer. Nothing to do otherwise. 0,
 * RIGD_E_UNAVAILABLE, RIGD_E_NOMEM.
 */
int cluster_wait_replicas(cluster *c);

/*
 * With cluster_config.wait_replicas: batch 'seq' of scene 'scene', which
 * the stream holds already (a resend of it), is confirmed again by a WAIT
 * (callbacks.published or callbacks.unreplicated), after a write of its
 * own (the key rigd:wait-mark:ID, expiring after a minute), so that WAIT
 * counts replicas past the batch's append whichever connection made it.
 * 0 once sent;
 * RIGD_E_UNAVAILABLE (off, or not connected), RIGD_E_NOMEM.
 */
int cluster_wait_for(cluster *c, const char *scene, uint64_t seq);

/* Reads the log stream of scene 'scene' from now on (callbacks.log_line),
 * from its oldest retained entry the first time; 'again' reads it from
 * the oldest retained entry once more (after a failed commit), from the
 * next read on. Not to be called from callbacks.log_line. 0 or
 * RIGD_E_NOMEM. */
int cluster_follow(cluster *c, const char *scene, bool again);

/* Answers a forwarded request of process 'to' through its answer stream
 * (rigd:ans:TO, trimmed and expiring as above). 0 once sent,
 * RIGD_E_UNAVAILABLE, RIGD_E_BAD_ID, RIGD_E_NOMEM. */
int cluster_answer(cluster *c, const char *to, const cluster_answer_info *a);

/*
 * Creates scene 'name' ('dims' 2 or 3) in the cluster: one script adds it
 * to the catalog rigd:scenes (a hash of name to "DIMS GEN", GEN its new
 * incarnation from the counter rigd:scene-gen) only when the name is
 * absent there, and then appends a create event to rigd:scene-events, which
 * every process reads (callbacks.scene_event). The answer comes through
 * callbacks.scene_done with 'ref'. 0 once sent, RIGD_E_UNAVAILABLE when
 * Redis is not connected, RIGD_E_NOMEM.
 */
int cluster_scene_create(cluster *c, uint64_t ref, const char *name, int dims);

/*
 * Deletes scene 'name' in the cluster: one script removes it from the
 * catalog (its incarnation kept as the name's tombstone in the hash
 * rigd:scene-tombs), deletes its log stream and its lease (its fencing counter stays,
 * so tokens keep growing if the name comes back), and appends a delete
 * event. Answered as cluster_scene_create. 0, RIGD_E_UNAVAILABLE,
 * RIGD_E_NOMEM.
 */
int cluster_scene_delete(cluster *c, uint64_t ref, const char *name);

/*
 * Records scene 'name' ('dims') of this process's database in the catalog
 * when the name is absent there, under incarnation 'gen' (the one its copy
 * has; 0: a new one), unless that incarnation was deleted meanwhile; a
 * create event with the incarnation is appended then, so that every
 * process (this one too) learns it. 0 once sent, RIGD_E_UNAVAILABLE when
 * not connected, RIGD_E_NOMEM.
 */
int cluster_scene_known(cluster *c, const char *name, int dims, int64_t gen);

/*
 * Appends to the cluster's presence stream rigd:presence (trimmed to about
 * 1,000 entries): 'kind' "presence" (msg: the participant's presence
 * message, 'len' bytes), "leave" (msg "") of participant 'client' of
 * 'scene', or "sync" (scene and client "*", msg ""). Every other process
 * reads it (callbacks.presence). 0 once sent, RIGD_E_UNAVAILABLE when not
 * connected, RIGD_E_TOO_LARGE (over 1 MiB), RIGD_E_NOMEM.
 */
int cluster_presence_send(cluster *c, const char *kind, const char *scene, const char *client,
			  const char *msg, size_t len);

/*
 * Asks process 'owner' (any live process: the owner of 'scene' or another
 * whose copy may hold them) for the batches of 'scene' from seq 'since' on,
 * through its request stream. 0 once sent, RIGD_E_UNAVAILABLE,
 * RIGD_E_BAD_ID, RIGD_E_NOMEM.
 */
int cluster_catchup_ask(cluster *c, const char *owner, const char *scene, uint64_t since);

/*
 * Sends batch 'seq' of 'scene' ('line', 'len' bytes) to process 'to',
 * which asked for it, through its answer stream; 'more' when more batches
 * follow that this call does not send. 0 once sent, RIGD_E_UNAVAILABLE,
 * RIGD_E_BAD_ID, RIGD_E_TOO_LARGE, RIGD_E_NOMEM.
 */
int cluster_catchup_line(cluster *c, const char *to, const char *scene, uint64_t seq,
			 const char *line, size_t len, bool more);

/* Forgets scene 'name' (deleted): no more lease asked for (one held is
 * given back) and its log stream no longer read. */
void cluster_forget(cluster *c, const char *name);

/* The name of a state for people and JSON ("connecting", "up", "down";
 * "none", "asking", "owned", "other" for a lease). */
const char *cluster_state_name(int state);
const char *cluster_lease_state_name(int state);

#endif
