/*
 * model.js: the browser's copy of one scene, exactly as the server sent it.
 *
 * A SceneModel holds every node's locals, place in the tree and world matrix
 * (16 numbers, column-major, the server's doubles untouched). It is filled
 * from a snapshot (websocket) or a tree (GET /api/scenes/NAME, also with
 * ?at=SEQ) and kept current by update messages, which carry only what
 * changed. It never computes a world matrix: a node's world is whatever the
 * server last sent for it.
 *
 * No DOM and no three.js here, so node's test runner exercises it directly.
 */
import { Emitter } from './util.js';

/* Reads a box in either wire spelling ({min, max} or [[min], [max]]). */
function readBounds(raw) {
	if (!raw) return null;
	if (Array.isArray(raw) && raw.length === 2) return { min: [...raw[0]], max: [...raw[1]] };
	if (raw.min && raw.max) return { min: [...raw.min], max: [...raw.max] };
	return null;
}

/* One node record from the wire's node shape (docs/protocol.md). */
export function readNode(raw) {
	return {
		id: raw.id,
		name: raw.name ?? null,
		parent: raw.parent ?? null,
		index: raw.index ?? 0,
		t: raw.t ? [...raw.t] : [0, 0, 0],
		r: raw.r ? [...raw.r] : [0, 0, 0, 1],
		s: raw.s ? [...raw.s] : [1, 1, 1],
		pivot: raw.pivot ? [...raw.pivot] : [0, 0, 0],
		euler: raw.euler ? [...raw.euler] : [0, 0, 0],
		bounds: readBounds(raw.bounds),
		mesh: raw.mesh ?? null,
		kind: raw.kind ?? 'group',
		camera: raw.camera ? { fov: raw.camera.fov, near: raw.camera.near, far: raw.camera.far } : { fov: 60, near: 0.1, far: 1000 },
		visible: raw.visible !== false,
		world: raw.world ? Array.from(raw.world) : null,
		// 2D scenes only (docs/protocol.md "2D scenes"): the screen angle,
		// the artwork group "FILE#GROUP" the node draws, its draw order key
		// (a number, or {right, left}) and its own facing (null: inherited).
		angle: typeof raw.angle === 'number' ? raw.angle : null,
		layer: typeof raw.layer === 'string' ? raw.layer : null,
		z: raw.z && typeof raw.z === 'object' ? { right: raw.z.right, left: raw.z.left } : typeof raw.z === 'number' ? raw.z : 0,
		facing: raw.facing === 'left' || raw.facing === 'right' ? raw.facing : null,
		children: [],
	};
}

/* True when a snapshot or tree message describes a 2D scene: it says so
 * ("dims": 2), carries a draw order, or its nodes carry screen angles. */
export function isTwoD(msg) {
	if (msg.dims === 2) return true;
	if (msg.dims === 3) return false;
	if (Array.isArray(msg.order)) return true;
	return (msg.nodes || []).some((n) => typeof n.angle === 'number');
}

export class SceneModel extends Emitter {
	/*
	 * 'name' is the scene's name; 'readOnly' marks a model of an earlier seq
	 * (time travel), which the panels show without editing controls.
	 */
	constructor(name, { readOnly = false } = {}) {
		super();
		this.name = name;
		this.readOnly = readOnly;
		this.seq = 0;
		this.nodes = new Map();
		this.roots = [];
		this._order = null;
		// 2D scenes: dims, and the server's draw order (ids back to front),
		// null until the server sent one.
		this.dims = 3;
		this.drawOrder = null;
	}

	get size() {
		return this.nodes.size;
	}

	get(id) {
		return this.nodes.get(id);
	}

	/*
	 * Replaces everything with the nodes of a snapshot or a tree, listed
	 * depth-first with each node's parent and sibling index; 'dims' and
	 * 'order' are a 2D scene's dims and draw order, 'hidden' the nodes a
	 * view says not to draw. Emits 'reset'.
	 */
	load(nodes, seq, { dims = 3, order = null, hidden = null } = {}) {
		this.dims = dims === 2 ? 2 : 3;
		this.drawOrder = Array.isArray(order) ? order.slice() : null;
		this.nodes = new Map();
		this.roots = [];
		for (const raw of nodes) this.nodes.set(raw.id, readNode(raw));
		// A view's snapshot lists the nodes not to draw (docs/protocol.md, Views).
		for (const id of hidden || []) if (this.nodes.has(id)) this.nodes.get(id).hidden = true;
		for (const raw of nodes) {
			const node = this.nodes.get(raw.id);
			const list = node.parent === null ? this.roots : this.nodes.get(node.parent)?.children;
			if (!list) throw new Error(`snapshot: node '${node.id}' names unknown parent '${node.parent}'`);
			list.push(node.id);
		}
		// The wire order is depth-first with siblings in order, but sort by
		// index anyway so the tree is right whatever order a tree arrives in.
		const byIndex = (list) => list.sort((a, b) => this.nodes.get(a).index - this.nodes.get(b).index);
		byIndex(this.roots);
		for (const node of this.nodes.values()) byIndex(node.children);
		this.seq = seq ?? 0;
		this._order = null;
		this.emit('reset', { seq: this.seq });
	}

	/*
	 * Applies an update {seq, world: {id: [16]}, nodes: [node shapes],
	 * removed: [ids]}. Returns and emits 'update' with what it touched:
	 *   world:     ids whose world matrix was sent (recomputed)
	 *   changed:   ids whose locals or structure were sent
	 *   created:   ids that are new
	 *   removed:   ids that are gone
	 *   structure: true when the tree's shape or order changed
	 *   order:     true when the update carried a (2D) draw order
	 * An update with a seq older than the model's is ignored (returns null).
	 */
	applyUpdate(msg) {
		if (typeof msg.seq === 'number' && msg.seq < this.seq) return null;
		const info = { seq: msg.seq ?? this.seq, world: new Set(), changed: new Set(), created: new Set(), removed: [], structure: false, order: false };

		for (const id of msg.removed || []) {
			const node = this.nodes.get(id);
			if (!node) continue;
			this._detach(node);
			this.nodes.delete(id);
			info.removed.push(id);
			info.structure = true;
		}
		// Removing a subtree lists every node in it, but be safe against a
		// server that lists only the subtree's root: drop orphans too.
		if (info.removed.length) this._dropOrphans(info.removed);

		const moved = [];
		for (const raw of msg.nodes || []) {
			const next = readNode(raw);
			const old = this.nodes.get(next.id);
			if (old) {
				next.children = old.children;
				if (!next.world) next.world = old.world;
				if (old.parent !== next.parent || old.index !== next.index) {
					this._detach(old);
					moved.push(next);
				}
			} else {
				moved.push(next);
				info.created.add(next.id);
			}
			this.nodes.set(next.id, next);
			info.changed.add(next.id);
		}
		// Insert moved and created nodes at their final sibling indices, in
		// ascending index order per parent: each insertion then lands exactly
		// where the server has it, whatever else moved in the same update.
		moved.sort((a, b) => a.index - b.index);
		for (const node of moved) {
			const list = this._siblings(node.parent);
			if (!list) throw new Error(`update: node '${node.id}' names unknown parent '${node.parent}'`);
			list.splice(Math.min(node.index, list.length), 0, node.id);
			info.structure = true;
		}
		// With a view, a node drawn again has its matrix in 'world', and
		// 'hidden' (applied last) lists those not to draw; info.shown holds
		// the ids whose flag changed.
		info.shown = new Set();
		for (const [id, world] of Object.entries(msg.world || {})) {
			const node = this.nodes.get(id);
			if (!node) continue;
			node.world = Array.from(world);
			info.world.add(id);
			if (node.hidden) delete node.hidden, info.shown.add(id);
		}
		for (const id of msg.hidden || []) {
			const node = this.nodes.get(id);
			if (node && !node.hidden) node.hidden = true, info.shown.add(id);
		}
		// The order and the matrices of one update are taken together, so a
		// view that draws from the model never sees one without the other.
		if (Array.isArray(msg.order)) {
			this.drawOrder = msg.order.slice();
			info.order = true;
		}
		if (typeof msg.seq === 'number') this.seq = msg.seq;
		if (info.structure) this._reindex();
		this.emit('update', info);
		return info;
	}

	_siblings(parentId) {
		return parentId === null ? this.roots : this.nodes.get(parentId)?.children;
	}

	_detach(node) {
		const list = this._siblings(node.parent);
		if (!list) return;
		const at = list.indexOf(node.id);
		if (at >= 0) list.splice(at, 1);
	}

	_dropOrphans(removed) {
		const stack = [...removed];
		const gone = new Set(removed);
		while (stack.length) {
			const id = stack.pop();
			for (const node of this.nodes.values()) {
				if (node.parent === id && !gone.has(node.id)) {
					gone.add(node.id);
					this.nodes.delete(node.id);
					removed.push(node.id);
					stack.push(node.id);
				}
			}
		}
	}

	/* Refreshes every node's index from the children lists and forgets the
	 * cached preorder. */
	_reindex() {
		this.roots.forEach((id, i) => (this.nodes.get(id).index = i));
		for (const node of this.nodes.values()) node.children.forEach((id, i) => (this.nodes.get(id).index = i));
		this._order = null;
	}

	/* Every node id in depth-first preorder (cached until the tree changes). */
	order() {
		if (this._order) return this._order;
		const out = [];
		const stack = [...this.roots].reverse();
		while (stack.length) {
			const id = stack.pop();
			out.push(id);
			const children = this.nodes.get(id).children;
			for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
		}
		this._order = out;
		return out;
	}

	/* Depth of a node (0 for a root). */
	depth(id) {
		let d = 0;
		for (let node = this.nodes.get(id); node && node.parent !== null; node = this.nodes.get(node.parent)) d++;
		return d;
	}

	/* True when 'ancestor' is 'id' or one of its ancestors. */
	isAncestor(ancestor, id) {
		for (let node = this.nodes.get(id); node; node = node.parent === null ? null : this.nodes.get(node.parent)) {
			if (node.id === ancestor) return true;
		}
		return false;
	}

	/* Ids of a node's subtree, itself first, in preorder. */
	subtree(id) {
		const out = [];
		const stack = [id];
		while (stack.length) {
			const next = stack.pop();
			const node = this.nodes.get(next);
			if (!node) continue;
			out.push(next);
			for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
		}
		return out;
	}

	/* The tree as nested [id, [children]] lists: a compact shape for
	 * comparing two browsers' views of the same scene in tests. */
	shape() {
		const walk = (id) => [id, this.nodes.get(id).children.map(walk)];
		return this.roots.map(walk);
	}
}
