/*
 * scene_ids.h: the index from node id to handle (scene_ids.c), for the
 * files that add and remove nodes. scene_find and scene_id_valid, what the
 * rest of the server asks of it, are in scene.h.
 *
 * Private to server/core/ (the scene_*.c files). The index only follows
 * the scene's ids: it never changes a node.
 */
#ifndef RIGD_SCENE_IDS_H
#define RIGD_SCENE_IDS_H

#include "scene.h"

/* Gives a new scene its empty index. 0, or RIGD_E_NOMEM with none made. */
int sc_ids_init(scene *s);
/* Frees the index; accepts a scene without one. */
void sc_ids_free(scene *s);
/* Empties the index (every node is being dropped). */
void sc_ids_clear(scene *s);
/* Rebuilds the index with 'new_cap' slots (a power of two, more than twice
 * the nodes), from the ids of the live handles. 0, or RIGD_E_NOMEM with the
 * index as it was. */
int sc_ids_resize(scene *s, int new_cap);
/* Indexes 'node' under its id, already stored; the index has room (see
 * sc_ids_resize) and holds no other node of that id. */
void sc_ids_insert(scene *s, int node);
/* Takes 'node' out of the index, before its id is cleared. */
void sc_ids_remove(scene *s, int node);

#endif
