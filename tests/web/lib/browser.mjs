/*
 * browser.mjs: Debian's Chromium, driven by playwright-core, for the viewer
 * tests. Headless with software GL; never downloads a browser.
 *
 * openPage() records every console error and uncaught page error so a test
 * can assert there were none; artifacts() is where screenshots go
 * (tests/artifacts/, ignored by git).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const SOURCE_DIR = process.env.RIGD_SOURCE_DIR || path.resolve(here, '..', '..', '..');
const webRequire = createRequire(path.join(SOURCE_DIR, 'web', 'package.json'));
const { chromium } = webRequire('playwright-core');
const require = createRequire(import.meta.url);
/* The end-to-end helpers (start rigd on a free port, HTTP calls). */
export const rigd = require('../../lib/rigd.js');

export const CHROMIUM = process.env.RIGD_CHROMIUM || '/usr/bin/chromium';
const ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	// Keep timers and rAF running in pages that are not "visible".
	'--disable-background-timer-throttling',
	'--disable-renderer-backgrounding',
	'--disable-backgrounding-occluded-windows',
];

export async function launch() {
	return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

/*
 * Opens 'url' in a fresh context (own storage) and waits until the scene
 * view is live. The viewer subscribes with binary float64 frames ('format',
 * stored as its rigd.format setting; null leaves its float32 default), so
 * the matrices it draws are the server's doubles bit for bit. Returns {page, problems, tolerated, outage}: 'problems'
 * collects console errors and page errors as they happen; set 'outage'
 * while the server is down on purpose, and the browser's own reports of
 * failed websocket connections go to 'tolerated' instead.
 */
export async function openPage(browser, url, { width = 1120, height = 700, name = null, waitLive = true, format = 'f64' } = {}) {
	const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
	if (name) await context.addInitScript((n) => localStorage.setItem('rigd.name', n), name);
	if (format) await context.addInitScript((f) => localStorage.setItem('rigd.format', f), format);
	const page = await context.newPage();
	const problems = [];
	const tolerated = [];
	const handle = { page, problems, tolerated, context, outage: false };
	page.on('console', (m) => {
		if (m.type() !== 'error') return;
		// While a test has taken the server down on purpose, the browser
		// itself logs each failed websocket attempt; those are expected.
		if (handle.outage && /^WebSocket connection to '.*' failed/.test(m.text())) tolerated.push(m.text());
		else problems.push(`console error: ${m.text()}`);
	});
	page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
	await page.goto(url);
	if (waitLive) await page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live', null, { timeout: 20000 });
	return handle;
}

/* The directory for screenshots, created on demand. */
export function artifacts() {
	const dir = path.join(SOURCE_DIR, 'tests', 'artifacts');
	fs.mkdirSync(dir, { recursive: true });
	return dir;
}

/* Drags a range input's thumb from its current value to 'fraction' of its
 * track with the mouse, in steps, as a person would. */
export async function dragSlider(page, selector, fraction, steps = 12) {
	const slider = page.locator(selector);
	await slider.scrollIntoViewIfNeeded();
	const box = await slider.boundingBox();
	const { min, max, value } = await slider.evaluate((s) => ({ min: Number(s.min), max: Number(s.max), value: Number(s.value) }));
	const thumb = 7; // px: half the thumb, the track is inset by it
	const xOf = (f) => box.x + thumb + f * (box.width - 2 * thumb);
	const y = box.y + box.height / 2;
	await page.mouse.move(xOf((value - min) / (max - min)), y);
	await page.mouse.down();
	await page.mouse.move(xOf(fraction), y, { steps });
	await page.mouse.up();
}

/* Largest absolute difference between two number lists (Infinity when the
 * lengths differ or either is missing). */
export function maxDiff(a, b) {
	if (!a || !b || a.length !== b.length) return Infinity;
	let worst = 0;
	for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
	return worst;
}

/* Polls fn() until it returns a truthy value or 'timeout' ms pass; returns
 * the value and the time it took. */
export async function poll(fn, { timeout = 5000, every = 10, what = 'a condition' } = {}) {
	const t0 = performance.now();
	for (;;) {
		const v = await fn();
		if (v) return { value: v, ms: performance.now() - t0 };
		if (performance.now() - t0 > timeout) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
		await new Promise((r) => setTimeout(r, every));
	}
}

/* The intervals between page 'page''s animation frames over 'ms' ms. */
export function frameIntervals(page, ms) {
	return page.evaluate(
		(span) =>
			new Promise((resolve) => {
				const out = [];
				let last = null;
				const t0 = performance.now();
				const frame = (now) => {
					if (last !== null) out.push(now - last);
					last = now;
					if (now - t0 < span) requestAnimationFrame(frame);
					else resolve(out);
				};
				requestAnimationFrame(frame);
			}),
		ms,
	);
}
