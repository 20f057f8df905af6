/*
 * store_open.c: opening a database (the process lock, the connection and
 * its pragmas, the identity check, the schema migrations) and closing it.
 *
 * Refuses a file that is not a rigd database or is newer than this build,
 * and never leaves a migration half applied: each runs in its own
 * transaction.
 */
#include "store_internal.h"

#include "core/err.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The migrations, generated at build time from schema/NNN_*.sql. */
extern const int rigd_schema_count;
extern const int rigd_schema_versions[];
extern const char *const rigd_schema_names[];
extern const char *const rigd_schema_sql[];

#define RIGD_APPLICATION_ID 0x72696764 /* "rigd", set by 001_initial.sql */

/*
 * The periodic checkpoint, run after each commit that leaves the WAL at or
 * above the threshold (what wal_autocheckpoint does, counted). PASSIVE never
 * waits, and its failure must not turn the commit that triggered it into an
 * error: that commit is durable already.
 */
static int wal_hook(void *arg, sqlite3 *db, const char *dbname, int pages)
{
	store *st = arg;
	if (pages >= st->checkpoint_pages) {
		if (sqlite3_wal_checkpoint_v2(db, dbname, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) ==
		    SQLITE_OK)
			st->checkpoints++;
	}
	return SQLITE_OK;
}

store_opts store_opts_default(void)
{
	store_opts o = {0};
	o.busy_timeout_ms = 5000;
	o.checkpoint_pages = 1000;
	return o;
}

int store_schema_latest(void)
{
	return rigd_schema_count ? rigd_schema_versions[rigd_schema_count - 1] : 0;
}

/* Applies every migration above 'from' up to 'to', each in its own
 * transaction. */
static int migrate(store *st, int from, int to)
{
	for (int i = 0; i < rigd_schema_count; i++) {
		int v = rigd_schema_versions[i];
		if (v <= from || v > to)
			continue;
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v);
		/* Each migration is its own transaction, never nested. */
		assert(sqlite3_get_autocommit(st->db));
		int err = sto_exec(st, "BEGIN IMMEDIATE");
		/* Another reader holding a shared lock may have upgraded the
		 * file since it was first read: look again inside the lock. */
		int64_t now = 0;
		if (!err)
			err = sto_query_int(st, "PRAGMA user_version", &now);
		if (!err && now < v) {
			err = sto_exec(st, rigd_schema_sql[i]);
			if (!err)
				err = sto_exec(st, pragma);
		}
		if (!err)
			err = sto_exec(st, "COMMIT");
		if (err) {
			char why[256];
			snprintf(why, sizeof(why), "%s", st->errmsg);
			snprintf(st->errmsg, sizeof(st->errmsg), "migration %s: %.200s",
				 rigd_schema_names[i], why);
			if (!sqlite3_get_autocommit(st->db))
				sto_exec(st, "ROLLBACK");
			return err;
		}
	}
	return 0;
}

/* Checks that the file is an empty database or one of ours, and how old. */
static int check_identity(store *st, int64_t *version)
{
	int64_t app = 0, objects = 0;
	int err = sto_query_int(st, "PRAGMA user_version", version);
	if (!err)
		err = sto_query_int(st, "PRAGMA application_id", &app);
	if (!err)
		err = sto_query_int(st, "SELECT count(*) FROM sqlite_schema", &objects);
	if (err)
		return err == RIGD_E_NOMEM ? err : RIGD_E_IO; /* e.g. "file is not a database" */
	if (*version == 0 && objects == 0 && app == 0)
		return 0; /* a new, empty database */
	if (app != RIGD_APPLICATION_ID) {
		snprintf(st->errmsg, sizeof(st->errmsg), "not a rigd database (application_id %lld)",
			 (long long)app);
		return RIGD_E_IO;
	}
	if (*version > store_schema_latest()) {
		snprintf(st->errmsg, sizeof(st->errmsg),
			 "schema version %lld is newer than this rigd's %d", (long long)*version,
			 store_schema_latest());
		return RIGD_E_DB_TOO_NEW;
	}
	return 0;
}

/*
 * The process lock, taken before SQLite reads a byte (a recovering server
 * must not race another process's recovery): shared or exclusive flock(2)
 * on st->lock_fd. The descriptor stays open until after sqlite3_close:
 * closing any descriptor of the file drops the process's fcntl locks,
 * SQLite's included. 0, RIGD_E_LOCKED or RIGD_E_IO with 'msg' set.
 */
static int lock_file(store *st, const char *path, bool shared, char *msg, size_t msglen)
{
	assert(st->lock_fd < 0);
	st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (st->lock_fd < 0) {
		sto_set_msg(msg, msglen, "cannot open '%s': %s", path, strerror(errno));
		return RIGD_E_IO;
	}
	if (flock(st->lock_fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
		bool busy = errno == EWOULDBLOCK;
		sto_set_msg(msg, msglen,
			    busy ? "'%s' is in use by another process%s" : "cannot lock '%s': %s", path,
			    busy ? "" : strerror(errno));
		return busy ? RIGD_E_LOCKED : RIGD_E_IO;
	}
	return 0;
}

/* Sets the connection's pragmas and checks that WAL mode took. 0 or an
 * error with st->errmsg set. */
static int set_pragmas(store *st, const store_opts *opts)
{
	/* Reads (loading and replaying a log) go through a memory map of up
	 * to 256 MB instead of a read() per page, and 16 MB of page cache. */
	char pragmas[384];
	snprintf(pragmas, sizeof(pragmas),
		 "PRAGMA journal_mode = WAL; PRAGMA synchronous = %s; PRAGMA foreign_keys = ON;"
		 " PRAGMA journal_size_limit = %lld; PRAGMA temp_store = MEMORY;"
		 " PRAGMA cache_size = -16384; PRAGMA mmap_size = 268435456;",
		 opts->sync_normal ? "NORMAL" : "FULL", (long long)opts->checkpoint_pages * 4 * 4096);
	int e = sto_exec(st, pragmas);
	int64_t wal = 0;
	if (!e) {
		sqlite3_stmt *s = NULL;
		/* journal_mode answers with the mode it got; anything but "wal"
		 * means the file system cannot do WAL (no shared memory). */
		if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode", -1, &s, NULL) == SQLITE_OK &&
		    sqlite3_step(s) == SQLITE_ROW) {
			const char *mode = (const char *)sqlite3_column_text(s, 0);
			wal = mode && strcmp(mode, "wal") == 0;
		}
		if (!wal && sto_is_nomem(sqlite3_errcode(st->db)))
			e = sto_fail(st, SQLITE_NOMEM);
		sqlite3_finalize(s);
		if (!wal && !e) {
			e = RIGD_E_IO;
			snprintf(st->errmsg, sizeof(st->errmsg), "cannot use WAL journal mode");
		}
	}
	return e;
}

store *store_open(const char *path, const store_opts *o, int *err, char *msg, size_t msglen)
{
	store_opts opts = o ? *o : store_opts_default();
	if (opts.busy_timeout_ms <= 0)
		opts.busy_timeout_ms = 5000;
	if (opts.checkpoint_pages <= 0)
		opts.checkpoint_pages = 1000;
	int e = 0;
	store *st = calloc(1, sizeof(*st));
	if (!st) {
		e = RIGD_E_NOMEM;
		sto_set_msg(msg, msglen, "%s%s", "out of memory", "");
		goto fail;
	}
	st->lock_fd = -1;
	st->checkpoint_pages = opts.checkpoint_pages;

	e = opts.no_lock ? 0 : lock_file(st, path, opts.shared, msg, msglen);
	if (e)
		goto fail;
	if ((opts.fault_injection || opts.sync_delay_ms > 0) &&
	    !(st->fvfs = store_fault_vfs_new())) {
		e = RIGD_E_NOMEM;
		sto_set_msg(msg, msglen, "%s%s", "cannot register the fault VFS", "");
		goto fail;
	}
	if (st->fvfs)
		st->fvfs->sync_delay_ms = opts.sync_delay_ms;
	int rc = sqlite3_open_v2(path, &st->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
				 st->fvfs ? st->fvfs->name : NULL);
	if (rc != SQLITE_OK) {
		e = sto_is_nomem(rc) ? RIGD_E_NOMEM : RIGD_E_IO;
		sto_set_msg(msg, msglen, "cannot open '%s': %s", path,
			    st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, opts.busy_timeout_ms);

	int64_t version = 0;
	e = check_identity(st, &version);
	if (e) {
		sto_set_msg(msg, msglen, "'%s': %s", path, st->errmsg);
		goto fail;
	}

	e = set_pragmas(st, &opts);
	if (e) {
		sto_set_msg(msg, msglen, "'%s': %s", path, st->errmsg);
		goto fail;
	}
	sqlite3_wal_hook(st->db, wal_hook, st);

	int target = opts.migrate_to > 0 ? opts.migrate_to : store_schema_latest();
	if (target > store_schema_latest())
		target = store_schema_latest();
	if (version < target) {
		e = migrate(st, (int)version, target);
		if (e) {
			sto_set_msg(msg, msglen, "'%s': %s", path, st->errmsg);
			goto fail;
		}
		version = target;
	}
	st->has_ops_bin = version >= SCHEMA_OPS_BIN;
	st->has_dims = version >= SCHEMA_DIMS;
	st->has_assets = version >= SCHEMA_ASSETS;
	st->has_gens = version >= SCHEMA_GENS;
	st->has_asset_kinds = version >= SCHEMA_ASSET_KINDS;
	if (err)
		*err = 0;
	return st;

fail:
	if (err)
		*err = e;
	store_close(st);
	return NULL;
}

void store_close(store *st)
{
	if (!st)
		return;
	if (st->db) {
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		for (int i = 0; i < ST_COUNT_; i++)
			sqlite3_finalize(st->stmt[i]);
		/* Leave an empty WAL behind: the next open starts fast. Errors
		 * here lose nothing (the WAL is replayed at the next open). */
		sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		sqlite3_close_v2(st->db);
	}
	store_fault_vfs_free(st->fvfs);
	if (st->lock_fd >= 0)
		close(st->lock_fd); /* drops the flock */
	free(st);
}

const char *store_errmsg(const store *st)
{
	return st->errmsg;
}

int store_version(store *st)
{
	int64_t v = 0;
	if (sto_query_int(st, "PRAGMA user_version", &v))
		return -1;
	return (int)v;
}

