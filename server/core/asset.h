/*
 * asset.h: the SVG assets a scene knows, by file name, each with the ids
 * of its elements: what a node's layer "FILE#GROUP" must name (see
 * edit_layer_check). The bytes live in the store; the scene holds only
 * what the edit layer checks against.
 *
 * An asset_set belongs to its scene (scene_assets); the engine fills it
 * (from the store when it builds a scene, as an SVG import queues an
 * asset) and the edit layer reads it. Never parses SVG.
 */
#ifndef RIGD_ASSET_H
#define RIGD_ASSET_H

#include "scene.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct asset_set asset_set;

/* The assets of a scene (never NULL for a scene from scene_new). */
asset_set *scene_assets(scene *s);
const asset_set *scene_assets_c(const scene *s);

/* An empty set, or NULL when out of memory. */
asset_set *asset_set_new(void);
/* Frees the set and everything it holds; accepts NULL. */
void asset_set_free(asset_set *as);

/* Assets in the set. */
int asset_set_count(const asset_set *as);

/*
 * Adds asset 'file' with the element ids listed in 'ids' ('len' bytes, one
 * id per line, each line ended by '\n'; any order). A file the set holds
 * already is left as it is (assets never change). 0 or RIGD_E_NOMEM (set
 * unchanged).
 */
int asset_set_add(asset_set *as, const char *file, const char *ids, size_t len);

/* Removes asset 'file' if the set holds it (taking back an add). */
void asset_set_remove(asset_set *as, const char *file);

/* Whether the set holds asset 'file' (*has_file) with an element 'id'
 * (the return value; false when the file is missing). */
bool asset_set_has(const asset_set *as, const char *file, const char *id, bool *has_file);

#endif
