/*
 * skel_clips.h: the skeletons a 2D scene knows, one per skeleton asset
 * (Spine or DragonBones file), each with what the clip op needs to play
 * its clips live (docs/clips.md, "Playing a clip"): the clips themselves
 * (clip.h), each bone's node id and setup channels in the format's own
 * terms, each slot's node id and the layer GROUP of its setup attachment.
 *
 * In a skeleton's clips every attachment key's 'name' is the layer GROUP
 * the key shows (skel_id_encode(slot) "." skel_id_encode(attachment)), or
 * NULL for none: the codec (codec/skel_clips_read.c) turns the file's
 * attachment names and DragonBones display indices into it when it reads
 * the file, so that playing a clip never encodes a name nor parses a file.
 *
 * A skel_set belongs to its scene (scene_skels); the engine fills it as it
 * adds a skeleton asset to the scene's asset set, and the edit layer reads
 * it. Never parses JSON.
 */
#ifndef RIGD_SKEL_CLIPS_H
#define RIGD_SKEL_CLIPS_H

#include "clip.h"
#include "ik_solve.h"
#include "scene.h"

typedef struct skel_set skel_set;

/* One bone: its node and its setup channels (clip.h: Spine's x, y,
 * rotation, scaleX/Y, shearX/Y; DragonBones' x, y, skY, skX - skY, scX/Y). */
typedef struct skel_bone {
	char id[SCENE_ID_MAX + 1];
	clip_channels setup;
} skel_bone;

/* One slot, in the setup draw order (its index is its setup z). */
typedef struct skel_slot {
	char id[SCENE_ID_MAX + 1];       /* "slot:" + skel_id_encode(name) */
	char *setup_group;               /* owned; the setup attachment's GROUP, NULL = none */
} skel_slot;

/* One IK constraint, as the file states it: its bones' node ids top
 * first (a two-bone chain's parent bone, then its child), their lengths
 * in the file, the target bone's node id, and its settings (DragonBones:
 * 'mix' is the weight, and only bend_positive is read besides). The
 * engine keeps only the constraints the runtime applies in the setup pose
 * (mix not 0, not skin-required); scene_ik.c solves them live. */
typedef struct skel_ik {
	char name[SCENE_NAME_MAX + 1];
	int n_bones;                     /* 1 or 2 */
	char bones[2][SCENE_ID_MAX + 1];
	double length[2];
	char target[SCENE_ID_MAX + 1];
	ik_spine_params p;
} skel_ik;

/* A skeleton: 'bones' and 'slots' are in the file's order, the indices
 * the clips name; 'iks' in the order the runtime solves them. */
typedef struct skel_clips {
	char *file;                      /* owned: the asset's file name */
	int format;                      /* enum clip_format */
	clip_set clips;                  /* owned */
	skel_bone *bones;                /* owned */
	int n_bones;
	skel_slot *slots;                /* owned */
	int n_slots;
	skel_ik *iks;                    /* owned */
	int n_iks;
} skel_clips;

/* A skeleton of 'format' for asset 'file' (copied) with n_bones zeroed
 * bones and n_slots slots and no clips, or NULL when out of memory. */
skel_clips *skel_clips_new(const char *file, int format, int n_bones, int n_slots);
/* Frees it and all it owns; accepts NULL. */
void skel_clips_free(skel_clips *k);

/* The skeletons of a scene: NULL while it has none (every reader below
 * takes NULL as the empty set). The set is made on the first add, so that
 * a scene without skeletons allocates nothing for them. */
const skel_set *scene_skels(const scene *s);

/* How many of its skeletons' IK constraints the scene solves live: those
 * whose bones and target it holds as the constraint names them (as of
 * its last scene_update; scene_ik.c). */
int scene_ik_live(const scene *s);

/* skel_set_add on the scene's set, made first if need be. 0, or
 * RIGD_E_NOMEM with 'k' freed and the scene unchanged. */
int scene_skel_add(scene *s, skel_clips *k);
/* skel_set_remove on the scene's set. */
void scene_skel_remove(scene *s, const char *file);

/* An empty set, or NULL when out of memory. */
skel_set *skel_set_new(void);
/* Frees the set and every skeleton in it; accepts NULL. */
void skel_set_free(skel_set *ks);

int skel_set_count(const skel_set *ks);
/* Skeletons in the set (0 for NULL). Skeleton i, 0 <= i < skel_set_count, in the order they were added. */
const skel_clips *skel_set_at(const skel_set *ks, int i);
/* The skeleton of asset 'file', or NULL. */
const skel_clips *skel_set_find(const skel_set *ks, const char *file);

/*
 * Adds skeleton 'k', taking ownership of it. A skeleton of that file in
 * the set already is replaced (and freed): a file's bytes never change,
 * so it is its equal, unless a commit that failed left it behind.
 * 0, or RIGD_E_NOMEM with 'k' freed and the set unchanged.
 */
int skel_set_add(skel_set *ks, skel_clips *k);

/* Removes and frees the skeleton of 'file' if the set holds one (taking
 * back an add); accepts NULL. */
void skel_set_remove(skel_set *ks, const char *file);

#endif
