/*
 * skel_names.h: the node id of a skeleton bone or slot name (Spine,
 * DragonBones), a reversible sanitised form that both skeleton importers
 * share.
 *
 * A name is any byte string. Its id keeps the bytes [A-Za-z0-9-] as they
 * are and writes every other byte (including '_', '.', ':' and every byte
 * of a UTF-8 sequence) as '_' followed by the byte's value in two
 * lowercase hex digits: "arm_l" -> "arm_5fl", "hip.L" -> "hip_2eL",
 * "ü" (C3 BC) -> "_c3_bc". The id is thus made of [A-Za-z0-9_-] only,
 * which scene_id_valid accepts, and two names have the same id only if
 * they are the same bytes (every '_' in an id starts an escape). The empty
 * name has no id (a node id is at least one character).
 *
 * No allocation, no global state; never touches a scene.
 */
#ifndef RIGD_SKEL_NAMES_H
#define RIGD_SKEL_NAMES_H

#include <stddef.h>

/*
 * Writes the id of the 'len' bytes at 'name' into 'out' ('out_size' bytes,
 * NUL-terminated) and returns its length, or -1 when 'len' is 0 or the id
 * (plus its NUL) does not fit in 'out_size' bytes; 'out' is then "" when
 * out_size > 0. A caller that wants a node id passes SCENE_ID_MAX + 1.
 */
int skel_id_encode(const char *name, size_t len, char *out, size_t out_size);

/* The id's length for the 'len' bytes at 'name' (3 per escaped byte, 1 per
 * kept byte), whatever its size; 0 for the empty name. */
size_t skel_id_length(const char *name, size_t len);

/*
 * Writes the name an id encodes into 'out' ('out_size' bytes; a NUL follows
 * the bytes, which may themselves hold a NUL: the length is what counts)
 * and returns its length in bytes, or -1 when 'id' is not an encoded id
 * (empty, a byte other than [A-Za-z0-9_-], a '_' not followed by two
 * lowercase hex digits, or an escape of a byte that is kept as is, so that
 * every name has exactly one id) or the name does not fit.
 */
int skel_id_decode(const char *id, char *out, size_t out_size);

#endif
