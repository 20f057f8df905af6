/*
 * cluster_read.c: what the cluster reads from outside and checks before it
 * is used (see cluster_internal.h): the --redis URL, lease values and the
 * entries of the process registry, and the list of live processes they
 * make. Another program may have written anything into rigd's keys: every
 * reader here refuses what is not exactly of its shape and changes nothing
 * then. Also what the cluster tells of itself: its leases, counters and
 * the names of its states.
 */
#include "cluster.h"
#include "cluster_internal.h"

#include "core/err.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int cluster_parse_url(const char *url, char *host, int *port)
{
	static const char scheme[] = "redis://";
	const char *h, *colon;
	size_t hlen;
	long p = 6379;

	if (!url || strncmp(url, scheme, sizeof(scheme) - 1) != 0)
		return RIGD_E_BAD_FIELD;
	h = url + sizeof(scheme) - 1;
	colon = strrchr(h, ':');
	hlen = colon ? (size_t)(colon - h) : strlen(h);
	if (hlen == 0 || hlen >= CLUSTER_HOST_MAX)
		return RIGD_E_BAD_FIELD;
	for (size_t i = 0; i < hlen; i++) {
		char ch = h[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_'))
			return RIGD_E_BAD_FIELD;  /* no user, password, path or IPv6 */
	}
	if (colon) {
		char *end;

		if (!colon[1] || colon[1] < '0' || colon[1] > '9')
			return RIGD_E_BAD_FIELD;
		p = strtol(colon + 1, &end, 10);
		if (*end || p < 1 || p > 65535)
			return RIGD_E_BAD_FIELD;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	*port = (int)p;
	return 0;
}

bool cl_id_valid(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char ch = s[n];

		if (n + 1 >= max || !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
				      ch == '_' || ch == ':'))
			return false;
	}
	return n > 0;
}

/*
 * Reads a lease value "ID TOKEN" (an id of the id rule, a decimal token of
 * 1..2^63-1) into owner (CLUSTER_ID_MAX bytes) and *token. false for
 * anything else: a value another program wrote.
 */
bool cl_parse_holder(const char *v, size_t len, char *owner, int64_t *token)
{
	const char *sp = memchr(v, ' ', len);
	char id[CLUSTER_ID_MAX];
	size_t idlen;
	int64_t t = 0;

	if (!sp || (idlen = (size_t)(sp - v)) == 0 || idlen >= sizeof(id) || memchr(v, '\0', len))
		return false;
	memcpy(id, v, idlen);
	id[idlen] = '\0';
	if (!cl_id_valid(id, sizeof(id)) || !cl_parse_token(sp + 1, len - idlen - 1, &t))
		return false;
	memcpy(owner, id, idlen + 1);
	*token = t;
	return true;
}

bool cl_parse_token(const char *s, size_t len, int64_t *out)
{
	int64_t t = 0;

	if (len == 0 || len > 18 || s[0] == '0')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		t = t * 10 + (s[i] - '0');
	}
	*out = t;
	return true;
}

/* ---- the live processes ---- */

int cl_procs_add(struct cluster *c, const char *id, const char *info, size_t len)
{
	const char *sp = memchr(info, ' ', len);
	long leases = 0;
	size_t ulen;
	struct cl_proc *p;

	if (!cl_id_valid(id, CLUSTER_ID_MAX) || !sp || sp == info || sp - info > 7)
		return RIGD_E_BAD_FIELD;
	for (const char *q = info; q < sp; q++) {
		if (*q < '0' || *q > '9')
			return RIGD_E_BAD_FIELD;
		leases = leases * 10 + (*q - '0');
	}
	ulen = len - (size_t)(sp - info) - 1;
	if (leases > 1000000 || ulen == 0 || ulen >= CLUSTER_URL_MAX)
		return RIGD_E_BAD_FIELD;
	for (size_t i = 0; i < ulen; i++)
		if (sp[1 + i] <= ' ' || sp[1 + i] > '~')
			return RIGD_E_BAD_FIELD;
	if (c->n_procs == c->cap_procs) {
		int cap = c->cap_procs ? c->cap_procs * 2 : 8;

		if (!(p = realloc(c->procs, (size_t)cap * sizeof(*p))))
			return RIGD_E_NOMEM;
		c->procs = p;
		c->cap_procs = cap;
	}
	p = &c->procs[c->n_procs];
	if (!(p->url = malloc(ulen + 1)))
		return RIGD_E_NOMEM;
	memcpy(p->url, sp + 1, ulen);
	p->url[ulen] = '\0';
	snprintf(p->id, sizeof(p->id), "%s", id);
	p->leases = (int)leases;
	c->n_procs++;
	return 0;
}

void cl_procs_clear(struct cluster *c)
{
	for (int i = 0; i < c->n_procs; i++)
		free(c->procs[i].url);
	c->n_procs = 0;
}

int cluster_processes(const cluster *c, cluster_process_info *out, int cap)
{
	for (int i = 0; i < c->n_procs && i < cap; i++) {
		out[i].id = c->procs[i].id;
		out[i].url = c->procs[i].url;
		out[i].leases = c->procs[i].leases;
	}
	return c->n_procs;
}

const char *cluster_process_url(const cluster *c, const char *id)
{
	for (int i = 0; i < c->n_procs; i++)
		if (strcmp(c->procs[i].id, id) == 0)
			return c->procs[i].url;
	return NULL;
}

/* ---- what the cluster tells of itself ---- */

static void lease_info(const struct cl_lease *l, cluster_lease_info *out)
{
	uint64_t now = cl_now_ms();

	out->scene = l->scene;
	out->state = l->state;
	out->token = l->state == CLUSTER_LEASE_OWNED || l->state == CLUSTER_LEASE_OTHER ? l->token : 0;
	out->owner = out->token ? l->owner : "";
	out->valid_ms = l->state == CLUSTER_LEASE_OWNED && l->valid_until_ms > now ?
				(int64_t)(l->valid_until_ms - now) : 0;
	out->log_seq = l->state == CLUSTER_LEASE_OWNED ? l->log_seq : -1;
}

void cluster_lease_of(const cluster *c, const char *scene, cluster_lease_info *out)
{
	const struct cl_lease *l = cl_lease_find(c, scene);

	memset(out, 0, sizeof(*out));
	out->scene = scene;
	out->owner = "";
	out->log_seq = -1;
	if (l)
		lease_info(l, out);
}

int cluster_leases(const cluster *c, cluster_lease_info *out, int cap)
{
	for (int i = 0; i < c->n_leases && i < cap; i++)
		lease_info(&c->leases[i], &out[i]);
	return c->n_leases;
}

void cluster_get_stats(const cluster *c, cluster_stats *out)
{
	*out = c->stats;
	out->state = c->state;
	out->leases_owned = 0;
	for (int i = 0; i < c->n_leases; i++)
		out->leases_owned += cluster_owns(c, c->leases[i].scene, NULL);
}

const char *cluster_state_name(int state)
{
	static const char *const names[] = {"connecting", "up", "down"};

	return state >= 0 && state <= CLUSTER_DOWN ? names[state] : "?";
}

const char *cluster_lease_state_name(int state)
{
	static const char *const names[] = {"none", "asking", "owned", "other"};

	return state >= 0 && state <= CLUSTER_LEASE_OTHER ? names[state] : "?";
}
