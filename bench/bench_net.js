'use strict';
/*
 * bench_net: the server's broadcast path, measured end to end on loopback.
 *
 *   1. Edit-to-update latency (p50, p99) with 1, 10 and 100 subscribers: one
 *      editor turns a bone of the 59-bone skeleton (docs/transforms.md 6.2) at 60 Hz; the
 *      latency of an edit is the time from sending it to a subscriber
 *      receiving the update that carries it, over every subscriber.
 *   2. Updates delivered per second with 1,000 subscribers while the rig is
 *      edited at 60 Hz (each frame turns an upper arm, so each update carries
 *      19 matrices), with the server's CPU time per second and per update.
 *
 * The subscribers run in a worker thread (bench/lib/subscribers.js: raw
 * sockets that walk the frame headers without parsing the rest); the
 * editor runs on the main thread. bench_fanout runs them in processes of
 * their own, so that 1,000 of them are not the bottleneck.
 *
 * The server runs with synchronous=NORMAL: with FULL every group commit adds
 * an fsync (about 7 ms on the machine this was written on) to every edit's
 * latency, which the figures would then mostly measure.
 *
 * Run: cmake --build BUILD --target bench_net (or node bench/bench_net.js
 * with RIGD_BUILD_DIR and RIGD_SOURCE_DIR set). BENCH_SECONDS sets the
 * length of each run (default 5), BENCH_HZ the edit rate (default 60).
 */
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

if (!isMainThread) {
  subscriberThread();
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}

/* ---- the subscribers' thread (bench/lib/subscribers.js) ---- */

function subscriberThread() {
  const { runPool } = require(path.join(__dirname, 'lib', 'subscribers.js'));
  const take = runPool(workerData, (m) => parentPort.postMessage(m));
  parentPort.on('message', take);
}

/* ---- the editor and the report, on the main thread ---- */

function pool(server, scene, n, keepArrivals) {
  const worker = new Worker(__filename, { workerData: { port: server.port, scene, n, keepArrivals } });
  const replies = [];
  let waiting = null;
  worker.on('message', (m) => {
    if (m.error) console.error(`subscriber: ${m.error}`);
    else if (waiting) { const w = waiting; waiting = null; w(m); } else replies.push(m);
  });
  const next = () => (replies.length ? Promise.resolve(replies.shift())
    : new Promise((resolve) => { waiting = resolve; }));
  return {
    ready: next(),
    count: () => { worker.postMessage('count'); return next(); },
    stop: async () => { worker.postMessage('stop'); const r = await next(); await worker.terminate(); return r; },
  };
}

async function main() {
  const {
    startRigd, createScene, skeletonOps, Client, percentile, sleep,
  } = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
  const { latencies } = require(path.join(__dirname, 'lib', 'subscribers.js'));
  const EDIT_HZ = Number(process.env.BENCH_HZ || 60);
  const SECONDS = Number(process.env.BENCH_SECONDS || 5);

  /* Edits at EDIT_HZ for 'seconds', turning 'bone'; resolves to the map
   * seq -> send time of the acknowledged edits. */
  const animate = async (editor, scene, bone, seconds) => {
    const sent = new Map();
    const period = 1000 / EDIT_HZ;
    const start = Date.now();
    const pending = [];
    for (let frame = 0; Date.now() - start < seconds * 1000; frame++) {
      const t0 = process.hrtime.bigint();
      pending.push(editor.request({ type: 'edit', scene,
        ops: [{ op: 'set', id: bone, euler: [0, 0, (frame * 3) % 360] }] }).then((ack) => {
        if (ack.type === 'ack') sent.set(ack.seq, t0);
      }));
      await sleep(Math.max(0, start + (frame + 1) * period - Date.now()));
    }
    await Promise.all(pending);
    return sent;
  };

  const rig = async (server, scene) => {
    await createScene(server, scene);
    const editor = await Client.connect(server);
    await editor.request({ type: 'edit', scene, ops: skeletonOps() });
    return editor;
  };

  const latencyRun = async (server, n) => {
    const scene = `latency${n}`;
    const editor = await rig(server, scene);
    const subs = pool(server, scene, n, true);
    await subs.ready;
    const sent = await animate(editor, scene, 'upper_arm_l', SECONDS);
    await sleep(300);
    const { arrivals } = await subs.stop();
    const lat = latencies(sent, arrivals);
    await editor.close();
    return { p50: percentile(lat, 50), p99: percentile(lat, 99), samples: lat.length };
  };

  const fanoutRun = async (server, n) => {
    const scene = `fanout${n}`;
    const editor = await rig(server, scene);
    const subs = pool(server, scene, n, false);
    await subs.ready;
    await sleep(300);
    const c0 = await subs.count();
    const cpu0 = server.cpuSeconds();
    const t0 = Date.now();
    const sent = await animate(editor, scene, 'upper_arm_l', SECONDS);
    await sleep(300);
    const secs = (Date.now() - t0) / 1000;
    const cpu = server.cpuSeconds() - cpu0;
    const c1 = await subs.count();
    await subs.stop();
    await editor.close();
    return { edits: sent.size, secs, frames: c1.frames - c0.frames, bytes: c1.bytes - c0.bytes,
      cpu, ideal: sent.size * n };
  };

  const server = await startRigd({ args: ['--sync', 'normal', '--max-clients', '4096'] });
  console.log(`bench_net: rigd ${server.url}, 59-bone skeleton, edits at ${EDIT_HZ} Hz, ${SECONDS} s per run`);
  console.log('');
  console.log('edit-to-update latency (an upper arm turned each frame: 19 matrices per update)');
  console.log('  subscribers     p50 ms     p99 ms    samples');
  for (const n of [1, 10, 100]) {
    const r = await latencyRun(server, n);
    console.log(`  ${String(n).padStart(11)} ${r.p50.toFixed(3).padStart(10)} ${r.p99.toFixed(3).padStart(10)} ${String(r.samples).padStart(10)}`);
  }
  console.log('');
  const n = 1000;
  const r = await fanoutRun(server, n);
  console.log(`fan-out to ${n} subscribers`);
  console.log(`  edits committed          ${r.edits} in ${r.secs.toFixed(1)} s (${(r.edits / r.secs).toFixed(1)}/s)`);
  console.log(`  updates delivered        ${r.frames} (${(r.frames / r.secs).toFixed(0)}/s; ${(100 * r.frames / r.ideal).toFixed(1)}% of one per edit per subscriber, the rest coalesced)`);
  console.log(`  bytes delivered          ${(r.bytes / r.secs / 1e6).toFixed(1)} MB/s`);
  console.log(`  server CPU               ${(r.cpu / r.secs).toFixed(3)} s per s (${(1e6 * r.cpu / Math.max(1, r.frames)).toFixed(1)} us per update delivered)`);
  await server.stop('SIGTERM');
}
