'use strict';
/*
 * How the nodes of a 2D scene are drawn, against the real rigd over HTTP and
 * websockets: the fields layer, z and facing in node records, refused with
 * the op, the field and the reason (and nothing logged); the draw order in
 * snapshots, in the tree (also ?at=), and in the very update that carries
 * the matrices of the same seq; a slow client that skipped the seq of an
 * order change still gets the new order; a binary f32 subscriber gets the
 * same order in its frames' JSON section; a log exported and imported into
 * a new 2D scene gives the same tree; and a restart keeps it all.
 * Everything the server sends is validated against
 * schema/protocol.schema.json.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, post, tree, postEdit, Client, sleep, run,
} = require('../lib/rigd.js');
const { WireClient } = require('../lib/wire.js');

let server;

test.before(async () => {
  server = await startRigd({ args: ['--sync', 'normal'] });
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

/* The artwork the layers below name: a layer must name an asset of the
 * scene and one of its groups, so each asset is stored by an SVG import
 * (POST .../svg), whose one node is deleted again: the scene starts with
 * the assets and no node. */
const ART = {
  'hero.svg': ['torso', 'head', 'armL', 'foreL', 'armR', 'legs'], 'f.svg': ['a'], 'other.svg': ['arm-2'],
};

async function create2d(srv, name, { art = true } = {}) {
  const r = await post(srv, '/api/scenes', { name, dims: 2 });
  assert.equal(r.status, 201, r.text);
  if (!art) return;
  for (const [file, ids] of Object.entries(ART)) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg">${ids.map((id) => `<g id="${id}"/>`).join('')}</svg>`;
    const imp = await post(srv, `/api/scenes/${name}/svg`, { file, svg, manifest: [{ id: ids[0], pivot: [0, 0] }] });
    assert.equal(imp.status, 200, imp.text);
    const del = await postEdit(srv, name, { ops: [{ op: 'delete', id: ids[0] }] });
    assert.equal(del.status, 200, del.text);
  }
}

async function edit(srv, scene, ops) {
  const r = await postEdit(srv, scene, { ops });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/* A character: the body faces right at rest; each arm has its own z per
 * facing (the far arm behind the torso, the near one in front), and a
 * bone without artwork is not drawn. */
const heroOps = () => [
  { op: 'create', id: 'hero', t: [300, 200, 0] },
  { op: 'create', id: 'torso', parent: 'hero', layer: 'hero.svg#torso' },
  { op: 'create', id: 'head', parent: 'torso', layer: 'hero.svg#head', z: 1, t: [0, -80, 0] },
  { op: 'create', id: 'armL', parent: 'torso', layer: 'hero.svg#armL', z: { right: -1, left: 2 } },
  { op: 'create', id: 'foreL', parent: 'armL', layer: 'hero.svg#foreL', z: { right: -1, left: 2 }, t: [60, 0, 0] },
  { op: 'create', id: 'armR', parent: 'torso', layer: 'hero.svg#armR', z: { right: 2, left: -1 } },
  { op: 'create', id: 'bone', parent: 'torso', z: -9 },
  { op: 'create', id: 'legs', parent: 'hero', layer: 'hero.svg#legs' },
];
const RIGHT = ['armL', 'foreL', 'torso', 'legs', 'head', 'armR'];
const LEFT = ['armR', 'torso', 'legs', 'head', 'armL', 'foreL'];

const nodeOf = (t, id) => t.nodes.find((n) => n.id === id);

test('fields in node records; the order in the tree, the snapshot and ?at=', async () => {
  await create2d(server, 'hero');
  const made = await edit(server, 'hero', heroOps());
  const t = await tree(server, 'hero');
  assert.deepEqual(t.order, RIGHT);
  const arm = nodeOf(t, 'armL');
  assert.equal(arm.layer, 'hero.svg#armL');
  assert.deepEqual(arm.z, { right: -1, left: 2 });
  assert.equal(arm.facing, null);
  assert.equal(nodeOf(t, 'head').z, 1);
  assert.equal(nodeOf(t, 'hero').layer, null);
  assert.equal(nodeOf(t, 'hero').z, 0);

  const c = await Client.connect(server);
  const snap = await c.subscribe('hero');
  assert.deepEqual(snap.order, RIGHT);
  assert.equal(snap.nodes.find((n) => n.id === 'armL').layer, 'hero.svg#armL');

  /* A z set to equal values shows as one number. */
  const flipped = await edit(server, 'hero', [{ op: 'set', id: 'hero', facing: 'left' },
    { op: 'set', id: 'head', z: { right: 3, left: 3 } }]);
  /* Facing left, with the head now in front of everything. */
  const leftHead = ['armR', 'torso', 'legs', 'armL', 'foreL', 'head'];
  assert.deepEqual((await tree(server, 'hero')).order, leftHead);
  assert.equal(nodeOf(await tree(server, 'hero'), 'head').z, 3);
  assert.equal(nodeOf(await tree(server, 'hero'), 'hero').facing, 'left');
  /* Time travel: the order as of each seq. */
  assert.deepEqual((await tree(server, 'hero', made.seq)).order, RIGHT);
  assert.deepEqual((await tree(server, 'hero', flipped.seq)).order, leftHead);
  assert.deepEqual((await tree(server, 'hero', 0)).order, []);
  /* A 3D scene's answers have no order and no drawing fields. */
  await post(server, '/api/scenes', { name: 'flat' });
  await edit(server, 'flat', [{ op: 'create', id: 'a' }]);
  const flat = await tree(server, 'flat');
  assert.equal(flat.order, undefined);
  assert.equal('layer' in flat.nodes[0], false);
  assert.deepEqual(c.schemaViolations, []);
  await c.close();
});

test('one batch that flips a facing and turns bones: one update with the matrices and the order', async () => {
  await create2d(server, 'flip');
  await edit(server, 'flip', heroOps());
  const watcher = await Client.connect(server);
  const editor = await Client.connect(server);
  await watcher.subscribe('flip');
  const from = watcher.messages.length;
  const ack = await editor.request({ type: 'edit', scene: 'flip', ops: [
    { op: 'set', id: 'hero', s: [-1, 1, 1] },         /* mirrored: the root faces left */
    { op: 'rotate', id: 'armL', angle: 30 },
    { op: 'rotate', id: 'foreL', angle: 15 },
  ] });
  assert.equal(ack.type, 'ack', ack.message);
  const upd = await watcher.waitFor((m) => m.type === 'update' && m.seq >= ack.seq, { from });
  assert.equal(upd.seq, ack.seq, 'the batch is one update');
  assert.deepEqual(upd.order, LEFT, 'the order of this seq, in the same update');
  for (const id of ['hero', 'armL', 'foreL', 'torso']) assert.ok(upd.world[id], `the matrix of ${id}`);
  const t = await tree(server, 'flip');
  assert.deepEqual(upd.world.foreL, nodeOf(t, 'foreL').world);
  /* A batch that changes no order carries none. */
  const next = watcher.messages.length;
  const ack2 = await editor.request({ type: 'edit', scene: 'flip', ops: [{ op: 'rotate', id: 'armL', angle: 5 }] });
  const upd2 = await watcher.waitFor((m) => m.type === 'update' && m.seq === ack2.seq, { from: next });
  assert.equal(upd2.order, undefined);
  /* Mirrored back: the order flips back, with its update. */
  const ack3 = await editor.request({ type: 'edit', scene: 'flip', ops: [{ op: 'set', id: 'hero', s: [1, 1, 1] }] });
  const upd3 = await watcher.waitFor((m) => m.type === 'update' && m.seq === ack3.seq, { from: next });
  assert.deepEqual(upd3.order, RIGHT);
  assert.deepEqual(watcher.scenes.get('flip').order, (await tree(server, 'flip')).order);
  for (const c of [watcher, editor]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('a slow client that skipped the seq of an order change gets the new order', async () => {
  await create2d(server, 'crowd');
  /* Many nodes under the root, so that every turn of the root is a large
   * update (about 1.2 MB) and a client that stops reading falls behind at
   * once: forty of them are far more than the socket buffers of both ends
   * hold, so by the time of the change the server cannot write to it. */
  const ops = heroOps();
  for (let i = 0; i < 4000; i++) ops.push({ op: 'create', id: `p${i}`, parent: 'hero', t: [i, 0, 0] });
  await edit(server, 'crowd', ops);
  const editor = await Client.connect(server);
  const slow = await Client.connect(server);
  await slow.subscribe('crowd');
  const seen = slow.messages.length;
  slow.ws._socket.pause();
  const turn = (i) => editor.request({ type: 'edit', scene: 'crowd', ops: [{ op: 'set', id: 'hero', angle: i }] });
  for (let i = 1; i <= 40; i++) assert.equal((await turn(i)).type, 'ack');
  const change = await editor.request({ type: 'edit', scene: 'crowd', ops: [{ op: 'set', id: 'hero', facing: 'left' }] });
  for (let i = 41; i <= 60; i++) assert.equal((await turn(i)).type, 'ack');
  await sleep(100);
  slow.ws._socket.resume();
  const final = await tree(server, 'crowd');
  await slow.waitSeq('crowd', final.seq, 30000);
  assert.deepEqual(slow.scenes.get('crowd').order, LEFT);
  assert.deepEqual(final.order, LEFT);
  /* The frame that brought the client past the change's seq: it skipped
   * that seq (coalesced) and carries the order. */
  const frames = slow.messages.slice(seen).filter((m) => m.type === 'update' || m.type === 'snapshot');
  let prevSeq = slow.messages.slice(0, seen).filter((m) => m.type === 'snapshot').pop().seq;
  let covering = null;
  let coveringFrom = -1;
  for (const f of frames) {
    if (!covering && f.seq >= change.seq) {
      covering = f;
      coveringFrom = prevSeq;
    }
    prevSeq = f.seq;
  }
  assert.ok(covering, 'a frame brought the client past the change');
  assert.equal(covering.type, 'update');
  assert.ok(coveringFrom < change.seq && change.seq < covering.seq,
    `the change's seq ${change.seq} was skipped (an update from ${coveringFrom} to ${covering.seq})`);
  assert.deepEqual(covering.order, LEFT);
  assert.ok(frames.length < 61, `coalesced: ${frames.length} frames for 61 edits`);
  for (const c of [editor, slow]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('a binary f32 subscriber gets the same order in its JSON section', async () => {
  await create2d(server, 'bin');
  await edit(server, 'bin', heroOps());
  const bin = await WireClient.connect(server);
  const json = await Client.connect(server);
  const snap = await bin.subscribe('bin', 'f32');
  assert.ok(snap.binary);
  assert.deepEqual(snap.order, RIGHT);
  await json.subscribe('bin');
  const fromBin = bin.messages.length;
  const fromJson = json.messages.length;
  const ack = await json.request({ type: 'edit', scene: 'bin', ops: [
    { op: 'set', id: 'armL', facing: 'left' }, { op: 'rotate', id: 'armL', angle: 10 }] });
  const ub = await bin.waitFor((m) => m.type === 'update' && m.seq === ack.seq, { from: fromBin });
  const uj = await json.waitFor((m) => m.type === 'update' && m.seq === ack.seq, { from: fromJson });
  assert.ok(ub.binary);
  /* The arm faces left, and its forearm with it: both at z 2, tied with
   * the right arm, in preorder. */
  const want = ['torso', 'legs', 'head', 'armL', 'foreL', 'armR'];
  assert.deepEqual(uj.order, want);
  assert.deepEqual(ub.order, want);
  assert.ok(ub.world.armL && ub.world.foreL);
  assert.equal(ub.nodes.find((n) => n.id === 'armL').facing, 'left');
  /* No order when it did not change. */
  const ack2 = await json.request({ type: 'edit', scene: 'bin', ops: [{ op: 'rotate', id: 'armL', angle: 10 }] });
  const ub2 = await bin.waitFor((m) => m.type === 'update' && m.seq === ack2.seq, { from: fromBin });
  assert.equal(ub2.order, undefined);
  assert.deepEqual(bin.scenes.get('bin').order, (await tree(server, 'bin')).order);
  for (const c of [bin, json]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('rigctl watch --format f32 prints the order a binary snapshot carries', async () => {
  await create2d(server, 'cli');
  await edit(server, 'cli', heroOps());
  const url = `http://${server.host}:${server.port}`;
  const r = await run('rigctl', ['--url', url, 'watch', 'cli', '--count', '1', '--format', 'f32']);
  assert.equal(r.code, 0, r.stderr);
  const snap = JSON.parse(r.stdout.trim().split('\n')[0]);
  assert.equal(snap.type, 'snapshot');
  assert.deepEqual(snap.order, RIGHT);
});

test('bad fields are refused with the op, the field and why; nothing is logged', async () => {
  await create2d(server, 'bad');
  await edit(server, 'bad', [{ op: 'create', id: 'a', layer: 'f.svg#a' }]);
  const before = await tree(server, 'bad');
  const logBefore = (await get(server, '/api/scenes/bad/log')).text;
  const cases = [
    [{ op: 'set', id: 'a', layer: 'f.svg' }, 'bad_field', 'layer', "no '#'"],
    [{ op: 'set', id: 'a', layer: '.f.svg#a' }, 'bad_field', 'layer', 'dot'],
    [{ op: 'set', id: 'a', layer: 'f.svg#' }, 'bad_field', 'layer', 'GROUP'],
    [{ op: 'set', id: 'a', layer: 'f s#a' }, 'bad_field', 'layer', 'FILE'],
    [{ op: 'set', id: 'a', layer: `${'f'.repeat(129)}#a` }, 'bad_field', 'layer', '128'],
    [{ op: 'set', id: 'a', layer: 7 }, 'bad_field', 'layer', 'string'],
    [{ op: 'set', id: 'a', z: '1' }, 'bad_field', 'z', 'number'],
    [{ op: 'set', id: 'a', z: { right: 1 } }, 'bad_field', 'z', 'right and left'],
    [{ op: 'set', id: 'a', z: { right: 1, left: 2, top: 3 } }, 'bad_field', 'z', 'right and left'],
    [{ op: 'set', id: 'a', facing: 'up' }, 'bad_field', 'facing', 'right'],
    [{ op: 'create', id: 'b', facing: true }, 'bad_field', 'facing', 'right'],
    [{ op: 'reparent', id: 'a', parent: null, z: 1 }, 'bad_field', 'z', 'not allowed'],
  ];
  for (const [op, code, field, why] of cases) {
    const r = await postEdit(server, 'bad', { ops: [{ op: 'set', id: 'a', t: [1, 1, 0] }, op] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, code, r.text);
    assert.equal(r.json.error.op, 1, r.text);
    assert.equal(r.json.error.field, field, r.text);
    assert.ok(r.json.error.message.includes(why), r.text);
  }
  /* Over the websocket too, and z overflowing a double. */
  const c = await Client.connect(server);
  const e = await c.request({ type: 'edit', scene: 'bad', ops: [{ op: 'set', id: 'a', layer: 'x' }] });
  assert.equal(e.type, 'error');
  assert.equal(e.field, 'layer');
  c.send('{"type":"edit","scene":"bad","req":99,"ops":[{"op":"set","id":"a","z":1e400}]}');
  const e2 = await c.waitFor((m) => m.req === 99);
  assert.equal(e2.code, 'not_finite');
  assert.equal(e2.field, 'z');
  /* Only in a 2D scene. */
  await post(server, '/api/scenes', { name: 'bad3d' });
  await edit(server, 'bad3d', [{ op: 'create', id: 'a' }]);
  for (const field of ['layer', 'z', 'facing']) {
    const value = { layer: 'f.svg#a', z: 1, facing: 'left' }[field];
    const r = await postEdit(server, 'bad3d', { ops: [{ op: 'set', id: 'a', [field]: value }] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.field, field);
    assert.ok(r.json.error.message.includes('only in a 2D scene'), r.text);
  }
  assert.deepEqual(await tree(server, 'bad'), before);
  assert.equal((await get(server, '/api/scenes/bad/log')).text, logBefore);
  assert.deepEqual(c.schemaViolations, []);
  await c.close();
});

test('undo and redo of drawing fields, and the order with them', async () => {
  await create2d(server, 'undo');
  const c = await Client.connect(server);
  assert.equal((await c.request({ type: 'edit', scene: 'undo', client: 'u1', ops: heroOps() })).type, 'ack');
  const before = await tree(server, 'undo');
  assert.equal((await c.request({ type: 'edit', scene: 'undo', client: 'u1', ops: [
    { op: 'set', id: 'armR', layer: null }, { op: 'set', id: 'hero', facing: 'left' },
    { op: 'delete', id: 'armL' }] })).type, 'ack');
  const changed = await tree(server, 'undo');
  assert.deepEqual(changed.order, ['torso', 'legs', 'head']);
  assert.equal((await c.request({ type: 'undo', scene: 'undo', client: 'u1' })).type, 'ack');
  const undone = await tree(server, 'undo');
  assert.deepEqual(undone.nodes, before.nodes);
  assert.deepEqual(undone.order, RIGHT);
  assert.equal((await c.request({ type: 'redo', scene: 'undo', client: 'u1' })).type, 'ack');
  const redone = await tree(server, 'undo');
  assert.deepEqual(redone.nodes, changed.nodes);
  assert.deepEqual(redone.order, changed.order);
  await c.close();
});

test('a 2D log with drawing fields imports into a new 2D scene as the same tree; a restart keeps it', async () => {
  await create2d(server, 'src');
  await edit(server, 'src', heroOps());
  await edit(server, 'src', [{ op: 'set', id: 'hero', facing: 'left' },
    { op: 'set', id: 'armL', z: { right: -0.5, left: 5 } }]);
  await edit(server, 'src', [{ op: 'set', id: 'armR', layer: 'other.svg#arm-2' }, { op: 'delete', id: 'head' }]);
  const log = await get(server, '/api/scenes/src/log');
  assert.equal(log.status, 200);
  assert.ok(log.text.includes('"layer":"hero.svg#torso"'));
  assert.ok(log.text.includes('"z":{"right":-0.5,"left":5}'));
  await create2d(server, 'dst', { art: false });
  const imp = await post(server, '/api/scenes/dst/log', log.text);
  assert.equal(imp.status, 200, imp.text);
  const a = await tree(server, 'src');
  const b = await tree(server, 'dst');
  assert.deepEqual({ ...b, scene: 'src' }, a);
  assert.deepEqual(b.order, ['armR', 'torso', 'legs', 'foreL', 'armL']);
  /* A 3D scene refuses the log, naming the field. */
  await post(server, '/api/scenes', { name: 'dst3d' });
  const r3 = await post(server, '/api/scenes/dst3d/log', log.text);
  assert.equal(r3.status, 400, r3.text);
  assert.equal(r3.json.error.code, 'bad_field');
  /* A restart: snapshots and the log give the same trees. */
  const srv = server;
  assert.equal(await srv.stop('SIGTERM'), 0);
  server = await startRigd({ args: ['--sync', 'normal'], db: srv.db, dir: srv.dir });
  assert.deepEqual(await tree(server, 'src'), a);
  assert.deepEqual(await tree(server, 'dst'), b);
});
