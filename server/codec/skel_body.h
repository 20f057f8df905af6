/*
 * skel_body.h: what rigctl needs of a skeleton file before it posts it
 * (POST /api/scenes/SCENE/spine or /dragonbones, spine.h and
 * dragonbones.h describe the bodies): which format the file is, which
 * page images its atlas names, and the body itself, with the skeleton
 * file's bytes inserted exactly as read and the pages in base64.
 *
 * It judges only the shape of the files (the server checks the rest); it
 * never reads a file, touches the network or a scene. cJSON, which reads
 * the skeleton's top level here, never leaves this folder.
 */
#ifndef RIGD_SKEL_BODY_H
#define RIGD_SKEL_BODY_H

#include "json.h"

#include "core/edit.h"

#include <stddef.h>

enum skel_body_format {
	SKEL_BODY_UNKNOWN = 0,
	SKEL_BODY_SPINE,         /* a "skeleton" object with a "spine" version string */
	SKEL_BODY_DRAGONBONES,   /* an "armature" array and a "version" */
};

/*
 * The format of 'len' bytes of a skeleton file: SKEL_BODY_SPINE,
 * SKEL_BODY_DRAGONBONES, or SKEL_BODY_UNKNOWN with 'why' (why_len bytes,
 * may be 0) saying what the file is instead ("not JSON", "a JSON object
 * that is neither ..."), for a message that names the file.
 */
int skel_body_format(const char *json, size_t len, char *why, size_t why_len);

/* The route's path word of a format: "spine" or "dragonbones" (NULL for
 * SKEL_BODY_UNKNOWN). */
const char *skel_body_route(int format);

/*
 * The page file names of an atlas of 'format' ('len' bytes: a Spine .atlas
 * or a DragonBones _tex.json), read with atlas_read_spine or
 * atlas_read_dragonbones without images. Returns 0 with *names a malloc'd
 * array of *n_names malloc'd strings (free with skel_body_names_free), or
 * the atlas reader's code (bad_atlas naming the line or SubTexture,
 * nomem) with 'err' filled, *names NULL and *n_names 0.
 */
int skel_body_pages(int format, const char *atlas, size_t len, char ***names, int *n_names,
		    edit_error *err);

/* Frees what skel_body_pages returned; accepts NULL. */
void skel_body_names_free(char **names, int n);

/* One page to send: its file name (as the atlas names it) and its bytes. */
typedef struct skel_body_page {
	const char *file;
	const unsigned char *bytes;
	size_t len;
} skel_body_page;

/*
 * Appends the body of 'format' to 'b': {"skeleton": the skel_len bytes of
 * 'skel' exactly, "atlas": the atlas (Spine: as a JSON string;
 * DragonBones: its bytes exactly, an object), "images": {FILE: base64},
 * "file", "armature"}; members whose argument is NULL (or n_pages 0) are
 * left out; 'armature' only for DragonBones. The caller has checked that
 * the skeleton (and a DragonBones atlas) is JSON (skel_body_format,
 * skel_body_pages). 0 or RIGD_E_NOMEM (b may hold part of it), or
 * RIGD_E_BAD_FIELD when the Spine atlas holds a NUL byte.
 */
int skel_body_build(json_buf *b, int format, const char *skel, size_t skel_len,
		    const char *atlas, size_t atlas_len, const skel_body_page *pages,
		    int n_pages, const char *file, const char *armature);

#endif
