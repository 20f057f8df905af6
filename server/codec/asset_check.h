/*
 * asset_check.h: an asset's bytes read again by its kind's reader, for
 * whoever stores bytes that rigd did not just make itself: log import, a
 * cluster's replica taking a batch from the log stream, and rigd check
 * reading the store. An import checks its uploads with the readers
 * themselves (svg_sanitize, png_check, the skeleton and atlas readers);
 * what they store is what this check accepts unchanged.
 */
#ifndef RIGD_ASSET_CHECK_H
#define RIGD_ASSET_CHECK_H

#include "core/edit.h"

#include <stddef.h>

/* What a layer "FILE#GROUP" may name in a checked asset: the ids, sorted
 * and unique, owned (asset_checked_release). */
typedef struct asset_checked {
	char **ids;
	int n_ids;
} asset_checked;

/*
 * Checks that 'len' bytes of asset 'file' of kind 'kind' (enum asset_kind)
 * are what rigd's reader of that kind keeps: an SVG is what the sanitiser
 * writes (sanitising it again changes nothing); a PNG is what png_check
 * writes (decoding and encoding it again gives the same bytes); a
 * skeleton or an atlas is one its reader accepts. With 'sha256' (64
 * lowercase hex digits, may be NULL) the bytes must also have that digest.
 * 0 with *out filled (the caller releases it), or the reader's code
 * (bad_svg, bad_image, bad_skeleton, bad_atlas), bad_field for a kind that
 * is none, nomem; 'err' names 'field' and says "asset 'FILE': ...". *out
 * is empty on error.
 */
int asset_check(int kind, const char *file, const void *bytes, size_t len, const char *sha256,
		const char *field, asset_checked *out, edit_error *err);

/* Frees what *c owns and empties it; accepts NULL. */
void asset_checked_release(asset_checked *c);

/* The ids of *c as asset_set_add and the store take them: one per line,
 * each ended by '\n', in a malloc'd string of *len bytes (NUL after), or
 * NULL when out of memory. */
char *asset_checked_lines(const asset_checked *c, size_t *len);

#endif
