/*
 * drawables.js: how each node is drawn, from the world matrix the server sent.
 *
 * Every node has an Object3D (NodeLayer.objects) whose matrixWorld holds the
 * server's 16 numbers exactly, with matrixAutoUpdate and
 * matrixWorldAutoUpdate off: three.js never recomposes it. What is drawn:
 *   - a node with bounds: a box of its own colour; all boxes are one
 *     InstancedMesh (one draw call however many nodes);
 *   - a node with a mesh reference: that mesh, shared by every node naming
 *     it (one InstancedMesh per reference, seed section 12);
 *   - a camera node: a small frustum glyph; any other empty node: an axes
 *     gizmo (all glyphs of a kind are one LineSegments).
 * Nodes whose world determinant is negative (mirrored) go to a twin batch
 * whose geometry has every triangle's winding reversed, so the outside of a
 * mirrored box still faces the camera and lights correctly.
 */
import * as THREE from 'three';
import { det3, multiply } from './mat.js';
import { colourFor } from './util.js';

const AXES_LENGTH = 0.2;          // node units
const MIN_BOX_EXTENT = 1e-4;      // a flat box still draws as a thin slab
const MESH_DEFAULT_SIZE = 0.25;   // a mesh node without bounds
const FLASH_MS = 700;
const FLASH_COLOUR = new THREE.Color(1, 0.93, 0.55);

/* The matrix that maps the unit cube [-0.5, 0.5]^3 onto a local box. */
function boxOffset(bounds) {
	const size = [0, 1, 2].map((i) => Math.max(bounds.max[i] - bounds.min[i], MIN_BOX_EXTENT));
	const centre = [0, 1, 2].map((i) => (bounds.max[i] + bounds.min[i]) / 2);
	return [size[0], 0, 0, 0, 0, size[1], 0, 0, 0, 0, size[2], 0, centre[0], centre[1], centre[2], 1];
}

function uniformOffset(size) {
	return [size, 0, 0, 0, 0, size, 0, 0, 0, 0, size, 0, 0, 0, 0, 1];
}

/* A copy of 'geometry' with every triangle's vertex order reversed. */
function flipWinding(geometry) {
	const flipped = geometry.index ? geometry.clone() : geometry.toNonIndexed();
	if (flipped.index) {
		const idx = flipped.index.array;
		for (let i = 0; i < idx.length; i += 3) [idx[i + 1], idx[i + 2]] = [idx[i + 2], idx[i + 1]];
	} else {
		for (const attr of Object.values(flipped.attributes)) {
			const n = attr.itemSize;
			const a = attr.array;
			for (let v = 0; v < attr.count; v += 3) {
				for (let k = 0; k < n; k++) {
					const tmp = a[(v + 1) * n + k];
					a[(v + 1) * n + k] = a[(v + 2) * n + k];
					a[(v + 2) * n + k] = tmp;
				}
			}
		}
	}
	return flipped;
}

/* Fits a geometry into the unit cube [-0.5, 0.5]^3 (keeping proportions). */
function normalise(geometry) {
	geometry.computeBoundingBox();
	const box = geometry.boundingBox;
	const size = new THREE.Vector3();
	const centre = new THREE.Vector3();
	box.getSize(size);
	box.getCenter(centre);
	geometry.translate(-centre.x, -centre.y, -centre.z);
	const k = 1 / Math.max(size.x, size.y, size.z);
	geometry.scale(k, k, k);
	geometry.computeBoundingSphere();
	return geometry;
}

/*
 * A stand-in shape for a mesh reference. rigd stores the reference, not
 * the mesh, so the viewer draws a recognisable primitive per name: words in
 * the name pick a shape, otherwise the name's hash does, so every node that
 * names the same mesh shows the same shape.
 */
function meshGeometryFor(name) {
	const lower = name.toLowerCase();
	const shapes = [
		[/sphere|ball|head|eye|joint/, () => new THREE.SphereGeometry(0.5, 24, 16)],
		[/wheel|tyre|tire|disc/, () => new THREE.CylinderGeometry(0.5, 0.5, 0.3, 32).rotateX(Math.PI / 2)],
		[/cyl|bone|limb|finger|pipe/, () => new THREE.CylinderGeometry(0.3, 0.3, 1, 20)],
		[/cone|tip|nose/, () => new THREE.ConeGeometry(0.5, 1, 24)],
		[/torus|ring/, () => new THREE.TorusGeometry(0.4, 0.12, 12, 32)],
		[/capsule|pill/, () => new THREE.CapsuleGeometry(0.25, 0.5, 6, 16)],
	];
	for (const [re, make] of shapes) if (re.test(lower)) return normalise(make());
	const fallback = [
		() => new THREE.OctahedronGeometry(0.5),
		() => new THREE.DodecahedronGeometry(0.5),
		() => new THREE.CylinderGeometry(0.35, 0.35, 1, 20),
		() => new THREE.IcosahedronGeometry(0.5, 1),
		() => new THREE.ConeGeometry(0.5, 1, 20),
	];
	let h = 0;
	for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
	return normalise(fallback[h % fallback.length]());
}

/* A standard material whose box faces get a thin dark outline at the face
 * edges (from the box's per-face UVs), so boxes read as boxes without a
 * second draw call for their edges. */
function boxMaterial() {
	const material = new THREE.MeshStandardMaterial({ roughness: 0.75, metalness: 0.0 });
	material.onBeforeCompile = (shader) => {
		shader.vertexShader = shader.vertexShader
			.replace('#include <common>', '#include <common>\nvarying vec2 vEdgeUv;')
			.replace('#include <begin_vertex>', '#include <begin_vertex>\nvEdgeUv = uv;');
		shader.fragmentShader = shader.fragmentShader
			.replace('#include <common>', '#include <common>\nvarying vec2 vEdgeUv;')
			.replace(
				'#include <color_fragment>',
				`#include <color_fragment>
				{
					vec2 d2 = min(vEdgeUv, 1.0 - vEdgeUv);
					float d = min(d2.x, d2.y);
					float w = max(fwidth(d), 1e-5);
					float edge = 1.0 - smoothstep(0.5 * w, 1.8 * w, d);
					diffuseColor.rgb *= mix(1.0, 0.35, edge);
				}`,
			);
	};
	material.customProgramCacheKey = () => 'rigd-box-edges';
	return material;
}

/*
 * One InstancedMesh that grows as needed. Slots are kept dense (a removed
 * node's slot is filled with the last one), so 'count' is the node count.
 */
class InstanceBatch {
	constructor(parent, geometry, material) {
		this.parent = parent;
		this.geometry = geometry;
		this.material = material;
		this.ids = [];
		this.slots = new Map();
		this.mesh = null;
		this._grow(16);
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
		}
		this.ids.pop();
		this.slots.delete(id);
		this.mesh.count = this.ids.length;
		this.touch();
	}

	setMatrix(id, elements) {
		this.mesh.instanceMatrix.array.set(elements, this.slots.get(id) * 16);
	}

	setColour(id, colour) {
		colour.toArray(this.mesh.instanceColor.array, this.slots.get(id) * 3);
	}

	touch() {
		this.mesh.instanceMatrix.needsUpdate = true;
		this.mesh.instanceColor.needsUpdate = true;
		this.mesh.boundingSphere = null;
		this.mesh.boundingBox = null;
	}

	dispose() {
		this.parent.remove(this.mesh);
		this.mesh.dispose();
	}
}

/*
 * Line glyphs of one kind (axes or camera), 'vertsPer' vertices per node,
 * in one LineSegments whose buffers grow as needed. The vertices are world
 * positions: the glyph's local points through the node's world matrix.
 */
class GlyphBatch {
	constructor(parent, vertsPer) {
		this.parent = parent;
		this.vertsPer = vertsPer;
		this.ids = [];
		this.slots = new Map();
		this.material = new THREE.LineBasicMaterial({ vertexColors: true, toneMapped: false });
		this.lines = null;
		this._grow(16);
	}

	_grow(capacity) {
		const geometry = new THREE.BufferGeometry();
		const pos = new THREE.BufferAttribute(new Float32Array(capacity * this.vertsPer * 3), 3).setUsage(THREE.DynamicDrawUsage);
		const col = new THREE.BufferAttribute(new Float32Array(capacity * this.vertsPer * 3), 3).setUsage(THREE.DynamicDrawUsage);
		geometry.setAttribute('position', pos);
		geometry.setAttribute('color', col);
		const lines = new THREE.LineSegments(geometry, this.material);
		lines.frustumCulled = false;
		if (this.lines) {
			pos.array.set(this.lines.geometry.attributes.position.array);
			col.array.set(this.lines.geometry.attributes.color.array);
			this.parent.remove(this.lines);
			this.lines.geometry.dispose();
		}
		this.capacity = capacity;
		this.lines = lines;
		this._range();
		this.parent.add(lines);
	}

	_range() {
		this.lines.geometry.setDrawRange(0, this.ids.length * this.vertsPer);
	}

	add(id) {
		if (this.ids.length === this.capacity) this._grow(this.capacity * 2);
		const slot = this.ids.length;
		this.ids.push(id);
		this.slots.set(id, slot);
		this._range();
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
		}
		this.ids.pop();
		this.slots.delete(id);
		this._range();
		this.touch();
	}

	/* Writes the glyph's local points (flat [x,y,z,...]) through world 'm'. */
	setPoints(id, m, local) {
		const out = this.lines.geometry.attributes.position.array;
		let o = this.slots.get(id) * this.vertsPer * 3;
		for (let i = 0; i < local.length; i += 3) {
			const [x, y, z] = [local[i], local[i + 1], local[i + 2]];
			out[o++] = m[0] * x + m[4] * y + m[8] * z + m[12];
			out[o++] = m[1] * x + m[5] * y + m[9] * z + m[13];
			out[o++] = m[2] * x + m[6] * y + m[10] * z + m[14];
		}
	}

	/* Per-vertex colours (flat [r,g,b,...]), each scaled by 'tint'. */
	setColours(id, colours, tint = null) {
		const out = this.lines.geometry.attributes.color.array;
		const o = this.slots.get(id) * this.vertsPer * 3;
		for (let i = 0; i < colours.length; i++) {
			out[o + i] = tint ? colours[i] * (1 - tint.k) + tint.c[i % 3] * tint.k : colours[i];
		}
	}

	touch() {
		this.lines.geometry.attributes.position.needsUpdate = true;
		this.lines.geometry.attributes.color.needsUpdate = true;
		this.lines.geometry.boundingSphere = null;
	}

	dispose() {
		this.parent.remove(this.lines);
		this.lines.geometry.dispose();
		this.material.dispose();
	}
}

const AXES_POINTS = [0, 0, 0, AXES_LENGTH, 0, 0, 0, 0, 0, 0, AXES_LENGTH, 0, 0, 0, 0, 0, 0, AXES_LENGTH];
const AXES_COLOURS = [0.95, 0.3, 0.3, 0.95, 0.3, 0.3, 0.35, 0.85, 0.35, 0.35, 0.85, 0.35, 0.35, 0.55, 1, 0.35, 0.55, 1];

/* A camera glyph: apex at the origin, looking down -z, 'fov' vertical. */
function cameraPoints(fovDeg) {
	const d = 0.25;
	const h = d * Math.tan((Math.min(Math.max(fovDeg, 1), 170) * Math.PI) / 360);
	const w = h * 1.5;
	const c = [
		[-w, -h, -d],
		[w, -h, -d],
		[w, h, -d],
		[-w, h, -d],
	];
	const pts = [];
	for (const p of c) pts.push(0, 0, 0, ...p);
	for (let i = 0; i < 4; i++) pts.push(...c[i], ...c[(i + 1) % 4]);
	// The "up" triangle above the frame, as three.js's CameraHelper draws it.
	const up = [[-w * 0.6, h * 1.1, -d], [w * 0.6, h * 1.1, -d], [0, h * 1.8, -d]];
	for (let i = 0; i < 3; i++) pts.push(...up[i], ...up[(i + 1) % 3]);
	return pts;
}
const CAMERA_VERTS = 22;

/*
 * All the nodes of one model, drawn. rebuild() starts over from a model;
 * update() applies what one update message changed.
 */
export class NodeLayer {
	constructor() {
		this.group = new THREE.Group();
		this.group.name = 'rigd-nodes';
		this.objects = new Map();
		this._state = new Map();
		this._batches = new Map();
		this._glyphs = {
			axes: new GlyphBatch(this.group, 6),
			camera: new GlyphBatch(this.group, CAMERA_VERTS),
		};
		this._geometries = new Map();
		this._boxMaterial = boxMaterial();
		this._meshMaterial = new THREE.MeshStandardMaterial({ roughness: 0.55, metalness: 0.05 });
		this._flashing = new Map();
		this._colour = new THREE.Color();
		this._highlight = new Set();
		this.model = null;
	}

	/* Drops everything and draws every node of 'model'. */
	rebuild(model) {
		for (const id of [...this._state.keys()]) this._removeNode(id);
		this.objects.clear();
		this._flashing.clear();
		this.model = model;
		for (const id of model.order()) this._placeNode(model.get(id));
		this._touchAll();
	}

	/* Applies an update's changes (see SceneModel.applyUpdate). */
	update(info) {
		for (const id of info.removed) {
			this._removeNode(id);
			this.objects.delete(id);
			this._flashing.delete(id);
		}
		const touched = new Set([...info.changed, ...info.world]);
		for (const id of touched) {
			const node = this.model.get(id);
			if (node) this._placeNode(node);
		}
		this._touchAll();
	}

	/* Starts the brief flash of nodes whose world matrix was recomputed. */
	flash(ids, now) {
		for (const id of ids) if (this._state.has(id)) this._flashing.set(id, now);
	}

	/* Advances the flashes to time 'now'; true while any is still running. */
	animate(now) {
		if (!this._flashing.size) return false;
		for (const [id, start] of this._flashing) {
			const k = 1 - (now - start) / FLASH_MS;
			if (k <= 0) this._flashing.delete(id);
			this._paint(id, Math.max(0, k));
		}
		this._touchAll();
		return this._flashing.size > 0;
	}

	/* The node id under a raycaster, or null. */
	pick(raycaster) {
		const targets = [...this._batches.values()].map((b) => b.mesh);
		for (const g of Object.values(this._glyphs)) targets.push(g.lines);
		const hits = raycaster.intersectObjects(targets, false);
		for (const hit of hits) {
			if (hit.instanceId !== undefined) {
				const batch = [...this._batches.values()].find((b) => b.mesh === hit.object);
				if (batch && hit.instanceId < batch.ids.length) return batch.ids[hit.instanceId];
			} else {
				const glyph = Object.values(this._glyphs).find((g) => g.lines === hit.object);
				if (glyph) {
					const slot = Math.floor(hit.index / glyph.vertsPer);
					if (slot < glyph.ids.length) return glyph.ids[slot];
				}
			}
		}
		return null;
	}

	/* The matrix from the unit cube to what is drawn for a node, in the
	 * node's frame (null when the node has no solid shape). */
	shapeOffset(node) {
		if (node.mesh) return node.bounds ? boxOffset(node.bounds) : uniformOffset(MESH_DEFAULT_SIZE);
		if (node.bounds) return boxOffset(node.bounds);
		return null;
	}

	dispose() {
		for (const batch of this._batches.values()) batch.dispose();
		this._batches.clear();
		for (const g of Object.values(this._glyphs)) g.dispose();
		for (const [geometry, flipped] of this._geometries.values()) {
			geometry.dispose();
			flipped.dispose();
		}
		this._geometries.clear();
		this._boxMaterial.dispose();
		this._meshMaterial.dispose();
		this.objects.clear();
		this._state.clear();
	}

	/* --- internals --- */

	_object(node) {
		let obj = this.objects.get(node.id);
		if (!obj) {
			obj = new THREE.Object3D();
			obj.name = node.id;
			obj.matrixAutoUpdate = false;
			obj.matrixWorldAutoUpdate = false;
			obj.userData.id = node.id;
			this.objects.set(node.id, obj);
		}
		// The server's numbers, as they are: no composition, no rounding.
		if (node.world) obj.matrixWorld.fromArray(node.world);
		obj.matrix.copy(obj.matrixWorld);
		return obj;
	}

	_batch(key) {
		let batch = this._batches.get(key);
		if (batch) return batch;
		const [kind, name, mirrored] = key.split('|');
		// A mesh called "box" or "cube" is the unit box itself (the demo rig's
		// parts are), drawn like bounds boxes, edges and all.
		const isBox = kind === 'box' || /^(box|cube)$/i.test(name);
		let geoms = this._geometries.get(kind + '|' + name);
		if (!geoms) {
			const geometry = isBox ? new THREE.BoxGeometry(1, 1, 1) : meshGeometryFor(name);
			geoms = [geometry, flipWinding(geometry)];
			this._geometries.set(kind + '|' + name, geoms);
		}
		const material = isBox ? this._boxMaterial : this._meshMaterial;
		batch = new InstanceBatch(this.group, geoms[mirrored === 'm' ? 1 : 0], material);
		batch.mesh.name = `rigd-${kind}${name ? '-' + name : ''}${mirrored === 'm' ? '-mirrored' : ''}`;
		this._batches.set(key, batch);
		return batch;
	}

	_placeNode(node) {
		const obj = this._object(node);
		const m = obj.matrixWorld.elements;
		const prev = this._state.get(node.id);
		const offset = node.visible ? this.shapeOffset(node) : null;
		const mirrored = det3(m) < 0;
		const batchKey = offset ? `${node.mesh ? 'mesh' : 'box'}|${node.mesh || ''}|${mirrored ? 'm' : ''}` : null;
		const glyphKey = !node.visible ? null : node.kind === 'camera' ? 'camera' : offset ? null : 'axes';

		if (prev && prev.batchKey !== batchKey && prev.batchKey) this._batches.get(prev.batchKey).remove(node.id);
		if (prev && prev.glyphKey !== glyphKey && prev.glyphKey) this._glyphs[prev.glyphKey].remove(node.id);

		const state = { batchKey, glyphKey, offset, colour: colourFor(node.id).rgb, fov: node.camera.fov };
		this._state.set(node.id, state);
		if (batchKey) {
			const batch = this._batch(batchKey);
			if (!batch.slots.has(node.id)) batch.add(node.id);
			batch.setMatrix(node.id, multiply(m, offset));
		}
		if (glyphKey) {
			const glyph = this._glyphs[glyphKey];
			if (!glyph.slots.has(node.id)) glyph.add(node.id);
			glyph.setPoints(node.id, m, glyphKey === 'axes' ? AXES_POINTS : cameraPoints(node.camera.fov));
		}
		this._paint(node.id, this._flashing.has(node.id) ? 1 : 0);
	}

	/* Writes a node's colour, mixed towards the flash colour by 'k'. */
	_paint(id, k) {
		const state = this._state.get(id);
		if (!state) return;
		if (state.batchKey) {
			this._colour.setRGB(...state.colour, THREE.SRGBColorSpace).lerp(FLASH_COLOUR, k);
			this._batches.get(state.batchKey).setColour(id, this._colour);
		}
		if (state.glyphKey === 'axes') {
			this._glyphs.axes.setColours(id, AXES_COLOURS, k > 0 ? { k, c: FLASH_COLOUR.toArray() } : null);
		} else if (state.glyphKey === 'camera') {
			const c = [0.85, 0.85, 0.95];
			const colours = [];
			for (let i = 0; i < CAMERA_VERTS; i++) colours.push(...c);
			this._glyphs.camera.setColours(id, colours, k > 0 ? { k, c: FLASH_COLOUR.toArray() } : null);
		}
	}

	_removeNode(id) {
		const state = this._state.get(id);
		if (!state) return;
		if (state.batchKey) this._batches.get(state.batchKey).remove(id);
		if (state.glyphKey) this._glyphs[state.glyphKey].remove(id);
		this._state.delete(id);
	}

	_touchAll() {
		for (const batch of this._batches.values()) batch.touch();
		for (const g of Object.values(this._glyphs)) g.touch();
	}
}
