/*
 * skel_worlds.c: imports a DragonBones body file as the route would (the
 * asset's element ids stored first, the skeleton given to the scene as
 * the engine gives it, then the batch applied to an empty 2D scene), brings the world matrices up to date and prints, as JSON on
 * stdout, {"BONE NAME": [w0, ..., w11], ...}: each bone node's world
 * matrix as the 12 doubles of a mat34 by rows (so the DragonBones matrix
 * is a = w0, b = w4, c = w1, d = w5, tx = w3, ty = w7), for
 * dragonbones_oracle.test.mjs to compare with the runtime's.
 *
 *   skel_worlds dragonbones BODY.json
 *   skel_worlds dragonbones BODY.json report
 *       the import's report instead: {"file", "ids": [...], "kept": [...],
 *       "not_applied": [...], "bones", "slots", "skins", "clips"}
 *   skel_worlds dragonbones BODY.json set BONE_ID X Y [set BONE_ID X Y ...]
 *       the worlds after each set of a bone's t, one batch and one pass
 *       each, after the import (the IK constraints follow their targets)
 *
 * Exit status 0, or 1 with the refusal (code, field, message) on stderr.
 */
#include "codec/dragonbones.h"
#include "codec/skel_clips_read.h"
#include "core/asset.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"
#include "core/skel_clips.h"

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

/* The bones' worlds as a JSON object (names as the file has them). */
static int print_worlds(const dragonbones_import *in, const scene *s)
{
	cJSON *root = cJSON_CreateObject();
	char *text;

	for (int i = 0; root && i < in->n_bones; i++) {
		const double *w = scene_world_rows(s, scene_find(s, in->bones[i].id));
		cJSON *arr = w ? cJSON_CreateDoubleArray(w, 12) : NULL;
		if (!arr || !cJSON_AddItemToObject(root, in->bones[i].name, arr)) {
			cJSON_Delete(arr);
			cJSON_Delete(root);
			return 1;
		}
	}
	if (!root || !(text = cJSON_PrintUnformatted(root))) {
		cJSON_Delete(root);
		return 1;
	}
	puts(text);
	free(text);
	cJSON_Delete(root);
	return 0;
}

/* Adds the '\n'-ended lines of 'text' to 'obj' as the array 'key'. */
static bool add_lines(cJSON *obj, const char *key, const char *text)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, key);

	for (const char *p = text, *nl; arr && p && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		cJSON *line = cJSON_CreateString("");
		char *copy = line ? strndup(p, (size_t)(nl - p)) : NULL;
		if (!copy || !cJSON_AddItemToArray(arr, line)) {
			cJSON_Delete(line);
			free(copy);
			return false;
		}
		cJSON_SetValuestring(line, copy);
		free(copy);
	}
	return arr != NULL;
}

static int print_report(const skel_import_report *rep)
{
	cJSON *root = cJSON_CreateObject();
	char *text = NULL;
	bool ok = root && cJSON_AddStringToObject(root, "file", rep->file) &&
		  add_lines(root, "ids", rep->ids) && add_lines(root, "kept", rep->kept) &&
		  add_lines(root, "not_applied", rep->not_applied) &&
		  cJSON_AddNumberToObject(root, "bones", rep->bones) &&
		  cJSON_AddNumberToObject(root, "slots", rep->slots) &&
		  cJSON_AddNumberToObject(root, "skins", rep->skins) &&
		  cJSON_AddNumberToObject(root, "clips", rep->clips) &&
		  (text = cJSON_PrintUnformatted(root)) != NULL;

	if (ok)
		puts(text);
	free(text);
	cJSON_Delete(root);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	dragonbones_import in;
	skel_import_report rep;
	edit_batch batch;
	edit_error err;
	scene *s = NULL;
	size_t len = 0;
	char *body;
	int rc;

	bool report = argc == 4 && !strcmp(argv[3], "report");
	int moves = 3; /* argv index of the first "set" */

	if (argc < 3 || strcmp(argv[1], "dragonbones") || (argc > 3 && !report && (argc - 3) % 4) ||
	    (argc > 3 && !report && strcmp(argv[3], "set"))) {
		fprintf(stderr, "usage: skel_worlds dragonbones BODY.json [report | set BONE X Y ...]\n");
		return 2;
	}
	if (!(body = read_file(argv[2], &len))) {
		fprintf(stderr, "skel_worlds: cannot read %s\n", argv[2]);
		return 1;
	}
	edit_batch_init(&batch);
	memset(&rep, 0, sizeof(rep));
	rc = dragonbones_import_decode(body, len, len + 1, &in, &err);
	free(body);
	if (rc)
		goto out;
	if (!(s = scene_new()) || scene_set_dims(s, 2)) {
		rc = RIGD_E_NOMEM;
		edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	if ((rc = dragonbones_import_batch(&in, s, &batch, &rep, &err)) != 0)
		goto out;
	if (rep.ids && (rc = asset_set_add(scene_assets(s), rep.file, rep.ids, rep.ids_len)) != 0) {
		edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
		goto out;
	}
	/* The skeleton itself, as the engine gives it to the scene with the
	 * asset: its IK constraints are solved by the pass. */
	{
		skel_clips *k = NULL;

		if ((rc = skel_clips_read(ASSET_DRAGONBONES, rep.file, in.skeleton, in.skeleton_len,
					  &k, &err)) != 0)
			goto out;
		if ((rc = scene_skel_add(s, k)) != 0) {
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
			goto out;
		}
	}
	if ((rc = edit_apply(s, &batch, NULL, NULL, &err)) != 0)
		goto out;
	scene_update(s, 1, NULL, NULL);
	/* Then each "set BONE X Y" as its own batch, a pass after each: the
	 * constraints follow their targets live. */
	for (int i = moves; !report && i + 3 < argc; i += 4) {
		edit_batch b;
		edit_op *op;
		char id[SCENE_ID_MAX + 1];

		edit_batch_init(&b);
		snprintf(id, sizeof(id), "%s", argv[i + 1]);
		if (!(op = edit_batch_add(&b, EDIT_SET, id))) {
			rc = RIGD_E_NOMEM;
			edit_error_set(&err, rc, -1, "", "%s", err_str(rc));
			goto out;
		}
		op->fields = EDIT_F_T;
		op->t = vec3_make(atof(argv[i + 2]), atof(argv[i + 3]), 0);
		rc = edit_apply(s, &b, NULL, NULL, &err);
		edit_batch_release(&b);
		if (rc)
			goto out;
		scene_update(s, (uint64_t)(i + 2), NULL, NULL);
	}
	rc = report ? print_report(&rep) : print_worlds(&in, s);
	if (rc)
		edit_error_set(&err, RIGD_E_NOMEM, -1, "", "%s", err_str(RIGD_E_NOMEM));
out:
	if (rc)
		fprintf(stderr, "skel_worlds: %s (field '%s'): %s\n", err_code(rc), err.field, err.message);
	edit_batch_release(&batch);
	skel_import_report_release(&rep);
	dragonbones_import_release(&in);
	scene_free(s);
	return rc ? 1 : 0;
}
