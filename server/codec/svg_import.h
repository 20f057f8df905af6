/*
 * svg_import.h: an SVG rig import, POST /api/scenes/{name}/svg: the JSON
 * body (the file name, the SVG text and its manifest) in, one batch of
 * create ops out, one node per manifest entry bound to its group of the
 * artwork.
 *
 * The manifest is an array of entries
 *   {"id", "parent"?, "pivot": [x, y], "rotation"?, "z"?, "facing"?}
 * where id is both the node's id and the id of the SVG element (a group)
 * the node moves, parent another entry's id or a node the scene has (absent
 * or null: a root), pivot the joint in the artwork's user units, rotation
 * the node's initial angle in degrees (screen convention, default 0), z
 * its draw order (a number, or {"right","left"}) and facing "right",
 * "left" or null. Every node is created with t = 0 and its pivot, so that
 * with every rotation 0 each world matrix is the identity and the artwork
 * shows as drawn.
 *
 * Never touches the scene (it only reads which ids it has) or the store;
 * the batch is applied and logged like any other.
 */
#ifndef RIGD_SVG_IMPORT_H
#define RIGD_SVG_IMPORT_H

#include "core/edit.h"
#include "core/scene.h"
#include "svg.h"

#include <stdbool.h>
#include <stddef.h>

#define SVG_IMPORT_MAX_ENTRIES 1000   /* manifest entries of one import */

/* One manifest entry. */
typedef struct svg_manifest_entry {
	char id[SCENE_ID_MAX + 1];
	char parent[SCENE_ID_MAX + 1];   /* "" = a root */
	double pivot[2];
	double rotation_deg;
	bool has_z;
	double z_right, z_left;          /* equal for a single number */
	int facing;                      /* 0 none (inherit), 1 right, 2 left */
} svg_manifest_entry;

/* A decoded import body. Release with svg_import_release. */
typedef struct svg_import {
	char file[128 + 1];              /* the asset's file name (svg_file_name_valid) */
	char *svg;                       /* the SVG text as posted, owned */
	size_t svg_len;
	svg_manifest_entry *entries;     /* owned, in the manifest's order */
	int n_entries;
} svg_import;

/*
 * Decodes the body {"file","svg","manifest"} ('len' bytes of JSON). 0 with
 * *out filled, or bad_json, bad_field (a missing, unknown or mistyped
 * member; field "file", "svg" or "manifest", an entry named by index and
 * id: "manifest[2] ('hand_l'): pivot must be [x, y]"), bad_id, not_finite,
 * limit (more than SVG_IMPORT_MAX_ENTRIES entries), too_large, nomem in
 * 'err'; *out is then empty.
 */
int svg_import_decode(const char *json, size_t len, size_t max_bytes, svg_import *out,
		      edit_error *err);

/* Frees what *in owns and empties it; accepts NULL. */
void svg_import_release(svg_import *in);

/*
 * Checks the manifest of 'in' against the sanitised artwork 'art' and the
 * scene 'existing' (may be NULL: empty) and builds *out: one create per
 * entry, parents before children (otherwise in manifest order), each with
 * its parent, pivot, t = 0, angle, layer "FILE#ID", z and facing.
 * Refusals, naming the entry: bad_field (an id the artwork has no element for, field "manifest"),
 * duplicate_id (an id twice in the manifest, or a node the scene has),
 * unknown_node (a parent that is neither an entry nor a node), cycle (a
 * parent chain that loops), nomem. *out is initialised by the call and
 * empty on error.
 */
int svg_import_batch(const svg_import *in, const svg_clean *art, const scene *existing,
		     edit_batch *out, edit_error *err);

/*
 * The three steps of an import in one: svg_import_decode of 'body',
 * svg_sanitize of its SVG (default limits) into *art, svg_import_batch
 * into *batch. 0, or the first step's error in 'err' with *in, *art and
 * *batch empty. The caller releases all three.
 */
int svg_import_prepare(const char *body, size_t len, const scene *existing, svg_import *in,
		       svg_clean *art, edit_batch *batch, edit_error *err);

/* Sets the create op's layer "FILE#ID" and, when the entry has them, its
 * z and facing (see svg_import_batch); 0 or nomem. */
int svg_import_bind(edit_op *op, const char *file, const svg_manifest_entry *e);

#endif
