/*
 * ws.c: websocket connections and messages (see ws.h).
 */
#include "ws.h"
#include "auth.h"
#include "clients.h"
#include "interest.h"
#include "log.h"
#include "rooms.h"
#include "server.h"
#include "turn.h"
#include "util.h"

#include "core/edit.h"
#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ws_open(void *ctx, uint64_t conn)
{
	struct server *S = ctx;
	struct client *c = clients_add(S, conn);

	if (!c) {
		net_ws_close(S->n, conn, NET_CLOSE_INTERNAL, "out of memory");
		return;
	}
	serve_log(LOG_INFO, "client %s connected", c->id);
	/* A script may bring its token in the handshake's Authorization. */
	if (S->n_tokens > 0 && net_ws_authorization(S->n, conn)) {
		if (auth_bearer_hash(net_ws_authorization(S->n, conn), c->tok) &&
		    auth_role_for(S, c->tok, NULL, &c->principal) >= 0) {
			c->authed = true;
		} else {
			S->m.unauthorized_total++;
			clients_reply_code(S, c, NULL, RIGD_E_UNAUTHORIZED, "",
					 "the Authorization header holds no valid token");
		}
	}
}

/* Charges a message to the rate buckets; net stops reading a connection
 * whose bucket ran dry until it refills. True when it may be handled. */
static bool ws_rate_ok(struct server *S, struct client *c)
{
	int pause_ms = 0;
	bool ok = auth_ws_rate(S, c, serve_now_s(), &pause_ms);

	if (pause_ms > 0)
		net_ws_pause_for(S->n, c->conn, pause_ms);
	return ok;
}

void ws_closed(void *ctx, uint64_t conn)
{
	struct server *S = ctx;
	struct client *c = clients_get(S, conn);

	if (!c)
		return;
	while (c->n_subs > 0)
		rooms_unsubscribe(S, c, c->subs[c->n_subs - 1].scene);
	turn_forget_client(S, c);
	clients_queue_free(c);
	serve_log(LOG_INFO, "client %s disconnected", c->id);
	clients_remove(S, c);
}

/*
 * {"type":"auth","token"}: the token replaces the connection's principal
 * (a viewer may become an editor, or another scene's viewer) and is
 * answered with an ack of seq 0. A token that is not configured is
 * answered with unauthorized and changes nothing: the connection keeps the
 * principal it had, if any. Without configured tokens access control is
 * off, so any token is acknowledged and changes nothing. Subscriptions made
 * under an earlier token are kept: the client proved it holds that token,
 * and could use it on another connection. The token itself is only hashed;
 * it is never logged, stored or echoed.
 */
static void on_auth(struct server *S, struct client *c, const proto_msg *msg)
{
	unsigned char hash[SHA256_LEN];
	int principal = 0;
	proto_buf b;
	size_t len;
	char *f;

	if (S->n_tokens > 0) {
		sha256_digest(msg->token, strlen(msg->token), hash);
		if (auth_role_for(S, hash, NULL, &principal) < 0) {
			S->m.unauthorized_total++;
			serve_log(LOG_INFO, "client %s: auth with an unknown token", c->id);
			clients_reply_code(S, c, &msg->req, RIGD_E_UNAUTHORIZED, "token",
					 "no such token; the connection keeps the access it had");
			return;
		}
		memcpy(c->tok, hash, sizeof(c->tok));
		c->principal = principal;
		c->authed = true;
		serve_log(LOG_INFO, "client %s: authenticated", c->id);
	}
	proto_buf_init(&b, S->head);
	if (proto_encode_ack(&b, &msg->req, 0, 0) == 0 && (f = serve_take_frame(&b, &len)) != NULL)
		clients_enqueue(S, c, f, len, false);
	else
		clients_reply_code(S, c, &msg->req, RIGD_E_NOMEM, "", "out of memory");
	proto_buf_release(&b);
}

/* Whether 'msg' of 'c' may do what it asks (subscribe and presence read
 * a scene; edits, undos and redos change it); answers it when not. */
static bool message_allowed(struct server *S, struct client *c, const proto_msg *msg)
{
	int need = msg->type == PROTO_SUBSCRIBE || msg->type == PROTO_PRESENCE ||
				   msg->type == PROTO_VIEW
			   ? ROLE_VIEWER
			   : ROLE_EDITOR;
	int rc = auth_ws_allowed(S, c, need, msg->scene);

	if (rc == RIGD_E_UNAUTHORIZED) {
		S->m.unauthorized_total++;
		clients_reply_code(S, c, &msg->req, rc, "", "a valid token is required "
				   "(auth message or Authorization header)");
	} else if (rc) {
		S->m.forbidden_total++;
		clients_reply_code(S, c, &msg->req, rc, "scene", "this token may not %s scene '%s'",
				   need == ROLE_VIEWER ? "read" : "edit", msg->scene);
	}
	return rc == 0;
}

/* A deferred subscribe or unsubscribe, after the commit. */
static void run_subscribe(struct server *S, struct deferred *d)
{
	struct rooms_request q = {.conn = d->conn, .reply = d->reply, .req = d->req,
		.scene = d->scene, .format = d->format, .leave = d->kind == D_UNSUBSCRIBE};

	rooms_subscribe(S, &q);
}

/* A subscribe, unsubscribe or view waits for the commit, with a
 * placeholder keeping its answer in request order; the deferred item
 * takes the view's "always" ids from 'msg'. */
static void defer_subscribe(struct server *S, struct client *c, proto_msg *msg)
{
	struct deferred *d = calloc(1, sizeof(*d));

	if (!d) {
		clients_reply_code(S, c, &msg->req, RIGD_E_NOMEM, "", "out of memory");
		return;
	}
	d->kind = msg->type == PROTO_SUBSCRIBE ? D_SUBSCRIBE
		  : msg->type == PROTO_VIEW    ? D_VIEW
					       : D_UNSUBSCRIBE;
	d->run = d->kind == D_VIEW ? interest_declare : run_subscribe;
	d->conn = c->conn;
	d->req = msg->req;
	snprintf(d->scene, sizeof(d->scene), "%s", msg->scene);
	d->format = msg->format;
	d->view = msg->view;
	d->view_clear = msg->view_clear;
	d->always = msg->always;
	d->n_always = msg->n_always;
	msg->always = NULL;
	msg->n_always = 0;
	d->reply = clients_enqueue(S, c, NULL, 0, true);
	turn_defer(S, d);
}

void ws_message(void *ctx, uint64_t conn, const char *data, size_t len, bool binary)
{
	struct server *S = ctx;
	struct client *c = clients_get(S, conn);
	proto_msg msg;
	proto_req req;
	edit_error err;
	int rc;

	if (!c || c->dropped)
		return;
	S->m.ws_messages_total++;
	if (!ws_rate_ok(S, c)) {
		S->m.rate_limited_total++;
		clients_reply_code(S, c, NULL, RIGD_E_RATE_LIMITED, "",
				 "more than %d messages a second; slow down",
				 S->o.max_rate);
		return;
	}
	if (binary) {
		clients_reply_code(S, c, NULL, RIGD_E_BAD_JSON, "",
				 "binary frames are not accepted; send JSON text");
		return;
	}
	rc = proto_decode_msg(data, len, &S->lim, &msg, &req, &err);
	if (rc) {
		if (!err.code)
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		clients_reply_error(S, c, &req, &err);
		return;
	}
	/* An auth message sets who the connection speaks for; it needs no role
	 * itself, and was charged to the rate buckets above like any other, so
	 * guessing tokens is as slow as sending messages. */
	if (msg.type == PROTO_AUTH) {
		on_auth(S, c, &msg);
		proto_msg_release(&msg);
		return;
	}
	/* Every message is authorised, not just the connection. */
	if (msg.type != PROTO_UNSUBSCRIBE && !message_allowed(S, c, &msg)) {
		proto_msg_release(&msg);
		return;
	}
	switch (msg.type) {
	case PROTO_SUBSCRIBE:
	case PROTO_UNSUBSCRIBE:
	case PROTO_VIEW:
		defer_subscribe(S, c, &msg);
		break;
	case PROTO_EDIT:
	case PROTO_UNDO:
	case PROTO_REDO: {
		const char *client;

		/* A batch without a client is the connection's own, so that its
		 * undo finds it. */
		if (!msg.batch.client[0])
			edit_copy_name(msg.batch.client, sizeof(msg.batch.client), c->id);
		client = msg.batch.client;
		edit_error_clear(&err);
		if (turn_submit(S, msg.type, msg.scene, &msg.batch, client, c, 0, &msg.req, &err))
			clients_reply_error(S, c, &msg.req, &err);
		break;
	}
	case PROTO_PRESENCE:
		rooms_presence(S, c, &msg);
		break;
	default:
		clients_reply_code(S, c, &msg.req, RIGD_E_UNKNOWN_TYPE, "type", "unknown message type");
	}
	proto_msg_release(&msg);
}
