'use strict';
/*
 * bench_interest: per-viewer interest (docs/protocol.md, "Views") on a
 * 100,001-node scene. A root, 100 groups on a 10 x 10 grid 200 apart (no
 * bounds), each with 999 boxes on a 37 x 27 grid 2 apart. 100 viewers
 * subscribe with float32 binary frames, each looking straight down at a
 * different group (a camera 48 above it, 60 degrees: about 1% of the
 * nodes). An editor moves the root (a few units, back and forth), so every
 * world matrix changes and boxes cross the views' edges; for each edit it
 * waits until every viewer has the update. Printed, per viewer and update:
 * matrices and bytes, hidden ids, and the edit-to-update latency (p50,
 * p99) over every viewer; then the same with 100 viewers that declare no
 * view (the baseline, same run, same server); then what one view change
 * costs the server (its cull and the boxes it shares, from /metrics).
 *
 * The viewers run in worker threads of this process (two, 50 viewers
 * each), separate from the server's process; they read each frame's header
 * (its matrix count) and the JSON section's hidden list, nothing else. The
 * server runs with synchronous=NORMAL (an fsync per edit would dominate).
 *
 * Run: cmake --build BUILD --target bench_interest (or node
 * bench/bench_interest.js with RIGD_BUILD_DIR and RIGD_SOURCE_DIR set).
 * BENCH_EDITS (default 40) root edits with views, BENCH_BASELINE_EDITS
 * (default 5) without.
 */
const path = require('node:path');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');

/* BENCH_GROUPS (default 100) scales the scene and the viewers down for a
 * quick look; the figures are for the default. */
const GROUPS = Number(process.env.BENCH_GROUPS || 100);
const LEAVES = 999;
const SPACING = 200;
const VIEWERS = GROUPS;
const THREADS = 2;
const VIEWPORT = [1280, 960];
const now = () => performance.timeOrigin + performance.now();

if (!isMainThread) {
  viewerThread();
} else {
  main().catch((e) => { console.error(e); process.exit(1); });
}

/* ---- the viewers' thread ---- */

function viewerThread() {
  const { createRequire } = require('node:module');
  const webRequire = createRequire(path.join(workerData.sourceDir, 'web', 'package.json'));
  const WebSocket = webRequire('ws');
  const { url, scene, viewers } = workerData;
  const sockets = [];
  let ready = 0;
  let started = 0;
  /* A few viewers subscribe at a time: each snapshot is the whole scene
   * (about 30 MB), and a hundred at once would hold gigabytes here. */
  const startNext = () => { if (started < viewers.length) connect(viewers[started++]); };
  const connect = (v) => {
    let viewing = false;  /* a frame with the view arrived */
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
    sockets.push(ws);
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'subscribe', scene, format: 'f32' }));
      ws.send(JSON.stringify({ type: 'view', scene, ...v.view }));
    });
    ws.on('error', (e) => parentPort.postMessage({ error: String(e) }));
    ws.on('message', (data, isBinary) => {
      const t = now();
      if (!isBinary) {
        const m = JSON.parse(data.toString());
        if (m.type === 'error') parentPort.postMessage({ error: JSON.stringify(m) });
        return;
      }
      const b = data;
      const kind = b[5];
      const seq = Number(b.readBigUInt64LE(8));
      const nWorld = b.readUInt32LE(28);
      const jsonLen = b.readUInt32LE(32);
      let hidden = -1;
      if (kind === 2 && jsonLen < (1 << 20)) {
        const section = JSON.parse(b.subarray(b.length - jsonLen).toString());
        if (section.hidden) hidden = section.hidden.length;
      } else if (b.indexOf('"hidden":[]', b.length - jsonLen) >= 0) {
        hidden = 0;
      } else if (b.indexOf('"hidden":[', b.length - jsonLen) >= 0) {
        hidden = 1;  /* a whole scene's section: not parsed */
      }
      if (!viewing) {
        /* The snapshot, then (if the view came after it) the view's frame. */
        if (hidden >= 0) {
          viewing = true;
          if (++ready === viewers.length) parentPort.postMessage({ ready: true });
          startNext();
        }
        return;
      }
      parentPort.postMessage({ viewer: v.id, seq, t, bytes: b.length, matrices: nWorld, hidden });
    });
    ws.on('close', () => { if (!closing) parentPort.postMessage({ error: `viewer ${v.id}: connection closed` }); });
  };
  let closing = false;
  for (let i = 0; i < 4; i++) startNext();
  /* 'clear': every viewer drops its view (the baseline). */
  parentPort.on('message', (cmd) => {
    if (cmd === 'clear') for (const ws of sockets) ws.send(JSON.stringify({ type: 'view', scene, clear: true }));
    if (cmd === 'stop') closing = true;
  });
}

/* ---- the editor ---- */

function sceneBatches() {
  const batches = [];
  let ops = [{ op: 'create', id: 'root' }];
  for (let g = 0; g < GROUPS; g++) {
    ops.push({ op: 'create', id: `g${g}`, parent: 'root', t: [(g % 10) * SPACING, Math.floor(g / 10) * SPACING, 0] });
    for (let k = 0; k < LEAVES; k++) {
      ops.push({ op: 'create', id: `g${g}-${k}`, parent: `g${g}`, t: [(k % 37) * 2, Math.floor(k / 37) * 2, 0],
        bounds: { min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5] } });
    }
    if (ops.length > 4000) { batches.push(ops); ops = []; }
  }
  if (ops.length) batches.push(ops);
  return batches;
}

function percentile(values, p) {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))] : NaN;
}

/* Starts the viewers ({id, view}) in THREADS workers; resolves when each
 * has its first frame (with its view). */
async function startViewers(server, specs, onFrame) {
  const workers = [];
  const per = Math.ceil(specs.length / THREADS);
  const readies = [];
  for (let i = 0; i < THREADS; i++) {
    const viewers = specs.slice(i * per, (i + 1) * per);
    const w = new Worker(__filename, { workerData: { url: server.wsUrl, scene: 'big', viewers,
      sourceDir: process.env.RIGD_SOURCE_DIR || path.join(__dirname, '..') } });
    readies.push(new Promise((resolve, reject) => {
      w.on('message', (m) => {
        if (m.error) {
          reject(new Error(m.error));
          if (!w.stopping) { console.error(`bench_interest: ${m.error}`); process.exit(1); }
        } else if (m.ready) resolve();
        else onFrame(m);
      });
      w.on('error', (e) => { console.error(e); process.exit(1); });
    }));
    workers.push(w);
  }
  await Promise.all(readies);
  return workers;
}

/* The frames the viewers received, by seq, and a wait for all of one. */
function frameLog(n) {
  const log = { frames: new Map(), waiting: null, all: [] };
  log.onFrame = (m) => {
    log.all.push(m);
    if (!log.frames.has(m.seq)) log.frames.set(m.seq, []);
    log.frames.get(m.seq).push(m);
    if (log.waiting && log.waiting.pred()) log.waiting.resolve();
  };
  log.until = (pred, what) => new Promise((resolve, reject) => {
    if (pred()) { resolve(); return; }
    const timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), 300000);
    log.waiting = { pred, resolve: () => { clearTimeout(timer); log.waiting = null; resolve(); } };
  });
  log.n = n;
  return log;
}

/* Root edits one at a time; each waits for every viewer's update. */
async function measure(server, editor, log, edits, label) {
  const cpu0 = server.cpuSeconds();
  const specs = { length: log.n };
  const frames = log.frames;
  const lat = [];
  const per = [];
  for (let i = 0; i < edits; i++) {
    const sent = now();
    const ack = await editor.request({ type: 'edit', scene: 'big',
      ops: [{ op: 'set', id: 'root', t: [i % 2 ? 3 : 0, i % 4 < 2 ? 2 : 0, 0] }] }, 60000);
    if (ack.type !== 'ack') throw new Error(JSON.stringify(ack));
    await log.until(() => frames.get(ack.seq)?.length === specs.length, `${label}: edit ${i} to every viewer`);
    for (const f of frames.get(ack.seq)) { lat.push(f.t - sent); per.push(f); }
  }
  const mean = (k) => per.reduce((a, f) => a + f[k], 0) / per.length;
  const max = (k) => Math.max(...per.map((f) => f[k]));
  return { label, edits, samples: lat.length, cpuMs: (1000 * (server.cpuSeconds() - cpu0)) / edits, p50: percentile(lat, 50), p99: percentile(lat, 99),
    matrices: mean('matrices'), maxMatrices: max('matrices'), bytes: mean('bytes'), maxBytes: max('bytes'),
    hidden: mean('hidden'), maxHidden: max('hidden') };
}

/* A camera 48 above group g's middle, looking down, 60 degrees, 4:3. */
function viewOf(g, perspectiveVp) {
  const x = (g % 10) * SPACING + 36;
  const y = Math.floor(g / 10) * SPACING + 26;
  return { vp: perspectiveVp(60, VIEWPORT[0] / VIEWPORT[1], 1, 500, [x, y, 48]), viewport: VIEWPORT, min_px: 0 };
}

async function metric(server, get, name) {
  return Number(new RegExp(`^rigd_${name} (\\S+)$`, 'm').exec((await get(server, '/metrics')).text)[1]);
}

async function main() {
  const { startRigd, createScene, Client, get } = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
  const { perspectiveVp, visibleIds } = require(path.join(__dirname, '..', 'tests', 'lib', 'interest.js'));
  const edits = Number(process.env.BENCH_EDITS || 40);
  const baseEdits = Number(process.env.BENCH_BASELINE_EDITS || 5);
  const server = await startRigd({ lifetime: 3600, args: ['--sync', 'normal', '--max-message', String(16 << 20)] });
  try {
    await createScene(server, 'big');
    const editor = await Client.connect(server, { validate: false });
    let t0 = now();
    for (const ops of sceneBatches()) {
      const r = await editor.request({ type: 'edit', scene: 'big', ops }, 120000);
      if (r.type !== 'ack') throw new Error(JSON.stringify(r));
    }
    console.error(`(scene built in ${((now() - t0) / 1000).toFixed(1)} s)`);
    t0 = now();
    const t = (await get(server, '/api/scenes/big')).json;
    console.error(`(tree read in ${((now() - t0) / 1000).toFixed(1)} s)`);
    const views = Array.from({ length: VIEWERS }, (_, g) => viewOf(g, perspectiveVp));
    const counts = views.map((v) => visibleIds(t.nodes, v).size);
    console.log(`bench_interest: ${t.nodes.length} nodes, ${VIEWERS} viewers (float32 frames), each seeing ` +
      `${Math.min(...counts)} to ${Math.max(...counts)} nodes (${(100 * Math.max(...counts) / t.nodes.length).toFixed(2)}% at most, ` +
      `the ${GROUPS + 1} nodes without bounds included); root edits, each awaited by every viewer`);

    const log = frameLog(VIEWERS);
    t0 = now();
    const viewerThreads = await startViewers(server, views.map((view, id) => ({ id, view })), log.onFrame);
    console.log(`(the viewers subscribed and declared their views in ${((now() - t0) / 1000).toFixed(1)} s: ` +
      `${VIEWERS} snapshots of the whole scene)`);
    const withViews = await measure(server, editor, log, edits, 'views');
    /* The same viewers drop their views: the baseline. */
    const mark = log.all.length;
    for (const w of viewerThreads) w.postMessage('clear');
    await log.until(() => log.all.slice(mark).filter((m) => m.hidden === 0).length === VIEWERS, 'the views cleared');
    const baseline = await measure(server, editor, log, baseEdits, 'no view');
    for (const w of viewerThreads) { w.stopping = true; w.postMessage('stop'); await w.terminate(); }
    console.log('                 edits  matrices/viewer/update  (max)    bytes/viewer/update  (max)    hidden ids (max)   latency p50     p99   server CPU/edit');
    for (const r of [withViews, baseline]) {
      console.log(`${r.label.padEnd(16)} ${String(r.edits).padStart(5)}  ${r.matrices.toFixed(0).padStart(22)}  ${String(r.maxMatrices).padStart(6)}  ` +
        `${r.bytes.toFixed(0).padStart(20)}  ${String(r.maxBytes).padStart(8)}  ${(r.hidden < 0 ? '-' : r.hidden.toFixed(0)).padStart(9)} ${String(r.hidden < 0 ? '' : `(${r.maxHidden})`).padStart(7)}  ` +
        `${r.p50.toFixed(1).padStart(8)} ms ${r.p99.toFixed(1).padStart(7)} ms ${r.cpuMs.toFixed(1).padStart(9)} ms`);
    }
    console.log(`with views: at most ${(100 * withViews.maxMatrices / t.nodes.length).toFixed(2)}% of the nodes' matrices per viewer and update ` +
      `(target 2%), p99 ${withViews.p99.toFixed(1)} ms (target 50 ms)`);

    /* One view change on the idle scene: one cull (the boxes are those of
     * the scene's state, already built) and the viewer's frame. */
    const culls0 = await metric(server, get, 'view_culls_total');
    const cullS0 = await metric(server, get, 'view_cull_seconds_total');
    const boxes0 = await metric(server, get, 'view_boxes_total');
    const boxS0 = await metric(server, get, 'view_boxes_seconds_total');
    const changes = [];
    const viewer = await Client.connect(server, { validate: false });
    /* The change itself is timed on a JSON viewer of this thread: view
     * sent to the frame that answers it. */
    viewer.send({ type: 'subscribe', scene: 'big', format: 'json' });
    await viewer.waitFor((m) => m.type === 'snapshot', { timeout: 60000 });
    for (let i = 0; i < 10; i++) {
      const from = viewer.messages.length;
      const sent = now();
      viewer.send({ type: 'view', scene: 'big', ...viewOf((i * 37) % GROUPS, perspectiveVp) });
      const m = await viewer.waitFor((x) => x.type === 'update' && x.hidden, { from, timeout: 60000 });
      if (i > 0) changes.push({ ms: now() - sent, matrices: Object.keys(m.world).length, hidden: m.hidden.length });
    }
    const culls = (await metric(server, get, 'view_culls_total')) - culls0;
    const cullS = (await metric(server, get, 'view_cull_seconds_total')) - cullS0;
    const boxes = (await metric(server, get, 'view_boxes_total')) - boxes0;
    const boxS = (await metric(server, get, 'view_boxes_seconds_total')) - boxS0;
    const mean = (k) => changes.reduce((a, c) => a + c[k], 0) / changes.length;
    console.log(`a view change (one viewer moving to another group, ${changes.length} times): ` +
      `${mean('ms').toFixed(1)} ms from view to frame (JSON, ${mean('matrices').toFixed(0)} matrices in, ${mean('hidden').toFixed(0)} hidden); ` +
      `the server's cull ${(1000 * cullS / Math.max(1, culls)).toFixed(2)} ms (${culls} culls)` +
      (boxes ? `, boxes ${(1000 * boxS / boxes).toFixed(2)} ms per build (${boxes} builds)` : ', no box build (the state was unchanged)'));
    const allCulls = await metric(server, get, 'view_culls_total');
    const allCullS = await metric(server, get, 'view_cull_seconds_total');
    const allBoxes = await metric(server, get, 'view_boxes_total');
    const allBoxS = await metric(server, get, 'view_boxes_seconds_total');
    console.log(`over the run: ${allCulls} culls, ${(1000 * allCullS / allCulls).toFixed(3)} ms each; ` +
      `${allBoxes} box builds (one per scene state), ${(1000 * allBoxS / allBoxes).toFixed(2)} ms each; ` +
      `server CPU ${server.cpuSeconds().toFixed(1)} s`);
    await viewer.close();
    await editor.close();
  } finally {
    await server.stop('SIGTERM');
  }
}
