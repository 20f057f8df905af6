/*
 * scene_cache.h: making and freeing what a scene hosts beside its nodes
 * (scene_cache.c): its poses (pose.h), its assets (asset.h) and the cache
 * of its draw order (draw_cache.h). Their accessors are in those headers.
 *
 * Private to server/core/: scene.c calls these two with the scene's own
 * lifetime. Neither reads or writes a node.
 */
#ifndef RIGD_SCENE_CACHE_H
#define RIGD_SCENE_CACHE_H

#include "scene.h"

/* Gives 's' its empty pose set, draw cache and asset set. 0, or
 * RIGD_E_NOMEM with none of them made (each is tried all the same). */
int sc_caches_new(scene *s);
/* Frees them; accepts a scene with none. */
void sc_caches_free(scene *s);

#endif
