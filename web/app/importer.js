/*
 * importer.js: one Import button for everything the server imports
 * (docs/protocol.md: glTF, SVG rigs, Spine, DragonBones), chosen by the
 * files themselves, and the whole page (the viewport included) as a drop
 * target for them.
 *
 * planImport() reads the files picked or dropped together and says what
 * they are, by name and content, never by the button pressed:
 *   - a .gltf or .glb: POST /api/scenes/NAME/gltf with its bytes;
 *   - a Spine 4.2 skeleton (.json whose "skeleton" member has "spine"),
 *     with an optional .atlas and its .png pages: POST .../spine;
 *   - a DragonBones skeleton (_ske.json, an "armature" array), with an
 *     optional _tex.json and its .png: POST .../dragonbones;
 *   - an .svg with its manifest (a .json holding the entries' array, or
 *     {"manifest": [...]}): POST .../svg.
 * Anything else is refused before a request, with a message that says what
 * the file is not and what would be taken. The Importer posts the plan into
 * a new scene named after the main file (made valid and unique), opens it,
 * and says what happened (progress, the report, or the server's error,
 * which names the node or field) in a box under the top bar.
 *
 * Only drags that carry files are taken: the hierarchy's row drags pass
 * through untouched. Never: composes a matrix or reads a scene, parses more
 * of a file than it needs to tell what it is.
 */
import { ApiError, importGltf, importRig, listScenes } from './api.js';
import { sceneNameForFile } from './gltfio.js';
import { Listeners, el } from './util.js';

export const ACCEPT = '.gltf,.glb,.svg,.json,.atlas,.png,model/gltf+json,model/gltf-binary,image/svg+xml,application/json,image/png';

export const TAKES = 'glTF (.gltf, .glb), an SVG rig (.svg with its manifest .json), a Spine 4.2 skeleton (.json, with its .atlas and .png pages) or a DragonBones 5.x skeleton (_ske.json, with its _tex.json and .png)';

/* The asset file name rules (docs/protocol.md: 1 to 128 of [A-Za-z0-9_.-],
 * not starting with a dot). */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

const extOf = (name) => {
	const m = /\.([^.]+)$/.exec(String(name || ''));
	return m ? m[1].toLowerCase() : '';
};
const baseName = (name) => String(name || '').replace(/^.*[\\/]/, '');

export class ImportRefusal extends Error {}

/* Strict base64 (RFC 4648, no line breaks) of an ArrayBuffer. */
export function base64(bytes) {
	const u8 = new Uint8Array(bytes);
	let text = '';
	for (let i = 0; i < u8.length; i += 0x8000) text += String.fromCharCode(...u8.subarray(i, i + 0x8000));
	return btoa(text);
}

/* What a parsed JSON file is: 'spine', 'dragonbones', 'dragonbones-atlas',
 * 'manifest', 'gltf' or null. */
export function jsonKind(value) {
	if (Array.isArray(value)) return 'manifest';
	if (!value || typeof value !== 'object') return null;
	if (value.skeleton && typeof value.skeleton === 'object' && typeof value.skeleton.spine === 'string') return 'spine';
	if (Array.isArray(value.armature)) return 'dragonbones';
	if (Array.isArray(value.SubTexture) || typeof value.imagePath === 'string') return 'dragonbones-atlas';
	if (Array.isArray(value.manifest)) return 'manifest';
	if (value.asset && typeof value.asset === 'object' && 'version' in value.asset) return 'gltf';
	return null;
}

/*
 * The import that 'files' (File-like: name, text(), arrayBuffer()) stand
 * for together: {kind, route, file (the main file's name), body (an
 * object, or the bytes for glTF), notes: [text]}. Throws ImportRefusal
 * with the reason when they are none of what the server takes.
 */
export async function planImport(files) {
	const list = [...files];
	if (!list.length) throw new ImportRefusal('No file was given.');
	const notes = [];
	const gltf = list.filter((f) => /^(gltf|glb)$/.test(extOf(f.name)));
	if (gltf.length) {
		if (list.length > 1) notes.push(`only ${gltf[0].name} was imported: a glTF file comes alone`);
		return { kind: 'gltf', route: 'gltf', file: gltf[0].name, body: await gltf[0].arrayBuffer(), notes };
	}
	const json = [];
	const atlases = [];
	const pngs = [];
	const svgs = [];
	const unknown = [];
	for (const f of list) {
		const ext = extOf(f.name);
		if (ext === 'json') {
			let value;
			try {
				value = JSON.parse(await f.text());
			} catch (err) {
				throw new ImportRefusal(`Cannot import ${f.name}: it is not JSON (${err.message}).`);
			}
			json.push({ f, value, kind: jsonKind(value) });
		} else if (ext === 'atlas') atlases.push(f);
		else if (ext === 'png') pngs.push(f);
		else if (ext === 'svg') svgs.push(f);
		else unknown.push(f);
	}
	const images = async () => {
		if (!pngs.length) return undefined;
		const out = {};
		for (const p of pngs) out[baseName(p.name)] = base64(await p.arrayBuffer());
		return out;
	};
	const of = (kind) => json.filter((j) => j.kind === kind);
	const ignored = (used) => {
		const left = list.filter((f) => !used.includes(f));
		if (left.length) notes.push(`not used: ${left.map((f) => f.name).join(', ')}`);
	};
	const spine = of('spine');
	if (spine.length) {
		const main = spine[0];
		const body = { skeleton: main.value };
		if (ASSET_NAME.test(baseName(main.f.name))) body.file = baseName(main.f.name);
		if (atlases.length) body.atlas = await atlases[0].text();
		const imgs = await images();
		if (imgs) body.images = imgs;
		ignored([main.f, ...atlases.slice(0, 1), ...pngs]);
		return { kind: 'spine', route: 'spine', file: main.f.name, body, notes };
	}
	const db = of('dragonbones');
	if (db.length) {
		const main = db[0];
		const tex = of('dragonbones-atlas')[0];
		const body = { skeleton: main.value };
		if (tex) body.atlas = tex.value;
		const imgs = await images();
		if (imgs) body.images = imgs;
		ignored([main.f, ...(tex ? [tex.f] : []), ...pngs]);
		return { kind: 'dragonbones', route: 'dragonbones', file: main.f.name, body, notes };
	}
	if (svgs.length) {
		const manifest = of('manifest')[0];
		if (!manifest) throw new ImportRefusal(`Cannot import ${svgs[0].name} alone: an SVG rig needs its manifest (a .json file listing each part's id, parent and pivot) chosen or dropped with it.`);
		const entries = Array.isArray(manifest.value) ? manifest.value : manifest.value.manifest;
		const name = baseName(svgs[0].name);
		const body = { file: ASSET_NAME.test(name) ? name : sceneNameForFile(name).replace(/[^A-Za-z0-9_.-]/g, '_') + '.svg', svg: await svgs[0].text(), manifest: entries };
		ignored([svgs[0], manifest.f]);
		return { kind: 'svg', route: 'svg', file: svgs[0].name, body, notes };
	}
	if (of('manifest').length) throw new ImportRefusal(`Cannot import ${of('manifest')[0].f.name} alone: it is an SVG manifest; choose or drop it with its .svg.`);
	if (of('dragonbones-atlas').length || atlases.length || pngs.length) {
		const f = of('dragonbones-atlas')[0]?.f || atlases[0] || pngs[0];
		throw new ImportRefusal(`Cannot import ${f.name} alone: an atlas or a texture page comes with its skeleton (a Spine .json or a DragonBones _ske.json).`);
	}
	if (json.length) throw new ImportRefusal(`Cannot import ${json[0].f.name}: it is JSON but neither a Spine 4.2 skeleton, a DragonBones _ske.json nor an SVG manifest. rigd imports ${TAKES}.`);
	throw new ImportRefusal(`Cannot import ${unknown[0].name}: rigd imports ${TAKES}.`);
}

const dragHasFiles = (e) => !!e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');

/* How a report reads: "12 nodes", "5 bones, 3 slots"... */
function reportText(kind, report) {
	if (!report) return '';
	if (kind === 'gltf') return `${report.created} node${report.created === 1 ? '' : 's'}`;
	if (kind === 'svg') return `${report.nodes} node${report.nodes === 1 ? '' : 's'}${report.sanitiser && report.sanitiser.removed_total ? `, ${report.sanitiser.removed_total} unsafe part${report.sanitiser.removed_total === 1 ? '' : 's'} of the SVG removed` : ''}`;
	return `${report.bones} bones, ${report.slots} slots, ${report.nodes} nodes${report.pages_missing ? `, ${report.pages_missing} page${report.pages_missing === 1 ? '' : 's'} without an image (drawn as outlines)` : ''}`;
}

export class Importer {
	/*
	 * 'root': where the input, the overlay and the status box go
	 * (document.body); 'open(name)': opens a scene once imported.
	 */
	constructor(root, { open }) {
		this._open = open;
		this._listeners = new Listeners();
		this._depth = 0;
		this.busy = false;
		this.input = el('input.import-input', { type: 'file', multiple: true, accept: ACCEPT, hidden: true, 'aria-label': 'Files to import' });
		this.overlay = el(
			'div.drop-overlay',
			{ hidden: true, 'aria-hidden': 'true' },
			el('div.drop-card', {}, el('div.drop-title', {}, 'Drop files to import'), el('div.muted', {}, `${TAKES}: they become a new scene`)),
		);
		this.message = el('span.import-text');
		this.close = el('button.link.import-close', { type: 'button', title: 'Dismiss', 'aria-label': 'Dismiss' }, '×');
		this.status = el('div.import-status', { hidden: true, role: 'alert', 'aria-live': 'assertive' }, this.message, this.close);
		root.append(this.input, this.overlay, this.status);

		const L = this._listeners;
		L.listen(this.close, 'click', () => this.hideStatus());
		L.listen(this.input, 'change', () => {
			const files = Array.from(this.input.files || []);
			if (files.length) this.importFiles(files);
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
			if (files.length) this.importFiles(files);
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

	/* Imports the files picked or dropped together into a new scene and
	 * opens it. Resolves to the scene name, or null after showing why not. */
	async importFiles(files) {
		const what = files.map((f) => f.name).join(', ');
		if (this.busy) {
			this.showStatus(`Still importing: wait a moment before dropping ${what}.`, 'error');
			return null;
		}
		this.busy = true;
		let name = null;
		let plan = null;
		try {
			plan = await planImport(files);
			this.showStatus(`Importing ${plan.file}…`, 'info');
			const taken = new Set((await listScenes()).map((s) => s.name));
			/* Another user may take the name between the list and the post:
			 * then the next free one. (A 2D import into an existing 2D scene
			 * would add to it, so the name must be one nobody has.) */
			for (let attempt = 0; ; attempt++) {
				name = sceneNameForFile(plan.file, taken);
				try {
					const answer = plan.kind === 'gltf'
						? await importGltf(name, plan.body, { fileName: plan.file })
						: await importRig(plan.route, name, plan.body, { fileName: plan.file });
					const report = answer.report || {};
					const warnings = report.warnings || [];
					const warn = warnings.length ? ` (${warnings.length} warning${warnings.length > 1 ? 's' : ''}: ${warnings[0]})` : '';
					const notes = plan.notes.length ? ` (${plan.notes.join('; ')})` : '';
					this.showStatus(`Imported ${plan.file} as scene ${name}: ${reportText(plan.kind, report)}${warn}${notes}.`, warn || notes ? 'info' : 'ok');
					this._open(name);
					return name;
				} catch (err) {
					// Refused because the name was taken meanwhile (and not for
					// what the files hold): the next free name.
					const maybe = err instanceof ApiError && (err.code === 'scene_not_empty' || err.code === 'asset_exists' || err.code === 'duplicate_id' || err.field === 'scene');
					if (maybe && attempt < 5 && (await listScenes()).some((s) => s.name === name)) {
						taken.add(name);
						continue;
					}
					throw err;
				}
			}
		} catch (err) {
			if (err instanceof ImportRefusal) {
				this.showStatus(err.message, 'error');
				return null;
			}
			/* The server's words (they name the node or field at fault), or
			 * what the viewer was doing when the server could not be asked. */
			const why = err instanceof ApiError && err.status ? err.detail : err.message;
			this.showStatus(`Cannot import ${plan ? plan.file : what}${name ? ` as scene ${name}` : ''}: ${why}`, 'error');
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
