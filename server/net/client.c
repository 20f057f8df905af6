/*
 * client.c: the client side of the socket layer (client.h) on
 * libwebsockets.
 *
 * One lws protocol serves the websocket, the HTTP request and the watched
 * descriptor; the context's user pointer leads back to the net_client, so
 * there is no global state. The client never interprets what it carries
 * (reading JSON is the codec's) and never writes to stdout.
 */
#include "client.h"

#include <libwebsockets.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROTOCOL_NAME "rigctl"   /* the lws protocol, and the prefix of messages */
#define RX_FIRST_CAP 65536      /* bytes: the reassembly buffer's first size */
#define HTTP_READ_CHUNK 16384   /* bytes read from an HTTP answer at a time */
#define BEARER_MAX 300          /* bytes of "Bearer " and the token */

struct outmsg {
	unsigned char *buf;          /* LWS_PRE + len bytes */
	size_t len;
};

struct net_client {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	net_client_hooks hooks;
	void *user;
	char bearer[BEARER_MAX];     /* "" when no token */

	/* websocket */
	struct lws *ws;              /* NULL when none */
	bool ws_closing;
	struct outmsg *out;          /* a ring of queued messages */
	int out_head, out_n, out_cap;
	char *rx;                    /* the message being reassembled */
	size_t rxlen, rxcap;

	/* HTTP */
	const char *body;            /* NULL once written, or when none */
	size_t body_len;
	const char *content_type;
	int status;

	/* the watched descriptor */
	struct lws *fd_wsi;          /* NULL when none or stopped */
	bool fd_paused;

	/* the timer */
	lws_sorted_usec_list_t sul;
	void (*timer_fn)(void *user);
};

static net_client *client_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

static void log_errors(int level, const char *line)
{
	if (level == LLL_ERR)
		fprintf(stderr, PROTOCOL_NAME ": lws: %s", line);
}

double net_client_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- websocket ---- */

/* Appends a received piece to the message being reassembled. */
static int rx_append(net_client *c, const void *in, size_t len)
{
	if (c->rxlen + len + 1 > c->rxcap) {
		size_t cap = c->rxcap ? c->rxcap : RX_FIRST_CAP;
		char *n;

		while (cap < c->rxlen + len + 1)
			cap *= 2;
		n = realloc(c->rx, cap);
		if (!n)
			return -1;
		c->rx = n;
		c->rxcap = cap;
	}
	memcpy(c->rx + c->rxlen, in, len);
	c->rxlen += len;
	c->rx[c->rxlen] = '\0';
	return 0;
}

/* Writes the oldest queued message, one lws_write per writable callback. */
static int ws_writable(net_client *c, struct lws *wsi)
{
	struct outmsg *m;
	int n;

	if (c->ws_closing) {
		lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, (unsigned char *)"done", 4);
		return -1;
	}
	if (c->out_n == 0)
		return 0;
	m = &c->out[c->out_head];
	n = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
	free(m->buf);
	c->out_head = (c->out_head + 1) % c->out_cap;
	c->out_n--;
	if (n < 0) {
		fprintf(stderr, "%s: write failed\n", PROTOCOL_NAME);
		return -1;
	}
	if (c->out_n > 0)
		lws_callback_on_writable(wsi);
	return 0;
}

static int ws_event(net_client *c, struct lws *wsi, enum lws_callback_reasons reason, void *in,
		    size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		if (c->hooks.ws_open)
			c->hooks.ws_open(c->user);
		lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (lws_is_first_fragment(wsi))
			c->rxlen = 0;
		if (rx_append(c, in, len) != 0) {
			fprintf(stderr, "%s: out of memory\n", PROTOCOL_NAME);
			return -1;
		}
		if (lws_is_final_fragment(wsi) && c->hooks.ws_message)
			c->hooks.ws_message(c->user, c->rx, c->rxlen);
		if (c->ws_closing)
			lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return ws_writable(c, wsi);
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (wsi == c->ws) {
			c->ws = NULL;
			if (c->hooks.ws_closed)
				c->hooks.ws_closed(c->user);
		}
		break;
	default:
		break;
	}
	return 0;
}

int net_client_ws_connect(net_client *c, const char *host, int port, const char *path)
{
	struct lws_client_connect_info i;

	memset(&i, 0, sizeof(i));
	i.context = c->ctx;
	i.vhost = c->vh;
	i.address = host;
	i.port = port;
	i.path = path;
	i.host = host;
	i.origin = NULL;               /* a script, not a browser page */
	i.protocol = NULL;
	i.local_protocol_name = PROTOCOL_NAME;
	i.ietf_version_or_minus_one = -1;
	i.pwsi = &c->ws;
	c->ws_closing = false;
	return lws_client_connect_via_info(&i) ? 0 : -1;
}

bool net_client_ws_connected(const net_client *c)
{
	return c->ws != NULL;
}

int net_client_ws_send(net_client *c, const char *text, size_t len)
{
	struct outmsg *m;

	if (c->out_n == c->out_cap) {
		int cap = c->out_cap ? c->out_cap * 2 : 64;
		struct outmsg *v = malloc((size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		for (int i = 0; i < c->out_n; i++)
			v[i] = c->out[(c->out_head + i) % c->out_cap];
		free(c->out);
		c->out = v;
		c->out_head = 0;
		c->out_cap = cap;
	}
	m = &c->out[(c->out_head + c->out_n) % c->out_cap];
	m->buf = malloc(LWS_PRE + len);
	if (!m->buf)
		return -1;
	memcpy(m->buf + LWS_PRE, text, len);
	m->len = len;
	c->out_n++;
	if (c->ws)
		lws_callback_on_writable(c->ws);
	return 0;
}

int net_client_ws_queued(const net_client *c)
{
	return c->out_n;
}

void net_client_ws_close(net_client *c)
{
	c->ws_closing = true;
	if (c->ws)
		lws_callback_on_writable(c->ws);
}

void net_client_ws_finish(net_client *c, double timeout_s)
{
	double until = net_client_now_s() + timeout_s;

	if (!c->ws)
		return;
	net_client_ws_close(c);
	while (c->ws && net_client_now_s() < until)
		if (lws_service(c->ctx, 0) < 0)
			break;
}

/* ---- HTTP ---- */

/* Adds the bearer token and, for a request with a body, its length and
 * type to the handshake or request headers being written. */
static int append_headers(net_client *c, struct lws *wsi, void *in, size_t len)
{
	unsigned char **p = (unsigned char **)in, *end = (*p) + len;

	/* The same header for HTTP requests and the websocket handshake: a
	 * token never goes into the URL. */
	if (c->bearer[0] &&
	    lws_add_http_header_by_name(wsi, (const unsigned char *)"authorization:",
					(const unsigned char *)c->bearer, (int)strlen(c->bearer),
					p, end))
		return -1;
	if (c->body) {
		const char *ctype = c->content_type ? c->content_type : "application/json";
		char cl[32];

		snprintf(cl, sizeof(cl), "%zu", c->body_len);
		if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH,
						 (unsigned char *)cl, (int)strlen(cl), p, end) ||
		    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
						 (unsigned char *)ctype, (int)strlen(ctype), p, end))
			return -1;
		lws_client_http_body_pending(wsi, 1);
		lws_callback_on_writable(wsi);
	}
	return 0;
}

/* Writes the request body in one piece. */
static int write_body(net_client *c, struct lws *wsi)
{
	unsigned char *buf;
	int n;

	if (!c->body)
		return 0;
	buf = malloc(LWS_PRE + c->body_len + 1);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", PROTOCOL_NAME);
		return -1;
	}
	memcpy(buf + LWS_PRE, c->body, c->body_len);
	n = lws_write(wsi, buf + LWS_PRE, c->body_len, LWS_WRITE_HTTP_FINAL);
	free(buf);
	c->body = NULL;
	lws_client_http_body_pending(wsi, 0);
	return n < 0 ? -1 : 0;
}

static int http_event(net_client *c, struct lws *wsi, enum lws_callback_reasons reason, void *in,
		      size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
		c->status = (int)lws_http_client_http_response(wsi);
		break;
	case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE:
		return write_body(c, wsi);
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
		if (len && c->hooks.http_body &&
		    c->hooks.http_body(c->user, c->status, (const char *)in, len) < 0)
			return -1;
		break;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
		char buffer[HTTP_READ_CHUNK + LWS_PRE];
		char *px = buffer + LWS_PRE;
		int lenx = (int)sizeof(buffer) - LWS_PRE;

		if (lws_http_client_read(wsi, &px, &lenx) < 0)
			return -1;
		break;
	}
	case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
		if (c->hooks.http_done)
			c->hooks.http_done(c->user, c->status);
		break;
	case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
		if (c->hooks.http_closed)
			c->hooks.http_closed(c->user);
		break;
	default:
		break;
	}
	return 0;
}

int net_client_http(net_client *c, const net_client_request *req)
{
	struct lws_client_connect_info i;
	struct lws *wsi = NULL;

	c->body = req->body;
	c->body_len = req->body_len;
	c->content_type = req->content_type;
	c->status = 0;
	memset(&i, 0, sizeof(i));
	i.context = c->ctx;
	i.vhost = c->vh;
	i.address = req->host;
	i.port = req->port;
	i.path = req->path;
	i.host = req->host;
	i.method = req->method;
	i.protocol = PROTOCOL_NAME;
	i.local_protocol_name = PROTOCOL_NAME;
	i.alpn = "http/1.1";
	i.pwsi = &wsi;
	return lws_client_connect_via_info(&i) ? 0 : -1;
}

/* ---- the watched descriptor and the timer ---- */

static int fd_event(net_client *c, struct lws *wsi, enum lws_callback_reasons reason)
{
	if (reason == LWS_CALLBACK_RAW_RX_FILE) {
		if (c->hooks.fd_readable && c->hooks.fd_readable(c->user) < 0) {
			c->fd_wsi = NULL;
			return -1;
		}
	} else if (reason == LWS_CALLBACK_RAW_CLOSE_FILE && wsi == c->fd_wsi) {
		/* A pipe's end may come as a hang-up with data still unread
		 * (lws closes on POLLHUP). */
		c->fd_wsi = NULL;
		if (c->hooks.fd_hangup)
			c->hooks.fd_hangup(c->user);
	}
	return 0;
}

int net_client_watch_fd(net_client *c, int fd)
{
	lws_sock_file_fd_type d;

	d.filefd = fd;
	c->fd_wsi = lws_adopt_descriptor_vhost(c->vh, LWS_ADOPT_RAW_FILE_DESC, d, PROTOCOL_NAME,
					       NULL);
	c->fd_paused = false;
	return c->fd_wsi ? 0 : -1;
}

void net_client_pause_fd(net_client *c, bool pause)
{
	if (!c->fd_wsi || c->fd_paused == pause)
		return;
	c->fd_paused = pause;
	lws_rx_flow_control(c->fd_wsi, pause ? 0 : 1);
}

static void timer_fired(lws_sorted_usec_list_t *sul)
{
	net_client *c = lws_container_of(sul, net_client, sul);

	if (c->timer_fn)
		c->timer_fn(c->user);
}

void net_client_timer(net_client *c, int64_t delay_us, void (*fn)(void *user))
{
	c->timer_fn = fn;
	lws_sul_schedule(c->ctx, 0, &c->sul, timer_fired, (lws_usec_t)delay_us);
}

/* ---- the context ---- */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	net_client *c = client_of(wsi);

	(void)user;
	if (!c)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		/* One connection at a time: this is it. */
		if (c->hooks.connect_failed)
			c->hooks.connect_failed(c->user, in ? (const char *)in : "connection failed");
		c->ws = NULL;
		return 0;
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		return append_headers(c, wsi, in, len);
	case LWS_CALLBACK_RAW_RX_FILE:
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		return fd_event(c, wsi, reason);
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
	case LWS_CALLBACK_CLIENT_RECEIVE:
	case LWS_CALLBACK_CLIENT_WRITEABLE:
	case LWS_CALLBACK_CLIENT_CLOSED:
		return ws_event(c, wsi, reason, in, len);
	default:
		return http_event(c, wsi, reason, in, len);
	}
}

static const struct lws_protocols protocols[] = {
	{PROTOCOL_NAME, callback, 0, 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

net_client *net_client_new(const net_client_hooks *hooks, void *user, const char *bearer)
{
	struct lws_context_creation_info info;
	net_client *c = calloc(1, sizeof(*c));

	if (!c) {
		fprintf(stderr, "%s: out of memory\n", PROTOCOL_NAME);
		return NULL;
	}
	c->hooks = *hooks;
	c->user = user;
	if (bearer)
		snprintf(c->bearer, sizeof(c->bearer), "Bearer %s", bearer);
	lws_set_log_level(LLL_ERR, log_errors);
	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	info.user = c;
	c->ctx = lws_create_context(&info);
	if (!c->ctx) {
		fprintf(stderr, "%s: cannot create the libwebsockets context\n",
			PROTOCOL_NAME);
		free(c);
		return NULL;
	}
	c->vh = lws_create_vhost(c->ctx, &info);
	if (!c->vh) {
		fprintf(stderr, "%s: cannot create the libwebsockets vhost\n",
			PROTOCOL_NAME);
		lws_context_destroy(c->ctx);
		free(c);
		return NULL;
	}
	return c;
}

void net_client_free(net_client *c)
{
	if (!c)
		return;
	lws_sul_cancel(&c->sul);
	/* Destroying the context closes what is open; the hooks must not run
	 * on a caller that is tearing down. */
	memset(&c->hooks, 0, sizeof(c->hooks));
	lws_context_destroy(c->ctx);
	for (int i = 0; i < c->out_n; i++)
		free(c->out[(c->out_head + i) % c->out_cap].buf);
	free(c->out);
	free(c->rx);
	free(c);
}

int net_client_service(net_client *c)
{
	return lws_service(c->ctx, 0);
}

