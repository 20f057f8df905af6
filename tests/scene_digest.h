/*
 * scene_digest.h: what the fuzz targets (tests/fuzz/) and the allocation
 * failure test (test_oom.c) share to tell whether a scene changed: FNV-1a
 * mixing, every stored property of a node mixed in, and the handles of the
 * ids an edit result names. Header only, static inline: each user is one
 * translation unit.
 */
#ifndef RIGD_TESTS_SCENE_DIGEST_H
#define RIGD_TESTS_SCENE_DIGEST_H

#include "core/edit.h"
#include "core/scene.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DIGEST_SEED 14695981039346656037ull

static inline uint64_t digest_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* A string with its terminator; NULL mixes as one 0xff byte. */
static inline uint64_t digest_mix_str(uint64_t h, const char *s)
{
	return s ? digest_mix(h, s, strlen(s) + 1) : digest_mix(h, "\xff", 1);
}

/* Every stored property of a node: channels, bounds, mesh, name, kind,
 * camera, visibility, layer, z, facing, shear, inherit. */
static inline uint64_t digest_mix_props(uint64_t h, const node_props *p)
{
	h = digest_mix(h, &p->t, sizeof(p->t));
	h = digest_mix(h, &p->r, sizeof(p->r));
	h = digest_mix(h, &p->s, sizeof(p->s));
	h = digest_mix(h, &p->pivot, sizeof(p->pivot));
	h = digest_mix(h, &p->has_bounds, sizeof(p->has_bounds));
	if (p->has_bounds)
		h = digest_mix(h, &p->bounds, sizeof(p->bounds));
	h = digest_mix_str(h, p->mesh);
	h = digest_mix_str(h, p->name);
	h = digest_mix(h, &p->kind, sizeof(p->kind));
	h = digest_mix(h, &p->fov_deg, sizeof(p->fov_deg));
	h = digest_mix(h, &p->znear, sizeof(p->znear));
	h = digest_mix(h, &p->zfar, sizeof(p->zfar));
	h = digest_mix(h, &p->visible, sizeof(p->visible));
	h = digest_mix_str(h, p->layer);
	h = digest_mix(h, &p->z_right, sizeof(p->z_right));
	h = digest_mix(h, &p->z_left, sizeof(p->z_left));
	h = digest_mix(h, &p->facing, sizeof(p->facing));
	h = digest_mix(h, p->shear, sizeof(p->shear));
	return digest_mix(h, &p->inherit, sizeof(p->inherit));
}

/* The handles of those of the 'n' ids that still exist, into 'out';
 * returns how many. */
static inline int digest_live_handles(const scene *s, const edit_id *ids, int n, int *out)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		int node = scene_find(s, ids[i].s);

		if (node >= 0)
			out[k++] = node;
	}
	return k;
}

#endif
