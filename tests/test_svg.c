/*
 * test_svg.c: the SVG sanitiser (server/codec/svg.c).
 *
 * Every document of tests/svg/hostile against the table expected.txt there
 * (refused with its code, or kept with exactly the removals listed); every
 * kept output sanitised again is the same bytes with nothing removed and
 * holds no forbidden text; the byte, depth and element limits by name; the
 * ids of the kept elements; the report as JSON; a layer's asset and element
 * checked on create, set and undo.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/json.h"
#include "codec/proto.h"
#include "core/asset.h"
#include "core/edit.h"
#include "codec/svg.h"
#include "core/err.h"

#define HOSTILE RIGD_SOURCE_DIR "/tests/svg/hostile/"

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Text no sanitised document may hold, compared without case. */
static const char *const FORBIDDEN[] = {
	"<script", " on", "javascript:", "data:", "foreignobject", "<!entity", "<!doctype",
	"<?", "<!--", "@import", "url(http", "url('http", "<image", "<a ", "<set", "<animate",
	"xml:base", "inkscape", "\\",
};

static void check_output(const char *file, const svg_clean *c)
{
	char *lower = strdup(c->svg);
	assert_non_null(lower);
	for (char *p = lower; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	for (size_t i = 0; i < sizeof(FORBIDDEN) / sizeof(FORBIDDEN[0]); i++)
		if (strstr(lower, FORBIDDEN[i]))
			fail_msg("%s: output holds '%s': %s", file, FORBIDDEN[i], c->svg);
	free(lower);
	/* A fixed point: the output sanitised again is the same bytes. */
	svg_clean again;
	edit_error e;
	assert_int_equal(svg_sanitize(c->svg, c->len, NULL, &again, &e), 0);
	assert_int_equal(again.n_removed_total, 0);
	assert_int_equal(again.len, c->len);
	assert_memory_equal(again.svg, c->svg, c->len);
	assert_int_equal(again.n_ids, c->n_ids);
	svg_clean_release(&again);
}

/* One line of expected.txt: "FILE refused CODE" or "FILE stripped N W;W". */
static void run_case(char *line)
{
	char file[128], verdict[16], rest[512] = "";
	int n = sscanf(line, "%127s %15s %511[^\n]", file, verdict, rest);
	assert_true(n >= 2);
	char path[512];
	snprintf(path, sizeof(path), HOSTILE "%s", file);
	size_t len;
	char *in = read_file(path, &len);
	svg_clean c;
	edit_error e;
	int rc = svg_sanitize(in, len, NULL, &c, &e);
	if (!strcmp(verdict, "refused")) {
		if (!rc)
			fail_msg("%s: kept, expected refused %s: %s", file, rest, c.svg);
		if (strcmp(err_code(rc), rest))
			fail_msg("%s: refused with %s (%s), expected %s", file, err_code(rc), e.message,
				 rest);
		assert_string_equal(e.field, "svg");
		assert_null(c.svg);
		assert_int_equal(c.n_removed_total, 0);
	} else {
		assert_string_equal(verdict, "stripped");
		if (rc)
			fail_msg("%s: refused (%s), expected kept", file, e.message);
		int count = atoi(rest);
		if (c.n_removed_total != count) {
			for (int i = 0; i < c.n_removed; i++)
				print_message("  %s at %s\n", c.removed[i].what, c.removed[i].where);
			fail_msg("%s: %d removals, expected %d", file, c.n_removed_total, count);
		}
		char *what = strchr(rest, ' ');
		int k = 0;
		for (char *tok = what ? strtok(what + 1, ";") : NULL; tok; tok = strtok(NULL, ";"), k++) {
			assert_true(k < c.n_removed);
			if (strncmp(c.removed[k].what, tok, strlen(tok)))
				fail_msg("%s: removal %d is '%s', expected '%s'", file, k,
					 c.removed[k].what, tok);
		}
		assert_int_equal(k, count);
		check_output(file, &c);
		svg_clean_release(&c);
	}
	free(in);
}

static void test_hostile_table(void **state)
{
	(void)state;
	size_t len;
	char *table = read_file(HOSTILE "expected.txt", &len);
	int cases = 0;
	for (char *save = NULL, *line = strtok_r(table, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || !line[0])
			continue;
		print_message("case %s\n", line);
		run_case(line);
		cases++;
	}
	assert_true(cases >= 18);
	free(table);
}

static void test_limits_by_name(void **state)
{
	(void)state;
	svg_clean c;
	edit_error e;
	size_t n = SVG_DEFAULT_MAX_BYTES + 1;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, ' ', n);
	assert_int_equal(svg_sanitize(big, n, NULL, &c, &e), RIGD_E_LIMIT);
	assert_non_null(strstr(e.message, "max_bytes"));
	free(big);

	svg_limits lim = svg_limits_default();
	lim.max_depth = 3;
	const char *deep = "<svg xmlns=\"http://www.w3.org/2000/svg\"><g><g><g/></g></g></svg>";
	assert_int_equal(svg_sanitize(deep, strlen(deep), &lim, &c, &e), RIGD_E_LIMIT);
	assert_non_null(strstr(e.message, "max_depth"));
	lim.max_depth = 4;
	assert_int_equal(svg_sanitize(deep, strlen(deep), &lim, &c, &e), 0);
	svg_clean_release(&c);
	lim.max_elements = 3;
	assert_int_equal(svg_sanitize(deep, strlen(deep), &lim, &c, &e), RIGD_E_LIMIT);
	assert_non_null(strstr(e.message, "max_elements"));
	/* Far deeper than libxml2's own nesting limit: refused as a limit. */
	size_t depth = 300;
	char *very = malloc(depth * 7 + 64);
	strcpy(very, "<svg xmlns=\"http://www.w3.org/2000/svg\">");
	for (size_t i = 0; i < depth; i++)
		strcat(very, "<g>");
	assert_int_equal(svg_sanitize(very, strlen(very), NULL, &c, &e), RIGD_E_LIMIT);
	free(very);
}

static void test_ids_and_report(void **state)
{
	(void)state;
	const char *doc = "<svg xmlns=\"http://www.w3.org/2000/svg\"><g id=\"torso\"><g id=\"head\"/>"
			  "<script id=\"evil\"/></g><g id=\"torso\"/><rect id=\"a:b.c-d_e\"/></svg>";
	svg_clean c;
	edit_error e;
	assert_int_equal(svg_sanitize(doc, strlen(doc), NULL, &c, &e), 0);
	assert_int_equal(c.n_ids, 3);
	assert_true(svg_clean_has_id(&c, "torso"));
	assert_true(svg_clean_has_id(&c, "head"));
	assert_true(svg_clean_has_id(&c, "a:b.c-d_e"));
	assert_false(svg_clean_has_id(&c, "evil"));
	json_buf b;
	json_buf_init(&b, 0);
	assert_int_equal(svg_encode_report(&b, &c), 0);
	assert_string_equal(json_buf_str(&b),
			    "{\"removed\":[{\"what\":\"element script (not on the allow-list)\","
			    "\"where\":\"svg/g#torso\"}],\"removed_total\":1}");
	json_buf_release(&b);
	svg_clean_release(&c);
}

static void test_report_capped(void **state)
{
	(void)state;
	size_t n = 300;
	char *doc = malloc(n * 16 + 64);
	strcpy(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\">");
	for (size_t i = 0; i < n; i++)
		strcat(doc, "<script/>");
	strcat(doc, "</svg>");
	svg_clean c;
	edit_error e;
	assert_int_equal(svg_sanitize(doc, strlen(doc), NULL, &c, &e), 0);
	assert_int_equal(c.n_removed, SVG_REPORT_MAX);
	assert_int_equal(c.n_removed_total, (int)n);
	assert_string_equal(c.svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"/>");
	svg_clean_release(&c);
	free(doc);
}

static void test_non_ascii_fixed_point(void **state)
{
	(void)state;
	const char *doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><svg xmlns=\"http://www.w3.org/2000/svg\">"
			  "<title>h\xc3\xa9ros</title><text font-family=\"caf\xc3\xa9\">&#x263A; &lt;</text></svg>";
	svg_clean c;
	edit_error e;
	assert_int_equal(svg_sanitize(doc, strlen(doc), NULL, &c, &e), 0);
	for (size_t i = 0, k; i < c.len; i += k)
		assert_true((k = json_utf8_len((const unsigned char *)c.svg + i, c.len - i)) > 0);
	assert_non_null(strstr(c.svg, "h\xc3\xa9ros"));
	check_output("non-ascii", &c);
	svg_clean_release(&c);
}

/* A layer must name an asset the scene holds and one of its elements
 * (edit_layer_check), on every path that sets one: create, set, undo. */
static void test_layer_exists(void **state)
{
	(void)state;
	scene *s = scene_new();
	proto_limits lim = proto_limits_default();
	edit_batch b, inv;
	edit_error e;
	const char *create = "{\"ops\":[{\"op\":\"create\",\"id\":\"arm\",\"layer\":\"x.svg#a\"}]}";

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	assert_int_equal(proto_decode_batch(create, strlen(create), &lim, &b, &e), 0);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &e), RIGD_E_BAD_FIELD);
	assert_string_equal(e.field, "layer");
	assert_non_null(strstr(e.message, "no asset 'x.svg'"));
	assert_int_equal(scene_count(s), 0);
	assert_int_equal(asset_set_add(scene_assets(s), "x.svg", "b\na\n", 4), 0);
	assert_int_equal(asset_set_add(scene_assets(s), "x.svg", "z\n", 2), 0); /* kept as it was */
	assert_int_equal(asset_set_count(scene_assets(s)), 1);
	assert_int_equal(edit_apply(s, &b, NULL, &inv, &e), 0);
	edit_batch_release(&b);
	edit_batch_release(&inv);
	const char *set = "{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"layer\":\"x.svg#z\"}]}";
	assert_int_equal(proto_decode_batch(set, strlen(set), &lim, &b, &e), 0);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &e), RIGD_E_BAD_FIELD);
	assert_non_null(strstr(e.message, "asset 'x.svg' has no element with id 'z'"));
	edit_batch_release(&b);
	const char *ok = "{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"layer\":\"x.svg#b\"}]}";
	assert_int_equal(proto_decode_batch(ok, strlen(ok), &lim, &b, &e), 0);
	assert_int_equal(edit_apply(s, &b, NULL, &inv, &e), 0);
	assert_int_equal(edit_apply(s, &inv, NULL, NULL, &e), 0); /* the undo sets x.svg#a again */
	edit_batch_release(&b);
	edit_batch_release(&inv);
	asset_set_remove(scene_assets(s), "x.svg");
	assert_int_equal(asset_set_count(scene_assets(s)), 0);
	scene_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_table),
		cmocka_unit_test(test_limits_by_name),
		cmocka_unit_test(test_ids_and_report),
		cmocka_unit_test(test_report_capped),
		cmocka_unit_test(test_non_ascii_fixed_point),
		cmocka_unit_test(test_layer_exists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
