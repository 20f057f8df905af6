/*
 * asset.c: a scene's assets as the edit layer sees them (asset.h): per
 * file, the ids a layer may name in it, sorted for binary search; and the
 * table of asset kinds.
 *
 * Never touches the scene's nodes or the bytes of an asset.
 */
#include "asset.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>

/* One asset: its file name, its ids (one block, '\0' after each) and a
 * sorted index into them. */
typedef struct asset_entry {
	char *file;
	char *block;
	const char **ids;
	int n_ids;
} asset_entry;

struct asset_set {
	asset_entry *v;
	int n, cap;
};

static const struct {
	const char *name;
	const char *media_type;
} kinds[ASSET_KIND_COUNT_] = {
	[ASSET_SVG] = { "svg", "image/svg+xml" },
	[ASSET_PNG] = { "png", "image/png" },
	[ASSET_SPINE] = { "spine", "application/json" },
	[ASSET_SPINE_ATLAS] = { "spine-atlas", "text/plain; charset=utf-8" },
	[ASSET_DRAGONBONES] = { "dragonbones", "application/json" },
	[ASSET_DRAGONBONES_ATLAS] = { "dragonbones-atlas", "application/json" },
};

const char *asset_kind_name(int kind)
{
	return kind >= 0 && kind < ASSET_KIND_COUNT_ ? kinds[kind].name : NULL;
}

int asset_kind_parse(const char *name)
{
	for (int i = 0; name && i < ASSET_KIND_COUNT_; i++)
		if (!strcmp(kinds[i].name, name))
			return i;
	return -1;
}

const char *asset_kind_media_type(int kind)
{
	return kind >= 0 && kind < ASSET_KIND_COUNT_ ? kinds[kind].media_type : NULL;
}

asset_set *asset_set_new(void)
{
	return calloc(1, sizeof(asset_set));
}

static void entry_release(asset_entry *e)
{
	free(e->file);
	free(e->block);
	free(e->ids);
}

void asset_set_free(asset_set *as)
{
	if (!as)
		return;
	for (int i = 0; i < as->n; i++)
		entry_release(&as->v[i]);
	free(as->v);
	free(as);
}

int asset_set_count(const asset_set *as)
{
	return as->n;
}

static int find(const asset_set *as, const char *file)
{
	for (int i = 0; i < as->n; i++)
		if (!strcmp(as->v[i].file, file))
			return i;
	return -1;
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int asset_set_add(asset_set *as, const char *file, const char *ids, size_t len)
{
	asset_entry e = { 0 };
	int n = 0;

	if (find(as, file) >= 0)
		return 0;
	if (!ids) {
		ids = "";
		len = 0;
	}
	for (size_t i = 0; i < len; i++)
		n += ids[i] == '\n';
	if (as->n == as->cap) {
		int cap = as->cap ? 2 * as->cap : 4;
		asset_entry *v = realloc(as->v, sizeof(*v) * (size_t)cap);
		if (!v)
			return RIGD_E_NOMEM;
		as->v = v;
		as->cap = cap;
	}
	e.file = strdup(file);
	e.block = malloc(len + 1);
	e.ids = malloc(sizeof(*e.ids) * (size_t)(n ? n : 1));
	if (!e.file || !e.block || !e.ids) {
		entry_release(&e);
		return RIGD_E_NOMEM;
	}
	memcpy(e.block, ids, len);
	e.block[len] = '\0';
	for (size_t i = 0, start = 0; i < len; i++) {
		if (e.block[i] != '\n')
			continue;
		e.block[i] = '\0';
		e.ids[e.n_ids++] = e.block + start;
		start = i + 1;
	}
	qsort(e.ids, (size_t)e.n_ids, sizeof(*e.ids), cmp_id);
	as->v[as->n++] = e;
	return 0;
}

void asset_set_remove(asset_set *as, const char *file)
{
	int i = find(as, file);

	if (i < 0)
		return;
	entry_release(&as->v[i]);
	memmove(&as->v[i], &as->v[i + 1], sizeof(*as->v) * (size_t)(as->n - i - 1));
	as->n--;
}

bool asset_set_has(const asset_set *as, const char *file, const char *id, bool *has_file)
{
	int i = find(as, file);

	*has_file = i >= 0;
	if (i < 0)
		return false;
	return bsearch(&id, as->v[i].ids, (size_t)as->v[i].n_ids, sizeof(*as->v[i].ids), cmp_id) !=
	       NULL;
}
