/*
 * cluster_internal.h: what the files of server/cluster/ share: the
 * cluster's state, a lease record, and the checked readers of what Redis
 * answers (which the unit test feeds hostile values).
 *
 * Private to server/cluster/: the public interface is cluster.h. Functions
 * here carry the prefix cl_.
 */
#ifndef RIGD_CLUSTER_INTERNAL_H
#define RIGD_CLUSTER_INTERNAL_H

#include "cluster.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLUSTER_SCENE_MAX 64         /* bytes of a scene name (SCENE_ID_MAX) */

/* Log levels of cluster_callbacks.log, as serve's. */
enum { CL_LOG_ERROR, CL_LOG_WARN, CL_LOG_INFO, CL_LOG_DEBUG };

/* One scene's lease as this process knows it. */
struct cl_lease {
	char scene[CLUSTER_SCENE_MAX + 1];
	int state;                   /* enum cluster_lease_state */
	int64_t token;               /* OWNED, OTHER */
	char owner[CLUSTER_ID_MAX];  /* OWNED, OTHER */
	uint64_t valid_until_ms;     /* OWNED: commits stop here (cl_now_ms) */
	bool wanted;                 /* ask for it while another holds it */
	bool in_flight;              /* an acquire or renewal awaits its reply */
	int64_t log_seq;             /* OWNED: the last seq of the log stream when
				      * taken; -1 until Redis said */
};

/* Command kinds of fence.c's commands (cl_send_cmd) among cluster.c's. */
enum { CL_CMD_PUBLISH = 5, CL_CMD_PROBE = 8, CL_CMD_WAIT = 9 };

/* fence.c: an append held back by RIGD_FAULT_APPEND "N:hold:MS". */
struct cl_held {
	char scene[CLUSTER_SCENE_MAX + 1];
	uint64_t seq;
	int64_t token;
	char *line;                  /* owned */
	size_t len;
	uint64_t send_ms;            /* sent then (cl_now_ms) */
};

/* fence.c: a batch appended while WAIT is on, awaiting WAIT's answer. */
struct cl_unrep {
	char scene[CLUSTER_SCENE_MAX + 1];
	uint64_t seq;
};

/* A scene whose log stream the reader follows. */
struct cl_follow {
	char scene[CLUSTER_SCENE_MAX + 1];
	char last[48];               /* the last entry id read ("0-0": none) */
	bool reset;                  /* read from the oldest entry again */
};

/* One live process of the last heartbeat. */
struct cl_proc {
	char id[CLUSTER_ID_MAX];
	char *url;                   /* owned */
	int leases;
};

struct redisAsyncContext;
struct uv_loop_s;
struct uv_timer_s;

struct cluster {
	char id[CLUSTER_ID_MAX];
	char advertise[CLUSTER_URL_MAX];
	char host[CLUSTER_HOST_MAX];
	int port;
	int lease_ms, timeout_ms;
	int log_keep;                /* entries a log stream keeps */
	cluster_callbacks cb;
	struct uv_loop_s *loop;
	struct uv_timer_s *timer;    /* the tick (allocated: closed after free) */
	struct redisAsyncContext *ac; /* NULL between connections */
	int state;                   /* enum cluster_state */
	bool freeing;
	uint64_t connect_ms;         /* when the current attempt started */
	uint64_t next_connect_ms;    /* when the next attempt may start */
	int backoff_ms;
	int n_out;                   /* commands awaiting replies */
	uint64_t wait_since_ms;      /* since when the oldest has waited (about) */
	uint64_t next_round_ms;      /* next heartbeat and renewals */
	struct cl_lease *leases;     /* sorted by scene */
	int n_leases, cap_leases;
	struct cl_proc *procs;       /* in the order of the heartbeat's answer */
	int n_procs, cap_procs;
	cluster_stats stats;
	/* forward.c: the second connection, which blocks in XREAD on this
	 * process's two streams (forwarded edits, answers to its own) */
	struct redisAsyncContext *rd;
	bool rd_up;                  /* connected, start ids known */
	uint64_t rd_connect_ms;      /* when the current attempt started */
	uint64_t rd_next_ms;         /* when the next attempt may start */
	uint64_t rd_waiting_ms;      /* since when the pending read waits; 0: none */
	char fwd_last[48], ans_last[48]; /* the last entry ids read */
	char events_last[48];        /* ... and of rigd:scene-events */
	char presence_last[48];      /* ... and of rigd:presence */
	struct cl_follow *follows;   /* scenes whose log stream is read */
	int n_follows, cap_follows;
	/* fence.c: WAIT for Redis replicas, and the test-only fault knob */
	int wait_n, wait_ms;         /* WAIT wait_n wait_ms after appends; 0: off */
	int unwaited;                /* appends sent since the last WAIT */
	struct cl_unrep *unrep;      /* appends answered, awaiting WAIT's answer */
	int n_unrep, cap_unrep;
	long fault_at;               /* RIGD_FAULT_APPEND: the append it acts on (1..) */
	int fault_kind;              /* 0 none, 1 unsent, 2 lose-answer, 3 hold */
	int fault_ms;                /* hold: how long */
	long n_appends;              /* appends asked for, for fault_at */
	struct cl_held *held;        /* the append held back, or NULL */
};

/* A monotonic clock in milliseconds. */
uint64_t cl_now_ms(void);

/* Milliseconds from 'then' to 'now', 0 when 'then' is later: a time taken
 * after a tick read its 'now' (a connection started in that tick) must not
 * wrap around to an age of 2^64 ms and be timed out at once. */
static inline uint64_t cl_elapsed_ms(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* Logs one line through the callbacks (printf format). */
void cl_log(struct cluster *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Whether 's' is 1..max-1 characters of [A-Za-z0-9_.:-]. */
bool cl_id_valid(const char *s, size_t max);

/* The value of field 'name' of stream entry 'f' (f1 v1 f2 v2 ...) when it
 * is there once, as a string without NUL; else NULL (absent, given twice,
 * not a string, or holding a NUL). */
struct redisReply;
const struct redisReply *cl_entry_field(const struct redisReply *f, const char *name);
/* The same as bytes: NULs allowed (a relayed call's arguments and body). */
const struct redisReply *cl_entry_bytes(const struct redisReply *f, const char *name);

/* Reads 'len' bytes of decimal digits (no sign, no leading zero, 1..18
 * digits) into *out. false for anything else; *out unchanged. */
bool cl_parse_token(const char *s, size_t len, int64_t *out);

/* Reads a lease value "ID TOKEN" into owner (CLUSTER_ID_MAX bytes) and
 * *token; false (both unchanged) for anything else. */
bool cl_parse_holder(const char *v, size_t len, char *owner, int64_t *token);

/* Reads a process entry "LEASES URL" (0..10^6 leases, a URL of 1 or more
 * printable ASCII characters without spaces, under CLUSTER_URL_MAX bytes)
 * for process 'id' and
 * appends it. 0; RIGD_E_BAD_FIELD for a bad id or entry; RIGD_E_NOMEM. */
int cl_procs_add(struct cluster *c, const char *id, const char *info, size_t len);

/* Forgets every process of the last heartbeat. */
void cl_procs_clear(struct cluster *c);

/* The lease record of 'scene', or NULL. */
struct cl_lease *cl_lease_find(const struct cluster *c, const char *scene);

/* One pass of the timer: connection attempts, the timeout, local expiry of
 * leases, and every lease_ms / 3 the heartbeat and the renewals. */
void cl_tick(struct cluster *c);

/* Sends one command on the main connection; its reply is only checked
 * (an error is logged and counted). 'lens' NULL: the arguments are
 * strings. 0, RIGD_E_UNAVAILABLE (not connected), RIGD_E_NOMEM. */
int cl_send(struct cluster *c, int argc, const char **argv, const size_t *lens);

/* The lease of 'l' is another's now (why: for the log). */
void cl_lease_lost(struct cluster *c, struct cl_lease *l, const char *why);

/* Sends a catalog command (catalog.c) whose reply goes to cl_scene_reply
 * with 'ref', 'scene' and 'dims'. 0, or RIGD_E_UNAVAILABLE / RIGD_E_NOMEM. */
int cl_send_scene(struct cluster *c, uint64_t ref, const char *scene, int dims, int argc,
		  const char **argv);
/* catalog.c: the reply to a catalog command (NULL: the connection was lost
 * before it came). */
void cl_scene_reply(struct cluster *c, uint64_t ref, const char *scene, int dims,
		    const void *reply);
/* catalog.c: one entry of rigd:scene-events (a redisReply array of fields);
 * false when it is not a rigd scene event. */
bool cl_take_scene_event(struct cluster *c, const void *fields);
/* catalog.c: the catalog's HGETALL answer and the tombstones', read when
 * the reader connects, handed to callbacks.catalog (entries of another
 * shape skipped and counted); false when either is not a list of pairs
 * (or out of memory). */
bool cl_take_catalog(struct cluster *c, const void *catalog, const void *tombs);
/* catalog.c: reads a catalog value "DIMS GEN" or "DIMS" (gen 0); false
 * for anything else, *dims and *gen unchanged. */
bool cl_parse_catalog_value(const char *v, size_t len, int *dims, int64_t *gen);
/* catalog.c: the script the reader runs when it connects (three keys:
 * cl_snapshot_keys), answering {sec, usec, last event id or "", catalog
 * pairs, tombstone pairs} of one instant. */
extern const char cl_snapshot_lua[];
extern const char *const cl_snapshot_keys[3];
/* presence.c: one entry of rigd:presence; false when it is not a rigd
 * presence entry. */
bool cl_take_presence(struct cluster *c, const void *fields);
/* catchup.c: a request entry asking for batches (exactly from, scene,
 * since), and an answer entry carrying one (exactly scene, seq, line,
 * more); false when the entry is not of that shape. */
bool cl_take_catchup_ask(struct cluster *c, const void *fields);
bool cl_take_catchup_line(struct cluster *c, const void *fields);
/* calls.c: a request entry relaying a call (exactly from, rid, scene,
 * kind, args, body) and an answer entry carrying an HTTP answer (exactly
 * rid, status, body); false when the entry is not of that shape. */
bool cl_take_call(struct cluster *c, const void *fields);
bool cl_take_reply(struct cluster *c, const void *fields);
/* forward.c: appends one entry of 'n_fields' fields to stream 'key' (trimmed
 * to about 10,000 entries, expiring a minute after its last). 0,
 * RIGD_E_UNAVAILABLE, RIGD_E_NOMEM. */
int cl_append(struct cluster *c, const char *key, const char **fields, const size_t *lens,
	      int n_fields);
/* Gives the lease of 'l' back if held, and drops its record. */
void cl_lease_drop(struct cluster *c, const char *scene);

/* forward.c: the reader connection's part of the timer (connect while the
 * main connection is up, drop a read that waits too long). */
void cl_reader_tick(struct cluster *c, uint64_t now);
/* Closes the reader connection at once (cluster_free). */
void cl_reader_close(struct cluster *c);

/* cluster.c: sends a command of fence.c's 'kind' whose reply goes back to
 * fence.c with 'scene' and 'seq'. 0, RIGD_E_UNAVAILABLE, RIGD_E_NOMEM. */
int cl_send_kind(struct cluster *c, int kind, const char *scene, uint64_t seq, int argc,
		 const char **argv, const size_t *lens);
/* cluster.c: cl_send_kind with the lease 'token' the reply is checked
 * against and 'lose_answer' (RIGD_FAULT_APPEND: the reply is taken as
 * lost, and the connection dropped). */
int cl_send_cmd(struct cluster *c, int kind, const char *scene, uint64_t seq, int64_t token,
		bool lose_answer, int argc, const char **argv, const size_t *lens);
/* fence.c: sends the fenced append of batch 'seq' of 'scene' with lease
 * token 'token' ('lose_answer': RIGD_FAULT_APPEND drops its answer with
 * the connection). 0, RIGD_E_UNAVAILABLE, RIGD_E_NOMEM. */
int cl_send_publish(struct cluster *c, const char *scene, uint64_t seq, int64_t token,
		    const char *line, size_t len, bool lose_answer);
/* fence.c: the reply to cluster_log_probe (NULL: lost). */
void cl_probe_reply(struct cluster *c, const char *scene, uint64_t seq, const void *reply);
/* fence.c: an append answered while WAIT is on: confirmed by the next
 * WAIT's answer. */
void cl_wait_note(struct cluster *c, const char *scene, uint64_t seq);
/* fence.c: WAIT's answer (NULL: lost): every append noted before it is
 * confirmed, or said short of replicas. */
void cl_wait_reply(struct cluster *c, const void *reply);
/* fence.c: the connection is gone: appends noted and not confirmed are
 * reported lost. */
void cl_wait_lost(struct cluster *c);
/* fence.c: reads RIGD_FAULT_APPEND (test-only; docs/deploy.md). */
void cl_fault_init(struct cluster *c);
/* fence.c: what RIGD_FAULT_APPEND does to the append about to be sent: 1
 * send it, 2 send it and lose its answer, 0 held back (sent later by
 * cl_fault_tick), RIGD_E_UNAVAILABLE not sent, RIGD_E_NOMEM. */
int cl_fault_publish(struct cluster *c, const char *scene, uint64_t seq, int64_t token,
		     const char *line, size_t len);
/* fence.c: sends a held append once its time has come. */
void cl_fault_tick(struct cluster *c, uint64_t now);
/* fence.c: frees what fence.c holds. */
void cl_fence_free(struct cluster *c);



#endif
