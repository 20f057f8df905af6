// gltf.test.mjs: rigd's glTF import and export against independent readers.
//
// tests/gltf/gltf_tool (C) runs rigd's import or export and prints the ids,
// parents and world matrices rigd computed. Here:
// - three.js builds every glTF file's node hierarchy itself (Object3D per
//   node: position / quaternion (normalised: glTF rotations are unit) /
//   scale, or a "matrix" set directly with matrixAutoUpdate = false) and
//   updateMatrixWorld gives the reference world matrices; rigd's must agree
//   within 1e-9 relative (largest element difference over the largest
//   element of three's upper three rows), node by node through the id map
//   rigd reports;
// - the Khronos glTF validator must find no error and no warning in what
//   rigd exports, and must reject the malformed fixtures rigd rejects as
//   invalid glTF (tests/gltf/malformed/expect.txt, kind 'spec').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { loadThree, relDiff, threeWorlds as threeWorldsOf } from '../lib/three_ref.mjs';
import samples from '../lib/gltf_samples.js';

const SOURCE_DIR = process.env.RIGD_SOURCE_DIR;
const BUILD_DIR = process.env.RIGD_BUILD_DIR;
assert.ok(SOURCE_DIR && BUILD_DIR, 'RIGD_SOURCE_DIR and RIGD_BUILD_DIR must be set (run through ctest)');

const WEB_MODULES = path.join(SOURCE_DIR, 'web', 'node_modules');
const THREE = await loadThree(SOURCE_DIR);
const validator = createRequire(import.meta.url)(path.join(WEB_MODULES, 'gltf-validator'));
const TOOL = path.join(BUILD_DIR, 'tests', 'gltf_tool');
// The sample models (outside the repository; RIGD_GLTF_SAMPLES names the folder).
const { GLTF_SAMPLES: SAMPLES, sampleFiles, skipWithoutSamples } = samples;
const MALFORMED = path.join(SOURCE_DIR, 'tests', 'gltf', 'malformed');
const TOL = 1e-9;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'rigd-gltf-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

function tool(...args) {
  return JSON.parse(execFileSync(TOOL, args, { encoding: 'utf8', maxBuffer: 1 << 26 }));
}

async function validate(file) {
  const report = await validator.validateBytes(new Uint8Array(readFileSync(file)), {
    uri: path.basename(file),
    format: 'gltf',
    maxIssues: 50,
  });
  return report.issues;
}

function issueList(issues, severity) {
  return issues.messages
    .filter((m) => m.severity === severity)
    .map((m) => `${m.code} at ${m.pointer}: ${m.message}`)
    .join('\n');
}

// Checks rigd's node 'id' against three's object; returns the difference.
function compare(node, object, label) {
  const ref = object.matrixWorld.elements;
  const ours = node.world;
  assert.ok(ours[3] === 0 && ours[7] === 0 && ours[11] === 0 && ours[15] === 1, `${label}: bottom row`);
  const d = relDiff(ours, ref);
  assert.ok(d <= TOL, `${label}: node ${node.id} differs from three.js by ${d} relative`);
  assert.equal(Math.sign(new THREE.Matrix4().fromArray(ours).determinant()),
    Math.sign(object.matrixWorld.determinant()), `${label}: node ${node.id}: determinant sign`);
  return d;
}

// For an exported document: the glTF node whose world matrix is rigd node
// 'id' (the inner node of a pivot pair, else the node carrying the id).
function exportedNodeOf(doc) {
  const map = new Map();
  doc.nodes.forEach((n, k) => {
    const x = n.extras?.rigd;
    if (x?.id !== undefined && !map.has(x.id)) map.set(x.id, k);
    if (x?.pivot_of !== undefined) map.set(x.pivot_of, k);
  });
  return map;
}

// Every rigd node of 'dumped' against the exported file 'file'.
function compareExport(file, dumped, label) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const objects = threeWorldsOf(THREE, doc);
  const at = exportedNodeOf(doc);
  let worst = 0;
  for (const node of dumped.nodes) {
    assert.ok(at.has(node.id), `${label}: node ${node.id} is not in the export`);
    worst = Math.max(worst, compare(node, objects[at.get(node.id)], label));
  }
  assert.equal(at.size, dumped.nodes.length, `${label}: the export has nodes rigd does not`);
  return { doc, worst };
}

function assertNear(got, want, tol, label) {
  assert.equal(got.length, want.length, label);
  got.forEach((x, i) => assert.ok(Math.abs(x - want[i]) <= tol, `${label}: [${got}] is not [${want}]`));
}

async function assertValid(file, label) {
  const issues = await validate(file);
  assert.equal(issues.numErrors, 0, `${label}: validator errors:\n${issueList(issues, 0)}`);
  assert.equal(issues.numWarnings, 0, `${label}: validator warnings:\n${issueList(issues, 1)}`);
}

// ---------- import ----------

const NEGATIVE_WORLD_DET = { 'NegativeScaleTest.gltf': 6 };
const ROOTS = { 'SimpleSkin.gltf': 2, 'NegativeScaleTest.gltf': 8, 'OrientationTest.gltf': 13 };

test('the seven glTF samples are there', (t) => {
  if (skipWithoutSamples(t)) return;
  assert.equal(sampleFiles.length, 7, `found ${sampleFiles.join(', ')} in ${SAMPLES}`);
});

for (const file of sampleFiles) {
  test(`import ${file}: every world matrix as three.js computes it`, (t) => {
    const doc = JSON.parse(readFileSync(path.join(SAMPLES, file), 'utf8'));
    const out = tool('import', path.join(SAMPLES, file));
    assert.equal(out.ok, true);
    const objects = threeWorldsOf(THREE, doc);
    const byId = new Map(out.nodes.map((n) => [n.id, n]));
    const ids = out.report.ids;
    assert.equal(ids.length, doc.nodes.length);

    // Nodes reached from the default scene, and only those, were created.
    const roots = doc.scenes[doc.scene ?? 0].nodes;
    const reached = new Set();
    const stack = [...roots];
    while (stack.length) {
      const k = stack.pop();
      reached.add(k);
      stack.push(...(doc.nodes[k].children ?? []));
    }
    assert.equal(out.nodes.length, reached.size);
    assert.equal(out.report.created, reached.size);
    assert.equal(new Set(ids.filter((id) => id !== null)).size, reached.size, 'ids are unique');
    assert.equal(out.report.roots, roots.length);
    assert.equal(out.nodes.filter((n) => n.parent === null).length, ROOTS[file] ?? 1);

    let worst = 0;
    let negative = 0;
    doc.nodes.forEach((n, k) => {
      if (!reached.has(k)) {
        assert.equal(ids[k], null);
        return;
      }
      const node = byId.get(ids[k]);
      assert.ok(node, `glTF node ${k} -> ${ids[k]} is not in the scene`);
      // The parent is the file's.
      const parent = objects[k].parent;
      assert.equal(node.parent, parent ? ids[objects.indexOf(parent)] : null, `${file} node ${k}: parent`);
      worst = Math.max(worst, compare(node, objects[k], file));
      if (objects[k].matrixWorld.determinant() < 0) negative++;
    });
    assert.equal(negative, NEGATIVE_WORLD_DET[file] ?? 0);

    // Matrix nodes were split exactly.
    const matrixNodes = doc.nodes.filter((n, k) => n.matrix && reached.has(k)).length;
    assert.equal(out.report.matrix_nodes.length, matrixNodes);
    for (const m of out.report.matrix_nodes) assert.equal(m.exact, true);
    t.diagnostic(`${file}: ${reached.size} nodes, ${matrixNodes} matrix, max relative difference ${worst.toExponential(2)}`);
  });
}

// ---------- malformed ----------

const expectations = readFileSync(path.join(MALFORMED, 'expect.txt'), 'utf8')
  .split('\n')
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => {
    const [file, code, node, kind] = l.split(/\s+/);
    return { file, code, node: Number(node), kind };
  });

test('malformed fixtures are all listed', () => {
  const files = readdirSync(MALFORMED).filter((f) => f.endsWith('.gltf')).sort();
  assert.deepEqual(expectations.map((e) => e.file).sort(), files);
});

// One process for all of them (cheap under the sanitizers).
const refusals = tool('import-each', ...expectations.map((e) => path.join(MALFORMED, e.file)));

for (const [i, e] of expectations.entries()) {
  test(`malformed ${e.file}: refused (${e.code}), nothing created`, async () => {
    const out = refusals[i];
    assert.equal(out.ok, false);
    assert.equal(out.code, e.code);
    assert.equal(out.bad_node, e.node);
    assert.equal(out.nodes, undefined);
    if (e.node >= 0) assert.match(out.message, new RegExp(`^node ${e.node}\\b`));
    const issues = await validate(path.join(MALFORMED, e.file));
    if (e.kind === 'spec') {
      assert.ok(issues.numErrors > 0, `the validator accepts ${e.file}`);
    } else {
      assert.equal(issues.numErrors, 0, issueList(issues, 0));
    }
  });
}

test('a refused import exits with status 2 and creates nothing', () => {
  const run = spawnSync(TOOL, ['import', path.join(MALFORMED, 'cycle.gltf')], { encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.equal(out.code, 'cycle');
  assert.equal(out.nodes, undefined);
});

// ---------- export ----------

test('the demo rig exports as section 14 and validates', async () => {
  const file = path.join(tmp, 'demo.gltf');
  const dumped = tool('export-demo', file);
  await assertValid(file, 'demo');
  const { doc } = compareExport(file, dumped, 'demo');
  const named = (name) => doc.nodes.find((n) => n.name === name);
  const round = (v) => v.map((x) => Math.round(x * 1e4) / 1e4 + 0);
  assert.equal(doc.nodes.length, 4);
  assert.deepEqual(round(named('base').rotation), [0, 0.2588, 0, 0.9659]);
  assert.deepEqual(round(named('base').translation), [0, 0.2, 0]);
  // The joint: the arm's t + pivot and its bend; the arm under it: -pivot.
  assert.deepEqual(round(named('arm').rotation), [0, 0, 0.342, 0.9397]);
  assert.deepEqual(round(named('arm').translation), [0, 0.2, 0]);
  assert.deepEqual(named('arm.pivot').translation, [0, 0.7, 0]);
  assert.equal(named('arm.pivot').rotation, undefined);
  assert.ok(named('arm.pivot').mesh !== undefined);
  assert.deepEqual(named('hand').translation, [0, 0.7, 0]);
  assert.deepEqual(doc.nodes.map((n) => n.children ?? []), [[1], [2], [3], []]);
  // The hand where the architecture notes put it.
  const hand = dumped.nodes.find((n) => n.id === 'hand').world;
  assertNear(hand.slice(12, 15), [-0.779, 1.472, 0.45], 5e-4, 'hand position');
});

test('a rich scene (camera, mirror, hidden, unnamed, shear, zero scale) exports valid glTF', async () => {
  const file = path.join(tmp, 'rich.gltf');
  const dumped = tool('export-demo', file, '--rich');
  await assertValid(file, 'rich');
  const { doc } = compareExport(file, dumped, 'rich');
  assert.equal(doc.cameras.length, 1);
  assert.equal(doc.cameras[0].type, 'perspective');
  assert.ok(Math.abs(doc.cameras[0].perspective.yfov - (50 * Math.PI) / 180) < 1e-15);
  // Instancing: both arms point at the same mesh.
  const meshOf = (id) => doc.nodes[exportedNodeOf(doc).get(id)].mesh;
  assert.equal(meshOf('arm'), meshOf('arm2'));
  assert.equal(doc.meshes.length, 3);
  // The camera, once imported back, is where section 10 puts it.
  const again = tool('roundtrip', file, path.join(tmp, 'rich2.gltf'));
  const cam = again.nodes.find((n) => n.id === 'cam').world;
  assertNear(cam.slice(12, 15), [-0.946, 1.702, 0.546], 5e-4, 'camera position');
  // The second export is the first, byte for byte.
  assert.equal(readFileSync(path.join(tmp, 'rich2.gltf'), 'utf8'), readFileSync(file, 'utf8'));
});

for (const file of sampleFiles) {
  test(`round trip ${file}: the export validates and three.js agrees`, async () => {
    const out = path.join(tmp, `rt-${file}`);
    const dumped = tool('roundtrip', path.join(SAMPLES, file), out);
    await assertValid(out, file);
    compareExport(out, dumped, `${file} exported`);
    // And back in once more: the same world matrices (1e-12), the same ids.
    const back = tool('import', out);
    assert.deepEqual(back.nodes.map((n) => n.id), dumped.nodes.map((n) => n.id));
    back.nodes.forEach((n, i) => {
      const d = relDiff(n.world, dumped.nodes[i].world);
      assert.ok(d <= 1e-12, `${file}: node ${n.id} moved by ${d} in the round trip`);
    });
  });
}
