/*
 * dragonbones_export.h: a DragonBones 5.x skeleton file rewritten from a
 * scene: the _ske.json the DragonBones import stored (dragonbones.h) with
 * one armature's bone transforms and inherit flags, slot order and setup
 * displayIndex taken from the scene's nodes, everything else as the file
 * had it (docs/dragonbones.md, "Export").
 *
 * The mapping back (the import's, inverted): x, y = t; skY = -angle (the
 * screen angle of r, brought within 180 degrees of the file's skY);
 * skX = skY - shear[1]; scX, scY = s; the four inherit flags true for
 * INHERIT_NORMAL, else false where INHERIT_DB's DB_NO_ bit is set. A node
 * with shear[0] != 0 or a Spine inherit mode has no DragonBones form: the
 * export is refused, naming the bone. Nodes are found by id as in
 * spine_export.h; a bone or slot without a node is kept as it was.
 *
 * Reads the scene, never changes it.
 */
#ifndef RIGD_DRAGONBONES_EXPORT_H
#define RIGD_DRAGONBONES_EXPORT_H

#include "core/edit.h"
#include "core/scene.h"
#include "json.h"
#include "spine_export.h"

#include <stddef.h>

/*
 * Writes into 'out' (appended) the DragonBones file 'json' ('len' bytes,
 * the stored asset 'file') with armature 'armature' (NULL: the first one
 * with a bone that has a node in 's', else the first) rewritten from 's';
 * fills *info (may be NULL). Members the file has are rewritten in place;
 * a member it lacks is added only when not at DragonBones' default
 * (transform values 0 and scale 1, inherit flags true, displayIndex 0).
 * 0, or in 'err' (out unchanged):
 *   bad_skeleton: the file has no "armature" array of named armatures, or
 *     none named 'armature' (field "armature"); a bone with shear[0] != 0
 *     or a Spine inherit mode (field "armature[A].bone[I]", naming it); a
 *     slot's layer that is not a display of that slot in the default skin
 *     (field "armature[A].slot[I].displayIndex");
 *   not_finite, nomem.
 */
int dragonbones_export(const char *json, size_t len, const char *file, const char *armature,
		       const scene *s, json_buf *out, skel_export_info *info, edit_error *err);

#endif
