'use strict';
/*
 * The clip op end to end (docs/clips.md, "Playing a clip"), against the
 * real rigd: Spine and DragonBones skeletons imported over HTTP with their
 * animations; GET /api/scenes/{name}/clips lists them (mecha_1406's eight
 * clips with their durations); a websocket client plays mecha's walk at
 * 0.5 s and a second subscribed client receives the update, whose world
 * matrices equal the @cocos/dragonbones-js runtime's for the same clip and
 * time (tests/oracle/dragonbones_world.mjs) to 1e-6, every bone (mecha's
 * IK constraints solved live after the clip, as the runtime solves them
 * after its animation); the log line holds only sets; undo restores the
 * tree; the clips are known after a restart and as of a seq; refusals by
 * code and field. And IK live: a foot and an IK target moved over the
 * websocket carry the legs for every viewer as the runtime solves them
 * (tests/oracle/dragonbones_worlds.mjs on the file with those bones moved).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const {
  SOURCE_DIR, startRigd, get, post, tree, postEdit, assertSchema, Client,
} = require('../lib/rigd.js');

const CLIPS = path.join(SOURCE_DIR, 'tests', 'data', 'clips');
const CHAIN = path.join(SOURCE_DIR, 'tests', 'data', 'spine', 'chain.json');
const MECHA = path.join(process.env.RIGD_GLTF_SAMPLES || path.join(SOURCE_DIR, '..', 'shared', 'gltf-samples'),
  '..', 'dragonbones', 'mecha_1406');
const MECHA_SKE = path.join(MECHA, 'mecha_1406_ske.json');
const ORACLE = path.join(SOURCE_DIR, 'tests', 'oracle', 'dragonbones_world.mjs');
const noMecha = !fs.existsSync(MECHA_SKE) && 'no shared mecha_1406';

let server;
let mechaNotApplied = [];  /* the import report's lines */

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

const json = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? Number(x) : x));

async function importSkeleton(format, scene, body) {
  const r = await post(server, `/api/scenes/${scene}/${format}`, body);
  assertSchema(r.status === 200 ? 'HttpSkeletonImported' : 'HttpError', r.json);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function clips(scene, at) {
  const r = await get(server, `/api/scenes/${scene}/clips${at === undefined ? '' : `?at=${at}`}`);
  assert.equal(r.status, 200, r.text);
  assertSchema('HttpClips', r.json);
  return r.json;
}

async function logLines(scene) {
  const r = await get(server, `/api/scenes/${scene}/log`);
  assert.equal(r.status, 200, r.text);
  return r.text.trim().split('\n').map((l) => JSON.parse(l));
}

async function refused(scene, op, code, field) {
  const r = await postEdit(server, scene, { ops: [op] });
  assert.equal(r.status === 200 ? 'accepted' : r.json.error.code, code, json(r.json));
  assert.equal(r.json.error.field, field, json(r.json));
}

test('Spine: chain.json and the synthetic walk list their clips; a clip plays as logged sets', async () => {
  const chain = JSON.parse(fs.readFileSync(CHAIN, 'utf8'));
  await importSkeleton('spine', 'chain', { skeleton: chain });
  const list = await clips('chain');
  assert.deepEqual(list.map((c) => [c.file, c.name]), Object.keys(chain.animations).map((n) => ['spine.json', n]));
  /* The synthetic walk with a default skin holding the attachments its
   * slot shows and keys: hand shows 'hand', then 'fist' from 0.5 s,
   * nothing from 1 s; from 0.5 s body moves 2 places up the draw order. */
  const walk = JSON.parse(fs.readFileSync(path.join(CLIPS, 'spine_walk.json'), 'utf8'));
  walk.skins = [{ name: 'default', attachments: { hand: { hand: { width: 8, height: 8 }, fist: { width: 8, height: 8 } } } }];
  await importSkeleton('spine', 'walker', { skeleton: walk, file: 'walk.json' });
  const wl = await clips('walker');
  assert.deepEqual(wl.map((c) => c.name), Object.keys(walk.animations));
  for (const c of wl) assert.equal(c.frame_rate, 0);
  const w0 = wl.find((c) => c.name === 'walk');
  assert.deepEqual([w0.slots, w0.draw_order], [1, 2]);
  const before = await tree(server, 'walker');
  const node = (t, id) => t.nodes.find((n) => n.id === id);
  let r = await postEdit(server, 'walker', { ops: [{ op: 'clip', clip: 'walk', time: 0.4 }] });
  assert.equal(r.status, 200, r.text);
  let t = await tree(server, 'walker');
  assert.equal(node(t, 'slot:hand').layer, 'walk.json#hand.hand');
  assert.deepEqual(['slot:body', 'slot:hand', 'slot:foot'].map((id) => node(t, id).z), [0, 1, 2]);
  r = await postEdit(server, 'walker', { ops: [{ op: 'clip', clip: 'walk', time: 0.7 }] });
  assert.equal(r.status, 200, r.text);
  t = await tree(server, 'walker');
  assert.equal(node(t, 'slot:hand').layer, 'walk.json#hand.fist');
  assert.deepEqual(['slot:body', 'slot:hand', 'slot:foot'].map((id) => node(t, id).z), [2, 0, 1]);
  r = await postEdit(server, 'walker', { ops: [{ op: 'clip', clip: 'walk', time: 1.1 }] });
  t = await tree(server, 'walker');
  assert.equal(node(t, 'slot:hand').layer ?? null, null);
  const last = (await logLines('walker')).at(-1);
  assertSchema('LogLine', last);
  assert.ok(last.ops.length > 0 && last.ops.every((o) => o.op === 'set'), json(last.ops));
  assert.notDeepEqual(t.nodes, before.nodes);
});

test('DragonBones: GET /clips lists mecha_1406\'s eight clips with their durations', { skip: noMecha }, async () => {
  const ske = JSON.parse(fs.readFileSync(MECHA_SKE, 'utf8'));
  mechaNotApplied = (await importSkeleton('dragonbones', 'mecha', { skeleton: ske })).report.not_applied;
  const arm = ske.armature[0];
  const rate = arm.frameRate || ske.frameRate || 24;
  const list = await clips('mecha');
  assert.equal(list.length, 8);
  assert.deepEqual(list.map((c) => c.name), arm.animation.map((a) => a.name));
  for (const [i, c] of list.entries()) {
    assert.equal(c.file, 'mecha_5f1406_ske.json');
    assert.equal(c.frame_rate, rate);
    assert.ok(Math.abs(c.duration - arm.animation[i].duration / rate) < 1e-12, `${c.name}: ${c.duration}`);
  }
  assert.deepEqual(await clips('mecha', 0), []);
  assert.equal((await get(server, '/api/scenes/nope/clips')).status, 404);
});

/* The runtime's worlds of mecha's bones for 'clip' at 'time' (mode as
 * dragonbones_world.mjs takes it), or null without the package. */
function runtimeWorlds(clip, time, mode) {
  try {
    const args = [ORACLE, MECHA_SKE, clip, String(time)].concat(mode ? [mode] : []);
    return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' }))[0];
  } catch (e) {
    if (e.status === 77) return null;
    throw e;
  }
}

/* Compares rigd's worlds (node id -> column-major 4x4) with the runtime's
 * (bone name -> [a, b, c, d, tx, ty]), every bone: the IK constraints are
 * solved live after the clip's sets, as the runtime solves them after its
 * animation; returns how many bones it compared. */
function compareWorlds(worlds, want, ids) {
  assert.deepEqual(mechaNotApplied, [], 'the import says every bone is as the runtime has it');
  let compared = 0;
  for (const [bone, m] of Object.entries(want)) {
    const w = worlds[ids.get(bone)];
    assert.ok(w, `no world for ${bone}`);
    const got = [w[0], w[1], w[4], w[5], w[12], w[13]];
    for (let i = 0; i < 6; i++)
      assert.ok(Math.abs(got[i] - m[i]) <= 1e-6, `${bone}[${i}]: ${got[i]} vs the runtime's ${m[i]}`);
    compared++;
  }
  return compared;
}

/* mecha's bone names to node ids, an editing client 'a' and a watching
 * client 'b' both subscribed, the tree before, and where b's messages of
 * what follows begin. */
async function twoOnMecha() {
  const rep = (await get(server, '/api/scenes/mecha')).json;
  const names = new Map(rep.nodes.map((n) => [n.name, n.id]));
  const a = await Client.connect(server);
  const b = await Client.connect(server);
  await a.subscribe('mecha');
  await b.subscribe('mecha');
  const before = await tree(server, 'mecha');
  return { names, a, b, before, from: b.messages.length };
}

test('DragonBones: walk at 0.5 s over the websocket: the second client\'s worlds are the runtime\'s', { skip: noMecha }, async () => {
  const want = runtimeWorlds('walk', 0.5);
  if (!want) return; /* no @cocos/dragonbones-js: nothing to compare with */
  const { names, a, b, before, from } = await twoOnMecha();
  const ack = await a.request({ type: 'edit', scene: 'mecha', ops: [{ op: 'clip', clip: 'walk', time: 0.5 }] });
  assert.equal(ack.type, 'ack', json(ack));
  await b.waitFor((m) => m.type === 'update' && m.scene === 'mecha', { from, what: 'the clip update' });
  await b.waitSeq('mecha', ack.seq);
  const ske = JSON.parse(fs.readFileSync(MECHA_SKE, 'utf8'));
  const compared = compareWorlds(b.worlds('mecha'), want, names);
  assert.equal(compared, ske.armature[0].bone.length, 'every bone compared');
  assert.deepEqual(b.schemaViolations, []);
  const last = (await logLines('mecha')).at(-1);
  assert.ok(last.ops.every((o) => o.op === 'set'), json(last.ops));
  const undo = await a.request({ type: 'undo', scene: 'mecha' });
  assert.equal(undo.type, 'ack', json(undo));
  assert.deepEqual((await tree(server, 'mecha')).nodes, before.nodes);
  a.close();
  b.close();
});

test('refusals name the field: unknown clip, file and root, bad time and weight, a 3D scene', { skip: noMecha }, async () => {
  await refused('mecha', { op: 'clip', clip: 'fly', time: 0 }, 'bad_field', 'clip');
  await refused('mecha', { op: 'clip', clip: 'walk', time: 0, file: 'nope.json' }, 'bad_field', 'file');
  await refused('mecha', { op: 'clip', clip: 'walk', time: 0, root: 'nope' }, 'unknown_node', 'root');
  await refused('mecha', { op: 'clip', clip: 'walk', time: 0, weight: 1.5 }, 'bad_field', 'weight');
  await refused('mecha', { op: 'clip', clip: 'walk', time: 'soon' }, 'bad_field', 'time');
  await refused('mecha', { op: 'clip', clip: 'walk' }, 'bad_field', 'time');
  const r = await post(server, '/api/scenes', { name: 'space' });
  assert.equal(r.status, 201, r.text);
  await refused('space', { op: 'clip', clip: 'walk', time: 0 }, 'bad_field', 'clip');
});

test('the clips are known after a restart, and as of a seq', { skip: noMecha }, async () => {
  const now = await clips('mecha');
  assert.equal(await server.stop('SIGTERM'), 0);
  server = await startRigd({ dir: server.dir, db: server.db });
  assert.deepEqual(await clips('mecha'), now);
  assert.deepEqual(await clips('mecha', 1), now);
  /* Past its end a clip holds its last pose, as the runtime's clip played
   * once and run past its end does. */
  for (const time of [0.2, 1.3, 99]) {
    const r = await postEdit(server, 'mecha', { ops: [{ op: 'clip', clip: 'attack_01', time }] });
    assert.equal(r.status, 200, r.text);
    const want = runtimeWorlds('attack_01', time, 'advance');
    if (!want) return;
    const t = await tree(server, 'mecha');
    const ids = new Map(t.nodes.map((n) => [n.name, n.id]));
    const worlds = Object.fromEntries(t.nodes.map((n) => [n.id, n.world]));
    assert.equal(compareWorlds(worlds, want, ids), t.nodes.filter((n) => !n.name.startsWith('slot:')).length);
  }
});

/* The runtime's setup worlds of mecha with bones moved in its setup pose
 * (bone name -> [x, y]), or null without the package. */
function runtimeSetupWorlds(moves) {
  const ske = JSON.parse(fs.readFileSync(MECHA_SKE, 'utf8'));
  for (const b of ske.armature[0].bone)
    if (moves[b.name]) {
      b.transform = b.transform || {};
      [b.transform.x, b.transform.y] = moves[b.name];
    }
  const file = path.join(server.dir, 'moved_ske.json');
  fs.writeFileSync(file, JSON.stringify(ske));
  try {
    return JSON.parse(execFileSync(process.execPath,
      [path.join(SOURCE_DIR, 'tests', 'oracle', 'dragonbones_worlds.mjs'), file], { encoding: 'utf8' }));
  } catch (e) {
    if (e.status === 77) return null;
    throw e;
  }
}

test('DragonBones IK live: a foot and a target moved over the websocket carry mecha\'s legs for every viewer, as the runtime solves them', { skip: noMecha }, async () => {
  const moves = { foot_l: [90, -60], thigh_r_ik: [10, -30] };
  const want = runtimeSetupWorlds(moves);
  if (!want) return; /* no @cocos/dragonbones-js: nothing to compare with */
  const { names, a, b, before, from } = await twoOnMecha();
  const ops = Object.entries(moves).map(([bone, [x, y]]) => ({ op: 'set', id: names.get(bone), t: [x, y, 0] }));
  const ack = await a.request({ type: 'edit', scene: 'mecha', ops });
  assert.equal(ack.type, 'ack', json(ack));
  const update = await b.waitFor((m) => m.type === 'update' && m.scene === 'mecha', { from, what: 'the IK update' });
  await b.waitSeq('mecha', ack.seq);
  /* The update carries the constrained bones' worlds, though no op named
   * them. */
  const carried = new Set(Object.keys(update.world || {}));
  for (const bone of ['thigh_l', 'calf_l', 'thigh_r'])
    assert.ok(carried.has(names.get(bone)), `${bone} in the update: ${json([...carried])}`);
  const compared = compareWorlds(b.worlds('mecha'), want, names);
  assert.equal(compared, Object.keys(want).length);
  /* The log holds the two sets only: the solve is the recompute's. */
  const last = (await logLines('mecha')).at(-1);
  assert.deepEqual(last.ops.map((o) => o.op), ['set', 'set']);
  const undo = await a.request({ type: 'undo', scene: 'mecha' });
  assert.equal(undo.type, 'ack', json(undo));
  assert.deepEqual((await tree(server, 'mecha')).nodes, before.nodes);
  a.close();
  b.close();
});
