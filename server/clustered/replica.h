/*
 * replica.h: every process keeps every scene of the cluster up to date from
 * its owner's log stream in Redis (--redis; docs/deploy.md, "Several
 * processes on one Redis").
 *
 * The owner appends each batch it commits to the scene's log stream (the
 * log line rigd stores, relative ops already resolved), guarded by its
 * fencing token; every process reads the stream and submits the batches it
 * does not have yet, in seq order, to its own turn, with the batch's own
 * client and client_seq. Its own SQLite then holds the same log, its scene
 * the same bits (replay is bit-identical), and its subscribers get their
 * updates from its own journal with the usual cursor rules. The owner
 * acknowledges a batch only once the stream holds it. A new owner commits
 * only once it has applied the stream up to its end.
 */
#ifndef RIGD_CLUSTERED_REPLICA_H
#define RIGD_CLUSTERED_REPLICA_H

#include "codec/proto.h"
#include "core/edit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pending;
struct server;

/* cluster callback ('ctx' the server): batch 'seq' of scene 'name' from
 * its log stream; applied (submitted to this turn) when it is the next
 * seq this process lacks, skipped when it has it, and a gap or a batch
 * that does not apply is logged and leaves the scene as it is. */
void replica_line(void *ctx, const char *name, uint64_t seq, int64_t token, const char *line,
		  size_t len);

/* cluster callbacks ('ctx' the server): batch 'seq' of scene 'name' that
 * this process asked the others for (applied as replica_line, a duplicate
 * skipped; with 'more', the next part is asked for at once; at the end of
 * a part the stream is read again from its oldest entry); and a process
 * that fell behind asks this one, owner or not, for the batches from
 * 'since' on: up to 500 are sent to it, of those this copy holds that the
 * cluster's log holds (taken from the stream or a catch-up, seen in the
 * stream, or confirmed to this process as their owner). */
void replica_catchup_line(void *ctx, const char *name, uint64_t seq, const char *line,
			  size_t len, bool more);
void replica_catchup_ask(void *ctx, const char *from, const char *name, uint64_t since);

/* Every second: a scene behind what its stream keeps asks the other live
 * processes again (every 2 s while the gap lasts). */
void replica_tick(struct server *S);

/* After the turn's commit ('commit_rc' its result): a failed commit reads
 * the streams of the scenes it touched again. */
void replica_turn_end(struct server *S, int commit_rc);

/* After the commit of scene 'name' from seq 'from' (excluded) to 'to': the
 * owner appends those batches to the scene's log stream. */
void replica_publish(struct server *S, const char *name, int64_t from, int64_t to);

/*
 * As the owner of the scene of committed batch 'p': keeps a copy of it
 * (taking its ik report) to answer once the scene's log stream holds it,
 * and returns true; false when it is to be answered now (alone, not the
 * owner, or the stream holds it already).
 */
bool replica_hold(struct server *S, struct pending *p);

/* cluster callback: what became of the append of batch 'seq' of scene
 * 'name'. Held answers up to it are sent: acks, or, when it failed,
 * `unavailable` saying the edit is committed here but may not be kept. */
void replica_published(void *ctx, const char *name, uint64_t seq, bool ok, const char *why);

/* Whether this process has applied scene 'name''s log up to where it
 * stood when it took the lease (it may commit then), and has reconciled
 * its database with the cluster's catalog once (lifecycle.c). */
bool replica_caught_up(struct server *S, const char *name);

/*
 * The fence (docs/deploy.md, "A batch committed but not confirmed"): a
 * batch committed here whose append the stream did not confirm, and, at
 * start and after each reconnection, the whole copy, are settled against
 * the scene's log stream before the scene takes edits here again or
 * applies more of the stream: kept when the stream holds the batch,
 * appended again when this process owns the scene and the stream ends
 * before it, else the copy is taken back (engine_rewind) and the stream
 * applies from there, subscribers resyncing from a snapshot.
 *
 * replica_probed is the cluster callback with the stream's answer;
 * replica_check_settled returns 0, or RIGD_E_UNAVAILABLE with 'err' saying
 * why scene 'name' takes no edits here yet; replica_unreplicated is the
 * cluster callback for a batch WAIT found short of --redis-wait replicas
 * (its held answer says so).
 */
void replica_probed(void *ctx, const char *name, uint64_t seq, int64_t last, int64_t token,
		    const char *line, size_t len);
int replica_check_settled(struct server *S, const char *name, edit_error *err);
void replica_unreplicated(void *ctx, const char *name, uint64_t seq, int got);

/* Frees what it holds; accepts none. */
void replica_free(struct server *S);

/* Forgets what this process knew of scene 'name''s log stream (the scene
 * was deleted; a scene of that name later starts again at seq 1). */
void replica_forget(struct server *S, const char *name);

/* Appends its metrics. 0 or RIGD_E_NOMEM. */
int replica_metrics(struct server *S, proto_buf *b);

#endif
