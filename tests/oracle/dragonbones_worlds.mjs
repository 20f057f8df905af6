// dragonbones_worlds.mjs: the independent oracle for the DragonBones
// import. Reads a DragonBones _ske.json (or an import body {"skeleton", ...}),
// builds the armature with @cocos/dragonbones-js headless (a factory
// without a renderer: no slots are built, only bones, at the setup pose)
// and prints {"bone name": [a, b, c, d, tx, ty]}, each bone's
// globalTransformMatrix, as JSON on stdout.
//
// Usage: node dragonbones_worlds.mjs FILE [ARMATURE] [--no-ik]
//   --no-ik drops the armature's "ik" array first (rigd solves no IK live).
// Exits 77 (skip) when the package cannot be loaded.
//
// The runtime is y-up by default (it negates y and angles as it builds);
// DragonBones.yDown = true keeps the file's own y-down frame, rigd's.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildArmature, loadRuntime } from './dragonbones_runtime.mjs';

export async function dragonbonesWorlds(ske, armatureName, { noIk = false } = {}) {
	const db = await loadRuntime();
	if (!db) return null;
	const data = JSON.parse(JSON.stringify(ske));
	if (noIk)
		for (const a of data.armature || []) delete a.ik;
	const armature = buildArmature(db, data, armatureName);
	if (!armature) throw new Error(`the runtime refused the data or has no armature '${armatureName || '(first)'}'`);
	const out = {};
	for (const bone of armature.getBones()) {
		const m = bone.globalTransformMatrix;
		out[bone.name] = [m.a, m.b, m.c, m.d, m.tx, m.ty];
	}
	return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const args = process.argv.slice(2);
	const noIk = args.includes('--no-ik');
	const pos = args.filter((a) => a !== '--no-ik');
	if (!pos[0]) {
		console.error('usage: node dragonbones_worlds.mjs FILE [ARMATURE] [--no-ik]');
		process.exit(2);
	}
	let json = JSON.parse(readFileSync(pos[0], 'utf8'));
	if (json.skeleton) json = json.skeleton;
	const worlds = await dragonbonesWorlds(json, pos[1], { noIk });
	if (!worlds) {
		console.error('dragonbones_worlds: @cocos/dragonbones-js is not installed');
		process.exit(77);
	}
	console.log(JSON.stringify(worlds));
}
