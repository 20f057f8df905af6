/*
 * proto_view.c: per-viewer interest on the wire (docs/protocol.md,
 * "Views"): the members of a view message in, and the "hidden" list that
 * view subscribers' updates and snapshots carry out. Like every decoder it
 * trusts nothing, and every refusal names the member and why; like every
 * encoder it leaves the buffer as it was when it fails.
 */
#include "proto_internal.h"

#include "core/err.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Exactly 'n' finite numbers in array 'item' into 'out'; 'what' describes
 * the array for the error. */
static int get_numbers(const cJSON *item, const char *field, const char *what, double *out,
		       int n, const proto_where *w)
{
	const cJSON *e;
	int i = 0;

	if (!cJSON_IsArray(item))
		return proto_bad_field(w, field, what);
	cJSON_ArrayForEach(e, item) {
		if (i == n || !cJSON_IsNumber(e))
			return proto_bad_field(w, field, what);
		if (!isfinite(e->valuedouble)) {
			edit_error_set(w->err, RIGD_E_NOT_FINITE, -1, field,
				       "%s: a number is not finite", field);
			return RIGD_E_NOT_FINITE;
		}
		out[i++] = e->valuedouble;
	}
	return i == n ? 0 : proto_bad_field(w, field, what);
}

/* "planes": six arrays [a, b, c, d]. */
static int get_planes(const cJSON *item, double planes[VIEW_PLANES][4], const proto_where *w)
{
	static const char what[] = "must be 6 planes, each an array [a, b, c, d] of numbers";
	const cJSON *e;
	int k = 0, rc;

	if (!cJSON_IsArray(item))
		return proto_bad_field(w, "planes", what);
	cJSON_ArrayForEach(e, item) {
		if (k == VIEW_PLANES)
			return proto_bad_field(w, "planes", what);
		if ((rc = get_numbers(e, "planes", what, planes[k++], 4, w)) != 0)
			return rc;
	}
	return k == VIEW_PLANES ? 0 : proto_bad_field(w, "planes", what);
}

/* What the core refused of a well-typed view, said member by member. */
static int refused(const double vp_or_null[16], const double planes_or_null[VIEW_PLANES][4],
		   const double viewport[2], double min_px, const proto_where *w)
{
	if (viewport[0] < 1 || viewport[1] < 1 || viewport[0] > VIEW_MAX_PX ||
	    viewport[1] > VIEW_MAX_PX || viewport[0] != trunc(viewport[0]) ||
	    viewport[1] != trunc(viewport[1]))
		return proto_bad_field(w, "viewport",
				       "must be [width, height] in whole pixels, 1 to 65536 each");
	if (min_px < 0)
		return proto_bad_field(w, "min_px", "must be 0 or more pixels");
	if (planes_or_null && min_px != 0)
		return proto_bad_field(w, "min_px", "needs vp: planes alone cannot project a size");
	(void)vp_or_null;
	return proto_bad_field(w, planes_or_null ? "planes" : "vp",
			       "a frustum plane has a zero normal (a degenerate matrix)");
}

int proto_decode_view(const cJSON *vp, const cJSON *planes, const cJSON *viewport,
		      const cJSON *min_px, const cJSON *clear, const cJSON *always, proto_msg *m,
		      const proto_where *w)
{
	double v16[16], p[VIEW_PLANES][4], port[2], min = 0;
	int rc;

	if (clear) {
		if (!cJSON_IsTrue(clear))
			return proto_bad_field(w, "clear", "must be true (leave it out to set a view)");
		if (vp || planes || viewport || min_px || always)
			return proto_bad_field(w, vp ? "vp" : planes ? "planes" : viewport ? "viewport"
						  : min_px ? "min_px" : "always",
					       "not allowed with clear");
		m->view_clear = true;
		return 0;
	}
	if (!vp && !planes)
		return proto_bad_field(w, "vp", "missing (or planes, or clear)");
	if (vp && planes)
		return proto_bad_field(w, "planes", "not allowed with vp: give one of them");
	if (!viewport)
		return proto_bad_field(w, "viewport", "missing");
	if (vp && (rc = get_numbers(vp, "vp", "must be an array of 16 numbers (column-major)",
				    v16, 16, w)) != 0)
		return rc;
	if (planes && (rc = get_planes(planes, p, w)) != 0)
		return rc;
	if ((rc = get_numbers(viewport, "viewport", "must be [width, height] in pixels", port, 2,
			      w)) != 0)
		return rc;
	if (min_px) {
		if (!cJSON_IsNumber(min_px))
			return proto_bad_field(w, "min_px", "must be a number of pixels");
		if (!isfinite(min_px->valuedouble)) {
			edit_error_set(w->err, RIGD_E_NOT_FINITE, -1, "min_px",
				       "min_px: a number is not finite");
			return RIGD_E_NOT_FINITE;
		}
		min = min_px->valuedouble;
	}
	if (port[0] != trunc(port[0]) || port[1] != trunc(port[1]))
		return refused(vp ? v16 : NULL, planes ? p : NULL, port, min, w);
	rc = vp ? view_from_vp(v16, port[0], port[1], min, &m->view)
		: view_from_planes((const double(*)[4])p, port[0], port[1], min, &m->view);
	if (rc)
		return refused(vp ? v16 : NULL, planes ? p : NULL, port, min, w);
	return 0;
}

int proto_append_hidden(proto_buf *b, size_t start, const scene *s, const int *hidden,
			int n_hidden)
{
	size_t end = b->len;

	if (end <= start || b->data[b->head + end - 1] != '}')
		return RIGD_E_INTERNAL;
	json_buf_truncate(b, end - 1);
	if (PROTO_BUF_LIT(b, ",\"hidden\":["))
		goto fail;
	for (int i = 0; i < n_hidden; i++)
		if ((i && PROTO_BUF_LIT(b, ",")) || proto_buf_json_string(b, scene_id(s, hidden[i])))
			goto fail;
	if (PROTO_BUF_LIT(b, "]}"))
		goto fail;
	return 0;
fail:
	json_buf_truncate(b, end - 1);
	PROTO_BUF_LIT(b, "}");  /* fits: the buffer held it a moment ago */
	return RIGD_E_NOMEM;
}
