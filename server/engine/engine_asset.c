/*
 * engine_asset.c: the assets of a scene (engine.h, "assets"): SVG
 * artwork, skeleton files, atlases and PNG pages, queued with the batch
 * that binds nodes to them and committed in its transaction, listed and
 * read as of any seq.
 *
 * Assets are append-only: a file name is taken once per scene and its
 * bytes never change, so the assets as of seq N are those stored by
 * batches 1..N. Undoing the batch that stored one takes its nodes away and
 * leaves the asset. Never reads the bytes: the caller passes bytes its
 * kind's reader checked (svg_sanitize, png_check, the skeleton readers),
 * and log import checks them before they come here.
 */
#include "engine_internal.h"

#include "codec/asset_check.h"
#include "codec/skel_clips_read.h"
#include "codec/svg.h"
#include "core/asset.h"
#include "core/err.h"
#include "core/sha256.h"
#include "core/skel_clips.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eng_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char d[SHA256_LEN];
	static const char hex[] = "0123456789abcdef";

	sha256_digest(data, len, d);
	for (int i = 0; i < SHA256_LEN; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

void eng_asset_free(eng_asset *a)
{
	while (a) {
		eng_asset *next = a->next;
		free(a->bytes);
		free(a->ids);
		free(a);
		a = next;
	}
}

int eng_skel_add(scene *s, const char *file, int kind, const char *data, size_t len)
{
	skel_clips *k;
	edit_error err;
	int rc;

	if (!skel_clips_kind(kind))
		return 0;
	rc = skel_clips_read(kind, file, data, len, &k, &err);
	/* The bytes were checked when they were stored: a file that does not
	 * read now (a reader grown stricter) keeps its nodes and plays no
	 * clip, rather than keeping its scene from loading. */
	if (rc)
		return rc == RIGD_E_NOMEM ? rc : 0;
	return scene_skel_add(s, k);
}

static int register_cb(void *ctx, const store_asset *a)
{
	int rc = asset_set_add(scene_assets(ctx), a->file, a->ids ? a->ids : "", a->ids_len);

	if (!rc && a->svg)
		rc = eng_skel_add(ctx, a->file, asset_kind_parse(a->kind), a->svg, (size_t)a->bytes);
	return rc;
}

int eng_assets_register(engine *e, int64_t scene_id, scene *s, int64_t upto)
{
	int rc = store_assets(e->st, scene_id, NULL, 0, upto, true, register_cb, s);

	if (rc == RIGD_E_STORAGE)
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	return rc;
}

/* A copy of 'in' as a queued asset, or NULL when out of memory. */
static eng_asset *asset_copy(const engine_asset *in)
{
	eng_asset *a = calloc(1, sizeof(*a));
	size_t ids_len = 0;

	if (!a)
		return NULL;
	snprintf(a->file, sizeof(a->file), "%s", in->file);
	a->kind = in->kind;
	eng_sha256_hex(in->bytes, in->len, a->sha256);
	for (int i = 0; i < in->n_ids; i++)
		ids_len += strlen(in->ids[i]) + 1;
	a->bytes = malloc(in->len + 1);
	a->ids = malloc(ids_len + 1);
	if (!a->bytes || !a->ids) {
		eng_asset_free(a);
		return NULL;
	}
	if (in->len)
		memcpy(a->bytes, in->bytes, in->len);
	a->bytes[in->len] = '\0';
	a->len = in->len;
	for (int i = 0; i < in->n_ids; i++) {
		size_t n = strlen(in->ids[i]);
		memcpy(a->ids + a->ids_len, in->ids[i], n);
		a->ids_len += n;
		a->ids[a->ids_len++] = '\n';
	}
	a->ids[a->ids_len] = '\0';
	return a;
}

/* The asset 'file' of rt queued in this turn, or NULL. */
static const eng_asset *queued_asset(const engine *e, const scene_rt *rt, const char *file)
{
	for (int i = 0; i < e->n_q; i++)
		if (e->q[i].rt == rt)
			for (const eng_asset *a = e->q[i].asset; a; a = a->next)
				if (!strcmp(a->file, file))
					return a;
	return NULL;
}

/* Whether the newline-separated list 'ids' holds 'id'. */
static bool ids_hold(const char *ids, size_t len, const char *id)
{
	size_t n = strlen(id);

	for (size_t off = 0; off < len;) {
		const char *nl = memchr(ids + off, '\n', len - off);
		size_t k = nl ? (size_t)(nl - (ids + off)) : len - off;
		if (k == n && !memcmp(ids + off, id, n))
			return true;
		off += k + 1;
	}
	return false;
}

/* The result of a look-up by file name in the store. */
typedef struct found_ctx {
	const char *id;           /* an element id to look for, or NULL */
	bool file, has_id;
	char sha256[65];
	int kind;
	char *svg;                /* with want_svg: a copy, owned */
	size_t len;
	bool want_svg;
} found_ctx;

static int found_cb(void *vctx, const store_asset *a)
{
	found_ctx *c = vctx;

	c->file = true;
	c->kind = asset_kind_parse(a->kind);
	snprintf(c->sha256, sizeof(c->sha256), "%s", a->sha256);
	if (c->id)
		c->has_id = a->ids && ids_hold(a->ids, a->ids_len, c->id);
	if (c->want_svg) {
		c->svg = malloc((size_t)a->bytes + 1);
		if (!c->svg)
			return RIGD_E_NOMEM;
		memcpy(c->svg, a->svg, (size_t)a->bytes);
		c->svg[a->bytes] = '\0';
		c->len = (size_t)a->bytes;
	}
	return 0;
}

static int store_rc(engine *e, int rc)
{
	if (rc == RIGD_E_STORAGE)
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	return rc;
}

int engine_asset_has(engine *e, const char *name, const char *file, const char *id,
		     bool *has_file, bool *has_id)
{
	scene_rt *rt = eng_find_scene(e, name);
	found_ctx c = { .id = id };

	*has_file = false;
	if (has_id)
		*has_id = false;
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	const eng_asset *q = queued_asset(e, rt, file);
	if (q) {
		c.file = true;
		c.has_id = id && ids_hold(q->ids, q->ids_len, id);
	} else {
		int rc = store_assets(e->st, rt->id, file, 0, -1, id != NULL, found_cb, &c);
		if (rc)
			return store_rc(e, rc);
	}
	*has_file = c.file;
	if (has_id)
		*has_id = c.has_id;
	return 0;
}

/* Checks a[0..n) against the asset rules and the scene's files. 0 or the
 * error, said in 'err'. */
static int check_new_assets(engine *e, const scene_rt *rt, const engine_asset *a, int n,
			    edit_error *err)
{
	if (n < 1 || n > ENGINE_BATCH_ASSETS_MAX) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "file", "a batch stores 1 to %d assets",
			       ENGINE_BATCH_ASSETS_MAX);
		return RIGD_E_BAD_FIELD;
	}
	for (int i = 0; i < n; i++) {
		const char *file = a[i].file;
		bool taken = false;
		int rc;

		if (!file || strlen(file) > PROTO_ASSET_FILE_MAX || !svg_file_name_valid(file)) {
			edit_error_set(err, RIGD_E_BAD_FIELD, -1, "file",
				       "file: 1 to 128 characters of [A-Za-z0-9_.-], not starting with a dot");
			return RIGD_E_BAD_FIELD;
		}
		if (!asset_kind_name(a[i].kind)) {
			edit_error_set(err, RIGD_E_BAD_FIELD, -1, "file", "asset '%s': no such kind",
				       file);
			return RIGD_E_BAD_FIELD;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(a[j].file, file)) {
				edit_error_set(err, RIGD_E_BAD_FIELD, -1, "file",
					       "asset '%s' twice in one batch", file);
				return RIGD_E_BAD_FIELD;
			}
		if ((rc = engine_asset_has(e, rt->name, file, NULL, &taken, NULL)) != 0) {
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			return rc;
		}
		if (taken) {
			edit_error_set(err, RIGD_E_ASSET_EXISTS, -1, "file",
				       "scene '%s' already has asset '%s' (assets are immutable)",
				       rt->name, file);
			return RIGD_E_ASSET_EXISTS;
		}
	}
	return 0;
}

int engine_assets_submit(engine *e, const char *name, const edit_batch *b, const engine_asset *in,
			 int n, const edit_limits *lim, engine_ack *ack, edit_error *err)
{
	scene_rt *rt;
	eng_asset *chain = NULL, **tail = &chain;
	int rc = eng_write_start(e, name, ack, err, &rt);

	if (rc || (rc = check_new_assets(e, rt, in, n, err)) != 0)
		return rc;
	for (int i = 0; i < n; i++) {
		if (!(*tail = asset_copy(&in[i]))) {
			eng_asset_free(chain);
			edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
			return RIGD_E_NOMEM;
		}
		tail = &(*tail)->next;
	}
	/* Known to the scene first, so that the batch's layers may name them;
	 * taken back with the batch (here, or by a failed commit). */
	for (const eng_asset *a = chain; a; a = a->next)
		if (asset_set_add(scene_assets(rt->sc), a->file, a->ids, a->ids_len) ||
		    eng_skel_add(rt->sc, a->file, a->kind, a->bytes, a->len)) {
			rc = RIGD_E_NOMEM;
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			break;
		}
	if (!rc)
		rc = eng_apply_and_queue_asset(e, rt, b, lim, STORE_EDIT, 0, chain, ack, err);
	if (rc) {
		for (const eng_asset *a = chain; a; a = a->next) {
			asset_set_remove(scene_assets(rt->sc), a->file);
			scene_skel_remove(rt->sc, a->file);
		}
		eng_asset_free(chain);
		return rc;
	}
	e->q[e->n_q - 1].asset = chain;
	return 0;
}

int engine_asset_submit(engine *e, const char *name, const edit_batch *b, const char *file,
			const engine_svg *svg, const edit_limits *lim, engine_ack *ack,
			edit_error *err)
{
	engine_asset a = { file, ASSET_SVG, svg->svg, svg->len, svg->ids, svg->n_ids };

	return engine_assets_submit(e, name, b, &a, 1, lim, ack, err);
}

/* The seq an ?at= names: 'at', or the last committed when negative. */
static int resolve_at(const scene_rt *rt, int64_t at, int64_t *out)
{
	if (at > rt->seq)
		return RIGD_E_BAD_SEQ;
	*out = at < 0 ? rt->seq : at;
	return 0;
}

typedef struct list_ctx {
	engine_asset_fn fn;
	void *ctx;
} list_ctx;

static int list_cb(void *vctx, const store_asset *a)
{
	list_ctx *c = vctx;
	engine_asset_info info = {
		.file = a->file,
		.kind = asset_kind_parse(a->kind),
		.sha256 = a->sha256,
		.bytes = a->bytes,
		.seq = a->seq,
	};

	return c->fn(c->ctx, &info);
}

int engine_assets(engine *e, const char *name, int64_t at, engine_asset_fn fn, void *ctx)
{
	scene_rt *rt = eng_find_scene(e, name);
	list_ctx c = { fn, ctx };
	int64_t to;

	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	if (resolve_at(rt, at, &to))
		return RIGD_E_BAD_SEQ;
	if (to == 0)
		return 0;
	return store_rc(e, store_assets(e->st, rt->id, NULL, 1, to, false, list_cb, &c));
}

int engine_asset_get(engine *e, const char *name, const char *file, int64_t at, char **svg,
		     size_t *len, char sha256[65], int *kind)
{
	scene_rt *rt = eng_find_scene(e, name);
	found_ctx c = { .want_svg = true };
	int64_t to;
	int rc;

	*svg = NULL;
	*len = 0;
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	if (resolve_at(rt, at, &to))
		return RIGD_E_BAD_SEQ;
	if (to == 0)
		return RIGD_E_UNKNOWN_ASSET;
	rc = store_rc(e, store_assets(e->st, rt->id, file, 1, to, true, found_cb, &c));
	if (rc) {
		free(c.svg);
		return rc;
	}
	if (!c.file)
		return RIGD_E_UNKNOWN_ASSET;
	*svg = c.svg;
	*len = c.len;
	memcpy(sha256, c.sha256, 65);
	if (kind)
		*kind = c.kind;
	return 0;
}

/* The state of eng_assets_verify. */
typedef struct verify_ctx {
	const scene_rt *rt;
	engine_report_fn fn;
	void *ctx;
	int problems;
} verify_ctx;

static void verify_report(verify_ctx *v, const char *file, const char *what)
{
	char line[512];

	snprintf(line, sizeof(line), "scene '%s': asset '%s': %s", v->rt->name, file, what);
	if (v->fn)
		v->fn(v->ctx, line);
	v->problems++;
}

/* The ids of 'c' as the store lists them, compared with 'ids'. */
static bool ids_match(const asset_checked *c, const char *ids, size_t len)
{
	size_t off = 0;

	for (int i = 0; i < c->n_ids; i++) {
		size_t n = strlen(c->ids[i]);
		if (off + n + 1 > len || memcmp(ids + off, c->ids[i], n) || ids[off + n] != '\n')
			return false;
		off += n + 1;
	}
	return off == len;
}

static int verify_cb(void *vctx, const store_asset *a)
{
	verify_ctx *v = vctx;
	asset_checked again;
	edit_error err;
	char hex[65], why[EDIT_MESSAGE_MAX];
	int kind = asset_kind_parse(a->kind);

	eng_sha256_hex(a->svg, (size_t)a->bytes, hex);
	if (strcmp(hex, a->sha256))
		verify_report(v, a->file, "its bytes do not have its sha256");
	if (a->seq < 1 || a->seq > v->rt->seq)
		verify_report(v, a->file, "stored by a seq the log does not have");
	int rc = asset_check(kind, a->file, a->svg, (size_t)a->bytes, NULL, "", &again, &err);
	if (rc == RIGD_E_NOMEM)
		return rc;
	if (rc) {
		/* The reader's message, without its "asset 'FILE': " (said again). */
		const char *m = strstr(err.message, "': ");
		snprintf(why, sizeof(why), "%s", m ? m + 3 : err.message);
		verify_report(v, a->file, why);
		return 0;
	}
	if (!ids_match(&again, a->ids ? a->ids : "", a->ids_len))
		verify_report(v, a->file, "the ids it lists are not the ones its reader finds");
	asset_checked_release(&again);
	return 0;
}

int eng_assets_verify(engine *e, const scene_rt *rt, engine_report_fn fn, void *ctx)
{
	verify_ctx v = { rt, fn, ctx, 0 };
	int rc = store_assets(e->st, rt->id, NULL, 0, -1, true, verify_cb, &v);

	if (rc)
		return store_rc(e, rc);
	return v.problems;
}
