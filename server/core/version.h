/*
 * version.h: rigd's version, for --version: the project's (CMake's
 * project(... VERSION ...)) and the git commit the build came from ("" when
 * it was not built from a checkout; "-dirty" after it when tracked files
 * differed from the commit). The two strings are defined in a file the
 * build writes (scripts/version.cmake, version_gen.c).
 */
#ifndef RIGD_CORE_VERSION_H
#define RIGD_CORE_VERSION_H

#include <stdio.h>

extern const char rigd_version[];
extern const char rigd_commit[];

/* Prints "PROG VERSION (git COMMIT)" and a newline on 'f' (without the
 * parenthesis when there is no commit). */
void version_print(FILE *f, const char *prog);

#endif
