/*
 * test_oom.c: allocation failures injected along the edit path, the way
 * SQLite's own tests loop over "fail at allocation N".
 *
 * For N = 1, 2, 3, ... until a run completes without reaching its N-th
 * allocation, each scenario is run with the N-th allocation failing, once
 * with only that one failing ("one-shot") and once with it and every later
 * one failing ("persistent", so that the cleanup of a failure runs out of
 * memory too). The scenarios:
 *   - the edit path: decode a batch (proto_decode_batch) -> edit_apply_ex
 *     on a scene -> scene_update -> encode the ack and the update, for
 *     batches that create, set, reparent (keep_world), delete a subtree,
 *     delete and re-create, one whose last op fails (the rollback), and
 *     two of pose ops (saved, replaced, blended, deleted; and rolled back);
 *   - an engine round on a temporary database: decode -> engine_submit ->
 *     engine_commit -> engine_update -> encode the ack, then the database
 *     reopened to see what is stored; and the same with engine_undo;
 *   - an SVG import round on a temporary database: the body decoded and
 *     its SVG sanitised (svg_import_prepare; libxml2's own allocations are
 *     not counted, ours are) -> engine_asset_submit -> engine_commit, then
 *     the database reopened: the asset and its nodes are stored together
 *     or not at all, and the scene knows the asset only when they are;
 *   - engine_open of an existing database.
 * What must hold for every N: the failure is reported as an error code,
 * nomem (or storage from the engine, io or storage from engine_open), never
 * a crash, a wrong code (bad_json for valid JSON) or a silent half-success;
 * a failed call leaves its scene bit for bit as it was (a digest over every
 * stored value and world matrix); a batch is acknowledged (engine_commit
 * returned 0) if and only if it is in the database when reopened; a run
 * that succeeds despite a failed allocation gives the same result as the
 * run without failures; and nothing leaks: every block allocated through
 * the hooks below is counted until it is freed, so a run that ends with
 * more live blocks than it started with leaked, and names its N (and in
 * the ASan build LeakSanitizer checks once per scenario).
 * A broken promise is printed with its N and the loop goes on, so one run
 * lists every finding; the test fails at the end if there was any.
 *
 * How allocations are made to fail, per allocator:
 *   - rigd's own code (the static libraries rigd_core and rigd_engine): the
 *     link line of this program has --wrap=malloc,calloc,realloc,strdup,free
 *     (tests/oom.cmake). --wrap applies to every object of the link, the
 *     archive members pulled in included, but not to shared libraries;
 *     __wrap_malloc counts and either fails or calls __real_malloc, which is
 *     the C library's (or AddressSanitizer's) malloc, so the sanitizers see
 *     every allocation as usual.
 *   - cJSON (a shared library): its own allocation hooks, cJSON_InitHooks,
 *     pointed at the counting malloc. That is why this test includes
 *     cJSON.h; it touches no cJSON tree.
 *   - SQLite (a shared library): SQLITE_CONFIG_MALLOC, set before SQLite
 *     initialises, with the default methods wrapped (SQLite's test_malloc.c
 *     does the same). That is why this test includes sqlite3.h.
 * Interposing malloc itself (a malloc defined in this program, or dlsym
 * RTLD_NEXT) would reach the C library's internal allocations too, but
 * fights AddressSanitizer's own malloc; these three hooks reach every
 * allocation rigd makes or causes, and work the same in both builds.
 * Failing happens only between oom_arm() and oom_disarm(), so the test's
 * own set-up and checks never fail. To see the code behind a finding, run
 * with RIGD_OOM_BACKTRACE=1: every failing allocation prints its stack.
 *
 * Every scenario runs in both modes, for every N, in every build (CTest
 * runs it as unit_oom, in the release and the sanitizer builds alike; no
 * stride, no environment switch). What keeps that affordable: the engine
 * rounds work on a database in /dev/shm, copied afresh for each N, with
 * synchronous=NORMAL. What makes it pass: a batch's rollback allocates
 * nothing (edit_revert, scene_set_owned, scene_reparent moving a subtree
 * in place), so a failure under persistent exhaustion still leaves the
 * scene as it was; and the store reports SQLite's out-of-memory as nomem
 * wherever it meets it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/proto.h"
#include "codec/svg_import.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/pose.h"
#include "core/scene.h"
#include "engine/engine.h"
#include "scene_digest.h"
#include "tmpdb.h"

#if defined(__SANITIZE_ADDRESS__)
#define OOM_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_LSAN 1
#endif
#endif
#ifdef OOM_LSAN
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#else
#include <execinfo.h>
#endif

/* ---------- the failing allocator ---------- */

/* Blocks allocated and not yet freed, through every hook below, counted
 * from the start whether armed or not: a run that ends with more than it
 * started with leaked (checked after every N, which costs nothing; the
 * LeakSanitizer check, which costs a heap scan, runs once per scenario). */
static long live_blocks;

static struct {
	bool armed;
	bool persistent;  /* fail every allocation after the first failure */
	bool failing;     /* the N-th allocation was reached */
	long countdown;   /* allocations left before the N-th */
	long calls;       /* allocations counted while armed */
	long failed;      /* allocations refused */
} oom;

static void oom_arm(long n, bool persistent)
{
	memset(&oom, 0, sizeof(oom));
	oom.countdown = n;
	oom.persistent = persistent;
	oom.armed = true;
}

/* Stops failing; returns true when the N-th allocation was reached. */
static bool oom_disarm(void)
{
	oom.armed = false;
	return oom.failing;
}

/* With RIGD_OOM_BACKTRACE set, where the N-th allocation was asked for,
 * on stderr: the way to find the code behind a finding. */
static void oom_backtrace(void)
{
	static int wanted = -1;

	if (wanted < 0)
		wanted = getenv("RIGD_OOM_BACKTRACE") != NULL;
	if (!wanted)
		return;
	oom.armed = false; /* printing allocates */
	fprintf(stderr, "test_oom: allocation failing here:\n");
#ifdef OOM_LSAN
	__sanitizer_print_stack_trace();
#else
	{
		void *frames[32];

		backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
	}
#endif
	oom.armed = true;
}

static bool oom_should_fail(void)
{
	if (!oom.armed)
		return false;
	oom.calls++;
	if (oom.failing) {
		if (!oom.persistent)
			return false;
		oom.failed++;
		return true;
	}
	if (--oom.countdown > 0)
		return false;
	oom.failing = true;
	oom.failed++;
	oom_backtrace();
	return true;
}

/* A new block (or none) to count. */
static void *counted(void *p)
{
	if (p)
		live_blocks++;
	return p;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
void __wrap_free(void *p);

void *__wrap_malloc(size_t n)
{
	return oom_should_fail() ? NULL : counted(__real_malloc(n));
}

void *__wrap_calloc(size_t k, size_t n)
{
	return oom_should_fail() ? NULL : counted(__real_calloc(k, n));
}

/* A failed realloc leaves the block as it was, as the C library's does.
 * rigd never calls realloc with size 0 (the C library would free). */
void *__wrap_realloc(void *p, size_t n)
{
	if (oom_should_fail())
		return NULL;
	return p ? __real_realloc(p, n) : counted(__real_realloc(p, n));
}

char *__wrap_strdup(const char *s)
{
	return oom_should_fail() ? NULL : counted(__real_strdup(s));
}

void __wrap_free(void *p)
{
	if (p)
		live_blocks--;
	__real_free(p);
}

static void *oom_cjson_malloc(size_t n)
{
	return __wrap_malloc(n);
}

static sqlite3_mem_methods sqlite_real_mem;

static void *oom_sqlite_malloc(int n)
{
	return oom_should_fail() ? NULL : counted(sqlite_real_mem.xMalloc(n));
}

static void *oom_sqlite_realloc(void *p, int n)
{
	return oom_should_fail() ? NULL : sqlite_real_mem.xRealloc(p, n);
}

static void oom_sqlite_free(void *p)
{
	if (p)
		live_blocks--;
	sqlite_real_mem.xFree(p);
}

static int oom_setup(void **state)
{
	static cJSON_Hooks hooks = { oom_cjson_malloc, __wrap_free };
	sqlite3_mem_methods m;

	(void)state;
	cJSON_InitHooks(&hooks);
	proto_parse_arena(false);  /* each of cJSON's blocks from malloc, to fail */
	if (!sqlite_real_mem.xMalloc) {
		if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_real_mem) != SQLITE_OK)
			return -1;
		m = sqlite_real_mem;
		m.xMalloc = oom_sqlite_malloc;
		m.xRealloc = oom_sqlite_realloc;
		m.xFree = oom_sqlite_free;
		if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
			return -1;
	}
	return 0;
}

/* ---------- findings ---------- */

/*
 * A broken promise is printed with the N that broke it and counted, and the
 * loop goes on, so that one run lists every finding of a scenario (the
 * first few of each kind; a bug usually shows at many N). Each test fails
 * at its end when it found anything.
 */
static long violations;

#define OOM_PRINT_MAX 4

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		static long seen_;                                             \
		if (!(cond)) {                                                 \
			violations++;                                          \
			if (seen_++ < OOM_PRINT_MAX) {                         \
				print_error("line %d: %s: ", __LINE__, #cond); \
				print_error(__VA_ARGS__);                      \
				print_error("\n");                             \
			}                                                      \
		}                                                              \
	} while (0)

static const char *mode_name(bool persistent)
{
	return persistent ? "persistent" : "one-shot";
}

/* After every N: as many blocks live as before the run ('live_before'). */
static void leak_check(const char *what, long n, bool persistent, long live_before)
{
	CHECK(live_blocks == live_before, "%s: %ld blocks leaked with allocation %ld failing (%s)",
	      what, live_blocks - live_before, n, mode_name(persistent));
}

/* After a scenario: nothing unreachable, by LeakSanitizer (ASan build). */
static void lsan_check(const char *what)
{
#ifdef OOM_LSAN
	CHECK(__lsan_do_recoverable_leak_check() == 0, "%s: LeakSanitizer found a leak", what);
#else
	(void)what;
#endif
}

/* ---------- what a scene stores ---------- */

/* FNV-1a over every node in preorder: id, parent position, every stored
 * property, local and world matrix (scene_world is never stale, so this
 * reads a const scene, as the engine hands out). */
static uint64_t digest(const scene *s)
{
	uint64_t h = DIGEST_SEED;

	for (int pos = 0; pos < scene_count(s); pos++) {
		int n = scene_at(s, pos), parent = scene_parent(s, n);
		int ppos = parent >= 0 ? scene_pos(s, parent) : -1;
		mat4 local = scene_local(s, n), world = scene_world(s, n);
		node_props p;

		scene_props(s, n, &p);
		h = digest_mix_str(h, scene_id(s, n));
		h = digest_mix(h, &ppos, sizeof(ppos));
		h = digest_mix(h, local.m, sizeof(local.m));
		h = digest_mix(h, world.m, sizeof(world.m));
		h = digest_mix_props(h, &p);
	}
	/* The poses, name and channels (not the struct's padding). */
	for (int i = 0; i < pose_count(scene_poses_c(s)); i++) {
		const pose *ps = pose_at(scene_poses_c(s), i);

		h = digest_mix_str(h, ps->name);
		for (int k = 0; k < ps->n; k++) {
			h = digest_mix_str(h, ps->ch[k].id);
			h = digest_mix(h, &ps->ch[k].t, sizeof(ps->ch[k].t));
			h = digest_mix(h, &ps->ch[k].r, sizeof(ps->ch[k].r));
			h = digest_mix(h, &ps->ch[k].s, sizeof(ps->ch[k].s));
		}
	}
	return h;
}

/* ---------- the edit path ---------- */

/* The scene the batches below are applied to: the demo rig (docs/transforms.md 4)
 * (base > arm > hand, with pivots, bounds and meshes) and a second root
 * with a non-uniform scale, built with no allocation failing. */
static const char *const edit_scene_json =
	"{\"ops\":["
	"{\"op\":\"create\",\"id\":\"base\",\"t\":[0,0.2,0],\"euler\":[0,30,0],\"name\":\"base\","
	"\"mesh\":\"base_mesh\",\"kind\":\"mesh\","
	"\"bounds\":{\"min\":[-0.35,-0.2,-0.35],\"max\":[0.35,0.2,0.35]}},"
	"{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"base\",\"t\":[0,0.9,0],"
	"\"pivot\":[0,-0.7,0],\"euler\":[0,0,40],\"name\":\"arm\",\"mesh\":\"arm_mesh\"},"
	"{\"op\":\"create\",\"id\":\"hand\",\"parent\":\"arm\",\"t\":[0,0.7,0],\"name\":\"hand\"},"
	"{\"op\":\"create\",\"id\":\"cam\",\"parent\":\"hand\",\"kind\":\"camera\","
	"\"camera\":{\"fov\":50,\"near\":0.05,\"far\":200}},"
	"{\"op\":\"create\",\"id\":\"prop\",\"t\":[2,0,0],\"s\":[2,0.5,1],\"name\":\"prop\"},"
	"{\"op\":\"create\",\"id\":\"leg\",\"parent\":\"prop\",\"euler\":[0,0,45]}]}";

/* Batches for the edit path; each one allocates in its own way. */
static const char *const edit_batches[] = {
	/* creates: the scene's arrays and id table grow, names and meshes
	 * are copied */
	"{\"ops\":["
	"{\"op\":\"create\",\"id\":\"n0\",\"parent\":\"hand\",\"name\":\"finger 0\",\"mesh\":\"f\"},"
	"{\"op\":\"create\",\"id\":\"n1\",\"parent\":\"n0\",\"t\":[0,0.1,0],\"name\":\"finger 1\"},"
	"{\"op\":\"create\",\"id\":\"n2\",\"parent\":\"n1\",\"index\":0,\"mesh\":\"tip\"},"
	"{\"op\":\"create\",\"id\":\"n3\",\"parent\":\"base\",\"index\":0},"
	"{\"op\":\"create\",\"id\":\"n4\",\"index\":1,\"bounds\":{\"min\":[0,0,0],\"max\":[1,1,1]}},"
	"{\"op\":\"create\",\"id\":\"n5\",\"parent\":\"n4\"},{\"op\":\"create\",\"id\":\"n6\",\"parent\":\"n5\"},"
	"{\"op\":\"create\",\"id\":\"n7\",\"parent\":\"n6\"},{\"op\":\"create\",\"id\":\"n8\",\"parent\":\"n7\"},"
	"{\"op\":\"create\",\"id\":\"n9\",\"parent\":\"n8\"},{\"op\":\"create\",\"id\":\"n10\",\"parent\":\"n9\"},"
	"{\"op\":\"create\",\"id\":\"n11\",\"parent\":\"n10\"},{\"op\":\"create\",\"id\":\"n12\",\"parent\":\"n11\"},"
	"{\"op\":\"create\",\"id\":\"n13\",\"parent\":\"n12\"},{\"op\":\"create\",\"id\":\"n14\",\"parent\":\"n13\"},"
	"{\"op\":\"create\",\"id\":\"n15\",\"parent\":\"n14\"},{\"op\":\"create\",\"id\":\"n16\",\"parent\":\"n15\"},"
	"{\"op\":\"create\",\"id\":\"n17\",\"parent\":\"n16\",\"name\":\"deep\"}],"
	"\"client\":\"c-1\",\"client_seq\":1}",
	/* sets: strings replaced, transforms of several subtrees */
	"{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"euler\":[0,0,60],\"name\":\"Arm\",\"mesh\":null},"
	"{\"op\":\"set\",\"id\":\"hand\",\"s\":[1,2,1],\"mesh\":\"hand_mesh\",\"visible\":false,"
	"\"bounds\":{\"min\":[-1,-1,-1],\"max\":[1,1,1]}},"
	"{\"op\":\"set\",\"id\":\"cam\",\"camera\":{\"fov\":30},\"kind\":\"camera\",\"name\":\"c\"},"
	"{\"op\":\"set\",\"id\":\"leg\",\"t\":[0,-1,0],\"r\":[0,0,0.2,1]}]}",
	/* reparents, with keep_world (the inverse carries a set) and indices */
	"{\"ops\":[{\"op\":\"reparent\",\"id\":\"hand\",\"parent\":\"prop\",\"keep_world\":true},"
	"{\"op\":\"reparent\",\"id\":\"leg\",\"parent\":\"base\",\"index\":0},"
	"{\"op\":\"reparent\",\"id\":\"cam\",\"parent\":null,\"index\":0,\"keep_world\":true}]}",
	/* a subtree deleted: its inverse is one create per node */
	"{\"ops\":[{\"op\":\"delete\",\"id\":\"base\"}]}",
	/* deleted and re-created under the same ids */
	"{\"ops\":[{\"op\":\"delete\",\"id\":\"arm\"},"
	"{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"prop\",\"name\":\"again\"},"
	"{\"op\":\"create\",\"id\":\"hand\",\"parent\":\"arm\",\"mesh\":\"hand_mesh\"}]}",
	/* refused by its last op: everything before it is rolled back */
	"{\"ops\":[{\"op\":\"set\",\"id\":\"arm\",\"t\":[5,5,5],\"name\":\"moved\"},"
	"{\"op\":\"create\",\"id\":\"x\",\"parent\":\"arm\",\"mesh\":\"m\"},"
	"{\"op\":\"delete\",\"id\":\"prop\"},"
	"{\"op\":\"reparent\",\"id\":\"hand\",\"parent\":\"x\",\"keep_world\":true},"
	"{\"op\":\"delete\",\"id\":\"nope\"}]}",
	/* poses: saved (the channels copied), replaced (the old ones moved
	 * to the inverse), blended (a set per node), deleted */
	"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"p\",\"root\":\"base\"},"
	"{\"op\":\"pose_save\",\"pose\":\"q\"},"
	"{\"op\":\"set\",\"id\":\"arm\",\"euler\":[0,0,-20]},"
	"{\"op\":\"pose_save\",\"pose\":\"p\",\"root\":\"base\"},"
	"{\"op\":\"blend\",\"root\":\"base\",\"a\":\"p\",\"b\":\"q\",\"t\":0.3},"
	"{\"op\":\"pose_set\",\"pose\":\"r\",\"channels\":{\"leg\":"
	"{\"t\":[0,1,0],\"r\":[0,0,0,1],\"s\":[1,1,1]}}},"
	"{\"op\":\"pose_delete\",\"pose\":\"q\"}]}",
	/* pose ops taken back when the last op is refused */
	"{\"ops\":[{\"op\":\"pose_save\",\"pose\":\"p\"},"
	"{\"op\":\"set\",\"id\":\"hand\",\"t\":[1,1,1]},"
	"{\"op\":\"pose_save\",\"pose\":\"q\",\"root\":\"arm\"},"
	"{\"op\":\"blend\",\"root\":\"arm\",\"a\":\"p\",\"b\":\"q\",\"t\":0.5},"
	"{\"op\":\"pose_delete\",\"pose\":\"p\"},"
	"{\"op\":\"blend\",\"root\":\"arm\",\"a\":\"p\",\"b\":\"q\",\"t\":0.5}]}",
};

enum stage { STAGE_DECODE, STAGE_APPLY, STAGE_ENCODE, STAGE_DONE };

typedef struct edit_run {
	int rc;
	int stage;               /* where it stopped (STAGE_DONE: all went through) */
	uint64_t after;          /* digest of the scene after the run */
	size_t ack_len, update_len;
} edit_run;

static scene *edit_scene(void)
{
	scene *s = scene_new();
	edit_batch b;
	edit_error e;

	assert_non_null(s);
	assert_int_equal(proto_decode_batch(edit_scene_json, strlen(edit_scene_json), NULL, &b, &e),
			 0);
	assert_int_equal(edit_apply(s, &b, NULL, NULL, &e), 0);
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

/* One pass of the edit path on 's' and what happened. A failed apply must
 * leave the scene as it was, with an empty result and inverse; that and the
 * error's consistency are checked here, the rest by the caller. */
static edit_run edit_path(scene *s, const char *json, long n, bool persistent)
{
	edit_run run = { 0, STAGE_DECODE, 0, 0, 0 };
	proto_req req = { .present = true, .is_string = false, .num = 7 };
	uint64_t before = digest(s);
	edit_batch b, inv;
	edit_result res;
	edit_error e;
	proto_buf ack, update;
	int changed[64];
	int n_changed;

	proto_buf_init(&ack, 16);
	proto_buf_init(&update, 16);
	run.rc = proto_decode_batch(json, strlen(json), NULL, &b, &e);
	if (run.rc) {
		CHECK(b.n_ops == 0, "allocation %ld (%s): a failed decode left ops", n,
		      mode_name(persistent));
		goto out;
	}
	run.stage = STAGE_APPLY;
	run.rc = edit_apply_ex(s, &b, NULL, &res, &inv, &e);
	if (run.rc) {
		CHECK(e.code == run.rc && inv.n_ops == 0 &&
			      res.n_created + res.n_changed + res.n_removed == 0,
		      "allocation %ld (%s): a failed apply (%s) left a result or inverse", n,
		      mode_name(persistent), err_code(run.rc));
		CHECK(digest(s) == before,
		      "allocation %ld (%s): a failed apply (%s: %s) changed the scene\nbatch: %.160s",
		      n, mode_name(persistent), err_code(run.rc), e.message, json);
		edit_batch_release(&b);
		goto out;
	}
	scene_update(s, 2, NULL, NULL);
	run.stage = STAGE_ENCODE;
	n_changed = digest_live_handles(s, res.created, res.n_created, changed);
	n_changed += digest_live_handles(s, res.changed, res.n_changed, changed + n_changed);
	run.rc = proto_encode_ack(&ack, &req, 2, res.recomputed);
	CHECK(run.rc == 0 || ack.len == 0, "allocation %ld (%s): a failed encode left %zu bytes",
	      n, mode_name(persistent), ack.len);
	if (run.rc == 0) {
		run.rc = proto_encode_update(&update, "demo", 2, s, changed, n_changed, changed,
					     n_changed, res.removed, res.n_removed);
		CHECK(run.rc == 0 || update.len == 0,
		      "allocation %ld (%s): a failed encode left %zu bytes", n,
		      mode_name(persistent), update.len);
	}
	if (run.rc == 0)
		run.stage = STAGE_DONE;
	run.ack_len = ack.len;
	run.update_len = update.len;
	edit_result_release(&res);
	edit_batch_release(&inv);
	edit_batch_release(&b);
out:
	proto_buf_release(&ack);
	proto_buf_release(&update);
	run.after = digest(s);
	return run;
}

static const char *const stage_names[] = { "decode", "apply", "encode", "done" };

static void edit_path_oom(const char *json, bool persistent, long *max_n)
{
	scene *s = edit_scene();
	edit_run ref = edit_path(s, json, 0, false);
	long n;

	scene_free(s);
	for (n = 1;; n++) {
		const char *mode = mode_name(persistent);
		long live_before = live_blocks;
		edit_run run;
		uint64_t before;
		bool hit;

		s = edit_scene();
		before = digest(s);
		oom_arm(n, persistent);
		run = edit_path(s, json, n, persistent);
		hit = oom_disarm();
		scene_free(s);
		leak_check("edit path", n, persistent, live_before);
		if (!hit) {
			/* Fewer than n allocations: the run without failures. */
			CHECK(run.rc == ref.rc && run.after == ref.after, "not reproducible");
			break;
		}
		if (run.rc == 0 || (run.stage == STAGE_APPLY && run.rc == ref.rc)) {
			/* The failed allocation was survived: the same result. */
			CHECK(run.rc == ref.rc && run.after == ref.after &&
				      (run.stage != STAGE_DONE || (run.ack_len == ref.ack_len &&
								    run.update_len == ref.update_len)),
			      "allocation %ld (%s): survived with a different result (%s)", n, mode,
			      err_code(run.rc));
			continue;
		}
		CHECK(run.rc == RIGD_E_NOMEM,
		      "allocation %ld (%s) failing in %s: %s instead of nomem\nbatch: %.160s", n,
		      mode, stage_names[run.stage], err_code(run.rc), json);
		if (run.stage == STAGE_ENCODE)
			CHECK(run.after == ref.after, "allocation %ld (%s): encode changed the scene",
			      n, mode);
		else
			CHECK(run.after == before, "allocation %ld (%s): %s failed (%s) and changed "
			      "the scene", n, mode, stage_names[run.stage], err_code(run.rc));
	}
	lsan_check("edit path");
	if (n > *max_n)
		*max_n = n;
}

static void test_edit_path(void **state)
{
	long max_n = 0;

	(void)state;
	violations = 0;
	for (size_t i = 0; i < sizeof(edit_batches) / sizeof(edit_batches[0]); i++) {
		edit_path_oom(edit_batches[i], false, &max_n);
		edit_path_oom(edit_batches[i], true, &max_n);
	}
	print_message("edit path: up to %ld allocations per batch, each made to fail\n",
		      max_n - 1);
	assert_int_equal(violations, 0);
}

/* ---------- the engine ---------- */

/* In /dev/shm when there is one: every N opens and closes the database a
 * few times, and on a disk the syncs of those closes would be most of the
 * test's time. */
static void tmpdb_make_here(tmpdb *t)
{
	tmpdb_make(t, access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", "test_oom");
}

/* NORMAL sync (durability across power loss is the crash test's subject)
 * and a snapshot every few ops, so that rounds write snapshots too. */
static engine_opts oom_engine_opts(void)
{
	engine_opts o = engine_opts_default();

	o.sync_normal = true;
	o.snapshot_ops = 8;
	return o;
}

static engine *open_ok(const char *path)
{
	engine_opts o = oom_engine_opts();
	char msg[256] = "";
	int err = 0;
	engine *e = engine_open(path, &o, &err, msg, sizeof(msg));

	if (!e)
		print_error("engine_open: %s (%s)\n", msg, err_code(err));
	assert_non_null(e);
	return e;
}

static void submit_json_ok(engine *e, const char *json)
{
	edit_batch b;
	edit_error er;

	assert_int_equal(proto_decode_batch(json, strlen(json), NULL, &b, &er), 0);
	assert_int_equal(engine_submit(e, "demo", &b, NULL, &er), 0);
	edit_batch_release(&b);
	assert_int_equal(engine_commit(e), 0);
}

static uint64_t engine_digest(engine *e)
{
	return digest(engine_scene(e, "demo"));
}

enum round_kind { ROUND_SUBMIT, ROUND_UNDO };

typedef struct round_run {
	int rc;
	const char *stage;       /* where it failed */
	bool acked;
	int64_t ack_seq;
	int pending;             /* engine_pending after a failed submit or commit */
} round_run;

/*
 * One turn as the server drives it, for one batch: decode, submit (or
 * undo), commit, update, encode the ack. 'acked' is what the server would
 * do: acknowledge once engine_commit returned 0.
 */
static round_run engine_round(engine *e, int kind, const char *client, int64_t client_seq)
{
	char json[512];
	round_run run = { 0, "", false, 0, 0 };
	proto_req req = { .present = true, .is_string = true, .str = "r" };
	proto_buf ack_buf;
	engine_ack ack;
	edit_batch b;
	edit_error er;

	snprintf(json, sizeof(json),
		 "{\"ops\":[{\"op\":\"create\",\"id\":\"x\",\"parent\":\"arm\",\"name\":\"X\","
		 "\"mesh\":\"x_mesh\",\"t\":[0,1,0]},"
		 "{\"op\":\"set\",\"id\":\"hand\",\"euler\":[10,20,30],\"name\":\"hand %lld\"},"
		 "{\"op\":\"reparent\",\"id\":\"cam\",\"parent\":\"x\",\"keep_world\":true}],"
		 "\"client\":\"%s\",\"client_seq\":%lld}",
		 (long long)client_seq, client, (long long)client_seq);
	proto_buf_init(&ack_buf, 16);
	engine_ack_init(&ack);
	if (kind == ROUND_SUBMIT) {
		run.stage = "decode";
		if ((run.rc = proto_decode_batch(json, strlen(json), NULL, &b, &er)) != 0)
			goto out;
		run.stage = "submit";
		run.rc = engine_submit(e, "demo", &b, &ack, &er);
		edit_batch_release(&b);
	} else {
		run.stage = "undo";
		run.rc = engine_undo(e, "demo", client, true, client_seq, &ack, &er);
	}
	if (run.rc) {
		run.pending = engine_pending(e);
		goto out;
	}
	run.stage = "commit";
	if ((run.rc = engine_commit(e)) != 0) {
		run.pending = engine_pending(e);
		goto out;
	}
	run.acked = true;
	run.ack_seq = ack.seq;
	run.stage = "update";
	if (engine_update(e, "demo", NULL, NULL) < 0)
		run.rc = RIGD_E_INTERNAL;
	run.stage = "encode";
	if (run.rc == 0)
		run.rc = proto_encode_ack(&ack_buf, &req, (uint64_t)ack.seq, ack.recomputed);
out:
	engine_ack_release(&ack);
	proto_buf_release(&ack_buf);
	return run;
}

/* A database with scene "demo": the demo rig with a camera on the hand. */
static void make_db(const char *path)
{
	engine *e = open_ok(path);

	assert_int_equal(engine_scene_create(e, "demo"), 0);
	submit_json_ok(e, "{\"ops\":["
			  "{\"op\":\"create\",\"id\":\"base\",\"t\":[0,0.2,0],\"euler\":[0,30,0]},"
			  "{\"op\":\"create\",\"id\":\"arm\",\"parent\":\"base\",\"t\":[0,0.9,0],"
			  "\"pivot\":[0,-0.7,0],\"euler\":[0,0,40],\"mesh\":\"arm_mesh\"},"
			  "{\"op\":\"create\",\"id\":\"hand\",\"parent\":\"arm\",\"t\":[0,0.7,0]},"
			  "{\"op\":\"create\",\"id\":\"cam\",\"parent\":\"hand\",\"kind\":\"camera\"}]}");
	engine_close(e);
}

/* Copies the database file 'from' (closed, so checkpointed: no WAL) over
 * 'to', dropping any WAL and shared-memory file of 'to'. */
static void copy_db(const char *from, const char *to)
{
	char buf[65536], side[128];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	snprintf(side, sizeof(side), "%s-wal", to);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", to);
	unlink(side);
	assert_non_null(in);
	out = fopen(to, "wb");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	assert_int_equal(fclose(out), 0);
	fclose(in);
}

/*
 * Every N starts from a copy of the same database, made once: the same
 * rows, so the same allocations up to the N-th. (A database that grew by
 * a row or two per N would make the rounds allocate more and more, as
 * SQLite's page cache fills from cold after each reopen, and the loop
 * would chase its own tail.)
 */
static void engine_round_oom(int kind, bool persistent, long *max_n)
{
	const char *mode = mode_name(persistent);
	tmpdb tpl = { "", "" }, t = { "", "" };
	long n;

	tmpdb_make_here(&tpl);
	make_db(tpl.path);
	tmpdb_make_here(&t);
	for (n = 1;; n++) {
		long live_before = live_blocks;
		int64_t seq0, seq_now;
		uint64_t d0, d_now;
		round_run run;
		engine *e;
		bool hit;

		copy_db(tpl.path, t.path);
		e = open_ok(t.path);
		if (kind == ROUND_UNDO) {
			/* Something of the client's to undo, stored beforehand. */
			run = engine_round(e, ROUND_SUBMIT, "oom", 1);
			assert_int_equal(run.rc, 0);
		}
		seq0 = engine_seq(e, "demo");
		d0 = engine_digest(e);
		oom_arm(n, persistent);
		run = engine_round(e, kind, "oom", 2);
		hit = oom_disarm();
		if (run.acked) {
			CHECK(run.ack_seq == seq0 + 1 && engine_seq(e, "demo") == seq0 + 1,
			      "allocation %ld (%s): acknowledged seq %lld, engine at %lld, was %lld",
			      n, mode, (long long)run.ack_seq, (long long)engine_seq(e, "demo"),
			      (long long)seq0);
			/* Once stored, only the ack's encoding may fail. */
			CHECK(run.rc == 0 || run.rc == RIGD_E_NOMEM,
			      "allocation %ld (%s): %s after the commit", n, mode, err_code(run.rc));
		} else {
			CHECK(run.rc == RIGD_E_NOMEM || run.rc == RIGD_E_STORAGE,
			      "allocation %ld (%s) failing in %s: %s, not nomem or storage", n, mode,
			      run.stage, err_code(run.rc));
			CHECK(run.pending == 0, "allocation %ld (%s): %d batches still queued after "
			      "a failed %s", n, mode, run.pending, run.stage);
			CHECK(engine_seq(e, "demo") == seq0 && engine_digest(e) == d0,
			      "allocation %ld (%s): the failed %s (%s) changed the scene", n, mode,
			      run.stage, err_code(run.rc));
		}
		/* What the database holds is what was acknowledged. */
		seq_now = engine_seq(e, "demo");
		d_now = engine_digest(e);
		engine_close(e);
		e = open_ok(t.path);
		CHECK(engine_seq(e, "demo") == seq_now && engine_digest(e) == d_now,
		      "allocation %ld (%s): after reopening, seq %lld (in memory %lld) or the "
		      "scene differs (acknowledged: %d)",
		      n, mode, (long long)engine_seq(e, "demo"), (long long)seq_now, run.acked);
		/* Writes resume after the failure: the round's node "x" is taken
		 * back out by an undo, or created by a new batch. */
		if (scene_find(engine_scene(e, "demo"), "x") >= 0) {
			int rc = engine_undo(e, "demo", "oom", false, 0, NULL, NULL);

			CHECK(rc == 0 && (rc = engine_commit(e)) == 0,
			      "allocation %ld (%s): the undo after it: %s", n, mode, err_code(rc));
		} else {
			int rc = engine_round(e, ROUND_SUBMIT, "after", 1).rc;

			CHECK(rc == 0, "allocation %ld (%s): the round after it: %s", n, mode,
			      err_code(rc));
		}
		engine_close(e);
		leak_check(kind == ROUND_SUBMIT ? "engine submit round" : "engine undo round", n,
			   persistent, live_before);
		if (!hit)
			break;
	}
	tmpdb_remove(&t);
	tmpdb_remove(&tpl);
	lsan_check("engine round");
	if (n > *max_n)
		*max_n = n;
}

static void test_engine_round(void **state)
{
	long max_submit = 0, max_undo = 0;

	(void)state;
	violations = 0;
	engine_round_oom(ROUND_SUBMIT, false, &max_submit);
	engine_round_oom(ROUND_SUBMIT, true, &max_submit);
	engine_round_oom(ROUND_UNDO, false, &max_undo);
	engine_round_oom(ROUND_UNDO, true, &max_undo);
	print_message("engine round: up to %ld allocations (submit), %ld (undo), each made to "
		      "fail\n",
		      max_submit - 1, max_undo - 1);
	assert_int_equal(violations, 0);
}

static void engine_open_oom(const char *path, bool persistent, long *max_n)
{
	engine *e = open_ok(path);
	int64_t seq = engine_seq(e, "demo");
	uint64_t d = engine_digest(e);
	long n;

	engine_close(e);
	for (n = 1;; n++) {
		engine_opts o = oom_engine_opts();
		long live_before = live_blocks;
		int err = 0;
		bool hit;

		oom_arm(n, persistent);
		e = engine_open(path, &o, &err, NULL, 0);
		hit = oom_disarm();
		if (!e) {
			CHECK(err == RIGD_E_NOMEM || err == RIGD_E_STORAGE || err == RIGD_E_IO,
			      "engine_open with allocation %ld failing (%s): %s", n,
			      mode_name(persistent), err_code(err));
		} else {
			CHECK(engine_seq(e, "demo") == seq && engine_digest(e) == d,
			      "engine_open with allocation %ld failing (%s) opened another state",
			      n, mode_name(persistent));
			engine_close(e);
		}
		leak_check("engine_open", n, persistent, live_before);
		/* A failed open lets go of the database (its lock). */
		e = open_ok(path);
		engine_close(e);
		if (!hit)
			break;
	}
	lsan_check("engine_open");
	if (n > *max_n)
		*max_n = n;
}

static void test_engine_open(void **state)
{
	long max_n = 0;
	tmpdb t;

	(void)state;
	violations = 0;
	tmpdb_make_here(&t);
	make_db(t.path);
	engine_open_oom(t.path, false, &max_n);
	engine_open_oom(t.path, true, &max_n);
	tmpdb_remove(&t);
	print_message("engine_open: up to %ld allocations, each made to fail\n", max_n - 1);
	assert_int_equal(violations, 0);
}

/* ---------- an SVG import round ---------- */

static const char *const svg_body =
	"{\"file\":\"hero.svg\",\"svg\":\"<svg xmlns=\\\"http://www.w3.org/2000/svg\\\">"
	"<g id=\\\"torso\\\"><rect width=\\\"4\\\" height=\\\"6\\\"/></g>"
	"<g id=\\\"arm\\\" onclick=\\\"x()\\\"/><script>x()</script></svg>\","
	"\"manifest\":[{\"id\":\"torso\",\"pivot\":[2,6],\"z\":1},"
	"{\"id\":\"arm\",\"parent\":\"torso\",\"pivot\":[2,1],\"rotation\":30,"
	"\"z\":{\"right\":2,\"left\":0},\"facing\":\"left\"}]}";

static int count_asset(void *ctx, const engine_asset_info *a)
{
	(void)a;
	++*(int *)ctx;
	return 0;
}

static int assets_of(engine *e)
{
	int n = 0;

	return engine_assets(e, "art", -1, count_asset, &n) == 0 ? n : -1;
}

/* One import as the server runs it: prepare, submit with the asset,
 * commit. Returns its code; *acked when the commit returned 0. */
static int svg_round(engine *e, bool *acked)
{
	svg_import in;
	svg_clean art;
	edit_batch b;
	edit_error er;
	int rc = svg_import_prepare(svg_body, strlen(svg_body), engine_scene(e, "art"), &in, &art,
				    &b, &er);

	*acked = false;
	if (rc)
		return rc;
	rc = engine_asset_submit(e, "art", &b, in.file,
				 &(engine_svg){ art.svg, art.len, art.ids, art.n_ids }, NULL, NULL, &er);
	edit_batch_release(&b);
	svg_clean_release(&art);
	svg_import_release(&in);
	if (!rc && (rc = engine_commit(e)) == 0)
		*acked = true;
	return rc;
}

static void svg_round_oom(bool persistent, long *max_n)
{
	const char *mode = mode_name(persistent);
	tmpdb tpl = { "", "" }, t = { "", "" };
	engine *e;
	long n;

	tmpdb_make_here(&tpl);
	e = open_ok(tpl.path);
	assert_int_equal(engine_scene_create_dims(e, "art", 2), 0);
	engine_close(e);
	tmpdb_make_here(&t);
	for (n = 1;; n++) {
		long live_before = live_blocks;
		bool acked, hit;
		int rc;

		copy_db(tpl.path, t.path);
		e = open_ok(t.path);
		oom_arm(n, persistent);
		rc = svg_round(e, &acked);
		hit = oom_disarm();
		int64_t seq = engine_seq(e, "art");
		int nodes = scene_count(engine_scene(e, "art"));
		int known = asset_set_count(scene_assets_c(engine_scene(e, "art")));
		if (acked) {
			CHECK(rc == 0 && seq == 1 && nodes == 2 && known == 1 && assets_of(e) == 1,
			      "allocation %ld (%s): acknowledged, but seq %lld, %d nodes, %d assets known",
			      n, mode, (long long)seq, nodes, known);
		} else {
			CHECK(rc == RIGD_E_NOMEM || rc == RIGD_E_STORAGE,
			      "allocation %ld (%s): %s, not nomem or storage", n, mode, err_code(rc));
			CHECK(engine_pending(e) == 0 && seq == 0 && nodes == 0 && known == 0 &&
				      assets_of(e) == 0,
			      "allocation %ld (%s): the failed import (%s) left seq %lld, %d nodes, "
			      "%d assets known", n, mode, err_code(rc), (long long)seq, nodes, known);
		}
		engine_close(e);
		/* Reopened: what is stored is what was acknowledged, together. */
		e = open_ok(t.path);
		CHECK(engine_seq(e, "art") == (acked ? 1 : 0) && assets_of(e) == (acked ? 1 : 0) &&
			      scene_count(engine_scene(e, "art")) == (acked ? 2 : 0),
		      "allocation %ld (%s): after reopening, seq %lld and %d assets (acknowledged: %d)",
		      n, mode, (long long)engine_seq(e, "art"), assets_of(e), acked);
		/* And the import goes through once memory is back. */
		if (!acked) {
			CHECK(svg_round(e, &acked) == 0 && acked,
			      "allocation %ld (%s): the import after it failed", n, mode);
		}
		engine_close(e);
		leak_check("SVG import round", n, persistent, live_before);
		if (!hit)
			break;
	}
	tmpdb_remove(&t);
	tmpdb_remove(&tpl);
	lsan_check("SVG import round");
	if (n > *max_n)
		*max_n = n;
}

static void test_svg_round(void **state)
{
	long max_n = 0;

	(void)state;
	violations = 0;
	svg_round_oom(false, &max_n);
	svg_round_oom(true, &max_n);
	print_message("SVG import round: up to %ld allocations, each made to fail\n", max_n - 1);
	assert_int_equal(violations, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edit_path),
		cmocka_unit_test(test_engine_round),
		cmocka_unit_test(test_engine_open),
		cmocka_unit_test(test_svg_round),
	};
	return cmocka_run_group_tests(tests, oom_setup, NULL);
}
