/*
 * dragonbones_internal.h: what the DragonBones importer's files share
 * (dragonbones.c decodes the body, dragonbones_armature.c the armature,
 * dragonbones_batch.c builds the batch). Not for other modules.
 */
#ifndef RIGD_DRAGONBONES_INTERNAL_H
#define RIGD_DRAGONBONES_INTERNAL_H

#include "dragonbones.h"
#include "proto_internal.h"

#include <cjson/cJSON.h>

#include <stddef.h>

/* A growing text (malloc'd, NUL-terminated once anything was added). */
/* dragonbones_import_decode of a body already parsed into 'root'. */
int dragonbones_import_decode_tree(const cJSON *root, dragonbones_import *out, edit_error *err);

typedef struct db_text {
	char *p;
	size_t len, cap;
} db_text;

/* Where the decoder is: the output, the error, the armature's path. */
typedef struct db_ctx {
	dragonbones_import *out;
	edit_error *err;
	char arm[48];                    /* "skeleton.armature[K]" */
	/* The default skin's displays per slot: how many, and the index of
	 * the first one's GROUP in def_groups. */
	int *def_count;
	int *def_first;
	char (*def_groups)[SCENE_LAYER_GROUP_MAX + 1];
	int n_def_groups, cap_def_groups;
	db_text ids;                     /* every GROUP, one per line, unsorted */
	db_text kept, not_applied;
	int n_kept, n_not_applied;
	int n_displays;
	int n_entries;                   /* skin slot entries over every skin */
} db_ctx;

/* Appends printf-style text: 0 or RIGD_E_NOMEM (text unchanged). */
int db_text_add(db_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fills 'err' (code, field, message) and returns 'code'. */
int db_fail(edit_error *err, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* db_fail with nomem. */
int db_nomem(edit_error *err);

/* A bad_skeleton at the field 'field_fmt' (printf-style JSON path) with
 * the message 'what'; returns RIGD_E_BAD_SKELETON. */
int db_bad(db_ctx *c, const char *what, const char *field_fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define BAD(c, what, ...) db_bad(c, what, __VA_ARGS__)

/* A name fit to quote in a message (proto_safe_key). */
static inline const char *q(const char *name, char *buf, size_t cap)
{
	return proto_safe_key(name, buf, cap);
}

/* The chosen armature's bones, slots, skins, constraints and animations
 * into c->out (dragonbones_armature.c). 0 or the first refusal. */
int db_decode_armature(db_ctx *c, const cJSON *arm);

#endif
