/*
 * bench_subscribers: a load generator of websocket subscribers for
 * bench_fanout, in C so that the clients cost the machine as little as a
 * real viewer's socket would, and the figures measure the server.
 *
 *   bench_subscribers PORT SCENE N FORMAT ARRIVALS_FILE
 *
 * Opens N connections to 127.0.0.1:PORT, upgrades each to a websocket,
 * subscribes to SCENE in FORMAT (json, f32 or f64) and then only walks the
 * frame headers: it counts update frames and bytes, and reads each update's
 * seq (at offset 8 of a binary frame, from the first bytes of a JSON one)
 * with the CLOCK_MONOTONIC time of its arrival, which is the clock of
 * node's process.hrtime, so the editor's send times compare.
 *
 * Talks to its parent by lines: it prints "ready" once every subscriber has
 * its snapshot; on stdin "count" it prints "count FRAMES BYTES CPU_SECONDS",
 * and on "stop" it writes the arrivals to ARRIVALS_FILE and prints "done".
 * ARRIVALS_FILE, little-endian: u32 subscribers, then for each a u32 count
 * and count pairs of u64 (seq, nanoseconds). Any failure prints
 * "error TEXT" and exits 1.
 *
 * Not a test and not part of rigd: one epoll loop, no TLS, no fragments
 * (rigd sends whole frames), server frames are never masked.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Bytes of a frame's payload read before it is skipped: enough for the
 * binary header and the start of a JSON update. */
#define PEEK 64
#define RX_CHUNK 65536

struct arrival {
	uint64_t seq, ns;
};

struct sub {
	int fd;
	int state;		/* 0 handshake, 1 waiting for the snapshot, 2 subscribed */
	unsigned char *buf;	/* unparsed bytes (a header and its first PEEK bytes at most) */
	size_t len, cap;
	uint64_t skip;		/* payload bytes still to drop */
	struct arrival *arr;
	size_t n_arr, cap_arr;
};

static struct {
	struct sub *subs;
	int n, ready, json;
	uint64_t frames, bytes;
	unsigned char subscribe[256];
	size_t subscribe_len;
} G;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("error ", stdout);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (c < need)
		c *= 2;
	p = realloc(p, c * size);
	if (!p)
		die("out of memory");
	*cap = c;
	return p;
}

static void send_all(int fd, const void *p, size_t len)
{
	/* Small messages at the start of a connection: the socket takes them. */
	if (send(fd, p, len, MSG_NOSIGNAL) != (ssize_t)len)
		die("send: %s", strerror(errno));
}

/* The masked text frame of the subscribe message. */
static void make_subscribe(const char *scene, const char *format)
{
	char msg[200];
	static const unsigned char mask[4] = { 1, 2, 3, 4 };
	int len;

	if (!strcmp(format, "json"))
		len = snprintf(msg, sizeof(msg), "{\"type\":\"subscribe\",\"scene\":\"%s\"}", scene);
	else
		len = snprintf(msg, sizeof(msg),
			       "{\"type\":\"subscribe\",\"scene\":\"%s\",\"format\":\"%s\"}", scene,
			       format);
	if (len < 0 || len >= 126)
		die("scene name too long");
	G.subscribe[0] = 0x81;
	G.subscribe[1] = (unsigned char)(0x80 | len);
	memcpy(G.subscribe + 2, mask, 4);
	for (int i = 0; i < len; i++)
		G.subscribe[6 + i] = (unsigned char)msg[i] ^ mask[i % 4];
	G.subscribe_len = (size_t)len + 6;
}

static void got_update(struct sub *s, uint64_t seq)
{
	G.frames++;
	s->arr = grow(s->arr, &s->cap_arr, s->n_arr + 1, sizeof(*s->arr));
	s->arr[s->n_arr++] = (struct arrival){ seq, now_ns() };
}

static void got_snapshot(struct sub *s)
{
	if (s->state == 1) {
		s->state = 2;
		if (++G.ready == G.n) {
			puts("ready");
			fflush(stdout);
		}
	}
}

/* A subscriber's connection ended: before every subscriber has its
 * snapshot that is a failure of the run; after it (a server stopped on
 * purpose, say) the subscriber keeps what it received and is reported. */
static void lost(struct sub *s, const char *why)
{
	if (G.ready < G.n)
		die("subscriber %d: %s", (int)(s - G.subs), why);
	printf("error subscriber %d: %s\n", (int)(s - G.subs), why);
	fflush(stdout);
	close(s->fd);
	s->fd = -1;
	s->len = 0;
	s->skip = 0;
}

/* One frame whose header ends at 'off', payload 'plen' bytes, of which
 * 'have' are in the buffer. */
static void frame(struct sub *s, int opcode, const unsigned char *p, size_t have)
{
	if (opcode == 2 && have >= 16) {
		/* The binary header: kind at 5 (1 snapshot, 2 update), seq at 8. */
		uint64_t seq = 0;

		for (int i = 7; i >= 0; i--)
			seq = seq << 8 | p[8 + i];
		if (p[5] == 1)
			got_snapshot(s);
		else if (p[5] == 2)
			got_update(s, seq);
	} else if (opcode == 1) {
		char head[PEEK + 1];
		const char *q;

		memcpy(head, p, have);
		head[have] = '\0';
		if (!strncmp(head, "{\"type\":\"snapshot\"", 18) && G.json) {
			got_snapshot(s);
		} else if (!strncmp(head, "{\"type\":\"update\"", 16)) {
			q = strstr(head, "\"seq\":");
			got_update(s, q ? strtoull(q + 6, NULL, 10) : UINT64_MAX);
		}
	}
}

/* Parses what is buffered; keeps an incomplete header (and its first PEEK
 * bytes) for the next read. */
static void parse(struct sub *s)
{
	size_t pos = 0;

	for (;;) {
		const unsigned char *b = s->buf + pos;
		size_t avail = s->len - pos, off = 2, need;
		uint64_t plen;
		int opcode;

		if (s->skip) {
			size_t m = avail < s->skip ? avail : (size_t)s->skip;

			s->skip -= m;
			pos += m;
			if (s->skip)
				break;
			continue;
		}
		if (avail < 2)
			break;
		opcode = b[0] & 0x0f;
		plen = b[1] & 0x7f;
		if (plen == 126) {
			if (avail < 4)
				break;
			plen = (uint64_t)b[2] << 8 | b[3];
			off = 4;
		} else if (plen == 127) {
			if (avail < 10)
				break;
			plen = 0;
			for (int i = 2; i < 10; i++)
				plen = plen << 8 | b[i];
			off = 10;
		}
		need = off + (plen < PEEK ? (size_t)plen : PEEK);
		if (avail < need)
			break;
		frame(s, opcode, b + off, need - off);
		if (opcode == 8) {
			lost(s, "the server sent a close frame");
			return;
		}
		pos += off;
		s->skip = plen;
	}
	memmove(s->buf, s->buf + pos, s->len - pos);
	s->len -= pos;
}

static void on_readable(struct sub *s, unsigned char *chunk)
{
	while (s->fd >= 0) {
		ssize_t r = recv(s->fd, chunk, RX_CHUNK, 0);
		size_t at = 0;

		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			lost(s, r ? strerror(errno) : "connection closed");
			return;
		}
		G.bytes += (uint64_t)r;
		if (s->state == 0) {
			/* The upgrade's answer, then the subscribe. */
			s->buf = grow(s->buf, &s->cap, s->len + (size_t)r, 1);
			memcpy(s->buf + s->len, chunk, (size_t)r);
			s->len += (size_t)r;
			unsigned char *end = memmem(s->buf, s->len, "\r\n\r\n", 4);

			if (!end)
				continue;
			if (strncmp((char *)s->buf, "HTTP/1.1 101", 12))
				die("upgrade refused: %.40s", (char *)s->buf);
			s->len -= (size_t)(end + 4 - s->buf);
			memmove(s->buf, end + 4, s->len);
			s->state = 1;
			send_all(s->fd, G.subscribe, G.subscribe_len);
			parse(s);
			continue;
		}
		/* Skip payload straight from the chunk; buffer only headers. */
		while (at < (size_t)r && s->fd >= 0) {
			if (s->skip && s->len == 0) {
				size_t m = (size_t)r - at < s->skip ? (size_t)r - at : (size_t)s->skip;

				s->skip -= m;
				at += m;
				continue;
			}
			size_t m = (size_t)r - at;

			if (m > PEEK + 16)
				m = PEEK + 16;
			s->buf = grow(s->buf, &s->cap, s->len + m, 1);
			memcpy(s->buf + s->len, chunk + at, m);
			s->len += m;
			at += m;
			parse(s);
		}
	}
}

static int connect_one(int ep, int port, int k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)k + 1 };
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char req[256];
	int len;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	len = snprintf(req, sizeof(req),
		       "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
		       "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		       "Sec-WebSocket-Version: 13\r\n\r\n",
		       port);
	send_all(fd, req, (size_t)len);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		die("epoll: %s", strerror(errno));
	return fd;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static void write_u32(FILE *f, uint32_t v)
{
	unsigned char b[4] = { v, v >> 8, v >> 16, v >> 24 };

	fwrite(b, 1, 4, f);
}

static void write_u64(FILE *f, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	fwrite(b, 1, 8, f);
}

static void write_arrivals(const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		die("%s: %s", path, strerror(errno));
	write_u32(f, (uint32_t)G.n);
	for (int k = 0; k < G.n; k++) {
		write_u32(f, (uint32_t)G.subs[k].n_arr);
		for (size_t i = 0; i < G.subs[k].n_arr; i++) {
			write_u64(f, G.subs[k].arr[i].seq);
			write_u64(f, G.subs[k].arr[i].ns);
		}
	}
	if (fclose(f))
		die("%s: %s", path, strerror(errno));
}

/* A line from the parent: count or stop. Returns 1 on stop. */
static int on_command(const char *arrivals)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(0);  /* the parent went away */
	if (!strncmp(line, "count", 5)) {
		printf("count %llu %llu %.6f\n", (unsigned long long)G.frames,
		       (unsigned long long)G.bytes, cpu_seconds());
	} else if (!strncmp(line, "stop", 4)) {
		for (int k = 0; k < G.n; k++)
			if (G.subs[k].fd >= 0)
				close(G.subs[k].fd);
		write_arrivals(arrivals);
		puts("done");
		fflush(stdout);
		return 1;
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char chunk[RX_CHUNK];
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 0 };
	int ep, port, next = 0;

	if (argc != 6)
		die("usage: bench_subscribers PORT SCENE N FORMAT ARRIVALS_FILE");
	port = atoi(argv[1]);
	G.n = atoi(argv[3]);
	G.json = !strcmp(argv[4], "json");
	if (port <= 0 || G.n <= 0)
		die("bad PORT or N");
	make_subscribe(argv[2], argv[4]);
	G.subs = calloc((size_t)G.n, sizeof(*G.subs));
	ep = epoll_create1(0);
	if (!G.subs || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev))
		die("setup: %s", strerror(errno));
	setvbuf(stdin, NULL, _IONBF, 0);
	for (;;) {
		struct epoll_event evs[256];
		int n;

		/* Connect in waves of 50 so the listen backlog is never the
		 * bottleneck. */
		for (int end = next + 50 < G.n ? next + 50 : G.n; next < end; next++)
			G.subs[next].fd = connect_one(ep, port, next);
		n = epoll_wait(ep, evs, 256, next < G.n ? 5 : -1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == 0) {
				if (on_command(argv[5]))
					return 0;
				continue;
			}
			if (G.subs[evs[i].data.u32 - 1].fd >= 0)
				on_readable(&G.subs[evs[i].data.u32 - 1], chunk);
		}
	}
}
