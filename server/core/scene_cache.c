/*
 * scene_cache.c: what a scene hosts beside its nodes, held through
 * pointers so that the scene's own files never see inside: its poses
 * (pose.c), its SVG assets (asset.c), its skeletons' clips (skel_clips.c,
 * made on the first add) and the cache of its draw order (draw_cache.c,
 * filled by draw.c). See scene_cache.h.
 *
 * This is the one scene file that names those modules. It makes and frees
 * them and hands them out; it never reads or writes a node, and it calls
 * none of draw.c: the scene marks the draw order stale through its draw
 * clock alone (draw_stale in scene_internal.h).
 */
#include "scene_cache.h"

#include "asset.h"
#include "draw_cache.h"
#include "err.h"
#include "pose.h"
#include "scene_ik.h"
#include "scene_internal.h"
#include "skel_clips.h"

#include <stddef.h>

int sc_caches_new(scene *s)
{
	/* All three are tried even when one fails, in this order, as
	 * scene_new always did: a run that injects allocation failures
	 * (tests/test_oom.c) sees the same allocations either way. */
	s->poses = pose_set_new();
	s->draw = draw_cache_new();
	s->assets = asset_set_new();
	if (!s->poses || !s->draw || !s->assets) {
		sc_caches_free(s);
		return RIGD_E_NOMEM;
	}
	s->draw_clock = 1;
	return 0;
}

void sc_caches_free(scene *s)
{
	pose_set_free(s->poses);
	draw_cache_free(s->draw);
	asset_set_free(s->assets);
	skel_set_free(s->skels);
	s->skels = NULL;
	s->skel_clock++;
	scene_ik_free(s);
	s->poses = NULL;
	s->draw = NULL;
	s->assets = NULL;
}

pose_set *scene_poses(scene *s)
{
	return s->poses;
}

const pose_set *scene_poses_c(const scene *s)
{
	return s->poses;
}

asset_set *scene_assets(scene *s)
{
	return s->assets;
}

const asset_set *scene_assets_c(const scene *s)
{
	return s->assets;
}

draw_cache *sc_draw_cache(const scene *s)
{
	return s->draw;
}

uint64_t sc_draw_clock(const scene *s)
{
	return s->draw_clock;
}

const skel_set *scene_skels(const scene *s)
{
	return s->skels;
}

int scene_skel_add(scene *s, skel_clips *k)
{
	if (!s->skels && !(s->skels = skel_set_new())) {
		skel_clips_free(k);
		return RIGD_E_NOMEM;
	}
	s->skel_clock++;
	return skel_set_add(s->skels, k);
}

void scene_skel_remove(scene *s, const char *file)
{
	s->skel_clock++;
	skel_set_remove(s->skels, file);
}
