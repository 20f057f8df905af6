/*
 * config.c: rigd's command-line flags (config.h).
 */
#include "config.h"

#include "codec/proto.h"
#include "core/edit.h"
#include "core/scene.h"
#include "core/sha256.h"
#include "net/net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void config_usage(FILE *f)
{
	fprintf(f,
		"usage: rigd [options]\n"
		"\n"
		"Serves articulated rigs over HTTP and websockets (docs/protocol.md).\n"
		"\n"
		"  --listen HOST:PORT     address to listen on (default 127.0.0.1:%d;\n"
		"                         port 0 picks a free one; IPv6 as [::1]:8080)\n"
		"  --db PATH              SQLite database (default %s; created with the\n"
		"                         demo rig when it does not exist)\n"
		"  --web DIR              directory served at / (default %s)\n"
		"  --origin ORIGIN        allow websockets and API calls from this exact\n"
		"                         Origin (repeatable; default: the server's own,\n"
		"                         http://HOST:PORT, and localhost for loopback).\n"
		"                         Clients that send no Origin (scripts) are allowed.\n"
		"  --max-message BYTES    largest websocket message (default 1048576; 1009 beyond)\n"
		"  --max-fragments N      most receive chunks in one message (default 4096)\n"
		"  --max-body BYTES       largest HTTP request body (default 8388608; 413 beyond)\n"
		"  --max-gltf BYTES       largest glTF file posted for import (default %u)\n"
		"  --max-ops N            most ops in one batch (default %d)\n"
		"  --max-nodes N          most nodes in one scene (default %d)\n"
		"  --max-clients N        most open websockets (default 1024)\n"
		"  --idle-timeout SECS    ping an idle websocket after half, close it after\n"
		"                         all of it without an answer (default 60; 0: never)\n"
		"  --reply-queue BYTES    replies queued for a client that does not read\n"
		"                         before it is closed with 1008 (default %u)\n"
		"  --journal N            turns remembered per scene for catching up\n"
		"                         lagging clients with updates (default %d)\n"
		"  --sync full|normal     SQLite synchronous mode (default full: no\n"
		"                         acknowledged edit is lost on power loss)\n"
		"  --log-level LEVEL      error, warn, info or debug (default warn)\n"
		"\n"
		"Access control, limits and TLS (docs/security.md):\n"
		"  --token ROLE:SCENE:TOKEN  a token (%d to %d visible characters, or\n"
		"                         sha256:HEX of one) with role viewer or editor on\n"
		"                         SCENE (* for all); repeatable\n"
		"  --admin-token TOKEN    a token that may do everything, including\n"
		"                         creating and deleting scenes\n"
		"  --tokens FILE          tokens, one ROLE:SCENE:TOKEN a line (# comments;\n"
		"                         admin:*:TOKEN for admin)\n"
		"  --hash-token TOKEN     print sha256:HEX of TOKEN for a tokens file, exit\n"
		"  --insecure-allow-remote  serve a non-loopback address without tokens\n"
		"                         (without tokens rigd refuses to)\n"
		"  --max-rate N           messages a second per websocket (default %d;\n"
		"                         beyond, rigd stops reading it for a while)\n"
		"  --max-token-rate N     messages and API requests a second per token\n"
		"                         (default %d; rate_limited beyond)\n"
		"  --max-subs N           subscriptions per websocket (default %d)\n"
		"  --max-scenes N         scenes in the database (default %d)\n"
		"  --tls-cert FILE        serve https and wss with this PEM certificate...\n"
		"  --tls-key FILE         ...and its PEM private key (both or neither)\n"
		"  --help                 this text\n",
		DEFAULT_PORT, DEFAULT_DB, DEFAULT_WEB, DEFAULT_MAX_GLTF, EDIT_DEFAULT_MAX_OPS,
		SCENE_DEFAULT_MAX_NODES, DEFAULT_REPLY_QUEUE, DEFAULT_JOURNAL, TOKEN_MIN, TOKEN_MAX,
		DEFAULT_MAX_RATE, DEFAULT_MAX_TOKEN_RATE, DEFAULT_MAX_SUBS, DEFAULT_MAX_SCENES);
}

bool config_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

static bool parse_listen(const char *s, struct config *o)
{
	const char *colon;
	long port;
	size_t hlen;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return false;
		hlen = (size_t)(close - s - 1);
		if (hlen == 0 || hlen >= sizeof(o->host))
			return false;
		memcpy(o->host, s + 1, hlen);
		o->host[hlen] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return false;
		hlen = (size_t)(colon - s);
		if (hlen == 0 || hlen >= sizeof(o->host) || memchr(s, ':', hlen))
			return false;
		memcpy(o->host, s, hlen);
		o->host[hlen] = '\0';
	}
	if (!config_parse_long(colon + 1, 0, 65535, &port))
		return false;
	if (strcmp(o->host, "localhost") == 0)
		snprintf(o->host, sizeof(o->host), "127.0.0.1");
	o->port = (int)port;
	return true;
}

int config_parse(int argc, char **argv, struct config *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
	o->port = DEFAULT_PORT;
	o->db = DEFAULT_DB;
	o->web = DEFAULT_WEB;
	o->max_message = 1u << 20;
	o->max_fragments = 4096;
	o->max_body = 8u << 20;
	o->max_gltf = DEFAULT_MAX_GLTF;
	o->idle_timeout_s = 60;
	o->max_clients = 1024;
	o->max_ops = EDIT_DEFAULT_MAX_OPS;
	o->max_nodes = SCENE_DEFAULT_MAX_NODES;
	o->reply_queue = DEFAULT_REPLY_QUEUE;
	o->journal = DEFAULT_JOURNAL;
	o->log_level = LOG_WARN;
	o->max_rate = DEFAULT_MAX_RATE;
	o->max_token_rate = DEFAULT_MAX_TOKEN_RATE;
	o->max_subs = DEFAULT_MAX_SUBS;
	o->max_scenes = DEFAULT_MAX_SCENES;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long num;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			config_usage(stdout);
			exit(0);
		}
#define NEED_VALUE()                                                              \
	do {                                                                      \
		if (!v) {                                                         \
			fprintf(stderr, "rigd: %s needs a value\n", a);           \
			return 2;                                                 \
		}                                                                 \
		i++;                                                              \
	} while (0)
#define NUMBER(lo, hi)                                                                 \
	do {                                                                           \
		NEED_VALUE();                                                          \
		if (!config_parse_long(v, lo, hi, &num)) {                                    \
			fprintf(stderr, "rigd: %s: '%s' is not a number in %ld..%ld\n", \
				a, v, (long)(lo), (long)(hi));                           \
			return 2;                                                      \
		}                                                                      \
	} while (0)
		if (strcmp(a, "--listen") == 0) {
			NEED_VALUE();
			if (!parse_listen(v, o)) {
				fprintf(stderr, "rigd: --listen: '%s' is not HOST:PORT\n", v);
				return 2;
			}
		} else if (strcmp(a, "--db") == 0) {
			NEED_VALUE();
			o->db = v;
		} else if (strcmp(a, "--web") == 0) {
			NEED_VALUE();
			o->web = v;
		} else if (strcmp(a, "--origin") == 0) {
			NEED_VALUE();
			if (o->n_origins == (int)(sizeof(o->origins) / sizeof(o->origins[0]))) {
				fprintf(stderr, "rigd: too many --origin\n");
				return 2;
			}
			o->origins[o->n_origins++] = v;
		} else if (strcmp(a, "--max-message") == 0) {
			NUMBER(1024, 1L << 30);
			o->max_message = (size_t)num;
		} else if (strcmp(a, "--max-fragments") == 0) {
			NUMBER(1, 1L << 20);
			o->max_fragments = (int)num;
		} else if (strcmp(a, "--max-body") == 0) {
			NUMBER(1024, 1L << 30);
			o->max_body = (size_t)num;
		} else if (strcmp(a, "--max-gltf") == 0) {
			NUMBER(1024, 1L << 30);
			o->max_gltf = (size_t)num;
		} else if (strcmp(a, "--max-ops") == 0) {
			NUMBER(1, 10000000);
			o->max_ops = (int)num;
		} else if (strcmp(a, "--max-nodes") == 0) {
			NUMBER(1, 100000000);
			o->max_nodes = (int)num;
		} else if (strcmp(a, "--max-clients") == 0) {
			NUMBER(1, 1000000);
			o->max_clients = (int)num;
		} else if (strcmp(a, "--idle-timeout") == 0) {
			NUMBER(0, 65535);
			o->idle_timeout_s = (int)num;
		} else if (strcmp(a, "--reply-queue") == 0) {
			NUMBER(4096, 1L << 30);
			o->reply_queue = (size_t)num;
		} else if (strcmp(a, "--journal") == 0) {
			NUMBER(1, 1000000);
			o->journal = (int)num;
		} else if (strcmp(a, "--token") == 0 || strcmp(a, "--admin-token") == 0) {
			NEED_VALUE();
			if (o->n_token_args == TOKEN_ARGS_MAX) {
				fprintf(stderr, "rigd: too many tokens on the command line; use --tokens FILE\n");
				return 2;
			}
			/* The admin form is kept as its ROLE:SCENE:TOKEN spelling. */
			o->token_args[o->n_token_args++] = a[2] == 'a' ? NULL : v;
			if (a[2] == 'a') {
				static char admin_specs[TOKEN_ARGS_MAX][TOKEN_MAX + 16];

				snprintf(admin_specs[o->n_token_args - 1], sizeof(admin_specs[0]),
					 "admin:*:%s", v);
				o->token_args[o->n_token_args - 1] = admin_specs[o->n_token_args - 1];
			}
		} else if (strcmp(a, "--tokens") == 0) {
			NEED_VALUE();
			o->tokens_file = v;
		} else if (strcmp(a, "--hash-token") == 0) {
			unsigned char h[SHA256_LEN];

			NEED_VALUE();
			sha256_digest(v, strlen(v), h);
			printf("sha256:");
			for (int k = 0; k < SHA256_LEN; k++)
				printf("%02x", h[k]);
			printf("\n");
			exit(0);
		} else if (strcmp(a, "--insecure-allow-remote") == 0) {
			o->insecure_remote = true;
		} else if (strcmp(a, "--max-rate") == 0) {
			NUMBER(1, 10000000);
			o->max_rate = (int)num;
		} else if (strcmp(a, "--max-token-rate") == 0) {
			NUMBER(1, 10000000);
			o->max_token_rate = (int)num;
		} else if (strcmp(a, "--max-subs") == 0) {
			NUMBER(1, 1000000);
			o->max_subs = (int)num;
		} else if (strcmp(a, "--max-scenes") == 0) {
			NUMBER(1, 100000000);
			o->max_scenes = (int)num;
		} else if (strcmp(a, "--tls-cert") == 0) {
			NEED_VALUE();
			o->tls_cert = v;
		} else if (strcmp(a, "--tls-key") == 0) {
			NEED_VALUE();
			o->tls_key = v;
		} else if (strcmp(a, "--sync") == 0) {
			NEED_VALUE();
			if (strcmp(v, "full") == 0)
				o->sync_normal = false;
			else if (strcmp(v, "normal") == 0)
				o->sync_normal = true;
			else {
				fprintf(stderr, "rigd: --sync: '%s' is not full or normal\n", v);
				return 2;
			}
		} else if (strcmp(a, "--log-level") == 0) {
			static const char *const names[] = {"error", "warn", "info", "debug"};
			int lvl = -1;

			NEED_VALUE();
			for (int k = 0; k < 4; k++)
				if (strcmp(v, names[k]) == 0)
					lvl = k;
			if (lvl < 0) {
				fprintf(stderr, "rigd: --log-level: '%s' is not error, warn, info or debug\n",
					v);
				return 2;
			}
			o->log_level = lvl;
		} else {
			fprintf(stderr, "rigd: unknown argument '%s'\n", a);
			config_usage(stderr);
			return 2;
		}
#undef NUMBER
#undef NEED_VALUE
	}
	if (!o->tls_cert != !o->tls_key) {
		fprintf(stderr, "rigd: --tls-cert and --tls-key go together\n");
		return 2;
	}
	return 0;
}
