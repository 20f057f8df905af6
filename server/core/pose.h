/*
 * pose.h: a scene's poses: named sets of node channels (t, r, s, and a 2D
 * node's shear), saved from
 * the scene and blended by channels, never by matrices (edit ops pose_save,
 * pose_set, pose_delete and blend; see edit.h).
 *
 * A pose_set belongs to its scene (scene_poses); the edit layer is the only
 * writer. Poses are kept sorted by name and each pose's channels sorted by
 * node id (strictly ascending, so no id twice), so lookups are binary
 * searches and every listing is in one order whatever built it. Removing a
 * pose never shrinks the array, so putting it back (an undo) allocates
 * nothing. Never parses JSON, never touches the scene's nodes.
 */
#ifndef RIGD_POSE_H
#define RIGD_POSE_H

#include "scene.h"

#include <stdbool.h>

#define POSE_DEFAULT_MAX 1000         /* poses a scene may hold */

/* The channels of one node in a pose (pivot is not posed: it is where a
 * bone turns, part of the rig, not of the pose). */
typedef struct pose_channel {
	char id[SCENE_ID_MAX + 1];
	vec3 t;
	quat r;                          /* unit */
	vec3 s;
	double shear[2];                 /* 2D: degrees, [shx, shy] as a node's
					  * (scene.h); +0 +0 in a 3D scene */
} pose_channel;

typedef struct pose {
	char name[SCENE_ID_MAX + 1];
	pose_channel *ch;                /* owned; sorted by id */
	int n;
} pose;

typedef struct pose_set pose_set;

/* The poses of a scene (never NULL for a scene from scene_new). */
pose_set *scene_poses(scene *s);
const pose_set *scene_poses_c(const scene *s);

/* An empty set, or NULL when out of memory. */
pose_set *pose_set_new(void);
/* Frees the set, every pose and its channels; accepts NULL. */
void pose_set_free(pose_set *ps);

int pose_count(const pose_set *ps);
/* The pose at 'i' (0 <= i < pose_count), in name order. */
const pose *pose_at(const pose_set *ps, int i);
/* The index of pose 'name', or -1. */
int pose_find(const pose_set *ps, const char *name);
/* The channels of node 'id' in 'p', or NULL. */
const pose_channel *pose_channel_find(const pose *p, const char *id);

/* Makes room for one more pose, so that the next pose_put of a new name
 * allocates nothing. 0 or RIGD_E_NOMEM (set unchanged). */
int pose_reserve(pose_set *ps);

/*
 * Stores pose 'name' with channels ch[0..n) (sorted by id, strictly; the
 * set takes ownership of 'ch', which may be NULL when n is 0). A pose of
 * that name is replaced and its channels handed back in *old_ch, *old_n
 * (the caller then owns them); otherwise *old_ch is NULL and the new pose
 * needs the room pose_reserve made. Allocates nothing, never fails.
 */
void pose_put(pose_set *ps, const char *name, pose_channel *ch, int n, pose_channel **old_ch,
	      int *old_n);

/* Removes the pose at index 'i' and hands its channels to the caller
 * (*ch, *n). Allocates nothing; the room stays for a later put. */
void pose_remove(pose_set *ps, int i, pose_channel **ch, int *n);

/* True when channel 'c' has a shear other than +0 +0 (bit for bit: -0
 * counts), which the wire, the log and snapshots then carry. */
bool pose_channel_sheared(const pose_channel *c);

/* True when both sets hold the same poses with bit-identical channels. */
bool pose_set_equal(const pose_set *a, const pose_set *b);

/* A copy of ch[0..n) (NULL for n 0), or NULL with *nomem set. */
pose_channel *pose_channels_dup(const pose_channel *ch, int n, bool *nomem);

#endif
