/*
 * scene_array.c: where a scene's per-handle arrays live in memory, and how
 * they grow (see scene_array.h).
 *
 * Memory. In a big scene an edit at a random place misses the cache on
 * every array it touches, and with 4 KiB pages the TLB as well: a 1M-node
 * scene spans some 100k pages. The large arrays are therefore allocated 2 MiB
 * aligned and offered to the kernel as transparent huge pages
 * (sc_array_alloc), which roughly halves the cost of such an edit.
 *
 * Never writes a node: growing copies the arrays as they are.
 */
#include "scene_array.h"

#include "err.h"
#include "scene_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/*
 * Allocates a per-node array, aligned to 64 bytes, or to 2 MiB and offered
 * to the kernel as transparent huge pages when it is at least that big (see
 * "Memory" above). The block comes from malloc, so that
 * allocation failures can be injected and counted as everywhere else: it
 * is over-allocated, the aligned start is handed out and the block's own
 * address is kept just before it for sc_array_free. Where huge pages are not
 * available (THP off, another OS) madvise fails or is absent and the array
 * simply stays on small pages. Returns NULL when out of memory.
 */
void *sc_array_alloc(size_t bytes)
{
	bool huge = bytes >= HUGE_PAGE_BYTES;
	size_t align = huge ? HUGE_PAGE_BYTES : 64;
	char *raw, *p;

	if (huge)
		bytes = (bytes + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
	raw = malloc(bytes + align + sizeof(void *));
	if (!raw)
		return NULL;
	p = raw + sizeof(void *);
	p += (align - (uintptr_t)p % align) % align;
	memcpy(p - sizeof(void *), &raw, sizeof(raw));
#ifdef MADV_HUGEPAGE
	if (huge)
		(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

/* Frees what sc_array_alloc returned; accepts NULL. */
void sc_array_free(void *p)
{
	void *raw;

	if (!p)
		return;
	memcpy(&raw, (char *)p - sizeof(void *), sizeof(raw));
	free(raw);
}

/* Grows one per-handle array from old_cap to new_cap elements; on failure
 * the old block stays in place, so a partly grown set of arrays is still
 * consistent with the old 'cap'. */
static int grow(void **p, size_t elem, int old_cap, int new_cap)
{
	void *q = sc_array_alloc(elem * (size_t)new_cap);

	if (!q)
		return RIGD_E_NOMEM;
	if (*p)
		memcpy(q, *p, elem * (size_t)old_cap);
	sc_array_free(*p);
	*p = q;
	return 0;
}

/* Grows every per-handle array to 'nc' elements. */
int sc_arrays_grow(scene *s, int nc)
{
	int oc = s->cap;

	if (grow((void **)&s->xf, XF_DOUBLES * sizeof(double), oc, nc) ||
	    grow((void **)&s->parent, sizeof(int), oc, nc) ||
	    grow((void **)&s->hot, sizeof(node_hot), oc, nc) ||
	    grow((void **)&s->nd, sizeof(node_data), oc, nc) ||
	    grow((void **)&s->ids, sizeof(*s->ids), oc, nc) ||
	    grow((void **)&s->order, sizeof(int), oc, nc) ||
	    grow((void **)&s->free_handles, sizeof(int), oc, nc))
		return RIGD_E_NOMEM;
	s->cap = nc;
	return 0;
}
