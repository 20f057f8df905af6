/*
 * rigd.c: the rigd binary's entry point.
 *
 * `rigd log|apply|check ...` are offline commands that work on a database
 * file through the engine, without a server (and refuse a database a server
 * holds). Anything else is the server: serve_main() (serve_main.h) parses its
 * flags. Both read their flags with the one table-driven parser of
 * serve/config.h, so every flag of the binary is spelled, checked and
 * documented the same way. This file only parses arguments and moves bytes
 * between files and the engine; it never includes sqlite3.h, cJSON.h or
 * libwebsockets.h.
 */
#include "codec/proto.h"
#include "core/err.h"
#include "core/num.h"
#include "engine/engine.h"
#include "serve/config.h"
#include "serve/serve_main.h"
#ifdef RIGD_WITH_CLUSTER
#include "clustered/clustered.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	"--from and --to bound the seqs printed (both inclusive).\n"
	"The output can be imported into an empty scene (POST /api/scenes/S/log).\n"
	"\n";

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
	"Exit status 1 if any batch was refused or a commit failed (the first\n"
	"failed commit stops the command).\n"
	"\n";

static const char check_usage[] =
	"usage: rigd check --db FILE\n"
	"\n"
	"Proves a database: SQLite's integrity_check and foreign_key_check, then\n"
	"for every scene a replay of its whole log from empty, checking that its\n"
	"seqs have no gaps, that every snapshot and every stored inverse equals\n"
	"what the replay computes, and that the scene as loaded (latest snapshot\n"
	"plus the log after it) equals the full replay. Prints one line per scene\n"
	"and per problem; exit status 1 if anything does not hold.\n"
	"\n";

/* What the offline commands' flags fill. */
typedef struct cmd_args {
	const char *db;
	const char *scene;
	int64_t from, to;             /* to: -1 for the last */
	bool sync_normal;
	int64_t snapshot_ops;
	const char *input;            /* apply: NULL or "-" for standard input */
} cmd_args;

static int print_help(const config_flag *f, const char *v, void *dst, FILE *out, FILE *err)
{
	return CONFIG_DONE;  /* the caller prints the usage of its own table */
}

static const char *const sync_names[] = {"full", "normal", NULL};

#define AT(member) offsetof(cmd_args, member)
#define FLAG_DB {.name = "--db", .arg = "FILE", .kind = CONFIG_STRING, .offset = AT(db), \
		 .def_text = "", .help = "the database file (required)"}
#define FLAG_SCENE {.name = "--scene", .arg = "S", .kind = CONFIG_STRING, .offset = AT(scene), \
		    .def_text = "", .help = "the scene (required)"}
#define FLAG_HELP {.name = "--help", .alias = "-h", .kind = CONFIG_CUSTOM, .parse = print_help, \
		   .help = "this text"}

static const config_flag log_flags[] = {
	FLAG_DB,
	FLAG_SCENE,
	{.name = "--from", .arg = "SEQ", .kind = CONFIG_I64, .offset = AT(from), .lo = 0,
	 .hi = NUM_SEQ_MAX, .def = 1, .help = "the first seq printed"},
	{.name = "--to", .arg = "SEQ", .kind = CONFIG_I64, .offset = AT(to), .lo = 0,
	 .hi = NUM_SEQ_MAX, .def = -1, .def_text = "the last", .help = "the last seq printed"},
	FLAG_HELP,
};

static const config_flag apply_flags[] = {
	FLAG_DB,
	FLAG_SCENE,
	{.name = "--sync", .arg = "full|normal", .kind = CONFIG_BOOL_ENUM, .offset = AT(sync_normal),
	 .names = sync_names, .def = 0,
	 .help = "durability of each commit (full: an\nacknowledged batch survives a power loss)"},
	{.name = "--snapshot-ops", .arg = "N", .kind = CONFIG_I64, .offset = AT(snapshot_ops),
	 .lo = 1, .hi = 1000000000, .def = ENGINE_DEFAULT_SNAPSHOT_OPS,
	 .help = "logged ops between snapshots"},
	FLAG_HELP,
};

static const config_flag check_flags[] = {
	FLAG_DB,
	FLAG_HELP,
};

#define TABLE(prog_, usage_, flags_, max_args_)                                          \
	{.prog = (prog_), .usage_head = (usage_), .flags = (flags_),                      \
	 .n_flags = (int)(sizeof(flags_) / sizeof((flags_)[0])), .max_args = (max_args_)}

static const config_table log_table = TABLE("rigd log", log_usage, log_flags, 0);
static const config_table apply_table = TABLE("rigd apply", apply_usage, apply_flags, 1);
static const config_table check_table = TABLE("rigd check", check_usage, check_flags, 0);

/*
 * Parses the flags of an offline command (argv[0] is its name) with its
 * table 't'. Returns -1 to go on, or the exit status (help printed: 0;
 * bad: 2, after saying why).
 */
static int parse_args(const config_table *t, int argc, char **argv, cmd_args *a)
{
	int n_args = 0, rc;

	memset(a, 0, sizeof(*a));
	config_table_defaults(t, a);
	rc = config_table_parse(t, argc, argv, a, &a->input, &n_args, stdout, stderr);
	if (rc == CONFIG_DONE) {
		config_table_usage(t, stdout);
		return EXIT_SUCCESS;
	}
	if (rc != 0)
		return CONFIG_USAGE;
	if (!a->db) {
		fprintf(stderr, "%s: --db FILE is required\n", t->prog);
		return CONFIG_USAGE;
	}
	if (t != &check_table && !a->scene) {
		fprintf(stderr, "%s: --scene S is required\n", t->prog);
		return CONFIG_USAGE;
	}
	if (a->scene && !scene_id_valid(a->scene)) {
		fprintf(stderr, "%s: --scene: '%s': %s\n", t->prog, a->scene, err_str(RIGD_E_BAD_ID));
		return CONFIG_USAGE;
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
	int rc = parse_args(&log_table, argc, argv, &a);
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
	int rc = parse_args(&check_table, argc, argv, &a);
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

/* The input of rigd apply as it is read: what has arrived and where it
 * stands in the lines. */
typedef struct apply_input {
	int fd;
	char *buf;
	size_t len, cap;
	long line_no;
	bool eof;
	bool skipping;               /* dropping the rest of an over-long line */
} apply_input;

/* Reads what has arrived into in->buf. 0, or -1 after saying why. */
static int read_more(apply_input *in)
{
	ssize_t n;

	if (in->cap - in->len < 65536) {
		size_t ncap = in->cap ? in->cap * 2 : 131072;
		char *p = realloc(in->buf, ncap);

		if (!p) {
			fprintf(stderr, "rigd apply: out of memory (nomem)\n");
			return -1;
		}
		in->buf = p;
		in->cap = ncap;
	}
	do
		n = read(in->fd, in->buf + in->len, in->cap - in->len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		fprintf(stderr, "rigd apply: cannot read: %s (io)\n", strerror(errno));
		return -1;
	}
	if (n == 0)
		in->eof = true;
	in->len += (size_t)n;
	return 0;
}

/* Adds the complete lines read (all of them at the end of the input) to
 * the group, committing whenever it is full. 0, or 1 when a commit failed. */
static int take_lines(apply_state *s, apply_input *in)
{
	size_t start = 0;

	while (start < in->len) {
		char *nl = memchr(in->buf + start, '\n', in->len - start);
		size_t n, k = 0;
		const char *line;

		if (!nl && !in->eof)
			break;
		n = nl ? (size_t)(nl - (in->buf + start)) : in->len - start;
		line = in->buf + start;
		start += n + (nl ? 1 : 0);
		if (in->skipping) {
			in->skipping = false; /* the rest of an over-long line */
			continue;
		}
		in->line_no++;
		while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
			k++;
		if (k == n)
			continue;
		add_line(s, line, n, in->line_no);
		if (s->n_group == APPLY_GROUP_MAX && flush_group(s))
			return 1;
	}
	memmove(in->buf, in->buf + start, in->len - start);
	in->len -= start;
	return 0;
}

/* An over-long line: refused now as too_large, dropped until its end. */
static void refuse_long_line(apply_state *s, apply_input *in, size_t max_line)
{
	outcome *o = &s->group[s->n_group++];

	in->line_no++;
	memset(o, 0, sizeof(*o));
	o->line = in->line_no;
	engine_ack_init(&o->ack);
	edit_error_set(&o->err, RIGD_E_TOO_LARGE, -1, "", "line %ld is longer than %zu bytes",
		       in->line_no, max_line);
	in->skipping = true;
	in->len = 0;
}

/*
 * Every read() hands over what has arrived; the complete lines in it form
 * one group (up to APPLY_GROUP_MAX), committed together. A line longer than
 * the message limit is refused as too_large and skipped. Returns the exit
 * status.
 */
static int apply_stream(apply_state *s, apply_input *in)
{
	size_t max_line = s->lim.max_bytes;

	while (!in->eof || in->len) {
		if (!in->eof && read_more(in) != 0)
			return EXIT_FAILURE;
		if (take_lines(s, in))
			return EXIT_FAILURE;
		if (!in->skipping && in->len > max_line)
			refuse_long_line(s, in, max_line);
		else if (in->skipping)
			in->len = 0;
		if (flush_group(s))
			return EXIT_FAILURE;
		if (in->eof && in->len == 0)
			break;
	}
	return s->any_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_apply(int argc, char **argv)
{
	cmd_args a;
	int rc = parse_args(&apply_table, argc, argv, &a);
	apply_input in = {.fd = 0};
	apply_state s;
	int status = EXIT_FAILURE;

	if (rc >= 0)
		return rc;
	if (a.input && strcmp(a.input, "-") != 0) {
		in.fd = open(a.input, O_RDONLY | O_CLOEXEC);
		if (in.fd < 0) {
			fprintf(stderr, "rigd apply: cannot open '%s': %s (io)\n", a.input,
				strerror(errno));
			return EXIT_FAILURE;
		}
	}
	memset(&s, 0, sizeof(s));
	s.scene = a.scene;
	s.lim = proto_limits_default();
	proto_buf_init(&s.out, 0);
	s.e = open_engine("apply", &a, false);
	if (!s.e)
		goto out;
	if (!engine_scene(s.e, a.scene)) {
		int err = engine_scene_create(s.e, a.scene);

		if (err) {
			fprintf(stderr, "rigd apply: cannot create scene '%s': %s (%s)\n", a.scene,
				err == RIGD_E_STORAGE ? engine_errmsg(s.e) : err_str(err),
				err_code(err));
			goto out;
		}
	}
	s.group = malloc(sizeof(*s.group) * APPLY_GROUP_MAX);
	if (!s.group) {
		fprintf(stderr, "rigd apply: out of memory (nomem)\n");
		goto out;
	}
	status = apply_stream(&s, &in);
out:
	free(in.buf);
	free(s.group);
	proto_buf_release(&s.out);
	engine_close(s.e);
	if (in.fd > 0)
		close(in.fd);
	return status;
}

/* The cluster's side, for --redis; none in a rigd built without it
 * (-DRIGD_CLUSTER=OFF), which then refuses the flag. */
static const struct serve_hooks *cluster_hooks(void)
{
#ifdef RIGD_WITH_CLUSTER
	return clustered_hooks();
#else
	return NULL;
#endif
}

int main(int argc, char **argv)
{
	int rc;

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
	rc = serve_main(argc, argv, cluster_hooks());
	/* --help and --hash-token print and stop without running: not a failure. */
	return rc == CONFIG_DONE ? EXIT_SUCCESS : rc;
}
