/*
 * svg_layers.js: a 2D scene's SVG artwork, fetched, sanitised and cut into
 * the groups its nodes draw.
 *
 * Each asset a node's "layer" ("FILE#GROUP") names is fetched from
 * GET /api/scenes/NAME/assets/FILE (docs/protocol.md) and sanitised again
 * here with DOMPurify before any of it enters the page: no script, no event
 * handler, no foreignObject, no animation, and no reference that could
 * make the page load anything: every href must point inside the document ("#id"), every
 * url() in an attribute or style must be "url(#id)" (a raster image may
 * carry its pixels as a data: URL). The CSS of <style> elements is read
 * by the CSSOM and kept as plain style rules confined to the asset's own
 * groups (scopedSheet). What survives is kept in a detached
 * <svg>; a layer group is a deep clone of the element with that id, placed
 * under the transform its ancestors in the artwork gave it, so the artwork
 * shows as drawn while the world matrix is the identity. Path data and the
 * element's own attributes are never rewritten.
 *
 * The AssetStore dispatches by the response's media type: SVG as above;
 * application/json is a Spine or DragonBones skeleton, handed whole to
 * skeleton_layers.js (which fetches its atlas and pages); nothing else is
 * a layer.
 *
 * Never: inserts unsanitised markup, feeds JSON or PNG to the SVG
 * sanitiser, composes a node's world matrix.
 */
import DOMPurify from 'dompurify';
import { auth } from './auth.js';
import { loadSkeleton } from './skeleton_layers.js';
import { Emitter } from './util.js';

export const SVG_NS = 'http://www.w3.org/2000/svg';

/* Elements that may not come through even if DOMPurify's SVG profile would
 * keep them. */
const FORBID_TAGS = ['script', 'style', 'foreignObject', 'a', 'animate', 'animateMotion', 'animateTransform', 'set', 'iframe', 'video', 'audio', 'canvas', 'link', 'meta', 'base'];
const RASTER = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]*$/i;
const URL_REF = /url\s*\(\s*(['"]?)\s*([^'")]*)\1\s*\)/gi;

/* True when every url(...) in 'value' points inside the document. */
function localUrls(value) {
	if (!/url\s*\(/i.test(value)) return true;
	let count = 0;
	for (const m of value.matchAll(URL_REF)) {
		if (!m[2].trim().startsWith('#')) return false;
		count++;
	}
	// A url( that the pattern could not read (an escape, a stray quote) is
	// refused rather than guessed at.
	return count === (value.match(/url\s*\(/gi) || []).length;
}

let purifier = null;

/* The one DOMPurify instance of the page, with the hooks that drop every
 * outside reference. */
function getPurifier() {
	if (purifier) return purifier;
	purifier = DOMPurify(window);
	purifier.addHook('uponSanitizeAttribute', (node, data) => {
		const name = data.attrName.toLowerCase();
		const value = String(data.attrValue ?? '');
		if (name.startsWith('data-') && name !== STYLE_ATTR) {
			data.keepAttr = false;
			return;
		}
		if (name === 'href' || name === 'xlink:href') {
			const ok = value.trim().startsWith('#') || (node.nodeName.toLowerCase() === 'image' && RASTER.test(value.trim()));
			if (!ok) data.keepAttr = false;
			else data.forceKeepAttr = true;
			return;
		}
		if (name === 'src' || name === 'srcset' || name === 'action' || name === 'formaction') data.keepAttr = false;
		else if (!localUrls(value) || /@import|expression\s*\(|javascript:|behavior\s*:/i.test(value)) data.keepAttr = false;
	});
	return purifier;
}

/*
 * Sanitises SVG text: returns the <svg> element that is left (owned by the
 * page's document, not in it), or throws an Error saying why nothing is.
 */
export function sanitizeSvg(text) {
	return sanitizeAsset(text).svg;
}

/*
 * Sanitises an asset's text: {svg, css}, 'css' the text of its <style>
 * elements (to be read only through scopedSheet()), or throws an Error
 * saying why nothing is left.
 */
export function sanitizeAsset(text) {
	const css = [];
	// <style> elements are taken out before anything parses the markup:
	// their text is read only as CSS, by the CSSOM, rule by rule.
	const markup = String(text).replace(/<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi, (m, body) => {
		css.push(body.replace(/^\s*<!\[CDATA\[/, '').replace(/\]\]>\s*$/, ''));
		return '';
	});
	const fragment = getPurifier().sanitize(defuse(markup), {
		USE_PROFILES: { svg: true, svgFilters: true },
		FORBID_TAGS,
		ADD_ATTR: ['xlink:href', 'href', STYLE_ATTR],
		// DOMPurify drops ids that name a property of document ("head",
		// "body", "images"...) against DOM clobbering; a layer group is
		// found by its id, and "head" is a body part. The viewer reads no
		// global by name that an element id could shadow, and what enters
		// the page are copies of the groups, never a form or an embed.
		SANITIZE_DOM: false,
		RETURN_DOM_FRAGMENT: true,
	});
	const svg = fragment.firstElementChild && fragment.querySelector('svg');
	if (!svg || svg.namespaceURI !== SVG_NS) throw new Error('the file holds no SVG drawing');
	// Declarations set through the CSSOM, which the page's policy allows
	// (an inline style attribute it would refuse).
	for (const e of [svg, ...svg.querySelectorAll(`[${STYLE_ATTR}]`)]) {
		if (!e.hasAttribute(STYLE_ATTR)) continue;
		e.style.cssText = e.getAttribute(STYLE_ATTR);
		e.removeAttribute(STYLE_ATTR);
	}
	return { svg, css: css.join('\n') };
}

/*
 * A stylesheet for the page built from an asset's CSS (its <style>
 * elements), or null when nothing of it is kept: only plain style rules,
 * each selector confined to the groups drawn from that asset ('scope', a
 * selector) so the artwork cannot restyle the page, and without any
 * declaration whose value refers outside the document (url() but
 * "url(#id)"). At-rules (@import, @font-face, @media...) are dropped.
 */
export function scopedSheet(css, scope) {
	if (!css.trim()) return null;
	const parsed = new CSSStyleSheet();
	try {
		parsed.replaceSync(css);
	} catch {
		return null;
	}
	const out = [];
	for (const rule of parsed.cssRules) {
		if (!(rule instanceof CSSStyleRule)) continue;
		const decls = [];
		for (let i = 0; i < rule.style.length; i++) {
			const name = rule.style[i];
			const value = rule.style.getPropertyValue(name);
			if (!localUrls(value) || /@import|expression\s*\(|javascript:|behavior\s*:/i.test(value)) continue;
			const important = rule.style.getPropertyPriority(name) ? ' !important' : '';
			decls.push(`${name}: ${value}${important};`);
		}
		if (decls.length) out.push(`${scope} :is(${rule.selectorText}) { ${decls.join(' ')} }`);
	}
	if (!out.length) return null;
	const sheet = new CSSStyleSheet();
	for (const rule of out) {
		try {
			sheet.insertRule(rule, sheet.cssRules.length);
		} catch {
			/* a selector that does not survive scoping is left out */
		}
	}
	return sheet;
}

const STYLE_ATTR = 'data-rigd-style';
const DROPPED_ATTR = 'data-rigd-dropped';

/*
 * Renames, in the text, what the page's Content-Security-Policy would
 * report as soon as it were parsed (even in an inert document): event
 * handler attributes (renamed to one that is always dropped), <style> and
 * <script> elements (to unknown elements, which DOMPurify drops) and style
 * attributes (kept aside, checked like any attribute, then applied through
 * the CSSOM). This is not the defence (DOMPurify and the policy are):
 * whatever it misses is still removed, only with a report in the console.
 */
function defuse(text) {
	return text.replace(/<[^<>]+>/g, (tag) =>
		tag
			.replace(/^<(\/?)(style|script)\b/i, '<$1rigd-dropped-$2')
			.replace(/(\s)(on[a-z0-9_.:-]*|style)(\s*=)/gi, (m, space, name, eq) => `${space}${name.toLowerCase() === 'style' ? STYLE_ATTR : DROPPED_ATTR}${eq}`),
	);
}

/* Splits "FILE#GROUP" into [file, group], or null. */
export function splitLayer(layer) {
	if (typeof layer !== 'string') return null;
	const at = layer.indexOf('#');
	if (at <= 0 || at === layer.length - 1) return null;
	return [layer.slice(0, at), layer.slice(at + 1)];
}

/* The element of 'svg' whose id is 'id', or null. */
function byId(svg, id) {
	for (const e of svg.querySelectorAll('[id]')) if (e.getAttribute('id') === id) return e;
	return null;
}

/* The transform an element's ancestors give it inside its drawing (below
 * the root <svg>), as a DOMMatrix: the product of their transform lists. */
function ancestorMatrix(element, root) {
	const chain = [];
	for (let p = element.parentElement; p && p !== root; p = p.parentElement) chain.push(p);
	let m = new DOMMatrix();
	for (let i = chain.length - 1; i >= 0; i--) {
		const list = chain[i].transform && chain[i].transform.baseVal;
		const t = list && list.numberOfItems ? list.consolidate() : null;
		if (t) {
			const s = t.matrix;
			m = m.multiply(new DOMMatrix([s.a, s.b, s.c, s.d, s.e, s.f]));
		}
	}
	return m;
}

/* One sanitised drawing and the groups cut from it. */
export class Asset {
	constructor(file, { svg, css }) {
		this.file = file;
		this.svg = svg;
		this.css = css;
	}

	/* The definitions (gradients, clip paths, markers, symbols, filters) the
	 * groups may refer to by url(#id) or href="#id", moved out of the
	 * drawing once: returns them as a list of nodes. */
	takeDefs() {
		if (this._defs) return [];
		this._defs = true;
		const kinds = new Set(['defs', 'lineargradient', 'radialgradient', 'pattern', 'clippath', 'mask', 'filter', 'marker', 'symbol']);
		return [...this.svg.children].filter((c) => kinds.has(c.localName.toLowerCase())).map((c) => c.cloneNode(true));
	}

	/*
	 * A copy of the element with id 'group' for the node that draws it:
	 * {element, inner} with 'inner' the 'matrix(...)' its ancestors give it
	 * (null when none). Elements inside it that other nodes draw
	 * ('boundIds', a Set of group ids of this file) are left out of the
	 * copy: they are drawn by their own nodes. Null when there is no such
	 * element.
	 */
	cut(group, boundIds) {
		const original = byId(this.svg, group);
		if (!original || original === this.svg) return null;
		const element = original.cloneNode(true);
		for (const inner of [...element.querySelectorAll('[id]')]) {
			if (boundIds.has(inner.getAttribute('id'))) inner.remove();
		}
		const m = ancestorMatrix(original, this.svg);
		const inner = m.isIdentity ? null : `matrix(${m.a} ${m.b} ${m.c} ${m.d} ${m.e} ${m.f})`;
		return { element, inner };
	}
}

/*
 * The assets of one scene, fetched once each (an asset is immutable under
 * its name). Events: 'change' when one finished loading or failed.
 */
export class AssetStore extends Emitter {
	constructor(scene) {
		super();
		this.scene = scene;
		this.assets = new Map(); // file -> {status: 'loading'|'ready'|'error', asset, error}
		this._aborts = new AbortController();
	}

	/* The entry for 'file', starting its fetch the first time. */
	get(file) {
		let entry = this.assets.get(file);
		if (entry) return entry;
		entry = { status: 'loading', asset: null, error: null };
		this.assets.set(file, entry);
		this._load(file, entry);
		return entry;
	}

	/* Starts loading every skeleton asset of the scene (kinds spine and
	 * dragonbones), whether a layer names one or not: the 2D view reads
	 * their IK constraints (view2d.js, _ikTarget). Failures are the
	 * entries' own, as for any asset. */
	async loadSkeletons() {
		const url = `/api/scenes/${encodeURIComponent(this.scene)}/assets`;
		try {
			const res = await fetch(url, { headers: auth.headers(), signal: this._aborts.signal });
			if (!res.ok) return;
			for (const a of await res.json()) if (a.kind === 'spine' || a.kind === 'dragonbones') this.get(a.file);
		} catch {
			/* aborted, or offline: the layers load what they name */
		}
	}

	/* The file names the scene's asset list holds now (GET .../assets). */
	async _listed() {
		const url = `/api/scenes/${encodeURIComponent(this.scene)}/assets`;
		const res = await fetch(url, { headers: auth.headers(), signal: this._aborts.signal });
		if (!res.ok) throw new Error(`the asset list: HTTP ${res.status}`);
		return new Set((await res.json()).map((a) => a.file));
	}

	/* GET one asset of the scene with this tab's credentials: the Response,
	 * or null when 'optional' and the scene has no such asset (asked of the
	 * asset list first, so that a skeleton without an atlas costs no 404
	 * in the console); throws on any other failure. */
	async _fetch(file, optional = false) {
		if (optional && !(await this._listed()).has(file)) return null;
		const url = `/api/scenes/${encodeURIComponent(this.scene)}/assets/${encodeURIComponent(file)}`;
		const res = await fetch(url, { headers: auth.headers(), signal: this._aborts.signal });
		if (optional && res.status === 404) return null;
		if (!res.ok) {
			if (res.status === 401 || res.status === 403) auth.report(res.status === 401 ? 'unauthorized' : 'forbidden', `reading asset ${file}`);
			throw new Error(`${file}: HTTP ${res.status}`);
		}
		return res;
	}

	/* Loads by the response's media type: SVG is sanitised as artwork;
	 * JSON is a skeleton (skeleton_layers.js), whose atlas and pages are
	 * fetched after it and which never goes near the SVG sanitiser; any
	 * other kind (a PNG page, an atlas) is no layer. */
	async _load(file, entry) {
		try {
			const res = await this._fetch(file);
			const type = (res.headers.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
			if (type === 'application/json') {
				let data;
				try {
					data = JSON.parse(await res.text());
				} catch {
					throw new Error('the JSON does not parse');
				}
				entry.asset = await loadSkeleton(file, data, (name) => this._fetch(name, true));
			} else if (type === 'image/svg+xml' || type === '') {
				entry.asset = new Asset(file, sanitizeAsset(await res.text()));
			} else {
				throw new Error(`a ${type} asset is not a layer`);
			}
			if (this._aborts.signal.aborted && entry.asset.dispose) entry.asset.dispose();
			entry.status = 'ready';
		} catch (err) {
			if (this._aborts.signal.aborted) return;
			entry.status = 'error';
			entry.error = `asset ${file}: ${err.message}`;
		}
		this.emit('change', { file });
	}

	dispose() {
		this._aborts.abort();
		for (const entry of this.assets.values()) if (entry.asset && entry.asset.dispose) entry.asset.dispose();
		this.assets.clear();
	}
}
