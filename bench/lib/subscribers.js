'use strict';
/*
 * A pool of lightweight websocket subscribers for the broadcast benchmarks.
 *
 * Each subscriber is a raw TCP socket that speaks just enough RFC 6455 to
 * subscribe (in JSON, f32 or f64) and then walks the frame headers: it
 * counts update frames and bytes and reads each update's seq (from the first
 * bytes of a JSON update, or at offset 8 of a binary one) without parsing
 * the rest. A client built on a full websocket library in one event loop
 * cannot keep up with a thousand subscribers at 60 Hz and would measure
 * itself instead of the server.
 *
 * Used two ways: in a worker thread (bench_net) through runPool(), and as a
 * child process of its own (forkPool(), with BENCH_CLIENTS=node in
 * bench_fanout and bench_cluster, whose own load generator is the C program
 * bench_subscribers), talking to its parent with process.send. latencies()
 * turns arrivals into edit-to-update times for all three benches.
 *
 * Messages to the pool: 'count' (answers {frames, bytes, cpu}), 'stop'
 * (answers {done, arrivals}); the pool posts {ready: true} once every
 * subscriber has its snapshot, and {error} on a socket error.
 * arrivals: per subscriber, [[seq, hrtime ns as a string], ...] of every
 * update frame (when keepArrivals). process.hrtime is CLOCK_MONOTONIC, so
 * the times of several processes compare.
 */
const net = require('node:net');

/* Starts n subscribers of 'scene' on 127.0.0.1:port; 'post' sends a message
 * to whoever drives the pool, and the returned function takes its messages. */
function runPool({ port, scene, n, format = 'json', keepArrivals = false }, post) {
  const subs = [];
  let ready = 0;
  const binary = format !== 'json';
  const subscribe = { type: 'subscribe', scene };
  if (binary) subscribe.format = format;
  const msg = Buffer.from(JSON.stringify(subscribe));
  const mask = Buffer.from([1, 2, 3, 4]);
  const subscribeFrame = Buffer.concat([Buffer.from([0x81, 0x80 | msg.length]), mask,
    msg.map((x, i) => x ^ mask[i % 4])]);

  const connect = (k) => {
    const sock = net.connect(port, '127.0.0.1');
    const sub = { sock, frames: 0, bytes: 0, arrivals: [] };
    let buf = Buffer.alloc(0);
    let handshaken = false;
    let skip = 0;   /* payload bytes of the current frame still to come */
    let subscribed = false;
    subs[k] = sub;
    sock.setNoDelay(true);
    sock.on('error', (e) => post({ error: String(e) }));
    sock.on('connect', () => {
      sock.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
        'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
        'Sec-WebSocket-Version: 13\r\n\r\n');
    });
    const arrived = (seq) => {
      sub.frames++;
      if (keepArrivals && seq >= 0) sub.arrivals.push([seq, process.hrtime.bigint()]);
    };
    sock.on('data', (chunk) => {
      sub.bytes += chunk.length;
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      if (!handshaken) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        handshaken = true;
        buf = buf.subarray(end + 4);
        sock.write(subscribeFrame);
      }
      for (;;) {
        if (skip) {
          const m = Math.min(skip, buf.length);
          skip -= m;
          buf = buf.subarray(m);
          if (skip) return;
        }
        if (buf.length < 2) return;
        const opcode = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + Math.min(len, 64)) return;
        if (opcode === 2) {
          /* RIGB header: kind at 5 (1 snapshot, 2 update), seq at 8. */
          const kind = buf[off + 5];
          if (kind === 1 && !subscribed) {
            subscribed = true;
            if (++ready === n) post({ ready: true });
          } else if (kind === 2) {
            arrived(Number(buf.readBigUInt64LE(off + 8)));
          }
        } else if (opcode === 1) {
          const head = buf.toString('latin1', off, off + Math.min(len, 64));
          if (head.startsWith('{"type":"snapshot"') && !subscribed && !binary) {
            subscribed = true;
            if (++ready === n) post({ ready: true });
          } else if (head.startsWith('{"type":"update"')) {
            const m = /"seq":(\d+)/.exec(head);
            arrived(m ? Number(m[1]) : -1);
          }
        }
        skip = len;
        buf = buf.subarray(off);
      }
    });
  };
  /* Connect in waves so the listen backlog is never the bottleneck. */
  let k = 0;
  const wave = () => {
    for (let end = Math.min(n, k + 50); k < end; k++) connect(k);
    if (k < n) setTimeout(wave, 5);
  };
  wave();
  return (m) => {
    if (m === 'count') {
      const cpu = process.cpuUsage();
      post({ frames: subs.reduce((a, s) => a + s.frames, 0),
        bytes: subs.reduce((a, s) => a + s.bytes, 0), cpu: (cpu.user + cpu.system) / 1e6 });
    } else if (m === 'stop') {
      for (const s of subs) s.sock.destroy();
      post({ done: true,
        arrivals: subs.map((s) => s.arrivals.map(([seq, t]) => [seq, String(t)])) });
    }
  };
}

/*
 * The pool in a node process of its own (forked), driven from a benchmark
 * with the interface of csubscribers.js: ready, count(), hush(), stop()
 * ({arrivals}). 'nice' lowers the child's priority.
 */
function forkPool({ port, scene, n, format = 'json', nice = 0 }) {
  const { fork } = require('node:child_process');
  const os = require('node:os');
  const child = fork(__filename, [], { stdio: 'inherit' });
  if (nice) os.setPriority(child.pid, nice);
  const replies = [];
  let waiting = null;
  let quiet = false;
  child.on('message', (m) => {
    if (m.error) { if (!quiet) console.error(`subscriber: ${m.error}`); } else if (waiting) {
      const w = waiting; waiting = null; w(m);
    } else replies.push(m);
  });
  const next = () => (replies.length ? Promise.resolve(replies.shift())
    : new Promise((resolve) => { waiting = resolve; }));
  child.send({ port, scene, n, format, keepArrivals: true });
  return {
    ready: next(),
    hush: () => { quiet = true; },
    count: () => { child.send('count'); return next(); },
    stop: async () => { child.send('stop'); const r = await next(); child.disconnect(); return r; },
  };
}

/*
 * Edit-to-update latencies in ms: for each subscriber's 'arrivals'
 * ([[seq, ns], ...], ns a BigInt or its string) and each acknowledged edit
 * of 'sent' (seq -> send time in ns, a BigInt), the time to the first frame
 * whose seq reaches it. An edit a subscriber never reached is left out, or
 * counted as 'unreached' when that is given (Infinity: the worst).
 */
function latencies(sent, arrivals, unreached) {
  const seqs = [...sent.keys()].sort((a, b) => a - b);
  const lat = [];
  for (const got of arrivals) {
    let g = 0;
    for (const seq of seqs) {
      while (g < got.length && got[g][0] < seq) g++;
      if (g < got.length) lat.push(Number(BigInt(got[g][1]) - sent.get(seq)) / 1e6);
      else if (unreached !== undefined) lat.push(unreached);
    }
  }
  return lat;
}

module.exports = { runPool, forkPool, latencies };

/* As a child process: the options come as the first message. */
if (require.main === module) {
  let take = null;
  process.on('message', (m) => {
    if (!take) take = runPool(m, (reply) => process.send(reply));
    else take(m);
  });
  process.on('disconnect', () => process.exit(0));
}
