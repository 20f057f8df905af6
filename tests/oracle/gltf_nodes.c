/*
 * gltf_nodes.c: the node hierarchy of a glTF 2.0 file (see gltf_nodes.h).
 *
 * The cJSON tree lives only inside gltf_nodes_load. The scene's roots are
 * walked depth first with an explicit stack, so a deep hierarchy never
 * depends on the C stack; reaching a node twice means it has two parents
 * or sits in a cycle, and the file is refused.
 */
#include "gltf_nodes.h"

#include "core/err.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GLTF_MAX_BYTES (64L << 20)

static void say(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || why_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* The whole file, NUL-terminated, or NULL (and *len untouched). */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size > GLTF_MAX_BYTES ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	buf = malloc((size_t)size + 1);
	if (!buf)
		goto out;
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[size] = '\0';
	*len = (size_t)size;
out:
	fclose(f);
	return buf;
}

/* Reads a JSON array of exactly 'n' finite numbers into out[]. Returns
 * false if 'item' is not such an array. */
static bool numbers(const cJSON *item, double *out, int n)
{
	const cJSON *e;
	int i = 0;

	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != n)
		return false;
	cJSON_ArrayForEach(e, item) {
		if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
			return false;
		out[i++] = e->valuedouble;
	}
	return true;
}

/* An index into an array of 'count' items: a JSON integer in [0, count). */
static bool index_ok(const cJSON *item, int count)
{
	return cJSON_IsNumber(item) && item->valuedouble >= 0 && item->valuedouble < count &&
	       item->valuedouble == (double)item->valueint;
}

/* Fills the channels of 'g' from glTF node object 'jn' (number 'index'). */
static int read_channels(const cJSON *jn, int index, gltf_node *g, char *why, size_t why_len)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(jn, "matrix");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(jn, "translation");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(jn, "rotation");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(jn, "scale");
	double v[16];

	g->index = index;
	g->has_matrix = m != NULL;
	g->matrix = mat4_identity();
	g->t = vec3_make(0, 0, 0);
	g->r = quat_identity();
	g->s = vec3_make(1, 1, 1);
	if (m) {
		if (t || r || s) {
			say(why, why_len, "node %d: matrix together with translation, rotation or scale",
			    index);
			return RIGD_E_BAD_GLTF;
		}
		if (!numbers(m, g->matrix.m, 16)) {
			say(why, why_len, "node %d: matrix needs 16 finite numbers", index);
			return RIGD_E_BAD_GLTF;
		}
		return 0;
	}
	if (t) {
		if (!numbers(t, v, 3)) {
			say(why, why_len, "node %d: translation needs 3 finite numbers", index);
			return RIGD_E_BAD_GLTF;
		}
		g->t = vec3_make(v[0], v[1], v[2]);
	}
	if (r) {
		if (!numbers(r, v, 4)) {
			say(why, why_len, "node %d: rotation needs 4 finite numbers", index);
			return RIGD_E_BAD_GLTF;
		}
		g->r = (quat){ v[0], v[1], v[2], v[3] };
	}
	if (s) {
		if (!numbers(s, v, 3)) {
			say(why, why_len, "node %d: scale needs 3 finite numbers", index);
			return RIGD_E_BAD_GLTF;
		}
		g->s = vec3_make(v[0], v[1], v[2]);
	}
	return 0;
}

void gltf_nodes_free(gltf_nodes *g)
{
	free(g->nodes);
	g->nodes = NULL;
	g->n = 0;
}

int gltf_nodes_load(const char *path, gltf_nodes *out, char *why, size_t why_len)
{
	size_t len = 0;
	char *text = read_file(path, &len);
	cJSON *doc = NULL;
	const cJSON *jnodes, *jscenes, *jscene, *roots, *e;
	const cJSON **node_obj = NULL;
	int *stack = NULL, *parent_pos = NULL;
	bool *seen = NULL;
	int nfile, height = 0, scene_index = 0, err = RIGD_E_BAD_GLTF;

	memset(out, 0, sizeof(*out));
	if (!text) {
		say(why, why_len, "cannot read '%s'", path);
		return RIGD_E_IO;
	}
	doc = cJSON_ParseWithLength(text, len);
	if (!doc) {
		say(why, why_len, "'%s' is not valid JSON", path);
		goto out;
	}
	jnodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
	jscenes = cJSON_GetObjectItemCaseSensitive(doc, "scenes");
	jscene = cJSON_GetObjectItemCaseSensitive(doc, "scene");
	if (!cJSON_IsArray(jnodes) || !cJSON_IsArray(jscenes) || cJSON_GetArraySize(jscenes) == 0) {
		say(why, why_len, "no nodes or no scenes");
		goto out;
	}
	nfile = cJSON_GetArraySize(jnodes);
	if (jscene) {
		if (!index_ok(jscene, cJSON_GetArraySize(jscenes))) {
			say(why, why_len, "scene index out of range");
			goto out;
		}
		scene_index = jscene->valueint;
	}
	roots = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(jscenes, scene_index), "nodes");
	if (roots && !cJSON_IsArray(roots)) {
		say(why, why_len, "scene %d: nodes is not an array", scene_index);
		goto out;
	}

	err = RIGD_E_NOMEM;
	node_obj = malloc(sizeof(*node_obj) * (size_t)(nfile + 1));
	seen = calloc((size_t)nfile + 1, sizeof(bool));
	/* The stack holds (node, parent position) pairs still to visit. */
	stack = malloc(sizeof(int) * (size_t)(nfile + 1));
	parent_pos = malloc(sizeof(int) * (size_t)(nfile + 1));
	out->nodes = malloc(sizeof(gltf_node) * (size_t)(nfile + 1));
	if (!node_obj || !seen || !stack || !parent_pos || !out->nodes)
		goto out;
	err = RIGD_E_BAD_GLTF;
	{
		int i = 0;

		cJSON_ArrayForEach(e, jnodes) {
			if (!cJSON_IsObject(e)) {
				say(why, why_len, "node %d is not an object", i);
				goto out;
			}
			node_obj[i++] = e;
		}
	}

	/* Push the roots in reverse so that they come off in scene order. A
	 * root listed twice is caught like any node reached twice. */
	for (int i = roots ? cJSON_GetArraySize(roots) - 1 : -1; i >= 0; i--) {
		const cJSON *r = cJSON_GetArrayItem(roots, i);

		if (!index_ok(r, nfile)) {
			say(why, why_len, "scene %d: root %d is not a node index", scene_index, i);
			goto out;
		}
		if (height == nfile) {
			say(why, why_len, "scene %d lists more roots than there are nodes", scene_index);
			goto out;
		}
		stack[height] = r->valueint;
		parent_pos[height++] = -1;
	}
	while (height > 0) {
		int k = stack[--height], parent = parent_pos[height], pos = out->n;
		const cJSON *children = cJSON_GetObjectItemCaseSensitive(node_obj[k], "children");
		gltf_node *g = &out->nodes[pos];

		if (seen[k]) {
			say(why, why_len, "node %d is reached twice (two parents or a cycle)", k);
			goto out;
		}
		seen[k] = true;
		if ((err = read_channels(node_obj[k], k, g, why, why_len)) != 0)
			goto out;
		err = RIGD_E_BAD_GLTF;
		g->parent = parent;
		out->n++;
		if (children && !cJSON_IsArray(children)) {
			say(why, why_len, "node %d: children is not an array", k);
			goto out;
		}
		for (int i = children ? cJSON_GetArraySize(children) - 1 : -1; i >= 0; i--) {
			const cJSON *c = cJSON_GetArrayItem(children, i);

			if (!index_ok(c, nfile)) {
				say(why, why_len, "node %d: child %d is not a node index", k, i);
				goto out;
			}
			if (seen[c->valueint] || height == nfile) {
				say(why, why_len, "node %d is reached twice (two parents or a cycle)",
				    c->valueint);
				goto out;
			}
			stack[height] = c->valueint;
			parent_pos[height++] = pos;
		}
	}
	err = 0;
out:
	if (err)
		gltf_nodes_free(out);
	free(node_obj);
	free(seen);
	free(stack);
	free(parent_pos);
	cJSON_Delete(doc);
	free(text);
	return err;
}
