/*
 * gltf_names.c: sets of names for the glTF import and export (see
 * gltf_internal.h): which ids and mesh references are taken, and the next
 * free "-2", "-3", ... suffix for a name. Open addressing in one allocation
 * sized up front, so no entry ever moves and no pointer to one goes stale.
 * It reads no input of its own and never changes a scene.
 */
#include "gltf_internal.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* Room for 'n' keys at load below one half. */
int gltf_sset_init(gltf_sset *set, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n + 2) {
		if (cap > SIZE_MAX / 4 / sizeof(gltf_sset_entry))
			return RIGD_E_NOMEM;
		cap *= 2;
	}
	set->slots = calloc(cap, sizeof(gltf_sset_entry));
	set->mask = cap - 1;
	return set->slots ? 0 : RIGD_E_NOMEM;
}

/* Frees every key and the slots; accepts a set never initialised (zeroed). */
void gltf_sset_free(gltf_sset *set)
{
	if (!set->slots)
		return;
	for (size_t i = 0; i <= set->mask; i++)
		free(set->slots[i].key);
	free(set->slots);
	set->slots = NULL;
}

/* The entry of 'key', or the empty slot where it belongs (key NULL). */
gltf_sset_entry *gltf_sset_slot(gltf_sset *set, const char *key)
{
	size_t i = (size_t)str_hash(key) & set->mask;

	while (set->slots[i].key && strcmp(set->slots[i].key, key) != 0)
		i = (i + 1) & set->mask;
	return &set->slots[i];
}

/* Inserts a copy of 'key' (its counter at 2) unless it is there already:
 * its entry, or NULL when out of memory (the set unchanged). */
gltf_sset_entry *gltf_sset_add(gltf_sset *set, const char *key)
{
	gltf_sset_entry *e = gltf_sset_slot(set, key);

	if (e->key)
		return e;
	if (!(e->key = strdup(key)))
		return NULL;
	e->next = 2;
	return e;
}

/*
 * Makes 'base' unique against 'set' (and the ids of 'existing', may be
 * NULL): 'base' itself when free, else base-2, base-3, ... with the base cut
 * so that the whole fits 'max_len' characters. Writes the result to 'out'
 * (max_len + 1 bytes) and records it. Each set may insert up to two keys per
 * call: size it for that.
 */
int gltf_make_unique(gltf_sset *set, const scene *existing, const char *base, size_t max_len,
		     char *out)
{
	gltf_sset_entry *be = gltf_sset_slot(set, base);
	bool in_scene = existing && scene_find(existing, base) >= 0;

	if (!be->key && !in_scene) {
		if (!gltf_sset_add(set, base))
			return RIGD_E_NOMEM;
		snprintf(out, max_len + 1, "%s", base);
		return 0;
	}
	if (!be->key && !(be = gltf_sset_add(set, base)))
		return RIGD_E_NOMEM;
	for (int k = be->next;; k++) {
		char suffix[16];
		size_t sl = (size_t)snprintf(suffix, sizeof(suffix), "-%d", k);
		size_t bl = strlen(base);

		if (bl > max_len - sl)
			bl = max_len - sl;
		memcpy(out, base, bl);
		memcpy(out + bl, suffix, sl + 1);
		if (!gltf_sset_slot(set, out)->key && !(existing && scene_find(existing, out) >= 0)) {
			if (!gltf_sset_add(set, out))
				return RIGD_E_NOMEM;
			be->next = k + 1;
			return 0;
		}
	}
}
