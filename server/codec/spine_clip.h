/*
 * spine_clip.h: the "animations" object of a Spine 4.x skeleton JSON read
 * into clips (core/clip.h; the format's rules in docs/clips.md).
 *
 * Sampled: bone rotate, translate, translatex/y, scale, scalex/y, shear,
 * shearx/y; slot attachment; drawOrder (each key's offsets turned into the
 * full slot order). Kept but not sampled, and listed in each clip's
 * 'unsampled' so an import report can name them: bone inherit, slot colour
 * timelines (rgba, rgb, alpha, rgba2, rgb2), events, deform / attachments,
 * IK, transform, path and physics constraint timelines and any other member
 * of an animation. Their key times count in the clip's duration, as in
 * Spine (the duration is the last key's time over every timeline).
 *
 * Never touches a scene; reads only the JSON it is given.
 */
#ifndef RIGD_SPINE_CLIP_H
#define RIGD_SPINE_CLIP_H

#include "core/clip.h"
#include "core/edit.h"

#include <cjson/cJSON.h>

/*
 * Reads every animation of 'animations' (the skeleton's "animations"
 * object; NULL reads none) against the skeleton's bone and slot names.
 * 0 with *out holding one clip per animation in the file's order, or, with
 * *out empty: bad_skeleton (field like
 * "skeleton.animations.walk.bones.arm.rotate[3].curve", a message naming
 * the clip, bone or slot, timeline and key) for an unknown bone or slot or
 * timeline type, key times that do not increase, a value that is not a
 * finite number, a malformed curve or draw-order offsets that do not make
 * an order; nomem. *out is initialised by the call.
 */
int spine_clips_read(const cJSON *animations, const clip_names *names, clip_set *out,
		     edit_error *err);

#endif
