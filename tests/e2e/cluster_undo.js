'use strict';
/*
 * A log line says what its batch is, across a cluster (docs/deploy.md,
 * "Several processes on one Redis"; tests/lib/cluster.js: three rigd
 * on a real redis-server):
 *
 * - a client edits, undoes and redoes on the owner of a scene; every
 *   process's copy of the log says which batches are undos and redos; the
 *   owner is SIGKILLed, and the same client's undos and redos on the new
 *   owner give, step by step, the answers and trees that a lone rigd gives
 *   for the same sequence (tests/lib/undo_steps.js); the survivors' logs
 *   agree and their databases pass `rigd check`;
 * - a batch whose log line would not fit a log stream entry (8 MiB), sent to
 *   the owner itself, a glTF import and an edit batch over HTTP, is refused
 *   413 `too_large` naming the limit before it is committed: no process
 *   has any of it, nothing is counted unconfirmed, and the scene edits on.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  get, post, tree, worldsOf, Client, startRigd, createScene, run,
} = require('../lib/rigd.js');
const {
  startCluster, stopCluster, clusterOf, until, ownerOf, show,
} = require('../lib/cluster.js');
const { HISTORY, AFTER, doStep } = require('../lib/undo_steps.js');

const LINE_MAX = 8 * 1024 * 1024;

let cluster;

test.before(async () => {
  /* Bodies and batches larger than a log stream entry may be sent. The
   * owner parses such a body in one go; a sanitized build on a loaded
   * machine may take longer than the tests' usual 2 s lease for it, and
   * then loses the scene to another process on every try: the leases
   * here last 10 s (the SIGKILL below waits that long for a new owner). */
  cluster = await startCluster(3, ['--max-body', String(32 << 20), '--max-message', String(32 << 20),
    '--max-ops', '100000', '--lease', '10000']);
  /* Every process connected and reading the scene events before a scene
   * is created (a process learns of those made while it connects later). */
  await until('every process up', async () => {
    const v = await Promise.all(cluster.procs.map(clusterOf));
    return v.every((x) => x.processes.length === 3 && x.redis.state === 'up');
  });
});

test.after(async () => {
  if (cluster) await stopCluster(cluster);
});

/* The log of 'scene' on 'p' without the times (each process stores when it
 * applied a batch). */
async function logOf(p, scene) {
  const text = (await get(p, `/api/scenes/${scene}/log`)).text.trim();
  return text ? text.split('\n').map((l) => { const x = JSON.parse(l); delete x.time; return x; }) : [];
}

/* Waits until every live process of 'procs' has 'scene' at 'seq'. */
async function allAt(procs, scene, seq) {
  await until(`every process at seq ${seq} of ${scene}`, async () => {
    const t = await Promise.all(procs.filter((p) => !p.exited).map((p) => tree(p, scene)));
    return t.every((x) => x.seq === seq);
  });
}

/* Sends 'step' to 'c' until it is not refused `unavailable` (a new owner
 * applying the last owner's log refuses and applies nothing). */
async function stepOnNewOwner(c, scene, step) {
  for (;;) {
    const a = await doStep(c, scene, step);
    if (a.type !== 'error' || a.code !== 'unavailable') return a;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/* POSTs 'body' to 'route' of the owner of 'scene', finding the owner again
 * when the one asked had just lost the scene (a long request on a busy
 * machine may hold its loop past its lease) and relayed it, or when the
 * new owner was still applying the last owner's log (503 unavailable:
 * nothing applied, retry in a moment). */
async function postToOwner(procs, scene, route, body) {
  for (let i = 0; ; i++) {
    const owner = (await ownerOf(procs, scene)).proc;
    const r = await post(owner, route, body);
    const head = r.text.slice(0, 1000);
    if (i === 20 || !/could not be relayed|owned by process|"code":"unavailable"/.test(head)) return r;
    if (r.status === 503) await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/* POSTs 'body' to 'route' of process 'p' again while it answers 503
 * unavailable (the scene's owner changed and the new one is applying the
 * last owner's log: nothing was applied). */
async function postAvailable(p, route, body) {
  for (let i = 0; ; i++) {
    const r = await post(p, route, body);
    if (i === 20 || r.status !== 503 || r.json?.error?.code !== 'unavailable') return r;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function metric(p, name) {
  const text = (await get(p, '/metrics')).text;
  const m = text.match(new RegExp(`^${name} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : 0;
}

test('a batch whose log line exceeds a stream entry is refused before its commit', async () => {
  const { procs } = cluster;
  let r = await post(procs[0], '/api/scenes', { name: 'big' });
  assert.equal(r.status, 201, r.text);
  await ownerOf(procs, 'big');

  /* A glTF of 45,000 named nodes: about 10 MB, its batch's line more. */
  const pad = 'x'.repeat(200);
  const n = 45000;
  const nodes = [];
  for (let i = 0; i < n; i++) nodes.push({ name: `n${i}${pad}` });
  const gltf = JSON.stringify({
    asset: { version: '2.0' }, scene: 0, scenes: [{ nodes: nodes.map((_, i) => i) }], nodes,
  });
  assert.ok(gltf.length < 16 << 20);
  r = await postToOwner(procs, 'big', '/api/scenes/big/gltf', gltf);
  assert.equal(r.status, 413, r.text.slice(0, 500));
  assert.equal(r.json.error.code, 'too_large');
  assert.match(r.json.error.message, new RegExp(`at most ${LINE_MAX} bytes \\(8 MiB`));

  /* An edit batch of 45,000 creates with long names (about 10 MB). */
  const ops = [];
  for (let i = 0; i < 45000; i++) ops.push({ op: 'create', id: `e${i}`, name: `e${i}${pad}` });
  r = await postToOwner(procs, 'big', '/api/scenes/big/edits', { ops, client: 'big' });
  assert.equal(r.status, 413, r.text.slice(0, 500));
  assert.equal(r.json.error.code, 'too_large');
  assert.match(r.json.error.message, new RegExp(`at most ${LINE_MAX} bytes`));

  /* Nothing of either anywhere; nothing committed unconfirmed. */
  for (const p of procs) {
    const t = await tree(p, 'big');
    assert.equal(t.seq, 0);
    assert.deepEqual(t.nodes, []);
    assert.equal(await metric(p, 'rigd_cluster_log_unconfirmed_total'), 0);
  }
  /* The scene edits on, everywhere. */
  r = await postToOwner(procs, 'big', '/api/scenes/big/edits', { ops: [{ op: 'create', id: 'ok', t: [1, 2, 3] }] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.seq, 1);
  const owner = (await ownerOf(procs, 'big')).proc;
  r = await postAvailable(procs.find((p) => p !== owner), '/api/scenes/big/edits',
    { ops: [{ op: 'set', id: 'ok', t: [4, 5, 6] }] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.seq, 2);
  await allAt(procs, 'big', 2);
});

test('undo and redo after the owner is SIGKILLed do what they did on the owner', async () => {
  const { procs } = cluster;

  /* The reference: the same sequence on a lone rigd. */
  const ref = await startRigd();
  const expect = [];
  try {
    await createScene(ref, 'u');
    const rc = await Client.connect(ref);
    for (const step of HISTORY) assert.equal((await doStep(rc, 'u', step)).type, 'ack');
    for (const step of AFTER) {
      const a = await doStep(rc, 'u', step);
      expect.push({ type: a.type, code: a.code, tree: await tree(ref, 'u') });
    }
    rc.close();
  } finally {
    await ref.stop();
  }

  let r = await post(procs[1], '/api/scenes', { name: 'u' });
  assert.equal(r.status, 201, r.text);
  const owner = (await ownerOf(procs, 'u')).proc;
  const c = await Client.connect(owner);
  for (const step of HISTORY) {
    const a = await doStep(c, 'u', step);
    assert.equal(a.type, 'ack', show(a));
  }
  await allAt(procs, 'u', HISTORY.length);
  /* Every process's log says which batches are undos and redos. */
  const logs = await Promise.all(procs.map((p) => logOf(p, 'u')));
  for (const log of logs) {
    assert.deepEqual(log, logs[0]);
    assert.deepEqual(log.map((l) => ('undo' in l ? `u${l.undo}` : 'redo' in l ? `r${l.redo}` : '-')),
      ['-', '-', '-', '-', 'u4', 'u2', 'r2']);
  }
  c.close();

  await owner.stop('SIGKILL');
  const live = procs.filter((p) => !p.exited);
  const next = (await ownerOf(live, 'u')).proc;
  const c2 = await Client.connect(next);
  for (let i = 0; i < AFTER.length; i++) {
    const a = await stepOnNewOwner(c2, 'u', AFTER[i]);
    const what = `step ${i} (${AFTER[i].type}): ${show(a)}`;
    assert.equal(a.type, expect[i].type, what);
    if (a.type === 'error') assert.equal(a.code, expect[i].code, what);
    const t = await tree(next, 'u');
    assert.equal(t.seq, expect[i].tree.seq, what);
    assert.deepEqual(t.nodes.map((x) => x.id), expect[i].tree.nodes.map((x) => x.id), what);
    assert.deepEqual(worldsOf(t.nodes), worldsOf(expect[i].tree.nodes), what);
  }
  c2.close();
  const seq = expect[expect.length - 1].tree.seq;
  await allAt(live, 'u', seq);
  const after = await Promise.all(live.map((p) => logOf(p, 'u')));
  assert.deepEqual(after[1], after[0]);

  for (const p of live) {
    assert.equal(await p.stop('SIGTERM'), 0);
    const check = await run('rigd', ['check', '--db', p.db]);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  }
});
