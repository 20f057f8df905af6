/*
 * proto_encode.c: the protocol's JSON out (see proto.h): nodes, trees,
 * snapshots, updates, acks, errors, presence, ops, batches, log lines and
 * scene lists, appended to a proto_buf with json.h's writers. cJSON's own
 * printer is not used: it does not print the shortest round-trip form of a
 * double, and the log must replay bit for bit.
 *
 * An encoder that fails (out of memory) cuts the buffer back to where it
 * started, so the caller's buffer is never left with half a message. It
 * reads the scene it is given and never changes it; it knows nothing of SQL
 * or sockets.
 */
#include "proto.h"

#include "core/err.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

/* ---------- the byte buffer: proto's names for json.h ---------- */

void proto_buf_init(proto_buf *b, size_t head)
{
	json_buf_init(b, head);
}

void proto_buf_release(proto_buf *b)
{
	json_buf_release(b);
}

void proto_buf_reset(proto_buf *b)
{
	json_buf_reset(b);
}

const char *proto_buf_str(const proto_buf *b)
{
	return json_buf_str(b);
}

char *proto_buf_take(proto_buf *b)
{
	return json_buf_take(b);
}

int proto_buf_append(proto_buf *b, const char *bytes, size_t n)
{
	return json_buf_append(b, bytes, n);
}

int proto_buf_json_string(proto_buf *b, const char *str)
{
	return json_buf_string(b, str, JSON_STR_SHORT_ESCAPES);
}

int proto_buf_json_number(proto_buf *b, double v)
{
	return json_buf_number(b, v);
}

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
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || put_num(b, v[i]))
			return RIGD_E_NOMEM;
	return put(b, "]");
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
	return str ? proto_buf_json_string(b, str) : put(b, "null");
}

/* ',"key":' (no comma when first). */
static int key(proto_buf *b, const char *k, bool first)
{
	return (!first && put(b, ",")) || put(b, "\"") || put(b, k) || put(b, "\":");
}

static int put_bounds(proto_buf *b, bool has, aabb box)
{
	if (!has)
		return put(b, "null");
	return put(b, "{\"min\":") || put_vec3(b, box.min) || put(b, ",\"max\":") ||
	       put_vec3(b, box.max) || put(b, "}");
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
	       key(b, "s", false) || put_vec3(b, p.s) ||
	       key(b, "pivot", false) || put_vec3(b, p.pivot) ||
	       key(b, "euler", false) || put_vec3(b, euler) ||
	       key(b, "bounds", false) || put_bounds(b, p.has_bounds, p.bounds) ||
	       key(b, "mesh", false) || put_str_or_null(b, p.mesh) ||
	       key(b, "kind", false) || proto_buf_json_string(b, edit_kind_name(p.kind)) ||
	       key(b, "camera", false) || put(b, "{\"fov\":") || put_num(b, p.fov_deg) ||
	       put(b, ",\"near\":") || put_num(b, p.znear) || put(b, ",\"far\":") ||
	       put_num(b, p.zfar) || put(b, "}") ||
	       key(b, "visible", false) || put(b, p.visible ? "true" : "false") ||
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

static int nodes_array(proto_buf *b, const scene *s)
{
	int n = scene_count(s);

	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int pos = 0; pos < n; pos++)
		if ((pos && put(b, ",")) || node_body(b, s, scene_at(s, pos)))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_tree(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"scene\":") || proto_buf_json_string(b, scene_name) || key(b, "seq", false) ||
	    put_int(b, (int64_t)seq) || key(b, "nodes", false) || nodes_array(b, s) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_snapshot(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"snapshot\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "nodes", false) ||
	    nodes_array(b, s) || put(b, "}"))
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
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_ack(proto_buf *b, uint64_t seq, long recomputed)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "recomputed", false) ||
	    put_int(b, recomputed) || put(b, "}"))
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

	if (put(b, "{\"type\":\"error\"") || put_req(b, req) || put(b, ",") ||
	    error_members(b, e) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_http_error(proto_buf *b, const edit_error *e)
{
	size_t start = b->len;

	if (put(b, "{\"error\":{") || error_members(b, e) || put(b, "}}"))
		return undo_to(b, start);
	return 0;
}

static int id_array(proto_buf *b, const edit_id *ids, int n)
{
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || proto_buf_json_string(b, ids[i].s))
			return RIGD_E_NOMEM;
	return put(b, "]");
}

int proto_encode_update(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
			const int *world_nodes, int n_world, const int *changed_nodes,
			int n_changed, const edit_id *removed, int n_removed)
{
	size_t start = b->len;

	assert(n_world >= 0 && n_changed >= 0 && n_removed >= 0);
	if (put(b, "{\"type\":\"update\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "seq", false) || put_int(b, (int64_t)seq) || key(b, "world", false) ||
	    put(b, "{"))
		return undo_to(b, start);
	for (int i = 0; i < n_world; i++)
		if ((i && put(b, ",")) || proto_buf_json_string(b, scene_id(s, world_nodes[i])) ||
		    put(b, ":") || put_world(b, s, world_nodes[i]))
			return undo_to(b, start);
	if (put(b, "}") || key(b, "nodes", false) || put(b, "["))
		return undo_to(b, start);
	for (int i = 0; i < n_changed; i++)
		if ((i && put(b, ",")) || node_body(b, s, changed_nodes[i]))
			return undo_to(b, start);
	if (put(b, "]") || key(b, "removed", false) || id_array(b, removed, n_removed) ||
	    put(b, "}"))
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
	    id_array(b, selection, n_selection) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_join(proto_buf *b, const char *scene_name, const char *client, const char *name)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"join\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || key(b, "name", false) ||
	    put_str_or_null(b, name) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_leave(proto_buf *b, const char *scene_name, const char *client)
{
	size_t start = b->len;

	if (put(b, "{\"type\":\"leave\",\"scene\":") || proto_buf_json_string(b, scene_name) ||
	    key(b, "client", false) || proto_buf_json_string(b, client) || put(b, "}"))
		return undo_to(b, start);
	return 0;
}

static int op_body(proto_buf *b, const edit_op *op)
{
	unsigned f = op->fields;

	if (put(b, "{\"op\":") || proto_buf_json_string(b, edit_op_name(op->kind)) ||
	    key(b, "id", false) || proto_buf_json_string(b, op->id))
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

		if (key(b, "camera", false) || put(b, "{"))
			return RIGD_E_NOMEM;
		if ((f & EDIT_F_FOV) && (key(b, "fov", first) || put_num(b, op->fov_deg)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_FOV);
		if ((f & EDIT_F_NEAR) && (key(b, "near", first) || put_num(b, op->znear)))
			return RIGD_E_NOMEM;
		first = first && !(f & EDIT_F_NEAR);
		if ((f & EDIT_F_FAR) && (key(b, "far", first) || put_num(b, op->zfar)))
			return RIGD_E_NOMEM;
		if (put(b, "}"))
			return RIGD_E_NOMEM;
	}
	if ((f & EDIT_F_VISIBLE) &&
	    (key(b, "visible", false) || put(b, op->visible ? "true" : "false")))
		return RIGD_E_NOMEM;
	if ((f & EDIT_F_KEEP_WORLD) &&
	    (key(b, "keep_world", false) || put(b, op->keep_world ? "true" : "false")))
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
	if (put(b, "["))
		return RIGD_E_NOMEM;
	for (int i = 0; i < batch->n_ops; i++)
		if ((i && put(b, ",")) || op_body(b, &batch->ops[i]))
			return RIGD_E_NOMEM;
	return put(b, "]");
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
	    put(b, "}"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_log_line(proto_buf *b, uint64_t seq, int64_t time_us, const edit_batch *batch)
{
	size_t start = b->len;

	if (put(b, "{\"seq\":") || put_int(b, (int64_t)seq) || key(b, "time", false) ||
	    put_int(b, time_us) || key(b, "client", false) ||
	    put_str_or_null(b, batch->client[0] ? batch->client : NULL) ||
	    key(b, "client_seq", false) ||
	    (batch->has_client_seq ? put_int(b, batch->client_seq) : put(b, "null")) ||
	    key(b, "ops", false) || ops_array(b, batch) || put(b, "}\n"))
		return undo_to(b, start);
	return 0;
}

int proto_encode_scene_list(proto_buf *b, const proto_scene_info *scenes, int n)
{
	size_t start = b->len;

	assert(n >= 0);
	if (put(b, "{\"scenes\":["))
		return undo_to(b, start);
	for (int i = 0; i < n; i++)
		if ((i && put(b, ",")) || put(b, "{\"name\":") ||
		    proto_buf_json_string(b, scenes[i].name) || key(b, "seq", false) ||
		    put_int(b, (int64_t)scenes[i].seq) || key(b, "nodes", false) ||
		    put_int(b, scenes[i].nodes) || put(b, "}"))
			return undo_to(b, start);
	if (put(b, "]}"))
		return undo_to(b, start);
	return 0;
}
