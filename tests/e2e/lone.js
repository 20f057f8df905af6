'use strict';
/*
 * A rigd that runs alone, as built (with the cluster's side or without it,
 * -DRIGD_CLUSTER=OFF): the single-process path names no cluster code, so
 * a lone rigd serves edits, acks and updates, reports no cluster (GET
 * /api/cluster is 404, /metrics has no rigd_cluster_ line), and --redis is
 * refused as a usage error, saying why: a URL that is not redis://HOST:PORT
 * where the cluster is built, the build itself where it is not.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, tree, worldsOf, Client, createScene, run, tempDir,
} = require('../lib/rigd.js');
const path = require('node:path');

const CLUSTER = process.env.RIGD_CLUSTER !== 'OFF';

test('a lone rigd: edit, ack and update; no cluster anywhere', async () => {
  const server = await startRigd();
  try {
    await createScene(server, 'lone');
    const editor = await Client.connect(server);
    const viewer = await Client.connect(server);
    await viewer.subscribe('lone');
    const ack = await editor.request({ type: 'edit', scene: 'lone', ops: [
      { op: 'create', id: 'a', t: [1, 0, 0] }, { op: 'create', id: 'b', parent: 'a', t: [0, 2, 0] }] });
    assert.equal(ack.type, 'ack');
    assert.equal(ack.seq, 1);
    await viewer.waitSeq('lone', 1);
    assert.deepEqual(viewer.worlds('lone'), worldsOf((await tree(server, 'lone')).nodes));
    assert.equal(viewer.worlds('lone').b[13], 2);

    const cl = await get(server, '/api/cluster');
    assert.equal(cl.status, 404);
    assert.equal(cl.json.error.code, 'not_found');
    assert.match(cl.json.error.message, /runs alone/);
    const m = await get(server, '/metrics');
    assert.equal(m.status, 200);
    assert.match(m.text, /^rigd_batches_total 1$/m);
    assert.doesNotMatch(m.text, /rigd_cluster_/);
    editor.close();
    viewer.close();
  } finally {
    assert.equal(await server.stop('SIGTERM'), 0);
  }
});

test('--redis is a usage error that says why', async () => {
  const db = path.join(tempDir(), 'rig.db');
  const url = CLUSTER ? 'http://127.0.0.1:6379' : 'redis://127.0.0.1:6379';
  const r = await run('rigd', ['--listen', '127.0.0.1:0', '--db', db, '--redis', url],
    { timeout: 10000 });
  assert.equal(r.code, 2, r.stderr);
  if (CLUSTER)
    assert.match(r.stderr, /--redis: 'http:\/\/127.0.0.1:6379' is not redis:\/\/HOST:PORT/);
  else
    assert.match(r.stderr, /--redis: this rigd was built without the cluster/);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
});
