// dragonbones_world.mjs: the independent oracle for the clip op
// (server/core/edit_clip.c) on a DragonBones skeleton: builds an armature
// of a _ske.json with @cocos/dragonbones-js headless (no renderer, bones
// only), stops an animation at each time asked for and prints, per time,
// each bone's world matrix as the runtime computes it (IK constraints
// included, which rigd solves live as well):
// [{"bone": [a, b, c, d, tx, ty], ...}, ...] as JSON on stdout, in the
// file's own y-down frame (x axis (a, b), y axis (c, d)).
//
// Usage: node dragonbones_world.mjs FILE ANIMATION TIME[,TIME...] [loop|advance]
// Without a mode the animation is stopped at each time, played once; with
// 'loop' looping; with 'advance' played once from 0 and advanced by the
// time, as a clip played once that ran past its end.
// The package is found as tests/oracle/dragonbones_clip.mjs finds it; exits
// 77 (skip) when it cannot be loaded.
import { buildArmature, loadRuntime, readSkeleton } from './dragonbones_runtime.mjs';

const [file, animation, times, mode] = process.argv.slice(2);
if (!file || !animation || !times) {
	console.error('usage: node dragonbones_world.mjs FILE ANIMATION TIME[,TIME...]');
	process.exit(2);
}
const db = await loadRuntime();
if (!db) {
	console.error('dragonbones_world: @cocos/dragonbones-js is not installed');
	process.exit(77);
}
const armature = buildArmature(db, readSkeleton(file));
if (!armature) {
	console.error('dragonbones_world: the runtime refused the data');
	process.exit(1);
}
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
