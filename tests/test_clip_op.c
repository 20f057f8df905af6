/*
 * test_clip_op.c: the clip op (server/core/edit_clip.c) on skeletons read
 * by server/codec/skel_clips_read.c from the synthetic files of
 * tests/data/clips, as docs/clips.md ("Playing a clip") states it.
 *
 * The expected sets are computed here from the clip sampler (clip_sample,
 * checked against hand-worked values and the runtimes in unit_clip and
 * unit_clip_codec), the bones' setup channels read by this test itself
 * from the file with cJSON, and the documented conversions to rigd's frame
 * (Spine: t = (x, -y), angle = rotation, shear = (shearX, shearY);
 * DragonBones: t = (x, y), angle = -skY, shear = (0, skY - skX)); a weight
 * w by the documented blend current + (target - current) w, the angle the
 * short way. Then: the attachment and draw-order keys by hand, roots,
 * undo bit for bit, a replay of the resolved sets giving the same scene,
 * a deleted bone skipped, refusals by code and field, and the op's time
 * on a 100-bone, 120-slot skeleton with 20 clips (printed, not asserted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "codec/dragonbones.h"
#include "codec/skel_clips_read.h"
#include "codec/spine.h"
#include "core/asset.h"
#include "core/clip.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "core/skel_clips.h"

#define DATA RIGD_SOURCE_DIR "/tests/data/clips/"
#define TOL 1e-9

/* ---------- helpers ---------- */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* spine_walk.json with a default skin holding the attachments its slot
 * 'hand' shows ("hand" in the setup pose) and keys ("fist"). Owned. */
static char *walk_text(void)
{
	char *text = read_file(DATA "spine_walk.json");
	cJSON *doc = cJSON_Parse(text);
	char *out;

	assert_non_null(doc);
	cJSON *skins = cJSON_Parse("[{\"name\":\"default\",\"attachments\":{\"hand\":{"
				   "\"hand\":{\"width\":8,\"height\":8},"
				   "\"fist\":{\"width\":8,\"height\":8}}}}]");
	cJSON_AddItemToObject(doc, "skins", skins);
	out = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	free(text);
	return out;
}

/* A 2D scene with skeleton 'text' (a Spine skeleton or a DragonBones
 * _ske.json) imported as file 'file': its nodes, its asset and its clips. */
static scene *scene_of(int kind, const char *text, const char *file)
{
	size_t n = strlen(text) + strlen(file) + 64;
	char *body = malloc(n);
	scene *s = scene_new();
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	skel_clips *k;
	int rc;

	assert_non_null(body);
	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	snprintf(body, n, "{\"file\":\"%s\",\"skeleton\":%s}", file, text);
	if (kind == ASSET_SPINE) {
		spine_import in;

		if (spine_import_decode(body, strlen(body), 1 << 25, &in, &err) != 0)
			fail_msg("decode: %s", err.message);
		rc = spine_import_batch(&in, s, &b, &rep, &err);
		spine_import_release(&in);
	} else {
		dragonbones_import in;

		if (dragonbones_import_decode(body, strlen(body), 1 << 25, &in, &err) != 0)
			fail_msg("decode: %s", err.message);
		rc = dragonbones_import_batch(&in, s, &b, &rep, &err);
		dragonbones_import_release(&in);
	}
	if (rc)
		fail_msg("batch: %s", err.message);
	assert_int_equal(asset_set_add(scene_assets(s), rep.file, rep.ids ? rep.ids : "", rep.ids_len), 0);
	if (skel_clips_read(kind, rep.file, rep.asset, rep.asset_len, &k, &err) != 0)
		fail_msg("skel_clips_read: %s (%s)", err.message, err.field);
	assert_int_equal(scene_skel_add(s, k), 0);
	if (edit_apply(s, &b, NULL, NULL, &err) != 0)
		fail_msg("apply: %s", err.message);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	free(body);
	scene_update(s, 1, NULL, NULL);
	return s;
}

static scene *walk_scene(void)
{
	char *text = walk_text();
	scene *s = scene_of(ASSET_SPINE, text, "walk.json");

	free(text);
	return s;
}

/* A clip op batch. */
static void clip_batch(edit_batch *b, const char *name, double time, const char *file,
		       const char *root, double weight)
{
	edit_op *op;

	edit_batch_init(b);
	assert_non_null(op = edit_batch_add(b, EDIT_CLIP, ""));
	assert_int_equal(edit_op_set_name(op, name), 0);
	op->fields |= EDIT_F_CLIP_TIME;
	op->time_s = time;
	if (file) {
		assert_int_equal(edit_op_set_mesh(op, file), 0);
		op->fields = (op->fields & ~EDIT_F_MESH) | EDIT_F_CLIP_FILE;
	}
	if (root) {
		snprintf(op->root, sizeof(op->root), "%s", root);
		op->fields |= EDIT_F_ROOT;
	}
	if (!isnan(weight)) {
		op->weight = weight;
		op->fields |= EDIT_F_WEIGHT;
	}
}

/* Applies a clip op; 0 with the resolved batch and the inverse, or the code. */
static int play(scene *s, const char *name, double time, const char *file, const char *root,
		double weight, edit_batch *resolved, edit_batch *inverse, edit_error *err)
{
	edit_batch b;
	int rc;

	clip_batch(&b, name, time, file, root, weight);
	rc = edit_apply_resolve(s, &b, NULL, NULL, inverse, resolved, err);
	edit_batch_release(&b);
	if (rc == 0)
		scene_update(s, 2, NULL, NULL);
	return rc;
}

static const edit_op *op_for(const edit_batch *b, const char *id)
{
	for (int i = 0; i < b->n_ops; i++)
		if (!strcmp(b->ops[i].id, id))
			return &b->ops[i];
	return NULL;
}

static double num_or(const cJSON *o, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static double wrap180(double d)
{
	d = fmod(d, 360);
	if (d > 180)
		d -= 360;
	if (d <= -180)
		d += 360;
	return d;
}

/* ---------- Spine: bones ---------- */

/* Per bone of spine_walk.json, from the file as this test reads it: its
 * node id (the names are plain) and its Spine setup channels. */
typedef struct setup_bone {
	char id[64];
	double x, y, rot, sx, sy, shx, shy;
} setup_bone;

static int walk_setup(setup_bone *out)
{
	char *text = read_file(DATA "spine_walk.json");
	cJSON *doc = cJSON_Parse(text), *b;
	int n = 0;

	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(doc, "bones")) {
		snprintf(out[n].id, sizeof(out[n].id), "%s",
			 cJSON_GetObjectItemCaseSensitive(b, "name")->valuestring);
		out[n].x = num_or(b, "x", 0);
		out[n].y = num_or(b, "y", 0);
		out[n].rot = num_or(b, "rotation", 0);
		out[n].sx = num_or(b, "scaleX", 1);
		out[n].sy = num_or(b, "scaleY", 1);
		out[n].shx = num_or(b, "shearX", 0);
		out[n].shy = num_or(b, "shearY", 0);
		n++;
	}
	cJSON_Delete(doc);
	free(text);
	return n;
}

/* The set of bone i at 'time' and weight 'w' from the node's channels
 * 'cur' (t, angle, s, shear before the op) checked against the sampler
 * and the documented formulas. */
static void check_spine_bone(const edit_batch *res, const clip *c, const setup_bone *sb, int i,
			     double time, double w, const node_props *cur)
{
	clip_bone_pose p[8];
	const edit_op *op = op_for(res, sb[i].id);
	double cur_angle = quat_to_angle2d_deg(cur->r);

	assert_true(c->n_bones <= 8);
	clip_sample(c, time, 0, p);
	if (!p[i].mask) {
		assert_null(op);
		return;
	}
	assert_non_null(op);
	assert_int_equal(op->kind, EDIT_SET);
	/* Spine's absolute values: setup + sampled (scale times), then rigd's
	 * frame, each channel the clip keys; the others stay the node's. */
	double x = (p[i].mask & CLIP_M_X) ? sb[i].x + p[i].ch.x : cur->t.x;
	double y = (p[i].mask & CLIP_M_Y) ? -(sb[i].y + p[i].ch.y) : cur->t.y;
	double a = (p[i].mask & CLIP_M_ROTATE) ? sb[i].rot + p[i].ch.rotate_deg : cur_angle;
	double sx = (p[i].mask & CLIP_M_SCALE_X) ? sb[i].sx * p[i].ch.scale_x : cur->s.x;
	double sy = (p[i].mask & CLIP_M_SCALE_Y) ? sb[i].sy * p[i].ch.scale_y : cur->s.y;
	double hx = (p[i].mask & CLIP_M_SHEAR_X) ? sb[i].shx + p[i].ch.shear_x_deg : cur->shear[0];
	double hy = (p[i].mask & CLIP_M_SHEAR_Y) ? sb[i].shy + p[i].ch.shear_y_deg : cur->shear[1];

	x = cur->t.x + (x - cur->t.x) * w;
	y = cur->t.y + (y - cur->t.y) * w;
	a = cur_angle + wrap180(a - cur_angle) * w;
	sx = cur->s.x + (sx - cur->s.x) * w;
	sy = cur->s.y + (sy - cur->s.y) * w;
	hx = cur->shear[0] + (hx - cur->shear[0]) * w;
	hy = cur->shear[1] + (hy - cur->shear[1]) * w;
	if (p[i].mask & (CLIP_M_X | CLIP_M_Y)) {
		assert_true(op->fields & EDIT_F_T);
		assert_true(fabs(op->t.x - x) < TOL && fabs(op->t.y - y) < TOL && op->t.z == 0);
	} else {
		assert_false(op->fields & EDIT_F_T);
	}
	if (p[i].mask & CLIP_M_ROTATE) {
		assert_true(op->fields & EDIT_F_R);
		assert_true(fabs(wrap180(quat_to_angle2d_deg(op->r) - a)) < TOL);
	} else {
		assert_false(op->fields & EDIT_F_R);
	}
	if (p[i].mask & (CLIP_M_SCALE_X | CLIP_M_SCALE_Y)) {
		assert_true(op->fields & EDIT_F_S);
		assert_true(fabs(op->s.x - sx) < TOL && fabs(op->s.y - sy) < TOL);
	} else {
		assert_false(op->fields & EDIT_F_S);
	}
	if (p[i].mask & (CLIP_M_SHEAR_X | CLIP_M_SHEAR_Y)) {
		assert_true(op->fields & EDIT_F_SHEAR);
		assert_true(fabs(op->shear_deg[0] - hx) < TOL && fabs(op->shear_deg[1] - hy) < TOL);
	} else {
		assert_false(op->fields & EDIT_F_SHEAR);
	}
}

static void spine_bones_at_times_and_weights(void **state)
{
	static const double times[] = { 0, 0.1, 0.25, 0.4, 0.5, 0.75, 1, 1.3, 1.5 };
	static const double weights[] = { 1, 0.5, 0.25, 0 };
	setup_bone sb[8];
	int nb = walk_setup(sb);

	(void)state;
	for (size_t t = 0; t < sizeof(times) / sizeof(times[0]); t++)
		for (size_t wi = 0; wi < sizeof(weights) / sizeof(weights[0]); wi++) {
			scene *s = walk_scene();
			const clip *c = clip_set_find(&skel_set_at(scene_skels(s), 0)->clips, "walk");
			node_props cur[8];
			edit_batch res, inv;
			edit_error err;

			/* Start away from the setup pose, so that a weight
			 * blends from something else: one walk at 1.2 s. */
			assert_int_equal(play(s, "walk", 1.2, NULL, NULL, NAN, NULL, NULL, &err), 0);
			for (int i = 0; i < nb; i++)
				scene_props(s, scene_find(s, sb[i].id), &cur[i]);
			if (play(s, "walk", times[t], NULL, NULL, weights[wi], &res, &inv, &err) != 0)
				fail_msg("walk at %g w %g: %s", times[t], weights[wi], err.message);
			for (int i = 0; i < nb; i++)
				check_spine_bone(&res, c, sb, i, times[t], weights[wi], &cur[i]);
			for (int i = 0; i < res.n_ops; i++)
				assert_int_equal(res.ops[i].kind, EDIT_SET);
			edit_batch_release(&res);
			edit_batch_release(&inv);
			scene_free(s);
		}
}

/* The hand numbers of the worked Bezier (docs/clips.md): arm's rotation
 * at 0.25 s is its setup 10 plus 18.44660103868307. */
static void spine_worked_example(void **state)
{
	scene *s = walk_scene();
	edit_batch res;
	edit_error err;

	(void)state;
	assert_int_equal(play(s, "walk", 0.25, NULL, NULL, NAN, &res, NULL, &err), 0);
	const edit_op *arm = op_for(&res, "arm");
	assert_non_null(arm);
	assert_true(fabs(quat_to_angle2d_deg(arm->r) - (10 + 18.44660103868307)) < 1e-9);
	/* translate: before its first key (0.5 s) the setup pose: (0, -0). */
	assert_true(arm->t.x == 0 && arm->t.y == 0 && !signbit(arm->t.y));
	/* scale x 2 from 0 s (to 2 at 1 s), y from 1 to 0.5 linearly. */
	assert_true(fabs(arm->s.x - 2) < 1e-12 && fabs(arm->s.y - 0.875) < 1e-7);
	edit_batch_release(&res);
	scene_free(s);
}

/* ---------- Spine: slots, draw order, time clamping ---------- */

static const char *layer_of(const scene *s, const char *id)
{
	node_props p;

	scene_props(s, scene_find(s, id), &p);
	return p.layer;
}

static double z_of(const scene *s, const char *id)
{
	node_props p;

	scene_props(s, scene_find(s, id), &p);
	return p.z_right;
}

static void spine_slots_and_order(void **state)
{
	scene *s = walk_scene();
	edit_batch res;
	edit_error err;

	(void)state;
	/* Before 0.5 s: the setup attachment and order (z = slot index). */
	assert_int_equal(play(s, "walk", 0.4, NULL, NULL, NAN, &res, NULL, &err), 0);
	assert_string_equal(layer_of(s, "slot:hand"), "walk.json#hand.hand");
	assert_true(op_for(&res, "slot:hand")->fields & EDIT_F_LAYER);
	assert_true(z_of(s, "slot:body") == 0 && z_of(s, "slot:hand") == 1 && z_of(s, "slot:foot") == 2);
	assert_non_null(op_for(&res, "slot:body")); /* the draw order sets every z */
	edit_batch_release(&res);
	/* From 0.5 s: fist, and body moved up 2 places: hand, foot, body. */
	assert_int_equal(play(s, "walk", 0.5, NULL, NULL, 0.5, &res, NULL, &err), 0);
	assert_string_equal(layer_of(s, "slot:hand"), "walk.json#hand.fist");
	assert_true(z_of(s, "slot:hand") == 0 && z_of(s, "slot:foot") == 1 && z_of(s, "slot:body") == 2);
	edit_batch_release(&res);
	/* From 1 s nothing shows; from the key at 1.2 s (a 32-bit float, as
	 * the runtime keeps key times: 1.2000000477) the setup order is back. */
	assert_int_equal(play(s, "walk", 1.1, NULL, NULL, NAN, &res, NULL, &err), 0);
	assert_null(layer_of(s, "slot:hand"));
	assert_true(z_of(s, "slot:body") == 2);
	edit_batch_release(&res);
	assert_int_equal(play(s, "walk", 1.2, NULL, NULL, NAN, &res, NULL, &err), 0);
	assert_true(z_of(s, "slot:body") == 2);
	edit_batch_release(&res);
	assert_int_equal(play(s, "walk", 1.2000001, NULL, NULL, NAN, &res, NULL, &err), 0);
	assert_true(z_of(s, "slot:body") == 0 && z_of(s, "slot:foot") == 2);
	edit_batch_release(&res);
	/* idle keys no slot and has no draw-order timeline: bones only. */
	assert_int_equal(play(s, "idle", 1, NULL, NULL, NAN, &res, NULL, &err), 0);
	assert_int_equal(res.n_ops, 1);
	assert_string_equal(res.ops[0].id, "root");
	edit_batch_release(&res);
	scene_free(s);
}

/* Times outside [0, duration] are the ends: the same sets, bit for bit. */
static void time_is_clamped(void **state)
{
	scene *s = walk_scene();
	const clip *c = clip_set_find(&skel_set_at(scene_skels(s), 0)->clips, "walk");
	edit_batch a, b;
	edit_error err;

	(void)state;
	assert_int_equal(play(s, "walk", c->duration, NULL, NULL, NAN, &a, NULL, &err), 0);
	assert_int_equal(play(s, "walk", c->duration + 100, NULL, NULL, NAN, &b, NULL, &err), 0);
	assert_int_equal(a.n_ops, b.n_ops);
	for (int i = 0; i < a.n_ops; i++)
		assert_memory_equal(&a.ops[i].t, &b.ops[i].t, sizeof(vec3));
	edit_batch_release(&a);
	edit_batch_release(&b);
	assert_int_equal(play(s, "walk", 0, NULL, NULL, NAN, &a, NULL, &err), 0);
	assert_int_equal(play(s, "walk", -3, NULL, NULL, NAN, &b, NULL, &err), 0);
	assert_int_equal(a.n_ops, b.n_ops);
	for (int i = 0; i < a.n_ops; i++)
		assert_memory_equal(&a.ops[i].r, &b.ops[i].r, sizeof(quat));
	edit_batch_release(&a);
	edit_batch_release(&b);
	scene_free(s);
}

/* ---------- roots, undo, replay, deleted bones ---------- */

static void root_limits_the_bones(void **state)
{
	scene *s = walk_scene();
	edit_batch res;
	edit_error err;

	(void)state;
	assert_int_equal(play(s, "walk", 0.6, NULL, "arm", NAN, &res, NULL, &err), 0);
	/* arm and its slot hand (keyed, and in the draw order) only. */
	assert_int_equal(res.n_ops, 2);
	assert_non_null(op_for(&res, "arm"));
	assert_non_null(op_for(&res, "slot:hand"));
	assert_null(op_for(&res, "leg"));
	edit_batch_release(&res);
	/* idle animates only root: nothing under leg. */
	assert_int_equal(play(s, "idle", 1, NULL, "leg", NAN, &res, NULL, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "root");
	scene_free(s);
}

static void undo_restores_the_bits(void **state)
{
	scene *s = walk_scene();
	uint64_t before = scene_hash(s);
	edit_batch inv;
	edit_error err;

	(void)state;
	assert_int_equal(play(s, "walk", 0.7, NULL, NULL, 0.3, NULL, &inv, &err), 0);
	assert_true(scene_hash(s) != before);
	assert_int_equal(edit_revert(s, &inv), 0);
	scene_update(s, 3, NULL, NULL);
	assert_true(scene_hash(s) == before);
	assert_string_equal(layer_of(s, "slot:hand"), "walk.json#hand.hand");
	edit_batch_release(&inv);
	scene_free(s);
}

static void replay_gives_the_same_scene(void **state)
{
	scene *s = walk_scene(), *r = walk_scene();
	edit_batch res;
	edit_error err;

	(void)state;
	assert_int_equal(play(s, "walk", 0.9, NULL, NULL, 0.6, &res, NULL, &err), 0);
	assert_true(edit_batch_is_absolute(&res));
	assert_int_equal(edit_apply(r, &res, NULL, NULL, &err), 0);
	scene_update(r, 2, NULL, NULL);
	assert_true(scene_hash(r) == scene_hash(s));
	edit_batch_release(&res);
	scene_free(s);
	scene_free(r);
}

static void deleted_bone_is_skipped(void **state)
{
	scene *s = walk_scene();
	edit_batch del, res;
	edit_error err;

	(void)state;
	edit_batch_init(&del);
	assert_non_null(edit_batch_add(&del, EDIT_DELETE, "leg"));
	assert_int_equal(edit_apply(s, &del, NULL, NULL, &err), 0);
	edit_batch_release(&del);
	assert_int_equal(play(s, "walk", 0.5, NULL, NULL, NAN, &res, NULL, &err), 0);
	assert_null(op_for(&res, "leg"));
	assert_null(op_for(&res, "slot:foot"));
	assert_non_null(op_for(&res, "arm"));
	edit_batch_release(&res);
	/* With arm gone too, walk animates nothing left but body's z. */
	edit_batch_init(&del);
	assert_non_null(edit_batch_add(&del, EDIT_DELETE, "arm"));
	assert_non_null(edit_batch_add(&del, EDIT_DELETE, "slot:body"));
	assert_int_equal(edit_apply(s, &del, NULL, NULL, &err), 0);
	edit_batch_release(&del);
	assert_int_equal(play(s, "walk", 0.5, NULL, NULL, NAN, &res, NULL, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "clip");
	scene_free(s);
}

/* ---------- refusals ---------- */

static void expect(scene *s, const char *name, double time, const char *file, const char *root,
		   double w, int code, const char *field)
{
	edit_batch res;
	edit_error err;
	uint64_t h = scene_hash(s);

	if (play(s, name, time, file, root, w, &res, NULL, &err) != code)
		fail_msg("%s at %g: %s (%s)", name, time, err.message, err.field);
	assert_string_equal(err.field, field);
	assert_int_equal(err.op, 0);
	assert_non_null(strstr(err.message, field));
	assert_int_equal(res.n_ops, 0);
	assert_true(scene_hash(s) == h);
}

static void refusals(void **state)
{
	scene *s = walk_scene(), *flat3d = scene_new(), *bare = scene_new();
	edit_batch b;
	edit_error err;

	(void)state;
	expect(s, "fly", 0, NULL, NULL, NAN, RIGD_E_BAD_FIELD, "clip");
	expect(s, "walk", 0, "other.json", NULL, NAN, RIGD_E_BAD_FIELD, "file");
	expect(s, "walk", 0, NULL, "nope", NAN, RIGD_E_UNKNOWN_NODE, "root");
	expect(s, "walk", NAN, NULL, NULL, NAN, RIGD_E_BAD_FIELD, "time");
	expect(s, "walk", INFINITY, NULL, NULL, NAN, RIGD_E_BAD_FIELD, "time");
	expect(s, "walk", 0, NULL, NULL, 1.5, RIGD_E_BAD_FIELD, "weight");
	expect(s, "walk", 0, NULL, NULL, -0.1, RIGD_E_BAD_FIELD, "weight");
	assert_int_equal(play(s, "walk", 0, "walk.json", NULL, NAN, NULL, NULL, &err), 0);
	/* A 3D scene, and a 2D scene without a skeleton. */
	expect(flat3d, "walk", 0, NULL, NULL, NAN, RIGD_E_BAD_FIELD, "clip");
	assert_int_equal(scene_set_dims(bare, 2), 0);
	expect(bare, "walk", 0, NULL, NULL, NAN, RIGD_E_BAD_FIELD, "clip");
	/* A clip op needs its clip and its time. */
	edit_batch_init(&b);
	assert_non_null(edit_batch_add(&b, EDIT_CLIP, ""));
	b.ops[0].fields = EDIT_F_CLIP_TIME;
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "clip");
	b.ops[0].fields = EDIT_F_CLIP_NAME;
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "time");
	edit_batch_release(&b);
	scene_free(s);
	scene_free(flat3d);
	scene_free(bare);
}

/* Two skeletons: the op must name its file. */
static void two_skeletons_need_a_file(void **state)
{
	scene *s = walk_scene();
	char *text = walk_text();
	edit_error err;
	skel_clips *k;

	(void)state;
	if (skel_clips_read(ASSET_SPINE, "walk2.json", text, strlen(text), &k, &err) != 0)
		fail_msg("%s (%s)", err.message, err.field);
	assert_int_equal(scene_skel_add(s, k), 0);
	assert_int_equal(asset_set_add(scene_assets(s), "walk2.json", "hand.fist\nhand.hand\n", 20), 0);
	expect(s, "walk", 0, NULL, NULL, NAN, RIGD_E_BAD_FIELD, "file");
	if (play(s, "walk", 0.3, "walk2.json", NULL, NAN, NULL, NULL, &err) != 0)
		fail_msg("%s (%s)", err.message, err.field);
	free(text);
	scene_free(s);
}

/* ---------- DragonBones ---------- */

static void dragonbones_bones(void **state)
{
	static const double times[] = { 0, 0.1, 0.3, 0.55, 1 };
	char *text = read_file(DATA "dragonbones_swing.json");
	cJSON *doc = cJSON_Parse(text);
	const cJSON *arm = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "armature"), 0);
	const cJSON *bones = cJSON_GetObjectItemCaseSensitive(arm, "bone"), *bone;

	(void)state;
	for (size_t t = 0; t < sizeof(times) / sizeof(times[0]); t++) {
		scene *s = scene_of(ASSET_DRAGONBONES, text, "swing_ske.json");
		const skel_clips *sk = skel_set_at(scene_skels(s), 0);
		const clip *c = clip_set_find(&sk->clips, "swing");
		clip_bone_pose p[8];
		edit_batch res;
		edit_error err;
		int i = 0;

		assert_non_null(c);
		assert_true(c->n_bones <= 8);
		clip_sample(c, fmin(times[t], c->duration), 0, p);
		assert_int_equal(play(s, "swing", times[t], NULL, NULL, NAN, &res, NULL, &err), 0);
		cJSON_ArrayForEach(bone, bones) {
			const cJSON *tr = cJSON_GetObjectItemCaseSensitive(bone, "transform");
			const char *id = cJSON_GetObjectItemCaseSensitive(bone, "name")->valuestring;
			const edit_op *op = op_for(&res, id);
			double sky = num_or(tr, "skY", 0), skx = num_or(tr, "skX", 0);

			if (!p[i].mask) {
				assert_null(op);
				i++;
				continue;
			}
			assert_non_null(op);
			/* DragonBones: angle = -(skY + rotate), shear y = -(skew). */
			if (p[i].mask & CLIP_M_ROTATE)
				assert_true(fabs(wrap180(quat_to_angle2d_deg(op->r) +
							 (sky + p[i].ch.rotate_deg))) < TOL);
			if (p[i].mask & CLIP_M_SKEW)
				assert_true(fabs(op->shear_deg[1] -
						 -((skx - sky) + p[i].ch.shear_x_deg)) < TOL);
			if (p[i].mask & CLIP_M_X)
				assert_true(fabs(op->t.x - (num_or(tr, "x", 0) + p[i].ch.x)) < TOL);
			if (p[i].mask & CLIP_M_SCALE_X)
				assert_true(fabs(op->s.x - num_or(tr, "scX", 1) * p[i].ch.scale_x) < TOL);
			i++;
		}
		edit_batch_release(&res);
		scene_free(s);
	}
	cJSON_Delete(doc);
	free(text);
}

/* ---------- the time of one op ---------- */

/* A Spine skeleton of 100 bones (a chain of 10 chains of 10), 120 slots
 * and 20 clips, each clip keying rotate, translate and scale of every
 * bone with 30 Bezier keys, attachments of 12 slots and a draw order. */
static char *big_skeleton(void)
{
	size_t cap = 16u << 20, n = 0;
	char *b = malloc(cap);

#define PUT(...) (n += (size_t)snprintf(b + n, cap - n, __VA_ARGS__))
	assert_non_null(b);
	PUT("{\"skeleton\":{\"spine\":\"4.2.43\"},\"bones\":[{\"name\":\"b0\"}");
	for (int i = 1; i < 100; i++)
		PUT(",{\"name\":\"b%d\",\"parent\":\"b%d\",\"x\":10,\"rotation\":%d}", i,
		    i % 10 ? i - 1 : 0, i % 7);
	PUT("],\"slots\":[");
	for (int i = 0; i < 120; i++)
		PUT("%s{\"name\":\"s%d\",\"bone\":\"b%d\",\"attachment\":\"a\"}", i ? "," : "", i,
		    i % 100);
	PUT("],\"skins\":[{\"name\":\"default\",\"attachments\":{");
	for (int i = 0; i < 120; i++)
		PUT("%s\"s%d\":{\"a\":{\"width\":4,\"height\":4},\"b\":{\"width\":4,\"height\":4}}",
		    i ? "," : "", i);
	PUT("}}],\"animations\":{");
	for (int c = 0; c < 20; c++) {
		PUT("%s\"clip%d\":{\"bones\":{", c ? "," : "", c);
		for (int i = 0; i < 100; i++) {
			PUT("%s\"b%d\":{", i ? "," : "", i);
			static const char *const tl[3] = { "rotate", "translate", "scale" };
			for (int t = 0; t < 3; t++) {
				PUT("%s\"%s\":[", t ? "," : "", tl[t]);
				for (int k = 0; k < 30; k++)
					PUT("%s{\"time\":%g,%s,\"curve\":[%s]}", k ? "," : "", k / 10.0,
					    t == 0 ? "\"value\":15" : "\"x\":1.5,\"y\":0.5",
					    t == 0 ? "0.25,0,0.75,15"
						   : "0.25,0,0.75,1.5,0.25,0,0.75,0.5");
				PUT("]");
			}
			PUT("}");
		}
		PUT("},\"slots\":{");
		for (int i = 0; i < 12; i++)
			PUT("%s\"s%d\":{\"attachment\":[{\"time\":0,\"name\":\"b\"},{\"time\":1,\"name\":\"a\"}]}",
			    i ? "," : "", i * 10);
		PUT("},\"drawOrder\":[{\"time\":0.5,\"offsets\":[{\"slot\":\"s3\",\"offset\":50}]}]}");
	}
	PUT("}}");
#undef PUT
	assert_true(n < cap - 1);
	return b;
}

static void op_time(void **state)
{
	char *text = big_skeleton();
	scene *s = scene_of(ASSET_SPINE, text, "big.json");
	const int runs = 200;
	struct timespec t0, t1;
	double best = 1e9, total = 0;
	edit_error err;

	(void)state;
	assert_int_equal(skel_set_at(scene_skels(s), 0)->clips.n, 20);
	for (int r = 0; r < runs; r++) {
		edit_batch res, inv;
		double us;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(play(s, r % 2 ? "clip7" : "clip19", 0.05 + r * 0.013, NULL, NULL,
				      r % 3 ? 1 : 0.5, &res, &inv, &err), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
		best = fmin(best, us);
		total += us;
		assert_int_equal(res.n_ops, 100 + 120);
		edit_batch_release(&res);
		assert_int_equal(edit_revert(s, &inv), 0);
	}
	printf("clip op, 100 bones, 120 slots, 20 clips: best %.0f us, mean %.0f us over %d runs "
	       "(resolve, apply with inverse and resolved batch, world update)\n",
	       best, total / runs, runs);
	scene_free(s);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spine_bones_at_times_and_weights),
		cmocka_unit_test(spine_worked_example),
		cmocka_unit_test(spine_slots_and_order),
		cmocka_unit_test(time_is_clamped),
		cmocka_unit_test(root_limits_the_bones),
		cmocka_unit_test(undo_restores_the_bits),
		cmocka_unit_test(replay_gives_the_same_scene),
		cmocka_unit_test(deleted_bone_is_skipped),
		cmocka_unit_test(refusals),
		cmocka_unit_test(two_skeletons_need_a_file),
		cmocka_unit_test(dragonbones_bones),
		cmocka_unit_test(op_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
