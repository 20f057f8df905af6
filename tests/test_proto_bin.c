/*
 * test_proto_bin.c: binary snapshot and update frames (codec/proto_bin.h).
 * A float64 frame decodes to exactly the JSON message a JSON subscriber
 * gets, byte for byte; a float32 frame to each element rounded to float32;
 * the header holds what docs/protocol.md's table says; indices are scene
 * handles and a reused one is bound again; every truncation and every
 * corrupted header byte is an error or a clean decode, never a read past
 * the end (the suite runs under AddressSanitizer); subscribe's "format"
 * decodes and refuses what it must.
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

static quat unit(double x, double y, double z, double w)
{
	quat q;

	assert_int_equal(quat_normalize((quat){ x, y, z, w }, &q), 0);
	return q;
}

/* root -> arm -> hand (rotated, scaled, translated: matrices with long
 * decimals), and a second root 'b2' with a camera. */
static scene *rig(void)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;
	edit_error err;

	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_CREATE, "root");
	op->fields = EDIT_F_T | EDIT_F_R;
	op->t = vec3_make(0.1, -2.5, 3.3);
	op->r = unit(0.1, 0.2, 0.3, 0.9);
	op = edit_batch_add(&b, EDIT_CREATE, "arm");
	edit_op_set_parent(op, "root");
	op->fields |= EDIT_F_T | EDIT_F_S;
	op->t = vec3_make(1.0 / 3.0, 0.7, -0.2);
	op->s = vec3_make(1.5, 0.25, 2);
	op = edit_batch_add(&b, EDIT_CREATE, "hand");
	edit_op_set_parent(op, "arm");
	op->fields |= EDIT_F_R | EDIT_F_T;
	op->t = vec3_make(0, 0.3, 0);
	op->r = unit(-0.4, 0.1, 0.05, 0.7);
	op = edit_batch_add(&b, EDIT_CREATE, "b2");
	op->fields |= EDIT_F_KIND;
	op->node_kind = NODE_CAMERA;
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), 0);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	return s;
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

static uint64_t le(const proto_buf *b, size_t at, int bytes)
{
	const unsigned char *p = (const unsigned char *)b->data + b->head + at;
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void test_snapshot_f64_is_the_json_snapshot(void **state)
{
	scene *s = rig();
	proto_buf bin, json;
	proto_bin_names names;
	char *text;

	(void)state;
	proto_buf_init(&bin, 16);
	proto_buf_init(&json, 0);
	proto_bin_names_init(&names);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F64, "rig", 7, s), 0);
	assert_int_equal(proto_encode_snapshot(&json, "rig", 7, s), 0);
	/* The header of docs/protocol.md's table. */
	assert_memory_equal(bin.data + bin.head, "RIGB", 4);
	assert_int_equal(le(&bin, 4, 1), 1);
	assert_int_equal(le(&bin, 5, 1), PROTO_BIN_SNAPSHOT);
	assert_int_equal(le(&bin, 6, 1), 8);
	assert_int_equal(le(&bin, 7, 1), 0);
	assert_int_equal(le(&bin, 8, 8), 7);
	assert_int_equal(le(&bin, 16, 8), 0);
	assert_int_equal(le(&bin, 24, 4), 4);
	assert_int_equal(le(&bin, 28, 4), 4);
	assert_int_equal(le(&bin, 36, 2), 3);
	assert_memory_equal(bin.data + bin.head + 38, "rig", 3);
	assert_int_equal(bin.len, 38 + 3 + 4 * 4 + 4 * (4 + 96) + le(&bin, 32, 4));
	for (int pos = 0; pos < 4; pos++)
		assert_int_equal(le(&bin, 41 + 4 * (size_t)pos, 4), scene_at(s, pos));
	/* Decoded, it is the JSON snapshot byte for byte. */
	text = to_json(&names, &bin);
	assert_string_equal(text, proto_buf_str(&json));
	free(text);
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	proto_buf_release(&json);
	scene_free(s);
}

static void test_snapshot_f32_rounds_each_element(void **state)
{
	scene *s = rig();
	proto_buf bin;
	int hand = scene_find(s, "hand");
	mat4 w = scene_world(s, hand);
	size_t at;
	int k = -1;

	(void)state;
	proto_buf_init(&bin, 0);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F32, "rig", 7, s), 0);
	assert_int_equal(le(&bin, 6, 1), 4);
	for (int i = 0; i < 4; i++)
		if ((int)le(&bin, 41 + 16 + 4 * (size_t)i, 4) == hand)
			k = i;
	assert_true(k >= 0);
	at = 41 + 16 + 16 + (size_t)k * 48;
	for (int c = 0; c < 4; c++)
		for (int r = 0; r < 3; r++) {
			uint32_t bits = (uint32_t)le(&bin, at + 4 * (size_t)(c * 3 + r), 4);
			float f, want = (float)w.m[c * 4 + r];

			memcpy(&f, &bits, sizeof(f));
			assert_memory_equal(&f, &want, sizeof(f));
		}
	proto_buf_release(&bin);
	scene_free(s);
}

static void test_update_f64_is_the_json_update(void **state)
{
	scene *s = rig();
	proto_buf bin, json;
	proto_bin_names names;
	int world[2] = { scene_find(s, "arm"), scene_find(s, "hand") };
	int changed[1] = { scene_find(s, "arm") };
	edit_id removed[1] = { { "gone" } };
	char *text;

	(void)state;
	proto_buf_init(&bin, 0);
	proto_buf_init(&json, 0);
	proto_bin_names_init(&names);
	/* The client holds the snapshot's bindings. */
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F64, "rig", 7, s), 0);
	free(to_json(&names, &bin));
	proto_buf_reset(&bin);
	assert_int_equal(proto_bin_encode_update(&bin, PROTO_FORMAT_F64, "rig", 9, 7, s, world, 2,
						 changed, 1, removed, 1), 0);
	assert_int_equal(le(&bin, 5, 1), PROTO_BIN_UPDATE);
	assert_int_equal(le(&bin, 8, 8), 9);
	assert_int_equal(le(&bin, 16, 8), 7);
	assert_int_equal(le(&bin, 24, 4), 1);
	assert_int_equal(le(&bin, 28, 4), 2);
	assert_int_equal(proto_encode_update(&json, "rig", 9, s, world, 2, changed, 1, removed, 1), 0);
	text = to_json(&names, &bin);
	assert_string_equal(text, proto_buf_str(&json));
	free(text);
	/* A changed node without a recomputed matrix still gets its matrix,
	 * once. */
	proto_buf_reset(&bin);
	changed[0] = scene_find(s, "b2");
	assert_int_equal(proto_bin_encode_update(&bin, PROTO_FORMAT_F64, "rig", 9, 7, s, world, 2,
						 changed, 1, NULL, 0), 0);
	assert_int_equal(le(&bin, 28, 4), 3);
	text = to_json(&names, &bin);
	assert_non_null(strstr(text, "\"b2\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]"));
	free(text);
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	proto_buf_release(&json);
	scene_free(s);
}

/* A deleted node's handle goes to the next create: the update binds it. */
static void test_reused_index_is_bound_again(void **state)
{
	scene *s = rig();
	proto_buf bin;
	proto_bin_names names;
	edit_batch b;
	edit_op *op;
	edit_error err;
	int old = scene_find(s, "b2"), node;
	edit_id removed[1] = { { "b2" } };
	char *text;

	(void)state;
	proto_buf_init(&bin, 0);
	proto_bin_names_init(&names);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F32, "rig", 1, s), 0);
	free(to_json(&names, &bin));
	edit_batch_init(&b);
	edit_batch_add(&b, EDIT_DELETE, "b2");
	op = edit_batch_add(&b, EDIT_CREATE, "c3");
	op->fields |= EDIT_F_T;
	op->t = vec3_make(4, 5, 6);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), 0);
	edit_batch_release(&b);
	scene_update(s, 2, NULL, NULL);
	node = scene_find(s, "c3");
	assert_int_equal(node, old);  /* the handle was reused */
	proto_buf_reset(&bin);
	assert_int_equal(proto_bin_encode_update(&bin, PROTO_FORMAT_F32, "rig", 2, 1, s, &node, 1,
						 &node, 1, removed, 1), 0);
	text = to_json(&names, &bin);
	assert_non_null(strstr(text, "\"world\":{\"c3\":[1,0,0,0,0,1,0,0,0,0,1,0,4,5,6,1]}"));
	assert_non_null(strstr(text, "\"removed\":[\"b2\"]"));
	free(text);
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	scene_free(s);
}

/* Decoding 'len' bytes of 'd' fails with bad_field naming 'field' (NULL:
 * any), and 'out' stays as it was. */
static void bad_frame(proto_bin_names *names, const unsigned char *d, size_t len,
		      const char *field)
{
	proto_buf out;
	edit_error err;
	unsigned char *copy = malloc(len ? len : 1);
	int rc;

	/* A copy of exactly 'len' bytes, so AddressSanitizer catches any
	 * read past the end. */
	assert_non_null(copy);
	memcpy(copy, d, len);
	proto_buf_init(&out, 0);
	assert_int_equal(PROTO_BUF_LIT(&out, "x"), 0);
	rc = proto_bin_to_json(names, copy, len, &out, &err);
	if (rc != RIGD_E_BAD_FIELD || (field && strcmp(err.field, field) != 0)) {
		print_error("len %zu: want bad_field '%s', got %s '%s' (%s)\n", len,
			    field ? field : "*", err_code(rc), err.field, err.message);
		fail();
	}
	assert_string_equal(proto_buf_str(&out), "x");
	proto_buf_release(&out);
	free(copy);
}

static void patch(unsigned char *d, size_t at, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		d[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void test_malformed_frames(void **state)
{
	scene *s = rig();
	proto_buf bin, out;
	proto_bin_names names;
	unsigned char *d;
	size_t len;
	int world[1] = { scene_find(s, "hand") };

	(void)state;
	proto_buf_init(&bin, 0);
	proto_bin_names_init(&names);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F64, "rig", 3, s), 0);
	d = (unsigned char *)bin.data + bin.head;
	len = bin.len;
	/* Every truncation. */
	for (size_t n = 0; n < len; n++)
		bad_frame(&names, d, n, NULL);
	bad_frame(&names, d, 10, "length");
	/* Trailing bytes. */
	assert_int_equal(PROTO_BUF_LIT(&bin, "!"), 0);
	d = (unsigned char *)bin.data + bin.head;
	bad_frame(&names, d, len + 1, "length");
	d[0] = 'X';
	bad_frame(&names, d, len, "magic");
	d[0] = 'R';
	d[4] = 2;
	bad_frame(&names, d, len, "version");
	d[4] = 1;
	d[5] = 3;
	bad_frame(&names, d, len, "kind");
	d[5] = 1;
	d[6] = 2;
	bad_frame(&names, d, len, "format");
	d[6] = 8;
	/* Counts past the end, and counts so large they would overflow 32
	 * bits. */
	patch(d, 24, 5, 4);
	bad_frame(&names, d, len, "length");
	patch(d, 24, 0xffffffffu, 4);
	bad_frame(&names, d, len, "length");
	patch(d, 24, 4, 4);
	patch(d, 28, 0xffffffffu, 4);
	bad_frame(&names, d, len, "length");
	patch(d, 28, 4, 4);
	patch(d, 32, 0xffffffffu, 4);
	bad_frame(&names, d, len, "length");
	patch(d, 32, le(&bin, 32, 4), 4);
	patch(d, 36, 0xffff, 2);
	bad_frame(&names, d, len, "length");
	patch(d, 36, 3, 2);
	/* Every header byte flipped: an error or a clean decode. */
	for (size_t i = 0; i < 38; i++)
		for (int bit = 0; bit < 8; bit++) {
			edit_error err;

			d[i] ^= (unsigned char)(1u << bit);
			proto_buf_init(&out, 0);
			(void)proto_bin_to_json(&names, d, len, &out, &err);
			proto_buf_release(&out);
			d[i] ^= (unsigned char)(1u << bit);
		}
	/* A matrix whose index no frame bound. */
	proto_bin_names_release(&names);
	proto_buf_reset(&bin);
	assert_int_equal(proto_bin_encode_update(&bin, PROTO_FORMAT_F32, "rig", 4, 3, s, world, 1,
						 NULL, 0, NULL, 0), 0);
	bad_frame(&names, (unsigned char *)bin.data + bin.head, bin.len, "index");
	/* A non-finite element. */
	proto_buf_reset(&bin);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F32, "rig", 3, s), 0);
	d = (unsigned char *)bin.data + bin.head;
	patch(d, 41 + 16 + 16, 0x7f800000u, 4);
	bad_frame(&names, d, bin.len, "matrix");
	/* A JSON section that is not JSON, or whose node count differs. */
	proto_buf_reset(&bin);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F32, "rig", 3, s), 0);
	d = (unsigned char *)bin.data + bin.head;
	d[bin.len - 1] = ']';
	bad_frame(&names, d, bin.len, "json");
	d[bin.len - 1] = '}';
	/* One node fewer in the header, four bytes fewer in all: the lengths
	 * add up, and the JSON section, read from four bytes earlier, is not
	 * JSON. */
	patch(d, 24, 3, 4);
	bad_frame(&names, d, bin.len - 4, "json");
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	scene_free(s);
}

static void test_subscribe_format(void **state)
{
	static const char *const bad[] = {
		"{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":\"f16\"}",
		"{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":4}",
		"{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":null}",
		"{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":\"F32\"}",
		"{\"type\":\"unsubscribe\",\"scene\":\"a\",\"format\":\"f32\"}",
		"{\"type\":\"edit\",\"scene\":\"a\",\"ops\":[],\"format\":\"f32\"}",
	};
	static const struct {
		const char *json;
		int format;
	} good[] = {
		{ "{\"type\":\"subscribe\",\"scene\":\"a\"}", PROTO_FORMAT_JSON },
		{ "{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":\"json\"}", PROTO_FORMAT_JSON },
		{ "{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":\"f32\"}", PROTO_FORMAT_F32 },
		{ "{\"type\":\"subscribe\",\"scene\":\"a\",\"format\":\"f64\",\"req\":2}",
		  PROTO_FORMAT_F64 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		proto_msg m;
		edit_error err;

		assert_int_equal(proto_decode_msg(good[i].json, strlen(good[i].json), NULL, &m, NULL,
						  &err), 0);
		assert_int_equal(m.type, PROTO_SUBSCRIBE);
		assert_int_equal(m.format, good[i].format);
		proto_msg_release(&m);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		proto_msg m;
		edit_error err;

		assert_int_equal(proto_decode_msg(bad[i], strlen(bad[i]), NULL, &m, NULL, &err),
				 RIGD_E_BAD_FIELD);
		assert_string_equal(err.field, "format");
		assert_int_equal(m.type, 0);
	}
	assert_string_equal(proto_format_name(PROTO_FORMAT_F64), "f64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_f64_is_the_json_snapshot),
		cmocka_unit_test(test_snapshot_f32_rounds_each_element),
		cmocka_unit_test(test_update_f64_is_the_json_update),
		cmocka_unit_test(test_reused_index_is_bound_again),
		cmocka_unit_test(test_malformed_frames),
		cmocka_unit_test(test_subscribe_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
