/*
 * spine.h: a Spine 4.2 skeleton import, the body
 *   {"skeleton": {...}, "atlas"?: "...", "images"?: {"page.png": "<base64>"},
 *    "file"?: "..."}
 * in (the skeleton a Spine 4.2.x JSON export, as an object), one batch of
 * create ops out: one node per bone, one child node per slot, and the
 * asset the route stores first (the skeleton file, with the ids of its
 * attachments).
 *
 * The mapping (docs/spine.md has the format and the arithmetic):
 *   - bone -> node id skel_id_encode(name) (skel_names.h), name = the
 *     bone's name, parent = its parent bone's node (a root bone: a root of
 *     the scene), t = (x, -y) (Spine is y-up, rigd 2D y-down), angle =
 *     rotation, s = (scaleX, scaleY), shear = [shearX, shearY], inherit =
 *     the INHERIT_ value of its "inherit"; each field left out at its
 *     default (t 0, angle 0, s 1, shear 0, inherit normal). Its length,
 *     color, icon, visible and skin stay in the file only.
 *   - slot -> a child of its bone, id "slot:" + skel_id_encode(name),
 *     name "slot:" + name, identity local; z = its index in the slots
 *     array (the setup draw order, 0 = back); layer "FILE#GROUP" with
 *     GROUP = skel_id_encode(slot) + "." + skel_id_encode(attachment) for
 *     the attachment it shows in the setup pose (looked up in the skin
 *     named "default"); no layer when it shows none. Its color, dark and
 *     blend stay in the file only.
 *   - the asset's ids: every GROUP of every (slot, attachment) of every
 *     skin, each once.
 *   - IK, transform, path and physics constraints, non-region
 *     attachments, events and animations (clips) are kept in the file and
 *     named in the report's "kept" lines; a constraint that is active in
 *     the setup pose and has a mix other than 0 makes the setup pose's
 *     worlds differ from the Spine runtime's, which the report's
 *     "not_applied" lines say, naming the bones.
 *
 * Never touches a scene (it only reads which ids it has) or the store;
 * never parses the atlas or decodes the images (it checks their JSON types
 * only; the route checks them with codec/atlas.c and codec/png.c).
 */
#ifndef RIGD_SPINE_H
#define RIGD_SPINE_H

#include "core/edit.h"
#include "core/scene.h"
#include "skel_report.h"

#include <stdbool.h>
#include <stddef.h>

#define SPINE_IMPORT_MAX_BONES 1000     /* bones of one skeleton */
#define SPINE_IMPORT_MAX_SLOTS 1000     /* slots of one skeleton */
#define SPINE_IMPORT_MAX_GROUPS 10000   /* (slot, attachment) pairs over all skins */
#define SPINE_IMPORT_MAX_IMAGES 64      /* members of "images" */
#define SPINE_IMPORT_MAX_SKINS 1000     /* skins of one skeleton */
#define SPINE_IMPORT_MAX_CONSTRAINTS 1000 /* elements of each of ik, transform, path, physics */
#define SPINE_DEFAULT_FILE "spine.json"

/* One bone of the setup pose, in the file's order (parents first). */
typedef struct spine_bone {
	char name[SCENE_NAME_MAX + 1];   /* the bone's name, UTF-8 */
	char id[SCENE_ID_MAX + 1];       /* skel_id_encode(name) */
	int parent;                      /* index of the parent bone, -1 = a root */
	double length;
	double x, y;                     /* Spine's frame: y up */
	double rotation_deg;             /* counter-clockwise */
	double scale[2];                 /* scaleX, scaleY */
	double shear_deg[2];             /* shearX, shearY */
	int inherit;                     /* enum node_inherit (INHERIT_NORMAL .. _NO_SCALE_OR_REFLECTION) */
} spine_bone;

/* One slot, in the file's order (the setup draw order, back to front). */
typedef struct spine_slot {
	char name[SCENE_NAME_MAX + 1];   /* at most SCENE_NAME_MAX - 5 bytes ("slot:" + name) */
	char id[SCENE_ID_MAX + 1];       /* "slot:" + skel_id_encode(name) */
	int bone;                        /* index into bones */
	char group[SCENE_LAYER_GROUP_MAX + 1]; /* the setup attachment's GROUP, "" = none */
} spine_slot;

/* One IK constraint the runtime applies in the setup pose (mix not 0,
 * not skin-required), solved live (core/ik_solve.h); the list is in the
 * order the runtime solves them: by "order", then the file's. */
typedef struct spine_ik {
	char name[SCENE_NAME_MAX + 1];
	int bones[2];                    /* bone indices, parent first */
	int n_bones;                     /* 1 or 2 */
	int target;                      /* bone index */
	int order;
	int index;                       /* among the ik constraints read */
	double mix, softness;
	bool bend_positive, compress, stretch, uniform;
} spine_ik;

/* One member of the body's "images": a page file and its base64 text as
 * posted (not decoded). Both owned. */
typedef struct spine_image {
	char *file;
	char *base64;
	size_t base64_len;
} spine_image;

/* A decoded import body. Release with spine_import_release. */
typedef struct spine_import {
	char file[SKEL_FILE_MAX + 1];    /* the asset's file name: "file" or SPINE_DEFAULT_FILE */
	char version[32];                /* skeleton.skeleton.spine, e.g. "4.2.43" */
	/* The file the route stores: the "skeleton" member's bytes exactly as
	 * posted (from its '{' to its '}'); only when the body spells the
	 * member's name with escapes, the member printed back unformatted by
	 * cJSON (the same members, values and order). Owned, NUL-terminated. */
	char *skeleton;
	size_t skeleton_len;
	char *atlas;                     /* the "atlas" text as posted, owned; NULL = none */
	size_t atlas_len;
	spine_image *images;             /* owned, in the body's order */
	int n_images;
	spine_bone *bones;               /* owned */
	int n_bones;
	spine_slot *slots;               /* owned */
	int n_slots;
	spine_ik *iks;                   /* owned */
	int n_iks;
	/* The asset's element ids: every GROUP over all skins, sorted, once
	 * each, one per line, each line '\n'-ended. Owned; NULL when none. */
	char *groups;
	size_t groups_len;
	int n_groups;
	int n_skins;
	int n_clips;                     /* members of "animations" */
	/* The report's lines (skel_report.h), '\n'-ended, owned, NULL when none. */
	char *kept;
	size_t kept_len;
	int n_kept;
	char *not_applied;
	size_t not_applied_len;
	int n_not_applied;
} spine_import;

/*
 * Decodes the body ('len' bytes of JSON; more than 'max_bytes' is
 * too_large) and reads its skeleton whole. 0 with *out filled, or in
 * 'err':
 *   - bad_json, too_large, nomem;
 *   - bad_field: a missing "skeleton", an unknown body member, a "file"
 *     that is not 1..128 characters of [A-Za-z0-9_.-] not starting with a
 *     dot, an "atlas" that is not a string, "images" not an object of
 *     strings;
 *   - limit: more than SPINE_IMPORT_MAX_BONES bones, _SLOTS slots,
 *     _SKINS skins, _GROUPS attachments (or slot entries of skins),
 *     _CONSTRAINTS constraints of one kind (or _BONES bones in one) or
 *     _IMAGES images;
 *   - bad_skeleton, with the field as a JSON path from the body
 *     ("skeleton.bones[3].inherit") and a message naming the element
 *     ("bone 'arm_l': inherit 'foo' is not one of normal, ..."): a
 *     version other than 4.2.x (field "skeleton.skeleton.spine"), a
 *     missing or mistyped member, a number that is not finite, a bone
 *     without a name, with a name twice, a parent unknown or not earlier
 *     in the list, an unknown inherit, the pre-4.2 key "transform"; a
 *     slot on an unknown bone, a slot name twice, a setup attachment the
 *     default skin does not have; skins that are not an array (3.x) or a
 *     skin's attachment of an unknown slot; a constraint naming an unknown
 *     bone; a name whose node id would exceed SCENE_ID_MAX characters, or
 *     whose GROUP would exceed SCENE_LAYER_GROUP_MAX, or longer than
 *     SCENE_NAME_MAX bytes.
 * *out is empty on error.
 */
int spine_import_decode(const char *json, size_t len, size_t max_bytes, spine_import *out,
			edit_error *err);

/* Frees what *in owns and empties it; accepts NULL. */
void spine_import_release(spine_import *in);

/*
 * Builds *out from 'in': one create per bone in the file's order (parents
 * first), then one per slot in the draw order, as spine.h's head says, and
 * fills *rep: file, a copy of the skeleton text (asset), the ids, the
 * counts (bones, slots, skins, clips) and copies of the kept and
 * not_applied lines. 'existing' (may be NULL: empty) is read only for its
 * ids: duplicate_id naming the bone or slot when the scene has a node of
 * that id already; bad_skeleton (field "skeleton") when it is a 3D scene;
 * nomem. *out and *rep are initialised by the call and empty on error.
 * The caller releases both (edit_batch_release, skel_import_report_release).
 * The route stores the asset (asset_set_add(file, ids, ids_len)) before it
 * applies the batch, so that the slots' layers validate.
 */
int spine_import_batch(const spine_import *in, const scene *existing, edit_batch *out,
		       skel_import_report *rep, edit_error *err);

#endif
