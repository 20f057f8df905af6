'use strict';
/*
 * A log line says whether its batch is an undo or a redo, on one process:
 * a client edits, undoes and redoes; the scene's log, exported, carries
 * "undo"/"redo" on exactly those lines; imported into a new scene, the
 * client's further undos and redos there do what they do on the original
 * (same answers, same trees, step by step); an imported line naming a
 * batch of another client is refused with its line; `rigd check` passes.
 * Also the sequence the cluster test compares against (tests/lib/undo_steps.js).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, post, tree, worldsOf, Client, assertSchema, createScene, run,
} = require('../lib/rigd.js');
const { HISTORY, AFTER, doStep } = require('../lib/undo_steps.js');

let server;

/* Messages may hold BigInts (the client reads integers exactly). */
const show = (x) => JSON.stringify(x, (k, v) => (typeof v === 'bigint' ? String(v) : v));

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server) await server.stop();
});

test('undo and redo survive a log export and import', async () => {
  await createScene(server, 'orig');
  const c = await Client.connect(server);
  for (const step of HISTORY) {
    const a = await doStep(c, 'orig', step);
    assert.equal(a.type, 'ack', show(a));
  }
  const log = await get(server, '/api/scenes/orig/log');
  assert.equal(log.status, 200);
  const lines = log.text.trim().split('\n').map((l) => JSON.parse(l));
  lines.forEach((l) => assertSchema('LogLine', l));
  /* Only the undos and redos say so, each naming its client's batch. */
  const kinds = lines.map((l) => ('undo' in l ? `u${l.undo}` : 'redo' in l ? `r${l.redo}` : '-'));
  assert.deepEqual(kinds, ['-', '-', '-', '-', 'u4', 'u2', 'r2']);
  for (const l of lines) {
    if ('undo' in l || 'redo' in l) {
      assert.equal(l.client, 'al');
      assert.equal(lines[(l.undo || l.redo) - 1].client, 'al');
    }
  }
  /* Ordinary lines are as they were: no new member. */
  assert.deepEqual(Object.keys(lines[0]), ['seq', 'time', 'client', 'client_seq', 'ops']);

  await createScene(server, 'copy');
  let r = await post(server, '/api/scenes/copy/log', log.text);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { scene: 'copy', batches: 7, seq: 7 });
  const again = await get(server, '/api/scenes/copy/log');
  assert.equal(again.text, log.text);

  for (const step of AFTER) {
    const a = await doStep(c, 'orig', step);
    const b = await doStep(c, 'copy', step);
    assert.equal(b.type, a.type, `${step.type}: ${show(a)} / ${show(b)}`);
    if (a.type === 'error') assert.equal(b.code, a.code);
    const ta = await tree(server, 'orig');
    const tb = await tree(server, 'copy');
    assert.deepEqual(worldsOf(tb.nodes), worldsOf(ta.nodes), `after ${step.type}`);
    assert.deepEqual(tb.nodes.map((n) => n.id), ta.nodes.map((n) => n.id));
  }
  c.close();

  /* A line naming another client's batch: refused, naming the field and line. */
  await createScene(server, 'bad');
  const bad = `${lines[0] && JSON.stringify(lines[0])}\n${JSON.stringify(lines[1])}\n${
    JSON.stringify(lines[2])}\n${JSON.stringify({ ...lines[3], undo: 3 })}\n`;
  r = await post(server, '/api/scenes/bad/log', bad);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.code, 'bad_field');
  assert.equal(r.json.error.field, 'undo');
  assert.match(r.json.error.message, /^line 4: undo: seq 3 is a batch of client 'bo', not of 'al'/);
  assert.equal((await tree(server, 'bad')).seq, 0);

  assert.equal(await server.stop('SIGTERM'), 0);
  const check = await run('rigd', ['check', '--db', server.db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  server = null;
});
