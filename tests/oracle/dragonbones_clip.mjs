// dragonbones_clip.mjs: the independent oracle for the DragonBones clip
// sampler (server/core/clip.c). Builds an armature of a DragonBones
// _ske.json with @cocos/dragonbones-js headless (no renderer, bones only),
// stops an animation at each time asked for, and prints, per time, each
// bone's animation pose (the values the runtime applies over the setup
// transform), in the order of the times asked for:
// [{"bone": [x, y, rotation_deg, skew_deg, scaleX, scaleY], ...}, ...] as
// JSON on stdout.
//
// Usage: node dragonbones_clip.mjs FILE ANIMATION TIME[,TIME...] [loop]
// Without 'loop' the animation plays once (its last frame holds); with it,
// it loops (its last frame tweens back to the first).
// The package is found in web/node_modules, else under RIGD_DBJS_DIR (a
// directory whose node_modules holds it). Exits 77 (skip) when it cannot be
// loaded.
//
// DragonBones.yDown = true keeps the file's own y-down frame (the runtime
// otherwise negates y and angles as it reads).
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
	console.error('usage: node dragonbones_clip.mjs FILE ANIMATION TIME[,TIME...]');
	process.exit(2);
}
const db = await runtime();
if (!db) {
	console.error('dragonbones_clip: @cocos/dragonbones-js is not installed');
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
	console.error('dragonbones_clip: the runtime refused the data');
	process.exit(1);
}
const armature = factory.buildArmature(parsed.armatureNames[0], 'oracle');
const deg = 180 / Math.PI;
const out = [];
for (const t of times.split(',')) {
	const state = armature.animation.gotoAndPlayByTime(animation, Number(t), mode === 'loop' ? 0 : 1);
	if (state) state.stop();
	if (!state) {
		console.error(`dragonbones_clip: no animation '${animation}'`);
		process.exit(1);
	}
	armature.advanceTime(0);
	const pose = {};
	for (const bone of armature.getBones()) {
		const p = bone.animationPose;
		pose[bone.name] = [p.x, p.y, p.rotation * deg, p.skew * deg, p.scaleX, p.scaleY];
	}
	out.push(pose);
}
console.log(JSON.stringify(out));
