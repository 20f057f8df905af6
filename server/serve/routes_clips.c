/*
 * routes_clips.c: GET /api/scenes/{name}/clips[?at=SEQ] (routes.h's table
 * names it): every clip of every skeleton the scene knows, now or as of a
 * seq, from the scene's skeletons (core/skel_clips.h), which the engine
 * builds as it adds a skeleton asset to a scene (docs/protocol.md,
 * "Clips").
 *
 * Reads a scene; never changes one.
 */
#include "http_respond.h"
#include "routes.h"
#include "server.h"

#include "codec/proto.h"
#include "core/err.h"
#include "core/num.h"

#include <inttypes.h>
#include <stdint.h>

/* The scene 'name' now, or at ?at=SEQ into *past (freed by the caller).
 * Answers the request and returns NULL on error. */
static const scene *clips_scene(struct server *S, const struct http_call *call, scene **past)
{
	const char *at = routes_arg(call->args, call->n_args, "at");
	const scene *s;
	int64_t seq;
	int rc;

	*past = NULL;
	if (!at) {
		if (!(s = engine_scene(S->e, call->name)))
			http_respond_code(S, call->conn, RIGD_E_UNKNOWN_SCENE, "", "no scene '%s'",
					  call->name);
		return s;
	}
	if (!num_parse_i64(at, 0, NUM_SEQ_MAX, &seq)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_SEQ, "at", "at must be a seq 0..2^53");
		return NULL;
	}
	/* Seq 0 is the empty scene: no skeleton yet. */
	if (seq == 0 && engine_seq(S->e, call->name) >= 0)
		rc = (*past = scene_new()) ? 0 : RIGD_E_NOMEM;
	else
		rc = engine_at(S->e, call->name, seq, past);
	if (rc == RIGD_E_BAD_SEQ) {
		http_respond_code(S, call->conn, rc, "at", "scene '%s' has no seq %" PRId64,
				  call->name, seq);
		return NULL;
	}
	if (rc) {
		http_respond_engine(S, call->conn, rc, call->name);
		return NULL;
	}
	return *past;
}

void routes_clips(struct server *S, const struct http_call *call)
{
	scene *past;
	const scene *s = clips_scene(S, call, &past);
	proto_buf b;
	int rc;

	if (!s)
		return;
	proto_buf_init(&b, 0);
	rc = proto_encode_clips(&b, s);
	scene_free(past);
	http_respond_built(S, call->conn, 200, &b, rc);
}
