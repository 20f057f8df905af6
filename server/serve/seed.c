/*
 * seed.c: the demo rig (see seed.h). Goes through the engine like any
 * batch; never touches the database directly.
 */
#include "seed.h"
#include "log.h"

#include "core/edit.h"
#include "core/err.h"

#include <stdio.h>

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
