/*
 * http.c: HTTP requests through the route table (see http.h). Which role a
 * request needs and when it runs come from its route's row (routes.c),
 * never from matching strings here.
 */
#include "http.h"
#include "auth.h"
#include "http_respond.h"
#include "routes.h"
#include "server.h"
#include "turn.h"
#include "util.h"

#include "core/err.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct deferred *http_defer_copy(const struct http_call *call, int route)
{
	struct deferred *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->kind = D_HTTP;
	d->run = http_run_deferred;
	d->conn = call->conn;
	d->method = call->method;
	d->route = route;
	/* A valid scene name (checked before) fits. */
	assert(strlen(call->name) < sizeof(d->scene));
	memcpy(d->scene, call->name, strlen(call->name) + 1);
	if (call->tok) {
		d->authed = true;
		memcpy(d->tok, call->tok, sizeof(d->tok));
	}
	if (!(d->path = strdup(call->path)) || !(d->body = malloc(call->body_len + 1))) {
		turn_deferred_free(d);
		return NULL;
	}
	memcpy(d->body, call->body, call->body_len);
	d->body[call->body_len] = '\0';
	d->body_len = call->body_len;
	for (int i = 0; i < call->n_args && i < NET_MAX_ARGS; i++) {
		if (!(d->args[i] = strdup(call->args[i]))) {
			turn_deferred_free(d);
			return NULL;
		}
		d->n_args++;
	}
	return d;
}

/*
 * With tokens configured: 0 when the request's Bearer token has role
 * 'need' on 'scene_name' (NULL: on some scene) within its token's rate,
 * with the token's digest in 'tok'; otherwise answers 401, 403 or 429 and
 * returns the error. Always 0 for a public route or without tokens.
 */
static int authorise(struct server *S, const net_request *req, int need,
		     const char *scene_name, unsigned char tok[SHA256_LEN])
{
	char msg[160];
	int rc;

	if (need == ROLE_NONE || S->n_tokens == 0)
		return 0;
	rc = auth_http(S, need, scene_name, req->authorization, serve_now_s(), tok, msg,
		       sizeof(msg));
	if (rc)
		http_respond_code(S, req->conn, rc, "", "%s", msg);
	return rc;
}

/* The body limit of route 'route' (a row index, or a refusal's code). */
static size_t body_limit(const struct server *S, int route)
{
	int kind = route >= 0 ? routes[route].max_body : ROUTE_BODY_API;

	return kind == ROUTE_BODY_ANY ? SIZE_MAX
	       : kind == ROUTE_BODY_GLTF ? S->o.max_gltf : S->o.max_body;
}

bool http_request(void *ctx, const net_request *req)
{
	struct server *S = ctx;
	char name[SCENE_ID_MAX + 2], allowed[64];
	unsigned char tok[SHA256_LEN];
	struct http_call call;
	struct deferred *d;
	int route;

	if (!routes_covers(req->path))
		return false;  /* files are public: the viewer loads to ask for a token */
	route = routes_match(req->path, req->method, name, sizeof(name));
	/* A request no row answers needs a valid token (of any role) before it
	 * learns that: the refusal is the same for every caller with one. */
	if (authorise(S, req, route >= 0 ? routes[route].role : ROLE_VIEWER,
		      route >= 0 && name[0] ? name : NULL, tok))
		return true;
	if (req->body_len > body_limit(S, route)) {
		http_respond_code(S, req->conn, RIGD_E_TOO_LARGE, "", "the body exceeds %zu bytes",
			     S->o.max_body);
		return true;
	}
	if (route == RIGD_E_NOT_FOUND) {
		http_respond_code(S, req->conn, RIGD_E_NOT_FOUND, "", "no route %s", req->path);
		return true;
	}
	if (route == RIGD_E_BAD_METHOD) {
		routes_methods(req->path, allowed, sizeof(allowed));
		http_respond_code(S, req->conn, RIGD_E_BAD_METHOD, "", "use %s", allowed);
		return true;
	}
	assert(route >= 0 && route < routes_count);
	if (name[0] && !scene_id_valid(name)) {
		http_respond_code(S, req->conn, RIGD_E_BAD_ID, "scene", "bad scene name");
		return true;
	}
	call = (struct http_call){.conn = req->conn, .method = req->method, .path = req->path,
		.name = name, .args = (char *const *)req->args, .n_args = req->n_args,
		.body = req->body, .body_len = req->body_len, .tok = S->n_tokens > 0 ? tok : NULL};
	if (routes[route].when == ROUTE_NOW) {
		routes[route].handler(S, &call);
		return true;
	}
	d = http_defer_copy(&call, route);
	if (!d) {
		http_respond_code(S, req->conn, RIGD_E_NOMEM, "", "out of memory");
		return true;
	}
	turn_defer(S, d);
	return true;
}

void http_run_deferred(struct server *S, struct deferred *d)
{
	struct http_call call = {.conn = d->conn, .method = d->method, .path = d->path,
		.name = d->scene, .args = d->args, .n_args = d->n_args, .body = d->body,
		.body_len = d->body_len, .tok = d->authed ? d->tok : NULL};

	assert(d->kind == D_HTTP && d->route >= 0 && d->route < routes_count);
	assert(routes[d->route].when == ROUTE_AFTER_COMMIT);
	routes[d->route].handler(S, &call);
}
