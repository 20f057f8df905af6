/*
 * test_pose_wire.c: poses in their stored and wire forms: the pose ops'
 * JSON decoded, encoded and decoded again to the same ops (channels sorted
 * by id whatever the JSON's order), their refusals naming the op and
 * field, and a resolved pose batch through the log's binary op image and
 * back, bit for bit.
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
#include "core/pose.h"
#include "core/scene.h"
#include "engine/engine.h"

#include "edit_equal.h"

static const char batch_json[] =
	"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"walk1\",\"root\":\"hips\"},"
	"{\"op\":\"pose_save\",\"pose\":\"all\"},"
	"{\"op\":\"pose_set\",\"pose\":\"w2\",\"channels\":{"
	"\"z\":{\"t\":[1,2,0],\"r\":[0,0,0.1,0.99],\"s\":[1,1,1]},"
	"\"a\":{\"t\":[0.1,0.2,0.3],\"r\":[0,0,0,1],\"s\":[2,3,1]}}},"
	"{\"op\":\"pose_set\",\"pose\":\"empty\",\"channels\":{}},"
	"{\"op\":\"pose_delete\",\"pose\":\"walk1\"},"
	"{\"op\":\"blend\",\"root\":\"hips\",\"a\":\"walk1\",\"b\":\"w2\",\"t\":0.1}]}";

static void test_json_roundtrip(void **state)
{
	proto_limits lim = proto_limits_default();
	edit_batch b, again;
	edit_error err;
	proto_buf buf;

	(void)state;
	assert_int_equal(proto_decode_batch(batch_json, sizeof(batch_json) - 1, &lim, &b, &err), 0);
	assert_int_equal(b.n_ops, 6);
	assert_int_equal(b.ops[0].kind, EDIT_POSE_SAVE);
	assert_string_equal(b.ops[0].id, "walk1");
	assert_string_equal(b.ops[0].root, "hips");
	assert_int_equal(b.ops[1].fields, 0);
	assert_int_equal(b.ops[2].n_channels, 2);
	assert_string_equal(b.ops[2].channels[0].id, "a"); /* sorted */
	assert_true(b.ops[2].channels[1].r.z == 0.1);
	assert_int_equal(b.ops[3].fields, EDIT_F_CHANNELS);
	assert_int_equal(b.ops[3].n_channels, 0);
	assert_int_equal(b.ops[4].kind, EDIT_POSE_DELETE);
	assert_int_equal(b.ops[5].kind, EDIT_BLEND);
	assert_string_equal(b.ops[5].id, "hips");
	assert_true(b.ops[5].weight == 0.1);
	proto_buf_init(&buf, 0);
	assert_int_equal(proto_encode_batch(&buf, &b), 0);
	assert_int_equal(proto_decode_batch(proto_buf_str(&buf), buf.len, &lim, &again, &err), 0);
	assert_same_ops(&b, &again);
	proto_buf_release(&buf);
	edit_batch_release(&b);
	edit_batch_release(&again);
}

static void refused(const char *op_json, int code, const char *field)
{
	proto_limits lim = proto_limits_default();
	char json[512];
	edit_batch b;
	edit_error err;

	snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"pose_delete\",\"pose\":\"p\"},%s]}", op_json);
	assert_int_equal(proto_decode_batch(json, strlen(json), &lim, &b, &err), code);
	assert_int_equal(err.op, 1);
	assert_string_equal(err.field, field);
}

static void test_json_refusals(void **state)
{
	(void)state;
	refused("{\"op\":\"blend\",\"a\":\"x\",\"b\":\"y\",\"t\":0.5}", RIGD_E_BAD_FIELD, "root");
	refused("{\"op\":\"blend\",\"root\":\"r\",\"b\":\"y\",\"t\":0.5}", RIGD_E_BAD_FIELD, "a");
	refused("{\"op\":\"blend\",\"root\":\"r\",\"a\":\"x\",\"b\":\"y\",\"t\":\"1\"}",
		RIGD_E_BAD_FIELD, "t");
	refused("{\"op\":\"blend\",\"root\":\"r\",\"a\":\"x\",\"b\":\"y\",\"t\":1,\"pose\":\"p\"}",
		RIGD_E_BAD_FIELD, "pose");
	refused("{\"op\":\"pose_save\"}", RIGD_E_BAD_FIELD, "pose");
	refused("{\"op\":\"pose_save\",\"pose\":\"a/b\"}", RIGD_E_BAD_ID, "pose");
	refused("{\"op\":\"pose_save\",\"pose\":\"p\",\"id\":\"n\"}", RIGD_E_BAD_FIELD, "id");
	refused("{\"op\":\"pose_delete\",\"pose\":\"p\",\"root\":\"n\"}", RIGD_E_BAD_FIELD, "root");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\"}", RIGD_E_BAD_FIELD, "channels");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":[]}", RIGD_E_BAD_FIELD, "channels");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":{\"n\":{\"t\":[0,0,0],"
		"\"r\":[0,0,1],\"s\":[1,1,1]}}}", RIGD_E_BAD_FIELD, "channels");
	refused("{\"op\":\"pose_set\",\"pose\":\"p\",\"channels\":{\"n\":{\"t\":[0,0,0],"
		"\"r\":[0,0,0,1],\"s\":[1,1,1],\"pivot\":[0,0,0]}}}", RIGD_E_BAD_FIELD, "pivot");
}

/* A resolved pose batch through the binary op image a log row stores. */
static void test_op_image(void **state)
{
	scene *s = scene_new();
	edit_batch b, resolved, back;
	edit_error err;
	edit_op *op;
	unsigned char *img;
	size_t len;

	(void)state;
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_CREATE, "hips");
	op->fields = EDIT_F_T;
	op->t = vec3_make(0.1, 0.2, 0.3);
	edit_batch_add(&b, EDIT_CREATE, "leg")->fields = 0;
	edit_batch_add(&b, EDIT_POSE_SAVE, "p");
	edit_batch_add(&b, EDIT_POSE_SAVE, "q");
	edit_batch_add(&b, EDIT_POSE_DELETE, "q");
	assert_int_equal(edit_apply_resolve(s, &b, NULL, NULL, NULL, &resolved, &err), 0);
	assert_int_equal(engine_ops_encode_bin(&resolved, &img, &len), 0);
	assert_int_equal(engine_ops_decode_bin(img, len, &back), 0);
	assert_same_ops(&resolved, &back);
	assert_int_equal(back.ops[2].n_channels, 2);
	/* Every shorter image is refused, none is read past its end. */
	for (size_t cut = 0; cut < len; cut++) {
		edit_batch junk;

		assert_int_equal(engine_ops_decode_bin(img, cut, &junk), RIGD_E_IO);
	}
	free(img);
	edit_batch_release(&b);
	edit_batch_release(&resolved);
	edit_batch_release(&back);
	/* Relative pose ops never enter an image. */
	edit_batch_init(&b);
	edit_batch_add(&b, EDIT_POSE_SAVE, "p");
	assert_int_equal(engine_ops_encode_bin(&b, &img, &len), RIGD_E_TOO_LARGE);
	edit_batch_release(&b);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_json_refusals),
		cmocka_unit_test(test_op_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
