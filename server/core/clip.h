/*
 * clip.h: clips, the named animations of a 2D skeleton imported from Spine
 * or DragonBones, and their sampler (docs/clips.md).
 *
 * A clip is built from keys: per bone, timelines of one channel (rotate,
 * translate, scale, shear, each of one or two values) whose keys carry a
 * time in seconds, the values and the curve to the next key; per slot, the
 * attachment shown from each key on; and one draw-order timeline whose keys
 * each hold the full slot order. clip_sample gives, at a time, each bone's
 * channels as values over its setup pose in the format's own terms (rotate,
 * translation and shear added, scale multiplied), with exactly the
 * arithmetic of the format's runtime: Spine's Bezier curves are evaluated
 * on ten straight pieces as its runtimes do, DragonBones' easings with its
 * quantised amounts and sampled curves. clip_blend mixes such channels by a
 * weight; clip_spine_local and clip_dragonbones_local turn them into rigd's
 * local 2D transform (t, screen angle, s, shear).
 *
 * Bones and slots are indices into the skeleton the clip was read against
 * (its n_bones and n_slots). This module knows no JSON: the readers are
 * codec/spine_clip.c and codec/dragonbones_clip.c. It never touches a
 * scene.
 */
#ifndef RIGD_CLIP_H
#define RIGD_CLIP_H

#include <stdbool.h>

enum clip_format {
	CLIP_FORMAT_SPINE,
	CLIP_FORMAT_DRAGONBONES,
};

/* The curve from a key to the next. */
enum clip_curve {
	CLIP_CURVE_LINEAR,
	CLIP_CURVE_STEPPED,      /* the key's value until the next key */
	CLIP_CURVE_BEZIER,       /* Spine: per value cx1, cy1, cx2, cy2 (s, value) */
	CLIP_CURVE_QUAD_IN,      /* DragonBones tweenEasing < 0 */
	CLIP_CURVE_QUAD_OUT,     /* DragonBones tweenEasing in (0, 1] */
	CLIP_CURVE_QUAD_IN_OUT,  /* DragonBones tweenEasing > 1 */
	CLIP_CURVE_SAMPLED,      /* DragonBones "curve": eased progress sampled */
};

/* What a bone timeline animates. A two-value channel keeps x in v[0] and y
 * in v[1]; CLIP_CH_ROTATE keeps the rotation in v[0] and, for DragonBones,
 * the skew (skX - skY) in v[1] (0 for Spine). Angles in degrees. */
enum clip_channel {
	CLIP_CH_ROTATE,
	CLIP_CH_TRANSLATE,
	CLIP_CH_TRANSLATE_X,
	CLIP_CH_TRANSLATE_Y,
	CLIP_CH_SCALE,
	CLIP_CH_SCALE_X,
	CLIP_CH_SCALE_Y,
	CLIP_CH_SHEAR,
	CLIP_CH_SHEAR_X,
	CLIP_CH_SHEAR_Y,
	CLIP_CH_COUNT_
};

/* Bits of clip_bone_pose.mask: the channels a clip animates. */
#define CLIP_M_ROTATE   1u
#define CLIP_M_SKEW     2u           /* DragonBones rotateFrame skew */
#define CLIP_M_X        4u
#define CLIP_M_Y        8u
#define CLIP_M_SCALE_X  16u
#define CLIP_M_SCALE_Y  32u
#define CLIP_M_SHEAR_X  64u
#define CLIP_M_SHEAR_Y  128u

/* clip_sample flags. */
#define CLIP_SAMPLE_EXACT_BEZIER 1u  /* solve Spine Beziers exactly, not as the runtime */

typedef struct clip_key {
	double time;                     /* seconds */
	double v[2];
	int curve;                       /* enum clip_curve, to the next key */
	double easing;                   /* QUAD_*: the amount, in the runtime's 0.01 steps */
	double bezier[2][4];             /* BEZIER: per value cx1, cy1, cx2, cy2 */
	int samples_at;                  /* SAMPLED: first of n_samples in clip.samples */
	int n_samples;
} clip_key;

typedef struct clip_timeline {
	int bone;                        /* index in the skeleton */
	int channel;                     /* enum clip_channel */
	clip_key *keys;                  /* owned; times non-decreasing */
	int n_keys;                      /* >= 1 */
} clip_timeline;

typedef struct clip_attachment_key {
	double time;                     /* seconds */
	char *name;                      /* owned; NULL = no attachment */
	int index;                       /* DragonBones display index (-1 none); Spine -1 */
} clip_attachment_key;

typedef struct clip_slot_timeline {
	int slot;
	clip_attachment_key *keys;       /* owned */
	int n_keys;
} clip_slot_timeline;

typedef struct clip_order_key {
	double time;                     /* seconds */
	int *order;                      /* owned, n_slots: order[i] is the slot drawn i-th; NULL = setup order */
} clip_order_key;

typedef struct clip {
	char *name;                      /* owned */
	int format;                      /* enum clip_format */
	double duration;                 /* seconds */
	double frame_rate;               /* frames per second (DragonBones); 0 for Spine (no frames) */
	int n_bones, n_slots;            /* of the skeleton it was read against */
	bool float32;                    /* sample key times, values and Bezier points as 32-bit floats */
	clip_timeline *bones;            /* owned */
	int n_bone_timelines;
	clip_slot_timeline *slots;       /* owned */
	int n_slot_timelines;
	clip_order_key *order;           /* owned; the draw-order timeline (may be empty) */
	int n_order_keys;
	double *samples;                 /* owned: every SAMPLED key's eased progress values */
	int n_samples;
	char **unsampled;                /* owned: timelines kept but not sampled ("deform", "slot 'gun': rgba") */
	int n_unsampled;
} clip;

typedef struct clip_set {
	clip *clips;                     /* owned */
	int n;
} clip_set;

/* A bone's channels, in the format's own terms (Spine: rotation, x, y,
 * scaleX/Y, shearX/Y; DragonBones: rotation = skY, skew = skX - skY in
 * shear_x, x, y, scX/scY). Either absolute (setup values, a pose) or, as
 * clip_sample gives them, over the setup: rotate_deg, x, y and the shears
 * to be added, the scales to be multiplied. */
typedef struct clip_channels {
	double rotate_deg;
	double x, y;
	double scale_x, scale_y;
	double shear_x_deg, shear_y_deg; /* DragonBones: shear_x_deg is the skew */
} clip_channels;

typedef struct clip_bone_pose {
	clip_channels ch;                /* over the setup: identity where mask has no bit */
	unsigned mask;                   /* CLIP_M_* animated by the clip */
} clip_bone_pose;

/* rigd's local 2D transform of a node (y down, screen angles, docs/transforms.md). */
typedef struct clip_local2d {
	double t[2];
	double angle_deg;
	double s[2];
	double shear_deg[2];
} clip_local2d;

/* One GET /clips row. */
typedef struct clip_summary {
	const char *name;                /* borrowed from the clip */
	double duration;                 /* seconds */
	double frame_rate;
	int n_bone_timelines, n_slot_timelines, n_order_keys, n_unsampled;
} clip_summary;

/* The skeleton a clip is read against: its bone and slot names in the
 * file's order (a bone's or slot's index is its position here). Borrowed. */
typedef struct clip_names {
	const char *const *bones;
	int n_bones;
	const char *const *slots;
	int n_slots;
} clip_names;

/* The index of 'name' in names[0 .. n), or -1. */
int clip_name_index(const char *const *names, int n, const char *name);

/* --- building (the readers) --- */

/* Frees every clip of 's' and empties it; accepts NULL. */
void clip_set_release(clip_set *s);

/* Appends an empty clip named 'name' (copied) of 'format' for a skeleton of
 * n_bones bones and n_slots slots. Returns it (valid until the set next
 * grows) or NULL when out of memory (set unchanged). */
clip *clip_set_add(clip_set *s, const char *name, int format, int n_bones, int n_slots);

/* Appends a bone timeline of 'n_keys' zeroed keys (linear, time 0). Returns
 * it (valid until the clip next grows) or NULL when out of memory. */
clip_timeline *clip_add_timeline(clip *c, int bone, int channel, int n_keys);

/* Appends a slot timeline of 'n_keys' keys (time 0, no name, index -1). */
clip_slot_timeline *clip_add_slot_timeline(clip *c, int slot, int n_keys);

/* Sets key k's attachment name (copied; NULL = none). 0 or RIGD_E_NOMEM. */
int clip_attachment_key_set(clip_attachment_key *k, const char *name);

/* Makes the draw-order timeline 'n_keys' keys (time 0, setup order). 0 or
 * RIGD_E_NOMEM (nothing changed). Call once. */
int clip_set_order_keys(clip *c, int n_keys);

/* Gives key k of the draw order a full order (n_slots entries, all
 * allocated here, to fill). Returns it or NULL when out of memory. */
int *clip_order_key_alloc(clip *c, int k);

/* Reserves 'n' eased-progress samples; returns the index of the first, or
 * -1 when out of memory. */
int clip_add_samples(clip *c, int n);

/* Appends a line (copied) to the clip's unsampled list. 0 or RIGD_E_NOMEM. */
int clip_add_unsampled(clip *c, const char *line);

/* The rows of GET /clips: fills out[0 .. min(n, s->n)) and returns s->n. */
int clip_list(const clip_set *s, clip_summary *out, int n);

/* The clip named 'name', or NULL. */
const clip *clip_set_find(const clip_set *s, const char *name);

/* --- sampling --- */

/* The DragonBones runtime's eased progress for a key's curve at linear
 * progress p in [0, 1] (QUAD_* and SAMPLED; LINEAR gives p, STEPPED 0).
 * Used by clip_sample; public for the tests. */
double clip_ease(const clip *c, const clip_key *k, double p);

/* The value of Spine Bezier segment from (t1, v1) to (t2, v2) with control
 * points (cx1, cy1), (cx2, cy2) at 'time', as Spine's runtimes compute it
 * (nine interior points of the curve's parameter by forward differences,
 * straight lines between them) or, with 'exact', by solving x(u) = time. */
double clip_bezier(double t1, double v1, const double ctrl[4], double t2, double v2, double time,
		   bool exact);

/*
 * Samples clip 'c' at 'time' (seconds; clamped to no range: before a
 * timeline's first key Spine shows the setup pose, so the channel is the
 * identity, and after its last key the last key's value holds). Fills
 * out[0 .. c->n_bones): each bone's channels over its setup and the mask of
 * the channels the clip animates (identity and mask 0 for the others).
 * 'flags' is CLIP_SAMPLE_*. Allocates nothing.
 */
void clip_sample(const clip *c, double time, unsigned flags, clip_bone_pose *out);

/* The key of slot timeline 'tl' of clip 'c' in effect at 'time', or NULL
 * before its first key (the setup attachment shows). */
const clip_attachment_key *clip_slot_at(const clip *c, const clip_slot_timeline *tl, double time);

/* The draw order in effect at 'time' (n_slots entries, order[i] the slot
 * drawn i-th), or NULL for the setup order (no key yet, or a key that
 * restores it). */
const int *clip_order_at(const clip *c, double time);

/* --- applying --- */

/* The absolute channels of a bone: its setup 'setup' with the sampled
 * values 'p' over it (added; scales multiplied). */
void clip_apply(const clip_channels *setup, const clip_bone_pose *p, clip_channels *out);

/* current + (target - current) * w for every channel, the rotation (and
 * the DragonBones skew) the short way: the difference wrapped to
 * (-180, 180]. 'w' is the runtime's alpha in [0, 1]. 'out' may alias. */
void clip_blend(const clip_channels *current, const clip_channels *target, double w,
		clip_channels *out);

/* Spine's absolute channels to rigd's frame: t = (x, -y), angle = rotation,
 * s = (scaleX, scaleY), shear = (shearX, shearY). */
void clip_spine_to_local(const clip_channels *abs, clip_local2d *out);

/* DragonBones' absolute channels (rotation = skY, skew = skX - skY) to
 * rigd's frame: t = (x, y), angle = -skY, s = (scX, scY), shear =
 * (0, skY - skX). */
void clip_dragonbones_to_local(const clip_channels *abs, clip_local2d *out);

/* A bone's sampled channels 'p' over its setup 'setup' as rigd's local 2D
 * transform: clip_apply then the format's conversion. */
void clip_spine_local(const clip_channels *setup, const clip_bone_pose *p, clip_local2d *out);
void clip_dragonbones_local(const clip_channels *setup, const clip_bone_pose *p, clip_local2d *out);

/* The identity channels over a setup (0 added, scales 1). */
clip_channels clip_channels_identity(void);

#endif
