/*
 * scene_ids.c: node ids and the index from id to handle (see scene.h and
 * scene_ids.h): open addressing with linear probing over FNV-1a, removal
 * by backward shift, so there are no tombstones and a lookup never walks
 * past the next empty slot.
 *
 * Reads the scene's ids; never writes a node.
 */
#include "scene_ids.h"

#include "err.h"
#include "scene_array.h"
#include "scene_internal.h"

#include <string.h>

/* Slots of a new scene's index. */
#define IDS_INITIAL_CAP 16

bool scene_id_valid(const char *id)
{
	size_t n = 0;

	if (!id)
		return false;
	for (; id[n]; n++) {
		char c = id[n];

		if (n >= SCENE_ID_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ':' || c == '-'))
			return false;
	}
	return n > 0;
}

static uint32_t id_hash(const char *id)
{
	uint32_t h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (uint8_t)*id) * 16777619u;
	return h;
}

static int hash_lookup_slot(const scene *s, const char *id)
{
	uint32_t mask = (uint32_t)s->hash_cap - 1, i = id_hash(id) & mask;

	while (s->hash[i] >= 0 && strcmp(s->ids[s->hash[i]], id) != 0)
		i = (i + 1) & mask;
	return (int)i;
}

void sc_ids_insert(scene *s, int node)
{
	s->hash[hash_lookup_slot(s, s->ids[node])] = node;
}

/* Linear-probing removal with backward shift (no tombstones). */
void sc_ids_remove(scene *s, int node)
{
	uint32_t mask = (uint32_t)s->hash_cap - 1;
	uint32_t i = (uint32_t)hash_lookup_slot(s, s->ids[node]), j = i;

	s->hash[i] = -1;
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (s->hash[j] < 0)
			return;
		home = id_hash(s->ids[s->hash[j]]) & mask;
		/* Move j's entry into the hole at i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			s->hash[i] = s->hash[j];
			s->hash[j] = -1;
			i = j;
		}
	}
}

int sc_ids_resize(scene *s, int new_cap)
{
	int *h = sc_array_alloc(sizeof(int) * (size_t)new_cap), *old = s->hash;

	if (!h)
		return RIGD_E_NOMEM;
	memset(h, 0xff, sizeof(int) * (size_t)new_cap);
	s->hash = h;
	s->hash_cap = new_cap;
	for (int n = 0; n < s->nslots; n++)
		if (s->ids[n][0])
			sc_ids_insert(s, n);
	sc_array_free(old);
	return 0;
}

int sc_ids_init(scene *s)
{
	s->hash = sc_array_alloc(sizeof(int) * IDS_INITIAL_CAP);
	if (!s->hash)
		return RIGD_E_NOMEM;
	memset(s->hash, 0xff, sizeof(int) * IDS_INITIAL_CAP);
	s->hash_cap = IDS_INITIAL_CAP;
	return 0;
}

void sc_ids_free(scene *s)
{
	sc_array_free(s->hash);
	s->hash = NULL;
}

void sc_ids_clear(scene *s)
{
	memset(s->hash, 0xff, sizeof(int) * (size_t)s->hash_cap);
}

int scene_find(const scene *s, const char *id)
{
	if (!id || !id[0] || strlen(id) > SCENE_ID_MAX)
		return -1;
	return s->hash[hash_lookup_slot(s, id)];
}
