'use strict';
/*
 * The HTTP API and the websocket protocol against the real rigd: every route,
 * every message type, the demo rig's numbers, errors that leave everything
 * unchanged, the limits, and a clean shutdown. Everything the server sends
 * is validated against schema/protocol.schema.json.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const {
  startRigd, get, post, request, tree, postEdit, worldsOf, Client, assertSchema, createScene,
  sleep, run, tempDir,
} = require('../lib/rigd.js');

let server;

test.before(async () => {
  server = await startRigd({ args: ['--max-message', '65536', '--max-fragments', '64',
    '--idle-timeout', '30'] });
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

const close3 = (a, b) => a.every((x, i) => Math.abs(x - b[i]) < 5e-4);

test('the demo rig is created on first start with the numbers of docs/transforms.md', async () => {
  const t = await tree(server, 'demo');
  assert.equal(t.scene, 'demo');
  assert.equal(t.seq, 1);
  assert.deepEqual(t.nodes.map((n) => [n.id, n.parent]), [['base', null], ['arm', 'base'],
    ['hand', 'arm']]);
  const w = worldsOf(t.nodes);
  assert.ok(close3(w.hand.slice(12, 15), [-0.779, 1.472, 0.450]), `hand at ${w.hand.slice(12, 15)}`);
  assert.ok(close3(w.arm.slice(12, 15), [-0.390, 0.936, 0.225]), `arm at ${w.arm.slice(12, 15)}`);
  assert.ok(close3(w.base.slice(12, 15), [0, 0.2, 0]));
  const base = t.nodes[0];
  assert.deepEqual(base.bounds, { min: [-0.35, -0.2, -0.35], max: [0.35, 0.2, 0.35] });
  assert.ok(close3(t.nodes[1].pivot, [0, -0.7, 0]));
});

test('healthz and metrics', async () => {
  const h = await get(server, '/healthz');
  assert.equal(h.status, 200);
  assertSchema('HttpHealth', h.json);
  const m = await get(server, '/metrics');
  assert.equal(m.status, 200);
  assert.match(m.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  for (const name of ['rigd_clients', 'rigd_batches_total', 'rigd_ops_total',
    'rigd_recomputed_matrices_total', 'rigd_commit_seconds_bucket{le="+Inf"}',
    'rigd_commit_seconds_count', 'rigd_bytes_sent_total', 'rigd_updates_coalesced_total',
    'rigd_clients_dropped_total']) {
    assert.match(m.text, new RegExp(`^${name.replace(/[{}"+]/g, '\\$&')} [0-9.e+-]+$`, 'm'), name);
  }
  /* Every line is a comment or "name{labels} value". */
  for (const line of m.text.trim().split('\n')) {
    assert.match(line, /^(# (HELP|TYPE) .+|[a-z_]+(\{[^}]*\})? [0-9.e+-]+)$/, line);
  }
});

test('scenes: create, list, conflict, delete', async () => {
  await createScene(server, 'scratch');
  const again = await post(server, '/api/scenes', { name: 'scratch' });
  assert.equal(again.status, 409);
  assertSchema('HttpError', again.json);
  assert.equal(again.json.error.code, 'scene_exists');

  const bad = await post(server, '/api/scenes', { name: 'no/slash' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, 'bad_id');
  const junk = await post(server, '/api/scenes', '{"name":');
  assert.equal(junk.status, 400);
  assert.equal(junk.json.error.code, 'bad_json');
  const extra = await post(server, '/api/scenes', { name: 'x', more: 1 });
  assert.equal(extra.json.error.code, 'bad_field');

  const list = await get(server, '/api/scenes');
  assertSchema('HttpSceneList', list.json);
  assert.deepEqual(list.json.scenes.map((s) => s.name).sort(), ['demo', 'scratch']);

  const empty = await tree(server, 'scratch');
  assert.deepEqual(empty.nodes, []);
  assert.equal(empty.seq, 0);

  const del = await request(server, 'DELETE', '/api/scenes/scratch');
  assert.equal(del.status, 200);
  assertSchema('HttpSceneDeleted', del.json);
  const gone = await get(server, '/api/scenes/scratch');
  assert.equal(gone.status, 404);
  assert.equal(gone.json.error.code, 'unknown_scene');
  const del2 = await request(server, 'DELETE', '/api/scenes/scratch');
  assert.equal(del2.status, 404);
  assert.equal(del2.json.error.code, 'unknown_scene');

  const put = await request(server, 'PUT', '/api/scenes', '{}');
  assert.equal(put.status, 405);
  assert.equal(put.json.error.code, 'bad_method');
  const nowhere = await get(server, '/api/nothing');
  assert.equal(nowhere.status, 404);
  assert.equal(nowhere.json.error.code, 'not_found');
});

test('HTTP edits answer after the commit; bad batches change nothing', async () => {
  await createScene(server, 'http');
  let r = await postEdit(server, 'http', { ops: [
    { op: 'create', id: 'a', t: [1, 0, 0] },
    { op: 'create', id: 'b', parent: 'a', t: [0, 1, 0] }] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { seq: 1, recomputed: 2 });

  const before = await tree(server, 'http');
  const cases = [
    [{ ops: [{ op: 'set', id: 'nope', t: [0, 0, 0] }] }, 'unknown_node', 0],
    [{ ops: [{ op: 'set', id: 'a', t: [1, 2, 3] }, { op: 'set', id: 'b', r: [0, 0, 0, 0] }] },
      'zero_quaternion', 1],
    [{ ops: [{ op: 'reparent', id: 'a', parent: 'b' }] }, 'cycle', 0],
    [{ ops: [{ op: 'create', id: 'a' }] }, 'duplicate_id', 0],
    [{ ops: [{ op: 'spin', id: 'a' }] }, 'unknown_op', 0],
    [{ ops: [{ op: 'set', id: 'a', t: [1, 2] }] }, 'bad_field', 0],
    ['{"ops":[{"op":"set","id":"a","t":[1,2,1e400]}]}', 'not_finite', 0],
    [{ ops: [{ op: 'create', id: 'x/y' }] }, 'bad_id', 0],
  ];
  for (const [batch, code, op] of cases) {
    r = await postEdit(server, 'http', batch);
    assert.equal(r.status, 400, JSON.stringify(batch));
    assert.equal(r.json.error.code, code, JSON.stringify(batch));
    assert.equal(r.json.error.op, op, JSON.stringify(batch));
  }
  r = await post(server, '/api/scenes/http/edits', '{"ops":[');
  assert.equal(r.json.error.code, 'bad_json');
  r = await post(server, '/api/scenes/nowhere/edits', { ops: [{ op: 'delete', id: 'a' }] });
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'unknown_scene');
  r = await get(server, '/api/scenes/http/edits');
  assert.equal(r.status, 405);
  const after = await tree(server, 'http');
  assert.deepEqual(after, before);
});

test('time travel with ?at= and the log, exported and imported', async () => {
  await createScene(server, 'tt');
  for (let i = 1; i <= 5; i++) {
    const r = await postEdit(server, 'tt', { ops: i === 1 ? [{ op: 'create', id: 'n', t: [0, 0, 0] }]
      : [{ op: 'set', id: 'n', t: [i, 0, 0] }] });
    assert.equal(r.json.seq, i);
  }
  const at3 = await tree(server, 'tt', 3);
  assert.equal(at3.seq, 3);
  assert.equal(at3.nodes[0].world[12], 3);
  const at0 = await tree(server, 'tt', 0);
  assert.deepEqual(at0.nodes, []);
  let r = await get(server, '/api/scenes/tt?at=9');
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'bad_seq');
  r = await get(server, '/api/scenes/tt?at=-1');
  assert.equal(r.json.error.code, 'bad_seq');
  r = await get(server, '/api/scenes/tt?at=x');
  assert.equal(r.json.error.code, 'bad_seq');

  const log = await get(server, '/api/scenes/tt/log');
  assert.equal(log.status, 200);
  assert.match(log.headers['content-type'], /ndjson/);
  const lines = log.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 5);
  lines.forEach((l, i) => { assertSchema('LogLine', l); assert.equal(l.seq, i + 1); });
  const part = await get(server, '/api/scenes/tt/log?from=2&to=3');
  assert.deepEqual(part.text.trim().split('\n').map((l) => JSON.parse(l).seq), [2, 3]);

  await createScene(server, 'tt2');
  r = await post(server, '/api/scenes/tt2/log', log.text);
  assert.equal(r.status, 200);
  assertSchema('HttpImported', r.json);
  assert.deepEqual(r.json, { scene: 'tt2', batches: 5, seq: 5 });
  assert.deepEqual(worldsOf((await tree(server, 'tt2')).nodes),
    worldsOf((await tree(server, 'tt')).nodes));
  r = await post(server, '/api/scenes/tt2/log', log.text);
  assert.equal(r.status, 409);
  assert.equal(r.json.error.code, 'scene_not_empty');
  await createScene(server, 'tt3');
  r = await post(server, '/api/scenes/tt3/log',
    `${log.text}{"seq":9,"time":0,"ops":[{"op":"delete","id":"n"}]}\n`);
  assert.equal(r.json.error.code, 'bad_seq');
  assert.deepEqual((await tree(server, 'tt3')).nodes, []);
});

test('static files, content types and no path traversal', async () => {
  let r = await get(server, '/vendor/three/build/three.module.js');
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'], /^text\/javascript/);
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  r = await get(server, '/vendor/three/examples/jsm/controls/OrbitControls.js');
  assert.equal(r.status, 200);
  r = await get(server, '/vendor/dompurify/purify.es.mjs');
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'], /^text\/javascript/);
  for (const target of ['/../CMakeLists.txt', '/%2e%2e/CMakeLists.txt', '/node_modules/ws/package.json',
    '/vendor/three/package.json', '/vendor/three/build/../../ws/index.js',
    '/vendor/dompurify/../package.json', '/vendor/dompurify/%2e%2e/package.json',
    '/.gitignore', '/..%2f..%2fetc%2fpasswd', '//etc/passwd']) {
    r = await get(server, target);
    assert.notEqual(r.status, 200, target);
    assert.ok(r.status >= 400 && r.status < 500, `${target}: ${r.status}`);
  }
});

test('websocket: subscribe, edit, update, ack, undo, redo', async () => {
  await createScene(server, 'ws1');
  const a = await Client.connect(server);
  const b = await Client.connect(server);
  const snapA = await a.subscribe('ws1');
  assert.equal(snapA.type, 'snapshot');
  assert.deepEqual(snapA.nodes, []);
  await b.subscribe('ws1');

  let ack = await a.request({ type: 'edit', scene: 'ws1', ops: [
    { op: 'create', id: 'p', t: [1, 0, 0] }, { op: 'create', id: 'q', parent: 'p', t: [0, 2, 0] }] });
  assert.equal(ack.type, 'ack');
  assert.equal(ack.seq, 1);
  assert.equal(ack.recomputed, 2);
  await b.waitSeq('ws1', 1);
  assert.deepEqual(b.worlds('ws1'), worldsOf((await tree(server, 'ws1')).nodes));
  const upd = b.messages.find((m) => m.type === 'update');
  assert.deepEqual(upd.nodes.map((n) => n.id), ['p', 'q']);
  assert.deepEqual(Object.keys(upd.world).sort(), ['p', 'q']);

  const from = b.messages.length;
  ack = await a.request({ type: 'edit', scene: 'ws1', ops: [{ op: 'set', id: 'p', t: [5, 0, 0] }] });
  assert.equal(ack.seq, 2);
  const u2 = await b.waitFor((m) => m.type === 'update' && m.seq === 2, { from });
  assert.equal(u2.world.p[12], 5);
  assert.equal(u2.world.q[12], 5);

  ack = await a.request({ type: 'undo', scene: 'ws1' });
  assert.equal(ack.type, 'ack');
  assert.equal(ack.seq, 3);
  await b.waitSeq('ws1', 3);
  assert.equal(b.worlds('ws1').p[12], 1);
  ack = await a.request({ type: 'redo', scene: 'ws1' });
  assert.equal(ack.seq, 4);
  await b.waitSeq('ws1', 4);
  assert.equal(b.worlds('ws1').p[12], 5);
  /* b has made no edit of its own to undo. */
  const e = await b.request({ type: 'undo', scene: 'ws1' });
  assert.equal(e.type, 'error');
  assert.equal(e.code, 'nothing_to_undo');

  /* Structural change: delete q, every client drops it. */
  ack = await a.request({ type: 'edit', scene: 'ws1', ops: [{ op: 'delete', id: 'q' }] });
  await b.waitSeq('ws1', ack.seq);
  assert.deepEqual(Object.keys(b.worlds('ws1')), ['p']);
  assert.deepEqual(a.schemaViolations, []);
  assert.deepEqual(b.schemaViolations, []);
  await a.close();
  await b.close();
});

test('websocket: a resent (client, client_seq) is acknowledged once', async () => {
  await createScene(server, 'dedupe');
  const c = await Client.connect(server);
  const batch = { type: 'edit', scene: 'dedupe', client: 'script-1', client_seq: 7,
    ops: [{ op: 'create', id: 'only' }] };
  const first = await c.request(batch);
  const again = await c.request(batch);
  assert.equal(first.type, 'ack');
  assert.equal(again.type, 'ack');
  assert.equal(again.seq, first.seq);
  const log = await get(server, '/api/scenes/dedupe/log');
  assert.equal(log.text.trim().split('\n').length, 1);
  await c.close();
});

test('websocket: malformed messages get errors and the connection stays usable', async () => {
  const c = await Client.connect(server);
  const cases = [
    ['{"type":', 'bad_json'],
    ['[1,2]', 'bad_field'],
    ['{"type":"dance","scene":"demo","req":5}', 'unknown_type'],
    ['{"scene":"demo"}', 'bad_field'],
    ['{"type":"subscribe"}', 'bad_field'],
    ['{"type":"subscribe","scene":"../x"}', 'bad_id'],
    ['{"type":"edit","scene":"demo","ops":[{"op":"set","id":"base","t":[0,0,"x"]}]}', 'bad_field'],
    ['{"type":"edit","scene":"demo","ops":[{"op":"set","id":"base","r":[0,0,0,0]}]}', 'zero_quaternion'],
    ['{"type":"edit","scene":"nowhere","ops":[{"op":"delete","id":"a"}]}', 'unknown_scene'],
    ['{"type":"presence","scene":"demo","selection":[]}', 'not_subscribed'],
    [`{"type":"edit","scene":"demo","ops":[${'['.repeat(5000)}${']'.repeat(5000)}]}`, 'bad_json'],
  ];
  for (const [text, code] of cases) {
    const from = c.messages.length;
    c.send(text);
    const e = await c.waitFor((m) => m.type === 'error', { from, what: text.slice(0, 60) });
    assert.equal(e.code, code, text.slice(0, 80));
  }
  const reqd = await c.request({ type: 'subscribe', scene: 'nowhere' });
  assert.equal(reqd.type, 'error');
  assert.equal(reqd.code, 'unknown_scene');
  assert.equal(typeof reqd.req, 'number');

  const from = c.messages.length;
  c.send(Buffer.from([1, 2, 3]));
  const bin = await c.waitFor((m) => m.type === 'error', { from });
  assert.equal(bin.code, 'bad_json');

  /* Still usable, and nothing changed. */
  const snap = await c.subscribe('demo');
  assert.equal(snap.seq, (await tree(server, 'demo')).seq);
  assert.deepEqual(c.schemaViolations, []);
  await c.close();
});

test('websocket: replies come in request order', async () => {
  await createScene(server, 'order');
  const c = await Client.connect(server);
  const reqs = [];
  for (let i = 0; i < 40; i++) {
    const req = 1000 + i;
    reqs.push(req);
    c.send(i % 3 === 2 ? { type: 'edit', scene: 'order', req, ops: [{ op: 'set', id: 'none' }] }
      : { type: 'edit', scene: 'order', req, ops: [{ op: 'create', id: `n${i}` }] });
  }
  await c.waitFor(() => c.messages.filter((m) => m.req >= 1000).length === 40);
  const got = c.messages.filter((m) => m.req >= 1000);
  assert.deepEqual(got.map((m) => m.req), reqs);
  got.forEach((m, i) => assert.equal(m.type, i % 3 === 2 ? 'error' : 'ack'));
  await c.close();
});

test('websocket: presence relay, join and leave', async () => {
  const a = await Client.connect(server);
  const b = await Client.connect(server);
  const w = await Client.connect(server);
  await a.subscribe('demo');
  await w.subscribe('demo');
  /* a takes part: its first presence is a join, then the presence. */
  a.send({ type: 'presence', scene: 'demo', selection: ['arm'], name: 'Ada' });
  const joinA = await w.waitFor((m) => m.type === 'join');
  assert.equal(joinA.name, 'Ada');
  const presA = await w.waitFor((m) => m.type === 'presence');
  assert.deepEqual(presA.selection, ['arm']);
  assert.equal(presA.client, joinA.client);
  /* A newcomer hears who takes part after its snapshot. */
  const fromB = b.messages.length;
  await b.subscribe('demo');
  const seen = await b.waitFor((m) => m.type === 'presence', { from: fromB });
  const snapIndex = b.messages.findIndex((m, i) => i >= fromB && m.type === 'snapshot');
  const joinIndex = b.messages.findIndex((m, i) => i >= fromB && m.type === 'join');
  assert.ok(snapIndex < joinIndex && joinIndex < b.messages.indexOf(seen));
  assert.equal(seen.client, joinA.client);
  assert.deepEqual(seen.selection, ['arm']);

  /* b takes part too; a and w hear it; the sender hears nothing of its own. */
  const fromA = a.messages.length;
  b.send({ type: 'presence', scene: 'demo', selection: ['hand', 'base'] });
  const joinB = await a.waitFor((m) => m.type === 'join', { from: fromA });
  assert.equal(joinB.name, null);
  const presB = await a.waitFor((m) => m.type === 'presence', { from: fromA });
  assert.deepEqual(presB.selection, ['hand', 'base']);
  assert.equal(b.messages.filter((m) => m.type === 'presence' && m.client === joinB.client).length, 0);
  /* A watcher is never announced. */
  assert.equal(a.messages.filter((m) => m.type === 'join').length, 1);

  const fromA2 = a.messages.length;
  await b.close();
  const leave = await a.waitFor((m) => m.type === 'leave', { from: fromA2 });
  assert.equal(leave.client, joinB.client);
  const fromA3 = a.messages.length;
  await w.close();
  /* Presence is relayed, never stored: the scene is unchanged. */
  assert.equal((await tree(server, 'demo')).nodes.length, 3);
  assert.equal(a.messages.slice(fromA3).filter((m) => m.type === 'leave').length, 0);
  for (const c of [a, b, w]) assert.deepEqual(c.schemaViolations, []);
  await a.close();
});

test('websocket: deleting a scene tells its subscribers', async () => {
  await createScene(server, 'doomed');
  const c = await Client.connect(server);
  await c.subscribe('doomed');
  const from = c.messages.length;
  const del = await request(server, 'DELETE', '/api/scenes/doomed');
  assert.equal(del.status, 200);
  const e = await c.waitFor((m) => m.type === 'error', { from });
  assert.equal(e.code, 'unknown_scene');
  await c.close();
});

test('websocket limits: size, fragments, Origin, path', async () => {
  let c = await Client.connect(server);
  c.send('x'.repeat(65537));
  assert.equal((await c.closed).code, 1009);

  /* 100 one-byte fragments: more than --max-fragments 64. */
  c = await Client.connect(server);
  const sock = c.ws._socket;
  const frame = (fin, opcode, payload) => {
    const mask = Buffer.from([1, 2, 3, 4]);
    const body = Buffer.from(payload).map((x, i) => x ^ mask[i % 4]);
    return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | body.length]), mask, body]);
  };
  const parts = [frame(false, 1, '{')];
  for (let i = 0; i < 100; i++) parts.push(frame(false, 0, ' '));
  parts.push(frame(true, 0, '}'));
  sock.write(Buffer.concat(parts));
  assert.equal((await c.closed).code, 1009);

  await assert.rejects(Client.connect(server, { origin: 'http://evil.example' }));
  await assert.rejects(Client.connect(server, { origin: `${server.url}.evil.example` }));
  await assert.rejects(Client.connect(server, { url: `ws://127.0.0.1:${server.port}/other` }));
  c = await Client.connect(server, { origin: server.url });
  await c.close();
  c = await Client.connect(server, { origin: `http://localhost:${server.port}` });
  await c.close();

  const evil = await post(server, '/api/scenes', { name: 'csrf' }, { origin: 'http://evil.example' });
  assert.equal(evil.status, 403);
  assert.equal(evil.json.error.code, 'forbidden');
  assert.equal((await get(server, '/api/scenes/csrf')).status, 404);
});

test('a raw TCP peer sending garbage does not disturb others', async () => {
  const sock = net.connect(server.port, '127.0.0.1');
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.write(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) & 255)));
  await sleep(100);
  sock.destroy();
  const h = await get(server, '/healthz');
  assert.equal(h.status, 200);
});

test('SIGTERM commits what is pending, closes websockets with 1001, exits 0', async () => {
  const s = await startRigd();
  const c = await Client.connect(s);
  await c.subscribe('demo');
  c.send({ type: 'edit', scene: 'demo', req: 1, ops: [{ op: 'set', id: 'base', euler: [0, 45, 0] }] });
  await c.waitFor((m) => m.type === 'ack');
  const code = await s.stop('SIGTERM');
  assert.equal(code, 0);
  assert.equal((await c.closed).code, 1001);
  /* The edit is there after a restart, and the demo is not seeded twice. */
  const again = await startRigd({ db: s.db, dir: s.dir });
  const t = await tree(again, 'demo');
  assert.equal(t.seq, 2);
  assert.equal(t.nodes.length, 3);
  assert.equal(await again.stop('SIGINT'), 0);
});

test('flags: --help, bad arguments, an address in use, a database in use', async () => {
  let r = await run('rigd', ['--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--listen', '--db', '--web', '--origin', '--max-message', '--max-body',
    '--idle-timeout', '--log-level', '--reply-queue']) {
    assert.ok(r.stdout.includes(flag), flag);
  }
  for (const args of [['--bogus'], ['--listen', 'nowhere'], ['--listen', '127.0.0.1:70000'],
    ['--max-message', '12x'], ['--log-level', 'loud'], ['--sync', 'sometimes'], ['--db']]) {
    r = await run('rigd', args);
    assert.equal(r.code, 2, args.join(' '));
  }
  const dir = tempDir();
  r = await run('rigd', ['--listen', `127.0.0.1:${server.port}`, '--db', path.join(dir, 'x.db')]);
  assert.equal(r.code, 1, 'the port is taken');
  r = await run('rigd', ['--listen', '127.0.0.1:0', '--db', server.db]);
  assert.equal(r.code, 1, 'the database is held by the running server');
  assert.match(r.stderr, /locked/);
});
