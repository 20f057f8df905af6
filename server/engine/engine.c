/*
 * engine.c: scenes in memory and the turn: open and close, scenes by name,
 * submit (applied in memory at once, queued), and the group commit that
 * stores a turn's batches in one transaction (see engine.h).
 *
 * Wires edit (apply, exact inverses), proto (the JSON of log rows) and store
 * (SQLite rows); includes neither sqlite3.h nor cJSON.h, and never touches a
 * socket. The rest of the engine lives beside it: engine_snap.c (snapshots,
 * replay, a scene at a seq), engine_opimage.c (the binary image of a
 * batch's ops), engine_undo.c (undo and redo), engine_log.c (log export and
 * import), engine_check.c (rigd check).
 */
#include "engine_internal.h"

#include "core/asset.h"
#include "core/edit.h"
#include "core/skel_clips.h"
#include "core/err.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Helpers shared by the engine's files. */

void eng_set_errmsg(engine *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->errmsg, sizeof(e->errmsg), fmt, ap);
	va_end(ap);
}

int64_t eng_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Limits for JSON the engine wrote itself (log rows): the size and op count
 * were checked when the batch was first accepted, and inverses may hold
 * more ops than any submitted batch. */
proto_limits eng_trusted_limits(void)
{
	proto_limits l = proto_limits_default();
	l.max_bytes = SIZE_MAX;
	l.edit.max_ops = INT_MAX;
	return l;
}

/* Encodes the ops of 'b' as a malloc'd JSON array. */
int eng_encode_ops(const edit_batch *b, char **out, size_t *len)
{
	proto_buf buf;
	proto_buf_init(&buf, 0);
	int err = proto_encode_ops(&buf, b);
	if (!err) {
		*len = buf.len;
		*out = proto_buf_take(&buf);
		if (!*out)
			err = RIGD_E_NOMEM;
	}
	proto_buf_release(&buf);
	return err;
}

/* ------------------------------------------------------------------------ */
/* Scenes by name. */

static int find_index(const engine *e, const char *name, bool *found)
{
	int lo = 0, hi = e->n_scenes;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(e->scenes[mid]->name, name);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

scene_rt *eng_find_scene(const engine *e, const char *name)
{
	bool found;
	if (!name)
		return NULL;
	int i = find_index(e, name, &found);
	return found ? e->scenes[i] : NULL;
}

static void rt_free(scene_rt *rt)
{
	if (!rt)
		return;
	eng_hist_clear(rt);
	free(rt->hist);
	scene_free(rt->sc);
	free(rt);
}

/* Inserts 'rt' in name order. */
static int insert_scene(engine *e, scene_rt *rt)
{
	bool found;
	int at = find_index(e, rt->name, &found);
	if (found)
		return RIGD_E_SCENE_EXISTS;
	if (e->n_scenes == e->cap_scenes) {
		int cap = e->cap_scenes ? 2 * e->cap_scenes : 8;
		scene_rt **p = realloc(e->scenes, sizeof(*p) * (size_t)cap);
		if (!p)
			return RIGD_E_NOMEM;
		e->scenes = p;
		e->cap_scenes = cap;
	}
	memmove(&e->scenes[at + 1], &e->scenes[at], sizeof(*e->scenes) * (size_t)(e->n_scenes - at));
	e->scenes[at] = rt;
	e->n_scenes++;
	/* Sorted by name, which find_index's binary search relies on. */
	assert(at + 1 == e->n_scenes || strcmp(rt->name, e->scenes[at + 1]->name) < 0);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Open and close. */

engine_opts engine_opts_default(void)
{
	engine_opts o;
	memset(&o, 0, sizeof(o));
	o.checkpoint_pages = 1000;
	o.snapshot_ops = ENGINE_DEFAULT_SNAPSHOT_OPS;
	o.undo_depth = ENGINE_DEFAULT_UNDO_DEPTH;
	o.max_nodes = SCENE_DEFAULT_MAX_NODES;
	o.limits = edit_limits_default();
	return o;
}

static scene_rt *rt_new(const char *name, int64_t id)
{
	scene_rt *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return NULL;
	snprintf(rt->name, sizeof(rt->name), "%s", name);
	rt->id = id;
	rt->hist_cap = 16;
	rt->hist = calloc((size_t)rt->hist_cap, sizeof(*rt->hist));
	rt->sc = scene_new();
	if (!rt->hist || !rt->sc) {
		rt_free(rt);
		return NULL;
	}
	rt->next_seq = 1;
	rt->dims = 3;
	return rt;
}

static int open_scene_cb(void *vctx, const store_scene *sc)
{
	engine *e = vctx;
	scene_rt *rt = rt_new(sc->name, sc->id);
	if (!rt)
		return RIGD_E_NOMEM;
	int err = insert_scene(e, rt);
	if (err) {
		rt_free(rt);
		return err == RIGD_E_SCENE_EXISTS ? RIGD_E_STORAGE : err;
	}
	rt->seq = sc->last_seq; /* load_scene sets it from the log */
	rt->dims = sc->dims == 2 ? 2 : 3;
	scene_set_dims(rt->sc, rt->dims);
	return 0;
}

engine *engine_open(const char *path, const engine_opts *o, int *err, char *msg, size_t msglen)
{
	engine_opts d = engine_opts_default();
	engine_opts opts = o ? *o : d;
	if (opts.snapshot_ops <= 0)
		opts.snapshot_ops = d.snapshot_ops;
	if (opts.undo_depth <= 0)
		opts.undo_depth = d.undo_depth;
	if (opts.max_nodes <= 0)
		opts.max_nodes = d.max_nodes;
	if (opts.limits.max_ops <= 0)
		opts.limits.max_ops = d.limits.max_ops;
	if (opts.limits.max_id_len <= 0 || opts.limits.max_id_len > SCENE_ID_MAX)
		opts.limits.max_id_len = d.limits.max_id_len;

	int e_err = 0;
	engine *e = calloc(1, sizeof(*e));
	if (!e) {
		if (err)
			*err = RIGD_E_NOMEM;
		if (msg && msglen)
			snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	e->opts = opts;
	store_opts so = store_opts_default();
	so.sync_normal = opts.sync_normal;
	so.checkpoint_pages = opts.checkpoint_pages;
	so.fault_injection = opts.fault_injection;
	so.sync_delay_ms = opts.sync_delay_ms;
	so.shared = opts.read_only;
	e->st = store_open(path, &so, &e_err, msg, msglen);
	if (!e->st)
		goto fail;
	e_err = store_scenes(e->st, open_scene_cb, e);
	if (e_err) {
		if (msg && msglen)
			snprintf(msg, msglen, "'%s': cannot list scenes: %s", path, store_errmsg(e->st));
		goto fail;
	}
	for (int i = 0; i < e->n_scenes; i++) {
		e_err = eng_load_scene(e, e->scenes[i]);
		if (e_err) {
			if (msg && msglen)
				snprintf(msg, msglen, "'%s': %s", path, e->errmsg);
			goto fail;
		}
	}
	if (err)
		*err = 0;
	return e;
fail:
	if (err)
		*err = e_err;
	engine_close(e);
	return NULL;
}



void engine_close(engine *e)
{
	if (!e)
		return;
	eng_writer_stop(e);
	eng_queue_clear(e);
	store_close(e->st);
	for (int i = 0; i < e->n_scenes; i++)
		rt_free(e->scenes[i]);
	free(e->scenes);
	free(e->q);
	free(e->qidx);
	free(e);
}

const char *engine_errmsg(const engine *e)
{
	return e->errmsg;
}

/* ------------------------------------------------------------------------ */
/* Scenes. */

/* Refuses a write on an engine opened read-only. */
int eng_writable(engine *e, edit_error *err)
{
	if (!e->opts.read_only)
		return 0;
	edit_error_set(err, RIGD_E_FORBIDDEN, -1, "", "the database was opened read-only");
	return RIGD_E_FORBIDDEN;
}

int engine_scene_create(engine *e, const char *name)
{
	return engine_scene_create_dims(e, name, 3);
}

int engine_scene_create_dims(engine *e, const char *name, int dims)
{
	if (eng_writable(e, NULL))
		return RIGD_E_FORBIDDEN;
	if (dims != 2 && dims != 3)
		return RIGD_E_BAD_FIELD;
	if (!name || !scene_id_valid(name))
		return RIGD_E_BAD_ID;
	if (eng_find_scene(e, name))
		return RIGD_E_SCENE_EXISTS;
	scene_rt *rt = rt_new(name, 0);
	if (!rt)
		return RIGD_E_NOMEM;
	scene_set_max_nodes(rt->sc, e->opts.max_nodes);
	rt->dims = dims;
	scene_set_dims(rt->sc, dims);
	/* Room in the array first, so that nothing can fail after the row is
	 * stored. */
	if (e->n_scenes == e->cap_scenes) {
		int cap = e->cap_scenes ? 2 * e->cap_scenes : 8;
		scene_rt **p = realloc(e->scenes, sizeof(*p) * (size_t)cap);
		if (!p) {
			rt_free(rt);
			return RIGD_E_NOMEM;
		}
		e->scenes = p;
		e->cap_scenes = cap;
	}
	int err = store_scene_create_dims(e->st, name, eng_now_us(), dims, &rt->id);
	if (err) {
		if (err == RIGD_E_STORAGE)
			eng_set_errmsg(e, "%s", store_errmsg(e->st));
		rt_free(rt);
		return err;
	}
	err = insert_scene(e, rt);
	assert(err == 0);
	return err;
}

int engine_scene_delete(engine *e, const char *name)
{
	bool found;
	int i = name ? find_index(e, name, &found) : 0;
	if (!name || !found)
		return RIGD_E_UNKNOWN_SCENE;
	scene_rt *rt = e->scenes[i];
	if (eng_writable(e, NULL))
		return RIGD_E_FORBIDDEN;
	if (rt->n_pending) {
		eng_set_errmsg(e, "scene '%s' has uncommitted batches", name);
		return RIGD_E_INTERNAL;
	}
	int err = store_scene_delete(e->st, rt->id);
	if (err) {
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
		return err == RIGD_E_UNKNOWN_SCENE ? RIGD_E_STORAGE : err;
	}
	memmove(&e->scenes[i], &e->scenes[i + 1], sizeof(*e->scenes) * (size_t)(e->n_scenes - i - 1));
	e->n_scenes--;
	rt_free(rt);
	return 0;
}

const scene *engine_scene(const engine *e, const char *name)
{
	scene_rt *rt = eng_find_scene(e, name);
	return rt ? rt->sc : NULL;
}

int engine_scene_dims(const engine *e, const char *name)
{
	scene_rt *rt = eng_find_scene(e, name);
	return rt ? rt->dims : RIGD_E_UNKNOWN_SCENE;
}

int64_t engine_scene_gen(engine *e, const char *name)
{
	scene_rt *rt = eng_find_scene(e, name);
	int64_t gen = 0;
	int err;

	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	if ((err = store_scene_gen(e->st, rt->id, &gen)) != 0) {
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
		return err;
	}
	return gen;
}

int engine_scene_set_gen(engine *e, const char *name, int64_t gen)
{
	scene_rt *rt = eng_find_scene(e, name);
	int err;

	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	if (eng_writable(e, NULL))
		return RIGD_E_FORBIDDEN;
	if (store_in_transaction(e->st))
		return RIGD_E_INTERNAL;
	if ((err = store_scene_set_gen(e->st, rt->id, gen)) != 0 && err != RIGD_E_BAD_FIELD)
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	return err;
}

int64_t engine_seq(const engine *e, const char *name)
{
	scene_rt *rt = eng_find_scene(e, name);
	return rt ? rt->seq : RIGD_E_UNKNOWN_SCENE;
}

int engine_scenes(const engine *e, engine_scene_info *out, int cap)
{
	for (int i = 0; i < e->n_scenes && i < cap; i++) {
		out[i].name = e->scenes[i]->name;
		out[i].seq = e->scenes[i]->seq;
		out[i].nodes = scene_count(e->scenes[i]->sc);
	}
	return e->n_scenes;
}

/* ------------------------------------------------------------------------ */
/* The queue of this turn. */

static unsigned qkey(const scene_rt *rt, const char *client, int64_t client_seq)
{
	uint64_t h = fnv1a(client, strlen(client), FNV_OFFSET);
	h = fnv1a(&client_seq, sizeof(client_seq), h);
	h = fnv1a(&rt, sizeof(rt), h);
	return (unsigned)(h ^ (h >> 32));
}

/* The queued batch of (rt, client, client_seq), or NULL. */
static pending *queue_find(engine *e, const scene_rt *rt, const char *client, int64_t client_seq)
{
	if (!e->qidx_cap)
		return NULL;
	unsigned mask = (unsigned)e->qidx_cap - 1;
	for (unsigned i = qkey(rt, client, client_seq) & mask;; i = (i + 1) & mask) {
		int k = e->qidx[i];
		if (k < 0)
			return NULL;
		pending *p = &e->q[k];
		if (p->rt == rt && p->client_seq == client_seq && strcmp(p->client, client) == 0)
			return p;
	}
}

static void qidx_put(engine *e, int k)
{
	pending *p = &e->q[k];
	unsigned mask = (unsigned)e->qidx_cap - 1;
	unsigned i = qkey(p->rt, p->client, p->client_seq) & mask;
	/* At most half full (queue_reserve), so the probe ends. */
	assert(p->has_client_seq && 2 * (k + 1) <= e->qidx_cap);
	while (e->qidx[i] >= 0)
		i = (i + 1) & mask;
	e->qidx[i] = k;
}

/* Room for one more queued batch (and its index entry). */
static int queue_reserve(engine *e)
{
	if (e->n_q == e->cap_q) {
		int cap = e->cap_q ? 2 * e->cap_q : 64;
		pending *p = realloc(e->q, sizeof(*p) * (size_t)cap);
		if (!p)
			return RIGD_E_NOMEM;
		e->q = p;
		e->cap_q = cap;
	}
	if (2 * (e->n_q + 1) > e->qidx_cap) {
		int cap = e->qidx_cap ? 2 * e->qidx_cap : 128;
		int *t = malloc(sizeof(*t) * (size_t)cap);
		if (!t)
			return RIGD_E_NOMEM;
		for (int i = 0; i < cap; i++)
			t[i] = -1;
		free(e->qidx);
		e->qidx = t;
		e->qidx_cap = cap;
		for (int k = 0; k < e->n_q; k++)
			if (e->q[k].has_client_seq)
				qidx_put(e, k);
	}
	return 0;
}

static void pending_release(pending *p)
{
	free(p->ops);
	free(p->inverse);
	free(p->ops_bin);
	edit_batch_release(&p->inv);
	eng_asset_free(p->asset);
	p->asset = NULL;
}

void eng_queue_clear(engine *e)
{
	for (int i = 0; i < e->n_q; i++)
		pending_release(&e->q[i]);
	e->n_q = 0;
	for (int i = 0; i < e->qidx_cap; i++)
		e->qidx[i] = -1;
}

int engine_pending(const engine *e)
{
	return e->n_q;
}

int engine_scene_pending(const engine *e, const char *name)
{
	const scene_rt *rt = e->n_q ? eng_find_scene(e, name) : NULL;

	return rt ? rt->n_pending : 0;
}

void engine_ack_init(engine_ack *a)
{
	memset(a, 0, sizeof(*a));
	edit_result_init(&a->changes);
}

void engine_ack_release(engine_ack *a)
{
	if (!a)
		return;
	edit_result_release(&a->changes);
	a->seq = 0;
	a->recomputed = 0;
	a->duplicate = false;
}

/* A resend of (client, client_seq) already queued or committed: 1, with
 * *ack (may be NULL) its seq and duplicate = true, when there is one; 0
 * when not; or a negative error, set in 'err'. */
int eng_answer_resend(engine *e, scene_rt *rt, const char *client, int64_t client_seq,
		      engine_ack *ack, edit_error *err)
{
	int64_t seq = 0;
	pending *p = queue_find(e, rt, client, client_seq);
	if (p) {
		seq = p->seq;
	} else {
		int rc = store_edit_lookup(e->st, rt->id, client, client_seq, &seq);
		if (rc) {
			eng_set_errmsg(e, "%s", store_errmsg(e->st));
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			return rc;
		}
		if (seq <= 0)
			return 0;
	}
	if (ack) {
		ack->seq = seq;
		ack->duplicate = true;
	}
	return 1;
}

/* What every write through the queue starts with: 'ack' (may be NULL)
 * initialised, 'err' cleared, scene 'name' found (*rt) and the engine
 * writable. Returns 0, RIGD_E_UNKNOWN_SCENE or RIGD_E_FORBIDDEN. */
int eng_write_start(engine *e, const char *name, engine_ack *ack, edit_error *err,
		    scene_rt **rt)
{
	if (ack)
		engine_ack_init(ack);
	edit_error_clear(err);
	*rt = eng_find_scene(e, name);
	if (!*rt) {
		edit_error_set(err, RIGD_E_UNKNOWN_SCENE, -1, "scene", "unknown scene '%s'",
			       name ? name : "");
		return RIGD_E_UNKNOWN_SCENE;
	}
	return eng_writable(e, err) ? RIGD_E_FORBIDDEN : 0;
}

/*
 * Applies 'b' to rt and queues it as a batch of 'kind' (target: the undone
 * or redone seq). 'lim' NULL for trusted batches. Duplicates are the
 * caller's business.
 */
int eng_apply_and_queue(engine *e, scene_rt *rt, const edit_batch *b, const edit_limits *lim,
			int kind, int64_t target, engine_ack *ack, edit_error *err)
{
	return eng_apply_and_queue_asset(e, rt, b, lim, kind, target, NULL, ack, err);
}

/*
 * Refused before it is queued: a batch committed here must fit its log
 * line wherever the log goes (a cluster's stream, engine_set_line_max).
 * 0, or the error: when the line is too long, 'err' says so and *said is
 * set.
 */
static int check_line(engine *e, const pending *p, const struct eng_asset *asset,
		      edit_error *err, bool *said)
{
	proto_log_asset a[ENGINE_BATCH_ASSETS_MAX];
	size_t line_len = 0;
	int n = 0, rc;

	for (const eng_asset *x = asset; x && n < ENGINE_BATCH_ASSETS_MAX; x = x->next, n++) {
		snprintf(a[n].file, sizeof(a[n].file), "%s", x->file);
		snprintf(a[n].sha256, sizeof(a[n].sha256), "%s", x->sha256);
		a[n].kind = x->kind;
		a[n].bytes = x->bytes;
		a[n].len = x->len;
	}
	rc = eng_line_len(p->seq, p->time_us, p->client, p->has_client_seq, p->client_seq, p->kind,
			  p->target, p->ops_len, n ? a : NULL, n, &line_len);
	if (!rc && (rc = eng_line_fits(e, "the batch", line_len, err)) != 0)
		*said = true;
	return rc;
}

int eng_apply_and_queue_asset(engine *e, scene_rt *rt, const edit_batch *b,
			      const edit_limits *lim, int kind, int64_t target,
			      const struct eng_asset *asset, engine_ack *ack, edit_error *err)
{
	edit_result res;
	bool said = false;
	edit_batch inv, resolved;
	/* Relative ops (rotate, move, ik) and angles are logged as the
	 * absolute channels they produced, so replay needs no solver. */
	bool relative = !edit_batch_is_absolute(b);
	const edit_batch *logged = relative ? &resolved : b;
	/* Seqs are gapless: the committed ones, then one per queued batch. */
	assert(rt->next_seq == rt->seq + rt->n_pending + 1);
	assert(!e->flight);  /* the queue is the commit's while it runs */
	assert(kind == STORE_EDIT ? target == 0 : target > 0 && target < rt->next_seq);
	int rc = queue_reserve(e);
	if (rc) {
		edit_error_set(err, rc, -1, "", "out of memory");
		return rc;
	}
	rc = edit_apply_resolve(rt->sc, b, lim, &res, &inv, relative ? &resolved : NULL, err);
	if (rc)
		return rc; /* the scene is as it was, out of memory or not */
	pending *p = &e->q[e->n_q];
	memset(p, 0, sizeof(*p));
	p->rt = rt;
	p->seq = rt->next_seq;
	p->time_us = eng_now_us();
	edit_copy_name(p->client, sizeof(p->client), b->client);
	p->has_client_seq = b->has_client_seq;
	p->client_seq = b->client_seq;
	p->kind = kind;
	p->target = target;
	p->n_ops = logged->n_ops;
	rc = eng_encode_ops(logged, &p->ops, &p->ops_len);
	if (!rc)
		rc = eng_encode_ops(&inv, &p->inverse, &p->inverse_len);
	if (!rc)
		rc = engine_ops_encode_bin(logged, &p->ops_bin, &p->ops_bin_len);
	if (relative)
		edit_batch_release(&resolved);
	if (!rc && e->line_max)
		rc = check_line(e, p, asset, err, &said);
	hist *h = eng_hist_find(rt, p->client);
	if (!rc && h)
		rc = eng_hist_step(h, e->opts.undo_depth, p->seq, kind, target);
	if (rc) {
		/* Out of memory: take the batch back out of the scene, which
		 * allocates nothing and so cannot run out of memory too. Should
		 * it fail all the same (a bug), the scene no longer matches its
		 * log: broken, so that the next commit reloads it. */
		if (edit_revert(rt->sc, &inv) != 0)
			rt->broken = true;
		free(p->ops);
		free(p->inverse);
		free(p->ops_bin);
		edit_result_release(&res);
		if (!said) {
			/* The history step may have half happened. */
			eng_hist_clear(rt);
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		}
		return rc;
	}
	edit_batch_move(&p->inv, &inv);
	if (p->has_client_seq)
		qidx_put(e, e->n_q);
	e->n_q++;
	rt->next_seq++;
	rt->n_pending++;
	rt->pending_weight += batch_weight(p->n_ops);
	if (ack) {
		ack->seq = p->seq;
		ack->recomputed = res.recomputed;
		ack->changes = res;
	} else {
		edit_result_release(&res);
	}
	return 0;
}

int engine_submit(engine *e, const char *name, const edit_batch *b, engine_ack *ack,
		  edit_error *err)
{
	return engine_submit_limits(e, name, b, &e->opts.limits, ack, err);
}

int engine_submit_limits(engine *e, const char *name, const edit_batch *b,
			 const edit_limits *lim, engine_ack *ack, edit_error *err)
{
	/* An ordinary batch: what a log line without "undo" or "redo" is. */
	return engine_submit_logged(e, name, b, STORE_EDIT, 0, lim, ack, err);
}

long engine_update(engine *e, const char *name, scene_range_fn fn, void *ctx)
{
	scene_rt *rt = eng_find_scene(e, name);
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	return scene_update(rt->sc, (uint64_t)rt->seq, fn, ctx);
}

void engine_get_stats(const engine *e, engine_stats *out)
{
	*out = e->stats;
	out->checkpoints = store_checkpoints(e->st) + (e->wst ? store_checkpoints(e->wst) : 0);
}

/* The writer's connection (when there is one) fails alike: the commits
 * run there. */
int engine_fault(engine *e, unsigned ops, long after, int kind)
{
	int rc = store_fault_set(e->st, ops, after, kind);

	if (!rc && e->wst)
		rc = store_fault_set(e->wst, ops, after, kind);
	return rc;
}

void engine_fault_clear(engine *e)
{
	store_fault_clear(e->st);
	if (e->wst)
		store_fault_clear(e->wst);
}
