/*
 * store_gen.c: the scene_gens table (schema/006_scene_gens.sql): which
 * incarnation of a cluster's scene each local scene is a copy of. Read and
 * written a few times per connection to Redis, never on the edit path, so
 * statements are prepared per call.
 *
 * Knows nothing of Redis: the number is the serve layer's to give meaning.
 */
#include "store_internal.h"

#include "core/err.h"

int store_scene_gen(store *st, int64_t scene_id, int64_t *gen)
{
	static const char sql[] = "SELECT gen FROM scene_gens WHERE scene_id = ?1";
	sqlite3_stmt *s = NULL;
	int rc, err = 0;

	*gen = 0;
	if (!st->has_gens)
		return 0;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	sqlite3_bind_int64(s, 1, scene_id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*gen = sqlite3_column_int64(s, 0);
	else if (rc != SQLITE_DONE)
		err = sto_fail(st, rc);
	sqlite3_finalize(s);
	return err;
}

int store_scene_set_gen(store *st, int64_t scene_id, int64_t gen)
{
	static const char sql[] = "INSERT OR REPLACE INTO scene_gens (scene_id, gen) VALUES (?1, ?2)";
	sqlite3_stmt *s = NULL;
	int rc, err = 0;

	if (gen < 1)
		return RIGD_E_BAD_FIELD;
	if (!st->has_gens) {
		sto_set_msg(st->errmsg, sizeof(st->errmsg), "the schema has no scene_gens table", NULL,
			    NULL);
		return RIGD_E_STORAGE;
	}
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_int64(s, 2, gen);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		err = sto_fail(st, rc);
	sqlite3_finalize(s);
	return err;
}
