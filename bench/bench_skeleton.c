/*
 * bench_skeleton.c: how fast a Spine skeleton comes in.
 *
 * A program that prints figures, never a test. The skeleton is made here:
 * BONES (100) bones in a tree (each bone's parent is bone (i - 1) / 2),
 * with rotations, scales and shears and every fifth bone in an inherit
 * mode other than normal; SLOTS (120) slots, the first 100 one per bone and
 * 20 more on the first bones, each with a region attachment in the default
 * skin and a second one in a second skin; CLIPS (20) animations of 30 bones
 * each, a rotate and a translate timeline of 10 Bezier keys; four IK
 * constraints (two of two bones, one with softness and the other bend; one
 * of mix 0.5; one that stretches), their targets in other branches. For
 * that file, the median and the slowest of RUNS imports of:
 *
 *   - the floor: cJSON parsing the same body and freeing it, which any
 *     reader of the file pays;
 *   - spine_import_decode (the body read and checked whole);
 *   - spine_import_batch (the create ops and the report);
 *   - the batch applied to an empty 2D scene and its world matrices
 *     computed (edit_apply, scene_update);
 *   - the whole server-side import on a real SQLite file with
 *     synchronous=FULL: decode, batch, the skeleton stored as an asset
 *     with the batch (engine_assets_submit) and the commit (engine_commit),
 *     into a new scene each run, and its world matrices computed: what the
 *     route and its turn do before they answer;
 *   - an IK target moved (one set op and the pass that re-solves its
 *     constraint and the chain's subtree) in the scene of the third line
 *     once it has the skeleton as the engine gives it.
 *
 * Usage: bench_skeleton [--dir DIR] [--runs N]
 */
#include "codec/proto.h"
#include "codec/skel_clips_read.h"
#include "codec/spine.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/skel_clips.h"
#include "engine/engine.h"

#include <cjson/cJSON.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BONES 100
#define SLOTS 120
#define CLIPS 20
#define CLIP_BONES 30
#define KEYS 10

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A growable string. */
typedef struct text {
	char *p;
	size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		size_t room = t->cap - t->n;
		va_start(ap, fmt);
		int k = vsnprintf(t->p + t->n, room, fmt, ap);
		va_end(ap);
		if (k >= 0 && (size_t)k < room) {
			t->n += (size_t)k;
			return;
		}
		t->cap = t->cap ? 2 * t->cap : 1 << 16;
		if (!(t->p = realloc(t->p, t->cap))) {
			fprintf(stderr, "bench_skeleton: out of memory\n");
			exit(1);
		}
	}
}

static const char *const modes[] = { "onlyTranslation", "noRotationOrReflection", "noScale",
				      "noScaleOrReflection" };

/* The import body {"skeleton": ...} of the benchmark's skeleton. */
static char *make_body(size_t *len)
{
	text t = { 0 };

	put(&t, "{\"skeleton\":{\"skeleton\":{\"hash\":\"bench\",\"spine\":\"4.2.43\"},\"bones\":[");
	for (int i = 0; i < BONES; i++) {
		put(&t, "%s{\"name\":\"bone %d\"", i ? "," : "", i);
		if (i)
			put(&t, ",\"parent\":\"bone %d\",\"x\":%d,\"y\":%d,\"rotation\":%d,\"scaleX\":%.2f,"
				"\"shearX\":%d,\"length\":20", (i - 1) / 2, 10 + i % 7, i % 5 - 2,
			    (i * 37) % 180 - 90, 0.8 + (i % 4) * 0.1, i % 3 ? 0 : 5);
		if (i && i % 5 == 0)
			put(&t, ",\"inherit\":\"%s\"", modes[(i / 5) % 4]);
		put(&t, "}");
	}
	put(&t, "],\"slots\":[");
	for (int i = 0; i < SLOTS; i++)
		put(&t, "%s{\"name\":\"slot %d\",\"bone\":\"bone %d\",\"attachment\":\"a%d\"}", i ? "," : "",
		    i, i % BONES, i);
	put(&t, "],\"skins\":[");
	for (int s = 0; s < 2; s++) {
		put(&t, "%s{\"name\":\"%s\",\"attachments\":{", s ? "," : "", s ? "alt" : "default");
		for (int i = 0; i < SLOTS; i++)
			put(&t, "%s\"slot %d\":{\"%s%d\":{\"x\":1,\"y\":2,\"width\":32,\"height\":16}}",
			    i ? "," : "", i, s ? "b" : "a", i);
		put(&t, "}}");
	}
	/* Four IK constraints (two of one bone, two of two), their targets in
	 * other branches: solved by every pass that moves them. */
	put(&t, "],\"ik\":[{\"name\":\"a\",\"bones\":[\"bone 3\",\"bone 7\"],\"target\":\"bone 50\"},"
		"{\"name\":\"b\",\"bones\":[\"bone 5\",\"bone 12\"],\"target\":\"bone 70\","
		"\"bendPositive\":false,\"softness\":5},"
		"{\"name\":\"c\",\"bones\":[\"bone 9\"],\"target\":\"bone 60\",\"mix\":0.5},"
		"{\"name\":\"d\",\"bones\":[\"bone 13\"],\"target\":\"bone 40\",\"stretch\":true}");
	put(&t, "],\"animations\":{");
	for (int c = 0; c < CLIPS; c++) {
		put(&t, "%s\"clip%d\":{\"bones\":{", c ? "," : "", c);
		for (int b = 0; b < CLIP_BONES; b++) {
			put(&t, "%s\"bone %d\":{\"rotate\":[", b ? "," : "", (b * 3 + c) % BONES);
			for (int k = 0; k < KEYS; k++)
				put(&t, "%s{\"time\":%.3f,\"value\":%d,\"curve\":[%.3f,%d,%.3f,%d]}", k ? "," : "",
				    k * 0.1, (k * 17) % 90, k * 0.1 + 0.03, k, k * 0.1 + 0.07, k + 5);
			put(&t, "],\"translate\":[");
			for (int k = 0; k < KEYS; k++)
				put(&t, "%s{\"time\":%.3f,\"x\":%d,\"y\":%d}", k ? "," : "", k * 0.1, k, -k);
			put(&t, "]}");
		}
		put(&t, "}}");
	}
	put(&t, "}}}");
	*len = t.n;
	return t.p;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("%-44s %9.3f ms %9.3f ms\n", what, v[n / 2], v[n - 1]);
}

static void die(const char *what, const edit_error *err)
{
	fprintf(stderr, "bench_skeleton: %s: %s\n", what, err ? err->message : "failed");
	exit(1);
}

/* Splits the report's ids (one per line) into an array over a copy. */
static char **split(const skel_import_report *rep, char **block)
{
	char **ids = calloc((size_t)rep->n_ids + 1, sizeof(char *));
	int n = 0;

	*block = malloc(rep->ids_len + 1);
	if (!ids || !*block)
		die("split", NULL);
	memcpy(*block, rep->ids ? rep->ids : "", rep->ids_len);
	(*block)[rep->ids_len] = '\0';
	for (char *p = *block, *nl; n < rep->n_ids && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		ids[n++] = p;
	}
	return ids;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int runs = 50;
	size_t len;
	char *body = make_body(&len);
	char path[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_skeleton [--dir DIR] [--runs N]\n");
			return 2;
		}
	}
	if (runs < 3)
		runs = 3;
	double *parse = calloc((size_t)runs, sizeof(double)), *dec = calloc((size_t)runs, sizeof(double));
	double *bat = calloc((size_t)runs, sizeof(double)), *app = calloc((size_t)runs, sizeof(double));
	double *all = calloc((size_t)runs, sizeof(double)), *ikmove = calloc((size_t)runs, sizeof(double));
	if (!parse || !dec || !bat || !app || !all)
		die("calloc", NULL);
	snprintf(path, sizeof(path), "%s/bench_skeleton-%d.db", dir, (int)getpid());
	engine_opts o = engine_opts_default();
	int rc;
	char msg[512];
	engine *e = engine_open(path, &o, &rc, msg, sizeof(msg));
	if (!e) {
		fprintf(stderr, "bench_skeleton: %s\n", msg);
		return 1;
	}
	printf("a Spine skeleton of %d bones, %d slots, 2 skins, %d clips (%zu bytes), %d runs\n",
	       BONES, SLOTS, CLIPS, len, runs);
	printf("%-44s %12s %12s\n", "", "median", "slowest");
	for (int r = 0; r < runs; r++) {
		spine_import in;
		skel_import_report rep;
		edit_batch b;
		edit_error err;
		edit_result res;
		double t0 = now_ms();
		cJSON *root = cJSON_ParseWithLength(body, len);

		cJSON_Delete(root);
		parse[r] = now_ms() - t0;

		t0 = now_ms();
		if (spine_import_decode(body, len, SIZE_MAX, &in, &err))
			die("decode", &err);
		dec[r] = now_ms() - t0;
		t0 = now_ms();
		if (spine_import_batch(&in, NULL, &b, &rep, &err))
			die("batch", &err);
		bat[r] = now_ms() - t0;

		scene *s = scene_new();
		scene_set_dims(s, 2);
		asset_set_add(scene_assets(s), rep.file, rep.ids, rep.ids_len);
		t0 = now_ms();
		edit_limits lim = edit_limits_default();
		lim.max_ops = b.n_ops;
		if (edit_apply_ex(s, &b, &lim, &res, NULL, &err))
			die("apply", &err);
		scene_update(s, 1, NULL, NULL);
		app[r] = now_ms() - t0;
		edit_result_release(&res);
		/* An IK target moved: one set and the pass that re-solves the
		 * constraint and its chain's subtree (the core's share of it),
		 * the skeleton given to the scene as the engine gives it. */
		{
			skel_clips *k;
			edit_batch mv;
			edit_op *op;

			if (skel_clips_read(ASSET_SPINE, rep.file, rep.asset, rep.asset_len, &k, &err) ||
			    scene_skel_add(s, k))
				die("skeleton", &err);
			scene_update(s, 2, NULL, NULL);
			edit_batch_init(&mv);
			op = edit_batch_add(&mv, EDIT_SET, "bone_2050");
			op->fields = EDIT_F_T;
			op->t = vec3_make(20 + r, -3, 0);
			t0 = now_ms();
			if (edit_apply(s, &mv, NULL, NULL, &err))
				die("move", &err);
			scene_update(s, 3, NULL, NULL);
			ikmove[r] = now_ms() - t0;
			edit_batch_release(&mv);
			if (scene_ik_live(s) != 4) {
				fprintf(stderr, "bench_skeleton: %d IK constraints live, not 4\n",
					scene_ik_live(s));
				return 1;
			}
		}
		scene_free(s);
		edit_batch_release(&b);
		skel_import_report_release(&rep);
		spine_import_release(&in);

		/* The whole import into a new scene, durably. */
		char name[32], *block;
		engine_ack ack;
		snprintf(name, sizeof(name), "s%d", r);
		t0 = now_ms();
		if (engine_scene_create_dims(e, name, 2) || spine_import_decode(body, len, SIZE_MAX, &in, &err) ||
		    spine_import_batch(&in, engine_scene(e, name), &b, &rep, &err))
			die("import", &err);
		char **ids = split(&rep, &block);
		engine_asset a = { rep.file, ASSET_SPINE, rep.asset, rep.asset_len, ids, rep.n_ids };
		engine_ack_init(&ack);
		edit_limits big = edit_limits_default();
		big.max_ops = b.n_ops;
		if (engine_assets_submit(e, name, &b, &a, 1, &big, &ack, &err))
			die("submit", &err);
		if (engine_commit(e))
			die("commit", NULL);
		engine_update(e, name, NULL, NULL);
		all[r] = now_ms() - t0;
		if (scene_ik_live(engine_scene(e, name)) != 4) {
			fprintf(stderr, "bench_skeleton: %d IK constraints live, not 4\n",
				scene_ik_live(engine_scene(e, name)));
			return 1;
		}

		engine_ack_release(&ack);
		free(ids);
		free(block);
		edit_batch_release(&b);
		skel_import_report_release(&rep);
		spine_import_release(&in);
	}
	report("floor: cJSON parse of the body", parse, runs);
	report("spine_import_decode", dec, runs);
	report("spine_import_batch", bat, runs);
	report("apply + world matrices (2D scene)", app, runs);
	report("whole import, stored and committed (FULL)", all, runs);
	report("an IK target moved: set + pass, 4 constraints", ikmove, runs);
	engine_close(e);
	static const char *const suffix[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		char p[600];
		snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
		unlink(p);
	}
	free(body);
	return 0;
}
