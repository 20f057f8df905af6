// dragonbones_oracle.test.mjs: the worlds rigd computes for imported
// DragonBones files (tests/oracle/skel_worlds) against the runtime's
// (tests/oracle/dragonbones_worlds.mjs, @cocos/dragonbones-js), bone by
// bone, to 1e-6: the MIT mecha_1406 character with its "ik" array removed
// (rigd solves no IK live) and the synthetic files of
// tests/data/dragonbones (one per inherit flag false, reflected parents,
// skew, non-uniform parent scale).
//
// And mecha_1406 with its IK: every bone whose world then differs from the
// runtime's must be one the report names as not applied.
//
// Prints one line per bone (its inherit flags, the largest difference)
// and a summary per file. Exit 0 when every bone matches, 1 when one does
// not, 77 (ctest's skip) when the oracle package is not installed. When
// the shared character is absent its case is skipped and said so; the
// synthetic files run all the same.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dragonbonesWorlds } from './oracle/dragonbones_worlds.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const build = process.env.RIGD_BUILD_DIR || join(here, '..', 'build');
const samples = process.env.RIGD_DRAGONBONES_SAMPLES || join(here, '..', '..', 'shared', 'dragonbones');
const tool = join(build, 'tests', 'skel_worlds');
const TOL = 1e-6;

// Bones whose worlds rigd's core does not yet compute as the runtime does,
// each with why (docs/dragonbones.md, section 4, "Known differences"). They
// are printed as KNOWN and do not fail the test; one that comes to match
// does, so that it is taken off this list when the core is fixed.
const KNOWN = {
	'mirrored_no_rotation_ske.json': {
		bones: ['leaf', 'tip'],
		why: 'inheritRotation false under a parent whose world x axis has a < 0 and whose own scX < 0: ' +
			'the runtime turns the local back by atan(b/a) = the x axis direction + 180 deg',
	},
	'mirrored_parents_no_rotation_ske.json': {
		bones: ['c2'],
		why: 'inheritRotation false under a no-scale parent with scX < 0 (c1, under a decomposed parent ' +
			'with scX < 0 whose world a > 0, matches): the runtime turns the local back by the ' +
			'parent\'s own rotation, the x axis direction + 180 deg',
	},
	'mirrored_root_no_rotation_ske.json': {
		bones: ['child'],
		why: 'inheritRotation false under a root (or no-scale) parent with scX < 0: the runtime turns ' +
			'the local back by that parent\'s own rotation, the x axis direction + 180 deg',
	},
};

const probe = await dragonbonesWorlds({ version: '5.5', armature: [{ name: 'a', bone: [{ name: 'b' }] }] });
if (!probe) {
	console.log('SKIP: @cocos/dragonbones-js is not installed (web/node_modules or RIGD_DBJS_DIR)');
	process.exit(77);
}

const cases = [];
const mecha = join(samples, 'mecha_1406', 'mecha_1406_ske.json');
if (existsSync(mecha)) {
	const ske = JSON.parse(readFileSync(mecha, 'utf8'));
	for (const a of ske.armature) delete a.ik;
	cases.push({ name: 'mecha_1406 (ik removed)', ske });
} else {
	console.log(`mecha_1406 skipped: ${mecha} is absent`);
}
const dataDir = join(here, 'data', 'dragonbones');
for (const f of readdirSync(dataDir).filter((f) => f.endsWith('_ske.json')).sort())
	cases.push({ name: f, ske: JSON.parse(readFileSync(join(dataDir, f), 'utf8')) });

function flags(bone) {
	const off = ['inheritTranslation', 'inheritRotation', 'inheritScale', 'inheritReflection']
		.filter((k) => bone[k] === false).map((k) => k.replace('inherit', '').toLowerCase());
	return off.length ? 'no ' + off.join(', no ') : 'normal';
}

const tmp = mkdtempSync(join(tmpdir(), 'rigd-dbo-'));
let failed = 0, total = 0, known = 0, ikFailed = false;
try {
	for (const c of cases) {
		const body = join(tmp, 'body.json');
		writeFileSync(body, JSON.stringify({ skeleton: c.ske }));
		let rigd;
		try {
			rigd = JSON.parse(execFileSync(tool, ['dragonbones', body],
				{ encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
		} catch (e) {
			const n = c.ske.armature[0].bone.length;
			console.log(`${c.name}: 0 of ${n} bones match: skel_worlds failed: ${(e.stderr || e.message).trim()}`);
			failed += n;
			total += n;
			continue;
		}
		const oracle = await dragonbonesWorlds(c.ske);
		const bones = c.ske.armature[0].bone;
		let bad = 0, mismatched = 0;
		for (const b of bones) {
			const o = oracle[b.name], w = rigd[b.name];
			total++;
			if (!o || !w) {
				console.log(`  ${c.name} ${b.name}: missing (${!o ? 'oracle' : 'rigd'})`);
				bad++;
				mismatched++;
				continue;
			}
			const r = [w[0], w[4], w[1], w[5], w[3], w[7]];
			const err = Math.max(...r.map((v, i) => Math.abs(v - o[i]) / Math.max(1, Math.abs(o[i]))));
			const ok = err <= TOL;
			const isKnown = KNOWN[c.name]?.bones.includes(b.name);
			let tag = ok ? 'ok  ' : 'FAIL';
			if (isKnown && !ok) {
				tag = 'KNOWN';
				known++;
				mismatched++;
			} else if (isKnown) {
				tag = 'FAIL (matches now: take it off KNOWN)';
				bad++;
			} else if (!ok) {
				bad++;
				mismatched++;
			}
			console.log(`  ${tag} ${c.name} ${b.name} [${flags(b)}] max diff ${err.toExponential(2)}` +
				(ok ? '' : `\n       rigd   [a b c d tx ty] ${r.map((v) => v.toFixed(6)).join(' ')}` +
					`\n       oracle [a b c d tx ty] ${o.map((v) => v.toFixed(6)).join(' ')}`) +
				(isKnown && !ok ? `\n       known: ${KNOWN[c.name].why}` : ''));
		}
		console.log(`${c.name}: ${bones.length - mismatched} of ${bones.length} bones match`);
		failed += bad;
	}
	// mecha_1406 with its IK: the runtime solves it at the setup pose and
	// rigd does not, so some bones differ; every one of them must be named
	// in the report's not_applied lines.
	if (existsSync(mecha)) {
		const ske = JSON.parse(readFileSync(mecha, 'utf8'));
		const body = join(tmp, 'body.json');
		writeFileSync(body, JSON.stringify({ skeleton: ske }));
		const run = (extra) => JSON.parse(execFileSync(tool, ['dragonbones', body, ...extra],
			{ encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
		const rigd = run([]), report = run(['report']);
		const oracle = await dragonbonesWorlds(ske);
		const named = new Set(report.not_applied.flatMap((l) =>
			(/for bones (.*) \(/.exec(l)?.[1] || '').split(', ')));
		const differ = Object.keys(oracle).filter((n) => {
			const w = rigd[n], o = oracle[n], r = [w[0], w[4], w[1], w[5], w[3], w[7]];
			return r.some((v, i) => Math.abs(v - o[i]) > TOL * Math.max(1, Math.abs(o[i])));
		});
		const unnamed = differ.filter((n) => !named.has(n));
		console.log(`mecha_1406 with IK: ${differ.length} bones differ from the runtime ` +
			`(${differ.join(', ')}); the report names ${[...named].join(', ')}` +
			(unnamed.length ? `; NOT NAMED: ${unnamed.join(', ')}` : ''));
		if (unnamed.length || !differ.length) ikFailed = true;
	}
} finally {
	rmSync(tmp, { recursive: true, force: true });
}
console.log(`${total - failed - known} of ${total} bones match the runtime to ${TOL}` +
	(known ? `; ${known} known differences (KNOWN above)` : '') + (failed ? `; ${failed} unexpected` : ''));
process.exit(failed || ikFailed ? 1 : 0);
