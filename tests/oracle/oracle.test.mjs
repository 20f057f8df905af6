// oracle.test.mjs: rigd's world matrices against an independent
// implementation, three.js's Object3D.updateMatrixWorld.
//
// tests/oracle/oracle_dump (C) builds a scene with rigd and prints every
// node's stored channels and the world matrix rigd computed. This script
// builds the same tree out of three.js Object3Ds, lets three.js compute the
// world matrices, and requires agreement within 1e-9 relative: per node,
// max |ours - three| over the 16 elements divided by the largest element of
// three's upper three rows (the bottom row must be exactly 0 0 0 1).
//
// How the two sides are fed:
// - glTF samples: three.js reads the .gltf file itself (independently of
//   rigd's loader) and builds the hierarchy from "children". TRS nodes set
//   position/quaternion/scale with matrixAutoUpdate (the quaternion
//   normalised, as rigd's spec normalises on input). Nodes with "matrix"
//   get that matrix directly (matrixAutoUpdate = false, Matrix4.fromArray);
//   rigd splits it into TRS with mat4_decompose, which must be exact, so the
//   comparison also proves that the split loses nothing. A second pass feeds
//   three.js the matrix through Matrix4.decompose, as GLTFLoader does.
// - Random trees: three.js gets the channels rigd stores. three.js has no
//   pivot, so a node with a non-zero pivot gets the equivalent local matrix
//   T(t) T(p) R S T(-p) composed with three's own Matrix4.compose and
//   multiply, with matrixAutoUpdate = false; pivot-free nodes use
//   position/quaternion/scale. Trees come with and without pivots.
//
// Only paths under the repository and the glTF sample folder
// (RIGD_GLTF_SAMPLES, tests/lib/gltf_samples.js) are used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { loadThree, relDiff } from '../lib/three_ref.mjs';
import samples from '../lib/gltf_samples.js';

const SOURCE_DIR = process.env.RIGD_SOURCE_DIR;
const BUILD_DIR = process.env.RIGD_BUILD_DIR;
assert.ok(SOURCE_DIR && BUILD_DIR, 'RIGD_SOURCE_DIR and RIGD_BUILD_DIR must be set (run through ctest)');

const THREE = await loadThree(SOURCE_DIR);
const DUMP = path.join(BUILD_DIR, 'tests', 'oracle_dump');
const { GLTF_SAMPLES: SAMPLES, sampleFiles, skipWithoutSamples } = samples;
const TOL = 1e-9;

function dump(...args) {
  const out = execFileSync(DUMP, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return JSON.parse(out);
}

function bottomRowExact(m) {
  return m[3] === 0 && m[7] === 0 && m[11] === 0 && m[15] === 1;
}

// The largest deviation from 90 degrees of the angle between two of the
// first three columns (zero-length columns skipped), as mat4_shear_deg.
function shearDeg(m) {
  let worst = 90;
  for (const [a, b] of [[0, 1], [0, 2], [1, 2]]) {
    const u = [m[a * 4], m[a * 4 + 1], m[a * 4 + 2]];
    const v = [m[b * 4], m[b * 4 + 1], m[b * 4 + 2]];
    const lu = Math.hypot(...u);
    const lv = Math.hypot(...v);
    if (lu === 0 || lv === 0) continue;
    const cos = Math.min(1, Math.max(-1, (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) / (lu * lv)));
    const deg = (Math.acos(cos) * 180) / Math.PI;
    if (Math.abs(deg - 90) > Math.abs(worst - 90)) worst = deg;
  }
  return worst;
}

// Compares every node; returns the largest relative difference. 'objects'
// is parallel to dumped.nodes.
function compareAll(dumped, objects, label) {
  let worst = 0;
  let worstAt = -1;
  for (let i = 0; i < dumped.nodes.length; i++) {
    const ref = objects[i].matrixWorld.elements;
    const ours = dumped.nodes[i].world;
    assert.ok(bottomRowExact(ours), `${label}: node ${dumped.nodes[i].id}: our bottom row is not 0 0 0 1`);
    assert.ok(bottomRowExact(ref), `${label}: node ${dumped.nodes[i].id}: three's bottom row is not 0 0 0 1`);
    const d = relDiff(ours, ref);
    if (!(d <= worst)) {
      worst = d;
      worstAt = i;
    }
  }
  assert.ok(worst <= TOL,
    `${label}: node ${worstAt >= 0 ? dumped.nodes[worstAt].id : '?'} differs from three.js by ${worst} relative`);
  return worst;
}

function updateRoots(objects) {
  for (const o of objects) if (o.parent === null) o.updateMatrixWorld(true);
}

// ---------- glTF samples ----------

// The default scene's nodes in depth-first preorder, read from the file
// with an explicit stack (children in order).
function gltfPreorder(doc) {
  const roots = doc.scenes[doc.scene ?? 0].nodes ?? [];
  const order = [];
  const stack = [...roots].reverse();
  while (stack.length) {
    const k = stack.pop();
    order.push(k);
    const children = doc.nodes[k].children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return order;
}

// One Object3D per glTF node, built from the file alone.
function gltfToThree(doc, matrixMode) {
  const objects = doc.nodes.map((n) => {
    const o = new THREE.Object3D();
    if (n.matrix) {
      const m = new THREE.Matrix4().fromArray(n.matrix);
      if (matrixMode === 'direct') {
        o.matrixAutoUpdate = false;
        o.matrix.copy(m);
      } else {
        o.applyMatrix4(m); // GLTFLoader's way: decompose into position/quaternion/scale
      }
    } else {
      if (n.translation) o.position.fromArray(n.translation);
      if (n.rotation) o.quaternion.fromArray(n.rotation).normalize();
      if (n.scale) o.scale.fromArray(n.scale);
    }
    return o;
  });
  doc.nodes.forEach((n, k) => {
    for (const c of n.children ?? []) objects[k].add(objects[c]);
  });
  return objects;
}

test('the glTF samples are there', (t) => {
  if (skipWithoutSamples(t)) return;
  // The samples' README lists seven models.
  assert.ok(sampleFiles.length >= 7, `found ${sampleFiles.length} .gltf files in ${SAMPLES}`);
});

// Nodes whose world determinant is negative, from the samples' README.
const NEGATIVE_WORLD_DET = { 'NegativeScaleTest.gltf': 6 };

for (const file of sampleFiles) {
  test(`glTF ${file}`, async (t) => {
    const doc = JSON.parse(readFileSync(path.join(SAMPLES, file), 'utf8'));
    const dumped = dump('gltf', path.join(SAMPLES, file));
    const order = gltfPreorder(doc);

    // The same nodes, in the same preorder, with the same parents.
    assert.deepEqual(dumped.nodes.map((n) => n.gltf), order);
    assert.equal(dumped.count, order.length);
    assert.equal(dumped.recomputed, order.length);
    const matrixNodes = order.filter((k) => doc.nodes[k].matrix).length;
    assert.equal(dumped.decomposed, matrixNodes);
    assert.ok(dumped.decompose_max_err <= 1e-12, `decomposition residual ${dumped.decompose_max_err}`);

    for (const mode of ['direct', 'decompose']) {
      await t.test(`matrix nodes ${mode === 'direct' ? 'set directly' : 'decomposed by three.js'}`, () => {
        const objects = gltfToThree(doc, mode);
        updateRoots(objects);
        const mine = dumped.nodes.map((n) => objects[n.gltf]);
        dumped.nodes.forEach((n, i) => {
          const parentObj = mine[i].parent;
          const want = n.parent < 0 ? null : objects[dumped.nodes[n.parent].gltf];
          assert.equal(parentObj, want, `node ${n.gltf}: parent differs`);
        });
        const worst = compareAll(dumped, mine, `${file} (${mode})`);
        t.diagnostic(`${file} ${mode}: ${order.length} nodes, ${matrixNodes} matrix, max relative difference ${worst.toExponential(2)}`);

        let negOurs = 0;
        let negThree = 0;
        dumped.nodes.forEach((n, i) => {
          const d3 = mine[i].matrixWorld.determinant();
          if (n.det < 0) negOurs++;
          if (d3 < 0) negThree++;
          assert.equal(Math.sign(n.det), Math.sign(d3), `node ${n.gltf}: determinant sign`);
        });
        assert.equal(negOurs, negThree);
        assert.equal(negOurs, NEGATIVE_WORLD_DET[file] ?? 0);
      });
    }
  });
}

// ---------- random trees ----------

// One Object3D per dumped node (parallel arrays).
function randomToThree(dumped, { ignorePivots = false } = {}) {
  const zero = new THREE.Vector3();
  const objects = dumped.nodes.map((n) => {
    const o = new THREE.Object3D();
    const pivot = new THREE.Vector3().fromArray(n.pivot);
    if (!ignorePivots && !pivot.equals(zero)) {
      const rs = new THREE.Matrix4().compose(zero, new THREE.Quaternion().fromArray(n.r),
        new THREE.Vector3().fromArray(n.s));
      const m = new THREE.Matrix4().makeTranslation(new THREE.Vector3().fromArray(n.t));
      m.multiply(new THREE.Matrix4().makeTranslation(pivot));
      m.multiply(rs);
      m.multiply(new THREE.Matrix4().makeTranslation(pivot.clone().negate()));
      o.matrixAutoUpdate = false;
      o.matrix.copy(m);
    } else {
      o.position.fromArray(n.t);
      o.quaternion.fromArray(n.r);
      o.scale.fromArray(n.s);
    }
    return o;
  });
  dumped.nodes.forEach((n, i) => {
    if (n.parent >= 0) objects[n.parent].add(objects[i]);
  });
  updateRoots(objects);
  return objects;
}

function checkRandom(t, dumped, n, label) {
  assert.equal(dumped.count, n);
  assert.equal(dumped.recomputed, n);
  const objects = randomToThree(dumped);
  const worst = compareAll(dumped, objects, label);

  let sheared = 0;
  let mirrored = 0;
  dumped.nodes.forEach((node, i) => {
    const ref = objects[i].matrixWorld.elements;
    const d3 = objects[i].matrixWorld.determinant();
    assert.equal(Math.sign(node.det), Math.sign(d3), `${label}: node ${node.id}: determinant sign`);
    const s3 = shearDeg(ref);
    assert.ok(Math.abs(node.shear_deg - s3) <= 1e-6,
      `${label}: node ${node.id}: shear ${node.shear_deg} vs three.js ${s3}`);
    if (Math.abs(s3 - 90) > 1) sheared++;
    if (d3 < 0) mirrored++;
  });
  t.diagnostic(`${label}: ${n} nodes, ${dumped.roots} roots, depth ${dumped.max_depth}, ` +
    `${sheared} with inherited shear > 1 deg, ${mirrored} mirrored, ` +
    `max relative difference ${worst.toExponential(2)}`);
  return { objects, sheared, mirrored };
}

test('random trees of 10 nodes, twelve seeds, with and without pivots', (t) => {
  let sheared = 0;
  let mirrored = 0;
  for (let seed = 1; seed <= 12; seed++) {
    for (const pivots of [false, true]) {
      const dumped = dump('random', '10', String(seed), ...(pivots ? ['pivots'] : []));
      const r = checkRandom(t, dumped, 10, `n=10 seed=${seed}${pivots ? ' pivots' : ''}`);
      sheared += r.sheared;
      mirrored += r.mirrored;
    }
  }
  assert.ok(sheared > 0 && mirrored > 0, 'the small trees exercise shear and mirroring');
});

for (const n of [1000, 10000]) {
  for (const pivots of [false, true]) {
    test(`random tree of ${n} nodes${pivots ? ' with pivots' : ''}`, (t) => {
      const dumped = dump('random', String(n), '20240611', ...(pivots ? ['pivots'] : []));
      const { sheared, mirrored } = checkRandom(t, dumped, n, `n=${n}${pivots ? ' pivots' : ''}`);
      // Non-uniform and negative scales must show up as inherited shear
      // and mirrored frames, or the test proves less than it claims.
      assert.ok(sheared > n / 10, `only ${sheared} sheared world matrices`);
      assert.ok(mirrored > n / 10, `only ${mirrored} mirrored world matrices`);
      assert.ok(dumped.max_depth >= 5, `depth ${dumped.max_depth}`);

      if (pivots) {
        // Pivots must matter: three.js ignoring them disagrees at every
        // pivot node.
        const withPivot = dumped.nodes.filter((node) => node.pivot.some((v) => v !== 0)).length;
        assert.ok(withPivot > n / 5, `only ${withPivot} nodes with a pivot`);
        const blind = randomToThree(dumped, { ignorePivots: true });
        dumped.nodes.forEach((node, i) => {
          if (node.pivot.some((v) => v !== 0)) {
            assert.ok(relDiff(node.world, blind[i].matrixWorld.elements) > 1e-6,
              `node ${node.id}: ignoring its pivot went unnoticed`);
          }
        });
      }
    });
  }
}

test('the comparison catches small errors', () => {
  const dumped = dump('random', '1000', '7');
  const objects = randomToThree(dumped);
  const i = dumped.nodes.length - 1;
  const ref = objects[i].matrixWorld.elements;
  const scale = Math.max(...ref.slice(0, 15).map(Math.abs));
  for (const k of [0, 5, 10, 12, 14]) {
    const bad = [...dumped.nodes[i].world];
    bad[k] += 1e-8 * scale;
    assert.ok(relDiff(bad, ref) > TOL, `an error of 1e-8 in element ${k} went unnoticed`);
  }
  // A transposed matrix (a row/column-major mix-up) is caught too.
  const w = dumped.nodes[i].world;
  const transposed = w.map((_, k) => w[(k % 4) * 4 + Math.floor(k / 4)]);
  assert.ok(relDiff(transposed, ref) > TOL);
  assert.ok(!bottomRowExact(transposed));
});
