/*
 * Per-viewer interest in the browser (web/app/interest.js). First, the
 * viewer opened with ?interest=on (float64 frames) zooms into a 1,830-node
 * scene (under AUTO_INTEREST_NODES: =on forces the view at any size)
 * and pans across it with the mouse while a script edits the scene (boxes
 * moved across the view, groups turned, nodes created and deleted). After
 * each pan it has declared its last camera (throttled, then once after the
 * move), and then it draws exactly the nodes the server's culling rule
 * keeps for that view (tests/lib/interest.js, node by node from the tree),
 * each with the server's matrix bit for bit; nodes that left the view are
 * not drawn.
 *
 * Then the default, ?interest=auto (no flag in the URL): a viewer of a
 * scene under the threshold sends no view; the scene grows past it and the
 * viewer declares its view and draws what the server culls; a node the view
 * hides is found in the hierarchy and selected: the view's "always" then
 * names it, so its matrix comes wherever the camera looks, and deselected it
 * is hidden again; the timeline's earlier seq draws every node; a
 * viewer with ?interest=off on the same scene gets every matrix; the scene
 * shrinks under AUTO_INTEREST_OFF_NODES and the viewer clears its view and
 * draws everything again. The demo skeleton, opened without a flag, never
 * sends a view.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { launch, openPage, poll, rigd } from './lib/browser.mjs';
import { AUTO_INTEREST_NODES, AUTO_INTEREST_OFF_NODES } from '../../web/app/interest.js';

const require = createRequire(import.meta.url);
const { visibleIds, setDiffs } = require('../lib/interest.js');

let browser;
let server;
before(async () => {
	browser = await launch();
	server = await rigd.startRigd({ args: ['--sync', 'normal'] });
});
after(async () => {
	if (browser) await browser.close();
	if (server) await server.stop();
});

const BOUNDS = { min: [-0.4, -0.4, -0.4], max: [0.4, 0.4, 0.4] };

/* 30 groups 20 apart along x, each of 60 boxes on a 10 x 6 grid 2 apart
 * (groups 'from' to 'to' - 1 of such a row). */
function sceneOps(from = 0, to = 30) {
	const ops = [];
	for (let g = from; g < to; g++) {
		ops.push({ op: 'create', id: `g${g}`, t: [20 * g, 0, 0] });
		for (let k = 0; k < 60; k++) ops.push({ op: 'create', id: `g${g}-${k}`, parent: `g${g}`, t: [(k % 10) * 2, Math.floor(k / 10) * 2, 0], bounds: BOUNDS });
	}
	return ops;
}

/* An editor that sends a batch every 'everyMs' until stopped; stop()
 * resolves once its last batch is answered. */
let nextNew = 0;
function editLoop(client, everyMs) {
	let running = true;
	let n = 0;
	let rnd = 99;
	const rand = () => ((rnd = (rnd * 1103515245 + 12345) % 2147483648), rnd / 2147483648);
	const done = (async () => {
		while (running) {
			const g = Math.floor(rand() * 30);
			const ops = [
				{ op: 'set', id: `g${g}-${Math.floor(rand() * 60)}`, t: [rand() * 600 - 20 * g, rand() * 12, 0] },
				{ op: 'set', id: `g${Math.floor(rand() * 30)}`, euler: [0, 0, rand() * 10 - 5] },
				{ op: 'create', id: `new${nextNew}`, parent: `g${g}`, t: [rand() * 18, rand() * 10, 0], bounds: BOUNDS },
			];
			if (n >= 2) ops.push({ op: 'delete', id: `new${nextNew - 2}` });
			n++;
			nextNew++;
			const r = await client.request({ type: 'edit', scene: 'pan', ops });
			assert.equal(r.type, 'ack', `${r.code}: ${r.message}`);
			await new Promise((resolve) => setTimeout(resolve, everyMs));
		}
	})();
	return { stop: async () => { running = false; await done; return n; } };
}

/* The server's cull of a view the page declared: its camera's, plus its
 * "always" ids that name nodes. */
function culled(nodes, view) {
	const want = visibleIds(nodes, view);
	for (const id of view.always || []) if (nodes.some((n) => n.id === id)) want.add(id);
	return want;
}

/* What the page draws against the server's cull of the page's last view:
 * waits until the page's last view is answered at the tree's seq and what
 * it draws is that view's cull, all read in one step (a camera event that
 * arrives late sends one more view, which the wait then covers too). */
async function check(page, what, scene = 'pan') {
	const t = (await rigd.get(server, `/api/scenes/${scene}`)).json;
	let last = null;
	try {
		await poll(async () => {
			last = await page.evaluate(() => ({ i: window.rigd.interest(), seq: window.rigd.liveSeq(),
				drawn: window.rigd.drawnIds() }));
			if (!(last.i.sent > 0 && last.i.applied === last.i.sent && last.seq >= t.seq)) return false;
			return setDiffs(new Set(last.drawn), culled(t.nodes, last.i.view)).length === 0;
		}, { timeout: 20000, what: `${what}: the viewer's last view answered at seq ${t.seq}` });
	} catch { /* reported just below, with the difference */ }
	assert.ok(last && last.i.sent > 0 && last.i.applied === last.i.sent && last.seq >= t.seq,
		`${what}: the viewer's last view answered at seq ${t.seq} (${JSON.stringify(last && { ...last.i, view: undefined, seq: last.seq })})`);
	const drawn = new Set(last.drawn);
	assert.deepEqual(setDiffs(drawn, culled(t.nodes, last.i.view)).slice(0, 10), [],
		`${what}: drawn = the server's cull`);
	const byId = new Map(t.nodes.map((n) => [n.id, n]));
	const worlds = await page.evaluate((ids) => ids.map((id) => window.rigd.worldOf(id)), [...drawn]);
	[...drawn].forEach((id, k) => {
		const w = worlds[k];
		assert.ok(w, `${what}: ${id} drawn without an object`);
		for (let i = 0; i < 16; i++) assert.ok(Object.is(w[i] + 0, byId.get(id).world[i] + 0), `${what}: ${id}[${i}] ${w[i]} instead of ${byId.get(id).world[i]}`);
	});
	return { drawn, total: t.nodes.length };
}

describe('viewer: per-viewer interest', () => {
	it('pans across a large scene while it is edited; every drawn node is visible and has the server\'s matrix', async () => {
		await rigd.createScene(server, 'pan');
		const editor = await rigd.Client.connect(server);
		assert.equal((await editor.request({ type: 'edit', scene: 'pan', ops: sceneOps() })).type, 'ack');
		const P = await openPage(browser, `${server.url}/?interest=on#/scene/pan`);
		const { page } = P;
		assert.equal((await page.evaluate(() => window.rigd.interest())).mode, 'on');
		assert.equal((await page.evaluate(() => window.rigd.interest())).enabled, true);
		const first = await check(page, 'framed');

		/* Zoom in on the middle, then pan in steps along x while edits arrive. */
		const canvas = await page.locator('canvas').boundingBox();
		const cx = canvas.x + canvas.width / 2;
		const cy = canvas.y + canvas.height / 2;
		await page.mouse.move(cx, cy);
		/* Wheel in until the view holds under half the nodes (a busy
		 * machine may zoom less per wheel event: keep turning it). */
		for (let round = 0; round < 10; round++) {
			for (let i = 0; i < 4; i++) {
				await page.mouse.wheel(0, -300);
				await new Promise((r) => setTimeout(r, 30));
			}
			await new Promise((r) => setTimeout(r, 300));
			if (await page.evaluate(() => window.rigd.drawnIds().length) < first.drawn.size / 2) break;
		}
		const zoomed = await check(page, 'zoomed in');
		assert.ok(zoomed.drawn.size < first.drawn.size / 2, `zoomed in, ${zoomed.drawn.size} of ${zoomed.total} nodes drawn`);

		const seen = new Set(zoomed.drawn);
		let hiddenAgain = 0;
		let previous = zoomed.drawn;
		for (let step = 0; step < 6; step++) {
			const edits = editLoop(editor, 40);
			const dx = step < 3 ? -240 : 240;
			await page.mouse.move(cx, cy);
			await page.mouse.down({ button: 'right' });
			for (let k = 1; k <= 20; k++) {
				await page.mouse.move(cx + (dx * k) / 20, cy + (k % 2), { steps: 1 });
				await new Promise((r) => setTimeout(r, 16));
			}
			await page.mouse.up({ button: 'right' });
			const n = await edits.stop();
			assert.ok(n > 0);
			const now = await check(page, `pan ${step}`);
			for (const id of now.drawn) seen.add(id);
			for (const id of previous) if (!now.drawn.has(id)) hiddenAgain++;
			previous = now.drawn;
		}
		/* The pans brought other nodes in and sent drawn ones out (how
		 * many depends on how far the wheel zoomed, which a busy machine
		 * changes: counts, not ratios). */
		assert.ok(seen.size > zoomed.drawn.size + 20, `${seen.size} nodes drawn over the pans, ${zoomed.drawn.size} at first`);
		assert.ok(hiddenAgain > 20, `${hiddenAgain} nodes left the view and were hidden`);
		const sent = (await page.evaluate(() => window.rigd.interest())).sent;
		console.log(`# ${sent} views sent over the zoom and six pans (throttled to one per 100 ms)`);
		assert.deepEqual(P.problems, []);
		await P.context.close();
		await editor.close();
	});
});

/* Turns the mouse wheel over the canvas's centre until the page draws
 * fewer than 'below' nodes, or 'rounds' times over (a busy machine may
 * zoom less per wheel event). */
async function zoomIn(page, below, rounds = 10) {
	const canvas = await page.locator('canvas').boundingBox();
	await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
	for (let round = 0; round < rounds; round++) {
		for (let i = 0; i < 4; i++) {
			await page.mouse.wheel(0, -300);
			await new Promise((r) => setTimeout(r, 30));
		}
		await new Promise((r) => setTimeout(r, 300));
		if (await page.evaluate(() => window.rigd.drawnIds().length) < below) break;
	}
}

/* The page draws every (visible) node of 'scene' with the server's
 * matrix, none hidden: waits up to 20 s for the server's seq, then
 * compares. */
async function drawsEverything(page, what, scene) {
	const t = (await rigd.get(server, `/api/scenes/${scene}`)).json;
	const shown = t.nodes.filter((n) => n.visible !== false);
	await poll(async () => {
		const now = await page.evaluate(() => ({ seq: window.rigd.liveSeq(), drawn: window.rigd.drawnIds().length }));
		return now.seq >= t.seq && now.drawn === shown.length;
	}, { timeout: 20000, what: `${what}: every node of seq ${t.seq} drawn` });
	const worlds = await page.evaluate((list) => list.map((id) => window.rigd.worldOf(id)), shown.map((n) => n.id));
	shown.forEach((n, k) => assert.deepEqual(worlds[k], n.world, `${what}: ${n.id} has the server's matrix`));
	return t;
}

/* The inspector's values of field 'key' (t, s, pivot...) as numbers. */
const fieldValues = (page, key) => page.evaluate((k) => [...document.querySelectorAll(`.inspector-panel .field[data-field="${k}"] input.num`)].map((i) => Number(i.value)), key);

describe('viewer: interest by default (?interest=auto)', () => {
	it('follows the scene past the threshold and back; ?interest=off gets everything; hidden nodes can be selected and inspected', async () => {
		assert.ok(1830 < AUTO_INTEREST_NODES && 1830 + 6 * 61 >= AUTO_INTEREST_NODES && 1830 + 6 * 61 - 12 * 61 < AUTO_INTEREST_OFF_NODES,
			'the scene sizes below straddle the thresholds');
		await rigd.createScene(server, 'auto');
		const editor = await rigd.Client.connect(server);
		const edit = async (ops) => {
			const r = await editor.request({ type: 'edit', scene: 'auto', ops });
			assert.equal(r.type, 'ack', `${r.code}: ${r.message}`);
		};
		await edit(sceneOps(0, 30));

		/* 1,830 nodes: the camera moves, and no view is sent. */
		const A = await openPage(browser, `${server.url}/#/scene/auto`);
		const { page } = A;
		await zoomIn(page, 0, 1);
		await new Promise((r) => setTimeout(r, 500));
		let i = await page.evaluate(() => window.rigd.interest());
		assert.deepEqual({ mode: i.mode, enabled: i.enabled, sent: i.sent }, { mode: 'auto', enabled: false, sent: 0 });
		await drawsEverything(page, 'under the threshold', 'auto');

		/* 2,196 nodes: the viewer declares its view (the camera, as it is). */
		await edit(sceneOps(30, 36));
		await poll(async () => (await page.evaluate(() => window.rigd.interest())).enabled, { timeout: 20000, what: 'the view declared past the threshold' });
		const whole = await check(page, 'past the threshold', 'auto');
		await zoomIn(page, whole.total / 2);
		const zoomed = await check(page, 'past the threshold, zoomed in', 'auto');
		assert.ok(zoomed.drawn.size < zoomed.total / 2, `zoomed in, ${zoomed.drawn.size} of ${zoomed.total} nodes drawn`);
		console.log(`# ?interest=auto at ${zoomed.total} nodes: ${zoomed.drawn.size} drawn after zooming in`);

		/* A hidden box: listed by the hierarchy's search, selected there,
		 * its locals in the inspector. Selected, it is in the view's
		 * "always": the server sends its matrix wherever the camera looks,
		 * so the inspector's world values and the gizmo are current. */
		const t = (await rigd.get(server, '/api/scenes/auto')).json;
		const hiddenIds = await page.evaluate(() => window.rigd.hiddenIds());
		// A group has no bounds and is always visible: take a box of a group
		// two or more groups away from any with a box drawn, so that moving
		// it inside its group keeps it hidden.
		const groupOf = (n) => Number(n.parent.slice(1));
		const shownGroups = t.nodes.filter((n) => n.bounds && zoomed.drawn.has(n.id)).map(groupOf);
		const target = t.nodes.find((n) => n.bounds && hiddenIds.includes(n.id) && shownGroups.every((g) => Math.abs(g - groupOf(n)) >= 2));
		assert.ok(target, `a hidden box in a group with no box drawn (${hiddenIds.length} hidden)`);
		await page.fill('.panel-tools .search', target.id);
		await page.click(`.tree-row[data-id="${target.id}"]`);
		assert.equal(await page.evaluate(() => window.rigd.selection()), target.id);
		assert.equal(await page.textContent('.inspector-panel .node-id'), target.id);
		assert.deepEqual(await fieldValues(page, 't'), target.t);
		assert.deepEqual((await page.evaluate(() => window.rigd.interest())).view.always, [target.id]);
		await check(page, 'a hidden box selected', 'auto');
		assert.ok(!(await page.evaluate(() => window.rigd.hiddenIds())).includes(target.id), `${target.id} is sent while selected`);
		await poll(async () => !(await page.isVisible('.inspector-panel .out-of-view')), { what: 'the inspector\'s note on a stale matrix gone' });
		// Its group turns: the update carries the selected box's new matrix,
		// though the camera still cannot see it.
		await edit([{ op: 'set', id: target.parent, euler: [0, 0, 7] }, { op: 'set', id: target.id, t: [1.5, 2.5, 0] }]);
		await poll(async () => JSON.stringify(await fieldValues(page, 't')) === '[1.5,2.5,0]', { timeout: 20000, what: 'the selected node\'s new locals in the inspector' });
		await check(page, 'the selected box\'s group turned', 'auto');
		const moved = (await rigd.get(server, '/api/scenes/auto')).json;
		assert.ok(!visibleIds(moved.nodes, (await page.evaluate(() => window.rigd.interest())).view).has(target.id), 'the camera does not see it');
		// Deselected, it leaves the "always" and is hidden again.
		await page.keyboard.press('Escape');
		await page.fill('.panel-tools .search', '');
		assert.equal((await page.evaluate(() => window.rigd.interest())).view.always, undefined);
		await check(page, 'the box deselected', 'auto');
		assert.ok((await page.evaluate(() => window.rigd.hiddenIds())).includes(target.id), `${target.id} is hidden again`);

		/* The timeline's seq 1 is read over HTTP: every node drawn with its
		 * matrix of then, hidden ones included; back to live, the view's
		 * cull again. */
		const at1 = (await rigd.get(server, '/api/scenes/auto?at=1')).json;
		const slider = page.locator('.timeline-slider');
		await slider.focus();
		await slider.press('Home');
		await slider.press('ArrowRight');
		await page.waitForFunction(() => window.rigd.seq() === 1, null, { timeout: 20000 });
		const then = await page.evaluate((ids) => ids.map((id) => window.rigd.worldOf(id)), at1.nodes.map((n) => n.id));
		at1.nodes.forEach((n, k) => assert.deepEqual(then[k], n.world, `${n.id} at seq 1`));
		assert.ok(at1.nodes.some((n) => n.id === target.id), 'the hidden node is drawn at seq 1');
		await page.click('button.live');
		await page.waitForFunction(() => window.rigd.seq() === window.rigd.liveSeq(), null, { timeout: 20000 });
		await check(page, 'back to live', 'auto');

		/* ?interest=off on the same scene, zoomed in too: every matrix. */
		const B = await openPage(browser, `${server.url}/?interest=off#/scene/auto`);
		await zoomIn(B.page, 0, 2);
		await drawsEverything(B.page, '?interest=off, zoomed in', 'auto');
		i = await B.page.evaluate(() => window.rigd.interest());
		assert.deepEqual({ mode: i.mode, enabled: i.enabled, sent: i.sent }, { mode: 'off', enabled: false, sent: 0 });
		assert.deepEqual(await B.page.evaluate(() => window.rigd.hiddenIds()), []);

		/* 1,464 nodes: under AUTO_INTEREST_OFF_NODES, the view is cleared
		 * and the server sends what it had hidden. */
		await edit(Array.from({ length: 12 }, (_, k) => ({ op: 'delete', id: `g${24 + k}` })));
		await poll(async () => {
			const now = await page.evaluate(() => window.rigd.interest());
			return !now.enabled && now.view === null && now.applied === now.sent;
		}, { timeout: 20000, what: 'the view cleared under the threshold' });
		const after = await drawsEverything(page, 'back under the threshold', 'auto');
		assert.ok(after.nodes.length < AUTO_INTEREST_OFF_NODES, `${after.nodes.length} nodes`);
		assert.deepEqual(await page.evaluate(() => window.rigd.hiddenIds()), []);

		for (const P of [A, B]) {
			assert.deepEqual(P.problems, []);
			await P.context.close();
		}
		await editor.close();
	});

	it('a small rig (the demo skeleton) opened without a flag sends no view', async () => {
		const P = await openPage(browser, `${server.url}/#/scene/demo`);
		await zoomIn(P.page, 0, 2);
		await new Promise((r) => setTimeout(r, 500));
		const i = await P.page.evaluate(() => window.rigd.interest());
		assert.deepEqual({ mode: i.mode, enabled: i.enabled, sent: i.sent, view: i.view }, { mode: 'auto', enabled: false, sent: 0, view: null });
		await drawsEverything(P.page, 'the demo', 'demo');
		assert.deepEqual(P.problems, []);
		await P.context.close();
	});
});
