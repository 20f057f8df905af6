/*
 * gltf_tool: the C side of tests/gltf/gltf.test.mjs. It runs rigd's glTF
 * import and export and prints what rigd computed, as JSON on stdout, for
 * the JavaScript test to compare with three.js and the Khronos validator.
 *
 *   gltf_tool import FILE [--nearest] [--scene N] [--scene-name NAME]
 *       imports FILE into a new scene through edit_apply, brings the world
 *       matrices up to date and prints
 *       {"ok":true,"report":{...gltf_report_json...},
 *        "nodes":[{"id":"arm","parent":"base","world":[16 numbers]},...]}
 *       (preorder), or {"ok":false,"code":"bad_gltf","bad_node":3,
 *       "message":"..."} with exit status 2 when the import is refused.
 *   gltf_tool import-each FILE...
 *       the same for every FILE in one process (each into a new scene),
 *       as a JSON array, exit status 0 (the malformed fixtures, cheaply
 *       under the sanitizers).
 *   gltf_tool export-demo OUT [--rich]
 *       builds the demo rig of demo_rig.h, writes its export to OUT and
 *       prints {"ok":true,"nodes":[...]} for the scene it exported.
 *   gltf_tool roundtrip FILE OUT
 *       imports FILE, writes the scene's export to OUT, prints the nodes.
 *
 * Numbers are printed with 17 significant digits, so they read back to the
 * same doubles.
 */
#include "demo_rig.h"
#include "codec/gltf.h"
#include "core/edit.h"
#include "core/err.h"
#include "core/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (data = malloc((size_t)n + 1)) && fread(data, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
	} else {
		free(data);
		data = NULL;
	}
	fclose(f);
	return data;
}

/* A JSON string literal for an id or message (ids are plain ASCII; messages
 * may quote anything, escaped here). */
static void print_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_nodes(scene *s)
{
	/* Only when something is dirty: scene_update on a clean scene hands
	 * qsort a NULL array (UBSan). */
	if (scene_has_dirty(s))
		scene_update(s, 1, NULL, NULL);
	printf("\"nodes\":[");
	for (int pos = 0; pos < scene_count(s); pos++) {
		int node = scene_at(s, pos), parent = scene_parent(s, node);
		mat4 w = scene_world(s, node);

		printf("%s{\"id\":", pos ? "," : "");
		print_str(scene_id(s, node));
		printf(",\"parent\":");
		if (parent >= 0)
			print_str(scene_id(s, parent));
		else
			printf("null");
		printf(",\"world\":[");
		for (int i = 0; i < 16; i++)
			printf("%s%.17g", i ? "," : "", w.m[i]);
		printf("]}");
	}
	printf("]");
}

/*
 * Imports 'path' into 's' and prints the start of its JSON object:
 * {"ok":true[,"report":{...}] or {"ok":false,"code":...,"message":...
 * without the closing brace. Returns 0, 2 when the import was refused, or
 * 1 (nothing printed) when the file cannot be read.
 */
static int import_file(const char *path, const gltf_import_opts *opts, scene *s, bool print_report)
{
	edit_batch batch;
	gltf_report report;
	edit_error err;
	char *data, *json = NULL;
	size_t len = 0;
	int rc;

	if (!(data = read_file(path, &len))) {
		fprintf(stderr, "gltf_tool: cannot read %s\n", path);
		return 1;
	}
	rc = gltf_import(data, len, opts, &batch, &report, &err);
	free(data);
	if (rc == 0)
		rc = edit_apply(s, &batch, NULL, NULL, &err);
	if (rc != 0) {
		printf("{\"ok\":false,\"code\":\"%s\",\"bad_node\":%d,\"message\":", err_code(rc),
		       report.bad_node);
		print_str(err.message);
		edit_batch_release(&batch);
		gltf_report_release(&report);
		return 2;
	}
	printf("{\"ok\":true");
	if (print_report) {
		if (gltf_report_json(&report, &json, NULL) != 0) {
			fprintf(stderr, "gltf_tool: out of memory\n");
			exit(1);
		}
		printf(",\"report\":%s", json);
		free(json);
	}
	edit_batch_release(&batch);
	gltf_report_release(&report);
	return 0;
}

/* Imports 'path' into 's' and prints its whole JSON object. */
static int import_and_print(const char *path, const gltf_import_opts *opts, scene *s)
{
	int rc = import_file(path, opts, s, true);

	if (rc == 1)
		return rc;
	if (rc == 0) {
		printf(",");
		print_nodes(s);
	}
	printf("}");
	return rc;
}

static int write_export(const scene *s, const char *path)
{
	gltf_export_opts opts = { .scene_name = "exported", .generator = "rigd gltf_tool" };
	char *json = NULL;
	size_t len = 0;
	FILE *f;
	int rc = gltf_export(s, &opts, &json, &len);

	if (rc != 0) {
		fprintf(stderr, "gltf_tool: export failed: %s\n", err_str(rc));
		return 1;
	}
	if (!(f = fopen(path, "wb")) || fwrite(json, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "gltf_tool: cannot write %s\n", path);
		free(json);
		return 1;
	}
	free(json);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: gltf_tool import FILE [--nearest] [--scene N] [--scene-name NAME]\n"
			"       gltf_tool import-each FILE...\n"
			"       gltf_tool export-demo OUT [--rich]\n"
			"       gltf_tool roundtrip FILE OUT\n");
	return 1;
}

int main(int argc, char **argv)
{
	scene *s = scene_new();
	int rc = 0;

	if (!s)
		return 1;
	if (argc >= 3 && strcmp(argv[1], "import") == 0) {
		gltf_import_opts opts = gltf_import_opts_default();
		bool bad_args = false;

		for (int i = 3; i < argc && !bad_args; i++) {
			if (strcmp(argv[i], "--nearest") == 0)
				opts.nearest_trs = true;
			else if (strcmp(argv[i], "--scene") == 0 && i + 1 < argc)
				opts.scene_index = atoi(argv[++i]);
			else if (strcmp(argv[i], "--scene-name") == 0 && i + 1 < argc)
				opts.scene_name = argv[++i];
			else
				bad_args = true;
		}
		if (bad_args) {
			rc = usage();
		} else {
			rc = import_and_print(argv[2], &opts, s);
			printf("\n");
		}
	} else if (argc >= 3 && strcmp(argv[1], "import-each") == 0) {
		gltf_import_opts opts = gltf_import_opts_default();

		printf("[");
		for (int i = 2; i < argc; i++) {
			scene *each = scene_new();

			if (i > 2)
				printf(",\n");
			if (!each || import_and_print(argv[i], &opts, each) == 1)
				rc = 1;
			scene_free(each);
			if (rc)
				break;
		}
		printf("]\n");
	} else if (argc >= 3 && strcmp(argv[1], "export-demo") == 0) {
		bool rich = argc >= 4 && strcmp(argv[3], "--rich") == 0;

		if (demo_rig_build(s, rich) != 0 || write_export(s, argv[2]) != 0) {
			rc = 1;
		} else {
			printf("{\"ok\":true,");
			print_nodes(s);
			printf("}\n");
		}
	} else if (argc == 4 && strcmp(argv[1], "roundtrip") == 0) {
		gltf_import_opts opts = gltf_import_opts_default();

		/* Export before printing the nodes, so that a failure shows. */
		if ((rc = import_file(argv[2], &opts, s, false)) == 0 &&
		    (rc = write_export(s, argv[3])) == 0) {
			printf(",");
			print_nodes(s);
		}
		if (rc != 1)
			printf("}\n");
	} else {
		rc = usage();
	}
	scene_free(s);
	return rc;
}
