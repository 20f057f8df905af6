/*
 * gltf_export.c: glTF JSON out (see gltf.h): a scene as a glTF 2.0
 * document, one node per line, and the import report as JSON. Both append
 * through json.h's writer, wrapped here with a sticky failure so that each
 * writer can append without checking and look once at the end.
 *
 * It only reads the scene it is given, never changes it, and never
 * recurses over the tree (the scene's preorder is walked by position).
 */
#include "gltf_internal.h"

#include "bytes.h"
#include "core/err.h"
#include "json.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* json.h's buffer with a sticky failure: once an append fails, the rest
 * are skipped and sb_take reports RIGD_E_NOMEM. */
typedef struct sbuf {
	json_buf buf;
	bool failed;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
	if (!b->failed && json_buf_append(&b->buf, s, n) != 0)
		b->failed = true;
}

static void sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		sb_put(b, small, (size_t)n);
		return;
	}
	{
		char *big = malloc((size_t)n + 1);

		if (!big) {
			b->failed = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		sb_put(b, big, (size_t)n);
		free(big);
	}
}

/* The fewest digits that read back to the same bits (json.h); null when
 * not finite (a scene holds finite values only). */
static void sb_num(sbuf *b, double v)
{
	if (!b->failed && json_buf_number_or_null(&b->buf, v) != 0)
		b->failed = true;
}

static void sb_vec(sbuf *b, const double *v, int n)
{
	sb_puts(b, "[");
	for (int i = 0; i < n; i++) {
		if (i)
			sb_puts(b, ", ");
		sb_num(b, v[i]);
	}
	sb_puts(b, "]");
}

/* Appends 'str' as a JSON string literal. Bytes that are not valid UTF-8
 * become U+FFFD, so the document stays valid whatever the scene holds. */
static void sb_str(sbuf *b, const char *str)
{
	if (!b->failed && json_buf_string(&b->buf, str, JSON_STR_REPAIR_UTF8) != 0)
		b->failed = true;
}

/* Hands the text to the caller: 0, or RIGD_E_NOMEM with the text freed. */
static int sb_take(sbuf *b, char **out, size_t *out_len)
{
	size_t len = b->buf.len;
	char *text = b->failed ? NULL : json_buf_take(&b->buf);

	json_buf_release(&b->buf);
	b->failed = false;
	if (!text)
		return RIGD_E_NOMEM;
	*out = text;
	if (out_len)
		*out_len = len;
	return 0;
}

/* ---------- the report as JSON ---------- */

static void sb_id_or_null(sbuf *b, const gltf_report *r, int node)
{
	if (node >= 0 && node < r->n_nodes && r->nodes[node].role != GLTF_NODE_SKIPPED)
		sb_str(b, r->nodes[node].id);
	else
		sb_puts(b, "null");
}

int gltf_report_json(const gltf_report *r, char **out, size_t *out_len)
{
	sbuf b = { 0 };
	bool first;

	sb_puts(&b, "{\"scene\":");
	if (r->scene_index >= 0)
		sb_printf(&b, "%d", r->scene_index);
	else
		sb_puts(&b, "null");
	sb_puts(&b, ",\"scene_name\":");
	if (r->scene_name)
		sb_str(&b, r->scene_name);
	else
		sb_puts(&b, "null");
	sb_printf(&b, ",\"created\":%d,\"roots\":%d,\"pivots\":%d,\"ids\":[", r->n_created,
		  r->n_roots, r->n_pivots);
	for (int i = 0; i < r->n_nodes; i++) {
		if (i)
			sb_puts(&b, ",");
		sb_id_or_null(&b, r, i);
	}
	sb_puts(&b, "],\"matrix_nodes\":[");
	first = true;
	for (int i = 0; i < r->n_nodes; i++) {
		const gltf_node_info *n = &r->nodes[i];

		if (!n->from_matrix || n->role == GLTF_NODE_SKIPPED)
			continue;
		sb_printf(&b, "%s{\"node\":%d,\"id\":", first ? "" : ",", i);
		sb_str(&b, n->id);
		sb_puts(&b, ",\"error\":");
		sb_num(&b, n->matrix_err);
		sb_printf(&b, ",\"exact\":%s}", n->matrix_exact ? "true" : "false");
		first = false;
	}
	sb_puts(&b, "],\"skins\":[");
	for (int k = 0; k < r->n_skins; k++) {
		const gltf_skin_info *s = &r->skins[k];

		sb_printf(&b, "%s{\"skin\":%d,\"name\":", k ? "," : "", k);
		if (s->name)
			sb_str(&b, s->name);
		else
			sb_puts(&b, "null");
		sb_puts(&b, ",\"skeleton\":");
		sb_id_or_null(&b, r, s->skeleton);
		sb_puts(&b, ",\"joints\":[");
		for (int j = 0; j < s->n_joints; j++) {
			if (j)
				sb_puts(&b, ",");
			sb_id_or_null(&b, r, s->joints[j]);
		}
		sb_puts(&b, "],\"used_by\":[");
		first = true;
		for (int i = 0; i < r->n_nodes; i++) {
			if (r->nodes[i].skin != k || r->nodes[i].role == GLTF_NODE_SKIPPED)
				continue;
			if (!first)
				sb_puts(&b, ",");
			sb_str(&b, r->nodes[i].id);
			first = false;
		}
		sb_puts(&b, "]}");
	}
	sb_puts(&b, "],\"warnings\":[");
	for (int k = 0; k < r->n_warnings; k++) {
		if (k)
			sb_puts(&b, ",");
		sb_str(&b, r->warnings[k]);
	}
	if (r->n_warnings_dropped)
		sb_printf(&b, "%s\"... and %d more warnings\"", r->n_warnings ? "," : "",
			  r->n_warnings_dropped);
	sb_puts(&b, "]}");
	return sb_take(&b, out, out_len);
}

/* The unit box every mesh reference is written as: 8 corners, 12 triangles
 * wound counter-clockwise seen from outside. */
static const float box_positions[8][3] = {
	{ -0.5f, -0.5f, -0.5f }, { 0.5f, -0.5f, -0.5f }, { 0.5f, 0.5f, -0.5f }, { -0.5f, 0.5f, -0.5f },
	{ -0.5f, -0.5f, 0.5f },  { 0.5f, -0.5f, 0.5f },  { 0.5f, 0.5f, 0.5f },  { -0.5f, 0.5f, 0.5f },
};
static const uint16_t box_indices[36] = {
	0, 2, 1, 0, 3, 2, /* -z */
	4, 5, 6, 4, 6, 7, /* +z */
	0, 1, 5, 0, 5, 4, /* -y */
	3, 7, 6, 3, 6, 2, /* +y */
	0, 4, 7, 0, 7, 3, /* -x */
	1, 2, 6, 1, 6, 5, /* +x */
};
#define BOX_POSITION_BYTES (sizeof(box_positions))  /* 96 */
#define BOX_INDEX_BYTES (sizeof(box_indices))       /* 72 */
#define BOX_BYTES (BOX_POSITION_BYTES + BOX_INDEX_BYTES)

/* The box buffer as a base64 data URI (glTF buffers are little-endian). */
static void sb_box_uri(sbuf *b)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char raw[BOX_BYTES];
	size_t n = 0;

	for (int v = 0; v < 8; v++) {
		for (int k = 0; k < 3; k++, n += 4)
			le_put_f32(raw + n, box_positions[v][k]);
	}
	for (int i = 0; i < 36; i++, n += 2)
		le_put(raw + n, box_indices[i], 2);
	sb_puts(b, "data:application/octet-stream;base64,");
	for (size_t i = 0; i < n; i += 3) {
		uint32_t word = (uint32_t)raw[i] << 16;
		char quad[4];

		if (i + 1 < n)
			word |= (uint32_t)raw[i + 1] << 8;
		if (i + 2 < n)
			word |= raw[i + 2];
		quad[0] = digits[(word >> 18) & 63];
		quad[1] = digits[(word >> 12) & 63];
		quad[2] = i + 1 < n ? digits[(word >> 6) & 63] : '=';
		quad[3] = i + 2 < n ? digits[word & 63] : '=';
		sb_put(b, quad, 4);
	}
}

/*
 * A quaternion that the scene's quat_normalize turns into 'stored' bit for
 * bit, when 'stored' itself is not one (normalising a unit quaternion may
 * move it by an ulp). quat_normalize first divides by the largest
 * component, so every stored value has a preimage whose largest component
 * is exactly +-1: 'stored' divided by that component, give or take a few
 * ulps on the other three, which are searched nearest first (two ulps each
 * way finds one in practice). Returns false when there is none; the import
 * is then an ulp off.
 */
static bool rotation_preimage(quat stored, quat *out)
{
	static const int offset[5] = { 0, 1, -1, 2, -2 };
	double *r = &stored.x;
	int big = 0;
	quat base, q;

	for (int k = 1; k < 4; k++)
		if (fabs(r[k]) > fabs(r[big]))
			big = k;
	for (int k = 0; k < 4; k++)
		(&base.x)[k] = k == big ? copysign(1.0, r[k]) : r[k] / fabs(r[big]);
	for (int m = 0; m < 125; m++) {
		quat c = base;
		int digits = m;

		for (int k = 0; k < 4; k++) {
			double *v = &c.x + k;
			int steps;

			if (k == big)
				continue;
			steps = offset[digits % 5];
			digits /= 5;
			for (; steps > 0; steps--)
				*v = nextafter(*v, INFINITY);
			for (; steps < 0; steps++)
				*v = nextafter(*v, -INFINITY);
		}
		if (quat_normalize(c, &q) == 0 && gltf_quat_bits_equal(q, stored)) {
			*out = c;
			return true;
		}
	}
	return false;
}

static bool is_zero_bits(vec3 v)
{
	return gltf_vec3_bits_equal(v, vec3_make(0, 0, 0));
}

typedef struct export_ctx {
	const scene *s;
	sbuf b;
	int n;                    /* rigd nodes */
	int n_gltf;               /* glTF nodes: one per rigd node, two per pivot pair */
	int *gidx;                /* by preorder position: the glTF index of the (outer) node */
	int *mesh_of;             /* by position: glTF mesh index or -1 */
	int *camera_of;           /* by position: glTF camera index or -1 */
	gltf_sset meshes;         /* mesh references; each entry's counter is its glTF index */
	const char **mesh_names;  /* by glTF mesh index, keys of 'meshes' */
	int n_meshes, n_cameras;
} export_ctx;

/* The children list of rigd node 'node' as glTF indices (nothing when it
 * has none). */
static void put_children(export_ctx *x, int node)
{
	/* Preorder: the children follow their parent, each after the
	 * subtree of the one before; walked so, not counted out one by one
	 * (which costs the square of their number). */
	int first = scene_pos(x->s, node) + 1, end = first - 1 + scene_subtree_size(x->s, node);

	if (first == end)
		return;
	sb_puts(&x->b, ", \"children\": [");
	for (int pos = first; pos < end; pos += scene_subtree_size(x->s, scene_at(x->s, pos))) {
		assert(pos < x->n);
		sb_printf(&x->b, "%s%d", pos > first ? ", " : "", x->gidx[pos]);
	}
	sb_puts(&x->b, "]");
}

static void put_geometry(export_ctx *x, int pos)
{
	if (x->mesh_of[pos] >= 0)
		sb_printf(&x->b, ", \"mesh\": %d", x->mesh_of[pos]);
	if (x->camera_of[pos] >= 0)
		sb_printf(&x->b, ", \"camera\": %d", x->camera_of[pos]);
}

/* extras.rigd of a node: what glTF has no field for. */
static void put_extras(export_ctx *x, int node, const node_props *p, bool pair)
{
	sbuf *b = &x->b;
	node_props def = node_props_default();

	sb_puts(b, ", \"extras\": {\"rigd\": {\"id\": ");
	sb_str(b, scene_id(x->s, node));
	sb_printf(b, ", \"kind\": \"%s\"", edit_kind_name(p->kind));
	{
		/* glTF gets the stored unit quaternion; when the scene would not
		 * store that same value again, the one it would ride along. */
		quat q, pre;

		if (quat_normalize(p->r, &q) == 0 && !gltf_quat_bits_equal(q, p->r) &&
		    rotation_preimage(p->r, &pre)) {
			sb_puts(b, ", \"r\": ");
			sb_vec(b, &pre.x, 4);
		}
	}
	if (pair) {
		sb_puts(b, ", \"pivot\": ");
		sb_vec(b, &p->pivot.x, 3);
		sb_puts(b, ", \"t\": ");
		sb_vec(b, &p->t.x, 3);
	}
	if (p->has_bounds) {
		sb_puts(b, ", \"bounds\": {\"min\": ");
		sb_vec(b, &p->bounds.min.x, 3);
		sb_puts(b, ", \"max\": ");
		sb_vec(b, &p->bounds.max.x, 3);
		sb_puts(b, "}");
	}
	if (!p->visible)
		sb_puts(b, ", \"visible\": false");
	if (!p->name)
		sb_puts(b, ", \"unnamed\": true");
	if (p->kind == NODE_CAMERA) {
		/* yfov in radians does not always give the degrees back bit for
		 * bit: keep them. near and far travel exactly in the camera. */
		sb_puts(b, ", \"fov\": ");
		sb_num(b, p->fov_deg);
	} else if (!gltf_bits_equal(p->fov_deg, def.fov_deg) || !gltf_bits_equal(p->znear, def.znear) ||
		   !gltf_bits_equal(p->zfar, def.zfar)) {
		sb_puts(b, ", \"fov\": ");
		sb_num(b, p->fov_deg);
		sb_puts(b, ", \"near\": ");
		sb_num(b, p->znear);
		sb_puts(b, ", \"far\": ");
		sb_num(b, p->zfar);
	}
	sb_puts(b, "}}");
}

/* One rigd node: one glTF node, or the pivot pair. */
static void put_node(export_ctx *x, int pos)
{
	sbuf *b = &x->b;
	int node = scene_at(x->s, pos);
	node_props p;
	bool pair;
	vec3 t;

	assert(x->gidx[pos] >= 0 && x->gidx[pos] < x->n_gltf);
	scene_props(x->s, node, &p);
	pair = !is_zero_bits(p.pivot);
	t = pair ? vec3_add(p.t, p.pivot) : p.t;
	sb_puts(b, "    {\"name\": ");
	sb_str(b, p.name ? p.name : scene_id(x->s, node));
	if (!is_zero_bits(t)) {
		sb_puts(b, ", \"translation\": ");
		sb_vec(b, &t.x, 3);
	}
	if (!gltf_quat_bits_equal(p.r, quat_identity())) {
		sb_puts(b, ", \"rotation\": ");
		sb_vec(b, &p.r.x, 4);
	}
	if (!gltf_vec3_bits_equal(p.s, vec3_make(1, 1, 1))) {
		sb_puts(b, ", \"scale\": ");
		sb_vec(b, &p.s.x, 3);
	}
	if (pair) {
		vec3 back = vec3_sub(vec3_make(0, 0, 0), p.pivot);

		sb_printf(b, ", \"children\": [%d]", x->gidx[pos] + 1);
		put_extras(x, node, &p, true);
		sb_puts(b, "},\n    {\"name\": ");
		{
			const char *base = p.name ? p.name : scene_id(x->s, node);
			size_t n = strlen(base);
			char *inner = malloc(n + sizeof(".pivot"));

			if (!inner) {
				b->failed = true;
				return;
			}
			memcpy(inner, base, n);
			memcpy(inner + n, ".pivot", sizeof(".pivot"));
			sb_str(b, inner);
			free(inner);
		}
		sb_puts(b, ", \"translation\": ");
		sb_vec(b, &back.x, 3);
		put_geometry(x, pos);
		put_children(x, node);
		sb_puts(b, ", \"extras\": {\"rigd\": {\"pivot_of\": ");
		sb_str(b, scene_id(x->s, node));
		sb_puts(b, "}}}");
	} else {
		put_geometry(x, pos);
		put_children(x, node);
		put_extras(x, node, &p, false);
		sb_puts(b, "}");
	}
}

/* The mesh reference of the node at 'pos' ('mesh', may be NULL) as a glTF
 * mesh index in x->mesh_of, a new mesh the first time a reference is seen. */
static int plan_mesh(export_ctx *x, int pos, const char *mesh)
{
	gltf_sset_entry *e;

	x->mesh_of[pos] = -1;
	if (!mesh)
		return 0;
	e = gltf_sset_slot(&x->meshes, mesh);
	if (!e->key) {
		if (!(e = gltf_sset_add(&x->meshes, mesh)))
			return RIGD_E_NOMEM;
		/* The slot's counter holds the glTF mesh index. */
		e->next = x->n_meshes;
		x->mesh_names[x->n_meshes++] = e->key;
	}
	x->mesh_of[pos] = e->next;
	return 0;
}

/* The glTF indices of every node, mesh and camera, in the scene's
 * preorder: 0, RIGD_E_NOMEM, RIGD_E_LIMIT or RIGD_E_NOT_TRS. */
static int plan(export_ctx *x)
{
	const scene *s = x->s;
	int n = x->n, rc;

	if (n > 0 && (!(x->gidx = gltf_alloc_array(n, sizeof(int))) ||
		      !(x->mesh_of = gltf_alloc_array(n, sizeof(int))) ||
		      !(x->camera_of = gltf_alloc_array(n, sizeof(int))) ||
		      !(x->mesh_names = gltf_alloc_array(n, sizeof(char *)))))
		return RIGD_E_NOMEM;
	if (gltf_sset_init(&x->meshes, (size_t)n) != 0)
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++) {
		int node = scene_at(s, pos);
		node_props p;

		/* Preorder: a parent's glTF index is given before its children's. */
		assert(scene_parent(s, node) < 0 || scene_pos(s, scene_parent(s, node)) < pos);
		scene_props(s, node, &p);
		/* glTF's nodes are TRS, or a matrix that must decompose into
		 * TRS, always composed with the parent's: a shear, or a world
		 * taken from the parent's by another rule, has no glTF form. */
		if (p.shear[0] != 0 || p.shear[1] != 0 || p.inherit != INHERIT_NORMAL)
			return RIGD_E_NOT_TRS;
		if (x->n_gltf > INT_MAX - 2)
			return RIGD_E_LIMIT;
		x->gidx[pos] = x->n_gltf;
		x->n_gltf += is_zero_bits(p.pivot) ? 1 : 2;
		x->camera_of[pos] = p.kind == NODE_CAMERA ? x->n_cameras++ : -1;
		if ((rc = plan_mesh(x, pos, p.mesh)) != 0)
			return rc;
	}
	return 0;
}

/* asset, scene and scenes. */
static void put_head(export_ctx *x, const gltf_export_opts *opts)
{
	const scene *s = x->s;
	sbuf *b = &x->b;
	int n = scene_count(s);

	sb_puts(b, "{\n  \"asset\": {\"version\": \"2.0\", \"generator\": ");
	sb_str(b, opts && opts->generator ? opts->generator : "rigd");
	sb_puts(b, "},\n  \"scene\": 0,\n  \"scenes\": [{");
	if (opts && opts->scene_name) {
		sb_puts(b, "\"name\": ");
		sb_str(b, opts->scene_name);
	}
	if (n > 0) {
		/* The roots: each after the subtree of the one before. */
		sb_printf(b, "%s\"nodes\": [", opts && opts->scene_name ? ", " : "");
		for (int pos = 0; pos < n; pos += scene_subtree_size(s, scene_at(s, pos)))
			sb_printf(b, "%s%d", pos ? ", " : "", x->gidx[pos]);
		sb_puts(b, "]");
	}
	sb_puts(b, "}]");
}

/* nodes and meshes. */
static void put_nodes_and_meshes(export_ctx *x)
{
	sbuf *b = &x->b;

	if (x->n > 0) {
		sb_puts(b, ",\n  \"nodes\": [\n");
		for (int pos = 0; pos < x->n; pos++) {
			put_node(x, pos);
			sb_puts(b, pos + 1 < x->n ? ",\n" : "\n");
		}
		sb_puts(b, "  ]");
	}
	if (x->n_meshes > 0) {
		sb_puts(b, ",\n  \"meshes\": [\n");
		for (int k = 0; k < x->n_meshes; k++) {
			sb_puts(b, "    {\"name\": ");
			sb_str(b, x->mesh_names[k]);
			sb_puts(b, ", \"primitives\": [{\"attributes\": {\"POSITION\": 0}, \"indices\": 1}]}");
			sb_puts(b, k + 1 < x->n_meshes ? ",\n" : "\n");
		}
		sb_puts(b, "  ]");
	}
}

/* cameras: one perspective camera per camera node, in preorder. */
static void put_cameras(export_ctx *x)
{
	const scene *s = x->s;
	sbuf *b = &x->b;
	bool first = true;

	if (x->n_cameras == 0)
		return;
	sb_puts(b, ",\n  \"cameras\": [\n");
	for (int pos = 0; pos < x->n; pos++) {
		node_props p;

		if (x->camera_of[pos] < 0)
			continue;
		scene_props(s, scene_at(s, pos), &p);
		sb_puts(b, first ? "    {\"name\": " : ",\n    {\"name\": ");
		sb_str(b, scene_id(s, scene_at(s, pos)));
		sb_puts(b, ", \"type\": \"perspective\", \"perspective\": {\"yfov\": ");
		sb_num(b, p.fov_deg * (M_PI / 180.0));
		sb_puts(b, ", \"znear\": ");
		sb_num(b, p.znear);
		sb_puts(b, ", \"zfar\": ");
		sb_num(b, p.zfar);
		sb_puts(b, "}}");
		first = false;
	}
	sb_puts(b, "\n  ]");
}

/* accessors, bufferViews and buffers of the unit box every mesh shares. */
static void put_box_buffers(sbuf *b)
{
	sb_printf(b, ",\n  \"accessors\": [\n"
		     "    {\"bufferView\": 0, \"componentType\": 5126, \"count\": 8, \"type\": \"VEC3\", "
		     "\"min\": [-0.5, -0.5, -0.5], \"max\": [0.5, 0.5, 0.5]},\n"
		     "    {\"bufferView\": 1, \"componentType\": 5123, \"count\": 36, \"type\": \"SCALAR\"}\n"
		     "  ],\n  \"bufferViews\": [\n"
		     "    {\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": %zu, \"target\": 34962},\n"
		     "    {\"buffer\": 0, \"byteOffset\": %zu, \"byteLength\": %zu, \"target\": 34963}\n"
		     "  ],\n  \"buffers\": [\n    {\"byteLength\": %zu, \"uri\": \"",
		  BOX_POSITION_BYTES, BOX_POSITION_BYTES, BOX_INDEX_BYTES, BOX_BYTES);
	sb_box_uri(b);
	sb_puts(b, "\"}\n  ]");
}

int gltf_export(const scene *s, const gltf_export_opts *opts, char **out_json, size_t *out_len)
{
	export_ctx x = { .s = s, .n = scene_count(s) };
	int rc;

	if ((rc = plan(&x)) == 0) {
		put_head(&x, opts);
		put_nodes_and_meshes(&x);
		put_cameras(&x);
		if (x.n_meshes > 0)
			put_box_buffers(&x.b);
		sb_puts(&x.b, "\n}\n");
		rc = sb_take(&x.b, out_json, out_len);
	}
	json_buf_release(&x.b.buf);
	gltf_sset_free(&x.meshes);
	free(x.mesh_names);
	free(x.gidx);
	free(x.mesh_of);
	free(x.camera_of);
	return rc;
}
