'use strict';
/*
 * A batch committed by a scene's owner whose append to the scene's log
 * stream was not confirmed, settled against the stream so that copies
 * never diverge (docs/deploy.md, "A batch committed but not confirmed"),
 * and --redis-wait with a real Redis replica. Real redis-server and rigd
 * processes; each failure is made to happen at a chosen append by the
 * test-only RIGD_FAULT_APPEND knob:
 *
 * - N:lose-answer: Redis appends it and the answer is lost with the
 *   connection: the owner finds its batch in the stream and keeps it;
 * - N:unsent: the append never reaches Redis: the owner appends it again;
 * - N:hold:MS: the append waits MS ms; the owner is SIGSTOPped meanwhile, a
 *   second process takes the scene over and commits its own batch at that
 *   seq; the first one, continued, is fenced, takes its copy back
 *   (engine_rewind) and applies the stream; its viewer converges; the
 *   same with the stream quiet after the fenced append (the probe finds
 *   it ending before the batch while another process owns the scene);
 * - a crash between a commit and its append: restarted on its database,
 *   the process checks its copy against the stream and rewinds it.
 *
 * Every process ends with the same log as the stream's lines, gapless, each
 * acknowledged edit once, the same tree bit for bit.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { startRigd, get, Client, sleep, tempDir, run } = require('../lib/rigd.js');
const {
  WAIT_MS, freePort, startRedis, redisCall, streamOf, clusterOf, until, ownerOf, logOf, metric,
} = require('../lib/cluster.js');

const LEASE_MS = 1000;
const show = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? Number(v) : v));

const editMsg = (client, n) => ({ type: 'edit', scene: 'demo', client, client_seq: n,
  ops: [{ op: 'set', id: 'arm', euler: [0, 0, n] }] });

function startProc(redis, { env = {}, args = [], dir, db } = {}) {
  return startRigd({
    dir: dir || tempDir('rigd-fence-'),
    db,
    env,
    args: ['--redis', redis.url, '--lease', String(LEASE_MS), '--log-level', 'info', ...args],
  });
}

/* Redis, a first process that owns demo (with 'env'), then a second. */
async function startPair(env, args = []) {
  const redis = await startRedis(tempDir('rigd-fence-redis-'), await freePort());
  const a = await startProc(redis, { env, args });
  await until('the first process owning demo', async () => {
    const l = (await clusterOf(a)).leases.find((x) => x.scene === 'demo');
    return l && l.state === 'owned';
  });
  const b = await startProc(redis, { args });
  await ownerOf([a, b], 'demo');
  return { redis, procs: [a, b] };
}

async function stopAll(c) {
  for (const p of c.procs) {
    if (p.paused) {
      try { process.kill(p.rigdPid, 'SIGCONT'); } catch { /* gone */ }
    }
    if (!p.exited) await p.stop('SIGKILL').catch(() => {});
  }
  for (const r of c.redises || [c.redis]) await r.stop('SIGKILL');
}

async function ack(ws, msg) {
  const r = await ws.request(msg);
  assert.equal(r.type, 'ack', show(r));
  return Number(r.seq);
}

/* ack() to a process that may still be catching up with the scene it just
 * took over (`unavailable` until then): the same batch again, applied once. */
async function ackSoon(ws, msg) {
  const r = await until(`an ack of ${msg.client}/${msg.client_seq}`, async () => {
    const x = await ws.request(msg);
    if (x.type === 'ack') return x;
    assert.equal(x.code, 'unavailable', show(x));
    return null;
  });
  return Number(r.seq);
}

/* Every process of 'procs' at the stream's last seq, with the stream's
 * batches as its log (times aside), gapless, and the same tree bit for bit.
 * Resolves to the log. */
async function converged(procs, redis) {
  const stream = await streamOf(redis.port, 'demo');
  const last = stream[stream.length - 1].seq;
  await until('every process at the stream\'s last seq', async () => {
    const seqs = await Promise.all(procs.map(async (p) => (await get(p, '/api/scenes/demo')).json.seq));
    return seqs.every((s) => s === last);
  });
  const logs = await Promise.all(procs.map((p) => logOf(p, 'demo')));
  for (const l of logs) assert.deepEqual(l, logs[0]);
  assert.deepEqual(logs[0].map((l) => l.seq), logs[0].map((_, i) => i + 1), 'gapless');
  assert.deepEqual(stream.map((e) => e.seq), stream.map((_, i) => stream[0].seq + i), 'stream gapless');
  for (const e of stream) {
    const x = { ...e.line };
    delete x.time;
    assert.deepEqual(x, logs[0][e.seq - 1], `seq ${e.seq}: the stream's batch`);
  }
  const trees = await Promise.all(procs.map(async (p) => (await get(p, '/api/scenes/demo')).text));
  for (const t of trees) assert.equal(t, trees[0]);
  return logs[0];
}

const once = (log, client, n) => log.filter((l) => l.client === client && l.client_seq === n).length;

test('an append whose answer is lost is found in the stream and kept', async () => {
  const c = await startPair({ RIGD_FAULT_APPEND: '3:lose-answer' });
  const [a, b] = c.procs;
  try {
    const ws = await Client.connect(a);
    await ack(ws, editMsg('ed', 1));
    await ack(ws, editMsg('ed', 2));
    const r = await ws.request(editMsg('ed', 3));
    assert.equal(r.type, 'error', show(r));
    assert.equal(r.code, 'unavailable');
    assert.match(r.message, /append to the scene's log stream was not confirmed/);
    await until('the batch confirmed', async () => (await metric(a, 'rigd_cluster_log_settled_total')) >= 1);
    /* A resend is answered with the seq it got, and nothing is applied twice. */
    const again = await until('edits taken again', async () => {
      const x = await ws.request(editMsg('ed', 3));
      return x.type === 'ack' ? x : null;
    });
    const s4 = await ackSoon(ws, editMsg('ed', 4));
    assert.equal(s4, Number(again.seq) + 1);
    const log = await converged([a, b], c.redis);
    for (let i = 1; i <= 4; i++) assert.equal(once(log, 'ed', i), 1, `ed/${i} once`);
    assert.equal(await metric(a, 'rigd_cluster_rewinds_total'), 0);
    assert.match(a.stderr, /in the log stream: confirmed/);
    ws.close();
  } finally {
    await stopAll(c);
  }
});

test('an append that never reached Redis is appended again by its owner', async () => {
  const c = await startPair({ RIGD_FAULT_APPEND: '2:unsent' });
  const [a, b] = c.procs;
  try {
    const ws = await Client.connect(a);
    await ack(ws, editMsg('ed', 1));
    const r = await ws.request(editMsg('ed', 2));
    assert.equal(r.code, 'unavailable', show(r));
    /* Refused, saying why, until it is settled. */
    await until('appended again', async () => (await metric(a, 'rigd_cluster_log_reappended_total')) >= 1);
    await until('edits taken again', async () => (await ws.request(editMsg('ed', 3))).type === 'ack');
    const log = await converged([a, b], c.redis);
    for (let i = 1; i <= 3; i++) assert.equal(once(log, 'ed', i), 1, `ed/${i} once`);
    assert.equal(await metric(a, 'rigd_cluster_rewinds_total'), 0);
    assert.match(a.stderr, /are appended again/);
    ws.close();
  } finally {
    await stopAll(c);
  }
});

test('a batch committed by an owner whose lease moved before its append is taken back', async () => {
  /* The append of a's third edit waits 3 s; a is stopped meanwhile. */
  const c = await startPair({ RIGD_FAULT_APPEND: '3:hold:3000' });
  const [a, b] = c.procs;
  try {
    const viewers = [await Client.connect(a), await Client.connect(b)];
    for (const v of viewers) await v.subscribe('demo');
    const ws = await Client.connect(a);
    await ack(ws, editMsg('a', 1));
    const s2 = await ack(ws, editMsg('a', 2));
    const held = ws.request(editMsg('a', 3));
    await until('a committed its third edit', async () => (await get(a, '/api/scenes/demo')).json.seq === s2 + 1);
    process.kill(a.rigdPid, 'SIGSTOP');
    a.paused = true;
    let bSeqs;
    try {
      const owner = await ownerOf([a, b], 'demo');
      assert.equal(owner.proc, b);
      const wb = await Client.connect(b);
      bSeqs = [await ackSoon(wb, editMsg('b', 1)), await ack(wb, editMsg('b', 2))];
      assert.deepEqual(bSeqs, [s2 + 1, s2 + 2], 'b commits its own batch at the seq a committed');
      wb.close();
    } finally {
      process.kill(a.rigdPid, 'SIGCONT');
      a.paused = false;
    }
    const r = await held;
    assert.equal(r.code, 'unavailable', show(r));
    await until('a rewound', async () => (await metric(a, 'rigd_cluster_rewinds_total')) >= 1);
    assert.equal(await metric(a, 'rigd_cluster_rewound_batches_total'), 1);
    assert.match(a.stderr, new RegExp(`batches ${s2 + 1}\\.\\.${s2 + 1} committed here are not the cluster's`));
    const log = await converged([a, b], c.redis);
    assert.equal(once(log, 'a', 3), 0, 'the batch the cluster does not keep is gone');
    for (const [cl, n] of [['a', 1], ['a', 2], ['b', 1], ['b', 2]]) assert.equal(once(log, cl, n), 1);
    /* Viewers on both converge to the same matrices, never disconnected. */
    const worlds = {};
    for (const n of (await get(b, '/api/scenes/demo')).json.nodes) worlds[n.id] = n.world;
    for (const v of viewers) {
      await v.waitSeq('demo', log.length, WAIT_MS);
      await until('the viewer at the stream\'s state', async () =>
        JSON.stringify(v.worlds('demo')) === JSON.stringify(worlds));
      assert.deepEqual(v.schemaViolations, []);
      assert.equal(v.closeCode, undefined);
    }
    /* a's edits go to b now, and apply. */
    await ackSoon(ws, editMsg('a', 4));
    await converged([a, b], c.redis);
    for (const v of [...viewers, ws]) v.close();
    for (const p of c.procs) {
      assert.equal(await p.stop('SIGTERM'), 0);
      const check = await run('rigd', ['check', '--db', p.db]);
      assert.equal(check.code, 0, check.stdout + check.stderr);
    }
  } finally {
    await stopAll(c);
  }
});

test('a fenced append whose lease moved, the stream quiet after it, is taken back', async () => {
  /* The append of a's second edit waits 1.5 s; a is stopped until b owns
   * the scene, and b commits nothing meanwhile: a's append is fenced when
   * it goes, the stream ends before it, and another process owns it. */
  const c = await startPair({ RIGD_FAULT_APPEND: '2:hold:1500' });
  const [a, b] = c.procs;
  try {
    const ws = await Client.connect(a);
    const s1 = await ack(ws, editMsg('a', 1));
    const held = ws.request(editMsg('a', 2));
    await until('a committed its second edit', async () => (await get(a, '/api/scenes/demo')).json.seq === s1 + 1);
    process.kill(a.rigdPid, 'SIGSTOP');
    a.paused = true;
    try {
      assert.equal((await ownerOf([a, b], 'demo')).proc, b);
      await sleep(1600);
    } finally {
      process.kill(a.rigdPid, 'SIGCONT');
      a.paused = false;
    }
    const r = await held;
    assert.equal(r.code, 'unavailable', show(r));
    await until('a rewound', async () => (await metric(a, 'rigd_cluster_rewinds_total')) >= 1);
    /* Fenced ("another process owns the scene now"), or not sent when the
     * pause also cost the connection: either way not in the stream. */
    assert.match(a.stderr, new RegExp(`batches ${s1 + 1}\\.\\.${s1 + 1} committed here are not the cluster's \\(process p[0-9a-f]+ owns the scene and its log stream ends at seq ${s1}\\)`));
    assert.equal((await get(a, '/api/scenes/demo')).json.seq, s1);
    /* The same client_seq is new again: applied (by b) once. */
    await ackSoon(ws, editMsg('a', 2));
    const log = await converged([a, b], c.redis);
    assert.equal(once(log, 'a', 2), 1);
    ws.close();
  } finally {
    await stopAll(c);
  }
});

test('a process that crashed between a commit and its append rewinds at start', async () => {
  const redis = await startRedis(tempDir('rigd-fence-redis-'), await freePort());
  const dirA = tempDir('rigd-fence-a-');
  const a = await startProc(redis, { env: { RIGD_FAULT_APPEND: '2:hold:600000' }, dir: dirA });
  const c = { redis, procs: [a] };
  try {
    await until('a owning demo', async () => {
      const l = (await clusterOf(a)).leases.find((x) => x.scene === 'demo');
      return l && l.state === 'owned';
    });
    const b = await startProc(redis);
    c.procs.push(b);
    await ownerOf([a, b], 'demo');
    const ws = await Client.connect(a);
    const s1 = await ack(ws, editMsg('a', 1));
    ws.send(editMsg('a', 2));
    await until('a committed its second edit', async () => (await get(a, '/api/scenes/demo')).json.seq === s1 + 1);
    await a.stop('SIGKILL');
    ws.close();
    await until('b owning demo', async () => (await ownerOf([b], 'demo')).proc === b);
    const wb = await Client.connect(b);
    assert.equal(await ackSoon(wb, editMsg('b', 1)), s1 + 1);
    await ack(wb, editMsg('b', 2));
    /* a again, on its database, without the fault. */
    const a2 = await startProc(redis, { dir: dirA, db: a.db });
    c.procs.push(a2);
    await until('a rewound', async () => (await metric(a2, 'rigd_cluster_rewinds_total')) >= 1);
    const log = await converged([a2, b], redis);
    assert.equal(once(log, 'a', 2), 0);
    assert.equal(once(log, 'b', 1), 1);
    assert.match(a2.stderr, /committed here are not the cluster's/);
    wb.close();
  } finally {
    await stopAll(c);
  }
});

test('--redis-wait: an acknowledged edit is on the Redis replica; without it, unavailable', async () => {
  const LEASE = 4000;
  const primary = await startRedis(tempDir('rigd-fence-primary-'), await freePort());
  const replica = await startRedis(tempDir('rigd-fence-replica-'), await freePort(),
    ['--replicaof', '127.0.0.1', String(primary.port)]);
  const c = { redises: [replica, primary], procs: [] };
  try {
    await until('the replica linked', async () => (await redisCall(primary.port, 'WAIT', '1', '100')) === 1);
    const args = ['--redis', primary.url, '--lease', String(LEASE), '--log-level', 'info',
      '--redis-wait', '1:1000'];
    for (let k = 0; k < 2; k++) c.procs.push(await startRigd({ dir: tempDir('rigd-fence-w-'), args }));
    const owner = await ownerOf(c.procs, 'demo');
    const ws = await Client.connect(owner.proc);
    const acked = [];
    /* A replica with appendfsync always on a busy machine (the sanitised
     * build beside other tests) may miss a WAIT of a second now and then:
     * the same batch again is acknowledged once the replica has it. */
    for (let i = 1; i <= 10; i++) acked.push({ client: 'w', client_seq: i, seq: await ackSoon(ws, editMsg('w', i)) });
    /* The replica stopped: committed, in the primary's stream, not
     * acknowledged, saying so. */
    replica.signal('SIGSTOP');
    let refused;
    try {
      refused = await ws.request(editMsg('w', 11));
      assert.equal(refused.type, 'error', show(refused));
      assert.equal(refused.code, 'unavailable');
      assert.match(refused.message, /only 0 of the 1 Redis replicas asked for confirmed it/);
      assert.ok(await metric(owner.proc, 'rigd_cluster_log_unreplicated_total') >= 1);
      /* A resend is not applied twice, and not acknowledged either while
       * the replica lacks it. */
      const again = await ws.request(editMsg('w', 11));
      assert.equal(again.code, 'unavailable', show(again));
      assert.match(again.message, /only 0 of the 1 Redis replicas/);
    } finally {
      replica.signal('SIGCONT');
    }
    /* Continued: edits are acknowledged again. */
    await until('edits acknowledged again', async () => (await ws.request(editMsg('w', 12))).type === 'ack');
    /* ...and the resend too, with the seq it got. */
    const resent = await ws.request(editMsg('w', 11));
    assert.equal(resent.type, 'ack', show(resent));
    acked.push({ client: 'w', client_seq: 11, seq: Number(resent.seq) });
    for (let i = 13; i <= 20; i++) acked.push({ client: 'w', client_seq: i, seq: await ackSoon(ws, editMsg('w', i)) });
    const log = await logOf(owner.proc, 'demo');
    assert.equal(once(log, 'w', 11), 1, 'the unconfirmed edit applied once');
    /* The primary killed: every acknowledged edit is in the replica's copy
     * of the log stream. */
    await primary.stop('SIGKILL');
    const stream = await streamOf(replica.port, 'demo');
    for (const a of acked) {
      const e = stream.filter((x) => x.line.client === a.client && x.line.client_seq === a.client_seq);
      assert.equal(e.length, 1, `w/${a.client_seq} in the replica's stream once`);
      assert.equal(e[0].seq, a.seq);
    }
    ws.close();
  } finally {
    await stopAll(c);
  }
});
