/*
 * The viewer against a rigd that wants a token: the page says a
 * token is needed, the user types one into the token field, the demo rig
 * appears and a slider edit is acknowledged. The token travels as the first
 * websocket message and as "Authorization: Bearer", never in a URL; it
 * survives a reload of the tab. The only console errors are the browser's
 * own reports of the expected 401 answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dragSlider, launch, maxDiff, openPage, poll, rigd } from './lib/browser.mjs';

const EDITOR = 'editor-demo-browser-0123456789';
const VIEWER = 'viewer-demo-browser-0123456789';
const bearer = (t) => ({ authorization: `Bearer ${t}` });
/* What Chromium logs for each fetch answered 401; nothing else is expected. */
const EXPECTED_401 = 'Failed to load resource: the server responded with a status of 401 (Unauthorized)';

async function tree(server) {
	const r = await rigd.get(server, '/api/scenes/demo', bearer(EDITOR));
	assert.equal(r.status, 200);
	return r.json;
}

let browser;
before(async () => {
	browser = await launch();
});
after(async () => {
	if (browser) await browser.close();
});

describe('viewer: a server with tokens', () => {
	let server;
	let P;
	const requests = [];
	const frames = [];

	before(async () => {
		server = await rigd.startRigd({ args: ['--sync', 'normal', '--token', `editor:demo:${EDITOR}`, '--token', `viewer:demo:${VIEWER}`] });
	});
	after(async () => {
		if (P) await P.context.close();
		if (server) await server.stop();
	});

	it('says a token is needed, takes one, shows the rig', async () => {
		P = await openPage(browser, `${server.url}/#/`, { waitLive: false });
		const { page } = P;
		page.on('request', (r) => requests.push({ url: r.url(), auth: r.headers().authorization || null }));
		page.on('websocket', (ws) => {
			frames.push({ url: ws.url(), sent: [] });
			const mine = frames[frames.length - 1];
			ws.on('framesent', (f) => mine.sent.push(String(f.payload)));
		});
		// The scene list is refused (401): the token field opens and says why.
		await page.waitForSelector('.token-panel:not([hidden])', { timeout: 10000 });
		assert.match(await page.textContent('.token-reason'), /needs an access token/);
		// A wrong token first: refused, said so, nothing else changes.
		await page.fill('.token-input', 'not-the-token-0123456789');
		await page.press('.token-input', 'Enter');
		await poll(async () => /did not accept/.test(await page.textContent('.token-reason')), { what: 'the refusal of a wrong token' });
		assert.equal(await page.isVisible('.token-panel'), true);
		// The right one: the panel closes, the list shows demo.
		await page.fill('.token-input', EDITOR);
		await page.press('.token-input', 'Enter');
		await page.waitForSelector('.token-panel', { state: 'hidden', timeout: 10000 });
		await page.waitForSelector('.scene-list a[href="#/scene/demo"]', { timeout: 10000 });
		assert.match(await page.textContent('.token-button'), /✓/);
		// Open demo: the rig appears with the server's matrices.
		await page.click('.scene-list a[href="#/scene/demo"]');
		await page.waitForFunction(() => window.rigd.phase() === 'live', null, { timeout: 20000 });
		const t = await tree(server);
		for (const n of t.nodes) {
			assert.equal(maxDiff(await page.evaluate((id) => window.rigd.worldOf(id), n.id), n.world), 0, n.id);
		}
	});

	it('edits with the slider, acknowledged', async () => {
		const { page } = P;
		const before = await tree(server);
		await page.click('.tree-row[data-id="base"]');
		await page.waitForSelector('.inspector-body:not([hidden]) [data-field="euler"]');
		await dragSlider(page, '[data-field="euler"] [data-axis="y"] input.slider', 0.75);
		await poll(
			async () => {
				const now = await tree(server);
				const seq = await page.evaluate(() => window.rigd.seq());
				return now.seq > before.seq && seq === now.seq;
			},
			{ timeout: 5000, what: 'the edit to be stored and shown' },
		);
		assert.equal(await page.evaluate(() => window.rigd.editable()), true);
		assert.equal(await page.locator('.inspector-body .field-error:not(:empty)').count(), 0, 'no error beside the slider');
		const yaw = (await tree(server)).nodes.find((n) => n.id === 'base').euler[1];
		assert.ok(Math.abs(yaw - 30) > 20, `the yaw moved (now ${yaw})`);
	});

	it('keeps the token for the tab: a reload goes live without asking', async () => {
		const { page } = P;
		await page.reload();
		await page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live', null, { timeout: 20000 });
		assert.equal(await page.isVisible('.token-panel'), false);
	});

	it('never puts the token in a URL; sends it first on every socket and as a Bearer header', async () => {
		for (const r of requests) assert.ok(!r.url.includes(EDITOR), `no token in ${r.url}`);
		assert.ok(!P.page.url().includes(EDITOR));
		const api = requests.filter((r) => new URL(r.url).pathname.startsWith('/api/'));
		assert.ok(api.some((r) => r.auth === `Bearer ${EDITOR}`), 'API calls carry the token');
		assert.ok(api.every((r) => r.auth === null || r.auth.startsWith('Bearer ')));
		// Every socket opened with the token in storage sent auth first.
		const withToken = frames.filter((f) => f.sent.some((m) => m.includes(EDITOR)));
		assert.ok(withToken.length >= 1, 'at least the socket after the reload');
		for (const f of withToken) {
			assert.ok(!f.url.includes(EDITOR));
			const first = JSON.parse(f.sent[0]);
			// The socket open before the token was typed sends it when it is typed.
			if (f === frames[0]) continue;
			assert.equal(first.type, 'auth');
			assert.equal(first.token, EDITOR);
		}
	});

	it('a viewer token: the edit is refused and the page says the token lacks the role', async () => {
		const { page } = P;
		await page.click('.token-button');
		await page.fill('.token-input', VIEWER);
		await page.press('.token-input', 'Enter');
		await page.waitForSelector('.token-panel', { state: 'hidden', timeout: 10000 });
		const before = await tree(server);
		await page.click('.tree-row[data-id="base"]');
		await dragSlider(page, '[data-field="euler"] [data-axis="y"] input.slider', 0.25, 4);
		await page.waitForSelector('.token-panel:not([hidden])', { timeout: 5000 });
		assert.match(await page.textContent('.token-reason'), /lacks the role/);
		assert.equal((await tree(server)).seq, before.seq, 'nothing was stored');
		// Back to the editor's token: editing works again on the same socket.
		await page.fill('.token-input', EDITOR);
		await page.press('.token-input', 'Enter');
		await page.waitForSelector('.token-panel', { state: 'hidden', timeout: 10000 });
		await dragSlider(page, '[data-field="euler"] [data-axis="y"] input.slider', 0.6, 4);
		await poll(async () => (await tree(server)).seq > before.seq, { timeout: 5000, what: 'the edit after upgrading' });
	});

	it('logs no console errors but the expected 401s', () => {
		const unexpected = P.problems.filter((p) => p !== `console error: ${EXPECTED_401}`);
		assert.deepEqual(unexpected, []);
		assert.ok(P.problems.length >= 1, 'the refused scene list was logged by the browser');
	});
});

describe('viewer: a server without tokens', () => {
	it('never asks for one and sends none', async () => {
		const server = await rigd.startRigd({ args: ['--sync', 'normal'] });
		const P = await openPage(browser, `${server.url}/#/scene/demo`);
		assert.equal(await P.page.isVisible('.token-panel'), false);
		assert.equal(await P.page.textContent('.token-button'), 'Token');
		assert.deepEqual(P.problems, []);
		await P.context.close();
		await server.stop();
	});
});
