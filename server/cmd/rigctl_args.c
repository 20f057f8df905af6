/*
 * rigctl_args.c: rigctl's command line (rigctl.h). Turns the arguments and
 * the environment into a struct rigctl: the server's address, the mode, the
 * path and body of an HTTP command. Never touches the network; prints only
 * the usage and what was wrong with the arguments.
 */
#include "rigctl.h"

#include "codec/json.h"
#include "codec/skel_body.h"
#include "core/err.h"
#include "core/num.h"
#include "core/scene.h"
#include "core/version.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define TOKEN_ARG_MAX 256       /* characters of a --token */
#define FILE_MAX (1u << 30)     /* bytes of a file to import */

static const char usage_text[] =
	"usage: rigctl [--url URL] [--token TOKEN] COMMAND ...\n"
	"\n"
	"  send SCENE [FILE|-]          send NDJSON edit batches {\"ops\":[...]} (one a line)\n"
	"                               and print one ack or error line per batch\n"
	"  replay SCENE LOG [--speed S] replay an NDJSON log (GET .../log) into SCENE with its\n"
	"                               recorded timing (S = 1, or a factor) or as fast as\n"
	"                               possible (S = max); a progress bar on a terminal\n"
	"  watch SCENE [--count N] [--until-seq SEQ] [--format json|f32|f64]\n"
	"        [--view FILE | --vp M0,...,M15 --viewport WxH [--min-px N]]\n"
	"                               print the snapshot, then every update, presence,\n"
	"                               join and leave as it arrives; f32 and f64 receive\n"
	"                               binary frames and print them as the same JSON;\n"
	"                               with a view (FILE: a JSON object of the view\n"
	"                               message's fields; or a column-major view-projection\n"
	"                               matrix, viewport and minimum size) only the\n"
	"                               matrices of visible nodes, and \"hidden\"\n"
	"  get SCENE [--at SEQ]         the scene's tree (at an earlier seq)\n"
	"  log SCENE [--from N] [--to N] the edit log as NDJSON\n"
	"  scenes                       list the scenes\n"
	"  create SCENE [--dims 2] | delete SCENE\n"
	"                               create an empty scene (2D with --dims 2), delete one\n"
	"  import SCENE FILE [--nearest] [--scene-index N] [--scene-name NAME] [--parent ID]\n"
	"                               import a .gltf or .glb file as one batch into a\n"
	"                               new (or empty) scene, or under node ID; --nearest\n"
	"                               keeps the nearest TRS of a sheared matrix instead\n"
	"                               of refusing; prints the answer with its report\n"
	"  import SCENE FILE.json [--atlas FILE] [--file NAME] [--armature NAME]\n"
	"                               import a Spine 4.2 or DragonBones 5.x skeleton (told\n"
	"                               apart by its content) with its atlas (default: the\n"
	"                               .atlas beside a Spine file, NAME_tex.json beside a\n"
	"                               NAME_ske.json) and the atlas's PNG pages (beside the\n"
	"                               atlas) into the 2D scene SCENE (made when missing);\n"
	"                               --file names the stored file, --armature picks a\n"
	"                               DragonBones armature; prints the answer with its report\n"
	"  import FILE.svg --manifest FILE.json [--scene SCENE]\n"
	"                               import an SVG rig: the artwork (sanitised, stored as\n"
	"                               an asset under the SVG's file name) and one node per\n"
	"                               manifest entry, as one batch, into the 2D scene SCENE\n"
	"                               (default: the SVG's name without .svg; made when\n"
	"                               missing); prints the answer with its report\n"
	"  export SCENE [--at SEQ] [-o FILE]\n"
	"                               the scene (at an earlier seq) as glTF 2.0 JSON, on\n"
	"                               stdout or into FILE\n"
	"\n"
	"URL defaults to $RIGD_URL or " RIGCTL_DEFAULT_URL ". Output is JSON lines on stdout.\n"
	"--token TOKEN (default $RIGD_TOKEN) is sent as Authorization: Bearer with\n"
	"every request and websocket handshake (docs/security.md).\n"
	"rigctl --version prints the version and the git commit built.\n"
	"Exit status: 0 all succeeded, 1 a batch or request failed or the server went\n"
	"away, 2 bad arguments.\n";

/* The arguments still to read: argv[i..argc). */
struct argv_cursor {
	int argc;
	char **argv;
	int i;
};

/* The argument after argv[i], or NULL at the end. */
static const char *next_value(const struct argv_cursor *a)
{
	return a->i + 1 < a->argc ? a->argv[a->i + 1] : NULL;
}

/* Prints "rigctl: ", the message and the usage on stderr; returns the
 * status for bad arguments. */
/* An argument rigctl does not know: one line naming it, and where the
 * usage is. Returns RIGCTL_EXIT_USAGE. */
static int unknown(const char *what, const char *arg)
{
	fprintf(stderr, "rigctl: unknown %s '%s' (rigctl --help lists the commands and options)\n",
		what, arg);
	return RIGCTL_EXIT_USAGE;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rigctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n\n", stderr);
	fputs(usage_text, stderr);
	return RIGCTL_EXIT_USAGE;
}

/* Parses an http:// or ws:// URL's host and port into 'r'. */
static bool parse_url(struct rigctl *r, const char *url)
{
	const char *p = url;
	const char *host, *end;
	int64_t port = 80;

	if (strncmp(p, "http://", 7) == 0 || strncmp(p, "ws://", 5) == 0)
		p = strchr(p, '/') + 2;
	else if (strstr(p, "://"))
		return false;  /* https and wss need TLS, which rigctl does not speak */
	if (*p == '[') {
		host = p + 1;
		end = strchr(host, ']');
		if (!end)
			return false;
		p = end + 1;
	} else {
		host = p;
		end = p + strcspn(p, ":/");
		p = end;
	}
	if (end == host || (size_t)(end - host) >= sizeof(r->host))
		return false;
	memcpy(r->host, host, (size_t)(end - host));
	r->host[end - host] = '\0';
	if (*p == ':') {
		/* The port runs to the path, if any. */
		char digits[8];
		size_t n = strcspn(p + 1, "/");

		if (n == 0 || n >= sizeof(digits))
			return false;
		memcpy(digits, p + 1, n);
		digits[n] = '\0';
		if (!num_parse_i64(digits, 1, 65535, &port))
			return false;
	}
	r->port = (int)port;
	return true;
}

/* A seq argument (0..NUM_SEQ_MAX) of 'flag'; false after printing why. */
static bool seq_arg(const char *flag, const char *v, int64_t *out, int *status)
{
	if (!v) {
		*status = usage_error("%s needs a value", flag);
		return false;
	}
	if (!num_parse_i64(v, 0, NUM_SEQ_MAX, out)) {
		*status = usage_error("%s: '%s' is not a seq", flag, v);
		return false;
	}
	return true;
}

/* Appends "?name=" (or "&name=") and 'value' percent-encoded to r->path;
 * false when it does not fit. */
static bool path_arg(struct rigctl *r, const char *name, const char *value)
{
	size_t n = strlen(r->path);
	int w = snprintf(r->path + n, sizeof(r->path) - n, "%c%s=", strchr(r->path, '?') ? '&' : '?',
			 name);

	if (w < 0 || (size_t)w >= sizeof(r->path) - n)
		return false;
	n += (size_t)w;
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (n + 4 > sizeof(r->path))
			return false;
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~", *p))
			r->path[n++] = (char)*p;
		else
			n += (size_t)snprintf(r->path + n, 4, "%%%02X", *p);
	}
	r->path[n] = '\0';
	return true;
}

/*
 * Reads the whole file at 'path' into a malloc'd buffer (its size in *len).
 * Returns NULL after printing why.
 */
static char *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "rigctl: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *v = cap > FILE_MAX ? NULL : realloc(buf, cap ? cap * 2 : 65536);

			if (!v) {
				fprintf(stderr, "rigctl: %s is too large\n", path);
				goto fail;
			}
			buf = v;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "rigctl: cannot read %s: %s\n", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	*len = n;
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

/* ---- the commands' own arguments ---- */

static int args_send(struct rigctl *r, struct argv_cursor *a)
{
	r->mode = RIGCTL_SEND;
	if (a->i < a->argc && strcmp(a->argv[a->i], "-") != 0)
		r->input_path = a->argv[a->i];
	if (a->i < a->argc)
		a->i++;
	return 0;
}

static int args_replay(struct rigctl *r, struct argv_cursor *a)
{
	r->mode = RIGCTL_REPLAY;
	r->speed = 1;
	if (a->i >= a->argc)
		return usage_error("replay needs a log file");
	if (strcmp(a->argv[a->i], "-") != 0)
		r->input_path = a->argv[a->i];
	a->i++;
	while (a->i < a->argc) {
		const char *v = next_value(a);
		char *end;

		if (strcmp(a->argv[a->i], "--speed") != 0 || !v)
			return usage_error("unknown replay argument '%s'", a->argv[a->i]);
		if (strcmp(v, "max") == 0) {
			r->speed = 0;
		} else {
			/* A factor, not an integer: num_parse_i64 does not apply. */
			r->speed = strtod(v, &end);
			if (*end || !(r->speed > 0) || r->speed > 1e9)
				return usage_error("--speed: '%s' is not a positive factor or max", v);
		}
		a->i += 2;
	}
	return 0;
}

static int args_watch(struct rigctl *r, struct argv_cursor *a)
{
	char why[512];
	int status = 0;

	r->mode = RIGCTL_WATCH;
	while (a->i < a->argc) {
		const char *flag = a->argv[a->i];
		int64_t v;

		if (strcmp(flag, "--count") == 0) {
			if (!seq_arg(flag, next_value(a), &v, &status))
				return status;
			r->count_limit = (long)v;
		} else if (strcmp(flag, "--until-seq") == 0) {
			if (!seq_arg(flag, next_value(a), &r->until_seq, &status))
				return status;
		} else if (strcmp(flag, "--format") == 0) {
			const char *name = next_value(a);

			if (!name || proto_format_parse(name, &r->format) != 0)
				return usage_error("--format takes json, f32 or f64");
		} else if (strcmp(flag, "--view") == 0 || strcmp(flag, "--vp") == 0 ||
			   strcmp(flag, "--viewport") == 0 || strcmp(flag, "--min-px") == 0) {
			const char *value = next_value(a);

			if (!value)
				return usage_error("%s needs a value", flag);
			if (strcmp(flag, "--view") == 0)
				r->view_file = value;
			else if (strcmp(flag, "--vp") == 0)
				r->view_vp = value;
			else if (strcmp(flag, "--viewport") == 0)
				r->view_viewport = value;
			else
				r->view_min_px = value;
		} else {
			return usage_error("unknown watch argument '%s'", flag);
		}
		a->i += 2;
	}
	if (rigctl_view_build(r, why, sizeof(why)) != 0)
		return usage_error("%s", why);
	return 0;
}

/* get SCENE [--at SEQ] and export SCENE [--at SEQ] [-o FILE]: 'what' is
 * the path's tail after the scene ("" or "/gltf"). */
static int args_get(struct rigctl *r, struct argv_cursor *a, const char *what, bool export)
{
	int status = 0;

	r->mode = RIGCTL_HTTP;
	r->method = "GET";
	snprintf(r->path, sizeof(r->path), "/api/scenes/%s%s", r->scene, what);
	while (a->i < a->argc) {
		const char *flag = a->argv[a->i], *v = next_value(a);
		int64_t at;

		if (strcmp(flag, "--at") == 0) {
			if (!seq_arg(flag, v, &at, &status))
				return status;
			snprintf(r->path, sizeof(r->path), "/api/scenes/%s%s?at=%" PRId64, r->scene,
				 what, at);
		} else if (export && (strcmp(flag, "-o") == 0 || strcmp(flag, "--output") == 0)) {
			if (!v)
				return usage_error("%s needs a file", flag);
			r->out_path = strcmp(v, "-") == 0 ? NULL : v;
		} else {
			return usage_error("unknown %s argument '%s'", export ? "export" : "get", flag);
		}
		a->i += 2;
	}
	return 0;
}

static int args_log(struct rigctl *r, struct argv_cursor *a)
{
	int64_t from = -1, to = -1;
	int status = 0;
	int n;

	r->mode = RIGCTL_HTTP;
	r->method = "GET";
	while (a->i < a->argc) {
		const char *flag = a->argv[a->i];

		if (strcmp(flag, "--from") == 0) {
			if (!seq_arg(flag, next_value(a), &from, &status))
				return status;
		} else if (strcmp(flag, "--to") == 0) {
			if (!seq_arg(flag, next_value(a), &to, &status))
				return status;
		} else {
			return usage_error("unknown log argument '%s'", flag);
		}
		a->i += 2;
	}
	n = snprintf(r->path, sizeof(r->path), "/api/scenes/%s/log", r->scene);
	if (from >= 0 || to >= 0) {
		char q[96];

		q[0] = '\0';
		if (from >= 0)
			snprintf(q, sizeof(q), "from=%" PRId64, from);
		if (to >= 0)
			snprintf(q + strlen(q), sizeof(q) - strlen(q), "%sto=%" PRId64,
				 from >= 0 ? "&" : "", to);
		snprintf(r->path + n, sizeof(r->path) - (size_t)n, "?%s", q);
	}
	return 0;
}

static int args_create(struct rigctl *r, struct argv_cursor *a)
{
	size_t n = strlen(r->scene) + 32;
	int dims = 3;

	if (a->i < a->argc && strcmp(a->argv[a->i], "--dims") == 0) {
		const char *v = next_value(a);

		if (!v || (strcmp(v, "2") != 0 && strcmp(v, "3") != 0))
			return usage_error("--dims needs 2 or 3");
		dims = v[0] - '0';
		a->i += 2;
	}

	r->mode = RIGCTL_HTTP;
	r->method = "POST";
	snprintf(r->path, sizeof(r->path), "/api/scenes");
	r->owned_body = malloc(n);
	if (!r->owned_body) {
		fprintf(stderr, "rigctl: out of memory\n");
		return 1;
	}
	/* scene_id_valid: the name needs no escaping. */
	if (dims == 2)
		snprintf(r->owned_body, n, "{\"name\":\"%s\",\"dims\":2}", r->scene);
	else
		snprintf(r->owned_body, n, "{\"name\":\"%s\"}", r->scene);
	r->body = r->owned_body;
	r->body_len = strlen(r->owned_body);
	return 0;
}

/* import's options after the file: query arguments of the request. */
static int import_options(struct rigctl *r, struct argv_cursor *a)
{
	int status = 0;
	bool ok = true;

	while (a->i < a->argc) {
		const char *flag = a->argv[a->i], *v = next_value(a);

		if (strcmp(flag, "--nearest") == 0) {
			ok = ok && path_arg(r, "nearest", "1");
			a->i++;
			continue;
		}
		if (strcmp(flag, "--scene-index") == 0) {
			char num[32];
			int64_t index;

			if (!seq_arg(flag, v, &index, &status))
				return status;
			snprintf(num, sizeof(num), "%" PRId64, index);
			ok = ok && path_arg(r, "scene", num);
		} else if (strcmp(flag, "--scene-name") == 0 || strcmp(flag, "--parent") == 0) {
			if (!v)
				return usage_error("%s needs a value", flag);
			ok = ok && path_arg(r, strcmp(flag, "--parent") == 0 ? "parent" : "scene_name",
					    v);
		} else {
			return usage_error("unknown import argument '%s'", flag);
		}
		a->i += 2;
	}
	return ok ? 0 : usage_error("import arguments too long");
}

static int args_import(struct rigctl *r, struct argv_cursor *a)
{
	const char *file;
	int status;

	r->mode = RIGCTL_HTTP;
	r->method = "POST";
	if (a->i >= a->argc)
		return usage_error("import needs a .gltf, .glb or skeleton .json file");
	file = a->argv[a->i++];
	snprintf(r->path, sizeof(r->path), "/api/scenes/%s/gltf", r->scene);
	if ((status = import_options(r, a)) != 0)
		return status;
	r->owned_body = read_whole_file(file, &r->body_len);
	if (!r->owned_body)
		return 1;
	/* A .glb starts with the magic "glTF". */
	r->content_type = r->body_len >= 4 && memcmp(r->owned_body, "glTF", 4) == 0
				  ? "model/gltf-binary"
				  : "model/gltf+json";
	r->body = r->owned_body;
	return 0;
}

/* Whether 'arg' names an SVG file (ends in .svg, any case). */
static bool is_svg_path(const char *arg)
{
	size_t n = strlen(arg);

	return n > 4 && strcasecmp(arg + n - 4, ".svg") == 0;
}

/* The file name part of a path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* 'buf' ('len' bytes read by read_whole_file) with a NUL after them, or
 * NULL (then 'buf' is freed). */
static char *terminated(char *buf, size_t len)
{
	char *t = buf ? realloc(buf, len + 1) : NULL;

	if (!t) {
		free(buf);
		return NULL;
	}
	t[len] = '\0';
	return t;
}

/* The body {"file","svg","manifest"} of POST .../svg from the two files
 * (the manifest as it is: the server checks it). 0 or 1. */
static int svg_body(struct rigctl *r, const char *svg_path, const char *manifest_path)
{
	size_t svg_len = 0, man_len = 0;
	char *svg = read_whole_file(svg_path, &svg_len);
	char *manifest = NULL;
	json_buf b;
	int rc = 1;

	svg = terminated(svg, svg_len);
	if (svg && (manifest = read_whole_file(manifest_path, &man_len)) != NULL)
		manifest = terminated(manifest, man_len);

	json_buf_init(&b, 0);
	if (svg && manifest && strlen(svg) == svg_len && strlen(manifest) == man_len &&
	    !JSON_BUF_LIT(&b, "{\"file\":") &&
	    !json_buf_string(&b, base_name(svg_path), JSON_STR_REPAIR_UTF8) &&
	    !JSON_BUF_LIT(&b, ",\"svg\":") &&
	    !json_buf_string(&b, svg, JSON_STR_SHORT_ESCAPES | JSON_STR_REPAIR_UTF8) &&
	    !JSON_BUF_LIT(&b, ",\"manifest\":") && !json_buf_append(&b, manifest, man_len) &&
	    !JSON_BUF_LIT(&b, "}")) {
		r->body_len = b.len;
		r->owned_body = json_buf_take(&b);
		rc = r->owned_body ? 0 : 1;
	} else if (svg && manifest) {
		fprintf(stderr, "rigctl: %s or %s holds a NUL byte, or out of memory\n", svg_path,
			manifest_path);
	}
	json_buf_release(&b);
	free(svg);
	free(manifest);
	r->body = r->owned_body;
	return rc;
}

/* import FILE.svg --manifest FILE.json [--scene SCENE]: 'svg_path' was
 * read already; 'scene_name' is the scene named before it, or NULL. */
static int args_import_svg(struct rigctl *r, struct argv_cursor *a, const char *svg_path,
			   const char *scene_name)
{
	const char *manifest = NULL;

	while (a->i < a->argc) {
		const char *flag = a->argv[a->i], *v = next_value(a);

		if (!v)
			return usage_error("%s needs a value", flag);
		if (strcmp(flag, "--manifest") == 0)
			manifest = v;
		else if (strcmp(flag, "--scene") == 0 && !scene_name)
			scene_name = v;
		else
			return usage_error("unknown import argument '%s'", flag);
		a->i += 2;
	}
	if (!manifest)
		return usage_error("importing an SVG needs --manifest FILE.json");
	if (!scene_name) {
		/* The SVG's file name without ".svg". */
		const char *base = base_name(svg_path);
		size_t n = strlen(base) - 4;
		snprintf(r->scene_buf, sizeof(r->scene_buf), "%.*s", (int)(n < SCENE_ID_MAX ? n : 0),
			 base);
		scene_name = r->scene_buf;
	}
	if (!scene_id_valid(scene_name))
		return usage_error("'%s' is not a scene name ([A-Za-z0-9_.:-], 1 to %d); give --scene",
				   scene_name, SCENE_ID_MAX);
	r->scene = scene_name;
	r->mode = RIGCTL_HTTP;
	r->method = "POST";
	snprintf(r->path, sizeof(r->path), "/api/scenes/%s/svg", scene_name);
	return svg_body(r, svg_path, manifest);
}

/* Whether 'arg' names a JSON file (ends in .json, any case): a skeleton. */
static bool is_json_path(const char *arg)
{
	size_t n = strlen(arg);

	return n > 5 && strcasecmp(arg + n - 5, ".json") == 0;
}

/* Whether a file can be read at 'path'. */
static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/*
 * The atlas beside the skeleton 'skel_path' of 'format', written into
 * 'out': a Spine file's path with ".json" replaced by ".atlas", a
 * DragonBones NAME_ske.json's NAME_tex.json. false when there is none.
 */
static bool atlas_beside(const char *skel_path, int format, char *out, size_t out_len)
{
	size_t n = strlen(skel_path);
	int w;

	if (format == SKEL_BODY_SPINE)
		w = snprintf(out, out_len, "%.*s.atlas", (int)(n - 5), skel_path);
	else if (n > 9 && strcasecmp(skel_path + n - 9, "_ske.json") == 0)
		w = snprintf(out, out_len, "%.*s_tex.json", (int)(n - 9), skel_path);
	else
		return false;
	return w > 0 && (size_t)w < out_len && readable(out);
}

/* The skeleton import's files, read: freed by skel_files_release. */
struct skel_files {
	char *skel, *atlas;
	size_t skel_len, atlas_len;
	char **page_names;
	int n_pages;
	unsigned char **page_bytes;
	size_t *page_lens;
};

static void skel_files_release(struct skel_files *f)
{
	free(f->skel);
	free(f->atlas);
	for (int i = 0; f->page_bytes && i < f->n_pages; i++)
		free(f->page_bytes[i]);
	free(f->page_bytes);
	free(f->page_lens);
	skel_body_names_free(f->page_names, f->n_pages);
}

/* Reads the pages the atlas at 'atlas_path' names, from its folder. 0, or
 * 1 after saying which page is missing. */
static int read_pages(struct skel_files *f, const char *atlas_path)
{
	const char *slash = strrchr(atlas_path, '/');
	int dir_len = slash ? (int)(slash - atlas_path) + 1 : 0;

	f->page_bytes = calloc((size_t)f->n_pages + 1, sizeof(*f->page_bytes));
	f->page_lens = calloc((size_t)f->n_pages + 1, sizeof(*f->page_lens));
	if (!f->page_bytes || !f->page_lens) {
		fprintf(stderr, "rigctl: out of memory\n");
		return 1;
	}
	for (int i = 0; i < f->n_pages; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%.*s%s", dir_len, atlas_path, f->page_names[i]);
		if (!readable(path)) {
			fprintf(stderr, "rigctl: %s: page '%s' is missing: cannot read %s: %s\n",
				atlas_path, f->page_names[i], path, strerror(errno));
			return 1;
		}
		if (!(f->page_bytes[i] = (unsigned char *)read_whole_file(path, &f->page_lens[i])))
			return 1;
	}
	return 0;
}

/*
 * import SCENE FILE.json [--atlas FILE] [--file NAME] [--armature NAME]:
 * the body of POST .../spine or .../dragonbones (skel_body.h) from the
 * skeleton, its atlas and the atlas's pages. 0, 1 when a file is missing
 * or not what it should be, or RIGCTL_EXIT_USAGE.
 */
static int args_import_skeleton(struct rigctl *r, struct argv_cursor *a, const char *skel_path)
{
	const char *atlas_path = NULL, *file = NULL, *armature = NULL;
	char found[4096], why[256];
	struct skel_files f = {0};
	skel_body_page *pages = NULL;
	edit_error err;
	json_buf b;
	int format, rc = 1;

	while (a->i < a->argc) {
		const char *flag = a->argv[a->i], *v = next_value(a);

		if (strcmp(flag, "--atlas") != 0 && strcmp(flag, "--file") != 0 &&
		    strcmp(flag, "--armature") != 0)
			return usage_error("unknown import argument '%s'", flag);
		if (!v)
			return usage_error("%s needs a value", flag);
		if (strcmp(flag, "--atlas") == 0)
			atlas_path = v;
		else if (strcmp(flag, "--file") == 0)
			file = v;
		else
			armature = v;
		a->i += 2;
	}
	r->mode = RIGCTL_HTTP;
	r->method = "POST";
	if (!(f.skel = read_whole_file(skel_path, &f.skel_len)))
		return 1;
	format = skel_body_format(f.skel, f.skel_len, why, sizeof(why));
	if (format == SKEL_BODY_UNKNOWN) {
		fprintf(stderr, "rigctl: %s is not a skeleton file: %s\n", skel_path, why);
		goto out;
	}
	if (armature && format != SKEL_BODY_DRAGONBONES) {
		rc = usage_error("--armature: %s is a Spine skeleton, which has no armatures",
				 skel_path);
		goto out;
	}
	if (!atlas_path && atlas_beside(skel_path, format, found, sizeof(found)))
		atlas_path = found;
	if (atlas_path) {
		if (!(f.atlas = read_whole_file(atlas_path, &f.atlas_len)))
			goto out;
		edit_error_clear(&err);
		if (skel_body_pages(format, f.atlas, f.atlas_len, &f.page_names, &f.n_pages, &err)) {
			fprintf(stderr, "rigctl: %s: %s\n", atlas_path, err.message);
			goto out;
		}
		if (read_pages(&f, atlas_path) != 0)
			goto out;
	}
	if (f.n_pages && !(pages = calloc((size_t)f.n_pages, sizeof(*pages)))) {
		fprintf(stderr, "rigctl: out of memory\n");
		goto out;
	}
	for (int i = 0; i < f.n_pages; i++)
		pages[i] = (skel_body_page){ f.page_names[i], f.page_bytes[i], f.page_lens[i] };
	json_buf_init(&b, 0);
	switch (skel_body_build(&b, format, f.skel, f.skel_len, f.atlas, f.atlas_len, pages,
				f.n_pages, file, armature)) {
	case 0:
		r->body_len = b.len;
		r->owned_body = json_buf_take(&b);
		rc = r->owned_body ? 0 : 1;
		break;
	case RIGD_E_BAD_FIELD:
		fprintf(stderr, "rigctl: %s holds a NUL byte\n", atlas_path);
		break;
	default:
		fprintf(stderr, "rigctl: out of memory\n");
		break;
	}
	json_buf_release(&b);
	r->body = r->owned_body;
	snprintf(r->path, sizeof(r->path), "/api/scenes/%s/%s", r->scene, skel_body_route(format));
out:
	free(pages);
	skel_files_release(&f);
	return rc;
}

/* The command and what follows it. */
static int args_command(struct rigctl *r, const char *cmd, struct argv_cursor *a)
{
	if (strcmp(cmd, "send") == 0)
		return args_send(r, a);
	if (strcmp(cmd, "replay") == 0)
		return args_replay(r, a);
	if (strcmp(cmd, "watch") == 0)
		return args_watch(r, a);
	if (strcmp(cmd, "get") == 0)
		return args_get(r, a, "", false);
	if (strcmp(cmd, "export") == 0)
		return args_get(r, a, "/gltf", true);
	if (strcmp(cmd, "log") == 0)
		return args_log(r, a);
	if (strcmp(cmd, "import") == 0 && a->i < a->argc && is_svg_path(a->argv[a->i])) {
		const char *svg_path = a->argv[a->i++];
		return args_import_svg(r, a, svg_path, r->scene);
	}
	if (strcmp(cmd, "import") == 0 && a->i < a->argc && is_json_path(a->argv[a->i])) {
		const char *skel_path = a->argv[a->i++];
		return args_import_skeleton(r, a, skel_path);
	}
	if (strcmp(cmd, "import") == 0)
		return args_import(r, a);
	if (strcmp(cmd, "create") == 0)
		return args_create(r, a);
	r->mode = RIGCTL_HTTP;
	if (strcmp(cmd, "scenes") == 0) {
		r->method = "GET";
		snprintf(r->path, sizeof(r->path), "/api/scenes");
		return 0;
	}
	if (strcmp(cmd, "delete") == 0) {
		r->method = "DELETE";
		snprintf(r->path, sizeof(r->path), "/api/scenes/%s", r->scene);
		return 0;
	}
	return unknown("command", cmd);
}

/* Whether 'cmd' is one of the commands args_command reads. */
static bool command_known(const char *cmd)
{
	static const char *const commands[] = {"send", "replay", "watch", "get", "export", "log",
		"import", "create", "scenes", "delete"};

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i]) == 0)
			return true;
	return false;
}

/* The options before the command: --help, --url, --token. */
static int args_global(struct rigctl *r, struct argv_cursor *a, const char **url)
{
	while (a->i < a->argc && a->argv[a->i][0] == '-' && a->argv[a->i][1] == '-') {
		const char *flag = a->argv[a->i], *v = next_value(a);

		if (strcmp(flag, "--help") == 0) {
			fputs(usage_text, stdout);
			return RIGCTL_EXIT_HELP;
		}
		if (strcmp(flag, "--version") == 0) {
			version_print(stdout, "rigctl");
			return RIGCTL_EXIT_HELP;
		}
		if (strcmp(flag, "--url") == 0 && v) {
			*url = v;
		} else if (strcmp(flag, "--token") == 0 && v) {
			if (strlen(v) > TOKEN_ARG_MAX)
				return usage_error("a token is at most %d characters", TOKEN_ARG_MAX);
			r->token = v;
		} else {
			return unknown("option", flag);
		}
		a->i += 2;
	}
	return 0;
}

int rigctl_args_parse(struct rigctl *r, int argc, char **argv)
{
	struct argv_cursor a = {argc, argv, 1};
	const char *url = getenv("RIGD_URL") ? getenv("RIGD_URL") : RIGCTL_DEFAULT_URL;
	const char *env_token = getenv("RIGD_TOKEN");
	const char *cmd;
	int status;

	memset(r, 0, sizeof(*r));
	r->until_seq = -1;
	r->in_fd = -1;
	r->token = env_token && *env_token ? env_token : NULL;
	if ((status = args_global(r, &a, &url)) != 0)
		return status;
	if (a.i >= argc)
		return usage_error("no command");
	if (!parse_url(r, url))
		return usage_error("'%s' is not an http:// or ws:// URL", url);
	cmd = argv[a.i++];
	if (!command_known(cmd))
		return unknown("command", cmd);
	if (strcmp(cmd, "import") == 0 && a.i < argc && is_svg_path(argv[a.i])) {
		/* import FILE.svg ...: the scene comes after, or from the name. */
		const char *svg_path = argv[a.i++];
		if ((status = args_import_svg(r, &a, svg_path, NULL)) != 0)
			return status;
	} else {
		if (strcmp(cmd, "scenes") != 0) {
			if (a.i >= argc)
				return usage_error("%s needs a scene", cmd);
			r->scene = argv[a.i++];
			if (!scene_id_valid(r->scene))
				return usage_error("'%s' is not a scene name ([A-Za-z0-9_.:-], 1 to %d)",
						   r->scene, SCENE_ID_MAX);
		}
		if ((status = args_command(r, cmd, &a)) != 0)
			return status;
	}
	if (a.i < argc)
		return usage_error("unexpected argument '%s'", argv[a.i]);
	return 0;
}
