/*
 * The layering of server/ (docs/architecture.md): every folder is one layer,
 * a file includes headers of its own folder and of the layers below it only,
 * each outside library's header is included only in the folder that owns
 * it, and no two files of a folder include each other's headers. The
 * linker catches a reach up the layers only when the symbol is used; this
 * catches the include itself.
 *
 * `node tests/layering.test.mjs` checks the tree; the second test feeds the
 * checker a made-up tree with each kind of violation, so it cannot pass by
 * finding nothing.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'server');

/*
 * Each layer and the layers it may include (besides itself). clustered/ is
 * what the server does only in a cluster (replicas, relaying, peers): it
 * sits above both serve/ and cluster/, so that serve/ names no Redis code
 * (it reaches clustered/ through serve/serve_hooks.h's table alone).
 */
export const LAYERS = {
  core: [],
  codec: ['core'],
  engine: ['core', 'codec'],
  net: ['core'],
  cluster: ['core'],
  serve: ['core', 'codec', 'engine', 'net'],
  clustered: ['core', 'codec', 'engine', 'net', 'cluster', 'serve'],
  cmd: ['core', 'codec', 'engine', 'net', 'cluster', 'serve', 'clustered'],
};


/*
 * Outside libraries: a header (or header folder) and the layers that may
 * include it, one for each library but libuv. libuv has two: net/ runs
 * the event loop (libwebsockets on libuv), and cluster/ attaches hiredis
 * to that loop through hiredis's adapter, hiredis/adapters/libuv.h, which
 * includes uv.h and so counts as a libuv include as well as a hiredis one.
 */
export const OWNERS = [
  { header: /^cjson\//, layers: ['codec'], what: 'cJSON' },
  { header: /^sqlite3\.h$/, layers: ['engine'], what: 'SQLite' },
  { header: /^libwebsockets\.h$|^lws_/, layers: ['net'], what: 'libwebsockets' },
  { header: /^hiredis\//, layers: ['cluster'], what: 'hiredis' },
  { header: /^uv\.h$|^uv\/|^hiredis\/adapters\/libuv\.h$/, layers: ['net', 'cluster'], what: 'libuv' },
  { header: /^libxml\//, layers: ['codec'], what: 'libxml2' },
  { header: /^png\.h$/, layers: ['codec'], what: 'libpng' },
  { header: /^zlib\.h$/, layers: ['codec'], what: 'zlib' },
];

/*
 * Returns the violations in 'files', a map from a path relative to server/
 * ("core/scene.c") to its text, as strings naming the file, line and rule.
 */
export function violations(files) {
  const out = [];
  for (const [rel, text] of Object.entries(files)) {
    const parts = rel.split('/');
    const layer = parts[0];
    if (parts.length < 2 || !(layer in LAYERS)) {
      if (/\.[ch]$/.test(rel))
        out.push(`${rel}: a source outside the layer folders (${Object.keys(LAYERS).join(', ')})`);
      continue;
    }
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      const at = `${rel}:${i + 1}`;
      let m = /^\s*#\s*include\s+"([^"]+)"/.exec(line);
      if (m) {
        const inc = m[1];
        const slash = inc.indexOf('/');
        if (slash < 0) {
          const sibling = path.posix.join(path.posix.dirname(rel), inc);
          if (!(sibling in files))
            out.push(`${at}: "${inc}" is not in ${path.posix.dirname(rel)}/; name its layer ("core/${inc}")`);
          return;
        }
        const target = inc.slice(0, slash);
        if (inc.startsWith('../'))
          out.push(`${at}: "${inc}" climbs out of its folder; name the layer instead`);
        else if (!(target in LAYERS))
          out.push(`${at}: "${inc}" names no layer`);
        else if (target !== layer && !LAYERS[layer].includes(target))
          out.push(`${at}: ${layer}/ may not include "${inc}" (${target} is not below ${layer})`);
        else if (!(inc in files))
          out.push(`${at}: "${inc}" does not exist`);
        return;
      }
      m = /^\s*#\s*include\s+<([^>]+)>/.exec(line);
      if (m) {
        for (const o of OWNERS) {
          if (o.header.test(m[1]) && !o.layers.includes(layer)) {
            const owners = o.layers.map((l) => `${l}/`).join(' and ');
            out.push(`${at}: <${m[1]}> (${o.what}) belongs to ${owners} alone, not ${layer}/`);
          }
        }
      }
    });
  }
  return out.concat(mutualIncludes(files));
}

/*
 * Two files of one folder that include each other's headers ("a.c"
 * includes "b.h" and "b.c" includes "a.h"): neither can be read, built or
 * tested without the other, so one of them must call back through a
 * callback it is given instead. One string per pair.
 */
export function mutualIncludes(files) {
  const includes = new Map();  /* "serve/turn" -> the headers its .c names, by path */
  for (const [rel, text] of Object.entries(files)) {
    if (!rel.endsWith('.c'))
      continue;
    const dir = path.posix.dirname(rel);
    const heads = new Set();
    for (const m of text.matchAll(/^\s*#\s*include\s+"([^"]+)"/gm))
      heads.add(m[1].includes('/') ? m[1] : `${dir}/${m[1]}`);
    includes.set(rel.slice(0, -2), heads);
  }
  const out = [];
  const mods = [...includes.keys()].sort();
  mods.forEach((a, i) => {
    for (const b of mods.slice(i + 1)) {
      if (path.posix.dirname(a) === path.posix.dirname(b) && includes.get(a).has(`${b}.h`) &&
          includes.get(b).has(`${a}.h`))
        out.push(`${a}.c and ${b}.c include each other's headers`);
    }
  });
  return out;
}

/* Every file under 'dir', as a map from its path relative to 'dir' to its text. */
export function readTree(dir) {
  const files = {};
  const walk = (sub) => {
    for (const e of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory()) walk(rel);
      else if (/\.[ch]$/.test(e.name)) files[rel] = fs.readFileSync(path.join(dir, rel), 'utf8');
    }
  };
  walk('');
  return files;
}

test('server/ keeps its layering', () => {
  const files = readTree(SERVER);
  assert.ok(Object.keys(files).length > 10, 'the sources are found');
  for (const layer of Object.keys(LAYERS)) {
    assert.ok(Object.keys(files).some((f) => f.startsWith(`${layer}/`)), `server/${layer}/ has sources`);
  }
  const v = violations(files);
  assert.deepEqual(v, [], `layering violations:\n  ${v.join('\n  ')}`);
});

test('the checker finds each kind of violation', () => {
  const files = {
    'core/scene.h': '',
    'core/scene.c': '#include "scene.h"\n#include "engine/store.h"\n#include <sqlite3.h>\n',
    'codec/proto.c': '#include "core/scene.h"\n#include <cjson/cJSON.h>\n#include "proto.h"\n',
    'engine/store.h': '#include "core/nothing.h"\n',
    'net/net.c': '#include <libwebsockets.h>\n#include "serve/x.h"\n#include <uv.h>\n',
    'serve/x.h': '#include <cjson/cJSON.h>\n#include "../core/scene.h"\n#include "lib/x.h"\n',
    'serve/y.c': '#include "clustered/z.h"\n#include <hiredis/adapters/libuv.h>\n',
    'engine/svg.c': '#include <libxml/parser.h>\n',
    /* Allowed: cluster/ owns hiredis and shares libuv; clustered/ sits
     * above serve/ and cluster/; cmd/ is above clustered/. */
    'cluster/c.h': '#include <hiredis/adapters/libuv.h>\n#include <hiredis/async.h>\n#include <uv.h>\n',
    'clustered/z.h': '#include "serve/x.h"\n#include "cluster/c.h"\n',
    'cmd/main.c': '#include "clustered/z.h"\n',
    /* Two files that include each other's headers; a third that includes
     * one of them only is fine. */
    'core/a.h': '', 'core/a.c': '#include "a.h"\n#include "b.h"\n',
    'core/b.h': '', 'core/b.c': '#include "core/a.h"\n#include "b.h"\n',
    'core/c.c': '#include "a.h"\n',
    'loose.c': '',
  };
  const v = violations(files);
  const has = (re) => assert.ok(v.some((s) => re.test(s)), `expected a violation like ${re}: ${v.join('; ')}`);
  has(/^core\/scene\.c:2: core\/ may not include "engine\/store\.h"/);
  has(/^core\/scene\.c:3: <sqlite3\.h> \(SQLite\) belongs to engine\//);
  has(/^codec\/proto\.c:3: "proto\.h" is not in codec\//);
  has(/^engine\/store\.h:1: "core\/nothing\.h" does not exist/);
  has(/^net\/net\.c:2: net\/ may not include "serve\/x\.h"/);
  has(/^serve\/x\.h:1: <cjson\/cJSON\.h> \(cJSON\) belongs to codec\//);
  has(/^serve\/x\.h:2: ".*" climbs out/);
  has(/^serve\/x\.h:3: "lib\/x\.h" names no layer/);
  has(/^loose\.c: a source outside the layer folders/);
  has(/^engine\/svg\.c:1: <libxml\/parser\.h> \(libxml2\) belongs to codec\//);
  has(/^serve\/y\.c:1: serve\/ may not include "clustered\/z\.h" \(clustered is not below serve\)/);
  has(/^serve\/y\.c:2: <hiredis\/adapters\/libuv\.h> \(hiredis\) belongs to cluster\/ alone/);
  has(/^serve\/y\.c:2: <hiredis\/adapters\/libuv\.h> \(libuv\) belongs to net\/ and cluster\/ alone, not serve\//);
  has(/^core\/a\.c and core\/b\.c include each other's headers$/);
  assert.equal(v.length, 14, v.join('\n'));
});
