/*
 * store.h: the durable side of rigd, one SQLite database file.
 *
 * The database holds scenes, the append-only edit log (one row per accepted
 * batch, with its ops and their inverse as JSON text, and the ops again as
 * the engine's binary image for fast replay) and binary snapshots of
 * whole scenes taken every so many edits (schema/001_initial.sql says why).
 * This module moves rows in and out; it knows nothing of nodes or JSON, and
 * its files (store.c, store_open.c, store_fault.c) are the only ones that
 * include sqlite3.h. The engine (engine.h) gives the rows meaning.
 *
 * One writer process at a time: store_open takes an exclusive flock(2) on
 * the database file (independent of SQLite's own fcntl locks) and refuses
 * with RIGD_E_LOCKED while another process holds any lock on it. Readers
 * (rigd log, rigd check) may take a shared one instead: several at once,
 * but never alongside a writer. The schema is upgraded at
 * open (PRAGMA user_version); a database from a newer rigd is refused with
 * RIGD_E_DB_TOO_NEW. The journal is WAL with synchronous=FULL unless told
 * otherwise, and checkpoints run every so many WAL pages, so the WAL stays
 * bounded.
 *
 * Every call returns 0 or a negative RIGD_E_* code: RIGD_E_STORAGE for an
 * SQLite failure (store_errmsg says which), RIGD_E_NOMEM when out of memory.
 * A store is used from one thread.
 */
#ifndef RIGD_STORE_H
#define RIGD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store store;

typedef struct store_opts {
	bool sync_normal;         /* synchronous=NORMAL: a power loss may lose
	                             the last commits (never corrupts) */
	int busy_timeout_ms;      /* 0: 5000 */
	int checkpoint_pages;     /* checkpoint when the WAL reaches this many
	                             pages; 0: 1000 (4 MB at 4 KB pages) */
	int migrate_to;           /* 0: the latest schema. Tests and tools only:
	                             stop upgrading at this version. */
	bool fault_injection;     /* open through the fault VFS (store_fault) */
	int sync_delay_ms;        /* tests: each xSync waits this long first
	                             (through the fault VFS) */
	bool no_lock;             /* a second connection of the process that
	                             holds the lock (the commit writer's) */
	bool shared;              /* a shared lock: for processes that only read
	                             (they may still upgrade the schema, which
	                             SQLite serialises) */
} store_opts;

/* The defaults: FULL, 5 s busy timeout, 1000-page checkpoints. */
store_opts store_opts_default(void);

/* The schema version this build writes (the highest schema/NNN_*.sql). */
int store_schema_latest(void);

/*
 * Opens (creating if missing) the database at 'path', locks it for this
 * process and upgrades its schema. 'o' may be NULL for the defaults. Returns
 * the store, or NULL with *err set (may be NULL) to RIGD_E_LOCKED (another
 * process holds it), RIGD_E_DB_TOO_NEW, RIGD_E_IO (cannot open or create the
 * file, or it is not a rigd database), RIGD_E_STORAGE or RIGD_E_NOMEM, and
 * a one-line reason in 'msg' (may be NULL; 'msglen' bytes with its NUL).
 */
store *store_open(const char *path, const store_opts *o, int *err, char *msg, size_t msglen);

/* Checkpoints the WAL into the database, closes it and drops the lock. Any
 * open transaction is rolled back. Accepts NULL. */
void store_close(store *st);

/* The English message of the last SQLite failure on 'st' (never NULL). */
const char *store_errmsg(const store *st);

/* The schema version of the open database (PRAGMA user_version). */
int store_version(store *st);

/* --- transactions --- */

/* BEGIN IMMEDIATE. RIGD_E_INTERNAL if one is already open. */
int store_begin(store *st);
/* COMMIT. On failure the transaction is rolled back (nothing of it is in
 * the database) and RIGD_E_STORAGE (RIGD_E_NOMEM when SQLite ran out of
 * memory) is returned. */
int store_commit(store *st);
/* ROLLBACK of the open transaction, if any. Never fails. */
void store_rollback(store *st);
bool store_in_transaction(const store *st);

/* --- scenes --- */

typedef struct store_scene {
	int64_t id;
	const char *name;        /* valid during the callback */
	int64_t created_us;      /* microseconds since the Unix epoch */
	int64_t last_seq;        /* seq of its latest batch, 0 if none */
	int dims;                /* 3, or 2 for a 2D scene (schema 4) */
} store_scene;

/* Calls fn for every scene in name order. A non-zero return from fn stops
 * the walk and is returned. */
typedef int (*store_scene_fn)(void *ctx, const store_scene *sc);
int store_scenes(store *st, store_scene_fn fn, void *ctx);

/* Creates scene 'name'; *id gets its id. RIGD_E_SCENE_EXISTS if taken.
 * Outside a transaction it commits at once. */
int store_scene_create(store *st, const char *name, int64_t created_us, int64_t *id);
/* store_scene_create of a scene with 'dims' (2 or 3; RIGD_E_BAD_FIELD
 * otherwise; RIGD_E_STORAGE for 2 on a database kept below schema 4). */
int store_scene_create_dims(store *st, const char *name, int64_t created_us, int dims,
			    int64_t *id);

/* Deletes a scene with its log and snapshots. Outside a transaction it
 * commits at once. RIGD_E_UNKNOWN_SCENE if there is no such id. */
int store_scene_delete(store *st, int64_t id);

/* The seq of the scene's latest batch, 0 when it has none. */
int store_last_seq(store *st, int64_t scene_id, int64_t *seq);

/* --- the edit log --- */

enum store_edit_kind {
	STORE_EDIT = 0,
	STORE_UNDO = 1,          /* undoes batch 'target' */
	STORE_REDO = 2,          /* redoes batch 'target' */
};

/* One row of the log. Strings are borrowed (on append) or valid during the
 * callback (on read); ops and inverse are not NUL-terminated on read.
 * ops_bin is the engine's binary image of the same ops (schema 3), which
 * this module stores and returns without looking inside; NULL for rows
 * logged before it (and on append: store none). */
typedef struct store_edit {
	int64_t scene_id;
	int64_t seq;
	int64_t time_us;
	const char *client;
	bool has_client_seq;
	int64_t client_seq;
	int kind;                /* enum store_edit_kind */
	int64_t target;          /* 0 for STORE_EDIT */
	int n_ops;
	const char *ops;         /* JSON array */
	size_t ops_len;          /* bytes */
	const char *inverse;     /* JSON array */
	size_t inverse_len;      /* bytes */
	const void *ops_bin;     /* binary image of ops, or NULL */
	size_t ops_bin_len;      /* bytes */
} store_edit;

/* Appends a row (inside the caller's transaction, or committed at once
 * outside one). RIGD_E_INTERNAL if (scene, seq) or (scene, client,
 * client_seq) is taken: the engine checks both before. */
int store_edit_append(store *st, const store_edit *e);

/* Looks up the seq of the batch (client, client_seq) in a scene; *seq gets
 * 0 when there is none. */
int store_edit_lookup(store *st, int64_t scene_id, const char *client, int64_t client_seq,
		      int64_t *seq);

/*
 * Calls fn for every row of the scene with after_seq < seq <= to_seq, in seq
 * order (to_seq < 0: to the end). With want_inverse false the inverse is not
 * read (inverse NULL, inverse_len 0), which replay does not need. A non-zero
 * return from fn stops the walk and is returned.
 */
typedef int (*store_edit_fn)(void *ctx, const store_edit *e);
int store_edits(store *st, int64_t scene_id, int64_t after_seq, int64_t to_seq, bool want_inverse,
		store_edit_fn fn, void *ctx);

/* What store_edits_ex reads besides seq, n_ops and ops_bin. Replay asks for
 * none of it: it is bound by the cost of each row. */
enum store_edit_want {
	STORE_WANT_INVERSE = 1u << 0,  /* the inverse (else NULL, 0) */
	STORE_WANT_OPS_JSON = 1u << 1, /* the JSON ops of every row; without
	                                  it only of rows that have no ops_bin
	                                  (ops NULL, 0 for the others): replay
	                                  reads one form, never both */
	STORE_WANT_META = 1u << 2,     /* time_us, client, client_seq, kind and
	                                  target (else 0, "", none, 0, 0) */
};

/* store_edits reading what 'want' (enum store_edit_want bits) asks for.
 * store_edits(.., want_inverse, ..) is store_edits_ex with STORE_WANT_META,
 * STORE_WANT_OPS_JSON and, with want_inverse, STORE_WANT_INVERSE. */
int store_edits_ex(store *st, int64_t scene_id, int64_t after_seq, int64_t to_seq, unsigned want,
		   store_edit_fn fn, void *ctx);

/*
 * Calls fn(ctx, seq, kind, target) for the latest 'limit' batches of
 * 'client' in the scene, oldest first (the undo and redo history). A
 * non-zero return from fn stops the walk and is returned.
 */
typedef int (*store_history_fn)(void *ctx, int64_t seq, int kind, int64_t target);
int store_client_history(store *st, int64_t scene_id, const char *client, int limit,
			 store_history_fn fn, void *ctx);

/* --- snapshots --- */

typedef struct store_snapshot {
	int64_t scene_id;
	int64_t seq;             /* the state after batch 'seq' */
	int format;              /* version of the engine's encoding */
	int64_t n_nodes;
	uint64_t hash;           /* scene_hash of that state */
	const void *data;        /* valid during the callback */
	size_t len;              /* bytes */
} store_snapshot;

/* Stores a snapshot (inside the caller's transaction, or at once), replacing
 * one at the same seq. */
int store_snapshot_put(store *st, const store_snapshot *sn);

/* Calls fn with the latest snapshot of the scene at or before max_seq
 * (max_seq < 0: the latest of all), if there is one; returns fn's result, or
 * 0 when there is none (fn not called). */
typedef int (*store_snapshot_fn)(void *ctx, const store_snapshot *sn);
int store_snapshot_latest(store *st, int64_t scene_id, int64_t max_seq, store_snapshot_fn fn,
			  void *ctx);

/* Calls fn for every snapshot of the scene in seq order; with want_data
 * false, data is NULL and len its size. */
int store_snapshots(store *st, int64_t scene_id, bool want_data, store_snapshot_fn fn, void *ctx);

/* --- maintenance --- */

/* PRAGMA integrity_check and foreign_key_check. Calls fn (may be NULL) with
 * every problem line; returns 0 when there is none, RIGD_E_STORAGE
 * otherwise. */
typedef void (*store_report_fn)(void *ctx, const char *line);
int store_integrity_check(store *st, store_report_fn fn, void *ctx);

/* Copies the WAL into the database; with truncate, also empties the WAL
 * file (waits for nothing: fails with RIGD_E_STORAGE if it cannot). */
int store_checkpoint(store *st, bool truncate);

/* Checkpoints run by the store since open (the periodic ones included). */
uint64_t store_checkpoints(const store *st);

/* --- fault injection (tests) --- */

enum store_fault_op {
	STORE_FAULT_WRITE = 1u << 0,   /* xWrite on any file of the database */
	STORE_FAULT_SYNC = 1u << 1,    /* xSync */
};

enum store_fault_kind {
	STORE_FAULT_IOERR = 1,         /* SQLITE_IOERR_WRITE / _FSYNC */
	STORE_FAULT_FULL = 2,          /* SQLITE_FULL: the disk is full */
};

/*
 * Makes the calls in 'ops' (a mask of enum store_fault_op) succeed 'after'
 * more times and then fail with 'kind', every time, until store_fault_clear.
 * RIGD_E_INTERNAL unless the store was opened with fault_injection.
 */
int store_fault_set(store *st, unsigned ops, long after, int kind);
void store_fault_clear(store *st);
/* How many calls the fault VFS has failed since open. */
long store_fault_hits(const store *st);

/* --- assets (schema/005_assets.sql, 007_asset_kinds.sql) --- */

/* One asset row: artwork (or a skeleton file, an atlas, a PNG page)
 * stored with a scene by batch 'seq'. Strings and bytes are borrowed (in a
 * callback: valid during the call). */
typedef struct store_asset {
	const char *file;
	const char *kind;          /* asset_kind_name (core/asset.h); "svg" before schema 7 */
	int64_t seq;
	const char *sha256;        /* 64 lowercase hex digits */
	int64_t bytes;             /* length of svg */
	const void *svg;           /* NULL unless asked for */
	const char *ids;           /* element ids, one per line; NULL unless asked for */
	size_t ids_len;
} store_asset;

/* Deletes the rows of scene 'scene_id' after seq 'seq': its log rows, its
 * snapshots and the assets stored with those batches, inside the caller's
 * transaction (RIGD_E_INTERNAL without one). 0, RIGD_E_NOMEM,
 * RIGD_E_STORAGE; on error the caller rolls the transaction back. */
int store_rewind(store *st, int64_t scene_id, int64_t seq);

/* Inserts asset 'a' of scene 'scene_id' (inside the caller's transaction
 * or on its own). 0; RIGD_E_INTERNAL when the scene already has that file
 * (the primary key); RIGD_E_NOMEM, RIGD_E_STORAGE (also on a schema without
 * assets, opened with migrate_to, and for a kind other than "svg" on a
 * schema without kinds). */
int store_asset_put(store *st, int64_t scene_id, const store_asset *a);

/*
 * Calls fn with each asset of scene 'scene_id' with from_seq <= seq <=
 * to_seq (to_seq < 0: any) and, when 'file' is not NULL, that file name,
 * in (seq, file) order; with_data fills svg and ids. A non-zero return
 * from fn stops the walk and is returned. 0, RIGD_E_NOMEM, RIGD_E_STORAGE.
 * A schema without assets has none.
 */
typedef int (*store_asset_fn)(void *ctx, const store_asset *a);
int store_assets(store *st, int64_t scene_id, const char *file, int64_t from_seq,
		 int64_t to_seq, bool with_data, store_asset_fn fn, void *ctx);

/* --- cluster incarnations (schema 6) --- */

/* The incarnation of the cluster's scene that scene 'scene_id' is a copy of
 * (schema/006_scene_gens.sql) into *gen: 0 when it has none (never in a
 * cluster, or a schema without the table). 0, RIGD_E_NOMEM or
 * RIGD_E_STORAGE. */
int store_scene_gen(store *st, int64_t scene_id, int64_t *gen);

/* Records incarnation 'gen' (>= 1) for scene 'scene_id', replacing the one
 * it had. Outside a transaction it commits at once. 0, RIGD_E_BAD_FIELD
 * for gen < 1, RIGD_E_NOMEM, RIGD_E_STORAGE (also on a schema without the
 * table). */
int store_scene_set_gen(store *st, int64_t scene_id, int64_t gen);

#endif
