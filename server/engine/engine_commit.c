/*
 * engine_commit.c: the group commit, one transaction for the turn's
 * batches, run on the caller's thread (engine_commit) or on the commit
 * writer's (engine_commit_begin, then engine_commit_poll).
 *
 * A commit is a job built on the loop's thread from the queue: the rows
 * (pointing into the queued batches' buffers, which stay put until the job
 * is finished), the assets stored with them and the snapshots that are
 * due, encoded here so that the writer never reads a scene. The job runs
 * against one store: the engine's own (engine_commit) or the writer's own
 * connection to the same database (engine_writer_start). Nothing of the
 * engine but the job is touched by the writer's thread, and the queue must
 * not change while a job is out (eng_apply_and_queue_asset asserts it).
 */
#include "engine_internal.h"
#include "writer.h"

#include "core/asset.h"
#include "core/skel_clips.h"
#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One snapshot due in the commit, encoded on the loop's thread. */
struct commit_snap {
	scene_rt *rt;             /* only compared, never read by the writer */
	store_snapshot sn;
	void *data;               /* owned: sn.data */
};

/* One asset stored with a batch. */
struct commit_asset {
	int64_t scene_id;
	store_asset row;          /* its strings borrowed from the queue */
};

/* A commit: what the transaction writes, and how it went. */
struct commit_job {
	store_edit *rows;
	int n_rows;
	struct commit_asset *assets;
	int n_assets;
	struct commit_snap *snaps;
	int n_snaps;
	double seconds;           /* the transaction's wall time */
	char errmsg[256];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void job_free(struct commit_job *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->n_snaps; i++)
		free(j->snaps[i].data);
	free(j->snaps);
	free(j->assets);
	free(j->rows);
	free(j);
}

/* Takes this turn's batches back out of memory, newest first, with
 * edit_revert, which allocates nothing: out of memory, no batch that was
 * not stored stays visible. A broken scene is reloaded from the database. */
static void rollback_memory(engine *e)
{
	for (int i = e->n_q - 1; i >= 0; i--) {
		pending *p = &e->q[i];
		if (p->rt->broken)
			continue;
		if (edit_revert(p->rt->sc, &p->inv) != 0)
			p->rt->broken = true;
		else
			for (const eng_asset *a = p->asset; a; a = a->next) {
				asset_set_remove(scene_assets(p->rt->sc), a->file);
				scene_skel_remove(p->rt->sc, a->file);
			}
	}
	for (int i = 0; i < e->n_scenes; i++) {
		scene_rt *rt = e->scenes[i];
		if (!rt->n_pending && !rt->broken)
			continue;
		eng_hist_clear(rt);
		rt->next_seq = rt->seq + 1;
		rt->n_pending = 0;
		rt->pending_weight = 0;
		if (rt->broken) {
			/* Last resort: the committed state from the database. If
			 * even that fails the scene stays broken, and every later
			 * commit fails and retries. */
			char keep[sizeof(e->errmsg)];
			memcpy(keep, e->errmsg, sizeof(keep));
			eng_load_scene(e, rt);
			memcpy(e->errmsg, keep, sizeof(keep));
		}
	}
	eng_queue_clear(e);
	assert(e->n_q == 0);
}

/* RIGD_E_STORAGE when a scene is broken: a failure (a bug, as out of
 * memory never does it) left it inconsistent with its log. Failing the
 * commit reloads it, also with nothing queued. */
static int check_broken(engine *e)
{
	for (int i = 0; i < e->n_scenes; i++) {
		if (e->scenes[i]->broken) {
			eng_set_errmsg(e, "scene '%s' was left inconsistent by a failure (out of memory)",
				       e->scenes[i]->name);
			return RIGD_E_STORAGE;
		}
	}
	return 0;
}

/* The rows of every queued batch, in submission order, and their assets. */
static int job_rows(engine *e, struct commit_job *j)
{
	int n_assets = 0;

	j->rows = calloc((size_t)e->n_q, sizeof(*j->rows));
	if (!j->rows)
		return RIGD_E_NOMEM;
	for (int i = 0; i < e->n_q; i++)
		for (const eng_asset *a = e->q[i].asset; a; a = a->next)
			n_assets++;
	if (n_assets && !(j->assets = calloc((size_t)n_assets, sizeof(*j->assets))))
		return RIGD_E_NOMEM;
	for (int i = 0; i < e->n_q; i++) {
		const pending *p = &e->q[i];
		/* Seqs run gapless per scene, in the order they were queued. */
		assert(p->seq > p->rt->seq && p->seq < p->rt->next_seq);
		assert(i == 0 || e->q[i - 1].rt != p->rt || e->q[i - 1].seq + 1 == p->seq);
		j->rows[j->n_rows++] = (store_edit){
			.scene_id = p->rt->id,
			.seq = p->seq,
			.time_us = p->time_us,
			.client = p->client,
			.has_client_seq = p->has_client_seq,
			.client_seq = p->client_seq,
			.kind = p->kind,
			.target = p->target,
			.n_ops = p->n_ops,
			.ops = p->ops,
			.ops_len = p->ops_len,
			.inverse = p->inverse,
			.inverse_len = p->inverse_len,
			.ops_bin = p->ops_bin,
			.ops_bin_len = p->ops_bin_len,
		};
		for (const eng_asset *a = p->asset; a; a = a->next)
			j->assets[j->n_assets++] = (struct commit_asset){
				.scene_id = p->rt->id,
				.row = {
					.file = a->file,
					.kind = asset_kind_name(a->kind),
					.seq = p->seq,
					.sha256 = a->sha256,
					.bytes = (int64_t)a->len,
					.svg = a->bytes,
					.ids = a->ids,
					.ids_len = a->ids_len,
				},
			};
	}
	return 0;
}

/* The snapshots of the scenes that are due one, in the same transaction
 * as their rows: a snapshot never runs ahead of its log. A snapshot that
 * cannot be encoded (out of memory) is simply left for a later turn. */
static int job_snaps(engine *e, struct commit_job *j)
{
	j->snaps = calloc((size_t)e->n_scenes + 1, sizeof(*j->snaps));
	if (!j->snaps)
		return RIGD_E_NOMEM;
	for (int i = 0; i < e->n_scenes; i++) {
		scene_rt *rt = e->scenes[i];
		bytes b = { 0 };

		if (!rt->n_pending || !eng_snapshot_due(e, rt, rt->tail_weight + rt->pending_weight))
			continue;
		if (eng_snap_encode(rt->sc, &b)) {
			free(b.p);
			continue;
		}
		j->snaps[j->n_snaps++] = (struct commit_snap){
			.rt = rt,
			.data = b.p,
			.sn = {
				.scene_id = rt->id,
				.seq = rt->next_seq - 1,
				.format = (int)eng_snap_format(&b),
				.n_nodes = scene_count(rt->sc),
				.hash = fnv1a(b.p, b.len, FNV_OFFSET),
				.data = b.p,
				.len = b.len,
			},
		};
	}
	return 0;
}

/* Runs job 'j' against store 'st' (on whichever thread owns 'st'): one
 * transaction, committed or rolled back. 0 or the error, with j->errmsg. */
static int job_run(store *st, struct commit_job *j)
{
	double t0 = now_s();
	int err = store_begin(st);

	for (int i = 0; i < j->n_rows && !err; i++)
		err = store_edit_append(st, &j->rows[i]);
	for (int i = 0; i < j->n_assets && !err; i++) {
		/* The file was checked free when the batch was queued, and the
		 * queue holds it once: a clash here is the store's fault. */
		err = store_asset_put(st, j->assets[i].scene_id, &j->assets[i].row);
		if (err == RIGD_E_INTERNAL)
			err = RIGD_E_STORAGE;
	}
	for (int i = 0; i < j->n_snaps && !err; i++)
		err = store_snapshot_put(st, &j->snaps[i].sn);
	if (!err)
		err = store_commit(st);
	if (err) {
		snprintf(j->errmsg, sizeof(j->errmsg), "%s", store_errmsg(st));
		if (store_in_transaction(st))
			store_rollback(st);
	}
	j->seconds = now_s() - t0;
	return err;
}

/* The writer thread's side: 'ctx' is the writer's store. */
static int writer_run(void *ctx, void *job)
{
	return job_run(ctx, job);
}

/* After the transaction committed: each touched scene's committed seq
 * moves to its last queued batch, and the queue empties. */
static void commit_done(engine *e, const struct commit_job *j)
{
	for (int i = 0; i < e->n_scenes; i++) {
		scene_rt *rt = e->scenes[i];
		bool snapped = false;

		if (!rt->n_pending)
			continue;
		for (int k = 0; k < j->n_snaps; k++)
			snapped = snapped || j->snaps[k].rt == rt;
		assert(rt->next_seq == rt->seq + rt->n_pending + 1);
		rt->seq = rt->next_seq - 1;
		rt->tail_weight = snapped ? 0 : rt->tail_weight + rt->pending_weight;
		rt->pending_weight = 0;
		rt->n_pending = 0;
	}
	for (int i = 0; i < e->n_q; i++)
		e->stats.ops += (uint64_t)e->q[i].n_ops;
	e->stats.batches += (uint64_t)e->n_q;
	e->stats.commits++;
	e->stats.snapshots += (uint64_t)j->n_snaps;
	eng_queue_clear(e);
}

/* The end of commit 'j' that returned 'err': memory brought to match the
 * database, the job freed. 0 or RIGD_E_STORAGE. */
static int finish(engine *e, struct commit_job *j, int err)
{
	e->stats.last_commit_s = j ? j->seconds : 0;
	e->stats.last_commit_batches = (uint64_t)e->n_q;
	if (err) {
		if (j && j->errmsg[0])
			eng_set_errmsg(e, "%s", j->errmsg);
		job_free(j);
		rollback_memory(e);
		e->stats.failed_commits++;
		return RIGD_E_STORAGE;
	}
	commit_done(e, j);
	job_free(j);
	return 0;
}

/* A job for the queue, or NULL with *err set (0: nothing to commit). */
static struct commit_job *job_build(engine *e, int *err)
{
	struct commit_job *j;

	*err = check_broken(e);
	if (*err || e->n_q == 0)
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j || (*err = job_rows(e, j)) != 0 || (*err = job_snaps(e, j)) != 0) {
		eng_set_errmsg(e, "out of memory");
		*err = RIGD_E_NOMEM;
		job_free(j);
		return NULL;
	}
	return j;
}

int engine_commit(engine *e)
{
	struct commit_job *j;
	int err;

	if (e->flight) {
		bool done;
		return engine_commit_poll(e, true, &done);
	}
	j = job_build(e, &err);
	if (!j && !err)
		return 0;
	if (j)
		err = job_run(e->st, j);
	return finish(e, j, err);
}

int engine_commit_begin(engine *e)
{
	struct commit_job *j;
	int err;

	assert(!e->flight);
	if (!e->w)
		return engine_commit(e);
	j = job_build(e, &err);
	if (!j)
		return err ? finish(e, NULL, err) : 0;
	if (writer_submit(e->w, j)) {
		eng_set_errmsg(e, "out of memory");
		return finish(e, j, RIGD_E_NOMEM);
	}
	e->flight = j;
	return 0;
}

bool engine_commit_busy(const engine *e)
{
	return e->flight != NULL;
}

int engine_commit_poll(engine *e, bool wait, bool *done)
{
	struct commit_job *j;
	int rc = 0;

	*done = true;
	if (!e->flight)
		return 0;
	j = wait ? writer_wait(e->w, &rc) : writer_take(e->w, &rc);
	if (!j) {
		*done = false;
		return 0;
	}
	assert(j == e->flight);
	e->flight = NULL;
	return finish(e, j, rc);
}

int engine_writer_start(engine *e, const char *path, void (*notify)(void *ctx), void *ctx,
			char *msg, size_t msglen)
{
	store_opts so = store_opts_default();
	int err = 0;

	if (e->w)
		return 0;
	if (e->opts.read_only)
		return RIGD_E_FORBIDDEN;
	so.sync_normal = e->opts.sync_normal;
	so.checkpoint_pages = e->opts.checkpoint_pages;
	so.fault_injection = e->opts.fault_injection;
	so.sync_delay_ms = e->opts.sync_delay_ms;
	so.no_lock = true;  /* this process holds the lock through e->st */
	e->wst = store_open(path, &so, &err, msg, msglen);
	if (!e->wst)
		return err ? err : RIGD_E_IO;
	e->w = writer_new(writer_run, e->wst, notify, ctx);
	if (!e->w) {
		store_close(e->wst);
		e->wst = NULL;
		if (msg && msglen)
			snprintf(msg, msglen, "cannot start the commit writer");
		return RIGD_E_NOMEM;
	}
	return 0;
}

void eng_writer_stop(engine *e)
{
	if (e->flight) {
		bool done;
		engine_commit_poll(e, true, &done);
	}
	writer_free(e->w);
	e->w = NULL;
	store_close(e->wst);
	e->wst = NULL;
}

int engine_writer_queued(const engine *e)
{
	return e->w ? writer_unfinished(e->w) : 0;
}
