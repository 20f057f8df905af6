/*
 * engine_check.c: rigd check. Proves a database by replaying every scene's
 * whole log from empty and comparing with what is stored (see engine_check
 * in engine.h).
 *
 * Only reads: it never repairs, and reports each problem as one line.
 */
#include "engine_internal.h"

#include "core/err.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Check. */

typedef struct check_ctx {
	engine *e;
	scene_rt *rt;
	replay_ctx r;
	engine_report_fn fn;
	void *fctx;
	int problems;
	int64_t snapshots;
	int64_t json_rows;        /* rows without a binary image */
	bytes enc;
	/* The snapshot being compared (copied by cmp_snap_cb). */
	bool snap_found;
	bool snap_equal;
} check_ctx;

static void report(check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(check_ctx *c, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->fn)
		c->fn(c->fctx, line);
}

static int cmp_snap_cb(void *vctx, const store_snapshot *sn)
{
	check_ctx *c = vctx;
	c->snap_found = true;
	c->snap_equal = sn->len == c->enc.len && sn->format == (int)eng_snap_format(&c->enc) &&
			memcmp(sn->data, c->enc.p, sn->len) == 0 &&
			fnv1a(sn->data, sn->len, FNV_OFFSET) == sn->hash &&
			sn->n_nodes == scene_count(c->r.sc);
	return 0;
}

typedef struct snap_list {
	int64_t *seqs;
	int n, cap;
} snap_list;

static int snap_list_cb(void *vctx, const store_snapshot *sn)
{
	snap_list *l = vctx;
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		int64_t *p = realloc(l->seqs, sizeof(*p) * (size_t)cap);
		if (!p)
			return RIGD_E_NOMEM;
		l->seqs = p;
		l->cap = cap;
	}
	l->seqs[l->n++] = sn->seq;
	return 0;
}

typedef struct check_replay {
	check_ctx *c;
	snap_list snaps;
	int next_snap;
} check_replay;

/* Whether 'a' (a row's stored JSON) holds the ops 'b': equal to b's JSON,
 * or equal to it once read back and re-encoded by this build. The text may
 * differ and the values not: where two shortest decimals read back to the
 * same double, another build of the encoder may have picked the other one.
 * 0 with *same set, or RIGD_E_NOMEM. */
static int same_ops_json(const char *a, size_t a_len, const edit_batch *b, bool *same)
{
	char *json = NULL, *again = NULL;
	size_t json_len = 0, again_len = 0;
	int err = eng_encode_ops(b, &json, &json_len);
	if (err)
		return err;
	*same = json_len == a_len && memcmp(json, a, a_len) == 0;
	if (!*same) {
		proto_limits lim = eng_trusted_limits();
		edit_batch stored;
		if (proto_decode_ops(a, a_len, &lim, &stored, NULL) == 0) {
			err = eng_encode_ops(&stored, &again, &again_len);
			edit_batch_release(&stored);
			*same = !err && again_len == json_len && memcmp(again, json, json_len) == 0;
			free(again);
		}
	}
	free(json);
	return err;
}

/* A row replayed from its binary image (the ops in c->r.ops): its JSON,
 * which export and people read, must hold the same ops. */
static int check_ops_json(check_ctx *c, const store_edit *row)
{
	bool same = false;
	int err = same_ops_json(row->ops, row->ops_len, &c->r.ops, &same);
	if (err)
		return err;
	if (!same) {
		report(c, "scene '%s': seq %lld: the binary image of the ops differs from their JSON",
		       c->rt->name, (long long)row->seq);
		c->problems++;
	}
	return 0;
}

static int check_row_cb(void *vctx, const store_edit *row)
{
	check_replay *cr = vctx;
	check_ctx *c = cr->c;
	edit_batch inv;
	int err = eng_replay_row(&c->r, row, &inv);
	if (err) {
		report(c, "%s", c->e->errmsg);
		c->problems++;
		/* A gap or a batch that does not apply ends this scene's proof. */
		return err == RIGD_E_NOMEM ? err : 1;
	}
	if (row->ops_bin) {
		err = check_ops_json(c, row);
		if (err) {
			edit_batch_release(&inv);
			return err;
		}
	} else {
		c->json_rows++;
	}
	bool same = false;
	err = same_ops_json(row->inverse, row->inverse_len, &inv, &same);
	edit_batch_release(&inv);
	if (err)
		return err;
	if (!same) {
		report(c, "scene '%s': seq %lld: the stored inverse differs from the replay's",
		       c->rt->name, (long long)row->seq);
		c->problems++;
	}
	while (cr->next_snap < cr->snaps.n && cr->snaps.seqs[cr->next_snap] <= row->seq) {
		int64_t at = cr->snaps.seqs[cr->next_snap++];
		if (at != row->seq)
			continue; /* seq 0 or below the first row: reported later */
		c->enc.len = 0;
		err = eng_snap_encode(c->r.sc, &c->enc);
		if (err)
			return err;
		c->snap_found = false;
		err = store_snapshot_latest(c->e->st, c->rt->id, at, cmp_snap_cb, c);
		if (err)
			return err;
		if (!c->snap_found || !c->snap_equal) {
			report(c, "scene '%s': the snapshot at seq %lld differs from the replay",
			       c->rt->name, (long long)at);
			c->problems++;
		}
		c->snapshots++;
	}
	return 0;
}

static int check_scene(check_ctx *c, scene_rt *rt)
{
	engine *e = c->e;
	check_replay cr = { .c = c };
	int err = 0;
	int problems_before = c->problems;
	c->rt = rt;
	c->snapshots = 0;
	c->r = (replay_ctx){ .e = e, .name = rt->name, .sc = scene_new(), .expect = 1 };
	if (!c->r.sc)
		return RIGD_E_NOMEM;
	scene_set_max_nodes(c->r.sc, INT_MAX);
	scene_set_dims(c->r.sc, rt->dims);
	c->json_rows = 0;
	/* Every asset of the scene, for the layers its log names. */
	err = eng_assets_register(e, rt->id, c->r.sc, -1);
	if (!err)
		err = store_snapshots(e->st, rt->id, false, snap_list_cb, &cr.snaps);
	if (!err)
		err = store_edits_ex(e->st, rt->id, 0, -1, STORE_WANT_INVERSE | STORE_WANT_OPS_JSON,
				     check_row_cb, &cr);
	if (err == 1)
		err = 0; /* reported */
	if (err) {
		report(c, "scene '%s': %s", rt->name,
		       err == RIGD_E_STORAGE ? store_errmsg(e->st) : err_str(err));
		c->problems++;
		err = err == RIGD_E_NOMEM ? err : 0;
	}
	if (!err) {
		/* The artwork: digest, sanitised bytes, ids (engine_asset.c). */
		int bad = eng_assets_verify(e, rt, c->fn, c->fctx);
		if (bad < 0)
			err = bad;
		else
			c->problems += bad;
	}
	int64_t last = c->r.expect - 1;
	if (!err && c->problems == problems_before) {
		if (last != rt->seq) {
			report(c, "scene '%s': the log ends at seq %lld, the scene is at %lld",
			       rt->name, (long long)last, (long long)rt->seq);
			c->problems++;
		}
		for (int i = 0; i < cr.snaps.n; i++) {
			if (cr.snaps.seqs[i] < 1 || cr.snaps.seqs[i] > last) {
				report(c, "scene '%s': a snapshot at seq %lld has no log row",
				       rt->name, (long long)cr.snaps.seqs[i]);
				c->problems++;
			}
		}
		scene_update(c->r.sc, (uint64_t)last, NULL, NULL);
		scene_update(rt->sc, (uint64_t)rt->seq, NULL, NULL);
		uint64_t h_replay = scene_hash(c->r.sc), h_live = scene_hash(rt->sc);
		if (h_replay != h_live) {
			report(c, "scene '%s': the loaded scene (hash %016llx) differs from a full "
				  "replay (hash %016llx)",
			       rt->name, (unsigned long long)h_live, (unsigned long long)h_replay);
			c->problems++;
		}
		if (c->problems == problems_before && c->json_rows)
			report(c, "scene '%s': ok: %lld batches, %lld snapshots, %d nodes, hash %016llx, "
				  "%lld logged before binary images",
			       rt->name, (long long)last, (long long)c->snapshots,
			       scene_count(rt->sc), (unsigned long long)h_live,
			       (long long)c->json_rows);
		else if (c->problems == problems_before)
			report(c, "scene '%s': ok: %lld batches, %lld snapshots, %d nodes, hash %016llx",
			       rt->name, (long long)last, (long long)c->snapshots,
			       scene_count(rt->sc), (unsigned long long)h_live);
	}
	free(cr.snaps.seqs);
	edit_batch_release(&c->r.ops);
	scene_free(c->r.sc);
	c->r.sc = NULL;
	return err;
}

static void integrity_line(void *vctx, const char *line)
{
	check_ctx *c = vctx;
	report(c, "integrity_check: %s", line);
}

int engine_check(engine *e, engine_report_fn fn, void *ctx)
{
	check_ctx c = { .e = e, .fn = fn, .fctx = ctx };
	int err = store_integrity_check(e->st, integrity_line, &c);
	if (err == RIGD_E_STORAGE)
		c.problems++;
	else if (err)
		return err;
	else
		report(&c, "integrity_check: ok");
	for (int i = 0; i < e->n_scenes; i++) {
		e->errmsg[0] = 0;
		err = check_scene(&c, e->scenes[i]);
		if (err)
			break;
	}
	free(c.enc.p);
	if (err)
		return err;
	return c.problems ? RIGD_E_STORAGE : 0;
}

