'use strict';
/*
 * Poses against the real rigd: pose_save over the API and the pose list
 * (GET /api/scenes/{name}/poses), blend by channels (halfway between two
 * poses 90 degrees apart: the 45 degree angle and a world determinant of
 * 1), refusals that name the op and field and change nothing, a log that
 * stores pose_set with its channels and the blend's sets, time travel
 * before and after a pose_save, undo of a blend, a restart, and a log
 * exported and imported into another scene giving the same tree and poses
 * bit for bit. Everything the server sends is checked against the schema.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, post, tree, postEdit, Client, assertSchema, run,
} = require('../lib/rigd.js');

let server;

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);
const node = (t, id) => t.nodes.find((n) => n.id === id);
/* The determinant of a column-major world matrix's 3x3 block. */
const det3 = (m) => m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2])
  + m[8] * (m[1] * m[6] - m[5] * m[2]);

async function edit(srv, scene, ops) {
  const r = await postEdit(srv, scene, { ops });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function poses(srv, scene, at) {
  const r = await get(srv, `/api/scenes/${scene}/poses${at === undefined ? '' : `?at=${at}`}`);
  assert.equal(r.status, 200, r.text);
  assertSchema('HttpPoses', r.json);
  return r.json;
}

async function refused(srv, scene, ops, code, field) {
  const before = await tree(srv, scene);
  const p = await poses(srv, scene);
  const r = await postEdit(srv, scene, { ops });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.code, code, r.text);
  assert.equal(r.json.error.field, field, r.text);
  assert.equal(r.json.error.op, ops.length - 1, r.text);
  assert.deepEqual(await tree(srv, scene), before);
  assert.deepEqual(await poses(srv, scene), p);
}

let seqBeforeWalk2;

test('save two poses, list them, blend halfway: 45 degrees, determinant 1', async () => {
  let r = await post(server, '/api/scenes', { name: 'rig', dims: 2 });
  assert.equal(r.status, 201, r.text);
  await edit(server, 'rig', [
    { op: 'create', id: 'hips', t: [180, 260, 0] },
    { op: 'create', id: 'upper', parent: 'hips', angle: 0 },
    { op: 'create', id: 'fore', parent: 'upper', t: [155, 0, 0], angle: 10 },
    { op: 'create', id: 'leg', parent: 'hips', t: [0, 40, 0], angle: 170 },
    { op: 'pose_save', pose: 'walk1', root: 'hips' },
  ]);
  seqBeforeWalk2 = (await edit(server, 'rig', [
    { op: 'set', id: 'upper', angle: 90 }, { op: 'set', id: 'fore', angle: 40, s: [2, 3, 1] },
    { op: 'set', id: 'leg', angle: -170 }])).seq;
  await edit(server, 'rig', [{ op: 'pose_save', pose: 'walk2' }]);
  const list = await poses(server, 'rig');
  assert.deepEqual(list.poses.map((p) => p.name), ['walk1', 'walk2']);
  assert.deepEqual(Object.keys(list.poses[0].nodes), ['fore', 'hips', 'leg', 'upper']);
  near(list.poses[0].nodes.fore.angle, 10, 1e-12, 'walk1 fore');
  near(list.poses[1].nodes.upper.angle, 90, 1e-12, 'walk2 upper');
  assert.deepEqual(list.poses[1].nodes.fore.s, [2, 3, 1]);
  assert.deepEqual(list.poses[0].missing, []);

  const ack = await edit(server, 'rig', [{ op: 'blend', root: 'hips', a: 'walk1', b: 'walk2', t: 0.5 }]);
  assert.equal(ack.recomputed, 4);
  const t = await tree(server, 'rig');
  near(node(t, 'upper').angle, 45, 1e-12, 'upper');
  near(det3(node(t, 'upper').world), 1, 1e-12, 'det upper');
  near(node(t, 'fore').angle, 25, 1e-12, 'fore');
  near(det3(node(t, 'fore').world), 1.5 * 2, 1e-12, 'det fore');
  /* 170 and -170 meet across 180, not across 0. */
  near(Math.abs(node(t, 'leg').angle), 180, 1e-9, 'leg');
});

test('refusals name the op and field and change nothing', async () => {
  const blend = (o) => ({ op: 'blend', root: 'hips', a: 'walk1', b: 'walk2', t: 0.5, ...o });
  const pre = { op: 'pose_save', pose: 'tmp' };
  await refused(server, 'rig', [pre, blend({ a: 'nope' })], 'unknown_pose', 'a');
  await refused(server, 'rig', [pre, blend({ b: 'nope' })], 'unknown_pose', 'b');
  await refused(server, 'rig', [pre, blend({ t: 1.5 })], 'bad_field', 't');
  await refused(server, 'rig', [pre, blend({ t: -0.5 })], 'bad_field', 't');
  await refused(server, 'rig', [pre, blend({ t: '0.5' })], 'bad_field', 't');
  await refused(server, 'rig', [pre, blend({ root: 'ghost' })], 'unknown_node', 'root');
  await refused(server, 'rig', [pre, blend({ t: undefined })], 'bad_field', 't');
  await refused(server, 'rig', [pre, blend({ id: 'hips' })], 'bad_field', 'id');
  await refused(server, 'rig', [pre, { op: 'pose_delete', pose: 'nope' }], 'unknown_pose', 'pose');
  await refused(server, 'rig', [pre, { op: 'pose_save', pose: 'a b' }], 'bad_id', 'pose');
  await refused(server, 'rig', [pre, { op: 'pose_save', pose: 'x', root: 'ghost' }], 'unknown_node', 'root');
  await refused(server, 'rig', [pre, { op: 'pose_set', pose: 'x', channels: { hips: { t: [0, 0, 0], r: [0, 0, 0, 0], s: [1, 1, 1] } } }],
    'zero_quaternion', 'channels');
  await refused(server, 'rig', [pre, { op: 'pose_set', pose: 'x', channels: { hips: { t: [0, 0, 0] } } }],
    'bad_field', 'channels');
  await refused(server, 'rig', [pre, { op: 'pose_set', pose: 'x', channels: { 'a b': { t: [0, 0, 0], r: [0, 0, 0, 1], s: [1, 1, 1] } } }],
    'bad_id', 'channels');
});

test('the log holds pose_set with its channels and the blend as sets; time travel sees poses as of a seq', async () => {
  const log = (await get(server, '/api/scenes/rig/log')).text.trim().split('\n').map((l) => JSON.parse(l));
  log.forEach((l) => assertSchema('LogLine', l));
  const ops = log.flatMap((l) => l.ops.map((o) => o.op));
  assert.ok(!ops.includes('pose_save') && !ops.includes('blend'), ops.join());
  const saved = log[0].ops.find((o) => o.op === 'pose_set');
  assert.deepEqual(Object.keys(saved.channels), ['fore', 'hips', 'leg', 'upper']);
  assert.deepEqual(log.at(-1).ops.map((o) => o.op), ['set', 'set', 'set', 'set']);
  /* Before the second pose_save only walk1 exists; after it both. */
  assert.deepEqual((await poses(server, 'rig', seqBeforeWalk2)).poses.map((p) => p.name), ['walk1']);
  assert.deepEqual((await poses(server, 'rig', seqBeforeWalk2 + 1)).poses.map((p) => p.name),
    ['walk1', 'walk2']);
  assert.deepEqual((await poses(server, 'rig', 0)).poses, []);
  const r = await get(server, '/api/scenes/rig/poses?at=999');
  assert.equal(r.json.error.code, 'bad_seq');
  assert.equal((await get(server, '/api/scenes/nope/poses')).status, 404);
});

test('undo of a blend and of a pose_delete over the websocket', async () => {
  const c = await Client.connect(server);
  await c.subscribe('rig');
  const before = await tree(server, 'rig');
  const p = await poses(server, 'rig');
  let ack = await c.request({ type: 'edit', scene: 'rig', ops: [
    { op: 'blend', root: 'upper', a: 'walk1', b: 'walk2', t: 0.9 }, { op: 'pose_delete', pose: 'walk1' }] });
  assert.equal(ack.type, 'ack', JSON.stringify(ack, (k, v) => (typeof v === "bigint" ? Number(v) : v)));
  assert.deepEqual((await poses(server, 'rig')).poses.map((x) => x.name), ['walk2']);
  assert.notDeepEqual(await tree(server, 'rig'), before);
  ack = await c.request({ type: 'undo', scene: 'rig' });
  assert.equal(ack.type, 'ack', JSON.stringify(ack, (k, v) => (typeof v === "bigint" ? Number(v) : v)));
  const after = await tree(server, 'rig');
  assert.deepEqual(after.nodes, before.nodes);
  assert.deepEqual((await poses(server, 'rig')).poses, p.poses);
  c.close();
});

test('a pose naming a deleted node: listed as missing, skipped by blend', async () => {
  await edit(server, 'rig', [{ op: 'delete', id: 'leg' }]);
  const list = await poses(server, 'rig');
  assert.deepEqual(list.poses[0].missing, ['leg']);
  const ack = await edit(server, 'rig', [{ op: 'blend', root: 'hips', a: 'walk1', b: 'walk2', t: 0.25 }]);
  assert.equal(ack.recomputed, 3);
  near(node(await tree(server, 'rig'), 'upper').angle, 22.5, 1e-12, 'upper');
});

test('poses survive a restart; the log imported elsewhere gives the same tree and poses', async () => {
  const beforeTree = await tree(server, 'rig');
  const beforePoses = await poses(server, 'rig');
  assert.equal(await server.stop('SIGTERM'), 0);
  const check = await run('rigd', ['check', '--db', server.db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  server = await startRigd({ db: server.db, dir: server.dir });
  assert.deepEqual(await tree(server, 'rig'), beforeTree);
  assert.deepEqual(await poses(server, 'rig'), beforePoses);
  await edit(server, 'rig', [{ op: 'blend', root: 'hips', a: 'walk1', b: 'walk2', t: 0.75 }]);
  near(node(await tree(server, 'rig'), 'upper').angle, 67.5, 1e-12, 'upper after restart');

  const log = await get(server, '/api/scenes/rig/log');
  let r = await post(server, '/api/scenes', { name: 'rig2', dims: 2 });
  assert.equal(r.status, 201, r.text);
  r = await post(server, '/api/scenes/rig2/log', log.text);
  assert.equal(r.status, 200, r.text);
  const a = await tree(server, 'rig');
  const b = await tree(server, 'rig2');
  assert.deepEqual(b.nodes, a.nodes);
  const pa = await poses(server, 'rig');
  const pb = await poses(server, 'rig2');
  assert.deepEqual(pb.poses, pa.poses);
});

test('a 2D node\'s shear is a pose channel: saved, listed, blended linearly, logged, replayed', async () => {
  let r = await post(server, '/api/scenes', { name: 'skew', dims: 2 });
  assert.equal(r.status, 201, r.text);
  await edit(server, 'skew', [
    { op: 'create', id: 'root', t: [100, 100, 0] },
    { op: 'create', id: 'arm', parent: 'root', t: [50, 0, 0], shear: [10, -30] },
    { op: 'pose_save', pose: 'skewed' },
    { op: 'set', id: 'arm', shear: [0, 0] },
    { op: 'pose_save', pose: 'straight' },
  ]);
  const listed = await poses(server, 'skew');
  const byName = Object.fromEntries(listed.poses.map((p) => [p.name, p.nodes]));
  assert.deepEqual(byName.skewed.arm.shear, [10, -30]);
  assert.equal(byName.straight.arm.shear, undefined, 'no shear: no member, as before');
  await edit(server, 'skew', [{ op: 'blend', root: 'root', a: 'straight', b: 'skewed', t: 0.25 }]);
  const arm = node(await tree(server, 'skew'), 'arm');
  assert.deepEqual(arm.shear, [2.5, -7.5]);
  /* The world the viewer draws is sheared: its axes are no longer at 90 degrees. */
  const w = arm.world;
  assert.ok(Math.abs(w[0] * w[4] + w[1] * w[5]) > 1e-3, `axes not perpendicular: ${w}`);
  const log = (await get(server, '/api/scenes/skew/log')).text.trim().split('\n').map((l) => JSON.parse(l));
  log.forEach((l) => assertSchema('LogLine', l));
  assert.deepEqual(log[0].ops.find((o) => o.op === 'pose_set').channels.arm.shear, [10, -30]);
  assert.deepEqual(log[1].ops.find((o) => o.id === 'arm').shear, [2.5, -7.5]);
  /* A pose_set with a shear in a 3D scene is refused, naming the field. */
  r = await post(server, '/api/scenes', { name: 'skew3d', dims: 3 });
  assert.equal(r.status, 201, r.text);
  r = await postEdit(server, 'skew3d', { ops: [{ op: 'pose_set', pose: 'p',
    channels: { a: { t: [0, 0, 0], r: [0, 0, 0, 1], s: [1, 1, 1], shear: [1, 0] } } }] });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.field, 'channels');
  /* The log imported elsewhere and a restart give the same poses. */
  r = await post(server, '/api/scenes', { name: 'skew2', dims: 2 });
  r = await post(server, '/api/scenes/skew2/log', log.map((l) => JSON.stringify(l)).join('\n') + '\n');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual((await poses(server, 'skew2')).poses, (await poses(server, 'skew')).poses);
  const before = await poses(server, 'skew');
  assert.equal(await server.stop('SIGTERM'), 0);
  const check = await run('rigd', ['check', '--db', server.db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  server = await startRigd({ db: server.db, dir: server.dir });
  assert.deepEqual(await poses(server, 'skew'), before);
});
