'use strict';
/*
 * glTF in and out over HTTP and rigctl, against the real rigd:
 * - every glTF sample model (tests/lib/gltf_samples.js) imports as ONE batch (one log
 *   line, undoable by its client, readable with ?at=) and every world
 *   matrix of GET /api/scenes/NAME agrees with three.js computing the file
 *   on its own (updateMatrixWorld) within 1e-9 relative;
 * - the server's demo rig exports as glTF that the Khronos validator
 *   accepts without errors, and export then import reproduces every world
 *   matrix within 1e-12;
 * - malformed files (tests/gltf/malformed) are refused with 4xx naming the
 *   node, and create nothing, not even the scene;
 * - rigctl import / export work as a script uses them.
 * The server runs with --max-ops 10 and --max-body 65536: an import is not
 * held to a client's ops limit, and only the glTF route takes large bodies.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { createRequire } = require('node:module');
const {
  SOURCE_DIR, startRigd, tree, request, get, post, assertSchema, Client, run, tempDir,
} = require('../lib/rigd.js');

const validator = createRequire(path.join(SOURCE_DIR, 'web', 'package.json'))('gltf-validator');
const { GLTF_SAMPLES: SAMPLES, sampleFiles, samplesPresent, skipWithoutSamples } = require('../lib/gltf_samples.js');
const MALFORMED = path.join(SOURCE_DIR, 'tests', 'gltf', 'malformed');
const TOL_THREE = 1e-9;
const TOL_ROUND_TRIP = 1e-12;

let THREE;
let threeWorlds;
let relDiff;
let server;
const dir = tempDir('rigd-gltf-e2e-');
const rigctl = (args, opts) => run('rigctl', ['--url', server.url, ...args], opts);

test.before(async () => {
  const ref = await import(pathToFileURL(path.join(__dirname, '..', 'lib', 'three_ref.mjs')).href);
  THREE = await ref.loadThree(SOURCE_DIR);
  threeWorlds = (doc) => ref.threeWorlds(THREE, doc);
  relDiff = ref.relDiff;
  server = await startRigd({ args: ['--max-ops', '10', '--max-body', '65536'] });
});
test.after(async () => {
  assert.equal(await server.stop('SIGTERM'), 0);
  fs.rmSync(dir, { recursive: true, force: true });
});

/* ---- helpers ---- */

/* POST a glTF body; validates the answer against the schema. */
async function importGltf(scene, body, query = '') {
  const r = await post(server, `/api/scenes/${scene}/gltf${query}`, body,
    { 'content-type': 'model/gltf+json' });
  assertSchema(r.status === 200 ? 'HttpGltfImported' : 'HttpError', r.json);
  return r;
}

/* A .glb holding 'doc' as its JSON chunk (no BIN chunk). */
function glbOf(doc) {
  let json = Buffer.from(JSON.stringify(doc), 'utf8');
  const pad = (4 - (json.length % 4)) % 4;
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const head = Buffer.alloc(20);
  head.write('glTF', 0, 'ascii');
  head.writeUInt32LE(2, 4);
  head.writeUInt32LE(20 + json.length, 8);
  head.writeUInt32LE(json.length, 12);
  head.write('JSON', 16, 'ascii');
  return Buffer.concat([head, json]);
}

async function validate(bytes, uri) {
  const report = await validator.validateBytes(new Uint8Array(bytes),
    { uri, format: 'gltf', maxIssues: 50 });
  return report.issues;
}

function issueText(issues) {
  return issues.messages.filter((m) => m.severity === 0)
    .map((m) => `${m.code} at ${m.pointer}: ${m.message}`).join('\n');
}

async function sceneNames() {
  const r = await get(server, '/api/scenes');
  return r.json.scenes.map((s) => s.name);
}

/* ---- import ---- */

test('the seven glTF samples are there', (t) => {
  if (skipWithoutSamples(t)) return;
  assert.equal(sampleFiles.length, 7, `found ${sampleFiles.join(', ')} in ${SAMPLES}`);
});

for (const [i, file] of sampleFiles.entries()) {
  test(`import ${file} over HTTP: one batch, world matrices as three.js, undoable`, async (t) => {
    const bytes = fs.readFileSync(path.join(SAMPLES, file));
    const doc = JSON.parse(bytes.toString('utf8'));
    const scene = `s${i}`;
    const client = `importer${i}`;
    /* Every other sample goes as .glb. */
    const body = i % 2 ? glbOf(doc) : bytes;
    const r = await importGltf(scene, body, `?client=${client}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.seq, 1);
    const report = r.json.report;
    assert.equal(report.ids.length, doc.nodes.length);
    assert.equal(r.json.recomputed, report.created);

    /* World matrices from the server against three.js from the file. */
    const live = await tree(server, scene);
    assert.equal(live.seq, 1);
    assert.equal(live.nodes.length, report.created);
    const byId = new Map(live.nodes.map((n) => [n.id, n]));
    const objects = threeWorlds(doc);
    let worst = 0;
    report.ids.forEach((id, k) => {
      if (id === null) return;
      const node = byId.get(id);
      assert.ok(node, `glTF node ${k} -> ${id} is not in the scene`);
      const d = relDiff(node.world, objects[k].matrixWorld.elements);
      assert.ok(d <= TOL_THREE, `${file}: node ${id} differs from three.js by ${d} relative`);
      worst = Math.max(worst, d);
    });
    t.diagnostic(`${file}: ${report.created} nodes, max relative difference ${worst.toExponential(2)}`);

    /* One log entry holding every create. */
    const log = await get(server, `/api/scenes/${scene}/log`);
    const lines = log.text.split('\n').filter((l) => l);
    assert.equal(lines.length, 1);
    const entry = JSON.parse(lines[0]);
    assert.equal(entry.seq, 1);
    assert.equal(entry.client, client);
    assert.equal(entry.ops.length, report.created);
    assert.ok(entry.ops.every((op) => op.op === 'create'));

    /* Undo by the import's client removes it; the past stays readable. */
    const ws = await Client.connect(server);
    try {
      const ack = await ws.request({ type: 'undo', scene, client });
      assert.equal(ack.type, 'ack', `${ack.code}: ${ack.message}`);
      assert.equal(Number(ack.seq), 2);
    } finally {
      ws.close();
    }
    assert.equal((await tree(server, scene)).nodes.length, 0);
    const past = await tree(server, scene, 1);
    assert.deepEqual(past.nodes.map((n) => n.world), live.nodes.map((n) => n.world));
  });
}

test('an import needs an empty or new scene, or a parent; options reach the importer', async (ctx) => {
  if (skipWithoutSamples(ctx)) return;
  const fox = fs.readFileSync(path.join(SAMPLES, 'Fox.gltf'));
  let r = await importGltf('fox', fox);
  assert.equal(r.status, 200, r.text);
  const n = r.json.report.created;
  r = await importGltf('fox', fox);
  assert.equal(r.status, 409);
  assert.equal(r.json.error.code, 'scene_not_empty');
  /* Under a node: ids made unique against the scene's. */
  r = await importGltf('fox', fox, '?parent=root');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.seq, 2);
  const t = await tree(server, 'fox');
  assert.equal(t.nodes.length, 2 * n);
  const second = r.json.report.ids.filter((id) => id !== null);
  assert.ok(second.every((id) => /-2$/.test(id)), second.join(' '));
  assert.equal(t.nodes.find((x) => x.id === second[0]).parent, 'root');
  r = await importGltf('nowhere', fox, '?parent=root');
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'unknown_scene');
  /* A parent that does not exist: refused by the edit, nothing changes. */
  r = await importGltf('fox', fox, '?parent=ghost');
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'unknown_node');
  assert.equal((await tree(server, 'fox')).seq, 2);

  /* A file's scene by index or name; no such scene: 404, nothing made. */
  const ori = fs.readFileSync(path.join(SAMPLES, 'OrientationTest.gltf'));
  r = await importGltf('ori_by_name', ori, '?scene_name=Scene');
  assert.equal(r.status, 200, r.text);
  r = await importGltf('ori_bad', ori, '?scene=7');
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'not_found');
  r = await importGltf('ori_bad', ori, '?scene=x');
  assert.equal(r.status, 400);
  assert.equal(r.json.error.field, 'scene');
  assert.ok(!(await sceneNames()).includes('ori_bad'));

  /* A shear: refused naming the node, or kept as the nearest TRS. */
  const shear = JSON.stringify({ asset: { version: '2.0' },
    nodes: [{ name: 'root' }, { name: 'sheared', matrix: [1, 0, 0, 0, 0.5, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] }],
    scenes: [{ nodes: [0] }] });
  const withChild = JSON.parse(shear);
  withChild.nodes[0].children = [1];
  r = await importGltf('shear', JSON.stringify(withChild));
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'not_trs');
  assert.match(r.json.error.message, /^node 1 \('sheared'\)/);
  assert.ok(!(await sceneNames()).includes('shear'));
  r = await importGltf('shear', JSON.stringify(withChild), '?nearest=1');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.report.matrix_nodes[0].exact, false);
  assert.ok(r.json.report.matrix_nodes[0].error > 0.1);
});

test('malformed files: 4xx naming the node, nothing created', async () => {
  const expect = fs.readFileSync(path.join(MALFORMED, 'expect.txt'), 'utf8').split('\n')
    .filter((l) => l && !l.startsWith('#')).map((l) => l.split(/\s+/));
  assert.ok(expect.length >= 20);
  const before = await sceneNames();
  for (const [i, [file, code, node]] of expect.entries()) {
    const r = await importGltf(`bad${i}`, fs.readFileSync(path.join(MALFORMED, file)));
    assert.ok(r.status >= 400 && r.status < 500, `${file}: ${r.status}`);
    assert.equal(r.json.error.code, code, file);
    if (Number(node) >= 0) assert.match(r.json.error.message, new RegExp(`^node ${node}\\b`), file);
  }
  assert.deepEqual(await sceneNames(), before, 'a refused import creates no scene');
});

test('only the glTF route takes bodies over --max-body', async () => {
  const nodes = [];
  for (let k = 0; k < 400; k++) nodes.push({ name: `n${k}`, translation: [k, 0, 0], extras: { pad: 'x'.repeat(200) } });
  const big = JSON.stringify({ asset: { version: '2.0' }, nodes, scenes: [{ nodes: nodes.map((_, k) => k) }] });
  assert.ok(big.length > 65536);
  let r = await importGltf('big', big);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.report.created, 400, 'one batch of more ops than --max-ops 10');
  r = await post(server, '/api/scenes/big/edits', big);
  assert.equal(r.status, 413);
  assert.equal(r.json.error.code, 'too_large');
});

/* ---- export ---- */

test('the demo rig exports valid glTF; export then import keeps every world matrix', async (t) => {
  const r = await get(server, '/api/scenes/demo/gltf');
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'], /^model\/gltf\+json/);
  const issues = await validate(Buffer.from(r.text), 'demo.gltf');
  assert.equal(issues.numErrors, 0, issueText(issues));
  t.diagnostic(`demo: validator ${issues.numErrors} errors, ${issues.numWarnings} warnings`);
  const doc = JSON.parse(r.text);
  const round = (v) => v.map((x) => Math.round(x * 1e4) / 1e4 + 0);
  assert.deepEqual(round(doc.nodes.find((n) => n.name === 'Base' || n.name === 'base').rotation),
    [0, 0.2588, 0, 0.9659]);

  /* Every scene this test made that still has nodes, and the demo (alone
   * when the samples are absent and nothing was imported). */
  const scenes = (await get(server, '/api/scenes')).json.scenes.filter((s) => s.nodes > 0);
  assert.ok(scenes.length >= (samplesPresent ? 4 : 1));
  let worst = 0;
  for (const { name } of scenes) {
    const exp = await get(server, `/api/scenes/${name}/gltf`);
    assert.equal(exp.status, 200);
    const v = await validate(Buffer.from(exp.text), `${name}.gltf`);
    assert.equal(v.numErrors, 0, `${name}: ${issueText(v)}`);
    const back = await importGltf(`rt_${name}`, exp.text);
    assert.equal(back.status, 200, back.text);
    const a = await tree(server, name);
    const b = await tree(server, `rt_${name}`);
    assert.deepEqual(b.nodes.map((n) => n.id), a.nodes.map((n) => n.id), `${name}: ids and order`);
    a.nodes.forEach((n, k) => {
      const d = relDiff(b.nodes[k].world, n.world);
      assert.ok(d <= TOL_ROUND_TRIP, `${name}: node ${n.id} moved by ${d} relative`);
      worst = Math.max(worst, d);
    });
  }
  t.diagnostic(`round trip of ${scenes.length} scenes: max relative difference ${worst.toExponential(2)}`);
});

test('GET .../gltf?at=SEQ exports the past; errors are JSON', async () => {
  let r = await post(server, '/api/scenes/demo/edits', { ops: [{ op: 'delete', id: 'hand' }] });
  assert.equal(r.status, 200, r.text);
  const seq = r.json.seq;
  const now = JSON.parse((await get(server, '/api/scenes/demo/gltf')).text);
  const then = JSON.parse((await get(server, `/api/scenes/demo/gltf?at=${seq - 1}`)).text);
  assert.ok(then.nodes.length > now.nodes.length);
  assert.ok(then.nodes.some((n) => n.extras?.rigd?.id === 'hand'));
  r = await get(server, '/api/scenes/demo/gltf?at=999');
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'bad_seq');
  r = await get(server, '/api/scenes/nope/gltf');
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'unknown_scene');
  r = await request(server, 'PUT', '/api/scenes/demo/gltf', 'x');
  assert.equal(r.status, 405);
});

/* ---- rigctl ---- */

test('rigctl import and export, as a script uses them', async (t) => {
  if (skipWithoutSamples(t)) return;
  const file = path.join(SAMPLES, 'RiggedFigure.gltf');
  let r = await rigctl(['import', 'cli_fig', file]);
  assert.equal(r.code, 0, r.stderr);
  const ans = JSON.parse(r.stdout);
  assertSchema('HttpGltfImported', ans);
  assert.equal(ans.seq, 1);
  r = await rigctl(['import', 'cli_fig', file]);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).error.code, 'scene_not_empty');
  r = await rigctl(['import', 'cli_bad', path.join(MALFORMED, 'cycle.gltf')]);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).error.code, 'cycle');
  r = await rigctl(['import', 'cli_fig', path.join(dir, 'missing.gltf')]);
  assert.equal(r.code, 1);
  r = await rigctl(['import', 'cli_fig']);
  assert.equal(r.code, 2);
  r = await rigctl(['import', 'cli_ori', path.join(SAMPLES, 'OrientationTest.gltf'), '--scene-index', '0', '--nearest']);
  assert.equal(r.code, 0, r.stdout);

  /* export -o writes the file only on success; stdout otherwise. */
  const out = path.join(dir, 'fig.gltf');
  r = await rigctl(['export', 'cli_fig', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '');
  const exported = fs.readFileSync(out);
  assert.equal((await validate(exported, 'fig.gltf')).numErrors, 0);
  r = await rigctl(['export', 'cli_fig', '--at', '0']);
  assert.equal(r.code, 0);
  assert.equal(JSON.parse(r.stdout).nodes, undefined);
  const missing = path.join(dir, 'nothing.gltf');
  r = await rigctl(['export', 'no_such_scene', '-o', missing]);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).error.code, 'unknown_scene');
  assert.ok(!fs.existsSync(missing));

  /* The export imports again to the same world matrices. */
  r = await rigctl(['import', 'cli_fig2', out]);
  assert.equal(r.code, 0, r.stdout);
  const a = await tree(server, 'cli_fig');
  const b = await tree(server, 'cli_fig2');
  assert.deepEqual(b.nodes.map((n) => [n.id, n.world]), a.nodes.map((n) => [n.id, n.world]));
  r = await rigctl(['--help']);
  assert.match(r.stdout, /import SCENE FILE/);
  assert.match(r.stdout, /export SCENE/);
});
