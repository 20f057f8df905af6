'use strict';
/*
 * bench_deflate: permessage-deflate (RFC 7692, docs/protocol.md,
 * "Compression") on and off, on one rigd started with --deflate on, so the
 * clients choose: a client that offers the extension gets every message
 * deflated, one that does not gets plain frames.
 *
 * For the 59-bone skeleton (docs/transforms.md 6.2) edited at 60 Hz, one
 * bone turned per edit in turn through all 59 (so the updates average the
 * rig's mean edit), with 1, 100 and 1,000 JSON subscribers, with and without
 * deflate, and a float32 binary subscriber with and without it, it prints:
 * bytes per update on the wire (socket bytes read by the clients, frame
 * headers included, over the updates they received), the server's CPU
 * seconds per second (from /proc/PID/stat), edit-to-update latency p50 and
 * p99 (from sending an edit to a subscriber receiving the update carrying
 * it), the server's CPU time per update delivered, the share of
 * deliveries coalesced away, and what the server's resident memory grew by
 * while the subscribers connected (the per-connection zlib state).
 *
 * The subscribers are ws clients (web/node_modules) in worker threads, so
 * that inflating is done as a browser would; each reads the seq from an
 * update's first bytes and parses nothing else. The clients share the
 * machine with the server: at 1,000 subscribers they are part of what is
 * measured, which the coalesced share shows.
 *
 * Run: cmake --build BUILD --target bench_deflate (or node
 * bench/bench_deflate.js with RIGD_BUILD_DIR and RIGD_SOURCE_DIR set).
 * BENCH_SECONDS sets the length of each run (default 4, after 1 s of
 * warm-up), BENCH_HZ the edit rate (default 60), BENCH_WORKERS the
 * subscriber threads at 1,000 (default 3).
 */
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

if (!isMainThread) {
  subscriberThread();
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}

/* ---- the subscribers' thread ---- */

function subscriberThread() {
  const { wsUrl, scene, n, deflate, format, ws: wsPath } = workerData;
  const WebSocket = require(wsPath);
  const subs = [];
  let ready = 0;
  let extensions = null;

  const connect = (k) => {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: deflate ? { threshold: 0 } : false,
      maxPayload: 256 * 1024 * 1024 });
    const sub = { ws, frames: 0, arrivals: [], subscribed: false };
    subs[k] = sub;
    ws.on('error', (e) => parentPort.postMessage({ error: String(e) }));
    ws.on('open', () => {
      if (extensions === null) extensions = ws.extensions;
      ws.send(JSON.stringify({ type: 'subscribe', scene, format }));
    });
    ws.on('message', (data, isBinary) => {
      let kind = 0;
      let seq = 0;
      if (isBinary) {
        kind = data[5];
        if (kind === 2) seq = Number(data.readBigUInt64LE(8));
      } else {
        const head = data.toString('latin1', 0, 64);
        if (head.startsWith('{"type":"snapshot"')) kind = 1;
        else if (head.startsWith('{"type":"update"')) {
          kind = 2;
          seq = Number(/"seq":(\d+)/.exec(head)[1]);
        }
      }
      if (kind === 1 && !sub.subscribed) {
        sub.subscribed = true;
        if (++ready === n) parentPort.postMessage({ ready: true, extensions });
      } else if (kind === 2) {
        sub.frames++;
        sub.arrivals.push([seq, process.hrtime.bigint()]);
      }
    });
  };
  let k = 0;
  const wave = () => {
    for (let end = Math.min(n, k + 50); k < end; k++) connect(k);
    if (k < n) setTimeout(wave, 5);
  };
  wave();
  const bytes = () => subs.reduce((a, s) => a + (s.ws._socket ? s.ws._socket.bytesRead : 0), 0);
  parentPort.on('message', (m) => {
    if (m === 'mark') {
      for (const s of subs) { s.frames = 0; s.arrivals = []; }
      parentPort.postMessage({ bytes: bytes() });
    } else if (m === 'stop') {
      const out = { bytes: bytes(), frames: subs.reduce((a, s) => a + s.frames, 0),
        arrivals: subs.map((s) => s.arrivals) };
      for (const s of subs) s.ws.terminate();
      parentPort.postMessage(out);
    }
  });
}

/* ---- the editor and the report, on the main thread ---- */

/* 'n' subscribers in 'threads' worker threads. */
function pool(server, scene, n, threads, deflate, format, wsPath) {
  const workers = [];
  for (let t = 0; t < threads; t++) {
    const share = Math.floor(n / threads) + (t < n % threads ? 1 : 0);
    const worker = new Worker(__filename, { workerData: { wsUrl: server.wsUrl, scene, n: share,
      deflate, format, ws: wsPath } });
    const replies = [];
    let waiting = null;
    worker.on('message', (m) => {
      if (m.error) console.error(`subscriber: ${m.error}`);
      else if (waiting) { const w = waiting; waiting = null; w(m); } else replies.push(m);
    });
    const next = () => (replies.length ? Promise.resolve(replies.shift())
      : new Promise((resolve) => { waiting = resolve; }));
    workers.push({ worker, next });
  }
  const all = (msg) => Promise.all(workers.map((w) => {
    if (msg) w.worker.postMessage(msg);
    return w.next();
  }));
  return {
    ready: all(null),
    mark: async () => (await all('mark')).reduce((a, r) => a + r.bytes, 0),
    stop: async () => {
      const rs = await all('stop');
      await Promise.all(workers.map((w) => w.worker.terminate()));
      return { bytes: rs.reduce((a, r) => a + r.bytes, 0),
        frames: rs.reduce((a, r) => a + r.frames, 0), arrivals: rs.flatMap((r) => r.arrivals) };
    },
  };
}

async function main() {
  const {
    startRigd, createScene, skeletonOps, Client, percentile, sleep, SOURCE_DIR,
  } = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
  const wsPath = require.resolve('ws', { paths: [path.join(SOURCE_DIR, 'web')] });
  const EDIT_HZ = Number(process.env.BENCH_HZ || 60);
  const SECONDS = Number(process.env.BENCH_SECONDS || 4);
  const WORKERS = Number(process.env.BENCH_WORKERS || 3);
  const bones = skeletonOps().map((op) => op.id);

  /* Edits at EDIT_HZ for 'seconds', each turning the next bone; resolves
   * to the map seq -> send time of the acknowledged edits. */
  const animate = async (editor, scene, seconds, first) => {
    const sent = new Map();
    const period = 1000 / EDIT_HZ;
    const start = Date.now();
    const pending = [];
    for (let frame = 0; Date.now() - start < seconds * 1000; frame++) {
      const t0 = process.hrtime.bigint();
      const k = first + frame;
      pending.push(editor.request({ type: 'edit', scene,
        ops: [{ op: 'set', id: bones[k % bones.length], euler: [0, 0, (k * 7) % 360] }] }).then((ack) => {
        if (ack.type === 'ack') sent.set(ack.seq, t0);
      }));
      await sleep(Math.max(0, start + (frame + 1) * period - Date.now()));
    }
    await Promise.all(pending);
    return sent;
  };

  const measure = async (server, n, deflate, format) => {
    const scene = `s${n}${format}${deflate ? 'z' : ''}`;
    await createScene(server, scene);
    const editor = await Client.connect(server, { validate: false });
    await editor.request({ type: 'edit', scene, ops: skeletonOps() });
    const rss0 = server.rssKb();
    const subs = pool(server, scene, n, n >= 1000 ? WORKERS : 1, deflate, format, wsPath);
    const ready = await subs.ready;
    const rss = server.rssKb() - rss0;
    await animate(editor, scene, 1, 0);   /* warm-up */
    await sleep(200);
    const b0 = await subs.mark();
    const cpu0 = server.cpuSeconds();
    const t0 = Date.now();
    const sent = await animate(editor, scene, SECONDS, EDIT_HZ);
    await sleep(300);
    const secs = (Date.now() - t0) / 1000;
    const cpu = server.cpuSeconds() - cpu0;
    const r = await subs.stop();
    await editor.close();
    const seqs = [...sent.keys()].sort((a, b) => a - b);
    const lat = [];
    for (const got of r.arrivals) {
      let g = 0;
      for (const seq of seqs) {
        while (g < got.length && got[g][0] < seq) g++;
        if (g < got.length) lat.push(Number(got[g][1] - sent.get(seq)) / 1e6);
      }
    }
    return { n, deflate, format, ext: ready[0].extensions, rss,
      perUpdate: (r.bytes - b0) / Math.max(1, r.frames), cpu: cpu / secs,
      cpuPerUpdate: (1e6 * cpu) / Math.max(1, r.frames),
      coalesced: 100 * (1 - r.frames / (sent.size * n)),
      p50: percentile(lat, 50), p99: percentile(lat, 99) };
  };

  const server = await startRigd({ args: ['--sync', 'normal', '--deflate', 'on',
    '--max-clients', '4096'] });
  try {
    console.log(`bench_deflate: rigd ${server.url} --deflate on, 59-bone skeleton, one bone an ` +
      `edit through all 59, ${EDIT_HZ} Hz, ${SECONDS} s per run after 1 s warm-up`);
    console.log('format  deflate  subscribers   B/update   CPU s/s   us/update   p50 ms   p99 ms  coalesced  +RSS MB');
    const runs = [];
    for (const n of [1, 100, 1000]) {
      for (const deflate of [false, true]) runs.push([n, deflate, 'json']);
    }
    for (const n of [1, 1000]) {
      for (const deflate of [false, true]) runs.push([n, deflate, 'f32']);
    }
    let ext = '';
    for (const [n, deflate, format] of runs) {
      const r = await measure(server, n, deflate, format);
      if (r.deflate && r.ext) ext = r.ext;
      if (r.deflate && !r.ext) throw new Error('permessage-deflate was not negotiated');
      console.log(`${format.padEnd(7)} ${(deflate ? 'on' : 'off').padEnd(7)} ${String(n).padStart(12)} ` +
        `${r.perUpdate.toFixed(0).padStart(10)} ${r.cpu.toFixed(3).padStart(9)} ` +
        `${r.cpuPerUpdate.toFixed(1).padStart(11)} ` +
        `${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ` +
        `${r.coalesced.toFixed(1).padStart(9)}% ${(r.rss / 1024).toFixed(1).padStart(8)}`);
    }
    console.log(`negotiated: ${ext}`);
  } finally {
    await server.stop('SIGTERM');
  }
}
