/*
 * skel_clips_read.h: a stored skeleton asset (a Spine 4.2 skeleton JSON or
 * a DragonBones 5.x _ske.json, the bytes an import stored) read into what
 * the clip op plays (core/skel_clips.h): its clips, its bones' node ids
 * and setup channels, its slots' node ids and setup attachments, and each
 * attachment key turned into the layer GROUP it shows.
 *
 * The bones and slots are read by the importers' own decoders
 * (spine_import_decode, dragonbones_import_decode), so they are the ones
 * the import made nodes of, with the same ids and setup values. A
 * DragonBones file's first armature is read (the importers' default).
 * Called by the engine when it adds a skeleton asset to a scene, never on
 * the edit path. Never touches a scene or the store.
 */
#ifndef RIGD_SKEL_CLIPS_READ_H
#define RIGD_SKEL_CLIPS_READ_H

#include "core/edit.h"
#include "core/skel_clips.h"

#include <stdbool.h>
#include <stddef.h>

/* Whether assets of 'kind' (enum asset_kind) are skeletons with clips. */
bool skel_clips_kind(int kind);

/*
 * Reads asset 'file' of 'kind' (ASSET_SPINE or ASSET_DRAGONBONES), 'len'
 * bytes at 'bytes'. 0 with *out a new skeleton (the caller frees it with
 * skel_clips_free, or hands it to scene_skel_add), or *out NULL and in
 * 'err': bad_skeleton (the importer's or the clip reader's field and
 * message), bad_field for a kind that is not a skeleton, nomem.
 */
int skel_clips_read(int kind, const char *file, const char *bytes, size_t len, skel_clips **out,
		    edit_error *err);

#endif
