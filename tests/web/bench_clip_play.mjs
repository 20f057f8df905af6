/*
 * bench_clip_play.mjs: the 2D viewer's frame rate while a clip plays on a
 * 100-bone atlas character (one region attachment per bone from a 512 x
 * 512 atlas page, 120 slots), in headless Chromium, with a second page
 * watching; beside the same page idle (what this machine's compositor
 * gives now) and beside the same play with the bones hidden.
 *
 *     cmake --build build && node tests/web/bench_clip_play.mjs [SECONDS] [--alone]
 *         [--no-atlas] [--profile] [--trace] [--web DIR]
 *
 * Not a test: it prints figures and asserts nothing. A frame time is the
 * interval between two requestAnimationFrame callbacks of page A, the page
 * that plays (its clip panel sends one clip op per frame of the clip, one
 * batch out at a time, and draws every update it receives); fps is 1000 /
 * the mean interval. "script" is the viewer's own time per drawn frame
 * (its frame stats), "updates" how many server updates page A drew.
 * --profile prints the functions that took the most of page A's main
 * thread (CDP Profiler) over the play; --trace the CPU time per frame of
 * its main thread, raster workers, paint and commit (a Chrome trace, which
 * itself slows the page); --web DIR serves the viewer from DIR (an earlier
 * checkout's web/, to measure it beside this one in the same sitting).
 */
import { frameIntervals, launch, openPage, rigd } from './lib/browser.mjs';
import { encodePng } from './lib/png.mjs';

const argv = process.argv.slice(2);
const SECONDS = Number(argv.find((a) => /^[0-9.]+$/.test(a)) || 3);
const PROFILE = argv.includes('--profile');
const TRACE = argv.includes('--trace');
const WATCH = !argv.includes('--alone');
const BONES = 100;
const SLOTS = 120;

/* A character of 'BONES' bones: a spine of 20 and four limbs of 20, each
 * bone turning 10 degrees and back over 2 s with a Bezier key, and a
 * region attachment per slot (the first 20 bones carry two slots). */
function character() {
	const bones = [{ name: 'root' }];
	for (let i = 1; i < BONES; i++) {
		const limb = Math.floor((i - 1) / 20);
		const first = (i - 1) % 20 === 0;
		const parent = first ? (limb === 0 ? 'root' : `b${10}`) : `b${i - 1}`;
		bones.push({ name: `b${i}`, parent, x: first ? 0 : 12, rotation: first ? limb * 72 : 2 });
	}
	const slots = [];
	const attachments = {};
	for (let s = 0; s < SLOTS; s++) {
		const bone = bones[s % BONES].name;
		const region = `r${s % 64}`;
		slots.push({ name: `s${s}`, bone, attachment: region });
		attachments[`s${s}`] = { [region]: { x: 6, y: 0, width: 14, height: 10, rotation: 0 } };
	}
	const timelines = {};
	for (const b of bones) {
		timelines[b.name] = {
			rotate: [{ value: 0, curve: [0.5, 0, 0.5, 10] }, { time: 1, value: 10, curve: [1.5, 10, 1.5, 0] }, { time: 2, value: 0 }],
			translate: [{ x: 0, y: 0 }, { time: 2, x: 1, y: 1 }],
		};
	}
	const skeleton = { skeleton: { spine: '4.2.00', images: './' }, bones, slots, skins: [{ name: 'default', attachments }], animations: { wave: { bones: timelines } } };
	// An 8 x 8 grid of 64 x 64 regions on one page, each its own colour.
	let atlas = 'hundred.png\nsize: 512, 512\nformat: RGBA8888\nfilter: Linear, Linear\npma: false\n';
	for (let r = 0; r < 64; r++) atlas += `r${r}\nbounds: ${(r % 8) * 64}, ${Math.floor(r / 8) * 64}, 64, 64\n`;
	const png = encodePng(512, 512, (x, y) => {
		const r = (x >> 6) + 8 * (y >> 6);
		return [(r * 37) & 255, (r * 91) & 255, (r * 53) & 255, 255];
	});
	return { skeleton, atlas, images: { 'hundred.png': Buffer.from(png).toString('base64') }, file: 'hundred.json' };
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

function line(label, iv, extra = '') {
	const m = mean(iv);
	console.log(
		`${label.padEnd(34)} ${(1000 / m).toFixed(1).padStart(5)} fps  mean ${m.toFixed(2)} ms  p95 ${rigd.percentile(iv, 95).toFixed(2)} ms  worst ${Math.max(...iv).toFixed(2)} ms  ` +
			`${iv.filter((x) => x > 25).length} of ${iv.length} frames over 25 ms${extra}`,
	);
}

/* Plays the clip on page A for SECONDS, returning its frame intervals and
 * what the clip panel and the view counted meanwhile. */
async function play(A, profiler, ms = SECONDS * 1000) {
	await A.page.getByRole('button', { name: 'Play clip' }).click();
	await pause(300);
	const s0 = await A.page.evaluate(() => ({ clips: window.rigd.clips(), view: window.rigd.stats() }));
	if (profiler) await profiler.send('Profiler.start');
	const iv = await frameIntervals(A.page, ms);
	const profile = profiler ? (await profiler.send('Profiler.stop')).profile : null;
	const s1 = await A.page.evaluate(() => ({ clips: window.rigd.clips(), view: window.rigd.stats() }));
	await A.page.getByRole('button', { name: 'Pause clip' }).click();
	return { iv, profile, sent: s1.clips.sent - s0.clips.sent, skipped: s1.clips.skipped - s0.clips.skipped, view0: s0.view, view1: s1.view };
}

/* The functions with the most self time in a CDP CPU profile. */
function topFunctions(profile, n = 15) {
	const dt = new Map();
	const times = profile.timeDeltas;
	for (let i = 0; i < profile.samples.length; i++) dt.set(profile.samples[i], (dt.get(profile.samples[i]) || 0) + (times[i] || 0));
	const byName = new Map();
	let total = 0;
	for (const node of profile.nodes) {
		const t = dt.get(node.id) || 0;
		total += t;
		const f = node.callFrame;
		const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
		byName.set(key, (byName.get(key) || 0) + t);
	}
	return [...byName.entries()]
		.sort((a, b) => b[1] - a[1])
		.slice(0, n)
		.map(([k, t]) => `  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`);
}

/* Runs 'fn' (a play); with --trace, under a Chrome trace of page A,
 * printing the CPU time per drawn frame of its main thread and of its
 * raster workers, and the longest trace events. */
async function traced(A, fn) {
	if (!TRACE) return fn();
	const browser = A.page.context().browser();
	await browser.startTracing(A.page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
	const out = await fn();
	const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
	const names = new Map();
	for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
	const sum = new Map();
	for (const e of events) {
		if (e.ph !== 'X' || !e.dur) continue;
		const key = `${names.get(`${e.pid}:${e.tid}`) || e.tid} (${e.pid}) ${e.name}`;
		sum.set(key, (sum.get(key) || 0) + e.dur);
	}
	const of = (re) => [...sum.entries()].filter(([k]) => re.test(k)).reduce((a, [, t]) => a + t, 0) / 1000;
	const frames = out.iv.length;
	console.log(`  per frame: main thread ${(of(/CrRendererMain .* RunTask$/) / frames).toFixed(2)} ms, raster ${(of(/ RasterTask$/) / frames).toFixed(2)} ms, paint ${(of(/CrRendererMain .* Paint$/) / frames).toFixed(2)} ms, commit ${(of(/CrRendererMain .* Commit$/) / frames).toFixed(2)} ms`);
	console.log([...sum.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, t]) => `  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`).join('\n'));
	return out;
}

const browser = await launch();
const webAt = argv.indexOf('--web');
const server = await rigd.startRigd({ args: ['--sync', 'normal'], web: webAt >= 0 ? argv[webAt + 1] : undefined });
try {
	const body = character();
	if (argv.includes('--no-atlas')) delete body.atlas, delete body.images;
	const r = await rigd.post(server, '/api/scenes/hundred/spine', body);
	if (r.status !== 200) throw new Error(`import: ${r.status} ${r.text}`);
	const A = await openPage(browser, `${server.url}/#/scene/hundred`, { name: 'alice' });
	const B = WATCH ? await openPage(browser, `${server.url}/#/scene/hundred`, { name: 'bob' }) : null;
	await A.page.waitForFunction(() => window.rigd.clips() && window.rigd.clips().clips.length > 0, null, { timeout: 10000 });
	await A.page.getByRole('button', { name: /^wave.*seconds$/ }).click();
	await pause(1000);
	const drawnRegions = await A.page.evaluate(() => document.querySelectorAll('svg.view2d g.layer image, svg.view2d g.layer use').length);
	console.log(`# ${BONES} bones, ${SLOTS} slots with atlas regions (${drawnRegions} image elements drawn), ${SECONDS} s each, load average ${(await import('node:os')).loadavg()[0].toFixed(2)}`);
	line('idle (the machine, for scale)', await frameIntervals(A.page, 1000));
	const profiler = PROFILE ? await A.context.newCDPSession(A.page) : null;
	if (profiler) await profiler.send('Profiler.enable');
	// A play of 2 s first, not counted: the figures are the steady state,
	// not the page's first seconds of JIT and image decoding.
	await play(A, null, 2000);
	const p = await traced(A, () => play(A, profiler));
	line('clip playing, bones shown', p.iv, `; ${p.sent} batches sent, ${p.skipped} frames skipped`);
	if (p.profile) console.log(topFunctions(p.profile).join('\n'));
	// The Bones chip sits in the Overlays menu, which may be closed.
	await A.page.evaluate(() => {
		const box = document.querySelector('.bones-chip input[type=checkbox]');
		if (!box) throw new Error('no Bones checkbox');
		box.checked = false;
		box.dispatchEvent(new Event('change'));
	});
	const q = await traced(A, () => play(A, null));
	line('clip playing, bones hidden', q.iv, `; ${q.sent} batches sent`);
	for (const h of [A, B]) if (h) await h.context.close();
} finally {
	await server.stop();
	await browser.close();
}
