/*
 * seed.c: the demo rig (see seed.h). Goes through the engine like any
 * batch; never touches the database directly.
 */
#include "seed.h"
#include "log.h"

#include "codec/json.h"
#include "codec/svg_import.h"
#include "core/edit.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Base, arm and hand, at yaw 30 and bend 40 degrees. */
int seed_demo(engine *e)
{
	static const struct {
		const char *id, *parent, *name;
		double t[3], euler[3], pivot[3], half[3];
	} nodes[] = {
		{"base", NULL, "Base", {0, 0.2, 0}, {0, 30, 0}, {0, 0, 0}, {0.35, 0.2, 0.35}},
		{"arm", "base", "Arm", {0, 0.9, 0}, {0, 0, 40}, {0, -0.7, 0}, {0.12, 0.7, 0.12}},
		{"hand", "arm", "Hand", {0, 0.7, 0}, {0, 0, 0}, {0, 0, 0}, {0.22, 0.12, 0.22}},
	};
	edit_batch batch;
	edit_error err;
	engine_ack ack;
	int rc;

	rc = engine_scene_create(e, "demo");
	if (rc)
		return rc;
	edit_batch_init(&batch);
	snprintf(batch.client, sizeof(batch.client), "rigd-seed");
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		edit_op *op = edit_batch_add(&batch, EDIT_CREATE, nodes[i].id);

		if (!op) {
			edit_batch_release(&batch);
			return RIGD_E_NOMEM;
		}
		if (nodes[i].parent && (rc = edit_op_set_parent(op, nodes[i].parent))) {
			edit_batch_release(&batch);
			return rc;
		}
		if ((rc = edit_op_set_name(op, nodes[i].name)) ||
		    (rc = edit_op_set_mesh(op, "box"))) {
			edit_batch_release(&batch);
			return rc;
		}
		op->fields |= EDIT_F_T | EDIT_F_EULER | EDIT_F_PIVOT | EDIT_F_BOUNDS | EDIT_F_KIND;
		op->t = (vec3){nodes[i].t[0], nodes[i].t[1], nodes[i].t[2]};
		op->euler_deg = (vec3){nodes[i].euler[0], nodes[i].euler[1], nodes[i].euler[2]};
		op->pivot = (vec3){nodes[i].pivot[0], nodes[i].pivot[1], nodes[i].pivot[2]};
		op->has_bounds = true;
		op->bounds.min = (vec3){-nodes[i].half[0], -nodes[i].half[1], -nodes[i].half[2]};
		op->bounds.max = (vec3){nodes[i].half[0], nodes[i].half[1], nodes[i].half[2]};
		op->node_kind = NODE_MESH;
	}
	engine_ack_init(&ack);
	rc = engine_submit(e, "demo", &batch, &ack, &err);
	engine_ack_release(&ack);
	edit_batch_release(&batch);
	if (rc) {
		serve_log(LOG_ERROR, "seeding the demo rig: %s", err.message);
		return rc;
	}
	if ((rc = engine_commit(e)) != 0)
		return rc;
	engine_update(e, "demo", NULL, NULL);
	return 0;
}

/* The whole of 'root'/'rel' as a malloc'd NUL-terminated string (*len
 * bytes), or NULL. */
static char *read_whole(const char *root, const char *rel, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf = NULL;
	long n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (!(f = fopen(path, "rb")))
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (8L << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The body of POST /api/scenes/demo2d/svg made of the two files. */
static char *demo2d_body(const char *svg, const char *manifest, size_t *len)
{
	json_buf b;

	json_buf_init(&b, 0);
	if (JSON_BUF_LIT(&b, "{\"file\":\"demo2d.svg\",\"svg\":") ||
	    json_buf_string(&b, svg, JSON_STR_SHORT_ESCAPES | JSON_STR_REPAIR_UTF8) ||
	    JSON_BUF_LIT(&b, ",\"manifest\":") || json_buf_puts(&b, manifest) ||
	    JSON_BUF_LIT(&b, "}")) {
		json_buf_release(&b);
		return NULL;
	}
	*len = b.len;
	return json_buf_take(&b);
}

int seed_demo2d(engine *e, const char *web_root)
{
	size_t svg_len = 0, man_len = 0, body_len = 0;
	char *svg, *manifest, *body;
	svg_import in;
	svg_clean art;
	edit_batch batch;
	edit_error err;
	engine_ack ack;
	int rc;

	if (engine_scene(e, "demo2d"))
		return 0;
	svg = read_whole(web_root, SEED_DEMO2D_SVG, &svg_len);
	manifest = read_whole(web_root, SEED_DEMO2D_MANIFEST, &man_len);
	body = svg && manifest ? demo2d_body(svg, manifest, &body_len) : NULL;
	free(svg);
	free(manifest);
	if (!body) {
		serve_log(LOG_ERROR, "seeding demo2d: cannot read %s/%s and %s", web_root,
			  SEED_DEMO2D_SVG, SEED_DEMO2D_MANIFEST);
		return RIGD_E_IO;
	}
	rc = svg_import_prepare(body, body_len, NULL, &in, &art, &batch, &err);
	free(body);
	if (rc) {
		serve_log(LOG_ERROR, "seeding demo2d: %s", err.message);
		return rc;
	}
	snprintf(batch.client, sizeof(batch.client), "rigd-seed");
	engine_ack_init(&ack);
	if ((rc = engine_scene_create_dims(e, "demo2d", 2)) == 0) {
		engine_svg asset = { art.svg, art.len, art.ids, art.n_ids };

		rc = engine_asset_submit(e, "demo2d", &batch, in.file, &asset, NULL, &ack, &err);
		if (rc)
			serve_log(LOG_ERROR, "seeding demo2d: %s", err.message);
		else
			rc = engine_commit(e);
		if (rc)
			engine_scene_delete(e, "demo2d");
		else
			engine_update(e, "demo2d", NULL, NULL);
	}
	engine_ack_release(&ack);
	edit_batch_release(&batch);
	svg_clean_release(&art);
	svg_import_release(&in);
	return rc;
}
