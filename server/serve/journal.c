/*
 * journal.c: the per-scene turn journal and the updates built from it
 * (see journal.h). Reads scenes, never changes them; never touches a
 * socket or the engine.
 */
#include "journal.h"
#include "util.h"

#include "codec/proto_bin.h"
#include "core/err.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static void jentry_free(struct jentry *j)
{
	free(j->roots);
	free(j->changed);
	free(j->removed);
	free(j->full);
	memset(j, 0, sizeof(*j));
}

void journal_clear(struct journal *st, int64_t epoch)
{
	assert(st->n >= 0 && st->n <= st->ring_cap);
	for (int i = 0; i < st->n; i++)
		jentry_free(&st->ring[(st->head + i) % st->ring_cap]);
	st->head = 0;
	st->n = 0;
	st->epoch = epoch;
	st->journal_ids = 0;
}

/* Drops the oldest entry; clients older than the new epoch get snapshots. */
void journal_drop_oldest(struct journal *st)
{
	struct jentry *j = &st->ring[st->head];

	assert(st->n > 0 && st->n <= st->ring_cap);
	assert(j->to >= st->epoch);
	st->epoch = j->to;
	st->journal_ids -= j->n_roots + j->n_changed + j->n_removed;
	jentry_free(j);
	st->head = (st->head + 1) % st->ring_cap;
	st->n--;
	assert(st->journal_ids >= 0 && (st->n > 0 || st->journal_ids == 0));
}

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
void journal_add(struct journal *st, int64_t to)
{
	struct jentry *j;
	long ids;
	int slot;

	idlist_unique(&st->turn_roots);
	idlist_unique(&st->turn_changed);
	idlist_unique(&st->turn_removed);
	idlist_unique(&st->turn_full);
	/* 'full' is a part of 'changed', counted with it. */
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
	assert(st->n < st->ring_cap && st->turn_from < to);
	/* Entries follow each other in seq order. */
	assert(st->n == 0 || st->ring[(st->head + st->n - 1) % st->ring_cap].to <= st->turn_from);
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
	j->full = st->turn_full.v;
	j->n_full = st->turn_full.n;
	j->order = st->turn_order;
	st->turn_order = false;
	memset(&st->turn_roots, 0, sizeof(st->turn_roots));
	memset(&st->turn_changed, 0, sizeof(st->turn_changed));
	memset(&st->turn_removed, 0, sizeof(st->turn_removed));
	memset(&st->turn_full, 0, sizeof(st->turn_full));
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

/* An id string against an edit_id, for bsearch in a unique idlist. */
static int cmp_id_str(const void *key, const void *elem)
{
	return strcmp(key, ((const edit_id *)elem)->s);
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

int journal_note_order(struct journal *st, const scene *s)
{
	uint64_t version;
	int n, rc;

	if (scene_dims(s) != 2)
		return 0;
	if ((rc = scene_draw_order(s, &n)) != 0)
		return rc;
	version = scene_draw_version(s);
	/* Another scene object (the engine reloaded it) may count versions
	 * from anywhere: its order counts as changed. */
	st->turn_order = st->turn_order || st->order_scene != s || st->order_version != version;
	st->order_scene = s;
	st->order_version = version;
	return 0;
}

/* What an update is made of, gathered from the journal. */
struct parts {
	struct idlist changed, removed;
	struct idlist full;          /* changed ids the client needs whole */
	struct range *ranges;        /* preorder ranges of the recorded roots */
	int n_ranges, cap_ranges;
	int *world;                  /* nodes whose world matrix is sent */
	int n_world, cap_world;
	int *nodes;                  /* nodes sent, parents first */
	bool *locals;                /* per node: its transform channels only */
	int n_nodes;
	edit_id *gone;               /* removed and not created again */
	int n_gone;
	bool order;                  /* the draw order changed after the cursor */
};

static void parts_free(struct parts *p)
{
	idlist_free(&p->changed);
	idlist_free(&p->removed);
	idlist_free(&p->full);
	free(p->locals);
	free(p->ranges);
	free(p->world);
	free(p->nodes);
	free(p->gone);
}

/* Adds the subtree of root 'id' (if it still exists) to the ranges. */
static int add_range(struct parts *p, const scene *s, const char *id)
{
	int node = scene_find(s, id);
	struct range *r;

	if (node < 0)
		return 0;
	r = serve_grow(p->ranges, &p->cap_ranges, p->n_ranges + 1, sizeof(*r));
	if (!r)
		return RIGD_E_NOMEM;
	p->ranges = r;
	r[p->n_ranges].first = scene_pos(s, node);
	r[p->n_ranges].end = r[p->n_ranges].first + scene_subtree_size(s, node);
	p->n_ranges++;
	return 0;
}

/*
 * Gathers the entries after 'cursor': their changed and removed ids and
 * the ranges of their roots. *covered gets how many. RIGD_E_BAD_SEQ when
 * 'cursor' falls inside an entry, RIGD_E_NOMEM.
 */
static int gather(const struct journal *st, const scene *s, int64_t cursor, struct parts *p,
		  int *covered)
{
	int rc = 0;

	*covered = 0;
	for (int i = 0; i < st->n && rc == 0; i++) {
		const struct jentry *j = &st->ring[(st->head + i) % st->ring_cap];

		assert(j->from < j->to);
		assert(i == 0 || st->ring[(st->head + i - 1) % st->ring_cap].to <= j->from);
		if (j->to <= cursor)
			continue;
		if (j->from < cursor)
			return RIGD_E_BAD_SEQ;  /* not on a turn boundary */
		(*covered)++;
		p->order = p->order || j->order;
		for (int k = 0; k < j->n_changed && rc == 0; k++)
			rc = idlist_add(&p->changed, j->changed[k].s);
		for (int k = 0; k < j->n_removed && rc == 0; k++)
			rc = idlist_add(&p->removed, j->removed[k].s);
		for (int k = 0; k < j->n_full && rc == 0; k++)
			rc = idlist_add(&p->full, j->full[k].s);
		for (int k = 0; k < j->n_roots && rc == 0; k++)
			rc = add_range(p, s, j->roots[k].s);
	}
	return rc;
}

/*
 * The nodes whose world matrix changed after 'cursor'. Every node
 * recomputed since the cursor lies in the current subtree of a recorded
 * root (a node moved out of one is recomputed, and recorded, by the move),
 * and its stamp says whether it changed since.
 */
static int world_nodes(const scene *s, int64_t cursor, struct parts *p)
{
	if (p->n_ranges > 1)
		qsort(p->ranges, (size_t)p->n_ranges, sizeof(*p->ranges), cmp_range);
	for (int i = 0, reach = 0; i < p->n_ranges; i++) {
		int from = p->ranges[i].first > reach ? p->ranges[i].first : reach;

		for (int pos = from; pos < p->ranges[i].end; pos++) {
			int node = scene_at(s, pos);
			int *w;

			if (scene_world_stamp(s, node) <= (uint64_t)cursor)
				continue;
			w = serve_grow(p->world, &p->cap_world, p->n_world + 1, sizeof(int));
			if (!w)
				return RIGD_E_NOMEM;
			p->world = w;
			p->world[p->n_world++] = node;
		}
		if (p->ranges[i].end > reach)
			reach = p->ranges[i].end;
	}
	return 0;
}

/* The changed nodes that still exist, parents before children (so that a
 * client can build new nodes in order), and the removed ids that are gone. */
static int changed_nodes(const scene *s, struct parts *p)
{
	idlist_unique(&p->changed);
	idlist_unique(&p->removed);
	if (p->changed.n && !(p->nodes = malloc((size_t)p->changed.n * sizeof(int))))
		return RIGD_E_NOMEM;
	for (int i = 0; i < p->changed.n; i++) {
		int node = scene_find(s, p->changed.v[i].s);

		if (node >= 0)
			p->nodes[p->n_nodes++] = scene_pos(s, node);
	}
	if (p->n_nodes > 1)
		qsort(p->nodes, (size_t)p->n_nodes, sizeof(int), cmp_int);
	for (int i = 0; i < p->n_nodes; i++)
		p->nodes[i] = scene_at(s, p->nodes[i]);
	idlist_unique(&p->full);
	if (p->n_nodes && !(p->locals = malloc((size_t)p->n_nodes * sizeof(bool))))
		return RIGD_E_NOMEM;
	/* A node that no covered turn created or changed besides its
	 * channels existed at the cursor with the record the client has. */
	for (int i = 0; i < p->n_nodes; i++)
		p->locals[i] = p->full.n == 0 ||
			       !bsearch(scene_id(s, p->nodes[i]), p->full.v, (size_t)p->full.n,
					sizeof(edit_id), cmp_id_str);
	if (p->removed.n && !(p->gone = malloc((size_t)p->removed.n * sizeof(edit_id))))
		return RIGD_E_NOMEM;
	for (int i = 0; i < p->removed.n; i++)
		if (scene_find(s, p->removed.v[i].s) < 0)
			p->gone[p->n_gone++] = p->removed.v[i];
	return 0;
}

int journal_build_frame(const struct journal *st, const scene *s, int64_t seq, int64_t cursor,
			int format, proto_buf *b, int *n_entries)
{
	struct parts p;
	int rc, covered = 0;

	assert(st->n >= 0 && st->n <= st->ring_cap);
	assert(format >= 0 && format < PROTO_FORMAT_COUNT);
	if (cursor < st->epoch || cursor > seq)
		return RIGD_E_BAD_SEQ;
	memset(&p, 0, sizeof(p));
	rc = gather(st, s, cursor, &p, &covered);
	if (rc == 0 && covered == 0 && cursor != seq)
		rc = RIGD_E_BAD_SEQ;
	if (rc == 0)
		rc = world_nodes(s, cursor, &p);
	if (rc == 0)
		rc = changed_nodes(s, &p);
	/* A skipped turn that changed the draw order: the update carries the
	 * order of 'seq', the one the matrices it carries belong to. */
	p.order = p.order && scene_dims(s) == 2;
	if (rc == 0 && format == PROTO_FORMAT_JSON)
		rc = proto_encode_update_order(b, st->name, (uint64_t)seq, s, p.world, p.n_world,
					       p.nodes, p.n_nodes, p.gone, p.n_gone, p.order);
	else if (rc == 0)
		rc = proto_bin_encode_update_locals(b, format, st->name, (uint64_t)seq,
						    (uint64_t)cursor, s, p.world, p.n_world, p.nodes,
						    p.locals, p.n_nodes, p.gone, p.n_gone, p.order);
	if (rc == 0)
		*n_entries = covered;
	parts_free(&p);
	return rc;
}

int journal_build_update(const struct journal *st, const scene *s, int64_t seq, int64_t cursor,
			 proto_buf *b, int *n_entries)
{
	return journal_build_frame(st, s, seq, cursor, PROTO_FORMAT_JSON, b, n_entries);
}

/* Records what an accepted batch changed in its scene's turn lists. */
int journal_note(struct journal *st, const edit_result *r, int64_t seq_before)
{
	if (!st->touched) {
		st->touched = true;
		st->turn_from = seq_before;
	}
	for (int i = 0; i < r->n_created; i++)
		if (idlist_add(&st->turn_changed, r->created[i].s))
			goto lost;
	for (int i = 0; i < r->n_created; i++)
		if (idlist_add(&st->turn_full, r->created[i].s))
			goto lost;
	for (int i = 0; i < r->n_changed; i++)
		if (idlist_add(&st->turn_changed, r->changed[i].s) ||
		    ((!r->changed_locals || !r->changed_locals[i]) &&
		     idlist_add(&st->turn_full, r->changed[i].s)))
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


void journal_turn_drop(struct journal *st)
{
	idlist_free(&st->turn_changed);
	idlist_free(&st->turn_removed);
	idlist_free(&st->turn_full);
	idlist_free(&st->turn_roots);
	st->turn_lost = false;
	st->turn_order = false;
}

int journal_collect(const struct journal *st, const scene *s, int64_t seq, int64_t cursor,
		    struct journal_update *u, int *n_entries)
{
	struct parts p;
	int rc, covered = 0;

	memset(u, 0, sizeof(*u));
	if (cursor < st->epoch || cursor > seq)
		return RIGD_E_BAD_SEQ;
	memset(&p, 0, sizeof(p));
	rc = gather(st, s, cursor, &p, &covered);
	if (rc == 0 && covered == 0 && cursor != seq)
		rc = RIGD_E_BAD_SEQ;
	if (rc == 0)
		rc = world_nodes(s, cursor, &p);
	if (rc == 0)
		rc = changed_nodes(s, &p);
	if (rc == 0) {
		/* The lists move to 'u'. */
		u->world = p.world;
		u->n_world = p.n_world;
		u->nodes = p.nodes;
		u->locals = p.locals;
		u->n_nodes = p.n_nodes;
		u->gone = p.gone;
		u->n_gone = p.n_gone;
		p.world = p.nodes = NULL;
		p.locals = NULL;
		p.gone = NULL;
		*n_entries = covered;
	}
	parts_free(&p);
	return rc;
}

void journal_update_release(struct journal_update *u)
{
	free(u->world);
	free(u->nodes);
	free(u->locals);
	free(u->gone);
	memset(u, 0, sizeof(*u));
}
