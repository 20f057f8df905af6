/*
 * random_tree.c: seeded random scene trees (see random_tree.h).
 *
 * The tree is grown in creation order and then relabelled in preorder with
 * an explicit stack (no recursion), because scene_load wants a preorder list
 * and a million-node tree must not depend on the C stack.
 */
#include "random_tree.h"

#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rtree_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rtree_uniform(uint64_t *state)
{
	return (double)(rtree_rand(state) >> 11) * 0x1.0p-53;
}

static double uniform_in(uint64_t *st, double lo, double hi)
{
	return lo + (hi - lo) * rtree_uniform(st);
}

/* Shoemake's uniform random rotation. */
static quat random_rotation(uint64_t *st)
{
	const double two_pi = 6.283185307179586;
	double u1 = rtree_uniform(st), u2 = rtree_uniform(st), u3 = rtree_uniform(st);
	double a = sqrt(1 - u1), b = sqrt(u1);

	return (quat){ a * sin(two_pi * u2), a * cos(two_pi * u2), b * sin(two_pi * u3),
		       b * cos(two_pi * u3) };
}

static double random_scale(uint64_t *st)
{
	double m = uniform_in(st, 0.5, 2.0);

	return (rtree_rand(st) & 3) == 0 ? -m : m;
}

void rtree_free(rtree *t)
{
	free(t->parent);
	free(t->props);
	free(t->id_buf);
	free(t->ids);
	memset(t, 0, sizeof(*t));
}

int rtree_make(rtree *t, int n, uint64_t seed, unsigned flags)
{
	uint64_t st = seed;
	int *made_parent = NULL, *first_child = NULL, *child = NULL, *pre = NULL, *stack = NULL;
	int *depth = NULL;
	int err = RIGD_E_NOMEM, height = 0, next = 0;
	double depth_sum = 0;

	memset(t, 0, sizeof(*t));
	if (n <= 0)
		return 0;
	t->parent = malloc(sizeof(int) * (size_t)n);
	t->props = malloc(sizeof(node_props) * (size_t)n);
	t->id_buf = malloc(sizeof(*t->id_buf) * (size_t)n);
	t->ids = malloc(sizeof(char *) * (size_t)n);
	made_parent = malloc(sizeof(int) * (size_t)n);
	first_child = malloc(sizeof(int) * ((size_t)n + 1));
	child = malloc(sizeof(int) * (size_t)n);
	pre = malloc(sizeof(int) * (size_t)n);
	stack = malloc(sizeof(int) * (size_t)n);
	depth = malloc(sizeof(int) * (size_t)n);
	if (!t->parent || !t->props || !t->id_buf || !t->ids || !made_parent || !first_child ||
	    !child || !pre || !stack || !depth)
		goto out;

	/* Grow the tree in creation order. */
	for (int k = 0; k < n; k++)
		made_parent[k] = k == 0 || rtree_rand(&st) % 256 == 0 ? -1
								      : (int)(rtree_rand(&st) % (uint64_t)k);

	/* Children lists (creation order) as offsets into 'child'; slot n of
	 * first_child collects the roots. */
	memset(first_child, 0, sizeof(int) * ((size_t)n + 1));
	for (int k = 0; k < n; k++)
		first_child[made_parent[k] < 0 ? n : made_parent[k]]++;
	for (int k = 0, sum = 0; k <= n; k++) {
		int c = first_child[k];

		first_child[k] = sum;
		sum += c;
	}
	{
		int *fill = depth; /* borrowed as a cursor; depth is filled later */

		for (int k = 0; k < n; k++)
			fill[k] = first_child[k];
		for (int k = 0, root_fill = first_child[n]; k < n; k++) {
			if (made_parent[k] < 0)
				child[root_fill++] = k;
			else
				child[fill[made_parent[k]]++] = k;
		}
	}

	/* Preorder numbering: pop a node, number it, push its children in
	 * reverse so that the first child comes off the stack next. */
	for (int i = n - 1; i >= first_child[n]; i--)
		stack[height++] = child[i];
	while (height > 0) {
		int k = stack[--height];

		pre[k] = next++;
		for (int i = first_child[k + 1] - 1; i >= first_child[k]; i--)
			stack[height++] = child[i];
	}

	for (int k = 0; k < n; k++) {
		int i = pre[k];

		t->parent[i] = made_parent[k] < 0 ? -1 : pre[made_parent[k]];
	}
	for (int i = 0; i < n; i++) {
		node_props *p = &t->props[i];

		/* One call per statement: the order in which a function's
		 * arguments are evaluated is unspecified, and the tree must not
		 * depend on the compiler. */
		*p = node_props_default();
		p->t.x = uniform_in(&st, -10, 10);
		p->t.y = uniform_in(&st, -10, 10);
		p->t.z = uniform_in(&st, -10, 10);
		p->r = random_rotation(&st);
		p->s.x = random_scale(&st);
		p->s.y = random_scale(&st);
		p->s.z = random_scale(&st);
		if ((flags & RTREE_PIVOTS) && rtree_rand(&st) % 3 == 0) {
			p->pivot.x = uniform_in(&st, -2, 2);
			p->pivot.y = uniform_in(&st, -2, 2);
			p->pivot.z = uniform_in(&st, -2, 2);
		}
		snprintf(t->id_buf[i], sizeof(t->id_buf[i]), "n%d", i);
		t->ids[i] = t->id_buf[i];
		depth[i] = t->parent[i] < 0 ? 0 : depth[t->parent[i]] + 1;
		if (t->parent[i] < 0)
			t->roots++;
		if (depth[i] > t->max_depth)
			t->max_depth = depth[i];
		depth_sum += depth[i];
	}
	t->n = n;
	t->mean_depth = depth_sum / n;
	err = 0;
out:
	free(made_parent);
	free(first_child);
	free(child);
	free(pre);
	free(stack);
	free(depth);
	if (err)
		rtree_free(t);
	return err;
}

int rtree_load(const rtree *t, scene *s)
{
	return scene_load(s, t->n, t->ids, t->parent, t->props, NULL);
}
