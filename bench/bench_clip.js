'use strict';
/*
 * bench_clip: the clip op with ten viewers.
 *
 * Imports a Spine skeleton of 100 bones, 120 slots and 20 clips (each
 * animating 30 bones with 10 Bezier keys of rotate and translate, as
 * bench_skeleton's), subscribes BENCH_SUBS (10) viewers, and has one
 * editor play clip0 at BENCH_HZ (60) clip ops a second for BENCH_SECONDS
 * (10), its time advancing a 60th of a second an op. Beside it, in the same
 * run, the same editor turning one bone with a plain set at the same rate.
 * The viewers are bench_subscribers (in C, a process of their own) taking
 * binary float32 frames, as the browser viewer does, then JSON
 * (BENCH_FORMATS). For each it prints, over every viewer and op:
 *
 *   - edit-to-update p50 / p99 / max: from sending the op to the viewer
 *     receiving the first update whose seq reaches the op's seq;
 *   - ack p99: from sending to its ack;
 *   - the server's CPU per op (user + system from /proc).
 *
 * The server runs with its defaults (--sync full): every ack and update
 * waits on an fsync. It prints figures and asserts nothing. Run:
 *   cmake --build BUILD --target bench_clip
 */
const path = require('node:path');
const { startRigd, Client, percentile, sleep, post } = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
const { cSubscribers } = require(path.join(__dirname, 'lib', 'csubscribers.js'));
const { latencies } = require(path.join(__dirname, 'lib', 'subscribers.js'));

const HZ = Number(process.env.BENCH_HZ || 60);
const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const SUBS = Number(process.env.BENCH_SUBS || 10);
const FORMATS = (process.env.BENCH_FORMATS || 'f32,json').split(',');
const BONES = 100;
const SLOTS = 120;
const CLIPS = 20;
const CLIP_BONES = 30;
const KEYS = 10;

/* The skeleton: bone i's parent is bone (i - 1) / 2. */
function skeleton() {
  const bones = [{ name: 'bone 0' }];
  for (let i = 1; i < BONES; i++) {
    bones.push({ name: `bone ${i}`, parent: `bone ${(i - 1) >> 1}`, x: 10 + (i % 7), y: (i % 5) - 2,
      rotation: ((i * 37) % 180) - 90, scaleX: 0.8 + (i % 4) * 0.1, length: 20 });
  }
  const slots = [];
  const attachments = {};
  for (let i = 0; i < SLOTS; i++) {
    slots.push({ name: `slot ${i}`, bone: `bone ${i % BONES}`, attachment: `a${i}` });
    attachments[`slot ${i}`] = { [`a${i}`]: { x: 1, y: 2, width: 32, height: 16 } };
  }
  const animations = {};
  for (let c = 0; c < CLIPS; c++) {
    const timelines = {};
    for (let b = 0; b < CLIP_BONES; b++) {
      const rotate = [];
      const translate = [];
      for (let k = 0; k < KEYS; k++) {
        rotate.push({ time: k * 0.1, value: (k * 17) % 90, curve: [k * 0.1 + 0.03, k, k * 0.1 + 0.07, k + 5] });
        translate.push({ time: k * 0.1, x: k, y: -k });
      }
      timelines[`bone ${(b * 3 + c) % BONES}`] = { rotate, translate };
    }
    animations[`clip${c}`] = { bones: timelines };
  }
  return { skeleton: { hash: 'bench', spine: '4.2.43' }, bones, slots, skins: [{ name: 'default', attachments }], animations };
}

/* Sends HZ ops a second for SECONDS ('opOf(i)' the ops of the i-th) with
 * the subscribers of 'gen' watching, and measures what they saw. */
async function drive(server, editor, gen, opOf) {
  const sent = new Map();
  const acked = [];
  const cpu0 = server.cpuSeconds();
  const n = Math.round(HZ * SECONDS);
  const t0 = Date.now();
  const replies = [];
  const c0 = await gen.count();
  for (let i = 0; i < n; i++) {
    const wait = t0 + (i * 1000) / HZ - Date.now();
    if (wait > 0) await sleep(wait);
    const at = process.hrtime.bigint();
    replies.push(editor.request({ type: 'edit', scene: 'clip', ops: opOf(i) }, 30000).then((m) => {
      if (m.type !== 'ack') throw new Error(`op ${i} refused: ${m.message}`);
      acked.push(Number(m.receivedAt - at) / 1e6);
      sent.set(m.seq, at);
    }));
  }
  await Promise.all(replies);
  await sleep(500);
  const cpu = server.cpuSeconds() - cpu0;
  const c1 = await gen.count();
  editor.messages.length = 0;
  return { sent, acked, cpuPerOp: (cpu / n) * 1e6, n, bytes: (c1.bytes - c0.bytes) / Math.max(1, c1.frames - c0.frames) };
}

function print(label, r, lat) {
  console.log(`${label.padEnd(34)} p50 ${percentile(lat, 50).toFixed(2).padStart(6)} ms  p99 ${percentile(lat, 99).toFixed(2).padStart(6)} ms  ` +
    `max ${Math.max(...lat).toFixed(2).padStart(6)} ms  ack p99 ${percentile(r.acked, 99).toFixed(2).padStart(6)} ms  ` +
    `server CPU ${r.cpuPerOp.toFixed(0)} us per op  ${Math.round(r.bytes)} bytes per frame  (${r.n} ops, ${lat.length} deliveries)`);
}

async function main() {
  const server = await startRigd({});
  try {
    const r = await post(server, '/api/scenes/clip/spine', { skeleton: skeleton() });
    if (r.status !== 200) throw new Error(`import: ${r.status} ${r.text}`);
    const editor = await Client.connect(server, { validate: false });
    console.log(`bench_clip: ${BONES} bones, ${SLOTS} slots, ${CLIPS} clips; ${SUBS} viewers (bench_subscribers, in C), ${HZ} ops/s for ${SECONDS} s, --sync full; load average ${require('node:os').loadavg()[0].toFixed(2)}`);
    for (const format of FORMATS) {
      const gen = cSubscribers({ port: server.port, scene: 'clip', n: SUBS, format });
      await gen.ready;
      const clip = await drive(server, editor, gen, (i) => [{ op: 'clip', clip: 'clip0', time: (i % 60) / 60 }]);
      const set = await drive(server, editor, gen, (i) => [{ op: 'set', id: 'bone_203', euler: [0, 0, i % 90] }]);
      const { arrivals } = await gen.stop();
      print(`${format}: clip op (30 bones animated)`, clip, latencies(clip.sent, arrivals, Infinity));
      print(`${format}: beside it, one set`, set, latencies(set.sent, arrivals, Infinity));
    }
    await editor.close();
  } finally {
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
