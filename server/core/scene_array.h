/*
 * scene_array.h: the per-handle arrays of a scene, allocated so that an
 * edit at a random place in a big scene costs as few cache and TLB misses
 * as it can (scene_array.c), and grown all together.
 *
 * Private to server/core/ (the scene_*.c files). Allocates, never reads or
 * writes a node.
 */
#ifndef RIGD_SCENE_ARRAY_H
#define RIGD_SCENE_ARRAY_H

#include "scene.h"

#include <stddef.h>

/* A block of 'bytes', 64-byte aligned, or 2 MiB aligned on huge pages when
 * that big; NULL when out of memory. Free it with sc_array_free. */
void *sc_array_alloc(size_t bytes);
/* Frees what sc_array_alloc returned; accepts NULL. */
void sc_array_free(void *p);

/* Grows every per-handle array of 's' to 'new_cap' elements (> s->cap),
 * their contents kept. 0, or RIGD_E_NOMEM with 's->cap' unchanged (some
 * arrays may have grown, which the old capacity does not mind). */
int sc_arrays_grow(scene *s, int new_cap);

#endif
