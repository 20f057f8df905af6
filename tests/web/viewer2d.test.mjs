/*
 * The 2D viewer (web/app/view2d.js, panels2d.js) against a real rigd in
 * Chromium: the worked two-bone example lands where docs/transforms.md
 * says; dragging a joint turns its bone (rotate), Shift pulls the chain's
 * end (ik), a root's joint moves the root, one Ctrl+Z undoes a drag; the
 * pose panel saves, applies and blends poses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch, openPage, poll, rigd } from './lib/browser.mjs';

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

/* A node's pivot in scene units, read from what the page draws: the joint
 * handle's centre mapped by its screen CTM, then back through the 2D
 * camera's (so pan and zoom do not matter). */
function jointInScene(page, id) {
	return page.evaluate((nodeId) => {
		const c = document.querySelector(`svg.view2d circle.joint[data-id="${nodeId}"]`);
		if (!c) return null;
		const cam = document.querySelector('svg.view2d g.camera');
		const m = cam.getScreenCTM().inverse().multiply(c.getScreenCTM());
		const p = new DOMPoint(Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))).matrixTransform(m);
		return [p.x, p.y];
	}, id);
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

/* Waits until the page shows the server's latest seq; returns the tree. */
async function settled(server, page, scene) {
	const { value } = await poll(
		async () => {
			const tree = await rigd.tree(server, scene);
			const seq = await page.evaluate(() => window.rigd.seq());
			return seq === tree.seq && tree;
		},
		{ timeout: 10000, what: 'the page to show the server\'s seq' },
	);
	return value;
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
		assert.equal(await A.page.locator('svg.view2d line.bone').count(), 2);
		assert.equal(await A.page.locator('svg.view2d circle.joint').count(), 3);
		assert.deepEqual(A.problems, []);
	});

	it('dragging a joint turns its parent bone with rotate ops; one Ctrl+Z undoes the drag', async () => {
		const before = await rigd.tree(server, 'arm2');
		// Swing the hand about the elbow to straight up from it.
		const elbow = await jointInScene(A.page, 'fore');
		await dragJoint(A.page, 'hand', [elbow[0], elbow[1] - 125]);
		let tree = await settled(server, A.page, 'arm2');
		// Straight up on screen is 90 degrees in the world; upper is at 25.
		assert.ok(Math.abs(nodeOf(tree, 'fore').angle - 65) < 1.5, `fore at ${nodeOf(tree, 'fore').angle}`);
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
