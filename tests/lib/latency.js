'use strict';
/*
 * Edit-to-update latency, as the slow-client tests measure it: an editor
 * sends edits as fast as acks come back (8 in flight) for a while, and each
 * watcher's first update at or past an edit's seq gives that edit's latency
 * for that watcher.
 */

/*
 * Edits scene 'scene' for 'ms' with the ops opsFor(i) returns for the i-th
 * edit, and resolves to { latencies (ms, every watcher's), edits }. A refused
 * edit is not counted, or with 'mustAck' rejects. Rejects when an ack or a
 * watcher's update does not come within the client's timeout (the server is
 * blocked).
 */
async function editLatencies(editor, watchers, ms, { scene, opsFor, mustAck = false }) {
  const sent = new Map();   /* seq -> send time */
  const starts = watchers.map((w) => w.messages.length);
  const inflight = new Set();
  const end = Date.now() + ms;
  let i = 0;
  while (Date.now() < end) {
    while (inflight.size >= 8) await Promise.race(inflight);
    const t0 = process.hrtime.bigint();
    const p = editor.request({ type: 'edit', scene, ops: opsFor(i++) }).then((ack) => {
      inflight.delete(p);
      if (ack.type === 'ack') sent.set(ack.seq, t0);
      else if (mustAck) throw new Error(JSON.stringify(ack));
    });
    inflight.add(p);
  }
  await Promise.all(inflight);
  const last = Math.max(...sent.keys());
  for (const w of watchers) await w.waitSeq(scene, last);
  /* For every edit, the first update at or past its seq, per watcher. */
  const latencies = [];
  const seqs = [...sent.keys()].sort((a, b) => a - b);
  watchers.forEach((w, k) => {
    const updates = w.messages.slice(starts[k]).filter((m) => m.type === 'update');
    let u = 0;
    for (const seq of seqs) {
      while (u < updates.length && updates[u].seq < seq) u++;
      if (u < updates.length) latencies.push(Number(updates[u].receivedAt - sent.get(seq)) / 1e6);
    }
  });
  return { latencies, edits: seqs.length };
}

module.exports = { editLatencies };
