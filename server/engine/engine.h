/*
 * engine.h: the facade over scenes in memory and their durable log.
 *
 * The server and the offline commands (rigd log|apply|check) go through this
 * module only; it wires edit (apply with exact inverses), proto (the JSON of
 * log rows) and store (SQLite). It never touches sockets.
 *
 * One event-loop turn, as the server drives it:
 *
 *     for each decoded batch:   engine_submit / engine_undo / engine_redo
 *                               (applied in memory at once, given its seq)
 *     once:                     engine_commit   (one transaction for all)
 *     if it returned 0:         ack every batch submitted since the last
 *                               commit, with the seq and recomputed count
 *                               that submit reported
 *     else (RIGD_E_STORAGE):    answer every one of them with "storage";
 *                               the scenes are back at their last committed
 *                               state and their seqs will be reused
 *     for each touched scene:   engine_update   (world matrices, stamped
 *                               with the scene's seq) and broadcast
 *
 * Between turns the scenes in memory are exactly the committed state. Reads
 * (engine_scene, engine_at, engine_log) never see uncommitted batches except
 * engine_scene during a turn, which shows them applied: read after commit.
 * A failed commit leaves the engine serving reads; the next commit retries
 * the database, so writes resume by themselves once the fault clears.
 *
 * Storage layout (see schema/001_initial.sql): an append-only log, one row
 * per batch with its ops (as JSON and as a binary image, which replay reads;
 * schema/003_ops_bin.sql) and exact inverse, plus a snapshot of a scene every
 * so many logged ops, so opening a scene replays a bounded tail whatever the
 * length of its log.
 *
 * Every call runs on the caller's thread and does bounded work, except those
 * marked "long" (proportional to a scene or a log). Every action returns 0
 * or a negative RIGD_E_* code and changes nothing on error. Scene names
 * follow the node-id rule (scene_id_valid).
 */
#ifndef RIGD_ENGINE_H
#define RIGD_ENGINE_H

#include "core/edit.h"
#include "core/scene.h"
#include "store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENGINE_DEFAULT_SNAPSHOT_OPS 10000  /* logged ops between snapshots (at least) */
#define ENGINE_DEFAULT_UNDO_DEPTH 1000     /* batches a client can undo per scene */

typedef struct engine engine;

typedef struct engine_opts {
	bool sync_normal;        /* synchronous=NORMAL (default FULL: no
	                            acknowledged batch lost on power loss) */
	int checkpoint_pages;    /* WAL pages between checkpoints; 0: 1000 */
	int snapshot_ops;        /* snapshot a scene once this many ops (and at
	                            least its node count) were logged since its
	                            last snapshot; 0: the default */
	int undo_depth;          /* 0: ENGINE_DEFAULT_UNDO_DEPTH */
	int max_nodes;           /* per scene; 0: SCENE_DEFAULT_MAX_NODES */
	edit_limits limits;      /* for submitted batches (ops, id length) */
	bool fault_injection;    /* tests: allow engine_fault */
	int sync_delay_ms;       /* tests: each fsync of the database waits
	                            this long first (a slow disk) */
	bool read_only;          /* only read (rigd log, rigd check): a shared
	                            lock, so readers run side by side but never
	                            beside a writer; every call that would store
	                            something fails with RIGD_E_FORBIDDEN */
} engine_opts;

/* FULL sync, 1000-page checkpoints, the default snapshot interval, undo
 * depth, node limit and edit_limits_default(). */
engine_opts engine_opts_default(void);

/*
 * Opens the database at 'path' (created if missing, schema upgraded) and
 * loads every scene: its latest snapshot plus the log after it, world
 * matrices brought up to date and stamped with the scene's seq. Long.
 * Returns the engine, or NULL with *err (may be NULL) set to
 * RIGD_E_LOCKED (another process holds the database), RIGD_E_DB_TOO_NEW,
 * RIGD_E_IO (cannot open, or not a rigd database), RIGD_E_STORAGE (an
 * SQLite failure, or a log that does not replay), RIGD_E_NOMEM, and a one-line
 * reason in 'msg' (may be NULL; msglen bytes with its NUL). 'o' may be NULL.
 */
engine *engine_open(const char *path, const engine_opts *o, int *err, char *msg, size_t msglen);

/* Drops any uncommitted batches (nothing of them is stored; commit first to
 * keep them), checkpoints and closes the database. Accepts NULL. */
void engine_close(engine *e);

/* The reason for the last RIGD_E_STORAGE or RIGD_E_IO, for logs. */
const char *engine_errmsg(const engine *e);

/* --- scenes --- */

/* Creates an empty scene and stores it at once (durably, outside any turn).
 * RIGD_E_BAD_ID, RIGD_E_SCENE_EXISTS, RIGD_E_STORAGE. */
int engine_scene_create(engine *e, const char *name);
/* engine_scene_create of a scene with 'dims' 2 (every node in the xy plane,
 * scene_set_dims) or 3; RIGD_E_BAD_FIELD for any other value. The dims are
 * stored with the scene and never change. */
int engine_scene_create_dims(engine *e, const char *name, int dims);

/* The dims of scene 'name' (2 or 3), or RIGD_E_UNKNOWN_SCENE. */
int engine_scene_dims(const engine *e, const char *name);

/* The incarnation of the cluster's scene that scene 'name' is a copy of
 * (--redis; serve/lifecycle.c gives it meaning): >= 1, 0 when it has none,
 * RIGD_E_UNKNOWN_SCENE, or RIGD_E_STORAGE / RIGD_E_NOMEM when it cannot be
 * read. */
int64_t engine_scene_gen(engine *e, const char *name);

/* Records incarnation 'gen' (>= 1) for scene 'name', committed at once.
 * 0, RIGD_E_UNKNOWN_SCENE, RIGD_E_BAD_FIELD, RIGD_E_FORBIDDEN (read-only),
 * RIGD_E_INTERNAL inside the turn's transaction, RIGD_E_STORAGE,
 * RIGD_E_NOMEM; the scene is unchanged then. */
int engine_scene_set_gen(engine *e, const char *name, int64_t gen);

/*
 * Deletes a scene with its log and snapshots, at once. RIGD_E_UNKNOWN_SCENE,
 * RIGD_E_STORAGE; RIGD_E_INTERNAL when the scene has batches awaiting
 * engine_commit (commit, and ack, first). Long for a long log.
 */
int engine_scene_delete(engine *e, const char *name);

/* The scene in memory, or NULL. Valid until the scene is deleted or the
 * engine closed; read it, never change it (the engine owns it). */
const scene *engine_scene(const engine *e, const char *name);

/* The scene's last committed seq (>= 0), or RIGD_E_UNKNOWN_SCENE. */
int64_t engine_seq(const engine *e, const char *name);

/* One scene, for engine_scenes. */
typedef struct engine_scene_info {
	const char *name;          /* valid until the scene is deleted */
	int64_t seq;               /* last committed */
	int nodes;
} engine_scene_info;

/* Fills up to 'cap' entries of 'out' (may be NULL with cap 0) with every
 * scene in name order and returns the number of scenes. */
int engine_scenes(const engine *e, engine_scene_info *out, int cap);

/* --- one turn --- */

/* What a submitted batch got. Release with engine_ack_release. */
typedef struct engine_ack {
	int64_t seq;             /* its seq (the original one for a resend) */
	long recomputed;         /* world matrices it made stale */
	bool duplicate;          /* a resend of (client, client_seq): nothing
	                            was applied, 'changes' is empty */
	edit_result changes;     /* nodes created, changed, removed */
} engine_ack;

void engine_ack_init(engine_ack *a);
/* Frees the id lists; accepts NULL. */
void engine_ack_release(engine_ack *a);

/*
 * Applies batch 'b' to scene 'name' in memory and queues its log row for
 * the next engine_commit. Relative ops (rotate, move, ik) and angles are
 * logged as the absolute set ops they resolved to (edit_apply_resolve), so
 * the log holds only create, set, reparent and delete. A batch whose (client, client_seq) the scene has
 * already seen (committed, or queued in this turn) is not applied again:
 * *ack gets its original seq and duplicate = true. Otherwise the batch gets
 * the scene's next seq (gapless from 1), and *ack what it changed.
 * 'b' is borrowed; 'ack' (may be NULL) is initialised by the call.
 * Errors: RIGD_E_UNKNOWN_SCENE, every error of edit_apply_ex (with 'err',
 * may be NULL, naming the op, field and reason), RIGD_E_NOMEM; then nothing
 * changed and nothing is queued.
 */
int engine_submit(engine *e, const char *name, const edit_batch *b, engine_ack *ack,
		  edit_error *err);

/*
 * engine_submit with limits 'lim' (NULL: none but the scene's node limit)
 * instead of opts.limits, for batches the server builds itself rather than
 * decodes from a client, such as a glTF import, which may hold more ops than
 * a client's batch may.
 */
int engine_submit_limits(engine *e, const char *name, const edit_batch *b,
			 const edit_limits *lim, engine_ack *ack, edit_error *err);

/*
 * Undoes the latest batch of 'client' in scene 'name' that is not undone
 * yet, as a new batch (its stored inverse), queued like engine_submit; redo
 * re-applies the latest undone one. A new ordinary batch of the client
 * clears what it can redo. Up to opts.undo_depth batches per client and
 * scene. With has_client_seq the request is idempotent like a batch.
 * Errors: RIGD_E_UNKNOWN_SCENE; RIGD_E_BAD_FIELD (field "client") for an
 * anonymous client ""; RIGD_E_NOTHING_TO_UNDO; RIGD_E_UNDO_CONFLICT when a
 * later batch made it impossible (its node was deleted, its id taken): 'err'
 * then names the op and the underlying reason and the history is unchanged,
 * so the same undo is refused again until the client edits anew.
 */
int engine_undo(engine *e, const char *name, const char *client, bool has_client_seq,
		int64_t client_seq, engine_ack *ack, edit_error *err);
int engine_redo(engine *e, const char *name, const char *client, bool has_client_seq,
		int64_t client_seq, engine_ack *ack, edit_error *err);

/* What a batch of the log is: the "undo" or "redo" of a log line. The
 * values are those of the log line's kind as codec decodes it (enum
 * proto_log_kind; engine_line.c asserts that they agree), so a decoded
 * line's kind is passed as it is. */
enum engine_log_kind {
	ENGINE_LOG_EDIT = 0,
	ENGINE_LOG_UNDO = 1,       /* undoes batch 'target' */
	ENGINE_LOG_REDO = 2,       /* redoes batch 'target' */
};

/*
 * engine_submit_limits of a batch that a log says is of 'kind' (enum
 * engine_log_kind) undoing or redoing batch 'target' (a batch of another
 * process's log stream): queued and stored with that kind and target, so
 * the client's undo and redo stacks are those of the log's writer. An undo
 * or redo needs a client, and its target must be an earlier batch of the
 * same client that is not itself an undo: else RIGD_E_BAD_FIELD naming
 * "undo" or "redo" (or "client"), nothing queued. Other errors as
 * engine_submit_limits. 'b' is borrowed.
 */
int engine_submit_logged(engine *e, const char *name, const edit_batch *b, int kind,
			 int64_t target, const edit_limits *lim, engine_ack *ack, edit_error *err);

/*
 * The largest log line (bytes, newline included) a batch may have; 0 (the
 * default): no limit. With a limit, a batch whose line (engine_log) would be
 * longer is refused before it is queued with RIGD_E_TOO_LARGE naming the
 * limit (engine_submit*, engine_undo, engine_redo, engine_asset_submit; a
 * line of engine_import, which then imports nothing). A cluster sets its
 * log stream's entry size, so that no batch is committed that its owner
 * could not pass on.
 */
void engine_set_line_max(engine *e, size_t max);
size_t engine_line_max(const engine *e);

/* Batches queued since the last engine_commit (all scenes). */
int engine_pending(const engine *e);
/* Of those, the batches of scene 'name' (0 for an unknown scene). */
int engine_scene_pending(const engine *e, const char *name);

/*
 * Stores every queued batch in one transaction (and a snapshot of each
 * scene that is due one) and returns 0 once it committed: then, and only
 * then, may the batches be acknowledged. With nothing queued it returns 0 at
 * once, unless a failure (a bug, as out of memory never does it) left a
 * scene in memory inconsistent with its log: that scene is reloaded from
 * the database and RIGD_E_STORAGE returned. On RIGD_E_STORAGE (engine_errmsg
 * says why) nothing of the turn is stored, every scene is rolled back to its last committed state (exactly:
 * the queued inverses applied in reverse), their seqs will be reused, and
 * the queue is empty: answer every queued batch with "storage".
 */
int engine_commit(engine *e);

/*
 * The commit off the caller's thread. engine_writer_start opens a second
 * connection to the database at 'path' (the one engine_open was given)
 * and starts the commit writer, a thread that runs the commits that
 * engine_commit_begin hands it and then calls 'notify'(ctx) on its own
 * thread (it must be safe there: it only wakes the caller's loop). 0, or
 * an error with 'msg' saying why (the engine works on, committing on the
 * caller's thread). Without a writer, engine_commit_begin is engine_commit.
 *
 * engine_commit_begin takes every queued batch into one commit, run by the
 * writer; until engine_commit_poll reports it done, nothing may be
 * submitted (the queue is the commit's), but the engine may be read:
 * scenes, logs, undo lookups. It returns 0 (a commit is out, or there was
 * nothing to commit), or what engine_commit returns when the commit could
 * not even be handed over (then it is over, as engine_commit leaves it).
 *
 * engine_commit_poll: with no commit out, *done and 0. Else, when the
 * commit finished (or, with 'wait', once it has), *done and what
 * engine_commit would have returned, the engine left as it leaves it;
 * otherwise *done false and 0. engine_commit with a commit out waits for
 * it. engine_close waits for it too.
 */
int engine_writer_start(engine *e, const char *path, void (*notify)(void *ctx), void *ctx,
			char *msg, size_t msglen);
int engine_commit_begin(engine *e);
bool engine_commit_busy(const engine *e);
int engine_commit_poll(engine *e, bool wait, bool *done);
/* Commits handed to the writer and not yet finished (0 or 1 as the server
 * uses it). */
int engine_writer_queued(const engine *e);

/*
 * Brings the world matrices of scene 'name' up to date, stamping every
 * recomputed node with the scene's committed seq (scene_world_stamp), and
 * calls fn (may be NULL) for each contiguous preorder range recomputed, as
 * scene_update. Returns how many matrices were recomputed, or
 * RIGD_E_UNKNOWN_SCENE. Call after engine_commit.
 */
long engine_update(engine *e, const char *name, scene_range_fn fn, void *ctx);

/* --- history --- */

/*
 * The scene 'name' as it was right after batch 'seq' (0: empty), from the
 * nearest snapshot at or before it plus the log, world matrices up to date
 * and stamped with 'seq'. *out gets a new scene the caller frees with
 * scene_free. Long (bounded by the snapshot interval). Errors:
 * RIGD_E_UNKNOWN_SCENE, RIGD_E_BAD_SEQ (negative or after the last committed
 * seq), RIGD_E_STORAGE, RIGD_E_NOMEM.
 */
int engine_at(engine *e, const char *name, int64_t seq, scene **out);

/*
 * Takes scene 'name' back to right after batch 'seq' (0: empty): drops its
 * later log rows, the snapshots after 'seq' and the assets stored with the
 * dropped batches in one transaction, and reloads the scene from the
 * database (a new scene in memory: engine_scene returns another pointer;
 * clients' undo histories are rebuilt on next use). For a cluster process
 * whose batches turn out not to be the cluster's. Errors, with nothing
 * changed: RIGD_E_UNKNOWN_SCENE, RIGD_E_BAD_SEQ (negative or after the last
 * committed seq), RIGD_E_FORBIDDEN (read-only), RIGD_E_INTERNAL (the scene
 * has batches awaiting the commit), RIGD_E_STORAGE, RIGD_E_NOMEM; when the
 * rows were dropped but the reload failed, RIGD_E_STORAGE with the scene
 * marked to reload at the next commit. Long.
 */
int engine_rewind(engine *e, const char *name, int64_t seq);

/*
 * Calls fn with each committed batch of scene 'name' with from <= seq <= to
 * (to < 0: to the last) as one NDJSON line (proto_encode_log_line, newline
 * included; 'line' valid during the call), in seq order. A non-zero return
 * from fn stops the walk and is returned. Errors: RIGD_E_UNKNOWN_SCENE,
 * RIGD_E_STORAGE, RIGD_E_NOMEM. Long.
 */
typedef int (*engine_line_fn)(void *ctx, const char *line, size_t len);
int engine_log(engine *e, const char *name, int64_t from, int64_t to, engine_line_fn fn,
	       void *ctx);

/*
 * Replays an NDJSON log ('len' bytes of lines as engine_log writes them;
 * blank lines are skipped) into scene 'name', which must exist and be empty
 * (no nodes, no seq, nothing queued). Seqs must run 1, 2, 3...; each batch
 * keeps its time, client and client_seq. All or nothing, in its own
 * transaction, independent of the current turn: on success the scene holds
 * the replayed state (world matrices bit-identical to the source's at the
 * same seq) and *n_batches (may be NULL) the count. On error the scene is
 * still empty and *bad_line (may be NULL) gets the 1-based line that failed
 * (0 when none): RIGD_E_UNKNOWN_SCENE, RIGD_E_SCENE_NOT_EMPTY, the decode
 * errors of proto_decode_log_line, RIGD_E_BAD_SEQ (a seq out of order),
 * RIGD_E_BAD_FIELD (a (client, client_seq) seen twice), the errors of
 * edit_apply, RIGD_E_STORAGE, RIGD_E_NOMEM. Long.
 */
int engine_import(engine *e, const char *name, const char *ndjson, size_t len,
		  int64_t *n_batches, int *bad_line, edit_error *err);

/* --- assets (engine_asset.c; schema/005_assets.sql, 007_asset_kinds.sql) --- */

/* Assets one batch may store (a skeleton, its atlas and its pages). */
#define ENGINE_BATCH_ASSETS_MAX 34

/* One asset of any kind (core/asset.h) stored with a batch: its bytes as
 * its kind's reader checked them, and the ids a layer may name in it
 * (sorted, unique; none for an atlas or a page). Borrowed by
 * engine_assets_submit. */
typedef struct engine_asset {
	const char *file;
	int kind;                  /* enum asset_kind */
	const void *bytes;
	size_t len;
	char *const *ids;
	int n_ids;
} engine_asset;

/*
 * Applies batch 'b' to scene 'name' and queues it, as engine_submit_limits,
 * together with the assets a[0..n) (1 <= n <= ENGINE_BATCH_ASSETS_MAX,
 * each checked by its kind's reader before it comes here): all are stored
 * by the next engine_commit in the same transaction, under the batch's
 * seq, or none. Borrowed (copied). Errors, nothing changed or queued:
 * those of engine_submit_limits; RIGD_E_BAD_FIELD (field "file") for a
 * file name outside the asset rules, a kind that is none, two assets of
 * one name, or n out of range; RIGD_E_ASSET_EXISTS when the scene has one
 * of the files (stored, or queued in this turn); RIGD_E_NOMEM;
 * RIGD_E_STORAGE.
 */
int engine_assets_submit(engine *e, const char *name, const edit_batch *b, const engine_asset *a,
			 int n, const edit_limits *lim, engine_ack *ack, edit_error *err);

/* An SVG asset as the sanitiser (codec/svg.h, svg_sanitize) leaves it:
 * its bytes and the ids of its elements. Borrowed by engine_asset_submit. */
typedef struct engine_svg {
	const char *svg;           /* NUL-terminated */
	size_t len;                /* bytes, the NUL not counted */
	char *const *ids;          /* every element id, sorted, unique */
	int n_ids;
} engine_svg;

/* engine_assets_submit of the one SVG asset 'svg' (sanitised: svg.h)
 * under 'file'. */
int engine_asset_submit(engine *e, const char *name, const edit_batch *b, const char *file,
			const engine_svg *svg, const edit_limits *lim, engine_ack *ack,
			edit_error *err);

/* One asset of a scene, for engine_assets (strings valid during the call). */
typedef struct engine_asset_info {
	const char *file;
	int kind;                  /* enum asset_kind */
	const char *sha256;        /* 64 lowercase hex digits */
	int64_t bytes;
	int64_t seq;               /* the batch that stored it */
} engine_asset_info;
typedef int (*engine_asset_fn)(void *ctx, const engine_asset_info *a);

/*
 * Calls fn with each asset of scene 'name' as of seq 'at' (< 0: the last
 * committed; the assets stored by batches 1..at), in (seq, file) order. A
 * non-zero return from fn stops the walk and is returned. Errors:
 * RIGD_E_UNKNOWN_SCENE, RIGD_E_BAD_SEQ (after the last committed seq),
 * RIGD_E_STORAGE, RIGD_E_NOMEM.
 */
int engine_assets(engine *e, const char *name, int64_t at, engine_asset_fn fn, void *ctx);

/*
 * The bytes of asset 'file' of scene 'name' as of seq 'at' (< 0: the last
 * committed): *svg a malloc'd copy of *len bytes (NUL-terminated) the caller
 * frees, sha256 its digest, *kind (may be NULL) its enum asset_kind. Errors: RIGD_E_UNKNOWN_SCENE, RIGD_E_BAD_SEQ,
 * RIGD_E_UNKNOWN_ASSET (no such file then), RIGD_E_STORAGE, RIGD_E_NOMEM;
 * *svg is then NULL.
 */
int engine_asset_get(engine *e, const char *name, const char *file, int64_t at, char **svg,
		     size_t *len, char sha256[65], int *kind);

/*
 * Whether scene 'name' has, as of its last committed seq or queued in this
 * turn, asset 'file' (*has_file) with an element of id 'id' (*has_id; may
 * be NULL to ask about the file alone). 0, RIGD_E_UNKNOWN_SCENE,
 * RIGD_E_STORAGE, RIGD_E_NOMEM.
 */
int engine_asset_has(engine *e, const char *name, const char *file, const char *id,
		     bool *has_file, bool *has_id);

/* --- maintenance --- */

/*
 * Proves the database: PRAGMA integrity_check and foreign_key_check, then
 * for every scene a replay of its whole log from empty, checking that seqs
 * have no gaps, that every snapshot equals the replayed state at its seq
 * byte for byte, that every stored inverse equals the one the replay
 * computes, that every row's binary image (which the replay reads) holds
 * the same ops as its JSON, and that the scene in memory (snapshot plus
 * tail) has the same scene_hash as the full replay, and that every SVG
 * asset has its SHA-256, is what the sanitiser writes and lists the ids the
 * sanitiser finds. Calls fn (may be NULL) with one line per problem and one
 * summary line per scene. Returns 0 when all holds,
 * RIGD_E_STORAGE when something does not, RIGD_E_NOMEM. Long.
 */
typedef void (*engine_report_fn)(void *ctx, const char *line);
int engine_check(engine *e, engine_report_fn fn, void *ctx);

/* --- the binary image of a batch's ops --- */

/*
 * Every logged batch stores its ops twice: as JSON (for export and for
 * people) and as this image, which replay reads because cJSON parses ops
 * more slowly than they apply. Rows logged before schema 3 have no image and
 * replay from their JSON. The layout is in engine_opimage.c; the leading
 * byte is its format.
 */
#define ENGINE_OPS_BIN_FORMAT 1
/* Format 2: format 1 with 32-bit field masks and the draw fields of a 2D
 * node (layer, z, facing); written only for a batch that sets one of them,
 * so every other image stays byte for byte as before. Both decode. */
#define ENGINE_OPS_BIN_FORMAT_DRAW 2
/* Format 3: format 2 whose fields may also hold a 2D node's shear and
 * inherit mode (EDIT_F_SHEAR, EDIT_F_INHERIT); written only for a batch
 * that sets one of them. All three decode. */
#define ENGINE_OPS_BIN_FORMAT_SHAPE2D 3
/* Format 4: format 3 whose pose_set channels each carry a 2D node's shear
 * after s; written only for a batch with a pose_set of which a channel
 * has a shear other than +0 +0. All four decode. */
#define ENGINE_OPS_BIN_FORMAT_POSE_SHEAR 4

/* Encodes the ops of 'b' (not its client or client_seq); *out gets a
 * malloc'd image of *len bytes, which the caller frees. Returns 0,
 * RIGD_E_TOO_LARGE (a name, mesh or layer of 65535 bytes or more, a field
 * bit of EDIT_F_ANGLE or above other than the draw fields (EDIT_F_DRAW),
 * shear and inherit, an
 * op other than create, set, reparent or delete:
 * relative ops are resolved before they are logged) or RIGD_E_NOMEM; *out
 * is then unchanged. */
int engine_ops_encode_bin(const edit_batch *b, unsigned char **out, size_t *len);

/*
 * Decodes an image into *out (initialised by the call; anonymous), giving
 * back exactly the ops it was made from: every field bit for bit. Reads only
 * within the 'len' bytes at 'data', checking every length before it reads:
 * bytes that are not a whole image (truncated, trailing bytes, another
 * format, an unknown op kind or field bit, an id over SCENE_ID_MAX, a
 * string holding a NUL, a boolean other than 0 or 1, more ops than the
 * bytes can hold) are RIGD_E_IO; out of memory RIGD_E_NOMEM. On error *out
 * is empty. The ops are not validated against a scene: edit_apply does that.
 */
int engine_ops_decode_bin(const void *data, size_t len, edit_batch *out);

/* Statistics for /metrics. */
typedef struct engine_stats {
	uint64_t batches;        /* committed since open */
	uint64_t ops;            /* in those batches */
	uint64_t commits;        /* successful engine_commit with work */
	uint64_t failed_commits;
	uint64_t snapshots;      /* written since open */
	uint64_t checkpoints;    /* WAL checkpoints since open */
	double last_commit_s;    /* the last commit's transaction, wall time */
	uint64_t last_commit_batches;  /* and the batches it held */
} engine_stats;
void engine_get_stats(const engine *e, engine_stats *out);

/* Tests: see store_fault_set. RIGD_E_INTERNAL unless opened with
 * fault_injection. */
int engine_fault(engine *e, unsigned ops, long after, int kind);
void engine_fault_clear(engine *e);

#endif
