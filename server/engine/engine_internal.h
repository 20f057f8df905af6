/*
 * engine_internal.h: what the engine's files share (engine.c, engine_snap.c,
 * engine_opimage.c, engine_undo.c, engine_log.c, engine_check.c).
 *
 * Private to server/engine/: nothing outside this folder includes it; the
 * public interface is engine.h. Functions declared here carry the prefix
 * eng_ so that they never read as part of that interface. It must never
 * include sqlite3.h or cJSON.h: the engine reaches them through store and
 * proto.
 */
#ifndef RIGD_ENGINE_INTERNAL_H
#define RIGD_ENGINE_INTERNAL_H

#include "engine.h"
#include "engine_bytes.h"

#include "codec/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The snapshot format (laid out in engine_snap.c) and its leading bytes. */
#define SNAP_FORMAT 1
/* Format 1 followed by the scene's poses; written only for a scene that
 * holds poses, so every other snapshot stays byte for byte as before. */
#define SNAP_FORMAT_POSES 2
/* Format 2 (the poses section always present) whose nodes may carry the
 * drawing of a 2D node (layer, z, facing); written only for a scene with
 * a node that has one of them, so every other snapshot stays as before. */
#define SNAP_FORMAT_DRAW 3
/* Format 4: format 3 whose nodes may also carry a 2D node's shear and
 * inherit mode; written only for a scene with a node that has either. */
#define SNAP_FORMAT_SHAPE2D 4
/* Format 5: format 4 whose pose channels each carry a 2D node's shear;
 * written only for a scene with a pose channel whose shear is not +0 +0. */
#define SNAP_FORMAT_POSE_SHEAR 5
#define SNAP_MAGIC "RIGS"

/* The format a snapshot encoded by eng_snap_encode carries (its bytes 4..7). */
uint32_t eng_snap_format(const bytes *snap);

/* One client's undo and redo stacks in one scene: seqs of batches, newest
 * last. Undoing entry X applies X's inverse; redoing entry X re-applies X's
 * ops. Built from the log on first use, then kept up to date. */
typedef struct hist {
	char client[SCENE_ID_MAX + 1];
	int64_t *undo;
	int n_undo, cap_undo;
	int64_t *redo;
	int n_redo, cap_redo;
	struct hist *next;        /* chain in the scene's table */
} hist;

/* A scene in memory: its committed and queued position in the log, the
 * weight logged since its latest snapshot, and its clients' histories. */
typedef struct scene_rt {
	char name[SCENE_ID_MAX + 1];
	int64_t id;               /* scenes.id */
	int dims;                 /* scenes.dims: 3, or 2; every scene built
	                             for it (replay, time travel) gets it */
	scene *sc;
	int64_t seq;              /* last committed */
	int64_t next_seq;         /* the seq the next batch gets */
	int64_t tail_weight;      /* logged weight since the latest snapshot */
	int64_t pending_weight;   /* queued weight of this turn */
	int n_pending;
	bool broken;              /* memory no longer matches log + queue */
	hist **hist;              /* hash table of clients, hist_cap buckets */
	int hist_cap;
	int n_hist;
} scene_rt;

/* A batch of this turn, applied in memory, its row not yet committed. The
 * scene outlives it: a scene with pending batches cannot be deleted. */
typedef struct pending {
	scene_rt *rt;
	int64_t seq;
	int64_t time_us;
	char client[SCENE_ID_MAX + 1];
	bool has_client_seq;
	int64_t client_seq;
	int kind;                 /* enum store_edit_kind */
	int64_t target;
	int n_ops;
	char *ops;                /* JSON array, owned */
	size_t ops_len;
	char *inverse;            /* JSON array, owned */
	size_t inverse_len;
	unsigned char *ops_bin;   /* binary image of the ops, owned */
	size_t ops_bin_len;
	edit_batch inv;           /* the inverse as structs, for a rollback */
	struct eng_asset *asset;  /* the assets stored with the batch (a chain
	                             by 'next'), owned; NULL for most */
} pending;

/* The engine: the store, every scene by name, and this turn's queue. */
struct engine {
	store *st;
	engine_opts opts;
	scene_rt **scenes;        /* sorted by name */
	int n_scenes, cap_scenes;
	pending *q;               /* this turn's batches, in submission order */
	int n_q, cap_q;
	int *qidx;                /* open-addressing index of q by client key */
	int qidx_cap;             /* power of two, 0 when none */
	engine_stats stats;
	char errmsg[512];
	size_t line_max;          /* bytes of a batch's log line; 0: no limit */
	/* The commit writer (engine_writer_start): its thread, its own
	 * connection, and the commit it runs (NULL when none): while one
	 * runs, the queue must not change. */
	struct writer *w;
	store *wst;
	struct commit_job *flight;
};

/* The state of a replay: a scene, the seq the next log row must carry, and
 * the ops of the row last read. */
typedef struct replay_ctx {
	engine *e;
	const char *name;
	scene *sc;
	int64_t expect;           /* the seq the next row must carry */
	int64_t weight;           /* of the rows replayed */
	edit_batch ops;           /* the last row's ops; its array is reused */
} replay_ctx;

/* A batch's weight in the snapshot policy: replaying it costs its ops plus
 * one row. */
static inline int64_t batch_weight(int n_ops)
{
	return (int64_t)n_ops + 1;
}

/* FNV-1a over 'len' bytes, continuing from 'h' (FNV_OFFSET to start): the
 * hash stored beside each snapshot, and the engine's hash tables'. */
static inline uint64_t fnv1a(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV_OFFSET 0xcbf29ce484222325ull

/* --- engine.c --- */

/* Sets engine_errmsg's text. */
void eng_set_errmsg(engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The wall clock in microseconds since 1970, the time a batch is logged. */
int64_t eng_now_us(void);

/* Limits for JSON the engine wrote itself (log rows): the size and op count
 * were checked when the batch was first accepted, and inverses may hold
 * more ops than any submitted batch. */
proto_limits eng_trusted_limits(void);

/* Encodes the ops of 'b' as a malloc'd JSON array (*out, *len bytes, the
 * caller frees it). 0 or RIGD_E_NOMEM; *out is then unchanged. */
int eng_encode_ops(const edit_batch *b, char **out, size_t *len);

/* The scene named 'name' (may be NULL), or NULL. */
scene_rt *eng_find_scene(const engine *e, const char *name);

/* 0, or RIGD_E_FORBIDDEN (set in 'err', may be NULL) on an engine opened
 * read-only. */
int eng_writable(engine *e, edit_error *err);

/* What every write through the queue starts with: 'ack' (may be NULL)
 * initialised, 'err' cleared, scene 'name' found (*rt) and the engine
 * writable. Returns 0, RIGD_E_UNKNOWN_SCENE or RIGD_E_FORBIDDEN. */
int eng_write_start(engine *e, const char *name, engine_ack *ack, edit_error *err,
		    scene_rt **rt);

/* A resend of (client, client_seq) already queued or committed: 1, with
 * *ack (may be NULL) its seq and duplicate = true, when there is one; 0
 * when not; or a negative error, set in 'err'. */
int eng_answer_resend(engine *e, scene_rt *rt, const char *client, int64_t client_seq,
		      engine_ack *ack, edit_error *err);

/* Applies 'b' (borrowed) to rt and queues it as a batch of 'kind' (target:
 * the undone or redone seq). 'lim' NULL for trusted batches. Duplicates are
 * the caller's business. On error the scene and queue are as they were
 * (or the scene is marked broken, for the next commit to reload). */
int eng_apply_and_queue(engine *e, scene_rt *rt, const edit_batch *b, const edit_limits *lim,
			int kind, int64_t target, engine_ack *ack, edit_error *err);

/* eng_apply_and_queue of a batch that stores 'asset' (may be NULL; not
 * taken: the caller attaches it to the queued batch), whose log line
 * carries the asset: counted in the line's length. */
struct eng_asset;
int eng_apply_and_queue_asset(engine *e, scene_rt *rt, const edit_batch *b,
			      const edit_limits *lim, int kind, int64_t target,
			      const struct eng_asset *asset, engine_ack *ack, edit_error *err);

/* Empties the queue, freeing what its batches own. */
void eng_queue_clear(engine *e);

/* --- engine_commit.c --- */

/* Waits for the commit out (if any), stops the writer and closes its
 * connection; nothing when there is no writer. */
void eng_writer_stop(engine *e);

/* --- engine_line.c --- */

/* The bytes of the log line engine_log writes for a batch with these
 * fields, 'ops_len' bytes of stored ops JSON and assets a[0..n_assets),
 * into *out. 0 or RIGD_E_NOMEM. */
int eng_line_len(int64_t seq, int64_t time_us, const char *client, bool has_client_seq,
		 int64_t client_seq, int kind, int64_t target, size_t ops_len,
		 const proto_log_asset *a, int n_assets, size_t *out);
/* 0 when a log line of 'len' bytes is within e->line_max (or there is no
 * limit); else RIGD_E_TOO_LARGE in 'err', naming 'what' and the limit. */
int eng_line_fits(engine *e, const char *what, size_t len, edit_error *err);
/* Checks that batch 'seq' of 'client' in rt may be of 'kind' undoing or
 * redoing 'target': an earlier batch (queued or stored) of the same
 * client that is not itself an undo. 0, RIGD_E_BAD_FIELD (field "undo" or
 * "redo") in 'err', RIGD_E_STORAGE, RIGD_E_NOMEM. */
int eng_check_target(engine *e, scene_rt *rt, const char *client, int64_t seq, int kind,
		     int64_t target, edit_error *err);

/* --- engine_asset.c --- */

/* An asset queued with its batch (engine_assets_submit): one link of the
 * batch's chain. */
typedef struct eng_asset {
	char file[PROTO_ASSET_FILE_MAX + 1];
	char sha256[65];
	int kind;                 /* enum asset_kind */
	char *bytes;              /* owned, NUL after the last byte */
	size_t len;
	char *ids;                /* what a layer may name, one per line, owned */
	size_t ids_len;
	struct eng_asset *next;
} eng_asset;

/* Frees a chain of assets and what they own; accepts NULL. */
void eng_asset_free(eng_asset *a);

/* Gives scene 's' the skeleton and clips of asset 'file' of 'kind' when it
 * is a Spine or DragonBones file ('len' bytes at 'data'; anything else is
 * left alone), as every path that adds a skeleton asset to a scene's asset
 * set does (engine_asset.c). 0, or RIGD_E_NOMEM (scene unchanged). A file
 * that does not read gives no clips. */
int eng_skel_add(scene *s, const char *file, int kind, const char *data, size_t len);
/* Registers in 's' (scene_assets) every asset of store scene 'scene_id'
 * with seq <= upto (< 0: all), so that layers naming them pass
 * edit_layer_check while the scene is built. 0, RIGD_E_NOMEM,
 * RIGD_E_STORAGE. */
int eng_assets_register(engine *e, int64_t scene_id, scene *s, int64_t upto);
/* rigd check of rt's assets: each one's bytes have its SHA-256, are what
 * its kind's reader accepts and writes for them (an SVG sanitised again:
 * the same bytes, nothing removed; a PNG decoded and re-encoded: the same
 * bytes), list the ids that reader finds, and belong to a seq of the log
 * (1..rt->seq). Calls fn (may be NULL) with one line per problem and
 * returns how many, or a negative RIGD_E_NOMEM / RIGD_E_STORAGE. */
int eng_assets_verify(engine *e, const scene_rt *rt, engine_report_fn fn, void *ctx);
/* The lowercase hex SHA-256 of 'len' bytes into out (65 bytes). */
void eng_sha256_hex(const void *data, size_t len, char out[65]);

/* --- engine_snap.c --- */

/* Appends the snapshot of 's' to 'out'. 0 or RIGD_E_NOMEM. */
int eng_snap_encode(const scene *s, bytes *out);

/* Applies one logged row to c->sc, checking that its seq is c->expect; with
 * 'inverse' (may be NULL) its inverse as the replay computes it (the caller
 * releases it). RIGD_E_STORAGE (engine_errmsg says why), RIGD_E_NOMEM. */
int eng_replay_row(replay_ctx *c, const store_edit *row, edit_batch *inverse);

/* (Re)loads a scene's committed state into rt from the database. On error
 * rt is unchanged. Long. */
int eng_load_scene(engine *e, scene_rt *rt);

/* Whether rt is due a snapshot with 'weight' logged since its last one. */
bool eng_snapshot_due(const engine *e, const scene_rt *rt, int64_t weight);

/* Writes a snapshot of 's' (rt's scene) as of seq 'seq', inside the
 * caller's transaction. RIGD_E_NOMEM when it cannot be encoded (the caller
 * may go on without it), RIGD_E_STORAGE. */
int eng_put_snapshot(engine *e, const scene_rt *rt, const scene *s, int64_t seq);

/* --- engine_opimage.c --- */

/* Decodes an image into 'b' (its ops replaced; client untouched), reusing
 * its ops array. RIGD_E_IO for bytes that are not an image, RIGD_E_NOMEM;
 * on error 'b' holds some ops, each complete or without strings. */
int eng_ops_bin_read(const void *data, size_t len, edit_batch *b);

/* --- engine_undo.c --- */

/* The history of 'client' in rt if it was built, or NULL. */
hist *eng_hist_find(scene_rt *rt, const char *client);

/* One step of the history machine for a batch of the client: seq 'seq' of
 * 'kind' (enum store_edit_kind) undoing or redoing 'target'. 0 or
 * RIGD_E_NOMEM. */
int eng_hist_step(hist *h, int depth, int64_t seq, int kind, int64_t target);

/* Forgets every client's history of the scene (rebuilt from the log on
 * next use). */
void eng_hist_clear(scene_rt *rt);

#endif
