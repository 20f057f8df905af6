/*
 * draw_cache.c: the lifetime of a scene's draw-order cache (see
 * draw_cache.h). A scene makes one with itself and frees it with itself
 * (scene_cache.c); draw.c fills it.
 *
 * Allocates and frees; never reads a scene.
 */
#include "draw_cache.h"

#include <stdlib.h>

draw_cache *draw_cache_new(void)
{
	/* built_at 0 is older than any clock: the first read rebuilds. */
	return calloc(1, sizeof(draw_cache));
}

void draw_cache_free(draw_cache *d)
{
	if (!d)
		return;
	free(d->ids);
	free(d->next);
	free(d->keys);
	free(d->facing);
	free(d);
}
