/*
 * spine_export.h: a Spine 4.2 skeleton file rewritten from a scene: the
 * file the Spine import stored (spine.h) with every bone's setup values,
 * the slots' draw order and each slot's setup attachment taken from the
 * scene's nodes, everything else as the file had it (docs/spine.md,
 * "Export").
 *
 * The nodes are found by id, as the import made them: a bone's node is
 * skel_id_encode(bone name), a slot's "slot:" + skel_id_encode(slot name)
 * (the node's name is the bone's name as long as nobody renamed it; the id
 * is what cannot change). A bone or slot whose node was deleted is kept as
 * the file has it and counted in 'kept'.
 *
 * This module also holds the two pieces the DragonBones export
 * (dragonbones_export.c) shares: the cJSON tree printer and the reading of
 * a slot's layer. Reads the scene, never changes it; cJSON trees stay
 * inside the .c files.
 */
#ifndef RIGD_SPINE_EXPORT_H
#define RIGD_SPINE_EXPORT_H

#include "core/edit.h"
#include "core/scene.h"
#include "json.h"

#include <stdbool.h>
#include <stddef.h>

/* A setup value within this many degrees of the file's (after bringing it
 * within 180 of it) is written as the file had it: a rotation stored as a
 * quaternion does not read back bit for bit, and an export without an
 * edit should leave the file's numbers alone. */
#define SKEL_EXPORT_ANGLE_EPS_DEG 1e-9

/* What an export did besides writing the file. */
typedef struct skel_export_info {
	int bones;        /* bones rewritten from their nodes */
	int slots;        /* slots rewritten from their nodes */
	int kept;         /* bones and slots without a node, left as the file has them */
} skel_export_info;

/*
 * Writes into 'out' (appended; the caller owns it) the Spine file 'json'
 * ('len' bytes, the stored asset named 'file') rewritten from scene 's'
 * as spine_export.h's head says, and fills *info (may be NULL). Members the
 * file has are rewritten in place (even at their default); members it
 * lacks are added only when the value is not Spine's default. Numbers are
 * written with json.h's writer, so they read back to the same doubles.
 * 0, or in 'err' (out unchanged):
 *   bad_skeleton: the stored file is not a JSON object with arrays
 *     "bones" and "slots" of named objects (field the JSON path);
 *     a bone's node whose inherit is a DragonBones one (field
 *     "bones[I].inherit", naming the bone); a slot's layer that is not
 *     one of this file's attachments of that slot (field
 *     "slots[I].attachment", naming the slot and the layer), or whose
 *     attachment the skin "default" lacks (another skin's: the import
 *     would refuse the file);
 *   not_finite (a node value that is not finite), nomem.
 */
int spine_export(const char *json, size_t len, const char *file, const scene *s,
		 json_buf *out, skel_export_info *info, edit_error *err);

/* --- shared with dragonbones_export.c --- */

struct cJSON;

/* Appends 'v' as compact JSON: members and elements in their order,
 * numbers with json_buf_number. 0, RIGD_E_NOT_FINITE or RIGD_E_NOMEM
 * (out may hold a part: the caller truncates). */
int skel_export_write(json_buf *out, const struct cJSON *v);

/*
 * The attachment a slot's node shows: its layer 'layer' (NULL: none) must
 * be "FILE#GROUP" with FILE == 'file' and GROUP = 'slot_enc' + "." + the
 * attachment's name encoded (skel_names.h). Writes the decoded name into
 * 'name' ('size' bytes) and returns its length; 0 for no layer; -1 when
 * the layer is of another file or slot, or does not decode.
 */
int skel_export_layer_name(const char *layer, const char *file, const char *slot_enc,
			   char *name, size_t size);

/* 'v' brought within 180 degrees of 'ref' by whole turns, and then 'ref'
 * itself when within SKEL_EXPORT_ANGLE_EPS_DEG of it. */
double skel_export_angle_near(double v, double ref);

/* A slot of the file with the z it is drawn at, for the sort. */
typedef struct skel_slot_key {
	struct cJSON *slot;
	double z;
	int index;                   /* in the file's order: ties keep it */
} skel_slot_key;

/* Puts the n elements of array 'slots' back in the order of their keys'
 * z (ties in the file's order). */
void skel_export_reorder(struct cJSON *slots, skel_slot_key *keys, int n);

#endif
