/*
 * engine_undo.c: undo and redo. Each client has, per scene, a stack of the
 * batches it can undo and one of those it can redo, rebuilt from the log on
 * first use and kept up to date by every batch queued after.
 *
 * An undo or redo is an ordinary batch (the stored inverse, or the stored
 * ops) queued like engine_submit: it never writes to the database itself.
 */
#include "engine_internal.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a client's history read to rebuild its undo and redo stacks. */
#define HIST_WINDOW(depth) (4 * (depth))

/* ------------------------------------------------------------------------ */
/* Undo history. */

static void hist_free(hist *h)
{
	free(h->undo);
	free(h->redo);
	free(h);
}

/* Forgets every client's history of the scene (rebuilt from the log on
 * next use). */
void eng_hist_clear(scene_rt *rt)
{
	for (int i = 0; rt->hist && i < rt->hist_cap; i++) {
		hist *h = rt->hist[i];
		while (h) {
			hist *next = h->next;
			hist_free(h);
			h = next;
		}
		rt->hist[i] = NULL;
	}
	rt->n_hist = 0;
}

static unsigned hash_str(const char *s)
{
	return (unsigned)fnv1a(s, strlen(s), FNV_OFFSET);
}

static int push_seq(int64_t **a, int *n, int *cap, int64_t v, int depth)
{
	assert(*n >= 0 && *n <= *cap && (depth <= 0 || *n <= depth));
	if (*n == depth && depth > 0) {
		/* Drop the oldest: a client undoes at most 'depth' batches. */
		memmove(*a, *a + 1, sizeof(**a) * (size_t)(*n - 1));
		(*n)--;
	}
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 16;
		int64_t *p = realloc(*a, sizeof(*p) * (size_t)c);
		if (!p)
			return RIGD_E_NOMEM;
		*a = p;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return 0;
}

/* Removes the newest occurrence of 'v'. */
static void remove_seq(int64_t *a, int *n, int64_t v)
{
	for (int i = *n - 1; i >= 0; i--) {
		if (a[i] == v) {
			memmove(&a[i], &a[i + 1], sizeof(*a) * (size_t)(*n - i - 1));
			(*n)--;
			return;
		}
	}
}

/* One step of the history machine for a batch of the client. */
int eng_hist_step(hist *h, int depth, int64_t seq, int kind, int64_t target)
{
	switch (kind) {
	case STORE_UNDO:
		remove_seq(h->undo, &h->n_undo, target);
		return push_seq(&h->redo, &h->n_redo, &h->cap_redo, target, depth);
	case STORE_REDO:
		remove_seq(h->redo, &h->n_redo, target);
		return push_seq(&h->undo, &h->n_undo, &h->cap_undo, seq, depth);
	default:
		h->n_redo = 0;
		return push_seq(&h->undo, &h->n_undo, &h->cap_undo, seq, depth);
	}
}

typedef struct hist_load {
	hist *h;
	int depth;
} hist_load;

static int hist_load_cb(void *vctx, int64_t seq, int kind, int64_t target)
{
	hist_load *c = vctx;
	return eng_hist_step(c->h, c->depth, seq, kind, target);
}

hist *eng_hist_find(scene_rt *rt, const char *client)
{
	for (hist *h = rt->hist[hash_str(client) & (unsigned)(rt->hist_cap - 1)]; h; h = h->next)
		if (strcmp(h->client, client) == 0)
			return h;
	return NULL;
}

/* The history of 'client' in rt, built from the log and this turn's queue
 * on first use. NULL with *err set on failure. */
static hist *hist_get(engine *e, scene_rt *rt, const char *client, int *err)
{
	hist *h = eng_hist_find(rt, client);
	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h) {
		*err = RIGD_E_NOMEM;
		return NULL;
	}
	snprintf(h->client, sizeof(h->client), "%s", client);
	hist_load c = { h, e->opts.undo_depth };
	*err = store_client_history(e->st, rt->id, client, HIST_WINDOW(e->opts.undo_depth),
				    hist_load_cb, &c);
	if (*err == RIGD_E_STORAGE)
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	for (int i = 0; !*err && i < e->n_q; i++) {
		pending *p = &e->q[i];
		if (p->rt == rt && strcmp(p->client, client) == 0)
			*err = eng_hist_step(h, e->opts.undo_depth, p->seq, p->kind, p->target);
	}
	if (*err) {
		hist_free(h);
		return NULL;
	}
	/* Grow the table at load factor 2 (chains stay short). */
	if (rt->n_hist >= 2 * rt->hist_cap) {
		int cap = 2 * rt->hist_cap;
		hist **t = calloc((size_t)cap, sizeof(*t));
		if (t) {
			for (int i = 0; i < rt->hist_cap; i++) {
				hist *x = rt->hist[i];
				while (x) {
					hist *next = x->next;
					unsigned b = hash_str(x->client) & (unsigned)(cap - 1);
					x->next = t[b];
					t[b] = x;
					x = next;
				}
			}
			free(rt->hist);
			rt->hist = t;
			rt->hist_cap = cap;
		}
	}
	unsigned b = hash_str(client) & (unsigned)(rt->hist_cap - 1);
	h->next = rt->hist[b];
	rt->hist[b] = h;
	rt->n_hist++;
	return h;
}

/* ------------------------------------------------------------------------ */
/* Undo and redo, queued as batches. */

/* The stored ops (want_inverse false) or inverse of batch 'seq' of rt, as
 * a malloc'd copy: from this turn's queue or from the log. */
typedef struct row_copy {
	bool want_inverse;
	char *json;
	size_t len;
} row_copy;

static int row_copy_cb(void *vctx, const store_edit *row)
{
	row_copy *c = vctx;
	const char *src = c->want_inverse ? row->inverse : row->ops;
	size_t len = c->want_inverse ? row->inverse_len : row->ops_len;
	c->json = malloc(len + 1);
	if (!c->json)
		return RIGD_E_NOMEM;
	memcpy(c->json, src, len);
	c->json[len] = 0;
	c->len = len;
	return 0;
}

static int fetch_row(engine *e, scene_rt *rt, int64_t seq, bool want_inverse, row_copy *c)
{
	c->want_inverse = want_inverse;
	c->json = NULL;
	for (int i = 0; i < e->n_q; i++) {
		pending *p = &e->q[i];
		if (p->rt == rt && p->seq == seq) {
			store_edit row = { .ops = p->ops, .ops_len = p->ops_len,
					   .inverse = p->inverse, .inverse_len = p->inverse_len };
			return row_copy_cb(c, &row);
		}
	}
	int err = store_edits(e->st, rt->id, seq - 1, seq, want_inverse, row_copy_cb, c);
	if (err == RIGD_E_STORAGE)
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	if (!err && !c->json) {
		eng_set_errmsg(e, "scene '%s': seq %lld is missing from the log", rt->name, (long long)seq);
		err = RIGD_E_STORAGE;
	}
	return err;
}

static int undo_redo(engine *e, const char *name, const char *client, bool has_client_seq,
		     int64_t client_seq, bool redo, engine_ack *ack, edit_error *err)
{
	scene_rt *rt;
	int rc = eng_write_start(e, name, ack, err, &rt);
	if (rc)
		return rc;
	if (!client || !client[0] || strlen(client) > SCENE_ID_MAX) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client", "%s needs a client id",
			       redo ? "redo" : "undo");
		return RIGD_E_BAD_FIELD;
	}
	if (has_client_seq) {
		rc = eng_answer_resend(e, rt, client, client_seq, ack, err);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	hist *h = hist_get(e, rt, client, &rc);
	if (!h) {
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		return rc;
	}
	if ((redo ? h->n_redo : h->n_undo) == 0) {
		edit_error_set(err, RIGD_E_NOTHING_TO_UNDO, -1, "", "nothing to %s for '%s'",
			       redo ? "redo" : "undo", client);
		return RIGD_E_NOTHING_TO_UNDO;
	}
	int64_t target = redo ? h->redo[h->n_redo - 1] : h->undo[h->n_undo - 1];
	row_copy c;
	rc = fetch_row(e, rt, target, !redo, &c);
	if (rc) {
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		return rc;
	}
	proto_limits lim = eng_trusted_limits();
	edit_batch b;
	rc = proto_decode_ops(c.json, c.len, &lim, &b, err);
	free(c.json);
	if (rc) {
		eng_set_errmsg(e, "scene '%s': seq %lld has unreadable ops", rt->name, (long long)target);
		edit_error_set(err, RIGD_E_STORAGE, -1, "", "%s", err_str(RIGD_E_STORAGE));
		return RIGD_E_STORAGE;
	}
	snprintf(b.client, sizeof(b.client), "%s", client);
	b.has_client_seq = has_client_seq;
	b.client_seq = client_seq;
	rc = eng_apply_and_queue(e, rt, &b, NULL, redo ? STORE_REDO : STORE_UNDO, target, ack, err);
	edit_batch_release(&b);
	if (rc && rc != RIGD_E_NOMEM && rc != RIGD_E_INTERNAL && rc != RIGD_E_TOO_LARGE) {
		/* The batch no longer fits the scene: someone else's later
		 * batch deleted its node, took its id, or the like. */
		char why[EDIT_MESSAGE_MAX];
		snprintf(why, sizeof(why), "%s", err && err->message[0] ? err->message : err_str(rc));
		int op = err ? err->op : -1;
		char field[EDIT_FIELD_MAX];
		snprintf(field, sizeof(field), "%s", err ? err->field : "");
		edit_error_set(err, RIGD_E_UNDO_CONFLICT, op, field, "%s of seq %lld: %s",
			       redo ? "redo" : "undo", (long long)target, why);
		rc = RIGD_E_UNDO_CONFLICT;
	}
	return rc;
}

int engine_undo(engine *e, const char *name, const char *client, bool has_client_seq,
		int64_t client_seq, engine_ack *ack, edit_error *err)
{
	return undo_redo(e, name, client, has_client_seq, client_seq, false, ack, err);
}

int engine_redo(engine *e, const char *name, const char *client, bool has_client_seq,
		int64_t client_seq, engine_ack *ack, edit_error *err)
{
	return undo_redo(e, name, client, has_client_seq, client_seq, true, ack, err);
}

