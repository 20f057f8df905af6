/*
 * writer.c: the commit writer's thread and its two queues (see writer.h).
 *
 * One mutex guards both lists; the thread sleeps on 'work' until a job is
 * queued, and a caller of writer_wait sleeps on 'done' until one finishes.
 * Jobs run one at a time, in submission order, and are handed back in that
 * order: a turn's answers never overtake an earlier turn's.
 */
#include "writer.h"

#include "core/err.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct node {
	void *job;
	int rc;
	struct node *next;
};

struct writer {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	writer_run_fn run;
	void *ctx;
	writer_notify_fn notify;
	void *notify_ctx;
	struct node *todo_head, *todo_tail;   /* queued, oldest first */
	struct node *done_head, *done_tail;   /* finished, not yet taken */
	int outstanding;                      /* submitted, not taken */
	int unfinished;                       /* submitted, not finished */
	bool stopping;
};

static void *thread_main(void *arg)
{
	writer *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->todo_head && !w->stopping)
			pthread_cond_wait(&w->work, &w->mu);
		struct node *n = w->todo_head;
		if (!n)
			break;  /* stopping, and nothing left to run */
		w->todo_head = n->next;
		if (!w->todo_head)
			w->todo_tail = NULL;
		pthread_mutex_unlock(&w->mu);
		n->rc = w->run(w->ctx, n->job);
		n->next = NULL;
		pthread_mutex_lock(&w->mu);
		if (w->done_tail)
			w->done_tail->next = n;
		else
			w->done_head = n;
		w->done_tail = n;
		w->unfinished--;
		/* Under the lock: nobody can take the job (and, say, free what
		 * 'notify' reaches) before the callback has returned. */
		if (w->notify)
			w->notify(w->notify_ctx);
		pthread_cond_broadcast(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

writer *writer_new(writer_run_fn run, void *ctx, writer_notify_fn notify, void *notify_ctx)
{
	writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->run = run;
	w->ctx = ctx;
	w->notify = notify;
	w->notify_ctx = notify_ctx;
	if (pthread_mutex_init(&w->mu, NULL) != 0)
		goto fail_mu;
	if (pthread_cond_init(&w->work, NULL) != 0)
		goto fail_work;
	if (pthread_cond_init(&w->done, NULL) != 0)
		goto fail_done;
	if (pthread_create(&w->thread, NULL, thread_main, w) != 0)
		goto fail_thread;
	return w;
fail_thread:
	pthread_cond_destroy(&w->done);
fail_done:
	pthread_cond_destroy(&w->work);
fail_work:
	pthread_mutex_destroy(&w->mu);
fail_mu:
	free(w);
	return NULL;
}

int writer_submit(writer *w, void *job)
{
	struct node *n = malloc(sizeof(*n));

	assert(job);
	if (!n)
		return RIGD_E_NOMEM;
	n->job = job;
	n->rc = 0;
	n->next = NULL;
	pthread_mutex_lock(&w->mu);
	assert(!w->stopping);
	if (w->todo_tail)
		w->todo_tail->next = n;
	else
		w->todo_head = n;
	w->todo_tail = n;
	w->outstanding++;
	w->unfinished++;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* Takes the oldest finished node; the lock is held. */
static void *take_locked(writer *w, int *rc)
{
	struct node *n = w->done_head;
	void *job;

	if (!n)
		return NULL;
	w->done_head = n->next;
	if (!w->done_head)
		w->done_tail = NULL;
	w->outstanding--;
	job = n->job;
	*rc = n->rc;
	free(n);
	return job;
}

void *writer_take(writer *w, int *rc)
{
	void *job;

	pthread_mutex_lock(&w->mu);
	job = take_locked(w, rc);
	pthread_mutex_unlock(&w->mu);
	return job;
}

void *writer_wait(writer *w, int *rc)
{
	void *job;

	pthread_mutex_lock(&w->mu);
	while (!w->done_head && w->unfinished > 0)
		pthread_cond_wait(&w->done, &w->mu);
	job = take_locked(w, rc);
	pthread_mutex_unlock(&w->mu);
	return job;
}

int writer_outstanding(writer *w)
{
	int n;

	pthread_mutex_lock(&w->mu);
	n = w->outstanding;
	pthread_mutex_unlock(&w->mu);
	return n;
}

int writer_unfinished(writer *w)
{
	int n;

	pthread_mutex_lock(&w->mu);
	n = w->unfinished;
	pthread_mutex_unlock(&w->mu);
	return n;
}

void writer_free(writer *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	while (w->done_head) {
		struct node *n = w->done_head;
		w->done_head = n->next;
		free(n);
	}
	pthread_cond_destroy(&w->done);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
