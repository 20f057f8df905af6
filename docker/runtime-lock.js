'use strict';
/*
 * Cuts a copy of web/package.json and web/package-lock.json down to what the
 * viewer needs at run time (the dependencies: three.js, DOMPurify), so that `npm ci` in
 * the image's build stage installs exactly the lock's version and integrity
 * of those and never reads the test packages (playwright-core, ws, ajv, the
 * glTF validator). `npm ci --omit=dev` alone skips installing them but still
 * checks their engines, and warns that playwright-core wants a newer node
 * than Debian's.
 *
 * Usage: node docker/runtime-lock.js DIR, with DIR the build stage's copy
 * of web/. It rewrites both files in place, so it must never be run on a
 * working tree. Exits 1 with a message when the lock is not lockfileVersion
 * 2 or 3 (the versions with a "packages" map).
 */
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node runtime-lock.js WEB_DIR');
  process.exit(2);
}
const pkgPath = path.join(dir, 'package.json');
const lockPath = path.join(dir, 'package-lock.json');
const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8'));
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
if (!lock.packages || !lock.packages['']) {
  console.error(`runtime-lock: ${lockPath} has no "packages" map (lockfileVersion ${lock.lockfileVersion})`);
  process.exit(1);
}

delete pkg.devDependencies;
delete lock.packages[''].devDependencies;
/* The packages npm marks "dev" are needed only through devDependencies;
 * those it marks "optional" (DOMPurify's type definitions) by nothing the
 * viewer runs. */
for (const [key, entry] of Object.entries(lock.packages)) {
  if (key !== '' && (entry.dev || entry.optional)) delete lock.packages[key];
}
/* lockfileVersion 2 also keeps the older "dependencies" tree. */
if (lock.dependencies) {
  for (const [name, entry] of Object.entries(lock.dependencies)) {
    if (entry.dev || entry.optional) delete lock.dependencies[name];
  }
}

fs.writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`runtime-lock: ${Object.keys(lock.packages).filter((k) => k).join(', ')}`);
