// three_ref.mjs: three.js as the independent reference that rigd's world
// matrices are compared with (tests/oracle, tests/gltf, tests/e2e/gltf.js).
//
// three.js composes the hierarchy itself (Object3D.updateMatrixWorld), so an
// agreement is evidence, not rigd checking itself. three comes from
// web/node_modules, where `npm ci` put it.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/* three.js's ES module from SOURCE_DIR/web/node_modules. */
export function loadThree(sourceDir) {
  return import(pathToFileURL(path.join(sourceDir, 'web', 'node_modules', 'three', 'build',
    'three.module.js')).href);
}

/* One Object3D per glTF node, built from the document alone: position,
 * quaternion (normalised: glTF rotations are unit) and scale, or a "matrix"
 * set directly with matrixAutoUpdate off; every root updated. */
export function threeWorlds(THREE, doc) {
  const objects = (doc.nodes ?? []).map((n) => {
    const o = new THREE.Object3D();
    if (n.matrix) {
      o.matrixAutoUpdate = false;
      o.matrix.fromArray(n.matrix);
    } else {
      if (n.translation) o.position.fromArray(n.translation);
      if (n.rotation) o.quaternion.fromArray(n.rotation).normalize();
      if (n.scale) o.scale.fromArray(n.scale);
    }
    return o;
  });
  (doc.nodes ?? []).forEach((n, k) => {
    for (const c of n.children ?? []) objects[k].add(objects[c]);
  });
  for (const o of objects) if (o.parent === null) o.updateMatrixWorld(true);
  return objects;
}

/* Relative difference of two column-major 4x4 matrices (arrays of 16): the
 * largest element difference over the largest element of ref's upper three
 * rows (translations and the 3x3 part set the scale). 0 when equal,
 * Infinity when they differ and ref's upper rows are all zero. */
export function relDiff(ours, ref) {
  let scale = 0;
  let diff = 0;
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 3; r++) scale = Math.max(scale, Math.abs(ref[c * 4 + r]));
  }
  for (let i = 0; i < 16; i++) diff = Math.max(diff, Math.abs(ours[i] - ref[i]));
  if (diff === 0) return 0;
  return scale > 0 ? diff / scale : Infinity;
}
