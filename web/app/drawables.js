/*
 * drawables.js: how each node is drawn, from the world matrix the server sent.
 *
 * Every node has an Object3D (NodeLayer.objects) whose matrixWorld holds the
 * server's 16 numbers exactly, with matrixAutoUpdate and
 * matrixWorldAutoUpdate off: three.js never recomposes it. What is drawn:
 *   - a node with bounds: a box of its own colour; all boxes are one
 *     InstancedMesh (one draw call however many nodes);
 *   - a node with a mesh reference: that mesh, shared by every node naming
 *     it (one InstancedMesh per reference: one mesh, many placements);
 *   - a camera node: a small frustum glyph; any other empty node: an axes
 *     gizmo (all glyphs of a kind are one LineSegments).
 * Nodes whose world determinant is negative (mirrored) go to a twin batch
 * whose geometry has every triangle's winding reversed, so the outside of a
 * mirrored box still faces the camera and lights correctly.
 */
import * as THREE from 'three';
import { det3, multiply } from './mat.js';
import { colourFor } from './util.js';
import { BakedBatch, GlyphBatch, InstanceBatch, everywhere } from './batches.js';

const AXES_LENGTH = 0.2;          // node units
const MIN_BOX_EXTENT = 1e-4;      // a flat box still draws as a thin slab
const MESH_DEFAULT_SIZE = 0.25;   // a mesh node without bounds
const FLASH_MS = 700;
/* Merged mode's level of detail, in CSS pixels at full detail: a shape
 * whose projected diameter is under LOD_MIN_PX, or a glyph under
 * GLYPH_MIN_PX, is drawn as a dot, at most one dot per DOT_CELL_PX square. */
const LOD_MIN_PX = 4;
const GLYPH_MIN_PX = 8;
const DOT_CELL_PX = 2;
const DOT_PX = 3; // a dot's size

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
	// Low-polygon on purpose: a stand-in may be instanced ten thousand
	// times, and a software rasteriser pays for every triangle.
	const shapes = [
		[/sphere|ball|head|eye|joint|knuckle/, () => new THREE.SphereGeometry(0.5, 10, 6)],
		[/wheel|tyre|tire|disc/, () => new THREE.CylinderGeometry(0.5, 0.5, 0.3, 12).rotateX(Math.PI / 2)],
		[/cyl|bone|limb|finger|pipe/, () => new THREE.CylinderGeometry(0.3, 0.3, 1, 8)],
		[/cone|tip|nose/, () => new THREE.ConeGeometry(0.5, 1, 10)],
		[/torus|ring/, () => new THREE.TorusGeometry(0.4, 0.12, 5, 12)],
		[/capsule|pill/, () => new THREE.CapsuleGeometry(0.25, 0.5, 2, 8)],
	];
	for (const [re, make] of shapes) if (re.test(lower)) return normalise(make());
	const fallback = [
		() => new THREE.OctahedronGeometry(0.5),
		() => new THREE.DodecahedronGeometry(0.5),
		() => new THREE.CylinderGeometry(0.35, 0.35, 1, 8),
		() => new THREE.IcosahedronGeometry(0.5, 0),
		() => new THREE.ConeGeometry(0.5, 1, 8),
	];
	let h = 0;
	for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
	return normalise(fallback[h % fallback.length]());
}

/*
 * The material of every solid shape: diffuse light from the scene's
 * ambient, hemisphere and directional lights (three.js fills in their
 * uniforms), computed per vertex, times the node's colour. A box's faces
 * are flat, so light per vertex is light per pixel there; the fragment
 * shader is then a multiply, where MeshStandardMaterial evaluates a
 * physically based BRDF for every pixel: in SwiftShader a close view of
 * the big scene took about twice as long with it. Only the broad specular
 * sheen is lost. With 'edges', box faces get a thin dark outline at their
 * edges (from the box's per-face UVs), so boxes read as boxes without a
 * second draw call for their edges. Point and spot lights (the viewer has
 * none) are ignored.
 */
function solidMaterial({ edges }) {
	const material = new THREE.ShaderMaterial({
		lights: true,
		uniforms: THREE.UniformsUtils.clone(THREE.UniformsLib.lights),
		defines: edges ? { EDGES: '' } : {},
		vertexShader: /* glsl */ `
			#include <common>
			#include <color_pars_vertex>
			uniform vec3 ambientLightColor;
			#if NUM_DIR_LIGHTS > 0
				struct DirectionalLight { vec3 direction; vec3 color; };
				uniform DirectionalLight directionalLights[ NUM_DIR_LIGHTS ];
			#endif
			#if NUM_HEMI_LIGHTS > 0
				struct HemisphereLight { vec3 direction; vec3 skyColor; vec3 groundColor; };
				uniform HemisphereLight hemisphereLights[ NUM_HEMI_LIGHTS ];
			#endif
			varying vec3 vIrradiance;
			#ifdef EDGES
				varying vec2 vEdgeUv;
			#endif
			void main() {
				#include <color_vertex>
				#include <beginnormal_vertex>
				#include <defaultnormal_vertex>
				#include <begin_vertex>
				#include <project_vertex>
				vec3 n = normalize( transformedNormal );
				vec3 irradiance = ambientLightColor;
				#if NUM_HEMI_LIGHTS > 0
					#pragma unroll_loop_start
					for ( int i = 0; i < NUM_HEMI_LIGHTS; i ++ ) {
						float up = 0.5 * dot( n, hemisphereLights[ i ].direction ) + 0.5;
						irradiance += mix( hemisphereLights[ i ].groundColor, hemisphereLights[ i ].skyColor, up );
					}
					#pragma unroll_loop_end
				#endif
				#if NUM_DIR_LIGHTS > 0
					#pragma unroll_loop_start
					for ( int i = 0; i < NUM_DIR_LIGHTS; i ++ ) {
						irradiance += saturate( dot( n, directionalLights[ i ].direction ) ) * directionalLights[ i ].color;
					}
					#pragma unroll_loop_end
				#endif
				// Lambert's BRDF, as three.js's standard material applies it.
				vIrradiance = irradiance * RECIPROCAL_PI;
				#ifdef EDGES
					vEdgeUv = uv;
				#endif
			}`,
		fragmentShader: /* glsl */ `
			#include <common>
			#include <color_pars_fragment>
			varying vec3 vIrradiance;
			#ifdef EDGES
				varying vec2 vEdgeUv;
			#endif
			void main() {
				vec3 albedo = vec3( 1.0 );
				#if defined( USE_COLOR ) || defined( USE_COLOR_ALPHA )
					albedo *= vColor.rgb;
				#endif
				#ifdef EDGES
					vec2 d2 = min( vEdgeUv, 1.0 - vEdgeUv );
					float d = min( d2.x, d2.y );
					float w = max( fwidth( d ), 1e-5 );
					albedo *= mix( 1.0, 0.35, 1.0 - smoothstep( 0.5 * w, 1.8 * w, d ) );
				#endif
				gl_FragColor = vec4( albedo * vIrradiance, 1.0 );
				#include <tonemapping_fragment>
				#include <colorspace_fragment>
			}`,
	});
	return material;
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
	/*
	 * 'mode' is how shared geometry is drawn: 'instanced' (one
	 * InstancedMesh per geometry; the right choice on a GPU) or 'merged'
	 * (CPU-transformed copies in one buffer; faster on a software
	 * rasteriser).
	 */
	constructor({ mode = 'instanced' } = {}) {
		this.mode = mode;
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
		const merged = mode === 'merged';
		this._boxMaterial = solidMaterial({ edges: true });
		this._meshMaterial = solidMaterial({ edges: false });
		// Merged batches carry their colours per vertex, instances per
		// instance (three.js multiplies either into the material colour).
		this._boxMaterial.vertexColors = merged;
		this._meshMaterial.vertexColors = merged;
		this._flashing = new Map();
		this._colour = new THREE.Color();
		// Nodes too small on screen to be worth their triangles (merged
		// mode only): one dot each, refilled before every frame.
		this._farCapacity = 0;
		this._far = new THREE.Points(new THREE.BufferGeometry(), new THREE.PointsMaterial({ size: DOT_PX, sizeAttenuation: false, vertexColors: true }));
		this._far.frustumCulled = false;
		this._far.name = 'rigd-far-nodes';
		this.group.add(this._far);
		this.setDetail(1);
		this._version = 0; // counts changes to what is drawn, for prepare()
		this._prepared = new Float64Array(22).fill(NaN);
		this._frustum = new THREE.Frustum();
		this._projView = new THREE.Matrix4();
		this.drawnCounts = { triangles: 0, dots: 0 };
		this._farBatches = [];
		this._farSlots = [];
		this.model = null;
	}

	/* Drops everything and draws every node of 'model'. */
	rebuild(model) {
		for (const batch of this._batches.values()) batch.dispose();
		this._batches.clear();
		for (const g of Object.values(this._glyphs)) g.ids.length = 0, g.slots.clear(), (g._indexStale = true);
		this._state.clear();
		this.objects.clear();
		this._flashing.clear();
		this.model = model;
		// Size every batch once, from a count, instead of growing it
		// node by node: a ten-thousand-node snapshot then allocates each
		// buffer once.
		const counts = new Map();
		const glyphCounts = { axes: 0, camera: 0 };
		for (const node of model.nodes.values()) {
			const { batchKey, glyphKey } = this._classify(node, node.world);
			if (batchKey) counts.set(batchKey, (counts.get(batchKey) || 0) + 1);
			if (glyphKey) glyphCounts[glyphKey]++;
		}
		for (const [key, n] of counts) this._batch(key, n);
		for (const [key, n] of Object.entries(glyphCounts)) this._glyphs[key].reserve(n);
		for (const id of model.order()) this._placeNode(model.get(id));
		this._touchAll();
	}

	/* Which batch (solid shape) and which glyph a node is drawn with. */
	_classify(node, m) {
		// A node its view hides (interest.js) is not drawn, like an invisible one.
		const shown = node.visible && !node.hidden;
		const offset = shown ? this.shapeOffset(node) : null;
		const mirrored = m ? det3(m) < 0 : false;
		const batchKey = offset ? `${node.mesh ? 'mesh' : 'box'}|${node.mesh || ''}|${mirrored ? 'm' : ''}` : null;
		const glyphKey = !shown ? null : node.kind === 'camera' ? 'camera' : offset ? null : 'axes';
		return { offset, batchKey, glyphKey };
	}

	/* Applies an update's changes (see SceneModel.applyUpdate). */
	update(info) {
		for (const id of info.removed) {
			this._removeNode(id);
			this.objects.delete(id);
			this._flashing.delete(id);
		}
		const touched = new Set([...info.changed, ...info.world, ...(info.shown || [])]);
		for (const id of touched) {
			const node = this.model.get(id);
			if (node) this._placeNode(node);
		}
		this._touchAll();
	}

	/*
	 * Chooses what to draw for this frame from 'camera' (merged mode) in a
	 * viewport 'widthPx' by 'heightPx' CSS pixels: the copies in view and at
	 * least lodMinPx across as triangles, the glyphs in view and at least
	 * glyphMinPx across as lines, the other nodes in view as dots and
	 * nothing for the rest. Of the dots, one per dotCellPx-sized square of
	 * the screen is drawn, the nearest: the others would sit under it, and
	 * a software rasteriser pays as much for a hidden dot as for a visible
	 * one. Does nothing when neither the camera, the viewport nor the
	 * drawn nodes changed since the last call.
	 */
	prepare(camera, widthPx, heightPx) {
		if (this.mode !== 'merged') return;
		// A node camera carries the server's matrix and its exact inverse;
		// only the orbit camera composes its own.
		if (camera.matrixWorldAutoUpdate) camera.updateMatrixWorld();
		this._projView.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse);
		const e = this._projView.elements;
		const key = this._prepared;
		let same = true;
		const keep = (i, v) => {
			if (key[i] !== v) (same = false), (key[i] = v);
		};
		for (let i = 0; i < 16; i++) keep(i, e[i]);
		[widthPx, heightPx, this.lodMinPx, this.glyphMinPx, this.dotCellPx, this._version].forEach((v, i) => keep(16 + i, v));
		if (same) return;
		this._frustum.setFromProjectionMatrix(this._projView);
		const eye = new THREE.Vector3().setFromMatrixPosition(camera.matrixWorld);
		const pxPerUnit = camera.isPerspectiveCamera ? heightPx / (2 * Math.tan((camera.fov * Math.PI) / 360)) : heightPx;
		// The dots: batch and slot of every node drawn as one, reused from
		// frame to frame (no allocation per node per frame).
		const farBatches = this._farBatches;
		const farSlots = this._farSlots;
		let n = 0;
		let triangles = 0;
		let lines = 0;
		const far = (batch) => (slot) => {
			farBatches[n] = batch;
			farSlots[n++] = slot;
		};
		for (const batch of this._batches.values()) triangles += batch.lod(this._frustum, eye, pxPerUnit, this.lodMinPx, far(batch));
		for (const glyph of Object.values(this._glyphs)) lines += glyph.lod(this._frustum, eye, pxPerUnit, this.glyphMinPx, far(glyph));
		const small = n;
		n = this._thinDots(n, e, widthPx, heightPx);
		farBatches.length = n;
		farSlots.length = n;
		if (n > this._farCapacity) {
			this._farCapacity = Math.max(n, this._farCapacity * 2, 256);
			const g = new THREE.BufferGeometry();
			g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(this._farCapacity * 3), 3).setUsage(THREE.DynamicDrawUsage));
			g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(this._farCapacity * 3), 3).setUsage(THREE.DynamicDrawUsage));
			g.boundingSphere = everywhere();
			this._far.geometry.dispose();
			this._far.geometry = g;
		}
		const g = this._far.geometry;
		if (g.attributes.position) {
			const pos = g.attributes.position.array;
			const col = g.attributes.color.array;
			for (let i = 0; i < n; i++) {
				const batch = farBatches[i];
				const slot = farSlots[i];
				const c = batch.centres;
				const dc = batch.dotColours;
				pos[i * 3] = c[slot * 3];
				pos[i * 3 + 1] = c[slot * 3 + 1];
				pos[i * 3 + 2] = c[slot * 3 + 2];
				col[i * 3] = dc[slot * 3];
				col[i * 3 + 1] = dc[slot * 3 + 1];
				col[i * 3 + 2] = dc[slot * 3 + 2];
			}
			for (const attr of [g.attributes.position, g.attributes.color]) {
				attr.clearUpdateRanges();
				attr.addUpdateRange(0, Math.max(n * 3, 1));
				attr.needsUpdate = true;
			}
			g.setDrawRange(0, n);
		}
		this.drawnCounts = { triangles, lines, small, dots: n };
	}

	/*
	 * Keeps, of the first 'n' dot candidates (_farBatches/_farSlots), the
	 * nearest in each dotCellPx square of the screen ('e' is the
	 * projection-view matrix), in their original order. Returns how many
	 * were kept.
	 */
	_thinDots(n, e, widthPx, heightPx) {
		const cell = this.dotCellPx;
		if (!(cell > 0) || n === 0) return n;
		const cols = Math.max(1, Math.ceil(widthPx / cell));
		const rows = Math.max(1, Math.ceil(heightPx / cell));
		if (!this._cells || this._cells.stamp.length < cols * rows) {
			const size = cols * rows;
			this._cells = { stamp: new Uint32Array(size), best: new Int32Array(size), depth: new Float64Array(size), generation: 0 };
		}
		const cells = this._cells;
		if (++cells.generation === 0xffffffff) cells.stamp.fill(0), (cells.generation = 1);
		const gen = cells.generation;
		if (!this._cellOf || this._cellOf.length < n) this._cellOf = new Int32Array(Math.max(n, 256) * 2);
		const cellOf = this._cellOf;
		const batches = this._farBatches;
		const slots = this._farSlots;
		for (let i = 0; i < n; i++) {
			const c = batches[i].centres;
			const s = slots[i] * 3;
			const x = c[s], y = c[s + 1], z = c[s + 2];
			const w = e[3] * x + e[7] * y + e[11] * z + e[15];
			const px = ((e[0] * x + e[4] * y + e[8] * z + e[12]) / w + 1) * 0.5 * widthPx;
			const py = (1 - (e[1] * x + e[5] * y + e[9] * z + e[13]) / w) * 0.5 * heightPx;
			const depth = (e[2] * x + e[6] * y + e[10] * z + e[14]) / w;
			const col = Math.min(cols - 1, Math.max(0, Math.floor(px / cell)));
			const row = Math.min(rows - 1, Math.max(0, Math.floor(py / cell)));
			const k = Number.isFinite(px + py + depth) ? row * cols + col : -1;
			cellOf[i] = k;
			if (k < 0) continue;
			if (cells.stamp[k] !== gen || depth < cells.depth[k]) {
				cells.stamp[k] = gen;
				cells.best[k] = i;
				cells.depth[k] = depth;
			}
		}
		let kept = 0;
		for (let i = 0; i < n; i++) {
			const k = cellOf[i];
			if (k >= 0 && cells.best[k] !== i) continue;
			batches[kept] = batches[i];
			slots[kept++] = slots[i];
		}
		return kept;
	}

	/* Scales the size thresholds below which shapes and glyphs are drawn
	 * as dots, and the dots' spacing (1 = full detail). */
	setDetail(scale) {
		this.lodMinPx = LOD_MIN_PX * scale;
		this.glyphMinPx = GLYPH_MIN_PX * scale;
		// Dots further apart than their own size would show gaps.
		this.dotCellPx = Math.min(DOT_CELL_PX * scale, DOT_PX);
	}

	/*
	 * Draws some nodes at predicted world matrices ('worlds': id -> 16
	 * numbers) instead of the server's; the model is not changed. The next
	 * update that touches a node, or restore(), draws it from the server's
	 * matrix again.
	 */
	showPredicted(worlds) {
		for (const [id, world] of worlds) {
			const node = this.model.get(id);
			if (node) this._placeNode(node, world);
		}
		this._touchAll();
	}

	/* Draws nodes 'ids' at the server's world matrices again. */
	restore(ids) {
		for (const id of ids) {
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
		if (this._farSlots.length) targets.push(this._far);
		// Test both sides of every triangle: three.js culls back faces in
		// the instance's own frame, where a mirrored copy's outside looks
		// like its inside; the nearest surface along the ray is the pick.
		const materials = [this._boxMaterial, this._meshMaterial];
		const sides = materials.map((m) => m.side);
		for (const m of materials) m.side = THREE.DoubleSide;
		let hits;
		try {
			hits = raycaster.intersectObjects(targets, false);
		} finally {
			materials.forEach((m, i) => (m.side = sides[i]));
		}
		for (const hit of hits) {
			const batch = [...this._batches.values()].find((b) => b.mesh === hit.object);
			if (batch) {
				const id = batch.idOfHit(hit);
				if (id) return id;
			} else if (hit.object === this._far) {
				if (hit.index < this._farSlots.length) return this._farBatches[hit.index].ids[this._farSlots[hit.index]];
			} else {
				const glyph = Object.values(this._glyphs).find((g) => g.lines === hit.object);
				const id = glyph ? glyph.idOfHit(hit) : null;
				if (id) return id;
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
		this._far.geometry.dispose();
		this._far.material.dispose();
		this.objects.clear();
		this._state.clear();
	}

	/* --- internals --- */

	_object(node, world) {
		let obj = this.objects.get(node.id);
		if (!obj) {
			obj = new THREE.Object3D();
			obj.name = node.id;
			obj.matrixAutoUpdate = false;
			obj.matrixWorldAutoUpdate = false;
			obj.userData.id = node.id;
			this.objects.set(node.id, obj);
		}
		// The server's numbers, as they are: no composition, no rounding
		// (or a prediction of them, see showPredicted).
		if (world) obj.matrixWorld.fromArray(world);
		obj.matrix.copy(obj.matrixWorld);
		return obj;
	}

	_batch(key, capacity) {
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
		const Batch = this.mode === 'merged' ? BakedBatch : InstanceBatch;
		batch = new Batch(this.group, geoms[mirrored === 'm' ? 1 : 0], material, capacity);
		batch.mesh.name = `rigd-${kind}${name ? '-' + name : ''}${mirrored === 'm' ? '-mirrored' : ''}`;
		this._batches.set(key, batch);
		return batch;
	}

	_placeNode(node, world = node.world) {
		const obj = this._object(node, world);
		const m = obj.matrixWorld.elements;
		const prev = this._state.get(node.id);
		const { offset, batchKey, glyphKey } = this._classify(node, m);

		if (prev && prev.batchKey !== batchKey && prev.batchKey) this._batches.get(prev.batchKey).remove(node.id);
		if (prev && prev.glyphKey !== glyphKey && prev.glyphKey) this._glyphs[prev.glyphKey].remove(node.id);

		const state = { batchKey, glyphKey, colour: prev ? prev.colour : colourFor(node.id).rgb };
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
		this._version++;
		for (const batch of this._batches.values()) batch.touch();
		for (const g of Object.values(this._glyphs)) g.touch();
	}
}
