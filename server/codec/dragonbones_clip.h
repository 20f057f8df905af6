/*
 * dragonbones_clip.h: the "animation" array of a DragonBones 5.x armature
 * read into clips (core/clip.h; the format's rules in docs/clips.md).
 *
 * Sampled: bone translateFrame, rotateFrame (rotate with its clockwise
 * turns, and skew), scaleFrame, and the older all-in-one "frame" with a
 * transform; slot displayFrame (and the older slot "frame" displayIndex);
 * the zOrder timeline. Frame positions are in frames at the armature's
 * frame rate, laid out as the runtime lays them out; easings (tweenEasing,
 * "curve") are stored as the runtime quantises them. Kept but not sampled,
 * and listed in each clip's 'unsampled': slot colorFrame, ffd / mesh
 * deform, IK timelines, action and event frames, and any other member.
 *
 * Never touches a scene; reads only the JSON it is given.
 */
#ifndef RIGD_DRAGONBONES_CLIP_H
#define RIGD_DRAGONBONES_CLIP_H

#include "core/clip.h"
#include "core/edit.h"

#include <cjson/cJSON.h>

/* The frame rate of 'armature' in document 'doc' (either may be NULL): its
 * "frameRate", else the document's, else 24, as the runtime reads it. */
double dragonbones_frame_rate(const cJSON *doc, const cJSON *armature);

/*
 * Reads every animation of 'animations' (the armature's "animation" array;
 * NULL reads none) of the armature at index 'armature' in the document,
 * at 'frame_rate' frames per second, against the armature's bone and slot
 * names. 0 with *out holding one clip per animation, or, with *out empty:
 * bad_skeleton (field like
 * "skeleton.armature[0].animation[1].bone[2].rotateFrame[3].rotate", a
 * message naming the clip, bone or slot, timeline and frame) for an
 * unknown bone or slot, a duration that is not a whole number >= 0, a
 * value that is not a finite number, a malformed curve or zOrder; nomem.
 * *out is initialised by the call.
 */
int dragonbones_clips_read(const cJSON *animations, int armature, double frame_rate,
			   const clip_names *names, clip_set *out, edit_error *err);

#endif
