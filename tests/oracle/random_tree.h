/*
 * random_tree.h: seeded random scene trees for the three.js oracle test and
 * the benchmark, so that both measure and check the very same trees.
 *
 * Shape: a random recursive tree (node k picks its parent uniformly among
 * the nodes made before it, or becomes a new root with probability 1/256),
 * listed in depth-first preorder with siblings in the order they were made.
 * Its depth grows like ln n (about 30 at a million nodes), so three.js's
 * recursive updateMatrixWorld can walk it.
 *
 * Channels: translation in [-10, 10]^3, a uniformly random unit rotation,
 * and a scale whose components have magnitudes in [0.5, 2] and are each
 * negative with probability 1/4, so world matrices carry inherited shear and
 * mirrored frames. With RTREE_PIVOTS about a third of the nodes get a pivot
 * in [-2, 2]^3; without it every pivot is zero.
 *
 * Test and benchmark support only: no part of the server uses this.
 */
#ifndef RIGD_RANDOM_TREE_H
#define RIGD_RANDOM_TREE_H

#include "core/scene.h"

#include <stdint.h>

enum rtree_flags {
	RTREE_PIVOTS = 1u << 0,
};

typedef struct rtree {
	int n;
	int *parent;       /* preorder index of the parent, -1 for a root */
	node_props *props; /* only the transform channels differ from the defaults */
	char (*id_buf)[16];
	const char **ids;  /* ids[i] points into id_buf: "n<i>" */
	int roots;
	int max_depth;     /* 0 for a lone root */
	double mean_depth;
} rtree;

/* Fills *t with an n-node tree determined by 'seed' and 'flags'. Returns 0,
 * or RIGD_E_NOMEM with *t left empty (rtree_free is still safe on it). */
int rtree_make(rtree *t, int n, uint64_t seed, unsigned flags);
/* Frees what rtree_make allocated; accepts an empty or zeroed rtree. */
void rtree_free(rtree *t);
/* scene_load of the whole tree into the empty scene 's'. */
int rtree_load(const rtree *t, scene *s);

/* The generator behind rtree_make, for callers that need more random numbers
 * from the same family (splitmix64). */
uint64_t rtree_rand(uint64_t *state);
/* Uniform in [0, 1). */
double rtree_uniform(uint64_t *state);

#endif
