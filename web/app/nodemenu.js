/*
 * nodemenu.js: a node's menu, opened by a long press (touch), a right
 * click, or the context-menu key in the hierarchy. A small ARIA menu of
 * the actions the toolbar, the keys and the panels already offer (inspect,
 * frame, look through, add a child, delete): it names them for a finger,
 * it does nothing they do not.
 *
 * Up and Down move between items, Enter or a tap runs one, Escape or a tap
 * elsewhere closes it and gives the focus back. Never: sends an edit; each
 * item calls back into main.js.
 */
import { Listeners, el } from './util.js';

export class NodeMenu {
	/* 'root': where the menu goes (document.body). */
	constructor(root) {
		this._listeners = new Listeners();
		this.element = el('div.node-menu', { role: 'menu', hidden: true, 'aria-label': 'Node' });
		root.append(this.element);
		this._return = null;
		const L = this._listeners;
		L.listen(this.element, 'keydown', (e) => this._onKey(e));
		L.listen(document, 'pointerdown', (e) => {
			if (!this.element.hidden && !this.element.contains(e.target)) this.close({ refocus: false });
		}, true);
	}

	get open() {
		return !this.element.hidden;
	}

	/* Shows 'items' ([{label, run, disabled?}]) for node 'id' at page point
	 * (x, y), kept inside the window, and puts the focus on the first. */
	show(id, x, y, items) {
		this._return = document.activeElement;
		this.element.replaceChildren(
			el('div.node-menu-title', { 'aria-hidden': 'true' }, id),
			...items.map((item) =>
				el('button.node-menu-item', {
					type: 'button',
					role: 'menuitem',
					tabIndex: -1,
					disabled: !!item.disabled,
					onclick: () => {
						this.close({ refocus: false });
						item.run();
					},
				}, item.label),
			),
		);
		this.element.setAttribute('aria-label', `Node ${id}`);
		this.element.hidden = false;
		const r = this.element.getBoundingClientRect();
		const left = Math.max(4, Math.min(x, innerWidth - r.width - 4));
		const top = Math.max(4, Math.min(y, innerHeight - r.height - 4));
		Object.assign(this.element.style, { left: `${left}px`, top: `${top}px` });
		this._items()[0]?.focus();
	}

	close({ refocus = true } = {}) {
		if (this.element.hidden) return;
		this.element.hidden = true;
		if (refocus && this._return && this._return.isConnected) this._return.focus();
		this._return = null;
	}

	_items() {
		return [...this.element.querySelectorAll('.node-menu-item:not(:disabled)')];
	}

	_onKey(e) {
		// The scene's own keys (W, Del, Esc...) are not for the menu.
		e.stopPropagation();
		const items = this._items();
		const at = items.indexOf(document.activeElement);
		if (e.key === 'ArrowDown') items[(at + 1) % items.length]?.focus();
		else if (e.key === 'ArrowUp') items[(at - 1 + items.length) % items.length]?.focus();
		else if (e.key === 'Home') items[0]?.focus();
		else if (e.key === 'End') items[items.length - 1]?.focus();
		else if (e.key === 'Escape' || e.key === 'Tab') this.close();
		else return;
		e.preventDefault();
	}

	dispose() {
		this._listeners.dispose();
		this.element.remove();
	}
}
