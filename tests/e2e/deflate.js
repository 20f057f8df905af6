'use strict';
/*
 * permessage-deflate (RFC 7692; docs/protocol.md, "Compression") against
 * the real server. With --deflate on, a client that offers it gets it (the
 * handshake's Sec-WebSocket-Extensions answer, which ws exposes as
 * 'extensions'), and every snapshot and update it inflates is the same JSON,
 * byte for byte, that a client without it receives; a client that offers
 * nothing is answered as before. With --deflate off (the default), an offer
 * is declined and the client reads plain frames.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const {
  startRigd, Client, createScene, skeletonOps, run,
} = require('../lib/rigd.js');

/* A Client that also keeps the exact text of every message. */
class TextClient extends Client {
  constructor(server, opts) {
    super(server, opts);
    this.texts = [];
  }

  static async connect(server, opts) {
    const c = new TextClient(server, opts);
    await c.opened;
    return c;
  }

  onMessage(data, isBinary) {
    this.texts.push(data.toString('utf8'));
    super.onMessage(data, isBinary);
  }
}

const EDITS = [
  [{ op: 'set', id: 'spine1', euler: [10, 20, 30] }],
  [{ op: 'set', id: 'upper_arm_l', euler: [0, 0, 45] }],
  [{ op: 'create', id: 'prop', parent: 'hand_l', t: [0.1, 0, 0] }],
  [{ op: 'set', id: 'root', t: [0, 1.2, 0.3] }],
  [{ op: 'delete', id: 'prop' }],
  [{ op: 'set', id: 'finger3_3_l', euler: [5, 0, 0] }],
];

/* The snapshot's and updates' texts a client received for 'scene'. */
const framesOf = (c, scene) => c.texts.filter((t) => {
  const m = JSON.parse(t);
  return (m.type === 'snapshot' || m.type === 'update') && m.scene === scene;
});

test('with --deflate on, an offering client gets it and the same JSON', async () => {
  const server = await startRigd({ args: ['--sync', 'normal', '--deflate', 'on'] });
  try {
    await createScene(server, 'skel');
    const editor = await Client.connect(server);
    assert.equal((await editor.request({ type: 'edit', scene: 'skel', ops: skeletonOps() })).type, 'ack');
    const deflated = await TextClient.connect(server, { deflate: true });
    const plain = await TextClient.connect(server);
    assert.match(deflated.ws.extensions, /^permessage-deflate\b/);
    assert.equal(plain.ws.extensions, '');
    await deflated.subscribe('skel');
    await plain.subscribe('skel');
    let seq = 0;
    for (const ops of EDITS) {
      const ack = await editor.request({ type: 'edit', scene: 'skel', ops });
      assert.equal(ack.type, 'ack', `${ack.code}: ${ack.message}`);
      seq = ack.seq;
      /* One update per edit for each, so the frames pair up exactly. */
      await deflated.waitSeq('skel', seq);
      await plain.waitSeq('skel', seq);
    }
    const a = framesOf(deflated, 'skel');
    const b = framesOf(plain, 'skel');
    assert.equal(a.length, EDITS.length + 1);
    assert.deepEqual(a, b);
    /* And it travelled deflated: the same messages took fewer socket bytes. */
    assert.ok(deflated.ws._socket.bytesRead < plain.ws._socket.bytesRead / 2,
      `${deflated.ws._socket.bytesRead} bytes read deflated, ${plain.ws._socket.bytesRead} plain`);
    assert.deepEqual(deflated.schemaViolations, []);
    assert.deepEqual(plain.schemaViolations, []);
    /* Bad input on a deflated connection: a clear error, the connection stays. */
    const err = await deflated.request({ type: 'edit', scene: 'skel', ops: [{ op: 'set', id: 'nope', euler: [1, 2, 3] }] });
    assert.equal(err.type, 'error');
    assert.equal(err.code, 'unknown_node');
    assert.equal((await deflated.request({ type: 'edit', scene: 'skel', ops: EDITS[0] })).type, 'ack');
    for (const c of [editor, deflated, plain]) await c.close();
  } finally {
    assert.equal(await server.stop('SIGTERM'), 0);
  }
});

test('with --deflate off (the default), an offer is declined', async () => {
  for (const args of [[], ['--deflate', 'off']]) {
    const server = await startRigd({ args: ['--sync', 'normal', ...args] });
    try {
      await createScene(server, 'skel');
      const editor = await Client.connect(server);
      await editor.request({ type: 'edit', scene: 'skel', ops: skeletonOps() });
      const offering = await TextClient.connect(server, { deflate: true });
      const plain = await TextClient.connect(server);
      assert.equal(offering.ws.extensions, '');
      await offering.subscribe('skel');
      await plain.subscribe('skel');
      const ack = await editor.request({ type: 'edit', scene: 'skel', ops: EDITS[1] });
      await offering.waitSeq('skel', ack.seq);
      await plain.waitSeq('skel', ack.seq);
      assert.deepEqual(framesOf(offering, 'skel'), framesOf(plain, 'skel'));
      for (const c of [editor, offering, plain]) await c.close();
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
  }
});

test('a bad --deflate value is refused', async () => {
  const r = await run('rigd', ['--deflate', 'maybe']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--deflate/);
});
