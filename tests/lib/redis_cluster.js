'use strict';
/*
 * redis_cluster.js: the helpers of the cluster end-to-end tests (several rigd
 * processes on one Redis, --redis): a real redis-server started on a free
 * port in a temporary folder (AOF with appendfsync always, as
 * docs/deploy.md asks), rigd processes on it each with its own database,
 * and waiting for the one owner of a scene. The same helpers as
 * tests/e2e/cluster.js keeps for itself, for the test files added after it.
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

/* A message as JSON, for assertion messages. */
const show = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? Number(v) : v));

module.exports = {
  LEASE_MS, WAIT_MS, freePort, startRedis, startCluster, stopCluster, clusterOf, until, ownerOf,
  show,
};
