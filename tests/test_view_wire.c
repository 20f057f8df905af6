/*
 * test_view_wire.c: per-viewer interest on the wire (codec/proto_view.c and
 * the "hidden" list of binary frames): view messages decode into the view
 * core/view.h builds, every malformed one is refused with the member it
 * names and nothing decoded ("always" ids come sorted, each once);
 * "hidden" is appended to JSON updates and snapshots and to the JSON
 * section of binary frames (length patched), and a binary frame with it
 * decodes to the JSON message with it, byte for byte.
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
#include "core/err.h"
#include "core/scene.h"
#include "core/view.h"

static const char vp16[] = "[1.299,0,0,0, 0,1.732,0,0, 0,0,-1.002,-1, 0,0,-0.2002,0]";

static int decode(const char *json, proto_msg *m, edit_error *err)
{
	return proto_decode_msg(json, strlen(json), NULL, m, NULL, err);
}

static void test_view_messages(void **state)
{
	char text[512];
	proto_msg m;
	edit_error err;
	view want;
	double vp[16] = { 1.299, 0, 0, 0, 0, 1.732, 0, 0, 0, 0, -1.002, -1, 0, 0, -0.2002, 0 };

	(void)state;
	snprintf(text, sizeof(text),
		 "{\"type\":\"view\",\"scene\":\"s\",\"req\":3,\"vp\":%s,\"viewport\":[800,600],"
		 "\"min_px\":2.5}", vp16);
	assert_int_equal(decode(text, &m, &err), 0);
	assert_int_equal(m.type, PROTO_VIEW);
	assert_string_equal(m.scene, "s");
	assert_int_equal(m.req.num, 3);
	assert_false(m.view_clear);
	assert_int_equal(view_from_vp(vp, 800, 600, 2.5, &want), 0);
	assert_true(view_same(&m.view, &want));
	proto_msg_release(&m);

	assert_int_equal(decode("{\"type\":\"view\",\"scene\":\"s\",\"planes\":[[1,0,0,1],[-1,0,0,1],"
				"[0,1,0,1],[0,-1,0,1],[0,0,1,1],[0,0,-1,1]],\"viewport\":[1,1]}",
				&m, &err), 0);
	assert_false(m.view.has_vp);
	assert_true(m.view.planes[1].n.x == -1 && m.view.planes[5].d == 1);
	proto_msg_release(&m);

	assert_int_equal(decode("{\"type\":\"view\",\"scene\":\"s\",\"clear\":true}", &m, &err), 0);
	assert_true(m.view_clear);
	assert_int_equal(m.n_always, 0);
	proto_msg_release(&m);

	/* "always": sorted, each id once, so that the same ids in another
	 * order make the same view. */
	snprintf(text, sizeof(text),
		 "{\"type\":\"view\",\"scene\":\"s\",\"vp\":%s,\"viewport\":[800,600],"
		 "\"always\":[\"hand\",\"arm\",\"hand\",\"z\",\"arm\"]}", vp16);
	assert_int_equal(decode(text, &m, &err), 0);
	assert_int_equal(m.n_always, 3);
	assert_string_equal(m.always[0].s, "arm");
	assert_string_equal(m.always[1].s, "hand");
	assert_string_equal(m.always[2].s, "z");
	proto_msg_release(&m);
	snprintf(text, sizeof(text),
		 "{\"type\":\"view\",\"scene\":\"s\",\"vp\":%s,\"viewport\":[800,600],"
		 "\"always\":[]}", vp16);
	assert_int_equal(decode(text, &m, &err), 0);
	assert_int_equal(m.n_always, 0);
	assert_null(m.always);
	proto_msg_release(&m);
}

static void test_view_refusals(void **state)
{
	static const struct {
		const char *members;
		int code;
		const char *field;
	} cases[] = {
		{ "\"vp\":[1,2,3],\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "vp" },
		{ "\"vp\":\"m\",\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "vp" },
		{ "\"vp\":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,1e400,1],\"viewport\":[8,6]", RIGD_E_NOT_FINITE, "vp" },
		{ "\"vp\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "vp" },
		{ "\"vp\":VP,\"viewport\":[0,6]", RIGD_E_BAD_FIELD, "viewport" },
		{ "\"vp\":VP,\"viewport\":[8,65537]", RIGD_E_BAD_FIELD, "viewport" },
		{ "\"vp\":VP,\"viewport\":[8.5,6]", RIGD_E_BAD_FIELD, "viewport" },
		{ "\"vp\":VP,\"viewport\":[8,6,1]", RIGD_E_BAD_FIELD, "viewport" },
		{ "\"vp\":VP", RIGD_E_BAD_FIELD, "viewport" },
		{ "\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "vp" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"min_px\":-0.5", RIGD_E_BAD_FIELD, "min_px" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"min_px\":null", RIGD_E_BAD_FIELD, "min_px" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"min_px\":1e999", RIGD_E_NOT_FINITE, "min_px" },
		{ "\"vp\":VP,\"planes\":[],\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "planes" },
		{ "\"planes\":[[1,0,0,1]],\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "planes" },
		{ "\"planes\":[[1,0,0,1],[-1,0,0,1],[0,1,0,1],[0,-1,0,1],[0,0,1,1],[0,0,-1]],"
		  "\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "planes" },
		{ "\"planes\":[[1,0,0,1],[-1,0,0,1],[0,1,0,1],[0,-1,0,1],[0,0,1,1],[0,0,0,1]],"
		  "\"viewport\":[8,6]", RIGD_E_BAD_FIELD, "planes" },
		{ "\"planes\":[[1,0,0,1],[-1,0,0,1],[0,1,0,1],[0,-1,0,1],[0,0,1,1],[0,0,-1,1]],"
		  "\"viewport\":[8,6],\"min_px\":1", RIGD_E_BAD_FIELD, "min_px" },
		{ "\"clear\":false", RIGD_E_BAD_FIELD, "clear" },
		{ "\"clear\":true,\"min_px\":1", RIGD_E_BAD_FIELD, "min_px" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"format\":\"f32\"", RIGD_E_BAD_FIELD, "format" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"fov\":1", RIGD_E_BAD_FIELD, "fov" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"always\":\"arm\"", RIGD_E_BAD_FIELD, "always" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"always\":[\"arm\",null]", RIGD_E_BAD_FIELD, "always" },
		{ "\"vp\":VP,\"viewport\":[8,6],\"always\":[\"arm\",\"a b\"]", RIGD_E_BAD_ID, "always" },
		{ "\"vp\":VP,\"viewport\":[0,6],\"always\":[\"arm\"]", RIGD_E_BAD_FIELD, "viewport" },
		{ "\"clear\":true,\"always\":[\"arm\"]", RIGD_E_BAD_FIELD, "always" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char members[512], text[768], *at;
		proto_msg m;
		edit_error err;

		snprintf(members, sizeof(members), "%s", cases[i].members);
		if ((at = strstr(members, "VP")) != NULL) {
			char rest[512];

			snprintf(rest, sizeof(rest), "%s", at + 2);
			snprintf(at, sizeof(members) - (size_t)(at - members), "%s%s", vp16, rest);
		}
		snprintf(text, sizeof(text), "{\"type\":\"view\",\"scene\":\"s\",%s}", members);
		assert_int_equal(decode(text, &m, &err), cases[i].code);
		if (strcmp(err.field, cases[i].field) != 0)
			print_error("%s: field %s, message %s\n", text, err.field, err.message);
		assert_string_equal(err.field, cases[i].field);
		assert_non_null(strstr(err.message, cases[i].field));
		/* Nothing decoded is left behind. */
		assert_int_equal(m.type, 0);
		proto_msg_release(&m);
	}
	/* More than PROTO_VIEW_ALWAYS_MAX ids in "always". */
	{
		char text[8192];
		size_t n;
		proto_msg m;
		edit_error err;

		n = (size_t)snprintf(text, sizeof(text),
				     "{\"type\":\"view\",\"scene\":\"s\",\"vp\":%s,\"viewport\":[8,6],"
				     "\"always\":[", vp16);
		for (int i = 0; i <= PROTO_VIEW_ALWAYS_MAX; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"n%d\"", i ? "," : "", i);
		snprintf(text + n, sizeof(text) - n, "]}");
		assert_int_equal(decode(text, &m, &err), RIGD_E_LIMIT);
		assert_string_equal(err.field, "always");
		assert_non_null(strstr(err.message, "257 ids"));
		proto_msg_release(&m);
	}
	/* The scene is required, as in every message but auth. */
	{
		proto_msg m;
		edit_error err;

		assert_int_equal(decode("{\"type\":\"view\",\"clear\":true}", &m, &err), RIGD_E_BAD_FIELD);
		assert_string_equal(err.field, "scene");
	}
}

/* root (no bounds) -> a, b with bounds. */
static scene *small(void)
{
	scene *s = scene_new();
	node_props p = node_props_default();
	int root;

	assert_int_equal(scene_create(s, "root", -1, -1, &p, &root), 0);
	p.has_bounds = true;
	p.bounds = aabb_make(vec3_make(-1, -1, -1), vec3_make(1, 1, 1));
	p.t = vec3_make(0.5, 0.25, -3);
	assert_int_equal(scene_create(s, "a", root, -1, &p, NULL), 0);
	p.t = vec3_make(10, 0, 0);
	assert_int_equal(scene_create(s, "b", root, -1, &p, NULL), 0);
	scene_update(s, 1, NULL, NULL);
	return s;
}

static void test_hidden_json(void **state)
{
	scene *s = small();
	proto_buf b;
	int world[] = { scene_find(s, "a") }, hidden[] = { scene_find(s, "b"), scene_find(s, "root") };
	const char *text;

	(void)state;
	proto_buf_init(&b, 8);
	assert_int_equal(PROTO_BUF_LIT(&b, "x"), 0);  /* something before the message */
	assert_int_equal(proto_encode_update(&b, "sc", 4, s, world, 1, NULL, 0, NULL, 0), 0);
	assert_int_equal(proto_append_hidden(&b, 1, s, hidden, 2), 0);
	text = proto_buf_str(&b);
	assert_non_null(strstr(text, ",\"removed\":[],\"hidden\":[\"b\",\"root\"]}"));
	assert_int_equal(text[strlen(text) - 1], '}');
	assert_int_equal(text[0], 'x');
	proto_buf_reset(&b);
	assert_int_equal(proto_encode_snapshot(&b, "sc", 4, s), 0);
	assert_int_equal(proto_append_hidden(&b, 0, s, NULL, 0), 0);
	assert_non_null(strstr(proto_buf_str(&b), "],\"hidden\":[]}"));
	/* Nothing that ends in a brace: refused, the buffer as it was. */
	proto_buf_reset(&b);
	assert_int_equal(PROTO_BUF_LIT(&b, "[1]"), 0);
	assert_int_equal(proto_append_hidden(&b, 0, s, hidden, 1), RIGD_E_INTERNAL);
	assert_string_equal(proto_buf_str(&b), "[1]");
	proto_buf_release(&b);
	scene_free(s);
}

/* A binary update and snapshot with hidden decode to the JSON ones with
 * hidden, byte for byte (float64). */
static void test_hidden_binary(void **state)
{
	scene *s = small();
	proto_buf bin, json, out;
	proto_bin_names names;
	edit_error err;
	int all[] = { scene_find(s, "root"), scene_find(s, "a"), scene_find(s, "b") };
	int world[] = { scene_find(s, "a") }, hidden[] = { scene_find(s, "b") };

	(void)state;
	proto_bin_names_init(&names);
	proto_buf_init(&bin, 16);
	proto_buf_init(&json, 0);
	proto_buf_init(&out, 0);
	assert_int_equal(proto_bin_encode_snapshot(&bin, PROTO_FORMAT_F64, "sc", 4, s), 0);
	assert_int_equal(proto_bin_append_hidden(&bin, 0, s, hidden, 1), 0);
	assert_int_equal(proto_encode_snapshot(&json, "sc", 4, s), 0);
	assert_int_equal(proto_append_hidden(&json, 0, s, hidden, 1), 0);
	assert_int_equal(proto_bin_to_json(&names, (const unsigned char *)bin.data + bin.head,
					   bin.len, &out, &err), 0);
	assert_string_equal(proto_buf_str(&out), proto_buf_str(&json));

	proto_buf_reset(&bin);
	proto_buf_reset(&json);
	proto_buf_reset(&out);
	assert_int_equal(proto_bin_encode_update(&bin, PROTO_FORMAT_F64, "sc", 5, 4, s, world, 1,
						 all, 1, NULL, 0), 0);
	assert_int_equal(proto_bin_append_hidden(&bin, 0, s, hidden, 1), 0);
	assert_int_equal(proto_encode_update(&json, "sc", 5, s, world, 1, all, 1, NULL, 0), 0);
	assert_int_equal(proto_append_hidden(&json, 0, s, hidden, 1), 0);
	assert_int_equal(proto_bin_to_json(&names, (const unsigned char *)bin.data + bin.head,
					   bin.len, &out, &err), 0);
	/* The decoder lists every matrix of the frame in "world", the root's
	 * record's too, so compare what follows the world map. */
	assert_non_null(strstr(proto_buf_str(&out), ",\"removed\":[],\"hidden\":[\"b\"]}"));

	/* A hidden list that is not ids is a broken frame. */
	proto_buf_reset(&bin);
	assert_int_equal(proto_bin_encode_update(&bin, PROTO_FORMAT_F32, "sc", 5, 4, s, world, 1,
						 NULL, 0, NULL, 0), 0);
	{
		/* Replace the section's closing brace by ,"hidden":[1]} and
		 * patch its length. */
		unsigned char *p;
		size_t n = bin.len;
		uint32_t jl;

		assert_int_equal(proto_buf_append(&bin, "0123456789012", 13), 0);
		p = (unsigned char *)bin.data + bin.head;
		memcpy(p + n - 1, ",\"hidden\":[1]}", 14);
		jl = (uint32_t)p[32] | (uint32_t)p[33] << 8;
		jl += 13;
		p[32] = (unsigned char)(jl & 0xff);
		p[33] = (unsigned char)(jl >> 8);
		proto_buf_reset(&out);
		assert_int_equal(proto_bin_to_json(&names, p, bin.len, &out, &err), RIGD_E_BAD_FIELD);
		assert_string_equal(err.field, "json");
	}
	proto_bin_names_release(&names);
	proto_buf_release(&bin);
	proto_buf_release(&json);
	proto_buf_release(&out);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_messages),
		cmocka_unit_test(test_view_refusals),
		cmocka_unit_test(test_hidden_json),
		cmocka_unit_test(test_hidden_binary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
