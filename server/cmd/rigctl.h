/*
 * rigctl.h: the state of one rigctl run, shared by its parts:
 *
 *   rigctl_args.c   the command line: what to do, against which server
 *   rigctl_ws.c     send, replay and watch over one websocket
 *   rigctl_http.c   the HTTP commands (get, log, scenes, create, delete,
 *                   import, export)
 *   rigctl.c        main: parse, connect, serve until done, clean up
 *
 * All state lives in one struct rigctl, handed to the network client as its
 * user pointer; nothing here includes libwebsockets.h (net/client.h is the
 * way to the network).
 */
#ifndef RIGD_RIGCTL_H
#define RIGD_RIGCTL_H

#include "codec/proto_bin.h"
#include "net/client.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define RIGCTL_DEFAULT_URL "http://127.0.0.1:8080"
#define RIGCTL_WINDOW 256               /* batches in flight on the websocket */
#define RIGCTL_EXIT_HELP (-1)           /* rigctl_args_parse: --help or --version printed */
#define RIGCTL_EXIT_USAGE 2             /* bad arguments */

enum rigctl_mode { RIGCTL_SEND, RIGCTL_REPLAY, RIGCTL_WATCH, RIGCTL_HTTP };

/* One input line's answer, printed in input order once known. */
struct rigctl_answer {
	char *text;                  /* the line to print (no newline); NULL: waiting */
	bool failed;
	int64_t req;
};

struct rigctl {
	int mode;                    /* enum rigctl_mode */
	char host[256];
	int port;
	const char *scene;
	const char *token;           /* sent as Authorization: Bearer; NULL: none */
	int exit_code;
	bool done;
	bool interrupted;            /* SIGINT or SIGTERM arrived */
	net_client *net;

	/* input (send, replay) */
	const char *input_path;      /* NULL: standard input */
	int in_fd;
	bool in_adopted;             /* the client closes in_fd from then on */
	bool in_eof;
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
	long total_lines;            /* for the progress bar; 0: unknown */
	bool progress;
	double last_progress;

	/* answers, a ring in input order */
	struct rigctl_answer *ans;
	int ans_head, ans_n, ans_cap;
	int inflight;
	long n_ok, n_failed;

	/* watch */
	long count_limit;            /* 0: none */
	int64_t until_seq;           /* -1: none */
	long received;
	int format;                  /* --format: enum proto_format */
	const char *view_file;       /* --view FILE: the view message's fields */
	const char *view_vp;         /* --vp m0,...,m15 */
	const char *view_viewport;   /* --viewport WxH */
	const char *view_min_px;     /* --min-px N */
	char *view_msg;              /* the view message sent after subscribing; NULL: none */
	proto_bin_names names;       /* binary frames' index -> id */

	/* HTTP */
	const char *method;
	char path[1024];
	const char *body;
	size_t body_len;
	const char *content_type;    /* of the body; NULL: application/json */
	char *owned_body;            /* what 'body' points to when rigctl made it */
	char scene_buf[SCENE_ID_MAX + 1]; /* a scene name rigctl made (import of an SVG) */
	const char *out_path;        /* export -o: the answer goes there (when 2xx) */
	FILE *out_file;
	char last_char;
	bool got_body;
};

/*
 * Fills 'r' (which it initialises) from the command line and the
 * environment ($RIGD_URL, $RIGD_TOKEN). Returns 0 to run, RIGCTL_EXIT_HELP
 * after printing the usage on stdout, RIGCTL_EXIT_USAGE after printing what
 * was wrong (and the usage) on stderr, or 1 when a file to send could not be
 * read. On failure 'r' holds nothing to release but r->owned_body.
 */
int rigctl_args_parse(struct rigctl *r, int argc, char **argv);

/* Prints "rigctl: " and the message on stderr; the run ends with status 1. */
void rigctl_fail(struct rigctl *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The run is over: the websocket (if any) closes at its next chance. */
void rigctl_finish(struct rigctl *r);

/* The client's hooks for send, replay and watch, and for the HTTP commands. */
extern const net_client_hooks rigctl_ws_hooks;
extern const net_client_hooks rigctl_http_hooks;

/* Starts the websocket (or the HTTP request); a failure to start goes
 * through rigctl_fail. */
void rigctl_ws_start(struct rigctl *r);
void rigctl_http_start(struct rigctl *r);

/* Prints the progress bar's last state and reports unanswered batches. */
void rigctl_ws_end(struct rigctl *r);

/* Frees what the run holds (not 'r' itself). */
void rigctl_release(struct rigctl *r);

/*
 * watch's view (rigctl_view.c): composes the view message from --view FILE
 * or --vp, --viewport and --min-px into r->view_msg (owned by 'r'), checked
 * with the server's decoder. Returns 0 (also when no view flag was given),
 * or -1 with 'why' saying which flag is wrong and why; r->view_msg is then
 * NULL.
 */
int rigctl_view_build(struct rigctl *r, char *why, size_t why_len);

#endif
