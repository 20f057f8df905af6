/*
 * test_proto.c: the JSON codecs. Numbers round-trip bit for bit; every
 * field refuses every wrong type; hostile input (truncated, 10,000-deep,
 * NaN/Infinity/1e400, bad UTF-8, NUL, 10 KB ids) gets its error code and
 * never a crash; every message of the websocket protocol decodes; every
 * encoder writes exactly the documented shape.
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
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "edit_equal.h"

/* ---------- helpers ---------- */

static int decode_batch_str(const char *json, edit_batch *b, edit_error *err)
{
	return proto_decode_batch(json, strlen(json), NULL, b, err);
}

/* Decoding 'json' as a batch fails with 'code' at op 'op' naming 'field'
 * (field NULL: not checked). */
static void batch_fails(const char *json, int code, int op, const char *field)
{
	edit_batch b;
	edit_error err;
	int rc = decode_batch_str(json, &b, &err);

	if (rc != code || err.code != code || err.op != op ||
	    (field && strcmp(err.field, field) != 0)) {
		print_error("%.200s\n  want %s op %d field '%s', got %s op %d field '%s' (%s)\n", json,
			    err_code(code), op, field ? field : "*", err_code(rc), err.op, err.field,
			    err.message);
		fail();
	}
	assert_int_equal(b.n_ops, 0);
	assert_null(b.ops);
}

static void msg_fails(const char *json, int code, const char *field)
{
	proto_msg m;
	edit_error err;
	int rc = proto_decode_msg(json, strlen(json), NULL, &m, NULL, &err);

	if (rc != code || err.code != code || (field && strcmp(err.field, field) != 0)) {
		print_error("%.200s\n  want %s field '%s', got %s field '%s' (%s)\n", json,
			    err_code(code), field ? field : "*", err_code(rc), err.field, err.message);
		fail();
	}
	assert_int_equal(m.type, 0);
	assert_int_equal(m.batch.n_ops, 0);
	assert_null(m.selection);
	assert_null(m.name);
	assert_null(m.token);
}

/* The batch as JSON, in a malloc'd string. */
static char *batch_json(const edit_batch *b)
{
	proto_buf buf;
	char *s;

	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_batch(&buf, b), 0);
	s = proto_buf_take(&buf);
	assert_non_null(s);
	return s;
}

/* The same ops, client and client_seq. */
static void assert_ops_equal(const edit_batch *a, const edit_batch *b)
{
	assert_string_equal(a->client, b->client);
	assert_int_equal(a->has_client_seq, b->has_client_seq);
	if (a->has_client_seq)
		assert_true(a->client_seq == b->client_seq);
	assert_same_ops(a, b);
}

/* Encode, decode, compare bit for bit, encode again: the same text. */
static void round_trip(const edit_batch *b)
{
	char *json = batch_json(b), *again;
	edit_batch back;
	edit_error err;

	if (decode_batch_str(json, &back, &err) != 0) {
		print_error("%s\n  %s\n", json, err.message);
		fail();
	}
	assert_ops_equal(b, &back);
	again = batch_json(&back);
	assert_string_equal(json, again);
	free(json);
	free(again);
	edit_batch_release(&back);
}

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Any finite double, drawn from every exponent and every sign. */
static double rnd_double(void)
{
	for (;;) {
		uint64_t bits = rnd();
		double d;

		memcpy(&d, &bits, sizeof(d));
		if (isfinite(d))
			return d;
	}
}

/* ---------- the buffer and numbers ---------- */

static void test_buffer(void **state)
{
	proto_buf b;
	char *taken;

	(void)state;
	proto_buf_init(&b, 16);
	assert_string_equal(proto_buf_str(&b), "");
	assert_int_equal(proto_buf_json_string(&b, "a\"b\\c\n\t\r\x01\x1f é/"), 0);
	assert_string_equal(proto_buf_str(&b), "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u001f é/\"");
	proto_buf_reset(&b);
	assert_string_equal(proto_buf_str(&b), "");
	for (int i = 0; i < 10000; i++)
		assert_int_equal(proto_buf_append(&b, "0123456789", 10), 0);
	assert_int_equal(b.len, 100000);
	assert_int_equal(strlen(proto_buf_str(&b)), 100000);
	assert_int_equal(proto_buf_json_number(&b, NAN), RIGD_E_NOT_FINITE);
	assert_int_equal(proto_buf_json_number(&b, -INFINITY), RIGD_E_NOT_FINITE);
	assert_int_equal(b.len, 100000);
	taken = proto_buf_take(&b);
	assert_non_null(taken);
	assert_int_equal(strncmp(taken + 16, "0123", 4), 0);
	free(taken);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	taken = proto_buf_take(&b); /* an empty buffer gives "" after the head */
	assert_non_null(taken);
	assert_string_equal(taken + 16, "");
	free(taken);
	proto_buf_release(&b);
	proto_buf_release(NULL);
}

static void test_number_format(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.0, "0" },
		{ -0.0, "-0" },
		{ 1.0, "1" },
		{ -42.0, "-42" },
		{ 0.1, "0.1" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 9007199254740992.0, "9007199254740992" },
		{ 1e300, "1e+300" },
		{ 5e-324, "4.94065645841247e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 0.7071067811865476, "0.7071067811865476" },
	};
	proto_buf b;

	(void)state;
	proto_buf_init(&b, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		proto_buf_reset(&b);
		assert_int_equal(proto_buf_json_number(&b, cases[i].v), 0);
		assert_string_equal(proto_buf_str(&b), cases[i].text);
	}
	proto_buf_release(&b);
}

/* 300,000 random doubles of every exponent through an op and back. */
static void test_numbers_round_trip(void **state)
{
	edit_batch b;

	(void)state;
	for (int round = 0; round < 1000; round++) {
		edit_batch_init(&b);
		for (int i = 0; i < 20; i++) {
			edit_op *op = edit_batch_add(&b, EDIT_SET, "n");

			op->fields = EDIT_F_T | EDIT_F_R | EDIT_F_S | EDIT_F_PIVOT | EDIT_F_BOUNDS |
				     EDIT_F_FOV;
			op->t = vec3_make(rnd_double(), rnd_double(), -0.0);
			op->r = (quat){ rnd_double(), rnd_double(), rnd_double(), rnd_double() };
			op->s = vec3_make(rnd_double(), 5e-324, -5e-324);
			op->pivot = vec3_make(rnd_double(), 1e-310, 2.2250738585072014e-308);
			op->has_bounds = true;
			op->bounds = aabb_make(vec3_make(rnd_double(), rnd_double(), rnd_double()),
					       vec3_make(rnd_double(), rnd_double(), rnd_double()));
			op->fov_deg = rnd_double();
		}
		round_trip(&b);
		edit_batch_release(&b);
	}
}

/* The value the reader gives the number 'text' (via an op's t.x). */
static double read_number(const char *text)
{
	char json[1200];
	edit_batch b;
	edit_error err;
	double v;

	snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[%s,0,0]}]}", text);
	if (decode_batch_str(json, &b, &err) != 0) {
		print_error("%s: %s\n", text, err.message);
		fail();
	}
	v = b.ops[0].t.x;
	edit_batch_release(&b);
	return v;
}

static void assert_reads_as_strtod(const char *text)
{
	double want = strtod(text, NULL), got;

	if (!isfinite(want)) {
		char json[1200];

		snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[%s,0,0]}]}", text);
		batch_fails(json, RIGD_E_NOT_FINITE, 0, "t");
		return;
	}
	got = read_number(text);

	if (memcmp(&got, &want, sizeof(got)) != 0) {
		print_error("%s: read %.17g, strtod %.17g\n", text, got, want);
		fail();
	}
}

/* The reader's fast paths agree with strtod bit for bit: random decimals of
 * 1 to 21 digits and exponents across the whole range, halfway cases, and
 * what the writer prints for random doubles. */
static void test_number_parse(void **state)
{
	static const char *const fixed[] = {
		"0", "-0", "1", "-1", "0.1", "0.5", "1e22", "1e23", "1e-22", "1e-23", "123456789e27",
		"9007199254740993", "9007199254740995", "18014398509481985", "1.7976931348623157e308",
		"4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072014e-308",
		"0.30000000000000004", "12345678901234567890", "1234567890123456789012",
		"0.000000000000000000000000000001", "1E5", "1e+5", "-1.5E-5", "9.999999999999999e22",
		"8.98846567431158e307", "1e-400", "123.456e-300", "7.2057594037927933e16",
		"3.0517578125e-05", "5e-324", "2.4703282292062327e-324",
	};
	char text[64];

	(void)state;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		assert_reads_as_strtod(fixed[i]);
	for (int i = 0; i < 200000; i++) {
		int digits = 1 + (int)(rnd() % 21), point = (int)(rnd() % (uint64_t)(digits + 1));
		int exp10 = (int)(rnd() % 80) - 40, k = 0;

		if (i % 10 == 0)
			exp10 = (int)(rnd() % 700) - 350;
		if (rnd() % 2)
			text[k++] = '-';
		for (int d = 0; d < digits; d++) {
			if (d == point && d > 0)
				text[k++] = '.';
			text[k++] = (char)('0' + (d == 0 ? 1 + rnd() % 9 : rnd() % 10));
		}
		if (i % 3)
			k += sprintf(text + k, "e%d", exp10);
		text[k] = '\0';
		assert_reads_as_strtod(text);
	}
	/* What the writer prints for any double reads back to it. */
	for (int i = 0; i < 200000; i++) {
		double v = rnd_double();
		proto_buf b;
		double back;

		proto_buf_init(&b, 0);
		assert_int_equal(proto_buf_json_number(&b, v), 0);
		back = read_number(proto_buf_str(&b));
		assert_memory_equal(&back, &v, sizeof(v));
		assert_true(b.len <= 24);
		proto_buf_release(&b);
	}
}

/* ---------- ops ---------- */

static void test_decode_every_field(void **state)
{
	const char *json =
		"{\"client\":\"c-17\",\"client_seq\":42,\"ops\":["
		"{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"base\",\"index\":0,\"name\":\"Arm\","
		"\"t\":[1,2,3],\"r\":[0,0,0.7071067811865476,0.7071067811865476],\"s\":[1,2,0.5],"
		"\"pivot\":[0,-0.5,0],\"bounds\":{\"min\":[-1,0,-1],\"max\":[1,1e-3,1]},"
		"\"mesh\":\"box\",\"kind\":\"camera\",\"camera\":{\"fov\":45,\"near\":0.25,\"far\":9},"
		"\"visible\":false},"
		"{\"op\":\"set\",\"id\":\"arm\",\"euler\":[10,-20,30.5],\"name\":null,\"mesh\":null,"
		"\"bounds\":null,\"camera\":{\"far\":10}},"
		"{\"op\":\"reparent\",\"id\":\"arm\",\"parent\":null,\"index\":2,\"keep_world\":true},"
		"{\"op\":\"delete\",\"id\":\"arm\"}]}";
	edit_batch b;
	edit_error err;
	const edit_op *op;

	(void)state;
	assert_int_equal(decode_batch_str(json, &b, &err), 0);
	assert_string_equal(b.client, "c-17");
	assert_true(b.has_client_seq && b.client_seq == 42);
	assert_int_equal(b.n_ops, 4);
	op = &b.ops[0];
	assert_int_equal(op->kind, EDIT_CREATE);
	assert_int_equal(op->fields, EDIT_F_PARENT | EDIT_F_INDEX | EDIT_F_NAME | EDIT_F_T | EDIT_F_R |
					     EDIT_F_S | EDIT_F_PIVOT | EDIT_F_BOUNDS | EDIT_F_MESH |
					     EDIT_F_KIND | EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR |
					     EDIT_F_VISIBLE);
	assert_string_equal(op->parent, "base");
	assert_int_equal(op->index, 0);
	assert_string_equal(op->name, "Arm");
	assert_true(op->t.z == 3 && op->r.w == 0.7071067811865476 && op->s.z == 0.5);
	assert_true(op->pivot.y == -0.5 && op->has_bounds && op->bounds.max.y == 1e-3);
	assert_string_equal(op->mesh, "box");
	assert_int_equal(op->node_kind, NODE_CAMERA);
	assert_true(op->fov_deg == 45 && op->znear == 0.25 && op->zfar == 9);
	assert_false(op->visible);
	op = &b.ops[1];
	assert_int_equal(op->fields, EDIT_F_EULER | EDIT_F_NAME | EDIT_F_MESH | EDIT_F_BOUNDS |
					     EDIT_F_FAR);
	assert_null(op->name);
	assert_null(op->mesh);
	assert_false(op->has_bounds);
	assert_true(op->euler_deg.z == 30.5 && op->zfar == 10);
	op = &b.ops[2];
	assert_int_equal(op->fields, EDIT_F_PARENT | EDIT_F_INDEX | EDIT_F_KEEP_WORLD);
	assert_string_equal(op->parent, "");
	assert_true(op->keep_world && op->index == 2);
	op = &b.ops[3];
	assert_int_equal(op->kind, EDIT_DELETE);
	assert_int_equal(op->fields, 0);
	assert_int_equal(op->index, -1);
	round_trip(&b);
	edit_batch_release(&b);

	/* Anonymous, and with nulls for the optional batch fields. */
	assert_int_equal(decode_batch_str("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],"
					  "\"client\":null,\"client_seq\":null}", &b, &err), 0);
	assert_string_equal(b.client, "");
	assert_false(b.has_client_seq);
	round_trip(&b);
	edit_batch_release(&b);
}

/* Every member of an op with every wrong type. */
static void test_wrong_types(void **state)
{
	static const struct {
		const char *op;
		const char *field;
		const char *good;       /* a value it accepts */
		const char *wrong[8];   /* values it refuses, NULL-terminated */
		int code;               /* of the refusal */
	} cases[] = {
		{ "set", "t", "[1,2,3]", { "1", "\"1\"", "true", "null", "{}", "[1,2]", "[1,2,3,4]", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "t", "[1,2,3]", { "[1,\"2\",3]", "[1,null,3]", "[[1],2,3]", "[]", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "r", "[0,0,0,1]", { "[0,0,1]", "[0,0,0,1,0]", "\"q\"", "{\"w\":1}", "null", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "s", "[1,1,1]", { "2", "[true,1,1]", "false", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "pivot", "[0,0,0]", { "[0,0]", "\"0,0,0\"", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "euler", "[0,90,0]", { "[0,90]", "90", "{\"x\":0}", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "name", "\"n\"", { "1", "true", "[]", "{}", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "mesh", "\"m\"", { "1", "false", "[\"m\"]", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "kind", "\"group\"", { "\"light\"", "0", "null", "\"Group\"", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "visible", "true", { "1", "\"true\"", "null", "0", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "bounds", "null", { "[]", "{}", "{\"min\":[0,0,0]}", "1", "\"b\"", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "bounds", "{\"min\":[0,0,0],\"max\":[1,1,1]}", { "{\"min\":[0,0],\"max\":[1,1,1]}", "{\"min\":[0,0,0],\"max\":[1,1,1],\"mid\":1}", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "camera", "{\"fov\":50}", { "{}", "{\"fov\":\"50\"}", "{\"zoom\":1}", "50", "null", NULL }, RIGD_E_BAD_FIELD },
		{ "create", "index", "0", { "-1", "1.5", "\"0\"", "3e9", "null", "true", NULL }, RIGD_E_BAD_FIELD },
		{ "create", "parent", "null", { "1", "true", "[]", NULL }, RIGD_E_BAD_FIELD },
		{ "reparent", "keep_world", "false", { "0", "\"yes\"", "null", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "id", "\"a\"", { "1", "null", "[\"a\"]", "{}", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "op", "\"set\"", { "1", "null", "[\"set\"]", NULL }, RIGD_E_BAD_FIELD },
		{ "set", "t", "[1,2,3]", { "[1,1e400,3]", "[-1e400,0,0]", NULL }, RIGD_E_NOT_FINITE },
		{ "set", "camera", "{\"near\":1}", { "{\"near\":1e999}", NULL }, RIGD_E_NOT_FINITE },
		{ "set", "id", "\"a\"", { "\"a/b\"", "\"..\\/x\"", "\"\"", "\"sp ace\"", "\"\\u00e9\"", NULL }, RIGD_E_BAD_ID },
		{ "create", "parent", "\"p\"", { "\"../p\"", "\"p\\\\q\"", NULL }, RIGD_E_BAD_ID },
		{ "set", "op", "\"set\"", { "\"spin\"", "\"SET\"", "\"\"", NULL }, RIGD_E_UNKNOWN_OP },
	};
	char json[512];
	edit_batch b;
	edit_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *parent = strcmp(cases[i].op, "reparent") == 0 &&
						     strcmp(cases[i].field, "parent") != 0
					     ? ",\"parent\":\"p\""
					     : "";
		bool is_key = strcmp(cases[i].field, "op") == 0 || strcmp(cases[i].field, "id") == 0;

#define OP_JSON(value)                                                                        \
	(is_key ? snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"set\",\"id\":\"z\"},{%s%s%s}]}", \
			   strcmp(cases[i].field, "op") == 0 ? "\"id\":\"a\",\"op\":" : "\"op\":\"set\",\"id\":", \
			   value, "")                                                         \
		: snprintf(json, sizeof(json),                                                \
			   "{\"ops\":[{\"op\":\"set\",\"id\":\"z\"},{\"op\":\"%s\",\"id\":\"a\"%s,\"%s\":%s}]}", \
			   cases[i].op, parent, cases[i].field, value))

		OP_JSON(cases[i].good);
		if (decode_batch_str(json, &b, &err) != 0) {
			print_error("%s refused: %s\n", json, err.message);
			fail();
		}
		edit_batch_release(&b);
		for (int j = 0; cases[i].wrong[j]; j++) {
			const char *want_field = cases[i].field;

			OP_JSON(cases[i].wrong[j]);
			/* Inside camera, the member's own name is reported. */
			if (strcmp(cases[i].field, "camera") == 0 && cases[i].code == RIGD_E_NOT_FINITE)
				want_field = "near";
			else if (strcmp(cases[i].field, "camera") == 0 && strchr(cases[i].wrong[j], 'z'))
				want_field = "zoom";
			else if (strcmp(cases[i].field, "camera") == 0 && strstr(cases[i].wrong[j], "fov"))
				want_field = "fov";
			else if (strstr(cases[i].wrong[j], "mid"))
				want_field = "mid";
			batch_fails(json, cases[i].code, 1, want_field);
		}
#undef OP_JSON
	}
}

static void test_op_shape_errors(void **state)
{
	(void)state;
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"colour\":1}]}", RIGD_E_BAD_FIELD, 0, "colour");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"a_rather_long_member_name\":1}]}", RIGD_E_BAD_FIELD, 0,
		    "a_rather_long_member_name");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1,2,3],\"t\":[1,2,3]}]}", RIGD_E_BAD_FIELD, 0, "t");
	batch_fails("{\"ops\":[{\"id\":\"a\"}]}", RIGD_E_BAD_FIELD, 0, "op");
	batch_fails("{\"ops\":[{\"op\":\"set\"}]}", RIGD_E_BAD_FIELD, 0, "id");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"parent\":\"b\"}]}", RIGD_E_BAD_FIELD, 0, "parent");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"keep_world\":true}]}", RIGD_E_BAD_FIELD, 0, "keep_world");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\",\"t\":[0,0,0]}]}", RIGD_E_BAD_FIELD, 0, "t");
	batch_fails("{\"ops\":[{\"op\":\"reparent\",\"id\":\"a\"}]}", RIGD_E_BAD_FIELD, 0, "parent");
	batch_fails("{\"ops\":[{\"op\":\"reparent\",\"id\":\"a\",\"parent\":null,\"camera\":{\"fov\":1}}]}", RIGD_E_BAD_FIELD, 0, "camera");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"r\":[0,0,0,1],\"euler\":[0,0,0]}]}", RIGD_E_BAD_FIELD, 0, "euler");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\"},1]}", RIGD_E_BAD_FIELD, 1, "ops");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\"},{\"op\":\"set\",\"id\":\"b\"},{\"op\":\"nope\",\"id\":\"a\"}]}", RIGD_E_UNKNOWN_OP, 2, "op");
	batch_fails("{\"ops\":[]}", RIGD_E_BAD_FIELD, -1, "ops");
	batch_fails("{\"ops\":{}}", RIGD_E_BAD_FIELD, -1, "ops");
	batch_fails("{\"ops\":null}", RIGD_E_BAD_FIELD, -1, "ops");
	batch_fails("{\"client\":\"c\"}", RIGD_E_BAD_FIELD, -1, "ops");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"extra\":1}", RIGD_E_BAD_FIELD, -1, "extra");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client\":\"c/d\"}", RIGD_E_BAD_ID, -1, "client");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client\":7}", RIGD_E_BAD_FIELD, -1, "client");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client_seq\":-1}", RIGD_E_BAD_FIELD, -1, "client_seq");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client_seq\":1.5}", RIGD_E_BAD_FIELD, -1, "client_seq");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client_seq\":\"3\"}", RIGD_E_BAD_FIELD, -1, "client_seq");
	batch_fails("{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"client_seq\":9007199254740992}", RIGD_E_BAD_FIELD, -1, "client_seq");
	batch_fails("[{\"op\":\"delete\",\"id\":\"a\"}]", RIGD_E_BAD_FIELD, -1, "batch");
	batch_fails("\"ops\"", RIGD_E_BAD_FIELD, -1, "batch");
}

/* ---------- hostile text ---------- */

static void test_hostile_text(void **state)
{
	static const char *const bad_json[] = {
		"", " ", "{", "}", "[", "{\"ops\":", "nul", "tru", "{\"ops\":[]}x", "{}{}", "{} []",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[NaN,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[Infinity,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[-Infinity,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[nan,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[+1,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[.5,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1e,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[-,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[0x10,0,0]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1,0,0,]}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",}]}",
		"{'ops':[]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\\u0000b\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\\x41\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\\ud800\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\xc3\x28\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\xc0\xaf\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\xed\xa0\x80\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\xf4\x90\x80\x80\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\xe2\x82\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"unterminated}]}",
		"\xef\xbb\xbf{\"ops\":[]}",
		"{\"ops\":}", "[1 2]", "{\"ops\" []}", "{\"ops\":[],}", "[,1]", "{,}", "]", "[}", "{]",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\"}]]", "{\"ops\":[{\"op\":\"set\",\"id\":\"a\"}}",
		"{1:2}", "{\"a\":1 \"b\":2}", "[\"a\":1]", "{\"a\"}", "[1,]", "{\"a\":[1,2}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\\udc00\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\\ud83d\\u0041\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\\u12\"}]}",
		"{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"\\u12g4\"}]}",
	};
	const char *valid = "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1.5,-2e-3,3],"
			    "\"name\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}],\"client\":\"c\"}";
	size_t n = strlen(valid);
	edit_batch b;
	edit_error err;
	char *deep;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++)
		batch_fails(bad_json[i], RIGD_E_BAD_JSON, -1, "");
	assert_int_equal(decode_batch_str(valid, &b, &err), 0);
	assert_string_equal(b.ops[0].name, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	edit_batch_release(&b);
	/* Escapes decode, and the name written back reads the same. */
	assert_int_equal(decode_batch_str("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":"
					  "\"\\ud83d\\ude00 \\u00e9\\u20AC \\\"\\\\\\/\\b\\f\\n\\r\\t\\u001f\"}]}",
					  &b, &err), 0);
	assert_string_equal(b.ops[0].name, "\xf0\x9f\x98\x80 \xc3\xa9\xe2\x82\xac \"\\/\b\f\n\r\t\x1f");
	round_trip(&b);
	edit_batch_release(&b);
	/* Left to cJSON (proto_decode.c's header): "01" and "1." read as 1, and a raw
	 * tab inside a string is kept. */
	assert_true(read_number("01") == 1 && read_number("1.") == 1);
	assert_int_equal(decode_batch_str("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"tab\there\"}]}",
					  &b, &err), 0);
	assert_string_equal(b.ops[0].name, "tab\there");
	edit_batch_release(&b);

	/* Every proper prefix of a valid batch. */
	for (size_t len = 0; len < n; len++) {
		assert_int_equal(proto_decode_batch(valid, len, NULL, &b, &err), RIGD_E_BAD_JSON);
		assert_null(b.ops);
	}
	/* A NUL inside the length. */
	assert_int_equal(proto_decode_batch("{\"ops\":[]}\0{}", 13, NULL, &b, &err), RIGD_E_BAD_JSON);
	assert_int_equal(proto_decode_batch(NULL, 0, NULL, &b, &err), RIGD_E_BAD_JSON);

	/* Overflow to infinity is not a number we keep. */
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1e400,0,0]}]}", RIGD_E_NOT_FINITE, 0, "t");
	batch_fails("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"r\":[0,0,0,-1E+309]}]}", RIGD_E_NOT_FINITE, 0, "r");
	/* Underflow is fine (it is a finite number). */
	assert_int_equal(decode_batch_str("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":[1e-400,0,0]}]}", &b, &err), 0);
	assert_true(b.ops[0].t.x == 0);
	edit_batch_release(&b);
	/* Long numbers are read whole (Debian's cJSON 1.7.15 has no 63-character
	 * cut since the fix for CVE-2023-26819), and exactly. */
	assert_int_equal(decode_batch_str("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":["
					  "0.100000000000000005551115123125782702118158340454101562500000,0,0]}]}",
					  &b, &err), 0);
	assert_true(b.ops[0].t.x == 0.1);
	edit_batch_release(&b);
	assert_int_equal(decode_batch_str("{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"t\":["
					  "0.1000000000000000055511151231257827021181583404541015625000000000,0,0]}]}",
					  &b, &err), 0);
	assert_true(b.ops[0].t.x == 0.1);
	edit_batch_release(&b);

	/* 10,000-deep nesting, closed and unclosed, bare and inside a batch. */
	deep = malloc(20100);
	assert_non_null(deep);
	memset(deep, '[', 10000);
	memset(deep + 10000, ']', 10000);
	deep[20000] = '\0';
	batch_fails(deep, RIGD_E_BAD_JSON, -1, "");
	deep[10000] = '\0';
	batch_fails(deep, RIGD_E_BAD_JSON, -1, "");
	strcpy(deep, "{\"ops\":");
	for (int i = 0; i < 10000; i++)
		strcat(deep + 7 + i, "{");
	batch_fails(deep, RIGD_E_BAD_JSON, -1, "");
	/* Depth 32 is the most a message may nest. */
	strcpy(deep, "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"x\":");
	for (int i = 0; i < 29; i++)
		strcat(deep, "[");
	for (int i = 0; i < 29; i++)
		strcat(deep, "]");
	strcat(deep, "}]}");
	batch_fails(deep, RIGD_E_BAD_FIELD, 0, "x");
	free(deep);
}

static void test_ids_and_sizes(void **state)
{
	char *big = malloc(12000);
	char id65[66];
	proto_limits lim = proto_limits_default();
	edit_batch b;
	edit_error err;
	int n;

	(void)state;
	assert_non_null(big);
	/* A 10 KB id. */
	n = snprintf(big, 12000, "{\"ops\":[{\"op\":\"delete\",\"id\":\"");
	memset(big + n, 'a', 10240);
	strcpy(big + n + 10240, "\"}]}");
	batch_fails(big, RIGD_E_BAD_ID, 0, "id");
	/* 65 characters is one too many; 64 is fine. */
	memset(id65, 'x', 65);
	id65[65] = '\0';
	snprintf(big, 12000, "{\"ops\":[{\"op\":\"delete\",\"id\":\"%s\"}]}", id65);
	batch_fails(big, RIGD_E_BAD_ID, 0, "id");
	id65[64] = '\0';
	snprintf(big, 12000, "{\"ops\":[{\"op\":\"delete\",\"id\":\"%s\"}]}", id65);
	assert_int_equal(decode_batch_str(big, &b, &err), 0);
	edit_batch_release(&b);
	/* A configured id length. */
	lim.edit.max_id_len = 8;
	assert_int_equal(proto_decode_batch(big, strlen(big), &lim, &b, &err), RIGD_E_BAD_ID);
	/* Too many bytes. */
	lim = proto_limits_default();
	lim.max_bytes = 40;
	assert_int_equal(proto_decode_batch(big, strlen(big), &lim, &b, &err), RIGD_E_TOO_LARGE);
	assert_int_equal(err.code, RIGD_E_TOO_LARGE);
	/* Too many ops. */
	lim = proto_limits_default();
	lim.edit.max_ops = 3;
	strcpy(big, "{\"ops\":[{\"op\":\"delete\",\"id\":\"a\"},{\"op\":\"delete\",\"id\":\"a\"},"
		    "{\"op\":\"delete\",\"id\":\"a\"},{\"op\":\"delete\",\"id\":\"a\"}]}");
	assert_int_equal(proto_decode_batch(big, strlen(big), &lim, &b, &err), RIGD_E_LIMIT);
	assert_string_equal(err.field, "ops");
	lim.edit.max_ops = 4;
	assert_int_equal(proto_decode_batch(big, strlen(big), &lim, &b, &err), 0);
	edit_batch_release(&b);
	/* A name of 256 bytes is fine, 257 is not. */
	n = snprintf(big, 12000, "{\"ops\":[{\"op\":\"set\",\"id\":\"a\",\"name\":\"");
	memset(big + n, 'n', 257);
	strcpy(big + n + 257, "\"}]}");
	batch_fails(big, RIGD_E_BAD_FIELD, 0, "name");
	strcpy(big + n + 256, "\"}]}");
	assert_int_equal(decode_batch_str(big, &b, &err), 0);
	edit_batch_release(&b);
	free(big);
}

/* ---------- websocket messages ---------- */

static void test_messages(void **state)
{
	proto_msg m;
	proto_req req;
	edit_error err;
	const char *j;

	(void)state;
	j = "{\"type\":\"subscribe\",\"scene\":\"demo\"}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_SUBSCRIBE);
	assert_string_equal(m.scene, "demo");
	assert_false(m.req.present);
	proto_msg_release(&m);

	j = "{\"type\":\"unsubscribe\",\"scene\":\"demo\",\"req\":\"r-1\"}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_UNSUBSCRIBE);
	assert_true(m.req.present && m.req.is_string);
	assert_string_equal(m.req.str, "r-1");
	proto_msg_release(&m);

	j = "{\"type\":\"edit\",\"scene\":\"demo\",\"req\":7,\"client\":\"c-1\",\"client_seq\":3,"
	    "\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"euler\":[0,0,40]}]}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_EDIT);
	assert_true(m.req.present && !m.req.is_string && m.req.num == 7);
	assert_string_equal(m.batch.client, "c-1");
	assert_true(m.batch.has_client_seq && m.batch.client_seq == 3);
	assert_int_equal(m.batch.n_ops, 1);
	assert_true(m.batch.ops[0].euler_deg.z == 40);
	proto_msg_release(&m);

	j = "{\"type\":\"undo\",\"scene\":\"demo\",\"req\":8}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_UNDO);
	proto_msg_release(&m);
	j = "{\"type\":\"redo\",\"scene\":\"demo\",\"req\":9,\"client\":\"c-1\"}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_REDO);
	assert_string_equal(m.batch.client, "c-1");
	proto_msg_release(&m);

	j = "{\"type\":\"presence\",\"scene\":\"demo\",\"selection\":[\"arm\",\"hand\"],\"name\":\"Ada\"}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_PRESENCE);
	assert_int_equal(m.n_selection, 2);
	assert_string_equal(m.selection[1].s, "hand");
	assert_string_equal(m.name, "Ada");
	proto_msg_release(&m);
	j = "{\"type\":\"presence\",\"scene\":\"demo\",\"selection\":[]}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.n_selection, 0);
	assert_null(m.name);
	proto_msg_release(&m);
	proto_msg_release(NULL);

	msg_fails("{\"type\":\"dance\",\"scene\":\"demo\"}", RIGD_E_UNKNOWN_TYPE, "type");
	msg_fails("{\"scene\":\"demo\"}", RIGD_E_BAD_FIELD, "type");
	msg_fails("{\"type\":3,\"scene\":\"demo\"}", RIGD_E_BAD_FIELD, "type");
	msg_fails("{\"type\":\"subscribe\"}", RIGD_E_BAD_FIELD, "scene");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"de/mo\"}", RIGD_E_BAD_ID, "scene");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"..\"}", RIGD_E_BAD_ID, "scene");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\".\"}", RIGD_E_BAD_ID, "scene");
	msg_fails("{\"type\":\"subscribe\",\"scene\":5}", RIGD_E_BAD_FIELD, "scene");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"ops\":[]}", RIGD_E_BAD_FIELD, "ops");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"volume\":11}", RIGD_E_BAD_FIELD, "volume");
	msg_fails("{\"type\":\"edit\",\"scene\":\"demo\",\"req\":1}", RIGD_E_BAD_FIELD, "ops");
	msg_fails("{\"type\":\"edit\",\"scene\":\"demo\",\"ops\":[{\"op\":\"fly\",\"id\":\"a\"}]}", RIGD_E_UNKNOWN_OP, "op");
	msg_fails("{\"type\":\"undo\",\"scene\":\"demo\",\"selection\":[]}", RIGD_E_BAD_FIELD, "selection");
	msg_fails("{\"type\":\"presence\",\"scene\":\"demo\"}", RIGD_E_BAD_FIELD, "selection");
	msg_fails("{\"type\":\"presence\",\"scene\":\"demo\",\"selection\":[\"a\",\"b/c\"]}", RIGD_E_BAD_ID, "selection");
	msg_fails("{\"type\":\"presence\",\"scene\":\"demo\",\"selection\":\"a\"}", RIGD_E_BAD_FIELD, "selection");
	msg_fails("{\"type\":\"presence\",\"scene\":\"demo\",\"selection\":[],\"name\":7}", RIGD_E_BAD_FIELD, "name");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"req\":1.5}", RIGD_E_BAD_FIELD, "req");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"req\":-1}", RIGD_E_BAD_FIELD, "req");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"req\":[1]}", RIGD_E_BAD_FIELD, "req");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"req\":\"0123456789012345678901234567890123456789012345678901234567890123456789\"}", RIGD_E_BAD_FIELD, "req");
	msg_fails("[\"subscribe\"]", RIGD_E_BAD_FIELD, "message");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\"", RIGD_E_BAD_JSON, "");

	/* The req comes back even when the rest of the message is refused. */
	j = "{\"type\":\"edit\",\"scene\":\"demo\",\"req\":41,\"ops\":[{\"op\":\"set\",\"id\":\"a/b\"}]}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, &req, &err), RIGD_E_BAD_ID);
	assert_true(req.present && req.num == 41);
	assert_int_equal(err.op, 0);
	j = "{\"type\":\"warp\",\"req\":\"x\",\"scene\":\"demo\"}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, &req, &err), RIGD_E_UNKNOWN_TYPE);
	assert_true(req.present && req.is_string);
	assert_string_equal(req.str, "x");
	j = "{\"type\":\"subscribe\",\"req\":3,\"bogus\":1,\"scene\":\"demo\"}";
	assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, &req, &err), RIGD_E_BAD_FIELD);
	assert_true(req.present && req.num == 3);

	/* A selection beyond the limit. */
	{
		proto_limits lim = proto_limits_default();

		lim.max_selection = 1;
		j = "{\"type\":\"presence\",\"scene\":\"demo\",\"selection\":[\"a\",\"b\"]}";
		assert_int_equal(proto_decode_msg(j, strlen(j), &lim, &m, NULL, &err), RIGD_E_LIMIT);
		assert_string_equal(err.field, "selection");
		assert_null(m.selection);
	}
}

/* {"type":"auth","token","req"?}: the token copied whole, no scene, every
 * malformed token bad_field without the token in the message. */
/* Decodes 'j' as a message and gives its ops re-encoded (a string to free),
 * or the error's code and message. */
static char *decoded(const char *j, size_t len)
{
	proto_msg m;
	edit_error err;
	proto_buf b;
	char *out;
	int rc = proto_decode_msg(j, len, NULL, &m, NULL, &err);

	proto_buf_init(&b, 0);
	if (rc == 0) {
		assert_int_equal(proto_encode_ops(&b, &m.batch), 0);
		proto_msg_release(&m);
	} else {
		char line[sizeof(err.message) + 16];

		snprintf(line, sizeof(line), "%d %s", rc, err.message);
		assert_int_equal(json_buf_append(&b, line, strlen(line)), 0);
	}
	out = proto_buf_take(&b);
	proto_buf_release(&b);
	assert_non_null(out);
	return out;
}

/* The decoders' trees come from a per-thread arena: a message whose tree
 * outgrows it (part arena, part malloc), one refused mid-parse (a partial
 * tree freed) and one refused after it (a whole tree freed) decode, and
 * leave the next decoding, exactly as with every block from malloc. */
static void test_parse_arena(void **state)
{
	enum { BIG_OPS = 3000 };
	proto_buf big;
	const char *small = "{\"type\":\"edit\",\"scene\":\"s\",\"req\":1,"
			    "\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"r\":[0,0,0.6,0.8]}]}";
	const char *cut = "{\"type\":\"edit\",\"scene\":\"s\",\"ops\":[{\"op\":\"set\",\"id\":\"a";
	const char *wrong = "{\"type\":\"edit\",\"scene\":\"s\",\"ops\":[{\"op\":\"set\",\"id\":\"a\","
			    "\"t\":[1,2,3]},{\"op\":\"set\",\"id\":\"b\",\"t\":[1,2]}]}";
	const char *head = "{\"type\":\"edit\",\"scene\":\"s\",\"ops\":[";
	const char *msgs[6];
	size_t lens[6];
	char *with[6], *without[6];
	proto_limits lim = proto_limits_default();

	(void)state;
	proto_buf_init(&big, 0);
	assert_int_equal(json_buf_append(&big, head, strlen(head)), 0);
	for (int i = 0; i < BIG_OPS; i++) {
		char op[96];
		int n = snprintf(op, sizeof(op), "%s{\"op\":\"set\",\"id\":\"n%d\",\"t\":[%d,0.5,-2]}",
				 i ? "," : "", i, i);

		assert_int_equal(json_buf_append(&big, op, (size_t)n), 0);
	}
	assert_int_equal(json_buf_append(&big, "]}", 2), 0);
	msgs[0] = small, msgs[1] = big.data + big.head, msgs[2] = small;
	msgs[3] = cut, msgs[4] = wrong, msgs[5] = small;
	for (int i = 0; i < 6; i++)
		lens[i] = i == 1 ? big.len : strlen(msgs[i]);
	assert_true(big.len < lim.max_bytes);

	for (int i = 0; i < 6; i++)
		with[i] = decoded(msgs[i], lens[i]);
	proto_parse_arena(false);
	for (int i = 0; i < 6; i++)
		without[i] = decoded(msgs[i], lens[i]);
	proto_parse_arena(true);
	for (int i = 0; i < 6; i++) {
		assert_string_equal(with[i], without[i]);
		free(with[i]);
		free(without[i]);
	}
	/* And they were what they should be: the big batch whole, the cut one bad_json. */
	with[1] = decoded(msgs[1], lens[1]);
	assert_non_null(strstr(with[1], "{\"op\":\"set\",\"id\":\"n2999\",\"t\":[2999,0.5,-2]}]"));
	with[3] = decoded(cut, strlen(cut));
	assert_int_equal(atoi(with[3]), RIGD_E_BAD_JSON);
	free(with[1]);
	free(with[3]);
	proto_buf_release(&big);
}

static void test_auth_message(void **state)
{
	proto_msg m;
	proto_req req;
	edit_error err;
	char j[600], tok[PROTO_TOKEN_MAX + 2];
	const char *s;

	(void)state;
	s = "{\"type\":\"auth\",\"token\":\"editor-demo-0123456789\",\"req\":4}";
	assert_int_equal(proto_decode_msg(s, strlen(s), NULL, &m, NULL, &err), 0);
	assert_int_equal(m.type, PROTO_AUTH);
	assert_string_equal(m.token, "editor-demo-0123456789");
	assert_string_equal(m.scene, "");
	assert_true(m.req.present && m.req.num == 4);
	proto_msg_release(&m);
	assert_null(m.token);

	/* req is optional; one character and PROTO_TOKEN_MAX of every visible
	 * ASCII character are tokens (':' and '"' among them). */
	s = "{\"token\":\"x\",\"type\":\"auth\"}";
	assert_int_equal(proto_decode_msg(s, strlen(s), NULL, &m, NULL, &err), 0);
	assert_string_equal(m.token, "x");
	assert_false(m.req.present);
	proto_msg_release(&m);
	memset(tok, 0, sizeof(tok));
	for (int i = 0; i < PROTO_TOKEN_MAX; i++)
		tok[i] = (char)(0x21 + i % (0x7f - 0x21));
	{
		/* As a JSON string: '"' and '\' escaped. */
		char lit[2 * PROTO_TOKEN_MAX + 1];
		size_t n = 0;

		for (int i = 0; i < PROTO_TOKEN_MAX; i++) {
			if (tok[i] == '"' || tok[i] == '\\')
				lit[n++] = '\\';
			lit[n++] = tok[i];
		}
		lit[n] = '\0';
		snprintf(j, sizeof(j), "{\"type\":\"auth\",\"token\":\"%s\"}", lit);
		assert_int_equal(proto_decode_msg(j, strlen(j), NULL, &m, NULL, &err), 0);
		assert_int_equal(strlen(m.token), PROTO_TOKEN_MAX);
		assert_memory_equal(m.token, tok, PROTO_TOKEN_MAX);
		proto_msg_release(&m);
	}

	/* One character too many. */
	memset(tok, 'a', PROTO_TOKEN_MAX + 1);
	tok[PROTO_TOKEN_MAX + 1] = '\0';
	snprintf(j, sizeof(j), "{\"type\":\"auth\",\"token\":\"%s\"}", tok);
	msg_fails(j, RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"two words\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"tab\\there\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"caf\xc3\xa9-0123456789\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"del\\u007f\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":null}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":12345678901234567}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":[\"a\"]}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"a\",\"token\":\"b\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"auth\",\"token\":\"a\",\"scene\":\"demo\"}", RIGD_E_BAD_FIELD, "scene");
	msg_fails("{\"type\":\"auth\",\"token\":\"a\",\"role\":\"admin\"}", RIGD_E_BAD_FIELD, "role");
	msg_fails("{\"type\":\"subscribe\",\"scene\":\"demo\",\"token\":\"a\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"edit\",\"scene\":\"demo\",\"ops\":[],\"token\":\"a\"}", RIGD_E_BAD_FIELD, "token");
	msg_fails("{\"type\":\"Auth\",\"token\":\"a\"}", RIGD_E_UNKNOWN_TYPE, "type");

	/* Refused tokens never appear in the error's message or field. */
	s = "{\"type\":\"auth\",\"req\":9,\"token\":\"secret value\"}";
	assert_int_equal(proto_decode_msg(s, strlen(s), NULL, &m, &req, &err), RIGD_E_BAD_FIELD);
	assert_true(req.present && req.num == 9);
	assert_null(strstr(err.message, "secret"));
	assert_string_equal(err.field, "token");
	assert_null(m.token);
}

/* ---------- log lines and small bodies ---------- */

static void test_log_lines(void **state)
{
	edit_batch b;
	edit_op *op;
	proto_buf buf;
	proto_log_line line;
	edit_error err;
	const char *j;

	(void)state;
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "arm");
	op->fields = EDIT_F_R;
	op->r = (quat){ 0, 0, 0.3420201433256687, 0.9396926207859084 };
	snprintf(b.client, sizeof(b.client), "c-17");
	b.has_client_seq = true;
	b.client_seq = 42;
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_log_line(&buf, 12, 1700000000123456, &b), 0);
	assert_string_equal(proto_buf_str(&buf),
			    "{\"seq\":12,\"time\":1700000000123456,\"client\":\"c-17\",\"client_seq\":42,"
			    "\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"r\":[0,0,0.3420201433256687,"
			    "0.9396926207859084]}]}\n");
	assert_int_equal(proto_decode_log_line(proto_buf_str(&buf), buf.len, NULL, &line, &err), 0);
	assert_true(line.seq == 12 && line.time_us == 1700000000123456);
	assert_ops_equal(&b, &line.batch);
	edit_batch_release(&line.batch);

	/* Anonymous: client and client_seq null. */
	b.client[0] = '\0';
	b.has_client_seq = false;
	proto_buf_reset(&buf);
	assert_int_equal(proto_encode_log_line(&buf, 1, 0, &b), 0);
	assert_non_null(strstr(proto_buf_str(&buf), "\"client\":null,\"client_seq\":null"));
	assert_int_equal(proto_decode_log_line(proto_buf_str(&buf), buf.len, NULL, &line, &err), 0);
	assert_ops_equal(&b, &line.batch);
	edit_batch_release(&line.batch);

	j = "{\"seq\":0,\"time\":1,\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}]}";
	assert_int_equal(proto_decode_log_line(j, strlen(j), NULL, &line, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "seq");
	j = "{\"seq\":1,\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}]}";
	assert_int_equal(proto_decode_log_line(j, strlen(j), NULL, &line, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "time");
	j = "{\"seq\":1,\"time\":2,\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}],\"inverse\":[]}";
	assert_int_equal(proto_decode_log_line(j, strlen(j), NULL, &line, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "inverse");
	j = "{\"seq\":1,\"time\":2,\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}]}\r\n";
	assert_int_equal(proto_decode_log_line(j, strlen(j), NULL, &line, &err), 0);
	assert_int_equal(line.seq, 1);
	edit_batch_release(&line.batch);
	j = "{\"seq\":1,\"time\":2,\"ops\":[{\"op\":\"delete\",\"id\":\"a\"}]}\n{\"seq\":2}";
	assert_int_equal(proto_decode_log_line(j, strlen(j), NULL, &line, &err), RIGD_E_BAD_JSON);
	assert_int_equal(line.batch.n_ops, 0);

	/* A bare ops array, as the log stores ops and inverses. */
	proto_buf_reset(&buf);
	assert_int_equal(proto_encode_ops(&buf, &b), 0);
	{
		edit_batch back;

		assert_int_equal(proto_decode_ops(proto_buf_str(&buf), buf.len, NULL, &back, &err), 0);
		assert_ops_equal(&b, &back);
		edit_batch_release(&back);
		j = "{\"ops\":[]}";
		assert_int_equal(proto_decode_ops(j, strlen(j), NULL, &back, &err), RIGD_E_BAD_FIELD);
	}
	proto_buf_release(&buf);
	edit_batch_release(&b);
}

static void test_scene_create_body(void **state)
{
	char name[SCENE_ID_MAX + 1];
	edit_error err;
	const char *j;

	(void)state;
	j = "{\"name\":\"demo-2\"}";
	assert_int_equal(proto_decode_scene_create(j, strlen(j), name, &err), 0);
	assert_string_equal(name, "demo-2");
	j = "{\"name\":\"..\"}";
	assert_int_equal(proto_decode_scene_create(j, strlen(j), name, &err), RIGD_E_BAD_ID);
	assert_string_equal(name, "");
	j = "{\"name\":\"a/b\"}";
	assert_int_equal(proto_decode_scene_create(j, strlen(j), name, &err), RIGD_E_BAD_ID);
	j = "{}";
	assert_int_equal(proto_decode_scene_create(j, strlen(j), name, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "name");
	j = "{\"name\":\"a\",\"owner\":\"b\"}";
	assert_int_equal(proto_decode_scene_create(j, strlen(j), name, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "owner");
	j = "{\"name\":";
	assert_int_equal(proto_decode_scene_create(j, strlen(j), name, &err), RIGD_E_BAD_JSON);
}

/* ---------- encoders ---------- */

/* base (t 1 2 3) -> arm (camera, bounds, mesh, name "A\"rm"), and a root 'b2'. */
static scene *small_scene(void)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;
	edit_error err;

	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_CREATE, "base");
	op->fields = EDIT_F_T;
	op->t = vec3_make(1, 2, 3);
	op = edit_batch_add(&b, EDIT_CREATE, "arm");
	edit_op_set_parent(op, "base");
	edit_op_set_name(op, "A\"rm");
	edit_op_set_mesh(op, "box");
	op->fields |= EDIT_F_BOUNDS | EDIT_F_KIND | EDIT_F_S | EDIT_F_VISIBLE;
	op->has_bounds = true;
	op->bounds = aabb_make(vec3_make(-0.5, 0, -0.5), vec3_make(0.5, 1, 0.5));
	op->node_kind = NODE_CAMERA;
	op->s = vec3_make(2, 2, 2);
	op->visible = false;
	edit_batch_add(&b, EDIT_CREATE, "b2");
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), 0);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

#define ARM_JSON                                                                              \
	"{\"id\":\"arm\",\"name\":\"A\\\"rm\",\"parent\":\"base\",\"index\":0,\"t\":[0,0,0],"  \
	"\"r\":[0,0,0,1],\"s\":[2,2,2],\"pivot\":[0,0,0],\"euler\":[0,0,0],"                     \
	"\"bounds\":{\"min\":[-0.5,0,-0.5],\"max\":[0.5,1,0.5]},\"mesh\":\"box\","              \
	"\"kind\":\"camera\",\"camera\":{\"fov\":60,\"near\":0.1,\"far\":1000},"               \
	"\"visible\":false,\"world\":[2,0,0,0,0,2,0,0,0,0,2,0,1,2,3,1]}"
#define BASE_JSON                                                                             \
	"{\"id\":\"base\",\"name\":null,\"parent\":null,\"index\":0,\"t\":[1,2,3],"            \
	"\"r\":[0,0,0,1],\"s\":[1,1,1],\"pivot\":[0,0,0],\"euler\":[0,0,0],\"bounds\":null,"    \
	"\"mesh\":null,\"kind\":\"group\",\"camera\":{\"fov\":60,\"near\":0.1,\"far\":1000},"  \
	"\"visible\":true,\"world\":[1,0,0,0,0,1,0,0,0,0,1,0,1,2,3,1]}"
#define B2_JSON                                                                               \
	"{\"id\":\"b2\",\"name\":null,\"parent\":null,\"index\":1,\"t\":[0,0,0],"              \
	"\"r\":[0,0,0,1],\"s\":[1,1,1],\"pivot\":[0,0,0],\"euler\":[0,0,0],\"bounds\":null,"    \
	"\"mesh\":null,\"kind\":\"group\",\"camera\":{\"fov\":60,\"near\":0.1,\"far\":1000},"  \
	"\"visible\":true,\"world\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]}"

static void test_encode_nodes(void **state)
{
	scene *s = small_scene();
	proto_buf b;
	int arm = scene_find(s, "arm"), base = scene_find(s, "base");
	edit_id removed[2] = { { "gone" }, { "x\"y" } };
	int world[2] = { base, arm };

	(void)state;
	proto_buf_init(&b, 0);
	assert_int_equal(proto_encode_node(&b, s, arm), 0);
	assert_string_equal(proto_buf_str(&b), ARM_JSON);
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_tree(&b, "demo", 7, s), 0);
	assert_string_equal(proto_buf_str(&b), "{\"scene\":\"demo\",\"seq\":7,\"nodes\":[" BASE_JSON
						"," ARM_JSON "," B2_JSON "]}");
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_snapshot(&b, "demo", 7, s), 0);
	assert_string_equal(proto_buf_str(&b), "{\"type\":\"snapshot\",\"scene\":\"demo\",\"seq\":7,"
						"\"nodes\":[" BASE_JSON "," ARM_JSON "," B2_JSON "]}");
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_update(&b, "demo", 8, s, world, 2, &arm, 1, removed, 2), 0);
	assert_string_equal(proto_buf_str(&b),
			    "{\"type\":\"update\",\"scene\":\"demo\",\"seq\":8,\"world\":{"
			    "\"base\":[1,0,0,0,0,1,0,0,0,0,1,0,1,2,3,1],"
			    "\"arm\":[2,0,0,0,0,2,0,0,0,0,2,0,1,2,3,1]},"
			    "\"nodes\":[" ARM_JSON "],\"removed\":[\"gone\",\"x\\\"y\"]}");
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_update(&b, "demo", 9, s, NULL, 0, NULL, 0, NULL, 0), 0);
	assert_string_equal(proto_buf_str(&b), "{\"type\":\"update\",\"scene\":\"demo\",\"seq\":9,"
						"\"world\":{},\"nodes\":[],\"removed\":[]}");
	proto_buf_release(&b);
	scene_free(s);
}

static void test_encode_messages(void **state)
{
	proto_buf b;
	proto_req num = { .present = true, .num = 12 };
	proto_req str = { .present = true, .is_string = true, .str = "r\"1" };
	edit_error e;
	edit_id sel[2] = { { "arm" }, { "hand" } };
	proto_scene_info scenes[2] = { { "demo", 12, 3 }, { "two", 0, 0 } };

	(void)state;
	proto_buf_init(&b, 0);
#define EXPECT(call, text)                                \
	do {                                              \
		proto_buf_reset(&b);                      \
		assert_int_equal(call, 0);                \
		assert_string_equal(proto_buf_str(&b), text); \
	} while (0)

	EXPECT(proto_encode_ack(&b, &num, 5, 2), "{\"type\":\"ack\",\"req\":12,\"seq\":5,\"recomputed\":2}");
	EXPECT(proto_encode_ack(&b, NULL, 5, 2), "{\"type\":\"ack\",\"seq\":5,\"recomputed\":2}");
	/* The answer to an accepted auth message: no batch, so seq 0. */
	EXPECT(proto_encode_ack(&b, &num, 0, 0), "{\"type\":\"ack\",\"req\":12,\"seq\":0,\"recomputed\":0}");
	EXPECT(proto_encode_http_ack(&b, 12, 59), "{\"seq\":12,\"recomputed\":59}");
	edit_error_set(&e, RIGD_E_UNKNOWN_NODE, 3, "parent", "unknown node '%s'", "arm2");
	EXPECT(proto_encode_error(&b, &str, &e),
	       "{\"type\":\"error\",\"req\":\"r\\\"1\",\"code\":\"unknown_node\","
	       "\"message\":\"op 3: unknown node 'arm2'\",\"op\":3,\"field\":\"parent\"}");
	EXPECT(proto_encode_http_error(&b, &e),
	       "{\"error\":{\"code\":\"unknown_node\",\"message\":\"op 3: unknown node 'arm2'\","
	       "\"op\":3,\"field\":\"parent\"}}");
	edit_error_clear(&e);
	e.code = RIGD_E_STORAGE;
	EXPECT(proto_encode_error(&b, NULL, &e),
	       "{\"type\":\"error\",\"code\":\"storage\",\"message\":\"the edit could not be stored\"}");
	EXPECT(proto_encode_http_error(&b, &e),
	       "{\"error\":{\"code\":\"storage\",\"message\":\"the edit could not be stored\"}}");
	EXPECT(proto_encode_presence(&b, "demo", "c-1", "Ada", sel, 2),
	       "{\"type\":\"presence\",\"scene\":\"demo\",\"client\":\"c-1\",\"name\":\"Ada\","
	       "\"selection\":[\"arm\",\"hand\"]}");
	EXPECT(proto_encode_presence(&b, "demo", "c-1", NULL, NULL, 0),
	       "{\"type\":\"presence\",\"scene\":\"demo\",\"client\":\"c-1\",\"name\":null,\"selection\":[]}");
	EXPECT(proto_encode_join(&b, "demo", "c-2", "Bo"),
	       "{\"type\":\"join\",\"scene\":\"demo\",\"client\":\"c-2\",\"name\":\"Bo\"}");
	EXPECT(proto_encode_leave(&b, "demo", "c-2"), "{\"type\":\"leave\",\"scene\":\"demo\",\"client\":\"c-2\"}");
	EXPECT(proto_encode_scene_list(&b, scenes, 2),
	       "{\"scenes\":[{\"name\":\"demo\",\"seq\":12,\"nodes\":3},{\"name\":\"two\",\"seq\":0,\"nodes\":0}]}");
	EXPECT(proto_encode_scene_list(&b, NULL, 0), "{\"scenes\":[]}");
#undef EXPECT
	/* Encoders append. */
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_leave(&b, "a", "b"), 0);
	assert_int_equal(proto_encode_leave(&b, "c", "d"), 0);
	assert_non_null(strstr(proto_buf_str(&b), "}{"));
	proto_buf_release(&b);
}

/* The inverse of a batch, through JSON and back, still undoes it exactly. */
static void test_inverse_through_json(void **state)
{
	scene *s = small_scene();
	edit_batch b, inv, back;
	edit_op *op;
	edit_error err;
	proto_buf buf;
	uint64_t hash;

	(void)state;
	hash = scene_hash(s);
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_SET, "arm");
	op->fields = EDIT_F_EULER | EDIT_F_T;
	op->euler_deg = vec3_make(12.5, -33.25, 77);
	op->t = vec3_make(0.1, 0.2, 0.30000000000000004);
	op = edit_batch_add(&b, EDIT_REPARENT, "arm");
	edit_op_set_parent(op, "b2");
	op->fields |= EDIT_F_KEEP_WORLD;
	op->keep_world = true;
	edit_batch_add(&b, EDIT_DELETE, "base");
	assert_int_equal(edit_apply(s, &b, NULL, &inv, &err), 0);
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_ops(&buf, &inv), 0);
	assert_int_equal(proto_decode_ops(proto_buf_str(&buf), buf.len, NULL, &back, &err), 0);
	assert_ops_equal(&inv, &back);
	assert_int_equal(edit_apply(s, &back, NULL, NULL, &err), 0);
	scene_update(s, 2, NULL, NULL);
	assert_true(scene_hash(s) == hash);
	proto_buf_release(&buf);
	edit_batch_release(&back);
	edit_batch_release(&inv);
	edit_batch_release(&b);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_number_format),
		cmocka_unit_test(test_numbers_round_trip),
		cmocka_unit_test(test_number_parse),
		cmocka_unit_test(test_decode_every_field),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_op_shape_errors),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_ids_and_sizes),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_parse_arena),
		cmocka_unit_test(test_auth_message),
		cmocka_unit_test(test_log_lines),
		cmocka_unit_test(test_scene_create_body),
		cmocka_unit_test(test_encode_nodes),
		cmocka_unit_test(test_encode_messages),
		cmocka_unit_test(test_inverse_through_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
