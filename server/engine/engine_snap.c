/*
 * engine_snap.c: snapshots and replay. A snapshot is a scene's stored
 * values, byte-exact; replay rebuilds a scene as of a seq from the nearest
 * snapshot at or before it plus the log rows after it. Serves engine_open
 * (every scene), a failed commit (a broken scene reloaded) and engine_at
 * (time travel).
 *
 * Never writes a log row; writes snapshots only inside the caller's
 * transaction (eng_put_snapshot), so a snapshot never runs ahead of its log.
 */
#include "engine_internal.h"

#include "core/err.h"
#include "core/pose.h"

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 *
 * Format 2, written only when the scene holds poses (so a scene without
 * them gives the same bytes as before poses existed), is format 1 followed
 * by: u32 n_poses, then per pose in name order: u8 name_len, name,
 * u32 n_channels, then per channel in id order: u8 id_len, id,
 * f64 t[3] r[4] s[3]. Both formats load.
 *
 * Format 3, written only when a node has a layer, a z other than +0 or a
 * facing (a 2D scene's drawing), is format 2 whose node flags may also
 * hold 16 (layer), 32 (z) and 64 (facing), each adding after the mesh, in
 * that order: [u16 len, layer], [f64 z_right z_left], [u8 facing]. All
 * three formats load.
 *
 * Format 4, written only when a node has a shear other than +0 +0 or an
 * inherit mode other than normal, is format 3 whose node flags may also
 * hold 128, adding after the facing: [f64 shear[2], u8 inherit]. All four
 * formats load.
 *
 * Format 5, written only when a pose channel has a shear other than +0 +0
 * (a 2D scene's pose), is format 4 whose pose channels each add f64
 * shear[2] after s. All five formats load.
 */

/* The draw flags of a node's props in format 3 (0: all defaults). */
static unsigned draw_flags(const node_props *p)
{
	static const double zero = 0;

	return (p->layer ? 16u : 0) |
	       (memcmp(&p->z_right, &zero, sizeof(zero)) || memcmp(&p->z_left, &zero, sizeof(zero))
			? 32u : 0) |
	       (p->facing != FACING_NONE ? 64u : 0);
}

/* The shape flag of a node's props in format 4 (0: shear +0 +0, normal). */
static unsigned shape2d_flag(const node_props *p)
{
	static const double zero = 0;

	return memcmp(&p->shear[0], &zero, sizeof(zero)) || memcmp(&p->shear[1], &zero, sizeof(zero)) ||
			       p->inherit != INHERIT_NORMAL
		       ? 128u
		       : 0;
}

/* True when some node of 's' needs format 3 (*shaped: format 4). Only a
 * 2D scene's nodes can. */
static bool scene_drawn(const scene *s, bool *shaped)
{
	node_props p;
	bool drawn = false;

	*shaped = false;
	if (scene_dims(s) != 2)
		return false;
	for (int pos = 0; pos < scene_count(s) && !*shaped; pos++) {
		scene_props(s, scene_at(s, pos), &p);
		drawn = drawn || draw_flags(&p);
		*shaped = shape2d_flag(&p) != 0;
	}
	return drawn || *shaped;
}

uint32_t eng_snap_format(const bytes *snap)
{
	assert(snap->len >= 12);
	return le_get32(snap->p + 4);
}

/* True when a channel of a pose of 'ps' has a shear (format 5). */
static bool poses_sheared(const pose_set *ps)
{
	for (int i = 0; i < pose_count(ps); i++)
		for (int k = 0; k < pose_at(ps, i)->n; k++)
			if (pose_channel_sheared(&pose_at(ps, i)->ch[k]))
				return true;
	return false;
}

/* The poses section, each channel with its shear when 'sheared'. */
static int snap_encode_poses(const pose_set *ps, bool sheared, bytes *out)
{
	if (bytes_reserve(out, 4))
		return RIGD_E_NOMEM;
	bytes_put_u32(out, (uint32_t)pose_count(ps));
	for (int i = 0; i < pose_count(ps); i++) {
		const pose *p = pose_at(ps, i);
		size_t len = strlen(p->name);

		if (bytes_reserve(out, 1 + len + 4 +
					       (size_t)p->n * (ENG_CHANNEL_MIN + SCENE_ID_MAX +
							       ENG_CHANNEL_SHEAR)))
			return RIGD_E_NOMEM;
		bytes_put_u8(out, (unsigned)len);
		bytes_put_raw(out, p->name, len);
		bytes_put_u32(out, (uint32_t)p->n);
		for (int k = 0; k < p->n; k++) {
			bytes_put_channel(out, &p->ch[k]);
			if (sheared)
				bytes_put_channel_shear(out, &p->ch[k]);
		}
	}
	return 0;
}

/* An id (u8 length, bytes) into 'dst'; r->bad unless it is a valid id. */
static void get_snap_id(reader *r, char dst[SCENE_ID_MAX + 1])
{
	unsigned len = reader_get_u8(r);
	const unsigned char *p = reader_take(r, len);

	dst[0] = 0;
	if (!p || len > SCENE_ID_MAX) {
		r->bad = true;
		return;
	}
	memcpy(dst, p, len);
	dst[len] = 0;
	if (!scene_id_valid(dst))
		r->bad = true;
}

/* The poses section of a format-2 snapshot into the scene's poses (each
 * channel with its shear when 'sheared': format 5). The bytes are
 * untrusted: names and ids must be valid and in order, counts must fit the
 * bytes left. */
static int snap_decode_poses(reader *r, bool sheared, scene *s)
{
	pose_set *ps = scene_poses(s);
	uint32_t n = reader_get_u32(r);
	char last[SCENE_ID_MAX + 1] = "";

	for (uint32_t i = 0; i < n && !r->bad; i++) {
		char name[SCENE_ID_MAX + 1];
		pose_channel *ch = NULL, *old;
		uint32_t n_ch;
		int n_old;

		get_snap_id(r, name);
		n_ch = reader_get_u32(r);
		if (r->bad || (i && strcmp(last, name) >= 0) ||
		    n_ch > (r->len - r->off) / ENG_CHANNEL_MIN)
			return RIGD_E_STORAGE;
		if ((n_ch && !(ch = malloc(sizeof(*ch) * n_ch))) || pose_reserve(ps)) {
			free(ch);
			return RIGD_E_NOMEM;
		}
		for (uint32_t k = 0; k < n_ch && !r->bad; k++) {
			get_snap_id(r, ch[k].id);
			reader_get_channel_trs(r, &ch[k]);
			ch[k].shear[0] = ch[k].shear[1] = 0;
			if (sheared)
				reader_get_channel_shear(r, &ch[k]);
			if (k && strcmp(ch[k - 1].id, ch[k].id) >= 0)
				r->bad = true;
		}
		if (r->bad) {
			free(ch);
			return RIGD_E_STORAGE;
		}
		pose_put(ps, name, ch, (int)n_ch, &old, &n_old);
		assert(!old);
		memcpy(last, name, sizeof(last));
	}
	return r->bad ? RIGD_E_STORAGE : 0;
}

int eng_snap_encode(const scene *s, bytes *out)
{
	int n = scene_count(s);
	bool shaped;
	bool drawn = scene_drawn(s, &shaped);
	bool posed = drawn || pose_count(scene_poses_c(s)) > 0;
	bool pose_sheared = poses_sheared(scene_poses_c(s));
	if (bytes_reserve(out, 12))
		return RIGD_E_NOMEM;
	bytes_put_raw(out, SNAP_MAGIC, 4);
	bytes_put_u32(out, pose_sheared ? SNAP_FORMAT_POSE_SHEAR
			   : shaped ? SNAP_FORMAT_SHAPE2D
			   : drawn ? SNAP_FORMAT_DRAW
			   : posed ? SNAP_FORMAT_POSES
				   : SNAP_FORMAT);
	bytes_put_u32(out, (uint32_t)n);
	for (int pos = 0; pos < n; pos++) {
		int node = scene_at(s, pos);
		int parent = scene_parent(s, node);
		const char *id = scene_id(s, node);
		node_props p;
		scene_props(s, node, &p);
		size_t id_len = strlen(id);
		size_t name_len = p.name ? strlen(p.name) : 0;
		size_t mesh_len = p.mesh ? strlen(p.mesh) : 0;
		size_t layer_len = p.layer ? strlen(p.layer) : 0;
		unsigned dflags = drawn ? draw_flags(&p) | (shaped ? shape2d_flag(&p) : 0) : 0;
		assert(id_len <= SCENE_ID_MAX && name_len <= SCENE_NAME_MAX &&
		       mesh_len <= SCENE_MESH_MAX && layer_len <= SCENE_LAYER_MAX);
		assert(drawn || draw_flags(&p) == 0);
		assert(shaped || shape2d_flag(&p) == 0);
		if (bytes_reserve(out, 1 + id_len + 4 + 2 + 22 * 8 + 4 + name_len + mesh_len +
					       2 + layer_len + 16 + 1 + 16 + 1))
			return RIGD_E_NOMEM;
		bytes_put_u8(out, (unsigned)id_len);
		bytes_put_raw(out, id, id_len);
		int parent_pos = parent < 0 ? -1 : scene_pos(s, parent);
		/* Preorder: a parent comes before its children, which decoding
		 * relies on. */
		assert(parent_pos < pos);
		bytes_put_u32(out, (uint32_t)parent_pos);
		bytes_put_u8(out, (unsigned)p.kind);
		bytes_put_u8(out, (p.has_bounds ? 1u : 0) | (p.visible ? 2u : 0) |
					  (p.name ? 4u : 0) | (p.mesh ? 8u : 0) | dflags);
		bytes_put_vec3(out, p.t);
		bytes_put_quat(out, p.r);
		bytes_put_vec3(out, p.s);
		bytes_put_vec3(out, p.pivot);
		bytes_put_f64(out, p.fov_deg);
		bytes_put_f64(out, p.znear);
		bytes_put_f64(out, p.zfar);
		if (p.has_bounds) {
			bytes_put_vec3(out, p.bounds.min);
			bytes_put_vec3(out, p.bounds.max);
		}
		if (p.name) {
			bytes_put_u16(out, (unsigned)name_len);
			bytes_put_raw(out, p.name, name_len);
		}
		if (p.mesh) {
			bytes_put_u16(out, (unsigned)mesh_len);
			bytes_put_raw(out, p.mesh, mesh_len);
		}
		if (dflags & 16) {
			bytes_put_u16(out, (unsigned)layer_len);
			bytes_put_raw(out, p.layer, layer_len);
		}
		if (dflags & 32) {
			bytes_put_f64(out, p.z_right);
			bytes_put_f64(out, p.z_left);
		}
		if (dflags & 64)
			bytes_put_u8(out, (unsigned)p.facing);
		if (dflags & 128) {
			bytes_put_f64(out, p.shear[0]);
			bytes_put_f64(out, p.shear[1]);
			bytes_put_u8(out, (unsigned)p.inherit);
		}
	}
	return posed ? snap_encode_poses(scene_poses_c(s), pose_sheared, out) : 0;
}

/* The draw fields format 3 adds after a node's mesh, as its flags say. */
static void get_draw(reader *r, unsigned flags, char *pool, size_t *used, node_props *p)
{
	p->layer = (flags & 16) ? reader_get_str(r, reader_get_u16(r), pool, used) : NULL;
	if (flags & 32) {
		p->z_right = reader_get_f64(r);
		p->z_left = reader_get_f64(r);
	}
	if (flags & 64)
		p->facing = (int)reader_get_u8(r);
	if (flags & 128) {
		p->shear[0] = reader_get_f64(r);
		p->shear[1] = reader_get_f64(r);
		p->inherit = (int)reader_get_u8(r);
	}
}

static int snap_decode(const void *data, size_t len, scene **out)
{
	reader r = { data, len, 0, false };
	const unsigned char *magic = reader_take(&r, 4);
	uint32_t format = reader_get_u32(&r);
	uint32_t n = reader_get_u32(&r);
	if (r.bad || memcmp(magic, SNAP_MAGIC, 4) != 0 ||
	    (format != SNAP_FORMAT && format != SNAP_FORMAT_POSES && format != SNAP_FORMAT_DRAW &&
	     format != SNAP_FORMAT_SHAPE2D && format != SNAP_FORMAT_POSE_SHEAR))
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
		unsigned id_len = reader_get_u8(&r);
		ids[i] = reader_get_str(&r, id_len, pool, &used);
		parents[i] = (int)(int32_t)reader_get_u32(&r);
		p->kind = (int)reader_get_u8(&r);
		unsigned flags = reader_get_u8(&r);
		p->t = reader_get_vec3(&r);
		p->r = reader_get_quat(&r);
		p->s = reader_get_vec3(&r);
		p->pivot = reader_get_vec3(&r);
		p->fov_deg = reader_get_f64(&r);
		p->znear = reader_get_f64(&r);
		p->zfar = reader_get_f64(&r);
		p->has_bounds = flags & 1;
		p->visible = flags & 2;
		if (p->has_bounds) {
			p->bounds.min = reader_get_vec3(&r);
			p->bounds.max = reader_get_vec3(&r);
		}
		p->name = (flags & 4) ? reader_get_str(&r, reader_get_u16(&r), pool, &used) : NULL;
		p->mesh = (flags & 8) ? reader_get_str(&r, reader_get_u16(&r), pool, &used) : NULL;
		if (flags & ~(format >= SNAP_FORMAT_SHAPE2D ? 255u : format == SNAP_FORMAT_DRAW ? 127u : 15u))
			r.bad = true;
		get_draw(&r, flags, pool, &used, p);
	}
	if (!r.bad && format != SNAP_FORMAT &&
	    (err = snap_decode_poses(&r, format == SNAP_FORMAT_POSE_SHEAR, s)) != 0)
		goto out;
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
/* Replay: the state at a seq from the nearest snapshot plus the log. */

static int snap_load_cb(void *vctx, const store_snapshot *sn)
{
	replay_ctx *c = vctx;
	scene *s = NULL;
	if ((sn->format != SNAP_FORMAT && sn->format != SNAP_FORMAT_POSES &&
	     sn->format != SNAP_FORMAT_DRAW && sn->format != SNAP_FORMAT_SHAPE2D &&
	     sn->format != SNAP_FORMAT_POSE_SHEAR) ||
	    fnv1a(sn->data, sn->len, FNV_OFFSET) != sn->hash) {
		eng_set_errmsg(c->e, "scene '%s': snapshot at seq %lld is corrupt", c->name,
			       (long long)sn->seq);
		return RIGD_E_STORAGE;
	}
	int err = snap_decode(sn->data, sn->len, &s);
	if (err) {
		eng_set_errmsg(c->e, "scene '%s': snapshot at seq %lld does not load", c->name,
			       (long long)sn->seq);
		return err;
	}
	scene_set_dims(s, scene_dims(c->sc));
	scene_free(c->sc);
	c->sc = s;
	c->expect = sn->seq + 1;
	return 0;
}

/* Applies one logged batch to c->sc (no limits: it was accepted once),
 * from its binary image when it has one, else from its JSON; c->ops keeps
 * the decoded ops until the next row. */
int eng_replay_row(replay_ctx *c, const store_edit *row, edit_batch *inverse)
{
	edit_error er;
	int err;
	if (row->seq != c->expect) {
		eng_set_errmsg(c->e, "scene '%s': the log has seq %lld where %lld belongs", c->name,
			       (long long)row->seq, (long long)c->expect);
		return RIGD_E_STORAGE;
	}
	if (row->ops_bin) {
		err = eng_ops_bin_read(row->ops_bin, row->ops_bin_len, &c->ops);
		if (!err && c->ops.n_ops != row->n_ops)
			err = RIGD_E_IO;
		if (err) {
			eng_set_errmsg(c->e, "scene '%s': seq %lld: the binary image of its ops is %s",
				       c->name, (long long)row->seq,
				       err == RIGD_E_NOMEM ? "too large for memory" : "corrupt");
			return err == RIGD_E_NOMEM ? err : RIGD_E_STORAGE;
		}
	} else {
		proto_limits lim = eng_trusted_limits();
		edit_batch_release(&c->ops);
		err = proto_decode_ops(row->ops, row->ops_len, &lim, &c->ops, &er);
	}
	if (!err)
		err = edit_apply_ex(c->sc, &c->ops, NULL, NULL, inverse, &er);
	if (err) {
		eng_set_errmsg(c->e, "scene '%s': seq %lld does not replay: %s (%s)", c->name,
			       (long long)row->seq, er.message, err_code(err));
		return err == RIGD_E_NOMEM ? err : RIGD_E_STORAGE;
	}
	c->expect++;
	assert(c->expect == row->seq + 1);
	c->weight += batch_weight(row->n_ops);
	return 0;
}

static int replay_cb(void *vctx, const store_edit *row)
{
	return eng_replay_row(vctx, row, NULL);
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
	scene_rt *rt = eng_find_scene(e, name);
	if (!c.sc)
		return RIGD_E_NOMEM;
	scene_set_max_nodes(c.sc, INT_MAX);
	/* The dims come with the scene's row, never from its log. */
	scene_set_dims(c.sc, rt ? rt->dims : 3);
	int err = store_snapshot_latest(e->st, id, upto, snap_load_cb, &c);
	if (err == RIGD_E_STORAGE && !e->errmsg[0])
		eng_set_errmsg(e, "%s", store_errmsg(e->st));
	/* The assets its layers may name, up to the seq it is built for (a
	 * snapshot does not hold them: the store's rows do). */
	if (!err)
		err = eng_assets_register(e, id, c.sc, upto);
	if (!err) {
		e->errmsg[0] = 0;
		/* The JSON only of rows that have no binary image. */
		err = store_edits_ex(e->st, id, c.expect - 1, upto, 0, replay_cb, &c);
		if (err == RIGD_E_STORAGE && !e->errmsg[0])
			eng_set_errmsg(e, "%s", store_errmsg(e->st));
	}
	edit_batch_release(&c.ops);
	if (!err && upto >= 0 && c.expect - 1 != upto) {
		eng_set_errmsg(e, "scene '%s': the log ends at seq %lld, before %lld", name,
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
int eng_load_scene(engine *e, scene_rt *rt)
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
	eng_hist_clear(rt);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The snapshot policy, and writing a snapshot inside a commit. */

bool eng_snapshot_due(const engine *e, const scene_rt *rt, int64_t weight)
{
	int64_t every = e->opts.snapshot_ops;
	int64_t by_size = scene_count(rt->sc);
	return weight >= (every > by_size ? every : by_size);
}

/* Writes a snapshot of rt's scene as it is in memory, as of seq 'seq'.
 * RIGD_E_NOMEM when it cannot be encoded (the caller may go on without it). */
int eng_put_snapshot(engine *e, const scene_rt *rt, const scene *s, int64_t seq)
{
	/* Inside the transaction of the rows up to 'seq': a snapshot never
	 * runs ahead of its log. */
	assert(store_in_transaction(e->st));
	bytes b = { 0 };
	int err = eng_snap_encode(s, &b);
	if (!err) {
		store_snapshot sn = {
			.scene_id = rt->id,
			.seq = seq,
			.format = (int)eng_snap_format(&b),
			.n_nodes = scene_count(s),
			.hash = fnv1a(b.p, b.len, FNV_OFFSET),
			.data = b.p,
			.len = b.len,
		};
		err = store_snapshot_put(e->st, &sn);
		if (err)
			eng_set_errmsg(e, "%s", store_errmsg(e->st));
		else
			e->stats.snapshots++;
	}
	free(b.p);
	return err;
}

/* ------------------------------------------------------------------------ */
/* A scene as it was at a seq. */

int engine_at(engine *e, const char *name, int64_t seq, scene **out)
{
	scene_rt *rt = eng_find_scene(e, name);
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

