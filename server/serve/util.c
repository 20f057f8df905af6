/*
 * util.c: the clock, array growth, id lists and frames (see util.h).
 */
#include "util.h"

#include "core/err.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double serve_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *serve_grow(void *p, int *cap, int need, size_t size)
{
	int ncap;
	void *q;

	if (need <= *cap)
		return p;
	ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	q = realloc(p, (size_t)ncap * size);
	if (q)
		*cap = ncap;
	return q;
}

int idlist_add(struct idlist *l, const char *id)
{
	edit_id *v = serve_grow(l->v, &l->cap, l->n + 1, sizeof(edit_id));

	if (!v)
		return RIGD_E_NOMEM;
	l->v = v;
	snprintf(l->v[l->n++].s, sizeof(l->v[0].s), "%s", id);
	return 0;
}

void idlist_free(struct idlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(((const edit_id *)a)->s, ((const edit_id *)b)->s);
}

/* Sorts and removes duplicates. */
void idlist_unique(struct idlist *l)
{
	int w = 0;

	if (l->n < 2)
		return;
	qsort(l->v, (size_t)l->n, sizeof(edit_id), cmp_id);
	for (int i = 0; i < l->n; i++)
		if (w == 0 || strcmp(l->v[w - 1].s, l->v[i].s) != 0)
			l->v[w++] = l->v[i];
	l->n = w;
}

/* A frame (with net's head room) from a proto_buf; the buffer is emptied. */
char *serve_take_frame(proto_buf *b, size_t *len)
{
	*len = b->len;
	return proto_buf_take(b);
}

char *serve_copy_frame(const char *frame, size_t head, size_t len)
{
	char *copy = malloc(head + len + 1);

	if (copy)
		memcpy(copy, frame, head + len + 1);
	return copy;
}

/* Appends the decimal digits of 'v'. 0 or RIGD_E_NOMEM. */
int serve_append_i64(proto_buf *b, int64_t v)
{
	char num[24];
	int len = snprintf(num, sizeof(num), "%" PRId64, v);

	return proto_buf_append(b, num, (size_t)len);
}
