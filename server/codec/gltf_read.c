/*
 * gltf_read.c: reading a glTF document for gltf_import (see gltf.h): the
 * GLB container, the JSON (UTF-8, no duplicate keys), asset.version, the
 * top-level arrays, meshes, cameras, skins and scenes, and the choice of
 * the scene to import. Nodes themselves are read in gltf_read_node.c.
 *
 * Everything here is untrusted input: each problem becomes an error that
 * names where it is (a node, a camera, a skin, a byte offset), never an
 * assert. Walks are iterative: a hostile file can nest deeply.
 */
#include "gltf_internal.h"

#include "bytes.h"
#include "core/err.h"
#include "json.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* A node's name fit to quote: printable ASCII (others as '?'), at most
 * LABEL_NAME_MAX characters and "..." beyond. 'out' has LABEL_NAME_MAX + 4. */
const char *gltf_quoted(const char *s, char *out)
{
	size_t i;

	for (i = 0; s[i] && i < LABEL_NAME_MAX; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'') ? s[i] : '?';
	if (s[i])
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
	return out;
}

/* "node 3 ('arm')" or "node 3". */
void gltf_node_label(const gltf_import_ctx *c, int node, char *out, size_t cap)
{
	char q[LABEL_NAME_MAX + 4];
	const char *name;

	/* Messages name only nodes whose index was checked (while the nodes
	 * table is still being read, n_nodes is not set yet). */
	assert(node >= 0);
	name = c->nodes ? c->nodes[node].name : NULL;

	if (!name && c->node_json) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(c->node_json[node], "name");

		name = cJSON_IsString(n) ? n->valuestring : NULL;
	}
	if (name)
		snprintf(out, cap, "node %d ('%s')", node, gltf_quoted(name, q));
	else
		snprintf(out, cap, "node %d", node);
}

/* Records an error not about one node; returns 'code'. */
int gltf_fail(gltf_import_ctx *c, int code, const char *field, const char *fmt, ...)
{
	char msg[EDIT_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(c->err, code, -1, field, "%s", msg);
	c->rep->bad_node = -1;
	return code;
}

/* Records an error about glTF node 'node', named first; returns 'code'. */
int gltf_fail_node(gltf_import_ctx *c, int code, int node, const char *field, const char *fmt,
		   ...)
{
	char label[LABEL_NAME_MAX + 32], msg[EDIT_MESSAGE_MAX];
	va_list ap;

	gltf_node_label(c, node, label, sizeof(label));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	edit_error_set(c->err, code, -1, field, "%s: %s", label, msg);
	c->rep->bad_node = node;
	return code;
}

/* Records RIGD_E_NOMEM (not about one node); returns it. */
int gltf_nomem(gltf_import_ctx *c)
{
	return gltf_fail(c, RIGD_E_NOMEM, "", "%s", err_str(RIGD_E_NOMEM));
}

/* Adds a warning to the report: at most GLTF_MAX_WARNINGS are kept, the
 * rest counted as dropped. */
void gltf_warn(gltf_import_ctx *c, const char *fmt, ...)
{
	gltf_report *r = c->rep;
	char msg[EDIT_MESSAGE_MAX];
	char **w;
	va_list ap;

	if (r->n_warnings >= GLTF_MAX_WARNINGS) {
		r->n_warnings_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A warning lost to memory exhaustion is counted as dropped: the import
	 * itself does not depend on it. */
	if (!(w = realloc(r->warnings, sizeof(char *) * (size_t)(r->n_warnings + 1)))) {
		r->n_warnings_dropped++;
		return;
	}
	r->warnings = w;
	if (!(w[r->n_warnings] = strdup(msg))) {
		r->n_warnings_dropped++;
		return;
	}
	r->n_warnings++;
}

/* Finds the JSON chunk of a GLB container (glTF 2.0 section 4.4). */
static int unwrap_glb(gltf_import_ctx *c, const unsigned char *d, size_t len, const char **json,
		      size_t *json_len)
{
	size_t off = 12;
	int chunk = 0;

	if (len < 12)
		return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
				 "glb: %zu bytes is shorter than the 12-byte header",
				 len);
	if (le_get32(d + 4) != 2)
		return gltf_fail(c, RIGD_E_BAD_GLTF, "glb", "glb: container version %" PRIu32 ", not 2",
				 le_get32(d + 4));
	if (le_get32(d + 8) != len)
		return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
				 "glb: the header says %" PRIu32 " bytes but there are %zu",
				 le_get32(d + 8), len);
	while (off < len) {
		uint32_t clen, ctype;

		if (len - off < 8)
			return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
					 "glb: chunk %d: truncated header", chunk);
		clen = le_get32(d + off);
		ctype = le_get32(d + off + 4);
		if (clen % 4)
			return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
					 "glb: chunk %d: length %" PRIu32 " is not a multiple of 4",
					 chunk, clen);
		if (clen > len - off - 8)
			return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
					 "glb: chunk %d: %" PRIu32 " bytes run past the end of the file",
					 chunk, clen);
		if (chunk == 0) {
			if (ctype != GLB_CHUNK_JSON)
				return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
						 "glb: the first chunk is not JSON");
			*json = (const char *)d + off + 8;
			*json_len = clen;
		} else if (ctype == GLB_CHUNK_JSON) {
			return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
					 "glb: chunk %d: a second JSON chunk", chunk);
		} else if (ctype == GLB_CHUNK_BIN && chunk != 1) {
			return gltf_fail(c, RIGD_E_BAD_GLTF, "glb",
					 "glb: chunk %d: BIN must be the second chunk",
					 chunk);
		}
		off += 8 + (size_t)clen;
		chunk++;
	}
	if (chunk == 0)
		return gltf_fail(c, RIGD_E_BAD_GLTF, "glb", "glb: no JSON chunk");
	/* The chunk is padded with spaces; some old writers padded with NULs,
	 * which the JSON parser would stop at: trim those. */
	while (*json_len > 0 && (*json)[*json_len - 1] == '\0')
		(*json_len)--;
	return 0;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* glTF forbids duplicate keys in any object (section 2.7); cJSON keeps them
 * all and finds the first. Checks the whole document, iteratively. */
static int check_duplicate_keys(gltf_import_ctx *c)
{
	const cJSON **stack = NULL;
	const char **keys = NULL;
	size_t n_stack = 0, cap_stack = 0, cap_keys = 0;
	int rc = 0;

	for (const cJSON *item = c->root; item || n_stack;) {
		if (!item)
			item = stack[--n_stack];
		if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
			size_t n = 0;

			for (const cJSON *k = item->child; k; k = k->next) {
				if (cJSON_IsObject(item)) {
					if (n == cap_keys) {
						size_t nc = cap_keys ? cap_keys * 2 : 64;
						const char **nk = realloc(keys, nc * sizeof(*keys));

						if (!nk) {
							rc = gltf_nomem(c);
							goto out;
						}
						keys = nk;
						cap_keys = nc;
					}
					keys[n++] = k->string ? k->string : "";
				}
				if (k->child) {
					if (n_stack == cap_stack) {
						size_t nc = cap_stack ? cap_stack * 2 : 64;
						const cJSON **ns = realloc(stack, nc * sizeof(*stack));

						if (!ns) {
							rc = gltf_nomem(c);
							goto out;
						}
						stack = ns;
						cap_stack = nc;
					}
					stack[n_stack++] = k;
				}
			}
			if (n > 1) {
				qsort(keys, n, sizeof(*keys), cmp_keys);
				for (size_t i = 1; i < n; i++) {
					if (strcmp(keys[i - 1], keys[i]) == 0) {
						char q[LABEL_NAME_MAX + 4];

						rc = gltf_fail(c, RIGD_E_BAD_GLTF, "json",
							       "duplicate key '%s' in a JSON object",
							       gltf_quoted(keys[i], q));
						goto out;
					}
				}
			}
		}
		item = NULL;
	}
out:
	free(stack);
	free(keys);
	return rc;
}

static int parse_json(gltf_import_ctx *c, const char *json, size_t len)
{
	const char *end = NULL;
	char *text;

	if (len >= 3 && memcmp(json, "\xEF\xBB\xBF", 3) == 0) {
		/* glTF 2.7: a reader may ignore a byte order mark. */
		json += 3;
		len -= 3;
	}
	if (memchr(json, '\0', len))
		return gltf_fail(c, RIGD_E_BAD_JSON, "json", "bad JSON: a NUL byte at byte %zu",
				 (size_t)((const char *)memchr(json, '\0', len) - json));
	/* glTF JSON is UTF-8 (glTF 2.0, 3.2) and cJSON does not check it; a name
	 * that is not text would reach every browser's snapshot. */
	for (size_t i = 0, k; i < len; i += k)
		if ((k = json_utf8_len((const unsigned char *)json + i, len - i)) == 0)
			return gltf_fail(c, RIGD_E_BAD_JSON, "json",
					 "bad JSON: not UTF-8 at byte %zu", i);
	if (len == SIZE_MAX || !(text = malloc(len + 1)))
		return gltf_nomem(c);
	memcpy(text, json, len);
	text[len] = '\0';
	c->root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
	if (!c->root) {
		size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;

		free(text);
		return gltf_fail(c, RIGD_E_BAD_JSON, "json", "bad JSON at byte %zu", at);
	}
	free(text);
	if (!cJSON_IsObject(c->root))
		return gltf_fail(c, RIGD_E_BAD_GLTF, "json", "the document is not a JSON object");
	return check_duplicate_keys(c);
}

/* Reads an optional top-level array into a pointer table. */
static int top_array(gltf_import_ctx *c, const char *key, const cJSON ***table, int *count)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->root, key);
	int n = 0;

	*count = 0;
	*table = NULL;
	if (!a)
		return 0;
	if (!cJSON_IsArray(a))
		return gltf_fail(c, RIGD_E_BAD_GLTF, key, "'%s' is not an array", key);
	for (const cJSON *e = a->child; e; e = e->next) {
		if (n == INT_MAX)
			return gltf_fail(c, RIGD_E_LIMIT, key, "'%s' has too many entries", key);
		n++;
	}
	if (n == 0)
		return 0;
	if (!(*table = gltf_alloc_array(n, sizeof(**table))))
		return gltf_nomem(c);
	n = 0;
	for (const cJSON *e = a->child; e; e = e->next) {
		if (!cJSON_IsObject(e) && strcmp(key, "nodes") == 0)
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, n, key, "not a JSON object");
		if (!cJSON_IsObject(e))
			return gltf_fail(c, RIGD_E_BAD_GLTF, key, "%s[%d] is not an object", key, n);
		(*table)[n++] = e;
	}
	*count = n;
	return 0;
}

/* An index 0 <= i < count; -1 when it is not one. */
int gltf_as_index(const cJSON *v, int count)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != trunc(v->valuedouble) ||
	    v->valuedouble < 0 || v->valuedouble >= count)
		return -1;
	return (int)v->valuedouble;
}

/* Why 'v' is not an index below 'count', for messages ("7 is out of range:
 * there are 3 nodes"). */
void gltf_index_problem(const cJSON *v, int count, const char *what, char *out, size_t cap)
{
	if (!cJSON_IsNumber(v))
		snprintf(out, cap, "is not an integer");
	else if (!isfinite(v->valuedouble) || v->valuedouble != trunc(v->valuedouble))
		snprintf(out, cap, "%g is not an integer", v->valuedouble);
	else if (v->valuedouble < 0)
		snprintf(out, cap, "%.0f is negative", v->valuedouble);
	else
		snprintf(out, cap, "%.0f is out of range: there are %d %s", v->valuedouble, count, what);
}

static int read_meshes(gltf_import_ctx *c)
{
	gltf_sset names = { 0 };
	int rc = 0;

	if (c->n_meshes == 0)
		return 0;
	if (!(c->mesh_ref = gltf_alloc_array(c->n_meshes, sizeof(char *))) ||
	    gltf_sset_init(&names, 2 * (size_t)c->n_meshes) != 0) {
		rc = gltf_nomem(c);
		goto out;
	}
	for (int i = 0; i < c->n_meshes; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->mesh_json[i], "name");
		char base[SCENE_MESH_MAX + 1], ref[SCENE_MESH_MAX + 1];

		if (v && !cJSON_IsString(v)) {
			rc = gltf_fail(c, RIGD_E_BAD_GLTF, "meshes", "mesh %d: name is not a string", i);
			goto out;
		}
		/* A name too long for a mesh reference, or shared with an earlier
		 * mesh, would merge different meshes: those get their index. */
		if (v && v->valuestring[0] && strlen(v->valuestring) <= SCENE_MESH_MAX &&
		    !gltf_sset_slot(&names, v->valuestring)->key)
			snprintf(base, sizeof(base), "%s", v->valuestring);
		else
			snprintf(base, sizeof(base), "mesh:%d", i);
		if ((rc = gltf_make_unique(&names, NULL, base, SCENE_MESH_MAX, ref)) != 0 ||
		    !(c->mesh_ref[i] = strdup(ref))) {
			rc = gltf_nomem(c);
			goto out;
		}
	}
out:
	gltf_sset_free(&names);
	return rc;
}

/* The first node using camera k, for messages (-1: none). */
static int camera_user(const gltf_import_ctx *c, int k)
{
	for (int i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].camera == k)
			return i;
	return -1;
}

/* Records an error about camera k, naming the first node that uses it. */
static int camera_fail(gltf_import_ctx *c, int code, int k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int camera_fail(gltf_import_ctx *c, int code, int k, const char *fmt, ...)
{
	char msg[EDIT_MESSAGE_MAX];
	int user = camera_user(c, k);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (user >= 0)
		return gltf_fail_node(c, code, user, "camera", "camera %d: %s", k, msg);
	return gltf_fail(c, code, "cameras", "camera %d: %s", k, msg);
}

static int camera_number(gltf_import_ctx *c, const cJSON *obj, const char *key, int k, bool required,
			 double *out, bool *present)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (present)
		*present = v != NULL;
	if (!v && !required)
		return 0;
	if (!cJSON_IsNumber(v))
		return camera_fail(c, RIGD_E_BAD_GLTF, k, "%s is %s", key,
				   v ? "not a number" : "missing");
	if (!isfinite(v->valuedouble))
		return camera_fail(c, RIGD_E_NOT_FINITE, k, "%s is not finite", key);
	*out = v->valuedouble;
	return 0;
}

static int read_cameras(gltf_import_ctx *c)
{
	if (c->n_cameras == 0)
		return 0;
	if (!(c->cameras = gltf_alloc_array(c->n_cameras, sizeof(gltf_src_camera))))
		return gltf_nomem(c);
	for (int k = 0; k < c->n_cameras; k++) {
		const cJSON *cam = c->camera_json[k];
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(cam, "type");
		gltf_src_camera *g = &c->cameras[k];
		const char *problem = NULL;
		int rc = 0;

		if (!cJSON_IsString(type) ||
		    (strcmp(type->valuestring, "perspective") != 0 &&
		     strcmp(type->valuestring, "orthographic") != 0)) {
			problem = "type is not \"perspective\" or \"orthographic\"";
		} else if (strcmp(type->valuestring, "perspective") == 0) {
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(cam, "perspective");
			double aspect;
			bool has_far = false;

			g->perspective = true;
			if (!cJSON_IsObject(p))
				problem = "perspective is missing or not an object";
			else if ((rc = camera_number(c, p, "yfov", k, true, &g->yfov, NULL)) != 0 ||
				 (rc = camera_number(c, p, "znear", k, true, &g->znear, NULL)) != 0 ||
				 (rc = camera_number(c, p, "zfar", k, false, &g->zfar, &has_far)) != 0 ||
				 (rc = camera_number(c, p, "aspectRatio", k, false, &aspect, NULL)) != 0)
				return rc;
			else if (!(g->yfov > 0 && g->yfov * (180.0 / M_PI) < 180))
				problem = "yfov must be between 0 and pi";
			else if (!(g->znear > 0))
				problem = "znear must be positive";
			else if (has_far && !(g->zfar > g->znear))
				problem = "zfar must exceed znear";
			g->fov_deg = g->yfov * (180.0 / M_PI);
			g->infinite = !has_far;
			if (!has_far)
				g->zfar = fmax(1000, 1000 * g->znear);
		} else {
			const cJSON *o = cJSON_GetObjectItemCaseSensitive(cam, "orthographic");
			double mag = 0, zn = 0, zf = 0; /* set when read; gcc -O3 cannot tell */

			if (!cJSON_IsObject(o))
				problem = "orthographic is missing or not an object";
			else if ((rc = camera_number(c, o, "xmag", k, true, &mag, NULL)) != 0 ||
				 (rc = camera_number(c, o, "ymag", k, true, &mag, NULL)) != 0 ||
				 (rc = camera_number(c, o, "znear", k, true, &zn, NULL)) != 0 ||
				 (rc = camera_number(c, o, "zfar", k, true, &zf, NULL)) != 0)
				return rc;
			else if (!(zn >= 0 && zf > zn))
				problem = "orthographic needs 0 <= znear < zfar";
		}
		if (problem)
			return camera_fail(c, RIGD_E_BAD_GLTF, k, "%s", problem);
	}
	return 0;
}

static int read_skins(gltf_import_ctx *c)
{
	gltf_report *r = c->rep;
	char why[96];

	if (c->n_skins == 0)
		return 0;
	if (!(r->skins = gltf_alloc_array(c->n_skins, sizeof(gltf_skin_info))))
		return gltf_nomem(c);
	r->n_skins = c->n_skins;
	for (int k = 0; k < c->n_skins; k++) {
		const cJSON *skin = c->skin_json[k];
		const cJSON *joints = cJSON_GetObjectItemCaseSensitive(skin, "joints");
		const cJSON *v;
		gltf_skin_info *s = &r->skins[k];
		int j = 0;

		s->skeleton = -1;
		if ((v = cJSON_GetObjectItemCaseSensitive(skin, "name"))) {
			if (!cJSON_IsString(v))
				return gltf_fail(c, RIGD_E_BAD_GLTF, "skins",
						 "skin %d: name is not a string", k);
			if (!(s->name = strdup(v->valuestring)))
				return gltf_nomem(c);
		}
		if ((v = cJSON_GetObjectItemCaseSensitive(skin, "skeleton")) &&
		    (s->skeleton = gltf_as_index(v, c->n_nodes)) < 0) {
			gltf_index_problem(v, c->n_nodes, "nodes", why, sizeof(why));
			return gltf_fail(c, RIGD_E_BAD_GLTF, "skins", "skin %d: skeleton %s", k, why);
		}
		if (!cJSON_IsArray(joints) || !joints->child)
			return gltf_fail(c, RIGD_E_BAD_GLTF, "skins",
					 "skin %d: joints is not a non-empty array of node indices", k);
		if (!(s->joints = gltf_alloc_array(cJSON_GetArraySize(joints), sizeof(int))))
			return gltf_nomem(c);
		for (const cJSON *e = joints->child; e; e = e->next, j++) {
			if ((s->joints[j] = gltf_as_index(e, c->n_nodes)) < 0) {
				gltf_index_problem(e, c->n_nodes, "nodes", why, sizeof(why));
				return gltf_fail(c, RIGD_E_BAD_GLTF, "skins",
						 "skin %d: joints[%d] %s", k, j, why);
			}
			s->n_joints = j + 1;
		}
	}
	return 0;
}

/* A scene's "nodes": indices in range, each once, each without a parent.
 * With 'roots' non-NULL they are also written there. */
static int read_scene_roots(gltf_import_ctx *c, int k, int *roots, int *n_roots)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->scene_json[k], "nodes");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->scene_json[k], "name");
	char why[96];
	int j = 0;

	if (name && !cJSON_IsString(name))
		return gltf_fail(c, RIGD_E_BAD_GLTF, "scenes", "scene %d: name is not a string", k);
	if (!a) {
		*n_roots = 0;
		return 0;
	}
	if (!cJSON_IsArray(a))
		return gltf_fail(c, RIGD_E_BAD_GLTF, "scenes", "scene %d: nodes is not an array", k);
	for (const cJSON *e = a->child; e; e = e->next, j++) {
		int i = gltf_as_index(e, c->n_nodes);

		if (i < 0) {
			gltf_index_problem(e, c->n_nodes, "nodes", why, sizeof(why));
			return gltf_fail(c, RIGD_E_BAD_GLTF, "scenes",
					 "scene %d: nodes[%d] %s", k, j, why);
		}
		if (c->nodes[i].parent >= 0)
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "scenes",
					      "listed as a root of scene %d but is a child of node %d", k,
					      c->nodes[i].parent);
		/* 'visited' is free again after link_parents: reuse it to find
		 * a root listed twice, then clear it. */
		if (c->nodes[i].visited) {
			for (const cJSON *f = a->child; f != e; f = f->next)
				c->nodes[gltf_as_index(f, c->n_nodes)].visited = false;
			return gltf_fail_node(c, RIGD_E_BAD_GLTF, i, "scenes",
					      "listed twice as a root of scene %d", k);
		}
		c->nodes[i].visited = true;
		if (roots)
			roots[j] = i;
	}
	for (const cJSON *e = a->child; e; e = e->next) {
		assert(gltf_as_index(e, c->n_nodes) >= 0); /* checked in the loop above */
		c->nodes[gltf_as_index(e, c->n_nodes)].visited = false;
	}
	*n_roots = j;
	return 0;
}

/* Picks the scene to import and lists its roots. */
static int choose_scene(gltf_import_ctx *c)
{
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(c->root, "scene");
	int chosen = -1, n;
	char why[96];

	for (int i = 0; i < c->n_nodes; i++)
		c->nodes[i].visited = false;
	for (int k = 0; k < c->n_scenes; k++) {
		int rc = read_scene_roots(c, k, NULL, &n);

		if (rc)
			return rc;
	}
	if (def && (chosen = gltf_as_index(def, c->n_scenes)) < 0) {
		gltf_index_problem(def, c->n_scenes, "scenes", why, sizeof(why));
		return gltf_fail(c, RIGD_E_BAD_GLTF, "scene", "scene %s", why);
	}
	if (c->o.scene_index >= 0) {
		if (c->o.scene_index >= c->n_scenes)
			return gltf_fail(c, RIGD_E_NOT_FOUND, "scene", "no scene %d: the file has %d",
					 c->o.scene_index, c->n_scenes);
		chosen = c->o.scene_index;
	} else if (c->o.scene_name) {
		char q[LABEL_NAME_MAX + 4];

		chosen = -1;
		for (int k = 0; k < c->n_scenes && chosen < 0; k++) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->scene_json[k], "name");

			if (cJSON_IsString(name) && strcmp(name->valuestring, c->o.scene_name) == 0)
				chosen = k;
		}
		if (chosen < 0)
			return gltf_fail(c, RIGD_E_NOT_FOUND, "scene", "no scene named '%s'",
					 gltf_quoted(c->o.scene_name, q));
	} else if (chosen < 0 && c->n_scenes > 0) {
		chosen = 0;
	}
	if (c->n_nodes && !(c->roots = gltf_alloc_array(c->n_nodes, sizeof(int))))
		return gltf_nomem(c);
	c->rep->scene_index = chosen;
	if (chosen < 0) {
		/* No scenes at all: every node without a parent is a root. */
		c->n_roots = 0;
		for (int i = 0; i < c->n_nodes; i++)
			if (c->nodes[i].parent < 0)
				c->roots[c->n_roots++] = i;
		return 0;
	}
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(c->scene_json[chosen], "name");

		if (cJSON_IsString(name) && !(c->rep->scene_name = strdup(name->valuestring)))
			return gltf_nomem(c);
	}
	return read_scene_roots(c, chosen, c->roots, &c->n_roots);
}

/* Reads "MAJOR.MINOR" (digits only, as glTF 2.0 section 3.2 writes it). */
static bool parse_version(const char *v, long *major, long *minor)
{
	char *end;

	if (!(v[0] >= '0' && v[0] <= '9'))
		return false;
	*major = strtol(v, &end, 10);
	if (*end != '.' || !(end[1] >= '0' && end[1] <= '9'))
		return false;
	*minor = strtol(end + 1, &end, 10);
	return *end == '\0';
}

static int check_asset(gltf_import_ctx *c)
{
	const cJSON *asset = cJSON_GetObjectItemCaseSensitive(c->root, "asset");
	const cJSON *v, *req;
	char q[LABEL_NAME_MAX + 4];
	long major, minor;

	if (!cJSON_IsObject(asset))
		return gltf_fail(c, RIGD_E_BAD_GLTF, "asset", "asset is missing or not an object");
	v = cJSON_GetObjectItemCaseSensitive(asset, "version");
	if (!cJSON_IsString(v))
		return gltf_fail(c, RIGD_E_BAD_GLTF, "asset", "asset.version is missing or not a string");
	if (!parse_version(v->valuestring, &major, &minor) || major != 2)
		return gltf_fail(c, RIGD_E_BAD_GLTF, "asset",
				 "asset.version is '%s': only glTF 2.x is read",
				 gltf_quoted(v->valuestring, q));
	if ((v = cJSON_GetObjectItemCaseSensitive(asset, "minVersion")) &&
	    (!cJSON_IsString(v) || !parse_version(v->valuestring, &major, &minor) || major != 2 ||
	     minor > 0))
		return gltf_fail(c, RIGD_E_BAD_GLTF, "asset",
				 "asset.minVersion is not 2.0: the file needs a newer reader");
	if ((req = cJSON_GetObjectItemCaseSensitive(c->root, "extensionsRequired"))) {
		if (!cJSON_IsArray(req))
			return gltf_fail(c, RIGD_E_BAD_GLTF, "extensionsRequired",
					 "extensionsRequired is not an array");
		/* No extension changes how node transforms compose, and rigd
		 * reads nothing but nodes: say what was ignored. */
		for (const cJSON *e = req->child; e; e = e->next)
			if (cJSON_IsString(e))
				gltf_warn(c,
					  "extension %s is required by the file; rigd reads only the node "
					  "hierarchy and ignores it", gltf_quoted(e->valuestring, q));
	}
	return 0;
}

/* The top-level arrays, and the node count within the limit. */
static int read_tables(gltf_import_ctx *c)
{
	int rc;

	if ((rc = top_array(c, "nodes", &c->node_json, &c->n_nodes)) != 0)
		return rc;
	if (c->n_nodes > c->o.max_nodes)
		return gltf_fail(c, RIGD_E_LIMIT, "nodes", "the file has %d nodes; the limit is %d",
				 c->n_nodes, c->o.max_nodes);
	if ((rc = top_array(c, "meshes", &c->mesh_json, &c->n_meshes)) != 0 ||
	    (rc = top_array(c, "cameras", &c->camera_json, &c->n_cameras)) != 0 ||
	    (rc = top_array(c, "skins", &c->skin_json, &c->n_skins)) != 0 ||
	    (rc = top_array(c, "scenes", &c->scene_json, &c->n_scenes)) != 0)
		return rc;
	return 0;
}

/* Room for every node and every child index the file lists. */
static int alloc_nodes(gltf_import_ctx *c)
{
	int total_kids = 0;

	for (int i = 0; i < c->n_nodes; i++) {
		const cJSON *kids = cJSON_GetObjectItemCaseSensitive(c->node_json[i], "children");

		if (cJSON_IsArray(kids)) {
			int n = cJSON_GetArraySize(kids);

			if (n > INT_MAX - total_kids)
				return gltf_fail(c, RIGD_E_LIMIT, "nodes", "too many children in all");
			total_kids += n;
		}
	}
	if ((c->n_nodes && !(c->nodes = gltf_alloc_array(c->n_nodes, sizeof(gltf_src_node)))) ||
	    (total_kids && !(c->kids = gltf_alloc_array(total_kids, sizeof(int)))))
		return gltf_nomem(c);
	c->kids_cap = total_kids;
	return 0;
}

/* The whole document, in the order its checks report (gltf_internal.h). */
int gltf_read_document(gltf_import_ctx *c, const char *data, size_t len)
{
	int rc;

	assert(data && len > 0);
	if (len >= 4 && le_get32((const unsigned char *)data) == GLB_MAGIC) {
		if ((rc = unwrap_glb(c, (const unsigned char *)data, len, &data, &len)) != 0)
			return rc;
	}
	if ((rc = parse_json(c, data, len)) != 0 || (rc = check_asset(c)) != 0 ||
	    (rc = read_tables(c)) != 0 || (rc = alloc_nodes(c)) != 0)
		return rc;
	for (int i = 0; i < c->n_nodes; i++)
		if ((rc = gltf_read_node(c, i)) != 0)
			return rc;
	if ((rc = gltf_link_parents(c)) != 0 || (rc = read_meshes(c)) != 0 ||
	    (rc = read_cameras(c)) != 0 || (rc = read_skins(c)) != 0)
		return rc;
	return choose_scene(c);
}
