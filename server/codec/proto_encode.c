/*
 * proto_encode.c: the protocol's JSON out (see proto.h): nodes, trees,
 * snapshots, updates, acks, errors, presence, ops, batches, log lines,
 * scene lists and debug records, appended to a proto_buf with json.h's writers. cJSON's own
 * printer is not used: it does not print the shortest round-trip form of a
 * double, and the log must replay bit for bit.
 *
 * An encoder that fails (out of memory) cuts the buffer back to where it
 * started, so the caller's buffer is never left with half a message. It
 * reads the scene it is given and never changes it; it knows nothing of SQL
 * or sockets.
 */
#include "proto.h"
#include "proto_internal.h"

#include "core/err.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---------- the byte buffer: proto's names for json.h ---------- */

static int put(proto_buf *b, const char *str)
{
	return json_buf_puts(b, str);
}

/* ---------- writing ---------- */

/*
 * The writers below chain appends with '||' and, on any failure, cut the
 * buffer back to where the encoder started: an encoder that fails leaves
 * the buffer as it was.
 */
static int undo_to(proto_buf *b, size_t start)
{
	json_buf_truncate(b, start);
	return RIGD_E_NOMEM;
}

static int put_num(proto_buf *b, double v)
{
	/* Non-finite values never reach the scene; null keeps the JSON valid
	 * should one ever be handed in from elsewhere. */
	return json_buf_number_or_null(b, v);
}

static int put_int(proto_buf *b, int64_t v)
{
	return json_buf_int(b, v);
}

static int put_numbers(proto_buf *b, const double *v, int n)
{
	if (JSON_BUF_LIT(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || put_num(b, v[i]))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "]");
}

static int put_vec3(proto_buf *b, vec3 v)
{
	const double a[3] = { v.x, v.y, v.z };

	return put_numbers(b, a, 3);
}

static int put_quat(proto_buf *b, quat q)
{
	const double a[4] = { q.x, q.y, q.z, q.w };

	return put_numbers(b, a, 4);
}

/* A string, or null for NULL. */
static int put_str_or_null(proto_buf *b, const char *str)
{
	return str ? proto_buf_json_string(b, str) : JSON_BUF_LIT(b, "null");
}

/* ',"key":' (no comma when first). */
static int key(proto_buf *b, const char *k, bool first)
{
	return (!first && JSON_BUF_LIT(b, ",")) || put(b, "\"") || put(b, k) || put(b, "\":");
}

static int put_bounds(proto_buf *b, bool has, aabb box)
{
	if (!has)
		return JSON_BUF_LIT(b, "null");
	return put(b, "{\"min\":") || put_vec3(b, box.min) || put(b, ",\"max\":") ||
	       put_vec3(b, box.max) || JSON_BUF_LIT(b, "}");
}

/* A z: one number when both facings hold the same bits (so that -0 and 0
 * are told apart and a log replays exactly), else {"right","left"}. */
static int put_z(proto_buf *b, double right, double left)
{
	if (memcmp(&right, &left, sizeof(right)) == 0)
		return put_num(b, right);
	return put(b, "{\"right\":") || put_num(b, right) || put(b, ",\"left\":") ||
	       put_num(b, left) || JSON_BUF_LIT(b, "}");
}

static int put_facing(proto_buf *b, int facing)
{
	return put(b, facing == FACING_RIGHT ? "\"right\"" : facing == FACING_LEFT ? "\"left\"" : "null");
}

/* ',"layer":..,"z":..,"facing":..' of a node of a 2D scene. */
static int put_draw(proto_buf *b, const node_props *p)
{
	return key(b, "layer", false) || put_str_or_null(b, p->layer) || key(b, "z", false) ||
	       put_z(b, p->z_right, p->z_left) || key(b, "facing", false) ||
	       put_facing(b, p->facing);
}

/* An inherit mode: Spine's name, or DragonBones' four flags. */
static int put_inherit(proto_buf *b, int mode)
{
	const char *name = proto_inherit_name(mode);

	if (name)
		return put(b, "\"") || put(b, name) || put(b, "\"");
	if (JSON_BUF_LIT(b, "{"))
		return RIGD_E_NOMEM;
	for (int i = 0; i < 4; i++)
		if (key(b, proto_inherit_flag_name(i), i == 0) ||
		    put(b, (mode & (1 << i)) ? "false" : "true"))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "}");
}

/* ',"shear":[..]' and ',"inherit":..' of a node of a 2D scene, each when
 * not the default (a shear of +0 +0, the normal mode), so that a scene
 * without them reads as it did before they existed. */
static int put_shape2d(proto_buf *b, const node_props *p)
{
	static const double zero = 0;
	bool sheared = memcmp(&p->shear[0], &zero, sizeof(zero)) ||
		       memcmp(&p->shear[1], &zero, sizeof(zero));

	return (sheared && (key(b, "shear", false) || put_numbers(b, p->shear, 2))) ||
	       (p->inherit != INHERIT_NORMAL && (key(b, "inherit", false) || put_inherit(b, p->inherit)));
}

static int put_world(proto_buf *b, const scene *s, int node)
{
	mat4 w = scene_world(s, node);

	return put_numbers(b, w.m, 16);
}

static int node_fields(proto_buf *b, const scene *s, int node, bool world)
{
	node_props p;
	int parent = scene_parent(s, node);
	vec3 euler;

	scene_props(s, node, &p);
	/* Derived for people, not replayed: + 0.0 shows -0 as 0. */
	euler = quat_to_euler_deg(p.r);
	euler = vec3_make(euler.x + 0.0, euler.y + 0.0, euler.z + 0.0);
	return put(b, "{\"id\":") || proto_buf_json_string(b, scene_id(s, node)) ||
	       key(b, "name", false) || put_str_or_null(b, p.name) ||
	       key(b, "parent", false) || put_str_or_null(b, parent >= 0 ? scene_id(s, parent) : NULL) ||
	       key(b, "index", false) || put_int(b, scene_child_index(s, node)) ||
	       key(b, "t", false) || put_vec3(b, p.t) ||
	       key(b, "r", false) || put_quat(b, p.r) ||
	       (scene_dims(s) == 2 &&
		(key(b, "angle", false) || put_num(b, quat_to_angle2d_deg(p.r)))) ||
	       key(b, "s", false) || put_vec3(b, p.s) ||
	       key(b, "pivot", false) || put_vec3(b, p.pivot) ||
	       key(b, "euler", false) || put_vec3(b, euler) ||
	       key(b, "bounds", false) || put_bounds(b, p.has_bounds, p.bounds) ||
	       key(b, "mesh", false) || put_str_or_null(b, p.mesh) ||
	       key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(p.kind)) ||
	       key(b, "camera", false) || put(b, "{\"fov\":") || put_num(b, p.fov_deg) ||
	       put(b, ",\"near\":") || put_num(b, p.znear) || put(b, ",\"far\":") ||
	       put_num(b, p.zfar) || JSON_BUF_LIT(b, "}") ||
	       key(b, "visible", false) || put(b, p.visible ? "true" : "false") ||
	       (scene_dims(s) == 2 && (put_draw(b, &p) || put_shape2d(b, &p))) ||
	       (world && (key(b, "world", false) || put_world(b, s, node))) || put(b, "}");
}

static int node_body(proto_buf *b, const scene *s, int node)
{
	return node_fields(b, s, node, true);
}

int proto_encode_node_record(proto_buf *b, const scene *s, int node)
{
	size_t start = b->len;

	return node_fields(b, s, node, false) ? undo_to(b, start) : 0;
}

int proto_encode_node(proto_buf *b, const scene *s, int node)
{
	size_t start = b->len;

	return node_body(b, s, node) ? undo_to(b, start) : 0;
}

/* ',"dims":2' for a 2D scene; nothing for a 3D one, whose answers stay as
 * they were before scenes had dims. */
static int put_dims(proto_buf *b, const scene *s)
{
	return scene_dims(s) == 2 && put(b, ",\"dims\":2");
}

static int nodes_array(proto_buf *b, const scene *s)
{
	int n = scene_count(s);

	if (JSON_BUF_LIT(b, "["))
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++)
		if ((pos && JSON_BUF_LIT(b, ",")) || node_body(b, s, scene_at(s, pos)))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "]");
}

int proto_encode_order(proto_buf *b, const scene *s)
{
	size_t start = b->len;
	int n;

	if (scene_draw_order(s, &n) || put(b, "\"order\":["))
		return undo_to(b, start);
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || proto_buf_json_string(b, scene_draw_id(s, i)))
			return undo_to(b, start);
	return JSON_BUF_LIT(b, "]") ? undo_to(b, start) : 0;
}

/* ',"order":[...]' for a 2D scene; nothing for a 3D one. */
static int put_order_2d(proto_buf *b, const scene *s)
{
	return scene_dims(s) == 2 && (JSON_BUF_LIT(b, ",") || proto_encode_order(b, s));
}

int proto_encode_tree(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"scene\":") || proto_buf_json_string(b, scene_name) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || put_dims(b, s) || key(b, "nodes", false) ||
	    nodes_array(b, s) || put_order_2d(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_snapshot(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"snapshot\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || put_dims(b, s) ||
	    key(b, "nodes", false) || nodes_array(b, s) || put_order_2d(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int put_req(proto_buf *b, const proto_req *req)
{
	if (!req || !req->present)
		return 0;
	if (key(b, "req", false))
		return RIGD_E_NOMEM;
	return req->is_string ? proto_buf_json_string(b, req->str) : put_int(b, req->num);
}

int proto_encode_ack(proto_buf *b, const proto_req *req, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"ack\"") || put_req(b, req) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "recomputed", false) || put_int(b, recomputed) ||
	    JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_ack(proto_buf *b, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "recomputed", false) ||
	    put_int(b, recomputed) || JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

/* ',"ik":[{"op","reached","distance"},...]' when there are reports. */
static int put_ik(proto_buf *b, const edit_ik_report *ik, int n_ik)
{
	if (n_ik <= 0)
		return 0;
	if (key(b, "ik", false) || put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n_ik; i++)
		if ((i && put(b, ",")) || put(b, "{\"op\":") || put_int(b, ik[i].op) ||
		    put(b, ik[i].reached ? ",\"reached\":true" : ",\"reached\":false") ||
		    key(b, "distance", false) || put_num(b, ik[i].distance) || put(b, "}"))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_ack_ik(proto_buf *b, const proto_req *req, uint64_t seq, long recomputed,
			const edit_ik_report *ik, int n_ik)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"ack\"") || put_req(b, req) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "recomputed", false) || put_int(b, recomputed) ||
	    put_ik(b, ik, n_ik) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_ack_ik(proto_buf *b, uint64_t seq, long recomputed,
			     const edit_ik_report *ik, int n_ik)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "recomputed", false) ||
	    put_int(b, recomputed) || put_ik(b, ik, n_ik) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

/* "code","message","op","field" members of an error. */
static int error_members(proto_buf *b, const edit_error *e)
{
	const char *message = e->message[0] ? e->message : err_str(e->code);

	return key(b, "code", true) || proto_buf_json_string(b, err_code(e->code)) ||
	       key(b, "message", false) || proto_buf_json_string(b, message) ||
	       (e->op >= 0 && (key(b, "op", false) || put_int(b, e->op))) ||
	       (e->field[0] && (key(b, "field", false) || proto_buf_json_string(b, e->field)));
}

int proto_encode_error(proto_buf *b, const proto_req *req, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"error\"") || put_req(b, req) || JSON_BUF_LIT(b, ",") ||
	    error_members(b, e) || JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_error(proto_buf *b, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"error\":{") || error_members(b, e) || JSON_BUF_LIT(b, "}}"))
		return undo_to(b, start);
	return 0;
}

static int id_array(proto_buf *b, const edit_id *ids, int n)
{
	if (JSON_BUF_LIT(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || proto_buf_json_string(b, ids[i].s))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "]");
}

int proto_encode_update(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
			const int *world_nodes, int n_world, const int *changed_nodes,
			int n_changed, const edit_id *removed, int n_removed)
{
	return proto_encode_update_order(b, scene_name, seq, s, world_nodes, n_world, changed_nodes,
					 n_changed, removed, n_removed, false);
}

int proto_encode_update_order(proto_buf *b, const char *scene_name, uint64_t seq,
			      const scene *s, const int *world_nodes, int n_world,
			      const int *changed_nodes, int n_changed, const edit_id *removed,
			      int n_removed, bool with_order)
{
	size_t start = b->len;

	assert(n_world >= 0 && n_changed >= 0 && n_removed >= 0);
	if (put(b, "{\"type\":\"update\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "world", false) ||
	    JSON_BUF_LIT(b, "{"))
		return undo_to(b, start);
	for (int i = 0; i < n_world; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || proto_buf_json_string(b, scene_id(s, world_nodes[i])) ||
		    JSON_BUF_LIT(b, ":") || put_world(b, s, world_nodes[i]))
			return undo_to(b, start);
	if (JSON_BUF_LIT(b, "}") || key(b, "nodes", false) || JSON_BUF_LIT(b, "["))
		return undo_to(b, start);
	for (int i = 0; i < n_changed; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || node_body(b, s, changed_nodes[i]))
			return undo_to(b, start);
	if (JSON_BUF_LIT(b, "]") || key(b, "removed", false) || id_array(b, removed, n_removed) ||
	    (with_order && (JSON_BUF_LIT(b, ",") || proto_encode_order(b, s))) ||
	    JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_presence(proto_buf *b, const char *scene_name, const char *client,
			  const char *name, const edit_id *selection, int n_selection)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"presence\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || key(b, "selection", false) ||
	    id_array(b, selection, n_selection) || JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_join(proto_buf *b, const char *scene_name, const char *client, const char *name)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"join\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_leave(proto_buf *b, const char *scene_name, const char *client)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"leave\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int op_body(proto_buf *b, const edit_op *op)
{
	unsigned f = op->fields;

	if (op->kind >= EDIT_POSE_SAVE)
		return proto_encode_pose_op(b, op);
	if (put(b, "{\"op\":") || proto_buf_json_string(b, edit_op_name(op->kind)))
		return RIGD_E_NOMEM;
	if (op->kind == EDIT_IK
		    ? (key(b, "chain", false) || put(b, "[") || proto_buf_json_string(b, op->id) ||
		       put(b, ",") || proto_buf_json_string(b, op->chain_mid) || put(b, ",") ||
		       proto_buf_json_string(b, op->chain_end) || put(b, "]"))
		    : (key(b, "id", false) || proto_buf_json_string(b, op->id)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_PARENT) &&
	    (key(b, "parent", false) || put_str_or_null(b, op->parent[0] ? op->parent : NULL)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_INDEX) && op->index >= 0 && (key(b, "index", false) || put_int(b, op->index)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_NAME) && (key(b, "name", false) || put_str_or_null(b, op->name)))
		return RIGD_E_NOMEM;
	if (((f & EDIT_F_T) && (key(b, "t", false) || put_vec3(b, op->t))) ||
	    ((f & EDIT_F_R) && (key(b, "r", false) || put_quat(b, op->r))) ||
	    ((f & EDIT_F_S) && (key(b, "s", false) || put_vec3(b, op->s))) ||
	    ((f & EDIT_F_PIVOT) && (key(b, "pivot", false) || put_vec3(b, op->pivot))) ||
	    ((f & EDIT_F_EULER) && (key(b, "euler", false) || put_vec3(b, op->euler_deg))))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_BOUNDS) &&
	    (key(b, "bounds", false) || put_bounds(b, op->has_bounds, op->bounds)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_MESH) && (key(b, "mesh", false) || put_str_or_null(b, op->mesh)))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KIND) &&
	    (key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(op->node_kind))))
		return RIGD_E_NOMEM;
	if (f & (EDIT_F_FOV | EDIT_F_NEAR | EDIT_F_FAR)) {
		bool first = true;

		if (key(b, "camera", false) || JSON_BUF_LIT(b, "{"))
			return RIGD_E_NOMEM;
		if ((f & EDIT_F_FOV) && (key(b, "fov", first) || put_num(b, op->fov_deg)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_FOV);
		if ((f & EDIT_F_NEAR) && (key(b, "near", first) || put_num(b, op->znear)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_NEAR);
		if ((f & EDIT_F_FAR) && (key(b, "far", first) || put_num(b, op->zfar)))
			return RIGD_E_NOMEM;
		if (JSON_BUF_LIT(b, "}"))
			return RIGD_E_NOMEM;
	}
	if ((f & EDIT_F_VISIBLE) &&
	    (key(b, "visible", false) || put(b, op->visible ? "true" : "false")))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KEEP_WORLD) &&
	    (key(b, "keep_world", false) || put(b, op->keep_world ? "true" : "false")))
		return RIGD_E_NOMEM;
	if (((f & EDIT_F_LAYER) && (key(b, "layer", false) || put_str_or_null(b, op->layer))) ||
	    ((f & EDIT_F_Z) && (key(b, "z", false) || put_z(b, op->z_right, op->z_left))) ||
	    ((f & EDIT_F_FACING) && (key(b, "facing", false) || put_facing(b, op->facing))) ||
	    ((f & EDIT_F_SHEAR) && (key(b, "shear", false) || put_numbers(b, op->shear_deg, 2))) ||
	    ((f & EDIT_F_INHERIT) && (key(b, "inherit", false) || put_inherit(b, op->inherit))))
		return RIGD_E_NOMEM;
	if (((f & EDIT_F_ANGLE) && (key(b, "angle", false) || put_num(b, op->angle_deg))) ||
	    ((f & EDIT_F_AXIS) && (key(b, "axis", false) || put_vec3(b, op->axis))) ||
	    ((f & EDIT_F_BY) && (key(b, "by", false) || put_vec3(b, op->by))) ||
	    ((f & EDIT_F_TARGET) && (key(b, "target", false) || put_vec3(b, op->target))) ||
	    ((f & EDIT_F_POLE) && (key(b, "pole", false) || put_vec3(b, op->pole))))
		return RIGD_E_NOMEM;
	return put(b, "}");
}

int proto_encode_op(proto_buf *b, const edit_op *op)
{
	size_t start = b->len;

	return op_body(b, op) ? undo_to(b, start) : 0;
}

static int ops_array(proto_buf *b, const edit_batch *batch)
{
	if (JSON_BUF_LIT(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < batch->n_ops; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || op_body(b, &batch->ops[i]))
			return RIGD_E_NOMEM;
	return JSON_BUF_LIT(b, "]");
}

int proto_encode_ops(proto_buf *b, const edit_batch *batch)
{
	size_t start = b->len;

	return ops_array(b, batch) ? undo_to(b, start) : 0;
}

int proto_encode_batch(proto_buf *b, const edit_batch *batch)
{
	size_t start = b->len;

	if (put(b, "{\"ops\":") || ops_array(b, batch) ||
	    (batch->client[0] &&
	     (key(b, "client", false) || proto_buf_json_string(b, batch->client))) ||
	    (batch->has_client_seq &&
	     (key(b, "client_seq", false) || put_int(b, batch->client_seq))) ||
	    JSON_BUF_LIT(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_log_line(proto_buf *b, uint64_t seq, int64_t time_us, const edit_batch *batch)
{
	return proto_encode_log_line_kind(b, seq, time_us, batch, PROTO_LOG_EDIT, 0, NULL, 0);
}

/* The line without its assets: proto_encode_log_line_kind's first part. */
int proto_encode_log_line_head(proto_buf *b, uint64_t seq, int64_t time_us,
			       const edit_batch *batch, int kind, int64_t target)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "time", false) ||
	    put_int(b, time_us) || key(b, "client", false) ||
	    put_str_or_null(b, batch->client[0] ? batch->client : NULL) ||
	    key(b, "client_seq", false) ||
	    (batch->has_client_seq ? put_int(b, batch->client_seq) : JSON_BUF_LIT(b, "null")) ||
	    (kind != PROTO_LOG_EDIT &&
	     (key(b, kind == PROTO_LOG_UNDO ? "undo" : "redo", false) || put_int(b, target))) ||
	    key(b, "ops", false) || ops_array(b, batch) || JSON_BUF_LIT(b, "}\n"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_scene_list(proto_buf *b, const proto_scene_info *scenes, int n)
{
	return proto_encode_scene_list_dims(b, scenes, NULL, n);
}

int proto_encode_scene_list_dims(proto_buf *b, const proto_scene_info *scenes, const int *dims,
				 int n)
{
	size_t start = b->len;

	assert(n >= 0);
	if (put(b, "{\"scenes\":["))
		return undo_to(b, start);
	for (int i = 0; i < n; i++)
		if ((i && JSON_BUF_LIT(b, ",")) || put(b, "{\"name\":") ||
		    proto_buf_json_string(b, scenes[i].name) || key(b, "seq", false) ||
		    put_int(b, (int64_t)scenes[i].seq) || key(b, "nodes", false) ||
		    put_int(b, scenes[i].nodes) ||
		    (dims && dims[i] == 2 && put(b, ",\"dims\":2")) || put(b, "}"))
			return undo_to(b, start);
	if (JSON_BUF_LIT(b, "]}"))
		return undo_to(b, start);
	return 0;
}

/* ---------- the debug record of a node ---------- */

/* True when some node from 'node' up to its root has a scale other than
 * (1, 1, 1). */
static bool scale_in_chain(const scene *s, int node)
{
	node_props p;

	for (; node >= 0; node = scene_parent(s, node)) {
		scene_props(s, node, &p);
		if (p.s.x != 1 || p.s.y != 1 || p.s.z != 1)
			return true;
	}
	return false;
}

/* The screen angle of a world matrix's x axis (2D: y down, counter-
 * clockwise positive), in (-180, 180]. */
static double world_angle2d_deg(mat4 w)
{
	double a = -atan2(w.m[1], w.m[0]) * (180.0 / M_PI);

	return (a <= -180 ? 180 : a) + 0.0;
}

int proto_encode_debug(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
		       int node)
{
	size_t start = b->len;
	node_props p, pp;
	int parent = scene_parent(s, node);
	mat4 w = scene_world(s, node);
	vec3 joint, t, sc;
	quat wr;
	double det = mat4_det3(w), length = 0;
	bool scaled = scale_in_chain(s, node);
	bool flag = fabs(det - 1) > 1e-6 && !scaled;

	scene_props(s, node, &p);
	joint = mat4_point(w, p.pivot);
	if (parent >= 0) {
		scene_props(s, parent, &pp);
		length = vec3_length(vec3_sub(joint, mat4_point(scene_world(s, parent), pp.pivot)));
	}
	mat4_decompose(w, 0, &t, &wr, &sc, NULL);
	if (put(b, "{\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "id", false) ||
	    proto_buf_json_string(b, scene_id(s, node)) || key(b, "parent", false) ||
	    put_str_or_null(b, parent >= 0 ? scene_id(s, parent) : NULL) ||
	    key(b, "dims", false) || put_int(b, scene_dims(s)))
		return undo_to(b, start);
	if (scene_dims(s) == 2 &&
	    (key(b, "local_angle", false) || put_num(b, quat_to_angle2d_deg(p.r)) ||
	     key(b, "world_angle", false) || put_num(b, world_angle2d_deg(w))))
		return undo_to(b, start);
	if (key(b, "local_r", false) || put_quat(b, p.r) || key(b, "world_r", false) ||
	    put_quat(b, wr) || key(b, "pivot_world", false) || put_vec3(b, joint) ||
	    key(b, "length", false) || (parent >= 0 ? put_num(b, length) : put(b, "null")) ||
	    key(b, "det", false) ||
	    put_num(b, det) || key(b, "scale_in_chain", false) || put(b, scaled ? "true" : "false") ||
	    key(b, "flag", false) ||
	    (flag ? proto_buf_json_string(b, "scale or shear entered the chain") : put(b, "null")) ||
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}
