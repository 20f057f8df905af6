/*
 * seed.h: the demo rig a fresh database starts with (a base, an arm and a
 * hand), so the viewer shows something on first start. Only ever run on an
 * empty database; the 2D demo character, when asked, on any database
 * that lacks it.
 */
#ifndef RIGD_SERVE_SEED_H
#define RIGD_SERVE_SEED_H

#include "engine/engine.h"

/* Creates scene "demo" with the rig and commits it. 0, or the engine's
 * error (the scene may then exist, empty). */
int seed_demo(engine *e);

/* The file names of the 2D demo character, in the web root's demo/. */
#define SEED_DEMO2D_SVG "demo/demo2d.svg"
#define SEED_DEMO2D_MANIFEST "demo/demo2d.json"

/*
 * Imports the 2D demo character as scene "demo2d" (2D), when there is no
 * scene of that name, from 'web_root'/demo/demo2d.svg and its manifest
 * demo2d.json, through the SVG import (svg_import_prepare and
 * engine_asset_submit: the asset and its nodes in one batch), and commits
 * it. 0 (also when the scene exists), RIGD_E_IO when a file cannot be read,
 * or the import's or the engine's error (logged, naming the entry); on
 * error no scene is left behind.
 */
int seed_demo2d(engine *e, const char *web_root);

#endif
