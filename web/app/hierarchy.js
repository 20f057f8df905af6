/*
 * hierarchy.js: the tree panel. Collapsible rows, search by id or name,
 * selection, keyboard navigation, and reparenting by drag and drop with a
 * "keep world transform" choice; creating and deleting nodes.
 *
 * Only the rows in view are in the DOM (a virtual list), so a scene of ten
 * thousand nodes scrolls as lightly as one of three. Rows show who else has
 * a node selected, in their colour and by the initial of their name.
 *
 * The list is an ARIA tree with one tab stop: the focused row is its
 * aria-activedescendant ("active", outlined while the tree has the focus).
 * Up and Down move it, Right expands a row or goes to its first child, Left
 * collapses it or goes to its parent, Home and End go to the ends; Enter or
 * Space selects the active row, the context-menu key (or Shift+F10), a
 * right click or a long press opens the node's menu.
 */
import { det3 } from './mat.js';
import { LongPress, coarsePointer } from './touch.js';
import { Emitter, Listeners, el, validId } from './util.js';

// px, fixed so the list can be virtual; a finger's target on a touch screen
const ROW_HEIGHT = coarsePointer() ? 40 : 24;
const OVERSCAN = 8;    // rows drawn beyond the visible ones

export class HierarchyPanel extends Emitter {
	/*
	 * Events:
	 *   select   {id}
	 *   reparent {id, parent (null = root), index (null = append), keepWorld}
	 *   create   {id, parent, shape: 'empty'|'box'|'camera', onError, onDone}
	 *   delete   {id}
	 *   menu     {id, x, y}   the node's menu asked for on its row
	 */
	constructor(container) {
		super();
		this._listeners = new Listeners();
		this.model = null;
		this.selected = null;
		this.editable = true;
		this.collapsed = new Set();
		this.query = '';
		this._othersByNode = new Map();
		this._rows = [];
		this._rowElems = new Map();
		this._drag = null;
		this.active = null; // the row the keyboard is on

		this.keepWorld = el('input', { type: 'checkbox', checked: true, id: 'keep-world' });
		this.search = el('input.search', { type: 'search', placeholder: 'Search id or name', spellcheck: 'false', 'aria-label': 'Search nodes' });
		this.addButton = el('button.icon', { title: 'Add a node under the selection (or a new root)', 'aria-label': 'Add node' }, '+');
		this.deleteButton = el('button.icon', { title: 'Delete the selected node and its subtree (Del)', 'aria-label': 'Delete node' }, '−');
		this.message = el('div.panel-message', { role: 'status' });
		this.createForm = this._buildCreateForm();
		this.list = el('div.tree', { tabIndex: 0, role: 'tree', 'aria-label': 'Scene hierarchy' });
		this.list.style.setProperty('--row', `${ROW_HEIGHT}px`);
		this.spacer = el('div.tree-spacer');
		this.rowsBox = el('div.tree-rows');
		this.rootDrop = el('div.tree-root-drop', {}, 'Drop here to make a root');
		this.list.append(this.spacer, this.rowsBox);
		this.count = el('span.muted.count');

		container.append(
			el('div.panel-head', {}, el('h2', {}, 'Hierarchy'), this.count, el('span.grow'), this.addButton, this.deleteButton),
			el('div.panel-tools', {}, this.search),
			el('label.check', { title: 'When reparenting, rewrite the node\'s t, r and s so that it stays where it is in the world' }, this.keepWorld, ' Keep world transform on drop'),
			this.createForm,
			this.message,
			this.list,
			this.rootDrop,
		);

		const L = this._listeners;
		L.listen(this.search, 'input', () => {
			this.query = this.search.value.trim().toLowerCase();
			this.refresh();
		});
		L.listen(this.search, 'keydown', (e) => {
			if (e.key === 'Enter' && this._rows.length) {
				const first = this._rows.find((r) => r.match) || this._rows[0];
				this.emit('select', { id: first.id });
			} else if (e.key === 'Escape') {
				this.search.value = '';
				this.query = '';
				this.refresh();
			}
		});
		// The window's extent is kept from the scroll and resize events, so
		// drawing the rows in view after an update reads no layout (a read
		// after the 2D view's writes would force one every update).
		this._top = 0;
		this._height = 0;
		L.listen(this.list, 'scroll', () => {
			this._top = this.list.scrollTop;
			this._renderWindow();
		});
		L.listen(this.list, 'click', (e) => this._onClick(e));
		L.listen(this.list, 'keydown', (e) => this._onKey(e));
		L.listen(this.list, 'focus', () => {
			if (!this.active || !this._rows.some((r) => r.id === this.active)) this.active = this.selected || (this._rows[0] && this._rows[0].id) || null;
			this._setActive(this.active);
		});
		L.listen(this.list, 'contextmenu', (e) => {
			const row = e.target.closest('.tree-row');
			if (!row) return;
			e.preventDefault();
			this.emit('menu', { id: row.dataset.id, x: e.clientX, y: e.clientY });
		});
		this._press = null;
		this._longPress = new LongPress((x, y) => this._press && this.emit('menu', { id: this._press, x, y }));
		L.listen(this.list, 'pointerdown', (e) => {
			const row = e.target.closest('.tree-row');
			this._press = row ? row.dataset.id : null;
			if (row) this._longPress.down(e, 1);
		});
		L.listen(this.list, 'pointermove', (e) => this._longPress.move(e));
		for (const type of ['pointerup', 'pointercancel']) L.listen(this.list, type, () => this._longPress.cancel());
		L.listen(this.list, 'dragstart', (e) => this._onDragStart(e));
		L.listen(this.list, 'dragover', (e) => this._onDragOver(e));
		L.listen(this.list, 'dragleave', (e) => {
			if (!this.list.contains(e.relatedTarget)) this._setDropIndicator(null);
		});
		L.listen(this.list, 'drop', (e) => this._onDrop(e));
		L.listen(this.list, 'dragend', () => this._endDrag());
		L.listen(this.rootDrop, 'dragover', (e) => {
			if (!this._drag) return;
			e.preventDefault();
			e.dataTransfer.dropEffect = 'move';
			this.rootDrop.classList.add('over');
		});
		L.listen(this.rootDrop, 'dragleave', () => this.rootDrop.classList.remove('over'));
		L.listen(this.rootDrop, 'drop', (e) => {
			if (!this._drag) return;
			e.preventDefault();
			const id = this._drag.id;
			this._endDrag();
			this.emit('reparent', { id, parent: null, index: null, keepWorld: this.keepWorld.checked });
		});
		L.listen(this.addButton, 'click', () => this.openCreate());
		L.listen(this.deleteButton, 'click', () => this.selected && this.emit('delete', { id: this.selected }));
		this._resizeObserver = new ResizeObserver(() => {
			this._top = this.list.scrollTop;
			this._height = this.list.clientHeight;
			this._renderWindow();
		});
		this._resizeObserver.observe(this.list);
	}

	setModel(model) {
		if (this._unsub) this._unsub.forEach((off) => off());
		this.model = model;
		this._unsub = [
			model.on('reset', () => this.refresh()),
			model.on('update', (info) => {
				// The rows change with the tree's shape, or with names while
				// a search is on; otherwise only what a row shows can (a
				// name, a flag, a mirrored badge), which its signature tells.
				if (info.structure || info.removed.length || (this.query && info.changed.size)) this.refresh();
				else if (info.changed.size || info.world.size) this._renderWindow();
			}),
		];
		this.refresh();
	}

	setEditable(editable) {
		this.editable = editable;
		this.addButton.disabled = !editable;
		this.deleteButton.disabled = !editable || !this.selected;
		this.keepWorld.disabled = !editable;
		if (!editable) this.createForm.hidden = true;
		this._renderWindow();
	}

	setSelection(id) {
		this.selected = id;
		if (id) this.active = id;
		this.deleteButton.disabled = !this.editable || !id;
		// Reveal the selected node: expand its ancestors, scroll it into view.
		if (id && this.model && this.model.get(id)) {
			let changed = false;
			for (let n = this.model.get(id); n && n.parent !== null; n = this.model.get(n.parent)) {
				if (this.collapsed.delete(n.parent)) changed = true;
			}
			if (changed) this.refresh();
			this.scrollTo(id);
		}
		this._renderWindow();
	}

	/* Others' selections: [{name, css, ids}]. */
	setOthers(list) {
		this._othersByNode = new Map();
		for (const other of list) {
			for (const id of other.ids) {
				if (!this._othersByNode.has(id)) this._othersByNode.set(id, []);
				this._othersByNode.get(id).push(other);
			}
		}
		this._renderWindow();
	}

	/* Shows a message under the tools ('error' or 'info'); empty clears it. */
	showMessage(text, level = 'error') {
		this.message.textContent = text || '';
		this.message.className = `panel-message ${text ? level : ''}`;
	}

	scrollTo(id) {
		const at = this._rows.findIndex((r) => r.id === id);
		if (at < 0) return;
		const top = at * ROW_HEIGHT;
		if (top < this.list.scrollTop) this.list.scrollTop = top;
		else if (top + ROW_HEIGHT > this.list.scrollTop + this.list.clientHeight) this.list.scrollTop = top + ROW_HEIGHT - this.list.clientHeight;
		this._top = this.list.scrollTop;
		this._height = this.list.clientHeight;
	}

	/* Recomputes the visible rows (expansion, search) and redraws. */
	refresh() {
		const model = this.model;
		if (!model) return;
		const rows = [];
		if (this.query) {
			// Matches and their ancestors, everything expanded.
			const keep = new Set();
			const matches = new Set();
			for (const node of model.nodes.values()) {
				if (node.id.toLowerCase().includes(this.query) || (node.name && node.name.toLowerCase().includes(this.query))) {
					matches.add(node.id);
					for (let n = node; n; n = n.parent === null ? null : model.get(n.parent)) keep.add(n.id);
				}
			}
			for (const id of model.order()) if (keep.has(id)) rows.push({ id, depth: model.depth(id), match: matches.has(id) });
			this.count.textContent = `${matches.size} of ${model.size}`;
		} else {
			const stack = [...model.roots].reverse().map((id) => [id, 0]);
			while (stack.length) {
				const [id, depth] = stack.pop();
				rows.push({ id, depth, match: false });
				if (this.collapsed.has(id)) continue;
				const children = model.get(id).children;
				for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], depth + 1]);
			}
			this.count.textContent = `${model.size} node${model.size === 1 ? '' : 's'}`;
		}
		this._rows = rows;
		this.spacer.style.height = `${rows.length * ROW_HEIGHT}px`;
		this._renderWindow();
	}

	/*
	 * Draws the rows in view. Row elements are kept per node id and only
	 * rebuilt when what they show changed, so a stream of updates from
	 * others never replaces the row under the pointer (or one being
	 * dragged).
	 */
	_renderWindow() {
		if (!this.model) return;
		const top = this._top;
		const height = this._height || 400;
		const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
		const last = Math.min(this._rows.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
		const keep = new Map();
		for (let i = first; i < last; i++) {
			const row = this._rows[i];
			const sig = this._signature(row, i);
			let elem = this._rowElems.get(row.id);
			if (!elem || elem._sig !== sig) {
				const fresh = this._row(row, i);
				fresh._sig = sig;
				if (elem) elem.replaceWith(fresh);
				elem = fresh;
			}
			// The keyboard's row is marked in place: a row rebuilt between a
			// press and its release would lose the click.
			elem.classList.toggle('active', row.id === this.active);
			keep.set(row.id, elem);
		}
		for (const [id, elem] of this._rowElems) if (!keep.has(id)) elem.remove();
		for (const elem of keep.values()) if (!elem.isConnected) this.rowsBox.append(elem);
		this._rowElems = keep;
		const active = this.active && keep.get(this.active);
		if (active) this.list.setAttribute('aria-activedescendant', active.id);
		else this.list.removeAttribute('aria-activedescendant');
	}

	/* Puts the keyboard on row 'id' (scrolled into view). */
	_setActive(id) {
		this.active = id;
		if (id) this.scrollTo(id);
		this._renderWindow();
	}

	/* Everything a row shows, as one string. */
	_signature(row, i) {
		const node = this.model.get(row.id);
		const mirrored = node.world && det3(node.world) < 0;
		const others = (this._othersByNode.get(row.id) || []).map((o) => o.name + o.css).join(',');
		return [i, row.depth, row.match, node.id, node.name, node.kind, node.mesh, !!node.bounds, node.visible, node.children.length > 0,
			this.collapsed.has(row.id), this.query, row.id === this.selected, mirrored, others, this.editable].join('|');
	}

	_row(row, i) {
		const node = this.model.get(row.id);
		const hasChildren = node.children.length > 0;
		const mirrored = node.world && det3(node.world) < 0;
		const others = this._othersByNode.get(row.id) || [];
		const kind = node.kind === 'camera' ? 'camera' : node.mesh ? 'mesh' : node.bounds ? 'box' : 'empty';
		const toggle = el(
			'span.toggle',
			{ dataset: { toggle: row.id }, 'aria-hidden': 'true' },
			hasChildren ? (this.collapsed.has(row.id) && !this.query ? '▸' : '▾') : '',
		);
		const label = el('span.label', {}, highlight(node.id, this.query));
		const name = node.name && node.name !== node.id ? el('span.name', {}, highlight(node.name, this.query)) : null;
		const classes = ['tree-row'];
		if (row.id === this.selected) classes.push('selected');
		if (row.match) classes.push('match');
		if (!node.visible) classes.push('hidden-node');
		const div = el(
			'div',
			{
				class: classes.join(' '),
				id: `tree-node-${row.id}`,
				role: 'treeitem',
				'aria-selected': row.id === this.selected ? 'true' : 'false',
				'aria-level': row.depth + 1,
				'aria-expanded': hasChildren ? String(!this.collapsed.has(row.id) || !!this.query) : null,
				draggable: this.editable ? 'true' : 'false',
				dataset: { id: row.id },
				style: { top: `${i * ROW_HEIGHT}px`, paddingLeft: `${indent(row.depth)}px` },
				title: `${node.id}${node.name ? ` (${node.name})` : ''} · ${kind}${mirrored ? ' · mirrored (det < 0)' : ''}`,
			},
			toggle,
			el(`span.kind.kind-${kind}`, { 'aria-hidden': 'true' }),
			label,
			name,
			mirrored ? el('span.badge.mirror', { title: 'Mirrored: the world matrix has a negative determinant' }, 'det−') : null,
			el('span.grow'),
			...others.map((o) => el('span.presence-dot.initial', { style: { background: o.css }, title: `${o.name} has this selected` }, initialOf(o.name))),
			others.length ? el('span.visually-hidden', {}, `, selected by ${others.map((o) => o.name).join(', ')}`) : null,
		);
		return div;
	}

	_onClick(e) {
		const toggle = e.target.closest('[data-toggle]');
		if (toggle && toggle.textContent) {
			const id = toggle.dataset.toggle;
			if (this.collapsed.has(id)) this.collapsed.delete(id);
			else this.collapsed.add(id);
			this.refresh();
			return;
		}
		const row = e.target.closest('.tree-row');
		if (row) this.emit('select', { id: row.dataset.id });
	}

	_onKey(e) {
		if (!this.model || !this._rows.length) return;
		let at = this._rows.findIndex((r) => r.id === this.active);
		if (at < 0) at = Math.max(0, this._rows.findIndex((r) => r.id === this.selected));
		const id = this._rows[at].id;
		const node = this.model.get(id);
		const go = (to) => this._setActive(to);
		let handled = true;
		if (e.key === 'ArrowDown') go(this._rows[Math.min(at + 1, this._rows.length - 1)].id);
		else if (e.key === 'ArrowUp') go(this._rows[Math.max(at - 1, 0)].id);
		else if (e.key === 'Home') go(this._rows[0].id);
		else if (e.key === 'End') go(this._rows[this._rows.length - 1].id);
		else if (e.key === 'ArrowLeft') {
			if (node.children.length && !this.collapsed.has(id) && !this.query) this.collapsed.add(id), this.refresh();
			else if (node.parent !== null) go(node.parent);
		} else if (e.key === 'ArrowRight') {
			if (this.collapsed.delete(id)) this.refresh();
			else if (node.children.length) go(node.children[0]);
		} else if (e.key === 'Enter' || e.key === ' ') this.emit('select', { id });
		else if (e.key === 'ContextMenu' || (e.key === 'F10' && e.shiftKey)) {
			const row = this._rowElems.get(id);
			const r = row ? row.getBoundingClientRect() : this.list.getBoundingClientRect();
			this.emit('menu', { id, x: r.left + 24, y: r.bottom });
		} else if ((e.key === 'Delete' || e.key === 'Backspace') && this.editable && this.selected) this.emit('delete', { id: this.selected });
		else handled = false;
		if (handled) e.preventDefault();
	}

	/* --- drag and drop --- */

	_onDragStart(e) {
		const row = e.target.closest('.tree-row');
		if (!row || !this.editable) return;
		this._drag = { id: row.dataset.id };
		e.dataTransfer.setData('text/plain', row.dataset.id);
		e.dataTransfer.effectAllowed = 'move';
		this.list.classList.add('dragging');
	}

	/* Where a drop at this point would put the dragged node, or null. */
	_dropTarget(e) {
		const row = e.target.closest('.tree-row');
		if (!row || !this._drag) return null;
		const target = row.dataset.id;
		const rect = row.getBoundingClientRect();
		const y = (e.clientY - rect.top) / rect.height;
		const zone = y < 0.25 ? 'before' : y > 0.75 ? 'after' : 'into';
		const node = this.model.get(target);
		const dragged = this._drag.id;
		const newParent = zone === 'into' ? target : node.parent;
		// A node cannot go into its own subtree (the server would say 'cycle').
		if (newParent !== null && this.model.isAncestor(dragged, newParent)) return null;
		if (zone === 'into' && target === dragged) return null;
		return { row, target, zone, parent: newParent };
	}

	_onDragOver(e) {
		if (!this._drag) return;
		// Scroll when dragging near the list's edges.
		const rect = this.list.getBoundingClientRect();
		if (e.clientY < rect.top + 24) this.list.scrollTop -= 8;
		else if (e.clientY > rect.bottom - 24) this.list.scrollTop += 8;
		const drop = this._dropTarget(e);
		this._setDropIndicator(drop);
		if (drop) {
			e.preventDefault();
			e.dataTransfer.dropEffect = 'move';
		}
	}

	_setDropIndicator(drop) {
		for (const r of this.rowsBox.querySelectorAll('.drop-before, .drop-after, .drop-into')) {
			r.classList.remove('drop-before', 'drop-after', 'drop-into');
		}
		if (drop) drop.row.classList.add(`drop-${drop.zone}`);
	}

	_onDrop(e) {
		const drop = this._dropTarget(e);
		const dragged = this._drag && this._drag.id;
		this._endDrag();
		if (!drop || !dragged) return;
		e.preventDefault();
		let index = null;
		if (drop.zone !== 'into') {
			// The server counts the index among the siblings without the moved
			// node itself.
			const siblings = (drop.parent === null ? this.model.roots : this.model.get(drop.parent).children).filter((id) => id !== dragged);
			index = siblings.indexOf(drop.target) + (drop.zone === 'after' ? 1 : 0);
		}
		this.emit('reparent', { id: dragged, parent: drop.parent, index, keepWorld: this.keepWorld.checked });
	}

	_endDrag() {
		this._drag = null;
		this.list.classList.remove('dragging');
		this.rootDrop.classList.remove('over');
		this._setDropIndicator(null);
	}

	/* --- create --- */

	_buildCreateForm() {
		this._createId = el('input', { type: 'text', spellcheck: 'false', 'aria-label': 'New node id', placeholder: 'id' });
		this._createShape = el(
			'select',
			{ 'aria-label': 'What the new node is' },
			el('option', { value: 'box' }, 'box'),
			el('option', { value: 'empty' }, 'empty'),
			el('option', { value: 'camera' }, 'camera'),
		);
		this._createWhere = el('div.muted.small');
		this._createError = el('div.field-error', { role: 'alert' });
		const ok = el('button.primary', { type: 'submit' }, 'Create');
		const cancel = el('button', { type: 'button' }, 'Cancel');
		const form = el('form.create-form', { hidden: true }, this._createWhere, el('div.row', {}, this._createId, this._createShape, ok, cancel), this._createError);
		this._listeners.listen(cancel, 'click', () => (form.hidden = true));
		this._listeners.listen(form, 'submit', (e) => {
			e.preventDefault();
			const id = this._createId.value.trim();
			if (!validId(id)) {
				this._createError.textContent = 'An id is 1 to 64 characters of letters, digits and _ . : -';
				return;
			}
			this._createError.textContent = '';
			ok.disabled = true;
			this.emit('create', {
				id,
				parent: this._createParent,
				shape: this._createShape.value,
				onError: (msg) => {
					ok.disabled = false;
					this._createError.textContent = msg;
				},
				onDone: () => {
					ok.disabled = false;
					form.hidden = true;
				},
			});
		});
		return form;
	}

	/* Opens the form that creates a node under the selection (or a root). */
	openCreate() {
		if (!this.model || !this.editable) return;
		this._createParent = this.selected && this.model.get(this.selected) ? this.selected : null;
		this._createWhere.textContent = this._createParent ? `New child of ${this._createParent}` : 'New root node';
		let n = this.model.size + 1;
		while (this.model.get(`node${n}`)) n++;
		this._createId.value = `node${n}`;
		this._createError.textContent = '';
		this.createForm.hidden = false;
		this._createId.focus();
		this._createId.select();
	}

	dispose() {
		if (this._unsub) this._unsub.forEach((off) => off());
		this._longPress.cancel();
		this._listeners.dispose();
		this._resizeObserver.disconnect();
	}
}

/* Left padding for a row at 'depth': 14 px a level, then 3 px a level
 * beyond the twelfth, so a chain sixty bones deep still shows its names. */
function indent(depth) {
	return 6 + Math.min(depth, 12) * 14 + Math.max(0, depth - 12) * 3;
}

/* The first letter of a person's name, for their presence dot. */
function initialOf(name) {
	return (String(name || '?').match(/[\p{L}\p{N}]/u) || ['?'])[0].toUpperCase();
}

/* Text with the first occurrence of 'query' wrapped in <mark>. */
function highlight(text, query) {
	if (!query) return text;
	const at = text.toLowerCase().indexOf(query);
	if (at < 0) return text;
	return [text.slice(0, at), el('mark', {}, text.slice(at, at + query.length)), text.slice(at + query.length)];
}
