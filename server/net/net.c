/*
 * net.c: HTTP and websockets on libwebsockets 4.1.6 (see net.h): the
 * context, connection ids, websockets and the public calls. HTTP requests
 * and responses are in net_http.c, static files and the
 * Content-Security-Policy in net_static.c, when the callbacks' turn and
 * tick run in net_turn.c.
 *
 * The only file of the server that includes libwebsockets.h. It follows the
 * minimal ws-server examples and README.coding.md: one thread runs
 * lws_service; bytes are written only from the WRITEABLE callbacks, one
 * lws_write per callback (carrying every message already waiting, up to a
 * cap: write_batch), asking for another while more is queued; closing
 * is returning -1. Websocket messages are reassembled here with a cap on the
 * total size and on the number of receive chunks (rx_buffer_size is a chunk
 * size, not a limit). LWS_CALLBACK_HTTP_CONFIRM_UPGRADE is deliberately not
 * handled (CVE-2025-11677 sits behind it in 4.1.6); the upgrade is filtered in
 * LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION instead.
 *
 * It never parses JSON or touches a scene: requests and messages go up
 * through struct net_callbacks as bytes.
 */
#include "net_internal.h"

#include "core/err.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

/* ---- connection ids ---- */

/* The connection of id 'id', or NULL when it closed (its slot's
 * generation moved on) or never was. */
static struct conn *conn_lookup(const struct net *n, uint64_t id)
{
	uint32_t idx = (uint32_t)(id & 0xffffffffu);
	uint32_t gen = (uint32_t)(id >> 32);

	if (idx >= (uint32_t)n->n_slots || n->slots[idx].gen != gen)
		return NULL;
	return n->slots[idx].c;
}

uint64_t nt_conn_register(struct net *n, struct conn *c)
{
	int idx;

	assert(c->id == 0);
	if (n->n_free > 0) {
		idx = n->free_slots[--n->n_free];
		/* A freed slot holds no connection, and its id's generation
		 * was handed out once already. */
		assert(idx >= 0 && idx < n->n_slots && n->slots[idx].c == NULL);
		assert(n->slots[idx].gen != 0);
	} else {
		if (n->n_slots == n->cap_slots) {
			int cap = n->cap_slots ? n->cap_slots * 2 : 64;
			struct slot *s = realloc(n->slots, (size_t)cap * sizeof(*s));
			int *f;

			if (!s)
				return 0;
			n->slots = s;
			f = realloc(n->free_slots, (size_t)cap * sizeof(*f));
			if (!f)
				return 0;
			n->free_slots = f;
			n->cap_slots = cap;
		}
		idx = n->n_slots++;
		n->slots[idx].gen = 0;
	}
	n->slots[idx].c = c;
	n->slots[idx].gen++;
	if (n->slots[idx].gen == 0)   /* never hand out id 0 */
		n->slots[idx].gen = 1;
	c->id = ((uint64_t)n->slots[idx].gen << 32) | (uint32_t)idx;
	assert(c->id != 0 && conn_lookup(n, c->id) == c);
	return c->id;
}

void nt_conn_unregister(struct net *n, struct conn *c)
{
	uint32_t idx = (uint32_t)(c->id & 0xffffffffu);

	if (!c->id)
		return;
	if (idx < (uint32_t)n->n_slots && n->slots[idx].c == c) {
		assert(n->n_free < n->cap_slots);
		n->slots[idx].c = NULL;
		n->free_slots[n->n_free++] = (int)idx;
	}
	c->id = 0;
}

/* ---- small helpers ---- */

char *nt_dup_header(struct lws *wsi, enum lws_token_indexes h)
{
	int len = lws_hdr_total_length(wsi, h);
	char *s;

	if (len <= 0 || len > HDR_MAX)
		return NULL;
	s = malloc((size_t)len + 1);
	if (!s)
		return NULL;
	if (lws_hdr_copy(wsi, s, len + 1, h) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

bool nt_origin_allowed(const struct net *n, const char *origin)
{
	if (!origin)
		return true;  /* not a browser: scripts send no Origin */
	for (int i = 0; i < n->cfg.n_origins; i++)
		if (strcmp(n->origins[i], origin) == 0)
			return true;
	return false;
}

/* ---- websockets ---- */

static int on_filter_ws(struct net *n, struct lws *wsi)
{
	char uri[64];
	char *origin;
	bool ok;

	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0 ||
	    lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) < 0 || strcmp(uri, "/ws") != 0) {
		n->stats.ws_rejected++;
		return 1;
	}
	origin = nt_dup_header(wsi, WSI_TOKEN_ORIGIN);
	if (!origin && lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0) {
		n->stats.ws_rejected++;  /* an Origin too long to copy is not allowed */
		return 1;
	}
	ok = nt_origin_allowed(n, origin);
	free(origin);
	if (!ok) {
		n->stats.ws_rejected++;
		return 1;
	}
	return 0;
}

/*
 * Over the connection limit the handshake is completed and the socket
 * closed at once with 1013 (try again later), which a client can tell from
 * a refusal for its Origin; refusing in the filter would leave it only a
 * dropped connection. Such a connection never reaches the layer above.
 */
static int on_ws_established(struct net *n, struct conn *c, struct lws *wsi)
{
	nt_http_reset(n, c);
	memset(c, 0, sizeof(*c));
	c->wsi = wsi;
	c->is_ws = true;
	if (n->cfg.max_connections > 0 && n->stats.ws_clients >= n->cfg.max_connections) {
		c->over_limit = true;
		c->close_code = NET_CLOSE_TRY_AGAIN;
		snprintf(c->close_reason, sizeof(c->close_reason), "too many connections");
		n->stats.ws_rejected++;
		lws_callback_on_writable(wsi);
		return 0;
	}
	if (!nt_conn_register(n, c))
		return -1;
	/* The handshake's headers are still there: keep a script's token. */
	c->ws_auth = nt_dup_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	n->stats.ws_clients++;
	n->stats.ws_opened++;
	if (n->cb.ws_open)
		n->cb.ws_open(n->cb.ctx, c->id);
	return 0;
}

static void ws_release(struct net *n, struct conn *c)
{
	uint64_t id = c->id;

	if (!c->is_ws)
		return;
	c->is_ws = false;
	lws_sul_cancel(&c->resume_sul);
	free(c->rx);
	free(c->tx);
	free(c->batch);
	free(c->ws_auth);
	c->rx = NULL;
	c->tx = NULL;
	c->batch = NULL;
	c->ws_auth = NULL;
	c->rx_cap = c->tx_cap = c->batch_cap = 0;
	if (c->over_limit)
		return;  /* never registered, never counted */
	nt_conn_unregister(n, c);
	n->stats.ws_clients--;
	if (id && n->cb.ws_closed && !n->freeing)
		n->cb.ws_closed(n->cb.ctx, id);
}

/*
 * Sends the close frame and tells lws to finish the connection. lws then
 * waits for the peer's close frame, and during that wait it would still call
 * WRITEABLE: close_sent keeps anything (a "leave" of another client's
 * departure at shutdown, say) from following the close frame, which RFC 6455
 * forbids (browsers log "Data frame received after close").
 */
static int close_now(struct net *n, struct conn *c, int code, const char *reason)
{
	c->close_sent = true;
	lws_close_reason(c->wsi, (enum lws_close_status)code, (unsigned char *)reason,
			 strlen(reason));
	if (code == NET_CLOSE_TOO_BIG)
		n->stats.ws_closed_too_big++;
	return -1;
}

/*
 * close_now() from a WRITEABLE callback. On lws' own loop that is returning
 * -1. On libuv it is not: Debian's libwebsockets 4.1.6 is built with _DEBUG,
 * and then its libuv path closes a connection whose callback returned -1 a
 * second time at once ("uv repeat test" in lws_service_fd_tsi), which kills
 * the connection while it waits to send its close frame: the peer sees 1006
 * instead of our code. So on libuv the close starts here, exactly as lws
 * would start it (the reason set, then lws_close_free_wsi, which sends the
 * close frame at the next POLLOUT and waits for the peer's), and the
 * callback returns 0.
 */
static int close_from_writeable(struct net *n, struct conn *c, int code, const char *reason)
{
	close_now(n, c, code, reason);
	if (!n->uv_loop)
		return -1;
	lws_close_free_wsi(c->wsi, LWS_CLOSE_STATUS_NOSTATUS, "rigd close");
	return 0;
}

static int on_ws_receive(struct net *n, struct conn *c, const void *in, size_t len)
{
	if (!c->is_ws || c->close_code || c->close_sent)
		return 0;
	if (lws_is_first_fragment(c->wsi)) {
		c->rx_len = 0;
		c->rx_chunks = 0;
		c->rx_binary = lws_frame_is_binary(c->wsi);
	}
	n->stats.bytes_received += len;
	if (++c->rx_chunks > n->cfg.max_fragments || len > n->cfg.max_message - c->rx_len)
		return close_now(n, c, NET_CLOSE_TOO_BIG, "message too large");
	if (c->rx_len + len + 1 > c->rx_cap) {
		size_t cap = c->rx_cap ? c->rx_cap : 4096;
		char *b;

		while (cap < c->rx_len + len + 1)
			cap *= 2;
		b = realloc(c->rx, cap);
		if (!b)
			return close_now(n, c, NET_CLOSE_INTERNAL, "out of memory");
		c->rx = b;
		c->rx_cap = cap;
	}
	if (len)
		memcpy(c->rx + c->rx_len, in, len);
	c->rx_len += len;
	c->rx[c->rx_len] = '\0';
	if (!lws_is_final_fragment(c->wsi))
		return 0;

	n->stats.messages_received++;
	if (n->cb.ws_message)
		n->cb.ws_message(n->cb.ctx, c->id, c->rx, c->rx_len, c->rx_binary);
	/* The callback cannot release the connection (net_ws_close only marks
	 * it), so c is still ours. Keep memory flat after a large message. */
	c->rx_len = 0;
	if (c->rx_cap > RX_KEEP) {
		free(c->rx);
		c->rx = NULL;
		c->rx_cap = 0;
	}
	return 0;
}

/*
 * Appends one whole websocket message (RFC 6455 section 5.2: FIN, the
 * opcode, the payload length, no mask from a server) of 'len' bytes to the
 * connection's batch, which holds 'used' bytes. 0, or -1 without memory.
 */
static int batch_append(struct conn *c, size_t used, const char *payload, size_t len,
			bool binary)
{
	unsigned char head[10];
	size_t hl = 2, need = used + sizeof(head) + len;

	head[0] = 0x80 | (binary ? 0x2 : 0x1);
	if (len < 126) {
		head[1] = (unsigned char)len;
	} else if (len <= 0xffff) {
		head[1] = 126;
		head[2] = (unsigned char)(len >> 8);
		head[3] = (unsigned char)len;
		hl = 4;
	} else {
		head[1] = 127;
		for (int i = 0; i < 8; i++)
			head[2 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
		hl = 10;
	}
	if (LWS_PRE + need > c->batch_cap) {
		size_t cap = c->batch_cap ? c->batch_cap : LWS_PRE + 4096;
		unsigned char *b;

		while (cap < LWS_PRE + need)
			cap *= 2;
		if (!(b = realloc(c->batch, cap)))
			return -1;
		c->batch = b;
		c->batch_cap = cap;
	}
	memcpy(c->batch + LWS_PRE + used, head, hl);
	memcpy(c->batch + LWS_PRE + used + hl, payload, len);
	return (int)hl;
}

/*
 * Several frames waiting for one connection (the acks of a turn, say) go out
 * in one socket write rather than one each: a loopback send costs the sender
 * the receiver's TCP work too. The first frame 'frame' (taken) and those
 * that follow it, up to WS_BATCH_MAX bytes, are framed here and written
 * raw (LWS_WRITE_RAW passes whole frames through lws untouched, partial
 * writes included). Only without permessage-deflate, which would have to
 * compress each message: with --deflate on every frame goes through lws.
 * Returns what lws_write returns, with *more set as the callback last set it.
 */
static int write_batch(struct net *n, struct conn *c, char *frame, size_t len, bool binary,
		       bool *more)
{
	size_t used = 0;
	int hl, wrote;

	do {
		hl = batch_append(c, used, frame + LWS_PRE, len, binary);
		free(frame);
		if (hl < 0)
			return -1;
		used += (size_t)hl + len;
		n->stats.bytes_sent += len;
		n->stats.frames_sent++;
		if (!*more || used >= WS_BATCH_MAX)
			break;
		len = 0;
		binary = false;
		frame = n->cb.ws_writable(n->cb.ctx, c->id, &len, more, &binary);
	} while (frame);
	wrote = lws_write(c->wsi, c->batch + LWS_PRE, used, LWS_WRITE_RAW);
	if (c->batch_cap > LWS_PRE + RX_KEEP) {
		free(c->batch);
		c->batch = NULL;
		c->batch_cap = 0;
	}
	return wrote < (int)used ? -1 : 0;
}

static int on_ws_writeable(struct net *n, struct conn *c)
{
	char *frame;
	size_t len = 0;
	bool more = false, binary = false;
	int wrote;

	if (!c->is_ws || c->close_sent)
		return 0;
	if (c->close_code && (!c->close_after_flush || c->over_limit))
		return close_from_writeable(n, c, c->close_code, c->close_reason);
	frame = n->cb.ws_writable ? n->cb.ws_writable(n->cb.ctx, c->id, &len, &more, &binary) : NULL;
	if (!frame) {
		if (c->close_code)
			return close_from_writeable(n, c, c->close_code, c->close_reason);
		if (more)
			lws_callback_on_writable(c->wsi);
		return 0;
	}
	if (more && !n->cfg.deflate) {
		if (write_batch(n, c, frame, len, binary, &more) < 0)
			return -1;
	} else {
		/* lws frames the text in the LWS_PRE bytes before it, and
		 * keeps its own copy of whatever the socket does not take at
		 * once. */
		wrote = lws_write(c->wsi, (unsigned char *)frame + LWS_PRE, len,
				  binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
		free(frame);
		if (wrote < (int)len)
			return -1;
		n->stats.bytes_sent += len;
		n->stats.frames_sent++;
	}
	if (more || c->close_code)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* ---- the protocol callback ---- */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		    void *in, size_t len)
{
	struct net *n = nt_net_of(wsi);
	struct conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!c)
			return -1;
		return nt_on_http(n, c, wsi, in);
	case LWS_CALLBACK_HTTP_BODY:
		return c ? nt_on_http_body(n, c, in, len) : -1;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return c ? nt_on_http_body_done(n, c) : -1;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? nt_on_http_writeable(n, c) : -1;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		/* The client left (or the connection changes protocol): drop
		 * the request, its body and any unsent answer. */
		if (c && !c->is_ws)
			nt_http_reset(n, c);
		return 0;

	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (c)
			nt_http_reset(n, c);
		return on_filter_ws(n, wsi);
	case LWS_CALLBACK_ESTABLISHED:
		return c ? on_ws_established(n, c, wsi) : -1;
	case LWS_CALLBACK_RECEIVE:
		return c ? on_ws_receive(n, c, in, len) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c ? on_ws_writeable(n, c) : -1;
	case LWS_CALLBACK_CLOSED:
		if (c)
			ws_release(n, c);
		return 0;
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		return 0;  /* lws echoes the close frame */
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		/* lws_cancel_service, from this thread (net_schedule_turn on
		 * libuv) or another (net_wake_from_thread). */
		if (n)
			nt_on_wait_cancelled(n);
		return 0;
	default:
		return 0;
	}
}

/* ---- public ---- */

size_t net_frame_head(void)
{
	return LWS_PRE;
}

void net_config_defaults(net_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "127.0.0.1";
	cfg->port = 8080;
	cfg->max_message = 1u << 20;
	cfg->max_fragments = 4096;
	cfg->max_body = 8u << 20;
	cfg->idle_timeout_s = 60;
	cfg->max_connections = 1024;
	cfg->log_level = 0;
}

static void lws_log_quiet(int level, const char *line)
{
	fprintf(stderr, "lws: %s", line);
}

/* The lws context: explicit vhosts, UTF-8 checked, 'n' as its user data.
 * 0, or -1 with the reason on stderr. */
static int create_context(struct net *n)
{
	struct lws_context_creation_info info;

	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_VALIDATE_UTF8 |
		       LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	/* On libuv, the loop is net's and lws joins it as a "foreign" loop
	 * (its event-lib plugin, which lws loads, runs its sockets and timers
	 * on it); net_run turns it, and others may add handles to it. The
	 * plugin's lws_uv_getloop is not in libwebsockets.so, hence the loop
	 * is made here rather than taken from lws. */
	if (n->cfg.libuv) {
		if (!(n->uv_loop = malloc(sizeof(*n->uv_loop))) || uv_loop_init(n->uv_loop) != 0) {
			free(n->uv_loop);
			n->uv_loop = NULL;
			fprintf(stderr, "rigd: cannot make a libuv loop\n");
			return -1;
		}
		n->foreign_loops[0] = n->uv_loop;
		info.foreign_loops = n->foreign_loops;
		info.options |= LWS_SERVER_OPTION_LIBUV;
		/* lws NULLs this once the context is wholly destroyed. */
		info.pcontext = &n->ctx;
	}
	if (n->tls_cert)
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	if (!strchr(n->host, ':'))
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	info.user = n;
	info.gid = -1;
	info.uid = -1;
	info.server_string = "rigd";
	n->ctx = lws_create_context(&info);
	if (!n->ctx) {
		fprintf(stderr, "rigd: cannot create the libwebsockets context%s\n",
			n->cfg.libuv ? " on libuv (is libwebsockets' libuv event-lib plugin, "
				       "libwebsockets-evlib-uv, installed?)" : "");
		return -1;
	}

	return 0;
}

/*
 * The websocket extensions the vhost accepts when cfg.deflate is on: RFC 7692
 * permessage-deflate, libwebsockets' own. It is negotiated only with a client
 * that offers it, and then applies to every message of that connection (lws
 * 4.1 has no per-write opt-out), so a binary subscriber that wants its frames
 * as they are simply does not offer it. The offer string is for clients; the
 * server answers with the parameters the client offered.
 */
static const struct lws_extension deflate_extensions[] = {
	{"permessage-deflate", lws_extension_callback_pm_deflate,
	 "permessage-deflate; client_no_context_takeover; client_max_window_bits"},
	{NULL, NULL, NULL},
};

/* The one vhost: listens on cfg.host:cfg.port (TLS when a certificate
 * was given) with the rigd protocol, and permessage-deflate when cfg.deflate.
 * 0, or -1 with the reason on stderr. */
static int create_vhost(struct net *n)
{
	struct lws_context_creation_info info;
	const net_config *cfg = &n->cfg;

	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	if (n->tls_cert)  /* lws reads it per vhost too: without it, no TLS */
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	if (!strchr(n->host, ':'))
		info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
	info.vhost_name = "rigd";
	info.iface = n->host;
	info.port = cfg->port;
	info.protocols = n->protocols;
	info.user = n;
	info.gid = -1;
	info.uid = -1;
	info.keepalive_timeout = 30;
	info.timeout_secs = 30;
	if (cfg->deflate)
		info.extensions = deflate_extensions;
	if (cfg->idle_timeout_s > 0)
		info.retry_and_idle_policy = &n->retry;
	if (n->tls_cert) {
		/* lws (OpenSSL) reads both files here and refuses a key that does
		 * not match the certificate: the vhost then fails. */
		info.ssl_cert_filepath = n->tls_cert;
		info.ssl_private_key_filepath = n->tls_key;
	}
	n->vh = lws_create_vhost(n->ctx, &info);
	if (!n->vh) {
		if (n->tls_cert)
			fprintf(stderr, "rigd: cannot listen on %s:%d with TLS (certificate %s, "
				"key %s: readable, PEM, matching?)\n", n->host, cfg->port,
				n->tls_cert, n->tls_key);
		else
			fprintf(stderr, "rigd: cannot listen on %s:%d\n", n->host, cfg->port);
		return -1;
	}
	return 0;
}

net *net_new(const net_config *cfg, const net_callbacks *cb)
{
	static const int levels[] = {LLL_ERR, LLL_ERR | LLL_WARN, LLL_ERR | LLL_WARN | LLL_NOTICE,
				     LLL_ERR | LLL_WARN | LLL_NOTICE | LLL_INFO};
	struct net *n = calloc(1, sizeof(*n));
	int lvl;

	if (!n)
		return NULL;
	n->cfg = *cfg;
	n->cb = *cb;
	n->host = strdup(cfg->host ? cfg->host : "127.0.0.1");
	n->origins = calloc((size_t)cfg->n_origins + 1, sizeof(char *));
	if (!n->host || !n->origins)
		goto fail;
	for (int i = 0; i < cfg->n_origins; i++)
		if (!(n->origins[i] = strdup(cfg->origins[i])))
			goto fail;
	n->cfg.host = n->host;
	n->cfg.origins = NULL;
	n->cfg.web_root = NULL;
	n->cfg.tls_cert = n->cfg.tls_key = NULL;
	if (cfg->tls_cert && cfg->tls_key &&
	    (!(n->tls_cert = strdup(cfg->tls_cert)) || !(n->tls_key = strdup(cfg->tls_key))))
		goto fail;
	if (!(n->csp = nt_build_csp(cfg->web_root)))
		goto fail;
	if (n->cfg.max_fragments <= 0)
		n->cfg.max_fragments = 4096;

	if (cfg->web_root && nt_static_roots(n, cfg->web_root) != 0)
		goto fail;

	lvl = cfg->log_level < 0 ? 0 : cfg->log_level > 3 ? 3 : cfg->log_level;
	lws_set_log_level(levels[lvl], lws_log_quiet);

	n->protocols[0].name = "rigd";
	n->protocols[0].callback = callback;
	n->protocols[0].per_session_data_size = sizeof(struct conn);
	n->protocols[0].rx_buffer_size = RX_CHUNK;
	n->protocols[1].name = "rigd-timer";
	n->protocols[1].callback = nt_timer_callback;
	n->later_fd = -1;

	/* lws pings a websocket idle for half the timeout and hangs up on one
	 * that has shown no sign of life (data or pong) for all of it. */
	if (cfg->idle_timeout_s > 0) {
		int ping = cfg->idle_timeout_s / 2 > 0 ? cfg->idle_timeout_s / 2 : 1;
		n->retry.secs_since_valid_ping = (uint16_t)ping;
		n->retry.secs_since_valid_hangup = (uint16_t)(cfg->idle_timeout_s > ping ?
							       cfg->idle_timeout_s : ping + 1);
	}

	if (create_context(n) != 0 || create_vhost(n) != 0)
		goto fail;
	n->port = lws_get_vhost_listen_port(n->vh);
	nt_timers_start(n);
	return n;
fail:
	net_free(n);
	return NULL;
}

void net_free(net *n)
{
	if (!n)
		return;
	n->freeing = true;
	if (n->ctx) {
		nt_timers_cancel(n);
		lws_context_destroy(n->ctx);
	}
	if (n->uv_loop) {
		/* lws closes its handles on the loop: run it until they have
		 * (every other user closed its own before). On a foreign loop
		 * lws finishes destroying the context only when told again
		 * after that (its context.c: destroy, 2 and 3); it then NULLs
		 * n->ctx through info.pcontext. Then close the loop. */
		uv_run(n->uv_loop, UV_RUN_DEFAULT);
		if (n->ctx)
			lws_context_destroy(n->ctx);
		uv_run(n->uv_loop, UV_RUN_DEFAULT);
		if (uv_loop_close(n->uv_loop) != 0)
			fprintf(stderr, "rigd: the libuv loop still had handles at exit\n");
		free(n->uv_loop);
	}
	for (int i = 0; i < n->n_roots; i++)
		free(n->roots[i].dir);
	if (n->origins)
		for (int i = 0; i < n->cfg.n_origins; i++)
			free(n->origins[i]);
	free(n->origins);
	free(n->host);
	free(n->csp);
	free(n->tls_cert);
	free(n->tls_key);
	free(n->slots);
	free(n->free_slots);
	free(n);
}

int net_add_origin(net *n, const char *origin)
{
	char **o = realloc(n->origins, ((size_t)n->cfg.n_origins + 2) * sizeof(char *));

	if (!o)
		return RIGD_E_NOMEM;
	n->origins = o;
	if (!(o[n->cfg.n_origins] = strdup(origin)))
		return RIGD_E_NOMEM;
	n->cfg.n_origins++;
	o[n->cfg.n_origins] = NULL;
	return 0;
}

int net_port(const net *n)
{
	return n->port;
}

bool net_tls(const net *n)
{
	return n->tls_cert != NULL;
}

const char *net_ws_authorization(const net *n, uint64_t conn)
{
	const struct conn *c = conn_lookup(n, conn);

	return c && c->is_ws ? c->ws_auth : NULL;
}

/*
 * One pass of the loop: waits for events (up to 'timeout_ms' on lws' own
 * loop; on libuv until the next event, and a timer fires every second) and
 * handles them. lws_service on libuv would run the loop until uv_stop, which
 * a signal handler cannot call, so the loop is turned here one pass at a time
 * and net_stop's lws_cancel_service ends the pass. 0 or -1.
 */
static int service_once(struct net *n, int timeout_ms)
{
	if (n->uv_loop) {
		uv_run(n->uv_loop, UV_RUN_ONCE);
		return 0;
	}
	return lws_service(n->ctx, timeout_ms) < 0 ? -1 : 0;
}

int net_run(net *n)
{
	while (!n->stop)
		if (service_once(n, 0) < 0)
			return RIGD_E_IO;
	return 0;
}

void *net_event_loop(const net *n)
{
	return n->uv_loop;
}

void net_stop(net *n)
{
	n->stop = 1;
	lws_cancel_service(n->ctx);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void net_drain(net *n, int code, int timeout_ms)
{
	uint64_t deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);

	for (int i = 0; i < n->n_slots; i++) {
		struct conn *c = n->slots[i].c;

		if (c && c->is_ws && !c->close_code && !c->close_sent) {
			c->close_code = code;
			c->close_after_flush = true;
			snprintf(c->close_reason, sizeof(c->close_reason), "%s",
				 code == NET_CLOSE_GOING_AWAY ? "server shutting down" : "closing");
			lws_callback_on_writable(c->wsi);
		}
	}
	while ((n->stats.ws_clients > 0 || n->http_responding > 0) && now_ms() < deadline)
		if (service_once(n, 50) < 0)
			break;
}

int net_ws_wake(net *n, uint64_t conn)
{
	struct conn *c = conn_lookup(n, conn);

	if (!c || !c->is_ws || c->close_sent)
		return RIGD_E_NOT_FOUND;
	lws_callback_on_writable(c->wsi);
	return 0;
}

static void resume_cb(lws_sorted_usec_list_t *sul)
{
	struct conn *c = lws_container_of(sul, struct conn, resume_sul);

	if (c->is_ws && c->rx_paused) {
		c->rx_paused = false;
		if (!c->rx_held)
			lws_rx_flow_control(c->wsi, 1);
	}
}

int net_ws_hold(net *n, uint64_t conn, bool hold)
{
	struct conn *c = conn_lookup(n, conn);

	if (!c || !c->is_ws || c->close_sent)
		return RIGD_E_NOT_FOUND;
	if (c->rx_held == hold)
		return 0;
	c->rx_held = hold;
	if (!c->rx_paused)
		lws_rx_flow_control(c->wsi, hold ? 0 : 1);
	return 0;
}

int net_ws_gather(net *n, uint64_t conn, bool gather)
{
	struct conn *c = conn_lookup(n, conn);
	int lowat = gather ? NET_GATHER_BYTES : 1;
	lws_sockfd_type fd;

	if (!c || !c->is_ws || c->close_sent)
		return RIGD_E_NOT_FOUND;
	if (c->rx_gather == gather)
		return 0;
	c->rx_gather = gather;
	fd = lws_get_socket_fd(c->wsi);
	/* A socket that refuses the mark (not TCP) only wakes the loop as before. */
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
	return 0;
}

int net_ws_pause_for(net *n, uint64_t conn, int ms)
{
	struct conn *c = conn_lookup(n, conn);

	if (!c || !c->is_ws || c->close_sent)
		return RIGD_E_NOT_FOUND;
	if (!c->rx_paused) {
		c->rx_paused = true;
		if (!c->rx_held)
			lws_rx_flow_control(c->wsi, 0);
	}
	lws_sul_schedule(n->ctx, 0, &c->resume_sul, resume_cb,
			 (lws_usec_t)(ms > 0 ? ms : 1) * 1000);
	return 0;
}

int net_ws_close(net *n, uint64_t conn, int code, const char *reason)
{
	struct conn *c = conn_lookup(n, conn);

	if (!c || !c->is_ws)
		return RIGD_E_NOT_FOUND;
	if (!c->close_code) {
		c->close_code = code;
		snprintf(c->close_reason, sizeof(c->close_reason), "%s", reason ? reason : "");
	}
	lws_callback_on_writable(c->wsi);
	return 0;
}

/* The HTTP connection 'conn' if it may be answered now (*rc 0); else NULL
 * with *rc RIGD_E_NOT_FOUND (gone, or a websocket) or RIGD_E_INTERNAL
 * (answered already), and 'body' freed. */
static struct conn *answerable(net *n, uint64_t conn, char *body, int *rc)
{
	struct conn *c = conn_lookup(n, conn);

	*rc = !c || c->is_ws ? RIGD_E_NOT_FOUND : c->responding ? RIGD_E_INTERNAL : 0;
	if (*rc) {
		free(body);
		return NULL;
	}
	return c;
}

int net_http_respond(net *n, uint64_t conn, int status, const char *content_type,
		     char *body, size_t len)
{
	int rc;
	struct conn *c = answerable(n, conn, body, &rc);

	if (c)
		nt_respond(n, c, status, content_type, body, body ? len : 0);
	return rc;
}

int net_http_respond_doc(net *n, uint64_t conn, const char *content_type, char *body,
			 size_t len, const char *csp, const char *etag)
{
	int rc;
	struct conn *c = answerable(n, conn, body, &rc);

	if (!c)
		return rc;
	c->resp_csp = csp;
	c->cacheable = true;
	snprintf(c->etag, sizeof(c->etag), "%s", etag ? etag : "");
	nt_respond(n, c, 200, content_type, body, body ? len : 0);
	return 0;
}

int net_http_respond_download(net *n, uint64_t conn, const char *content_type, char *body,
			      size_t len, const char *disposition)
{
	int rc;
	struct conn *c = answerable(n, conn, body, &rc);

	if (!c)
		return rc;
	free(c->disposition);
	if (!(c->disposition = strdup(disposition))) {
		free(body);
		return RIGD_E_NOMEM;
	}
	nt_respond(n, c, 200, content_type, body, body ? len : 0);
	return 0;
}

void net_get_stats(const net *n, net_stats *out)
{
	*out = n->stats;
}
