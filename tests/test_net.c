/*
 * test_net.c: the transport on its own, driven over raw sockets.
 *
 * A net instance runs on a thread of its own with echo callbacks; the test
 * thread speaks HTTP/1.1 and RFC 6455 byte by byte, so that it can send what
 * no well-behaved client library would: unnormalised paths, fragments by the
 * thousand, oversized frames, invalid UTF-8, frames from a peer that never
 * answers a ping.
 */
#include "core/err.h"
#include "net/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define MAX_MESSAGE 65536
#define MAX_FRAGMENTS 64
#define MAX_BODY 4096
#define IDLE_S 2

/* ---- the server under test ---- */

struct frame_q {
	char *data[64];
	size_t len[64];
	int head, n;
};

struct server {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool ready;
	int port;
	net *n;
	char root[256];
	char origin[64];
	uint64_t deferred;          /* an HTTP request answered at the turn */
	uint64_t last_ws;
	struct frame_q q;           /* echo frames of the last websocket */
	int opened, closed, binaries;
	int errors;                 /* checks failed on the server thread */
};

static struct server srv;

static char *frame_of(const char *text, size_t len)
{
	size_t head = net_frame_head();
	char *f = malloc(head + len + 1);

	if (!f)
		abort();
	memcpy(f + head, text, len);
	f[head + len] = '\0';
	return f;
}

static void push_frame(uint64_t conn, const char *text, size_t len)
{
	struct frame_q *q = &srv.q;

	if (q->n == 64)
		return;
	q->data[(q->head + q->n) % 64] = frame_of(text, len);
	q->len[(q->head + q->n) % 64] = len;
	q->n++;
	net_ws_wake(srv.n, conn);
}

static bool cb_http(void *ctx, const net_request *req)
{
	char buf[MAX_BODY + 256];
	char *body;
	int len;

	if (strcmp(req->path, "/api/echo") == 0) {
		len = snprintf(buf, sizeof(buf), "%d|%s|%s|%s", req->method, req->body,
			       req->n_args > 0 ? req->args[0] : "", req->n_args > 1 ? req->args[1] : "");
		body = strdup(buf);
		net_http_respond(srv.n, req->conn, 200, "text/plain", body, (size_t)len);
		return true;
	}
	if (strcmp(req->path, "/api/later") == 0) {
		srv.deferred = req->conn;
		net_schedule_turn(srv.n);
		return true;
	}
	return false;
}

static void cb_turn(void *ctx)
{
	if (srv.deferred) {
		char *body = strdup("later");
		/* cmocka's checks cannot run on this thread: count failures. */
		if (net_http_respond(srv.n, srv.deferred, 201, "text/plain", body, 5) != 0)
			srv.errors++;
		/* A second answer to the same request is refused. */
		if (net_http_respond(srv.n, srv.deferred, 200, "text/plain", NULL, 0) !=
		    RIGD_E_INTERNAL)
			srv.errors++;
		srv.deferred = 0;
	}
}

static void cb_open(void *ctx, uint64_t conn)
{
	srv.opened++;
	srv.last_ws = conn;
}

static void cb_message(void *ctx, uint64_t conn, const char *data, size_t len, bool binary)
{
	char buf[64];

	if (binary) {
		srv.binaries++;
		snprintf(buf, sizeof(buf), "binary:%zu", len);
		push_frame(conn, buf, strlen(buf));
		return;
	}
	if (strcmp(data, "close-me") == 0) {
		net_ws_close(srv.n, conn, 4000, "asked to");
		return;
	}
	if (strncmp(data, "many:", 5) == 0) {
		int count = atoi(data + 5);

		for (int i = 0; i < count; i++) {
			snprintf(buf, sizeof(buf), "frame %d", i);
			push_frame(conn, buf, strlen(buf));
		}
		return;
	}
	push_frame(conn, data, len);
}

static char *cb_writable(void *ctx, uint64_t conn, size_t *len, bool *more, bool *binary)
{
	(void)binary;  /* text frames only */
	struct frame_q *q = &srv.q;
	char *f;

	if (q->n == 0)
		return NULL;
	f = q->data[q->head];
	*len = q->len[q->head];
	q->head = (q->head + 1) % 64;
	q->n--;
	*more = q->n > 0;
	return f;
}

static void drop_frames(void)
{
	while (srv.q.n > 0) {
		free(srv.q.data[srv.q.head]);
		srv.q.head = (srv.q.head + 1) % 64;
		srv.q.n--;
	}
}

static void cb_closed(void *ctx, uint64_t conn)
{
	srv.closed++;
	/* Frames for a connection that has gone are dropped, and its id is
	 * dead. */
	drop_frames();
	if (net_ws_wake(srv.n, conn) != RIGD_E_NOT_FOUND)
		srv.errors++;
}

static void *server_main(void *arg)
{
	net_config cfg;
	net_callbacks cb = {
		.http = cb_http, .ws_open = cb_open, .ws_message = cb_message,
		.ws_writable = cb_writable, .ws_closed = cb_closed, .turn = cb_turn,
	};
	const char *origins[1];

	net_config_defaults(&cfg);
	cfg.port = 0;
	cfg.web_root = srv.root;
	cfg.max_message = MAX_MESSAGE;
	cfg.max_fragments = MAX_FRAGMENTS;
	cfg.max_body = MAX_BODY;
	cfg.idle_timeout_s = IDLE_S;
	cfg.log_level = getenv("RIGD_TEST_NET_LOG") ? atoi(getenv("RIGD_TEST_NET_LOG")) : 0;
	origins[0] = "http://allowed.example";
	cfg.origins = origins;
	cfg.n_origins = 1;
	srv.n = net_new(&cfg, &cb);

	pthread_mutex_lock(&srv.lock);
	srv.port = srv.n ? net_port(srv.n) : -1;
	srv.ready = true;
	pthread_cond_signal(&srv.cond);
	pthread_mutex_unlock(&srv.lock);
	if (!srv.n)
		return NULL;
	net_run(srv.n);
	net_drain(srv.n, NET_CLOSE_GOING_AWAY, 2000);
	net_free(srv.n);
	srv.n = NULL;
	drop_frames();
	return NULL;
}

static void write_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void make_tree(const char *base)
{
	char path[512];
	const char *dirs[] = {"web", "web/sub", "web/empty", "web/node_modules",
			      "web/node_modules/x", "web/node_modules/three",
			      "web/node_modules/three/build", "web/node_modules/three/examples",
			      "web/node_modules/three/examples/jsm",
			      "web/node_modules/three/examples/jsm/controls"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", base, dirs[i]);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	write_file(base, "secret.txt", "TOP-SECRET");
	write_file(base, "web/index.html", "<!doctype html><title>rigd</title>");
	write_file(base, "web/app.js", "export const x = 1;\n");
	write_file(base, "web/sub/style.css", "body{}");
	write_file(base, "web/sub/model.glb", "glTF");
	write_file(base, "web/.hidden", "hidden");
	write_file(base, "web/node_modules/x/secret.js", "module-secret");
	write_file(base, "web/node_modules/three/build/three.module.js", "export const THREE=1;");
	write_file(base, "web/node_modules/three/examples/jsm/controls/OrbitControls.js",
		   "export class OrbitControls{}");
	snprintf(path, sizeof(path), "%s/web/link.txt", base);
	{
		char target[512];

		snprintf(target, sizeof(target), "%s/secret.txt", base);
		assert_int_equal(symlink(target, path), 0);
	}
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/rigd-test-net-XXXXXX";
	char *base = mkdtemp(tmpl);

	assert_non_null(base);
	memset(&srv, 0, sizeof(srv));
	make_tree(base);
	snprintf(srv.root, sizeof(srv.root), "%s/web", base);
	pthread_mutex_init(&srv.lock, NULL);
	pthread_cond_init(&srv.cond, NULL);
	assert_int_equal(pthread_create(&srv.thread, NULL, server_main, NULL), 0);
	pthread_mutex_lock(&srv.lock);
	while (!srv.ready)
		pthread_cond_wait(&srv.cond, &srv.lock);
	pthread_mutex_unlock(&srv.lock);
	assert_true(srv.port > 0);
	snprintf(srv.origin, sizeof(srv.origin), "http://allowed.example");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	net_stop(srv.n);
	pthread_join(srv.thread, NULL);
	assert_int_equal(srv.errors, 0);
	if (srv.opened != srv.closed)
		fail_msg("opened %d closed %d", srv.opened, srv.closed);
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strlen(srv.root) - 4), srv.root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* ---- a raw client ---- */

static int tcp_connect(void)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)srv.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;  /* the server may have closed: the reads will tell */
		p += n;
		len -= (size_t)n;
	}
}

/* Reads up to 'cap' bytes, waiting at most timeout_ms for each; returns the
 * count read before the peer closed or went quiet. */
static size_t recv_some(int fd, char *buf, size_t cap, size_t want, int timeout_ms)
{
	size_t got = 0;

	while (got < want && got < cap) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, buf + got, cap - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

struct http_reply {
	int status;
	char headers[2048];
	char body[8192];
	size_t body_len;
	bool closed;
};

/* Reads one HTTP response (Content-Length framed; no body after HEAD). */
static void read_reply(int fd, struct http_reply *r, bool head)
{
	static char buf[16384];
	size_t got = 0, hlen, clen = 0;
	char *end, *cl;

	memset(r, 0, sizeof(*r));
	for (;;) {
		size_t n = recv_some(fd, buf + got, sizeof(buf) - 1 - got, 1, 3000);

		if (n == 0) {
			r->closed = true;
			break;
		}
		got += n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	buf[got] = '\0';
	end = strstr(buf, "\r\n\r\n");
	if (!end)
		return;
	hlen = (size_t)(end - buf) + 4;
	snprintf(r->headers, sizeof(r->headers), "%.*s", (int)hlen, buf);
	for (char *p = r->headers; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	sscanf(buf, "HTTP/1.%*d %d", &r->status);
	cl = strstr(r->headers, "content-length:");
	if (cl)
		clen = (size_t)strtoul(cl + 15, NULL, 10);
	while (!head && got - hlen < clen) {
		size_t n = recv_some(fd, buf + got, sizeof(buf) - 1 - got, 1, 3000);

		if (n == 0)
			break;
		got += n;
	}
	r->body_len = got - hlen < sizeof(r->body) - 1 ? got - hlen : sizeof(r->body) - 1;
	memcpy(r->body, buf + hlen, r->body_len);
	r->body[r->body_len] = '\0';
}

/* Sends a raw request and reads the reply on a new connection. */
static void http_raw(const char *request, struct http_reply *r)
{
	int fd = tcp_connect();

	send_all(fd, request, strlen(request));
	read_reply(fd, r, strncmp(request, "HEAD ", 5) == 0);
	close(fd);
}

static void http_get(const char *path, struct http_reply *r)
{
	char req[1024];

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
	http_raw(req, r);
}

/* Sends one masked frame. */
static void ws_send(int fd, int opcode, bool fin, const void *payload, size_t len)
{
	unsigned char hdr[14];
	const unsigned char mask[4] = {0x11, 0x22, 0x33, 0x44};
	unsigned char *buf;
	size_t h = 0;

	hdr[h++] = (unsigned char)((fin ? 0x80 : 0) | opcode);
	if (len < 126) {
		hdr[h++] = (unsigned char)(0x80 | len);
	} else if (len < 65536) {
		hdr[h++] = 0x80 | 126;
		hdr[h++] = (unsigned char)(len >> 8);
		hdr[h++] = (unsigned char)len;
	} else {
		hdr[h++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			hdr[h++] = (unsigned char)((uint64_t)len >> (8 * i));
	}
	memcpy(hdr + h, mask, 4);
	h += 4;
	buf = malloc(h + len);
	assert_non_null(buf);
	memcpy(buf, hdr, h);
	for (size_t i = 0; i < len; i++)
		buf[h + i] = ((const unsigned char *)payload)[i] ^ mask[i % 4];
	send_all(fd, buf, h + len);
	free(buf);
}

/* Reads one frame; returns its opcode (-1 when the connection closed or
 * nothing came in timeout_ms). For a close frame *code gets its status. */
static int ws_recv(int fd, char *payload, size_t cap, size_t *len, int *code, int timeout_ms)
{
	unsigned char h[10];
	uint64_t plen;
	int opcode;

	if (recv_some(fd, (char *)h, 2, 2, timeout_ms) != 2)
		return -1;
	opcode = h[0] & 0x0f;
	plen = h[1] & 0x7f;
	if (plen == 126) {
		if (recv_some(fd, (char *)h + 2, 2, 2, timeout_ms) != 2)
			return -1;
		plen = ((uint64_t)h[2] << 8) | h[3];
	} else if (plen == 127) {
		if (recv_some(fd, (char *)h + 2, 8, 8, timeout_ms) != 8)
			return -1;
		plen = 0;
		for (int i = 0; i < 8; i++)
			plen = (plen << 8) | h[2 + i];
	}
	assert_true(plen < cap);
	if (recv_some(fd, payload, (size_t)plen, (size_t)plen, timeout_ms) != plen)
		return -1;
	payload[plen] = '\0';
	*len = (size_t)plen;
	if (code)
		*code = (opcode == 8 && plen >= 2) ?
			(((unsigned char)payload[0] << 8) | (unsigned char)payload[1]) : 0;
	return opcode;
}

/* Opens a websocket to 'path'; returns the fd, or -1 (with *status) when
 * the server refused the upgrade. */
static int ws_connect(const char *path, const char *origin, int *status)
{
	char req[1024];
	char buf[2048];
	int fd = tcp_connect();
	size_t got = 0;

	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		 "Sec-WebSocket-Version: 13\r\n%s%s%s\r\n",
		 path, srv.port, origin ? "Origin: " : "", origin ? origin : "", origin ? "\r\n" : "");
	send_all(fd, req, strlen(req));
	*status = 0;
	/* Read the handshake reply byte by byte so no frame is swallowed. */
	while (got < sizeof(buf) - 1) {
		if (recv_some(fd, buf + got, 1, 1, 3000) != 1)
			break;
		got++;
		buf[got] = '\0';
		if (got >= 4 && memcmp(buf + got - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	buf[got] = '\0';
	sscanf(buf, "HTTP/1.%*d %d", status);
	if (*status != 101) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- static files ---- */

static void test_static_files(void **state)
{
	struct http_reply r;

	http_get("/", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "content-type: text/html"));
	assert_non_null(strstr(r.headers, "x-content-type-options: nosniff"));
	assert_non_null(strstr(r.body, "<title>rigd</title>"));

	http_get("/app.js", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "content-type: text/javascript"));
	assert_string_equal(r.body, "export const x = 1;\n");

	http_get("/sub/style.css", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "content-type: text/css"));

	http_get("/sub/model.glb", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "content-type: model/gltf-binary"));

	http_get("/vendor/three/build/three.module.js", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "content-type: text/javascript"));
	assert_string_equal(r.body, "export const THREE=1;");

	http_get("/vendor/three/examples/jsm/controls/OrbitControls.js", &r);
	assert_int_equal(r.status, 200);

	http_raw("HEAD /app.js HTTP/1.1\r\nHost: x\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "content-length: 20"));
	assert_int_equal(r.body_len, 0);
}

static void test_static_refusals(void **state)
{
	const char *paths[] = {
		"/missing.js", "/.hidden", "/node_modules/x/secret.js", "/link.txt", "/sub/",
		"/empty/", "/vendor/three/package.json", "/vendor/three/build/../../x/secret.js",
		"/../secret.txt", "/%2e%2e/secret.txt", "/sub/..%2f..%2fsecret.txt",
		"/sub/%2e%2e/%2e%2e/secret.txt", "//etc/passwd", "/sub/style.css%00.js",
		"/..\\secret.txt", "/vendor/three/build/%2e%2e/%2e%2e/x/secret.js",
	};
	struct http_reply r;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		http_get(paths[i], &r);
		if (r.status == 200)
			fail_msg("%s was served", paths[i]);
		/* A 4xx, or (for a NUL byte lws itself refuses) no answer. */
		if (r.status != 0 && (r.status < 400 || r.status >= 500))
			fail_msg("%s: status %d", paths[i], r.status);
		assert_null(strstr(r.body, "SECRET"));
		assert_null(strstr(r.body, "secret"));
	}
	/* The API's error shape, with net's own code. */
	http_get("/missing.js", &r);
	assert_int_equal(r.status, 404);
	assert_non_null(strstr(r.body, "\"code\":\"not_found\""));
}

/* ---- API requests ---- */

static void test_http_api(void **state)
{
	struct http_reply r;
	char req[8192];
	int fd;

	http_raw("POST /api/echo?a=1&b=x%20y HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "2|hello|a=1|b=x y");

	/* Answered later, at the turn. */
	http_get("/api/later", &r);
	assert_int_equal(r.status, 201);
	assert_string_equal(r.body, "later");

	/* Two requests on one connection (keep-alive). */
	fd = tcp_connect();
	snprintf(req, sizeof(req), "GET /api/echo HTTP/1.1\r\nHost: x\r\n\r\n");
	send_all(fd, req, strlen(req));
	read_reply(fd, &r, false);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "0|||");
	snprintf(req, sizeof(req), "DELETE /api/echo HTTP/1.1\r\nHost: x\r\n\r\n");
	send_all(fd, req, strlen(req));
	read_reply(fd, &r, false);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "4|||");
	close(fd);

	/* Unknown paths for other methods. */
	http_raw("POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", &r);
	assert_int_equal(r.status, 404);
}

static void test_http_body_limits(void **state)
{
	struct http_reply r;
	char req[256];

	/* No Content-Length: 411 and the connection closes. */
	http_raw("POST /api/echo HTTP/1.1\r\nHost: x\r\n\r\n", &r);
	assert_int_equal(r.status, 411);
	assert_non_null(strstr(r.body, "\"code\":\"bad_field\""));

	/* A body over the cap is refused before it is read. */
	snprintf(req, sizeof(req), "POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n",
		 MAX_BODY + 1);
	http_raw(req, &r);
	assert_int_equal(r.status, 413);
	assert_non_null(strstr(r.body, "\"code\":\"too_large\""));

	http_raw("POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n", &r);
	assert_int_equal(r.status, 400);

	/* The server still answers. */
	http_get("/api/echo", &r);
	assert_int_equal(r.status, 200);
}

static void test_http_origin(void **state)
{
	struct http_reply r;

	http_raw("POST /api/echo HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example\r\n"
		 "Content-Length: 2\r\n\r\nhi", &r);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(r.body, "\"code\":\"forbidden\""));

	http_raw("POST /api/echo HTTP/1.1\r\nHost: x\r\nOrigin: http://allowed.example\r\n"
		 "Content-Length: 2\r\n\r\nhi", &r);
	assert_int_equal(r.status, 200);

	/* Static files are public whatever the Origin. */
	http_raw("GET /app.js HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example\r\n\r\n", &r);
	assert_int_equal(r.status, 200);
}

/* ---- websockets ---- */

static void test_ws_echo_and_fragments(void **state)
{
	char buf[MAX_MESSAGE + 16];
	size_t len;
	int status, fd = ws_connect("/ws", NULL, &status);

	assert_int_equal(status, 101);
	ws_send(fd, 1, true, "hello", 5);
	assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 1);
	assert_string_equal(buf, "hello");

	ws_send(fd, 9, true, "p", 1);
	assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 10);  /* pong */

	/* A message in three fragments, a ping between them. */
	ws_send(fd, 1, false, "ab", 2);
	ws_send(fd, 0, false, "cd", 2);
	ws_send(fd, 9, true, "p", 1);
	ws_send(fd, 0, true, "ef", 2);
	assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 10);  /* pong */
	assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 1);
	assert_string_equal(buf, "abcdef");

	/* Binary frames reach the callback flagged. */
	ws_send(fd, 2, true, "\x01\x02\x03", 3);
	assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 1);
	assert_string_equal(buf, "binary:3");

	/* Exactly the maximum is accepted. */
	{
		char *big = malloc(MAX_MESSAGE);

		assert_non_null(big);
		memset(big, 'x', MAX_MESSAGE);
		ws_send(fd, 1, true, big, MAX_MESSAGE);
		free(big);
		assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 1);
		assert_int_equal(len, MAX_MESSAGE);
	}

	/* Twenty queued frames all arrive, in order. */
	ws_send(fd, 1, true, "many:20", 7);
	for (int i = 0; i < 20; i++) {
		char want[32];

		snprintf(want, sizeof(want), "frame %d", i);
		assert_int_equal(ws_recv(fd, buf, sizeof(buf), &len, NULL, 3000), 1);
		assert_string_equal(buf, want);
	}
	close(fd);
}

static void expect_close(int fd, int want_code)
{
	char buf[256];
	size_t len;
	int code = 0, op;

	/* Skip data frames until the close frame. */
	do
		op = ws_recv(fd, buf, sizeof(buf), &len, &code, 5000);
	while (op == 1 || op == 9);
	assert_int_equal(op, 8);
	assert_int_equal(code, want_code);
	close(fd);
}

static void test_ws_too_big(void **state)
{
	int status, fd;
	char *big = malloc(MAX_MESSAGE + 1);

	assert_non_null(big);
	memset(big, 'x', MAX_MESSAGE + 1);

	/* One frame over the cap. */
	fd = ws_connect("/ws", NULL, &status);
	assert_int_equal(status, 101);
	ws_send(fd, 1, true, big, MAX_MESSAGE + 1);
	expect_close(fd, NET_CLOSE_TOO_BIG);

	/* The same total over the cap in fragments each under it. */
	fd = ws_connect("/ws", NULL, &status);
	ws_send(fd, 1, false, big, MAX_MESSAGE / 2);
	ws_send(fd, 0, true, big, MAX_MESSAGE / 2 + 1);
	expect_close(fd, NET_CLOSE_TOO_BIG);

	/* Tiny fragments beyond the fragment count. */
	fd = ws_connect("/ws", NULL, &status);
	ws_send(fd, 1, false, "x", 1);
	for (int i = 0; i < MAX_FRAGMENTS + 10; i++)
		ws_send(fd, 0, false, "x", 1);
	expect_close(fd, NET_CLOSE_TOO_BIG);
	free(big);

	/* Invalid UTF-8 in a text frame fails the connection (RFC 6455 8.1). */
	fd = ws_connect("/ws", NULL, &status);
	ws_send(fd, 1, true, "\xc3\x28", 2);
	expect_close(fd, 1007);
}

static void test_ws_handshake_filter(void **state)
{
	char lookalike[128];
	int status, fd;

	fd = ws_connect("/other", NULL, &status);
	assert_int_equal(fd, -1);
	assert_int_not_equal(status, 101);

	fd = ws_connect("/ws", "http://evil.example", &status);
	assert_int_equal(fd, -1);

	snprintf(lookalike, sizeof(lookalike), "%s.evil.example", srv.origin);
	fd = ws_connect("/ws", lookalike, &status);
	assert_int_equal(fd, -1);

	fd = ws_connect("/ws", "http://allowed.example", &status);
	assert_int_equal(status, 101);
	close(fd);
}

static void test_ws_server_close(void **state)
{
	int status, fd = ws_connect("/ws", NULL, &status);

	assert_int_equal(status, 101);
	ws_send(fd, 1, true, "close-me", 8);
	expect_close(fd, 4000);
}

static void test_ws_idle_timeout(void **state)
{
	char buf[256];
	size_t len;
	int status, op, pings = 0;
	int fd = ws_connect("/ws", NULL, &status);
	time_t start = time(NULL);

	assert_int_equal(status, 101);
	/* Never answer: a ping comes, then the server hangs up. */
	while ((op = ws_recv(fd, buf, sizeof(buf), &len, NULL, (IDLE_S + 3) * 1000)) == 9)
		pings++;
	assert_true(pings >= 1);
	assert_true(op == -1 || op == 8);
	assert_true(time(NULL) - start <= 3 * IDLE_S + 2);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_files),
		cmocka_unit_test(test_static_refusals),
		cmocka_unit_test(test_http_api),
		cmocka_unit_test(test_http_body_limits),
		cmocka_unit_test(test_http_origin),
		cmocka_unit_test(test_ws_echo_and_fragments),
		cmocka_unit_test(test_ws_too_big),
		cmocka_unit_test(test_ws_handshake_filter),
		cmocka_unit_test(test_ws_server_close),
		cmocka_unit_test(test_ws_idle_timeout),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
