/*
 * edit.c: applying an edit batch to a scene, atomically, with its inverse.
 *
 * Each op is one scene call (scene_create, scene_set, scene_reparent,
 * scene_delete), and each of those either succeeds or changes nothing. Before
 * making it, the op's inverse is recorded from the values the scene stores,
 * so undoing never recomputes a value: a failed op k is rolled back by
 * applying the inverses of ops k-1..0, and the same inverses, in that order,
 * are the undo of an accepted batch. Everything a rollback needs is
 * allocated while recording (the strings it restores are copied into the
 * inverse ops and handed to the scene), so a rollback allocates nothing
 * and cannot fail, even when memory has run out.
 *
 * Restoring a rotation hands the scene the unit quaternion it stored. That
 * is exact only because normalising is idempotent (quat_normalize returns a
 * quaternion that is already unit to within rounding unchanged); were it
 * not, dividing by a computed length of 1 - 1ulp would move the value.
 *
 * This module never parses JSON and never brings world matrices up to date.
 */
#include "edit.h"

#include "err.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fields each op accepts (see edit.h). */
#define CREATE_FIELDS                                                                      \
	(EDIT_F_PARENT | EDIT_F_INDEX | EDIT_F_NAME | EDIT_F_T | EDIT_F_R | EDIT_F_S |     \
	 EDIT_F_PIVOT | EDIT_F_EULER | EDIT_F_BOUNDS | EDIT_F_MESH | EDIT_F_KIND | EDIT_F_FOV | \
	 EDIT_F_NEAR | EDIT_F_FAR | EDIT_F_VISIBLE)
#define SET_FIELDS (CREATE_FIELDS & ~(EDIT_F_PARENT | EDIT_F_INDEX))
#define REPARENT_FIELDS (EDIT_F_PARENT | EDIT_F_INDEX | EDIT_F_KEEP_WORLD)
#define DELETE_FIELDS 0u
/* Everything a create restoring a deleted node carries. */
#define RESTORE_FIELDS (CREATE_FIELDS & ~EDIT_F_EULER)
#define CAMERA_FIELDS (EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR)
#define TRANSFORM_FIELDS (EDIT_F_T | EDIT_F_R | EDIT_F_S | EDIT_F_PIVOT | EDIT_F_EULER)

static const char *const field_names[EDIT_F_COUNT_] = {
	"parent", "index", "name", "t", "r", "s", "pivot", "euler",
	"bounds", "mesh", "kind", "fov", "near", "far", "visible", "keep_world",
};

static const char *const kind_names[] = { "group", "mesh", "camera" };
static const char *const op_names[] = { "create", "set", "reparent", "delete" };

const char *edit_field_name(unsigned field_bit)
{
	for (int i = 0; i < EDIT_F_COUNT_; i++)
		if (field_bit == 1u << i)
			return field_names[i];
	return "";
}

unsigned edit_fields_allowed(int op_kind)
{
	static const unsigned allowed[] = { 0, CREATE_FIELDS, SET_FIELDS, REPARENT_FIELDS,
					    DELETE_FIELDS };

	return op_kind >= EDIT_CREATE && op_kind <= EDIT_DELETE ? allowed[op_kind] : 0;
}

const char *edit_kind_name(int node_kind)
{
	return node_kind >= NODE_GROUP && node_kind <= NODE_CAMERA ? kind_names[node_kind] : "";
}

int edit_kind_from_name(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, kind_names[i]) == 0)
			return i;
	return -1;
}

const char *edit_op_name(int op_kind)
{
	return op_kind >= EDIT_CREATE && op_kind <= EDIT_DELETE ? op_names[op_kind - 1] : "";
}

int edit_op_from_name(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, op_names[i]) == 0)
			return EDIT_CREATE + i;
	return -1;
}

edit_limits edit_limits_default(void)
{
	return (edit_limits){ .max_ops = EDIT_DEFAULT_MAX_OPS, .max_id_len = SCENE_ID_MAX };
}

/* ---------- batches ---------- */

void edit_batch_init(edit_batch *b)
{
	memset(b, 0, sizeof(*b));
}

static void op_release(edit_op *op)
{
	free(op->name);
	free(op->mesh);
	op->name = op->mesh = NULL;
}

void edit_batch_release(edit_batch *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n_ops; i++)
		op_release(&b->ops[i]);
	free(b->ops);
	edit_batch_init(b);
}

edit_batch *edit_batch_new(void)
{
	edit_batch *b = malloc(sizeof(*b));

	if (b)
		edit_batch_init(b);
	return b;
}

void edit_batch_free(edit_batch *b)
{
	edit_batch_release(b);
	free(b);
}

int edit_batch_reserve(edit_batch *b, int n)
{
	edit_op *ops;

	if (n <= b->cap_ops)
		return 0;
	ops = realloc(b->ops, sizeof(*ops) * (size_t)n);
	if (!ops)
		return RIGD_E_NOMEM;
	b->ops = ops;
	b->cap_ops = n;
	return 0;
}

edit_op *edit_batch_add(edit_batch *b, int kind, const char *id)
{
	size_t id_len = strlen(id);
	edit_op *op;

	if (id_len > SCENE_ID_MAX)
		return NULL;
	if (b->n_ops == b->cap_ops) {
		if (b->cap_ops > INT_MAX / 2 ||
		    edit_batch_reserve(b, b->cap_ops ? b->cap_ops * 2 : 4) != 0)
			return NULL;
	}
	op = &b->ops[b->n_ops++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->index = -1;
	memcpy(op->id, id, id_len + 1);
	return op;
}

int edit_op_set_parent(edit_op *op, const char *parent)
{
	size_t n = parent ? strlen(parent) : 0;

	if (n > SCENE_ID_MAX)
		return RIGD_E_BAD_ID;
	if (n)
		memcpy(op->parent, parent, n);
	op->parent[n] = '\0';
	op->fields |= EDIT_F_PARENT;
	return 0;
}

static int set_string(char **slot, const char *value)
{
	char *copy = NULL;

	if (value && !(copy = strdup(value)))
		return RIGD_E_NOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

int edit_op_set_name(edit_op *op, const char *name)
{
	int rc = set_string(&op->name, name);

	if (rc == 0)
		op->fields |= EDIT_F_NAME;
	return rc;
}

int edit_op_set_mesh(edit_op *op, const char *mesh)
{
	int rc = set_string(&op->mesh, mesh);

	if (rc == 0)
		op->fields |= EDIT_F_MESH;
	return rc;
}

int edit_batch_copy(edit_batch *dst, const edit_batch *src)
{
	edit_batch_init(dst);
	memcpy(dst->client, src->client, sizeof(dst->client));
	dst->has_client_seq = src->has_client_seq;
	dst->client_seq = src->client_seq;
	if (src->n_ops == 0)
		return 0;
	dst->ops = malloc(sizeof(edit_op) * (size_t)src->n_ops);
	if (!dst->ops)
		goto nomem;
	dst->cap_ops = src->n_ops;
	for (int i = 0; i < src->n_ops; i++) {
		edit_op *op = &dst->ops[i];

		*op = src->ops[i];
		op->name = op->mesh = NULL;
		dst->n_ops = i + 1;
		if ((src->ops[i].name && !(op->name = strdup(src->ops[i].name))) ||
		    (src->ops[i].mesh && !(op->mesh = strdup(src->ops[i].mesh))))
			goto nomem;
	}
	return 0;
nomem:
	edit_batch_release(dst);
	return RIGD_E_NOMEM;
}

void edit_batch_move(edit_batch *dst, edit_batch *src)
{
	edit_batch_release(dst);
	*dst = *src;
	edit_batch_init(src);
}

/* ---------- results and errors ---------- */

void edit_result_init(edit_result *r)
{
	memset(r, 0, sizeof(*r));
}

void edit_result_release(edit_result *r)
{
	if (!r)
		return;
	free(r->created);
	free(r->changed);
	free(r->removed);
	edit_result_init(r);
}

void edit_error_clear(edit_error *e)
{
	if (!e)
		return;
	e->code = 0;
	e->op = -1;
	e->field[0] = '\0';
	e->message[0] = '\0';
}

void edit_error_set(edit_error *e, int code, int op, const char *field, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!e)
		return;
	e->code = code;
	e->op = op;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	n = 0;
	if (op >= 0)
		n = (size_t)snprintf(e->message, sizeof(e->message), "op %d: ", op);
	va_start(ap, fmt);
	vsnprintf(e->message + n, sizeof(e->message) - n, fmt, ap);
	va_end(ap);
}

/*
 * An id from a batch, fit to be quoted in a message: at most 64 characters,
 * anything outside printable ASCII (and the quote) shown as '?', and "..."
 * when it was longer. 'out' holds SCENE_ID_MAX + 4 bytes.
 */
static const char *quoted(const char *id, char *out)
{
	size_t i;

	for (i = 0; id[i] && i < SCENE_ID_MAX; i++)
		out[i] = (id[i] >= 0x20 && id[i] < 0x7f && id[i] != '\'') ? id[i] : '?';
	if (id[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

#define QUOTED_MAX (SCENE_ID_MAX + 4)

/* ---------- the ids a batch touched (for edit_result) ---------- */

typedef struct touch {
	edit_id id;
	bool before;    /* the node existed before the batch */
	bool dirty;     /* its subtree's world matrices went stale */
} touch;

typedef struct touch_set {
	touch *v;
	int n, cap;
	int *slots;     /* open addressing into v; -1 empty */
	int n_slots;    /* power of two, > 2 * n */
} touch_set;

static uint32_t str_hash(const char *str)
{
	uint32_t h = 2166136261u;

	for (; *str; str++)
		h = (h ^ (uint8_t)*str) * 16777619u;
	return h;
}

static void touch_set_release(touch_set *ts)
{
	free(ts->v);
	free(ts->slots);
	memset(ts, 0, sizeof(*ts));
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

/*
 * Records that the batch touches 'id' (whose node exists now when 'exists'),
 * marking its subtree stale when 'dirty'. The first touch of an id decides
 * 'before': no earlier op of the batch changed whether it exists, because
 * every op that does touches it.
 */
static int touch_id(touch_set *ts, const char *id, bool exists, bool dirty)
{
	uint32_t j;

	if (2 * (ts->n + 1) >= ts->n_slots) {
		int rc = touch_set_rehash(ts, ts->n_slots ? ts->n_slots * 2 : 64);

		if (rc)
			return rc;
	}
	j = str_hash(id) & (uint32_t)(ts->n_slots - 1);
	while (ts->slots[j] >= 0) {
		touch *t = &ts->v[ts->slots[j]];

		if (strcmp(t->id.s, id) == 0) {
			t->dirty |= dirty;
			return 0;
		}
		j = (j + 1) & (uint32_t)(ts->n_slots - 1);
	}
	if (ts->n == ts->cap) {
		int nc = ts->cap ? ts->cap * 2 : 32;
		touch *v = realloc(ts->v, sizeof(touch) * (size_t)nc);

		if (!v)
			return RIGD_E_NOMEM;
		ts->v = v;
		ts->cap = nc;
	}
	snprintf(ts->v[ts->n].id.s, sizeof(ts->v[ts->n].id.s), "%s", id);
	ts->v[ts->n].before = exists;
	ts->v[ts->n].dirty = dirty;
	ts->slots[j] = ts->n++;
	return 0;
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

/* Fills 'res' from the ids the batch touched, on the tree after the batch. */
static int build_result(const scene *s, const touch_set *ts, edit_result *res)
{
	range *ranges = NULL;
	int n_ranges = 0, rc = 0, cur_end = INT_MIN;

	if (ts->n && !(ranges = malloc(sizeof(range) * (size_t)ts->n)))
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
		else if (node >= 0)
			rc = push_id(&res->changed, &res->n_changed, t->id.s);
		else if (t->before)
			rc = push_id(&res->removed, &res->n_removed, t->id.s);
	}
	/* Subtree ranges are nested or disjoint: sorted by start with the
	 * enclosing one first, a range starting inside the last counted one is
	 * inside it. */
	qsort(ranges, (size_t)n_ranges, sizeof(range), cmp_range);
	res->recomputed = 0;
	for (int i = 0; i < n_ranges; i++) {
		if (ranges[i].first < cur_end)
			continue;
		res->recomputed += ranges[i].end - ranges[i].first;
		cur_end = ranges[i].end;
	}
	free(ranges);
	return rc;
}

/* ---------- one op ---------- */

/* The scene's PROP_ mask for an op's fields. */
static unsigned prop_mask(unsigned fields)
{
	unsigned m = 0;

	if (fields & EDIT_F_T)
		m |= PROP_T;
	if (fields & (EDIT_F_R | EDIT_F_EULER))
		m |= PROP_R;
	if (fields & EDIT_F_S)
		m |= PROP_S;
	if (fields & EDIT_F_PIVOT)
		m |= PROP_PIVOT;
	if (fields & EDIT_F_BOUNDS)
		m |= PROP_BOUNDS;
	if (fields & EDIT_F_MESH)
		m |= PROP_MESH;
	if (fields & EDIT_F_NAME)
		m |= PROP_NAME;
	if (fields & EDIT_F_KIND)
		m |= PROP_KIND;
	if (fields & CAMERA_FIELDS)
		m |= PROP_CAMERA;
	if (fields & EDIT_F_VISIBLE)
		m |= PROP_VISIBLE;
	return m;
}

/* Overwrites the fields of 'p' the op carries. */
static void props_from_op(const edit_op *op, node_props *p)
{
	unsigned f = op->fields;

	if (f & EDIT_F_T)
		p->t = op->t;
	if (f & EDIT_F_R)
		p->r = op->r;
	if (f & EDIT_F_EULER)
		p->r = quat_from_euler_deg(op->euler_deg);
	if (f & EDIT_F_S)
		p->s = op->s;
	if (f & EDIT_F_PIVOT)
		p->pivot = op->pivot;
	if (f & EDIT_F_BOUNDS) {
		p->has_bounds = op->has_bounds;
		p->bounds = op->bounds;
	}
	if (f & EDIT_F_MESH)
		p->mesh = op->mesh;
	if (f & EDIT_F_NAME)
		p->name = op->name;
	if (f & EDIT_F_KIND)
		p->kind = op->node_kind;
	if (f & EDIT_F_FOV)
		p->fov_deg = op->fov_deg;
	if (f & EDIT_F_NEAR)
		p->znear = op->znear;
	if (f & EDIT_F_FAR)
		p->zfar = op->zfar;
	if (f & EDIT_F_VISIBLE)
		p->visible = op->visible;
}

/* Checks 'p' for the fields the op carries, naming the offending field. */
static int check_props(const edit_op *op, int k, const node_props *p, edit_error *err)
{
	unsigned bad = 0;
	const char *field = "";
	int rc;

	if ((op->fields & EDIT_F_EULER) &&
	    !(isfinite(op->euler_deg.x) && isfinite(op->euler_deg.y) && isfinite(op->euler_deg.z))) {
		edit_error_set(err, RIGD_E_NOT_FINITE, k, "euler", "euler: %s",
			       err_str(RIGD_E_NOT_FINITE));
		return RIGD_E_NOT_FINITE;
	}
	rc = node_props_check(p, prop_mask(op->fields), &bad);
	if (rc == 0)
		return 0;
	switch (bad) {
	case PROP_T: field = "t"; break;
	case PROP_R: field = (op->fields & EDIT_F_EULER) ? "euler" : "r"; break;
	case PROP_S: field = "s"; break;
	case PROP_PIVOT: field = "pivot"; break;
	case PROP_BOUNDS: field = "bounds"; break;
	case PROP_MESH: field = "mesh"; break;
	case PROP_NAME: field = "name"; break;
	case PROP_KIND: field = "kind"; break;
	case PROP_CAMERA:
		if (!isfinite(p->fov_deg) || !(p->fov_deg > 0 && p->fov_deg < 180))
			field = "fov";
		else if (!isfinite(p->znear) || !(p->znear > 0))
			field = "near";
		else if (!isfinite(p->zfar) || (op->fields & EDIT_F_FAR))
			field = "far";
		else
			field = "near";
		break;
	default: break;
	}
	if (rc == RIGD_E_BAD_FIELD && bad == PROP_BOUNDS)
		edit_error_set(err, rc, k, field, "bounds: min exceeds max");
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_MESH)
		edit_error_set(err, rc, k, field, "mesh: must be 1 to %d bytes", SCENE_MESH_MAX);
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_NAME)
		edit_error_set(err, rc, k, field, "name: longer than %d bytes", SCENE_NAME_MAX);
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_KIND)
		edit_error_set(err, rc, k, field, "kind: must be group, mesh or camera");
	else if (rc == RIGD_E_BAD_FIELD && bad == PROP_CAMERA)
		edit_error_set(err, rc, k, field, "%s: a camera needs 0 < fov < 180 and 0 < near < far",
			       field);
	else if (rc == RIGD_E_ZERO_QUATERNION)
		edit_error_set(err, rc, k, field, "%s", err_str(rc));
	else
		edit_error_set(err, rc, k, field, "%s: %s", field, err_str(rc));
	return rc;
}

/* Validation that needs no scene: kind, allowed fields, ids. */
static int check_shape(const edit_op *op, int k, const edit_limits *lim, edit_error *err)
{
	char q[QUOTED_MAX];
	unsigned extra;
	size_t max_id = lim ? (size_t)lim->max_id_len : SCENE_ID_MAX;

	if (op->kind < EDIT_CREATE || op->kind > EDIT_DELETE) {
		edit_error_set(err, RIGD_E_UNKNOWN_OP, k, "op", "unknown op %d", op->kind);
		return RIGD_E_UNKNOWN_OP;
	}
	extra = op->fields & ~edit_fields_allowed(op->kind);
	if (extra) {
		const char *f = edit_field_name(extra & -extra);

		edit_error_set(err, RIGD_E_BAD_FIELD, k, f, "field '%s' is not allowed in a %s op", f,
			       edit_op_name(op->kind));
		return RIGD_E_BAD_FIELD;
	}
	if (op->kind == EDIT_REPARENT && !(op->fields & EDIT_F_PARENT)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "parent",
			       "a reparent op needs 'parent' (null for a root)");
		return RIGD_E_BAD_FIELD;
	}
	if ((op->fields & EDIT_F_R) && (op->fields & EDIT_F_EULER)) {
		edit_error_set(err, RIGD_E_BAD_FIELD, k, "euler", "give either 'r' or 'euler', not both");
		return RIGD_E_BAD_FIELD;
	}
	if (!scene_id_valid(op->id) || strlen(op->id) > max_id) {
		edit_error_set(err, RIGD_E_BAD_ID, k, "id", "bad id '%s': %s", quoted(op->id, q),
			       err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	if ((op->fields & EDIT_F_PARENT) && op->parent[0] &&
	    (!scene_id_valid(op->parent) || strlen(op->parent) > max_id)) {
		edit_error_set(err, RIGD_E_BAD_ID, k, "parent", "bad parent id '%s': %s",
			       quoted(op->parent, q), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	if ((op->fields & EDIT_F_INDEX) && op->index < -1) {
		edit_error_set(err, RIGD_E_BAD_INDEX, k, "index", "index %d: %s", op->index,
			       err_str(RIGD_E_BAD_INDEX));
		return RIGD_E_BAD_INDEX;
	}
	return 0;
}

/* The parent handle an op names (-1 for a root), or UNKNOWN_NODE. */
static int find_parent(const scene *s, const edit_op *op, int k, int *parent, edit_error *err)
{
	char q[QUOTED_MAX];

	*parent = -1;
	if (!(op->fields & EDIT_F_PARENT) || !op->parent[0])
		return 0;
	*parent = scene_find(s, op->parent);
	if (*parent < 0) {
		edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, "parent", "unknown node '%s'",
			       quoted(op->parent, q));
		return RIGD_E_UNKNOWN_NODE;
	}
	return 0;
}

static int find_node(const scene *s, const edit_op *op, int k, int *node, edit_error *err)
{
	char q[QUOTED_MAX];

	*node = scene_find(s, op->id);
	if (*node < 0) {
		edit_error_set(err, RIGD_E_UNKNOWN_NODE, k, "id", "unknown node '%s'", quoted(op->id, q));
		return RIGD_E_UNKNOWN_NODE;
	}
	return 0;
}

/* Copies every value of 'p' but its strings into the op's fields (which
 * of them the op carries is the caller's business). */
static void op_from_props(edit_op *op, const node_props *p)
{
	op->t = p->t;
	op->r = p->r;
	op->s = p->s;
	op->pivot = p->pivot;
	op->has_bounds = p->has_bounds;
	op->bounds = p->bounds;
	op->node_kind = p->kind;
	op->fov_deg = p->fov_deg;
	op->znear = p->znear;
	op->zfar = p->zfar;
	op->visible = p->visible;
}

/*
 * Appends to 'undo' a create that restores 'node' exactly, with every
 * field, under its parent: at sibling 'index', or appended when index is
 * -1 (which, for restores made in preorder under a parent just restored,
 * is the same place).
 */
static int record_restore(const scene *s, int node, int index, edit_batch *undo)
{
	node_props p;
	int parent = scene_parent(s, node);
	edit_op *op = edit_batch_add(undo, EDIT_CREATE, scene_id(s, node));

	if (!op)
		return RIGD_E_NOMEM;
	scene_props(s, node, &p);
	op->fields = RESTORE_FIELDS & ~(index < 0 ? EDIT_F_INDEX : 0u);
	snprintf(op->parent, sizeof(op->parent), "%s", parent >= 0 ? scene_id(s, parent) : "");
	op->index = index;
	op_from_props(op, &p);
	if ((p.name && !(op->name = strdup(p.name))) || (p.mesh && !(op->mesh = strdup(p.mesh))))
		return RIGD_E_NOMEM; /* the op is released with 'undo' */
	return 0;
}

/* Appends to 'undo' a set of the old values of the fields in 'fields'. */
static int record_old_values(const scene *s, int node, unsigned fields, edit_batch *undo)
{
	node_props p;
	edit_op *op = edit_batch_add(undo, EDIT_SET, scene_id(s, node));

	if (!op)
		return RIGD_E_NOMEM;
	scene_props(s, node, &p);
	if (fields & EDIT_F_EULER)
		fields = (fields & ~EDIT_F_EULER) | EDIT_F_R;
	if (fields & CAMERA_FIELDS)
		fields |= CAMERA_FIELDS; /* the scene sets the three together */
	op->fields = fields;
	op_from_props(op, &p);
	if (((fields & EDIT_F_NAME) && p.name && !(op->name = strdup(p.name))) ||
	    ((fields & EDIT_F_MESH) && p.mesh && !(op->mesh = strdup(p.mesh))))
		return RIGD_E_NOMEM;
	return 0;
}

/* Drops the ops appended to 'undo' since it held 'n_before'. */
static void undo_truncate(edit_batch *undo, int n_before)
{
	while (undo && undo->n_ops > n_before)
		op_release(&undo->ops[--undo->n_ops]);
}

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
	edit_error *err;
} apply_ctx;

static int apply_create(apply_ctx *c, const edit_op *op, int k)
{
	node_props p = node_props_default();
	int parent, rc, n_undo = c->undo ? c->undo->n_ops : 0;
	char q[QUOTED_MAX];

	if ((rc = find_parent(c->s, op, k, &parent, c->err)) != 0)
		return rc;
	if (scene_find(c->s, op->id) >= 0) {
		edit_error_set(c->err, RIGD_E_DUPLICATE_ID, k, "id", "node '%s' already exists",
			       quoted(op->id, q));
		return RIGD_E_DUPLICATE_ID;
	}
	/* Counting children is O(children): only for an explicit index. */
	if (op->index >= 0 && op->index > scene_child_count(c->s, parent)) {
		edit_error_set(c->err, RIGD_E_BAD_INDEX, k, "index", "index %d: %s", op->index,
			       err_str(RIGD_E_BAD_INDEX));
		return RIGD_E_BAD_INDEX;
	}
	props_from_op(op, &p);
	if ((rc = check_props(op, k, &p, c->err)) != 0)
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
		undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_set(apply_ctx *c, const edit_op *op, int k)
{
	node_props p;
	int node, rc, n_undo = c->undo ? c->undo->n_ops : 0;
	unsigned mask = prop_mask(op->fields);

	if ((rc = find_node(c->s, op, k, &node, c->err)) != 0)
		return rc;
	scene_props(c->s, node, &p);
	props_from_op(op, &p);
	if ((rc = check_props(op, k, &p, c->err)) != 0)
		return rc;
	if (c->touched &&
	    (rc = touch_id(c->touched, op->id, true, (op->fields & TRANSFORM_FIELDS) != 0)) != 0)
		return scene_error(rc, k, "", c->err);
	if (c->undo && (rc = record_old_values(c->s, node, op->fields, c->undo)) != 0) {
		undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	rc = scene_set(c->s, node, mask, &p);
	if (rc) {
		undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_reparent(apply_ctx *c, const edit_op *op, int k)
{
	int node, parent, old_parent, siblings, rc, n_undo = c->undo ? c->undo->n_ops : 0;
	char q[QUOTED_MAX], q2[QUOTED_MAX];

	if ((rc = find_node(c->s, op, k, &node, c->err)) != 0 ||
	    (rc = find_parent(c->s, op, k, &parent, c->err)) != 0)
		return rc;
	if (parent >= 0 && scene_is_ancestor(c->s, node, parent)) {
		edit_error_set(c->err, RIGD_E_CYCLE, k, "parent",
			       "cannot move '%s' under '%s', which is inside its subtree",
			       quoted(op->id, q), quoted(op->parent, q2));
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
		    (rc = record_old_values(c->s, node, EDIT_F_T | EDIT_F_R | EDIT_F_S, c->undo)) != 0) {
			undo_truncate(c->undo, n_undo);
			return scene_error(rc, k, "", c->err);
		}
	}
	rc = scene_reparent(c->s, node, parent, op->index, op->keep_world);
	if (rc) {
		undo_truncate(c->undo, n_undo);
		if (rc == RIGD_E_NOT_TRS || rc == RIGD_E_SINGULAR) {
			edit_error_set(c->err, rc, k, "keep_world",
				       "keep_world: %s under '%s'", err_str(rc),
				       parent >= 0 ? quoted(op->parent, q) : "the root");
			return rc;
		}
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_delete(apply_ctx *c, const edit_op *op, int k)
{
	int node, rc, first, end, n_undo = c->undo ? c->undo->n_ops : 0;

	if ((rc = find_node(c->s, op, k, &node, c->err)) != 0)
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
		    (c->undo && (rc = record_restore(c->s, n, i == first ? scene_child_index(c->s, n) : -1,
						     c->undo)) != 0)) {
			undo_truncate(c->undo, n_undo);
			return scene_error(rc, k, "", c->err);
		}
	}
	rc = scene_delete(c->s, node);
	if (rc) {
		undo_truncate(c->undo, n_undo);
		return scene_error(rc, k, "", c->err);
	}
	return 0;
}

static int apply_op(apply_ctx *c, const edit_op *op, int k)
{
	int rc = check_shape(op, k, c->lim, c->err);

	if (rc)
		return rc;
	switch (op->kind) {
	case EDIT_CREATE: return apply_create(c, op, k);
	case EDIT_SET: return apply_set(c, op, k);
	case EDIT_REPARENT: return apply_reparent(c, op, k);
	default: return apply_delete(c, op, k);
	}
}

/* ---------- taking a batch back ---------- */

static void reverse_ops(edit_op *ops, int lo, int hi)
{
	for (hi--; lo < hi; lo++, hi--) {
		edit_op t = ops[lo];

		ops[lo] = ops[hi];
		ops[hi] = t;
	}
}

/*
 * Applies one recorded inverse op to 's', which is as the op it undoes left
 * it, with the scene calls that allocate nothing: the op's name and mesh
 * move into the scene (scene_set_owned), a subtree is moved in place, and
 * a restored node takes a handle and an id-table slot that the delete it
 * undoes freed. No validation beyond the scene's own: the op was recorded
 * from values the scene stored. Returns 0, or the scene's error when the
 * scene is not as the op left it (a bug).
 */
static int undo_op(scene *s, edit_op *op)
{
	node_props p = node_props_default();
	unsigned strings = PROP_NAME | PROP_MESH;
	int node = scene_find(s, op->id), parent = -1, rc;

	if ((op->fields & EDIT_F_PARENT) && op->parent[0] && (parent = scene_find(s, op->parent)) < 0)
		return RIGD_E_UNKNOWN_NODE;
	props_from_op(op, &p);
	switch (op->kind) {
	case EDIT_CREATE:
		p.name = p.mesh = NULL;
		if ((rc = scene_create(s, op->id, parent, op->index, &p, &node)) != 0)
			return rc;
		break;
	case EDIT_SET:
		strings = prop_mask(op->fields);
		break;
	case EDIT_REPARENT:
		return scene_reparent(s, node, parent, op->index, false);
	default:
		return scene_delete(s, node);
	}
	if ((rc = scene_set_owned(s, node, strings, &p, op->name, op->mesh)) != 0)
		return rc;
	if (strings & PROP_NAME)
		op->name = NULL;
	if (strings & PROP_MESH)
		op->mesh = NULL;
	return 0;
}

/*
 * Applies the ops of 'inverse', in order, to 's', which is as the batch
 * they undo left it. Raises the scene's node limit meanwhile: restoring a
 * scene that held more nodes than the limit now allows is not a new edit.
 */
static int revert(scene *s, edit_batch *inverse)
{
	int max_nodes = scene_max_nodes(s), rc = 0;

	scene_set_max_nodes(s, INT_MAX);
	for (int i = 0; i < inverse->n_ops && rc == 0; i++)
		rc = undo_op(s, &inverse->ops[i]);
	scene_set_max_nodes(s, max_nodes);
	assert(rc == 0);
	return rc;
}

/*
 * Reorders the recorded inverses, in place, into the order that undoes the
 * batch: op groups last to first, each group in its own order (the inverse
 * ops of op i are undo->ops[starts[i] .. starts[i + 1])). Reversing the
 * whole list and then each group back allocates nothing.
 */
static void reorder_inverse(edit_batch *undo, const int *starts, int n_groups)
{
	int n = starts[n_groups];

	reverse_ops(undo->ops, 0, n);
	for (int i = 0; i < n_groups; i++)
		reverse_ops(undo->ops, n - starts[i + 1], n - starts[i]);
}

/* Rolls back the ops 0..n_done-1 of a batch, whose inverses 'undo'
 * recorded; cannot run out of memory. Empties 'undo'. */
static void rollback(scene *s, edit_batch *undo, const int *starts, int n_done)
{
	reorder_inverse(undo, starts, n_done);
	revert(s, undo);
	edit_batch_release(undo);
}

int edit_revert(scene *s, edit_batch *inverse)
{
	int rc = revert(s, inverse);

	edit_batch_release(inverse);
	return rc;
}

/* ---------- the batch ---------- */

int edit_apply_ex(scene *s, const edit_batch *b, const edit_limits *lim, edit_result *res,
		  edit_batch *inverse, edit_error *err)
{
	edit_batch undo;
	touch_set touched = { 0 };
	int *starts = NULL;
	int rc = 0, k = 0;
	char q[QUOTED_MAX];
	apply_ctx c = { .s = s, .lim = lim, .undo = &undo, .touched = res ? &touched : NULL,
			.err = err };

	edit_error_clear(err);
	edit_batch_init(&undo);
	if (res)
		edit_result_init(res);
	if (inverse)
		edit_batch_init(inverse);
	if (b->n_ops < 0 || (lim && b->n_ops > lim->max_ops)) {
		edit_error_set(err, RIGD_E_LIMIT, -1, "ops", "%d ops in one batch; the limit is %d",
			       b->n_ops, lim ? lim->max_ops : 0);
		return RIGD_E_LIMIT;
	}
	if (b->client[0] && !scene_id_valid(b->client)) {
		edit_error_set(err, RIGD_E_BAD_ID, -1, "client", "bad client id '%s': %s",
			       quoted(b->client, q), err_str(RIGD_E_BAD_ID));
		return RIGD_E_BAD_ID;
	}
	if (b->has_client_seq && b->client_seq < 0) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client_seq",
			       "client_seq must be a non-negative integer");
		return RIGD_E_BAD_FIELD;
	}
	if (!(starts = malloc(sizeof(int) * ((size_t)b->n_ops + 1)))) {
		edit_error_set(err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
		return RIGD_E_NOMEM;
	}
	for (k = 0; k < b->n_ops; k++) {
		starts[k] = undo.n_ops;
		if ((rc = apply_op(&c, &b->ops[k], k)) != 0)
			break;
	}
	starts[k] = undo.n_ops;
	if (rc) {
		rollback(s, &undo, starts, k);
		goto out;
	}
	if (res && (rc = build_result(s, &touched, res)) != 0) {
		/* The batch applied but its result cannot be kept: take it back
		 * rather than report a success half told. */
		rollback(s, &undo, starts, b->n_ops);
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	if (inverse) {
		reorder_inverse(&undo, starts, b->n_ops);
		edit_batch_move(inverse, &undo);
		memcpy(inverse->client, b->client, sizeof(inverse->client));
	}
out:
	if (rc && res)
		edit_result_release(res);
	edit_batch_release(&undo);
	touch_set_release(&touched);
	free(starts);
	return rc;
}

int edit_apply(scene *s, const edit_batch *b, edit_result *res, edit_batch *inverse,
	       edit_error *err)
{
	return edit_apply_ex(s, b, NULL, res, inverse, err);
}
