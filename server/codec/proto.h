/*
 * proto.h: the JSON of rigd's protocol, in and out: websocket messages,
 * HTTP bodies and log lines.
 *
 * Decoders turn untrusted bytes into the C structs of edit.h and the
 * websocket messages below, checking every type, every array length and
 * every number (finite, exact integers where integers are meant), refusing
 * unknown and duplicate fields. Encoders append JSON to a proto_buf. Numbers
 * are printed with the shortest decimal that reads back to the same bits
 * (-0 stays -0), so a log replayed from its JSON is bit-identical.
 *
 * The decoders live in proto_decode.c and proto_msg.c, the encoders in
 * proto_encode.c, the JSON writer they append with in json.c. cJSON.h is
 * included only inside the codec folder, never by this header: no cJSON
 * tree leaves the codec. The module knows nothing of SQL or sockets.
 */
#ifndef RIGD_PROTO_H
#define RIGD_PROTO_H

#include "core/edit.h"
#include "core/scene.h"
#include "core/view.h"
#include "json.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_DEFAULT_MAX_BYTES (4u << 20)  /* bytes per message */
#define PROTO_DEFAULT_MAX_SELECTION 10000   /* ids in a presence selection */
#define PROTO_VIEW_ALWAYS_MAX 256           /* ids in a view's "always" */
#define PROTO_REQ_MAX 64                    /* bytes of a string req */
#define PROTO_TOKEN_MAX 256                 /* bytes of an auth message's token */

/* --- a growable byte buffer --- */

/*
 * Bytes under construction: json.h's buffer under the protocol's name (the
 * same fields: data, head, len, cap). 'head' bytes are reserved in front of
 * the text (for libwebsockets' LWS_PRE), so the text is data + head, len
 * bytes long and always NUL-terminated once anything was appended.
 * Appending keeps no pointer into 'data' valid. The proto_buf_ functions
 * below are json_buf_'s under the protocol's names; the JSON strings the
 * protocol writes use the short escapes \n, \t and \r.
 */
typedef json_buf proto_buf;

/* These are json.h's writers under the protocol's names, inline so that an
 * encoder's many small appends cost no extra call. */

/* An empty buffer reserving 'head' bytes in front of the text. */
static inline void proto_buf_init(proto_buf *b, size_t head) { json_buf_init(b, head); }
/* Frees the memory; 'b' is then empty (same head). Accepts NULL. */
static inline void proto_buf_release(proto_buf *b) { json_buf_release(b); }
/* Empties the text, keeping the memory. */
static inline void proto_buf_reset(proto_buf *b) { json_buf_reset(b); }
/* The text ("" when empty); valid until the next append or release. */
static inline const char *proto_buf_str(const proto_buf *b) { return json_buf_str(b); }
/*
 * Hands the text to the caller as a malloc'd NUL-terminated string (the
 * caller frees it) and leaves 'b' empty. With head > 0 the string starts at
 * the returned pointer + head, and the caller frees the returned pointer.
 * Returns NULL when out of memory (b unchanged).
 */
static inline char *proto_buf_take(proto_buf *b) { return json_buf_take(b); }
/* Appends 'n' raw bytes. 0 or RIGD_E_NOMEM (b unchanged). The parameter
 * is not named 'bytes': the engine, which includes this header, has a
 * type of that name (engine_bytes.h), and -Wshadow would refuse it. */
static inline int proto_buf_append(proto_buf *b, const char *data, size_t n)
{
	return json_buf_append(b, data, n);
}
/* Appends the string literal 'lit', its length counted by the compiler (a
 * non-literal does not compile). 0 or RIGD_E_NOMEM (b unchanged). */
#define PROTO_BUF_LIT(b, lit) proto_buf_append((b), "" lit, sizeof(lit) - 1)
/* Appends 'str' as a JSON string literal (quotes, escapes). */
static inline int proto_buf_json_string(proto_buf *b, const char *str)
{
	return json_buf_string(b, str, JSON_STR_SHORT_ESCAPES);
}
/* Appends 'v' as the shortest JSON number that parses back to the same
 * bits. RIGD_E_NOT_FINITE for NaN or infinity (b unchanged). */
static inline int proto_buf_json_number(proto_buf *b, double v) { return json_buf_number(b, v); }

/* --- limits --- */

typedef struct proto_limits {
	size_t max_bytes;        /* bytes per message (RIGD_E_TOO_LARGE beyond) */
	int max_selection;       /* ids in a presence selection (RIGD_E_LIMIT) */
	edit_limits edit;        /* ops per batch, id length */
} proto_limits;

/* PROTO_DEFAULT_MAX_BYTES, PROTO_DEFAULT_MAX_SELECTION, edit_limits_default(). */
proto_limits proto_limits_default(void);

/* Whether the decoders' JSON trees come from their thread's arena (on, the
 * default) or each block from malloc: the OOM test turns it off so that
 * every one of cJSON's allocations can be made to fail. */
void proto_parse_arena(bool on);

/* --- decoding --- */

/*
 * Every decoder reads 'len' bytes of 'json' (need not be NUL-terminated; a
 * NUL inside is bad_json), with 'lim' (NULL: the defaults). On success it
 * returns 0 and fills '*out', which the caller releases. On failure it
 * returns the code, fills 'err' (may be NULL: code, op index for an op's
 * field, field name) and leaves '*out' empty. The codes:
 *   too_large   more than lim->max_bytes
 *   bad_json    not JSON, trailing bytes, nesting deeper than cJSON allows
 *               (1000), invalid UTF-8, control characters, \u0000
 *   bad_field   a missing, unknown, duplicate or wrongly typed field, an
 *               array of the wrong length, a non-integer where an integer
 *               is meant
 *   not_finite  a number that overflows a double (1e400)
 *   bad_id      an id, parent, client or scene name that fails
 *               scene_id_valid or exceeds lim->edit.max_id_len
 *   unknown_op  an op name other than create/set/reparent/delete/rotate/
 *               move/ik
 *   unknown_type  a message type that is not listed below
 *   limit       more than lim->edit.max_ops ops or lim->max_selection ids
 * Decoding checks shapes and types, not the scene: zero quaternions, bounds
 * with min > max and unknown nodes are edit_apply's errors.
 */

/* An edit batch {"ops":[...],"client":"c-17","client_seq":42} (client and
 * client_seq optional). Initialises *out. */
int proto_decode_batch(const char *json, size_t len, const proto_limits *lim,
		       edit_batch *out, edit_error *err);

/* A bare ops array [...] (the log's ops and inverse columns). Initialises
 * *out; client and client_seq stay unset. */
int proto_decode_ops(const char *json, size_t len, const proto_limits *lim,
		     edit_batch *out, edit_error *err);

/* Websocket message types (the "type" field). */
enum proto_type {
	PROTO_SUBSCRIBE = 1,   /* scene [req] [format] */
	PROTO_UNSUBSCRIBE,     /* scene [req] */
	PROTO_EDIT,            /* scene req ops [client] [client_seq] */
	PROTO_UNDO,            /* scene req [client] */
	PROTO_REDO,            /* scene req [client] */
	PROTO_PRESENCE,        /* scene selection [name] */
	PROTO_AUTH,            /* token [req]: no scene */
	PROTO_VIEW,            /* scene [req] (vp | planes) viewport [min_px] [always], or clear */
};

/* A subscription's frames (subscribe's "format"): JSON text, the default,
 * or binary frames with float32 or float64 matrices (proto_bin.h). */
enum proto_format {
	PROTO_FORMAT_JSON = 0,
	PROTO_FORMAT_F32,
	PROTO_FORMAT_F64,
	PROTO_FORMAT_COUNT
};

/* A request id, echoed in the ack or error: a JSON integer 0..2^53-1 or a
 * string of up to PROTO_REQ_MAX bytes. */
typedef struct proto_req {
	bool present;
	bool is_string;
	int64_t num;
	char str[PROTO_REQ_MAX + 1];
} proto_req;

/*
 * A decoded websocket message. 'batch' holds an edit's ops, client and
 * client_seq (and the client of undo/redo); 'selection' and 'name' belong to
 * presence; 'token' to auth (whose 'scene' stays ""). Owned by the struct:
 * free with proto_msg_release.
 */
typedef struct proto_msg {
	int type;                        /* enum proto_type */
	char scene[SCENE_ID_MAX + 1];
	int format;                      /* subscribe: enum proto_format */
	proto_req req;
	edit_batch batch;
	edit_id *selection;
	int n_selection;
	char *name;                      /* presence display name, NULL if absent */
	char *token;                     /* auth: 1..PROTO_TOKEN_MAX visible ASCII
					  * characters (0x21..0x7e), NULL otherwise;
					  * a secret: never log or echo it */
	view view;                       /* view: the declared view, unless ... */
	bool view_clear;                 /* view: "clear":true drops the view */
	edit_id *always;                 /* view: ids sent wherever the camera looks, */
	int n_always;                    /* sorted by strcmp, each once */
} proto_msg;

/*
 * Decodes one websocket message. Besides the codes above: a missing or
 * non-string "type" is bad_field, an unknown one unknown_type. An auth
 * token that is empty, longer than PROTO_TOKEN_MAX or holds anything but
 * visible ASCII is bad_field (field "token"); no error message quotes it.
 * When the message was an object with a usable "req", err's code is set
 * and *req_out (may be NULL) receives the req even on failure, so the
 * error reply can carry it.
 */
int proto_decode_msg(const char *json, size_t len, const proto_limits *lim, proto_msg *out,
		     proto_req *req_out, edit_error *err);
/* Frees what a decoded message owns; accepts NULL. */
void proto_msg_release(proto_msg *m);

/*
 * The few top-level members of a message from rigd that a client steers by
 * (rigctl: is it the answer to request N, an update up to seq S, an error?).
 * Members absent or of another type stay unset.
 */
typedef struct proto_reply_head {
	char type[16];          /* "type", truncated; "" when absent */
	bool has_req;
	int64_t req;            /* "req" when an integer */
	bool has_seq;
	int64_t seq;            /* "seq" when an integer */
} proto_reply_head;

/*
 * Reads "type", "req" and "seq" from the top level of the JSON object
 * 'json' (a message the server sent). Returns 0, or RIGD_E_BAD_JSON when
 * the text is not a JSON object (*out is then cleared).
 */
int proto_peek_reply(const char *json, size_t len, proto_reply_head *out);

/* What a logged batch is (the values of the log table's kind column): an
 * undo or a redo says so on its log line ("undo":SEQ or "redo":SEQ), so
 * that undo and redo stacks rebuilt from the log are the same wherever
 * the log goes (another process, an export imported elsewhere). */
enum proto_log_kind {
	PROTO_LOG_EDIT = 0,
	PROTO_LOG_UNDO = 1,    /* undoes batch 'target' */
	PROTO_LOG_REDO = 2,    /* redoes batch 'target' */
};

/* One NDJSON log line, as written by proto_encode_log_line. */
typedef struct proto_log_line {
	uint64_t seq;          /* >= 1 */
	int64_t time_us;       /* microseconds since 1970-01-01 UTC */
	edit_batch batch;      /* ops, client ("" if null), client_seq */
	int kind;              /* enum proto_log_kind */
	int64_t target;        /* 1..seq-1 for an undo or redo, else 0 */
} proto_log_line;

/* Decodes one log line {"seq","time","client","client_seq","ops"} (a
 * trailing newline is allowed), with "undo":SEQ or "redo":SEQ on the line
 * of an undo or a redo: an integer 1..seq-1, on a line with a client, not
 * both (else bad_field naming "undo" or "redo"). Initialises *out; release
 * out->batch. */
int proto_decode_log_line(const char *json, size_t len, const proto_limits *lim,
			  proto_log_line *out, edit_error *err);

/* --- assets on log lines and in lists (proto_asset.c) --- */

#define PROTO_ASSET_FILE_MAX 128   /* bytes of an asset's file name */

/* An asset riding on the log line of the batch that stored it. */
typedef struct proto_log_asset {
	char file[PROTO_ASSET_FILE_MAX + 1];
	char sha256[65];           /* 64 lowercase hex digits */
	int kind;                  /* enum asset_kind (core/asset.h) */
	char *bytes;               /* owned by whoever holds the array; NUL after */
	size_t len;                /* bytes of 'bytes' */
} proto_log_asset;

/* Frees the bytes of each of a[0..n) and the array; accepts NULL. */
void proto_log_assets_free(proto_log_asset *a, int n);

/* The most bytes a log line's asset may decode to (a PNG page). */
#define PROTO_LOG_ASSET_MAX_BYTES (64u << 20)

/*
 * proto_decode_log_line that also reads an "assets" member (absent: none)
 * into a malloc'd *assets of *n_assets entries the caller frees with
 * proto_log_assets_free. Each entry is one of
 *   {"file","sha256","svg"}                an SVG (kind svg)
 *   {"file","kind","sha256","text"}        a skeleton or an atlas (text)
 *   {"file","kind":"png","sha256","base64"} a PNG page (strict base64)
 * A file name outside the asset rules (svg_file_name_valid), an unknown
 * kind, a kind with the wrong member for its bytes, a sha256 that is not
 * 64 lowercase hex digits, bad base64, a missing or unknown member is
 * bad_field naming "assets". On error *assets is NULL and *n_assets 0.
 * The bytes are not judged here: whoever stores them checks them with
 * their kind's reader.
 */
int proto_decode_log_line_assets(const char *json, size_t len, const proto_limits *lim,
				 proto_log_line *out, proto_log_asset **assets, int *n_assets,
				 edit_error *err);

/* proto_encode_log_line with a[0..n) as its "assets" member after "ops"
 * (none when n is 0: the line proto_encode_log_line writes). */
int proto_encode_log_line_assets(proto_buf *b, uint64_t seq, int64_t time_us,
				 const edit_batch *batch, const proto_log_asset *a, int n);

/* proto_encode_log_line_assets of a batch of 'kind' (enum proto_log_kind):
 * an undo or redo gets "undo":TARGET or "redo":TARGET after "client_seq";
 * PROTO_LOG_EDIT writes exactly the line proto_encode_log_line_assets
 * writes. 0 or RIGD_E_NOMEM (b as before). */
int proto_encode_log_line_kind(proto_buf *b, uint64_t seq, int64_t time_us,
			       const edit_batch *batch, int kind, int64_t target,
			       const proto_log_asset *a, int n);

/* One entry of GET /api/scenes/{name}/assets. */
typedef struct proto_asset_info {
	const char *file;
	int kind;                  /* enum asset_kind */
	const char *sha256;
	int64_t bytes;
	int64_t seq;               /* the batch that stored it */
} proto_asset_info;

/* [{"file","kind","sha256","bytes","seq"},...]. 0 or RIGD_E_NOMEM (b unchanged). */
int proto_encode_asset_list(proto_buf *b, const proto_asset_info *a, int n);

/* POST /api/scenes {"name":"..."}: the name (scene_id_valid) into name_out. */
int proto_decode_scene_create(const char *json, size_t len, char name_out[SCENE_ID_MAX + 1],
			      edit_error *err);
/* POST /api/scenes {"name":"...","dims":2|3}: as proto_decode_scene_create,
 * and *dims (3 when absent); a dims other than 2 or 3 is bad_field. */
int proto_decode_scene_create_dims(const char *json, size_t len,
				   char name_out[SCENE_ID_MAX + 1], int *dims, edit_error *err);

/* The wire name of Spine inherit mode 'mode' ("normal", "onlyTranslation",
 * "noRotationOrReflection", "noScale", "noScaleOrReflection"), NULL for a
 * mode of DragonBones' flags, written as an object instead; and the name
 * of flag i (0 translation, 1 rotation, 2 scale, 3 reflection: the
 * DB_NO_ bit 1 << i says it is false), "" beyond. */
const char *proto_inherit_name(int mode);
const char *proto_inherit_flag_name(int i);

/* --- encoding --- */

/*
 * Every encoder appends to 'b' and returns 0, or RIGD_E_NOMEM with 'b' as
 * it was. Node handles are those of 's'; world matrices are read with
 * scene_world (never stale, but call scene_update first for speed).
 */

/*
 * One node in the HTTP tree shape:
 * {"id","name","parent","index","t","r","s","pivot","euler","bounds",
 *  "mesh","kind","camera":{"fov","near","far"},"visible","world":[16]}
 * name, parent, bounds and mesh are null when absent; euler is derived from r
 * (degrees, 'XYZ'); world is column-major. In a 2D scene (scene_dims 2)
 * "angle" follows "r": the screen angle in degrees (quat_to_angle2d_deg),
 * and "layer" (string or null), "z" (a number when both facings hold the
 * same bits, else {"right","left"}) and "facing" ("right", "left" or null)
 * follow "visible", then "shear" ([shx, shy]) when not +0 +0 and "inherit"
 * (a Spine mode's name, or DragonBones' four flags as an object) when not
 * normal.
 */
int proto_encode_node(proto_buf *b, const scene *s, int node);
/* The same record without its "world" member (binary frames carry the
 * matrices apart). */
int proto_encode_node_record(proto_buf *b, const scene *s, int node);

/* {"scene":NAME,"seq":SEQ,"nodes":[every node depth-first]}: the body of
 * GET /api/scenes/NAME; a 2D scene has "dims":2 after "seq" (a 3D one
 * nothing, so its answer is as before dims existed) and "order" (its draw
 * order, scene_draw_order) after "nodes". */
int proto_encode_tree(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s);

/* {"type":"snapshot","scene","seq","nodes":[...]} ("dims":2 after "seq"
 * and "order":[ids] after "nodes" for a 2D scene). */
int proto_encode_snapshot(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s);

/* '"order":[ids]', the draw order of 2D scene 's' (scene_draw_order; no
 * comma before it), for the encoders of JSON messages and of the JSON
 * section of binary frames. 0 or RIGD_E_NOMEM ('b' as it was). */
int proto_encode_order(proto_buf *b, const scene *s);

/* Websocket ack {"type":"ack","req","seq","recomputed"} (req omitted when
 * absent). An accepted auth message is answered with seq 0 and recomputed
 * 0: it committed no batch, and a client matches the ack by its req. */
int proto_encode_ack(proto_buf *b, const proto_req *req, uint64_t seq, long recomputed);

/* HTTP ack {"seq","recomputed"}. */
int proto_encode_http_ack(proto_buf *b, uint64_t seq, long recomputed);

/* The acks above with "ik":[{"op","reached","distance"},...] after
 * "recomputed" when n_ik > 0 (else byte-identical to them). */
int proto_encode_ack_ik(proto_buf *b, const proto_req *req, uint64_t seq, long recomputed,
			const edit_ik_report *ik, int n_ik);
int proto_encode_http_ack_ik(proto_buf *b, uint64_t seq, long recomputed,
			     const edit_ik_report *ik, int n_ik);

/* GET /api/scenes/NAME/debug/NODE: the debug record of one node (see
 * docs/protocol.md): {"scene","seq","id","parent","dims","local_angle",
 * "world_angle" (2D, degrees), "local_r","world_r" (quaternions),
 * "pivot_world":[3],"det","scale_in_chain","flag"}. */
int proto_encode_debug(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
		       int node);

/* Websocket error {"type":"error","req","code","message","op","field"};
 * req omitted when absent, op when e->op < 0, field when "". The message is
 * e->message, or err_str(e->code) when that is empty. */
int proto_encode_error(proto_buf *b, const proto_req *req, const edit_error *e);

/* HTTP error body {"error":{"code","message","op","field"}}, with the same
 * omissions. */
int proto_encode_http_error(proto_buf *b, const edit_error *e);

/*
 * {"type":"update","scene","seq","world":{id:[16],...},"nodes":[...],
 *  "removed":[ids]}: 'world_nodes' are the handles whose world matrix is
 * sent, 'changed_nodes' those whose whole node shape is sent (locals and
 * structure), 'removed' ids that no longer exist. Any list may be empty.
 */
int proto_encode_update(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s,
			const int *world_nodes, int n_world, const int *changed_nodes,
			int n_changed, const edit_id *removed, int n_removed);
/* proto_encode_update with "order":[ids] (proto_encode_order) after
 * "removed" when 'with_order': an update of a 2D scene whose draw order
 * changed since the client's last frame. */
int proto_encode_update_order(proto_buf *b, const char *scene_name, uint64_t seq,
			      const scene *s, const int *world_nodes, int n_world,
			      const int *changed_nodes, int n_changed, const edit_id *removed,
			      int n_removed, bool with_order);

/*
 * Per-viewer interest (docs/protocol.md, "Views"): appends
 * ,"hidden":[ids of 'hidden', handles of 's'] to the JSON object that
 * 'b' holds from byte 'start' on (an update or a snapshot just encoded
 * there: its last byte is its closing brace). 0, RIGD_E_NOMEM ('b' as it
 * was) or RIGD_E_INTERNAL when 'b' does not end in a brace after 'start'.
 */
int proto_append_hidden(proto_buf *b, size_t start, const scene *s, const int *hidden,
			int n_hidden);

/* {"type":"presence","scene","client","name","selection":[ids]} (name null
 * when NULL). */
int proto_encode_presence(proto_buf *b, const char *scene_name, const char *client,
			  const char *name, const edit_id *selection, int n_selection);
/* {"type":"join","scene","client","name"} and {"type":"leave","scene","client"}. */
int proto_encode_join(proto_buf *b, const char *scene_name, const char *client,
		      const char *name);
int proto_encode_leave(proto_buf *b, const char *scene_name, const char *client);

/* One op as an object, every field it carries (r, never a recomputed value). */
int proto_encode_op(proto_buf *b, const edit_op *op);
/* A pose op (pose_save, pose_set, pose_delete, blend) as its JSON object;
 * proto_encode_op calls it for those kinds. 0 or RIGD_E_NOMEM (b as before). */
int proto_encode_pose_op(proto_buf *b, const edit_op *op);
/* A clip op as its JSON object (proto_clip.c); proto_encode_pose_op calls
 * it. 0 or RIGD_E_NOMEM (b as before). */
int proto_encode_clip_op(proto_buf *b, const edit_op *op);

/* [{"file","name","duration","frame_rate","bones","slots","draw_order",
 * "unsampled":[...]}]: the body of GET /api/scenes/NAME/clips, every clip
 * of every skeleton of 's' (skel_clips.h) in the order the skeletons were
 * added and each file's order of clips; "bones" and "slots" count the
 * clip's bone and slot timelines, "draw_order" its draw-order keys, and
 * "unsampled" names the timelines kept but not played. 0 or RIGD_E_NOMEM
 * (b as before). */
int proto_encode_clips(proto_buf *b, const scene *s);

/* {"scene","seq","poses":[{"name","nodes":{ID:{"t","r","s"[,"angle"]}},
 * "missing":[ids the scene no longer holds]}]}: the body of
 * GET /api/scenes/NAME/poses, poses by name, nodes by id ("angle", in
 * degrees, only in a 2D scene). 0 or RIGD_E_NOMEM (b as before). */
int proto_encode_poses(proto_buf *b, const char *scene_name, uint64_t seq, const scene *s);
/* The ops array [...] of a batch (the log's ops and inverse columns). */
int proto_encode_ops(proto_buf *b, const edit_batch *batch);
/* {"ops":[...],"client","client_seq"} (client and client_seq when set). */
int proto_encode_batch(proto_buf *b, const edit_batch *batch);
/* One NDJSON log line with its newline:
 * {"seq","time","client","client_seq","ops":[...]}\n, time in microseconds
 * since 1970 (client null for an anonymous batch, client_seq null when
 * unset). */
int proto_encode_log_line(proto_buf *b, uint64_t seq, int64_t time_us, const edit_batch *batch);

/* GET /api/scenes: {"scenes":[{"name","seq","nodes"},...]}. */
typedef struct proto_scene_info {
	const char *name;
	uint64_t seq;
	int nodes;
} proto_scene_info;
int proto_encode_scene_list(proto_buf *b, const proto_scene_info *scenes, int n);
/* The same with each scene's dims ('dims' may be NULL: all 3D): a 2D
 * scene's entry has "dims":2 after "nodes", a 3D one's nothing. */
int proto_encode_scene_list_dims(proto_buf *b, const proto_scene_info *scenes, const int *dims,
				 int n);

#endif
