/*
 * net_static.c: static files (the viewer) and the Content-Security-Policy.
 *
 * A URL path becomes a file only below one of the configured roots: no
 * dot segments, no hidden files, no node_modules, and symbolic links
 * resolved and checked to stay inside the root. Files carry an ETag and are
 * revalidated on use.
 */
#include "net_internal.h"

#include "core/err.h"
#include "core/sha256.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- static files ---- */

int nt_static_roots(struct net *n, const char *web_root)
{
	static const struct {
		const char *prefix, *rel;
		bool deny;
	} table[] = {
		{"/vendor/three/build/", "node_modules/three/build", false},
		{"/vendor/three/examples/jsm/", "node_modules/three/examples/jsm", false},
		{"/vendor/dompurify/", "node_modules/dompurify/dist", false},
		{"/", "", true},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		char joined[PATH_MAX], real[PATH_MAX];

		assert(n->n_roots < (int)(sizeof(n->roots) / sizeof(n->roots[0])));
		struct static_root *r = &n->roots[n->n_roots++];
		r->url_prefix = table[i].prefix;
		r->rel_dir = table[i].rel;
		r->deny_private = table[i].deny;
		snprintf(joined, sizeof(joined), "%s/%s", web_root, table[i].rel);
		if (realpath(joined, real) && !(r->dir = strdup(real)))
			return -1;
	}
	return 0;
}

static const struct {
	const char *ext;
	const char *type;
} mime_types[] = {
	{".html", "text/html; charset=utf-8"},
	{".htm", "text/html; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".mjs", "text/javascript; charset=utf-8"},
	{".css", "text/css; charset=utf-8"},
	{".json", "application/json"},
	{".map", "application/json"},
	{".txt", "text/plain; charset=utf-8"},
	{".md", "text/plain; charset=utf-8"},
	{".svg", "image/svg+xml"},
	{".png", "image/png"},
	{".jpg", "image/jpeg"},
	{".jpeg", "image/jpeg"},
	{".gif", "image/gif"},
	{".webp", "image/webp"},
	{".ico", "image/x-icon"},
	{".wasm", "application/wasm"},
	{".gltf", "model/gltf+json"},
	{".glb", "model/gltf-binary"},
	{".bin", "application/octet-stream"},
	{".ktx2", "image/ktx2"},
	{".woff2", "font/woff2"},
	{".woff", "font/woff"},
};

static const char *mime_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');

	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof(mime_types) / sizeof(mime_types[0]); i++)
			if (strcasecmp(dot, mime_types[i].ext) == 0)
				return mime_types[i].type;
	return "application/octet-stream";
}

/*
 * True when 'rel' (a URL path below a root, without the leading '/') is safe
 * to join to a directory: no empty, "." or ".." segment, no hidden segment,
 * no backslash or control byte, and, where the root asks for it, no
 * node_modules at the top.
 */
static bool rel_path_ok(const char *rel, bool deny_private)
{
	const char *seg = rel;

	for (const char *p = rel; *p; p++)
		if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	while (*seg) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);

		if (len == 0 && end)
			return false;          /* "//" */
		if (len > 0 && seg[0] == '.')
			return false;          /* ".", "..", ".git", ... */
		if (deny_private && seg == rel && len == 12 && strncmp(seg, "node_modules", 12) == 0)
			return false;
		if (!end)
			break;
		seg = end + 1;
	}
	return true;
}

/* Opens the file a GET names, or returns false (the caller answers 404). */
static bool open_static(struct net *n, const char *path, int *fd_out, uint64_t *size_out,
			const char **type_out)
{
	char joined[PATH_MAX], real[PATH_MAX];
	const struct static_root *root = NULL;
	const char *rel;
	struct stat st;
	size_t dlen;
	int fd, len;

	for (int i = 0; i < n->n_roots; i++) {
		size_t plen = strlen(n->roots[i].url_prefix);

		if (n->roots[i].dir && strncmp(path, n->roots[i].url_prefix, plen) == 0) {
			root = &n->roots[i];
			break;
		}
	}
	if (!root)
		return false;
	rel = path + strlen(root->url_prefix);
	if (!rel_path_ok(rel, root->deny_private))
		return false;
	len = snprintf(joined, sizeof(joined), "%s/%s%s", root->dir, rel,
		       (*rel == '\0' || rel[strlen(rel) - 1] == '/') ? "index.html" : "");
	if (len < 0 || (size_t)len >= sizeof(joined))
		return false;
	/* Resolve symbolic links and check the result is still inside the root. */
	if (!realpath(joined, real))
		return false;
	dlen = strlen(root->dir);
	if (strncmp(real, root->dir, dlen) != 0 || real[dlen] != '/')
		return false;
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	*fd_out = fd;
	*size_out = (uint64_t)st.st_size;
	*type_out = mime_of(real);
	return true;
}

/*
 * True when the request's If-None-Match names 'etag' (a list of validators,
 * or "*"), so the browser's copy is current and a 304 answers (RFC 9110,
 * 13.1.2: weak comparison).
 */
static bool etag_matches(const char *header, const char *etag)
{
	size_t elen = strlen(etag);
	const char *p = header;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return true;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		if (strncmp(p, etag, elen) == 0 && (p[elen] == '\0' || p[elen] == ',' ||
						    p[elen] == ' ' || p[elen] == '\t'))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

void nt_serve_static(struct net *n, struct conn *c)
{
	const char *type;
	uint64_t size;
	struct stat st;
	int fd;

	if (!open_static(n, c->path, &fd, &size, &type)) {
		nt_respond_error(n, c, 404, RIGD_E_NOT_FOUND);
		return;
	}
	c->cacheable = true;
	c->vendor = strncmp(c->path, "/vendor/", 8) == 0;
	/* The validator changes whenever the file is replaced or rewritten. */
	if (fstat(fd, &st) == 0)
		snprintf(c->etag, sizeof(c->etag), "\"%llx-%llx-%llx%09ld\"",
			 (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
			 (unsigned long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	if (c->etag[0] && c->if_none_match && etag_matches(c->if_none_match, c->etag)) {
		close(fd);
		nt_respond(n, c, 304, NULL, NULL, 0);
		return;
	}
	c->fd = fd + 1;
	c->file_left = c->head_only ? 0 : size;
	c->responding = true;
	n->http_responding++;
	c->status = 200;
	snprintf(c->resp_type, sizeof(c->resp_type), "%s", type);
	c->resp_len = (size_t)size;  /* announced length */
	lws_callback_on_writable(c->wsi);
}

/* ---- Content-Security-Policy ----
 *
 * The viewer's only inline script is its import map (an import map cannot
 * be loaded from a file). Rather than allow inline scripts, the policy lists
 * the SHA-256 of every inline <script> of the web root's index.html, computed
 * when the server starts, so editing the page needs no change here.
 */
/* True when the tag [tag, gt) has a src attribute. */
static bool tag_has_src(const char *tag, const char *gt)
{
	for (const char *p = tag; p + 4 < gt; p++)
		if ((p[0] == ' ' || p[0] == '\t' || p[0] == '\n') && strncmp(p + 1, "src", 3) == 0 &&
		    (p[4] == '=' || p[4] == ' '))
			return true;
	return false;
}

char *nt_build_csp(const char *web_root)
{
	static const char head[] = "default-src 'self'; script-src 'self'";
	static const char tail[] = "; style-src 'self'; img-src 'self' data: blob:; "
				   "connect-src 'self'; object-src 'none'; base-uri 'none'; "
				   "form-action 'self'; frame-ancestors 'none'";
	char path[PATH_MAX], *html = NULL, *csp = NULL;
	size_t cap = sizeof(head) + sizeof(tail), used = 0;
	long size = -1;
	FILE *f;

	if (web_root && snprintf(path, sizeof(path), "%s/index.html", web_root) < (int)sizeof(path) &&
	    (f = fopen(path, "rb")) != NULL) {
		if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && size < (8 << 20) &&
		    fseek(f, 0, SEEK_SET) == 0 && (html = malloc((size_t)size + 1)) != NULL) {
			if (fread(html, 1, (size_t)size, f) != (size_t)size) {
				free(html);
				html = NULL;
			} else {
				html[size] = '\0';
			}
		}
		fclose(f);
	}
	/* Each hash adds " 'sha256-" + 44 base64 characters + "'". */
	for (const char *p = html; p && (p = strstr(p, "<script")); p++)
		cap += 64;
	csp = malloc(cap);
	if (!csp)
		goto out;
	used = (size_t)snprintf(csp, cap, "%s", head);
	for (const char *p = html; p && (p = strstr(p, "<script")) != NULL;) {
		const char *gt = strchr(p, '>'), *end;
		unsigned char digest[SHA256_LEN];
		char b64[64];

		if (!gt)
			break;
		end = strstr(gt, "</script>");
		if (!end)
			break;
		/* A script with a src attribute is 'self'; its inline text is
		 * ignored by the browser. */
		if (!tag_has_src(p, gt) && end > gt + 1) {
			sha256_digest(gt + 1, (size_t)(end - gt - 1), digest);
			if (lws_b64_encode_string((const char *)digest, SHA256_LEN, b64,
						  sizeof(b64)) > 0)
				used += (size_t)snprintf(csp + used, cap - used, " 'sha256-%s'", b64);
		}
		p = end;
	}
	snprintf(csp + used, cap - used, "%s", tail);
out:
	free(html);
	return csp;
}

