/*
 * fuzz_common.h: what the libFuzzer targets share: a check that fails
 * loudly, a hash of everything a scene stores, and the structural and
 * numeric invariants every scene must keep after an edit.
 *
 * A broken invariant is reported on stderr and abort()s, which libFuzzer
 * (and the corpus replay) turns into a crash with the input saved. Header
 * only, static functions: each fuzzer is one translation unit.
 */
#ifndef RIGD_FUZZ_COMMON_H
#define RIGD_FUZZ_COMMON_H

#include "core/edit.h"
#include "core/err.h"
#include "core/math.h"
#include "core/scene.h"
#include "../scene_digest.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                      \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__,  \
				__LINE__, #cond);                                  \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			abort();                                                   \
		}                                                                  \
	} while (0)

/* 'len' bytes of 'text' are UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF): what rigd sends in a websocket text
 * frame must be, or the browser fails the connection (RFC 6455, 8.1). */
static inline void fuzz_check_utf8(const char *text, size_t len, const char *what)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		unsigned c = p[i], cp, k;

		if (c < 0x80) {
			i++;
			continue;
		}
		k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
		FUZZ_CHECK(k && c < 0xF5 && i + k <= len, "%s: byte %#x at %zu is not UTF-8: %.300s",
			   what, c, i, text);
		cp = c & (0x7F >> k);
		for (unsigned j = 1; j < k; j++) {
			FUZZ_CHECK((p[i + j] & 0xC0) == 0x80, "%s: bad UTF-8 at %zu: %.300s", what,
				   i, text);
			cp = cp << 6 | (p[i + j] & 0x3F);
		}
		FUZZ_CHECK(!(k == 3 && cp < 0x800) && !(k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
				   !(cp >= 0xD800 && cp <= 0xDFFF),
			   "%s: overlong or surrogate UTF-8 at %zu: %.300s", what, i, text);
		i += k;
	}
}

/* 'len' bytes of 'text' are one JSON value and nothing else but white
 * space (an export or a log line ends with a newline). */
static inline void fuzz_check_json(const char *text, size_t len, const char *what)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);

	FUZZ_CHECK(root != NULL, "%s is not JSON: %.300s", what, text);
	fuzz_check_utf8(text, len, what);
	while (end < text + len && strchr(" \t\r\n", *end) && *end)
		end++;
	FUZZ_CHECK(end == text + len, "%s has trailing bytes: %.300s", what, text);
	cJSON_Delete(root);
}

/*
 * scene_hash (ids, tree, local and world matrices) plus every stored
 * property scene_hash leaves out: names, meshes, bounds, kind, camera,
 * visibility and the t, r, s, pivot themselves. Brings the world matrices
 * up to date first (stamp 0 keeps stamps out of it).
 */
static inline uint64_t fuzz_scene_hash(scene *s)
{
	uint64_t h;

	scene_update(s, 0, NULL, NULL);
	h = scene_hash(s);
	for (int pos = 0; pos < scene_count(s); pos++) {
		int n = scene_at(s, pos);
		node_props p;

		scene_props(s, n, &p);
		h = digest_mix_props(h, &p);
	}
	return h;
}

static inline bool fuzz_same_double(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0 || (isnan(a) && isnan(b));
}

typedef struct fuzz_walk {
	const scene *s;
	int visited;
} fuzz_walk;

/* scene_traverse's callback: its independently computed world matrix must
 * equal the cache scene_update filled, bit for bit (both NaN counts as
 * equal: an overflowing chain of scales may produce one). */
static inline void fuzz_walk_visit(void *ctx, int node, int depth, const mat4 *world)
{
	fuzz_walk *w = ctx;
	mat4 cached = scene_world(w->s, node);

	FUZZ_CHECK(depth == scene_depth(w->s, node), "node '%s' depth %d vs %d",
		   scene_id(w->s, node), depth, scene_depth(w->s, node));
	for (int i = 0; i < 16; i++)
		FUZZ_CHECK(fuzz_same_double(cached.m[i], world->m[i]),
			   "node '%s' world[%d] %.17g vs traversal %.17g", scene_id(w->s, node), i,
			   cached.m[i], world->m[i]);
	w->visited++;
}

/*
 * The invariants of a scene after scene_update: the preorder array and the
 * handles agree; each subtree is the contiguous range after its root; every
 * id is valid and found; every stored property passes node_props_check (so
 * every local matrix is built from finite numbers and is finite itself);
 * every world matrix equals what scene_traverse computes along its path
 * (the product of the locals, or a node's inherit mode), so it is either
 * finite or the honest overflow of finite locals; nothing is left dirty.
 */
static inline void fuzz_check_scene(scene *s)
{
	int n_nodes = scene_count(s);
	fuzz_walk w = { s, 0 };
	int rc;

	scene_update(s, 0, NULL, NULL);
	FUZZ_CHECK(!scene_has_dirty(s), "dirty after scene_update");
	for (int pos = 0; pos < n_nodes; pos++) {
		int n = scene_at(s, pos), parent;
		const char *id;
		node_props p;
		unsigned bad = 0;
		mat4 local;

		FUZZ_CHECK(n >= 0, "no node at pos %d", pos);
		FUZZ_CHECK(scene_pos(s, n) == pos, "pos of node %d is %d, not %d", n,
			   scene_pos(s, n), pos);
		id = scene_id(s, n);
		FUZZ_CHECK(id && scene_id_valid(id), "bad id at pos %d", pos);
		FUZZ_CHECK(scene_find(s, id) == n, "scene_find('%s') = %d, not %d", id,
			   scene_find(s, id), n);
		parent = scene_parent(s, n);
		if (parent >= 0) {
			int pp = scene_pos(s, parent);

			FUZZ_CHECK(pp < pos && pos < pp + scene_subtree_size(s, parent),
				   "'%s' outside its parent's range", id);
			FUZZ_CHECK(scene_is_ancestor(s, parent, n), "'%s' not under its parent", id);
		}
		FUZZ_CHECK(scene_subtree_size(s, n) >= 1 &&
				   pos + scene_subtree_size(s, n) <= n_nodes,
			   "'%s' subtree size %d at pos %d of %d", id, scene_subtree_size(s, n), pos,
			   n_nodes);
		FUZZ_CHECK(!scene_is_dirty(s, n), "'%s' dirty", id);
		scene_props(s, n, &p);
		rc = node_props_check(&p, PROP_ALL, &bad);
		FUZZ_CHECK(rc == 0, "'%s' stores props that fail their check: %s (prop %#x)", id,
			   err_code(rc), bad);
		local = scene_local(s, n);
		FUZZ_CHECK(mat4_is_finite(local), "'%s' has a non-finite local matrix", id);
	}
	rc = scene_traverse(s, fuzz_walk_visit, &w);
	FUZZ_CHECK(rc >= 0, "scene_traverse: %s", err_code(rc));
	FUZZ_CHECK(w.visited == n_nodes, "traversal visited %d of %d", w.visited, n_nodes);
	FUZZ_CHECK(scene_child_count(s, -1) >= (n_nodes ? 1 : 0), "no roots in %d nodes",
		   n_nodes);
}

/* Every id listed in an edit_result is a valid id. */
static inline void fuzz_check_result(const edit_result *r)
{
	for (int i = 0; i < r->n_created; i++)
		FUZZ_CHECK(scene_id_valid(r->created[i].s), "created id invalid");
	for (int i = 0; i < r->n_changed; i++)
		FUZZ_CHECK(scene_id_valid(r->changed[i].s), "changed id invalid");
	for (int i = 0; i < r->n_removed; i++)
		FUZZ_CHECK(scene_id_valid(r->removed[i].s), "removed id invalid");
	FUZZ_CHECK(r->recomputed >= 0, "recomputed %ld", r->recomputed);
}

/* A failed call reports a real code and an empty batch. */
static inline void fuzz_check_failure(int rc, const edit_error *e, const edit_batch *b)
{
	FUZZ_CHECK(rc > RIGD_E_FIRST_ && rc < RIGD_E_LAST_, "code %d out of range", rc);
	FUZZ_CHECK(rc != RIGD_E_INTERNAL, "internal error: %s", e->message);
	FUZZ_CHECK(e->code == rc, "err.code %s vs returned %s", err_code(e->code), err_code(rc));
	FUZZ_CHECK(memchr(e->message, '\0', sizeof(e->message)) != NULL, "message unterminated");
	FUZZ_CHECK(memchr(e->field, '\0', sizeof(e->field)) != NULL, "field unterminated");
	if (b)
		FUZZ_CHECK(b->n_ops == 0, "failed decode left %d ops", b->n_ops);
}

#endif
