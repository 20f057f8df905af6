/*
 * scene_ik.h: the IK constraints of a scene's skeletons, solved after
 * each recompute pass (scene_ik.c). Internal to core: scene.c calls it.
 */
#ifndef RIGD_SCENE_IK_H
#define RIGD_SCENE_IK_H

#include "scene.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * After the pass that stamped 'stamp' (a full one when 'full') and
 * recomputed 'recomputed' matrices, binds the
 * constraints of the scene's skeletons to its nodes if the nodes or the
 * skeletons changed since, then solves each constraint whose bones or
 * target that pass (or an earlier constraint's solve) recomputed, or every
 * one after a full pass or a new binding, in the order the runtime solves
 * them; after each solve it recomputes the subtree of the constraint's
 * top bone and reports it to fn(ctx, first_pos, end_pos) like the pass.
 * Returns how many of the matrices it recomputed the pass had not (0 after
 * a full pass). Out of memory, it drops the binding: the bones then take
 * their plain worlds, as in a scene without constraints.
 */
long scene_ik_update(scene *s, uint64_t stamp, bool full, long recomputed, scene_range_fn fn,
		     void *ctx);

/* Frees the binding; accepts a scene without one. */
void scene_ik_free(scene *s);

#endif
