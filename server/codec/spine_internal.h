/*
 * spine_internal.h: what the two halves of the Spine importer share:
 * spine.c (the body, the version, bones, slots, skins, the batch) and
 * spine_kept.c (the sections read only to be reported: constraints,
 * events, animations). Private to the codec folder: it includes cJSON.h.
 */
#ifndef RIGD_SPINE_INTERNAL_H
#define RIGD_SPINE_INTERNAL_H

#include "spine.h"

#include <cjson/cJSON.h>

#define SPINE_KEPT_LINES_MAX 200   /* kept lines listed one by one; then one "... and N more" */
#define SPINE_QUOTE_MAX 80         /* bytes of a name quoted in a message */

/* A growing list of '\n'-ended lines. */
typedef struct spine_lines {
	char *s;
	size_t len, cap;
	int n;          /* lines held */
	int dropped;    /* lines past SPINE_KEPT_LINES_MAX, counted only */
} spine_lines;

/* The state of one decode: the import being filled, the error to fill,
 * the report's lines. */
typedef struct spine_reader {
	spine_import *out;
	edit_error *err;
	spine_lines kept, not_applied;
} spine_reader;

/* Fills r->err with 'code', 'field' and the message, and returns 'code'. */
int spine_fail(spine_reader *r, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* nomem into r->err; returns RIGD_E_NOMEM. */
int spine_nomem(spine_reader *r);

/* Appends one line (printf-style, without its '\n'); past
 * SPINE_KEPT_LINES_MAX lines it only counts. 0 or nomem. */
int spine_lines_add(spine_reader *r, spine_lines *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 'name' fit to quote in a message (proto_safe_key). */
const char *spine_quote(const char *name, char out[SPINE_QUOTE_MAX]);

/* The index of the bone named 'name' among the first 'n' bones, or -1. */
int spine_bone_find(const spine_import *in, int n, const char *name);

/*
 * The sections of the skeleton read only to report them (spine_kept.c):
 * "ik", "transform", "path", "physics", "events", "animations". Each must
 * have its JSON type; every bone a constraint names must be a bone and
 * every slot a slot. Adds the kept and not-applied lines and counts the
 * clips. 0, bad_skeleton or nomem.
 */
int spine_read_kept(spine_reader *r, const cJSON *sk);

#endif
