// dragonbones_world.mjs: the independent oracle for the clip op
// (server/core/edit_clip.c) on a DragonBones skeleton: builds an armature
// of a _ske.json with @cocos/dragonbones-js headless (no renderer, bones
// only), stops an animation at each time asked for and prints, per time,
// each bone's world matrix as the runtime computes it (IK constraints
// included, which rigd does not solve live):
// [{"bone": [a, b, c, d, tx, ty], ...}, ...] as JSON on stdout, in the
// file's own y-down frame (x axis (a, b), y axis (c, d)).
//
// Usage: node dragonbones_world.mjs FILE ANIMATION TIME[,TIME...] [loop|advance]
// Without a mode the animation is stopped at each time, played once; with
// 'loop' looping; with 'advance' played once from 0 and advanced by the
// time, as a clip played once that ran past its end.
// The package is found as tests/oracle/dragonbones_clip.mjs finds it; exits
// 77 (skip) when it cannot be loaded.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

async function runtime() {
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

const [file, animation, times, mode] = process.argv.slice(2);
if (!file || !animation || !times) {
	console.error('usage: node dragonbones_world.mjs FILE ANIMATION TIME[,TIME...]');
	process.exit(2);
}
const db = await runtime();
if (!db) {
	console.error('dragonbones_world: @cocos/dragonbones-js is not installed');
	process.exit(77);
}
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
let ske = JSON.parse(readFileSync(file, 'utf8'));
if (ske.skeleton) ske = ske.skeleton;
const factory = new BonesOnly();
const parsed = factory.parseDragonBonesData(ske, 'oracle');
if (!parsed) {
	console.error('dragonbones_world: the runtime refused the data');
	process.exit(1);
}
const armature = factory.buildArmature(parsed.armatureNames[0], 'oracle');
const out = [];
for (const t of times.split(',')) {
	let state;
	if (mode === 'advance') {
		// Played once from its start and advanced by t: past its end the
		// clip holds its last pose (seeking instead wraps the time).
		state = armature.animation.play(animation, 1);
		if (state) armature.advanceTime(Number(t));
	} else {
		state = armature.animation.gotoAndPlayByTime(animation, Number(t), mode === 'loop' ? 0 : 1);
		if (state) state.stop();
	}
	if (!state) {
		console.error(`dragonbones_world: no animation '${animation}'`);
		process.exit(1);
	}
	armature.advanceTime(0);
	const worlds = {};
	for (const bone of armature.getBones()) {
		const m = bone.globalTransformMatrix;
		worlds[bone.name] = [m.a, m.b, m.c, m.d, m.tx, m.ty];
	}
	out.push(worlds);
}
console.log(JSON.stringify(out));
