/*
 * http_respond.h: the answers every HTTP handler gives: JSON bodies and
 * errors with their status. The one writer of an answer: to net, or, for
 * a request another process relayed to this one, back to that process
 * through the cluster's hook (serve_hooks.h).
 */
#ifndef RIGD_SERVE_HTTP_RESPOND_H
#define RIGD_SERVE_HTTP_RESPOND_H

#include "codec/proto.h"
#include "core/edit.h"

#include <stdint.h>

struct server;

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

/* 201 {"name","seq":0,"nodes":0} (and "dims":2 for a 2D scene): scene
 * 'name' was just created. */
void http_respond_created(struct server *S, uint64_t conn, const char *name, int dims);

/* 200 {"deleted":"NAME"}: scene 'name' was deleted. */
void http_respond_deleted(struct server *S, uint64_t conn, const char *name);

#endif
