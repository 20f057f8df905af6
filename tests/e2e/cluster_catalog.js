'use strict';
/*
 * A cluster process that was away, and an owner behind what a log stream
 * keeps (--redis; docs/deploy.md, "A process that was away" and "A process
 * behind what a log stream keeps"). A real redis-server and real rigd
 * processes, each with its own database, with --log-keep 10 so that a
 * process that missed more than ten batches of a scene must get them from
 * another process.
 *
 * What is checked: a process SIGKILLed while scenes were created, deleted,
 * and deleted and created again under the same name with other dims, comes
 * back on its database and serves exactly the cluster's scenes, each with
 * the same log and tree as the others; its viewers of the scenes deleted
 * meanwhile are told; the deleted name is not recorded again. And a
 * process that takes a scene over while its copy is behind the stream
 * catches up from a process that is not the owner, then applies edits;
 * every acknowledged edit is in every copy once, at its seq, gapless. And
 * a process started while Redis is down connects once Redis is up.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, post, postEdit, Client, tempDir, request, sleep,
} = require('../lib/rigd.js');
const {
  LEASE_MS, WAIT_MS, freePort, startRedis, redisCmd, redisReply, clusterOf, until, ownerOf, logOf, scenesOf,
} = require('../lib/cluster.js');

const argsFor = (redis) => ['--redis', redis.url, '--lease', String(LEASE_MS), '--log-level', 'info',
  '--log-keep', '10'];

async function stopAll(c) {
  for (const p of c.procs) {
    if (p.paused) {
      try { process.kill(p.rigdPid, 'SIGCONT'); } catch { /* gone */ }
    }
    if (!p.exited) await p.stop('SIGKILL').catch(() => {});
  }
  if (c.redis) await c.redis.stop();
}

/* Edits 'batches' of 'scene' through 'p' until each is acknowledged (the
 * first waits for the lease); resolves to the last seq. */
async function editAll(p, scene, batches) {
  let seq = 0;
  for (const b of batches) {
    const r = await until(`an edit of ${scene} acknowledged`, async () => {
      const x = await postEdit(p, scene, b);
      return x.status === 200 ? x : null;
    });
    seq = r.json.seq;
  }
  return seq;
}

const sets = (id, n, from = 1) => Array.from({ length: n }, (_, i) => ({
  client: `set-${id}`, client_seq: from + i, ops: [{ op: 'set', id, t: [from + i, 0, 0] }],
}));

/* Every live process serves the same scenes as 'ref', each with the same
 * log and tree (resolves once it does; the assertions say what differs). */
async function sameEverywhere(ref, procs) {
  let want;
  await until('the same scenes, at the same seqs, on every process', async () => {
    want = await scenesOf(ref);
    for (const p of procs) {
      const have = JSON.stringify(await scenesOf(p));
      if (have !== JSON.stringify(want)) throw new Error(`${p.url}: ${have} for ${JSON.stringify(want)}`);
    }
    return true;
  });
  for (const s of want) {
    const log = await logOf(ref, s.name);
    assert.deepEqual(log.map((l) => l.seq), log.map((_, i) => i + 1), `${s.name}: gapless`);
    const tree = (await get(ref, `/api/scenes/${s.name}`)).text;
    for (const p of procs) {
      assert.deepEqual(await logOf(p, s.name), log, `${s.name}: the same log`);
      assert.equal((await get(p, `/api/scenes/${s.name}`)).text, tree, `${s.name}: the same tree`);
    }
  }
  return want;
}

test('a process SIGKILLed while scenes came and went serves the cluster\'s scenes when it is back', async () => {
  const dir = tempDir('rigd-catalog-');
  const port = await freePort();
  const c = { redis: await startRedis(dir, port), procs: [] };
  const args = argsFor(c.redis);
  try {
    for (let k = 0; k < 3; k++) c.procs.push(await startRigd({ dir: tempDir(`rigd-catalog-${k}-`), args }));
    const [p1, p2, p3] = c.procs;
    await until('three live processes', async () => {
      const v = await Promise.all(c.procs.map(clusterOf));
      return v.every((x) => x.processes.length === 3 && x.redis.state === 'up');
    });
    /* Three scenes everywhere, with batches. */
    for (const [name, on] of [['keep', p1], ['gone', p1], ['swap', p2]]) {
      const r = await post(on, '/api/scenes', { name });
      assert.equal(r.status, 201, r.text);
    }
    await editAll(p2, 'keep', [{ ops: [{ op: 'create', id: 'a' }] }, ...sets('a', 5)]);
    await editAll(p1, 'gone', [{ ops: [{ op: 'create', id: 'g' }] }]);
    await editAll(p3, 'swap', [{ ops: [{ op: 'create', id: 's', t: [0, 0, 1] }] }, ...sets('s', 3)]);
    await sameEverywhere(p1, c.procs);

    /* Process 3 dies; meanwhile 'gone' is deleted, 'swap' deleted and
     * created again as a 2D scene, 'fresh' created, and 'fresh' and 'keep'
     * get more batches than the streams keep. */
    const { dir: dir3, db: db3 } = p3;
    await p3.stop('SIGKILL');
    assert.equal((await request(p1, 'DELETE', '/api/scenes/gone')).status, 200);
    assert.equal((await request(p2, 'DELETE', '/api/scenes/swap')).status, 200);
    const swap2 = await post(p1, '/api/scenes', { name: 'swap', dims: 2 });
    assert.equal(swap2.status, 201, swap2.text);
    assert.equal((await post(p2, '/api/scenes', { name: 'fresh' })).status, 201);
    await editAll(p1, 'swap', [{ ops: [{ op: 'create', id: 'b' }] }, ...sets('b', 12)]);
    await editAll(p2, 'fresh', [{ ops: [{ op: 'create', id: 'f' }] }, ...sets('f', 30)]);
    await editAll(p1, 'keep', sets('a', 25, 6));
    await sameEverywhere(p1, [p1, p2]);

    /* Back on its database while Redis is down: it serves its old copies,
     * and viewers subscribe to them. */
    await c.redis.stop();
    const back = await startRigd({ dir: dir3, db: db3, args });
    c.procs.push(back);
    const viewers = {};
    for (const name of ['gone', 'swap', 'keep']) {
      viewers[name] = await Client.connect(back);
      const snap = await viewers[name].subscribe(name);
      assert.equal(snap.type, 'snapshot', name);
      if (name === 'swap') assert.equal(snap.dims, undefined, 'the old swap, 3D');
    }
    /* Redis returns: the process reconciles its database with the catalog. */
    c.redis = await startRedis(dir, port);
    for (const name of ['gone', 'swap']) {
      const told = await viewers[name].waitFor((m) => m.type === 'error' && m.code === 'unknown_scene',
        { timeout: WAIT_MS, what: `the viewer of ${name} told` }).catch((e) => {
        throw new Error(`${e.message}; the process said:\n${back.stderr.slice(-4000)}`);
      });
      assert.match(told.message, new RegExp(`scene '${name}' was deleted`));
    }
    const live = [p1, p2, back];
    const scenes = await sameEverywhere(p1, live);
    assert.deepEqual(scenes.map((s) => s.name), ['demo', 'fresh', 'keep', 'swap']);
    assert.equal(scenes.find((s) => s.name === 'swap').dims, 2);
    assert.equal(scenes.find((s) => s.name === 'fresh').seq, 31);
    assert.equal(scenes.find((s) => s.name === 'keep').seq, 31);
    assert.match(back.stderr, /scene gone \(incarnation \d+\) was deleted in the cluster while this process was away/);
    assert.match(back.stderr, /scene swap here is incarnation \d+ and the cluster's is \d+/);
    assert.match(back.stderr, /scene fresh: asked process p[0-9a-f]{8} for batches from 1\b/);
    /* The viewer of 'keep' follows without being disconnected. */
    await viewers.keep.waitSeq('keep', 31, WAIT_MS);
    const worlds = {};
    for (const n of (await get(p1, '/api/scenes/keep')).json.nodes) worlds[n.id] = n.world;
    assert.deepEqual(viewers.keep.worlds('keep'), worlds);
    assert.equal(viewers.keep.closeCode, undefined);
    for (const v of Object.values(viewers)) v.close();

    /* 'gone' is not recorded again: the name is free, and a new scene of
     * it starts at seq 1 everywhere. */
    const gone = await redisReply(c.redis.port, 'HGET', 'rigd:scenes', 'gone');
    assert.equal(gone.line, '$-1', 'gone is not in the catalog');
    assert.match((await redisReply(c.redis.port, 'HGET', 'rigd:scene-tombs', 'gone')).line, /^\$/);
    const again = await post(back, '/api/scenes', { name: 'gone' });
    assert.equal(again.status, 201, again.text);
    assert.equal(await editAll(p2, 'gone', [{ ops: [{ op: 'create', id: 'n' }] }]), 1);
    await sameEverywhere(p1, live);
    /* Each catalog value is the dims and the incarnation. */
    for (const name of ['demo', 'fresh', 'keep', 'swap', 'gone']) {
      const v = await redisReply(c.redis.port, 'HGET', 'rigd:scenes', name);
      assert.match(v.value, /^[23] [1-9]\d*$/, name);
    }

    /* Killed again and back while Redis stays up, with entries another
     * program wrote into the catalog and the tombstones: those are skipped
     * and logged, the rest reconciled as before. */
    assert.equal(await redisCmd(c.redis.port, 'HSET', 'rigd:scenes', 'bad name!', '3 1'), ':1');
    assert.equal(await redisCmd(c.redis.port, 'HSET', 'rigd:scenes', 'odd', '3 x'), ':1');
    assert.equal(await redisCmd(c.redis.port, 'HSET', 'rigd:scene-tombs', 'odder', '-4'), ':1');
    await back.stop('SIGKILL');
    assert.equal((await request(p1, 'DELETE', '/api/scenes/keep')).status, 200);
    assert.equal((await post(p2, '/api/scenes', { name: 'later', dims: 2 })).status, 201);
    await editAll(p2, 'later', [{ ops: [{ op: 'create', id: 'l' }] }, ...sets('l', 12)]);
    const again2 = await startRigd({ dir: dir3, db: db3, args });
    c.procs.push(again2);
    const after = await sameEverywhere(p1, [p1, p2, again2]);
    assert.deepEqual(after.map((x) => x.name), ['demo', 'fresh', 'gone', 'later', 'swap']);
    assert.equal((await redisReply(c.redis.port, 'HGET', 'rigd:scenes', 'keep')).line, '$-1');
    assert.equal((again2.stderr.match(/an entry of rigd:scenes is not a rigd catalog entry: skipped/g) || []).length, 2);
    assert.match(again2.stderr, /an entry of rigd:scene-tombs is not a rigd tombstone: skipped/);
    assert.match(again2.stderr, /scene keep \(incarnation \d+\) was deleted in the cluster while this process was away/);
    assert.equal((await get(again2, '/healthz')).status, 200);
  } finally {
    await stopAll(c);
  }
});

test('an owner behind what the log stream keeps catches up from a process that is not the owner', async () => {
  const dir = tempDir('rigd-catalog-');
  const c = { redis: await startRedis(dir, await freePort()), procs: [] };
  const args = argsFor(c.redis);
  try {
    for (let k = 0; k < 3; k++) c.procs.push(await startRigd({ dir: tempDir(`rigd-catalog-${k}-`), args }));
    const owner = await ownerOf(c.procs, 'demo');
    const [b, late] = c.procs.filter((p) => p !== owner.proc);
    const bId = (await clusterOf(b)).process;
    const { dir: lateDir, db: lateDb } = late;
    /* 'late' dies; the owner commits 620 batches (the stream keeps 10, a
     * process sends at most 500 for one ask); b follows. */
    await late.stop('SIGKILL');
    const acked = [];
    for (let i = 1; i <= 620; i++) {
      const r = await postEdit(owner.proc, 'demo', { client: 'storm', client_seq: i,
        ops: [{ op: 'set', id: 'arm', euler: [0, 0, i] }] });
      assert.equal(r.status, 200, r.text);
      acked.push({ client: 'storm', client_seq: i, seq: r.json.seq });
    }
    const last = acked[acked.length - 1].seq;
    await until('b at the owner\'s seq', async () => (await get(b, '/api/scenes/demo')).json.seq === last);
    /* b paused, the owner killed, 'late' back on its database: it is the
     * only process left to take the scene over, with a copy far behind. */
    process.kill(b.rigdPid, 'SIGSTOP');
    b.paused = true;
    await owner.proc.stop('SIGKILL');
    const back = await startRigd({ dir: lateDir, db: lateDb, args });
    c.procs.push(back);
    await until('the late process owns demo', async () =>
      (await clusterOf(back)).leases.some((l) => l.scene === 'demo' && l.state === 'owned'));
    const behind = await postEdit(back, 'demo', { client: 'after', client_seq: 1,
      ops: [{ op: 'set', id: 'arm', euler: [0, 0, 1000] }] });
    assert.equal(behind.status, 503, behind.text);
    assert.equal(behind.json.error.code, 'unavailable');
    assert.match(behind.json.error.message, /applying its log/);
    assert.ok((await get(back, '/api/scenes/demo')).json.seq < last - 10, 'behind what the stream keeps');
    /* b runs again: it answers the new owner's asks, and the owner then
     * applies edits, its own and those b relays to it. */
    process.kill(b.rigdPid, 'SIGCONT');
    b.paused = false;
    for (let i = 1; i <= 5; i++) {
      const via = i % 2 ? back : b;
      const r = await until(`edit ${i} acknowledged`, async () => {
        const x = await postEdit(via, 'demo', { client: 'after', client_seq: i,
          ops: [{ op: 'set', id: 'arm', euler: [0, 0, 1000 + i] }] });
        return x.status === 200 ? x : null;
      });
      acked.push({ client: 'after', client_seq: i, seq: r.json.seq });
    }
    const next = await ownerOf([b, back], 'demo');
    assert.equal(next.proc, back, 'the late process stayed the owner');
    assert.ok(next.token > owner.token);
    await until('b at the new owner\'s seq', async () =>
      (await get(b, '/api/scenes/demo')).json.seq === (await get(back, '/api/scenes/demo')).json.seq);
    const log = await logOf(back, 'demo');
    assert.deepEqual(log.map((l) => l.seq), log.map((_, i) => i + 1), 'gapless');
    assert.deepEqual(await logOf(b, 'demo'), log, 'the same log on both');
    assert.equal((await get(b, '/api/scenes/demo')).text, (await get(back, '/api/scenes/demo')).text);
    for (const a of acked) {
      const rows = log.filter((l) => l.client === a.client && l.client_seq === a.client_seq);
      assert.equal(rows.length, 1, `${a.client}/${a.client_seq} once`);
      assert.equal(rows[0].seq, a.seq, `${a.client}/${a.client_seq} at its seq`);
    }
    assert.equal(log.length, last + 5);
    assert.match(back.stderr, new RegExp(`scene demo: asked process ${bId} for batches from \\d+`));
    const backId = (await clusterOf(back)).process;
    assert.ok((b.stderr.match(new RegExp(`sent to process ${backId}, which fell behind`, 'g')) || []).length >= 2,
      'b sent two parts at least');
    assert.match((await get(b, '/metrics')).text, /rigd_cluster_catchup_sent_total [1-9]/);
  } finally {
    await stopAll(c);
  }
});

test('a process started while Redis is down connects as soon as Redis is up, and stays connected', async () => {
  const dir = tempDir('rigd-catalog-');
  const port = await freePort();
  const c = { redis: null, procs: [] };
  try {
    /* Nothing listens on the port: every attempt fails, and the attempts
     * back off to one every 2 s. */
    c.procs.push(await startRigd({ dir: tempDir('rigd-catalog-early-'),
      args: argsFor({ url: `redis://127.0.0.1:${port}` }) }));
    const [p] = c.procs;
    await sleep(3000);
    assert.notEqual((await clusterOf(p)).redis.state, 'up');
    c.redis = await startRedis(dir, port);
    const mark = p.stderr.length;
    /* The next attempt (at most 2 s away) connects. Only the attempt under
     * way when Redis came up may still time out: before, every attempt
     * timed out at once when the connection started a millisecond after
     * the tick that started it read the clock, so a loaded process could
     * stay away for good. */
    const t0 = Date.now();
    await until('the process connected', async () => (await clusterOf(p)).redis.state === 'up', 10000);
    console.log(`# connected ${Date.now() - t0} ms after Redis was up`);
    const since = p.stderr.slice(mark);
    assert.match(since, /connected as p[0-9a-f]{8}/);
    const before = since.slice(0, since.indexOf('connected as'));
    assert.ok((before.match(/no answer to the connection/g) || []).length <= 1, `attempts failed after Redis was up:\n${before}`);
    assert.doesNotMatch(since.slice(since.indexOf('connected as')), /reconnecting/);
    /* It takes the lease of its scene and serves edits. */
    await ownerOf([p], 'demo');
    const r = await post(p, '/api/scenes/demo/edits', { ops: [{ op: 'set', id: 'base', t: [0, 1, 0] }] });
    assert.equal(r.status, 200, r.text);
  } finally {
    await stopAll(c);
  }
});
