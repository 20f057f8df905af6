/*
 * net_internal.h: what the socket layer's files share (net.c, net_http.c,
 * net_static.c, net_turn.c): a connection's state and the server's.
 *
 * Private to server/net/: the public interface is net.h. Functions here
 * carry the prefix nt_ so that they never read as part of it. Like every
 * file of this folder it may include libwebsockets.h; no other folder may.
 */
#ifndef RIGD_NET_INTERNAL_H
#define RIGD_NET_INTERNAL_H

#include "net.h"

/* uv.h first: libwebsockets.h declares its libuv helpers (lws_uv_getloop)
 * only when uv.h came before it. */
#include <uv.h>
#include <libwebsockets.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RX_CHUNK 16384            /* lws receive chunk per connection, bytes */
#define TX_CHUNK 65536            /* HTTP body bytes per lws_write */
#define RX_KEEP 65536             /* reassembly buffer kept between messages */
#define WS_BATCH_MAX 65536        /* frames gathered into one socket write, bytes */
#define HDR_MAX 4096              /* bytes of one request header we copy */
#define CLOSE_REASON_MAX 123      /* RFC 6455: 125-byte control payload */

/* Where a static file prefix of the URL is served from. */
struct static_root {
	const char *url_prefix;       /* starts and ends with '/' */
	const char *rel_dir;          /* under the web root */
	char *dir;                    /* realpath, or NULL when missing */
	bool deny_private;            /* refuse node_modules and dot segments */
};

/*
 * One connection's state, kept in lws's per-session data (zeroed by lws when
 * it allocates it). Every pointer member is owned and freed at close.
 */
struct conn {
	struct lws *wsi;
	uint64_t id;                  /* 0 while not registered */
	bool is_ws;

	/* websocket receive */
	char *rx;
	size_t rx_len, rx_cap;
	int rx_chunks;
	bool rx_binary;

	/* send scratch (HTTP body chunks) */
	unsigned char *tx;            /* LWS_PRE + TX_CHUNK bytes */
	size_t tx_cap;
	unsigned char *batch;         /* framed websocket messages of one write */
	size_t batch_cap;
	int close_code;               /* non-zero: close at next writable */
	bool close_after_flush;       /* ...once the callbacks have nothing more */
	bool close_sent;              /* the close frame is out: never write again */
	bool over_limit;              /* accepted beyond max_connections: 1013 */
	char *ws_auth;                /* the handshake's Authorization, or NULL */
	bool rx_paused;               /* reading stopped by net_ws_pause_for */
	bool rx_held;                 /* reading stopped by net_ws_hold */
	bool rx_gather;               /* woken only for NET_GATHER_BYTES (net_ws_gather) */
	lws_sorted_usec_list_t resume_sul;
	char close_reason[CLOSE_REASON_MAX + 1];

	/* HTTP request */
	int method;
	char *path;
	char *argbuf;                 /* NUL-separated "name=value" strings */
	int n_args;
	char *origin, *authorization, *content_type;
	char *body;
	size_t body_len, body_expected;
	bool awaiting_body;
	bool dispatched;

	/* HTTP response */
	bool responding;
	bool headers_sent;
	bool head_only;
	bool close_after;
	bool cacheable;               /* static file: allow revalidated caching */
	bool vendor;                  /* static file under /vendor/: cache long */
	char etag[80];                /* its validator (a static file, a stored document), or "" */
	const char *resp_csp;         /* this answer's own CSP (a string that
					 outlives it), or NULL: the server's */
	char *if_none_match;          /* the request's If-None-Match, or NULL */
	char *disposition;            /* this answer's Content-Disposition, or NULL */
	int status;
	char resp_type[128];
	char *resp_body;
	size_t resp_len, resp_off;
	int fd;                       /* static file descriptor + 1; 0 when none
					 (lws zeroes the session data) */
	uint64_t file_left;
};

struct slot {
	struct conn *c;
	uint32_t gen;
};

struct net {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	net_config cfg;
	char **origins;
	char *host;
	net_callbacks cb;
	struct lws_protocols protocols[3];  /* rigd, the window's timer, the end */
	lws_retry_bo_t retry;
	struct static_root roots[4];
	int n_roots;
	char *csp;                    /* Content-Security-Policy of every answer */
	char *tls_cert, *tls_key;
	int port;

	struct slot *slots;
	int n_slots, cap_slots;
	int *free_slots;
	int n_free;

	lws_sorted_usec_list_t turn_sul;
	bool turn_pending;
	atomic_bool woken;            /* net_wake_from_thread asked for a turn */
	lws_sorted_usec_list_t tick_sul;
	/* net_schedule_turn_in: a timerfd lws polls (lws' own timers are
	 * polled to the millisecond, so it spins through a timer's last
	 * one), or the sul when there is none. */
	int later_fd;
	struct lws *later_wsi;
	lws_sorted_usec_list_t later_sul;
	bool later_pending;

	uv_loop_t *uv_loop;           /* cfg.libuv: the loop lws joins; else NULL */
	void *foreign_loops[1];       /* what lws is given: uv_loop */
	volatile sig_atomic_t stop;
	bool freeing;
	long http_responding;         /* responses started but not finished */
	net_stats stats;
};

/* --- net.c --- */

/* Registers 'c' under a new connection id (its slot index and generation)
 * and returns the id, or 0 out of memory. */
uint64_t nt_conn_register(struct net *n, struct conn *c);

/* Frees the id of 'c' (registered or not) for reuse by a later
 * connection, with the next generation. */
void nt_conn_unregister(struct net *n, struct conn *c);

/* A malloc'd copy of request header 'h', or NULL when absent, longer than
 * HDR_MAX or out of memory. The caller frees it. */
char *nt_dup_header(struct lws *wsi, enum lws_token_indexes h);

/* The net a connection of its context belongs to. */
static inline struct net *nt_net_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

/* Whether a request from 'origin' (NULL: not a browser) may use the API. */
bool nt_origin_allowed(const struct net *n, const char *origin);

/* --- net_http.c --- */

/* Forgets the HTTP request and response of 'c' (its id, strings, body,
 * open file), ready for the next request on the connection. */
void nt_http_reset(struct net *n, struct conn *c);

/* Starts a response held in memory; takes ownership of 'body'. */
void nt_respond(struct net *n, struct conn *c, int status, const char *type, char *body,
		size_t len);

/* net's own error answers, in the API's error shape (docs/protocol.md). */
void nt_respond_error(struct net *n, struct conn *c, int status, int err);

/* The HTTP callbacks of lws, for 'c': a request's headers, a chunk of
 * its body, its end, and room to write. Each returns 0, or -1 to close
 * the connection. */
int nt_on_http(struct net *n, struct conn *c, struct lws *wsi, const char *uri);
int nt_on_http_body(struct net *n, struct conn *c, const void *in, size_t len);
int nt_on_http_body_done(struct net *n, struct conn *c);
int nt_on_http_writeable(struct net *n, struct conn *c);

/* --- net_static.c --- */

/* Fills n->roots from web_root: the viewer at "/", the vendored three.js
 * build below "/vendor/three/" and DOMPurify below "/vendor/dompurify/".
 * A root whose directory is missing serves
 * nothing. 0, or -1 out of memory. */
int nt_static_roots(struct net *n, const char *web_root);

/* Answers a GET or HEAD of c->path from the static roots: the file with
 * its ETag, 304 when the request's If-None-Match names it, or 404. */
void nt_serve_static(struct net *n, struct conn *c);

/* The Content-Security-Policy of every answer, allowing each inline script
 * of web_root's index.html by its SHA-256. A malloc'd string the caller
 * frees, or NULL out of memory. */
char *nt_build_csp(const char *web_root);

/* ---- net_turn.c ---- */

/* The lws protocol of net_schedule_turn_in's timerfd: its expiry runs the
 * turn. Nothing else reaches it: a websocket that asks for it by name is
 * refused. */
int nt_timer_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		      size_t len);

/* Adopts the timerfd and starts the tick, once the vhost exists. */
void nt_timers_start(struct net *n);

/* Cancels the timers lws keeps, before the context goes. */
void nt_timers_cancel(struct net *n);

/* LWS_CALLBACK_EVENT_WAIT_CANCELLED: lws_cancel_service was called, from
 * this thread (net_schedule_turn on libuv) or another
 * (net_wake_from_thread): the turn another thread asked for runs. */
void nt_on_wait_cancelled(struct net *n);

#endif
