/*
 * client.h: the client side of the socket layer, for programs that talk to
 * rigd (rigctl). One websocket or one HTTP request at a time, an input file
 * descriptor read as it becomes readable, and one timer, all served by one
 * libwebsockets context on the calling thread.
 *
 * The client knows bytes and connections. It reassembles websocket messages,
 * queues outgoing ones, sends a bearer token with every handshake and
 * request, and hands everything that happens to the hooks of struct
 * net_client_hooks with the caller's user pointer; it keeps no global state
 * of its own. This header is, with net.h, the only interface to
 * libwebsockets: a program using it never includes libwebsockets.h.
 *
 * Every function here must be called on the thread that calls
 * net_client_service().
 */
#ifndef RIGD_NET_CLIENT_H
#define RIGD_NET_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct net_client net_client;

/*
 * What the client reports. Every hook receives the user pointer given to
 * net_client_new; a hook left NULL is not called. The hooks may call any
 * net_client function except net_client_free.
 */
typedef struct net_client_hooks {
	/* A websocket or HTTP connection could not be made; 'why' is
	 * libwebsockets' reason. */
	void (*connect_failed)(void *user, const char *why);
	/* The websocket is open: messages may be sent. */
	void (*ws_open)(void *user);
	/* One whole websocket message, NUL-terminated at text[len]; borrowed
	 * for the duration of the call. */
	void (*ws_message)(void *user, const char *text, size_t len);
	/* The websocket has closed (either side). */
	void (*ws_closed)(void *user);
	/* The watched descriptor is readable: the hook reads it. A negative
	 * return stops watching it (end of input) and closes it. */
	int (*fd_readable)(void *user);
	/* The watched descriptor hung up without the hook having stopped it:
	 * what is left may still be read, without blocking. */
	void (*fd_hangup)(void *user);
	/* A piece of the HTTP answer's body, with the answer's status. A
	 * negative return abandons the request. */
	int (*http_body)(void *user, int status, const char *bytes, size_t len);
	/* The HTTP answer is complete. */
	void (*http_done)(void *user, int status);
	/* The HTTP connection has closed (after http_done, or instead of it). */
	void (*http_closed)(void *user);
} net_client_hooks;

/* One HTTP request. Every pointer is borrowed until the request is done. */
typedef struct net_client_request {
	const char *method;        /* "GET", "POST", "DELETE", ... */
	const char *host;
	int port;
	const char *path;          /* with its query string */
	const char *body;          /* NULL: no body */
	size_t body_len;           /* bytes */
	const char *content_type;  /* of the body; NULL: application/json */
} net_client_request;

/*
 * Creates a client whose hooks receive 'user'. 'bearer' (borrowed, may be
 * NULL) is sent as "Authorization: Bearer ..." with every websocket
 * handshake and HTTP request, never in a URL. Returns NULL after printing
 * why on stderr. Errors of libwebsockets itself are printed on stderr too.
 */
net_client *net_client_new(const net_client_hooks *hooks, void *user, const char *bearer);

/* Closes every connection and frees the client; accepts NULL. Hooks are
 * not called from here on. */
void net_client_free(net_client *c);

/*
 * Serves the connections once, waiting for something to happen. Returns 0,
 * or a negative value when the event loop has failed.
 */
int net_client_service(net_client *c);

/*
 * Starts opening a websocket to ws://host:port/path (no Origin: a script,
 * not a browser page). Returns 0 when the attempt is under way (its outcome
 * comes as ws_open or connect_failed), -1 when it could not start.
 */
int net_client_ws_connect(net_client *c, const char *host, int port, const char *path);

/* True while the websocket is open or opening. */
bool net_client_ws_connected(const net_client *c);

/*
 * Queues one text message (copied) for the websocket, in order. Returns 0,
 * or -1 (nothing queued) when out of memory.
 */
int net_client_ws_send(net_client *c, const char *text, size_t len);

/* Messages queued and not yet written. */
int net_client_ws_queued(const net_client *c);

/*
 * Closes the websocket normally at its next chance to write, whether or
 * not messages are still queued.
 */
void net_client_ws_close(net_client *c);

/*
 * Closes the websocket and serves the client until it has closed or
 * 'timeout_s' seconds have passed, so the close frame goes out.
 */
void net_client_ws_finish(net_client *c, double timeout_s);

/*
 * Starts one HTTP request. Returns 0 when it is under way (its outcome
 * comes to the http_ and connect_failed hooks), -1 when it could not start.
 */
int net_client_http(net_client *c, const net_client_request *req);

/*
 * Watches 'fd' (a file or a pipe) for input: fd_readable is called each
 * time it is readable. Takes ownership of 'fd' on success (it is closed
 * with the client or when fd_readable stops it). Returns 0, or -1 and the
 * caller keeps 'fd'.
 */
int net_client_watch_fd(net_client *c, int fd);

/* Stops (true) or resumes (false) the fd_readable calls, so input can wait
 * while the other side catches up. */
void net_client_pause_fd(net_client *c, bool pause);

/*
 * Calls 'fn' with the user pointer after 'delay_us' microseconds, replacing
 * any timer already set. There is one timer per client.
 */
void net_client_timer(net_client *c, int64_t delay_us, void (*fn)(void *user));

/* Seconds on a monotonic clock, for timing against net_client_timer. */
double net_client_now_s(void);

#endif
