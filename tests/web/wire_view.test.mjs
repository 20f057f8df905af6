/*
 * The viewer's frames in the browser: by default it subscribes with binary
 * float32 frames and draws every node with the server's matrix rounded to
 * float32, before and after edits (a set, a create, a delete whose handle
 * the next create reuses); ?format=f64 draws the server's doubles bit for
 * bit, ?format=json too, over JSON text frames.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch, openPage, poll, rigd } from './lib/browser.mjs';

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

/* The first node whose drawn matrix differs from the server's (rounded to
 * float32 unless 'exact'), or null. */
async function firstDifference(page, exact) {
	const t = (await rigd.get(server, '/api/scenes/demo')).json;
	await poll(async () => (await page.evaluate(() => window.rigd.liveSeq())) >= t.seq, { what: `the viewer at seq ${t.seq}` });
	for (const n of t.nodes) {
		const drawn = await page.evaluate((id) => window.rigd.worldOf(id), n.id);
		if (!drawn) return `${n.id}: not drawn`;
		for (let i = 0; i < 16; i++) {
			const want = exact ? n.world[i] : Math.fround(n.world[i]);
			if (!Object.is(drawn[i] + 0, want + 0)) return `${n.id}[${i}]: ${drawn[i]} instead of ${want}`;
		}
	}
	return null;
}

async function edits(page, exact) {
	const steps = [
		{ ops: [{ op: 'set', id: 'arm', euler: [0, 0, 33.3] }] },
		{ ops: [{ op: 'create', id: 'wire_extra', parent: 'arm', t: [0.1, 0.2, 0.3], euler: [10, 20, 30] }] },
		{ ops: [{ op: 'delete', id: 'wire_extra' }, { op: 'create', id: 'wire_other', parent: 'base', t: [1 / 3, 0, 0] }] },
		{ ops: [{ op: 'delete', id: 'wire_other' }, { op: 'set', id: 'base', euler: [0, 12.5, 0] }] },
	];
	assert.equal(await firstDifference(page, exact), null, 'the snapshot');
	for (const [k, batch] of steps.entries()) {
		const r = await rigd.postEdit(server, 'demo', batch);
		assert.equal(r.status, 200, r.text);
		assert.equal(await firstDifference(page, exact), null, `edit ${k}`);
	}
}

describe('viewer: binary frames', () => {
	it('subscribes with float32 by default and draws the server\'s matrices rounded to float32', async () => {
		const P = await openPage(browser, `${server.url}/#/scene/demo`, { format: null });
		assert.equal(await P.page.evaluate(() => window.rigd.format()), 'f32');
		await edits(P.page, false);
		assert.deepEqual(P.problems, []);
		await P.context.close();
	});

	it('?format=f64 draws the server\'s doubles bit for bit; ?format=json as well', async () => {
		for (const format of ['f64', 'json']) {
			const P = await openPage(browser, `${server.url}/?format=${format}#/scene/demo`, { format: null });
			assert.equal(await P.page.evaluate(() => window.rigd.format()), format);
			await edits(P.page, true);
			assert.deepEqual(P.problems, []);
			await P.context.close();
		}
	});
});
