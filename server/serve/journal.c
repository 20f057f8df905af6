/*
 * journal.c: the per-scene turn journal and the updates built from it
 * (see journal.h). Reads scenes, never changes them; never touches a
 * socket or the engine.
 */
#include "journal.h"
#include "util.h"

#include "core/err.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static void jentry_free(struct jentry *j)
{
	free(j->roots);
	free(j->changed);
	free(j->removed);
	memset(j, 0, sizeof(*j));
}

void journal_clear(struct room *st, int64_t epoch)
{
	free(st->cache);
	st->cache = NULL;
	for (int i = 0; i < st->n; i++)
		jentry_free(&st->ring[(st->head + i) % st->ring_cap]);
	st->head = 0;
	st->n = 0;
	st->epoch = epoch;
	st->journal_ids = 0;
}

/* Drops the oldest entry; clients older than the new epoch get snapshots. */
void journal_drop_oldest(struct room *st)
{
	struct jentry *j = &st->ring[st->head];

	st->epoch = j->to;
	st->journal_ids -= j->n_roots + j->n_changed + j->n_removed;
	jentry_free(j);
	st->head = (st->head + 1) % st->ring_cap;
	st->n--;
}
/* ---- journal and updates ---- */

/* engine_update's range callback: a recomputed range [first, end) of
 * preorder positions is a run of whole subtrees; remember their roots. */
void journal_collect_roots(void *ctx, int first_pos, int end_pos)
{
	struct journal_roots *rc = ctx;

	for (int pos = first_pos; pos < end_pos;) {
		int node = scene_at(rc->s, pos);

		if (idlist_add(rc->roots, scene_id(rc->s, node)))
			rc->rc = RIGD_E_NOMEM;
		pos += scene_subtree_size(rc->s, node);
	}
}

/* Records the turn of a touched scene as one journal entry. On failure
 * (memory) the journal is restarted, so lagging clients get snapshots. */
void journal_add(struct room *st, int64_t to)
{
	struct jentry *j;
	long ids;
	int slot;

	idlist_unique(&st->turn_roots);
	idlist_unique(&st->turn_changed);
	idlist_unique(&st->turn_removed);
	ids = st->turn_roots.n + st->turn_changed.n + st->turn_removed.n;
	if (ids > JOURNAL_TURN_MAX_IDS) {
		/* A turn this big (an import-sized batch) would cost more to
		 * remember than a snapshot costs to send. */
		journal_turn_drop(st);
		journal_clear(st, to);
		return;
	}
	while (st->n > 0 && (st->n == st->ring_cap || st->journal_ids + ids > JOURNAL_MAX_IDS))
		journal_drop_oldest(st);
	slot = (st->head + st->n) % st->ring_cap;
	j = &st->ring[slot];
	j->from = st->turn_from;
	j->to = to;
	st->journal_ids += ids;
	j->roots = st->turn_roots.v;
	j->n_roots = st->turn_roots.n;
	j->changed = st->turn_changed.v;
	j->n_changed = st->turn_changed.n;
	j->removed = st->turn_removed.v;
	j->n_removed = st->turn_removed.n;
	memset(&st->turn_roots, 0, sizeof(st->turn_roots));
	memset(&st->turn_changed, 0, sizeof(st->turn_changed));
	memset(&st->turn_removed, 0, sizeof(st->turn_removed));
	if (st->n == 0)
		st->epoch = j->from;
	st->n++;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

struct range {
	int first, end;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/*
 * Builds the update that takes a client from 'cursor' to the scene's seq,
 * or returns RIGD_E_BAD_SEQ when the journal cannot (then the caller sends a
 * snapshot). *n_entries gets how many turns the update covers.
 */
int journal_build_update(const struct room *st, const scene *s, int64_t seq, int64_t cursor,
			 proto_buf *b, int *n_entries)
{
	struct idlist changed = {0}, removed = {0};
	struct range *ranges = NULL;
	int n_ranges = 0, cap_ranges = 0;
	int *world = NULL, *nodes = NULL;
	int n_world = 0, n_nodes = 0, cap_world = 0;
	edit_id *gone = NULL;
	int n_gone = 0;
	int rc = 0, covered = 0;

	if (cursor < st->epoch || cursor > seq)
		return RIGD_E_BAD_SEQ;
	for (int i = 0; i < st->n; i++) {
		const struct jentry *j = &st->ring[(st->head + i) % st->ring_cap];

		if (j->to <= cursor)
			continue;
		if (j->from < cursor)
			return RIGD_E_BAD_SEQ;  /* not on a turn boundary */
		covered++;
		for (int k = 0; k < j->n_changed; k++)
			if ((rc = idlist_add(&changed, j->changed[k].s)))
				goto out;
		for (int k = 0; k < j->n_removed; k++)
			if ((rc = idlist_add(&removed, j->removed[k].s)))
				goto out;
		for (int k = 0; k < j->n_roots; k++) {
			int node = scene_find(s, j->roots[k].s);
			struct range *r;

			if (node < 0)
				continue;
			r = serve_grow(ranges, &cap_ranges, n_ranges + 1, sizeof(*r));
			if (!r) {
				rc = RIGD_E_NOMEM;
				goto out;
			}
			ranges = r;
			ranges[n_ranges].first = scene_pos(s, node);
			ranges[n_ranges].end = ranges[n_ranges].first + scene_subtree_size(s, node);
			n_ranges++;
		}
	}
	if (covered == 0 && cursor != seq) {
		rc = RIGD_E_BAD_SEQ;
		goto out;
	}
	/* Every node recomputed since the cursor lies in the current subtree of
	 * a recorded root (a node moved out of one is recomputed, and recorded,
	 * by the move), and its stamp says whether it changed since. */
	if (n_ranges > 1)
		qsort(ranges, (size_t)n_ranges, sizeof(*ranges), cmp_range);
	for (int i = 0, reach = 0; i < n_ranges; i++) {
		int from = ranges[i].first > reach ? ranges[i].first : reach;

		for (int pos = from; pos < ranges[i].end; pos++) {
			int node = scene_at(s, pos);

			if (scene_world_stamp(s, node) > (uint64_t)cursor) {
				int *w = serve_grow(world, &cap_world, n_world + 1, sizeof(int));

				if (!w) {
					rc = RIGD_E_NOMEM;
					goto out;
				}
				world = w;
				world[n_world++] = node;
			}
		}
		if (ranges[i].end > reach)
			reach = ranges[i].end;
	}
	idlist_unique(&changed);
	idlist_unique(&removed);
	if (changed.n && !(nodes = malloc((size_t)changed.n * sizeof(int)))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	for (int i = 0; i < changed.n; i++) {
		int node = scene_find(s, changed.v[i].s);

		if (node >= 0)
			nodes[n_nodes++] = node;
	}
	/* Parents before children: a client can build new nodes in order. */
	for (int i = 0; i < n_nodes; i++)
		nodes[i] = scene_pos(s, nodes[i]);
	if (n_nodes > 1)
		qsort(nodes, (size_t)n_nodes, sizeof(int), cmp_int);
	for (int i = 0; i < n_nodes; i++)
		nodes[i] = scene_at(s, nodes[i]);
	if (removed.n && !(gone = malloc((size_t)removed.n * sizeof(edit_id)))) {
		rc = RIGD_E_NOMEM;
		goto out;
	}
	for (int i = 0; i < removed.n; i++)
		if (scene_find(s, removed.v[i].s) < 0)
			gone[n_gone++] = removed.v[i];
	rc = proto_encode_update(b, st->name, (uint64_t)seq, s, world, n_world, nodes, n_nodes,
				 gone, n_gone);
	*n_entries = covered;
out:
	idlist_free(&changed);
	idlist_free(&removed);
	free(ranges);
	free(world);
	free(nodes);
	free(gone);
	return rc;
}
/* Records what an accepted batch changed in its scene's turn lists. */
int journal_note(struct room *st, const edit_result *r, int64_t seq_before)
{
	if (!st->touched) {
		st->touched = true;
		st->turn_from = seq_before;
	}
	for (int i = 0; i < r->n_created; i++)
		if (idlist_add(&st->turn_changed, r->created[i].s))
			goto lost;
	for (int i = 0; i < r->n_changed; i++)
		if (idlist_add(&st->turn_changed, r->changed[i].s))
			goto lost;
	for (int i = 0; i < r->n_removed; i++)
		if (idlist_add(&st->turn_removed, r->removed[i].s))
			goto lost;
	return 0;
lost:
	/* Without the full list no update of this turn is exact: the turn
	 * restarts the journal, so every subscriber gets a snapshot. */
	st->turn_lost = true;
	return RIGD_E_NOMEM;
}


void journal_turn_drop(struct room *st)
{
	idlist_free(&st->turn_changed);
	idlist_free(&st->turn_removed);
	idlist_free(&st->turn_roots);
	st->turn_lost = false;
}
