/*
 * fuzz_bin.c: libFuzzer target for the decoder of binary snapshot and
 * update frames (server/codec/proto_bin.c, proto_bin_to_json), which
 * rigctl runs on what a server sends.
 *
 * Every input is decoded twice: with an empty index table, and with the
 * table a real snapshot of a small scene left (so updates naming its
 * indices get past the binding check, and the locals entries of a version
 * 2 update find the records they change). Besides "no crash, no leak, no
 * undefined behaviour, no read past the input" (the sanitizers; the input
 * has its exact length and nothing after it) it checks:
 *   - a refusal is bad_field or nomem, names the part of the frame, and
 *     leaves the output as it was;
 *   - an accepted frame decodes to one JSON value in valid UTF-8;
 *   - the decoder is deterministic: the same input with the same table
 *     gives the same bytes;
 *   - an accepted frame decoded again with the table it left (its records
 *     and its locals entries' records bound) gives the same bytes again.
 */
#include "codec/proto.h"
#include "codec/proto_bin.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include "fuzz_common.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* root -> arm -> hand and a second root: a snapshot binds indices 0..3. */
static void bind_small_scene(proto_bin_names *names)
{
	scene *s = scene_new();
	edit_batch b;
	edit_op *op;
	edit_error err;
	proto_buf frame, out;

	FUZZ_CHECK(s != NULL, "scene_new");
	edit_batch_init(&b);
	op = edit_batch_add(&b, EDIT_CREATE, "root");
	op->fields |= EDIT_F_T;
	op->t = vec3_make(0.5, 1, -2);
	op = edit_batch_add(&b, EDIT_CREATE, "arm");
	edit_op_set_parent(op, "root");
	op = edit_batch_add(&b, EDIT_CREATE, "hand");
	edit_op_set_parent(op, "arm");
	edit_batch_add(&b, EDIT_CREATE, "b2");
	FUZZ_CHECK(edit_apply(s, &b, NULL, NULL, &err) == 0, "build the scene: %s", err.message);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	proto_buf_init(&frame, 0);
	proto_buf_init(&out, 0);
	FUZZ_CHECK(proto_bin_encode_snapshot(&frame, PROTO_FORMAT_F32, "fz", 1, s) == 0, "encode");
	FUZZ_CHECK(proto_bin_to_json(names, (const unsigned char *)frame.data, frame.len, &out,
				     &err) == 0, "decode the snapshot: %s", err.message);
	proto_buf_release(&frame);
	proto_buf_release(&out);
	scene_free(s);
}

/* Decodes 'data' with 'names'; returns the output (the caller releases it). */
static proto_buf decode_once(proto_bin_names *names, const uint8_t *data, size_t size, int *rc)
{
	proto_buf out;
	edit_error err;

	proto_buf_init(&out, 0);
	FUZZ_CHECK(PROTO_BUF_LIT(&out, "x") == 0, "buffer");
	*rc = proto_bin_to_json(names, data, size, &out, &err);
	if (*rc) {
		FUZZ_CHECK(*rc == RIGD_E_BAD_FIELD || *rc == RIGD_E_NOMEM, "code %s", err_code(*rc));
		FUZZ_CHECK(err.code == *rc, "the error names its code");
		FUZZ_CHECK(*rc != RIGD_E_BAD_FIELD || err.field[0], "the error names the part");
		FUZZ_CHECK(out.len == 1 && memcmp(proto_buf_str(&out), "x", 1) == 0,
			   "a refusal leaves the output");
	} else {
		fuzz_check_json(proto_buf_str(&out) + 1, out.len - 1, "decoded frame");
	}
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	proto_bin_names names;

	for (int bound = 0; bound < 2; bound++) {
		proto_buf first, again;
		int rc1, rc2;

		proto_bin_names_init(&names);
		if (bound)
			bind_small_scene(&names);
		first = decode_once(&names, data, size, &rc1);
		if (rc1 == 0) {
			proto_buf third = decode_once(&names, data, size, &rc2);

			FUZZ_CHECK((rc2 == 0 && first.len == third.len &&
				    memcmp(proto_buf_str(&first), proto_buf_str(&third), first.len) == 0) ||
				   rc2 == RIGD_E_NOMEM,
				   "an accepted frame decodes alike with the table it left");
			proto_buf_release(&third);
		}
		proto_bin_names_release(&names);
		proto_bin_names_init(&names);
		if (bound)
			bind_small_scene(&names);
		again = decode_once(&names, data, size, &rc2);
		FUZZ_CHECK(rc1 == rc2 && first.len == again.len &&
			   memcmp(proto_buf_str(&first), proto_buf_str(&again), first.len) == 0,
			   "deterministic");
		proto_buf_release(&first);
		proto_buf_release(&again);
		proto_bin_names_release(&names);
	}
	return 0;
}
