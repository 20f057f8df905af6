/*
 * The clips panel of the 2D viewer (web/app/clips.js) against a real rigd
 * in Chromium, with two pages on one scene: the panel is hidden in a
 * scene without clips and lists a skeleton's clips once one is imported;
 * picking a clip and scrubbing in page A poses the bones on page B at the
 * matrices the server computed, and at the worked time the locals are the
 * ones the Spine file gives by hand; the arrow keys step a frame, Space
 * plays and pauses; play streams updates to page B with at most one batch
 * in flight; DragonBones clips (a synthetic file, and the shared
 * mecha_1406 character when present) step in their own frame rate; a
 * 100-bone clip plays while page A's frame times are measured and printed.
 * Every control is found by its accessible name.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { advance, frameOfTime, framesPerSecond, lastFrame, sentTime, timeOfFrame } from '../../web/app/clips.js';
import { SOURCE_DIR, dragSlider, frameIntervals, launch, maxDiff, openPage, poll, rigd } from './lib/browser.mjs';
import { encodePng } from './lib/png.mjs';

let browser;
before(async () => {
	browser = await launch();
});
after(async () => {
	if (browser) await browser.close();
});

const SERVER_ARGS = { args: ['--sync', 'normal'] };
const DATA = path.join(SOURCE_DIR, 'tests', 'data', 'clips');
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const MECHA = process.env.RIGD_GLTF_SAMPLES ? path.join(process.env.RIGD_GLTF_SAMPLES, '..', 'dragonbones', 'mecha_1406') : null;

/* Imports a skeleton file into scene 'name' ('kind' spine or dragonbones). */
async function importSkeleton(server, name, kind, body) {
	const r = await rigd.post(server, `/api/scenes/${name}/${kind}`, body);
	assert.equal(r.status, 200, r.text);
	return r.json;
}

/* The panel's controls, by accessible name. */
const controls = (page) => ({
	panel: page.getByRole('region', { name: 'Clips' }),
	time: page.getByRole('slider', { name: 'Clip time' }),
	weight: page.getByRole('slider', { name: 'Clip weight' }),
	play: page.getByRole('button', { name: 'Play clip' }),
	pause: page.getByRole('button', { name: 'Pause clip' }),
	loop: page.getByRole('checkbox', { name: 'Loop' }),
	clip: (name) => page.getByRole('button', { name: new RegExp(`^${name}(?: \\(.*\\))?, [0-9.]+ seconds$`) }),
});

const state = (page) => page.evaluate(() => window.rigd.clips());

/* Waits until the page has no clip batch out and holds the server's latest
 * seq; returns the server's tree. */
async function settled(server, page, scene) {
	const { value } = await poll(
		async () => {
			const s = await state(page);
			if (s && s.outstanding) return null;
			const tree = await rigd.tree(server, scene);
			const seq = await page.evaluate(() => window.rigd.seq());
			return seq === tree.seq && tree;
		},
		{ timeout: 10000, what: 'the page to show the server\'s seq' },
	);
	return value;
}

/* Largest difference between the worlds page 'page' draws and the
 * server's tree, over every node of the tree. */
async function worldGap(page, tree) {
	const drawn = await page.evaluate((ids) => ids.map((id) => window.rigd.worldOf(id)), tree.nodes.map((n) => n.id));
	return Math.max(...tree.nodes.map((n, i) => maxDiff(n.world, drawn[i])));
}

const nodeOf = (tree, id) => tree.nodes.find((n) => n.id === id);

/* Presses arrow keys on the focused element until the panel shows frame
 * 'frame' of a clip of 'fps' frames a second. */
async function stepTo(page, frame, fps) {
	for (let k = 0; k < 400; k++) {
		const at = Math.round((await state(page)).time * fps);
		if (at === frame) return;
		await page.keyboard.press(at < frame ? 'ArrowRight' : 'ArrowLeft');
	}
	throw new Error(`could not step to frame ${frame}`);
}

/* Starts recording, in the page, every distinct seq it shows and the
 * world of node 'id' at each. */
function recordSeqs(page, id) {
	return page.evaluate((nodeId) => {
		window.__seen = [];
		let last = null;
		const look = () => {
			const seq = window.rigd.seq();
			if (seq !== last) window.__seen.push({ seq, world: window.rigd.worldOf(nodeId) });
			last = seq;
			window.__look = requestAnimationFrame(look);
		};
		look();
	}, id);
}

function stopRecording(page) {
	return page.evaluate(() => {
		cancelAnimationFrame(window.__look);
		return window.__seen;
	});
}

describe('clips2d: the panel\'s time arithmetic, by hand', () => {
	const spine = { duration: 2, frame_rate: 0 };
	const bones24 = { duration: 1.25, frame_rate: 24 }; // 30 frames
	const ragged = { duration: 0.51, frame_rate: 10 }; // 5.1 frames

	it('counts frames in the clip\'s rate, 60 a second without one', () => {
		assert.equal(framesPerSecond(spine), 60);
		assert.equal(framesPerSecond(bones24), 24);
		assert.equal(lastFrame(spine), 120);
		assert.equal(lastFrame(bones24), 30);
		assert.equal(lastFrame(ragged), 6, 'rounded up so the end can be reached');
		assert.equal(timeOfFrame(ragged, 3), 0.3);
		assert.equal(timeOfFrame(ragged, 6), 0.51, 'the last frame is the end, not 0.6');
		assert.equal(frameOfTime(bones24, 0.5), 12);
		assert.equal(frameOfTime(bones24, 0.52), 12);
		assert.equal(frameOfTime(bones24, 1.25), 30);
	});

	it('advances by the elapsed time, wrapping when looping, stopping at the end otherwise', () => {
		assert.deepEqual(advance(0.5, 0.25, 2, true), { time: 0.75, ended: false });
		const wrapped = advance(1.9, 0.2, 2, true);
		assert.ok(Math.abs(wrapped.time - 0.1) < 1e-12 && !wrapped.ended);
		assert.deepEqual(advance(0, 5, 2, true), { time: 1, ended: false });
		assert.deepEqual(advance(1.9, 0.2, 2, false), { time: 2, ended: true });
		assert.deepEqual(advance(0, 0.1, 0, false), { time: 0, ended: true });
	});

	it('sends a clip with a frame rate at its frames, one without at the time itself', () => {
		assert.equal(sentTime(spine, 0.4567), 0.4567);
		assert.equal(sentTime(bones24, 0.52), 0.5);
		assert.equal(sentTime(bones24, 1.25), 1.25);
	});
});

/*
 * Watches page 'page''s websockets opened from now on: the edit batches
 * it sends and the answers (ack or error) it receives, by "req". Returns
 * {out, most, sent, clipTimes}: the batches out now, the most out at once
 * since 'most' was last reset, the batches sent and the time of every clip
 * op sent.
 */
function trackEdits(page) {
	const t = { out: new Set(), most: 0, sent: 0, clipTimes: [] };
	const json = (payload) => {
		if (typeof payload !== 'string') return null;
		try {
			return JSON.parse(payload);
		} catch {
			return null;
		}
	};
	page.on('websocket', (ws) => {
		ws.on('framesent', ({ payload }) => {
			const m = json(payload);
			if (!m || m.type !== 'edit') return;
			t.out.add(m.req);
			t.sent++;
			for (const op of m.ops || []) if (op.op === 'clip') t.clipTimes.push(op.time);
			t.most = Math.max(t.most, t.out.size);
		});
		ws.on('framereceived', ({ payload }) => {
			const m = json(payload);
			if (m && (m.type === 'ack' || m.type === 'error')) t.out.delete(m.req);
		});
	});
	return t;
}

describe('clips2d: a Spine clip picked, scrubbed, stepped and played on two pages', () => {
	let server;
	let A;
	let B;
	let wire;

	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
		const r = await rigd.post(server, '/api/scenes', { name: 'plain', dims: 2 });
		assert.equal(r.status, 201, r.text);
		// spine_walk.json has no skins (the clip readers need none); the
		// import wants the setup attachment in the default skin.
		const walk = readJson(path.join(DATA, 'spine_walk.json'));
		walk.skins = [{ name: 'default', attachments: { hand: { hand: { width: 10, height: 10 }, fist: { width: 8, height: 8 } } } }];
		// With an atlas and its page, as a tool exports them: the viewer
		// draws the slots' regions (an orange page).
		const atlas = 'page.png\nsize: 64, 64\nfilter: Linear, Linear\nhand\n  bounds: 0, 0, 10, 10\nfist\n  bounds: 16, 0, 8, 8\n';
		const images = { 'page.png': encodePng(64, 64, () => [230, 140, 40, 255]).toString('base64') };
		await importSkeleton(server, 'walk', 'spine', { skeleton: walk, atlas, images, file: 'walk.json' });
		A = await openPage(browser, `${server.url}/#/scene/plain`, { name: 'alice' });
		// Page A's batches are watched on the wire from a reload on.
		wire = trackEdits(A.page);
		await A.page.reload();
		await A.page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live', null, { timeout: 20000 });
		B = await openPage(browser, `${server.url}/#/scene/walk`, { name: 'bob' });
	});

	after(async () => {
		for (const p of [A, B]) if (p) await p.context.close();
		if (server) await server.stop();
	});

	it('is hidden in a 2D scene without clips and lists the clips of an imported skeleton', async () => {
		await poll(() => A.page.evaluate(() => window.rigd.clips() && window.rigd.clips().clips), { what: 'the clip list of plain' });
		assert.equal(await controls(A.page).panel.isVisible(), false);
		await A.page.evaluate(() => (location.hash = '#/scene/walk'));
		await A.page.waitForFunction(() => window.rigd.phase() === 'live' && window.rigd.clips() && window.rigd.clips().clips.length > 0, null, { timeout: 10000 });
		const c = controls(A.page);
		await c.panel.waitFor({ state: 'visible' });
		const listed = (await state(A.page)).clips;
		assert.deepEqual(listed.map((x) => x.name).sort(), ['idle', 'walk']);
		// walk's last key is its event at 2 s; idle's a translatey key at 2.5 s.
		assert.equal(listed.find((x) => x.name === 'walk').duration, 2);
		assert.equal(listed.find((x) => x.name === 'idle').duration, 2.5);
		assert.equal(await c.clip('walk').count(), 1);
		assert.equal(await c.time.isDisabled(), true, 'nothing to scrub before a clip is picked');
		assert.deepEqual(A.problems, []);
	});

	it('scrubbing in page A poses page B at the server\'s matrices; the arrow keys step a frame', async () => {
		const c = controls(A.page);
		await c.clip('walk').click();
		assert.equal(await c.clip('walk').getAttribute('aria-pressed'), 'true');
		assert.equal(await c.time.getAttribute('max'), '120', '2 s at 60 frames a second');
		await dragSlider(A.page, 'role=slider[name="Clip time"]', 0.3);
		const s = await state(A.page);
		assert.ok(s.time > 0.3 && s.time < 0.9, `the drag reached ${s.time} s`);
		let tree = await settled(server, A.page, 'walk');
		await settled(server, B.page, 'walk');
		assert.ok((await worldGap(B.page, tree)) < 1e-9, 'page B draws the server\'s worlds');

		// The arrow keys, with the focus on the play button, step a frame
		// each; walk at 1 s is checked by hand from the file.
		await c.play.focus();
		const before = Math.round((await state(A.page)).time * 60);
		await A.page.keyboard.press('ArrowRight');
		assert.equal(Math.round((await state(A.page)).time * 60), before + 1);
		await A.page.keyboard.press('ArrowLeft');
		assert.equal(Math.round((await state(A.page)).time * 60), before);
		await stepTo(A.page, 60, 60);
		assert.equal((await state(A.page)).time, 1);
		tree = await settled(server, A.page, 'walk');
		await settled(server, B.page, 'walk');
		assert.ok((await worldGap(B.page, tree)) < 1e-9, 'page B draws the server\'s worlds at 1 s');
		// At 1 s (spine_walk.json): arm's rotate Bezier reaches its last key,
		// 100, over the setup 10; its translate holds the stepped key at
		// 0.5 s, (4, 2) in y-up, (4, -2) on screen; its scale is the key at
		// 1 s, (2, 0.5) times the setup 1; leg's shearx is past its last
		// key, 15. The draw order is the 0.5 s key: body moved 2 places
		// back to front, hand and foot fill the places before it.
		const arm = nodeOf(tree, 'arm');
		assert.ok(Math.abs(arm.angle - 110) < 1e-4, `arm angle ${arm.angle}`);
		assert.ok(maxDiff(arm.t.slice(0, 2), [4, -2]) < 1e-4, `arm t ${arm.t}`);
		assert.ok(maxDiff(arm.s.slice(0, 2), [2, 0.5]) < 1e-6, `arm s ${arm.s}`);
		assert.ok(maxDiff(nodeOf(tree, 'leg').shear, [15, 0]) < 1e-4, `leg shear ${nodeOf(tree, 'leg').shear}`);
		assert.deepEqual(['slot:hand', 'slot:foot', 'slot:body'].map((id) => nodeOf(tree, id).z), [0, 1, 2]);
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});

	it('the weight mixes the clip\'s pose into the current one', async () => {
		const c = controls(A.page);
		// From walk at 1 s (arm angle 110, t (4, -2), s (2, 0.5)), a drag of
		// the weight resends 1 s, whose pose the bones already hold.
		await dragSlider(A.page, 'role=slider[name="Clip weight"]', 0.5);
		const w = (await state(A.page)).weight;
		assert.ok(w > 0.3 && w < 0.7, `weight ${w}`);
		await settled(server, A.page, 'walk');
		// Picking walk again sends time 0 at that weight. At 0 s arm's
		// rotate is its first key, 0 (angle 10 with the setup); translate
		// is before its first key (the setup, 0); scale is the key (2, 1).
		// Each moves the fraction w of the way (docs/clips.md, Blending).
		await c.clip('walk').click();
		const tree = await settled(server, A.page, 'walk');
		await settled(server, B.page, 'walk');
		const arm = nodeOf(tree, 'arm');
		assert.ok(Math.abs(arm.angle - (110 + (10 - 110) * w)) < 1e-4, `arm angle ${arm.angle} at weight ${w}`);
		assert.ok(maxDiff(arm.t.slice(0, 2), [4 - 4 * w, -2 + 2 * w]) < 1e-4, `arm t ${arm.t}`);
		assert.ok(maxDiff(arm.s.slice(0, 2), [2, 0.5 + 0.5 * w]) < 1e-6, `arm s ${arm.s}`);
		assert.ok((await worldGap(B.page, tree)) < 1e-9);
		// Back to weight 1 (End on the slider), which poses walk at 0 fully.
		await c.weight.focus();
		await A.page.keyboard.press('End');
		assert.equal((await state(A.page)).weight, 1);
		await settled(server, A.page, 'walk');
		assert.deepEqual(A.problems, []);
	});

	it('Space plays and pauses; play streams updates to page B, one batch in flight at most', async () => {
		const c = controls(A.page);
		await c.play.focus();
		await stepTo(A.page, 90, 60);
		await settled(server, A.page, 'walk');
		const start = await A.page.evaluate(() => window.rigd.worldOf('arm'));
		await recordSeqs(B.page, 'arm');
		const s0 = await state(A.page);
		wire.most = 0;
		const seq0 = await B.page.evaluate(() => window.rigd.seq());
		await c.play.focus();
		await A.page.keyboard.press('Space');
		await c.pause.waitFor();
		assert.equal((await state(A.page)).playing, true);
		await new Promise((r) => setTimeout(r, 1000));
		assert.equal((await state(A.page)).playing, true, 'still playing (Space did not also click)');
		await A.page.keyboard.press('Space');
		await c.play.waitFor();
		const s = await state(A.page);
		assert.equal(s.playing, false);
		const tree = await settled(server, A.page, 'walk');
		await settled(server, B.page, 'walk');
		const seen = await stopRecording(B.page);
		const updates = seen.filter((x) => x.seq > seq0);
		console.log(`# play for 1 s: page A drew ${s.frames - s0.frames} frames, sent ${s.sent - s0.sent} batches (${s.skipped - s0.skipped} frames skipped), at most ${wire.most} out at once; page B saw ${updates.length} new seqs`);
		assert.ok(updates.length >= 10, `page B saw ${updates.length} updates`);
		assert.equal(wire.most, 1, 'one batch on the wire at a time');
		assert.ok(maxDiff(updates.at(-1).world, start) > 1e-3, 'the pose moved');
		assert.ok((await worldGap(B.page, tree)) < 1e-9, 'page B ends on the server\'s worlds');
		// The clip loops by default: more than a second of a 2 s clip
		// from 1.5 s wraps past the end.
		assert.ok(s.time < 1.5, `the time wrapped: ${s.time}`);
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});

	it('without loop, play stops at the end and sends the end; one Ctrl+Z undoes the play', async () => {
		const c = controls(A.page);
		await c.loop.uncheck();
		await c.clip('idle').click();
		const before = await settled(server, A.page, 'walk');
		await c.play.click();
		await c.play.waitFor({ timeout: 10000 });
		const s = await state(A.page);
		assert.equal(s.playing, false);
		assert.equal(s.time, 2.5);
		const tree = await settled(server, A.page, 'walk');
		// idle at its end: root's translatey key, 3 up in y-up, -3 on screen.
		assert.ok(Math.abs(nodeOf(tree, 'root').t[1] + 3) < 1e-4, `root t ${nodeOf(tree, 'root').t}`);
		// The whole play is one undo step: back to idle at 0 (the pick,
		// its own step, stays).
		await A.page.keyboard.press('Control+z');
		await poll(async () => maxDiff(rigd.worldsOf((await rigd.tree(server, 'walk')).nodes).root, rigd.worldsOf(before.nodes).root) < 1e-9, { timeout: 10000, what: 'the undo of the play' });
		const undone = await settled(server, A.page, 'walk');
		assert.ok(Math.max(...undone.nodes.map((n) => maxDiff(n.world, nodeOf(before, n.id).world))) < 1e-9, 'every node back where the play started');
		assert.ok(Math.abs(nodeOf(undone, 'root').t[1]) < 1e-9);
		assert.equal(await c.weight.getAttribute('aria-label'), 'Clip weight');
		await c.loop.check();
		assert.deepEqual(A.problems, []);
	});

	it('is read-only while the timeline shows an earlier seq, and lists that seq\'s clips', async () => {
		const c = controls(B.page);
		await settled(server, B.page, 'walk');
		assert.equal(await c.play.isDisabled(), true, 'page B picked no clip yet');
		await c.clip('walk').click();
		assert.equal(await c.play.isDisabled(), false);
		await settled(server, B.page, 'walk');
		const history = B.page.getByRole('slider', { name: 'Scene history (seq)' });
		await history.focus();
		await B.page.keyboard.press('ArrowLeft');
		await B.page.waitForFunction(() => window.rigd.seq() < window.rigd.liveSeq() && !window.rigd.editable());
		await poll(() => c.play.isDisabled(), { what: 'the clip controls to be disabled' });
		assert.equal(await c.clip('walk').isDisabled(), true);
		assert.equal(await c.time.isDisabled(), true);
		// Seq 0 is the empty scene: no skeleton, no clips, no panel.
		await B.page.keyboard.press('Home');
		await B.page.waitForFunction(() => window.rigd.seq() === 0);
		await poll(async () => !(await c.panel.isVisible()), { what: 'the panel to hide at seq 0' });
		await B.page.keyboard.press('End');
		await B.page.waitForFunction(() => window.rigd.editable());
		await c.panel.waitFor({ state: 'visible' });
		await poll(async () => !(await c.play.isDisabled()), { what: 'the clip controls to be enabled live' });
		assert.deepEqual(B.problems, []);
	});
});

describe('clips2d: DragonBones clips in their own frame rate', () => {
	let server;
	let A;
	let B;
	let wire;

	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
		await importSkeleton(server, 'swing', 'dragonbones', { skeleton: readJson(path.join(DATA, 'dragonbones_swing.json')) });
		A = await openPage(browser, `${server.url}/#/scene/swing`, { name: 'alice' });
		wire = trackEdits(A.page);
		await A.page.reload();
		await A.page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live', null, { timeout: 20000 });
		B = await openPage(browser, `${server.url}/#/scene/swing`, { name: 'bob' });
		await A.page.waitForFunction(() => window.rigd.clips() && window.rigd.clips().clips.length > 0, null, { timeout: 10000 });
	});

	after(async () => {
		for (const p of [A, B]) if (p) await p.context.close();
		if (server) await server.stop();
	});

	it('steps the synthetic swing at 10 frames a second and page B follows', async () => {
		const c = controls(A.page);
		const swing = (await state(A.page)).clips.find((x) => x.name === 'swing');
		assert.equal(swing.frame_rate, 10, 'the armature\'s frameRate');
		assert.equal(swing.duration, 1, '10 frames at 10 a second');
		await c.clip('swing').click();
		assert.equal(await c.time.getAttribute('max'), '10');
		await c.play.focus();
		await stepTo(A.page, 5, 10);
		assert.equal((await state(A.page)).time, 0.5);
		const tree = await settled(server, A.page, 'swing');
		await settled(server, B.page, 'swing');
		assert.ok((await worldGap(B.page, tree)) < 1e-9);
		// At frame 5 arm's rotate key is -170 over the setup skY 30: -140
		// clockwise on screen in DragonBones' y-down, angle = -skY = 140.
		const arm = nodeOf(tree, 'arm');
		assert.ok(Math.abs(arm.angle - 140) < 1e-4, `arm angle ${arm.angle}`);
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});

	it('plays a clip of mecha_1406, seen on page B', { skip: !MECHA || !fs.existsSync(MECHA) ? 'the shared mecha_1406 files are absent' : false }, async () => {
		const png = fs.readFileSync(path.join(MECHA, 'mecha_1406_tex.png')).toString('base64');
		await importSkeleton(server, 'mecha', 'dragonbones', {
			skeleton: readJson(path.join(MECHA, 'mecha_1406_ske.json')),
			atlas: readJson(path.join(MECHA, 'mecha_1406_tex.json')),
			images: { 'mecha_1406_tex.png': png },
		});
		for (const p of [A, B]) await p.page.evaluate(() => (location.hash = '#/scene/mecha'));
		for (const p of [A, B]) await p.page.waitForFunction(() => window.rigd.phase() === 'live' && window.rigd.clips() && window.rigd.clips().clips.length > 0, null, { timeout: 10000 });
		const c = controls(A.page);
		const walk = (await state(A.page)).clips.find((x) => x.name === 'walk');
		assert.equal(walk.frame_rate, 24);
		assert.ok(Math.abs(walk.duration - 30 / 24) < 1e-9, `walk lasts ${walk.duration} s`);
		await c.clip('walk').click();
		const bone = (await rigd.tree(server, 'mecha')).nodes.find((n) => !n.id.startsWith('slot:') && n.parent).id;
		await recordSeqs(B.page, bone);
		const seq0 = await B.page.evaluate(() => window.rigd.seq());
		const s0 = await state(A.page);
		const from = wire.clipTimes.length;
		await c.play.click();
		await new Promise((r) => setTimeout(r, 1000));
		await c.pause.click();
		const s = await state(A.page);
		const tree = await settled(server, A.page, 'mecha');
		await settled(server, B.page, 'mecha');
		const seen = (await stopRecording(B.page)).filter((x) => x.seq > seq0);
		const times = wire.clipTimes.slice(from);
		console.log(`# mecha_1406 walk for 1 s: page A drew ${s.frames - s0.frames} frames, sent ${s.sent - s0.sent} batches (${s.skipped - s0.skipped} frames skipped); page B saw ${seen.length} new seqs`);
		// 24 clip frames a second: every time sent is a frame of the clip
		// (or its end), and no two batches in a row pose the same frame.
		for (const t of times) assert.ok(Math.abs(t * 24 - Math.round(t * 24)) < 1e-9 || t === walk.duration, `time ${t} is not a frame at 24 a second`);
		for (let i = 1; i < times.length; i++) assert.notEqual(times[i], times[i - 1], 'the same frame sent twice in a row');
		assert.ok(seen.length >= 5, `page B saw ${seen.length} updates`);
		assert.ok((await worldGap(B.page, tree)) < 1e-9);
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});
});

/* A Spine skeleton of 'n' bones in a chain with one clip, 'wave', 2 s
 * long: every bone turns by 10 degrees and back, with a Bezier key. */
function hundredBones(n) {
	const bones = [{ name: 'root' }];
	for (let i = 1; i < n; i++) bones.push({ name: `b${i}`, parent: i === 1 ? 'root' : `b${i - 1}`, x: 8, rotation: 1 });
	const timelines = {};
	for (const b of bones) {
		timelines[b.name] = {
			rotate: [{ value: 0, curve: [0.5, 0, 0.5, 10] }, { time: 1, value: 10, curve: [1.5, 10, 1.5, 0] }, { time: 2, value: 0 }],
			translate: [{ x: 0, y: 0 }, { time: 2, x: 1, y: 1 }],
		};
	}
	return { skeleton: { spine: '4.2.00' }, bones, slots: [], skins: [], animations: { wave: { bones: timelines } } };
}

describe('clips2d: frame times while a 100-bone clip plays', () => {
	let server;
	let A;
	let B;

	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
		await importSkeleton(server, 'hundred', 'spine', { skeleton: hundredBones(100), file: 'hundred.json' });
		A = await openPage(browser, `${server.url}/#/scene/hundred`, { name: 'alice' });
		B = await openPage(browser, `${server.url}/#/scene/hundred`, { name: 'bob' });
		await A.page.waitForFunction(() => window.rigd.clips() && window.rigd.clips().clips.length > 0, null, { timeout: 10000 });
	});

	after(async () => {
		for (const p of [A, B]) if (p) await p.context.close();
		if (server) await server.stop();
	});

	it('prints page A\'s frame times over 3 s of play', async () => {
		const c = controls(A.page);
		await c.clip('wave').click();
		await settled(server, A.page, 'hundred');
		// The same pages idle, for scale: what the machine gives now.
		const idle = await frameIntervals(A.page, 1000);
		const idleMean = idle.reduce((a, b) => a + b, 0) / idle.length;
		console.log(`# idle, for scale: ${idle.length} frames in 1 s, mean ${idleMean.toFixed(2)} ms (${(1000 / idleMean).toFixed(1)} frames/s)`);
		await recordSeqs(B.page, 'b99');
		const seq0 = await B.page.evaluate(() => window.rigd.seq());
		await c.play.click();
		const intervals = await frameIntervals(A.page, 3000);
		await c.pause.click();
		const s = await state(A.page);
		const tree = await settled(server, A.page, 'hundred');
		await settled(server, B.page, 'hundred');
		const seen = (await stopRecording(B.page)).filter((x) => x.seq > seq0);
		const mean = intervals.reduce((a, b) => a + b, 0) / intervals.length;
		const p95 = rigd.percentile(intervals, 95);
		console.log(
			`# 100-bone clip, 3 s of play in headless Chromium: ${intervals.length} frames, mean ${mean.toFixed(2)} ms (${(1000 / mean).toFixed(1)} frames/s), ` +
				`p95 ${p95.toFixed(2)} ms, worst ${Math.max(...intervals).toFixed(2)} ms; ${s.sent} batches sent, ${s.acked} acknowledged, ${s.skipped} frames skipped; page B saw ${seen.length} new seqs (target 60 frames/s)`,
		);
		assert.ok(seen.length >= 10, `page B saw ${seen.length} updates`);
		assert.ok((await worldGap(B.page, tree)) < 1e-9);
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});
});
