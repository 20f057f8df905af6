/*
 * log.c: the server's log lines (see log.h). Writes to stderr only; never
 * allocates.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int serve_log_level = LOG_WARN;

void serve_log(int level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	va_list ap;

	if (level > serve_log_level)
		return;
	fprintf(stderr, "rigd: %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
