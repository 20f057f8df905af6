/*
 * journal.h: the per-scene turn journal. Each committed turn that touched a
 * scene leaves one entry: which subtrees had their world matrices
 * recomputed and which nodes were created, changed or removed. An update
 * for a client at any cursor the journal still covers is built from it, so
 * a slow client gets the latest state of everything that changed since its
 * cursor in one frame; a cursor older than the journal gets a snapshot.
 *
 * The journal is a ring of ring_cap entries, oldest at 'head', with
 * entries in seq order and at most JOURNAL_MAX_IDS ids in all. It never
 * holds matrices or frames: those are read from the scene when sent.
 */
#ifndef RIGD_SERVE_JOURNAL_H
#define RIGD_SERVE_JOURNAL_H

#include "util.h"

#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"

#include <stdbool.h>
#include <stdint.h>

/* What one turn did to a scene, for the updates of lagging clients. */
struct jentry {
	int64_t from, to;            /* seqs (from, to] */
	edit_id *roots;              /* subtrees whose matrices were recomputed */
	int n_roots;
	edit_id *changed;            /* created or changed nodes */
	int n_changed;
	edit_id *removed;
	int n_removed;
	edit_id *full;               /* of 'changed': created, or changed in a
				      * field besides t, r, s, pivot */
	int n_full;
	bool order;                  /* the draw order (2D) changed in the turn */
};

/* One scene's journal (a room holds one) and the turn it has open. */
struct journal {
	const char *name;            /* the scene's (the room's), for frames */
	struct jentry *ring;         /* oldest at 'head' */
	int ring_cap;                /* entries 'ring' holds (--journal) */
	int head, n;
	int64_t epoch;               /* deltas are possible from cursors >= epoch */
	long journal_ids;            /* ids held by the entries */
	/* The draw order of a 2D scene as the last turn left it: the scene
	 * object and its scene_draw_version, to tell whether a turn changed
	 * it. */
	const scene *order_scene;
	uint64_t order_version;
	/* this turn */
	bool touched;                /* a batch of the turn changed the scene */
	int64_t turn_from;
	struct idlist turn_changed, turn_removed;
	struct idlist turn_full;     /* as jentry's 'full' */
	struct idlist turn_roots;
	bool turn_lost;              /* a change could not be noted: snapshots */
	bool turn_order;             /* the turn changed the draw order */
};

#define JOURNAL_TURN_MAX_IDS 8192        /* a bigger turn restarts the journal */
#define JOURNAL_MAX_IDS 131072           /* ids kept per scene (about 8 MB) */

/* Forgets every entry: deltas are possible again from cursor 'epoch' on
 * (rooms_restart also drops the frames built from them). */
void journal_clear(struct journal *st, int64_t epoch);

/* Drops the oldest entry; clients older than the new epoch get snapshots.
 * The journal must not be empty. */
void journal_drop_oldest(struct journal *st);

/*
 * Records what an accepted batch changed in the scene's lists of this turn
 * (the first batch of a turn sets the turn's start, 'seq_before'). Returns
 * 0, or RIGD_E_NOMEM after marking the turn lost (its end then restarts
 * the journal, so every subscriber gets a snapshot).
 */
int journal_note(struct journal *st, const edit_result *r, int64_t seq_before);

/* engine_update's range callback ('ctx' a struct journal_roots): notes the
 * roots of the recomputed subtrees in the turn's root list. */
struct journal_roots {
	const scene *s;
	struct idlist *roots;
	int rc;                      /* RIGD_E_NOMEM when a root was lost */
};
void journal_collect_roots(void *ctx, int first_pos, int end_pos);

/*
 * Brings the draw order of 2D scene 's' up to date, right after its world
 * matrices were, and notes in the turn whether it differs from the order
 * the previous turn left (so the entry, and every update covering it,
 * carries the new order). Does nothing for a 3D scene. 0, or RIGD_E_NOMEM
 * (the caller restarts the journal: every subscriber gets a snapshot).
 */
int journal_note_order(struct journal *st, const scene *s);

/*
 * Ends the turn of a touched scene now at seq 'to': its lists become one
 * entry (dropping the oldest to stay within bounds), or, for a turn bigger
 * than JOURNAL_TURN_MAX_IDS, the journal restarts at 'to'. The turn's lists
 * are empty afterwards either way.
 */
void journal_add(struct journal *st, int64_t to);

/* Frees the turn's lists without recording them (a failed commit, or a
 * turn that did not move the seq). */
void journal_turn_drop(struct journal *st);

/*
 * Appends to 'b' the update that takes a client from 'cursor' to 'seq' of
 * scene 's', built from the journal. Returns 0 with *n_entries set to the
 * turns it covers; RIGD_E_BAD_SEQ when the journal cannot (a cursor older
 * than it, newer than 'seq', or not on a turn boundary: the caller sends a
 * snapshot); RIGD_E_NOMEM. On error 'b' may hold a partial frame.
 */
int journal_build_update(const struct journal *st, const scene *s, int64_t seq, int64_t cursor,
			 proto_buf *b, int *n_entries);

/*
 * journal_build_update in the subscription's 'format' (enum proto_format):
 * JSON text, or a binary frame (codec/proto_bin.h) whose node indices are
 * the scene's handles, so the frame is the same for every client at
 * 'cursor'. Same returns and state on error.
 */
int journal_build_frame(const struct journal *st, const scene *s, int64_t seq, int64_t cursor,
			int format, proto_buf *b, int *n_entries);

/*
 * What an update from 'cursor' to 'seq' is made of, for per-viewer
 * interest (interest.c filters it by view before encoding): the handles
 * whose world matrix changed, the handles sent whole (parents first) and
 * the ids removed. The arrays are owned by the struct.
 */
struct journal_update {
	int *world;
	int n_world;
	int *nodes;
	int n_nodes;
	bool *locals;                /* one per node: only its transform channels
				      * changed (proto_bin_encode_update_locals) */
	edit_id *gone;
	int n_gone;
};

/* Fills 'u' (zeroed first) as journal_build_frame would encode it; same
 * returns (then 'u' is empty). */
int journal_collect(const struct journal *st, const scene *s, int64_t seq, int64_t cursor,
		    struct journal_update *u, int *n_entries);

/* Frees what 'u' holds; 'u' is then empty. */
void journal_update_release(struct journal_update *u);

#endif
