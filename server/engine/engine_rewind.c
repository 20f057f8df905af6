/*
 * engine_rewind.c: taking a scene back to an earlier seq (engine_rewind,
 * see engine.h). The rows after it go in one transaction, then the scene
 * is built again from the database, as at start.
 */
#include "engine_internal.h"

#include "core/err.h"
#include "store.h"

#include <stdio.h>
#include <string.h>

int engine_rewind(engine *e, const char *name, int64_t seq)
{
	scene_rt *rt = eng_find_scene(e, name);
	int err;

	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	if (eng_writable(e, NULL))
		return RIGD_E_FORBIDDEN;
	if (seq < 0 || seq > rt->seq)
		return RIGD_E_BAD_SEQ;
	if (rt->n_pending || store_in_transaction(e->st)) {
		eng_set_errmsg(e, "scene '%s' has batches awaiting the commit", name);
		return RIGD_E_INTERNAL;
	}
	if (seq == rt->seq)
		return 0;
	if ((err = store_begin(e->st)) != 0 || (err = store_rewind(e->st, rt->id, seq)) != 0 ||
	    (err = store_commit(e->st)) != 0) {
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
		store_rollback(e->st);
		return err;
	}
	if ((err = eng_load_scene(e, rt)) != 0) {
		char keep[sizeof(e->errmsg)];

		/* The database is right; memory is not: the next commit
		 * reloads it (rollback_memory), or fails and tries again. */
		memcpy(keep, e->errmsg, sizeof(keep));
		rt->broken = true;
		eng_set_errmsg(e, "scene '%s' rewound to seq %lld but not reloaded: %s", name,
			       (long long)seq, keep);
		return RIGD_E_STORAGE;
	}
	return 0;
}
