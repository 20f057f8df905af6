/*
 * batches.js: the GPU buffers that draw many nodes at once, for NodeLayer
 * (drawables.js): InstanceBatch (one InstancedMesh of a shape, one instance
 * a node), BakedBatch (every node's shape merged into one buffer, drawn as
 * dots below a projected size) and GlyphBatch (line glyphs: axes, camera
 * frusta). Each uploads only the slots written since its last upload. They
 * know buffers, slots and matrices, never nodes, ids or the server.
 */
import * as THREE from 'three';

/*
 * Bounds for the merged and instanced buffers: a sphere that contains
 * everything. These objects are never frustum-culled; three.js still reads
 * a bounding sphere to sort objects and to reject rays early, and would
 * otherwise recompute it over every vertex or instance after each update
 * (a tenth of a second a frame at ten thousand nodes).
 */
export function everywhere() {
	return new THREE.Sphere(new THREE.Vector3(), Infinity);
}

/*
 * The slots of a buffer written since its last upload, as one range
 * (first..last), so that an upload sends only that part: a flash or an
 * edit then costs what it changed, and a frame that changed nothing
 * uploads nothing.
 */
class DirtySlots {
	constructor() {
		this.first = Infinity;
		this.last = -1;
	}

	mark(slot) {
		if (slot < this.first) this.first = slot;
		if (slot > this.last) this.last = slot;
	}

	everything() {
		this.first = 0;
		this.last = Infinity;
	}

	/* Hands the range to 'attr' ('per' numbers a slot) for its next upload,
	 * and starts a new one. */
	flush(attr, per, count) {
		const last = Math.min(this.last, count - 1);
		if (last >= this.first) {
			attr.clearUpdateRanges();
			if (this.last !== Infinity) attr.addUpdateRange(this.first * per, (last - this.first + 1) * per);
			attr.needsUpdate = true;
		}
		this.first = Infinity;
		this.last = -1;
	}
}

/*
 * One InstancedMesh that grows as needed. Slots are kept dense (a removed
 * node's slot is filled with the last one), so 'count' is the node count.
 */
export class InstanceBatch {
	constructor(parent, geometry, material, capacity = 16) {
		this.parent = parent;
		this.geometry = geometry;
		this.material = material;
		this.ids = [];
		this.slots = new Map();
		this.mesh = null;
		this._grow(Math.max(16, capacity));
	}

	_grow(capacity) {
		const mesh = new THREE.InstancedMesh(this.geometry, this.material, capacity);
		mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
		mesh.setColorAt(0, new THREE.Color());
		mesh.instanceColor.setUsage(THREE.DynamicDrawUsage);
		mesh.frustumCulled = false;
		if (this.mesh) {
			mesh.instanceMatrix.array.set(this.mesh.instanceMatrix.array);
			mesh.instanceColor.array.set(this.mesh.instanceColor.array);
			this.parent.remove(this.mesh);
			this.mesh.dispose();
		}
		mesh.count = this.ids.length;
		this.capacity = capacity;
		this.mesh = mesh;
		this.parent.add(mesh);
		this._dirty = new DirtySlots();
		this._dirty.everything();
	}

	add(id) {
		if (this.ids.length === this.capacity) this._grow(this.capacity * 2);
		const slot = this.ids.length;
		this.ids.push(id);
		this.slots.set(id, slot);
		this.mesh.count = this.ids.length;
		return slot;
	}

	remove(id) {
		const slot = this.slots.get(id);
		if (slot === undefined) return;
		const last = this.ids.length - 1;
		if (slot !== last) {
			const moved = this.ids[last];
			this.ids[slot] = moved;
			this.slots.set(moved, slot);
			this.mesh.instanceMatrix.array.copyWithin(slot * 16, last * 16, last * 16 + 16);
			this.mesh.instanceColor.array.copyWithin(slot * 3, last * 3, last * 3 + 3);
			this._dirty.mark(slot);
		}
		this.ids.pop();
		this.slots.delete(id);
		this.mesh.count = this.ids.length;
		this.touch();
	}

	setMatrix(id, elements) {
		const slot = this.slots.get(id);
		this.mesh.instanceMatrix.array.set(elements, slot * 16);
		this._dirty.mark(slot);
	}

	setColour(id, colour) {
		const slot = this.slots.get(id);
		colour.toArray(this.mesh.instanceColor.array, slot * 3);
		this._dirty.mark(slot);
	}

	/* The node under a raycast hit on this batch's mesh. */
	idOfHit(hit) {
		return hit.instanceId !== undefined && hit.instanceId < this.ids.length ? this.ids[hit.instanceId] : null;
	}

	touch() {
		// Both attributes share the range: a slot written in one is usually
		// written in the other (a placed node gets its colour too).
		const range = this._dirty;
		const { first, last } = range;
		range.flush(this.mesh.instanceMatrix, 16, this.capacity);
		Object.assign(range, { first, last }).flush(this.mesh.instanceColor, 3, this.capacity);
		this.mesh.boundingSphere = everywhere();
		this.mesh.boundingBox = null;
	}

	dispose() {
		this.parent.remove(this.mesh);
		this.mesh.dispose();
	}
}

/* Draws the first 'count' entries of 'index' (the index buffer of
 * 'geometry') and uploads just those. */
function drawIndexRange(geometry, index, count) {
	geometry.setDrawRange(0, count);
	index.clearUpdateRanges();
	index.addUpdateRange(0, Math.max(count, 1));
	index.needsUpdate = true;
}

/*
 * For each of 'n' bounding spheres (centres, radii) inside 'frustum':
 * write(slot) when its projected diameter is at least 'minPx' pixels,
 * far(slot) when it is smaller ('pxPerUnit' turns a size at distance 1
 * into pixels; a sphere around the eye is always drawn).
 */
function cullAndSize(n, c, r, frustum, eye, pxPerUnit, minPx, write, far) {
	const planes = frustum.planes;
	for (let slot = 0; slot < n; slot++) {
		const x = c[slot * 3], y = c[slot * 3 + 1], z = c[slot * 3 + 2];
		const rad = r[slot];
		let inside = true;
		for (let p = 0; p < 6; p++) {
			const pl = planes[p];
			if (pl.normal.x * x + pl.normal.y * y + pl.normal.z * z + pl.constant < -rad) {
				inside = false;
				break;
			}
		}
		if (!inside) continue;
		const dx = x - eye.x, dy = y - eye.y, dz = z - eye.z;
		const dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
		if (dist > rad && (2 * rad * pxPerUnit) / dist < minPx) far(slot);
		else write(slot);
	}
}

/*
 * The same interface as InstanceBatch, for software rasterisers: every
 * node's copy of the shared geometry is transformed on the CPU into one
 * merged buffer drawn with a single non-instanced call. SwiftShader (the
 * headless browser's GL) pays about 25 microseconds per instance, so ten
 * thousand instances cost a quarter of a second a frame; the merged buffer
 * draws the same triangles several times faster (measured by
 * tests/web/bigscene.test.mjs). Only the nodes an update touched are
 * re-transformed.
 *
 * Before each frame lod() rewrites the index buffer with only the copies
 * that are in view and large enough on screen; the others are handed to
 * the layer's point cloud (a node a few pixels wide is drawn as a dot of
 * its colour). A rasteriser that works triangle by triangle then draws
 * what the eye can see, not ten thousand boxes of two pixels each.
 */
export class BakedBatch {
	constructor(parent, geometry, material, capacity = 64) {
		this.parent = parent;
		this.template = geometry.index ? geometry : geometry.toNonIndexed();
		if (!this.template.boundingSphere) this.template.computeBoundingSphere();
		this.templateRadius = this.template.boundingSphere.radius + this.template.boundingSphere.center.length();
		this.material = material;
		this.vertsPer = this.template.attributes.position.count;
		this.indexPer = this.template.index ? this.template.index.count : this.vertsPer;
		const tIndex = this.template.index ? this.template.index.array : null;
		this._pattern = Uint32Array.from({ length: this.indexPer }, (_, k) => (tIndex ? tIndex[k] : k));
		this.ids = [];
		this.slots = new Map();
		this.mesh = null;
		this._dirty = null;
		this.drawn = 0;
		this._grow(Math.max(64, capacity));
	}

	_grow(capacity) {
		const V = this.vertsPer;
		const geometry = new THREE.BufferGeometry();
		const attr = (size) => new THREE.BufferAttribute(new Float32Array(capacity * V * size), size).setUsage(THREE.DynamicDrawUsage);
		geometry.setAttribute('position', attr(3));
		geometry.setAttribute('normal', attr(3));
		geometry.setAttribute('color', attr(3));
		const uv = new Float32Array(capacity * V * 2);
		const tUv = this.template.attributes.uv;
		if (tUv) for (let slot = 0; slot < capacity; slot++) uv.set(tUv.array, slot * V * 2);
		geometry.setAttribute('uv', new THREE.BufferAttribute(uv, 2));
		geometry.setIndex(new THREE.BufferAttribute(new Uint32Array(capacity * this.indexPer), 1).setUsage(THREE.DynamicDrawUsage));
		const centres = new Float64Array(capacity * 3);
		const radii = new Float64Array(capacity);
		const dotColours = new Float32Array(capacity * 3);
		const mesh = new THREE.Mesh(geometry, this.material);
		mesh.frustumCulled = false;
		if (this.mesh) {
			for (const name of ['position', 'normal', 'color']) geometry.attributes[name].array.set(this.mesh.geometry.attributes[name].array);
			centres.set(this.centres);
			radii.set(this.radii);
			dotColours.set(this.dotColours);
			this.parent.remove(this.mesh);
			this.mesh.geometry.dispose();
		}
		this.centres = centres;
		this.radii = radii;
		this.dotColours = dotColours; // a slot's colour as a dot (3 per slot)
		this.drawnSlots = new Int32Array(capacity);
		this.capacity = capacity;
		this.mesh = mesh;
		this.parent.add(mesh);
		this._dirty = null;
		this._all = true;
		this._indexStale = true;
	}

	/* Index buffer with every copy, in slot order (no culling). */
	_writeAll() {
		const n = this.ids.length;
		this._writeIndex((write) => {
			for (let slot = 0; slot < n; slot++) write(slot);
		});
	}

	/* Rewrites the index buffer with the slots 'emit' passes to write(). */
	_writeIndex(emit) {
		const index = this.mesh.geometry.index;
		const out = index.array;
		const pattern = this._pattern;
		const per = this.indexPer;
		const V = this.vertsPer;
		let o = 0;
		let k = 0;
		emit((slot) => {
			const base = slot * V;
			for (let i = 0; i < per; i++) out[o + i] = base + pattern[i];
			o += per;
			this.drawnSlots[k++] = slot;
		});
		this.drawn = k;
		this._indexStale = false;
		drawIndexRange(this.mesh.geometry, index, o);
	}

	/*
	 * Keeps the copies inside 'frustum' whose projected diameter is at
	 * least 'minPx' pixels ('pxPerUnit' converts a size at distance 1 into
	 * pixels); calls far(slot) for those in view but smaller. Returns the
	 * number of copies drawn as triangles.
	 */
	lod(frustum, eye, pxPerUnit, minPx, far) {
		this._writeIndex((write) => cullAndSize(this.ids.length, this.centres, this.radii, frustum, eye, pxPerUnit, minPx, write, far));
		return this.drawn;
	}

	_mark(slot) {
		if (!this._dirty) this._dirty = [slot, slot];
		else this._dirty = [Math.min(this._dirty[0], slot), Math.max(this._dirty[1], slot)];
	}

	add(id) {
		if (this.ids.length === this.capacity) this._grow(this.capacity * 2);
		const slot = this.ids.length;
		this.ids.push(id);
		this.slots.set(id, slot);
		this._indexStale = true;
		return slot;
	}

	remove(id) {
		const slot = this.slots.get(id);
		if (slot === undefined) return;
		const last = this.ids.length - 1;
		const V = this.vertsPer;
		if (slot !== last) {
			const moved = this.ids[last];
			this.ids[slot] = moved;
			this.slots.set(moved, slot);
			for (const name of ['position', 'normal', 'color']) {
				this.mesh.geometry.attributes[name].array.copyWithin(slot * V * 3, last * V * 3, (last + 1) * V * 3);
			}
			this.centres.copyWithin(slot * 3, last * 3, last * 3 + 3);
			this.radii[slot] = this.radii[last];
			this.dotColours.copyWithin(slot * 3, last * 3, last * 3 + 3);
			this._mark(slot);
		}
		this.ids.pop();
		this.slots.delete(id);
		this._indexStale = true;
	}

	/* Writes the node's copy: template positions through 'm' (16 numbers,
	 * column-major), normals through its inverse transpose. */
	setMatrix(id, m) {
		const slot = this.slots.get(id);
		const V = this.vertsPer;
		const src = this.template.attributes.position.array;
		const nsrc = this.template.attributes.normal.array;
		const pos = this.mesh.geometry.attributes.position.array;
		const nor = this.mesh.geometry.attributes.normal.array;
		// Cofactors of the 3x3 part: the inverse transpose times det, which
		// is all a normal needs (it is normalised below).
		const a = m[0], b = m[1], c = m[2], d = m[4], e = m[5], f = m[6], g = m[8], h = m[9], i = m[10];
		const n00 = e * i - f * h, n01 = c * h - b * i, n02 = b * f - c * e;
		const n10 = f * g - d * i, n11 = a * i - c * g, n12 = c * d - a * f;
		const n20 = d * h - e * g, n21 = b * g - a * h, n22 = a * e - b * d;
		const det = a * n00 + d * n01 + g * n02;
		const sign = det < 0 ? -1 : 1;
		let o = slot * V * 3;
		for (let v = 0; v < V * 3; v += 3, o += 3) {
			const x = src[v], y = src[v + 1], z = src[v + 2];
			pos[o] = m[0] * x + m[4] * y + m[8] * z + m[12];
			pos[o + 1] = m[1] * x + m[5] * y + m[9] * z + m[13];
			pos[o + 2] = m[2] * x + m[6] * y + m[10] * z + m[14];
			const nx = nsrc[v], ny = nsrc[v + 1], nz = nsrc[v + 2];
			// The cofactor matrix (rows n0k, n1k, n2k) times n, signed so
			// that a mirror keeps it pointing outward.
			const wx = (n00 * nx + n01 * ny + n02 * nz) * sign;
			const wy = (n10 * nx + n11 * ny + n12 * nz) * sign;
			const wz = (n20 * nx + n21 * ny + n22 * nz) * sign;
			const len = Math.sqrt(wx * wx + wy * wy + wz * wz) || 1;
			nor[o] = wx / len;
			nor[o + 1] = wy / len;
			nor[o + 2] = wz / len;
		}
		this.centres[slot * 3] = m[12];
		this.centres[slot * 3 + 1] = m[13];
		this.centres[slot * 3 + 2] = m[14];
		const len2 = (k) => m[k] * m[k] + m[k + 1] * m[k + 1] + m[k + 2] * m[k + 2];
		this.radii[slot] = this.templateRadius * Math.sqrt(Math.max(len2(0), len2(4), len2(8)));
		this._mark(slot);
	}

	setColour(id, colour) {
		const slot = this.slots.get(id);
		const V = this.vertsPer;
		const col = this.mesh.geometry.attributes.color.array;
		for (let o = slot * V * 3, end = o + V * 3; o < end; o += 3) {
			col[o] = colour.r;
			col[o + 1] = colour.g;
			col[o + 2] = colour.b;
		}
		colour.toArray(this.dotColours, slot * 3);
		this._mark(slot);
	}

	touch() {
		const g = this.mesh.geometry;
		const V = this.vertsPer;
		for (const name of ['position', 'normal', 'color']) {
			const attr = g.attributes[name];
			attr.clearUpdateRanges();
			if (!this._all && this._dirty) attr.addUpdateRange(this._dirty[0] * V * 3, (this._dirty[1] - this._dirty[0] + 1) * V * 3);
			if (this._all || this._dirty) attr.needsUpdate = true;
		}
		if (this._all) g.attributes.uv.needsUpdate = true;
		if (this._indexStale) this._writeAll();
		this._dirty = null;
		this._all = false;
		g.boundingSphere = everywhere();
		g.boundingBox = null;
	}

	/* The node under a raycast hit on this batch's mesh. */
	idOfHit(hit) {
		const k = Math.floor((hit.faceIndex * 3) / this.indexPer);
		return k < this.drawn ? this.ids[this.drawnSlots[k]] : null;
	}

	dispose() {
		this.parent.remove(this.mesh);
		this.mesh.geometry.dispose();
	}
}

/*
 * Line glyphs of one kind (axes or camera), 'vertsPer' vertices per node,
 * in one LineSegments whose buffers grow as needed. The vertices are world
 * positions: the glyph's local points through the node's world matrix.
 * An index buffer says which glyphs are drawn: all of them, or (merged
 * mode) only those lod() finds in view and large enough on screen.
 */
export class GlyphBatch {
	constructor(parent, vertsPer, capacity = 16) {
		this.parent = parent;
		this.vertsPer = vertsPer;
		this.ids = [];
		this.slots = new Map();
		this.material = new THREE.LineBasicMaterial({ vertexColors: true, toneMapped: false });
		this.lines = null;
		this.drawn = 0;
		this._grow(Math.max(16, capacity));
	}

	/* Makes room for 'n' glyphs at once (a rebuild knows how many). */
	reserve(n) {
		if (n > this.capacity) this._grow(n);
	}

	_grow(capacity) {
		const geometry = new THREE.BufferGeometry();
		const pos = new THREE.BufferAttribute(new Float32Array(capacity * this.vertsPer * 3), 3).setUsage(THREE.DynamicDrawUsage);
		const col = new THREE.BufferAttribute(new Float32Array(capacity * this.vertsPer * 3), 3).setUsage(THREE.DynamicDrawUsage);
		geometry.setAttribute('position', pos);
		geometry.setAttribute('color', col);
		geometry.setIndex(new THREE.BufferAttribute(new Uint32Array(capacity * this.vertsPer), 1).setUsage(THREE.DynamicDrawUsage));
		const lines = new THREE.LineSegments(geometry, this.material);
		lines.frustumCulled = false;
		const centres = new Float64Array(capacity * 3);
		const radii = new Float64Array(capacity);
		const dotColours = new Float32Array(capacity * 3);
		if (this.lines) {
			pos.array.set(this.lines.geometry.attributes.position.array);
			col.array.set(this.lines.geometry.attributes.color.array);
			centres.set(this.centres);
			radii.set(this.radii);
			dotColours.set(this.dotColours);
			this.parent.remove(this.lines);
			this.lines.geometry.dispose();
		}
		this.centres = centres;
		this.radii = radii;
		this.dotColours = dotColours; // a glyph's colour as a dot: its vertices' mean
		this.drawnSlots = new Int32Array(capacity);
		this.capacity = capacity;
		this.lines = lines;
		this._indexStale = true;
		this._dirty = new DirtySlots();
		this._dirty.everything();
		this.parent.add(lines);
	}

	add(id) {
		if (this.ids.length === this.capacity) this._grow(this.capacity * 2);
		const slot = this.ids.length;
		this.ids.push(id);
		this.slots.set(id, slot);
		this._indexStale = true;
		return slot;
	}

	remove(id) {
		const slot = this.slots.get(id);
		if (slot === undefined) return;
		const last = this.ids.length - 1;
		const n = this.vertsPer * 3;
		if (slot !== last) {
			const moved = this.ids[last];
			this.ids[slot] = moved;
			this.slots.set(moved, slot);
			for (const name of ['position', 'color']) {
				this.lines.geometry.attributes[name].array.copyWithin(slot * n, last * n, last * n + n);
			}
			this._dirty.mark(slot);
			this.centres.copyWithin(slot * 3, last * 3, last * 3 + 3);
			this.radii[slot] = this.radii[last];
			this.dotColours.copyWithin(slot * 3, last * 3, last * 3 + 3);
		}
		this.ids.pop();
		this.slots.delete(id);
		this._indexStale = true;
		this.touch();
	}

	/* Writes the glyph's local points (flat [x,y,z,...]) through world 'm'. */
	setPoints(id, m, local) {
		const out = this.lines.geometry.attributes.position.array;
		const slot = this.slots.get(id);
		this._dirty.mark(slot);
		let o = slot * this.vertsPer * 3;
		let reach = 0;
		for (let i = 0; i < local.length; i += 3) {
			const [x, y, z] = [local[i], local[i + 1], local[i + 2]];
			out[o++] = m[0] * x + m[4] * y + m[8] * z + m[12];
			out[o++] = m[1] * x + m[5] * y + m[9] * z + m[13];
			out[o++] = m[2] * x + m[6] * y + m[10] * z + m[14];
			reach = Math.max(reach, Math.hypot(x, y, z));
		}
		// A sphere about the node's origin that holds the glyph.
		this.centres[slot * 3] = m[12];
		this.centres[slot * 3 + 1] = m[13];
		this.centres[slot * 3 + 2] = m[14];
		const len2 = (k) => m[k] * m[k] + m[k + 1] * m[k + 1] + m[k + 2] * m[k + 2];
		this.radii[slot] = reach * Math.sqrt(Math.max(len2(0), len2(4), len2(8)));
	}

	/* Per-vertex colours (flat [r,g,b,...]), each scaled by 'tint'. */
	setColours(id, colours, tint = null) {
		const out = this.lines.geometry.attributes.color.array;
		const slot = this.slots.get(id);
		this._dirty.mark(slot);
		const o = slot * this.vertsPer * 3;
		const mean = [0, 0, 0];
		for (let i = 0; i < colours.length; i++) {
			out[o + i] = tint ? colours[i] * (1 - tint.k) + tint.c[i % 3] * tint.k : colours[i];
			mean[i % 3] += out[o + i] / this.vertsPer;
		}
		this.dotColours.set(mean, slot * 3);
	}

	/* Rewrites the index buffer with the slots 'emit' passes to write(). */
	_writeIndex(emit) {
		const index = this.lines.geometry.index;
		const out = index.array;
		const V = this.vertsPer;
		let o = 0;
		let k = 0;
		emit((slot) => {
			for (let i = 0, base = slot * V; i < V; i++) out[o++] = base + i;
			this.drawnSlots[k++] = slot;
		});
		this.drawn = k;
		this._indexStale = false;
		drawIndexRange(this.lines.geometry, index, o);
	}

	/* Draws the glyphs in view whose projected diameter is at least
	 * 'minPx' pixels; calls far(slot) for the smaller ones in view (the
	 * same arguments as BakedBatch.lod). */
	lod(frustum, eye, pxPerUnit, minPx, far) {
		this._writeIndex((write) => cullAndSize(this.ids.length, this.centres, this.radii, frustum, eye, pxPerUnit, minPx, write, far));
		return this.drawn;
	}

	/* The node under a raycast hit on the lines ('index' is the hit's
	 * position in the index buffer). */
	idOfHit(hit) {
		const k = Math.floor(hit.index / this.vertsPer);
		return k < this.drawn ? this.ids[this.drawnSlots[k]] : null;
	}

	touch() {
		const range = this._dirty;
		const { first, last } = range;
		const per = this.vertsPer * 3;
		range.flush(this.lines.geometry.attributes.position, per, this.capacity);
		Object.assign(range, { first, last }).flush(this.lines.geometry.attributes.color, per, this.capacity);
		this.lines.geometry.boundingSphere = everywhere();
		if (this._indexStale) this._writeIndex((write) => {
			for (let slot = 0; slot < this.ids.length; slot++) write(slot);
		});
	}

	dispose() {
		this.parent.remove(this.lines);
		this.lines.geometry.dispose();
		this.material.dispose();
	}
}
