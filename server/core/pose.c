/*
 * pose.c: the poses a scene holds (see pose.h): a name-sorted array of
 * poses, each owning its id-sorted channels.
 *
 * Only the edit layer writes here, and it validates first: this module
 * asserts its invariants and checks no input. It never touches nodes.
 */
#include "pose.h"

#include "err.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct pose_set {
	pose *v;                         /* sorted by name */
	int n, cap;
};

pose_set *pose_set_new(void)
{
	return calloc(1, sizeof(pose_set));
}

void pose_set_free(pose_set *ps)
{
	if (!ps)
		return;
	for (int i = 0; i < ps->n; i++)
		free(ps->v[i].ch);
	free(ps->v);
	free(ps);
}

int pose_count(const pose_set *ps)
{
	return ps->n;
}

const pose *pose_at(const pose_set *ps, int i)
{
	assert(i >= 0 && i < ps->n);
	return &ps->v[i];
}

/* The index of 'name', or -(insertion point) - 1. */
static int locate(const pose_set *ps, const char *name)
{
	int lo = 0, hi = ps->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2, c = strcmp(ps->v[mid].name, name);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -lo - 1;
}

int pose_find(const pose_set *ps, const char *name)
{
	int i = locate(ps, name);

	return i >= 0 ? i : -1;
}

const pose_channel *pose_channel_find(const pose *p, const char *id)
{
	int lo = 0, hi = p->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2, c = strcmp(p->ch[mid].id, id);

		if (c == 0)
			return &p->ch[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int pose_reserve(pose_set *ps)
{
	pose *v;
	int nc;

	if (ps->n < ps->cap)
		return 0;
	nc = ps->cap ? 2 * ps->cap : 4;
	if (!(v = realloc(ps->v, sizeof(*v) * (size_t)nc)))
		return RIGD_E_NOMEM;
	ps->v = v;
	ps->cap = nc;
	return 0;
}

void pose_put(pose_set *ps, const char *name, pose_channel *ch, int n, pose_channel **old_ch,
	      int *old_n)
{
	int i = locate(ps, name);

	for (int k = 1; k < n; k++)
		assert(strcmp(ch[k - 1].id, ch[k].id) < 0);
	*old_ch = NULL;
	*old_n = 0;
	if (i >= 0) {
		*old_ch = ps->v[i].ch;
		*old_n = ps->v[i].n;
	} else {
		i = -i - 1;
		assert(ps->n < ps->cap);
		memmove(&ps->v[i + 1], &ps->v[i], sizeof(pose) * (size_t)(ps->n - i));
		ps->n++;
		memset(&ps->v[i], 0, sizeof(pose));
		strncpy(ps->v[i].name, name, SCENE_ID_MAX);
	}
	ps->v[i].ch = ch;
	ps->v[i].n = n;
}

void pose_remove(pose_set *ps, int i, pose_channel **ch, int *n)
{
	assert(i >= 0 && i < ps->n);
	*ch = ps->v[i].ch;
	*n = ps->v[i].n;
	memmove(&ps->v[i], &ps->v[i + 1], sizeof(pose) * (size_t)(ps->n - i - 1));
	ps->n--;
}

bool pose_channel_sheared(const pose_channel *c)
{
	static const double zero[2] = { 0, 0 };

	return memcmp(c->shear, zero, sizeof(zero)) != 0;
}

bool pose_set_equal(const pose_set *a, const pose_set *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		const pose *p = &a->v[i], *q = &b->v[i];

		if (strcmp(p->name, q->name) != 0 || p->n != q->n)
			return false;
		for (int k = 0; k < p->n; k++) {
			const pose_channel *x = &p->ch[k], *y = &q->ch[k];

			if (strcmp(x->id, y->id) != 0 || memcmp(&x->t, &y->t, sizeof(x->t)) != 0 ||
			    memcmp(&x->r, &y->r, sizeof(x->r)) != 0 ||
			    memcmp(&x->s, &y->s, sizeof(x->s)) != 0 ||
			    memcmp(x->shear, y->shear, sizeof(x->shear)) != 0)
				return false;
		}
	}
	return true;
}

pose_channel *pose_channels_dup(const pose_channel *ch, int n, bool *nomem)
{
	pose_channel *c;

	*nomem = false;
	if (n == 0)
		return NULL;
	if (!(c = malloc(sizeof(*c) * (size_t)n))) {
		*nomem = true;
		return NULL;
	}
	memcpy(c, ch, sizeof(*c) * (size_t)n);
	return c;
}
