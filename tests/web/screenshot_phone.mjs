/*
 * screenshot_phone.mjs: takes docs/screenshot-phone.png, the README's
 * picture of the viewer on a phone: the seeded character demo2d on a fresh
 * rigd in a 390 x 844 touch page (hasTouch, isMobile) of Debian's Chromium,
 * one arm raised and its forearm selected by a tap, the viewport filling
 * the screen above the panel bar and the timeline.
 *
 *     cmake --build build && node tests/web/screenshot_phone.mjs [OUT.png]
 *
 * Not a test: it only makes the picture (and fails if the scene does not
 * draw or the tap selects nothing).
 */
import path from 'node:path';
import { SOURCE_DIR, launch, rigd } from './lib/browser.mjs';

const out = process.argv[2] || path.join(SOURCE_DIR, 'docs', 'screenshot-phone.png');
const server = await rigd.startRigd({ args: ['--sync', 'normal', '--demo2d', 'on'] });
const browser = await launch();
try {
	const ids = (await rigd.tree(server, 'demo2d')).nodes.map((n) => n.id);
	const upper = ids.find((id) => /upper.*(r|right)/i.test(id)) || ids.find((id) => /upper|arm/i.test(id));
	const fore = ids.find((id) => /fore.*(r|right)/i.test(id)) || ids.find((id) => /fore/i.test(id));
	const ops = [];
	if (upper) ops.push({ op: 'rotate', id: upper, angle: 35 });
	if (fore) ops.push({ op: 'rotate', id: fore, angle: 40 });
	if (ops.length) await rigd.post(server, '/api/scenes/demo2d/edits', { ops });
	const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
	await context.addInitScript(() => localStorage.setItem('rigd.name', 'phone'));
	const page = await context.newPage();
	await page.goto(`${server.url}/#/scene/demo2d`);
	await page.waitForFunction(() => {
		const v = window.rigd && window.rigd.phase() === 'live' && window.rigd.view2d();
		return v && Object.keys(v.assets).length && Object.values(v.assets).every((s) => s === 'ready') && Object.keys(v.transforms).length;
	}, null, { timeout: 20000 });
	await page.waitForTimeout(300);
	if (fore) {
		const at = await page.evaluate((id) => window.rigd.jointOnPage(id), fore);
		await page.touchscreen.tap(at.x, at.y);
		await page.waitForFunction((id) => window.rigd.selection() === id, fore, { timeout: 5000 });
	}
	await page.evaluate(() => document.activeElement && document.activeElement.blur());
	await page.waitForTimeout(300);
	await page.screenshot({ path: out });
	console.log(`wrote ${out}`);
	await context.close();
} finally {
	await browser.close();
	await server.stop();
}
