/*
 * util.js: small DOM and formatting helpers shared by the viewer's panels.
 *
 * No three.js and no knowledge of scenes here: this module must stay usable
 * from node's test runner (it touches `document` only inside el()).
 */

/*
 * Creates an element: el('button.primary', {title: 'x', onclick: f}, 'Text').
 * 'spec' is a tag with optional .classes and #id; attributes whose name
 * starts with "on" become listeners, 'dataset' and 'style' objects are
 * merged, everything else is set as an attribute (false and null are left
 * out). Children are nodes or strings.
 */
export function el(spec, attrs, ...children) {
	const m = /^([a-z0-9-]+)?(#[\w-]+)?((?:\.[\w-]+)*)$/i.exec(spec);
	if (!m) throw new Error(`el: bad spec '${spec}'`);
	const node = document.createElement(m[1] || 'div');
	if (m[2]) node.id = m[2].slice(1);
	if (m[3]) node.className = m[3].slice(1).split('.').join(' ');
	for (const [key, value] of Object.entries(attrs || {})) {
		if (value === false || value === null || value === undefined) continue;
		if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
		else if (key === 'dataset' || key === 'style') Object.assign(node[key], value);
		else if (key === 'text') node.textContent = value;
		else if (key in node && typeof value !== 'string') node[key] = value;
		else node.setAttribute(key, value === true ? '' : String(value));
	}
	for (const child of children.flat()) {
		if (child === null || child === undefined || child === false) continue;
		node.append(child instanceof Node ? child : String(child));
	}
	return node;
}

/* Removes every child of 'node'. */
export function clear(node) {
	while (node.firstChild) node.firstChild.remove();
}

/*
 * Listener bookkeeping for dispose(): listen() adds a listener and records
 * it; dispose() removes every one. Panels own one each.
 */
export class Listeners {
	constructor() {
		this._list = [];
	}
	listen(target, type, fn, options) {
		target.addEventListener(type, fn, options);
		this._list.push([target, type, fn, options]);
		return fn;
	}
	dispose() {
		for (const [target, type, fn, options] of this._list) target.removeEventListener(type, fn, options);
		this._list.length = 0;
	}
}

/* A minimal event emitter: on() returns the function that unsubscribes. */
export class Emitter {
	constructor() {
		this._handlers = new Map();
	}
	on(type, fn) {
		if (!this._handlers.has(type)) this._handlers.set(type, new Set());
		this._handlers.get(type).add(fn);
		return () => this._handlers.get(type)?.delete(fn);
	}
	emit(type, payload) {
		const set = this._handlers.get(type);
		if (!set) return;
		for (const fn of [...set]) fn(payload);
	}
}

/*
 * Fixed-point text for a number with 'digits' decimals, without "-0.000"
 * (a value that rounds to zero prints as zero).
 */
export function fmt(value, digits = 3) {
	if (typeof value !== 'number' || !Number.isFinite(value)) return String(value);
	const text = value.toFixed(digits);
	return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

/*
 * A short number for an editable field: up to 'digits' decimals, trailing
 * zeros dropped ("0.2", "30", "-0.779").
 */
export function fmtField(value, digits = 4) {
	if (typeof value !== 'number' || !Number.isFinite(value)) return '';
	const text = fmt(value, digits);
	return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/* FNV-1a 32-bit hash of a string, for stable per-id colours. */
export function hashString(text) {
	let h = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		h ^= text.charCodeAt(i);
		h = Math.imul(h, 0x01000193);
	}
	return h >>> 0;
}

/*
 * A pleasant, stable colour for a node id or a client: the hue comes from
 * the hash, saturation and lightness are fixed so every colour reads well on
 * the dark viewport. Returns [r, g, b] in 0..1 and a CSS string.
 */
export function colourFor(key, { saturation = 0.55, lightness = 0.58 } = {}) {
	const hue = (hashString(key) % 360) / 360;
	const rgb = hslToRgb(hue, saturation, lightness);
	return { rgb, css: `rgb(${rgb.map((c) => Math.round(c * 255)).join(', ')})` };
}

export function hslToRgb(h, s, l) {
	const k = (n) => (n + h * 12) % 12;
	const a = s * Math.min(l, 1 - l);
	const f = (n) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
	return [f(0), f(8), f(4)];
}

/* True when 'id' is a valid node or scene id (server/scene.h scene_id_valid). */
export function validId(id) {
	return typeof id === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(id);
}

/* A random id-safe token of 'n' base-36 characters. */
export function randomToken(n = 8) {
	const bytes = new Uint8Array(n);
	crypto.getRandomValues(bytes);
	return Array.from(bytes, (b) => (b % 36).toString(36)).join('');
}

/* Milliseconds to wait before reconnect attempt 'attempt' (0-based): doubling
 * from 'base' up to 'max', with +-20% jitter so a restarted server is not hit
 * by every browser at the same instant. */
export function backoffDelay(attempt, { base = 250, max = 8000, random = Math.random } = {}) {
	const plain = Math.min(max, base * 2 ** Math.min(attempt, 20));
	return Math.round(plain * (0.8 + 0.4 * random()));
}
