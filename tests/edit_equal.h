/*
 * edit_equal.h: what the codec and engine tests share to tell that two
 * batches carry the same ops: every field an op carries, numbers bit for
 * bit (memcmp, so -0 and 0 differ, and a NaN equals itself). Header only,
 * static: each user is one translation unit, and includes cmocka.h first.
 */
#ifndef RIGD_TESTS_EDIT_EQUAL_H
#define RIGD_TESTS_EDIT_EQUAL_H

#include "core/edit.h"

/* Equal, or both NULL (a NULL name or mesh is "not given"). */
static void assert_same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* The ops of 'a' and 'b' are the same, field by field; the batches' other
 * members (client, client_seq) are the caller's to compare. */
static void assert_same_ops(const edit_batch *a, const edit_batch *b)
{
	assert_int_equal(a->n_ops, b->n_ops);
	for (int i = 0; i < a->n_ops; i++) {
		const edit_op *x = &a->ops[i], *y = &b->ops[i];
		unsigned f = x->fields;

		assert_int_equal(x->kind, y->kind);
		assert_int_equal(f, y->fields);
		assert_string_equal(x->id, y->id);
		if (f & EDIT_F_PARENT)
			assert_string_equal(x->parent, y->parent);
		if (f & EDIT_F_INDEX)
			assert_int_equal(x->index, y->index);
		if (f & EDIT_F_NAME)
			assert_same_str(x->name, y->name);
		if (f & EDIT_F_MESH)
			assert_same_str(x->mesh, y->mesh);
		if (f & EDIT_F_T)
			assert_memory_equal(&x->t, &y->t, sizeof(x->t));
		if (f & EDIT_F_R)
			assert_memory_equal(&x->r, &y->r, sizeof(x->r));
		if (f & EDIT_F_S)
			assert_memory_equal(&x->s, &y->s, sizeof(x->s));
		if (f & EDIT_F_PIVOT)
			assert_memory_equal(&x->pivot, &y->pivot, sizeof(x->pivot));
		if (f & EDIT_F_EULER)
			assert_memory_equal(&x->euler_deg, &y->euler_deg, sizeof(x->euler_deg));
		if (f & EDIT_F_BOUNDS) {
			assert_int_equal(x->has_bounds, y->has_bounds);
			if (x->has_bounds)
				assert_memory_equal(&x->bounds, &y->bounds, sizeof(x->bounds));
		}
		if (f & EDIT_F_KIND)
			assert_int_equal(x->node_kind, y->node_kind);
		if (f & EDIT_F_FOV)
			assert_memory_equal(&x->fov_deg, &y->fov_deg, sizeof(double));
		if (f & EDIT_F_NEAR)
			assert_memory_equal(&x->znear, &y->znear, sizeof(double));
		if (f & EDIT_F_FAR)
			assert_memory_equal(&x->zfar, &y->zfar, sizeof(double));
		if (f & EDIT_F_VISIBLE)
			assert_int_equal(x->visible, y->visible);
		if (f & EDIT_F_KEEP_WORLD)
			assert_int_equal(x->keep_world, y->keep_world);
		if (f & EDIT_F_LAYER)
			assert_same_str(x->layer, y->layer);
		if (f & EDIT_F_Z) {
			assert_memory_equal(&x->z_right, &y->z_right, sizeof(double));
			assert_memory_equal(&x->z_left, &y->z_left, sizeof(double));
		}
		if (f & EDIT_F_FACING)
			assert_int_equal(x->facing, y->facing);
		if (f & EDIT_F_SHEAR)
			assert_memory_equal(x->shear_deg, y->shear_deg, sizeof(x->shear_deg));
		if (f & EDIT_F_INHERIT)
			assert_int_equal(x->inherit, y->inherit);
		if (f & EDIT_F_ROOT)
			assert_string_equal(x->root, y->root);
		if (f & EDIT_F_POSE_A)
			assert_string_equal(x->pose_a, y->pose_a);
		if (f & EDIT_F_POSE_B)
			assert_string_equal(x->pose_b, y->pose_b);
		if (f & EDIT_F_WEIGHT)
			assert_memory_equal(&x->weight, &y->weight, sizeof(double));
		if (f & EDIT_F_CHANNELS) {
			assert_int_equal(x->n_channels, y->n_channels);
			/* Field by field: the struct's padding is not a value. */
			for (int c = 0; c < x->n_channels; c++) {
				const pose_channel *p = &x->channels[c], *q = &y->channels[c];

				assert_string_equal(p->id, q->id);
				assert_memory_equal(&p->t, &q->t, sizeof(p->t));
				assert_memory_equal(&p->r, &q->r, sizeof(p->r));
				assert_memory_equal(&p->s, &q->s, sizeof(p->s));
				assert_memory_equal(p->shear, q->shear, sizeof(p->shear));
			}
		}
	}
}

#endif
