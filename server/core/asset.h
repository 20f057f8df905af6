/*
 * asset.h: the assets a scene knows, by file name, each with the ids a
 * node's layer "FILE#GROUP" may name in it (see edit_layer_check): an SVG
 * document's element ids, a skeleton file's slot attachments; and the
 * kinds of asset there are. The bytes live in the store; the scene holds
 * only what the edit layer checks against.
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

/* What an asset's bytes are (schema/007_asset_kinds.sql). */
enum asset_kind {
	ASSET_SVG = 0,             /* sanitised SVG artwork */
	ASSET_PNG = 1,             /* a PNG page, re-encoded as 8-bit RGBA */
	ASSET_SPINE = 2,           /* a Spine skeleton, JSON */
	ASSET_SPINE_ATLAS = 3,     /* a Spine .atlas, text */
	ASSET_DRAGONBONES = 4,     /* a DragonBones _ske.json */
	ASSET_DRAGONBONES_ATLAS = 5, /* a DragonBones _tex.json */
	ASSET_KIND_COUNT_ = 6,
};

/* The stored and wire name of a kind ("svg", "png", "spine",
 * "spine-atlas", "dragonbones", "dragonbones-atlas"); NULL for none. */
const char *asset_kind_name(int kind);
/* The kind a name names, or -1. */
int asset_kind_parse(const char *name);
/* The media type a kind is served as ("image/svg+xml", "image/png",
 * "application/json", "text/plain; charset=utf-8"); NULL for none. */
const char *asset_kind_media_type(int kind);

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
 * id per line, each line ended by '\n'; any order; NULL for none). A file the set holds
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
