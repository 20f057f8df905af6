/*
 * http.h: the HTTP side of the server, as net calls it. A request is
 * matched against the route table (routes.h), authorised by the role its
 * route needs (auth.h; a request that matches no route needs a valid token
 * and is refused), checked for size, then handled now or after the turn's
 * commit. The answers are http_respond.h's.
 *
 * Never decides a route's role or handler itself: the table does.
 */
#ifndef RIGD_SERVE_HTTP_H
#define RIGD_SERVE_HTTP_H

#include "net/net.h"

#include <stdbool.h>

struct deferred;
struct http_call;
struct server;

/*
 * net's http callback ('ctx' the server): answers an API request, now or
 * after the commit, and returns true; false for a path the table does not
 * cover (net serves a static file then).
 */
bool http_request(void *ctx, const net_request *req);

/* Runs deferred HTTP request 'd' (after the commit): calls its route. */
void http_run_deferred(struct server *S, struct deferred *d);

/* A copy of request 'call' (its scene name valid) for route 'route' as a
 * D_HTTP deferred item run by http_run_deferred; the caller owns it. NULL
 * when out of memory. */
struct deferred *http_defer_copy(const struct http_call *call, int route);

#endif
