/*
 * The 2D viewer (web/app/view2d.js, svg_layers.js, panels2d.js) against a
 * real rigd in Chromium: the worked two-bone example lands where
 * docs/transforms.md says, read from the bone overlay and from an imported
 * SVG group; dragging a joint turns its bone (rotate), Shift pulls the
 * chain's end (ik), a root's joint moves the root, one Ctrl+Z undoes a
 * drag; the pose panel saves, applies and blends poses; no animation frame
 * shows a new pose with an old draw order or the reverse; hostile artwork
 * runs nothing and loads nothing; two pages dragging demo2d converge on the
 * server's matrices, the draw-order panel flips the figure on both, and
 * the timeline shows an earlier seq.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch, openPage, poll, rigd } from './lib/browser.mjs';
import { decodePng } from './lib/png.mjs';

let browser;
before(async () => {
	browser = await launch();
});
after(async () => {
	if (browser) await browser.close();
});

const SERVER_ARGS = { args: ['--sync', 'normal'] };

/* The worked example of docs/transforms.md 11.3 as three nodes. */
const ARM_OPS = [
	{ op: 'create', id: 'upper', t: [180, 260, 0], angle: 25 },
	{ op: 'create', id: 'fore', parent: 'upper', t: [155, 0, 0], angle: 40 },
	{ op: 'create', id: 'hand', parent: 'fore', t: [125, 0, 0] },
];

async function create2d(server, name, ops) {
	const r = await rigd.post(server, '/api/scenes', { name, dims: 2 });
	assert.equal(r.status, 201, r.text);
	if (ops) {
		const e = await rigd.post(server, `/api/scenes/${name}/edits`, { ops });
		assert.equal(e.status, 200, e.text);
	}
}

const nodeOf = (tree, id) => tree.nodes.find((n) => n.id === id);

/* A node's pivot in scene units as the page draws it: the point the bone
 * overlay's handle for node 'id' is drawn at (pan and zoom do not matter). */
function jointInScene(page, id) {
	return page.evaluate((nodeId) => window.rigd.view2d().joints[nodeId] || null, id);
}

/* The colour page 'page' shows at page point 'at' ({x, y}): [r, g, b]. */
async function pixelAt(page, at) {
	const png = decodePng(await page.screenshot({ clip: { x: Math.floor(at.x), y: Math.floor(at.y), width: 1, height: 1 } }));
	return png.at(0, 0).slice(0, 3);
}

/* Page pixels of a scene point. */
function pageOf(page, xy) {
	return page.evaluate(([x, y]) => {
		const cam = document.querySelector('svg.view2d g.camera');
		const p = new DOMPoint(x, y).matrixTransform(cam.getScreenCTM());
		return { x: p.x, y: p.y };
	}, xy);
}

async function dragJoint(page, id, toScene, { shift = false, steps = 10 } = {}) {
	const from = await page.evaluate((n) => window.rigd.jointOnPage(n), id);
	const to = await pageOf(page, toScene);
	if (shift) await page.keyboard.down('Shift');
	await page.mouse.move(from.x, from.y);
	await page.mouse.down();
	await page.mouse.move(to.x, to.y, { steps });
	await page.mouse.up();
	if (shift) await page.keyboard.up('Shift');
}

/* Resolves after the page drew two more animation frames (the view
 * applies what the model holds in its next frame). */
function frames(page) {
	return page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

/* Waits until the page holds the server's latest seq and has drawn it;
 * returns the tree. */
async function settled(server, page, scene) {
	const { value } = await poll(
		async () => {
			const tree = await rigd.tree(server, scene);
			const seq = await page.evaluate(() => window.rigd.seq());
			return seq === tree.seq && tree;
		},
		{ timeout: 10000, what: 'the page to show the server\'s seq' },
	);
	await frames(page);
	return value;
}

/* Frames everything with the toolbar's button and waits until it is drawn. */
async function frameAll(page) {
	await page.click('.toolbar button[aria-label="Frame all"]');
	await frames(page);
}

describe('viewer2d: bones, drags and poses on the worked example', () => {
	let server;
	let A;

	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
		await create2d(server, 'arm2', ARM_OPS);
		A = await openPage(browser, `${server.url}/#/scene/arm2`, { name: 'alice' });
		await A.page.waitForFunction(() => window.rigd.view2d() && window.rigd.jointOnPage('hand'));
	});

	after(async () => {
		if (A) await A.context.close();
		if (server) await server.stop();
	});

	it('draws the hand\'s joint at (373.305, 81.206) in SVG units', async () => {
		const hand = await jointInScene(A.page, 'hand');
		assert.ok(Math.abs(hand[0] - 373.305) < 0.01 && Math.abs(hand[1] - 81.206) < 0.01, `hand at ${hand}`);
		const elbow = await jointInScene(A.page, 'fore');
		assert.ok(Math.abs(elbow[0] - 320.48) < 0.01 && Math.abs(elbow[1] - 194.49) < 0.01, `elbow at ${elbow}`);
		// One bone line per parent-child pair.
		const shown = await A.page.evaluate(() => window.rigd.view2d());
		assert.equal(shown.bones, 2);
		assert.deepEqual(Object.keys(shown.joints).sort(), ['fore', 'hand', 'upper']);
		// Each handle is on the page where the view says: a root's in its
		// colour, the others in theirs.
		for (const [id, rgb] of [['upper', [0xe0, 0x7a, 0x5f]], ['fore', [0xf0, 0xc0, 0x50]], ['hand', [0xf0, 0xc0, 0x50]]]) {
			const got = await pixelAt(A.page, await A.page.evaluate((n) => window.rigd.jointOnPage(n), id));
			assert.ok(got.every((v, i) => Math.abs(v - rgb[i]) <= 3), `${id}'s handle: ${got} (want ${rgb})`);
		}
		// Over a joint the mouse shows that it can take it.
		const onPage = await A.page.evaluate(() => window.rigd.jointOnPage('hand'));
		const cursor = () => A.page.evaluate(() => getComputedStyle(document.querySelector('svg.view2d')).cursor);
		await A.page.mouse.move(onPage.x + 3, onPage.y);
		assert.equal(await cursor(), 'pointer');
		await A.page.mouse.move(onPage.x + 40, onPage.y + 40);
		assert.equal(await cursor(), 'grab');
		// The Bones chip (in the Overlays menu) hides the overlay and
		// brings it back.
		await A.page.click('.overlay-menu summary');
		await A.page.click('.bones-chip');
		await frames(A.page);
		const hidden = await pixelAt(A.page, onPage);
		assert.ok(Math.abs(hidden[0] - 0xf0) + Math.abs(hidden[1] - 0xc0) + Math.abs(hidden[2] - 0x50) > 60, `no handle while hidden: ${hidden}`);
		await A.page.mouse.move(onPage.x, onPage.y);
		assert.equal(await cursor(), 'grab', 'a hidden joint is not offered');
		await A.page.click('.bones-chip');
		await frames(A.page);
		const back = await pixelAt(A.page, onPage);
		assert.ok(Math.abs(back[0] - 0xf0) + Math.abs(back[1] - 0xc0) + Math.abs(back[2] - 0x50) <= 9, `the handle is back: ${back}`);
		await A.page.click('.overlay-menu summary');
		assert.deepEqual(A.problems, []);
	});

	it('dragging a joint turns its parent bone with rotate ops; one Ctrl+Z undoes the drag', async () => {
		const before = await rigd.tree(server, 'arm2');
		// Swing the hand about the elbow to straight up from it.
		const elbow = await jointInScene(A.page, 'fore');
		await dragJoint(A.page, 'hand', [elbow[0], elbow[1] - 125]);
		// Straight up on screen is 90 degrees in the world; upper is at 25.
		// (The drag's last batches may still be on their way: poll.)
		let tree;
		await poll(
			async () => {
				tree = await settled(server, A.page, 'arm2');
				return Math.abs(nodeOf(tree, 'fore').angle - 65) < 1.5;
			},
			{ timeout: 10000, what: 'fore to turn to 65 degrees' },
		);
		assert.equal(nodeOf(tree, 'upper').angle, nodeOf(before, 'upper').angle);
		const log = await rigd.get(server, `/api/scenes/arm2/log?from=${before.seq + 1}`);
		const lines = log.text.trim().split('\n').map((l) => JSON.parse(l));
		assert.ok(lines.length >= 1 && lines.every((l) => l.ops.every((op) => op.op === 'set' && op.id === 'fore')), 'only fore was turned');
		const hand = await jointInScene(A.page, 'hand');
		assert.ok(Math.hypot(hand[0] - elbow[0], hand[1] - (elbow[1] - 125)) < 4, `hand followed the pointer: ${hand}`);
		// The whole drag is one undo step.
		await A.page.locator('svg.view2d').click({ position: { x: 5, y: 300 } });
		await A.page.keyboard.press('Control+z');
		await poll(async () => Math.abs(nodeOf(await rigd.tree(server, 'arm2'), 'fore').angle - 40) < 1e-9, { timeout: 10000, what: 'the undo to bring fore back to 40 degrees' });
		tree = await settled(server, A.page, 'arm2');
		assert.ok(Math.abs(nodeOf(tree, 'fore').angle - 40) < 1e-9);
	});

	it('under a mirrored root a joint drag still follows the pointer', async () => {
		await rigd.post(server, '/api/scenes/arm2/edits', { ops: [{ op: 'set', id: 'upper', s: [-1, 1, 1] }] });
		await settled(server, A.page, 'arm2');
		// The arm now lies left of its root: frame it again.
		await frameAll(A.page);
		const elbow = await jointInScene(A.page, 'fore');
		const hand0 = await jointInScene(A.page, 'hand');
		// A quarter turn clockwise on screen about the elbow.
		const to = [elbow[0] - (hand0[1] - elbow[1]), elbow[1] + (hand0[0] - elbow[0])];
		await dragJoint(A.page, 'hand', to);
		await poll(
			async () => {
				await settled(server, A.page, 'arm2');
				const hand = await jointInScene(A.page, 'hand');
				return Math.hypot(hand[0] - to[0], hand[1] - to[1]) < 4;
			},
			{ timeout: 10000, what: 'the mirrored forearm to follow the pointer' },
		);
		await A.page.locator('svg.view2d').click({ position: { x: 5, y: 300 } });
		await A.page.keyboard.press('Control+z');
		await poll(async () => Math.abs(nodeOf(await rigd.tree(server, 'arm2'), 'fore').angle - 40) < 1e-9, { timeout: 10000, what: 'the drag to be undone' });
		await rigd.post(server, '/api/scenes/arm2/edits', { ops: [{ op: 'set', id: 'upper', s: [1, 1, 1] }] });
		await settled(server, A.page, 'arm2');
		await frameAll(A.page);
	});

	it('Shift+drag pulls the chain\'s end with two-bone ik', async () => {
		const target = [330, 150];
		await dragJoint(A.page, 'hand', target, { shift: true });
		await poll(
			async () => {
				const tree = await settled(server, A.page, 'arm2');
				const w = nodeOf(tree, 'hand').world;
				return Math.hypot(w[12] - target[0], w[13] - target[1]) < 0.5;
			},
			{ timeout: 10000, what: 'the hand to reach the target' },
		);
		const tree = await rigd.tree(server, 'arm2');
		const hand = await jointInScene(A.page, 'hand');
		const w = nodeOf(tree, 'hand').world;
		assert.ok(Math.hypot(hand[0] - w[12], hand[1] - w[13]) < 1e-3, 'the page shows the server\'s hand');
		// The root did not move: ik turns the two joints above the end.
		assert.deepEqual(nodeOf(tree, 'upper').t, [180, 260, 0]);
	});

	it('dragging the root\'s joint moves the root', async () => {
		await dragJoint(A.page, 'upper', [200, 250]);
		const { value } = await poll(
			async () => {
				const t = nodeOf(await settled(server, A.page, 'arm2'), 'upper').t;
				return Math.hypot(t[0] - 200, t[1] - 250) < 1 && t;
			},
			{ timeout: 10000, what: 'the root to follow the drag' },
		);
		assert.equal(value[2], 0);
	});

	it('saves, lists, applies and blends poses from the pose panel', async () => {
		const page = A.page;
		await rigd.post(server, '/api/scenes/arm2/edits', { ops: [{ op: 'set', id: 'upper', angle: 25 }, { op: 'set', id: 'fore', angle: 40 }] });
		await settled(server, page, 'arm2');
		await page.fill('.poses-panel input.pose-name', 'rest');
		await page.click('.poses-panel button.save-pose');
		await page.waitForSelector('.pose-row[data-pose="rest"]');
		await rigd.post(server, '/api/scenes/arm2/edits', { ops: [{ op: 'set', id: 'upper', angle: 65 }, { op: 'set', id: 'fore', angle: 90 }] });
		await settled(server, page, 'arm2');
		await page.fill('.poses-panel input.pose-name', 'reach');
		await page.click('.poses-panel button.save-pose');
		await page.waitForSelector('.pose-row[data-pose="reach"]');
		// Apply rest: every channel the pose holds, exactly.
		await page.click('.pose-row[data-pose="rest"] button.apply-pose');
		await poll(async () => Math.abs(nodeOf(await rigd.tree(server, 'arm2'), 'fore').angle - 40) < 1e-9, { timeout: 10000, what: 'rest to be applied' });
		// Blend halfway from rest to reach with the slider.
		await page.selectOption('.poses-panel select.blend-a', 'rest');
		await page.selectOption('.poses-panel select.blend-b', 'reach');
		await page.locator('.poses-panel input.blend-t').fill('0.5');
		await poll(async () => Math.abs(nodeOf(await rigd.tree(server, 'arm2'), 'fore').angle - 65) < 1e-6, { timeout: 10000, what: 'the blend at 0.5' });
		const tree = await settled(server, page, 'arm2');
		assert.ok(Math.abs(nodeOf(tree, 'upper').angle - 45) < 1e-6);
		assert.deepEqual(A.problems, []);
	});
});

/* --- scenes with artwork (POST /api/scenes/NAME/svg) --- */

/* Imports 'svg' with 'manifest' as file 'file' into a new 2D scene. */
async function importSvg(server, name, file, svg, manifest) {
	await create2d(server, name);
	const r = await rigd.post(server, `/api/scenes/${name}/svg`, { file, svg, manifest });
	assert.equal(r.status, 200, r.text);
}

/* Three sibling groups drawn where the worked example's bones lie at rest
 * (along +x from (180, 260)), each a bar with a dot at its pivot. */
const ARM_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 600 400">
  <g id="upper"><rect x="180" y="252" width="155" height="16" fill="#6e8db0"/></g>
  <g id="fore"><rect x="335" y="254" width="125" height="12" fill="#8fb06e"/></g>
  <g id="hand"><circle cx="460" cy="260" r="12" fill="#e8a33d"/></g>
</svg>`;
const ARM_MANIFEST = [
	{ id: 'upper', parent: null, pivot: [180, 260], rotation: 0, z: 0 },
	{ id: 'fore', parent: 'upper', pivot: [335, 260], rotation: 0, z: 1 },
	{ id: 'hand', parent: 'fore', pivot: [460, 260], rotation: 0, z: 2 },
];

/* A figure whose two arms swap places in the draw order when it turns:
 * armA is in front facing right and behind facing left, armB the reverse. */
const FIG_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 400">
  <g id="armB"><rect x="200" y="150" width="90" height="14" fill="#b06e8d"/></g>
  <g id="body"><rect x="170" y="120" width="60" height="160" fill="#6e8db0"/></g>
  <g id="armA"><rect x="200" y="170" width="90" height="14" fill="#e8a33d"/></g>
</svg>`;
const FIG_MANIFEST = [
	{ id: 'body', parent: null, pivot: [200, 200], rotation: 0, z: 0 },
	{ id: 'armA', parent: 'body', pivot: [200, 177], rotation: 0, z: { right: 1, left: -1 } },
	{ id: 'armB', parent: 'body', pivot: [200, 157], rotation: 0, z: { right: -1, left: 1 } },
];

/* The six numbers of a transform="matrix(a b c d e f)" attribute. */
function matrixOf(text) {
	const m = /^matrix\(([^)]*)\)$/.exec(text || '');
	return m ? m[1].trim().split(/[\s,]+/).map(Number) : null;
}
const six = (w) => [w[0], w[1], w[4], w[5], w[12], w[13]];

describe('viewer2d: artwork', () => {
	let server;
	const pages = [];

	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
	});
	after(async () => {
		for (const p of pages) await p.context.close();
		if (server) await server.stop();
	});

	it('draws each group at its node\'s world matrix: the hand\'s pivot at (373.305, 81.206)', async (t) => {
		await importSvg(server, 'armsvg', 'arm.svg', ARM_SVG, ARM_MANIFEST);
		const e = await rigd.post(server, '/api/scenes/armsvg/edits', { ops: [{ op: 'set', id: 'upper', angle: 25 }, { op: 'set', id: 'fore', angle: 40 }] });
		assert.equal(e.status, 200, e.text);
		const A = await openPage(browser, `${server.url}/#/scene/armsvg`);
		pages.push(A);
		const tree = await settled(server, A.page, 'armsvg');
		await A.page.waitForFunction(() => Object.keys(window.rigd.view2d().transforms).length === 3);
		const hand = await A.page.evaluate(() => {
			const g = document.querySelector('svg.view2d g.layer[data-id="hand"]');
			const cam = document.querySelector('svg.view2d g.camera');
			const m = cam.getScreenCTM().inverse().multiply(g.getScreenCTM());
			const p = new DOMPoint(460, 260).matrixTransform(m);
			return [p.x, p.y];
		});
		assert.ok(Math.abs(hand[0] - 373.305) < 0.01 && Math.abs(hand[1] - 81.206) < 0.01, `hand's pivot at ${hand}`);
		// Every group's transform is the server's matrix, number for number.
		const view = await A.page.evaluate(() => window.rigd.view2d());
		for (const id of ['upper', 'fore', 'hand']) assert.deepEqual(matrixOf(view.transforms[id]), six(nodeOf(tree, id).world), id);
		// The artwork's own markup is untouched inside the group.
		assert.equal(await A.page.getAttribute('svg.view2d g.layer[data-id="hand"] circle', 'cx'), '460');
		assert.deepEqual(view.order, ['upper', 'fore', 'hand']);
		assert.deepEqual(A.problems, []);
	});

	it('never shows a new pose with an old draw order, or the reverse, in any animation frame', async (t) => {
		await importSvg(server, 'fig', 'fig.svg', FIG_SVG, FIG_MANIFEST);
		const A = await openPage(browser, `${server.url}/#/scene/fig`);
		pages.push(A);
		await A.page.waitForFunction(() => Object.keys(window.rigd.view2d().transforms).length === 3);
		const turn = (facing, angle) => ({ ops: [{ op: 'set', id: 'body', facing }, { op: 'set', id: 'armA', angle }, { op: 'set', id: 'armB', angle: -angle }] });
		// The two states, each as the server has it.
		const states = {};
		for (const [facing, angle] of [['left', 30], ['right', -20]]) {
			assert.equal((await rigd.post(server, '/api/scenes/fig/edits', turn(facing, angle))).status, 200);
			const tree = await settled(server, A.page, 'fig');
			const view = await A.page.evaluate(() => window.rigd.view2d());
			states[facing] = { order: view.order.join(','), armA: matrixOf(view.transforms.armA), armB: matrixOf(view.transforms.armB) };
			assert.deepEqual(states[facing].armA, six(nodeOf(tree, 'armA').world));
		}
		assert.equal(states.left.order, 'armA,body,armB');
		assert.equal(states.right.order, 'armB,body,armA');
		// Record every frame while batches alternate the two at speed.
		await A.page.evaluate(() => {
			window.__frames = [];
			const tick = () => {
				const v = window.rigd.view2d();
				window.__frames.push({ order: v.order.join(','), armA: v.transforms.armA, armB: v.transforms.armB });
				if (!window.__stop) requestAnimationFrame(tick);
			};
			requestAnimationFrame(tick);
		});
		// First 24 batches back to back (the page may take several in one
		// update, or one per frame), then four more, each waited for, so
		// both states are surely drawn.
		let last = 0;
		for (let i = 0; i < 28; i++) {
			const r = await rigd.post(server, '/api/scenes/fig/edits', i % 2 ? turn('right', -20) : turn('left', 30));
			assert.equal(r.status, 200);
			last = r.json.seq;
			if (i >= 24) {
				await poll(() => A.page.evaluate((seq) => window.rigd.seq() >= seq, last), { timeout: 10000, what: `batch ${i} on the page` });
				await frames(A.page);
			}
		}
		await poll(() => A.page.evaluate((seq) => window.rigd.seq() >= seq, last), { timeout: 10000, what: 'the last batch on the page' });
		await frames(A.page);
		const recorded = await A.page.evaluate(() => {
			window.__stop = true;
			return window.__frames;
		});
		const seen = { left: 0, right: 0 };
		for (const [i, f] of recorded.entries()) {
			const facing = f.order === states.left.order ? 'left' : f.order === states.right.order ? 'right' : null;
			assert.ok(facing, `frame ${i}: an order of neither state: ${f.order}`);
			assert.deepEqual([matrixOf(f.armA), matrixOf(f.armB)], [states[facing].armA, states[facing].armB], `frame ${i}: the ${facing} order with the other pose`);
			seen[facing]++;
		}
		console.log(`# ${recorded.length} frames recorded: ${seen.left} facing left, ${seen.right} facing right`);
		assert.ok(seen.left > 0 && seen.right > 0, 'both states were drawn');
		assert.deepEqual(A.problems, []);
	});

	it('keeps hostile artwork inert: no script, no dialog, no request but the viewer\'s own', async (t) => {
		await importSvg(server, 'hostile', 'art.svg', FIG_SVG, FIG_MANIFEST);
		const evil = 'http://evil.invalid';
		const HOSTILE = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 400 400" onload="window.__pwned = 'svg onload'">
  <script>window.__pwned = 'script';</script>
  <script href="${evil}/x.js"></script>
  <style>@import url(${evil}/a.css); rect { fill: url(${evil}/p.svg#p); } body { background: url(/api/steal.png); } .topbar, body { display: none !important; } .cls-a { stroke-width: 3; }</style>
  <defs><linearGradient id="ok"><stop offset="0" stop-color="#fff"/></linearGradient></defs>
  <g id="armB" onclick="window.__pwned = 'click'" style="background-image: url(${evil}/bg.png)">
    <rect x="200" y="150" width="90" height="14" fill="url(${evil}/f.svg#g)" onmouseover="window.__pwned = 'hover'"/>
    <image href="${evil}/i.png" x="0" y="0" width="10" height="10"/>
    <image xlink:href="/api/scenes/hostile/log" x="0" y="0" width="10" height="10" onerror="window.__pwned = 'onerror'"/>
  </g>
  <g id="body"><rect x="170" y="120" width="60" height="160" fill="url(#ok)" style="fill: url('${evil}/s.svg#x'); stroke: #123456"/>
    <foreignObject width="100" height="100"><iframe xmlns="http://www.w3.org/1999/xhtml" src="${evil}/frame"></iframe><img xmlns="http://www.w3.org/1999/xhtml" src="x" onerror="window.__pwned = 'img'"/></foreignObject>
    <use href="${evil}/u.svg#a"/><use xlink:href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=#a"/>
    <a href="javascript:window.__pwned='link'"><text x="10" y="10">click</text></a>
    <set attributeName="onmouseover" to="window.__pwned = 'set'"/>
    <animate attributeName="href" values="javascript:window.__pwned='animate'"/>
  </g>
  <g id="armA"><rect x="200" y="170" width="90" height="14" fill="#e8a33d" style="stroke: #000; stroke-width: 2"/><rect class="cls-a" x="200" y="190" width="9" height="9"/>
    <feImage href="${evil}/fe.png"/><filter id="f"><feImage xlink:href="${evil}/fe2.png"/></filter>
  </g>
</svg>`;
		const context = await browser.newContext({ viewport: { width: 1120, height: 700 }, deviceScaleFactor: 1 });
		await context.addInitScript(() => localStorage.setItem('rigd.format', 'f64'));
		const page = await context.newPage();
		pages.push({ context });
		const problems = [];
		const requests = [];
		const dialogs = [];
		page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
		page.on('pageerror', (e) => problems.push(e.message));
		page.on('dialog', (d) => dialogs.push(d.message()) && d.dismiss());
		context.on('request', (r) => requests.push(r.url()));
		let served = 0;
		await page.route('**/api/scenes/hostile/assets/**', (route) => {
			served++;
			route.fulfill({ status: 200, contentType: 'image/svg+xml', body: HOSTILE });
		});
		await page.goto(`${server.url}/#/scene/hostile`);
		await page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live' && Object.keys(window.rigd.view2d().transforms).length === 3, null, { timeout: 20000 });
		// Hover and click everything the payload could hang a handler on.
		for (const id of ['armB', 'body', 'armA']) {
			const box = await page.locator(`svg.view2d g.layer[data-id="${id}"]`).boundingBox();
			if (box) await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
		}
		await page.waitForTimeout(500);
		assert.ok(served >= 1, 'the intercepted asset was asked for');
		assert.equal(await page.evaluate(() => window.__pwned ?? null), null, 'no script of the payload ran');
		assert.deepEqual(dialogs, []);
		const origin = new URL(server.url).origin;
		const allowed = [/^\/$/, /^\/app\/[a-z0-9_]+\.js$/, /^\/style\.css$/, /^\/vendor\/(three|dompurify)\//, /^\/ws$/, /^\/api\/scenes\/hostile\/(assets\/art\.svg|assets|poses|clips)$/];
		for (const url of requests) {
			if (url.startsWith('data:')) continue;
			const u = new URL(url);
			assert.equal(u.origin, origin, `a request left for another origin: ${url}`);
			assert.ok(allowed.some((re) => re.test(u.pathname)), `an unexpected request: ${url}`);
		}
		// What is drawn is the artwork without any of it.
		const markup = await page.evaluate(() => document.querySelector('svg.view2d').outerHTML);
		for (const bad of ['<script', 'onload', 'onclick', 'onmouseover', 'onerror', 'foreignObject', 'iframe', 'evil.invalid', 'javascript:', '<style', '<set', '<animate', '/api/scenes/hostile/log']) {
			assert.ok(!markup.includes(bad), `the page holds ${bad}`);
		}
		assert.equal(await page.locator('svg.view2d g.layer[data-id="armA"] rect').count(), 2, 'the harmless shapes are drawn');
		assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('svg.view2d g.layer[data-id="armA"] rect')).strokeWidth), '2px', 'a harmless style attribute applies');
		// The artwork's CSS reaches its own groups and nothing else.
		assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('svg.view2d g.layer[data-id="armA"] rect.cls-a')).strokeWidth), '3px');
		const shown = await page.evaluate(() => [getComputedStyle(document.body).display, getComputedStyle(document.querySelector('.topbar')).display]);
		assert.ok(!shown.includes('none'), `the page is still shown: ${shown}`);
		assert.deepEqual(problems, []);
	});
});

describe('viewer2d: two browsers on demo2d', () => {
	let server;
	let A;
	let B;
	before(async () => {
		server = await rigd.startRigd({ args: [...SERVER_ARGS.args, '--demo2d', 'on'] });
		const demo = await rigd.get(server, '/api/scenes/demo2d');
		assert.equal(demo.status, 200, 'demo2d is seeded');
		assert.ok(demo.json.nodes.some((n) => n.layer), 'demo2d is drawn from artwork');
		// Both pages take float64 frames: the server's doubles bit for bit.
		[A, B] = await Promise.all([openPage(browser, `${server.url}/#/scene/demo2d`, { name: 'alice' }), openPage(browser, `${server.url}/#/scene/demo2d`, { name: 'bob' })]);
		for (const p of [A, B]) {
			await p.page.waitForFunction(() => {
				const v = window.rigd.view2d();
				return v && Object.keys(v.assets).length && Object.values(v.assets).every((s) => s === 'ready') && Object.keys(v.transforms).length;
			}, null, { timeout: 20000 });
		}
	});

	after(async () => {
		for (const p of [A, B]) if (p) await p.context.close();
		if (server) await server.stop();
	});

	it('drags on both pages converge to the server\'s matrices within 1e-9', async (t) => {
		const tree0 = await rigd.tree(server, 'demo2d');
		// The joints that have a grandparent: dragging them turns their parent.
		const byId = new Map(tree0.nodes.map((n) => [n.id, n]));
		const limbs = tree0.nodes.filter((n) => n.parent && byId.get(n.parent).parent).map((n) => n.id);
		assert.ok(limbs.length >= 2, `demo2d has limbs: ${limbs}`);
		const [a, b] = [limbs[0], limbs[limbs.length - 1]];
		// Each page turns a different bone, at the same time, a few times.
		for (let round = 0; round < 3; round++) {
			const moves = [[A.page, a], [B.page, b]].map(async ([page, id]) => {
				const parent = byId.get(id).parent;
				const centre = await jointInScene(page, parent);
				const joint = await jointInScene(page, id);
				const turn = ((round % 2 ? -1 : 1) * 20 * Math.PI) / 180;
				const dx = joint[0] - centre[0];
				const dy = joint[1] - centre[1];
				const to = [centre[0] + dx * Math.cos(turn) - dy * Math.sin(turn), centre[1] + dx * Math.sin(turn) + dy * Math.cos(turn)];
				await dragJoint(page, id, to, { shift: round === 2 });
			});
			await Promise.all(moves);
		}
		// Both pages end on the server's latest seq, every group at the
		// server's matrix.
		let tree;
		await poll(
			async () => {
				tree = await rigd.tree(server, 'demo2d');
				const seqs = await Promise.all([A, B].map((p) => p.page.evaluate(() => window.rigd.seq())));
				return seqs.every((s) => s === tree.seq) && tree.seq > tree0.seq;
			},
			{ timeout: 15000, what: 'both pages on the server\'s seq' },
		);
		await Promise.all([frames(A.page), frames(B.page)]);
		// The server's draw order at that seq, from a snapshot of its own.
		const client = await rigd.Client.connect(server, { validate: false });
		const snapshot = await client.subscribe('demo2d');
		await client.close();
		assert.equal(snapshot.seq, tree.seq);
		const layered = tree.nodes.filter((n) => n.layer);
		assert.ok(layered.length >= 5, 'demo2d draws its parts from artwork');
		for (const p of [A, B]) {
			const view = await p.page.evaluate(() => window.rigd.view2d());
			for (const n of layered) {
				const m = matrixOf(view.transforms[n.id]);
				assert.ok(m, `${n.id} is drawn`);
				const worst = Math.max(...m.map((v, i) => Math.abs(v - six(n.world)[i])));
				assert.ok(worst <= 1e-9, `${n.id}: ${worst} from the server`);
			}
			assert.deepEqual(view.order, snapshot.order, 'the server\'s draw order');
			assert.deepEqual(p.problems, []);
		}
		// Both bones turned.
		assert.notDeepEqual(byId.get(byId.get(a).parent).r, tree.nodes.find((n) => n.id === byId.get(a).parent).r);
		assert.notDeepEqual(byId.get(byId.get(b).parent).r, tree.nodes.find((n) => n.id === byId.get(b).parent).r);
	});
	it('clicking a part of the artwork selects its node; Escape clears it', async (t) => {
		// The head is drawn in front of the torso and nothing covers its face.
		const box = await A.page.locator('svg.view2d g.layer[data-id="head"] circle').first().boundingBox();
		await A.page.mouse.click(box.x + box.width * 0.3, box.y + box.height * 0.3);
		assert.equal(await A.page.evaluate(() => window.rigd.selection()), 'head');
		assert.equal(await A.page.textContent('.inspector-body .node-id'), 'head');
		await A.page.waitForSelector('svg.view2d g.layer.selected[data-id="head"]');
		assert.equal(await A.page.locator('svg.view2d g.layer.selected').count(), 1);
		await A.page.keyboard.press('Escape');
		assert.equal(await A.page.evaluate(() => window.rigd.selection()), null);
	});

	it('flipping the figure in the draw-order panel swaps the arms on both pages; the timeline shows seq 1 as it was', async (t) => {
		const facingOf = async () => (await rigd.tree(server, 'demo2d')).nodes.find((n) => n.id === 'torso').facing;
		const before = await B.page.evaluate(() => window.rigd.view2d().order);
		const was = await facingOf();
		await A.page.click('.order-panel button.flip-figure[data-id="torso"]');
		await poll(async () => (await facingOf()) !== was, { timeout: 10000, what: 'the facing to change' });
		const tree = await rigd.tree(server, 'demo2d');
		assert.equal(tree.nodes.find((n) => n.id === 'torso').facing, was === 'left' ? 'right' : 'left');
		await poll(() => B.page.evaluate((seq) => window.rigd.seq() === seq, tree.seq), { timeout: 10000, what: 'page B at the flip' });
		await frames(B.page);
		const after = await B.page.evaluate(() => window.rigd.view2d().order);
		assert.deepEqual(after, tree.order, 'page B draws the server\'s new order');
		assert.notDeepEqual(after, before);
		// The near arm goes behind the torso, the far one in front.
		assert.ok(after.indexOf('upper_arm_r') < after.indexOf('torso') && after.indexOf('upper_arm_l') > after.indexOf('torso'), `${after}`);
		// Back to seq 1 (the import) on page B: read-only, the artwork at rest.
		const at1 = await rigd.tree(server, 'demo2d', 1);
		const slider = B.page.locator('.timeline-slider');
		await slider.focus();
		await slider.press('Home');
		await slider.press('ArrowRight');
		await B.page.waitForFunction(() => window.rigd.seq() === 1);
		await poll(async () => {
			const view = await B.page.evaluate(() => window.rigd.view2d());
			return at1.nodes.filter((n) => n.layer).every((n) => JSON.stringify(matrixOf(view.transforms[n.id])) === JSON.stringify(six(n.world))) && JSON.stringify(view.order) === JSON.stringify(at1.order);
		}, { timeout: 10000, what: 'page B to draw seq 1' });
		assert.equal(await B.page.evaluate(() => window.rigd.editable()), false);
		assert.equal(await B.page.locator('.order-panel button.flip-figure').first().isDisabled(), true);
		await B.page.click('button.live');
		await B.page.waitForFunction((seq) => window.rigd.seq() === seq, tree.seq);
		await frames(B.page);
		assert.deepEqual(await B.page.evaluate(() => window.rigd.view2d().order), tree.order);
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});
});
