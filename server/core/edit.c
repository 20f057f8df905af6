/*
 * edit.c: the edit language's names, batches, results and errors; applying
 * a batch is in edit_apply.c, its checks in edit_validate.c, its inverse in
 * edit_invert.c.
 *
 * Applying an edit batch to a scene is atomic and records its inverse.
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
 * This module never parses JSON and never brings world matrices up to date.
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

static const char *const field_names[EDIT_F_ALL_COUNT_] = {
	"parent", "index", "name", "t", "r", "s", "pivot", "euler",
	"bounds", "mesh", "kind", "fov", "near", "far", "visible", "keep_world",
	"angle", "axis", "by", "chain", "target", "pole",
	"root", "a", "b", "t", "channels", "layer", "z", "facing",
	"shear", "inherit",
};

static const char *const kind_names[] = { "group", "mesh", "camera" };
static const char *const op_names[] = { "create", "set", "reparent", "delete",
					"rotate", "move", "ik", "pose_save", "pose_delete",
					"pose_set", "blend", "clip" };
#define N_OP_NAMES ((int)(sizeof(op_names) / sizeof(op_names[0])))

const char *edit_field_name(unsigned field_bit)
{
	for (int i = 0; i < EDIT_F_ALL_COUNT_; i++)
		if (field_bit == 1u << i)
			return field_names[i];
	return "";
}

unsigned edit_fields_allowed(int op_kind)
{
	static const unsigned allowed[] = { 0, CREATE_FIELDS, SET_FIELDS, REPARENT_FIELDS,
					    DELETE_FIELDS, ROTATE_FIELDS, MOVE_FIELDS, IK_FIELDS,
					    EDIT_F_ROOT, 0u, EDIT_F_CHANNELS,
					    EDIT_F_POSE_A | EDIT_F_POSE_B | EDIT_F_WEIGHT,
					    EDIT_F_CLIP_NAME | EDIT_F_CLIP_FILE | EDIT_F_CLIP_TIME |
						    EDIT_F_ROOT | EDIT_F_WEIGHT };

	return op_kind >= EDIT_CREATE && op_kind <= EDIT_OP_LAST_ ? allowed[op_kind] : 0;
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
	return op_kind >= EDIT_CREATE && op_kind <= EDIT_OP_LAST_ ? op_names[op_kind - 1] : "";
}

void edit_copy_name(char *dst, size_t cap, const char *src)
{
	size_t n;

	assert(cap >= 1);
	n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

bool edit_op_is_relative(int op_kind)
{
	return op_kind == EDIT_ROTATE || op_kind == EDIT_MOVE || op_kind == EDIT_IK ||
	       op_kind == EDIT_POSE_SAVE || op_kind == EDIT_BLEND || op_kind == EDIT_CLIP;
}

int edit_op_from_name(const char *name)
{
	for (int i = 0; i < N_OP_NAMES; i++)
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

void ed_op_release(edit_op *op)
{
	free(op->name);
	free(op->mesh);
	free(op->layer);
	free(op->channels);
	op->name = op->mesh = op->layer = NULL;
	op->channels = NULL;
	op->n_channels = 0;
}

void edit_batch_release(edit_batch *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n_ops; i++)
		ed_op_release(&b->ops[i]);
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
		/* From one op (under a kilobyte: inside malloc's per-thread cache): the
		 * inverse of a one-op edit is one op. */
		if (b->cap_ops > INT_MAX / 2 ||
		    edit_batch_reserve(b, b->cap_ops ? b->cap_ops * 2 : 1) != 0)
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

int edit_op_set_layer(edit_op *op, const char *layer)
{
	int rc = set_string(&op->layer, layer);

	if (rc == 0)
		op->fields |= EDIT_F_LAYER;
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
		bool nomem = false;

		*op = src->ops[i];
		op->name = op->mesh = op->layer = NULL;
		op->channels = NULL;
		dst->n_ops = i + 1;
		if ((src->ops[i].name && !(op->name = strdup(src->ops[i].name))) ||
		    (src->ops[i].mesh && !(op->mesh = strdup(src->ops[i].mesh))) ||
		    (src->ops[i].layer && !(op->layer = strdup(src->ops[i].layer))))
			goto nomem;
		op->channels = pose_channels_dup(src->ops[i].channels, src->ops[i].n_channels, &nomem);
		if (nomem) {
			op->n_channels = 0;
			goto nomem;
		}
	}
	return 0;
nomem:
	edit_batch_release(dst);
	return RIGD_E_NOMEM;
}

bool edit_batch_is_absolute(const edit_batch *b)
{
	for (int i = 0; i < b->n_ops; i++)
		if (edit_op_is_relative(b->ops[i].kind) || (b->ops[i].fields & EDIT_F_ANGLE))
			return false;
	return true;
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
	free(r->changed_locals);
	free(r->removed);
	free(r->ik);
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

void edit_error_vset(edit_error *e, int code, int op, const char *field, const char *fmt,
		     va_list ap)
{
	size_t n = 0;

	if (!e)
		return;
	e->code = code;
	e->op = op;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	if (op >= 0)
		n = (size_t)snprintf(e->message, sizeof(e->message), "op %d: ", op);
	vsnprintf(e->message + n, sizeof(e->message) - n, fmt, ap);
}

void edit_error_set(edit_error *e, int code, int op, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	edit_error_vset(e, code, op, field, fmt, ap);
	va_end(ap);
}

/*
 * An id from a batch, fit to be quoted in a message: at most 64 characters,
 * anything outside printable ASCII (and the quote) shown as '?', and "..."
 * when it was longer. 'out' holds SCENE_ID_MAX + 4 bytes.
 */
const char *ed_quoted(const char *id, char *out)
{
	size_t i;

	for (i = 0; id[i] && i < SCENE_ID_MAX; i++)
		out[i] = (id[i] >= 0x20 && id[i] < 0x7f && id[i] != '\'') ? id[i] : '?';
	if (id[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

