'use strict';
/*
 * rigctl driven as a script would drive it: NDJSON in, JSON lines out, exit
 * status telling whether everything succeeded. Every line it prints is
 * validated against schema/protocol.schema.json.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const {
  startRigd, tree, worldsOf, assertSchema, createScene, run, post, BUILD_DIR, SOURCE_DIR, tempDir,
} = require('../lib/rigd.js');

let server;
let url;
const rigctl = (args, opts) => run('rigctl', ['--url', url, ...args], opts);
const lines = (text) => text.split('\n').filter((l) => l.length).map((l) => JSON.parse(l));

test.before(async () => {
  server = await startRigd();
  url = server.url;
});
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

test('send: one answer per batch, in input order; exit 1 when one failed', async () => {
  let r = await rigctl(['create', 'cli']);
  assert.equal(r.code, 0);
  assertSchema('HttpSceneCreated', JSON.parse(r.stdout));
  const input = [
    '{"ops":[{"op":"create","id":"a","t":[1,0,0]}]}',
    '{"ops":[{"op":"create","id":"b","parent":"a"}]}',
    '',
    '{"ops":[{"op":"spin","id":"a"}]}',
    'not json',
    '{"ops":[{"op":"set","id":"ghost","t":[0,0,0]}]}',
    '{"ops":[{"op":"set","id":"b","t":[0,2,0]}],"client":"script","client_seq":1}',
    '{"ops":[{"op":"set","id":"b","t":[0,2,0]}],"client":"script","client_seq":1}',
  ].join('\n');  /* no newline after the last line */
  r = await rigctl(['send', 'cli', '-'], { input });
  assert.equal(r.code, 1, r.stderr);
  const out = lines(r.stdout);
  out.forEach((m) => assertSchema('ServerMessage', m));
  assert.deepEqual(out.map((m) => [m.req, m.type, m.code]), [
    [1, 'ack', undefined], [2, 'ack', undefined], [4, 'error', 'unknown_op'],
    [5, 'error', 'bad_json'], [6, 'error', 'unknown_node'], [7, 'ack', undefined],
    [8, 'ack', undefined]]);
  assert.equal(out[5].seq, out[6].seq, 'a resend is acknowledged with its first seq');

  r = await rigctl(['send', 'cli'], { input: '{"ops":[{"op":"set","id":"a","t":[3,0,0]}]}\n' });
  assert.equal(r.code, 0);
  assert.equal(lines(r.stdout)[0].seq, 4);

  r = await rigctl(['send', 'nowhere'], { input: '{"ops":[{"op":"create","id":"a"}]}\n' });
  assert.equal(r.code, 1);
  assert.equal(lines(r.stdout)[0].code, 'unknown_scene');
});

test('send: thousands of batches from a file, pipelined', async () => {
  await createScene(server, 'bulk');
  const dir = tempDir();
  const file = path.join(dir, 'batches.ndjson');
  const batches = [JSON.stringify({ ops: [{ op: 'create', id: 'n' }] })];
  for (let i = 0; i < 2000; i++) batches.push(JSON.stringify({ ops: [{ op: 'set', id: 'n', t: [i, 0, 0] }] }));
  fs.writeFileSync(file, `${batches.join('\n')}\n`);
  const r = await rigctl(['send', 'bulk', file]);
  assert.equal(r.code, 0, r.stderr);
  const out = lines(r.stdout);
  assert.equal(out.length, 2001);
  out.forEach((m, i) => { assert.equal(m.req, i + 1); assert.equal(m.seq, i + 1); });
  assert.equal((await tree(server, 'bulk')).nodes[0].t[0], 1999);
});

test('get, get --at, log, scenes, delete', async () => {
  let r = await rigctl(['get', 'demo']);
  assert.equal(r.code, 0);
  const t = JSON.parse(r.stdout);
  assertSchema('HttpTree', t);
  assert.deepEqual(t, await tree(server, 'demo'));
  r = await rigctl(['get', 'cli', '--at', '1']);
  assert.equal(JSON.parse(r.stdout).nodes.length, 1);
  r = await rigctl(['get', 'cli', '--at', '99']);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).error.code, 'bad_seq');
  r = await rigctl(['log', 'cli']);
  assert.equal(r.code, 0);
  const log = lines(r.stdout);
  log.forEach((l) => assertSchema('LogLine', l));
  assert.deepEqual(log.map((l) => l.seq), [1, 2, 3, 4]);
  r = await rigctl(['log', 'cli', '--from', '2', '--to', '3']);
  assert.deepEqual(lines(r.stdout).map((l) => l.seq), [2, 3]);
  r = await rigctl(['scenes']);
  assertSchema('HttpSceneList', JSON.parse(r.stdout));
  r = await rigctl(['create', 'gone']);
  r = await rigctl(['delete', 'gone']);
  assert.equal(r.code, 0);
  assertSchema('HttpSceneDeleted', JSON.parse(r.stdout));
  r = await rigctl(['delete', 'gone']);
  assert.equal(r.code, 1);
  assert.equal(JSON.parse(r.stdout).error.code, 'unknown_scene');
});

test('watch prints the snapshot and then every update', async () => {
  const p = spawn(path.join(BUILD_DIR, 'rigctl'), ['--url', url, 'watch', 'demo', '--count', '3']);
  let stdout = '';
  p.stdout.on('data', (d) => { stdout += d; });
  const exit = new Promise((resolve) => p.on('exit', resolve));
  while (!stdout.includes('"snapshot"')) await new Promise((r) => setTimeout(r, 10));
  for (const yaw of [60, 90]) {
    const r = await post(server, '/api/scenes/demo/edits', { ops: [{ op: 'set', id: 'base', euler: [0, yaw, 0] }] });
    assert.equal(r.status, 200);
  }
  assert.equal(await exit, 0);
  const out = lines(stdout);
  out.forEach((m) => assertSchema('ServerMessage', m));
  assert.deepEqual(out.map((m) => m.type), ['snapshot', 'update', 'update']);
  const hand = out[2].world.hand;
  assert.ok(Math.abs(hand[12]) < 1e-9 && Math.abs(hand[14] - 0.9) < 5e-4, `hand at ${hand.slice(12, 15)}`);

  const r = await rigctl(['watch', 'nowhere']);
  assert.equal(r.code, 1);
  assert.equal(lines(r.stdout)[0].code, 'unknown_scene');
});

test('replay keeps the recorded timing, or goes as fast as it can', async () => {
  /* A log with batches 0, 0.4 and 0.8 s apart, imported into a scene. */
  const t0 = 1_700_000_000_000_000;
  const src = [0, 400000, 800000].map((dt, i) => JSON.stringify({ seq: i + 1, time: t0 + dt,
    client: 'rec', client_seq: i + 1,
    ops: [i === 0 ? { op: 'create', id: 'p', t: [0, 0, 0] } : { op: 'set', id: 'p', t: [i, 0, 0] }] }));
  const dir = tempDir();
  const file = path.join(dir, 'rec.ndjson');
  fs.writeFileSync(file, `${src.join('\n')}\n`);

  await createScene(server, 'timed');
  let start = Date.now();
  let r = await rigctl(['replay', 'timed', file, '--speed', '1']);
  const took = Date.now() - start;
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout).map((m) => m.type), ['ack', 'ack', 'ack']);
  assert.ok(took >= 780, `--speed 1 took ${took} ms for 0.8 s of log`);

  await createScene(server, 'fast');
  start = Date.now();
  r = await rigctl(['replay', 'fast', file, '--speed', 'max']);
  assert.equal(r.code, 0);
  assert.ok(Date.now() - start < took, 'max is faster than the recorded timing');
  assert.deepEqual(worldsOf((await tree(server, 'fast')).nodes), worldsOf((await tree(server, 'timed')).nodes));

  /* Replaying again is idempotent: the log's (client, client_seq) dedupe. */
  r = await rigctl(['replay', 'fast', file, '--speed', 'max']);
  assert.equal(r.code, 0);
  assert.deepEqual(lines(r.stdout).map((m) => m.seq), [1, 2, 3]);
  assert.equal((await tree(server, 'fast')).seq, 3);

  /* A script pipes one scene's log into another. */
  await createScene(server, 'copy');
  execFileSync('sh', ['-c', `"${BUILD_DIR}/rigctl" --url ${url} log bulk | "${BUILD_DIR}/rigctl" --url ${url} replay copy - --speed max > /dev/null`]);
  assert.deepEqual(worldsOf((await tree(server, 'copy')).nodes), worldsOf((await tree(server, 'bulk')).nodes));

  /* On a terminal, a progress bar goes to stderr. */
  await createScene(server, 'tty');
  const out = execFileSync('script', ['-qec', `"${BUILD_DIR}/rigctl" --url ${url} replay tty ${file} --speed max`, '/dev/null']).toString();
  assert.match(out, /\[#{40}\] 3\/3 batches/);
});

test('bad arguments exit 2 with the usage', async () => {
  for (const args of [[], ['send'], ['get', 'a/b'], ['replay', 'x'], ['get', 'demo', '--at', 'x'],
    ['replay', 'demo', 'f', '--speed', '0']]) {
    const r = await rigctl(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /usage: rigctl/);
  }
  const r = await run('rigctl', ['--url', 'http://127.0.0.1:1', 'get', 'demo']);
  assert.equal(r.code, 1);
});

/* An unknown argument is one line naming it and pointing at --help, exit 2;
 * --version prints the project's version and the commit built, exit 0. */
test('--version, and unknown arguments in one line', async () => {
  const version = require('node:fs').readFileSync(`${SOURCE_DIR}/CMakeLists.txt`, 'utf8')
    .match(/project\(rigd VERSION ([0-9.]+)/)[1];
  for (const prog of ['rigd', 'rigctl']) {
    const v = await run(prog, ['--version']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, new RegExp(`^${prog} ${version.replace(/\./g, '\\.')}( \\(git [0-9a-f]{12}(-dirty)?\\))?\n$`));
  }
  for (const [prog, args, said] of [
    ['rigd', ['--bogus'], "rigd: unknown argument '--bogus' (rigd --help lists the options)"],
    ['rigd', ['--db', 'x.db', 'stray'], "rigd: unknown argument 'stray' (rigd --help lists the options)"],
    ['rigd', ['log', '--nope'], "rigd log: unknown argument '--nope' (rigd log --help lists the options)"],
    ['rigctl', ['--bogus'], "rigctl: unknown option '--bogus' (rigctl --help lists the commands and options)"],
    ['rigctl', ['bogus'], "rigctl: unknown command 'bogus' (rigctl --help lists the commands and options)"]]) {
    const r = await run(prog, args);
    assert.equal(r.code, 2, `${prog} ${args.join(' ')}`);
    assert.equal(r.stderr, `${said}\n`);
    assert.equal(r.stdout, '');
  }
});
