// dragonbones_runtime.mjs: @cocos/dragonbones-js (an MIT fork of
// DragonBonesJS, a devDependency in web/) loaded headless for the oracle
// scripts: the package found in web/node_modules (or RIGD_DBJS_DIR), and
// an armature of a _ske.json built with bones only (no renderer, no
// slots, nothing dispatched), in the file's own y-down frame
// (DragonBones.yDown = true: the runtime otherwise negates y and angles).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/* The package's module, or null when it cannot be loaded. */
export async function loadRuntime() {
	const roots = [join(here, '..', '..', 'web')];
	if (process.env.RIGD_DBJS_DIR) roots.unshift(process.env.RIGD_DBJS_DIR);
	for (const root of roots) {
		try {
			const found = createRequire(join(root, 'package.json')).resolve('@cocos/dragonbones-js');
			return await import(found);
		} catch { /* the next root */ }
	}
	return null;
}

/* The _ske.json at 'file', or the skeleton of an import body there. */
export function readSkeleton(file) {
	const ske = JSON.parse(readFileSync(file, 'utf8'));
	return ske.skeleton || ske;
}

/* Armature 'name' (default the first) of the _ske.json object 'ske',
 * built by runtime 'db'; null when the runtime refuses the data or has no
 * such armature. */
export function buildArmature(db, ske, name) {
	db.DragonBones.yDown = true;
	const quiet = console.info;
	console.info = () => {};
	const engine = new db.DragonBones(null);
	console.info = quiet;
	// The armature's display proxy: nothing is drawn or dispatched.
	const proxy = {
		dbInit() {}, dbClear() {}, dbUpdate() {}, dispose() {},
		hasDBEventListener() { return false; }, dispatchDBEvent() {},
		addDBEventListener() {}, removeDBEventListener() {},
	};
	class BonesOnly extends db.BaseFactory {
		_buildTextureAtlasData() { return { returnToPool() {} }; }
		_buildArmature(pack) {
			const armature = db.BaseObject.borrowObject(db.Armature);
			armature.init(pack.armature, proxy, {}, engine);
			return armature;
		}
		_buildSlots() {}
		_buildSlot() { return null; }
	}
	const factory = new BonesOnly();
	const parsed = factory.parseDragonBonesData(ske, 'oracle');
	return parsed ? factory.buildArmature(name || parsed.armatureNames[0], 'oracle') : null;
}
