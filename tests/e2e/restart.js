'use strict';
/*
 * The server restarts (SIGTERM, then SIGKILL) while clients edit. Editors
 * name their batches (client, client_seq) and resend what was not
 * acknowledged when they reconnect; watchers reconnect and resubscribe.
 * Afterwards every acknowledged batch is in the log exactly once with the
 * seq its ack gave, every node holds its editor's last value, and every
 * watcher's mirror equals GET /api/scenes/rs.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, get, tree, worldsOf, Client, createScene, postEdit, sleep,
} = require('../lib/rigd.js');

const EDITORS = 3;

/* Connects, retrying while the server is down. */
async function connect(state, opts) {
  for (;;) {
    try {
      return await Client.connect(state.server, opts);
    } catch {
      await sleep(20);
    }
  }
}

class Editor {
  constructor(k, state) {
    this.k = k;
    this.state = state;
    this.id = `editor-${k}`;
    this.clientSeq = 0;
    this.pending = [];          /* batches sent and not acknowledged, in order */
    this.acked = new Map();     /* client_seq -> seq */
    this.errors = [];
    this.stopped = false;
    this.connections = 0;
  }

  batch(clientSeq) {
    return { type: 'edit', scene: 'rs', client: this.id, client_seq: clientSeq, req: clientSeq,
      ops: [{ op: 'set', id: `n${this.k}`, t: [clientSeq, this.k, 0] }] };
  }

  async run() {
    while (!this.stopped || this.pending.length) {
      const c = await connect(this.state);
      this.connections++;
      const seen = { n: 0 };
      const onReply = () => {
        for (; seen.n < c.messages.length; seen.n++) {
          const m = c.messages[seen.n];
          if (m.type !== 'ack' && m.type !== 'error') continue;
          const i = this.pending.findIndex((b) => b.client_seq === m.req);
          if (i < 0) continue;
          const [b] = this.pending.splice(i, 1);
          if (m.type === 'ack') this.acked.set(b.client_seq, m.seq);
          else this.errors.push(m);
        }
      };
      /* Resend, in order, whatever the last connection left unanswered. */
      for (const b of this.pending) c.send(b);
      while (c.closeCode === undefined && (!this.stopped || this.pending.length)) {
        onReply();
        if (!this.stopped && this.pending.length < 4) {
          const b = this.batch(++this.clientSeq);
          this.pending.push(b);
          c.send(b);
          continue;
        }
        await Promise.race([c.closed, sleep(2)]);
      }
      onReply();
      if (c.closeCode === undefined) await c.close();
    }
  }
}

class Watcher {
  constructor(state) {
    this.state = state;
    this.stopped = false;
    this.client = null;
    this.connections = 0;
    this.violations = [];
  }

  async run() {
    while (!this.stopped) {
      const c = await connect(this.state);
      this.connections++;
      const snap = await c.subscribe('rs').catch(() => null);
      this.client = c;
      if (snap) await Promise.race([c.closed, new Promise((resolve) => { this.wake = resolve; })]);
      this.violations.push(...c.schemaViolations);
    }
  }
}

for (const signal of ['SIGTERM', 'SIGKILL']) {
  test(`restart with ${signal} while clients edit`, async () => {
    const first = await startRigd();
    const state = { server: first };
    await createScene(first, 'rs');
    const ops = [];
    for (let k = 0; k < EDITORS; k++) ops.push({ op: 'create', id: `n${k}` });
    assert.equal((await postEdit(first, 'rs', { ops })).status, 200);

    const editors = Array.from({ length: EDITORS }, (_, k) => new Editor(k, state));
    const watchers = [new Watcher(state), new Watcher(state)];
    const running = [...editors.map((e) => e.run()), ...watchers.map((w) => w.run())];

    await sleep(700);
    const before = editors.reduce((n, e) => n + e.acked.size, 0);
    const code = await first.stop(signal);
    assert.equal(code, signal === 'SIGKILL' ? null : 0);
    /* Same port and database. */
    state.server = await startRigd({ db: first.db, dir: first.dir,
      listen: `127.0.0.1:${first.port}` });
    await sleep(700);
    for (const e of editors) e.stopped = true;
    await Promise.all(running.slice(0, EDITORS));
    const after = editors.reduce((n, e) => n + e.acked.size, 0);
    console.log(`# ${signal}: ${before} batches acknowledged before the restart, ${after} in all`);

    const server = state.server;
    for (const e of editors) {
      assert.deepEqual(e.errors, []);
      assert.ok(e.connections >= 2, 'the editor reconnected');
      assert.equal(e.acked.size, e.clientSeq, 'every batch was acknowledged in the end');
    }
    /* Every acknowledged batch is in the log once, with its ack's seq. */
    const log = (await get(server, '/api/scenes/rs/log')).text.trim().split('\n').map((l) => JSON.parse(l));
    const bySeq = new Map(log.map((l) => [l.seq, l]));
    assert.deepEqual(log.map((l) => l.seq), log.map((_, i) => i + 1), 'seqs are gapless');
    for (const e of editors) {
      const mine = log.filter((l) => l.client === e.id);
      assert.equal(mine.length, e.clientSeq, `${e.id} has each batch once`);
      for (const [cs, seq] of e.acked) {
        assert.equal(bySeq.get(seq)?.client_seq, cs, `${e.id} ${cs} at seq ${seq}`);
        assert.equal(bySeq.get(seq)?.client, e.id);
      }
    }
    const final = await tree(server, 'rs');
    for (const e of editors) {
      const node = final.nodes.find((n) => n.id === `n${e.k}`);
      assert.deepEqual(node.t, [e.clientSeq, e.k, 0]);
    }
    /* The watchers converge on the restarted server. */
    for (const w of watchers) {
      await sleep(10);
      while (!w.client || w.client.closeCode !== undefined) await sleep(10);
      await w.client.waitSeq('rs', final.seq);
      assert.deepEqual(w.client.worlds('rs'), worldsOf(final.nodes));
      assert.ok(w.connections >= 2, 'the watcher reconnected');
      w.stopped = true;
      await w.client.close();
      if (w.wake) w.wake();
    }
    await Promise.all(running);
    for (const w of watchers) assert.deepEqual(w.violations, []);
    assert.equal(await server.stop('SIGTERM'), 0);
  });
}
