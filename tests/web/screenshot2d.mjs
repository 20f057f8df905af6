/*
 * screenshot2d.mjs: takes docs/screenshot-2d.png, the README's picture of
 * the 2D viewer: the seeded character demo2d on a fresh rigd, one arm
 * raised, its forearm selected, two poses saved, in Debian's Chromium.
 *
 *     cmake --build build && node tests/web/screenshot2d.mjs [OUT.png]
 *
 * Not a test: it only makes the picture (and fails if the scene does not
 * draw).
 */
import path from 'node:path';
import { SOURCE_DIR, launch, openPage, rigd } from './lib/browser.mjs';

const out = process.argv[2] || path.join(SOURCE_DIR, 'docs', 'screenshot-2d.png');
const server = await rigd.startRigd({ args: ['--sync', 'normal', '--demo2d', 'on'] });
const browser = await launch();
try {
	const tree = await rigd.tree(server, 'demo2d');
	const ids = tree.nodes.map((n) => n.id);
	// Raise the arm nearest the viewer a little, so the picture shows bones
	// that are turned, through the same API a script would use.
	const upper = ids.find((id) => /upper.*(r|right)|r.*upper|arm.*r/i.test(id)) || ids.find((id) => /upper|arm/i.test(id));
	const fore = ids.find((id) => /fore.*(r|right)|r.*fore/i.test(id)) || ids.find((id) => /fore/i.test(id));
	const ops = [];
	if (upper) ops.push({ op: 'rotate', id: upper, angle: 35 });
	if (fore) ops.push({ op: 'rotate', id: fore, angle: 40 });
	// Two poses, so the pose panel has something to list and blend.
	await rigd.post(server, '/api/scenes/demo2d/edits', { ops: [{ op: 'pose_save', pose: 'rest' }] });
	if (ops.length) await rigd.post(server, '/api/scenes/demo2d/edits', { ops: [...ops, { op: 'pose_save', pose: 'reach' }] });
	const { page } = await openPage(browser, `${server.url}/#/scene/demo2d`, { width: 1280, height: 760 });
	await page.waitForFunction(() => {
		const v = window.rigd.view2d();
		return v && Object.keys(v.assets).length && Object.values(v.assets).every((s) => s === 'ready') && Object.keys(v.transforms).length;
	}, null, { timeout: 20000 });
	if (fore) await page.click(`.tree-row[data-id="${fore}"]`);
	await page.evaluate(() => document.activeElement && document.activeElement.blur());
	await page.waitForTimeout(300);
	await page.screenshot({ path: out });
	console.log(`wrote ${out}`);
} finally {
	await browser.close();
	await server.stop();
}
