/*
 * draw_cache.h: the cached draw order of a 2D scene as data: its layout,
 * shared by draw_cache.c (which makes and frees it) and draw.c (which
 * rebuilds and reads it), and where a scene keeps it.
 *
 * Private to server/core/. The cache is an object of its own, held by the
 * scene through a pointer, so that reading the order of a const scene may
 * bring it up to date: it is derived state, like a world matrix that
 * scene_world computes for a dirty node. The scene never looks inside it:
 * an edit that can change the order moves the scene's draw clock, and the
 * cache is stale while the clock it was built at differs.
 */
#ifndef RIGD_DRAW_CACHE_H
#define RIGD_DRAW_CACHE_H

#include "scene.h"

#include <stdint.h>

typedef char draw_id[SCENE_ID_MAX + 1];

/* A node with a layer, as sorted: its z for its facing, then its place in
 * preorder. */
typedef struct draw_key {
	double z;
	int pos;
} draw_key;

typedef struct draw_cache {
	uint64_t built_at;       /* the draw clock it was built at; 0: never */
	uint64_t version;
	draw_id *ids;            /* the order, back to front */
	int n, cap;
	draw_id *next;           /* the rebuild's list, swapped with 'ids' */
	int cap_next;
	draw_key *keys;          /* scratch of the rebuild */
	unsigned char *facing;   /* effective facing by preorder position */
	int cap_scratch;
} draw_cache;

/* An empty cache, stale, or NULL when out of memory. */
draw_cache *draw_cache_new(void);
/* Frees the cache; accepts NULL. */
void draw_cache_free(draw_cache *d);

/* The cache of scene 's' (never NULL for a scene from scene_new), and the
 * scene's draw clock: 1 in a new scene, moved by every edit that can change
 * the order (scene_cache.c). */
draw_cache *sc_draw_cache(const scene *s);
uint64_t sc_draw_clock(const scene *s);

#endif
