/*
 * draw_internal.h: what scene.c and draw.c share about a scene's draw
 * order (the public interface is in scene.h: scene_draw_order,
 * scene_facing, scene_layer_syntax_error).
 *
 * Private to server/core/. The cache is an object of its own, held by the
 * scene through a pointer, so that reading the order of a const scene may
 * bring it up to date: it is derived state, like a world matrix that
 * scene_world computes for a dirty node.
 */
#ifndef RIGD_DRAW_INTERNAL_H
#define RIGD_DRAW_INTERNAL_H

#include "scene.h"

typedef struct draw_cache draw_cache;

/* An empty cache, stale, or NULL when out of memory. */
draw_cache *draw_cache_new(void);
/* Frees the cache; accepts NULL. */
void draw_cache_free(draw_cache *d);
/* The order must be rebuilt before it is next read. One store. */
void draw_cache_mark(draw_cache *d);
/* The cache of scene 's' (never NULL for a scene from scene_new). */
draw_cache *scene_draw_cache(const scene *s);

#endif
