/*
 * config.c: flag tables and the one parser that reads them (config.h), and
 * the server's own table.
 *
 * Never exits, never keeps state between calls: what a parse produces is in
 * the struct it fills (which owns only the --admin-token specs).
 */
#include "config.h"

#include "core/edit.h"
#include "core/num.h"
#include "core/scene.h"
#include "core/sha256.h"
#include "core/version.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define USAGE_INDENT 25         /* column where a flag's help starts */
#define USAGE_WIDTH 80          /* columns of the usage text */

/* ---- the parser ---- */

static void *field(void *dst, const config_flag *f)
{
	return (char *)dst + f->offset;
}

static void set_number(const config_flag *f, void *dst, int64_t v)
{
	switch (f->kind) {
	case CONFIG_INT:
	case CONFIG_ENUM:
		*(int *)field(dst, f) = (int)v;
		break;
	case CONFIG_SIZE:
		*(size_t *)field(dst, f) = (size_t)v;
		break;
	case CONFIG_I64:
		*(int64_t *)field(dst, f) = v;
		break;
	case CONFIG_BOOL_ENUM:
		*(bool *)field(dst, f) = v != 0;
		break;
	}
}

void config_table_defaults(const config_table *t, void *dst)
{
	for (int i = 0; i < t->n_flags; i++) {
		const config_flag *f = &t->flags[i];

		switch (f->kind) {
		case CONFIG_STRING:
			*(const char **)field(dst, f) = f->def_str;
			break;
		case CONFIG_INT:
		case CONFIG_SIZE:
		case CONFIG_I64:
		case CONFIG_ENUM:
		case CONFIG_BOOL_ENUM:
			set_number(f, dst, f->def);
			break;
		case CONFIG_BOOL:
			*(bool *)field(dst, f) = false;
			break;
		case CONFIG_LIST:
			*(int *)((char *)dst + f->count_offset) = 0;
			break;
		}
	}
}

/* Prints the names of an enum as "a, b or c". */
static void print_names(FILE *f, const char *const *names)
{
	for (int k = 0; names[k]; k++)
		fprintf(f, "%s%s", k == 0 ? "" : names[k + 1] ? ", " : " or ", names[k]);
}

/* Stores 'v', the value of flag 'f'. 0, CONFIG_DONE or CONFIG_USAGE. */
static int take_value(const config_table *t, const config_flag *f, const char *v, void *dst,
		      FILE *out, FILE *err)
{
	int64_t num;

	switch (f->kind) {
	case CONFIG_STRING:
		*(const char **)field(dst, f) = v;
		return 0;
	case CONFIG_INT:
	case CONFIG_SIZE:
	case CONFIG_I64:
		if (!num_parse_i64(v, f->lo, f->hi, &num)) {
			fprintf(err, "%s: %s: '%s' is not a number in %" PRId64 "..%" PRId64 "\n",
				t->prog, f->name, v, f->lo, f->hi);
			return CONFIG_USAGE;
		}
		set_number(f, dst, num);
		return 0;
	case CONFIG_ENUM:
	case CONFIG_BOOL_ENUM:
		for (int k = 0; f->names[k]; k++)
			if (strcmp(v, f->names[k]) == 0) {
				set_number(f, dst, k);
				return 0;
			}
		fprintf(err, "%s: %s: '%s' is not ", t->prog, f->name, v);
		print_names(err, f->names);
		fputc('\n', err);
		return CONFIG_USAGE;
	case CONFIG_BOOL:
		*(bool *)field(dst, f) = true;
		return 0;
	case CONFIG_LIST: {
		int *n = (int *)((char *)dst + f->count_offset);

		if (*n >= f->hi) {
			fprintf(err, "%s: %s: more than %" PRId64 " of them\n", t->prog, f->name,
				f->hi);
			return CONFIG_USAGE;
		}
		((const char **)field(dst, f))[(*n)++] = v;
		return 0;
	}
	case CONFIG_CUSTOM:
		return f->parse(f, v, dst, out, err);
	}
	return CONFIG_USAGE;
}

/* The flag spelled 'a' (up to 'len' characters), or NULL. */
static const config_flag *find_flag(const config_table *t, const char *a, size_t len)
{
	for (int i = 0; i < t->n_flags; i++) {
		const config_flag *f = &t->flags[i];

		if (f->kind == CONFIG_SECTION)
			continue;
		if ((strlen(f->name) == len && strncmp(f->name, a, len) == 0) ||
		    (f->alias && strlen(f->alias) == len && strncmp(f->alias, a, len) == 0))
			return f;
	}
	return NULL;
}

int config_table_parse(const config_table *t, int argc, char **argv, void *dst,
		       const char **args, int *n_args, FILE *out, FILE *err)
{
	if (n_args)
		*n_args = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		size_t len = a[0] == '-' && a[1] == '-' && eq ? (size_t)(eq - a) : strlen(a);
		const config_flag *f = a[0] == '-' && a[1] ? find_flag(t, a, len) : NULL;
		const char *v = NULL;
		int rc;

		if (!f && (a[0] != '-' || !a[1]) && n_args && *n_args < t->max_args) {
			args[(*n_args)++] = a;  /* "-" is an argument: standard input */
			continue;
		}
		if (!f) {
			fprintf(err, "%s: unknown argument '%s' (%s --help lists the options)\n",
				t->prog, a, t->prog);
			return CONFIG_USAGE;
		}
		if (f->arg) {
			v = len < strlen(a) ? a + len + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (!v) {
				fprintf(err, "%s: %s needs a value (%s)\n", t->prog, f->name, f->arg);
				return CONFIG_USAGE;
			}
		} else if (len < strlen(a)) {
			fprintf(err, "%s: %s takes no value\n", t->prog, f->name);
			return CONFIG_USAGE;
		}
		if ((rc = take_value(t, f, v, dst, out, err)) != 0)
			return rc;
	}
	return 0;
}

/* The default of 'f' as the usage says it, into buf; "" for none. */
static const char *default_text(const config_flag *f, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (f->def_text)
		return f->def_text;
	switch (f->kind) {
	case CONFIG_STRING:
		return f->def_str ? f->def_str : "";
	case CONFIG_INT:
	case CONFIG_SIZE:
	case CONFIG_I64:
		snprintf(buf, cap, "%" PRId64, f->def);
		return buf;
	case CONFIG_ENUM:
	case CONFIG_BOOL_ENUM:
		return f->names[f->def];
	}
	return "";
}

void config_table_usage(const config_table *t, FILE *f)
{
	fputs(t->usage_head, f);
	for (int i = 0; i < t->n_flags; i++) {
		const config_flag *fl = &t->flags[i];
		const char *help = fl->help, *nl;
		char buf[32];
		const char *def;
		int w;

		if (fl->kind == CONFIG_SECTION) {
			fprintf(f, "\n%s\n", help);
			continue;
		}
		w = fprintf(f, "  %s%s%s", fl->name, fl->arg ? " " : "", fl->arg ? fl->arg : "");
		fprintf(f, "%*s", w < USAGE_INDENT - 1 ? USAGE_INDENT - w : 2, "");
		while ((nl = strchr(help, '\n'))) {
			fprintf(f, "%.*s\n%*s", (int)(nl - help), help, USAGE_INDENT, "");
			help = nl + 1;
		}
		def = default_text(fl, buf, sizeof(buf));
		if (!*def) {
			fprintf(f, "%s\n", help);
			continue;
		}
		/* The default goes on a line of its own when the last one is full. */
		if (USAGE_INDENT + strlen(help) + strlen(def) + 11 > USAGE_WIDTH)
			fprintf(f, "%s\n%*s(default %s)\n", help, USAGE_INDENT, "", def);
		else
			fprintf(f, "%s (default %s)\n", help, def);
	}
}

/* ---- the server's flags ---- */

static int parse_help(const config_flag *f, const char *v, void *dst, FILE *out, FILE *err)
{
	config_usage(out);
	return CONFIG_DONE;
}

static int parse_version(const config_flag *f, const char *v, void *dst, FILE *out, FILE *err)
{
	version_print(out, "rigd");
	return CONFIG_DONE;
}

/* --web DIR: noted as given, so that the installed viewer is not looked
 * for (serve_main). */
static int parse_web(const config_flag *f, const char *v, void *dst, FILE *out, FILE *err)
{
	struct config *o = dst;

	o->web = v;
	o->web_given = true;
	return 0;
}

/* --listen HOST:PORT, [V6]:PORT; localhost is 127.0.0.1. */
static int parse_listen(const config_flag *f, const char *s, void *dst, FILE *out, FILE *err)
{
	struct config *o = dst;
	char host[sizeof(o->host)];
	const char *colon;
	int64_t port;
	size_t hlen;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			goto bad;
		hlen = (size_t)(close - s - 1);
		if (hlen == 0 || hlen >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, hlen);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			goto bad;
		hlen = (size_t)(colon - s);
		if (hlen == 0 || hlen >= sizeof(host) || memchr(s, ':', hlen))
			goto bad;
		memcpy(host, s, hlen);
	}
	host[hlen] = '\0';
	if (!num_parse_i64(colon + 1, 0, 65535, &port))
		goto bad;
	snprintf(o->host, sizeof(o->host), "%s", strcmp(host, "localhost") == 0 ? "127.0.0.1" : host);
	o->port = (int)port;
	return 0;
bad:
	fprintf(err, "rigd: %s: '%s' is not HOST:PORT\n", f->name, s);
	return CONFIG_USAGE;
}

/* --redis-wait N[:TIMEOUT_MS]: N 0..16 replicas, a timeout of 1..1000 ms
 * (checked against --lease once every flag is read). */
static int parse_redis_wait(const config_flag *f, const char *s, void *dst, FILE *out,
			    FILE *err)
{
	struct config *o = dst;
	const char *colon = strchr(s, ':');
	char n[16];
	int64_t replicas, ms = 0;
	size_t len = colon ? (size_t)(colon - s) : strlen(s);

	if (len == 0 || len >= sizeof(n))
		goto bad;
	memcpy(n, s, len);
	n[len] = '\0';
	if (!num_parse_i64(n, 0, 16, &replicas) ||
	    (colon && !num_parse_i64(colon + 1, 1, 1000, &ms)))
		goto bad;
	o->redis_wait = (int)replicas;
	o->redis_wait_ms = (int)ms;
	return 0;
bad:
	fprintf(err, "rigd: %s: '%s' is not N[:TIMEOUT_MS] (N 0..16 replicas, a timeout of "
		"1..1000 ms)\n", f->name, s);
	return CONFIG_USAGE;
}

/* A token's secret: TOKEN_MIN..TOKEN_MAX characters, or sha256:HEX (whose
 * digits the server checks). */
static bool secret_length_ok(const char *secret)
{
	size_t len = strlen(secret);

	return strncmp(secret, "sha256:", 7) == 0 || (len >= TOKEN_MIN && len <= TOKEN_MAX);
}

/* Adds one ROLE:SCENE:TOKEN; 'owned' (may be NULL) is the spec when the
 * struct owns it. */
static int add_token(const config_flag *f, struct config *o, const char *spec, char *owned,
		     const char *secret, FILE *err)
{
	if (secret && !secret_length_ok(secret)) {
		fprintf(err, "rigd: %s: a token is %d to %d characters\n", f->name, TOKEN_MIN,
			TOKEN_MAX);
		free(owned);
		return CONFIG_USAGE;
	}
	if (o->n_token_args == TOKEN_ARGS_MAX) {
		fprintf(err, "rigd: %s: too many tokens on the command line; use --tokens FILE\n",
			f->name);
		free(owned);
		return CONFIG_USAGE;
	}
	o->owned_specs[o->n_token_args] = owned;
	o->token_args[o->n_token_args++] = spec;
	return 0;
}

/* --token ROLE:SCENE:TOKEN. The server checks the role and the scene; a
 * spec without two colons is its to refuse too. */
static int parse_token(const config_flag *f, const char *v, void *dst, FILE *out, FILE *err)
{
	const char *c1 = strchr(v, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	return add_token(f, dst, v, NULL, c2 ? c2 + 1 : NULL, err);
}

/* --admin-token TOKEN, kept as its ROLE:SCENE:TOKEN spelling. */
static int parse_admin_token(const config_flag *f, const char *v, void *dst, FILE *out,
			     FILE *err)
{
	size_t n = strlen(v) + sizeof("admin:*:");
	char *spec = malloc(n);

	if (!spec) {
		fprintf(err, "rigd: %s: out of memory\n", f->name);
		return CONFIG_USAGE;
	}
	snprintf(spec, n, "admin:*:%s", v);
	return add_token(f, dst, spec, spec, v, err);
}

/* --hash-token TOKEN: prints sha256:HEX for a tokens file. */
static int parse_hash_token(const config_flag *f, const char *v, void *dst, FILE *out, FILE *err)
{
	unsigned char h[SHA256_LEN];

	sha256_digest(v, strlen(v), h);
	fputs("sha256:", out);
	for (int k = 0; k < SHA256_LEN; k++)
		fprintf(out, "%02x", h[k]);
	fputc('\n', out);
	return CONFIG_DONE;
}

static const char *const sync_names[] = {"full", "normal", NULL};
static const char *const on_off_names[] = {"off", "on", NULL};
static const char *const level_names[] = {"error", "warn", "info", "debug", NULL};
static const char *const loop_names[] = {"poll", "libuv", NULL};

#define AT(member) offsetof(struct config, member)
#define NUMBER(kind_, member, lo_, hi_, def_) \
	.kind = (kind_), .offset = AT(member), .lo = (lo_), .hi = (hi_), .def = (def_)

/* Every server flag, in the order of the usage. */
static const config_flag server_flags[] = {
	{.name = "--listen", .arg = "HOST:PORT", .kind = CONFIG_CUSTOM, .parse = parse_listen,
	 .def_text = "127.0.0.1:" STR(DEFAULT_PORT),
	 .help = "address to listen on (port 0 picks a free one;\nIPv6 as [::1]:8080)"},
	{.name = "--db", .arg = "PATH", .kind = CONFIG_STRING, .offset = AT(db),
	 .def_str = DEFAULT_DB,
	 .help = "SQLite database, created with the demo rig\nwhen it does not exist"},
	{.name = "--web", .arg = "DIR", .kind = CONFIG_CUSTOM, .parse = parse_web,
	 .def_text = "the viewer installed with rigd, else " DEFAULT_WEB,
	 .help = "directory served at /"},
	{.name = "--origin", .arg = "ORIGIN", .kind = CONFIG_LIST, .offset = AT(origins),
	 .hi = ORIGINS_MAX, .count_offset = AT(n_origins), .def_text = "",
	 .help = "allow websockets and API calls from this exact\n"
		 "Origin (repeatable; default: the server's own,\n"
		 "http://HOST:PORT, and localhost for loopback).\n"
		 "Clients that send no Origin (scripts) are allowed."},
	{.name = "--max-message", .arg = "BYTES", NUMBER(CONFIG_SIZE, max_message, 1024, 1 << 30, 1 << 20),
	 .help = "largest websocket message (1009 beyond)"},
	{.name = "--max-fragments", .arg = "N", NUMBER(CONFIG_INT, max_fragments, 1, 1 << 20, 4096),
	 .help = "most receive chunks in one message"},
	{.name = "--max-body", .arg = "BYTES", NUMBER(CONFIG_SIZE, max_body, 1024, 1 << 30, 8 << 20),
	 .help = "largest HTTP request body (413 beyond)"},
	{.name = "--max-gltf", .arg = "BYTES",
	 NUMBER(CONFIG_SIZE, max_gltf, 1024, 1 << 30, DEFAULT_MAX_GLTF),
	 .help = "largest glTF file posted for import"},
	{.name = "--max-ops", .arg = "N", NUMBER(CONFIG_INT, max_ops, 1, 10000000, EDIT_DEFAULT_MAX_OPS),
	 .help = "most ops in one batch"},
	{.name = "--max-nodes", .arg = "N",
	 NUMBER(CONFIG_INT, max_nodes, 1, 100000000, SCENE_DEFAULT_MAX_NODES),
	 .help = "most nodes in one scene"},
	{.name = "--max-clients", .arg = "N", NUMBER(CONFIG_INT, max_clients, 1, 1000000, 1024),
	 .help = "most open websockets"},
	{.name = "--idle-timeout", .arg = "SECS", NUMBER(CONFIG_INT, idle_timeout_s, 0, 65535, 60),
	 .help = "ping an idle websocket after half, close it after\n"
		 "all of it without an answer (0: never)"},
	{.name = "--deflate", .arg = "on|off", .kind = CONFIG_BOOL_ENUM, .offset = AT(deflate),
	 .names = on_off_names, .def = 0,
	 .help = "accept permessage-deflate from websocket clients\nthat offer it (docs/protocol.md)"},
	{.name = "--demo2d", .arg = "on|off", .kind = CONFIG_BOOL_ENUM, .offset = AT(demo2d),
	 .names = on_off_names, .def = 0,
	 .help = "import the 2D demo character (WEB/demo/demo2d.svg\nand .json) as scene demo2d when it is missing"},
	{.name = "--reply-queue", .arg = "BYTES",
	 NUMBER(CONFIG_SIZE, reply_queue, 4096, 1 << 30, DEFAULT_REPLY_QUEUE),
	 .help = "replies queued for a client that does not read\nbefore it is closed with 1008"},
	{.name = "--journal", .arg = "N", NUMBER(CONFIG_INT, journal, 1, 1000000, DEFAULT_JOURNAL),
	 .help = "turns remembered per scene for catching up\nlagging clients with updates"},
	{.name = "--commit-delay", .arg = "MS",
	 NUMBER(CONFIG_INT, commit_delay_ms, 0, 1000, DEFAULT_COMMIT_DELAY_MS),
	 .help = "under load (the last commit held " STR(COMMIT_SIBLINGS) " batches or\n"
		 "more), start the next commit no sooner than MS\n"
		 "after the last one started (or once " STR(COMMIT_GROUP_FULL) " batches\n"
		 "wait), so more edits share it (0: start at once)"},
	{.name = "--sync", .arg = "full|normal", .kind = CONFIG_BOOL_ENUM, .offset = AT(sync_normal),
	 .names = sync_names, .def = 0,
	 .help = "SQLite synchronous mode (full: no acknowledged\nedit is lost on power loss)"},
	{.name = "--log-level", .arg = "LEVEL", .kind = CONFIG_ENUM, .offset = AT(log_level),
	 .names = level_names, .def = LOG_WARN, .help = "error, warn, info or debug"},
	{.kind = CONFIG_SECTION, .help = "Access control, limits and TLS (docs/security.md):"},
	{.name = "--token", .arg = "ROLE:SCENE:TOKEN", .kind = CONFIG_CUSTOM, .parse = parse_token,
	 .help = "a token (" STR(TOKEN_MIN) " to " STR(TOKEN_MAX) " visible characters, or\n"
		 "sha256:HEX of one) with role viewer or editor on\n"
		 "SCENE (* for all); repeatable"},
	{.name = "--admin-token", .arg = "TOKEN", .kind = CONFIG_CUSTOM, .parse = parse_admin_token,
	 .help = "a token that may do everything, including\ncreating and deleting scenes"},
	{.name = "--tokens", .arg = "FILE", .kind = CONFIG_STRING, .offset = AT(tokens_file),
	 .help = "tokens, one ROLE:SCENE:TOKEN a line (# comments;\nadmin:*:TOKEN for admin)"},
	{.name = "--hash-token", .arg = "TOKEN", .kind = CONFIG_CUSTOM, .parse = parse_hash_token,
	 .help = "print sha256:HEX of TOKEN for a tokens file, exit"},
	{.name = "--insecure-allow-remote", .kind = CONFIG_BOOL, .offset = AT(insecure_remote),
	 .help = "serve a non-loopback address without tokens\n(without tokens rigd refuses to)"},
	{.name = "--max-rate", .arg = "N", NUMBER(CONFIG_INT, max_rate, 1, 10000000, DEFAULT_MAX_RATE),
	 .help = "messages a second per websocket (beyond, rigd\nstops reading it for a while)"},
	{.name = "--max-token-rate", .arg = "N",
	 NUMBER(CONFIG_INT, max_token_rate, 1, 10000000, DEFAULT_MAX_TOKEN_RATE),
	 .help = "messages and API requests a second per token\n(rate_limited beyond)"},
	{.name = "--max-subs", .arg = "N", NUMBER(CONFIG_INT, max_subs, 1, 1000000, DEFAULT_MAX_SUBS),
	 .help = "subscriptions per websocket"},
	{.name = "--max-scenes", .arg = "N",
	 NUMBER(CONFIG_INT, max_scenes, 1, 100000000, DEFAULT_MAX_SCENES),
	 .help = "scenes in the database"},
	{.name = "--tls-cert", .arg = "FILE", .kind = CONFIG_STRING, .offset = AT(tls_cert),
	 .help = "serve https and wss with this PEM certificate..."},
	{.name = "--tls-key", .arg = "FILE", .kind = CONFIG_STRING, .offset = AT(tls_key),
	 .help = "...and its PEM private key (both or neither)"},
	{.kind = CONFIG_SECTION, .help = "Several processes on one Redis (docs/deploy.md):"},
	{.name = "--redis", .arg = "redis://HOST:PORT", .kind = CONFIG_STRING, .offset = AT(redis),
	 .def_text = "",
	 .help = "join the cluster of rigd processes sharing this\n"
		 "Redis (runs the loop on libuv); without it rigd\n"
		 "serves alone"},
	{.name = "--advertise", .arg = "URL", .kind = CONFIG_STRING, .offset = AT(advertise),
	 .def_text = "the URL served",
	 .help = "the URL other processes name this one by in\n"
		 "GET /api/cluster and in their errors"},
	{.name = "--lease", .arg = "MS", NUMBER(CONFIG_INT, lease_ms, 300, 600000, 3000),
	 .help = "how long a scene's lease lasts without renewal\n"
		 "(renewed every third of it)"},
	{.name = "--log-keep", .arg = "N", NUMBER(CONFIG_INT, log_keep, 10, 10000000, 10000),
	 .help = "batches each scene's log stream in Redis keeps\n"
		 "(about; exactly under 1000)"},
	{.name = "--redis-wait", .arg = "N[:TIMEOUT_MS]", .kind = CONFIG_CUSTOM,
	 .parse = parse_redis_wait, .def_text = "0, off",
	 .help = "acknowledge an edit only once WAIT says N Redis\n"
		 "replicas hold its log entry, within TIMEOUT_MS\n"
		 "(default and at most a quarter of --lease, and\n"
		 "at most 1000; else the edit answers unavailable)"},
	{.name = "--event-loop", .arg = "poll|libuv", .kind = CONFIG_BOOL_ENUM, .offset = AT(libuv),
	 .names = loop_names, .def = 0,
	 .help = "libwebsockets' own poll loop, or libuv (its\n"
		 "event-lib plugin); --redis needs libuv"},
	{.name = "--help", .alias = "-h", .kind = CONFIG_CUSTOM, .parse = parse_help,
	 .help = "this text"},
	{.name = "--version", .kind = CONFIG_CUSTOM, .parse = parse_version,
	 .help = "print the version and the git commit built, exit"},
};

static const config_table server_table = {
	.prog = "rigd",
	.usage_head = "usage: rigd [options]\n"
		      "\n"
		      "Serves articulated rigs over HTTP and websockets (docs/protocol.md).\n"
		      "\n",
	.flags = server_flags,
	.n_flags = (int)(sizeof(server_flags) / sizeof(server_flags[0])),
};

void config_usage(FILE *f)
{
	config_table_usage(&server_table, f);
}

int config_parse_to(int argc, char **argv, struct config *o, FILE *out, FILE *err)
{
	int rc;

	memset(o, 0, sizeof(*o));
	config_table_defaults(&server_table, o);
	snprintf(o->host, sizeof(o->host), "127.0.0.1");
	o->port = DEFAULT_PORT;
	o->web = DEFAULT_WEB;
	if ((rc = config_table_parse(&server_table, argc, argv, o, NULL, NULL, out, err)) != 0)
		return rc;
	if (!o->tls_cert != !o->tls_key) {
		fprintf(err, "rigd: --tls-cert and --tls-key go together\n");
		return CONFIG_USAGE;
	}
	/* The URL itself is checked by the cluster's side (serve_hooks.h). */
	if (o->redis)
		o->libuv = true;  /* hiredis runs on the same loop (docs/deploy.md) */
	if (o->redis_wait && !o->redis) {
		fprintf(err, "rigd: --redis-wait needs --redis\n");
		return CONFIG_USAGE;
	}
	if (o->redis_wait) {
		/* WAIT holds the connection the lease renewals share: well
		 * below the lease, and below the connection's own timeout. */
		int most = o->lease_ms / 4 < 1000 ? o->lease_ms / 4 : 1000;

		if (!o->redis_wait_ms)
			o->redis_wait_ms = most;
		if (o->redis_wait_ms > most) {
			fprintf(err, "rigd: --redis-wait: a timeout of %d ms is more than a quarter "
				"of --lease %d (or 1000 ms)\n", o->redis_wait_ms, o->lease_ms);
			return CONFIG_USAGE;
		}
	}
	return 0;
}

int config_parse(int argc, char **argv, struct config *o)
{
	return config_parse_to(argc, argv, o, stdout, stderr);
}

void config_release(struct config *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->n_token_args; i++)
		free(o->owned_specs[i]);
	memset(o->owned_specs, 0, sizeof(o->owned_specs));
	memset(o->token_args, 0, sizeof(o->token_args));
	o->n_token_args = 0;
}
