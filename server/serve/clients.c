/*
 * clients.c: the client table and reply queues (see clients.h).
 *
 * A queue's accounting ('queued' entries, 'queued_bytes' of frames) is kept
 * exact at every step: the asserts below state it.
 */
#include "clients.h"
#include "log.h"
#include "server.h"
#include "util.h"

#include "core/err.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct client *clients_get(struct server *S, uint64_t conn)
{
	uint32_t slot = (uint32_t)(conn & 0xffffffffu);

	if (slot >= (uint32_t)S->cap_clients || !S->clients[slot] || S->clients[slot]->conn != conn)
		return NULL;
	return S->clients[slot];
}

static void reply_free(struct reply *r)
{
	if (r) {
		free(r->frame);
		free(r);
	}
}

void clients_queue_free(struct client *c)
{
	while (c->head) {
		struct reply *r = c->head;

		c->head = r->next;
		reply_free(r);
	}
	c->tail = NULL;
	c->queued = 0;
	c->queued_bytes = 0;
	free(c->ready);
	c->ready = NULL;
}

/* Reads 'c' again unless back-pressure or its share of a commit holds it. */
static void read_or_hold(struct server *S, struct client *c)
{
	net_ws_hold(S->n, c->conn, c->held || c->turn_held);
}

void clients_flow(struct server *S, struct client *c)
{
	size_t cap = S->o.reply_queue;
	bool over = c->queued_bytes > cap / 2 || c->queued > REPLY_QUEUE_HOLD_COUNT;
	bool under = c->queued_bytes <= cap / 4 && c->queued <= REPLY_QUEUE_HOLD_COUNT / 4;

	if (c->held && c->queued_bytes < c->held_bytes) {
		/* It reads: the clock of clients_tick starts again. */
		c->held_at = serve_now_s();
		c->held_bytes = c->queued_bytes;
	}
	if (c->dropped || (c->held ? !under : !over))
		return;
	c->held = !c->held;
	if (c->held) {
		S->m.clients_held_total++;
		c->held_at = serve_now_s();
		c->held_bytes = c->queued_bytes;
	}
	read_or_hold(S, c);
}

void clients_hold_for_turn(struct server *S, struct client *c, bool hold)
{
	if (c->turn_held == hold)
		return;
	c->turn_held = hold;
	if (hold)
		S->m.clients_turn_held_total++;
	read_or_hold(S, c);
}

void clients_tick(struct server *S)
{
	double now = serve_now_s();

	for (int i = 0; i < S->cap_clients; i++) {
		struct client *c = S->clients[i];

		if (!c || !c->held || c->dropped)
			continue;
		if (c->head && c->head->pending)
			c->held_at = now;  /* waiting for a commit, not for the client */
		else if (now - c->held_at > CLIENTS_HOLD_CLOSE_S)
			clients_drop(S, c);
	}
}

/* Closes a client whose queue overflowed: it did not read its replies. */
void clients_drop(struct server *S, struct client *c)
{
	if (c->dropped)
		return;
	serve_log(LOG_WARN,
		  "client %s: does not read its replies (%zu bytes queued, --reply-queue %zu); "
		  "closing it (1008)", c->id, c->queued_bytes, S->o.reply_queue);
	c->dropped = true;
	S->m.clients_dropped_total++;
	if (S->client_dropped)  /* its pending answers go nowhere */
		S->client_dropped(S, c);
	clients_queue_free(c);
	net_ws_close(S->n, c->conn, NET_CLOSE_POLICY, "reply queue overflow");
}

/*
 * Appends a reply to the client's queue: 'frame' (may be NULL for a
 * placeholder) is owned by the queue from here on. Returns the entry, or
 * NULL when the client was dropped for overflow or memory ran out (the frame
 * is freed then).
 */
struct reply *clients_enqueue(struct server *S, struct client *c, char *frame, size_t len,
			     bool pending)
{
	struct reply *r;

	if (c->dropped) {
		free(frame);
		return NULL;
	}
	if (c->queued_bytes + len > S->o.reply_queue || c->queued >= REPLY_QUEUE_MAX_COUNT) {
		free(frame);
		clients_drop(S, c);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(frame);
		clients_drop(S, c);
		return NULL;
	}
	r->frame = frame;
	r->len = len;
	r->pending = pending;
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	c->queued++;
	c->queued_bytes += len;
	assert(c->head && !r->next && c->queued <= REPLY_QUEUE_MAX_COUNT);
	clients_flow(S, c);
	if (!pending && frame)
		net_ws_wake(S->n, c->conn);
	return r;
}

/* Fills a placeholder (taking ownership of 'frame'). */
void clients_fill(struct server *S, struct client *c, struct reply *r, char *frame, size_t len)
{
	/* Only a placeholder is filled, once: its bytes were not counted yet. */
	assert(r->pending && !r->frame && r->len == 0 && !c->dropped);
	r->frame = frame;
	r->len = len;
	r->pending = false;
	c->queued_bytes += len;
	if (c->queued_bytes > S->o.reply_queue) {
		clients_drop(S, c);
		return;
	}
	clients_flow(S, c);
	net_ws_wake(S->n, c->conn);
}

/* An error frame for 'req' (may be NULL). NULL when out of memory. */
char *clients_error_frame(struct server *S, const proto_req *req, const edit_error *err,
			 size_t *len)
{
	proto_buf b;

	proto_buf_init(&b, S->head);
	if (proto_encode_error(&b, req, err)) {
		proto_buf_release(&b);
		return NULL;
	}
	return serve_take_frame(&b, len);
}

void clients_reply_error(struct server *S, struct client *c, const proto_req *req,
			const edit_error *err)
{
	size_t len;
	char *f = clients_error_frame(S, req, err, &len);

	if (f)
		clients_enqueue(S, c, f, len, false);
}

void clients_reply_code(struct server *S, struct client *c, const proto_req *req, int code,
			     const char *field, const char *fmt, ...)
{
	edit_error err;
	va_list ap;

	va_start(ap, fmt);
	edit_error_vset(&err, code, -1, field, fmt, ap);
	va_end(ap);
	clients_reply_error(S, c, req, &err);
}


char *clients_next_reply(struct client *c, size_t *len)
{
	while (c->head && !c->head->pending) {
		struct reply *r = c->head;
		char *frame = r->frame;

		c->head = r->next;
		if (!c->head)
			c->tail = NULL;
		assert(c->queued > 0 && c->queued_bytes >= r->len);
		c->queued--;
		c->queued_bytes -= r->len;
		assert(c->head || (c->queued == 0 && c->queued_bytes == 0));
		*len = r->len;
		r->frame = NULL;
		reply_free(r);
		if (frame)
			return frame;
	}
	return NULL;
}

struct client *clients_add(struct server *S, uint64_t conn)
{
	uint32_t slot = (uint32_t)(conn & 0xffffffffu);
	struct client *c;

	if ((int)slot >= S->cap_clients) {
		int cap = S->cap_clients;
		struct client **v = serve_grow(S->clients, &cap, (int)slot + 1, sizeof(*v));

		if (!v)
			return NULL;
		memset(v + S->cap_clients, 0, (size_t)(cap - S->cap_clients) * sizeof(*v));
		S->clients = v;
		S->cap_clients = cap;
	}
	assert(!S->clients[slot]);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->conn = conn;
	/* Unique across restarts too, so that a (client, client_seq) of an old
	 * run never passes for a resend. */
	snprintf(c->id, sizeof(c->id), "c%08" PRIx32 "-%" PRIu64, S->boot_id, ++S->next_client);
	S->clients[slot] = c;
	S->n_clients++;
	return c;
}

void clients_remove(struct server *S, struct client *c)
{
	uint32_t slot = (uint32_t)(c->conn & 0xffffffffu);

	assert(slot < (uint32_t)S->cap_clients && S->clients[slot] == c && S->n_clients > 0);
	clients_queue_free(c);
	S->clients[slot] = NULL;
	S->n_clients--;
	for (int i = 0; i < c->n_subs; i++)
		free(c->subs[i].known);  /* their rooms go with the server */
	free(c->subs);
	free(c->name);
	free(c);
}
