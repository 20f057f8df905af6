'use strict';
/*
 * bench_wire: bytes per update on the wire, JSON text frames against binary
 * frames with float32 and float64 matrices (docs/protocol.md, "Binary
 * frames"), for the 59-bone skeleton (docs/transforms.md 6.2) with one bone
 * turned per edit. Three subscribers of the same scene, one per format, see
 * the same edits; every edit is awaited by all three before the next, so
 * each edit is one update per subscriber and the figures are exact, not
 * sampled. Prints the mean over the 59 bones, the largest update (a bone
 * near the root) and a leaf's, for each format, and the ratios to JSON.
 *
 * Run: cmake --build BUILD --target bench_wire (or node bench/bench_wire.js
 * with RIGD_BUILD_DIR and RIGD_SOURCE_DIR set). BENCH_ROUNDS (default 3)
 * turns every bone that many times (with different angles).
 */
const path = require('node:path');
const {
  startRigd, createScene, skeletonOps, Client,
} = require(path.join(__dirname, '..', 'tests', 'lib', 'rigd.js'));
const { WireClient } = require(path.join(__dirname, '..', 'tests', 'lib', 'wire.js'));

const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const FORMATS = ['json', 'f32', 'f64'];

async function main() {
  const server = await startRigd({ args: ['--sync', 'normal'] });
  try {
    await createScene(server, 'skel');
    const editor = await Client.connect(server, { validate: false });
    const bones = skeletonOps().map((op) => op.id);
    await editor.request({ type: 'edit', scene: 'skel', ops: skeletonOps() });
    const subs = {};
    for (const f of FORMATS) {
      subs[f] = await WireClient.connect(server, { validate: false });
      await subs[f].subscribe('skel', f);
    }
    const sizes = Object.fromEntries(FORMATS.map((f) => [f, []]));
    const byBone = new Map();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, id] of bones.entries()) {
        const ack = await editor.request({ type: 'edit', scene: 'skel',
          ops: [{ op: 'set', id, euler: [5 + round, 10 + k, 15] }] });
        for (const f of FORMATS) {
          const c = subs[f];
          const upd = await c.waitFor((m) => m.type === 'update' && m.seq >= ack.seq,
            { what: `the update of ${id}` });
          if (upd.seq !== ack.seq) throw new Error('an update covered two edits');
          sizes[f].push(upd.bytes);
          const row = byBone.get(id) || { matrices: Object.keys(upd.world).length };
          row[f] = upd.bytes;
          byBone.set(id, row);
        }
      }
    }
    const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
    console.log(`bench_wire: 59-bone skeleton, one bone turned per edit, ${ROUNDS} rounds of every bone`);
    console.log('format   mean B/update   vs JSON   spine1 (46 matrices)   a fingertip (1 matrix)');
    const tip = byBone.get('finger3_3_l');
    const spine = byBone.get('spine1');
    for (const f of FORMATS) {
      console.log(`${f.padEnd(8)} ${mean(sizes[f]).toFixed(0).padStart(13)}   ${(mean(sizes[f]) / mean(sizes.json)).toFixed(3).padStart(7)}   ${String(spine[f]).padStart(20)}   ${String(tip[f]).padStart(22)}`);
    }
    console.log(`mean matrices per update: ${mean([...byBone.values()].map((r) => r.matrices)).toFixed(1)}`);
    for (const c of [editor, ...Object.values(subs)]) await c.close();
  } finally {
    await server.stop('SIGTERM');
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
