/*
 * bench_touch.mjs: frame rate of a 2,000-node 3D scene on a phone-sized,
 * touch-emulated page while a finger orbits the camera, with Chromium's
 * CPU throttled 4x (CDP Emulation.setCPUThrottlingRate), beside the same
 * page unthrottled, each with the viewer's adaptive quality (the default)
 * and with ?quality=full.
 *
 *     cmake --build build && node tests/web/bench_touch.mjs [SECONDS]
 *
 * Not a test: it prints figures and asserts nothing. The finger goes down
 * as a real touch (CDP Input.dispatchTouchEvent); its moves are then
 * dispatched in the page, one pointermove of that touch's pointer per
 * animation frame (a CDP round trip takes longer than a frame, so moves
 * sent from here would pace the frames, not the drawing). A frame time is
 * the interval between two of those requestAnimationFrame callbacks (the
 * viewport draws in the same frames, so a slow frame delays the next);
 * fps is 1000 / the median interval. "drawn" is how many frames the
 * viewport drew, "moving" how many of them at moving quality, "cost" the
 * median of its frame costs (docs/viewer-touch.md, web/app/README.md).
 * WebGL runs on SwiftShader in the GPU process, which the throttling does
 * not slow: it models a slow main thread, not a slow GPU.
 */
import { launch, rigd } from './lib/browser.mjs';

const SECONDS = Number(process.argv[2] || 3);
const NODES = 2000;

/* Forty chains of fifty boxes, ten chains a row. */
function sceneOps() {
	const ops = [];
	const bone = { min: [-0.03, 0, -0.03], max: [0.03, 0.09, 0.03] };
	for (let c = 0; ops.length < NODES; c++) {
		let parent = null;
		for (let i = 0; i < 50 && ops.length < NODES; i++) {
			const id = `c${c}_${i}`;
			const op = { op: 'create', id, bounds: bone, t: i === 0 ? [(c % 10) * 0.6 - 3, 0, Math.floor(c / 10) * 0.6 - 1.2] : [0, 0.1, 0], euler: i === 0 ? [0, c * 9, 0] : [4, 0, 2] };
			if (parent) op.parent = parent;
			ops.push(op);
			parent = id;
		}
	}
	return ops;
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function measure(browser, server, { rate, quality }) {
	const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 1 });
	const page = await context.newPage();
	const query = quality === 'full' ? '?quality=full' : '';
	await page.goto(`${server.url}/${query}#/scene/big`);
	await page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live' && window.rigd.stats().frames > 0, null, { timeout: 60000 });
	await pause(500);
	const cdp = await context.newCDPSession(page);
	await cdp.send('Emulation.setCPUThrottlingRate', { rate });
	const box = await page.locator('canvas.viewport-canvas').boundingBox();
	const cx = box.x + box.width / 2;
	const cy = box.y + box.height * 0.6;
	// Start on empty space low in the view, so the finger orbits (a tap
	// there would select nothing; nothing is selected, so no gizmo).
	const touch = (type, points) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id })) });
	await page.evaluate(() => {
		window.__bench = { pointer: null };
		document.querySelector('canvas.viewport-canvas').addEventListener('pointerdown', (e) => (window.__bench.pointer = e.pointerId), { once: true });
	});
	await touch('touchStart', [[cx + 110, cy]]);
	await page.evaluate(() => window.rigd.resetStats());
	const times = await page.evaluate(({ cx, cy, ms }) => new Promise((resolve) => {
		const canvas = document.querySelector('canvas.viewport-canvas');
		const times = [];
		let k = 0;
		const step = (t) => {
			times.push(t);
			k++;
			const a = k * 0.05;
			canvas.dispatchEvent(new PointerEvent('pointermove', { pointerId: window.__bench.pointer, pointerType: 'touch', isPrimary: true, bubbles: true, clientX: cx + 110 * Math.cos(a), clientY: cy + 40 * Math.sin(a) }));
			if (t - times[0] < ms) requestAnimationFrame(step);
			else resolve(times);
		};
		requestAnimationFrame(step);
	}), { cx, cy, ms: SECONDS * 1000 });
	await touch('touchEnd', []);
	const stats = await page.evaluate(() => window.rigd.stats());
	const info = await page.evaluate(() => window.rigd.drawInfo());
	await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
	await context.close();
	const intervals = times.slice(1).map((t, i) => t - times[i]).slice(2); // the first frames settle
	return { fps: 1000 / median(intervals), p90: pct(intervals, 0.9), median: median(intervals), drawn: stats.frames, moving: stats.movingFrames, cost: median(stats.costMs), script: median(stats.renderMs), mode: info.mode };
}

const server = await rigd.startRigd({ args: ['--sync', 'normal'] });
const browser = await launch();
try {
	let r = await rigd.post(server, '/api/scenes', { name: 'big' });
	if (r.status !== 201) throw new Error(r.text);
	const ops = sceneOps();
	for (let i = 0; i < ops.length; i += 1000) {
		r = await rigd.post(server, '/api/scenes/big/edits', { ops: ops.slice(i, i + 1000) });
		if (r.status !== 200) throw new Error(r.text);
	}
	console.log(`${NODES} nodes, 390 x 844 touch page, one finger orbiting for ${SECONDS} s`);
	for (const quality of ['auto', 'full']) {
		for (const rate of [1, 4]) {
			const m = await measure(browser, server, { rate, quality });
			console.log(`cpu ${rate}x  quality=${quality.padEnd(4)}  ${m.fps.toFixed(1).padStart(5)} fps (median frame ${m.median.toFixed(1)} ms, p90 ${m.p90.toFixed(1)} ms)  drawn ${m.drawn}, at moving quality ${m.moving}, cost ${m.cost.toFixed(1)} ms (script ${m.script.toFixed(1)} ms)  [${m.mode}]`);
		}
	}
} finally {
	await browser.close();
	await server.stop();
}
