/*
 * rigctl_http.c: the HTTP commands of rigctl (rigctl.h): one request, its
 * answer's body copied to stdout (or, for export -o, a successful answer
 * into the file). The exit status is 1 for an answer outside 2xx.
 *
 * Never exits the process: failures go through rigctl_fail.
 */
#include "rigctl.h"

#include <errno.h>
#include <string.h>

static int on_body(void *user, int status, const char *bytes, size_t len)
{
	struct rigctl *r = user;

	if (r->out_path && status >= 200 && status < 300) {
		/* export -o: only a successful answer goes to the file. */
		if ((!r->out_file && !(r->out_file = fopen(r->out_path, "wb"))) ||
		    fwrite(bytes, 1, len, r->out_file) != len) {
			rigctl_fail(r, "cannot write %s: %s", r->out_path, strerror(errno));
			return -1;
		}
		return 0;
	}
	fwrite(bytes, 1, len, stdout);
	r->last_char = bytes[len - 1];
	r->got_body = true;
	return 0;
}

static void on_done(void *user, int status)
{
	struct rigctl *r = user;

	if (r->got_body && r->last_char != '\n')
		fputc('\n', stdout);
	fflush(stdout);
	if (r->out_file) {
		int rc = fclose(r->out_file);

		r->out_file = NULL;
		if (rc != 0) {
			rigctl_fail(r, "cannot write %s: %s", r->out_path, strerror(errno));
			return;
		}
	}
	if (status < 200 || status >= 300)
		r->exit_code = 1;
	r->done = true;
}

static void on_closed(void *user)
{
	struct rigctl *r = user;

	if (!r->done)
		rigctl_fail(r, "the connection closed before the answer was complete");
	r->done = true;
}

static void on_connect_failed(void *user, const char *why)
{
	struct rigctl *r = user;

	rigctl_fail(r, "cannot connect to http://%s:%d%s: %s", r->host, r->port, r->path, why);
}

const net_client_hooks rigctl_http_hooks = {
	.connect_failed = on_connect_failed,
	.http_body = on_body,
	.http_done = on_done,
	.http_closed = on_closed,
};

void rigctl_http_start(struct rigctl *r)
{
	net_client_request req = {
		.method = r->method,
		.host = r->host,
		.port = r->port,
		.path = r->path,
		.body = r->body,
		.body_len = r->body_len,
		.content_type = r->content_type,
	};

	if (net_client_http(r->net, &req) != 0)
		rigctl_fail(r, "cannot connect to http://%s:%d%s", r->host, r->port, r->path);
}
