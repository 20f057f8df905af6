/*
 * bench_core.c: how fast the transform core is.
 *
 * A program that prints figures, never a test: nothing here fails on a slow
 * machine. In one run, on the same seeded random trees as the oracle test
 * (tests/oracle/random_tree.h, pivots zero so that three.js can hold them):
 *
 *   - full recompute of 1k, 100k and 1M nodes: scene_load, then every root
 *     edited (untimed) and scene_update timed, median of many runs;
 *   - a plain memcpy of the bytes a full recompute writes per node (its
 *     96-byte world matrix; it reads the local matrix and the 4-byte parent
 *     index, 100 B), as the hardware limit;
 *   - three.js's updateMatrixWorld on the same 100k tree, through node and
 *     bench/bench_three.mjs, which also checks its matrices against ours.
 *     This machine is shared, and its speed swings by a third from one
 *     second to the next, so the ratio is taken in rounds: each round times
 *     our full pass and then three.js's call, back to back, in three node
 *     processes (three.js's own speed differs between processes), and the
 *     figure is the median of the rounds' ratios;
 *   - one leaf edit and edits of ever larger subtrees in the 1M tree
 *     (scene_set + scene_update), to show the cost follows the subtree,
 *     next to the latency of one random dependent load in a block as big
 *     as that scene's matrices, the hardware limit for an edit at a random
 *     place, once on 4 KiB pages and once on 2 MiB pages (the scene asks
 *     for those: see "Memory" in server/core/scene_array.c), each line saying how much
 *     of its block the kernel really gave as huge pages;
 *   - the 59-bone rig of docs/transforms.md 6.2;
 *   - structural edits (insert, delete, reparent) in the 100k scene.
 *
 * Usage: bench_core [--no-three]  (--no-three: skip the three.js peer)
 * Progress goes to stderr, the table to stdout.
 */
#include "random_tree.h"
#include "core/scene.h"

#include "core/err.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RIGD_BENCH_FLAGS
#define RIGD_BENCH_FLAGS "unknown"
#endif
#ifndef RIGD_BENCH_THREE
#define RIGD_BENCH_THREE "bench/bench_three.mjs"
#endif

#define TREE_SEED 20240611u /* the oracle test's seed for its large trees */

/* The targets the transform core is built to: ns per node at 100k nodes,
 * and how many times faster than three.js's updateMatrixWorld. */
#define TARGET_NS_PER_NODE_100K 12.0
#define TARGET_THREE_RATIO 50.0
#define TARGET_LEAF_EDIT_NS 1000.0
#define TARGET_STRUCTURAL_NS 2e6

/* What a full recompute touches per node in server/core/scene.c: it reads a
 * local and writes a world matrix (mat34, 96 bytes each) and reads the
 * node's parent index (its record is left alone, see node_marked). */
#define PASS_MATRIX_BYTES 96
#define PASS_WRITE_BYTES PASS_MATRIX_BYTES
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

/* ---------- timing and statistics ---------- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n); sorts v. */
static double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[(int)(q * (n - 1) + 0.5)];
}

static void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		fprintf(stderr, "bench_core: out of memory (%zu bytes)\n", size);
		exit(1);
	}
	return p;
}

/* Stops the benchmark on an error return: a figure measured on a failed
 * edit would be a lie. */
static void check(int rc, const char *what)
{
	if (rc != 0) {
		fprintf(stderr, "bench_core: %s failed: %s\n", what, err_code(rc));
		exit(1);
	}
}

static void progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench_core: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* ---------- the table ---------- */

typedef struct row {
	char what[200];   /* a leading '#' makes it a note line */
	long nodes;       /* 0: not applicable */
	double ns_node;   /* < 0: not applicable */
	double op_ns;     /* < 0: not applicable */
	char ratio[40];
	char target[16];
	const char *verdict; /* "ok", "MISS" or "" */
} row;

static row rows[64];
static int nrows;

static row *add_row(const char *what, long nodes, double ns_node, double op_ns)
{
	row *r;

	if (nrows == (int)(sizeof(rows) / sizeof(rows[0]))) {
		fprintf(stderr, "bench_core: too many rows\n");
		exit(1);
	}
	r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->what, sizeof(r->what), "%s", what);
	r->nodes = nodes;
	r->ns_node = ns_node;
	r->op_ns = op_ns;
	r->verdict = "";
	return r;
}

static void set_ratio(row *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->ratio, sizeof(r->ratio), fmt, ap);
	va_end(ap);
}

static void set_target(row *r, const char *target, bool met)
{
	snprintf(r->target, sizeof(r->target), "%s", target);
	r->verdict = met ? "ok" : "MISS";
}

static void fmt_time(double ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.2f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
}

static void print_table(void)
{
	printf("%-44s %9s %9s %10s  %-24s %-9s %s\n", "case", "nodes", "ns/node", "per op",
	       "ratio", "target", "");
	for (int i = 0; i < nrows; i++) {
		const row *r = &rows[i];
		char nodes[24] = "-", ns_node[24] = "-", op[24];

		if (r->what[0] == '#') {
			printf("%s\n", r->what + 1);
			continue;
		}
		if (r->nodes > 0)
			snprintf(nodes, sizeof(nodes), "%ld", r->nodes);
		if (r->ns_node >= 0)
			snprintf(ns_node, sizeof(ns_node), "%.2f", r->ns_node);
		fmt_time(r->op_ns, op, sizeof(op));
		printf("%-44s %9s %9s %10s  %-24s %-9s %s\n", r->what, nodes, ns_node, op, r->ratio,
		       r->target, r->verdict);
	}
}

static void section(const char *title)
{
	row *r = add_row("", 0, -1, -1);

	snprintf(r->what, sizeof(r->what), "#-- %s", title);
}

/* ---------- helpers on scenes ---------- */

static uint64_t rng = 0x5eed5eedu;

static int pick(int n)
{
	return (int)(rtree_rand(&rng) % (uint64_t)n);
}

static quat random_quat(void)
{
	vec3 axis;

	/* One draw per statement, so the sequence does not depend on the
	 * compiler's order of evaluating arguments. */
	axis.x = rtree_uniform(&rng) - 0.5;
	axis.y = rtree_uniform(&rng) - 0.5;
	axis.z = rtree_uniform(&rng) - 0.5;
	return quat_from_axis_angle(axis, 3 * rtree_uniform(&rng));
}

/* Handles of the roots, for marking a whole scene dirty. */
static int *roots_of(const scene *s, int *count)
{
	int *roots = xmalloc(sizeof(int) * (size_t)scene_count(s)), n = 0;

	for (int i = 0; i < scene_count(s); i += scene_subtree_size(s, scene_at(s, i)))
		roots[n++] = scene_at(s, i);
	*count = n;
	return roots;
}

/* Sets every root's translation to itself: the whole scene becomes dirty
 * and nothing changes. */
static void touch_roots(scene *s, const int *roots, int n)
{
	node_props p;

	for (int i = 0; i < n; i++) {
		scene_props(s, roots[i], &p);
		check(scene_set(s, roots[i], PROP_T, &p), "scene_set");
	}
}

/* Median ns for one full scene_update of 's'. */
static double time_full_update(scene *s, int reps)
{
	int nroots, n = scene_count(s);
	int *roots = roots_of(s, &nroots);
	double *t = xmalloc(sizeof(double) * (size_t)reps), med;

	touch_roots(s, roots, nroots);
	scene_update(s, 1, NULL, NULL); /* first touch of pages, untimed */
	for (int r = 0; r < reps; r++) {
		double t0;
		long done;

		touch_roots(s, roots, nroots);
		t0 = now_ns();
		done = scene_update(s, 2 + (uint64_t)r, NULL, NULL);
		t[r] = now_ns() - t0;
		if (done != n) {
			fprintf(stderr, "bench_core: update recomputed %ld of %d\n", done, n);
			exit(1);
		}
	}
	med = quantile(t, reps, 0.5);
	free(t);
	free(roots);
	return med;
}

/*
 * A block of 'bytes' placed as the scene places its big arrays: 2 MiB
 * aligned and, with 'huge', offered as transparent huge pages; without,
 * madvise(MADV_NOHUGEPAGE) keeps it on 4 KiB pages even where THP is
 * "always". *raw gets the pointer to free.
 */
static void *page_block(size_t bytes, bool huge, void **raw)
{
	char *p = xmalloc(bytes + HUGE_PAGE_BYTES);

	*raw = p;
	p += HUGE_PAGE_BYTES - (uintptr_t)p % HUGE_PAGE_BYTES;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
	if (bytes >= HUGE_PAGE_BYTES)
		(void)madvise(p, bytes & ~(HUGE_PAGE_BYTES - 1), huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
	return p;
}

/* Median ns to copy 'bytes' with memcpy between two buffers of that size,
 * on huge pages as the scene's arrays are. */
static double time_memcpy(size_t bytes, int reps)
{
	void *src_raw, *dst_raw;
	char *src = page_block(bytes, true, &src_raw), *dst = page_block(bytes, true, &dst_raw);
	double *t = xmalloc(sizeof(double) * (size_t)reps), med;

	memset(src, 1, bytes);
	memset(dst, 2, bytes);
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		memcpy(dst, src, bytes);
		t[r] = now_ns() - t0;
		src[(size_t)r % bytes] = (char)r; /* keep the copies from being merged */
	}
	if (dst[bytes / 2] != src[bytes / 2])
		fprintf(stderr, "bench_core: memcpy check failed\n");
	med = quantile(t, reps, 0.5);
	free(t);
	free(src_raw);
	free(dst_raw);
	return med;
}

/* kB of this process's anonymous memory on transparent huge pages, or -1
 * when the kernel does not say. */
static long anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

typedef struct latency {
	double ns;
	long huge_mb; /* of the block, on huge pages; -1 unknown */
} latency;

/*
 * ns for one load that depends on the previous one, at random places in a
 * block of 'bytes': the memory latency that an edit at a random place in a
 * big scene cannot beat. The block is one random cycle through all of its
 * cache lines (Sattolo's shuffle), so every load is a fresh line. 'huge':
 * see page_block.
 */
static latency time_load_latency(size_t bytes, bool huge)
{
	size_t lines = bytes / 64, p = 0;
	long huge_before = anon_huge_kb();
	void *raw;
	size_t *next = page_block(bytes, huge, &raw);
	const int steps = 200000;
	latency res;
	double t0;

	for (size_t i = 0; i < lines; i++)
		next[i * 8] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(rtree_rand(&rng) % i), tmp = next[i * 8];

		next[i * 8] = next[j * 8];
		next[j * 8] = tmp;
	}
	res.huge_mb = huge_before < 0 ? -1 : (anon_huge_kb() - huge_before) >> 10;
	t0 = now_ns();
	for (int k = 0; k < steps; k++)
		p = next[p * 8];
	res.ns = (now_ns() - t0) / steps;
	if (p >= lines) /* uses p, so the chase cannot be optimised away */
		fprintf(stderr, "bench_core: latency chase went astray\n");
	free(raw);
	return res;
}

static int reps_for(long n)
{
	long r = 20000000L / n;

	return (int)(r < 11 ? 11 : r > 2001 ? 2001 : r);
}

/* ---------- three.js through node ---------- */

/* Writes 'path' as bench_three.mjs reads it: n, then per node in preorder
 * parent, t[3], r[4], s[3] (11 doubles), then our 16-double world matrices. */
static int write_tree_file(const char *path, const scene *s)
{
	FILE *f = fopen(path, "wb");
	double n = scene_count(s);
	int ok;

	if (!f)
		return RIGD_E_IO;
	ok = fwrite(&n, sizeof(n), 1, f) == 1;
	for (int i = 0; ok && i < scene_count(s); i++) {
		int node = scene_at(s, i), parent = scene_parent(s, node);
		node_props p;
		double rec[11];

		scene_props(s, node, &p);
		rec[0] = parent < 0 ? -1 : scene_pos(s, parent);
		rec[1] = p.t.x, rec[2] = p.t.y, rec[3] = p.t.z;
		rec[4] = p.r.x, rec[5] = p.r.y, rec[6] = p.r.z, rec[7] = p.r.w;
		rec[8] = p.s.x, rec[9] = p.s.y, rec[10] = p.s.z;
		ok = fwrite(rec, sizeof(rec), 1, f) == 1;
	}
	for (int i = 0; ok && i < scene_count(s); i++) {
		mat4 w = scene_world(s, scene_at(s, i));

		ok = fwrite(w.m, sizeof(w.m), 1, f) == 1;
	}
	if (fclose(f) != 0)
		ok = 0;
	return ok ? 0 : RIGD_E_IO;
}

#define THREE_PROCESSES 3
#define THREE_ROUNDS 5

typedef struct three_result {
	bool ok;
	double auto_ns_node;   /* matrixAutoUpdate = true: compose + multiply */
	double manual_ns_node; /* matrixAutoUpdate = false, force: multiply only */
	double ratio;          /* median over the rounds of three auto / our pass */
	double ratio_min, ratio_max;
	double max_rel_diff;   /* three.js world matrices against ours */
	char why[150];
} three_result;

/* Starts node on bench_three.mjs with 'tree' as its argument and pipes to
 * its stdin (*to) and from its stdout (*from). Returns its pid, or -1. */
static pid_t start_three(const char *tree, FILE **to, FILE **from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in) != 0)
		return -1;
	if (pipe(out) != 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execlp("node", "node", RIGD_BENCH_THREE, tree, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = pid > 0 ? fdopen(in[1], "w") : NULL;
	*from = pid > 0 ? fdopen(out[0], "r") : NULL;
	if (!*to || !*from) {
		if (*to)
			fclose(*to);
		else
			close(in[1]);
		if (*from)
			fclose(*from);
		else
			close(out[0]);
		return -1;
	}
	return pid;
}

/* The next line from node that starts with 'key', its number in *v. */
static bool read_value(FILE *from, const char *key, double *v)
{
	char line[256];
	size_t k = strlen(key);

	while (fgets(line, sizeof(line), from))
		if (strncmp(line, key, k) == 0 && line[k] == ' ')
			return sscanf(line + k + 1, "%lf", v) == 1;
	return false;
}

/* One node process on 'tree' (see run_three): its paired ratios into
 * ratio[0 .. THREE_ROUNDS), its timings into theirs[] and *manual. */
static bool three_process(scene *s, const char *tree, double *ratio, double *theirs,
			  double *manual, double *max_rel_diff)
{
	int status = 0, n = scene_count(s);
	FILE *to, *from;
	pid_t pid = start_three(tree, &to, &from);
	bool ok;

	if (pid < 0)
		return false;
	ok = read_value(from, "max_rel_diff", max_rel_diff);
	for (int r = 0; ok && r < THREE_ROUNDS; r++) {
		/* node idles between its timings, but V8's collector and compiler
		 * threads go on a while after each: let them end before ours. */
		const struct timespec settle = { 0, 200 * 1000 * 1000 };
		double ours;

		nanosleep(&settle, NULL);
		ours = time_full_update(s, reps_for(n)) / (double)n;

		ok = fputs("auto\n", to) >= 0 && fflush(to) == 0 &&
		     read_value(from, "auto_ns_per_node", &theirs[r]);
		ratio[r] = ok ? theirs[r] / ours : 0;
	}
	fclose(to); /* node then times the multiplications alone and ends */
	ok = ok && read_value(from, "manual_ns_per_node", manual);
	fclose(from);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
}

/* three.js on the tree of 's': THREE_PROCESSES node processes (three.js's
 * speed differs from one process to the next by up to a third), each
 * THREE_ROUNDS rounds of our full pass followed by three.js's call. */
static three_result run_three(scene *s)
{
	enum { ALL = THREE_PROCESSES * THREE_ROUNDS };
	three_result res = { .ok = false };
	char path[] = "/tmp/rigd-bench-tree-XXXXXX";
	double ratio[ALL], theirs[ALL], manual[THREE_PROCESSES];
	int fd = mkstemp(path);

	if (fd < 0) {
		snprintf(res.why, sizeof(res.why), "mkstemp: %s", strerror(errno));
		return res;
	}
	close(fd);
	if (write_tree_file(path, s) != 0) {
		snprintf(res.why, sizeof(res.why), "cannot write %s", path);
		goto out;
	}
	for (int k = 0; k < THREE_PROCESSES; k++) {
		if (!three_process(s, path, ratio + k * THREE_ROUNDS, theirs + k * THREE_ROUNDS,
				   &manual[k], &res.max_rel_diff)) {
			snprintf(res.why, sizeof(res.why),
				 "node bench_three.mjs failed (is node on PATH, web/node_modules installed?)");
			goto out;
		}
	}
	res.auto_ns_node = quantile(theirs, ALL, 0.5);
	res.manual_ns_node = quantile(manual, THREE_PROCESSES, 0.5);
	res.ratio = quantile(ratio, ALL, 0.5);
	res.ratio_min = quantile(ratio, ALL, 0);
	res.ratio_max = quantile(ratio, ALL, 1);
	res.ok = true;
out:
	unlink(path);
	return res;
}

/* ---------- sections ---------- */

typedef struct tree_bench {
	long n;
	double load_ns_node;
	double update_ns_node;
	double memcpy_ns_node;
} tree_bench;

static scene *build(const rtree *t, double *load_ns)
{
	scene *s = scene_new();
	double t0;

	if (!s) {
		fprintf(stderr, "bench_core: out of memory\n");
		exit(1);
	}
	t0 = now_ns();
	check(rtree_load(t, s), "scene_load");
	*load_ns = now_ns() - t0;
	return s;
}

static tree_bench bench_full(scene *s, double load_ns)
{
	tree_bench b;
	long n = scene_count(s);
	int reps = reps_for(n);

	b.n = n;
	b.load_ns_node = load_ns / (double)n;
	b.update_ns_node = time_full_update(s, reps) / (double)n;
	b.memcpy_ns_node = time_memcpy((size_t)n * PASS_WRITE_BYTES, reps) / (double)n;
	return b;
}

/* Leaf and subtree edits in 's' (the 1M tree); 'scene_huge_mb' is how much
 * of the process was on huge pages with the scene built (-1: unknown). */
static void bench_edits(scene *s, double full_ns_node, long scene_huge_mb)
{
	int n = scene_count(s), nleaves = 0;
	int *leaves = xmalloc(sizeof(int) * (size_t)n);
	const int nleaf_ops = 5000;
	double *t = xmalloc(sizeof(double) * (size_t)nleaf_ops);
	node_props p = node_props_default();
	static const struct {
		int lo, hi;
		const char *label;
	} buckets[] = {
		{ 10, 100, "edit, subtree 10..99 nodes" },
		{ 100, 1000, "edit, subtree 100..999 (mid-tree)" },
		{ 1000, 10000, "edit, subtree 1k..10k (mid-tree)" },
		{ 10000, 100000, "edit, subtree 10k..100k" },
		{ 100000, 1 << 30, "edit, subtree >= 100k" },
	};
	char label[64];

	for (int i = 0; i < n; i++)
		if (scene_subtree_size(s, scene_at(s, i)) == 1)
			leaves[nleaves++] = scene_at(s, i);
	/* Warm the code paths once. */
	p.r = random_quat();
	check(scene_set(s, leaves[0], PROP_R, &p), "scene_set");
	scene_update(s, 1, NULL, NULL);
	for (int k = 0; k < nleaf_ops; k++) {
		int leaf = leaves[pick(nleaves)];
		double t0;
		long done;

		p.r = random_quat();
		t0 = now_ns();
		check(scene_set(s, leaf, PROP_R, &p), "scene_set");
		done = scene_update(s, 1, NULL, NULL);
		t[k] = now_ns() - t0;
		if (done != 1) {
			fprintf(stderr, "bench_core: a leaf edit recomputed %ld nodes\n", done);
			exit(1);
		}
	}
	{
		double med = quantile(t, nleaf_ops, 0.5), p99 = quantile(t, nleaf_ops, 0.99);
		size_t block = (size_t)n * 2 * PASS_MATRIX_BYTES;
		latency small = time_load_latency(block, false), huge = time_load_latency(block, true);
		row *r = add_row("leaf edit, a random leaf each time", n, -1, med);

		set_ratio(r, "%.1f x huge-page latency", med / huge.ns);
		set_target(r, "< 1 us", med < TARGET_LEAF_EDIT_NS);
		r = add_row("  p99 of the same", n, -1, p99);
		snprintf(label, sizeof(label), "#   the scene process: %ld MB on huge pages", scene_huge_mb);
		add_row(label, 0, -1, -1);
		snprintf(label, sizeof(label), "  one random dependent load in %zu MB, 4 KiB", block >> 20);
		r = add_row(label, n, -1, small.ns);
		set_ratio(r, "latency ref., %ld MB huge", small.huge_mb);
		snprintf(label, sizeof(label), "  the same on 2 MiB pages, as the scene");
		r = add_row(label, n, -1, huge.ns);
		set_ratio(r, "latency ref., %ld MB huge", huge.huge_mb);
	}
	/* The same leaf again and again (dragging one node): warm caches. */
	for (int k = 0; k < nleaf_ops; k++) {
		double t0;

		p.r = random_quat();
		t0 = now_ns();
		check(scene_set(s, leaves[0], PROP_R, &p), "scene_set");
		scene_update(s, 1, NULL, NULL);
		t[k] = now_ns() - t0;
	}
	{
		double med = quantile(t, nleaf_ops, 0.5), p99 = quantile(t, nleaf_ops, 0.99);
		row *r = add_row("  the same leaf, edited again and again", n, -1, med);

		set_ratio(r, "p99 %.0f ns", p99);
		set_target(r, "< 1 us", med < TARGET_LEAF_EDIT_NS);
	}

	/* Subtrees of growing size: the cost per recomputed node should stay
	 * near the full pass's, i.e. the edit scales with the subtree. */
	for (size_t b = 0; b < sizeof(buckets) / sizeof(buckets[0]); b++) {
		int cand[64], ncand = 0, seen = 0;
		double times[64], sizes[64];

		/* Reservoir sample of up to 64 nodes whose subtree is in range. */
		for (int i = 0; i < n; i++) {
			int node = scene_at(s, i), size = scene_subtree_size(s, node);

			if (size < buckets[b].lo || size >= buckets[b].hi)
				continue;
			seen++;
			if (ncand < 64)
				cand[ncand++] = node;
			else if (pick(seen) < 64)
				cand[pick(64)] = node;
		}
		if (ncand == 0)
			continue;
		for (int k = 0; k < ncand; k++) {
			double t0;
			long done;

			p.r = random_quat();
			t0 = now_ns();
			check(scene_set(s, cand[k], PROP_R, &p), "scene_set");
			done = scene_update(s, 1, NULL, NULL);
			times[k] = now_ns() - t0;
			sizes[k] = (double)done;
		}
		{
			double per_node[64], med_t, med_size;
			row *r;

			for (int k = 0; k < ncand; k++)
				per_node[k] = times[k] / sizes[k];
			med_t = quantile(times, ncand, 0.5);
			med_size = quantile(sizes, ncand, 0.5);
			snprintf(label, sizeof(label), "%s", buckets[b].label);
			r = add_row(label, (long)med_size, quantile(per_node, ncand, 0.5), med_t);
			set_ratio(r, "%.2f x full pass/node", r->ns_node / full_ns_node);
		}
		/* One of them again and again: the same work with warm caches,
		 * so what is left is the cost of the subtree itself. */
		{
			int size = scene_subtree_size(s, cand[0]);
			row *r;

			for (int k = 0; k < 64; k++) {
				double t0;

				p.r = random_quat();
				t0 = now_ns();
				check(scene_set(s, cand[0], PROP_R, &p), "scene_set");
				scene_update(s, 1, NULL, NULL);
				times[k] = now_ns() - t0;
			}
			r = add_row("  one of them, again and again", size, -1, quantile(times, 64, 0.5));
			r->ns_node = r->op_ns / size;
			set_ratio(r, "%.2f x full pass/node", r->ns_node / full_ns_node);
		}
	}
	free(leaves);
	free(t);
}

/* Adds bone 'id' under 'parent' (NULL: a root) with a small offset and a
 * random rotation. */
static void add_bone(scene *s, const char *id, const char *parent)
{
	node_props p = node_props_default();

	p.t = vec3_make(0, 0.1, 0.02);
	p.r = random_quat();
	check(scene_create(s, id, parent ? scene_find(s, parent) : -1, -1, &p, NULL), "scene_create");
}

/* The 59-bone rig of docs/transforms.md 6.2. */
static scene *build_rig(void)
{
	scene *s = scene_new();
	char id[64], parent[64];
	static const char *arm[] = { "upper_arm", "forearm", "wrist", "hand" };
	static const char *leg[] = { "thigh", "shin", "ankle", "foot" };

	if (!s) {
		fprintf(stderr, "bench_core: out of memory\n");
		exit(1);
	}
	add_bone(s, "root", NULL);
	for (int i = 1; i <= 5; i++) {
		snprintf(id, sizeof(id), "spine%d", i);
		snprintf(parent, sizeof(parent), i == 1 ? "root" : "spine%d", i - 1);
		add_bone(s, id, parent);
	}
	add_bone(s, "neck", "spine5");
	add_bone(s, "head", "neck");
	add_bone(s, "head_end", "head");
	for (int side = 0; side < 2; side++) {
		const char *lr = side ? "r" : "l";

		for (int i = 0; i < 4; i++) {
			snprintf(id, sizeof(id), "%s_%s", lr, arm[i]);
			if (i == 0)
				snprintf(parent, sizeof(parent), "spine5");
			else
				snprintf(parent, sizeof(parent), "%s_%s", lr, arm[i - 1]);
			add_bone(s, id, parent);
		}
		for (int f = 0; f < 5; f++)
			for (int b = 0; b < 3; b++) {
				snprintf(id, sizeof(id), "%s_finger%d_%d", lr, f, b);
				if (b == 0)
					snprintf(parent, sizeof(parent), "%s_hand", lr);
				else
					snprintf(parent, sizeof(parent), "%s_finger%d_%d", lr, f, b - 1);
				add_bone(s, id, parent);
			}
		for (int i = 0; i < 4; i++) {
			snprintf(id, sizeof(id), "%s_%s", lr, leg[i]);
			if (i == 0)
				snprintf(parent, sizeof(parent), "root");
			else
				snprintf(parent, sizeof(parent), "%s_%s", lr, leg[i - 1]);
			add_bone(s, id, parent);
		}
		for (int t = 0; t < 2; t++) {
			snprintf(id, sizeof(id), "%s_toe%d", lr, t);
			snprintf(parent, sizeof(parent), "%s_foot", lr);
			add_bone(s, id, parent);
		}
	}
	return s;
}

static void bench_rig(void)
{
	scene *s = build_rig();
	int n = scene_count(s), root = scene_find(s, "root");
	enum { BATCH = 2000, BATCHES = 31 };
	double t[BATCHES], per_bone[64];
	quat *poses = xmalloc(sizeof(quat) * (size_t)n * 16);
	node_props p = node_props_default(); /* only p.r is read, with PROP_R */
	row *r;

	if (n != 59 || scene_update(s, 1, NULL, NULL) != 59) {
		fprintf(stderr, "bench_core: the rig has %d bones, not 59\n", n);
		exit(1);
	}
	for (int i = 0; i < n * 16; i++)
		poses[i] = random_quat();

	/* A full recompute: the root turns, all 59 world matrices follow. */
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int k = 0; k < BATCH; k++) {
			p.r = poses[k & 15];
			check(scene_set(s, root, PROP_R, &p), "scene_set");
			scene_update(s, 1, NULL, NULL);
		}
		t[b] = (now_ns() - t0) / BATCH;
	}
	r = add_row("rig: root edit + update (59 recomputed)", n, -1, quantile(t, BATCHES, 0.5));
	r->ns_node = r->op_ns / n;

	/* One bone edited at a time, every bone in turn. */
	for (int i = 0; i < n; i++) {
		int bone = scene_at(s, i);
		double t0;

		t0 = now_ns();
		for (int k = 0; k < BATCH; k++) {
			p.r = poses[i * 16 + (k & 15)];
			check(scene_set(s, bone, PROP_R, &p), "scene_set");
			scene_update(s, 1, NULL, NULL);
		}
		per_bone[i] = (now_ns() - t0) / BATCH;
	}
	{
		double sum = 0, worst = 0;

		for (int i = 0; i < n; i++) {
			sum += per_bone[i];
			worst = fmax(worst, per_bone[i]);
		}
		r = add_row("rig: one bone edit + update, mean of 59", n, -1, sum / n);
		set_ratio(r, "worst bone %.0f ns", worst);
	}

	/* A frame of animation: every bone posed, then one update. */
	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns();

		for (int k = 0; k < BATCH / 10; k++) {
			for (int i = 0; i < n; i++) {
				p.r = poses[i * 16 + (k & 15)];
				check(scene_set(s, scene_at(s, i), PROP_R, &p), "scene_set");
			}
			scene_update(s, 1, NULL, NULL);
		}
		t[b] = (now_ns() - t0) / (BATCH / 10);
	}
	r = add_row("rig: pose all 59 bones + update (a frame)", n, -1, quantile(t, BATCHES, 0.5));
	r->ns_node = r->op_ns / n;
	free(poses);
	scene_free(s);
}

/* Insert, delete and reparent in 's' (the 100k tree); the scene has the
 * same nodes afterwards. */
static void bench_structural(scene *s)
{
	enum { OPS = 400 };
	double t_create[OPS], t_create_upd[OPS], t_delete[OPS], t_reparent[OPS], t_reparent_upd[OPS];
	double t_subdel[OPS];
	int nsub = 0;
	node_props p = node_props_default();
	char id[32];
	row *r;

	/* Insert a leaf at a random place, then delete it. */
	for (int k = 0; k < OPS; k++) {
		int parent = scene_at(s, pick(scene_count(s))), node;
		int index = pick(scene_child_count(s, parent) + 1);
		double t0, t1, t2;

		snprintf(id, sizeof(id), "bench_new_%d", k);
		p.r = random_quat();
		t0 = now_ns();
		check(scene_create(s, id, parent, index, &p, &node), "scene_create");
		t1 = now_ns();
		scene_update(s, 1, NULL, NULL);
		t2 = now_ns();
		t_create[k] = t1 - t0;
		t_create_upd[k] = t2 - t0;
		t0 = now_ns();
		check(scene_delete(s, node), "scene_delete");
		t_delete[k] = now_ns() - t0;
	}

	/* Move a subtree of at most 1000 nodes under a random node outside it,
	 * update, and move it back (untimed). */
	for (int k = 0; k < OPS; k++) {
		int node, new_parent, old_parent, old_index;
		double t0, t1, t2;

		do
			node = scene_at(s, pick(scene_count(s)));
		while (scene_subtree_size(s, node) > 1000);
		do
			new_parent = scene_at(s, pick(scene_count(s)));
		while (scene_is_ancestor(s, node, new_parent));
		old_parent = scene_parent(s, node);
		old_index = scene_child_index(s, node);
		t0 = now_ns();
		check(scene_reparent(s, node, new_parent, -1, false), "scene_reparent");
		t1 = now_ns();
		scene_update(s, 1, NULL, NULL);
		t2 = now_ns();
		t_reparent[k] = t1 - t0;
		t_reparent_upd[k] = t2 - t0;
		check(scene_reparent(s, node, old_parent, old_index, false), "scene_reparent");
		scene_update(s, 1, NULL, NULL);
	}

	/* Delete a subtree of 10..100 nodes (timed), then rebuild it node by
	 * node in preorder with the same ids, channels and places (untimed). */
	for (int k = 0; k < OPS; k++) {
		int node, size, parent, index;
		char(*ids)[SCENE_ID_MAX + 1];
		int *parent_at;
		node_props *props;
		double t0;

		do
			node = scene_at(s, pick(scene_count(s)));
		while ((size = scene_subtree_size(s, node)) < 10 || size > 100);
		parent = scene_parent(s, node);
		index = scene_child_index(s, node);
		ids = xmalloc(sizeof(*ids) * (size_t)size);
		parent_at = xmalloc(sizeof(int) * (size_t)size);
		props = xmalloc(sizeof(node_props) * (size_t)size);
		for (int i = 0; i < size; i++) {
			int m = scene_at(s, scene_pos(s, node) + i);

			snprintf(ids[i], sizeof(ids[i]), "%s", scene_id(s, m));
			parent_at[i] = i == 0 ? -1 : scene_pos(s, scene_parent(s, m)) - scene_pos(s, node);
			scene_props(s, m, &props[i]);
			props[i].name = props[i].mesh = NULL; /* random trees have none */
		}
		t0 = now_ns();
		check(scene_delete(s, node), "scene_delete");
		t_subdel[nsub++] = now_ns() - t0;
		for (int i = 0; i < size; i++) {
			int under = i == 0 ? parent : scene_find(s, ids[parent_at[i]]);

			check(scene_create(s, ids[i], under, i == 0 ? index : -1, &props[i], NULL),
			      "scene_create");
		}
		scene_update(s, 1, NULL, NULL);
		free(ids);
		free(parent_at);
		free(props);
	}

	r = add_row("insert a leaf (scene_create)", scene_count(s), -1, quantile(t_create, OPS, 0.5));
	set_ratio(r, "p99 %.3f ms", quantile(t_create, OPS, 0.99) / 1e6);
	set_target(r, "< 2 ms", r->op_ns < TARGET_STRUCTURAL_NS);
	r = add_row("insert a leaf + update", scene_count(s), -1, quantile(t_create_upd, OPS, 0.5));
	set_target(r, "< 2 ms", r->op_ns < TARGET_STRUCTURAL_NS);
	r = add_row("delete a leaf (scene_delete)", scene_count(s), -1, quantile(t_delete, OPS, 0.5));
	set_ratio(r, "p99 %.3f ms", quantile(t_delete, OPS, 0.99) / 1e6);
	set_target(r, "< 2 ms", r->op_ns < TARGET_STRUCTURAL_NS);
	r = add_row("delete a subtree of 10..100", scene_count(s), -1, quantile(t_subdel, nsub, 0.5));
	set_ratio(r, "p99 %.3f ms", quantile(t_subdel, nsub, 0.99) / 1e6);
	set_target(r, "< 2 ms", r->op_ns < TARGET_STRUCTURAL_NS);
	r = add_row("reparent a subtree <= 1000", scene_count(s), -1, quantile(t_reparent, OPS, 0.5));
	set_ratio(r, "p99 %.3f ms", quantile(t_reparent, OPS, 0.99) / 1e6);
	set_target(r, "< 2 ms", r->op_ns < TARGET_STRUCTURAL_NS);
	r = add_row("reparent + update", scene_count(s), -1, quantile(t_reparent_upd, OPS, 0.5));
	set_target(r, "< 2 ms", r->op_ns < TARGET_STRUCTURAL_NS);
}

/* Every node's rotation set, then one update: what three.js's
 * matrixAutoUpdate does each frame (recompose every local, then multiply). */
static double time_animate_all(scene *s, int reps)
{
	int n = scene_count(s);
	double *t = xmalloc(sizeof(double) * (size_t)reps), med;
	quat poses[16];
	node_props p = node_props_default(); /* only p.r is read, with PROP_R */

	for (int i = 0; i < 16; i++)
		poses[i] = random_quat();
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < n; i++) {
			p.r = poses[(i + r) & 15];
			check(scene_set(s, scene_at(s, i), PROP_R, &p), "scene_set");
		}
		scene_update(s, 1, NULL, NULL);
		t[r] = now_ns() - t0;
	}
	med = quantile(t, reps, 0.5);
	free(t);
	return med;
}

/* The 1-minute load average, or -1. */
static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double v = -1;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	static const long sizes[] = { 1000, 100000, 1000000 };
	tree_bench full[3];
	bool with_three = true;
	three_result three = { .ok = false };
	double animate_ns_node = -1, load_before;
	char cpu[128];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-three") == 0) {
			with_three = false;
		} else {
			fprintf(stderr, "usage: bench_core [--no-three]\n"
					"  --no-three  skip the three.js peer (node, web/node_modules)\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	cpu_model(cpu, sizeof(cpu));
	load_before = load_average();

	section("full recompute: scene_update of every node (median)");
	for (int k = 0; k < 3; k++) {
		rtree t;
		scene *s;
		double load_ns;

		progress("random tree of %ld nodes", sizes[k]);
		check(rtree_make(&t, (int)sizes[k], TREE_SEED, 0), "rtree_make");
		s = build(&t, &load_ns);
		full[k] = bench_full(s, load_ns);
		{
			row *r = add_row("scene_update, full pass", sizes[k], full[k].update_ns_node,
					 full[k].update_ns_node * (double)sizes[k]);

			set_ratio(r, "%.2f x memcpy", full[k].update_ns_node / full[k].memcpy_ns_node);
			if (sizes[k] == 100000)
				set_target(r, "<= 12 ns", r->ns_node <= TARGET_NS_PER_NODE_100K);
		}
		add_row("  memcpy of the 96 B/node the pass writes", sizes[k], full[k].memcpy_ns_node,
			full[k].memcpy_ns_node * (double)sizes[k]);
		add_row("  scene_load (bulk, for reference)", sizes[k], full[k].load_ns_node,
			full[k].load_ns_node * (double)sizes[k]);
		{
			char shape[64];

			snprintf(shape, sizeof(shape), "#   tree: %d roots, depth max %d, mean %.1f",
				 t.roots, t.max_depth, t.mean_depth);
			add_row(shape, 0, -1, -1);
		}
		if (sizes[k] == 100000) {
			if (with_three) {
				progress("three.js on the 100k tree (node %s)", RIGD_BENCH_THREE);
				three = run_three(s);
			}
			progress("structural edits in the 100k scene");
			section("structural edits in the 100k scene (median of 400)");
			bench_structural(s);
			progress("animating every node of the 100k scene");
			animate_ns_node = time_animate_all(s, 21) / (double)sizes[k];
		}
		if (sizes[k] == 1000000) {
			progress("edits in the 1M tree");
			section("edits in the 1M tree (scene_set + scene_update)");
			bench_edits(s, full[k].update_ns_node, anon_huge_kb() < 0 ? -1 : anon_huge_kb() >> 10);
		}
		scene_free(s);
		rtree_free(&t);
	}

	section("three.js 0.187 updateMatrixWorld on the same 100k tree (node, median)");
	if (three.ok) {
		char rounds[80];
		row *r = add_row("three.js, matrixAutoUpdate (default)", 100000, three.auto_ns_node,
				 three.auto_ns_node * 1e5);

		set_ratio(r, "%.1f x our full pass", three.ratio);
		set_target(r, ">= 50 x", three.ratio >= TARGET_THREE_RATIO);
		snprintf(rounds, sizeof(rounds), "#   %d paired rounds in %d processes: %.1f to %.1f x",
			 THREE_PROCESSES * THREE_ROUNDS, THREE_PROCESSES, three.ratio_min, three.ratio_max);
		add_row(rounds, 0, -1, -1);
		r = add_row("three.js, matrixAutoUpdate off, force", 100000, three.manual_ns_node,
			    three.manual_ns_node * 1e5);
		set_ratio(r, "%.1f x our full pass", three.manual_ns_node / full[1].update_ns_node);
		r = add_row("rigd: set r on every node + update", 100000, animate_ns_node,
			    animate_ns_node * 1e5);
		set_ratio(r, "three auto is %.1f x this", three.auto_ns_node / animate_ns_node);
		{
			char agree[64];

			snprintf(agree, sizeof(agree), "#   three.js agrees with rigd to %.1e relative",
				 three.max_rel_diff);
			add_row(agree, 0, -1, -1);
		}
	} else {
		char why[200];

		add_row("rigd: set r on every node + update", 100000, animate_ns_node,
			animate_ns_node * 1e5);
		snprintf(why, sizeof(why), "#   three.js not run: %s",
			 with_three ? three.why : "--no-three");
		add_row(why, 0, -1, -1);
		if (with_three)
			fprintf(stderr, "bench_core: %s\n", three.why);
	}

	progress("the 59-bone rig");
	section("the 59-bone rig (docs/transforms.md 6.2)");
	bench_rig();

	printf("rigd bench_core: %s, %ld cores; %s; flags %s\n", cpu, sysconf(_SC_NPROCESSORS_ONLN),
	       "cc " __VERSION__, RIGD_BENCH_FLAGS);
	printf("random trees: seed %u, scales +-[0.5, 2] (a quarter negative), pivots zero;"
	       " ns/node = time / nodes recomputed\n",
	       TREE_SEED);
	/* Other processes on a 2-core machine skew every figure; say so. */
	printf("load average: %.2f before the run, %.2f after (this run adds about 1)\n\n",
	       load_before, load_average());
	print_table();
	return 0;
}
