/*
 * skeleton_layers.js: a Spine or DragonBones skeleton asset drawn as the
 * groups its slot nodes show, with the regions of its texture atlas.
 *
 * A skeleton import makes one node per slot whose layer is
 * "FILE#GROUP", GROUP = enc(slot) + "." + enc(attachment)
 * (docs/viewer-skeletons.md). The asset FILE is the skeleton JSON; its
 * atlas, when one was imported, is FILE + ".atlas" (Spine's text format)
 * or FILE + ".tex.json" (DragonBones' _tex.json), and the atlas's pages
 * are PNG assets under the names the atlas gives. A SkeletonAsset has the
 * interface view2d.js uses for an SVG asset (svg_layers.js's Asset):
 * 'file', 'css', takeDefs() and cut(group): the group is an SVG <g> in
 * the slot node's local frame (rigd's, y down) that draws the attachment:
 * a region cropped from its page by a nested <svg> whose viewBox is the
 * region (an <image> of the whole page inside it), turned back when the
 * atlas stores it rotated and placed at its offset inside the original
 * size when the packer trimmed it; without an atlas, or for what is not
 * an image, a thin outline so the slot stays visible.
 *
 * A weighted mesh (Spine's per-bone vertices, DragonBones' weights and
 * bonePose) is drawn deformed by its bones: cut() answers, beside the
 * group, deform(worldOf, slotWorld), which the view calls with the
 * server's world matrices whenever they may have changed; each vertex is
 * the weighted sum of its bind positions carried by its bones' worlds
 * (the runtimes' skinning), and each triangle shows its part of the atlas
 * region, mapped affinely from its uvs and clipped to the triangle.
 *
 * Pages are fetched as blobs and shown through blob: URLs (the viewer's
 * policy allows img-src blob: and data:). A page whose atlas says pma
 * (premultiplied alpha) is un-premultiplied once on a canvas, so its edges
 * do not draw dark fringes.
 *
 * Never: inserts anything from the skeleton or the atlas as markup (every
 * element is made with createElementNS, every attribute set is a number
 * or a fixed word, names only ever reach the page as textContent),
 * composes a node's world matrix (a mesh reads its bones' as given).
 */
export const SVG_NS = 'http://www.w3.org/2000/svg';

const OUTLINE = '#e0902a'; // the stroke of an attachment drawn without pixels
const MARK = 16; // side of the marker of an image display whose size is unknown

/* ---- names ---- */

/*
 * The inverse of the import's enc(): "_" and two hex digits become that
 * byte, every other character is itself; the bytes are read as UTF-8.
 * Returns null when 'text' is not the output of enc().
 */
export function decodePart(text) {
	const bytes = [];
	for (let i = 0; i < text.length; i++) {
		const ch = text[i];
		if (ch === '_') {
			const hex = text.slice(i + 1, i + 3);
			if (!/^[0-9a-f]{2}$/.test(hex)) return null;
			bytes.push(parseInt(hex, 16));
			i += 2;
		} else if (/^[A-Za-z0-9-]$/.test(ch)) bytes.push(ch.charCodeAt(0));
		else return null;
	}
	try {
		return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bytes));
	} catch {
		return null;
	}
}

/* The import's enc(): UTF-8 bytes [A-Za-z0-9-] kept, every other byte
 * "_" and two lowercase hex digits. */
export function encodePart(name) {
	let out = '';
	for (const b of new TextEncoder().encode(name)) {
		const ch = String.fromCharCode(b);
		out += /^[A-Za-z0-9-]$/.test(ch) ? ch : `_${b.toString(16).padStart(2, '0')}`;
	}
	return out;
}

/* A layer's GROUP as {slot, attachment}, or null. */
export function splitGroup(group) {
	const parts = String(group).split('.');
	if (parts.length !== 2) return null;
	const slot = decodePart(parts[0]);
	const attachment = decodePart(parts[1]);
	return slot === null || attachment === null ? null : { slot, attachment };
}

/* ---- atlases ----
 *
 * Both formats become the same region records: {name, page, x, y, w, h,
 * degrees, left, top, origW, origH}: (x, y) the top-left of the stored
 * pixels in the page, w x h the region's size upright (the stored rect is
 * h x w when degrees is 90 or 270), 'degrees' how far the atlas turned it
 * counter-clockwise on screen (0, 90, 180, 270), (left, top) where the
 * stored pixels sit inside the original image of origW x origH, y down.
 * A page is {name, width, height, pma} (0 x 0 when the atlas does not say).
 */

const num = (v, d = 0) => (Number.isFinite(Number(v)) && v !== '' && v !== null ? Number(v) : d);

/*
 * Parses Spine's .atlas text (the 4.x keys bounds/offsets/rotate and the
 * older xy/size/orig/offset): {pages, regions: Map name -> region}. The
 * first of several regions of one name (a sequence's frames, told apart
 * by 'index') is the one kept. Throws an Error naming the line on text
 * that is not an atlas.
 */
export function parseSpineAtlas(text) {
	const pages = [];
	const regions = new Map();
	let page = null;
	let region = null;
	let newPage = true;
	const lines = String(text).split(/\r?\n/);
	const finish = () => {
		if (!region) return;
		const r = region;
		if (!r.origW && !r.origH) (r.origW = r.w), (r.origH = r.h);
		// Spine's offsets count the pixels stripped from the left and from
		// the bottom of the original image; rigd's frame is y down.
		r.left = r.offsetX;
		r.top = r.origH - r.offsetY - r.h;
		if (!regions.has(r.name)) regions.set(r.name, r);
		region = null;
	};
	for (let n = 0; n < lines.length; n++) {
		const line = lines[n].trim();
		if (!line) {
			finish();
			newPage = true;
			continue;
		}
		const colon = line.indexOf(':');
		if (colon < 0) {
			finish();
			if (newPage) {
				page = { name: line, width: 0, height: 0, pma: false, format: '', filter: '' };
				pages.push(page);
				newPage = false;
			} else {
				if (!page) throw new Error(`atlas line ${n + 1}: a region before any page`);
				region = { name: line, page, x: 0, y: 0, w: 0, h: 0, degrees: 0, offsetX: 0, offsetY: 0, origW: 0, origH: 0, index: -1 };
			}
			continue;
		}
		if (!page) throw new Error(`atlas line ${n + 1}: a property before any page`);
		const key = line.slice(0, colon).trim();
		const values = line
			.slice(colon + 1)
			.split(',')
			.map((v) => v.trim());
		const at = (i) => num(values[i]);
		if (!region) {
			if (key === 'size') (page.width = at(0)), (page.height = at(1));
			else if (key === 'pma') page.pma = values[0] === 'true';
			else if (key === 'format') page.format = values[0];
			else if (key === 'filter') page.filter = values.join(',');
			continue;
		}
		const r = region;
		if (key === 'bounds') (r.x = at(0)), (r.y = at(1)), (r.w = at(2)), (r.h = at(3));
		else if (key === 'offsets') (r.offsetX = at(0)), (r.offsetY = at(1)), (r.origW = at(2)), (r.origH = at(3));
		else if (key === 'xy') (r.x = at(0)), (r.y = at(1));
		else if (key === 'size') (r.w = at(0)), (r.h = at(1));
		else if (key === 'orig') (r.origW = at(0)), (r.origH = at(1));
		else if (key === 'offset') (r.offsetX = at(0)), (r.offsetY = at(1));
		else if (key === 'index') r.index = at(0, -1);
		else if (key === 'rotate') {
			const v = values[0];
			r.degrees = v === 'true' ? 90 : v === 'false' ? 0 : num(v);
			if (![0, 90, 180, 270].includes(r.degrees)) throw new Error(`atlas line ${n + 1}: region '${r.name}' has rotate ${v}`);
		}
	}
	finish();
	return { pages, regions };
}

/*
 * Parses DragonBones' _tex.json (an object): {pages, regions}. A SubTexture
 * marked rotated is stored turned 90 degrees clockwise with its 'width' and
 * 'height' those of the stored rect (the Starling convention the format
 * comes from); frameX/frameY (zero or negative) place a trimmed one inside
 * its frameWidth x frameHeight. Throws an Error on what is not one.
 */
export function parseDragonBonesAtlas(tex) {
	if (!tex || typeof tex !== 'object' || !Array.isArray(tex.SubTexture)) throw new Error('the atlas has no SubTexture list');
	const page = { name: String(tex.imagePath || ''), width: num(tex.width), height: num(tex.height), pma: false };
	const regions = new Map();
	for (const s of tex.SubTexture) {
		if (!s || typeof s.name !== 'string') continue;
		const rotated = s.rotated === true;
		const w = rotated ? num(s.height) : num(s.width);
		const h = rotated ? num(s.width) : num(s.height);
		const trimmed = num(s.frameWidth, -1) > 0;
		const r = {
			name: s.name,
			page,
			x: num(s.x),
			y: num(s.y),
			w,
			h,
			// 90 clockwise is 270 counter-clockwise.
			degrees: rotated ? 270 : 0,
			left: trimmed ? -num(s.frameX) : 0,
			top: trimmed ? -num(s.frameY) : 0,
			origW: trimmed ? num(s.frameWidth) : w,
			origH: trimmed ? num(s.frameHeight) : h,
		};
		if (!regions.has(r.name)) regions.set(r.name, r);
	}
	return { pages: [page], regions };
}

/* ---- drawing ---- */

function el(name, attrs = {}) {
	const e = document.createElementNS(SVG_NS, name);
	for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
	return e;
}

/* A number for an attribute: finite, else 0 (nothing from a file becomes
 * anything but a number). */
const n = (v) => (Number.isFinite(v) ? v : 0);
const matrix = (a, b, c, d, e, f) => `matrix(${n(a)} ${n(b)} ${n(c)} ${n(d)} ${n(e)} ${n(f)})`;

/* How a page point maps into the upright region's pixels (u right, v down),
 * for each storage turn: u = a*px + c*py + e, v = b*px + d*py + f. */
function pageToRegion(r) {
	switch (r.degrees) {
		case 90: // stored turned a quarter counter-clockwise: px = x + v, py = y + w - u
			return [0, 1, -1, 0, r.y + r.w, -r.x];
		case 180: // px = x + w - u, py = y + h - v
			return [-1, 0, 0, -1, r.x + r.w, r.y + r.h];
		case 270: // stored turned a quarter clockwise: px = x + h - v, py = y + u
			return [0, -1, 1, 0, -r.y, r.x + r.h];
		default:
			return [1, 0, 0, 1, -r.x, -r.y];
	}
}

/*
 * The pixels of region 'r' filling the rect (dx, dy, dw, dh), which stands
 * for the region's original image (origW x origH): a nested <svg> over the
 * stored pixels' place in it whose viewBox is the region upright, holding
 * one <image> of the whole page. 'page' is {url, width, height}.
 */
export function regionElement(r, page, dx, dy, dw, dh) {
	const sx = dw / (r.origW || r.w || 1);
	const sy = dh / (r.origH || r.h || 1);
	const svg = el('svg', {
		x: n(dx + r.left * sx),
		y: n(dy + r.top * sy),
		width: n(Math.abs(r.w * sx)),
		height: n(Math.abs(r.h * sy)),
		preserveAspectRatio: 'none',
		overflow: 'hidden',
	});
	const image = el('image', { width: n(page.width), height: n(page.height), preserveAspectRatio: 'none' });
	if (r.degrees) {
		svg.setAttribute('viewBox', `0 0 ${n(r.w)} ${n(r.h)}`);
		image.setAttribute('transform', matrix(...pageToRegion(r)));
	} else {
		svg.setAttribute('viewBox', `${n(r.x)} ${n(r.y)} ${n(r.w)} ${n(r.h)}`);
	}
	image.setAttribute('href', page.url);
	svg.append(image);
	return svg;
}

function outlineRect(x, y, w, h) {
	return el('rect', { class: 'skel-outline', x: n(x), y: n(y), width: n(w), height: n(h), fill: 'none', stroke: OUTLINE, 'stroke-width': 1, 'vector-effect': 'non-scaling-stroke' });
}

function titled(g, text) {
	const t = el('title');
	t.textContent = text;
	g.append(t);
	return g;
}

/* The bounding box [x0, y0, x1, y1] of unweighted vertices [x, y, ...],
 * y flipped when 'flip', or null (none, or weighted). */
function vertexBox(vertices, count, flip) {
	if (!Array.isArray(vertices) || vertices.length !== count * 2 || !count) return null;
	let box = null;
	for (let i = 0; i + 1 < vertices.length; i += 2) {
		const x = num(vertices[i]);
		const y = flip ? -num(vertices[i + 1]) : num(vertices[i + 1]);
		box = box ? [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)] : [x, y, x, y];
	}
	return box;
}

/* What a group built here draws, in its own frame: [x0, y0, x1, y1] over
 * its region viewports and outlines (each mapped by the transforms between
 * it and 'g'), or null. Read from the attributes this module wrote. */
function extent(g) {
	let box = null;
	for (const e of g.querySelectorAll('svg, rect.skel-outline, circle.skel-outline')) {
		let x0, y0, x1, y1;
		if (e.localName === 'circle') {
			const cx = Number(e.getAttribute('cx'));
			const cy = Number(e.getAttribute('cy'));
			[x0, y0, x1, y1] = [cx - 2, cy - 2, cx + 2, cy + 2];
		} else {
			x0 = Number(e.getAttribute('x'));
			y0 = Number(e.getAttribute('y'));
			x1 = x0 + Number(e.getAttribute('width'));
			y1 = y0 + Number(e.getAttribute('height'));
		}
		let m = new DOMMatrix();
		for (let p = e.parentElement; p && p !== g.parentElement; p = p.parentElement) {
			const list = p.transform && p.transform.baseVal;
			const t = list && list.numberOfItems ? list.consolidate() : null;
			if (t) m = new DOMMatrix([t.matrix.a, t.matrix.b, t.matrix.c, t.matrix.d, t.matrix.e, t.matrix.f]).multiply(m);
		}
		for (const [x, y] of [[x0, y0], [x1, y0], [x0, y1], [x1, y1]]) {
			const q = m.transformPoint(new DOMPoint(x, y));
			box = box ? [Math.min(box[0], q.x), Math.min(box[1], q.y), Math.max(box[2], q.x), Math.max(box[3], q.y)] : [q.x, q.y, q.x, q.y];
		}
	}
	return box;
}

/* ---- weighted meshes ----
 *
 * An influence is {bone, x, y, w}: node id 'bone' (the import's id of the
 * bone, enc(name)), the bind position (x, y) in that bone's frame as rigd
 * has it (y down), weight 'w'. A vertex lies at the sum over its
 * influences of w * (boneWorld * (x, y)).
 */

/*
 * Spine's weighted vertices: for each of 'count' vertices, a bone count n,
 * then n times (bone index, x, y, weight), x and y in the bone's frame,
 * y up (so (x, -y) in rigd's). 'bones' is the file's bone list. An array
 * per vertex, or null when the numbers do not fit that shape.
 */
export function spineInfluences(vertices, count, bones) {
	const out = [];
	let i = 0;
	const v = vertices.map((x) => Number(x));
	for (let k = 0; k < count; k++) {
		const n = v[i++];
		if (!Number.isInteger(n) || n < 1 || i + 4 * n > v.length) return null;
		const list = [];
		for (let j = 0; j < n; j++, i += 4) {
			const b = v[i];
			if (!Number.isInteger(b) || b < 0 || b >= bones.length || !bones[b] || typeof bones[b].name !== 'string') return null;
			list.push({ bone: encodePart(bones[b].name), x: num(v[i + 1]), y: -num(v[i + 2]), w: num(v[i + 3]) });
		}
		out.push(list);
	}
	return i === v.length ? out : null;
}

/* An affine [a, b, c, d, e, f] (x' = a x + c y + e, y' = b x + d y + f)
 * inverted, or null when singular. */
function invert([a, b, c, d, e, f]) {
	const det = a * d - b * c;
	if (!Number.isFinite(det) || Math.abs(det) < 1e-12) return null;
	return [d / det, -b / det, -c / det, a / det, (c * f - d * e) / det, (b * e - a * f) / det];
}
const applyAffine = ([a, b, c, d, e, f], x, y) => [a * x + c * y + e, b * x + d * y + f];
const compose = (m, q) => {
	const [a, b] = applyAffine([m[0], m[1], m[2], m[3], 0, 0], q[0], q[1]);
	const [c, d] = applyAffine([m[0], m[1], m[2], m[3], 0, 0], q[2], q[3]);
	const [e, f] = applyAffine(m, q[4], q[5]);
	return [a, b, c, d, e, f];
};

/*
 * DragonBones' weighted mesh display: 'vertices' (x, y pairs in the frame
 * of 'slotPose', the slot's matrix [a, b, c, d, tx, ty] when the mesh was
 * bound), 'weights' (per vertex a bone count n, then n times bone index
 * and weight; indices into the armature's 'bones') and 'bonePose' (per
 * bone its index and its matrix then). A bind position is the vertex
 * carried into the armature's frame by slotPose and back into the bone's
 * by the inverse of its bonePose. An array per vertex, or null.
 */
export function dragonBonesInfluences(d, bones) {
	const verts = Array.isArray(d.vertices) ? d.vertices.map((x) => num(x)) : [];
	const weights = Array.isArray(d.weights) ? d.weights.map((x) => Number(x)) : [];
	const rawPose = Array.isArray(d.bonePose) ? d.bonePose.map((x) => num(x)) : [];
	const sp = Array.isArray(d.slotPose) && d.slotPose.length === 6 ? d.slotPose.map((x) => num(x)) : [1, 0, 0, 1, 0, 0];
	const poses = new Map();
	for (let i = 0; i + 6 < rawPose.length; i += 7) poses.set(rawPose[i], invert(rawPose.slice(i + 1, i + 7)));
	const count = verts.length / 2;
	if (!Number.isInteger(count) || !count) return null;
	const out = [];
	let i = 0;
	for (let k = 0; k < count; k++) {
		const n = weights[i++];
		if (!Number.isInteger(n) || n < 1 || i + 2 * n > weights.length) return null;
		const [gx, gy] = applyAffine(sp, verts[2 * k], verts[2 * k + 1]);
		const list = [];
		for (let j = 0; j < n; j++, i += 2) {
			const b = weights[i];
			const inv = poses.get(b);
			if (!Number.isInteger(b) || b < 0 || b >= bones.length || !bones[b] || typeof bones[b].name !== 'string' || !inv) return null;
			const [x, y] = applyAffine(inv, gx, gy);
			list.push({ bone: encodePart(bones[b].name), x, y, w: num(weights[i + 1]) });
		}
		out.push(list);
	}
	return i === weights.length ? out : null;
}

/* The 2D affine part [m0, m1, m4, m5, m12, m13] of a column-major world
 * matrix, or null. */
function affineOf(m) {
	if (!m || m.length < 16) return null;
	const a = [m[0], m[1], m[4], m[5], m[12], m[13]];
	return a.every(Number.isFinite) ? a : null;
}

/* Where the upright region pixel (u, v) of region 'r' is on its page. */
function regionToPage(r) {
	return invert(pageToRegion(r));
}

let clipSerial = 0; // the document-unique ids of the triangles' clip paths

/*
 * The triangles of one weighted mesh: per triangle a group whose transform
 * is the affine map that takes the triangle's page pixels (from its uvs)
 * onto its deformed corners, holding the whole page clipped by a
 * <clipPath> of the triangle's texels (page pixels, so the clip never
 * changes); without a region, the triangles' outlines. deform() rewrites
 * one transform per triangle (or one outline's points).
 */
class WeightedMesh {
	constructor(influences, uvs, triangles, found, original) {
		this.influences = influences;
		this.triangles = triangles;
		this.element = el('g', { class: 'skel-mesh' });
		this.element.style.display = 'none'; // until deform() places it
		this.key = null;
		this.box = null;
		this.parts = [];
		const defs = el('defs');
		this.element.append(defs);
		let texel = null;
		if (found) {
			const { r } = found;
			const toPage = regionToPage(r);
			// uvs span the original image (Spine) or the stored region
			// (DragonBones); either way to an upright region pixel, then to
			// the page.
			texel = (k) => {
				const u = uvs[2 * k];
				const v = uvs[2 * k + 1];
				const [ru, rv] = original ? [u * (r.origW || r.w) - r.left, v * (r.origH || r.h) - r.top] : [u * r.w, v * r.h];
				return applyAffine(toPage, ru, rv);
			};
		}
		for (let t = 0; t < triangles.length; t += 3) {
			const corners = [triangles[t], triangles[t + 1], triangles[t + 2]];
			if (!texel) {
				const outline = el('polygon', { class: 'skel-outline', fill: 'none', stroke: OUTLINE, 'stroke-width': 1, 'vector-effect': 'non-scaling-stroke' });
				this.element.append(outline);
				this.parts.push({ corners, polygon: outline, holder: null, fromPage: null });
				continue;
			}
			const [p0, p1, p2] = corners.map(texel);
			// page -> barycentric-free frame of the triangle: the inverse of
			// [p1 - p0, p2 - p0, p0].
			const fromPage = invert([p1[0] - p0[0], p1[1] - p0[1], p2[0] - p0[0], p2[1] - p0[1], p0[0], p0[1]]);
			if (!fromPage) continue; // no texels under it
			const id = `skel-tri-${++clipSerial}`;
			const clip = el('clipPath', { id });
			clip.append(el('polygon', { points: [p0, p1, p2].map(([x, y]) => `${n(x)},${n(y)}`).join(' ') }));
			defs.append(clip);
			const holder = el('g');
			const image = el('image', { width: n(found.page.width), height: n(found.page.height), preserveAspectRatio: 'none', 'clip-path': `url(#${id})` });
			image.setAttribute('href', found.page.url);
			holder.append(image);
			this.element.append(holder);
			this.parts.push({ corners, polygon: null, holder, fromPage });
		}
	}

	/*
	 * Places the mesh for the bones' worlds: 'worldOf(id)' answers a node's
	 * column-major world matrix (or null), 'slotWorld' is the slot node's,
	 * the frame the mesh's group is drawn in. Returns the box [x0, y0, x1,
	 * y1] of the vertices in that frame, or null (and hides the mesh) when
	 * a bone has no world or the slot's is singular. Does nothing when no
	 * matrix changed since the last call.
	 */
	deform(worldOf, slotWorld) {
		const bones = new Map();
		for (const list of this.influences) for (const f of list) if (!bones.has(f.bone)) bones.set(f.bone, affineOf(worldOf(f.bone)));
		const slot = affineOf(slotWorld);
		const key = JSON.stringify([slot, [...bones.values()]]);
		if (key === this.key) return this.box;
		this.key = key;
		const toSlot = slot && invert(slot);
		if (!toSlot || [...bones.values()].some((m) => !m)) {
			this.element.style.display = 'none';
			return (this.box = null);
		}
		this.element.style.display = '';
		const pos = this.influences.map((list) => {
			let x = 0;
			let y = 0;
			for (const f of list) {
				const [wx, wy] = applyAffine(bones.get(f.bone), f.x, f.y);
				x += f.w * wx;
				y += f.w * wy;
			}
			return applyAffine(toSlot, x, y);
		});
		let box = null;
		for (const [x, y] of pos) box = box ? [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)] : [x, y, x, y];
		for (const part of this.parts) {
			const [q0, q1, q2] = part.corners.map((k) => pos[k]);
			if (part.holder) {
				// page -> triangle frame -> slot frame: [q1 - q0, q2 - q0, q0].
				const m = compose([q1[0] - q0[0], q1[1] - q0[1], q2[0] - q0[0], q2[1] - q0[1], q0[0], q0[1]], part.fromPage);
				part.holder.setAttribute('transform', matrix(...m));
			} else part.polygon.setAttribute('points', [q0, q1, q2].map(([x, y]) => `${n(x)},${n(y)}`).join(' '));
		}
		return (this.box = box);
	}
}

/* ---- the asset ---- */

/* The attachments of a Spine slot in its skins: the default skin first. */
function spineAttachment(skeleton, slot, name) {
	let skins = skeleton.skins;
	if (skins && !Array.isArray(skins) && typeof skins === 'object') skins = Object.entries(skins).map(([k, v]) => ({ name: k, attachments: v }));
	if (!Array.isArray(skins)) return null;
	const ordered = [...skins.filter((s) => s && s.name === 'default'), ...skins.filter((s) => s && s.name !== 'default')];
	for (const skin of ordered) {
		const slots = skin.attachments;
		const a = slots && Object.hasOwn(slots, slot) && slots[slot] && Object.hasOwn(slots[slot], name) ? slots[slot][name] : null;
		if (a && typeof a === 'object') return a;
	}
	return null;
}

/* The display of a DragonBones slot named 'name' and its armature
 * ({display, armature}), in the armature that has the slot: first the one
 * the asset's default file name (encoded armature name + "_ske.json")
 * names, then the others in the file's order. */
function dragonBonesDisplay(data, slot, name, file) {
	const arms = Array.isArray(data.armature) ? data.armature.filter((a) => a && typeof a === 'object') : [];
	const named = arms.filter((a) => typeof a.name === 'string' && `${encodePart(a.name)}_ske.json` === file);
	for (const arm of [...named, ...arms.filter((a) => !named.includes(a))]) {
		for (const skin of Array.isArray(arm && arm.skin) ? arm.skin : []) {
			for (const s of Array.isArray(skin && skin.slot) ? skin.slot : []) {
				if (!s || s.name !== slot || !Array.isArray(s.display)) continue;
				const d = s.display.find((x) => x && x.name === name);
				if (d) return { display: d, armature: arm };
			}
		}
	}
	return null;
}

/*
 * One skeleton asset: 'file' its name, 'format' 'spine' or 'dragonbones',
 * 'data' the parsed skeleton JSON (read, never inserted), 'atlas'
 * {pages, regions} or null, 'pages' a Map page name -> {url, width,
 * height} of the page images that loaded. 'notes' collects what could not
 * be drawn as it is (shown as a title on the group).
 */
export class SkeletonAsset {
	constructor(file, format, data, atlas = null, pages = new Map()) {
		this.file = file;
		this.format = format;
		this.data = data;
		this.atlas = atlas;
		this.pages = pages;
		this.css = '';
		this.urls = [];
	}

	/* The names of the bones the skeleton's IK constraints aim at (Spine's
	 * "ik"; DragonBones' first armature's, the import's default): the
	 * viewer moves such a bone when its joint is dragged, and the server
	 * solves the constraint (docs/viewer-skeletons.md). */
	get ikTargets() {
		if (!this._ikTargets) {
			const d = this.data || {};
			const list = this.format === 'spine' ? d.ik : Array.isArray(d.armature) && d.armature[0] ? d.armature[0].ik : null;
			this._ikTargets = new Set((Array.isArray(list) ? list : [])
				.map((c) => c && c.target).filter((t) => typeof t === 'string'));
		}
		return this._ikTargets;
	}

	/* No definitions: every group is self-contained. */
	takeDefs() {
		return [];
	}

	/* The region named 'name' and its page, or null. */
	_region(name) {
		const r = this.atlas && this.atlas.regions.get(name);
		const page = r && this.pages.get(r.page.name);
		if (!r || !page) return null;
		const size = { url: page.url, width: r.page.width || page.width, height: r.page.height || page.height };
		return { r, page: size };
	}

	/* Why region 'name' is drawn as 'what' (text for a <title>). */
	_why(name, what) {
		if (!this.atlas) return `no atlas: ${what}`;
		const r = this.atlas.regions.get(name);
		if (!r) return `region '${name}' is not in the atlas: ${what}`;
		return `page '${r.page.name}' of region '${name}' did not load: ${what}`;
	}

	/*
	 * The group for layer GROUP 'group' (enc(slot).enc(attachment)):
	 * {element, inner: null, box}, or null when the skeleton has no such
	 * attachment. 'box' is [x0, y0, x1, y1], what the group draws in the
	 * slot's frame (getBBox() would count a region's whole page), or null
	 * when it draws nothing. 'boundIds' is unused (a slot's group holds no other's).
	 * A weighted mesh's answer has also 'deform(worldOf, slotWorld)': see
	 * WeightedMesh.deform; its box is what deform returns.
	 */
	cut(group) {
		const names = splitGroup(group);
		if (!names) return null;
		const g = el('g', { class: 'skel-attachment' });
		this._deform = null;
		const ok = this.format === 'spine' ? this._spine(g, names) : this._dragonBones(g, names);
		if (!ok) return null;
		// A weighted mesh draws nothing until its bones' worlds are known.
		if (this._deform) return { element: g, inner: null, box: null, deform: this._deform };
		return { element: g, inner: null, box: extent(g) };
	}

	_spine(g, { slot, attachment }) {
		const a = spineAttachment(this.data, slot, attachment);
		if (!a) return false;
		const type = a.type || 'region';
		const regionName = typeof a.path === 'string' ? a.path : attachment;
		const found = this._region(regionName);
		if (type === 'region') {
			const w = num(a.width, 32);
			const h = num(a.height, 32);
			// Spine is y up: translate(x, y) rotate(r) scale(sx, sy) there is,
			// seen through rigd's y-down frame, translate(x, -y) rotate(-r)
			// scale(sx, sy), and the image upright in (-w/2, -h/2, w, h).
			const t = el('g', { transform: `translate(${n(num(a.x))} ${n(-num(a.y))}) rotate(${n(-num(a.rotation))}) scale(${n(num(a.scaleX, 1))} ${n(num(a.scaleY, 1))})` });
			if (found) t.append(regionElement(found.r, found.page, -w / 2, -h / 2, w, h));
			else {
				t.append(outlineRect(-w / 2, -h / 2, w, h));
				titled(g, this._why(regionName, 'outline'));
			}
			g.append(t);
			return true;
		}
		if (type === 'point') {
			g.append(el('circle', { class: 'skel-outline', cx: n(num(a.x)), cy: n(-num(a.y)), r: 2, fill: 'none', stroke: OUTLINE, 'vector-effect': 'non-scaling-stroke' }));
			titled(g, 'point attachment');
			return true;
		}
		// mesh, linkedmesh, clipping, path, boundingbox: the bounding box of
		// unweighted vertices (a mesh has one vertex per uv pair; the others
		// give vertexCount).
		const count = type === 'mesh' && Array.isArray(a.uvs) ? a.uvs.length / 2 : num(a.vertexCount);
		if (type === 'mesh' && Array.isArray(a.vertices) && a.vertices.length !== count * 2) {
			const bones = Array.isArray(this.data.bones) ? this.data.bones : [];
			return this._weighted(g, spineInfluences(a.vertices, count, bones), a.uvs, a.triangles, regionName, true, 'Spine mesh');
		}
		const box = vertexBox(a.vertices, count, true);
		if (!box) {
			titled(g, `${type} attachment with weighted vertices: not drawn`);
			return true;
		}
		const [x0, y0, x1, y1] = box;
		if (type === 'mesh' && found) {
			g.append(regionElement(found.r, found.page, x0, y0, x1 - x0, y1 - y0));
			titled(g, 'mesh drawn as its region\u2019s bounding quad');
		} else {
			g.append(outlineRect(x0, y0, x1 - x0, y1 - y0));
			titled(g, `${type} attachment: outline of its bounding box`);
		}
		return true;
	}

	_dragonBones(g, { slot, attachment }) {
		const where = dragonBonesDisplay(this.data, slot, attachment, this.file);
		if (!where) return false;
		const d = where.display;
		const type = d.type || 'image';
		if (type === 'mesh' && d.weights) {
			const bones = Array.isArray(where.armature.bone) ? where.armature.bone : [];
			const influences = dragonBonesInfluences(d, bones);
			const regionName = typeof d.path === 'string' ? d.path : attachment;
			return this._weighted(g, influences, d.uvs, d.triangles, regionName, false, 'DragonBones mesh display');
		}
		const t = d.transform || {};
		const rad = Math.PI / 180;
		const skX = num(t.skX) * rad;
		const skY = num(t.skY) * rad;
		const scX = num(t.scX, 1);
		const scY = num(t.scY, 1);
		const m = el('g', { transform: matrix(Math.cos(skY) * scX, Math.sin(skY) * scX, -Math.sin(skX) * scY, Math.cos(skX) * scY, num(t.x), num(t.y)) });
		g.append(m);
		const regionName = typeof d.path === 'string' ? d.path : attachment;
		const found = this._region(regionName);
		if (type === 'image') {
			const px = num(d.pivot && d.pivot.x, 0.5);
			const py = num(d.pivot && d.pivot.y, 0.5);
			if (found) {
				const { r } = found;
				m.append(regionElement(r, found.page, -r.origW * px, -r.origH * py, r.origW, r.origH));
			} else {
				// A DragonBones image display carries no size of its own.
				m.append(outlineRect(-MARK * px, -MARK * py, MARK, MARK));
				titled(g, this._why(regionName, 'marker at the pivot'));
			}
			return true;
		}
		const box = type === 'mesh' && !d.weights ? vertexBox(d.vertices, Array.isArray(d.vertices) ? d.vertices.length / 2 : 0, false) : null;
		if (!box) {
			m.append(outlineRect(-MARK / 2, -MARK / 2, MARK, MARK));
			titled(g, `${type} display: marker`);
			return true;
		}
		const [x0, y0, x1, y1] = box;
		if (found) {
			m.append(regionElement(found.r, found.page, x0, y0, x1 - x0, y1 - y0));
			titled(g, 'mesh drawn as its texture\u2019s bounding quad');
		} else m.append(outlineRect(x0, y0, x1 - x0, y1 - y0));
		return true;
	}

	/*
	 * A weighted mesh into 'g': its triangles textured from region
	 * 'regionName' ('original': uvs span the region's original image, as
	 * Spine's do; else the stored region, as DragonBones'), or outlined
	 * without one; 'influences' null when the vertices do not parse.
	 * Sets this._deform for cut() to hand out.
	 */
	_weighted(g, influences, uvs, triangles, regionName, original, what) {
		const count = influences ? influences.length : 0;
		const tris = Array.isArray(triangles) ? triangles.map((i) => Math.trunc(num(i, -1))) : [];
		const uv = Array.isArray(uvs) ? uvs.map((v) => num(v)) : [];
		if (!count || uv.length !== count * 2 || !tris.length || tris.length % 3 || tris.some((i) => i < 0 || i >= count)) {
			titled(g, `${what} with weighted vertices that do not read (vertices, uvs, triangles): not drawn`);
			return true;
		}
		const found = this._region(regionName);
		const mesh = new WeightedMesh(influences, uv, tris, found, original);
		g.append(mesh.element);
		titled(g, found ? `${what}: weighted, deformed by its bones, ${tris.length / 3} triangles` : this._why(regionName, 'outline of its triangles, deformed by its bones'));
		this._deform = (worldOf, slotWorld) => mesh.deform(worldOf, slotWorld);
		return true;
	}

	/* Releases the pages' blob URLs. */
	dispose() {
		for (const url of this.urls) URL.revokeObjectURL(url);
		this.urls = [];
	}
}

/* 'spine', 'dragonbones' or null for a parsed JSON asset. */
export function skeletonFormat(data) {
	if (!data || typeof data !== 'object') return null;
	if (data.skeleton && typeof data.skeleton === 'object' && typeof data.skeleton.spine === 'string') return 'spine';
	if (Array.isArray(data.armature)) return 'dragonbones';
	return null;
}

/* A page image as {url, width, height}, with its alpha un-premultiplied
 * when 'pma' (once, on a canvas, into a new blob: URL). 'blob' is the PNG. */
export async function pageImage(blob, pma, urls) {
	let url = URL.createObjectURL(blob);
	urls.push(url);
	const img = new Image();
	img.src = url;
	await img.decode();
	const width = img.naturalWidth;
	const height = img.naturalHeight;
	if (pma && width && height) {
		const canvas = document.createElement('canvas');
		canvas.width = width;
		canvas.height = height;
		const ctx = canvas.getContext('2d', { willReadFrequently: true });
		ctx.drawImage(img, 0, 0);
		const pixels = ctx.getImageData(0, 0, width, height);
		const p = pixels.data;
		for (let i = 0; i < p.length; i += 4) {
			const a = p[i + 3];
			if (a && a < 255) {
				p[i] = Math.min(255, Math.round((p[i] * 255) / a));
				p[i + 1] = Math.min(255, Math.round((p[i + 1] * 255) / a));
				p[i + 2] = Math.min(255, Math.round((p[i + 2] * 255) / a));
			}
		}
		ctx.putImageData(pixels, 0, 0);
		const straight = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
		if (straight) {
			url = URL.createObjectURL(straight);
			urls.push(url);
			const check = new Image();
			check.src = url;
			await check.decode();
		}
	}
	return { url, width, height };
}

/*
 * Builds the SkeletonAsset of skeleton asset 'file' (its parsed JSON
 * 'data'). 'fetchAsset(name)' answers a Response, or null when the scene
 * has no asset of that name (the atlas is optional; so, for drawing, is
 * each page). Rejects with an Error when 'data' is no skeleton or the
 * atlas cannot be read; a page that fails to load leaves its regions
 * drawn as outlines.
 */
export async function loadSkeleton(file, data, fetchAsset) {
	const format = skeletonFormat(data);
	if (!format) throw new Error('the JSON is neither a Spine skeleton (skeleton.spine) nor a DragonBones one (armature)');
	const atlasFile = format === 'spine' ? `${file}.atlas` : `${file}.tex.json`;
	const res = await fetchAsset(atlasFile);
	const asset = new SkeletonAsset(file, format, data);
	if (!res) return asset;
	try {
		asset.atlas = format === 'spine' ? parseSpineAtlas(await res.text()) : parseDragonBonesAtlas(await res.json());
	} catch (err) {
		throw new Error(`${atlasFile}: ${err.message}`);
	}
	for (const page of asset.atlas.pages) {
		if (!page.name) continue;
		try {
			const pr = await fetchAsset(page.name);
			if (!pr) continue;
			const type = pr.headers.get('Content-Type') || '';
			if (!/^image\/png\b/i.test(type)) continue;
			asset.pages.set(page.name, await pageImage(await pr.blob(), page.pma, asset.urls));
		} catch {
			/* the page's regions are drawn as outlines */
		}
	}
	return asset;
}
