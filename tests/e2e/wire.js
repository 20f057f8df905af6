'use strict';
/*
 * Binary frames (docs/protocol.md, "Binary frames") against the real
 * server: a float64 subscriber, a float32 subscriber and a JSON subscriber
 * of the same scene go through sets, creates, deletes (whose handles the
 * next creates reuse), reparents and renames; after every edit the float64
 * and JSON mirrors equal GET /api/scenes/{name} bit for bit, the float32
 * mirror equals it rounded to float32, and the node records agree. Then:
 * a bad format is refused and the connection stays; a subscription
 * switches format; clients at one cursor get byte-identical frames;
 * rigctl watch --format prints what a JSON watcher would; the Python
 * decoder of the docs decodes real frames; and a stalled binary
 * subscriber delays nobody (the promise of tests/e2e/slow.js).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const {
  startRigd, tree, worldsOf, Client, createScene, skeletonOps, sleep, percentile, run,
  assertSchema, tempDir, SOURCE_DIR, SANITIZED,
} = require('../lib/rigd.js');
const { editLatencies } = require('../lib/latency.js');
const { WireClient, matrixDiffs, recordsOf } = require('../lib/wire.js');

let server;

/* A message for an assertion's text (receivedAt is a BigInt). */
const show = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? String(v) : v));

test.before(async () => {
  server = await startRigd({ args: ['--sync', 'normal'] });
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

/* The edits: every kind of op, handles freed and reused, a batch that
 * deletes and creates at once, a rename that moves no matrix. */
const EDITS = [
  [{ op: 'set', id: 'spine1', euler: [10, 20, 30] }],
  [{ op: 'set', id: 'root', t: [0.1, 1.2, -0.3], r: [0.1, 0.2, 0.3, 0.9273618495495703] }],
  [{ op: 'create', id: 'prop', parent: 'hand_l', t: [0.01, 0.02, 0.03] },
    { op: 'create', id: 'prop2', parent: 'prop', t: [0, 0.1, 0], s: [1, 2, 0.5] }],
  [{ op: 'reparent', id: 'prop', parent: 'hand_r', keep_world: true }],
  [{ op: 'reparent', id: 'forearm_l', parent: 'spine3' }],
  [{ op: 'set', id: 'spine2', s: [1, 2, 0.5] }, { op: 'set', id: 'hand_l', euler: [0, 0, 45] }],
  [{ op: 'delete', id: 'prop' }],
  [{ op: 'delete', id: 'toe2_l' }, { op: 'create', id: 'new1', parent: 'root', t: [0, 0.5, 0] }],
  [{ op: 'create', id: 'new2', parent: 'new1', t: [0.3, 0, 0] },
    { op: 'create', id: 'new3', parent: 'new2', euler: [90, 0, 0] }],
  [{ op: 'set', id: 'head', name: 'Head' }],
  [{ op: 'delete', id: 'spine3' }],
  [{ op: 'create', id: 'spine3', parent: 'spine2', t: [0, 0.1, 0] },
    { op: 'reparent', id: 'new1', parent: 'spine3' }],
  [{ op: 'set', id: 'root', euler: [-30, 180, 7.5] }],
];

/* Every mirror against the tree at 'seq'. */
async function checkAll(scene, seq, { f64, f32, json }, what) {
  for (const c of [f64, f32, json]) await c.waitSeq(scene, seq);
  const t = await tree(server, scene);
  assert.equal(t.seq, seq);
  assert.deepEqual(matrixDiffs(f64.worlds(scene), t.nodes, true), [], `${what}: float64 mirror`);
  assert.deepEqual(matrixDiffs(json.worlds(scene), t.nodes, true), [], `${what}: JSON mirror`);
  assert.deepEqual(matrixDiffs(f32.worlds(scene), t.nodes, false), [], `${what}: float32 mirror`);
  assert.deepEqual(recordsOf(f64, scene), recordsOf(json, scene), `${what}: f64 records`);
  assert.deepEqual(recordsOf(f32, scene), recordsOf(json, scene), `${what}: f32 records`);
}

test('binary float64 and JSON subscribers end every update equal to the tree; float32 within rounding', async () => {
  await createScene(server, 'wire');
  const editor = await Client.connect(server);
  assert.equal((await editor.request({ type: 'edit', scene: 'wire', ops: skeletonOps() })).type, 'ack');
  const clients = {
    f64: await WireClient.connect(server),
    f32: await WireClient.connect(server),
    json: await WireClient.connect(server),
  };
  assert.equal((await clients.f64.subscribe('wire', 'f64')).binary, true);
  assert.equal((await clients.f32.subscribe('wire', 'f32')).binary, true);
  assert.equal((await clients.json.subscribe('wire')).binary, undefined);
  const snap = await tree(server, 'wire');
  await checkAll('wire', snap.seq, clients, 'snapshot');
  for (const [k, ops] of EDITS.entries()) {
    const ack = await editor.request({ type: 'edit', scene: 'wire', ops });
    assert.equal(ack.type, 'ack', `edit ${k}: ${show(ack)}`);
    await checkAll('wire', ack.seq, clients, `edit ${k}`);
  }
  /* Several batches in one turn (sent without waiting), folded into one
   * update per subscriber at most. */
  const acks = await Promise.all([0, 1, 2, 3].map((i) => editor.request({ type: 'edit', scene: 'wire',
    ops: [{ op: 'set', id: 'spine2', euler: [i * 10, 0, 0] }, { op: 'delete', id: `new${3 - (i % 3)}` },
      { op: 'create', id: `new${3 - (i % 3)}`, parent: 'spine3', t: [i, 0, 0] }] })));
  assert.ok(acks.every((a) => a.type === 'ack'), show(acks));
  await checkAll('wire', Math.max(...acks.map((a) => a.seq)), clients, 'one turn of batches');
  /* The binary frames are smaller than the JSON ones. */
  const bytes = (c) => c.messages.filter((m) => m.type === 'update').reduce((a, m) => a + m.bytes, 0);
  assert.ok(bytes(clients.f32) < bytes(clients.f64) && bytes(clients.f64) < bytes(clients.json),
    `update bytes: f32 ${bytes(clients.f32)}, f64 ${bytes(clients.f64)}, JSON ${bytes(clients.json)}`);
  for (const c of [editor, ...Object.values(clients)]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('a bad format is refused with a clear error and the connection stays; a subscription switches format', async () => {
  await createScene(server, 'fmt');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'fmt', ops: skeletonOps() });
  const c = await WireClient.connect(server);
  for (const format of ['f16', 'F32', 4, null, '']) {
    const r = await c.request({ type: 'subscribe', scene: 'fmt', format });
    assert.equal(r.type, 'error', show(r));
    assert.equal(r.code, 'bad_field');
    assert.equal(r.field, 'format');
  }
  const r = await c.request({ type: 'edit', scene: 'fmt', ops: [], format: 'f32' });
  assert.equal(r.code, 'bad_field');
  assert.equal(r.field, 'format');
  assert.equal(c.closeCode, undefined, 'the connection stays');
  assert.equal(c.scenes.size, 0, 'nothing was subscribed');
  /* JSON, then float32, then float64 again on the same subscription: a
   * fresh snapshot in each format. */
  assert.equal((await c.subscribe('fmt', 'json')).binary, undefined);
  assert.equal((await c.subscribe('fmt', 'f32')).binary, true);
  let ack = await editor.request({ type: 'edit', scene: 'fmt', ops: [{ op: 'set', id: 'neck', euler: [1, 2, 3] }] });
  await c.waitSeq('fmt', ack.seq);
  const last = c.messages[c.messages.length - 1];
  assert.equal(last.type, 'update');
  assert.equal(last.binary, true);
  assert.equal((await c.subscribe('fmt', 'f64')).binary, true);
  ack = await editor.request({ type: 'edit', scene: 'fmt', ops: [{ op: 'set', id: 'neck', euler: [4, 5, 6] }] });
  await c.waitSeq('fmt', ack.seq);
  assert.deepEqual(matrixDiffs(c.worlds('fmt'), (await tree(server, 'fmt')).nodes, true), []);
  assert.deepEqual(c.schemaViolations, []);
  await c.close();
  await editor.close();
});

test('clients at one cursor get the same frame, byte for byte', async () => {
  await createScene(server, 'share');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'share', ops: skeletonOps() });
  const raw = [];
  for (let i = 0; i < 3; i++) {
    const c = await WireClient.connect(server);
    const frames = [];
    c.ws.on('message', (data, isBinary) => { if (isBinary) frames.push(Buffer.from(data)); });
    await c.subscribe('share', 'f32');
    raw.push({ c, frames });
  }
  const ack = await editor.request({ type: 'edit', scene: 'share', ops: [{ op: 'set', id: 'spine1', euler: [0, 45, 0] }] });
  for (const { c } of raw) await c.waitSeq('share', ack.seq);
  const last = raw.map(({ frames }) => frames[frames.length - 1]);
  assert.ok(last[0].equals(last[1]) && last[0].equals(last[2]), 'one encoded update, shared');
  for (const { c } of raw) await c.close();
  await editor.close();
});

test('rigctl watch --format f32|f64 prints what a JSON watcher prints', async () => {
  await createScene(server, 'cli');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'cli', ops: skeletonOps() });
  const url = server.url;
  for (const format of ['f64', 'f32']) {
    const until = (await tree(server, 'cli')).seq + 3;
    const watching = run('rigctl', ['--url', url, 'watch', 'cli', '--until-seq', String(until), '--format', format]);
    /* Give it time to subscribe, so that it sees updates after its
     * snapshot (a late one would see a snapshot at 'until' only). */
    await sleep(SANITIZED ? 1500 : 500);
    let ack;
    for (const ops of EDITS.slice(2, 5)) ack = await editor.request({ type: 'edit', scene: 'cli', ops });
    assert.equal(ack.seq, until);
    const r = await watching;
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(lines.length >= 2, r.stdout);
    assert.equal(lines[0].type, 'snapshot');
    assert.equal(lines[1].type, 'update');
    const mirror = new Map();
    for (const m of lines) {
      assertSchema('ServerMessage', m);
      if (m.type === 'snapshot') for (const n of m.nodes) mirror.set(n.id, n);
      else {
        for (const id of m.removed) mirror.delete(id);
        for (const n of m.nodes) mirror.set(n.id, n);
        for (const [id, w] of Object.entries(m.world)) mirror.get(id).world = w;
      }
    }
    assert.equal(lines[lines.length - 1].seq, ack.seq);
    const t = await tree(server, 'cli');
    const worlds = {};
    for (const [id, n] of mirror) worlds[id] = n.world;
    assert.deepEqual(matrixDiffs(worlds, t.nodes, format === 'f64'), []);
    for (const n of t.nodes) {
      const { world: a, ...restA } = mirror.get(n.id);
      const { world: b, ...restB } = n;
      assert.deepEqual(restA, restB, n.id);
    }
    /* Undo the three edits' structure for the next format's round. */
    await editor.request({ type: 'edit', scene: 'cli', ops: [{ op: 'delete', id: 'prop' },
      { op: 'reparent', id: 'forearm_l', parent: 'upper_arm_l' }] });
  }
  const bad = await run('rigctl', ['--url', url, 'watch', 'cli', '--format', 'f16']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--format/);
  await editor.close();
});

test('the Python decoder of docs/protocol.md decodes real frames', async () => {
  /* python3 is installed by scripts/install-deps.sh for this test. */
  execFileSync('python3', ['-c', 'import json, struct']);
  const doc = fs.readFileSync(path.join(SOURCE_DIR, 'docs', 'protocol.md'), 'utf8');
  const code = /A decoder in Python[^]*?```python\n([^]*?)```/.exec(doc)[1];
  const dir = tempDir('rigd-wire-py-');
  const script = path.join(dir, 'decode.py');
  fs.writeFileSync(script, `${code}
import sys
names, records = {}, {}
for f in sys.argv[1:]:
    print(json.dumps(decode_frame(open(f, "rb").read(), names, records)))
`);
  await createScene(server, 'py');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'py', ops: skeletonOps() });
  for (const format of ['f32', 'f64']) {
    const c = await WireClient.connect(server);
    const frames = [];
    c.ws.on('message', (data, isBinary) => { if (isBinary) frames.push(Buffer.from(data)); });
    await c.subscribe('py', format);
    let ack;
    for (const ops of EDITS.slice(0, 4)) ack = await editor.request({ type: 'edit', scene: 'py', ops });
    await c.waitSeq('py', ack.seq);
    const files = frames.map((f, i) => { const p = path.join(dir, `${format}-${i}.bin`); fs.writeFileSync(p, f); return p; });
    const out = execFileSync('python3', [script, ...files], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    const decoded = c.messages.filter((m) => m.binary).map(({ binary, bytes, receivedAt, ...m }) => m);
    assert.deepEqual(out, decoded);
    /* Undo the structure for the next round. */
    await editor.request({ type: 'edit', scene: 'py', ops: [{ op: 'delete', id: 'prop' }] });
    await c.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
  await editor.close();
});

/*
 * Turns the root as fast as acks come back for 'ms' (tests/lib/latency.js);
 * every 25th edit also deletes a leaf and creates another (so the stalled
 * client's catch-up update reuses handles). 'state.i' counts edits across
 * calls, so leaf names stay unique.
 */
function editFor(editor, watchers, ms, state) {
  return editLatencies(editor, watchers, ms, {
    scene: 'slow',
    mustAck: true,
    opsFor: () => {
      const i = state.i++;
      const ops = [{ op: 'set', id: 'root', euler: [0, (i * 3) % 360, 0] }];
      if (i % 25 === 0) {
        ops.push({ op: 'delete', id: `leaf${i - 25}` },
          { op: 'create', id: `leaf${i}`, parent: 'head', t: [0, i * 1e-3, 0] });
      }
      return ops;
    },
  });
}

test('a stalled binary subscriber delays nobody and catches up exactly', async () => {
  await createScene(server, 'slow');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'slow', ops: [...skeletonOps(),
    { op: 'create', id: 'leaf-25', parent: 'head' }] });
  const watchers = [];
  for (const format of ['f32', 'f64', 'json']) {
    const w = await WireClient.connect(server, { validate: false });
    await w.subscribe('slow', format);
    watchers.push(w);
  }
  const state = { i: 0 };
  await editFor(editor, watchers, 1000, state);  /* warm up */
  const control = await editFor(editor, watchers, 3000, state);

  const stalled = await WireClient.connect(server, { validate: false });
  await stalled.subscribe('slow', 'f64');
  const seen = stalled.messages.length;
  stalled.ws._socket.pause();
  await sleep(200);
  const during = await editFor(editor, watchers, 3000, state);
  stalled.ws._socket.resume();
  const final = await tree(server, 'slow');
  await stalled.waitSeq('slow', final.seq, 30000);
  assert.deepEqual(matrixDiffs(stalled.worlds('slow'), final.nodes, true), []);
  const frames = stalled.messages.slice(seen).filter((m) => m.type === 'update' || m.type === 'snapshot');
  assert.ok(frames.length < during.edits, `coalesced: ${frames.length} frames for ${during.edits} edits`);
  for (const w of watchers) {
    await w.waitSeq('slow', final.seq);
    assert.deepEqual(matrixDiffs(w.worlds('slow'), final.nodes, w !== watchers[0]), []);
  }
  const p50 = (r) => percentile(r.latencies, 50);
  console.log(`# control: ${control.edits} edits, p50 ${p50(control).toFixed(2)} ms; with a stalled binary subscriber: ${during.edits} edits, p50 ${p50(during).toFixed(2)} ms; it caught up with ${frames.length} frames`);
  assert.ok(p50(during) <= 2 * p50(control) + 50, `p50 ${p50(during)} ms with the stalled client vs ${p50(control)} ms`);
  assert.ok(during.edits >= control.edits / 4, `the editor kept its pace (${during.edits} vs ${control.edits} edits)`);
  for (const c of [editor, stalled, ...watchers]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});
