'use strict';
/*
 * Every write a client may make, sent to a process that does not own its
 * scene, is relayed to the owner through Redis and answered as the owner
 * answers its own clients (docs/protocol.md, "Several processes on one
 * Redis"): undo and redo over a websocket, pose ops, SVG, glTF (.gltf and
 * .glb) and log imports over HTTP, each with its refusals. Three rigd
 * processes on a real redis-server (tests/lib/cluster.js).
 *
 * What is checked: a non-owner's answer equals the owner's for the same
 * request (successes against a twin scene, refusals against the same scene,
 * which a refusal leaves as it was); imports that create a scene make it in
 * the cluster's catalog, so every process has it; afterwards every process
 * holds every scene bit for bit (tree, poses, log, assets); and an owner
 * killed while an undo or an import is on its way: an undo with a
 * client_seq is sent again to the next owner and applied once, one without
 * and an import are answered `unavailable` saying they may have been
 * applied, and nothing of them is; two imports into one new name at once
 * make one scene (the second is refused as the owner refuses it); and the
 * skeleton reads (GET .../spine, .../dragonbones, .../clips) answer the
 * same bytes from every process, the owner's and the others' copies.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { get, post, Client, SOURCE_DIR } = require('../lib/rigd.js');
const {
  WAIT_MS, startCluster, stopCluster, until, ownerOf, show,
} = require('../lib/cluster.js');
const { GLTF_SAMPLES, samplesPresent } = require('../lib/gltf_samples.js');

const demoDir = path.join(SOURCE_DIR, 'web', 'demo');
const DATA = path.join(SOURCE_DIR, 'tests', 'data');
const CHAIN = JSON.parse(fs.readFileSync(path.join(DATA, 'spine', 'chain.json'), 'utf8'));
const TWO_BONE = JSON.parse(fs.readFileSync(path.join(DATA, 'dragonbones', 'two_bone_ske.json'), 'utf8'));
/* ... with a clip of its own (the file has none), for GET .../clips. */
TWO_BONE.armature[0].frameRate = 24;
TWO_BONE.armature[0].animation = [{ name: 'wave', duration: 12, bone: [{ name: 'arm_l',
  rotateFrame: [{ duration: 12, rotate: 0 }, { duration: 0, rotate: 30 }] }] }];
const SVG = fs.readFileSync(path.join(demoDir, 'demo2d.svg'), 'utf8');
const MANIFEST = JSON.parse(fs.readFileSync(path.join(demoDir, 'demo2d.json'), 'utf8'));

/* A small glTF document: a root with two children, one turned. */
const GLTF = {
  asset: { version: '2.0' },
  scene: 0,
  scenes: [{ nodes: [0] }],
  nodes: [
    { name: 'hips', children: [1, 2], translation: [0, 1, 0] },
    { name: 'leg', translation: [0.2, -0.5, 0], rotation: [0, 0, 0.3826834, 0.9238795] },
    { name: 'spine', translation: [0, 0.4, 0] },
  ],
};

/* 'doc' as a binary glTF (.glb): a 12-byte header and one JSON chunk,
 * padded with spaces to 4 bytes. Its header holds NUL bytes. */
function glb(doc) {
  let json = Buffer.from(JSON.stringify(doc));
  if (json.length % 4) json = Buffer.concat([json, Buffer.alloc(4 - (json.length % 4), 0x20)]);
  const head = Buffer.alloc(20);
  head.writeUInt32LE(0x46546c67, 0);
  head.writeUInt32LE(2, 4);
  head.writeUInt32LE(20 + json.length, 8);
  head.writeUInt32LE(json.length, 12);
  head.writeUInt32LE(0x4e4f534a, 16);
  return Buffer.concat([head, json]);
}

/* The log of 'scene' on 'p' without the times (each process stores when it
 * applied a batch). */
async function logOf(p, scene) {
  const text = (await get(p, `/api/scenes/${scene}/log`)).text.trim();
  return text ? text.split('\n').map((l) => { const x = JSON.parse(l); delete x.time; return x; }) : [];
}

/* Waits until every live process holds 'scene' at the owner's seq, then
 * checks that they hold it bit for bit: tree, poses, log and assets. */
async function converged(procs, scene) {
  const live = procs.filter((p) => !p.exited);
  const owner = await ownerOf(live, scene);
  const seq = (await get(owner.proc, `/api/scenes/${scene}`)).json.seq;
  const trees = await until(`every process at seq ${seq} of ${scene}`, async () => {
    const t = await Promise.all(live.map((p) => get(p, `/api/scenes/${scene}`)));
    return t.every((x) => x.status === 200 && x.json.seq === seq) ? t.map((x) => x.text) : null;
  });
  for (const t of trees) assert.equal(t, trees[0], `${scene}: trees differ`);
  for (const route of ['poses', 'assets']) {
    const r = await Promise.all(live.map((p) => get(p, `/api/scenes/${scene}/${route}`)));
    for (const x of r) assert.equal(x.text, r[0].text, `${scene}: ${route} differ`);
  }
  const logs = await Promise.all(live.map((p) => logOf(p, scene)));
  for (const l of logs) assert.deepEqual(l, logs[0], `${scene}: logs differ`);
  return { owner, seq, tree: JSON.parse(trees[0]) };
}

/* A websocket reply without its req (what two clients compare). */
const bare = (m) => { const x = { ...m }; delete x.req; delete x.receivedAt; return x; };

/* POSTs 'body' to 'route' of scene 'scene' on 'p' with query 'q'. */
const postTo = (p, scene, route, body, q = '', headers = {}) =>
  post(p, `/api/scenes/${scene}/${route}${q}`, body, headers);

/* Asserts that two HTTP answers are the same: status and body. */
function sameAnswer(a, b, what) {
  assert.equal(a.status, b.status, `${what}: ${a.text} vs ${b.text}`);
  assert.equal(a.text, b.text, what);
}

/*
 * Resolves once the reader connection of every process is up: a process
 * reads the streams of scene events and of relayed requests from the
 * moment its reader first connects, so a scene created before that would
 * never reach it. An edit with a client_seq relayed from each non-owner of
 * 'demo' (sent again until its answer comes) proves both readers up.
 */
async function readersUp(c) {
  const owner = await ownerOf(c.procs, 'demo');
  let k = 0;
  for (const p of c.procs.filter((x) => x !== owner.proc)) {
    k++;
    const r = await post(p, '/api/scenes/demo/edits', { client: `probe${k}`, client_seq: 1,
      ops: [{ op: 'set', id: 'arm', euler: [0, 0, k] }] });
    assert.equal(r.status, 200, r.text);
  }
  return owner;
}

/* Creates scenes named prefix1, prefix2, ... on 'on' until one is owned by
 * process 'want'; resolves to its name. */
async function sceneOwnedBy(procs, on, want, prefix, dims = 3) {
  for (let i = 1; i <= 20; i++) {
    const name = `${prefix}${i}`;
    assert.equal((await post(on, '/api/scenes', { name, dims })).status, 201);
    if ((await ownerOf(procs, name)).proc === want) return name;
  }
  throw new Error(`no scene of ${prefix} came to the wanted owner`);
}

test('undo, redo and pose ops from a non-owner are applied by the owner, answered as it answers', async () => {
  const c = await startCluster();
  try {
    const owner = await readersUp(c);
    const others = c.procs.filter((p) => p !== owner.proc);
    const via = await Client.connect(others[0]);
    const own = await Client.connect(owner.proc);
    const third = await Client.connect(others[1]);
    const set = (client, seq, deg) => ({ type: 'edit', scene: 'demo', client, client_seq: seq,
      ops: [{ op: 'set', id: 'arm', euler: [0, 0, deg] }] });
    /* The same history for a client of the non-owner and one of the owner. */
    for (const [ws, client] of [[via, 'far'], [own, 'near']]) {
      assert.equal((await ws.request(set(client, 1, 10))).type, 'ack');
      assert.equal((await ws.request(set(client, 2, 20))).type, 'ack');
    }
    const undoFar = await via.request({ type: 'undo', scene: 'demo', client: 'far' });
    assert.equal(undoFar.type, 'ack', show(undoFar));
    const armAfterUndo = (await get(owner.proc, '/api/scenes/demo')).json.nodes.find((n) => n.id === 'arm');
    const undoNear = await own.request({ type: 'undo', scene: 'demo', client: 'near' });
    assert.equal(undoNear.type, 'ack');
    assert.equal(undoNear.recomputed, undoFar.recomputed);
    assert.equal(undoNear.seq, undoFar.seq + 1, 'the seqs are the owner\'s');
    assert.deepEqual(Object.keys(bare(undoFar)), Object.keys(bare(undoNear)));
    /* The relayed undo took 'far' back to 10 degrees: the owner's tree says so. */
    const undone = (await get(owner.proc, `/api/scenes/demo?at=${undoFar.seq}`)).json.nodes.find((n) => n.id === 'arm');
    const before = (await get(owner.proc, `/api/scenes/demo?at=${undoFar.seq - 4}`)).json.nodes.find((n) => n.id === 'arm');
    assert.deepEqual(undone.r, before.r, 'the undo of far restores its first edit');
    assert.ok(armAfterUndo);
    const redoFar = await via.request({ type: 'redo', scene: 'demo', client: 'far' });
    const redoNear = await own.request({ type: 'redo', scene: 'demo', client: 'near' });
    assert.equal(redoFar.type, 'ack', show(redoFar));
    assert.equal(redoNear.recomputed, redoFar.recomputed);
    /* Refusals: the same error, word for word, from any process. */
    for (const msg of [
      { type: 'undo', scene: 'demo', client: 'nobody' },
      { type: 'redo', scene: 'demo', client: 'far' },
      { type: 'undo', scene: 'demo', client: 'far', client_seq: -1 },
      { type: 'undo', scene: 'demo', client: 'bad id' },
      { type: 'undo', scene: 'nope', client: 'far' },
    ]) {
      const a = await via.request(msg);
      const b = await own.request(msg);
      assert.equal(a.type, 'error', show(a));
      assert.deepEqual(bare(a), bare(b), show(msg));
    }
    /* An undo that carries a client_seq is applied once: the resend is
     * acknowledged with its first seq, from any process. */
    const u1 = await via.request({ type: 'undo', scene: 'demo', client: 'far', client_seq: 3 });
    assert.equal(u1.type, 'ack', show(u1));
    const u2 = await third.request({ type: 'undo', scene: 'demo', client: 'far', client_seq: 3 });
    assert.equal(u2.seq, u1.seq);
    const u3 = await via.request({ type: 'undo', scene: 'demo', client: 'far', client_seq: 3 });
    assert.equal(u3.seq, u1.seq);
    /* Pose ops are edits: relayed like any batch, refusals as the owner's. */
    const poses = [
      { op: 'pose_save', pose: 'rest' },
      { op: 'set', id: 'arm', euler: [0, 0, 45] },
      { op: 'pose_save', pose: 'bent', root: 'arm' },
    ];
    for (const op of poses) {
      const r = await via.request({ type: 'edit', scene: 'demo', ops: [op] });
      assert.equal(r.type, 'ack', show(r));
    }
    const blend = await post(others[1], '/api/scenes/demo/edits',
      { ops: [{ op: 'blend', root: 'arm', a: 'rest', b: 'bent', t: 0.5 }] });
    assert.equal(blend.status, 200, blend.text);
    const del = await via.request({ type: 'edit', scene: 'demo', ops: [{ op: 'pose_delete', pose: 'rest' }] });
    assert.equal(del.type, 'ack');
    const undoDel = await via.request({ type: 'undo', scene: 'demo' });
    assert.equal(undoDel.type, 'ack', 'the connection\'s own pose_delete is undone');
    for (const op of [
      { op: 'pose_delete', pose: 'gone' },
      { op: 'blend', root: 'arm', a: 'rest', b: 'nope', t: 0.5 },
      { op: 'blend', root: 'arm', a: 'rest', b: 'bent', t: 2 },
    ]) {
      const a = await via.request({ type: 'edit', scene: 'demo', ops: [op] });
      const b = await own.request({ type: 'edit', scene: 'demo', ops: [op] });
      assert.equal(a.type, 'error', show(a));
      assert.deepEqual(bare(a), bare(b), show(op));
      sameAnswer(await post(others[1], '/api/scenes/demo/edits', { ops: [op] }),
        await post(owner.proc, '/api/scenes/demo/edits', { ops: [op] }), show(op));
    }
    const { tree } = await converged(c.procs, 'demo');
    const names = (await get(others[1], '/api/scenes/demo/poses')).json.poses.map((p) => p.name);
    assert.deepEqual(names, ['bent', 'rest']);
    assert.equal(tree.seq, u1.seq + 6);
    const log = await logOf(owner.proc, 'demo');
    assert.equal(log.filter((l) => l.client === 'far' && l.client_seq === 3).length, 1);
    for (const ws of [via, own, third]) {
      assert.deepEqual(ws.schemaViolations, []);
      ws.close();
    }
    const m = (await get(others[0], '/metrics')).text;
    assert.match(m, /rigd_cluster_forwards_waiting 0/);
  } finally {
    await stopCluster(c);
  }
});

test('SVG, glTF and log imports from a non-owner: the owner\'s answers, scenes made in the catalog', async () => {
  const c = await startCluster();
  try {
    const [p0, p1, p2] = c.procs;
    await readersUp(c);
    /* An SVG import on a process that does not have the scene makes it in
     * the cluster, and its answer is what a twin import gets elsewhere. */
    const svgBody = { file: 'hero.svg', svg: SVG, manifest: MANIFEST };
    const a = await postTo(p0, 'art1', 'svg', svgBody, '?client=artist');
    assert.equal(a.status, 200, a.text);
    const b = await postTo(p1, 'art2', 'svg', svgBody, '?client=artist');
    sameAnswer(a, b, 'a twin SVG import');
    const art = await converged(c.procs, 'art1');
    assert.equal(art.seq, 1);
    for (const p of c.procs) {
      const list = (await get(p, '/api/scenes')).json.scenes.map((s) => s.name);
      assert.ok(list.includes('art1') && list.includes('art2'), list.join());
    }
    /* Into an existing scene from a non-owner: relayed, and its refusals
     * are the owner's, word for word. */
    const artOwner = art.owner.proc;
    const artOther = c.procs.find((p) => p !== artOwner);
    const again = await postTo(artOther, 'art1', 'svg', svgBody);
    assert.ok(again.status >= 400, again.text);
    sameAnswer(again, await postTo(artOwner, 'art1', 'svg', svgBody), 'the same import again');
    for (const [what, body, q] of [
      ['bad svg', { file: 'x.svg', svg: '<svg', manifest: MANIFEST }, ''],
      ['bad manifest', { file: 'y.svg', svg: SVG, manifest: [{ id: 'nope', pivot: [0, 0] }] }, ''],
      ['bad json', '{"file":', ''],
      ['bad client', { file: 'z.svg', svg: SVG, manifest: MANIFEST }, '?client=a%20b'],
    ]) {
      const r = await postTo(artOther, 'art1', 'svg', body, q);
      assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.text}`);
      sameAnswer(r, await postTo(artOwner, 'art1', 'svg', body, q), what);
    }
    /* A 3D scene refuses an SVG rig: said by the owner. */
    const d3 = await postTo(artOther, 'demo', 'svg', svgBody);
    const demoOwner = (await ownerOf(c.procs, 'demo')).proc;
    sameAnswer(d3, await postTo(demoOwner, 'demo', 'svg', svgBody), 'svg into 3D');

    /* glTF, JSON then binary (NUL bytes in the body), into new scenes made
     * in the catalog; the twin answers are equal. */
    const g1 = await postTo(p1, 'g1', 'gltf', GLTF, '?client=rigger');
    assert.equal(g1.status, 200, g1.text);
    sameAnswer(g1, await postTo(p2, 'g2', 'gltf', GLTF, '?client=rigger'), 'a twin glTF import');
    const g = await converged(c.procs, 'g1');
    assert.deepEqual(g.tree.nodes.map((n) => n.id), ['hips', 'leg', 'spine']);
    const gOther = c.procs.filter((p) => p !== g.owner.proc);
    const under = await postTo(gOther[0], 'g1', 'gltf', glb(GLTF), '?parent=spine',
      { 'content-type': 'model/gltf-binary' });
    assert.equal(under.status, 200, under.text);
    assert.equal(under.json.seq, 2);
    const again2 = await postTo(gOther[1], 'g1', 'gltf', GLTF);
    assert.equal(again2.status, 409, again2.text);
    sameAnswer(again2, await postTo(g.owner.proc, 'g1', 'gltf', GLTF), 'scene_not_empty');
    for (const [what, body, q] of [
      ['not json', 'nope', '?parent=spine'],
      ['bad node', { ...GLTF, nodes: [{ matrix: [1, 2] }] }, '?parent=spine'],
      ['bad scene index', GLTF, '?parent=spine&scene=7'],
      ['bad nearest', GLTF, '?parent=spine&nearest=maybe'],
      ['unknown parent', GLTF, '?parent=elbow'],
    ]) {
      const r = await postTo(gOther[0], 'g1', 'gltf', body, q);
      assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${r.text}`);
      sameAnswer(r, await postTo(g.owner.proc, 'g1', 'gltf', body, q), what);
    }
    await converged(c.procs, 'g1');
    await converged(c.procs, 'g2');

    /* A log import into an empty scene from a non-owner: the owner
     * replays it and every process gets its batches. */
    const demoLog = (await get(demoOwner, '/api/scenes/demo/log')).text;
    for (const name of ['copy', 'copy2']) {
      assert.equal((await post(p2, '/api/scenes', { name })).status, 201);
    }
    const copyOwner = (await ownerOf(c.procs, 'copy')).proc;
    const copyOther = c.procs.find((p) => p !== copyOwner);
    for (const [what, body] of [
      ['bad line', `${demoLog}{"seq":`],
      ['bad seq', demoLog.replace('"seq":1,', '"seq":5,')],
    ]) {
      const r = await postTo(copyOther, 'copy', 'log', body);
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      sameAnswer(r, await postTo(copyOwner, 'copy', 'log', body), what);
    }
    const imp = await postTo(copyOther, 'copy', 'log', demoLog);
    assert.equal(imp.status, 200, imp.text);
    const copy2Owner = (await ownerOf(c.procs, 'copy2')).proc;
    const twin = await postTo(copy2Owner, 'copy2', 'log', demoLog);
    assert.equal(twin.status, 200);
    assert.deepEqual({ ...imp.json, scene: 'x' }, { ...twin.json, scene: 'x' });
    const full = await postTo(copyOther, 'copy', 'log', demoLog);
    assert.equal(full.status, 409);
    sameAnswer(full, await postTo(copyOwner, 'copy', 'log', demoLog), 'scene_not_empty');
    const nolog = await postTo(copyOther, 'nowhere', 'log', demoLog);
    assert.equal(nolog.status, 404);
    const copy = await converged(c.procs, 'copy');
    const demo = await converged(c.procs, 'demo');
    assert.deepEqual(copy.tree.nodes, demo.tree.nodes);
    assert.deepEqual((await logOf(p0, 'copy')), (await logOf(p0, 'demo')));
    await converged(c.procs, 'art2');

    /* A body larger than a process relays is refused with a clear error;
     * the owner itself takes it. */
    const big = { ...GLTF, extras: { pad: 'x'.repeat(9 << 20) } };
    const tooBig = await postTo(gOther[0], 'g1', 'gltf', big, '?parent=hips');
    assert.equal(tooBig.status, 413, tooBig.text);
    assert.equal(tooBig.json.error.code, 'too_large');
    assert.match(tooBig.json.error.message, /relays to the owner of scene 'g1'/);
    assert.ok(tooBig.json.error.message.includes(g.owner.id), tooBig.json.error.message);
    for (const p of c.procs) {
      const m = (await get(p, '/metrics')).text;
      assert.match(m, /rigd_cluster_writes_waiting 0/);
    }
    const relayed = await Promise.all(c.procs.map(async (p) =>
      Number(/rigd_cluster_writes_relayed_total (\d+)/.exec((await get(p, '/metrics')).text)[1])));
    assert.ok(relayed.reduce((x, y) => x + y) >= 10, relayed.join());
  } finally {
    await stopCluster(c);
  }
});

test('an owner killed while an undo or an import is on its way: as docs/protocol.md says', async () => {
  const c = await startCluster();
  try {
    const owner = await readersUp(c);
    const via = c.procs.find((p) => p !== owner.proc);
    /* An empty scene of the same owner, for the import. */
    const late = await sceneOwnedBy(c.procs, owner.proc, owner.proc, 'late');
    await until(`${late} on ${via.port}`, async () => (await get(via, `/api/scenes/${late}`)).status === 200);
    const ws = await Client.connect(via);
    for (const client of ['k1', 'k2']) {
      const r = await ws.request({ type: 'edit', scene: 'demo', client, client_seq: 1,
        ops: [{ op: 'set', id: 'arm', euler: [0, 0, 33] }] });
      assert.equal(r.type, 'ack', show(r));
    }
    /* The owner's log, once the process the requests go through has it. */
    const before = await logOf(owner.proc, 'demo');
    await until('via at the owner\'s seq', async () =>
      (await get(via, '/api/scenes/demo')).json.seq === before.length);
    const demoLog = (await get(via, '/api/scenes/demo/log')).text;
    await owner.proc.stop('SIGKILL');
    const t0 = Date.now();
    /* Sent at once, to the dead owner. */
    const [withSeq, without, imp] = await Promise.all([
      ws.request({ type: 'undo', scene: 'demo', client: 'k1', client_seq: 2 }, WAIT_MS * 2),
      ws.request({ type: 'undo', scene: 'demo', client: 'k2' }, WAIT_MS * 2),
      postTo(via, late, 'log', demoLog),
    ]);
    console.log(`answered ${Date.now() - t0} ms after the owner was killed`);
    /* With a client_seq: sent again to the next owner, applied once. */
    assert.equal(withSeq.type, 'ack', show(withSeq));
    /* Without one: not sent again, answered unavailable saying it may
     * have been applied; the dead owner never read it. */
    assert.equal(without.type, 'error', show(without));
    assert.equal(without.code, 'unavailable');
    assert.match(without.message, /the undo may have been applied/);
    /* An import is never sent again: unavailable, and it was not applied. */
    assert.equal(imp.status, 503, imp.text);
    assert.equal(imp.json.error.code, 'unavailable');
    assert.match(imp.json.error.message, /may have been applied or not/);
    const next = await ownerOf(c.procs, 'demo');
    assert.notEqual(next.proc, owner.proc);
    const log = await logOf(next.proc, 'demo');
    assert.equal(log.length, before.length + 1);
    assert.equal(log.filter((l) => l.client === 'k1' && l.client_seq === 2).length, 1);
    assert.equal(log[log.length - 1].seq, withSeq.seq);
    const resend = await ws.request({ type: 'undo', scene: 'demo', client: 'k1', client_seq: 2 });
    assert.equal(resend.seq, withSeq.seq, 'the resend is acknowledged with its first seq');
    assert.equal((await get(via, `/api/scenes/${late}`)).json.seq, 0, 'the import was not applied');
    /* Sent again by the client, it is relayed to the next owner. */
    const retry = await until('the import taken by the next owner', async () => {
      const r = await postTo(via, late, 'log', demoLog);
      return r.status === 200 ? r : null;
    });
    assert.equal(retry.json.batches, before.length);
    await converged(c.procs, late);
    await converged(c.procs, 'demo');
    const m = (await get(via, '/metrics')).text;
    assert.match(m, /rigd_cluster_forwards_failed_total [1-9]/);
    assert.match(m, /rigd_cluster_writes_failed_total [1-9]/);
    assert.equal(ws.closeCode, undefined);
    ws.close();
  } finally {
    await stopCluster(c);
  }
});

test('two imports into one new name at once make one scene; a sample model through a non-owner', async (t) => {
  const c = await startCluster();
  try {
    await readersUp(c);
    const [p0, p1, p2] = c.procs;
    /* Both creations reach the catalog; the second finds the name and
     * imports into that scene, after the first: scene_not_empty. */
    const [a, b] = await Promise.all([postTo(p0, 'twin', 'gltf', GLTF), postTo(p1, 'twin', 'gltf', GLTF)]);
    assert.deepEqual([a.status, b.status].sort(), [200, 409], `${a.text} ${b.text}`);
    assert.equal((a.status === 409 ? a : b).json.error.code, 'scene_not_empty');
    const twin = await converged(c.procs, 'twin');
    assert.equal(twin.seq, 1);
    assert.deepEqual(twin.tree.nodes.map((n) => n.id), ['hips', 'leg', 'spine']);
    if (!samplesPresent) {
      t.diagnostic(`glTF samples not found at ${GLTF_SAMPLES}: the sample part is skipped`);
      return;
    }
    const sample = fs.readFileSync(path.join(GLTF_SAMPLES, 'RiggedSimple.gltf'));
    const far = await postTo(p2, 'rig1', 'gltf', sample, '?client=sampler');
    assert.equal(far.status, 200, far.text);
    const near = await postTo(p0, 'rig2', 'gltf', sample, '?client=sampler');
    sameAnswer(far, near, 'a sample model');
    const r1 = await converged(c.procs, 'rig1');
    const r2 = await converged(c.procs, 'rig2');
    assert.deepEqual(r1.tree.nodes, r2.tree.nodes);
    const other = c.procs.find((p) => p !== r1.owner.proc);
    const under = await postTo(other, 'rig1', 'gltf', sample, '?parent=' + r1.tree.nodes[0].id);
    assert.equal(under.status, 200, under.text);
    const rig = await converged(c.procs, 'rig1');
    assert.equal(rig.tree.nodes.length, 2 * r2.tree.nodes.length);
  } finally {
    await stopCluster(c);
  }
});

test('skeleton imports through one process, exports through another: the same bytes', async () => {
  const c = await startCluster();
  try {
    await readersUp(c);
    const [p0, p1] = c.procs;
    /* Imported through p0 (the scene made in the catalog, the import run
     * by whichever process took its lease) and edited through p1. */
    for (const [format, scene, skeleton, file, edits] of [
      ['spine', 'sk1', CHAIN, 'chain.json',
        [{ op: 'set', id: 'hip', angle: 30 }, { op: 'set', id: 'head', shear: [3, 4] }]],
      ['dragonbones', 'db1', TWO_BONE, 'two_bone_ske.json',
        [{ op: 'set', id: 'arm_5fl', angle: 10, t: [1, 2, 0] }]],
    ]) {
      const imp = await postTo(p0, scene, format, { skeleton, file });
      assert.equal(imp.status, 200, imp.text);
      const first = await converged(c.procs, scene);
      const ed = await post(p1, `/api/scenes/${scene}/edits`, { ops: edits });
      assert.equal(ed.status, 200, ed.text);
      const now = await converged(c.procs, scene);
      assert.ok(now.seq > first.seq);
      /* Every process, owner or not, answers each read with the owner's
       * bytes and headers: now, and as of the import. */
      for (const q of ['', `?at=${first.seq}`]) {
        for (const route of [format, 'clips']) {
          const r = await Promise.all(c.procs.map((p) => get(p, `/api/scenes/${scene}/${route}${q}`)));
          for (const x of r) {
            assert.equal(x.status, 200, `${scene}/${route}${q}: ${x.text}`);
            assert.equal(x.text, r[0].text, `${scene}/${route}${q} differs between processes`);
            assert.equal(x.headers['content-disposition'], r[0].headers['content-disposition']);
          }
          if (route !== 'clips') {
            assert.equal(r[0].headers['content-disposition'], `attachment; filename="${scene}${
              format === 'spine' ? '.json' : '_ske.json'}"`);
            if (q) assert.deepEqual(JSON.parse(r[0].text), skeleton, 'as of the import: the file');
            else assert.notDeepEqual(JSON.parse(r[0].text), skeleton, 'now: the edits');
          } else {
            assert.ok(JSON.parse(r[0].text).length > 0, `${scene}: clips listed`);
          }
        }
      }
    }
  } finally {
    await stopCluster(c);
  }
});
