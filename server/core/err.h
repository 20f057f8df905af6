/*
 * err.h: every error code rigd can report, in one X-macro list.
 *
 * The list generates the enum (RIGD_E_*, all negative, 0 is success) and the
 * tables behind err_http_status() (the HTTP status an API answer carries),
 * err_code() (the lowercase wire name, e.g. "unknown_node") and err_str() (a
 * one-line English description). docs/protocol.md's error table is checked
 * against this list by a test. The wire names are a public,
 * stable contract (docs/protocol.md): append new codes, never rename one.
 * This header must stay free of every other module.
 */
#ifndef RIGD_ERR_H
#define RIGD_ERR_H

#define RIGD_ERRORS(X) \
	X(BAD_JSON,         400, "bad_json",        "the message is not valid JSON") \
	X(BAD_FIELD,        400, "bad_field",       "a field is missing, unknown or of the wrong type") \
	X(UNKNOWN_OP,       400, "unknown_op",      "unknown op") \
	X(UNKNOWN_NODE,     400, "unknown_node",    "no node with that id") \
	X(DUPLICATE_ID,     400, "duplicate_id",    "a node with that id already exists") \
	X(BAD_ID,           400, "bad_id",          "ids are 1 to 64 characters of [A-Za-z0-9_.:-]") \
	X(CYCLE,            400, "cycle",           "a node cannot become its own descendant") \
	X(NOT_FINITE,       400, "not_finite",      "numbers must be finite") \
	X(ZERO_QUATERNION,  400, "zero_quaternion", "quaternion has zero length") \
	X(NOT_TRS,          400, "not_trs",         "the transform is not representable as translation, rotation and scale") \
	X(SINGULAR,         400, "singular",        "the matrix is singular") \
	X(BAD_INDEX,        400, "bad_index",       "sibling index out of range") \
	X(TOO_LARGE,        413, "too_large",       "the message is too large") \
	X(LIMIT,            400, "limit",           "a configured limit was reached") \
	X(UNKNOWN_SCENE,    404, "unknown_scene",   "no scene with that name") \
	X(SCENE_EXISTS,     409, "scene_exists",    "a scene with that name already exists") \
	X(SCENE_NOT_EMPTY,  409, "scene_not_empty", "the scene is not empty") \
	X(STORAGE,          503, "storage",         "the edit could not be stored") \
	X(NOTHING_TO_UNDO,  409, "nothing_to_undo", "there is no edit of yours to undo or redo") \
	X(UNDO_CONFLICT,    409, "undo_conflict",   "a later edit made this undo or redo impossible") \
	X(BAD_SEQ,          400, "bad_seq",         "no such sequence number") \
	X(UNKNOWN_TYPE,     400, "unknown_type",    "unknown message type") \
	X(NOT_SUBSCRIBED,   400, "not_subscribed",  "not subscribed to that scene") \
	X(RATE_LIMITED,     429, "rate_limited",    "too many messages; slow down") \
	X(FORBIDDEN,        403, "forbidden",       "not allowed") \
	X(UNAUTHORIZED,     401, "unauthorized",    "a valid token is required") \
	X(NOT_FOUND,        404, "not_found",       "no such resource") \
	X(BAD_METHOD,       405, "bad_method",      "method not allowed") \
	X(BAD_GLTF,         400, "bad_gltf",        "the glTF document is invalid") \
	X(LOCKED,           503, "locked",          "the database is in use by another process") \
	X(DB_TOO_NEW,       400, "db_too_new",      "the database was written by a newer rigd") \
	X(NOMEM,            500, "nomem",           "out of memory") \
	X(IO,               500, "io",              "input/output error") \
	X(INTERNAL,         500, "internal",        "internal error") \
	X(UNKNOWN_POSE,     400, "unknown_pose",    "no pose with that name") \
	X(BAD_SVG,          400, "bad_svg",         "the SVG document is refused") \
	X(UNKNOWN_ASSET,    404, "unknown_asset",   "no asset with that file name") \
	X(ASSET_EXISTS,     409, "asset_exists",    "the scene already has an asset with that file name") \
	X(UNAVAILABLE,      503, "unavailable",     "the scene takes no edits here now (cluster)") \
	X(BAD_IMAGE,        400, "bad_image",       "the image is refused") \
	X(BAD_ATLAS,        400, "bad_atlas",       "the texture atlas is refused") \
	X(BAD_SKELETON,     400, "bad_skeleton",    "the skeleton file is refused")

enum rigd_err {
	RIGD_OK = 0,
	RIGD_E_FIRST_ = -1000,
#define RIGD_ERR_ENUM_(name, status, wire, text) RIGD_E_##name,
	RIGD_ERRORS(RIGD_ERR_ENUM_)
#undef RIGD_ERR_ENUM_
	RIGD_E_LAST_
};

/* The stable lowercase wire name of 'err' ("unknown_node"); "internal" for an
 * unknown code. Never NULL. */
const char *err_code(int err);

/* A one-line English description of 'err'. Never NULL. */
const char *err_str(int err);

/* The HTTP status of an API answer that fails with 'err' (400 for a bad
 * request, 404, 409, 503 when storage failed, ...); 500 for an unknown code. */
int err_http_status(int err);

/* The code whose wire name is 'code', or 0 if there is none. */
int err_from_code(const char *code);

#endif
