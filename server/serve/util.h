/*
 * util.h: small helpers every serve module uses: the monotonic clock,
 * growing arrays, lists of node ids, and taking a frame out of a buffer.
 * No state of their own.
 */
#ifndef RIGD_SERVE_UTIL_H
#define RIGD_SERVE_UTIL_H

#include "codec/proto.h"
#include "core/edit.h"

#include <stddef.h>
#include <stdint.h>

/* A growable list of node ids. */
struct idlist {
	edit_id *v;
	int n, cap;
};

/* Seconds on the monotonic clock. */
double serve_now_s(void);

/*
 * Grows array 'p' of elements of 'size' bytes so it holds at least 'need'
 * (doubling from 8). Returns the array (maybe moved) with *cap updated, or
 * NULL when memory ran out (then 'p' and *cap are unchanged and 'p' is
 * still owned by the caller).
 */
void *serve_grow(void *p, int *cap, int need, size_t size);

/* Appends a copy of 'id'. 0, or RIGD_E_NOMEM with the list unchanged. */
int idlist_add(struct idlist *l, const char *id);
/* Frees the ids and empties the list. */
void idlist_free(struct idlist *l);
/* Sorts the list and removes duplicates. */
void idlist_unique(struct idlist *l);

/* A frame (with net's head room) from a proto_buf, its length in *len;
 * the buffer is emptied and the caller owns the frame. NULL when empty. */
char *serve_take_frame(proto_buf *b, size_t *len);

/* A malloc'd copy of 'frame': 'head' bytes of net's head room, 'len'
 * bytes of payload and the NUL after them. NULL when out of memory. */
char *serve_copy_frame(const char *frame, size_t head, size_t len);

/* Appends the decimal digits of 'v'. 0 or RIGD_E_NOMEM. */
int serve_append_i64(proto_buf *b, int64_t v);

#endif
