/*
 * rigctl_ws.c: send, replay and watch over one websocket (rigctl.h).
 *
 * send and replay read NDJSON from a file or standard input, validate and
 * re-encode each line with proto (so a bad line is reported before it is
 * sent), and pipeline the batches with a window of RIGCTL_WINDOW requests in
 * flight. The server answers a connection's requests in order; rigctl prints
 * the answers in input order. replay holds each batch until its recorded
 * time (scaled by --speed). watch subscribes and prints what arrives.
 *
 * Never exits the process: failures go through rigctl_fail.
 */
#include "rigctl.h"

#include "codec/proto.h"
#include "core/edit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536         /* bytes read from the input at a time */
#define MAX_LINE (64u << 20)     /* bytes in one input line */
#define PROGRESS_WIDTH 40        /* characters of the progress bar */

static void split_lines(struct rigctl *r);

/* ---- answers, in input order ---- */

static struct rigctl_answer *answer_push(struct rigctl *r)
{
	struct rigctl_answer *a;

	if (r->ans_n == r->ans_cap) {
		int cap = r->ans_cap ? r->ans_cap * 2 : 64;
		struct rigctl_answer *v = malloc((size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		for (int i = 0; i < r->ans_n; i++)
			v[i] = r->ans[(r->ans_head + i) % r->ans_cap];
		free(r->ans);
		r->ans = v;
		r->ans_head = 0;
		r->ans_cap = cap;
	}
	a = &r->ans[(r->ans_head + r->ans_n) % r->ans_cap];
	r->ans_n++;
	memset(a, 0, sizeof(*a));
	return a;
}

/* Draws the progress bar on stderr, at most ten times a second unless
 * 'final'. */
static void progress(struct rigctl *r, bool final)
{
	double t = net_client_now_s();
	long done = r->n_ok + r->n_failed;
	char bar[PROGRESS_WIDTH + 1];
	int filled;

	if (!r->progress || (!final && t - r->last_progress < 0.1))
		return;
	r->last_progress = t;
	if (r->total_lines > 0) {
		filled = (int)(PROGRESS_WIDTH * (double)done / (double)r->total_lines);
		if (filled > PROGRESS_WIDTH)
			filled = PROGRESS_WIDTH;
		memset(bar, '#', (size_t)filled);
		memset(bar + filled, '-', (size_t)(PROGRESS_WIDTH - filled));
		bar[PROGRESS_WIDTH] = '\0';
		fprintf(stderr, "\r[%s] %ld/%ld batches%s%s", bar, done, r->total_lines,
			r->n_failed ? ", failed: " : "", r->n_failed ? "some" : "");
	} else {
		fprintf(stderr, "\r%ld batches", done);
	}
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Prints every answer at the head that is known. */
static void answers_flush(struct rigctl *r)
{
	while (r->ans_n > 0 && r->ans[r->ans_head].text) {
		struct rigctl_answer *a = &r->ans[r->ans_head];

		fputs(a->text, stdout);
		fputc('\n', stdout);
		if (a->failed) {
			r->n_failed++;
			r->exit_code = 1;
		} else {
			r->n_ok++;
		}
		free(a->text);
		r->ans_head = (r->ans_head + 1) % r->ans_cap;
		r->ans_n--;
	}
	fflush(stdout);
	progress(r, false);
}

static bool all_answered(const struct rigctl *r)
{
	return r->in_eof && r->inlen == 0 && !r->timed_msg && r->ans_n == 0 && r->inflight == 0;
}

/* ---- outgoing messages ---- */

/* The edit message for one batch: {"type":"edit","scene":S,"req":N,...batch}.
 * NULL when out of memory. */
static char *edit_message(const struct rigctl *r, const edit_batch *b, int64_t req, size_t *len)
{
	proto_buf batch, msg;
	char head[64];
	char *out = NULL;

	proto_buf_init(&batch, 0);
	proto_buf_init(&msg, 0);
	snprintf(head, sizeof(head), ",\"req\":%" PRId64 ",", req);
	if (!proto_encode_batch(&batch, b) && !PROTO_BUF_LIT(&msg, "{\"type\":\"edit\",\"scene\":") &&
	    !proto_buf_json_string(&msg, r->scene) && !proto_buf_append(&msg, head, strlen(head)) &&
	    !proto_buf_append(&msg, proto_buf_str(&batch) + 1, batch.len - 1)) {
		*len = msg.len;
		out = proto_buf_take(&msg);
	}
	proto_buf_release(&batch);
	proto_buf_release(&msg);
	return out;
}

/* The error line for a batch refused before sending; NULL when out of
 * memory. */
static char *local_error(const edit_error *err, int64_t req)
{
	proto_buf b;
	proto_req q;

	memset(&q, 0, sizeof(q));
	q.present = true;
	q.num = req;
	proto_buf_init(&b, 0);
	if (proto_encode_error(&b, &q, err)) {
		proto_buf_release(&b);
		return NULL;
	}
	return proto_buf_take(&b);
}

static void send_message(struct rigctl *r, char *msg, size_t len)
{
	if (net_client_ws_send(r->net, msg, len) != 0)
		rigctl_fail(r, "out of memory");
	free(msg);
}

/* The timer: the held message's time has come. */
static void send_timed(void *user)
{
	struct rigctl *r = user;
	char *msg = r->timed_msg;

	r->timed_msg = NULL;
	send_message(r, msg, r->timed_len);
	/* The lines already read come first, then more input. */
	split_lines(r);
	if (!r->timed_msg && r->inflight < RIGCTL_WINDOW)
		net_client_pause_fd(r->net, false);
}

/* replay: sends 'msg' now or holds it (and the input) until its time 't'
 * (microseconds in the log). Takes ownership of 'msg'. */
static void send_at(struct rigctl *r, char *msg, size_t len, int64_t t)
{
	double due, now = net_client_now_s();

	if (r->speed > 0) {
		if (!r->have_t0) {
			r->have_t0 = true;
			r->log_t0 = t;
			r->wall_t0 = now;
		}
		due = r->wall_t0 + (double)(t - r->log_t0) / 1e6 / r->speed;
		if (due > now + 0.0005) {
			r->timed_msg = msg;
			r->timed_len = len;
			r->inflight++;
			net_client_pause_fd(r->net, true);
			net_client_timer(r->net, (int64_t)((due - now) * 1e6), send_timed);
			return;
		}
	}
	send_message(r, msg, len);
	r->inflight++;
}

/* ---- input ---- */

/* Decodes one line as a batch (send) or a log line (replay) into its edit
 * message. NULL with *err set when the line is refused, or with err->code
 * left 0 when out of memory. */
static char *line_message(struct rigctl *r, const char *line, size_t len, size_t *mlen,
			  int64_t *time_us, edit_error *err)
{
	char *msg;

	edit_error_clear(err);
	if (r->mode == RIGCTL_SEND) {
		edit_batch b;

		if (proto_decode_batch(line, len, NULL, &b, err))
			return NULL;
		msg = edit_message(r, &b, r->line_no, mlen);
		edit_batch_release(&b);
	} else {
		proto_log_line l;

		if (proto_decode_log_line(line, len, NULL, &l, err))
			return NULL;
		msg = edit_message(r, &l.batch, r->line_no, mlen);
		*time_us = l.time_us;
		edit_batch_release(&l.batch);
	}
	return msg;
}

/*
 * One input line. The req of its message is its 1-based line number, so an
 * answer names the line.
 */
static void take_line(struct rigctl *r, char *line, size_t len)
{
	struct rigctl_answer *a;
	edit_error err;
	int64_t t = 0;
	size_t mlen = 0;
	char *msg;

	r->line_no++;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	if (!(a = answer_push(r))) {
		rigctl_fail(r, "out of memory");
		return;
	}
	a->req = r->line_no;
	msg = line_message(r, line, len, &mlen, &t, &err);
	if (!msg) {
		/* Refused here: its answer is known before anything is sent. */
		a->failed = true;
		a->text = err.code ? local_error(&err, r->line_no) : NULL;
		if (!a->text) {
			rigctl_fail(r, "out of memory");
			return;
		}
		answers_flush(r);
		return;
	}
	if (r->mode == RIGCTL_REPLAY) {
		send_at(r, msg, mlen, t);
		return;
	}
	send_message(r, msg, mlen);
	r->inflight++;
}

/* Takes the complete lines read so far, up to the window. */
static void split_lines(struct rigctl *r)
{
	size_t start = 0;

	for (size_t i = 0; i < r->inlen && !r->timed_msg; i++) {
		if (r->inbuf[i] != '\n')
			continue;
		take_line(r, r->inbuf + start, i - start);
		start = i + 1;
		if (r->inflight >= RIGCTL_WINDOW) {
			net_client_pause_fd(r->net, true);
			break;
		}
	}
	memmove(r->inbuf, r->inbuf + start, r->inlen - start);
	r->inlen -= start;
	if (r->inlen > MAX_LINE)
		rigctl_fail(r, "line %ld is longer than %u bytes", r->line_no + 1, MAX_LINE);
}

/* Makes room to read READ_CHUNK more bytes (and a newline). */
static bool input_room(struct rigctl *r)
{
	if (r->inlen + READ_CHUNK + 1 > r->incap) {
		size_t cap = r->incap ? r->incap * 2 : 2 * READ_CHUNK;
		char *b;

		while (cap < r->inlen + READ_CHUNK + 1)
			cap *= 2;
		if (!(b = realloc(r->inbuf, cap))) {
			rigctl_fail(r, "out of memory reading input");
			return false;
		}
		r->inbuf = b;
		r->incap = cap;
	}
	return true;
}

/* The input has ended: its last line may lack the newline. */
static void input_finished(struct rigctl *r)
{
	if (r->in_eof)
		return;
	if (r->inlen > 0) {
		r->inbuf[r->inlen++] = '\n';  /* room: incap > inlen + READ_CHUNK */
		split_lines(r);
	}
	r->in_eof = true;
	if (all_answered(r))
		rigctl_finish(r);
}

static int on_readable(void *user)
{
	struct rigctl *r = user;
	ssize_t n;

	if (!input_room(r))
		return -1;
	n = read(r->in_fd, r->inbuf + r->inlen, READ_CHUNK);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		if (n < 0)
			rigctl_fail(r, "reading input: %s", strerror(errno));
		input_finished(r);
		return -1;
	}
	r->inlen += (size_t)n;
	split_lines(r);
	return 0;
}

/* The writer of a pipe has gone: read the rest, which cannot block now. */
static void on_hangup(void *user)
{
	struct rigctl *r = user;

	for (;;) {
		ssize_t n;

		if (!input_room(r))
			break;
		n = read(r->in_fd, r->inbuf + r->inlen, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		r->inlen += (size_t)n;
	}
	input_finished(r);
}

/* ---- what the server sends ---- */

/* watch: prints every message; stops at an error about the scene, at
 * --count snapshots and updates, or at --until-seq. */
static void watch_message(struct rigctl *r, const char *text, size_t len,
			  const proto_reply_head *f)
{
	fwrite(text, 1, len, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	if (strcmp(f->type, "error") == 0 && !f->has_seq) {
		/* The scene is unknown (or went away): nothing to watch. */
		r->exit_code = 1;
		rigctl_finish(r);
		return;
	}
	if (strcmp(f->type, "snapshot") == 0 || strcmp(f->type, "update") == 0) {
		r->received++;
		if ((r->count_limit && r->received >= r->count_limit) ||
		    (r->until_seq >= 0 && f->has_seq && f->seq >= r->until_seq))
			rigctl_finish(r);
	}
}

/* send, replay: every message is the answer to a request in flight. */
static void answer_message(struct rigctl *r, const char *text, size_t len,
			   const proto_reply_head *f)
{
	if ((strcmp(f->type, "ack") != 0 && strcmp(f->type, "error") != 0) || !f->has_req) {
		rigctl_fail(r, "unexpected message from the server: %.200s", text);
		return;
	}
	for (int i = 0; i < r->ans_n; i++) {
		struct rigctl_answer *a = &r->ans[(r->ans_head + i) % r->ans_cap];

		if (a->text || a->req != f->req)
			continue;
		if (!(a->text = strndup(text, len))) {
			rigctl_fail(r, "out of memory");
			return;
		}
		a->failed = strcmp(f->type, "error") == 0;
		r->inflight--;
		answers_flush(r);
		if (!r->timed_msg && r->inflight < RIGCTL_WINDOW / 2) {
			/* Lines already read go first, then more input. */
			split_lines(r);
			if (!r->timed_msg && r->inflight < RIGCTL_WINDOW)
				net_client_pause_fd(r->net, false);
		}
		if (all_answered(r))
			rigctl_finish(r);
		return;
	}
	rigctl_fail(r, "an answer to no request: %.200s", text);
}

/* watch --format f32|f64: a binary frame, printed as the JSON message it
 * stands for. */
static void on_binary(struct rigctl *r, const char *data, size_t len)
{
	proto_buf b;
	proto_reply_head f;
	edit_error err;

	proto_buf_init(&b, 0);
	if (proto_bin_to_json(&r->names, (const unsigned char *)data, len, &b, &err) != 0)
		rigctl_fail(r, "the server sent a bad binary frame: %s", err.message);
	else if (proto_peek_reply(proto_buf_str(&b), b.len, &f) != 0)
		rigctl_fail(r, "out of memory");
	else
		watch_message(r, proto_buf_str(&b), b.len, &f);
	proto_buf_release(&b);
}

static void on_message(void *user, const char *text, size_t len)
{
	struct rigctl *r = user;
	proto_reply_head f;

	if (r->mode == RIGCTL_WATCH && proto_bin_is_frame(text, len))
		on_binary(r, text, len);
	else if (proto_peek_reply(text, len, &f) != 0)
		rigctl_fail(r, "the server sent something that is not JSON: %.80s", text);
	else if (r->mode == RIGCTL_WATCH)
		watch_message(r, text, len, &f);
	else
		answer_message(r, text, len, &f);
}

/* ---- the connection ---- */

static void on_open(void *user)
{
	struct rigctl *r = user;
	proto_buf b;

	if (r->mode != RIGCTL_WATCH) {
		/* The input is read as the server takes batches. */
		if (net_client_watch_fd(r->net, r->in_fd) != 0)
			rigctl_fail(r, "cannot read %s", r->input_path ? r->input_path : "standard input");
		else
			r->in_adopted = true;
		return;
	}
	proto_buf_init(&b, 0);
	if (PROTO_BUF_LIT(&b, "{\"type\":\"subscribe\",\"scene\":") ||
	    proto_buf_json_string(&b, r->scene) ||
	    (r->format != PROTO_FORMAT_JSON &&
	     (PROTO_BUF_LIT(&b, ",\"format\":") ||
	      proto_buf_json_string(&b, proto_format_name(r->format)))) ||
	    PROTO_BUF_LIT(&b, "}") ||
	    net_client_ws_send(r->net, b.data, b.len) ||
	    (r->view_msg && net_client_ws_send(r->net, r->view_msg, strlen(r->view_msg))))
		rigctl_fail(r, "out of memory");
	proto_buf_release(&b);
}

static void on_closed(void *user)
{
	struct rigctl *r = user;

	if (!r->done && !(r->mode == RIGCTL_WATCH && r->interrupted))
		rigctl_fail(r, "the server closed the connection");
	r->done = true;
}

static void on_connect_failed(void *user, const char *why)
{
	struct rigctl *r = user;

	rigctl_fail(r, "cannot connect to ws://%s:%d/ws: %s", r->host, r->port, why);
}

const net_client_hooks rigctl_ws_hooks = {
	.connect_failed = on_connect_failed,
	.ws_open = on_open,
	.ws_message = on_message,
	.ws_closed = on_closed,
	.fd_readable = on_readable,
	.fd_hangup = on_hangup,
};

void rigctl_ws_start(struct rigctl *r)
{
	if (net_client_ws_connect(r->net, r->host, r->port, "/ws") != 0 && !r->done)
		rigctl_fail(r, "cannot connect to ws://%s:%d/ws", r->host, r->port);
}

void rigctl_ws_end(struct rigctl *r)
{
	if (r->mode != RIGCTL_SEND && r->mode != RIGCTL_REPLAY)
		return;
	progress(r, true);
	if (r->ans_n > 0 || r->inflight > 0) {
		fprintf(stderr, "rigctl: %d batches were not answered\n", r->ans_n);
		r->exit_code = 1;
	}
}
