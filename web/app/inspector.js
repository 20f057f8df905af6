/*
 * inspector.js: the selected node, field by field.
 *
 * Shows id, name, parent, kind; the locals t, rotation (Euler degrees and
 * quaternion), s and pivot as numeric fields with sliders; bounds, mesh and
 * camera settings; then what the server derived: the world matrix (4x4,
 * three decimals), the world position, the determinant's sign, a warning
 * when the world axes are not orthogonal (inherited shear, docs/transforms.md
 * 9.2), and the world box.
 *
 * Every change becomes one edit batch (a drag of a slider or of an axis
 * label streams batches, grouped so that one undo reverts the drag). The
 * values on screen are the server's; a field being edited is left alone
 * until the edit ends. A refused edit shows the server's message under the
 * group of fields that sent it.
 */
import { SHEAR_TOLERANCE_DEG, det3, position, shear, worldBox } from './mat.js';
import { Emitter, Listeners, clear, el, fmt, fmtField } from './util.js';

/*
 * One number: a scrubbable label, a slider and a text field. 'range(v)'
 * gives [min, max, step] for the slider around the current value.
 */
class NumberControl {
	constructor({ label, range, title, onBegin, onLive, onCommit, onEnd }) {
		this.range = range;
		this.value = 0;
		this.active = false;
		this._listeners = new Listeners();
		this.label = el('span.axis', { title: title || `Drag to change ${label}` }, label);
		this.slider = el('input.slider', { type: 'range', 'aria-label': `${title || label} slider` });
		this.input = el('input.num', { type: 'text', inputmode: 'decimal', spellcheck: 'false', 'aria-label': title || label });
		this.element = el('div.num-control', {}, this.label, this.slider, this.input);
		const L = this._listeners;

		// Slider: a gesture from the first input event to 'change' (release).
		L.listen(this.slider, 'input', () => {
			if (!this.active) (this.active = true), onBegin();
			this.value = Number(this.slider.value);
			this.input.value = fmtField(this.value);
			onLive(this.value);
		});
		L.listen(this.slider, 'change', () => {
			if (!this.active) return;
			this.value = Number(this.slider.value);
			onCommit(this.value);
			this.active = false;
			onEnd();
		});

		// Typed value: committed on Enter or when the field loses focus.
		L.listen(this.input, 'focus', () => (this.active = true));
		L.listen(this.input, 'keydown', (e) => {
			if (e.key === 'Enter') this.input.blur();
			else if (e.key === 'Escape') {
				this.input.value = fmtField(this.value);
				this.input.blur();
			} else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
				e.preventDefault();
				const [, , step] = this.range(this.value);
				const v = this._parse();
				if (v === null) return;
				this.input.value = fmtField(v + (e.key === 'ArrowUp' ? step : -step) * (e.shiftKey ? 10 : 1));
			}
		});
		L.listen(this.input, 'blur', () => {
			this.active = false;
			const v = this._parse();
			this.input.classList.toggle('invalid', v === null);
			if (v === null) {
				onCommit(null, `'${this.input.value}' is not a number`);
				return;
			}
			if (v !== this.value) {
				this.value = v;
				onBegin();
				onCommit(v);
				onEnd();
			}
			this.input.value = fmtField(this.value);
		});

		// Label scrubbing: drag left/right to change the value.
		L.listen(this.label, 'pointerdown', (e) => {
			if (this.disabled) return;
			e.preventDefault();
			this.label.setPointerCapture(e.pointerId);
			this._scrub = { x: e.clientX, start: this.value, moved: false };
			this.active = true;
			onBegin();
		});
		L.listen(this.label, 'pointermove', (e) => {
			if (!this._scrub) return;
			const [, , step] = this.range(this._scrub.start);
			const dx = e.clientX - this._scrub.x;
			if (!this._scrub.moved && Math.abs(dx) < 2) return;
			this._scrub.moved = true;
			this.value = this._scrub.start + Math.round(dx) * step * (e.shiftKey ? 0.1 : 1);
			this.input.value = fmtField(this.value);
			onLive(this.value);
		});
		const endScrub = () => {
			if (!this._scrub) return;
			const moved = this._scrub.moved;
			this._scrub = null;
			this.active = false;
			if (moved) onCommit(this.value);
			onEnd();
		};
		L.listen(this.label, 'pointerup', endScrub);
		L.listen(this.label, 'pointercancel', endScrub);
	}

	_parse() {
		const text = this.input.value.trim().replace(',', '.');
		if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) return null;
		const v = Number(text);
		return Number.isFinite(v) ? v : null;
	}

	/* Shows the server's value unless the user is editing this control. */
	set(value) {
		if (this.active) return;
		this.value = value;
		this.input.value = fmtField(value);
		this.input.classList.remove('invalid');
		const [min, max, step] = this.range(value);
		this.slider.min = min;
		this.slider.max = max;
		this.slider.step = step;
		this.slider.value = value;
	}

	setDisabled(disabled) {
		this.disabled = disabled;
		this.slider.disabled = disabled;
		this.input.readOnly = disabled;
		this.label.classList.toggle('disabled', disabled);
	}

	dispose() {
		this._listeners.dispose();
	}
}

/* Slider ranges. */
const spanRange = (minSpan, step) => (v) => {
	const r = Math.max(minSpan, Math.ceil(Math.abs(v) * 1.5));
	return [-r, r, step];
};
const RANGES = {
	t: spanRange(3, 0.001),
	pivot: spanRange(2, 0.001),
	s: (v) => (v >= 0 && v <= 3 ? [0, 3, 0.001] : spanRange(3, 0.001)(v)),
	euler: () => [-180, 180, 0.1],
	r: () => [-1, 1, 0.001],
	fov: () => [1, 179, 0.1],
	clip: (v) => [0, Math.max(10, Math.ceil(v * 2)), 0.01],
};

/* A labelled row of NumberControls editing one vector channel. */
class VectorField {
	constructor({ title, axes, range, key, onEdit }) {
		this.key = key;
		this.values = axes.map(() => 0);
		this.gesture = null;
		this.controls = axes.map(
			(axis, i) =>
				new NumberControl({
					label: axis,
					title: `${title} ${axis}`,
					range,
					onBegin: () => {
						if (!this.gesture) this.gesture = { base: this.values.slice(), depth: 0 };
						this.gesture.depth++;
						onEdit({ phase: 'begin' });
					},
					onLive: (v) => onEdit({ phase: 'live', value: this._with(i, v) }),
					onCommit: (v, problem) => {
						if (problem) onEdit({ phase: 'invalid', message: `${title} ${axis}: ${problem}` });
						else onEdit({ phase: 'commit', value: this._with(i, v) });
					},
					onEnd: () => {
						if (this.gesture && --this.gesture.depth <= 0) this.gesture = null;
						onEdit({ phase: 'end' });
					},
				}),
		);
		this.controls.forEach((c, i) => (c.element.dataset.axis = axes[i]));
		this.element = el('div.field', { dataset: { field: key } }, el('div.field-title', {}, title), ...this.controls.map((c) => c.element));
	}

	/* The vector with component i replaced; the other components come from
	 * the values at the start of the gesture, so that a server read-back in
	 * another form (an Euler triple past 90 degrees) cannot feed back into
	 * the drag. */
	_with(i, v) {
		const base = this.gesture ? this.gesture.base.slice() : this.values.slice();
		base[i] = v;
		return base;
	}

	/* Shows the server's values, except while a gesture on this vector runs:
	 * then all of its components hold still, so none of them jumps to
	 * another spelling of the same rotation under the user's hand. */
	set(values) {
		if (this.gesture) return;
		this.values = values.slice();
		this.controls.forEach((c, i) => c.set(values[i]));
	}

	setDisabled(d) {
		for (const c of this.controls) c.setDisabled(d);
	}

	dispose() {
		for (const c of this.controls) c.dispose();
	}
}

export class InspectorPanel extends Emitter {
	/*
	 * Events:
	 *   edit   {id, ops, live: bool, key, section, onError}  one batch to send
	 *   begin / end   a gesture (slider drag) starts / ends
	 *   select {id}   (the parent link)
	 *   look   {id}   look through this node
	 */
	constructor(container) {
		super();
		this.container = container;
		this._listeners = new Listeners();
		this.model = null;
		this.id = null;
		this.editable = true;
		this.body = el('div.inspector-body');
		this.empty = el('div.empty-note', {}, 'Select a node in the hierarchy or the viewport.');
		container.append(el('div.panel-head', {}, el('h2', {}, 'Inspector')), this.empty, this.body);
		this._build();
		this.body.hidden = true;
	}

	setModel(model) {
		if (this._unsub) this._unsub.forEach((off) => off());
		this.model = model;
		this._unsub = [
			model.on('reset', () => this.refresh()),
			model.on('update', (info) => {
				if (!this.id) return;
				if (info.removed.includes(this.id)) return this.show(null);
				if (info.changed.has(this.id) || info.world.has(this.id) || info.structure || (info.shown && info.shown.has(this.id))) this.refresh();
			}),
		];
		this.refresh();
	}

	setEditable(editable) {
		this.editable = editable;
		this._applyDisabled();
	}

	show(id) {
		if (id !== this.id) this._clearErrors();
		this.id = id;
		this.refresh();
	}

	/* Shows 'message' under the section that sent the refused edit (or the
	 * section owning the server's 'field'). */
	showError(section, message) {
		const target = this._errors[section] || this._errors.node;
		target.textContent = message;
		target.hidden = !message;
	}

	_clearErrors() {
		for (const e of Object.values(this._errors)) (e.textContent = ''), (e.hidden = true);
	}

	_sectionOfField(field) {
		const map = { t: 't', r: 'rotation', euler: 'rotation', s: 's', pivot: 'pivot', bounds: 'bounds', mesh: 'node', name: 'node', kind: 'node', visible: 'node', camera: 'camera', fov: 'camera', near: 'camera', far: 'camera' };
		return map[field] || null;
	}

	_build() {
		const errorBox = () => el('div.field-error', { role: 'alert', hidden: true });
		this._errors = { node: errorBox(), t: errorBox(), rotation: errorBox(), s: errorBox(), pivot: errorBox(), bounds: errorBox(), camera: errorBox() };
		const send = (section, ops, { live = false, key = section } = {}) =>
			this.emit('edit', {
				id: this.id,
				ops,
				live,
				key: `${this.id}:${key}`,
				section,
				onError: (err) => {
					this.showError((err.field && this._sectionOfField(err.field)) || section, err.message);
					this.refresh();
				},
				onOk: () => this.showError(section, ''),
			});
		const vectorEdit = (section, wireKey) => ({ phase, value, message }) => {
			if (phase === 'begin') this.emit('begin');
			else if (phase === 'end') this.emit('end');
			else if (phase === 'invalid') this.showError(section, message);
			else send(section, [{ op: 'set', id: this.id, [wireKey]: value }], { live: phase === 'live', key: wireKey });
		};

		// Identity.
		this.idText = el('code.node-id');
		this.nameInput = el('input.text', { type: 'text', spellcheck: 'false', placeholder: '(no name)', 'aria-label': 'Name' });
		this.parentLink = el('button.link', { type: 'button', title: 'Select the parent' });
		this.kindSelect = el('select', { 'aria-label': 'Kind' }, ...['group', 'mesh', 'camera'].map((k) => el('option', { value: k }, k)));
		this.visibleBox = el('input', { type: 'checkbox', 'aria-label': 'Visible' });
		this.meshInput = el('input.text', { type: 'text', spellcheck: 'false', placeholder: '(none)', 'aria-label': 'Mesh reference' });
		const L = this._listeners;
		L.listen(this.nameInput, 'change', () => send('node', [{ op: 'set', id: this.id, name: this.nameInput.value.trim() || null }]));
		L.listen(this.nameInput, 'keydown', (e) => e.key === 'Enter' && this.nameInput.blur());
		L.listen(this.meshInput, 'change', () => send('node', [{ op: 'set', id: this.id, mesh: this.meshInput.value.trim() || null }]));
		L.listen(this.meshInput, 'keydown', (e) => e.key === 'Enter' && this.meshInput.blur());
		L.listen(this.kindSelect, 'change', () => send('node', [{ op: 'set', id: this.id, kind: this.kindSelect.value }]));
		L.listen(this.visibleBox, 'change', () => send('node', [{ op: 'set', id: this.id, visible: this.visibleBox.checked }]));
		L.listen(this.parentLink, 'click', () => {
			const node = this.model && this.model.get(this.id);
			if (node && node.parent !== null) this.emit('select', { id: node.parent });
		});
		const nodeSection = el(
			'section.group',
			{},
			el('div.kv', {}, el('span', {}, 'id'), this.idText),
			el('label.kv', {}, el('span', {}, 'name'), this.nameInput),
			el('div.kv', {}, el('span', {}, 'parent'), this.parentLink),
			el('label.kv', {}, el('span', {}, 'kind'), this.kindSelect),
			el('label.kv', {}, el('span', {}, 'mesh'), this.meshInput),
			el('label.kv', {}, el('span', {}, 'visible'), this.visibleBox),
			this._errors.node,
		);

		// Locals.
		this.tField = new VectorField({ key: 't', title: 'Translation t', axes: ['x', 'y', 'z'], range: RANGES.t, onEdit: vectorEdit('t', 't') });
		this.eulerField = new VectorField({ key: 'euler', title: 'Rotation (Euler XYZ, degrees)', axes: ['x', 'y', 'z'], range: RANGES.euler, onEdit: vectorEdit('rotation', 'euler') });
		this.quatField = new VectorField({ key: 'r', title: 'Rotation (quaternion)', axes: ['x', 'y', 'z', 'w'], range: RANGES.r, onEdit: vectorEdit('rotation', 'r') });
		this.sField = new VectorField({ key: 's', title: 'Scale s', axes: ['x', 'y', 'z'], range: RANGES.s, onEdit: vectorEdit('s', 's') });
		this.pivotField = new VectorField({ key: 'pivot', title: 'Pivot', axes: ['x', 'y', 'z'], range: RANGES.pivot, onEdit: vectorEdit('pivot', 'pivot') });
		const localSection = el(
			'details.group',
			{ open: true },
			el('summary', {}, 'Local transform', el('span.muted.small', {}, ' L = T(t) T(pivot) R S T(−pivot)')),
			this.tField.element,
			this._errors.t,
			this.eulerField.element,
			this.quatField.element,
			this._errors.rotation,
			this.sField.element,
			this._errors.s,
			this.pivotField.element,
			this._errors.pivot,
		);

		// Bounds: six typed numbers and a toggle.
		this.hasBounds = el('input', { type: 'checkbox', 'aria-label': 'Has bounds' });
		this.boundsInputs = ['min', 'max'].map((which) =>
			[0, 1, 2].map((i) => el('input.num', { type: 'text', inputmode: 'decimal', spellcheck: 'false', 'aria-label': `bounds ${which} ${'xyz'[i]}` })),
		);
		const sendBounds = () => {
			if (!this.hasBounds.checked) return send('bounds', [{ op: 'set', id: this.id, bounds: null }]);
			const read = (inputs) => inputs.map((inp) => Number(inp.value.trim().replace(',', '.')));
			const min = read(this.boundsInputs[0]);
			const max = read(this.boundsInputs[1]);
			if (![...min, ...max].every(Number.isFinite)) return this.showError('bounds', 'Bounds: every corner coordinate must be a number');
			send('bounds', [{ op: 'set', id: this.id, bounds: { min, max } }]);
		};
		L.listen(this.hasBounds, 'change', () => {
			if (this.hasBounds.checked && this.boundsInputs.flat().some((i) => i.value === '')) {
				this.boundsInputs[0].forEach((i) => (i.value = '-0.1'));
				this.boundsInputs[1].forEach((i) => (i.value = '0.1'));
			}
			sendBounds();
		});
		for (const inp of this.boundsInputs.flat()) {
			L.listen(inp, 'change', sendBounds);
			L.listen(inp, 'keydown', (e) => e.key === 'Enter' && inp.blur());
		}
		this.boundsSection = el(
			'details.group',
			{ open: true },
			el('summary', {}, 'Bounds (local box)'),
			el('label.kv', {}, el('span', {}, 'has bounds'), this.hasBounds),
			el('div.kv', {}, el('span', {}, 'min'), el('div.triple', {}, ...this.boundsInputs[0])),
			el('div.kv', {}, el('span', {}, 'max'), el('div.triple', {}, ...this.boundsInputs[1])),
			this._errors.bounds,
		);

		// Camera.
		const cameraControl = (key, title, range) =>
			new NumberControl({
				label: key,
				title,
				range,
				onBegin: () => this.emit('begin'),
				onLive: (v) => send('camera', [{ op: 'set', id: this.id, camera: { [key]: v } }], { live: true, key: `camera-${key}` }),
				onCommit: (v, problem) =>
					problem ? this.showError('camera', `${title}: ${problem}`) : send('camera', [{ op: 'set', id: this.id, camera: { [key]: v } }], { key: `camera-${key}` }),
				onEnd: () => this.emit('end'),
			});
		this.fovControl = cameraControl('fov', 'Field of view (degrees)', RANGES.fov);
		this.nearControl = cameraControl('near', 'Near plane', RANGES.clip);
		this.farControl = cameraControl('far', 'Far plane', RANGES.clip);
		this.cameraSection = el(
			'details.group',
			{ open: true },
			el('summary', {}, 'Camera'),
			this.fovControl.element,
			this.nearControl.element,
			this.farControl.element,
			this._errors.camera,
		);

		// World (derived, read-only).
		this.matrixTable = el('table.matrix', { 'aria-label': 'World matrix' });
		this.worldPos = el('code');
		this.detText = el('span');
		this.shearNote = el('div.warning', { role: 'note', hidden: true });
		this.outOfViewNote = el(
			'div.out-of-view',
			{ role: 'note', hidden: true },
			'Outside your camera\'s view: the server does not send this node\'s world matrix while the view hides it ' +
				'(its locals above are current). Below is the last one it sent; F frames that place, and once the node is in view ' +
				'the server sends its current matrix.',
		);
		this.worldBoxText = el('code.small');
		this.lookButton = el('button', { type: 'button', title: 'View the scene from this node: the view matrix is the inverse of its world matrix' }, 'Look through');
		L.listen(this.lookButton, 'click', () => this.emit('look', { id: this.id }));
		const worldSection = el(
			'details.group',
			{ open: true },
			el('summary', {}, 'World (from the server)'),
			this.outOfViewNote,
			this.matrixTable,
			el('div.kv', {}, el('span', {}, 'position'), this.worldPos),
			el('div.kv', {}, el('span', {}, 'det'), this.detText),
			el('div.kv', {}, el('span', {}, 'world box'), this.worldBoxText),
			this.shearNote,
			el('div.row', {}, this.lookButton),
		);

		this.body.append(nodeSection, localSection, worldSection, this.boundsSection, this.cameraSection);
		this._applyDisabled();
	}

	_applyDisabled() {
		const d = !this.editable;
		for (const f of [this.tField, this.eulerField, this.quatField, this.sField, this.pivotField]) f.setDisabled(d);
		for (const c of [this.fovControl, this.nearControl, this.farControl]) c.setDisabled(d);
		for (const inp of [this.nameInput, this.meshInput, ...this.boundsInputs.flat()]) inp.readOnly = d;
		for (const inp of [this.kindSelect, this.visibleBox, this.hasBounds]) inp.disabled = d;
		this.body.classList.toggle('read-only', d);
	}

	refresh() {
		const node = this.id && this.model ? this.model.get(this.id) : null;
		this.body.hidden = !node;
		this.empty.hidden = !!node;
		if (!node) return;
		const keep = (input, value) => {
			if (document.activeElement !== input) input.value = value;
		};
		this.idText.textContent = node.id;
		keep(this.nameInput, node.name ?? '');
		keep(this.meshInput, node.mesh ?? '');
		this.parentLink.textContent = node.parent ?? '(none: a root)';
		this.parentLink.disabled = node.parent === null;
		this.kindSelect.value = node.kind;
		this.visibleBox.checked = node.visible;

		this.tField.set(node.t);
		this.eulerField.set(node.euler);
		this.quatField.set(node.r);
		this.sField.set(node.s);
		this.pivotField.set(node.pivot);

		this.hasBounds.checked = !!node.bounds;
		this.boundsInputs.forEach((inputs, which) =>
			inputs.forEach((inp, i) => keep(inp, node.bounds ? fmtField((which ? node.bounds.max : node.bounds.min)[i]) : '')),
		);
		this.cameraSection.hidden = node.kind !== 'camera';
		this.fovControl.set(node.camera.fov);
		this.nearControl.set(node.camera.near);
		this.farControl.set(node.camera.far);

		const w = node.world;
		this.outOfViewNote.hidden = !node.hidden;
		clear(this.matrixTable);
		if (w) {
			for (let row = 0; row < 4; row++) {
				this.matrixTable.append(el('tr', {}, ...[0, 1, 2, 3].map((col) => el('td', {}, fmt(w[col * 4 + row], 3)))));
			}
			this.worldPos.textContent = `(${position(w).map((v) => fmt(v, 3)).join(', ')})`;
			const d = det3(w);
			this.detText.textContent = d < 0 ? `${fmt(d, 3)}  (negative: mirrored)` : d === 0 ? '0  (singular)' : `${fmt(d, 3)}  (positive)`;
			this.detText.className = d < 0 ? 'det-negative' : d === 0 ? 'det-zero' : 'det-positive';
			const sh = shear(w);
			const sheared = Math.abs(sh.deg - 90) > SHEAR_TOLERANCE_DEG;
			this.shearNote.hidden = !sheared;
			if (sheared) {
				this.shearNote.textContent =
					`Shear: the world ${sh.axes[0]} and ${sh.axes[1]} axes are ${fmt(sh.deg, 1)}° apart, not 90°. ` +
					'This node inherits a rotation under a non-uniform scale; no translation, rotation and scale reproduce ' +
					'its world matrix, so "keep world transform" cannot move it elsewhere.';
			}
			if (node.bounds) {
				const b = worldBox(w, node.bounds);
				this.worldBoxText.textContent = `min (${b.min.map((v) => fmt(v, 3)).join(', ')})  max (${b.max.map((v) => fmt(v, 3)).join(', ')})`;
			} else this.worldBoxText.textContent = '(no bounds)';
		}
	}

	dispose() {
		if (this._unsub) this._unsub.forEach((off) => off());
		this._listeners.dispose();
		for (const f of [this.tField, this.eulerField, this.quatField, this.sField, this.pivotField]) f.dispose();
		for (const c of [this.fovControl, this.nearControl, this.farControl]) c.dispose();
	}
}
