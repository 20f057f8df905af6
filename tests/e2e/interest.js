'use strict';
/*
 * Per-viewer interest against the real server (docs/protocol.md, "Views"):
 * malformed view messages are refused with a clear error and the
 * connection stays; viewers (JSON, float32 and float64 subscribers) pan
 * across a scene while it is edited, nodes are created, moved across the
 * views and deleted, and after every step each viewer draws exactly the
 * nodes the server's culling rule keeps (re-done node by node from the
 * tree, tests/lib/interest.js) with the server's matrices; identical views
 * share their cull and frames; dropping a view brings everything back; and
 * the slow-client promise holds for viewers with views and binary frames.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, tree, createScene, sleep, percentile, SANITIZED,
} = require('../lib/rigd.js');
const { WireClient } = require('../lib/wire.js');
const { perspectiveVp, visibleIds, shownIds, setDiffs } = require('../lib/interest.js');

let server;

test.before(async () => {
  server = await startRigd({
    args: ['--sync', 'normal'],
    env: SANITIZED ? { ASAN_OPTIONS: `${process.env.ASAN_OPTIONS || ''}:quarantine_size_mb=4` } : {},
  });
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

const VIEWPORT = [640, 480];
const BOUNDS = { min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5] };

/* Ten groups 30 apart along x, each of 40 boxes on a 8 x 5 grid 3 apart,
 * and one node without bounds in each group. Group nodes have no bounds. */
function gridOps() {
  const ops = [];
  for (let g = 0; g < 10; g++) {
    ops.push({ op: 'create', id: `g${g}`, t: [30 * g, 0, 0] });
    for (let k = 0; k < 40; k++) {
      ops.push({ op: 'create', id: `g${g}-${k}`, parent: `g${g}`, t: [(k % 8) * 3, Math.floor(k / 8) * 3, 0],
        bounds: BOUNDS });
    }
    ops.push({ op: 'create', id: `g${g}-free`, parent: `g${g}`, t: [1, 1, 1] });
  }
  return ops;
}

/* A camera 20 above the plane at (x, y), 60 degrees: it sees about 23 x 17
 * units, a part of one or two groups. */
function viewAt(x, y, minPx = 0, z = 20) {
  return { vp: perspectiveVp(60, VIEWPORT[0] / VIEWPORT[1], 0.5, 200, [x, y, z]),
    viewport: VIEWPORT, min_px: minPx };
}

/* Sends a view and resolves to the reply. */
function declare(client, scene, view) {
  return client.request({ type: 'view', scene, ...view });
}

/* Waits until 'client' has a frame of 'scene' at seq >= 'seq' that came
 * after message index 'from' and answers for a view (it has hidden). */
function settled(client, scene, seq, from) {
  return client.waitFor((m) => (m.type === 'update' || m.type === 'snapshot') && m.scene === scene &&
    m.seq >= seq && Array.isArray(m.hidden), { from, timeout: 20000, what: `${scene} at ${seq} with its view` });
}

/* The client draws what the server's rule keeps in 'view' (and the view's
 * "always" nodes that exist), each with the tree's matrix (float32-rounded
 * for f32). Returns the problems. */
function drawProblems(client, scene, view, t, format) {
  const want = view ? visibleIds(t.nodes, view) : new Set(t.nodes.map((n) => n.id));
  for (const id of view?.always || []) if (t.nodes.some((n) => n.id === id)) want.add(id);
  const shown = shownIds(client, scene);
  const problems = setDiffs(shown, want);
  const mirror = client.scenes.get(scene).nodes;
  for (const n of t.nodes) {
    if (!shown.has(n.id)) continue;
    const w = mirror.get(n.id).world;
    for (let i = 0; i < 16; i++) {
      const expect = format === 'f32' ? Math.fround(n.world[i]) : n.world[i];
      if (!Object.is(w[i], expect)) { problems.push(`${n.id}[${i}]: ${w[i]} instead of ${expect}`); break; }
    }
  }
  if (client.schemaViolations.length) problems.push(...client.schemaViolations);
  return problems;
}

test('view messages: every refusal names its field, changes nothing and keeps the connection', async () => {
  await createScene(server, 'refusals');
  await createScene(server, 'other');
  const c = await WireClient.connect(server);
  assert.equal((await c.request({ type: 'edit', scene: 'refusals', ops: gridOps().slice(0, 42) })).type, 'ack');
  await c.subscribe('refusals', 'f64');
  const good = viewAt(5, 5);
  const cases = [
    [{ vp: good.vp.map((v, i) => (i === 5 ? '1e400' : v)), viewport: VIEWPORT }, 'not_finite', 'vp', true],
    [{ vp: good.vp.slice(0, 15), viewport: VIEWPORT }, 'bad_field', 'vp'],
    [{ vp: good.vp.map((v, i) => (i === 3 ? 'x' : v)), viewport: VIEWPORT }, 'bad_field', 'vp'],
    [{ vp: new Array(16).fill(0), viewport: VIEWPORT }, 'bad_field', 'vp'],
    [{ vp: good.vp, viewport: [0, 480] }, 'bad_field', 'viewport'],
    [{ vp: good.vp, viewport: [640, 0] }, 'bad_field', 'viewport'],
    [{ vp: good.vp, viewport: [640.5, 480] }, 'bad_field', 'viewport'],
    [{ vp: good.vp, viewport: [640] }, 'bad_field', 'viewport'],
    [{ vp: good.vp }, 'bad_field', 'viewport'],
    [{ viewport: VIEWPORT }, 'bad_field', 'vp'],
    [{ vp: good.vp, viewport: VIEWPORT, min_px: -1 }, 'bad_field', 'min_px'],
    [{ vp: good.vp, viewport: VIEWPORT, min_px: '2' }, 'bad_field', 'min_px'],
    [{ vp: good.vp, viewport: VIEWPORT, min_px: '1e999' }, 'not_finite', 'min_px', true],
    [{ planes: [[1, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 1], [0, -1, 0, 1], [0, 0, 1, 1], [0, 0, -1, 1]],
      viewport: VIEWPORT, min_px: 3 }, 'bad_field', 'min_px'],
    [{ planes: [[1, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 1], [0, -1, 0, 1], [0, 0, 1, 1]],
      viewport: VIEWPORT }, 'bad_field', 'planes'],
    [{ planes: [[0, 0, 0, 1], [-1, 0, 0, 1], [0, 1, 0, 1], [0, -1, 0, 1], [0, 0, 1, 1], [0, 0, -1, 1]],
      viewport: VIEWPORT }, 'bad_field', 'planes'],
    [{ vp: good.vp, planes: [], viewport: VIEWPORT }, 'bad_field', 'planes'],
    [{ clear: false }, 'bad_field', 'clear'],
    [{ clear: true, viewport: VIEWPORT }, 'bad_field', 'viewport'],
    [{ vp: good.vp, viewport: VIEWPORT, zoom: 2 }, 'bad_field', 'zoom'],
    [{ vp: good.vp, viewport: VIEWPORT, always: 'g0-1' }, 'bad_field', 'always'],
    [{ vp: good.vp, viewport: VIEWPORT, always: ['g0-1', 7] }, 'bad_field', 'always'],
    [{ vp: good.vp, viewport: VIEWPORT, always: ['g0 1'] }, 'bad_id', 'always'],
    [{ vp: good.vp, viewport: VIEWPORT, always: Array.from({ length: 257 }, (_, i) => `n${i}`) }, 'limit', 'always'],
    [{ clear: true, always: ['g0-1'] }, 'bad_field', 'always'],
  ];
  let req = 1000;
  for (const [body, code, field, raw] of cases) {
    req++;
    const from = c.messages.length;
    const msg = { type: 'view', scene: 'refusals', req, ...body };
    /* Numbers JSON.stringify cannot write (1e400) go in as raw text. */
    const text = raw ? JSON.stringify(msg).replace(/"(1e400|1e999)"/g, '$1') : JSON.stringify(msg);
    c.send(text);
    const reply = await c.waitFor((m) => m.req === req, { from, what: `the reply to ${text.slice(0, 80)}` });
    assert.equal(reply.type, 'error', text.slice(0, 200));
    assert.equal(reply.code, code, `${text.slice(0, 200)}: ${reply.message}`);
    assert.equal(reply.field, field, `${text.slice(0, 200)}: ${reply.message}`);
    assert.ok(reply.message.includes(field), reply.message);
  }
  /* A view of a scene the connection is not subscribed to. */
  let r = await declare(c, 'other', good);
  assert.equal(r.code, 'not_subscribed');
  assert.equal(r.field, 'scene');
  r = await declare(c, 'nosuch', good);
  assert.equal(r.code, 'not_subscribed');
  /* Nothing changed: frames still carry no hidden list; the connection
   * still works, and a good view is taken. */
  assert.equal(c.closeCode, undefined);
  assert.ok(c.messages.every((m) => m.hidden === undefined));
  const from = c.messages.length;
  r = await declare(c, 'refusals', good);
  assert.equal(r.type, 'ack');
  const t = await tree(server, 'refusals');
  assert.equal(r.seq, t.seq);
  await settled(c, 'refusals', t.seq, from);
  assert.deepEqual(drawProblems(c, 'refusals', good, t, 'f64'), []);
  await c.close();
});

test('a view\'s "always" nodes come wherever the camera looks, current, until the view drops them', async () => {
  await createScene(server, 'always');
  const editor = await WireClient.connect(server);
  assert.equal((await editor.request({ type: 'edit', scene: 'always', ops: gridOps() })).type, 'ack');
  const metric = async (name) => Number(new RegExp(`^rigd_${name} (\\S+)$`, 'm')
    .exec((await get(server, '/metrics')).text)[1]);
  const a = await WireClient.connect(server);
  const b = await WireClient.connect(server);
  await a.subscribe('always', 'f64');
  await b.subscribe('always', 'f32');
  /* The camera looks at group 0; g7-3 is 200 units away, and 'later' does
   * not exist yet. Repeated ids count once; the order does not matter. */
  const view = { ...viewAt(5, 5), always: ['g7-3', 'later'] };
  let from = a.messages.length;
  const fromB = b.messages.length;
  assert.equal((await declare(a, 'always', { ...view, always: ['later', 'g7-3', 'later'] })).type, 'ack');
  assert.equal((await declare(b, 'always', view)).type, 'ack');
  let t = await tree(server, 'always');
  assert.ok(!visibleIds(t.nodes, view).has('g7-3'), 'the camera alone does not see g7-3');
  let frame = await settled(a, 'always', t.seq, from);
  await settled(b, 'always', t.seq, fromB);
  assert.ok(!frame.hidden.includes('g7-3'), 'g7-3 is not hidden');
  assert.ok(frame.hidden.includes('g7-4'), 'its sibling is');
  assert.deepEqual(drawProblems(a, 'always', view, t, 'f64'), []);
  assert.deepEqual(drawProblems(b, 'always', view, t, 'f32'), []);
  /* Its parent turns: the update carries g7-3's new matrix and none of its
   * siblings'; both clients of the one view share its cull. */
  const culls0 = await metric('view_culls_total');
  from = a.messages.length;
  let r = await editor.request({ type: 'edit', scene: 'always', ops: [{ op: 'set', id: 'g7', euler: [0, 0, 12] }] });
  await a.waitSeq('always', r.seq);
  await b.waitSeq('always', r.seq);
  const update = a.messages.slice(from).find((m) => m.type === 'update' && m.seq === r.seq);
  assert.deepEqual(Object.keys(update.world).filter((id) => id.startsWith('g7')).sort(), ['g7', 'g7-3', 'g7-free']);
  assert.equal((await metric('view_culls_total')) - culls0, 1, 'one cull for the two clients');
  t = await tree(server, 'always');
  assert.deepEqual(drawProblems(a, 'always', view, t, 'f64'), []);
  assert.deepEqual(drawProblems(b, 'always', view, t, 'f32'), []);
  /* An id created later is sent from its creation on. */
  r = await editor.request({ type: 'edit', scene: 'always', ops: [{ op: 'create', id: 'later', parent: 'g9', t: [5, 5, 0], bounds: BOUNDS }] });
  await a.waitSeq('always', r.seq);
  t = await tree(server, 'always');
  assert.ok(!visibleIds(t.nodes, view).has('later'));
  assert.deepEqual(drawProblems(a, 'always', view, t, 'f64'), []);
  /* The same camera without "always": both are hidden in the next frame. */
  from = a.messages.length;
  assert.equal((await declare(a, 'always', viewAt(5, 5))).type, 'ack');
  frame = await settled(a, 'always', t.seq, from);
  assert.deepEqual(frame.hidden.filter((id) => id === 'g7-3' || id === 'later').sort(), ['g7-3', 'later']);
  assert.deepEqual(drawProblems(a, 'always', viewAt(5, 5), t, 'f64'), []);
  for (const c of [a, b, editor]) await c.close();
});

test('viewers pan while the scene is edited: each draws exactly its cull, with the server\'s matrices', async () => {
  await createScene(server, 'pan');
  const editor = await WireClient.connect(server);
  assert.equal((await editor.request({ type: 'edit', scene: 'pan', ops: gridOps() })).type, 'ack');
  const formats = ['json', 'f32', 'f64'];
  const viewers = [];
  for (const f of formats) {
    const c = await WireClient.connect(server);
    await c.subscribe('pan', f);
    viewers.push({ c, format: f });
  }
  /* A fourth viewer with a minimum size. */
  const sized = await WireClient.connect(server);
  await sized.subscribe('pan', 'f64');
  viewers.push({ c: sized, format: 'f64', minPx: 40 });

  let rnd = 12345;
  const rand = () => { rnd = (rnd * 1103515245 + 12345) % 2147483648; return rnd / 2147483648; };
  let created = 0;
  let totalHidden = 0;
  let totalEntered = 0;
  for (let step = 0; step < 24; step++) {
    /* Each viewer pans along x (each at its own pace and height), and the
     * edits go out without waiting, in between. */
    const x = step * 12;
    const pending = [];
    const marks = viewers.map((v) => v.c.messages.length);
    for (const [i, v] of viewers.entries()) {
      v.view = viewAt(x + i * 4, 4 + i, v.minPx || 0);
      pending.push(declare(v.c, 'pan', v.view));
      const ops = [];
      /* Moves boxes across the views, rotates a group, creates and deletes. */
      for (let k = 0; k < 6; k++) {
        const g = Math.floor(rand() * 10);
        const id = `g${g}-${Math.floor(rand() * 40)}`;
        ops.push({ op: 'set', id, t: [rand() * 300 - 30 * g, rand() * 15, rand() * 4 - 2] });
      }
      ops.push({ op: 'set', id: `g${Math.floor(rand() * 10)}`, euler: [0, 0, rand() * 20 - 10] });
      ops.push({ op: 'create', id: `new${created}`, parent: `g${Math.floor(x / 30) % 10}`, t: [rand() * 20, rand() * 12, 0],
        bounds: BOUNDS });
      created++;
      if (created > 3 && rand() < 0.5) ops.push({ op: 'delete', id: `new${created - 3}` });
      pending.push(editor.request({ type: 'edit', scene: 'pan', ops }));
    }
    const replies = await Promise.all(pending);
    for (const r of replies) assert.equal(r.type, 'ack', `${r.code}: ${r.message}`);
    const t = await tree(server, 'pan');
    for (const [i, v] of viewers.entries()) {
      await settled(v.c, 'pan', t.seq, marks[i]);
      const problems = drawProblems(v.c, 'pan', v.view, t, v.format);
      assert.deepEqual(problems.slice(0, 10), [], `step ${step}, ${v.format}${v.minPx ? ' sized' : ''}`);
    }
    for (const v of viewers) {
      for (const m of v.c.messages.slice(marks[viewers.indexOf(v)])) {
        if (m.type === 'update' && m.hidden) { totalHidden += m.hidden.length; totalEntered += Object.keys(m.world).length; }
      }
    }
  }
  /* The views really moved things in and out. */
  assert.ok(totalHidden > 100, `${totalHidden} nodes hidden in all`);
  assert.ok(totalEntered > 100, `${totalEntered} matrices in all`);
  /* A frame of a viewer carries far fewer matrices than the scene has:
   * look at one root-of-group edit. */
  const v0 = viewers[2];
  const mark = v0.c.messages.length;
  const r = await editor.request({ type: 'edit', scene: 'pan', ops: [{ op: 'set', id: 'g3', t: [90, 0.5, 0] }] });
  await v0.c.waitSeq('pan', r.seq);
  const frames = v0.c.messages.slice(mark).filter((m) => m.type === 'update');
  const matrices = frames.reduce((a, m) => a + Object.keys(m.world).length, 0);
  assert.ok(matrices <= 60, `${matrices} matrices for a group of 42 outside or partly inside the view`);
  for (const v of viewers) await v.c.close();
  await editor.close();
});

test('identical views share one cull and one frame; clearing a view sends back everything', async () => {
  await createScene(server, 'share');
  const editor = await WireClient.connect(server);
  assert.equal((await editor.request({ type: 'edit', scene: 'share', ops: gridOps() })).type, 'ack');
  const a = await WireClient.connect(server);
  const b = await WireClient.connect(server);
  await a.subscribe('share', 'f32');
  await b.subscribe('share', 'f32');
  const view = viewAt(40, 6);
  for (const c of [a, b]) assert.equal((await declare(c, 'share', view)).type, 'ack');
  const metric = async (name) => Number(new RegExp(`^rigd_${name} (\\S+)$`, 'm')
    .exec((await get(server, '/metrics')).text)[1]);
  let t = await tree(server, 'share');
  await a.waitSeq('share', t.seq);
  await sleep(100);
  const culls0 = await metric('view_culls_total');
  const shared0 = await metric('view_frames_shared_total');
  for (let i = 0; i < 10; i++) {
    const r = await editor.request({ type: 'edit', scene: 'share', ops: [{ op: 'set', id: 'g1', t: [30 + i * 0.1, 0, 0] }] });
    await a.waitSeq('share', r.seq);
    await b.waitSeq('share', r.seq);
  }
  const culls = (await metric('view_culls_total')) - culls0;
  const shared = (await metric('view_frames_shared_total')) - shared0;
  /* One cull per scene state for both clients, never two. */
  assert.ok(culls <= 10, `${culls} culls for 10 edits and two clients with one view`);
  assert.ok(shared >= 5, `${shared} frames shared`);
  t = await tree(server, 'share');
  for (const c of [a, b]) assert.deepEqual(drawProblems(c, 'share', view, t, 'f32'), []);
  /* Clearing: the next frame brings every node the view hid, current. */
  await editor.request({ type: 'edit', scene: 'share', ops: [{ op: 'set', id: 'g7', t: [210, 3, 0] }] });
  const from = a.messages.length;
  assert.equal((await a.request({ type: 'view', scene: 'share', clear: true })).type, 'ack');
  t = await tree(server, 'share');
  const frame = await settled(a, 'share', t.seq, from);
  assert.equal(frame.hidden.length, 0);
  assert.deepEqual(drawProblems(a, 'share', null, t, 'f32'), []);
  /* Later frames are plain ones again. */
  const r = await editor.request({ type: 'edit', scene: 'share', ops: [{ op: 'set', id: 'g8', t: [240, 1, 0] }] });
  await a.waitSeq('share', r.seq);
  const last = a.messages.filter((m) => m.type === 'update').at(-1);
  assert.equal(last.hidden, undefined);
  assert.equal(Object.keys(last.world).length, 42);
  /* Clearing without a view changes nothing and is acknowledged. */
  assert.equal((await a.request({ type: 'view', scene: 'share', clear: true })).type, 'ack');
  /* A new subscription with a view gets a snapshot with the hidden list
   * after subscribing again. */
  const mark = b.messages.length;
  b.send({ type: 'subscribe', scene: 'share', format: 'json' });
  const snap = await b.waitFor((m) => m.type === 'snapshot', { from: mark });
  assert.ok(Array.isArray(snap.hidden) && snap.hidden.length > 200, `${snap.hidden?.length} hidden`);
  t = await tree(server, 'share');
  await b.waitSeq('share', t.seq);
  assert.deepEqual(drawProblems(b, 'share', view, t, 'json'), []);
  for (const c of [a, b, editor]) await c.close();
});

test('the slow-client promise holds for viewers with views and binary frames', async () => {
  await createScene(server, 'slowview');
  const editor = await WireClient.connect(server);
  assert.equal((await editor.request({ type: 'edit', scene: 'slowview', ops: gridOps() })).type, 'ack');
  const watchers = [];
  for (const [i, f] of ['f32', 'json', 'f64'].entries()) {
    const c = await WireClient.connect(server, { validate: false });
    await c.subscribe('slowview', f);
    assert.equal((await declare(c, 'slowview', viewAt(20 + 30 * i, 6))).type, 'ack');
    watchers.push(c);
  }
  /* Edits of a whole group as fast as acks come back; latency of each to
   * every watcher. */
  const run = async (ms) => {
    const lat = [];
    const end = Date.now() + ms;
    let i = 0;
    while (Date.now() < end) {
      const sent = process.hrtime.bigint();
      const r = await editor.request({ type: 'edit', scene: 'slowview',
        ops: [0, 1, 2].map((g) => ({ op: 'set', id: `g${g}`, euler: [0, 0, (i * 7 + g) % 30] })) });
      i++;
      for (const w of watchers) {
        await w.waitSeq('slowview', r.seq, 20000);
        const m = w.messages.find((x) => x.type === 'update' && x.seq >= r.seq);
        lat.push(Number(m.receivedAt - sent) / 1e6);
      }
    }
    return { edits: i, lat };
  };
  await run(500);
  const before = server.rssKb();
  const control = await run(3000);
  const controlGrowth = server.rssKb() - before;
  const slow = await WireClient.connect(server, { validate: false });
  /* JSON frames of a view over the three edited groups: a few hundred
   * matrices each, more than the socket buffers hold for long. */
  await slow.subscribe('slowview', 'json');
  const view = viewAt(35, 6, 0, 70);
  assert.equal((await declare(slow, 'slowview', view)).type, 'ack');
  slow.ws._socket.pause();
  await sleep(200);
  const mid = server.rssKb();
  const stalled = await run(5000);
  const stallGrowth = server.rssKb() - mid;
  const p99 = (r) => percentile(r.lat, 99);
  console.log(`# control: ${control.edits} edits, p50 ${percentile(control.lat, 50).toFixed(2)} ms, p99 ${p99(control).toFixed(2)} ms, +${controlGrowth} kB`);
  console.log(`# stalled viewer: ${stalled.edits} edits, p50 ${percentile(stalled.lat, 50).toFixed(2)} ms, p99 ${p99(stalled).toFixed(2)} ms, +${stallGrowth} kB`);
  assert.ok(percentile(stalled.lat, 50) <= 2 * percentile(control.lat, 50) + 50, 'the others are not delayed');
  assert.ok(stalled.edits >= control.edits / 4, 'the editor kept its pace');
  assert.ok(stallGrowth - controlGrowth < (SANITIZED ? 4096 : 2048), `the stalled viewer cost ${stallGrowth - controlGrowth} kB`);
  /* It reads again and converges: what it draws is its cull, current. */
  slow.ws._socket.resume();
  const t = await tree(server, 'slowview');
  await slow.waitSeq('slowview', t.seq, 30000);
  assert.deepEqual(drawProblems(slow, 'slowview', view, t, 'json').slice(0, 10), []);
  const frames = slow.messages.filter((m) => m.type === 'update' || m.type === 'snapshot');
  assert.ok(frames.length < stalled.edits, `${frames.length} frames for ${stalled.edits} edits: coalesced`);
  for (const c of [...watchers, slow, editor]) await c.close();
});
