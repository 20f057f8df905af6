'use strict';
/*
 * Skeleton imports against the real rigd and a real SQLite file: a Spine
 * 4.2 rig with its atlas and a PNG page, and the DragonBones character
 * mecha_1406 with its _tex.json and page, each imported over HTTP as one
 * batch with its assets (bones as nodes named exactly, slots as their
 * children in draw order, the world matrices of Spine's formulas carried
 * into rigd's y-down frame); the assets listed with their kinds and served
 * with their own media types and policy; hostile pages and atlases refused
 * with nothing stored, not even the scene; the log exported and imported
 * bit for bit with its PNG page; undo; a restart and rigd check. Every
 * answer is checked against the schema.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const {
  SOURCE_DIR, startRigd, get, post, tree, assertSchema, run, Client,
} = require('../lib/rigd.js');
const { encodePng, decodePng } = require('../lib/png.js');

const SPINE = path.join(SOURCE_DIR, 'tests', 'data', 'spine');
const MECHA = path.join(process.env.RIGD_GLTF_SAMPLES || path.join(SOURCE_DIR, '..', 'shared', 'gltf-samples'),
  '..', 'dragonbones', 'mecha_1406');

let server;

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

/* A w x h RGBA PNG whose pixel (x, y) is colour(x, y) = [r, g, b, a], with
 * a text chunk the server must strip. */
const makePng = (w, h, colour) => encodePng(w, h, colour, [['tEXt', Buffer.from('Comment\0made by the test')]]);

const quadrants = (x, y) => (x < 32 ? (y < 32 ? [255, 0, 0, 255] : [0, 255, 0, 255])
  : (y < 32 ? [0, 0, 255, 255] : [255, 255, 255, 128]));
const PAGE = makePng(64, 64, quadrants);

/* A Spine rig of three bones and two slots, with shear, a reflected and
 * scaled parent and one bone in each of two inherit modes. */
const spineRig = {
  skeleton: { hash: 'e2e', spine: '4.2.43', x: 0, y: 0, width: 64, height: 64 },
  bones: [
    { name: 'root' },
    { name: 'hip', parent: 'root', x: 10, y: 20, rotation: 30, scaleX: -1.5, scaleY: 0.5 },
    { name: 'arm l', parent: 'hip', x: 5, y: -2, rotation: 45, shearX: 10, shearY: -5, length: 12 },
    { name: 'hand', parent: 'arm l', x: 12, rotation: -20, scaleX: 2, inherit: 'noScale' },
    { name: 'badge', parent: 'hip', x: 3, y: 4, rotation: 15, inherit: 'onlyTranslation' },
  ],
  slots: [
    { name: 'body', bone: 'hip', attachment: 'red' },
    { name: 'arm l', bone: 'arm l', attachment: 'blue' },
    { name: 'badge', bone: 'badge' },
  ],
  skins: [{ name: 'default', attachments: {
    body: { red: { x: 0, y: 0, width: 32, height: 32 } },
    'arm l': { blue: { x: 6, y: 0, rotation: 90, width: 32, height: 32 }, green: { width: 32, height: 32 } },
  } }],
};
const spineAtlas = 'page.png\nsize: 64, 64\nfilter: Linear, Linear\nred\n  bounds: 0, 0, 32, 32\nblue\n'
  + '  bounds: 32, 0, 32, 32\ngreen\n  bounds: 0, 32, 32, 32\n';

/* Spine's world transform of a bone (y-up), as its JSON format documents
 * it, for the modes this rig uses: normal, onlyTranslation, noScale. */
function spineWorlds(bones) {
  const rad = Math.PI / 180;
  const out = {};
  for (const b of bones) {
    const rot = b.rotation || 0, sx = b.scaleX ?? 1, sy = b.scaleY ?? 1;
    const shx = b.shearX || 0, shy = b.shearY || 0, x = b.x || 0, y = b.y || 0;
    const la = Math.cos((rot + shx) * rad) * sx, lb = Math.cos((rot + 90 + shy) * rad) * sy;
    const lc = Math.sin((rot + shx) * rad) * sx, ld = Math.sin((rot + 90 + shy) * rad) * sy;
    if (!b.parent) {
      out[b.name] = { a: la, b: lb, c: lc, d: ld, x, y };
      continue;
    }
    const p = out[b.parent];
    const w = { x: p.a * x + p.b * y + p.x, y: p.c * x + p.d * y + p.y };
    const mode = b.inherit || 'normal';
    if (mode === 'normal') {
      Object.assign(w, { a: p.a * la + p.b * lc, b: p.a * lb + p.b * ld, c: p.c * la + p.d * lc, d: p.c * lb + p.d * ld });
    } else if (mode === 'onlyTranslation') {
      Object.assign(w, { a: la, b: lb, c: lc, d: ld });
    } else if (mode === 'noScale') {
      const r = rot * rad;
      let za = p.a * Math.cos(r) + p.b * Math.sin(r), zc = p.c * Math.cos(r) + p.d * Math.sin(r);
      let s = Math.hypot(za, zc);
      if (s > 0.00001) s = 1 / s;
      za *= s; zc *= s;
      s = Math.hypot(za, zc);
      if (p.a * p.d - p.b * p.c < 0) s = -s;
      const r2 = Math.PI / 2 + Math.atan2(zc, za);
      const zb = Math.cos(r2) * s, zd = Math.sin(r2) * s;
      const na = Math.cos(shx * rad) * sx, nb = Math.cos((90 + shy) * rad) * sy;
      const nc = Math.sin(shx * rad) * sx, nd = Math.sin((90 + shy) * rad) * sy;
      Object.assign(w, { a: za * na + zb * nc, b: za * nb + zb * nd, c: zc * na + zd * nc, d: zc * nb + zd * nd });
    }
    out[b.name] = w;
  }
  return out;
}

/* rigd's world (column-major 4x4, y down) of a Spine world. */
const toRigd = (w) => [w.a, -w.c, 0, 0, -w.b, w.d, 0, 0, 0, 0, 1, 0, w.x, -w.y, 0, 1];

function assertClose(actual, expected, what, eps = 1e-9) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++)
    assert.ok(Math.abs(actual[i] - expected[i]) <= eps, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
}

async function importSkeleton(srv, format, scene, body, query = '') {
  const r = await post(srv, `/api/scenes/${scene}/${format}${query}`, body);
  assertSchema(r.status === 200 ? 'HttpSkeletonImported' : 'HttpError', r.json);
  return r;
}

async function assets(srv, scene) {
  const r = await get(srv, `/api/scenes/${scene}/assets`);
  assert.equal(r.status, 200, r.text);
  assertSchema('HttpAssetList', r.json);
  return r.json;
}

async function sceneNames(srv) {
  return (await get(srv, '/api/scenes')).json.scenes.map((s) => s.name);
}

const spineBody = () => ({ skeleton: spineRig, atlas: spineAtlas, images: { 'page.png': PAGE.toString('base64') } });

test('a Spine rig imports as one batch with its atlas and page; worlds are Spine\'s, in rigd\'s frame', async () => {
  const r = await importSkeleton(server, 'spine', 'hero', spineBody(), '?client=ed');
  assert.equal(r.status, 200, r.text);
  const rep = r.json.report;
  assert.equal(rep.format, 'Spine');
  assert.equal(rep.file, 'spine.json');
  assert.deepEqual([rep.bones, rep.slots, rep.skins, rep.nodes, rep.regions], [5, 3, 1, 8, 3]);
  assert.deepEqual(rep.assets.map((a) => [a.file, a.kind]),
    [['spine.json', 'spine'], ['spine.json.atlas', 'spine-atlas'], ['page.png', 'png']]);
  const t = await tree(server, 'hero');
  assert.equal(t.dims, 2);
  const byName = Object.fromEntries(t.nodes.map((n) => [n.name, n]));
  // Names exact, ids the reversible encoding.
  assert.equal(byName['arm l'].id, 'arm_20l');
  assert.equal(byName['slot:arm l'].id, 'slot:arm_20l');
  assert.equal(byName['slot:arm l'].parent, 'arm_20l');
  const want = spineWorlds(spineRig.bones);
  for (const b of spineRig.bones) assertClose(byName[b.name].world, toRigd(want[b.name]), b.name);
  // A slot's world is its bone's; the draw order is the slots' order.
  assertClose(byName['slot:body'].world, toRigd(want.hip), 'slot:body');
  assert.deepEqual(t.order, ['slot:body', 'slot:arm_20l']);
  assert.equal(byName['slot:arm l'].layer, 'spine.json#arm_20l.blue');
  assert.equal(byName['slot:badge'].layer, null);
});

test('the assets are listed with their kinds and served with their media types; the page is re-encoded', async () => {
  const list = await assets(server, 'hero');
  assert.deepEqual(list.map((a) => [a.file, a.kind, a.seq]),
    [['page.png', 'png', 1], ['spine.json', 'spine', 1], ['spine.json.atlas', 'spine-atlas', 1]]);
  const png = await get(server, '/api/scenes/hero/assets/page.png');
  assert.equal(png.status, 200);
  assert.equal(png.headers['content-type'], 'image/png');
  assert.match(png.headers['content-security-policy'], /default-src 'none'/);
  const bytes = png.body;
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // Our own encoding: the test's text chunk is gone, the pixels are the same.
  assert.equal(bytes.indexOf('tEXt'), -1);
  const served = decodePng(bytes);
  for (const [x, y] of [[0, 0], [40, 5], [5, 40], [63, 63]]) assert.deepEqual(served.at(x, y), quadrants(x, y));
  assert.equal(png.headers.etag, `"${crypto.createHash('sha256').update(bytes).digest('hex')}"`);
  const skel = await get(server, '/api/scenes/hero/assets/spine.json');
  assert.equal(skel.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(skel.text), spineRig);
  const atlas = await get(server, '/api/scenes/hero/assets/spine.json.atlas');
  assert.match(atlas.headers['content-type'], /^text\/plain/);
  assert.equal(atlas.text, spineAtlas);
});

test('hostile pages, atlases and skeletons are refused, naming what, and store nothing', async () => {
  const before = await sceneNames(server);
  const cases = [
    [(b) => { b.images['page.png'] = PAGE.subarray(0, 60).toString('base64'); }, 'bad_image', 'images', /page\.png/],
    [(b) => { b.images['page.png'] = Buffer.from('GIF89a....').toString('base64'); }, 'bad_image', 'images', /signature/],
    [(b) => { b.images['page.png'] = 'not base64!'; }, 'bad_field', null, /base64/],
    [(b) => { b.images['page.png'] = makePng(64, 32, quadrants).toString('base64'); }, 'bad_atlas', 'atlas', /page\.png/],
    [(b) => { b.atlas = b.atlas.replace('bounds: 32, 0, 32, 32', 'bounds: 40, 0, 32, 32'); }, 'bad_atlas', 'atlas', /blue/],
    [(b) => { delete b.atlas; }, 'bad_field', 'images', /atlas/],
    [(b) => { b.images['other.png'] = PAGE.toString('base64'); }, 'bad_field', 'images', /other\.png/],
    [(b) => { b.skeleton = { ...b.skeleton, skeleton: { ...b.skeleton.skeleton, spine: '3.8.99' } }; }, 'bad_skeleton', 'skeleton.skeleton.spine', /3\.8\.99/],
  ];
  for (const [change, code, field, message] of cases) {
    const body = spineBody();
    change(body);
    const r = await importSkeleton(server, 'spine', 'hostile', body);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, code, r.text);
    if (field) assert.equal(r.json.error.field, field, r.text);
    assert.match(r.json.error.message, message);
  }
  assert.deepEqual(await sceneNames(server), before);
  // A 3D scene refuses a skeleton; an existing id refuses it too.
  const dup = await importSkeleton(server, 'spine', 'hero', spineBody());
  assert.equal(dup.status, 400);
  assert.equal(dup.json.error.code, 'duplicate_id');
});

test('the log exports and imports bit for bit, PNG page included; a tampered page is refused', async () => {
  const log = await get(server, '/api/scenes/hero/log');
  assert.equal(log.status, 200);
  const first = JSON.parse(log.text.split('\n')[0]);
  assert.deepEqual(first.assets.map((a) => [a.file, a.kind]),
    [['page.png', 'png'], ['spine.json', 'spine'], ['spine.json.atlas', 'spine-atlas']]);
  for (const l of log.text.trim().split('\n')) assertSchema('LogLine', JSON.parse(l));
  let r = await post(server, '/api/scenes', { name: 'copy', dims: 2 });
  assert.equal(r.status, 201, r.text);
  r = await post(server, '/api/scenes/copy/log', log.text);
  assert.equal(r.status, 200, r.text);
  assert.equal((await get(server, '/api/scenes/copy/log')).text, log.text);
  const a = await tree(server, 'hero');
  const b = await tree(server, 'copy');
  assert.deepEqual(b.nodes, a.nodes);
  // A page whose pixels changed under its digest, or that is not our encoding.
  const png = first.assets.find((x) => x.kind === 'png');
  for (const bytes of [makePng(64, 64, () => [1, 2, 3, 4]), PAGE]) {
    const line = { ...first, assets: first.assets.map((x) => (x === png
      ? { ...x, base64: bytes.toString('base64'), sha256: crypto.createHash('sha256').update(bytes).digest('hex') } : x)) };
    const text = [JSON.stringify(line), ...log.text.trim().split('\n').slice(1)].join('\n');
    await post(server, '/api/scenes', { name: 'tampered', dims: 2 });
    r = await post(server, '/api/scenes/tampered/log', text);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'bad_image', r.text);
    assert.match(r.json.error.message, /asset 'page\.png'/);
  }
});

test('an import undone by its client takes the nodes and keeps the assets', async () => {
  const c = await Client.connect(server);
  try {
    let ack = await c.request({ type: 'undo', scene: 'hero', client: 'ed' });
    assert.equal(ack.type, 'ack', `${ack.code}: ${ack.message}`);
    assert.equal((await tree(server, 'hero')).nodes.length, 0);
    assert.equal((await assets(server, 'hero')).length, 3);
    ack = await c.request({ type: 'redo', scene: 'hero', client: 'ed' });
    assert.equal(ack.type, 'ack', `${ack.code}: ${ack.message}`);
    assert.equal((await tree(server, 'hero')).nodes.length, 8);
  } finally {
    c.close();
  }
});

test('DragonBones: mecha_1406 imports with its atlas and page', { skip: !fs.existsSync(MECHA) && 'no shared mecha_1406' }, async () => {
  const ske = JSON.parse(fs.readFileSync(path.join(MECHA, 'mecha_1406_ske.json'), 'utf8'));
  const tex = JSON.parse(fs.readFileSync(path.join(MECHA, 'mecha_1406_tex.json'), 'utf8'));
  const page = fs.readFileSync(path.join(MECHA, 'mecha_1406_tex.png'));
  const r = await importSkeleton(server, 'dragonbones', 'mecha',
    { skeleton: ske, atlas: tex, images: { 'mecha_1406_tex.png': page.toString('base64') } });
  assert.equal(r.status, 200, r.text);
  const rep = r.json.report;
  assert.equal(rep.format, 'DragonBones');
  assert.deepEqual([rep.bones, rep.slots, rep.clips, rep.regions], [17, 13, 8, tex.SubTexture.length]);
  /* Its four IK constraints are solved live: kept, named, and nothing
   * differs from the runtime. */
  assert.deepEqual(rep.not_applied, []);
  assert.ok(rep.kept.includes("ik 'calf_l': solved live"), JSON.stringify(rep.kept));
  const t = await tree(server, 'mecha');
  const arm = ske.armature[0];
  assert.equal(t.nodes.length, arm.bone.length + arm.slot.length);
  assert.deepEqual(t.nodes.filter((n) => !n.name.startsWith('slot:')).map((n) => n.name).sort(),
    arm.bone.map((b) => b.name).sort());
  // The page is served as rigd's own encoding of the same pixels.
  const png = await get(server, `/api/scenes/mecha/assets/mecha_1406_tex.png`);
  assert.equal(png.status, 200);
  assert.equal(png.headers['content-type'], 'image/png');
});

test('assets survive a restart and rigd check reads every kind', async () => {
  const before = await tree(server, 'hero');
  assert.equal(await server.stop('SIGTERM'), 0);
  const check = await run('rigd', ['check', '--db', server.db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  server = await startRigd({ dir: server.dir, db: server.db });
  assert.deepEqual(await tree(server, 'hero'), before);
  assert.equal((await assets(server, 'hero')).length, 3);
});
