/*
 * log.h: the server's log lines on stderr ("rigd: warn: ..."), filtered
 * by the level of --log-level. Never logs a token or a message body.
 */
#ifndef RIGD_SERVE_LOG_H
#define RIGD_SERVE_LOG_H

#include "config.h"

/* The highest level printed (enum log_level); set once at start. */
extern int serve_log_level;

/* Prints one line at 'level' when it is not above serve_log_level. */
void serve_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
