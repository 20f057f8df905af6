/*
 * net.h: the transport. HTTP requests and websocket connections, on one
 * libwebsockets context served by the calling thread.
 *
 * net knows bytes and connections, never JSON, scenes or SQL: it hands every
 * complete HTTP request (with its whole body) and every reassembled websocket
 * message to the callbacks of struct net_callbacks, and it asks the callbacks
 * for the next frame when a connection can take one. It serves the static
 * files of the web root by itself. This header is the only interface to
 * libwebsockets; nothing else in the server includes libwebsockets.h.
 *
 * Connections are named by a 64-bit id (slot and generation), never by a
 * pointer: an id of a connection that has gone is simply ignored, so the
 * layer above may answer a request after its client has left.
 *
 * Every function here must be called on the thread that runs
 * net_run().
 *
 * Every HTTP answer carries the security headers (Content-Security-Policy
 * with the hashes of index.html's inline scripts, X-Content-Type-Options,
 * Referrer-Policy, X-Frame-Options; Strict-Transport-Security under TLS);
 * static files carry an ETag and are answered 304 when the browser's copy
 * is current (docs/security.md).
 */
#ifndef RIGD_NET_H
#define RIGD_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net net;

enum net_method {
	NET_GET,
	NET_HEAD,
	NET_POST,
	NET_PUT,
	NET_DELETE,
	NET_PATCH,
	NET_OPTIONS,
	NET_OTHER,
};

/* Websocket close codes net uses (RFC 6455, section 7.4.1). */
enum net_close_code {
	NET_CLOSE_NORMAL = 1000,
	NET_CLOSE_GOING_AWAY = 1001,
	NET_CLOSE_PROTOCOL = 1002,
	NET_CLOSE_POLICY = 1008,
	NET_CLOSE_TOO_BIG = 1009,
	NET_CLOSE_INTERNAL = 1011,
	NET_CLOSE_TRY_AGAIN = 1013,
};

#define NET_MAX_ARGS 16        /* query arguments kept per request */

/*
 * One HTTP request, complete with its body. Every pointer is borrowed and
 * valid only during the http callback.
 */
typedef struct net_request {
	uint64_t conn;          /* for net_http_respond */
	int method;             /* enum net_method */
	const char *path;       /* URL-decoded path, without the query */
	int n_args;             /* query arguments, URL-decoded, "name=value" */
	const char *args[NET_MAX_ARGS];
	const char *origin;     /* NULL when the request carried no Origin */
	const char *authorization; /* NULL when absent */
	const char *content_type;  /* NULL when absent */
	const char *body;       /* NUL-terminated copy; "" when there is none */
	size_t body_len;        /* bytes */
} net_request;

/* What the layer above is told. ctx is passed back to every callback. */
typedef struct net_callbacks {
	void *ctx;
	/*
	 * An HTTP request that is not for a static file: the layer above answers
	 * it with net_http_respond, now or later (after a commit). Return true
	 * when it will; false lets net serve a static file of the web root
	 * (GET and HEAD) or answer 404 (other methods).
	 */
	bool (*http)(void *ctx, const net_request *req);
	/* A websocket connection opened on /ws with an allowed Origin. */
	void (*ws_open)(void *ctx, uint64_t conn);
	/*
	 * One complete message, reassembled from its fragments (NUL-terminated
	 * copy, 'len' bytes before the NUL). 'binary' for a binary message.
	 */
	void (*ws_message)(void *ctx, uint64_t conn, const char *data, size_t len,
			   bool binary);
	/*
	 * The connection can take one frame. Return a malloc'd buffer whose
	 * first net_frame_head() bytes are left for net, followed by the *len
	 * bytes of a text frame (ownership passes to net), or NULL when there is
	 * nothing to send; set *more when another frame is already waiting, and
	 * *binary (false on entry) when the frame is a binary message.
	 * (A proto_buf initialised with that head and taken with
	 * proto_buf_take is such a buffer.)
	 */
	char *(*ws_writable)(void *ctx, uint64_t conn, size_t *len, bool *more, bool *binary);
	/* The connection has gone (whoever closed it). Its id is dead now. */
	void (*ws_closed)(void *ctx, uint64_t conn);
	/* The end of a service turn asked for with net_schedule_turn. */
	void (*turn)(void *ctx);
	/* Every second, for housekeeping (may be NULL). */
	void (*tick)(void *ctx);
} net_callbacks;

typedef struct net_config {
	const char *host;             /* listen address, e.g. "127.0.0.1" */
	int port;                     /* 0: the kernel picks one (net_port) */
	const char *web_root;         /* directory served at "/", or NULL */
	const char *const *origins;   /* exact allowed Origin values */
	int n_origins;
	size_t max_message;           /* bytes in one reassembled ws message */
	int max_fragments;            /* receive chunks in one ws message */
	size_t max_body;              /* bytes in one HTTP request body */
	int idle_timeout_s;           /* ws: ping after half, hang up after all */
	int max_connections;          /* open websockets (0: no limit); one
					 more is closed with 1013 at once */
	int log_level;                /* 0 errors .. 3 debug */
	const char *tls_cert;         /* PEM certificate (chain) and key: */
	const char *tls_key;          /* both set, or TLS is off */
	bool deflate;                 /* accept permessage-deflate (RFC 7692)
					 from websocket clients that offer it */
	bool libuv;                   /* run on a libuv loop (libwebsockets'
					 event-lib plugin), which net_event_loop
					 hands to others; false: lws' own poll loop */
} net_config;

/* Counters for /metrics; every field only grows except the gauges. */
typedef struct net_stats {
	long ws_clients;              /* gauge: open websocket connections */
	uint64_t ws_opened;
	uint64_t ws_rejected;         /* refused at the handshake (path, Origin) */
	uint64_t ws_closed_too_big;   /* closed 1009 */
	uint64_t http_requests;
	uint64_t bytes_sent;          /* payload bytes handed to the socket */
	uint64_t bytes_received;      /* ws payload and HTTP body bytes */
	uint64_t frames_sent;
	uint64_t messages_received;
} net_stats;

/* Bytes a frame buffer reserves in front of its text for net's framing
 * (libwebsockets' LWS_PRE). */
size_t net_frame_head(void);

/* The defaults: 1 MiB messages of at most 4096 chunks, 8 MiB bodies, 60 s
 * idle timeout, 1024 connections, errors only. */
void net_config_defaults(net_config *cfg);

/*
 * Creates the context and binds the listening socket. The config is copied
 * (strings included); the callbacks are copied. Returns NULL (with a message
 * on stderr) when the address cannot be bound or memory runs out.
 */
net *net_new(const net_config *cfg, const net_callbacks *cb);

/* Closes every connection at once and frees everything; accepts NULL. */
void net_free(net *n);

/* Allows one more exact Origin (for origins known only once the port is
 * bound). 0 or RIGD_E_NOMEM. */
int net_add_origin(net *n, const char *origin);

/*
 * The libuv loop (a uv_loop_t *) the context runs on when it was created
 * with cfg.libuv, or NULL. Others may add their handles to it (the Redis
 * connection of cluster/); they run on net_run's thread, and must be closed
 * before net_free.
 */
void *net_event_loop(const net *n);

/* The port actually bound (useful with port 0). */
int net_port(const net *n);

/* True when connections are TLS (https, wss). */
bool net_tls(const net *n);

/*
 * The Authorization header of the handshake that opened websocket 'conn'
 * (scripts send their token so), or NULL when there was none or the
 * connection has gone. Borrowed: valid until the connection closes.
 */
const char *net_ws_authorization(const net *n, uint64_t conn);

/*
 * Serves until net_stop is called; returns 0, or a negative RIGD_E_IO when
 * the event loop fails. Signals interrupt the wait (net_stop from a signal
 * handler is safe).
 */
int net_run(net *n);

/* Makes net_run return after the current turn. Async-signal-safe. */
void net_stop(net *n);

/*
 * Lets every websocket take what the callbacks still have for it, then
 * sends it a close frame with 'code', and serves until all have gone and
 * pending HTTP responses are written, or 'timeout_ms' have passed (then
 * net_free cuts what is left). Used at shutdown, after net_run.
 */
void net_drain(net *n, int code, int timeout_ms);

/*
 * Asks for the callbacks' turn() once the events already received in this
 * service pass have been handled: the group-commit point. Calling it again
 * before the turn runs does nothing more.
 */
void net_schedule_turn(net *n);

/*
 * Asks for the callbacks' turn() in 'us' microseconds (a group commit's
 * window, turn.c), whatever else runs meanwhile. A turn already asked for
 * this way stays as it is; net_schedule_turn is separate, and sooner.
 */
void net_schedule_turn_in(net *n, int64_t us);

/* Asks for a ws_writable callback on 'conn'. 0, or RIGD_E_NOT_FOUND when
 * the connection has gone. */
int net_ws_wake(net *n, uint64_t conn);

/*
 * Stops reading websocket 'conn' for 'ms' milliseconds (the peer's sends
 * back up into its own socket: TCP flow control), then reads again; a
 * second call moves the end of the pause. Messages lws had already read
 * may still arrive during the pause. 0, or RIGD_E_NOT_FOUND.
 */
int net_ws_pause_for(net *n, uint64_t conn, int ms);

/*
 * Back-pressure: with 'hold', stops reading websocket 'conn' until a call
 * without it (the peer's sends back up into its own socket); independent
 * of net_ws_pause_for, reading resumes when neither holds it. 0, or
 * RIGD_E_NOT_FOUND.
 */
int net_ws_hold(net *n, uint64_t conn, bool hold);

/*
 * With 'gather', websocket 'conn' stops waking the loop for small reads:
 * its socket is reported readable only once NET_GATHER_BYTES wait in it
 * (SO_RCVLOWAT), or the peer closes; without it, at every byte again. What
 * it sends meanwhile waits in the socket and is read whole once gathering
 * ends (or, above the mark, at once). For a client that sends many small
 * messages while a commit waits for its window. 0, or RIGD_E_NOT_FOUND.
 */
#define NET_GATHER_BYTES (64 * 1024)
int net_ws_gather(net *n, uint64_t conn, bool gather);

/*
 * Asks for the callbacks' turn() from another thread (the commit writer,
 * when a commit finished): the one call of this interface that is safe
 * off the loop's thread. The loop wakes (lws_cancel_service) and runs the
 * turn from LWS_CALLBACK_EVENT_WAIT_CANCELLED.
 */
void net_wake_from_thread(net *n);

/*
 * Closes 'conn' with 'code' and 'reason' (at most 123 bytes; may be NULL)
 * at its next writable moment, dropping whatever it had not sent. 0, or
 * RIGD_E_NOT_FOUND.
 */
int net_ws_close(net *n, uint64_t conn, int code, const char *reason);

/*
 * Answers the HTTP request of 'conn' with 'status', 'content_type' and the
 * 'len' bytes of 'body'; takes ownership of 'body' (malloc'd; may be NULL
 * when len is 0) in every case. 0, or RIGD_E_NOT_FOUND when the client has
 * gone (the body is freed), or RIGD_E_INTERNAL when it was already answered.
 */
int net_http_respond(net *n, uint64_t conn, int status, const char *content_type,
		     char *body, size_t len);

/*
 * Answers 200 with a stored document, as net_http_respond, but with its own
 * Content-Security-Policy 'csp' (a string that outlives the answer, such as
 * a literal) instead of the server's, and the ETag 'etag' (copied; up to 79
 * bytes, quotes included; may be NULL), revalidated on every use
 * (Cache-Control: no-cache). The other security headers are as on every
 * answer. Takes ownership of 'body'. 0, RIGD_E_NOT_FOUND or RIGD_E_INTERNAL.
 */
int net_http_respond_doc(net *n, uint64_t conn, const char *content_type, char *body,
			 size_t len, const char *csp, const char *etag);

/*
 * Answers 200 with 'body' as net_http_respond does, and a
 * Content-Disposition header 'disposition' (copied; a value the caller
 * made safe for a header, such as `attachment; filename="a.json"`), so a
 * browser saves the answer as a file. Takes ownership of 'body'. 0,
 * RIGD_E_NOT_FOUND, RIGD_E_INTERNAL, or RIGD_E_NOMEM (the body freed, not
 * answered).
 */
int net_http_respond_download(net *n, uint64_t conn, const char *content_type, char *body,
			      size_t len, const char *disposition);

/* The counters. */
void net_get_stats(const net *n, net_stats *out);

#endif
