/*
 * bench_view.c: what per-viewer interest costs the server's core for a root
 * edit (server/core/view.c), without sockets or encoding.
 *
 * A program that prints figures, never a test. The scene and views are
 * bench_interest's: a root, 100 groups on a 10 x 10 grid 200 apart, each
 * with 999 boxes on a 37 x 27 grid 2 apart; 100 views, each a camera 48
 * above one group looking down (60 degrees, 1280 x 960), about 1.1% of the
 * nodes visible. For each of 40 root edits (the root moved a few units,
 * back and forth): scene_set and scene_update (every world matrix), then
 * the boxes brought up to date (view_boxes_update: none refitted), then
 * one cull per view; and, for comparison, the cost of building every box
 * from scratch (view_boxes_build, what each state would cost without the
 * shape log). Times are CPU time of this thread (the machine is shared:
 * wall time would count the other work), means over the edits.
 *
 * Usage: bench_view   (or cmake --build BUILD --target bench_views)
 */
#include "core/scene.h"
#include "core/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GROUPS 100
#define LEAVES 999
#define EDITS 40

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* out = a * b, column-major 4x4. */
static void mul4(const double *a, const double *b, double *out)
{
	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 4; r++) {
			double sum = 0;

			for (int k = 0; k < 4; k++)
				sum += a[k * 4 + r] * b[c * 4 + k];
			out[c * 4 + r] = sum;
		}
}

/* bench_interest's camera over group g (tests/lib/interest.js's
 * perspectiveVp: 60 degrees, 4:3, near 1, far 500, 48 above). */
static int view_of(int g, view *v)
{
	double p[16] = { 0 }, m[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 }, vp[16];
	double t = 1 / tan(60 * M_PI / 360), n = 1, f = 500;

	p[0] = t / (1280.0 / 960.0);
	p[5] = t;
	p[10] = (f + n) / (n - f);
	p[11] = -1;
	p[14] = 2 * f * n / (n - f);
	m[12] = -((g % 10) * 200.0 + 36);
	m[13] = -((g / 10) * 200.0 + 26);
	m[14] = -48;
	mul4(p, m, vp);
	return view_from_vp(vp, 1280, 960, 0, v);
}

static scene *bench_scene(int *root)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	char id[32];

	if (!s || scene_create(s, "root", -1, -1, &p, root))
		return NULL;
	for (int g = 0; g < GROUPS; g++) {
		int group;

		p = node_props_default();
		p.t = vec3_make((g % 10) * 200.0, (g / 10) * 200.0, 0);
		snprintf(id, sizeof(id), "g%d", g);
		if (scene_create(s, id, *root, -1, &p, &group))
			return NULL;
		for (int k = 0; k < LEAVES; k++) {
			node_props q = node_props_default();

			q.t = vec3_make((k % 37) * 2.0, (k / 37) * 2.0, 0);
			q.has_bounds = true;
			q.bounds = aabb_make(vec3_make(-0.5, -0.5, -0.5), vec3_make(0.5, 0.5, 0.5));
			snprintf(id, sizeof(id), "g%d-%d", g, k);
			if (scene_create(s, id, group, -1, &q, NULL))
				return NULL;
		}
	}
	scene_update(s, 1, NULL, NULL);
	return s;
}

int main(void)
{
	static view views[GROUPS];
	view_boxes b = { 0 }, fresh = { 0 };
	double t_update = 0, t_boxes = 0, t_culls = 0, t_build = 0, t0;
	long visible = 0, refits = 0;
	int root, *out;
	scene *s = bench_scene(&root);

	out = malloc(sizeof(int) * (GROUPS * (LEAVES + 1) + 1));
	if (!s || !out) {
		fprintf(stderr, "bench_view: out of memory\n");
		return 1;
	}
	for (int g = 0; g < GROUPS; g++)
		if (view_of(g, &views[g]))
			return 1;
	if (view_boxes_update(s, &b))
		return 1;
	for (int e = 0; e < EDITS; e++) {
		node_props p = node_props_default();

		p.t = vec3_make(e % 2 ? 3 : 0, e % 4 < 2 ? 2 : 0, 0);
		t0 = cpu_s();
		scene_set(s, root, PROP_T, &p);
		scene_update(s, (uint64_t)e + 2, NULL, NULL);
		t_update += cpu_s() - t0;
		t0 = cpu_s();
		if (view_boxes_update(s, &b))
			return 1;
		t_boxes += cpu_s() - t0;
		refits += b.refits;
		t0 = cpu_s();
		for (int g = 0; g < GROUPS; g++)
			visible += view_cull(s, &b, &views[g], VIEW_CULL_UNBOUNDED, out,
					     GROUPS * (LEAVES + 1) + 1, NULL);
		t_culls += cpu_s() - t0;
		t0 = cpu_s();
		if (view_boxes_build(s, &fresh))
			return 1;
		t_build += cpu_s() - t0;
	}
	printf("bench_view: %d nodes, %d views (%.1f nodes visible each), %d root edits; CPU ms per edit:\n",
	       scene_count(s), GROUPS, (double)visible / EDITS / GROUPS, EDITS);
	printf("  scene_set + scene_update (every world matrix)  %8.3f\n", 1e3 * t_update / EDITS);
	printf("  view_boxes_update (%ld boxes refitted)          %8.3f\n", refits / EDITS,
	       1e3 * t_boxes / EDITS);
	printf("  %d culls (view_cull), one per view            %8.3f (%.4f each)\n", GROUPS,
	       1e3 * t_culls / EDITS, 1e3 * t_culls / EDITS / GROUPS);
	printf("  for comparison: every box built from scratch  %8.3f\n", 1e3 * t_build / EDITS);
	view_boxes_release(&b);
	view_boxes_release(&fresh);
	scene_free(s);
	free(out);
	return 0;
}
