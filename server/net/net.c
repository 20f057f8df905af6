/*
 * net.c: HTTP and websockets on libwebsockets 4.1.6 (see net.h).
 *
 * The only file of the server that includes libwebsockets.h. It follows the
 * minimal ws-server examples and README.coding.md: one thread runs
 * lws_service; bytes are written only from the WRITEABLE callbacks, one
 * lws_write per callback, asking for another while more is queued; closing
 * is returning -1. Websocket messages are reassembled here with a cap on the
 * total size and on the number of receive chunks (rx_buffer_size is a chunk
 * size, not a limit). LWS_CALLBACK_HTTP_CONFIRM_UPGRADE is deliberately not
 * handled (CVE-2025-11677 sits behind it in 4.1.6); the upgrade is filtered in
 * LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION instead.
 *
 * It never parses JSON or touches a scene: requests and messages go up
 * through struct net_callbacks as bytes.
 */
#include "net.h"

#include "core/err.h"
#include "core/sha256.h"

#include <libwebsockets.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RX_CHUNK 16384            /* lws receive chunk per connection, bytes */
#define TX_CHUNK 65536            /* HTTP body bytes per lws_write */
#define RX_KEEP 65536             /* reassembly buffer kept between messages */
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
	int close_code;               /* non-zero: close at next writable */
	bool close_after_flush;       /* ...once the callbacks have nothing more */
	bool close_sent;              /* the close frame is out: never write again */
	bool over_limit;              /* accepted beyond max_connections: 1013 */
	char *ws_auth;                /* the handshake's Authorization, or NULL */
	bool rx_paused;               /* reading stopped by net_ws_pause_for */
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
	char etag[64];                /* static file: its validator, or "" */
	char *if_none_match;          /* the request's If-None-Match, or NULL */
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
	struct lws_protocols protocols[2];
	lws_retry_bo_t retry;
	struct static_root roots[3];
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
	lws_sorted_usec_list_t tick_sul;

	volatile sig_atomic_t stop;
	bool freeing;
	long http_responding;         /* responses started but not finished */
	net_stats stats;
};

/* ---- connection ids ---- */

static uint64_t conn_register(struct net *n, struct conn *c)
{
	int idx;

	if (n->n_free > 0) {
		idx = n->free_slots[--n->n_free];
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
	return c->id;
}

static void conn_unregister(struct net *n, struct conn *c)
{
	uint32_t idx = (uint32_t)(c->id & 0xffffffffu);

	if (!c->id)
		return;
	if (idx < (uint32_t)n->n_slots && n->slots[idx].c == c) {
		n->slots[idx].c = NULL;
		n->free_slots[n->n_free++] = (int)idx;
	}
	c->id = 0;
}

static struct conn *conn_lookup(const struct net *n, uint64_t id)
{
	uint32_t idx = (uint32_t)(id & 0xffffffffu);
	uint32_t gen = (uint32_t)(id >> 32);

	if (idx >= (uint32_t)n->n_slots || n->slots[idx].gen != gen)
		return NULL;
	return n->slots[idx].c;
}

/* ---- small helpers ---- */

static struct net *net_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

static char *dup_header(struct lws *wsi, enum lws_token_indexes h)
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

static void http_reset(struct net *n, struct conn *c)
{
	conn_unregister(n, c);
	free(c->path);
	free(c->argbuf);
	free(c->origin);
	free(c->authorization);
	free(c->content_type);
	free(c->if_none_match);
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
	c->if_none_match = NULL;
	c->body = c->resp_body = NULL;
	c->body_len = c->body_expected = 0;
	c->n_args = 0;
	c->awaiting_body = c->dispatched = false;
	c->responding = c->headers_sent = c->head_only = c->close_after = false;
	c->cacheable = c->vendor = false;
	c->etag[0] = '\0';
	c->resp_len = c->resp_off = 0;
	c->fd = 0;
	c->file_left = 0;
}

static bool origin_allowed(const struct net *n, const char *origin)
{
	if (!origin)
		return true;  /* not a browser: scripts send no Origin */
	for (int i = 0; i < n->cfg.n_origins; i++)
		if (strcmp(n->origins[i], origin) == 0)
			return true;
	return false;
}

/* Starts a response held in memory; takes ownership of 'body'. */
static void respond(struct net *n, struct conn *c, int status, const char *type,
		    char *body, size_t len)
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
static void respond_error(struct net *n, struct conn *c, int status, int err)
{
	char buf[256];
	int len = snprintf(buf, sizeof(buf), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
			   err_code(err), err_str(err));
	char *body = malloc((size_t)len + 1);

	if (body)
		memcpy(body, buf, (size_t)len + 1);
	respond(n, c, status, "application/json", body, body ? (size_t)len : 0);
}

/* ---- static files ---- */

static const struct {
	const char *ext;
	const char *type;
} mime_types[] = {
	{".html", "text/html; charset=utf-8"},
	{".htm", "text/html; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".mjs", "text/javascript; charset=utf-8"},
	{".css", "text/css; charset=utf-8"},
	{".json", "application/json"},
	{".map", "application/json"},
	{".txt", "text/plain; charset=utf-8"},
	{".md", "text/plain; charset=utf-8"},
	{".svg", "image/svg+xml"},
	{".png", "image/png"},
	{".jpg", "image/jpeg"},
	{".jpeg", "image/jpeg"},
	{".gif", "image/gif"},
	{".webp", "image/webp"},
	{".ico", "image/x-icon"},
	{".wasm", "application/wasm"},
	{".gltf", "model/gltf+json"},
	{".glb", "model/gltf-binary"},
	{".bin", "application/octet-stream"},
	{".ktx2", "image/ktx2"},
	{".woff2", "font/woff2"},
	{".woff", "font/woff"},
};

static const char *mime_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');

	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof(mime_types) / sizeof(mime_types[0]); i++)
			if (strcasecmp(dot, mime_types[i].ext) == 0)
				return mime_types[i].type;
	return "application/octet-stream";
}

/*
 * True when 'rel' (a URL path below a root, without the leading '/') is safe
 * to join to a directory: no empty, "." or ".." segment, no hidden segment,
 * no backslash or control byte, and, where the root asks for it, no
 * node_modules at the top.
 */
static bool rel_path_ok(const char *rel, bool deny_private)
{
	const char *seg = rel;

	for (const char *p = rel; *p; p++)
		if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	while (*seg) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);

		if (len == 0 && end)
			return false;          /* "//" */
		if (len > 0 && seg[0] == '.')
			return false;          /* ".", "..", ".git", ... */
		if (deny_private && seg == rel && len == 12 && strncmp(seg, "node_modules", 12) == 0)
			return false;
		if (!end)
			break;
		seg = end + 1;
	}
	return true;
}

/* Opens the file a GET names, or returns false (the caller answers 404). */
static bool open_static(struct net *n, const char *path, int *fd_out, uint64_t *size_out,
			const char **type_out)
{
	char joined[PATH_MAX], real[PATH_MAX];
	const struct static_root *root = NULL;
	const char *rel;
	struct stat st;
	size_t dlen;
	int fd, len;

	for (int i = 0; i < n->n_roots; i++) {
		size_t plen = strlen(n->roots[i].url_prefix);

		if (n->roots[i].dir && strncmp(path, n->roots[i].url_prefix, plen) == 0) {
			root = &n->roots[i];
			break;
		}
	}
	if (!root)
		return false;
	rel = path + strlen(root->url_prefix);
	if (!rel_path_ok(rel, root->deny_private))
		return false;
	len = snprintf(joined, sizeof(joined), "%s/%s%s", root->dir, rel,
		       (*rel == '\0' || rel[strlen(rel) - 1] == '/') ? "index.html" : "");
	if (len < 0 || (size_t)len >= sizeof(joined))
		return false;
	/* Resolve symbolic links and check the result is still inside the root. */
	if (!realpath(joined, real))
		return false;
	dlen = strlen(root->dir);
	if (strncmp(real, root->dir, dlen) != 0 || real[dlen] != '/')
		return false;
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	*fd_out = fd;
	*size_out = (uint64_t)st.st_size;
	*type_out = mime_of(real);
	return true;
}

/*
 * True when the request's If-None-Match names 'etag' (a list of validators,
 * or "*"), so the browser's copy is current and a 304 answers (RFC 9110,
 * 13.1.2: weak comparison).
 */
static bool etag_matches(const char *header, const char *etag)
{
	size_t elen = strlen(etag);
	const char *p = header;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return true;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (strncmp(p, etag, elen) == 0 && (p[elen] == '\0' || p[elen] == ',' ||
						    p[elen] == ' ' || p[elen] == '\t'))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

static void serve_static(struct net *n, struct conn *c)
{
	const char *type;
	uint64_t size;
	struct stat st;
	int fd;

	if (!open_static(n, c->path, &fd, &size, &type)) {
		respond_error(n, c, 404, RIGD_E_NOT_FOUND);
		return;
	}
	c->cacheable = true;
	c->vendor = strncmp(c->path, "/vendor/", 8) == 0;
	/* The validator changes whenever the file is replaced or rewritten. */
	if (fstat(fd, &st) == 0)
		snprintf(c->etag, sizeof(c->etag), "\"%llx-%llx-%llx%09ld\"",
			 (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
			 (unsigned long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	if (c->etag[0] && c->if_none_match && etag_matches(c->if_none_match, c->etag)) {
		close(fd);
		respond(n, c, 304, NULL, NULL, 0);
		return;
	}
	c->fd = fd + 1;
	c->file_left = c->head_only ? 0 : size;
	c->responding = true;
	n->http_responding++;
	c->status = 200;
	snprintf(c->resp_type, sizeof(c->resp_type), "%s", type);
	c->resp_len = (size_t)size;  /* announced length */
	lws_callback_on_writable(c->wsi);
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

	if (!origin_allowed(n, c->origin) && strncmp(c->path, "/api/", 5) == 0) {
		/* A page of another site may not drive the API (CSRF). */
		respond_error(n, c, 403, RIGD_E_FORBIDDEN);
		return;
	}
	if (n->cb.http && n->cb.http(n->cb.ctx, &req))
		return;
	if (c->responding)
		return;
	if (c->method == NET_GET || c->method == NET_HEAD)
		serve_static(n, c);
	else
		respond_error(n, c, 404, RIGD_E_NOT_FOUND);
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

static int on_http(struct net *n, struct conn *c, struct lws *wsi, const char *uri)
{
	char *cl;

	http_reset(n, c);
	c->wsi = wsi;
	if (!conn_register(n, c))
		return -1;
	c->method = method_of(wsi);
	c->head_only = c->method == NET_HEAD;
	c->path = strdup(uri ? uri : "/");
	c->origin = dup_header(wsi, WSI_TOKEN_ORIGIN);
	c->authorization = dup_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	c->content_type = dup_header(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE);
	c->if_none_match = dup_header(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH);
	if (!c->path || copy_args(c) != 0)
		return -1;

	if (c->method == NET_POST || c->method == NET_PUT || c->method == NET_PATCH) {
		unsigned long long expected;
		char *end;

		cl = dup_header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);
		if (!cl) {
			/* Without a length the body cannot be told from the next
			 * request: refuse and close (411 Length Required). */
			c->close_after = true;
			respond_error(n, c, 411, RIGD_E_BAD_FIELD);
			return 0;
		}
		errno = 0;
		expected = strtoull(cl, &end, 10);
		if (errno || end == cl || *end) {
			free(cl);
			c->close_after = true;
			respond_error(n, c, 400, RIGD_E_BAD_FIELD);
			return 0;
		}
		free(cl);
		if (expected > n->cfg.max_body) {
			c->close_after = true;
			respond_error(n, c, 413, RIGD_E_TOO_LARGE);
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

static int on_http_body(struct net *n, struct conn *c, const void *in, size_t len)
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

static int on_http_body_done(struct net *n, struct conn *c)
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

	http_reset(n, c);
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

static int on_http_writeable(struct net *n, struct conn *c)
{
	unsigned char hbuf[LWS_PRE + 4096];
	unsigned char *start = hbuf + LWS_PRE, *p = start, *end = hbuf + sizeof(hbuf) - 1;

	if (!c->responding)
		return 0;
	if (!c->headers_sent) {
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
		    add_header(c->wsi, "content-security-policy:", n->csp, &p, end) ||
		    add_header(c->wsi, "x-frame-options:", "DENY", &p, end) ||
		    add_header(c->wsi, "cache-control:", cache, &p, end) ||
		    (c->etag[0] && add_header(c->wsi, "etag:", c->etag, &p, end)) ||
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

	/* One body chunk per callback. */
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
	}
	return 0;
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
	origin = dup_header(wsi, WSI_TOKEN_ORIGIN);
	if (!origin && lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0) {
		n->stats.ws_rejected++;  /* an Origin too long to copy is not allowed */
		return 1;
	}
	ok = origin_allowed(n, origin);
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
	http_reset(n, c);
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
	if (!conn_register(n, c))
		return -1;
	/* The handshake's headers are still there: keep a script's token. */
	c->ws_auth = dup_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
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
	free(c->ws_auth);
	c->rx = NULL;
	c->tx = NULL;
	c->ws_auth = NULL;
	c->rx_cap = c->tx_cap = 0;
	if (c->over_limit)
		return;  /* never registered, never counted */
	conn_unregister(n, c);
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

static int on_ws_writeable(struct net *n, struct conn *c)
{
	char *frame;
	size_t len = 0;
	bool more = false;
	int wrote;

	if (!c->is_ws || c->close_sent)
		return 0;
	if (c->close_code && (!c->close_after_flush || c->over_limit))
		return close_now(n, c, c->close_code, c->close_reason);
	frame = n->cb.ws_writable ? n->cb.ws_writable(n->cb.ctx, c->id, &len, &more) : NULL;
	if (!frame) {
		if (c->close_code)
			return close_now(n, c, c->close_code, c->close_reason);
		if (more)
			lws_callback_on_writable(c->wsi);
		return 0;
	}
	/* lws frames the text in the LWS_PRE bytes before it, and keeps its
	 * own copy of whatever the socket does not take at once. */
	wrote = lws_write(c->wsi, (unsigned char *)frame + LWS_PRE, len, LWS_WRITE_TEXT);
	free(frame);
	if (wrote < (int)len)
		return -1;
	n->stats.bytes_sent += len;
	n->stats.frames_sent++;
	if (more || c->close_code)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* ---- the protocol callback ---- */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		    void *in, size_t len)
{
	struct net *n = net_of(wsi);
	struct conn *c = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (!c)
			return -1;
		return on_http(n, c, wsi, in);
	case LWS_CALLBACK_HTTP_BODY:
		return c ? on_http_body(n, c, in, len) : -1;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		return c ? on_http_body_done(n, c) : -1;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return c ? on_http_writeable(n, c) : -1;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		/* The client left (or the connection changes protocol): drop
		 * the request, its body and any unsent answer. */
		if (c && !c->is_ws)
			http_reset(n, c);
		return 0;

	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (c)
			http_reset(n, c);
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
	default:
		return 0;
	}
}

/* ---- Content-Security-Policy ----
 *
 * The viewer's only inline script is its import map (an import map cannot
 * be loaded from a file). Rather than allow inline scripts, the policy lists
 * the SHA-256 of every inline <script> of the web root's index.html, computed
 * when the server starts, so editing the page needs no change here.
 */
/* True when the tag [tag, gt) has a src attribute. */
static bool tag_has_src(const char *tag, const char *gt)
{
	for (const char *p = tag; p + 4 < gt; p++)
		if ((p[0] == ' ' || p[0] == '\t' || p[0] == '\n') && strncmp(p + 1, "src", 3) == 0 &&
		    (p[4] == '=' || p[4] == ' '))
			return true;
	return false;
}

static char *build_csp(const char *web_root)
{
	static const char head[] = "default-src 'self'; script-src 'self'";
	static const char tail[] = "; style-src 'self'; img-src 'self' data: blob:; "
				   "connect-src 'self'; object-src 'none'; base-uri 'none'; "
				   "form-action 'self'; frame-ancestors 'none'";
	char path[PATH_MAX], *html = NULL, *csp = NULL;
	size_t cap = sizeof(head) + sizeof(tail), used = 0;
	long size = -1;
	FILE *f;

	if (web_root && snprintf(path, sizeof(path), "%s/index.html", web_root) < (int)sizeof(path) &&
	    (f = fopen(path, "rb")) != NULL) {
		if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && size < (8 << 20) &&
		    fseek(f, 0, SEEK_SET) == 0 && (html = malloc((size_t)size + 1)) != NULL) {
			if (fread(html, 1, (size_t)size, f) != (size_t)size) {
				free(html);
				html = NULL;
			} else {
				html[size] = '\0';
			}
		}
		fclose(f);
	}
	/* Each hash adds " 'sha256-" + 44 base64 characters + "'". */
	for (const char *p = html; p && (p = strstr(p, "<script")); p++)
		cap += 64;
	csp = malloc(cap);
	if (!csp)
		goto out;
	used = (size_t)snprintf(csp, cap, "%s", head);
	for (const char *p = html; p && (p = strstr(p, "<script")) != NULL;) {
		const char *gt = strchr(p, '>'), *end;
		unsigned char digest[SHA256_LEN];
		char b64[64];

		if (!gt)
			break;
		end = strstr(gt, "</script>");
		if (!end)
			break;
		/* A script with a src attribute is 'self'; its inline text is
		 * ignored by the browser. */
		if (!tag_has_src(p, gt) && end > gt + 1) {
			sha256_digest(gt + 1, (size_t)(end - gt - 1), digest);
			if (lws_b64_encode_string((const char *)digest, SHA256_LEN, b64,
						  sizeof(b64)) > 0)
				used += (size_t)snprintf(csp + used, cap - used, " 'sha256-%s'", b64);
		}
		p = end;
	}
	snprintf(csp + used, cap - used, "%s", tail);
out:
	free(html);
	return csp;
}

/* ---- timers ---- */

static void turn_cb(lws_sorted_usec_list_t *sul)
{
	struct net *n = lws_container_of(sul, struct net, turn_sul);

	n->turn_pending = false;
	if (n->cb.turn && !n->freeing)
		n->cb.turn(n->cb.ctx);
}

static void tick_cb(lws_sorted_usec_list_t *sul)
{
	struct net *n = lws_container_of(sul, struct net, tick_sul);

	if (n->cb.tick && !n->freeing)
		n->cb.tick(n->cb.ctx);
	lws_sul_schedule(n->ctx, 0, &n->tick_sul, tick_cb, LWS_US_PER_SEC);
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

net *net_new(const net_config *cfg, const net_callbacks *cb)
{
	struct lws_context_creation_info info;
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
	if (!(n->csp = build_csp(cfg->web_root)))
		goto fail;
	if (n->cfg.max_fragments <= 0)
		n->cfg.max_fragments = 4096;

	if (cfg->web_root) {
		static const struct {
			const char *prefix, *rel;
			bool deny;
		} table[] = {
			{"/vendor/three/build/", "node_modules/three/build", false},
			{"/vendor/three/examples/jsm/", "node_modules/three/examples/jsm", false},
			{"/", "", true},
		};
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
			char joined[PATH_MAX], real[PATH_MAX];
			struct static_root *r = &n->roots[n->n_roots++];

			r->url_prefix = table[i].prefix;
			r->rel_dir = table[i].rel;
			r->deny_private = table[i].deny;
			snprintf(joined, sizeof(joined), "%s/%s", cfg->web_root, table[i].rel);
			if (realpath(joined, real) && !(r->dir = strdup(real)))
				goto fail;
		}
	}

	lvl = cfg->log_level < 0 ? 0 : cfg->log_level > 3 ? 3 : cfg->log_level;
	lws_set_log_level(levels[lvl], lws_log_quiet);

	n->protocols[0].name = "rigd";
	n->protocols[0].callback = callback;
	n->protocols[0].per_session_data_size = sizeof(struct conn);
	n->protocols[0].rx_buffer_size = RX_CHUNK;

	/* lws pings a websocket idle for half the timeout and hangs up on one
	 * that has shown no sign of life (data or pong) for all of it. */
	if (cfg->idle_timeout_s > 0) {
		int ping = cfg->idle_timeout_s / 2 > 0 ? cfg->idle_timeout_s / 2 : 1;
		n->retry.secs_since_valid_ping = (uint16_t)ping;
		n->retry.secs_since_valid_hangup = (uint16_t)(cfg->idle_timeout_s > ping ?
							       cfg->idle_timeout_s : ping + 1);
	}

	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_VALIDATE_UTF8 |
		       LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
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
		fprintf(stderr, "rigd: cannot create the libwebsockets context\n");
		goto fail;
	}

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
		goto fail;
	}
	n->port = lws_get_vhost_listen_port(n->vh);
	lws_sul_schedule(n->ctx, 0, &n->tick_sul, tick_cb, LWS_US_PER_SEC);
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
		lws_sul_cancel(&n->turn_sul);
		lws_sul_cancel(&n->tick_sul);
		lws_context_destroy(n->ctx);
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

int net_run(net *n)
{
	while (!n->stop)
		if (lws_service(n->ctx, 0) < 0)
			return RIGD_E_IO;
	return 0;
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
		if (lws_service(n->ctx, 50) < 0)
			break;
}

void net_schedule_turn(net *n)
{
	if (n->turn_pending)
		return;
	n->turn_pending = true;
	lws_sul_schedule(n->ctx, 0, &n->turn_sul, turn_cb, 0);
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
		lws_rx_flow_control(c->wsi, 1);
	}
}

int net_ws_pause_for(net *n, uint64_t conn, int ms)
{
	struct conn *c = conn_lookup(n, conn);

	if (!c || !c->is_ws || c->close_sent)
		return RIGD_E_NOT_FOUND;
	if (!c->rx_paused) {
		c->rx_paused = true;
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

int net_http_respond(net *n, uint64_t conn, int status, const char *content_type,
		     char *body, size_t len)
{
	struct conn *c = conn_lookup(n, conn);

	if (!c || c->is_ws) {
		free(body);
		return RIGD_E_NOT_FOUND;
	}
	if (c->responding) {
		free(body);
		return RIGD_E_INTERNAL;
	}
	respond(n, c, status, content_type, body, body ? len : 0);
	return 0;
}

void net_get_stats(const net *n, net_stats *out)
{
	*out = n->stats;
}
