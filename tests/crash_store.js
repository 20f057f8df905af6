'use strict';
/*
 * The crash test of the durable log.
 *
 * A child `rigd apply` applies batches from its standard input as fast as it
 * can and prints each ack after its commit; it is killed with SIGKILL at
 * random moments, at least 20 times, and restarted on the same database.
 * Each restart resends from a little before the last acknowledged batch, as
 * a client that lost its connection would: batches already stored (acked,
 * or committed but killed before their ack was printed) must be acknowledged
 * with their original seq and never applied twice. After every kill: every
 * acknowledged batch is in the log with the seq it was acknowledged with,
 * the log's seqs run 1..n without a gap, and `rigd check` passes (SQLite's
 * integrity_check, every snapshot and inverse equal to a replay, the loaded
 * scene equal to a full replay). Snapshots are taken often, so kills also
 * land in commits that write one. The last run resends everything.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RIGD = path.join(process.env.RIGD_BUILD_DIR || '', 'rigd');
const SANITIZED = /^(ON|1|TRUE|YES)$/i.test(process.env.RIGD_SANITIZE || '');
const KILLS = 22;             /* kills that must land */
const MAX_ROUNDS = 60;
/* How long a child runs before it is killed, in ms: from "still opening
 * the database" to "well into its input". */
const KILL_MIN_MS = SANITIZED ? 150 : 5;   /* a sanitized rigd takes ~150 ms to open */
const KILL_MAX_MS = SANITIZED ? 450 : 150;
/* A restart resends up to this many batches before the first unacked one,
 * then new ones: 'window' in all, grown whenever a child got through its
 * whole input before the kill. */
const RESEND_MAX = 300;
const WINDOW_START = 3000;

/* A deterministic random source, so that a failure can be replayed. */
let seed = Number(process.env.CRASH_SEED || Date.now() % 1000000);
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

/* Line i (1-based) of the input: client "crash", client_seq i. The first
 * lines build a chain; then sets on it, and now and then a node created
 * and deleted again. */
function batchLine(i) {
  let ops;
  if (i === 1) {
    ops = [{ op: 'create', id: 'j0', t: [0, 1, 0] }];
  } else if (i <= 10) {
    ops = [{ op: 'create', id: `j${i - 1}`, parent: `j${i - 2}`, t: [0, 1, 0], euler: [0, 0, 5] }];
  } else if (i % 50 === 0) {
    ops = [{ op: 'create', id: `tmp${i}`, parent: `j${i % 10}`, t: [i % 7, 0, 1] }];
  } else if (i % 50 === 25 && i > 50) {
    ops = [{ op: 'delete', id: `tmp${i - 25}` }];
  } else {
    const k = i % 10;
    ops = [{ op: 'set', id: `j${k}`, t: [Math.sin(i), 1, Math.cos(i) / 3],
      r: [Math.sin(i / 7), 0.25, Math.cos(i / 5), 1 + (i % 3)] }];
    if (i % 3 === 0) ops.push({ op: 'set', id: `j${(k + 3) % 10}`, s: [1, 1 + (i % 5) / 10, 1] });
  }
  return JSON.stringify({ ops, client: 'crash', client_seq: i });
}

/* Runs rigd to completion; resolves with its status and output. */
function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(RIGD, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/* Starts `rigd apply` with 'text' on its standard input; resolves with its
 * complete output lines once it exits (killed after 'killAfterMs', or on its
 * own when that is null). */
function applyOnce(db, text, killAfterMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(RIGD, ['apply', '--db', db, '--scene', 'crash', '--snapshot-ops', '300',
      '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.stdin.on('error', () => {}); /* EPIPE once it is killed */
    child.stdin.end(text);
    let timer = null;
    if (killAfterMs !== null) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      /* A line cut by the kill was never a whole ack: drop it. */
      const complete = out.slice(0, out.lastIndexOf('\n') + 1);
      resolve({ code, signal, stderr: err, lines: complete.split('\n').filter((l) => l) });
    });
  });
}

test('SIGKILL at random moments loses no acknowledged batch', { timeout: 300000 }, async () => {
  assert.ok(fs.existsSync(RIGD), `no rigd at ${RIGD}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rigd-crash-'));
  const db = path.join(dir, 'crash.db');
  const lines = [];
  const line = (i) => {
    while (lines.length < i) lines.push(batchLine(lines.length + 1));
    return lines[i - 1];
  };
  const startSeed = seed;
  let window = WINDOW_START;

  /* line number (= client_seq) -> the seq its ack carried, the same in
   * every run. */
  const acked = new Map();
  let killsThatLanded = 0;
  let firstUnacked = 1;
  try {
    for (let round = 0; ; round++) {
      assert.ok(round < MAX_ROUNDS, `only ${killsThatLanded} kills landed in ${round} rounds`);
      const last = killsThatLanded >= KILLS;
      const delay = KILL_MIN_MS + Math.floor(random() * (KILL_MAX_MS - KILL_MIN_MS));
      const from = last ? 1 : Math.max(1, firstUnacked - Math.floor(random() * RESEND_MAX));
      const to = last ? firstUnacked - 1 : from + window - 1;
      let text = '';
      for (let i = from; i <= to; i++) text += line(i) + '\n';
      const r = await applyOnce(db, text, last ? null : delay);
      const where = `round ${round} (seed ${startSeed}, from line ${from}, killed after ` +
        `${delay} ms)`;
      if (last) {
        assert.equal(r.code, 0, `${where}: the final run failed: ${r.stderr}`);
      } else if (r.signal !== 'SIGKILL') {
        /* It finished before the kill: fine, but it must have succeeded;
         * give the next one more to do. */
        assert.equal(r.code, 0, `${where}: ${r.stderr}`);
        window *= 2;
      } else {
        killsThatLanded++;
      }
      for (const l of r.lines) {
        const m = JSON.parse(l);
        assert.equal(m.type, 'ack', `${where}: ${l}`);
        assert.ok(Number.isInteger(m.req) && Number.isInteger(m.seq) && m.seq >= 1, l);
        const line = from + m.req - 1;
        const before = acked.get(line);
        if (before !== undefined) {
          assert.equal(m.seq, before, `${where}: line ${line} acked as seq ${m.seq}, was ${before}`);
        }
        acked.set(line, m.seq);
        if (line >= firstUnacked) firstUnacked = line + 1;
      }

      /* Killed before it had created its database (a slow start, as under
       * ASan): nothing was acknowledged, so nothing can be lost. */
      if (acked.size === 0 && !fs.existsSync(db)) continue;
      /* The log and the check, side by side (both only read). */
      const [log, check] = await Promise.all([run(['log', '--db', db, '--scene', 'crash']),
        run(['check', '--db', db])]);
      assert.equal(check.status, 0, `${where}: rigd check:\n${check.stdout}${check.stderr}`);
      assert.match(check.stdout, /^check: ok$/m);
      /* The log: seqs 1..n without a gap, every ack in it. */
      if (log.status !== 0 && /unknown scene/.test(log.stderr) && acked.size === 0) continue;
      assert.equal(log.status, 0, `${where}: rigd log: ${log.stderr}`);
      const rows = log.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l));
      rows.forEach((row, k) => assert.equal(row.seq, k + 1, `${where}: gap before seq ${row.seq}`));
      const bySeq = new Map(rows.map((row) => [row.seq, row]));
      for (const [line, seq] of acked) {
        const row = bySeq.get(seq);
        assert.ok(row, `${where}: acknowledged seq ${seq} (line ${line}) is not in the log`);
        assert.equal(row.client, 'crash');
        assert.equal(row.client_seq, line, `${where}: seq ${seq} holds another batch`);
      }
      /* Never applied twice: one row per client_seq. */
      assert.equal(new Set(rows.map((row) => row.client_seq)).size, rows.length);

      if (last) {
        /* Everything ever sent was resent and acknowledged, once each. */
        assert.equal(acked.size, to);
        assert.ok(rows.length >= to);
        console.log(`# ${killsThatLanded} kills in ${round} rounds (seed ${startSeed}); ` +
          `${rows.length} batches logged, the last run resent ${to}`);
        break;
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
