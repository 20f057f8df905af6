/*
 * engine_opimage.c: the binary image of a batch's ops, which every log row
 * stores beside their JSON and which replay reads (see engine.h).
 *
 * Decoding reads bytes from the database and must treat them as untrusted:
 * every length is checked against the bytes left before it is read, and
 * nothing is recursive.
 */
#include "engine_internal.h"

#include "core/err.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The binary image of a batch's ops (the log's ops_bin column).
 *
 * Replay reads it instead of the JSON, which cJSON parses more slowly than
 * the ops apply. Format 1, integers and doubles little-endian:
 *   u8 format, u32 n_ops, then per op:
 *   u8 kind, u16 fields (EDIT_F_ bits), u8 id_len, id,
 *   then, in EDIT_F_ bit order, only the fields whose bit is set:
 *   parent     u8 len, bytes ("" = root)
 *   index      i32
 *   name       u16 len (0xffff = NULL), bytes
 *   t r s pivot euler   f64 x3, x4 (x y z w), x3, x3, x3
 *   bounds     u8 has_bounds (0 or 1), [f64 min[3] max[3]]
 *   mesh       as name
 *   kind       i32 node_kind
 *   fov near far        f64 each
 *   visible keep_world  u8 (0 or 1) each
 * Format 2 is format 1 with a u32 fields (the EDIT_F_ bits above plus
 * EDIT_F_DRAW) and, after keep_world:
 *   layer      as name
 *   z          f64 z_right, f64 z_left
 *   facing     u8 (enum node_facing)
 * It is written only for a batch that has an op with a draw field, so
 * that every other image is byte for byte what format 1 made.
 * Format 3 is format 2 whose fields may also hold EDIT_F_SHEAR and
 * EDIT_F_INHERIT (a 2D node's shear and inherit mode), after facing:
 *   shear      f64 shx, f64 shy (degrees)
 *   inherit    u8 (enum node_inherit)
 * written only for a batch that has an op with one of them, so that every
 * other image is what format 1 or 2 made, byte for byte.
 * The pose ops a log stores (pose_delete and pose_set; pose_save and blend
 * are resolved before) carry fields 0 in the image: pose_delete is its
 * kind and id (the pose's name) alone; pose_set is followed by u32
 * n_channels and per channel u8 id_len, id, f64 t[3] r[4] s[3].
 * Format 4 is format 3 whose pose_set channels each add f64 shear[2]
 * (degrees, a 2D node's) after s, written only for a batch with a
 * pose_set of which a channel has a shear other than +0 +0.
 * Doubles are copied bit for bit, so an image decodes to exactly the batch
 * it was made from. Nothing is recursive; every length is checked against
 * the bytes left before it is read. */

#define OPS_BIN_HEADER 5        /* format byte and op count */
/* The field bits an image holds: those of the absolute ops a log stores
 * (create, set, reparent, delete), below EDIT_F_COUNT_. Relative ops and
 * angles (EDIT_F_ANGLE and up) are resolved into absolute ones before they
 * are logged (edit_apply_resolve), so format 1 never needs more. */
#define OPS_BIN_FIELD_BITS EDIT_F_COUNT_
/* The field bits format 2 holds, and format 3. */
#define OPS_BIN_FIELDS_DRAW (((1u << EDIT_F_COUNT_) - 1) | EDIT_F_DRAW)
#define OPS_BIN_FIELDS_SHAPE2D (OPS_BIN_FIELDS_DRAW | EDIT_F_SHEAR | EDIT_F_INHERIT)
#define OPS_BIN_MIN_OP 4        /* kind, fields, id length */
#define OPS_BIN_NULL_STR 0xffffu

/* A kind an image may hold: the absolute ops. */
static bool bin_kind(int kind)
{
	return (kind >= EDIT_CREATE && kind <= EDIT_DELETE) || kind == EDIT_POSE_SET ||
	       kind == EDIT_POSE_DELETE;
}

/* Bytes of one op's image in format 1, or 2 and up when 'wide' (u32
 * fields; 'sheared': format 4), or 0 when a string is too long for it. */
static size_t op_bin_size(const edit_op *op, bool wide, bool sheared)
{
	unsigned f = op->fields;
	size_t n = OPS_BIN_MIN_OP + (wide ? 2 : 0) + strlen(op->id);
	size_t name_len = op->name ? strlen(op->name) : 0;
	size_t mesh_len = op->mesh ? strlen(op->mesh) : 0;
	size_t layer_len = op->layer ? strlen(op->layer) : 0;
	if (name_len >= OPS_BIN_NULL_STR || mesh_len >= OPS_BIN_NULL_STR ||
	    layer_len >= OPS_BIN_NULL_STR)
		return 0;
	if (op->kind == EDIT_POSE_SET) {
		n += 4;
		for (int i = 0; i < op->n_channels; i++)
			n += ENG_CHANNEL_MIN + strlen(op->channels[i].id) +
			     (sheared ? ENG_CHANNEL_SHEAR : 0);
		return n;
	}
	if (op->kind == EDIT_POSE_DELETE)
		return n;
	if (f & EDIT_F_PARENT)
		n += 1 + strlen(op->parent);
	if (f & EDIT_F_INDEX)
		n += 4;
	if (f & EDIT_F_NAME)
		n += 2 + name_len;
	n += 8 * (3 * !!(f & EDIT_F_T) + 4 * !!(f & EDIT_F_R) + 3 * !!(f & EDIT_F_S) +
		  3 * !!(f & EDIT_F_PIVOT) + 3 * !!(f & EDIT_F_EULER));
	if (f & EDIT_F_BOUNDS)
		n += 1 + (op->has_bounds ? 6 * 8 : 0);
	if (f & EDIT_F_MESH)
		n += 2 + mesh_len;
	if (f & EDIT_F_KIND)
		n += 4;
	n += 8 * (!!(f & EDIT_F_FOV) + !!(f & EDIT_F_NEAR) + !!(f & EDIT_F_FAR));
	n += !!(f & EDIT_F_VISIBLE) + !!(f & EDIT_F_KEEP_WORLD);
	if (f & EDIT_F_LAYER)
		n += 2 + layer_len;
	n += 16 * !!(f & EDIT_F_Z) + !!(f & EDIT_F_FACING);
	n += 16 * !!(f & EDIT_F_SHEAR) + !!(f & EDIT_F_INHERIT);
	return n;
}

static void put_bin_str(bytes *b, const char *str)
{
	size_t len = str ? strlen(str) : 0;
	bytes_put_u16(b, str ? (unsigned)len : OPS_BIN_NULL_STR);
	if (str)
		bytes_put_raw(b, str, len);
}

/* Appends the image of op 'op' to 'b', which has room for it, in format
 * 1, or 2 and up when 'wide' ('sheared': format 4). */
static void op_bin_put(bytes *b, const edit_op *op, bool wide, bool sheared)
{
	unsigned f = op->kind >= EDIT_POSE_SAVE ? 0 : op->fields;
	size_t id_len = strlen(op->id);
	bytes_put_u8(b, (unsigned)op->kind);
	if (wide)
		bytes_put_u32(b, f);
	else
		bytes_put_u16(b, f);
	bytes_put_u8(b, (unsigned)id_len);
	bytes_put_raw(b, op->id, id_len);
	if (op->kind == EDIT_POSE_SET) {
		bytes_put_u32(b, (uint32_t)op->n_channels);
		for (int i = 0; i < op->n_channels; i++) {
			bytes_put_channel(b, &op->channels[i]);
			if (sheared)
				bytes_put_channel_shear(b, &op->channels[i]);
		}
	}
	if (f & EDIT_F_PARENT) {
		size_t len = strlen(op->parent);
		bytes_put_u8(b, (unsigned)len);
		bytes_put_raw(b, op->parent, len);
	}
	if (f & EDIT_F_INDEX)
		bytes_put_u32(b, (uint32_t)op->index);
	if (f & EDIT_F_NAME)
		put_bin_str(b, op->name);
	if (f & EDIT_F_T)
		bytes_put_vec3(b, op->t);
	if (f & EDIT_F_R)
		bytes_put_quat(b, op->r);
	if (f & EDIT_F_S)
		bytes_put_vec3(b, op->s);
	if (f & EDIT_F_PIVOT)
		bytes_put_vec3(b, op->pivot);
	if (f & EDIT_F_EULER)
		bytes_put_vec3(b, op->euler_deg);
	if (f & EDIT_F_BOUNDS) {
		bytes_put_u8(b, op->has_bounds);
		if (op->has_bounds) {
			bytes_put_vec3(b, op->bounds.min);
			bytes_put_vec3(b, op->bounds.max);
		}
	}
	if (f & EDIT_F_MESH)
		put_bin_str(b, op->mesh);
	if (f & EDIT_F_KIND)
		bytes_put_u32(b, (uint32_t)op->node_kind);
	if (f & EDIT_F_FOV)
		bytes_put_f64(b, op->fov_deg);
	if (f & EDIT_F_NEAR)
		bytes_put_f64(b, op->znear);
	if (f & EDIT_F_FAR)
		bytes_put_f64(b, op->zfar);
	if (f & EDIT_F_VISIBLE)
		bytes_put_u8(b, op->visible);
	if (f & EDIT_F_KEEP_WORLD)
		bytes_put_u8(b, op->keep_world);
	if (f & EDIT_F_LAYER)
		put_bin_str(b, op->layer);
	if (f & EDIT_F_Z) {
		bytes_put_f64(b, op->z_right);
		bytes_put_f64(b, op->z_left);
	}
	if (f & EDIT_F_FACING)
		bytes_put_u8(b, (unsigned)op->facing);
	if (f & EDIT_F_SHEAR) {
		bytes_put_f64(b, op->shear_deg[0]);
		bytes_put_f64(b, op->shear_deg[1]);
	}
	if (f & EDIT_F_INHERIT)
		bytes_put_u8(b, (unsigned)op->inherit);
}

int engine_ops_encode_bin(const edit_batch *b, unsigned char **out, size_t *len)
{
	size_t total = OPS_BIN_HEADER;
	bool wide = false, shape2d = false, sheared = false;
	if (b->n_ops < 0 || (uint64_t)b->n_ops > UINT32_MAX)
		return RIGD_E_TOO_LARGE;
	for (int i = 0; i < b->n_ops; i++) {
		bool absolute = b->ops[i].kind <= EDIT_DELETE;

		for (int k = 0; b->ops[i].kind == EDIT_POSE_SET && k < b->ops[i].n_channels; k++)
			sheared = sheared || pose_channel_sheared(&b->ops[i].channels[k]);
		shape2d = shape2d || sheared ||
			  (absolute && (b->ops[i].fields & (EDIT_F_SHEAR | EDIT_F_INHERIT)));
		wide = wide || shape2d || (absolute && (b->ops[i].fields & EDIT_F_DRAW));
	}
	for (int i = 0; i < b->n_ops; i++) {
		size_t n = op_bin_size(&b->ops[i], wide, sheared);
		if (n == 0 || !bin_kind(b->ops[i].kind) ||
		    (b->ops[i].kind <= EDIT_DELETE &&
		     (b->ops[i].fields & ~(unsigned)OPS_BIN_FIELDS_SHAPE2D) != 0) ||
		    ((b->ops[i].fields & EDIT_F_FACING) && (unsigned)b->ops[i].facing > 255u) ||
		    ((b->ops[i].fields & EDIT_F_INHERIT) && (unsigned)b->ops[i].inherit > 255u))
			return RIGD_E_TOO_LARGE;
		total += n;
	}
	bytes buf = { 0 };
	buf.p = malloc(total);
	if (!buf.p)
		return RIGD_E_NOMEM;
	buf.cap = total;
	bytes_put_u8(&buf, sheared   ? ENGINE_OPS_BIN_FORMAT_POSE_SHEAR
			   : shape2d ? ENGINE_OPS_BIN_FORMAT_SHAPE2D
			   : wide    ? ENGINE_OPS_BIN_FORMAT_DRAW
				     : ENGINE_OPS_BIN_FORMAT);
	bytes_put_u32(&buf, (uint32_t)b->n_ops);
	for (int i = 0; i < b->n_ops; i++)
		op_bin_put(&buf, &b->ops[i], wide, sheared);
	assert(buf.len == total);
	*out = buf.p;
	*len = buf.len;
	return 0;
}

/* A string of 'n' bytes from the image as a malloc'd C string; NULL with
 * r->bad for bytes missing or holding a NUL, NULL with *nomem when out of
 * memory. */
static char *get_bin_str(reader *r, size_t n, bool *nomem)
{
	const unsigned char *p = reader_take(r, n);
	if (!p)
		return NULL;
	if (memchr(p, 0, n)) {
		r->bad = true;
		return NULL;
	}
	char *s = malloc(n + 1);
	if (!s) {
		*nomem = true;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

/* Reads an optional string field (u16 length, OPS_BIN_NULL_STR = NULL). */
static char *get_bin_opt_str(reader *r, bool *nomem)
{
	unsigned len = reader_get_u16(r);
	if (r->bad || len == OPS_BIN_NULL_STR)
		return NULL;
	return get_bin_str(r, len, nomem);
}

/* Reads an id-sized string (u8 length) into 'dst' (SCENE_ID_MAX + 1). */
static void get_bin_id(reader *r, char *dst)
{
	unsigned len = reader_get_u8(r);
	const unsigned char *p = reader_take(r, len);
	if (!p || len > SCENE_ID_MAX || memchr(p, 0, len)) {
		r->bad = true;
		dst[0] = 0;
		return;
	}
	memcpy(dst, p, len);
	dst[len] = 0;
}

static bool get_bin_bool(reader *r)
{
	unsigned v = reader_get_u8(r);
	if (v > 1)
		r->bad = true;
	return v == 1;
}

/* A pose_set's channels into 'op' (EDIT_F_CHANNELS), each with its shear
 * when 'sheared' (format 4); true when out of memory, r->bad for bytes that
 * are not channels. */
static bool get_bin_channels(reader *r, edit_op *op, bool sheared)
{
	uint32_t n = reader_get_u32(r);
	op->fields = EDIT_F_CHANNELS;
	if (r->bad || n > (r->len - r->off) / ENG_CHANNEL_MIN) {
		r->bad = true;
		return false;
	}
	if (n && !(op->channels = calloc(n, sizeof(pose_channel))))
		return true;
	for (uint32_t i = 0; i < n && !r->bad; i++) {
		pose_channel *c = &op->channels[i];
		get_bin_id(r, c->id);
		reader_get_channel_trs(r, c);
		if (sheared)
			reader_get_channel_shear(r, c);
		op->n_channels = (int)i + 1;
	}
	return false;
}

/* The fields 'f' of one create, set, reparent or delete op, in EDIT_F_
 * bit order, into 'op'; *nomem when a string cannot be copied, r->bad for
 * bytes that are not those fields. */
static void get_bin_fields(reader *r, edit_op *op, unsigned f, bool *nomem)
{
	if (f & EDIT_F_PARENT)
		get_bin_id(r, op->parent);
	if (f & EDIT_F_INDEX)
		op->index = (int)(int32_t)reader_get_u32(r);
	if (f & EDIT_F_NAME)
		op->name = get_bin_opt_str(r, nomem);
	if (f & EDIT_F_T)
		op->t = reader_get_vec3(r);
	if (f & EDIT_F_R)
		op->r = reader_get_quat(r);
	if (f & EDIT_F_S)
		op->s = reader_get_vec3(r);
	if (f & EDIT_F_PIVOT)
		op->pivot = reader_get_vec3(r);
	if (f & EDIT_F_EULER)
		op->euler_deg = reader_get_vec3(r);
	if (f & EDIT_F_BOUNDS) {
		op->has_bounds = get_bin_bool(r);
		if (op->has_bounds) {
			op->bounds.min = reader_get_vec3(r);
			op->bounds.max = reader_get_vec3(r);
		}
	}
	if (f & EDIT_F_MESH)
		op->mesh = get_bin_opt_str(r, nomem);
	if (f & EDIT_F_KIND)
		op->node_kind = (int)(int32_t)reader_get_u32(r);
	if (f & EDIT_F_FOV)
		op->fov_deg = reader_get_f64(r);
	if (f & EDIT_F_NEAR)
		op->znear = reader_get_f64(r);
	if (f & EDIT_F_FAR)
		op->zfar = reader_get_f64(r);
	if (f & EDIT_F_VISIBLE)
		op->visible = get_bin_bool(r);
	if (f & EDIT_F_KEEP_WORLD)
		op->keep_world = get_bin_bool(r);
	if (f & EDIT_F_LAYER)
		op->layer = get_bin_opt_str(r, nomem);
	if (f & EDIT_F_Z) {
		op->z_right = reader_get_f64(r);
		op->z_left = reader_get_f64(r);
	}
	if (f & EDIT_F_FACING)
		op->facing = (int)reader_get_u8(r);
	if (f & EDIT_F_SHEAR) {
		op->shear_deg[0] = reader_get_f64(r);
		op->shear_deg[1] = reader_get_f64(r);
	}
	if (f & EDIT_F_INHERIT)
		op->inherit = (int)reader_get_u8(r);
}

/* Empties 'b' of its ops but keeps their array, for the next image. */
static void batch_clear_ops(edit_batch *b)
{
	for (int i = 0; i < b->n_ops; i++) {
		free(b->ops[i].name);
		free(b->ops[i].mesh);
		free(b->ops[i].layer);
		free(b->ops[i].channels);
	}
	b->n_ops = 0;
}

/* Decodes an image into 'b' (its ops replaced; client untouched), reusing
 * its ops array. RIGD_E_IO for bytes that are not an image, RIGD_E_NOMEM;
 * on error 'b' holds some ops, each complete or without strings. */
int eng_ops_bin_read(const void *data, size_t len, edit_batch *b)
{
	reader r = { data, len, 0, false };
	batch_clear_ops(b);
	unsigned format = reader_get_u8(&r);
	uint32_t n = reader_get_u32(&r);
	bool sheared = format == ENGINE_OPS_BIN_FORMAT_POSE_SHEAR;
	bool shape2d = sheared || format == ENGINE_OPS_BIN_FORMAT_SHAPE2D;
	bool wide = shape2d || format == ENGINE_OPS_BIN_FORMAT_DRAW;
	unsigned allowed = shape2d ? OPS_BIN_FIELDS_SHAPE2D
			   : wide  ? OPS_BIN_FIELDS_DRAW
				   : (1u << OPS_BIN_FIELD_BITS) - 1;
	if (r.bad || (format != ENGINE_OPS_BIN_FORMAT && !wide))
		return RIGD_E_IO;
	/* A count the bytes cannot hold is corrupt and must not size an
	 * allocation. */
	if (n > (len - r.off) / OPS_BIN_MIN_OP || n > INT_MAX)
		return RIGD_E_IO;
	if (edit_batch_reserve(b, (int)n))
		return RIGD_E_NOMEM;
	bool nomem = false;
	for (uint32_t i = 0; i < n && !r.bad && !nomem; i++) {
		edit_op *op = &b->ops[b->n_ops++];
		memset(op, 0, sizeof(*op));
		op->index = -1;
		op->kind = (int)reader_get_u8(&r);
		unsigned f = wide ? reader_get_u32(&r) : reader_get_u16(&r);
		op->fields = f;
		get_bin_id(&r, op->id);
		if (r.bad || !bin_kind(op->kind) || (f & ~allowed) != 0 ||
		    (op->kind > EDIT_DELETE && f != 0)) {
			r.bad = true;
			break;
		}
		if (op->kind == EDIT_POSE_SET) {
			nomem = get_bin_channels(&r, op, sheared);
			continue;
		}
		get_bin_fields(&r, op, f, &nomem);
	}
	if (nomem)
		return RIGD_E_NOMEM;
	if (r.bad || r.off != len)
		return RIGD_E_IO;
	return 0;
}

int engine_ops_decode_bin(const void *data, size_t len, edit_batch *out)
{
	edit_batch_init(out);
	int err = eng_ops_bin_read(data, len, out);
	if (err)
		edit_batch_release(out);
	return err;
}

