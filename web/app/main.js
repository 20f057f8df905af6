/*
 * main.js: the viewer's entry point. One websocket for the page's whole
 * life, a router (#/ lists scenes, #/scene/NAME opens one), the top bar
 * (connection state, the access token, who else is here, your display
 * name, the one Import button), and SceneView, which wires one scene's
 * session, viewport and panels together.
 *
 * On every screen: below 900 CSS pixels wide the viewport takes the screen
 * and the panels (hierarchy, inspector, a 2D scene's poses, draw order and
 * clips) become bottom sheets, one open at a time, chosen in the panel bar
 * above the timeline (style.css has the layout; docs/viewer-touch.md the
 * whole of it). A node's menu (nodemenu.js) opens from a long press, a
 * right click or the context-menu key. The viewport's status line is the
 * canvas's text alternative: the selected node and its world position, who
 * else has what selected, how many nodes the last update recomputed.
 *
 * window.rigd is a read-only hook for tests and debugging: it reports what
 * the page draws (worldOf(id) is the matrixWorld of the node's Object3D)
 * and never changes anything the user could not.
 */
import { auth, refusalText, validToken } from './auth.js';
import { Connection } from './connection.js';
import { ClipPanel } from './clips.js';
import { exportGltf } from './gltfio.js';
import { HierarchyPanel } from './hierarchy.js';
import { Importer } from './importer.js';
import { InspectorPanel } from './inspector.js';
import { InterestControl, interestMode, minPxOf } from './interest.js';
import { position } from './mat.js';
import { SceneModel } from './model.js';
import { NodeMenu } from './nodemenu.js';
import { SceneList } from './scenelist.js';
import { SceneSession } from './session.js';
import { DrawOrderPanel, PosePanel } from './panels2d.js';
import { Timeline } from './timeline.js';
import { Listeners, clear, colourFor, el, fmt, randomToken } from './util.js';
import { View2D } from './view2d.js';
import { Viewport } from './viewport.js';
import { chooseFormat } from './wire.js';

/* The display name, kept across visits. */
function loadName() {
	try {
		const saved = localStorage.getItem('rigd.name');
		if (saved) return saved;
	} catch {
		/* storage may be disabled */
	}
	return `guest-${randomToken(4)}`;
}

/* The frames to subscribe with: ?format=f32|f64|json, else the stored
 * rigd.format setting, else binary float32 (docs/protocol.md). */
function loadFormat() {
	let stored = null;
	try {
		stored = localStorage.getItem('rigd.format');
	} catch {
		/* storage may be disabled */
	}
	return chooseFormat(location.search, stored);
}
function saveName(name) {
	try {
		localStorage.setItem('rigd.name', name);
	} catch {
		/* storage may be disabled */
	}
}

const SHAPES = {
	box: { kind: 'mesh', mesh: 'box', bounds: { min: [-0.1, -0.1, -0.1], max: [0.1, 0.1, 0.1] } },
	empty: { kind: 'group' },
	camera: { kind: 'camera', camera: { fov: 50, near: 0.05, far: 100 } },
};

/* One open scene: session, viewport, hierarchy, inspector, timeline. */
class SceneView {
	constructor(root, conn, name, app) {
		this.app = app;
		this.conn = conn;
		this.name = name;
		this._listeners = new Listeners();
		this._unsubs = [];
		this.selected = null;
		this.others = [];

		// Layout.
		const left = el('aside#panel-hierarchy.panel.hierarchy-panel', { 'aria-label': 'Hierarchy' });
		const right = el('aside#panel-inspector.panel.inspector-panel', { 'aria-label': 'Inspector' });
		const centre = el('main.viewport');
		const bottom = el('footer.timeline', { 'aria-label': 'History' });
		this.banner = el('div.banner', { hidden: true, role: 'status' });
		this.loading = el('div.loading', {}, `Opening ${name}…`);
		this.toolbar = this._buildToolbar();
		this.status = el('div#view-status.view-status');
		this.sheetBar = el('nav.sheet-bar', { 'aria-label': 'Panels' });
		this.sheetTabs = {};
		this.element = el('div.scene-view', {}, left, centre, right, this.sheetBar, bottom);
		this._addSheet('hierarchy', 'Hierarchy', left);
		this._addSheet('inspector', 'Inspector', right);
		root.append(this.element);

		// The viewport first: when WebGL is missing it throws, before a
		// subscription or a listener exists that would need undoing.
		this.viewport = new Viewport(centre);
		this.session = new SceneSession(conn, name, { displayName: app.displayName, format: app.format });
		this.live = this.session.model;
		this.shown = this.live;
		// Per-viewer interest (interest.js): ?interest=auto (the default)
		// declares the camera's view for a 3D scene of thousands of nodes,
		// =on at any size, =off never; the server then sends only what the
		// camera sees.
		this.interest = new InterestControl(this.session, this.viewport, { mode: interestMode(location.search), minPx: minPxOf(location.search) });
		centre.append(this.toolbar, this.banner, this.status, this.loading);
		const canvas = this.viewport.renderer.domElement;
		canvas.setAttribute('role', 'img');
		canvas.setAttribute('aria-label', `3D view of scene ${name}`);
		canvas.setAttribute('aria-describedby', 'view-status');
		this.hierarchy = new HierarchyPanel(left);
		this.inspector = new InspectorPanel(right);
		this.centre = centre;
		this.right = right;
		// A 2D scene is drawn as SVG over the (then idle) 3D canvas, with
		// its panels under the inspector; made when a model says dims 2.
		this.view2d = null;
		this.poses = null;
		this.drawOrder = null;
		this.clips = null;
		this.timeline = new Timeline(bottom, name);

		this._display(this.live, { flash: true });
		this._wire();
		this._applyEditable();
	}

	_buildToolbar() {
		const modes = [
			['translate', 'Move (W)', '⤧'],
			['rotate', 'Rotate (E)', '⟳'],
			['scale', 'Scale (R)', '⤢'],
		];
		this.modeButtons = modes.map(([mode, title, icon]) => el('button.tool.mode', { title, dataset: { mode }, 'aria-label': title, 'aria-pressed': 'false' }, icon));
		this.spaceButton = el('button.tool', { title: 'Gizmo axes: local or world (Q)', 'aria-label': 'Gizmo space' }, 'local');
		const overlays = [
			['grid', 'Grid'],
			['axes', 'Axes'],
			['nodeBoxes', 'Node AABBs'],
			['subtreeBoxes', 'Subtree AABBs'],
			['pivot', 'Pivot'],
		];
		this.overlayBoxes = {};
		const toggles = overlays.map(([key, label]) => {
			const box = el('input', { type: 'checkbox', checked: this._overlayDefault(key), dataset: { overlay: key } });
			this.overlayBoxes[key] = box;
			return el('label.toggle-chip', { title: `Show ${label}` }, box, label);
		});
		// The overlays in one menu, so that the toolbar is one row at 1280
		// pixels (and two at most on a phone).
		this.overlayList = el('div.overlay-list', {}, ...toggles);
		this.overlayMenu = el('details.overlay-menu', {}, el('summary.tool', { title: 'Show or hide the grid, axes, boxes, pivot (and bones)' }, 'Overlays ▾'), this.overlayList);
		this.frameButton = el('button.tool', { title: 'Frame everything (A) / the selection (F)', 'aria-label': 'Frame all' }, '⌂');
		this.exportButton = el('button.tool.export-gltf', { title: 'Download this scene, at the seq shown, as a glTF 2.0 file', 'aria-label': 'Export glTF' }, '⇩ glTF');
		this.helpButton = el('button.tool', { title: 'Keys and gestures (?)', 'aria-label': 'Help' }, '?');
		this.help = el(
			'div.help',
			{ hidden: true, role: 'dialog', 'aria-label': 'Keys and gestures' },
			el('h3', {}, 'Keys and gestures'),
			el(
				'dl',
				{},
				...[
					['Click / tap', 'select a node (in the viewport or the hierarchy)'],
					['Right click / long press', 'the node\'s menu: inspect, frame, look through, add a child, delete'],
					['One finger', '3D: orbit; 2D: pan, or drag a joint as with the mouse'],
					['Two fingers', 'pinch to zoom, move together to pan'],
					['Tree: ↑ ↓ ← →', 'move and expand in the hierarchy; Enter selects; the menu key opens the node\'s menu'],
					['W  E  R', 'gizmo: move, rotate, scale; Q: local or world axes'],
					['F  /  A', 'frame the selection / everything'],
					['Del', 'delete the selected node and its subtree'],
					['Ctrl+Z', 'undo your last edit (a whole drag is one edit)'],
					['Ctrl+Shift+Z', 'redo (also Ctrl+Y)'],
					['Esc', 'stop looking through a camera; clear the selection'],
					['Drag a label', 'x, y, z in the inspector scrub the value (Shift: finer)'],
					['Drag a row', 'onto another row: make it a child; near a row\'s edge: place it before or after'],
					['Timeline', 'drag back to see an earlier seq (read-only); ▶ replays the log'],
					['Import / drop', 'glTF, an SVG rig with its manifest, a Spine or DragonBones skeleton with its atlas and pages: a new scene; ⇩ glTF exports the seq shown'],
					['2D: drag a joint', 'turn its parent bone; Shift+drag: pull the chain\'s end (two-bone IK); a root\'s joint moves the figure'],
					['2D: wheel / drag', 'zoom about the pointer / pan (on empty space or the artwork)'],
					['2D: Clips panel', 'Space: play or pause the clip for everyone; ← →: a frame back or on (with the focus in the panel)'],
				].flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]),
			),
		);
		return el('div.toolbar', { role: 'toolbar', 'aria-label': 'View tools' }, ...this.modeButtons, this.spaceButton, el('span.sep'), this.overlayMenu, el('span.sep'), this.frameButton, this.exportButton, this.helpButton, this.help);
	}

	_overlayDefault(key) {
		return key === 'grid' || key === 'axes' || key === 'pivot';
	}

	_wire() {
		const L = this._listeners;
		const s = this.session;
		this._unsubs.push(
			s.on('status', ({ phase, message, code }) => {
				this.loading.hidden = phase === 'live';
				if (phase === 'loading') {
					clear(this.loading);
					this.loading.append(`Opening ${this.name}…`);
				}
				if (phase === 'error') {
					clear(this.loading);
					const refused = code === 'unauthorized' || code === 'forbidden';
					const text = refused ? refusalText(code, message, Boolean(auth.token)) : message;
					this.loading.append(el('div.error-text', {}, `Cannot open scene '${this.name}': ${text}`));
					if (refused) this.loading.append(el('button.primary.ask-token', { type: 'button', onclick: () => this.app.askToken(code, message) }, 'Enter a token'), ' ');
					this.loading.append(el('a', { href: '#/' }, 'Back to the scene list'));
					this.loading.hidden = false;
				}
				this._applyEditable();
			}),
			s.on('presence', () => this._presenceChanged()),
			s.on('history', (h) => this.timeline.setHistoryState(h)),
			s.on('notice', ({ message }) => this.app.toast(message)),
			this.live.on('reset', () => this._liveChanged()),
			this.live.on('update', (info) => this._liveChanged(info)),
			this.conn.on('state', () => this._applyEditable()),
		);

		// Viewport.
		this._unsubs.push(
			this.viewport.on('pick', ({ id }) => this.select(id)),
			this.viewport.on('gizmo', (g) => this._onGizmo(g)),
			this.viewport.on('look', ({ id }) => this._showBanner()),
			this.viewport.on('menu', ({ id, x, y }) => this.openMenu(id, x, y)),
		);
		L.listen(document, 'pointerdown', (e) => {
			if (this.overlayMenu.open && !this.overlayMenu.contains(e.target)) this.overlayMenu.open = false;
		});
		for (const b of this.modeButtons) L.listen(b, 'click', () => this.setMode(b.dataset.mode));
		L.listen(this.spaceButton, 'click', () => this.toggleSpace());
		L.listen(this.frameButton, 'click', () => (this.view2d ? this.view2d.frameAll() : this.viewport.frameAll()));
		L.listen(this.exportButton, 'click', () => this.exportGltf());
		L.listen(this.helpButton, 'click', () => (this.help.hidden = !this.help.hidden));
		for (const [key, box] of Object.entries(this.overlayBoxes)) L.listen(box, 'change', () => this.viewport.setOverlayFlags({ [key]: box.checked }));
		this.setMode('translate');

		// Hierarchy.
		this._unsubs.push(
			this.hierarchy.on('select', ({ id }) => this.select(id)),
			this.hierarchy.on('reparent', (r) => this._reparent(r)),
			this.hierarchy.on('create', (c) => this._create(c)),
			this.hierarchy.on('delete', ({ id }) => this._delete(id)),
			this.hierarchy.on('menu', ({ id, x, y }) => this.openMenu(id, x, y)),
		);

		// Inspector.
		this._unsubs.push(
			this.inspector.on('edit', (e) => this._inspectorEdit(e)),
			this.inspector.on('begin', () => this.session.beginGesture()),
			this.inspector.on('end', () => this.session.endGesture()),
			this.inspector.on('select', ({ id }) => this.select(id)),
			this.inspector.on('look', ({ id }) => this.lookThrough(id)),
		);

		// Timeline.
		this._unsubs.push(
			this.timeline.on('show', ({ model }) => this._display(model, { flash: false })),
			this.timeline.on('live', () => this._display(this.live, { flash: true })),
			this.timeline.on('undo', () => this.undo()),
			this.timeline.on('redo', () => this.redo()),
		);
	}

	/* --- what is shown --- */

	_display(model, { flash }) {
		this.shown = model;
		if (model.dims === 2) this._enter2D();
		// The 3D viewport of a 2D scene holds nothing, so it never draws.
		this.viewport.setModel(this.view2d ? this._empty3D : model, { flash });
		if (this.view2d) {
			this.view2d.setModel(model);
			this.poses.setModel(model);
			this.drawOrder.setModel(model);
			this.clips.setModel(model);
		}
		this.hierarchy.setModel(model);
		this.inspector.setModel(model);
		if (this.selected && !model.get(this.selected)) this.inspector.show(null);
		else this.inspector.show(this.selected);
		this.hierarchy.setSelection(this.selected && model.get(this.selected) ? this.selected : null);
		this.viewport.setSelection(this.selected && model.get(this.selected) ? this.selected : null);
		this._applyEditable();
		this._showBanner();
	}

	/* Turns this view into the 2D one (once: a scene's dims never change). */
	_enter2D() {
		if (this.view2d) return;
		const edit = (ops) => this.session.edit(ops);
		const live = (key, ops) => this.session.live(key, ops);
		const gesture = (on) => (on ? this.session.beginGesture() : this.session.endGesture());
		this.element.classList.add('two-d');
		this._empty3D = new SceneModel(this.name, { readOnly: true });
		this.view2d = new View2D(this.centre, { scene: this.name, edit, live, gesture });
		const bones = el('input', { type: 'checkbox', checked: true, dataset: { overlay: 'bones' } });
		this._listeners.listen(bones, 'change', () => this.view2d.setBonesVisible(bones.checked));
		this.overlayList.append(el('label.toggle-chip.bones-chip', { title: 'Show the bones and joints' }, bones, 'Bones'));
		this.view2d.svg.setAttribute('aria-label', `2D view of scene ${this.name}`);
		this.view2d.svg.setAttribute('aria-describedby', 'view-status');
		this.centre.append(this.toolbar, this.banner, this.status, this.loading);
		const holder = el('div.panels2d');
		this.right.append(holder);
		// The clips panel first: it is hidden in a scene without clips.
		this.clips = new ClipPanel(holder, { scene: this.name, live, gesture });
		this.poses = new PosePanel(holder, { scene: this.name, edit, live, gesture });
		this.drawOrder = new DrawOrderPanel(holder, { edit, select: (id) => this.select(id) });
		this._addSheet('poses', 'Poses', this.right);
		this._addSheet('order', 'Draw order', this.right);
		this._addSheet('clips', 'Clips', this.right);
		// The clips tab is there when the clips panel is (a scene with clips).
		const clipsPanel = this.clips.element;
		this.sheetTabs.clips.hidden = clipsPanel.hidden;
		this._clipsWatch = new MutationObserver(() => {
			this.sheetTabs.clips.hidden = clipsPanel.hidden;
			if (clipsPanel.hidden && this.element.dataset.sheet === 'clips') this.showSheet(null);
		});
		this._clipsWatch.observe(clipsPanel, { attributes: true, attributeFilter: ['hidden'] });
		this._unsubs.push(
			this.view2d.on('menu', ({ id, x, y }) => this.openMenu(id, x, y)),
			this.view2d.on('pick', ({ id }) => this.select(id)),
			this.view2d.on('error', ({ message }) => this.app.toast(message)),
		);
		for (const part of [this.view2d, this.clips, this.poses, this.drawOrder]) part.setModel(this.shown);
		this.view2d.setSelection(this.selected);
		this._applyEditable();
	}

	_liveChanged(info) {
		if (info && info.world && this.shown === this.live) this._recomputed = info.world.size;
		this._statusChanged();
		if (this.live.dims === 2 && !this.view2d && this.shown === this.live) this._display(this.live, { flash: false });
		this.timeline.setLiveSeq(this.live.seq);
		this.app.setSceneInfo(this.name, this.live);
		if (this.shown === this.live && this.selected && !this.live.get(this.selected)) this.select(null);
	}

	get editable() {
		return this.conn.isOpen && this.session.phase === 'live' && this.shown === this.live;
	}

	_applyEditable() {
		const editable = this.editable;
		this.hierarchy.setEditable(editable);
		this.inspector.setEditable(editable);
		this.viewport.setGizmoEnabled(editable);
		if (this.view2d) {
			this.view2d.setEditable(editable);
			this.clips.setEditable(editable);
			this.poses.setEditable(editable);
			this.drawOrder.setEditable(editable);
		}
		this.element.classList.toggle('read-only', !editable);
		this._showBanner();
	}

	_showBanner() {
		const parts = [];
		clear(this.banner);
		if (this.shown !== this.live) {
			const back = el('button.link', { type: 'button' }, 'Back to live');
			back.addEventListener('click', () => this.timeline.goLive());
			parts.push(el('span', {}, `Viewing seq ${this.shown.seq} of ${this.live.seq} (read-only). `), back);
		} else if (!this.conn.isOpen && this.session.phase === 'live') {
			parts.push(el('span', {}, 'Offline: showing the last state received. Editing resumes when the connection is back.'));
		}
		if (this.viewport.lookId) {
			const exit = el('button.link', { type: 'button' }, 'Stop (Esc)');
			exit.addEventListener('click', () => this.lookThrough(null));
			if (parts.length) parts.push(el('span.sep'));
			parts.push(el('span', {}, `Looking through ${this.viewport.lookId}. `), exit);
		}
		this.banner.append(...parts);
		this.banner.hidden = parts.length === 0;
	}

	/* --- selection and presence --- */

	select(id) {
		if (id && !this.shown.get(id)) id = null;
		this.selected = id;
		this.hierarchy.setSelection(id);
		this.inspector.show(id);
		this.viewport.setSelection(id);
		if (this.view2d) this.view2d.setSelection(id);
		this.session.setSelection(id ? [id] : []);
		this._statusChanged();
	}

	/* --- panels as sheets (narrow screens), the node menu, the status --- */

	/* A tab in the panel bar that opens sheet 'key' (panel 'panel'). */
	_addSheet(key, label, panel) {
		const tab = el('button.sheet-tab', { type: 'button', dataset: { sheet: key }, 'aria-expanded': 'false', 'aria-controls': panel.id }, label);
		this._listeners.listen(tab, 'click', () => this.showSheet(this.element.dataset.sheet === key ? null : key));
		this.sheetTabs[key] = tab;
		this.sheetBar.append(tab);
	}

	/* Opens sheet 'key' ('hierarchy', 'inspector', 'poses', 'order',
	 * 'clips'), or closes the one open (null). Only narrow screens show
	 * panels as sheets; wider ones show them all, whatever this says. */
	showSheet(key) {
		if (key) this.element.dataset.sheet = key;
		else delete this.element.dataset.sheet;
		for (const [k, tab] of Object.entries(this.sheetTabs)) tab.setAttribute('aria-expanded', String(k === key));
	}

	/* The node's menu at page point (x, y). */
	openMenu(id, x, y) {
		if (!this.shown.get(id)) return;
		const editable = this.editable;
		const items = [
			{ label: 'Inspect', run: () => (this.select(id), this.showSheet('inspector')) },
			this.view2d ? null : { label: 'Frame (F)', run: () => (this.select(id), this.viewport.frameNode(id)) },
			this.view2d ? null : { label: 'Look through', run: () => (this.select(id), this.lookThrough(id)) },
			{ label: 'Add a child', disabled: !editable, run: () => (this.select(id), this.showSheet('hierarchy'), this.hierarchy.openCreate()) },
			{ label: 'Delete (Del)', disabled: !editable, run: () => this._delete(id) },
		].filter(Boolean);
		this.app.menu.show(id, x, y, items);
	}

	/* The viewport's status line, at most once a frame. */
	_statusChanged() {
		if (this._statusFrame) return;
		this._statusFrame = requestAnimationFrame(() => {
			this._statusFrame = 0;
			// Only when it changed: a new text is a layout, and updates
			// stream in while the camera moves.
			const text = this.statusText();
			if (text !== this.status.textContent) this.status.textContent = text;
		});
	}

	/* What the viewport shows, in words: the canvas's text alternative. */
	statusText() {
		const parts = [];
		const node = this.selected && this.shown.get(this.selected);
		if (node) {
			const p = node.world ? position(node.world) : null;
			const where = p ? (this.view2d ? `(${fmt(p[0], 1)}, ${fmt(p[1], 1)})` : `(${fmt(p[0])}, ${fmt(p[1])}, ${fmt(p[2])})`) : 'unknown';
			parts.push(`Selected ${node.id}${node.name && node.name !== node.id ? ` (${node.name})` : ''}, world position ${where}`);
		} else parts.push(`No node selected; ${this.shown.size} node${this.shown.size === 1 ? '' : 's'}`);
		for (const o of this.others) if (o.ids.length) parts.push(`${o.name} has ${o.ids.slice(0, 3).join(', ')}${o.ids.length > 3 ? '…' : ''} selected`);
		if (this._recomputed) parts.push(`last update recomputed ${this._recomputed} node${this._recomputed === 1 ? '' : 's'}`);
		return parts.join(' · ');
	}

	_presenceChanged() {
		this.others = [...this.session.others.values()].map((o) => {
			const c = colourFor(o.client, { saturation: 0.8, lightness: 0.6 });
			return { client: o.client, name: o.name, ids: o.selection || [], css: c.css, colour: c.rgb };
		});
		this.hierarchy.setOthers(this.others);
		this.viewport.setOthers(this.others.map((o) => ({ ids: o.ids, colour: o.colour })));
		this.app.setPresence(this.others);
		this._statusChanged();
	}

	/* --- edits --- */

	_inspectorEdit({ ops, key, onError, onOk }) {
		this.session.live(key, ops).then(
			(ack) => ack && onOk(),
			(err) => onError(err),
		);
	}

	_onGizmo({ phase, moved, id, mode, t, r, s }) {
		if (phase === 'start') return this.session.beginGesture();
		if (!moved) return this.session.endGesture();
		const op = { op: 'set', id };
		if (mode === 'translate') op.t = t;
		else if (mode === 'rotate') op.r = r;
		else op.s = s;
		this.session.live(`${id}:gizmo`, [op]).catch((err) => {
			this.viewport.dropPrediction();
			this.inspector.showError(mode === 'translate' ? 't' : mode === 'rotate' ? 'rotation' : 's', err.message);
		});
		if (phase === 'end') this.session.endGesture();
	}

	_reparent({ id, parent, index, keepWorld }) {
		const op = { op: 'reparent', id, parent, keep_world: keepWorld };
		if (index !== null) op.index = index;
		this.hierarchy.showMessage('');
		this.session.edit([op]).then(
			() => this.select(id),
			(err) => this.hierarchy.showMessage(`Cannot move ${id} ${parent ? `under ${parent}` : 'to the top level'}: ${err.message}`),
		);
	}

	_create({ id, parent, shape, onError, onDone }) {
		const op = { op: 'create', id, ...structuredClone(SHAPES[shape]) };
		if (parent) op.parent = parent;
		this.session.edit([op]).then(
			() => {
				onDone();
				this.select(id);
			},
			(err) => onError(err.message),
		);
	}

	_delete(id) {
		const count = this.live.subtree(id).length;
		this.hierarchy.showMessage('');
		this.session.edit([{ op: 'delete', id }]).then(
			() => this.hierarchy.showMessage(`Deleted ${id}${count > 1 ? ` and ${count - 1} descendant${count > 2 ? 's' : ''}` : ''}. Ctrl+Z brings it back.`, 'info'),
			(err) => this.hierarchy.showMessage(`Cannot delete ${id}: ${err.message}`),
		);
	}

	undo() {
		if (!this.editable) return;
		this.session.undo().catch((err) => (this.timeline.message.textContent = `Undo: ${err.message}`));
	}

	redo() {
		if (!this.editable) return;
		this.session.redo().catch((err) => (this.timeline.message.textContent = `Redo: ${err.message}`));
	}

	/* Downloads the scene as shown (live, or the timeline's seq) as glTF. */
	exportGltf() {
		const at = this.shown === this.live ? null : this.shown.seq;
		this.exportButton.disabled = true;
		exportGltf(this.name, at)
			.catch((err) => this.app.toast(err.message))
			.finally(() => (this.exportButton.disabled = false));
	}

	/* --- viewport commands --- */

	setMode(mode) {
		this.viewport.setGizmoMode(mode);
		for (const b of this.modeButtons) {
			b.classList.toggle('active', b.dataset.mode === mode);
			b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
		}
	}

	toggleSpace() {
		const next = this.viewport.gizmo.space === 'local' ? 'world' : 'local';
		this.viewport.setGizmoSpace(next);
		this.spaceButton.textContent = next;
	}

	lookThrough(id) {
		this.viewport.lookThrough(id);
		this._showBanner();
	}

	/* Keys that act on the scene (not while typing in a field). */
	onKey(e) {
		if (e.defaultPrevented) return;
		const typing = e.target.closest && e.target.closest('input[type=text], input[type=search], input[type=password], input:not([type]), textarea, select');
		const mod = e.ctrlKey || e.metaKey;
		if (mod && (e.key === 'z' || e.key === 'Z') && !typing) {
			e.preventDefault();
			if (e.shiftKey) this.redo();
			else this.undo();
			return;
		}
		if (mod && (e.key === 'y' || e.key === 'Y') && !typing) {
			e.preventDefault();
			this.redo();
			return;
		}
		if (typing || mod || e.altKey) return;
		const key = e.key.toLowerCase();
		if (key === 'w') this.setMode('translate');
		else if (key === 'e') this.setMode('rotate');
		else if (key === 'r') this.setMode('scale');
		else if (key === 'q') this.toggleSpace();
		else if (key === 'f' && this.selected) this.viewport.frameNode(this.selected);
		else if (key === 'a') this.view2d ? this.view2d.frameAll() : this.viewport.frameAll();
		else if (key === '?') this.help.hidden = !this.help.hidden;
		else if (key === 'escape') {
			if (!this.help.hidden) this.help.hidden = true;
			else if (this.overlayMenu.open) this.overlayMenu.open = false;
			else if (this.element.dataset.sheet) this.showSheet(null);
			else if (this.viewport.lookId) this.lookThrough(null);
			else this.select(null);
		} else if ((key === 'delete' || key === 'backspace') && this.selected && this.editable) this._delete(this.selected);
		else return;
		e.preventDefault();
	}

	dispose() {
		cancelAnimationFrame(this._statusFrame);
		if (this._clipsWatch) this._clipsWatch.disconnect();
		this.app.menu.close({ refocus: false });
		this.interest.dispose();
		for (const off of this._unsubs) off();
		this._listeners.dispose();
		if (this.view2d) {
			this.view2d.dispose();
			this.clips.dispose();
			this.poses.dispose();
			this.drawOrder.dispose();
		}
		this.timeline.dispose();
		this.inspector.dispose();
		this.hierarchy.dispose();
		this.viewport.dispose();
		this.session.dispose();
		this.element.remove();
	}
}

/* The page: top bar, router, the one connection. */
class App {
	constructor() {
		this.displayName = loadName();
		this.format = loadFormat();
		const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
		this.conn = new Connection(`${proto}//${location.host}/ws`, { token: () => auth.token });
		this._listeners = new Listeners();
		this.view = null;
		this.list = null;

		this.crumbs = el('nav.crumbs', { 'aria-label': 'Location' });
		this.presence = el('div.presence', { role: 'group', 'aria-label': 'People in this scene' });
		this.nameInput = el('input.name-input', { type: 'text', value: this.displayName, spellcheck: 'false', 'aria-label': 'Your display name', title: 'Your name, as others see it' });
		this.connPill = el('div.conn-pill', { role: 'status', 'aria-live': 'polite' });
		this.toastBox = el('div.toasts', { role: 'alert' });
		this.main = el('div.app-main');
		this._buildTokenPanel();
		this.importButton = el('button.import-button', { type: 'button', title: 'Import glTF, an SVG rig with its manifest, or a Spine or DragonBones skeleton with its atlas and pages as a new scene (or drop the files anywhere on the page)' }, 'Import');
		document.body.append(
			el('header.topbar', {}, el('a.brand', { href: '#/' }, 'rigd'), this.crumbs, el('span.grow'), this.presence, this.importButton, this.nameInput, this.connPill, this.tokenButton),
			this.tokenPanel,
			this.main,
			this.toastBox,
		);
		this.importer = new Importer(document.body, { open: (name) => (location.hash = `#/scene/${encodeURIComponent(name)}`) });
		this.menu = new NodeMenu(document.body);
		this._listeners.listen(this.importButton, 'click', () => this.importer.choose());

		this._listeners.listen(window, 'hashchange', () => this.route());
		this._listeners.listen(window, 'keydown', (e) => this.view && this.view.onKey(e));
		this._listeners.listen(this.nameInput, 'change', () => {
			const name = this.nameInput.value.trim().slice(0, 64) || this.displayName;
			this.displayName = name;
			this.nameInput.value = name;
			saveName(name);
			if (this.view) this.view.session.setDisplayName(name);
		});
		this._listeners.listen(this.nameInput, 'keydown', (e) => e.key === 'Enter' && this.nameInput.blur());
		this.conn.on('state', (s) => this._showConn(s));
		this._wireToken();
		this._tick = setInterval(() => this.conn.state.state === 'waiting' && this._showConn(this.conn.state), 500);
		this.conn.open();
		this.route();
		this._installHook();
	}

	route() {
		const m = /^#\/scene\/([^/?]+)/.exec(location.hash);
		const name = m ? decodeURIComponent(m[1]) : null;
		if (this.view && this.view.name === name) return;
		if (this.view) this.view.dispose(), (this.view = null);
		if (this.list) this.list.dispose(), (this.list = null);
		clear(this.main);
		clear(this.crumbs);
		clear(this.presence);
		this.crumbs.append(el('a', { href: '#/' }, 'Scenes'));
		if (name) {
			this.crumbs.append(el('span.crumb-sep', {}, '/'), el('span.crumb-scene', {}, name), (this.sceneInfo = el('span.muted.small')));
			document.title = `${name} · rigd`;
			try {
				this.view = new SceneView(this.main, this.conn, name, this);
			} catch (err) {
				clear(this.main);
				this.main.append(el('div.loading', {}, el('div.error-text', {}, `Cannot open scene '${name}': ${err.message}`), el('a', { href: '#/' }, 'Back to the scene list')));
			}
		} else {
			document.title = 'rigd';
			this.list = new SceneList(this.main);
		}
	}

	/* --- the access token (auth.js) --- */

	_buildTokenPanel() {
		this.tokenButton = el('button.token-button', { type: 'button', title: 'The access token this tab sends to the server', 'aria-label': 'Access token', 'aria-expanded': 'false' }, 'Token');
		this.tokenReason = el('p.token-reason', { hidden: true });
		this.tokenInput = el('input.text.token-input', { type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'paste your token', 'aria-label': 'Access token' });
		this.tokenError = el('div.field-error', { role: 'alert' });
		this.forgetButton = el('button.forget-token', { type: 'button', title: 'Forget the token and reconnect without one' }, 'Forget');
		this.tokenForm = el('form.token-form', {}, this.tokenInput, el('button.primary', { type: 'submit' }, 'Use token'), this.forgetButton);
		this.tokenPanel = el(
			'div.token-panel',
			{ hidden: true, role: 'dialog', 'aria-label': 'Access token' },
			el('h3', {}, 'Access token'),
			this.tokenReason,
			this.tokenForm,
			this.tokenError,
			el('p.muted.small', {}, 'Kept for this tab only (until it closes) and sent with every request; never put in the address.'),
		);
		this._showTokenState();
	}

	_wireToken() {
		const L = this._listeners;
		L.listen(this.tokenButton, 'click', () => this._openTokenPanel(this.tokenPanel.hidden));
		L.listen(this.tokenForm, 'submit', (e) => {
			e.preventDefault();
			const token = this.tokenInput.value.trim();
			if (!validToken(token)) {
				this.tokenError.textContent = 'A token is 1 to 256 visible characters, without spaces.';
				return;
			}
			this.tokenError.textContent = '';
			this.tokenInput.value = '';
			this._tokenSubmitted = true;
			auth.set(token);
			// Sent on the open socket it replaces the connection's token;
			// otherwise it goes first when the socket opens.
			this.conn.authenticate();
			if (this.list) this.list.load();
		});
		L.listen(this.forgetButton, 'click', () => {
			auth.set(null);
			this.tokenInput.value = '';
			this.tokenReason.hidden = true;
			this._openTokenPanel(false);
			// The server keeps a connection's token until another replaces
			// it: only a new connection has none.
			this.conn.reconnect();
			if (this.list) this.list.load();
		});
		// Keys typed here are not the scene's shortcuts (W, Del, Ctrl+Z...).
		L.listen(this.tokenPanel, 'keydown', (e) => {
			e.stopPropagation();
			if (e.key === 'Escape') this._openTokenPanel(false);
		});
		auth.on('change', () => this._showTokenState());
		auth.on('refused', ({ code, message }) => this.askToken(code, message));
		this.conn.on('refused', ({ code, message }) => this.askToken(code, message));
		this.conn.on('auth', ({ ok }) => {
			if (!ok || !this._tokenSubmitted) return;
			this._tokenSubmitted = false;
			this.tokenReason.hidden = true;
			this._openTokenPanel(false);
		});
	}

	/* Shows why a token is needed ('code' unauthorized or forbidden, the
	 * server's 'message') and opens the token field. */
	askToken(code, message) {
		this.tokenReason.textContent = refusalText(code, message, Boolean(auth.token));
		this.tokenReason.className = `token-reason ${code}`;
		this.tokenReason.hidden = false;
		this._openTokenPanel(true);
	}

	_openTokenPanel(open) {
		const wasHidden = this.tokenPanel.hidden;
		this.tokenPanel.hidden = !open;
		this.tokenButton.setAttribute('aria-expanded', String(open));
		if (open && wasHidden) this.tokenInput.focus();
	}

	_showTokenState() {
		const has = Boolean(auth.token);
		this.tokenButton.classList.toggle('has-token', has);
		this.tokenButton.textContent = has ? 'Token ✓' : 'Token';
		this.forgetButton.hidden = !has;
	}

	setSceneInfo(name, model) {
		const text = ` ${model.size} nodes`;
		if (this.sceneInfo && this.sceneInfo.textContent !== text) this.sceneInfo.textContent = text;
	}

	setPresence(others) {
		clear(this.presence);
		const me = colourFor(this.view ? this.view.session.clientId : 'me', { saturation: 0.8, lightness: 0.6 });
		this.presence.append(el('span.person.me', { title: 'You' }, el('span.presence-dot', { style: { background: me.css } }), 'you'));
		for (const o of others) {
			const what = o.ids.length ? ` · ${o.ids.slice(0, 2).join(', ')}${o.ids.length > 2 ? '…' : ''}` : '';
			this.presence.append(el('span.person', { title: `${o.name}${o.ids.length ? ` has ${o.ids.join(', ')} selected` : ''}` }, el('span.presence-dot', { style: { background: o.css } }), `${o.name}${what}`));
		}
	}

	_showConn(s) {
		clear(this.connPill);
		this.connPill.className = `conn-pill ${s.state}`;
		// The word goes out of sight on a narrow screen; the mark's shape
		// (filled, dotted, hollow) still says the state without its colour.
		const word = (mark, text) => this.connPill.append(el('span.conn-mark', {}, mark), el('span.conn-word', {}, ` ${text}`));
		if (s.state === 'open') word('●', 'connected');
		else if (s.state === 'connecting') word('◌', 'connecting…');
		else if (s.state === 'waiting') {
			const secs = Math.max(0, Math.ceil((s.retryAt - Date.now()) / 1000));
			const retry = el('button.link', { type: 'button' }, 'retry now');
			retry.addEventListener('click', () => this.conn.retryNow());
			this.connPill.append(`○ offline (${s.reason}); retrying in ${secs}s · `, retry);
		} else word('○', 'closed');
	}

	/* A short message that is not tied to any one control. */
	toast(message) {
		const t = el('div.toast', {}, message);
		this.toastBox.append(t);
		setTimeout(() => t.remove(), 6000);
	}

	_installHook() {
		const app = this;
		const view = () => {
			if (!app.view) throw new Error('no scene is open');
			return app.view;
		};
		window.rigd = Object.freeze({
			/* The matrixWorld the page draws node 'id' with (16 numbers). */
			worldOf(id) {
				// A 2D scene draws the model's matrices as they are (view2d()).
				if (view().view2d) return view().shown.get(id)?.world?.slice() ?? null;
				const obj = view().viewport.layer.objects.get(id);
				return obj ? Array.from(obj.matrixWorld.elements) : null;
			},
			/* The seq shown, and the live seq. */
			seq: () => view().shown.seq,
			liveSeq: () => view().live.seq,
			/* The tree shown: nested [id, [children]]. */
			tree: () => view().shown.shape(),
			selection: () => view().selected,
			phase: () => (app.view ? app.view.session.phase : 'none'),
			/* The frames the scene is subscribed with: 'f32', 'f64' or 'json'. */
			format: () => app.format,
			connection: () => app.conn.state.state,
			editable: () => view().editable,
			viewMatrix: () => view().viewport.viewMatrix(),
			/* Where node 'id''s origin is on screen (page pixels), or null. */
			screenOf: (id) => view().viewport.screenOf(id),
			screenOfPoint: (p) => view().viewport.screenOfPoint(p),
			/* Frame statistics since the last resetStats(). */
			stats() {
				const s = view().viewport.stats;
				return { frames: s.frames, movingFrames: s.movingFrames, renderMs: s.renderMs.slice(), costMs: s.costMs.slice(), intervals: s.intervals.slice() };
			},
			resetStats: () => view().viewport.resetStats(),
			/* Per-viewer interest: the page's mode ('auto', 'on', 'off'),
			 * whether a view is declared now, views sent and answered (a
			 * clear counts as one), the view declared ({vp, viewport,
			 * min_px, always?}; null without one), and the ids the page
			 * draws (not hidden by the view, not invisible). */
			interest() {
				const s = view().session;
				return { mode: view().interest.mode, enabled: view().interest.enabled, sent: s.viewSent || 0, applied: s.viewApplied || 0, view: s.viewDeclared };
			},
			drawnIds: () => [...view().live.nodes.values()].filter((n) => n.visible && !n.hidden).map((n) => n.id),
			/* The ids the view hides (listed in 'hidden', not sent back since). */
			hiddenIds: () => [...view().live.nodes.values()].filter((n) => n.hidden).map((n) => n.id),
			/* A 2D scene as the page draws it (null for a 3D one): the
			 * layer groups' ids in DOM order (back to front), each group's
			 * transform attribute, the joints drawn (id -> [x, y] in scene
			 * units) and how many bone lines. */
			view2d() {
				const v = view().view2d;
				if (!v) return null;
				const transforms = {};
				for (const [id, g] of v.groups) transforms[id] = g.outer.getAttribute('transform');
				const assets = {};
				for (const [file, a] of v.assets.assets) assets[file] = a.status;
				const joints = {};
				for (const [id, p] of v.pivots) joints[id] = p.slice();
				return { order: v.domOrder(), transforms, assets, camera: { ...v.camera }, frames: v.frames, joints, bones: v.boneSegments.length };
			},
			/* The clips panel of a 2D scene (null otherwise): its clips,
			 * the clip picked, time, play, loop, weight, and the batches
			 * sent, acknowledged and skipped (a play frame whose previous
			 * batch was still out) and play's frames. */
			clips: () => (view().clips ? view().clips.state() : null),
			jointOnPage: (id) => (view().view2d ? view().view2d.screenOfJoint(id) : null),
			/* CSS pixels across the gizmo's thinnest handle (its hit target). */
			gizmoHandlePx: () => view().viewport.gizmoHandlePx(),
			/* Ids drawn at matrices predicted from a gizmo drag, not yet the
			 * server's (see viewport.js). */
			predicted: () => view().viewport.predicted(),
			/* Ids whose flash (recomputed by the last updates) is still fading. */
			flashing: () => [...view().viewport.layer._flashing.keys()],
			/* What is drawn: instances per batch, glyphs, and the last frame's
			 * draw calls and triangles. */
			drawInfo() {
				const vp = view().viewport;
				const batches = {};
				for (const [key, b] of vp.layer._batches) batches[key] = b.ids.length;
				const glyphs = {};
				for (const [key, g] of Object.entries(vp.layer._glyphs)) glyphs[key] = g.ids.length;
				const info = vp.renderer.info.render;
				return { mode: vp.drawMode, batches, glyphs, calls: info.calls, triangles: info.triangles, drawn: { ...vp.layer.drawnCounts }, quality: vp.quality, pixelRatio: vp.renderer.getPixelRatio(), lookingThrough: vp.lookId };
			},
		});
	}
}

new App();
