/*
 * view2d.js: a 2D scene drawn as SVG, with its bones, pan and zoom, and
 * joints that turn and pull the rig.
 *
 * Every node with a layer ("FILE#GROUP") draws that group of its scene's
 * artwork (svg_layers.js) inside an outer <g> whose transform is the
 * node's world matrix as the server sent it: matrix(m0 m1 m4 m5 m12 m13),
 * printed so that it parses back to the same doubles. The browser never
 * composes the hierarchy and never rewrites path data. The outer groups
 * are children of one <g> in the server's draw order ("order", back to
 * front). Everything the model says is applied in one place, the frame
 * callback: the matrices and the order of an update reach the page in the
 * same animation frame, never one without the other.
 *
 * Over the artwork: a line per bone from a node's pivot (its world
 * position: world matrix times pivot) to each child's, and a handle on
 * every joint, drawn on a <canvas> over the <svg> in the same frame
 * callback. (An SVG line and circle per bone, rewritten every frame, held
 * a playing 100-bone clip to about 46 frames a second in attribute
 * writes, style and raster; the canvas draws them in well under a
 * millisecond.) Pointers find a joint by its distance to the pivots drawn
 * (_jointAt), not by an element under them. Dragging a joint turns its
 * parent bone about the parent's pivot (a stream of `rotate` ops); with
 * Shift held it pulls the chain's end with two-bone `ik` (chain:
 * grandparent, parent, the joint); a root's
 * joint moves the root (`move`), and so does the joint of a skeleton's IK
 * target (the server solves the constraint). The wheel zooms about the
 * pointer; a drag on empty space pans. With fingers: one drags a joint or
 * pans, two pinch (zoom about their midpoint, pan with it), a tap selects,
 * a long press opens the node's menu; a finger takes the nearest joint
 * within half of TOUCH_TARGET_PX, so a joint is a 44-pixel target whatever
 * its drawn size.
 *
 * Never: composes a world matrix for drawing, touches the DOM outside its
 * own <svg> and the frame callback, edits anything but through 'edit'.
 */
import { drawOrder } from './order2d.js';
import { AssetStore, SVG_NS, scopedSheet, splitLayer } from './svg_layers.js';
import { LongPress, TOUCH_TARGET_PX, slopOf } from './touch.js';
import { Emitter, Listeners } from './util.js';

const JOINT_PX = 6; // joint handle radius, screen pixels
// The overlay's colours (the panels' palette in style.css).
const OVERLAY = {
	bone: 'rgba(240, 192, 80, 0.8)',
	boneSelected: 'rgba(90, 176, 240, 0.8)',
	joint: '#f0c050',
	root: '#e07a5f',
	selected: '#5ab0f0',
	jointEdge: '#1d2027',
};

function svgEl(name, attrs = {}) {
	const e = document.createElementNS(SVG_NS, name);
	for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
	return e;
}

/* The SVG transform for a world matrix: exactly the server's numbers. */
export function svgMatrix(m) {
	return `matrix(${m[0]} ${m[1]} ${m[4]} ${m[5]} ${m[12]} ${m[13]})`;
}

/* A node's pivot in world (scene) coordinates. */
export /* The inverse of the 2x2 part of column-major world matrix 'w' as [a, b,
 * c, d] (columns (a, b) and (c, d)), or null when it is singular. */
function inverse2(w) {
	const det = w[0] * w[5] - w[4] * w[1];
	if (!(Math.abs(det) > 1e-12)) return null;
	return [w[5] / det, -w[1] / det, -w[4] / det, w[0] / det];
}

function pivotWorld(node) {
	const m = node.world;
	if (!m) return null;
	const [x, y] = node.pivot;
	return [m[0] * x + m[4] * y + m[12], m[1] * x + m[5] * y + m[13]];
}

export class View2D extends Emitter {
	/*
	 * Draws into 'container' (the viewport element). 'scene' names the
	 * scene whose assets are fetched; 'edit(ops)' sends one batch and
	 * resolves with its ack (rejects with the server's error); 'live(key,
	 * ops)' sends a batch that later ones of the same key may replace;
	 * 'gesture(on)' opens and closes an undo step.
	 * Events: 'pick' {id}, 'menu' {id, x, y} (a long press or a right
	 * click on a joint or a layer), 'error' {message}.
	 */
	constructor(container, { scene, edit, live, gesture }) {
		super();
		this.container = container;
		this._edit = edit;
		this._live = live;
		this._gesture = gesture;
		this._listeners = new Listeners();
		this.model = null;
		this.selected = null;
		this.editable = true;
		this.assets = new AssetStore(scene);
		this.assets.loadSkeletons();
		this.camera = { x: 0, y: 0, k: 1 };
		this._framed = false;
		this._raf = 0;
		this._dirty = { layers: true, camera: true };
		this.groups = new Map(); // id -> {outer, layer, drawn: 'matrix(...)'}
		this.pivots = new Map(); // id -> [x, y]: the joints drawn (scene units)
		this.bonesShown = true;
		this.boneSegments = []; // [parent id, its pivot, a child's pivot]: the bones drawn
		this.frames = 0;
		this._adopted = new Set(); // files whose defs and CSS are in
		this._sheets = [];

		this.svg = svgEl('svg', { class: 'view2d', role: 'img', 'aria-label': '2D scene' });
		this.defs = svgEl('defs');
		this.root = svgEl('g', { class: 'camera' });
		this.layersG = svgEl('g', { class: 'layers' });
		this.root.append(this.layersG);
		this.svg.append(this.defs, this.root);
		// The bones and joints: decoration for the eye (the hierarchy panel
		// and the node menus say the same to a screen reader).
		this.overlay = document.createElement('canvas');
		this.overlay.className = 'view2d-overlay';
		this.overlay.setAttribute('aria-hidden', 'true');
		this._size = { w: 0, h: 0 }; // the <svg>'s CSS pixels, from the ResizeObserver
		container.append(this.svg, this.overlay);
		this._unsubAssets = this.assets.on('change', () => this.requestRender({ layers: true }));
		this._wirePointer();
		this._resize = new ResizeObserver(([entry]) => {
			this._size = { w: entry.contentRect.width, h: entry.contentRect.height };
			this.requestRender({ camera: true });
		});
		this._resize.observe(this.svg);
	}

	/* Shows 'model' (the live scene or an earlier seq). */
	setModel(model) {
		if (this._modelUnsubs) this._modelUnsubs.forEach((off) => off());
		this.model = model;
		this._modelUnsubs = [
			model.on('reset', () => this.requestRender({ layers: true })),
			model.on('update', () => this.requestRender({ layers: true })),
		];
		this.requestRender({ layers: true });
	}

	setSelection(id) {
		this.selected = id;
		this.requestRender({ layers: true });
	}

	/* Shows or hides the bones and joint handles. */
	setBonesVisible(on) {
		this.bonesShown = on;
		this.overlay.hidden = !on;
		this.svg.classList.remove('over-joint');
		if (on) this.requestRender();
	}

	setEditable(on) {
		this.editable = on;
		this.svg.classList.toggle('read-only', !on);
	}

	/* Asks for one frame; 'what' says what to redo in it. */
	requestRender(what = {}) {
		if (what.layers) this._dirty.layers = true;
		if (what.camera) this._dirty.camera = true;
		if (!this._raf) this._raf = requestAnimationFrame(() => this._frame());
	}

	/* --- the frame: the one place the page is changed --- */

	_frame() {
		this._raf = 0;
		this.frames++;
		if (!this.model) return;
		if (this._dirty.layers) {
			this._dirty.layers = false;
			this._syncLayers();
			this._syncBones();
			if (!this._framed && this.model.size) this._frameWhenReady();
		}
		if (this._dirty.camera) {
			this._dirty.camera = false;
			const { x, y, k } = this.camera;
			this.root.setAttribute('transform', `translate(${x} ${y}) scale(${k})`);
		}
		this._drawOverlay();
	}

	/* The groups: one per node with a layer whose asset has loaded, each at
	 * its node's world matrix, in the server's order. */
	_syncLayers() {
		const model = this.model;
		const bound = new Map(); // file -> Set(group ids)
		for (const node of model.nodes.values()) {
			const parts = splitLayer(node.layer);
			if (!parts) continue;
			if (!bound.has(parts[0])) bound.set(parts[0], new Set());
			bound.get(parts[0]).add(parts[1]);
		}
		const errors = [];
		for (const [id, g] of this.groups) {
			const node = model.get(id);
			if (!node || node.layer !== g.layer) {
				g.outer.remove();
				this.groups.delete(id);
			}
		}
		for (const node of model.nodes.values()) {
			const parts = splitLayer(node.layer);
			if (!parts || this.groups.has(node.id)) continue;
			const entry = this.assets.get(parts[0]);
			if (entry.status === 'error') errors.push(entry.error);
			if (entry.status !== 'ready') continue;
			this._adopt(entry.asset);
			const cut = entry.asset.cut(parts[1], bound.get(parts[0]));
			if (!cut) {
				errors.push(`asset ${parts[0]} has no group '${parts[1]}'`);
				continue;
			}
			const outer = svgEl('g', { class: 'layer' });
			outer.dataset.id = node.id;
			outer.dataset.file = parts[0];
			let holder = outer;
			if (cut.inner) outer.append((holder = svgEl('g', { transform: cut.inner })));
			holder.append(cut.element);
			// 'box': the extent a skeleton attachment draws in its node's
			// frame, which getBBox() cannot tell (it counts a region's whole
			// atlas page, not the part its viewport shows).
			// 'deform': a skeleton's weighted mesh, placed from its bones'
			// world matrices (skeleton_layers.js), its box what it answers.
			this.groups.set(node.id, { outer, layer: node.layer, drawn: null, box: cut.box || null, deform: cut.deform || null });
		}
		for (const [id, g] of this.groups) {
			const node = model.get(id);
			const text = node.world ? svgMatrix(node.world) : 'matrix(1 0 0 1 0 0)';
			if (text !== g.drawn) {
				g.outer.setAttribute('transform', text);
				g.drawn = text;
			}
			if (g.deform) g.box = g.deform((bone) => (model.get(bone) && model.get(bone).world) || null, node.world);
			g.outer.style.display = node.visible ? '' : 'none';
			g.outer.classList.toggle('selected', id === this.selected);
		}
		// The order: move only what is out of place (appending a node that
		// is already a child moves it).
		const want = drawOrder(model).filter((id) => this.groups.has(id));
		const shown = new Set(want);
		for (const [id, g] of this.groups) if (!shown.has(id)) want.push(id);
		let at = this.layersG.firstElementChild;
		for (const id of want) {
			const outer = this.groups.get(id).outer;
			if (at === outer) at = at.nextElementSibling;
			else this.layersG.insertBefore(outer, at);
		}
		const text = [...new Set(errors)].join('; ');
		if (text !== this._errorText) {
			this._errorText = text;
			if (text) this.emit('error', { message: text });
		}
	}

	/* Takes in, once per asset, its definitions and its scoped CSS. */
	_adopt(asset) {
		if (this._adopted.has(asset.file)) return;
		this._adopted.add(asset.file);
		this.defs.append(...asset.takeDefs());
		const sheet = scopedSheet(asset.css, `svg.view2d g.layer[data-file="${CSS.escape(asset.file)}"]`);
		if (sheet) {
			this._sheets.push(sheet);
			document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
		}
	}

	/* A line per bone (a node's pivot to each child's) and a handle per joint. */
	_syncBones() {
		const model = this.model;
		const pivots = new Map();
		for (const node of model.nodes.values()) {
			const p = pivotWorld(node);
			if (p) pivots.set(node.id, p);
		}
		const segments = []; // [parent id, its pivot, a child's pivot]
		for (const [id, p] of pivots) {
			for (const childId of model.get(id).children) {
				const q = pivots.get(childId);
				if (q) segments.push([id, p, q]);
			}
		}
		this.pivots = pivots;
		this.boneSegments = segments;
	}

	/* Draws the bones (a line from each pivot to each child's) and the
	 * joint handles (JOINT_PX-pixel discs, the selected node's last) at the
	 * camera, in CSS pixels whatever the zoom. */
	_drawOverlay() {
		const c = this.overlay;
		if (c.hidden) return;
		if (!this._size.w) this._size = { w: this.svg.clientWidth, h: this.svg.clientHeight };
		const dpr = window.devicePixelRatio || 1;
		const W = Math.round(this._size.w * dpr);
		const H = Math.round(this._size.h * dpr);
		if (c.width !== W || c.height !== H) (c.width = W), (c.height = H);
		const ctx = c.getContext('2d');
		ctx.setTransform(1, 0, 0, 1, 0, 0);
		ctx.clearRect(0, 0, W, H);
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		const { x: cx, y: cy, k } = this.camera;
		const sx = (p) => cx + k * p[0];
		const sy = (p) => cy + k * p[1];
		ctx.lineWidth = 2;
		ctx.lineCap = 'round';
		for (const selected of [false, true]) {
			ctx.strokeStyle = selected ? OVERLAY.boneSelected : OVERLAY.bone;
			ctx.beginPath();
			for (const [id, p, q] of this.boneSegments) {
				if ((id === this.selected) !== selected) continue;
				ctx.moveTo(sx(p), sy(p));
				ctx.lineTo(sx(q), sy(q));
			}
			ctx.stroke();
		}
		ctx.lineWidth = 1.5;
		ctx.strokeStyle = OVERLAY.jointEdge;
		const disc = (p, fill) => {
			ctx.beginPath();
			ctx.arc(sx(p), sy(p), JOINT_PX, 0, 2 * Math.PI);
			ctx.fillStyle = fill;
			ctx.fill();
			ctx.stroke();
		};
		for (const [id, p] of this.pivots) {
			if (id === this.selected) continue;
			const node = this.model.get(id);
			disc(p, node && node.parent === null ? OVERLAY.root : OVERLAY.joint);
		}
		const sel = this.pivots.get(this.selected);
		if (sel) disc(sel, OVERLAY.selected);
	}

	/* Frames everything once the layers it can draw are in. */
	_frameWhenReady() {
		const waiting = [...this.model.nodes.values()].some((n) => {
			const parts = splitLayer(n.layer);
			return parts && this.assets.get(parts[0]).status === 'loading';
		});
		if (waiting) return;
		this._framed = true;
		this.frameAll();
	}

	/* Fits the artwork and the joints into the view. */
	frameAll() {
		let box = null;
		const add = (x0, y0, x1, y1) => {
			if (![x0, y0, x1, y1].every(Number.isFinite)) return;
			box = box ? [Math.min(box[0], x0), Math.min(box[1], y0), Math.max(box[2], x1), Math.max(box[3], y1)] : [x0, y0, x1, y1];
		};
		// Groups that know their extent are left out of getBBox() and
		// added by their boxes' corners at their nodes' world matrices.
		const boxed = [...this.groups.entries()].filter(([, g]) => g.box);
		const display = boxed.map(([, g]) => g.outer.style.display);
		for (const [, g] of boxed) g.outer.style.display = 'none';
		try {
			const b = this.layersG.getBBox();
			if (b.width || b.height) add(b.x, b.y, b.x + b.width, b.y + b.height);
		} catch {
			/* not rendered yet */
		}
		boxed.forEach(([id, g], i) => {
			g.outer.style.display = display[i];
			const m = this.model && this.model.get(id) && this.model.get(id).world;
			if (!m || display[i] === 'none') return;
			const [x0, y0, x1, y1] = g.box;
			for (const [x, y] of [[x0, y0], [x1, y0], [x0, y1], [x1, y1]]) {
				const px = m[0] * x + m[4] * y + m[12];
				const py = m[1] * x + m[5] * y + m[13];
				add(px, py, px, py);
			}
		});
		for (const node of this.model ? this.model.nodes.values() : []) {
			const p = pivotWorld(node);
			if (p) add(p[0], p[1], p[0], p[1]);
		}
		const w = this.svg.clientWidth || 800;
		const h = this.svg.clientHeight || 600;
		if (!box) box = [0, 0, w, h];
		const bw = Math.max(box[2] - box[0], 1);
		const bh = Math.max(box[3] - box[1], 1);
		const k = Math.min((w * 0.8) / bw, (h * 0.8) / bh, 20);
		this.camera = { k, x: w / 2 - k * (box[0] + bw / 2), y: h / 2 - k * (box[1] + bh / 2) };
		this.requestRender({ camera: true });
	}

	/* --- pointer: pan, zoom, joints --- */

	/* Page coordinates of a pointer event to scene coordinates. */
	toScene(e) {
		const r = this.svg.getBoundingClientRect();
		const { x, y, k } = this.camera;
		return [(e.clientX - r.left - x) / k, (e.clientY - r.top - y) / k];
	}

	_wirePointer() {
		const L = this._listeners;
		L.listen(this.svg, 'wheel', (e) => {
			e.preventDefault();
			const r = this.svg.getBoundingClientRect();
			const px = e.clientX - r.left;
			const py = e.clientY - r.top;
			const f = Math.exp(-e.deltaY * 0.0015);
			const k = Math.min(Math.max(this.camera.k * f, 0.02), 200);
			const g = k / this.camera.k;
			this.camera = { k, x: px - (px - this.camera.x) * g, y: py - (py - this.camera.y) * g };
			this.requestRender({ camera: true });
		}, { passive: false });
		L.listen(this.svg, 'pointerdown', (e) => this._down(e));
		L.listen(this.svg, 'pointermove', (e) => this._move(e));
		L.listen(this.svg, 'pointerup', (e) => this._up(e));
		L.listen(this.svg, 'pointercancel', (e) => this._up(e, { cancel: true }));
		L.listen(this.svg, 'contextmenu', (e) => e.preventDefault());
		this._pointers = new Map(); // pointerId -> {x, y}, page pixels
		this._longPress = new LongPress((x, y) => {
			const d = this._drag;
			if (!d || d.moved || !d.target) return;
			d.kind = 'none';
			d.moved = true;
			this.emit('menu', { id: d.target, x, y });
		});
	}

	/* The joint a pointer at page point (x, y) means: the nearest drawn
	 * within 'reach' CSS pixels, or null (and null while the bones are
	 * hidden). */
	_jointAt(x, y, reach) {
		if (!this.bonesShown) return null;
		const r = this.svg.getBoundingClientRect();
		const { x: cx, y: cy, k } = this.camera;
		let best = null;
		let bestD = reach;
		for (const [id, p] of this.pivots) {
			const dist = Math.hypot(r.left + cx + k * p[0] - x, r.top + cy + k * p[1] - y);
			if (dist <= bestD) (best = id), (bestD = dist);
		}
		return best;
	}

	_down(e) {
		if (e.button !== 0 && e.button !== 1 && e.button !== 2) return;
		this._pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
		this.svg.setPointerCapture(e.pointerId);
		if (this._pointers.size > 1) {
			this._longPress.cancel();
			// A second finger turns a pan (or a press not yet moved) into a
			// pinch; a joint drag under way keeps its one finger.
			const d = this._drag;
			if (this._pointers.size === 2 && (!d || !d.moved || d.kind === 'pan')) {
				this._drag = { kind: 'pinch', moved: true, cam: { ...this.camera }, from: this._pinch() };
			}
			return;
		}
		// A mouse takes a joint under it (its handle and stroke); a finger
		// the nearest within half a touch target.
		const joint = this._jointAt(e.clientX, e.clientY, e.pointerType === 'mouse' ? JOINT_PX + 1 : TOUCH_TARGET_PX / 2);
		const layer = e.target.closest && e.target.closest('g.layer');
		const start = { px: e.clientX, py: e.clientY, at: this.toScene(e), moved: false, pointer: e.pointerId, slop: slopOf(e), target: joint || (layer ? layer.dataset.id : null) };
		if (e.button === 2) {
			this._drag = { kind: 'menu', ...start };
		} else if (joint && e.button === 0) {
			this._drag = { kind: 'joint', id: joint, ik: e.shiftKey, ...start };
		} else {
			this._drag = { kind: 'pan', pick: layer ? layer.dataset.id : null, cam: { ...this.camera }, ...start };
		}
		this._longPress.down(e, this._pointers.size);
	}

	/* The two fingers' midpoint and distance (page pixels). */
	_pinch() {
		const [a, b] = [...this._pointers.values()];
		return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2, dist: Math.max(1, Math.hypot(a.x - b.x, a.y - b.y)) };
	}

	_move(e) {
		if (this._pointers.has(e.pointerId)) this._pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
		this._longPress.move(e);
		const d = this._drag;
		if (!d) {
			// The pointer a mouse shows over a joint it could drag.
			if (e.pointerType === 'mouse') this.svg.classList.toggle('over-joint', this.editable && this._jointAt(e.clientX, e.clientY, JOINT_PX + 1) !== null);
			return;
		}
		if (d.kind === 'pinch') {
			if (this._pointers.size !== 2) return;
			// The scene point under the fingers' first midpoint stays under
			// their midpoint; the zoom follows their distance.
			const now = this._pinch();
			const r = this.svg.getBoundingClientRect();
			const k = Math.min(Math.max(d.cam.k * (now.dist / d.from.dist), 0.02), 200);
			const sx = (d.from.x - r.left - d.cam.x) / d.cam.k;
			const sy = (d.from.y - r.top - d.cam.y) / d.cam.k;
			this.camera = { k, x: now.x - r.left - k * sx, y: now.y - r.top - k * sy };
			this.requestRender({ camera: true });
			return;
		}
		if (d.pointer !== undefined && e.pointerId !== d.pointer) return;
		if (!d.moved && Math.hypot(e.clientX - d.px, e.clientY - d.py) < d.slop) return;
		if (d.kind === 'menu') {
			d.kind = 'none';
			d.moved = true;
			return;
		}
		if (d.kind === 'pan') {
			d.moved = true;
			this.camera = { ...d.cam, x: d.cam.x + e.clientX - d.px, y: d.cam.y + e.clientY - d.py };
			this.requestRender({ camera: true });
			return;
		}
		if (!d.moved) {
			d.moved = true;
			if (!this.editable || !this._startJointDrag(d)) {
				d.kind = 'none';
				return;
			}
		}
		if (d.kind === 'none') return;
		this._jointDrag(d, this.toScene(e));
	}

	_up(e, { cancel = false } = {}) {
		this._pointers.delete(e.pointerId);
		this._longPress.cancel();
		if (this.svg.hasPointerCapture(e.pointerId)) this.svg.releasePointerCapture(e.pointerId);
		const d = this._drag;
		if (!d) return;
		if (d.kind === 'pinch') {
			// The finger left on the glass does nothing until it is lifted.
			this._drag = this._pointers.size ? { kind: 'none', moved: true } : null;
			return;
		}
		if (this._pointers.size) return; // another finger's, during a joint drag
		this._drag = null;
		if (!d.moved) {
			if (cancel) return;
			if (d.kind === 'menu') {
				if (d.target) this.emit('menu', { id: d.target, x: e.clientX, y: e.clientY });
				return;
			}
			this.emit('pick', { id: d.kind === 'joint' ? d.id : d.pick });
			return;
		}
		if (d.kind === 'rotate' || d.kind === 'move' || d.kind === 'ik') {
			d.done = true;
			this._pump(d);
		}
	}

	/* Whether node 'node' is the target of an IK constraint of one of the
	 * scene's skeletons (its name is the bone's). */
	_ikTarget(node) {
		for (const entry of this.assets.assets.values())
			if (entry.asset && entry.asset.ikTargets && entry.asset.ikTargets.has(node.name)) return true;
		return false;
	}

	/* Decides what a joint drag does: 'ik' (Shift, with a grandparent),
	 * 'rotate' (the parent bone), or 'move' (a root, or an IK constraint's
	 * target: the constrained bones follow it, as in the rigging tools). */
	_startJointDrag(d) {
		const model = this.model;
		const node = model.get(d.id);
		if (!node) return false;
		const parent = node.parent === null ? null : model.get(node.parent);
		const grand = parent && parent.parent !== null ? model.get(parent.parent) : null;
		this._gesture(true);
		d.sent = 0;
		d.want = 0;
		if (d.ik && grand) {
			d.kind = 'ik';
			d.chain = [grand.id, parent.id, node.id];
		} else if (parent && !this._ikTarget(node)) {
			d.kind = 'rotate';
			d.target = parent.id;
			d.centre = pivotWorld(parent);
			const grandWorld = grand ? grand.world : null;
			// A turn reads counter-clockwise on screen in an unmirrored frame;
			// under a mirrored parent the same op turns the other way.
			d.sign = grandWorld && grandWorld[0] * grandWorld[5] - grandWorld[1] * grandWorld[4] < 0 ? -1 : 1;
			const p = pivotWorld(node);
			d.a0 = Math.atan2(p[1] - d.centre[1], p[0] - d.centre[0]);
			d.last = d.a0;
			d.turn = 0;
		} else {
			d.kind = 'move';
			d.from = d.at;
			d.sent = [0, 0];
			d.want = [0, 0];
			// 'move' adds to t, in the parent's units: the pointer's
			// world offset is carried into the parent's frame as the drag
			// found it.
			d.frame = parent ? inverse2(parent.world) : null;
		}
		return true;
	}

	_jointDrag(d, p) {
		if (d.kind === 'ik') {
			this._live(`ik:${d.chain[2]}`, [{ op: 'ik', chain: d.chain, target: [p[0], p[1]] }]).catch((err) => this._failed(d, err));
			return;
		}
		if (d.kind === 'rotate') {
			// Unwrap so a drag round the pivot keeps turning.
			const a = Math.atan2(p[1] - d.centre[1], p[0] - d.centre[0]);
			let step = a - d.last;
			if (step > Math.PI) step -= 2 * Math.PI;
			if (step < -Math.PI) step += 2 * Math.PI;
			d.last = a;
			d.turn += step;
			// y points down: a growing atan2 is a clockwise turn on screen.
			d.want = (-d.turn * 180 / Math.PI) * d.sign;
		} else {
			const w = [p[0] - d.from[0], p[1] - d.from[1]];
			d.want = d.frame ? [d.frame[0] * w[0] + d.frame[2] * w[1], d.frame[1] * w[0] + d.frame[3] * w[1]] : w;
		}
		this._pump(d);
	}

	/*
	 * Sends what the drag asks for beyond what was sent, one batch at a
	 * time: rotate and move are relative, so a batch is never replaced by a
	 * later one (that would lose its part of the drag); each carries the
	 * difference between the wanted total and the total sent so far.
	 */
	_pump(d) {
		if (d.kind === 'ik') {
			if (d.done) this._gesture(false);
			return;
		}
		if (d.busy) return;
		let op = null;
		let sent = null;
		if (d.kind === 'rotate') {
			const angle = d.want - d.sent;
			if (Math.abs(angle) > 1e-9) op = { op: 'rotate', id: d.target, angle }, (sent = d.want);
		} else {
			const by = [d.want[0] - d.sent[0], d.want[1] - d.sent[1]];
			if (Math.hypot(by[0], by[1]) > 1e-9) op = { op: 'move', id: d.id, by: [by[0], by[1], 0] }, (sent = d.want.slice());
		}
		if (!op) {
			if (d.done && !d.closed) (d.closed = true), this._gesture(false);
			return;
		}
		d.busy = true;
		const before = d.sent;
		d.sent = sent;
		this._edit([op]).then(
			() => {},
			(err) => {
				d.sent = before;
				this._failed(d, err);
			},
		).finally(() => {
			d.busy = false;
			if (!d.failed) this._pump(d);
			else if (d.done && !d.closed) (d.closed = true), this._gesture(false);
		});
	}

	_failed(d, err) {
		if (!err) return;
		d.failed = true;
		this.emit('error', { message: err.message || String(err) });
	}

	/* --- what the tests read --- */

	/* Ids of the drawn layer groups, back to front, as the page has them. */
	domOrder() {
		return [...this.layersG.children].map((g) => g.dataset.id);
	}

	/* Where node 'id''s pivot is on the page (CSS pixels), or null. */
	screenOfJoint(id) {
		const p = this.pivots.get(id);
		if (!p) return null;
		const m = this.root.getScreenCTM();
		const q = new DOMPoint(p[0], p[1]).matrixTransform(m);
		return { x: q.x, y: q.y };
	}

	dispose() {
		if (this._raf) cancelAnimationFrame(this._raf);
		this._longPress.cancel();
		if (this._modelUnsubs) this._modelUnsubs.forEach((off) => off());
		this._unsubAssets();
		this._listeners.dispose();
		this._resize.disconnect();
		this.assets.dispose();
		document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => !this._sheets.includes(s));
		this.svg.remove();
		this.overlay.remove();
	}
}
