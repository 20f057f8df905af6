/*
 * The viewer against a real rigd, in two Chromium pages at once:
 * a slider on page A moves page B's hand to the server's exact matrix within
 * a second; drag-and-drop reparent with keep-world reaches page B; the
 * timeline shows an earlier seq; undo/redo; presence; errors shown where
 * they happened; looking through a camera node; reconnect and resync after
 * a server restart; no console errors anywhere. Screenshots of the default
 * demo view and an edited pose go to tests/artifacts/.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { artifacts, dragSlider, launch, maxDiff, openPage, poll, rigd } from './lib/browser.mjs';

const worldOfTree = (tree, id) => tree.nodes.find((n) => n.id === id)?.world;
const parentOf = (tree, id) => tree.nodes.find((n) => n.id === id)?.parent;

/* Nested [id, [children]] lists from a server tree, like rigd.tree(). */
function shapeOf(tree) {
	const kids = new Map();
	const roots = [];
	for (const n of [...tree.nodes].sort((a, b) => a.index - b.index)) {
		if (n.parent === null) roots.push(n.id);
		else (kids.get(n.parent) || kids.set(n.parent, []).get(n.parent)).push(n.id);
	}
	const walk = (id) => [id, (kids.get(id) || []).map(walk)];
	return roots.map(walk);
}

/* One browser for the file; each page gets its own context. */
let browser;
before(async () => {
	browser = await launch();
});
after(async () => {
	if (browser) await browser.close();
});

/* The server runs with --sync normal: these tests are about the viewer, and
 * an fsync per slider step would only slow them down. */
const SERVER_ARGS = { args: ['--sync', 'normal'] };

describe('viewer: two browsers on one rig', () => {
	let server;
	let A;
	let B;
	const url = () => `${server.url}/#/scene/demo`;

	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
		[A, B] = await Promise.all([openPage(browser, url(), { name: 'alice' }), openPage(browser, url(), { name: 'bob' })]);
	});

	after(async () => {
		for (const p of [A, B]) if (p) await p.context.close();
		if (server) await server.stop();
	});

	it('draws every node with the server\'s world matrix, exactly', async () => {
		const tree = await rigd.tree(server, 'demo');
		for (const { page } of [A, B]) {
			for (const n of tree.nodes) {
				const w = await page.evaluate((id) => window.rigd.worldOf(id), n.id);
				assert.equal(maxDiff(w, n.world), 0, `${n.id} is drawn with the server's numbers`);
			}
			assert.deepEqual(await page.evaluate(() => window.rigd.tree()), shapeOf(tree));
			const info = await page.evaluate(() => window.rigd.drawInfo());
			// The three parts share the mesh "box": one instanced batch.
			assert.deepEqual(Object.values(info.batches), [3]);
		}
		// The hand at the demo rig's default pose (docs/transforms.md 4.1).
		const hand = worldOfTree(tree, 'hand');
		assert.ok(maxDiff(hand.slice(12, 15), [-0.779, 1.472, 0.45]) < 5e-4);
		await A.page.evaluate(() => document.activeElement.blur());
		await A.page.screenshot({ path: path.join(artifacts(), 'demo-default.png') });
	});

	it('picks a node by clicking it in the viewport', async () => {
		const at = await A.page.evaluate(() => window.rigd.screenOf('hand'));
		await A.page.mouse.click(at.x, at.y);
		assert.equal(await A.page.evaluate(() => window.rigd.selection()), 'hand');
		assert.equal(await A.page.textContent('.inspector-body .node-id'), 'hand');
		await A.page.keyboard.press('Escape');
		assert.equal(await A.page.evaluate(() => window.rigd.selection()), null);
	});

	it('shows who else is here and what they selected', async () => {
		await B.page.click('.tree-row[data-id="arm"]');
		await A.page.waitForSelector('.tree-row[data-id="arm"] .presence-dot', { timeout: 5000 });
		const people = await A.page.locator('.presence .person').allTextContents();
		assert.ok(people.some((p) => p.includes('bob') && p.includes('arm')), `A lists bob with arm: ${people}`);
		assert.deepEqual(A.problems, []);
	});

	// The time it took is printed, never asserted: a busy machine (the suite
	// runs two builds side by side on two cores) must not fail the test.
	it('a slider on page A moves page B\'s hand to the server\'s matrix', async () => {
		const before = await rigd.tree(server, 'demo');
		await A.page.click('.tree-row[data-id="base"]');
		await A.page.waitForSelector('.inspector-body:not([hidden]) [data-field="euler"]');
		await dragSlider(A.page, '[data-field="euler"] [data-axis="y"] input.slider', 0.75);
		const released = performance.now();
		// Page B must converge on exactly what the server holds, by seq.
		const { ms } = await poll(
			async () => {
				const tree = await rigd.tree(server, 'demo');
				const [seq, hand] = await B.page.evaluate(() => [window.rigd.seq(), window.rigd.worldOf('hand')]);
				return seq === tree.seq && tree.seq > before.seq && maxDiff(hand, worldOfTree(tree, 'hand')) <= 1e-9 && tree;
			},
			{ timeout: 15000, what: 'page B to show the server\'s hand' },
		);
		const took = performance.now() - released;
		console.log(`# page B matched the server's hand ${took.toFixed(0)} ms after the slider was released (${ms.toFixed(0)} ms polling)`);
		// Every node, on both pages, once each has taken in the server's
		// latest seq (page A's own update may still be on its way when page B
		// already shows it, and under load the slider's last edit may still be
		// in flight, moving the server past the seq read first: each page is
		// compared with the tree read at the seq it shows).
		const pageWorlds = (page, ids) => page.evaluate((list) => [window.rigd.seq(),
			Object.fromEntries(list.map((id) => [id, window.rigd.worldOf(id)]))], ids);
		let tree;
		for (const { page } of [A, B]) {
			let last;
			const same = async () => {
				const t = await rigd.tree(server, 'demo');
				const [seq, worlds] = await pageWorlds(page, t.nodes.map((n) => n.id));
				last = { t, seq, worlds };
				return seq === t.seq && t.nodes.every((n) => worlds[n.id] && maxDiff(worlds[n.id], n.world) <= 1e-9) && t;
			};
			await poll(same, { timeout: 5000, what: 'the page to show the server\'s latest seq' }).catch(() => {});
			tree = last.t;
			assert.equal(last.seq, tree.seq, 'the page shows the server\'s seq');
			for (const n of tree.nodes) assert.ok(maxDiff(last.worlds[n.id], n.world) <= 1e-9, n.id);
		}
		const yaw = tree.nodes.find((n) => n.id === 'base').euler[1];
		assert.ok(Math.abs(yaw - 30) > 20, `the yaw moved (now ${yaw})`);
		assert.ok(maxDiff(worldOfTree(tree, 'hand'), worldOfTree(before, 'hand')) > 0.1, 'the hand moved');
		// The inspector of page A reads the server's yaw.
		const shown = Number(await A.page.inputValue('[data-field="euler"] [data-axis="y"] input.num'));
		assert.ok(Math.abs(shown - yaw) < 1e-3, `inspector shows ${shown}, server ${yaw}`);
		await A.page.evaluate(() => document.activeElement.blur());
		await A.page.screenshot({ path: path.join(artifacts(), 'demo-edited.png') });
	});

	it('moves a node with the viewport gizmo; one Ctrl+Z undoes the whole drag', async () => {
		await A.page.click('.tree-row[data-id="arm"]');
		await A.page.click('button.tool[data-mode="translate"]');
		const before = await rigd.tree(server, 'demo');
		const t0 = before.nodes.find((n) => n.id === 'arm').t;
		// The gizmo sits on the arm's joint: its pivot point, W_base (t + pivot).
		const base = before.nodes.find((n) => n.id === 'base').world;
		const joint = [0, 0.2, 0]; // t + pivot of the arm, in the base's frame
		const at = await A.page.evaluate(([w, p]) => {
			const x = w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12];
			const y = w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13];
			const z = w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14];
			return window.rigd.screenOfPoint([x, y, z]);
		}, [base, joint]);
		await A.page.mouse.move(at.x, at.y);
		await A.page.mouse.down();
		await A.page.mouse.move(at.x + 40, at.y - 10, { steps: 6 });
		await A.page.mouse.up();
		const moved = await poll(async () => {
			const tree = await rigd.tree(server, 'demo');
			const t = tree.nodes.find((n) => n.id === 'arm').t;
			return maxDiff(t, t0) > 0.01 && tree;
		}, { what: 'the arm moved by the gizmo' });
		assert.equal(await A.page.evaluate(() => window.rigd.selection()), 'arm', 'a gizmo drag is not a pick');
		assert.ok(maxDiff(worldOfTree(moved.value, 'hand'), worldOfTree(before, 'hand')) > 0.01, 'the hand rode along');
		await A.page.locator('body').press('Control+z');
		await poll(async () => maxDiff((await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'arm').t, t0) === 0, { what: 'the drag undone' });
	});

	it('shows a gizmo drag at once, predicted, then exactly the server\'s matrices', async () => {
		await A.page.click('.tree-row[data-id="arm"]');
		await A.page.click('button.tool[data-mode="translate"]');
		const before = await rigd.tree(server, 'demo');
		const t0 = before.nodes.find((n) => n.id === 'arm').t;
		const base = before.nodes.find((n) => n.id === 'base').world;
		const at = await A.page.evaluate(([w, p]) => {
			const x = w[0] * p[0] + w[4] * p[1] + w[8] * p[2] + w[12];
			const y = w[1] * p[0] + w[5] * p[1] + w[9] * p[2] + w[13];
			const z = w[2] * p[0] + w[6] * p[1] + w[10] * p[2] + w[14];
			return window.rigd.screenOfPoint([x, y, z]);
		}, [base, [0, 0.2, 0]]);
		await A.page.mouse.move(at.x, at.y);
		await A.page.mouse.down();
		await A.page.mouse.move(at.x + 5, at.y - 1);
		// With the server stopped, nothing it sends can move the hand: what
		// the page draws now is its own prediction.
		process.kill(server.rigdPid, 'SIGSTOP');
		let during;
		try {
			await A.page.mouse.move(at.x + 45, at.y - 10, { steps: 4 });
			during = await A.page.evaluate(() => ({ predicted: window.rigd.predicted(), hand: window.rigd.worldOf('hand'), arm: window.rigd.worldOf('arm') }));
		} finally {
			process.kill(server.rigdPid, 'SIGCONT');
		}
		await A.page.mouse.up();
		assert.deepEqual([...during.predicted].sort(), ['arm', 'hand'], 'the dragged node and its subtree are predicted');
		assert.ok(maxDiff(during.hand, worldOfTree(before, 'hand')) > 0.01, 'the hand followed the pointer before the server answered');
		// The hand keeps its place relative to the arm.
		const rel = (w, p) => [0, 1, 2].map((i) => w[12 + i] - p[12 + i]);
		assert.ok(maxDiff(rel(during.hand, during.arm), rel(worldOfTree(before, 'hand'), worldOfTree(before, 'arm'))) < 1e-9);
		await poll(() => A.page.evaluate(() => window.rigd.predicted().length === 0), { what: 'the prediction replaced by the server\'s matrices' });
		const after = await rigd.tree(server, 'demo');
		assert.ok(maxDiff(after.nodes.find((n) => n.id === 'arm').t, t0) > 0.01, 'the server moved the arm');
		for (const n of after.nodes) {
			const shown = await A.page.evaluate((id) => window.rigd.worldOf(id), n.id);
			assert.ok(maxDiff(shown, n.world) <= 1e-9, `${n.id} is drawn at the server's matrix`);
		}
		await A.page.locator('body').press('Control+z');
		await poll(async () => maxDiff((await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'arm').t, t0) === 0, { what: 'the drag undone' });
	});

	it('flashes the nodes an update recomputed', async () => {
		await B.page.waitForFunction(() => window.rigd.flashing().length === 0);
		const seq = await B.page.evaluate(() => window.rigd.seq());
		await rigd.postEdit(server, 'demo', { ops: [{ op: 'set', id: 'arm', euler: [0, 0, 50] }] });
		const { value } = await poll(async () => {
			const [s, f] = await B.page.evaluate(() => [window.rigd.seq(), window.rigd.flashing()]);
			return s > seq && f;
		}, { timeout: 10000, what: 'the update on page B' });
		assert.deepEqual([...value].sort(), ['arm', 'hand'], 'the bend recomputes the arm and the hand only');
	});

	it('undoes a whole slider drag with Ctrl+Z and redoes it with Ctrl+Shift+Z', async () => {
		// A's last gesture was the yaw drag (the bend came from HTTP).
		const dragged = (await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'base').euler[1];
		await A.page.locator('body').press('Control+z');
		await poll(async () => Math.abs((await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'base').euler[1] - 30) < 1e-9, { what: 'the yaw back at 30' });
		await A.page.locator('body').press('Control+Shift+z');
		await poll(async () => Math.abs((await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'base').euler[1] - dragged) < 1e-9, { what: 'the yaw redone' });
		// Pressed back to back, before the server has answered the undo, the
		// redo still happens, after it.
		const seq0 = (await rigd.tree(server, 'demo')).seq;
		process.kill(server.rigdPid, 'SIGSTOP');
		try {
			await A.page.locator('body').press('Control+z');
			await A.page.locator('body').press('Control+Shift+z');
		} finally {
			process.kill(server.rigdPid, 'SIGCONT');
		}
		const marks = async () => {
			const res = await rigd.request(server, 'GET', `/api/scenes/demo/log?from=${seq0 + 1}`);
			return res.text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((b) => (b.undo ? 'undo' : b.redo ? 'redo' : 'edit'));
		};
		const count = (m, k) => m.filter((x) => x === k).length;
		// The gesture is one or more batches: as many redos as undos.
		const { value } = await poll(async () => {
			const m = await marks();
			return count(m, 'undo') > 0 && count(m, 'redo') === count(m, 'undo') && m;
		}, { what: 'the whole gesture undone, then redone, in the log' });
		assert.deepEqual(value, [...value.filter((k) => k === 'undo'), ...value.filter((k) => k === 'redo')], 'every undo before every redo');
		assert.ok(Math.abs((await rigd.tree(server, 'demo')).nodes.find((n) => n.id === 'base').euler[1] - dragged) < 1e-9, 'the yaw is the dragged one again');
	});

	it('reparents by drag and drop with keep-world; page B shows the same tree', async () => {
		const before = await rigd.tree(server, 'demo');
		assert.equal(await A.page.isChecked('#keep-world'), true);
		const target = A.page.locator('.tree-row[data-id="base"]');
		const box = await target.boundingBox();
		await A.page.dragAndDrop('.tree-row[data-id="hand"]', '.tree-row[data-id="base"]', { targetPosition: { x: box.width / 2, y: box.height / 2 } });
		await poll(async () => parentOf(await rigd.tree(server, 'demo'), 'hand') === 'base', { what: 'hand under base on the server' });
		const tree = await rigd.tree(server, 'demo');
		assert.ok(maxDiff(worldOfTree(tree, 'hand'), worldOfTree(before, 'hand')) < 1e-12, 'keep-world kept the hand where it was');
		const shape = shapeOf(tree);
		assert.deepEqual(shape, [['base', [['arm', []], ['hand', []]]]]);
		for (const { page } of [A, B]) {
			await poll(async () => JSON.stringify(await page.evaluate(() => window.rigd.tree())) === JSON.stringify(shape), { what: 'the new tree in the page' });
			assert.ok(maxDiff(await page.evaluate(() => window.rigd.worldOf('hand')), worldOfTree(tree, 'hand')) <= 1e-9);
		}
		// Page B's hierarchy panel shows hand as base's child (depth 2).
		assert.equal(await B.page.getAttribute('.tree-row[data-id="hand"]', 'aria-level'), '2');
		// Dropping on the lower edge of a row places the node after it.
		const handRow = await A.page.locator('.tree-row[data-id="hand"]').boundingBox();
		await A.page.dragAndDrop('.tree-row[data-id="arm"]', '.tree-row[data-id="hand"]', { targetPosition: { x: handRow.width / 2, y: handRow.height * 0.85 } });
		const reordered = [['base', [['hand', []], ['arm', []]]]];
		await poll(async () => JSON.stringify(shapeOf(await rigd.tree(server, 'demo'))) === JSON.stringify(reordered), { what: 'arm after hand' });
		await poll(async () => JSON.stringify(await B.page.evaluate(() => window.rigd.tree())) === JSON.stringify(reordered), { what: 'the order on page B' });
		// And back before it (upper edge), so later tests see the same rig.
		await A.page.dragAndDrop('.tree-row[data-id="arm"]', '.tree-row[data-id="hand"]', { targetPosition: { x: handRow.width / 2, y: handRow.height * 0.15 } });
		await poll(async () => JSON.stringify(shapeOf(await rigd.tree(server, 'demo'))) === JSON.stringify(shape), { what: 'arm before hand again' });
	});

	it('the timeline shows an earlier seq, read-only, and returns to live', async () => {
		const live = await rigd.tree(server, 'demo');
		const at1 = await rigd.tree(server, 'demo', 1);
		const slider = B.page.locator('.timeline-slider');
		await slider.focus();
		await slider.press('Home');
		await slider.press('ArrowRight');
		await B.page.waitForFunction(() => window.rigd.seq() === 1);
		assert.deepEqual(await B.page.evaluate(() => window.rigd.tree()), shapeOf(at1));
		for (const n of at1.nodes) {
			assert.equal(maxDiff(await B.page.evaluate((id) => window.rigd.worldOf(id), n.id), n.world), 0, `${n.id} at seq 1`);
		}
		assert.equal(await B.page.evaluate(() => window.rigd.editable()), false);
		assert.match(await B.page.textContent('.banner'), /seq 1 of \d+ \(read-only\)/);
		await B.page.click('button.live');
		await B.page.waitForFunction((s) => window.rigd.seq() === s, live.seq);
		assert.deepEqual(await B.page.evaluate(() => window.rigd.tree()), shapeOf(live));
		assert.equal(await B.page.evaluate(() => window.rigd.editable()), true);
		// Replay from seq 1 as fast as the server answers: every seq is shown
		// in order and the view ends live.
		await slider.focus();
		await slider.press('Home');
		await slider.press('ArrowRight');
		await B.page.waitForFunction(() => window.rigd.seq() === 1);
		await B.page.evaluate(() => {
			window.__seen = [];
			const tick = () => {
				const s = window.rigd.seq();
				if (window.__seen.at(-1) !== s) window.__seen.push(s);
				if (!document.querySelector('button.live.on')) requestAnimationFrame(tick);
			};
			tick();
		});
		await B.page.selectOption('select[aria-label="Replay speed"]', 'max');
		await B.page.click('button.play');
		await B.page.waitForSelector('button.live.on', { timeout: 15000 });
		const seen = await B.page.evaluate(() => window.__seen);
		assert.equal(seen[0], 1);
		assert.equal(seen.at(-1), live.seq);
		assert.ok(seen.every((s, i) => i === 0 || s > seen[i - 1]), `seqs in order: ${seen}`);
		assert.ok(seen.length >= 3, `the replay showed intermediate seqs: ${seen}`);
	});

	it('filters the hierarchy by search, keeping the path to each match', async () => {
		await B.page.fill('.panel-tools .search', 'HAN');
		await B.page.waitForFunction(() => document.querySelectorAll('.tree-row').length === 2);
		assert.deepEqual(await B.page.locator('.tree-row').evaluateAll((rows) => rows.map((r) => [r.dataset.id, r.classList.contains('match')])), [
			['base', false],
			['hand', true],
		]);
		await B.page.press('.panel-tools .search', 'Enter');
		assert.equal(await B.page.evaluate(() => window.rigd.selection()), 'hand');
		await B.page.press('.panel-tools .search', 'Escape');
		await B.page.waitForFunction(() => document.querySelectorAll('.tree-row').length === 3);
	});

	it('shows a refused edit next to the control that sent it', async () => {
		await A.page.click('.tree-row[data-id="base"]');
		await A.page.click('button[aria-label="Add node"]');
		await A.page.fill('.create-form input[type="text"]', 'arm');
		await A.page.click('.create-form button[type="submit"]');
		const msg = await A.page.locator('.create-form .field-error').textContent({ timeout: 5000 });
		await poll(async () => (await A.page.locator('.create-form .field-error').textContent()).length > 0, { what: 'the error text' });
		const text = await A.page.locator('.create-form .field-error').textContent();
		assert.match(text, /arm/, `the message names the id: '${text || msg}'`);
		// A typo in a number field is caught before it is sent.
		await A.page.fill('[data-field="t"] [data-axis="x"] input.num', '1,2.3');
		await A.page.press('[data-field="t"] [data-axis="x"] input.num', 'Enter');
		assert.match(await A.page.locator('.inspector-body .field-error:not([hidden])').first().textContent(), /not a number/);
		await A.page.click('.create-form button[type="button"]');
	});

	it('creates a camera node and looks through it: view = inverse of world', async () => {
		await A.page.click('.tree-row[data-id="hand"]');
		await A.page.click('button[aria-label="Add node"]');
		await A.page.fill('.create-form input[type="text"]', 'cam');
		await A.page.selectOption('.create-form select', 'camera');
		await A.page.click('.create-form button[type="submit"]');
		await poll(async () => parentOf(await rigd.tree(server, 'demo'), 'cam') === 'hand', { what: 'the camera node' });
		await rigd.postEdit(server, 'demo', { ops: [{ op: 'set', id: 'cam', t: [0, 0.3, 0] }] });
		const tree = await rigd.tree(server, 'demo');
		await A.page.waitForFunction((s) => window.rigd.seq() >= s, tree.seq);
		await A.page.click('.tree-row[data-id="cam"]');
		await A.page.click('button:has-text("Look through")');
		const view = await A.page.evaluate(() => window.rigd.viewMatrix());
		const W = worldOfTree(tree, 'cam');
		// V * W = I.
		for (let c = 0; c < 4; c++) {
			for (let r = 0; r < 4; r++) {
				let sum = 0;
				for (let k = 0; k < 4; k++) sum += view[k * 4 + r] * W[c * 4 + k];
				assert.ok(Math.abs(sum - (r === c ? 1 : 0)) < 1e-9, `(V W)[${r}][${c}] = ${sum}`);
			}
		}
		assert.match(await A.page.textContent('.banner'), /Looking through cam/);
		await A.page.keyboard.press('Escape');
		assert.equal((await A.page.evaluate(() => window.rigd.drawInfo())).lookingThrough, null);
	});

	it('warns of inherited shear, and says why keep-world cannot move such a node', async () => {
		await rigd.postEdit(server, 'demo', {
			ops: [
				{ op: 'create', id: 'stretch', t: [1.5, 0.5, 0], s: [2, 1, 1] },
				{ op: 'create', id: 'sheared', parent: 'stretch', euler: [0, 0, 45], bounds: { min: [-0.1, -0.1, -0.1], max: [0.1, 0.1, 0.1] } },
			],
		});
		await A.page.waitForSelector('.tree-row[data-id="sheared"]');
		await A.page.click('.tree-row[data-id="sheared"]');
		const warning = A.page.locator('.inspector-body .warning');
		await warning.waitFor({ state: 'visible' });
		assert.match(await warning.textContent(), /x and y axes are 126\.9° apart/);
		assert.equal(await A.page.isChecked('#keep-world'), true);
		await A.page.dragAndDrop('.tree-row[data-id="sheared"]', '.tree-row[data-id="base"]');
		const message = A.page.locator('.hierarchy-panel .panel-message.error');
		await message.waitFor({ state: 'visible' });
		assert.match(await message.textContent(), /^Cannot move sheared under base: .+/);
		assert.equal(parentOf(await rigd.tree(server, 'demo'), 'sheared'), 'stretch', 'nothing moved');
		// The same move without keep-world is allowed (the node takes its
		// locals with it).
		await A.page.uncheck('#keep-world');
		await A.page.dragAndDrop('.tree-row[data-id="sheared"]', '.tree-row[data-id="base"]');
		await poll(async () => parentOf(await rigd.tree(server, 'demo'), 'sheared') === 'base', { what: 'sheared under base' });
		await A.page.check('#keep-world');
		await rigd.postEdit(server, 'demo', { ops: [{ op: 'delete', id: 'stretch' }, { op: 'delete', id: 'sheared' }] });
		await B.page.waitForSelector('.tree-row[data-id="sheared"]', { state: 'detached' });
	});

	it('deletes a node and brings it back with undo', async () => {
		await A.page.click('.tree-row[data-id="cam"]');
		await A.page.click('button[aria-label="Delete node"]');
		await poll(async () => !(await rigd.tree(server, 'demo')).nodes.some((n) => n.id === 'cam'), { what: 'cam deleted' });
		await B.page.waitForSelector('.tree-row[data-id="cam"]', { state: 'detached' });
		await A.page.click('button[aria-label="Undo"]');
		await poll(async () => (await rigd.tree(server, 'demo')).nodes.some((n) => n.id === 'cam'), { what: 'cam restored' });
		await B.page.waitForSelector('.tree-row[data-id="cam"]');
	});

	it('reconnects after a server restart and resynchronises without a reload', async () => {
		const port = server.port;
		const db = server.db;
		const marker = await A.page.evaluate(() => (window.__noReload = Math.random()));
		A.outage = B.outage = true;
		assert.equal(await server.stop(), 0);
		await A.page.waitForFunction(() => window.rigd.connection() !== 'open', null, { timeout: 5000 });
		assert.equal(await A.page.evaluate(() => window.rigd.editable()), false);
		assert.match(await A.page.textContent('.conn-pill'), /offline/);
		// Edit the database while the viewers are away, then come back on the
		// same address.
		server = await rigd.startRigd({ ...SERVER_ARGS, db, listen: `127.0.0.1:${port}` });
		await rigd.postEdit(server, 'demo', { ops: [{ op: 'set', id: 'base', euler: [0, -60, 0] }] });
		const tree = await rigd.tree(server, 'demo');
		for (const { page } of [A, B]) {
			await page.waitForFunction((s) => window.rigd.connection() === 'open' && window.rigd.seq() === s, tree.seq, { timeout: 15000 });
			assert.ok(maxDiff(await page.evaluate(() => window.rigd.worldOf('hand')), worldOfTree(tree, 'hand')) <= 1e-9);
		}
		A.outage = B.outage = false;
		assert.equal(await A.page.evaluate(() => window.__noReload), marker, 'the page was not reloaded');
		assert.equal(await A.page.evaluate(() => window.rigd.editable()), true);
	});

	it('logged no console errors and showed no unexpected error notices on either page', async () => {
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
		for (const { page } of [A, B]) assert.deepEqual(await page.locator('.toast').allTextContents(), []);
	});
});

describe('viewer: the scene list', () => {
	let server;
	before(async () => {
		server = await rigd.startRigd(SERVER_ARGS);
	});
	after(async () => {
		if (server) await server.stop();
	});

	it('lists scenes, creates one and opens it by its URL', async () => {
		const { page, problems } = await openPage(browser, `${server.url}/`, { waitLive: false });
		await page.waitForSelector('table.scenes tr[data-scene="demo"]');
		await page.fill('.create-scene input', 'shared-rig');
		await page.click('.create-scene button');
		await page.waitForFunction(() => location.hash === '#/scene/shared-rig' && window.rigd.phase() === 'live');
		assert.deepEqual(await page.evaluate(() => window.rigd.tree()), []);
		// A scene that does not exist says so.
		await page.goto(`${server.url}/#/scene/nope`);
		await page.waitForSelector('.loading .error-text');
		assert.match(await page.textContent('.loading .error-text'), /nope/);
		await page.goto(`${server.url}/#/`);
		await page.waitForSelector('table.scenes tr[data-scene="shared-rig"]');
		assert.deepEqual(problems, []);
		await page.context().close();
	});

	it('draws with GPU instancing when asked, mirrored nodes in their own batch', async () => {
		// Mirror the whole demo rig: every world determinant turns negative.
		await rigd.postEdit(server, 'demo', { ops: [{ op: 'set', id: 'base', s: [-1, 1, 1] }] });
		const { page, problems, context } = await openPage(browser, `${server.url}/?draw=instanced#/scene/demo`);
		const info = await page.evaluate(() => window.rigd.drawInfo());
		assert.equal(info.mode, 'instanced');
		assert.deepEqual(info.batches, { 'mesh|box|m': 3 });
		const tree = await rigd.tree(server, 'demo');
		for (const n of tree.nodes) assert.deepEqual(await page.evaluate((id) => window.rigd.worldOf(id), n.id), n.world);
		const at = await page.evaluate(() => window.rigd.screenOf('hand'));
		await page.mouse.click(at.x, at.y);
		assert.equal(await page.evaluate(() => window.rigd.selection()), 'hand');
		assert.match(await page.textContent('.det-negative'), /mirrored/);
		// Unmirror from another client: the nodes move back to the plain batch.
		await rigd.postEdit(server, 'demo', { ops: [{ op: 'set', id: 'base', s: [1, 1, 1] }] });
		await page.waitForFunction(() => JSON.stringify(window.rigd.drawInfo().batches) === JSON.stringify({ 'mesh|box|m': 0, 'mesh|box|': 3 }));
		await page.screenshot({ path: path.join(artifacts(), 'demo-instanced.png') });
		assert.deepEqual(problems, []);
		await context.close();
	});
});
