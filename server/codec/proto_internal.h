/*
 * proto_internal.h: what the protocol's decoders share between
 * proto_decode.c (the text checks, the field readers, ops, batches and log
 * lines) and proto_msg.c (websocket messages). Private to the codec folder:
 * it includes cJSON.h, and no cJSON tree or type leaves this folder.
 *
 * Every reader below takes a proto_where: on failure it fills where->err
 * (code, op index, field) and returns the code; on success it returns 0
 * and leaves where->err alone. Nothing here keeps a pointer into a tree
 * after it returns, except where it says so.
 */
#ifndef RIGD_PROTO_INTERNAL_H
#define RIGD_PROTO_INTERNAL_H

#include "proto.h"

#include <cjson/cJSON.h>

/* The largest integer a double holds exactly; integers beyond are refused. */
#define EXACT_INT_MAX 9007199254740991.0

/* Where a field sits, for error messages: op index (-1: none) and the
 * error to fill (may be NULL). */
typedef struct proto_where {
	int op;
	edit_error *err;
} proto_where;

/*
 * Parses 'len' bytes of 'json' into *root, which the caller frees with
 * cJSON_Delete: 0, too_large, nomem or bad_json (then *root is NULL and
 * 'err' says which).
 */
int proto_parse(const char *json, size_t len, const proto_limits *lim, cJSON **root,
		edit_error *err);

/* 'key' fit to quote in a message, written to 'out' ('cap' bytes): printable
 * ASCII but the quote (others as '?'), cut with "..." to fit. Returns out. */
const char *proto_safe_key(const char *key, char *out, size_t cap);

/* Fills w->err with bad_field "FIELD: WHAT" and returns RIGD_E_BAD_FIELD. */
int proto_bad_field(const proto_where *w, const char *field, const char *what);

/*
 * Matches the members of 'obj' against 'names' (n entries): the member
 * named names[j] lands in found[j] (NULL when absent; pointers into obj).
 * Unknown and repeated names are bad_field; so is an object that is not one.
 */
int proto_members(const cJSON *obj, const char *obj_name, const char *const *names, int n,
		  const cJSON **found, const proto_where *w);

/* A finite number into *out: bad_field (not a number), not_finite or 0. */
int proto_get_number(const cJSON *item, const char *field, double *out, const proto_where *w);

/* The members layer, z and facing of an op (each NULL when absent) into
 * 'op', with their EDIT_F_ bits (proto_draw.c): layer a string of at most
 * 1024 bytes or null, z a number or {"right","left"} (both), facing
 * "right", "left" or null. bad_field, not_finite, nomem or 0; on error
 * 'op' may hold the layer (released with its batch). */
int proto_decode_draw(const cJSON *layer, const cJSON *z, const cJSON *facing, edit_op *op,
		      const proto_where *w);

/* The members shear and inherit of an op (each NULL when absent) into
 * 'op', with their EDIT_F_ bits (proto_shape2d.c): shear an array of 2
 * finite numbers, inherit one of Spine's names ("normal",
 * "onlyTranslation", "noRotationOrReflection", "noScale",
 * "noScaleOrReflection") or an object of DragonBones' flags
 * (translation, rotation, scale, reflection: true or false, each
 * optional, true when absent; all true is "normal"). bad_field,
 * not_finite or 0. */
int proto_decode_shape2d(const cJSON *shear, const cJSON *inherit, edit_op *op,
			 const proto_where *w);

/* An exact integer in [min, max] into *out: bad_field, not_finite or 0. */
int proto_get_int(const cJSON *item, const char *field, double min, double max, int64_t *out,
		  const proto_where *w);

/* An id (scene_id_valid, at most max_len bytes) into 'out'; with
 * allow_null, null gives "". bad_field, bad_id or 0. */
int proto_get_id(const cJSON *item, const char *field, bool allow_null, int max_len,
		 char out[SCENE_ID_MAX + 1], const proto_where *w);

/* A scene name: an id that is not "." or ".." (those name directories in
 * the URL paths that carry scene names). bad_field, bad_id or 0. */
int proto_get_scene_name(const cJSON *item, const char *field, char out[SCENE_ID_MAX + 1],
			 const proto_where *w);

/* A string of at most max_bytes (or null when allow_null: *out NULL),
 * copied into a malloc'd *out the caller frees. bad_field, nomem or 0;
 * *out is NULL on error. */
int proto_get_text(const cJSON *item, const char *field, size_t max_bytes, bool allow_null,
		   char **out, const proto_where *w);

/* The ops array 'arr' into 'b', which holds no ops yet. On error 'b' may
 * hold the ops decoded so far: the caller releases it. */
int proto_decode_op_array(const cJSON *arr, const proto_limits *lim, edit_batch *b,
			  edit_error *err);

/* Decodes op object 'item' (index k) of pose op 'kind' (pose_save,
 * pose_set, pose_delete, blend; proto_pose.c) and appends it to 'b'. On
 * error 'b' may hold the op, partly filled: the caller releases it. */
int proto_decode_pose_op(const cJSON *item, int k, int kind, const proto_limits *lim,
			 edit_batch *b, edit_error *err);

/* Decodes clip op object 'item' (index k; proto_clip.c) and appends it to
 * 'b': "clip" (a string, required), "time" (a finite number, required),
 * "file" (a string), "root" (a node id), "weight" (a number). bad_field,
 * not_finite, bad_id, nomem or 0; on error 'b' may hold the op (the
 * caller releases it). */
int proto_decode_clip_op(const cJSON *item, int k, const proto_limits *lim, edit_batch *b,
			 edit_error *err);

/* client_seq (an integer 0..2^53-1, or null for none) into 'b'. */
int proto_decode_client_seq(const cJSON *item, edit_batch *b, const proto_where *w);

/* The members of a view message (proto_view.c): 'clear', or 'vp' or
 * 'planes' with 'viewport' and 'min_px' (each NULL when absent), into
 * m->view or m->view_clear; 'always' (decoded by the caller) only to
 * refuse it beside 'clear'. bad_field or not_finite naming the member. */
int proto_decode_view(const cJSON *vp, const cJSON *planes, const cJSON *viewport,
		      const cJSON *min_px, const cJSON *clear, const cJSON *always, proto_msg *m,
		      const proto_where *w);

/* The log line of 'batch' without assets (proto_encode_log_line_kind
 * with n 0). 0 or RIGD_E_NOMEM (b as before). */
int proto_encode_log_line_head(proto_buf *b, uint64_t seq, int64_t time_us,
			       const edit_batch *batch, int kind, int64_t target);

#endif
