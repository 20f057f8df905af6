'use strict';
/*
 * The commit off the event loop (docs/architecture.md, "The turn and the
 * commit"), driven while every fsync of the database is slowed (the fault
 * VFS, RIGD_TEST_SYNC_DELAY_MS): a disk that takes 300 ms to sync.
 *
 * - Acks and updates never precede their commit: when an ack or an update
 *   for seq N reaches a client, the database file, read by sqlite3 beside
 *   the server, already holds seq N (a WAL reader sees a commit only once
 *   it was synced).
 * - While a commit is out, the loop answers /healthz, a read of another
 *   scene and a subscription to it: each answer comes back while the same
 *   commit is still out (rigd_commit_queue 1 and rigd_commits_total
 *   unchanged before and after it), which a loop that ran the commit
 *   itself could never do.
 * - Seq order is kept: each editor's acks come back in the order it sent
 *   them, with increasing seqs; the log holds every acked seq once,
 *   gapless; the subscriber's updates have increasing seqs and end on the
 *   state the server reads back.
 * - The group commit grows by itself: with a slow disk, commits carry many
 *   batches (rigd_commit_batches), and nothing was closed.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const {
  startRigd, get, tree, worldsOf, Client, createScene, skeletonOps,
} = require('../lib/rigd.js');

const DELAY_MS = 300;
let server;

/* The last seq of scene 'name' in the database file, as another process
 * reads it. */
function storedSeq(name) {
  const q = `SELECT coalesce(max(e.seq), 0) FROM edits e JOIN scenes s ON s.id = e.scene_id WHERE s.name = '${name}'`;
  const r = spawnSync('sqlite3', ['-readonly', server.db, q], { encoding: 'utf8' });
  assert.equal(r.status, 0, `sqlite3: ${r.stderr}`);
  return Number(r.stdout.trim());
}

function metric(text, name) {
  const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
  assert.ok(m, `no ${name} in /metrics`);
  return Number(m[1]);
}

test.before(async () => {
  server = await startRigd({ env: { RIGD_TEST_SYNC_DELAY_MS: String(DELAY_MS) } });
  await createScene(server, 'a');
  await createScene(server, 'b');
  const setup = await Client.connect(server);
  for (const s of ['a', 'b']) {
    const r = await setup.request({ type: 'edit', scene: s, ops: skeletonOps() }, 30000);
    assert.equal(r.type, 'ack');
  }
  await setup.close();
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

test('acks and updates never precede their commit, and seq order is kept', async () => {
  const sub = await Client.connect(server);
  await sub.subscribe('a');
  /* Each update, as it arrives: is its seq in the file yet? */
  const early = [];
  let updates = 0;
  sub.ws.on('message', (data) => {
    const m = JSON.parse(data.toString('utf8'));
    if (m.type !== 'update' || m.scene !== 'a') return;
    updates++;
    const stored = storedSeq('a');
    if (stored < m.seq) early.push(`update ${m.seq} while the file held ${stored}`);
  });
  const editors = [await Client.connect(server), await Client.connect(server)];
  const acked = [];
  const drive = async (c, k) => {
    const seqs = [];
    for (let round = 0; round < 6; round++) {
      /* Eight in flight at once: they land in one or two commits. */
      const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => c.request({
        type: 'edit', scene: 'a', ops: [{ op: 'set', id: 'root', euler: [0, k * 40 + round, i] }],
      }, 30000)));
      const stored = storedSeq('a');
      for (const r of replies) {
        assert.equal(r.type, 'ack', `${r.code}: ${r.message}`);
        if (stored < r.seq) early.push(`ack ${r.seq} while the file held ${stored}`);
        seqs.push(r.seq);
      }
    }
    return seqs;
  };
  const [s0, s1] = await Promise.all([drive(editors[0], 0), drive(editors[1], 1)]);
  for (const seqs of [s0, s1]) {
    /* In the order sent, increasing: no batch overtook an earlier one. */
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `seq ${seqs[i]} after ${seqs[i - 1]}`);
    acked.push(...seqs);
  }
  assert.deepEqual(early, []);
  /* Every acked seq once; the log is gapless and ends where the server is. */
  acked.sort((x, y) => x - y);
  assert.equal(new Set(acked).size, 96);
  const final = await tree(server, 'a');
  assert.equal(storedSeq('a'), final.seq);
  const log = spawnSync('sqlite3', ['-readonly', server.db,
    "SELECT e.seq FROM edits e JOIN scenes s ON s.id = e.scene_id WHERE s.name = 'a' ORDER BY e.seq"],
  { encoding: 'utf8' }).stdout.trim().split('\n').map(Number);
  log.forEach((seq, i) => assert.equal(seq, i + 1));
  for (const seq of acked) assert.ok(seq <= final.seq);
  /* The subscriber saw increasing seqs (the mirror flags any other) and
   * ends on the state the server reads back. */
  await sub.waitSeq('a', final.seq, 30000);
  assert.ok(updates > 0);
  assert.deepEqual(sub.worlds('a'), worldsOf(final.nodes));
  const text = (await get(server, '/metrics')).text;
  assert.ok(metric(text, 'rigd_commit_batches') >= 1);
  assert.equal(metric(text, 'rigd_clients_dropped_total'), 0);
  for (const c of [sub, ...editors]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

test('while a commit is out, the loop answers /healthz, another scene and a subscription', async () => {
  const editor = await Client.connect(server);
  let stop = false;
  /* Edits of scene a, four in flight, for as long as the checks run: a
   * commit of a is nearly always out. */
  const load = (async () => {
    let i = 0;
    while (!stop) {
      await Promise.all(Array.from({ length: 4 }, () => editor.request({
        type: 'edit', scene: 'a', ops: [{ op: 'set', id: 'root', t: [0, i++ % 7, 0] }],
      }, 30000)));
    }
  })();
  const bTree = await tree(server, 'b');
  const seen = { healthz: 0, read: 0, subscribe: 0 };
  const watcher = await Client.connect(server);
  for (let attempt = 0; attempt < 40 && (seen.healthz < 1 || seen.read < 1 || seen.subscribe < 1); attempt++) {
    const m1 = (await get(server, '/metrics')).text;
    if (metric(m1, 'rigd_commit_queue') !== 1) continue;
    const h = await get(server, '/healthz');
    const r = await get(server, '/api/scenes/b');
    const snap = await watcher.subscribe('b');
    const m2 = (await get(server, '/metrics')).text;
    assert.equal(h.status, 200);
    assert.equal(r.status, 200);
    assert.equal(r.json.seq, bTree.seq);
    assert.equal(snap.type, 'snapshot');
    assert.equal(snap.seq, bTree.seq);
    await watcher.request({ type: 'unsubscribe', scene: 'b' });
    /* All of it answered while the one commit stayed out. */
    if (metric(m2, 'rigd_commit_queue') === 1 &&
        metric(m2, 'rigd_commits_total') === metric(m1, 'rigd_commits_total')) {
      seen.healthz++;
      seen.read++;
      seen.subscribe++;
    }
  }
  stop = true;
  await load;
  assert.ok(seen.healthz >= 1 && seen.read >= 1 && seen.subscribe >= 1,
    `answered during one commit: ${JSON.stringify(seen)}`);
  for (const c of [editor, watcher]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});

/*
 * Fairness under a backlog: one client with 1,000 edits in flight takes at
 * most its share of them (with a 300 ms sync, STASH_CLIENT_MIN: 64), plus
 * the rest of one socket read, into each commit; rigd stops reading it until that commit returns. An
 * edit another client sends just after the 1,000 rides in the next
 * commit, so its ack comes commits before the backlog's last; were the
 * backlog read at once, the other edit would wait in the commit of all
 * 1,000 and be answered with the last of them.
 */
test('a client with 1,000 edits in flight does not hold another\'s edit behind them', async () => {
  const greedy = await Client.connect(server);
  const other = await Client.connect(server);
  const t0 = Date.now();
  const backlog = Array.from({ length: 1000 }, (_, i) => greedy.request({
    type: 'edit', scene: 'a', ops: [{ op: 'set', id: 'root', t: [i, 0, 0] }],
  }, 60000).then((r) => ({ r, ms: Date.now() - t0 })));
  await new Promise((resolve) => setTimeout(resolve, 50));
  const mine = await other.request({ type: 'edit', scene: 'a', ops: [{ op: 'set', id: 'root', euler: [0, 0, 1] }] }, 60000);
  const mineMs = Date.now() - t0;
  const done = await Promise.all(backlog);
  for (const { r } of [...done, { r: mine }]) assert.equal(r.type, 'ack', `${r.code}: ${r.message}`);
  const lastMs = Math.max(...done.map((d) => d.ms));
  const seqs = done.map((d) => d.r.seq);
  /* The backlog went in order, over several commits of DELAY_MS each. */
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1]);
  assert.ok(lastMs - mineMs > DELAY_MS, `the other ack at ${mineMs} ms, the backlog's last at ${lastMs} ms`);
  assert.ok(mine.seq < seqs.at(-1), `the other edit (seq ${mine.seq}) went in before the backlog's end (${seqs.at(-1)})`);
  const text = (await get(server, '/metrics')).text;
  assert.ok(metric(text, 'rigd_clients_turn_held_total') >= 1);
  assert.equal(metric(text, 'rigd_clients_dropped_total'), 0);
  for (const c of [greedy, other]) {
    assert.deepEqual(c.schemaViolations, []);
    await c.close();
  }
});
