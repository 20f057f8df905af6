/*
 * store.c: rows in and out of one SQLite database (see store.h): the
 * prepared statements, transactions, scenes, the edit log, snapshots and
 * maintenance. Opening, upgrading and closing the database are in
 * store_open.c.
 *
 * With store_open.c and store_fault.c (the fault VFS for tests), the only
 * files that include sqlite3.h (through store_internal.h). It never
 * interprets the JSON, the binary images of ops or the snapshot bytes it
 * stores, and never calls up into the engine except through the callbacks
 * it is handed.
 */
#include "store_internal.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The store. */

static const char *const stmt_sql[ST_COUNT_] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_SCENES] = "SELECT s.id, s.name, s.created_us,"
		      " (SELECT max(e.seq) FROM edits e WHERE e.scene_id = s.id)"
		      " FROM scenes s ORDER BY s.name",
	[ST_SCENE_INSERT] = "INSERT INTO scenes (name, created_us) VALUES (?1, ?2)",
	[ST_SCENE_DELETE] = "DELETE FROM scenes WHERE id = ?1",
	[ST_LAST_SEQ] = "SELECT max(seq) FROM edits WHERE scene_id = ?1",
	[ST_EDIT_INSERT] = "INSERT INTO edits (scene_id, seq, time_us, client, client_seq, kind,"
			   " target, n_ops, ops, inverse)"
			   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_EDIT_INSERT_BIN] = "INSERT INTO edits (scene_id, seq, time_us, client, client_seq,"
			       " kind, target, n_ops, ops, inverse, ops_bin)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_EDIT_LOOKUP] = "SELECT seq FROM edits"
			   " WHERE scene_id = ?1 AND client = ?2 AND client_seq = ?3",
	/* ST_EDITS_n: see edits_sql. */
	[ST_HISTORY] = "SELECT seq, kind, target FROM"
		       " (SELECT seq, kind, target FROM edits WHERE scene_id = ?1 AND client = ?2"
		       "  ORDER BY seq DESC LIMIT ?3) ORDER BY seq",
	[ST_SNAP_PUT] = "INSERT OR REPLACE INTO snapshots (scene_id, seq, format, n_nodes, hash, data)"
			" VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_SNAP_LATEST] = "SELECT seq, format, n_nodes, hash, data FROM snapshots"
			   " WHERE scene_id = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1",
	[ST_SNAPS] = "SELECT seq, format, n_nodes, hash, data FROM snapshots"
		     " WHERE scene_id = ?1 ORDER BY seq",
	[ST_SNAPS_META] = "SELECT seq, format, n_nodes, hash, length(data) FROM snapshots"
			  " WHERE scene_id = ?1 ORDER BY seq",
	[ST_SCENES_DIMS] = "SELECT s.id, s.name, s.created_us,"
			   " (SELECT max(e.seq) FROM edits e WHERE e.scene_id = s.id), s.dims"
			   " FROM scenes s ORDER BY s.name",
	[ST_SCENE_INSERT_DIMS] = "INSERT INTO scenes (name, created_us, dims) VALUES (?1, ?2, ?3)",
};

/*
 * The SQL of the read of log rows with the enum store_edit_want bits
 * 'want'. Columns: seq, time_us, client, client_seq, kind, target, n_ops,
 * ops, inverse, ops_bin. What is not wanted is read as a constant, which
 * spares replay the cost of fetching it (it is bound by SQLite's cost per
 * row). Without STORE_WANT_OPS_JSON a row with a binary image comes without
 * its JSON. A database kept at an older schema (store_opts.migrate_to, for
 * tests and tools) has no ops_bin.
 */
static void edits_sql(char *out, size_t n, bool has_ops_bin, unsigned want)
{
	const char *ops = !has_ops_bin || (want & STORE_WANT_OPS_JSON)
				  ? "ops"
				  : "CASE WHEN ops_bin IS NULL THEN ops END";
	snprintf(out, n,
		 "SELECT seq, %s, n_ops, %s, %s, %s FROM edits"
		 " WHERE scene_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
		 (want & STORE_WANT_META) ? "time_us, client, client_seq, kind, target"
					  : "0, '', NULL, 0, NULL",
		 ops, (want & STORE_WANT_INVERSE) ? "inverse" : "NULL",
		 has_ops_bin ? "ops_bin" : "NULL");
}

void sto_set_msg(char *msg, size_t msglen, const char *fmt, const char *a, const char *b)
{
	if (msg && msglen)
		snprintf(msg, msglen, fmt, a, b);
}

/* True when SQLite result code 'rc' (extended or not) means that memory
 * ran out, in SQLite itself or in its VFS. The one place that decides it,
 * so that every call reports RIGD_E_NOMEM for it, never another code. */
bool sto_is_nomem(int rc)
{
	return (rc & 0xff) == SQLITE_NOMEM || rc == SQLITE_IOERR_NOMEM;
}

/* Records SQLite's message for the last failure and maps 'rc' to a code. */
int sto_fail(store *st, int rc)
{
	snprintf(st->errmsg, sizeof(st->errmsg), "%s", sqlite3_errmsg(st->db));
	return sto_is_nomem(rc) ? RIGD_E_NOMEM : RIGD_E_STORAGE;
}

/* Prepares statement 'id' once and reuses it: *out gets it. Returns 0,
 * RIGD_E_NOMEM or RIGD_E_STORAGE when it cannot be prepared (st->errmsg
 * says why), or RIGD_E_INTERNAL when it is already being stepped (a bug). */
static int stmt(store *st, enum stmt_id id, sqlite3_stmt **out)
{
	assert(id >= 0 && id < ST_COUNT_);
	*out = NULL;
	if (st->stmt_busy[id]) {
		snprintf(st->errmsg, sizeof(st->errmsg), "statement %d used re-entrantly", (int)id);
		return RIGD_E_INTERNAL;
	}
	if (!st->stmt[id]) {
		const char *sql = stmt_sql[id];
		char buf[512];
		if (id >= ST_EDITS_0 && id <= ST_EDITS_7) {
			edits_sql(buf, sizeof(buf), st->has_ops_bin, (unsigned)(id - ST_EDITS_0));
			sql = buf;
		}
		int rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
					    &st->stmt[id], NULL);
		if (rc != SQLITE_OK) {
			st->stmt[id] = NULL;
			return sto_fail(st, rc);
		}
	}
	*out = st->stmt[id];
	return 0;
}

static void done(store *st, enum stmt_id id)
{
	assert(st->stmt[id] != NULL);
	st->stmt_busy[id] = false;
	sqlite3_reset(st->stmt[id]);
	sqlite3_clear_bindings(st->stmt[id]);
}

/* Runs a statement that returns no rows. */
static int run(store *st, enum stmt_id id)
{
	sqlite3_stmt *s = st->stmt[id];
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		err = sto_fail(st, rc);
	done(st, id);
	return err;
}

/* Executes SQL text with no rows wanted (pragmas, migrations). */
int sto_exec(store *st, const char *sql)
{
	char *emsg = NULL;
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, &emsg);
	if (rc != SQLITE_OK) {
		snprintf(st->errmsg, sizeof(st->errmsg), "%s", emsg ? emsg : sqlite3_errstr(rc));
		sqlite3_free(emsg);
		return sto_is_nomem(rc) ? RIGD_E_NOMEM : RIGD_E_STORAGE;
	}
	return 0;
}

/* One integer from a one-row query. */
int sto_query_int(store *st, const char *sql, int64_t *out)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	else if (rc == SQLITE_DONE)
		*out = 0;
	else
		err = sto_fail(st, rc);
	sqlite3_finalize(s);
	return err;
}

/* --- transactions --- */

int store_begin(store *st)
{
	if (!sqlite3_get_autocommit(st->db)) {
		snprintf(st->errmsg, sizeof(st->errmsg), "a transaction is already open");
		return RIGD_E_INTERNAL;
	}
	sqlite3_stmt *s;
	int err = stmt(st, ST_BEGIN, &s);
	return err ? err : run(st, ST_BEGIN);
}

int store_commit(store *st)
{
	sqlite3_stmt *s;
	int err = stmt(st, ST_COMMIT, &s);
	if (!err)
		err = run(st, ST_COMMIT);
	if (err) {
		/* SQLite may have rolled back by itself (after an I/O error or a
		 * full disk); if not, the transaction must not linger. */
		store_rollback(st);
		return err;
	}
	return 0;
}

void store_rollback(store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return;
	sqlite3_stmt *s;
	if (stmt(st, ST_ROLLBACK, &s) == 0 && run(st, ST_ROLLBACK) == 0)
		return;
	sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

bool store_in_transaction(const store *st)
{
	return !sqlite3_get_autocommit(st->db);
}

/* --- scenes --- */

int store_scenes(store *st, store_scene_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	enum stmt_id id = st->has_dims ? ST_SCENES_DIMS : ST_SCENES;
	int prep_err = stmt(st, id, &s);
	if (prep_err)
		return prep_err;
	st->stmt_busy[id] = true;
	int rc, ret = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_scene sc = {
			.id = sqlite3_column_int64(s, 0),
			.name = (const char *)sqlite3_column_text(s, 1),
			.created_us = sqlite3_column_int64(s, 2),
			.last_seq = sqlite3_column_int64(s, 3),
			.dims = st->has_dims ? sqlite3_column_int(s, 4) : 3,
		};
		if (!sc.name) {
			ret = sto_fail(st, sqlite3_errcode(st->db));
			break;
		}
		ret = fn(ctx, &sc);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sto_fail(st, rc);
	done(st, id);
	return ret;
}

int store_scene_create(store *st, const char *name, int64_t created_us, int64_t *id)
{
	return store_scene_create_dims(st, name, created_us, 3, id);
}

int store_scene_create_dims(store *st, const char *name, int64_t created_us, int dims,
			    int64_t *id)
{
	sqlite3_stmt *s;
	enum stmt_id sid = st->has_dims ? ST_SCENE_INSERT_DIMS : ST_SCENE_INSERT;
	if (dims != 2 && dims != 3)
		return RIGD_E_BAD_FIELD;
	if (dims == 2 && !st->has_dims) {
		snprintf(st->errmsg, sizeof(st->errmsg), "schema version %d has no 2D scenes",
			 SCHEMA_DIMS - 1);
		return RIGD_E_STORAGE;
	}
	int prep_err = stmt(st, sid, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, created_us);
	if (st->has_dims)
		sqlite3_bind_int(s, 3, dims);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_DONE) {
		if (id)
			*id = sqlite3_last_insert_rowid(st->db);
	} else if (rc == SQLITE_CONSTRAINT_UNIQUE) {
		err = RIGD_E_SCENE_EXISTS;
		sto_fail(st, rc);
	} else {
		err = sto_fail(st, rc);
	}
	done(st, sid);
	return err;
}

int store_scene_delete(store *st, int64_t id)
{
	sqlite3_stmt *s;
	int prep_err = stmt(st, ST_SCENE_DELETE, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, id);
	int err = run(st, ST_SCENE_DELETE);
	if (!err && sqlite3_changes(st->db) == 0)
		err = RIGD_E_UNKNOWN_SCENE;
	return err;
}

int store_last_seq(store *st, int64_t scene_id, int64_t *seq)
{
	sqlite3_stmt *s;
	int prep_err = stmt(st, ST_LAST_SEQ, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, scene_id);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_ROW)
		*seq = sqlite3_column_int64(s, 0); /* NULL reads as 0 */
	else
		err = sto_fail(st, rc);
	done(st, ST_LAST_SEQ);
	return err;
}

/* --- the edit log --- */

int store_edit_append(store *st, const store_edit *e)
{
	/* A database kept at an older schema stores no image: its rows replay
	 * from the JSON, like every row logged before the image existed. */
	enum stmt_id id = e->ops_bin && st->has_ops_bin ? ST_EDIT_INSERT_BIN : ST_EDIT_INSERT;
	sqlite3_stmt *s;
	int prep_err = stmt(st, id, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, e->scene_id);
	sqlite3_bind_int64(s, 2, e->seq);
	sqlite3_bind_int64(s, 3, e->time_us);
	sqlite3_bind_text(s, 4, e->client, -1, SQLITE_STATIC);
	if (e->has_client_seq)
		sqlite3_bind_int64(s, 5, e->client_seq);
	else
		sqlite3_bind_null(s, 5);
	sqlite3_bind_int(s, 6, e->kind);
	if (e->kind != STORE_EDIT)
		sqlite3_bind_int64(s, 7, e->target);
	else
		sqlite3_bind_null(s, 7);
	sqlite3_bind_int(s, 8, e->n_ops);
	sqlite3_bind_text(s, 9, e->ops, (int)e->ops_len, SQLITE_STATIC);
	sqlite3_bind_text(s, 10, e->inverse, (int)e->inverse_len, SQLITE_STATIC);
	if (id == ST_EDIT_INSERT_BIN)
		sqlite3_bind_blob(s, 11, e->ops_bin, (int)e->ops_bin_len, SQLITE_STATIC);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc != SQLITE_DONE) {
		err = sto_fail(st, rc);
		if ((rc & 0xff) == SQLITE_CONSTRAINT)
			err = RIGD_E_INTERNAL;
	}
	done(st, id);
	return err;
}

int store_edit_lookup(store *st, int64_t scene_id, const char *client, int64_t client_seq,
		      int64_t *seq)
{
	sqlite3_stmt *s;
	int prep_err = stmt(st, ST_EDIT_LOOKUP, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_text(s, 2, client, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, client_seq);
	int rc = sqlite3_step(s);
	int err = 0;
	if (rc == SQLITE_ROW)
		*seq = sqlite3_column_int64(s, 0);
	else if (rc == SQLITE_DONE)
		*seq = 0;
	else
		err = sto_fail(st, rc);
	done(st, ST_EDIT_LOOKUP);
	return err;
}

int store_edits(store *st, int64_t scene_id, int64_t after_seq, int64_t to_seq, bool want_inverse,
		store_edit_fn fn, void *ctx)
{
	return store_edits_ex(st, scene_id, after_seq, to_seq,
			      STORE_WANT_META | STORE_WANT_OPS_JSON |
				      (want_inverse ? STORE_WANT_INVERSE : 0u),
			      fn, ctx);
}

int store_edits_ex(store *st, int64_t scene_id, int64_t after_seq, int64_t to_seq, unsigned want,
		   store_edit_fn fn, void *ctx)
{
	bool want_inverse = want & STORE_WANT_INVERSE;
	enum stmt_id id = ST_EDITS_0 + (int)(want & (STORE_WANT_INVERSE | STORE_WANT_OPS_JSON |
						     STORE_WANT_META));
	sqlite3_stmt *s;
	int prep_err = stmt(st, id, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_int64(s, 2, after_seq);
	sqlite3_bind_int64(s, 3, to_seq < 0 ? INT64_MAX : to_seq);
	st->stmt_busy[id] = true;
	int rc, ret = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_edit e = {
			.scene_id = scene_id,
			.seq = sqlite3_column_int64(s, 0),
			.time_us = sqlite3_column_int64(s, 1),
			.client = (const char *)sqlite3_column_text(s, 2),
			.has_client_seq = sqlite3_column_type(s, 3) != SQLITE_NULL,
			.client_seq = sqlite3_column_int64(s, 3),
			.kind = sqlite3_column_int(s, 4),
			.target = sqlite3_column_int64(s, 5),
			.n_ops = sqlite3_column_int(s, 6),
			.ops = (const char *)sqlite3_column_text(s, 7),
		};
		e.ops_len = (size_t)sqlite3_column_bytes(s, 7);
		if (want_inverse) {
			e.inverse = (const char *)sqlite3_column_text(s, 8);
			e.inverse_len = (size_t)sqlite3_column_bytes(s, 8);
		}
		bool has_bin = sqlite3_column_type(s, 9) != SQLITE_NULL;
		if (has_bin) {
			e.ops_bin = sqlite3_column_blob(s, 9);
			e.ops_bin_len = (size_t)sqlite3_column_bytes(s, 9);
			/* An empty blob reads as NULL: hand the engine an empty
			 * image, which it refuses as too short. */
			if (e.ops_bin_len == 0)
				e.ops_bin = "";
		}
		bool json_needed = (want & STORE_WANT_OPS_JSON) || !has_bin;
		if (!e.client || (json_needed && !e.ops) || (want_inverse && !e.inverse) ||
		    (has_bin && !e.ops_bin)) {
			/* Out of memory converting, or a NULL that the schema
			 * forbids: either way the row cannot be used. */
			ret = sto_is_nomem(sqlite3_errcode(st->db)) ? RIGD_E_NOMEM : RIGD_E_STORAGE;
			snprintf(st->errmsg, sizeof(st->errmsg), "unreadable log row %lld",
				 (long long)e.seq);
			break;
		}
		ret = fn(ctx, &e);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sto_fail(st, rc);
	done(st, id);
	return ret;
}

int store_client_history(store *st, int64_t scene_id, const char *client, int limit,
			 store_history_fn fn, void *ctx)
{
	sqlite3_stmt *s;
	int prep_err = stmt(st, ST_HISTORY, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_text(s, 2, client, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, limit);
	st->stmt_busy[ST_HISTORY] = true;
	int rc, ret = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ret = fn(ctx, sqlite3_column_int64(s, 0), sqlite3_column_int(s, 1),
			 sqlite3_column_int64(s, 2));
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sto_fail(st, rc);
	done(st, ST_HISTORY);
	return ret;
}

/* --- snapshots --- */

int store_snapshot_put(store *st, const store_snapshot *sn)
{
	sqlite3_stmt *s;
	int prep_err = stmt(st, ST_SNAP_PUT, &s);
	if (prep_err)
		return prep_err;
	int64_t hash;
	memcpy(&hash, &sn->hash, sizeof(hash)); /* SQLite integers are signed */
	sqlite3_bind_int64(s, 1, sn->scene_id);
	sqlite3_bind_int64(s, 2, sn->seq);
	sqlite3_bind_int(s, 3, sn->format);
	sqlite3_bind_int64(s, 4, sn->n_nodes);
	sqlite3_bind_int64(s, 5, hash);
	sqlite3_bind_blob64(s, 6, sn->len ? sn->data : "", sn->len, SQLITE_STATIC);
	return run(st, ST_SNAP_PUT);
}

/* Steps a snapshot query (columns seq, format, n_nodes, hash, data or its
 * length) and calls fn for each row. */
static int walk_snapshots(store *st, enum stmt_id id, int64_t scene_id, bool with_data,
			  store_snapshot_fn fn, void *ctx)
{
	sqlite3_stmt *s = st->stmt[id];
	st->stmt_busy[id] = true;
	int rc, ret = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		store_snapshot sn = {
			.scene_id = scene_id,
			.seq = sqlite3_column_int64(s, 0),
			.format = sqlite3_column_int(s, 1),
			.n_nodes = sqlite3_column_int64(s, 2),
		};
		int64_t hash = sqlite3_column_int64(s, 3);
		memcpy(&sn.hash, &hash, sizeof(hash));
		if (with_data) {
			sn.data = sqlite3_column_blob(s, 4);
			sn.len = (size_t)sqlite3_column_bytes(s, 4);
			if (!sn.data && sn.len == 0 && sto_is_nomem(sqlite3_errcode(st->db))) {
				ret = RIGD_E_NOMEM;
				break;
			}
		} else {
			sn.len = (size_t)sqlite3_column_int64(s, 4);
		}
		ret = fn(ctx, &sn);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = sto_fail(st, rc);
	done(st, id);
	return ret;
}

int store_snapshot_latest(store *st, int64_t scene_id, int64_t max_seq, store_snapshot_fn fn,
			  void *ctx)
{
	sqlite3_stmt *s;
	int prep_err = stmt(st, ST_SNAP_LATEST, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, scene_id);
	sqlite3_bind_int64(s, 2, max_seq < 0 ? INT64_MAX : max_seq);
	return walk_snapshots(st, ST_SNAP_LATEST, scene_id, true, fn, ctx);
}

int store_snapshots(store *st, int64_t scene_id, bool want_data, store_snapshot_fn fn, void *ctx)
{
	enum stmt_id id = want_data ? ST_SNAPS : ST_SNAPS_META;
	sqlite3_stmt *s;
	int prep_err = stmt(st, id, &s);
	if (prep_err)
		return prep_err;
	sqlite3_bind_int64(s, 1, scene_id);
	return walk_snapshots(st, id, scene_id, want_data, fn, ctx);
}

/* --- maintenance --- */

/* Runs a check pragma; every row that is not "ok" is a problem. */
static int check_pragma(store *st, const char *sql, store_report_fn fn, void *ctx, int *problems)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		char line[512];
		int n = sqlite3_column_count(s);
		size_t len = 0;
		line[0] = 0;
		for (int i = 0; i < n && len < sizeof(line); i++) {
			const char *v = (const char *)sqlite3_column_text(s, i);
			len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "",
						v ? v : "NULL");
		}
		if (strcmp(line, "ok") == 0)
			continue;
		(*problems)++;
		if (fn)
			fn(ctx, line);
	}
	int err = rc == SQLITE_DONE ? 0 : sto_fail(st, rc);
	sqlite3_finalize(s);
	return err;
}

int store_integrity_check(store *st, store_report_fn fn, void *ctx)
{
	int problems = 0;
	int err = check_pragma(st, "PRAGMA integrity_check", fn, ctx, &problems);
	if (!err)
		err = check_pragma(st, "PRAGMA foreign_key_check", fn, ctx, &problems);
	if (err)
		return err;
	return problems ? RIGD_E_STORAGE : 0;
}

int store_checkpoint(store *st, bool truncate)
{
	int rc = sqlite3_wal_checkpoint_v2(st->db, NULL,
					   truncate ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE,
					   NULL, NULL);
	if (rc != SQLITE_OK)
		return sto_fail(st, rc);
	st->checkpoints++;
	return 0;
}

uint64_t store_checkpoints(const store *st)
{
	return st->checkpoints;
}

/* --- fault injection --- */

int store_fault_set(store *st, unsigned ops, long after, int kind)
{
	if (!st->fvfs)
		return RIGD_E_INTERNAL;
	st->fvfs->ops = ops;
	st->fvfs->remaining = after < 0 ? 0 : after;
	st->fvfs->kind = kind == STORE_FAULT_FULL ? STORE_FAULT_FULL : STORE_FAULT_IOERR;
	st->fvfs->armed = true;
	return 0;
}

void store_fault_clear(store *st)
{
	if (st->fvfs)
		st->fvfs->armed = false;
}

long store_fault_hits(const store *st)
{
	return st->fvfs ? st->fvfs->hits : 0;
}
