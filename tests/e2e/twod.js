'use strict';
/*
 * 2D scenes against the real rigd: a scene created with dims 2, the plane
 * refusals, the article's worked two-bone example through the API (angle in
 * and out, the tree's world matrices), the five invariants end to end,
 * rotate and move over HTTP and the websocket, ik with its ack, the debug
 * record, and a log that stores only absolute channels and replays the
 * same matrices after a restart and into another 2D scene. Everything the
 * server sends is validated against schema/protocol.schema.json.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, post, request, tree, postEdit, Client, assertSchema, createScene, run,
} = require('../lib/rigd.js');

let server;

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

const DEG = Math.PI / 180;
const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

async function create2d(srv, name) {
  const r = await post(srv, '/api/scenes', { name, dims: 2 });
  assert.equal(r.status, 201, r.text);
  assertSchema('HttpSceneCreated', r.json);
  assert.equal(r.json.dims, 2);
}

/* The translation of a node's world matrix (its joint: pivots are 0). */
function at(t, id) {
  const w = t.nodes.find((n) => n.id === id).world;
  return [w[12], w[13], w[14]];
}
const node = (t, id) => t.nodes.find((n) => n.id === id);

async function edit(srv, scene, ops) {
  const r = await postEdit(srv, scene, { ops });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function refused(srv, scene, ops, field, code = 'bad_field') {
  const before = await tree(srv, scene);
  const r = await postEdit(srv, scene, { ops });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.code, code);
  assert.equal(r.json.error.field, field, r.text);
  assert.deepEqual(await tree(srv, scene), before);
  return r.json.error;
}

const armOps = (a1, a2) => [
  { op: 'create', id: 'shoulder', t: [180, 260, 0], angle: a1 },
  { op: 'create', id: 'elbow', parent: 'shoulder', t: [155, 0, 0], angle: a2 },
  { op: 'create', id: 'hand', parent: 'elbow', t: [125, 0, 0] },
];

test('a 2D scene: dims in the answers, 3D answers unchanged', async () => {
  await create2d(server, 'flat');
  await createScene(server, 'deep');
  const list = await get(server, '/api/scenes');
  assertSchema('HttpSceneList', list.json);
  const flat = list.json.scenes.find((s) => s.name === 'flat');
  const deep = list.json.scenes.find((s) => s.name === 'deep');
  assert.equal(flat.dims, 2);
  assert.deepEqual(Object.keys(deep), ['name', 'seq', 'nodes']);
  const t2 = await tree(server, 'flat');
  assert.equal(t2.dims, 2);
  const t3 = await tree(server, 'deep');
  assert.deepEqual(Object.keys(t3), ['scene', 'seq', 'nodes']);
  for (const dims of [1, 4, 2.5, '2', null]) {
    const r = await post(server, '/api/scenes', { name: 'nope', dims });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, 'bad_field');
    assert.equal(r.json.error.field, 'dims');
  }
  assert.equal((await get(server, '/api/scenes/nope')).status, 404);
  /* rigctl creates one too. */
  const cli = await run('rigctl', ['--url', server.url, 'create', 'cli2d', '--dims', '2']);
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(JSON.parse(cli.stdout).dims, 2);
  assert.equal((await tree(server, 'cli2d')).dims, 2);
  const bad = await run('rigctl', ['--url', server.url, 'create', 'cli4d', '--dims', '4']);
  assert.equal(bad.code, 2);
});

test('the worked example: elbow (320.48, 194.49), hand (373.305, 81.206)', async () => {
  await create2d(server, 'arm');
  await edit(server, 'arm', armOps(25, 40));
  const t = await tree(server, 'arm');
  const elbow = at(t, 'elbow');
  const hand = at(t, 'hand');
  near(elbow[0], 320.48, 0.005, 'elbow x');
  near(elbow[1], 194.49, 0.005, 'elbow y');
  near(hand[0], 373.305, 0.01, 'hand x');
  near(hand[1], 81.206, 0.01, 'hand y');
  near(hand[0], 180 + 155 * Math.cos(25 * DEG) + 125 * Math.cos(65 * DEG), 1e-9, 'hand x exact');
  near(hand[1], 260 - 155 * Math.sin(25 * DEG) - 125 * Math.sin(65 * DEG), 1e-9, 'hand y exact');
  near(node(t, 'shoulder').angle, 25, 1e-12, 'shoulder angle');
  near(node(t, 'elbow').angle, 40, 1e-12, 'elbow angle');
  near(node(t, 'hand').angle, 0, 0, 'hand angle');
  /* r stays the stored form: about z by -angle. */
  const r = node(t, 'shoulder').r;
  near(r[2], -Math.sin(12.5 * DEG), 1e-15, 'r.z');
  assert.ok(r[0] === 0 && r[1] === 0, `r is about z only: ${r}`);
});

test('ops that leave the plane are refused, naming the field', async () => {
  await create2d(server, 'plane');
  await edit(server, 'plane', armOps(0, 0));
  const e = await refused(server, 'plane', [{ op: 'set', id: 'hand', t: [1, 2, 3] }], 't');
  assert.match(e.message, /op 0: t: z must be 0 in a 2D scene/);
  await refused(server, 'plane', [{ op: 'set', id: 'hand', s: [1, 1, 2] }], 's');
  await refused(server, 'plane', [{ op: 'set', id: 'hand', pivot: [0, 0, 1] }], 'pivot');
  await refused(server, 'plane', [{ op: 'set', id: 'hand', r: [0.1, 0, 0, 1] }], 'r');
  await refused(server, 'plane', [{ op: 'set', id: 'hand', euler: [0, 5, 0] }], 'euler');
  await refused(server, 'plane', [{ op: 'create', id: 'x', t: [0, 0, 1] }], 't');
  await refused(server, 'plane', [{ op: 'set', id: 'hand', angle: 5, r: [0, 0, 0, 1] }], 'angle');
  await refused(server, 'plane', [{ op: 'move', id: 'hand', by: [0, 0, 1] }], 'by');
  await refused(server, 'plane', [{ op: 'rotate', id: 'hand', angle: 5, axis: [0, 0, 1] }],
    'axis');
  await refused(server, 'plane', [{ op: 'rotate', id: 'hand' }], 'angle');
  await refused(server, 'plane', [{ op: 'set', id: 'hand', angle: 'x' }], 'angle');
  /* And in a 3D scene an angle means nothing. */
  await createScene(server, 'solid');
  await refused(server, 'solid', [{ op: 'create', id: 'n', angle: 10 }], 'angle');
  await refused(server, 'solid', [{ op: 'rotate', id: 'n', angle: 10 }], 'id', 'unknown_node');
});

test('the five invariants, end to end', async () => {
  await create2d(server, 'inv');
  /* Identity pose. */
  await edit(server, 'inv', [{ op: 'create', id: 'a' }, { op: 'create', id: 'b', parent: 'a' }]);
  let t = await tree(server, 'inv');
  node(t, 'b').world.forEach((v, i) => near(v, i % 5 === 0 ? 1 : 0, 0, `world[${i}]`));
  await edit(server, 'inv', [{ op: 'delete', id: 'a' }, ...armOps(25, 40)]);
  /* Root translation only. */
  t = await tree(server, 'inv');
  const before = ['shoulder', 'elbow', 'hand'].map((id) => at(t, id));
  await edit(server, 'inv', [{ op: 'move', id: 'shoulder', by: [20, -10, 0] }]);
  t = await tree(server, 'inv');
  ['shoulder', 'elbow', 'hand'].forEach((id, i) => {
    near(at(t, id)[0] - before[i][0], 20, 1e-12, `${id} dx`);
    near(at(t, id)[1] - before[i][1], -10, 1e-12, `${id} dy`);
  });
  /* Parent rotation only: child world angle 30, length unchanged. */
  await edit(server, 'inv', [{ op: 'set', id: 'shoulder', angle: 30 },
    { op: 'set', id: 'elbow', angle: 0 }]);
  let d = await get(server, '/api/scenes/inv/debug/elbow');
  assertSchema('HttpDebug', d.json);
  near(d.json.world_angle, 30, 1e-12, 'world angle');
  near(d.json.local_angle, 0, 1e-12, 'local angle');
  near(d.json.length, 155, 1e-12, 'length');
  /* Pivot rotation: the pivot's world position does not move. */
  await edit(server, 'inv', [{ op: 'set', id: 'hand', pivot: [42, 18, 0] }]);
  d = await get(server, '/api/scenes/inv/debug/hand');
  const pivot = d.json.pivot_world;
  await edit(server, 'inv', [{ op: 'rotate', id: 'hand', angle: 77 }]);
  d = await get(server, '/api/scenes/inv/debug/hand');
  pivot.forEach((v, i) => near(d.json.pivot_world[i], v, 1e-9, 'pivot'));
  /* Length preservation. */
  for (let i = 0; i < 10; i++) {
    await edit(server, 'inv', [{ op: 'rotate', id: 'shoulder', angle: 17 },
      { op: 'rotate', id: 'elbow', angle: -29 }, { op: 'move', id: 'shoulder', by: [3, 4, 0] }]);
  }
  t = await tree(server, 'inv');
  const [s, e] = [at(t, 'shoulder'), at(t, 'elbow')];
  near(Math.hypot(e[0] - s[0], e[1] - s[1]), 155, 1e-9, 'upper length');
});

test('rotate and move over the websocket; the log holds absolute sets', async () => {
  await create2d(server, 'rel');
  await edit(server, 'rel', armOps(25, 40));
  const c = await Client.connect(server);
  await c.subscribe('rel');
  const ack = await c.request({ type: 'edit', scene: 'rel',
    ops: [{ op: 'rotate', id: 'elbow', angle: 0.5 }, { op: 'rotate', id: 'elbow', angle: 0.25 },
      { op: 'move', id: 'shoulder', by: [1, 2, 0] }] });
  assert.equal(ack.type, 'ack', ack.message);
  await c.waitSeq('rel', ack.seq);
  const mirrored = c.scenes.get('rel').nodes.get('elbow');
  near(mirrored.angle, 40.75, 1e-12, 'the update carries the angle');
  const t = await tree(server, 'rel');
  near(node(t, 'elbow').angle, 40.75, 1e-12, 'elbow angle');
  assert.deepEqual(node(t, 'shoulder').t, [181, 262, 0]);
  await c.close();
  const log = await get(server, '/api/scenes/rel/log');
  const lines = log.text.trim().split('\n').map((l) => JSON.parse(l));
  for (const l of lines) assertSchema('LogLine', l);
  const last = lines[lines.length - 1];
  assert.deepEqual(last.ops.map((o) => [o.op, o.id, Object.keys(o).sort().join()]), [
    ['set', 'elbow', 'id,op,r'], ['set', 'elbow', 'id,op,r'], ['set', 'shoulder', 'id,op,t']]);
  assert.ok(!log.text.includes('"angle"'), 'no angle in the log');
  /* A hand-written log with a relative op is refused. */
  await create2d(server, 'rel2');
  const bad = JSON.stringify({ seq: 1, time: 1, client: null, client_seq: null,
    ops: [{ op: 'move', id: 'x', by: [1, 0, 0] }] });
  const r = await post(server, '/api/scenes/rel2/log', `${bad}\n`);
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'bad_field');
  /* The real log replays into another 2D scene to the same matrices. */
  const imp = await post(server, '/api/scenes/rel2/log', log.text);
  assert.equal(imp.status, 200, imp.text);
  const t2 = await tree(server, 'rel2');
  assert.equal(t2.dims, 2);
  assert.deepEqual(t2.nodes.map((n) => n.world), t.nodes.map((n) => n.world));
  /* Undo takes a rotate back exactly. */
  const u = await Client.connect(server);
  const a2 = await u.request({ type: 'edit', scene: 'rel', client: 'ed', ops: [
    { op: 'rotate', id: 'hand', angle: 33 }] });
  assert.equal(a2.type, 'ack');
  const un = await u.request({ type: 'undo', scene: 'rel', client: 'ed' });
  assert.equal(un.type, 'ack', un.message);
  assert.deepEqual((await tree(server, 'rel')).nodes.map((n) => n.world),
    t.nodes.map((n) => n.world));
  await u.close();
});

test('ik: reached and out of reach, the ack says which', async () => {
  await create2d(server, 'ik');
  await edit(server, 'ik', armOps(0, 0));
  const hand = [180 + 155 * Math.cos(25 * DEG) + 125 * Math.cos(65 * DEG),
    260 - 155 * Math.sin(25 * DEG) - 125 * Math.sin(65 * DEG)];
  let r = await postEdit(server, 'ik', { ops: [
    { op: 'ik', chain: ['shoulder', 'elbow', 'hand'], target: hand }] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.ik.length, 1);
  assert.equal(r.json.ik[0].op, 0);
  assert.equal(r.json.ik[0].reached, true);
  assert.ok(r.json.ik[0].distance < 1e-9);
  let t = await tree(server, 'ik');
  near(node(t, 'shoulder').angle, 25, 1e-9, 'shoulder');
  near(node(t, 'elbow').angle, 40, 1e-9, 'elbow');
  near(at(t, 'hand')[0], 373.305, 0.01, 'hand x');
  near(at(t, 'hand')[1], 81.206, 0.01, 'hand y');
  const c = await Client.connect(server);
  const ack = await c.request({ type: 'edit', scene: 'ik', ops: [
    { op: 'move', id: 'hand', by: [0, 0, 0] },
    { op: 'ik', chain: ['shoulder', 'elbow', 'hand'], target: [600, 260] }] });
  assert.equal(ack.type, 'ack');
  assert.equal(ack.ik.length, 1);
  assert.equal(ack.ik[0].op, 1);
  assert.equal(ack.ik[0].reached, false);
  near(ack.ik[0].distance, 140, 1e-9, 'distance left');
  await c.close();
  t = await tree(server, 'ik');
  near(at(t, 'hand')[0], 460, 1e-9, 'stretched hand x');
  near(at(t, 'hand')[1], 260, 1e-9, 'stretched hand y');
  /* Acks without ik carry no "ik". */
  r = await postEdit(server, 'ik', { ops: [{ op: 'move', id: 'shoulder', by: [0, 0, 0] }] });
  assert.deepEqual(Object.keys(r.json), ['seq', 'recomputed']);
  /* Refusals. */
  await refused(server, 'ik', [{ op: 'ik', chain: ['shoulder', 'hand', 'elbow'],
    target: [0, 0] }], 'chain');
  await refused(server, 'ik', [{ op: 'ik', chain: ['shoulder', 'elbow'], target: [0, 0] }],
    'chain');
  await refused(server, 'ik', [{ op: 'ik', id: 'shoulder', chain: ['shoulder', 'elbow', 'hand'],
    target: [0, 0] }], 'id');
  await refused(server, 'ik', [{ op: 'ik', chain: ['shoulder', 'elbow', 'hand'],
    target: [0, 0, 1] }], 'target');
  await refused(server, 'ik', [{ op: 'ik', chain: ['shoulder', 'elbow', 'hand'] }], 'target');
  /* The log has the two sets, not the request. */
  const log = await get(server, '/api/scenes/ik/log');
  assert.ok(!log.text.includes('"ik"'));
  /* 3D: the hand-computed elbow. */
  await createScene(server, 'ik3');
  await edit(server, 'ik3', [{ op: 'create', id: 'a' },
    { op: 'create', id: 'b', parent: 'a', t: [0, 1, 0] },
    { op: 'create', id: 'c', parent: 'b', t: [0, 1, 0] }]);
  r = await postEdit(server, 'ik3', { ops: [
    { op: 'ik', chain: ['a', 'b', 'c'], target: [1, 1, 0], pole: [0, 0, 1] }] });
  assert.equal(r.json.ik[0].reached, true);
  t = await tree(server, 'ik3');
  [0.5, 0.5, Math.SQRT1_2].forEach((v, i) => near(at(t, 'b')[i], v, 1e-12, 'elbow'));
  [1, 1, 0].forEach((v, i) => near(at(t, 'c')[i], v, 1e-12, 'end'));
  await refused(server, 'ik3', [{ op: 'ik', chain: ['a', 'b', 'c'], target: [1, 1, 0] }],
    'pole');
});

test('the debug record and its flag', async () => {
  await create2d(server, 'dbg');
  await edit(server, 'dbg', [...armOps(25, 40)]);
  let d = await get(server, '/api/scenes/dbg/debug/hand');
  assert.equal(d.status, 200, d.text);
  assertSchema('HttpDebug', d.json);
  assert.equal(d.json.id, 'hand');
  assert.equal(d.json.parent, 'elbow');
  near(d.json.world_angle, 65, 1e-12, 'world angle');
  near(d.json.local_angle, 0, 1e-12, 'local angle');
  near(d.json.pivot_world[0], 373.305, 0.01, 'pivot x');
  near(d.json.det, 1, 1e-12, 'det');
  assert.equal(d.json.scale_in_chain, false);
  assert.equal(d.json.flag, null);
  /* A scale in the chain explains a determinant off 1: no flag. */
  await edit(server, 'dbg', [{ op: 'set', id: 'shoulder', s: [2, 1, 1] }]);
  d = await get(server, '/api/scenes/dbg/debug/hand');
  near(d.json.det, 2, 1e-12, 'det');
  assert.equal(d.json.scale_in_chain, true);
  assert.equal(d.json.flag, null);
  d = await get(server, '/api/scenes/dbg/debug/hand?at=1');
  near(d.json.det, 1, 1e-12, 'det at seq 1');
  d = await get(server, '/api/scenes/dbg/debug/nobody');
  assert.equal(d.status, 400);
  assert.equal(d.json.error.code, 'unknown_node');
  d = await get(server, '/api/scenes/dbg/debug/a%20b');
  assert.equal(d.status, 400);
  d = await get(server, '/api/scenes/dbg/debug/');
  assert.equal(d.status, 404);
  d = await request(server, 'POST', '/api/scenes/dbg/debug/hand', '{}');
  assert.equal(d.status, 405);
  /* 3D scenes have one too, without angles. */
  d = await get(server, '/api/scenes/ik3/debug/c');
  assertSchema('HttpDebug', d.json);
  assert.equal(d.json.dims, 3);
  assert.equal(d.json.local_angle, undefined);
});

test('a 2D scene survives a restart: dims, angles, matrices', async () => {
  const before = await tree(server, 'rel');
  const dbg = await tree(server, 'inv');
  assert.equal(await server.stop('SIGTERM'), 0);
  /* rigd check replays every 2D log from empty with its dims. */
  const check = await run('rigd', ['check', '--db', server.db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /^scene 'rel': ok/m);
  assert.match(check.stdout, /^check: ok$/m);
  server = await startRigd({ db: server.db, dir: server.dir });
  const after = await tree(server, 'rel');
  assert.deepEqual(after, before);
  assert.deepEqual(await tree(server, 'inv'), dbg);
  const r = await postEdit(server, 'rel', { ops: [{ op: 'set', id: 'hand', t: [0, 0, 1] }] });
  assert.equal(r.json.error.field, 't');
  const list = await get(server, '/api/scenes');
  assert.equal(list.json.scenes.find((s) => s.name === 'rel').dims, 2);
  /* Time travel keeps the dims, down to seq 0. */
  const t0 = await tree(server, 'rel', 0);
  assert.equal(t0.dims, 2);
  assert.equal((await tree(server, 'rel', 1)).dims, 2);
});
