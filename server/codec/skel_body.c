/*
 * skel_body.c: a skeleton file's format, its atlas's pages and the import
 * body rigctl posts (skel_body.h). Reads only the top level of the
 * skeleton; the server's importers judge the rest. Never re-prints the
 * skeleton: its bytes go into the body as read, so that the asset the
 * server stores is the file.
 */
#include "skel_body.h"

#include "atlas.h"
#include "base64.h"

#include "core/err.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int skel_body_format(const char *json, size_t len, char *why, size_t why_len)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, false);
	const cJSON *skel, *spine, *armature, *version;
	int format = SKEL_BODY_UNKNOWN;

	/* One value and white space only: the bytes go into the body as they
	 * are, where anything after the value would break it. */
	while (root && end < json + len && strchr(" \t\r\n", *end) && *end)
		end++;
	if (root && end != json + len) {
		cJSON_Delete(root);
		root = NULL;
	}
	if (!root) {
		if (why_len)
			snprintf(why, why_len, "not JSON (or more than one value)");
		return SKEL_BODY_UNKNOWN;
	}
	skel = cJSON_GetObjectItemCaseSensitive(root, "skeleton");
	spine = cJSON_IsObject(skel) ? cJSON_GetObjectItemCaseSensitive(skel, "spine") : NULL;
	armature = cJSON_GetObjectItemCaseSensitive(root, "armature");
	version = cJSON_GetObjectItemCaseSensitive(root, "version");
	if (!cJSON_IsObject(root)) {
		if (why_len)
			snprintf(why, why_len, "JSON but not an object");
	} else if (cJSON_IsString(spine)) {
		format = SKEL_BODY_SPINE;
	} else if (cJSON_IsArray(armature) && (cJSON_IsString(version) || cJSON_IsNumber(version))) {
		format = SKEL_BODY_DRAGONBONES;
	} else if (why_len) {
		snprintf(why, why_len,
			 "neither a Spine skeleton (a \"skeleton\" object with a \"spine\" version "
			 "string) nor a DragonBones one (an \"armature\" array and a \"version\")");
	}
	cJSON_Delete(root);
	return format;
}

const char *skel_body_route(int format)
{
	return format == SKEL_BODY_SPINE ? "spine"
	       : format == SKEL_BODY_DRAGONBONES ? "dragonbones"
						 : NULL;
}

void skel_body_names_free(char **names, int n)
{
	if (!names)
		return;
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int skel_body_pages(int format, const char *atlas_text, size_t len, char ***names, int *n_names,
		    edit_error *err)
{
	atlas a = {0};
	int rc;

	*names = NULL;
	*n_names = 0;
	rc = format == SKEL_BODY_SPINE
		     ? atlas_read_spine(atlas_text, len, NULL, NULL, 0, &a, err)
		     : atlas_read_dragonbones(atlas_text, len, NULL, NULL, 0, &a, err);
	if (rc)
		return rc;
	if (a.n_pages && !(*names = calloc((size_t)a.n_pages, sizeof(char *))))
		goto nomem;
	for (int i = 0; i < a.n_pages; i++) {
		if (!((*names)[i] = strdup(a.pages[i].name)))
			goto nomem;
		(*n_names)++;
	}
	atlas_release(&a);
	return 0;
nomem:
	skel_body_names_free(*names, *n_names);
	*names = NULL;
	*n_names = 0;
	atlas_release(&a);
	edit_error_set(err, RIGD_E_NOMEM, -1, "atlas", "out of memory");
	return RIGD_E_NOMEM;
}

/* A ",\"NAME\":" member start and a JSON string of 'value'. */
static int string_member(json_buf *b, const char *name, const char *value)
{
	return JSON_BUF_LIT(b, ",") || json_buf_string(b, name, 0) || JSON_BUF_LIT(b, ":") ||
	       json_buf_string(b, value, JSON_STR_REPAIR_UTF8);
}

int skel_body_build(json_buf *b, int format, const char *skel, size_t skel_len,
		    const char *atlas_text, size_t atlas_len, const skel_body_page *pages,
		    int n_pages, const char *file, const char *armature)
{
	int rc = JSON_BUF_LIT(b, "{\"skeleton\":") || json_buf_append(b, skel, skel_len);

	if (!rc && atlas_text && format == SKEL_BODY_SPINE) {
		char *text;

		/* json_buf_string takes a C string: a NUL inside would cut it. */
		if (memchr(atlas_text, '\0', atlas_len))
			return RIGD_E_BAD_FIELD;
		if (!(text = malloc(atlas_len + 1)))
			return RIGD_E_NOMEM;
		memcpy(text, atlas_text, atlas_len);
		text[atlas_len] = '\0';
		rc = JSON_BUF_LIT(b, ",\"atlas\":") ||
		     json_buf_string(b, text, JSON_STR_SHORT_ESCAPES | JSON_STR_REPAIR_UTF8);
		free(text);
	} else if (!rc && atlas_text) {
		rc = JSON_BUF_LIT(b, ",\"atlas\":") || json_buf_append(b, atlas_text, atlas_len);
	}
	for (int i = 0; !rc && i < n_pages; i++)
		rc = JSON_BUF_LIT(b, ",") || (i == 0 && JSON_BUF_LIT(b, "\"images\":{")) ||
		     json_buf_string(b, pages[i].file, JSON_STR_REPAIR_UTF8) ||
		     JSON_BUF_LIT(b, ":") || base64_encode_json(b, pages[i].bytes, pages[i].len);
	if (!rc && n_pages)
		rc = JSON_BUF_LIT(b, "}");
	if (!rc && file)
		rc = string_member(b, "file", file);
	if (!rc && armature && format == SKEL_BODY_DRAGONBONES)
		rc = string_member(b, "armature", armature);
	return rc || JSON_BUF_LIT(b, "}") ? RIGD_E_NOMEM : 0;
}
