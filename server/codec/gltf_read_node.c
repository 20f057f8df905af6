/*
 * gltf_read_node.c: one glTF node as read for gltf_import: name, children,
 * translation / rotation / scale or a matrix split into them, mesh, camera
 * and skin indices, and the extras.rigd that gltf_export writes; then the
 * hierarchy (one parent each, no cycles).
 *
 * Everything here is untrusted input: each problem becomes an error naming
 * the node, never an assert. No recursion: a hostile file can be a chain a
 * million nodes deep.
 */
#include "gltf_internal.h"

#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

/* An array of exactly 'n' finite numbers, property 'field' of node 'node'. */
static int read_numbers(gltf_import_ctx *c, int node, const cJSON *a, const char *field, int n,
			double *out)
{
	int i = 0;

	if (!cJSON_IsArray(a))
		return gltf_fail_node(c, RIGD_E_BAD_GLTF, node, field, "%s is not an array of %d numbers",
				      field, n);
	for (const cJSON *e = a->child; e && i < n; e = e->next, i++) {
		if (!cJSON_IsNumber(e))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, node, field, "%s[%d] is not a number",
					      field, i);
		if (!isfinite(e->valuedouble))
			return gltf_fail_node(c, RIGD_E_NOT_FINITE, node, field,
					      "%s[%d] is not finite", field,
					      i);
		out[i] = e->valuedouble;
	}
	if (cJSON_GetArraySize(a) != n)
		return gltf_fail_node(c, RIGD_E_BAD_GLTF, node, field, "%s has %d numbers, not %d", field,
				      cJSON_GetArraySize(a), n);
	return 0;
}

/* extras.rigd.pivot, .t and .r ('x') of node i into 'r'. */
static int extras_transform(gltf_import_ctx *c, int i, const cJSON *x, gltf_rigd_extras *r)
{
	const cJSON *v;
	double d[3];
	int rc;

	if ((v = cJSON_GetObjectItemCaseSensitive(x, "pivot"))) {
		if ((rc = read_numbers(c, i, v, "extras.rigd.pivot", 3, d)) != 0)
			return rc;
		r->has_pivot = true;
		r->pivot = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "t"))) {
		if ((rc = read_numbers(c, i, v, "extras.rigd.t", 3, d)) != 0)
			return rc;
		r->has_t = true;
		r->t = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "r"))) {
		double q[4];
		quat unit;

		if ((rc = read_numbers(c, i, v, "extras.rigd.r", 4, q)) != 0)
			return rc;
		r->has_r = true;
		r->r = (quat){ q[0], q[1], q[2], q[3] };
		if (quat_normalize(r->r, &unit) != 0)
			return gltf_fail_node(c, RIGD_E_ZERO_QUATERNION, i, "extras",
					      "extras.rigd.r has zero length");
	}
	return 0;
}

/* extras.rigd.bounds ('x') of node i into 'r'. */
static int extras_bounds(gltf_import_ctx *c, int i, const cJSON *x, gltf_rigd_extras *r)
{
	const cJSON *v;
	int rc;

	if ((v = cJSON_GetObjectItemCaseSensitive(x, "bounds"))) {
		double lo[3], hi[3];

		if (!cJSON_IsObject(v))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.bounds is not an object with min and max");
		if ((rc = read_numbers(c, i, cJSON_GetObjectItemCaseSensitive(v, "min"),
				       "extras.rigd.bounds.min", 3, lo)) != 0 ||
		    (rc = read_numbers(c, i, cJSON_GetObjectItemCaseSensitive(v, "max"),
				       "extras.rigd.bounds.max", 3, hi)) != 0)
			return rc;
		if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.bounds: min exceeds max");
		r->has_bounds = true;
		r->bounds = aabb_make(vec3_make(lo[0], lo[1], lo[2]), vec3_make(hi[0], hi[1], hi[2]));
	}
	return 0;
}

/* extras.rigd.visible, .unnamed, .fov, .near, .far and .pivot_of ('x') of
 * node i into 'r'. */
static int extras_flags(gltf_import_ctx *c, int i, const cJSON *x, gltf_rigd_extras *r)
{
	const cJSON *v;

	if ((v = cJSON_GetObjectItemCaseSensitive(x, "visible"))) {
		if (!cJSON_IsBool(v))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.visible is not true or false");
		r->visible = cJSON_IsTrue(v);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "unnamed"))) {
		if (!cJSON_IsBool(v))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.unnamed is not true or false");
		r->unnamed = cJSON_IsTrue(v);
	}
	{
		static const char *const keys[3] = { "fov", "near", "far" };
		bool *has[3] = { &r->has_fov, &r->has_near, &r->has_far };
		double *val[3] = { &r->fov_deg, &r->znear, &r->zfar };

		for (int k = 0; k < 3; k++) {
			if (!(v = cJSON_GetObjectItemCaseSensitive(x, keys[k])))
				continue;
			if (!cJSON_IsNumber(v))
				return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
						      "extras.rigd.%s is not a number", keys[k]);
			if (!isfinite(v->valuedouble))
				return gltf_fail_node(c, RIGD_E_NOT_FINITE, i, "extras",
						      "extras.rigd.%s is not finite", keys[k]);
			*has[k] = true;
			*val[k] = v->valuedouble;
		}
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "pivot_of"))) {
		if (!cJSON_IsString(v))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.pivot_of is not a string");
		r->pivot_of = v->valuestring;
	}
	return 0;
}

/* Reads extras.rigd of node i (written by gltf_export). */
static int read_extras(gltf_import_ctx *c, int i)
{
	const cJSON *ex = cJSON_GetObjectItemCaseSensitive(c->node_json[i], "extras");
	const cJSON *x, *v;
	gltf_rigd_extras *r = &c->nodes[i].x;
	int rc;

	*r = (gltf_rigd_extras){ .kind = -1, .visible = -1 };
	if (!cJSON_IsObject(ex) || !(x = cJSON_GetObjectItemCaseSensitive(ex, "rigd")))
		return 0;
	if (!cJSON_IsObject(x))
		return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras", "extras.rigd is not an object");
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "id"))) {
		if (!cJSON_IsString(v) || !scene_id_valid(v->valuestring))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.id is not a valid node id");
		r->id = v->valuestring;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(x, "kind"))) {
		if (!cJSON_IsString(v) || (r->kind = edit_kind_from_name(v->valuestring)) < 0)
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
					      "extras.rigd.kind is not group, mesh or camera");
	}
	if ((rc = extras_transform(c, i, x, r)) != 0 || (rc = extras_bounds(c, i, x, r)) != 0)
		return rc;
	return extras_flags(c, i, x, r);
}

/* Splits node i's matrix into TRS (or refuses it). */
static int read_matrix(gltf_import_ctx *c, int i, const cJSON *a)
{
	gltf_src_node *g = &c->nodes[i];
	double biggest = 1, tol, e;
	mat4 m;
	int rc;

	if ((rc = read_numbers(c, i, a, "matrix", 16, m.m)) != 0)
		return rc;
	if (m.m[3] != 0 || m.m[7] != 0 || m.m[11] != 0 || m.m[15] != 1)
		return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "matrix",
				      "matrix is not affine: its last row is (%g, %g, %g, %g), not (0, 0, 0, 1)",
				      m.m[3], m.m[7], m.m[11], m.m[15]);
	for (int col = 0; col < 3; col++)
		for (int row = 0; row < 3; row++)
			biggest = fmax(biggest, fabs(m.m[col * 4 + row]));
	tol = c->o.matrix_tol * biggest;
	g->has_matrix = true;
	g->inexact = !mat4_decompose(m, tol, &g->t, &g->r, &g->s, &e);
	g->matrix_err = e;
	/* Finite entries can still overflow on the way (a column of length
	 * above 1e308): such a matrix has no TRS, nearest or not. */
	if (!isfinite(e) || !isfinite(g->s.x) || !isfinite(g->s.y) || !isfinite(g->s.z) ||
	    !isfinite(g->r.x) || !isfinite(g->r.y) || !isfinite(g->r.z) || !isfinite(g->r.w))
		return gltf_fail_node(c, RIGD_E_NOT_FINITE, i, "matrix",
				      "matrix overflows when split into translation, rotation and scale");
	if (g->inexact && !c->o.nearest_trs)
		return gltf_fail_node(c, RIGD_E_NOT_TRS, i, "matrix",
				      "matrix is not translation * rotation * scale (shear %.3g degrees, "
				      "largest element error %.3g); import with nearest TRS to keep the "
				      "nearest one",
				      fabs(mat4_shear_deg(m) - 90), e);
	return 0;
}

/* Node i's "children" ('v'): indices in range, not itself, appended to
 * c->kids. */
static int read_children(gltf_import_ctx *c, int i, const cJSON *v)
{
	gltf_src_node *g = &c->nodes[i];
	char why[96];
	int k = 0;

	if (!cJSON_IsArray(v))
		return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "children",
				      "children is not an array of node indices");
	g->first_kid = c->n_kids;
	for (const cJSON *e = v->child; e; e = e->next, k++) {
		int kid = gltf_as_index(e, c->n_nodes);

		if (kid < 0) {
			gltf_index_problem(e, c->n_nodes, "nodes", why, sizeof(why));
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "children", "children[%d] %s", k,
					      why);
		}
		if (kid == i)
			return gltf_fail_node(c, RIGD_E_CYCLE, i, "children",
					      "lists itself as a child (children[%d])", k);
		/* alloc_nodes counted every child index of every node. */
		assert(c->n_kids < c->kids_cap);
		c->kids[c->n_kids++] = kid;
	}
	g->n_kids = k;
	return 0;
}

/* Node i's "mesh", "camera" and "skin" indices ('n' is the node). */
static int read_refs(gltf_import_ctx *c, int i, const cJSON *n)
{
	static const char *const keys[3] = { "mesh", "camera", "skin" };
	static const char *const plural[3] = { "meshes", "cameras", "skins" };
	gltf_src_node *g = &c->nodes[i];
	int count[3] = { c->n_meshes, c->n_cameras, c->n_skins };
	int *slot[3] = { &g->mesh, &g->camera, &g->skin };
	const cJSON *v;
	char why[96];

	for (int k = 0; k < 3; k++) {
		if (!(v = cJSON_GetObjectItemCaseSensitive(n, keys[k])))
			continue;
		if ((*slot[k] = gltf_as_index(v, count[k])) < 0) {
			gltf_index_problem(v, count[k], plural[k], why, sizeof(why));
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, keys[k], "%s %s", keys[k], why);
		}
	}
	return 0;
}

/* Node i's own properties. */
int gltf_read_node(gltf_import_ctx *c, int i)
{
	const cJSON *n = c->node_json[i], *v;
	gltf_src_node *g = &c->nodes[i];
	double d[4];
	int rc;

	g->parent = -1;
	g->mesh = g->camera = g->skin = -1;
	g->fold = -1;
	g->t = vec3_make(0, 0, 0);
	g->r = quat_identity();
	g->s = vec3_make(1, 1, 1);
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "name"))) {
		if (!cJSON_IsString(v))
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "name", "name is not a string");
		g->name = v->valuestring;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "children")) &&
	    (rc = read_children(c, i, v)) != 0)
		return rc;
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "translation"))) {
		if ((rc = read_numbers(c, i, v, "translation", 3, d)) != 0)
			return rc;
		g->has_t = true;
		g->t = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "rotation"))) {
		quat unit;

		if ((rc = read_numbers(c, i, v, "rotation", 4, d)) != 0)
			return rc;
		g->has_r = true;
		g->r = (quat){ d[0], d[1], d[2], d[3] };
		if (quat_normalize(g->r, &unit) != 0)
			return gltf_fail_node(c, RIGD_E_ZERO_QUATERNION, i, "rotation",
					      "rotation has zero length");
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "scale"))) {
		if ((rc = read_numbers(c, i, v, "scale", 3, d)) != 0)
			return rc;
		g->has_s = true;
		g->s = vec3_make(d[0], d[1], d[2]);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(n, "matrix"))) {
		if (g->has_t || g->has_r || g->has_s)
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "matrix",
					      "has both matrix and translation/rotation/scale");
		if ((rc = read_matrix(c, i, v)) != 0)
			return rc;
	}
	if ((rc = read_refs(c, i, n)) != 0)
		return rc;
	return read_extras(c, i);
}

/* Every node has at most one parent and the hierarchy has no cycle. */
int gltf_link_parents(gltf_import_ctx *c)
{
	int *stack = NULL, n_stack = 0;

	for (int i = 0; i < c->n_nodes; i++) {
		const gltf_src_node *g = &c->nodes[i];

		for (int k = 0; k < g->n_kids; k++) {
			int kid = c->kids[g->first_kid + k];
			gltf_src_node *kg = &c->nodes[kid];

			if (kg->parent == i)
				return gltf_fail_node(c, RIGD_E_BAD_GLTF, kid, "children",
						      "listed twice in the children of node %d", i);
			if (kg->parent >= 0)
				return gltf_fail_node(c, RIGD_E_BAD_GLTF, kid, "children",
						      "is a child of both node %d and node %d",
						      kg->parent, i);
			kg->parent = i;
		}
	}
	/* With one parent each, a node no parentless node reaches hangs from a
	 * cycle: walk down from every root, then look for leftovers. */
	if (c->n_nodes && !(stack = gltf_alloc_array(c->n_nodes, sizeof(int))))
		return gltf_nomem(c);
	for (int i = 0; i < c->n_nodes; i++) {
		if (c->nodes[i].parent >= 0)
			continue;
		stack[n_stack++] = i;
		while (n_stack) {
			const gltf_src_node *g = &c->nodes[stack[--n_stack]];

			for (int k = 0; k < g->n_kids; k++) {
				int kid = c->kids[g->first_kid + k];

				c->nodes[kid].visited = true;
				/* Below a parentless node there is no cycle, and each
				 * node has one parent: pushed at most once. */
				assert(n_stack < c->n_nodes);
				stack[n_stack++] = kid;
			}
		}
		c->nodes[i].visited = true;
	}
	free(stack);
	for (int i = 0; i < c->n_nodes; i++) {
		int on_cycle = i, steps;

		if (c->nodes[i].visited)
			continue;
		/* Climbing n steps from any unreached node lands on the cycle;
		 * once round it finds the cycle's lowest index, the node named. */
		for (steps = 0; steps < c->n_nodes; steps++)
			on_cycle = c->nodes[on_cycle].parent;
		for (int k = c->nodes[on_cycle].parent, lowest = on_cycle;; k = c->nodes[k].parent) {
			if (k < lowest)
				lowest = k;
			if (k == on_cycle) {
				on_cycle = lowest;
				break;
			}
		}
		return gltf_fail_node(c, RIGD_E_CYCLE, on_cycle, "children",
				      "the children lists form a cycle through this node (it is its own "
				      "ancestor)");
	}
	return 0;
}
