/*
 * test_writer.c: the commit writer's queue (server/engine/writer.h) alone,
 * and the engine's commit through it.
 *
 * Jobs run one at a time in submission order and come back in that order;
 * nothing comes back before it ran; writer_take never blocks while a job
 * runs (the loop keeps serving), writer_wait does; the notify callback runs
 * once per job, after its job finished; writer_free runs what was queued.
 * Then the engine: a commit handed to the writer is durable (a second
 * engine reads it back) only once poll says done, seqs stay gapless across
 * commits, and a commit that fails on the writer's connection (the fault
 * VFS) answers nothing and rolls the scene back exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/proto.h"
#include "core/err.h"
#include "engine/engine.h"
#include "engine/store.h"
#include "engine/writer.h"
#include "tmpdb.h"

/* A job: its number, whether it may finish yet, and when it ran. */
struct job {
	int id;
	atomic_bool gate;         /* the job spins until this is true */
	atomic_int ran_at;        /* the run counter when it ran, from 1 */
	atomic_int notified_before; /* notifications seen when it started */
};

struct ctx {
	atomic_int runs;
	atomic_int notified;
};

static int run_job(void *vctx, void *vjob)
{
	struct ctx *c = vctx;
	struct job *j = vjob;

	atomic_store(&j->notified_before, atomic_load(&c->notified));
	while (!atomic_load(&j->gate))
		usleep(1000);
	atomic_store(&j->ran_at, atomic_fetch_add(&c->runs, 1) + 1);
	return -j->id;  /* the return travels with the job */
}

static void notify(void *vctx)
{
	struct ctx *c = vctx;

	atomic_fetch_add(&c->notified, 1);
}

static void test_order_and_returns(void **state)
{
	(void)state;
	struct ctx c = { 0 };
	struct job jobs[5];
	writer *w = writer_new(run_job, &c, notify, &c);
	int rc = 0;

	assert_non_null(w);
	assert_null(writer_take(w, &rc));
	assert_null(writer_wait(w, &rc));  /* nothing queued: no wait */
	for (int i = 0; i < 5; i++) {
		jobs[i].id = i + 1;
		atomic_init(&jobs[i].gate, false);
		atomic_init(&jobs[i].ran_at, 0);
		atomic_init(&jobs[i].notified_before, -1);
		assert_int_equal(writer_submit(w, &jobs[i]), 0);
	}
	assert_int_equal(writer_outstanding(w), 5);
	assert_int_equal(writer_unfinished(w), 5);
	/* The first job runs and holds: nothing is handed back, and take
	 * returns at once. */
	usleep(20000);
	assert_null(writer_take(w, &rc));
	assert_int_equal(atomic_load(&c.runs), 0);
	/* Released out of order: they still run and return in order. */
	for (int i = 4; i >= 0; i--)
		atomic_store(&jobs[i].gate, true);
	for (int i = 0; i < 5; i++) {
		struct job *j = writer_wait(w, &rc);

		assert_non_null(j);
		assert_ptr_equal(j, &jobs[i]);
		assert_int_equal(rc, -(i + 1));
		assert_int_equal(atomic_load(&j->ran_at), i + 1);
		/* Job i started after the i notifications of the jobs before
		 * it: each notification follows its own job. */
		assert_true(atomic_load(&j->notified_before) >= i);
	}
	assert_int_equal(writer_outstanding(w), 0);
	assert_int_equal(writer_unfinished(w), 0);
	assert_null(writer_take(w, &rc));
	writer_free(w);
	assert_int_equal(atomic_load(&c.notified), 5);
	writer_free(NULL);
}

static void test_free_runs_queued(void **state)
{
	(void)state;
	struct ctx c = { 0 };
	struct job jobs[3];
	writer *w = writer_new(run_job, &c, NULL, NULL);

	assert_non_null(w);
	for (int i = 0; i < 3; i++) {
		jobs[i].id = i + 1;
		atomic_init(&jobs[i].gate, true);
		atomic_init(&jobs[i].ran_at, 0);
		atomic_init(&jobs[i].notified_before, 0);
		assert_int_equal(writer_submit(w, &jobs[i]), 0);
	}
	writer_free(w);  /* runs the three first */
	assert_int_equal(atomic_load(&c.runs), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(atomic_load(&jobs[i].ran_at), i + 1);
}

/* ---- the engine's commit through the writer ---- */

static atomic_int engine_notes;

static void engine_notify(void *ctx)
{
	(void)ctx;
	atomic_fetch_add(&engine_notes, 1);
}

static int submit_create(engine *e, const char *id, int64_t client_seq)
{
	char json[160];
	edit_batch b;
	engine_ack ack;
	edit_error err;
	int rc;

	snprintf(json, sizeof(json),
		 "{\"client\":\"w1\",\"client_seq\":%lld,"
		 "\"ops\":[{\"op\":\"create\",\"id\":\"%s\"}]}",
		 (long long)client_seq, id);
	rc = proto_decode_batch(json, strlen(json), NULL, &b, &err);
	assert_int_equal(rc, 0);
	rc = engine_submit(e, "s", &b, &ack, &err);
	edit_batch_release(&b);
	engine_ack_release(&ack);
	return rc;
}

static int64_t stored_seq(const char *path)
{
	engine_opts o = engine_opts_default();
	int64_t seq;
	engine *r;

	o.read_only = true;
	r = engine_open(path, &o, NULL, NULL, 0);
	assert_non_null(r);
	seq = engine_seq(r, "s");
	engine_close(r);
	return seq;
}

static void test_engine_commit_off_thread(void **state)
{
	(void)state;
	tmpdb t;
	engine_opts o = engine_opts_default();
	engine *e;
	char msg[256];
	bool done = false;
	int rc;

	tmpdb_make(&t, "/tmp", "test_writer");
	const char *path = t.path;
	o.fault_injection = true;
	o.sync_delay_ms = 50;  /* each fsync: a slow disk */
	e = engine_open(path, &o, NULL, msg, sizeof(msg));
	assert_non_null(e);
	assert_int_equal(engine_scene_create(e, "s"), 0);
	assert_int_equal(engine_writer_start(e, path, engine_notify, NULL, msg, sizeof(msg)), 0);

	assert_int_equal(submit_create(e, "a", 1), 0);
	assert_int_equal(submit_create(e, "b", 2), 0);
	atomic_store(&engine_notes, 0);
	assert_int_equal(engine_commit_begin(e), 0);
	assert_true(engine_commit_busy(e));
	/* Until poll says done, the scene reads as before the commit (seq 0
	 * committed), and the writer holds it. The fsync sleeps, so this is
	 * nearly always seen; on a very busy machine the commit may be over
	 * first, and then there is nothing to see. */
	int queued = engine_writer_queued(e);
	assert_int_equal(engine_commit_poll(e, false, &done), 0);
	if (!done) {
		assert_int_equal(queued, 1);
		assert_int_equal(engine_seq(e, "s"), 0);
		assert_true(engine_commit_busy(e));
	}
	if (!done)
		assert_int_equal(engine_commit_poll(e, true, &done), 0);
	assert_true(done);
	assert_false(engine_commit_busy(e));
	assert_int_equal(atomic_load(&engine_notes), 1);
	assert_int_equal(engine_seq(e, "s"), 2);
	engine_stats st;
	engine_get_stats(e, &st);
	assert_int_equal(st.last_commit_batches, 2);
	assert_true(st.last_commit_s >= 0.05);
	/* The next commit: gapless. */
	assert_int_equal(submit_create(e, "c", 3), 0);
	assert_int_equal(engine_commit_begin(e), 0);
	assert_int_equal(engine_commit_poll(e, true, &done), 0);
	assert_int_equal(engine_seq(e, "s"), 3);

	/* A commit that fails on the writer's connection: nothing stays. */
	assert_int_equal(submit_create(e, "d", 4), 0);
	assert_non_null(engine_scene(e, "s"));
	assert_int_equal(engine_fault(e, STORE_FAULT_SYNC, 0, STORE_FAULT_IOERR), 0);
	assert_int_equal(engine_commit_begin(e), 0);
	rc = engine_commit_poll(e, true, &done);
	assert_true(done);
	assert_int_equal(rc, RIGD_E_STORAGE);
	assert_int_equal(engine_seq(e, "s"), 3);
	assert_int_equal(scene_count(engine_scene(e, "s")), 3);  /* a, b, c */
	engine_fault_clear(e);
	/* And the next one goes through with the seq the failed one had. */
	assert_int_equal(submit_create(e, "d", 4), 0);
	assert_int_equal(engine_commit_begin(e), 0);
	assert_int_equal(engine_commit_poll(e, true, &done), 0);
	assert_int_equal(engine_seq(e, "s"), 4);
	/* A commit still out when the engine closes is waited for. */
	assert_int_equal(submit_create(e, "e", 5), 0);
	assert_int_equal(engine_commit_begin(e), 0);
	engine_close(e);
	assert_int_equal(stored_seq(path), 5);
	tmpdb_remove(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_returns),
		cmocka_unit_test(test_free_runs_queued),
		cmocka_unit_test(test_engine_commit_off_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
