/*
 * routes.h: the HTTP API as one table. Each row says which method and path
 * pattern it answers, the role a caller's token needs (auth.h), whether it
 * is answered now or after the turn's commit (anything that reads or
 * changes whole scenes waits, so nobody reads a batch that might still be
 * rolled back), the body size it accepts, and its handler. The same row
 * drives dispatch and authorisation, so they cannot disagree; a request
 * that matches no row is refused (default deny).
 *
 * A pattern is literal text and at most one "{name}" segment: a scene name
 * of 1..SCENE_ID_MAX+1 characters without '/' (validity is checked after
 * authorisation, so a bad name is a 400, not a 404). After "{name}" a
 * pattern may end in a "{node}" segment (any non-empty segment without
 * '/'), which its handler reads from the end of the path.
 */
#ifndef RIGD_SERVE_ROUTES_H
#define RIGD_SERVE_ROUTES_H

#include "auth.h"

#include "core/scene.h"
#include "net/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct server;

/*
 * An HTTP request as a route's handler sees it: the request's own fields
 * (answered now) or the deferred copy of them (answered after the commit).
 * 'name' is the scene the path names ("" for none), already checked valid.
 */
struct http_call {
	uint64_t conn;
	int method;                  /* enum net_method */
	const char *path;
	const char *name;
	char *const *args;           /* "name=value" */
	int n_args;
	const char *body;            /* NUL-terminated */
	size_t body_len;             /* bytes */
	const unsigned char *tok;    /* with tokens: the caller's digest; else NULL */
};


#define ROUTE_ANY_METHOD (-1)

enum route_when { ROUTE_NOW, ROUTE_AFTER_COMMIT };

/* The largest body a route accepts. */
enum route_body {
	ROUTE_BODY_ANY,              /* whatever net read (not an API route) */
	ROUTE_BODY_API,              /* --max-body */
	ROUTE_BODY_GLTF,             /* --max-gltf */
};

typedef void route_handler(struct server *S, const struct http_call *call);

struct route {
	int method;                  /* enum net_method, or ROUTE_ANY_METHOD */
	const char *pattern;
	int role;                    /* enum role the token needs; ROLE_NONE: public */
	int when;                    /* enum route_when */
	int max_body;                /* enum route_body */
	route_handler *handler;
};

/* The table, in the order methods are listed in a 405's message. */
extern const struct route routes[];
extern const int routes_count;

/* True when 'path' is for the table (the API, /metrics, /healthz); any
 * other path is a static file. */
bool routes_covers(const char *path);

/*
 * The row answering 'method' on 'path' (an index into routes[]), with the
 * scene name the path holds copied to 'name' (cap bytes; "" for none).
 * RIGD_E_BAD_METHOD when a row has the path but not the method,
 * RIGD_E_NOT_FOUND when none has the path ('name' then undefined).
 */
int routes_match(const char *path, int method, char *name, size_t cap);

/* "GET or POST": the methods of the rows matching 'path', in 'out'. */
void routes_methods(const char *path, char *out, size_t cap);

/* The value of query argument 'name' ("name=value") of 'args', or NULL. */
const char *routes_arg(char *const *args, int n_args, const char *name);

/* The SVG routes (routes_svg.c): POST /api/scenes/{name}/svg, GET
 * /api/scenes/{name}/assets and GET /api/scenes/{name}/assets/{file}. */
void routes_svg_import(struct server *S, const struct http_call *call);
/* The scene a 2D import goes to: the existing one (2D), or a new 2D scene
 * (*created). Answers and returns false when it cannot be ("scene 'x' is
 * 3D; WHAT needs a 2D scene"); returns false without answering in a
 * cluster, where the scene is being made through the catalog (the request
 * runs again then). */
bool routes_import_scene(struct server *S, const struct http_call *call, const char *what,
			 bool *created);

/* The skeleton routes (routes_skeleton.c): POST /api/scenes/{name}/spine
 * and POST /api/scenes/{name}/dragonbones. */
void routes_spine_import(struct server *S, const struct http_call *call);
void routes_dragonbones_import(struct server *S, const struct http_call *call);
void routes_asset_list(struct server *S, const struct http_call *call);
void routes_asset_get(struct server *S, const struct http_call *call);

/* GET /api/scenes/{name}/clips[?at=SEQ] (routes_clips.c): the clips of the
 * scene's skeletons, now or at a seq. */
void routes_clips(struct server *S, const struct http_call *call);

#endif
