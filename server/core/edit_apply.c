/*
 * edit_apply.c: applying a batch (edit_apply_ex). Each op is checked
 * (edit_validate.c), its inverse recorded (edit_invert.c), then made with
 * one scene call; a failed op rolls back the ones before it, so a batch
 * applies whole or not at all. Also the ids a batch touched, for
 * edit_result.
 *
 * Never parses JSON and never brings world matrices up to date.
 */
#include "edit_internal.h"

#include "err.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- the ids a batch touched (for edit_result) ---------- */

typedef struct touch {
	edit_id id;
	bool before;    /* the node existed before the batch */
	bool dirty;     /* its subtree's world matrices went stale */
	bool other;     /* a field besides t, r, s, pivot changed (or may have) */
} touch;

/* A batch touching up to this many ids keeps them in the set itself and
 * finds one by a scan: no allocation for the common one-op batch. */
#define TOUCH_INLINE 8

typedef struct touch_set {
	touch *v;       /* 'small' until the set outgrows it, then the heap */
	int n, cap;
	int *slots;     /* open addressing into v; -1 empty; NULL while v is 'small' */
	int n_slots;    /* power of two, > 2 * n */
	touch small[TOUCH_INLINE];
} touch_set;

static void touch_set_init(touch_set *ts)
{
	ts->v = ts->small;
	ts->n = 0;
	ts->cap = TOUCH_INLINE;
	ts->slots = NULL;
	ts->n_slots = 0;
}

static uint32_t str_hash(const char *str)
{
	uint32_t h = 2166136261u;

	for (; *str; str++)
		h = (h ^ (uint8_t)*str) * 16777619u;
	return h;
}

static void touch_set_release(touch_set *ts)
{
	if (ts->v != ts->small)
		free(ts->v);
	free(ts->slots);
	touch_set_init(ts);
}

static int touch_set_rehash(touch_set *ts, int n_slots)
{
	int *slots = malloc(sizeof(int) * (size_t)n_slots);

	if (!slots)
		return RIGD_E_NOMEM;
	memset(slots, 0xff, sizeof(int) * (size_t)n_slots);
	for (int i = 0; i < ts->n; i++) {
		uint32_t j = str_hash(ts->v[i].id.s) & (uint32_t)(n_slots - 1);

		while (slots[j] >= 0)
			j = (j + 1) & (uint32_t)(n_slots - 1);
		slots[j] = i;
	}
	free(ts->slots);
	ts->slots = slots;
	ts->n_slots = n_slots;
	return 0;
}

/* Moves a full inline set to the heap, with its hash slots. */
static int touch_set_spill(touch_set *ts)
{
	touch *v = malloc(sizeof(touch) * 4 * TOUCH_INLINE);
	int rc;

	if (!v)
		return RIGD_E_NOMEM;
	memcpy(v, ts->small, sizeof(touch) * (size_t)ts->n);
	ts->v = v;
	ts->cap = 4 * TOUCH_INLINE;
	if ((rc = touch_set_rehash(ts, 8 * TOUCH_INLINE)) != 0) {
		ts->v = ts->small;
		ts->cap = TOUCH_INLINE;
		free(v);
	}
	return rc;
}

static void touch_mark(touch *t, bool dirty, bool other)
{
	t->dirty |= dirty;
	t->other |= other;
}

/*
 * Records that the batch touches 'id' (whose node exists now when 'exists'),
 * marking its subtree stale when 'dirty'. The first touch of an id decides
 * 'before': no earlier op of the batch changed whether it exists, because
 * every op that does touches it. 'other' says that a field besides the
 * transform channels (t, r, s, pivot) changed or may have.
 */
static int touch_id_fields(touch_set *ts, const char *id, bool exists, bool dirty, bool other)
{
	uint32_t j = 0;
	int rc;

	if (!ts->slots) {
		for (int i = 0; i < ts->n; i++)
			if (strcmp(ts->v[i].id.s, id) == 0) {
				touch_mark(&ts->v[i], dirty, other);
				return 0;
			}
		if (ts->n == TOUCH_INLINE && (rc = touch_set_spill(ts)) != 0)
			return rc;
	}
	if (ts->slots) {
		if (2 * (ts->n + 1) >= ts->n_slots && (rc = touch_set_rehash(ts, ts->n_slots * 2)) != 0)
			return rc;
		j = str_hash(id) & (uint32_t)(ts->n_slots - 1);
		while (ts->slots[j] >= 0) {
			touch *t = &ts->v[ts->slots[j]];

			if (strcmp(t->id.s, id) == 0) {
				touch_mark(t, dirty, other);
				return 0;
			}
			j = (j + 1) & (uint32_t)(ts->n_slots - 1);
		}
		if (ts->n == ts->cap) {
			int nc = ts->cap * 2;
			touch *v = realloc(ts->v, sizeof(touch) * (size_t)nc);

			if (!v)
				return RIGD_E_NOMEM;
			ts->v = v;
			ts->cap = nc;
		}
		ts->slots[j] = ts->n;
	}
	snprintf(ts->v[ts->n].id.s, sizeof(ts->v[ts->n].id.s), "%s", id);
	ts->v[ts->n].before = exists;
	ts->v[ts->n].dirty = dirty;
	ts->v[ts->n].other = other;
	ts->n++;
	return 0;
}

/* touch_id_fields for an op that may change any field. */
static int touch_id(touch_set *ts, const char *id, bool exists, bool dirty)
{
	return touch_id_fields(ts, id, exists, dirty, true);
}

typedef struct range {
	int first, end;
} range;

static int cmp_range(const void *x, const void *y)
{
	const range *a = x, *b = y;

	if (a->first != b->first)
		return (a->first > b->first) - (a->first < b->first);
	return (a->end < b->end) - (a->end > b->end); /* the enclosing range first */
}

static int push_id(edit_id **list, int *n, const char *id)
{
	/* Lists grow by powers of two; *n is the only size kept. */
	if ((*n & (*n - 1)) == 0) {
		int nc = *n ? *n * 2 : 8;
		edit_id *l = realloc(*list, sizeof(edit_id) * (size_t)nc);

		if (!l)
			return RIGD_E_NOMEM;
		*list = l;
	}
	memcpy((*list)[*n].s, id, sizeof((*list)[*n].s));
	(*n)++;
	return 0;
}

/* Sets flag 'at' of a list that grows as push_id's does (at == its old n). */
static int push_flag(bool **list, int at, bool flag)
{
	if ((at & (at - 1)) == 0) {
		bool *l = realloc(*list, sizeof(bool) * (size_t)(at ? at * 2 : 8));

		if (!l)
			return RIGD_E_NOMEM;
		*list = l;
	}
	(*list)[at] = flag;
	return 0;
}

/* Fills 'res' from the ids the batch touched, on the tree after the batch. */
static int build_result(const scene *s, const touch_set *ts, edit_result *res)
{
	range small[TOUCH_INLINE], *ranges = small;
	int n_ranges = 0, rc = 0, cur_end = INT_MIN;

	if (ts->n > TOUCH_INLINE && !(ranges = malloc(sizeof(range) * (size_t)ts->n)))
		return RIGD_E_NOMEM;
	for (int i = 0; i < ts->n && rc == 0; i++) {
		const touch *t = &ts->v[i];
		int node = scene_find(s, t->id.s);

		if (node >= 0 && t->dirty) {
			ranges[n_ranges].first = scene_pos(s, node);
			ranges[n_ranges].end = ranges[n_ranges].first + scene_subtree_size(s, node);
			n_ranges++;
		}
		if (node >= 0 && !t->before)
			rc = push_id(&res->created, &res->n_created, t->id.s);
		else if (node >= 0 && (rc = push_id(&res->changed, &res->n_changed, t->id.s)) != 0)
			break;
		else if (node >= 0)
			rc = push_flag(&res->changed_locals, res->n_changed - 1, !t->other);
		else if (t->before)
			rc = push_id(&res->removed, &res->n_removed, t->id.s);
	}
	/* Subtree ranges are nested or disjoint: sorted by start with the
	 * enclosing one first, a range starting inside the last counted one is
	 * inside it. */
	if (n_ranges > 1)
		qsort(ranges, (size_t)n_ranges, sizeof(range), cmp_range);
	res->recomputed = 0;
	for (int i = 0; i < n_ranges; i++) {
		if (ranges[i].first < cur_end)
			continue;
		res->recomputed += ranges[i].end - ranges[i].first;
		cur_end = ranges[i].end;
	}
	if (ranges != small)
		free(ranges);
	return rc;
}

/* ---------- one op ---------- */

/* An error from the scene for op k, with the field it concerns. */
static int scene_error(int rc, int k, const char *field, edit_error *err)
{
	edit_error_set(err, rc, k, field, "%s", err_str(rc));
	return rc;
}

typedef struct apply_ctx {
	scene *s;
	const edit_limits *lim;
	edit_batch *undo;       /* the inverses recorded so far */
	touch_set *touched;     /* NULL when nobody wants the result */
	edit_batch *resolved;   /* the batch as applied; NULL when not wanted */
	/* Where each group of inverses starts in 'undo': one group per
	 * absolute op applied (a relative op may apply two), so the inverse
	 * is ordered as the resolved batch's own inverse would be. */
	int *starts;
	int n_groups;
	edit_ik_report *ik;     /* one per ik op applied */
	int n_ik, cap_ik;
	edit_error *err;
} apply_ctx;

static int apply_create(apply_ctx *c, const edit_op *op, int k)
{
	node_props p = node_props_default();
	int parent, rc, n_undo = c->undo ? c->undo->n_ops : 0;
	char q[QUOTED_MAX];

	if ((rc = ed_find_parent(c->s, op, k, &parent, c->err)) != 0)
		return rc;
	if (scene_find(c->s, op->id) >= 0) {
		edit_error_set(c->err, RIGD_E_DUPLICATE_ID, k, "id", "node '%s' already exists",
			       ed_quoted(op->id, q));
		return RIGD_E_DUPLICATE_ID;
	}
	/* Counting children is O(children): only for an explicit index. */
	if (op->index >= 0 && op->index > scene_child_count(c->s, parent)) {
		edit_error_set(c->err, RIGD_E_BAD_INDEX, k, "index", "index %d: %s", op->index,
			       err_str(RIGD_E_BAD_INDEX));
		return RIGD_E_BAD_INDEX;
	}
	ed_props_from_op(op, &p);
	if ((rc = ed_check_draw(c->s, op, k, c->err)) != 0 ||
	    (rc = ed_check_props(op, k, &p, c->err)) != 0 ||
	    (rc = ed_check_plane(c->s, op, k, &p, c->err)) != 0)
		return rc;
	if (scene_count(c->s) >= scene_max_nodes(c->s)) {
		edit_error_set(c->err, RIGD_E_LIMIT, k, "id", "the scene holds its maximum of %d nodes",
			       scene_max_nodes(c->s));
		return RIGD_E_LIMIT;
	}
	if (c->touched && (rc = touch_id(c->touched, op->id, false, true)) != 0)
		return scene_error(rc, k, "", c->err);
	if (c->undo && !edit_batch_add(c->undo, EDIT_DELETE, op->id))
		return scene_error(RIGD_E_NOMEM, k, "", c->err);
	rc = scene_create(c->s, op->id, parent, op->index, &p, NULL);
	if (rc) {
		ed_undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_set(apply_ctx *c, const edit_op *op, int k)
{
	node_props p;
	int node, rc, n_undo = c->undo ? c->undo->n_ops : 0;
	unsigned mask = ed_prop_mask(op->fields);

	if ((rc = ed_find_node(c->s, op, k, &node, c->err)) != 0)
		return rc;
	scene_props(c->s, node, &p);
	ed_props_from_op(op, &p);
	if ((rc = ed_check_draw(c->s, op, k, c->err)) != 0 ||
	    (rc = ed_check_props(op, k, &p, c->err)) != 0 ||
	    (rc = ed_check_plane(c->s, op, k, &p, c->err)) != 0)
		return rc;
	if (c->touched &&
	    (rc = touch_id_fields(c->touched, op->id, true, (op->fields & TRANSFORM_FIELDS) != 0,
				  (op->fields & ~LOCALS_FIELDS) != 0)) != 0)
		return scene_error(rc, k, "", c->err);
	if (c->undo && (rc = ed_record_old_values(c->s, node, op->fields, c->undo)) != 0) {
		ed_undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	rc = scene_set(c->s, node, mask, &p);
	if (rc) {
		ed_undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_reparent(apply_ctx *c, const edit_op *op, int k)
{
	int node, parent, old_parent, siblings, rc, n_undo = c->undo ? c->undo->n_ops : 0;
	char q[QUOTED_MAX], q2[QUOTED_MAX];

	if ((rc = ed_find_node(c->s, op, k, &node, c->err)) != 0 ||
	    (rc = ed_find_parent(c->s, op, k, &parent, c->err)) != 0)
		return rc;
	if (parent >= 0 && scene_is_ancestor(c->s, node, parent)) {
		edit_error_set(c->err, RIGD_E_CYCLE, k, "parent",
			       "cannot move '%s' under '%s', which is inside its subtree",
			       ed_quoted(op->id, q), ed_quoted(op->parent, q2));
		return RIGD_E_CYCLE;
	}
	old_parent = scene_parent(c->s, node);
	siblings = op->index < 0 ? 0 : scene_child_count(c->s, parent) - (old_parent == parent ? 1 : 0);
	if (op->index > siblings) {
		edit_error_set(c->err, RIGD_E_BAD_INDEX, k, "index", "index %d: %s", op->index,
			       err_str(RIGD_E_BAD_INDEX));
		return RIGD_E_BAD_INDEX;
	}
	if (c->touched && (rc = touch_id(c->touched, op->id, true, true)) != 0)
		return scene_error(rc, k, "", c->err);
	if (c->undo) {
		edit_op *back = edit_batch_add(c->undo, EDIT_REPARENT, op->id);

		if (!back)
			return scene_error(RIGD_E_NOMEM, k, "", c->err);
		edit_op_set_parent(back, old_parent >= 0 ? scene_id(c->s, old_parent) : NULL);
		back->fields |= EDIT_F_INDEX;
		back->index = scene_child_index(c->s, node);
		if (op->keep_world &&
		    (rc = ed_record_old_values(c->s, node, EDIT_F_T | EDIT_F_R | EDIT_F_S, c->undo)) != 0) {
			ed_undo_truncate(c->undo, n_undo);
			return scene_error(rc, k, "", c->err);
		}
	}
	rc = scene_reparent(c->s, node, parent, op->index, op->keep_world);
	if (rc) {
		ed_undo_truncate(c->undo, n_undo);
		if (rc == RIGD_E_NOT_TRS || rc == RIGD_E_SINGULAR) {
			edit_error_set(c->err, rc, k, "keep_world",
				       "keep_world: %s under '%s'", err_str(rc),
				       parent >= 0 ? ed_quoted(op->parent, q) : "the root");
			return rc;
		}
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_delete(apply_ctx *c, const edit_op *op, int k)
{
	int node, rc, first, end, n_undo = c->undo ? c->undo->n_ops : 0;

	if ((rc = ed_find_node(c->s, op, k, &node, c->err)) != 0)
		return rc;
	first = scene_pos(c->s, node);
	end = first + scene_subtree_size(c->s, node);
	if (c->undo && (rc = edit_batch_reserve(c->undo, c->undo->n_ops + (end - first))) != 0)
		return scene_error(rc, k, "", c->err);
	/* Preorder, so that each restoring create finds its parent made and its
	 * earlier siblings in place: the top node goes back to its sibling
	 * index, every other node is appended under its restored parent. (Asking
	 * the scene for each node's sibling index would cost O(siblings) a node,
	 * quadratic in a wide subtree.) */
	for (int i = first; i < end; i++) {
		int n = scene_at(c->s, i);

		if ((c->touched && (rc = touch_id(c->touched, scene_id(c->s, n), true, false)) != 0) ||
		    (c->undo && (rc = ed_record_restore(c->s, n, i == first ? scene_child_index(c->s, n) : -1,
						     c->undo)) != 0)) {
			ed_undo_truncate(c->undo, n_undo);
			return scene_error(rc, k, "", c->err);
		}
	}
	rc = scene_delete(c->s, node);
	if (rc) {
		ed_undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

/* One absolute op (create, set, reparent, delete), its shape checked. */
static int apply_absolute(apply_ctx *c, const edit_op *op, int k)
{
	/* Every apply_ below relies on the op's shape being valid. */
	assert(!edit_op_is_relative(op->kind));
	assert((op->fields & ~edit_fields_allowed(op->kind)) == 0);
	switch (op->kind) {
	case EDIT_POSE_SET:
	case EDIT_POSE_DELETE: return ed_apply_pose(c->s, op, k, c->undo, c->err);
	case EDIT_CREATE: return apply_create(c, op, k);
	case EDIT_SET: return apply_set(c, op, k);
	case EDIT_REPARENT: return apply_reparent(c, op, k);
	default: return apply_delete(c, op, k);
	}
}

/*
 * Applies absolute op 'op' (for batch op k) and, when the resolved batch is
 * wanted, appends a copy of it there. Everything the copy needs is
 * allocated before the op is made, so once the op is in the scene nothing
 * can fail.
 */
static int apply_kept(apply_ctx *c, const edit_op *op, int k)
{
	char *name = NULL, *mesh = NULL, *layer = NULL;
	pose_channel *ch = NULL;
	bool oom = false;
	edit_op *kept;
	int rc;

	if (c->resolved &&
	    ((c->resolved->n_ops == c->resolved->cap_ops &&
	      edit_batch_reserve(c->resolved, c->resolved->cap_ops ? 2 * c->resolved->cap_ops : 8)) ||
	     (op->name && !(name = strdup(op->name))) || (op->mesh && !(mesh = strdup(op->mesh))) ||
	     (op->layer && !(layer = strdup(op->layer))) ||
	     ((ch = pose_channels_dup(op->channels, op->n_channels, &oom)), oom))) {
		free(name);
		free(mesh);
		free(layer);
		return scene_error(RIGD_E_NOMEM, k, "", c->err);
	}
	if ((rc = apply_absolute(c, op, k)) != 0) {
		free(name);
		free(mesh);
		free(layer);
		free(ch);
		return rc;
	}
	if (c->resolved) {
		kept = &c->resolved->ops[c->resolved->n_ops++];
		*kept = *op;
		kept->name = name;
		kept->mesh = mesh;
		kept->layer = layer;
		kept->channels = ch;
	}
	return 0;
}

/*
 * A relative op (rotate, move, ik) or an absolute one with an angle:
 * resolved into the absolute ops it amounts to, which are applied (and
 * kept) in turn. Should the second of them fail, the caller's rollback
 * takes back the first with the rest of op k's inverses.
 */
static int apply_relative(apply_ctx *c, const edit_op *op, int k)
{
	edit_op abs_ops[2];
	edit_ik_report rep;
	int n = 0, rc;

	if (op->kind == EDIT_IK && c->n_ik == c->cap_ik) {
		int nc = c->cap_ik ? 2 * c->cap_ik : 4;
		edit_ik_report *v = realloc(c->ik, sizeof(*v) * (size_t)nc);

		if (!v)
			return scene_error(RIGD_E_NOMEM, k, "", c->err);
		c->ik = v;
		c->cap_ik = nc;
	}
	if ((rc = ed_resolve(c->s, op, k, abs_ops, &n, &rep, c->err)) != 0)
		return rc;
	assert(n >= 1 && n <= 2);
	for (int i = 0; i < n; i++) {
		if (i > 0)
			c->starts[c->n_groups++] = c->undo->n_ops;
		if ((rc = apply_kept(c, &abs_ops[i], k)) != 0)
			return rc;
	}
	if (op->kind == EDIT_IK) {
		int end = scene_find(c->s, op->chain_end);

		/* The distance left is measured on the scene as the sets left it. */
		rep.distance = vec3_length(vec3_sub(ed_joint_world(c->s, end), op->target));
		c->ik[c->n_ik++] = rep;
	}
	return 0;
}

/*
 * A pose_save, applied as the pose_set of the channels it captured, or a
 * blend or a clip, applied as the set ops of the channels it produced:
 * all of them one group of inverses (a blend's or a clip's sets touch
 * distinct nodes, so their inverses may run in any order).
 */
static int apply_pose_relative(apply_ctx *c, const edit_op *op, int k)
{
	edit_batch sets;
	edit_op save;
	int rc, first;

	if (op->kind == EDIT_POSE_SAVE) {
		if ((rc = ed_resolve_pose_save(c->s, op, k, &save, c->err)) != 0)
			return rc;
		rc = apply_kept(c, &save, k);
		ed_op_release(&save);
		return rc;
	}
	rc = op->kind == EDIT_CLIP ? ed_resolve_clip(c->s, op, k, &sets, c->err)
				   : ed_resolve_blend(c->s, op, k, &sets, c->err);
	if (rc != 0)
		return rc;
	first = c->undo->n_ops;
	for (int i = 0; i < sets.n_ops && rc == 0; i++)
		rc = apply_kept(c, &sets.ops[i], k);
	edit_batch_release(&sets);
	/* One inverse set per set, reversed: the inverse the resolved batch
	 * (one group per set) would have, so a log's stored inverse and its
	 * replay's agree op for op. */
	for (int lo = first, hi = c->undo->n_ops - 1; rc == 0 && lo < hi; lo++, hi--) {
		edit_op t = c->undo->ops[lo];

		c->undo->ops[lo] = c->undo->ops[hi];
		c->undo->ops[hi] = t;
	}
	return rc;
}

static int apply_op(apply_ctx *c, const edit_op *op, int k)
{
	int rc = ed_check_shape(op, k, c->lim, c->err);

	if (rc)
		return rc;
	if (op->kind == EDIT_POSE_SAVE || op->kind == EDIT_BLEND || op->kind == EDIT_CLIP)
		return apply_pose_relative(c, op, k);
	if (edit_op_is_relative(op->kind) || (op->fields & EDIT_F_ANGLE))
		return apply_relative(c, op, k);
	return apply_kept(c, op, k);
}

/* ---------- the batch ---------- */

int edit_apply_ex(scene *s, const edit_batch *b, const edit_limits *lim, edit_result *res,
		  edit_batch *inverse, edit_error *err)
{
	return edit_apply_resolve(s, b, lim, res, inverse, NULL, err);
}

/* The checks of a batch as a whole: its op count, client and client_seq. */
static int check_batch(const edit_batch *b, const edit_limits *lim, edit_error *err)
{
	char q[QUOTED_MAX];

	if (b->n_ops < 0 || (lim && b->n_ops > lim->max_ops)) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "ops", "%d ops in one batch; the limit is %d",
			       b->n_ops, lim ? lim->max_ops : 0);
		return RIGD_E_LIMIT;
	}
	if (b->client[0] && !scene_id_valid(b->client)) {
		edit_error_set(err, RIGD_E_BAD_ID, -1, "client", "bad client id '%s': %s",
			       ed_quoted(b->client, q), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	if (b->has_client_seq && b->client_seq < 0) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client_seq",
			       "client_seq must be a non-negative integer");
		return RIGD_E_BAD_FIELD;
	}
	return 0;
}

int edit_apply_resolve(scene *s, const edit_batch *b, const edit_limits *lim, edit_result *res,
		       edit_batch *inverse, edit_batch *resolved, edit_error *err)
{
	edit_batch undo;
	touch_set touched;
	int small_starts[2 * TOUCH_INLINE + 1], *starts = NULL;
	int rc = 0, k = 0;
	apply_ctx c = { .s = s, .lim = lim, .undo = &undo, .touched = res ? &touched : NULL,
			.resolved = resolved, .err = err };

	touch_set_init(&touched);
	edit_error_clear(err);
	edit_batch_init(&undo);
	if (res)
		edit_result_init(res);
	if (inverse)
		edit_batch_init(inverse);
	if (resolved) {
		edit_batch_init(resolved);
		memcpy(resolved->client, b->client, sizeof(resolved->client));
		resolved->has_client_seq = b->has_client_seq;
		resolved->client_seq = b->client_seq;
	}
	if ((rc = check_batch(b, lim, err)) != 0)
		return rc;
	/* At most two groups an op (an ik's two sets), and the end. */
	if (b->n_ops <= TOUCH_INLINE)
		starts = small_starts;
	else if (!(starts = malloc(sizeof(int) * (2 * (size_t)b->n_ops + 1)))) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	c.starts = starts;
	for (k = 0; k < b->n_ops; k++) {
		starts[c.n_groups++] = undo.n_ops;
		if ((rc = apply_op(&c, &b->ops[k], k)) != 0)
			break;
	}
	assert(rc || k == b->n_ops);
	assert(c.n_groups <= 2 * b->n_ops);
	/* The groups so far, the failing op's part included (the first set of
	 * an ik may be made when the second fails): a rollback takes all. */
	starts[c.n_groups] = undo.n_ops;
	if (rc) {
		ed_rollback(s, &undo, starts, c.n_groups);
		goto out;
	}
	if (res && (rc = build_result(s, &touched, res)) != 0) {
		/* The batch applied but its result cannot be kept: take it back
		 * rather than report a success half told. */
		ed_rollback(s, &undo, starts, c.n_groups);
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	if (res) {
		res->ik = c.ik;
		res->n_ik = c.n_ik;
		c.ik = NULL;
	}
	if (inverse) {
		/* Every op recorded its inverse, a delete one per node it removed. */
		assert(b->n_ops == 0 || undo.n_ops >= b->n_ops);
		ed_reorder_inverse(&undo, starts, c.n_groups);
		edit_batch_move(inverse, &undo);
		memcpy(inverse->client, b->client, sizeof(inverse->client));
	}
out:
	if (rc && res)
		edit_result_release(res);
	if (rc && resolved)
		edit_batch_release(resolved);
	edit_batch_release(&undo);
	touch_set_release(&touched);
	free(c.ik);
	if (starts != small_starts)
		free(starts);
	return rc;
}

int edit_apply(scene *s, const edit_batch *b, edit_result *res, edit_batch *inverse,
	       edit_error *err)
{
	return edit_apply_ex(s, b, NULL, res, inverse, err);
}
