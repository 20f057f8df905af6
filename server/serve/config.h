/*
 * config.h: rigd's command-line flags and their defaults.
 *
 * Parses argv into a struct config; prints usage and reasons. Never starts
 * anything: the server reads the struct (serve.c).
 */
#ifndef RIGD_CONFIG_H
#define RIGD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define DEFAULT_PORT 8080
#define DEFAULT_DB "data/rig.db"
#define DEFAULT_WEB "web"
#define DEFAULT_REPLY_QUEUE (1u << 20)   /* bytes of replies queued per client */
#define DEFAULT_MAX_GLTF (16u << 20)     /* bytes of a glTF file posted for import */
#define DEFAULT_JOURNAL 256              /* turns remembered per scene */
#define DEFAULT_MAX_RATE 2000            /* messages a second per connection */
#define DEFAULT_MAX_TOKEN_RATE 5000      /* messages and requests a second per token */
#define DEFAULT_MAX_SUBS 64              /* subscriptions per connection */
#define DEFAULT_MAX_SCENES 1000          /* scenes in the database */
#define TOKEN_MIN 16                     /* bytes of a token, at least... */
#define TOKEN_MAX 256                    /* ...and at most */
#define TOKEN_ARGS_MAX 256               /* --token and --admin-token flags */

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

struct config {
	char host[256];
	int port;
	const char *db;
	const char *web;
	const char *origins[64];
	int n_origins;
	size_t max_message;
	int max_fragments;
	size_t max_body;
	size_t max_gltf;             /* bytes of a glTF body (POST .../gltf) */
	int idle_timeout_s;
	int max_clients;
	int max_ops;
	int max_nodes;
	size_t reply_queue;
	int journal;
	bool sync_normal;
	int log_level;
	const char *token_args[TOKEN_ARGS_MAX];  /* "ROLE:SCENE:TOKEN" */
	int n_token_args;
	const char *tokens_file;
	bool insecure_remote;
	int max_rate;
	int max_token_rate;
	int max_subs;
	int max_scenes;
	const char *tls_cert, *tls_key;
};

/* Prints the server's usage to 'f'. */
void config_usage(FILE *f);

/* Parses 's' as a decimal in lo..hi into *out; false when it is not one. */
bool config_parse_long(const char *s, long lo, long hi, long *out);

/*
 * Fills 'o' from the arguments (argv[0] is the program name). Returns 0, or
 * 2 after printing what was wrong. --help and --hash-token print and exit(0).
 */
int config_parse(int argc, char **argv, struct config *o);

#endif
