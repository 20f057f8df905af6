/*
 * api.js: the HTTP half of rigd's API (docs/protocol.md), with errors that
 * say what went wrong in words: the server's {"error": {code, message}}
 * when it sent one, otherwise the status and what the viewer was doing.
 * Every request carries the tab's token as "Authorization: Bearer" (never
 * in the URL); a 401 or 403 is also reported to auth.js, so the page can
 * offer the token field.
 */
import { auth } from './auth.js';

export class ApiError extends Error {
	/* 'detail': the server's message alone, without what the viewer was doing. */
	constructor(message, { status = 0, code = 'http', op = null, field = null, detail = null } = {}) {
		super(message);
		this.detail = detail ?? message;
		this.status = status;
		this.code = code;
		this.op = op;
		this.field = field;
	}
}

async function call(what, url, init) {
	let res;
	try {
		res = await fetch(url, { ...init, headers: auth.headers(init?.headers) });
	} catch (e) {
		throw new ApiError(`${what}: the server cannot be reached (${e.message})`, { code: 'unreachable' });
	}
	const type = res.headers.get('content-type') || '';
	if (!res.ok) {
		let body = null;
		if (type.includes('json')) body = await res.json().catch(() => null);
		const err = body && body.error;
		const text = err && err.message ? err.message : `HTTP ${res.status} ${res.statusText}`.trim();
		if (res.status === 401 || res.status === 403) auth.report(err?.code || (res.status === 401 ? 'unauthorized' : 'forbidden'), text);
		throw new ApiError(`${what}: ${text}`, { status: res.status, code: err?.code || 'http', op: err?.op ?? null, field: err?.field ?? null, detail: text });
	}
	return res;
}

const enc = encodeURIComponent;

/* GET /api/scenes: [{name, seq, nodes}]. */
export async function listScenes() {
	const res = await call('listing scenes', '/api/scenes');
	return (await res.json()).scenes;
}

/* POST /api/scenes {"name"}. */
export async function createScene(name) {
	await call(`creating scene '${name}'`, '/api/scenes', {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ name }),
	});
}

/* DELETE /api/scenes/NAME. */
export async function deleteScene(name) {
	await call(`deleting scene '${name}'`, `/api/scenes/${enc(name)}`, { method: 'DELETE' });
}

/* GET /api/scenes/NAME[?at=SEQ]: {scene, seq, nodes}. */
export async function getTree(name, at = null, { signal } = {}) {
	const query = at === null ? '' : `?at=${at}`;
	const what = at === null ? `reading scene '${name}'` : `reading scene '${name}' at seq ${at}`;
	const res = await call(what, `/api/scenes/${enc(name)}${query}`, { signal });
	return res.json();
}

/* GET /api/scenes/NAME/log?from=&to=: one object per NDJSON line. */
export async function getLog(name, from = 1, to = null, { signal } = {}) {
	const query = `?from=${from}${to === null ? '' : `&to=${to}`}`;
	const res = await call(`reading the log of '${name}'`, `/api/scenes/${enc(name)}/log${query}`, { signal });
	const text = await res.text();
	return text
		.split('\n')
		.filter((line) => line.trim())
		.map((line) => JSON.parse(line));
}

/* POST /api/scenes/NAME/gltf with a .gltf or .glb file's bytes: imports it
 * as one batch into a new scene. Resolves to {seq, recomputed, report}. */
export async function importGltf(name, bytes, { fileName = 'the file', nearest = false } = {}) {
	const glb = bytes.byteLength >= 4 && new TextDecoder().decode(new Uint8Array(bytes, 0, 4)) === 'glTF';
	const res = await call(`importing ${fileName} into scene '${name}'`, `/api/scenes/${enc(name)}/gltf${nearest ? '?nearest=1' : ''}`, {
		method: 'POST',
		headers: { 'content-type': glb ? 'model/gltf-binary' : 'model/gltf+json' },
		body: bytes,
	});
	return res.json();
}

/* GET /api/scenes/NAME/gltf[?at=SEQ]: the scene as glTF 2.0 JSON text. */
export async function getGltf(name, at = null) {
	const query = at === null ? '' : `?at=${at}`;
	const what = at === null ? `exporting scene '${name}'` : `exporting scene '${name}' at seq ${at}`;
	const res = await call(what, `/api/scenes/${enc(name)}/gltf${query}`);
	return res.text();
}

/* GET /api/scenes/NAME/poses[?at=SEQ]: {scene, seq, poses: [{name, nodes, missing}]}. */
export async function getPoses(name, at = null, { signal } = {}) {
	const query = at === null ? '' : `?at=${at}`;
	const res = await call(`reading the poses of '${name}'`, `/api/scenes/${enc(name)}/poses${query}`, { signal });
	return res.json();
}

/* GET /api/scenes/NAME/clips[?at=SEQ]: the animations of the scene's
 * skeletons, [{file, name, duration (s), frame_rate (0: none), bones,
 * slots, draw_order, unsampled}]. */
export async function getClips(name, at = null, { signal } = {}) {
	const query = at === null ? '' : `?at=${at}`;
	const res = await call(`reading the clips of '${name}'`, `/api/scenes/${enc(name)}/clips${query}`, { signal });
	return res.json();
}

/* POST /api/scenes/NAME/ROUTE with a JSON body: the SVG rig ('svg'), Spine
 * ('spine') and DragonBones ('dragonbones') imports, each one batch into a
 * 2D scene made when it does not exist. Resolves to {seq, recomputed, report}. */
export async function importRig(route, name, body, { fileName = 'the file' } = {}) {
	const res = await call(`importing ${fileName} into scene '${name}'`, `/api/scenes/${enc(name)}/${route}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	return res.json();
}
