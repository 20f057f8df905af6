/*
 * auth.c: tokens, roles and rate buckets (see auth.h).
 *
 * Tokens are kept as SHA-256 digests: a presented token is hashed and its
 * digest compared with every entry, byte by byte without an early exit, so
 * neither the secrets nor (by timing) their prefixes can be read back from
 * the process. With no token configured, access control is off and rigd
 * listens on loopback only (auth_setup). This module never answers a
 * request itself: it decides, and its callers answer.
 */
#include "auth.h"
#include "clients.h"
#include "log.h"
#include "server.h"
#include "util.h"

#include "core/err.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static const char *const role_names[] = {"none", "viewer", "editor", "admin"};

static int hex_digit(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0'
	       : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
	       : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
					 : -1;
}

/*
 * Adds a token: 'secret' is the token itself (TOKEN_MIN..TOKEN_MAX visible
 * ASCII characters) or "sha256:" and the 64 hex digits of its digest (what
 * rigd --hash-token prints, for files that should hold no secret). 0, or -1
 * with the reason in 'why'.
 */
int auth_token_add(struct server *S, int role, const char *scene_name, const char *secret,
		     char *why, size_t cap)
{
	struct token t;
	size_t len = strlen(secret);

	memset(&t, 0, sizeof(t));
	if (strncmp(secret, "sha256:", 7) == 0) {
		if (len != 7 + 2 * SHA256_LEN) {
			snprintf(why, cap, "sha256: needs 64 hex digits");
			return -1;
		}
		for (int i = 0; i < SHA256_LEN; i++) {
			int hi = hex_digit(secret[7 + 2 * i]), lo = hex_digit(secret[8 + 2 * i]);

			if (hi < 0 || lo < 0) {
				snprintf(why, cap, "sha256: needs 64 hex digits");
				return -1;
			}
			t.hash[i] = (unsigned char)(hi << 4 | lo);
		}
	} else {
		if (len < TOKEN_MIN || len > TOKEN_MAX) {
			snprintf(why, cap, "a token is %d to %d characters", TOKEN_MIN, TOKEN_MAX);
			return -1;
		}
		for (size_t i = 0; i < len; i++)
			if (secret[i] < 0x21 || secret[i] > 0x7e) {
				snprintf(why, cap, "a token is visible ASCII characters, no spaces");
				return -1;
			}
		sha256_digest(secret, len, t.hash);
	}
	if ((strcmp(scene_name, "*") != 0 && !scene_id_valid(scene_name)) ||
	    strlen(scene_name) >= sizeof(t.scene)) {
		snprintf(why, cap, "'%.70s' is not a scene name or *", scene_name);
		return -1;
	}
	memcpy(t.scene, scene_name, strlen(scene_name) + 1);
	t.role = role;
	t.principal = S->n_tokens;
	for (int i = 0; i < S->n_tokens; i++)
		if (memcmp(S->tokens[i].hash, t.hash, SHA256_LEN) == 0) {
			t.principal = S->tokens[i].principal;
			break;
		}
	{
		struct token *v = serve_grow(S->tokens, &S->cap_tokens, S->n_tokens + 1,
						 sizeof(*v));
		if (!v) {
			snprintf(why, cap, "out of memory");
			return -1;
		}
		S->tokens = v;
	}
	S->tokens[S->n_tokens++] = t;
	return 0;
}

/* "ROLE:SCENE:TOKEN" (the token may contain ':'). 0, or -1 with 'why'. */
int auth_token_spec(struct server *S, const char *spec, char *why, size_t cap)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char role[16], sname[SCENE_ID_MAX + 2];
	int r = -1;

	if (!c1 || !c2 || (size_t)(c1 - spec) >= sizeof(role) ||
	    (size_t)(c2 - c1 - 1) >= sizeof(sname)) {
		snprintf(why, cap, "expected ROLE:SCENE:TOKEN");
		return -1;
	}
	memcpy(role, spec, (size_t)(c1 - spec));
	role[c1 - spec] = '\0';
	memcpy(sname, c1 + 1, (size_t)(c2 - c1 - 1));
	sname[c2 - c1 - 1] = '\0';
	for (int i = ROLE_VIEWER; i <= ROLE_ADMIN; i++)
		if (strcmp(role, role_names[i]) == 0)
			r = i;
	if (r < 0) {
		snprintf(why, cap, "role '%s' is not viewer, editor or admin", role);
		return -1;
	}
	if (r == ROLE_ADMIN && strcmp(sname, "*") != 0) {
		snprintf(why, cap, "an admin token is for every scene: admin:*:TOKEN");
		return -1;
	}
	return auth_token_add(S, r, sname, c2 + 1, why, cap);
}

/* One ROLE:SCENE:TOKEN a line; blank lines and lines from '#' are skipped.
 * 0, or -1 after printing what was wrong. */
int auth_tokens_load(struct server *S, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], why[128];
	int lineno = 0, rc = 0;

	if (!f) {
		fprintf(stderr, "rigd: --tokens %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *p = line;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
				   line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '#')
			continue;
		if (auth_token_spec(S, p, why, sizeof(why)) != 0) {
			fprintf(stderr, "rigd: %s:%d: %s\n", path, lineno, why);
			rc = -1;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * The highest role the token with digest 'hash' has on 'scene' (NULL: on
 * any scene), ROLE_NONE when it has none there, or -1 when no such token is
 * configured. *principal (may be NULL) gets its bucket's entry.
 */
int auth_role_for(const struct server *S, const unsigned char *hash, const char *scene_name,
		    int *principal)
{
	int best = -1;

	for (int i = 0; i < S->n_tokens; i++) {
		const struct token *t = &S->tokens[i];
		unsigned diff = 0;
		int r = ROLE_NONE;

		for (int k = 0; k < SHA256_LEN; k++)
			diff |= (unsigned)(t->hash[k] ^ hash[k]);
		if (diff)
			continue;
		if (principal)
			*principal = t->principal;
		if (t->role == ROLE_ADMIN || !scene_name || strcmp(t->scene, "*") == 0 ||
		    strcmp(t->scene, scene_name) == 0)
			r = t->role;
		if (r > best)
			best = r;
	}
	return best;
}

/* The token of an "Authorization: Bearer TOKEN" header, hashed into 'hash'.
 * False when there is no such header. */
bool auth_bearer_hash(const char *header, unsigned char hash[SHA256_LEN])
{
	size_t len;

	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	header += 7;
	while (*header == ' ')
		header++;
	len = strlen(header);
	while (len > 0 && header[len - 1] == ' ')
		len--;
	if (len == 0 || len > TOKEN_MAX)
		return false;
	sha256_digest(header, len, hash);
	return true;
}

/*
 * A token bucket of 'rate' per second holding at most one second's worth:
 * refills it to 'now' and takes one. False (nothing taken) when empty.
 */
bool auth_bucket_take(double *bucket, double *refilled, int rate, double now)
{
	if (rate <= 0)
		return true;
	if (*refilled == 0)
		*bucket = rate;
	else
		*bucket += (now - *refilled) * rate;
	if (*bucket > rate)
		*bucket = rate;
	*refilled = now;
	if (*bucket < 1)
		return false;
	*bucket -= 1;
	return true;
}

/* Milliseconds until a bucket of 'rate' holds one again. */
int auth_bucket_wait_ms(double bucket, int rate)
{
	double ms = bucket >= 1 || rate <= 0 ? 0 : (1 - bucket) * 1000.0 / rate;

	return (int)ms + 1;
}

/*
 * 0 when client 'c' may do what needs 'need' on 'scene_name'; otherwise
 * RIGD_E_UNAUTHORIZED (no valid token yet) or RIGD_E_FORBIDDEN (a token
 * without that role there). Always 0 when no token is configured.
 */
int auth_ws_allowed(const struct server *S, const struct client *c, int need,
		      const char *scene_name)
{
	if (S->n_tokens == 0)
		return 0;
	if (!c->authed)
		return RIGD_E_UNAUTHORIZED;
	return auth_role_for(S, c->tok, scene_name, NULL) >= need ? 0 : RIGD_E_FORBIDDEN;
}

/* True for an address only this machine can reach. */
static bool host_is_loopback(const char *host)
{
	return strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
	       strcmp(host, "localhost") == 0;
}

/* Loads the tokens of the flags and the file, and applies the rule for a
 * server without any. 0, or 2 after saying what was wrong. */
int auth_setup(struct server *S)
{
	char why[128];

	for (int i = 0; i < S->o.n_token_args; i++)
		if (auth_token_spec(S, S->o.token_args[i], why, sizeof(why)) != 0) {
			fprintf(stderr, "rigd: %s: %s\n",
				strncmp(S->o.token_args[i], "admin:*:", 8) == 0 ? "--admin-token"
										  : "--token",
				why);
			return 2;
		}
	if (S->o.tokens_file && auth_tokens_load(S, S->o.tokens_file) != 0)
		return 2;
	if (S->n_tokens > 0) {
		serve_log(LOG_INFO, "%d tokens configured: every API request and message is authorised",
		      S->n_tokens);
		return 0;
	}
	if (!host_is_loopback(S->o.host) && !S->o.insecure_remote) {
		fprintf(stderr, "rigd: refusing to serve %s without tokens: anyone who can reach it "
			"could read and edit every scene. Configure --token/--admin-token/--tokens, "
			"or listen on 127.0.0.1, or accept the risk with --insecure-allow-remote.\n",
			S->o.host);
		return 2;
	}
	fprintf(stderr, host_is_loopback(S->o.host)
		? "rigd: no tokens configured: access control is off, so rigd listens on "
		  "loopback only (docs/security.md)\n"
		: "rigd: no tokens configured and --insecure-allow-remote: anyone who can reach "
		  "%s may read and edit every scene\n", S->o.host);
	return 0;
}

int auth_http(struct server *S, int need, const char *scene_name, const char *authorization,
	      double now, unsigned char tok[SHA256_LEN], char *msg, size_t cap)
{
	int principal = 0, role;
	struct token *t;

	assert(S->n_tokens > 0 && need > ROLE_NONE && need <= ROLE_ADMIN);
	if (!auth_bearer_hash(authorization, tok) ||
	    (role = auth_role_for(S, tok, scene_name, &principal)) < 0) {
		S->m.unauthorized_total++;
		snprintf(msg, cap, "send a valid token: Authorization: Bearer TOKEN");
		return RIGD_E_UNAUTHORIZED;
	}
	if (role < need) {
		S->m.forbidden_total++;
		if (need == ROLE_ADMIN)
			snprintf(msg, cap, "this token is not an admin token");
		else
			snprintf(msg, cap, "this token is not %s token for scene %s",
				 need == ROLE_EDITOR ? "an editor" : "a viewer",
				 scene_name ? scene_name : "?");
		return RIGD_E_FORBIDDEN;
	}
	assert(principal >= 0 && principal < S->n_tokens);
	t = &S->tokens[principal];
	if (!auth_bucket_take(&t->bucket, &t->bucket_t, S->o.max_token_rate, now)) {
		S->m.rate_limited_total++;
		snprintf(msg, cap, "more than %d requests a second with this token",
			 S->o.max_token_rate);
		return RIGD_E_RATE_LIMITED;
	}
	return 0;
}

bool auth_ws_rate(struct server *S, struct client *c, double now, int *pause_ms)
{
	bool ok = auth_bucket_take(&c->bucket, &c->bucket_t, S->o.max_rate, now);

	*pause_ms = 0;
	if (ok && c->authed) {
		struct token *t = &S->tokens[c->principal];

		assert(c->principal >= 0 && c->principal < S->n_tokens);
		if (!auth_bucket_take(&t->bucket, &t->bucket_t, S->o.max_token_rate, now)) {
			c->bucket += 1;  /* not handled: not charged */
			*pause_ms = auth_bucket_wait_ms(t->bucket, S->o.max_token_rate);
			return false;
		}
	}
	if (!ok || c->bucket < 1)
		*pause_ms = auth_bucket_wait_ms(c->bucket, S->o.max_rate);
	return ok;
}
