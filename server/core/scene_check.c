/*
 * scene_check.c: what a node's values must be before a scene stores them
 * (see scene.h and scene_check.h): finite numbers, a non-zero quaternion,
 * well-formed boxes, strings that are UTF-8 text of bounded length, a
 * layer of the syntax "FILE#GROUP", a local matrix that stays finite.
 *
 * Checks values only: it never reads or changes a scene, so every edit can
 * call it before its first change.
 */
#include "scene_check.h"
#include "inherit.h"

#include "err.h"
#include "scene.h"

#include <math.h>
#include <string.h>

static bool vec3_finite(vec3 v)
{
	return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

/* True when 's' is well-formed UTF-8 (no overlong forms, no encoded
 * surrogates, nothing above U+10FFFF). Names and mesh references travel in
 * JSON to every browser, so a scene never holds bytes that are not text,
 * whatever path (an edit, a log import, a glTF file) brought them. */
static bool utf8_valid(const char *str)
{
	const unsigned char *u = (const unsigned char *)str;

	while (*u) {
		unsigned c = *u, need, cp;

		if (c < 0x80) {
			u++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			need = 1, cp = c & 0x1F;
		else if (c >= 0xE0 && c <= 0xEF)
			need = 2, cp = c & 0x0F;
		else if (c >= 0xF0 && c <= 0xF4)
			need = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((u[k] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (u[k] & 0x3F);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		u += need + 1;
	}
	return true;
}

/* A character of a layer's FILE part; its GROUP part allows ':' too. */
static bool file_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

const char *scene_layer_syntax_error(const char *layer)
{
	const char *hash = strchr(layer, '#'), *group;
	size_t file_len, group_len;

	if (!hash)
		return "must be FILE#GROUP (no '#' found)";
	file_len = (size_t)(hash - layer);
	group = hash + 1;
	group_len = strlen(group);
	if (file_len == 0)
		return "FILE (before '#') is empty";
	if (file_len > SCENE_LAYER_FILE_MAX)
		return "FILE (before '#') is longer than 128 characters";
	if (layer[0] == '.')
		return "FILE (before '#') may not start with a dot";
	for (size_t i = 0; i < file_len; i++)
		if (!file_char(layer[i]))
			return "FILE (before '#') may hold only A-Z a-z 0-9 _ . -";
	if (group_len == 0)
		return "GROUP (after '#') is empty";
	if (group_len > SCENE_LAYER_GROUP_MAX)
		return "GROUP (after '#') is longer than 128 characters";
	for (size_t i = 0; i < group_len; i++)
		if (!file_char(group[i]) && group[i] != ':')
			return "GROUP (after '#') may hold only A-Z a-z 0-9 _ . : -";
	return NULL;
}

bool sc_shear_collinear(const double shear_deg[2])
{
	/* The axes are at screen angles a + shx and a + shy + 90 (the y axis
	 * of angle 0 points 90 degrees clockwise of x): collinear when
	 * shy - shx is 90 modulo 180. */
	double d = fmod(shear_deg[1] - shear_deg[0], 180);

	return fabs(fabs(d) - 90) <= 1e-9;
}

bool scene_shear_collinear(const double shear_deg[2])
{
	return sc_shear_collinear(shear_deg);
}

int node_props_check(const node_props *p, unsigned mask, unsigned *bad_prop)
{
	unsigned bad = 0;
	int err = 0;
	quat q;

	if ((mask & PROP_T) && !vec3_finite(p->t))
		bad = PROP_T, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_R) && (err = quat_normalize(p->r, &q)) != 0)
		bad = PROP_R;
	else if ((mask & PROP_S) && !vec3_finite(p->s))
		bad = PROP_S, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_PIVOT) && !vec3_finite(p->pivot))
		bad = PROP_PIVOT, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_BOUNDS) && p->has_bounds &&
		 (!vec3_finite(p->bounds.min) || !vec3_finite(p->bounds.max)))
		bad = PROP_BOUNDS, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_BOUNDS) && p->has_bounds && aabb_is_empty(p->bounds))
		bad = PROP_BOUNDS, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_MESH) && p->mesh &&
		 (!p->mesh[0] || strlen(p->mesh) > SCENE_MESH_MAX || !utf8_valid(p->mesh)))
		bad = PROP_MESH, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_NAME) && p->name &&
		 (strlen(p->name) > SCENE_NAME_MAX || !utf8_valid(p->name)))
		bad = PROP_NAME, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_KIND) && (p->kind < NODE_GROUP || p->kind > NODE_CAMERA))
		bad = PROP_KIND, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_LAYER) && p->layer && scene_layer_syntax_error(p->layer))
		bad = PROP_LAYER, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_Z) && !(isfinite(p->z_right) && isfinite(p->z_left)))
		bad = PROP_Z, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_FACING) && (p->facing < FACING_NONE || p->facing > FACING_LEFT))
		bad = PROP_FACING, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_SHEAR) && !(isfinite(p->shear[0]) && isfinite(p->shear[1])))
		bad = PROP_SHEAR, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_SHEAR) && sc_shear_collinear(p->shear))
		bad = PROP_SHEAR, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_INHERIT) && !inherit_mode_valid(p->inherit))
		bad = PROP_INHERIT, err = RIGD_E_BAD_FIELD;
	else if ((mask & PROP_CAMERA) &&
		 (!isfinite(p->fov_deg) || !isfinite(p->znear) || !isfinite(p->zfar)))
		bad = PROP_CAMERA, err = RIGD_E_NOT_FINITE;
	else if ((mask & PROP_CAMERA) &&
		 !(p->fov_deg > 0 && p->fov_deg < 180 && p->znear > 0 && p->zfar > p->znear))
		bad = PROP_CAMERA, err = RIGD_E_BAD_FIELD;
	if (bad_prop)
		*bad_prop = bad;
	return err;
}

/* Finite channels can still give a non-finite local matrix (a pivot near
 * DBL_MAX times a scale of 2): such a node is refused, never stored, so no
 * world matrix below it can turn into inf or NaN. */
int sc_check_local(vec3 t, quat r, vec3 sc, vec3 pivot, const double shear_deg[2])
{
	quat q;

	if (quat_normalize(r, &q) != 0)
		return RIGD_E_NOT_FINITE;
	return mat4_is_finite(mat4_compose_pivot2d(t, q, sc, pivot, shear_deg)) ? 0
										: RIGD_E_NOT_FINITE;
}
