/*
 * seed.h: the demo rig a fresh database starts with (a base, an arm and a
 * hand), so the viewer shows something on first start. Only ever run on an
 * empty database.
 */
#ifndef RIGD_SERVE_SEED_H
#define RIGD_SERVE_SEED_H

#include "engine/engine.h"

/* Creates scene "demo" with the rig and commits it. 0, or the engine's
 * error (the scene may then exist, empty). */
int seed_demo(engine *e);

#endif
