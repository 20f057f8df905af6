/*
 * config.h: rigd's command-line flags, their defaults and their usage text,
 * from one table per command.
 *
 * A table lists each flag once: its name, the kind of value it takes (a
 * string, a number in a range, one of a few names, none, or one more of a
 * repeatable value), where the value goes in the struct being filled, its
 * default and its help. The same table fills the struct, applies the
 * defaults and prints the usage, for the server (config_parse) and for the
 * offline commands (rigd log, apply, check). Parsing never exits the
 * process and never starts anything: it returns a status the caller acts
 * on, after printing what was wrong, naming the flag and the bad value.
 */
#ifndef RIGD_CONFIG_H
#define RIGD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DEFAULT_PORT 8080
#define DEFAULT_DB "data/rig.db"
#define DEFAULT_WEB "web"
#define DEFAULT_REPLY_QUEUE (1u << 20)   /* bytes of replies queued per client */
#define DEFAULT_MAX_GLTF (16u << 20)     /* bytes of a glTF file posted for import */
#define DEFAULT_JOURNAL 256              /* turns remembered per scene */
#define DEFAULT_COMMIT_DELAY_MS 8        /* the group commit's window under load */
/* The window's rule (turn.c, commit_waits): from how many batches in the
 * last commit the next one waits for it, and at how many gathered it ends
 * early. Here, so that --help says what turn.c does. */
#define COMMIT_SIBLINGS 4
#define COMMIT_GROUP_FULL 256
#define DEFAULT_MAX_RATE 2000            /* messages a second per connection */
#define DEFAULT_MAX_TOKEN_RATE 5000      /* messages and requests a second per token */
#define DEFAULT_MAX_SUBS 64              /* subscriptions per connection */
#define DEFAULT_MAX_SCENES 1000          /* scenes in the database */
#define TOKEN_MIN 16                     /* bytes of a token, at least... */
#define TOKEN_MAX 256                    /* ...and at most */
#define TOKEN_ARGS_MAX 256               /* --token and --admin-token flags */
#define ORIGINS_MAX 64                   /* --origin flags */

/*
 * What a parse returns besides 0 (go on and run): CONFIG_DONE when --help
 * or --hash-token has printed what was asked (the program exits with 0
 * without running), CONFIG_USAGE after printing what was wrong with the
 * arguments (the program exits with it).
 */
#define CONFIG_DONE (-1)
#define CONFIG_USAGE 2

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

struct config {
	char host[256];
	int port;
	const char *db;
	const char *web;
	bool web_given;           /* --web was on the command line */
	const char *origins[ORIGINS_MAX];
	int n_origins;
	size_t max_message;
	int max_fragments;
	size_t max_body;
	size_t max_gltf;             /* bytes of a glTF body (POST .../gltf) */
	int idle_timeout_s;
	bool deflate;                /* --deflate on: permessage-deflate offered */
	bool demo2d;                 /* --demo2d on: import scene demo2d when missing */
	int max_clients;
	int max_ops;
	int max_nodes;
	size_t reply_queue;
	int journal;
	int commit_delay_ms;         /* --commit-delay MS: the group commit's window */
	bool sync_normal;
	int log_level;               /* enum log_level */
	/* "ROLE:SCENE:TOKEN", in the order given; --admin-token TOKEN is kept
	 * as "admin:*:TOKEN" in memory the struct owns (owned_specs[i]). */
	const char *token_args[TOKEN_ARGS_MAX];
	char *owned_specs[TOKEN_ARGS_MAX];
	int n_token_args;
	const char *tokens_file;
	bool insecure_remote;
	int max_rate;
	int max_token_rate;
	int max_subs;
	int max_scenes;
	const char *tls_cert, *tls_key;
	bool libuv;                  /* --event-loop libuv (implied by --redis) */
	const char *redis;           /* --redis redis://HOST:PORT; NULL: alone */
	const char *advertise;       /* --advertise URL; NULL: the served URL */
	int lease_ms;                /* --lease MS */
	int log_keep;                /* --log-keep N */
	int redis_wait;              /* --redis-wait N[:MS]: replicas; 0: off */
	int redis_wait_ms;           /* ...and the timeout (0 until defaulted) */
};

enum config_kind {
	CONFIG_SECTION,   /* not a flag: a heading in the usage ('help') */
	CONFIG_STRING,    /* const char *: the argument itself (borrowed from argv) */
	CONFIG_INT,       /* int in lo..hi */
	CONFIG_SIZE,      /* size_t in lo..hi */
	CONFIG_I64,       /* int64_t in lo..hi */
	CONFIG_ENUM,      /* int: the index of the argument in 'names' */
	CONFIG_BOOL_ENUM, /* bool: false for names[0], true for names[1] */
	CONFIG_BOOL,      /* bool set true; takes no value */
	CONFIG_LIST,      /* const char *[hi], its count an int at 'count_offset' */
	CONFIG_CUSTOM,    /* 'parse' takes the value (or none when 'arg' is NULL) */
};

struct config_flag;

/* How a CONFIG_CUSTOM flag takes its value: 0, CONFIG_DONE, or
 * CONFIG_USAGE after printing why on 'err'. 'value' is NULL for a flag
 * without an argument. */
typedef int (*config_parse_fn)(const struct config_flag *f, const char *value, void *dst,
			       FILE *out, FILE *err);

/* One flag. Fields that do not apply to its kind stay zero. */
typedef struct config_flag {
	const char *name;          /* "--listen" */
	const char *alias;         /* another spelling ("-h"), or NULL */
	const char *arg;           /* the value's name in the usage; NULL: no value */
	int kind;                  /* enum config_kind */
	size_t offset;             /* of the field in the struct being filled */
	int64_t lo, hi;            /* numbers: the range; CONFIG_LIST: hi is the capacity */
	size_t count_offset;       /* CONFIG_LIST: of its int count */
	const char *const *names;  /* CONFIG_ENUM: the values, NULL-terminated */
	int64_t def;               /* numbers and enums: the default */
	const char *def_str;       /* strings: the default */
	const char *def_text;      /* the default as the usage says it; NULL: from
				    * def or def_str; "": not said */
	config_parse_fn parse;     /* CONFIG_CUSTOM */
	const char *help;          /* one or more lines, '\n' between them */
} config_flag;

/* A command's flags and what its usage says around them. */
typedef struct config_table {
	const char *prog;          /* starts every message: "rigd", "rigd log" */
	const char *usage_head;    /* the usage before the flags */
	const config_flag *flags;
	int n_flags;
	int max_args;              /* arguments that are not flags */
} config_table;

/*
 * Sets every flag of 't' in 'dst' to its default. CONFIG_CUSTOM flags set
 * their own defaults in the caller.
 */
void config_table_defaults(const config_table *t, void *dst);

/*
 * Parses argv[1..argc) against 't' into 'dst' (whose defaults the caller
 * has set). A flag's value is the next argument or follows '=' in
 * "--flag=value". Arguments that are not flags go to args[0..max_args) in
 * order, their number in *n_args (both may be NULL when max_args is 0).
 * Returns 0, CONFIG_DONE or CONFIG_USAGE (after printing on 'err' what was
 * wrong, naming the flag and the value). On failure 'dst' may be partly
 * filled.
 */
int config_table_parse(const config_table *t, int argc, char **argv, void *dst,
		       const char **args, int *n_args, FILE *out, FILE *err);

/* Prints the usage of 't' to 'f': its head, then every flag with its value,
 * help and default. */
void config_table_usage(const config_table *t, FILE *f);

/* Prints the server's usage to 'f'. */
void config_usage(FILE *f);

/*
 * Fills 'o' from the server's arguments (argv[0] is the program name),
 * printing on 'out' what --help and --hash-token print and on 'err' what
 * was wrong. Returns 0 to run, CONFIG_DONE (--help, --hash-token: exit 0
 * without running) or CONFIG_USAGE. 'o' is initialised first, so it must
 * not hold anything to release; release it with config_release in every
 * case.
 */
int config_parse_to(int argc, char **argv, struct config *o, FILE *out, FILE *err);

/* config_parse_to on stdout and stderr. */
int config_parse(int argc, char **argv, struct config *o);

/* Frees what 'o' owns (the --admin-token specs); accepts NULL. The struct
 * is left with no tokens. */
void config_release(struct config *o);

#endif
