/*
 * order2d.js: the facing and draw order rules of a 2D scene
 * (docs/protocol.md "2D scenes"), read from a SceneModel.
 *
 * The server sends the draw order ("order") in every snapshot of a 2D scene
 * and in each update that changes it; the viewer draws that list. These
 * functions say, for the panels, which facing a node has and what its z is
 * for it, and give the order of a model that came without one (an HTTP
 * tree of an earlier seq). Pure: no DOM, usable from node's test runner.
 */

/* The 2x2 determinant of a column-major 4x4 world matrix. */
export function det2(m) {
	return m ? m[0] * m[5] - m[1] * m[4] : 1;
}

/* The node's effective facing: its own, else its nearest ancestor's, else
 * its root's natural one ("left" when the root's world matrix is mirrored). */
export function effectiveFacing(model, id) {
	let node = model.get(id);
	let last = node;
	for (; node; node = node.parent === null ? null : model.get(node.parent)) {
		if (node.facing) return node.facing;
		last = node;
	}
	return last && det2(last.world) < 0 ? 'left' : 'right';
}

/* A node's z for a facing ('right' or 'left'). */
export function zFor(node, facing) {
	if (node.z && typeof node.z === 'object') return Number(node.z[facing]);
	return Number(node.z) || 0;
}

/* The z as people read it: "3", or "right 2 / left -1". */
export function zText(z) {
	if (z && typeof z === 'object') return z.right === z.left ? `${z.right}` : `right ${z.right} / left ${z.left}`;
	return `${z ?? 0}`;
}

/*
 * The ids of the nodes with a layer, back to front: the server's order when
 * the model has one, else the rule (sorted by the z of each node's
 * effective facing, ties in preorder).
 */
export function drawOrder(model) {
	if (Array.isArray(model.drawOrder)) return model.drawOrder.filter((id) => model.get(id));
	const rows = [];
	model.order().forEach((id, pre) => {
		const node = model.get(id);
		if (node.layer) rows.push({ id, pre, z: zFor(node, effectiveFacing(model, id)) });
	});
	rows.sort((a, b) => a.z - b.z || a.pre - b.pre);
	return rows.map((r) => r.id);
}
