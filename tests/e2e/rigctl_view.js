'use strict';
/*
 * rigctl watch with a view (docs/protocol.md, "Views"), as a script would
 * run it against the real server: `watch SCENE --view FILE.json` (JSON
 * frames) and `watch SCENE --vp ... --viewport WxH --min-px N --format f32`
 * (binary frames printed as JSON) follow a scene while nodes move across
 * the view, are created and deleted; after every edit what each prints
 * adds up to what a JSON client with the same view draws, matrix for
 * matrix, hidden for hidden, and to the server's culling rule re-done from
 * the tree; the printed frames equal the JSON client's. The server's
 * subtree boxes follow the edits without a rebuild: a root edit refits
 * none, a leaf's edit its parent only (rigd_view_box_refits_total). Bad
 * view flags exit 2 with an error naming the flag.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const {
  startRigd, tree, createScene, postEdit, run, assertSchema, Client, BUILD_DIR, tempDir, get,
} = require('../lib/rigd.js');
const { perspectiveVp, visibleIds, shownIds, setDiffs } = require('../lib/interest.js');

let server;

test.before(async () => { server = await startRigd(); });
test.after(async () => { assert.equal(await server.stop('SIGTERM'), 0); });

const VIEWPORT = [640, 480];
const BOUNDS = { min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5] };

/* Three groups 30 apart, each of 20 boxes on a 5 x 4 grid 3 apart and one
 * node without bounds. */
function gridOps() {
  const ops = [];
  for (let g = 0; g < 3; g++) {
    ops.push({ op: 'create', id: `g${g}`, t: [30 * g, 0, 0] });
    for (let k = 0; k < 20; k++) {
      ops.push({ op: 'create', id: `g${g}-${k}`, parent: `g${g}`, t: [(k % 5) * 3, Math.floor(k / 5) * 3, 0],
        bounds: BOUNDS });
    }
    ops.push({ op: 'create', id: `g${g}-free`, parent: `g${g}` });
  }
  return ops;
}

/* rigctl watch as a child process, its printed lines parsed as they come. */
function watch(args) {
  const p = spawn(path.join(BUILD_DIR, 'rigctl'), ['--url', server.url, 'watch', ...args]);
  const w = { lines: [], stderr: '', buf: '' };
  p.stdout.on('data', (d) => {
    w.buf += d;
    let i;
    while ((i = w.buf.indexOf('\n')) >= 0) {
      w.lines.push(JSON.parse(w.buf.slice(0, i)));
      w.buf = w.buf.slice(i + 1);
    }
  });
  p.stderr.on('data', (d) => { w.stderr += d; });
  w.exit = new Promise((resolve) => p.on('exit', resolve));
  w.kill = () => p.kill('SIGINT');
  return w;
}

async function until(pred, what, timeout = 20000) {
  const deadline = Date.now() + timeout;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/* What a list of printed messages adds up to: the same mirror a JSON
 * client keeps (Client.apply). */
function mirrorOf(lines) {
  const m = { scenes: new Map(), schemaViolations: [] };
  for (const msg of lines) Client.prototype.apply.call(m, msg);
  assert.deepEqual(m.schemaViolations, []);
  return m;
}

/* The drawn nodes' matrices of a mirror. */
function drawn(mirror, scene) {
  const out = {};
  for (const [id, n] of mirror.scenes.get(scene).nodes) if (!n.hidden) out[id] = n.world;
  return out;
}

async function refits() {
  return Number(/^rigd_view_box_refits_total (\d+)$/m.exec((await get(server, '/metrics')).text)[1]);
}

const lastSeq = (lines) => Math.max(-1, ...lines.filter((m) => m.type === 'snapshot' || m.type === 'update').map((m) => m.seq));
const viewFrame = (m) => (m.type === 'update' || m.type === 'snapshot') && Array.isArray(m.hidden);

test('watch --view FILE and --vp/--viewport/--min-px print what a JSON view client receives', async () => {
  await createScene(server, 'cams');
  let r = await postEdit(server, 'cams', { ops: gridOps() });
  assert.equal(r.status, 200, r.text);
  const view = { vp: perspectiveVp(60, VIEWPORT[0] / VIEWPORT[1], 0.5, 200, [6, 4.5, 20]), viewport: VIEWPORT, min_px: 0 };
  const sized = { ...view, min_px: 34 };
  const file = path.join(tempDir(), 'view.json');
  fs.writeFileSync(file, JSON.stringify(view));

  /* The JSON clients: one per view. */
  const clients = [];
  for (const v of [view, sized]) {
    const c = await Client.connect(server);
    c.send({ type: 'subscribe', scene: 'cams' });
    await c.waitFor((m) => m.type === 'snapshot');
    assert.equal((await c.request({ type: 'view', scene: 'cams', ...v })).type, 'ack');
    await c.waitFor(viewFrame, { what: 'the view frame' });
    clients.push(c);
  }
  const json = watch(['cams', '--view', file]);
  const f32 = watch(['cams', '--vp', sized.vp.map(String).join(','), '--viewport', '640x480', '--min-px', '34',
    '--format', 'f32']);
  await until(() => json.lines.some(viewFrame) && f32.lines.some(viewFrame), 'both watches to print their view frame');

  const check = async (what) => {
    const t = await tree(server, 'cams');
    await until(() => [json, f32].every((w) => lastSeq(w.lines) >= t.seq) &&
      clients.every((c) => c.scenes.get('cams').seq >= t.seq), `${what}: seq ${t.seq} everywhere`);
    for (const [w, c, v, f] of [[json, clients[0], view, false], [f32, clients[1], sized, true]]) {
      const mine = mirrorOf(w.lines);
      const want = visibleIds(t.nodes, v);
      assert.deepEqual(setDiffs(shownIds(mine, 'cams'), want), [], `${what}: the watch draws the visible set`);
      assert.deepEqual(setDiffs(shownIds(mine, 'cams'), shownIds(c, 'cams')), [], `${what}: as the JSON client`);
      const got = drawn(mine, 'cams');
      const theirs = drawn(c, 'cams');
      for (const id of Object.keys(theirs)) {
        if (!f) assert.deepEqual(got[id], theirs[id], `${what}: ${id}'s matrix`);
        else got[id].forEach((x, i) => assert.equal(x, Math.fround(theirs[id][i]), `${what}: ${id}[${i}] as float32`));
      }
    }
  };
  await check('declared');

  /* Moves across the view's edges, a node created in view, one deleted,
   * a group moved under the camera, bounds dropped: after each, the same. */
  /* Boxes refitted per edit: the leaf's parent; none for a root. */
  const edits = [
    [{ op: 'set', id: 'g0-3', t: [80, 0, 0] }, 1],
    [{ op: 'set', id: 'g1-0', t: [-25, 1, 0] }, 1],
    [{ op: 'create', id: 'new', parent: 'g2', t: [-52, 2, 0], bounds: BOUNDS }, 2],
    [{ op: 'delete', id: 'g0-7' }, 1],
    [{ op: 'set', id: 'g1', t: [4, 8, -2] }, 0],
    [{ op: 'set', id: 'g0-1', bounds: null }, 2],
    [{ op: 'set', id: 'g0', t: [1, 1, 0] }, 0],
  ];
  for (const [op, refitted] of edits) {
    const ops = [op];
    const refits0 = await refits();
    const before = json.lines.length;
    const cBefore = clients[0].messages.length;
    r = await postEdit(server, 'cams', { ops });
    assert.equal(r.status, 200, r.text);
    await check(JSON.stringify(ops));
    /* One frame each for the edit, from the same cursor and known set:
     * the very frame the JSON client got. */
    const mine = json.lines.slice(before).filter((m) => m.type === 'update');
    const theirs = clients[0].messages.slice(cBefore).filter((m) => m.type === 'update');
    if (mine.length === 1 && theirs.length === 1) {
      assert.deepEqual(mine[0].world, theirs[0].world);
      assert.deepEqual(mine[0].hidden, theirs[0].hidden);
    }
    assert.equal(await refits() - refits0, refitted, `${JSON.stringify(ops)}: boxes refitted`);
  }
  for (const w of [json, f32]) {
    w.lines.forEach((m) => assertSchema('ServerMessage', m));
    w.kill();
    assert.equal(await w.exit, 0, w.stderr);
  }
  for (const c of clients) await c.close();
});

test('watch with a view the server would refuse, or bad view flags: exit 2 naming the flag', async () => {
  const dir = tempDir();
  const write = (name, text) => { const f = path.join(dir, name); fs.writeFileSync(f, text); return f; };
  const good = perspectiveVp(60, 4 / 3, 0.5, 200, [0, 0, 20]).join(',');
  const cases = [
    [['--view', path.join(dir, 'missing.json')], /--view: cannot open/],
    [['--view', write('array.json', '[1,2]')], /--view: .* does not hold a JSON object/],
    [['--view', write('short.json', '{"vp":[1,2],"viewport":[10,10]}')], /--view: .*vp: must be an array of 16 numbers/],
    [['--view', write('extra.json', `{"vp":[${good}],"viewport":[10,10],"fov":3}`)], /--view: .*fov/],
    [['--view', write('clear.json', '{"clear":true}')], /--view: .* must give a view/],
    [['--view', write('whole.json', `{"type":"view","scene":"cams","vp":[${good}],"viewport":[10,10]}`)],
      /--view: .*whole.json: type: give the view's fields only/],
    [['--vp', '1,2,3', '--viewport', '10x10'], /--vp: 3 numbers, needs 16/],
    [['--vp', good], /--vp: needs --viewport/],
    [['--vp', good, '--viewport', '640'], /--viewport: '640' is not WIDTHxHEIGHT/],
    [['--vp', good, '--viewport', '0x480'], /--viewport: viewport: must be/],
    [['--vp', good, '--viewport', '640x480', '--min-px', '-1'], /--min-px: min_px: must be 0 or more/],
    [['--vp', good, '--viewport', '640x480', '--min-px', 'big'], /--min-px: 'big' is not a number/],
    [['--vp', new Array(16).fill(0).join(','), '--viewport', '640x480'], /--vp: vp: a frustum plane has a zero normal/],
    [['--min-px', '3'], /--min-px: needs --vp/],
    [['--view', write('ok.json', `{"vp":[${good}],"viewport":[10,10]}`), '--vp', good], /--view: not with --vp/],
    [['--vp'], /--vp needs a value/],
  ];
  for (const [args, re] of cases) {
    const r = await run('rigctl', ['--url', server.url, 'watch', 'cams', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.split('\n')[0], re, args.join(' '));
    assert.equal(r.stdout, '');
  }
});
