/*
 * main.c: the rigd binary's entry point.
 *
 * `rigd log|apply|check ...` are offline commands that work on a database
 * file through the engine, without a server (and refuse a database a server
 * holds). Anything else is the server: serve_main() (serve.h) parses its
 * flags. This file only parses arguments and moves bytes between files and
 * the engine; it never includes sqlite3.h, cJSON.h or libwebsockets.h.
 */
#include "codec/proto.h"
#include "core/err.h"
#include "engine/engine.h"
#include "serve/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define APPLY_GROUP_MAX 256    /* batches per commit in rigd apply */

static const char overview[] =
	"usage: rigd [SERVER FLAGS]           run the server (rigd --help for its flags)\n"
	"       rigd log   --db FILE --scene S [--from SEQ] [--to SEQ]\n"
	"       rigd apply --db FILE --scene S [--sync full|normal] [FILE|-]\n"
	"       rigd check --db FILE\n"
	"\n"
	"The offline commands work on a database file without a server. A database\n"
	"that a running server or `rigd apply` holds is refused; log and check only\n"
	"read and may run side by side. `rigd COMMAND --help` explains each. Exit\n"
	"status: 0 success, 1 failure, 2 bad arguments.\n";

static const char log_usage[] =
	"usage: rigd log --db FILE --scene S [--from SEQ] [--to SEQ]\n"
	"\n"
	"Prints the edit log of scene S as NDJSON, one committed batch a line:\n"
	"{\"seq\",\"time\" (microseconds since 1970),\"client\",\"client_seq\",\"ops\"}.\n"
	"--from and --to bound the seqs printed (both inclusive; default all).\n"
	"The output can be imported into an empty scene (POST /api/scenes/S/log).\n";

static const char apply_usage[] =
	"usage: rigd apply --db FILE --scene S [options] [FILE|-]\n"
	"\n"
	"Reads NDJSON edit batches {\"ops\":[...],\"client\":\"c\",\"client_seq\":N} from\n"
	"FILE (or standard input) and applies them to scene S, creating the scene\n"
	"(and the database) if missing. The batches read together are committed\n"
	"together (group commit); then one line per batch is printed, in input\n"
	"order: {\"type\":\"ack\",\"req\":LINE,\"seq\",\"recomputed\"} or\n"
	"{\"type\":\"error\",\"req\":LINE,\"code\",\"message\",...}, LINE being the\n"
	"batch's 1-based input line. An ack is printed only after its commit. A\n"
	"batch resent with the same client and client_seq is acknowledged with its\n"
	"original seq and not applied again.\n"
	"\n"
	"  --sync full|normal   durability of each commit (default full: an\n"
	"                       acknowledged batch survives a power loss)\n"
	"  --snapshot-ops N     logged ops between snapshots (default 10000)\n"
	"\n"
	"Exit status 1 if any batch was refused or a commit failed (the first\n"
	"failed commit stops the command).\n";

static const char check_usage[] =
	"usage: rigd check --db FILE\n"
	"\n"
	"Proves a database: SQLite's integrity_check and foreign_key_check, then\n"
	"for every scene a replay of its whole log from empty, checking that its\n"
	"seqs have no gaps, that every snapshot and every stored inverse equals\n"
	"what the replay computes, and that the scene as loaded (latest snapshot\n"
	"plus the log after it) equals the full replay. Prints one line per scene\n"
	"and per problem; exit status 1 if anything does not hold.\n";

static bool parse_i64(const char *s, long long min, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min)
		return false;
	*out = v;
	return true;
}

typedef struct cmd_args {
	const char *db;
	const char *scene;
	long long from, to;
	bool sync_normal;
	long long snapshot_ops;
	const char *input;
} cmd_args;

enum { OPT_DB = 1, OPT_SCENE, OPT_FROM, OPT_TO, OPT_SYNC, OPT_SNAPSHOT_OPS, OPT_HELP };

/*
 * Parses the flags of subcommand 'cmd' (allowed: a mask of 1 << OPT_*).
 * Returns -1 to go on, or the exit status (help printed: 0; bad: 2).
 */
static int parse_args(int argc, char **argv, const char *usage, unsigned allowed, bool takes_file,
		      cmd_args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "scene", required_argument, NULL, OPT_SCENE },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "sync", required_argument, NULL, OPT_SYNC },
		{ "snapshot-ops", required_argument, NULL, OPT_SNAPSHOT_OPS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	memset(a, 0, sizeof(*a));
	a->from = 1;
	a->to = -1;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h')
			c = OPT_HELP;
		if (c == OPT_HELP) {
			fputs(usage, stdout);
			return 0;
		}
		if (c == '?' || c == ':' || !(allowed & (1u << c))) {
			const char *bad = argv[optind - 1];
			fprintf(stderr, "rigd %s: unknown or incomplete option '%s'\n", argv[0], bad);
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
		switch (c) {
		case OPT_DB:
			a->db = optarg;
			break;
		case OPT_SCENE:
			a->scene = optarg;
			break;
		case OPT_FROM:
		case OPT_TO:
			if (!parse_i64(optarg, 0, c == OPT_FROM ? &a->from : &a->to)) {
				fprintf(stderr, "rigd %s: --%s needs a seq (an integer >= 0), not '%s'\n",
					argv[0], c == OPT_FROM ? "from" : "to", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SYNC:
			if (strcmp(optarg, "full") && strcmp(optarg, "normal")) {
				fprintf(stderr, "rigd %s: --sync is full or normal, not '%s'\n", argv[0],
					optarg);
				return EXIT_USAGE;
			}
			a->sync_normal = strcmp(optarg, "normal") == 0;
			break;
		case OPT_SNAPSHOT_OPS:
			if (!parse_i64(optarg, 1, &a->snapshot_ops) || a->snapshot_ops > 1000000000) {
				fprintf(stderr, "rigd %s: --snapshot-ops needs an integer from 1, not '%s'\n",
					argv[0], optarg);
				return EXIT_USAGE;
			}
			break;
		}
	}
	if (takes_file && optind < argc)
		a->input = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "rigd %s: unexpected argument '%s'\n", argv[0], argv[optind]);
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (!a->db) {
		fprintf(stderr, "rigd %s: --db FILE is required\n", argv[0]);
		return EXIT_USAGE;
	}
	if ((allowed & (1u << OPT_SCENE)) && !a->scene) {
		fprintf(stderr, "rigd %s: --scene S is required\n", argv[0]);
		return EXIT_USAGE;
	}
	if (a->scene && !scene_id_valid(a->scene)) {
		fprintf(stderr, "rigd %s: scene '%s': %s\n", argv[0], a->scene, err_str(RIGD_E_BAD_ID));
		return EXIT_USAGE;
	}
	return -1;
}

/* Opens the database for 'cmd'; a reader ('read_only') needs the file to
 * exist (it would otherwise create an empty one) and shares it with other
 * readers. */
static engine *open_engine(const char *cmd, const cmd_args *a, bool read_only)
{
	if (read_only && access(a->db, F_OK) != 0) {
		fprintf(stderr, "rigd %s: '%s': %s (io)\n", cmd, a->db, strerror(errno));
		return NULL;
	}
	engine_opts o = engine_opts_default();
	o.read_only = read_only;
	o.sync_normal = a->sync_normal;
	if (a->snapshot_ops)
		o.snapshot_ops = (int)a->snapshot_ops;
	int err;
	char msg[512];
	engine *e = engine_open(a->db, &o, &err, msg, sizeof(msg));
	if (!e)
		fprintf(stderr, "rigd %s: %s (%s)\n", cmd, msg, err_code(err));
	return e;
}

/* --- rigd log --- */

static int write_line(void *ctx, const char *line, size_t len)
{
	FILE *f = ctx;
	return fwrite(line, 1, len, f) == len ? 0 : RIGD_E_IO;
}

static int cmd_log(int argc, char **argv)
{
	cmd_args a;
	int rc = parse_args(argc, argv, log_usage,
			    1u << OPT_DB | 1u << OPT_SCENE | 1u << OPT_FROM | 1u << OPT_TO, false, &a);
	if (rc >= 0)
		return rc;
	engine *e = open_engine("log", &a, true);
	if (!e)
		return EXIT_FAILURE;
	int err = engine_log(e, a.scene, a.from, a.to, write_line, stdout);
	if (!err && fflush(stdout) != 0)
		err = RIGD_E_IO;
	if (err == RIGD_E_UNKNOWN_SCENE)
		fprintf(stderr, "rigd log: unknown scene '%s' (unknown_scene)\n", a.scene);
	else if (err == RIGD_E_IO)
		fprintf(stderr, "rigd log: cannot write: %s (io)\n", strerror(errno));
	else if (err)
		fprintf(stderr, "rigd log: %s (%s)\n",
			engine_errmsg(e)[0] ? engine_errmsg(e) : err_str(err), err_code(err));
	engine_close(e);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* --- rigd check --- */

static void print_report(void *ctx, const char *line)
{
	(void)ctx;
	printf("%s\n", line);
}

static int cmd_check(int argc, char **argv)
{
	cmd_args a;
	int rc = parse_args(argc, argv, check_usage, 1u << OPT_DB, false, &a);
	if (rc >= 0)
		return rc;
	engine *e = open_engine("check", &a, true);
	if (!e)
		return EXIT_FAILURE;
	int err = engine_check(e, print_report, NULL);
	if (err)
		printf("check: FAILED (%s)\n", err_code(err));
	else
		printf("check: ok\n");
	fflush(stdout);
	engine_close(e);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* --- rigd apply --- */

/* The outcome of one input batch, printed after the group's commit. */
typedef struct outcome {
	long line;
	bool accepted;            /* submitted: its fate is the commit's */
	engine_ack ack;
	edit_error err;
} outcome;

typedef struct apply_state {
	engine *e;
	const char *scene;
	proto_limits lim;
	outcome *group;
	int n_group;
	proto_buf out;
	bool any_failed;
} apply_state;

static void add_line(apply_state *s, const char *line, size_t len, long line_no)
{
	outcome *o = &s->group[s->n_group++];
	memset(o, 0, sizeof(*o));
	o->line = line_no;
	engine_ack_init(&o->ack);
	edit_error_clear(&o->err);
	edit_batch b;
	if (proto_decode_batch(line, len, &s->lim, &b, &o->err) != 0)
		return;
	if (engine_submit(s->e, s->scene, &b, &o->ack, &o->err) == 0)
		o->accepted = true;
	edit_batch_release(&b);
}

/* Commits the group and prints one line per batch. 0, or 1 when the commit
 * failed (the command stops). */
static int flush_group(apply_state *s)
{
	if (!s->n_group)
		return 0;
	int err = engine_commit(s->e);
	for (int i = 0; i < s->n_group; i++) {
		outcome *o = &s->group[i];
		proto_req req = { .present = true, .num = o->line };
		if (o->accepted && err)
			edit_error_set(&o->err, RIGD_E_STORAGE, -1, "", "%s", engine_errmsg(s->e));
		if (o->accepted && !err) {
			proto_encode_ack(&s->out, &req, (uint64_t)o->ack.seq, o->ack.recomputed);
		} else {
			proto_encode_error(&s->out, &req, &o->err);
			s->any_failed = true;
		}
		proto_buf_append(&s->out, "\n", 1);
		engine_ack_release(&o->ack);
	}
	s->n_group = 0;
	fwrite(proto_buf_str(&s->out), 1, s->out.len, stdout);
	fflush(stdout);
	proto_buf_reset(&s->out);
	if (err) {
		fprintf(stderr, "rigd apply: commit failed, stopping: %s (storage)\n",
			engine_errmsg(s->e));
		return 1;
	}
	return 0;
}

static int cmd_apply(int argc, char **argv)
{
	cmd_args a;
	int rc = parse_args(argc, argv, apply_usage,
			    1u << OPT_DB | 1u << OPT_SCENE | 1u << OPT_SYNC | 1u << OPT_SNAPSHOT_OPS,
			    true, &a);
	if (rc >= 0)
		return rc;
	int fd = 0;
	if (a.input && strcmp(a.input, "-") != 0) {
		fd = open(a.input, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "rigd apply: cannot open '%s': %s (io)\n", a.input,
				strerror(errno));
			return EXIT_FAILURE;
		}
	}
	engine *e = open_engine("apply", &a, false);
	if (!e) {
		if (fd > 0)
			close(fd);
		return EXIT_FAILURE;
	}
	int status = EXIT_SUCCESS;
	apply_state s = { .e = e, .scene = a.scene, .lim = proto_limits_default() };
	proto_buf_init(&s.out, 0);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	if (!engine_scene(e, a.scene)) {
		int err = engine_scene_create(e, a.scene);
		if (err) {
			fprintf(stderr, "rigd apply: cannot create scene '%s': %s (%s)\n", a.scene,
				err == RIGD_E_STORAGE ? engine_errmsg(e) : err_str(err), err_code(err));
			status = EXIT_FAILURE;
			goto out;
		}
	}
	s.group = malloc(sizeof(*s.group) * APPLY_GROUP_MAX);
	if (!s.group) {
		fprintf(stderr, "rigd apply: out of memory (nomem)\n");
		status = EXIT_FAILURE;
		goto out;
	}
	/*
	 * Every read() hands over what has arrived; the complete lines in it
	 * form one group (up to APPLY_GROUP_MAX), committed together. A line
	 * longer than the message limit is refused as too_large and skipped.
	 */
	long line_no = 0;
	bool eof = false, skipping = false;
	size_t max_line = s.lim.max_bytes;
	while (!eof || len) {
		if (!eof) {
			if (cap - len < 65536) {
				size_t ncap = cap ? cap * 2 : 131072;
				char *p = realloc(buf, ncap);
				if (!p) {
					fprintf(stderr, "rigd apply: out of memory (nomem)\n");
					status = EXIT_FAILURE;
					goto out;
				}
				buf = p;
				cap = ncap;
			}
			ssize_t n = read(fd, buf + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				fprintf(stderr, "rigd apply: cannot read: %s (io)\n", strerror(errno));
				status = EXIT_FAILURE;
				break;
			}
			if (n == 0)
				eof = true;
			len += (size_t)n;
		}
		size_t start = 0;
		while (start < len) {
			char *nl = memchr(buf + start, '\n', len - start);
			if (!nl && !eof)
				break;
			size_t n = nl ? (size_t)(nl - (buf + start)) : len - start;
			const char *line = buf + start;
			start += n + (nl ? 1 : 0);
			if (skipping) {
				skipping = false; /* the rest of an over-long line */
				continue;
			}
			line_no++;
			size_t k = 0;
			while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
				k++;
			if (k == n)
				continue;
			add_line(&s, line, n, line_no);
			if (s.n_group == APPLY_GROUP_MAX && flush_group(&s)) {
				status = EXIT_FAILURE;
				goto out;
			}
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (!skipping && len > max_line) {
			/* An over-long line: refuse it now, drop it until its end. */
			line_no++;
			outcome *o = &s.group[s.n_group++];
			memset(o, 0, sizeof(*o));
			o->line = line_no;
			engine_ack_init(&o->ack);
			edit_error_set(&o->err, RIGD_E_TOO_LARGE, -1, "",
				       "line %ld is longer than %zu bytes", line_no, max_line);
			skipping = true;
			len = 0;
		} else if (skipping) {
			len = 0;
		}
		if (flush_group(&s)) {
			status = EXIT_FAILURE;
			goto out;
		}
		if (eof && len == 0)
			break;
	}
	if (s.any_failed)
		status = EXIT_FAILURE;
out:
	free(buf);
	free(s.group);
	proto_buf_release(&s.out);
	engine_close(e);
	if (fd > 0)
		close(fd);
	return status;
}

int main(int argc, char **argv)
{
	if (argc >= 2) {
		const char *cmd = argv[1];
		if (strcmp(cmd, "log") == 0)
			return cmd_log(argc - 1, argv + 1);
		if (strcmp(cmd, "apply") == 0)
			return cmd_apply(argc - 1, argv + 1);
		if (strcmp(cmd, "check") == 0)
			return cmd_check(argc - 1, argv + 1);
		if (strcmp(cmd, "help") == 0) {
			fputs(overview, stdout);
			return EXIT_SUCCESS;
		}
	}
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		fputs(overview, stdout);
	return serve_main(argc, argv);
}
