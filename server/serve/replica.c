/*
 * replica.c: every scene kept up to date from its owner's log stream (see
 * replica.h).
 */
#include "replica.h"
#include "log.h"
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
};

struct replica {
	struct rep *v;
	int n, cap;
	struct pending *held;        /* answers waiting for the stream to hold them */
	int n_held, cap_held;
	uint64_t applied, gaps, refused, published, unconfirmed;
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
	if ((int64_t)seq < expect)
		return;  /* this process has it */
	if ((int64_t)seq > expect) {
		R->gaps++;
		behind(S, r, "cluster: scene %s: the log stream goes on at seq %" PRIu64 " and this "
		       "process has %" PRId64 "%s: it fell behind what the stream keeps and needs a "
		       "snapshot, which is not built yet", seq, expect - 1, "");
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
	rc = turn_submit_asset(S, PROTO_EDIT, name, &ll.batch, NULL, n_assets ? assets[0].file : NULL,
			       n_assets ? &art : NULL, ll.batch.client, NULL, 0, NULL, &err);
	S->replicating = false;
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
		R->applied++;
	}
	edit_batch_release(&ll.batch);
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
	char text[1600];
	int len;

	len = snprintf(text, sizeof(text),
		       "# HELP rigd_cluster_log_published_total Committed batches appended to log streams.\n"
		       "# TYPE rigd_cluster_log_published_total counter\nrigd_cluster_log_published_total %" PRIu64 "\n"
		       "# HELP rigd_cluster_log_applied_total Batches of other owners' log streams applied here.\n"
		       "# TYPE rigd_cluster_log_applied_total counter\nrigd_cluster_log_applied_total %" PRIu64 "\n"
		       "# HELP rigd_cluster_log_gaps_total Log entries past a gap (this process fell behind the stream).\n"
		       "# TYPE rigd_cluster_log_gaps_total counter\nrigd_cluster_log_gaps_total %" PRIu64 "\n"
		       "# HELP rigd_cluster_log_refused_total Log entries refused (malformed, or not applying).\n"
		       "# TYPE rigd_cluster_log_refused_total counter\nrigd_cluster_log_refused_total %" PRIu64 "\n"
		       "# HELP rigd_cluster_log_unconfirmed_total Committed batches the log stream did not confirm (answered unavailable).\n"
		       "# TYPE rigd_cluster_log_unconfirmed_total counter\nrigd_cluster_log_unconfirmed_total %" PRIu64 "\n"
		       "# HELP rigd_cluster_acks_waiting Acknowledgements waiting for the log stream.\n"
		       "# TYPE rigd_cluster_acks_waiting gauge\nrigd_cluster_acks_waiting %d\n",
		       R ? R->published : 0, R ? R->applied : 0, R ? R->gaps : 0, R ? R->refused : 0,
		       R ? R->unconfirmed : 0, R ? R->n_held : 0);
	if (len < 0 || (size_t)len >= sizeof(text))
		return RIGD_E_INTERNAL;
	return proto_buf_append(b, text, (size_t)len);
}
