/*
 * clustered.h: the cluster's side of rigd (--redis; docs/deploy.md,
 * "Several processes on one Redis"), above serve/ and cluster/. The
 * program hands its hook table to serve_main, which uses it when --redis
 * is given; a rigd built without it (RIGD_CLUSTER=OFF) passes NULL.
 */
#ifndef RIGD_CLUSTERED_H
#define RIGD_CLUSTERED_H

struct serve_hooks;

/* The table of the cluster's hooks (serve/serve_hooks.h); static. */
const struct serve_hooks *clustered_hooks(void);

#endif
