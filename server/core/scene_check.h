/*
 * scene_check.h: the check the scene's edits add to node_props_check and
 * scene_layer_syntax_error (scene.h): whether a node's channels make a
 * finite local matrix (scene_check.c).
 *
 * Private to server/core/ (the scene_*.c files). A check reads its
 * arguments only: it never sees a scene.
 */
#ifndef RIGD_SCENE_CHECK_H
#define RIGD_SCENE_CHECK_H

#include "math.h"

#include <stdbool.h>

/* 0 when the local matrix of channels t, r, sc, pivot and shear_deg (r
 * normalised first; mat4_compose_pivot2d) is finite, else
 * RIGD_E_NOT_FINITE. */
int sc_check_local(vec3 t, quat r, vec3 sc, vec3 pivot, const double shear_deg[2]);

/* True when a shear [shx, shy] (degrees) makes a node's x and y axes
 * collinear: |shy - shx| is 90 modulo 180, to within 1e-9 degrees. */
bool sc_shear_collinear(const double shear_deg[2]);

#endif
