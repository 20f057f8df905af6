/*
 * viewport.js: the 3D view. A renderer, an orbiting camera, the node layer
 * and the overlays, a TransformControls gizmo for the selected node, and the
 * option to look through any node as a camera.
 *
 * It renders on demand (three.js manual, "Rendering on Demand"): a frame is
 * drawn only when something asked for one (a camera move, a model change, a
 * flash still fading), never in a busy loop.
 *
 * The gizmo edits a stand-in, never a drawn node: a 'frame' object carries
 * the parent's world matrix (from the server) and a 'proxy' under it carries
 * the node's pivot frame, position t + pivot, rotation r and scale s, so
 * that what TransformControls changes maps straight back to t, r and s,
 * which are sent to the server as an edit. The drawn node and its subtree
 * follow the gizmo at once, at predicted matrices, and are drawn at the
 * server's when its update carries the values sent (PREDICTION_TIMEOUT_MS).
 */
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { TransformControls } from 'three/addons/controls/TransformControls.js';
import { NodeLayer } from './drawables.js';
import { IDENTITY, invertAffine, position } from './mat.js';
import { Overlays, subtreeBoxes } from './overlays.js';
import { LongPress, TOUCH_TARGET_PX, coarsePointer, slopOf } from './touch.js';
import { Emitter, Listeners } from './util.js';

/*
 * True when WebGL runs on a software rasteriser (SwiftShader, llvmpipe):
 * a headless browser, a machine without a GPU. Asked of a throwaway
 * context, because the answer decides how the real one is made.
 */
function softwareGL() {
	const canvas = document.createElement('canvas');
	const gl = canvas.getContext('webgl2');
	if (!gl) return false;
	const ext = gl.getExtension('WEBGL_debug_renderer_info');
	const name = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
	gl.getExtension('WEBGL_lose_context')?.loseContext();
	return /swiftshader|llvmpipe|softpipe|software/i.test(name);
}

/*
 * How to draw shared geometry: instanced on a GPU, merged on a software
 * rasteriser, where each instance has a fixed cost that instancing
 * multiplies (see drawables.js). '?draw=instanced' or '?draw=merged' in the
 * page URL overrides the choice.
 */
function chooseDrawMode(software) {
	const forced = new URLSearchParams(location.search).get('draw');
	if (forced === 'instanced' || forced === 'merged') return forced;
	return software ? 'merged' : 'instanced';
}

/*
 * Adaptive quality. A frame's cost is the main thread's time from the
 * start of the frame to the first task after it: the script, then the
 * commit, which with a software rasteriser waits until the frame has been
 * drawn and read back. When the camera moves and two frames in a row cost
 * more than FRAME_COST_BUDGET_MS, the following frames of the move are
 * drawn at "moving" quality: half the pixels each way, and size thresholds
 * twice as large (drawables.js: smaller shapes and glyphs become dots). The
 * first frame after the camera stops (pointer released, or IDLE_MS without
 * a move) is drawn at full quality again. A view that needed moving
 * quality starts its next camera move with it, until a resize or a new
 * scene, or until moving frames cost less than a third of the budget.
 * '?quality=full' in the page URL turns this off.
 */
/*
 * Local prediction of a gizmo drag: drawn where it is predicted locally,
 * then corrected by the server. While the gizmo moves node N,
 * N is drawn at W_parent L, with L = T(t) T(pivot) R S T(-pivot) from the
 * gizmo's values, and every node below N at D W, where D is that matrix
 * times the inverse of N's world from the server: the subtree follows the
 * pointer before the server answers. Every update from the server puts
 * its matrices back, and the prediction is laid over them again until the
 * server's t, r and s of N are the predicted ones; from then on the
 * server's matrices alone are drawn. An edit refused, or
 * PREDICTION_TIMEOUT_MS after the drag without that update, also ends it.
 */
const PREDICTION_TIMEOUT_MS = 2000;
const SAME_LOCAL = 1e-12; // server values equal to the predicted ones

const FRAME_COST_BUDGET_MS = 14; // of the 16.7 ms of a 60 Hz frame
const IDLE_MS = 150;
const MOVING_PIXEL_SCALE = 0.5;
const MOVING_DETAIL_SCALE = 2;

/*
 * The gizmo's size on a touch screen. TransformControls scales its handles
 * to 0.2375 * size of the view's height per unit (its factor: distance *
 * 1.9 tan(fov / 2), over 4, against a view 2 distance tan(fov / 2) high),
 * and its thinnest picker (the rotate rings, the plane squares) is 0.2
 * units across: so 0.0475 * size * height pixels. On a coarse pointer the
 * size is raised until that is at least TOUCH_TARGET_PX (within limits).
 */
const GIZMO_SIZE = 0.9;
const GIZMO_SIZE_MAX_TOUCH = 2.5;
const GIZMO_THINNEST_PER_HEIGHT = 0.2 * 0.2375;

export class Viewport extends Emitter {
	/*
	 * Events:
	 *   pick     {id | null, additive}
	 *   gizmo    {phase: 'start'|'change'|'end', moved, id, mode, t, r, s}
	 *            (moved: the drag changed the node's values; an 'end' without
	 *            it carries no edit)
	 *   look     {id | null}   the camera being looked through changed
	 *   menu     {id, x, y}    a long press (touch) or a right click on a node
	 */
	constructor(container) {
		super();
		this.container = container;
		this._listeners = new Listeners();

		// On a software rasteriser every pixel is paid for on the CPU:
		// no multisampling and one pixel per CSS pixel there.
		const software = softwareGL();
		try {
			this.renderer = new THREE.WebGLRenderer({ antialias: !software, powerPreference: 'high-performance' });
		} catch (e) {
			throw new Error(`this browser cannot draw 3D here (WebGL 2 is unavailable or disabled: ${e.message})`);
		}
		this._fullPixelRatio = software ? 1 : Math.min(window.devicePixelRatio || 1, 2);
		this.renderer.setPixelRatio(this._fullPixelRatio);
		this.renderer.domElement.className = 'viewport-canvas';
		this.renderer.domElement.tabIndex = 0;
		container.append(this.renderer.domElement);

		this.scene = new THREE.Scene();
		this.scene.background = new THREE.Color(0x1d2027);
		this.scene.add(new THREE.HemisphereLight(0xdfe8ff, 0x3a3530, 1.6));
		const sun = new THREE.DirectionalLight(0xffffff, 2.2);
		sun.position.set(3, 6, 4);
		this.scene.add(sun);
		const fill = new THREE.DirectionalLight(0xb0c4ff, 0.6);
		fill.position.set(-4, 2, -3);
		this.scene.add(fill);

		this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 2000);
		this.camera.position.set(2.6, 2.2, 3.4);
		this.orbit = new OrbitControls(this.camera, this.renderer.domElement);
		this.orbit.target.set(-0.3, 0.8, 0.1);
		this.orbit.update();
		this._listeners.listen(this.orbit, 'change', () => this.requestRender());

		// Looking through a node: view = inverse of the node's world matrix.
		this.nodeCamera = new THREE.PerspectiveCamera(60, 1, 0.1, 1000);
		this.nodeCamera.matrixAutoUpdate = false;
		this.nodeCamera.matrixWorldAutoUpdate = false;
		this.lookId = null;

		this.drawMode = chooseDrawMode(software);
		this.layer = new NodeLayer({ mode: this.drawMode });
		this.scene.add(this.layer.group);
		this.overlays = new Overlays(this.scene);

		this._gizmoFrame = new THREE.Object3D();
		this._gizmoFrame.matrixAutoUpdate = false;
		this._gizmoProxy = new THREE.Object3D();
		this._gizmoFrame.add(this._gizmoProxy);
		this.scene.add(this._gizmoFrame);
		this.gizmo = new TransformControls(this.camera, this.renderer.domElement);
		this._touch = coarsePointer();
		this.gizmo.setSize(GIZMO_SIZE);
		this._gizmoHelper = this.gizmo.getHelper();
		this.scene.add(this._gizmoHelper);
		this._gizmoId = null;
		this._gizmoEnabled = true;
		this._pinching = false; // a second finger is down: the gizmo takes none
		this._gizmoInput();
		this._listeners.listen(this.gizmo, 'change', () => this.requestRender());
		// A press on the gizmo that moves nothing (a tap, or the first
		// finger of a pinch) edits nothing: the proxy may still hold values
		// the server has since changed (an undo whose update is on its way).
		this._gizmoMoved = false;
		this._listeners.listen(this.gizmo, 'dragging-changed', (e) => {
			this.orbit.enabled = !e.value && !this.lookId;
			if (e.value) this._gizmoMoved = false;
			this._emitGizmo(e.value ? 'start' : 'end');
			clearTimeout(this._predictionTimer);
			if (!e.value && this._prediction) {
				this._predictionTimer = setTimeout(() => this.dropPrediction(), PREDICTION_TIMEOUT_MS);
				this._confirmPrediction();
			}
		});
		this._listeners.listen(this.gizmo, 'objectChange', () => {
			this._gizmoMoved = true;
			this._emitGizmo('change');
			if (this.gizmo.dragging) this._predict();
		});
		this._prediction = null; // {id, t, r, s, ids}
		this._predictionTimer = 0;

		this._raycaster = new THREE.Raycaster();
		this._down = null;
		// Fingers on the canvas: OrbitControls turns one into an orbit and
		// two into a pinch (dolly and pan); a tap picks, a long press opens
		// the node's menu. A press that ever had a second finger picks nothing.
		this._pointers = new Set();
		this._longPress = new LongPress((x, y) => {
			if (this.gizmo.dragging) return;
			const id = this._pickAt(x, y);
			this._down = null;
			if (id) this.emit('menu', { id, x, y });
		});
		const canvas = this.renderer.domElement;
		// A second finger makes a pinch, wherever it lands: a gizmo drag
		// of the first ends where it is (one undo step, as any drag), and
		// the gizmo takes no finger until all are lifted, before
		// OrbitControls and TransformControls, whose listeners come after
		// this capturing one, see the second finger.
		this._listeners.listen(canvas, 'pointerdown', (e) => {
			if (this._pointers.size < 1 || e.pointerType === 'mouse') return;
			if (this.gizmo.dragging) this.gizmo.pointerUp({ button: 0 });
			this._pinching = true;
			this._gizmoInput();
		}, { capture: true });
		this._listeners.listen(canvas, 'pointerdown', (e) => {
			this._pointers.add(e.pointerId);
			if (this._pointers.size > 1) {
				this._down = null;
				this._longPress.cancel();
				return;
			}
			this._down = { x: e.clientX, y: e.clientY, button: e.button, slop: slopOf(e) };
			this._longPress.down(e, this._pointers.size);
		});
		this._listeners.listen(canvas, 'pointermove', (e) => this._longPress.move(e));
		this._listeners.listen(canvas, 'pointerup', (e) => this._onPointerUp(e));
		const lift = (e) => {
			this._pointers.delete(e.pointerId);
			this._longPress.cancel();
			if (!this._pointers.size && this._pinching) (this._pinching = false), this._gizmoInput();
		};
		this._listeners.listen(canvas, 'pointerup', lift);
		this._listeners.listen(canvas, 'pointercancel', (e) => {
			lift(e);
			this._down = null;
		});
		this._resizeObserver = new ResizeObserver(() => this.resize());
		this._resizeObserver.observe(container);

		this.model = null;
		this._modelUnsubs = [];
		this._frame = 0;
		this._flashTimer = 0;
		this._draw = this._draw.bind(this);
		this.resetStats();
		this._framed = false;
		this._adaptive = new URLSearchParams(location.search).get('quality') !== 'full';
		this._movingQuality = false; // frames are drawn at moving quality
		this._needsMovingQuality = false; // an earlier camera move needed it
		this._cameraMoving = false; // the camera moved within the last IDLE_MS
		this._slowFrames = 0; // consecutive moving frames over the budget
		this._lastView = new Float64Array(32).fill(NaN);
		this._idleTimer = 0;
		this._costChannel = new MessageChannel();
		this._costChannel.port1.onmessage = (e) => this._frameCost(e.data);
		this._listeners.listen(canvas, 'pointerup', () => this._cameraStopped());
		this.resize();
	}

	/* Shows 'model' (the live scene or an earlier seq); 'flash' says whether
	 * its updates should flash the recomputed nodes. */
	setModel(model, { flash = true, frame = false } = {}) {
		for (const off of this._modelUnsubs) off();
		this._prediction = null;
		this.model = model;
		this._flashUpdates = flash;
		this.layer.rebuild(model);
		this.overlays.bind(model, this.layer);
		this._modelUnsubs = [
			model.on('reset', () => {
				this._prediction = null;
				this.layer.rebuild(model);
				if (!this._framed) this.frameAll();
				this.overlays.changed();
				// A snapshot may hide the gizmo's node or show it again.
				if (this.gizmo.dragging) this._syncGizmo();
				else this.attachGizmo(this._gizmoId);
				this.requestRender();
			}),
			model.on('update', (info) => {
				this.layer.update(info);
				if (this._prediction) this._confirmPrediction();
				if (this._flashUpdates && info.world.size) this.layer.flash(info.world, performance.now());
				this.overlays.changed();
				if (this._gizmoId && !this.model.get(this._gizmoId)) this.attachGizmo(null);
				else if (!this.gizmo.dragging) {
					// The view hid the gizmo's node or shows it again.
					if (info.shown && info.shown.has(this._gizmoId)) this.attachGizmo(this._gizmoId);
					else this._syncGizmo();
				}
				if (this.lookId && !this.model.get(this.lookId)) this.lookThrough(null);
				this.requestRender();
			}),
		];
		if (frame || !this._framed) this.frameAll();
		this._syncGizmo();
		this.requestRender();
	}

	/* Points the orbit camera at the whole scene. */
	frameAll() {
		if (!this.model || !this.model.size) return;
		const boxes = subtreeBoxes(this.model).filter((b) => b.depth === 0);
		let min = [Infinity, Infinity, Infinity];
		let max = [-Infinity, -Infinity, -Infinity];
		for (const { box } of boxes) {
			min = min.map((v, i) => Math.min(v, box.min[i]));
			max = max.map((v, i) => Math.max(v, box.max[i]));
		}
		if (!boxes.length) {
			for (const node of this.model.nodes.values()) {
				const p = position(node.world || IDENTITY);
				min = min.map((v, i) => Math.min(v, p[i]));
				max = max.map((v, i) => Math.max(v, p[i]));
			}
		}
		this._frameBox(min, max);
		this._framed = true;
	}

	/* Points the orbit camera at one node's subtree (the F key). */
	frameNode(id) {
		const node = this.model && this.model.get(id);
		if (!node) return;
		const entry = subtreeBoxes(this.model).find((b) => b.id === id);
		if (entry) this._frameBox(entry.box.min, entry.box.max);
		else {
			const p = position(node.world);
			this._frameBox(p.map((v) => v - 0.3), p.map((v) => v + 0.3));
		}
	}

	_frameBox(min, max) {
		if (!min.every(Number.isFinite) || !max.every(Number.isFinite)) return;
		const centre = new THREE.Vector3((min[0] + max[0]) / 2, (min[1] + max[1]) / 2, (min[2] + max[2]) / 2);
		const radius = Math.max(0.25, Math.hypot(max[0] - min[0], max[1] - min[1], max[2] - min[2]) / 2);
		const dir = this.camera.position.clone().sub(this.orbit.target);
		if (dir.lengthSq() < 1e-12) dir.set(0.6, 0.45, 0.75);
		dir.normalize();
		const dist = (radius / Math.sin((this.camera.fov * Math.PI) / 360)) * 1.35;
		this.orbit.target.copy(centre);
		this.camera.position.copy(centre).addScaledVector(dir, dist);
		this.camera.near = Math.max(dist / 1000, 1e-4);
		this.camera.far = dist * 100 + radius * 10;
		this.camera.updateProjectionMatrix();
		this.orbit.update();
		this.requestRender();
	}

	setSelection(id) {
		this.overlays.setSelection(id);
		this.attachGizmo(id);
		this.requestRender();
	}

	setOthers(list) {
		this.overlays.setOthers(list);
		this.requestRender();
	}

	setOverlayFlags(flags) {
		this.overlays.setFlags(flags);
		this.requestRender();
	}

	/* --- gizmo --- */

	setGizmoMode(mode) {
		this.gizmo.setMode(mode);
		this.requestRender();
	}

	setGizmoSpace(space) {
		this.gizmo.setSpace(space);
		this.requestRender();
	}

	/* Turns the gizmo off while the view is read-only (time travel, offline). */
	setGizmoEnabled(enabled) {
		this._gizmoEnabled = enabled;
		this.attachGizmo(this._gizmoId);
	}

	attachGizmo(id) {
		this._gizmoId = id;
		// A gizmo on the node being looked through would sit on the eye; one
		// on a node the view hides (interest.js), outside the camera's view,
		// would sit at the last matrix the server sent for its parent.
		if (!id || !this._gizmoEnabled || !this.model || !this.model.get(id) || this.model.get(id).hidden || id === this.lookId) {
			this.gizmo.detach();
		} else {
			this._syncGizmo();
			this.gizmo.attach(this._gizmoProxy);
		}
		this._gizmoInput();
		this.requestRender();
	}

	/* The gizmo hears pointers only while it is shown and no pinch is on:
	 * a detached TransformControls still measures the canvas on every
	 * pointer move, which forces a layout per move during an orbit. */
	_gizmoInput() {
		this.gizmo.enabled = !!this.gizmo.object && !this._pinching;
	}

	_syncGizmo() {
		const node = this._gizmoId && this.model && this.model.get(this._gizmoId);
		if (!node) return;
		const parent = node.parent === null ? null : this.model.get(node.parent);
		this._gizmoFrame.matrix.fromArray(parent && parent.world ? parent.world : IDENTITY);
		this._gizmoFrame.matrixWorldNeedsUpdate = true;
		this._gizmoProxy.position.set(node.t[0] + node.pivot[0], node.t[1] + node.pivot[1], node.t[2] + node.pivot[2]);
		this._gizmoProxy.quaternion.fromArray(node.r);
		this._gizmoProxy.scale.fromArray(node.s);
		this._gizmoFrame.updateMatrixWorld(true);
	}

	_emitGizmo(phase) {
		const node = this._gizmoId && this.model && this.model.get(this._gizmoId);
		if (!node) return;
		const p = this._gizmoProxy;
		this.emit('gizmo', {
			phase,
			moved: this._gizmoMoved,
			id: node.id,
			mode: this.gizmo.mode,
			t: [p.position.x - node.pivot[0], p.position.y - node.pivot[1], p.position.z - node.pivot[2]],
			r: p.quaternion.toArray(),
			s: p.scale.toArray(),
		});
	}

	/* --- prediction (PREDICTION_TIMEOUT_MS) --- */

	/* Starts or moves the prediction from the gizmo's current values. */
	_predict() {
		const node = this._gizmoId && this.model && this.model.get(this._gizmoId);
		if (!node) return;
		const p = this._gizmoProxy;
		this._prediction = {
			id: node.id,
			t: [p.position.x - node.pivot[0], p.position.y - node.pivot[1], p.position.z - node.pivot[2]],
			r: p.quaternion.toArray(),
			s: p.scale.toArray(),
			ids: this._prediction ? this._prediction.ids : [],
		};
		this._showPrediction();
	}

	/* Draws the prediction over the model's current matrices. */
	_showPrediction() {
		const pr = this._prediction;
		const node = this.model.get(pr.id);
		const inverse = node && node.world ? invertAffine(node.world) : null;
		if (!inverse) return this.dropPrediction();
		const parent = node.parent === null ? null : this.model.get(node.parent);
		const pivot = new THREE.Vector3().fromArray(node.pivot);
		const local = new THREE.Matrix4()
			.compose(new THREE.Vector3().fromArray(pr.t).add(pivot), new THREE.Quaternion().fromArray(pr.r), new THREE.Vector3().fromArray(pr.s))
			.multiply(new THREE.Matrix4().makeTranslation(-pivot.x, -pivot.y, -pivot.z));
		const world = new THREE.Matrix4().fromArray(parent && parent.world ? parent.world : IDENTITY).multiply(local);
		const delta = world.clone().multiply(new THREE.Matrix4().fromArray(inverse));
		const worlds = new Map([[node.id, world.toArray()]]);
		const m = new THREE.Matrix4();
		for (const id of this.model.subtree(node.id)) {
			const below = this.model.get(id);
			if (id !== node.id && below.world) worlds.set(id, m.fromArray(below.world).premultiply(delta).toArray());
		}
		// Nodes that left the subtree since the last prediction get theirs back.
		this.layer.restore(pr.ids.filter((id) => !worlds.has(id)));
		pr.ids = [...worlds.keys()];
		this.layer.showPredicted(worlds);
		this.requestRender();
	}

	/* After an update: ends the prediction once the server's locals of the
	 * node are the predicted ones, else lays it over the new matrices. */
	_confirmPrediction() {
		const pr = this._prediction;
		const node = this.model.get(pr.id);
		const same = (a, b) => a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= SAME_LOCAL);
		if (node && !this.gizmo.dragging && same(node.t, pr.t) && same(node.r, pr.r) && same(node.s, pr.s)) this.dropPrediction();
		else if (node) this._showPrediction();
		else this.dropPrediction();
	}

	/* Draws the server's matrices alone again (also when an edit of the
	 * drag was refused). */
	dropPrediction() {
		clearTimeout(this._predictionTimer);
		const pr = this._prediction;
		this._prediction = null;
		if (!pr) return;
		this.layer.restore(pr.ids);
		this.requestRender();
	}

	/* Ids drawn at predicted matrices now (for tests). */
	predicted() {
		return this._prediction ? [...this._prediction.ids] : [];
	}

	/* --- looking through a node --- */

	/* Renders from node 'id' (its world matrix is the camera's; the view
	 * matrix is its inverse), or from the orbit camera when id is null. */
	lookThrough(id) {
		this.lookId = id && this.model && this.model.get(id) ? id : null;
		this.orbit.enabled = !this.lookId;
		this.gizmo.camera = this.lookId ? this.nodeCamera : this.camera;
		this.attachGizmo(this._gizmoId);
		this.emit('look', { id: this.lookId });
		this.requestRender();
	}

	/* The view matrix in use (16 numbers), for tests and the inspector. */
	viewMatrix() {
		const cam = this._activeCamera();
		return Array.from(cam.matrixWorldInverse.elements);
	}

	/* Page coordinates of a node's world origin through the active camera
	 * (null when it is not in front of the camera). */
	screenOf(id) {
		const node = this.model && this.model.get(id);
		return node ? this.screenOfPoint(node.world.slice(12, 15)) : null;
	}

	/* Page coordinates of world point 'xyz' (null behind the camera). */
	screenOfPoint(xyz) {
		const cam = this._activeCamera();
		if (cam.matrixWorldAutoUpdate) cam.updateMatrixWorld();
		const p = new THREE.Vector3(...xyz).project(cam);
		if (p.z < -1 || p.z > 1) return null;
		const rect = this.renderer.domElement.getBoundingClientRect();
		return { x: rect.left + ((p.x + 1) / 2) * rect.width, y: rect.top + ((1 - p.y) / 2) * rect.height };
	}

	_activeCamera() {
		if (!this.lookId) return this.camera;
		const node = this.model.get(this.lookId);
		const cam = this.nodeCamera;
		cam.matrixWorld.fromArray(node.world);
		const view = invertAffine(node.world);
		if (view) cam.matrixWorldInverse.fromArray(view);
		const { fov, near, far } = node.kind === 'camera' ? node.camera : { fov: 60, near: 0.05, far: 1000 };
		if (cam.fov !== fov || cam.near !== near || cam.far !== far || cam.aspect !== this._aspect) {
			Object.assign(cam, { fov, near, far, aspect: this._aspect });
			cam.updateProjectionMatrix();
		}
		return cam;
	}

	/* --- picking --- */

	_onPointerUp(e) {
		const down = this._down;
		this._down = null;
		if (!down || this.gizmo.dragging) return;
		if (Math.hypot(e.clientX - down.x, e.clientY - down.y) > down.slop) return;
		// A right click that did not pan opens the node's menu.
		if (down.button === 2) {
			const id = this._pickAt(e.clientX, e.clientY);
			if (id) this.emit('menu', { id, x: e.clientX, y: e.clientY });
			return;
		}
		if (down.button !== 0) return;
		// A click on the gizmo's handles is the gizmo's, not a pick.
		if (this.gizmo.axis) return;
		this.emit('pick', { id: this._pickAt(e.clientX, e.clientY), additive: e.shiftKey });
	}

	/* The id of the node drawn at page point (x, y), or null. */
	_pickAt(x, y) {
		const rect = this.renderer.domElement.getBoundingClientRect();
		const ndc = new THREE.Vector2(((x - rect.left) / rect.width) * 2 - 1, -((y - rect.top) / rect.height) * 2 + 1);
		const cam = this._activeCamera();
		this._raycaster.setFromCamera(ndc, cam);
		const dist = this.lookId ? 1 : this.camera.position.distanceTo(this.orbit.target);
		this._raycaster.params.Line.threshold = Math.max(0.005, dist * 0.01);
		this._raycaster.params.Points.threshold = Math.max(0.005, dist * 0.006);
		return this.layer.pick(this._raycaster);
	}

	/* How many CSS pixels across the gizmo's thinnest handle is now. */
	gizmoHandlePx() {
		return GIZMO_THINNEST_PER_HEIGHT * this.gizmo.size * this._cssSize[1];
	}

	/* --- rendering --- */

	resize() {
		const w = Math.max(1, this.container.clientWidth);
		const h = Math.max(1, this.container.clientHeight);
		this._aspect = w / h;
		this._cssSize = [w, h];
		this._needsMovingQuality = false;
		this.renderer.setSize(w, h, false);
		this.camera.aspect = this._aspect;
		this.camera.updateProjectionMatrix();
		if (this._touch) {
			const size = TOUCH_TARGET_PX / (GIZMO_THINNEST_PER_HEIGHT * h);
			this.gizmo.setSize(Math.min(Math.max(GIZMO_SIZE, size), GIZMO_SIZE_MAX_TOUCH));
		}
		this.requestRender();
	}

	requestRender() {
		if (!this._frame) this._frame = requestAnimationFrame(this._draw);
	}

	/* Draws one frame now (also used by tests that need pixels at once). */
	renderNow() {
		if (this._frame) cancelAnimationFrame(this._frame);
		this._frame = 0;
		this._draw(performance.now());
	}

	_draw(now) {
		this._frame = 0;
		const t0 = performance.now();
		const animating = this.layer.animate(t0);
		this.overlays.sync();
		const cam = this._activeCamera();
		if (cam.matrixWorldAutoUpdate) cam.updateMatrixWorld();
		const moved = this._cameraMoved(cam);
		if (moved) this._cameraMoves();
		// Per-viewer interest (interest.js) follows the camera.
		if (moved) this.emit('camera', this._viewOf(cam));
		this._setMovingQuality(this._adaptive && this._cameraMoving && (this._needsMovingQuality || this._slowFrames >= 2));
		this.layer.prepare(cam, this._cssSize[0], this._cssSize[1]);
		this.renderer.render(this.scene, cam);
		const t1 = performance.now();
		this._costChannel.port2.postMessage({ t0, moved, moving: this._movingQuality });
		const s = this.stats;
		if (!this._drewScene && this.model && this.model.size) {
			this._drewScene = true;
			performance.mark('rigd:first-scene-frame');
		}
		s.frames++;
		if (this._movingQuality) s.movingFrames++;
		s.renderMs.push(t1 - t0);
		if (s.lastFrameAt) s.intervals.push(t0 - s.lastFrameAt);
		s.lastFrameAt = t0;
		if (s.renderMs.length > 2000) s.renderMs.splice(0, 1000), s.intervals.splice(0, 1000);
		// A flash fades over a few hundred milliseconds; twenty frames a
		// second is smooth enough for a fade and costs a third of sixty.
		if (animating && !this._flashTimer) {
			this._flashTimer = setTimeout(() => {
				this._flashTimer = 0;
				this.requestRender();
			}, 50);
		}
	}

	resetStats() {
		this.stats = { frames: 0, movingFrames: 0, renderMs: [], costMs: [], intervals: [], lastFrameAt: 0 };
	}

	/* 'full', or 'moving' while the camera moves (FRAME_COST_BUDGET_MS). */
	get quality() {
		return this._movingQuality ? 'moving' : 'full';
	}

	/* True when the camera's view or projection differs from the last
	 * frame's. */
	_cameraMoved(cam) {
		const last = this._lastView;
		const v = cam.matrixWorldInverse.elements;
		const p = cam.projectionMatrix.elements;
		let moved = false;
		for (let i = 0; i < 16; i++) {
			if (last[i] !== v[i] || last[16 + i] !== p[i]) moved = true;
			last[i] = v[i];
			last[16 + i] = p[i];
		}
		return moved;
	}

	/* The active camera's view-projection matrix (column-major) and the
	 * viewport in CSS pixels: what interest.js declares to the server. */
	currentView() {
		const cam = this._activeCamera();
		if (cam.matrixWorldAutoUpdate) cam.updateMatrixWorld();
		return this._viewOf(cam);
	}

	_viewOf(cam) {
		const vp = new THREE.Matrix4().multiplyMatrices(cam.projectionMatrix, cam.matrixWorldInverse);
		return { vp: Array.from(vp.elements), viewport: this._cssSize.slice() };
	}

	_cameraMoves() {
		this._cameraMoving = true;
		clearTimeout(this._idleTimer);
		this._idleTimer = setTimeout(() => this._cameraStopped(), IDLE_MS);
	}

	/* The camera stopped: the next frame is drawn at full quality. */
	_cameraStopped() {
		clearTimeout(this._idleTimer);
		this._idleTimer = 0;
		this._cameraMoving = false;
		this._slowFrames = 0;
		if (this._movingQuality) this.requestRender();
	}

	_setMovingQuality(on) {
		if (on === this._movingQuality) return;
		this._movingQuality = on;
		this.renderer.setPixelRatio(this._fullPixelRatio * (on ? MOVING_PIXEL_SCALE : 1));
		this.layer.setDetail(on ? MOVING_DETAIL_SCALE : 1);
	}

	/* Called in the first task after a frame (see FRAME_COST_BUDGET_MS). */
	_frameCost({ t0, moved, moving }) {
		const cost = performance.now() - t0;
		this.stats.costMs.push(cost);
		if (this.stats.costMs.length > 2000) this.stats.costMs.splice(0, 1000);
		if (!moved || !this._adaptive) return;
		if (moving) {
			if (cost < FRAME_COST_BUDGET_MS / 3) this._needsMovingQuality = false;
			return;
		}
		this._slowFrames = cost > FRAME_COST_BUDGET_MS ? this._slowFrames + 1 : 0;
		if (this._slowFrames >= 2) this._needsMovingQuality = true;
	}

	dispose() {
		cancelAnimationFrame(this._frame);
		clearTimeout(this._flashTimer);
		clearTimeout(this._idleTimer);
		clearTimeout(this._predictionTimer);
		this._longPress.cancel();
		this._costChannel.port1.close();
		this._frame = 0;
		for (const off of this._modelUnsubs) off();
		this._listeners.dispose();
		this._resizeObserver.disconnect();
		this.gizmo.detach();
		this.gizmo.dispose();
		this._gizmoHelper.removeFromParent();
		this.orbit.dispose();
		this.layer.dispose();
		this.overlays.dispose();
		this.renderer.dispose();
		// Give the context back now: a page that opens scene after scene
		// would otherwise reach the browser's limit of live WebGL contexts.
		this.renderer.forceContextLoss();
		this.renderer.domElement.remove();
	}
}
