/*
 * panels2d.js: the panels of a 2D scene, under the inspector.
 *
 * PosePanel lists the scene's poses (GET /api/scenes/NAME/poses, read
 * again after every change of the scene, so other people's poses show up),
 * applies one (a `blend` of the pose with itself at t = 0, which sets the
 * pose's channels exactly, one op per root that the pose holds nodes of),
 * saves the current pose under a name (`pose_save`), deletes one
 * (`pose_delete`), and blends between two with a slider (`blend`, a stream
 * of batches of which only the latest is sent while one is in flight).
 *
 * DrawOrderPanel lists the nodes with a layer back to front in the order
 * the server sent, each with its effective facing and the z for it, and
 * flips the facing of a node (`set` `facing`) or of a whole figure (its
 * root).
 *
 * Never: sends anything but through the 'edit' and 'live' callbacks.
 */
import { getPoses } from './api.js';
import { drawOrder, effectiveFacing, zFor, zText } from './order2d.js';
import { Listeners, clear, el } from './util.js';

/* The roots whose subtree holds a node of every one of 'poses' (each a
 * {nodes} object). */
function rootsHolding(model, poses) {
	return model.roots.filter((root) => poses.every((p) => model.subtree(root).some((id) => p.nodes && p.nodes[id])));
}

export class PosePanel {
	/* 'scene' names the scene; 'edit(ops)' and 'live(key, ops)' send. */
	constructor(container, { scene, edit, live, gesture }) {
		this.scene = scene;
		this._edit = edit;
		this._live = live;
		this._gesture = gesture;
		this._listeners = new Listeners();
		this.poses = [];
		this.editable = true;
		this.list = el('div.pose-list');
		this.message = el('div.panel-message', { role: 'status' });
		this.nameInput = el('input.text.pose-name', { type: 'text', placeholder: 'pose name', spellcheck: 'false', 'aria-label': 'Name of the pose to save' });
		this.saveButton = el('button.save-pose', { type: 'button', title: 'Save every node\'s channels as a pose' }, 'Save pose');
		this.blendA = el('select.blend-a', { 'aria-label': 'Blend from pose' });
		this.blendB = el('select.blend-b', { 'aria-label': 'Blend to pose' });
		this.blendT = el('input.slider.blend-t', { type: 'range', min: 0, max: 1, step: 0.01, value: 0, 'aria-label': 'Blend weight' });
		this.blendValue = el('span.muted.small.blend-value', {}, '0.00');
		this.element = el(
			'section.panel2d.poses-panel',
			{ 'aria-label': 'Poses' },
			el('div.panel-head', {}, el('h2', {}, 'Poses')),
			this.list,
			el('div.pose-save', {}, this.nameInput, this.saveButton),
			el('div.pose-blend', {}, this.blendA, el('span.muted', {}, '→'), this.blendB),
			el('div.pose-blend', {}, this.blendT, this.blendValue),
			this.message,
		);
		container.append(this.element);
		const L = this._listeners;
		L.listen(this.saveButton, 'click', () => this._save());
		L.listen(this.nameInput, 'keydown', (e) => {
			e.stopPropagation();
			if (e.key === 'Enter') this._save();
		});
		L.listen(this.blendT, 'input', () => this._blend());
		L.listen(this.blendT, 'pointerdown', () => this._gesture(true));
		L.listen(this.blendT, 'change', () => this._gesture(false));
	}

	setModel(model) {
		if (this._unsubs) this._unsubs.forEach((off) => off());
		this.model = model;
		this._unsubs = [model.on('reset', () => this.refresh()), model.on('update', () => this.refresh())];
		this.refresh();
	}

	setEditable(on) {
		this.editable = on;
		for (const b of this.element.querySelectorAll('button, input, select')) b.disabled = !on;
	}

	/* Reads the pose list again, at most one request at a time and one
	 * every 200 ms (a burst of updates, someone else's drag, is one more
	 * read after the current one). */
	refresh() {
		if (this._reading) {
			this._again = true;
			return;
		}
		this._reading = true;
		const model = this.model;
		getPoses(this.scene, model.readOnly ? model.seq : null)
			.then((r) => model === this.model && this._show(r.poses))
			.catch((err) => (this.message.textContent = err.message))
			.finally(() => {
				this._timer = setTimeout(() => {
					this._reading = false;
					if (this._again) (this._again = false), this.refresh();
				}, 200);
			});
	}

	_show(poses) {
		this.poses = poses;
		// Read again after every update; rebuilt only when it changed.
		const shown = JSON.stringify([poses, this.editable, this.model.readOnly]);
		if (shown === this._shown) return;
		this._shown = shown;
		clear(this.list);
		if (!poses.length) this.list.append(el('div.muted.small.empty-poses', {}, 'No poses yet: save one below.'));
		for (const p of poses) {
			const apply = el('button.apply-pose', { type: 'button', title: `Set every node pose ${p.name} holds to its channels` }, 'Apply');
			const del = el('button.delete-pose', { type: 'button', title: `Delete pose ${p.name}` }, '✕');
			apply.addEventListener('click', () => this._apply(p));
			del.addEventListener('click', () => this._send([{ op: 'pose_delete', pose: p.name }], `Deleted ${p.name}.`));
			const count = Object.keys(p.nodes).length;
			this.list.append(el('div.pose-row', { dataset: { pose: p.name } }, el('span.pose-label', {}, p.name), el('span.muted.small', {}, ` ${count} node${count === 1 ? '' : 's'}`), el('span.grow'), apply, del));
		}
		for (const [select, pick] of [[this.blendA, 0], [this.blendB, 1]]) {
			const was = select.value;
			clear(select);
			for (const p of poses) select.append(el('option', { value: p.name }, p.name));
			if (poses.some((p) => p.name === was)) select.value = was;
			else if (poses[pick]) select.value = poses[pick].name;
		}
		this.setEditable(this.editable && !this.model.readOnly);
	}

	_send(ops, done) {
		this.message.textContent = '';
		return this._edit(ops).then(
			() => done && (this.message.textContent = done),
			(err) => (this.message.textContent = err.message),
		);
	}

	_apply(pose) {
		const roots = rootsHolding(this.model, [pose]);
		if (!roots.length) return (this.message.textContent = `No node of pose ${pose.name} is in the scene.`);
		this._send(roots.map((root) => ({ op: 'blend', root, a: pose.name, b: pose.name, t: 0 })), `Applied ${pose.name}.`);
	}

	_save() {
		const name = this.nameInput.value.trim();
		if (!name) return (this.message.textContent = 'Give the pose a name.');
		this._send([{ op: 'pose_save', pose: name }], `Saved ${name}.`).then(() => (this.nameInput.value = ''));
	}

	_blend() {
		const t = Number(this.blendT.value);
		this.blendValue.textContent = t.toFixed(2);
		const a = this.poses.find((p) => p.name === this.blendA.value);
		const b = this.poses.find((p) => p.name === this.blendB.value);
		if (!a || !b) return (this.message.textContent = 'Save two poses to blend between them.');
		const roots = rootsHolding(this.model, [a, b]);
		if (!roots.length) return (this.message.textContent = `Poses ${a.name} and ${b.name} hold no node of the scene in common.`);
		this._live('pose-blend', roots.map((root) => ({ op: 'blend', root, a: a.name, b: b.name, t }))).catch((err) => (this.message.textContent = err.message));
	}

	dispose() {
		if (this._unsubs) this._unsubs.forEach((off) => off());
		clearTimeout(this._timer);
		this._listeners.dispose();
		this.element.remove();
	}
}

export class DrawOrderPanel {
	/* 'edit(ops)' sends one batch; 'select(id)' selects a node. */
	constructor(container, { edit, select }) {
		this._edit = edit;
		this._select = select;
		this.editable = true;
		this.figures = el('div.order-figures');
		this.list = el('ol.order-list');
		this.message = el('div.panel-message', { role: 'status' });
		this.element = el(
			'section.panel2d.order-panel',
			{ 'aria-label': 'Draw order' },
			el('div.panel-head', {}, el('h2', {}, 'Draw order'), el('span.muted.small', {}, 'back to front')),
			this.figures,
			this.list,
			this.message,
		);
		container.append(this.element);
	}

	setModel(model) {
		if (this._unsubs) this._unsubs.forEach((off) => off());
		this.model = model;
		// An update changes what this shows only when it carries nodes or
		// an order (a matrix alone can flip a root's natural facing, which
		// then comes with a new order).
		this._unsubs = [model.on('reset', () => this.refresh()), model.on('update', (info) => (info.order || info.changed.size || info.removed.length) && this.refresh())];
		this.refresh();
	}

	setEditable(on) {
		this.editable = on;
		for (const b of this.element.querySelectorAll('button')) b.disabled = !on;
	}

	refresh() {
		const model = this.model;
		const ids = drawOrder(model);
		const rows = ids.map((id) => {
			const node = model.get(id);
			let root = node;
			while (root.parent !== null) root = model.get(root.parent);
			return { id, node, facing: effectiveFacing(model, id), root: root.id };
		});
		// A clip playing sends every bone each frame while the order and the
		// facings stay: the list is rebuilt only when what it shows changed.
		const shown = [model.readOnly, this.editable, ...rows.map((r) => `${r.id}|${JSON.stringify(r.node.z ?? null)}|${r.node.facing}|${r.facing}|${r.root}`)].join('\n');
		if (shown === this._shown) return;
		this._shown = shown;
		clear(this.list);
		clear(this.figures);
		const roots = new Set();
		for (const { id, node, facing, root } of rows) {
			const own = node.facing ? '' : ' (inherited)';
			roots.add(root);
			const flip = el('button.flip-facing', { type: 'button', title: `Make ${id} face ${facing === 'right' ? 'left' : 'right'}` }, '⇋');
			flip.addEventListener('click', () => this._flip(id));
			const label = el('span.order-id', {}, id);
			label.addEventListener('click', () => this._select(id));
			this.list.append(el('li.order-row', { dataset: { id } }, label, el('span.muted.small', { title: `z: ${zText(node.z)}` }, ` z ${zFor(node, facing)} · ${facing}${own}`), el('span.grow'), flip));
		}
		if (!ids.length) this.list.append(el('li.muted.small.order-empty', {}, 'No node draws a layer of artwork.'));
		for (const root of roots) {
			const facing = effectiveFacing(model, root);
			const b = el('button.flip-figure', { type: 'button', dataset: { id: root }, title: `Flip the facing of ${root} (now ${facing}); nodes with their own facing keep it` }, `⇋ ${root}: ${facing}`);
			b.addEventListener('click', () => this._flip(root));
			this.figures.append(b);
		}
		this.setEditable(this.editable && !model.readOnly);
	}

	_flip(id) {
		const facing = effectiveFacing(this.model, id) === 'right' ? 'left' : 'right';
		this.message.textContent = '';
		this._edit([{ op: 'set', id, facing }]).catch((err) => (this.message.textContent = err.message));
	}

	dispose() {
		if (this._unsubs) this._unsubs.forEach((off) => off());
		this.element.remove();
	}
}
