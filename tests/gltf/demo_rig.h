/*
 * demo_rig.h: the scenes the glTF tests export, shared by test_gltf.c and
 * gltf_tool.c so that the C and the JavaScript checks see the same nodes.
 *
 * demo_rig_build(s, false) is the demo rig (docs/transforms.md, sections 4,
 * 8 and 10): base t (0, 0.2, 0) yawed 30 degrees about y; arm t (0, 0.9, 0)
 * with pivot (0, -0.7, 0) bent 40 degrees about z; hand t (0, 0.7, 0); each
 * with its box bounds and a mesh. With 'rich' it adds what a round trip must
 * carry besides: a camera on the hand (section 5.3), a mirrored arm sharing
 * the arm's mesh (section 9.1), a hidden node, an unnamed node, a second root
 * with a non-uniform scale over a rotated child (inherited shear, section
 * 9.2), a pivot with negative zeros, a group with non-default camera values,
 * a mesh-kind node without a mesh, a name that needs escaping, and a node
 * with zero scale.
 */
#ifndef RIGD_TESTS_DEMO_RIG_H
#define RIGD_TESTS_DEMO_RIG_H

#include "core/math.h"
#include "core/scene.h"

#include <math.h>
#include <stdbool.h>

static inline node_props demo_props(vec3 t, quat r, vec3 half, const char *mesh)
{
	node_props p = node_props_default();

	p.t = t;
	p.r = r;
	if (half.x > 0) {
		p.has_bounds = true;
		p.bounds = aabb_make(vec3_scale(half, -1), half);
	}
	if (mesh) {
		p.mesh = mesh;
		p.kind = NODE_MESH;
	}
	return p;
}

/* Builds the demo into the empty scene 's'. Returns 0 or the first error. */
static inline int demo_rig_build(scene *s, bool rich)
{
	const double deg = M_PI / 180;
	quat yaw30 = quat_from_axis_angle(vec3_make(0, 1, 0), 30 * deg);
	quat bend40 = quat_from_axis_angle(vec3_make(0, 0, 1), 40 * deg);
	node_props p;
	int base, arm, hand, rc, n;

	p = demo_props(vec3_make(0, 0.2, 0), yaw30, vec3_make(0.35, 0.2, 0.35), "base_mesh");
	p.name = "base";
	if ((rc = scene_create(s, "base", -1, -1, &p, &base)) != 0)
		return rc;
	p = demo_props(vec3_make(0, 0.9, 0), bend40, vec3_make(0.12, 0.7, 0.12), "arm_mesh");
	p.pivot = vec3_make(0, -0.7, 0);
	p.name = "arm";
	if ((rc = scene_create(s, "arm", base, -1, &p, &arm)) != 0)
		return rc;
	p = demo_props(vec3_make(0, 0.7, 0), quat_identity(), vec3_make(0.22, 0.12, 0.22), "hand_mesh");
	p.name = "hand";
	if ((rc = scene_create(s, "hand", arm, -1, &p, &hand)) != 0)
		return rc;
	if (!rich)
		return 0;

	p = demo_props(vec3_make(0, 0.3, 0), quat_identity(), vec3_make(0, 0, 0), NULL);
	p.kind = NODE_CAMERA;
	p.name = "hand camera";
	p.fov_deg = 50;
	p.znear = 0.05;
	p.zfar = 200;
	if ((rc = scene_create(s, "cam", hand, -1, &p, NULL)) != 0)
		return rc;
	/* The mirrored arm: same mesh, S(-1, 1, 1), its own pivot. */
	p = demo_props(vec3_make(0, 0.9, 0), quat_from_axis_angle(vec3_make(0, 0, 1), -40 * deg),
		       vec3_make(0.12, 0.7, 0.12), "arm_mesh");
	p.s = vec3_make(-1, 1, 1);
	p.pivot = vec3_make(0.1, -0.7, 0.05);
	p.name = "arm (mirrored)";
	if ((rc = scene_create(s, "arm2", base, -1, &p, &n)) != 0)
		return rc;
	p = demo_props(vec3_make(0, 0.7, 0), quat_identity(), vec3_make(0.22, 0.12, 0.22), "hand_mesh");
	p.name = "hand2";
	p.visible = false;
	if ((rc = scene_create(s, "hand2", n, -1, &p, NULL)) != 0)
		return rc;
	p = demo_props(vec3_make(0.25, 0, -0.125), quat_from_euler_deg(vec3_make(10, 20, 30)),
		       vec3_make(0, 0, 0), NULL);
	if ((rc = scene_create(s, "unnamed_marker", hand, 0, &p, NULL)) != 0)
		return rc;

	/* A second root: non-uniform scale over a rotated child. */
	p = demo_props(vec3_make(2, 0, 0), quat_identity(), vec3_make(0, 0, 0), NULL);
	p.s = vec3_make(2, 0.5, 1);
	p.name = "prop \"stand\" \xc3\xa4\\";
	if ((rc = scene_create(s, "prop", -1, -1, &p, &n)) != 0)
		return rc;
	p = demo_props(vec3_make(0, 1, 0), quat_from_axis_angle(vec3_make(0, 0, 1), 45 * deg),
		       vec3_make(0.5, 0.5, 0.5), "base_mesh");
	p.name = "sheared";
	p.pivot = vec3_make(-0.0, 0.25, -0.0);
	if ((rc = scene_create(s, "sheared", n, -1, &p, NULL)) != 0)
		return rc;
	/* A group with camera values of its own and awkward numbers. */
	p = demo_props(vec3_make(-1e-3, 12345.678, 0.1), (quat){ 0.1, 0.2, 0.3, 0.9 },
		       vec3_make(0, 0, 0), NULL);
	p.s = vec3_make(0.001, 3, 1e3);
	p.fov_deg = 33;
	p.znear = 0.5;
	p.zfar = 10;
	p.name = "odd group";
	if ((rc = scene_create(s, "odd_group", n, -1, &p, &n)) != 0)
		return rc;
	p = demo_props(vec3_make(0, 0, 1), quat_identity(), vec3_make(0, 0, 0), NULL);
	p.kind = NODE_MESH;
	p.name = "mesh kind, no mesh";
	if ((rc = scene_create(s, "empty_mesh", n, -1, &p, NULL)) != 0)
		return rc;
	p = demo_props(vec3_make(0, 0, 2), quat_identity(), vec3_make(0, 0, 0), "arm_mesh");
	p.kind = NODE_GROUP;
	p.s = vec3_make(0, 1, 1);
	p.name = "squashed group with a mesh";
	return scene_create(s, "squashed", n, -1, &p, NULL);
}

#endif
