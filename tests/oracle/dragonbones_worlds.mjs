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
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

async function loadDragonBones() {
	// The package from web/node_modules (a devDependency there), else from
	// RIGD_DBJS_DIR (a directory whose node_modules has it).
	const roots = [join(here, '..', '..', 'web')];
	if (process.env.RIGD_DBJS_DIR) roots.unshift(process.env.RIGD_DBJS_DIR);
	for (const root of roots) {
		try {
			const req = createRequire(join(root, 'package.json'));
			const path = req.resolve('@cocos/dragonbones-js');
			return await import(path);
		} catch { /* next */ }
	}
	return null;
}

export async function dragonbonesWorlds(ske, armatureName, { noIk = false } = {}) {
	const db = await loadDragonBones();
	if (!db) return null;
	const data = JSON.parse(JSON.stringify(ske));
	if (noIk)
		for (const a of data.armature || []) delete a.ik;
	db.DragonBones.yDown = true;
	const info = console.info;
	console.info = () => {};
	const engine = new db.DragonBones(null);
	console.info = info;
	const proxy = {
		dbInit() {}, dbClear() {}, dbUpdate() {}, dispose() {},
		hasDBEventListener() { return false; }, dispatchDBEvent() {},
		addDBEventListener() {}, removeDBEventListener() {},
	};
	class HeadlessFactory extends db.BaseFactory {
		// Called with null by parseDragonBonesData, which then finds no
		// atlas in the skeleton and hands the object back to the pool.
		_buildTextureAtlasData() {
			return { returnToPool() {} };
		}
		_buildArmature(dataPackage) {
			const armature = db.BaseObject.borrowObject(db.Armature);
			armature.init(dataPackage.armature, proxy, {}, engine);
			return armature;
		}
		_buildSlots() { /* bones only: slots never move a bone */ }
		_buildSlot() { return null; }
	}
	const factory = new HeadlessFactory();
	const parsed = factory.parseDragonBonesData(data, 'oracle');
	if (!parsed) throw new Error('the runtime refused the data (version?)');
	const name = armatureName || parsed.armatureNames[0];
	const armature = factory.buildArmature(name, 'oracle');
	if (!armature) throw new Error(`no armature '${name}'`);
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
