/*
 * bench_proto.c: throughput of the edit language and its JSON, the parts of
 * a replay and of a broadcast that are not SQLite or sockets. Prints
 * figures; never a test.
 *
 *   - NDJSON log lines: encode and decode, one set op per line (live edits)
 *     and 100 per line (a script's batches);
 *   - edit_apply of set ops, with and without the inverse and the result;
 *   - replay = decode + apply, in set ops per second (the target is
 *     1,000,000 a second offline);
 *   - encoding an update of the 59 bones of a skeleton, a binary float32
 *     update of 1,100 matrices (a view's frame), and a snapshot of a
 *     100,000-node scene (a tree of four children a node, and one node with
 *     99,999 children).
 *
 * Times are CPU time of this process, so that other work on the machine
 * does not inflate them.
 *
 * Usage: bench_proto [ops]   (default 1,000,000)
 */
#include "codec/proto.h"
#include "codec/proto_bin.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 10000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x853c49e6748fea9bu;

static double rnd_unit(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* A chain-and-fan scene of n nodes named b0..b{n-1}, each under (i-1)/4. */
/* n nodes, each node's parent the (i - 1) / fanout'th: 4 makes a
 * balanced tree, n one parent of every other node. */
static scene *make_scene(int n, int fanout)
{
	scene *s = scene_new();
	edit_batch b;
	edit_error err;
	char id[16], parent[16];

	edit_batch_init(&b);
	for (int i = 0; i < n; i++) {
		edit_op *op;

		snprintf(id, sizeof(id), "b%d", i);
		op = edit_batch_add(&b, EDIT_CREATE, id);
		if (i) {
			snprintf(parent, sizeof(parent), "b%d", (i - 1) / fanout);
			edit_op_set_parent(op, parent);
		}
		op->fields |= EDIT_F_T;
		op->t = vec3_make(0, 0.1, 0);
	}
	if (edit_apply(s, &b, NULL, NULL, &err) != 0) {
		fprintf(stderr, "bench_proto: %s\n", err.message);
		exit(1);
	}
	edit_batch_release(&b);
	scene_update(s, 1, NULL, NULL);
	return s;
}

/* A batch of 'n' set ops (r and t) on random nodes of an 'nodes'-node scene. */
static void random_sets(edit_batch *b, int n, int nodes)
{
	char id[16];

	edit_batch_init(b);
	for (int i = 0; i < n; i++) {
		edit_op *op;

		snprintf(id, sizeof(id), "b%d", (int)((rnd_unit() + 1) / 2 * nodes) % nodes);
		op = edit_batch_add(b, EDIT_SET, id);
		op->fields = EDIT_F_R | EDIT_F_T;
		op->r = (quat){ rnd_unit(), rnd_unit(), rnd_unit(), 1 };
		op->t = vec3_make(rnd_unit(), rnd_unit(), rnd_unit());
	}
}

static void bench_log(int total_ops, int per_line, int nodes)
{
	int lines = total_ops / per_line;
	proto_buf log;
	edit_batch b;
	edit_error err;
	scene *s = make_scene(nodes, 4);
	double t0, t_enc, t_dec = 0, t_apply = 0, t_apply_inv = 0;
	size_t at = 0;
	long ops = 0;
	static proto_log_line chunk[CHUNK];
	/* About CHUNK ops decoded at a time, as a replay holds a few rows. */
	int chunk_lines = per_line >= CHUNK ? 1 : CHUNK / per_line;

	proto_buf_init(&log, 0);
	t0 = now_s();
	for (int i = 0; i < lines; i++) {
		random_sets(&b, per_line, nodes);
		if (proto_encode_log_line(&log, (uint64_t)i + 1, 1700000000000000 + i, &b) != 0)
			exit(1);
		edit_batch_release(&b);
	}
	t_enc = now_s() - t0; /* includes building the batches */

	/* Decode and apply the lines a chunk at a time, timing each stage
	 * apart (a clock read per line would cost more than a line). */
	for (int first = 0; first < lines; first += chunk_lines) {
		int n = lines - first < chunk_lines ? lines - first : chunk_lines;
		double t1 = now_s(), t2, t3;

		for (int i = 0; i < n; i++) {
			const char *line = proto_buf_str(&log) + at, *nl = strchr(line, '\n');

			if (proto_decode_log_line(line, (size_t)(nl - line), NULL, &chunk[i], &err) != 0) {
				fprintf(stderr, "bench_proto: line %d: %s\n", first + i, err.message);
				exit(1);
			}
			at = (size_t)(nl - proto_buf_str(&log)) + 1;
		}
		t2 = now_s();
		for (int i = 0; i < n; i++)
			if (edit_apply(s, &chunk[i].batch, NULL, NULL, &err) != 0)
				exit(1);
		t3 = now_s();
		for (int i = 0; i < n; i++) {
			edit_batch inv;
			edit_result res;

			if (edit_apply(s, &chunk[i].batch, &res, &inv, &err) != 0)
				exit(1);
			edit_result_release(&res);
			edit_batch_release(&inv);
		}
		t_apply_inv += now_s() - t3;
		t_dec += t2 - t1;
		t_apply += t3 - t2;
		for (int i = 0; i < n; i++) {
			ops += chunk[i].batch.n_ops;
			edit_batch_release(&chunk[i].batch);
		}
	}
	printf("%7d op(s) a line, %d lines, %ld set ops on a %d-node scene:\n", per_line, lines, ops,
	       nodes);
	printf("  log size            %.1f MB (%.0f bytes an op)\n", log.len / 1e6,
	       (double)log.len / (double)ops);
	printf("  encode (with build) %.2f M ops/s\n", ops / t_enc / 1e6);
	printf("  decode              %.2f M ops/s, %.0f MB/s\n", ops / t_dec / 1e6,
	       log.len / t_dec / 1e6);
	printf("  apply               %.2f M ops/s (no inverse, no result)\n", ops / t_apply / 1e6);
	printf("  apply + inverse     %.2f M ops/s (inverse and result made)\n",
	       ops / t_apply_inv / 1e6);
	printf("  replay              %.2f M ops/s (decode + apply)\n",
	       ops / (t_dec + t_apply) / 1e6);
	proto_buf_release(&log);
	scene_free(s);
}

static void bench_broadcast(void)
{
	scene *s = make_scene(59, 4), *big = make_scene(100000, 4);
	int world[59];
	proto_buf b;
	double t0, t;
	int rounds = 20000;

	for (int i = 0; i < 59; i++)
		world[i] = scene_at(s, i);
	proto_buf_init(&b, 16);
	t0 = now_s();
	for (int i = 0; i < rounds; i++) {
		proto_buf_reset(&b);
		if (proto_encode_update(&b, "demo", (uint64_t)i, s, world, 59, NULL, 0, NULL, 0))
			exit(1);
	}
	t = (now_s() - t0) / rounds;
	printf("update of 59 world matrices: %zu bytes, %.1f us to encode\n", b.len, t * 1e6);
	t0 = now_s();
	proto_buf_reset(&b);
	if (proto_encode_snapshot(&b, "big", 1, big))
		exit(1);
	t = now_s() - t0;
	printf("snapshot of 100,000 nodes: %.1f MB, %.0f ms to encode (%.0f MB/s)\n", b.len / 1e6,
	       t * 1e3, b.len / t / 1e6);
	/* What a view's frame carries: 1,100 matrices in float32, about 1%
	 * of the big scene, as binary updates with no records. */
	{
		int seen[1100];

		for (int i = 0; i < 1100; i++)
			seen[i] = scene_at(big, 50000 + i);
		t0 = now_s();
		for (int i = 0; i < 2000; i++) {
			proto_buf_reset(&b);
			if (proto_bin_encode_update(&b, PROTO_FORMAT_F32, "big", (uint64_t)i, (uint64_t)i - 1,
						    big, seen,
						    1100, NULL, 0, NULL, 0))
				exit(1);
		}
		t = (now_s() - t0) / 2000;
		printf("binary float32 update of 1,100 world matrices: %zu bytes, %.1f us to encode\n",
		       b.len, t * 1e6);
	}
	/* A wide scene: every record names its index among 99,999 siblings. */
	scene_free(big);
	big = make_scene(100000, 100000);
	t0 = now_s();
	proto_buf_reset(&b);
	if (proto_encode_snapshot(&b, "wide", 1, big))
		exit(1);
	t = now_s() - t0;
	printf("snapshot of 100,000 nodes, 99,999 of them children of one: %.1f MB, %.0f ms to encode\n",
	       b.len / 1e6, t * 1e3);
	proto_buf_release(&b);
	scene_free(s);
	scene_free(big);
}

int main(int argc, char **argv)
{
	int ops = argc > 1 ? atoi(argv[1]) : 1000000;

	if (ops < 100) {
		fprintf(stderr, "usage: bench_proto [ops >= 100]\n");
		return 2;
	}
	bench_log(ops, 1, 10000);
	bench_log(ops, 100, 10000);
	bench_broadcast();
	return 0;
}
