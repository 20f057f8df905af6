'use strict';
/*
 * The container's entry point (docker/entrypoint.sh) run as the image runs
 * it, minus the container: no Docker engine is needed, only the script, the
 * built rigd on PATH and a data directory standing in for the volume. The
 * first start makes an admin token, prints it once and keeps only its
 * digest; the token then works and nothing else does; a second start keeps
 * the file and prints no token.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const {
  SOURCE_DIR, BUILD_DIR, SANITIZED, tempDir, get, childPid,
} = require('../lib/rigd.js');

const ENTRYPOINT = path.join(SOURCE_DIR, 'docker', 'entrypoint.sh');

/* Starts the entry point; resolves to {proc, host, port, stderr(), stop()}. */
function startEntrypoint(data) {
  const env = {
    ...process.env,
    PATH: `${BUILD_DIR}:${process.env.PATH}`,
    RIGD_DATA: data,
    RIGD_WEB: path.join(SOURCE_DIR, 'web'),
    RIGD_LISTEN: '127.0.0.1:0',
  };
  const proc = spawn('timeout', ['--kill-after=5', '300', ENTRYPOINT, '--origin', 'http://localhost:8080'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exit = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  proc.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not serving:\n${stderr}`)), SANITIZED ? 60000 : 20000);
    proc.on('exit', (code) => reject(new Error(`exited with ${code}:\n${stderr}`)));
    proc.stdout.on('data', (d) => {
      stdout += d;
      const m = /serving http:\/\/(\S+?):(\d+)\//.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        host: m[1],
        port: Number(m[2]),
        stderr: () => stderr,
        /* The script exec's rigd, so the child of `timeout` is rigd itself.
         * SIGTERM goes to rigd alone, as `docker stop` sends it: sent to
         * `timeout`, it would reach rigd twice (timeout signals its child and
         * then its whole process group), and under ASan a second SIGTERM
         * that lands during the leak check at exit kills the checker. */
        stop: async () => {
          const rigd = childPid(proc.pid);
          if (rigd) process.kill(rigd, 'SIGTERM');
          else proc.kill('SIGTERM');
          return exit;
        },
      });
    });
  });
}

test('first start: an admin token shown once, kept hashed, and required', async () => {
  const data = tempDir('rigd-docker-');
  const server = await startEntrypoint(data);
  try {
    const m = /admin token ([0-9a-f]{48}) /.exec(server.stderr());
    assert.ok(m, `the token is printed: ${server.stderr()}`);
    const token = m[1];
    const file = fs.readFileSync(path.join(data, 'tokens'), 'utf8');
    assert.ok(!file.includes(token), 'the file keeps no clear token');
    assert.match(file, /^admin:\*:sha256:[0-9a-f]{64}$/m);
    assert.equal(fs.statSync(path.join(data, 'tokens')).mode & 0o077, 0, 'only the owner reads it');
    assert.ok(fs.existsSync(path.join(data, 'rig.db')), 'the database lives in the volume');

    assert.equal((await get(server, '/api/scenes')).status, 401);
    assert.equal((await get(server, '/api/scenes', { authorization: 'Bearer wrong-token-0123456789' })).status, 401);
    const r = await get(server, '/api/scenes', { authorization: `Bearer ${token}` });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.scenes.some((s) => s.name === 'demo'), r.text);
  } finally {
    assert.equal(await server.stop(), 0, `rigd's exit, with its stderr:\n${server.stderr()}`);
  }

  const before = fs.readFileSync(path.join(data, 'tokens'), 'utf8');
  const again = await startEntrypoint(data);
  try {
    assert.doesNotMatch(again.stderr(), /admin token/, 'a second start prints no token');
    assert.equal(fs.readFileSync(path.join(data, 'tokens'), 'utf8'), before, 'and keeps the file');
    assert.equal((await get(again, '/api/scenes')).status, 401);
  } finally {
    assert.equal(await again.stop(), 0, `rigd's exit, with its stderr:\n${again.stderr()}`);
  }
});
