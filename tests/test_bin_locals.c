/*
 * test_bin_locals.c: binary updates of version 2 (codec/proto_bin.h,
 * docs/protocol.md "Locals entries (version 2)"). An edit result says which
 * changed nodes changed in their transform channels only; such a node sent
 * as a locals entry decodes, after the snapshot that gave its record, into
 * exactly the JSON update's record, in a 3D and a 2D scene and in float32
 * frames too (the channels are float64); the header holds what the table
 * says; an update without locals entries stays of version 1; and every
 * truncation, every corrupted byte, an entry for an unbound index, a
 * channel that is not finite and a bad channel count are errors or clean
 * decodes, never a read past the end (the suite runs under
 * AddressSanitizer).
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

#include "codec/proto.h"
#include "codec/proto_bin.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

/* root -> arm -> hand, in a scene of 'dims' dimensions. */
static scene *rig(int dims)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;
	edit_error err;

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, dims), 0);
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_CREATE, "root");
	op->fields = EDIT_F_T;
	op->t = vec3_make(0.1, -2.5, 0);
	op = edit_batch_add(&b, EDIT_CREATE, "arm");
	edit_op_set_parent(op, "root");
	op->fields |= EDIT_F_T | EDIT_F_S;
	op->t = vec3_make(1.0 / 3.0, 0.7, 0);
	op->s = vec3_make(1.5, 0.25, 1);
	op = edit_batch_add(&b, EDIT_CREATE, "hand");
	edit_op_set_parent(op, "arm");
	op->fields |= EDIT_F_T;
	op->t = vec3_make(0, 0.3, 0);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), 0);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

/* Applies a set of 'hand' with 'fields' and returns whether the result
 * marks it as changed in its channels only. */
static bool set_hand(scene *s, unsigned fields)
{
	edit_batch b;
	edit_op *op;
	edit_result res;
	edit_error err;
	bool locals;

	edit_batch_init(&b);
	edit_result_init(&res);
	op = edit_batch_add(&b, EDIT_SET, "hand");
	op->fields = fields;
	op->t = vec3_make(0.1 / 3.0, 0.2, 0);
	op->euler_deg = vec3_make(0, 0, 33.3);
	op->s = vec3_make(2, 0.5, 1);
	op->pivot = vec3_make(0.01, 0.02, 0);
	if (fields & EDIT_F_NAME)
		assert_int_equal(edit_op_set_name(op, "Hand"), 0);
	assert_int_equal(edit_apply(s, &b, &res, NULL, &err), 0);
	assert_int_equal(res.n_changed, 1);
	assert_non_null(res.changed_locals);
	locals = res.changed_locals[0];
	edit_result_release(&res);
	edit_batch_release(&b);
	scene_update(s, 2, NULL, NULL);
	return locals;
}

static uint64_t le(const proto_buf *b, size_t at, int bytes)
{
	const unsigned char *p = (const unsigned char *)b->data + b->head + at;
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Decodes frame 'b' with 'names' into a malloc'd JSON string. */
static char *to_json(proto_bin_names *names, const proto_buf *b)
{
	proto_buf out;
	edit_error err;
	char *s;
	int rc;

	proto_buf_init(&out, 0);
	rc = proto_bin_to_json(names, (const unsigned char *)b->data + b->head, b->len, &out, &err);
	if (rc)
		print_error("decode failed: %s (%s)\n", err.message, err.field);
	assert_int_equal(rc, 0);
	s = proto_buf_take(&out);
	assert_non_null(s);
	return s;
}

/* The snapshot of 's' decoded into 'names', and the update of 'hand' as a
 * locals entry in 'bin' (format 'format'). */
static void snapshot_then_locals(scene *s, int format, proto_bin_names *names, proto_buf *bin)
{
	int hand = scene_find(s, "hand");
	bool locals = true;

	assert_int_equal(proto_bin_encode_snapshot(bin, format, "rig", 7, s), 0);
	free(to_json(names, bin));
	proto_buf_reset(bin);
	assert_int_equal(proto_bin_encode_update_locals(bin, format, "rig", 9, 7, s, &hand, 1,
							&hand, &locals, 1, NULL, 0, false), 0);
}

static void test_result_marks_channels_only(void **state)
{
	scene *s = rig(3);

	(void)state;
	assert_true(set_hand(s, EDIT_F_T | EDIT_F_EULER | EDIT_F_S | EDIT_F_PIVOT));
	assert_true(set_hand(s, EDIT_F_T));
	assert_false(set_hand(s, EDIT_F_T | EDIT_F_NAME));
	assert_false(set_hand(s, EDIT_F_VISIBLE));
	scene_free(s);
}

/* The decoded locals update equals the JSON update byte for byte. */
static void locals_is_the_json_update(int dims)
{
	scene *s = rig(dims);
	proto_buf bin, json;
	proto_bin_names names;
	int hand = scene_find(s, "hand");
	size_t need;
	char *text;

	proto_buf_init(&bin, 16);
	proto_buf_init(&json, 0);
	proto_bin_names_init(&names);
	assert_true(set_hand(s, EDIT_F_T | EDIT_F_EULER | EDIT_F_S | EDIT_F_PIVOT));
	snapshot_then_locals(s, PROTO_FORMAT_F64, &names, &bin);
	/* The header of the version 2 table. */
	assert_memory_equal(bin.data + bin.head, "RIGB", 4);
	assert_int_equal(le(&bin, 4, 1), PROTO_BIN_VERSION_LOCALS);
	assert_int_equal(le(&bin, 5, 1), PROTO_BIN_UPDATE);
	assert_int_equal(le(&bin, 6, 1), 8);
	assert_int_equal(le(&bin, 7, 1), dims == 2 ? 17 : 16);
	assert_int_equal(le(&bin, 24, 4), 0);
	assert_int_equal(le(&bin, 28, 4), 1);
	assert_int_equal(le(&bin, 36, 4), 1);
	assert_int_equal(le(&bin, 40, 2), 3);
	need = 42 + 3 + 4 + 12 * 8 + 8 + 8 * (dims == 2 ? 17 : 16) + le(&bin, 32, 4);
	assert_int_equal(bin.len, need);
	/* The entry: index, sibling index, then t. */
	assert_int_equal(le(&bin, 42 + 3 + 4 + 96, 4), (uint64_t)hand);
	assert_int_equal(le(&bin, 42 + 3 + 4 + 96 + 4, 4), 0);
	assert_int_equal(proto_encode_update(&json, "rig", 9, s, &hand, 1, &hand, 1, NULL, 0), 0);
	text = to_json(&names, &bin);
	assert_string_equal(text, proto_buf_str(&json));
	free(text);
	/* The record kept is the new one: a second entry decodes alike. */
	assert_true(set_hand(s, EDIT_F_T));
	proto_buf_reset(&bin);
	proto_buf_reset(&json);
	{
		bool locals = true;

		assert_int_equal(proto_bin_encode_update_locals(&bin, PROTO_FORMAT_F64, "rig", 10, 9,
								s, &hand, 1, &hand, &locals, 1,
								NULL, 0, false), 0);
	}
	assert_int_equal(proto_encode_update(&json, "rig", 10, s, &hand, 1, &hand, 1, NULL, 0), 0);
	text = to_json(&names, &bin);
	assert_string_equal(text, proto_buf_str(&json));
	free(text);
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	proto_buf_release(&json);
	scene_free(s);
}

static void test_locals_3d(void **state)
{
	(void)state;
	locals_is_the_json_update(3);
}

static void test_locals_2d(void **state)
{
	(void)state;
	locals_is_the_json_update(2);
}

/* In a float32 frame the channels stay float64: the record is exact. */
static void test_locals_f32_record_exact(void **state)
{
	scene *s = rig(3);
	proto_buf bin, rec;
	proto_bin_names names;
	char *text, *want;

	(void)state;
	proto_buf_init(&bin, 0);
	proto_buf_init(&rec, 0);
	proto_bin_names_init(&names);
	assert_true(set_hand(s, EDIT_F_T | EDIT_F_EULER));
	snapshot_then_locals(s, PROTO_FORMAT_F32, &names, &bin);
	assert_int_equal(le(&bin, 6, 1), 4);
	assert_int_equal(proto_encode_node_record(&rec, s, scene_find(s, "hand")), 0);
	text = to_json(&names, &bin);
	/* The record without its closing brace, then its world. */
	want = strndup(proto_buf_str(&rec), rec.len - 1);
	assert_non_null(want);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "\"world\":"));
	free(want);
	free(text);
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	proto_buf_release(&rec);
	scene_free(s);
}

/* Without a locals entry the update is of version 1, as before. */
static void test_no_locals_is_version_1(void **state)
{
	scene *s = rig(3);
	proto_buf bin;
	int hand = scene_find(s, "hand");
	bool locals = false;

	(void)state;
	proto_buf_init(&bin, 0);
	assert_int_equal(proto_bin_encode_update_locals(&bin, PROTO_FORMAT_F32, "rig", 9, 7, s,
							&hand, 1, &hand, &locals, 1, NULL, 0,
							false), 0);
	assert_int_equal(le(&bin, 4, 1), PROTO_BIN_VERSION);
	assert_int_equal(le(&bin, 24, 4), 1);
	proto_buf_release(&bin);
	scene_free(s);
}

/* Decoding 'len' bytes of 'd' fails with bad_field naming 'field' (NULL:
 * any), 'out' as it was; 'any' accepts a clean decode too. */
static void try_frame(proto_bin_names *names, const unsigned char *d, size_t len,
		      const char *field, bool any)
{
	proto_buf out;
	edit_error err;
	unsigned char *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, d, len);
	proto_buf_init(&out, 0);
	assert_int_equal(PROTO_BUF_LIT(&out, "x"), 0);
	rc = proto_bin_to_json(names, copy, len, &out, &err);
	if (!(any && rc == 0) &&
	    (rc != RIGD_E_BAD_FIELD || (field && strcmp(err.field, field) != 0))) {
		print_error("len %zu: want bad_field '%s', got %s '%s' (%s)\n", len,
			    field ? field : "*", err_code(rc), err.field, err.message);
		fail();
	}
	if (rc)
		assert_string_equal(proto_buf_str(&out), "x");
	proto_buf_release(&out);
	free(copy);
}

static void test_malformed_locals(void **state)
{
	scene *s = rig(3);
	proto_buf bin;
	proto_bin_names names, fresh;
	unsigned char *d;
	size_t len, entry = 42 + 3 + 4 + 96;
	double inf = INFINITY;
	uint64_t bits;

	(void)state;
	proto_buf_init(&bin, 0);
	proto_bin_names_init(&names);
	proto_bin_names_init(&fresh);
	assert_true(set_hand(s, EDIT_F_T));
	snapshot_then_locals(s, PROTO_FORMAT_F64, &names, &bin);
	d = (unsigned char *)bin.data + bin.head;
	len = bin.len;
	/* An entry for an index no frame bound. */
	try_frame(&fresh, d, len, "index", false);
	for (size_t n = 0; n < len; n++)
		try_frame(&names, d, n, NULL, false);
	d[7] = 15;
	try_frame(&names, d, len, "version", false);
	d[7] = 16;
	d[36] = 0;
	try_frame(&names, d, len, NULL, false);
	d[36] = 1;
	memcpy(&bits, &inf, sizeof(bits));
	for (int i = 0; i < 8; i++)
		d[entry + 8 + i] = (unsigned char)(bits >> (8 * i));
	try_frame(&names, d, len, "locals", false);
	proto_buf_reset(&bin);
	snapshot_then_locals(s, PROTO_FORMAT_F64, &names, &bin);
	d = (unsigned char *)bin.data + bin.head;
	/* Every byte changed: an error or a clean decode, never a crash. */
	for (size_t i = 0; i < len; i++) {
		unsigned char was = d[i];

		d[i] = (unsigned char)(was ^ 0xa5);
		try_frame(&names, d, len, NULL, true);
		d[i] = was;
	}
	proto_bin_names_release(&names);
	proto_bin_names_release(&fresh);
	proto_buf_release(&bin);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_marks_channels_only),
		cmocka_unit_test(test_locals_3d),
		cmocka_unit_test(test_locals_2d),
		cmocka_unit_test(test_locals_f32_record_exact),
		cmocka_unit_test(test_no_locals_is_version_1),
		cmocka_unit_test(test_malformed_locals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
