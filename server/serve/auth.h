/*
 * auth.h: access control. Tokens (kept as SHA-256 digests, never as
 * secrets), the role a token has on a scene, rate buckets, and the
 * decision whether a websocket message may do what it asks.
 *
 * With no token configured access control is off: every check passes and
 * rigd listens on loopback only. Never logs, stores or echoes a token.
 * Every function takes the time it needs as an argument ('now'), so the
 * module is tested without sockets or clocks.
 */
#ifndef RIGD_SERVE_AUTH_H
#define RIGD_SERVE_AUTH_H

#include "core/scene.h"
#include "core/sha256.h"

struct client;
struct server;

/* Roles, each allowing what the one before it does. */
enum role { ROLE_NONE, ROLE_VIEWER, ROLE_EDITOR, ROLE_ADMIN };

/*
 * One configured token: the SHA-256 of the secret (never the secret), its
 * role and scene ("*": all). The same secret may appear several times (an
 * editor of one scene and a viewer of another); its first entry, the
 * principal, holds the rate bucket all its connections share.
 */
struct token {
	unsigned char hash[SHA256_LEN];
	int role;
	char scene[SCENE_ID_MAX + 1];
	int principal;
	double bucket, bucket_t;     /* requests it may make now; when refilled (s) */
};

#include <stdbool.h>
#include <stddef.h>

/*
 * Adds a token of 'role' on 'scene_name' ("*": every scene): 'secret' is
 * the token itself (TOKEN_MIN..TOKEN_MAX visible ASCII characters) or
 * "sha256:" and the 64 hex digits of its digest. Returns 0, or -1 with the
 * reason in 'why' (cap bytes) and the token list unchanged.
 */
int auth_token_add(struct server *S, int role, const char *scene_name, const char *secret,
		   char *why, size_t cap);

/* Adds the token of a "ROLE:SCENE:TOKEN" spec (the token may contain ':').
 * Returns 0, or -1 with the reason in 'why' and the token list unchanged. */
int auth_token_spec(struct server *S, const char *spec, char *why, size_t cap);

/* Adds the tokens of file 'path': one spec a line; blank lines and lines
 * from '#' are skipped. Returns 0, or -1 after printing what was wrong (the
 * tokens of the lines before the bad one stay added). */
int auth_tokens_load(struct server *S, const char *path);

/*
 * The highest role the token with digest 'hash' has on 'scene_name' (NULL:
 * on any scene), ROLE_NONE when it has none there, or -1 when no such token
 * is configured. *principal (may be NULL) gets its bucket's entry.
 */
int auth_role_for(const struct server *S, const unsigned char *hash, const char *scene_name,
		  int *principal);

/* The digest of the token of an "Authorization: Bearer TOKEN" header in
 * 'hash'. False when 'header' (may be NULL) holds no such token. */
bool auth_bearer_hash(const char *header, unsigned char hash[SHA256_LEN]);

/*
 * A token bucket of 'rate' per second holding at most one second's worth:
 * refills *bucket to time 'now' (seconds; *refilled is when it last was, 0:
 * never) and takes one. False, with nothing taken, when it is empty. A
 * rate <= 0 is no limit.
 */
bool auth_bucket_take(double *bucket, double *refilled, int rate, double now);

/* Milliseconds until a bucket of 'rate' holds one again (at least 1). */
int auth_bucket_wait_ms(double bucket, int rate);

/*
 * 0 when client 'c' may do what needs role 'need' on 'scene_name';
 * otherwise RIGD_E_UNAUTHORIZED (no valid token yet) or RIGD_E_FORBIDDEN (a
 * token without that role there). Always 0 when no token is configured.
 */
int auth_ws_allowed(const struct server *S, const struct client *c, int need,
		    const char *scene_name);

/*
 * Whether an HTTP request with header 'authorization' (may be NULL) may do
 * what needs role 'need' on 'scene_name' (NULL: on some scene) at time
 * 'now' (seconds), charging its token's rate bucket. Returns 0 with the
 * token's digest in 'tok'; or RIGD_E_UNAUTHORIZED (no valid token),
 * RIGD_E_FORBIDDEN (not that role there) or RIGD_E_RATE_LIMITED (beyond the
 * token's rate), counted in the metrics, with the answer's message in 'msg'
 * (cap bytes). Tokens must be configured.
 */
int auth_http(struct server *S, int need, const char *scene_name, const char *authorization,
	      double now, unsigned char tok[SHA256_LEN], char *msg, size_t cap);

/*
 * Charges one websocket message of client 'c' at time 'now' to its
 * connection's bucket (--max-rate) and, with a token, to the token's
 * (--max-token-rate, shared by all its connections). A message beyond
 * either rate is refused (false) and not charged. *pause_ms gets how long
 * net should stop reading the connection (0: keep reading): when its
 * bucket ran dry, the sender's own socket backs up, so a pipelining
 * script is slowed rather than refused.
 */
bool auth_ws_rate(struct server *S, struct client *c, double now, int *pause_ms);

/* Loads the tokens of the flags and the file, and applies the rule for a
 * server without any. Returns 0, or 2 after saying on stderr what was wrong. */
int auth_setup(struct server *S);

#endif
