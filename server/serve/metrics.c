/*
 * metrics.c: counting commits and rendering /metrics (see metrics.h).
 * Never changes a counter while rendering.
 */
#include "metrics.h"

#include "core/err.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define METRICS_LE_(le) le,
static const double bucket_s[METRICS_N_BUCKETS] = {METRICS_COMMIT_BUCKETS(METRICS_LE_)};

void metrics_observe_commit(struct metrics *m, double seconds)
{
	int i;

	for (i = 0; i < METRICS_N_BUCKETS && seconds > bucket_s[i]; i++)
		;
	m->commit_bucket[i]++;
	m->commit_sum_s += seconds;
}

void metrics_count_sent(struct metrics *m, bool snapshot, int covered)
{
	if (snapshot) {
		m->snapshots_sent_total++;
	} else {
		m->updates_sent_total++;
		if (covered > 1)
			m->updates_coalesced_total += (uint64_t)(covered - 1);
	}
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

static int metrics_put(proto_buf *b, const char *name, const char *type, const char *help,
		       uint64_t value)
{
	const char *parts[] = { "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (proto_buf_append(b, parts[i], strlen(parts[i])))
			return RIGD_E_NOMEM;
	return metrics_appendf(b, "%s %" PRIu64 "\n", name, value);
}

int metrics_put_rows(proto_buf *b, const struct metrics_row *v, int n)
{
	for (int i = 0; i < n; i++)
		if (metrics_put(b, v[i].name, v[i].type, v[i].help, v[i].value))
			return RIGD_E_NOMEM;
	return 0;
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

#define METRICS_VALUE_OWN(field, fmt) metrics_appendf(b, "rigd_" #field " " fmt "\n", m->field)
#define METRICS_VALUE_READ(field, fmt) metrics_appendf(b, "rigd_" #field " " fmt "\n", v->field)
#define METRICS_VALUE_HIST(field, fmt) render_histogram(m, b)
#define METRICS_RENDER_(field, type, help, ctype, fmt, where) \
	rc = rc || metrics_appendf(b, "# HELP rigd_" #field " " help "\n# TYPE rigd_" #field " " \
				   #type "\n"); \
	rc = rc || METRICS_VALUE_##where(field, fmt);

int metrics_render(const struct metrics *m, const struct metrics_sample *v, proto_buf *b)
{
	int rc = 0;

	METRICS_LIST(METRICS_RENDER_)
	return rc ? RIGD_E_NOMEM : 0;
}
