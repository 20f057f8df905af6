/*
 * test_log_kind.c: a log line says what its batch is. The codec writes
 * "undo":SEQ / "redo":SEQ only on the lines of undos and redos (every
 * other line byte for byte as before) and reads them back, refusing a
 * line that names both, names no earlier seq or has no client; log
 * import stores the kind and target, refusing a target of another client
 * or an undo, so that a client's undo after an export and import does
 * what it would have done on the original; engine_submit_logged does the
 * same for a batch of a log stream; and with a line limit a batch whose
 * log line would not fit is refused before it is queued, the limit
 * exact to the byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/proto.h"
#include "codec/svg.h"
#include "core/edit.h"
#include "core/err.h"
#include "engine/engine.h"
#include "tmpdb.h"

/* ---------- the codec ---------- */

static void line_fails(const char *json, const char *field)
{
	proto_log_line ll;
	edit_error err;

	assert_int_equal(proto_decode_log_line(json, strlen(json), NULL, &ll, &err),
			 RIGD_E_BAD_FIELD);
	assert_int_equal(err.code, RIGD_E_BAD_FIELD);
	if (strcmp(err.field, field) != 0)
		fail_msg("%s: field '%s', want '%s' (%s)", json, err.field, field, err.message);
	assert_int_equal(ll.kind, PROTO_LOG_EDIT);
	assert_int_equal(ll.batch.n_ops, 0);
}

static void test_codec(void **state)
{
	(void)state;
	const char *undo = "{\"seq\":5,\"time\":7,\"client\":\"al\",\"client_seq\":null,\"undo\":3,"
			   "\"ops\":[{\"op\":\"delete\",\"id\":\"n\"}]}\n";
	const char *redo = "{\"seq\":6,\"time\":8,\"client\":\"al\",\"client_seq\":4,\"redo\":3,"
			   "\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}\n";
	const char *edit = "{\"seq\":2,\"time\":1,\"client\":\"al\",\"client_seq\":null,"
			   "\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}\n";
	const char *lines[] = { undo, redo, edit };
	const int kinds[] = { PROTO_LOG_UNDO, PROTO_LOG_REDO, PROTO_LOG_EDIT };
	const int64_t targets[] = { 3, 3, 0 };
	proto_log_line ll;
	edit_error err;
	proto_buf b;

	for (int i = 0; i < 3; i++) {
		assert_int_equal(proto_decode_log_line(lines[i], strlen(lines[i]), NULL, &ll, &err), 0);
		assert_int_equal(ll.kind, kinds[i]);
		assert_int_equal(ll.target, targets[i]);
		/* Written back byte for byte; an edit's line as before. */
		proto_buf_init(&b, 0);
		assert_int_equal(proto_encode_log_line_kind(&b, ll.seq, ll.time_us, &ll.batch, ll.kind,
							    ll.target, NULL, 0), 0);
		assert_string_equal(proto_buf_str(&b), lines[i]);
		if (ll.kind == PROTO_LOG_EDIT) {
			proto_buf_reset(&b);
			assert_int_equal(proto_encode_log_line(&b, ll.seq, ll.time_us, &ll.batch), 0);
			assert_string_equal(proto_buf_str(&b), lines[i]);
		}
		proto_buf_release(&b);
		edit_batch_release(&ll.batch);
	}
	line_fails("{\"seq\":5,\"time\":1,\"client\":\"a\",\"undo\":2,\"redo\":2,\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}", "redo");
	line_fails("{\"seq\":5,\"time\":1,\"undo\":2,\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}",
		   "undo");
	line_fails("{\"seq\":5,\"time\":1,\"client\":null,\"redo\":2,"
		   "\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}", "redo");
	const char *bad_targets[] = { "5", "6", "0", "-1", "2.5", "\"2\"", "null", "[2]", "1e300" };
	for (size_t i = 0; i < sizeof(bad_targets) / sizeof(bad_targets[0]); i++) {
		char j[256];
		snprintf(j, sizeof(j), "{\"seq\":5,\"time\":1,\"client\":\"a\",\"undo\":%s,"
			 "\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}", bad_targets[i]);
		line_fails(j, "undo");
	}
	line_fails("{\"seq\":1,\"time\":1,\"client\":\"a\",\"redo\":1,"
		   "\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}", "redo");
	/* The reader of lines with assets reads them too. */
	proto_log_asset *a = NULL;
	int n = -1;
	assert_int_equal(proto_decode_log_line_assets(undo, strlen(undo), NULL, &ll, &a, &n, &err), 0);
	assert_int_equal(ll.kind, PROTO_LOG_UNDO);
	assert_int_equal(n, 0);
	edit_batch_release(&ll.batch);
}

/* ---------- the engine ---------- */

static engine *open_engine(tmpdb *t)
{
	engine_opts o = engine_opts_default();
	o.sync_normal = true;
	tmpdb_make(t, "/tmp", "test_log_kind");
	int err = 0;
	char msg[256];
	engine *e = engine_open(t->path, &o, &err, msg, sizeof(msg));
	assert_non_null(e);
	return e;
}

static void edit(engine *e, const char *sn, const char *client, const char *json)
{
	edit_batch b;
	edit_error err;

	assert_int_equal(proto_decode_batch(json, strlen(json), NULL, &b, &err), 0);
	snprintf(b.client, sizeof(b.client), "%s", client);
	assert_int_equal(engine_submit(e, sn, &b, NULL, &err), 0);
	edit_batch_release(&b);
	assert_int_equal(engine_commit(e), 0);
}

/* An undo (redo false) or redo of 'client'; its error code. */
static int undo(engine *e, const char *sn, const char *client, bool redo)
{
	edit_error err;
	int rc = redo ? engine_redo(e, sn, client, false, 0, NULL, &err)
		      : engine_undo(e, sn, client, false, 0, NULL, &err);

	if (!rc)
		assert_int_equal(engine_commit(e), 0);
	return rc;
}

struct text {
	char *s;
	size_t len;
};

static int collect(void *ctx, const char *line, size_t len)
{
	struct text *t = ctx;
	char *p = realloc(t->s, t->len + len + 1);

	assert_non_null(p);
	memcpy(p + t->len, line, len);
	t->len += len;
	p[t->len] = 0;
	t->s = p;
	return 0;
}

/* A history of client "al" with undos and redos (and "bo" between). */
static void make_history(engine *e, const char *sn)
{
	assert_int_equal(engine_scene_create(e, sn), 0);
	edit(e, sn, "al", "{\"ops\":[{\"op\":\"create\",\"id\":\"n\",\"t\":[0,0,0]}]}");
	edit(e, sn, "al", "{\"ops\":[{\"op\":\"set\",\"id\":\"n\",\"t\":[1,0,0]}]}");
	edit(e, sn, "bo", "{\"ops\":[{\"op\":\"create\",\"id\":\"m\"}]}");
	edit(e, sn, "al", "{\"ops\":[{\"op\":\"set\",\"id\":\"n\",\"t\":[2,0,0]}]}");
	assert_int_equal(undo(e, sn, "al", false), 0);  /* 5: undo 4 */
	assert_int_equal(undo(e, sn, "al", false), 0);  /* 6: undo 2 */
	assert_int_equal(undo(e, sn, "al", true), 0);   /* 7: redo 2 */
}

/* Both scenes brought up to date (scene_hash reads the cached world
 * matrices as they are), then compared bit for bit. */
static void same_scene(engine *e, const char *a, const char *b)
{
	assert_true(engine_update(e, a, NULL, NULL) >= 0);
	assert_true(engine_update(e, b, NULL, NULL) >= 0);
	assert_int_equal(scene_hash(engine_scene(e, a)), scene_hash(engine_scene(e, b)));
}

static void test_export_import(void **state)
{
	(void)state;
	tmpdb t;
	engine *e = open_engine(&t);
	struct text log = { 0 };
	edit_error err;
	int bad = 0;
	int64_t n = 0;

	make_history(e, "orig");
	assert_int_equal(engine_log(e, "orig", 1, -1, collect, &log), 0);
	assert_non_null(strstr(log.s, "\"client_seq\":null,\"undo\":4,\"ops\""));
	assert_non_null(strstr(log.s, "\"undo\":2,"));
	assert_non_null(strstr(log.s, "\"redo\":2,"));
	assert_int_equal(engine_scene_create(e, "copy"), 0);
	assert_int_equal(engine_import(e, "copy", log.s, log.len, &n, &bad, &err), 0);
	assert_int_equal(n, 7);
	/* The copy's log is the original's, byte for byte. */
	struct text again = { 0 };
	assert_int_equal(engine_log(e, "copy", 1, -1, collect, &again), 0);
	assert_string_equal(again.s, log.s);
	/* Each undo and redo of "al" does on the copy what it does on the
	 * original: undo 7 (the redo), undo 1, nothing, redo 1, redo 2, redo 4. */
	const bool steps[] = { false, false, false, true, true, true, true };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int r1 = undo(e, "orig", "al", steps[i]);
		int r2 = undo(e, "copy", "al", steps[i]);
		assert_int_equal(r1, r2);
		same_scene(e, "orig", "copy");
	}
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	free(again.s);
	free(log.s);
	engine_close(e);
	tmpdb_remove(&t);
}

/* Imports 'log' into a new empty scene 'name': the error code, with the
 * field and line checked. */
static void import_fails(engine *e, const char *name, const char *log, const char *field,
			 int line)
{
	edit_error err;
	int bad = 0;
	char prefix[32];

	assert_int_equal(engine_scene_create(e, name), 0);
	assert_int_equal(engine_import(e, name, log, strlen(log), NULL, &bad, &err),
			 RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, field);
	assert_int_equal(bad, line);
	snprintf(prefix, sizeof(prefix), "line %d: ", line);
	assert_int_equal(strncmp(err.message, prefix, strlen(prefix)), 0);
	assert_int_equal(engine_seq(e, name), 0);
}

#define L1 "{\"seq\":1,\"time\":1,\"client\":\"al\",\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}\n"
#define L2 "{\"seq\":2,\"time\":1,\"client\":\"bo\",\"ops\":[{\"op\":\"create\",\"id\":\"m\"}]}\n"

static void test_import_refusals(void **state)
{
	(void)state;
	tmpdb t;
	engine *e = open_engine(&t);

	/* The target is a batch of another client. */
	import_fails(e, "i1", L1 L2 "{\"seq\":3,\"time\":1,\"client\":\"al\",\"undo\":2,"
		     "\"ops\":[{\"op\":\"delete\",\"id\":\"m\"}]}\n", "undo", 3);
	/* The target is itself an undo. */
	import_fails(e, "i2", L1 "{\"seq\":2,\"time\":1,\"client\":\"al\",\"undo\":1,"
		     "\"ops\":[{\"op\":\"delete\",\"id\":\"n\"}]}\n"
		     "{\"seq\":3,\"time\":1,\"client\":\"al\",\"redo\":2,"
		     "\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}\n", "redo", 3);
	/* A later seq: the codec's refusal, with its line. */
	import_fails(e, "i3", L1 "{\"seq\":2,\"time\":1,\"client\":\"al\",\"undo\":2,"
		     "\"ops\":[{\"op\":\"delete\",\"id\":\"n\"}]}\n", "undo", 2);
	engine_close(e);
	tmpdb_remove(&t);
}

static void test_submit_logged(void **state)
{
	(void)state;
	tmpdb t;
	engine *e = open_engine(&t);
	edit_batch b;
	edit_error err;
	const char *del = "{\"ops\":[{\"op\":\"delete\",\"id\":\"n\"}],\"client\":\"al\"}";

	assert_int_equal(engine_scene_create(e, "s"), 0);
	edit(e, "s", "al", "{\"ops\":[{\"op\":\"create\",\"id\":\"n\"}]}");
	edit(e, "s", "bo", "{\"ops\":[{\"op\":\"create\",\"id\":\"m\"}]}");
	assert_int_equal(proto_decode_batch(del, strlen(del), NULL, &b, &err), 0);
	assert_int_equal(engine_submit_logged(e, "s", &b, PROTO_LOG_UNDO, 2, NULL, NULL, &err),
			 RIGD_E_BAD_FIELD);
	assert_string_equal(err.field, "undo");
	assert_int_equal(engine_submit_logged(e, "s", &b, PROTO_LOG_UNDO, 3, NULL, NULL, &err),
			 RIGD_E_BAD_FIELD);
	assert_int_equal(engine_pending(e), 0);
	/* As a log stream gives it: stored as the undo of batch 1, so that
	 * the client's redo re-creates n. */
	assert_int_equal(engine_submit_logged(e, "s", &b, PROTO_LOG_UNDO, 1, NULL, NULL, &err), 0);
	assert_int_equal(engine_commit(e), 0);
	edit_batch_release(&b);
	assert_int_equal(undo(e, "s", "al", false), RIGD_E_NOTHING_TO_UNDO);
	assert_int_equal(undo(e, "s", "al", true), 0);
	assert_true(scene_find(engine_scene(e, "s"), "n") >= 0);
	engine_close(e);
	tmpdb_remove(&t);
}

static void test_line_max(void **state)
{
	(void)state;
	tmpdb t;
	engine *e = open_engine(&t);
	struct text log = { 0 };
	edit_batch b;
	edit_error err;
	const char *json = "{\"ops\":[{\"op\":\"create\",\"id\":\"n\",\"name\":\"a long name\"}],"
			   "\"client\":\"al\",\"client_seq\":12}";

	assert_int_equal(engine_scene_create(e, "s"), 0);
	edit(e, "s", "al", "{\"ops\":[{\"op\":\"create\",\"id\":\"x\"}]}");
	assert_int_equal(engine_log(e, "s", 1, 1, collect, &log), 0);
	/* A line of exactly the limit fits; one byte more does not. */
	engine_set_line_max(e, log.len);
	assert_int_equal(engine_line_max(e), log.len);
	edit(e, "s", "al", "{\"ops\":[{\"op\":\"create\",\"id\":\"y\"}]}");
	engine_set_line_max(e, 60);
	assert_int_equal(proto_decode_batch(json, strlen(json), NULL, &b, &err), 0);
	assert_int_equal(engine_submit(e, "s", &b, NULL, &err), RIGD_E_TOO_LARGE);
	assert_int_equal(err.code, RIGD_E_TOO_LARGE);
	assert_non_null(strstr(err.message, "at most 60 bytes"));
	assert_int_equal(engine_pending(e), 0);
	assert_int_equal(scene_find(engine_scene(e, "s"), "n"), -1);
	/* The undo of "y" too (its line is longer than an edit's). */
	free(log.s);
	log.s = NULL;
	log.len = 0;
	assert_int_equal(engine_log(e, "s", 2, 2, collect, &log), 0);
	engine_set_line_max(e, log.len + 2);
	assert_int_equal(undo(e, "s", "al", false), RIGD_E_TOO_LARGE);
	assert_int_equal(engine_pending(e), 0);
	assert_int_equal(engine_seq(e, "s"), 2);
	/* A log import whose line would not fit imports nothing. */
	engine_set_line_max(e, 40);
	int bad = 0;
	assert_int_equal(engine_scene_create(e, "i"), 0);
	assert_int_equal(engine_import(e, "i", L1, strlen(L1), NULL, &bad, &err), RIGD_E_TOO_LARGE);
	assert_int_equal(bad, 1);
	assert_int_equal(engine_seq(e, "i"), 0);
	engine_set_line_max(e, 0);
	assert_int_equal(engine_submit(e, "s", &b, NULL, &err), 0);
	assert_int_equal(engine_commit(e), 0);
	edit_batch_release(&b);
	/* The predicted length is the exported one, byte for byte: a batch
	 * like seq 4 (same seq and time digits) fits a limit of its line's
	 * length and not one byte less. */
	edit(e, "s", "al", "{\"ops\":[{\"op\":\"create\",\"id\":\"p1\"}]}");
	free(log.s);
	log.s = NULL;
	log.len = 0;
	assert_int_equal(engine_log(e, "s", 4, 4, collect, &log), 0);
	engine_set_line_max(e, log.len);
	edit(e, "s", "al", "{\"ops\":[{\"op\":\"create\",\"id\":\"p2\"}]}");
	engine_set_line_max(e, log.len - 1);
	const char *p3 = "{\"ops\":[{\"op\":\"create\",\"id\":\"p3\"}],\"client\":\"al\"}";
	assert_int_equal(proto_decode_batch(p3, strlen(p3), NULL, &b, &err), 0);
	assert_int_equal(engine_submit(e, "s", &b, NULL, &err), RIGD_E_TOO_LARGE);
	edit_batch_release(&b);
	assert_int_equal(engine_seq(e, "s"), 5);
	engine_set_line_max(e, 0);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	engine_close(e);
	free(log.s);
	tmpdb_remove(&t);
}

/* An SVG import's line carries its artwork: counted, to the byte. */
static void test_line_max_asset(void **state)
{
	(void)state;
	static const char art[] = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 10 10\">"
				  "<path id=\"arm\" d=\"M0 0L5 5\"/><text>a \"quoted\" &amp; "
				  "escaped\tline</text></svg>";
	const char *json = "{\"ops\":[{\"op\":\"create\",\"id\":\"p\"}],\"client\":\"al\"}";
	tmpdb t;
	engine *e = open_engine(&t);
	struct text log = { 0 };
	edit_batch b;
	edit_error err;
	svg_clean clean;
	engine_svg asset;
	size_t len;

	assert_int_equal(engine_scene_create(e, "s"), 0);
	assert_int_equal(svg_sanitize(art, strlen(art), NULL, &clean, &err), 0);
	asset = (engine_svg){ clean.svg, clean.len, clean.ids, clean.n_ids };
	assert_int_equal(proto_decode_batch(json, strlen(json), NULL, &b, &err), 0);
	assert_int_equal(engine_asset_submit(e, "s", &b, "a1.svg", &asset, NULL, NULL, &err), 0);
	assert_int_equal(engine_commit(e), 0);
	assert_int_equal(engine_log(e, "s", 1, 1, collect, &log), 0);
	assert_non_null(strstr(log.s, "\"assets\":[{\"file\":\"a1.svg\""));
	len = log.len;
	/* Batch 2, the same with another file of as many bytes: fits a limit
	 * of exactly its line, not one byte less. */
	edit_batch_release(&b);
	json = "{\"ops\":[{\"op\":\"create\",\"id\":\"q\"}],\"client\":\"al\"}";
	assert_int_equal(proto_decode_batch(json, strlen(json), NULL, &b, &err), 0);
	engine_set_line_max(e, len - 1);
	assert_int_equal(engine_asset_submit(e, "s", &b, "a2.svg", &asset, NULL, NULL, &err),
			 RIGD_E_TOO_LARGE);
	assert_int_equal(engine_pending(e), 0);
	bool has = true;
	assert_int_equal(engine_asset_has(e, "s", "a2.svg", NULL, &has, NULL), 0);
	assert_false(has);
	engine_set_line_max(e, len);
	assert_int_equal(engine_asset_submit(e, "s", &b, "a2.svg", &asset, NULL, NULL, &err), 0);
	assert_int_equal(engine_commit(e), 0);
	edit_batch_release(&b);
	svg_clean_release(&clean);
	/* The log with its artwork imports under that limit, and not under
	 * one byte less (line 1 is as long as line 2). */
	free(log.s);
	log.s = NULL;
	log.len = 0;
	assert_int_equal(engine_log(e, "s", 1, -1, collect, &log), 0);
	assert_int_equal(engine_scene_create(e, "i"), 0);
	int bad = 0;
	engine_set_line_max(e, len - 1);
	assert_int_equal(engine_import(e, "i", log.s, log.len, NULL, &bad, &err), RIGD_E_TOO_LARGE);
	assert_int_equal(bad, 1);
	engine_set_line_max(e, len);
	assert_int_equal(engine_import(e, "i", log.s, log.len, NULL, &bad, &err), 0);
	assert_int_equal(engine_seq(e, "i"), 2);
	engine_set_line_max(e, 0);
	assert_int_equal(engine_check(e, NULL, NULL), 0);
	free(log.s);
	engine_close(e);
	tmpdb_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_export_import),
		cmocka_unit_test(test_import_refusals),
		cmocka_unit_test(test_submit_logged),
		cmocka_unit_test(test_line_max),
		cmocka_unit_test(test_line_max_asset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
