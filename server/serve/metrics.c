/*
 * metrics.c: counting commits and rendering /metrics (see metrics.h).
 * Never changes a counter while rendering.
 */
#include "metrics.h"
#include "peers.h"
#include "server.h"
#include "util.h"

#include "core/err.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define METRICS_LE_(le) le,
static const double bucket_s[METRICS_N_BUCKETS] = {METRICS_COMMIT_BUCKETS(METRICS_LE_)};

/* The READ rows' values, read when /metrics is scraped. */
#define METRICS_SAMPLE_OWN(ctype, field)
#define METRICS_SAMPLE_READ(ctype, field) ctype field;
#define METRICS_SAMPLE_HIST(ctype, field)
#define METRICS_SAMPLE_(field, type, help, ctype, fmt, where) METRICS_SAMPLE_##where(ctype, field)
struct sample {
	METRICS_LIST(METRICS_SAMPLE_)
};

void metrics_observe_commit(struct metrics *m, double seconds)
{
	int i;

	for (i = 0; i < METRICS_N_BUCKETS && seconds > bucket_s[i]; i++)
		;
	m->commit_bucket[i]++;
	m->commit_sum_s += seconds;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void read_sample(struct server *S, struct sample *v)
{
	net_stats ns;
	engine_stats es;
	struct rusage ru;

	net_get_stats(S->n, &ns);
	engine_get_stats(S->e, &es);
	getrusage(RUSAGE_SELF, &ru);
	v->clients = ns.ws_clients;
	v->subscriptions = 0;
	for (int i = 0; i < S->n_scenes; i++)
		v->subscriptions += S->scenes[i]->n_subs;
	v->scenes = engine_scenes(S->e, NULL, 0);
	v->connections_total = ns.ws_opened;
	v->connections_rejected_total = ns.ws_rejected;
	v->bytes_sent_total = ns.bytes_sent;
	v->bytes_received_total = ns.bytes_received;
	v->http_requests_total = ns.http_requests;
	v->ws_closed_too_big_total = ns.ws_closed_too_big;
	v->snapshots_written_total = es.snapshots;
	v->resident_memory_bytes = rss_kb() * 1024;
	v->cpu_seconds_total = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
			       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	v->uptime_seconds = serve_now_s() - S->started;
}

int metrics_appendf(proto_buf *b, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0)
		return RIGD_E_INTERNAL;
	return proto_buf_append(b, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
}

int metrics_put(proto_buf *b, const char *name, const char *type, const char *help,
		uint64_t value)
{
	const char *parts[] = { "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (proto_buf_append(b, parts[i], strlen(parts[i])))
			return RIGD_E_NOMEM;
	return metrics_appendf(b, "%s %" PRIu64 "\n", name, value);
}

/* The histogram's sample lines (its HELP and TYPE come from the list). */
static int render_histogram(const struct metrics *m, proto_buf *b)
{
	uint64_t cum = 0;
	int rc = 0;

	for (int i = 0; i < METRICS_N_BUCKETS; i++) {
		cum += m->commit_bucket[i];
		rc = rc || metrics_appendf(b, "rigd_commit_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
				    bucket_s[i], cum);
	}
	cum += m->commit_bucket[METRICS_N_BUCKETS];
	rc = rc || metrics_appendf(b, "rigd_commit_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
			    "rigd_commit_seconds_sum %.9f\nrigd_commit_seconds_count %" PRIu64 "\n",
			    cum, m->commit_sum_s, cum);
	return rc;
}

#define METRICS_VALUE_OWN(field, fmt) metrics_appendf(b, "rigd_" #field " " fmt "\n", S->m.field)
#define METRICS_VALUE_READ(field, fmt) metrics_appendf(b, "rigd_" #field " " fmt "\n", v.field)
#define METRICS_VALUE_HIST(field, fmt) render_histogram(&S->m, b)
#define METRICS_RENDER_(field, type, help, ctype, fmt, where) \
	rc = rc || metrics_appendf(b, "# HELP rigd_" #field " " help "\n# TYPE rigd_" #field " " \
				   #type "\n"); \
	rc = rc || METRICS_VALUE_##where(field, fmt);

int metrics_render(struct server *S, proto_buf *b)
{
	struct sample v;
	int rc = 0;

	read_sample(S, &v);
	METRICS_LIST(METRICS_RENDER_)
	rc = rc || peers_metrics(S, b);
	return rc ? RIGD_E_NOMEM : 0;
}
