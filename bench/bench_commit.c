/*
 * bench_commit: durable single-op batches per second through the whole
 * server: websocket in, durable ack out, --sync full.
 *
 *   bench_commit RIGD [--secs S] [--conns N] [--window W]
 *
 * Starts RIGD (the rigd binary) twice on fresh databases in a temporary
 * directory, once as built (the commit on the writer's thread) and once
 * with RIGD_COMMIT_ON_LOOP=1 (the commit on the event loop, as rigd did
 * before the writer: the peer, measured in the same run). Each time it
 * creates a scene with one node over HTTP, then N websocket editors
 * (default 8) each keep W single-op edits in flight (default 256; never
 * waiting for an ack before sending the next while fewer than W are out)
 * for S seconds (default 10, after 1 s of warm-up), and prints acks per
 * second, ack latency p50/p99, the server's CPU time per batch and the
 * batches per commit from /metrics.
 *
 * A benchmark, not a test: it prints figures and checks only that every
 * reply was an ack. One epoll loop; client frames are masked, server
 * frames never are (RFC 6455); no TLS, no fragments.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING 65536               /* send times kept per connection, by req */
#define MAX_SAMPLES (1 << 24)

struct conn {
	int fd;
	int state;                   /* 0: upgrading, 1: open */
	unsigned char *buf;
	size_t len, cap;
	uint64_t next_req, acked;
	double sent_at[RING];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench_commit: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			usleep(100);
			continue;
		}
		if (w <= 0)
			die("send: %s", strerror(errno));
		c += w;
		n -= (size_t)w;
	}
}

static int dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* One HTTP request with a JSON body; returns the status. */
static int http(int port, const char *method, const char *path, const char *body)
{
	char req[1024], resp[4096];
	int fd = dial(port), n;
	ssize_t r;
	size_t got = 0;

	n = snprintf(req, sizeof(req),
		     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		     method, path, strlen(body), body);
	send_all(fd, req, (size_t)n);
	while ((r = recv(fd, resp + got, sizeof(resp) - 1 - got, 0)) > 0)
		got += (size_t)r;
	resp[got] = 0;
	close(fd);
	return got > 12 ? atoi(resp + 9) : -1;
}

/* GET /metrics: the value of counter 'name', or -1. */
static double metric(int port, const char *name)
{
	static char resp[1 << 20];
	char req[128], key[96];
	int fd = dial(port), n;
	ssize_t r;
	size_t got = 0;

	n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
	send_all(fd, req, (size_t)n);
	while ((r = recv(fd, resp + got, sizeof(resp) - 1 - got, 0)) > 0)
		got += (size_t)r;
	resp[got] = 0;
	close(fd);
	snprintf(key, sizeof(key), "\n%s ", name);
	char *p = strstr(resp, key);
	return p ? atof(p + strlen(key)) : -1;
}

static void send_text(struct conn *c, const char *msg, size_t n)
{
	unsigned char f[512];
	static const unsigned char mask[4] = { 7, 1, 3, 5 };
	size_t h;

	if (n > sizeof(f) - 8)
		die("message too long");
	f[0] = 0x81;
	if (n < 126) {
		f[1] = 0x80 | (unsigned char)n;
		h = 2;
	} else {
		f[1] = 0x80 | 126;
		f[2] = (unsigned char)(n >> 8);
		f[3] = (unsigned char)n;
		h = 4;
	}
	memcpy(f + h, mask, 4);
	for (size_t i = 0; i < n; i++)
		f[h + 4 + i] = (unsigned char)msg[i] ^ mask[i % 4];
	send_all(c->fd, f, h + 4 + n);
}

static void send_edit(struct conn *c, int k)
{
	char msg[200];
	uint64_t req = c->next_req++;
	int n = snprintf(msg, sizeof(msg),
			 "{\"type\":\"edit\",\"scene\":\"bench\",\"req\":%llu,"
			 "\"ops\":[{\"op\":\"set\",\"id\":\"n0\",\"t\":[%d,%llu,0]}]}",
			 (unsigned long long)req, k, (unsigned long long)(req % 1000));

	c->sent_at[req % RING] = now_s();
	send_text(c, msg, (size_t)n);
}

struct run {
	double *lat;
	size_t n_lat;
	bool measuring;
	uint64_t acks, errors;
};

/* Walks the complete frames in c->buf: each ack settles its req. */
static void parse(struct conn *c, struct run *R)
{
	size_t pos = 0;

	for (;;) {
		unsigned char *b = c->buf + pos;
		size_t avail = c->len - pos, off = 2;
		uint64_t plen;

		if (avail < 2)
			break;
		plen = b[1] & 0x7f;
		if (plen == 126) {
			if (avail < 4)
				break;
			plen = ((uint64_t)b[2] << 8) | b[3];
			off = 4;
		} else if (plen == 127) {
			if (avail < 10)
				break;
			plen = 0;
			for (int i = 0; i < 8; i++)
				plen = (plen << 8) | b[2 + i];
			off = 10;
		}
		if (avail < off + plen)
			break;
		if ((b[0] & 0x0f) == 0x8)
			die("the server closed the connection");
		if ((b[0] & 0x0f) == 0x1) {
			const char *t = (const char *)b + off;
			const char *rq = memmem(t, plen, "\"req\":", 6);

			if (memmem(t, plen < 24 ? plen : 24, "\"ack\"", 5) && rq) {
				uint64_t req = strtoull(rq + 6, NULL, 10);

				c->acked++;
				if (R->measuring) {
					R->acks++;
					if (R->n_lat < MAX_SAMPLES)
						R->lat[R->n_lat++] = now_s() - c->sent_at[req % RING];
				}
			} else if (memmem(t, plen < 24 ? plen : 24, "\"error\"", 7)) {
				R->errors++;
				if (R->errors < 4)
					fprintf(stderr, "bench_commit: error reply: %.*s\n", (int)plen, t);
				c->acked++;
			}
		}
		pos += off + plen;
	}
	memmove(c->buf, c->buf + pos, c->len - pos);
	c->len -= pos;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Starts rigd; returns its pid and port. */
static pid_t start_rigd(const char *bin, const char *dir, bool on_loop, int *port)
{
	int out[2];
	char db[512];
	pid_t pid;

	snprintf(db, sizeof(db), "%s/%s.db", dir, on_loop ? "loop" : "writer");
	if (pipe(out))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		close(out[0]);
		if (on_loop)
			setenv("RIGD_COMMIT_ON_LOOP", "1", 1);
		else
			unsetenv("RIGD_COMMIT_ON_LOOP");
		execl(bin, bin, "--listen", "127.0.0.1:0", "--db", db, "--web", dir,
		      "--max-rate", "10000000", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "127.0.0.1:");

		if (strstr(line, "serving") && p) {
			*port = atoi(p + 10);
			return pid;
		}
	}
	die("rigd did not start");
	return -1;
}

static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		die("cannot read %s", path);
	fclose(f);
	char *p = strrchr(buf, ')');
	/* Fields after the name: state is 3rd; utime, stime are 14th, 15th. */
	sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void one_run(const char *bin, const char *dir, bool on_loop, int secs, int n_conns,
		    int window)
{
	int port = 0;
	pid_t pid = start_rigd(bin, dir, on_loop, &port);
	struct run R = { .lat = malloc(sizeof(double) * MAX_SAMPLES) };
	struct conn *cs = calloc((size_t)n_conns, sizeof(*cs));
	int ep = epoll_create1(0);
	unsigned char chunk[65536];

	if (!R.lat || !cs || ep < 0)
		die("out of memory");
	if (http(port, "POST", "/api/scenes", "{\"name\":\"bench\"}") != 201 &&
	    http(port, "POST", "/api/scenes", "{\"name\":\"bench\"}") != 409)
		die("cannot create the scene");
	if (http(port, "POST", "/api/scenes/bench/edits",
		 "{\"ops\":[{\"op\":\"create\",\"id\":\"n0\"}]}") != 200)
		die("cannot create the node");
	for (int i = 0; i < n_conns; i++) {
		struct conn *c = &cs[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		char req[256];
		int n;

		c->fd = dial(port);
		n = snprintf(req, sizeof(req),
			     "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
			     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
			     "Sec-WebSocket-Version: 13\r\n\r\n", port);
		send_all(c->fd, req, (size_t)n);
		fcntl(c->fd, F_SETFL, O_NONBLOCK);
		epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
	}
	double t_start = now_s(), t_measure = t_start + 1.0, t_end = t_measure + secs;
	double cpu0 = 0, commits0 = 0, batches0 = 0, csum0 = 0;
	bool started = false;

	for (;;) {
		double t = now_s();
		struct epoll_event evs[64];

		if (!started && t >= t_measure) {
			started = true;
			R.measuring = true;
			cpu0 = proc_cpu_s(pid);
			commits0 = metric(port, "rigd_commits_total");
			batches0 = metric(port, "rigd_batches_total");
			csum0 = metric(port, "rigd_commit_seconds_sum");
		}
		if (t >= t_end)
			break;
		int n = epoll_wait(ep, evs, 64, 50);

		for (int k = 0; k < n; k++) {
			struct conn *c = &cs[evs[k].data.u32];

			for (;;) {
				ssize_t r = recv(c->fd, chunk, sizeof(chunk), 0);

				if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
					break;
				if (r <= 0)
					die("connection lost: %s", r ? strerror(errno) : "closed");
				if (c->len + (size_t)r > c->cap) {
					c->cap = (c->len + (size_t)r) * 2;
					c->buf = realloc(c->buf, c->cap);
					if (!c->buf)
						die("out of memory");
				}
				memcpy(c->buf + c->len, chunk, (size_t)r);
				c->len += (size_t)r;
				if (c->state == 0) {
					unsigned char *e = memmem(c->buf, c->len, "\r\n\r\n", 4);

					if (!e)
						continue;
					if (strncmp((char *)c->buf, "HTTP/1.1 101", 12))
						die("upgrade refused");
					c->len -= (size_t)(e + 4 - c->buf);
					memmove(c->buf, e + 4, c->len);
					c->state = 1;
				}
				parse(c, &R);
			}
		}
		for (int i = 0; i < n_conns; i++) {
			struct conn *c = &cs[i];

			while (c->state == 1 && c->next_req - c->acked < (uint64_t)window)
				send_edit(c, i);
		}
	}
	double cpu = proc_cpu_s(pid) - cpu0;
	double commits = metric(port, "rigd_commits_total") - commits0;
	double batches = metric(port, "rigd_batches_total") - batches0;
	double csum = metric(port, "rigd_commit_seconds_sum") - csum0;

	qsort(R.lat, R.n_lat, sizeof(double), cmp_d);
	printf("%-28s %10.0f acks/s  ack p50 %7.2f ms  p99 %7.2f ms  server %6.1f us/batch  "
	       "%7.1f batches/commit  commit %6.2f ms  errors %llu\n",
	       on_loop ? "rigd, commit on the loop" : "rigd, commit on the writer",
	       (double)R.acks / secs, R.n_lat ? R.lat[R.n_lat / 2] * 1e3 : 0,
	       R.n_lat ? R.lat[R.n_lat * 99 / 100] * 1e3 : 0,
	       R.acks ? cpu * 1e6 / (double)R.acks : 0, commits > 0 ? batches / commits : 0,
	       commits > 0 ? csum * 1e3 / commits : 0, (unsigned long long)R.errors);
	fflush(stdout);
	for (int i = 0; i < n_conns; i++) {
		close(cs[i].fd);
		free(cs[i].buf);
	}
	close(ep);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	free(cs);
	free(R.lat);
}

int main(int argc, char **argv)
{
	int secs = 10, conns = 8, window = 256;
	char dir[] = "/tmp/bench_commit.XXXXXX";

	if (argc < 2)
		die("usage: bench_commit RIGD [--secs S] [--conns N] [--window W]");
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--secs"))
			secs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--conns"))
			conns = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--window"))
			window = atoi(argv[i + 1]);
		else
			die("unknown option %s", argv[i]);
	}
	if (secs < 1 || conns < 1 || window < 1 || window >= RING)
		die("bad option value");
	if (!mkdtemp(dir))
		die("mkdtemp: %s", strerror(errno));
	printf("bench_commit: %d websocket editors, %d single-op edits in flight each, %d s, "
	       "--sync full\n", conns, window, secs);
	one_run(argv[1], dir, false, secs, conns, window);
	one_run(argv[1], dir, true, secs, conns, window);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_commit: could not remove %s\n", dir);
	return 0;
}
