'use strict';
/*
 * Helpers for the binary frames' end-to-end tests (docs/protocol.md,
 * "Binary frames"): a websocket client that subscribes with a format and
 * decodes binary snapshots and updates with the viewer's own decoder
 * (web/app/wire.js) into the JSON messages they stand for, so it keeps the
 * same mirror of a scene as tests/lib/rigd.js's Client; and the comparisons
 * of a mirror's matrices with the server's tree.
 */
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { Client, SOURCE_DIR, schemaErrors } = require('./rigd.js');

let wireModule = null;

/* web/app/wire.js (an ES module), loaded once. */
async function loadWire() {
  if (!wireModule) {
    wireModule = await import(pathToFileURL(path.join(SOURCE_DIR, 'web', 'app', 'wire.js')).href);
  }
  return wireModule;
}

/*
 * A Client whose binary frames are decoded rather than refused. Every
 * decoded message carries 'binary' true and 'bytes' (the frame's length);
 * JSON messages carry 'bytes' too. A frame the decoder refuses is a schema
 * violation (and is kept in 'broken').
 */
class WireClient extends Client {
  constructor(server, opts = {}) {
    super(server, opts);
    this.decoder = new wireModule.WireDecoder();
    this.broken = [];
  }

  static async connect(server, opts) {
    await loadWire();
    const c = new WireClient(server, opts);
    await c.opened;
    return c;
  }

  onMessage(data, isBinary) {
    if (!isBinary) {
      const before = this.messages.length;
      super.onMessage(data, false);
      if (this.messages.length > before) this.messages[this.messages.length - 1].bytes = data.length;
      return;
    }
    const msg = this.decoder.decode(new Uint8Array(data.buffer, data.byteOffset, data.length));
    if (msg.error) {
      this.broken.push(msg.error);
      this.schemaViolations.push(`broken binary frame: ${msg.error}`);
      return;
    }
    const errors = this.validate ? schemaErrors('ServerMessage', msg) : null;
    if (errors) this.schemaViolations.push(`${errors}: ${JSON.stringify(msg).slice(0, 500)}`);
    msg.binary = true;
    msg.bytes = data.length;
    msg.receivedAt = process.hrtime.bigint();
    this.messages.push(msg);
    this.apply(msg);
    this.notify();
  }

  /* Subscribes with 'format' ('json', 'f32', 'f64'; undefined sends none)
   * and resolves to the snapshot, or the error. */
  async subscribe(scene, format) {
    const from = this.messages.length;
    this.send({ type: 'subscribe', scene, ...(format === undefined ? {} : { format }) });
    return this.waitFor((m) => (m.type === 'snapshot' && m.scene === scene) ||
      (m.type === 'error' && (m.field === 'scene' || m.field === 'format')),
    { from, what: `the snapshot of ${scene}` });
  }
}

/*
 * The differences between a mirror's matrices ({id: [16]}) and the tree's
 * nodes: 'exact' compares bits (Object.is: -0 and 0 differ), otherwise
 * each element must be the tree's rounded to float32. Returns a list of
 * sentences, empty when they agree (same ids too).
 */
function matrixDiffs(worlds, treeNodes, exact) {
  const problems = [];
  const ids = new Set(Object.keys(worlds));
  for (const n of treeNodes) {
    const w = worlds[n.id];
    ids.delete(n.id);
    if (!w) { problems.push(`${n.id}: missing`); continue; }
    for (let i = 0; i < 16; i++) {
      const want = exact ? n.world[i] : Math.fround(n.world[i]);
      if (!Object.is(w[i], want)) {
        problems.push(`${n.id}[${i}]: ${w[i]} instead of ${want}`);
        break;
      }
    }
  }
  for (const id of ids) problems.push(`${id}: not in the tree`);
  return problems;
}

/* A mirror's node records without their matrices, by id (for comparing a
 * binary subscriber's records with a JSON subscriber's). */
function recordsOf(client, scene) {
  const out = {};
  for (const [id, n] of client.scenes.get(scene).nodes) {
    const { world, ...rest } = n;
    out[id] = rest;
  }
  return out;
}

module.exports = { loadWire, WireClient, matrixDiffs, recordsOf };
