/*
 * store_asset.c: the assets table (schema/005_assets.sql,
 * 007_asset_kinds.sql): rows of artwork, skeleton files, atlases and PNG
 * pages in and out. Statements are prepared per call: assets are written
 * once per import and read a few at a time, never on the edit path.
 *
 * Never interprets the bytes: the engine checks them (digest, sanitiser)
 * before they come here.
 */
#include "store_internal.h"

#include "core/err.h"

#include <string.h>

int store_asset_put(store *st, int64_t scene_id, const store_asset *a)
{
	static const char sql[] =
		"INSERT INTO assets (scene_id, file, seq, sha256, svg, ids) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
	static const char sql_kind[] =
		"INSERT INTO assets (scene_id, file, seq, sha256, svg, ids, kind)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
	const char *kind = a->kind ? a->kind : "svg";
	sqlite3_stmt *s = NULL;
	int rc, err = 0;

	if (!st->has_assets || (!st->has_asset_kinds && strcmp(kind, "svg"))) {
		sto_set_msg(st->errmsg, sizeof(st->errmsg),
			    st->has_assets ? "the schema has no asset kinds" : "the schema has no assets table",
			    NULL, NULL);
		return RIGD_E_STORAGE;
	}
	rc = sqlite3_prepare_v2(st->db, st->has_asset_kinds ? sql_kind : sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_text(s, 2, a->file, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, a->seq);
	sqlite3_bind_text(s, 4, a->sha256, -1, SQLITE_STATIC);
	sqlite3_bind_blob64(s, 5, a->svg ? a->svg : "", (sqlite3_uint64)a->bytes, SQLITE_STATIC);
	sqlite3_bind_text64(s, 6, a->ids ? a->ids : "", (sqlite3_uint64)a->ids_len, SQLITE_STATIC,
			    SQLITE_UTF8);
	if (st->has_asset_kinds)
		sqlite3_bind_text(s, 7, kind, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		err = RIGD_E_INTERNAL;
	else if (rc != SQLITE_DONE)
		err = sto_fail(st, rc);
	sqlite3_finalize(s);
	return err;
}

int store_assets(store *st, int64_t scene_id, const char *file, int64_t from_seq,
		 int64_t to_seq, bool with_data, store_asset_fn fn, void *ctx)
{
	static const char sql[] =
		"SELECT file, seq, sha256, length(svg), CASE WHEN ?5 THEN svg END,"
		" CASE WHEN ?5 THEN ids END, 'svg' FROM assets WHERE scene_id = ?1 AND seq >= ?2"
		" AND (?3 < 0 OR seq <= ?3) AND (?4 IS NULL OR file = ?4) ORDER BY seq, file";
	static const char sql_kind[] =
		"SELECT file, seq, sha256, length(svg), CASE WHEN ?5 THEN svg END,"
		" CASE WHEN ?5 THEN ids END, kind FROM assets WHERE scene_id = ?1 AND seq >= ?2"
		" AND (?3 < 0 OR seq <= ?3) AND (?4 IS NULL OR file = ?4) ORDER BY seq, file";
	sqlite3_stmt *s = NULL;
	int rc, err = 0;

	if (!st->has_assets)
		return 0;
	rc = sqlite3_prepare_v2(st->db, st->has_asset_kinds ? sql_kind : sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_int64(s, 2, from_seq);
	sqlite3_bind_int64(s, 3, to_seq);
	if (file)
		sqlite3_bind_text(s, 4, file, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 5, with_data ? 1 : 0);
	while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_asset a = {
			.file = (const char *)sqlite3_column_text(s, 0),
			.seq = sqlite3_column_int64(s, 1),
			.sha256 = (const char *)sqlite3_column_text(s, 2),
			.bytes = sqlite3_column_int64(s, 3),
			.kind = (const char *)sqlite3_column_text(s, 6),
		};
		if (with_data) {
			a.svg = sqlite3_column_blob(s, 4);
			a.ids = (const char *)sqlite3_column_text(s, 5);
			a.ids_len = (size_t)sqlite3_column_bytes(s, 5);
			if (!a.svg && a.bytes > 0)
				rc = SQLITE_NOMEM;
		}
		if (!a.file || !a.sha256 || !a.kind || rc == SQLITE_NOMEM) {
			err = RIGD_E_NOMEM;
			break;
		}
		err = fn(ctx, &a);
	}
	if (!err && rc != SQLITE_DONE)
		err = sto_fail(st, rc);
	sqlite3_finalize(s);
	return err;
}
