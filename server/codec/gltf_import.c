/*
 * gltf_import.c: a glTF file's chosen scene as ONE batch of create ops (see
 * gltf.h): gltf_read.c reads and checks the document, this file folds the
 * pivot pairs gltf_export wrote, picks unique ids, and walks the scene in
 * depth-first preorder with an explicit stack, one op per rigd node.
 *
 * It never changes a scene (opts.existing is only read) and never keeps a
 * cJSON tree past gltf_import's return.
 */
#include "gltf_internal.h"

#include "core/err.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

/*
 * Recognises the pivot pairs gltf_export writes: an outer node with
 * extras.rigd.pivot p (non-zero) and id, TRS only, no mesh, camera or skin,
 * and exactly one child; that child with extras.rigd.pivot_of naming the
 * outer's id, translation exactly 0 - p and no rotation, scale or matrix. A
 * pair that no longer reads so (edited by another tool) stays two nodes,
 * which keeps every world matrix.
 */
static void find_pivot_pairs(gltf_import_ctx *c)
{
	for (int i = 0; i < c->n_nodes; i++) {
		gltf_src_node *o = &c->nodes[i];
		const gltf_src_node *in;
		int kid;

		if (!o->x.has_pivot)
			continue;
		if (gltf_vec3_bits_equal(o->x.pivot, vec3_make(0, 0, 0)))
			continue;
		if (!o->x.id || o->has_matrix || o->mesh >= 0 || o->camera >= 0 || o->skin >= 0 ||
		    o->n_kids != 1)
			goto unfolded;
		kid = c->kids[o->first_kid];
		in = &c->nodes[kid];
		if (!in->x.pivot_of || strcmp(in->x.pivot_of, o->x.id) != 0 || in->has_matrix ||
		    in->has_r || in->has_s || !in->has_t ||
		    !gltf_vec3_bits_equal(in->t, vec3_sub(vec3_make(0, 0, 0), o->x.pivot)))
			goto unfolded;
		o->fold = kid;
		continue;
unfolded:
		{
			char label[LABEL_NAME_MAX + 32];

			gltf_node_label(c, i, label, sizeof(label));
			gltf_warn(c,
				  "%s: extras.rigd.pivot ignored: the pivot pair was changed, so it is "
				  "imported as two nodes", label);
		}
	}
}

/* Cuts 'name' to at most SCENE_NAME_MAX bytes at a UTF-8 boundary. */
static size_t name_len(const char *name)
{
	size_t n = strlen(name);

	if (n <= SCENE_NAME_MAX)
		return n;
	n = SCENE_NAME_MAX;
	while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
		n--;
	return n;
}

/* The id a node asks for before it is made unique. */
static void base_id(const gltf_import_ctx *c, int i, char *out)
{
	const gltf_src_node *g = &c->nodes[i];
	size_t n = 0;
	bool alnum = false;

	if (g->x.id) {
		snprintf(out, SCENE_ID_MAX + 1, "%s", g->x.id);
		return;
	}
	if (g->name) {
		for (const char *p = g->name; *p && n < SCENE_ID_MAX; p++) {
			char ch = *p;

			if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) {
				out[n++] = ch;
				alnum = true;
			} else if (ch == '_' || ch == '.' || ch == ':' || ch == '-') {
				out[n++] = ch;
			} else if (n == 0 || out[n - 1] != '_') {
				/* One '_' for a run of other bytes (a UTF-8 character
				 * is several). */
				out[n++] = '_';
			}
		}
	}
	out[n] = '\0';
	if (!alnum)
		snprintf(out, SCENE_ID_MAX + 1, "node_%d", i);
}

/* Camera values from extras.rigd of a node that is no glTF camera. */
static int extras_camera(gltf_import_ctx *c, int i, edit_op *op)
{
	const gltf_rigd_extras *x = &c->nodes[i].x;
	node_props def = node_props_default();
	double fov = x->has_fov ? x->fov_deg : def.fov_deg;
	double znear = x->has_near ? x->znear : def.znear;
	double zfar = x->has_far ? x->zfar : def.zfar;

	if (!(fov > 0 && fov < 180 && znear > 0 && zfar > znear))
		return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "extras",
				      "extras.rigd camera values need 0 < fov < 180 and 0 < near < far");
	if (x->has_fov)
		op->fov_deg = fov, op->fields |= EDIT_F_FOV;
	if (x->has_near)
		op->znear = znear, op->fields |= EDIT_F_NEAR;
	if (x->has_far)
		op->zfar = zfar, op->fields |= EDIT_F_FAR;
	return 0;
}

/* The translation, rotation, scale and pivot of glTF node 'g' (the outer
 * node of a folded pivot pair) into 'op'. */
static void op_transform(const gltf_src_node *g, edit_op *op)
{
	const gltf_rigd_extras *x = &g->x;

	if (g->fold >= 0) {
		/* The outer node carries t + p. The exact t rides along in the
		 * extras, used while t + p still gives the outer translation bit
		 * for bit (else the file was edited: t = outer - p). */
		op->pivot = x->pivot;
		op->t = vec3_sub(g->t, x->pivot);
		if (x->has_t && gltf_vec3_bits_equal(vec3_add(x->t, x->pivot), g->t))
			op->t = x->t;
		op->fields |= EDIT_F_T | EDIT_F_PIVOT;
	} else if (g->has_t || g->has_matrix) {
		op->t = g->t;
		op->fields |= EDIT_F_T;
	}
	if (g->has_r || g->has_matrix) {
		quat q;

		op->r = g->r;
		op->fields |= EDIT_F_R;
		/* The exact rotation rides along in the extras while it still
		 * normalises to the glTF rotation bit for bit. */
		if (g->has_r && x->has_r && quat_normalize(x->r, &q) == 0 &&
		    gltf_quat_bits_equal(q, g->r))
			op->r = x->r;
	}
	if (g->has_s || g->has_matrix)
		op->s = g->s, op->fields |= EDIT_F_S;
}

/* The kind, mesh and camera values of glTF node i into 'op': 'geo' is the
 * node that carries the mesh and camera (the inner node of a folded pair). */
static int op_geometry(gltf_import_ctx *c, int i, const gltf_src_node *geo, const char *label,
		       edit_op *op)
{
	const gltf_rigd_extras *x = &c->nodes[i].x;
	int kind = NODE_GROUP, rc;

	/* read_refs checked every index against its table. */
	assert(geo->mesh < c->n_meshes && geo->camera < c->n_cameras);
	if (geo->mesh >= 0) {
		if (edit_op_set_mesh(op, c->mesh_ref[geo->mesh]) != 0)
			return gltf_nomem(c);
		kind = NODE_MESH;
	}
	if (geo->camera >= 0) {
		const gltf_src_camera *cam = &c->cameras[geo->camera];

		kind = NODE_CAMERA;
		if (cam->perspective) {
			op->fov_deg = cam->fov_deg;
			/* The exact degrees ride along in the extras while they
			 * still give yfov bit for bit. */
			if (x->has_fov && gltf_bits_equal(x->fov_deg * (M_PI / 180.0), cam->yfov))
				op->fov_deg = x->fov_deg;
			op->znear = cam->znear;
			op->zfar = cam->zfar;
			op->fields |= EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR;
			if (cam->infinite)
				gltf_warn(c,
					  "%s: camera %d has an infinite far plane; far set to %g", label,
					  geo->camera, cam->zfar);
		} else {
			gltf_warn(c, "%s: camera %d is orthographic; rigd cameras are perspective, so it "
				  "keeps the default field of view and planes", label, geo->camera);
		}
	} else if (x->has_fov || x->has_near || x->has_far) {
		if ((rc = extras_camera(c, i, op)) != 0)
			return rc;
	}
	if (x->kind >= 0)
		kind = x->kind;
	if (kind != NODE_GROUP)
		op->node_kind = kind, op->fields |= EDIT_F_KIND;
	return 0;
}

/* Appends the create op for glTF node i (the outer node when it folds a
 * pivot pair) with id 'id' under 'parent_id' (NULL: a root). */
static int add_op(gltf_import_ctx *c, int i, const char *id, const char *parent_id)
{
	const gltf_src_node *g = &c->nodes[i];
	const gltf_src_node *geo = g->fold >= 0 ? &c->nodes[g->fold] : g; /* carries mesh and camera */
	const gltf_rigd_extras *x = &g->x;
	char label[LABEL_NAME_MAX + 32];
	int rc;
	edit_op *op;

	gltf_node_label(c, i, label, sizeof(label));
	if (!(op = edit_batch_add(c->out, EDIT_CREATE, id)))
		return gltf_nomem(c);
	if (parent_id && edit_op_set_parent(op, parent_id) != 0)
		return gltf_fail(c, RIGD_E_BAD_ID, "parent", "%s", err_str(RIGD_E_BAD_ID));
	if (g->name && !x->unnamed) {
		char name[SCENE_NAME_MAX + 1];
		size_t n = name_len(g->name);

		memcpy(name, g->name, n);
		name[n] = '\0';
		if (n < strlen(g->name))
			gltf_warn(c, "%s: name cut to %d bytes", label, SCENE_NAME_MAX);
		if (edit_op_set_name(op, name) != 0)
			return gltf_nomem(c);
	}
	op_transform(g, op);
	if ((rc = op_geometry(c, i, geo, label, op)) != 0)
		return rc;
	if (x->has_bounds)
		op->has_bounds = true, op->bounds = x->bounds, op->fields |= EDIT_F_BOUNDS;
	if (x->visible >= 0)
		op->visible = x->visible == 1, op->fields |= EDIT_F_VISIBLE;
	return 0;
}

/* Counts node i, given as a matrix, in the report (and warns when it was
 * kept as the nearest TRS). */
static void report_matrix(gltf_import_ctx *c, int i)
{
	const gltf_src_node *g = &c->nodes[i];
	gltf_report *r = c->rep;

	r->n_matrix++;
	r->max_matrix_err = fmax(r->max_matrix_err, g->matrix_err);
	if (g->inexact) {
		char label[LABEL_NAME_MAX + 32];

		r->n_inexact++;
		gltf_node_label(c, i, label, sizeof(label));
		gltf_warn(c, "%s: matrix kept as the nearest TRS (largest element error %.3g)", label,
			  g->matrix_err);
	}
}

/* Walks the chosen scene in depth-first preorder (explicit stack) and
 * appends one create op per rigd node. */
static int walk(gltf_import_ctx *c)
{
	gltf_report *r = c->rep;
	gltf_sset ids = { 0 };
	int *stack = NULL, *depth = NULL, n_stack = 0, rc = 0;

	if (c->n_nodes == 0)
		return 0;
	if (!(stack = gltf_alloc_array(c->n_nodes, sizeof(int))) ||
	    !(depth = gltf_alloc_array(c->n_nodes, sizeof(int))) ||
	    gltf_sset_init(&ids, 2 * (size_t)c->n_nodes + 1) != 0) {
		rc = gltf_nomem(c);
		goto out;
	}
	/* The node the roots go under is taken, whether or not the caller
	 * named the scene that holds it. */
	if (c->o.parent && c->o.parent[0] && !gltf_sset_add(&ids, c->o.parent)) {
		rc = gltf_nomem(c);
		goto out;
	}
	for (int k = c->n_roots - 1; k >= 0; k--) {
		stack[n_stack] = c->roots[k];
		depth[n_stack++] = 0;
	}
	while (n_stack) {
		int i = stack[--n_stack], d = depth[n_stack];
		const gltf_src_node *g = &c->nodes[i];
		const gltf_src_node *src = g->fold >= 0 ? &c->nodes[g->fold] : g; /* holds the children */
		gltf_node_info *info = &r->nodes[i];
		const char *parent_id = c->o.parent && c->o.parent[0] ? c->o.parent : NULL;
		char base[SCENE_ID_MAX + 1];

		if (d > c->o.max_depth) {
			rc = gltf_fail_node(c, RIGD_E_LIMIT, i, "children",
					    "deeper than the limit of %d levels below a root",
					    c->o.max_depth);
			goto out;
		}
		base_id(c, i, base);
		if ((rc = gltf_make_unique(&ids, c->o.existing, base, SCENE_ID_MAX, info->id)) != 0) {
			rc = gltf_nomem(c);
			goto out;
		}
		info->role = GLTF_NODE_PLAIN;
		if (g->fold >= 0) {
			info->role = GLTF_NODE_PIVOT_OUTER;
			r->nodes[g->fold].role = GLTF_NODE_PIVOT_INNER;
			memcpy(r->nodes[g->fold].id, info->id, sizeof(info->id));
			r->n_pivots++;
		}
		if (g->parent >= 0) {
			/* Preorder: a parent got its id before any of its children. */
			assert(r->nodes[g->parent].role != GLTF_NODE_SKIPPED);
			parent_id = r->nodes[g->parent].id;
		}
		if ((rc = add_op(c, i, info->id, parent_id)) != 0)
			goto out;
		r->n_created++;
		if (g->has_matrix)
			report_matrix(c, i);
		for (int k = src->n_kids - 1; k >= 0; k--) {
			/* One parent each and no cycles (gltf_link_parents): every
			 * node is pushed at most once. */
			assert(n_stack < c->n_nodes);
			stack[n_stack] = c->kids[src->first_kid + k];
			depth[n_stack++] = d + 1;
		}
	}
out:
	gltf_sset_free(&ids);
	free(stack);
	free(depth);
	return rc;
}

gltf_import_opts gltf_import_opts_default(void)
{
	return (gltf_import_opts){ .scene_index = -1 };
}

void gltf_report_init(gltf_report *r)
{
	*r = (gltf_report){ .scene_index = -1, .bad_node = -1 };
}

void gltf_report_release(gltf_report *r)
{
	if (!r)
		return;
	free(r->scene_name);
	free(r->nodes);
	for (int k = 0; k < r->n_skins; k++) {
		free(r->skins[k].name);
		free(r->skins[k].joints);
	}
	free(r->skins);
	for (int k = 0; k < r->n_warnings; k++)
		free(r->warnings[k]);
	free(r->warnings);
	gltf_report_init(r);
}

/* Fills the report's node table from what was read (every node skipped
 * until walk() imports it). */
static int report_nodes(gltf_import_ctx *c)
{
	c->rep->n_nodes = c->n_nodes;
	if (c->n_nodes && !(c->rep->nodes = gltf_alloc_array(c->n_nodes, sizeof(gltf_node_info))))
		return gltf_nomem(c);
	for (int i = 0; i < c->n_nodes; i++) {
		gltf_node_info *info = &c->rep->nodes[i];
		const gltf_src_node *g = &c->nodes[i];

		info->role = GLTF_NODE_SKIPPED;
		info->mesh = g->mesh;
		info->camera = g->camera;
		info->skin = g->skin;
		info->from_matrix = g->has_matrix;
		info->matrix_err = g->has_matrix ? g->matrix_err : 0;
		info->matrix_exact = g->has_matrix && !g->inexact;
	}
	c->rep->n_roots = c->n_roots;
	return 0;
}

/* Frees what the import read (not the batch nor the report). */
static void ctx_release(gltf_import_ctx *c)
{
	cJSON_Delete(c->root);
	free(c->node_json);
	free(c->mesh_json);
	free(c->camera_json);
	free(c->skin_json);
	free(c->scene_json);
	free(c->nodes);
	free(c->kids);
	if (c->mesh_ref)
		for (int i = 0; i < c->n_meshes; i++)
			free(c->mesh_ref[i]);
	free(c->mesh_ref);
	free(c->cameras);
	free(c->roots);
}

int gltf_import(const char *data, size_t len, const gltf_import_opts *opts, edit_batch *out,
		gltf_report *report, edit_error *err)
{
	gltf_import_ctx c = { 0 };
	gltf_report local;
	int rc;

	edit_batch_init(out);
	edit_error_clear(err);
	gltf_report_init(&local);
	if (report)
		gltf_report_init(report);
	c.o = opts ? *opts : gltf_import_opts_default();
	if (!(c.o.matrix_tol > 0) || !isfinite(c.o.matrix_tol))
		c.o.matrix_tol = GLTF_DEFAULT_MATRIX_TOL;
	if (c.o.max_nodes <= 0)
		c.o.max_nodes = GLTF_DEFAULT_MAX_NODES;
	if (c.o.max_depth <= 0)
		c.o.max_depth = GLTF_DEFAULT_MAX_DEPTH;
	c.err = err;
	c.out = out;
	c.rep = report ? report : &local;

	if (c.o.parent && c.o.parent[0] && !scene_id_valid(c.o.parent)) {
		rc = gltf_fail(&c, RIGD_E_BAD_ID, "parent", "%s", err_str(RIGD_E_BAD_ID));
	} else if (!data || len == 0) {
		rc = gltf_fail(&c, RIGD_E_BAD_JSON, "json", "the document is empty");
	} else if ((rc = gltf_read_document(&c, data, len)) == 0) {
		find_pivot_pairs(&c);
		if ((rc = report_nodes(&c)) == 0)
			rc = walk(&c);
	}
	if (rc) {
		int bad = c.rep->bad_node;

		edit_batch_release(out);
		gltf_report_release(c.rep);
		c.rep->bad_node = bad;
	}
	gltf_report_release(&local);
	ctx_release(&c);
	return rc;
}
