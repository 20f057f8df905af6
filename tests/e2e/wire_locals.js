'use strict';
/*
 * Locals entries (docs/protocol.md, "Locals entries (version 2)") against
 * the real server: float32 and float64 subscribers of a 3D rig, of a 2D
 * scene with its draw order, and with views (hidden), next to a JSON
 * subscriber, go through edits that change only transform channels (sent
 * as locals entries, in frames of version 2), edits that change other
 * fields or create nodes (sent whole), and both in one turn; after every
 * edit each binary mirror's records equal the JSON mirror's, the records
 * of the nodes just edited equal GET /api/scenes's, the matrices equal the
 * tree's (float32: rounded), the 2D order and the hidden ids agree; the
 * frames of version 2 did happen; a channels-only edit's float32 update
 * is at most a quarter of its JSON one; rigctl watch prints what a JSON
 * watcher would from such frames.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, tree, post, Client, createScene, skeletonOps, run, sleep, SANITIZED,
} = require('../lib/rigd.js');
const { WireClient, matrixDiffs, recordsOf } = require('../lib/wire.js');
const { perspectiveVp } = require('../lib/interest.js');

let server;

test.before(async () => {
  server = await startRigd({ args: ['--sync', 'normal'] });
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

const show = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? String(v) : v));

/* Three subscribers of 'scene' (f32, f64, JSON), each counting the binary
 * frames of version 2 it receives. */
async function subscribers(scene) {
  const clients = {};
  for (const format of ['f32', 'f64', 'json']) {
    const c = await WireClient.connect(server);
    c.v2 = 0;
    c.ws.on('message', (data, isBinary) => { if (isBinary && data[4] === 2) c.v2++; });
    await c.subscribe(scene, format);
    clients[format] = c;
  }
  return clients;
}

/* Every mirror against the JSON one and the tree at 'seq'; 'edited': ids
 * whose records must equal the tree's. */
async function check(scene, seq, clients, edited, what) {
  for (const c of Object.values(clients)) await c.waitSeq(scene, seq);
  const t = await tree(server, scene);
  assert.equal(t.seq, seq);
  const { f32, f64, json } = clients;
  /* A view's hidden nodes keep the matrices they had (docs/protocol.md,
   * Views): only the drawn ones are compared. */
  const drawn = (c) => {
    const out = {};
    for (const [id, n] of c.scenes.get(scene).nodes) if (!n.hidden) out[id] = n.world;
    return out;
  };
  const shownNodes = t.nodes.filter((n) => !json.scenes.get(scene).nodes.get(n.id)?.hidden);
  assert.deepEqual(matrixDiffs(drawn(f64), shownNodes, true), [], `${what}: float64 matrices`);
  assert.deepEqual(matrixDiffs(drawn(f32), shownNodes, false), [], `${what}: float32 matrices`);
  assert.deepEqual(recordsOf(f64, scene), recordsOf(json, scene), `${what}: f64 records`);
  assert.deepEqual(recordsOf(f32, scene), recordsOf(json, scene), `${what}: f32 records`);
  const mine = recordsOf(f32, scene);
  for (const n of t.nodes.filter((x) => edited.includes(x.id))) {
    const { world, ...want } = n;
    const { hidden, ...got } = mine[n.id];
    assert.deepEqual(got, want, `${what}: the record of ${n.id}`);
  }
  if (t.order) {
    for (const c of [f32, f64, json]) assert.deepEqual(c.scenes.get(scene).order, t.order, `${what}: order`);
  }
}

async function edits(editor, scene, clients, list) {
  for (const [k, ops] of list.entries()) {
    const ack = await editor.request({ type: 'edit', scene, ops });
    assert.equal(ack.type, 'ack', `edit ${k}: ${show(ack)}`);
    await check(scene, ack.seq, clients, ops.map((o) => o.id), `edit ${k}`);
  }
}

test('3D: channel edits travel as locals entries and every mirror ends equal to the tree', async () => {
  await createScene(server, 'loc3');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'loc3', ops: skeletonOps() });
  const clients = await subscribers('loc3');
  await edits(editor, 'loc3', clients, [
    [{ op: 'set', id: 'spine1', euler: [10, 20, 30] }],
    [{ op: 'set', id: 'hand_l', t: [0.1, 0.2, 0.3], s: [1, 2, 0.5], pivot: [0.01, 0, -0.02] }],
    [{ op: 'rotate', id: 'forearm_l', angle: 0.5, axis: [0, 0, 1] }],
    [{ op: 'set', id: 'head', name: 'Head', euler: [0, 5, 0] }],
    [{ op: 'set', id: 'head', r: [0.1, 0.2, 0.3, 0.9273618495495703] }],
    /* A sibling inserted before 'hand_r': its index moves; then hand_r's
     * channels change and its locals entry carries the new index. */
    [{ op: 'create', id: 'cuff', parent: 'forearm_r', index: 0, t: [0, 0.1, 0] }],
    [{ op: 'set', id: 'hand_r', euler: [0, 0, 45] }],
    [{ op: 'create', id: 'prop', parent: 'hand_l' }, { op: 'set', id: 'prop', t: [1, 2, 3] }],
    [{ op: 'set', id: 'prop', t: [3, 2, 1] }, { op: 'set', id: 'spine2', s: [1, 1.5, 1] }],
    [{ op: 'delete', id: 'prop' }, { op: 'create', id: 'prop', parent: 'hand_r', t: [0, 1, 0] }],
    [{ op: 'set', id: 'prop', euler: [90, 0, 0] }],
    [{ op: 'reparent', id: 'prop', parent: 'head', keep_world: true }],
    [{ op: 'set', id: 'root', euler: [-30, 180, 7.5] }],
  ]);
  /* Several batches in one turn: a channel edit folded with a rename of
   * the same node is sent whole. */
  const acks = await Promise.all([
    [{ op: 'set', id: 'neck', euler: [1, 2, 3] }],
    [{ op: 'set', id: 'neck', name: 'Neck' }],
    [{ op: 'set', id: 'spine3', t: [0, 0.2, 0] }],
  ].map((ops) => editor.request({ type: 'edit', scene: 'loc3', ops })));
  assert.ok(acks.every((a) => a.type === 'ack'), show(acks));
  await check('loc3', Math.max(...acks.map((a) => a.seq)), clients, ['neck', 'spine3'], 'one turn');
  assert.ok(clients.f32.v2 > 0 && clients.f64.v2 > 0, `frames of version 2: ${clients.f32.v2}, ${clients.f64.v2}`);
  /* A channels-only edit of a spine bone (46 matrices): float32 at most a
   * quarter of JSON (bench_wire measures the mean over every bone). */
  const ack = await editor.request({ type: 'edit', scene: 'loc3', ops: [{ op: 'set', id: 'spine1', euler: [0, 0, 12] }] });
  await check('loc3', ack.seq, clients, ['spine1'], 'spine1');
  const last = (c) => c.messages.filter((m) => m.type === 'update').pop().bytes;
  assert.ok(4 * last(clients.f32) <= last(clients.json), `f32 ${last(clients.f32)} B, JSON ${last(clients.json)} B`);
  for (const c of [editor, ...Object.values(clients)]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('2D: locals entries carry the angle; the draw order stays the tree\'s', async () => {
  const r = await post(server, '/api/scenes', { name: 'loc2', dims: 2 });
  assert.equal(r.status, 201, r.text);
  const editor = await Client.connect(server);
  const made = await editor.request({ type: 'edit', scene: 'loc2', ops: [
    { op: 'create', id: 'body', t: [0, 0, 0] },
    { op: 'create', id: 'arm', parent: 'body', t: [1, 0, 0], z: 1 },
    { op: 'create', id: 'leg', parent: 'body', t: [0, -1, 0], z: -1 },
  ] });
  assert.equal(made.type, 'ack', show(made));
  const clients = await subscribers('loc2');
  await edits(editor, 'loc2', clients, [
    [{ op: 'set', id: 'arm', angle: 30 }],
    [{ op: 'set', id: 'leg', t: [0.5, -1, 0], s: [1, 2, 1] }],
    [{ op: 'rotate', id: 'body', angle: 0.25 }],
    [{ op: 'set', id: 'arm', z: -2 }],
    [{ op: 'set', id: 'arm', angle: -45, pivot: [0.1, 0.2, 0] }],
    [{ op: 'set', id: 'leg', facing: 'left' }, { op: 'set', id: 'body', t: [2, 0, 0] }],
  ]);
  assert.ok(clients.f32.v2 > 0, 'frames of version 2');
  for (const c of [editor, ...Object.values(clients)]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('views: locals entries with hidden nodes keep every record the server\'s', async () => {
  await createScene(server, 'locv');
  const editor = await Client.connect(server);
  const ops = [];
  for (let g = 0; g < 4; g++) {
    ops.push({ op: 'create', id: `g${g}`, t: [30 * g, 0, 0] });
    for (let k = 0; k < 5; k++) {
      ops.push({ op: 'create', id: `g${g}-${k}`, parent: `g${g}`, t: [k * 3, 0, 0],
        bounds: { min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5] } });
    }
  }
  await editor.request({ type: 'edit', scene: 'locv', ops });
  const clients = await subscribers('locv');
  /* Each looks at group 0 only, from 20 above it. */
  const view = { vp: perspectiveVp(60, 640 / 480, 0.5, 200, [6, 0, 20]), viewport: [640, 480], min_px: 0 };
  for (const c of Object.values(clients)) {
    const from = c.messages.length;
    const reply = await c.request({ type: 'view', scene: 'locv', ...view });
    assert.notEqual(reply.type, 'error', show(reply));
    await c.waitFor((m) => m.scene === 'locv' && Array.isArray(m.hidden), { from, what: 'the view\'s frame' });
  }
  await edits(editor, 'locv', clients, [
    [{ op: 'set', id: 'g0-1', t: [3, 0.5, 0] }],
    [{ op: 'set', id: 'g3-2', t: [6, 1, 0] }],
    [{ op: 'set', id: 'g3', t: [0, 0, 0] }],
    [{ op: 'set', id: 'g3', t: [90, 0, 0] }, { op: 'set', id: 'g1-4', name: 'four' }],
  ]);
  const hidden = (c) => [...c.scenes.get('locv').nodes.values()].filter((n) => n.hidden).map((n) => n.id).sort();
  assert.deepEqual(hidden(clients.f32), hidden(clients.json));
  assert.deepEqual(hidden(clients.f64), hidden(clients.json));
  assert.ok(hidden(clients.json).length > 0, 'the view hides something');
  assert.ok(clients.f32.v2 > 0, 'frames of version 2');
  for (const c of [editor, ...Object.values(clients)]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('rigctl watch --format f32|f64 prints locals entries as a JSON watcher\'s records', async () => {
  await createScene(server, 'locc');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'locc', ops: skeletonOps() });
  for (const format of ['f32', 'f64']) {
    const until = (await tree(server, 'locc')).seq + 3;
    const watching = run('rigctl', ['--url', server.url, 'watch', 'locc', '--until-seq', String(until), '--format', format]);
    await sleep(SANITIZED ? 1500 : 500);
    let ack;
    for (const ops of [[{ op: 'set', id: 'spine1', euler: [5, 6, 7] }], [{ op: 'set', id: 'head', name: `H${format}` }],
      [{ op: 'set', id: 'head', t: [0, 0.3, 0.01] }]]) ack = await editor.request({ type: 'edit', scene: 'locc', ops });
    assert.equal(ack.seq, until);
    const r = await watching;
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].type, 'snapshot');
    const mirror = new Map();
    for (const m of lines) {
      if (m.type === 'snapshot') for (const n of m.nodes) mirror.set(n.id, n);
      else {
        for (const id of m.removed) mirror.delete(id);
        for (const n of m.nodes) mirror.set(n.id, n);
        for (const [id, w] of Object.entries(m.world)) mirror.get(id).world = w;
      }
    }
    assert.equal(lines[lines.length - 1].seq, until);
    const t = await tree(server, 'locc');
    const worlds = {};
    for (const [id, n] of mirror) worlds[id] = n.world;
    assert.deepEqual(matrixDiffs(worlds, t.nodes, format === 'f64'), []);
    for (const n of t.nodes) {
      const { world: a, ...restA } = mirror.get(n.id);
      const { world: b, ...restB } = n;
      assert.deepEqual(restA, restB, n.id);
    }
  }
  await editor.close();
});
