/*
 * A 10,000-node scene in the viewer: built over the HTTP API in a few big
 * batches, opened in headless Chromium, then orbited with the mouse for a
 * few seconds while the page counts its frames, three ways: the viewer's
 * own choice (adaptive quality while the camera moves), the same at full
 * quality throughout, and the other drawing mode. Prints the frame times;
 * it asserts that everything was drawn with few draw calls and that the
 * frame after the orbit is at full quality, and holds the frame rate only
 * to a floor far below the target (HOUSE-STYLE: a benchmark prints
 * figures, a test does not time).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { artifacts, launch, openPage, rigd } from './lib/browser.mjs';

const NODES = 10000;
const BATCH = 2500; // ops per POST

/*
 * Ten "characters" side by side, each a root with ten limbs: chains of
 * bones (boxes from bounds, every fifth an empty group drawn as axes), with
 * a joint on every other bone that shares the mesh "sphere". Every third
 * limb is mirrored (s = -1 on x). Parents always precede their children,
 * so any split into batches is valid.
 */
function bigSceneOps(total) {
	const ops = [];
	const bone = { min: [-0.025, 0, -0.025], max: [0.025, 0.1, 0.025] };
	const joint = { min: [-0.02, -0.02, -0.02], max: [0.02, 0.02, 0.02] };
	for (let rig = 0; ops.length < total; rig++) {
		const root = `rig${rig}`;
		ops.push({ op: 'create', id: root, t: [(rig % 5) * 3 - 6, 0, Math.floor(rig / 5) * 3 - 1.5], bounds: { min: [-0.4, 0, -0.4], max: [0.4, 0.1, 0.4] } });
		for (let limb = 0; limb < 10 && ops.length < total; limb++) {
			let parent = root;
			for (let seg = 0; seg < 66 && ops.length < total; seg++) {
				const id = `${root}_l${limb}_b${seg}`;
				const op = { op: 'create', id, parent, t: [0, seg === 0 ? 0.1 : 0.1, 0], euler: seg === 0 ? [30, limb * 36, 0] : [2.5, 0, 1.5] };
				if (seg === 0 && limb % 3 === 0) op.s = [-1, 1, 1];
				if (seg % 5 !== 4) op.bounds = bone;
				ops.push(op);
				if (seg % 2 === 0 && ops.length < total) ops.push({ op: 'create', id: `${id}_j`, parent: id, mesh: 'sphere', kind: 'mesh', bounds: joint });
				parent = id;
			}
		}
	}
	return ops;
}

let server;
let browser;
before(async () => {
	server = await rigd.startRigd({ args: ['--sync', 'normal'] });
	browser = await launch();
});
after(async () => {
	if (browser) await browser.close();
	if (server) await server.stop();
});

const percentile = (v, p) => {
	const s = [...v].sort((a, b) => a - b);
	return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

/*
 * Drags the orbit camera around with the mouse for 'ms' and returns the
 * time it took (seconds) and the number of pointer moves. The page's frame
 * statistics are reset at the start.
 */
async function orbit(page, ms) {
	const canvas = await page.locator('canvas').boundingBox();
	const cx = canvas.x + canvas.width / 2;
	const cy = canvas.y + canvas.height / 2;
	await page.mouse.move(cx, cy);
	await page.evaluate(() => window.rigd.resetStats());
	await page.mouse.down();
	// The pointer moves as a mouse does, 125 times a second whatever the
	// page does; the browser folds the moves that arrive during a frame
	// into the next one. (Awaiting each move instead would tie the moves to
	// the frames and make a slow page look slower still.) At most 12 moves
	// (about 100 ms of them) are in flight, and the time is taken after the
	// last one was handled, so every frame counted is in the time.
	const start = performance.now();
	let moves = 0;
	const inFlight = new Set();
	while (performance.now() - start < ms) {
		const a = moves * 0.08;
		const move = page.mouse.move(cx + Math.sin(a) * 200, cy + Math.cos(a * 0.7) * 60);
		const done = () => inFlight.delete(move);
		inFlight.add(move);
		move.then(done, done);
		moves++;
		if (inFlight.size >= 12) await Promise.race(inFlight);
		await new Promise((r) => setTimeout(r, 8));
	}
	await Promise.all(inFlight);
	await page.mouse.up();
	const seconds = (performance.now() - start) / 1000;
	return { seconds, moves };
}

/*
 * Opens the big scene with the given drawing mode ('' = the viewer's own
 * choice), checks what is drawn, orbits with the mouse for 'ms' and
 * returns the figures.
 */
async function measure(tree, query, ms, screenshot, label) {
	const opened = performance.now();
	const { page, problems, context } = await openPage(browser, `${server.url}/${query}#/scene/big`, { width: 1280, height: 800 });
	const roots = tree.nodes.filter((n) => n.parent === null).length;
	await page.waitForFunction((r) => window.rigd.tree().length === r && window.rigd.stats().frames > 0, roots, { timeout: 60000 });
	const loadMs = performance.now() - opened;

	// Every node is drawn from the server's matrix, in a handful of batches.
	const info = await page.evaluate(() => window.rigd.drawInfo());
	const drawn = Object.values(info.batches).reduce((a, b) => a + b, 0) + Object.values(info.glyphs).reduce((a, b) => a + b, 0);
	assert.equal(drawn, NODES, `every node is drawn: ${JSON.stringify(info)}`);
	assert.ok(Object.keys(info.batches).some((k) => k.endsWith('|m')), 'mirrored limbs have their own winding-flipped batch');
	const sample = tree.nodes[tree.nodes.length - 1];
	assert.deepEqual(await page.evaluate((id) => window.rigd.worldOf(id), sample.id), sample.world);

	const { seconds, moves } = await orbit(page, ms);
	const stats = await page.evaluate(() => window.rigd.stats());
	// Once the camera has stopped, frames are drawn at full quality. Until it
	// counts as stopped (the viewer's IDLE_MS after its last move), a frame
	// may be drawn at full quality and the next, if slow, at moving quality
	// again (at 5 fps on a busy machine): so the frame two after a full one
	// must be full too, and a few tries wait for the stop.
	let after;
	for (let tries = 0; tries < 5; tries++) {
		await page.waitForFunction(() => window.rigd.drawInfo().quality === 'full', null, { timeout: 5000 });
		await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
		after = await page.evaluate(() => window.rigd.drawInfo());
		if (after.quality === 'full') break;
	}
	if (screenshot) await page.screenshot({ path: path.join(artifacts(), screenshot) });
	const iv = stats.intervals.filter((x) => x < 5000);
	const mean = iv.reduce((a, b) => a + b, 0) / Math.max(1, iv.length);
	const fps = stats.frames / seconds;
	const ms2 = (v) => v.toFixed(1);
	console.log(
		`# ${label} (${after.mode} drawing): opened and drawn in ${loadMs.toFixed(0)} ms; orbiting ${seconds.toFixed(1)} s (${moves} pointer moves): ${stats.frames} frames, ` +
			`${fps.toFixed(1)} fps (${stats.movingFrames} at moving quality); frame interval mean ${ms2(mean)} ms, p50 ${ms2(percentile(iv, 50))} ms, ` +
			`p95 ${ms2(percentile(iv, 95))} ms; main thread per frame: script p50 ${percentile(stats.renderMs, 50).toFixed(2)} ms, ` +
			`script to next task (waits for the rasteriser) p50 ${ms2(percentile(stats.costMs, 50))} ms; last frame ${after.calls} draw calls, ` +
			`${after.triangles} triangles` +
			(after.mode === 'merged' ? `, ${after.drawn.lines} glyphs as lines, ${after.drawn.small} small nodes as ${after.drawn.dots} dots` : ''),
	);
	assert.ok(stats.frames >= 3, `the orbit rendered frames (${stats.frames})`);
	assert.equal(after.quality, 'full', 'the frame after the orbit is drawn at full quality');
	if (after.mode === 'merged') assert.ok(after.drawn.dots <= after.drawn.small, `at most one dot per small node: ${JSON.stringify(after.drawn)}`);
	assert.ok(after.calls <= 20, `shared geometry keeps draw calls low (${after.calls})`);
	assert.deepEqual(problems, []);
	await context.close();
	return { mode: after.mode, fps: stats.frames / seconds, after };
}

it('draws a 10,000-node scene and keeps orbiting it (prints frame times)', async () => {
	await rigd.createScene(server, 'big');
	const ops = bigSceneOps(NODES);
	const t0 = performance.now();
	for (let i = 0; i < ops.length; i += BATCH) {
		const r = await rigd.postEdit(server, 'big', { ops: ops.slice(i, i + BATCH) });
		assert.equal(r.status, 200, JSON.stringify(r.json));
	}
	const built = performance.now() - t0;
	const tree = await rigd.tree(server, 'big');
	assert.equal(tree.nodes.length, NODES);
	const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
	console.log(`# 10,000-node scene built over HTTP in ${built.toFixed(0)} ms (${Math.ceil(NODES / BATCH)} batches); 1280x800 viewport; load average ${load}`);
	// What the input path alone allows on this machine now: the same orbit
	// over an empty scene.
	await rigd.createScene(server, 'empty');
	{
		const { page, problems, context } = await openPage(browser, `${server.url}/#/scene/empty`, { width: 1280, height: 800 });
		await page.waitForFunction(() => window.rigd.stats().frames > 0, null, { timeout: 20000 });
		const { seconds, moves } = await orbit(page, 2000);
		const stats = await page.evaluate(() => window.rigd.stats());
		console.log(`# an empty scene orbited the same way (the ceiling this machine's input path and compositor allow now): ${(stats.frames / seconds).toFixed(1)} fps, ${moves} pointer moves`);
		assert.deepEqual(problems, []);
		await context.close();
	}
	// The viewer's own choice (adaptive quality), the same at full quality
	// throughout, then the other drawing mode for comparison. Each with
	// ?interest=off: 10,000 nodes is past AUTO_INTEREST_NODES (interest.js),
	// and this measures drawing every node (the assertions count all of
	// them), not the subset a declared view would leave.
	const chosen = await measure(tree, '?interest=off', 3000, 'bigscene.png', 'viewer\'s choice');
	// A floor far below the target (60 fps), for a viewer that would fall
	// back to drawing every node at full cost; not a benchmark's verdict.
	assert.ok(chosen.fps >= 5, `orbiting the 10,000-node scene at ${chosen.fps.toFixed(1)} fps`);
	await measure(tree, '?quality=full&interest=off', 2000, null, 'full quality throughout');
	await measure(tree, `?draw=${chosen.mode === 'merged' ? 'instanced' : 'merged'}&interest=off`, 2000, null, 'other drawing mode');
});
