'use strict';
/*
 * The offline commands as a user meets them: rigd log, apply and check, with
 * their help, their argument errors (exit 2), their runtime errors (exit 1
 * with a reason naming the error code), the lock against a second writer,
 * and check finding a database whose log no longer proves its state.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RIGD = path.join(process.env.RIGD_BUILD_DIR || '', 'rigd');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rigd-cli-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

function rigd(args, input) {
  const r = spawnSync(RIGD, args, { input: input || '', encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const jsonLines = (text) => text.split('\n').filter((l) => l).map((l) => JSON.parse(l));
const batch = (ops, clientSeq) => JSON.stringify({ ops, client: 'cli', client_seq: clientSeq });

test('help and argument errors', () => {
  for (const cmd of ['log', 'apply', 'check']) {
    const h = rigd([cmd, '--help']);
    assert.equal(h.status, 0);
    assert.match(h.out, new RegExp(`^usage: rigd ${cmd} --db FILE`));
  }
  assert.equal(rigd(['help']).status, 0);
  const db = path.join(dir, 'args.db');
  assert.equal(rigd(['log', '--scene', 's']).status, 2); /* no --db */
  assert.equal(rigd(['log', '--db', db]).status, 2); /* no --scene */
  assert.equal(rigd(['apply', '--db', db, '--scene', 'bad name']).status, 2);
  assert.equal(rigd(['log', '--db', db, '--scene', 's', '--from', '-1']).status, 2);
  assert.equal(rigd(['log', '--db', db, '--scene', 's', '--to', 'x']).status, 2);
  assert.equal(rigd(['apply', '--db', db, '--scene', 's', '--sync', 'fast']).status, 2);
  assert.equal(rigd(['check', '--db', db, '--bogus']).status, 2);
  assert.equal(rigd(['check', '--db', db, 'extra']).status, 2);
  /* Readers never create a database. */
  const missing = rigd(['log', '--db', path.join(dir, 'missing.db'), '--scene', 's']);
  assert.equal(missing.status, 1);
  assert.match(missing.err, /\(io\)/);
  assert.equal(fs.existsSync(path.join(dir, 'missing.db')), false);
});

test('apply answers every batch in order, after its commit', () => {
  const db = path.join(dir, 'apply.db');
  const long = JSON.stringify({ ops: [{ op: 'create', id: 'x', name: 'n'.repeat(5 << 20) }] });
  const input = [
    batch([{ op: 'create', id: 'base', t: [0, 0.2, 0] }], 1),
    batch([{ op: 'create', id: 'arm', parent: 'base', t: [0, 0.9, 0], pivot: [0, -0.7, 0] }], 2),
    '',
    'not json',
    batch([{ op: 'set', id: 'ghost', t: [1, 2, 3] }], 3),
    long,
    batch([{ op: 'create', id: 'base' }], 1), /* a resend of line 1 */
    batch([{ op: 'frobnicate', id: 'base' }], 4),
    batch([{ op: 'set', id: 'arm', euler: [0, 0, 40] }], 5),
  ].join('\n') + '\n';
  const r = rigd(['apply', '--db', db, '--scene', 'demo', '--sync', 'normal', '-'], input);
  assert.equal(r.status, 1, r.err); /* some batches were refused */
  const out = jsonLines(r.out);
  assert.deepEqual(out.map((m) => [m.req, m.type, m.code || m.seq]), [
    [1, 'ack', 1], [2, 'ack', 2], [4, 'error', 'bad_json'], [5, 'error', 'unknown_node'],
    [6, 'error', 'too_large'], [7, 'ack', 1], [8, 'error', 'unknown_op'], [9, 'ack', 3],
  ]);
  assert.equal(out[3].op, 0);

  const log = rigd(['log', '--db', db, '--scene', 'demo']);
  assert.equal(log.status, 0, log.err);
  const rows = jsonLines(log.out);
  assert.deepEqual(rows.map((row) => [row.seq, row.client, row.client_seq]),
    [[1, 'cli', 1], [2, 'cli', 2], [3, 'cli', 5]]);
  assert.equal(rows[0].ops[0].id, 'base');
  assert.ok(Number.isInteger(rows[0].time) && rows[0].time > 1.5e15); /* microseconds */
  const part = jsonLines(rigd(['log', '--db', db, '--scene', 'demo', '--from', '2', '--to', '2']).out);
  assert.deepEqual(part.map((row) => row.seq), [2]);
  const unknown = rigd(['log', '--db', db, '--scene', 'nope']);
  assert.equal(unknown.status, 1);
  assert.match(unknown.err, /unknown_scene/);

  const check = rigd(['check', '--db', db]);
  assert.equal(check.status, 0, check.out + check.err);
  assert.match(check.out, /^scene 'demo': ok: 3 batches/m);
  assert.match(check.out, /^check: ok$/m);
  /* All good input: exit 0. */
  const ok = rigd(['apply', '--db', db, '--scene', 'demo', '-'],
    batch([{ op: 'delete', id: 'arm' }], 6) + '\n');
  assert.equal(ok.status, 0, ok.err);
  assert.equal(jsonLines(ok.out)[0].seq, 4);
});

test('a database held by a writer is refused to everyone else', async () => {
  const db = path.join(dir, 'locked.db');
  const holder = spawn(RIGD, ['apply', '--db', db, '--scene', 's', '-'],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  holder.stdout.on('data', (d) => { out += d; });
  holder.stdin.write(batch([{ op: 'create', id: 'a' }], 1) + '\n');
  /* Its first ack means it holds the database. */
  for (let i = 0; i < 200 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 25));
  assert.match(out, /"type":"ack"/);
  for (const args of [['log', '--db', db, '--scene', 's'], ['check', '--db', db],
    ['apply', '--db', db, '--scene', 's', '-']]) {
    const r = rigd(args, '');
    assert.equal(r.status, 1, `${args[0]}: ${r.err}`);
    assert.match(r.err, /in use by another process \(locked\)/);
  }
  holder.stdin.end();
  const code = await new Promise((resolve) => holder.on('close', resolve));
  assert.equal(code, 0);
  assert.equal(rigd(['check', '--db', db]).status, 0);
});

test('check proves a log that no longer matches its state wrong', (t) => {
  if (spawnSync('sqlite3', ['-version']).status !== 0) {
    t.skip('no sqlite3 command to tamper with a database');
    return;
  }
  const db = path.join(dir, 'tamper.db');
  const lines = [batch([{ op: 'create', id: 'a' }], 1)];
  for (let i = 2; i <= 20; i++) lines.push(batch([{ op: 'set', id: 'a', t: [i, 0, 0] }], i));
  assert.equal(rigd(['apply', '--db', db, '--scene', 's', '--snapshot-ops', '10', '-'],
    lines.join('\n') + '\n').status, 0);
  assert.equal(rigd(['check', '--db', db]).status, 0);
  /* A stored inverse that does not undo its batch. */
  const sql = spawnSync('sqlite3', [db,
    'UPDATE edits SET inverse = \'[{"op":"set","id":"a","t":[9,9,9]}]\' WHERE seq = 7;']);
  assert.equal(sql.status, 0, String(sql.stderr));
  const bad = rigd(['check', '--db', db]);
  assert.equal(bad.status, 1);
  assert.match(bad.out, /seq 7: the stored inverse differs/);
  assert.match(bad.out, /^check: FAILED \(storage\)$/m);
  /* A gap in the log: the scene no longer loads. */
  spawnSync('sqlite3', [db, 'DELETE FROM snapshots; DELETE FROM edits WHERE seq = 3;']);
  const gap = rigd(['check', '--db', db]);
  assert.equal(gap.status, 1);
  assert.match(gap.err, /seq 4 where 3 belongs \(storage\)/);
});
