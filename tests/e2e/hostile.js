'use strict';
/*
 * Hostile input: the catalogue of things a network peer may send,
 * each with the exact answer it must get, followed by proof that the scene
 * is unchanged and that the server still answers. Then the transport's
 * defences: the 100 MB message refused without being buffered (RSS
 * measured), 100,000 one-byte fragments, random bytes, oversized headers,
 * path traversal, look-alike Origins, the connection limit (1013), dead
 * peers reaped within the idle timeout, and no data frame after the close
 * frame at shutdown.
 *
 * Default limits except where a test says otherwise, so the numbers are
 * those a user gets (docs/security.md).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const {
  startRigd, get, post, request, tree, Client, RawWs, createScene, sleep, SANITIZED,
} = require('../lib/rigd.js');

let server;

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

/* The scene as the API shows it: seq, and every node's locals and world. */
async function state(name = 'demo') {
  const t = await tree(server, name);
  return JSON.stringify(t);
}

/* The server still answers HTTP and websockets. */
async function stillAnswers() {
  const h = await get(server, '/healthz');
  assert.equal(h.status, 200);
  const c = await Client.connect(server);
  const snap = await c.subscribe('demo');
  assert.equal(snap.type, 'snapshot');
  await c.close();
}

/* Sends each [text, code, field?] on one connection and checks the error. */
async function expectErrors(cases) {
  const before = await state();
  const c = await Client.connect(server);
  for (const [text, code, field] of cases) {
    const from = c.messages.length;
    c.send(text);
    const e = await c.waitFor((m) => m.type === 'error' || m.type === 'ack',
      { from, what: `the answer to ${String(text).slice(0, 60)}` });
    assert.equal(e.type, 'error', `${String(text).slice(0, 100)} was accepted`);
    assert.equal(e.code, code, String(text).slice(0, 100));
    if (field !== undefined) assert.equal(e.field, field, String(text).slice(0, 100));
  }
  assert.deepEqual(c.schemaViolations, []);
  assert.equal(c.closeCode, undefined, 'the connection stays open');
  await c.close();
  assert.equal(await state(), before, 'the scene is unchanged');
  await stillAnswers();
}

const edit = (ops) => JSON.stringify({ type: 'edit', scene: 'demo', req: 1, ops });
const set = (fields) => edit([{ op: 'set', id: 'base', ...fields }]);

test('malformed JSON: truncated, 10,000-deep nesting, NaN, Infinity, NUL', async () => {
  await expectErrors([
    ['{"type":"edit","scene":"demo","ops":[{"op":"set","id":"base","t":[1,', 'bad_json'],
    ['{"type":"subscr', 'bad_json'],
    ['', 'bad_json'],
    [`${'['.repeat(10000)}${']'.repeat(10000)}`, 'bad_json'],
    [`{"type":"edit","scene":"demo","ops":${'['.repeat(10000)}${']'.repeat(10000)}}`, 'bad_json'],
    [`${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}`, 'bad_json'],
    ['{"type":"edit","scene":"demo","ops":[{"op":"set","id":"base","t":[NaN,0,0]}]}', 'bad_json'],
    ['{"type":"edit","scene":"demo","ops":[{"op":"set","id":"base","t":[Infinity,0,0]}]}', 'bad_json'],
    ['{"type":"edit","scene":"demo","ops":[{"op":"set","id":"base","t":[-Infinity,0,0]}]}', 'bad_json'],
    ['{"type":"edit","scene":"demo","ops":[{"op":"create","id":"a\\u0000b"}]}', 'bad_json'],
    ['{"type":"subscribe","scene":"demo"} trailing', 'bad_json'],
    ['{"type":"subscribe","scene":"demo","scene":"demo"}', 'bad_field'],
  ]);
});

test('numbers: 1e400, -1e400, huge and negative indices, bad sibling index', async () => {
  await expectErrors([
    [set({ t: [0, 0, 0] }).replace('[0,0,0]', '[1e400,0,0]'), 'not_finite', 't'],
    [set({ s: [1, 1, 1] }).replace('[1,1,1]', '[1,-1e400,1]'), 'not_finite', 's'],
    [set({ r: [0, 0, 0, 1] }).replace('[0,0,0,1]', '[0,0,0,1e999]'), 'not_finite', 'r'],
    [edit([{ op: 'reparent', id: 'hand', parent: 'base', index: -1 }]), 'bad_field', 'index'],
    [edit([{ op: 'reparent', id: 'hand', parent: 'base', index: 2 ** 53 - 1 }]), 'bad_field', 'index'],
    [edit([{ op: 'reparent', id: 'hand', parent: 'base', index: 1e300 }]), 'bad_field', 'index'],
    [edit([{ op: 'reparent', id: 'hand', parent: 'base', index: 0.5 }]), 'bad_field', 'index'],
    [edit([{ op: 'create', id: 'q', parent: 'base', index: 5 }]), 'bad_index', 'index'],
    [JSON.stringify({ type: 'edit', scene: 'demo', req: 2 ** 60, ops: [{ op: 'delete', id: 'x' }] }), 'bad_field', 'req'],
    [JSON.stringify({ type: 'edit', scene: 'demo', req: -1, ops: [{ op: 'delete', id: 'x' }] }), 'bad_field', 'req'],
    [JSON.stringify({ type: 'edit', scene: 'demo', client_seq: -1, ops: [{ op: 'delete', id: 'x' }] }), 'bad_field', 'client_seq'],
  ]);
});

test('wrong types in every field', async () => {
  const wrong = {
    id: 5, name: 5, t: 'x', r: [0, 0, 0], s: {}, pivot: [0, 0, true], euler: null,
    bounds: [1], mesh: 5, kind: 5, camera: { fov: 'x' }, visible: 1,
  };
  const cases = [];
  for (const [field, value] of Object.entries(wrong)) {
    const op = { op: 'set', id: 'base' };
    op[field] = value;
    cases.push([edit([op]), 'bad_field', field === 'camera' ? 'fov' : field]);
  }
  cases.push([edit([{ op: 'create', id: 'q', parent: 5 }]), 'bad_field', 'parent']);
  cases.push([edit([{ op: 'create', id: 'q', index: '0' }]), 'bad_field', 'index']);
  cases.push([edit([{ op: 'reparent', id: 'hand', parent: 'base', keep_world: 'yes' }]), 'bad_field', 'keep_world']);
  cases.push([edit([{ op: 5, id: 'base' }]), 'bad_field', 'op']);
  cases.push([edit([5]), 'bad_field', 'ops']);
  cases.push([edit({}), 'bad_field', 'ops']);
  cases.push([edit([]), 'bad_field', 'ops']);
  cases.push([JSON.stringify({ type: 5 }), 'bad_field', 'type']);
  cases.push([JSON.stringify({ type: 'edit', scene: 5, ops: [] }), 'bad_field', 'scene']);
  cases.push([JSON.stringify({ type: 'edit', scene: 'demo', req: {}, ops: [] }), 'bad_field', 'req']);
  cases.push([JSON.stringify({ type: 'edit', scene: 'demo', client: 5, ops: [{ op: 'delete', id: 'x' }] }), 'bad_field', 'client']);
  cases.push([JSON.stringify({ type: 'edit', scene: 'demo', client_seq: '1', ops: [{ op: 'delete', id: 'x' }] }), 'bad_field', 'client_seq']);
  cases.push([JSON.stringify({ type: 'presence', scene: 'demo', selection: 'arm' }), 'bad_field', 'selection']);
  cases.push([JSON.stringify({ type: 'presence', scene: 'demo', selection: [5] }), 'bad_field', 'selection']);
  cases.push([JSON.stringify({ type: 'presence', scene: 'demo', selection: [], name: 5 }), 'bad_field', 'name']);
  cases.push([JSON.stringify({ type: 'undo', scene: 'demo', client: [] }), 'bad_field', 'client']);
  cases.push([JSON.stringify({ type: 'subscribe', scene: null }), 'bad_field', 'scene']);
  cases.push(['[1,2]', 'bad_field']);
  cases.push(['"subscribe"', 'bad_field']);
  cases.push(['null', 'bad_field']);
  await expectErrors(cases);
});

test('ids: "/", "..", NUL, 10 KB; ".." is an ordinary node id but no scene name', async () => {
  const big = 'x'.repeat(10240);
  await expectErrors([
    [edit([{ op: 'create', id: 'a/b' }]), 'bad_id', 'id'],
    [edit([{ op: 'create', id: '../etc' }]), 'bad_id', 'id'],
    [edit([{ op: 'create', id: big }]), 'bad_id', 'id'],
    [edit([{ op: 'create', id: 'q', parent: big }]), 'bad_id', 'parent'],
    [edit([{ op: 'create', id: '' }]), 'bad_id', 'id'],
    [edit([{ op: 'create', id: 'é' }]), 'bad_id', 'id'],
    [edit([{ op: 'create', id: 'q', name: big }]), 'bad_field', 'name'],
    [JSON.stringify({ type: 'subscribe', scene: '..' }), 'bad_id', 'scene'],
    [JSON.stringify({ type: 'subscribe', scene: 'a/b' }), 'bad_id', 'scene'],
    [JSON.stringify({ type: 'subscribe', scene: big }), 'bad_id', 'scene'],
    [JSON.stringify({ type: 'presence', scene: 'demo', selection: [big] }), 'bad_id', 'selection'],
  ]);
  /* ".." names a node like any other: it never becomes a path. */
  await createScene(server, 'dots');
  const c = await Client.connect(server);
  const ack = await c.request({ type: 'edit', scene: 'dots', ops: [{ op: 'create', id: '..' }] });
  assert.equal(ack.type, 'ack');
  assert.deepEqual((await tree(server, 'dots')).nodes.map((n) => n.id), ['..']);
  await c.close();
  for (const name of ['..', '%2e%2e', 'a%2Fb']) {
    const r = await post(server, '/api/scenes', { name: decodeURIComponent(name) });
    assert.equal(r.status, 400, name);
    assert.equal(r.json.error.code, 'bad_id');
    const g = await get(server, `/api/scenes/${name}`);
    assert.ok([400, 404].includes(g.status), `${name}: ${g.status}`);
  }
});

test('structure: a reparent under its own descendant, conflicting ops in one batch', async () => {
  await expectErrors([
    [edit([{ op: 'reparent', id: 'base', parent: 'hand' }]), 'cycle', 'parent'],
    [edit([{ op: 'reparent', id: 'arm', parent: 'arm' }]), 'cycle', 'parent'],
    [edit([{ op: 'create', id: 'x1' }, { op: 'create', id: 'x1' }]), 'duplicate_id', 'id'],
    [edit([{ op: 'delete', id: 'arm' }, { op: 'set', id: 'hand', t: [0, 0, 0] }]), 'unknown_node', 'id'],
    [edit([{ op: 'create', id: 'x2' }, { op: 'reparent', id: 'base', parent: 'x2' },
      { op: 'reparent', id: 'x2', parent: 'hand' }]), 'cycle', 'parent'],
    [edit([{ op: 'set', id: 'base', r: [0, 0, 0, 0] }]), 'zero_quaternion', 'r'],
  ]);
  /* The error names the op that failed. */
  const c = await Client.connect(server);
  const e = await c.request({ type: 'edit', scene: 'demo',
    ops: [{ op: 'set', id: 'base', t: [1, 2, 3] }, { op: 'delete', id: 'nobody' }] });
  assert.equal(e.code, 'unknown_node');
  assert.equal(e.op, 1);
  await c.close();
});

test('messages: unknown types, binary frames, a scene that does not exist', async () => {
  const before = await state();
  await expectErrors([
    ['{"type":"dance","scene":"demo"}', 'unknown_type', 'type'],
    ['{"type":"auth2"}', 'unknown_type', 'type'],
    ['{"type":"subscribe","scene":"nowhere"}', 'unknown_scene', 'scene'],
    ['{"type":"edit","scene":"nowhere","ops":[{"op":"create","id":"a"}]}', 'unknown_scene'],
    ['{"type":"unsubscribe","scene":"demo","req":3}', 'not_subscribed', 'scene'],
    ['{"type":"presence","scene":"demo","selection":[]}', 'not_subscribed', 'scene'],
    [Buffer.from([0x7b, 0x7d]), 'bad_json'],
    [Buffer.from([0xff, 0x00, 0x13]), 'bad_json'],
  ]);
  assert.equal((await get(server, '/api/scenes/nowhere')).status, 404);
  assert.equal(await state(), before);
});

test('invalid UTF-8 in a text frame fails the connection with 1007', async () => {
  const before = await state();
  const raw = await RawWs.connect(server);
  raw.sendFrame(0x1, Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]));  /* {"\xc3("} */
  await raw.until(() => raw.closeFrame || raw.socketClosed, 5000, 'the close');
  assert.equal(raw.closeCode, 1007);
  raw.destroy();
  /* An overlong encoding and a lone surrogate are invalid too. */
  for (const bytes of [[0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
    const r = await RawWs.connect(server);
    r.sendFrame(0x1, Buffer.from(bytes));
    await r.until(() => r.closeFrame || r.socketClosed, 5000, 'the close');
    assert.equal(r.closeCode, 1007, bytes.join(','));
    r.destroy();
  }
  assert.equal(await state(), before);
  await stillAnswers();
});

test('a 100 MB message is refused by the size cap (1009) without being buffered', async () => {
  const before = await state();
  const rss0 = server.rssKb();
  const raw = await RawWs.connect(server);
  /* A header announcing 100 MB, then the payload streamed in 1 MiB chunks
   * until the server hangs up. */
  const total = 100 * 1024 * 1024;
  const head = Buffer.alloc(14);
  head[0] = 0x81;
  head[1] = 0x80 | 127;
  head.writeBigUInt64BE(BigInt(total), 2);
  raw.sock.write(head);  /* mask 0: the payload goes as is */
  const chunk = Buffer.alloc(1 << 20, 0x20);
  let sent = 0;
  let peak = rss0;
  while (sent < total && !raw.closeFrame && !raw.socketClosed && !raw.error) {
    if (!raw.sock.write(chunk)) {
      await Promise.race([new Promise((r) => raw.sock.once('drain', r)),
        raw.until(() => raw.closeFrame || raw.socketClosed || raw.error, 10000).catch(() => {})]);
    }
    sent += chunk.length;
    peak = Math.max(peak, server.rssKb());
  }
  await raw.until(() => raw.closeFrame || raw.socketClosed || raw.error, 10000, 'the close');
  raw.destroy();
  peak = Math.max(peak, server.rssKb());
  const grew = peak - rss0;
  console.log(`100 MB message: closed with ${raw.closeCode ?? 'a reset'} after ${(sent / 1048576).toFixed(0)} MiB sent; server RSS ${rss0} kB -> peak ${peak} kB (+${grew} kB)`);
  if (raw.closeFrame) assert.equal(raw.closeCode, 1009);
  assert.ok(sent < total, 'the server hung up before the end');
  assert.ok(grew < (SANITIZED ? 64 : 16) * 1024, `RSS grew by ${grew} kB`);
  const m = await get(server, '/metrics');
  assert.match(m.text, /^rigd_ws_closed_too_big_total [1-9]/m);
  assert.equal(await state(), before);
  await stillAnswers();
});

test('100,000 one-byte fragments: closed with 1009 at the fragment cap', async () => {
  const before = await state();
  const raw = await RawWs.connect(server);
  const mask = Buffer.from([9, 8, 7, 6]);
  const frame = (fin, opcode, byte) => Buffer.from([(fin ? 0x80 : 0) | opcode, 0x81, ...mask, byte ^ mask[0]]);
  const batch = Buffer.concat(Array.from({ length: 250 }, () => frame(false, 0, 0x20)));
  raw.sock.write(frame(false, 1, 0x5b));
  /* In batches, so that the server has read what it was sent when it
   * closes (unread bytes at close would turn the close into a reset). */
  let sent = 0;
  while (sent < 100000 && !raw.closeFrame && !raw.socketClosed) {
    raw.sock.write(batch);
    sent += 250;
    await sleep(1);
  }
  if (sent >= 100000) raw.sock.write(frame(true, 0, 0x5d));
  await raw.until(() => raw.closeFrame || raw.socketClosed, 5000, 'the close');
  console.log(`fragments: closed with ${raw.closeCode} after ${sent} one-byte fragments`);
  assert.equal(raw.closeCode, 1009);
  assert.ok(sent < 100000);
  raw.destroy();
  assert.equal(await state(), before);
  await stillAnswers();
});

test('random bytes: on a fresh socket and after the websocket handshake', async () => {
  const before = await state();
  let seed = 12345;
  const rnd = (n) => Buffer.from(Array.from({ length: n }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed & 255;
  }));
  for (let i = 0; i < 5; i++) {
    const sock = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => sock.once('connect', resolve));
    sock.on('error', () => {});
    sock.write(rnd(1000 + i * 3000));
    await sleep(50);
    sock.destroy();
  }
  for (let i = 0; i < 5; i++) {
    const raw = await RawWs.connect(server);
    raw.sock.on('error', () => {});
    raw.sock.write(rnd(2000 + i * 1000));
    await raw.until(() => raw.closeFrame || raw.socketClosed || raw.error, 3000).catch(() => {});
    raw.destroy();
  }
  assert.equal(await state(), before);
  await stillAnswers();
});

test('HTTP: oversized headers, ../ paths, bad lengths', async () => {
  /* A header bigger than lws's header space: the connection is dropped. */
  await assert.rejects(get(server, '/healthz', { 'x-big': 'a'.repeat(20000) }));
  const many = {};
  for (let i = 0; i < 200; i++) many[`x-h${i}`] = 'v'.repeat(100);
  await assert.rejects(get(server, '/healthz', many));
  for (const p of ['/../etc/passwd', '/../../etc/passwd', '/%2e%2e/etc/passwd', '/app/../../README.md',
    '/vendor/three/build/../../../../../../etc/passwd', '/vendor/three/build/../../../../README.md', '/%2e%2e%2f%2e%2e%2fetc/passwd', '/.git/config',
    '/node_modules/ws/package.json', '/..%5c..%5cetc/passwd', '/app/%00main.js']) {
    const r = await get(server, p);
    assert.equal(r.status, 404, p);
    assert.doesNotMatch(r.text, /root:|"name"/, p);
  }
  const noLen = await new Promise((resolve, reject) => {
    const sock = net.connect(server.port, '127.0.0.1', () => sock.write(
      'POST /api/scenes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'));
    let data = '';
    sock.on('data', (d) => { data += d; });
    sock.on('close', () => resolve(data));
    sock.on('error', reject);
    setTimeout(() => sock.destroy(), 3000);
  });
  assert.match(noLen, /^HTTP\/1\.1 4\d\d/);
  const huge = await post(server, '/api/scenes', 'x', { 'content-length': String(2 ** 40) }).catch(() => null);
  if (huge) assert.equal(huge.status, 413);
  await stillAnswers();
});

test('security headers on every answer; files are revalidated with their ETag', async () => {
  for (const [p, status] of [['/', 200], ['/healthz', 200], ['/api/scenes', 200],
    ['/api/scenes/nowhere', 404], ['/nothing-here', 404], ['/metrics', 200]]) {
    const r = await get(server, p);
    assert.equal(r.status, status, p);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', p);
    assert.equal(r.headers['referrer-policy'], 'no-referrer', p);
    assert.match(r.headers['content-security-policy'], /default-src 'self'/, p);
    assert.doesNotMatch(r.headers['content-security-policy'], /unsafe-inline|unsafe-eval/, p);
  }
  /* The import map, the page's one inline script, is allowed by its hash. */
  const page = await get(server, '/');
  const crypto = require('node:crypto');
  const inline = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page.text)[1];
  const hash = crypto.createHash('sha256').update(inline).digest('base64');
  assert.ok(page.headers['content-security-policy'].includes(`'sha256-${hash}'`));
  /* Validators: the second load of three.js is a 304 without a body. */
  const three = '/vendor/three/build/three.module.js';
  const first = await get(server, three);
  assert.equal(first.status, 200);
  assert.match(first.headers['cache-control'], /max-age=\d{6,}/);
  assert.ok(first.headers.etag);
  const again = await get(server, three, { 'if-none-match': first.headers.etag });
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  const other = await get(server, three, { 'if-none-match': '"nope"' });
  assert.equal(other.status, 200);
  const app = await get(server, '/app/main.js');
  assert.equal(app.headers['cache-control'], 'no-cache');
  assert.equal((await get(server, '/app/main.js', { 'if-none-match': app.headers.etag })).status, 304);
  assert.equal((await get(server, '/api/scenes')).headers['cache-control'], 'no-store');
});

test('Origin: exact match only; a look-alike is refused', async () => {
  const own = server.url;
  for (const origin of [`${own}.evil.example`, `${own}@evil.example`, `${own}/`,
    own.replace('http:', 'https:'), 'null', `http://127.0.0.1:${server.port + 1}`,
    own.toUpperCase()]) {
    await assert.rejects(Client.connect(server, { origin }), origin);
    const r = await post(server, '/api/scenes', { name: 'csrf' }, { origin });
    assert.equal(r.status, 403, origin);
    assert.equal(r.json.error.code, 'forbidden');
  }
  assert.equal((await get(server, '/api/scenes/csrf')).status, 404);
  const ok = await Client.connect(server, { origin: own });
  await ok.close();
});

test('the connection limit: one more websocket is closed with 1013', async () => {
  const s = await startRigd({ args: ['--max-clients', '3'] });
  const clients = [];
  for (let i = 0; i < 3; i++) clients.push(await Client.connect(s));
  const extra = await Client.connect(s);
  assert.equal((await extra.closed).code, 1013);
  /* The others are served, and a place freed is taken again. */
  const snap = await clients[0].subscribe('demo');
  assert.equal(snap.type, 'snapshot');
  await clients[2].close();
  await sleep(100);
  const again = await Client.connect(s);
  assert.equal((await again.subscribe('demo')).type, 'snapshot');
  for (const c of [clients[0], clients[1], again]) await c.close();
  assert.equal(await s.stop(), 0);
});

test('a dead peer (never reads, never answers pings) is reaped within the idle timeout', async () => {
  const s = await startRigd({ args: ['--idle-timeout', '2'] });
  const metric = async (name) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec((await get(s, '/metrics')).text)[1]);
  const live = await Client.connect(s);  /* answers pings: stays */
  await live.subscribe('demo');
  const dead = await RawWs.connect(s, { noRead: true });
  dead.noPong = true;
  dead.sendText({ type: 'subscribe', scene: 'demo' });
  assert.equal(await metric('rigd_clients'), 2);
  const t0 = Date.now();
  while (await metric('rigd_clients') > 1) {
    assert.ok(Date.now() - t0 < 8000, 'the dead peer is still counted after 8 s');
    await sleep(200);
  }
  const took = Date.now() - t0;
  console.log(`dead peer reaped after ${took} ms (idle timeout 2 s)`);
  assert.ok(took <= 4500, `reaped after ${took} ms`);
  dead.destroy();
  assert.equal(live.closeCode, undefined, 'the live client stays');
  const ack = await live.request({ type: 'edit', scene: 'demo', ops: [{ op: 'set', id: 'base', t: [0, 0.2, 0] }] });
  assert.equal(ack.type, 'ack');
  await live.close();
  assert.equal(await s.stop(), 0);
});

test('shutdown: no data frame follows the close frame (three participants, SIGTERM)', async () => {
  for (let round = 0; round < 3; round++) {
    const s = await startRigd();
    const peers = [];
    for (let i = 0; i < 3; i++) {
      const raw = await RawWs.connect(s);
      raw.sendText({ type: 'subscribe', scene: 'demo' });
      raw.sendText({ type: 'presence', scene: 'demo', selection: ['arm'], name: `p${i}` });
      peers.push(raw);
    }
    /* Everyone has heard everyone join. */
    for (const p of peers) {
      await p.until(() => p.messages().filter((m) => m.type === 'join').length >= 2, 5000, 'the joins');
    }
    assert.equal(await s.stop('SIGTERM'), 0);
    for (const p of peers) {
      await p.until(() => p.socketClosed, 5000, 'the end of the connection');
      assert.equal(p.closeCode, 1001);
      assert.equal(p.dataAfterClose, 0, 'a data frame after the close frame');
      p.destroy();
    }
  }
});
