/*
 * store_internal.h: what the store's files share (store.c, the rows in and
 * out; store_open.c, opening, upgrading and closing the database).
 *
 * Private to server/engine/: the public interface is store.h. Functions
 * here carry the prefix sto_ so that they never read as part of it.
 */
#ifndef RIGD_STORE_INTERNAL_H
#define RIGD_STORE_INTERNAL_H

#include "store.h"
#include "store_fault.h"

#include <sqlite3.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The prepared statements, each prepared once and reused (sto_stmt). */
enum stmt_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SCENES,
	ST_SCENE_INSERT,
	ST_SCENE_DELETE,
	ST_LAST_SEQ,
	ST_EDIT_INSERT,
	ST_EDIT_INSERT_BIN,
	ST_EDIT_LOOKUP,
	ST_EDITS_0,               /* + enum store_edit_want bits: eight reads */
	ST_EDITS_7 = ST_EDITS_0 + 7,
	ST_HISTORY,
	ST_SNAP_PUT,
	ST_SNAP_LATEST,
	ST_SNAPS,
	ST_SNAPS_META,
	ST_SCENES_DIMS,           /* ST_SCENES and ST_SCENE_INSERT from schema 4 */
	ST_SCENE_INSERT_DIMS,
	ST_COUNT_
};

/* The first schema version whose edits table has ops_bin. */
#define SCHEMA_OPS_BIN 3
/* The first schema version whose scenes table has dims. */
#define SCHEMA_DIMS 4
/* The first schema version with the assets table. */
#define SCHEMA_ASSETS 5
/* The first schema version with the scene_gens table. */
#define SCHEMA_GENS 6
/* The first schema version whose assets table has kind. */
#define SCHEMA_ASSET_KINDS 7

/* The store: one connection, its process lock and its statements. */
struct store {
	sqlite3 *db;
	int lock_fd;
	store_fault_vfs *fvfs;
	sqlite3_stmt *stmt[ST_COUNT_];
	bool stmt_busy[ST_COUNT_];  /* stepping; a nested use is a bug */
	int checkpoint_pages;
	uint64_t checkpoints;
	bool has_ops_bin;           /* the schema has edits.ops_bin */
	bool has_dims;              /* the schema has scenes.dims */
	bool has_assets;            /* the schema has the assets table */
	bool has_asset_kinds;       /* and its kind column */
	bool has_gens;              /* the schema has the scene_gens table */
	char errmsg[256];
};

/* Copies a message with up to two string arguments into 'msg' (may be
 * NULL; msglen bytes with its NUL). */
void sto_set_msg(char *msg, size_t msglen, const char *fmt, const char *a, const char *b);

/* True when SQLite result code 'rc' (extended or not) means that memory
 * ran out, in SQLite itself or in its VFS. The one place that decides it,
 * so that every call reports RIGD_E_NOMEM for it, never another code. */
bool sto_is_nomem(int rc);

/* Records SQLite's message for the last failure and maps 'rc' to a code:
 * RIGD_E_NOMEM or RIGD_E_STORAGE. */
int sto_fail(store *st, int rc);

/* Executes SQL text with no rows wanted (pragmas, migrations). 0 or an
 * error with st->errmsg set. */
int sto_exec(store *st, const char *sql);

/* One integer from a one-row query into *out (0 when it has no row). 0
 * or an error with st->errmsg set. */
int sto_query_int(store *st, const char *sql, int64_t *out);

#endif
