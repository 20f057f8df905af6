/*
 * dragonbones.h: a DragonBones 5.x skeleton import, the JSON body (one
 * armature of a _ske.json file, and optionally its texture atlas and
 * images) in, one batch of create ops and a report out
 * (docs/dragonbones.md has the format facts and the mapping).
 *
 * The body is
 *   {"skeleton": {...}, "armature"?: "NAME", "atlas"?: {...},
 *    "images"?: {"FILE": "BASE64 PNG", ...}, "file"?: "NAME_ske.json"}
 * where skeleton is the _ske.json object (top-level "version" 5.0 to 5.x),
 * armature names one of its armatures (default: the first), atlas is the
 * _tex.json object and images the atlas pages; atlas and images are only
 * type-checked here and kept as text for the route to judge (png.c,
 * atlas.c). file is the asset's file name (1..128 of [A-Za-z0-9_.-], not
 * starting with '.'; default: the armature's name encoded by skel_names.h
 * + "_ske.json").
 *
 * What the batch builds, for the chosen armature:
 *   - one node per bone, in the file's order (a parent always comes
 *     first): id the bone's name encoded (skel_id_encode), name the bone's
 *     name, parent its parent bone's node (a root bone: a root), t (x, y),
 *     angle -skY (rigd's screen angle), s (scX, scY), shear
 *     [0, skY - skX] (left out when 0), inherit INHERIT_NORMAL when the
 *     four inherit flags are true, else INHERIT_DB | the DB_NO_ bit of each
 *     false flag (left out when normal);
 *   - one node per slot, a child of its bone after every bone: id
 *     "slot:" + the slot's name encoded, name "slot:" + the slot's name,
 *     identity local, z its index in the slot array (0 = back), and layer
 *     "FILE#GROUP" for the display it shows in the setup pose (none when
 *     displayIndex is -1 or the default skin lists no display there).
 * GROUP is the slot's name encoded + "." + the display's name encoded; the
 * asset's element ids are every such GROUP over every skin of the
 * armature. The default skin is the one named "" or "default", else the
 * first.
 *
 * What is kept in the stored file but not applied live is named in the
 * report: IK and path constraints (with the bones whose setup worlds then
 * differ from the runtime's when their weight is not 0), animations (for
 * the clip importer), displays other than images (a mesh is not deformed
 * live, a child armature is not built, a bounding box is not drawn).
 *
 * Never touches the scene (it only reads which ids it has) or the store.
 */
#ifndef RIGD_DRAGONBONES_H
#define RIGD_DRAGONBONES_H

#include "core/edit.h"
#include "core/scene.h"
#include "skel_report.h"

#include <stdbool.h>
#include <stddef.h>

#define DRAGONBONES_MAX_BONES 1000     /* bones of one armature */
#define DRAGONBONES_MAX_SLOTS 1000     /* slots of one armature */
#define DRAGONBONES_MAX_DISPLAYS 10000 /* displays over every skin */
#define DRAGONBONES_MAX_IMAGES 64      /* entries of "images" */
#define DRAGONBONES_MAX_CONSTRAINTS 1000 /* entries of "ik", and of "path" */
#define DRAGONBONES_SLOT_PREFIX "slot:"

/* One bone, as the file has it (angles in degrees, the file's y-down
 * frame). */
typedef struct dragonbones_bone {
	char *name;                      /* owned, 1..SCENE_NAME_MAX bytes */
	char id[SCENE_ID_MAX + 1];       /* skel_id_encode(name) */
	int parent;                      /* index of an earlier bone; -1 = a root */
	double length;
	double x, y;
	double skx_deg, sky_deg;
	double scx, scy;
	int inherit;                     /* enum node_inherit */
} dragonbones_bone;

/* One slot. */
typedef struct dragonbones_slot {
	char *name;                      /* owned */
	char id[SCENE_ID_MAX + 1];       /* "slot:" + skel_id_encode(name) */
	int bone;                        /* index into bones */
	int display_index;               /* -1: nothing shown */
	char *color;                     /* owned: the "color" object as JSON text, or NULL */
	/* The GROUP of the display shown in the setup pose ("" for none). */
	char group[SCENE_LAYER_GROUP_MAX + 1];
} dragonbones_slot;

/* One IK constraint of weight other than 0, solved live
 * (core/ik_solve.h), in the file's order (the runtime's). */
typedef struct dragonbones_ik {
	char name[SCENE_NAME_MAX + 1];
	int bones[2];                    /* bone indices: chain 0 the bone; chain 1 its parent, then it */
	int n_bones;
	int target;                      /* bone index */
	double weight;
	bool bend_positive;
} dragonbones_ik;

/* One page of "images": its file name and base64 text, as posted. */
typedef struct dragonbones_image {
	char *file;                      /* owned */
	char *base64;                    /* owned */
} dragonbones_image;

/* A decoded import body. Release with dragonbones_import_release. */
typedef struct dragonbones_import {
	char file[SKEL_FILE_MAX + 1];    /* the asset's file name */
	char *armature;                  /* owned: the chosen armature's name */
	int armature_index;              /* in skeleton.armature */
	/* owned: the skeleton object as compact JSON (printed back from the
	 * parsed body, every number round-tripping), the asset's bytes */
	char *skeleton;
	size_t skeleton_len;
	char *atlas;                     /* owned: the "atlas" object as JSON text, or NULL */
	size_t atlas_len;
	dragonbones_image *images;       /* owned */
	int n_images;
	dragonbones_bone *bones;         /* owned, in the file's order */
	int n_bones;
	dragonbones_slot *slots;         /* owned, in the file's (draw) order */
	int n_slots;
	dragonbones_ik *iks;             /* owned */
	int n_iks;
	int n_skins;
	int n_clips;                     /* animations of the armature */
	/* The asset's element ids: every GROUP, sorted, each once, each line
	 * '\n'-ended (owned; NULL when there is none). */
	char *ids;
	size_t ids_len;
	int n_ids;
	/* The report's kept and not_applied lines ('\n'-ended each; owned). */
	char *kept;
	size_t kept_len;
	int n_kept;
	char *not_applied;
	size_t not_applied_len;
	int n_not_applied;
} dragonbones_import;

/*
 * Decodes and checks the body ('len' bytes of JSON, at most 'max_bytes':
 * the server's import body limit). 0 with *out filled, or in 'err':
 *   bad_json, too_large, bad_field (the body's own members: an unknown one,
 *     skeleton not an object, armature not a string, atlas not an object,
 *     images not an object of strings, file not a valid name),
 *   bad_skeleton, with field the JSON path of the element
 *     ("skeleton.version", "armature", "skeleton.armature[0].bone[3].parent")
 *     and a message naming it ("bone 'arm_l': parent 'body' comes later
 *     in the file"): a version below 5.0 or not a number, an armature the
 *     file lacks, a bone or slot without a name, a name longer than
 *     SCENE_NAME_MAX bytes or whose id is longer than SCENE_ID_MAX, a bone
 *     or slot twice, a parent unknown or later in the file, a member of the
 *     wrong type, a number not finite (anywhere in the skeleton: the
 *     field is its path), a slot on an unknown bone, a
 *     displayIndex below -1, not an integer or past the default skin's
 *     displays of that slot, a skin slot the armature lacks, a display
 *     without a name or whose GROUP is longer than SCENE_LAYER_GROUP_MAX,
 *     a bone of a type other than "bone" (surfaces);
 *   limit (more than DRAGONBONES_MAX_BONES or _SLOTS, skins, _DISPLAYS
 *     displays or skin slot entries, _CONSTRAINTS of a kind, _IMAGES),
 *   nomem.
 * *out is empty on error.
 */
int dragonbones_import_decode(const char *json, size_t len, size_t max_bytes,
			      dragonbones_import *out, edit_error *err);

/* Frees what *in owns and empties it; accepts NULL. */
void dragonbones_import_release(dragonbones_import *in);

/*
 * Builds *out (see the top of this file) against the scene 'existing' (may
 * be NULL: empty), which must have none of the ids (duplicate_id naming
 * the bone or slot, field "skeleton.armature[K].bone[I]" or ".slot[I]"),
 * and fills *rep: file, asset (a copy of the skeleton's JSON text), ids,
 * counts, kept and not_applied. 0, or duplicate_id or nomem; *out and
 * *rep are initialised by the call and empty on error.
 */
int dragonbones_import_batch(const dragonbones_import *in, const scene *existing,
			     edit_batch *out, skel_import_report *rep, edit_error *err);

#endif
