/*
 * test_spine.c: the Spine 4.2 skeleton import (server/codec/spine.c,
 * spine_kept.c, spine_batch.c).
 *
 * The synthetic files of tests/data/spine (chain.json: a chain with
 * translation, rotation, scale and shear on several bones, slots in a draw
 * order, two skins, unused attachments, a mesh, clips; inherit.json: the
 * five inherit modes under a rotated, non-uniformly scaled parent and
 * under a reflected one; constraints.json: IK, transform, path and physics
 * constraints, events, a section rigd does not know) decoded, turned into
 * a batch, applied to a 2D scene; every node's world matrix compared with
 * an evaluation, written here from Spine's documented world-transform
 * formulas in Spine's y-up frame, of the file as this test reads it
 * itself (cJSON), carried to rigd's y-down frame. A few numbers by hand.
 * The report's counts, ids and lines; every refusal by code, field and
 * message; every prefix of a body and damaged bodies refused with nothing
 * kept or accepted whole.
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

#include <cjson/cJSON.h>

#include "codec/asset_check.h"
#include "codec/spine.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#define DATA RIGD_SOURCE_DIR "/tests/data/spine/"
#define TOL 1e-6

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

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

/* The body {"file": FILE, "skeleton": TEXT} (no "file" when NULL). */
static char *body_of(const char *skeleton, const char *file)
{
	size_t n = strlen(skeleton) + (file ? strlen(file) : 0) + 64;
	char *b = malloc(n);

	assert_non_null(b);
	if (file)
		snprintf(b, n, "{\"file\":\"%s\",\"skeleton\":%s}", file, skeleton);
	else
		snprintf(b, n, "{\"skeleton\":%s}", skeleton);
	return b;
}

static char *body_of_file(const char *name, const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), DATA "%s", name);
	char *text = read_file(path);
	char *b = body_of(text, file);
	free(text);
	return b;
}

static void decode_ok(const char *body, spine_import *in)
{
	edit_error err;

	if (spine_import_decode(body, strlen(body), 1 << 20, in, &err) != 0)
		fail_msg("refused: %s (field %s)", err.message, err.field);
}

/* A 2D scene holding the import's asset, with the batch applied and its
 * worlds up to date. */
static scene *import_into_scene(const spine_import *in, skel_import_report *rep)
{
	scene *s = scene_new();
	edit_batch b;
	edit_error err;

	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	if (spine_import_batch(in, s, &b, rep, &err) != 0)
		fail_msg("batch refused: %s", err.message);
	assert_int_equal(asset_set_add(scene_assets(s), rep->file, rep->ids ? rep->ids : "",
				       rep->ids_len),
			 0);
	if (edit_apply(s, &b, NULL, NULL, &err) != 0)
		fail_msg("apply refused: %s (field %s)", err.message, err.field);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

/* The node whose name is 'name', or -1. */
static int node_named(const scene *s, const char *name)
{
	node_props p;

	for (int pos = 0; pos < scene_count(s); pos++) {
		int n = scene_at(s, pos);

		scene_props(s, n, &p);
		if (p.name && !strcmp(p.name, name))
			return n;
	}
	return -1;
}

static void assert_near(double got, double want, const char *what)
{
	if (!(fabs(got - want) <= TOL))
		fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* ---------- Spine's world transform, evaluated independently ---------- */

/* A bone's world in Spine's y-up frame: x' = a x + b y + wx, y' = c x + d y + wy. */
typedef struct sp_world {
	char name[128];
	int parent;
	double a, b, c, d, wx, wy;
} sp_world;

static double num_or(const cJSON *o, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static double rad(double deg)
{
	return deg * M_PI / 180.0;
}

/*
 * Spine's setup-pose world of every bone of 'file' (the file's own text),
 * from the formulas of Spine's runtime documentation: local
 *   la = cos(rot+shx) sx, lb = cos(rot+90+shy) sy,
 *   lc = sin(rot+shx) sx, ld = sin(rot+90+shy) sy;
 * a root's world is its local at (x, y); a child's translation is
 * parent * (x, y) and its 2x2 depends on its inherit mode.
 */
static int spine_worlds_of(const char *text, sp_world *w, int cap)
{
	cJSON *root = cJSON_Parse(text), *bone;
	int n = 0;

	assert_non_null(root);
	cJSON_ArrayForEach(bone, cJSON_GetObjectItemCaseSensitive(root, "bones")) {
		const cJSON *pn = cJSON_GetObjectItemCaseSensitive(bone, "parent");
		const cJSON *inh = cJSON_GetObjectItemCaseSensitive(bone, "inherit");
		const char *mode = cJSON_IsString(inh) ? inh->valuestring : "normal";
		double x = num_or(bone, "x", 0), y = num_or(bone, "y", 0);
		double rot = num_or(bone, "rotation", 0);
		double sx = num_or(bone, "scaleX", 1), sy = num_or(bone, "scaleY", 1);
		double shx = num_or(bone, "shearX", 0), shy = num_or(bone, "shearY", 0);
		double la = cos(rad(rot + shx)) * sx, lb = cos(rad(rot + 90 + shy)) * sy;
		double lc = sin(rad(rot + shx)) * sx, ld = sin(rad(rot + 90 + shy)) * sy;
		sp_world *o = &w[n];

		assert_true(n < cap);
		snprintf(o->name, sizeof(o->name), "%s",
			 cJSON_GetObjectItemCaseSensitive(bone, "name")->valuestring);
		o->parent = -1;
		for (int i = 0; cJSON_IsString(pn) && i < n; i++)
			if (!strcmp(w[i].name, pn->valuestring))
				o->parent = i;
		if (o->parent < 0) {
			o->a = la, o->b = lb, o->c = lc, o->d = ld, o->wx = x, o->wy = y;
			n++;
			continue;
		}
		const sp_world *p = &w[o->parent];
		double pa = p->a, pb = p->b, pc = p->c, pd = p->d;

		o->wx = pa * x + pb * y + p->wx;
		o->wy = pc * x + pd * y + p->wy;
		if (!strcmp(mode, "normal")) {
			o->a = pa * la + pb * lc;
			o->b = pa * lb + pb * ld;
			o->c = pc * la + pd * lc;
			o->d = pc * lb + pd * ld;
		} else if (!strcmp(mode, "onlyTranslation")) {
			o->a = la, o->b = lb, o->c = lc, o->d = ld;
		} else if (!strcmp(mode, "noRotationOrReflection")) {
			double s = pa * pa + pc * pc, prx;

			if (s > 1e-4) {
				s = fabs(pa * pd - pb * pc) / s;
				pb = pc * s;
				pd = pa * s;
				prx = atan2(pc, pa) * 180 / M_PI;
			} else {
				pa = pc = 0;
				prx = 90 - atan2(pd, pb) * 180 / M_PI;
			}
			double rx = rad(rot + shx - prx), ry = rad(rot + shy - prx + 90);
			la = cos(rx) * sx, lb = cos(ry) * sy, lc = sin(rx) * sx, ld = sin(ry) * sy;
			o->a = pa * la - pb * lc;
			o->b = pa * lb - pb * ld;
			o->c = pc * la + pd * lc;
			o->d = pc * lb + pd * ld;
		} else {
			/* noScale, noScaleOrReflection */
			double r = rad(rot), za = pa * cos(r) + pb * sin(r), zc = pc * cos(r) + pd * sin(r);
			double s = hypot(za, zc);

			if (s > 1e-5)
				s = 1 / s;
			za *= s;
			zc *= s;
			s = hypot(za, zc);
			if (!strcmp(mode, "noScale") && pa * pd - pb * pc < 0)
				s = -s;
			r = M_PI / 2 + atan2(zc, za);
			double zb = cos(r) * s, zd = sin(r) * s;
			la = cos(rad(shx)) * sx, lb = cos(rad(90 + shy)) * sy;
			lc = sin(rad(shx)) * sx, ld = sin(rad(90 + shy)) * sy;
			o->a = za * la + zb * lc;
			o->b = za * lb + zb * ld;
			o->c = zc * la + zd * lc;
			o->d = zc * lb + zd * ld;
		}
		n++;
	}
	cJSON_Delete(root);
	return n;
}

/* spine_worlds_of the text of 'file'. */
static int spine_worlds(const char *file, sp_world *w, int cap)
{
	char *text = read_file(file);
	int n = spine_worlds_of(text, w, cap);

	free(text);
	return n;
}

/* Node 'n''s world against Spine's world 'w' carried to rigd (y-down):
 * translation (wx, -wy), x axis (a, -c), y axis (-b, d). */
static void assert_world(const scene *s, int n, const sp_world *w)
{
	mat4 m = scene_world(s, n);
	char what[200];

	assert_true(n >= 0);
	snprintf(what, sizeof(what), "%s: w12", w->name);
	assert_near(m.m[12], w->wx, what);
	snprintf(what, sizeof(what), "%s: w13", w->name);
	assert_near(m.m[13], -w->wy, what);
	snprintf(what, sizeof(what), "%s: w0", w->name);
	assert_near(m.m[0], w->a, what);
	snprintf(what, sizeof(what), "%s: w1", w->name);
	assert_near(m.m[1], -w->c, what);
	snprintf(what, sizeof(what), "%s: w4", w->name);
	assert_near(m.m[4], -w->b, what);
	snprintf(what, sizeof(what), "%s: w5", w->name);
	assert_near(m.m[5], w->d, what);
}

/* Every bone of data file 'name' imported, and every slot on its bone,
 * against the evaluation. */
static void check_file_worlds(const char *name)
{
	char path[512], *body = body_of_file(name, "t.json");
	sp_world w[64];
	spine_import in;
	skel_import_report rep;
	int n;

	snprintf(path, sizeof(path), DATA "%s", name);
	n = spine_worlds(path, w, 64);
	decode_ok(body, &in);
	assert_int_equal(in.n_bones, n);
	scene *s = import_into_scene(&in, &rep);
	for (int k = 0; k < n; k++)
		assert_world(s, node_named(s, w[k].name), &w[k]);
	for (int k = 0; k < in.n_slots; k++) {
		char slot[300];

		snprintf(slot, sizeof(slot), "slot:%s", in.slots[k].name);
		assert_world(s, node_named(s, slot), &w[in.slots[k].bone]);
	}
	scene_free(s);
	skel_import_report_release(&rep);
	spine_import_release(&in);
	free(body);
}

/* ---------- decode and batch ---------- */

static void chain_decoded(void **state)
{
	char *body = body_of_file("chain.json", "hero.json");
	spine_import in;
	(void)state;

	decode_ok(body, &in);
	assert_string_equal(in.file, "hero.json");
	assert_string_equal(in.version, "4.2.43");
	assert_int_equal(in.n_bones, 6);
	assert_int_equal(in.n_slots, 4);
	assert_int_equal(in.n_skins, 2);
	assert_int_equal(in.n_clips, 2);
	/* Ids by the rule: [A-Za-z0-9-] kept, other bytes '_' + hex ('_' 5f,
	 * '.' 2e, ':' 3a, ' ' 20). */
	assert_string_equal(in.bones[2].id, "spine_5f1");
	assert_string_equal(in.bones[3].id, "spine_2e2");
	assert_string_equal(in.bones[5].id, "arm_3aL");
	assert_string_equal(in.bones[5].name, "arm:L");
	assert_int_equal(in.bones[5].parent, 3);
	assert_int_equal(in.bones[0].parent, -1);
	assert_string_equal(in.slots[1].id, "slot:arm_20L");
	/* Defaults: scale 1, the rest 0, inherit normal. */
	assert_true(in.bones[0].scale[0] == 1 && in.bones[0].scale[1] == 1);
	assert_true(in.bones[3].scale[0] == 1 && in.bones[3].shear_deg[0] == 0);
	assert_true(in.bones[3].shear_deg[1] == -20);
	assert_int_equal(in.bones[4].inherit, INHERIT_NORMAL);
	/* The setup attachments' groups; fx shows none. */
	assert_string_equal(in.slots[0].group, "body.torso");
	assert_string_equal(in.slots[1].group, "arm_20L.arm");
	assert_string_equal(in.slots[2].group, "head.face");
	assert_string_equal(in.slots[3].group, "");
	/* Every (slot, attachment) of both skins, sorted, the unused ones
	 * (arm_alt, face-angry, spark and the armored skin's) included. */
	assert_string_equal(in.groups, "arm_20L.arm\narm_20L.arm_5falt\nbody.torso\n"
				       "body.torso_5farmor\nfx.spark\nhead.face\nhead.face-angry\n"
				       "head.helmet\n");
	assert_int_equal(in.n_groups, 8);
	assert_int_equal(in.groups_len, strlen(in.groups));
	/* Kept: the mesh, the clips. Nothing changes the setup pose. */
	assert_int_equal(in.n_kept, 2);
	assert_string_equal(in.kept,
			    "mesh 'spark' (skin 'default', slot 'fx'): kept in the file, not drawn "
			    "as such live\n"
			    "clips: 2 ('walk', 'idle'), kept in the file, not played live\n");
	assert_null(in.not_applied);
	assert_int_equal(in.n_not_applied, 0);
	/* The stored file is the skeleton member's bytes as posted: the file
	 * as read (body_of put it in verbatim), without its last newline. */
	char *text = read_file(DATA "chain.json");
	text[strlen(text) - 1] = '\0';
	assert_string_equal(in.skeleton, text);
	free(text);
	cJSON *a = cJSON_Parse(in.skeleton), *whole = cJSON_Parse(body);
	assert_non_null(a);
	assert_true(cJSON_Compare(a, cJSON_GetObjectItemCaseSensitive(whole, "skeleton"), 1));
	assert_int_equal(in.skeleton_len, strlen(in.skeleton));
	cJSON_Delete(a);
	cJSON_Delete(whole);
	spine_import_release(&in);
	free(body);
}

static void chain_batch(void **state)
{
	char *body = body_of_file("chain.json", NULL);
	spine_import in;
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	(void)state;

	decode_ok(body, &in);
	assert_string_equal(in.file, "spine.json"); /* the default */
	assert_int_equal(spine_import_batch(&in, NULL, &b, &rep, &err), 0);
	assert_int_equal(b.n_ops, 10);
	/* root: nothing but its name (every field at its default). */
	assert_string_equal(b.ops[0].id, "root");
	assert_int_equal(b.ops[0].kind, EDIT_CREATE);
	assert_int_equal(b.ops[0].fields, EDIT_F_NAME);
	assert_string_equal(b.ops[0].name, "root");
	/* hip: t = (x, -y), angle, s; no shear, no inherit. */
	const edit_op *hip = &b.ops[1];
	assert_int_equal(hip->fields,
			 EDIT_F_PARENT | EDIT_F_NAME | EDIT_F_T | EDIT_F_ANGLE | EDIT_F_S);
	assert_string_equal(hip->parent, "root");
	assert_true(hip->t.x == 10 && hip->t.y == -20 && hip->t.z == 0);
	assert_true(hip->angle_deg == 90);
	assert_true(hip->s.x == 2 && hip->s.y == 1 && hip->s.z == 1);
	/* spine.2: t, angle, shear [0, -20]; no s. */
	const edit_op *sp2 = &b.ops[3];
	assert_string_equal(sp2->id, "spine_2e2");
	assert_string_equal(sp2->parent, "spine_5f1");
	assert_string_equal(sp2->name, "spine.2");
	assert_int_equal(sp2->fields, EDIT_F_PARENT | EDIT_F_NAME | EDIT_F_T | EDIT_F_ANGLE |
					      EDIT_F_SHEAR);
	assert_true(sp2->t.x == 12 && sp2->t.y == 3);
	assert_true(sp2->shear_deg[0] == 0 && sp2->shear_deg[1] == -20);
	/* spine_1 has y = 0: its t is (5, +0), not -0. */
	assert_false(signbit(b.ops[2].t.y));
	/* arm:L reflected. */
	assert_true(b.ops[5].s.x == -1 && b.ops[5].s.y == 1);
	/* The slots in draw order, under their bones. */
	const edit_op *arm = &b.ops[7];
	assert_string_equal(arm->id, "slot:arm_20L");
	assert_string_equal(arm->parent, "arm_3aL");
	assert_string_equal(arm->name, "slot:arm L");
	assert_int_equal(arm->fields, EDIT_F_PARENT | EDIT_F_NAME | EDIT_F_Z | EDIT_F_LAYER);
	assert_true(arm->z_right == 1 && arm->z_left == 1);
	assert_string_equal(arm->layer, "spine.json#arm_20L.arm");
	assert_string_equal(b.ops[6].layer, "spine.json#body.torso");
	assert_true(b.ops[6].z_right == 0);
	const edit_op *fx = &b.ops[9];
	assert_string_equal(fx->id, "slot:fx");
	assert_string_equal(fx->parent, "root");
	assert_int_equal(fx->fields, EDIT_F_PARENT | EDIT_F_NAME | EDIT_F_Z);
	assert_true(fx->z_right == 3 && fx->z_left == 3);
	/* The report. */
	assert_string_equal(rep.file, "spine.json");
	assert_int_equal(rep.bones, 6);
	assert_int_equal(rep.slots, 4);
	assert_int_equal(rep.skins, 2);
	assert_int_equal(rep.clips, 2);
	assert_int_equal(rep.n_ids, 8);
	assert_string_equal(rep.ids, in.groups);
	assert_int_equal(rep.ids_len, in.groups_len);
	assert_string_equal(rep.asset, in.skeleton);
	assert_int_equal(rep.asset_len, in.skeleton_len);
	assert_int_equal(rep.n_kept, 2);
	assert_string_equal(rep.kept, in.kept);
	assert_null(rep.not_applied);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	spine_import_release(&in);
	free(body);
}

/*
 * By hand, a file without shear or inherit modes (so the core's plain
 * recompute is all it takes):
 *   hip: x 10, y 20, rotation 90, scaleX 2 under an identity root.
 *     Spine: a = cos 90 * 2 = 0, c = sin 90 * 2 = 2, b = cos 180 = -1,
 *     d = sin 180 = 0, at (10, 20).
 *     rigd: t (10, -20), x axis (a, -c) = (0, -2), y axis (-b, d) = (1, 0).
 *   leg: x 5 under hip, rotation 0.
 *     Spine: at (a*5 + 10, c*5 + 20) = (10, 30), 2x2 = hip's.
 *     rigd: t (10, -30), the same axes as hip.
 *   foot: x 3, y 4, rotation -90, scaleY 3 under leg.
 *     Spine: at (0*3 + -1*4 + 10, 2*3 + 0*4 + 30) = (6, 36); local
 *     la = cos -90 = 0, lc = sin -90 = -1, lb = cos 0 * 3 = 3, ld = 0;
 *     a = 0*0 + -1*-1 = 1, c = 2*0 + 0 = 0, b = 0*3 + -1*0 = 0,
 *     d = 2*3 + 0 = 6.
 *     rigd: t (6, -36), x axis (1, 0), y axis (0, 6).
 */
static void hand_numbers(void **state)
{
	static const char skel[] =
		"{\"skeleton\":{\"spine\":\"4.2.0\"},\"bones\":[{\"name\":\"root\"},"
		"{\"name\":\"hip\",\"parent\":\"root\",\"x\":10,\"y\":20,\"rotation\":90,\"scaleX\":2},"
		"{\"name\":\"leg\",\"parent\":\"hip\",\"x\":5},"
		"{\"name\":\"foot\",\"parent\":\"leg\",\"x\":3,\"y\":4,\"rotation\":-90,\"scaleY\":3}]}";
	static const struct {
		const char *name;
		double m0, m1, m4, m5, m12, m13;
	} want[] = {
		{ "hip", 0, -2, 1, 0, 10, -20 },
		{ "leg", 0, -2, 1, 0, 10, -30 },
		{ "foot", 1, 0, 0, 6, 6, -36 },
	};
	char *body = body_of(skel, NULL);
	spine_import in;
	skel_import_report rep;
	(void)state;

	decode_ok(body, &in);
	assert_null(in.groups);
	scene *s = import_into_scene(&in, &rep);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		mat4 m = scene_world(s, node_named(s, want[i].name));

		assert_near(m.m[0], want[i].m0, want[i].name);
		assert_near(m.m[1], want[i].m1, want[i].name);
		assert_near(m.m[4], want[i].m4, want[i].name);
		assert_near(m.m[5], want[i].m5, want[i].name);
		assert_near(m.m[12], want[i].m12, want[i].name);
		assert_near(m.m[13], want[i].m13, want[i].name);
	}
	scene_free(s);
	skel_import_report_release(&rep);
	spine_import_release(&in);
	free(body);
}

/* The chain (shear on four bones, a reflected arm) against the evaluation. */
static void chain_worlds(void **state)
{
	(void)state;
	check_file_worlds("chain.json");
}

/* The five inherit modes under a rotated, non-uniformly scaled parent and
 * under a reflected one, and a bone below a noScale and a
 * noRotationOrReflection one. */
static void inherit_worlds(void **state)
{
	char *body = body_of_file("inherit.json", NULL);
	spine_import in;
	(void)state;

	decode_ok(body, &in);
	assert_int_equal(in.bones[3].inherit, INHERIT_NORMAL);
	assert_int_equal(in.bones[4].inherit, INHERIT_ONLY_TRANSLATION);
	assert_int_equal(in.bones[5].inherit, INHERIT_NO_ROTATION_OR_REFLECTION);
	assert_int_equal(in.bones[6].inherit, INHERIT_NO_SCALE);
	assert_int_equal(in.bones[7].inherit, INHERIT_NO_SCALE_OR_REFLECTION);
	assert_int_equal(in.bones[13].inherit, INHERIT_NO_SCALE);
	spine_import_release(&in);
	free(body);
	check_file_worlds("inherit.json");
}

/* The evaluator itself, on one case by hand, so that the expected values
 * are not only the evaluator's word: a child with onlyTranslation under
 * hip (rotation 90, scaleX 2) keeps its own local 2x2 (identity) and
 * sits at (a*5 + 10, c*5 + 20) = (10, 30). */
static void evaluator_by_hand(void **state)
{
	sp_world w[8];
	(void)state;

	assert_int_equal(
		spine_worlds_of(
			"{\"bones\":[{\"name\":\"hip\",\"x\":10,\"y\":20,\"rotation\":90,\"scaleX\":2},"
			"{\"name\":\"c\",\"parent\":\"hip\",\"x\":5,\"inherit\":\"onlyTranslation\"},"
			"{\"name\":\"n\",\"parent\":\"hip\",\"x\":5,\"inherit\":\"noScale\"}]}",
			w, 8),
		3);
	assert_near(w[1].wx, 10, "c.x");
	assert_near(w[1].wy, 30, "c.y");
	assert_near(w[1].a, 1, "c.a");
	assert_near(w[1].b, 0, "c.b");
	assert_near(w[1].c, 0, "c.c");
	assert_near(w[1].d, 1, "c.d");
	/* noScale: the parent's x axis (0, 2) normalised is (0, 1), turned a
	 * quarter counter-clockwise for y: (-1, 0); a = 0, c = 1, b = -1, d = 0. */
	assert_near(w[2].a, 0, "n.a");
	assert_near(w[2].c, 1, "n.c");
	assert_near(w[2].b, -1, "n.b");
	assert_near(w[2].d, 0, "n.d");
}

static void constraints_report(void **state)
{
	char *body = body_of_file("constraints.json", NULL);
	spine_import in;
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	(void)state;

	decode_ok(body, &in);
	assert_int_equal(in.n_clips, 0);
	assert_string_equal(in.kept,
			    "bone 'tail': skin-required (the runtime shows it only with a skin that "
			    "lists it); always a node here\n"
			    "path 'curve' (skin 'default', slot 'path'): kept in the file, not drawn "
			    "as such live\n"
			    "ik 'aim': solved live\n"
			    "ik 'off': not solved live (mix 0: the setup pose is the same)\n"
			    "ik 'skinned': not solved live (skin-required: off in the setup pose)\n"
			    "transform constraint 'still': not applied live (mix 0: the setup pose is "
			    "the same)\n"
			    "transform constraint 'follow': not applied live\n"
			    "path constraint 'along': not applied live (mix 0: the setup pose is the "
			    "same)\n"
			    "physics 'sway': not simulated live (at rest it leaves the setup pose as it "
			    "is)\n"
			    "events: 2, kept in the file, not fired live\n"
			    "section 'extra': kept in the file, not read\n");
	assert_int_equal(in.n_kept, 11);
	/* aim is solved live (upper and lower, bending back, toward target);
	 * only the transform constraint differs from the runtime. */
	assert_string_equal(in.not_applied,
			    "not applied: the setup pose's worlds differ from the runtime's for "
			    "bones tail (transform constraint 'follow')\n");
	assert_int_equal(in.n_not_applied, 1);
	assert_int_equal(in.n_iks, 1);
	assert_string_equal(in.iks[0].name, "aim");
	assert_int_equal(in.iks[0].n_bones, 2);
	assert_string_equal(in.bones[in.iks[0].bones[0]].name, "upper");
	assert_string_equal(in.bones[in.iks[0].bones[1]].name, "lower");
	assert_string_equal(in.bones[in.iks[0].target].name, "target");
	assert_false(in.iks[0].bend_positive);
	assert_true(in.iks[0].mix == 1);
	assert_int_equal(spine_import_batch(&in, NULL, &b, &rep, &err), 0);
	assert_int_equal(rep.n_not_applied, 1);
	assert_string_equal(rep.not_applied, in.not_applied);
	assert_int_equal(rep.n_ids, 2);
	assert_string_equal(rep.ids, "hand.hand\npath.curve\n");
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	spine_import_release(&in);
	free(body);
}

/* ---------- refusals ---------- */

/* A minimal valid skeleton with 'bones', 'slots' and 'rest' (the members
 * after them, with a leading comma, or "") spliced in. */
static char *skel_with(const char *version, const char *bones, const char *slots, const char *rest)
{
	size_t n = strlen(bones) + strlen(slots) + strlen(rest) + 256;
	char *s = malloc(n);

	assert_non_null(s);
	snprintf(s, n, "{\"skeleton\":{\"spine\":\"%s\"},\"bones\":[%s],\"slots\":[%s]%s}", version,
		 bones, slots, rest);
	return s;
}

static void expect_refusal(const char *skeleton, int code, const char *field, const char *message)
{
	char *body = body_of(skeleton, NULL);
	spine_import in;
	edit_error err;

	assert_int_equal(spine_import_decode(body, strlen(body), 1 << 20, &in, &err), code);
	assert_int_equal(err.code, code);
	if (strcmp(err.field, field) != 0)
		fail_msg("field: got '%s', want '%s' (%s)", err.field, field, err.message);
	if (strcmp(err.message, message) != 0)
		fail_msg("message: got \"%s\", want \"%s\"", err.message, message);
	assert_null(in.bones);
	assert_null(in.skeleton);
	assert_int_equal(in.n_bones, 0);
	free(body);
}

static void refuse(const char *bones, const char *slots, const char *rest, int code,
		   const char *field, const char *message)
{
	char *s = skel_with("4.2.43", bones, slots, rest);
	expect_refusal(s, code, field, message);
	free(s);
}

#define ROOT "{\"name\":\"root\"}"
#define BS RIGD_E_BAD_SKELETON

static void refuse_versions(void **state)
{
	static const char *const versions[] = { "3.8.99", "4.0.64", "4.1.24", "4.3.01", "4.20.1",
						"42", "" };
	(void)state;

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		char msg[200], *s = skel_with(versions[i], ROOT, "", "");

		snprintf(msg, sizeof(msg),
			 "skeleton.spine is '%s'; only Spine 4.2 files (4.2.x) are read", versions[i]);
		expect_refusal(s, BS, "skeleton.skeleton.spine", msg);
		free(s);
	}
	expect_refusal("{\"bones\":[" ROOT "]}", BS, "skeleton.skeleton",
		       "skeleton.skeleton: the file has no skeleton section (with its \"spine\" "
		       "version)");
	expect_refusal("{\"skeleton\":{\"spine\":4.2},\"bones\":[" ROOT "]}", BS,
		       "skeleton.skeleton.spine",
		       "skeleton.spine: the version string is missing; only Spine 4.2 files are "
		       "read");
	/* "4.2" itself and any 4.2.x are read. */
	char *s = skel_with("4.2", ROOT, "", ""), *body = body_of(s, NULL);
	spine_import in;
	decode_ok(body, &in);
	assert_string_equal(in.version, "4.2");
	spine_import_release(&in);
	free(body);
	free(s);
}

static void refuse_bones(void **state)
{
	(void)state;
	refuse("", "", "", BS, "skeleton.bones", "skeleton.bones: an array of one bone or more");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"hand\"},{\"name\":\"hand\",\"parent\":\"root\"}",
	       "", "", BS, "skeleton.bones[1].parent",
	       "bone 'arm': parent 'hand' comes later in the list (bones[2]); a parent must come "
	       "before its children");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"nobody\"}", "", "", BS,
	       "skeleton.bones[1].parent", "bone 'arm': parent 'nobody' is not a bone");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"root\"},{\"name\":\"arm\",\"parent\":\"root\"}",
	       "", "", BS, "skeleton.bones[2].name", "bone 'arm': the name is also bones[1]'s");
	refuse(ROOT ",{\"name\":\"arm_l\",\"parent\":\"root\",\"inherit\":\"foo\"}", "", "", BS,
	       "skeleton.bones[1].inherit",
	       "bone 'arm_l': inherit 'foo' is not one of normal, onlyTranslation, "
	       "noRotationOrReflection, noScale, noScaleOrReflection");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"root\",\"transform\":\"noScale\"}", "", "", BS,
	       "skeleton.bones[1].transform",
	       "bone 'arm': \"transform\" is the name Spine used before 4.2 for \"inherit\"; this "
	       "is not a Spine 4.2 export");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"root\",\"x\":1e999}", "", "", BS,
	       "skeleton.bones[1].x", "bone 'arm': x must be finite");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"root\",\"rotation\":\"90\"}", "", "", BS,
	       "skeleton.bones[1].rotation", "bone 'arm': rotation must be a number");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"root\",\"shearY\":null}", "", "", BS,
	       "skeleton.bones[1].shearY", "bone 'arm': shearY must be a number");
	refuse(ROOT ",{\"name\":\"arm\",\"parent\":\"root\",\"shearX\":10,\"shearY\":-80}", "", "",
	       BS, "skeleton.bones[1].shearY",
	       "bone 'arm': shearX 10 and shearY -80 make its x and y axes collinear (shearY - "
	       "shearX is 90 modulo 180)");
	refuse(ROOT ",{\"parent\":\"root\"}", "", "", BS, "skeleton.bones[1].name",
	       "skeleton.bones[1]: the bone has no name");
	refuse(ROOT ",{\"name\":\"\"}", "", "", BS, "skeleton.bones[1].name",
	       "skeleton.bones[1]: a bone's name must be a non-empty string");
	refuse(ROOT ",7", "", "", BS, "skeleton.bones[1]",
	       "skeleton.bones[1]: a bone must be an object");
	/* 65 kept characters: an id of 65 > 64. 22 '_' (3 characters each):
	 * 66. 64 kept characters fit. */
	refuse("{\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", "",
	       "", BS, "skeleton.bones[0].name",
	       "bone 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': its node id "
	       "would be 65 characters; the limit is 64");
	refuse("{\"name\":\"______________________\"}", "", "", BS, "skeleton.bones[0].name",
	       "bone '______________________': its node id would be 66 characters; the limit is "
	       "64");
	char name[300], bone[400], msg[400];
	memset(name, 'n', 257);
	name[257] = 0;
	snprintf(bone, sizeof(bone), "{\"name\":\"%s\"}", name);
	snprintf(msg, sizeof(msg), "bone '%.76s...': the name is 257 bytes; the limit is 256", name);
	refuse(bone, "", "", BS, "skeleton.bones[0].name", msg);
}

static void refuse_slots_skins(void **state)
{
	(void)state;
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"hand\"}", "", BS, "skeleton.slots[0].bone",
	       "slot 's': bone 'hand' is not a bone");
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"root\"},{\"name\":\"s\",\"bone\":\"root\"}", "", BS,
	       "skeleton.slots[1].name", "slot 's': the name is also slots[0]'s");
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"root\",\"attachment\":\"a\"}",
	       ",\"skins\":[{\"name\":\"default\",\"attachments\":{\"s\":{\"b\":{}}}}]", BS,
	       "skeleton.slots[0].attachment",
	       "slot 's': setup attachment 'a' is not in the default skin");
	/* In another skin only: still refused (the setup pose uses the default). */
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"root\",\"attachment\":\"a\"}",
	       ",\"skins\":[{\"name\":\"other\",\"attachments\":{\"s\":{\"a\":{}}}}]", BS,
	       "skeleton.slots[0].attachment",
	       "slot 's': setup attachment 'a' is not in the default skin");
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"root\"}",
	       ",\"skins\":{\"default\":{\"s\":{\"a\":{}}}}", BS, "skeleton.skins",
	       "skeleton.skins must be an array of skins (an object is the Spine 3.x form)");
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"root\"}",
	       ",\"skins\":[{\"name\":\"default\",\"attachments\":{\"t\":{\"a\":{}}}}]", BS,
	       "skeleton.skins[0].attachments", "skin 'default': slot 't' is not a slot");
	refuse(ROOT, "{\"name\":\"s\",\"bone\":\"root\"}",
	       ",\"skins\":[{\"name\":\"a\"},{\"name\":\"a\"}]", BS, "skeleton.skins[1].name",
	       "skin 'a': the name is also skins[0]'s");
	/* A group of 5 + 1 + 123 = 129 characters. */
	char att[200], rest[400];
	memset(att, 'x', 123);
	att[123] = 0;
	snprintf(rest, sizeof(rest),
		 ",\"skins\":[{\"name\":\"default\",\"attachments\":{\"slot1\":{\"%s\":{}}}}]", att);
	char msg[400];
	snprintf(msg, sizeof(msg),
		 "slot 'slot1', attachment '%.76s...': its layer group would be 129 characters; the "
		 "limit is 128", att);
	refuse(ROOT, "{\"name\":\"slot1\",\"bone\":\"root\"}", rest, BS,
	       "skeleton.skins[0].attachments", msg);
	/* A slot id "slot:" + 60 characters = 65. */
	char slot[200];
	snprintf(slot, sizeof(slot), "{\"name\":\"%.60s\",\"bone\":\"root\"}", att);
	snprintf(msg, sizeof(msg),
		 "slot '%.60s': its node id would be 65 characters; the limit is 64", att);
	refuse(ROOT, slot, "", BS, "skeleton.slots[0].name", msg);
	refuse(ROOT, "", ",\"ik\":[{\"name\":\"aim\",\"bones\":[\"arm\"],\"target\":\"root\"}]", BS,
	       "skeleton.ik[0].bones[0]", "ik 'aim': bone 'arm' is not a bone");
	refuse(ROOT, "", ",\"ik\":[{\"name\":\"aim\",\"bones\":[\"root\"],\"target\":\"root\",\"mix\":"
			 "\"1\"}]",
	       BS, "skeleton.ik[0].mix", "ik 'aim': mix must be a finite number");
	refuse(ROOT, "", ",\"path\":[{\"name\":\"p\",\"bones\":[\"root\"],\"target\":\"root\"}]", BS,
	       "skeleton.path[0].target", "path constraint 'p': target 'root' is not a slot");
}

static void refuse_body(void **state)
{
	char *s = skel_with("4.2.1", ROOT, "", "");
	spine_import in;
	edit_error err;
	char body[512];
	static const struct {
		const char *fmt;
		int code;
		const char *field;
	} cases[] = {
		{ "{\"skeleton\":%s,\"svg\":1}", RIGD_E_BAD_FIELD, "svg" },
		{ "{\"file\":\"x.json\"}", RIGD_E_BAD_FIELD, "skeleton" },
		{ "{\"skeleton\":[]}", RIGD_E_BAD_FIELD, "skeleton" },
		{ "{\"skeleton\":%s,\"file\":\".hidden\"}", RIGD_E_BAD_FIELD, "file" },
		{ "{\"skeleton\":%s,\"file\":\"a/b.json\"}", RIGD_E_BAD_FIELD, "file" },
		{ "{\"skeleton\":%s,\"atlas\":{}}", RIGD_E_BAD_FIELD, "atlas" },
		{ "{\"skeleton\":%s,\"images\":[]}", RIGD_E_BAD_FIELD, "images" },
		{ "{\"skeleton\":%s,\"images\":{\"a.png\":1}}", RIGD_E_BAD_FIELD, "images" },
		{ "{\"skeleton\":%s", RIGD_E_BAD_JSON, "" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(body, sizeof(body), cases[i].fmt, s);
		int rc = spine_import_decode(body, strlen(body), 1 << 20, &in, &err);
		if (rc != cases[i].code)
			fail_msg("case %zu: got %d (%s), want %d", i, rc, err.message, cases[i].code);
		if (cases[i].code == RIGD_E_BAD_FIELD && strstr(err.field, cases[i].field) != err.field)
			fail_msg("case %zu: field '%s', want '%s'", i, err.field, cases[i].field);
		assert_null(in.skeleton);
	}
	/* The body limit. */
	snprintf(body, sizeof(body), "{\"skeleton\":%s}", s);
	assert_int_equal(spine_import_decode(body, strlen(body), 20, &in, &err), RIGD_E_TOO_LARGE);
	/* Atlas and images kept as posted. */
	snprintf(body, sizeof(body),
		 "{\"skeleton\":%s,\"file\":\"a_b-1.json\",\"atlas\":\"page.png\\nsize: 4,4\\n\","
		 "\"images\":{\"page.png\":\"iVBORw0K\",\"p2.png\":\"\"}}", s);
	decode_ok(body, &in);
	assert_string_equal(in.file, "a_b-1.json");
	assert_string_equal(in.atlas, "page.png\nsize: 4,4\n");
	assert_int_equal(in.n_images, 2);
	assert_string_equal(in.images[0].file, "page.png");
	assert_string_equal(in.images[0].base64, "iVBORw0K");
	assert_int_equal(in.images[0].base64_len, 8);
	assert_string_equal(in.images[1].file, "p2.png");
	spine_import_release(&in);
	/* A member name spelt with an escape: the tree printed back instead of
	 * the posted bytes. */
	snprintf(body, sizeof(body), "{\"sk\\u0065leton\" : %s , \"file\":\"x.json\"}", s);
	decode_ok(body, &in);
	assert_string_equal(in.skeleton,
			    "{\"skeleton\":{\"spine\":\"4.2.1\"},\"bones\":[{\"name\":\"root\"}],"
			    "\"slots\":[]}");
	spine_import_release(&in);
	/* Spaces around the member: its bytes alone. */
	snprintf(body, sizeof(body), "{ \"file\" : \"x.json\" ,\n\t\"skeleton\" :\n %s\n}", s);
	decode_ok(body, &in);
	assert_string_equal(in.skeleton, s);
	spine_import_release(&in);
	spine_import_release(&in); /* twice: empty the second time */
	spine_import_release(NULL);
	free(s);
}

/* Limits on counts. */
static void refuse_limits(void **state)
{
	size_t cap = (SPINE_IMPORT_MAX_BONES + 2) * 40 + 256;
	char *bones = malloc(cap), *s;
	size_t at = 0;
	(void)state;

	assert_non_null(bones);
	at += (size_t)snprintf(bones + at, cap - at, ROOT);
	for (int i = 0; i < SPINE_IMPORT_MAX_BONES; i++)
		at += (size_t)snprintf(bones + at, cap - at, ",{\"name\":\"b%d\"}", i);
	s = skel_with("4.2.2", bones, "", "");
	char msg[120];
	snprintf(msg, sizeof(msg), "skeleton.bones: %d bones; the limit is %d",
		 SPINE_IMPORT_MAX_BONES + 1, SPINE_IMPORT_MAX_BONES);
	expect_refusal(s, RIGD_E_LIMIT, "skeleton.bones", msg);
	free(s);

	/* One skin and one ik constraint too many. */
	at = (size_t)snprintf(bones, cap, ",\"skins\":[");
	for (int i = 0; i <= SPINE_IMPORT_MAX_SKINS; i++)
		at += (size_t)snprintf(bones + at, cap - at, "%s{\"name\":\"s%d\"}", i ? "," : "", i);
	snprintf(bones + at, cap - at, "]");
	s = skel_with("4.2.2", ROOT, "", bones);
	snprintf(msg, sizeof(msg), "skeleton.skins: %d skins; the limit is %d",
		 SPINE_IMPORT_MAX_SKINS + 1, SPINE_IMPORT_MAX_SKINS);
	expect_refusal(s, RIGD_E_LIMIT, "skeleton.skins", msg);
	free(s);
	free(bones);
	cap = (SPINE_IMPORT_MAX_CONSTRAINTS + 1) * 64 + 64;
	bones = malloc(cap);
	assert_non_null(bones);
	at = (size_t)snprintf(bones, cap, ",\"ik\":[");
	for (int i = 0; i <= SPINE_IMPORT_MAX_CONSTRAINTS; i++)
		at += (size_t)snprintf(bones + at, cap - at,
				       "%s{\"name\":\"k%d\",\"bones\":[\"root\"],\"target\":\"root\"}",
				       i ? "," : "", i);
	snprintf(bones + at, cap - at, "]");
	s = skel_with("4.2.2", ROOT, "", bones);
	snprintf(msg, sizeof(msg), "skeleton.ik: %d constraints; the limit is %d",
		 SPINE_IMPORT_MAX_CONSTRAINTS + 1, SPINE_IMPORT_MAX_CONSTRAINTS);
	expect_refusal(s, RIGD_E_LIMIT, "skeleton.ik", msg);
	free(s);
	free(bones);
}

/* Ids that clash with nodes of the scene, and a 3D scene. */
static void refuse_scene(void **state)
{
	char *body = body_of_file("chain.json", NULL);
	spine_import in;
	skel_import_report rep;
	edit_batch b, made;
	edit_error err;
	scene *s = scene_new();
	(void)state;

	decode_ok(body, &in);
	assert_int_equal(spine_import_batch(&in, s, &b, &rep, &err), RIGD_E_BAD_SKELETON);
	assert_string_equal(err.field, "skeleton");
	assert_string_equal(err.message, "skeleton: a skeleton goes into a 2D scene; this scene is 3D");
	assert_int_equal(b.n_ops, 0);
	assert_null(rep.asset);
	scene_free(s);

	s = scene_new();
	assert_int_equal(scene_set_dims(s, 2), 0);
	edit_batch_init(&made);
	assert_non_null(edit_batch_add(&made, EDIT_CREATE, "spine_2e2"));
	assert_int_equal(edit_apply(s, &made, NULL, NULL, &err), 0);
	edit_batch_release(&made);
	assert_int_equal(spine_import_batch(&in, s, &b, &rep, &err), RIGD_E_DUPLICATE_ID);
	assert_string_equal(err.field, "skeleton.bones[3].name");
	assert_string_equal(err.message,
			    "bone 'spine.2': the scene already has a node with id 'spine_2e2'");
	assert_int_equal(b.n_ops, 0);
	assert_null(rep.ids);
	scene_free(s);

	s = scene_new();
	assert_int_equal(scene_set_dims(s, 2), 0);
	edit_batch_init(&made);
	assert_non_null(edit_batch_add(&made, EDIT_CREATE, "slot:arm_20L"));
	assert_int_equal(edit_apply(s, &made, NULL, NULL, &err), 0);
	edit_batch_release(&made);
	assert_int_equal(spine_import_batch(&in, s, &b, &rep, &err), RIGD_E_DUPLICATE_ID);
	assert_string_equal(err.field, "skeleton.slots[1].name");
	assert_string_equal(err.message,
			    "slot 'arm L': the scene already has a node with id 'slot:arm_20L'");
	scene_free(s);
	spine_import_release(&in);
	free(body);
}

/* What the route stores, read again as log import and rigd check read it
 * (asset_check): accepted unchanged, with the same ids. */
static void stored_asset_checks(void **state)
{
	static const char *const files[] = { "chain.json", "inherit.json", "constraints.json" };
	(void)state;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *body = body_of_file(files[i], NULL);
		spine_import in;
		skel_import_report rep;
		edit_batch b;
		edit_error err;
		asset_checked c;
		size_t n;

		decode_ok(body, &in);
		assert_int_equal(spine_import_batch(&in, NULL, &b, &rep, &err), 0);
		if (asset_check(ASSET_SPINE, rep.file, rep.asset, rep.asset_len, NULL, "assets", &c,
				&err) != 0)
			fail_msg("%s: %s", files[i], err.message);
		char *lines = asset_checked_lines(&c, &n);
		assert_non_null(lines);
		assert_int_equal(n, rep.ids_len);
		assert_memory_equal(lines, rep.ids, n);
		free(lines);
		asset_checked_release(&c);
		edit_batch_release(&b);
		skel_import_report_release(&rep);
		spine_import_release(&in);
		free(body);
	}
}

/* Decodes 'body'; a refusal must leave *in empty and say so in 'err'; an
 * acceptance must build a batch. */
static void decode_any(const char *body, size_t len)
{
	spine_import in;
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	int rc = spine_import_decode(body, len, 1 << 20, &in, &err);

	if (rc) {
		assert_int_equal(err.code, rc);
		assert_true(rc == RIGD_E_BAD_JSON || rc == RIGD_E_BAD_FIELD ||
			    rc == RIGD_E_BAD_SKELETON || rc == RIGD_E_LIMIT);
		assert_null(in.skeleton);
		assert_null(in.bones);
		assert_null(in.slots);
		assert_null(in.groups);
		assert_null(in.kept);
		return;
	}
	assert_int_equal(spine_import_batch(&in, NULL, &b, &rep, &err), 0);
	assert_int_equal(b.n_ops, in.n_bones + in.n_slots);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	spine_import_release(&in);
}

/* Every prefix of a body, and bodies with bytes replaced by JSON's
 * structural characters (a fixed pseudo-random sequence): refused with
 * nothing kept, or accepted whole. Under the sanitizers, no fault and no
 * leak either way. */
static void damaged_bodies(void **state)
{
	static const char subst[] = "{}[]\":,0-e\\ nx";
	char *body = body_of_file("constraints.json", NULL);
	size_t len = strlen(body);
	char *copy = malloc(len + 1);
	uint32_t seed = 12345;
	(void)state;

	assert_non_null(copy);
	for (size_t n = 0; n < len; n++) {
		memcpy(copy, body, n);
		copy[n] = '\0';
		decode_any(copy, n);
	}
	for (int round = 0; round < 3000; round++) {
		memcpy(copy, body, len + 1);
		for (int k = 0; k < 1 + round % 3; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			copy[at] = subst[(seed >> 8) % (sizeof(subst) - 1)];
		}
		decode_any(copy, len);
	}
	free(copy);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chain_decoded),
		cmocka_unit_test(chain_batch),
		cmocka_unit_test(hand_numbers),
		cmocka_unit_test(evaluator_by_hand),
		cmocka_unit_test(chain_worlds),
		cmocka_unit_test(inherit_worlds),
		cmocka_unit_test(constraints_report),
		cmocka_unit_test(refuse_versions),
		cmocka_unit_test(refuse_bones),
		cmocka_unit_test(refuse_slots_skins),
		cmocka_unit_test(refuse_body),
		cmocka_unit_test(refuse_limits),
		cmocka_unit_test(refuse_scene),
		cmocka_unit_test(stored_asset_checks),
		cmocka_unit_test(damaged_bodies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
