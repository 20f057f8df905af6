'use strict';
/*
 * A client that stops reading must neither delay the others nor grow the
 * server's memory. Three watchers and one editor run at full speed on the
 * 59-bone skeleton (root edits, so every update carries 59 matrices): first
 * a control period without a stalled client, then the same period while a
 * fourth watcher does not read its socket for ten seconds, then a second
 * control period once it reads again. The watchers' edit-to-update latency
 * with the stalled client is compared with the controls of the same run,
 * and the server's resident memory must stay flat; when the slow client
 * reads again it catches up with one update or a snapshot, not a backlog.
 * The figures are printed.
 *
 * How this fails when one slow client blocks everyone: a server that waits
 * for the stalled socket stops answering the editor, whose request times
 * out (10 s, tests/lib/rigd.js) and fails the test; one that waits on it
 * for a while per update shows as a latency of hundreds of milliseconds or
 * seconds, far above the bound; one that queues the stalled client's
 * updates without limit fails the memory check.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, tree, worldsOf, Client, createScene, skeletonOps, sleep, percentile, SANITIZED,
} = require('../lib/rigd.js');
const { editLatencies } = require('../lib/latency.js');

const STALL_MS = 10000;
const BASELINE_MS = 3000;

let server;

/* synchronous=NORMAL: with FULL, every group commit waits for an fsync of a
 * few milliseconds whose jitter would drown what this test measures (the
 * path from one client's edit to the others' updates). */
test.before(async () => {
  server = await startRigd({
    args: ['--sync', 'normal'],
    /* AddressSanitizer keeps freed memory in a quarantine (256 MB by
     * default) that would read as growth: keep it small here. */
    env: SANITIZED ? { ASAN_OPTIONS: `${process.env.ASAN_OPTIONS || ''}:quarantine_size_mb=4` } : {},
  });
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

/* Turns the root as fast as acks come back, for 'ms' (tests/lib/latency.js). */
function editFor(editor, watchers, ms) {
  return editLatencies(editor, watchers, ms, {
    scene: 'skel',
    opsFor: (i) => [{ op: 'set', id: 'root', euler: [0, (i * 3) % 360, 0] }],
  });
}

test('a client that stops reading for 10 s delays nobody and costs no memory', async () => {
  await createScene(server, 'skel');
  const editor = await Client.connect(server);
  assert.equal((await editor.request({ type: 'edit', scene: 'skel', ops: skeletonOps() })).type, 'ack');
  const watchers = [];
  for (let i = 0; i < 3; i++) {
    watchers.push(await Client.connect(server));
    await watchers[i].subscribe('skel');
  }

  await editFor(editor, watchers, 1000);  /* warm up (JIT, caches); not measured */
  const base = await editFor(editor, watchers, BASELINE_MS);

  /* Memory is compared with a control period of the same length and load
   * without a stalled client: the database grows during both and SQLite's
   * page cache (bounded, 16 MB) fills with it, so a bare "RSS stays under
   * N MB" would measure the cache, not the stalled client. */
  const sampleGrowth = async (run) => {
    const before = server.rssKb();
    const samples = [];
    const sampler = setInterval(() => samples.push(server.rssKb()), 250);
    const result = await run();
    clearInterval(sampler);
    samples.push(server.rssKb());
    return { result, before, max: Math.max(...samples), grown: Math.max(...samples) - before };
  };
  const control = await sampleGrowth(() => editFor(editor, watchers, STALL_MS));

  const slow = await Client.connect(server);
  await slow.subscribe('skel');
  const slowSeen = slow.messages.length;
  slow.ws._socket.pause();
  await sleep(200);
  const stall = await sampleGrowth(() => editFor(editor, watchers, STALL_MS));
  const stalled = stall.result;
  const p50 = percentile(stalled.latencies, 50);
  const p99 = percentile(stalled.latencies, 99);
  /* Flat: the stalled client adds no per-update memory (a backlog of its
   * updates would be tens of MB here). */
  const extra = stall.grown - control.grown;
  assert.ok(extra < (SANITIZED ? 4096 : 2048),
    `the stalled client cost ${extra} kB (+${stall.grown} kB vs +${control.grown} kB without it)`);

  /* It reads again and catches up at once, with few frames. */
  slow.ws._socket.resume();
  const final = await tree(server, 'skel');
  await slow.waitSeq('skel', final.seq, 30000);
  assert.deepEqual(slow.worlds('skel'), worldsOf(final.nodes));
  const frames = slow.messages.slice(slowSeen).filter((m) => m.type === 'update' || m.type === 'snapshot');
  console.log(`# the stalled client caught up ${stalled.edits} edits with ${frames.length} frames (most were in socket buffers)`);
  assert.ok(frames.length < stalled.edits, 'coalesced, not replayed one by one');

  /* The second control, after the stall, with the same clients (the slow
   * one reading again). Together with the first it brackets the stall, so
   * a change in the machine's load during the run raises the control too. */
  const after = await editFor(editor, watchers, BASELINE_MS);
  const controls = [base, control.result, after].map((r) => ({
    edits: r.edits, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99),
  }));
  const ctlP50 = Math.max(...controls.map((c) => c.p50));
  for (const [name, c] of [['before', controls[0]], ['control', controls[1]], ['after', controls[2]]]) {
    console.log(`# ${name}: ${c.edits} edits, latency p50 ${c.p50.toFixed(2)} ms, p99 ${c.p99.toFixed(2)} ms`);
  }
  console.log(`# with a stalled client: ${stalled.edits} edits, latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);

  /* Within twice the slowest control of this run, plus 50 ms: on an idle
   * machine the latencies are a few milliseconds, and a machine busy with
   * other work moves a median by tens of milliseconds at most, while a
   * server held up by the stalled client shows hundreds of milliseconds or
   * seconds (or times out, above). */
  assert.ok(p50 <= 2 * ctlP50 + 50, `p50 ${p50} ms with the stalled client vs ${ctlP50} ms in the controls`);
  /* The editor kept its pace: the same period without the stalled client is
   * the control. Load changes the pace by a factor of two at most; a blocked
   * server makes a handful of edits, or none. */
  assert.ok(stalled.edits >= control.result.edits / 4,
    `the editor kept its pace (${stalled.edits} edits with the stalled client, ${control.result.edits} without)`);
  const metrics = (await get(server, '/metrics')).text;
  console.log(`# ${/^rigd_updates_coalesced_total .*/m.exec(metrics)[0]}`);
  for (const c of [editor, slow, ...watchers]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('a client behind the journal gets a snapshot; one that never reads its replies is held, then closed', async () => {
  const s = await startRigd({ args: ['--sync', 'normal', '--journal', '2', '--reply-queue', '4096'] });
  await createScene(s, 'lag');
  const editor = await Client.connect(s);
  await editor.request({ type: 'edit', scene: 'lag', ops: skeletonOps() });

  /* Behind by more than two turns: a snapshot, then updates again. */
  const lagging = await Client.connect(s);
  await lagging.subscribe('lag');
  const seen = lagging.messages.length;
  lagging.ws._socket.pause();
  /* One batch a turn, each update 59 matrices (about 20 kB): far more than
   * the socket buffers hold, so the server sees the client fall behind. */
  for (let i = 0; i < 800; i++) {
    await editor.request({ type: 'edit', scene: 'lag', ops: [{ op: 'set', id: 'root', euler: [0, i, 0] }] });
  }
  lagging.ws._socket.resume();
  const final = await tree(s, 'lag');
  await lagging.waitSeq('lag', final.seq, 30000);
  assert.deepEqual(lagging.worlds('lag'), worldsOf(final.nodes));
  const snapshots = lagging.messages.slice(seen).filter((m) => m.type === 'snapshot').length;
  assert.ok(snapshots >= 1, 'caught up with a snapshot');
  const after = lagging.messages.length;
  const ack = await editor.request({ type: 'edit', scene: 'lag', ops: [{ op: 'set', id: 'root', t: [0, 2, 0] }] });
  const upd = await lagging.waitFor((m) => m.type === 'update' && m.seq === ack.seq, { from: after });
  assert.equal(Object.keys(upd.world).length, 59);

  /* A subscriber that stops reading and keeps sending: its socket fills with
   * updates and its acks pile up; past half of --reply-queue rigd stops
   * reading it (back-pressure: rigd_clients_held_total), and once it has
   * read nothing for CLIENTS_HOLD_CLOSE_S (5 s) it is closed (1008), while
   * the editor goes on. */
  const deaf = await Client.connect(s);
  await deaf.subscribe('lag');
  deaf.ws._socket.pause();
  let dropped = 0;
  let heldBeforeDrop = 0;
  const until = Date.now() + 60000;
  for (let round = 0; Date.now() < until && !dropped; round++) {
    const batch = [];
    for (let i = 0; i < 8; i++) {
      batch.push(editor.request({ type: 'edit', scene: 'lag', ops: [{ op: 'set', id: 'root', euler: [0, round, i] }] }));
      deaf.send({ type: 'edit', scene: 'lag', req: round * 8 + i, ops: [{ op: 'set', id: 'head_end', t: [0, i, 0] }] });
    }
    await Promise.all(batch);
    const text = (await get(s, '/metrics')).text;
    dropped = Number(/^rigd_clients_dropped_total (\d+)/m.exec(text)[1]);
    if (!dropped) heldBeforeDrop = Number(/^rigd_clients_held_total (\d+)/m.exec(text)[1]);
  }
  assert.equal(dropped, 1, 'the deaf client was dropped');
  assert.ok(heldBeforeDrop >= 1, 'it was held (rigd stopped reading it) before it was closed');
  assert.equal((await editor.request({ type: 'edit', scene: 'lag', ops: [{ op: 'set', id: 'root', t: [0, 1, 0] }] })).type, 'ack');
  deaf.ws.terminate();
  for (const c of [editor, lagging]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
  assert.equal(await s.stop('SIGTERM'), 0);
});
