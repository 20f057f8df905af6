/*
 * writer.h: the commit writer, a thread that runs jobs in the order they
 * were submitted and hands each back, finished, in that order.
 *
 * The engine gives it one job per turn (a whole transaction: engine.c's
 * commit job) so that the event loop never waits on SQLite or fsync; the
 * queue itself knows nothing of SQLite, so a unit test drives it alone
 * (tests/test_writer.c). Jobs are opaque pointers the submitter owns
 * throughout: the writer only runs 'run' on them and returns them.
 *
 * Must never call back into the submitter except through 'notify', which
 * runs on the writer's thread after each job finishes, with the writer's
 * lock held (so the job cannot be taken, and the owner cannot go away,
 * before it returned): it must be safe to call from any thread and must
 * not call into the writer (lws_cancel_service is such a call).
 */
#ifndef RIGD_ENGINE_WRITER_H
#define RIGD_ENGINE_WRITER_H

#include <stdbool.h>

typedef struct writer writer;

/* Runs one job on the writer's thread; its return travels with the job. */
typedef int (*writer_run_fn)(void *ctx, void *job);
/* Called on the writer's thread after each job finished. */
typedef void (*writer_notify_fn)(void *ctx);

/*
 * Starts a writer thread that runs 'run'(ctx, job) for each submitted job
 * and then calls 'notify'(notify_ctx) (may be NULL). Returns it, or NULL
 * when memory or a thread could not be had.
 */
writer *writer_new(writer_run_fn run, void *ctx, writer_notify_fn notify, void *notify_ctx);

/* Queues 'job' (not NULL; still owned by the caller) behind the others.
 * 0, or RIGD_E_NOMEM (nothing queued). */
int writer_submit(writer *w, void *job);

/* The oldest finished job not yet taken, with its return in *rc, or NULL
 * when none has finished. Never blocks. */
void *writer_take(writer *w, int *rc);

/* writer_take that waits for the oldest submitted job to finish; NULL only
 * when nothing is queued or running. */
void *writer_wait(writer *w, int *rc);

/* Jobs submitted and not yet taken (queued, running or finished). */
int writer_outstanding(writer *w);

/* Jobs submitted and not yet finished (queued or running). */
int writer_unfinished(writer *w);

/* Runs every queued job, stops the thread and frees the writer; the jobs
 * finished and not taken are forgotten (the caller owns them: take them
 * first). Accepts NULL. */
void writer_free(writer *w);

#endif
