/*
 * gltf_internal.h: what the glTF files of the codec share. gltf_read.c
 * reads and checks the document (GLB container, JSON, asset, meshes,
 * cameras, skins, scenes), gltf_read_node.c the nodes and their hierarchy,
 * gltf_import.c turns the chosen scene into one batch of create ops,
 * gltf_names.c keeps the sets of names that make ids and mesh references
 * unique, and gltf_export.c writes glTF JSON and the import report.
 *
 * Private to the codec folder: it includes cJSON.h, and no cJSON tree
 * leaves the codec. Nothing here recurses over a node tree.
 */
#ifndef RIGD_GLTF_INTERNAL_H
#define RIGD_GLTF_INTERNAL_H

#include "gltf.h"

#include "core/math.h"

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GLB_MAGIC 0x46546C67u      /* "glTF" */
#define GLB_CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define GLB_CHUNK_BIN 0x004E4942u  /* "BIN\0" */
#define LABEL_NAME_MAX 40          /* characters of a name quoted in a message */

/* calloc for 'n' elements counted in an int: NULL for n <= 0 (callers ask
 * only for n > 0) or when the size overflows. */
static inline void *gltf_alloc_array(int n, size_t size)
{
	if (n <= 0 || (size_t)n > SIZE_MAX / size)
		return NULL;
	return calloc((size_t)n, size);
}

/* Equal bit for bit (tells -0 from 0; a NaN equals itself). */
static inline bool gltf_bits_equal(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

static inline bool gltf_quat_bits_equal(quat a, quat b)
{
	return gltf_bits_equal(a.x, b.x) && gltf_bits_equal(a.y, b.y) &&
	       gltf_bits_equal(a.z, b.z) && gltf_bits_equal(a.w, b.w);
}

static inline bool gltf_vec3_bits_equal(vec3 a, vec3 b)
{
	return gltf_bits_equal(a.x, b.x) && gltf_bits_equal(a.y, b.y) && gltf_bits_equal(a.z, b.z);
}

/* --- sets of names (gltf_names.c) --- */

/* A set of strings with a counter each: ids and mesh references taken,
 * and for a base name the next suffix to try. Open addressing, sized once
 * for everything that will be inserted, so entries never move. */
typedef struct gltf_sset_entry {
	char *key;  /* owned; NULL: an empty slot */
	int next;   /* next suffix to try for this base (from 2) */
} gltf_sset_entry;

typedef struct gltf_sset {
	gltf_sset_entry *slots;
	size_t mask;  /* slots - 1, a power of two minus one */
} gltf_sset;

/* Room for 'n' keys at load below one half: 0 or RIGD_E_NOMEM. */
int gltf_sset_init(gltf_sset *set, size_t n);
/* Frees the keys and the slots; accepts a zeroed set. */
void gltf_sset_free(gltf_sset *set);
/* The entry of 'key', or the empty slot where it belongs (key NULL). */
gltf_sset_entry *gltf_sset_slot(gltf_sset *set, const char *key);
/* Inserts a copy of 'key' (its counter at 2) unless it is there: the
 * entry, or NULL when out of memory. */
gltf_sset_entry *gltf_sset_add(gltf_sset *set, const char *key);
/* 'base' made unique against 'set' and the ids of 'existing' (may be
 * NULL), into 'out' (max_len + 1 bytes): 0 or RIGD_E_NOMEM. */
int gltf_make_unique(gltf_sset *set, const scene *existing, const char *base, size_t max_len,
		     char *out);

/* --- the document as read (gltf_read.c, gltf_read_node.c) --- */

/* extras.rigd of one node, as gltf_export writes it. */
typedef struct gltf_rigd_extras {
	const char *id;         /* NULL: none */
	int kind;               /* -1: none */
	bool has_pivot, has_t, has_r, has_bounds, has_fov, has_near, has_far;
	vec3 pivot, t;
	quat r;                 /* what the scene normalises into the rotation */
	aabb bounds;
	double fov_deg, znear, zfar;
	int visible;            /* -1: none, else 0 / 1 */
	bool unnamed;
	const char *pivot_of;   /* NULL: none */
} gltf_rigd_extras;

/* One glTF node as read. Its indices (parent, mesh, camera, skin, the kids)
 * are checked to be in range before anything else reads them. */
typedef struct gltf_src_node {
	const char *name;       /* NULL: none */
	int parent;             /* glTF index, -1 */
	int first_kid, n_kids;  /* slice of ctx.kids */
	bool has_t, has_r, has_s, has_matrix;
	vec3 t;
	quat r;
	vec3 s;
	double matrix_err;
	bool inexact;
	int mesh, camera, skin;
	gltf_rigd_extras x;
	int fold;               /* outer of a pivot pair: index of the inner node, else -1 */
	bool visited;
} gltf_src_node;

typedef struct gltf_src_camera {
	bool perspective;
	double fov_deg, yfov, znear, zfar;
	bool infinite;
} gltf_src_camera;

/* One import: the options, the parsed document and what was read of it. */
typedef struct gltf_import_ctx {
	gltf_import_opts o;
	edit_error *err;
	edit_batch *out;
	gltf_report *rep;        /* never NULL inside: a local one stands in */
	cJSON *root;
	int n_nodes, n_meshes, n_cameras, n_skins, n_scenes;
	const cJSON **node_json, **mesh_json, **camera_json, **skin_json, **scene_json;
	gltf_src_node *nodes;
	int *kids;               /* children of every node, node by node */
	int n_kids, kids_cap;
	char **mesh_ref;         /* per mesh, the reference nodes get */
	gltf_src_camera *cameras;
	int *roots;
	int n_roots;
} gltf_import_ctx;

/*
 * Reads and checks the whole document in 'len' bytes of 'data' (.gltf or
 * .glb) into 'c' (its options set, everything else zero): nodes,
 * hierarchy, meshes, cameras, skins, and the chosen scene's roots. 0 or the
 * error recorded in c->err (c then holds what was read so far, which the
 * caller frees either way).
 */
int gltf_read_document(gltf_import_ctx *c, const char *data, size_t len);

/* Node i's own properties and extras.rigd (gltf_read_node.c). */
int gltf_read_node(gltf_import_ctx *c, int i);
/* Sets every node's parent, refusing a node with two parents and cycles. */
int gltf_link_parents(gltf_import_ctx *c);

/* 0 <= index < count from a JSON number; -1 when it is not one. */
int gltf_as_index(const cJSON *v, int count);
/* Why 'v' is not an index below 'count', for messages ("7 is out of range:
 * there are 3 nodes"), into 'out' ('cap' bytes). */
void gltf_index_problem(const cJSON *v, int count, const char *what, char *out, size_t cap);

/* --- errors and warnings (gltf_read.c) --- */

/* A name fit to quote: printable ASCII (others as '?'), at most
 * LABEL_NAME_MAX characters and "..." beyond. 'out' has LABEL_NAME_MAX + 4. */
const char *gltf_quoted(const char *s, char *out);
/* "node 3 ('arm')" or "node 3", into 'out' ('cap' bytes). */
void gltf_node_label(const gltf_import_ctx *c, int node, char *out, size_t cap);
/* Records an error not about one node (bad_node -1); returns 'code'. */
int gltf_fail(gltf_import_ctx *c, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Records an error about glTF node 'node', named first; returns 'code'. */
int gltf_fail_node(gltf_import_ctx *c, int code, int node, const char *field, const char *fmt,
		   ...) __attribute__((format(printf, 5, 6)));
/* Records RIGD_E_NOMEM; returns it. */
int gltf_nomem(gltf_import_ctx *c);
/* Adds a warning to the report (counted as dropped beyond
 * GLTF_MAX_WARNINGS or when out of memory: the import does not depend on
 * it). */
void gltf_warn(gltf_import_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
