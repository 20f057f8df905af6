/*
 * ik_solve.h: the IK constraints of Spine and DragonBones skeletons,
 * solved as each runtime solves them when it poses a skeleton
 * (docs/transforms.md, "IK constraints").
 *
 * Pure arithmetic on a bone's channels and on stored world matrices
 * (mat34, 12 doubles by rows, rigd's y-down frame): no scene, no
 * allocation. scene_ik.c binds a skeleton's constraints to the nodes of a
 * scene and calls these after each recompute pass.
 *
 * Spine solves on the bones' local channels (its runtime's "applied"
 * values) and writes new ones, which then give the bones' worlds by the
 * bones' inherit modes: the solvers take and return the channels. The
 * DragonBones runtime solves on the bones' world transforms and writes
 * new ones: its solvers take and return world matrices.
 */
#ifndef RIGD_IK_SOLVE_H
#define RIGD_IK_SOLVE_H

#include <stdbool.h>

/* A 2D bone's local channels in rigd's frame: t, the screen angle, scale
 * and shear, as a node of a 2D scene stores them. */
typedef struct ik_channels {
	double t[2];
	double angle_deg;
	double s[2];
	double shear_deg[2];
} ik_channels;

/* A Spine IK constraint's settings (defaults: mix 1, bendPositive true,
 * softness 0, compress, stretch and uniform false). */
typedef struct ik_spine_params {
	double mix;
	double softness;
	bool bend_positive;
	bool compress, stretch, uniform;
} ik_spine_params;

/*
 * Spine's one-bone constraint: turns bone 'b' (channels in and out, of
 * inherit mode 'inherit', enum node_inherit, and of length 'length' in
 * the file) so that its x axis points at world point 'target', by 'mix';
 * with compress or stretch its scale x (and y when uniform) follows the
 * distance. 'parent' is the world matrix of the bone's parent (NULL for a
 * root: the identity).
 */
void ik_spine_one(const double *parent, int inherit, double length, const double target[2],
		  const ik_spine_params *p, ik_channels *b);

/*
 * Spine's two-bone constraint on 'parent' (of length 'parent_length')
 * and its child 'child' (of length 'child_length'), both in and out;
 * 'grand' is the world matrix of the parent bone's parent (NULL: the
 * identity). False, with nothing changed, when the runtime leaves the
 * bones as they are: a bone whose inherit mode is not normal ('modes'
 * nonzero), or a parent bone scaled differently in x and y, which rigd
 * does not solve (docs/transforms.md says why).
 */
bool ik_spine_two(const double *grand, bool modes, double parent_length, double child_length,
		  const double target[2], const ik_spine_params *p, ik_channels *parent,
		  ik_channels *child);

/* DragonBones' one-bone constraint: the bone's world 'world' (in and out)
 * turned about its origin toward 'target' by 'weight'. */
void ik_db_one(double *world, const double target[2], double weight);

/*
 * DragonBones' two-bone constraint (chain 1): 'parent_world' and
 * 'child_world' (in and out) are the worlds of the constraint's bone's
 * parent and of the bone, 'grand' the parent's parent's world (NULL for
 * none), 'length' the bone's length in the file.
 */
void ik_db_two(double *parent_world, double *child_world, const double *grand, double length,
	       const double target[2], double weight, bool bend_positive);

#endif
