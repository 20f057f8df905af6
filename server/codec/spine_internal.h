/*
 * spine_internal.h: what the parts of the Spine importer's decoder share:
 * spine.c (the body, the version, bones, slots), spine_skins.c (skins and
 * layer groups) and spine_kept.c (the sections read only to be reported:
 * constraints, events, animations). Private to the codec folder: it
 * includes cJSON.h.
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

/* spine_import_decode of a body already parsed into 'root' from the
 * 'len' bytes at 'json' (which give the stored file its posted bytes). */
int spine_import_decode_tree(const char *json, size_t len, const cJSON *root, spine_import *out,
			     edit_error *err);

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

/* The index of the slot named 'name' among the first 'n' slots, or -1. */
int spine_slot_find(const spine_import *in, int n, const char *name);

/* The "name" of element 'path' ('what': "bone", "slot", "skin"): a
 * string of 1..max_bytes bytes, into *name (a pointer into the tree); or
 * bad_skeleton (also when the element is not an object). */
int spine_read_name(spine_reader *r, const cJSON *obj, const char *path, const char *what,
		    size_t max_bytes, const char **name);

/* The layer groups found in the skins, one per (slot, attachment). */
typedef struct spine_groups {
	char (*g)[SCENE_LAYER_GROUP_MAX + 1];
	int n, cap;
	int slot_entries;  /* {slot: {...}} members over all skins, capped too */
} spine_groups;

/* The GROUP of (slot, attachment), skel_id_encode(slot) + "." +
 * skel_id_encode(attachment), into group[SCENE_LAYER_GROUP_MAX + 1]; or
 * bad_skeleton with 'field' when the attachment's name is empty or the
 * group would be too long. */
int spine_make_group(spine_reader *r, const char *slot, const char *att, char *group,
		     const char *field);

/* "skins" (absent, or an array of {name, attachments, ...}): every group
 * into 'l' (at most SPINE_IMPORT_MAX_GROUPS, then limit), the skins
 * counted, the default skin's attachments into *def (NULL when no skin is
 * named "default"). Needs the slots read. 0, bad_skeleton, limit or
 * nomem; 'l' is the caller's to free (l->g) either way. */
int spine_read_skins(spine_reader *r, const cJSON *sk, spine_groups *l, const cJSON **def);

/* The groups of 'l' sorted, each once, as '\n'-ended lines into
 * r->out->groups (n_groups, groups_len). 0 or nomem. */
int spine_join_groups(spine_reader *r, spine_groups *l);

/*
 * The sections of the skeleton read only to report them (spine_kept.c):
 * "ik", "transform", "path", "physics", "events", "animations". Each must
 * have its JSON type; every bone a constraint names must be a bone and
 * every slot a slot. Adds the kept and not-applied lines and counts the
 * clips. 0, bad_skeleton or nomem.
 */
int spine_read_kept(spine_reader *r, const cJSON *sk);

#endif
