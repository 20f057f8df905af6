'use strict';
/*
 * The server under valgrind's memcheck: a representative run
 * (subscribe, edits, undo and redo, presence, time travel, log export and
 * import, tokens, a few hostile inputs, a client that vanishes) against rigd
 * run by valgrind, stopped with SIGTERM; valgrind's exit status and summary
 * must show no error and no definite or indirect leak.
 *
 * Only in the release build: valgrind and AddressSanitizer do not mix, so
 * the test skips itself when RIGD_SANITIZE is ON (the ASan build checks the
 * same paths its own way).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const {
  startRigd, get, post, request, tree, Client, RawWs, tempDir, SANITIZED, sleep,
} = require('../lib/rigd.js');

const TOKEN = 'valgrind-editor-0123456789';
const ADMIN = 'valgrind-admin-0123456789';

test('rigd under memcheck: zero errors, zero leaks', { skip: SANITIZED && 'valgrind does not run ASan builds' }, async () => {
  const dir = tempDir('rigd-vg-');
  const log = path.join(dir, 'valgrind.log');
  const server = await startRigd({
    dir,
    wrapper: ['valgrind', '--leak-check=full', '--errors-for-leak-kinds=definite,indirect',
      '--error-exitcode=99', '--track-fds=no', `--log-file=${log}`],
    args: ['--admin-token', ADMIN, '--token', `editor:*:${TOKEN}`, '--idle-timeout', '5'],
    startTimeout: 120000,
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const admin = { authorization: `Bearer ${ADMIN}` };
  const opts = { timeout: 30000 };

  /* HTTP: scenes, edits, trees, time travel, the log out and back in. */
  assert.equal((await post(server, '/api/scenes', { name: 'vg' }, admin)).status, 201);
  const ops = [];
  for (let i = 0; i < 20; i++) ops.push({ op: 'create', id: `n${i}`, ...(i ? { parent: `n${i - 1}` } : {}), t: [0, 0.1, 0] });
  assert.equal((await post(server, '/api/scenes/vg/edits', { ops }, auth)).status, 200);
  assert.equal((await get(server, '/api/scenes/vg?at=1', auth)).status, 200);
  const exported = await get(server, '/api/scenes/demo/log', auth);
  assert.equal((await post(server, '/api/scenes', { name: 'copy' }, admin)).status, 201);
  assert.equal((await post(server, '/api/scenes/copy/log', exported.text, auth)).status, 200);
  assert.equal((await get(server, '/api/scenes/vg/gltf', auth)).status, 200);
  assert.equal((await get(server, '/api/scenes', auth)).status, 200);
  assert.equal((await get(server, '/api/scenes')).status, 401);
  assert.equal((await get(server, '/', {})).status, 200);
  assert.equal((await get(server, '/../etc/passwd')).status, 404);

  /* Websockets: subscribe, edit, undo, redo, presence, updates. */
  const a = await Client.connect(server, { token: TOKEN });
  const b = await Client.connect(server, { token: TOKEN });
  await a.subscribe('vg');
  await b.subscribe('vg');
  a.send({ type: 'presence', scene: 'vg', selection: ['n3'], name: 'Ada' });
  await b.waitFor((m) => m.type === 'presence', opts);
  let last;
  for (let i = 0; i < 30; i++) {
    last = await a.request({ type: 'edit', scene: 'vg', ops: [{ op: 'set', id: `n${i % 20}`, euler: [0, i, 0] }] }, 30000);
    assert.equal(last.type, 'ack');
  }
  assert.equal((await a.request({ type: 'undo', scene: 'vg' }, 30000)).type, 'ack');
  assert.equal((await a.request({ type: 'redo', scene: 'vg' }, 30000)).type, 'ack');
  await b.waitSeq('vg', last.seq + 2, 30000);
  const t = await tree(server, 'vg').catch(() => null);
  assert.equal(t, null, 'the tree needs a token');

  /* Hostile inputs on the same connection. */
  for (const text of ['{"type":', `${'['.repeat(3000)}${']'.repeat(3000)}`, '{"type":"dance"}',
    '{"type":"edit","scene":"vg","ops":[{"op":"reparent","id":"n0","parent":"n5"}]}',
    '{"type":"edit","scene":"vg","ops":[{"op":"set","id":"n1","t":[1e400,0,0]}]}',
    '{"type":"subscribe","scene":"nowhere"}']) {
    const from = a.messages.length;
    a.send(text);
    await a.waitFor((m) => m.type === 'error', { from, ...opts });
  }
  a.send(Buffer.from([1, 2, 3]));
  const big = await Client.connect(server, { token: TOKEN });
  big.send('x'.repeat(2 << 20));
  assert.equal((await big.closed).code, 1009);
  const raw = await RawWs.connect(server);
  raw.sendFrame(0x1, Buffer.from([0xc3, 0x28]));
  await raw.until(() => raw.closeFrame || raw.socketClosed, 30000);
  raw.destroy();
  const noToken = await Client.connect(server);
  assert.equal((await noToken.request({ type: 'subscribe', scene: 'vg' }, 30000)).code, 'unauthorized');

  /* A client that vanishes without a close, with a reply pending. */
  const gone = await Client.connect(server, { token: TOKEN });
  await gone.subscribe('vg');
  gone.send({ type: 'edit', scene: 'vg', ops: [{ op: 'set', id: 'n2', t: [1, 2, 3] }] });
  gone.ws._socket.destroy();
  assert.equal((await request(server, 'DELETE', '/api/scenes/copy', undefined, admin)).status, 200);
  await sleep(500);

  /* SIGTERM with clients still connected: the clean shutdown path. */
  const code = await server.stop('SIGTERM', 120000);
  const report = fs.readFileSync(log, 'utf8');
  const summary = /ERROR SUMMARY: (\d+) errors/.exec(report);
  const lost = (kind) => Number((new RegExp(`${kind} lost: ([\\d,]+) bytes`).exec(report) || [0, '0'])[1].replace(/,/g, ''));
  console.log(report.split('\n').filter((l) => /HEAP SUMMARY|in use at exit|definitely|indirectly|possibly|still reachable|ERROR SUMMARY/.test(l)).join('\n'));
  assert.equal(code, 0, `exit status ${code} (99: valgrind found errors)\n${report.slice(-4000)}`);
  assert.ok(summary, 'a valgrind summary');
  assert.equal(Number(summary[1]), 0, report.slice(-4000));
  assert.equal(lost('definitely'), 0);
  assert.equal(lost('indirectly'), 0);
  for (const c of [a, b, noToken]) assert.deepEqual(c.schemaViolations, []);
});
