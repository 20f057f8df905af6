/*
 * test_skel_export.c: the Spine and DragonBones exports
 * (server/codec/spine_export.c, dragonbones_export.c).
 *
 * Every file of tests/data/spine and tests/data/dragonbones, and the MIT
 * mecha_1406 character (RIGD_DRAGONBONES_SAMPLES; skipped only when
 * absent), imported into a 2D scene as the route does (the asset's ids
 * stored, the batch applied, the worlds brought up to date), exported,
 * and the export imported again into a fresh scene: every node's world
 * matrix equal to 1e-6 and every channel equal; with no edit the export
 * equals the original file as a JSON value, numbers bit for bit (for
 * DragonBones, whose stored asset is compact, the same bytes). Then edits (angle,
 * translation, shear, inherit, draw order, another attachment, no
 * attachment, a deleted bone): the exported numbers checked by hand from
 * the documented mapping, and the re-import giving the edited worlds.
 * The refusals: a DragonBones export of a node with shear[0] != 0 or a
 * Spine inherit mode, a Spine export of a DragonBones inherit, a layer of
 * another slot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "codec/dragonbones.h"
#include "codec/dragonbones_export.h"
#include "codec/json.h"
#include "codec/spine.h"
#include "codec/spine_export.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/math.h"
#include "core/scene.h"

#define SPINE_DATA RIGD_SOURCE_DIR "/tests/data/spine/"
#define DB_DATA RIGD_SOURCE_DIR "/tests/data/dragonbones/"
#define MECHA RIGD_DRAGONBONES_SAMPLES "/mecha_1406/mecha_1406_ske.json"
#define TOL 1e-6

enum fmt { SPINE, DB };

/* ---------- helpers ---------- */

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
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

/* An imported skeleton: the scene and the asset the route would store. */
typedef struct imported {
	scene *s;
	char *asset;
	size_t asset_len;
	char file[SKEL_FILE_MAX + 1];
} imported;

static void imported_release(imported *im)
{
	scene_free(im->s);
	free(im->asset);
}

/* Imports the skeleton text 'skel' as file 'file' into a fresh 2D scene, as
 * the route does. */
static imported import_text(enum fmt f, const char *skel, const char *file)
{
	size_t n = strlen(skel) + strlen(file) + 64;
	char *body = malloc(n);
	imported im = { 0 };
	skel_import_report rep;
	edit_batch b;
	edit_error err;
	int rc;

	assert_non_null(body);
	snprintf(body, n, "{\"file\":\"%s\",\"skeleton\":%s}", file, skel);
	assert_non_null(im.s = scene_new());
	assert_int_equal(scene_set_dims(im.s, 2), 0);
	if (f == SPINE) {
		spine_import in;
		if ((rc = spine_import_decode(body, strlen(body), 1 << 24, &in, &err)) != 0)
			fail_msg("%s: decode refused: %s (field %s)", file, err.message, err.field);
		if (spine_import_batch(&in, im.s, &b, &rep, &err) != 0)
			fail_msg("%s: batch refused: %s", file, err.message);
		im.asset = strndup(in.skeleton, in.skeleton_len);
		im.asset_len = in.skeleton_len;
		spine_import_release(&in);
	} else {
		dragonbones_import in;
		if ((rc = dragonbones_import_decode(body, strlen(body), 1 << 24, &in, &err)) != 0)
			fail_msg("%s: decode refused: %s (field %s)", file, err.message, err.field);
		if (dragonbones_import_batch(&in, im.s, &b, &rep, &err) != 0)
			fail_msg("%s: batch refused: %s", file, err.message);
		im.asset = strndup(in.skeleton, in.skeleton_len);
		im.asset_len = in.skeleton_len;
		dragonbones_import_release(&in);
	}
	free(body);
	snprintf(im.file, sizeof(im.file), "%s", rep.file);
	assert_int_equal(asset_set_add(scene_assets(im.s), rep.file, rep.ids ? rep.ids : "",
				       rep.ids_len), 0);
	if (edit_apply(im.s, &b, NULL, NULL, &err) != 0)
		fail_msg("%s: apply refused: %s (field %s)", file, err.message, err.field);
	edit_batch_release(&b);
	skel_import_report_release(&rep);
	scene_update(im.s, 1, NULL, NULL);
	return im;
}

/* The export of 'im' (malloc'd text), failing the test on a refusal. */
static char *export_of(enum fmt f, const imported *im, skel_export_info *info)
{
	json_buf out;
	edit_error err;
	int rc;

	json_buf_init(&out, 0);
	rc = f == SPINE ? spine_export(im->asset, im->asset_len, im->file, im->s, &out, info, &err)
			: dragonbones_export(im->asset, im->asset_len, im->file, NULL, im->s, &out,
					     info, &err);
	if (rc)
		fail_msg("%s: export refused: %s (field %s)", im->file, err.message, err.field);
	return json_buf_take(&out);
}

/* The export's refusal: its code, field and message checked. */
static void export_refused(enum fmt f, const imported *im, int code, const char *field,
			   const char *message_part)
{
	json_buf out;
	edit_error err;

	json_buf_init(&out, 0);
	int rc = f == SPINE ? spine_export(im->asset, im->asset_len, im->file, im->s, &out, NULL, &err)
			    : dragonbones_export(im->asset, im->asset_len, im->file, NULL, im->s,
						 &out, NULL, &err);
	assert_int_equal(rc, code);
	assert_string_equal(err.field, field);
	if (!strstr(err.message, message_part))
		fail_msg("message '%s' lacks '%s'", err.message, message_part);
	assert_int_equal(out.len, 0);
	json_buf_release(&out);
}

static double angle_diff(double a, double b)
{
	double d = fmod(a - b, 360.0);

	if (d > 180)
		d -= 360;
	if (d < -180)
		d += 360;
	return fabs(d);
}

/* The draw order of slot node 'n': how many slots are drawn before it (the
 * import numbers the slots 0.., so an edited z reads back as its rank). */
static int z_rank(const scene *s, int n)
{
	node_props p, q;
	int rank = 0;

	scene_props(s, n, &p);
	for (int m = 0; m < scene_count(s); m++) {
		if (strncmp(scene_id(s, scene_at(s, m)), "slot:", 5))
			continue;
		scene_props(s, scene_at(s, m), &q);
		rank += q.z_right < p.z_right;
	}
	return rank;
}

/* Every node of 'a' is in 'b' with the same world matrix (to TOL) and the
 * same channels. */
static void assert_same_scene(const scene *a, const scene *b)
{
	node_props p, q;

	assert_int_equal(scene_count(a), scene_count(b));
	for (int pos = 0; pos < scene_count(a); pos++) {
		int n = scene_at(a, pos);
		const char *id = scene_id(a, n);
		int m = scene_find(b, id);
		if (m < 0)
			fail_msg("node '%s' missing after the round trip", id);
		const double *wa = scene_world_rows(a, n), *wb = scene_world_rows(b, m);
		for (int k = 0; k < 12; k++)
			if (fabs(wa[k] - wb[k]) > TOL)
				fail_msg("node '%s': world[%d] %.17g, after the round trip %.17g", id, k,
					 wa[k], wb[k]);
		scene_props(a, n, &p);
		scene_props(b, m, &q);
		if (fabs(p.t.x - q.t.x) > TOL || fabs(p.t.y - q.t.y) > TOL ||
		    fabs(p.s.x - q.s.x) > TOL || fabs(p.s.y - q.s.y) > TOL ||
		    angle_diff(quat_to_angle2d_deg(p.r), quat_to_angle2d_deg(q.r)) > TOL ||
		    angle_diff(p.shear[0], q.shear[0]) > TOL || angle_diff(p.shear[1], q.shear[1]) > TOL)
			fail_msg("node '%s': channels differ after the round trip", id);
		assert_int_equal(p.inherit, q.inherit);
		if (!strncmp(id, "slot:", 5))
			assert_int_equal(z_rank(a, n), z_rank(b, m));
		assert_string_equal(p.layer ? p.layer : "", q.layer ? q.layer : "");
		assert_string_equal(p.name ? p.name : "", q.name ? q.name : "");
		const char *pa = scene_parent(a, n) >= 0 ? scene_id(a, scene_parent(a, n)) : "";
		const char *pb = scene_parent(b, m) >= 0 ? scene_id(b, scene_parent(b, m)) : "";
		assert_string_equal(pa, pb);
	}
}

/* 'a' and 'b' the same JSON value, numbers bit for bit (cJSON_Compare
 * allows an epsilon) and members in the same order. */
static bool same_json(const cJSON *a, const cJSON *b)
{
	if ((a->type & 0xff) != (b->type & 0xff))
		return false;
	if (cJSON_IsNumber(a))
		return memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) == 0;
	if (cJSON_IsString(a))
		return !strcmp(a->valuestring, b->valuestring);
	if (!cJSON_IsArray(a) && !cJSON_IsObject(a))
		return true;
	const cJSON *x = a->child, *y = b->child;
	for (; x && y; x = x->next, y = y->next)
		if ((cJSON_IsObject(a) && strcmp(x->string, y->string)) || !same_json(x, y))
			return false;
	return !x && !y;
}

/* Import, export, import again; with 'same_json' the export must equal
 * 'original' as a JSON value. Returns the export (malloc'd). */
static char *round_trip(enum fmt f, const imported *im, const char *original)
{
	char *text = export_of(f, im, NULL);
	imported re = import_text(f, text, im->file);

	assert_same_scene(im->s, re.s);
	imported_release(&re);
	if (original) {
		cJSON *a = cJSON_Parse(original), *b = cJSON_Parse(text);
		assert_non_null(a);
		assert_non_null(b);
		if (!cJSON_Compare(a, b, true) || !same_json(a, b))
			fail_msg("%s: the export without an edit differs from the file", im->file);
		cJSON_Delete(a);
		cJSON_Delete(b);
		/* The DragonBones asset is already compact JSON with shortest
		 * numbers: the unedited export is the same bytes. */
		if (f == DB)
			assert_string_equal(text, im->asset);
	}
	return text;
}

static void round_trip_dir(enum fmt f, const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[1024];
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name), sl = strlen(suffix);
		if (l <= sl || strcmp(e->d_name + l - sl, suffix))
			continue;
		snprintf(path, sizeof(path), "%s%s", dir, e->d_name);
		char *text = read_file(path);
		assert_non_null(text);
		imported im = import_text(f, text, e->d_name);
		free(round_trip(f, &im, text));
		imported_release(&im);
		free(text);
		n++;
	}
	closedir(d);
	assert_true(n >= 3);
}

/* The element of array 'key' of 'o' whose "name" is 'name'. */
static cJSON *named(cJSON *o, const char *key, const char *name)
{
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key), *c;

	cJSON_ArrayForEach(c, arr) {
		cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "name");
		if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
			return c;
	}
	fail_msg("no %s named '%s'", key, name);
	return NULL;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(m))
		fail_msg("no number '%s'", key);
	return m->valuedouble;
}

static int node(const scene *s, const char *id)
{
	int n = scene_find(s, id);

	if (n < 0)
		fail_msg("no node '%s'", id);
	return n;
}

static void set_angle(scene *s, const char *id, double deg)
{
	node_props p = node_props_default();

	p.r = quat_from_angle2d_deg(deg);
	assert_int_equal(scene_set(s, node(s, id), PROP_R, &p), 0);
}

static void set_t(scene *s, const char *id, double x, double y)
{
	node_props p = node_props_default();

	p.t = (vec3){ x, y, 0 };
	assert_int_equal(scene_set(s, node(s, id), PROP_T, &p), 0);
}

static void set_shear(scene *s, const char *id, double a, double b)
{
	node_props p = node_props_default();

	p.shear[0] = a;
	p.shear[1] = b;
	assert_int_equal(scene_set(s, node(s, id), PROP_SHEAR, &p), 0);
}

static void set_inherit(scene *s, const char *id, int inherit)
{
	node_props p = node_props_default();

	p.inherit = inherit;
	assert_int_equal(scene_set(s, node(s, id), PROP_INHERIT, &p), 0);
}

static void set_z(scene *s, const char *id, double z)
{
	node_props p = node_props_default();

	p.z_right = p.z_left = z;
	assert_int_equal(scene_set(s, node(s, id), PROP_Z, &p), 0);
}

static void set_layer(scene *s, const char *id, const char *layer)
{
	node_props p = node_props_default();

	p.layer = layer;
	assert_int_equal(scene_set(s, node(s, id), PROP_LAYER, &p), 0);
}

/* ---------- round trips without an edit ---------- */

static void spine_files_round_trip(void **state)
{
	(void)state;
	round_trip_dir(SPINE, SPINE_DATA, ".json");
}

static void dragonbones_files_round_trip(void **state)
{
	(void)state;
	round_trip_dir(DB, DB_DATA, "_ske.json");
}

static void mecha_round_trip(void **state)
{
	(void)state;
	char *text = read_file(MECHA);

	if (!text) {
		print_message("mecha_1406 not found at %s\n", MECHA);
		skip();
	}
	imported im = import_text(DB, text, "mecha_1406_ske.json");
	skel_export_info info;
	char *out = export_of(DB, &im, &info);
	assert_int_equal(info.bones, 17);
	assert_int_equal(info.slots, 13);
	assert_int_equal(info.kept, 0);
	free(out);
	/* An edit of a bone with a parent, and the worlds after it. */
	set_angle(im.s, "pelvis", 12.5);
	set_t(im.s, "pelvis", -3, 7);
	scene_update(im.s, 2, NULL, NULL);
	free(round_trip(DB, &im, NULL));
	free(round_trip(DB, &im, NULL));
	imported_release(&im);
	im = import_text(DB, text, "mecha_1406_ske.json");
	free(round_trip(DB, &im, text));
	imported_release(&im);
	free(text);
}

/* ---------- edits, by hand ---------- */

static void spine_edits(void **state)
{
	(void)state;
	char *text = read_file(SPINE_DATA "chain.json");
	imported im = import_text(SPINE, text, "chain.json");

	set_angle(im.s, "hip", 45);                 /* file: rotation 90 */
	set_t(im.s, "spine_5f1", 7, 8);              /* file: x 5, no y */
	set_shear(im.s, "head", 3, 4);               /* file: shearX 5, shearY 12 */
	set_inherit(im.s, "spine_2e2", INHERIT_NO_SCALE);
	set_angle(im.s, "root", 190);                /* file: none; read back as -170 */
	set_z(im.s, "slot:fx", -1);                  /* fx to the back */
	set_layer(im.s, "slot:arm_20L", "chain.json#arm_20L.arm_5falt");
	set_layer(im.s, "slot:head", NULL);
	scene_update(im.s, 2, NULL, NULL);

	char *out = round_trip(SPINE, &im, NULL);
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	assert_true(fabs(num(named(j, "bones", "hip"), "rotation") - 45) < 1e-9);
	assert_true(num(named(j, "bones", "hip"), "scaleX") == 2);
	assert_true(num(named(j, "bones", "spine_1"), "x") == 7);
	assert_true(num(named(j, "bones", "spine_1"), "y") == -8);  /* y up */
	assert_true(num(named(j, "bones", "head"), "shearX") == 3);
	assert_true(num(named(j, "bones", "head"), "shearY") == 4);
	assert_true(fabs(num(named(j, "bones", "root"), "rotation") - -170) < 1e-9);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(named(j, "bones", "spine.2"),
							     "inherit")->valuestring, "noScale");
	/* Untouched: no member added at its default. */
	assert_null(cJSON_GetObjectItemCaseSensitive(named(j, "bones", "root"), "x"));
	cJSON *slots = cJSON_GetObjectItemCaseSensitive(j, "slots");
	const char *order[] = { "fx", "body", "arm L", "head" };
	for (int i = 0; i < 4; i++)
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(slots, i),
								     "name")->valuestring, order[i]);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(named(j, "slots", "arm L"),
							     "attachment")->valuestring, "arm_alt");
	assert_null(cJSON_GetObjectItemCaseSensitive(named(j, "slots", "head"), "attachment"));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(named(j, "slots", "arm L"),
							     "blend")->valuestring, "additive");
	/* The skins, clips and header pass through. */
	cJSON *orig = cJSON_Parse(text);
	assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(orig, "skins"),
				  cJSON_GetObjectItemCaseSensitive(j, "skins"), true));
	assert_true(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(orig, "skeleton"),
				  cJSON_GetObjectItemCaseSensitive(j, "skeleton"), true));
	cJSON_Delete(j);
	free(out);

	/* A deleted bone (and its slot under it) is kept as the file has it. */
	assert_int_equal(scene_delete(im.s, node(im.s, "arm_3aL")), 0);
	scene_update(im.s, 3, NULL, NULL);
	skel_export_info info;
	out = export_of(SPINE, &im, &info);
	assert_int_equal(info.kept, 2);
	assert_int_equal(info.bones, 5);
	j = cJSON_Parse(out);
	assert_true(cJSON_Compare(named(orig, "bones", "arm:L"), named(j, "bones", "arm:L"), true));
	cJSON_Delete(j);
	cJSON_Delete(orig);
	free(out);

	/* Refusals. */
	set_inherit(im.s, "hip", INHERIT_DB | DB_NO_SCALE);
	export_refused(SPINE, &im, RIGD_E_BAD_SKELETON, "bones[1].inherit", "bone 'hip'");
	set_inherit(im.s, "hip", INHERIT_NORMAL);
	set_layer(im.s, "slot:body", "chain.json#head.face");
	export_refused(SPINE, &im, RIGD_E_BAD_SKELETON, "slots[0].attachment", "slot 'body'");
	set_layer(im.s, "slot:body", "chain.json#body.torso_5farmor");  /* the "armored" skin's */
	export_refused(SPINE, &im, RIGD_E_BAD_SKELETON, "slots[0].attachment",
		       "attachment 'torso_armor' is not in the default skin");
	imported_release(&im);
	free(text);
}

static void dragonbones_edits(void **state)
{
	(void)state;
	char *text = read_file(DB_DATA "two_bone_ske.json");
	imported im = import_text(DB, text, "two_bone_ske.json");

	set_angle(im.s, "arm_5fl", 10);
	set_shear(im.s, "arm_5fl", 0, 25);
	set_t(im.s, "arm_5fl", 1, 2);
	set_inherit(im.s, "body", INHERIT_DB | DB_NO_SCALE);
	set_z(im.s, "slot:hidden", -5);
	set_layer(im.s, "slot:arm_5fl", "two_bone_ske.json#arm_5fl.arm_5fopen");
	set_layer(im.s, "slot:body", NULL);
	scene_update(im.s, 2, NULL, NULL);

	char *out = round_trip(DB, &im, NULL);
	cJSON *j = cJSON_Parse(out);
	cJSON *arm = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "armature"), 0);
	cJSON *tr = cJSON_GetObjectItemCaseSensitive(named(arm, "bone", "arm_l"), "transform");
	/* skY = -angle, skX = skY - shear[1] */
	assert_true(fabs(num(tr, "skY") - -10) < 1e-9);
	assert_true(fabs(num(tr, "skX") - -35) < 1e-9);
	assert_true(num(tr, "x") == 1 && num(tr, "y") == 2 && num(tr, "scY") == 3);
	assert_null(cJSON_GetObjectItemCaseSensitive(tr, "scX"));
	cJSON *body = named(arm, "bone", "body");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(body, "inheritScale")));
	assert_null(cJSON_GetObjectItemCaseSensitive(body, "inheritRotation"));
	cJSON *slots = cJSON_GetObjectItemCaseSensitive(arm, "slot");
	const char *order[] = { "hidden", "body", "arm_l" };
	for (int i = 0; i < 3; i++)
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(slots, i),
								     "name")->valuestring, order[i]);
	assert_true(num(named(arm, "slot", "arm_l"), "displayIndex") == 0);
	assert_true(num(named(arm, "slot", "body"), "displayIndex") == -1);
	assert_true(num(named(arm, "slot", "hidden"), "displayIndex") == -1);
	cJSON_Delete(j);
	free(out);

	/* Refusals: shear[0], a Spine inherit mode, a display of another slot. */
	set_shear(im.s, "arm_5fl", 5, 25);
	export_refused(DB, &im, RIGD_E_BAD_SKELETON, "armature[0].bone[1]", "bone 'arm_l': shear[0]");
	set_shear(im.s, "arm_5fl", 0, 25);
	set_inherit(im.s, "arm_5fl", INHERIT_NO_SCALE);
	export_refused(DB, &im, RIGD_E_BAD_SKELETON, "armature[0].bone[1]", "Spine mode");
	set_inherit(im.s, "arm_5fl", INHERIT_NORMAL);
	set_layer(im.s, "slot:body", "two_bone_ske.json#hidden.ghost");
	export_refused(DB, &im, RIGD_E_BAD_SKELETON, "armature[0].slot[0].displayIndex",
		       "slot 'body'");

	/* An armature by name: the file's one, or a refusal. */
	json_buf out2;
	edit_error err;
	set_layer(im.s, "slot:body", NULL);
	json_buf_init(&out2, 0);
	assert_int_equal(dragonbones_export(im.asset, im.asset_len, im.file, "two_bone", im.s,
					    &out2, NULL, &err), 0);
	assert_true(out2.len > 0);
	json_buf_reset(&out2);
	assert_int_equal(dragonbones_export(im.asset, im.asset_len, im.file, "nosuch", im.s,
					    &out2, NULL, &err), RIGD_E_BAD_SKELETON);
	assert_string_equal(err.field, "armature");
	assert_non_null(strstr(err.message, "'nosuch'"));
	assert_int_equal(out2.len, 0);
	json_buf_release(&out2);
	imported_release(&im);
	free(text);
}

/* The shared pieces, by hand. */
static void shared_pieces(void **state)
{
	(void)state;
	char name[64];

	assert_int_equal(skel_export_layer_name("a.json#arm_20L.arm_5falt", "a.json", "arm_20L",
						name, sizeof(name)), 7);
	assert_string_equal(name, "arm_alt");
	assert_int_equal(skel_export_layer_name(NULL, "a.json", "x", name, sizeof(name)), 0);
	assert_int_equal(skel_export_layer_name("b.json#x.y", "a.json", "x", name, sizeof(name)), -1);
	assert_int_equal(skel_export_layer_name("a.json#xy.z", "a.json", "x", name, sizeof(name)), -1);
	assert_true(skel_export_angle_near(-170, 190) == 190);
	assert_true(skel_export_angle_near(90 + 1e-12, 90) == 90);
	assert_true(skel_export_angle_near(45, 90) == 45);
	assert_true(skel_export_angle_near(-90, 270) == 270);
	assert_true(skel_export_angle_near(-89, 270) == 271);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shared_pieces),
		cmocka_unit_test(spine_files_round_trip),
		cmocka_unit_test(dragonbones_files_round_trip),
		cmocka_unit_test(mecha_round_trip),
		cmocka_unit_test(spine_edits),
		cmocka_unit_test(dragonbones_edits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
