/*
 * inherit.h: the world matrix of a 2D node whose inherit mode is not
 * INHERIT_NORMAL (scene.h, enum node_inherit): Spine's four other modes
 * and DragonBones' inherit flags, as docs/transforms.md ("Shear and
 * inherit modes") states them.
 *
 * Pure arithmetic on stored matrices (mat34, 12 doubles by rows): no
 * scene, no allocation. The recompute pass (scene.c) and the reads that
 * compute a stale world matrix (scene_world, scene_traverse) call it for
 * the nodes that have such a mode, and only for them.
 */
#ifndef RIGD_INHERIT_H
#define RIGD_INHERIT_H

#include <stdbool.h>

/* A node's own channels, in rigd's y-down frame, as the modes read them. */
typedef struct inherit_channels {
	double angle_deg;     /* the screen angle (quat_to_angle2d_deg of r) */
	double shear_deg[2];  /* [shx, shy] */
	double s[2];          /* scale x, y */
	double t[2];          /* translation x, y */
	double pivot[2];      /* pivot x, y */
} inherit_channels;

/* True when 'mode' is a value a node may store: INHERIT_NORMAL, one of
 * Spine's four other modes, or INHERIT_DB or'd with at least one DB_NO_
 * bit. */
bool inherit_mode_valid(int mode);

/*
 * Writes to 'world' the world matrix of a node of inherit mode 'mode' (not
 * INHERIT_NORMAL), given its parent's world matrix 'parent' (NULL for a
 * root, which takes its local matrix whatever its mode), its stored local
 * matrix 'local' and its channels 'c'. The pivot point t + pivot travels
 * as Spine's bone position does, and the result keeps the pivot's meaning:
 * W = [A | p] T(-pivot) for the world 2x2 block A and position p the mode
 * gives. The z row and column are those of parent * local. 'world' may
 * not alias 'parent' or 'local'.
 */
void inherit_world(const double *parent, const double *local, const inherit_channels *c,
		   int mode, double *world);

#endif
