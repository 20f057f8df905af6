/*
 * test_store.c: the SQLite store on its own: open, lock and migrations
 * (an old database is upgraded, a newer or foreign one refused), scenes, the
 * edit log and its unique keys, the binary images of ops and the ways rows
 * are read, snapshots, transactions, the periodic checkpoint that bounds
 * the WAL, and the fault VFS failing writes and syncs with the data left as
 * it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "engine/store.h"
#include "tmpdb.h"

static void tmpdb_make_here(tmpdb *t)
{
	tmpdb_make(t, "/tmp", "test_store");
}

static store *open_ok(const char *path, const store_opts *o)
{
	int err = -1;
	char msg[256] = "";
	store *st = store_open(path, o, &err, msg, sizeof(msg));
	if (!st)
		print_error("store_open: %s (%s)\n", msg, err_code(err));
	assert_non_null(st);
	assert_int_equal(err, 0);
	return st;
}

static int open_err(const char *path, const store_opts *o, char *msg, size_t msglen)
{
	int err = 0;
	store *st = store_open(path, o, &err, msg, msglen);
	assert_null(st);
	assert_true(err < 0);
	return err;
}

static store_edit edit_row(int64_t scene_id, int64_t seq, const char *client, int64_t client_seq)
{
	store_edit e = {
		.scene_id = scene_id,
		.seq = seq,
		.time_us = 1000 * seq,
		.client = client,
		.has_client_seq = client_seq > 0,
		.client_seq = client_seq,
		.kind = STORE_EDIT,
		.n_ops = 1,
		.ops = "[{\"op\":\"create\",\"id\":\"a\"}]",
		.inverse = "[{\"op\":\"delete\",\"id\":\"a\"}]",
	};
	e.ops_len = strlen(e.ops);
	e.inverse_len = strlen(e.inverse);
	return e;
}

/* Writes a 32-bit big-endian value into the database header (offset 60 is
 * user_version, 68 application_id). The store must be closed. */
static void poke_header(const char *path, off_t offset, uint32_t v)
{
	unsigned char b[4] = { v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff };
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, 4, offset), 4);
	close(fd);
}

static int count_cb(void *ctx, const store_edit *e)
{
	(void)e;
	(*(int *)ctx)++;
	return 0;
}

static int count_rows(store *st, int64_t scene_id)
{
	int n = 0;
	assert_int_equal(store_edits(st, scene_id, 0, -1, false, count_cb, &n), 0);
	return n;
}

/* ---------- open, lock, migrations ---------- */

static void test_open_creates_latest(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	assert_true(store_schema_latest() >= 2);
	store *st = open_ok(t.path, NULL);
	assert_int_equal(store_version(st), store_schema_latest());
	store_close(st);
	/* Reopening an up-to-date database changes nothing. */
	st = open_ok(t.path, NULL);
	assert_int_equal(store_version(st), store_schema_latest());
	store_close(st);
	tmpdb_remove(&t);
}

static void test_lock(void **state)
{
	tmpdb t;
	char msg[256];
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	/* A second open (its own descriptor, as another process would have) is
	 * refused while the first holds the file. */
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_LOCKED);
	assert_non_null(strstr(msg, "in use"));
	/* And from another process. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int err = 0;
		store *other = store_open(t.path, NULL, &err, NULL, 0);
		_exit(other == NULL && err == RIGD_E_LOCKED ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The first store still works: the refused opens took none of its
	 * locks away. */
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	store_edit e = edit_row(id, 1, "c", 1);
	assert_int_equal(store_edit_append(st, &e), 0);
	store_close(st);
	/* Closing released it. */
	st = open_ok(t.path, NULL);
	assert_int_equal(count_rows(st, id), 1);
	/* A reader is refused beside the writer... */
	store_opts sh = store_opts_default();
	sh.shared = true;
	assert_int_equal(open_err(t.path, &sh, msg, sizeof(msg)), RIGD_E_LOCKED);
	store_close(st);
	/* ...readers run side by side, and keep a writer out. */
	store *r1 = open_ok(t.path, &sh);
	store *r2 = open_ok(t.path, &sh);
	assert_int_equal(count_rows(r1, id), 1);
	assert_int_equal(count_rows(r2, id), 1);
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_LOCKED);
	store_close(r1);
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_LOCKED);
	store_close(r2);
	st = open_ok(t.path, NULL);
	store_close(st);
	tmpdb_remove(&t);
}

/* Two readers opening an old database at once: the second finds it
 * upgraded by the first and applies nothing twice. */
static void test_migrate_shared(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store_opts o = store_opts_default();
	o.migrate_to = 1;
	store *st = open_ok(t.path, &o);
	store_close(st);
	store_opts sh = store_opts_default();
	sh.shared = true;
	sh.migrate_to = 1;
	store *r1 = open_ok(t.path, &sh); /* still at 1 */
	sh.migrate_to = 0;
	store *r2 = open_ok(t.path, &sh); /* upgrades */
	assert_int_equal(store_version(r2), store_schema_latest());
	store_close(r1);
	store_close(r2);
	tmpdb_remove(&t);
}

static int history_cb(void *ctx, int64_t seq, int kind, int64_t target)
{
	int64_t *sum = ctx;
	(void)kind;
	(void)target;
	*sum += seq;
	return 0;
}

static void test_migrate_old_database(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	/* A database as the first release wrote it: schema version 1. */
	store_opts o = store_opts_default();
	o.migrate_to = 1;
	store *st = open_ok(t.path, &o);
	assert_int_equal(store_version(st), 1);
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "old", 42, &id), 0);
	for (int i = 1; i <= 5; i++) {
		store_edit e = edit_row(id, i, i % 2 ? "odd" : "even", i);
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	store_close(st);
	/* Opened by this build: upgraded, every row kept. */
	st = open_ok(t.path, NULL);
	assert_int_equal(store_version(st), store_schema_latest());
	assert_int_equal(count_rows(st, id), 5);
	int64_t sum = 0;
	assert_int_equal(store_client_history(st, id, "odd", 10, history_cb, &sum), 0);
	assert_int_equal(sum, 1 + 3 + 5);
	store_close(st);
	tmpdb_remove(&t);
}

/* Every field of up to 8 rows, as read back. */
typedef struct full_rows {
	int n;
	store_edit e[8];
	char client[8][16];
	unsigned char bin[8][8];
} full_rows;

static int full_rows_cb(void *ctx, const store_edit *e)
{
	full_rows *r = ctx;
	assert_true(r->n < 8);
	int i = r->n++;
	r->e[i] = *e;
	snprintf(r->client[i], sizeof(r->client[i]), "%s", e->client);
	assert_true(e->ops_bin_len <= sizeof(r->bin[i]));
	if (e->ops_bin)
		memcpy(r->bin[i], e->ops_bin, e->ops_bin_len);
	r->e[i].ops = r->e[i].inverse = NULL;  /* checked here: not kept past the call */
	assert_memory_equal(e->ops, "[{\"op\":\"create\",\"id\":\"a\"}]", e->ops_len);
	assert_memory_equal(e->inverse, "[{\"op\":\"delete\",\"id\":\"a\"}]", e->inverse_len);
	return 0;
}

/* Schema 8 builds the edits table again (its kind CHECK without an IN
 * list, its resend index only over rows with a client_seq): every row of
 * a database kept at schema 7 comes through field for field, resends are
 * still found and still unique, a bad kind is still refused, a scene's
 * delete still takes its rows, and SQLite finds the file sound. */
static void test_log_rebuilt(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store_opts o = store_opts_default();
	o.migrate_to = 7;
	store *st = open_ok(t.path, &o);
	assert_int_equal(store_version(st), 7);
	int64_t id = 0, other = 0, seq = -1;
	const unsigned char img[] = { 0xa5, 7, 0, 0xff };
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	assert_int_equal(store_scene_create(st, "t", 1, &other), 0);
	for (int i = 1; i <= 4; i++) {
		/* 2 and 4 without a client_seq; 3 an undo of 1, 4 a redo of it. */
		store_edit e = edit_row(id, i, i == 4 ? "d" : "c", i % 2 ? i : 0);
		e.kind = i == 3 ? STORE_UNDO : i == 4 ? STORE_REDO : STORE_EDIT;
		e.target = i >= 3 ? 1 : 0;
		if (i != 2) {
			e.ops_bin = img;
			e.ops_bin_len = sizeof(img) - (size_t)(i == 4);
		}
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	store_edit e = edit_row(other, 1, "c", 1);
	assert_int_equal(store_edit_append(st, &e), 0);
	store_close(st);

	st = open_ok(t.path, NULL);
	assert_true(store_version(st) >= 8);
	full_rows r = { 0 };
	assert_int_equal(store_edits_ex(st, id, 0, -1,
					STORE_WANT_INVERSE | STORE_WANT_OPS_JSON | STORE_WANT_META,
					full_rows_cb, &r),
			 0);
	assert_int_equal(r.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r.e[i].seq, i + 1);
		assert_int_equal(r.e[i].time_us, 1000 * (i + 1));
		assert_string_equal(r.client[i], i == 3 ? "d" : "c");
		assert_int_equal(r.e[i].has_client_seq, i % 2 == 0);
		assert_int_equal(r.e[i].client_seq, i % 2 == 0 ? i + 1 : 0);
		assert_int_equal(r.e[i].kind, i == 2 ? STORE_UNDO : i == 3 ? STORE_REDO : STORE_EDIT);
		assert_int_equal(r.e[i].target, i >= 2 ? 1 : 0);
		assert_int_equal(r.e[i].n_ops, 1);
		assert_int_equal(r.e[i].ops_bin != NULL, i != 1);
		assert_int_equal(r.e[i].ops_bin_len, i == 1 ? 0 : sizeof(img) - (size_t)(i == 3));
		if (i != 1)
			assert_memory_equal(r.bin[i], img, r.e[i].ops_bin_len);
	}
	assert_int_equal(store_edit_lookup(st, id, "c", 3, &seq), 0);
	assert_int_equal(seq, 3);
	assert_int_equal(store_edit_lookup(st, id, "c", 2, &seq), 0);
	assert_int_equal(seq, 0);
	assert_int_equal(store_edit_lookup(st, other, "c", 1, &seq), 0);
	assert_int_equal(seq, 1);
	/* A resend's key is still unique; rows without one never collide. */
	e = edit_row(id, 5, "c", 1);
	assert_int_equal(store_edit_append(st, &e), RIGD_E_INTERNAL);
	for (int i = 5; i <= 6; i++) {
		e = edit_row(id, i, "c", 0);
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	e = edit_row(id, 7, "c", 0);
	e.kind = STORE_REDO + 1;
	e.target = 1;
	assert_int_equal(store_edit_append(st, &e), RIGD_E_INTERNAL);
	e = edit_row(id, 0, "c", 0);
	assert_int_equal(store_edit_append(st, &e), RIGD_E_INTERNAL);
	assert_int_equal(count_rows(st, id), 6);
	assert_int_equal(store_integrity_check(st, NULL, NULL), 0);
	assert_int_equal(store_scene_delete(st, other), 0);
	assert_int_equal(count_rows(st, other), 0);
	assert_int_equal(count_rows(st, id), 6);
	store_close(st);
	tmpdb_remove(&t);
}

static int dims_cb(void *ctx, const store_scene *sc)
{
	int *dims = ctx;
	dims[sc->name[0] == 'f' ? 0 : 1] = sc->dims;
	return 0;
}

/* A scene's dims (schema 4): stored, listed, 3 for scenes made before; a
 * database kept at schema 3 has no 2D scenes. */
static void test_scene_dims(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store_opts o = store_opts_default();
	o.migrate_to = 3;
	store *st = open_ok(t.path, &o);
	int64_t id = 0;
	int dims[2] = { 0, 0 };
	assert_int_equal(store_scene_create(st, "deep", 1, &id), 0);
	assert_int_equal(store_scene_create_dims(st, "flat", 2, 2, &id), RIGD_E_STORAGE);
	assert_int_equal(store_scenes(st, dims_cb, dims), 0);
	assert_int_equal(dims[1], 3);
	store_close(st);
	st = open_ok(t.path, NULL);
	assert_int_equal(store_scene_create_dims(st, "flat", 2, 2, &id), 0);
	assert_int_equal(store_scene_create_dims(st, "odd", 3, 4, &id), RIGD_E_BAD_FIELD);
	store_close(st);
	st = open_ok(t.path, NULL);
	assert_int_equal(store_scenes(st, dims_cb, dims), 0);
	assert_int_equal(dims[0], 2);
	assert_int_equal(dims[1], 3);
	store_close(st);
	tmpdb_remove(&t);
}

/* A scene's cluster incarnation (schema 6): none until recorded, replaced,
 * kept across a reopen, gone with its scene; a database kept at schema 5
 * has none and refuses to record one, and once migrated records it. */
static void test_scene_gens(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store_opts o = store_opts_default();
	o.migrate_to = 5;
	store *st = open_ok(t.path, &o);
	int64_t a = 0, b = 0, gen = -1;
	assert_int_equal(store_scene_create(st, "a", 1, &a), 0);
	assert_int_equal(store_scene_gen(st, a, &gen), 0);
	assert_int_equal(gen, 0);
	assert_int_equal(store_scene_set_gen(st, a, 3), RIGD_E_STORAGE);
	store_close(st);
	st = open_ok(t.path, NULL);
	assert_int_equal(store_scene_create(st, "b", 2, &b), 0);
	assert_int_equal(store_scene_gen(st, a, &gen), 0);
	assert_int_equal(gen, 0);
	assert_int_equal(store_scene_set_gen(st, a, 0), RIGD_E_BAD_FIELD);
	assert_int_equal(store_scene_set_gen(st, a, 3), 0);
	assert_int_equal(store_scene_set_gen(st, b, 4), 0);
	assert_int_equal(store_scene_set_gen(st, a, 7), 0);
	store_close(st);
	st = open_ok(t.path, NULL);
	assert_int_equal(store_scene_gen(st, a, &gen), 0);
	assert_int_equal(gen, 7);
	assert_int_equal(store_scene_gen(st, b, &gen), 0);
	assert_int_equal(gen, 4);
	assert_int_equal(store_scene_delete(st, a), 0);
	assert_int_equal(store_scene_create(st, "a", 3, &a), 0);
	assert_int_equal(store_scene_gen(st, a, &gen), 0);
	assert_int_equal(gen, 0);
	store_close(st);
	tmpdb_remove(&t);
}

static void test_refuse_newer_and_foreign(void **state)
{
	tmpdb t;
	char msg[256];
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	store_close(st);
	poke_header(t.path, 60, (uint32_t)store_schema_latest() + 1);
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_DB_TOO_NEW);
	assert_non_null(strstr(msg, "newer"));
	/* The refusal changed nothing: the version is still the newer one. */
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_DB_TOO_NEW);
	/* Another application's SQLite database. */
	poke_header(t.path, 60, 1);
	poke_header(t.path, 68, 0x12345678);
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_IO);
	assert_non_null(strstr(msg, "not a rigd database"));
	tmpdb_remove(&t);

	/* A file that is not a database at all. */
	tmpdb_make_here(&t);
	FILE *f = fopen(t.path, "w");
	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not an SQLite database. ", f);
	fclose(f);
	assert_int_equal(open_err(t.path, NULL, msg, sizeof(msg)), RIGD_E_IO);
	tmpdb_remove(&t);

	/* A path that cannot be created. */
	assert_int_equal(open_err("/nonexistent-dir/rig.db", NULL, msg, sizeof(msg)), RIGD_E_IO);
}

/* ---------- scenes, log, snapshots ---------- */

typedef struct scene_seen {
	int n;
	char names[4][16];
	int64_t last_seq[4];
} scene_seen;

static int scenes_cb(void *ctx, const store_scene *sc)
{
	scene_seen *s = ctx;
	assert_true(s->n < 4);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", sc->name);
	s->last_seq[s->n++] = sc->last_seq;
	return 0;
}

static void test_scenes(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	int64_t a = 0, b = 0, c = 0;
	assert_int_equal(store_scene_create(st, "zeta", 1, &a), 0);
	assert_int_equal(store_scene_create(st, "alpha", 2, &b), 0);
	assert_int_equal(store_scene_create(st, "alpha", 3, &c), RIGD_E_SCENE_EXISTS);
	assert_true(a != b);
	store_edit e = edit_row(a, 1, "c", 1);
	assert_int_equal(store_edit_append(st, &e), 0);
	e = edit_row(a, 2, "c", 2);
	assert_int_equal(store_edit_append(st, &e), 0);
	scene_seen seen = { 0 };
	assert_int_equal(store_scenes(st, scenes_cb, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.names[0], "alpha");
	assert_int_equal(seen.last_seq[0], 0);
	assert_string_equal(seen.names[1], "zeta");
	assert_int_equal(seen.last_seq[1], 2);
	int64_t last = -1;
	assert_int_equal(store_last_seq(st, a, &last), 0);
	assert_int_equal(last, 2);

	/* Deleting a scene takes its log and snapshots with it. */
	store_snapshot sn = { .scene_id = a, .seq = 2, .format = 1, .n_nodes = 0, .hash = 7,
			      .data = "x", .len = 1 };
	assert_int_equal(store_snapshot_put(st, &sn), 0);
	assert_int_equal(store_scene_delete(st, a), 0);
	assert_int_equal(store_scene_delete(st, a), RIGD_E_UNKNOWN_SCENE);
	assert_int_equal(count_rows(st, a), 0);
	assert_int_equal(store_integrity_check(st, NULL, NULL), 0);
	store_close(st);
	tmpdb_remove(&t);
}

typedef struct rows_seen {
	int n;
	int64_t seqs[16];
	bool had_inverse;
	bool null_client_seq[16];
} rows_seen;

static int rows_cb(void *ctx, const store_edit *e)
{
	rows_seen *r = ctx;
	assert_true(r->n < 16);
	r->null_client_seq[r->n] = !e->has_client_seq;
	r->seqs[r->n++] = e->seq;
	assert_int_equal(e->ops_len, strlen("[{\"op\":\"create\",\"id\":\"a\"}]"));
	assert_memory_equal(e->ops, "[{\"op\":\"create\",\"id\":\"a\"}]", e->ops_len);
	if (e->inverse) {
		r->had_inverse = true;
		assert_memory_equal(e->inverse, "[{\"op\":\"delete\",\"id\":\"a\"}]", e->inverse_len);
	}
	return 0;
}

/* What stop_cb returns to end a walk early: any non-zero value, which
 * store_edits must hand back unchanged. */
enum { STOP_WALK = 42 };

static int stop_cb(void *ctx, const store_edit *e)
{
	(void)e;
	(*(int *)ctx)++;
	return STOP_WALK;
}

static void test_edit_log(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	int64_t id = 0, other = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	assert_int_equal(store_scene_create(st, "t", 1, &other), 0);
	for (int i = 1; i <= 6; i++) {
		store_edit e = edit_row(id, i, "c", i <= 4 ? i : 0); /* 5, 6: no client_seq */
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	/* The same seq again, and the same (client, client_seq) again. */
	store_edit dup = edit_row(id, 3, "d", 99);
	assert_int_equal(store_edit_append(st, &dup), RIGD_E_INTERNAL);
	dup = edit_row(id, 7, "c", 2);
	assert_int_equal(store_edit_append(st, &dup), RIGD_E_INTERNAL);
	/* The same client_seq in another scene or of another client is fine. */
	dup = edit_row(other, 1, "c", 2);
	assert_int_equal(store_edit_append(st, &dup), 0);
	dup = edit_row(id, 7, "c2", 2);
	assert_int_equal(store_edit_append(st, &dup), 0);

	int64_t seq = -1;
	assert_int_equal(store_edit_lookup(st, id, "c", 3, &seq), 0);
	assert_int_equal(seq, 3);
	assert_int_equal(store_edit_lookup(st, id, "c", 5, &seq), 0);
	assert_int_equal(seq, 0);
	assert_int_equal(store_edit_lookup(st, other, "c", 2, &seq), 0);
	assert_int_equal(seq, 1);

	rows_seen r = { 0 };
	assert_int_equal(store_edits(st, id, 2, 5, false, rows_cb, &r), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.seqs[0], 3);
	assert_int_equal(r.seqs[2], 5);
	assert_false(r.had_inverse);
	assert_false(r.null_client_seq[0]);
	assert_true(r.null_client_seq[2]);
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_edits(st, id, 0, -1, true, rows_cb, &r), 0);
	assert_int_equal(r.n, 7);
	assert_true(r.had_inverse);
	/* A non-zero return stops the walk and comes back. */
	int calls = 0;
	assert_int_equal(store_edits(st, id, 0, -1, false, stop_cb, &calls), STOP_WALK);
	assert_int_equal(calls, 1);
	store_close(st);
	tmpdb_remove(&t);
}

typedef struct snap_seen {
	int n;
	int64_t seq;
	uint64_t hash;
	char data[32];
	size_t len;
} snap_seen;

static int snap_cb(void *ctx, const store_snapshot *sn)
{
	snap_seen *s = ctx;
	s->n++;
	s->seq = sn->seq;
	s->hash = sn->hash;
	s->len = sn->len;
	if (sn->data) {
		assert_true(sn->len < sizeof(s->data));
		memcpy(s->data, sn->data, sn->len);
		s->data[sn->len] = 0;
	}
	return 0;
}

/* Rows with and without a binary image of their ops (the store keeps its
 * bytes as given), read in each mode: replay's (no JSON where there is an
 * image, no metadata), check's and export's. At schema version 2 there is
 * no ops_bin: an offered image is left out and rows read without one. */
typedef struct bin_rows {
	int n;
	bool bin[8], json[8], inverse[8];
	size_t bin_len[8];
	unsigned char first_byte[8];
	int64_t time_us[8];
	bool client_set[8];
} bin_rows;

static int bin_rows_cb(void *ctx, const store_edit *e)
{
	bin_rows *r = ctx;
	assert_true(r->n < 8);
	int i = r->n++;
	r->bin[i] = e->ops_bin != NULL;
	r->json[i] = e->ops != NULL;
	r->inverse[i] = e->inverse != NULL;
	r->bin_len[i] = e->ops_bin_len;
	r->first_byte[i] = e->ops_bin && e->ops_bin_len ? ((const unsigned char *)e->ops_bin)[0] : 0;
	r->time_us[i] = e->time_us;
	r->client_set[i] = e->client && e->client[0];
	return 0;
}

static void test_ops_bin_column(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	assert_true(store_schema_latest() >= 3);
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	const unsigned char img[] = { 0xa5, 0, 1, 2, 0xff };
	for (int i = 1; i <= 3; i++) {
		store_edit e = edit_row(id, i, "c", i);
		if (i != 2) {
			e.ops_bin = img;
			e.ops_bin_len = sizeof(img);
		}
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	bin_rows r = { 0 };
	assert_int_equal(store_edits_ex(st, id, 0, -1, 0, bin_rows_cb, &r), 0);
	assert_int_equal(r.n, 3);
	assert_true(r.bin[0] && !r.bin[1] && r.bin[2]);
	assert_true(!r.json[0] && r.json[1] && !r.json[2]); /* one form each */
	assert_int_equal(r.bin_len[0], sizeof(img));
	assert_int_equal(r.first_byte[0], 0xa5);
	assert_false(r.inverse[0]);
	assert_int_equal(r.time_us[0], 0);   /* metadata not read */
	assert_false(r.client_set[0]);
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_edits_ex(st, id, 0, -1,
					STORE_WANT_INVERSE | STORE_WANT_OPS_JSON | STORE_WANT_META,
					bin_rows_cb, &r),
			 0);
	assert_true(r.bin[0] && r.json[0] && r.inverse[0] && r.json[1] && !r.bin[1]);
	assert_int_equal(r.time_us[0], 1000);
	assert_true(r.client_set[0]);
	/* The old call reads everything it did, and the image besides. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_edits(st, id, 0, -1, false, bin_rows_cb, &r), 0);
	assert_true(r.bin[0] && r.json[0] && !r.inverse[0] && r.client_set[0]);
	store_close(st);
	tmpdb_remove(&t);

	tmpdb_make_here(&t);
	store_opts o = store_opts_default();
	o.migrate_to = 2;
	st = open_ok(t.path, &o);
	assert_int_equal(store_version(st), 2);
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	store_edit e = edit_row(id, 1, "c", 1);
	e.ops_bin = img;
	e.ops_bin_len = sizeof(img);
	assert_int_equal(store_edit_append(st, &e), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_edits_ex(st, id, 0, -1, 0, bin_rows_cb, &r), 0);
	assert_true(r.n == 1 && !r.bin[0] && r.json[0]);
	store_close(st);
	/* Upgraded: the old row has no image, new rows get one. */
	st = open_ok(t.path, NULL);
	assert_int_equal(store_version(st), store_schema_latest());
	e = edit_row(id, 2, "c", 2);
	e.ops_bin = img;
	e.ops_bin_len = sizeof(img);
	assert_int_equal(store_edit_append(st, &e), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_edits_ex(st, id, 0, -1, 0, bin_rows_cb, &r), 0);
	assert_true(r.n == 2 && !r.bin[0] && r.json[0] && r.bin[1] && !r.json[1]);
	store_close(st);
	tmpdb_remove(&t);
}

static void test_snapshots(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	snap_seen s = { 0 };
	assert_int_equal(store_snapshot_latest(st, id, -1, snap_cb, &s), 0);
	assert_int_equal(s.n, 0);
	const char *data[] = { "ten", "twenty", "thirty" };
	for (int i = 0; i < 3; i++) {
		store_snapshot sn = { .scene_id = id, .seq = 10 * (i + 1), .format = 1,
				      .n_nodes = i, .hash = UINT64_MAX - (uint64_t)i,
				      .data = data[i], .len = strlen(data[i]) };
		assert_int_equal(store_snapshot_put(st, &sn), 0);
	}
	assert_int_equal(store_snapshot_latest(st, id, 25, snap_cb, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.seq, 20);
	assert_string_equal(s.data, "twenty");
	assert_true(s.hash == UINT64_MAX - 1); /* all 64 bits survive */
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_snapshot_latest(st, id, 9, snap_cb, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(store_snapshot_latest(st, id, -1, snap_cb, &s), 0);
	assert_int_equal(s.seq, 30);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_snapshots(st, id, false, snap_cb, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.len, strlen("thirty")); /* sizes without the data */
	store_close(st);
	tmpdb_remove(&t);
}

static void test_transactions(void **state)
{
	tmpdb t;
	(void)state;
	tmpdb_make_here(&t);
	store *st = open_ok(t.path, NULL);
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	assert_false(store_in_transaction(st));
	assert_int_equal(store_begin(st), 0);
	assert_true(store_in_transaction(st));
	assert_int_equal(store_begin(st), RIGD_E_INTERNAL);
	for (int i = 1; i <= 3; i++) {
		store_edit e = edit_row(id, i, "c", i);
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	store_rollback(st);
	assert_false(store_in_transaction(st));
	assert_int_equal(count_rows(st, id), 0);
	assert_int_equal(store_begin(st), 0);
	store_edit e = edit_row(id, 1, "c", 1);
	assert_int_equal(store_edit_append(st, &e), 0);
	assert_int_equal(store_commit(st), 0);
	store_rollback(st); /* nothing open: a no-op */
	assert_int_equal(count_rows(st, id), 1);
	store_close(st);
	tmpdb_remove(&t);
}

static off_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? sb.st_size : 0;
}

static void test_checkpoints_bound_the_wal(void **state)
{
	tmpdb t;
	char wal[128];
	(void)state;
	tmpdb_make_here(&t);
	snprintf(wal, sizeof(wal), "%s-wal", t.path);
	store_opts o = store_opts_default();
	o.checkpoint_pages = 16;
	o.sync_normal = true; /* the WAL's size, not the disk, is measured */
	store *st = open_ok(t.path, &o);
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	char big[4096];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	off_t max_wal = 0;
	for (int i = 1; i <= 500; i++) {
		store_edit e = edit_row(id, i, "c", i);
		e.inverse = big;
		e.inverse_len = strlen(big);
		assert_int_equal(store_edit_append(st, &e), 0); /* one commit each */
		off_t sz = file_size(wal);
		if (sz > max_wal)
			max_wal = sz;
	}
	/* 2 MB of rows went through a WAL that never exceeded a few
	 * checkpoints' worth of pages (journal_size_limit is 4 intervals). */
	print_message("checkpoints %llu, largest WAL %lld bytes\n",
		      (unsigned long long)store_checkpoints(st), (long long)max_wal);
	assert_true(store_checkpoints(st) >= 20);
	assert_true(max_wal < 5 * 16 * 4096 + 64 * 1024);
	assert_int_equal(store_checkpoint(st, true), 0);
	assert_int_equal(file_size(wal), 0);
	assert_int_equal(count_rows(st, id), 500);
	store_close(st);
	tmpdb_remove(&t);
}

/* ---------- injected faults ---------- */

static void fault_case(unsigned ops, int kind)
{
	tmpdb t;
	tmpdb_make_here(&t);
	store_opts o = store_opts_default();
	o.fault_injection = true;
	store *st = open_ok(t.path, &o);
	int64_t id = 0;
	assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
	store_edit e = edit_row(id, 1, "c", 1);
	assert_int_equal(store_edit_append(st, &e), 0);

	assert_int_equal(store_fault_set(st, ops, 0, kind), 0);
	assert_int_equal(store_begin(st), 0);
	for (int i = 2; i <= 50; i++) {
		e = edit_row(id, i, "c", i);
		int err = store_edit_append(st, &e);
		if (err) {
			/* A spill of the page cache may fail before the commit. */
			assert_int_equal(err, RIGD_E_STORAGE);
			break;
		}
	}
	assert_int_equal(store_commit(st), RIGD_E_STORAGE);
	assert_false(store_in_transaction(st));
	assert_true(store_fault_hits(st) > 0);
	assert_true(strlen(store_errmsg(st)) > 0);
	/* Reads go on; nothing of the failed transaction is there. */
	assert_int_equal(count_rows(st, id), 1);
	/* Still failing while the fault is set... */
	e = edit_row(id, 2, "c", 2);
	assert_int_equal(store_edit_append(st, &e), RIGD_E_STORAGE);
	/* ...and writing again once it clears, the same seqs free. */
	store_fault_clear(st);
	assert_int_equal(store_begin(st), 0);
	for (int i = 2; i <= 50; i++) {
		e = edit_row(id, i, "c", i);
		assert_int_equal(store_edit_append(st, &e), 0);
	}
	assert_int_equal(store_commit(st), 0);
	assert_int_equal(count_rows(st, id), 50);
	assert_int_equal(store_integrity_check(st, NULL, NULL), 0);
	store_close(st);
	/* And from disk, after a reopen without the shim. */
	st = open_ok(t.path, NULL);
	assert_int_equal(count_rows(st, id), 50);
	assert_int_equal(store_integrity_check(st, NULL, NULL), 0);
	assert_int_equal(store_fault_set(st, STORE_FAULT_WRITE, 0, STORE_FAULT_IOERR),
			 RIGD_E_INTERNAL);
	store_close(st);
	tmpdb_remove(&t);
}

static void test_fault_write_ioerr(void **state)
{
	(void)state;
	fault_case(STORE_FAULT_WRITE, STORE_FAULT_IOERR);
}

static void test_fault_write_full(void **state)
{
	(void)state;
	fault_case(STORE_FAULT_WRITE, STORE_FAULT_FULL);
}

static void test_fault_sync(void **state)
{
	(void)state;
	fault_case(STORE_FAULT_SYNC, STORE_FAULT_IOERR);
}

/* A fault after N successful calls: every commit before it lands, the one
 * that hits it does not, whichever call that is. */
static void test_fault_after_n(void **state)
{
	(void)state;
	for (long after = 0; after < 12; after++) {
		tmpdb t;
		tmpdb_make_here(&t);
		store_opts o = store_opts_default();
		o.fault_injection = true;
		store *st = open_ok(t.path, &o);
		int64_t id = 0;
		assert_int_equal(store_scene_create(st, "s", 1, &id), 0);
		assert_int_equal(store_fault_set(st, STORE_FAULT_WRITE | STORE_FAULT_SYNC, after,
						 after % 2 ? STORE_FAULT_FULL : STORE_FAULT_IOERR),
				 0);
		int committed = 0;
		for (int i = 1; i <= 20; i++) {
			store_edit e = edit_row(id, committed + 1, "c", committed + 1);
			if (store_begin(st) != 0)
				break;
			if (store_edit_append(st, &e) != 0) {
				store_rollback(st);
				break;
			}
			if (store_commit(st) != 0)
				break;
			committed++;
		}
		assert_true(committed < 20);
		assert_int_equal(count_rows(st, id), committed);
		store_fault_clear(st);
		store_edit e = edit_row(id, committed + 1, "c", committed + 1);
		assert_int_equal(store_edit_append(st, &e), 0);
		assert_int_equal(count_rows(st, id), committed + 1);
		store_close(st);
		st = open_ok(t.path, NULL);
		assert_int_equal(count_rows(st, id), committed + 1);
		assert_int_equal(store_integrity_check(st, NULL, NULL), 0);
		store_close(st);
		tmpdb_remove(&t);
	}
}

/* An optional argument selects tests by name (cmocka's filter pattern). */
int main(int argc, char **argv)
{
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_creates_latest),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_migrate_old_database),
		cmocka_unit_test(test_scene_dims),
		cmocka_unit_test(test_scene_gens),
		cmocka_unit_test(test_migrate_shared),
		cmocka_unit_test(test_log_rebuilt),
		cmocka_unit_test(test_ops_bin_column),
		cmocka_unit_test(test_refuse_newer_and_foreign),
		cmocka_unit_test(test_scenes),
		cmocka_unit_test(test_edit_log),
		cmocka_unit_test(test_snapshots),
		cmocka_unit_test(test_transactions),
		cmocka_unit_test(test_checkpoints_bound_the_wal),
		cmocka_unit_test(test_fault_write_ioerr),
		cmocka_unit_test(test_fault_write_full),
		cmocka_unit_test(test_fault_sync),
		cmocka_unit_test(test_fault_after_n),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
