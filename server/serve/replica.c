/*
 * replica.c: every scene kept up to date from its owner's log stream (see
 * replica.h).
 */
#include "replica.h"
#include "log.h"
#include "metrics.h"
#include "turn.h"
#include "util.h"

#include "cluster/cluster.h"
#include "codec/svg.h"
#include "core/err.h"
#include "core/sha256.h"

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
};

struct replica {
	struct rep *v;
	int n, cap;
	struct pending *held;        /* answers waiting for the stream to hold them */
	int n_held, cap_held;
	uint64_t applied, gaps, refused, published, unconfirmed;
	uint64_t asked, sent;        /* catch-up: asks made, batches sent as owner */
};

static struct replica *replica_of(struct server *S)
{
	if (!S->replica)
		S->replica = calloc(1, sizeof(*S->replica));
	return S->replica;
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
	if (since < 1 || (n = cluster_processes(S->cl, NULL, 0)) <= 0)
		return;  /* nobody known yet: asked again later */
	if (!(v = calloc((size_t)n, sizeof(*v))))
		return;
	n = cluster_processes(S->cl, v, n);
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i].id, cluster_id(S->cl)) == 0 ||
		    cluster_catchup_ask(S->cl, v[i].id, r->scene, (uint64_t)since) != 0)
			continue;
		S->replica->asked++;
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
 * The artwork a log line of an SVG import carries (at most one asset): its
 * bytes must be what the sanitiser writes, unchanged by sanitising them
 * again, under the SHA-256 the line names, as for a log import. 0 with
 * *art filled (empty without an asset), or bad_svg / bad_field in 'err'.
 */
static int line_asset(const proto_log_asset *a, int n, svg_clean *art, edit_error *err)
{
	unsigned char digest[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];

	if (n == 0)
		return 0;
	if (n > 1) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "assets", "one asset a batch at most");
		return RIGD_E_BAD_FIELD;
	}
	if (svg_sanitize(a->svg, a->len, NULL, art, err))
		return err->code ? err->code : RIGD_E_BAD_SVG;
	sha256_digest(a->svg, a->len, digest);
	for (int i = 0; i < SHA256_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	if (art->n_removed_total || art->len != a->len || memcmp(art->svg, a->svg, a->len) ||
	    strcmp(hex, a->sha256)) {
		svg_clean_release(art);
		edit_error_set(err, RIGD_E_BAD_SVG, -1, "assets",
			       "asset '%s': the bytes are not the sanitised SVG its sha256 names",
			       a->file);
		return RIGD_E_BAD_SVG;
	}
	return 0;
}

void replica_line(void *ctx, const char *name, uint64_t seq, int64_t token, const char *line,
		  size_t len)
{
	struct server *S = ctx;
	struct replica *R = replica_of(S);
	struct rep *r;
	proto_log_line ll;
	proto_log_asset *assets = NULL;
	int n_assets = 0;
	svg_clean art;
	edit_error err;
	int64_t expect, have = engine_seq(S->e, name);
	int rc;

	if (have < 0 || !R || !(r = rep_get(S, name)))
		return;  /* not a scene of this database (creation is not replicated) */
	expect = r->in_turn ? r->next : have + 1;
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
	memset(&art, 0, sizeof(art));
	if (proto_decode_log_line_assets(line, len, &S->lim, &ll, &assets, &n_assets, &err) != 0 ||
	    ll.seq != seq || line_asset(assets, n_assets, &art, &err) != 0) {
		if (!err.code)
			edit_error_set(&err, RIGD_E_BAD_SEQ, -1, "seq", "the entry and its line disagree");
		R->refused++;
		serve_log(LOG_WARN, "cluster: scene %s: log entry %" PRIu64 " refused: %s", name, seq,
			  err.message);
		edit_batch_release(&ll.batch);
		proto_log_assets_free(assets, n_assets);
		return;
	}
	S->replicating = true;
	S->replica_kind = ll.kind;    /* an undo or redo stays one here */
	S->replica_target = ll.target;
	rc = turn_submit_asset(S, PROTO_EDIT, name, &ll.batch, NULL, n_assets ? assets[0].file : NULL,
			       n_assets ? &art : NULL, ll.batch.client, NULL, 0, NULL, &err);
	S->replicating = false;
	S->replica_kind = PROTO_LOG_EDIT;
	svg_clean_release(&art);
	proto_log_assets_free(assets, n_assets);
	if (rc) {
		R->refused++;
		behind(S, r, "cluster: scene %s: batch %" PRIu64 " of the log does not apply to this "
		       "process's copy (seq %" PRId64 "): %s", seq, expect - 1, err.message);
	} else {
		S->pend[S->n_pend - 1].replica = true;
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
	r = S->replica && engine_seq(S->e, name) >= 0 ? rep_get(S, name) : NULL;
	if (!r || !r->in_turn || r->next != (int64_t)seq + 1)
		return;  /* a duplicate (several processes answer), or refused */
	if (more) {
		r->gap = true;  /* still behind: asked again later if this ask goes unanswered */
		if (r->asked_since != (int64_t)seq + 1)
			ask_others(S, r, (int64_t)seq + 1);  /* the next part, at once */
	} else if (S->cl) {
		/* The stream's entries past this part; a gap there is found again. */
		r->gap = false;
		cluster_follow(S->cl, name, true);
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
	int rc = cluster_catchup_line(p->S->cl, p->to, p->name, (uint64_t)p->seq, line, len,
				      p->seq == p->last && p->more);

	if (rc == 0)
		p->S->replica->sent++;
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
	if (cluster_owns(S->cl, name, NULL)) {
		cluster_lease_of(S->cl, name, &li);
		if (li.log_seq > upto)
			upto = li.log_seq;
	}
	if (upto > have)
		upto = have;
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

void replica_tick(struct server *S)
{
	struct replica *R = S->replica;
	double now = serve_now_s();

	for (int i = 0; R && i < R->n; i++) {
		struct rep *r = &R->v[i];
		int64_t have = engine_seq(S->e, r->scene);

		if (r->gap && !r->in_turn && have >= 0 && now - r->asked_s >= ASK_EVERY_S)
			ask_others(S, r, have + 1);
	}
}

void replica_turn_end(struct server *S, int commit_rc)
{
	struct replica *R = S->replica;

	for (int i = 0; R && i < R->n; i++) {
		if (R->v[i].in_turn && commit_rc && S->cl)
			cluster_follow(S->cl, R->v[i].scene, true);
		R->v[i].in_turn = false;
	}
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
	int rc = cluster_publish(p->S->cl, p->name, (uint64_t)p->seq, line, len);

	if (rc == 0 && p->S->replica)
		p->S->replica->published++;
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

	if (!S->cl || !cluster_owns(S->cl, name, NULL) || !replica_of(S))
		return;
	/* Batches taken from the stream this turn (a new owner catching up)
	 * are there already. */
	if ((r = rep_get(S, name)) && r->in_turn && r->next - 1 > from)
		from = r->next - 1;
	if (to <= from)
		return;
	p.S = S;
	p.name = name;
	p.seq = from + 1;
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

	if (!S->catalog_synced)
		return false;  /* the scene may have been deleted while this process was away */
	cluster_lease_of(S->cl, name, &li);
	return li.state == CLUSTER_LEASE_OWNED && li.log_seq >= 0 &&
	       engine_seq(S->e, name) >= li.log_seq;
}

bool replica_hold(struct server *S, struct pending *p)
{
	struct replica *R = replica_of(S);
	cluster_lease_info li;
	struct pending *v;
	struct rep *r;

	if (!S->cl || !R || !cluster_owns(S->cl, p->scene, NULL) || !(r = rep_get(S, p->scene)))
		return false;
	cluster_lease_of(S->cl, p->scene, &li);
	if (r->confirmed < li.log_seq)
		r->confirmed = li.log_seq;
	if (p->seq <= r->confirmed)
		return false;  /* a resend of a batch the stream holds already */
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
	struct replica *R = S->replica;
	struct rep *r;
	edit_error err;

	if (!R || !(r = rep_get(S, name)))
		return;
	if (ok && (int64_t)seq > r->confirmed)
		r->confirmed = (int64_t)seq;
	if (!ok) {
		R->unconfirmed++;
		edit_error_set(&err, RIGD_E_UNAVAILABLE, -1, "scene", "the edit was committed by "
			       "the owner of scene '%s' but is not in the scene's log stream (%s): "
			       "the cluster may not keep it", name, why);
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
	struct replica *R = S->replica;

	for (int i = 0; R && i < R->n; i++)
		if (strcmp(R->v[i].scene, name) == 0) {
			R->v[i] = R->v[--R->n];
			return;
		}
}

void replica_free(struct server *S)
{
	if (!S->replica)
		return;
	for (int i = 0; i < S->replica->n_held; i++)
		free(S->replica->held[i].ik);
	free(S->replica->held);
	free(S->replica->v);
	free(S->replica);
	S->replica = NULL;
}

int replica_metrics(struct server *S, proto_buf *b)
{
	struct replica *R = S->replica;
	struct {
		const char *name, *type, *help;
		uint64_t value;
	} m[] = {
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
		{ "rigd_cluster_acks_waiting", "gauge",
		  "Acknowledgements waiting for the log stream.",
		  R ? (uint64_t)R->n_held : 0 },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (metrics_put(b, m[i].name, m[i].type, m[i].help, m[i].value))
			return RIGD_E_NOMEM;
	return 0;
}

