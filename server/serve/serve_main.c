/*
 * serve_main.c: rigd's server, wired together (see serve_main.h). Opens the engine
 * and the socket layer, hands net the callbacks of the modules, runs the
 * loop until a signal, then commits what is pending and says goodbye.
 *
 * A message can be followed by file name: net -> ws.c -> codec/proto
 * (decode) -> auth.c -> turn.c -> engine -> core/edit -> core/scene; at the
 * end of the turn -> journal.c -> rooms.c -> fanout.c -> codec/proto
 * (encode) -> net. An HTTP request: net -> http.c -> routes.c (the table:
 * role, when, handler) -> auth.c -> the handler, now or after the commit.
 *
 * Slow clients: a subscription is a cursor (the seq the client has), not a
 * queue of frames. A client's update is built when its socket can take it,
 * from the scene's journal, so it carries the latest matrices of
 * everything that changed since its cursor; a client older than the
 * journal gets a snapshot. Replies are queued per client up to a byte cap;
 * a client that lets its queue overflow is closed with 1008. Memory per
 * client is therefore bounded however slowly it reads.
 *
 * Nothing in serve includes libwebsockets.h, cJSON.h or sqlite3.h.
 */
#include "serve_main.h"
#include "auth.h"
#include "clients.h"
#include "fanout.h"
#include "http.h"
#include "log.h"
#include "rooms.h"
#include "seed.h"
#include "serve_hooks.h"
#include "server.h"
#include "turn.h"
#include "util.h"
#include "ws.h"

#include "core/err.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;
static net *signal_net;

/* mkdir -p of the directory part of 'path'. */
static int make_parent_dirs(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * Without --web: the viewer installed with this rigd, RIGD_WEB_FROM_BIN
 * (share/rigd/web as cmake --install lays it out) from the directory of
 * the executable itself, whatever the working directory; else ./web as
 * before (a rigd run from the build tree, beside a checkout).
 */
static const char *installed_web(char *buf, size_t cap)
{
#ifdef RIGD_WEB_FROM_BIN
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;
	char *slash;

	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0';
		if (snprintf(buf, cap, "%s/%s", exe, RIGD_WEB_FROM_BIN) < (int)cap &&
		    stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return buf;
	}
#endif
	return NULL;
}

static void on_signal(int sig)
{
	got_signal = sig;
	if (signal_net)
		net_stop(signal_net);
}

static uint32_t boot_id(void)
{
	struct timespec ts;
	uint32_t x;
	FILE *f = fopen("/dev/urandom", "rb");

	if (f && fread(&x, sizeof(x), 1, f) == 1) {
		fclose(f);
		return x;
	}
	if (f)
		fclose(f);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec ^ ((uint32_t)getpid() << 16);
}

static void server_free(struct server *S)
{
	for (int i = 0; i < S->cap_clients; i++)
		if (S->clients[i])
			clients_remove(S, S->clients[i]);
	free(S->clients);
	for (int i = 0; i < S->n_scenes; i++)
		rooms_free(S->scenes[i]);
	free(S->scenes);
	while (S->dhead) {
		struct deferred *d = S->dhead;

		S->dhead = d->next;
		turn_deferred_free(d);
	}
	for (int i = 0; i < S->n_pend; i++)
		free(S->pend[i].report);
	free(S->pend);
	free(S->flight);  /* empty: the last turns answered it */
	free(S->wake);
	free(S->gathered);
	free(S->tokens);
	config_release(&S->o);
}

/* Once a second: clients held by back-pressure that read nothing since,
 * and the cluster's own tick. */
static void serve_tick(void *ctx)
{
	struct server *S = ctx;

	clients_tick(S);
	if (S->hooks && S->hooks->tick)
		S->hooks->tick(S);
}

/* Opens (creating and seeding on first start) the database. 0 or 1 after
 * saying on stderr what was wrong. */
static int open_engine(struct server *S)
{
	engine_opts eo;
	struct stat st;
	char msg[512];
	bool fresh = stat(S->o.db, &st) != 0;
	int err = 0;

	if (fresh && make_parent_dirs(S->o.db) != 0) {
		fprintf(stderr, "rigd: cannot create the directory of %s: %s\n", S->o.db,
			strerror(errno));
		return 1;
	}
	eo = engine_opts_default();
	eo.sync_normal = S->o.sync_normal;
	eo.max_nodes = S->o.max_nodes;
	eo.limits.max_ops = S->o.max_ops;
	/* Tests only: a slow disk (each fsync waits), to watch the loop go on
	 * while a commit runs (tests/e2e/commit_slow.js). */
	if (getenv("RIGD_TEST_SYNC_DELAY_MS"))
		eo.sync_delay_ms = atoi(getenv("RIGD_TEST_SYNC_DELAY_MS"));
	S->e = engine_open(S->o.db, &eo, &err, msg, sizeof(msg));
	if (!S->e) {
		fprintf(stderr, "rigd: cannot open %s: %s (%s)\n", S->o.db, msg, err_code(err));
		return 1;
	}
	if (fresh && engine_scenes(S->e, NULL, 0) == 0 && seed_demo(S->e) != 0) {
		fprintf(stderr, "rigd: cannot seed the demo rig in %s: %s\n", S->o.db,
			engine_errmsg(S->e));
		return 1;
	}
	/* The 2D character is a demo, not the server's business: without it
	 * (its files missing from the web root) rigd serves on. */
	if (S->o.demo2d && seed_demo2d(S->e, S->o.web) != 0)
		fprintf(stderr, "rigd: warning: scene demo2d not imported (the log says why)\n");
	return 0;
}

/* Without --origin: the server's own origin, as a browser that loaded the
 * viewer from it writes it. 0 or -1 (out of memory). */
static int add_own_origin(struct server *S)
{
	char origin[300];
	bool v6 = strchr(S->o.host, ':') != NULL;
	bool loopback = strcmp(S->o.host, "127.0.0.1") == 0 || strcmp(S->o.host, "::1") == 0;
	const char *scheme = net_tls(S->n) ? "https" : "http";
	int rc;

	snprintf(origin, sizeof(origin), v6 ? "%s://[%s]:%d" : "%s://%s:%d", scheme, S->o.host,
		 net_port(S->n));
	rc = net_add_origin(S->n, origin);
	if (loopback) {
		snprintf(origin, sizeof(origin), "%s://localhost:%d", scheme, net_port(S->n));
		rc = rc || net_add_origin(S->n, origin);
	}
	return rc ? -1 : 0;
}

/* Starts the socket layer with the server's callbacks. 0 or 1. */
static int open_net(struct server *S)
{
	net_config ncfg;
	net_callbacks cb;
	struct stat st;

	net_config_defaults(&ncfg);
	ncfg.host = S->o.host;
	ncfg.port = S->o.port;
	ncfg.web_root = S->o.web;
	ncfg.origins = S->o.origins;
	ncfg.n_origins = S->o.n_origins;
	ncfg.max_message = S->o.max_message;
	ncfg.max_fragments = S->o.max_fragments;
	ncfg.max_body = S->o.max_body > S->o.max_gltf ? S->o.max_body : S->o.max_gltf;
	ncfg.idle_timeout_s = S->o.idle_timeout_s;
	ncfg.deflate = S->o.deflate;
	ncfg.libuv = S->o.libuv;
	ncfg.max_connections = S->o.max_clients;
	ncfg.log_level = S->o.log_level > LOG_WARN ? S->o.log_level - 1 : 0;
	ncfg.tls_cert = S->o.tls_cert;
	ncfg.tls_key = S->o.tls_key;
	memset(&cb, 0, sizeof(cb));
	cb.ctx = S;
	cb.http = http_request;
	cb.ws_open = ws_open;
	cb.ws_message = ws_message;
	cb.ws_writable = fanout_writable;
	cb.ws_closed = ws_closed;
	cb.turn = turn_run;
	cb.tick = serve_tick;
	S->n = net_new(&ncfg, &cb);
	if (!S->n)
		return 1;
	if (S->o.n_origins == 0 && add_own_origin(S) != 0) {
		fprintf(stderr, "rigd: out of memory\n");
		return 1;
	}
	if (stat(S->o.web, &st) != 0 || !S_ISDIR(st.st_mode))
		serve_log(LOG_WARN, "web root %s is not a directory: only the API is served",
			  S->o.web);
	return 0;
}

/* --redis: the cluster's hooks, once its flags are checked. 0, or
 * CONFIG_USAGE after saying why on stderr (a rigd built without the
 * cluster has none). */
static int use_cluster(struct server *S, const struct serve_hooks *cluster)
{
	int rc;

	if (!cluster) {
		fprintf(stderr, "rigd: --redis: this rigd was built without the cluster "
			"(cmake -DRIGD_CLUSTER=ON)\n");
		return CONFIG_USAGE;
	}
	if ((rc = cluster->check_config(&S->o, stderr)) != 0)
		return rc;
	S->hooks = cluster;
	return 0;
}

/*
 * Every turn allocates and frees the same few hundred kilobytes: a copy
 * of the update for each subscriber, the batch of frames for each socket,
 * the commit's rows on the writer's thread. With glibc's defaults (a heap
 * top over 128 KiB is given back to the kernel at once) the heap shrank
 * after each turn and grew again in the next, page fault by page fault,
 * and with the writer's thread each shrink also stopped the other core to
 * flush its TLB: at 60 edits/s to 100 subscribers that doubled the CPU per
 * edit (3.5 ms against 1.7). The heap keeps up to HEAP_KEEP free instead;
 * an allocation over HEAP_MMAP (a large import) still gets its own map.
 */
#define HEAP_KEEP (32 << 20)
#define HEAP_MMAP (4 << 20)

static void keep_heap(void)
{
#ifdef __GLIBC__
	mallopt(M_TRIM_THRESHOLD, HEAP_KEEP);
	mallopt(M_MMAP_THRESHOLD, HEAP_MMAP);
#endif
}

int serve_main(int argc, char **argv, const struct serve_hooks *cluster)
{
	struct server S;
	struct sigaction sa;
	static char web_buf[PATH_MAX];
	const char *web;
	int rc, exit_code = 1;

	keep_heap();
	memset(&S, 0, sizeof(S));
	/* CONFIG_DONE: --help or --hash-token has printed its answer. */
	if ((rc = config_parse(argc, argv, &S.o)) != 0) {
		config_release(&S.o);
		return rc == CONFIG_DONE ? 0 : rc;
	}
	serve_log_level = S.o.log_level;
	if (S.o.redis && (rc = use_cluster(&S, cluster)) != 0) {
		config_release(&S.o);
		return rc;
	}
	S.client_dropped = turn_forget_client;
	if (!S.o.web_given && (web = installed_web(web_buf, sizeof(web_buf))))
		S.o.web = web;
	if ((rc = auth_setup(&S)) != 0) {
		server_free(&S);
		return rc;
	}
	S.started = serve_now_s();
	S.boot_id = boot_id();
	S.head = net_frame_head();
	S.lim = proto_limits_default();
	S.lim.max_bytes = S.o.max_message;
	S.lim.edit.max_ops = S.o.max_ops;
	if (open_engine(&S) != 0 || open_net(&S) != 0 || (S.hooks && S.hooks->start(&S) != 0))
		goto out;
	/* Alone, the commits run on the writer's thread; in a cluster the
	 * lease and the log stream expect them on the loop, as before (and
	 * so does RIGD_COMMIT_ON_LOOP=1: bench_commit's peer). */
	if (!S.hooks && !getenv("RIGD_COMMIT_ON_LOOP")) {
		char msg[256];

		if (engine_writer_start(S.e, S.o.db, turn_wake_from_writer, &S, msg, sizeof(msg)) == 0)
			S.pipelined = true;
		else
			serve_log(LOG_WARN, "commits stay on the loop: %s", msg);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	signal_net = S.n;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	printf(strchr(S.o.host, ':') ? "rigd: serving %s://[%s]:%d/ (database %s)\n"
				      : "rigd: serving %s://%s:%d/ (database %s)\n",
	       net_tls(S.n) ? "https" : "http", S.o.host, net_port(S.n), S.o.db);
	fflush(stdout);

	rc = net_run(S.n);
	signal_net = NULL;
	if (rc)
		serve_log(LOG_ERROR, "the event loop failed");
	/* Commit what this last pass received, answer it, then say goodbye.
	 * A glTF import defers what came after it by a turn: run turns until
	 * nothing waits. */
	S.draining = true;
	do
		turn_run(&S);
	while (S.n_pend > 0 || engine_pending(S.e) > 0 || S.dhead || engine_commit_busy(S.e));
	net_drain(S.n, NET_CLOSE_GOING_AWAY, 3000);
	serve_log(LOG_INFO, "stopped by signal %d", (int)got_signal);
	exit_code = rc ? 1 : 0;
out:
	if (S.hooks)  /* its handles close on net's loop, run by net_free */
		S.hooks->stop(&S);
	net_free(S.n);
	engine_close(S.e);
	server_free(&S);
	return exit_code;
}
