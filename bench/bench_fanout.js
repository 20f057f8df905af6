'use strict';
/*
 * bench_fanout: a thousand viewers of one rig at 60 edits/s.
 *
 * One editor turns a bone of the 59-bone skeleton (docs/transforms.md 6.2)
 * at BENCH_HZ (60) edits a second; BENCH_SUBS (1,000) subscribers watch the
 * rig, spread over BENCH_PROCS (4) load-generator processes of their own
 * (bench_subscribers, in C, or with BENCH_CLIENTS=node the node pool of
 * bench/lib/subscribers.js), so that the clients are not the bottleneck.
 * For binary float32 frames and for JSON text frames, three runs each of
 * BENCH_SECONDS (5) after a 1 s warm-up, it prints the median of:
 *
 *   - deliveries: update frames received over (edits x subscribers); the
 *     rest were coalesced (a subscriber that was behind got one frame for
 *     several seqs);
 *   - edit-to-update latency p50 and p99 over every subscriber and every
 *     edit: from sending the edit to the subscriber receiving the first
 *     frame whose seq reaches it;
 *   - the server's CPU (user + system seconds per second, from /proc) and
 *     the load generators' CPU;
 *   - bytes per update frame received;
 *   - edits per turn: edits that arrive together are committed in one turn
 *     (the group commit) and seen together, whatever the fan-out does; and
 *     the turns the fan-out folded into a later frame for a client that was
 *     behind (rigd_updates_coalesced_total), per turn and subscriber;
 *   - and beside them the floor (bench_sendfloor): the same number of
 *     loopback sockets, each sent a float32 frame's bytes by a program that
 *     does nothing else, at the same rate.
 *
 * The server runs with synchronous=NORMAL: with FULL every group commit adds
 * an fsync to every edit's latency, which the figures would then mostly
 * measure. BENCH_RIGD_ARGS adds flags of its own (e.g. "--event-loop libuv",
 * the loop of a process in a cluster).
 *
 * Run: cmake --build BUILD --target bench_fanout (or node
 * bench/bench_fanout.js with RIGD_BUILD_DIR and RIGD_SOURCE_DIR set).
 */
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { cSubscribers } = require(path.join(__dirname, 'lib', 'csubscribers.js'));
const { forkPool, latencies } = require(path.join(__dirname, 'lib', 'subscribers.js'));
const {
  startRigd, createScene, skeletonOps, Client, percentile, sleep, get,
} = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));

/* The server's counters of turns and of turns folded into a later frame. */
async function counters(server) {
  const text = (await get(server, '/metrics')).text;
  const read = (name) => Number(new RegExp(`^rigd_${name} (\\S+)$`, 'm').exec(text)[1]);
  return { turns: read('commits_total'), folded: read('updates_coalesced_total') };
}

const EDIT_HZ = Number(process.env.BENCH_HZ || 60);
const SECONDS = Number(process.env.BENCH_SECONDS || 5);
const SUBS = Number(process.env.BENCH_SUBS || 1000);
const PROCS = Number(process.env.BENCH_PROCS || 4);
const RUNS = Number(process.env.BENCH_RUNS || 3);
const NICE = Number(process.env.BENCH_NICE || 0);
const FORMATS = (process.env.BENCH_FORMATS || 'f32,json').split(',');
const CLIENTS = process.env.BENCH_CLIENTS || 'c';

/* One load-generator process holding 'n' subscribers, in C
 * (bench_subscribers) unless BENCH_CLIENTS=node. */
function generator(port, scene, n, format) {
  return (CLIENTS === 'node' ? forkPool : cSubscribers)({ port, scene, n, format, nice: NICE });
}

/* Edits at EDIT_HZ for 'seconds'; resolves to the map seq -> send time (ns)
 * of the acknowledged edits. */
async function animate(editor, scene, seconds, frame0) {
  const sent = new Map();
  const period = 1000 / EDIT_HZ;
  const start = Date.now();
  const pending = [];
  for (let frame = frame0; Date.now() - start < seconds * 1000; frame++) {
    const t0 = process.hrtime.bigint();
    pending.push(editor.request({ type: 'edit', scene,
      ops: [{ op: 'set', id: 'upper_arm_l', euler: [0, 0, (frame * 3) % 360] }] }).then((ack) => {
      if (ack.type === 'ack') sent.set(ack.seq, t0);
    }));
    await sleep(Math.max(0, start + (frame - frame0 + 1) * period - Date.now()));
  }
  await Promise.all(pending);
  return sent;
}

async function run(server, scene, format) {
  const editor = await Client.connect(server);
  const gens = [];
  for (let p = 0; p < PROCS; p++) {
    const n = Math.floor(SUBS / PROCS) + (p < SUBS % PROCS ? 1 : 0);
    if (n) gens.push(generator(server.port, scene, n, format));
  }
  await Promise.all(gens.map((g) => g.ready));
  await animate(editor, scene, 1, 0);   /* warm-up */
  await sleep(200);
  const c0 = await Promise.all(gens.map((g) => g.count()));
  const m0 = await counters(server);
  const cpu0 = server.cpuSeconds();
  const t0 = Date.now();
  const sent = await animate(editor, scene, SECONDS, 1000);
  await sleep(300);
  const secs = (Date.now() - t0) / 1000;
  const cpu = server.cpuSeconds() - cpu0;
  const m1 = await counters(server);
  const c1 = await Promise.all(gens.map((g) => g.count()));
  const stops = await Promise.all(gens.map((g) => g.stop()));
  await editor.close();

  const seqs = [...sent.keys()].sort((a, b) => a - b);
  const arrivals = stops.flatMap((r) => r.arrivals);
  /* Frames of the measured edits; an edit never reached counts as worst. */
  const frames = arrivals.reduce((a, got) => a + got.filter(([seq]) => seq >= seqs[0]).length, 0);
  const lat = latencies(sent, arrivals, Infinity);
  const sum = (list, k) => list.reduce((a, c) => a + c[k], 0);
  const turns = m1.turns - m0.turns;
  return {
    edits: seqs.length,
    editsPerTurn: seqs.length / Math.max(1, turns),
    folded: (m1.folded - m0.folded) / Math.max(1, turns * SUBS),
    deliveries: frames / (seqs.length * SUBS),
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
    cpu: cpu / secs,
    genCpu: (sum(c1, 'cpu') - sum(c0, 'cpu')) / secs,
    bytesPerFrame: (sum(c1, 'bytes') - sum(c0, 'bytes')) / Math.max(1, sum(c1, 'frames') - sum(c0, 'frames')),
  };
}

const median = (xs) => percentile(xs, 50);

async function main() {
  const server = await startRigd({ args: ['--sync', 'normal', '--max-clients', String(SUBS + 64),
    ...(process.env.BENCH_RIGD_ARGS || '').split(' ').filter(Boolean)] });
  console.log(`bench_fanout: rigd ${server.url}, 59-bone skeleton, ${SUBS} subscribers in ` +
    `${PROCS} processes, edits at ${EDIT_HZ}/s, ${RUNS} runs of ${SECONDS} s after 1 s warm-up`);
  console.log('');
  console.log('  format   deliveries  coalesced   p50 ms    p99 ms   server CPU  clients CPU  bytes/frame');
  let bytesF32 = 1207;
  for (const format of FORMATS) {
    const rows = [];
    for (let k = 0; k < RUNS; k++) {
      const scene = `fanout_${format}_${k}`;
      await createScene(server, scene);
      const setup = await Client.connect(server);
      await setup.request({ type: 'edit', scene, ops: skeletonOps() });
      await setup.close();
      rows.push(await run(server, scene, format));
    }
    const m = (k) => median(rows.map((r) => r[k]));
    console.log(`  ${format.padEnd(6)} ${(100 * m('deliveries')).toFixed(1).padStart(10)}% ` +
      `${(100 * (1 - m('deliveries'))).toFixed(2).padStart(9)}% ${m('p50').toFixed(2).padStart(8)} ` +
      `${m('p99').toFixed(2).padStart(9)} ${m('cpu').toFixed(3).padStart(10)} s/s ` +
      `${m('genCpu').toFixed(3).padStart(8)} s/s ${m('bytesPerFrame').toFixed(0).padStart(10)}`);
    console.log(`         runs: ${rows.map((r) => `${(100 * r.deliveries).toFixed(1)}% p99 ` +
      `${r.p99.toFixed(1)} ms cpu ${r.cpu.toFixed(2)}`).join('; ')}`);
    if (format === 'f32') bytesF32 = m('bytesPerFrame');
    console.log(`         edits per turn (group commit) ${m('editsPerTurn').toFixed(3)}; turns the ` +
      `fan-out folded into a later frame ${(100 * m('folded')).toFixed(2)}% of turns x subscribers`);
  }
  await server.stop('SIGTERM');
  floor(bytesF32);
}

/* The peer in the same sitting: bench_sendfloor, a program that only
 * send(2)s a message of the float32 frame's size to as many loopback
 * sockets, received by as many processes, at the same rate. */
function floor(bytes) {
  const exe = path.join(process.env.RIGD_BUILD_DIR, 'bench', 'bench_sendfloor');
  const rows = [];
  for (let k = 0; k < RUNS; k++) {
    const out = execFileSync(exe, [String(SUBS), String(Math.max(8, Math.round(bytes))),
      String(EDIT_HZ), String(SECONDS), String(PROCS)], { encoding: 'utf8' });
    const [, p50, p99, cpu, rcpu, delivered] = out.trim().split(' ').map(Number);
    rows.push({ p50, p99, cpu, rcpu, delivered });
  }
  const m = (k) => median(rows.map((r) => r[k]));
  console.log(`  send(2) ${(100 * m('delivered')).toFixed(1).padStart(10)}% ${''.padStart(10)} ` +
    `${m('p50').toFixed(2).padStart(8)} ${m('p99').toFixed(2).padStart(9)} ` +
    `${m('cpu').toFixed(3).padStart(10)} s/s ${m('rcpu').toFixed(3).padStart(8)} s/s ` +
    `${Math.round(bytes).toString().padStart(10)}`);
  console.log(`         runs: ${rows.map((r) => `p99 ${r.p99.toFixed(1)} ms cpu ` +
    `${r.cpu.toFixed(2)}`).join('; ')}`);
  console.log('         (the floor: a C program that only writes the same bytes to as many ' +
    'loopback sockets at the same rate)');
}

main().catch((e) => { console.error(e); process.exit(1); });
