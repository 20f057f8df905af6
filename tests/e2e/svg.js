'use strict';
/*
 * SVG artwork against the real rigd and a real SQLite file: an SVG rig
 * imported over HTTP and with rigctl (the asset and one node per manifest
 * entry in one batch, every world matrix the identity at rest), manifest
 * refusals that name the entry and change nothing (not even a scene),
 * hostile documents refused or stored stripped with the report, the asset
 * routes' headers, time travel (an asset is not there before its seq), a
 * log exported and imported bit for bit with its assets (and a tampered one
 * refused), undo and redo of an import, a restart and rigd check (a tampered
 * asset found), and the demo2d scene of --demo2d on. Everything the
 * server sends is checked against the schema.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const {
  startRigd, get, post, tree, postEdit, assertSchema, run, tempDir, Client,
} = require('../lib/rigd.js');

const DEMO = path.join(__dirname, '..', '..', 'web', 'demo');
const HOSTILE = path.join(__dirname, '..', 'svg', 'hostile');
const demoSvg = fs.readFileSync(path.join(DEMO, 'demo2d.svg'), 'utf8');
const demoManifest = JSON.parse(fs.readFileSync(path.join(DEMO, 'demo2d.json'), 'utf8'));
const IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

let server;

test.before(async () => {
  server = await startRigd();
});

test.after(async () => {
  if (server && !server.exited) assert.equal(await server.stop('SIGTERM'), 0);
});

async function importSvg(srv, scene, body) {
  const r = await post(srv, `/api/scenes/${scene}/svg`, body);
  assertSchema(r.status === 200 ? 'HttpSvgImported' : 'HttpError', r.json);
  return r;
}

async function assets(srv, scene, at) {
  const r = await get(srv, `/api/scenes/${scene}/assets${at === undefined ? '' : `?at=${at}`}`);
  assert.equal(r.status, 200, r.text);
  assertSchema('HttpAssetList', r.json);
  return r.json;
}

async function sceneNames(srv) {
  return (await get(srv, '/api/scenes')).json.scenes.map((s) => s.name);
}

const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex');

test('an SVG rig imports as one batch: the asset and a node per entry, at rest the identity', async () => {
  const r = await importSvg(server, 'hero', { file: 'hero.svg', svg: demoSvg, manifest: demoManifest });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.seq, 1);
  assert.equal(r.json.recomputed, demoManifest.length);
  const rep = r.json.report;
  assert.equal(rep.file, 'hero.svg');
  assert.equal(rep.nodes, demoManifest.length);
  assert.deepEqual(rep.sanitiser, { removed: [], removed_total: 0 });

  const t = await tree(server, 'hero');
  assert.equal(t.dims, 2);
  assert.equal(t.seq, 1);
  assert.equal(t.nodes.length, demoManifest.length);
  for (const e of demoManifest) {
    const n = t.nodes.find((x) => x.id === e.id);
    assert.ok(n, e.id);
    assert.equal(n.parent, e.parent);
    assert.deepEqual(n.pivot, [e.pivot[0], e.pivot[1], 0]);
    assert.deepEqual(n.t, [0, 0, 0]);
    assert.deepEqual(n.world, IDENTITY, `${e.id} at rest`);
    assert.equal(n.layer, `hero.svg#${e.id}`);
    assert.deepEqual(n.z, e.z === undefined ? 0 : e.z);
    assert.equal(n.facing, e.facing === undefined ? null : e.facing);
  }

  const list = await assets(server, 'hero');
  assert.equal(list.length, 1);
  assert.equal(list[0].file, 'hero.svg');
  assert.equal(list[0].seq, 1);
  assert.equal(list[0].sha256, rep.sha256);
  assert.equal(list[0].bytes, rep.bytes);

  const a = await get(server, '/api/scenes/hero/assets/hero.svg');
  assert.equal(a.status, 200);
  assert.equal(a.headers['content-type'], 'image/svg+xml');
  assert.equal(a.headers['x-content-type-options'], 'nosniff');
  const csp = a.headers['content-security-policy'];
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /script-src/);
  assert.equal(a.headers.etag, `"${rep.sha256}"`);
  assert.equal(Buffer.byteLength(a.text), rep.bytes);
  assert.equal(sha256(a.text), rep.sha256);
  for (const e of demoManifest) assert.ok(a.text.includes(`id="${e.id}"`), e.id);

  // Rotation: the manifest's angle, about the pivot.
  const rot = demoManifest.map((e) => ({ ...e, id: `${e.id}_2`, parent: e.parent && `${e.parent}_2` }));
  const svg2 = demoSvg.replace(/id="([a-z_]+)"/g, 'id="$1_2"');
  rot[2].rotation = 30;
  const r2 = await importSvg(server, 'hero', { file: 'hero2.svg', svg: svg2, manifest: rot });
  assert.equal(r2.status, 200, r2.text);
  const t2 = await tree(server, 'hero');
  const arm = t2.nodes.find((n) => n.id === 'upper_arm_r_2');
  assert.ok(Math.abs(arm.angle - 30) < 1e-9, `angle ${arm.angle}`);
  const w = arm.world;  // the pivot stays where it was drawn
  const [px, py] = rot[2].pivot;
  assert.ok(Math.abs(w[0] * px + w[4] * py + w[12] - px) < 1e-9);
  assert.ok(Math.abs(w[1] * px + w[5] * py + w[13] - py) < 1e-9);
  assert.equal((await assets(server, 'hero')).length, 2);
});

test('rigctl import FILE.svg --manifest FILE.json makes the scene from the file name', async () => {
  const dir = tempDir('rigd-svg-');
  const svgPath = path.join(dir, 'walker.svg');
  const manPath = path.join(dir, 'walker.json');
  fs.writeFileSync(svgPath, demoSvg);
  fs.writeFileSync(manPath, JSON.stringify(demoManifest));
  let out = await run('rigctl', ['--url', server.url, 'import', svgPath, '--manifest', manPath]);
  assert.equal(out.code, 0, out.stdout + out.stderr);
  const ans = JSON.parse(out.stdout);
  assertSchema('HttpSvgImported', ans);
  assert.equal(ans.report.file, 'walker.svg');
  assert.equal((await tree(server, 'walker')).nodes.length, demoManifest.length);
  assert.equal((await assets(server, 'walker'))[0].sha256, ans.report.sha256);

  out = await run('rigctl', ['--url', server.url, 'import', svgPath, '--manifest', manPath,
    '--scene', 'walker2']);
  assert.equal(out.code, 0, out.stdout + out.stderr);
  // Refused: the ids exist now. Status 1, the error on stdout.
  out = await run('rigctl', ['--url', server.url, 'import', svgPath, '--manifest', manPath,
    '--scene', 'walker2']);
  assert.equal(out.code, 1);
  assert.equal(JSON.parse(out.stdout).error.code, 'duplicate_id');
  out = await run('rigctl', ['--url', server.url, 'import', svgPath]);
  assert.equal(out.code, 2, 'no --manifest');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('manifest refusals name the entry and change nothing', async () => {
  const m = () => demoManifest.map((e) => ({ ...e }));
  const cases = [
    ['a group the SVG lacks', (x) => { x[3].id = 'elbow'; x[4].parent = 'elbow'; }, 'bad_field', 3],
    ['an unknown parent', (x) => { x[5].parent = 'nobody'; }, 'unknown_node', 5],
    ['a parent cycle', (x) => { x[0].parent = 'hand_r'; }, 'cycle', 0],
    ['a duplicate id', (x) => { x[7] = { ...x[6] }; }, 'duplicate_id', 7],
    ['a pivot of one number', (x) => { x[2].pivot = [1]; }, 'bad_field', 2],
    ['a pivot that is not numbers', (x) => { x[2].pivot = [1, 'a']; }, 'bad_field', 2],
    ['no pivot', (x) => { delete x[1].pivot; }, 'bad_field', 1],
    ['a rotation that is not a number', (x) => { x[4].rotation = '30'; }, 'bad_field', 4],
    ['a z with one facing', (x) => { x[2].z = { right: 3 }; }, 'bad_field', 2],
    ['a z that is a string', (x) => { x[2].z = 'front'; }, 'bad_field', 2],
    ['an unknown facing', (x) => { x[0].facing = 'up'; }, 'bad_field', 0],
    ['an unknown member', (x) => { x[9].scale = 2; }, 'bad_field', 9],
  ];
  let r = await post(server, '/api/scenes', { name: 'stage', dims: 2 });
  assert.equal(r.status, 201, r.text);
  r = await postEdit(server, 'stage', { ops: [{ op: 'create', id: 'ground' }] });
  assert.equal(r.status, 200, r.text);
  const names = await sceneNames(server);
  const before = await tree(server, 'hero');
  const beforeAssets = await assets(server, 'hero');
  const stage = await get(server, '/api/scenes/stage/log');
  for (const [what, change, code, k] of cases) {
    const manifest = m();
    change(manifest);
    for (const scene of ['fresh', 'stage']) {
      const r = await importSvg(server, scene, { file: 'x.svg', svg: demoSvg, manifest });
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assert.equal(r.json.error.code, code, `${what}: ${r.text}`);
      assert.equal(r.json.error.field, 'manifest', what);
      assert.ok(r.json.error.message.startsWith(`manifest[${k}]`), `${what}: ${r.json.error.message}`);
    }
  }
  // An id the scene has, the whole body, the file name, a 3D scene.
  r = await importSvg(server, 'hero', { file: 'x.svg', svg: demoSvg, manifest: demoManifest });
  assert.equal(r.json.error.code, 'duplicate_id');
  assert.match(r.json.error.message, /^manifest\[0\] \('torso'\)/);
  r = await importSvg(server, 'fresh', { file: '.hidden.svg', svg: demoSvg, manifest: demoManifest });
  assert.equal(r.json.error.code, 'bad_field');
  assert.equal(r.json.error.field, 'file');
  r = await importSvg(server, 'fresh', { file: 'x.svg', svg: demoSvg, manifest: [] });
  assert.equal(r.json.error.field, 'manifest');
  r = await importSvg(server, 'fresh', { file: 'x.svg', manifest: demoManifest });
  assert.equal(r.json.error.field, 'svg');
  r = await importSvg(server, 'demo', { file: 'x.svg', svg: demoSvg, manifest: demoManifest });
  assert.equal(r.json.error.code, 'bad_field');
  assert.equal(r.json.error.field, 'scene');
  r = await importSvg(server, 'hero', {
    file: 'hero.svg', svg: demoSvg.replace(/id="([a-z_]+)"/g, 'id="$1_3"'),
    manifest: demoManifest.map((e) => ({ ...e, id: `${e.id}_3`, parent: e.parent && `${e.parent}_3` })),
  });
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.error.code, 'asset_exists');

  assert.deepEqual(await sceneNames(server), names, 'no scene was made');
  assert.equal((await get(server, '/api/scenes/stage/log')).text, stage.text);
  assert.deepEqual(await assets(server, 'stage'), []);
  assert.deepEqual(await tree(server, 'hero'), before);
  assert.deepEqual(await assets(server, 'hero'), beforeAssets);
});

test('hostile SVG: refused, or stored stripped with the report in the answer', async () => {
  const names = await sceneNames(server);
  const manifest = [{ id: 'torso', pivot: [0, 0] }];
  for (const [file, code] of [['billion_laughs.svg', 'bad_svg'], ['xxe_file.svg', 'bad_svg'],
    ['xxe_parameter.svg', 'bad_svg'], ['root_html.svg', 'bad_svg'], ['not_wellformed.svg', 'bad_svg'],
    ['too_deep.svg', 'limit']]) {
    const svg = fs.readFileSync(path.join(HOSTILE, file), 'utf8');
    const r = await importSvg(server, 'evil', { file: 'evil.svg', svg, manifest });
    assert.equal(r.status, 400, `${file}: ${r.text}`);
    assert.equal(r.json.error.code, code, file);
    assert.equal(r.json.error.field, 'svg', file);
  }
  const big = `<svg xmlns="http://www.w3.org/2000/svg"><g id="torso"/><desc>${'x'.repeat(2 << 20)}</desc></svg>`;
  let r = await importSvg(server, 'evil', { file: 'evil.svg', svg: big, manifest });
  assert.equal(r.json.error.code, 'limit');
  assert.match(r.json.error.message, /max_bytes/);
  assert.deepEqual(await sceneNames(server), names);

  const svg = fs.readFileSync(path.join(HOSTILE, 'script.svg'), 'utf8');
  r = await importSvg(server, 'evil', { file: 'evil.svg', svg, manifest });
  assert.equal(r.status, 200, r.text);
  const rep = r.json.report.sanitiser;
  assert.equal(rep.removed_total, 4);
  assert.deepEqual(rep.removed.map((x) => x.what.split(' (')[0]),
    ['attribute onload', 'element script', 'attribute onclick', 'attribute onMouseOver']);
  assert.equal(rep.removed[2].where, 'svg/g#torso');
  const a = await get(server, '/api/scenes/evil/assets/evil.svg');
  assert.equal(a.status, 200);
  assert.doesNotMatch(a.text, /script|onload|onclick|onmouseover|alert/i);
  assert.match(a.text, /<g id="torso">/);
});

test('time travel: an asset is not there before the batch that stored it', async () => {
  let r = await post(server, '/api/scenes', { name: 'late', dims: 2 });
  assert.equal(r.status, 201, r.text);
  r = await postEdit(server, 'late', { ops: [{ op: 'create', id: 'ground' }] });
  assert.equal(r.status, 200, r.text);
  // A layer must name an asset the scene has, and one of its elements.
  for (const [layer, why] of [['late.svg#torso', /no asset 'late.svg'/],
    ['hero.svg#torso', /no asset 'hero.svg'/]]) {
    r = await postEdit(server, 'late', { ops: [{ op: 'set', id: 'ground', layer }] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'bad_field');
    assert.equal(r.json.error.field, 'layer');
    assert.match(r.json.error.message, why);
  }
  r = await importSvg(server, 'late', { file: 'late.svg', svg: demoSvg, manifest: demoManifest });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.seq, 2);
  assert.deepEqual(await assets(server, 'late', 0), []);
  assert.deepEqual(await assets(server, 'late', 1), []);
  assert.equal((await assets(server, 'late', 2))[0].file, 'late.svg');
  let a = await get(server, '/api/scenes/late/assets/late.svg?at=1');
  assert.equal(a.status, 404);
  assert.equal(a.json.error.code, 'unknown_asset');
  a = await get(server, '/api/scenes/late/assets/late.svg?at=2');
  assert.equal(a.status, 200);
  a = await get(server, '/api/scenes/late/assets/late.svg?at=3');
  assert.equal(a.status, 400);
  assert.equal(a.json.error.code, 'bad_seq');
  a = await get(server, '/api/scenes/late/assets/other.svg');
  assert.equal(a.json.error.code, 'unknown_asset');
  a = await get(server, '/api/scenes/nope/assets');
  assert.equal(a.json.error.code, 'unknown_scene');
  assert.equal((await tree(server, 'late', 1)).nodes.length, 1);
  r = await postEdit(server, 'late', { ops: [{ op: 'set', id: 'ground', layer: 'late.svg#elbow' }] });
  assert.equal(r.status, 400, r.text);
  assert.match(r.json.error.message, /asset 'late.svg' has no element with id 'elbow'/);
  r = await postEdit(server, 'late', { ops: [{ op: 'set', id: 'ground', layer: 'late.svg#head' }] });
  assert.equal(r.status, 200, r.text);
  assert.equal((await tree(server, 'late')).nodes.find((n) => n.id === 'ground').layer, 'late.svg#head');
  // Undoing the import takes its nodes, not the artwork (assets are immutable).
});

test('an import undone by its client takes the nodes, not the artwork; redo binds them again', async () => {
  const r = await post(server, '/api/scenes/undoable/svg?client=artist',
    { file: 'u.svg', svg: demoSvg, manifest: demoManifest });
  assert.equal(r.status, 200, r.text);
  assertSchema('HttpSvgImported', r.json);
  const c = await Client.connect(server);
  try {
    let ack = await c.request({ type: 'undo', scene: 'undoable', client: 'artist' });
    assert.equal(ack.type, 'ack', `${ack.code}: ${ack.message}`);
    assert.equal((await tree(server, 'undoable')).nodes.length, 0);
    assert.equal((await assets(server, 'undoable')).length, 1);
    ack = await c.request({ type: 'redo', scene: 'undoable', client: 'artist' });
    assert.equal(ack.type, 'ack', `${ack.code}: ${ack.message}`);
    const t = await tree(server, 'undoable');
    assert.equal(t.nodes.length, demoManifest.length);
    assert.ok(t.nodes.every((n) => n.layer === `u.svg#${n.id}`));
  } finally {
    c.close();
  }
});

test('a log with assets exports and imports bit for bit; a tampered one is refused', async () => {
  const r0 = await postEdit(server, 'hero', { ops: [{ op: 'set', id: 'head', angle: 15 }] });
  assert.equal(r0.status, 200, r0.text);
  const log = await get(server, '/api/scenes/hero/log');
  assert.equal(log.status, 200);
  const lines = log.text.trim().split('\n').map((l) => JSON.parse(l));
  for (const l of lines) assertSchema('LogLine', l);
  assert.equal(lines[0].assets[0].file, 'hero.svg');
  assert.equal(lines[0].assets[0].sha256, sha256(lines[0].assets[0].svg));
  assert.equal(lines[2].assets, undefined);

  let r = await post(server, '/api/scenes', { name: 'hero_copy', dims: 2 });
  assert.equal(r.status, 201, r.text);
  r = await post(server, '/api/scenes/hero_copy/log', log.text);
  assert.equal(r.status, 200, r.text);
  assert.equal((await get(server, '/api/scenes/hero_copy/log')).text, log.text);
  assert.deepEqual((await tree(server, 'hero_copy')).nodes, (await tree(server, 'hero')).nodes);
  assert.deepEqual(await assets(server, 'hero_copy'), await assets(server, 'hero'));
  assert.equal((await get(server, '/api/scenes/hero_copy/assets/hero.svg')).text,
    (await get(server, '/api/scenes/hero/assets/hero.svg')).text);
  assert.deepEqual(await assets(server, 'hero_copy', 1), await assets(server, 'hero', 1));

  r = await post(server, '/api/scenes', { name: 'tampered', dims: 2 });
  assert.equal(r.status, 201, r.text);
  const bad = [
    // bytes changed, digest kept
    (l) => { l.assets[0].svg = l.assets[0].svg.replace('<title>', '<script>alert(1)</script><title>'); },
    // a digest that names other bytes
    (l) => { l.assets[0].sha256 = '0'.repeat(64); },
    // an asset that is not sanitised
    (l) => {
      l.assets[0].svg = l.assets[0].svg.replace('<title>', '<!--x--><title>');
      l.assets[0].sha256 = sha256(l.assets[0].svg);
    },
  ];
  for (const change of bad) {
    const first = JSON.parse(JSON.stringify(lines[0]));
    change(first);
    const text = [JSON.stringify(first), ...log.text.trim().split('\n').slice(1)].join('\n');
    r = await post(server, '/api/scenes/tampered/log', text);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'bad_svg');
    assert.match(r.json.error.message, /^line 1: asset 'hero.svg'/);
    assert.equal((await tree(server, 'tampered')).seq, 0);
    assert.deepEqual(await assets(server, 'tampered'), []);
  }
});

test('assets survive a restart and rigd check; --demo2d on imports the demo character', async () => {
  const before = await assets(server, 'hero');
  const bytes = (await get(server, '/api/scenes/hero/assets/hero.svg')).text;
  assert.equal(await server.stop('SIGTERM'), 0);
  const check = await run('rigd', ['check', '--db', server.db]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  // rigd check proves each asset's digest, sanitised bytes and ids.
  if (spawnSync('sqlite3', ['-version']).status === 0) {
    const sql = (q) => spawnSync('sqlite3', [server.db, q], { encoding: 'utf8' });
    const row = "file = 'hero.svg' AND scene_id = (SELECT id FROM scenes WHERE name = 'hero')";
    const saved = sql(`SELECT hex(svg) FROM assets WHERE ${row}`).stdout.trim();
    sql(`UPDATE assets SET svg = CAST(replace(CAST(svg AS TEXT), '<title>', '<!--x--><title>') AS BLOB) WHERE ${row}`);
    const bad = await run('rigd', ['check', '--db', server.db]);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    assert.match(bad.stdout + bad.stderr, /asset 'hero.svg': its bytes do not have its sha256/);
    assert.match(bad.stdout + bad.stderr, /asset 'hero.svg': its bytes are not what the sanitiser writes/);
    sql(`UPDATE assets SET svg = X'${saved}' WHERE ${row}`);
    const good = await run('rigd', ['check', '--db', server.db]);
    assert.equal(good.code, 0, good.stdout + good.stderr);
  }
  server = await startRigd({ db: server.db, dir: server.dir, args: ['--demo2d', 'on'] });
  assert.deepEqual(await assets(server, 'hero'), before);
  assert.equal((await get(server, '/api/scenes/hero/assets/hero.svg')).text, bytes);

  const t = await tree(server, 'demo2d');
  assert.equal(t.dims, 2);
  assert.deepEqual(t.nodes.map((n) => n.id).sort(), demoManifest.map((e) => e.id).sort());
  for (const n of t.nodes) {
    assert.deepEqual(n.world, IDENTITY, n.id);
    assert.equal(n.layer, `demo2d.svg#${n.id}`);
  }
  // Arms swap their draw order with the facing.
  const z = (id) => t.nodes.find((n) => n.id === id).z;
  assert.ok(z('upper_arm_r').right > z('torso') && z('upper_arm_r').left < z('torso'));
  assert.ok(z('upper_arm_l').right < z('torso') && z('upper_arm_l').left > z('torso'));
  const list = await assets(server, 'demo2d');
  assert.equal(list.length, 1);
  assert.equal(list[0].file, 'demo2d.svg');

  // Without the files in the web root rigd serves on, without demo2d.
  const other = await startRigd({ web: tempDir('rigd-web-'), args: ['--demo2d', 'on'] });
  try {
    assert.deepEqual(await sceneNames(other), ['demo']);
    assert.match(other.stderr, /demo2d not imported/);
  } finally {
    assert.equal(await other.stop('SIGTERM'), 0);
  }

  // A second start with the flag keeps the scene as it is.
  const seq = t.seq;
  assert.equal(await server.stop('SIGTERM'), 0);
  server = await startRigd({ db: server.db, dir: server.dir, args: ['--demo2d', 'on'] });
  assert.equal((await tree(server, 'demo2d')).seq, seq);
});
