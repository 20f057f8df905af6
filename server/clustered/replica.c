/*
 * replica.c: every scene kept up to date from its owner's log stream (see
 * replica.h).
 */
#include "replica.h"
#include "state.h"

#include "serve/clients.h"
#include "serve/journal.h"
#include "serve/log.h"
#include "serve/metrics.h"
#include "serve/rooms.h"
#include "serve/server.h"
#include "serve/turn.h"
#include "serve/util.h"

#include "cluster/cluster.h"
#include "codec/asset_check.h"
#include "core/err.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What this process knows of one scene's log stream. */
struct rep {
	char scene[SCENE_ID_MAX + 1];
	int64_t confirmed;           /* as owner: the stream holds seqs up to here */
	int64_t next;                /* the seq expected next while in_turn */
	bool in_turn;                /* batches of it are submitted this turn */
	bool behind;                 /* a gap or a refusal was logged */
	bool gap;                    /* behind what the stream keeps: asking the others */
	double asked_s;              /* when the others were last asked (serve_now_s) */
	int64_t asked_since;         /* the first seq of that ask */
	int64_t trusted;             /* this copy's batches up to here are the cluster's:
				      * taken from the stream or a catch-up, or seen in the
				      * stream at a seq this copy has */
	/* Settling batches committed here against the stream (fence): */
	int64_t appended;            /* as owner: the last seq whose append was sent */
	int64_t doubt;               /* the lowest seq committed here whose append
					was not confirmed (everything below is the
					cluster's); 0: none */
	int64_t verify;              /* > 0: the copy is checked against the stream
					(at start, after a reconnection), probing
					this seq, walking down to a batch they share */
	bool seen;                   /* known since this process connected */
	bool probing;                /* a probe awaits its answer */
	double probe_s;              /* when the last probe was sent */
};

struct replica {
	struct rep *v;
	int n, cap;
	struct pending *held;        /* answers waiting for the stream to hold them */
	int n_held, cap_held;
	uint64_t applied, gaps, refused, published, unconfirmed;
	uint64_t asked, sent;        /* catch-up: asks made, batches sent as owner */
	uint64_t settled, rewinds, rewound, reappended, unreplicated;
	uint64_t connects;           /* the cluster's connections when last looked */
};

static struct replica *replica_of(struct server *S)
{
	if (!S->cx->replica)
		S->cx->replica = calloc(1, sizeof(*S->cx->replica));
	return S->cx->replica;
}

static struct rep *rep_get(struct server *S, const char *name)
{
	struct replica *R = replica_of(S);
	struct rep *v;

	if (!R)
		return NULL;
	for (int i = 0; i < R->n; i++)
		if (strcmp(R->v[i].scene, name) == 0)
			return &R->v[i];
	if (!(v = serve_grow(R->v, &R->cap, R->n + 1, sizeof(*v))))
		return NULL;
	R->v = v;
	v = &R->v[R->n++];
	memset(v, 0, sizeof(*v));
	snprintf(v->scene, sizeof(v->scene), "%s", name);
	return v;
}

#define ASK_EVERY_S 2.0   /* a gap asks the others again this often */
#define SEND_MAX 500      /* batches a process sends for one ask */

/*
 * Asks every other live process (the registry's last heartbeat) for the
 * batches of the scene of 'r' from seq 'since': each sends what its copy
 * holds of them that the cluster's log confirmed, and duplicates are
 * skipped as batches this copy has. Asking all at once, rather than the
 * owner alone, is what lets an owner that is itself behind catch up.
 */
static void ask_others(struct server *S, struct rep *r, int64_t since)
{
	cluster_process_info *v;
	int n;

	r->asked_s = serve_now_s();
	r->asked_since = since;
	if (since < 1 || (n = cluster_processes(S->cx->cl, NULL, 0)) <= 0)
		return;  /* nobody known yet: asked again later */
	if (!(v = calloc((size_t)n, sizeof(*v))))
		return;
	n = cluster_processes(S->cx->cl, v, n);
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i].id, cluster_id(S->cx->cl)) == 0 ||
		    cluster_catchup_ask(S->cx->cl, v[i].id, r->scene, (uint64_t)since) != 0)
			continue;
		S->cx->replica->asked++;
		serve_log(LOG_INFO, "cluster: scene %s: asked process %s for batches from %" PRId64,
			  r->scene, v[i].id, since);
	}
	free(v);
}

/* Logs a gap or a refusal once until the scene moves on. */
static void behind(struct server *S, struct rep *r, const char *fmt, uint64_t seq,
		   int64_t have, const char *why)
{
	if (r->behind)
		return;
	r->behind = true;
	serve_log(LOG_ERROR, fmt, r->scene, seq, have, why);
}

/*
 * The assets a log line carries, checked as a log import checks them
 * (asset_check: their kind's reader keeps the bytes unchanged, under the
 * SHA-256 the line names), into out[0..n) and their ids into ids[0..n),
 * which the caller releases. 0, or the reader's error / bad_field in
 * 'err' (nothing to release then).
 */
static int line_assets(const proto_log_asset *a, int n, engine_asset *out, asset_checked *ids,
		       edit_error *err)
{
	if (n > ENGINE_BATCH_ASSETS_MAX) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "assets", "%d assets a batch at most",
			       ENGINE_BATCH_ASSETS_MAX);
		return RIGD_E_BAD_FIELD;
	}
	for (int i = 0; i < n; i++) {
		int rc = asset_check(a[i].kind, a[i].file, a[i].bytes, a[i].len, a[i].sha256,
				     "assets", &ids[i], err);
		if (rc) {
			while (i--)
				asset_checked_release(&ids[i]);
			return rc;
		}
		out[i] = (engine_asset){ a[i].file, a[i].kind, a[i].bytes, a[i].len, ids[i].ids,
					 ids[i].n_ids };
	}
	return 0;
}

static bool have_line(struct server *S, const char *name, int64_t seq, const char *line,
		      size_t len);

void replica_line(void *ctx, const char *name, uint64_t seq, int64_t token, const char *line,
		  size_t len)
{
	struct server *S = ctx;
	struct replica *R = replica_of(S);
	struct rep *r;
	proto_log_line ll;
	proto_log_asset *assets = NULL;
	engine_asset checked[ENGINE_BATCH_ASSETS_MAX];
	asset_checked ids[ENGINE_BATCH_ASSETS_MAX];
	int n_assets = 0;
	edit_error err;
	int64_t expect, have = engine_seq(S->e, name);
	int rc;

	if (have < 0 || !R || !(r = rep_get(S, name)))
		return;  /* not a scene of this database (creation is not replicated) */
	if (!r->seen) {
		/* First heard of since this process connected: its copy may
		 * hold batches the stream does not (a crash between a commit
		 * and its append): checked before anything applies. */
		r->seen = true;
		r->verify = have;
	}
	if (r->verify || (r->doubt && (int64_t)seq >= r->doubt))
		return;  /* read again once the copy is settled (fence_settled) */
	expect = r->in_turn ? r->next : have + 1;
	if ((int64_t)seq < expect && (int64_t)seq > r->confirmed && (int64_t)seq <= r->appended &&
	    !have_line(S, name, (int64_t)seq, line, len)) {
		/* A batch committed here, its append not answered yet, and the
		 * stream holds another one at its seq: not "one it has". */
		serve_log(LOG_WARN, "cluster: scene %s: the log stream holds another batch at seq %"
			  PRIu64 " than the one this process committed there: settling it", name, seq);
		r->doubt = !r->doubt || (int64_t)seq < r->doubt ? (int64_t)seq : r->doubt;
		return;
	}
	if ((int64_t)seq < expect) {
		if ((int64_t)seq <= have && (int64_t)seq > r->trusted)
			r->trusted = (int64_t)seq;  /* the stream holds the seq this copy has */
		return;  /* this process has it */
	}
	if ((int64_t)seq > expect) {
		R->gaps++;
		behind(S, r, "cluster: scene %s: the log stream goes on at seq %" PRIu64 " and this "
		       "process has %" PRId64 "%s: it fell behind what the stream keeps and asks the "
		       "scene's owner and the other processes for the batches it lacks", seq,
		       expect - 1, "");
		r->gap = true;
		if (serve_now_s() - r->asked_s >= ASK_EVERY_S)
			ask_others(S, r, expect);
		return;
	}
	edit_error_clear(&err);
	if (proto_decode_log_line_assets(line, len, &S->lim, &ll, &assets, &n_assets, &err) != 0 ||
	    ll.seq != seq || line_assets(assets, n_assets, checked, ids, &err) != 0) {
		if (!err.code)
			edit_error_set(&err, RIGD_E_BAD_SEQ, -1, "seq", "the entry and its line disagree");
		R->refused++;
		serve_log(LOG_WARN, "cluster: scene %s: log entry %" PRIu64 " refused: %s", name, seq,
			  err.message);
		edit_batch_release(&ll.batch);
		proto_log_assets_free(assets, n_assets);
		return;
	}
	/* An undo or redo stays one here. */
	rc = turn_submit_logged(S, name, &ll.batch, ll.kind, ll.target, checked, n_assets, &err);
	for (int i = 0; i < n_assets; i++)
		asset_checked_release(&ids[i]);
	proto_log_assets_free(assets, n_assets);
	if (rc) {
		R->refused++;
		behind(S, r, "cluster: scene %s: batch %" PRIu64 " of the log does not apply to this "
		       "process's copy (seq %" PRId64 "): %s", seq, expect - 1, err.message);
	} else {
		r->next = (int64_t)seq + 1;
		r->in_turn = true;
		r->behind = false;
		r->gap = false;
		r->trusted = (int64_t)seq;
		R->applied++;
	}
	edit_batch_release(&ll.batch);
}

void replica_catchup_line(void *ctx, const char *name, uint64_t seq, const char *line,
			  size_t len, bool more)
{
	struct server *S = ctx;
	struct rep *r;

	replica_line(ctx, name, seq, 0, line, len);
	r = S->cx->replica && engine_seq(S->e, name) >= 0 ? rep_get(S, name) : NULL;
	if (!r || !r->in_turn || r->next != (int64_t)seq + 1)
		return;  /* a duplicate (several processes answer), or refused */
	if (more) {
		r->gap = true;  /* still behind: asked again later if this ask goes unanswered */
		if (r->asked_since != (int64_t)seq + 1)
			ask_others(S, r, (int64_t)seq + 1);  /* the next part, at once */
	} else if (S->cx->cl) {
		/* The stream's entries past this part; a gap there is found again. */
		r->gap = false;
		cluster_follow(S->cx->cl, name, true);
	}
}

struct send {
	struct server *S;
	const char *to, *name;
	int64_t seq, last;
	bool more;
};

static int send_line(void *ctx, const char *line, size_t len)
{
	struct send *p = ctx;
	int rc = cluster_catchup_line(p->S->cx->cl, p->to, p->name, (uint64_t)p->seq, line, len,
				      p->seq == p->last && p->more);

	if (rc == 0)
		p->S->cx->replica->sent++;
	p->seq++;
	return rc;
}

void replica_catchup_ask(void *ctx, const char *from, const char *name, uint64_t since)
{
	struct server *S = ctx;
	struct rep *r;
	cluster_lease_info li;
	struct send p;
	int64_t upto, have = engine_seq(S->e, name);
	int rc;

	if (have < 0 || !replica_of(S) || !(r = rep_get(S, name)))
		return;
	/* Only batches the cluster's log holds: taken from the stream or a
	 * catch-up, seen there, or confirmed to this process as their owner;
	 * a batch whose append failed may not be kept by the cluster. */
	upto = r->trusted > r->confirmed ? r->trusted : r->confirmed;
	if (cluster_owns(S->cx->cl, name, NULL)) {
		cluster_lease_of(S->cx->cl, name, &li);
		if (li.log_seq > upto)
			upto = li.log_seq;
	}
	if (upto > have)
		upto = have;
	if (r->doubt && upto >= r->doubt)
		upto = r->doubt - 1;  /* not settled against the stream yet */
	if ((int64_t)since > upto || since > ((uint64_t)1 << 53))
		return;  /* this copy has none of them: another process answers */
	p.S = S;
	p.to = from;
	p.name = name;
	p.seq = (int64_t)since;
	p.last = upto - (int64_t)since >= SEND_MAX ? (int64_t)since + SEND_MAX - 1 : upto;
	p.more = p.last < upto;
	rc = engine_log(S->e, name, (int64_t)since, p.last, send_line, &p);
	serve_log(rc ? LOG_WARN : LOG_INFO, "cluster: scene %s: batches %" PRIu64 "..%" PRId64
		  " sent to process %s, which fell behind%s%s", name, since, p.last, from,
		  rc ? ": " : "", rc ? err_str(rc) : "");
}

/* ---- the fence: batches committed here that the stream did not confirm ---- */

#define PROBE_EVERY_S 0.5 /* an unsettled scene probes the stream again this often */

static struct rep *rep_find(struct server *S, const char *name)
{
	struct replica *R = S->cx->replica;

	for (int i = 0; R && i < R->n; i++)
		if (strcmp(R->v[i].scene, name) == 0)
			return &R->v[i];
	return NULL;
}

/* Asks the stream about the seq the scene of 'r' is settling, if any. */
static void settle(struct server *S, struct rep *r)
{
	int64_t at = r->verify ? r->verify : r->doubt;

	if (!at || r->probing || !S->cx->cl || cluster_state(S->cx->cl) != CLUSTER_UP)
		return;
	r->probe_s = serve_now_s();
	if (cluster_log_probe(S->cx->cl, r->scene, (uint64_t)at) == 0)
		r->probing = true;
}

/* The scene of 'r' is settled: the stream's entries it put off are read
 * again. */
static void settled(struct server *S, struct rep *r)
{
	r->doubt = 0;
	r->verify = 0;
	r->behind = false;
	cluster_follow(S->cx->cl, r->scene, true);
}

/* The first 'what' in the 'n' bytes at 'h', or NULL. */
static const char *find(const char *h, size_t n, const char *what)
{
	size_t w = strlen(what);

	for (size_t i = 0; i + w <= n; i++)
		if (memcmp(h + i, what, w) == 0)
			return h + i;
	return NULL;
}

/* Whether two log lines carry the same batch: the same bytes but for the
 * "time" each process stamps its copy with (a line starts {"seq":N,"time":T,
 * "client":...). */
static bool same_batch(const char *a, size_t alen, const char *b, size_t blen)
{
	static const char t[] = ",\"time\":", cl[] = ",\"client\":";
	const char *at = find(a, alen < 48 ? alen : 48, t), *bt = find(b, blen < 48 ? blen : 48, t);
	const char *ac = at ? find(at, alen - (size_t)(at - a), cl) : NULL;
	const char *bc = bt ? find(bt, blen - (size_t)(bt - b), cl) : NULL;

	if (!ac || !bc)
		return alen == blen && memcmp(a, b, alen) == 0;
	return at - a == bt - b && memcmp(a, b, (size_t)(at - a)) == 0 &&
	       alen - (size_t)(ac - a) == blen - (size_t)(bc - b) &&
	       memcmp(ac, bc, alen - (size_t)(ac - a)) == 0;
}

struct cmp {
	const char *line;
	size_t len;
	bool same;
};

static int cmp_line(void *ctx, const char *line, size_t len)
{
	struct cmp *m = ctx;

	m->same = same_batch(line, len, m->line, m->len);
	return 0;
}

/* Whether batch 'seq' of this process's copy of 'name' is 'line'. */
static bool have_line(struct server *S, const char *name, int64_t seq, const char *line,
		      size_t len)
{
	struct cmp m = { line, len, false };

	return line && engine_log(S->e, name, seq, seq, cmp_line, &m) == 0 && m.same;
}

/* Every subscriber of 'name' starts again from a snapshot (the scene was
 * taken back: cursors past it name batches that are gone). */
static void resync_subscribers(struct server *S, const char *name, int64_t seq)
{
	struct room *st = rooms_find(S, name);

	if (!st)
		return;
	rooms_restart(st, seq);
	for (int k = 0; k < st->n_subs; k++) {
		struct client *c = clients_get(S, st->subs[k]);
		struct sub *sb = c ? rooms_sub_find(c, name) : NULL;

		if (sb)
			sb->cursor = -1;
		net_ws_wake(S->n, st->subs[k]);
	}
}

/* Takes the copy of 'r''s scene back to seq 'from' - 1: its batches from
 * 'from' on are not the cluster's ('why'). Then the stream applies. */
static void rewind_copy(struct server *S, struct rep *r, int64_t from, const char *why)
{
	struct replica *R = S->cx->replica;
	int64_t have = engine_seq(S->e, r->scene);
	edit_error err;
	int rc;

	if (from < 1 || from > have) {
		settled(S, r);
		return;
	}
	rc = engine_rewind(S->e, r->scene, from - 1);
	if (rc == RIGD_E_INTERNAL)
		return;  /* batches of it await the commit: the next tick tries again */
	if (rc) {
		serve_log(LOG_ERROR, "cluster: scene %s: cannot rewind to seq %" PRId64 ": %s",
			  r->scene, from - 1, engine_errmsg(S->e));
		return;
	}
	R->rewinds++;
	R->rewound += (uint64_t)(have - from + 1);
	serve_log(LOG_ERROR, "cluster: scene %s: batches %" PRId64 "..%" PRId64 " committed here "
		  "are not the cluster's (%s): rewound to seq %" PRId64 ", the log stream's "
		  "batches apply from there", r->scene, from, have, why, from - 1);
	edit_error_set(&err, RIGD_E_UNAVAILABLE, -1, "scene", "the edit was committed by this "
		       "process but is not the cluster's: scene '%s' was taken back to seq %" PRId64
		       "; send it again", r->scene, from - 1);
	for (int i = 0; i < R->n_held;) {
		struct pending take = R->held[i];

		if (strcmp(take.scene, r->scene) != 0 || take.seq < from) {
			i++;
			continue;
		}
		R->held[i] = R->held[--R->n_held];
		turn_answer_later(S, &take, &err);
	}
	if (r->confirmed >= from)
		r->confirmed = from - 1;
	if (r->appended >= from)
		r->appended = from - 1;
	if (r->trusted >= from)
		r->trusted = from - 1;
	r->gap = false;
	resync_subscribers(S, r->scene, from - 1);
	settled(S, r);
}

/* The stream ends before seq 'from' and this process owns the scene: its
 * batches from there are appended again (the script keeps seqs gapless). */
static void reappend(struct server *S, struct rep *r, int64_t from)
{
	int64_t have = engine_seq(S->e, r->scene);

	S->cx->replica->reappended += (uint64_t)(have - from + 1);
	serve_log(LOG_WARN, "cluster: scene %s: the log stream ends before seq %" PRId64 ", which "
		  "this process (its owner) committed: batches %" PRId64 "..%" PRId64 " are "
		  "appended again", r->scene, from, from, have);
	replica_publish(S, r->scene, from - 1, have);
	cluster_wait_replicas(S->cx->cl);
}

/* A probe's answer while checking the copy (r->verify): walks down to the
 * newest batch the copy and the stream share; what follows it is settled as
 * a doubt. */
static void verify_step(struct server *S, struct rep *r, int64_t seq, int64_t last,
			const char *line, size_t len)
{
	int64_t have = engine_seq(S->e, r->scene);

	if (have_line(S, r->scene, seq, line, len)) {
		if (r->doubt && seq >= r->doubt) {
			/* A doubt from before the check: the stream holds it. */
			S->cx->replica->settled++;
			serve_log(LOG_WARN, "cluster: scene %s: batches %" PRId64 "..%" PRId64 " are "
				  "in the log stream: confirmed", r->scene, r->doubt, seq);
		}
		r->verify = 0;
		r->doubt = seq < have ? seq + 1 : 0;
		if (r->confirmed < seq)
			r->confirmed = seq;  /* a resend of it is answered at once */
	} else if (line && seq == 1) {
		r->verify = 0;
		rewind_copy(S, r, 1, "the log stream holds other batches from seq 1");
		return;
	} else if (line) {
		r->verify = seq - 1;   /* they differ here: look further down */
	} else if (last == 0) {
		r->verify = 0;         /* an empty stream: nothing to check against */
	} else if (seq > last) {
		r->verify = last;      /* the copy runs past the stream: from its end */
	} else {
		r->verify = 0;         /* older than what the stream keeps */
		r->doubt = seq < have ? seq + 1 : 0;
		if (r->confirmed < seq)
			r->confirmed = seq;
		serve_log(LOG_INFO, "cluster: scene %s: batches up to %" PRId64 " are older than "
			  "what its log stream keeps and are not checked", r->scene, seq);
	}
	if (!r->verify && r->doubt)
		serve_log(LOG_WARN, "cluster: scene %s: batches %" PRId64 "..%" PRId64 " of this "
			  "process's copy are not in the log stream as they are here: settling them",
			  r->scene, r->doubt, have);
	if (!r->verify && !r->doubt)
		settled(S, r);
	else
		settle(S, r);
}

void replica_probed(void *ctx, const char *name, uint64_t seq, int64_t last, int64_t token,
		    const char *line, size_t len)
{
	struct server *S = ctx;
	struct rep *r = rep_find(S, name);
	int64_t have = engine_seq(S->e, name), at;
	cluster_lease_info li;
	char why[160];

	if (!r || !r->probing)
		return;
	r->probing = false;
	at = r->verify ? r->verify : r->doubt;
	if (last < 0 || (int64_t)seq != at)
		return;  /* no answer, or the scene moved on: probed again */
	if (at > have) {
		settled(S, r);
		return;
	}
	if (r->verify) {
		verify_step(S, r, at, last, line, len);
		return;
	}
	if (have_line(S, name, at, line, len)) {
		S->cx->replica->settled++;
		serve_log(LOG_WARN, "cluster: scene %s: batch %" PRId64 " is in the log stream: "
			  "confirmed", name, at);
		r->doubt = at < have ? at + 1 : 0;
		if (r->confirmed < at)
			r->confirmed = at;
		if (r->doubt)
			settle(S, r);
		else
			settled(S, r);
		return;
	}
	if (line || at <= last) {
		if (line)
			snprintf(why, sizeof(why), "the log stream holds another batch at seq %"
				 PRId64 ", of lease token %" PRId64, at, token);
		else
			snprintf(why, sizeof(why), "the log stream no longer keeps seq %" PRId64,
				 at);
		rewind_copy(S, r, at, why);
		return;
	}
	/* The stream ends before it. */
	if (cluster_owns(S->cx->cl, name, NULL) && replica_caught_up(S, name)) {
		reappend(S, r, last > 0 && last + 1 < at ? last + 1 : at);
		return;
	}
	cluster_lease_of(S->cx->cl, name, &li);
	if (li.state == CLUSTER_LEASE_OTHER) {
		snprintf(why, sizeof(why), "process %s owns the scene and its log stream ends at "
			 "seq %" PRId64, li.owner, last);
		rewind_copy(S, r, at, why);
	}
	/* Else nobody holds the lease yet: probed again. */
}

int replica_check_settled(struct server *S, const char *name, edit_error *err)
{
	struct rep *r = rep_find(S, name);

	if (!r || (!r->verify && !r->doubt))
		return 0;
	if (r->verify)
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene", "this process is checking its "
			       "copy of scene '%s' against the scene's log stream: retry in a moment",
			       name);
	else
		edit_error_set(err, RIGD_E_UNAVAILABLE, -1, "scene", "scene '%s' holds batches from "
			       "seq %" PRId64 " that this process committed but the log stream did "
			       "not confirm: it settles them against the stream (appends them again, "
			       "or takes its copy back): retry in a moment", name, r->doubt);
	return RIGD_E_UNAVAILABLE;
}

void replica_tick(struct server *S)
{
	struct replica *R = S->cx->replica;
	double now = serve_now_s();
	cluster_stats cs;

	cluster_get_stats(S->cx->cl, &cs);
	if (R && cs.connects != R->connects) {
		/* Connected again: Redis may have lost appends it confirmed (a
		 * failover to a replica behind it): every copy is checked. */
		for (int i = 0; R->connects && i < R->n; i++)
			R->v[i].verify = engine_seq(S->e, R->v[i].scene) > 0 ?
						 engine_seq(S->e, R->v[i].scene) : 0;
		R->connects = cs.connects;
	}
	for (int i = 0; R && i < R->n; i++) {
		struct rep *r = &R->v[i];
		int64_t have = engine_seq(S->e, r->scene);

		if (r->gap && !r->in_turn && have >= 0 && now - r->asked_s >= ASK_EVERY_S)
			ask_others(S, r, have + 1);
		if ((r->verify || r->doubt) && now - r->probe_s >= PROBE_EVERY_S)
			settle(S, r);
	}
}

void replica_unreplicated(void *ctx, const char *name, uint64_t seq, int got)
{
	struct server *S = ctx;
	struct replica *R = S->cx->replica;
	struct rep *r = rep_find(S, name);
	edit_error err;

	if (!r)
		return;
	R->unreplicated++;
	if ((int64_t)seq > r->confirmed)
		r->confirmed = (int64_t)seq;  /* the stream holds it */
	edit_error_set(&err, RIGD_E_UNAVAILABLE, -1, "scene", "the edit is applied and committed "
		       "(scene '%s', seq %" PRIu64 ") and in the scene's log stream, but only %d "
		       "of the %d Redis replicas asked for confirmed it in time: it may be lost if "
		       "the Redis primary fails now; a resend with the same client_seq is not "
		       "applied twice", name, seq, got, S->o.redis_wait);
	for (int i = 0; i < R->n_held;) {
		struct pending take = R->held[i];

		if (strcmp(take.scene, name) != 0 || take.seq != (int64_t)seq) {
			i++;
			continue;
		}
		R->held[i] = R->held[--R->n_held];
		turn_answer_later(S, &take, &err);
	}
}

void replica_turn_end(struct server *S, int commit_rc)
{
	struct replica *R = S->cx->replica;

	for (int i = 0; R && i < R->n; i++) {
		if (R->v[i].in_turn && commit_rc && S->cx->cl)
			cluster_follow(S->cx->cl, R->v[i].scene, true);
		R->v[i].in_turn = false;
	}
	if (S->cx->cl)
		cluster_wait_replicas(S->cx->cl);  /* --redis-wait: one WAIT for the turn's appends */
}

/* One line of the owner's log, appended to the stream. */
struct pub {
	struct server *S;
	const char *name;
	int64_t seq;
};

static int publish_line(void *ctx, const char *line, size_t len)
{
	struct pub *p = ctx;
	int rc = cluster_publish(p->S->cx->cl, p->name, (uint64_t)p->seq, line, len);

	if (rc == 0 && p->S->cx->replica)
		p->S->cx->replica->published++;
	if (rc)  /* no answer will come: its held ack is answered now */
		replica_published(p->S, p->name, (uint64_t)p->seq, false, err_str(rc));
	p->seq++;
	return 0;
}

void replica_publish(struct server *S, const char *name, int64_t from, int64_t to)
{
	struct pub p;
	struct rep *r;
	int rc;

	if (!S->cx->cl || !cluster_owns(S->cx->cl, name, NULL) || !replica_of(S))
		return;
	if ((r = rep_get(S, name)))
		r->seen = true;  /* its owner knows what it appends */
	/* Batches taken from the stream this turn (a new owner catching up)
	 * are there already. */
	if (r && r->in_turn && r->next - 1 > from)
		from = r->next - 1;
	if (to <= from)
		return;
	p.S = S;
	p.name = name;
	p.seq = from + 1;
	if (r && to > r->appended)
		r->appended = to;
	rc = engine_log(S->e, name, from + 1, to, publish_line, &p);
	if (rc) {
		serve_log(LOG_ERROR, "cluster: scene %s: batches %" PRId64 "..%" PRId64 " committed "
			  "here but not appended to its log stream: %s", name, p.seq, to,
			  err_str(rc));
		for (int64_t s = p.seq; s <= to; s++)
			replica_published(S, name, (uint64_t)s, false, err_str(rc));
	}
}

bool replica_caught_up(struct server *S, const char *name)
{
	cluster_lease_info li;

	if (!S->cx->catalog_synced)
		return false;  /* the scene may have been deleted while this process was away */
	cluster_lease_of(S->cx->cl, name, &li);
	return li.state == CLUSTER_LEASE_OWNED && li.log_seq >= 0 &&
	       engine_seq(S->e, name) >= li.log_seq;
}

bool replica_hold(struct server *S, struct pending *p)
{
	struct replica *R = replica_of(S);
	cluster_lease_info li;
	struct pending *v;
	struct rep *r;

	if (!S->cx->cl || !R || !cluster_owns(S->cx->cl, p->scene, NULL) || !(r = rep_get(S, p->scene)))
		return false;
	r->seen = true;
	cluster_lease_of(S->cx->cl, p->scene, &li);
	if (r->confirmed < li.log_seq)
		r->confirmed = li.log_seq;
	/* A resend of a batch the stream holds already: answered now, or,
	 * with --redis-wait, once WAIT confirms it again. */
	if (p->seq <= r->confirmed &&
	    (!S->o.redis_wait || cluster_wait_for(S->cx->cl, p->scene, (uint64_t)p->seq) != 0))
		return false;
	if (!(v = serve_grow(R->held, &R->cap_held, R->n_held + 1, sizeof(*v))))
		return false;  /* out of memory: answered now rather than never */
	R->held = v;
	R->held[R->n_held++] = *p;
	p->ik = NULL;      /* the held copy owns the ik report */
	return true;
}

void replica_published(void *ctx, const char *name, uint64_t seq, bool ok, const char *why)
{
	struct server *S = ctx;
	struct replica *R = S->cx->replica;
	struct rep *r;
	edit_error err;

	if (!R || !(r = rep_get(S, name)))
		return;
	if (ok && (int64_t)seq > r->confirmed)
		r->confirmed = (int64_t)seq;
	if (ok && r->doubt && (int64_t)seq == r->doubt) {
		/* Appended again, and confirmed. */
		r->doubt = (int64_t)seq < engine_seq(S->e, name) ? (int64_t)seq + 1 : 0;
		if (!r->doubt)
			settled(S, r);
	}
	if (!ok) {
		R->unconfirmed++;
		if ((int64_t)seq > r->appended || (int64_t)seq > engine_seq(S->e, name)) {
			/* Taken back already (rewind_copy): nothing to settle. */
		} else if (!r->doubt || (int64_t)seq < r->doubt) {
			serve_log(LOG_WARN, "cluster: scene %s: the append of batch %" PRIu64 ", "
				  "committed here, is not confirmed (%s): the scene takes no edits "
				  "here until it is settled against the log stream", name, seq, why);
			r->doubt = (int64_t)seq;
		}
		edit_error_set(&err, RIGD_E_UNAVAILABLE, -1, "scene", "the edit was committed by "
			       "the owner of scene '%s' but its append to the scene's log stream was "
			       "not confirmed (%s): the owner settles it against the stream, keeping "
			       "it if the stream holds it, else taking it back; a resend with the same "
			       "client_seq is applied once", name, why);
	}
	for (int i = 0; i < R->n_held;) {
		struct pending *p = &R->held[i];

		if (strcmp(p->scene, name) != 0 ||
		    (ok ? p->seq > r->confirmed : p->seq != (int64_t)seq)) {
			i++;
			continue;
		}
		struct pending take = *p;

		R->held[i] = R->held[--R->n_held];
		turn_answer_later(S, &take, ok ? NULL : &err);
	}
}

void replica_forget(struct server *S, const char *name)
{
	struct replica *R = S->cx->replica;

	for (int i = 0; R && i < R->n; i++)
		if (strcmp(R->v[i].scene, name) == 0) {
			R->v[i] = R->v[--R->n];
			return;
		}
}

void replica_free(struct server *S)
{
	if (!S->cx->replica)
		return;
	for (int i = 0; i < S->cx->replica->n_held; i++)
		free(S->cx->replica->held[i].ik);
	free(S->cx->replica->held);
	free(S->cx->replica->v);
	free(S->cx->replica);
	S->cx->replica = NULL;
}

int replica_metrics(struct server *S, proto_buf *b)
{
	struct replica *R = S->cx->replica;
	const struct metrics_row m[] = {
		{ "rigd_cluster_log_published_total", "counter",
		  "Committed batches appended to log streams.",
		  R ? (uint64_t)R->published : 0 },
		{ "rigd_cluster_log_applied_total", "counter",
		  "Batches of other owners' log streams applied here.",
		  R ? (uint64_t)R->applied : 0 },
		{ "rigd_cluster_log_gaps_total", "counter",
		  "Log entries past a gap (this process fell behind the stream).",
		  R ? (uint64_t)R->gaps : 0 },
		{ "rigd_cluster_log_refused_total", "counter",
		  "Log entries refused (malformed, or not applying).",
		  R ? (uint64_t)R->refused : 0 },
		{ "rigd_cluster_log_unconfirmed_total", "counter",
		  "Committed batches the log stream did not confirm (answered unavailable).",
		  R ? (uint64_t)R->unconfirmed : 0 },
		{ "rigd_cluster_catchup_asks_total", "counter",
		  "Asks to other processes for batches the log stream no longer kept.",
		  R ? (uint64_t)R->asked : 0 },
		{ "rigd_cluster_catchup_sent_total", "counter",
		  "Batches this process sent to processes that fell behind.",
		  R ? (uint64_t)R->sent : 0 },
		{ "rigd_cluster_log_settled_total", "counter",
		  "Unconfirmed batches found in the log stream afterwards (kept).",
		  R ? (uint64_t)R->settled : 0 },
		{ "rigd_cluster_log_reappended_total", "counter",
		  "Unconfirmed batches appended again by their owner.",
		  R ? (uint64_t)R->reappended : 0 },
		{ "rigd_cluster_rewinds_total", "counter",
		  "Times this process took a scene back to the log stream's batches.",
		  R ? (uint64_t)R->rewinds : 0 },
		{ "rigd_cluster_rewound_batches_total", "counter",
		  "Batches committed here and dropped by rewinds (not the cluster's).",
		  R ? (uint64_t)R->rewound : 0 },
		{ "rigd_cluster_log_unreplicated_total", "counter",
		  "Appended batches WAIT found short of --redis-wait replicas.",
		  R ? (uint64_t)R->unreplicated : 0 },
		{ "rigd_cluster_acks_waiting", "gauge",
		  "Acknowledgements waiting for the log stream.",
		  R ? (uint64_t)R->n_held : 0 },
	};

	return metrics_put_rows(b, m, (int)(sizeof(m) / sizeof(m[0])));
}

