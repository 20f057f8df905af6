/*
 * gltfio.js: glTF in and out of the viewer (docs/protocol.md, "glTF import
 * and export").
 *
 * GltfImport makes the whole page a drop target for .gltf and .glb files: a
 * file dropped anywhere (or picked with the "Import glTF" button, which uses
 * the same hidden file input) is posted to the server as one import into a
 * new scene named after the file, made valid and unique, and that scene is
 * opened. What happens is said in a small box under the top bar: progress,
 * or the server's error (which names the glTF node), until dismissed.
 *
 * exportGltf downloads a scene (or the seq the timeline shows) as .gltf.
 *
 * Only drags that carry files are taken: the hierarchy's row drags pass
 * through untouched. This module never composes a matrix or reads a scene:
 * the server does the import and the export.
 */
import { ApiError, getGltf, importGltf, listScenes } from './api.js';
import { Listeners, el } from './util.js';

const SCENE_NAME_MAX = 64;

/*
 * A scene name for a file: its name without the .gltf/.glb extension, every
 * character outside [A-Za-z0-9_.:-] made '_', at most 64 characters
 * ("scene" when nothing is left), then "-2", "-3"... until it is none of
 * 'taken' (a Set or array of names).
 */
export function sceneNameForFile(fileName, taken = []) {
	const used = taken instanceof Set ? taken : new Set(taken);
	let base = String(fileName || '')
		.replace(/^.*[\\/]/, '')
		.replace(/\.(gltf|glb)$/i, '')
		.replace(/[^A-Za-z0-9_.:-]/g, '_')
		.slice(0, SCENE_NAME_MAX);
	if (!base || /^_+$/.test(base)) base = 'scene';
	if (!used.has(base)) return base;
	for (let k = 2; ; k++) {
		const suffix = `-${k}`;
		const name = base.slice(0, SCENE_NAME_MAX - suffix.length) + suffix;
		if (!used.has(name)) return name;
	}
}

/* True for a file name the importer takes. */
export function isGltfFile(fileName) {
	return /\.(gltf|glb)$/i.test(String(fileName || ''));
}

const dragHasFiles = (e) => !!e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');

export class GltfImport {
	/*
	 * 'root': where the overlay and the status box go (document.body);
	 * 'open(name)': opens a scene once imported.
	 */
	constructor(root, { open }) {
		this._open = open;
		this._listeners = new Listeners();
		this._depth = 0;
		this.busy = false;
		this.input = el('input.gltf-input', { type: 'file', accept: '.gltf,.glb,model/gltf+json,model/gltf-binary', hidden: true, 'aria-label': 'glTF file to import' });
		this.overlay = el(
			'div.drop-overlay',
			{ hidden: true, 'aria-hidden': 'true' },
			el('div.drop-card', {}, el('div.drop-title', {}, 'Drop a glTF file'), el('div.muted', {}, '.gltf or .glb: its nodes become a new scene')),
		);
		this.message = el('span.import-text');
		this.close = el('button.link.import-close', { type: 'button', title: 'Dismiss', 'aria-label': 'Dismiss' }, '×');
		this.status = el('div.import-status', { hidden: true, role: 'alert', 'aria-live': 'assertive' }, this.message, this.close);
		root.append(this.input, this.overlay, this.status);

		const L = this._listeners;
		L.listen(this.close, 'click', () => this.hideStatus());
		L.listen(this.input, 'change', () => {
			const file = this.input.files && this.input.files[0];
			if (file) this.importFile(file);
			this.input.value = '';
		});
		L.listen(window, 'dragenter', (e) => {
			if (!dragHasFiles(e)) return;
			e.preventDefault();
			this._depth++;
			this.overlay.hidden = false;
		});
		L.listen(window, 'dragover', (e) => {
			if (!dragHasFiles(e)) return;
			e.preventDefault();
			e.dataTransfer.dropEffect = 'copy';
			this.overlay.hidden = false;
		});
		L.listen(window, 'dragleave', (e) => {
			if (!dragHasFiles(e)) return;
			this._depth = Math.max(0, this._depth - 1);
			if (this._depth === 0 || e.relatedTarget === null) this.overlay.hidden = true;
		});
		L.listen(window, 'drop', (e) => {
			if (!dragHasFiles(e)) return;
			e.preventDefault();
			this._depth = 0;
			this.overlay.hidden = true;
			const files = Array.from(e.dataTransfer.files || []);
			if (files.length === 0) return;
			if (files.length > 1) this.showStatus(`Importing ${files[0].name} only: drop one file at a time.`, 'info');
			this.importFile(files[0]);
		});
	}

	/* Opens the file picker (the same input a drop would have filled). */
	choose() {
		this.input.click();
	}

	showStatus(text, kind = 'info') {
		this.message.textContent = text;
		this.status.className = `import-status ${kind}`;
		this.status.hidden = false;
	}

	hideStatus() {
		this.status.hidden = true;
	}

	/* Imports one File into a new scene and opens it. Resolves to the scene
	 * name, or null after showing why not. */
	async importFile(file) {
		if (this.busy) {
			this.showStatus(`Still importing: wait a moment before dropping ${file.name}.`, 'error');
			return null;
		}
		if (!isGltfFile(file.name)) {
			this.showStatus(`Cannot import ${file.name}: only .gltf and .glb files can be imported.`, 'error');
			return null;
		}
		this.busy = true;
		this.showStatus(`Importing ${file.name}…`, 'info');
		let name = null;
		try {
			const bytes = await file.arrayBuffer();
			const taken = new Set((await listScenes()).map((s) => s.name));
			/* Another user may take the name between the list and the post:
			 * then the next free one. */
			for (let attempt = 0; ; attempt++) {
				name = sceneNameForFile(file.name, taken);
				try {
					const answer = await importGltf(name, bytes, { fileName: file.name });
					const n = answer.report.created;
					const warn = answer.report.warnings.length ? ` (${answer.report.warnings.length} warning${answer.report.warnings.length > 1 ? 's' : ''}: ${answer.report.warnings[0]})` : '';
					this.showStatus(`Imported ${file.name} as scene ${name}: ${n} node${n === 1 ? '' : 's'}${warn}.`, warn ? 'info' : 'ok');
					this._open(name);
					return name;
				} catch (err) {
					if (err instanceof ApiError && err.code === 'scene_not_empty' && attempt < 5) {
						taken.add(name);
						continue;
					}
					throw err;
				}
			}
		} catch (err) {
			/* The server's words (they name the glTF node at fault), or
			 * what the viewer was doing when the server could not be asked. */
			const why = err instanceof ApiError && err.status ? err.detail : err.message;
			this.showStatus(`Cannot import ${file.name}${name ? ` as scene ${name}` : ''}: ${why}`, 'error');
			return null;
		} finally {
			this.busy = false;
		}
	}

	dispose() {
		this._listeners.dispose();
		this.input.remove();
		this.overlay.remove();
		this.status.remove();
	}
}

/*
 * Downloads scene 'name' (at seq 'at', or live when null) as NAME.gltf, or
 * NAME-seqSEQ.gltf for a past seq. Rejects with an ApiError that reads well.
 */
export async function exportGltf(name, at = null) {
	const text = await getGltf(name, at);
	const blob = new Blob([text], { type: 'model/gltf+json' });
	const url = URL.createObjectURL(blob);
	const a = el('a', { href: url, download: `${name}${at === null ? '' : `-seq${at}`}.gltf`, hidden: true });
	document.body.append(a);
	a.click();
	a.remove();
	/* The download has its own copy once started. */
	setTimeout(() => URL.revokeObjectURL(url), 10000);
}
