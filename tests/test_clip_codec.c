/*
 * test_clip_codec.c: the Spine and DragonBones animation readers
 * (server/codec/spine_clip.c, dragonbones_clip.c).
 *
 * Synthetic files of tests/data/clips read and sampled against values
 * worked out by hand from the formats' rules (docs/clips.md); refusals
 * (code, field, and a message naming clip, bone and timeline) from
 * mutations of those files, and hostile input (every member replaced by
 * values of other types); the DragonBones sample mecha_1406, found beside
 * the glTF samples (RIGD_GLTF_SAMPLES "/../dragonbones"; its tests are
 * skipped when it is absent): its eight clips' names and durations from
 * the file's frame counts and frame rate, "walk" sampled by hand from the
 * file's frames, and every clip against DragonBones' own runtime
 * (tests/oracle/dragonbones_clip.mjs; skipped without node and the
 * @cocos/dragonbones-js package, see docs/clips.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "codec/dragonbones_clip.h"
#include "codec/spine_clip.h"
#include "core/clip.h"
#include "core/err.h"

#define DATA RIGD_SOURCE_DIR "/tests/data/clips/"
#define MECHA RIGD_GLTF_SAMPLES "/../dragonbones/mecha_1406/mecha_1406_ske.json"
#define MAX_NAMES 64

/* DragonBones' runtime keeps frame values in 32-bit floats, rotations in
 * radians: the values its tweens start from. */
#define F32(x) ((double)(float)(x))
#define F32R(deg) ((double)(float)((deg) * (M_PI / 180.0)) / (M_PI / 180.0))

/* |a - b| <= eps in doubles (cmocka's assert_float_equal compares floats). */
#define assert_near(a, b, eps)                                                              \
	do {                                                                                \
		double a_ = (a), b_ = (b);                                                  \
		if (!(fabs(a_ - b_) <= (eps)))                                              \
			fail_msg("%s = %.17g, expected %.17g (within %g)", #a, a_, b_,       \
				 (double)(eps));                                            \
	} while (0)

/* ---------- helpers ---------- */

static cJSON *load(const char *path)
{
	FILE *f;
	char *data;
	long n;
	cJSON *doc;

	if (strcmp(path, MECHA) == 0 && access(path, R_OK) != 0) {
		print_message("DragonBones sample not found at %s\n", path);
		skip();
	}
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	data = malloc((size_t)n + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
	data[n] = '\0';
	fclose(f);
	doc = cJSON_Parse(data);
	free(data);
	assert_non_null(doc);
	return doc;
}

/* The names of an array of {"name": ...} objects. */
static int names_of(const cJSON *arr, const char **out)
{
	const cJSON *item;
	int n = 0;

	cJSON_ArrayForEach(item, arr) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");

		assert_true(cJSON_IsString(name));
		assert_true(n < MAX_NAMES);
		out[n++] = name->valuestring;
	}
	return n;
}

typedef struct skel {
	cJSON *doc;
	const char *bones[MAX_NAMES], *slots[MAX_NAMES];
	clip_names names;
} skel;

static void spine_skel(skel *s, cJSON *doc)
{
	s->doc = doc;
	s->names.n_bones = names_of(cJSON_GetObjectItemCaseSensitive(doc, "bones"), s->bones);
	s->names.n_slots = names_of(cJSON_GetObjectItemCaseSensitive(doc, "slots"), s->slots);
	s->names.bones = s->bones;
	s->names.slots = s->slots;
}

static cJSON *db_armature(const cJSON *doc)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "armature"), 0);
}

static void db_skel(skel *s, cJSON *doc)
{
	const cJSON *arm = db_armature(doc);

	s->doc = doc;
	s->names.n_bones = names_of(cJSON_GetObjectItemCaseSensitive(arm, "bone"), s->bones);
	s->names.n_slots = names_of(cJSON_GetObjectItemCaseSensitive(arm, "slot"), s->slots);
	s->names.bones = s->bones;
	s->names.slots = s->slots;
}

static int read_spine(skel *s, clip_set *out, edit_error *err)
{
	return spine_clips_read(cJSON_GetObjectItemCaseSensitive(s->doc, "animations"), &s->names,
				out, err);
}

static int read_db(skel *s, clip_set *out, edit_error *err)
{
	const cJSON *arm = db_armature(s->doc);

	return dragonbones_clips_read(cJSON_GetObjectItemCaseSensitive(arm, "animation"), 0,
				      dragonbones_frame_rate(s->doc, arm), &s->names, out, err);
}

static bool has_line(const clip *c, const char *line)
{
	int i;

	for (i = 0; i < c->n_unsampled; i++)
		if (strcmp(c->unsampled[i], line) == 0)
			return true;
	return false;
}

static cJSON *path_get(cJSON *root, const char *const *keys)
{
	for (; *keys; keys++) {
		char *end;
		long index = strtol(*keys, &end, 10);

		root = *end == '\0' ? cJSON_GetArrayItem(root, (int)index)
				    : cJSON_GetObjectItemCaseSensitive(root, *keys);
		assert_non_null(root);
	}
	return root;
}

/* ---------- Spine ---------- */

static void test_spine_read(void **state)
{
	clip_bone_pose p[3];
	clip_channels arm_setup = { 10.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0 };
	clip_local2d l;
	edit_error err = { 0 };
	clip_set set;
	skel s;
	const clip *walk, *idle;
	const clip_attachment_key *k;
	const int *order;

	(void)state;
	spine_skel(&s, load(DATA "spine_walk.json"));
	assert_int_equal(read_spine(&s, &set, &err), 0);
	assert_int_equal(set.n, 2);
	walk = clip_set_find(&set, "walk");
	idle = clip_set_find(&set, "idle");
	assert_non_null(walk);
	assert_non_null(idle);
	assert_int_equal(walk->format, CLIP_FORMAT_SPINE);
	/* Durations: the last key over every timeline, events included. */
	assert_near(walk->duration, 2.0, 0);
	assert_near(idle->duration, 2.5, 0);
	assert_int_equal(walk->n_bone_timelines, 4);     /* rotate, translate, scale, shearx */
	assert_int_equal(walk->n_slot_timelines, 1);
	assert_int_equal(walk->n_order_keys, 2);
	assert_int_equal(walk->n_unsampled, 4);
	assert_true(has_line(walk, "bone 'arm': inherit"));
	assert_true(has_line(walk, "slot 'hand': rgba"));
	assert_true(has_line(walk, "events (1 keys)"));
	assert_true(has_line(walk, "ik 'leg_ik'"));

	/* t = 0.25: the rotate curve of test_clip.c's hand computation; the
	 * translate before its first key (setup); scale y 1 -> 0.5. */
	clip_sample(walk, 0.25, 0, p);
	assert_near(p[1].ch.rotate_deg, 10.4 + 0.074 / 0.103 * 11.2, 2e-6);
	/* Spine's runtime keeps the curve's points in 32-bit floats: the web
	 * runtime (spine-core 4.2, Animation.apply with the setup blend) gives
	 * 18.44660103868307 here, and so does rigd. */
	assert_near(p[1].ch.rotate_deg, 18.44660103868307, 1e-13);
	assert_near(p[1].ch.x, 0.0, 0);
	assert_near(p[1].ch.scale_x, 2.0, 1e-12);
	assert_near(p[1].ch.scale_y, 0.875, 1e-12);
	assert_near(p[2].ch.shear_x_deg, 5.0, 1e-12);
	assert_int_equal(p[0].mask, 0);
	clip_sample(walk, 0.5, 0, p);
	assert_near(p[2].ch.shear_x_deg, 10.0, 1e-12);
	clip_sample(walk, 1.0, 0, p);
	assert_near(p[1].ch.x, 4.0, 0);            /* stepped */
	assert_near(p[1].ch.y, 2.0, 0);
	clip_spine_local(&arm_setup, &p[1], &l);
	assert_near(l.angle_deg, 110.0, 1e-12);     /* setup 10 + 100 */
	assert_near(l.t[1], -2.0, 0);               /* y up to y down */
	assert_near(l.s[1], 0.5, 1e-12);
	clip_sample(walk, 1.75, 0, p);
	assert_near(p[1].ch.x, 8.0, 0);
	assert_near(p[1].ch.y, 0.0, 0);             /* y absent: 0 */

	/* Attachments: setup, "fist" from 0.5, none from 1. */
	assert_null(clip_slot_at(walk, &walk->slots[0], 0.25));
	k = clip_slot_at(walk, &walk->slots[0], 0.7);
	assert_string_equal(k->name, "fist");
	assert_null(clip_slot_at(walk, &walk->slots[0], 1.2)->name);
	assert_int_equal(walk->slots[0].slot, 1);

	/* Draw order: body (0) two places on: [hand, foot, body]. */
	assert_null(clip_order_at(walk, 0.25));
	order = clip_order_at(walk, 0.6);
	assert_non_null(order);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 0);
	assert_null(clip_order_at(walk, 1.3));

	/* idle: root's translatey 0 -> 3 over 2.5 s, y up. */
	clip_sample(idle, 1.25, 0, p);
	assert_near(p[0].ch.y, 1.5, 1e-12);
	assert_int_equal(p[0].mask, CLIP_M_Y);

	clip_set_release(&set);
	cJSON_Delete(s.doc);
}

/* One mutation of spine_walk.json and the refusal it must draw. */
typedef struct spine_bad {
	const char *const path[8];       /* to the member to change */
	const char *json;                /* its new value (NULL: delete it) */
	const char *field;
	const char *const mentions[3];   /* in the message */
} spine_bad;

static void test_spine_refusals(void **state)
{
	static const spine_bad cases[] = {
		{ { "animations", "walk", "bones", "arm", NULL }, NULL, "", { NULL } },
		{ { "animations", "walk", "bones", "arm", "rotate", "1", "time", NULL }, "0",
		  "skeleton.animations.walk.bones.arm.rotate[1].time", { "walk", "arm", "rotate key 1" } },
		{ { "animations", "walk", "bones", "arm", "rotate", "1", "value", NULL }, "1e999",
		  "skeleton.animations.walk.bones.arm.rotate[1].value", { "walk", "arm", "finite" } },
		{ { "animations", "walk", "bones", "arm", "rotate", "1", "value", NULL }, "\"ten\"",
		  "skeleton.animations.walk.bones.arm.rotate[1].value", { "walk", "arm", "number" } },
		{ { "animations", "walk", "bones", "arm", "rotate", "0", "curve", NULL }, "[0.25, 0, 0.75]",
		  "skeleton.animations.walk.bones.arm.rotate[0].curve", { "walk", "arm", "rotate key 0" } },
		{ { "animations", "walk", "bones", "arm", "translate", "0", "curve", NULL }, "\"smooth\"",
		  "skeleton.animations.walk.bones.arm.translate[0].curve", { "walk", "translate key 0", "8 numbers" } },
		{ { "animations", "walk", "bones", "arm", "rotate", "0", "curve", NULL }, "[0.25, 0, \"x\", 1]",
		  "skeleton.animations.walk.bones.arm.rotate[0].curve", { "walk", "curve[2]", NULL } },
		{ { "animations", "walk", "bones", "leg", "shearx", NULL }, "[{\"time\": -1}]",
		  "skeleton.animations.walk.bones.leg.shearx[0].time", { "walk", "leg", "negative" } },
		{ { "animations", "walk", "bones", "leg", "wobble", NULL }, "[]",
		  "skeleton.animations.walk.bones.leg.wobble", { "walk", "leg", "wobble" } },
		{ { "animations", "walk", "bones", "arm2", NULL }, "{}",
		  "skeleton.animations.walk.bones.arm2", { "walk", "unknown bone 'arm2'", NULL } },
		{ { "animations", "walk", "slots", "nose", NULL }, "{}",
		  "skeleton.animations.walk.slots.nose", { "walk", "unknown slot 'nose'", NULL } },
		{ { "animations", "walk", "slots", "hand", "attachment", "0", "name", NULL }, "3",
		  "skeleton.animations.walk.slots.hand.attachment[0].name", { "walk", "hand", NULL } },
		{ { "animations", "walk", "drawOrder", "0", "offsets", NULL },
		  "[{\"slot\": \"body\", \"offset\": 3}]",
		  "skeleton.animations.walk.drawOrder[0].offsets[0]", { "walk", "drawOrder key 0", "outside" } },
		{ { "animations", "walk", "drawOrder", "0", "offsets", NULL },
		  "[{\"slot\": \"hand\", \"offset\": 1}, {\"slot\": \"body\", \"offset\": 1}]",
		  "skeleton.animations.walk.drawOrder[0].offsets[1]", { "walk", "drawOrder key 0", NULL } },
		{ { "animations", "walk", "drawOrder", "0", "offsets", NULL },
		  "[{\"slot\": \"body\", \"offset\": 1}, {\"slot\": \"hand\", \"offset\": 0}]",
		  "skeleton.animations.walk.drawOrder[0].offsets[1]", { "walk", "taken", NULL } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const spine_bad *b = &cases[i];
		edit_error err = { 0 };
		clip_set set = { (clip *)1, 7 };
		cJSON *parent;
		const char *last;
		int depth = 0, j, rc;
		skel s;

		spine_skel(&s, load(DATA "spine_walk.json"));
		while (b->path[depth])
			depth++;
		last = b->path[depth - 1];
		{
			const char *up[8] = { 0 };

			for (j = 0; j < depth - 1; j++)
				up[j] = b->path[j];
			parent = path_get(s.doc, up);
		}
		if (!b->json) {
			/* The control case: unchanged, it reads. */
			rc = read_spine(&s, &set, &err);
			assert_int_equal(rc, 0);
			clip_set_release(&set);
			cJSON_Delete(s.doc);
			continue;
		}
		if (cJSON_IsArray(parent))
			cJSON_ReplaceItemInArray(parent, atoi(last), cJSON_Parse(b->json));
		else if (cJSON_GetObjectItemCaseSensitive(parent, last))
			cJSON_ReplaceItemInObjectCaseSensitive(parent, last, cJSON_Parse(b->json));
		else
			cJSON_AddItemToObject(parent, last, cJSON_Parse(b->json));
		rc = read_spine(&s, &set, &err);
		if (rc != RIGD_E_BAD_SKELETON || strcmp(err.field, b->field) != 0)
			print_message("case %zu: rc %d field '%s' message '%s'\n", i, rc, err.field,
				      err.message);
		assert_int_equal(rc, RIGD_E_BAD_SKELETON);
		assert_int_equal(err.code, RIGD_E_BAD_SKELETON);
		assert_string_equal(err.field, b->field);
		for (j = 0; j < 3 && b->mentions[j]; j++)
			if (!strstr(err.message, b->mentions[j]))
				fail_msg("case %zu: '%s' does not name '%s'", i, err.message, b->mentions[j]);
		assert_null(set.clips);          /* nothing built */
		assert_int_equal(set.n, 0);
		cJSON_Delete(s.doc);
	}
}

/* ---------- DragonBones ---------- */

static void test_dragonbones_read(void **state)
{
	clip_bone_pose p[2];
	clip_channels arm_setup = { 30.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0 };
	clip_local2d l;
	edit_error err = { 0 };
	clip_set set;
	skel s;
	const clip *swing, *still;
	const int *order;

	(void)state;
	db_skel(&s, load(DATA "dragonbones_swing.json"));
	assert_int_equal(read_db(&s, &set, &err), 0);
	assert_int_equal(set.n, 2);
	swing = clip_set_find(&set, "swing");
	still = clip_set_find(&set, "still");
	assert_non_null(swing);
	assert_non_null(still);
	/* The armature's 10 frames per second, not the document's 24. */
	assert_near(swing->frame_rate, 10.0, 0);
	assert_near(swing->duration, 1.0, 1e-15);       /* 10 frames */
	assert_near(still->duration, 0.3, 1e-15);       /* 3 frames */
	assert_int_equal(swing->n_bone_timelines, 4);
	assert_int_equal(swing->n_unsampled, 2);
	assert_true(has_line(swing, "slot 's1': colorFrame"));
	assert_true(has_line(swing, "ffd (1 timelines or frames)"));

	/* arm rotate: 170 at frame 0, -170 at 5 taken the short way (190),
	 * 170 at 10 (back from 190); each kept as a 32-bit float in radians. */
	clip_sample(swing, 0.25, 0, p);
	assert_near(p[1].ch.rotate_deg, (F32R(170.0) + F32R(190.0)) / 2.0, 1e-9);
	assert_near(p[1].ch.rotate_deg, 180.0, 1e-5);
	clip_dragonbones_local(&arm_setup, &p[1], &l);
	assert_near(l.angle_deg, -(30.0 + (F32R(170.0) + F32R(190.0)) / 2.0), 1e-9);
	assert_near(l.shear_deg[1], 0.0, 1e-12);
	assert_near(l.s[0], 2.0, 0);                    /* the one scale frame */
	assert_near(l.s[1], 1.0, 0);
	clip_sample(swing, 0.5, 0, p);
	assert_near(p[1].ch.rotate_deg, F32R(190.0), 1e-9);
	clip_sample(swing, 0.75, 0, p);
	assert_near(p[1].ch.rotate_deg, (F32R(190.0) + F32R(170.0)) / 2.0, 1e-9);

	/* root: clockwise 1 from 0 to -90 turns the positive way, to 270;
	 * the loop then tweens the last frame (frames 2-10) back to frame 0's
	 * 0, the short way: 270 -> 360 (the closing key is computed, not
	 * stored: a full turn). */
	clip_sample(swing, 0.1, 0, p);
	assert_near(p[0].ch.rotate_deg, F32R(270.0) / 2.0, 1e-9);
	clip_sample(swing, 0.6, 0, p);
	assert_near(p[0].ch.rotate_deg, (F32R(270.0) + 360.0) / 2.0, 1e-9);

	/* arm translate: eased in (tweenEasing -1: quadratic, amount 1) from
	 * (0, 0) to (10, 4) over frames 0-4: at frame 2, progress 0.5 ->
	 * 0.25. Then the loop back to (0, 0) over frames 4-10 on the curve
	 * [0.5, 0, 0.5, 1]: 7 samples, at 1/8 ... 7/8; the 4th (x = 0.5) is
	 * found by halving the parameter from [0, 1] until the interval is
	 * 2^-14 < 0.0001 wide, its last point at u = 0.5 - 2^-14, where
	 * y = 3u^2 - 2u^3 = 0.5 - 1.5 * 2^-14 + 2 * 2^-42 = 0.49990845..., kept
	 * as 4999 / 10000. At frame 7, progress 0.5 is that sample: x = 10 -
	 * 10 * 0.4999 = 5.001, y = 4 - 4 * 0.4999 = 2.0004. */
	clip_sample(swing, 0.2, 0, p);
	assert_near(p[1].ch.x, 2.5, 1e-9);
	assert_near(p[1].ch.y, 1.0, 1e-9);
	clip_sample(swing, 0.7, 0, p);
	assert_near(p[1].ch.x, 5.001, 1e-9);
	assert_near(p[1].ch.y, 2.0004, 1e-9);

	/* Display index 1 for frames 0-3, then -1 (none). */
	assert_int_equal(swing->slots[0].slot, 1);
	assert_int_equal(clip_slot_at(swing, &swing->slots[0], 0.2)->index, 1);
	assert_int_equal(clip_slot_at(swing, &swing->slots[0], 0.35)->index, -1);
	/* zOrder: slot 2 two places back: [s2, s0, s1]; then setup. */
	order = clip_order_at(swing, 0.1);
	assert_non_null(order);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[1], 0);
	assert_int_equal(order[2], 1);
	assert_null(clip_order_at(swing, 0.55));

	clip_set_release(&set);
	cJSON_Delete(s.doc);
}

typedef struct db_bad {
	const char *const path[10];
	const char *json;
	const char *field;
	const char *const mentions[3];
} db_bad;

static void test_dragonbones_refusals(void **state)
{
	static const db_bad cases[] = {
		{ { "armature", "0", "animation", "0", "bone", "0", "name", NULL }, "\"wing\"",
		  "skeleton.armature[0].animation[0].bone[0]", { "swing", "unknown bone 'wing'", NULL } },
		{ { "armature", "0", "animation", "0", "bone", "0", "rotateFrame", "1", "rotate", NULL },
		  "-1e999", "skeleton.armature[0].animation[0].bone[0].rotateFrame[1].rotate",
		  { "swing", "bone 'arm'", "rotateFrame frame 1" } },
		{ { "armature", "0", "animation", "0", "bone", "0", "translateFrame", "1", "curve", NULL },
		  "[0.5, 0, 0.5]", "skeleton.armature[0].animation[0].bone[0].translateFrame[1].curve",
		  { "swing", "bone 'arm'", "curve" } },
		{ { "armature", "0", "animation", "0", "bone", "0", "rotateFrame", "0", "duration", NULL },
		  "2.5", "skeleton.armature[0].animation[0].bone[0].rotateFrame[0].duration",
		  { "swing", "rotateFrame frame 0", "whole" } },
		{ { "armature", "0", "animation", "0", "bone", "1", "rotateFrame", "0", "tweenEasing", NULL },
		  "\"fast\"", "skeleton.armature[0].animation[0].bone[1].rotateFrame[0].tweenEasing",
		  { "swing", "bone 'root'", NULL } },
		{ { "armature", "0", "animation", "0", "slot", "0", "name", NULL }, "\"s9\"",
		  "skeleton.armature[0].animation[0].slot[0]", { "swing", "unknown slot 's9'", NULL } },
		{ { "armature", "0", "animation", "0", "zOrder", "frame", "0", "zOrder", NULL }, "[2, -3]",
		  "skeleton.armature[0].animation[0].zOrder.frame[0]", { "swing", "zOrder frame 0", "outside" } },
		{ { "armature", "0", "animation", "0", "zOrder", "frame", "0", "zOrder", NULL }, "[2, -1, 0]",
		  "skeleton.armature[0].animation[0].zOrder.frame[0]", { "swing", "pairs", NULL } },
		{ { "armature", "0", "animation", "1", "duration", NULL }, "-3",
		  "skeleton.armature[0].animation[1].duration", { "still", "duration", NULL } },
		{ { "armature", "0", "animation", "1", "duration", NULL }, "1e7",
		  "skeleton.armature[0].animation[1].duration", { "still", "up to", NULL } },
		{ { "armature", "0", "animation", "0", "bone", "1", "rotateFrame", "0", "clockwise", NULL },
		  "1e300", "skeleton.armature[0].animation[0].bone[1].rotateFrame[0].clockwise",
		  { "swing", "bone 'root'", "turns" } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const db_bad *b = &cases[i];
		const char *up[10] = { 0 };
		edit_error err = { 0 };
		clip_set set;
		cJSON *parent;
		int depth = 0, j, rc;
		skel s;

		db_skel(&s, load(DATA "dragonbones_swing.json"));
		while (b->path[depth])
			depth++;
		for (j = 0; j < depth - 1; j++)
			up[j] = b->path[j];
		parent = path_get(s.doc, up);
		cJSON_ReplaceItemInObjectCaseSensitive(parent, b->path[depth - 1], cJSON_Parse(b->json));
		rc = read_db(&s, &set, &err);
		if (rc != RIGD_E_BAD_SKELETON || strcmp(err.field, b->field) != 0)
			print_message("case %zu: rc %d field '%s' message '%s'\n", i, rc, err.field,
				      err.message);
		assert_int_equal(rc, RIGD_E_BAD_SKELETON);
		assert_string_equal(err.field, b->field);
		for (j = 0; j < 3 && b->mentions[j]; j++)
			if (!strstr(err.message, b->mentions[j]))
				fail_msg("case %zu: '%s' does not name '%s'", i, err.message, b->mentions[j]);
		assert_null(set.clips);
		assert_int_equal(set.n, 0);
		cJSON_Delete(s.doc);
	}
}

/* ---------- mecha_1406 ---------- */

static void test_mecha_clips(void **state)
{
	/* Durations in frames from the file's "duration", at its 24 fps. */
	static const struct {
		const char *name;
		int frames;
	} expect[] = {
		{ "idle", 60 }, { "walk", 30 }, { "attack_01", 30 }, { "death", 22 },
		{ "hit", 16 }, { "jump", 10 }, { "skill_01", 40 }, { "aim", 100 },
	};
	clip_summary rows[8];
	edit_error err = { 0 };
	clip_set set;
	skel s;
	int i;

	(void)state;
	db_skel(&s, load(MECHA));
	assert_near(dragonbones_frame_rate(s.doc, db_armature(s.doc)), 24.0, 0);
	assert_int_equal(read_db(&s, &set, &err), 0);
	assert_int_equal(clip_list(&set, rows, 8), 8);
	for (i = 0; i < 8; i++) {
		const cJSON *anim = cJSON_GetArrayItem(
			cJSON_GetObjectItemCaseSensitive(db_armature(s.doc), "animation"), i);
		const cJSON *bone;
		int timelines = 0;

		assert_string_equal(rows[i].name, expect[i].name);
		assert_near(rows[i].duration, expect[i].frames / 24.0, 1e-15);
		assert_near(rows[i].frame_rate, 24.0, 0);
		/* One clip timeline per frame array of each bone. */
		cJSON_ArrayForEach(bone, cJSON_GetObjectItemCaseSensitive(anim, "bone")) {
			timelines += cJSON_GetObjectItemCaseSensitive(bone, "translateFrame") != NULL;
			timelines += cJSON_GetObjectItemCaseSensitive(bone, "rotateFrame") != NULL;
			timelines += cJSON_GetObjectItemCaseSensitive(bone, "scaleFrame") != NULL;
		}
		assert_int_equal(rows[i].n_bone_timelines, timelines);
		assert_int_equal(rows[i].n_unsampled, 0);
	}
	clip_set_release(&set);
	cJSON_Delete(s.doc);
}

/*
 * walk at frame 2 (t = 2/24 s), from the file: pelvis translateFrame
 * (-4.69, -15.64) for 4 frames linear to (-3.59, -11.66): halfway,
 * (-4.14, -13.65); rotateFrame 8.76 -> 8.5: 8.63; each value as the
 * runtime keeps it, a 32-bit float (rotations in radians), so -4.14 is
 * -4.13999998569... The setup transform x -5.872, y -103.685,
 * skX = skY = -90.6854 gives rigd's t = (-10.012, -117.335) and angle
 * -(-90.6854 + 8.63) = 82.0554, shear 0, to that float rounding.
 * At frame 5 (into the 3-frame second key, 1/3 of the way): x = -3.59 +
 * 0.4 / 3 = -3.456666..., rotation 8.5 + 0.26 / 3 = 8.586666...
 */
#define HALF(a, b) (F32(a) + (F32(b) - F32(a)) * 0.5)
#define HALF_R(a, b) (F32R(a) + (F32R(b) - F32R(a)) * 0.5)
static void test_mecha_walk(void **state)
{
	clip_channels setup = { -90.6854, -5.872, -103.685, 1.0, 1.0, 0.0, 0.0 };
	clip_bone_pose p[MAX_NAMES];
	edit_error err = { 0 };
	clip_local2d l;
	clip_set set;
	const clip *walk;
	int pelvis;
	skel s;

	(void)state;
	db_skel(&s, load(MECHA));
	assert_int_equal(read_db(&s, &set, &err), 0);
	walk = clip_set_find(&set, "walk");
	assert_non_null(walk);
	pelvis = clip_name_index(s.names.bones, s.names.n_bones, "pelvis");
	assert_true(pelvis >= 0);
	clip_sample(walk, 2.0 / 24.0, 0, p);
	assert_int_equal(p[pelvis].mask, CLIP_M_X | CLIP_M_Y | CLIP_M_ROTATE | CLIP_M_SKEW);
	assert_near(p[pelvis].ch.x, HALF(-4.69, -3.59), 1e-12);
	assert_near(p[pelvis].ch.y, HALF(-15.64, -11.66), 1e-12);
	assert_near(p[pelvis].ch.rotate_deg, HALF_R(8.76, 8.5), 1e-12);
	assert_near(p[pelvis].ch.x, -4.14, 1e-6);
	assert_near(p[pelvis].ch.y, -13.65, 1e-6);
	assert_near(p[pelvis].ch.rotate_deg, 8.63, 1e-6);
	clip_dragonbones_local(&setup, &p[pelvis], &l);
	assert_near(l.t[0], -10.012, 1e-6);
	assert_near(l.t[1], -117.335, 1e-6);
	assert_near(l.angle_deg, 82.0554, 1e-6);
	assert_near(l.shear_deg[1], 0.0, 1e-12);
	clip_sample(walk, 5.0 / 24.0, 0, p);
	assert_near(p[pelvis].ch.x, F32(-3.59) + (F32(-3.19) - F32(-3.59)) / 3.0, 1e-12);
	assert_near(p[pelvis].ch.rotate_deg, F32R(8.5) + (F32R(8.76) - F32R(8.5)) / 3.0, 1e-12);
	assert_near(p[pelvis].ch.x, -3.59 + 0.4 / 3.0, 1e-6);
	assert_near(p[pelvis].ch.rotate_deg, 8.5 + 0.26 / 3.0, 1e-6);
	clip_set_release(&set);
	cJSON_Delete(s.doc);
}

/*
 * Clip 'c' of 'file' against DragonBones' own runtime
 * (tests/oracle/dragonbones_clip.mjs: @cocos/dragonbones-js, found in
 * web/node_modules or under RIGD_DBJS_DIR): each bone's animation pose at
 * times[] up to the clip's duration must equal clip_sample's channels to
 * 1e-9; 'loop' plays it looping, else once. Returns false when node or the
 * package is missing; raises *worst to the largest difference seen.
 */
static bool against_runtime(const skel *s, const clip *c, const char *file, const double *times,
			    size_t n, bool loop, double *worst)
{
	clip_bone_pose p[MAX_NAMES];
	char cmd[1024], list[512] = "", *out = NULL;
	size_t len = 0, cap = 0, ti, n_times = 0;
	cJSON *oracle;
	FILE *pipe;
	int status;

	for (ti = 0; ti < n && times[ti] <= c->duration; ti++) {
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%.17g", ti ? "," : "",
			 times[ti]);
		n_times++;
	}
	snprintf(cmd, sizeof(cmd), "node %s/tests/oracle/dragonbones_clip.mjs %s %s %s %s 2>/dev/null",
		 RIGD_SOURCE_DIR, file, c->name, list, loop ? "loop" : "once");
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	for (;;) {
		size_t got;

		if (len + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		if ((got = fread(out + len, 1, 4096, pipe)) == 0)
			break;
		len += got;
	}
	out[len] = '\0';
	status = pclose(pipe);
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 77 || WEXITSTATUS(status) == 127)) {
		free(out);
		return false;
	}
	assert_int_equal(status, 0);
	oracle = cJSON_Parse(out);
	free(out);
	assert_non_null(oracle);
	assert_int_equal(cJSON_GetArraySize(oracle), (int)n_times);
	for (ti = 0; ti < n_times; ti++) {
		const cJSON *at = cJSON_GetArrayItem(oracle, (int)ti), *bone;

		clip_sample(c, times[ti], 0, p);
		cJSON_ArrayForEach(bone, at) {
			int b = clip_name_index(s->names.bones, s->names.n_bones, bone->string), j;
			double mine[6];

			assert_true(b >= 0);
			mine[0] = p[b].ch.x;
			mine[1] = p[b].ch.y;
			mine[2] = p[b].ch.rotate_deg;
			mine[3] = p[b].ch.shear_x_deg;
			mine[4] = p[b].ch.scale_x;
			mine[5] = p[b].ch.scale_y;
			for (j = 0; j < 6; j++) {
				double theirs = cJSON_GetArrayItem(bone, j)->valuedouble;
				double d = fabs(mine[j] - theirs);

				if (d > *worst)
					*worst = d;
				if (d > 1e-9)
					fail_msg("%s at %g: bone %s channel %d: rigd %.17g, runtime %.17g",
						 c->name, times[ti], bone->string, j, mine[j], theirs);
			}
		}
	}
	cJSON_Delete(oracle);
	return true;
}

/* Every clip of mecha_1406 (played once, as the runtime's gotoAndStop
 * does) and the synthetic swing (looping: its closing tweens, eased-in and
 * sampled curves, clockwise turns) against the runtime. */
static void test_against_runtime(void **state)
{
	static const double times[] = { 0.0, 0.05, 2.0 / 24.0, 0.1, 0.25, 0.3, 0.41, 0.5, 0.6,
					0.7, 0.77, 0.9, 0.95, 1.1, 1.6, 2.4, 4.0 };
	edit_error err = { 0 };
	clip_set set;
	double worst = 0.0;
	bool ran = true;
	int i;
	skel s;

	(void)state;
	db_skel(&s, load(DATA "dragonbones_swing.json"));
	assert_int_equal(read_db(&s, &set, &err), 0);
	ran = against_runtime(&s, clip_set_find(&set, "swing"), DATA "dragonbones_swing.json", times,
			      sizeof(times) / sizeof(times[0]), true, &worst);
	clip_set_release(&set);
	cJSON_Delete(s.doc);
	if (!ran) {
		print_message("the DragonBones runtime (node, @cocos/dragonbones-js) is not available\n");
		skip();
	}
	db_skel(&s, load(MECHA));
	assert_int_equal(read_db(&s, &set, &err), 0);
	for (i = 0; i < set.n; i++)
		assert_true(against_runtime(&s, &set.clips[i], MECHA, times,
					    sizeof(times) / sizeof(times[0]), false, &worst));
	print_message("swing and mecha_1406's %d clips against the DragonBones runtime: worst difference %.3g\n",
		      set.n, worst);
	clip_set_release(&set);
	cJSON_Delete(s.doc);
}

/*
 * Hostile input: every member and element under the animations of both
 * synthetic files replaced in turn by each of a few values of other types
 * or out of range. Each read either succeeds or refuses with bad_skeleton
 * and a field, never crashes, and leaves nothing behind on a refusal (the
 * suite's sanitiser and valgrind runs check the memory).
 */
static int mutate_all(cJSON *node, cJSON *root, skel *s, bool spine, int *reads)
{
	static const char *const values[] = { "null", "\"x\"", "1e308", "-1", "2.5", "[]", "{}",
					      "[1, 2, 3, 4]", "true" };
	cJSON *child;
	int k = 0;

	for (child = node ? node->child : NULL; child; child = child->next, k++) {
		size_t v;

		mutate_all(child, root, s, spine, reads);
		for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			cJSON *replacement = cJSON_Parse(values[v]), *old;
			edit_error err = { 0 };
			clip_set set;
			int rc;

			assert_non_null(replacement);
			/* Swap the child out for the replacement, keeping its name. */
			old = child;
			if (old->string) {
				replacement->string = old->string;
				old->string = NULL;
			}
			replacement->prev = old->prev;
			replacement->next = old->next;
			if (old->next)
				old->next->prev = replacement;
			if (node->child == old)
				node->child = replacement;
			else
				old->prev->next = replacement;
			if (node->child->prev == old)
				node->child->prev = replacement;
			rc = spine ? read_spine(s, &set, &err) : read_db(s, &set, &err);
			(*reads)++;
			if (rc) {
				assert_int_equal(rc, RIGD_E_BAD_SKELETON);
				assert_true(err.field[0] != '\0');
				assert_null(set.clips);
			} else {
				clip_bone_pose p[MAX_NAMES];
				int c;

				for (c = 0; c < set.n; c++) {
					clip_sample(&set.clips[c], 0.3, 0, p);
					clip_order_at(&set.clips[c], 0.3);
				}
			}
			clip_set_release(&set);
			/* Put the original back. */
			if (replacement->string) {
				old->string = replacement->string;
				replacement->string = NULL;
			}
			if (replacement->next)
				replacement->next->prev = old;
			if (node->child == replacement)
				node->child = old;
			else
				replacement->prev->next = old;
			if (node->child->prev == replacement)
				node->child->prev = old;
			replacement->next = replacement->prev = NULL;
			cJSON_Delete(replacement);
		}
	}
	(void)root;
	return k;
}

static void test_hostile(void **state)
{
	int reads = 0;
	skel s;

	(void)state;
	spine_skel(&s, load(DATA "spine_walk.json"));
	mutate_all(cJSON_GetObjectItemCaseSensitive(s.doc, "animations"), s.doc, &s, true, &reads);
	cJSON_Delete(s.doc);
	db_skel(&s, load(DATA "dragonbones_swing.json"));
	mutate_all(cJSON_GetObjectItemCaseSensitive(db_armature(s.doc), "animation"), s.doc, &s,
		   false, &reads);
	cJSON_Delete(s.doc);
	print_message("%d mutated reads\n", reads);
	assert_true(reads > 500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spine_read),
		cmocka_unit_test(test_spine_refusals),
		cmocka_unit_test(test_dragonbones_read),
		cmocka_unit_test(test_dragonbones_refusals),
		cmocka_unit_test(test_mecha_clips),
		cmocka_unit_test(test_mecha_walk),
		cmocka_unit_test(test_against_runtime),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
