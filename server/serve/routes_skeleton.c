/*
 * routes_skeleton.c: the HTTP routes of skeleton imports (routes.h's
 * table names them): POST /api/scenes/{name}/spine and POST
 * /api/scenes/{name}/dragonbones, each one batch with its assets (the
 * skeleton file, its atlas and the atlas's PNG pages), answered after the
 * commit, like the glTF and SVG imports; and their exports, GET on the same
 * paths: the stored file rewritten from the scene's nodes.
 *
 * The readers live in codec/ (spine.c, dragonbones.c, skel_upload.c with
 * png.c and atlas.c); this file only puts their results through the turn.
 */
#include "http_respond.h"
#include "log.h"
#include "routes.h"
#include "serve_hooks.h"
#include "server.h"
#include "turn.h"

#include "codec/dragonbones.h"
#include "codec/dragonbones_export.h"
#include "codec/json.h"
#include "codec/skel_upload.h"
#include "codec/spine.h"
#include "codec/spine_export.h"
#include "core/asset.h"
#include "core/err.h"
#include "core/num.h"
#include "core/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One import, whatever its format: what the reader made of the body. */
struct skel_call {
	const char *format;          /* "Spine", "DragonBones": for messages */
	int kind;                    /* ASSET_SPINE, ASSET_DRAGONBONES */
	const char *atlas;           /* as posted; NULL: none */
	size_t atlas_len;
	const skel_image_in *images;
	int n_images;
	edit_batch *batch;
	skel_import_report *rep;
};

/* The ids of 'rep' (one per line) as an array of pointers into a copy:
 * *block and *ids to free, or -1 when out of memory. */
static int split_ids(const skel_import_report *rep, char **block, char ***ids)
{
	int n = 0;

	*block = NULL;
	*ids = NULL;
	if (!rep->ids_len)
		return 0;
	if (!(*block = malloc(rep->ids_len + 1)) ||
	    !(*ids = calloc((size_t)rep->n_ids + 1, sizeof(char *)))) {
		free(*block);
		*block = NULL;
		return -1;
	}
	memcpy(*block, rep->ids, rep->ids_len);
	(*block)[rep->ids_len] = '\0';
	for (char *p = *block, *nl; n < rep->n_ids && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		(*ids)[n++] = p;
	}
	return n;
}

/* The lines of a '\n'-separated list as a JSON array of strings. */
static int lines_json(proto_buf *b, const char *lines, size_t len)
{
	char line[EDIT_MESSAGE_MAX];
	int rc = PROTO_BUF_LIT(b, "[");

	for (size_t off = 0, first = 1; !rc && off < len; first = 0) {
		const char *nl = memchr(lines + off, '\n', len - off);
		size_t k = nl ? (size_t)(nl - (lines + off)) : len - off;
		snprintf(line, sizeof(line), "%.*s", (int)k, lines + off);
		rc = (!first && PROTO_BUF_LIT(b, ",")) || proto_buf_json_string(b, line);
		off += k + 1;
	}
	return rc || PROTO_BUF_LIT(b, "]");
}

/* The import's report (a malloc'd JSON object, or NULL when out of
 * memory): the counts, every asset stored and what was kept unapplied. */
static char *import_report(const struct skel_call *k, const skel_upload *up,
			   const engine_asset *a, int n)
{
	const skel_import_report *rep = k->rep;
	proto_buf b;
	unsigned char d[SHA256_LEN];
	char hex[2 * SHA256_LEN + 1];
	int rc;

	proto_buf_init(&b, 0);
	rc = PROTO_BUF_LIT(&b, "{\"format\":") || proto_buf_json_string(&b, k->format) ||
	     PROTO_BUF_LIT(&b, ",\"file\":") || proto_buf_json_string(&b, rep->file) ||
	     PROTO_BUF_LIT(&b, ",\"bones\":") || json_buf_int(&b, rep->bones) ||
	     PROTO_BUF_LIT(&b, ",\"slots\":") || json_buf_int(&b, rep->slots) ||
	     PROTO_BUF_LIT(&b, ",\"skins\":") || json_buf_int(&b, rep->skins) ||
	     PROTO_BUF_LIT(&b, ",\"clips\":") || json_buf_int(&b, rep->clips) ||
	     PROTO_BUF_LIT(&b, ",\"nodes\":") || json_buf_int(&b, k->batch->n_ops) ||
	     PROTO_BUF_LIT(&b, ",\"regions\":") || json_buf_int(&b, up->n_regions) ||
	     PROTO_BUF_LIT(&b, ",\"pages_missing\":") || json_buf_int(&b, up->n_missing) ||
	     PROTO_BUF_LIT(&b, ",\"assets\":[");
	for (int i = 0; !rc && i < n; i++) {
		sha256_digest(a[i].bytes, a[i].len, d);
		for (int j = 0; j < SHA256_LEN; j++)
			snprintf(hex + 2 * j, 3, "%02x", d[j]);
		rc = (i && PROTO_BUF_LIT(&b, ",")) || PROTO_BUF_LIT(&b, "{\"file\":") ||
		     proto_buf_json_string(&b, a[i].file) || PROTO_BUF_LIT(&b, ",\"kind\":") ||
		     proto_buf_json_string(&b, asset_kind_name(a[i].kind)) ||
		     PROTO_BUF_LIT(&b, ",\"sha256\":") || proto_buf_json_string(&b, hex) ||
		     PROTO_BUF_LIT(&b, ",\"bytes\":") || json_buf_int(&b, (int64_t)a[i].len) ||
		     PROTO_BUF_LIT(&b, "}");
	}
	rc = rc || PROTO_BUF_LIT(&b, "],\"kept\":") || lines_json(&b, rep->kept, rep->kept_len) ||
	     PROTO_BUF_LIT(&b, ",\"not_applied\":") ||
	     lines_json(&b, rep->not_applied, rep->not_applied_len) || PROTO_BUF_LIT(&b, "}");
	if (rc) {
		proto_buf_release(&b);
		return NULL;
	}
	return proto_buf_take(&b);
}

/*
 * The part both formats share: the atlas and pages checked, the assets
 * listed (the skeleton, the atlas, the pages), the scene found or made
 * 2D, and the batch submitted with them; answered now on error, after the
 * commit otherwise.
 */
static void skeleton_import(struct server *S, const struct http_call *call, struct skel_call *k)
{
	const char *client = routes_arg(call->args, call->n_args, "client");
	engine_asset a[2 + SKEL_UPLOAD_MAX_PAGES];
	edit_limits lim = S->lim.edit;
	skel_upload up;
	edit_error err;
	char *block = NULL, **ids = NULL, *report = NULL;
	bool created = false;
	int n = 0, n_ids, rc;

	edit_error_clear(&err);
	if ((rc = skel_upload_check(k->kind, k->rep->file, k->atlas, k->atlas_len, k->images,
				    k->n_images, &up, &err)) != 0) {
		http_respond_error(S, call->conn, &err);
		return;
	}
	if (client && !scene_id_valid(client)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_ID, "client", "bad client id");
		goto out;
	}
	if (client)
		snprintf(k->batch->client, sizeof(k->batch->client), "%s", client);
	if ((n_ids = split_ids(k->rep, &block, &ids)) < 0) {
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
		goto out;
	}
	a[n++] = (engine_asset){ k->rep->file, k->kind, k->rep->asset, k->rep->asset_len, ids,
				 n_ids };
	if (up.has_atlas)
		a[n++] = (engine_asset){ up.atlas_file, up.atlas_kind, up.atlas, up.atlas_len, NULL,
					 0 };
	for (int i = 0; i < up.n_pages; i++)
		a[n++] = (engine_asset){ up.pages[i].file, ASSET_PNG, up.pages[i].png, up.pages[i].len,
					 NULL, 0 };
	if (!(report = import_report(k, &up, a, n))) {
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
		goto out;
	}
	if (!routes_import_scene(S, call, k->kind == ASSET_SPINE ? "a Spine skeleton" :
				 "a DragonBones skeleton", &created))
		goto out;
	if (lim.max_ops < k->batch->n_ops)
		lim.max_ops = k->batch->n_ops;
	rc = turn_submit_asset(S, PROTO_EDIT, call->name, k->batch, &lim, a, n, k->batch->client,
			       NULL, call->conn, NULL, &err);
	if (rc) {
		http_respond_error(S, call->conn, &err);
		if (created && engine_scene_delete(S->e, call->name) != 0)
			serve_log(LOG_WARN, "cannot delete scene %s after a failed import: %s", call->name,
				  engine_errmsg(S->e));
		goto out;
	}
	S->pend[S->n_pend - 1].report = report;
	report = NULL;
	if (created)
		memcpy(S->pend[S->n_pend - 1].created, call->name, strlen(call->name) + 1);
	serve_log(LOG_INFO, "%s import into %s: %s, %d bones, %d slots, %d pages", k->format,
		  call->name, k->rep->file, k->rep->bones, k->rep->slots, up.n_pages);
out:
	free(report);
	free(ids);
	free(block);
	skel_upload_release(&up);
}

/* A decoded body of either format. */
union skel_in {
	spine_import spine;
	dragonbones_import db;
};

/*
 * One skeleton import of 'kind' (ASSET_SPINE or ASSET_DRAGONBONES): the
 * body decoded and turned into its batch by its format's reader, its
 * pages listed for skeleton_import. Runs between turns; a body that does
 * not import creates nothing, not even the scene.
 */
static void import_kind(struct server *S, const struct http_call *call, int kind)
{
	bool spine = kind == ASSET_SPINE;
	const scene *existing = engine_scene(S->e, call->name);
	union skel_in in;
	skel_import_report rep;
	edit_batch batch;
	edit_error err;
	skel_image_in *images = NULL;
	int n_images, rc;

	if (S->hooks && S->hooks->relay_write(S, call))
		return;  /* relayed to the owner, or waiting for one */
	edit_batch_init(&batch);
	memset(&rep, 0, sizeof(rep));
	rc = spine ? spine_import_decode(call->body, call->body_len, SIZE_MAX, &in.spine, &err)
		   : dragonbones_import_decode(call->body, call->body_len, SIZE_MAX, &in.db, &err);
	if (rc) {
		http_respond_error(S, call->conn, &err);
		return;
	}
	rc = spine ? spine_import_batch(&in.spine, existing, &batch, &rep, &err)
		   : dragonbones_import_batch(&in.db, existing, &batch, &rep, &err);
	n_images = spine ? in.spine.n_images : in.db.n_images;
	if (rc) {
		http_respond_error(S, call->conn, &err);
	} else if (n_images && !(images = calloc((size_t)n_images, sizeof(*images)))) {
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
	} else {
		for (int i = 0; i < n_images; i++)
			images[i] = spine ? (skel_image_in){ in.spine.images[i].file,
							     in.spine.images[i].base64,
							     in.spine.images[i].base64_len }
					  : (skel_image_in){ in.db.images[i].file, in.db.images[i].base64,
							     strlen(in.db.images[i].base64) };
		struct skel_call k = { spine ? "Spine" : "DragonBones", kind,
				       spine ? in.spine.atlas : in.db.atlas,
				       spine ? in.spine.atlas_len : in.db.atlas_len, images, n_images,
				       &batch, &rep };
		skeleton_import(S, call, &k);
	}
	free(images);
	skel_import_report_release(&rep);
	edit_batch_release(&batch);
	if (spine)
		spine_import_release(&in.spine);
	else
		dragonbones_import_release(&in.db);
}

/* POST /api/scenes/{name}/spine: a Spine 4.2 skeleton, {"skeleton",
 * "atlas"?, "images"?, "file"?} (spine.h), into the 2D scene 'name' (made
 * when missing). */
void routes_spine_import(struct server *S, const struct http_call *call)
{
	import_kind(S, call, ASSET_SPINE);
}

/* POST /api/scenes/{name}/dragonbones: a DragonBones 5.x skeleton,
 * {"skeleton", "armature"?, "atlas"?, "images"?, "file"?}
 * (dragonbones.h), likewise. */
void routes_dragonbones_import(struct server *S, const struct http_call *call)
{
	import_kind(S, call, ASSET_DRAGONBONES);
}

/* ---------- export ---------- */

/* What the export looks for among the scene's assets. */
struct skel_pick {
	int kind;                        /* ASSET_SPINE, ASSET_DRAGONBONES */
	const char *want;                /* ?file=, or NULL */
	char file[SKEL_FILE_MAX + 1];    /* the one found, "" for none */
	int n;                           /* assets of that kind */
};

static int pick_asset(void *ctx, const engine_asset_info *a)
{
	struct skel_pick *p = ctx;

	if (a->kind != p->kind)
		return 0;
	p->n++;
	if (!p->file[0] && (!p->want || !strcmp(p->want, a->file)))
		snprintf(p->file, sizeof(p->file), "%s", a->file);
	return 0;
}

/*
 * The Content-Disposition of an export of scene 'name' (RFC 6266) into
 * out[cap]: `attachment; filename="NAME SUFFIX"`, where every byte of the
 * name outside [A-Za-z0-9._-] becomes '_' (a scene id may hold ':', which
 * several file systems refuse; the quoted form then needs no escapes), and
 * when one did, `filename*=UTF-8''` with the name exactly, percent-encoded
 * (RFC 8187), which browsers prefer to the plain form.
 */
static void attachment_value(const char *name, const char *suffix, char *out, size_t cap)
{
	static const char attr[] = "!#$&+-.^_`|~";
	char plain[SCENE_ID_MAX + 1], coded[3 * SCENE_ID_MAX + 1];
	size_t n = 0, m = 0;
	bool changed = false;

	for (const unsigned char *p = (const unsigned char *)name; *p && n < SCENE_ID_MAX; p++) {
		bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9');
		bool keep = alnum || *p == '.' || *p == '_' || *p == '-';

		plain[n++] = keep ? (char)*p : '_';
		changed = changed || !keep;
		if (alnum || (*p && strchr(attr, *p)))
			coded[m++] = (char)*p;
		else
			m += (size_t)snprintf(coded + m, sizeof(coded) - m, "%%%02X", *p);
	}
	plain[n] = coded[m] = '\0';
	if (changed)
		snprintf(out, cap, "attachment; filename=\"%s%s\"; filename*=UTF-8''%s%s", plain,
			 suffix, coded, suffix);
	else
		snprintf(out, cap, "attachment; filename=\"%s%s\"", plain, suffix);
}

/*
 * The part both exports share: the scene read now or at ?at=SEQ, its one
 * skeleton asset of 'kind' (or ?file=), the file rewritten by the codec
 * and answered as application/json, to be saved as NAME.json (Spine) or
 * NAME_ske.json (DragonBones, the name its tools give a skeleton file).
 */
static void skeleton_export(struct server *S, const struct http_call *call, int kind)
{
	const char *name = call->name, *at = routes_arg(call->args, call->n_args, "at");
	const char *format = kind == ASSET_SPINE ? "Spine" : "DragonBones";
	struct skel_pick pick = { kind, routes_arg(call->args, call->n_args, "file"), "", 0 };
	const scene *s = engine_scene(S->e, name);
	scene *past = NULL;
	char *bytes = NULL, sha[65], disposition[160 + 4 * SCENE_ID_MAX];
	size_t len = 0;
	int64_t seq = -1;
	json_buf out;
	edit_error err;
	skel_export_info info;
	int rc;

	json_buf_init(&out, 0);
	if (!s) {
		http_respond_code(S, call->conn, RIGD_E_UNKNOWN_SCENE, "", "no scene '%s'", name);
		return;
	}
	if (at && !num_parse_i64(at, 0, NUM_SEQ_MAX, &seq)) {
		http_respond_code(S, call->conn, RIGD_E_BAD_SEQ, "at", "at must be a seq 0..2^53");
		return;
	}
	if ((rc = engine_assets(S->e, name, seq, pick_asset, &pick)) != 0) {
		if (rc == RIGD_E_BAD_SEQ)
			http_respond_code(S, call->conn, rc, "at", "scene '%s' has no seq %s", name, at);
		else
			http_respond_engine(S, call->conn, rc, name);
		return;
	}
	if (!pick.file[0]) {
		if (pick.want)
			http_respond_code(S, call->conn, RIGD_E_UNKNOWN_ASSET, "file",
					  "scene '%s' has no %s skeleton '%s'", name, format, pick.want);
		else
			http_respond_code(S, call->conn, RIGD_E_UNKNOWN_ASSET, "",
					  "scene '%s' has no %s skeleton to export (import one first)",
					  name, format);
		return;
	}
	if (pick.n > 1 && !pick.want) {
		http_respond_code(S, call->conn, RIGD_E_BAD_FIELD, "file",
				  "scene '%s' has %d %s skeletons: name one with ?file=", name, pick.n,
				  format);
		return;
	}
	if (seq > 0 && (rc = engine_at(S->e, name, seq, &past)) != 0) {
		http_respond_engine(S, call->conn, rc, name);
		return;
	}
	if (past)
		s = past;
	if ((rc = engine_asset_get(S->e, name, pick.file, seq, &bytes, &len, sha, NULL)) != 0) {
		http_respond_engine(S, call->conn, rc, name);
		goto out;
	}
	if (kind == ASSET_SPINE)
		rc = spine_export(bytes, len, pick.file, s, &out, &info, &err);
	else
		rc = dragonbones_export(bytes, len, pick.file,
					routes_arg(call->args, call->n_args, "armature"), s, &out,
					&info, &err);
	if (rc) {
		http_respond_error(S, call->conn, &err);
		goto out;
	}
	if (info.kept)
		serve_log(LOG_INFO, "%s export of %s: %d bones and slots without a node kept as "
			  "stored", format, pick.file, info.kept);
	len = out.len;
	char *text = json_buf_take(&out);
	if (!text) {
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
		goto out;
	}
	attachment_value(name, kind == ASSET_SPINE ? ".json" : "_ske.json", disposition,
			 sizeof(disposition));
	if (net_http_respond_download(S->n, call->conn, "application/json", text, len,
				      disposition) == RIGD_E_NOMEM)
		http_respond_code(S, call->conn, RIGD_E_NOMEM, "", "out of memory");
out:
	json_buf_release(&out);
	free(bytes);
	scene_free(past);
}

/* GET /api/scenes/{name}/spine[?at=SEQ][&file=F]: the scene's Spine file
 * rewritten from its nodes (spine_export.h). */
void routes_spine_export(struct server *S, const struct http_call *call)
{
	skeleton_export(S, call, ASSET_SPINE);
}

/* GET /api/scenes/{name}/dragonbones[?at=SEQ][&file=F][&armature=A]: the
 * scene's DragonBones file rewritten from its nodes
 * (dragonbones_export.h). */
void routes_dragonbones_export(struct server *S, const struct http_call *call)
{
	skeleton_export(S, call, ASSET_DRAGONBONES);
}
