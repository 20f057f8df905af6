// bench_three.mjs: three.js's Object3D.updateMatrixWorld on a tree written
// by bench_core, for the "x times faster than three.js" figure.
//
//   printf 'auto\nauto\n' | node bench/bench_three.mjs TREE_FILE
//
// TREE_FILE holds float64 values: n, then per node in preorder parent
// (-1 for a root), t[3], r[4] (x y z w), s[3], then rigd's world matrices
// (16 each, column-major). bench_core drives it through its stdin, so that
// its timings alternate with rigd's. Prints, one per line:
//   max_rel_diff Z        at once: three.js's world matrices against rigd's
//                         (largest |difference| over the upper three rows'
//                         largest element, per node)
//   auto_ns_per_node X    for each line "auto" read: matrixAutoUpdate = true
//                         (three's default), every call recomposes each
//                         local matrix, then multiplies
//   manual_ns_per_node Y  at the end of stdin: matrixAutoUpdate = false,
//                         updateMatrixWorld(true), the multiplications only,
//                         like rigd's full pass
// Each timing is the median of 15 timed calls after 5 warm-up calls.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const THREE = await import(new URL('../web/node_modules/three/build/three.module.js', import.meta.url).href);

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/bench_three.mjs TREE_FILE');
  process.exit(2);
}
const buf = readFileSync(file);
const data = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
const n = data[0];
if (!(Number.isInteger(n) && n > 0 && data.length === 1 + n * 11 + n * 16)) {
  console.error(`bench_three: ${file} is not a tree file (${data.length} values)`);
  process.exit(1);
}

// The container plays three's Scene: the roots hang under it, as in any
// three.js application, and one call updates everything.
const container = new THREE.Object3D();
const objects = new Array(n);
for (let i = 0; i < n; i++) {
  const rec = 1 + i * 11;
  const o = new THREE.Object3D();
  o.position.set(data[rec + 1], data[rec + 2], data[rec + 3]);
  o.quaternion.set(data[rec + 4], data[rec + 5], data[rec + 6], data[rec + 7]);
  o.scale.set(data[rec + 8], data[rec + 9], data[rec + 10]);
  const parent = data[rec];
  (parent < 0 ? container : objects[parent]).add(o);
  objects[i] = o;
}

function median(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

function timeCalls(fn) {
  for (let k = 0; k < 5; k++) fn();
  const times = [];
  for (let k = 0; k < 15; k++) {
    const t0 = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t0));
  }
  return median(times);
}

const updateAuto = () => container.updateMatrixWorld();
updateAuto();

// Against rigd's matrices.
let worst = 0;
const worlds = 1 + n * 11;
for (let i = 0; i < n; i++) {
  const ref = objects[i].matrixWorld.elements;
  let scale = 0;
  let diff = 0;
  for (let k = 0; k < 16; k++) {
    if ((k & 3) !== 3) scale = Math.max(scale, Math.abs(ref[k]));
    diff = Math.max(diff, Math.abs(ref[k] - data[worlds + i * 16 + k]));
  }
  const rel = diff === 0 ? 0 : diff / scale;
  if (!(rel <= worst)) worst = rel;
}
console.log(`max_rel_diff ${worst}`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === 'auto') console.log(`auto_ns_per_node ${(timeCalls(updateAuto) / n).toFixed(3)}`);
}

for (const o of objects) {
  o.updateMatrix();
  o.matrixAutoUpdate = false;
}
container.matrixAutoUpdate = false;
const manualNs = timeCalls(() => container.updateMatrixWorld(true));

console.log(`manual_ns_per_node ${(manualNs / n).toFixed(3)}`);
