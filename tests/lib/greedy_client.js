'use strict';
/*
 * greedy_client.js: a websocket client that floods one scene with edits as
 * fast as its socket takes them and never waits for an answer. It runs as a
 * process of its own (the fairness case of tests/e2e/auth.js), so that the
 * CPU the flood costs on the client side (encoding thousands of messages a
 * second, reading their acks) is not taken from the process that measures
 * the other clients' latency: the measurement is then about the server.
 *
 *   node greedy_client.js WS_URL SCENE N
 *
 * sets the translation of nodes g0 .. g(N-1) in turn, prints "ready" once
 * it is connected and sending, and when its standard input closes stops,
 * prints {"sent": S, "acked": A} on one line and exits (its connection is
 * dropped, not closed).
 */
const path = require('node:path');
const { createRequire } = require('node:module');

const SOURCE_DIR = process.env.RIGD_SOURCE_DIR || path.resolve(__dirname, '..', '..');
const WebSocket = createRequire(path.join(SOURCE_DIR, 'web', 'package.json'))('ws');

const [url, scene, count] = process.argv.slice(2);
const ids = Number(count);
const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
let sent = 0;
let acked = 0;
let stop = false;

ws.on('message', (data) => {
  if (JSON.parse(data.toString('utf8')).type === 'ack') acked++;
});
ws.on('error', (err) => {
  console.error(`greedy client: ${err.message}`);
  process.exit(1);
});
process.stdin.on('end', () => { stop = true; });
process.stdin.resume();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

ws.once('open', async () => {
  process.stdout.write('ready\n');
  while (!stop) {
    for (let i = 0; i < 200; i++) {
      ws.send(JSON.stringify({ type: 'edit', scene, ops: [{ op: 'set', id: `g${i % ids}`, t: [sent++, 0, 0] }] }));
    }
    await new Promise((resolve) => setImmediate(resolve));
    while (ws.bufferedAmount > 1 << 20 && !stop) await sleep(5);
  }
  process.stdout.write(`${JSON.stringify({ sent, acked })}\n`);
  ws.terminate();
  process.exit(0);
});
