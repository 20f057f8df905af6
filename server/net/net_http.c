/*
 * net_http.c: HTTP requests and responses on libwebsockets: a request's
 * headers, query arguments and body (capped by Content-Length and
 * max_body), handed up through net_callbacks.http, and the response
 * written one chunk per WRITEABLE callback, with the security headers on
 * every answer.
 *
 * Never parses a body: it goes up as bytes.
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
#include <sys/stat.h>
#include <unistd.h>

void nt_http_reset(struct net *n, struct conn *c)
{
	nt_conn_unregister(n, c);
	free(c->path);
	free(c->argbuf);
	free(c->origin);
	free(c->authorization);
	free(c->content_type);
	free(c->if_none_match);
	free(c->disposition);
	free(c->body);
	free(c->resp_body);
	free(c->tx);
	c->tx = NULL;
	c->tx_cap = 0;
	if (c->fd > 0)
		close(c->fd - 1);
	if (c->responding && n->http_responding > 0)
		n->http_responding--;
	c->path = c->argbuf = c->origin = c->authorization = c->content_type = NULL;
	c->if_none_match = c->disposition = NULL;
	c->body = c->resp_body = NULL;
	c->body_len = c->body_expected = 0;
	c->n_args = 0;
	c->awaiting_body = c->dispatched = false;
	c->responding = c->headers_sent = c->head_only = c->close_after = false;
	c->cacheable = c->vendor = false;
	c->etag[0] = '\0';
	c->resp_csp = NULL;
	c->resp_len = c->resp_off = 0;
	c->fd = 0;
	c->file_left = 0;
}

/* Starts a response held in memory; takes ownership of 'body'. */
void nt_respond(struct net *n, struct conn *c, int status, const char *type, char *body,
		size_t len)
{
	c->responding = true;
	n->http_responding++;
	c->status = status;
	snprintf(c->resp_type, sizeof(c->resp_type), "%s", type ? type : "application/octet-stream");
	c->resp_body = body;
	c->resp_len = len;
	c->resp_off = 0;
	lws_callback_on_writable(c->wsi);
}

/* net's own error answers, in the API's error shape (docs/protocol.md). */
void nt_respond_error(struct net *n, struct conn *c, int status, int err)
{
	char buf[256];
	int len = snprintf(buf, sizeof(buf), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
			   err_code(err), err_str(err));
	char *body = malloc((size_t)len + 1);

	if (body)
		memcpy(body, buf, (size_t)len + 1);
	nt_respond(n, c, status, "application/json", body, body ? (size_t)len : 0);
}

/* ---- HTTP ---- */

static void dispatch_http(struct net *n, struct conn *c)
{
	net_request req;
	const char *a;

	c->dispatched = true;
	n->stats.http_requests++;
	memset(&req, 0, sizeof(req));
	req.conn = c->id;
	req.method = c->method;
	req.path = c->path;
	a = c->argbuf;
	for (int i = 0; i < c->n_args; i++) {
		req.args[i] = a;
		a += strlen(a) + 1;
	}
	req.n_args = c->n_args;
	req.origin = c->origin;
	req.authorization = c->authorization;
	req.content_type = c->content_type;
	req.body = c->body ? c->body : "";
	req.body_len = c->body_len;

	if (!nt_origin_allowed(n, c->origin) && strncmp(c->path, "/api/", 5) == 0) {
		/* A page of another site may not drive the API (CSRF). */
		nt_respond_error(n, c, 403, RIGD_E_FORBIDDEN);
		return;
	}
	if (n->cb.http && n->cb.http(n->cb.ctx, &req))
		return;
	if (c->responding)
		return;
	if (c->method == NET_GET || c->method == NET_HEAD)
		nt_serve_static(n, c);
	else
		nt_respond_error(n, c, 404, RIGD_E_NOT_FOUND);
}

static int method_of(struct lws *wsi)
{
	char *uri;
	int len;

	switch (lws_http_get_uri_and_method(wsi, &uri, &len)) {
	case LWSHUMETH_GET: return NET_GET;
	case LWSHUMETH_HEAD: return NET_HEAD;
	case LWSHUMETH_POST: return NET_POST;
	case LWSHUMETH_PUT: return NET_PUT;
	case LWSHUMETH_PATCH: return NET_PATCH;
	case LWSHUMETH_DELETE: return NET_DELETE;
	case LWSHUMETH_OPTIONS: return NET_OPTIONS;
	default: return NET_OTHER;
	}
}

/* Copies the query arguments, URL-decoded by lws, one NUL-terminated
 * "name=value" after the other. */
static int copy_args(struct conn *c)
{
	char frag[HDR_MAX];
	size_t used = 0, cap = 0;
	char *buf = NULL;

	for (int i = 0; i < NET_MAX_ARGS; i++) {
		int len = lws_hdr_copy_fragment(c->wsi, frag, sizeof(frag), WSI_TOKEN_HTTP_URI_ARGS, i);
		if (len < 0)
			break;
		if (used + (size_t)len + 1 > cap) {
			size_t ncap = cap ? cap * 2 : 256;
			char *nb;

			while (ncap < used + (size_t)len + 1)
				ncap *= 2;
			nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return RIGD_E_NOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		memcpy(buf + used, frag, (size_t)len);
		buf[used + (size_t)len] = '\0';
		used += (size_t)len + 1;
		c->n_args++;
	}
	c->argbuf = buf;
	return 0;
}

int nt_on_http(struct net *n, struct conn *c, struct lws *wsi, const char *uri)
{
	char *cl;

	nt_http_reset(n, c);
	c->wsi = wsi;
	if (!nt_conn_register(n, c))
		return -1;
	c->method = method_of(wsi);
	c->head_only = c->method == NET_HEAD;
	c->path = strdup(uri ? uri : "/");
	c->origin = nt_dup_header(wsi, WSI_TOKEN_ORIGIN);
	c->authorization = nt_dup_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	c->content_type = nt_dup_header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE);
	c->if_none_match = nt_dup_header(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH);
	if (!c->path || copy_args(c) != 0)
		return -1;

	if (c->method == NET_POST || c->method == NET_PUT || c->method == NET_PATCH) {
		unsigned long long expected;
		char *end;

		cl = nt_dup_header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);
		if (!cl) {
			/* Without a length the body cannot be told from the next
			 * request: refuse and close (411 Length Required). */
			c->close_after = true;
			nt_respond_error(n, c, 411, RIGD_E_BAD_FIELD);
			return 0;
		}
		errno = 0;
		expected = strtoull(cl, &end, 10);
		if (errno || end == cl || *end) {
			free(cl);
			c->close_after = true;
			nt_respond_error(n, c, 400, RIGD_E_BAD_FIELD);
			return 0;
		}
		free(cl);
		if (expected > n->cfg.max_body) {
			c->close_after = true;
			nt_respond_error(n, c, 413, RIGD_E_TOO_LARGE);
			return 0;
		}
		if (expected > 0) {
			c->body = malloc((size_t)expected + 1);
			if (!c->body)
				return -1;
			c->body[0] = '\0';
			c->body_expected = (size_t)expected;
			c->awaiting_body = true;
			return 0;
		}
	}
	dispatch_http(n, c);
	return 0;
}

int nt_on_http_body(struct net *n, struct conn *c, const void *in, size_t len)
{
	if (!c->awaiting_body)
		return 0;  /* a body we refused before reading it: drop it */
	n->stats.bytes_received += len;
	if (c->body_len + len > c->body_expected)
		return -1; /* more than Content-Length: not HTTP */
	memcpy(c->body + c->body_len, in, len);
	c->body_len += len;
	c->body[c->body_len] = '\0';
	return 0;
}

int nt_on_http_body_done(struct net *n, struct conn *c)
{
	if (!c->awaiting_body)
		return 0;
	c->awaiting_body = false;
	dispatch_http(n, c);
	return 0;
}

static int finish_response(struct net *n, struct conn *c)
{
	bool close_after = c->close_after;

	nt_http_reset(n, c);
	if (close_after)
		return -1;
	if (lws_http_transaction_completed(c->wsi))
		return -1;
	return 0;
}

static int add_header(struct lws *wsi, const char *name, const char *value,
		      unsigned char **p, unsigned char *end)
{
	return lws_add_http_header_by_name(wsi, (const unsigned char *)name,
					   (const unsigned char *)value, (int)strlen(value), p, end);
}

/* Writes the response's status line and headers (the security headers on
 * every answer), then finishes a response without a body or asks for the
 * next callback. 0, or -1 to close. */
static int write_headers(struct net *n, struct conn *c)
{
	unsigned char hbuf[LWS_PRE + 4096];
	unsigned char *start = hbuf + LWS_PRE, *p = start, *end = hbuf + sizeof(hbuf) - 1;
	bool not_modified = c->status == 304;
	/* Files are revalidated with their ETag on every use, except the
	 * vendored three.js build, which changes only with an upgrade. */
	const char *cache = !c->cacheable ? "no-store"
			    : c->vendor   ? "public, max-age=604800"
					  : "no-cache";

	/* A 304 has neither body nor Content-Type (RFC 9110, 15.4.5). */
	if ((not_modified ? lws_add_http_header_status(c->wsi, 304, &p, end)
			  : lws_add_http_common_headers(c->wsi, (unsigned)c->status,
							c->resp_type,
							(lws_filepos_t)c->resp_len,
							&p, end)) ||
	    add_header(c->wsi, "x-content-type-options:", "nosniff", &p, end) ||
	    add_header(c->wsi, "referrer-policy:", "no-referrer", &p, end) ||
	    add_header(c->wsi, "content-security-policy:", c->resp_csp ? c->resp_csp : n->csp,
		       &p, end) ||
	    add_header(c->wsi, "x-frame-options:", "DENY", &p, end) ||
	    add_header(c->wsi, "cache-control:", cache, &p, end) ||
	    (c->etag[0] && add_header(c->wsi, "etag:", c->etag, &p, end)) ||
	    (c->disposition && add_header(c->wsi, "content-disposition:", c->disposition, &p, end)) ||
	    (c->status == 401 && add_header(c->wsi, "www-authenticate:",
					    "Bearer realm=\"rigd\"", &p, end)) ||
	    (n->tls_cert && add_header(c->wsi, "strict-transport-security:",
				       "max-age=31536000", &p, end)) ||
	    (c->close_after && add_header(c->wsi, "connection:", "close", &p, end)))
		return -1;
	if (lws_finalize_write_http_header(c->wsi, start, &p, end))
		return -1;
	c->headers_sent = true;
	if (c->head_only || not_modified || (c->resp_len == 0 && c->file_left == 0))
		return finish_response(n, c);
	lws_callback_on_writable(c->wsi);
	return 0;
}

/* Writes one chunk of the body, from the file or from memory, and
 * finishes the response after the last. 0, or -1 to close. */
static int write_body_chunk(struct net *n, struct conn *c)
{
	size_t chunk;
	bool last;
	int wrote;

	if (!c->tx || c->tx_cap < LWS_PRE + TX_CHUNK) {
		unsigned char *t = realloc(c->tx, LWS_PRE + TX_CHUNK);
		if (!t)
			return -1;
		c->tx = t;
		c->tx_cap = LWS_PRE + TX_CHUNK;
	}
	if (c->fd > 0) {
		ssize_t got;

		chunk = c->file_left < TX_CHUNK ? (size_t)c->file_left : TX_CHUNK;
		got = read(c->fd - 1, c->tx + LWS_PRE, chunk);
		if (got <= 0)
			return -1;  /* the file shrank under us: cut the response */
		chunk = (size_t)got;
		c->file_left -= chunk;
		last = c->file_left == 0;
	} else {
		chunk = c->resp_len - c->resp_off;
		if (chunk > TX_CHUNK)
			chunk = TX_CHUNK;
		memcpy(c->tx + LWS_PRE, c->resp_body + c->resp_off, chunk);
		c->resp_off += chunk;
		last = c->resp_off == c->resp_len;
	}
	wrote = lws_write(c->wsi, c->tx + LWS_PRE, chunk,
			  last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP);
	if (wrote < (int)chunk)
		return -1;
	n->stats.bytes_sent += chunk;
	if (last)
		return finish_response(n, c);
	lws_callback_on_writable(c->wsi);
	return 0;
}

int nt_on_http_writeable(struct net *n, struct conn *c)
{
	if (!c->responding)
		return 0;
	if (!c->headers_sent)
		return write_headers(n, c);
	return write_body_chunk(n, c);
}
