/*
 * http_respond.c: the answers of HTTP requests (see http_respond.h).
 */
#include "http_respond.h"
#include "serve_hooks.h"
#include "server.h"

#include "core/err.h"

#include <stdarg.h>
#include <stddef.h>

/* The one writer of an answer: to net, or, for a request another process
 * relayed to this one, back to that process through Redis. Takes 'body'. */
static void send_answer(struct server *S, uint64_t conn, int status, const char *type,
			char *body, size_t len)
{
	if (!(S->hooks && S->hooks->http_answer(S, conn, status, body, len)))
		net_http_respond(S->n, conn, status, type, body, len);
}

void http_respond_buf(struct server *S, uint64_t conn, int status, const char *type,
			proto_buf *b)
{
	size_t len = b->len;
	char *body = proto_buf_take(b);

	send_answer(S, conn, status, type, body, body ? len : 0);
}

void http_respond_error(struct server *S, uint64_t conn, const edit_error *err)
{
	proto_buf b;

	proto_buf_init(&b, 0);
	if (proto_encode_http_error(&b, err) || proto_buf_append(&b, "\n", 1)) {
		proto_buf_release(&b);
		send_answer(S, conn, 500, "application/json", NULL, 0);
		return;
	}
	http_respond_buf(S, conn, err_http_status(err->code), "application/json", &b);
}

void http_respond_code(struct server *S, uint64_t conn, int code, const char *field,
			 const char *fmt, ...)
{
	edit_error err;
	va_list ap;

	va_start(ap, fmt);
	edit_error_vset(&err, code, -1, field, fmt, ap);
	va_end(ap);
	http_respond_error(S, conn, &err);
}

void http_respond_json(struct server *S, uint64_t conn, int status, proto_buf *b)
{
	if (proto_buf_append(b, "\n", 1)) {
		proto_buf_release(b);
		http_respond_code(S, conn, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	http_respond_buf(S, conn, status, "application/json", b);
}

void http_respond_built(struct server *S, uint64_t conn, int status, proto_buf *b, int rc)
{
	if (rc) {
		proto_buf_release(b);
		http_respond_code(S, conn, rc, "", "%s", err_str(rc));
		return;
	}
	http_respond_json(S, conn, status, b);
}

/* Answers an engine error about scene 'name'. */
void http_respond_engine(struct server *S, uint64_t conn, int rc, const char *name)
{
	if (rc == RIGD_E_UNKNOWN_SCENE)
		http_respond_code(S, conn, rc, "", "no scene '%s'", name);
	else if (rc == RIGD_E_STORAGE)
		http_respond_code(S, conn, rc, "", "%s: %s", err_str(rc), engine_errmsg(S->e));
	else
		http_respond_code(S, conn, rc, "", "%s", err_str(rc));
}

void http_respond_created(struct server *S, uint64_t conn, const char *name, int dims)
{
	proto_buf b;
	int rc;

	proto_buf_init(&b, 0);
	rc = PROTO_BUF_LIT(&b, "{\"name\":") || proto_buf_json_string(&b, name) ||
	     PROTO_BUF_LIT(&b, ",\"seq\":0,\"nodes\":0") ||
	     (dims == 2 && PROTO_BUF_LIT(&b, ",\"dims\":2")) || PROTO_BUF_LIT(&b, "}");
	http_respond_built(S, conn, 201, &b, rc ? RIGD_E_NOMEM : 0);
}

void http_respond_deleted(struct server *S, uint64_t conn, const char *name)
{
	proto_buf b;
	int rc;

	proto_buf_init(&b, 0);
	rc = PROTO_BUF_LIT(&b, "{\"deleted\":") || proto_buf_json_string(&b, name) ||
	     PROTO_BUF_LIT(&b, "}");
	http_respond_built(S, conn, 200, &b, rc ? RIGD_E_NOMEM : 0);
}
