/*
 * store_rewind.c: dropping the tail of a scene's log (engine_rewind): its
 * rows, the snapshots taken after the point it goes back to, and the
 * assets stored with the dropped batches. A cluster process does this when
 * batches it committed turn out not to be the cluster's (docs/deploy.md,
 * "A batch committed but not confirmed"). Statements are prepared per
 * call: a rewind is rare.
 */
#include "store_internal.h"

#include "core/err.h"

/* Runs one "DELETE ... WHERE scene_id = ?1 AND seq > ?2". */
static int drop_after(store *st, const char *sql, int64_t scene_id, int64_t seq)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);

	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_int64(s, 2, seq);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sto_fail(st, rc);
}

int store_rewind(store *st, int64_t scene_id, int64_t seq)
{
	int err;

	if (!store_in_transaction(st)) {
		sto_set_msg(st->errmsg, sizeof(st->errmsg), "a rewind runs inside a transaction",
			    NULL, NULL);
		return RIGD_E_INTERNAL;
	}
	err = drop_after(st, "DELETE FROM edits WHERE scene_id = ?1 AND seq > ?2", scene_id, seq);
	if (!err)
		err = drop_after(st, "DELETE FROM snapshots WHERE scene_id = ?1 AND seq > ?2",
				 scene_id, seq);
	if (!err && st->has_assets)
		err = drop_after(st, "DELETE FROM assets WHERE scene_id = ?1 AND seq > ?2", scene_id,
				 seq);
	return err;
}
