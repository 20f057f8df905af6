'use strict';
/*
 * Helpers for end-to-end tests of several rigd processes on one Redis
 * (--redis): a real redis-server on a free port in a temporary folder (AOF
 * with appendfsync always, as docs/deploy.md asks; optionally a replica of
 * another; started again on the same folder to keep its data), rigd
 * processes on it each with its own database, commands to Redis over RESP
 * without a client library, and the cluster's own views (GET /api/cluster,
 * scenes, logs, metrics). The same helpers as tests/e2e/cluster.js keeps
 * for itself, shared by the cluster tests that came after it.
 */
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const netMod = require('node:net');
const { startRigd, get, sleep, tempDir } = require('./rigd.js');

const LEASE_MS = 2000;
const WAIT_MS = 30000;

/* A free TCP port on 127.0.0.1 (bound, read, released). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = netMod.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/* Starts redis-server on 'port' in 'dir' (AOF, fsync always; 'extra': more
 * arguments, e.g. ['--replicaof', '127.0.0.1', P]); resolves to {port, dir,
 * url, pid, stop(signal)} once it accepts connections. It ends by itself
 * after ten minutes whatever happens to the test. */
async function startRedis(dir, port, extra = []) {
  const proc = spawn('timeout', ['--kill-after=5', '600', 'redis-server', '--port', String(port),
    '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes',
    '--appendfsync', 'always', '--protected-mode', 'yes', ...extra],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exit = new Promise((resolve) => proc.on('exit', resolve));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 20000);
    proc.stdout.on('data', (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`redis-server exited ${code}:\n${out}`)); });
  });
  const server = {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    pid: proc.pid,
    stopped: false,
    /* redis-server itself (the child of timeout). */
    signal: (sig) => {
      const child = require('./rigd.js').childPid(proc.pid) || proc.pid;
      process.kill(child, sig);
    },
    stop: async (sig = 'SIGTERM') => {
      if (!server.stopped) {
        server.stopped = true;
        try { server.signal(sig); } catch { /* gone */ }
        try { process.kill(proc.pid, 'SIGTERM'); } catch { /* gone */ }
      }
      await exit;
    },
  };
  return server;
}

/* Parses one RESP reply at buf[at..]: {value, end}, or null when it is not
 * complete yet. Errors come as {error: text}. */
function parseResp(buf, at = 0) {
  const nl = buf.indexOf('\r\n', at);
  if (nl < 0) return null;
  const kind = String.fromCharCode(buf[at]);
  const head = buf.toString('utf8', at + 1, nl);
  if (kind === '+') return { value: head, end: nl + 2 };
  if (kind === '-') return { value: { error: head }, end: nl + 2 };
  if (kind === ':') return { value: Number(head), end: nl + 2 };
  if (kind === '$') {
    const n = Number(head);
    if (n < 0) return { value: null, end: nl + 2 };
    if (buf.length < nl + 2 + n + 2) return null;
    return { value: buf.toString('utf8', nl + 2, nl + 2 + n), end: nl + 2 + n + 2 };
  }
  if (kind === '*') {
    const n = Number(head);
    if (n < 0) return { value: null, end: nl + 2 };
    const out = [];
    let end = nl + 2;
    for (let i = 0; i < n; i++) {
      const r = parseResp(buf, end);
      if (!r) return null;
      out.push(r.value);
      end = r.end;
    }
    return { value: out, end };
  }
  throw new Error(`not RESP: ${buf.toString('utf8', at, Math.min(buf.length, at + 40))}`);
}

/* One command to Redis over RESP: resolves to the whole reply, parsed. */
function redisCall(port, ...args) {
  return new Promise((resolve, reject) => {
    const sock = netMod.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    sock.on('connect', () => {
      let msg = `*${args.length}\r\n`;
      for (const a of args) msg += `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`;
      sock.write(msg);
    });
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      const r = parseResp(buf);
      if (r) {
        sock.end();
        resolve(r.value);
      }
    });
    sock.on('error', reject);
  });
}

/* One command to Redis over RESP: resolves to {line, value}: the reply's
 * first line ("+OK", ":1", "$3", "$-1", "-ERR ...") and, for a bulk
 * string, its value (else null). */
function redisReply(port, ...args) {
  return new Promise((resolve, reject) => {
    const sock = netMod.connect(port, '127.0.0.1');
    let buf = '';
    sock.on('connect', () => {
      let msg = `*${args.length}\r\n`;
      for (const a of args) msg += `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`;
      sock.write(msg);
    });
    sock.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\r\n');
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      const m = /^\$(\d+)$/.exec(line);
      if (m && buf.length < nl + 2 + Number(m[1]) + 2) return;
      sock.end();
      resolve({ line, value: m ? buf.slice(nl + 2, nl + 2 + Number(m[1])) : null });
    });
    sock.on('error', reject);
  });
}

/* The same, resolving to the reply's first line alone. */
async function redisCmd(port, ...args) {
  return (await redisReply(port, ...args)).line;
}

/* The entries of a scene's log stream on the Redis at 'port':
 * [{seq, token, line}] in stream order. */
async function streamOf(port, scene) {
  const r = await redisCall(port, 'XRANGE', `rigd:log:${scene}`, '-', '+');
  return r.map(([, f]) => {
    const o = {};
    for (let i = 0; i < f.length; i += 2) o[f[i]] = f[i + 1];
    return { seq: Number(o.seq), token: Number(o.token), line: JSON.parse(o.line) };
  });
}

/* Redis and 'n' rigd processes on it, each with its own database; 'args'
 * are added to each rigd's command line. */
async function startCluster(n = 3, args = []) {
  const dir = tempDir('rigd-cluster-');
  const redis = await startRedis(dir, await freePort());
  const procs = [];
  for (let k = 0; k < n; k++) {
    procs.push(await startRigd({
      dir: tempDir(`rigd-cluster-${k}-`),
      args: ['--redis', redis.url, '--lease', String(LEASE_MS), '--log-level', 'info', ...args],
    }));
  }
  return { redis, procs, dir };
}

async function stopCluster(c) {
  for (const p of c.procs) {
    if (!p.exited) await p.stop('SIGKILL').catch(() => {});
  }
  await c.redis.stop();
}

/* GET /api/cluster of process 'p'. */
async function clusterOf(p) {
  const r = await get(p, '/api/cluster');
  assert.equal(r.status, 200, r.text);
  return r.json;
}

/* Polls until fn() resolves to a truthy value; resolves to it. */
async function until(what, fn, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await sleep(100);
  }
}

/* The one live process that owns 'scene' by its own account, once every
 * live (not exited, not paused) process agrees on it and its token.
 * Resolves to {proc, token, id}. */
async function ownerOf(procs, scene) {
  return until(`one owner of ${scene}`, async () => {
    const live = procs.filter((p) => !p.exited && !p.paused);
    const views = await Promise.all(live.map(clusterOf));
    const owners = [];
    let token;
    for (let i = 0; i < live.length; i++) {
      const l = views[i].leases.find((x) => x.scene === scene);
      if (!l || (l.state !== 'owned' && l.state !== 'other')) return null;
      if (token === undefined) token = l.token;
      if (l.token !== token) return null;
      if (l.state === 'owned') owners.push(live[i]);
    }
    return owners.length === 1 ? { proc: owners[0], token, id: views[live.indexOf(owners[0])].process } : null;
  });
}

/* The log of 'scene' on 'p' without the times (each process stores when
 * it applied a batch). */
async function logOf(p, scene) {
  const r = await get(p, `/api/scenes/${scene}/log`);
  assert.equal(r.status, 200, `${scene}: ${r.text}`);
  const text = r.text.trim();
  if (!text) return [];
  return text.split('\n').map((l) => { const x = JSON.parse(l); delete x.time; return x; });
}

/* The scenes 'p' serves: [{name, seq, nodes, dims?}], by name. */
async function scenesOf(p) {
  const r = await get(p, '/api/scenes');
  assert.equal(r.status, 200, r.text);
  return r.json.scenes;
}

/* A message as JSON, for assertion messages. */
const show = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? Number(v) : v));

/* The value of metric 'name' on 'p' (a number; 0 when absent). */
async function metric(p, name) {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec((await get(p, '/metrics')).text);
  return m ? Number(m[1]) : 0;
}

module.exports = {
  LEASE_MS, WAIT_MS, freePort, startRedis, startCluster, stopCluster, parseResp, redisCall,
  redisReply, redisCmd, streamOf, clusterOf, until, ownerOf, logOf, scenesOf, metric, show,
};
