/*
 * rigctl_view.c: the view that `rigctl watch` declares (rigctl.h): from a
 * JSON file holding the view message's fields (--view FILE), or from
 * --vp, --viewport and --min-px. The message is composed here and checked
 * with the server's own decoder, so a view the server would refuse is
 * refused before anything is sent, naming the flag.
 *
 * Never touches the network; prints nothing (the caller prints the why).
 */
#include "rigctl.h"

#include "codec/json.h"
#include "codec/proto.h"
#include "core/err.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VIEW_FILE_MAX (1u << 20) /* bytes of a --view file */

static int fail(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -1;
}

/* The --view file, NUL-terminated; NULL with 'why' filled. */
static char *read_view_file(const char *path, size_t *len, char *why, size_t why_len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f) {
		fail(why, why_len, "--view: cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(VIEW_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		fail(why, why_len, "--view: out of memory");
		return NULL;
	}
	n = fread(buf, 1, VIEW_FILE_MAX + 1, f);
	if (ferror(f) || n > VIEW_FILE_MAX) {
		fail(why, why_len, ferror(f) ? "--view: cannot read %s" : "--view: %s is over 1 MiB",
		     path);
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* {"type":"view","scene":SCENE, then the members of the file's object. */
static int compose_from_file(const struct rigctl *r, json_buf *b, char *why, size_t why_len)
{
	size_t len = 0;
	char *text = read_view_file(r->view_file, &len, why, why_len);
	const char *p = text, *after;
	int rc;

	if (!text)
		return -1;
	while (p < text + len && isspace((unsigned char)*p))
		p++;
	if (p == text + len || *p != '{') {
		free(text);
		return fail(why, why_len, "--view: %s does not hold a JSON object", r->view_file);
	}
	for (after = p + 1; after < text + len && isspace((unsigned char)*after); after++)
		;
	rc = JSON_BUF_LIT(b, "{\"type\":\"view\",\"scene\":") || json_buf_string(b, r->scene, 0) ||
	     (after < text + len && *after != '}' && JSON_BUF_LIT(b, ",")) ||
	     json_buf_append(b, p + 1, len - (size_t)(p + 1 - text));
	free(text);
	return rc ? fail(why, why_len, "--view: out of memory") : 0;
}

/* --vp: exactly 16 finite numbers separated by commas. */
static int parse_vp(const char *arg, double vp[16], char *why, size_t why_len)
{
	const char *p = arg;
	int n = 0;

	for (;;) {
		char *end;
		double v;

		errno = 0;
		v = strtod(p, &end);
		if (end == p || (*end && *end != ',') || !isfinite(v) || errno == ERANGE)
			return fail(why, why_len,
				    "--vp: '%.40s' is not a finite number (16 numbers, column-major, "
				    "separated by commas)", p);
		if (n == 16)
			return fail(why, why_len, "--vp: more than 16 numbers");
		vp[n++] = v;
		if (!*end)
			break;
		p = end + 1;
	}
	if (n != 16)
		return fail(why, why_len, "--vp: %d numbers, needs 16 (column-major)", n);
	return 0;
}

/* --viewport WxH: two whole numbers of pixels. */
static int parse_viewport(const char *arg, long port[2], char *why, size_t why_len)
{
	char *end;

	errno = 0;
	port[0] = strtol(arg, &end, 10);
	if (end != arg && (*end == 'x' || *end == 'X') && isdigit((unsigned char)end[1])) {
		const char *h = end + 1;

		port[1] = strtol(h, &end, 10);
		if (!*end && errno == 0 && isdigit((unsigned char)arg[0]))
			return 0;
	}
	return fail(why, why_len, "--viewport: '%s' is not WIDTHxHEIGHT in pixels (e.g. 1280x960)",
		    arg);
}

/* {"type":"view","scene":SCENE,"vp":[...],"viewport":[W,H],"min_px":N}. */
static int compose_from_flags(const struct rigctl *r, json_buf *b, char *why, size_t why_len)
{
	double vp[16], min_px = 0;
	long port[2] = { 0, 0 };
	int rc;

	if (parse_vp(r->view_vp, vp, why, why_len) ||
	    parse_viewport(r->view_viewport, port, why, why_len))
		return -1;
	if (r->view_min_px) {
		char *end;

		min_px = strtod(r->view_min_px, &end);
		if (end == r->view_min_px || *end || !isfinite(min_px))
			return fail(why, why_len, "--min-px: '%s' is not a number of pixels",
				    r->view_min_px);
	}
	rc = JSON_BUF_LIT(b, "{\"type\":\"view\",\"scene\":") || json_buf_string(b, r->scene, 0) ||
	     JSON_BUF_LIT(b, ",\"vp\":[");
	for (int i = 0; i < 16 && !rc; i++)
		rc = (i && JSON_BUF_LIT(b, ",")) || json_buf_number(b, vp[i]);
	rc = rc || JSON_BUF_LIT(b, "],\"viewport\":[") || json_buf_int(b, port[0]) ||
	     JSON_BUF_LIT(b, ",") || json_buf_int(b, port[1]) || JSON_BUF_LIT(b, "]") ||
	     (r->view_min_px && (JSON_BUF_LIT(b, ",\"min_px\":") || json_buf_number(b, min_px))) ||
	     JSON_BUF_LIT(b, "}");
	return rc ? fail(why, why_len, "out of memory") : 0;
}

/* The flag a refusal of member 'field' is about. */
static const char *flag_of(const struct rigctl *r, const char *field)
{
	if (r->view_file)
		return "--view";
	if (strcmp(field, "viewport") == 0)
		return "--viewport";
	if (strcmp(field, "min_px") == 0)
		return "--min-px";
	return "--vp";
}

int rigctl_view_build(struct rigctl *r, char *why, size_t why_len)
{
	proto_limits lim = proto_limits_default();
	proto_msg m;
	edit_error err;
	json_buf b;
	int rc;

	if (!r->view_file && !r->view_vp && !r->view_viewport && !r->view_min_px)
		return 0;
	if (r->view_file && (r->view_vp || r->view_viewport || r->view_min_px))
		return fail(why, why_len, "--view: not with --vp, --viewport or --min-px (give one "
					  "or the other)");
	if (!r->view_file && !r->view_vp)
		return fail(why, why_len, "%s: needs --vp (or --view FILE)",
			    r->view_viewport ? "--viewport" : "--min-px");
	if (!r->view_file && !r->view_viewport)
		return fail(why, why_len, "--vp: needs --viewport WIDTHxHEIGHT");
	json_buf_init(&b, 0);
	rc = r->view_file ? compose_from_file(r, &b, why, why_len)
			  : compose_from_flags(r, &b, why, why_len);
	if (rc) {
		json_buf_release(&b);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	edit_error_clear(&err);
	rc = proto_decode_msg(json_buf_str(&b), b.len, &lim, &m, NULL, &err);
	if (rc == 0 && (m.type != PROTO_VIEW || m.view_clear))
		rc = fail(why, why_len, "--view: %s must give a view (vp or planes, and viewport)",
			  r->view_file);
	else if (rc && r->view_file &&
		 (strcmp(err.field, "type") == 0 || strcmp(err.field, "scene") == 0))
		rc = fail(why, why_len,
			  "--view: %s: %s: give the view's fields only (vp or planes, viewport, "
			  "min_px, always); rigctl adds type and scene", r->view_file, err.field);
	else if (rc)
		rc = r->view_file ? fail(why, why_len, "--view: %s: %s", r->view_file, err.message)
				  : fail(why, why_len, "%s: %s", flag_of(r, err.field), err.message);
	proto_msg_release(&m);
	if (rc) {
		json_buf_release(&b);
		return -1;
	}
	r->view_msg = b.data ? strndup(json_buf_str(&b), b.len) : NULL;
	json_buf_release(&b);
	return r->view_msg ? 0 : fail(why, why_len, "out of memory");
}
