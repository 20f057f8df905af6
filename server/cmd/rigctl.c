/*
 * rigctl.c: a command-line client of rigd for scripts (docs/protocol.md).
 *
 *   rigctl [--url URL] send SCENE [FILE|-]       NDJSON batches in, one ack or
 *                                                error line out per batch
 *   rigctl [--url URL] replay SCENE LOG [--speed 1|N|max]
 *   rigctl [--url URL] watch SCENE [--count N] [--until-seq SEQ]
 *          [--view FILE | --vp M0,...,M15 --viewport WxH [--min-px N]]
 *   rigctl [--url URL] get SCENE [--at SEQ]
 *   rigctl [--url URL] log SCENE [--from SEQ] [--to SEQ]
 *   rigctl [--url URL] scenes | create SCENE | delete SCENE
 *   rigctl [--url URL] import SCENE FILE [--nearest] [--scene-index N]
 *                                      [--scene-name NAME] [--parent ID]
 *   rigctl [--url URL] import SCENE FILE.json [--atlas FILE] [--file NAME]
 *                                      [--armature NAME]   a Spine or
 *                                      DragonBones skeleton, atlas, pages
 *   rigctl [--url URL] export SCENE [--at SEQ] [-o FILE]
 *
 * Output is JSON lines on stdout, diagnostics on stderr. Exit status 0 when
 * everything succeeded, 1 when a batch or request failed (or the server went
 * away), 2 for bad arguments.
 *
 * A client program, not part of the server. This file is its main: it
 * parses the arguments (rigctl_args.c), opens the input, runs the network
 * client (net/client.h) with the websocket (rigctl_ws.c) or HTTP
 * (rigctl_http.c) hooks until the command is done, and cleans up.
 */
#include "rigctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLOSE_WAIT_S 1.0         /* seconds the close frame may take */

/*
 * Set by the signal handler, which can reach nothing else safely; the
 * event loop copies it into the run's state. A signal interrupts the loop's
 * poll(), so the loop sees it without a wake-up of its own.
 */
static volatile sig_atomic_t signalled;

static void on_signal(int sig)
{
	(void)sig;
	signalled = 1;
}

void rigctl_finish(struct rigctl *r)
{
	r->done = true;
	if (r->net)
		net_client_ws_close(r->net);
}

void rigctl_fail(struct rigctl *r, const char *fmt, ...)
{
	va_list ap;

	fputs("rigctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	r->exit_code = 1;
	rigctl_finish(r);
}

/* Lines in the file at 'path' (the last may lack its newline); 0 when it
 * cannot be read. */
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

/* send and replay: opens the input. 0, or 1 after saying why. */
static int open_input(struct rigctl *r)
{
	r->in_fd = r->input_path ? open(r->input_path, O_RDONLY | O_CLOEXEC) : dup(0);
	if (r->in_fd < 0) {
		fprintf(stderr, "rigctl: cannot open %s: %s\n",
			r->input_path ? r->input_path : "standard input", strerror(errno));
		return 1;
	}
	if (r->mode == RIGCTL_REPLAY) {
		r->progress = isatty(2);
		if (r->progress && r->input_path)
			r->total_lines = count_lines(r->input_path);
	}
	return 0;
}

/* Serves the client until the command is done (or a signal came), then
 * lets the websocket's close frame go out. */
static void run(struct rigctl *r)
{
	while (!r->done ||
	       (net_client_ws_connected(r->net) && net_client_ws_queued(r->net) > 0 &&
		!r->interrupted)) {
		int rc = net_client_service(r->net);

		if (signalled && !r->interrupted) {
			r->interrupted = true;
			r->done = true;
		}
		if (rc < 0)
			break;
	}
	if (!r->interrupted)
		net_client_ws_finish(r->net, CLOSE_WAIT_S);
}

void rigctl_release(struct rigctl *r)
{
	net_client_free(r->net);
	r->net = NULL;
	for (int i = 0; i < r->ans_n; i++)
		free(r->ans[(r->ans_head + i) % r->ans_cap].text);
	free(r->ans);
	free(r->inbuf);
	free(r->timed_msg);
	free(r->owned_body);
	free(r->view_msg);
	proto_bin_names_release(&r->names);
	if (r->out_file)
		fclose(r->out_file);  /* an answer cut short: what came is kept */
	if (r->in_fd >= 0 && !r->in_adopted)
		close(r->in_fd);
}

int main(int argc, char **argv)
{
	struct rigctl r;
	int status = rigctl_args_parse(&r, argc, argv);
	bool ws;

	if (status != 0) {
		free(r.owned_body);
		return status == RIGCTL_EXIT_HELP ? 0 : status;
	}
	ws = r.mode != RIGCTL_HTTP;
	if (ws && r.mode != RIGCTL_WATCH && open_input(&r) != 0) {
		rigctl_release(&r);
		return 1;
	}
	r.net = net_client_new(ws ? &rigctl_ws_hooks : &rigctl_http_hooks, &r, r.token);
	if (!r.net) {
		rigctl_release(&r);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (ws)
		rigctl_ws_start(&r);
	else
		rigctl_http_start(&r);
	run(&r);
	rigctl_ws_end(&r);
	status = r.interrupted && r.mode == RIGCTL_WATCH ? 0 : r.exit_code;
	rigctl_release(&r);
	return status;
}
