/*
 * docs/protocol.md's error table against the code: every error code of
 * server/core/err.h (its X-macro list: NAME, HTTP status, "wire_name",
 * "text") must have a row in the `| code | HTTP | meaning |` table of
 * protocol.md with the same HTTP status, and every code in that table must
 * exist in err.h. The code is the reference: when this fails, fix the table.
 *
 * The second test feeds the parsers a made-up header and table with each kind
 * of mismatch, so the check cannot pass by parsing nothing.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/* The codes of err.h's RIGD_ERRORS list: Map wire name -> HTTP status. */
export function parseErrH(text) {
  const codes = new Map();
  const row = /X\(\s*([A-Z0-9_]+)\s*,\s*(\d{3})\s*,\s*"([a-z0-9_]+)"\s*,\s*"[^"]*"\s*\)/g;
  for (const m of text.matchAll(row)) codes.set(m[3], Number(m[2]));
  return codes;
}

/*
 * The rows of the first table whose header is `| code | HTTP | meaning |`:
 * Map wire name -> HTTP status (the first three-digit number of the HTTP
 * cell, or null when it has none). A cell may name several codes.
 */
export function parseTable(markdown) {
  const lines = markdown.split('\n');
  const head = lines.findIndex((l) => /^\|\s*code\s*\|\s*HTTP\s*\|\s*meaning\s*\|\s*$/.test(l));
  if (head < 0) throw new Error('no "| code | HTTP | meaning |" table');
  const codes = new Map();
  for (let i = head + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const cells = lines[i].split('|').slice(1, -1).map((c) => c.trim());
    const status = /\b(\d{3})\b/.exec(cells[1] || '');
    for (const m of (cells[0] || '').matchAll(/`([a-z0-9_]+)`/g)) {
      if (codes.has(m[1])) throw new Error(`line ${i + 1}: \`${m[1]}\` twice in the table`);
      codes.set(m[1], status ? Number(status[1]) : null);
    }
  }
  return codes;
}

/* The differences between the code's list and the table, one sentence each. */
export function compare(code, table) {
  const problems = [];
  for (const [name, status] of code) {
    if (!table.has(name)) problems.push(`\`${name}\` (HTTP ${status}) is in err.h but not in the table`);
    else if (table.get(name) !== status) {
      problems.push(`\`${name}\`: the table says HTTP ${table.get(name)}, err.h says ${status}`);
    }
  }
  for (const name of table.keys()) {
    if (!code.has(name)) problems.push(`\`${name}\` is in the table but not in err.h`);
  }
  return problems;
}

test('docs/protocol.md lists every error code of server/core/err.h with its HTTP status', () => {
  const code = parseErrH(fs.readFileSync(path.join(ROOT, 'server/core/err.h'), 'utf8'));
  const table = parseTable(fs.readFileSync(path.join(ROOT, 'docs/protocol.md'), 'utf8'));
  /* err.h has some thirty codes; far fewer means the parser lost its way. */
  assert.ok(code.size >= 30, `parsed only ${code.size} codes from err.h`);
  assert.deepEqual(compare(code, table), []);
});

test('the check finds a missing code, an extra code and a wrong status', () => {
  const header = [
    '#define RIGD_ERRORS(X) \\',
    '\tX(BAD_JSON,   400, "bad_json",   "the message is not valid JSON") \\',
    '\tX(STORAGE,    503, "storage",    "the edit could not be stored") \\',
    '\tX(NOT_FOUND,  404, "not_found",  "no such resource")',
  ].join('\n');
  const markdown = [
    'Some text.', '',
    '| code | HTTP | meaning |', '|---|---|---|',
    '| `bad_json` | 400 (sometimes 411) | not JSON |',
    '| `storage` | 500 | wrong status |',
    '| `ghost`, `bad_json2` | 400 | not in err.h |',
    '', 'After the table: `not_found` | 404 is not a row.',
  ].join('\n');
  const code = parseErrH(header);
  assert.deepEqual([...code], [['bad_json', 400], ['storage', 503], ['not_found', 404]]);
  const table = parseTable(markdown);
  assert.equal(table.get('bad_json'), 400);
  assert.deepEqual(compare(code, table).sort(), [
    '`bad_json2` is in the table but not in err.h',
    '`ghost` is in the table but not in err.h',
    '`not_found` (HTTP 404) is in err.h but not in the table',
    '`storage`: the table says HTTP 500, err.h says 503',
  ]);
  assert.throws(() => parseTable('| code | meaning |\n|---|---|\n'), /no "\| code \| HTTP/);
});
