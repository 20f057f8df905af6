'use strict';
/*
 * Load with faults: 50 clients editing and 200 watching for a
 * bounded time while one client stalls (stops reading), one sends garbage,
 * and the server is killed with SIGKILL once and restarted on the same
 * database. Editors name their batches (client, client_seq) and resend what
 * was not acknowledged when they reconnect. Afterwards every acknowledged
 * edit is in the log with the seq of its ack, every node holds its editor's
 * last value, every watcher's mirror equals GET /api/scenes/load, and the
 * latencies of the well-behaved clients are printed.
 *
 * RIGD_LOAD_SECONDS sets the duration in seconds (default 25; a full
 * minute, RIGD_LOAD_SECONDS=60, is run by hand); RIGD_LOAD_EDITORS and
 * RIGD_LOAD_WATCHERS the numbers of clients.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, tree, Client, createScene, postEdit, sleep, percentile, SANITIZED,
} = require('../lib/rigd.js');

const SECONDS = Number(process.env.RIGD_LOAD_SECONDS || 25);
const EDITORS = Number(process.env.RIGD_LOAD_EDITORS || 50);
const WATCHERS = Number(process.env.RIGD_LOAD_WATCHERS || 200);
const EDIT_PERIOD_MS = SANITIZED ? 200 : 100;   /* each editor, one batch in flight */

async function connect(state, opts) {
  for (;;) {
    try {
      return await Client.connect(state.server, opts);
    } catch {
      await sleep(20 + Math.random() * 30);
    }
  }
}

class Editor {
  constructor(k, state) {
    this.k = k;
    this.state = state;
    this.id = `load-${k}`;
    this.clientSeq = 0;
    this.pending = [];          /* sent, not answered: [batch, sentAt] */
    this.acked = new Map();     /* client_seq -> seq */
    this.errors = [];
    this.latencies = [];        /* ms, send to ack, first sends only */
    this.stopped = false;
  }

  batch(clientSeq) {
    return { type: 'edit', scene: 'load', client: this.id, client_seq: clientSeq, req: clientSeq,
      ops: [{ op: 'set', id: `n${this.k}`, t: [clientSeq, this.k, 0] }] };
  }

  async run() {
    await sleep(Math.random() * EDIT_PERIOD_MS);
    while (!this.stopped || this.pending.length) {
      const c = await connect(this.state);
      let seen = 0;
      const onReply = () => {
        for (; seen < c.messages.length; seen++) {
          const m = c.messages[seen];
          if (m.type !== 'ack' && m.type !== 'error') continue;
          const i = this.pending.findIndex((p) => p.b.client_seq === m.req);
          if (i < 0) continue;
          const [p] = this.pending.splice(i, 1);
          if (m.type === 'ack') {
            this.acked.set(p.b.client_seq, m.seq);
            if (!p.resent) this.latencies.push(Number(m.receivedAt - p.at) / 1e6);
          } else {
            this.errors.push(m);
          }
        }
      };
      for (const p of this.pending) { p.resent = true; c.send(p.b); }
      while (c.closeCode === undefined && (!this.stopped || this.pending.length)) {
        onReply();
        if (!this.stopped && this.pending.length === 0) {
          const b = this.batch(++this.clientSeq);
          this.pending.push({ b, at: process.hrtime.bigint(), resent: false });
          c.send(b);
          await Promise.race([c.closed, c.waitFor((m) => m.req === b.client_seq, { timeout: 60000 }).catch(() => {})]);
          onReply();
          await sleep(EDIT_PERIOD_MS);
          continue;
        }
        await Promise.race([c.closed, sleep(5)]);
      }
      onReply();
      if (c.closeCode === undefined) await c.close();
    }
  }
}

class Watcher {
  constructor(state, validate) {
    this.state = state;
    this.validate = validate;
    this.stopped = false;
    this.client = null;
    this.violations = [];
  }

  async run() {
    while (!this.stopped) {
      const c = await connect(this.state, { validate: this.validate });
      const snap = await c.subscribe('load').catch(() => null);
      this.client = c;
      if (snap) await Promise.race([c.closed, new Promise((resolve) => { this.wake = resolve; })]);
      this.violations.push(...c.schemaViolations);
    }
  }
}

test(`load with faults: ${EDITORS} editors, ${WATCHERS} watchers, ${SECONDS} s, a stall, garbage, a SIGKILL`, { timeout: (SECONDS + 120) * 1000 }, async () => {
  let server = await startRigd({ args: ['--max-clients', '1024'] });
  const state = { server };
  await createScene(server, 'load');
  const ops = [];
  for (let k = 0; k < EDITORS; k++) ops.push({ op: 'create', id: `n${k}`, t: [0, k, 0] });
  assert.equal((await postEdit(server, 'load', { ops })).status, 200);

  /* Ten watchers validate every message against the schema; the others
   * only mirror the scene, so that the test's one thread keeps up. */
  const watchers = Array.from({ length: WATCHERS }, (_, i) => new Watcher(state, i < 10));
  const wRuns = watchers.map((w) => w.run());
  const editors = Array.from({ length: EDITORS }, (_, k) => new Editor(k, state));
  const eRuns = editors.map((e) => e.run());

  /* The stalled client: subscribes, then never reads. */
  const stalled = await connect(state);
  await stalled.subscribe('load');
  stalled.ws._socket.pause();
  /* The garbage client: malformed and hostile messages, reconnecting. */
  let garbageSent = 0;
  let garbageStop = false;
  const junk = ['{"type":', '[]', '{"type":"edit","scene":"load","ops":[{"op":"delete","id":"nope"}]}',
    '{"type":"edit","scene":"load","ops":[{"op":"reparent","id":"n0","parent":"n0"}]}',
    `${'['.repeat(2000)}${']'.repeat(2000)}`, '{"type":"subscribe","scene":"../x"}', Buffer.from([0, 1, 2, 255])];
  const garbage = (async () => {
    while (!garbageStop) {
      const g = await connect(state);
      while (!garbageStop && g.closeCode === undefined) {
        g.send(junk[garbageSent++ % junk.length]);
        await sleep(5);
      }
      if (g.closeCode === undefined) g.ws.terminate();
    }
  })();

  const t0 = Date.now();
  const killAt = t0 + SECONDS * 400;
  await sleep(killAt - Date.now());
  /* SIGKILL: no shutdown at all. Everyone's connection drops. */
  const killed = Date.now();
  await server.stop('SIGKILL');
  server = await startRigd({ db: server.db, dir: server.dir, args: ['--max-clients', '1024'] });
  state.server = server;
  const restarted = Date.now();
  await sleep(Math.max(0, t0 + SECONDS * 1000 - Date.now()));

  for (const e of editors) e.stopped = true;
  await Promise.all(eRuns);
  garbageStop = true;
  await garbage;
  stalled.ws.terminate();

  const final = await tree(server, 'load');
  const log = await get(server, '/api/scenes/load/log');
  const logged = new Map();
  for (const line of log.text.trim().split('\n')) {
    const b = JSON.parse(line);
    if (b.client) logged.set(`${b.client}/${b.client_seq}`, b.seq);
  }
  let ackedTotal = 0;
  for (const e of editors) {
    assert.deepEqual(e.errors, [], `${e.id}: errors`);
    for (const [cs, seq] of e.acked) {
      ackedTotal++;
      assert.equal(logged.get(`${e.id}/${cs}`), seq, `${e.id} batch ${cs}: acked with seq ${seq}`);
    }
    const node = final.nodes.find((n) => n.id === `n${e.k}`);
    assert.equal(node.t[0], e.clientSeq, `${e.id}: its last value`);
  }

  /* Every watcher converges to the final state. */
  const worlds = {};
  for (const n of final.nodes) worlds[n.id] = n.world;
  for (const w of watchers) {
    for (;;) {
      const c = w.client;
      if (c && c.closeCode === undefined && c.scenes.get('load')) break;
      await sleep(10);
    }
    await w.client.waitSeq('load', final.seq, 30000);
    assert.deepEqual(w.client.worlds('load'), worlds);
  }
  for (const w of watchers) { w.stopped = true; if (w.wake) w.wake(); }
  for (const w of watchers) w.client.ws.terminate();
  await Promise.all(wRuns);
  for (const w of watchers) assert.deepEqual(w.violations, []);

  /* Latencies of the well-behaved editors: outside the kill window, and
   * across it. */
  const all = editors.flatMap((e) => e.latencies);
  const f = (v) => `p50 ${percentile(v, 50).toFixed(1)} ms, p99 ${percentile(v, 99).toFixed(1)} ms, max ${Math.max(...v).toFixed(1)} ms`;
  console.log(`${SECONDS} s: ${ackedTotal} edits acknowledged by ${EDITORS} editors beside ${WATCHERS} watchers, ` +
    `a stalled reader and ${garbageSent} garbage messages; server down for ${restarted - killed} ms`);
  console.log(`edit-to-ack latency (first sends): ${f(all)}`);
  console.log(`server CPU after the restart: ${(server.cpuSeconds() / ((Date.now() - restarted) / 1000) * 100).toFixed(0)}% of a core; test process CPU: ${((process.cpuUsage().user + process.cpuUsage().system) / 1e4 / ((Date.now() - t0) / 1000)).toFixed(0)}% of a core`);
  const m = await get(server, '/metrics');
  console.log(m.text.split('\n').filter((l) => /^rigd_(clients|batches_total|commits_total|commit_seconds_sum|clients_dropped_total|resident_memory_bytes) /.test(l)).join('; '));
  assert.ok(ackedTotal > EDITORS * SECONDS, `${ackedTotal} edits`);
  /* The figures include the test's own event loop, which 250 clients
   * share (RIGD_LOAD_WATCHERS=0 shows the server alone: a few ms). */
  assert.ok(percentile(all, 50) < (SANITIZED ? 1000 : 400), 'p50 edit-to-ack latency');
  assert.equal(await server.stop('SIGTERM'), 0);
});
