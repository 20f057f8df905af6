/*
 * The viewer on every screen (issue 26; docs/viewer-touch.md), in Debian's
 * Chromium against a real rigd:
 *
 * - a phone (390 x 844) and a tablet (820 x 1180), emulated with touch
 *   (hasTouch, isMobile), fingers sent as real touch events over CDP: the
 *   canvas covers most of the screen, nothing scrolls sideways, a tap
 *   selects a node, the panels open as sheets one at a time with the
 *   selection kept, a long press opens the node's menu, a pinch changes
 *   the camera, a finger drag on the gizmo moves the node, and on a 2D rig
 *   a finger drag on a joint sends rotate ops that a desktop page shows;
 * - 360 px: no horizontal scrolling on the scene list, a 3D and a 2D
 *   scene, the timeline on screen;
 * - the keyboard alone selects a node in the hierarchy tree and changes a
 *   field of the inspector;
 * - axe-core: no violation of impact serious or critical on the scene
 *   list, a 3D scene and a 2D scene;
 * - at 1280 px the toolbar is one row (3D and 2D);
 * - the one Import button: an SVG with its manifest, a Spine skeleton, a
 *   DragonBones skeleton, a glTF dropped onto the viewport, and clear
 *   refusals for files it cannot take.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { SOURCE_DIR, artifacts, launch, openPage, poll, rigd } from './lib/browser.mjs';

const webRequire = createRequire(path.join(SOURCE_DIR, 'web', 'package.json'));
const { AxeBuilder } = webRequire('@axe-core/playwright');

const SERVER_ARGS = { args: ['--sync', 'normal', '--demo2d', 'on'] };
const DEVICES = [
	{ name: 'phone', width: 390, height: 844 },
	{ name: 'tablet', width: 820, height: 1180 },
];

/* The worked two-bone arm of docs/transforms.md 11.3, as a 2D scene. */
const ARM_OPS = [
	{ op: 'create', id: 'upper', t: [180, 260, 0], angle: 25 },
	{ op: 'create', id: 'fore', parent: 'upper', t: [155, 0, 0], angle: 40 },
	{ op: 'create', id: 'hand', parent: 'fore', t: [125, 0, 0] },
];

let browser;
let server;
before(async () => {
	browser = await launch();
	server = await rigd.startRigd(SERVER_ARGS);
	let r = await rigd.post(server, '/api/scenes', { name: 'arm2', dims: 2 });
	assert.equal(r.status, 201, r.text);
	r = await rigd.post(server, '/api/scenes/arm2/edits', { ops: ARM_OPS });
	assert.equal(r.status, 200, r.text);
});
after(async () => {
	if (browser) await browser.close();
	if (server) await server.stop();
});

/* A page on a touch device: {context, page, problems, cdp}. */
async function openTouch(url, { width, height, name = 'finger', waitLive = true }) {
	const context = await browser.newContext({ viewport: { width, height }, hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
	await context.addInitScript((n) => localStorage.setItem('rigd.name', n), name);
	await context.addInitScript(() => localStorage.setItem('rigd.format', 'f64'));
	const page = await context.newPage();
	const problems = [];
	page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
	page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
	await page.goto(url);
	if (waitLive) await page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live', null, { timeout: 20000 });
	const cdp = await context.newCDPSession(page);
	return { context, page, problems, cdp };
}

/* Fingers: each point [x, y] is touch id = its index. */
const touch = (cdp, type, points) =>
	cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id, radiusX: 4, radiusY: 4, force: 1 })) });
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

async function tap(cdp, [x, y]) {
	await touch(cdp, 'touchStart', [[x, y]]);
	await pause(40);
	await touch(cdp, 'touchEnd', []);
}

async function fingerDrag(cdp, from, to, steps = 14) {
	await touch(cdp, 'touchStart', [from]);
	for (let i = 1; i <= steps; i++) {
		const f = i / steps;
		await pause(16);
		await touch(cdp, 'touchMove', [[from[0] + (to[0] - from[0]) * f, from[1] + (to[1] - from[1]) * f]]);
	}
	await touch(cdp, 'touchEnd', []);
}

/* Two fingers about 'centre', 'from' px apart to 'to' px apart. */
async function pinch(cdp, [cx, cy], from, to, steps = 12) {
	const at = (d) => [[cx - d / 2, cy], [cx + d / 2, cy]];
	await touch(cdp, 'touchStart', at(from));
	for (let i = 1; i <= steps; i++) {
		await pause(16);
		await touch(cdp, 'touchMove', at(from + ((to - from) * i) / steps));
	}
	await touch(cdp, 'touchEnd', []);
}

async function longPress(cdp, [x, y]) {
	await touch(cdp, 'touchStart', [[x, y]]);
	await pause(900);
	await touch(cdp, 'touchEnd', []);
}

/* Nothing on the page reaches past the window's right edge, and the
 * document does not scroll sideways. */
async function noSidewaysScroll(page, what) {
	const r = await page.evaluate(() => {
		const wide = [...document.querySelectorAll('body *')].filter((e) => {
			const b = e.getBoundingClientRect();
			const cs = getComputedStyle(e);
			return b.width > 0 && b.right > innerWidth + 0.5 && cs.visibility !== 'hidden' && cs.position !== 'fixed' && !e.closest('[hidden]');
		});
		return { scroll: document.documentElement.scrollWidth, inner: innerWidth, wide: wide.slice(0, 5).map((e) => `${e.tagName.toLowerCase()}.${e.className}`) };
	});
	assert.ok(r.scroll <= r.inner, `${what}: the page is ${r.scroll} px wide in a ${r.inner} px window`);
	assert.deepEqual(r.wide, [], `${what}: elements past the right edge`);
}

/* What share of the window the drawing surface (canvas or SVG) covers. */
function viewShare(page) {
	return page.evaluate(() => {
		const v = document.querySelector('svg.view2d') || document.querySelector('canvas.viewport-canvas');
		const r = v.getBoundingClientRect();
		const w = Math.max(0, Math.min(r.right, innerWidth) - Math.max(r.left, 0));
		const h = Math.max(0, Math.min(r.bottom, innerHeight) - Math.max(r.top, 0));
		return (w * h) / (innerWidth * innerHeight);
	});
}

/* Which sheets are on screen (narrow layout): the panels visible. */
function sheetsShown(page) {
	return page.evaluate(() =>
		[...document.querySelectorAll('.hierarchy-panel, .inspector-panel')].filter((p) => {
			const r = p.getBoundingClientRect();
			return getComputedStyle(p).visibility === 'visible' && r.top < innerHeight - 10 && r.height > 0;
		}).map((p) => (p.classList.contains('hierarchy-panel') ? 'hierarchy' : 'inspector')),
	);
}

/* Waits until a sheet has finished sliding in. */
const sheetSettled = (page) => page.waitForFunction(() => ![...document.querySelectorAll('.hierarchy-panel, .inspector-panel')].some((p) => p.getAnimations().length));

const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

for (const device of DEVICES) {
	describe(`${device.name} (${device.width} x ${device.height}, touch)`, () => {
		let T;
		before(async () => {
			T = await openTouch(`${server.url}/#/scene/demo`, device);
			await frames(T.page);
		});
		after(async () => {
			if (T) await T.context.close();
		});

		it('gives the viewport the screen, nothing scrolls sideways, the timeline is on screen', async () => {
			const share = await viewShare(T.page);
			assert.ok(share >= 0.6, `the canvas covers ${(share * 100).toFixed(1)}% of the screen`);
			await noSidewaysScroll(T.page, 'a 3D scene');
			const tl = await T.page.locator('.timeline').boundingBox();
			assert.ok(tl && tl.y + tl.height <= device.height + 0.5 && tl.y >= 0, 'the timeline is on screen');
			assert.deepEqual(await sheetsShown(T.page), [], 'no panel covers the viewport until asked for');
			await T.page.screenshot({ path: path.join(artifacts(), `screens-${device.name}-3d.png`) });
		});

		it('selects a node with a tap; the panels open one at a time and keep the selection', async () => {
			const at = await T.page.evaluate(() => window.rigd.screenOf('hand'));
			await tap(T.cdp, [at.x, at.y]);
			await poll(() => T.page.evaluate(() => window.rigd.selection() === 'hand'), { what: 'a tap to select hand' });
			// The status line (the canvas's text alternative) names it and
			// where it is: the server's world position.
			const w = (await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'hand').world;
			await poll(async () => (await T.page.textContent('.view-status')).startsWith(`Selected hand (Hand), world position (${w.slice(12, 15).map((v) => v.toFixed(3)).join(', ')})`), { what: 'the status line to name hand and its world position' });
			const tab = (name) => T.page.locator(`.sheet-tab[data-sheet="${name}"]`);
			const box = await tab('inspector').boundingBox();
			assert.ok(box.height >= 36, 'the panel tabs are finger-sized');
			await tap(T.cdp, [box.x + box.width / 2, box.y + box.height / 2]);
			await sheetSettled(T.page);
			assert.deepEqual(await sheetsShown(T.page), ['inspector']);
			assert.equal(await T.page.textContent('.inspector-body .node-id'), 'hand');
			const hb = await tab('hierarchy').boundingBox();
			await tap(T.cdp, [hb.x + hb.width / 2, hb.y + hb.height / 2]);
			await sheetSettled(T.page);
			assert.deepEqual(await sheetsShown(T.page), ['hierarchy'], 'one sheet at a time');
			assert.equal(await T.page.getAttribute('.tree-row[data-id="hand"]', 'aria-selected'), 'true', 'the selection is kept');
			assert.equal(await tab('hierarchy').getAttribute('aria-expanded'), 'true');
			// Tapping the open tab again closes its sheet.
			await tap(T.cdp, [hb.x + hb.width / 2, hb.y + hb.height / 2]);
			await sheetSettled(T.page);
			assert.deepEqual(await sheetsShown(T.page), []);
			assert.equal(await T.page.evaluate(() => window.rigd.selection()), 'hand');
		});

		it('opens the node\'s menu with a long press', async () => {
			const at = await T.page.evaluate(() => window.rigd.screenOf('arm'));
			await longPress(T.cdp, [at.x, at.y]);
			await T.page.waitForSelector('.node-menu:not([hidden])');
			assert.equal(await T.page.getAttribute('.node-menu', 'aria-label'), 'Node arm');
			const items = await T.page.locator('.node-menu [role="menuitem"]').allTextContents();
			assert.ok(items.includes('Inspect') && items.includes('Look through'), `menu items: ${items}`);
			assert.notEqual(await T.page.evaluate(() => window.rigd.selection()), 'arm', 'a long press is not a tap');
			const inspect = await T.page.locator('.node-menu [role="menuitem"]', { hasText: 'Inspect' }).boundingBox();
			assert.ok(inspect.height >= 44, `a menu item is ${inspect.height} px tall`);
			await tap(T.cdp, [inspect.x + inspect.width / 2, inspect.y + inspect.height / 2]);
			await poll(() => T.page.evaluate(() => window.rigd.selection() === 'arm'), { what: 'Inspect to select arm' });
			await sheetSettled(T.page);
			assert.deepEqual(await sheetsShown(T.page), ['inspector']);
			assert.ok(await T.page.locator('.node-menu').isHidden());
			await T.page.locator('.sheet-tab[data-sheet="inspector"]').tap();
			await sheetSettled(T.page);
		});

		it('zooms with a pinch', async () => {
			// A tap on empty space clears the selection (and the gizmo).
			const c = await T.page.locator('canvas.viewport-canvas').boundingBox();
			await tap(T.cdp, [c.x + 12, c.y + c.height - 40]);
			await poll(() => T.page.evaluate(() => window.rigd.selection() === null), { what: 'a tap on nothing to clear the selection' });
			const before = await T.page.evaluate(() => window.rigd.viewMatrix());
			const canvas = await T.page.locator('canvas.viewport-canvas').boundingBox();
			const centre = [canvas.x + canvas.width / 2, canvas.y + canvas.height * 0.55];
			await pinch(T.cdp, centre, 60, 220);
			await frames(T.page);
			const after = await T.page.evaluate(() => window.rigd.viewMatrix());
			// The view matrix's translation is the eye's distance from the
			// world origin, turned: a pinch outwards brings the eye closer.
			const dist = (m) => Math.hypot(m[12], m[13], m[14]);
			assert.ok(dist(after) < dist(before) * 0.9, `eye distance ${dist(before).toFixed(3)} -> ${dist(after).toFixed(3)}`);
			// One finger orbits: the view turns.
			await fingerDrag(T.cdp, [centre[0] - 60, centre[1]], [centre[0] + 60, centre[1]]);
			await frames(T.page);
			const turned = await T.page.evaluate(() => window.rigd.viewMatrix());
			assert.ok(Math.abs(turned[0] - after[0]) > 1e-3, 'a one-finger drag orbits the camera');
		});

		it('moves a node with a finger on the gizmo, a target of at least 44 px', async () => {
			const handle = await T.page.evaluate(() => window.rigd.gizmoHandlePx());
			assert.ok(handle >= 44, `the gizmo's thinnest handle is ${handle.toFixed(1)} px`);
			const at = await T.page.evaluate(() => window.rigd.screenOf('base'));
			await tap(T.cdp, [at.x, at.y + 6]);
			await poll(() => T.page.evaluate(() => window.rigd.selection() === 'base'), { what: 'a tap to select base' });
			const before = (await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'base');
			// The translate gizmo's centre handle moves in the view's plane.
			const centre = await T.page.evaluate(() => window.rigd.screenOf('base'));
			await fingerDrag(T.cdp, [centre.x, centre.y], [centre.x + 40, centre.y - 30]);
			const { value: moved } = await poll(async () => {
				const n = (await rigd.tree(server, 'demo')).nodes.find((x) => x.id === 'base');
				return Math.hypot(n.t[0] - before.t[0], n.t[1] - before.t[1], n.t[2] - before.t[2]) > 1e-3 && n;
			}, { timeout: 10000, what: 'the gizmo drag to reach the server' });
			assert.ok(moved);
			// Put it back with one undo (a whole drag is one edit).
			await T.page.locator('.timeline button[aria-label="Undo"]').tap();
			await poll(async () => {
				const n = (await rigd.tree(server, 'demo')).nodes.find((x) => x.id === 'base');
				return n.t.every((v, i) => Math.abs(v - before.t[i]) < 1e-12);
			}, { timeout: 10000, what: 'the undo of the drag' });
		});

		it('pinches even when the first finger lands on the gizmo', async () => {
			assert.equal(await T.page.evaluate(() => window.rigd.selection()), 'base');
			const tree0 = await rigd.tree(server, 'demo');
			const t0 = tree0.nodes.find((n) => n.id === 'base').t;
			const before = await T.page.evaluate(() => window.rigd.viewMatrix());
			const c = await T.page.evaluate(() => window.rigd.screenOf('base'));
			// The first finger on the gizmo's centre, the second beside it,
			// towards the middle of the screen; both move apart.
			const dir = c.x < device.width / 2 ? 1 : -1;
			const room = Math.min(200, dir > 0 ? device.width - 10 - c.x : c.x - 10);
			const at = (d) => [[c.x - (dir * d) / 4, c.y], [c.x + (dir * 3 * d) / 4, c.y]];
			await touch(T.cdp, 'touchStart', at(0));
			for (let i = 1; i <= 12; i++) {
				await pause(16);
				await touch(T.cdp, 'touchMove', at((i / 12) * room));
			}
			await touch(T.cdp, 'touchEnd', []);
			await frames(T.page);
			const after = await T.page.evaluate(() => window.rigd.viewMatrix());
			const dist = (m) => Math.hypot(m[12], m[13], m[14]);
			assert.ok(dist(after) < dist(before) * 0.95, `eye distance ${dist(before).toFixed(3)} -> ${dist(after).toFixed(3)}`);
			await pause(300);
			const after2 = await rigd.tree(server, 'demo');
			assert.deepEqual(after2.nodes.find((n) => n.id === 'base').t, t0, 'the gizmo moved nothing');
			// Not even with its own values, which may be older than the
			// server's (an undo's update still on its way).
			assert.equal(after2.seq, tree0.seq, 'the pinch sent no edit');
			assert.deepEqual(T.problems, []);
		});
	});

	describe(`${device.name}: a 2D rig by finger, seen on a desktop page`, () => {
		let T;
		let D;
		before(async () => {
			T = await openTouch(`${server.url}/#/scene/arm2`, { ...device, name: 'finger' });
			D = await openPage(browser, `${server.url}/#/scene/arm2`, { name: 'desk' });
			for (const p of [T.page, D.page]) await p.waitForFunction(() => window.rigd.view2d() && window.rigd.jointOnPage('hand'));
		});
		after(async () => {
			for (const p of [T, D]) if (p) await p.context.close();
		});

		it('covers the screen and pinches to zoom', async () => {
			assert.ok((await viewShare(T.page)) >= 0.6);
			await noSidewaysScroll(T.page, 'a 2D scene');
			const k0 = (await T.page.evaluate(() => window.rigd.view2d())).camera.k;
			const svg = await T.page.locator('svg.view2d').boundingBox();
			await pinch(T.cdp, [svg.x + svg.width / 2, svg.y + svg.height / 2], 200, 80);
			await frames(T.page);
			const k1 = (await T.page.evaluate(() => window.rigd.view2d())).camera.k;
			assert.ok(k1 < k0 * 0.6, `a pinch inwards zooms out: ${k0.toFixed(3)} -> ${k1.toFixed(3)}`);
			await T.page.locator('.toolbar button[aria-label="Frame all"]').tap();
			await frames(T.page);
		});

		it('turns a bone with a finger near its joint; the desktop page shows the server\'s matrix', async () => {
			const seq0 = (await rigd.tree(server, 'arm2')).seq;
			const before = await D.page.evaluate(() => window.rigd.worldOf('hand'));
			const joint = await T.page.evaluate(() => window.rigd.jointOnPage('hand'));
			const elbow = await T.page.evaluate(() => window.rigd.jointOnPage('fore'));
			// 15 px off the joint's centre: the finger still takes the joint.
			const from = [joint.x + 15, joint.y];
			// Swing the hand about the elbow by about 40 degrees.
			const a = Math.atan2(joint.y - elbow.y, joint.x - elbow.x) + (40 * Math.PI) / 180;
			const r = Math.hypot(joint.x - elbow.x, joint.y - elbow.y);
			await fingerDrag(T.cdp, from, [elbow.x + r * Math.cos(a), elbow.y + r * Math.sin(a)], 16);
			const { value: tree } = await poll(async () => {
				const t = await rigd.tree(server, 'arm2');
				const seq = await D.page.evaluate(() => window.rigd.seq());
				return t.seq > seq0 && seq === t.seq && t;
			}, { timeout: 10000, what: 'the desktop page to show the drag' });
			const shown = await D.page.evaluate(() => window.rigd.worldOf('hand'));
			assert.deepEqual(shown, tree.nodes.find((n) => n.id === 'hand').world, 'the desktop page draws the server\'s matrix');
			assert.notDeepEqual(shown, before, 'the hand moved');
			// The same ops as a mouse drag: the parent bone turned (the log
			// holds each rotate as the set it committed, as for the mouse).
			const log = await rigd.get(server, `/api/scenes/arm2/log?from=${seq0 + 1}`);
			const ops = log.text.trim().split('\n').flatMap((l) => JSON.parse(l).ops);
			assert.ok(ops.length > 0 && ops.every((o) => o.op === 'set' && o.id === 'fore'), `ops: ${JSON.stringify(ops.slice(0, 3))}`);
			assert.deepEqual(T.problems, []);
			assert.deepEqual(D.problems, []);
		});
	});
}

describe('360 px wide', () => {
	it('never scrolls sideways: the scene list, a 3D and a 2D scene', async () => {
		for (const [hash, what] of [['#/', 'the scene list'], ['#/scene/demo', 'a 3D scene'], ['#/scene/demo2d', 'a 2D scene']]) {
			const T = await openTouch(`${server.url}/${hash}`, { width: 360, height: 740, waitLive: hash !== '#/' });
			try {
				if (hash === '#/') await T.page.waitForSelector('table.scenes');
				else await frames(T.page);
				await noSidewaysScroll(T.page, what);
				if (hash !== '#/') {
					const tl = await T.page.locator('.timeline').boundingBox();
					assert.ok(tl.y + tl.height <= 740.5, `${what}: the timeline is on screen`);
					// Every sheet opens inside the window too.
					for (const tab of await T.page.locator('.sheet-tab:visible').all()) {
						await tab.tap();
						await sheetSettled(T.page);
						await noSidewaysScroll(T.page, `${what}, sheet ${await tab.textContent()}`);
					}
				}
				assert.deepEqual(T.problems, []);
			} finally {
				await T.context.close();
			}
		}
	});
});

describe('keyboard alone', () => {
	it('selects a node in the tree and changes a field', async () => {
		const { page, problems, context } = await openPage(browser, `${server.url}/#/scene/demo`, { width: 1280, height: 800 });
		try {
			// Tab to the tree (its one tab stop), then down to the second row.
			const tabTo = async (test, what) => {
				for (let i = 0; i < 60; i++) {
					await page.keyboard.press('Tab');
					if (await page.evaluate(test)) return;
				}
				throw new Error(`Tab never reached ${what}`);
			};
			await tabTo(() => document.activeElement.getAttribute('role') === 'tree', 'the hierarchy tree');
			const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
			assert.notEqual(outline, 'none', 'the focused tree shows its focus');
			await page.keyboard.press('ArrowDown');
			const active = await page.evaluate(() => document.activeElement.getAttribute('aria-activedescendant'));
			assert.equal(active, 'tree-node-arm', 'Down moves to the second row');
			assert.equal(await page.evaluate(() => window.rigd.selection()), null, 'moving is not selecting');
			await page.keyboard.press('Enter');
			assert.equal(await page.evaluate(() => window.rigd.selection()), 'arm');
			await tabTo(() => document.activeElement.getAttribute('aria-label') === 'Translation t x', 'the t x field');
			await page.keyboard.press('Control+A');
			await page.keyboard.type('0.25');
			await page.keyboard.press('Enter');
			await poll(async () => (await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'arm').t[0] === 0.25, { timeout: 10000, what: 'the typed t x to reach the server' });
			await page.keyboard.press('Control+Z');
			assert.deepEqual(problems, []);
		} finally {
			await context.close();
		}
	});
});

describe('axe-core', () => {
	for (const [hash, what] of [['#/', 'the scene list'], ['#/scene/demo', 'a 3D scene'], ['#/scene/demo2d', 'a 2D scene']]) {
		it(`finds nothing serious or critical on ${what}`, async () => {
			const { page, context } = await openPage(browser, `${server.url}/${hash}`, { width: 1280, height: 800, waitLive: hash !== '#/' });
			try {
				if (hash === '#/') await page.waitForSelector('table.scenes');
				else await page.click('.tree-row:nth-child(2)');
				await frames(page);
				const result = await new AxeBuilder({ page }).analyze();
				const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
				assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`), []);
			} finally {
				await context.close();
			}
		});
	}
});

describe('1280 px wide', () => {
	it('fits the toolbar on one row, in 3D and in 2D', async () => {
		for (const scene of ['demo', 'demo2d']) {
			const { page, context } = await openPage(browser, `${server.url}/#/scene/${scene}`, { width: 1280, height: 800 });
			try {
				await frames(page);
				const r = await page.evaluate(() => {
					const bar = document.querySelector('.toolbar').getBoundingClientRect();
					const kids = [...document.querySelectorAll('.toolbar > *')].filter((e) => e.getClientRects().length && !e.classList.contains('help')).map((e) => e.getBoundingClientRect());
					const view = document.querySelector('.viewport').getBoundingClientRect();
					return { top: Math.max(...kids.map((b) => b.top)), bottom: Math.min(...kids.map((b) => b.bottom)), right: Math.max(...kids.map((b) => b.right)), count: kids.length, height: bar.height, tallest: Math.max(...kids.map((b) => b.height)), viewRight: view.right };
				});
				assert.ok(r.count >= 4, `${scene}: ${r.count} tools`);
				assert.ok(r.top < r.bottom, `${scene}: every tool shares one row (tops up to ${r.top}, bottoms from ${r.bottom})`);
				assert.ok(r.height <= r.tallest + 1, `${scene}: the toolbar is ${r.height} px tall, one tool ${r.tallest}`);
				assert.ok(r.right <= r.viewRight, `${scene}: the toolbar ends inside the viewport`);
			} finally {
				await context.close();
			}
		}
	});
});

describe('one Import button', () => {
	let P;
	before(async () => {
		P = await openPage(browser, `${server.url}/#/`, { width: 1280, height: 800, waitLive: false });
		await P.page.waitForSelector('table.scenes');
	});
	after(async () => {
		if (P) await P.context.close();
	});

	const SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 200"><g id="body"><rect x="80" y="40" width="40" height="100" fill="#4a8ad0"/></g><g id="arm"><rect x="120" y="50" width="60" height="14" fill="#d0884a"/></g></svg>';
	const MANIFEST = [{ id: 'body', pivot: [100, 140] }, { id: 'arm', parent: 'body', pivot: [120, 57], rotation: 20 }];
	const file = (name, text, mimeType = 'application/octet-stream') => ({ name, mimeType, buffer: Buffer.from(text) });
	const scenes = async () => JSON.parse((await rigd.get(server, '/api/scenes')).text).scenes.map((s) => s.name);

	/* Picks files with the Import button's input; waits for the box under the top bar. */
	async function pick(files) {
		await P.page.evaluate(() => (document.querySelector('.import-status').hidden = true));
		await P.page.setInputFiles('input.import-input', files);
		await P.page.waitForFunction(() => {
			const s = document.querySelector('.import-status');
			return !s.hidden && !/^Importing/.test(s.textContent);
		}, null, { timeout: 20000 });
		return P.page.textContent('.import-text');
	}

	it('refuses what it cannot take, saying why, and makes nothing', async () => {
		const before = await scenes();
		assert.match(await pick([file('notes.txt', 'hello')]), /Cannot import notes\.txt: rigd imports glTF .*SVG rig.*Spine.*DragonBones/);
		assert.match(await pick([file('rig.svg', SVG)]), /Cannot import rig\.svg alone: an SVG rig needs its manifest/);
		assert.match(await pick([file('data.json', '{"hello": 1}')]), /Cannot import data\.json: it is JSON but neither/);
		assert.match(await pick([file('broken.json', '{"skel')]), /Cannot import broken\.json: it is not JSON/);
		// One the server refuses: its words, naming the manifest entry.
		assert.match(await pick([file('bad.svg', SVG), file('bad.json', JSON.stringify([{ id: 'nope', pivot: [0, 0] }]))]), /Cannot import bad\.svg as scene bad: .*manifest\[0\] \('nope'\)/);
		assert.deepEqual(await scenes(), before);
		// The browser logs the server's 400 itself; nothing else went wrong.
		assert.deepEqual(P.problems.filter((p) => !/status of 400/.test(p)), []);
		P.problems.length = 0;
	});

	it('takes an SVG with its manifest and opens the 2D scene', async () => {
		const text = await pick([file('hero rig.svg', SVG, 'image/svg+xml'), file('hero-manifest.json', JSON.stringify(MANIFEST), 'application/json')]);
		assert.match(text, /Imported hero rig\.svg as scene hero_rig: 2 nodes/);
		await P.page.waitForFunction(() => window.rigd.phase() === 'live' && window.rigd.view2d() && Object.keys(window.rigd.view2d().transforms).length === 2);
		const tree = await rigd.tree(server, 'hero_rig');
		assert.equal(tree.dims, 2);
		assert.deepEqual(tree.nodes.map((n) => n.id).sort(), ['arm', 'body']);
	});

	it('takes a Spine skeleton and a DragonBones skeleton, by their content', async () => {
		const spine = fs.readFileSync(path.join(SOURCE_DIR, 'tests', 'data', 'spine', 'chain.json'), 'utf8');
		assert.match(await pick([file('chain.json', spine, 'application/json')]), /Imported chain\.json as scene chain: \d+ bones/);
		await P.page.waitForFunction(() => window.rigd.phase() === 'live' && location.hash === '#/scene/chain');
		assert.ok((await rigd.tree(server, 'chain')).nodes.some((n) => n.name === 'hip'));
		const db = fs.readFileSync(path.join(SOURCE_DIR, 'tests', 'data', 'dragonbones', 'two_bone_ske.json'), 'utf8');
		assert.match(await pick([file('two_bone_ske.json', db, 'application/json')]), /Imported two_bone_ske\.json as scene two_bone: \d+ bones/);
		await P.page.waitForFunction(() => window.rigd.phase() === 'live' && location.hash === '#/scene/two_bone');
		assert.equal((await rigd.tree(server, 'two_bone')).dims, 2);
	});

	it('takes a glTF file dropped onto the viewport', async () => {
		const gltf = JSON.stringify({ asset: { version: '2.0' }, scenes: [{ nodes: [0] }], nodes: [{ name: 'dropped', translation: [0, 1, 0] }] });
		const target = await P.page.locator('.viewport').elementHandle();
		const dt = await P.page.evaluateHandle((text) => {
			const t = new DataTransfer();
			t.items.add(new File([text], 'drop me.gltf', { type: 'model/gltf+json' }));
			return t;
		}, gltf);
		for (const type of ['dragenter', 'dragover', 'drop']) await target.dispatchEvent(type, { dataTransfer: dt });
		await P.page.waitForFunction(() => /Imported drop me\.gltf as scene drop_me: 1 node/.test(document.querySelector('.import-text').textContent), null, { timeout: 20000 });
		await P.page.waitForFunction(() => window.rigd.phase() === 'live' && location.hash === '#/scene/drop_me');
		assert.deepEqual(P.problems, []);
	});
});
