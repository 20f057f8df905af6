/*
 * net_turn.c: when the callbacks' turn() and tick() run (see net.h): the
 * turn asked for at the end of a service pass (net_schedule_turn), the one
 * asked for a few milliseconds on (net_schedule_turn_in: a timerfd lws
 * polls), the one another thread asks for (net_wake_from_thread, run in
 * LWS_CALLBACK_EVENT_WAIT_CANCELLED), and the tick each second.
 */
#include "net_internal.h"

#include <stdatomic.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static void run_turn(struct net *n)
{
	if (n->cb.turn && !n->freeing)
		n->cb.turn(n->cb.ctx);
}

static void turn_cb(lws_sorted_usec_list_t *sul)
{
	struct net *n = lws_container_of(sul, struct net, turn_sul);

	n->turn_pending = false;
	run_turn(n);
}

static void later_turn(struct net *n)
{
	n->later_pending = false;
	run_turn(n);
}

static void later_cb(lws_sorted_usec_list_t *sul)
{
	later_turn(lws_container_of(sul, struct net, later_sul));
}

int nt_timer_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len)
{
	struct net *n = nt_net_of(wsi);
	uint64_t expired;

	(void)user;
	(void)in;
	(void)len;
	switch (reason) {
	case LWS_CALLBACK_RAW_RX_FILE:
		if (n && n->later_fd >= 0 &&
		    read(n->later_fd, &expired, sizeof(expired)) == (ssize_t)sizeof(expired))
			later_turn(n);
		return 0;
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		if (n && n->later_wsi == wsi) {
			n->later_wsi = NULL;
			n->later_fd = -1;  /* lws closes it */
		}
		return 0;
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		return 1;
	default:
		return 0;
	}
}

/* The timerfd behind net_schedule_turn_in, adopted by lws; without one
 * (no timerfd, or lws would not take it) the sul stands in. */
static void adopt_timer(struct net *n)
{
	lws_sock_file_fd_type fd;

	n->later_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (n->later_fd < 0)
		return;
	fd.filefd = n->later_fd;
	n->later_wsi = lws_adopt_descriptor_vhost(n->vh, LWS_ADOPT_RAW_FILE_DESC, fd,
						  n->protocols[1].name, NULL);
	if (!n->later_wsi) {
		close(n->later_fd);
		n->later_fd = -1;
	}
}

static void tick_cb(lws_sorted_usec_list_t *sul)
{
	struct net *n = lws_container_of(sul, struct net, tick_sul);

	if (n->cb.tick && !n->freeing)
		n->cb.tick(n->cb.ctx);
	lws_sul_schedule(n->ctx, 0, &n->tick_sul, tick_cb, LWS_US_PER_SEC);
}

void nt_timers_start(struct net *n)
{
	adopt_timer(n);
	lws_sul_schedule(n->ctx, 0, &n->tick_sul, tick_cb, LWS_US_PER_SEC);
}

void nt_timers_cancel(struct net *n)
{
	lws_sul_cancel(&n->turn_sul);
	lws_sul_cancel(&n->later_sul);
	lws_sul_cancel(&n->tick_sul);
}

void net_schedule_turn(net *n)
{
	if (n->turn_pending)
		return;
	n->turn_pending = true;
	lws_sul_schedule(n->ctx, 0, &n->turn_sul, turn_cb, 0);
	/* On libuv, lws rearms its timer only after its own events: a turn
	 * asked for from another handle of the loop (a Redis reply) would
	 * wait for lws' next event, up to the one-second tick. Waking the
	 * service makes lws look at its timers now. */
	if (n->uv_loop)
		lws_cancel_service(n->ctx);
}

void net_schedule_turn_in(net *n, int64_t us)
{
	if (n->later_pending)
		return;
	n->later_pending = true;
	if (us < 1)
		us = 1;  /* a zero it_value disarms the timer */
	if (n->later_fd >= 0) {
		struct itimerspec when = {.it_value = {.tv_sec = (time_t)(us / 1000000),
						       .tv_nsec = (long)(us % 1000000) * 1000}};

		if (timerfd_settime(n->later_fd, 0, &when, NULL) == 0)
			return;
	}
	lws_sul_schedule(n->ctx, 0, &n->later_sul, later_cb, us);
	if (n->uv_loop)
		lws_cancel_service(n->ctx);  /* as in net_schedule_turn */
}

void nt_on_wait_cancelled(struct net *n)
{
	if (atomic_exchange(&n->woken, false))
		run_turn(n);
}

void net_wake_from_thread(net *n)
{
	atomic_store(&n->woken, true);
	lws_cancel_service(n->ctx);
}
