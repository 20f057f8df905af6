/*
 * engine.c: scenes in memory and their durable log (see engine.h).
 *
 * Wires edit (apply, exact inverses), proto (the JSON of log rows) and store
 * (SQLite rows); includes neither sqlite3.h nor cJSON.h, and never touches a
 * socket. Also home of the two binary encodings, both versioned and
 * little-endian: snapshots, a scene's stored values in preorder
 * (snap_encode), and the image of a logged batch's ops that replay reads
 * instead of their JSON (engine_ops_encode_bin).
 */
#include "engine.h"

#include "core/err.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNAP_FORMAT 1
#define SNAP_MAGIC "RIGS"
/* Rows of a client's history read to rebuild its undo and redo stacks. */
#define HIST_WINDOW(depth) (4 * (depth))

/* ------------------------------------------------------------------------ */
/* Types. */

/* One client's undo and redo stacks in one scene: seqs of batches, newest
 * last. Undoing entry X applies X's inverse; redoing entry X re-applies X's
 * ops. Built from the log on first use, then kept up to date. */
typedef struct hist {
	char client[SCENE_ID_MAX + 1];
	int64_t *undo;
	int n_undo, cap_undo;
	int64_t *redo;
	int n_redo, cap_redo;
	struct hist *next;        /* chain in the scene's table */
} hist;

typedef struct scene_rt {
	char name[SCENE_ID_MAX + 1];
	int64_t id;               /* scenes.id */
	scene *sc;
	int64_t seq;              /* last committed */
	int64_t next_seq;         /* the seq the next batch gets */
	int64_t tail_weight;      /* logged weight since the latest snapshot */
	int64_t pending_weight;   /* queued weight of this turn */
	int n_pending;
	bool broken;              /* memory no longer matches log + queue */
	hist **hist;              /* hash table of clients, hist_cap buckets */
	int hist_cap;
	int n_hist;
} scene_rt;

/* A batch of this turn, applied in memory, its row not yet committed. The
 * scene outlives it: a scene with pending batches cannot be deleted. */
typedef struct pending {
	scene_rt *rt;
	int64_t seq;
	int64_t time_us;
	char client[SCENE_ID_MAX + 1];
	bool has_client_seq;
	int64_t client_seq;
	int kind;                 /* enum store_edit_kind */
	int64_t target;
	int n_ops;
	char *ops;                /* JSON array, owned */
	size_t ops_len;
	char *inverse;            /* JSON array, owned */
	size_t inverse_len;
	unsigned char *ops_bin;   /* binary image of the ops, owned */
	size_t ops_bin_len;
	edit_batch inv;           /* the inverse as structs, for a rollback */
} pending;

struct engine {
	store *st;
	engine_opts opts;
	scene_rt **scenes;        /* sorted by name */
	int n_scenes, cap_scenes;
	pending *q;               /* this turn's batches, in submission order */
	int n_q, cap_q;
	int *qidx;                /* open-addressing index of q by client key */
	int qidx_cap;             /* power of two, 0 when none */
	engine_stats stats;
	char errmsg[512];
};

/* A batch's weight in the snapshot policy: replaying it costs its ops plus
 * one row. */
static int64_t batch_weight(int n_ops)
{
	return (int64_t)n_ops + 1;
}

static void set_errmsg(engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_errmsg(engine *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->errmsg, sizeof(e->errmsg), fmt, ap);
	va_end(ap);
}

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t fnv1a(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
#define FNV_OFFSET 0xcbf29ce484222325ull

/* Limits for JSON the engine wrote itself (log rows): the size and op count
 * were checked when the batch was first accepted, and inverses may hold
 * more ops than any submitted batch. */
static proto_limits trusted_limits(void)
{
	proto_limits l = proto_limits_default();
	l.max_bytes = SIZE_MAX;
	l.edit.max_ops = INT_MAX;
	return l;
}

/* Encodes the ops of 'b' as a malloc'd JSON array. */
static int encode_ops(const edit_batch *b, char **out, size_t *len)
{
	proto_buf buf;
	proto_buf_init(&buf, 0);
	int err = proto_encode_ops(&buf, b);
	if (!err) {
		*len = buf.len;
		*out = proto_buf_take(&buf);
		if (!*out)
			err = RIGD_E_NOMEM;
	}
	proto_buf_release(&buf);
	return err;
}

/* ------------------------------------------------------------------------ */
/* Snapshots: a scene's stored values, byte-exact.
 *
 * Format 1, all integers and doubles little-endian:
 *   "RIGS" u32 format u32 n_nodes, then per node in preorder:
 *   u8 id_len, id, i32 parent (preorder index, -1 for a root), u8 kind,
 *   u8 flags (1 bounds, 2 visible, 4 name, 8 mesh), f64 t[3] r[4] s[3]
 *   pivot[3] fov znear zfar, [f64 bounds min[3] max[3]],
 *   [u16 len, name], [u16 len, mesh].
 * r is the quaternion as the scene stores it (already normalised).
 */

typedef struct bytes {
	unsigned char *p;
	size_t len, cap;
} bytes;

static int bytes_reserve(bytes *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more) {
		if (cap > SIZE_MAX / 2)
			return RIGD_E_NOMEM;
		cap *= 2;
	}
	unsigned char *p = realloc(b->p, cap);
	if (!p)
		return RIGD_E_NOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* The put_ helpers write into reserved space. */
static void put_u8(bytes *b, unsigned v)
{
	b->p[b->len++] = (unsigned char)v;
}

static void put_u16(bytes *b, unsigned v)
{
	put_u8(b, v & 0xff);
	put_u8(b, (v >> 8) & 0xff);
}

static void put_u32(bytes *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put_u8(b, (v >> (8 * i)) & 0xff);
}

static void put_f64(bytes *b, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	for (int i = 0; i < 8; i++)
		put_u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}

static void put_vec3(bytes *b, vec3 v)
{
	put_f64(b, v.x);
	put_f64(b, v.y);
	put_f64(b, v.z);
}

static void put_raw(bytes *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* Appends the snapshot of 's' to 'out'. 0 or RIGD_E_NOMEM. */
static int snap_encode(const scene *s, bytes *out)
{
	int n = scene_count(s);
	if (bytes_reserve(out, 12))
		return RIGD_E_NOMEM;
	put_raw(out, SNAP_MAGIC, 4);
	put_u32(out, SNAP_FORMAT);
	put_u32(out, (uint32_t)n);
	for (int pos = 0; pos < n; pos++) {
		int node = scene_at(s, pos);
		int parent = scene_parent(s, node);
		const char *id = scene_id(s, node);
		node_props p;
		scene_props(s, node, &p);
		size_t id_len = strlen(id);
		size_t name_len = p.name ? strlen(p.name) : 0;
		size_t mesh_len = p.mesh ? strlen(p.mesh) : 0;
		assert(id_len <= SCENE_ID_MAX && name_len <= SCENE_NAME_MAX &&
		       mesh_len <= SCENE_MESH_MAX);
		if (bytes_reserve(out, 1 + id_len + 4 + 2 + 22 * 8 + 4 + name_len + mesh_len))
			return RIGD_E_NOMEM;
		put_u8(out, (unsigned)id_len);
		put_raw(out, id, id_len);
		put_u32(out, (uint32_t)(parent < 0 ? -1 : scene_pos(s, parent)));
		put_u8(out, (unsigned)p.kind);
		put_u8(out, (p.has_bounds ? 1u : 0) | (p.visible ? 2u : 0) | (p.name ? 4u : 0) |
				    (p.mesh ? 8u : 0));
		put_vec3(out, p.t);
		put_f64(out, p.r.x);
		put_f64(out, p.r.y);
		put_f64(out, p.r.z);
		put_f64(out, p.r.w);
		put_vec3(out, p.s);
		put_vec3(out, p.pivot);
		put_f64(out, p.fov_deg);
		put_f64(out, p.znear);
		put_f64(out, p.zfar);
		if (p.has_bounds) {
			put_vec3(out, p.bounds.min);
			put_vec3(out, p.bounds.max);
		}
		if (p.name) {
			put_u16(out, (unsigned)name_len);
			put_raw(out, p.name, name_len);
		}
		if (p.mesh) {
			put_u16(out, (unsigned)mesh_len);
			put_raw(out, p.mesh, mesh_len);
		}
	}
	return 0;
}

typedef struct reader {
	const unsigned char *p;
	size_t len, off;
	bool bad;
} reader;

static const unsigned char *take(reader *r, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = true;
		return NULL;
	}
	const unsigned char *p = r->p + r->off;
	r->off += n;
	return p;
}

static unsigned get_u8(reader *r)
{
	const unsigned char *p = take(r, 1);
	return p ? p[0] : 0;
}

static unsigned get_u16(reader *r)
{
	const unsigned char *p = take(r, 2);
	return p ? (unsigned)p[0] | (unsigned)p[1] << 8 : 0;
}

/* Written out byte by byte (no loop), which compilers turn into one load
 * on little-endian machines: replay reads many of these. */
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t get_u32(reader *r)
{
	const unsigned char *p = take(r, 4);
	return p ? le32(p) : 0;
}

static double get_f64(reader *r)
{
	const unsigned char *p = take(r, 8);
	uint64_t v = p ? (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32 : 0;
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

static vec3 get_vec3(reader *r)
{
	vec3 v;
	v.x = get_f64(r);
	v.y = get_f64(r);
	v.z = get_f64(r);
	return v;
}

/* Copies 'n' bytes into the string pool as a NUL-terminated string. */
static const char *get_str(reader *r, size_t n, char *pool, size_t *used)
{
	const unsigned char *p = take(r, n);
	if (!p)
		return NULL;
	char *s = pool + *used;
	memcpy(s, p, n);
	s[n] = 0;
	*used += n + 1;
	return s;
}

/*
 * Builds a scene from a snapshot. Returns 0 and a new scene (node limit
 * unlimited: the caller sets it), RIGD_E_STORAGE for bytes that are not a
 * valid snapshot, or RIGD_E_NOMEM.
 */
static int snap_decode(const void *data, size_t len, scene **out)
{
	reader r = { data, len, 0, false };
	const unsigned char *magic = take(&r, 4);
	uint32_t format = get_u32(&r);
	uint32_t n = get_u32(&r);
	if (r.bad || memcmp(magic, SNAP_MAGIC, 4) != 0 || format != SNAP_FORMAT)
		return RIGD_E_STORAGE;
	/* Every node takes at least 1 + 1 + 4 + 2 + 16 * 8 bytes: a count the
	 * bytes cannot hold is corrupt (and must not size an allocation). */
	if (n > (len - 12) / 136 || n > INT_MAX)
		return RIGD_E_STORAGE;
	scene *s = scene_new();
	const char **ids = malloc(sizeof(*ids) * (n ? n : 1));
	int *parents = malloc(sizeof(*parents) * (n ? n : 1));
	node_props *props = malloc(sizeof(*props) * (n ? n : 1));
	char *pool = malloc(len + n + 1); /* every string plus its NUL */
	size_t used = 0;
	int err = 0;
	if (!s || !ids || !parents || !props || !pool) {
		err = RIGD_E_NOMEM;
		goto out;
	}
	scene_set_max_nodes(s, INT_MAX);
	for (uint32_t i = 0; i < n && !r.bad; i++) {
		node_props *p = &props[i];
		*p = node_props_default();
		unsigned id_len = get_u8(&r);
		ids[i] = get_str(&r, id_len, pool, &used);
		parents[i] = (int)(int32_t)get_u32(&r);
		p->kind = (int)get_u8(&r);
		unsigned flags = get_u8(&r);
		p->t = get_vec3(&r);
		p->r.x = get_f64(&r);
		p->r.y = get_f64(&r);
		p->r.z = get_f64(&r);
		p->r.w = get_f64(&r);
		p->s = get_vec3(&r);
		p->pivot = get_vec3(&r);
		p->fov_deg = get_f64(&r);
		p->znear = get_f64(&r);
		p->zfar = get_f64(&r);
		p->has_bounds = flags & 1;
		p->visible = flags & 2;
		if (p->has_bounds) {
			p->bounds.min = get_vec3(&r);
			p->bounds.max = get_vec3(&r);
		}
		p->name = (flags & 4) ? get_str(&r, get_u16(&r), pool, &used) : NULL;
		p->mesh = (flags & 8) ? get_str(&r, get_u16(&r), pool, &used) : NULL;
		if (flags & ~15u)
			r.bad = true;
	}
	if (r.bad || r.off != len) {
		err = RIGD_E_STORAGE;
		goto out;
	}
	err = scene_load(s, (int)n, ids, parents, props, NULL);
	if (err && err != RIGD_E_NOMEM)
		err = RIGD_E_STORAGE;
out:
	free(ids);
	free(parents);
	free(props);
	free(pool);
	if (err) {
		scene_free(s);
		return err;
	}
	*out = s;
	return 0;
}

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
 * Doubles are copied bit for bit, so an image decodes to exactly the batch
 * it was made from. Nothing is recursive; every length is checked against
 * the bytes left before it is read. */

#define OPS_BIN_HEADER 5        /* format byte and op count */
#define OPS_BIN_MIN_OP 4        /* kind, fields, id length */
#define OPS_BIN_NULL_STR 0xffffu

/* Bytes of one op's image, or 0 when a string is too long for it. */
static size_t op_bin_size(const edit_op *op)
{
	unsigned f = op->fields;
	size_t n = OPS_BIN_MIN_OP + strlen(op->id);
	size_t name_len = op->name ? strlen(op->name) : 0;
	size_t mesh_len = op->mesh ? strlen(op->mesh) : 0;
	if (name_len >= OPS_BIN_NULL_STR || mesh_len >= OPS_BIN_NULL_STR)
		return 0;
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
	return n;
}

static void put_bin_str(bytes *b, const char *str)
{
	size_t len = str ? strlen(str) : 0;
	put_u16(b, str ? (unsigned)len : OPS_BIN_NULL_STR);
	if (str)
		put_raw(b, str, len);
}

/* Appends the image of op 'op' to 'b', which has room for it. */
static void op_bin_put(bytes *b, const edit_op *op)
{
	unsigned f = op->fields;
	size_t id_len = strlen(op->id);
	put_u8(b, (unsigned)op->kind);
	put_u16(b, f);
	put_u8(b, (unsigned)id_len);
	put_raw(b, op->id, id_len);
	if (f & EDIT_F_PARENT) {
		size_t len = strlen(op->parent);
		put_u8(b, (unsigned)len);
		put_raw(b, op->parent, len);
	}
	if (f & EDIT_F_INDEX)
		put_u32(b, (uint32_t)op->index);
	if (f & EDIT_F_NAME)
		put_bin_str(b, op->name);
	if (f & EDIT_F_T)
		put_vec3(b, op->t);
	if (f & EDIT_F_R) {
		put_f64(b, op->r.x);
		put_f64(b, op->r.y);
		put_f64(b, op->r.z);
		put_f64(b, op->r.w);
	}
	if (f & EDIT_F_S)
		put_vec3(b, op->s);
	if (f & EDIT_F_PIVOT)
		put_vec3(b, op->pivot);
	if (f & EDIT_F_EULER)
		put_vec3(b, op->euler_deg);
	if (f & EDIT_F_BOUNDS) {
		put_u8(b, op->has_bounds);
		if (op->has_bounds) {
			put_vec3(b, op->bounds.min);
			put_vec3(b, op->bounds.max);
		}
	}
	if (f & EDIT_F_MESH)
		put_bin_str(b, op->mesh);
	if (f & EDIT_F_KIND)
		put_u32(b, (uint32_t)op->node_kind);
	if (f & EDIT_F_FOV)
		put_f64(b, op->fov_deg);
	if (f & EDIT_F_NEAR)
		put_f64(b, op->znear);
	if (f & EDIT_F_FAR)
		put_f64(b, op->zfar);
	if (f & EDIT_F_VISIBLE)
		put_u8(b, op->visible);
	if (f & EDIT_F_KEEP_WORLD)
		put_u8(b, op->keep_world);
}

int engine_ops_encode_bin(const edit_batch *b, unsigned char **out, size_t *len)
{
	size_t total = OPS_BIN_HEADER;
	if (b->n_ops < 0 || (uint64_t)b->n_ops > UINT32_MAX)
		return RIGD_E_TOO_LARGE;
	for (int i = 0; i < b->n_ops; i++) {
		size_t n = op_bin_size(&b->ops[i]);
		if (n == 0 || (b->ops[i].fields >> EDIT_F_COUNT_) != 0 ||
		    b->ops[i].kind < 0 || b->ops[i].kind > 0xff)
			return RIGD_E_TOO_LARGE;
		total += n;
	}
	bytes buf = { 0 };
	buf.p = malloc(total);
	if (!buf.p)
		return RIGD_E_NOMEM;
	buf.cap = total;
	put_u8(&buf, ENGINE_OPS_BIN_FORMAT);
	put_u32(&buf, (uint32_t)b->n_ops);
	for (int i = 0; i < b->n_ops; i++)
		op_bin_put(&buf, &b->ops[i]);
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
	const unsigned char *p = take(r, n);
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
	unsigned len = get_u16(r);
	if (r->bad || len == OPS_BIN_NULL_STR)
		return NULL;
	return get_bin_str(r, len, nomem);
}

/* Reads an id-sized string (u8 length) into 'dst' (SCENE_ID_MAX + 1). */
static void get_bin_id(reader *r, char *dst)
{
	unsigned len = get_u8(r);
	const unsigned char *p = take(r, len);
	if (!p || len > SCENE_ID_MAX || memchr(p, 0, len)) {
		r->bad = true;
		dst[0] = 0;
		return;
	}
	memcpy(dst, p, len);
	dst[len] = 0;
}

static bool get_bool(reader *r)
{
	unsigned v = get_u8(r);
	if (v > 1)
		r->bad = true;
	return v == 1;
}

/* Empties 'b' of its ops but keeps their array, for the next image. */
static void batch_clear_ops(edit_batch *b)
{
	for (int i = 0; i < b->n_ops; i++) {
		free(b->ops[i].name);
		free(b->ops[i].mesh);
	}
	b->n_ops = 0;
}

/* Decodes an image into 'b' (its ops replaced; client untouched), reusing
 * its ops array. RIGD_E_IO for bytes that are not an image, RIGD_E_NOMEM;
 * on error 'b' holds some ops, each complete or without strings. */
static int ops_bin_read(const void *data, size_t len, edit_batch *b)
{
	reader r = { data, len, 0, false };
	batch_clear_ops(b);
	unsigned format = get_u8(&r);
	uint32_t n = get_u32(&r);
	if (r.bad || format != ENGINE_OPS_BIN_FORMAT)
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
		op->kind = (int)get_u8(&r);
		unsigned f = get_u16(&r);
		op->fields = f;
		get_bin_id(&r, op->id);
		if (r.bad || op->kind < EDIT_CREATE || op->kind > EDIT_DELETE ||
		    (f >> EDIT_F_COUNT_) != 0) {
			r.bad = true;
			break;
		}
		if (f & EDIT_F_PARENT)
			get_bin_id(&r, op->parent);
		if (f & EDIT_F_INDEX)
			op->index = (int)(int32_t)get_u32(&r);
		if (f & EDIT_F_NAME)
			op->name = get_bin_opt_str(&r, &nomem);
		if (f & EDIT_F_T)
			op->t = get_vec3(&r);
		if (f & EDIT_F_R) {
			op->r.x = get_f64(&r);
			op->r.y = get_f64(&r);
			op->r.z = get_f64(&r);
			op->r.w = get_f64(&r);
		}
		if (f & EDIT_F_S)
			op->s = get_vec3(&r);
		if (f & EDIT_F_PIVOT)
			op->pivot = get_vec3(&r);
		if (f & EDIT_F_EULER)
			op->euler_deg = get_vec3(&r);
		if (f & EDIT_F_BOUNDS) {
			op->has_bounds = get_bool(&r);
			if (op->has_bounds) {
				op->bounds.min = get_vec3(&r);
				op->bounds.max = get_vec3(&r);
			}
		}
		if (f & EDIT_F_MESH)
			op->mesh = get_bin_opt_str(&r, &nomem);
		if (f & EDIT_F_KIND)
			op->node_kind = (int)(int32_t)get_u32(&r);
		if (f & EDIT_F_FOV)
			op->fov_deg = get_f64(&r);
		if (f & EDIT_F_NEAR)
			op->znear = get_f64(&r);
		if (f & EDIT_F_FAR)
			op->zfar = get_f64(&r);
		if (f & EDIT_F_VISIBLE)
			op->visible = get_bool(&r);
		if (f & EDIT_F_KEEP_WORLD)
			op->keep_world = get_bool(&r);
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
	int err = ops_bin_read(data, len, out);
	if (err)
		edit_batch_release(out);
	return err;
}

/* ------------------------------------------------------------------------ */
/* Scenes by name. */

static int find_index(const engine *e, const char *name, bool *found)
{
	int lo = 0, hi = e->n_scenes;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(e->scenes[mid]->name, name);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static scene_rt *find_scene(const engine *e, const char *name)
{
	bool found;
	if (!name)
		return NULL;
	int i = find_index(e, name, &found);
	return found ? e->scenes[i] : NULL;
}

static void hist_free(hist *h)
{
	free(h->undo);
	free(h->redo);
	free(h);
}

/* Forgets every client's history of the scene (rebuilt from the log on
 * next use). */
static void hist_clear(scene_rt *rt)
{
	for (int i = 0; rt->hist && i < rt->hist_cap; i++) {
		hist *h = rt->hist[i];
		while (h) {
			hist *next = h->next;
			hist_free(h);
			h = next;
		}
		rt->hist[i] = NULL;
	}
	rt->n_hist = 0;
}

static void rt_free(scene_rt *rt)
{
	if (!rt)
		return;
	hist_clear(rt);
	free(rt->hist);
	scene_free(rt->sc);
	free(rt);
}

/* Inserts 'rt' in name order. */
static int insert_scene(engine *e, scene_rt *rt)
{
	bool found;
	int at = find_index(e, rt->name, &found);
	if (found)
		return RIGD_E_SCENE_EXISTS;
	if (e->n_scenes == e->cap_scenes) {
		int cap = e->cap_scenes ? 2 * e->cap_scenes : 8;
		scene_rt **p = realloc(e->scenes, sizeof(*p) * (size_t)cap);
		if (!p)
			return RIGD_E_NOMEM;
		e->scenes = p;
		e->cap_scenes = cap;
	}
	memmove(&e->scenes[at + 1], &e->scenes[at], sizeof(*e->scenes) * (size_t)(e->n_scenes - at));
	e->scenes[at] = rt;
	e->n_scenes++;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Replay: the state at a seq from the nearest snapshot plus the log. */

typedef struct replay_ctx {
	engine *e;
	const char *name;
	scene *sc;
	int64_t expect;           /* the seq the next row must carry */
	int64_t weight;           /* of the rows replayed */
	edit_batch ops;           /* the last row's ops; its array is reused */
} replay_ctx;

static int snap_load_cb(void *vctx, const store_snapshot *sn)
{
	replay_ctx *c = vctx;
	scene *s = NULL;
	if (sn->format != SNAP_FORMAT || fnv1a(sn->data, sn->len, FNV_OFFSET) != sn->hash) {
		set_errmsg(c->e, "scene '%s': snapshot at seq %lld is corrupt", c->name,
			   (long long)sn->seq);
		return RIGD_E_STORAGE;
	}
	int err = snap_decode(sn->data, sn->len, &s);
	if (err) {
		set_errmsg(c->e, "scene '%s': snapshot at seq %lld does not load", c->name,
			   (long long)sn->seq);
		return err;
	}
	scene_free(c->sc);
	c->sc = s;
	c->expect = sn->seq + 1;
	return 0;
}

/* Applies one logged batch to c->sc (no limits: it was accepted once),
 * from its binary image when it has one, else from its JSON; c->ops keeps
 * the decoded ops until the next row. */
static int replay_row(replay_ctx *c, const store_edit *row, edit_batch *inverse)
{
	edit_error er;
	int err;
	if (row->seq != c->expect) {
		set_errmsg(c->e, "scene '%s': the log has seq %lld where %lld belongs", c->name,
			   (long long)row->seq, (long long)c->expect);
		return RIGD_E_STORAGE;
	}
	if (row->ops_bin) {
		err = ops_bin_read(row->ops_bin, row->ops_bin_len, &c->ops);
		if (!err && c->ops.n_ops != row->n_ops)
			err = RIGD_E_IO;
		if (err) {
			set_errmsg(c->e, "scene '%s': seq %lld: the binary image of its ops is %s",
				   c->name, (long long)row->seq,
				   err == RIGD_E_NOMEM ? "too large for memory" : "corrupt");
			return err == RIGD_E_NOMEM ? err : RIGD_E_STORAGE;
		}
	} else {
		proto_limits lim = trusted_limits();
		edit_batch_release(&c->ops);
		err = proto_decode_ops(row->ops, row->ops_len, &lim, &c->ops, &er);
	}
	if (!err)
		err = edit_apply_ex(c->sc, &c->ops, NULL, NULL, inverse, &er);
	if (err) {
		set_errmsg(c->e, "scene '%s': seq %lld does not replay: %s (%s)", c->name,
			   (long long)row->seq, er.message, err_code(err));
		return err == RIGD_E_NOMEM ? err : RIGD_E_STORAGE;
	}
	c->expect++;
	c->weight += batch_weight(row->n_ops);
	return 0;
}

static int replay_cb(void *vctx, const store_edit *row)
{
	return replay_row(vctx, row, NULL);
}

/*
 * Builds scene 'name' (store id 'id') as it was after batch 'upto' (< 0: the
 * latest). *out gets the scene (node limit unlimited), *tail_weight (may be
 * NULL) the weight replayed after the snapshot, *last the last seq applied.
 */
static int build_scene(engine *e, const char *name, int64_t id, int64_t upto, scene **out,
		       int64_t *tail_weight, int64_t *last)
{
	replay_ctx c = { .e = e, .name = name, .sc = scene_new(), .expect = 1 };
	if (!c.sc)
		return RIGD_E_NOMEM;
	scene_set_max_nodes(c.sc, INT_MAX);
	int err = store_snapshot_latest(e->st, id, upto, snap_load_cb, &c);
	if (err == RIGD_E_STORAGE && !e->errmsg[0])
		set_errmsg(e, "%s", store_errmsg(e->st));
	if (!err) {
		e->errmsg[0] = 0;
		/* The JSON only of rows that have no binary image. */
		err = store_edits_ex(e->st, id, c.expect - 1, upto, 0, replay_cb, &c);
		if (err == RIGD_E_STORAGE && !e->errmsg[0])
			set_errmsg(e, "%s", store_errmsg(e->st));
	}
	edit_batch_release(&c.ops);
	if (!err && upto >= 0 && c.expect - 1 != upto) {
		set_errmsg(e, "scene '%s': the log ends at seq %lld, before %lld", name,
			   (long long)(c.expect - 1), (long long)upto);
		err = RIGD_E_STORAGE;
	}
	if (err) {
		scene_free(c.sc);
		return err;
	}
	*out = c.sc;
	if (tail_weight)
		*tail_weight = c.weight;
	*last = c.expect - 1;
	return 0;
}

/* (Re)loads a scene's committed state into rt. On error rt is unchanged. */
static int load_scene(engine *e, scene_rt *rt)
{
	scene *s = NULL;
	int64_t weight = 0, last = 0;
	e->errmsg[0] = 0;
	int err = build_scene(e, rt->name, rt->id, -1, &s, &weight, &last);
	if (err)
		return err;
	scene_set_max_nodes(s, e->opts.max_nodes);
	scene_update(s, (uint64_t)last, NULL, NULL);
	scene_free(rt->sc);
	rt->sc = s;
	rt->seq = last;
	rt->next_seq = last + 1;
	rt->tail_weight = weight;
	rt->broken = false;
	hist_clear(rt);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Open and close. */

engine_opts engine_opts_default(void)
{
	engine_opts o;
	memset(&o, 0, sizeof(o));
	o.checkpoint_pages = 1000;
	o.snapshot_ops = ENGINE_DEFAULT_SNAPSHOT_OPS;
	o.undo_depth = ENGINE_DEFAULT_UNDO_DEPTH;
	o.max_nodes = SCENE_DEFAULT_MAX_NODES;
	o.limits = edit_limits_default();
	return o;
}

static scene_rt *rt_new(const char *name, int64_t id)
{
	scene_rt *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return NULL;
	snprintf(rt->name, sizeof(rt->name), "%s", name);
	rt->id = id;
	rt->hist_cap = 16;
	rt->hist = calloc((size_t)rt->hist_cap, sizeof(*rt->hist));
	rt->sc = scene_new();
	if (!rt->hist || !rt->sc) {
		rt_free(rt);
		return NULL;
	}
	rt->next_seq = 1;
	return rt;
}

static int open_scene_cb(void *vctx, const store_scene *sc)
{
	engine *e = vctx;
	scene_rt *rt = rt_new(sc->name, sc->id);
	if (!rt)
		return RIGD_E_NOMEM;
	int err = insert_scene(e, rt);
	if (err) {
		rt_free(rt);
		return err == RIGD_E_SCENE_EXISTS ? RIGD_E_STORAGE : err;
	}
	rt->seq = sc->last_seq; /* load_scene sets it from the log */
	return 0;
}

engine *engine_open(const char *path, const engine_opts *o, int *err, char *msg, size_t msglen)
{
	engine_opts d = engine_opts_default();
	engine_opts opts = o ? *o : d;
	if (opts.snapshot_ops <= 0)
		opts.snapshot_ops = d.snapshot_ops;
	if (opts.undo_depth <= 0)
		opts.undo_depth = d.undo_depth;
	if (opts.max_nodes <= 0)
		opts.max_nodes = d.max_nodes;
	if (opts.limits.max_ops <= 0)
		opts.limits.max_ops = d.limits.max_ops;
	if (opts.limits.max_id_len <= 0 || opts.limits.max_id_len > SCENE_ID_MAX)
		opts.limits.max_id_len = d.limits.max_id_len;

	int e_err = 0;
	engine *e = calloc(1, sizeof(*e));
	if (!e) {
		if (err)
			*err = RIGD_E_NOMEM;
		if (msg && msglen)
			snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	e->opts = opts;
	store_opts so = store_opts_default();
	so.sync_normal = opts.sync_normal;
	so.checkpoint_pages = opts.checkpoint_pages;
	so.fault_injection = opts.fault_injection;
	so.shared = opts.read_only;
	e->st = store_open(path, &so, &e_err, msg, msglen);
	if (!e->st)
		goto fail;
	e_err = store_scenes(e->st, open_scene_cb, e);
	if (e_err) {
		if (msg && msglen)
			snprintf(msg, msglen, "'%s': cannot list scenes: %s", path, store_errmsg(e->st));
		goto fail;
	}
	for (int i = 0; i < e->n_scenes; i++) {
		e_err = load_scene(e, e->scenes[i]);
		if (e_err) {
			if (msg && msglen)
				snprintf(msg, msglen, "'%s': %s", path, e->errmsg);
			goto fail;
		}
	}
	if (err)
		*err = 0;
	return e;
fail:
	if (err)
		*err = e_err;
	engine_close(e);
	return NULL;
}

static void queue_clear(engine *e);

void engine_close(engine *e)
{
	if (!e)
		return;
	queue_clear(e);
	store_close(e->st);
	for (int i = 0; i < e->n_scenes; i++)
		rt_free(e->scenes[i]);
	free(e->scenes);
	free(e->q);
	free(e->qidx);
	free(e);
}

const char *engine_errmsg(const engine *e)
{
	return e->errmsg;
}

/* ------------------------------------------------------------------------ */
/* Scenes. */

/* Refuses a write on an engine opened read-only. */
static int writable(engine *e, edit_error *err)
{
	if (!e->opts.read_only)
		return 0;
	edit_error_set(err, RIGD_E_FORBIDDEN, -1, "", "the database was opened read-only");
	return RIGD_E_FORBIDDEN;
}

int engine_scene_create(engine *e, const char *name)
{
	if (writable(e, NULL))
		return RIGD_E_FORBIDDEN;
	if (!name || !scene_id_valid(name))
		return RIGD_E_BAD_ID;
	if (find_scene(e, name))
		return RIGD_E_SCENE_EXISTS;
	scene_rt *rt = rt_new(name, 0);
	if (!rt)
		return RIGD_E_NOMEM;
	scene_set_max_nodes(rt->sc, e->opts.max_nodes);
	/* Room in the array first, so that nothing can fail after the row is
	 * stored. */
	if (e->n_scenes == e->cap_scenes) {
		int cap = e->cap_scenes ? 2 * e->cap_scenes : 8;
		scene_rt **p = realloc(e->scenes, sizeof(*p) * (size_t)cap);
		if (!p) {
			rt_free(rt);
			return RIGD_E_NOMEM;
		}
		e->scenes = p;
		e->cap_scenes = cap;
	}
	int err = store_scene_create(e->st, name, now_us(), &rt->id);
	if (err) {
		if (err == RIGD_E_STORAGE)
			set_errmsg(e, "%s", store_errmsg(e->st));
		rt_free(rt);
		return err;
	}
	err = insert_scene(e, rt);
	assert(err == 0);
	return err;
}

int engine_scene_delete(engine *e, const char *name)
{
	bool found;
	int i = name ? find_index(e, name, &found) : 0;
	if (!name || !found)
		return RIGD_E_UNKNOWN_SCENE;
	scene_rt *rt = e->scenes[i];
	if (writable(e, NULL))
		return RIGD_E_FORBIDDEN;
	if (rt->n_pending) {
		set_errmsg(e, "scene '%s' has uncommitted batches", name);
		return RIGD_E_INTERNAL;
	}
	int err = store_scene_delete(e->st, rt->id);
	if (err) {
		set_errmsg(e, "%s", store_errmsg(e->st));
		return err == RIGD_E_UNKNOWN_SCENE ? RIGD_E_STORAGE : err;
	}
	memmove(&e->scenes[i], &e->scenes[i + 1], sizeof(*e->scenes) * (size_t)(e->n_scenes - i - 1));
	e->n_scenes--;
	rt_free(rt);
	return 0;
}

const scene *engine_scene(const engine *e, const char *name)
{
	scene_rt *rt = find_scene(e, name);
	return rt ? rt->sc : NULL;
}

int64_t engine_seq(const engine *e, const char *name)
{
	scene_rt *rt = find_scene(e, name);
	return rt ? rt->seq : RIGD_E_UNKNOWN_SCENE;
}

int engine_scenes(const engine *e, proto_scene_info *out, int cap)
{
	for (int i = 0; i < e->n_scenes && i < cap; i++) {
		out[i].name = e->scenes[i]->name;
		out[i].seq = (uint64_t)e->scenes[i]->seq;
		out[i].nodes = scene_count(e->scenes[i]->sc);
	}
	return e->n_scenes;
}

/* ------------------------------------------------------------------------ */
/* Undo history. */

static unsigned hash_str(const char *s)
{
	return (unsigned)fnv1a(s, strlen(s), FNV_OFFSET);
}

static int push_seq(int64_t **a, int *n, int *cap, int64_t v, int depth)
{
	if (*n == depth && depth > 0) {
		/* Drop the oldest: a client undoes at most 'depth' batches. */
		memmove(*a, *a + 1, sizeof(**a) * (size_t)(*n - 1));
		(*n)--;
	}
	if (*n == *cap) {
		int c = *cap ? 2 * *cap : 16;
		int64_t *p = realloc(*a, sizeof(*p) * (size_t)c);
		if (!p)
			return RIGD_E_NOMEM;
		*a = p;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return 0;
}

/* Removes the newest occurrence of 'v'. */
static void remove_seq(int64_t *a, int *n, int64_t v)
{
	for (int i = *n - 1; i >= 0; i--) {
		if (a[i] == v) {
			memmove(&a[i], &a[i + 1], sizeof(*a) * (size_t)(*n - i - 1));
			(*n)--;
			return;
		}
	}
}

/* One step of the history machine for a batch of the client. */
static int hist_step(hist *h, int depth, int64_t seq, int kind, int64_t target)
{
	switch (kind) {
	case STORE_UNDO:
		remove_seq(h->undo, &h->n_undo, target);
		return push_seq(&h->redo, &h->n_redo, &h->cap_redo, target, depth);
	case STORE_REDO:
		remove_seq(h->redo, &h->n_redo, target);
		return push_seq(&h->undo, &h->n_undo, &h->cap_undo, seq, depth);
	default:
		h->n_redo = 0;
		return push_seq(&h->undo, &h->n_undo, &h->cap_undo, seq, depth);
	}
}

typedef struct hist_load {
	hist *h;
	int depth;
} hist_load;

static int hist_load_cb(void *vctx, int64_t seq, int kind, int64_t target)
{
	hist_load *c = vctx;
	return hist_step(c->h, c->depth, seq, kind, target);
}

static hist *hist_find(scene_rt *rt, const char *client)
{
	for (hist *h = rt->hist[hash_str(client) & (unsigned)(rt->hist_cap - 1)]; h; h = h->next)
		if (strcmp(h->client, client) == 0)
			return h;
	return NULL;
}

/* The history of 'client' in rt, built from the log and this turn's queue
 * on first use. NULL with *err set on failure. */
static hist *hist_get(engine *e, scene_rt *rt, const char *client, int *err)
{
	hist *h = hist_find(rt, client);
	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h) {
		*err = RIGD_E_NOMEM;
		return NULL;
	}
	snprintf(h->client, sizeof(h->client), "%s", client);
	hist_load c = { h, e->opts.undo_depth };
	*err = store_client_history(e->st, rt->id, client, HIST_WINDOW(e->opts.undo_depth),
				    hist_load_cb, &c);
	if (*err == RIGD_E_STORAGE)
		set_errmsg(e, "%s", store_errmsg(e->st));
	for (int i = 0; !*err && i < e->n_q; i++) {
		pending *p = &e->q[i];
		if (p->rt == rt && strcmp(p->client, client) == 0)
			*err = hist_step(h, e->opts.undo_depth, p->seq, p->kind, p->target);
	}
	if (*err) {
		hist_free(h);
		return NULL;
	}
	/* Grow the table at load factor 2 (chains stay short). */
	if (rt->n_hist >= 2 * rt->hist_cap) {
		int cap = 2 * rt->hist_cap;
		hist **t = calloc((size_t)cap, sizeof(*t));
		if (t) {
			for (int i = 0; i < rt->hist_cap; i++) {
				hist *x = rt->hist[i];
				while (x) {
					hist *next = x->next;
					unsigned b = hash_str(x->client) & (unsigned)(cap - 1);
					x->next = t[b];
					t[b] = x;
					x = next;
				}
			}
			free(rt->hist);
			rt->hist = t;
			rt->hist_cap = cap;
		}
	}
	unsigned b = hash_str(client) & (unsigned)(rt->hist_cap - 1);
	h->next = rt->hist[b];
	rt->hist[b] = h;
	rt->n_hist++;
	return h;
}

/* ------------------------------------------------------------------------ */
/* The queue of this turn. */

static unsigned qkey(const scene_rt *rt, const char *client, int64_t client_seq)
{
	uint64_t h = fnv1a(client, strlen(client), FNV_OFFSET);
	h = fnv1a(&client_seq, sizeof(client_seq), h);
	h = fnv1a(&rt, sizeof(rt), h);
	return (unsigned)(h ^ (h >> 32));
}

/* The queued batch of (rt, client, client_seq), or NULL. */
static pending *queue_find(engine *e, const scene_rt *rt, const char *client, int64_t client_seq)
{
	if (!e->qidx_cap)
		return NULL;
	unsigned mask = (unsigned)e->qidx_cap - 1;
	for (unsigned i = qkey(rt, client, client_seq) & mask;; i = (i + 1) & mask) {
		int k = e->qidx[i];
		if (k < 0)
			return NULL;
		pending *p = &e->q[k];
		if (p->rt == rt && p->client_seq == client_seq && strcmp(p->client, client) == 0)
			return p;
	}
}

static void qidx_put(engine *e, int k)
{
	pending *p = &e->q[k];
	unsigned mask = (unsigned)e->qidx_cap - 1;
	unsigned i = qkey(p->rt, p->client, p->client_seq) & mask;
	while (e->qidx[i] >= 0)
		i = (i + 1) & mask;
	e->qidx[i] = k;
}

/* Room for one more queued batch (and its index entry). */
static int queue_reserve(engine *e)
{
	if (e->n_q == e->cap_q) {
		int cap = e->cap_q ? 2 * e->cap_q : 64;
		pending *p = realloc(e->q, sizeof(*p) * (size_t)cap);
		if (!p)
			return RIGD_E_NOMEM;
		e->q = p;
		e->cap_q = cap;
	}
	if (2 * (e->n_q + 1) > e->qidx_cap) {
		int cap = e->qidx_cap ? 2 * e->qidx_cap : 128;
		int *t = malloc(sizeof(*t) * (size_t)cap);
		if (!t)
			return RIGD_E_NOMEM;
		for (int i = 0; i < cap; i++)
			t[i] = -1;
		free(e->qidx);
		e->qidx = t;
		e->qidx_cap = cap;
		for (int k = 0; k < e->n_q; k++)
			if (e->q[k].has_client_seq)
				qidx_put(e, k);
	}
	return 0;
}

static void pending_release(pending *p)
{
	free(p->ops);
	free(p->inverse);
	free(p->ops_bin);
	edit_batch_release(&p->inv);
}

static void queue_clear(engine *e)
{
	for (int i = 0; i < e->n_q; i++)
		pending_release(&e->q[i]);
	e->n_q = 0;
	for (int i = 0; i < e->qidx_cap; i++)
		e->qidx[i] = -1;
}

int engine_pending(const engine *e)
{
	return e->n_q;
}

void engine_ack_init(engine_ack *a)
{
	memset(a, 0, sizeof(*a));
	edit_result_init(&a->changes);
}

void engine_ack_release(engine_ack *a)
{
	if (!a)
		return;
	edit_result_release(&a->changes);
	a->seq = 0;
	a->recomputed = 0;
	a->duplicate = false;
}

/* A resend of (client, client_seq) already queued or committed: 1, with
 * *ack (may be NULL) its seq and duplicate = true, when there is one; 0
 * when not; or a negative error, set in 'err'. */
static int answer_resend(engine *e, scene_rt *rt, const char *client, int64_t client_seq,
			 engine_ack *ack, edit_error *err)
{
	int64_t seq = 0;
	pending *p = queue_find(e, rt, client, client_seq);
	if (p) {
		seq = p->seq;
	} else {
		int rc = store_edit_lookup(e->st, rt->id, client, client_seq, &seq);
		if (rc) {
			set_errmsg(e, "%s", store_errmsg(e->st));
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			return rc;
		}
		if (seq <= 0)
			return 0;
	}
	if (ack) {
		ack->seq = seq;
		ack->duplicate = true;
	}
	return 1;
}

/* What every write through the queue starts with: 'ack' (may be NULL)
 * initialised, 'err' cleared, scene 'name' found (*rt) and the engine
 * writable. Returns 0, RIGD_E_UNKNOWN_SCENE or RIGD_E_FORBIDDEN. */
static int write_start(engine *e, const char *name, engine_ack *ack, edit_error *err,
		       scene_rt **rt)
{
	if (ack)
		engine_ack_init(ack);
	edit_error_clear(err);
	*rt = find_scene(e, name);
	if (!*rt) {
		edit_error_set(err, RIGD_E_UNKNOWN_SCENE, -1, "scene", "unknown scene '%s'",
			       name ? name : "");
		return RIGD_E_UNKNOWN_SCENE;
	}
	return writable(e, err) ? RIGD_E_FORBIDDEN : 0;
}

/*
 * Applies 'b' to rt and queues it as a batch of 'kind' (target: the undone
 * or redone seq). 'lim' NULL for trusted batches. Duplicates are the
 * caller's business.
 */
static int apply_and_queue(engine *e, scene_rt *rt, const edit_batch *b, const edit_limits *lim,
			   int kind, int64_t target, engine_ack *ack, edit_error *err)
{
	edit_result res;
	edit_batch inv;
	int rc = queue_reserve(e);
	if (rc) {
		edit_error_set(err, rc, -1, "", "out of memory");
		return rc;
	}
	rc = edit_apply_ex(rt->sc, b, lim, &res, &inv, err);
	if (rc)
		return rc; /* the scene is as it was, out of memory or not */
	pending *p = &e->q[e->n_q];
	memset(p, 0, sizeof(*p));
	p->rt = rt;
	p->seq = rt->next_seq;
	p->time_us = now_us();
	snprintf(p->client, sizeof(p->client), "%s", b->client);
	p->has_client_seq = b->has_client_seq;
	p->client_seq = b->client_seq;
	p->kind = kind;
	p->target = target;
	p->n_ops = b->n_ops;
	rc = encode_ops(b, &p->ops, &p->ops_len);
	if (!rc)
		rc = encode_ops(&inv, &p->inverse, &p->inverse_len);
	if (!rc)
		rc = engine_ops_encode_bin(b, &p->ops_bin, &p->ops_bin_len);
	hist *h = hist_find(rt, p->client);
	if (!rc && h)
		rc = hist_step(h, e->opts.undo_depth, p->seq, kind, target);
	if (rc) {
		/* Out of memory: take the batch back out of the scene, which
		 * allocates nothing and so cannot run out of memory too. Should
		 * it fail all the same (a bug), the scene no longer matches its
		 * log: broken, so that the next commit reloads it. */
		if (edit_revert(rt->sc, &inv) != 0)
			rt->broken = true;
		free(p->ops);
		free(p->inverse);
		free(p->ops_bin);
		edit_result_release(&res);
		hist_clear(rt);
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		return rc;
	}
	edit_batch_move(&p->inv, &inv);
	if (p->has_client_seq)
		qidx_put(e, e->n_q);
	e->n_q++;
	rt->next_seq++;
	rt->n_pending++;
	rt->pending_weight += batch_weight(b->n_ops);
	if (ack) {
		ack->seq = p->seq;
		ack->recomputed = res.recomputed;
		ack->changes = res;
	} else {
		edit_result_release(&res);
	}
	return 0;
}

int engine_submit(engine *e, const char *name, const edit_batch *b, engine_ack *ack,
		  edit_error *err)
{
	return engine_submit_limits(e, name, b, &e->opts.limits, ack, err);
}

int engine_submit_limits(engine *e, const char *name, const edit_batch *b,
			 const edit_limits *lim, engine_ack *ack, edit_error *err)
{
	scene_rt *rt;
	int rc = write_start(e, name, ack, err, &rt);
	if (rc)
		return rc;
	if (b->has_client_seq) {
		rc = answer_resend(e, rt, b->client, b->client_seq, ack, err);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return apply_and_queue(e, rt, b, lim, STORE_EDIT, 0, ack, err);
}

/* The stored ops (want_inverse false) or inverse of batch 'seq' of rt, as
 * a malloc'd copy: from this turn's queue or from the log. */
typedef struct row_copy {
	bool want_inverse;
	char *json;
	size_t len;
} row_copy;

static int row_copy_cb(void *vctx, const store_edit *row)
{
	row_copy *c = vctx;
	const char *src = c->want_inverse ? row->inverse : row->ops;
	size_t len = c->want_inverse ? row->inverse_len : row->ops_len;
	c->json = malloc(len + 1);
	if (!c->json)
		return RIGD_E_NOMEM;
	memcpy(c->json, src, len);
	c->json[len] = 0;
	c->len = len;
	return 0;
}

static int fetch_row(engine *e, scene_rt *rt, int64_t seq, bool want_inverse, row_copy *c)
{
	c->want_inverse = want_inverse;
	c->json = NULL;
	for (int i = 0; i < e->n_q; i++) {
		pending *p = &e->q[i];
		if (p->rt == rt && p->seq == seq) {
			store_edit row = { .ops = p->ops, .ops_len = p->ops_len,
					   .inverse = p->inverse, .inverse_len = p->inverse_len };
			return row_copy_cb(c, &row);
		}
	}
	int err = store_edits(e->st, rt->id, seq - 1, seq, want_inverse, row_copy_cb, c);
	if (err == RIGD_E_STORAGE)
		set_errmsg(e, "%s", store_errmsg(e->st));
	if (!err && !c->json) {
		set_errmsg(e, "scene '%s': seq %lld is missing from the log", rt->name, (long long)seq);
		err = RIGD_E_STORAGE;
	}
	return err;
}

static int undo_redo(engine *e, const char *name, const char *client, bool has_client_seq,
		     int64_t client_seq, bool redo, engine_ack *ack, edit_error *err)
{
	scene_rt *rt;
	int rc = write_start(e, name, ack, err, &rt);
	if (rc)
		return rc;
	if (!client || !client[0] || strlen(client) > SCENE_ID_MAX) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client", "%s needs a client id",
			       redo ? "redo" : "undo");
		return RIGD_E_BAD_FIELD;
	}
	if (has_client_seq) {
		rc = answer_resend(e, rt, client, client_seq, ack, err);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	hist *h = hist_get(e, rt, client, &rc);
	if (!h) {
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		return rc;
	}
	if ((redo ? h->n_redo : h->n_undo) == 0) {
		edit_error_set(err, RIGD_E_NOTHING_TO_UNDO, -1, "", "nothing to %s for '%s'",
			       redo ? "redo" : "undo", client);
		return RIGD_E_NOTHING_TO_UNDO;
	}
	int64_t target = redo ? h->redo[h->n_redo - 1] : h->undo[h->n_undo - 1];
	row_copy c;
	rc = fetch_row(e, rt, target, !redo, &c);
	if (rc) {
		edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		return rc;
	}
	proto_limits lim = trusted_limits();
	edit_batch b;
	rc = proto_decode_ops(c.json, c.len, &lim, &b, err);
	free(c.json);
	if (rc) {
		set_errmsg(e, "scene '%s': seq %lld has unreadable ops", rt->name, (long long)target);
		edit_error_set(err, RIGD_E_STORAGE, -1, "", "%s", err_str(RIGD_E_STORAGE));
		return RIGD_E_STORAGE;
	}
	snprintf(b.client, sizeof(b.client), "%s", client);
	b.has_client_seq = has_client_seq;
	b.client_seq = client_seq;
	rc = apply_and_queue(e, rt, &b, NULL, redo ? STORE_REDO : STORE_UNDO, target, ack, err);
	edit_batch_release(&b);
	if (rc && rc != RIGD_E_NOMEM && rc != RIGD_E_INTERNAL) {
		/* The batch no longer fits the scene: someone else's later
		 * batch deleted its node, took its id, or the like. */
		char why[EDIT_MESSAGE_MAX];
		snprintf(why, sizeof(why), "%s", err && err->message[0] ? err->message : err_str(rc));
		int op = err ? err->op : -1;
		char field[EDIT_FIELD_MAX];
		snprintf(field, sizeof(field), "%s", err ? err->field : "");
		edit_error_set(err, RIGD_E_UNDO_CONFLICT, op, field, "%s of seq %lld: %s",
			       redo ? "redo" : "undo", (long long)target, why);
		rc = RIGD_E_UNDO_CONFLICT;
	}
	return rc;
}

int engine_undo(engine *e, const char *name, const char *client, bool has_client_seq,
		int64_t client_seq, engine_ack *ack, edit_error *err)
{
	return undo_redo(e, name, client, has_client_seq, client_seq, false, ack, err);
}

int engine_redo(engine *e, const char *name, const char *client, bool has_client_seq,
		int64_t client_seq, engine_ack *ack, edit_error *err)
{
	return undo_redo(e, name, client, has_client_seq, client_seq, true, ack, err);
}

/* ------------------------------------------------------------------------ */
/* Commit. */

static bool snapshot_due(const engine *e, const scene_rt *rt, int64_t weight)
{
	int64_t every = e->opts.snapshot_ops;
	int64_t by_size = scene_count(rt->sc);
	return weight >= (every > by_size ? every : by_size);
}

/* Writes a snapshot of rt's scene as it is in memory, as of seq 'seq'.
 * RIGD_E_NOMEM when it cannot be encoded (the caller may go on without it). */
static int put_snapshot(engine *e, const scene_rt *rt, const scene *s, int64_t seq)
{
	bytes b = { 0 };
	int err = snap_encode(s, &b);
	if (!err) {
		store_snapshot sn = {
			.scene_id = rt->id,
			.seq = seq,
			.format = SNAP_FORMAT,
			.n_nodes = scene_count(s),
			.hash = fnv1a(b.p, b.len, FNV_OFFSET),
			.data = b.p,
			.len = b.len,
		};
		err = store_snapshot_put(e->st, &sn);
		if (err)
			set_errmsg(e, "%s", store_errmsg(e->st));
		else
			e->stats.snapshots++;
	}
	free(b.p);
	return err;
}

/* Takes this turn's batches back out of memory, newest first, with
 * edit_revert, which allocates nothing: out of memory, no batch that was
 * not stored stays visible. A broken scene is reloaded from the database. */
static void rollback_memory(engine *e)
{
	for (int i = e->n_q - 1; i >= 0; i--) {
		pending *p = &e->q[i];
		if (p->rt->broken)
			continue;
		if (edit_revert(p->rt->sc, &p->inv) != 0)
			p->rt->broken = true;
	}
	for (int i = 0; i < e->n_scenes; i++) {
		scene_rt *rt = e->scenes[i];
		if (!rt->n_pending && !rt->broken)
			continue;
		hist_clear(rt);
		rt->next_seq = rt->seq + 1;
		rt->n_pending = 0;
		rt->pending_weight = 0;
		if (rt->broken) {
			/* Last resort: the committed state from the database. If
			 * even that fails the scene stays broken, and every later
			 * commit fails and retries. */
			char keep[sizeof(e->errmsg)];
			memcpy(keep, e->errmsg, sizeof(keep));
			load_scene(e, rt);
			memcpy(e->errmsg, keep, sizeof(keep));
		}
	}
	queue_clear(e);
}

int engine_commit(engine *e)
{
	int err = 0;
	/* A broken scene fails the commit, which reloads it: also with nothing
	 * queued (a failed submit can leave a scene broken and queue nothing). */
	for (int i = 0; i < e->n_scenes && !err; i++) {
		if (e->scenes[i]->broken) {
			set_errmsg(e, "scene '%s' was left inconsistent by a failure (out of memory)",
				   e->scenes[i]->name);
			err = RIGD_E_STORAGE;
		}
	}
	if (e->n_q == 0 && !err)
		return 0;
	if (!err) {
		err = store_begin(e->st);
		if (err)
			set_errmsg(e, "%s", store_errmsg(e->st));
	}
	for (int i = 0; i < e->n_q && !err; i++) {
		pending *p = &e->q[i];
		store_edit row = {
			.scene_id = p->rt->id,
			.seq = p->seq,
			.time_us = p->time_us,
			.client = p->client,
			.has_client_seq = p->has_client_seq,
			.client_seq = p->client_seq,
			.kind = p->kind,
			.target = p->target,
			.n_ops = p->n_ops,
			.ops = p->ops,
			.ops_len = p->ops_len,
			.inverse = p->inverse,
			.inverse_len = p->inverse_len,
			.ops_bin = p->ops_bin,
			.ops_bin_len = p->ops_bin_len,
		};
		err = store_edit_append(e->st, &row);
		if (err)
			set_errmsg(e, "%s", store_errmsg(e->st));
	}
	/* Snapshots of the scenes that are due one, inside the same
	 * transaction: a snapshot never runs ahead of its log. A snapshot that
	 * cannot be encoded (out of memory) is simply left for a later turn. */
	bool *snapped = NULL;
	if (!err && !(snapped = calloc((size_t)e->n_scenes + 1, sizeof(*snapped))))
		err = RIGD_E_NOMEM;
	for (int i = 0; i < e->n_scenes && !err; i++) {
		scene_rt *rt = e->scenes[i];
		if (!rt->n_pending || !snapshot_due(e, rt, rt->tail_weight + rt->pending_weight))
			continue;
		int s_err = put_snapshot(e, rt, rt->sc, rt->next_seq - 1);
		if (s_err == 0)
			snapped[i] = true;
		else if (s_err != RIGD_E_NOMEM)
			err = s_err;
	}
	if (!err) {
		err = store_commit(e->st);
		if (err)
			set_errmsg(e, "%s", store_errmsg(e->st));
	} else {
		store_rollback(e->st);
	}
	if (err) {
		free(snapped);
		rollback_memory(e);
		e->stats.failed_commits++;
		return RIGD_E_STORAGE;
	}
	for (int i = 0; i < e->n_scenes; i++) {
		scene_rt *rt = e->scenes[i];
		if (!rt->n_pending)
			continue;
		rt->seq = rt->next_seq - 1;
		rt->tail_weight = snapped[i] ? 0 : rt->tail_weight + rt->pending_weight;
		rt->pending_weight = 0;
		rt->n_pending = 0;
	}
	free(snapped);
	for (int i = 0; i < e->n_q; i++)
		e->stats.ops += (uint64_t)e->q[i].n_ops;
	e->stats.batches += (uint64_t)e->n_q;
	e->stats.commits++;
	queue_clear(e);
	return 0;
}

long engine_update(engine *e, const char *name, scene_range_fn fn, void *ctx)
{
	scene_rt *rt = find_scene(e, name);
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	return scene_update(rt->sc, (uint64_t)rt->seq, fn, ctx);
}

/* ------------------------------------------------------------------------ */
/* History. */

int engine_at(engine *e, const char *name, int64_t seq, scene **out)
{
	scene_rt *rt = find_scene(e, name);
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	if (seq < 0 || seq > rt->seq)
		return RIGD_E_BAD_SEQ;
	scene *s = NULL;
	int64_t last = 0;
	e->errmsg[0] = 0;
	int err = build_scene(e, rt->name, rt->id, seq, &s, NULL, &last);
	if (err)
		return err;
	scene_set_max_nodes(s, e->opts.max_nodes);
	scene_update(s, (uint64_t)seq, NULL, NULL);
	*out = s;
	return 0;
}

typedef struct log_ctx {
	engine *e;
	proto_buf buf;
	engine_line_fn fn;
	void *ctx;
} log_ctx;

static int log_cb(void *vctx, const store_edit *row)
{
	log_ctx *c = vctx;
	proto_limits lim = trusted_limits();
	edit_batch b;
	int err = proto_decode_ops(row->ops, row->ops_len, &lim, &b, NULL);
	if (err) {
		set_errmsg(c->e, "seq %lld has unreadable ops", (long long)row->seq);
		return err == RIGD_E_NOMEM ? err : RIGD_E_STORAGE;
	}
	snprintf(b.client, sizeof(b.client), "%s", row->client);
	b.has_client_seq = row->has_client_seq;
	b.client_seq = row->client_seq;
	proto_buf_reset(&c->buf);
	err = proto_encode_log_line(&c->buf, (uint64_t)row->seq, row->time_us, &b);
	edit_batch_release(&b);
	if (err)
		return err;
	return c->fn(c->ctx, proto_buf_str(&c->buf), c->buf.len);
}

int engine_log(engine *e, const char *name, int64_t from, int64_t to, engine_line_fn fn,
	       void *ctx)
{
	scene_rt *rt = find_scene(e, name);
	if (!rt)
		return RIGD_E_UNKNOWN_SCENE;
	log_ctx c = { .e = e, .fn = fn, .ctx = ctx };
	proto_buf_init(&c.buf, 0);
	int err = store_edits(e->st, rt->id, from > 0 ? from - 1 : 0, to, false, log_cb, &c);
	if (err == RIGD_E_STORAGE && !e->errmsg[0])
		set_errmsg(e, "%s", store_errmsg(e->st));
	proto_buf_release(&c.buf);
	return err;
}

int engine_import(engine *e, const char *name, const char *ndjson, size_t len,
		  int64_t *n_batches, int *bad_line, edit_error *err)
{
	edit_error_clear(err);
	if (bad_line)
		*bad_line = 0;
	if (n_batches)
		*n_batches = 0;
	scene_rt *rt = find_scene(e, name);
	if (!rt) {
		edit_error_set(err, RIGD_E_UNKNOWN_SCENE, -1, "scene", "unknown scene '%s'",
			       name ? name : "");
		return RIGD_E_UNKNOWN_SCENE;
	}
	if (writable(e, err))
		return RIGD_E_FORBIDDEN;
	if (rt->seq || rt->n_pending || scene_count(rt->sc)) {
		edit_error_set(err, RIGD_E_SCENE_NOT_EMPTY, -1, "scene", "scene '%s' is not empty",
			       rt->name);
		return RIGD_E_SCENE_NOT_EMPTY;
	}
	proto_limits lim = trusted_limits();
	int rc = store_begin(e->st);
	if (rc) {
		set_errmsg(e, "%s", store_errmsg(e->st));
		edit_error_set(err, RIGD_E_STORAGE, -1, "", "%s", err_str(RIGD_E_STORAGE));
		return RIGD_E_STORAGE;
	}
	int64_t seq = 0, weight = 0, n_ops = 0;
	int line_no = 0;
	size_t off = 0;
	while (!rc && off < len) {
		const char *line = ndjson + off;
		const char *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		off += n + (nl ? 1 : 0);
		line_no++;
		size_t k = 0;
		while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
			k++;
		if (k == n)
			continue; /* a blank line */
		proto_log_line ll;
		rc = proto_decode_log_line(line, n, &lim, &ll, err);
		if (rc)
			break;
		if ((int64_t)ll.seq != seq + 1) {
			edit_error_set(err, RIGD_E_BAD_SEQ, -1, "seq", "seq %llu where %lld belongs",
				       (unsigned long long)ll.seq, (long long)(seq + 1));
			edit_batch_release(&ll.batch);
			rc = RIGD_E_BAD_SEQ;
			break;
		}
		edit_batch inv;
		rc = edit_apply_ex(rt->sc, &ll.batch, NULL, NULL, &inv, err);
		if (rc) {
			edit_batch_release(&ll.batch);
			break;
		}
		seq++;
		n_ops += ll.batch.n_ops;
		weight += batch_weight(ll.batch.n_ops);
		store_edit row = {
			.scene_id = rt->id,
			.seq = seq,
			.time_us = ll.time_us,
			.client = ll.batch.client,
			.has_client_seq = ll.batch.has_client_seq,
			.client_seq = ll.batch.client_seq,
			.kind = STORE_EDIT,
			.n_ops = ll.batch.n_ops,
		};
		char *ops = NULL, *inverse = NULL;
		unsigned char *ops_bin = NULL;
		rc = encode_ops(&ll.batch, &ops, &row.ops_len);
		if (!rc)
			rc = encode_ops(&inv, &inverse, &row.inverse_len);
		if (!rc)
			rc = engine_ops_encode_bin(&ll.batch, &ops_bin, &row.ops_bin_len);
		if (!rc) {
			row.ops = ops;
			row.inverse = inverse;
			row.ops_bin = ops_bin;
			rc = store_edit_append(e->st, &row);
			if (rc == RIGD_E_INTERNAL) {
				edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client_seq",
					       "client '%s' client_seq %lld appears twice",
					       ll.batch.client, (long long)ll.batch.client_seq);
				rc = RIGD_E_BAD_FIELD;
			} else if (rc) {
				set_errmsg(e, "%s", store_errmsg(e->st));
				edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			}
		} else {
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		}
		free(ops);
		free(inverse);
		free(ops_bin);
		edit_batch_release(&inv);
		edit_batch_release(&ll.batch);
		if (!rc && snapshot_due(e, rt, weight)) {
			rc = put_snapshot(e, rt, rt->sc, seq);
			if (rc == RIGD_E_NOMEM)
				rc = 0; /* the log is complete without it */
			else if (rc)
				edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			else
				weight = 0;
		}
	}
	if (!rc) {
		rc = store_commit(e->st);
		if (rc) {
			set_errmsg(e, "%s", store_errmsg(e->st));
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
		}
	} else {
		store_rollback(e->st);
	}
	if (rc) {
		/* The scene was empty: empty it again. */
		scene *s = scene_new();
		if (s) {
			scene_set_max_nodes(s, e->opts.max_nodes);
			scene_free(rt->sc);
			rt->sc = s;
		} else {
			load_scene(e, rt);
		}
		if (bad_line)
			*bad_line = line_no;
		if (err && err->message[0] && line_no) {
			char msg[EDIT_MESSAGE_MAX];
			snprintf(msg, sizeof(msg), "line %d: %.360s", line_no, err->message);
			memcpy(err->message, msg, sizeof(msg));
		}
		return rc;
	}
	rt->seq = seq;
	rt->next_seq = seq + 1;
	rt->tail_weight = weight;
	hist_clear(rt);
	e->stats.batches += (uint64_t)seq;
	e->stats.ops += (uint64_t)n_ops;
	if (n_batches)
		*n_batches = seq;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Check. */

typedef struct check_ctx {
	engine *e;
	scene_rt *rt;
	replay_ctx r;
	engine_report_fn fn;
	void *fctx;
	int problems;
	int64_t snapshots;
	int64_t json_rows;        /* rows without a binary image */
	bytes enc;
	/* The snapshot being compared (copied by cmp_snap_cb). */
	bool snap_found;
	bool snap_equal;
} check_ctx;

static void report(check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(check_ctx *c, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->fn)
		c->fn(c->fctx, line);
}

static int cmp_snap_cb(void *vctx, const store_snapshot *sn)
{
	check_ctx *c = vctx;
	c->snap_found = true;
	c->snap_equal = sn->format == SNAP_FORMAT && sn->len == c->enc.len &&
			memcmp(sn->data, c->enc.p, sn->len) == 0 &&
			fnv1a(sn->data, sn->len, FNV_OFFSET) == sn->hash &&
			sn->n_nodes == scene_count(c->r.sc);
	return 0;
}

typedef struct snap_list {
	int64_t *seqs;
	int n, cap;
} snap_list;

static int snap_list_cb(void *vctx, const store_snapshot *sn)
{
	snap_list *l = vctx;
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		int64_t *p = realloc(l->seqs, sizeof(*p) * (size_t)cap);
		if (!p)
			return RIGD_E_NOMEM;
		l->seqs = p;
		l->cap = cap;
	}
	l->seqs[l->n++] = sn->seq;
	return 0;
}

typedef struct check_replay {
	check_ctx *c;
	snap_list snaps;
	int next_snap;
} check_replay;

/* Whether 'a' (a row's stored JSON) holds the ops 'b': equal to b's JSON,
 * or equal to it once read back and re-encoded by this build. The text may
 * differ and the values not: where two shortest decimals read back to the
 * same double, another build of the encoder may have picked the other one.
 * 0 with *same set, or RIGD_E_NOMEM. */
static int same_ops_json(const char *a, size_t a_len, const edit_batch *b, bool *same)
{
	char *json = NULL, *again = NULL;
	size_t json_len = 0, again_len = 0;
	int err = encode_ops(b, &json, &json_len);
	if (err)
		return err;
	*same = json_len == a_len && memcmp(json, a, a_len) == 0;
	if (!*same) {
		proto_limits lim = trusted_limits();
		edit_batch stored;
		if (proto_decode_ops(a, a_len, &lim, &stored, NULL) == 0) {
			err = encode_ops(&stored, &again, &again_len);
			edit_batch_release(&stored);
			*same = !err && again_len == json_len && memcmp(again, json, json_len) == 0;
			free(again);
		}
	}
	free(json);
	return err;
}

/* A row replayed from its binary image (the ops in c->r.ops): its JSON,
 * which export and people read, must hold the same ops. */
static int check_ops_json(check_ctx *c, const store_edit *row)
{
	bool same = false;
	int err = same_ops_json(row->ops, row->ops_len, &c->r.ops, &same);
	if (err)
		return err;
	if (!same) {
		report(c, "scene '%s': seq %lld: the binary image of the ops differs from their JSON",
		       c->rt->name, (long long)row->seq);
		c->problems++;
	}
	return 0;
}

static int check_row_cb(void *vctx, const store_edit *row)
{
	check_replay *cr = vctx;
	check_ctx *c = cr->c;
	edit_batch inv;
	int err = replay_row(&c->r, row, &inv);
	if (err) {
		report(c, "%s", c->e->errmsg);
		c->problems++;
		/* A gap or a batch that does not apply ends this scene's proof. */
		return err == RIGD_E_NOMEM ? err : 1;
	}
	if (row->ops_bin) {
		err = check_ops_json(c, row);
		if (err) {
			edit_batch_release(&inv);
			return err;
		}
	} else {
		c->json_rows++;
	}
	bool same = false;
	err = same_ops_json(row->inverse, row->inverse_len, &inv, &same);
	edit_batch_release(&inv);
	if (err)
		return err;
	if (!same) {
		report(c, "scene '%s': seq %lld: the stored inverse differs from the replay's",
		       c->rt->name, (long long)row->seq);
		c->problems++;
	}
	while (cr->next_snap < cr->snaps.n && cr->snaps.seqs[cr->next_snap] <= row->seq) {
		int64_t at = cr->snaps.seqs[cr->next_snap++];
		if (at != row->seq)
			continue; /* seq 0 or below the first row: reported later */
		c->enc.len = 0;
		err = snap_encode(c->r.sc, &c->enc);
		if (err)
			return err;
		c->snap_found = false;
		err = store_snapshot_latest(c->e->st, c->rt->id, at, cmp_snap_cb, c);
		if (err)
			return err;
		if (!c->snap_found || !c->snap_equal) {
			report(c, "scene '%s': the snapshot at seq %lld differs from the replay",
			       c->rt->name, (long long)at);
			c->problems++;
		}
		c->snapshots++;
	}
	return 0;
}

static int check_scene(check_ctx *c, scene_rt *rt)
{
	engine *e = c->e;
	check_replay cr = { .c = c };
	int err = 0;
	int problems_before = c->problems;
	c->rt = rt;
	c->snapshots = 0;
	c->r = (replay_ctx){ .e = e, .name = rt->name, .sc = scene_new(), .expect = 1 };
	if (!c->r.sc)
		return RIGD_E_NOMEM;
	scene_set_max_nodes(c->r.sc, INT_MAX);
	c->json_rows = 0;
	err = store_snapshots(e->st, rt->id, false, snap_list_cb, &cr.snaps);
	if (!err)
		err = store_edits_ex(e->st, rt->id, 0, -1, STORE_WANT_INVERSE | STORE_WANT_OPS_JSON,
				     check_row_cb, &cr);
	if (err == 1)
		err = 0; /* reported */
	if (err) {
		report(c, "scene '%s': %s", rt->name,
		       err == RIGD_E_STORAGE ? store_errmsg(e->st) : err_str(err));
		c->problems++;
		err = err == RIGD_E_NOMEM ? err : 0;
	}
	int64_t last = c->r.expect - 1;
	if (!err && c->problems == problems_before) {
		if (last != rt->seq) {
			report(c, "scene '%s': the log ends at seq %lld, the scene is at %lld",
			       rt->name, (long long)last, (long long)rt->seq);
			c->problems++;
		}
		for (int i = 0; i < cr.snaps.n; i++) {
			if (cr.snaps.seqs[i] < 1 || cr.snaps.seqs[i] > last) {
				report(c, "scene '%s': a snapshot at seq %lld has no log row",
				       rt->name, (long long)cr.snaps.seqs[i]);
				c->problems++;
			}
		}
		scene_update(c->r.sc, (uint64_t)last, NULL, NULL);
		scene_update(rt->sc, (uint64_t)rt->seq, NULL, NULL);
		uint64_t h_replay = scene_hash(c->r.sc), h_live = scene_hash(rt->sc);
		if (h_replay != h_live) {
			report(c, "scene '%s': the loaded scene (hash %016llx) differs from a full "
				  "replay (hash %016llx)",
			       rt->name, (unsigned long long)h_live, (unsigned long long)h_replay);
			c->problems++;
		}
		if (c->problems == problems_before && c->json_rows)
			report(c, "scene '%s': ok: %lld batches, %lld snapshots, %d nodes, hash %016llx, "
				  "%lld logged before binary images",
			       rt->name, (long long)last, (long long)c->snapshots,
			       scene_count(rt->sc), (unsigned long long)h_live,
			       (long long)c->json_rows);
		else if (c->problems == problems_before)
			report(c, "scene '%s': ok: %lld batches, %lld snapshots, %d nodes, hash %016llx",
			       rt->name, (long long)last, (long long)c->snapshots,
			       scene_count(rt->sc), (unsigned long long)h_live);
	}
	free(cr.snaps.seqs);
	edit_batch_release(&c->r.ops);
	scene_free(c->r.sc);
	c->r.sc = NULL;
	return err;
}

static void integrity_line(void *vctx, const char *line)
{
	check_ctx *c = vctx;
	report(c, "integrity_check: %s", line);
}

int engine_check(engine *e, engine_report_fn fn, void *ctx)
{
	check_ctx c = { .e = e, .fn = fn, .fctx = ctx };
	int err = store_integrity_check(e->st, integrity_line, &c);
	if (err == RIGD_E_STORAGE)
		c.problems++;
	else if (err)
		return err;
	else
		report(&c, "integrity_check: ok");
	for (int i = 0; i < e->n_scenes; i++) {
		e->errmsg[0] = 0;
		err = check_scene(&c, e->scenes[i]);
		if (err)
			break;
	}
	free(c.enc.p);
	if (err)
		return err;
	return c.problems ? RIGD_E_STORAGE : 0;
}

void engine_get_stats(const engine *e, engine_stats *out)
{
	*out = e->stats;
	out->checkpoints = store_checkpoints(e->st);
}

int engine_fault(engine *e, unsigned ops, long after, int kind)
{
	return store_fault_set(e->st, ops, after, kind);
}

void engine_fault_clear(engine *e)
{
	store_fault_clear(e->st);
}
