'use strict';
/*
 * rigctl import SCENE FILE.json against the real rigd: a Spine file
 * (tests/data/spine/chain.json) with the .atlas found beside it and a PNG
 * page written here, and the shared DragonBones character mecha_1406 with
 * its _tex.json and page, each posted as one body by the real rigctl. The
 * scene gets one node per bone and slot, the assets list the skeleton
 * (Spine's stored bytes are the file's), the atlas and the page; a missing
 * page, a file of no known format, a missing file and bad arguments give
 * clear errors with status 1 (2 for usage).
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const {
  SOURCE_DIR, startRigd, get, tree, assertSchema, run, tempDir,
} = require('../lib/rigd.js');
const { encodePng } = require('../lib/png.js');

const CHAIN = path.join(SOURCE_DIR, 'tests', 'data', 'spine', 'chain.json');
const MECHA = path.join(process.env.RIGD_GLTF_SAMPLES || path.join(SOURCE_DIR, '..', 'shared', 'gltf-samples'),
  '..', 'dragonbones', 'mecha_1406');

let server;
let dir;

test.before(async () => {
  server = await startRigd();
  dir = tempDir('rigd-rigctl-skel-');
});

test.after(async () => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

/* A w x h RGBA PNG, each pixel its own colour from x and y. */
const makePng = (w, h) => encodePng(w, h, (x, y) => [x * 4, y * 4, 128, 255]);

const chainAtlas = 'chain.png\nsize: 64, 64\nfilter: Linear, Linear\ntorso\n  bounds: 0, 0, 40, 60\n'
  + 'arm\n  bounds: 40, 0, 10, 30\nface\n  bounds: 0, 0, 30, 30\n';

const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

/* The scene's assets, in the order of the import's report: the skeleton,
 * its atlas, the pages (the list itself comes sorted by file name). */
async function assets(scene) {
  const r = await get(server, `/api/scenes/${scene}/assets`);
  assert.equal(r.status, 200, r.text);
  assertSchema('HttpAssetList', r.json);
  const rank = (a) => (a.kind === 'png' ? 2 : a.kind.endsWith('-atlas') ? 1 : 0);
  return [...r.json].sort((x, y) => rank(x) - rank(y));
}

const rigctl = (...args) => run('rigctl', ['--url', server.url, ...args]);

/* A copy of chain.json in 'sub' of the temp dir, with the atlas and page
 * beside it unless told otherwise. */
function chainCopy(sub, { atlas = true, page = true } = {}) {
  const d = path.join(dir, sub);
  fs.mkdirSync(d, { recursive: true });
  fs.copyFileSync(CHAIN, path.join(d, 'chain.json'));
  if (atlas) fs.writeFileSync(path.join(d, 'chain.atlas'), chainAtlas);
  if (page) fs.writeFileSync(path.join(d, 'chain.png'), makePng(64, 64));
  return path.join(d, 'chain.json');
}

test('a Spine file imports with the atlas beside it and its page', async () => {
  const file = chainCopy('spine');
  const out = await rigctl('import', 'chain', file);
  assert.equal(out.code, 0, out.stdout + out.stderr);
  const ans = JSON.parse(out.stdout);
  assertSchema('HttpSkeletonImported', ans);
  const rig = JSON.parse(fs.readFileSync(CHAIN, 'utf8'));
  assert.equal(ans.report.format, 'Spine');
  assert.equal(ans.report.bones, rig.bones.length);
  assert.equal(ans.report.slots, rig.slots.length);
  assert.equal(ans.report.regions, 3);
  assert.equal(ans.report.pages_missing, 0);
  const t = await tree(server, 'chain');
  assert.equal(t.dims, 2);
  const names = t.nodes.map((n) => n.name).sort();
  assert.deepEqual(names, [...rig.bones.map((b) => b.name), ...rig.slots.map((s) => `slot:${s.name}`)].sort());
  const list = await assets('chain');
  assert.deepEqual(list.map((a) => [a.file, a.kind]),
    [['spine.json', 'spine'], ['spine.json.atlas', 'spine-atlas'], ['chain.png', 'png']]);
  // The stored skeleton is the file's bytes, from its '{' to its '}'.
  assert.equal(list[0].sha256, sha256(fs.readFileSync(CHAIN, 'utf8').trim()));
  // The atlas is stored as posted.
  assert.equal(list[1].sha256, sha256(chainAtlas));
});

test('--atlas and --file: the atlas named, the stored file renamed', async () => {
  const file = chainCopy('spine2', { atlas: false });
  const other = path.join(dir, 'spine2', 'other.atlas');
  fs.writeFileSync(other, chainAtlas);
  const out = await rigctl('import', 'chain2', file, '--atlas', other, '--file', 'hero.json');
  assert.equal(out.code, 0, out.stdout + out.stderr);
  const list = await assets('chain2');
  assert.deepEqual(list.map((a) => [a.file, a.kind]),
    [['hero.json', 'spine'], ['hero.json.atlas', 'spine-atlas'], ['chain.png', 'png']]);
});

test('a Spine file without an atlas beside it imports alone', async () => {
  const file = chainCopy('spine3', { atlas: false, page: false });
  const out = await rigctl('import', 'chain3', file);
  assert.equal(out.code, 0, out.stdout + out.stderr);
  assert.deepEqual((await assets('chain3')).map((a) => a.kind), ['spine']);
});

test('the DragonBones character mecha_1406 imports with its _tex.json and page', async (t) => {
  const ske = path.join(MECHA, 'mecha_1406_ske.json');
  if (!fs.existsSync(ske)) {
    t.skip(`${MECHA} is absent`);
    return;
  }
  const out = await rigctl('import', 'mecha', ske);
  assert.equal(out.code, 0, out.stdout + out.stderr);
  const ans = JSON.parse(out.stdout);
  assertSchema('HttpSkeletonImported', ans);
  const file = JSON.parse(fs.readFileSync(ske, 'utf8'));
  const arm = file.armature[0];
  const tex = JSON.parse(fs.readFileSync(path.join(MECHA, 'mecha_1406_tex.json'), 'utf8'));
  assert.equal(ans.report.format, 'DragonBones');
  assert.equal(ans.report.bones, arm.bone.length);
  assert.equal(ans.report.slots, arm.slot.length);
  assert.equal(ans.report.regions, tex.SubTexture.length);
  assert.equal(ans.report.pages_missing, 0);
  const nodes = (await tree(server, 'mecha')).nodes;
  assert.equal(nodes.length, arm.bone.length + arm.slot.length);
  const names = new Set(nodes.map((n) => n.name));
  for (const b of arm.bone) assert.ok(names.has(b.name), b.name);
  for (const s of arm.slot) assert.ok(names.has(`slot:${s.name}`), s.name);
  const list = await assets('mecha');
  assert.deepEqual(list.map((a) => a.kind), ['dragonbones', 'dragonbones-atlas', 'png']);
  assert.equal(list[2].file, tex.imagePath);
  // --armature names one the file has; an unknown one is the server's refusal.
  const bad = await rigctl('import', 'mecha2', ske, '--armature', 'nobody');
  assert.equal(bad.code, 1);
  assert.equal(JSON.parse(bad.stdout).error.code, 'bad_skeleton');
  const good = await rigctl('import', 'mecha3', ske, '--armature', arm.name, '--file', 'm.json');
  assert.equal(good.code, 0, good.stdout + good.stderr);
  assert.equal((await assets('mecha3'))[0].file, 'm.json');
});

test('a missing page, an unknown format, a missing file: clear errors, status 1', async () => {
  const noPage = chainCopy('nopage', { page: false });
  let out = await rigctl('import', 'nopage', noPage);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /page 'chain\.png' is missing/);
  assert.match(out.stderr, /nopage\/chain\.atlas/);

  const other = path.join(dir, 'other.json');
  fs.writeFileSync(other, '{"asset": {"version": "2.0"}}');
  out = await rigctl('import', 'other', other);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /other\.json is not a skeleton file: neither a Spine/);

  const notJson = path.join(dir, 'broken.json');
  fs.writeFileSync(notJson, '{"skeleton": ');
  out = await rigctl('import', 'broken', notJson);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /broken\.json is not a skeleton file: not JSON/);

  // A value followed by more bytes would break the body the file goes into.
  const trailing = path.join(dir, 'trailing.json');
  fs.writeFileSync(trailing, `${fs.readFileSync(CHAIN, 'utf8')}\n{}`);
  out = await rigctl('import', 'trailing', trailing);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /trailing\.json is not a skeleton file: not JSON/);

  out = await rigctl('import', 'gone', path.join(dir, 'gone.json'));
  assert.equal(out.code, 1);
  assert.match(out.stderr, /cannot open .*gone\.json/);

  const badAtlas = chainCopy('badatlas', { atlas: false });
  fs.writeFileSync(path.join(dir, 'badatlas', 'chain.atlas'), 'chain.png\nsize: 64, 64\nr\n  bounds: 60, 60, 10, 10\n');
  out = await rigctl('import', 'badatlas', badAtlas);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /badatlas\/chain\.atlas: .*'r'/);

  out = await rigctl('import', 'gone', CHAIN, '--atlas', path.join(dir, 'none.atlas'));
  assert.equal(out.code, 1);
  assert.match(out.stderr, /cannot open .*none\.atlas/);

  // None of these made a scene.
  const scenes = (await get(server, '/api/scenes')).json.scenes.map((s) => s.name);
  for (const s of ['nopage', 'other', 'broken', 'trailing', 'gone', 'badatlas']) assert.ok(!scenes.includes(s), s);
});

test('bad arguments exit 2', async () => {
  const file = chainCopy('usage');
  for (const args of [[file, '--atlas'], [file, '--bogus', 'x'], [file, '--armature', 'a']]) {
    const out = await rigctl('import', 'usage', ...args);
    assert.equal(out.code, 2, `${args.join(' ')}: ${out.stderr}`);
    assert.match(out.stderr, /^rigctl: /);
  }
});
