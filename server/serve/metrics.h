/*
 * metrics.h: the server's Prometheus metrics from one list. Each row names
 * a metric (the field name with "rigd_" before it), its type and help
 * text, the C type and format of its value, and where the value lives:
 * OWN, a counter of the server's own in struct metrics; READ, a value read
 * from net, the engine or the process when /metrics is scraped; HIST, the
 * commit latency histogram. The list generates struct metrics' fields and
 * the /metrics text, so the two cannot drift apart.
 *
 * Counting never allocates; rendering never changes a counter.
 */
#ifndef RIGD_SERVE_METRICS_H
#define RIGD_SERVE_METRICS_H

#include "codec/proto.h"

#include <stdbool.h>
#include <stdint.h>

/* X(field, type, help, ctype, format, where), in /metrics order. */
#define METRICS_LIST(X) \
	X(clients, gauge, "Open websocket connections.", long, "%ld", READ) \
	X(subscriptions, gauge, "Scene subscriptions of open websockets.", long, "%ld", READ) \
	X(scenes, gauge, "Scenes in the database.", long, "%ld", READ) \
	X(connections_total, counter, "Websocket connections accepted.", uint64_t, "%" PRIu64, READ) \
	X(connections_rejected_total, counter, \
	  "Websocket handshakes refused (path, Origin, client limit).", uint64_t, "%" PRIu64, READ) \
	X(batches_total, counter, "Edit batches committed.", uint64_t, "%" PRIu64, OWN) \
	X(batches_failed_total, counter, "Edit batches refused or not stored.", uint64_t, \
	  "%" PRIu64, OWN) \
	X(ops_total, counter, "Ops in committed batches.", uint64_t, "%" PRIu64, OWN) \
	X(recomputed_matrices_total, counter, "World matrices recomputed.", uint64_t, "%" PRIu64, \
	  OWN) \
	X(commits_total, counter, "Group commits (one per turn with batches).", uint64_t, \
	  "%" PRIu64, OWN) \
	X(commit_failures_total, counter, "Group commits that failed.", uint64_t, "%" PRIu64, OWN) \
	X(commit_seconds, histogram, "Latency of a group commit.", double, "%.9f", HIST) \
	X(commit_batches, gauge, "Batches in the last group commit.", long, "%ld", OWN) \
	X(commits_waited_total, counter, \
	  "Group commits that waited for their window (--commit-delay) to gather more batches.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(clients_gathered_total, counter, \
	  "Times a client streaming edits was read in bulk at the end of a commit's window " \
	  "instead of at each message.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(commit_queue, gauge, "Commits handed to the writer thread and not yet returned.", \
	  long, "%ld", READ) \
	X(batches_waiting, gauge, \
	  "Batches received while a commit was out, waiting for it to return.", long, "%ld", \
	  READ) \
	X(acks_waiting, gauge, "Answers waiting for the commit that holds their batch.", long, \
	  "%ld", READ) \
	X(clients_turn_held_total, counter, \
	  "Times a client's reading was stopped until the commit out returned: its share " \
	  "of the next commit was already waiting.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(clients_held_total, counter, \
	  "Times a client's reading was stopped because its replies piled up (back-pressure).", \
	  uint64_t, "%" PRIu64, OWN) \
	X(bytes_sent_total, counter, "Payload bytes written to sockets.", uint64_t, "%" PRIu64, \
	  READ) \
	X(bytes_received_total, counter, "Websocket and HTTP body bytes read.", uint64_t, \
	  "%" PRIu64, READ) \
	X(ws_messages_total, counter, "Websocket messages received.", uint64_t, "%" PRIu64, OWN) \
	X(http_requests_total, counter, "HTTP requests (API and files).", uint64_t, "%" PRIu64, \
	  READ) \
	X(updates_sent_total, counter, "Update frames sent to subscribers.", uint64_t, "%" PRIu64, \
	  OWN) \
	X(snapshots_sent_total, counter, "Snapshot frames sent to subscribers.", uint64_t, \
	  "%" PRIu64, OWN) \
	X(updates_coalesced_total, counter, \
	  "Turns folded into a later update for a client that was behind.", uint64_t, "%" PRIu64, \
	  OWN) \
	X(step_frames_total, counter, \
	  "Turn updates encoded as the turn ended, kept for clients a few turns behind.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(presence_coalesced_total, counter, \
	  "Presence messages replaced by a newer one before they were sent.", uint64_t, \
	  "%" PRIu64, OWN) \
	X(replies_sent_total, counter, "Replies and notices sent.", uint64_t, "%" PRIu64, OWN) \
	X(rate_limited_total, counter, "Messages and requests refused or delayed for their rate.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(unauthorized_total, counter, "Requests and messages without a valid token.", uint64_t, \
	  "%" PRIu64, OWN) \
	X(forbidden_total, counter, "Requests and messages whose token lacks the role.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(clients_dropped_total, counter, \
	  "Clients closed (1008) because they did not read their replies.", uint64_t, "%" PRIu64, \
	  OWN) \
	X(ws_closed_too_big_total, counter, "Websockets closed (1009) for size.", uint64_t, \
	  "%" PRIu64, READ) \
	X(snapshots_written_total, counter, "Scene snapshots stored.", uint64_t, "%" PRIu64, READ) \
	X(view_culls_total, counter, "Culls of a declared view (one per distinct view and scene state).", \
	  uint64_t, "%" PRIu64, OWN) \
	X(view_cull_seconds_total, counter, "Time spent in the culls of declared views.", double, \
	  "%.6f", OWN) \
	X(view_cull_tests_total, counter, "Box tests made by the culls of declared views.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(view_boxes_total, counter, \
	  "Updates of a scene's subtree boxes for views (one per scene state a view looked at).", \
	  uint64_t, "%" PRIu64, OWN) \
	X(view_boxes_seconds_total, counter, "Time spent updating boxes for views.", double, \
	  "%.6f", OWN) \
	X(view_box_refits_total, counter, \
	  "Node boxes recomputed by those updates (a root edit: none; a full build: every node).", \
	  uint64_t, "%" PRIu64, OWN) \
	X(view_frames_total, counter, "Frames built for subscriptions with a view.", uint64_t, \
	  "%" PRIu64, OWN) \
	X(view_frames_shared_total, counter, \
	  "Frames of subscriptions with a view copied from one built for an identical view.", \
	  uint64_t, "%" PRIu64, OWN) \
	X(resident_memory_bytes, gauge, "Resident set size.", long, "%ld", READ) \
	X(cpu_seconds_total, counter, "User and system CPU time.", double, "%.6f", READ) \
	X(uptime_seconds, gauge, "Seconds since start.", double, "%.3f", READ)

/* Upper bounds (seconds) of the commit latency histogram's buckets. */
#define METRICS_COMMIT_BUCKETS(X) \
	X(0.0001) X(0.00025) X(0.0005) X(0.001) X(0.0025) X(0.005) \
	X(0.01) X(0.025) X(0.05) X(0.1) X(0.25) X(1.0)
#define METRICS_COUNT_ONE_(le) +1
#define METRICS_N_BUCKETS (0 METRICS_COMMIT_BUCKETS(METRICS_COUNT_ONE_))

#define METRICS_FIELD_OWN(ctype, field) ctype field;
#define METRICS_FIELD_READ(ctype, field)
#define METRICS_FIELD_HIST(ctype, field)
#define METRICS_FIELD_(field, type, help, ctype, fmt, where) METRICS_FIELD_##where(ctype, field)

/* The server's own counters (the OWN rows), and the histogram's state. */
struct metrics {
	METRICS_LIST(METRICS_FIELD_)
	uint64_t commit_bucket[METRICS_N_BUCKETS + 1];  /* the last: +Inf */
	double commit_sum_s;
};

/* The READ rows' values, read when /metrics is scraped (routes.c). */
#define METRICS_SAMPLE_OWN(ctype, field)
#define METRICS_SAMPLE_READ(ctype, field) ctype field;
#define METRICS_SAMPLE_HIST(ctype, field)
#define METRICS_SAMPLE_(field, type, help, ctype, fmt, where) METRICS_SAMPLE_##where(ctype, field)
struct metrics_sample {
	METRICS_LIST(METRICS_SAMPLE_)
};

/* Counts one group commit that took 'seconds'. */
void metrics_observe_commit(struct metrics *m, double seconds);

/* Counts one frame sent to a subscriber: a snapshot, or an update that
 * covers 'covered' turns. */
void metrics_count_sent(struct metrics *m, bool snapshot, int covered);

/* Appends the /metrics text (Prometheus exposition format 0.0.4) of
 * counters 'm' and values 'v' to 'b'. 0, or RIGD_E_NOMEM with 'b' holding
 * part of it. */
int metrics_render(const struct metrics *m, const struct metrics_sample *v, proto_buf *b);

/* Appends printf output of at most 255 bytes (longer is cut). 0,
 * RIGD_E_NOMEM, or RIGD_E_INTERNAL for a bad format. */
int metrics_appendf(proto_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends metrics of their own, each its HELP and TYPE ('counter' or
 * 'gauge') lines and its one sample, "NAME VALUE": for the metrics that
 * live outside struct metrics (the cluster's). 0 or RIGD_E_NOMEM. */
struct metrics_row {
	const char *name, *type, *help;
	uint64_t value;
};
int metrics_put_rows(proto_buf *b, const struct metrics_row *v, int n);

#endif
