/*
 * overlays.js: what the viewport draws on top of the nodes.
 *
 *   - a ground grid and world axes;
 *   - world AABBs per node (docs/transforms.md 8: the node's local box through W,
 *     coordinate-wise min and max) and per subtree (the union over the
 *     subtree), the whole tree's box drawn strongest;
 *   - the selected node's outline and its pivot (the point W * pivot that
 *     rotation and scale keep fixed);
 *   - the nodes other people have selected, outlined in their colours.
 *
 * Boxes are computed from the server's world matrices; the overlay layers
 * are rebuilt lazily, only when shown and only after something changed.
 */
import * as THREE from 'three';
import { multiply, transformPoint, unionBox, worldBox } from './mat.js';
import { colourFor } from './util.js';

/* The 12 edges of the unit cube [-0.5, 0.5]^3, as 24 points. */
const CUBE_EDGES = (() => {
	const c = (i) => [i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5];
	const out = [];
	for (let a = 0; a < 8; a++) {
		for (const bit of [1, 2, 4]) if (!(a & bit)) out.push(...c(a), ...c(a | bit));
	}
	return new Float32Array(out);
})();

/* Appends the 24 edge points of an axis-aligned box to 'out'. */
function pushBoxEdges(out, box) {
	for (let i = 0; i < CUBE_EDGES.length; i += 3) {
		for (let k = 0; k < 3; k++) out.push(CUBE_EDGES[i + k] < 0 ? box.min[k] : box.max[k]);
	}
}

/* A LineSegments whose points are rewritten wholesale. */
class LineSet {
	constructor(parent, colour, { opacity = 1, depthTest = true, dashed = false } = {}) {
		this.geometry = new THREE.BufferGeometry();
		this.material = dashed
			? new THREE.LineDashedMaterial({ color: colour, dashSize: 0.04, gapSize: 0.03, transparent: opacity < 1, opacity, depthTest })
			: new THREE.LineBasicMaterial({ color: colour, transparent: opacity < 1, opacity, depthTest, vertexColors: colour === null });
		this.lines = new THREE.LineSegments(this.geometry, this.material);
		this.lines.frustumCulled = false;
		this.lines.renderOrder = depthTest ? 0 : 10;
		this.dashed = dashed;
		parent.add(this.lines);
	}

	set(points, colours = null) {
		this.geometry.dispose();
		this.geometry = new THREE.BufferGeometry();
		this.geometry.setAttribute('position', new THREE.Float32BufferAttribute(points, 3));
		if (colours) this.geometry.setAttribute('color', new THREE.Float32BufferAttribute(colours, 3));
		this.lines.geometry = this.geometry;
		if (this.dashed && points.length) this.lines.computeLineDistances();
	}

	set visible(v) {
		this.lines.visible = v;
	}

	dispose() {
		this.lines.removeFromParent();
		this.geometry.dispose();
		this.material.dispose();
	}
}

/* A round dot texture for the pivot marker. */
function dotTexture() {
	const canvas = document.createElement('canvas');
	canvas.width = canvas.height = 64;
	const g = canvas.getContext('2d');
	g.beginPath();
	g.arc(32, 32, 26, 0, Math.PI * 2);
	g.fillStyle = '#ffffff';
	g.fill();
	g.lineWidth = 8;
	g.strokeStyle = '#111111';
	g.stroke();
	const tex = new THREE.CanvasTexture(canvas);
	tex.colorSpace = THREE.SRGBColorSpace;
	return tex;
}

export class Overlays {
	constructor(scene) {
		this.group = new THREE.Group();
		this.group.name = 'rigd-overlays';
		scene.add(this.group);
		this.flags = { grid: true, axes: true, nodeBoxes: false, subtreeBoxes: false, pivot: true };

		this.grid = new THREE.GridHelper(20, 40, 0x4a5160, 0x2c313a);
		this.grid.material.transparent = true;
		this.grid.material.opacity = 0.8;
		this.group.add(this.grid);
		this.axes = new THREE.AxesHelper(1);
		this.axes.material.depthTest = false;
		this.axes.renderOrder = 5;
		this.group.add(this.axes);

		this.nodeBoxes = new LineSet(this.group, null, { opacity: 0.9 });
		this.subtreeBoxes = new LineSet(this.group, null, { opacity: 0.95 });
		this.selection = new LineSet(this.group, 0xffffff, { depthTest: false });
		this.others = new LineSet(this.group, null, { depthTest: false });

		this._dotTexture = dotTexture();
		this.pivotGeometry = new THREE.BufferGeometry();
		this.pivotGeometry.setAttribute('position', new THREE.Float32BufferAttribute([0, 0, 0], 3));
		this.pivot = new THREE.Points(
			this.pivotGeometry,
			new THREE.PointsMaterial({ size: 14, sizeAttenuation: false, map: this._dotTexture, color: 0xffd84a, transparent: true, alphaTest: 0.3, depthTest: false }),
		);
		this.pivot.renderOrder = 20;
		this.pivot.frustumCulled = false;
		this.group.add(this.pivot);

		this._boxesDirty = true;
		this.model = null;
		this.layer = null;
		this.selected = null;
		this.othersSel = [];
		this._apply();
	}

	/* What to draw from: the model and the node layer (for shape offsets). */
	bind(model, layer) {
		this.model = model;
		this.layer = layer;
		this.changed();
	}

	setFlags(flags) {
		Object.assign(this.flags, flags);
		this._boxesDirty = true;
		this._apply();
	}

	/* The model changed: rebuild what depends on it before the next frame. */
	changed() {
		this._boxesDirty = true;
	}

	setSelection(id) {
		this.selected = id;
		this._boxesDirty = true;
	}

	/* Others' selections: [{ids: [...], colour: [r,g,b]}]. */
	setOthers(list) {
		this.othersSel = list;
		this._boxesDirty = true;
	}

	/* Brings every shown layer up to date; call before rendering. */
	sync() {
		if (!this._boxesDirty || !this.model) return;
		this._boxesDirty = false;
		const model = this.model;
		this.nodeBoxes.visible = this.flags.nodeBoxes;
		this.subtreeBoxes.visible = this.flags.subtreeBoxes;

		if (this.flags.nodeBoxes) {
			const pts = [];
			const cols = [];
			for (const node of model.nodes.values()) {
				// A node the view hides has no current matrix (interest.js).
				if (!node.bounds || !node.world || node.hidden) continue;
				pushBoxEdges(pts, worldBox(node.world, node.bounds));
				const c = colourFor(node.id, { saturation: 0.7, lightness: 0.7 }).rgb;
				for (let i = 0; i < 24; i++) cols.push(...c);
			}
			this.nodeBoxes.set(pts, cols);
		}
		if (this.flags.subtreeBoxes) {
			const pts = [];
			const cols = [];
			for (const { box, depth, leaf } of subtreeBoxes(model, { drawnOnly: true })) {
				if (leaf) continue;
				pushBoxEdges(pts, box);
				const c = depth === 0 ? [0.95, 0.95, 0.95] : [1.0, 0.6, 0.2];
				for (let i = 0; i < 24; i++) cols.push(...c);
			}
			this.subtreeBoxes.set(pts, cols);
		}

		const sel = this.selected && model.get(this.selected);
		if (sel && sel.world && !sel.hidden) {
			this.selection.set(this._outline(sel));
			const p = transformPoint(sel.world, sel.pivot);
			this.pivotGeometry.attributes.position.array.set(p);
			this.pivotGeometry.attributes.position.needsUpdate = true;
			this.pivot.visible = this.flags.pivot;
		} else {
			this.selection.set([]);
			this.pivot.visible = false;
		}

		const pts = [];
		const cols = [];
		for (const { ids, colour } of this.othersSel) {
			for (const id of ids) {
				const node = model.get(id);
				if (!node || !node.world || node.hidden) continue;
				const outline = this._outline(node, 1.08);
				pts.push(...outline);
				for (let i = 0; i < outline.length / 3; i++) cols.push(...colour);
			}
		}
		this.others.set(pts, cols);
	}

	/* The edges of what is drawn for a node, in world space, slightly
	 * enlarged by 'grow' (an empty node gets a small cube at its origin). */
	_outline(node, grow = 1.04) {
		const offset = (this.layer && this.layer.shapeOffset(node)) || [0.12, 0, 0, 0, 0, 0.12, 0, 0, 0, 0, 0.12, 0, 0, 0, 0, 1];
		const g = [grow, 0, 0, 0, 0, grow, 0, 0, 0, 0, grow, 0, 0, 0, 0, 1];
		const m = multiply(node.world, multiply(offset, g));
		const out = [];
		for (let i = 0; i < CUBE_EDGES.length; i += 3) out.push(...transformPoint(m, [CUBE_EDGES[i], CUBE_EDGES[i + 1], CUBE_EDGES[i + 2]]));
		return out;
	}

	_apply() {
		this.grid.visible = this.flags.grid;
		this.axes.visible = this.flags.axes;
		this.nodeBoxes.visible = this.flags.nodeBoxes;
		this.subtreeBoxes.visible = this.flags.subtreeBoxes;
	}

	dispose() {
		for (const set of [this.nodeBoxes, this.subtreeBoxes, this.selection, this.others]) set.dispose();
		this.grid.geometry.dispose();
		this.grid.material.dispose();
		this.axes.geometry.dispose();
		this.axes.material.dispose();
		this.pivotGeometry.dispose();
		this.pivot.material.dispose();
		this._dotTexture.dispose();
		this.group.removeFromParent();
	}
}

/*
 * Every node's subtree box: its own world box united with its children's
 * subtree boxes, computed children-first over the reversed preorder.
 * Returns [{id, box, depth, leaf}] for nodes whose subtree has any box.
 * 'drawnOnly' leaves out the boxes of nodes a view hides (their matrices
 * are the last the server sent, not the current ones: interest.js).
 */
export function subtreeBoxes(model, { drawnOnly = false } = {}) {
	const order = model.order();
	const boxes = new Map();
	for (let i = order.length - 1; i >= 0; i--) {
		const node = model.get(order[i]);
		let box = node.bounds && node.world && !(drawnOnly && node.hidden) ? worldBox(node.world, node.bounds) : null;
		for (const child of node.children) box = unionBox(box, boxes.get(child) || null);
		if (box) boxes.set(node.id, box);
	}
	const out = [];
	for (const id of order) {
		const box = boxes.get(id);
		if (box) out.push({ id, box, depth: model.depth(id), leaf: model.get(id).children.length === 0 });
	}
	return out;
}
