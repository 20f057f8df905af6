'use strict';
/*
 * Ten websocket clients subscribe to the demo rig; three of them and one
 * HTTP script edit it at the same time. Every client must end with world
 * matrices identical (bit for bit, as JSON numbers) to GET /api/scenes/demo
 * and to a replay of the log into a fresh scene. Then the 59-bone skeleton
 * (docs/transforms.md 6.2) is built over the API and edited at the root, the
 * first spine bone, an upper arm, a hand, a fingertip and the top spine bone.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, post, tree, postEdit, worldsOf, Client, createScene, skeletonOps,
} = require('../lib/rigd.js');

let server;

test.before(async () => { server = await startRigd(); });
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

/* A deterministic stream of edits for one editor. */
function* edits(k, n) {
  const nodes = ['base', 'arm', 'hand'];
  for (let i = 0; i < n; i++) {
    const id = nodes[(i + k) % 3];
    if (i % 17 === 5) {
      /* Structure too: a node of its own, created, moved and deleted. */
      const mine = `extra${k}`;
      yield [{ op: 'create', id: mine, parent: 'arm', t: [k, i, 0] },
        { op: 'reparent', id: mine, parent: 'hand' }];
      yield [{ op: 'delete', id: mine }];
    } else if (i % 3 === 0) {
      yield [{ op: 'set', id, euler: [0, (i * 7 + k * 13) % 360, (i * 3) % 90] }];
    } else if (i % 3 === 1) {
      yield [{ op: 'set', id, t: [k * 0.01, 0.2 + (i % 10) * 0.05, 0] }];
    } else {
      yield [{ op: 'set', id, s: [1 + (i % 5) * 0.1, 1, 1] }];
    }
  }
}

test('ten subscribers, three ws editors and an HTTP script converge', async () => {
  const clients = [];
  for (let i = 0; i < 10; i++) clients.push(await Client.connect(server));
  for (const c of clients) await c.subscribe('demo');

  /* Each ws editor keeps up to 16 batches in flight. */
  const wsEditor = async (c, k) => {
    const acks = [];
    const inflight = new Set();
    for (const ops of edits(k, 150)) {
      while (inflight.size >= 16) await Promise.race(inflight);
      const p = c.request({ type: 'edit', scene: 'demo', ops }).then((m) => {
        inflight.delete(p);
        acks.push(m);
      });
      inflight.add(p);
    }
    await Promise.all(inflight);
    return acks;
  };
  const httpEditor = async () => {
    const acks = [];
    for (const ops of edits(3, 60)) {
      const r = await postEdit(server, 'demo', { ops });
      acks.push(r.status === 200 ? { type: 'ack', ...r.json } : { type: 'error', ...r.json.error });
    }
    return acks;
  };
  const results = await Promise.all([wsEditor(clients[0], 0), wsEditor(clients[1], 1),
    wsEditor(clients[2], 2), httpEditor()]);
  const all = results.flat();
  const failed = all.filter((m) => m.type !== 'ack');
  assert.deepEqual(failed, [], 'every batch is valid and acknowledged');
  /* Seqs are unique and gapless after the seed batch. */
  const seqs = all.map((m) => m.seq).sort((a, b) => a - b);
  assert.deepEqual(seqs, seqs.map((_, i) => i + 2));

  const final = await tree(server, 'demo');
  assert.equal(final.seq, seqs.length + 1);
  const want = worldsOf(final.nodes);
  for (const c of clients) {
    await c.waitSeq('demo', final.seq);
    assert.deepEqual(c.worlds('demo'), want);
    assert.deepEqual(c.schemaViolations, []);
  }

  /* The log replays to the same matrices, bit for bit. */
  const log = await get(server, '/api/scenes/demo/log');
  assert.equal(log.text.trim().split('\n').length, final.seq);
  await createScene(server, 'demo-replay');
  const imp = await post(server, '/api/scenes/demo-replay/log', log.text);
  assert.equal(imp.status, 200);
  assert.equal(imp.json.seq, final.seq);
  assert.deepEqual(worldsOf((await tree(server, 'demo-replay')).nodes), want);

  const metrics = (await get(server, '/metrics')).text;
  const commits = Number(/^rigd_commits_total (\d+)/m.exec(metrics)[1]);
  const batches = Number(/^rigd_batches_total (\d+)/m.exec(metrics)[1]);
  console.log(`# ${batches} batches in ${commits} group commits`);
  assert.ok(commits <= batches);
  for (const c of clients) await c.close();
});

test('59-bone skeleton built over the API recomputes 59/46/19/16/1 (and 42)', async () => {
  await createScene(server, 'skeleton');
  const editor = await Client.connect(server);
  const watcher = await Client.connect(server);
  await watcher.subscribe('skeleton');

  const built = await editor.request({ type: 'edit', scene: 'skeleton', ops: skeletonOps() });
  assert.equal(built.type, 'ack');
  assert.equal(built.recomputed, 59);
  assert.equal((await tree(server, 'skeleton')).nodes.length, 59);

  const cases = [['root', 59], ['spine1', 46], ['upper_arm_l', 19], ['hand_l', 16],
    ['finger2_3_l', 1], ['spine5', 42]];
  for (const [id, want] of cases) {
    const ack = await editor.request({ type: 'edit', scene: 'skeleton',
      ops: [{ op: 'set', id, euler: [0, 0, 10] }] });
    assert.equal(ack.type, 'ack', id);
    assert.equal(ack.recomputed, want, id);
    const from = watcher.messages.length;
    await watcher.waitSeq('skeleton', ack.seq);
    const upd = watcher.messages.slice(from).find((m) => m.type === 'update' && m.seq === ack.seq) ||
      watcher.messages.find((m) => m.type === 'update' && m.seq === ack.seq);
    assert.equal(Object.keys(upd.world).length, want, `update of ${id} carries only what changed`);
  }
  /* The same numbers over HTTP. */
  const r = await postEdit(server, 'skeleton', { ops: [{ op: 'set', id: 'hand_r', t: [0.06, 0, 0] }] });
  assert.equal(r.json.recomputed, 16);
  await watcher.waitSeq('skeleton', r.json.seq);
  assert.deepEqual(watcher.worlds('skeleton'), worldsOf((await tree(server, 'skeleton')).nodes));
  assert.deepEqual(watcher.schemaViolations, []);
  await editor.close();
  await watcher.close();
});
