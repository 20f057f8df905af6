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
import { buildArmature, loadRuntime, readSkeleton } from './dragonbones_runtime.mjs';

const [file, animation, times, mode] = process.argv.slice(2);
if (!file || !animation || !times) {
	console.error('usage: node dragonbones_clip.mjs FILE ANIMATION TIME[,TIME...]');
	process.exit(2);
}
const db = await loadRuntime();
if (!db) {
	console.error('dragonbones_clip: @cocos/dragonbones-js is not installed');
	process.exit(77);
}
const armature = buildArmature(db, readSkeleton(file));
if (!armature) {
	console.error('dragonbones_clip: the runtime refused the data');
	process.exit(1);
}
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
