'use strict';
/*
 * One client's history of edits, undos and redos (client 'al', another
 * client 'bo' in between), and the undos and redos after it, for the tests
 * that compare what an undo does after the log moved (tests/e2e/log_kind.js:
 * export and import; tests/e2e/cluster_undo.js: a change of owner).
 */

/* Seqs 1..7: al creates n and moves it twice (bo creates m between),
 * then undoes 4, undoes 2 and redoes 2. */
const HISTORY = [
  { type: 'edit', client: 'al', ops: [{ op: 'create', id: 'n', t: [0, 0, 0] }] },
  { type: 'edit', client: 'al', ops: [{ op: 'set', id: 'n', t: [1, 0, 0] }] },
  { type: 'edit', client: 'bo', ops: [{ op: 'create', id: 'm', t: [0, 5, 0] }] },
  { type: 'edit', client: 'al', ops: [{ op: 'set', id: 'n', t: [2, 0, 0] }] },
  { type: 'undo', client: 'al' },
  { type: 'undo', client: 'al' },
  { type: 'redo', client: 'al' },
];

/* With the kinds known: undo the redo (n at 0), undo the create (n gone),
 * nothing left to undo, then redo, redo, redo, nothing to redo. Had the
 * undos and redos been taken for edits, the second undo would undo the
 * undo of 2 (a redo: n at 1). */
const AFTER = [
  { type: 'undo', client: 'al' },
  { type: 'undo', client: 'al' },
  { type: 'undo', client: 'al' },
  { type: 'redo', client: 'al' },
  { type: 'redo', client: 'al' },
  { type: 'redo', client: 'al' },
  { type: 'redo', client: 'al' },
];

/* Sends one step over websocket client 'c' to scene 'scene': the answer. */
function doStep(c, scene, step) {
  const msg = { ...step, scene };
  return c.request(msg);
}

module.exports = { HISTORY, AFTER, doStep };
