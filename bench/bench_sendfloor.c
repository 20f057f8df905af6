/*
 * bench_sendfloor: the floor under bench_fanout, a program that does
 * nothing but send(2) one message to each of N loopback TCP connections
 * at HZ rounds a second, as a fan-out with no protocol, no scene and no
 * event loop would.
 *
 *   bench_sendfloor N BYTES HZ SECONDS [PROCS]
 *
 * The receiving ends live in PROCS (4) child processes with one epoll loop
 * each, as bench_subscribers does, which take each message's arrival time;
 * the sender writes the round's start time into the first 8 bytes (0 in
 * the first second's rounds, a warm-up that is not measured). Prints
 * one line: "floor P50_MS P99_MS SENDER_CPU RECEIVERS_CPU DELIVERED", the
 * CPU in seconds per second and DELIVERED the messages received over those
 * sent. Not a test.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "bench_sendfloor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Where each receiving socket is in its current message. */
struct rx {
	size_t at;		/* bytes of the current message read */
	unsigned char head[8];	/* its first 8 bytes: the round's start */
};

static bool write_all(int fd, const void *p, size_t len)
{
	for (const char *q = p; len;) {
		ssize_t w = write(fd, q, len);

		if (w <= 0)
			return false;
		q += w;
		len -= (size_t)w;
	}
	return true;
}

static bool read_all(int fd, void *p, size_t len)
{
	for (char *q = p; len;) {
		ssize_t r = read(fd, q, len);

		if (r <= 0)
			return false;
		q += r;
		len -= (size_t)r;
	}
	return true;
}

/* A receiving process: reads its sockets until the sender's ends close,
 * then writes to 'out' its CPU (ns per second), the count of messages and
 * each one's latency in ns (u64 in the machine's order). */
static void receive(int *fds, int n, size_t bytes, int out)
{
	static unsigned char buf[65536];
	struct rx *rx = calloc((size_t)n, sizeof(*rx));
	size_t cap = 1 << 20, got = 0;
	uint64_t *lat = malloc(cap * sizeof(*lat));
	int ep = epoll_create1(0), open = n;
	double cpu0 = 0;
	uint64_t t_first = 0;

	if (!rx || !lat || ep < 0)
		die("receiver setup");
	for (int k = 0; k < n; k++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)k };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &ev))
			die("epoll_ctl");
	}
	while (open > 0) {
		struct epoll_event evs[256];
		int ready = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < ready; i++) {
			int k = (int)evs[i].data.u32;
			ssize_t r = recv(fds[k], buf, sizeof(buf), MSG_DONTWAIT);
			uint64_t t = now_ns();

			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				epoll_ctl(ep, EPOLL_CTL_DEL, fds[k], NULL);
				open--;
				continue;
			}
			for (size_t p = 0; p < (size_t)r;) {
				struct rx *x = &rx[k];
				size_t m = bytes - x->at;

				if (m > (size_t)r - p)
					m = (size_t)r - p;
				for (size_t b = 0; b < m && x->at + b < 8; b++)
					x->head[x->at + b] = buf[p + b];
				x->at += m;
				p += m;
				if (x->at == bytes) {
					uint64_t start = 0;

					for (int b = 7; b >= 0; b--)
						start = start << 8 | x->head[b];
					x->at = 0;
					if (!start)
						continue;  /* a warm-up round */
					if (!t_first) {
						t_first = t;
						cpu0 = cpu_seconds();
					}
					if (got == cap && !(lat = realloc(lat, (cap *= 2) * sizeof(*lat))))
						die("realloc");
					lat[got++] = t - start;
				}
			}
		}
	}
	{
		/* CPU in nanoseconds per second of receiving, the count, the
		 * latencies. */
		uint64_t head[2] = { (uint64_t)((cpu_seconds() - cpu0) * 1e9 /
						((double)(now_ns() - t_first) / 1e9)), got };

		if (!write_all(out, head, sizeof(head)) || !write_all(out, lat, got * sizeof(*lat)))
			die("write");
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int n, hz, seconds, procs, lst, one = 1;
	int pipes[64][2];
	pid_t child[64];
	uint64_t *all = NULL;
	size_t got = 0;
	double rcpu = 0;
	size_t bytes;
	int *cli, *srv;
	unsigned char *msg;
	double cpu0, secs;
	uint64_t t0, t1 = 0, sent = 0;

	if (argc != 5 && argc != 6)
		return fprintf(stderr, "usage: bench_sendfloor N BYTES HZ SECONDS [PROCS]\n"), 2;
	n = atoi(argv[1]);
	bytes = (size_t)atol(argv[2]);
	hz = atoi(argv[3]);
	seconds = atoi(argv[4]);
	procs = argc == 6 ? atoi(argv[5]) : 4;
	if (n <= 0 || bytes < 8 || hz <= 0 || seconds <= 0 || procs <= 0 || procs > 64 || procs > n)
		return fprintf(stderr, "bench_sendfloor: bad arguments\n"), 2;
	cli = calloc((size_t)n, sizeof(int));
	srv = calloc((size_t)n, sizeof(int));
	msg = calloc(1, bytes);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lst = socket(AF_INET, SOCK_STREAM, 0);
	if (!cli || !srv || !msg || lst < 0 || bind(lst, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lst, 4096) || getsockname(lst, (struct sockaddr *)&a, &alen))
		die("listen");
	for (int k = 0; k < n; k++) {
		cli[k] = socket(AF_INET, SOCK_STREAM, 0);
		if (cli[k] < 0 || connect(cli[k], (struct sockaddr *)&a, sizeof(a)))
			die("connect");
		srv[k] = accept(lst, NULL, NULL);
		if (srv[k] < 0)
			die("accept");
		setsockopt(srv[k], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	for (int p = 0; p < procs; p++) {
		int lo = n * p / procs, hi = n * (p + 1) / procs;

		if (pipe(pipes[p]))
			die("pipe");
		child[p] = fork();
		if (child[p] < 0)
			die("fork");
		if (child[p] == 0) {
			for (int k = 0; k < n; k++)
				close(srv[k]);
			receive(cli + lo, hi - lo, bytes, pipes[p][1]);
			_exit(0);
		}
		close(pipes[p][1]);
	}
	for (int k = 0; k < n; k++)
		close(cli[k]);
	/* A second of warm-up rounds (start 0: not measured), then the run. */
	t0 = now_ns();
	cpu0 = cpu_seconds();
	for (int round = 0; round < hz * (seconds + 1); round++) {
		uint64_t next = t0 + (uint64_t)(round + 1) * 1000000000u / (uint64_t)hz;
		uint64_t start = round < hz ? 0 : now_ns();
		struct timespec ts;

		if (round == hz) {
			t1 = start;
			cpu0 = cpu_seconds();
		}
		for (int b = 0; b < 8; b++)
			msg[b] = (unsigned char)(start >> (8 * b));
		for (int k = 0; k < n; k++)
			if (send(srv[k], msg, bytes, MSG_NOSIGNAL) == (ssize_t)bytes && start)
				sent++;
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	secs = (now_ns() - t1) / 1e9;
	cpu0 = (cpu_seconds() - cpu0) / secs;
	for (int k = 0; k < n; k++)
		close(srv[k]);
	for (int p = 0; p < procs; p++) {
		uint64_t head[2];

		if (!read_all(pipes[p][0], head, sizeof(head)) ||
		    !(all = realloc(all, (got + head[1] + 1) * sizeof(*all))) ||
		    !read_all(pipes[p][0], all + got, head[1] * sizeof(*all)))
			die("read");
		rcpu += (double)head[0] / 1e9;
		got += head[1];
		waitpid(child[p], NULL, 0);
	}
	qsort(all, got, sizeof(*all), cmp_u64);
	printf("floor %.3f %.3f %.3f %.3f %.4f\n", got ? all[got / 2] / 1e6 : 0.0,
	       got ? all[(size_t)((double)got * 0.99)] / 1e6 : 0.0, cpu0, rcpu,
	       sent ? (double)got / (double)sent : 0.0);
	return 0;
}
