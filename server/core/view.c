/*
 * view.c: views (frustum planes, viewport, minimum projected size) and the
 * hierarchical cull of a scene against one (see view.h). Reads scenes
 * through their public interface only; never changes them.
 */
#include "view.h"
#include "err.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A subtree's size bound is multiplied by this, so that rounding never
 * makes it smaller than the size of a box inside it. */
#define VIEW_PX_SLACK (1.0 + 1e-9)

static bool viewport_ok(double width_px, double height_px, double min_px)
{
	return isfinite(width_px) && isfinite(height_px) && isfinite(min_px) && width_px >= 1 &&
	       height_px >= 1 && width_px <= VIEW_MAX_PX && height_px <= VIEW_MAX_PX &&
	       min_px >= 0;
}

static bool plane_ok(plane p)
{
	return isfinite(p.n.x) && isfinite(p.n.y) && isfinite(p.n.z) && isfinite(p.d) &&
	       (p.n.x != 0 || p.n.y != 0 || p.n.z != 0);
}

int view_from_vp(const double vp[16], double width_px, double height_px, double min_px,
		 view *out)
{
	view v;

	memset(&v, 0, sizeof(v));
	for (int i = 0; i < 16; i++)
		if (!isfinite(vp[i]))
			return RIGD_E_BAD_FIELD;
	if (!viewport_ok(width_px, height_px, min_px))
		return RIGD_E_BAD_FIELD;
	/* Row r of the column-major matrix is vp[r], vp[4 + r], vp[8 + r],
	 * vp[12 + r]; plane k is row 3 plus or minus row k / 2. */
	for (int k = 0; k < VIEW_PLANES; k++) {
		int r = k / 2;
		double sign = k % 2 ? -1.0 : 1.0;

		v.planes[k].n = vec3_make(vp[3] + sign * vp[r], vp[7] + sign * vp[4 + r],
					  vp[11] + sign * vp[8 + r]);
		v.planes[k].d = vp[15] + sign * vp[12 + r];
		if (!plane_ok(v.planes[k]))
			return RIGD_E_BAD_FIELD;
	}
	v.has_vp = true;
	memcpy(v.vp, vp, sizeof(v.vp));
	v.width_px = width_px;
	v.height_px = height_px;
	v.min_px = min_px;
	*out = v;
	return 0;
}

int view_from_planes(const double planes[VIEW_PLANES][4], double width_px, double height_px,
		     double min_px, view *out)
{
	view v;

	memset(&v, 0, sizeof(v));
	if (!viewport_ok(width_px, height_px, min_px) || min_px != 0)
		return RIGD_E_BAD_FIELD;
	for (int k = 0; k < VIEW_PLANES; k++) {
		v.planes[k].n = vec3_make(planes[k][0], planes[k][1], planes[k][2]);
		v.planes[k].d = planes[k][3];
		if (!plane_ok(v.planes[k]))
			return RIGD_E_BAD_FIELD;
	}
	v.width_px = width_px;
	v.height_px = height_px;
	*out = v;
	return 0;
}

/* Pixels per unit of radius at w = 1: max(W |row 0|, H |row 1|). */
static double px_scale(const view *v)
{
	const double *m = v->vp;
	double rx = sqrt(m[0] * m[0] + m[4] * m[4] + m[8] * m[8]);
	double ry = sqrt(m[1] * m[1] + m[5] * m[5] + m[9] * m[9]);

	return fmax(v->width_px * rx, v->height_px * ry);
}

double view_node_px(const view *v, aabb box)
{
	sphere sp;
	double w;

	if (!v->has_vp)
		return INFINITY;
	sp = aabb_sphere(box);
	w = v->vp[3] * sp.center.x + v->vp[7] * sp.center.y + v->vp[11] * sp.center.z + v->vp[15];
	if (!(w > 0))
		return INFINITY;
	return sp.radius * px_scale(v) / w;
}

/* An upper bound of view_node_px over every box inside 'box': the largest
 * radius over the smallest w of any point of the box. */
static double subtree_px_bound(const view *v, aabb box)
{
	const double *m = v->vp;
	double w = m[15], radius;

	if (!v->has_vp)
		return INFINITY;
	w += fmin(m[3] * box.min.x, m[3] * box.max.x);
	w += fmin(m[7] * box.min.y, m[7] * box.max.y);
	w += fmin(m[11] * box.min.z, m[11] * box.max.z);
	if (!(w > 0))
		return INFINITY;
	radius = aabb_sphere(box).radius;
	return radius * px_scale(v) / w * VIEW_PX_SLACK;
}

/* plane_classify against every plane, inlined: the same products and sums
 * in the same order (so the same answers), without a call and a copy of
 * the box per plane. The cull's hottest test. */
static int classify_all(const view *v, aabb box)
{
	int side = SIDE_INSIDE;

	for (int i = 0; i < VIEW_PLANES; i++) {
		const plane *p = &v->planes[i];
		bool px = p->n.x >= 0, py = p->n.y >= 0, pz = p->n.z >= 0;

		if (p->n.x * (px ? box.max.x : box.min.x) + p->n.y * (py ? box.max.y : box.min.y) +
			    p->n.z * (pz ? box.max.z : box.min.z) + p->d < 0)
			return SIDE_OUTSIDE;
		if (!(p->n.x * (px ? box.min.x : box.max.x) + p->n.y * (py ? box.min.y : box.max.y) +
			      p->n.z * (pz ? box.min.z : box.max.z) + p->d >= 0))
			side = SIDE_STRADDLE;
	}
	return side;
}

void view_boxes_release(view_boxes *b)
{
	if (!b)
		return;
	free(b->sub);
	free(b->unbounded);
	free(b->bare);
	free(b->mark);
	free(b->todo);
	memset(b, 0, sizeof(*b));
}

/* Room for handles [0, need) in every array, marks of new room cleared.
 * On failure the arrays that grew stay grown and 'cap' stays. */
static int reserve(view_boxes *b, int need)
{
	int nc = b->cap ? b->cap : 64;
	aabb *sub;
	int *unb, *todo;
	unsigned char *mark, *bare;

	if (need <= b->cap)
		return 0;
	while (nc < need)
		nc = nc > INT32_MAX / 2 ? need : nc * 2;
	if (!(sub = realloc(b->sub, (size_t)nc * sizeof(aabb))))
		return RIGD_E_NOMEM;
	b->sub = sub;
	if (!(unb = realloc(b->unbounded, (size_t)nc * sizeof(int))))
		return RIGD_E_NOMEM;
	b->unbounded = unb;
	if (!(bare = realloc(b->bare, (size_t)nc)))
		return RIGD_E_NOMEM;
	b->bare = bare;
	if (!(mark = realloc(b->mark, (size_t)nc)))
		return RIGD_E_NOMEM;
	memset(mark + b->cap, 0, (size_t)(nc - b->cap));
	b->mark = mark;
	if (!(todo = realloc(b->todo, (size_t)nc * sizeof(int))))
		return RIGD_E_NOMEM;
	b->todo = todo;
	b->cap = nc;
	return 0;
}

/* The box of live 'node' in its own frame from its bounds and its
 * children's boxes, which must be up to date; its count of nodes without
 * bounds likewise. Children are found by position: O(children). */
static void refit(const scene *s, view_boxes *b, int node)
{
	int pos = scene_pos(s, node), end = pos + scene_subtree_size(s, node);
	aabb box = scene_local_box(s, node);
	int unb = aabb_is_empty(box) ? 1 : 0;

	assert(pos >= 0);
	for (int j = pos + 1; j < end;) {
		int c = scene_at(s, j);

		if (!aabb_is_empty(b->sub[c]))
			box = aabb_union(box, aabb_transform(b->sub[c], scene_local(s, c)));
		unb += b->unbounded[c];
		j += scene_subtree_size(s, c);
	}
	b->sub[node] = box;
	b->bare[node] = (unsigned char)(aabb_is_empty(scene_local_box(s, node)) ? 1 : 0);
	b->unbounded[node] = unb;
}

int view_boxes_build(const scene *s, view_boxes *b)
{
	int n = scene_count(s), end = 0;

	for (int i = 0; i < n; i++)
		if (scene_at(s, i) >= end)
			end = scene_at(s, i) + 1;
	b->built = false;
	if (reserve(b, end)) {
		view_boxes_release(b);
		return RIGD_E_NOMEM;
	}
	/* In reverse preorder every child comes before its parent. */
	for (int i = n - 1; i >= 0; i--)
		refit(s, b, scene_at(s, i));
	b->handle_end = end;
	b->n = n;
	b->refits = n;
	b->clock = scene_shape_clock(s);
	b->built = true;
	return 0;
}

static int cmp_desc(const void *x, const void *y)
{
	int a = *(const int *)x, c = *(const int *)y;

	return (a < c) - (a > c);
}

int view_boxes_update(const scene *s, view_boxes *b)
{
	const int *noted;
	int n_noted, n_todo = 0, end;

	if (!b->built || !scene_shape_since(s, b->clock, &noted, &n_noted))
		return view_boxes_build(s, b);
	end = b->handle_end;
	for (int k = 0; k < n_noted; k++)
		if (scene_pos(s, noted[k]) >= 0 && noted[k] >= end)
			end = noted[k] + 1;  /* created since */
	if (reserve(b, end)) {
		view_boxes_release(b);
		return RIGD_E_NOMEM;
	}
	b->handle_end = end;
	/* Each noted live node and its ancestors, once each: at most one
	 * entry per live handle, so 'todo' has room. */
	for (int k = 0; k < n_noted; k++)
		for (int h = noted[k]; h >= 0 && scene_pos(s, h) >= 0 && !b->mark[h];
		     h = scene_parent(s, h)) {
			b->mark[h] = 1;
			b->todo[n_todo++] = scene_pos(s, h);
		}
	/* Deepest first: by position, descending, children before parents. */
	qsort(b->todo, (size_t)n_todo, sizeof(int), cmp_desc);
	for (int k = 0; k < n_todo; k++) {
		int h = scene_at(s, b->todo[k]);

		refit(s, b, h);
		b->mark[h] = 0;
	}
	b->refits = n_todo;
	b->n = scene_count(s);
	b->clock = scene_shape_clock(s);
	return 0;
}

/* aabb_transform(box, mat4_from_mat34(m)) for the 12 doubles of a mat34
 * by rows: the same products and sums in the same order, so the same
 * numbers as scene_world_box's, without building a mat4. The smaller and
 * larger of two products are picked by comparison, not fmin and fmax
 * (calls into libm): for the finite products of finite numbers that picks
 * the same value, at most a zero of the other sign, which no plane or size
 * test can tell apart. */
static aabb box_by_rows(aabb box, const double *m)
{
	const double *lo = &box.min.x, *hi = &box.max.x;
	double out_lo[3], out_hi[3];

	if (aabb_is_empty(box))
		return box;
	for (int r = 0; r < 3; r++) {
		out_lo[r] = out_hi[r] = m[r * 4 + 3];
		for (int c = 0; c < 3; c++) {
			double a = m[r * 4 + c] * lo[c], d = m[r * 4 + c] * hi[c];

			out_lo[r] += a < d ? a : d;
			out_hi[r] += a < d ? d : a;
		}
	}
	return (aabb){ { out_lo[0], out_lo[1], out_lo[2] }, { out_hi[0], out_hi[1], out_hi[2] } };
}

/* The world box of 'box', given in the frame of 'node' whose cached world
 * matrix is 'rows' (NULL: stale, computed then). */
static aabb to_world(const scene *s, int node, const double *rows, aabb box)
{
	return rows ? box_by_rows(box, rows) : aabb_transform(box, scene_world(s, node));
}

/* The walk's output: the visible handles in preorder, counted past 'cap'. */
struct out {
	int *visible;
	int cap, n;
};

static void add(struct out *o, int node)
{
	if (o->visible && o->n < o->cap)
		o->visible[o->n] = node;
	o->n++;
}

/* Every node without bounds in the subtree of 'node', in preorder, past
 * subtrees without any and stopping after the last one. */
static void add_unbounded(const scene *s, const view_boxes *b, struct out *o, int node)
{
	int left = b->unbounded[node];

	for (int j = scene_pos(s, node); left > 0;) {
		int h = scene_at(s, j);

		if (!b->unbounded[h]) {
			j += scene_subtree_size(s, h);
			continue;
		}
		if (b->bare[h]) {
			add(o, h);
			left--;
		}
		j++;
	}
}

/* Every node of positions [from, end), those with bounds when 'bounded',
 * those without when 'unbounded'. */
static void add_range(const scene *s, const view_boxes *b, struct out *o, int from, int end,
		      bool bounded, bool unbounded)
{
	for (int j = from; j < end; j++) {
		int h = scene_at(s, j);
		bool has = !b->bare[h];

		if ((has && bounded) || (!has && unbounded))
			add(o, h);
	}
}

int view_cull(const scene *s, const view_boxes *b, const view *v, unsigned flags, int *visible,
	      int cap, long *tests)
{
	bool unb = flags & VIEW_CULL_UNBOUNDED, sized = v->min_px > 0;
	struct out o = { visible, cap, 0 };
	long ntests = 0;
	int inside_end = -1; /* positions before it lie in a subtree inside every plane */

	assert(b->built && b->n == scene_count(s));
	for (int i = 0; i < scene_count(s);) {
		int node = scene_at(s, i), end = i + scene_subtree_size(s, node), side;
		bool inside = i < inside_end, own_ok;
		const double *rows;
		aabb box, own;

		assert(node < b->handle_end);
		if (aabb_is_empty(b->sub[node])) {
			/* Nothing with bounds below: nothing to test. */
			if (unb)
				add_unbounded(s, b, &o, node);
			i = end;
			continue;
		}
		/* The world box of the subtree's box holds every world box of
		 * the subtree; for a leaf it is the node's own world box. */
		rows = scene_world_rows(s, node);
		box = to_world(s, node, rows, b->sub[node]);
		side = inside ? SIDE_INSIDE : (ntests++, classify_all(v, box));
		if (side != SIDE_OUTSIDE && sized &&
		    (ntests++, subtree_px_bound(v, box) < v->min_px))
			side = SIDE_OUTSIDE; /* every box below is too small */
		if (side == SIDE_OUTSIDE) {
			if (unb && b->unbounded[node])
				add_unbounded(s, b, &o, node);
			i = end;
			continue;
		}
		if (side == SIDE_INSIDE && !sized) {
			add_range(s, b, &o, i, end, true, unb);
			i = end;
			continue;
		}
		if (side == SIDE_INSIDE && !inside)
			inside_end = end;
		/* Open the node: its own box, then each child's subtree in turn. */
		own = end == i + 1 ? box
		      : b->bare[node] ? aabb_empty()
				      : to_world(s, node, rows, scene_local_box(s, node));
		if (aabb_is_empty(own)) {
			own_ok = unb;
		} else {
			own_ok = side == SIDE_INSIDE || end == i + 1 ||
				 (ntests++, classify_all(v, own) != SIDE_OUTSIDE);
			if (own_ok && sized)
				own_ok = (ntests++, view_node_px(v, own) >= v->min_px);
		}
		if (own_ok)
			add(&o, node);
		i++;
	}
	if (tests)
		*tests = ntests;
	return o.n;
}

bool view_same(const view *a, const view *b)
{
	if (a->has_vp != b->has_vp || a->width_px != b->width_px || a->height_px != b->height_px ||
	    a->min_px != b->min_px)
		return false;
	for (int k = 0; k < VIEW_PLANES; k++)
		if (a->planes[k].n.x != b->planes[k].n.x || a->planes[k].n.y != b->planes[k].n.y ||
		    a->planes[k].n.z != b->planes[k].n.z || a->planes[k].d != b->planes[k].d)
			return false;
	return !a->has_vp || memcmp(a->vp, b->vp, sizeof(a->vp)) == 0;
}
