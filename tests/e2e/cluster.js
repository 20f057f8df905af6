'use strict';
/*
 * Several rigd processes on one Redis (--redis): a real redis-server,
 * started here on a free port in a temporary folder (AOF with appendfsync
 * always, as docs/deploy.md asks), and three rigd processes, each with its
 * own database as if on three machines.
 *
 * What is checked: one owner per scene at a time, with a fencing token that
 * grows with every new owner; only the owner applies edits, the others
 * answer `unavailable` naming it; a survivor takes over after the owner is
 * killed; a paused owner that outlived its lease steps down and commits
 * nothing after it (fencing); Redis stopped and restarted means
 * `unavailable`, then everything resumes; values another program wrote
 * into rigd's keys are refused and logged, never crash a process.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const {
  startRigd, get, post, postEdit, Client, sleep, tempDir, assertSchema, run, SOURCE_DIR, request,
} = require('../lib/rigd.js');

const {
  LEASE_MS, WAIT_MS, freePort, startRedis, redisCmd, startCluster, stopCluster, clusterOf, until,
  ownerOf, logOf, metric,
} = require('../lib/cluster.js');

const show = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? Number(v) : v));
const edit = (deg) => ({ ops: [{ op: 'set', id: 'arm', euler: [0, 0, deg] }] });

test('one owner per scene; edits sent to any process are applied by it, once', async () => {
  const c = await startCluster();
  try {
    const views = await until('three live processes', async () => {
      const v = await Promise.all(c.procs.map(clusterOf));
      return v.every((x) => x.processes.length === 3 && x.redis.state === 'up') ? v : null;
    });
    for (const v of views) {
      assert.match(v.process, /^p[0-9a-f]{8}$/);
      assert.equal(v.lease_ms, LEASE_MS);
      assert.deepEqual(v.processes.map((p) => p.id).sort(), views.map((x) => x.process).sort());
    }
    const owner = await ownerOf(c.procs, 'demo');
    assert.ok(owner.token >= 1);
    const others = c.procs.filter((x) => x !== owner.proc);
    /* Editors on every process, websockets, each batch named by (client,
     * client_seq): every one acknowledged, with the owner's seqs. */
    const editors = await Promise.all(c.procs.map((p) => Client.connect(p)));
    const acks = [];
    const PER = 15;
    await Promise.all(editors.map(async (ws, k) => {
      for (let i = 1; i <= PER; i++) {
        const r = await ws.request({ type: 'edit', scene: 'demo', client: `ed${k}`, client_seq: i,
          ops: [{ op: 'set', id: 'arm', euler: [0, 0, k * 100 + i] }] });
        assert.equal(r.type, 'ack', show(r));
        acks.push({ client: `ed${k}`, client_seq: i, seq: r.seq });
      }
    }));
    const log = (await get(owner.proc, '/api/scenes/demo/log')).text.trim().split('\n').map((l) => JSON.parse(l));
    const seqs = log.map((l) => l.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'gapless');
    for (const a of acks) {
      const rows = log.filter((l) => l.client === a.client && l.client_seq === a.client_seq);
      assert.equal(rows.length, 1, `${a.client}/${a.client_seq} once`);
      assert.equal(rows[0].seq, a.seq);
    }
    /* A resend through another process is acknowledged with its first seq. */
    const again = await editors[(c.procs.indexOf(owner.proc) + 1) % 3].request({ type: 'edit',
      scene: 'demo', client: 'ed0', client_seq: 3, ops: [{ op: 'set', id: 'arm', euler: [0, 0, 3] }] });
    assert.equal(again.seq, acks.find((x) => x.client === 'ed0' && x.client_seq === 3).seq);
    assert.equal((await get(owner.proc, '/api/scenes/demo')).json.seq, log.length, 'nothing applied twice');
    /* HTTP through a non-owner: an ack, and a refusal exactly as the owner words it. */
    const h = await postEdit(others[0], 'demo', edit(12));
    assert.equal(h.status, 200, h.text);
    assert.equal(h.json.seq, log.length + 1);
    const bad = await postEdit(others[1], 'demo', { ops: [edit(1).ops[0], { op: 'set', id: 'nope', t: [0, 0, 0] }] });
    const local = await postEdit(owner.proc, 'demo', { ops: [edit(1).ops[0], { op: 'set', id: 'nope', t: [0, 0, 0] }] });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, local.json);
    for (const p of others) {
      /* Undo is relayed to the owner too (tests/e2e/cluster_relay.js has
       * the rest): a client with nothing to undo gets the owner's refusal. */
      const ws = await Client.connect(p);
      const reply = await ws.request({ type: 'undo', scene: 'demo', client: 'nobody' });
      assert.equal(reply.type, 'error');
      assert.equal(reply.code, 'nothing_to_undo');
      assert.ok(reply.message.includes('nobody'), reply.message);
      const snap = await ws.subscribe('demo');
      assert.equal(snap.type, 'snapshot');
      ws.close();
      const m = await get(p, '/metrics');
      assert.match(m.text, /rigd_cluster_redis_up 1/);
      assert.match(m.text, /rigd_cluster_leases_owned 0/);
      assert.match(m.text, /rigd_cluster_forwarded_total [1-9]/);
      assert.match(m.text, /rigd_cluster_forwards_waiting 0/);
      assert.doesNotMatch(m.text, /rigd_cluster_lease_token\{/);
    }
    for (const ws of editors) {
      assert.deepEqual(ws.schemaViolations, []);
      ws.close();
    }
    const m = await get(owner.proc, '/metrics');
    assert.match(m.text, new RegExp(`rigd_cluster_lease_token\\{scene="demo"\\} ${owner.token}`));
    assert.match(m.text, /rigd_cluster_leases_owned 1/);
    assert.match(m.text, /rigd_cluster_requests_served_total [1-9]/);
    assert.match(m.text, new RegExp(`rigd_cluster_info\\{process="${owner.id}"\\} 1`));
  } finally {
    await stopCluster(c);
  }
});

test('three processes converge bit-identically with editors and viewers on each, and equal a replay of the log', async () => {
  const c = await startCluster();
  try {
    const owner = await ownerOf(c.procs, 'demo');
    /* A rig of 20 bones on the owner first, then concurrent edits from
     * editors on every process, and viewers on every process. */
    const ops = [];
    for (let i = 0; i < 20; i++) {
      ops.push({ op: 'create', id: `b${i}`, parent: i ? `b${i - 1}` : 'hand', t: [0, 0.1, 0] });
    }
    assert.equal((await postEdit(owner.proc, 'demo', { ops })).status, 200);
    const viewers = [];
    for (const p of c.procs) {
      for (let k = 0; k < 2; k++) {
        const v = await Client.connect(p);
        await v.subscribe('demo');
        viewers.push(v);
      }
    }
    const editors = await Promise.all(c.procs.map((p) => Client.connect(p)));
    const PER = 25;
    let last = 0;
    await Promise.all(editors.map(async (ws, k) => {
      for (let i = 1; i <= PER; i++) {
        const r = await ws.request({ type: 'edit', scene: 'demo', client: `e${k}`, client_seq: i,
          ops: [{ op: 'rotate', id: `b${(k * 7 + i) % 20}`, axis: [0, 0, 1], angle: 3 + k },
            { op: 'move', id: 'base', by: [0.001 * k, 0, 0] }] });
        assert.equal(r.type, 'ack', show(r));
        last = Math.max(last, Number(r.seq));
      }
    }));
    const ref = await until('every process at the last seq', async () => {
      const trees = await Promise.all(c.procs.map((p) => get(p, '/api/scenes/demo')));
      return trees.every((t) => t.json.seq === last) ? trees.map((t) => t.text) : null;
    });
    /* Bit-identical: the same JSON (every world matrix printed exactly). */
    assert.equal(ref[1], ref[0]);
    assert.equal(ref[2], ref[0]);
    const worlds = {};
    for (const n of JSON.parse(ref[0]).nodes) worlds[n.id] = n.world;
    for (const v of viewers) {
      await v.waitSeq('demo', last, WAIT_MS);
      assert.deepEqual(v.worlds('demo'), worlds);
      assert.deepEqual(v.schemaViolations, []);
      assert.equal(v.closeCode, undefined);
    }
    const logs = await Promise.all(c.procs.map((p) => logOf(p, 'demo')));
    assert.deepEqual(logs[1], logs[0]);
    assert.deepEqual(logs[2], logs[0]);
    assert.deepEqual(logs[0].map((l) => l.seq), logs[0].map((_, i) => i + 1));
    for (const ws of [...editors, ...viewers]) ws.close();
    /* Each database replays from empty to what it holds (rigd check). */
    for (const p of c.procs) {
      assert.equal(await p.stop('SIGTERM'), 0);
      const check = await run('rigd', ['check', '--db', p.db]);
      assert.equal(check.code, 0, check.stdout + check.stderr);
    }
  } finally {
    await stopCluster(c);
  }
});

test('an SVG import on the owner reaches every process with its artwork, bit for bit', async () => {
  const demo = path.join(SOURCE_DIR, 'web', 'demo');
  const svg = fs.readFileSync(path.join(demo, 'demo2d.svg'), 'utf8');
  const manifest = JSON.parse(fs.readFileSync(path.join(demo, 'demo2d.json'), 'utf8'));
  const c = await startCluster();
  try {
    /* Each process is asked to create it: twin creates make one scene. */
    for (const p of c.procs) {
      assert.equal((await post(p, '/api/scenes', { name: 'art', dims: 2 })).status, 201);
    }
    const owner = await ownerOf(c.procs, 'art');
    const r = await post(owner.proc, '/api/scenes/art/svg', { file: 'hero.svg', svg, manifest });
    assert.equal(r.status, 200, r.text);
    const seq = r.json.seq;
    const trees = await until('every process at the import', async () => {
      const t = await Promise.all(c.procs.map((p) => get(p, '/api/scenes/art')));
      return t.every((x) => x.json.seq === seq) ? t.map((x) => x.text) : null;
    });
    assert.equal(trees[1], trees[0]);
    assert.equal(trees[2], trees[0]);
    const arts = await Promise.all(c.procs.map((p) => get(p, '/api/scenes/art/assets/hero.svg')));
    for (const a of arts) {
      assert.equal(a.status, 200);
      assert.equal(a.text, arts[0].text);
    }
    const logs = await Promise.all(c.procs.map((p) => logOf(p, 'art')));
    assert.deepEqual(logs[1], logs[0]);
    assert.deepEqual(logs[2], logs[0]);
  } finally {
    await stopCluster(c);
  }
});

test('without --redis: GET /api/cluster is not_found and /metrics has no cluster lines', async () => {
  const s = await startRigd();
  try {
    const r = await get(s, '/api/cluster');
    assert.equal(r.status, 404);
    assert.equal(r.json.error.code, 'not_found');
    const m = await get(s, '/metrics');
    assert.doesNotMatch(m.text, /rigd_cluster_/);
    assert.equal((await postEdit(s, 'demo', edit(5))).status, 200);
  } finally {
    assert.equal(await s.stop(), 0);
  }
});

test('bad --redis and --lease values are refused at start', async () => {
  for (const args of [['--redis', 'http://127.0.0.1:6379'], ['--redis', 'redis://h:0'],
    ['--lease', '10']]) {
    await assert.rejects(startRigd({ args }), /exited with 2/);
  }
});

test('SIGKILL the owner: a survivor takes the lease with a larger token and applies edits', async () => {
  const c = await startCluster();
  try {
    let prev = await ownerOf(c.procs, 'demo');
    for (let round = 0; round < 2; round++) {
      const t0 = Date.now();
      await prev.proc.stop('SIGKILL');
      const next = await ownerOf(c.procs, 'demo');
      assert.notEqual(next.proc, prev.proc);
      assert.ok(next.token > prev.token, `token ${next.token} after ${prev.token}`);
      const r = await until('an edit applied by the new owner', async () => {
        const x = await postEdit(next.proc, 'demo', edit(20 + round));
        return x.status === 200 ? x : null;
      });
      assert.ok(r.json.seq >= 1);
      console.log(`failover ${round + 1}: ${Date.now() - t0} ms from SIGKILL to the new owner's first ack (lease ${LEASE_MS} ms)`);
      /* The dead process leaves the list once its heartbeat expires. */
      await until('the dead process gone from the list', async () => {
        const v = await clusterOf(next.proc);
        return !v.processes.some((p) => p.id === prev.id);
      });
      prev = next;
    }
  } finally {
    await stopCluster(c);
  }
});

const published = async (p) => Number(/rigd_cluster_log_published_total (\d+)/.exec((await get(p, '/metrics')).text)[1]);

test('a paused owner that outlived its lease steps down and commits nothing after it', async () => {
  const c = await startCluster();
  try {
    const old = await ownerOf(c.procs, 'demo');
    assert.equal((await postEdit(old.proc, 'demo', edit(29))).status, 200);
    const before = (await get(old.proc, '/api/scenes/demo')).json.seq;
    const pubBefore = await until('its batch published', async () => {
      const n = await published(old.proc);
      return n >= 1 ? n : null;
    });
    process.kill(old.proc.rigdPid, 'SIGSTOP');
    old.proc.paused = true;
    let next;
    try {
      next = await ownerOf(c.procs, 'demo');
      assert.ok(next.token > old.token);
      assert.equal((await postEdit(next.proc, 'demo', edit(30))).status, 200);
    } finally {
      process.kill(old.proc.rigdPid, 'SIGCONT');
      old.proc.paused = false;
    }
    /* After SIGCONT it never commits an edit as owner: it refuses it, or
     * relays it to the new owner once it has learnt of it. */
    const r = await postEdit(old.proc, 'demo', edit(31));
    assert.ok(r.status === 503 || r.status === 200, r.text);
    if (r.status === 503) assert.equal(r.json.error.code, 'unavailable');
    assert.ok((await get(old.proc, '/api/scenes/demo')).json.seq >= before);
    const v = await until('the old owner to learn the new one', async () => {
      const x = await clusterOf(old.proc);
      const l = x.leases.find((y) => y.scene === 'demo');
      return l.state === 'other' && l.token === next.token ? x : null;
    });
    assert.ok(v);
    const m = await get(old.proc, '/metrics');
    assert.match(m.text, /rigd_cluster_leases_lost_total [1-9]/);
    assert.match(old.proc.stderr, /lease of scene demo \(token \d+\) lost/);
    const r2 = await postEdit(old.proc, 'demo', edit(32));
    assert.equal(r2.status, 200, r2.text);
    /* It follows the new owner's log and appended nothing after its lease. */
    await until('the old owner at the new owner\'s seq', async () =>
      (await get(old.proc, '/api/scenes/demo')).json.seq === r2.json.seq);
    assert.deepEqual(await logOf(old.proc, 'demo'), await logOf(next.proc, 'demo'));
    assert.equal(await published(old.proc), pubBefore, 'nothing appended after the pause');
  } finally {
    await stopCluster(c);
  }
});

test('Redis stopped: edits are unavailable; restarted: everything resumes', async () => {
  const c = await startCluster();
  try {
    const owner = await ownerOf(c.procs, 'demo');
    assert.equal((await postEdit(owner.proc, 'demo', edit(40))).status, 200);
    const seq = (await get(owner.proc, '/api/scenes/demo')).json.seq;
    const watcher = await Client.connect(c.procs[0]);
    await watcher.subscribe('demo');
    const unconfirmed = await metric(owner.proc, 'rigd_cluster_log_unconfirmed_total');
    await c.redis.stop();
    /* An edit sent before a process has seen Redis go may still be
     * acknowledged (its batch reached the stream first); one the owner
     * committed while the stream went is answered unavailable and kept
     * (counted as unconfirmed, appended again later). Only those two
     * kinds may be applied. */
    let acked = 0;
    for (const p of c.procs) {
      const r = await until('unavailable while Redis is down', async () => {
        const x = await postEdit(p, 'demo', edit(41));
        if (x.status === 200) acked++;
        return x.status === 503 ? x : null;
      });
      assert.equal(r.json.error.code, 'unavailable');
      /* Reads of what a process holds keep working. */
      assert.equal((await get(p, '/api/scenes/demo')).status, 200);
      assert.equal((await clusterOf(p)).redis.state === 'up', false);
    }
    const kept = await metric(owner.proc, 'rigd_cluster_log_unconfirmed_total') - unconfirmed;
    assert.equal((await get(owner.proc, '/api/scenes/demo')).json.seq, seq + acked + kept,
      `nothing applied but the ${acked} edits acknowledged before Redis was seen gone and ` +
      `the ${kept} committed while it went (answered unavailable, kept)`);
    c.redis = await startRedis(c.dir, c.redis.port);
    const again = await ownerOf(c.procs, 'demo');
    /* The fence never goes back (AOF keeps it); the same process may keep
     * its own lease if it had not expired in Redis meanwhile. */
    assert.ok(again.token > owner.token || (again.token === owner.token && again.proc === owner.proc),
      `token ${again.token} after ${owner.token}`);
    const r = await until('an edit applied after Redis returned', async () => {
      const x = await postEdit(again.proc, 'demo', edit(42));
      return x.status === 200 ? x : null;
    });
    assert.ok(r.json.seq >= 1);
    for (const p of c.procs) {
      const m = await get(p, '/metrics');
      assert.match(m.text, /rigd_cluster_redis_disconnects_total [1-9]/);
      assert.match(m.text, /rigd_cluster_redis_up 1/);
    }
    assert.equal(watcher.closeCode, undefined, 'the watcher was never disconnected');
    watcher.close();
  } finally {
    await stopCluster(c);
  }
});

test('an edit relayed to an owner that dies is sent again to the next one, and applied once', async () => {
  const c = await startCluster();
  try {
    const owner = await ownerOf(c.procs, 'demo');
    const via = c.procs.find((p) => p !== owner.proc);
    const ws = await Client.connect(via);
    await owner.proc.stop('SIGKILL');
    const t0 = Date.now();
    /* Sent at once: relayed to the dead owner, then to the next one. */
    const r = await ws.request({ type: 'edit', scene: 'demo', client: 'late', client_seq: 1,
      ops: [{ op: 'set', id: 'arm', euler: [0, 0, 77] }] }, WAIT_MS);
    assert.equal(r.type, 'ack', show(r));
    console.log(`relayed edit acknowledged ${Date.now() - t0} ms after its owner was killed`);
    const next = await ownerOf(c.procs, 'demo');
    const log = (await get(next.proc, '/api/scenes/demo/log')).text.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(log.filter((l) => l.client === 'late').length, 1);
    assert.equal(log.find((l) => l.client === 'late').seq, r.seq);
    /* Without a client_seq a lost relay cannot be resent safely: it is
     * answered unavailable (not tested against a dead owner here: the
     * relay's metrics show none failed). */
    const m = await get(via, '/metrics');
    assert.match(m.text, /rigd_cluster_forwards_waiting 0/);
    assert.equal(ws.closeCode, undefined);
    ws.close();
  } finally {
    await stopCluster(c);
  }
});

test('SIGKILL the owner mid-storm, twice: acknowledged edits kept, seqs gapless, viewers stay', async () => {
  const c = await startCluster(4);
  try {
    let owner = await ownerOf(c.procs, 'demo');
    const acked = new Map();     /* "client/seq" -> seq */
    const pauses = [];
    let stop = false;
    let lastAckAt = Date.now();
    /* Editors on every process but the first owner, each resending a batch
     * with the same (client, client_seq) until it is acknowledged. */
    const editorProcs = c.procs.filter((p) => p !== owner.proc);
    const viewers = [];
    for (const p of editorProcs) {
      const v = await Client.connect(p);
      await v.subscribe('demo');
      viewers.push({ p, v });
    }
    const connectTo = async (p) => {
      for (;;) {
        if (p.exited) return null;
        try {
          return await Client.connect(p);
        } catch {
          await sleep(100);
        }
      }
    };
    const runEditor = async (p, k) => {
      let ws = await connectTo(p);
      for (let i = 1; !stop && ws; i++) {
        for (;;) {
          if (p.exited || p.stopping) return;
          let r;
          try {
            r = await ws.request({ type: 'edit', scene: 'demo', client: `s${k}`, client_seq: i,
              ops: [{ op: 'set', id: 'arm', euler: [0, 0, k * 1000 + i] }] }, WAIT_MS);
          } catch (e) {
            if (p.exited || p.stopping) return;
            if (!(ws = await connectTo(p))) return;
            continue;
          }
          if (r.type === 'ack') {
            acked.set(`s${k}/${i}`, Number(r.seq));
            lastAckAt = Date.now();
            break;
          }
          assert.equal(r.code, 'unavailable', show(r));
          await sleep(100);
        }
      }
    };
    const editors = editorProcs.map((p, k) => runEditor(p, k));
    for (let round = 0; round < 2; round++) {
      await sleep(1500);
      const before = acked.size;
      const killedAt = Date.now();
      owner.proc.stopping = true;
      await owner.proc.stop('SIGKILL');
      await until('acks again after the kill', async () => acked.size > before + 3 && lastAckAt > killedAt);
      pauses.push(lastAckAt - killedAt);
      owner = await ownerOf(c.procs, 'demo');
    }
    await sleep(1000);
    stop = true;
    await Promise.all(editors);
    const live = c.procs.filter((p) => !p.exited);
    const last = Math.max(...acked.values());
    await until('every survivor at the last acked seq', async () => {
      const seqs = await Promise.all(live.map(async (p) => (await get(p, '/api/scenes/demo')).json.seq));
      return seqs.every((s) => s >= last);
    });
    const log = await logOf(owner.proc, 'demo');
    assert.deepEqual(log.map((l) => l.seq), log.map((_, i) => i + 1), 'gapless');
    for (const [key, seq] of acked) {
      const [client, cs] = key.split('/');
      const rows = log.filter((l) => l.client === client && l.client_seq === Number(cs));
      assert.equal(rows.length, 1, `${key} once`);
      assert.equal(rows[0].seq, seq, `${key} at its acknowledged seq`);
    }
    for (const p of live) assert.deepEqual(await logOf(p, 'demo'), log);
    for (const { p, v } of viewers) {
      if (p.exited) continue;
      await v.waitSeq('demo', log.length, WAIT_MS);
      assert.equal(v.closeCode, undefined, 'a viewer on a survivor was disconnected');
      v.close();
    }
    console.log(`${acked.size} edits acknowledged; pause from SIGKILL to the next ack: ${pauses.join(', ')} ms (lease ${LEASE_MS} ms)`);
  } finally {
    await stopCluster(c);
  }
});

test('values another program wrote into rigd keys are refused and logged', async () => {
  const c = await startCluster(2);
  const port = c.redis.port;
  try {
    await ownerOf(c.procs, 'demo');
    /* A lease holding garbage, one of the wrong type, and garbage process
     * entries; then scenes that meet them. */
    assert.equal(await redisCmd(port, 'SET', 'rigd:lease:junk', 'not a holder', 'PX', '3000'), '+OK');
    assert.equal(await redisCmd(port, 'LPUSH', 'rigd:lease:listy', 'x'), ':1');
    assert.equal(await redisCmd(port, 'SET', 'rigd:lease:huge', 'p1 99999999999999999999', 'PX', '3000'), '+OK');
    assert.equal(await redisCmd(port, 'ZADD', 'rigd:procs', '99999999999999', 'bad id!'), ':1');
    assert.equal(await redisCmd(port, 'ZADD', 'rigd:procs', '99999999999999', 'pfake'), ':1');
    assert.equal(await redisCmd(port, 'HSET', 'rigd:proc-info', 'pfake', 'lots http://x'), ':1');
    const p = c.procs[0];
    for (const scene of ['junk', 'listy', 'huge']) {
      assert.equal((await post(p, '/api/scenes', { name: scene })).status, 201);
      const r = await postEdit(p, scene, { ops: [{ op: 'create', id: 'n' }] });
      assert.equal(r.status, 503, `${scene}: ${r.text}`);
      assert.equal(r.json.error.code, 'unavailable');
    }
    await until('the refusals logged', async () => /lease of scene junk holds not a holder, which is not/.test(p.stderr) &&
      /lease of scene huge holds/.test(p.stderr) && /acquire of listy: .*WRONGTYPE/.test(p.stderr) &&
      /a process entry of rigd:procs is not/.test(p.stderr));
    /* Garbage in a process's own request and answer streams. */
    const id = (await clusterOf(p)).process;
    assert.match(await redisCmd(port, 'XADD', `rigd:fwd:${id}`, '*', 'from', 'bad id!', 'rid', '1',
      'scene', 'demo', 'body', '{}'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', `rigd:fwd:${id}`, '*', 'junk', '1'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', `rigd:fwd:${id}`, '*', 'from', 'pzz', 'rid', '1',
      'scene', 'demo', 'body', '{not json'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', `rigd:ans:${id}`, '*', 'rid', '1', 'code', 'ok'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', `rigd:ans:${id}`, '*', 'rid', '99', 'code', 'OK!', 'seq',
      '1', 'recomputed', '1', 'op', '-1', 'field', '', 'message', ''), /^\$/);
    /* And in a scene's log stream: entries of another shape, and one of
     * the right shape whose line is not a log line. */
    const seq = (await get(p, '/api/scenes/demo')).json.seq;
    assert.match(await redisCmd(port, 'XADD', 'rigd:log:demo', '*', 'seq', 'x', 'token', '1',
      'line', '{}'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', 'rigd:log:demo', '*', 'junk', '1'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', 'rigd:log:demo', '*', 'seq', String(seq + 1),
      'token', '1', 'line', '{not a log line'), /^\$/);
    await until('the stream entries refused', async () =>
      (p.stderr.match(/is not a rigd request: refused/g) || []).length >= 2 &&
      (p.stderr.match(/is not a rigd answer: refused/g) || []).length >= 2 &&
      (p.stderr.match(/of rigd:log:demo is not a rigd log entry: refused/g) || []).length >= 2 &&
      new RegExp(`scene demo: log entry ${seq + 1} refused`).test(p.stderr));
    for (const q of c.procs) assert.equal((await get(q, '/api/scenes/demo')).json.seq, seq);
    const m = await get(p, '/metrics');
    assert.match(m.text, /rigd_cluster_redis_errors_total [1-9]/);
    /* The garbage leases expire by themselves: then the scene is taken. */
    const r = await until('junk taken after its garbage expired', async () => {
      const x = await postEdit(p, 'junk', { ops: [{ op: 'create', id: 'n' }] });
      return x.status === 200 ? x : null;
    });
    assert.equal(r.json.seq, 1);
    const v = await clusterOf(p);
    assert.ok(!v.processes.some((x) => x.id === 'pfake' || x.id === 'bad id!'));
    /* Every process is still serving. */
    for (const q of c.procs) assert.equal((await get(q, '/healthz')).status, 200);
    assert.equal(p.exited, null);
  } finally {
    await stopCluster(c);
  }
});

test('SIGTERM gives the leases back: another process takes over at once', async () => {
  const c = await startCluster(2);
  try {
    const owner = await ownerOf(c.procs, 'demo');
    const other = c.procs.find((p) => p !== owner.proc);
    const t0 = Date.now();
    assert.equal(await owner.proc.stop('SIGTERM'), 0);
    const next = await ownerOf(c.procs, 'demo');
    assert.equal(next.proc, other);
    assert.ok(next.token > owner.token);
    const ms = Date.now() - t0;
    console.log(`handover after SIGTERM: ${ms} ms (lease ${LEASE_MS} ms)`);
    const r = await until('an edit applied by the new owner', async () => {
      const x = await postEdit(other, 'demo', edit(50));
      return x.status === 200 ? x : null;
    });
    assertSchema('HttpAck', r.json);
  } finally {
    await stopCluster(c);
  }
});

test('scenes created and deleted on any process reach every process', async () => {
  const c = await startCluster();
  const [p1, p2, p3] = c.procs;
  try {
    await until('three live processes', async () => {
      const v = await Promise.all(c.procs.map(clusterOf));
      return v.every((x) => x.processes.length === 3 && x.redis.state === 'up');
    });
    /* Created on process 2, edited on process 3, viewed on process 1. */
    const made = await post(p2, '/api/scenes', { name: 'shot' });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(made.json, { name: 'shot', seq: 0, nodes: 0 });
    await until('shot on every process', async () =>
      (await Promise.all(c.procs.map((p) => get(p, '/api/scenes/shot')))).every((r) => r.status === 200));
    const viewer = await Client.connect(p1);
    const snap = await viewer.subscribe('shot');
    assert.equal(snap.type, 'snapshot', show(snap));
    const watcher = await Client.connect(p2);
    assert.equal((await watcher.subscribe('shot')).type, 'snapshot');
    const ack = await until('the edit on process 3 acknowledged', async () => {
      const r = await postEdit(p3, 'shot', { client: 'c3', client_seq: 1,
        ops: [{ op: 'create', id: 'arm', t: [1, 0, 0] }] });
      return r.status === 200 ? r : null;
    });
    assert.equal(ack.json.seq, 1);
    await viewer.waitSeq('shot', 1, WAIT_MS);
    assert.ok(viewer.worlds('shot').arm, 'the viewer on process 1 has the node');
    /* A name already in the cluster: refused with its dims, changes nothing. */
    const again = await post(p3, '/api/scenes', { name: 'shot', dims: 2 });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.json.error.code, 'scene_exists');
    assert.match(again.json.error.message, /there is already a scene 'shot'/);
    /* Created at once on two processes: with the same dims, one scene (both
     * answered 201); with other dims, one 201 and one clear refusal, and
     * every process holds the winner's scene. */
    const twins = await Promise.all([p1, p3].map((p) => post(p, '/api/scenes', { name: 'twin', dims: 2 })));
    assert.deepEqual(twins.map((r) => r.status), [201, 201], twins.map((r) => r.text).join());
    const rivals = await Promise.all([
      post(p1, '/api/scenes', { name: 'rival', dims: 2 }),
      post(p2, '/api/scenes', { name: 'rival', dims: 3 })]);
    const won = rivals.filter((r) => r.status === 201);
    const lost = rivals.filter((r) => r.status === 409);
    assert.equal(won.length, 1, rivals.map((r) => r.text).join());
    assert.equal(lost.length, 1);
    assert.equal(lost[0].json.error.code, 'scene_exists');
    const dims = rivals[0].status === 201 ? 2 : 3;
    await until('twin and rival everywhere, as the winner made them', async () => {
      for (const p of c.procs) {
        const list = (await get(p, '/api/scenes')).json;
        const names = (list.scenes || list).map((s) => s.name || s);
        if (!names.includes('twin') || !names.includes('rival')) return false;
        const r = await get(p, '/api/scenes/rival');
        if ((r.json.dims || 3) !== dims) return false;
      }
      return true;
    });
    /* Deleted on process 1: gone everywhere, the viewers told as today. */
    const fromW = watcher.messages.length;
    const del = await request(p1, 'DELETE', '/api/scenes/shot');
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.json, { deleted: 'shot' });
    const told = await watcher.waitFor((m) => m.type === 'error', { from: fromW, timeout: WAIT_MS });
    assert.equal(told.code, 'unknown_scene');
    assert.match(told.message, /scene 'shot' was deleted/);
    await until('shot gone from every process', async () =>
      (await Promise.all(c.procs.map((p) => get(p, '/api/scenes/shot')))).every((r) => r.status === 404));
    const gone = await postEdit(p3, 'shot', { ops: [{ op: 'create', id: 'x' }] });
    assert.equal(gone.status, 404, gone.text);
    /* The name is free again: a new scene starts at seq 1 everywhere,
     * nothing of the old log stream comes back. */
    assert.equal((await post(p3, '/api/scenes', { name: 'shot' })).status, 201);
    const ack2 = await until('an edit of the new shot', async () => {
      const r = await postEdit(p2, 'shot', { ops: [{ op: 'create', id: 'leg' }] });
      return r.status === 200 ? r : null;
    });
    assert.equal(ack2.json.seq, 1);
    await until('the new shot everywhere', async () => {
      const t = await Promise.all(c.procs.map((p) => get(p, '/api/scenes/shot')));
      return t.every((r) => r.status === 200 && r.json.seq === 1 && r.json.nodes.length === 1);
    });
    /* Garbage in the stream of scene events is refused and logged. */
    assert.match(await redisCmd(c.redis.port, 'XADD', 'rigd:scene-events', '*', 'op', 'create',
      'scene', 'bad name!', 'dims', '3', 'from', 'px'), /^\$/);
    assert.match(await redisCmd(c.redis.port, 'XADD', 'rigd:scene-events', '*', 'op', 'drop',
      'scene', 'shot', 'dims', '0', 'from', 'px'), /^\$/);
    assert.match(await redisCmd(c.redis.port, 'XADD', 'rigd:scene-events', '*', 'junk', '1'), /^\$/);
    await until('the events refused', async () => c.procs.every((p) =>
      (p.stderr.match(/of rigd:scene-events is not a rigd scene event: refused/g) || []).length >= 3));
    for (const p of c.procs) {
      assert.equal((await get(p, '/api/scenes/shot')).status, 200);
      assert.equal((await get(p, '/healthz')).status, 200);
    }
    viewer.close();
    watcher.close();
    /* Redis stopped: creations and deletions are unavailable, nothing changes. */
    await c.redis.stop();
    await until('redis seen down', async () => (await clusterOf(p2)).redis.state !== 'up');
    const down = await post(p2, '/api/scenes', { name: 'later' });
    assert.equal(down.status, 503, down.text);
    assert.equal(down.json.error.code, 'unavailable');
    const downDel = await request(p2, 'DELETE', '/api/scenes/twin');
    assert.equal(downDel.status, 503, downDel.text);
    for (const p of c.procs) {
      assert.equal((await get(p, '/api/scenes/later')).status, 404);
      assert.equal((await get(p, '/api/scenes/twin')).status, 200);
    }
  } finally {
    await stopCluster(c);
  }
});

test('presence, join and leave reach the subscribers of the scene on every process', async () => {
  const c = await startCluster();
  const [p1, p2, p3] = c.procs;
  try {
    await ownerOf(c.procs, 'demo');
    /* Two browsers' worth of clients, on processes 1 and 2. */
    const ann = await Client.connect(p1);
    const bob = await Client.connect(p2);
    await ann.subscribe('demo');
    await bob.subscribe('demo');
    const presenceOf = (ws, name, sel, from = 0) => ws.waitFor((m) => m.type === 'presence' &&
      m.name === name && JSON.stringify(m.selection) === JSON.stringify(sel),
    { from, timeout: WAIT_MS, what: `${name}'s presence ${sel}` });
    ann.send({ type: 'presence', scene: 'demo', selection: ['arm'], name: 'Ann' });
    const seenAnn = await presenceOf(bob, 'Ann', ['arm']);
    const join = bob.messages.find((m) => m.type === 'join' && m.client === seenAnn.client);
    assert.ok(join, 'a join before the first presence');
    assert.ok(bob.messages.indexOf(join) < bob.messages.indexOf(seenAnn));
    assert.equal(join.name, 'Ann');
    assert.equal(seenAnn.scene, 'demo');
    bob.send({ type: 'presence', scene: 'demo', selection: ['hand', 'base'], name: 'Bob' });
    const seenBob = await presenceOf(ann, 'Bob', ['hand', 'base']);
    assert.notEqual(seenBob.client, seenAnn.client);
    /* A newer selection replaces the one shown. */
    const from = bob.messages.length;
    ann.send({ type: 'presence', scene: 'demo', selection: ['hand'], name: 'Ann' });
    await presenceOf(bob, 'Ann', ['hand'], from);
    /* A subscriber arriving later on process 3 is told of both after its
     * snapshot, with their last selections. */
    const cat = await Client.connect(p3);
    await cat.subscribe('demo');
    await presenceOf(cat, 'Ann', ['hand']);
    await presenceOf(cat, 'Bob', ['hand', 'base']);
    /* A process that joins the cluster later asks the others for their
     * participants (a sync) and tells its own subscribers of them. */
    const p4 = await startRigd({ dir: tempDir('rigd-cluster-3-'),
      args: ['--redis', c.redis.url, '--lease', String(LEASE_MS), '--log-level', 'info'] });
    c.procs.push(p4);
    await until('the fourth process up', async () => (await clusterOf(p4)).redis.state === 'up');
    const dan = await until('a subscriber on the fourth process told of both', async () => {
      const ws = await Client.connect(p4);
      await ws.subscribe('demo');
      try {
        await presenceOf(ws, 'Ann', ['hand']).then(() => presenceOf(ws, 'Bob', ['hand', 'base']));
        return ws;
      } catch (e) {
        ws.close();
        throw e;
      }
    });
    dan.close();
    for (const ws of [ann, bob, cat]) assert.deepEqual(ws.schemaViolations, []);
    /* Ann leaves: the others hear it on their processes. */
    const fromB = bob.messages.length;
    const fromC = cat.messages.length;
    ann.close();
    for (const [ws, at] of [[bob, fromB], [cat, fromC]]) {
      const left = await ws.waitFor((m) => m.type === 'leave' && m.client === seenAnn.client,
        { from: at, timeout: WAIT_MS, what: 'Ann leaving' });
      assert.equal(left.scene, 'demo');
    }
    /* Bob's process dies: the others see him leave once it is gone from
     * the cluster. */
    const fromC2 = cat.messages.length;
    await p2.stop('SIGKILL');
    await cat.waitFor((m) => m.type === 'leave' && m.client === seenBob.client,
      { from: fromC2, timeout: WAIT_MS, what: 'Bob leaving with his process' });
    /* Garbage in the presence stream is refused and logged. */
    const port = c.redis.port;
    assert.match(await redisCmd(port, 'XADD', 'rigd:presence', '*', 'from', 'px', 'kind', 'presence',
      'scene', 'demo', 'client', 'cx', 'msg', '{not json'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', 'rigd:presence', '*', 'from', 'px', 'kind', 'presence',
      'scene', 'demo', 'client', 'cx', 'msg', '{"type":"presence","scene":"other","selection":[]}'), /^\$/);
    assert.match(await redisCmd(port, 'XADD', 'rigd:presence', '*', 'from', 'bad id!', 'kind', 'leave',
      'scene', 'demo', 'client', 'cx', 'msg', ''), /^\$/);
    assert.match(await redisCmd(port, 'XADD', 'rigd:presence', '*', 'junk', '1'), /^\$/);
    await until('the presence entries refused', async () =>
      (p3.stderr.match(/a presence of cx on process px is refused/g) || []).length >= 2 &&
      (p3.stderr.match(/of rigd:presence is not a rigd presence entry: refused/g) || []).length >= 2);
    assert.ok(!cat.messages.some((m) => m.client === 'cx'), 'nothing of the garbage relayed');
    assert.equal((await get(p3, '/healthz')).status, 200);
    assert.equal(cat.closeCode, undefined);
    cat.close();
    bob.close();
  } finally {
    await stopCluster(c);
  }
});

test('a process behind what the log stream keeps catches up from the owner', async () => {
  const dir = tempDir('rigd-cluster-');
  const redis = await startRedis(dir, await freePort());
  const args = ['--redis', redis.url, '--lease', String(LEASE_MS), '--log-level', 'info',
    '--log-keep', '10'];
  const c = { redis, procs: [], dir };
  try {
    for (let k = 0; k < 3; k++) {
      c.procs.push(await startRigd({ dir: tempDir(`rigd-cluster-${k}-`), args }));
    }
    const owner = await ownerOf(c.procs, 'demo');
    const [paused, killed] = c.procs.filter((p) => p !== owner.proc);
    const viewer = await Client.connect(paused);
    await viewer.subscribe('demo');
    /* One process paused, another killed, while the owner commits 620
     * batches: the stream keeps the last 10 only, and an owner sends at
     * most 500 for one ask. */
    process.kill(paused.rigdPid, 'SIGSTOP');
    paused.paused = true;
    const killedDb = killed.db;
    const killedDir = killed.dir;
    await killed.stop('SIGKILL');
    let last = 0;
    try {
      for (let i = 1; i <= 620; i++) {
        const r = await postEdit(owner.proc, 'demo', { client: 'storm', client_seq: i,
          ops: [{ op: 'set', id: 'arm', euler: [0, 0, i] }] });
        assert.equal(r.status, 200, r.text);
        last = r.json.seq;
      }
      const kept = await redisCmd(redis.port, 'XLEN', 'rigd:log:demo');
      assert.equal(kept, ':10', 'the stream keeps 10 entries');
    } finally {
      process.kill(paused.rigdPid, 'SIGCONT');
      paused.paused = false;
    }
    /* The killed process starts again on its database. */
    const back = await startRigd({ dir: killedDir, db: killedDb, args });
    c.procs.push(back);
    for (const p of [paused, back]) {
      await until(`${p === back ? 'the restarted' : 'the paused'} process at the owner's seq`,
        async () => (await get(p, '/api/scenes/demo')).json.seq === last);
    }
    const ref = await logOf(owner.proc, 'demo');
    assert.deepEqual(ref.map((l) => l.seq), ref.map((_, i) => i + 1));
    for (const p of [paused, back]) {
      assert.deepEqual(await logOf(p, 'demo'), ref);
      assert.equal((await get(p, '/api/scenes/demo')).text, (await get(owner.proc, '/api/scenes/demo')).text);
      assert.match(p.stderr, /fell behind what the stream keeps and asks the scene's owner/);
      assert.match(p.stderr, /asked process p[0-9a-f]{8} for batches from \d+/);
      assert.match((await get(p, '/metrics')).text, /rigd_cluster_catchup_asks_total [1-9]/);
    }
    assert.match((await get(owner.proc, '/metrics')).text, /rigd_cluster_catchup_sent_total [1-9]/);
    assert.ok((owner.proc.stderr.match(/sent to process p[0-9a-f]{8}, which fell behind/g) || []).length >= 4,
      'two parts for each of the two');
    /* The paused process's viewer converges without being disconnected. */
    await viewer.waitSeq('demo', last, WAIT_MS);
    const worlds = {};
    for (const n of (await get(owner.proc, '/api/scenes/demo')).json.nodes) worlds[n.id] = n.world;
    assert.deepEqual(viewer.worlds('demo'), worlds);
    assert.equal(viewer.closeCode, undefined);
    viewer.close();
    /* Garbage shaped like an ask or a batch is refused and logged. */
    const id = (await clusterOf(owner.proc)).process;
    assert.match(await redisCmd(redis.port, 'XADD', `rigd:fwd:${id}`, '*', 'from', 'px', 'scene',
      'demo', 'since', '0'), /^\$/);
    assert.match(await redisCmd(redis.port, 'XADD', `rigd:ans:${id}`, '*', 'scene', 'demo', 'seq',
      '1', 'line', '{}', 'more', 'x'), /^\$/);
    await until('the entries refused', async () =>
      /is not a rigd request: refused/.test(owner.proc.stderr) &&
      /is not a rigd answer: refused/.test(owner.proc.stderr));
    assert.equal((await get(owner.proc, '/healthz')).status, 200);
  } finally {
    await stopCluster(c);
  }
});
