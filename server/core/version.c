/*
 * version.c: the line --version prints (see version.h). The values come
 * from the file the build writes (version_gen.c).
 */
#include "version.h"

#include <stdio.h>

void version_print(FILE *f, const char *prog)
{
	if (rigd_commit[0])
		fprintf(f, "%s %s (git %s)\n", prog, rigd_version, rigd_commit);
	else
		fprintf(f, "%s %s\n", prog, rigd_version);
}
