/*
 * gltf.h: glTF 2.0 in and out. A file's node hierarchy becomes one edit
 * batch; a scene becomes a glTF 2.0 JSON document.
 *
 * IMPORT reads a .gltf (JSON) or .glb (its JSON chunk) and writes ONE batch
 * of create ops, in depth-first preorder with siblings in file order, for the
 * chosen scene's nodes (several roots allowed). The server submits it like
 * any edit, so an import is undoable, replayable and time-travellable. Per
 * glTF node:
 *   - name -> name (longer than SCENE_NAME_MAX: cut at a UTF-8 boundary);
 *   - translation / rotation / scale -> t / r / s; a "matrix" is split into
 *     T * R * S (mat4_decompose) when that is exact to opts.matrix_tol
 *     relative; otherwise (shear) it is refused with RIGD_E_NOT_TRS naming
 *     the node, or, with opts.nearest_trs, kept as the nearest TRS with its
 *     error in the report;
 *   - mesh -> the mesh field, a reference shared by every node using that
 *     mesh: the mesh's name when it is a unique, non-empty name, otherwise
 *     "mesh:<index>" (suffixed "-2", "-3"... in the unlikely event that a
 *     mesh is literally named so); kind mesh;
 *   - camera -> kind camera, fov = yfov in degrees, near = znear, far =
 *     zfar (an infinite projection gets far = max(1000, 1000 * znear); an
 *     orthographic camera keeps rigd's default perspective: both warned);
 *   - skin -> the report only (gltf_node_info.skin and gltf_report.skins):
 *     rigd nodes have no skin field, and the joints are ordinary nodes.
 * Node ids: the extras.rigd.id written by gltf_export when present and
 * valid, else the name with every character outside [A-Za-z0-9_.:-] made
 * '_', else "node_<index>"; duplicates (in the file or in opts.existing)
 * get "-2", "-3", ... The glTF index -> id mapping is report.nodes[].
 *
 * Refused, with nothing produced: bad JSON (or duplicate keys, which glTF
 * forbids), a root that is not an object, a missing or non-2.x
 * asset.version, a bad GLB header or chunk, any index out of range, a node
 * listed as a child twice or of two parents, cycles, a scene root that has a
 * parent, wrong types or array lengths, non-finite numbers, a zero-length
 * quaternion, "matrix" together with TRS, a projective matrix, more nodes or
 * a deeper tree than the limits. An error about a node names it ("node 4
 * ('arm'): ...") and report->bad_node gets its index. Every node of the
 * file is checked, not only the chosen scene's.
 *
 * EXPORT writes glTF 2.0 JSON, one node per line: translation, rotation
 * (unit [x, y, z, w]), scale (each omitted when it is the identity, bit for
 * bit), children, name, mesh and camera. A node with a non-zero pivot p
 * becomes two nodes, because glTF has no pivot: the outer one carries the name
 * and T(t + p) R S, and its only child, the inner one, carries T(-p), the
 * mesh, the camera and the node's children, so every world matrix is the
 * same. extras.rigd holds what glTF has no field for (id, kind, pivot and
 * the exact t, bounds, visible, an absent name, camera values, and, when
 * the scene would not store the unit rotation written as it is, the value
 * it normalises into it). Import folds the pair back when the two nodes
 * still read as export wrote them (an edited pair imports as two plain
 * nodes with the same world matrices). Export then import reproduces every
 * stored value bit for bit. Export writes .gltf JSON only, no .glb.
 *
 * rigd stores no geometry, so every mesh reference is written as a glTF
 * mesh named by the reference whose one primitive is a unit box ([-0.5,
 * 0.5] on each axis, 8 positions with min/max and 36 indices) in one small
 * buffer embedded as a base64 data URI: the file validates and shows
 * something in any viewer. Camera nodes become perspective cameras.
 *
 * The module is gltf_read.c and gltf_read_node.c (the document and its
 * nodes, checked), gltf_import.c (the batch), gltf_names.c (unique ids and
 * mesh references) and gltf_export.c (glTF JSON and the report, written
 * through json.h). cJSON.h is included only inside the codec folder, never
 * by this header: no cJSON tree leaves the codec. No recursion over node
 * trees (explicit stacks): hostile files can be deep. This module never
 * touches a scene it is given (export only reads it) and knows nothing of
 * SQL or sockets.
 */
#ifndef RIGD_GLTF_H
#define RIGD_GLTF_H

#include "core/edit.h"
#include "core/scene.h"

#include <stdbool.h>
#include <stddef.h>

#define GLTF_DEFAULT_MAX_NODES 100000  /* nodes in a file (RIGD_E_LIMIT beyond) */
#define GLTF_DEFAULT_MAX_DEPTH 1000    /* edges from a root (RIGD_E_LIMIT beyond) */
#define GLTF_DEFAULT_MATRIX_TOL 1e-6   /* relative; see gltf_import_opts */
#define GLTF_MAX_WARNINGS 32           /* warnings kept in a report */

typedef struct gltf_import_opts {
	/* Which scene: scene_index >= 0, else the one named scene_name (non-
	 * NULL), else the file's "scene", else scene 0. A file with no scenes
	 * imports every node that has no parent. */
	int scene_index;
	const char *scene_name;
	/* Id of a node the file's roots go under (appended); NULL or "": the
	 * file's roots become scene roots. edit_apply checks that it exists. */
	const char *parent;
	/* The scene the batch will be applied to (may be NULL): generated ids
	 * avoid the ids it holds. Only read. */
	const scene *existing;
	/* A matrix is exact when the largest element difference between it and
	 * the recomposed T * R * S is at most matrix_tol * max(1, largest
	 * |element| of its 3x3 part); 0 means GLTF_DEFAULT_MATRIX_TOL (a few
	 * float32 ulps, since files often carry float32-rounded matrices). */
	double matrix_tol;
	/* Keep the nearest TRS of an inexact matrix instead of refusing. */
	bool nearest_trs;
	int max_nodes;  /* 0: GLTF_DEFAULT_MAX_NODES */
	int max_depth;  /* 0: GLTF_DEFAULT_MAX_DEPTH */
} gltf_import_opts;

/* scene_index -1, everything else zero / NULL / false: the defaults. */
gltf_import_opts gltf_import_opts_default(void);

/* What became of one glTF node. */
enum gltf_node_role {
	GLTF_NODE_SKIPPED = 0,       /* not in the chosen scene */
	GLTF_NODE_PLAIN = 1,         /* became the rigd node 'id' */
	GLTF_NODE_PIVOT_OUTER = 2,   /* outer node of an exported pivot pair, folded into 'id' */
	GLTF_NODE_PIVOT_INNER = 3,   /* inner node of the pair: its world matrix is id's */
};

typedef struct gltf_node_info {
	char id[SCENE_ID_MAX + 1];   /* "" when skipped */
	int role;                    /* enum gltf_node_role */
	int mesh, camera, skin;      /* glTF indices, -1 for none */
	bool from_matrix;            /* the transform was given as "matrix" */
	double matrix_err;           /* largest |matrix - T R S| element kept (0 without matrix) */
	bool matrix_exact;           /* within matrix_tol (false: the nearest TRS was kept) */
} gltf_node_info;

typedef struct gltf_skin_info {
	char *name;                  /* owned; NULL when unnamed */
	int skeleton;                /* glTF node index, -1 for none */
	int *joints;                 /* owned; glTF node indices */
	int n_joints;
} gltf_skin_info;

/*
 * What an import did. On success: everything. On failure: only bad_node
 * (the glTF index of the offending node, -1 when the error is not about one
 * node); the rest is empty.
 */
typedef struct gltf_report {
	int scene_index;             /* the scene imported, -1 when the file has none */
	char *scene_name;            /* owned; NULL when unnamed */
	int n_nodes;                 /* nodes in the file */
	gltf_node_info *nodes;       /* owned; indexed by glTF node index */
	int n_created;               /* create ops in the batch */
	int n_roots;                 /* of them, the file's scene roots */
	int n_matrix;                /* imported nodes given as "matrix" */
	int n_inexact;               /* of them, kept as nearest TRS */
	double max_matrix_err;       /* over them */
	int n_pivots;                /* pivot pairs folded back */
	gltf_skin_info *skins;       /* owned; every skin of the file */
	int n_skins;
	char **warnings;             /* owned; at most GLTF_MAX_WARNINGS */
	int n_warnings;
	int n_warnings_dropped;      /* beyond GLTF_MAX_WARNINGS */
	int bad_node;
} gltf_report;

/* An empty report. */
void gltf_report_init(gltf_report *r);
/* Frees what the report owns and re-initialises it. Accepts NULL. */
void gltf_report_release(gltf_report *r);

/*
 * Imports 'len' bytes of 'data' (.gltf JSON or .glb, told apart by the GLB
 * magic; need not be NUL-terminated) with 'opts' (NULL: defaults).
 *
 * Returns 0 and fills 'out' (initialised by this call; the caller releases
 * it) with one create op per imported node, and 'report' (may be NULL;
 * initialised by this call). The batch is anonymous (no client): the caller
 * may set b->client. It can hold up to max_nodes ops, more than
 * EDIT_DEFAULT_MAX_OPS: apply it with edit_apply (no limits) or limits whose
 * max_ops covers it. It is validated against glTF, not against the scene:
 * edit_apply may still refuse it (opts.parent unknown, the scene's node
 * limit).
 *
 * Returns on failure RIGD_E_BAD_JSON (not JSON), RIGD_E_BAD_GLTF (not
 * valid glTF, or a bad GLB container), RIGD_E_CYCLE, RIGD_E_NOT_FINITE,
 * RIGD_E_ZERO_QUATERNION, RIGD_E_NOT_TRS (a shear, without nearest_trs),
 * RIGD_E_LIMIT (max_nodes, max_depth), RIGD_E_NOT_FOUND (no scene of that
 * index or name), RIGD_E_BAD_ID (opts->parent) or RIGD_E_NOMEM; then 'out'
 * is empty, 'err' (may be NULL; op -1, field the glTF property such as
 * "children" or "matrix") says what and where, starting "node 4 ('arm'):"
 * when it is about a node, and report->bad_node is that node's index.
 */
int gltf_import(const char *data, size_t len, const gltf_import_opts *opts, edit_batch *out,
		gltf_report *report, edit_error *err);

/*
 * The report as JSON for an HTTP reply or rigctl:
 *   {"scene":0,"scene_name":"Scene","created":22,"roots":1,
 *    "ids":["Armature",null,...],          glTF index -> id (null: skipped;
 *                                          both nodes of a pivot pair -> its id)
 *    "matrix_nodes":[{"node":0,"id":"Armature","error":0,"exact":true}],
 *    "pivots":0,
 *    "skins":[{"skin":0,"name":"Armature","skeleton":"Bone","joints":["Bone",...],
 *              "used_by":["Cylinder"]}],
 *    "warnings":["..."]}
 * "exact" is false for a matrix kept as the nearest TRS. Returns 0 and a
 * malloc'd NUL-terminated string in *out (its length in *out_len, may be
 * NULL) that the caller frees, or RIGD_E_NOMEM (*out untouched).
 */
int gltf_report_json(const gltf_report *r, char **out, size_t *out_len);

typedef struct gltf_export_opts {
	const char *scene_name;      /* scenes[0].name; NULL: none */
	const char *generator;       /* asset.generator; NULL: "rigd" */
} gltf_export_opts;

/*
 * Writes scene 's' (its stored values; world matrices are not needed and
 * nothing in 's' changes) as glTF 2.0 JSON with 'opts' (may be NULL).
 * Returns 0 and a malloc'd NUL-terminated string in *out_json (its length
 * in *out_len, may be NULL) that the caller frees; RIGD_E_NOMEM (or
 * RIGD_E_LIMIT for a scene whose glTF would exceed INT_MAX nodes) with
 * *out_json untouched; RIGD_E_NOT_TRS for a 2D scene with a node that has
 * a shear or an inherit mode other than normal (glTF's nodes are TRS, or a
 * matrix that decomposes into TRS, under the parent's world: neither
 * holds those).
 */
int gltf_export(const scene *s, const gltf_export_opts *opts, char **out_json, size_t *out_len);

#endif
