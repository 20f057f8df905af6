/*
 * Per-viewer interest in the browser (web/app/interest.js): the viewer
 * opened with ?interest=on (float64 frames) zooms into a 1,830-node scene
 * and pans across it with the mouse while a script edits the scene (boxes
 * moved across the view, groups turned, nodes created and deleted). After
 * each pan it has declared its last camera (throttled, then once after the
 * move), and then it draws exactly the nodes the server's culling rule
 * keeps for that view (tests/lib/interest.js, node by node from the tree),
 * each with the server's matrix bit for bit; nodes that left the view are
 * not drawn.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { launch, openPage, poll, rigd } from './lib/browser.mjs';

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

/* 30 groups 20 apart along x, each of 60 boxes on a 10 x 6 grid 2 apart. */
function sceneOps() {
	const ops = [];
	for (let g = 0; g < 30; g++) {
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

/* What the page draws against the server's cull of the page's last view:
 * waits until the page's last view is answered at the tree's seq and what
 * it draws is that view's cull, all read in one step (a camera event that
 * arrives late sends one more view, which the wait then covers too). */
async function check(page, what) {
	const t = (await rigd.get(server, '/api/scenes/pan')).json;
	let last = null;
	try {
		await poll(async () => {
			last = await page.evaluate(() => ({ i: window.rigd.interest(), seq: window.rigd.liveSeq(),
				drawn: window.rigd.drawnIds() }));
			if (!(last.i.sent > 0 && last.i.applied === last.i.sent && last.seq >= t.seq)) return false;
			return setDiffs(new Set(last.drawn), visibleIds(t.nodes, last.i.view)).length === 0;
		}, { timeout: 20000, what: `${what}: the viewer's last view answered at seq ${t.seq}` });
	} catch { /* reported just below, with the difference */ }
	assert.ok(last && last.i.sent > 0 && last.i.applied === last.i.sent && last.seq >= t.seq,
		`${what}: the viewer's last view answered at seq ${t.seq} (${JSON.stringify(last && { ...last.i, view: undefined, seq: last.seq })})`);
	const drawn = new Set(last.drawn);
	assert.deepEqual(setDiffs(drawn, visibleIds(t.nodes, last.i.view)).slice(0, 10), [],
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
