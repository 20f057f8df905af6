/*
 * test_dragonbones.c: the DragonBones 5.x importer (server/codec/dragonbones*.c).
 *
 * The batch for the MIT mecha_1406 character (RIGD_DRAGONBONES_SAMPLES,
 * skipped when absent): ids, names, parents, transforms, inherit modes,
 * slot z and layers, the asset's ids and the report, all read off the file
 * by the documented mapping; the worlds of a synthetic two-bone file
 * computed by hand from DragonBones' matrix formula; every refusal with its
 * code, field and the element named in its message.
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
#include <unistd.h>

#include "codec/dragonbones.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#define MECHA RIGD_DRAGONBONES_SAMPLES "/mecha_1406/mecha_1406_ske.json"
#define DATA RIGD_SOURCE_DIR "/tests/data/dragonbones/"
#define DEG (M_PI / 180)

/* |got - want| <= tol, or a failure that prints both. */
#define assert_near(got, want, tol) assert_near_at((got), (want), (tol), #got, __LINE__)
static void assert_near_at(double got, double want, double tol, const char *what, int line)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("line %d: %s is %.17g, want %.17g (tolerance %g)", line, what, got, want, tol);
}

static char *read_file(const char *path, size_t *len)
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
	*len = (size_t)n;
	return buf;
}

/* {"skeleton": FILE} as a body. */
static char *body_of(const char *path, size_t *len)
{
	size_t n;
	char *ske = read_file(path, &n), *body = malloc(n + 32);
	assert_non_null(body);
	*len = (size_t)sprintf(body, "{\"skeleton\":%s}", ske);
	free(ske);
	return body;
}

static const edit_op *find_op(const edit_batch *b, const char *id)
{
	for (int i = 0; i < b->n_ops; i++)
		if (!strcmp(b->ops[i].id, id))
			return &b->ops[i];
	fail_msg("no op for '%s'", id);
	return NULL;
}

static void test_mecha_ops(void **state)
{
	(void)state;
	dragonbones_import in;
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	size_t len;
	char *body;

	if (access(MECHA, R_OK) != 0) {
		print_message("mecha_1406 not found at %s\n", MECHA);
		skip();
	}
	body = body_of(MECHA, &len);
	assert_int_equal(dragonbones_import_decode(body, len, len, &in, &err), 0);
	free(body);
	assert_int_equal(in.n_bones, 17);
	assert_int_equal(in.n_slots, 13);
	assert_string_equal(in.file, "mecha_5f1406_ske.json");
	assert_int_equal(dragonbones_import_batch(&in, NULL, &b, &rep, &err), 0);
	assert_int_equal(b.n_ops, 17 + 13);

	/* The bones first, in the file's order. */
	assert_string_equal(b.ops[0].id, "root");
	assert_string_equal(b.ops[0].name, "root");
	assert_false(b.ops[0].fields & EDIT_F_PARENT);
	assert_true(b.ops[0].fields & EDIT_F_INHERIT);
	assert_int_equal(b.ops[0].inherit, INHERIT_DB | DB_NO_SCALE);
	int no_scale = 0;
	for (int i = 0; i < 17; i++) {
		assert_int_equal(b.ops[i].kind, EDIT_CREATE);
		no_scale += (b.ops[i].fields & EDIT_F_INHERIT) && b.ops[i].inherit == (INHERIT_DB | DB_NO_SCALE);
	}
	assert_int_equal(no_scale, 13);

	/* thigh_1_l: '_' escaped, parent thigh_l, scale, angle -skY, no shear. */
	const edit_op *op = find_op(&b, "thigh_5f1_5fl");
	assert_string_equal(op->name, "thigh_1_l");
	assert_string_equal(op->parent, "thigh_5fl");
	assert_near(op->t.x, 50.86, 0);
	assert_near(op->t.y, 0, 0);
	assert_near(op->angle_deg, -91.3591, 0);
	assert_near(op->s.x, 0.9912, 0);
	assert_near(op->s.y, 0.9971, 0);
	assert_true(op->fields & EDIT_F_SHEAR);
	assert_near(op->shear_deg[1], 91.3591 - 91.3529, 1e-12);
	/* thigh_l inherits all four: normal, no inherit field. */
	op = find_op(&b, "thigh_5fl");
	assert_false(op->fields & EDIT_F_INHERIT);
	assert_string_equal(op->parent, "root");
	/* The chest: skX -41.0313, skY -40.7755. */
	op = find_op(&b, "chest");
	assert_string_equal(op->parent, "pelvis");
	assert_near(op->angle_deg, 40.7755, 0);
	assert_near(op->shear_deg[0], 0, 0);
	assert_near(op->shear_deg[1], -40.7755 + 41.0313, 1e-12);
	/* pelvis: skX = skY, so no shear field. */
	op = find_op(&b, "pelvis");
	assert_false(op->fields & EDIT_F_SHEAR);
	assert_false(op->fields & EDIT_F_S);

	/* Then the slots, in draw order, each a child of its bone. */
	op = &b.ops[17];
	assert_string_equal(op->id, "slot:shouder_5fl");
	assert_string_equal(op->name, "slot:shouder_l");
	assert_string_equal(op->parent, "shouder_5fl");
	assert_true(op->fields & EDIT_F_Z);
	assert_near(op->z_right, 0, 0);
	assert_near(op->z_left, 0, 0);
	assert_string_equal(op->layer,
			    "mecha_5f1406_ske.json#shouder_5fl.mecha_5f1406_5ffolder_2fshouder_5fl");
	op = &b.ops[29];
	assert_string_equal(op->id, "slot:shouder_5fr");
	assert_near(op->z_right, 12, 0);
	op = find_op(&b, "slot:foot_5fl");
	assert_near(op->z_right, 1, 0);
	assert_string_equal(op->layer,
			    "mecha_5f1406_ske.json#foot_5fl.mecha_5f1406_5ffolder_2ftextures_2ffoot_5fl_5f0");

	/* The report: one GROUP per slot, sorted; 4 IK (solved live) and 8
	 * animations kept, nothing that the live scene does differently. */
	assert_string_equal(rep.file, "mecha_5f1406_ske.json");
	assert_int_equal(rep.n_ids, 13);
	assert_int_equal(strncmp(rep.ids, "calf_5fl.mecha_5f1406_5ffolder_2fcalf_5fl\n", 42), 0);
	assert_int_equal(rep.bones, 17);
	assert_int_equal(rep.slots, 13);
	assert_int_equal(rep.skins, 1);
	assert_int_equal(rep.clips, 8);
	assert_int_equal(rep.n_kept, 12);
	assert_non_null(strstr(rep.kept, "ik 'bone_ik1': solved live\n"));
	assert_non_null(strstr(rep.kept, "animation 'aim'"));
	assert_int_equal(rep.n_not_applied, 0);
	/* The constraints, for the live solve: calf_r's chain is its parent
	 * thigh_1_r, then it; bone_ik1 turns thigh_l alone. */
	assert_int_equal(in.n_iks, 4);
	assert_string_equal(in.iks[3].name, "calf_r");
	assert_int_equal(in.iks[3].n_bones, 2);
	assert_string_equal(in.bones[in.iks[3].bones[0]].name, "thigh_1_r");
	assert_string_equal(in.bones[in.iks[3].bones[1]].name, "calf_r");
	assert_string_equal(in.bones[in.iks[3].target].name, "foot_r");
	assert_false(in.iks[3].bend_positive);
	assert_int_equal(in.iks[0].n_bones, 1);
	assert_string_equal(in.bones[in.iks[0].bones[0]].name, "thigh_l");
	assert_true(in.iks[0].bend_positive);
	assert_non_null(rep.asset);
	assert_int_equal(rep.asset_len, strlen(rep.asset));

	/* Into a scene that has one of the ids (a bone's, then a slot's):
	 * refused, nothing built. */
	scene *s = scene_new();
	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	edit_batch b2;
	skel_import_report rep2;
	assert_int_equal(scene_create(s, "weapon_5f1", -1, -1, NULL, NULL), 0);
	assert_int_equal(dragonbones_import_batch(&in, s, &b2, &rep2, &err), RIGD_E_DUPLICATE_ID);
	assert_string_equal(err.field, "skeleton.armature[0].bone[16]");
	assert_non_null(strstr(err.message, "'weapon_1'"));
	assert_int_equal(b2.n_ops, 0);
	assert_null(rep2.asset);
	assert_int_equal(scene_create(s, "slot:chest", -1, -1, NULL, NULL), 0);
	assert_int_equal(scene_create(s, "root-x", -1, -1, NULL, NULL), 0);
	scene_free(s);
	s = scene_new();
	assert_non_null(s);
	assert_int_equal(scene_create(s, "slot:chest", -1, -1, NULL, NULL), 0);
	assert_int_equal(dragonbones_import_batch(&in, s, &b2, &rep2, &err), RIGD_E_DUPLICATE_ID);
	assert_string_equal(err.field, "skeleton.armature[0].slot[5]");
	assert_non_null(strstr(err.message, "'chest'"));
	scene_free(s);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	dragonbones_import_release(&in);
}

/* DragonBones' local matrix [a c tx; b d ty] of a transform. */
static void db_matrix(double x, double y, double skx, double sky, double scx, double scy,
		      double m[6])
{
	m[0] = cos(sky * DEG) * scx;
	m[1] = sin(sky * DEG) * scx;
	m[2] = -sin(skx * DEG) * scy;
	m[3] = cos(skx * DEG) * scy;
	m[4] = x;
	m[5] = y;
}

/* p * l, both [a b c d tx ty]. */
static void db_concat(const double p[6], const double l[6], double out[6])
{
	out[0] = p[0] * l[0] + p[2] * l[1];
	out[1] = p[1] * l[0] + p[3] * l[1];
	out[2] = p[0] * l[2] + p[2] * l[3];
	out[3] = p[1] * l[2] + p[3] * l[3];
	out[4] = p[0] * l[4] + p[2] * l[5] + p[4];
	out[5] = p[1] * l[4] + p[3] * l[5] + p[5];
}

static void assert_world(const scene *s, const char *id, const double m[6])
{
	const double *w = scene_world_rows(s, scene_find(s, id));
	assert_non_null(w);
	/* Rows of a mat34: a = w0, c = w1, tx = w3, b = w4, d = w5, ty = w7. */
	assert_near(w[0], m[0], 1e-9);
	assert_near(w[4], m[1], 1e-9);
	assert_near(w[1], m[2], 1e-9);
	assert_near(w[5], m[3], 1e-9);
	assert_near(w[3], m[4], 1e-9);
	assert_near(w[7], m[5], 1e-9);
}

/* two_bone_ske.json: body (100, 50), skew 30 30, scale 2 0.5; arm_l
 * (10, 4), skX 90, skY 60, scY 3 (a sheared child). Slots: body shows
 * display 0, arm_l display 1 (arm_fist), hidden none; a second skin adds
 * one GROUP. */
static void test_two_bone_worlds(void **state)
{
	(void)state;
	dragonbones_import in;
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	size_t len;
	char *body = body_of(DATA "two_bone_ske.json", &len);
	double body_m[6], arm_l[6], arm_w[6];

	assert_int_equal(dragonbones_import_decode(body, len, len, &in, &err), 0);
	free(body);
	assert_int_equal(dragonbones_import_batch(&in, NULL, &b, &rep, &err), 0);
	assert_int_equal(rep.n_ids, 5);
	assert_string_equal(rep.ids, "arm_5fl.arm_5ffist\narm_5fl.arm_5fopen\nbody.parts_2fbody\n"
				     "body.parts_2fbody_5farmor\nhidden.ghost\n");
	assert_string_equal(find_op(&b, "slot:arm_5fl")->layer, "two_5fbone_ske.json#arm_5fl.arm_5ffist");
	assert_string_equal(find_op(&b, "slot:body")->layer, "two_5fbone_ske.json#body.parts_2fbody");
	assert_false(find_op(&b, "slot:hidden")->fields & EDIT_F_LAYER);
	assert_near(find_op(&b, "slot:hidden")->z_right, 2, 0);

	scene *s = scene_new();
	assert_non_null(s);
	assert_int_equal(scene_set_dims(s, 2), 0);
	assert_int_equal(asset_set_add(scene_assets(s), rep.file, rep.ids, rep.ids_len), 0);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &err), 0);
	scene_update(s, 1, NULL, NULL);
	db_matrix(100, 50, 30, 30, 2, 0.5, body_m);
	db_matrix(10, 4, 90, 60, 1, 3, arm_l);
	db_concat(body_m, arm_l, arm_w);
	assert_world(s, "body", body_m);
	assert_world(s, "arm_5fl", arm_w);
	/* A slot's local is the identity: its world is its bone's. */
	assert_world(s, "slot:arm_5fl", arm_w);
	/* By hand for arm_l's tx: 2 cos30 * 10 - 0.5 sin30 * 4 + 100. */
	assert_near(arm_w[4], 20 * cos(30 * DEG) - 2 * sin(30 * DEG) + 100, 1e-12);
	scene_free(s);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	dragonbones_import_release(&in);
}

/* One refusal: 'armature' the armature's JSON (in a 5.5 file unless
 * 'version' is given), the code, field and a name the message holds. */
static void refuse(const char *version, const char *armature, const char *extra, int code,
		   const char *field, const char *named)
{
	char body[4096];
	dragonbones_import in;
	edit_error err;
	int n = snprintf(body, sizeof(body), "{\"skeleton\":{\"version\":%s,\"armature\":[%s]}%s}",
			 version ? version : "\"5.5\"", armature, extra ? extra : "");

	assert_true(n > 0 && (size_t)n < sizeof(body));
	assert_int_equal(dragonbones_import_decode(body, (size_t)n, sizeof(body), &in, &err), code);
	assert_int_equal(err.code, code);
	assert_string_equal(err.field, field);
	if (named && !strstr(err.message, named))
		fail_msg("message '%s' does not name '%s'", err.message, named);
	assert_int_equal(in.n_bones, 0);
	assert_null(in.bones);
}

static void test_refusals(void **state)
{
	(void)state;
	const int BAD = RIGD_E_BAD_SKELETON;
	char arm[2048], name[40];

	refuse("\"4.5\"", "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", NULL, BAD, "skeleton.version", "4.5");
	refuse("\"five\"", "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", NULL, BAD, "skeleton.version", NULL);
	refuse("\"6.0\"", "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", NULL, BAD, "skeleton.version", "6.0");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", ",\"armature\":\"hero\"", BAD,
	       "armature", "'hero'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"},{\"name\":\"arm_l\",\"parent\":\"body\"}]}",
	       NULL, BAD, "skeleton.armature[0].bone[1].parent", "'arm_l'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"},{\"name\":\"arm_l\",\"parent\":\"hand\"},"
		     "{\"name\":\"hand\",\"parent\":\"b\"}]}",
	       NULL, BAD, "skeleton.armature[0].bone[1].parent", "comes later");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"},{\"name\":\"b\",\"parent\":\"b\"}]}", NULL, BAD,
	       "skeleton.armature[0].bone[1].name", "'b'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\",\"transform\":{\"x\":1e999}}]}", NULL, BAD,
	       "skeleton.armature[0].bone[0].transform.x", "'b'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"animation\":[{\"name\":\"idle\","
		     "\"bone\":[{\"frame\":[1,-1e400]}]}]}",
	       NULL, BAD, "skeleton.armature[0].animation[0].bone[0].frame[1]", NULL);
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\",\"transform\":{\"scY\":\"2\"}}]}", NULL, BAD,
	       "skeleton.armature[0].bone[0].transform.scY", "'b'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\",\"transform\":{\"skX\":90}}]}", NULL, BAD,
	       "skeleton.armature[0].bone[0].transform.skX", "axes collinear");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\",\"inheritScale\":0}]}", NULL, BAD,
	       "skeleton.armature[0].bone[0].inheritScale", "'b'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"slot\":[{\"name\":\"s\",\"parent\":\"nope\"}]}",
	       NULL, BAD, "skeleton.armature[0].slot[0].parent", "'nope'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"slot\":[{\"name\":\"s\",\"parent\":\"b\","
		     "\"displayIndex\":2}],\"skin\":[{\"slot\":[{\"name\":\"s\",\"display\":[{\"name\":\"i0\"},"
		     "{\"name\":\"i1\"}]}]}]}",
	       NULL, BAD, "skeleton.armature[0].slot[0].displayIndex", "'s'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"slot\":[{\"name\":\"s\",\"parent\":\"b\","
		     "\"displayIndex\":-2}]}",
	       NULL, BAD, "skeleton.armature[0].slot[0].displayIndex", "'s'");
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"skin\":[{\"slot\":[{\"name\":\"ghost\"}]}]}",
	       NULL, BAD, "skeleton.armature[0].skin[0].slot[0].name", "'ghost'");
	/* 22 underscores are 66 characters of id: one too many by two. */
	memset(name, '_', 22);
	name[22] = '\0';
	snprintf(arm, sizeof(arm), "{\"name\":\"a\",\"bone\":[{\"name\":\"%s\"}]}", name);
	refuse(NULL, arm, NULL, BAD, "skeleton.armature[0].bone[0].name", name);
	/* 21 are 63: accepted. */
	name[21] = '\0';
	snprintf(arm, sizeof(arm), "{\"name\":\"a\",\"bone\":[{\"name\":\"%s\"}]}", name);
	{
		dragonbones_import in;
		edit_error err;
		char body[256];
		int n = snprintf(body, sizeof(body), "{\"skeleton\":{\"version\":\"5.0\",\"armature\":[%s]}}", arm);
		assert_int_equal(dragonbones_import_decode(body, (size_t)n, sizeof(body), &in, &err), 0);
		assert_int_equal((int)strlen(in.bones[0].id), 63);
		dragonbones_import_release(&in);
	}
	/* A GROUP of 129 characters (slot 'ab', '.', 42 escaped bytes: 2 + 1 +
	 * 126) is one too many; slot 'a' makes 128, accepted. */
	{
		char disp[64];
		memset(disp, '.', 42);
		disp[42] = '\0';
		snprintf(arm, sizeof(arm),
			 "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"slot\":[{\"name\":\"ab\",\"parent\":\"b\"}],"
			 "\"skin\":[{\"slot\":[{\"name\":\"ab\",\"display\":[{\"name\":\"%s\"}]}]}]}", disp);
		refuse(NULL, arm, NULL, BAD, "skeleton.armature[0].skin[0].slot[0].display[0].name", "'ab'");
		dragonbones_import in;
		edit_error err;
		char body[1024];
		snprintf(arm, sizeof(arm),
			 "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}],\"slot\":[{\"name\":\"a\",\"parent\":\"b\"}],"
			 "\"skin\":[{\"slot\":[{\"name\":\"a\",\"display\":[{\"name\":\"%s\"}]}]}]}", disp);
		int n = snprintf(body, sizeof(body), "{\"skeleton\":{\"version\":\"5.5\",\"armature\":[%s]}}", arm);
		assert_int_equal(dragonbones_import_decode(body, (size_t)n, sizeof(body), &in, &err), 0);
		assert_int_equal((int)strlen(in.slots[0].group), 128);
		assert_int_equal((int)in.ids_len, 129);
		dragonbones_import_release(&in);
	}
	/* A name longer than SCENE_NAME_MAX bytes. */
	{
		char longname[SCENE_NAME_MAX + 2];
		memset(longname, 'a', SCENE_NAME_MAX + 1);
		longname[SCENE_NAME_MAX + 1] = '\0';
		snprintf(arm, sizeof(arm), "{\"name\":\"a\",\"bone\":[{\"name\":\"%s\"}]}", longname);
		refuse(NULL, arm, NULL, BAD, "skeleton.armature[0].bone[0].name", "256");
	}
	/* One bone more than DRAGONBONES_MAX_BONES is a limit, named. */
	{
		size_t cap = 64 + 16 * (DRAGONBONES_MAX_BONES + 1);
		char *body = malloc(cap);
		dragonbones_import in;
		edit_error err;
		assert_non_null(body);
		size_t n = (size_t)sprintf(body, "{\"skeleton\":{\"version\":\"5.5\",\"armature\":[{\"name\":\"a\",\"bone\":[");
		for (int i = 0; i <= DRAGONBONES_MAX_BONES; i++)
			n += (size_t)sprintf(body + n, "%s{\"name\":\"b%d\"}", i ? "," : "", i);
		n += (size_t)sprintf(body + n, "]}]}}");
		assert_int_equal(dragonbones_import_decode(body, n, cap, &in, &err), RIGD_E_LIMIT);
		assert_string_equal(err.field, "skeleton.armature[0].bone");
		free(body);
	}
	/* The body's own members are bad_field. */
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", ",\"extra\":1", RIGD_E_BAD_FIELD, "extra",
	       NULL);
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", ",\"file\":\".x\"", RIGD_E_BAD_FIELD,
	       "file", NULL);
	refuse(NULL, "{\"name\":\"a\",\"bone\":[{\"name\":\"b\"}]}", ",\"images\":{\"a.png\":1}",
	       RIGD_E_BAD_FIELD, "images", NULL);
}

/* Unknown members are ignored; "rotate"/"skew" is the older spelling of
 * skY and skX - skY; flags become DB_NO_ bits; a given file name is used. */
static void test_accepts(void **state)
{
	(void)state;
	static const char body[] =
		"{\"file\":\"hero_ske.json\",\"armature\":\"two\",\"skeleton\":{\"version\":\"5.0\",\"armature\":["
		"{\"name\":\"one\",\"bone\":[{\"name\":\"x\"}]},"
		"{\"name\":\"two\",\"userData\":{},\"bone\":[{\"name\":\"r\",\"transform\":{\"rotate\":30,\"skew\":5}},"
		"{\"name\":\"c\",\"parent\":\"r\",\"inheritTranslation\":false,\"inheritReflection\":false}]}]}}";
	dragonbones_import in;
	edit_error err;

	assert_int_equal(dragonbones_import_decode(body, sizeof(body) - 1, sizeof(body), &in, &err), 0);
	assert_string_equal(in.file, "hero_ske.json");
	assert_string_equal(in.armature, "two");
	assert_int_equal(in.armature_index, 1);
	assert_near(in.bones[0].sky_deg, 30, 0);
	assert_near(in.bones[0].skx_deg, 35, 0);
	assert_int_equal(in.bones[0].inherit, INHERIT_NORMAL);
	assert_int_equal(in.bones[1].inherit, INHERIT_DB | DB_NO_TRANSLATION | DB_NO_REFLECTION);
	assert_int_equal(in.bones[1].parent, 0);
	assert_int_equal(in.n_ids, 0);
	assert_null(in.ids);
	dragonbones_import_release(&in);
}

/* What is kept without being applied: an IK of weight 0 changes nothing
 * (kept only), a path constraint with a mix moves its bones (not applied),
 * a mesh display is kept, an animation counted. */
static void test_kept(void **state)
{
	(void)state;
	static const char body[] =
		"{\"skeleton\":{\"version\":\"5.5\",\"armature\":[{\"name\":\"k\","
		"\"bone\":[{\"name\":\"r\"},{\"name\":\"t\",\"parent\":\"r\"}],"
		"\"slot\":[{\"name\":\"s\",\"parent\":\"t\"}],"
		"\"skin\":[{\"name\":\"default\",\"slot\":[{\"name\":\"s\",\"display\":[{\"type\":\"mesh\",\"name\":\"m\"}]}]}],"
		"\"ik\":[{\"name\":\"soft\",\"bone\":\"t\",\"target\":\"r\",\"weight\":0}],"
		"\"path\":[{\"name\":\"p\",\"bones\":[\"t\"],\"rotateMix\":0,\"translateMix\":0.5}],"
		"\"animation\":[{\"name\":\"walk\"}]}]}}";
	dragonbones_import in;
	edit_error err;

	assert_int_equal(dragonbones_import_decode(body, sizeof(body) - 1, sizeof(body), &in, &err), 0);
	assert_int_equal(in.n_kept, 4);
	assert_non_null(strstr(in.kept, "mesh 'm' in slot 's' (skin 'default')"));
	assert_non_null(strstr(in.kept, "ik 'soft': not solved (weight 0: the setup pose is the same)\n"));
	assert_int_equal(in.n_iks, 0);
	assert_non_null(strstr(in.kept, "path 'p': not applied live\n"));
	assert_non_null(strstr(in.kept, "animation 'walk'"));
	assert_int_equal(in.n_clips, 1);
	assert_int_equal(in.n_not_applied, 1);
	assert_non_null(strstr(in.not_applied, "for bones t (path 'p', mix 0.5)\n"));
	assert_string_equal(in.slots[0].group, "s.m");
	dragonbones_import_release(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mecha_ops),
		cmocka_unit_test(test_two_bone_worlds),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
