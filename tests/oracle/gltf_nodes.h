/*
 * gltf_nodes.h: the node hierarchy of a glTF 2.0 file, for tests.
 *
 * Reads only what a scene graph needs: the default scene's roots, every
 * node's children, and its matrix or translation/rotation/scale, listed in
 * depth-first preorder. Meshes, skins, cameras and buffers are ignored.
 * This is a test fixture loader, not the glTF import of the server (a later
 * issue): it keeps cJSON to itself and hands out plain structs.
 */
#ifndef RIGD_GLTF_NODES_H
#define RIGD_GLTF_NODES_H

#include "core/math.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct gltf_node {
	int index;       /* in the file's "nodes" array */
	int parent;      /* position of the parent in the list, -1 for a root */
	bool has_matrix; /* "matrix" given; t, r, s then keep their defaults */
	mat4 matrix;     /* column-major as in the file; identity if absent */
	vec3 t;          /* as in the file, (0, 0, 0) if absent */
	quat r;          /* as in the file (not normalised), identity if absent */
	vec3 s;          /* as in the file, (1, 1, 1) if absent */
} gltf_node;

typedef struct gltf_nodes {
	int n;
	gltf_node *nodes; /* the nodes reachable from the scene, in preorder */
} gltf_nodes;

/*
 * Loads the hierarchy of the default scene ("scene", or scene 0) of the
 * glTF JSON file at 'path' into *out. Nodes no scene root reaches are left
 * out. Returns 0, RIGD_E_IO if the file cannot be read, RIGD_E_BAD_GLTF if
 * it is not a glTF node hierarchy (bad JSON or types, an index out of range,
 * a node with two parents or in a cycle, "matrix" together with TRS), or
 * RIGD_E_NOMEM. On error *out is empty and 'why' (may be NULL) receives a
 * message naming the offending node, e.g. "node 3: rotation needs 4 numbers".
 */
int gltf_nodes_load(const char *path, gltf_nodes *out, char *why, size_t why_len);
/* Frees what gltf_nodes_load filled in; accepts an empty or zeroed struct. */
void gltf_nodes_free(gltf_nodes *g);

#endif
