/*
 * fuzz_svg.c: libFuzzer target for the SVG sanitiser (svg_sanitize).
 *
 * The input is any bytes, sanitised with small limits (depth 16, 200
 * elements) so that the limit paths are reached. Checks:
 *   - refused: bad_svg, limit or nomem, field "svg", nothing written, no
 *     report;
 *   - kept: the output is UTF-8; its element and attribute names hold no
 *     script, event handler, foreign object, image, link, animation,
 *     DOCTYPE, comment, processing instruction or xml:base, and its
 *     attribute values and <style> text no script, data or external URL,
 *     CSS import or escape;
 *     the report counts at least what it lists; every id listed is in the
 *     output; sanitising the output again gives the same bytes, the same
 *     ids and removes nothing (the fixed point log import relies on).
 */
#include "codec/json.h"
#include "codec/svg.h"
#include "core/err.h"

#include "fuzz_common.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What no tag may hold outside its attribute values (names of elements
 * and attributes), and what no attribute value or <style> text may hold. */
static const char *const FORBIDDEN_NAMES[] = {
	"<script", "<!", "<?", "foreignobject", "<image", "<a ", "<a>", "<a/", "<set", "<animate",
	" xml:base=",
};
static const char *const FORBIDDEN_VALUES[] = {
	"javascript:", "vbscript:", "data:", "@import", "url(h", "url('h", "url(\"h", "\\",
};

/* Splits a sanitised document, lowercased, into 'names' (every tag from '<'
 * to '>' without its attribute values) and 'values' (the attribute values
 * and the text of each <style> element). The other text is only shown,
 * never run: libxml2 writes a '<' in text as "&lt;" and a '"' in a value as
 * "&quot;", so each '<' opens a tag and each '"' in a tag opens or closes a
 * value. A <style> written as an empty element (<style .../>) has no text:
 * what follows it is the parent's. The caller frees both. */
static void split_markup(const char *svg, char **names, char **values)
{
	size_t n = strlen(svg), kn = 0, kv = 0;
	bool in_tag = false, in_value = false, in_style = false;

	*names = malloc(n + 1);
	*values = malloc(n + 1);
	FUZZ_CHECK(*names && *values, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char ch = svg[i];
		char lower = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
		if (!in_tag && ch == '<') {
			in_tag = true;
			in_style = !strncmp(svg + i, "<style", 6) && svg[i + 6] != '/';
		}
		if (in_tag && ch == '"') {
			in_value = !in_value;
			(*values)[kv++] = ' ';
			continue;
		}
		if (in_tag && !in_value)
			(*names)[kn++] = lower;
		else if (in_value || in_style)
			(*values)[kv++] = lower;
		if (in_tag && !in_value && ch == '>') {
			in_tag = false;
			if (i > 0 && svg[i - 1] == '/')
				in_style = false; /* <style .../> holds no text */
		}
	}
	(*names)[kn] = 0;
	(*values)[kv] = 0;
}

/* Whether 'names' holds an attribute named on...= (an event handler). */
static bool has_handler(const char *names)
{
	for (const char *p = names; (p = strstr(p, " on")) != NULL; p++) {
		const char *q = p + 3;
		while ((*q >= 'a' && *q <= 'z') || *q == '-')
			q++;
		if (*q == '=')
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	svg_limits lim = svg_limits_default();
	svg_clean c, again;
	edit_error e;

	lim.max_depth = 16;
	lim.max_elements = 200;
	int rc = svg_sanitize((const char *)data, size, &lim, &c, &e);
	if (rc) {
		FUZZ_CHECK(rc == RIGD_E_BAD_SVG || rc == RIGD_E_LIMIT || rc == RIGD_E_NOMEM,
			   "refused with %s", err_code(rc));
		FUZZ_CHECK(!strcmp(e.field, "svg") && e.code == rc, "error names '%s'", e.field);
		FUZZ_CHECK(!c.svg && !c.removed && !c.ids && !c.n_removed_total, "refusal with output");
		return 0;
	}
	FUZZ_CHECK(c.svg && strlen(c.svg) == c.len, "output length %zu", c.len);
	fuzz_check_utf8(c.svg, c.len, "sanitised svg");
	FUZZ_CHECK(c.n_removed <= c.n_removed_total && c.n_removed <= SVG_REPORT_MAX,
		   "report lists %d of %d", c.n_removed, c.n_removed_total);
	char *names, *values;
	split_markup(c.svg, &names, &values);
	FUZZ_CHECK(!has_handler(names), "output has an event handler: %.500s", c.svg);
	for (size_t i = 0; i < sizeof(FORBIDDEN_NAMES) / sizeof(FORBIDDEN_NAMES[0]); i++)
		FUZZ_CHECK(!strstr(names, FORBIDDEN_NAMES[i]), "output has '%s': %.500s",
			   FORBIDDEN_NAMES[i], c.svg);
	for (size_t i = 0; i < sizeof(FORBIDDEN_VALUES) / sizeof(FORBIDDEN_VALUES[0]); i++)
		FUZZ_CHECK(!strstr(values, FORBIDDEN_VALUES[i]), "a value has '%s': %.500s",
			   FORBIDDEN_VALUES[i], c.svg);
	free(names);
	free(values);
	for (int i = 0; i < c.n_ids; i++) {
		FUZZ_CHECK(svg_clean_has_id(&c, c.ids[i]), "id '%s' not found", c.ids[i]);
		FUZZ_CHECK(i == 0 || strcmp(c.ids[i - 1], c.ids[i]) < 0, "ids not sorted");
	}
	json_buf b;
	json_buf_init(&b, 0);
	FUZZ_CHECK(svg_encode_report(&b, &c) == 0, "report");
	fuzz_check_utf8(json_buf_str(&b), b.len, "report");
	json_buf_release(&b);
	rc = svg_sanitize(c.svg, c.len, &lim, &again, &e);
	FUZZ_CHECK(rc == 0, "output refused: %s: %.500s", e.message, c.svg);
	FUZZ_CHECK(again.n_removed_total == 0, "output lost %s at %s", again.removed[0].what,
		   again.removed[0].where);
	FUZZ_CHECK(again.len == c.len && !memcmp(again.svg, c.svg, c.len),
		   "not a fixed point:\n%.500s\n%.500s", c.svg, again.svg);
	FUZZ_CHECK(again.n_ids == c.n_ids, "ids %d then %d", c.n_ids, again.n_ids);
	svg_clean_release(&again);
	svg_clean_release(&c);
	return 0;
}
