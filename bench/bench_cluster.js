'use strict';
/*
 * bench_cluster: several rigd processes on one Redis (--redis), measured end
 * to end on loopback, against the same load on a single rigd, and the pause
 * a failover costs.
 *
 * Four rigd and one redis-server (AOF, appendfsync always, in a temporary
 * folder): the owner of the scene, where one editor turns a bone of the
 * 59-bone skeleton at 60 Hz, and three processes serving viewers. The
 * viewers are raw-socket subscribers in load generator processes of their
 * own (bench_subscribers, in C; with BENCH_CLIENTS=node the node pool of
 * bench/lib/subscribers.js), BENCH_GENS per rigd, so the clients are not
 * the bottleneck; they read each update's seq from its first bytes.
 *
 * Part 1, for each load of BENCH_VIEWERS (a list: viewers on each of the
 * three serving processes, default 100,250,500) plus BENCH_OWNER_VIEWERS on
 * the owner (default 50, the reference for "behind the owner"): the
 * edit-to-update latency per process (from sending an edit to a viewer of
 * that process receiving the update that carries it; p50 and p99 over every
 * viewer and edit), each process's CPU and Redis's; then the same viewers
 * on one rigd without Redis.
 *
 * Part 2, BENCH_KILLS times (default 5): SIGKILL of the scene's owner while
 * the editor, on another process, goes on editing at 60 Hz; measured from
 * the kill, and from the moment the lease expires in Redis (PTTL read just
 * before the kill), to the first update with a new seq reaching a viewer of
 * a surviving process. The killed process is restarted on its own data
 * before the next kill. --lease is BENCH_LEASE ms (default 2000).
 *
 * The processes run with synchronous=NORMAL, as in bench_net.js (an fsync
 * per commit would dominate the figures). BENCH_SECONDS sets the length of a
 * run (default 5), BENCH_HZ the edit rate (default 60), BENCH_FORMAT the
 * viewers' frames (f32, f64 or json; default f32, the viewer's own).
 */
const path = require('node:path');
const fs = require('node:fs');
const { spawn, execFileSync } = require('node:child_process');

const lib = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
const { startRigd, createScene, skeletonOps, Client, percentile, sleep, tempDir, get, childPid } = lib;
const { freePort, redisCmd } = require(path.join(__dirname, '..', 'tests', 'lib', 'cluster.js'));
const { cSubscribers } = require(path.join(__dirname, 'lib', 'csubscribers.js'));
const { forkPool, latencies } = require(path.join(__dirname, 'lib', 'subscribers.js'));

const HZ = Number(process.env.BENCH_HZ || 60);
const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const LOADS = (process.env.BENCH_VIEWERS || '100,250,500').split(',').map(Number);
const OWNER_VIEWERS = Number(process.env.BENCH_OWNER_VIEWERS || 50);
const GENS = Number(process.env.BENCH_GENS || 1);
const KILLS = Number(process.env.BENCH_KILLS || 5);
const LEASE = Number(process.env.BENCH_LEASE || 2000);
const FORMAT = process.env.BENCH_FORMAT || 'f32';
const CLIENTS = process.env.BENCH_CLIENTS || 'c';
const SCENE = 'rig';
const TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100;

const say = (m) => { if (process.env.BENCH_VERBOSE) console.error(`bench_cluster: ${m}`); };

function cpuOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/* A load-generator process holding 'n' subscribers of the scene on 'port':
 * bench_subscribers (C), or with BENCH_CLIENTS=node the node pool. */
function generator(port, n) {
  return (CLIENTS === 'node' ? forkPool : cSubscribers)({ port, scene: SCENE, n, format: FORMAT });
}

/* The viewers of one process: GENS generators sharing 'n'. */
function viewers(server, n) {
  const gens = [];
  for (let g = 0; g < GENS; g++) {
    const k = Math.floor(n / GENS) + (g < n % GENS ? 1 : 0);
    if (k) gens.push(generator(server.port, k));
  }
  return {
    ready: Promise.all(gens.map((g) => g.ready)),
    hush: () => gens.forEach((g) => g.hush()),
    stop: async () => (await Promise.all(gens.map((g) => g.stop())))
      .reduce((all, r) => all.concat(r.arrivals), []),
  };
}

/* Edits at HZ until stop() is called; editorOf() names the client to use
 * (it may change between edits). Resolves to seq -> send time (ns). */
function animate(editorOf, seconds) {
  const sent = new Map();
  const pending = [];
  let stopped = false;
  const done = (async () => {
    const start = Date.now();
    for (let frame = 0; !stopped && (!seconds || Date.now() - start < seconds * 1000); frame++) {
      const t0 = process.hrtime.bigint();
      pending.push(editorOf().request({ type: 'edit', scene: SCENE,
        ops: [{ op: 'set', id: 'upper_arm_l', euler: [0, 0, (frame * 3) % 360] }] }, 60000)
        .then((ack) => { if (ack.type === 'ack') sent.set(Number(ack.seq), t0); })
        .catch(() => {}));
      await sleep(Math.max(0, start + (frame + 1) * (1000 / HZ) - Date.now()));
    }
    await Promise.all(pending);
    return sent;
  })();
  return { done, stop: () => { stopped = true; return done; } };
}

/* Retries an edit until the process owns (or relays for) the scene. */
async function firstEdit(editor, ops) {
  for (;;) {
    const r = await editor.request({ type: 'edit', scene: SCENE, ops });
    if (r.type === 'ack') return r;
    await sleep(100);
  }
}

async function sameSeq(procs) {
  for (;;) {
    const seqs = await Promise.all(procs.map(async (p) => (await get(p, `/api/scenes/${SCENE}`)).json.seq));
    if (seqs.every((s) => s === seqs[0])) return seqs[0];
    await sleep(100);
  }
}

/* The process owning the scene, as /api/cluster of 'asked' says. */
async function ownerOf(procs, asked) {
  for (;;) {
    const lease = (await get(asked, '/api/cluster')).json.leases.find((l) => l.scene === SCENE);
    if (lease && (lease.state === 'owned' || lease.state === 'other')) {
      for (const p of procs) {
        if (!p.exited && (await get(p, '/api/cluster')).json.process === lease.owner) return p;
      }
    }
    await sleep(100);
  }
}

/* One measured run: 'counts[i]' viewers on procs[i], the editor on 'owner'. */
async function measure(owner, procs, counts, redisPid) {
  const editor = await Client.connect(owner);
  const pools = procs.map((p, i) => viewers(p, counts[i]));
  await Promise.all(pools.map((p) => p.ready));
  await animate(() => editor, 1).done;   /* warm-up */
  await sleep(300);
  const cpu0 = procs.map((p) => p.cpuSeconds());
  const r0 = redisPid ? cpuOf(redisPid) : 0;
  const t0 = Date.now();
  const sent = await animate(() => editor, SECONDS).done;
  await sleep(500);
  const secs = (Date.now() - t0) / 1000;
  const rows = [];
  for (let i = 0; i < procs.length; i++) {
    const lat = latencies(sent, await pools[i].stop());
    rows.push({ p50: percentile(lat, 50), p99: percentile(lat, 99), n: lat.length,
      cpu: (procs[i].cpuSeconds() - cpu0[i]) / secs, viewers: counts[i] });
  }
  editor.close();
  return { rows, rcpu: redisPid ? (cpuOf(redisPid) - r0) / secs : 0, edits: sent.size, secs };
}

function print(label, r, names) {
  console.log(label);
  console.log('  process          viewers    p50 ms    p99 ms   samples   CPU s/s');
  r.rows.forEach((x, i) => console.log(`  ${names[i].padEnd(16)}${String(x.viewers).padStart(8)}` +
    `${x.p50.toFixed(2).padStart(10)}${x.p99.toFixed(2).padStart(10)}${String(x.n).padStart(10)}` +
    `${x.cpu.toFixed(3).padStart(10)}`));
  if (r.rcpu) console.log(`  redis-server CPU ${r.rcpu.toFixed(3)} s/s`);
  console.log(`  ${r.edits} edits in ${r.secs.toFixed(1)} s, load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
  console.log('');
}

async function startCluster(port) {
  const procs = [];
  const args = ['--redis', `redis://127.0.0.1:${port}`, '--sync', 'normal', '--max-clients', '20000',
    '--lease', String(LEASE)];
  for (let k = 0; k < 4; k++) procs.push(await startRigd({ dir: tempDir(`rigd-bench-${k}-`), args }));
  for (const p of procs) p.args = args;
  for (const p of procs) await createScene(p, SCENE);
  const builder = await Client.connect(procs[0]);
  await firstEdit(builder, skeletonOps());
  builder.close();
  await sameSeq(procs);
  return procs;
}

/* Part 2: the owner killed KILLS times while the editor goes on. */
async function failover(procs, port) {
  const FAILOVER_VIEWERS = 20;
  let owner = await ownerOf(procs, procs[0]);
  let editorProc = procs.find((p) => p !== owner);
  let editor = await Client.connect(editorProc);
  await firstEdit(editor, [{ op: 'set', id: 'upper_arm_l', euler: [0, 0, 1] }]);
  const pools = new Map(procs.map((p) => [p, viewers(p, FAILOVER_VIEWERS)]));
  await Promise.all([...pools.values()].map((v) => v.ready));
  const finished = [];
  const kills = [];
  const edits = animate(() => editor, 0);
  await sleep(1000);
  for (let k = 0; k < KILLS; k++) {
    owner = await ownerOf(procs, editorProc);
    if (owner === editorProc) {   /* keep the editor off the process to kill */
      editorProc = procs.find((p) => p !== owner && !p.exited);
      const old = editor;
      editor = await Client.connect(editorProc);
      old.close();
    }
    const pttl = Number((await redisCmd(port, 'PTTL', `rigd:lease:${SCENE}`)).slice(1));
    pools.get(owner).hush();
    const t = process.hrtime.bigint();
    await owner.stop('SIGKILL');
    kills.push({ t, pttl });
    say(`kill ${k + 1}: owner killed, its lease had ${pttl} ms left`);
    await sleep(2 * LEASE + 1500);
    finished.push(pools.get(owner).stop());
    const i = procs.indexOf(owner);
    procs[i] = await startRigd({ dir: owner.dir, args: owner.args });
    procs[i].args = owner.args;
    await sameSeq(procs);
    pools.set(procs[i], viewers(procs[i], FAILOVER_VIEWERS));
    await pools.get(procs[i]).ready;
    pools.delete(owner);
    await sleep(1000);
  }
  await edits.stop();
  editor.close();
  const arrivals = [];
  for (const a of await Promise.all([...finished, ...[...pools.values()].map((v) => v.stop())])) {
    arrivals.push(...(Array.isArray(a) ? a : []));
  }
  const all = arrivals.flat().map(([seq, t]) => [seq, BigInt(t)]).sort((a, b) => (a[1] < b[1] ? -1 : 1));
  const rows = [];
  for (const { t, pttl } of kills) {
    let before = -1;
    let first = null;
    for (const [seq, at] of all) {
      if (at < t) before = Math.max(before, seq);
      else if (seq > before) { first = at; break; }
    }
    if (first === null) continue;
    const fromKill = Number(first - t) / 1e6;
    rows.push({ fromKill, fromExpiry: fromKill - pttl, pttl });
  }
  return rows;
}

async function main() {
  const dir = tempDir('rigd-bench-cluster-');
  const port = await freePort();
  const redis = spawn('timeout', ['1800', 'redis-server', '--port', String(port), '--bind', '127.0.0.1',
    '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' });
  await sleep(500);
  const redisPid = childPid(redis.pid) || redis.pid;
  const procs = await startCluster(port);
  const owner = await ownerOf(procs, procs[0]);
  const serving = procs.filter((p) => p !== owner);
  const names = ['owner', 'rigd 2', 'rigd 3', 'rigd 4'];
  say('cluster up, rig built and replicated');
  console.log(`bench_cluster: 59-bone skeleton, an upper arm turned at ${HZ} Hz for ${SECONDS} s, ` +
    `${FORMAT} viewers, ${GENS} load generator process(es) per rigd`);
  console.log('');
  const results = [];
  for (const load of LOADS) {
    const order = [owner, ...serving];
    const counts = [OWNER_VIEWERS, load, load, load];
    const c = await measure(owner, order, counts, redisPid);
    print(`four rigd on one Redis, ${3 * load + OWNER_VIEWERS} viewers (the editor on the owner)`, c, names);
    results.push({ load, c });
  }

  if (KILLS > 0) {
    const rows = await failover(procs, port);
    console.log(`failover: the owner SIGKILLed ${KILLS} times, --lease ${LEASE}, editor on another process at ${HZ} Hz`);
    console.log('  kill   lease left ms   kill to update ms   expiry to update ms');
    rows.forEach((r, i) => console.log(`  ${String(i + 1).padStart(4)}${String(r.pttl).padStart(16)}` +
      `${r.fromKill.toFixed(0).padStart(20)}${r.fromExpiry.toFixed(0).padStart(22)}`));
    if (rows.length) {
      const e = rows.map((r) => r.fromExpiry);
      console.log(`  expiry to update: min ${Math.min(...e).toFixed(0)}, median ${percentile(e, 50).toFixed(0)}, ` +
        `max ${Math.max(...e).toFixed(0)} ms over ${rows.length} kills`);
    }
    console.log('');
  }
  for (const p of procs) await p.stop('SIGTERM').catch(() => {});
  redis.kill('SIGTERM');

  /* The same viewers on one rigd alone. */
  for (const { load } of results) {
    const alone = await startRigd({ args: ['--sync', 'normal', '--max-clients', '20000'] });
    await createScene(alone, SCENE);
    const b = await Client.connect(alone);
    await firstEdit(b, skeletonOps());
    b.close();
    const s = await measure(alone, [alone, alone, alone, alone], [OWNER_VIEWERS, load, load, load], 0);
    print(`one rigd alone, the same ${3 * load + OWNER_VIEWERS} viewers`, s,
      ['pool 1', 'pool 2', 'pool 3', 'pool 4']);
    await alone.stop('SIGTERM');
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
