'use strict';
/*
 * bench_cluster: several rigd processes on one Redis (--redis), measured end
 * to end on loopback, against the same load on a single rigd.
 *
 * Four rigd and one redis-server (AOF, appendfsync always, in a temporary
 * folder): the owner of the scene, where one editor turns a bone of the
 * 59-bone skeleton at 60 Hz, and three processes serving viewers. Viewers
 * (BENCH_VIEWERS per process, default 100) run in one worker thread per
 * process as raw sockets that read "seq" from each update's first bytes
 * (bench/lib/subscribers.js, as bench_net.js's do). For each process: the edit-to-update latency (from
 * sending an edit to a viewer of that process receiving the update that
 * carries it; p50 and p99 over every viewer), and its CPU; Redis's CPU.
 * Then the same viewers, all on one rigd without Redis.
 *
 * The processes run with synchronous=NORMAL, as in bench_net.js (an fsync
 * per commit would dominate the figures). BENCH_SECONDS sets the length of a
 * run (default 5), BENCH_HZ the edit rate (default 60).
 */
const path = require('node:path');
const fs = require('node:fs');
const netMod = require('node:net');
const { spawn } = require('node:child_process');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

if (!isMainThread) {
  viewerThread();
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}

/* ---- the viewers' thread (bench/lib/subscribers.js, as bench_net's) ---- */

function viewerThread() {
  const { runPool } = require(path.join(__dirname, 'lib', 'subscribers.js'));
  const take = runPool({ ...workerData, keepArrivals: true }, (m) => parentPort.postMessage(m));
  parentPort.on('message', take);
}

function pool(server, scene, n) {
  const worker = new Worker(__filename, { workerData: { port: server.port, scene, n } });
  const replies = [];
  let waiting = null;
  worker.on('message', (m) => {
    if (m.error) console.error(`viewer: ${m.error}`);
    else if (waiting) { const w = waiting; waiting = null; w(m); } else replies.push(m);
  });
  const next = () => (replies.length ? Promise.resolve(replies.shift())
    : new Promise((resolve) => { waiting = resolve; }));
  return {
    ready: next(),
    stop: async () => { worker.postMessage('stop'); const r = await next(); await worker.terminate(); return r; },
  };
}

/* ---- the run, on the main thread ---- */

async function main() {
  const lib = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
  const { startRigd, createScene, skeletonOps, Client, percentile, sleep, tempDir, get, childPid } = lib;
  const ticks = Number(lib.execFileSync('getconf', ['CLK_TCK']).toString()) || 100;
  const HZ = Number(process.env.BENCH_HZ || 60);
  const SECONDS = Number(process.env.BENCH_SECONDS || 5);
  const VIEWERS = Number(process.env.BENCH_VIEWERS || 100);
  const SCENE = 'rig';

  const freePort = () => new Promise((resolve) => {
    const s = netMod.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
  const cpuOf = (pid) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / ticks;
  };

  /* Edits at HZ for SECONDS on 'editor'; resolves to seq -> send time. */
  const animate = async (editor) => {
    const sent = new Map();
    const start = Date.now();
    const pending = [];
    for (let frame = 0; Date.now() - start < SECONDS * 1000; frame++) {
      const t0 = process.hrtime.bigint();
      pending.push(editor.request({ type: 'edit', scene: SCENE,
        ops: [{ op: 'set', id: 'upper_arm_l', euler: [0, 0, (frame * 3) % 360] }] }, 30000).then((ack) => {
        if (ack.type === 'ack') sent.set(Number(ack.seq), t0);
      }));
      await sleep(Math.max(0, start + (frame + 1) * (1000 / HZ) - Date.now()));
    }
    await Promise.all(pending);
    return sent;
  };
  const latencies = (sent, arrivals) => {
    const seqs = [...sent.keys()].sort((a, b) => a - b);
    const lat = [];
    for (const got of arrivals) {
      let g = 0;
      for (const seq of seqs) {
        while (g < got.length && got[g][0] < seq) g++;
        if (g < got.length) lat.push(Number(BigInt(got[g][1]) - sent.get(seq)) / 1e6);
      }
    }
    return lat;
  };
  /* Retries an edit until the process owns (or relays for) the scene. */
  const firstEdit = async (editor, ops) => {
    for (;;) {
      const r = await editor.request({ type: 'edit', scene: SCENE, ops });
      if (r.type === 'ack') return r;
      await sleep(100);
    }
  };
  /* One measured run: viewers on 'procs' (n each), the editor on 'owner'. */
  const measure = async (owner, procs, redisPid) => {
    const editor = await Client.connect(owner);
    const pools = procs.map((p) => pool(p, SCENE, VIEWERS));
    await Promise.all(pools.map((p) => p.ready));
    await sleep(300);
    const cpu0 = procs.map((p) => p.cpuSeconds());
    const r0 = redisPid ? cpuOf(redisPid) : 0;
    const t0 = Date.now();
    const sent = await animate(editor);
    await sleep(500);
    const secs = (Date.now() - t0) / 1000;
    const cpu = procs.map((p, i) => (p.cpuSeconds() - cpu0[i]) / secs);
    const rcpu = redisPid ? (cpuOf(redisPid) - r0) / secs : 0;
    const rows = [];
    for (let i = 0; i < procs.length; i++) {
      const { arrivals } = await pools[i].stop();
      const lat = latencies(sent, arrivals);
      rows.push({ p50: percentile(lat, 50), p99: percentile(lat, 99), n: lat.length, cpu: cpu[i] });
    }
    editor.close();
    return { rows, rcpu, edits: sent.size, secs };
  };
  const print = (label, r, names) => {
    console.log(label);
    console.log('  process          viewers    p50 ms    p99 ms   samples   CPU s/s');
    r.rows.forEach((x, i) => console.log(`  ${names[i].padEnd(16)}${String(VIEWERS).padStart(8)}${x.p50.toFixed(2).padStart(10)}${x.p99.toFixed(2).padStart(10)}${String(x.n).padStart(10)}${x.cpu.toFixed(3).padStart(10)}`));
    if (r.rcpu) console.log(`  redis-server CPU ${r.rcpu.toFixed(3)} s/s`);
    console.log(`  ${r.edits} edits in ${r.secs.toFixed(1)} s`);
    console.log('');
  };

  /* The cluster: Redis and four rigd, the scene on each, the rig built on
   * the first, which owns it. */
  const dir = tempDir('rigd-bench-cluster-');
  const port = await freePort();
  const redis = spawn('timeout', ['600', 'redis-server', '--port', String(port), '--bind', '127.0.0.1',
    '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' });
  await sleep(500);
  const redisPid = childPid(redis.pid) || redis.pid;
  const procs = [];
  for (let k = 0; k < 4; k++) {
    procs.push(await startRigd({ dir: tempDir(`rigd-bench-${k}-`), args: ['--redis', `redis://127.0.0.1:${port}`,
      '--sync', 'normal', '--max-clients', '20000'] }));
  }
  const say = (m) => { if (process.env.BENCH_VERBOSE) console.error(`bench_cluster: ${m}`); };
  say('processes up');
  for (const p of procs) await createScene(p, SCENE);
  say('scene created on each');
  const builder = await Client.connect(procs[0]);
  await firstEdit(builder, skeletonOps());
  builder.close();
  say('rig built');
  for (;;) {
    const seqs = await Promise.all(procs.map(async (p) => (await get(p, `/api/scenes/${SCENE}`)).json.seq));
    if (seqs.every((s) => s === seqs[0])) break;
    await sleep(100);
  }
  const owner = (await get(procs[0], '/api/cluster')).json.leases.find((l) => l.scene === SCENE);
  let ownerProc = procs[0];
  for (const p of procs) if ((await get(p, '/api/cluster')).json.process === owner.owner) ownerProc = p;
  say('replicated');
  console.log(`bench_cluster: 59-bone skeleton, an upper arm turned at ${HZ} Hz for ${SECONDS} s, ${VIEWERS} viewers per process`);
  console.log('');
  const c = await measure(ownerProc, procs, redisPid);
  print('four rigd on one Redis (the editor on the owner, the first row)', c,
    procs.map((p, i) => (p === ownerProc ? 'owner' : `rigd ${i + 1}`)));
  for (const p of procs) await p.stop('SIGTERM');
  redis.kill('SIGTERM');

  /* The same viewers on one rigd alone. */
  const alone = await startRigd({ args: ['--sync', 'normal', '--max-clients', '20000'] });
  await createScene(alone, SCENE);
  const b = await Client.connect(alone);
  await firstEdit(b, skeletonOps());
  b.close();
  const s = await measure(alone, [alone, alone, alone, alone], 0);
  const all = s.rows;
  print('one rigd alone, the same viewers (four pools on one process)', s,
    all.map((_, i) => `pool ${i + 1}`));
  await alone.stop('SIGTERM');
}
