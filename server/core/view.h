/*
 * view.h: a viewer's view of a scene, for per-viewer interest: the six
 * half-spaces of a camera's frustum (from a view-projection matrix, or given
 * as planes), the viewport in pixels and a minimum projected size, and the
 * hierarchical cull of a scene against it.
 *
 * The cull is the textbook walk of scene_cull (subtree boxes in preorder;
 * a subtree outside a plane is dropped with one test, one inside every
 * plane needs no more plane tests, only straddling ones are opened), run
 * over subtree boxes kept in each node's own frame (view_boxes), which a
 * root edit leaves as they are, so that no view pays O(n) for an edit. Unlike scene_cull it can count nodes
 * without bounds as visible (VIEW_CULL_UNBOUNDED), and it drops nodes whose
 * world box projects smaller than min_px (the rule is view_node_px's).
 *
 * Reads scenes, never changes them. No JSON, sockets or SQL.
 */
#ifndef RIGD_VIEW_H
#define RIGD_VIEW_H

#include "math.h"
#include "scene.h"

#include <stdbool.h>

#define VIEW_PLANES 6
#define VIEW_MAX_PX 65536           /* largest viewport side, pixels */

/* Flags of view_cull. */
enum view_cull_flag {
	VIEW_CULL_UNBOUNDED = 1u << 0,  /* nodes without bounds are visible */
};

typedef struct view {
	plane planes[VIEW_PLANES];  /* inside: dot(n, p) + d >= 0 for all six */
	bool has_vp;                /* built from a view-projection matrix */
	double vp[16];              /* column-major, when has_vp */
	double width_px, height_px; /* the viewport */
	double min_px;              /* smallest projected size drawn; 0: any */
} view;

/*
 * A view from the column-major view-projection matrix 'vp' (clip space as
 * OpenGL and three.js have it: -w <= x, y, z <= w), the viewport and the
 * minimum size: the planes are the rows' sums and differences (Gribb and
 * Hartmann: left r3 + r0, right r3 - r0, bottom r3 + r1, top r3 - r1,
 * near r3 + r2, far r3 - r2). Returns 0, or RIGD_E_BAD_FIELD when a plane
 * has a zero normal (a degenerate matrix), a number is not finite, the
 * viewport is not 1..VIEW_MAX_PX on each side or min_px is negative; *out
 * is then unchanged.
 */
int view_from_vp(const double vp[16], double width_px, double height_px, double min_px,
		 view *out);

/*
 * A view from six planes [a, b, c, d] (inside: a x + b y + c z + d >= 0).
 * Without a matrix there is no projection, so min_px must be 0. Returns 0,
 * or RIGD_E_BAD_FIELD (a zero normal, a number not finite, a viewport out
 * of range, min_px other than 0); *out is then unchanged.
 */
int view_from_planes(const double planes[VIEW_PLANES][4], double width_px, double height_px,
		     double min_px, view *out);

/* True when 'a' and 'b' select the same nodes of any scene: the same
 * planes, matrix, viewport and minimum size (compared as numbers). */
bool view_same(const view *a, const view *b);

/*
 * The projected size in pixels of a world box: the diameter of its
 * bounding sphere (centre c, radius r: half the box's diagonal) on screen,
 * r * max(W * |vp row 0|, H * |vp row 1|) / w(c), where |vp row k| is the
 * length of the x, y, z part of row k, W and H the viewport and w(c) the
 * clip w of the centre (the depth in front of a perspective camera, 1 for
 * an orthographic one). A centre at or behind the camera plane (w <= 0)
 * counts as infinitely large. Without a matrix: infinity.
 */
double view_node_px(const view *v, aabb world_box);

/*
 * Boxes of a scene, by node handle, each in the node's OWN frame: its
 * subtree box (its bounds, and each child's subtree box carried by the
 * child's local matrix: a box that holds every point of the subtree's
 * bounds) and how many nodes without bounds its subtree holds. A node's
 * box changes only when bounds, local matrices or children inside its
 * subtree change, never with its own or an ancestor's world matrix: a
 * root edit refits nothing, an edit of node X refits X's ancestors only
 * (view_boxes_update reads scene_shape_since). Shared by every view of the
 * scene. Zero it to start; release with view_boxes_release.
 */
typedef struct view_boxes {
	aabb *sub;          /* by handle: the subtree box in the node's frame */
	int *unbounded;     /* by handle: nodes without bounds in the subtree */
	unsigned char *bare; /* by handle: 1 when the node itself has no bounds */
	unsigned char *mark; /* by handle: scratch of the refit, all 0 between */
	int *todo;          /* scratch of the refit: the nodes to refit */
	int cap;            /* handles the arrays hold */
	int n;              /* the scene's nodes when last brought up to date */
	int handle_end;     /* at least 1 + the largest live handle (0: empty) */
	bool built;         /* the arrays hold the scene at 'clock' */
	uint64_t clock;     /* scene_shape_clock when last brought up to date */
	long refits;        /* node boxes recomputed by the last update */
} view_boxes;

/* Builds 'b' for the scene as it is, from scratch, in O(n). Returns 0, or
 * RIGD_E_NOMEM with 'b' emptied (to be built again). */
int view_boxes_build(const scene *s, view_boxes *b);
/*
 * Brings 'b', last built or updated from scene 's' (the same scene object,
 * edited since), up to date: refits the nodes scene_shape_since names and
 * their ancestors, bottom-up, in O(those nodes and their children);
 * rebuilds from scratch when 'b' was never built or the shape log no
 * longer reaches back. b->refits says how many node boxes were
 * recomputed. Returns 0, or RIGD_E_NOMEM with 'b' emptied.
 */
int view_boxes_update(const scene *s, view_boxes *b);
/* Frees the arrays; 'b' is then zeroed. Accepts NULL. */
void view_boxes_release(view_boxes *b);

/*
 * The nodes of 's' visible in 'v': those whose own world box is not
 * outside any plane and projects to at least v->min_px, and, with
 * VIEW_CULL_UNBOUNDED in 'flags', every node without bounds. 'b' must
 * be up to date with 's' (view_boxes_update) and its world matrices too
 * (scene_update). A subtree is dropped when the world box of its box
 * (carried by the node's world matrix) is outside a plane or projects
 * smaller than min_px; that box holds every world box below, so the
 * boxes only prune: the visible set is the per-node rule's. Writes the visible handles in
 * preorder to 'visible' (up to 'cap'; may be NULL) and returns how many are
 * visible; *tests (may be NULL) receives the box tests made (plane and size
 * tests). Never fails.
 */
int view_cull(const scene *s, const view_boxes *b, const view *v, unsigned flags, int *visible,
	      int cap, long *tests);

#endif
