'use strict';
/*
 * Drives bench_subscribers (bench/bench_subscribers.c), the C load
 * generator of websocket subscribers, from a node benchmark: one process of
 * 'n' subscribers of 'scene' on 127.0.0.1:'port' in 'format' (json, f32 or
 * f64). It talks by lines on its stdin and stdout and leaves the arrivals in
 * a file of (u64 seq, u64 ns) pairs per subscriber.
 *
 * cSubscribers({port, scene, n, format, nice}) returns:
 *   ready   a promise, resolved once every subscriber has its snapshot;
 *   count() {frames, bytes, cpu} so far (cpu: the process's seconds);
 *   hush()  its server is about to go away: closed sockets are expected;
 *   stop()  {arrivals}: per subscriber, [[seq, hrtime ns as a BigInt], ...]
 *           of every update frame, on the clock of process.hrtime.
 * RIGD_BUILD_DIR names the build holding bench/bench_subscribers.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

let made = 0;

function cSubscribers({ port, scene, n, format = 'f32', nice = 0 }) {
  const file = path.join(os.tmpdir(), `rigd-subs-${process.pid}-${made++}.bin`);
  const exe = path.join(process.env.RIGD_BUILD_DIR, 'bench', 'bench_subscribers');
  const child = spawn(exe, [String(port), scene, String(n), format, file],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  if (nice) os.setPriority(child.pid, nice);
  const lines = [];
  let waiting = null;
  let rest = '';
  let quiet = false;
  child.stdout.on('data', (chunk) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop();
    for (const line of parts) {
      if (line.startsWith('error')) {
        if (!quiet) console.error(`bench_subscribers: ${line}`);
      } else if (waiting) {
        const w = waiting; waiting = null; w(line);
      } else lines.push(line);
    }
  });
  const next = () => (lines.length ? Promise.resolve(lines.shift())
    : new Promise((resolve) => { waiting = resolve; }));
  const readArrivals = () => {
    const b = fs.readFileSync(file);
    fs.unlinkSync(file);
    const subs = [];
    let off = 4;
    for (let k = 0; k < b.readUInt32LE(0); k++) {
      const count = b.readUInt32LE(off);
      const got = [];
      off += 4;
      for (let i = 0; i < count; i++, off += 16)
        got.push([Number(b.readBigUInt64LE(off)), b.readBigUInt64LE(off + 8)]);
      subs.push(got);
    }
    return subs;
  };
  return {
    ready: next(),
    hush: () => { quiet = true; },
    count: async () => {
      child.stdin.write('count\n');
      const [, frames, bytes, cpu] = (await next()).split(' ');
      return { frames: Number(frames), bytes: Number(bytes), cpu: Number(cpu) };
    },
    stop: async () => {
      child.stdin.write('stop\n');
      await next();
      return { arrivals: readArrivals() };
    },
  };
}

module.exports = { cSubscribers };
