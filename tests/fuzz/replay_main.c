/*
 * replay_main.c: a main() for the fuzz targets without libFuzzer, so that
 * the ordinary builds (gcc, release and ASan+UBSan) replay the committed
 * corpus and the regression inputs on every `ctest` run.
 *
 *   fuzz_NAME_replay PATH...
 * Each PATH is a file or a directory (its regular files, in name order,
 * not recursively); each file is passed to LLVMFuzzerTestOneInput in a
 * buffer of exactly its size, as libFuzzer does. A broken invariant
 * aborts (the file being run is printed first); otherwise it prints how
 * many inputs ran and exits 0.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	/* malloc(0) may return NULL: allocate at least one byte, pass n. */
	data = malloc((size_t)n ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(data, (size_t)n);
	free(data);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, long *count)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: cannot open %s\n", dir);
		return -1;
	}
	while ((ent = readdir(d)) != NULL) {
		char path[4096];
		struct stat st;

		if (ent->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			char **grown = realloc(names, sizeof(*names) * (cap = cap ? 2 * cap : 64));

			if (!grown) {
				rc = -1;
				break;
			}
			names = grown;
		}
		if (!(names[n] = strdup(path))) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && run_file(names[i]) == 0)
			(*count)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	long count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count) != 0)
				return 1;
		} else {
			if (run_file(argv[i]) != 0)
				return 1;
			count++;
		}
	}
	printf("replay: %ld inputs, no finding\n", count);
	return 0;
}
