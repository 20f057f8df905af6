/*
 * serve.c: the rigd server (see serve.h and docs/protocol.md).
 *
 * Everything runs on the one thread that runs net_run. A loop turn goes:
 *
 *   net delivers messages and requests  -> edits, undos and redos are
 *                                          decoded and submitted to the
 *                                          engine at once (applied in
 *                                          memory); everything else that
 *                                          reads or changes scenes waits
 *   net calls turn() (an lws_sul timer  -> engine_commit once for all the
 *   of 0 us, run after the events of       batches, then acks (or
 *   this service pass)                     "storage" errors), world matrices
 *                                          brought up to date once per
 *                                          touched scene, one journal entry
 *                                          per touched scene, then the
 *                                          waiting reads, subscribes,
 *                                          creates, deletes and imports
 *   net asks for frames when sockets    -> replies first (in request
 *   can take them                          order), then per subscription
 *                                          one update from the client's
 *                                          cursor to the latest seq, or a
 *                                          snapshot
 *
 * No frame is ever built from a scene while batches await their commit, so
 * nobody sees an edit that might still be rolled back.
 *
 * Slow clients: a subscription is a cursor (the seq the client has), not a
 * queue of frames. A client's update is built when its socket can take it,
 * from the scene's journal (which nodes each recent turn recomputed,
 * changed or removed), so it carries the latest matrices of everything that
 * changed since its cursor; a client older than the journal gets a
 * snapshot. Replies (acks, errors, presence, join/leave) are small and are
 * queued per client up to a byte cap; a client that lets its queue overflow
 * is closed with 1008. Memory per client is therefore bounded however slowly
 * it reads.
 *
 * This file never includes libwebsockets.h, cJSON.h or sqlite3.h.
 */
#include "config.h"
#include "serve.h"

#include "codec/gltf.h"
#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "core/sha256.h"
#include "engine/engine.h"
#include "net/net.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define REPLY_QUEUE_MAX_COUNT 65536      /* replies queued per client */
#define JOURNAL_TURN_MAX_IDS 8192        /* a bigger turn restarts the journal */
#define JOURNAL_MAX_IDS 131072           /* ids kept per scene (about 8 MB) */
#define CLIENT_ID_MAX 32


/* ---- types ---- */

/* One queued frame for one client. */
struct reply {
	struct reply *next;
	char *frame;                 /* net_frame_head() + len bytes; NULL: none */
	size_t len;
	bool pending;                /* waits for this turn to fill it */
	bool presence;               /* coalescible: a newer presence replaces it */
	char key[SCENE_ID_MAX + CLIENT_ID_MAX + 2]; /* presence: scene '/' client */
};

struct sub {
	char scene[SCENE_ID_MAX + 1];
	int64_t cursor;              /* the seq the client has; -1: owes a snapshot */
	bool peers_pending;          /* after the snapshot: who else is here */
};

struct client {
	uint64_t conn;
	char id[CLIENT_ID_MAX];      /* "c" + boot id + "-" + counter */
	char *name;                  /* display name from its last presence */
	struct sub *subs;
	int n_subs, cap_subs;
	int next_sub;                /* round robin over subscriptions */
	struct reply *head, *tail;
	size_t queued_bytes;
	int queued;
	bool dropped;                /* closed for overflow; ignore its input */
	bool wake_after_turn;        /* was writable while a turn was open */
	/* access control (docs/security.md) */
	bool authed;                 /* 'tok' holds the hash of a known token */
	unsigned char tok[SHA256_LEN];
	int principal;               /* the token entry whose bucket it shares */
	double bucket, bucket_t;     /* messages it may send now; when refilled */
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
	double bucket, bucket_t;
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
};

struct idlist {
	edit_id *v;
	int n, cap;
};

struct presence {
	uint64_t conn;
	edit_id *selection;
	int n_selection;
};

struct sstate {
	char name[SCENE_ID_MAX + 1];
	struct jentry *ring;         /* journal, oldest at 'head' */
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
	/* this turn */
	bool touched;
	int64_t turn_from;
	struct idlist turn_changed, turn_removed;
	struct idlist turn_roots;
	bool turn_lost;              /* a change could not be noted: snapshots */
};

/* A batch submitted this turn, answered when the turn commits. */
struct pending {
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
};

enum deferred_kind { D_SUBSCRIBE, D_UNSUBSCRIBE, D_HTTP };

/* Work that reads or changes scenes outside a batch: done after the commit. */
struct deferred {
	struct deferred *next;
	int kind;
	uint64_t conn;
	struct reply *reply;
	proto_req req;
	char scene[SCENE_ID_MAX + 1];
	/* D_HTTP: a copy of the request */
	int method;
	char *path;
	char *args[NET_MAX_ARGS];
	int n_args;
	char *body;
	size_t body_len;
	bool authed;                 /* D_HTTP with tokens: the caller's token */
	unsigned char tok[SHA256_LEN];
};

/* Prometheus histogram of commit latency. */
#define N_BUCKETS 12
static const double bucket_s[N_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
					    0.01, 0.025, 0.05, 0.1, 0.25, 1.0};

struct metrics {
	uint64_t batches_ok, batches_failed, ops, recomputed;
	uint64_t commits, commit_failures;
	uint64_t commit_bucket[N_BUCKETS + 1];
	double commit_sum_s;
	uint64_t updates_sent, snapshots_sent, updates_coalesced;
	uint64_t replies_sent, presence_coalesced, clients_dropped;
	uint64_t ws_messages, http_api_requests;
	uint64_t rate_limited, unauthorized, forbidden;
};

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
	struct sstate **scenes;
	int n_scenes, cap_scenes;
	struct pending *pend;
	int n_pend, cap_pend;
	struct deferred *dhead, *dtail;
	uint64_t *wake;              /* clients to wake when the turn ends */
	int n_wake, cap_wake;
	struct metrics m;
	size_t head;                 /* net_frame_head() */
	double started;
	struct token *tokens;        /* none: access control is off (loopback) */
	int n_tokens, cap_tokens;
};

static volatile sig_atomic_t got_signal;
static net *signal_net;

/* ---- utilities ---- */

static int log_level = LOG_WARN;

static void logf_(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(int level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	va_list ap;

	if (level > log_level)
		return;
	fprintf(stderr, "rigd: %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xrealloc_array(void *p, int *cap, int need, size_t size)
{
	int ncap;
	void *q;

	if (need <= *cap)
		return p;
	ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	q = realloc(p, (size_t)ncap * size);
	if (q)
		*cap = ncap;
	return q;
}

static int idlist_add(struct idlist *l, const char *id)
{
	edit_id *v = xrealloc_array(l->v, &l->cap, l->n + 1, sizeof(edit_id));

	if (!v)
		return RIGD_E_NOMEM;
	l->v = v;
	snprintf(l->v[l->n++].s, sizeof(l->v[0].s), "%s", id);
	return 0;
}

static void idlist_free(struct idlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(((const edit_id *)a)->s, ((const edit_id *)b)->s);
}

/* Sorts and removes duplicates. */
static void idlist_unique(struct idlist *l)
{
	int w = 0;

	if (l->n < 2)
		return;
	qsort(l->v, (size_t)l->n, sizeof(edit_id), cmp_id);
	for (int i = 0; i < l->n; i++)
		if (w == 0 || strcmp(l->v[w - 1].s, l->v[i].s) != 0)
			l->v[w++] = l->v[i];
	l->n = w;
}

/* A frame (with net's head room) from a proto_buf; the buffer is emptied. */
static char *take_frame(proto_buf *b, size_t *len)
{
	*len = b->len;
	return proto_buf_take(b);
}

/* ---- access control ----
 *
 * Tokens are kept as SHA-256 digests: a presented token is hashed and its
 * digest compared with every entry, byte by byte without an early exit, so
 * neither the secrets nor (by timing) their prefixes can be read back from
 * the process. With no token configured, access control is off and rigd
 * listens on loopback only (serve_main).
 */

static const char *const role_names[] = {"none", "viewer", "editor", "admin"};

static int hex_digit(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0'
	       : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
	       : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
					 : -1;
}

/*
 * Adds a token: 'secret' is the token itself (TOKEN_MIN..TOKEN_MAX visible
 * ASCII characters) or "sha256:" and the 64 hex digits of its digest (what
 * rigd --hash-token prints, for files that should hold no secret). 0, or -1
 * with the reason in 'why'.
 */
static int token_add(struct server *S, int role, const char *scene_name, const char *secret,
		     char *why, size_t cap)
{
	struct token t;
	size_t len = strlen(secret);

	memset(&t, 0, sizeof(t));
	if (strncmp(secret, "sha256:", 7) == 0) {
		if (len != 7 + 2 * SHA256_LEN) {
			snprintf(why, cap, "sha256: needs 64 hex digits");
			return -1;
		}
		for (int i = 0; i < SHA256_LEN; i++) {
			int hi = hex_digit(secret[7 + 2 * i]), lo = hex_digit(secret[8 + 2 * i]);

			if (hi < 0 || lo < 0) {
				snprintf(why, cap, "sha256: needs 64 hex digits");
				return -1;
			}
			t.hash[i] = (unsigned char)(hi << 4 | lo);
		}
	} else {
		if (len < TOKEN_MIN || len > TOKEN_MAX) {
			snprintf(why, cap, "a token is %d to %d characters", TOKEN_MIN, TOKEN_MAX);
			return -1;
		}
		for (size_t i = 0; i < len; i++)
			if (secret[i] < 0x21 || secret[i] > 0x7e) {
				snprintf(why, cap, "a token is visible ASCII characters, no spaces");
				return -1;
			}
		sha256_digest(secret, len, t.hash);
	}
	if ((strcmp(scene_name, "*") != 0 && !scene_id_valid(scene_name)) ||
	    strlen(scene_name) >= sizeof(t.scene)) {
		snprintf(why, cap, "'%.70s' is not a scene name or *", scene_name);
		return -1;
	}
	memcpy(t.scene, scene_name, strlen(scene_name) + 1);
	t.role = role;
	t.principal = S->n_tokens;
	for (int i = 0; i < S->n_tokens; i++)
		if (memcmp(S->tokens[i].hash, t.hash, SHA256_LEN) == 0) {
			t.principal = S->tokens[i].principal;
			break;
		}
	{
		struct token *v = xrealloc_array(S->tokens, &S->cap_tokens, S->n_tokens + 1,
						 sizeof(*v));
		if (!v) {
			snprintf(why, cap, "out of memory");
			return -1;
		}
		S->tokens = v;
	}
	S->tokens[S->n_tokens++] = t;
	return 0;
}

/* "ROLE:SCENE:TOKEN" (the token may contain ':'). 0, or -1 with 'why'. */
static int token_spec(struct server *S, const char *spec, char *why, size_t cap)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char role[16], sname[SCENE_ID_MAX + 2];
	int r = -1;

	if (!c1 || !c2 || (size_t)(c1 - spec) >= sizeof(role) ||
	    (size_t)(c2 - c1 - 1) >= sizeof(sname)) {
		snprintf(why, cap, "expected ROLE:SCENE:TOKEN");
		return -1;
	}
	memcpy(role, spec, (size_t)(c1 - spec));
	role[c1 - spec] = '\0';
	memcpy(sname, c1 + 1, (size_t)(c2 - c1 - 1));
	sname[c2 - c1 - 1] = '\0';
	for (int i = ROLE_VIEWER; i <= ROLE_ADMIN; i++)
		if (strcmp(role, role_names[i]) == 0)
			r = i;
	if (r < 0) {
		snprintf(why, cap, "role '%s' is not viewer, editor or admin", role);
		return -1;
	}
	if (r == ROLE_ADMIN && strcmp(sname, "*") != 0) {
		snprintf(why, cap, "an admin token is for every scene: admin:*:TOKEN");
		return -1;
	}
	return token_add(S, r, sname, c2 + 1, why, cap);
}

/* One ROLE:SCENE:TOKEN a line; blank lines and lines from '#' are skipped.
 * 0, or -1 after printing what was wrong. */
static int tokens_load_file(struct server *S, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], why[128];
	int lineno = 0, rc = 0;

	if (!f) {
		fprintf(stderr, "rigd: --tokens %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *p = line;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
				   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		if (token_spec(S, p, why, sizeof(why)) != 0) {
			fprintf(stderr, "rigd: %s:%d: %s\n", path, lineno, why);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * The highest role the token with digest 'hash' has on 'scene' (NULL: on
 * any scene), ROLE_NONE when it has none there, or -1 when no such token is
 * configured. *principal (may be NULL) gets its bucket's entry.
 */
static int role_for(const struct server *S, const unsigned char *hash, const char *scene_name,
		    int *principal)
{
	int best = -1;

	for (int i = 0; i < S->n_tokens; i++) {
		const struct token *t = &S->tokens[i];
		unsigned diff = 0;
		int r = ROLE_NONE;

		for (int k = 0; k < SHA256_LEN; k++)
			diff |= (unsigned)(t->hash[k] ^ hash[k]);
		if (diff)
			continue;
		if (principal)
			*principal = t->principal;
		if (t->role == ROLE_ADMIN || !scene_name || strcmp(t->scene, "*") == 0 ||
		    strcmp(t->scene, scene_name) == 0)
			r = t->role;
		if (r > best)
			best = r;
	}
	return best;
}

/* The token of an "Authorization: Bearer TOKEN" header, hashed into 'hash'.
 * False when there is no such header. */
static bool bearer_hash(const char *header, unsigned char hash[SHA256_LEN])
{
	size_t len;

	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	header += 7;
	while (*header == ' ')
		header++;
	len = strlen(header);
	while (len > 0 && header[len - 1] == ' ')
		len--;
	if (len == 0 || len > TOKEN_MAX)
		return false;
	sha256_digest(header, len, hash);
	return true;
}

/*
 * A token bucket of 'rate' per second holding at most one second's worth:
 * refills it to 'now' and takes one. False (nothing taken) when empty.
 */
static bool bucket_take(double *bucket, double *refilled, int rate, double now)
{
	if (rate <= 0)
		return true;
	if (*refilled == 0)
		*bucket = rate;
	else
		*bucket += (now - *refilled) * rate;
	if (*bucket > rate)
		*bucket = rate;
	*refilled = now;
	if (*bucket < 1)
		return false;
	*bucket -= 1;
	return true;
}

/* Milliseconds until a bucket of 'rate' holds one again. */
static int bucket_wait_ms(double bucket, int rate)
{
	double ms = bucket >= 1 || rate <= 0 ? 0 : (1 - bucket) * 1000.0 / rate;

	return (int)ms + 1;
}

/* ---- clients ---- */

static struct client *client_get(struct server *S, uint64_t conn)
{
	uint32_t slot = (uint32_t)(conn & 0xffffffffu);

	if (slot >= (uint32_t)S->cap_clients || !S->clients[slot] || S->clients[slot]->conn != conn)
		return NULL;
	return S->clients[slot];
}

static void reply_free(struct reply *r)
{
	if (r) {
		free(r->frame);
		free(r);
	}
}

static void queue_free(struct client *c)
{
	while (c->head) {
		struct reply *r = c->head;

		c->head = r->next;
		reply_free(r);
	}
	c->tail = NULL;
	c->queued = 0;
	c->queued_bytes = 0;
}

static void pending_forget_client(struct server *S, struct client *c);

/* Closes a client whose queue overflowed: it did not read its replies. */
static void client_drop(struct server *S, struct client *c)
{
	if (c->dropped)
		return;
	logf_(LOG_WARN, "client %s: reply queue over %zu bytes; closing it (1008)", c->id,
	      S->o.reply_queue);
	c->dropped = true;
	S->m.clients_dropped++;
	pending_forget_client(S, c);
	queue_free(c);
	net_ws_close(S->n, c->conn, NET_CLOSE_POLICY, "reply queue overflow");
}

/*
 * Appends a reply to the client's queue: 'frame' (may be NULL for a
 * placeholder) is owned by the queue from here on. Returns the entry, or
 * NULL when the client was dropped for overflow or memory ran out (the frame
 * is freed then).
 */
static struct reply *enqueue(struct server *S, struct client *c, char *frame, size_t len,
			     bool pending)
{
	struct reply *r;

	if (c->dropped) {
		free(frame);
		return NULL;
	}
	if (c->queued_bytes + len > S->o.reply_queue || c->queued >= REPLY_QUEUE_MAX_COUNT) {
		free(frame);
		client_drop(S, c);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(frame);
		client_drop(S, c);
		return NULL;
	}
	r->frame = frame;
	r->len = len;
	r->pending = pending;
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	c->queued++;
	c->queued_bytes += len;
	if (!pending && frame)
		net_ws_wake(S->n, c->conn);
	return r;
}

/* Fills a placeholder (taking ownership of 'frame'). */
static void fill(struct server *S, struct client *c, struct reply *r, char *frame, size_t len)
{
	r->frame = frame;
	r->len = len;
	r->pending = false;
	c->queued_bytes += len;
	if (c->queued_bytes > S->o.reply_queue) {
		client_drop(S, c);
		return;
	}
	net_ws_wake(S->n, c->conn);
}

/* An error frame for 'req' (may be NULL). NULL when out of memory. */
static char *error_frame(struct server *S, const proto_req *req, const edit_error *err,
			 size_t *len)
{
	proto_buf b;

	proto_buf_init(&b, S->head);
	if (proto_encode_error(&b, req, err)) {
		proto_buf_release(&b);
		return NULL;
	}
	return take_frame(&b, len);
}

static void reply_error(struct server *S, struct client *c, const proto_req *req,
			const edit_error *err)
{
	size_t len;
	char *f = error_frame(S, req, err, &len);

	if (f)
		enqueue(S, c, f, len, false);
}

static void reply_error_code(struct server *S, struct client *c, const proto_req *req, int code,
			     const char *field, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void reply_error_code(struct server *S, struct client *c, const proto_req *req, int code,
			     const char *field, const char *fmt, ...)
{
	edit_error err;
	char msg[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(&err, code, -1, field, "%s", msg);
	reply_error(S, c, req, &err);
}

/* ---- scenes' serving state ---- */

static void jentry_free(struct jentry *j)
{
	free(j->roots);
	free(j->changed);
	free(j->removed);
	memset(j, 0, sizeof(*j));
}

static void journal_clear(struct server *S, struct sstate *st, int64_t epoch)
{
	free(st->cache);
	st->cache = NULL;
	for (int i = 0; i < st->n; i++)
		jentry_free(&st->ring[(st->head + i) % S->o.journal]);
	st->head = 0;
	st->n = 0;
	st->epoch = epoch;
	st->journal_ids = 0;
}

/* Drops the oldest entry; clients older than the new epoch get snapshots. */
static void journal_drop_oldest(struct server *S, struct sstate *st)
{
	struct jentry *j = &st->ring[st->head];

	st->epoch = j->to;
	st->journal_ids -= j->n_roots + j->n_changed + j->n_removed;
	jentry_free(j);
	st->head = (st->head + 1) % S->o.journal;
	st->n--;
}

static struct sstate *sstate_find(struct server *S, const char *name)
{
	for (int i = 0; i < S->n_scenes; i++)
		if (strcmp(S->scenes[i]->name, name) == 0)
			return S->scenes[i];
	return NULL;
}

/* The serving state of an existing scene, made on first use. */
static struct sstate *sstate_get(struct server *S, const char *name)
{
	struct sstate *st = sstate_find(S, name);
	struct sstate **v;
	int64_t seq;

	if (st)
		return st;
	seq = engine_seq(S->e, name);
	if (seq < 0)
		return NULL;
	v = xrealloc_array(S->scenes, &S->cap_scenes, S->n_scenes + 1, sizeof(*v));
	if (!v)
		return NULL;
	S->scenes = v;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->ring = calloc((size_t)S->o.journal, sizeof(struct jentry));
	if (!st->ring) {
		free(st);
		return NULL;
	}
	snprintf(st->name, sizeof(st->name), "%s", name);
	st->epoch = seq;
	S->scenes[S->n_scenes++] = st;
	return st;
}

/* Forgets the presence of 'conn'; true when it had one. */
static bool presence_remove(struct sstate *st, uint64_t conn)
{
	for (int i = 0; i < st->n_pres; i++)
		if (st->pres[i].conn == conn) {
			free(st->pres[i].selection);
			st->pres[i] = st->pres[--st->n_pres];
			return true;
		}
	return false;
}

static void sstate_free(struct server *S, struct sstate *st)
{
	journal_clear(S, st, 0);
	free(st->cache);
	free(st->ring);
	free(st->subs);
	for (int i = 0; i < st->n_pres; i++)
		free(st->pres[i].selection);
	free(st->pres);
	idlist_free(&st->turn_changed);
	idlist_free(&st->turn_removed);
	idlist_free(&st->turn_roots);
	free(st);
}

static void sstate_remove(struct server *S, struct sstate *st)
{
	for (int i = 0; i < S->n_scenes; i++)
		if (S->scenes[i] == st) {
			S->scenes[i] = S->scenes[--S->n_scenes];
			break;
		}
	sstate_free(S, st);
}

static struct sub *sub_find(struct client *c, const char *scene_name)
{
	for (int i = 0; i < c->n_subs; i++)
		if (strcmp(c->subs[i].scene, scene_name) == 0)
			return &c->subs[i];
	return NULL;
}

/* Sends 'frame' (owned; consumed) to every subscriber of 'st' but 'except'. */
static void broadcast_reply(struct server *S, struct sstate *st, uint64_t except,
			    const char *frame, size_t len, const char *presence_key)
{
	for (int i = 0; i < st->n_subs; i++) {
		struct client *c = client_get(S, st->subs[i]);
		struct reply *r;
		char *copy;

		if (!c || c->conn == except || c->dropped)
			continue;
		if (presence_key) {
			/* Coalesce: the peer's older presence, not yet sent, is
			 * replaced in place. */
			for (r = c->head; r; r = r->next)
				if (r->presence && !r->pending && strcmp(r->key, presence_key) == 0)
					break;
			if (r) {
				char *nf = malloc(S->head + len + 1);

				if (!nf)
					continue;
				memcpy(nf, frame, S->head + len + 1);
				c->queued_bytes = c->queued_bytes - r->len + len;
				free(r->frame);
				r->frame = nf;
				r->len = len;
				S->m.presence_coalesced++;
				continue;
			}
		}
		copy = malloc(S->head + len + 1);
		if (!copy)
			continue;
		memcpy(copy, frame, S->head + len + 1);
		r = enqueue(S, c, copy, len, false);
		if (r && presence_key) {
			r->presence = true;
			snprintf(r->key, sizeof(r->key), "%s", presence_key);
		}
	}
}

static char *leave_frame(struct server *S, const char *scene_name, const char *client,
			 size_t *len)
{
	proto_buf b;

	proto_buf_init(&b, S->head);
	if (proto_encode_leave(&b, scene_name, client)) {
		proto_buf_release(&b);
		return NULL;
	}
	return take_frame(&b, len);
}

/* Removes the subscription of 'c' to 'scene' and tells the others. */
static void unsubscribe(struct server *S, struct client *c, const char *scene_name)
{
	struct sstate *st = sstate_find(S, scene_name);
	struct sub *sb = sub_find(c, scene_name);

	if (sb)
		*sb = c->subs[--c->n_subs];
	if (!st)
		return;
	for (int i = 0; i < st->n_subs; i++)
		if (st->subs[i] == c->conn) {
			st->subs[i] = st->subs[--st->n_subs];
			break;
		}
	/* Only a participant (a client that announced itself with presence)
	 * has joined, so only a participant leaves. */
	if (presence_remove(st, c->conn)) {
		size_t len;
		char *f = leave_frame(S, scene_name, c->id, &len);

		if (f) {
			broadcast_reply(S, st, c->conn, f, len, NULL);
			free(f);
		}
	}
}

/* ---- journal and updates ---- */

struct roots_ctx {
	const scene *s;
	struct idlist *roots;
	int rc;
};

/* engine_update's range callback: a recomputed range [first, end) of
 * preorder positions is a run of whole subtrees; remember their roots. */
static void collect_roots(void *ctx, int first_pos, int end_pos)
{
	struct roots_ctx *rc = ctx;

	for (int pos = first_pos; pos < end_pos;) {
		int node = scene_at(rc->s, pos);

		if (idlist_add(rc->roots, scene_id(rc->s, node)))
			rc->rc = RIGD_E_NOMEM;
		pos += scene_subtree_size(rc->s, node);
	}
}

/* Records the turn of a touched scene as one journal entry. On failure
 * (memory) the journal is restarted, so lagging clients get snapshots. */
static void journal_add(struct server *S, struct sstate *st, int64_t to)
{
	struct jentry *j;
	long ids;
	int slot;

	idlist_unique(&st->turn_roots);
	idlist_unique(&st->turn_changed);
	idlist_unique(&st->turn_removed);
	ids = st->turn_roots.n + st->turn_changed.n + st->turn_removed.n;
	if (ids > JOURNAL_TURN_MAX_IDS) {
		/* A turn this big (an import-sized batch) would cost more to
		 * remember than a snapshot costs to send. */
		idlist_free(&st->turn_roots);
		idlist_free(&st->turn_changed);
		idlist_free(&st->turn_removed);
		journal_clear(S, st, to);
		return;
	}
	while (st->n > 0 && (st->n == S->o.journal || st->journal_ids + ids > JOURNAL_MAX_IDS))
		journal_drop_oldest(S, st);
	slot = (st->head + st->n) % S->o.journal;
	j = &st->ring[slot];
	j->from = st->turn_from;
	j->to = to;
	st->journal_ids += ids;
	j->roots = st->turn_roots.v;
	j->n_roots = st->turn_roots.n;
	j->changed = st->turn_changed.v;
	j->n_changed = st->turn_changed.n;
	j->removed = st->turn_removed.v;
	j->n_removed = st->turn_removed.n;
	memset(&st->turn_roots, 0, sizeof(st->turn_roots));
	memset(&st->turn_changed, 0, sizeof(st->turn_changed));
	memset(&st->turn_removed, 0, sizeof(st->turn_removed));
	if (st->n == 0)
		st->epoch = j->from;
	st->n++;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

struct range {
	int first, end;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/*
 * Builds the update that takes a client from 'cursor' to the scene's seq,
 * or returns RIGD_E_BAD_SEQ when the journal cannot (then the caller sends a
 * snapshot). *n_entries gets how many turns the update covers.
 */
static int build_update(struct server *S, struct sstate *st, const scene *s, int64_t seq,
			int64_t cursor, proto_buf *b, int *n_entries)
{
	struct idlist changed = {0}, removed = {0};
	struct range *ranges = NULL;
	int n_ranges = 0, cap_ranges = 0;
	int *world = NULL, *nodes = NULL;
	int n_world = 0, n_nodes = 0, cap_world = 0;
	edit_id *gone = NULL;
	int n_gone = 0;
	int rc = 0, covered = 0;

	if (cursor < st->epoch || cursor > seq)
		return RIGD_E_BAD_SEQ;
	for (int i = 0; i < st->n; i++) {
		const struct jentry *j = &st->ring[(st->head + i) % S->o.journal];

		if (j->to <= cursor)
			continue;
		if (j->from < cursor)
			return RIGD_E_BAD_SEQ;  /* not on a turn boundary */
		covered++;
		for (int k = 0; k < j->n_changed; k++)
			if ((rc = idlist_add(&changed, j->changed[k].s)))
				goto out;
		for (int k = 0; k < j->n_removed; k++)
			if ((rc = idlist_add(&removed, j->removed[k].s)))
				goto out;
		for (int k = 0; k < j->n_roots; k++) {
			int node = scene_find(s, j->roots[k].s);
			struct range *r;

			if (node < 0)
				continue;
			r = xrealloc_array(ranges, &cap_ranges, n_ranges + 1, sizeof(*r));
			if (!r) {
				rc = RIGD_E_NOMEM;
				goto out;
			}
			ranges = r;
			ranges[n_ranges].first = scene_pos(s, node);
			ranges[n_ranges].end = ranges[n_ranges].first + scene_subtree_size(s, node);
			n_ranges++;
		}
	}
	if (covered == 0 && cursor != seq) {
		rc = RIGD_E_BAD_SEQ;
		goto out;
	}
	/* Every node recomputed since the cursor lies in the current subtree of
	 * a recorded root (a node moved out of one is recomputed, and recorded,
	 * by the move), and its stamp says whether it changed since. */
	if (n_ranges > 1)
		qsort(ranges, (size_t)n_ranges, sizeof(*ranges), cmp_range);
	for (int i = 0, reach = 0; i < n_ranges; i++) {
		int from = ranges[i].first > reach ? ranges[i].first : reach;

		for (int pos = from; pos < ranges[i].end; pos++) {
			int node = scene_at(s, pos);

			if (scene_world_stamp(s, node) > (uint64_t)cursor) {
				int *w = xrealloc_array(world, &cap_world, n_world + 1, sizeof(int));

				if (!w) {
					rc = RIGD_E_NOMEM;
					goto out;
				}
				world = w;
				world[n_world++] = node;
			}
		}
		if (ranges[i].end > reach)
			reach = ranges[i].end;
	}
	idlist_unique(&changed);
	idlist_unique(&removed);
	if (changed.n && !(nodes = malloc((size_t)changed.n * sizeof(int)))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	for (int i = 0; i < changed.n; i++) {
		int node = scene_find(s, changed.v[i].s);

		if (node >= 0)
			nodes[n_nodes++] = node;
	}
	/* Parents before children: a client can build new nodes in order. */
	for (int i = 0; i < n_nodes; i++)
		nodes[i] = scene_pos(s, nodes[i]);
	if (n_nodes > 1)
		qsort(nodes, (size_t)n_nodes, sizeof(int), cmp_int);
	for (int i = 0; i < n_nodes; i++)
		nodes[i] = scene_at(s, nodes[i]);
	if (removed.n && !(gone = malloc((size_t)removed.n * sizeof(edit_id)))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	for (int i = 0; i < removed.n; i++)
		if (scene_find(s, removed.v[i].s) < 0)
			gone[n_gone++] = removed.v[i];
	rc = proto_encode_update(b, st->name, (uint64_t)seq, s, world, n_world, nodes, n_nodes,
				 gone, n_gone);
	*n_entries = covered;
out:
	idlist_free(&changed);
	idlist_free(&removed);
	free(ranges);
	free(world);
	free(nodes);
	free(gone);
	return rc;
}

/* After a snapshot: a join notice and the last presence of every other
 * participant. */
static void send_peers(struct server *S, struct client *c, struct sstate *st)
{
	for (int k = 0; k < st->n_pres; k++) {
		struct client *p = client_get(S, st->pres[k].conn);
		proto_buf b;
		size_t len;
		char *f;

		if (!p || p == c)
			continue;
		proto_buf_init(&b, S->head);
		if (proto_encode_join(&b, st->name, p->id, p->name) == 0 &&
		    (f = take_frame(&b, &len)) != NULL)
			enqueue(S, c, f, len, false);
		proto_buf_release(&b);
		proto_buf_init(&b, S->head);
		if (proto_encode_presence(&b, st->name, p->id, p->name, st->pres[k].selection,
					  st->pres[k].n_selection) == 0 &&
		    (f = take_frame(&b, &len)) != NULL)
			enqueue(S, c, f, len, false);
		proto_buf_release(&b);
	}
}

/* True when the subscription is behind its scene. */
static bool sub_behind(struct server *S, const struct sub *sb)
{
	int64_t seq = engine_seq(S->e, sb->scene);

	return seq >= 0 && (sb->cursor < 0 || sb->cursor != seq);
}

static bool client_has_work(struct server *S, struct client *c)
{
	if (c->head && !c->head->pending)
		return true;
	if (engine_pending(S->e) > 0)
		return false;  /* the turn wakes everyone it concerns */
	for (int i = 0; i < c->n_subs; i++)
		if (sub_behind(S, &c->subs[i]))
			return true;
	return false;
}

/* One frame for one lagging subscription, or NULL. */
static char *subscription_frame(struct server *S, struct client *c, struct sub *sb, size_t *len)
{
	const scene *s = engine_scene(S->e, sb->scene);
	int64_t seq = engine_seq(S->e, sb->scene);
	struct sstate *st = sstate_get(S, sb->scene);
	proto_buf b;
	int covered = 0;
	bool snapshot = true;
	char *f;

	if (!s || seq < 0 || !st)
		return NULL;
	if (sb->cursor >= 0 && st->cache && st->cache_from == sb->cursor && st->cache_to == seq) {
		/* Most clients keep up and share one cursor: encode once. */
		f = malloc(S->head + st->cache_len + 1);
		if (!f)
			return NULL;
		memcpy(f, st->cache, S->head + st->cache_len + 1);
		*len = st->cache_len;
		snapshot = false;
		covered = st->cache_covered;
		goto sent;
	}
	proto_buf_init(&b, S->head);
	if (sb->cursor >= 0 && build_update(S, st, s, seq, sb->cursor, &b, &covered) == 0)
		snapshot = false;
	if (snapshot) {
		proto_buf_reset(&b);
		if (proto_encode_snapshot(&b, sb->scene, (uint64_t)seq, s)) {
			proto_buf_release(&b);
			return NULL;
		}
	}
	f = take_frame(&b, len);
	if (!f) {
		proto_buf_release(&b);
		return NULL;
	}
	if (!snapshot) {
		char *copy = malloc(S->head + *len + 1);

		if (copy) {
			memcpy(copy, f, S->head + *len + 1);
			free(st->cache);
			st->cache = copy;
			st->cache_len = *len;
			st->cache_from = sb->cursor;
			st->cache_to = seq;
			st->cache_covered = covered;
		}
	}
sent:
	if (snapshot) {
		S->m.snapshots_sent++;
	} else {
		S->m.updates_sent++;
		if (covered > 1)
			S->m.updates_coalesced += (uint64_t)(covered - 1);
	}
	sb->cursor = seq;
	if (snapshot && sb->peers_pending) {
		sb->peers_pending = false;
		send_peers(S, c, st);
	}
	return f;
}

/* ---- net callbacks: websockets ---- */

static void cb_ws_open(void *ctx, uint64_t conn)
{
	struct server *S = ctx;
	uint32_t slot = (uint32_t)(conn & 0xffffffffu);
	struct client *c;

	if ((int)slot >= S->cap_clients) {
		int cap = S->cap_clients;
		struct client **v = xrealloc_array(S->clients, &cap, (int)slot + 1, sizeof(*v));

		if (!v) {
			net_ws_close(S->n, conn, NET_CLOSE_INTERNAL, "out of memory");
			return;
		}
		memset(v + S->cap_clients, 0, (size_t)(cap - S->cap_clients) * sizeof(*v));
		S->clients = v;
		S->cap_clients = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		net_ws_close(S->n, conn, NET_CLOSE_INTERNAL, "out of memory");
		return;
	}
	c->conn = conn;
	/* Unique across restarts too, so that a (client, client_seq) of an old
	 * run never passes for a resend. */
	snprintf(c->id, sizeof(c->id), "c%08" PRIx32 "-%" PRIu64, S->boot_id, ++S->next_client);
	S->clients[slot] = c;
	S->n_clients++;
	logf_(LOG_INFO, "client %s connected", c->id);
	/* A script may bring its token in the handshake's Authorization. */
	if (S->n_tokens > 0 && net_ws_authorization(S->n, conn)) {
		if (bearer_hash(net_ws_authorization(S->n, conn), c->tok) &&
		    role_for(S, c->tok, NULL, &c->principal) >= 0) {
			c->authed = true;
		} else {
			S->m.unauthorized++;
			reply_error_code(S, c, NULL, RIGD_E_UNAUTHORIZED, "",
					 "the Authorization header holds no valid token");
		}
	}
}

/*
 * 0 when client 'c' may do what needs 'need' on 'scene_name'; otherwise
 * RIGD_E_UNAUTHORIZED (no valid token yet) or RIGD_E_FORBIDDEN (a token
 * without that role there). Always 0 when no token is configured.
 */
static int ws_allowed(struct server *S, const struct client *c, int need,
		      const char *scene_name)
{
	if (S->n_tokens == 0)
		return 0;
	if (!c->authed)
		return RIGD_E_UNAUTHORIZED;
	return role_for(S, c->tok, scene_name, NULL) >= need ? 0 : RIGD_E_FORBIDDEN;
}

/*
 * Charges one message to the client's bucket and its token's. When the
 * connection's bucket runs dry, net stops reading it until it refills (the
 * sender's own socket backs up), so a pipelining script is slowed, not
 * refused; a message that still arrives with an empty bucket, or beyond
 * its token's rate (shared by all the token's connections), is refused.
 * True when the message may be handled.
 */
static bool ws_rate_ok(struct server *S, struct client *c)
{
	double now = now_s();
	bool ok = bucket_take(&c->bucket, &c->bucket_t, S->o.max_rate, now);

	if (ok && c->authed) {
		struct token *t = &S->tokens[c->principal];

		if (!bucket_take(&t->bucket, &t->bucket_t, S->o.max_token_rate, now)) {
			c->bucket += 1;  /* not handled: not charged */
			net_ws_pause_for(S->n, c->conn,
					 bucket_wait_ms(t->bucket, S->o.max_token_rate));
			return false;
		}
	}
	if (!ok || c->bucket < 1)
		net_ws_pause_for(S->n, c->conn, bucket_wait_ms(c->bucket, S->o.max_rate));
	return ok;
}

static void pending_forget_client(struct server *S, struct client *c)
{
	for (int i = 0; i < S->n_pend; i++)
		if (!S->pend[i].http && S->pend[i].conn == c->conn)
			S->pend[i].reply = NULL;
	for (struct deferred *d = S->dhead; d; d = d->next)
		if (d->kind != D_HTTP && d->conn == c->conn)
			d->reply = NULL;
}

static void cb_ws_closed(void *ctx, uint64_t conn)
{
	struct server *S = ctx;
	struct client *c = client_get(S, conn);

	if (!c)
		return;
	while (c->n_subs > 0)
		unsubscribe(S, c, c->subs[c->n_subs - 1].scene);
	pending_forget_client(S, c);
	queue_free(c);
	logf_(LOG_INFO, "client %s disconnected", c->id);
	S->clients[conn & 0xffffffffu] = NULL;
	S->n_clients--;
	free(c->subs);
	free(c->name);
	free(c);
}

/* Records what an accepted batch changed in its scene's turn lists. */
static int note_changes(struct server *S, const char *scene_name, const engine_ack *ack,
			int64_t seq_before)
{
	struct sstate *st = sstate_get(S, scene_name);
	const edit_result *r = &ack->changes;

	if (!st)
		return RIGD_E_NOMEM;
	if (!st->touched) {
		st->touched = true;
		st->turn_from = seq_before;
	}
	for (int i = 0; i < r->n_created; i++)
		if (idlist_add(&st->turn_changed, r->created[i].s))
			goto lost;
	for (int i = 0; i < r->n_changed; i++)
		if (idlist_add(&st->turn_changed, r->changed[i].s))
			goto lost;
	for (int i = 0; i < r->n_removed; i++)
		if (idlist_add(&st->turn_removed, r->removed[i].s))
			goto lost;
	return 0;
lost:
	/* Without the full list no update of this turn is exact: the turn
	 * restarts the journal, so every subscriber gets a snapshot. */
	st->turn_lost = true;
	return RIGD_E_NOMEM;
}

/* Makes room for one more pending answer. 0 or RIGD_E_NOMEM. */
static int add_pending_room(struct server *S)
{
	struct pending *v = xrealloc_array(S->pend, &S->cap_pend, S->n_pend + 1, sizeof(*v));

	if (!v)
		return RIGD_E_NOMEM;
	S->pend = v;
	return 0;
}

/*
 * Submits an edit, undo or redo for a websocket client or an HTTP request.
 * On success the answer waits for the turn (a placeholder for ws); on error
 * the caller answers at once. Returns 0 or the error (err filled).
 */
static int submit_limits(struct server *S, int type, const char *scene_name,
			 const edit_batch *batch, const edit_limits *lim, const char *client,
			 struct client *c, uint64_t http_conn, const proto_req *req, edit_error *err);

static int submit(struct server *S, int type, const char *scene_name, const edit_batch *batch,
		  const char *client, struct client *c, uint64_t http_conn, const proto_req *req,
		  edit_error *err)
{
	return submit_limits(S, type, scene_name, batch, &S->lim.edit, client, c, http_conn, req,
			     err);
}

/* submit() with edit limits 'lim' for an edit (the server's own batches,
 * such as a glTF import, may hold more ops than a client's). */
static int submit_limits(struct server *S, int type, const char *scene_name,
			 const edit_batch *batch, const edit_limits *lim, const char *client,
			 struct client *c, uint64_t http_conn, const proto_req *req, edit_error *err)
{
	engine_ack ack;
	struct pending p;
	int64_t before = engine_seq(S->e, scene_name);
	int rc;

	/* Room for the answer first: once submitted, a batch must be answered. */
	if (add_pending_room(S)) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	engine_ack_init(&ack);
	if (type == PROTO_EDIT)
		rc = engine_submit_limits(S->e, scene_name, batch, lim, &ack, err);
	else if (type == PROTO_UNDO)
		rc = engine_undo(S->e, scene_name, client, false, 0, &ack, err);
	else
		rc = engine_redo(S->e, scene_name, client, false, 0, &ack, err);
	if (rc) {
		if (!err->code)
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		engine_ack_release(&ack);
		S->m.batches_failed++;
		return rc;
	}
	memset(&p, 0, sizeof(p));
	p.http = c == NULL;
	p.conn = c ? c->conn : http_conn;
	if (req)
		p.req = *req;
	p.seq = ack.seq;
	p.recomputed = ack.recomputed;
	if (!ack.duplicate) {
		/* Ops are counted from what the engine reports at commit. */
		if (note_changes(S, scene_name, &ack, before))
			logf_(LOG_WARN, "out of memory noting changes of %s", scene_name);
	}
	engine_ack_release(&ack);
	if (c)
		p.reply = enqueue(S, c, NULL, 0, true);
	S->pend[S->n_pend++] = p;  /* room reserved above */
	net_schedule_turn(S->n);
	return 0;
}

static void defer(struct server *S, struct deferred *d)
{
	if (S->dtail)
		S->dtail->next = d;
	else
		S->dhead = d;
	S->dtail = d;
	net_schedule_turn(S->n);
}

static void on_presence(struct server *S, struct client *c, proto_msg *msg)
{
	struct sstate *st;
	struct presence *pr = NULL;
	proto_buf b;
	char key[sizeof(((struct reply *)0)->key)];
	size_t len;
	char *f;

	if (!sub_find(c, msg->scene) || !(st = sstate_find(S, msg->scene))) {
		reply_error_code(S, c, NULL, RIGD_E_NOT_SUBSCRIBED, "scene",
				 "not subscribed to scene '%s'", msg->scene);
		return;
	}
	if (msg->name) {
		free(c->name);
		c->name = msg->name;
		msg->name = NULL;
	}
	for (int i = 0; i < st->n_pres; i++)
		if (st->pres[i].conn == c->conn)
			pr = &st->pres[i];
	if (!pr) {
		struct presence *v = xrealloc_array(st->pres, &st->cap_pres, st->n_pres + 1,
						    sizeof(*v));
		if (!v)
			return;
		st->pres = v;
		pr = &st->pres[st->n_pres++];
		memset(pr, 0, sizeof(*pr));
		pr->conn = c->conn;
		/* Its first presence makes it a participant: the others hear it
		 * join, then what it selected. */
		proto_buf_init(&b, S->head);
		if (proto_encode_join(&b, st->name, c->id, c->name) == 0 &&
		    (f = take_frame(&b, &len)) != NULL) {
			broadcast_reply(S, st, c->conn, f, len, NULL);
			free(f);
		}
		proto_buf_release(&b);
	}
	free(pr->selection);
	pr->selection = msg->selection;
	pr->n_selection = msg->n_selection;
	msg->selection = NULL;
	msg->n_selection = 0;

	proto_buf_init(&b, S->head);
	if (proto_encode_presence(&b, st->name, c->id, c->name, pr->selection, pr->n_selection) ||
	    !(f = take_frame(&b, &len))) {
		proto_buf_release(&b);
		return;
	}
	snprintf(key, sizeof(key), "%s/%s", st->name, c->id);
	broadcast_reply(S, st, c->conn, f, len, key);
	free(f);
}

/*
 * {"type":"auth","token"}: the token replaces the connection's principal
 * (a viewer may become an editor, or another scene's viewer) and is
 * answered with an ack of seq 0. A token that is not configured is
 * answered with unauthorized and changes nothing: the connection keeps the
 * principal it had, if any. Without configured tokens access control is
 * off, so any token is acknowledged and changes nothing. Subscriptions made
 * under an earlier token are kept: the client proved it holds that token,
 * and could use it on another connection. The token itself is only hashed;
 * it is never logged, stored or echoed.
 */
static void on_auth(struct server *S, struct client *c, const proto_msg *msg)
{
	unsigned char hash[SHA256_LEN];
	int principal = 0;
	proto_buf b;
	size_t len;
	char *f;

	if (S->n_tokens > 0) {
		sha256_digest(msg->token, strlen(msg->token), hash);
		if (role_for(S, hash, NULL, &principal) < 0) {
			S->m.unauthorized++;
			logf_(LOG_INFO, "client %s: auth with an unknown token", c->id);
			reply_error_code(S, c, &msg->req, RIGD_E_UNAUTHORIZED, "token",
					 "no such token; the connection keeps the access it had");
			return;
		}
		memcpy(c->tok, hash, sizeof(c->tok));
		c->principal = principal;
		c->authed = true;
		logf_(LOG_INFO, "client %s: authenticated", c->id);
	}
	proto_buf_init(&b, S->head);
	if (proto_encode_ack(&b, &msg->req, 0, 0) == 0 && (f = take_frame(&b, &len)) != NULL)
		enqueue(S, c, f, len, false);
	else
		reply_error_code(S, c, &msg->req, RIGD_E_NOMEM, "", "out of memory");
	proto_buf_release(&b);
}

static void cb_ws_message(void *ctx, uint64_t conn, const char *data, size_t len, bool binary)
{
	struct server *S = ctx;
	struct client *c = client_get(S, conn);
	proto_msg msg;
	proto_req req;
	edit_error err;
	int rc;

	if (!c || c->dropped)
		return;
	S->m.ws_messages++;
	if (!ws_rate_ok(S, c)) {
		S->m.rate_limited++;
		reply_error_code(S, c, NULL, RIGD_E_RATE_LIMITED, "",
				 "more than %d messages a second; slow down",
				 S->o.max_rate);
		return;
	}
	if (binary) {
		reply_error_code(S, c, NULL, RIGD_E_BAD_JSON, "",
				 "binary frames are not accepted; send JSON text");
		return;
	}
	rc = proto_decode_msg(data, len, &S->lim, &msg, &req, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		reply_error(S, c, &req, &err);
		return;
	}
	/* An auth message sets who the connection speaks for; it needs no role
	 * itself, and was charged to the rate buckets above like any other, so
	 * guessing tokens is as slow as sending messages. */
	if (msg.type == PROTO_AUTH) {
		on_auth(S, c, &msg);
		proto_msg_release(&msg);
		return;
	}
	/* Every message is authorised, not just the connection. */
	if (msg.type != PROTO_UNSUBSCRIBE) {
		int need = msg.type == PROTO_SUBSCRIBE || msg.type == PROTO_PRESENCE ? ROLE_VIEWER
											: ROLE_EDITOR;

		rc = ws_allowed(S, c, need, msg.scene);
		if (rc) {
			if (rc == RIGD_E_UNAUTHORIZED)
				S->m.unauthorized++;
			else
				S->m.forbidden++;
			if (rc == RIGD_E_UNAUTHORIZED)
				reply_error_code(S, c, &msg.req, rc, "", "a valid token is required "
						 "(auth message or Authorization header)");
			else
				reply_error_code(S, c, &msg.req, rc, "scene",
						 "this token may not %s scene '%s'",
						 need == ROLE_VIEWER ? "read" : "edit", msg.scene);
			proto_msg_release(&msg);
			return;
		}
	}
	switch (msg.type) {
	case PROTO_SUBSCRIBE:
	case PROTO_UNSUBSCRIBE: {
		struct deferred *d = calloc(1, sizeof(*d));

		if (!d) {
			reply_error_code(S, c, &msg.req, RIGD_E_NOMEM, "", "out of memory");
			break;
		}
		d->kind = msg.type == PROTO_SUBSCRIBE ? D_SUBSCRIBE : D_UNSUBSCRIBE;
		d->conn = conn;
		d->req = msg.req;
		snprintf(d->scene, sizeof(d->scene), "%s", msg.scene);
		d->reply = enqueue(S, c, NULL, 0, true);
		defer(S, d);
		break;
	}
	case PROTO_EDIT:
	case PROTO_UNDO:
	case PROTO_REDO: {
		const char *client;

		/* A batch without a client is the connection's own, so that its
		 * undo finds it. */
		if (!msg.batch.client[0])
			snprintf(msg.batch.client, sizeof(msg.batch.client), "%s", c->id);
		client = msg.batch.client;
		edit_error_clear(&err);
		if (submit(S, msg.type, msg.scene, &msg.batch, client, c, 0, &msg.req, &err))
			reply_error(S, c, &msg.req, &err);
		break;
	}
	case PROTO_PRESENCE:
		on_presence(S, c, &msg);
		break;
	default:
		reply_error_code(S, c, &msg.req, RIGD_E_UNKNOWN_TYPE, "type", "unknown message type");
	}
	proto_msg_release(&msg);
}

static char *cb_ws_writable(void *ctx, uint64_t conn, size_t *len, bool *more)
{
	struct server *S = ctx;
	struct client *c = client_get(S, conn);
	char *frame = NULL;

	if (!c || c->dropped)
		return NULL;
	/* Replies first, in request order; placeholders filled with nothing
	 * (a subscribe answered by its snapshot) are skipped. */
	while (c->head && !c->head->pending) {
		struct reply *r = c->head;

		c->head = r->next;
		if (!c->head)
			c->tail = NULL;
		c->queued--;
		c->queued_bytes -= r->len;
		if (r->frame) {
			frame = r->frame;
			*len = r->len;
			r->frame = NULL;
			reply_free(r);
			S->m.replies_sent++;
			break;
		}
		reply_free(r);
	}
	if (!frame && engine_pending(S->e) > 0 && !c->wake_after_turn) {
		/* Nothing may be built from the scenes until the turn commits;
		 * whatever this client is behind on, it hears of then. */
		uint64_t *v = xrealloc_array(S->wake, &S->cap_wake, S->n_wake + 1, sizeof(*v));

		if (v) {
			S->wake = v;
			S->wake[S->n_wake++] = c->conn;
			c->wake_after_turn = true;
		}
	}
	if (!frame && engine_pending(S->e) == 0) {
		for (int k = 0; k < c->n_subs && !frame; k++) {
			struct sub *sb = &c->subs[(c->next_sub + k) % c->n_subs];

			if (!sub_behind(S, sb))
				continue;
			frame = subscription_frame(S, c, sb, len);
			c->next_sub = (c->next_sub + k + 1) % c->n_subs;
		}
	}
	*more = client_has_work(S, c);
	return frame;
}

/* ---- HTTP ---- */

static void respond_buf(struct server *S, uint64_t conn, int status, const char *type,
			proto_buf *b)
{
	size_t len = b->len;
	char *body = proto_buf_take(b);

	net_http_respond(S->n, conn, status, type, body, body ? len : 0);
}

static void respond_error(struct server *S, uint64_t conn, const edit_error *err)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	if (proto_encode_http_error(&b, err) || proto_buf_append(&b, "\n", 1)) {
		proto_buf_release(&b);
		net_http_respond(S->n, conn, 500, "application/json", NULL, 0);
		return;
	}
	respond_buf(S, conn, err_http_status(err->code), "application/json", &b);
}

static void respond_code(struct server *S, uint64_t conn, int code, const char *field,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void respond_code(struct server *S, uint64_t conn, int code, const char *field,
			 const char *fmt, ...)
{
	edit_error err;
	char msg[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(&err, code, -1, field, "%s", msg);
	respond_error(S, conn, &err);
}

static void respond_json(struct server *S, uint64_t conn, int status, proto_buf *b)
{
	if (proto_buf_append(b, "\n", 1)) {
		proto_buf_release(b);
		respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	respond_buf(S, conn, status, "application/json", b);
}

/* Answers an engine error about scene 'name'. */
static void respond_engine(struct server *S, uint64_t conn, int rc, const char *name)
{
	if (rc == RIGD_E_UNKNOWN_SCENE)
		respond_code(S, conn, rc, "", "no scene '%s'", name);
	else if (rc == RIGD_E_STORAGE)
		respond_code(S, conn, rc, "", "%s: %s", err_str(rc), engine_errmsg(S->e));
	else
		respond_code(S, conn, rc, "", "%s", err_str(rc));
}

/* The value of query argument 'name' ("name=value"), or NULL. */
static const char *arg(char *const *args, int n_args, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n_args; i++)
		if (strncmp(args[i], name, len) == 0 && args[i][len] == '=')
			return args[i] + len + 1;
	return NULL;
}

/* Parses a decimal seq 0..2^53-1. */
static bool parse_seq(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0 || v > (1LL << 53))
		return false;
	*out = v;
	return true;
}

/*
 * Splits "/api/scenes/NAME[/REST]" into NAME and REST. Returns false when
 * the path is not under /api/scenes/.
 */
static bool scene_path(const char *path, char *name, size_t cap, const char **rest)
{
	const char *p = path + strlen("/api/scenes/");
	const char *slash;
	size_t len;

	if (strncmp(path, "/api/scenes/", strlen("/api/scenes/")) != 0)
		return false;
	slash = strchr(p, '/');
	len = slash ? (size_t)(slash - p) : strlen(p);
	if (len == 0 || len >= cap)
		return false;
	memcpy(name, p, len);
	name[len] = '\0';
	*rest = slash ? slash : "";
	return true;
}

static void http_metrics(struct server *S, uint64_t conn);

/* GET /api/scenes: every scene, or with 'tok' (a caller's token digest)
 * those it may read. */
static void http_scene_list(struct server *S, uint64_t conn, const unsigned char *tok)
{
	int n = engine_scenes(S->e, NULL, 0);
	proto_scene_info *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;
	proto_buf b;

	if (n > 0 && !v) {
		respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	n = engine_scenes(S->e, v, n);
	if (tok) {
		int w = 0;

		for (int i = 0; i < n; i++)
			if (role_for(S, tok, v[i].name, NULL) >= ROLE_VIEWER)
				v[w++] = v[i];
		n = w;
	}
	proto_buf_init(&b, 0);
	if (proto_encode_scene_list(&b, v, n)) {
		free(v);
		proto_buf_release(&b);
		respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	free(v);
	respond_json(S, conn, 200, &b);
}

/* Every subscriber of a scene that is gone hears of it, once. */
static void scene_gone(struct server *S, const char *name)
{
	struct sstate *st = sstate_find(S, name);

	if (!st)
		return;
	while (st->n_subs > 0) {
		struct client *c = client_get(S, st->subs[st->n_subs - 1]);
		struct sub *sb;

		st->n_subs--;
		if (!c)
			continue;
		if ((sb = sub_find(c, name)))
			*sb = c->subs[--c->n_subs];
		reply_error_code(S, c, NULL, RIGD_E_UNKNOWN_SCENE, "scene",
				 "scene '%s' was deleted", name);
	}
	sstate_remove(S, st);
}

static void http_scene_info(struct server *S, uint64_t conn, int status, const char *name)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	if (proto_buf_append(&b, "{\"name\":", 8) || proto_buf_json_string(&b, name) ||
	    proto_buf_append(&b, ",\"seq\":0,\"nodes\":0}", 19)) {
		proto_buf_release(&b);
		respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	respond_json(S, conn, status, &b);
}

static int log_line(void *ctx, const char *line, size_t len)
{
	return proto_buf_append(ctx, line, len);
}

static void http_tree(struct server *S, uint64_t conn, const char *name, const char *at)
{
	proto_buf b;
	int rc;

	proto_buf_init(&b, 0);
	if (at) {
		int64_t seq;
		scene *past = NULL;

		if (!parse_seq(at, &seq)) {
			respond_code(S, conn, RIGD_E_BAD_SEQ, "at", "at must be a seq 0..2^53");
			return;
		}
		/* Seq 0 is the empty scene by definition: no history to read. */
		if (seq == 0 && engine_seq(S->e, name) >= 0)
			rc = (past = scene_new()) ? 0 : RIGD_E_NOMEM;
		else
			rc = engine_at(S->e, name, seq, &past);
		if (rc == RIGD_E_BAD_SEQ) {
			respond_code(S, conn, rc, "at", "scene '%s' has no seq %" PRId64, name, seq);
			return;
		}
		if (rc) {
			respond_engine(S, conn, rc, name);
			return;
		}
		rc = proto_encode_tree(&b, name, (uint64_t)seq, past);
		scene_free(past);
	} else {
		const scene *s = engine_scene(S->e, name);

		if (!s) {
			respond_code(S, conn, RIGD_E_UNKNOWN_SCENE, "", "no scene '%s'", name);
			return;
		}
		rc = proto_encode_tree(&b, name, (uint64_t)engine_seq(S->e, name), s);
	}
	if (rc) {
		proto_buf_release(&b);
		respond_code(S, conn, rc, "", "out of memory");
		return;
	}
	respond_json(S, conn, 200, &b);
}

static void http_log_get(struct server *S, uint64_t conn, const char *name, char *const *args,
			 int n_args)
{
	const char *from_s = arg(args, n_args, "from"), *to_s = arg(args, n_args, "to");
	int64_t from = 1, to = -1;
	proto_buf b;
	int rc;

	if ((from_s && !parse_seq(from_s, &from)) || (to_s && !parse_seq(to_s, &to))) {
		respond_code(S, conn, RIGD_E_BAD_SEQ, from_s && !parse_seq(from_s, &from) ? "from" : "to",
			     "from and to must be seqs 0..2^53");
		return;
	}
	proto_buf_init(&b, 0);
	rc = engine_log(S->e, name, from, to, log_line, &b);
	if (rc) {
		proto_buf_release(&b);
		respond_engine(S, conn, rc, name);
		return;
	}
	respond_buf(S, conn, 200, "application/x-ndjson", &b);
}

static void http_log_import(struct server *S, uint64_t conn, const char *name, const char *body,
			    size_t len)
{
	int64_t n = 0;
	int bad_line = 0, rc;
	edit_error err;
	proto_buf b;
	char num[64];

	edit_error_clear(&err);
	rc = engine_import(S->e, name, body, len, &n, &bad_line, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		if (bad_line > 0) {
			char msg[EDIT_MESSAGE_MAX];

			snprintf(msg, sizeof(msg), "line %d: %.360s", bad_line, err.message);
			snprintf(err.message, sizeof(err.message), "%s", msg);
		}
		respond_error(S, conn, &err);
		return;
	}
	{
		struct sstate *st = sstate_find(S, name);
		int64_t seq = engine_seq(S->e, name);

		engine_update(S->e, name, NULL, NULL);
		if (st) {
			/* Subscribers get a snapshot of the imported scene. */
			journal_clear(S, st, seq);
			for (int i = 0; i < st->n_subs; i++)
				net_ws_wake(S->n, st->subs[i]);
		}
		proto_buf_init(&b, 0);
		snprintf(num, sizeof(num), ",\"batches\":%" PRId64 ",\"seq\":%" PRId64 "}", n, seq);
		if (proto_buf_append(&b, "{\"scene\":", 9) || proto_buf_json_string(&b, name) ||
		    proto_buf_append(&b, num, strlen(num))) {
			proto_buf_release(&b);
			respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
			return;
		}
		respond_json(S, conn, 200, &b);
	}
}


/* ---- glTF in and out (issue 6) ---- */


/*
 * The scene 'name' now (at NULL) or right after seq 'at': *out points at the
 * live scene, or at *past (a copy the caller frees with scene_free), with
 * its seq in *seq. On error answers the request and returns false.
 */
static bool read_scene_at(struct server *S, uint64_t conn, const char *name, const char *at,
			  const scene **out, scene **past, int64_t *seq)
{
	int rc;

	*past = NULL;
	if (!at) {
		*out = engine_scene(S->e, name);
		if (!*out) {
			respond_code(S, conn, RIGD_E_UNKNOWN_SCENE, "", "no scene '%s'", name);
			return false;
		}
		*seq = engine_seq(S->e, name);
		return true;
	}
	if (!parse_seq(at, seq)) {
		respond_code(S, conn, RIGD_E_BAD_SEQ, "at", "at must be a seq 0..2^53");
		return false;
	}
	/* Seq 0 is the empty scene by definition: no history to read. */
	if (*seq == 0 && engine_seq(S->e, name) >= 0)
		rc = (*past = scene_new()) ? 0 : RIGD_E_NOMEM;
	else
		rc = engine_at(S->e, name, *seq, past);
	if (rc == RIGD_E_BAD_SEQ) {
		respond_code(S, conn, rc, "at", "scene '%s' has no seq %" PRId64, name, *seq);
		return false;
	}
	if (rc) {
		respond_engine(S, conn, rc, name);
		return false;
	}
	*out = *past;
	return true;
}

/* GET /api/scenes/{name}/gltf[?at=SEQ]: the scene as glTF 2.0 JSON. */
static void http_gltf_export(struct server *S, uint64_t conn, const char *name, const char *at)
{
	const scene *s;
	scene *past;
	int64_t seq;
	gltf_export_opts eo = {.scene_name = name, .generator = "rigd"};
	char *json = NULL;
	size_t len = 0;
	int rc;

	if (!read_scene_at(S, conn, name, at, &s, &past, &seq))
		return;
	rc = gltf_export(s, &eo, &json, &len);
	scene_free(past);
	if (rc) {
		respond_code(S, conn, rc, "", "cannot export scene '%s': %s", name, err_str(rc));
		return;
	}
	net_http_respond(S->n, conn, 200, "model/gltf+json", json, len);
}

/* A query flag: absent, "0" or "false" is false; "", "1" or "true" true. */
static bool parse_flag(const char *v, bool *out)
{
	if (!v) {
		*out = false;
		return true;
	}
	if (!*v || strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
		*out = false;
	else
		return false;
	return true;
}

/*
 * POST /api/scenes/{name}/gltf: imports a .gltf or .glb body as ONE batch
 * of creates, into a new scene (created here) or an empty one, or under
 * node ?parent= of an existing scene. Runs between turns (nothing else is
 * pending): a file that does not import creates nothing; one that does is
 * submitted like an edit and answered after its commit, with the report.
 */
static void http_gltf_import(struct server *S, const struct deferred *d, const char *name)
{
	const char *scene_s = arg(d->args, d->n_args, "scene");
	const char *scene_name = arg(d->args, d->n_args, "scene_name");
	const char *parent = arg(d->args, d->n_args, "parent");
	const char *client = arg(d->args, d->n_args, "client");
	const scene *existing = engine_scene(S->e, name);
	gltf_import_opts opts = gltf_import_opts_default();
	gltf_report report;
	edit_batch batch;
	edit_limits lim = S->lim.edit;
	edit_error err;
	char *report_json = NULL;
	bool created = false;
	long idx;
	int rc;

	if (parent && !*parent)
		parent = NULL;
	if (scene_s && !config_parse_long(scene_s, 0, INT_MAX, &idx)) {
		respond_code(S, d->conn, RIGD_E_BAD_FIELD, "scene",
			     "scene must be the index of a scene of the file");
		return;
	}
	if (!parse_flag(arg(d->args, d->n_args, "nearest"), &opts.nearest_trs)) {
		respond_code(S, d->conn, RIGD_E_BAD_FIELD, "nearest", "nearest must be 0 or 1");
		return;
	}
	if (client && !scene_id_valid(client)) {
		respond_code(S, d->conn, RIGD_E_BAD_ID, "client", "bad client id");
		return;
	}
	if (!existing && parent) {
		respond_code(S, d->conn, RIGD_E_UNKNOWN_SCENE, "scene",
			     "no scene '%s' to import under node '%s'", name, parent);
		return;
	}
	if (existing && !parent && scene_count(existing) > 0) {
		respond_code(S, d->conn, RIGD_E_SCENE_NOT_EMPTY, "scene",
			     "scene '%s' has %d nodes: import into a new scene, or under a node "
			     "with ?parent=", name, scene_count(existing));
		return;
	}
	opts.scene_index = scene_s ? (int)idx : -1;
	opts.scene_name = scene_name;
	opts.parent = parent;
	opts.existing = existing;
	edit_error_clear(&err);
	rc = gltf_import(d->body, d->body_len, &opts, &batch, &report, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		respond_error(S, d->conn, &err);
		gltf_report_release(&report);
		return;
	}
	if (client)
		snprintf(batch.client, sizeof(batch.client), "%s", client);
	if ((rc = gltf_report_json(&report, &report_json, NULL)) != 0) {
		respond_code(S, d->conn, rc, "", "out of memory");
		goto out;
	}
	if (!existing && engine_scenes(S->e, NULL, 0) >= S->o.max_scenes) {
		respond_code(S, d->conn, RIGD_E_LIMIT, "", "there are %d scenes already (--max-scenes)",
			     S->o.max_scenes);
		goto out;
	}
	if (!existing) {
		rc = engine_scene_create(S->e, name);
		if (rc) {
			respond_engine(S, d->conn, rc, name);
			goto out;
		}
		created = true;
	}
	/* The import is one batch, as large as the file: gltf_import's own
	 * node limit bounds it, not the ops limit of a client's batch. */
	if (lim.max_ops < batch.n_ops)
		lim.max_ops = batch.n_ops;
	edit_error_clear(&err);
	rc = submit_limits(S, PROTO_EDIT, name, &batch, &lim, batch.client, NULL, d->conn, NULL,
			   &err);
	if (rc) {
		respond_error(S, d->conn, &err);
		if (created && engine_scene_delete(S->e, name) != 0)
			logf_(LOG_WARN, "cannot delete scene %s after a failed import: %s", name,
			      engine_errmsg(S->e));
		goto out;
	}
	S->pend[S->n_pend - 1].report = report_json;
	report_json = NULL;
	if (created)  /* 'name' is a valid scene name: it fits */
		memcpy(S->pend[S->n_pend - 1].created, name, strlen(name) + 1);
	logf_(LOG_INFO, "glTF import into %s: %d nodes", name, report.n_created);
out:
	free(report_json);
	edit_batch_release(&batch);
	gltf_report_release(&report);
}

/* The answer to a committed glTF import: {"seq","recomputed","report"}. */
static void respond_import(struct server *S, const struct pending *p)
{
	proto_buf b;
	char head[96];

	snprintf(head, sizeof(head), "{\"seq\":%" PRId64 ",\"recomputed\":%ld,\"report\":", p->seq,
		 p->recomputed);
	proto_buf_init(&b, 0);
	if (proto_buf_append(&b, head, strlen(head)) ||
	    proto_buf_append(&b, p->report, strlen(p->report)) || proto_buf_append(&b, "}", 1)) {
		proto_buf_release(&b);
		respond_code(S, p->conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	respond_json(S, p->conn, 200, &b);
}

/* Requests that read or change scenes outside a batch, after the commit. */
static void http_deferred(struct server *S, struct deferred *d)
{
	char name[SCENE_ID_MAX + 2];
	const char *rest;
	edit_error err;
	int rc;

	if (strcmp(d->path, "/api/scenes") == 0) {
		if (d->method == NET_GET) {
			http_scene_list(S, d->conn, d->authed ? d->tok : NULL);
		} else if (d->method == NET_POST) {
			rc = proto_decode_scene_create(d->body, d->body_len, name, &err);
			if (rc == 0 && engine_seq(S->e, name) < 0 &&
			    engine_scenes(S->e, NULL, 0) >= S->o.max_scenes) {
				rc = RIGD_E_LIMIT;
				edit_error_set(&err, rc, -1, "name", "there are %d scenes already "
					       "(--max-scenes)", S->o.max_scenes);
			} else if (rc == 0 && (rc = engine_scene_create(S->e, name)) != 0)
				edit_error_set(&err, rc, -1, "name", "%s '%s'",
					       rc == RIGD_E_SCENE_EXISTS ? "there is already a scene"
									 : err_str(rc), name);
			if (rc) {
				respond_error(S, d->conn, &err);
				return;
			}
			logf_(LOG_INFO, "scene %s created", name);
			http_scene_info(S, d->conn, 201, name);
		} else {
			respond_code(S, d->conn, RIGD_E_BAD_METHOD, "", "use GET or POST");
		}
		return;
	}
	if (!scene_path(d->path, name, sizeof(name), &rest)) {
		respond_code(S, d->conn, RIGD_E_NOT_FOUND, "", "no route %s", d->path);
		return;
	}
	if (!scene_id_valid(name)) {
		respond_code(S, d->conn, RIGD_E_BAD_ID, "scene", "bad scene name");
		return;
	}
	if (rest[0] == '\0') {
		if (d->method == NET_GET) {
			http_tree(S, d->conn, name, arg(d->args, d->n_args, "at"));
		} else if (d->method == NET_DELETE) {
			rc = engine_scene_delete(S->e, name);
			if (rc) {
				respond_engine(S, d->conn, rc, name);
				return;
			}
			logf_(LOG_INFO, "scene %s deleted", name);
			scene_gone(S, name);
			{
				proto_buf b;

				proto_buf_init(&b, 0);
				if (proto_buf_append(&b, "{\"deleted\":", 11) ||
				    proto_buf_json_string(&b, name) || proto_buf_append(&b, "}", 1)) {
					proto_buf_release(&b);
					respond_code(S, d->conn, RIGD_E_NOMEM, "", "out of memory");
					return;
				}
				respond_json(S, d->conn, 200, &b);
			}
		} else {
			respond_code(S, d->conn, RIGD_E_BAD_METHOD, "", "use GET or DELETE");
		}
		return;
	}
	if (strcmp(rest, "/log") == 0) {
		if (d->method == NET_GET)
			http_log_get(S, d->conn, name, d->args, d->n_args);
		else if (d->method == NET_POST)
			http_log_import(S, d->conn, name, d->body, d->body_len);
		else
			respond_code(S, d->conn, RIGD_E_BAD_METHOD, "", "use GET or POST");
		return;
	}
	if (strcmp(rest, "/gltf") == 0) {
		if (d->method == NET_GET)
			http_gltf_export(S, d->conn, name, arg(d->args, d->n_args, "at"));
		else if (d->method == NET_POST)
			http_gltf_import(S, d, name);
		else
			respond_code(S, d->conn, RIGD_E_BAD_METHOD, "", "use GET or POST");
		return;
	}
	respond_code(S, d->conn, RIGD_E_NOT_FOUND, "", "no route %s", d->path);
}

static void deferred_free(struct deferred *d)
{
	free(d->path);
	for (int i = 0; i < d->n_args; i++)
		free(d->args[i]);
	free(d->body);
	free(d);
}

static void http_edit(struct server *S, const net_request *req, const char *name)
{
	edit_batch batch;
	edit_error err;
	int rc;

	rc = proto_decode_batch(req->body, req->body_len, &S->lim, &batch, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		respond_error(S, req->conn, &err);
		S->m.batches_failed++;
		return;
	}
	edit_error_clear(&err);
	if (submit(S, PROTO_EDIT, name, &batch, batch.client, NULL, req->conn, NULL, &err))
		respond_error(S, req->conn, &err);
	edit_batch_release(&batch);
}

/*
 * With tokens configured, answers 401 or 403 (or 429 beyond the token's
 * rate) and returns false unless the request's Bearer token may do what its
 * method and path ask: read a scene (viewer), change one (editor), create
 * or delete scenes or read /metrics (admin). On success *tok gets the
 * token's digest for filtering the scene list.
 */
static bool http_allowed(struct server *S, const net_request *req, unsigned char *tok)
{
	char name[SCENE_ID_MAX + 2];
	const char *rest, *scene_name = NULL;
	bool reads = req->method == NET_GET || req->method == NET_HEAD;
	int need, principal = 0, role;

	if (strcmp(req->path, "/metrics") == 0) {
		need = ROLE_ADMIN;
	} else if (strcmp(req->path, "/api/scenes") == 0) {
		need = reads ? ROLE_VIEWER : ROLE_ADMIN;
	} else if (scene_path(req->path, name, sizeof(name), &rest)) {
		scene_name = name;
		need = rest[0] == '\0' && req->method == NET_DELETE ? ROLE_ADMIN
		       : reads || (rest[0] == '\0' && req->method != NET_DELETE) ? ROLE_VIEWER
										: ROLE_EDITOR;
	} else {
		need = ROLE_VIEWER;  /* an unknown route: 404 for a known token */
	}
	if (!bearer_hash(req->authorization, tok) ||
	    (role = role_for(S, tok, scene_name, &principal)) < 0) {
		S->m.unauthorized++;
		respond_code(S, req->conn, RIGD_E_UNAUTHORIZED, "",
			     "send a valid token: Authorization: Bearer TOKEN");
		return false;
	}
	if (role < need) {
		S->m.forbidden++;
		respond_code(S, req->conn, RIGD_E_FORBIDDEN, "", "this token is not %s%s%s",
			     need == ROLE_ADMIN ? "an admin token"
			     : need == ROLE_EDITOR ? "an editor token for scene "
						   : "a viewer token for scene ",
			     need == ROLE_ADMIN ? "" : scene_name ? scene_name : "?", "");
		return false;
	}
	{
		struct token *t = &S->tokens[principal];

		if (!bucket_take(&t->bucket, &t->bucket_t, S->o.max_token_rate, now_s())) {
			S->m.rate_limited++;
			respond_code(S, req->conn, RIGD_E_RATE_LIMITED, "",
				     "more than %d requests a second with this token",
				     S->o.max_token_rate);
			return false;
		}
	}
	return true;
}

static bool cb_http(void *ctx, const net_request *req)
{
	struct server *S = ctx;
	char name[SCENE_ID_MAX + 2];
	const char *rest;
	struct deferred *d;
	unsigned char tok[SHA256_LEN];

	if (strcmp(req->path, "/healthz") == 0) {
		static const char ok[] = "{\"status\":\"ok\"}\n";
		char *body = strdup(ok);

		net_http_respond(S->n, req->conn, 200, "application/json", body,
				 body ? strlen(ok) : 0);
		return true;
	}
	/* Files are public (the viewer must load to ask for a token); the API
	 * and the metrics are not. */
	if (S->n_tokens > 0 && (strcmp(req->path, "/metrics") == 0 ||
				strncmp(req->path, "/api/", 5) == 0) &&
	    !http_allowed(S, req, tok))
		return true;
	if (strcmp(req->path, "/metrics") == 0) {
		http_metrics(S, req->conn);
		return true;
	}
	if (strncmp(req->path, "/api/", 5) != 0)
		return false;
	S->m.http_api_requests++;
	/* net reads bodies up to the larger of --max-body and --max-gltf; only
	 * a glTF import may use the larger. */
	if (req->body_len > S->o.max_body &&
	    !(req->method == NET_POST && scene_path(req->path, name, sizeof(name), &rest) &&
	      strcmp(rest, "/gltf") == 0 && req->body_len <= S->o.max_gltf)) {
		respond_code(S, req->conn, RIGD_E_TOO_LARGE, "", "the body exceeds %zu bytes",
			     S->o.max_body);
		return true;
	}
	if (scene_path(req->path, name, sizeof(name), &rest) && strcmp(rest, "/edits") == 0) {
		if (req->method != NET_POST)
			respond_code(S, req->conn, RIGD_E_BAD_METHOD, "", "use POST");
		else if (!scene_id_valid(name))
			respond_code(S, req->conn, RIGD_E_BAD_ID, "scene", "bad scene name");
		else
			http_edit(S, req, name);
		return true;
	}
	/* Everything else reads or changes whole scenes: after the commit. */
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(req->path)) ||
	    !(d->body = malloc(req->body_len + 1))) {
		if (d)
			deferred_free(d);
		respond_code(S, req->conn, RIGD_E_NOMEM, "", "out of memory");
		return true;
	}
	d->kind = D_HTTP;
	d->conn = req->conn;
	d->method = req->method;
	if (S->n_tokens > 0) {
		d->authed = true;
		memcpy(d->tok, tok, sizeof(d->tok));
	}
	memcpy(d->body, req->body, req->body_len);
	d->body[req->body_len] = '\0';
	d->body_len = req->body_len;
	for (int i = 0; i < req->n_args; i++) {
		if (!(d->args[i] = strdup(req->args[i]))) {
			deferred_free(d);
			respond_code(S, req->conn, RIGD_E_NOMEM, "", "out of memory");
			return true;
		}
		d->n_args++;
	}
	defer(S, d);
	return true;
}

/* ---- the turn ---- */

static void do_subscribe(struct server *S, struct deferred *d)
{
	struct client *c = client_get(S, d->conn);
	struct sstate *st;
	struct sub *v;
	char *f;
	size_t len;
	proto_buf b;

	if (!c)
		return;
	if (d->kind == D_UNSUBSCRIBE) {
		if (!sub_find(c, d->scene)) {
			edit_error err;

			edit_error_set(&err, RIGD_E_NOT_SUBSCRIBED, -1, "scene",
				       "not subscribed to scene '%s'", d->scene);
			if (d->reply && (f = error_frame(S, &d->req, &err, &len)))
				fill(S, c, d->reply, f, len);
			return;
		}
		unsubscribe(S, c, d->scene);
		if (d->reply && d->req.present) {
			proto_buf_init(&b, S->head);
			if (proto_encode_ack(&b, &d->req, (uint64_t)engine_seq(S->e, d->scene), 0) == 0 &&
			    (f = take_frame(&b, &len)))
				fill(S, c, d->reply, f, len);
			proto_buf_release(&b);
		} else if (d->reply) {
			fill(S, c, d->reply, NULL, 0);
		}
		return;
	}
	if (!engine_scene(S->e, d->scene)) {
		edit_error err;

		edit_error_set(&err, RIGD_E_UNKNOWN_SCENE, -1, "scene", "no scene '%s'", d->scene);
		if (d->reply && (f = error_frame(S, &d->req, &err, &len)))
			fill(S, c, d->reply, f, len);
		return;
	}
	if (d->reply)
		fill(S, c, d->reply, NULL, 0);  /* the snapshot answers */
	if (sub_find(c, d->scene)) {
		sub_find(c, d->scene)->cursor = -1;  /* again: a fresh snapshot */
		net_ws_wake(S->n, c->conn);
		return;
	}
	if (c->n_subs >= S->o.max_subs) {
		reply_error_code(S, c, &d->req, RIGD_E_LIMIT, "scene",
				 "a connection may subscribe to %d scenes (--max-subs)", S->o.max_subs);
		return;
	}
	st = sstate_get(S, d->scene);
	v = xrealloc_array(c->subs, &c->cap_subs, c->n_subs + 1, sizeof(*v));
	if (!st || !v) {
		if (v)
			c->subs = v;
		reply_error_code(S, c, &d->req, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	c->subs = v;
	{
		uint64_t *sv = st->subs;
		int cap = st->cap_subs;

		sv = xrealloc_array(sv, &cap, st->n_subs + 1, sizeof(*sv));
		if (!sv) {
			reply_error_code(S, c, &d->req, RIGD_E_NOMEM, "", "out of memory");
			return;
		}
		st->subs = sv;
		st->cap_subs = cap;
	}
	memset(&c->subs[c->n_subs], 0, sizeof(c->subs[0]));
	snprintf(c->subs[c->n_subs].scene, sizeof(c->subs[0].scene), "%s", d->scene);
	c->subs[c->n_subs].cursor = -1;
	c->subs[c->n_subs].peers_pending = true;
	c->n_subs++;
	/* A watcher is not announced: it joins with its first presence. */
	st->subs[st->n_subs++] = c->conn;
	net_ws_wake(S->n, c->conn);
}

static void observe_commit(struct server *S, double seconds)
{
	int i;

	for (i = 0; i < N_BUCKETS && seconds > bucket_s[i]; i++)
		;
	S->m.commit_bucket[i]++;
	S->m.commit_sum_s += seconds;
}

/* Answers every batch of the turn: acks after a commit, else "storage". */
static void answer_pending(struct server *S, int commit_rc)
{
	for (int i = 0; i < S->n_pend; i++) {
		struct pending *p = &S->pend[i];
		proto_buf b;
		edit_error err;
		size_t len;
		char *f;

		if (commit_rc)
			edit_error_set(&err, RIGD_E_STORAGE, -1, "", "the edit could not be stored: %s",
				       engine_errmsg(S->e));
		if (p->report) {
			/* A glTF import: the scene it created goes again when
			 * the import could not be stored. */
			if (commit_rc)
				respond_error(S, p->conn, &err);
			else
				respond_import(S, p);
			if (commit_rc && p->created[0]) {
				if (engine_scene_delete(S->e, p->created) == 0)
					scene_gone(S, p->created);
				else
					logf_(LOG_WARN, "cannot delete scene %s after a failed import",
					      p->created);
			}
			free(p->report);
			p->report = NULL;
			continue;
		}
		if (p->http) {
			proto_buf_init(&b, 0);
			if (commit_rc) {
				respond_error(S, p->conn, &err);
			} else if (proto_encode_http_ack(&b, (uint64_t)p->seq, p->recomputed) == 0) {
				respond_json(S, p->conn, 200, &b);
				continue;
			} else {
				respond_code(S, p->conn, RIGD_E_NOMEM, "", "out of memory");
			}
			proto_buf_release(&b);
			continue;
		}
		if (!p->reply)
			continue;  /* the client has gone */
		{
			struct client *c = client_get(S, p->conn);

			if (!c)
				continue;
			proto_buf_init(&b, S->head);
			if (commit_rc ? proto_encode_error(&b, &p->req, &err)
				      : proto_encode_ack(&b, &p->req, (uint64_t)p->seq, p->recomputed)) {
				proto_buf_release(&b);
				f = NULL;
				len = 0;
			} else {
				f = take_frame(&b, &len);
			}
			fill(S, c, p->reply, f, len);
		}
	}
	S->n_pend = 0;
}

static void cb_turn(void *ctx)
{
	struct server *S = ctx;

	if (S->n_pend > 0 || engine_pending(S->e) > 0) {
		engine_stats before, after;
		double t0 = now_s();
		int rc;

		engine_get_stats(S->e, &before);
		rc = engine_commit(S->e);
		observe_commit(S, now_s() - t0);
		engine_get_stats(S->e, &after);
		if (rc) {
			S->m.commit_failures++;
			S->m.batches_failed += (uint64_t)S->n_pend;
			logf_(LOG_ERROR, "commit failed: %s", engine_errmsg(S->e));
		} else {
			S->m.commits++;
			S->m.batches_ok += after.batches - before.batches;
			S->m.ops += after.ops - before.ops;
		}
		answer_pending(S, rc);
		for (int i = 0; i < S->n_scenes; i++) {
			struct sstate *st = S->scenes[i];
			struct roots_ctx rctx;
			long n;

			if (!st->touched)
				continue;
			st->touched = false;
			if (rc) {
				idlist_free(&st->turn_changed);
				idlist_free(&st->turn_removed);
				idlist_free(&st->turn_roots);
				st->turn_lost = false;
				continue;
			}
			rctx.s = engine_scene(S->e, st->name);
			rctx.roots = &st->turn_roots;
			rctx.rc = 0;
			n = rctx.s ? engine_update(S->e, st->name, collect_roots, &rctx) : 0;
			if (n > 0)
				S->m.recomputed += (uint64_t)n;
			if (rctx.rc || st->turn_lost) {
				/* Without the roots or the changes no delta is exact:
				 * snapshots. */
				st->turn_lost = false;
				idlist_free(&st->turn_changed);
				idlist_free(&st->turn_removed);
				idlist_free(&st->turn_roots);
				journal_clear(S, st, engine_seq(S->e, st->name));
			} else if (engine_seq(S->e, st->name) > st->turn_from) {
				journal_add(S, st, engine_seq(S->e, st->name));
			} else {
				idlist_free(&st->turn_changed);
				idlist_free(&st->turn_removed);
				idlist_free(&st->turn_roots);
			}
			for (int k = 0; k < st->n_subs; k++)
				net_ws_wake(S->n, st->subs[k]);
		}
	}
	/* Clients that could not be served while the turn was open. */
	for (int i = 0; i < S->n_wake; i++) {
		struct client *c = client_get(S, S->wake[i]);

		if (c) {
			c->wake_after_turn = false;
			net_ws_wake(S->n, c->conn);
		}
	}
	S->n_wake = 0;
	/* Then what waited for the commit, in arrival order. */
	while (S->dhead) {
		struct deferred *d = S->dhead;

		S->dhead = d->next;
		if (!S->dhead)
			S->dtail = NULL;
		if (d->kind == D_HTTP)
			http_deferred(S, d);
		else
			do_subscribe(S, d);
		deferred_free(d);
		/* A glTF import submits a batch: what comes after it waits for
		 * its commit, in the next turn (submit scheduled one), so that
		 * nothing reads a scene with a batch awaiting its commit. */
		if (engine_pending(S->e) > 0)
			break;
	}
}

/* ---- /metrics ---- */

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void http_metrics(struct server *S, uint64_t conn)
{
	net_stats ns;
	engine_stats es;
	struct rusage ru;
	proto_buf b;
	char line[256];
	uint64_t cum = 0;
	long subs = 0;
	int rc = 0;

	net_get_stats(S->n, &ns);
	engine_get_stats(S->e, &es);
	getrusage(RUSAGE_SELF, &ru);
	for (int i = 0; i < S->n_scenes; i++)
		subs += S->scenes[i]->n_subs;
	proto_buf_init(&b, 0);
#define METRIC(type, name, help, fmt, value)                                                    \
	do {                                                                                    \
		int len_ = snprintf(line, sizeof(line), "# HELP " name " " help "\n# TYPE " name \
				    " " type "\n" name " " fmt "\n", value);                    \
		rc = rc || proto_buf_append(&b, line, (size_t)len_);                            \
	} while (0)
	METRIC("gauge", "rigd_clients", "Open websocket connections.", "%ld", ns.ws_clients);
	METRIC("gauge", "rigd_subscriptions", "Scene subscriptions of open websockets.", "%ld",
	       subs);
	METRIC("gauge", "rigd_scenes", "Scenes in the database.", "%d",
	       engine_scenes(S->e, NULL, 0));
	METRIC("counter", "rigd_connections_total", "Websocket connections accepted.",
	       "%" PRIu64, ns.ws_opened);
	METRIC("counter", "rigd_connections_rejected_total",
	       "Websocket handshakes refused (path, Origin, client limit).", "%" PRIu64,
	       ns.ws_rejected);
	METRIC("counter", "rigd_batches_total", "Edit batches committed.", "%" PRIu64,
	       S->m.batches_ok);
	METRIC("counter", "rigd_batches_failed_total", "Edit batches refused or not stored.",
	       "%" PRIu64, S->m.batches_failed);
	METRIC("counter", "rigd_ops_total", "Ops in committed batches.", "%" PRIu64, S->m.ops);
	METRIC("counter", "rigd_recomputed_matrices_total", "World matrices recomputed.",
	       "%" PRIu64, S->m.recomputed);
	METRIC("counter", "rigd_commits_total", "Group commits (one per turn with batches).",
	       "%" PRIu64, S->m.commits);
	METRIC("counter", "rigd_commit_failures_total", "Group commits that failed.", "%" PRIu64,
	       S->m.commit_failures);
	{
		static const char hist[] = "# HELP rigd_commit_seconds Latency of a group commit.\n"
					   "# TYPE rigd_commit_seconds histogram\n";

		rc = rc || proto_buf_append(&b, hist, sizeof(hist) - 1);
	}
	for (int i = 0; i <= N_BUCKETS; i++) {
		int len;

		cum += S->m.commit_bucket[i];
		if (i < N_BUCKETS)
			len = snprintf(line, sizeof(line),
				       "rigd_commit_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
				       bucket_s[i], cum);
		else
			len = snprintf(line, sizeof(line),
				       "rigd_commit_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
				       "rigd_commit_seconds_sum %.9f\nrigd_commit_seconds_count %" PRIu64
				       "\n", cum, S->m.commit_sum_s, cum);
		rc = rc || proto_buf_append(&b, line, (size_t)len);
	}
	METRIC("counter", "rigd_bytes_sent_total", "Payload bytes written to sockets.",
	       "%" PRIu64, ns.bytes_sent);
	METRIC("counter", "rigd_bytes_received_total", "Websocket and HTTP body bytes read.",
	       "%" PRIu64, ns.bytes_received);
	METRIC("counter", "rigd_ws_messages_total", "Websocket messages received.", "%" PRIu64,
	       S->m.ws_messages);
	METRIC("counter", "rigd_http_requests_total", "HTTP requests (API and files).",
	       "%" PRIu64, ns.http_requests);
	METRIC("counter", "rigd_updates_sent_total", "Update frames sent to subscribers.",
	       "%" PRIu64, S->m.updates_sent);
	METRIC("counter", "rigd_snapshots_sent_total", "Snapshot frames sent to subscribers.",
	       "%" PRIu64, S->m.snapshots_sent);
	METRIC("counter", "rigd_updates_coalesced_total",
	       "Turns folded into a later update for a client that was behind.", "%" PRIu64,
	       S->m.updates_coalesced);
	METRIC("counter", "rigd_presence_coalesced_total",
	       "Presence messages replaced by a newer one before they were sent.", "%" PRIu64,
	       S->m.presence_coalesced);
	METRIC("counter", "rigd_replies_sent_total", "Replies and notices sent.", "%" PRIu64,
	       S->m.replies_sent);
	METRIC("counter", "rigd_rate_limited_total",
	       "Messages and requests refused or delayed for their rate.", "%" PRIu64,
	       S->m.rate_limited);
	METRIC("counter", "rigd_unauthorized_total", "Requests and messages without a valid token.",
	       "%" PRIu64, S->m.unauthorized);
	METRIC("counter", "rigd_forbidden_total",
	       "Requests and messages whose token lacks the role.", "%" PRIu64, S->m.forbidden);
	METRIC("counter", "rigd_clients_dropped_total",
	       "Clients closed (1008) because they did not read their replies.", "%" PRIu64,
	       S->m.clients_dropped);
	METRIC("counter", "rigd_ws_closed_too_big_total", "Websockets closed (1009) for size.",
	       "%" PRIu64, ns.ws_closed_too_big);
	METRIC("counter", "rigd_snapshots_written_total", "Scene snapshots stored.", "%" PRIu64,
	       es.snapshots);
	METRIC("gauge", "rigd_resident_memory_bytes", "Resident set size.", "%ld",
	       rss_kb() * 1024);
	METRIC("counter", "rigd_cpu_seconds_total", "User and system CPU time.", "%.6f",
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6);
	METRIC("gauge", "rigd_uptime_seconds", "Seconds since start.", "%.3f",
	       now_s() - S->started);
#undef METRIC
	if (rc) {
		proto_buf_release(&b);
		respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	respond_buf(S, conn, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
}

/* ---- the demo rig ---- */

/* Seed chapter, section 4: base, arm, hand at yaw 30 and bend 40. */
static int seed_demo(struct server *S)
{
	static const struct {
		const char *id, *parent, *name;
		double t[3], euler[3], pivot[3], half[3];
	} nodes[] = {
		{"base", NULL, "Base", {0, 0.2, 0}, {0, 30, 0}, {0, 0, 0}, {0.35, 0.2, 0.35}},
		{"arm", "base", "Arm", {0, 0.9, 0}, {0, 0, 40}, {0, -0.7, 0}, {0.12, 0.7, 0.12}},
		{"hand", "arm", "Hand", {0, 0.7, 0}, {0, 0, 0}, {0, 0, 0}, {0.22, 0.12, 0.22}},
	};
	edit_batch batch;
	edit_error err;
	engine_ack ack;
	int rc;

	rc = engine_scene_create(S->e, "demo");
	if (rc)
		return rc;
	edit_batch_init(&batch);
	snprintf(batch.client, sizeof(batch.client), "rigd-seed");
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		edit_op *op = edit_batch_add(&batch, EDIT_CREATE, nodes[i].id);

		if (!op) {
			edit_batch_release(&batch);
			return RIGD_E_NOMEM;
		}
		if (nodes[i].parent && (rc = edit_op_set_parent(op, nodes[i].parent))) {
			edit_batch_release(&batch);
			return rc;
		}
		if ((rc = edit_op_set_name(op, nodes[i].name)) ||
		    (rc = edit_op_set_mesh(op, "box"))) {
			edit_batch_release(&batch);
			return rc;
		}
		op->fields |= EDIT_F_T | EDIT_F_EULER | EDIT_F_PIVOT | EDIT_F_BOUNDS | EDIT_F_KIND;
		op->t = (vec3){nodes[i].t[0], nodes[i].t[1], nodes[i].t[2]};
		op->euler_deg = (vec3){nodes[i].euler[0], nodes[i].euler[1], nodes[i].euler[2]};
		op->pivot = (vec3){nodes[i].pivot[0], nodes[i].pivot[1], nodes[i].pivot[2]};
		op->has_bounds = true;
		op->bounds.min = (vec3){-nodes[i].half[0], -nodes[i].half[1], -nodes[i].half[2]};
		op->bounds.max = (vec3){nodes[i].half[0], nodes[i].half[1], nodes[i].half[2]};
		op->node_kind = NODE_MESH;
	}
	engine_ack_init(&ack);
	rc = engine_submit(S->e, "demo", &batch, &ack, &err);
	engine_ack_release(&ack);
	edit_batch_release(&batch);
	if (rc) {
		logf_(LOG_ERROR, "seeding the demo rig: %s", err.message);
		return rc;
	}
	if ((rc = engine_commit(S->e)) != 0)
		return rc;
	engine_update(S->e, "demo", NULL, NULL);
	return 0;
}

/* True for an address only this machine can reach. */
static bool host_is_loopback(const char *host)
{
	return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	       strcmp(host, "localhost") == 0;
}

/* Loads the tokens of the flags and the file, and applies the rule for a
 * server without any. 0, or 2 after saying what was wrong. */
static int setup_access(struct server *S)
{
	char why[128];

	for (int i = 0; i < S->o.n_token_args; i++)
		if (token_spec(S, S->o.token_args[i], why, sizeof(why)) != 0) {
			fprintf(stderr, "rigd: %s: %s\n",
				strncmp(S->o.token_args[i], "admin:*:", 8) == 0 ? "--admin-token"
										  : "--token",
				why);
			return 2;
		}
	if (S->o.tokens_file && tokens_load_file(S, S->o.tokens_file) != 0)
		return 2;
	if (S->n_tokens > 0) {
		logf_(LOG_INFO, "%d tokens configured: every API request and message is authorised",
		      S->n_tokens);
		return 0;
	}
	if (!host_is_loopback(S->o.host) && !S->o.insecure_remote) {
		fprintf(stderr, "rigd: refusing to serve %s without tokens: anyone who can reach it "
			"could read and edit every scene. Configure --token/--admin-token/--tokens, "
			"or listen on 127.0.0.1, or accept the risk with --insecure-allow-remote.\n",
			S->o.host);
		return 2;
	}
	fprintf(stderr, host_is_loopback(S->o.host)
		? "rigd: no tokens configured: access control is off, so rigd listens on "
		  "loopback only (docs/security.md)\n"
		: "rigd: no tokens configured and --insecure-allow-remote: anyone who can reach "
		  "%s may read and edit every scene\n", S->o.host);
	return 0;
}

/* mkdir -p of the directory part of 'path'. */
static int make_parent_dirs(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static void on_signal(int sig)
{
	got_signal = sig;
	if (signal_net)
		net_stop(signal_net);
}

static uint32_t boot_id(void)
{
	struct timespec ts;
	uint32_t x;
	FILE *f = fopen("/dev/urandom", "rb");

	if (f && fread(&x, sizeof(x), 1, f) == 1) {
		fclose(f);
		return x;
	}
	if (f)
		fclose(f);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec ^ ((uint32_t)getpid() << 16);
}

static void server_free(struct server *S)
{
	for (int i = 0; i < S->cap_clients; i++)
		if (S->clients[i]) {
			queue_free(S->clients[i]);
			free(S->clients[i]->subs);
			free(S->clients[i]->name);
			free(S->clients[i]);
		}
	free(S->clients);
	for (int i = 0; i < S->n_scenes; i++)
		sstate_free(S, S->scenes[i]);
	free(S->scenes);
	while (S->dhead) {
		struct deferred *d = S->dhead;

		S->dhead = d->next;
		deferred_free(d);
	}
	for (int i = 0; i < S->n_pend; i++)
		free(S->pend[i].report);
	free(S->pend);
	free(S->wake);
	free(S->tokens);
}

int serve_main(int argc, char **argv)
{
	struct server S;
	net_config ncfg;
	net_callbacks cb;
	engine_opts eo;
	struct sigaction sa;
	struct stat st;
	char msg[512], origin[300];
	bool fresh;
	int rc, err = 0, exit_code = 1;

	memset(&S, 0, sizeof(S));
	if ((rc = config_parse(argc, argv, &S.o)) != 0)
		return rc;
	log_level = S.o.log_level;
	if ((rc = setup_access(&S)) != 0) {
		server_free(&S);
		return rc;
	}
	S.started = now_s();
	S.boot_id = boot_id();
	S.head = net_frame_head();
	S.lim = proto_limits_default();
	S.lim.max_bytes = S.o.max_message;
	S.lim.edit.max_ops = S.o.max_ops;

	/* The database: created (with its directory) and seeded on first start. */
	fresh = stat(S.o.db, &st) != 0;
	if (fresh && make_parent_dirs(S.o.db) != 0) {
		fprintf(stderr, "rigd: cannot create the directory of %s: %s\n", S.o.db,
			strerror(errno));
		return 1;
	}
	eo = engine_opts_default();
	eo.sync_normal = S.o.sync_normal;
	eo.max_nodes = S.o.max_nodes;
	eo.limits.max_ops = S.o.max_ops;
	S.e = engine_open(S.o.db, &eo, &err, msg, sizeof(msg));
	if (!S.e) {
		fprintf(stderr, "rigd: cannot open %s: %s (%s)\n", S.o.db, msg, err_code(err));
		return 1;
	}
	if (fresh && engine_scenes(S.e, NULL, 0) == 0 && (rc = seed_demo(&S)) != 0) {
		fprintf(stderr, "rigd: cannot seed the demo rig in %s: %s\n", S.o.db,
			engine_errmsg(S.e));
		goto out;
	}

	net_config_defaults(&ncfg);
	ncfg.host = S.o.host;
	ncfg.port = S.o.port;
	ncfg.web_root = S.o.web;
	ncfg.origins = S.o.origins;
	ncfg.n_origins = S.o.n_origins;
	ncfg.max_message = S.o.max_message;
	ncfg.max_fragments = S.o.max_fragments;
	ncfg.max_body = S.o.max_body > S.o.max_gltf ? S.o.max_body : S.o.max_gltf;
	ncfg.idle_timeout_s = S.o.idle_timeout_s;
	ncfg.max_connections = S.o.max_clients;
	ncfg.log_level = S.o.log_level > LOG_WARN ? S.o.log_level - 1 : 0;
	ncfg.tls_cert = S.o.tls_cert;
	ncfg.tls_key = S.o.tls_key;
	memset(&cb, 0, sizeof(cb));
	cb.ctx = &S;
	cb.http = cb_http;
	cb.ws_open = cb_ws_open;
	cb.ws_message = cb_ws_message;
	cb.ws_writable = cb_ws_writable;
	cb.ws_closed = cb_ws_closed;
	cb.turn = cb_turn;
	S.n = net_new(&ncfg, &cb);
	if (!S.n)
		goto out;
	if (S.o.n_origins == 0) {
		/* The server's own origin, as a browser that loaded the viewer
		 * from it writes it. */
		bool v6 = strchr(S.o.host, ':') != NULL;
		bool loopback = strcmp(S.o.host, "127.0.0.1") == 0 || strcmp(S.o.host, "::1") == 0;
		const char *scheme = net_tls(S.n) ? "https" : "http";

		snprintf(origin, sizeof(origin), v6 ? "%s://[%s]:%d" : "%s://%s:%d", scheme,
			 S.o.host, net_port(S.n));
		rc = net_add_origin(S.n, origin);
		if (loopback) {
			snprintf(origin, sizeof(origin), "%s://localhost:%d", scheme, net_port(S.n));
			rc = rc || net_add_origin(S.n, origin);
		}
		if (rc) {
			fprintf(stderr, "rigd: out of memory\n");
			goto out;
		}
	}
	if (stat(S.o.web, &st) != 0 || !S_ISDIR(st.st_mode))
		logf_(LOG_WARN, "web root %s is not a directory: only the API is served", S.o.web);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	signal_net = S.n;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf(strchr(S.o.host, ':') ? "rigd: serving %s://[%s]:%d/ (database %s)\n"
				      : "rigd: serving %s://%s:%d/ (database %s)\n",
	       net_tls(S.n) ? "https" : "http", S.o.host, net_port(S.n), S.o.db);
	fflush(stdout);

	rc = net_run(S.n);
	signal_net = NULL;
	if (rc)
		logf_(LOG_ERROR, "the event loop failed");
	/* Commit what this last pass received, answer it, then say goodbye.
	 * A glTF import defers what came after it by a turn: run turns until
	 * nothing waits. */
	do
		cb_turn(&S);
	while (S.n_pend > 0 || engine_pending(S.e) > 0 || S.dhead);
	net_drain(S.n, NET_CLOSE_GOING_AWAY, 3000);
	logf_(LOG_INFO, "stopped by signal %d", (int)got_signal);
	exit_code = rc ? 1 : 0;
out:
	net_free(S.n);
	engine_close(S.e);
	server_free(&S);
	return exit_code;
}
