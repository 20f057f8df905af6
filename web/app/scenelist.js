/*
 * scenelist.js: the start page. Every scene on the server with its node
 * count and seq, a link to open it (#/scene/NAME, shareable), a form to
 * create one and a two-step delete.
 */
import { createScene, deleteScene, listScenes } from './api.js';
import { Listeners, clear, el, validId } from './util.js';

export class SceneList {
	constructor(container) {
		this._listeners = new Listeners();
		this.table = el('tbody');
		this.status = el('div.panel-message', { role: 'status' });
		this.nameInput = el('input.text', { type: 'text', placeholder: 'new scene name', spellcheck: 'false', 'aria-label': 'New scene name' });
		this.createError = el('div.field-error', { role: 'alert' });
		const form = el('form.create-scene', {}, this.nameInput, el('button.primary', { type: 'submit' }, 'Create scene'));
		this.element = el(
			'div.scene-list',
			{},
			el('h1', {}, 'Scenes'),
			el('p.muted', {}, 'Open a scene to view and edit it live; share its address to edit it together.'),
			el('table.scenes', {}, el('thead', {}, el('tr', {}, el('th', {}, 'Scene'), el('th.num', {}, 'Nodes'), el('th.num', {}, 'Seq'), el('th', {}, ''))), this.table),
			this.status,
			form,
			this.createError,
			el('p.muted.small.drop-hint', {}, 'To import a rig, drop a .gltf or .glb file anywhere on this page, or use Import glTF above: its nodes become a new scene.'),
		);
		container.append(this.element);
		this._listeners.listen(form, 'submit', async (e) => {
			e.preventDefault();
			const name = this.nameInput.value.trim();
			if (!validId(name)) {
				this.createError.textContent = 'A scene name is 1 to 64 characters of letters, digits and _ . : -';
				return;
			}
			this.createError.textContent = '';
			try {
				await createScene(name);
				location.hash = `#/scene/${encodeURIComponent(name)}`;
			} catch (err) {
				this.createError.textContent = err.message;
			}
		});
		this.load();
	}

	async load() {
		this.status.textContent = 'Loading…';
		this.status.className = 'panel-message info';
		let scenes;
		try {
			scenes = await listScenes();
		} catch (err) {
			this.status.textContent = err.message;
			this.status.className = 'panel-message error';
			return;
		}
		this.status.textContent = scenes.length ? '' : 'No scenes yet: create one below.';
		clear(this.table);
		for (const s of scenes) {
			const del = el('button.danger-quiet', { type: 'button', title: `Delete scene ${s.name}` }, 'Delete');
			const cell = el('td.actions', {}, del);
			this._listeners.listen(del, 'click', () => this._confirmDelete(s.name, cell, del));
			this.table.append(
				el(
					'tr',
					{ dataset: { scene: s.name } },
					el('td', {}, el('a', { href: `#/scene/${encodeURIComponent(s.name)}` }, s.name)),
					el('td.num', {}, String(s.nodes)),
					el('td.num', {}, String(s.seq)),
					cell,
				),
			);
		}
	}

	_confirmDelete(name, cell, button) {
		const yes = el('button.danger', { type: 'button' }, `Delete ${name} and its history`);
		const no = el('button', { type: 'button' }, 'Keep');
		clear(cell);
		cell.append(yes, no);
		no.addEventListener('click', () => {
			clear(cell);
			cell.append(button);
		});
		yes.addEventListener('click', async () => {
			try {
				await deleteScene(name);
				this.load();
			} catch (err) {
				this.status.textContent = err.message;
				this.status.className = 'panel-message error';
			}
		});
	}

	dispose() {
		this._listeners.dispose();
		this.element.remove();
	}
}
