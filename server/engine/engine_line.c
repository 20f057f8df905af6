/*
 * engine_line.c: what a batch's log line says and how long it is, checked
 * before the batch is queued.
 *
 * A log line travels beyond this database (a cluster's log stream, an
 * export imported elsewhere): an undo or a redo says which batch it undoes
 * or redoes, and that batch must be an earlier one of the same client, so
 * that undo and redo stacks rebuilt from the log are the same everywhere.
 * With a line limit set (engine_set_line_max: a cluster's log stream entry)
 * a batch whose line would not fit is refused before it is queued, so it
 * is never committed where it cannot be passed on.
 */
#include "engine_internal.h"

#include "core/err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)STORE_EDIT == (int)PROTO_LOG_EDIT && (int)STORE_UNDO == (int)PROTO_LOG_UNDO &&
	       (int)STORE_REDO == (int)PROTO_LOG_REDO, "a log line's kind is the log table's kind");
/* engine_submit_logged takes a decoded line's kind as it is, and stores it. */
_Static_assert((int)ENGINE_LOG_EDIT == (int)PROTO_LOG_EDIT &&
	       (int)ENGINE_LOG_UNDO == (int)PROTO_LOG_UNDO &&
	       (int)ENGINE_LOG_REDO == (int)PROTO_LOG_REDO, "engine_log_kind is a log line's kind");

void engine_set_line_max(engine *e, size_t max)
{
	e->line_max = max;
}

size_t engine_line_max(const engine *e)
{
	return e->line_max;
}

/* The bytes of the log line of a batch of 'ops_len' bytes of ops JSON,
 * as engine_log writes it (the ops as stored, re-encoded by the same
 * writer, are the same bytes). 0 or RIGD_E_NOMEM. */
int eng_line_len(int64_t seq, int64_t time_us, const char *client, bool has_client_seq,
		 int64_t client_seq, int kind, int64_t target, size_t ops_len,
		 const proto_log_asset *a, int n_assets, size_t *out)
{
	proto_buf b;
	edit_batch empty;
	int rc;

	edit_batch_init(&empty);
	snprintf(empty.client, sizeof(empty.client), "%s", client);
	empty.has_client_seq = has_client_seq;
	empty.client_seq = client_seq;
	proto_buf_init(&b, 0);
	rc = proto_encode_log_line_kind(&b, (uint64_t)seq, time_us, &empty, kind, target, a,
					n_assets);
	/* The empty batch wrote "[]" where the ops go. */
	if (!rc)
		*out = b.len - 2 + ops_len;
	proto_buf_release(&b);
	return rc;
}

int eng_line_fits(engine *e, const char *what, size_t len, edit_error *err)
{
	if (!e->line_max || len <= e->line_max)
		return 0;
	edit_error_set(err, RIGD_E_TOO_LARGE, -1, "ops",
		       "%s would be a log line of %zu bytes; a log line holds at most %zu bytes "
		       "(%zu MiB, a log stream entry): send it in smaller batches",
		       what, len, e->line_max, e->line_max >> 20);
	return RIGD_E_TOO_LARGE;
}

/* What eng_check_target reads of the target's row. */
typedef struct target_row {
	bool found;
	char client[SCENE_ID_MAX + 1];
	int kind;
} target_row;

static int target_cb(void *vctx, const store_edit *row)
{
	target_row *t = vctx;

	t->found = true;
	snprintf(t->client, sizeof(t->client), "%s", row->client);
	t->kind = row->kind;
	return 0;
}

int eng_check_target(engine *e, scene_rt *rt, const char *client, int64_t seq, int kind,
		     int64_t target, edit_error *err)
{
	const char *field = kind == STORE_UNDO ? "undo" : "redo";
	target_row t = { 0 };
	int rc;

	if (kind == STORE_EDIT)
		return 0;
	if (kind != STORE_UNDO && kind != STORE_REDO) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "kind", "kind %d: 0, 1 or 2", kind);
		return RIGD_E_BAD_FIELD;
	}
	if (target < 1 || target >= seq) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field,
			       "%s: %lld is not the seq of an earlier batch (1..%lld)", field,
			       (long long)target, (long long)(seq - 1));
		return RIGD_E_BAD_FIELD;
	}
	for (int i = 0; i < e->n_q && !t.found; i++)
		if (e->q[i].rt == rt && e->q[i].seq == target) {
			t.found = true;
			snprintf(t.client, sizeof(t.client), "%s", e->q[i].client);
			t.kind = e->q[i].kind;
		}
	if (!t.found) {
		rc = store_edits_ex(e->st, rt->id, target - 1, target, STORE_WANT_META, target_cb, &t);
		if (rc) {
			if (rc == RIGD_E_STORAGE)
				eng_set_errmsg(e, "%s", store_errmsg(e->st));
			edit_error_set(err, rc, -1, "", "%s", err_str(rc));
			return rc;
		}
	}
	if (!t.found) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field, "%s: seq %lld is not in the log",
			       field, (long long)target);
		return RIGD_E_BAD_FIELD;
	}
	if (strcmp(t.client, client) != 0) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field,
			       "%s: seq %lld is a batch of client '%s', not of '%s'", field,
			       (long long)target, t.client, client);
		return RIGD_E_BAD_FIELD;
	}
	if (t.kind == STORE_UNDO) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, field,
			       "%s: seq %lld is itself an undo (undo it by a redo of its target)",
			       field, (long long)target);
		return RIGD_E_BAD_FIELD;
	}
	return 0;
}

int engine_submit_logged(engine *e, const char *name, const edit_batch *b, int kind,
			 int64_t target, const edit_limits *lim, engine_ack *ack, edit_error *err)
{
	scene_rt *rt;
	int rc = eng_write_start(e, name, ack, err, &rt);

	if (rc)
		return rc;
	if (b->has_client_seq) {
		rc = eng_answer_resend(e, rt, b->client, b->client_seq, ack, err);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	if (kind != STORE_EDIT && !b->client[0]) {
		edit_error_set(err, RIGD_E_BAD_FIELD, -1, "client",
			       "an undo or a redo is a client's: the batch needs a client");
		return RIGD_E_BAD_FIELD;
	}
	if ((rc = eng_check_target(e, rt, b->client, rt->next_seq, kind, target, err)) != 0)
		return rc;
	return eng_apply_and_queue(e, rt, b, lim, kind, kind == STORE_EDIT ? 0 : target, ack, err);
}
