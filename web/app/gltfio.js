/*
 * gltfio.js: glTF in and out of the viewer (docs/protocol.md, "glTF import
 * and export"): the scene name an imported file gets, and exportGltf, which
 * downloads a scene (or the seq the timeline shows) as .gltf. The import
 * itself, of glTF and of every other format the server takes, is
 * importer.js's.
 *
 * This module never composes a matrix or reads a scene: the server does
 * the import and the export.
 */
import { getGltf } from './api.js';
import { el } from './util.js';

const SCENE_NAME_MAX = 64;

/*
 * A scene name for a file: its name without its extension (.gltf, .glb,
 * .svg, .json; a DragonBones "_ske.json" loses "_ske" too), every
 * character outside [A-Za-z0-9_.:-] made '_', at most 64 characters
 * ("scene" when nothing is left), then "-2", "-3"... until it is none of
 * 'taken' (a Set or array of names).
 */
export function sceneNameForFile(fileName, taken = []) {
	const used = taken instanceof Set ? taken : new Set(taken);
	let base = String(fileName || '')
		.replace(/^.*[\\/]/, '')
		.replace(/(_ske)?\.(gltf|glb|svg|json)$/i, '')
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
