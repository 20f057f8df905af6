/*
 * http.h: the HTTP side of the server, as net calls it. A request is
 * matched against the route table (routes.h), authorised by the role its
 * route needs (auth.h; a request that matches no route needs a valid token
 * and is refused), checked for size, then handled now or after the turn's
 * commit. Also the helpers every handler answers with.
 *
 * Never decides a route's role or handler itself: the table does.
 */
#ifndef RIGD_SERVE_HTTP_H
#define RIGD_SERVE_HTTP_H

#include "server.h"

/*
 * net's http callback ('ctx' the server): answers an API request, now or
 * after the commit, and returns true; false for a path the table does not
 * cover (net serves a static file then).
 */
bool http_request(void *ctx, const net_request *req);

/* Runs deferred HTTP request 'd' (after the commit): calls its route. */
void http_run_deferred(struct server *S, struct deferred *d);

/* Answers with 'status', content 'type' and the bytes of 'b' (taken). */
void http_respond_buf(struct server *S, uint64_t conn, int status, const char *type,
		      proto_buf *b);

/* Answers with the JSON error 'err' and its code's HTTP status. */
void http_respond_error(struct server *S, uint64_t conn, const edit_error *err);

/* Answers with an error of 'code', 'field' and a formatted message. */
void http_respond_code(struct server *S, uint64_t conn, int code, const char *field,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Answers with 'status' and the JSON in 'b' (taken), plus a newline. */
void http_respond_json(struct server *S, uint64_t conn, int status, proto_buf *b);

/* Answers with 'status' and the JSON in 'b' (taken), or, when building it
 * failed with 'rc' (not 0), releases 'b' and answers that error. */
void http_respond_built(struct server *S, uint64_t conn, int status, proto_buf *b, int rc);

/* Answers an engine error 'rc' about scene 'name'. */
void http_respond_engine(struct server *S, uint64_t conn, int rc, const char *name);

/* The value of query argument 'name' ("name=value"), or NULL. */
const char *http_arg(char *const *args, int n_args, const char *name);

#endif
