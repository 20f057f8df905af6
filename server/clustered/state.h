/*
 * state.h: struct clustered, what the cluster's side keeps for one rigd
 * (S->cx): the cluster layer's handle and the state of each module of
 * this folder. Made by clustered_start, freed by clustered_stop; every
 * function of the folder runs with it there.
 */
#ifndef RIGD_CLUSTERED_STATE_H
#define RIGD_CLUSTERED_STATE_H

#include "cluster/cluster.h"

#include <stdbool.h>

struct relay;
struct relay_http;
struct replica;
struct roster;

struct clustered {
	cluster *cl;                 /* this process in the cluster (cluster/) */
	struct relay *relay;         /* edits relayed to owners (relay.c) */
	struct relay_http *relay_http; /* imports relayed (relay_http.c) */
	struct replica *replica;     /* log streams followed (replica.c) */
	struct roster *roster;       /* other processes' participants (roster.c) */
	bool catalog_synced;         /* reconciled with the catalog once (lifecycle.c) */
};

/*
 * How long a request relayed to a scene's owner waits for its answer, or
 * for an owner, before it is looked at again: one and a half leases (the
 * time a dead owner's lease takes to lapse and be taken), at least 2 s.
 */
static inline double cx_answer_wait_s(int lease_ms)
{
	double s = lease_ms * 1.5 / 1000.0;

	return s < 2.0 ? 2.0 : s;
}

#endif
