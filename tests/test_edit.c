/*
 * test_edit.c: edit batches against the scene: every op and field, every
 * error edit_apply reports (with its op index and field), atomicity, the
 * inverse as an exact undo for every op kind, the result lists, the
 * 59-bone recompute counts (docs/transforms.md 6.2), random batches and a chain a
 * million nodes deep.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

/* ---------- the whole stored state of a scene, as bytes ---------- */

typedef struct blob {
	unsigned char *data;
	size_t len, cap;
} blob;

static void blob_put(blob *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->data = realloc(b->data, b->cap);
		assert_non_null(b->data);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void blob_str(blob *b, const char *s)
{
	unsigned char present = s != NULL;

	blob_put(b, &present, 1);
	if (s)
		blob_put(b, s, strlen(s) + 1);
}

static void blob_doubles(blob *b, const double *v, int n)
{
	blob_put(b, v, sizeof(double) * (size_t)n);
}

/*
 * Every stored value of every node in preorder, the tree shape and the bits
 * of every world matrix: two scenes with equal state blobs are the same
 * scene, bit for bit. Brings world matrices up to date first.
 */
static blob state_of(scene *s)
{
	blob b = { 0 };
	int n = scene_count(s);

	scene_update(s, 1, NULL, NULL);
	blob_put(&b, &n, sizeof(n));
	for (int pos = 0; pos < n; pos++) {
		int node = scene_at(s, pos), parent = scene_parent(s, node);
		int index = scene_child_index(s, node);
		unsigned char flags[2];
		node_props p;
		mat4 w = scene_world(s, node);

		scene_props(s, node, &p);
		blob_str(&b, scene_id(s, node));
		blob_str(&b, parent >= 0 ? scene_id(s, parent) : NULL);
		blob_put(&b, &index, sizeof(index));
		blob_doubles(&b, &p.t.x, 3);
		blob_doubles(&b, &p.r.x, 4);
		blob_doubles(&b, &p.s.x, 3);
		blob_doubles(&b, &p.pivot.x, 3);
		blob_doubles(&b, &p.bounds.min.x, 3);
		blob_doubles(&b, &p.bounds.max.x, 3);
		flags[0] = p.has_bounds;
		flags[1] = p.visible;
		blob_put(&b, flags, 2);
		blob_put(&b, &p.kind, sizeof(p.kind));
		blob_doubles(&b, &p.fov_deg, 1);
		blob_doubles(&b, &p.znear, 1);
		blob_doubles(&b, &p.zfar, 1);
		blob_str(&b, p.name);
		blob_str(&b, p.mesh);
		blob_doubles(&b, w.m, 16);
	}
	return b;
}

static void assert_state(scene *s, const blob *want)
{
	blob got = state_of(s);

	if (got.len != want->len || memcmp(got.data, want->data, got.len) != 0) {
		free(got.data);
		print_error("scene state differs from the expected one\n");
		fail();
	}
	free(got.data);
}

/* ---------- building batches ---------- */

static edit_op *add(edit_batch *b, int kind, const char *id)
{
	edit_op *op = edit_batch_add(b, kind, id);

	assert_non_null(op);
	return op;
}

static edit_op *create(edit_batch *b, const char *id, const char *parent)
{
	edit_op *op = add(b, EDIT_CREATE, id);

	if (parent)
		assert_int_equal(edit_op_set_parent(op, parent), 0);
	return op;
}

static void set_t(edit_op *op, double x, double y, double z)
{
	op->fields |= EDIT_F_T;
	op->t = vec3_make(x, y, z);
}

static void set_r(edit_op *op, double x, double y, double z, double w)
{
	op->fields |= EDIT_F_R;
	op->r = (quat){ x, y, z, w };
}

static void set_s(edit_op *op, double x, double y, double z)
{
	op->fields |= EDIT_F_S;
	op->s = vec3_make(x, y, z);
}

/* Applies 'b', which must succeed; returns the inverse in *inv (may be NULL). */
static void apply_ok(scene *s, const edit_batch *b, edit_result *res, edit_batch *inv)
{
	edit_error err;
	int rc = edit_apply(s, b, res, inv, &err);

	if (rc != 0) {
		print_error("edit_apply: %s (%s)\n", err.message, err_code(rc));
		fail();
	}
}

/* Applies 'b', which must fail with 'code' at op 'op' naming 'field', and
 * leave the scene exactly as it was. */
static void apply_fails(scene *s, const edit_batch *b, int code, int op, const char *field)
{
	blob before = state_of(s);
	edit_result res;
	edit_batch inv;
	edit_error err;
	int rc = edit_apply(s, b, &res, &inv, &err);

	if (rc != code || err.code != code || err.op != op || strcmp(err.field, field) != 0) {
		print_error("want %s at op %d field '%s', got %s at op %d field '%s' (%s)\n",
			    err_code(code), op, field, err_code(rc), err.op, err.field, err.message);
		fail();
	}
	assert_true(err.message[0] != '\0');
	assert_int_equal(inv.n_ops, 0);
	assert_int_equal(res.n_created + res.n_changed + res.n_removed, 0);
	assert_state(s, &before);
	free(before.data);
}

/*
 * Applies 'b' (must succeed), then its inverse, which must give back the
 * state before bit for bit; then the inverse's inverse, which must give the
 * state after bit for bit (it is a redo); then the first inverse again, so
 * that the scene ends as it started. Last, 'b' once more, taken back by
 * edit_revert (no allocation), which must give back the state before too.
 */
static void check_exact_undo(scene *s, const edit_batch *b)
{
	blob before = state_of(s), after;
	edit_batch inv, inv2;

	apply_ok(s, b, NULL, &inv);
	after = state_of(s);
	apply_ok(s, &inv, NULL, &inv2);
	assert_state(s, &before);
	apply_ok(s, &inv2, NULL, NULL);
	assert_state(s, &after);
	apply_ok(s, &inv, NULL, NULL);
	assert_state(s, &before);
	edit_batch_release(&inv);
	apply_ok(s, b, NULL, &inv);
	assert_int_equal(edit_revert(s, &inv), 0);
	assert_int_equal(inv.n_ops, 0);
	assert_state(s, &before);
	edit_batch_release(&inv2);
	free(before.data);
	free(after.data);
}

/*
 * A small rig with every kind of value: base (translated, yawed, pivot)
 * -> arm (non-uniform scale, bounds, mesh, name) -> hand (camera), base ->
 * tip; a second root 'other'.
 */
static scene *make_rig(void)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;

	assert_non_null(s);
	edit_batch_init(&b);
	op = create(&b, "base", NULL);
	set_t(op, 1, 2, 3);
	set_r(op, 0, 0.2588190451025207, 0, 0.9659258262890683);
	op->fields |= EDIT_F_PIVOT;
	op->pivot = vec3_make(0.5, 0, -0.25);
	assert_int_equal(edit_op_set_name(op, "Base"), 0);
	op = create(&b, "arm", "base");
	set_t(op, 0, 1, 0);
	set_s(op, 1, 2, 0.5);
	op->fields |= EDIT_F_EULER;
	op->euler_deg = vec3_make(10, 20, 30);
	op->fields |= EDIT_F_BOUNDS;
	op->has_bounds = true;
	op->bounds = aabb_make(vec3_make(-0.1, 0, -0.1), vec3_make(0.1, 1, 0.1));
	assert_int_equal(edit_op_set_mesh(op, "box"), 0);
	op->fields |= EDIT_F_KIND;
	op->node_kind = NODE_MESH;
	assert_int_equal(edit_op_set_name(op, "Arm"), 0);
	op = create(&b, "hand", "arm");
	set_t(op, 0, 1, 0);
	op->fields |= EDIT_F_KIND | EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR | EDIT_F_VISIBLE;
	op->node_kind = NODE_CAMERA;
	op->fov_deg = 45;
	op->znear = 0.05;
	op->zfar = 200;
	op->visible = false;
	op = create(&b, "tip", "base");
	set_r(op, 0.1, 0.2, 0.3, 0.9);
	create(&b, "other", NULL);
	apply_ok(s, &b, NULL, NULL);
	edit_batch_release(&b);
	return s;
}

/* ---------- ops and fields ---------- */

static void test_create_every_field(void **state)
{
	scene *s = make_rig();
	node_props p, d = node_props_default();
	quat want;
	int arm = scene_find(s, "arm"), hand = scene_find(s, "hand"), other = scene_find(s, "other");

	(void)state;
	assert_int_equal(scene_count(s), 5);
	assert_int_equal(scene_parent(s, arm), scene_find(s, "base"));
	assert_int_equal(scene_parent(s, other), -1);
	scene_props(s, arm, &p);
	assert_string_equal(p.name, "Arm");
	assert_string_equal(p.mesh, "box");
	assert_int_equal(p.kind, NODE_MESH);
	assert_true(p.has_bounds);
	assert_true(p.bounds.max.y == 1);
	assert_true(p.s.y == 2 && p.s.z == 0.5);
	assert_int_equal(quat_normalize(quat_from_euler_deg(vec3_make(10, 20, 30)), &want), 0);
	assert_memory_equal(&p.r, &want, sizeof(want));
	scene_props(s, hand, &p);
	assert_int_equal(p.kind, NODE_CAMERA);
	assert_true(p.fov_deg == 45 && p.znear == 0.05 && p.zfar == 200);
	assert_false(p.visible);
	assert_null(p.name);
	/* Absent fields take the defaults. */
	scene_props(s, other, &p);
	assert_memory_equal(&p.t, &d.t, sizeof(d.t));
	assert_memory_equal(&p.r, &d.r, sizeof(d.r));
	assert_memory_equal(&p.s, &d.s, sizeof(d.s));
	assert_false(p.has_bounds);
	assert_true(p.visible);
	assert_int_equal(p.kind, NODE_GROUP);
	scene_free(s);
}

static void test_create_at_index(void **state)
{
	scene *s = make_rig();
	edit_batch b;
	edit_op *op;
	int base = scene_find(s, "base");

	(void)state;
	edit_batch_init(&b);
	op = create(&b, "first", "base");
	op->fields |= EDIT_F_INDEX;
	op->index = 0;
	op = create(&b, "root0", NULL);
	op->fields |= EDIT_F_INDEX;
	op->index = 0;
	op = create(&b, "last", "base");
	op->fields |= EDIT_F_INDEX;
	op->index = 3; /* first, arm, tip: the child count appends */
	apply_ok(s, &b, NULL, NULL);
	assert_int_equal(scene_child_at(s, base, 0), scene_find(s, "first"));
	assert_int_equal(scene_child_at(s, base, 1), scene_find(s, "arm"));
	assert_int_equal(scene_child_at(s, base, 3), scene_find(s, "last"));
	assert_int_equal(scene_child_at(s, -1, 0), scene_find(s, "root0"));
	edit_batch_release(&b);
	scene_free(s);
}

static void test_set_every_field_and_undo(void **state)
{
	scene *s = make_rig();
	edit_batch b;
	edit_op *op;
	node_props p;
	int hand = scene_find(s, "hand");

	(void)state;
	/* One field at a time, each undone exactly. */
	for (int field = 0; field < 13; field++) {
		edit_batch_init(&b);
		op = add(&b, EDIT_SET, field < 9 ? "arm" : "hand");
		switch (field) {
		case 0: set_t(op, -1, 0.1, 1e-300); break;
		case 1: set_r(op, 0.3, -0.4, 0.1, 0.7); break;
		case 2: set_s(op, -1, 3, 1e-3); break;
		case 3: op->fields |= EDIT_F_PIVOT; op->pivot = vec3_make(0.25, -0.5, 2); break;
		case 4: op->fields |= EDIT_F_EULER; op->euler_deg = vec3_make(-170, 89.9, 400); break;
		case 5: op->fields |= EDIT_F_BOUNDS; op->has_bounds = false; break;
		case 6: assert_int_equal(edit_op_set_mesh(op, NULL), 0); break;
		case 7: assert_int_equal(edit_op_set_name(op, "Ärm \"2\""), 0); break;
		case 8: op->fields |= EDIT_F_KIND; op->node_kind = NODE_GROUP; break;
		case 9: op->fields |= EDIT_F_FOV; op->fov_deg = 90; break;
		case 10: op->fields |= EDIT_F_NEAR | EDIT_F_FAR; op->znear = 1; op->zfar = 2; break;
		case 11: op->fields |= EDIT_F_VISIBLE; op->visible = true; break;
		default: assert_int_equal(edit_op_set_name(op, NULL), 0); break;
		}
		check_exact_undo(s, &b);
		edit_batch_release(&b);
	}
	/* A partial camera keeps the other two values. */
	edit_batch_init(&b);
	op = add(&b, EDIT_SET, "hand");
	op->fields |= EDIT_F_FAR;
	op->zfar = 500;
	apply_ok(s, &b, NULL, NULL);
	scene_props(s, hand, &p);
	assert_true(p.fov_deg == 45 && p.znear == 0.05 && p.zfar == 500);
	edit_batch_release(&b);
	scene_free(s);
}

static void test_reparent_and_undo(void **state)
{
	scene *s = make_rig();
	edit_batch b;
	edit_op *op;
	mat4 before, after;
	int arm = scene_find(s, "arm");

	(void)state;
	/* Plain, to another root at index 0, and to the root list. */
	edit_batch_init(&b);
	op = add(&b, EDIT_REPARENT, "arm");
	edit_op_set_parent(op, "other");
	check_exact_undo(s, &b);
	edit_batch_release(&b);

	edit_batch_init(&b);
	op = add(&b, EDIT_REPARENT, "tip");
	edit_op_set_parent(op, NULL);
	op->fields |= EDIT_F_INDEX;
	op->index = 0;
	check_exact_undo(s, &b);
	apply_ok(s, &b, NULL, NULL);
	assert_int_equal(scene_child_at(s, -1, 0), scene_find(s, "tip"));
	edit_batch_release(&b);

	/* Within the same parent: arm moves behind tip and back. */
	edit_batch_init(&b);
	op = add(&b, EDIT_REPARENT, "hand");
	edit_op_set_parent(op, "base");
	op->fields |= EDIT_F_INDEX;
	op->index = 0;
	check_exact_undo(s, &b);
	edit_batch_release(&b);

	/* keep_world: the world matrix stays; the undo restores t, r, s bits. */
	before = scene_world(s, arm);
	edit_batch_init(&b);
	op = add(&b, EDIT_REPARENT, "arm");
	edit_op_set_parent(op, "other");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	check_exact_undo(s, &b);
	apply_ok(s, &b, NULL, NULL);
	after = scene_world(s, arm);
	assert_true(mat4_max_abs_diff(before, after) < 1e-12);
	assert_int_equal(scene_parent(s, arm), scene_find(s, "other"));
	edit_batch_release(&b);
	scene_free(s);
}

static void test_delete_subtree_and_undo(void **state)
{
	scene *s = make_rig();
	edit_batch b, inv;
	edit_result res;

	(void)state;
	edit_batch_init(&b);
	add(&b, EDIT_DELETE, "base");
	check_exact_undo(s, &b);
	apply_ok(s, &b, &res, &inv);
	assert_int_equal(scene_count(s), 1);
	assert_int_equal(res.n_removed, 4);
	assert_string_equal(res.removed[0].s, "base");
	assert_int_equal(res.recomputed, 0);
	/* One create per node, in preorder, with every field. */
	assert_int_equal(inv.n_ops, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(inv.ops[i].kind, EDIT_CREATE);
	assert_string_equal(inv.ops[0].id, "base");
	assert_string_equal(inv.ops[3].id, "tip");
	assert_string_equal(inv.ops[2].parent, "arm");
	edit_result_release(&res);
	edit_batch_release(&inv);
	edit_batch_release(&b);
	scene_free(s);

	/* A node in the middle of its siblings comes back at its index. */
	s = make_rig();
	edit_batch_init(&b);
	add(&b, EDIT_DELETE, "arm");
	check_exact_undo(s, &b);
	edit_batch_release(&b);
	scene_free(s);
}

/* A batch of every op kind at once, undone as one. */
static void test_mixed_batch_undo(void **state)
{
	scene *s = make_rig();
	edit_batch b;
	edit_op *op;

	(void)state;
	edit_batch_init(&b);
	op = create(&b, "new", "hand");
	set_t(op, 1, 1, 1);
	op = add(&b, EDIT_SET, "new");
	set_r(op, 1, 2, 3, 4);
	op = add(&b, EDIT_REPARENT, "hand");
	edit_op_set_parent(op, "tip");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	add(&b, EDIT_DELETE, "arm");
	op = create(&b, "arm", "other"); /* the id again, elsewhere */
	set_s(op, 2, 2, 2);
	add(&b, EDIT_DELETE, "new");
	op = add(&b, EDIT_SET, "base");
	set_t(op, 0, 0, 0);
	check_exact_undo(s, &b);
	edit_batch_release(&b);
	scene_free(s);
}

/* ---------- errors ---------- */

static void test_errors(void **state)
{
	scene *s = make_rig();
	edit_batch b;
	edit_op *op;
	edit_limits lim = edit_limits_default();
	edit_error err;
	char long_id[SCENE_ID_MAX + 1];

	(void)state;
#define CASE(code, opi, field, ...)                                  \
	do {                                                         \
		edit_batch_init(&b);                                 \
		add(&b, EDIT_SET, "base")->fields |= EDIT_F_VISIBLE; \
		__VA_ARGS__;                                         \
		apply_fails(s, &b, code, opi, field);                \
		edit_batch_release(&b);                              \
	} while (0)

	CASE(RIGD_E_UNKNOWN_OP, 1, "op", add(&b, EDIT_SET, "arm")->kind = 99);
	CASE(RIGD_E_UNKNOWN_OP, 1, "op", add(&b, EDIT_SET, "arm")->kind = 0);
	CASE(RIGD_E_BAD_FIELD, 1, "keep_world", add(&b, EDIT_SET, "arm")->fields |= EDIT_F_KEEP_WORLD);
	CASE(RIGD_E_BAD_FIELD, 1, "parent", add(&b, EDIT_SET, "arm")->fields |= EDIT_F_PARENT);
	CASE(RIGD_E_BAD_FIELD, 1, "t", add(&b, EDIT_DELETE, "arm")->fields |= EDIT_F_T);
	CASE(RIGD_E_BAD_FIELD, 1, "name", add(&b, EDIT_REPARENT, "arm")->fields |= EDIT_F_NAME);
	CASE(RIGD_E_BAD_FIELD, 1, "keep_world", create(&b, "x", NULL)->fields |= EDIT_F_KEEP_WORLD);
	CASE(RIGD_E_BAD_FIELD, 1, "parent", add(&b, EDIT_REPARENT, "arm"));
	CASE(RIGD_E_BAD_FIELD, 1, "euler", op = add(&b, EDIT_SET, "arm"); set_r(op, 0, 0, 0, 1);
	     op->fields |= EDIT_F_EULER);
	CASE(RIGD_E_BAD_FIELD, 1, "bounds", op = add(&b, EDIT_SET, "arm");
	     op->fields |= EDIT_F_BOUNDS; op->has_bounds = true;
	     op->bounds = aabb_make(vec3_make(0, 2, 0), vec3_make(1, 1, 1)));
	CASE(RIGD_E_BAD_FIELD, 1, "mesh", edit_op_set_mesh(add(&b, EDIT_SET, "arm"), ""));
	CASE(RIGD_E_BAD_FIELD, 1, "kind", op = add(&b, EDIT_SET, "arm"); op->fields |= EDIT_F_KIND;
	     op->node_kind = 3);
	CASE(RIGD_E_BAD_FIELD, 1, "fov", op = add(&b, EDIT_SET, "hand"); op->fields |= EDIT_F_FOV;
	     op->fov_deg = 180);
	CASE(RIGD_E_BAD_FIELD, 1, "near", op = add(&b, EDIT_SET, "hand");
	     op->fields |= EDIT_F_NEAR; op->znear = 300);
	CASE(RIGD_E_BAD_FIELD, 1, "far", op = add(&b, EDIT_SET, "hand"); op->fields |= EDIT_F_FAR;
	     op->zfar = 0.01);
	CASE(RIGD_E_BAD_FIELD, 1, "near", op = add(&b, EDIT_SET, "hand");
	     op->fields |= EDIT_F_NEAR; op->znear = 0);
	{
		char name[SCENE_NAME_MAX + 2];

		memset(name, 'n', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		CASE(RIGD_E_BAD_FIELD, 1, "name", edit_op_set_name(add(&b, EDIT_SET, "arm"), name));
	}
	CASE(RIGD_E_UNKNOWN_NODE, 1, "id", add(&b, EDIT_SET, "arm2"));
	CASE(RIGD_E_UNKNOWN_NODE, 1, "id", add(&b, EDIT_DELETE, "arm2"));
	CASE(RIGD_E_UNKNOWN_NODE, 1, "id", op = add(&b, EDIT_REPARENT, "arm2");
	     edit_op_set_parent(op, "base"));
	CASE(RIGD_E_UNKNOWN_NODE, 1, "parent", create(&b, "x", "nobody"));
	CASE(RIGD_E_UNKNOWN_NODE, 1, "parent", op = add(&b, EDIT_REPARENT, "arm");
	     edit_op_set_parent(op, "nobody"));
	CASE(RIGD_E_UNKNOWN_NODE, 2, "id", add(&b, EDIT_DELETE, "hand"); add(&b, EDIT_SET, "hand"));
	CASE(RIGD_E_DUPLICATE_ID, 1, "id", create(&b, "hand", NULL));
	CASE(RIGD_E_DUPLICATE_ID, 2, "id", create(&b, "x", NULL); create(&b, "x", "base"));
	CASE(RIGD_E_BAD_ID, 1, "id", create(&b, "a/b", NULL));
	CASE(RIGD_E_BAD_ID, 1, "id", create(&b, "..", NULL)->id[0] = '/');
	CASE(RIGD_E_BAD_ID, 1, "id", create(&b, "", NULL));
	CASE(RIGD_E_BAD_ID, 1, "id", add(&b, EDIT_SET, "sp ace"));
	CASE(RIGD_E_BAD_ID, 1, "parent", create(&b, "x", "../etc"));
	CASE(RIGD_E_CYCLE, 1, "parent", op = add(&b, EDIT_REPARENT, "base");
	     edit_op_set_parent(op, "hand"));
	CASE(RIGD_E_CYCLE, 1, "parent", op = add(&b, EDIT_REPARENT, "base");
	     edit_op_set_parent(op, "base"));
	CASE(RIGD_E_NOT_FINITE, 1, "t", set_t(add(&b, EDIT_SET, "arm"), 0, INFINITY, 0));
	CASE(RIGD_E_NOT_FINITE, 1, "s", set_s(add(&b, EDIT_SET, "arm"), NAN, 1, 1));
	CASE(RIGD_E_NOT_FINITE, 1, "r", set_r(add(&b, EDIT_SET, "arm"), 0, 0, -INFINITY, 1));
	CASE(RIGD_E_NOT_FINITE, 1, "euler", op = add(&b, EDIT_SET, "arm");
	     op->fields |= EDIT_F_EULER; op->euler_deg = vec3_make(0, NAN, 0));
	CASE(RIGD_E_NOT_FINITE, 1, "pivot", op = add(&b, EDIT_SET, "arm");
	     op->fields |= EDIT_F_PIVOT; op->pivot = vec3_make(0, 0, INFINITY));
	CASE(RIGD_E_NOT_FINITE, 1, "bounds", op = create(&b, "x", NULL);
	     op->fields |= EDIT_F_BOUNDS; op->has_bounds = true;
	     op->bounds = aabb_make(vec3_make(0, 0, 0), vec3_make(1, INFINITY, 1)));
	CASE(RIGD_E_NOT_FINITE, 1, "fov", op = add(&b, EDIT_SET, "hand");
	     op->fields |= EDIT_F_FOV; op->fov_deg = NAN);
	CASE(RIGD_E_ZERO_QUATERNION, 1, "r", set_r(add(&b, EDIT_SET, "arm"), 0, 0, 0, 0));
	CASE(RIGD_E_ZERO_QUATERNION, 1, "r", set_r(create(&b, "x", NULL), 0, 1e-13, 0, 0));
	CASE(RIGD_E_BAD_INDEX, 1, "index", op = create(&b, "x", "base");
	     op->fields |= EDIT_F_INDEX; op->index = 3);
	CASE(RIGD_E_BAD_INDEX, 1, "index", op = create(&b, "x", "base");
	     op->fields |= EDIT_F_INDEX; op->index = -2);
	CASE(RIGD_E_BAD_INDEX, 1, "index", op = add(&b, EDIT_REPARENT, "tip");
	     edit_op_set_parent(op, "base"); op->fields |= EDIT_F_INDEX; op->index = 2);
	CASE(RIGD_E_BAD_INDEX, 1, "index", op = add(&b, EDIT_REPARENT, "tip");
	     edit_op_set_parent(op, NULL); op->fields |= EDIT_F_INDEX; op->index = 3);
	/* keep_world under a parent with zero scale: no inverse exists. */
	CASE(RIGD_E_SINGULAR, 2, "keep_world", set_s(add(&b, EDIT_SET, "other"), 0, 1, 1);
	     op = add(&b, EDIT_REPARENT, "tip"); edit_op_set_parent(op, "other");
	     op->fields |= EDIT_F_KEEP_WORLD; op->keep_world = true);

	/* Batch-level errors name no op. */
	edit_batch_init(&b);
	create(&b, "x", NULL);
	snprintf(b.client, sizeof(b.client), "c/1");
	apply_fails(s, &b, RIGD_E_BAD_ID, -1, "client");
	b.client[0] = '\0';
	b.has_client_seq = true;
	b.client_seq = -1;
	apply_fails(s, &b, RIGD_E_BAD_FIELD, -1, "client_seq");
	edit_batch_release(&b);

	/* Limits: ops per batch and id length (edit_apply_ex), nodes (scene). */
	edit_batch_init(&b);
	for (int i = 0; i < 4; i++)
		add(&b, EDIT_SET, "base")->fields |= EDIT_F_VISIBLE;
	lim.max_ops = 3;
	assert_int_equal(edit_apply_ex(s, &b, &lim, NULL, NULL, &err), RIGD_E_LIMIT);
	assert_int_equal(err.op, -1);
	assert_string_equal(err.field, "ops");
	lim.max_ops = 4;
	assert_int_equal(edit_apply_ex(s, &b, &lim, NULL, NULL, &err), 0);
	edit_batch_release(&b);
	lim.max_id_len = 8;
	edit_batch_init(&b);
	create(&b, "id_of_nine", NULL);
	assert_int_equal(edit_apply_ex(s, &b, &lim, NULL, NULL, &err), RIGD_E_BAD_ID);
	assert_string_equal(err.field, "id");
	edit_batch_release(&b);
	memset(long_id, 'a', SCENE_ID_MAX);
	long_id[SCENE_ID_MAX] = '\0';
	edit_batch_init(&b);
	assert_null(edit_batch_add(&b, EDIT_CREATE, "a-65-character-id-is-refused-by-edit_batch_add-before-it-is-copied"));
	assert_int_equal(b.n_ops, 0);
	create(&b, long_id, NULL); /* 64 characters is fine */
	apply_ok(s, &b, NULL, NULL);
	edit_batch_release(&b);
	scene_set_max_nodes(s, scene_count(s) + 1);
	CASE(RIGD_E_LIMIT, 2, "id", create(&b, "x", NULL); create(&b, "y", NULL));
	scene_free(s);
#undef CASE
}

/* A parent scaled (2, 1, 1) with a child rotated 45 degrees about z: keeping
 * the child's world under a parent that is no longer that needs a shear. */
static void test_keep_world_refuses_shear(void **state)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;
	blob before;

	(void)state;
	edit_batch_init(&b);
	set_s(create(&b, "stretch", NULL), 2, 1, 1);
	op = create(&b, "child", "stretch");
	op->fields |= EDIT_F_EULER;
	op->euler_deg = vec3_make(0, 0, 45);
	create(&b, "plain", NULL);
	apply_ok(s, &b, NULL, NULL);
	edit_batch_release(&b);
	before = state_of(s);

	/* Out from under the stretched parent: the world matrix is sheared. */
	edit_batch_init(&b);
	add(&b, EDIT_SET, "plain")->fields |= EDIT_F_VISIBLE;
	op = add(&b, EDIT_REPARENT, "child");
	edit_op_set_parent(op, "plain");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	apply_fails(s, &b, RIGD_E_NOT_TRS, 1, "keep_world");
	/* Without keep_world the same move is fine. */
	b.ops[1].keep_world = false;
	check_exact_undo(s, &b);
	assert_state(s, &before);
	edit_batch_release(&b);
	free(before.data);
	scene_free(s);
}

/* ---------- atomicity ---------- */

static void test_failing_op_7_leaves_no_trace(void **state)
{
	scene *s = make_rig();
	blob before = state_of(s);
	uint64_t hash = scene_hash(s);
	edit_batch b;
	edit_op *op;

	(void)state;
	edit_batch_init(&b);
	op = create(&b, "n1", "hand");                               /* 0 */
	set_t(op, 1, 2, 3);
	set_r(add(&b, EDIT_SET, "arm"), 0.5, 0.5, 0.5, 0.5);          /* 1 */
	op = add(&b, EDIT_REPARENT, "tip");                           /* 2 */
	edit_op_set_parent(op, "other");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	add(&b, EDIT_DELETE, "other");                                /* 3 */
	edit_op_set_name(add(&b, EDIT_SET, "base"), "renamed");       /* 4 */
	op = create(&b, "other", NULL);                               /* 5 */
	op->fields |= EDIT_F_INDEX;
	op->index = 0;
	add(&b, EDIT_DELETE, "arm");                                  /* 6 */
	set_r(add(&b, EDIT_SET, "base"), 0, 0, 0, 0);                 /* 7 fails */
	apply_fails(s, &b, RIGD_E_ZERO_QUATERNION, 7, "r");
	assert_true(scene_hash(s) == hash);
	assert_state(s, &before);
	assert_int_equal(scene_count(s), 5);
	edit_batch_release(&b);
	free(before.data);
	scene_free(s);
}

/* ---------- results ---------- */

static bool has_id(const edit_id *ids, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ids[i].s, id) == 0)
			return true;
	return false;
}

static void test_result_lists(void **state)
{
	scene *s = make_rig();
	edit_batch b;
	edit_result res;
	edit_op *op;

	(void)state;
	scene_update(s, 1, NULL, NULL);
	edit_batch_init(&b);
	create(&b, "fresh", "other");                 /* created */
	create(&b, "ghost", NULL);                    /* created and deleted: nothing */
	add(&b, EDIT_DELETE, "ghost");
	add(&b, EDIT_DELETE, "arm");                  /* arm, hand removed ... */
	create(&b, "hand", "tip");                    /* ... but hand is back: changed */
	edit_op_set_name(add(&b, EDIT_SET, "base"), "B"); /* changed, not dirty */
	op = add(&b, EDIT_SET, "fresh");
	set_t(op, 1, 0, 0);
	apply_ok(s, &b, &res, NULL);
	assert_int_equal(res.n_created, 1);
	assert_string_equal(res.created[0].s, "fresh");
	assert_int_equal(res.n_removed, 1);
	assert_string_equal(res.removed[0].s, "arm");
	assert_int_equal(res.n_changed, 2);
	assert_true(has_id(res.changed, res.n_changed, "hand"));
	assert_true(has_id(res.changed, res.n_changed, "base"));
	/* fresh and hand, each a one-node subtree. */
	assert_int_equal(res.recomputed, 2);
	assert_int_equal(scene_update(s, 2, NULL, NULL), 2);
	edit_result_release(&res);
	edit_batch_release(&b);
	scene_free(s);
}

/* A batch that touches more ids than the result keeps without allocating
 * (8): each id is listed once however often it is touched, before and
 * after the set grows, with its own changed_locals and subtree count. */
static void test_result_many_ids(void **state)
{
	scene *s = scene_new();
	edit_batch b;
	edit_result res;
	char id[16];

	(void)state;
	edit_batch_init(&b);
	for (int i = 0; i < 20; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		create(&b, id, NULL);
	}
	apply_ok(s, &b, NULL, NULL);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);

	edit_batch_init(&b);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 12; i++) {
			snprintf(id, sizeof(id), "n%d", i);
			set_t(add(&b, EDIT_SET, id), round, i, 0);
		}
	edit_op_set_name(add(&b, EDIT_SET, "n3"), "three");   /* after the set grew */
	edit_op_set_name(add(&b, EDIT_SET, "n15"), "fifteen"); /* a new id, named only */
	create(&b, "late", "n19");
	apply_ok(s, &b, &res, NULL);
	assert_int_equal(res.n_created, 1);
	assert_string_equal(res.created[0].s, "late");
	assert_int_equal(res.n_removed, 0);
	assert_int_equal(res.n_changed, 13);
	for (int i = 0; i < 16; i++) {
		snprintf(id, sizeof(id), "n%d", i);
		assert_int_equal(has_id(res.changed, res.n_changed, id), i < 12 || i == 15);
	}
	for (int k = 0; k < res.n_changed; k++) {
		bool named = strcmp(res.changed[k].s, "n3") == 0 || strcmp(res.changed[k].s, "n15") == 0;

		for (int m = 0; m < k; m++)
			assert_string_not_equal(res.changed[m].s, res.changed[k].s);
		assert_int_equal(res.changed_locals[k], !named);
	}
	/* n0..n11 moved, late is new; n15's name moves nothing. */
	assert_int_equal(res.recomputed, 13);
	assert_int_equal(scene_update(s, 2, NULL, NULL), 13);
	edit_result_release(&res);
	edit_batch_release(&b);
	scene_free(s);
}

/* ---------- the 59-bone skeleton (docs/transforms.md 6.2) ---------- */

static void bone(edit_batch *b, const char *id, const char *parent)
{
	set_t(create(b, id, parent), 0, 0.1, 0);
}

static scene *make_skeleton(void)
{
	scene *s = scene_new();
	edit_batch b;
	char id[32], parent[32];
	const char *side[2] = { "l", "r" };

	edit_batch_init(&b);
	bone(&b, "root", NULL);
	for (int i = 1; i <= 5; i++) {
		snprintf(id, sizeof(id), "spine%d", i);
		snprintf(parent, sizeof(parent), i == 1 ? "root" : "spine%d", i - 1);
		bone(&b, id, parent);
	}
	bone(&b, "neck", "spine5");
	bone(&b, "head", "neck");
	bone(&b, "head_end", "head");
	for (int k = 0; k < 2; k++) {
		const char *chain[4] = { "upper_arm", "forearm", "wrist", "hand" };

		for (int i = 0; i < 4; i++) {
			snprintf(id, sizeof(id), "%s_%s", chain[i], side[k]);
			if (i == 0)
				snprintf(parent, sizeof(parent), "spine5");
			else
				snprintf(parent, sizeof(parent), "%s_%s", chain[i - 1], side[k]);
			bone(&b, id, parent);
		}
		for (int f = 1; f <= 5; f++)
			for (int j = 1; j <= 3; j++) {
				snprintf(id, sizeof(id), "finger%d_%d_%s", f, j, side[k]);
				if (j == 1)
					snprintf(parent, sizeof(parent), "hand_%s", side[k]);
				else
					snprintf(parent, sizeof(parent), "finger%d_%d_%s", f, j - 1, side[k]);
				bone(&b, id, parent);
			}
		{
			const char *leg[4] = { "thigh", "shin", "ankle", "foot" };

			for (int i = 0; i < 4; i++) {
				snprintf(id, sizeof(id), "%s_%s", leg[i], side[k]);
				if (i == 0)
					snprintf(parent, sizeof(parent), "root");
				else
					snprintf(parent, sizeof(parent), "%s_%s", leg[i - 1], side[k]);
				bone(&b, id, parent);
			}
			for (int t = 1; t <= 2; t++) {
				snprintf(id, sizeof(id), "toe%d_%s", t, side[k]);
				snprintf(parent, sizeof(parent), "foot_%s", side[k]);
				bone(&b, id, parent);
			}
		}
	}
	apply_ok(s, &b, NULL, NULL);
	edit_batch_release(&b);
	assert_int_equal(scene_count(s), 59);
	return s;
}

static void test_skeleton_recomputed(void **state)
{
	static const struct {
		const char *bone;
		long want;
	} cases[] = {
		{ "root", 59 }, { "spine1", 46 }, { "upper_arm_l", 19 }, { "hand_r", 16 },
		{ "finger3_3_l", 1 }, { "spine5", 42 },
	};
	scene *s = make_skeleton();
	edit_batch b;
	edit_result res;

	(void)state;
	assert_int_equal(scene_update(s, 1, NULL, NULL), 59);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		edit_batch_init(&b);
		set_r(add(&b, EDIT_SET, cases[i].bone), 0, 0, 0.1, 1);
		apply_ok(s, &b, &res, NULL);
		assert_int_equal(res.recomputed, cases[i].want);
		assert_int_equal(scene_update(s, 2 + i, NULL, NULL), cases[i].want);
		edit_result_release(&res);
		edit_batch_release(&b);
	}
	/* A hand and its own fingertip: the union, not the sum. */
	edit_batch_init(&b);
	set_t(add(&b, EDIT_SET, "finger1_3_r"), 0, 1, 0);
	set_t(add(&b, EDIT_SET, "hand_r"), 0, 1, 0);
	set_t(add(&b, EDIT_SET, "hand_l"), 0, 1, 0);
	apply_ok(s, &b, &res, NULL);
	assert_int_equal(res.recomputed, 32);
	assert_int_equal(scene_update(s, 10, NULL, NULL), 32);
	edit_result_release(&res);
	edit_batch_release(&b);
	/* Non-transform fields make nothing stale. */
	edit_batch_init(&b);
	edit_op_set_name(add(&b, EDIT_SET, "root"), "Root");
	apply_ok(s, &b, &res, NULL);
	assert_int_equal(res.recomputed, 0);
	assert_int_equal(res.n_changed, 1);
	edit_result_release(&res);
	edit_batch_release(&b);
	/* A reparent makes the moved subtree stale where it lands. */
	edit_batch_init(&b);
	edit_op_set_parent(add(&b, EDIT_REPARENT, "upper_arm_l"), "head_end");
	apply_ok(s, &b, &res, NULL);
	assert_int_equal(res.recomputed, 19);
	edit_result_release(&res);
	edit_batch_release(&b);
	scene_free(s);
}

/*
 * Undoing a set of r hands the scene back the unit quaternion it stored;
 * that must come back with the same bits for any rotation (it does only if
 * normalising an already unit quaternion leaves it unchanged).
 */
static void test_rotation_undo_exact(void **state)
{
	scene *s = scene_new();
	edit_batch b;
	uint64_t x = 12345;

	(void)state;
	edit_batch_init(&b);
	create(&b, "a", NULL);
	apply_ok(s, &b, NULL, NULL);
	edit_batch_release(&b);
	for (int i = 0; i < 2000; i++) {
		double c[4];

		for (int k = 0; k < 4; k++) {
			x = x * 6364136223846793005u + 1442695040888963407u;
			c[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
		}
		edit_batch_init(&b);
		set_r(add(&b, EDIT_SET, "a"), c[0], c[1], i % 3 ? c[2] : c[2] * 1e-4, c[3]);
		apply_ok(s, &b, NULL, NULL); /* 'a' now holds some normalised rotation */
		set_r(&b.ops[0], c[3], c[2], c[1], c[0]);
		check_exact_undo(s, &b);
		edit_batch_release(&b);
	}
	scene_free(s);
}

/* ---------- random batches ---------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double rnd_unit(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1;
}

static int rnd_int(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

/* An id of a live node, or now and then one that does not exist. */
static const char *rnd_node(scene *s, char *buf)
{
	if (scene_count(s) == 0 || rnd_int(40) == 0) {
		snprintf(buf, 16, "n%d", rnd_int(60));
		return buf;
	}
	return scene_id(s, scene_at(s, rnd_int(scene_count(s))));
}

static void rnd_fields(edit_op *op, bool camera)
{
	if (rnd_int(2))
		set_t(op, rnd_unit() * 10, rnd_unit() * 10, rnd_unit() * 10);
	if (rnd_int(3) == 0)
		set_r(op, rnd_unit(), rnd_unit(), rnd_unit(), rnd_unit());
	else if (rnd_int(4) == 0) {
		op->fields |= EDIT_F_EULER;
		op->euler_deg = vec3_make(rnd_unit() * 180, rnd_unit() * 180, rnd_unit() * 180);
	}
	if (rnd_int(3) == 0)
		set_s(op, rnd_unit() * 3, rnd_unit() * 3, rnd_unit() * 3);
	if (rnd_int(4) == 0) {
		op->fields |= EDIT_F_PIVOT;
		op->pivot = vec3_make(rnd_unit(), rnd_unit(), rnd_unit());
	}
	if (rnd_int(4) == 0) {
		double a = rnd_unit(), c = rnd_unit();

		op->fields |= EDIT_F_BOUNDS;
		op->has_bounds = rnd_int(3) != 0;
		op->bounds = aabb_make(vec3_make(fmin(a, c), -1, -1), vec3_make(fmax(a, c), 1, 1));
	}
	if (rnd_int(5) == 0)
		edit_op_set_name(op, rnd_int(3) ? "a name" : NULL);
	if (rnd_int(5) == 0)
		edit_op_set_mesh(op, rnd_int(3) ? "mesh.glb" : NULL);
	if (camera && rnd_int(4) == 0) {
		op->fields |= EDIT_F_KIND | EDIT_F_FOV | EDIT_F_FAR;
		op->node_kind = rnd_int(3);
		op->fov_deg = 10 + rnd_int(150);
		op->zfar = 100 + rnd_int(900);
	}
	if (rnd_int(6) == 0) {
		op->fields |= EDIT_F_VISIBLE;
		op->visible = rnd_int(2);
	}
}

static void rnd_batch(scene *s, edit_batch *b)
{
	char buf[16], buf2[16];
	/* Mostly small, at times past the 8 ids a result keeps inline. */
	int n = 1 + rnd_int(rnd_int(4) ? 5 : 16);

	edit_batch_init(b);
	for (int i = 0; i < n; i++) {
		int kind = rnd_int(11);
		edit_op *op;

		if (kind < 4) {
			snprintf(buf, sizeof(buf), "n%d", rnd_int(80));
			op = create(b, buf, rnd_int(4) ? rnd_node(s, buf2) : NULL);
			if (rnd_int(3) == 0) {
				op->fields |= EDIT_F_INDEX;
				op->index = rnd_int(3);
			}
			rnd_fields(op, true);
		} else if (kind < 8) {
			rnd_fields(add(b, EDIT_SET, rnd_node(s, buf)), true);
		} else if (kind < 10) {
			op = add(b, EDIT_REPARENT, rnd_node(s, buf));
			edit_op_set_parent(op, rnd_int(5) ? rnd_node(s, buf2) : NULL);
			if (rnd_int(3) == 0) {
				op->fields |= EDIT_F_INDEX;
				op->index = rnd_int(3);
			}
			if (rnd_int(2)) {
				op->fields |= EDIT_F_KEEP_WORLD;
				op->keep_world = true;
			}
		} else {
			add(b, EDIT_DELETE, rnd_node(s, buf));
		}
	}
}

/*
 * Random batches over a growing scene: every accepted batch is undone by its
 * inverse and redone by the inverse's inverse bit for bit, every refused one
 * leaves the scene bit for bit as it was, and the reported recompute count
 * is what scene_update recomputes.
 */
static void test_random_batches(void **state)
{
	scene *s = scene_new();
	int accepted = 0, refused = 0;

	(void)state;
	for (int iter = 0; iter < 2000; iter++) {
		edit_batch b, inv, redo;
		edit_result res;
		edit_error err;
		blob before = state_of(s), after;
		int rc;

		rnd_batch(s, &b);
		rc = edit_apply(s, &b, &res, &inv, &err);
		if (rc) {
			assert_int_equal(err.code, rc);
			assert_true(err.op >= 0 && err.op < b.n_ops);
			assert_state(s, &before);
			refused++;
		} else {
			assert_int_equal(scene_update(s, 5, NULL, NULL), res.recomputed);
			after = state_of(s);
			apply_ok(s, &inv, NULL, &redo);
			assert_state(s, &before);
			apply_ok(s, &redo, NULL, NULL);
			assert_state(s, &after);
			free(after.data);
			edit_batch_release(&inv);
			edit_batch_release(&redo);
			edit_result_release(&res);
			accepted++;
		}
		free(before.data);
		edit_batch_release(&b);
	}
	print_message("random batches: %d accepted, %d refused, %d nodes at the end\n", accepted,
		      refused, scene_count(s));
	assert_true(accepted > 500 && refused > 300);
	scene_free(s);
}

/* ---------- depth ---------- */

/* A chain a million nodes deep: sets and reparents near the top and the
 * bottom, their results and exact undo, with nothing recursive anywhere. */
static void test_million_deep_chain(void **state)
{
	enum { N = 1000000 };
	scene *s = scene_new();
	char (*ids)[16] = malloc(sizeof(*ids) * N);
	const char **idp = malloc(sizeof(*idp) * N);
	int *parents = malloc(sizeof(int) * N);
	edit_batch b, inv;
	edit_result res;
	edit_op *op;
	uint64_t hash;

	(void)state;
	assert_non_null(ids);
	for (int i = 0; i < N; i++) {
		snprintf(ids[i], sizeof(ids[i]), "c%d", i);
		idp[i] = ids[i];
		parents[i] = i - 1;
	}
	assert_int_equal(scene_load(s, N, idp, parents, NULL, NULL), 0);
	scene_update(s, 1, NULL, NULL);
	hash = scene_hash(s);

	edit_batch_init(&b);
	set_t(add(&b, EDIT_SET, "c0"), 1, 0, 0);
	set_r(add(&b, EDIT_SET, "c999990"), 0, 0, 1, 1);
	op = add(&b, EDIT_REPARENT, "c999998");
	edit_op_set_parent(op, "c10");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	create(&b, "leaf", "c999999");
	apply_ok(s, &b, &res, &inv);
	assert_int_equal(res.recomputed, N + 1);
	assert_int_equal(scene_update(s, 2, NULL, NULL), N + 1);
	apply_ok(s, &inv, NULL, NULL);
	scene_update(s, 3, NULL, NULL);
	assert_true(scene_hash(s) == hash);
	edit_result_release(&res);
	edit_batch_release(&inv);
	edit_batch_release(&b);
	free(ids);
	free(idp);
	free(parents);
	scene_free(s);
}

/* ---------- batches as values ---------- */

static void test_batch_copy_move(void **state)
{
	edit_batch a, c, d;
	edit_batch *h = edit_batch_new();

	(void)state;
	edit_batch_init(&a);
	edit_op_set_name(create(&a, "x", "p"), "X");
	edit_op_set_mesh(add(&a, EDIT_SET, "y"), "m");
	snprintf(a.client, sizeof(a.client), "c-1");
	a.has_client_seq = true;
	a.client_seq = 7;
	assert_int_equal(edit_batch_copy(&c, &a), 0);
	assert_int_equal(c.n_ops, 2);
	assert_string_equal(c.ops[0].name, "X");
	assert_ptr_not_equal(c.ops[0].name, a.ops[0].name);
	assert_string_equal(c.ops[0].parent, "p");
	assert_string_equal(c.client, "c-1");
	assert_true(c.has_client_seq && c.client_seq == 7);
	edit_batch_init(&d);
	edit_batch_move(&d, &c);
	assert_int_equal(c.n_ops, 0);
	assert_string_equal(d.ops[1].mesh, "m");
	assert_non_null(h);
	edit_batch_move(h, &d);
	edit_batch_free(h);
	edit_batch_free(NULL);
	edit_batch_release(&a);
	edit_batch_release(NULL);
	edit_result_release(NULL);
	assert_string_equal(edit_field_name(EDIT_F_KEEP_WORLD), "keep_world");
	assert_string_equal(edit_field_name(3), "");
	assert_int_equal(edit_op_from_name("reparent"), EDIT_REPARENT);
	assert_int_equal(edit_op_from_name("spin"), -1);
	assert_int_equal(edit_kind_from_name("camera"), NODE_CAMERA);
	assert_int_equal(edit_kind_from_name("light"), -1);
	assert_int_equal(edit_fields_allowed(EDIT_DELETE), 0);
	assert_int_equal(edit_fields_allowed(9), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_every_field),
		cmocka_unit_test(test_create_at_index),
		cmocka_unit_test(test_set_every_field_and_undo),
		cmocka_unit_test(test_reparent_and_undo),
		cmocka_unit_test(test_delete_subtree_and_undo),
		cmocka_unit_test(test_mixed_batch_undo),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_keep_world_refuses_shear),
		cmocka_unit_test(test_failing_op_7_leaves_no_trace),
		cmocka_unit_test(test_result_lists),
		cmocka_unit_test(test_result_many_ids),
		cmocka_unit_test(test_skeleton_recomputed),
		cmocka_unit_test(test_rotation_undo_exact),
		cmocka_unit_test(test_random_batches),
		cmocka_unit_test(test_million_deep_chain),
		cmocka_unit_test(test_batch_copy_move),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
