/*
 * proto_bin.h: the protocol's binary frames. A subscriber that asks for
 * "format":"f32" or "f64" receives its snapshots and updates as one binary
 * websocket message each: a little-endian header, node indices, world
 * matrices as 12 floats of 4 or 8 bytes, and a JSON section holding what a
 * JSON update carries minus its matrices (docs/protocol.md, "Binary frames",
 * has the byte-level table).
 *
 * A node's index is its scene handle: stable while the node lives, reused
 * after it is deleted, the same for every subscriber of the scene, so one
 * encoded frame serves every client at the same cursor. A frame binds an
 * index to an id for every node record it carries (all of them in a
 * snapshot, the created and changed ones in an update); an index the
 * server reuses is always bound again in the frame that reuses it.
 *
 * The encoders append to a proto_buf (the bytes are not text: the buffer's
 * NUL is not part of the frame). The decoder turns a frame back into the
 * JSON message it stands for, for rigctl and tests; it checks every length
 * against the bytes it has and never reads past them. Nothing here knows
 * of sockets or SQL.
 */
#ifndef RIGD_PROTO_BIN_H
#define RIGD_PROTO_BIN_H

#include "proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_BIN_VERSION 1
#define PROTO_BIN_VERSION_LOCALS 2   /* an update with locals entries */
#define PROTO_BIN_HEAD 38            /* bytes before the scene name (version 1) */
#define PROTO_BIN_HEAD_LOCALS 42     /* bytes before the scene name (version 2) */
/* Elements (float64) after a locals entry's two indices: t, r, s, pivot,
 * euler; a 2D scene's entry has its angle after r. */
#define PROTO_BIN_CHANNELS_3D 16
#define PROTO_BIN_CHANNELS_2D 17
#define PROTO_BIN_MAX_INDEX (1 << 27) /* indices a decoder accepts: below this */

/* A frame's kind (byte 5). */
enum proto_bin_kind {
	PROTO_BIN_SNAPSHOT = 1,
	PROTO_BIN_UPDATE = 2,
};

/*
 * The subscription's format name ("json", "f32", "f64") into *format (enum
 * proto_format). Returns 0, or RIGD_E_BAD_FIELD for any other name.
 */
int proto_format_parse(const char *name, int *format);
/* "json", "f32" or "f64". */
const char *proto_format_name(int format);

/*
 * A snapshot of 's' at 'seq' as a binary frame of 'format' (PROTO_FORMAT_F32
 * or _F64): every node, preorder, with its index and its world matrix; the
 * JSON section is {"nodes":[records without "world"]}, and "order":[ids]
 * after "nodes" for a 2D scene. 0 or RIGD_E_NOMEM ('b' as it was).
 */
int proto_bin_encode_snapshot(proto_buf *b, int format, const char *scene_name, uint64_t seq,
			      const scene *s);

/*
 * An update from 'from' to 'seq' as a binary frame of 'format': the world
 * matrices of 'world_nodes' and of 'changed_nodes' (each node once), the
 * records of 'changed_nodes' (parents first) and the 'removed' ids in the
 * JSON section {"nodes":[...],"removed":[...]}. The lists are those of
 * proto_encode_update. 0 or RIGD_E_NOMEM ('b' as it was).
 */
int proto_bin_encode_update(proto_buf *b, int format, const char *scene_name, uint64_t seq,
			    uint64_t from, const scene *s, const int *world_nodes, int n_world,
			    const int *changed_nodes, int n_changed, const edit_id *removed,
			    int n_removed);
/* proto_bin_encode_update with "order":[ids] after "removed" in the JSON
 * section when 'with_order' (as proto_encode_update_order). */
int proto_bin_encode_update_order(proto_buf *b, int format, const char *scene_name,
				  uint64_t seq, uint64_t from, const scene *s,
				  const int *world_nodes, int n_world, const int *changed_nodes,
				  int n_changed, const edit_id *removed, int n_removed,
				  bool with_order);

/*
 * proto_bin_encode_update_order where 'locals' (NULL, or one per changed
 * node) marks the changed nodes whose record differs from the one the
 * client has in its transform channels only (t, r, s, pivot; the euler and
 * angle derived from them; its sibling index): each is sent as a locals
 * entry instead of its JSON record, and the frame is then of version 2
 * (docs/protocol.md, "Locals entries"). A node the client may not have a
 * record of (created since its cursor) must not be marked. Same returns.
 */
int proto_bin_encode_update_locals(proto_buf *b, int format, const char *scene_name,
				   uint64_t seq, uint64_t from, const scene *s,
				   const int *world_nodes, int n_world, const int *changed_nodes,
				   const bool *locals, int n_changed, const edit_id *removed,
				   int n_removed, bool with_order);

/*
 * Per-viewer interest: appends "hidden":[ids of the handles 'hidden'] to
 * the JSON section of the frame that 'b' holds from byte 'start' on (just
 * encoded there by one of the encoders above) and patches its length.
 * 0, RIGD_E_NOMEM or RIGD_E_INTERNAL as proto_append_hidden ('b' as it
 * was).
 */
int proto_bin_append_hidden(proto_buf *b, size_t start, const scene *s, const int *hidden,
			    int n_hidden);

/* True when 'data' starts like a binary frame (its magic). */
bool proto_bin_is_frame(const char *data, size_t len);

/*
 * A decoder's table of index -> id for one scene, filled by the frames it
 * decodes (a snapshot starts it afresh): an open-addressing hash table, so
 * its memory follows the bindings, never the size of an index a frame
 * names. Owned by the caller: init, then release.
 */
typedef struct proto_bin_names {
	uint32_t *keys;      /* the index of each slot */
	char **ids;          /* the id bound in each slot, NULL when empty */
	char **records;      /* its last record (JSON text, no "world") */
	int cap;             /* slots: 0 or a power of two */
	int n;               /* bound slots, at most cap / 2 */
} proto_bin_names;

void proto_bin_names_init(proto_bin_names *n);
/* Frees every id and record; 'n' is then empty. Accepts NULL. */
void proto_bin_names_release(proto_bin_names *n);

/*
 * Decodes the binary frame 'data' ('len' bytes) into the JSON message it
 * stands for, appended to 'out': {"type":"snapshot","scene","seq","nodes"}
 * or {"type":"update","scene","seq","world":{id:[16]},"nodes","removed"},
 * with "order" last when the JSON section has one,
 * each node record with its "world" (column-major, 16 numbers), as a JSON
 * subscriber would have received it (a float32 frame's values widened to
 * double). Binds the frame's indices in 'names', with their records; a
 * locals entry (version 2) is the index's last record with its channels
 * replaced, listed in "nodes" after the JSON section's records. Returns 0;
 * RIGD_E_BAD_FIELD for a malformed frame (err's field names the part:
 * "magic", "version", "kind", "format", "length", "json", "index",
 * "locals"), with 'out' as it was and
 * 'names' possibly rebound by a frame that failed half-way; RIGD_E_NOMEM.
 */
int proto_bin_to_json(proto_bin_names *names, const unsigned char *data, size_t len,
		      proto_buf *out, edit_error *err);

#endif
