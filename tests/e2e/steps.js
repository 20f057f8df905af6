'use strict';
/*
 * Step frames (docs/protocol.md, "Broadcast and slow clients"): the update
 * of each turn is encoded once per format in use as the turn ends, and a
 * client a few turns behind gets the turns one by one, each with that
 * turn's own matrices, rather than one frame that skips to the latest.
 *
 *   - Subscribers that keep up (JSON and float32) get one update per turn,
 *     every seq, each equal to the tree at its seq, and the server encodes
 *     exactly one step frame per turn per format in use (f64, unused, none).
 *   - A subscriber whose socket stops reading falls behind by many turns
 *     of frames of a few hundred kilobytes, then reads again while the rig
 *     keeps moving: every frame it gets equals the tree at that frame's seq
 *     (a step frame built from later matrices would not), seqs rise, and it
 *     ends current. How many turns it got one by one depends on timing and
 *     is printed, not asserted.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, tree, Client, createScene, skeletonOps, request, sleep,
} = require('../lib/rigd.js');
const { loadWire, WireClient, matrixDiffs } = require('../lib/wire.js');

let server;

test.before(async () => {
  await loadWire();
  server = await startRigd({ args: ['--sync', 'normal'] });
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

async function metric(name) {
  const r = await request(server, 'GET', '/metrics');
  const m = new RegExp(`^rigd_${name} (\\S+)$`, 'm').exec(r.text);
  assert.ok(m, `metric ${name} in /metrics`);
  return Number(m[1]);
}

/* Every update of 'client' for 'scene' after message index 'from': its
 * matrices against the tree at its seq. Returns the updates' seqs. */
async function checkUpdates(client, scene, from, exact) {
  const seqs = [];
  for (const m of client.messages.slice(from)) {
    if (m.type !== 'update' || m.scene !== scene) continue;
    seqs.push(m.seq);
    const at = await tree(server, scene, m.seq);
    const nodes = at.nodes.filter((n) => m.world[n.id]);
    assert.equal(nodes.length, Object.keys(m.world).length, `update ${m.seq}: every matrix names a node`);
    assert.deepEqual(matrixDiffs(m.world, nodes, exact), [], `update ${m.seq} against the tree at ${m.seq}`);
  }
  return seqs;
}

test('clients that keep up get every turn, one step frame per turn and format', async () => {
  await createScene(server, 'kept');
  const editor = await Client.connect(server);
  await editor.request({ type: 'edit', scene: 'kept', ops: skeletonOps() });
  const json = await WireClient.connect(server);
  const f32 = await WireClient.connect(server);
  await json.subscribe('kept');
  await f32.subscribe('kept', 'f32');
  const from = [json.messages.length, f32.messages.length];
  const steps0 = await metric('step_frames_total');
  const acked = [];
  for (let k = 0; k < 12; k++) {
    const ack = await editor.request({ type: 'edit', scene: 'kept',
      ops: [{ op: 'set', id: 'upper_arm_l', euler: [0, 0, 7 * k] }] });
    assert.equal(ack.type, 'ack');
    acked.push(ack.seq);
    await json.waitSeq('kept', ack.seq);
    await f32.waitSeq('kept', ack.seq);
  }
  assert.deepEqual(await checkUpdates(json, 'kept', from[0], true), acked, 'JSON: every seq, in order');
  assert.deepEqual(await checkUpdates(f32, 'kept', from[1], false), acked, 'f32: every seq, in order');
  assert.equal(await metric('step_frames_total') - steps0, 24, 'one step frame per turn for JSON and for f32');
  assert.deepEqual(json.schemaViolations, []);
  assert.deepEqual(f32.schemaViolations, []);
  for (const c of [editor, json, f32]) await c.close();
});

test('a client a few turns behind gets each turn with its own matrices', async () => {
  /* A chain of 700 nodes: turning the root sends 700 matrices (about 230 kB
   * of JSON), so a socket that does not read fills within a few turns. */
  await createScene(server, 'chain');
  const editor = await Client.connect(server);
  const ops = [];
  for (let i = 0; i < 700; i++) {
    ops.push({ op: 'create', id: `n${i}`, ...(i ? { parent: `n${i - 1}` } : {}), t: [0.01, 0, 0] });
  }
  await editor.request({ type: 'edit', scene: 'chain', ops });
  const steady = await Client.connect(server, { validate: false });
  const lagging = await Client.connect(server, { validate: false });
  await steady.subscribe('chain');
  await lagging.subscribe('chain');
  const from = lagging.messages.length;
  const coalesced0 = await metric('updates_coalesced_total');
  lagging.ws._socket.pause();
  let last;
  const turn = async (k) => {
    const ack = await editor.request({ type: 'edit', scene: 'chain',
      ops: [{ op: 'set', id: 'n0', euler: [0, 0, 3 * k] }] });
    assert.equal(ack.type, 'ack');
    last = ack.seq;
    await steady.waitSeq('chain', last);
  };
  /* 60 turns of 230 kB: more than loopback's socket buffers hold, so the
   * server stops writing to the lagging client; then it reads again while
   * the rig keeps moving, and catches up through a few turns behind. */
  for (let k = 1; k <= 60; k++) await turn(k);
  lagging.ws._socket.resume();
  for (let k = 61; k <= 80; k++) {
    await turn(k);
    await sleep(5);
  }
  await lagging.waitSeq('chain', last, 60000);
  const seqs = await checkUpdates(lagging, 'chain', from, true);
  assert.ok(seqs.length >= 1 && seqs[seqs.length - 1] === last, `ends at ${last}: ${seqs}`);
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `seqs rise: ${seqs}`);
  const coalesced = await metric('updates_coalesced_total') - coalesced0;
  console.log(`# the lagging client got ${seqs.length} updates for 80 turns (${seqs.join(', ')}); ` +
    `${coalesced} turns coalesced`);
  for (const c of [editor, steady, lagging]) await c.close();
});
