/*
 * bench_store.c: how fast the durable log is.
 *
 * A program that prints figures, never a test. On a real database file (in
 * --dir, default the system's temporary directory):
 *
 *   - acknowledged batches per second and the p50 / p99 ack latency of
 *     single-op batches (one set of a node's t, decoded from JSON as the
 *     server would), from C clients in a closed loop: each client sends its
 *     next batch as soon as the previous one is acknowledged, and a turn of
 *     the loop takes every batch that has arrived. With group commit the
 *     turn's batches share one transaction and are acknowledged after it;
 *     "per batch" commits each in its own transaction, acknowledging it
 *     right after. Under synchronous=FULL and NORMAL. A batch's latency runs
 *     from the start of the turn it arrived for to its ack.
 *   - replay speed: a scene's whole log applied from empty (engine_at with
 *     no snapshot to start from, best of three), in set ops per second, for
 *     batches of 1 and of 10 set ops of t on a 1000-node scene; the engine
 *     reads each row's binary image of its ops (rows logged before schema 3
 *     would be read from JSON); and the time engine_check (`rigd check`)
 *     takes over the same database, which replays it too;
 *   - the codec alone: decoding the same batches' ops from their JSON
 *     (proto_decode_ops, cJSON) and from their binary image
 *     (engine_ops_decode_bin), in set ops per second;
 *   - open time of a scene with 1,000,000 logged single-op batches (the
 *     engine snapshots it every ENGINE_DEFAULT_SNAPSHOT_OPS logged ops), and
 *     the database's size.
 *
 * Usage: bench_store [--quick] [--dir DIR] [--only acks|replay|open]
 * Progress goes to stderr, the table to stdout.
 */
#include "codec/proto.h"
#include "core/err.h"
#include "engine/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err, engine *e)
{
	fprintf(stderr, "bench_store: %s: %s%s%s\n", what, err_code(err), e ? ": " : "",
		e ? engine_errmsg(e) : "");
	exit(1);
}

static char dir[512];

static void db_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
	char p[600];
	const char *suffix[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", out, suffix[i]);
		unlink(p);
	}
}

static void db_remove(const char *path)
{
	char p[600];
	const char *suffix[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
		unlink(p);
	}
}

static engine *open_engine(const char *path, bool sync_normal, int snapshot_ops)
{
	engine_opts o = engine_opts_default();
	o.sync_normal = sync_normal;
	if (snapshot_ops)
		o.snapshot_ops = snapshot_ops;
	int err;
	char msg[512];
	engine *e = engine_open(path, &o, &err, msg, sizeof(msg));
	if (!e) {
		fprintf(stderr, "bench_store: %s\n", msg);
		exit(1);
	}
	return e;
}

static void submit_json(engine *e, const char *scene_name, const char *json)
{
	edit_batch b;
	edit_error er;
	int rc = proto_decode_batch(json, strlen(json), NULL, &b, &er);
	if (!rc)
		rc = engine_submit(e, scene_name, &b, NULL, &er);
	edit_batch_release(&b);
	if (rc) {
		fprintf(stderr, "bench_store: %s: %s\n", json, er.message);
		exit(1);
	}
}

/* A scene of 'n' nodes n0..n{n-1}: n/10 roots with nine children each, a
 * rig-like spread where a set recomputes one to ten matrices. */
static void make_nodes(engine *e, const char *name, int n)
{
	int err = engine_scene_create(e, name);
	if (err)
		die("scene_create", err, e);
	char json[256];
	int roots = n / 10;
	for (int i = 0; i < n; i++) {
		if (i < roots)
			snprintf(json, sizeof(json), "{\"ops\":[{\"op\":\"create\",\"id\":\"n%d\"}]}", i);
		else
			snprintf(json, sizeof(json),
				 "{\"ops\":[{\"op\":\"create\",\"id\":\"n%d\",\"parent\":\"n%d\","
				 "\"t\":[0,1,0]}]}",
				 i, i % roots);
		submit_json(e, name, json);
	}
	if ((err = engine_commit(e)))
		die("commit", err, e);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* --- acknowledged batches per second --- */

typedef struct ack_row {
	const char *mode;
	const char *sync;
	int clients;
	long batches;
	double per_s;
	double p50_ms, p99_ms;
} ack_row;

/*
 * 'clients' clients in a closed loop for at least 'min_s' seconds and
 * 'min_batches' batches. Every turn takes one batch from each client (all
 * of them were acknowledged in the previous turn).
 */
static ack_row run_acks(bool group, bool sync_normal, int clients, double min_s, long min_batches)
{
	char path[600];
	db_path(path, sizeof(path), "bench_acks.db");
	engine *e = open_engine(path, sync_normal, 0);
	make_nodes(e, "s", 100);
	long cap = 1 << 16, n = 0;
	double *lat = malloc(sizeof(*lat) * (size_t)cap);
	long seq_per_client = 0;
	char json[256];
	double t0 = now_s();
	while (now_s() - t0 < min_s || n < min_batches) {
		seq_per_client++;
		double turn = now_s();
		for (int c = 0; c < clients; c++) {
			snprintf(json, sizeof(json),
				 "{\"ops\":[{\"op\":\"set\",\"id\":\"n%d\",\"t\":[%ld,%d,0.5]}],"
				 "\"client\":\"c%d\",\"client_seq\":%ld}",
				 c % 100, seq_per_client, c, c, seq_per_client);
			submit_json(e, "s", json);
			if (!group) {
				int err = engine_commit(e);
				if (err)
					die("commit", err, e);
				if (n == cap)
					lat = realloc(lat, sizeof(*lat) * (size_t)(cap *= 2));
				lat[n++] = now_s() - turn;
			}
		}
		if (group) {
			int err = engine_commit(e);
			if (err)
				die("commit", err, e);
			double acked = now_s() - turn;
			for (int c = 0; c < clients; c++) {
				if (n == cap)
					lat = realloc(lat, sizeof(*lat) * (size_t)(cap *= 2));
				lat[n++] = acked;
			}
		}
		engine_update(e, "s", NULL, NULL);
	}
	double elapsed = now_s() - t0;
	qsort(lat, (size_t)n, sizeof(*lat), cmp_double);
	ack_row r = {
		.mode = group ? "group commit" : "per batch",
		.sync = sync_normal ? "NORMAL" : "FULL",
		.clients = clients,
		.batches = n,
		.per_s = (double)n / elapsed,
		.p50_ms = lat[n / 2] * 1e3,
		.p99_ms = lat[(long)((double)n * 0.99)] * 1e3,
	};
	free(lat);
	engine_close(e);
	db_remove(path);
	return r;
}

/* --- replay --- */

/* The ops of one logged batch of 'ops_per' set ops of t, as JSON. */
static void set_batch_json(char *json, long i, int ops_per)
{
	size_t len = (size_t)sprintf(json, "{\"ops\":[");
	for (int k = 0; k < ops_per; k++)
		len += (size_t)sprintf(json + len, "%s{\"op\":\"set\",\"id\":\"n%ld\",\"t\":[%.17g,1,%ld]}",
				       k ? "," : "", (i * ops_per + k) % 1000, (double)i / 7, i % 13);
	sprintf(json + len, "]}");
}

/* Logs 'batches' batches of 'ops_per' set ops (groups of 1000 per commit)
 * over a 1000-node scene, then times a replay of the whole log. Returns set
 * ops per second; *seconds the replay time, *check_s engine_check's. */
static double run_replay(long batches, int ops_per, double *seconds, double *check_s)
{
	char path[600];
	db_path(path, sizeof(path), "bench_replay.db");
	/* No snapshot in the way: the replay starts from empty. */
	engine *e = open_engine(path, true, 1000000000);
	make_nodes(e, "s", 1000);
	char *json = malloc(64 + (size_t)ops_per * 96);
	for (long i = 0; i < batches; i++) {
		set_batch_json(json, i, ops_per);
		submit_json(e, "s", json);
		if (i % 1000 == 999) {
			int err = engine_commit(e);
			if (err)
				die("commit", err, e);
			engine_update(e, "s", NULL, NULL);
		}
	}
	int err = engine_commit(e);
	if (err)
		die("commit", err, e);
	free(json);
	int64_t last = engine_seq(e, "s");
	engine_update(e, "s", NULL, NULL);
	uint64_t live = scene_hash(engine_scene(e, "s"));
	/* The best of three (the first also warms the page cache). */
	*seconds = 1e9;
	for (int k = 0; k < 3; k++) {
		scene *at = NULL;
		double t0 = now_s();
		err = engine_at(e, "s", last, &at);
		double t = now_s() - t0;
		if (err)
			die("engine_at", err, e);
		if (t < *seconds)
			*seconds = t;
		if (scene_hash(at) != live) {
			fprintf(stderr, "bench_store: the replay differs from the live scene\n");
			exit(1);
		}
		scene_free(at);
	}
	double t0 = now_s();
	err = engine_check(e, NULL, NULL);
	*check_s = now_s() - t0;
	if (err)
		die("engine_check", err, e);
	engine_close(e);
	db_remove(path);
	return (double)batches * ops_per / *seconds;
}

/* --- the codec alone --- */

/* Decodes 'n' distinct batches of 'ops_per' set ops from JSON and from their
 * binary image, best of three each; set ops per second in *json_per_s and
 * *bin_per_s. */
static void run_codec(long n, int ops_per, double *json_per_s, double *bin_per_s)
{
	char **json = malloc(sizeof(*json) * (size_t)n);
	size_t *json_len = malloc(sizeof(*json_len) * (size_t)n);
	unsigned char **bin = malloc(sizeof(*bin) * (size_t)n);
	size_t *bin_len = malloc(sizeof(*bin_len) * (size_t)n);
	proto_limits lim = proto_limits_default();
	for (long i = 0; i < n; i++) {
		char batch[64 + 10 * 96];
		set_batch_json(batch, i, ops_per);
		edit_batch b;
		edit_error er;
		if (proto_decode_batch(batch, strlen(batch), NULL, &b, &er))
			die("decode", er.code, NULL);
		proto_buf buf;
		proto_buf_init(&buf, 0);
		if (proto_encode_ops(&buf, &b) || engine_ops_encode_bin(&b, &bin[i], &bin_len[i]))
			die("encode", RIGD_E_NOMEM, NULL);
		json_len[i] = buf.len;
		json[i] = proto_buf_take(&buf);
		proto_buf_release(&buf);
		edit_batch_release(&b);
	}
	double best_json = 1e9, best_bin = 1e9;
	long ops = 0;
	for (int k = 0; k < 3; k++) {
		double t0 = now_s();
		for (long i = 0; i < n; i++) {
			edit_batch b;
			if (proto_decode_ops(json[i], json_len[i], &lim, &b, NULL))
				die("proto_decode_ops", RIGD_E_BAD_JSON, NULL);
			ops += b.n_ops;
			edit_batch_release(&b);
		}
		double t1 = now_s();
		for (long i = 0; i < n; i++) {
			edit_batch b;
			if (engine_ops_decode_bin(bin[i], bin_len[i], &b))
				die("engine_ops_decode_bin", RIGD_E_IO, NULL);
			ops -= b.n_ops;
			edit_batch_release(&b);
		}
		double t2 = now_s();
		if (t1 - t0 < best_json)
			best_json = t1 - t0;
		if (t2 - t1 < best_bin)
			best_bin = t2 - t1;
	}
	if (ops != 0)
		die("the two decoders disagree", RIGD_E_INTERNAL, NULL);
	*json_per_s = (double)n * ops_per / best_json;
	*bin_per_s = (double)n * ops_per / best_bin;
	for (long i = 0; i < n; i++) {
		free(json[i]);
		free(bin[i]);
	}
	free(json);
	free(json_len);
	free(bin);
	free(bin_len);
}

/* --- open time --- */

static off_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? sb.st_size : 0;
}

/* Logs 'batches' single-op batches into a 100-node scene (groups of 10000),
 * closes, and times engine_open. */
static double run_open(long batches, double *mb, double *build_s)
{
	char path[600];
	db_path(path, sizeof(path), "bench_open.db");
	engine *e = open_engine(path, true, 0);
	make_nodes(e, "big", 100);
	double t0 = now_s();
	edit_batch b;
	edit_batch_init(&b);
	edit_op *op = edit_batch_add(&b, EDIT_SET, "n0");
	for (long i = 0; i < batches; i++) {
		snprintf(op->id, sizeof(op->id), "n%ld", i % 100);
		op->fields = EDIT_F_T;
		op->t = vec3_make((double)i, 1, 2);
		edit_error er;
		int err = engine_submit(e, "big", &b, NULL, &er);
		if (err)
			die("submit", err, e);
		if (i % 10000 == 9999) {
			if ((err = engine_commit(e)))
				die("commit", err, e);
			engine_update(e, "big", NULL, NULL);
			if (i % 100000 == 99999)
				fprintf(stderr, "  logged %ld batches\r", i + 1);
		}
	}
	edit_batch_release(&b);
	int err = engine_commit(e);
	if (err)
		die("commit", err, e);
	*build_s = now_s() - t0;
	fprintf(stderr, "\n");
	engine_update(e, "big", NULL, NULL);
	uint64_t live = scene_hash(engine_scene(e, "big"));
	engine_close(e);
	*mb = (double)file_size(path) / 1e6;
	t0 = now_s();
	e = open_engine(path, true, 0);
	double open_s = now_s() - t0;
	if (engine_seq(e, "big") != batches + 100 || scene_hash(engine_scene(e, "big")) != live) {
		fprintf(stderr, "bench_store: the reopened scene differs\n");
		exit(1);
	}
	engine_close(e);
	db_remove(path);
	return open_s;
}

int main(int argc, char **argv)
{
	bool quick = false;
	const char *only = NULL;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s", tmp && *tmp ? tmp : "/tmp");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
			snprintf(dir, sizeof(dir), "%s", argv[++i]);
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
			   (strcmp(argv[i + 1], "acks") == 0 || strcmp(argv[i + 1], "replay") == 0 ||
			    strcmp(argv[i + 1], "open") == 0)) {
			only = argv[++i];
		} else {
			fprintf(stderr, "usage: bench_store [--quick] [--dir DIR] [--only acks|replay|open]\n");
			return 2;
		}
	}
	double secs = quick ? 0.5 : 3;
	long min_batches = quick ? 200 : 1000;

	printf("rigd store benchmark (database files in %s)\n", dir);
	if (only && strcmp(only, "acks") != 0)
		goto replay;
	printf("\nacknowledged single-op batches, closed loop\n");
	printf("%-14s %-7s %8s %9s %12s %9s %9s\n", "commit", "sync", "clients", "batches",
	       "batches/s", "p50 ms", "p99 ms");
	struct {
		bool group, normal;
		int clients;
	} cases[] = {
		{ true, false, 64 }, { false, false, 64 }, { true, true, 64 }, { false, true, 64 },
		{ true, false, 1 }, { true, false, 256 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fprintf(stderr, "  acks: case %zu\n", i + 1);
		ack_row r = run_acks(cases[i].group, cases[i].normal, cases[i].clients, secs,
				     min_batches);
		printf("%-14s %-7s %8d %9ld %12.0f %9.2f %9.2f\n", r.mode, r.sync, r.clients,
		       r.batches, r.per_s, r.p50_ms, r.p99_ms);
		fflush(stdout);
	}

replay:
	if (only && strcmp(only, "replay") != 0)
		goto open;
	printf("\nreplay from empty (engine_at at the last seq, no snapshot; check: engine_check)\n");
	printf("%-22s %10s %10s %14s %10s\n", "batches", "set ops", "seconds", "set ops/s",
	       "check s");
	long rb = quick ? 20000 : 200000;
	struct {
		long batches;
		int ops_per;
	} rep[] = { { rb, 1 }, { rb / 2, 10 } };
	for (size_t i = 0; i < 2; i++) {
		fprintf(stderr, "  replay: case %zu\n", i + 1);
		double s = 0, check_s = 0;
		double per_s = run_replay(rep[i].batches, rep[i].ops_per, &s, &check_s);
		char what[32];
		snprintf(what, sizeof(what), "%ld x %d op%s", rep[i].batches, rep[i].ops_per,
			 rep[i].ops_per > 1 ? "s" : "");
		printf("%-22s %10ld %10.3f %14.0f %10.3f\n", what, rep[i].batches * rep[i].ops_per, s,
		       per_s, check_s);
		fflush(stdout);
	}
	printf("\ndecoding logged ops alone (best of three)\n");
	printf("%-22s %16s %16s\n", "batches", "JSON set ops/s", "binary set ops/s");
	for (size_t i = 0; i < 2; i++) {
		double json_per_s = 0, bin_per_s = 0;
		long n = rep[i].batches / (quick ? 1 : 4);
		run_codec(n, rep[i].ops_per, &json_per_s, &bin_per_s);
		char what[32];
		snprintf(what, sizeof(what), "%ld x %d op%s", n, rep[i].ops_per,
			 rep[i].ops_per > 1 ? "s" : "");
		printf("%-22s %16.0f %16.0f\n", what, json_per_s, bin_per_s);
		fflush(stdout);
	}

open:
	if (only && strcmp(only, "open") != 0)
		return 0;
	long ob = quick ? 100000 : 1000000;
	fprintf(stderr, "  open: logging %ld batches\n", ob);
	double mb = 0, build_s = 0;
	double open_s = run_open(ob, &mb, &build_s);
	printf("\nopen a scene with %ld logged batches (snapshot every %d ops)\n", ob,
	       ENGINE_DEFAULT_SNAPSHOT_OPS);
	printf("  open: %.3f s   database: %.1f MB   logging them took %.1f s (%.0f batches/s, "
	       "groups of 10000, NORMAL)\n",
	       open_s, mb, build_s, (double)ob / build_s);
	return 0;
}
