'use strict';
/*
 * Helpers for the cluster end-to-end tests (several rigd processes on one
 * Redis): a real redis-server on a free port in a temporary folder (AOF
 * with appendfsync always, as docs/deploy.md asks), started again on the
 * same folder to keep its data; one Redis command over RESP without a
 * client library; waiting for a condition; the one owner of a scene; a
 * scene's log without the times. The same helpers as tests/e2e/cluster.js
 * keeps for itself, for the test files that came after it.
 */
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const netMod = require('node:net');
const { get, sleep } = require('./rigd.js');

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

/* Starts redis-server on 'port' in 'dir' (AOF, fsync always); resolves to
 * {port, dir, url, stop()} once it accepts connections. It ends by itself
 * after ten minutes whatever happens to the test. */
async function startRedis(dir, port) {
  const proc = spawn('timeout', ['--kill-after=5', '600', 'redis-server', '--port', String(port),
    '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes',
    '--appendfsync', 'always', '--protected-mode', 'yes'],
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
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    stop: async () => { try { process.kill(proc.pid, 'SIGTERM'); } catch { /* gone */ } await exit; },
  };
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
 * live process agrees on it and its token. Resolves to {proc, token, id}. */
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
 * it applied a batch); [] for a scene without batches. */
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

module.exports = {
  LEASE_MS, WAIT_MS, freePort, startRedis, redisCmd, redisReply, clusterOf, until, ownerOf, logOf, scenesOf,
};
