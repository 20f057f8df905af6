/*
 * rigctl.c: a command-line client of rigd for scripts (docs/protocol.md).
 *
 *   rigctl [--url URL] send SCENE [FILE|-]       NDJSON batches in, one ack or
 *                                                error line out per batch
 *   rigctl [--url URL] replay SCENE LOG [--speed 1|N|max]
 *   rigctl [--url URL] watch SCENE [--count N] [--until-seq SEQ]
 *   rigctl [--url URL] get SCENE [--at SEQ]
 *   rigctl [--url URL] log SCENE [--from SEQ] [--to SEQ]
 *   rigctl [--url URL] scenes | create SCENE | delete SCENE
 *   rigctl [--url URL] import SCENE FILE [--nearest] [--scene-index N]
 *                                      [--scene-name NAME] [--parent ID]
 *   rigctl [--url URL] export SCENE [--at SEQ] [-o FILE]
 *
 * Output is JSON lines on stdout, diagnostics on stderr. Exit status 0 when
 * everything succeeded, 1 when a batch or request failed (or the server went
 * away), 2 for bad arguments.
 *
 * A client program, not part of the server: it speaks to rigd over the
 * network with libwebsockets (websockets and HTTP, so TLS can follow with a
 * flag), validates and re-encodes batches with proto (so a bad line is
 * reported before it is sent), and reads the server's replies with lws's
 * streaming JSON parser (LEJP) for the few top-level fields it needs. Batches
 * are pipelined over one websocket with a window of requests in flight; the
 * server answers a connection's requests in order, and rigctl prints the
 * answers in input order.
 */
#include "codec/proto.h"
#include "core/edit.h"
#include "core/err.h"

#include <libwebsockets.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_URL "http://127.0.0.1:8080"
#define WINDOW 256               /* batches in flight on the websocket */
#define READ_CHUNK 65536
#define MAX_LINE (64u << 20)     /* bytes in one input line */

enum mode { M_SEND, M_REPLAY, M_WATCH, M_HTTP };

/* One input line's answer, printed in input order once known. */
struct answer {
	char *text;                  /* the line to print (no newline); NULL: waiting */
	bool failed;
	int64_t req;
};

struct outmsg {
	unsigned char *buf;          /* LWS_PRE + len bytes */
	size_t len;
};

struct app {
	int mode;
	char host[256];
	int port;
	const char *scene;
	int exit_code;
	bool done;
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct lws *ws;
	bool ws_up;

	/* input (send, replay) */
	const char *input_path;
	int in_fd;
	struct lws *in_wsi;
	bool in_adopted;             /* lws closes in_fd from then on */
	bool in_paused, in_eof;
	char *inbuf;
	size_t inlen, incap;
	long line_no;

	/* replay timing */
	double speed;                /* 0: as fast as possible */
	bool have_t0;
	int64_t log_t0;              /* time of the first batch, microseconds */
	double wall_t0;              /* when it was sent */
	char *timed_msg;             /* a message waiting for its time */
	size_t timed_len;
	lws_sorted_usec_list_t sul_timed;
	long total_lines;            /* for the progress bar; 0: unknown */
	bool progress;
	double last_progress;

	/* outgoing */
	struct outmsg *out;
	int out_head, out_n, out_cap;

	/* answers */
	struct answer *ans;
	int ans_head, ans_n, ans_cap;
	int inflight;
	int64_t next_req;
	long n_ok, n_failed;

	/* websocket receive */
	char *rx;
	size_t rxlen, rxcap;

	/* watch */
	long count_limit;            /* 0: none */
	int64_t until_seq;           /* -1: none */
	long received;
	bool subscribed_sent;

	/* HTTP */
	const char *method;
	char path[1024];
	const char *body;
	size_t body_len;
	const char *content_type;    /* of the body; NULL: application/json */
	const char *token;           /* sent as Authorization: Bearer; NULL: none */
	const char *out_path;        /* export -o: the answer goes there (when 2xx) */
	FILE *out_file;
	int status;
	char last_char;
	bool got_body;
};

static struct app A;
static volatile sig_atomic_t interrupted;

static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static const char usage_text[] =
	"usage: rigctl [--url URL] [--token TOKEN] COMMAND ...\n"
	"\n"
	"  send SCENE [FILE|-]          send NDJSON edit batches {\"ops\":[...]} (one a line)\n"
	"                               and print one ack or error line per batch\n"
	"  replay SCENE LOG [--speed S] replay an NDJSON log (GET .../log) into SCENE with its\n"
	"                               recorded timing (S = 1, or a factor) or as fast as\n"
	"                               possible (S = max); a progress bar on a terminal\n"
	"  watch SCENE [--count N] [--until-seq SEQ]\n"
	"                               print the snapshot, then every update, presence,\n"
	"                               join and leave as it arrives\n"
	"  get SCENE [--at SEQ]         the scene's tree (at an earlier seq)\n"
	"  log SCENE [--from N] [--to N] the edit log as NDJSON\n"
	"  scenes                       list the scenes\n"
	"  create SCENE | delete SCENE  create an empty scene, delete one\n"
	"  import SCENE FILE [--nearest] [--scene-index N] [--scene-name NAME] [--parent ID]\n"
	"                               import a .gltf or .glb file as one batch into a\n"
	"                               new (or empty) scene, or under node ID; --nearest\n"
	"                               keeps the nearest TRS of a sheared matrix instead\n"
	"                               of refusing; prints the answer with its report\n"
	"  export SCENE [--at SEQ] [-o FILE]\n"
	"                               the scene (at an earlier seq) as glTF 2.0 JSON, on\n"
	"                               stdout or into FILE\n"
	"\n"
	"URL defaults to $RIGD_URL or " DEFAULT_URL ". Output is JSON lines on stdout.\n"
	"--token TOKEN (default $RIGD_TOKEN) is sent as Authorization: Bearer with\n"
	"every request and websocket handshake (docs/security.md).\n"
	"Exit status: 0 all succeeded, 1 a batch or request failed or the server went\n"
	"away, 2 bad arguments.\n";

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("rigctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	fputs(usage_text, stderr);
	exit(2);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("rigctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	A.exit_code = 1;
	A.done = true;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- URL ---- */

static bool parse_url(const char *url)
{
	const char *p = url;
	const char *host, *end;
	long port = 80;

	if (strncmp(p, "http://", 7) == 0 || strncmp(p, "ws://", 5) == 0)
		p = strchr(p, '/') + 2;
	else if (strstr(p, "://"))
		return false;  /* https and wss need TLS: not yet */
	if (*p == '[') {
		host = p + 1;
		end = strchr(host, ']');
		if (!end)
			return false;
		p = end + 1;
	} else {
		host = p;
		end = p + strcspn(p, ":/");
		p = end;
	}
	if ((size_t)(end - host) == 0 || (size_t)(end - host) >= sizeof(A.host))
		return false;
	memcpy(A.host, host, (size_t)(end - host));
	A.host[end - host] = '\0';
	if (*p == ':') {
		char *e;

		errno = 0;
		port = strtol(p + 1, &e, 10);
		if (errno || e == p + 1 || port < 1 || port > 65535 || (*e && *e != '/'))
			return false;
	}
	A.port = (int)port;
	return true;
}

/* ---- answers, in input order ---- */

static struct answer *answer_push(void)
{
	struct answer *a;

	if (A.ans_n == A.ans_cap) {
		struct answer *v = malloc((size_t)(A.ans_cap ? A.ans_cap * 2 : 64) * sizeof(*v));

		if (!v) {
			fprintf(stderr, "rigctl: out of memory\n");
			exit(1);
		}
		for (int i = 0; i < A.ans_n; i++)
			v[i] = A.ans[(A.ans_head + i) % A.ans_cap];
		free(A.ans);
		A.ans = v;
		A.ans_head = 0;
		A.ans_cap = A.ans_cap ? A.ans_cap * 2 : 64;
	}
	a = &A.ans[(A.ans_head + A.ans_n) % A.ans_cap];
	A.ans_n++;
	memset(a, 0, sizeof(*a));
	return a;
}

static void progress(bool final)
{
	double t = now_s();
	long done = A.n_ok + A.n_failed;
	char bar[41];
	int filled;

	if (!A.progress || (!final && t - A.last_progress < 0.1))
		return;
	A.last_progress = t;
	if (A.total_lines > 0) {
		filled = (int)(40.0 * (double)done / (double)A.total_lines);
		if (filled > 40)
			filled = 40;
		memset(bar, '#', (size_t)filled);
		memset(bar + filled, '-', (size_t)(40 - filled));
		bar[40] = '\0';
		fprintf(stderr, "\r[%s] %ld/%ld batches%s%s", bar, done, A.total_lines,
			A.n_failed ? ", failed: " : "", A.n_failed ? "some" : "");
	} else {
		fprintf(stderr, "\r%ld batches", done);
	}
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Prints every answer at the head that is known. */
static void answers_flush(void)
{
	while (A.ans_n > 0 && A.ans[A.ans_head].text) {
		struct answer *a = &A.ans[A.ans_head];

		fputs(a->text, stdout);
		fputc('\n', stdout);
		if (a->failed) {
			A.n_failed++;
			A.exit_code = 1;
		} else {
			A.n_ok++;
		}
		free(a->text);
		A.ans_head = (A.ans_head + 1) % A.ans_cap;
		A.ans_n--;
	}
	fflush(stdout);
	progress(false);
}

/* ---- outgoing websocket messages ---- */

static void out_push(char *text, size_t len)
{
	struct outmsg *m;

	if (A.out_n == A.out_cap) {
		struct outmsg *v = malloc((size_t)(A.out_cap ? A.out_cap * 2 : 64) * sizeof(*v));

		if (!v) {
			fprintf(stderr, "rigctl: out of memory\n");
			exit(1);
		}
		for (int i = 0; i < A.out_n; i++)
			v[i] = A.out[(A.out_head + i) % A.out_cap];
		free(A.out);
		A.out = v;
		A.out_head = 0;
		A.out_cap = A.out_cap ? A.out_cap * 2 : 64;
	}
	m = &A.out[(A.out_head + A.out_n) % A.out_cap];
	m->buf = malloc(LWS_PRE + len);
	if (!m->buf) {
		fprintf(stderr, "rigctl: out of memory\n");
		exit(1);
	}
	memcpy(m->buf + LWS_PRE, text, len);
	m->len = len;
	A.out_n++;
	if (A.ws)
		lws_callback_on_writable(A.ws);
}

/* The edit message for one batch: {"type":"edit","scene":S,"req":N,...batch}. */
static char *edit_message(const edit_batch *b, int64_t req, size_t *len)
{
	proto_buf batch, msg;
	char head[64];
	char *out;

	proto_buf_init(&batch, 0);
	proto_buf_init(&msg, 0);
	snprintf(head, sizeof(head), ",\"req\":%" PRId64 ",", req);
	if (proto_encode_batch(&batch, b) || proto_buf_append(&msg, "{\"type\":\"edit\",\"scene\":", 23) ||
	    proto_buf_json_string(&msg, A.scene) || proto_buf_append(&msg, head, strlen(head)) ||
	    proto_buf_append(&msg, proto_buf_str(&batch) + 1, batch.len - 1)) {
		fprintf(stderr, "rigctl: out of memory\n");
		exit(1);
	}
	proto_buf_release(&batch);
	*len = msg.len;
	out = proto_buf_take(&msg);
	if (!out) {
		fprintf(stderr, "rigctl: out of memory\n");
		exit(1);
	}
	return out;
}

static char *local_error(const edit_error *err, int64_t req)
{
	proto_buf b;
	proto_req r;

	memset(&r, 0, sizeof(r));
	r.present = true;
	r.num = req;
	proto_buf_init(&b, 0);
	if (proto_encode_error(&b, &r, err)) {
		fprintf(stderr, "rigctl: out of memory\n");
		exit(1);
	}
	return proto_buf_take(&b);
}

static void input_pause(bool pause)
{
	if (!A.in_wsi || A.in_paused == pause)
		return;
	A.in_paused = pause;
	lws_rx_flow_control(A.in_wsi, pause ? 0 : 1);
}

static void send_timed(lws_sorted_usec_list_t *sul);

/*
 * One input line: a batch (send) or a log line (replay). The req of its
 * message is its 1-based line number, so an answer names the line.
 */
static void take_line(char *line, size_t len)
{
	edit_error err;
	struct answer *a;
	char *msg;
	size_t mlen;
	int rc;

	A.line_no++;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	a = answer_push();
	a->req = A.line_no;
	if (A.mode == M_SEND) {
		edit_batch b;

		rc = proto_decode_batch(line, len, NULL, &b, &err);
		if (rc) {
			a->text = local_error(&err, A.line_no);
			a->failed = true;
			answers_flush();
			return;
		}
		msg = edit_message(&b, A.line_no, &mlen);
		edit_batch_release(&b);
	} else {
		proto_log_line l;
		int64_t t;

		rc = proto_decode_log_line(line, len, NULL, &l, &err);
		if (rc) {
			a->text = local_error(&err, A.line_no);
			a->failed = true;
			answers_flush();
			return;
		}
		msg = edit_message(&l.batch, A.line_no, &mlen);
		t = l.time_us;
		edit_batch_release(&l.batch);
		if (A.speed > 0) {
			double due;

			if (!A.have_t0) {
				A.have_t0 = true;
				A.log_t0 = t;
				A.wall_t0 = now_s();
			}
			due = A.wall_t0 + (double)(t - A.log_t0) / 1e6 / A.speed;
			if (due > now_s() + 0.0005) {
				/* Hold it (and the input) until its time. */
				A.timed_msg = msg;
				A.timed_len = mlen;
				A.inflight++;
				input_pause(true);
				lws_sul_schedule(A.ctx, 0, &A.sul_timed, send_timed,
						 (lws_usec_t)((due - now_s()) * 1e6));
				return;
			}
		}
	}
	out_push(msg, mlen);
	free(msg);
	A.inflight++;
}

static void split_lines(void)
{
	size_t start = 0;

	for (size_t i = 0; i < A.inlen && !A.timed_msg; i++) {
		if (A.inbuf[i] != '\n')
			continue;
		take_line(A.inbuf + start, i - start);
		start = i + 1;
		if (A.inflight >= WINDOW) {
			input_pause(true);
			break;
		}
	}
	memmove(A.inbuf, A.inbuf + start, A.inlen - start);
	A.inlen -= start;
	if (A.inlen > MAX_LINE)
		fail("line %ld is longer than %u bytes", A.line_no + 1, MAX_LINE);
}

static void send_timed(lws_sorted_usec_list_t *sul)
{
	char *msg = A.timed_msg;

	A.timed_msg = NULL;
	out_push(msg, A.timed_len);
	free(msg);
	/* The lines already read come first, then more input. */
	split_lines();
	if (!A.timed_msg && A.inflight < WINDOW)
		input_pause(false);
}

static bool all_answered(void)
{
	return A.in_eof && A.inlen == 0 && !A.timed_msg && A.ans_n == 0 && A.inflight == 0;
}

/* Makes room to read READ_CHUNK more bytes (and a newline). */
static bool input_room(void)
{
	if (A.inlen + READ_CHUNK + 1 > A.incap) {
		size_t cap = A.incap ? A.incap * 2 : 2 * READ_CHUNK;
		char *b;

		while (cap < A.inlen + READ_CHUNK + 1)
			cap *= 2;
		if (!(b = realloc(A.inbuf, cap))) {
			fail("out of memory reading input");
			return false;
		}
		A.inbuf = b;
		A.incap = cap;
	}
	return true;
}

/* The input has ended: its last line may lack the newline. */
static void input_finished(void)
{
	if (A.in_eof)
		return;
	A.in_wsi = NULL;
	if (A.inlen > 0) {
		A.inbuf[A.inlen++] = '\n';  /* room: incap > inlen + READ_CHUNK */
		split_lines();
	}
	A.in_eof = true;
	if (all_answered()) {
		A.done = true;
		if (A.ws)
			lws_callback_on_writable(A.ws);
	}
}

/* ---- replies (LEJP) ---- */

struct reply_fields {
	char type[16];
	bool has_req;
	int64_t req;
	bool has_seq;
	int64_t seq;
};

static const char *const reply_paths[] = {"type", "req", "seq"};

static signed char reply_cb(struct lejp_ctx *ctx, char reason)
{
	struct reply_fields *f = ctx->user;

	if (!(reason & LEJP_FLAG_CB_IS_VALUE) || !ctx->path_match)
		return 0;
	switch (ctx->path_match - 1) {
	case 0:
		if (reason == LEJPCB_VAL_STR_END)
			snprintf(f->type, sizeof(f->type), "%.15s", ctx->buf);
		break;
	case 1:
		if (reason == LEJPCB_VAL_NUM_INT) {
			f->has_req = true;
			f->req = strtoll(ctx->buf, NULL, 10);
		}
		break;
	case 2:
		if (reason == LEJPCB_VAL_NUM_INT) {
			f->has_seq = true;
			f->seq = strtoll(ctx->buf, NULL, 10);
		}
		break;
	}
	return 0;
}

static int parse_reply(const char *text, size_t len, struct reply_fields *f)
{
	struct lejp_ctx ctx;
	int rc;

	memset(f, 0, sizeof(*f));
	lejp_construct(&ctx, reply_cb, f, reply_paths, 3);
	rc = lejp_parse(&ctx, (const unsigned char *)text, (int)len);
	lejp_destruct(&ctx);
	return rc < 0 && rc != LEJP_CONTINUE ? rc : 0;
}

static void on_message(const char *text, size_t len)
{
	struct reply_fields f;

	if (parse_reply(text, len, &f) != 0) {
		fail("the server sent something that is not JSON: %.80s", text);
		return;
	}
	if (A.mode == M_WATCH) {
		fwrite(text, 1, len, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		if (strcmp(f.type, "error") == 0 && !f.has_seq) {
			/* The scene is unknown (or went away): nothing to watch. */
			A.exit_code = 1;
			A.done = true;
			return;
		}
		if (strcmp(f.type, "snapshot") == 0 || strcmp(f.type, "update") == 0) {
			A.received++;
			if ((A.count_limit && A.received >= A.count_limit) ||
			    (A.until_seq >= 0 && f.has_seq && f.seq >= A.until_seq))
				A.done = true;
		}
		return;
	}
	/* send, replay: every message is the answer to the oldest request. */
	if ((strcmp(f.type, "ack") != 0 && strcmp(f.type, "error") != 0) || !f.has_req) {
		fail("unexpected message from the server: %.200s", text);
		return;
	}
	for (int i = 0; i < A.ans_n; i++) {
		struct answer *a = &A.ans[(A.ans_head + i) % A.ans_cap];

		if (a->text || a->req != f.req)
			continue;
		a->text = malloc(len + 1);
		if (!a->text) {
			fprintf(stderr, "rigctl: out of memory\n");
			exit(1);
		}
		memcpy(a->text, text, len);
		a->text[len] = '\0';
		a->failed = strcmp(f.type, "error") == 0;
		A.inflight--;
		answers_flush();
		if (!A.timed_msg && A.inflight < WINDOW / 2) {
			/* Lines already read go first, then more input. */
			split_lines();
			if (!A.timed_msg && A.inflight < WINDOW)
				input_pause(false);
		}
		if (all_answered())
			A.done = true;
		return;
	}
	fail("an answer to no request: %.200s", text);
}

/* ---- libwebsockets callbacks ---- */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	switch (reason) {
	/* websocket */
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		/* rigctl holds one connection at a time: this is it. */
		fail("cannot connect to %s://%s:%d%s: %s", A.mode == M_HTTP ? "http" : "ws", A.host,
		     A.port, A.mode == M_HTTP ? A.path : "/ws",
		     in ? (const char *)in : "connection failed");
		A.ws = NULL;
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		A.ws_up = true;
		if (A.mode == M_WATCH) {
			proto_buf b;

			proto_buf_init(&b, 0);
			if (proto_buf_append(&b, "{\"type\":\"subscribe\",\"scene\":", 28) ||
			    proto_buf_json_string(&b, A.scene) || proto_buf_append(&b, "}", 1)) {
				fprintf(stderr, "rigctl: out of memory\n");
				exit(1);
			}
			out_push(b.data, b.len);
			proto_buf_release(&b);
		} else {
			lws_sock_file_fd_type fd;

			fd.filefd = A.in_fd;
			A.in_wsi = lws_adopt_descriptor_vhost(A.vh, LWS_ADOPT_RAW_FILE_DESC, fd,
							      "rigctl", NULL);
			if (!A.in_wsi)
				fail("cannot read %s", A.input_path ? A.input_path : "standard input");
			else
				A.in_adopted = true;
		}
		lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (lws_is_first_fragment(wsi))
			A.rxlen = 0;
		if (A.rxlen + len + 1 > A.rxcap) {
			size_t cap = A.rxcap ? A.rxcap : 65536;
			char *n;

			while (cap < A.rxlen + len + 1)
				cap *= 2;
			n = realloc(A.rx, cap);
			if (!n) {
				fprintf(stderr, "rigctl: out of memory\n");
				exit(1);
			}
			A.rx = n;
			A.rxcap = cap;
		}
		memcpy(A.rx + A.rxlen, in, len);
		A.rxlen += len;
		A.rx[A.rxlen] = '\0';
		if (lws_is_final_fragment(wsi))
			on_message(A.rx, A.rxlen);
		if (A.done)
			lws_callback_on_writable(wsi);
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (A.done) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, (unsigned char *)"done", 4);
			return -1;
		}
		if (A.out_n > 0) {
			struct outmsg *m = &A.out[A.out_head];
			int n = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);

			free(m->buf);
			A.out_head = (A.out_head + 1) % A.out_cap;
			A.out_n--;
			if (n < 0) {
				fail("write failed");
				return -1;
			}
			if (A.out_n > 0)
				lws_callback_on_writable(wsi);
		}
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		if (wsi == A.ws) {
			A.ws = NULL;
			if (!A.done) {
				if (A.mode == M_WATCH && interrupted)
					A.done = true;
				else
					fail("the server closed the connection");
			}
			A.done = true;
		}
		break;

	/* input */
	case LWS_CALLBACK_RAW_RX_FILE: {
		ssize_t n;

		if (!input_room())
			return -1;
		n = read(A.in_fd, A.inbuf + A.inlen, READ_CHUNK);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			break;
		if (n <= 0) {
			if (n < 0)
				fail("reading input: %s", strerror(errno));
			input_finished();
			return -1;
		}
		A.inlen += (size_t)n;
		split_lines();
		break;
	}
	case LWS_CALLBACK_RAW_CLOSE_FILE:
		/* A pipe's end may come as a hang-up with data still unread (lws
		 * closes on POLLHUP): read the rest, which cannot block now that
		 * the writer has gone. */
		if (wsi == A.in_wsi) {
			for (;;) {
				ssize_t n;

				if (!input_room())
					break;
				n = read(A.in_fd, A.inbuf + A.inlen, READ_CHUNK);
				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0)
					break;
				A.inlen += (size_t)n;
			}
			input_finished();
		}
		break;

	/* HTTP */
	case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
		A.status = (int)lws_http_client_http_response(wsi);
		break;
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		if (A.token) {
			/* The same header for HTTP requests and the websocket
			 * handshake: a token never goes into the URL. */
			unsigned char **p = (unsigned char **)in, *end = (*p) + len;
			char value[300];

			snprintf(value, sizeof(value), "Bearer %s", A.token);
			if (lws_add_http_header_by_name(wsi, (const unsigned char *)"authorization:",
							(const unsigned char *)value,
							(int)strlen(value), p, end))
				return -1;
		}
		if (A.body) {
			unsigned char **p = (unsigned char **)in, *end = (*p) + len;
			const char *ctype = A.content_type ? A.content_type : "application/json";
			char cl[32];

			snprintf(cl, sizeof(cl), "%zu", A.body_len);
			if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH,
							 (unsigned char *)cl, (int)strlen(cl), p, end) ||
			    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
							 (unsigned char *)ctype, (int)strlen(ctype), p, end))
				return -1;
			lws_client_http_body_pending(wsi, 1);
			lws_callback_on_writable(wsi);
		}
		break;
	case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE:
		if (A.body) {
			unsigned char *buf = malloc(LWS_PRE + A.body_len + 1);
			int n;

			if (!buf) {
				fprintf(stderr, "rigctl: out of memory\n");
				exit(1);
			}
			memcpy(buf + LWS_PRE, A.body, A.body_len);
			n = lws_write(wsi, buf + LWS_PRE, A.body_len, LWS_WRITE_HTTP_FINAL);
			free(buf);
			A.body = NULL;
			lws_client_http_body_pending(wsi, 0);
			if (n < 0)
				return -1;
		}
		break;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
		if (len && A.out_path && A.status >= 200 && A.status < 300) {
			/* export -o: only a successful answer goes to the file. */
			if (!A.out_file && !(A.out_file = fopen(A.out_path, "wb"))) {
				fail("cannot write %s: %s", A.out_path, strerror(errno));
				return -1;
			}
			if (fwrite(in, 1, len, A.out_file) != len) {
				fail("cannot write %s: %s", A.out_path, strerror(errno));
				return -1;
			}
		} else if (len) {
			fwrite(in, 1, len, stdout);
			A.last_char = ((const char *)in)[len - 1];
			A.got_body = true;
		}
		break;
	case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
		char buffer[16384 + LWS_PRE];
		char *px = buffer + LWS_PRE;
		int lenx = (int)sizeof(buffer) - LWS_PRE;

		if (lws_http_client_read(wsi, &px, &lenx) < 0)
			return -1;
		break;
	}
	case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
		if (A.got_body && A.last_char != '\n')
			fputc('\n', stdout);
		fflush(stdout);
		if (A.out_file) {
			if (fclose(A.out_file) != 0) {
				A.out_file = NULL;
				fail("cannot write %s: %s", A.out_path, strerror(errno));
				break;
			}
			A.out_file = NULL;
		}
		if (A.status < 200 || A.status >= 300)
			A.exit_code = 1;
		A.done = true;
		break;
	case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
		if (!A.done)
			fail("the connection closed before the answer was complete");
		A.done = true;
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{"rigctl", callback, 0, 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

static void on_signal(int sig)
{
	interrupted = 1;
	A.done = true;
	if (A.ctx)
		lws_cancel_service(A.ctx);
}

static void lws_log_errors(int level, const char *line)
{
	if (level == LLL_ERR)
		fprintf(stderr, "rigctl: lws: %s", line);
}

/* ---- commands ---- */

static long count_lines(const char *path)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	long lines = 0;
	size_t n;
	char last = '\n';

	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				lines++;
		last = buf[n - 1];
	}
	fclose(f);
	return lines + (last != '\n');
}

static void connect_ws(void)
{
	struct lws_client_connect_info i;

	memset(&i, 0, sizeof(i));
	i.context = A.ctx;
	i.vhost = A.vh;
	i.address = A.host;
	i.port = A.port;
	i.path = "/ws";
	i.host = A.host;
	i.origin = NULL;               /* a script, not a browser page */
	i.protocol = NULL;
	i.local_protocol_name = "rigctl";
	i.ietf_version_or_minus_one = -1;
	i.pwsi = &A.ws;
	if (!lws_client_connect_via_info(&i) && !A.done)
		fail("cannot connect to ws://%s:%d/ws", A.host, A.port);
}

static void connect_http(void)
{
	struct lws_client_connect_info i;
	struct lws *wsi = NULL;

	memset(&i, 0, sizeof(i));
	i.context = A.ctx;
	i.vhost = A.vh;
	i.address = A.host;
	i.port = A.port;
	i.path = A.path;
	i.host = A.host;
	i.method = A.method;
	i.protocol = "rigctl";
	i.local_protocol_name = "rigctl";
	i.alpn = "http/1.1";
	i.pwsi = &wsi;
	if (!lws_client_connect_via_info(&i))
		fail("cannot connect to http://%s:%d%s", A.host, A.port, A.path);
}

static bool scene_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-", s[i]))
			return false;
	return true;
}

static int64_t parse_seq_arg(const char *flag, const char *v)
{
	char *end;
	long long x;

	if (!v)
		die_usage("%s needs a value", flag);
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || *end || end == v || x < 0)
		die_usage("%s: '%s' is not a seq", flag, v);
	return x;
}

/*
 * Reads the whole file at 'path' into a malloc'd buffer (its size in *len).
 * Returns NULL after printing why.
 */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "rigctl: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *v = cap > (1u << 30) ? NULL : realloc(buf, cap ? cap * 2 : 65536);

			if (!v) {
				fprintf(stderr, "rigctl: %s is too large\n", path);
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = v;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "rigctl: cannot read %s: %s\n", path, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Appends "&name=" and 'value' percent-encoded to A.path; false when it
 * does not fit. */
static bool path_arg(const char *name, const char *value)
{
	size_t n = strlen(A.path);
	int w = snprintf(A.path + n, sizeof(A.path) - n, "%c%s=", strchr(A.path, '?') ? '&' : '?',
			 name);

	if (w < 0 || (size_t)w >= sizeof(A.path) - n)
		return false;
	n += (size_t)w;
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (n + 4 > sizeof(A.path))
			return false;
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~", *p) &&
		    *p)
			A.path[n++] = (char)*p;
		else
			n += (size_t)snprintf(A.path + n, 4, "%%%02X", *p);
	}
	A.path[n] = '\0';
	return true;
}

int main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	const char *url = getenv("RIGD_URL") ? getenv("RIGD_URL") : DEFAULT_URL;
	const char *cmd;
	char *create_body = NULL;
	char *file_body = NULL;
	int ai = 1;

	memset(&A, 0, sizeof(A));
	A.until_seq = -1;
	A.in_fd = -1;
	A.token = getenv("RIGD_TOKEN") && *getenv("RIGD_TOKEN") ? getenv("RIGD_TOKEN") : NULL;
	while (ai < argc && argv[ai][0] == '-' && argv[ai][1] == '-') {
		if (strcmp(argv[ai], "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (strcmp(argv[ai], "--url") == 0 && ai + 1 < argc) {
			url = argv[ai + 1];
			ai += 2;
			continue;
		}
		if (strcmp(argv[ai], "--token") == 0 && ai + 1 < argc) {
			A.token = argv[ai + 1];
			if (strlen(A.token) > 256)
				die_usage("a token is at most 256 characters");
			ai += 2;
			continue;
		}
		die_usage("unknown option '%s'", argv[ai]);
	}
	if (ai >= argc)
		die_usage("no command");
	if (!parse_url(url))
		die_usage("'%s' is not an http:// or ws:// URL", url);
	cmd = argv[ai++];
	if (strcmp(cmd, "scenes") != 0) {
		if (ai >= argc)
			die_usage("%s needs a scene", cmd);
		A.scene = argv[ai++];
		if (!scene_ok(A.scene))
			die_usage("'%s' is not a scene name ([A-Za-z0-9_.:-], 1 to 64)", A.scene);
	}

	if (strcmp(cmd, "send") == 0) {
		A.mode = M_SEND;
		if (ai < argc && strcmp(argv[ai], "-") != 0)
			A.input_path = argv[ai];
		if (ai < argc)
			ai++;
	} else if (strcmp(cmd, "replay") == 0) {
		A.mode = M_REPLAY;
		A.speed = 1;
		if (ai >= argc)
			die_usage("replay needs a log file");
		if (strcmp(argv[ai], "-") != 0)
			A.input_path = argv[ai];
		ai++;
		while (ai < argc) {
			if (strcmp(argv[ai], "--speed") == 0 && ai + 1 < argc) {
				const char *v = argv[ai + 1];
				char *end;

				if (strcmp(v, "max") == 0) {
					A.speed = 0;
				} else {
					A.speed = strtod(v, &end);
					if (*end || !(A.speed > 0) || A.speed > 1e9)
						die_usage("--speed: '%s' is not a positive factor or max", v);
				}
				ai += 2;
			} else {
				die_usage("unknown replay argument '%s'", argv[ai]);
			}
		}
	} else if (strcmp(cmd, "watch") == 0) {
		A.mode = M_WATCH;
		while (ai < argc) {
			if (strcmp(argv[ai], "--count") == 0) {
				A.count_limit = (long)parse_seq_arg("--count", ai + 1 < argc ? argv[ai + 1] : NULL);
				ai += 2;
			} else if (strcmp(argv[ai], "--until-seq") == 0) {
				A.until_seq = parse_seq_arg("--until-seq", ai + 1 < argc ? argv[ai + 1] : NULL);
				ai += 2;
			} else {
				die_usage("unknown watch argument '%s'", argv[ai]);
			}
		}
	} else if (strcmp(cmd, "get") == 0) {
		A.mode = M_HTTP;
		A.method = "GET";
		snprintf(A.path, sizeof(A.path), "/api/scenes/%s", A.scene);
		while (ai < argc) {
			if (strcmp(argv[ai], "--at") == 0) {
				int64_t at = parse_seq_arg("--at", ai + 1 < argc ? argv[ai + 1] : NULL);

				snprintf(A.path, sizeof(A.path), "/api/scenes/%s?at=%" PRId64, A.scene, at);
				ai += 2;
			} else {
				die_usage("unknown get argument '%s'", argv[ai]);
			}
		}
	} else if (strcmp(cmd, "log") == 0) {
		int64_t from = -1, to = -1;
		int n;

		A.mode = M_HTTP;
		A.method = "GET";
		while (ai < argc) {
			if (strcmp(argv[ai], "--from") == 0)
				from = parse_seq_arg("--from", ai + 1 < argc ? argv[ai + 1] : NULL);
			else if (strcmp(argv[ai], "--to") == 0)
				to = parse_seq_arg("--to", ai + 1 < argc ? argv[ai + 1] : NULL);
			else
				die_usage("unknown log argument '%s'", argv[ai]);
			ai += 2;
		}
		n = snprintf(A.path, sizeof(A.path), "/api/scenes/%s/log", A.scene);
		if (from >= 0 || to >= 0) {
			char q[96];

			q[0] = '\0';
			if (from >= 0)
				snprintf(q, sizeof(q), "from=%" PRId64, from);
			if (to >= 0)
				snprintf(q + strlen(q), sizeof(q) - strlen(q), "%sto=%" PRId64,
					 from >= 0 ? "&" : "", to);
			snprintf(A.path + n, sizeof(A.path) - (size_t)n, "?%s", q);
		}
	} else if (strcmp(cmd, "scenes") == 0) {
		A.mode = M_HTTP;
		A.method = "GET";
		snprintf(A.path, sizeof(A.path), "/api/scenes");
	} else if (strcmp(cmd, "create") == 0) {
		size_t n = strlen(A.scene) + 16;

		A.mode = M_HTTP;
		A.method = "POST";
		snprintf(A.path, sizeof(A.path), "/api/scenes");
		create_body = malloc(n);
		if (!create_body)
			return 1;
		snprintf(create_body, n, "{\"name\":\"%s\"}", A.scene);  /* scene_ok: no escaping */
		A.body = create_body;
		A.body_len = strlen(create_body);
	} else if (strcmp(cmd, "delete") == 0) {
		A.mode = M_HTTP;
		A.method = "DELETE";
		snprintf(A.path, sizeof(A.path), "/api/scenes/%s", A.scene);
	} else if (strcmp(cmd, "import") == 0) {
		const char *file;
		bool ok = true;

		A.mode = M_HTTP;
		A.method = "POST";
		if (ai >= argc)
			die_usage("import needs a .gltf or .glb file");
		file = argv[ai++];
		snprintf(A.path, sizeof(A.path), "/api/scenes/%s/gltf", A.scene);
		while (ai < argc) {
			const char *a = argv[ai], *v = ai + 1 < argc ? argv[ai + 1] : NULL;

			if (strcmp(a, "--nearest") == 0) {
				ok = ok && path_arg("nearest", "1");
				ai++;
				continue;
			}
			if (strcmp(a, "--scene-index") == 0) {
				char num[32];

				snprintf(num, sizeof(num), "%" PRId64, parse_seq_arg(a, v));
				ok = ok && path_arg("scene", num);
			} else if (strcmp(a, "--scene-name") == 0 || strcmp(a, "--parent") == 0) {
				if (!v)
					die_usage("%s needs a value", a);
				ok = ok && path_arg(a[2] == 'p' ? "parent" : "scene_name", v);
			} else {
				die_usage("unknown import argument '%s'", a);
			}
			ai += 2;
		}
		if (!ok)
			die_usage("import arguments too long");
		file_body = read_file(file, &A.body_len);
		if (!file_body)
			return 1;
		/* A .glb starts with the magic "glTF". */
		A.content_type = A.body_len >= 4 && memcmp(file_body, "glTF", 4) == 0
					 ? "model/gltf-binary"
					 : "model/gltf+json";
		A.body = file_body;
	} else if (strcmp(cmd, "export") == 0) {
		A.mode = M_HTTP;
		A.method = "GET";
		snprintf(A.path, sizeof(A.path), "/api/scenes/%s/gltf", A.scene);
		while (ai < argc) {
			const char *a = argv[ai], *v = ai + 1 < argc ? argv[ai + 1] : NULL;

			if (strcmp(a, "--at") == 0) {
				snprintf(A.path, sizeof(A.path), "/api/scenes/%s/gltf?at=%" PRId64, A.scene,
					 parse_seq_arg(a, v));
			} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
				if (!v)
					die_usage("%s needs a file", a);
				A.out_path = strcmp(v, "-") == 0 ? NULL : v;
			} else {
				die_usage("unknown export argument '%s'", a);
			}
			ai += 2;
		}
	} else {
		die_usage("unknown command '%s'", cmd);
	}
	if (ai < argc)
		die_usage("unexpected argument '%s'", argv[ai]);

	if (A.mode == M_SEND || A.mode == M_REPLAY) {
		A.in_fd = A.input_path ? open(A.input_path, O_RDONLY | O_CLOEXEC) : dup(0);
		if (A.in_fd < 0) {
			fprintf(stderr, "rigctl: cannot open %s: %s\n",
				A.input_path ? A.input_path : "standard input", strerror(errno));
			return 1;
		}
		if (A.mode == M_REPLAY) {
			A.progress = isatty(2);
			if (A.progress && A.input_path)
				A.total_lines = count_lines(A.input_path);
		}
	}

	lws_set_log_level(LLL_ERR, lws_log_errors);
	memset(&info, 0, sizeof(info));
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	A.ctx = lws_create_context(&info);
	if (!A.ctx) {
		fprintf(stderr, "rigctl: cannot create the libwebsockets context\n");
		return 1;
	}
	A.vh = lws_create_vhost(A.ctx, &info);
	if (!A.vh) {
		fprintf(stderr, "rigctl: cannot create the libwebsockets vhost\n");
		lws_context_destroy(A.ctx);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (A.mode == M_HTTP)
		connect_http();
	else
		connect_ws();
	while (!A.done || (A.ws && A.out_n > 0 && !interrupted))
		if (lws_service(A.ctx, 0) < 0)
			break;
	/* Let the close frame go out. */
	if (A.ws && !interrupted) {
		double until = now_s() + 1;

		lws_callback_on_writable(A.ws);
		while (A.ws && now_s() < until)
			if (lws_service(A.ctx, 0) < 0)
				break;
	}
	if (A.mode == M_SEND || A.mode == M_REPLAY) {
		progress(true);
		if (A.ans_n > 0 || A.inflight > 0) {
			fprintf(stderr, "rigctl: %d batches were not answered\n", A.ans_n);
			A.exit_code = 1;
		}
	}
	lws_sul_cancel(&A.sul_timed);
	lws_context_destroy(A.ctx);
	for (int i = 0; i < A.ans_n; i++)
		free(A.ans[(A.ans_head + i) % A.ans_cap].text);
	for (int i = 0; i < A.out_n; i++)
		free(A.out[(A.out_head + i) % A.out_cap].buf);
	free(A.ans);
	free(A.out);
	free(A.inbuf);
	free(A.rx);
	free(A.timed_msg);
	free(create_body);
	free(file_body);
	if (A.out_file)
		fclose(A.out_file);  /* an answer cut short: what came is kept */
	if (A.in_fd >= 0 && !A.in_adopted)
		close(A.in_fd);
	return interrupted && A.mode == M_WATCH ? 0 : A.exit_code;
}
