/*
 * Skeleton artwork in the 2D viewer (web/app/skeleton_layers.js) in a
 * real Chromium: regions of a generated atlas page (four coloured
 * quadrants per region, one region stored rotated, one trimmed) drawn for
 * synthetic Spine attachments and DragonBones displays (with skew) land,
 * colour by colour, where the formats' documented formulas put them
 * (docs/viewer-skeletons.md), computed here independently of the module
 * and read back from screenshot pixels; without an atlas every slot is an
 * outline.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { artifacts, launch, openPage, poll, rigd } from './lib/browser.mjs';
import { decodePng, encodePng } from './lib/png.mjs';

let browser;
before(async () => {
	browser = await launch();
});
after(async () => {
	if (browser) await browser.close();
});

const WHITE = [255, 255, 255];
const COLOURS = [
	[230, 30, 30], // top-left: red
	[30, 200, 40], // top-right: green
	[30, 60, 230], // bottom-left: blue
	[240, 220, 20], // bottom-right: yellow
];

/* The colour of upright region pixel (u, v) of a w x h region. */
const quadrant = (u, v, w, h) => COLOURS[(u < w / 2 ? 0 : 1) + (v < h / 2 ? 0 : 2)];

/*
 * A page of 128 x 64 pixels, transparent but for the regions: each region
 * {x, y, w, h, store} fills its stored rect with its upright quadrants,
 * 'store(px, py)' answering the upright (u, v) a stored pixel holds.
 */
function makePage(regions) {
	return encodePng(128, 64, (px, py) => {
		for (const r of regions) {
			const [sw, sh] = r.stored;
			if (px < r.x || py < r.y || px >= r.x + sw || py >= r.y + sh) continue;
			const [u, v] = r.store(px + 0.5, py + 0.5);
			return [...quadrant(u, v, r.w, r.h), 255];
		}
		return [0, 0, 0, 0];
	});
}

/* The Spine page: A upright at (0,0) 32x32; B, 32 wide and 16 tall
 * upright, stored turned a quarter counter-clockwise ("rotate: 90": the
 * stored rect is 16 x 32, upright (u, v) at page (x + v, y + w - u)); C
 * 20x12, trimmed out of a 32x24 original with 4 px cut on the left and 6
 * at the bottom. */
const SPINE_REGIONS = [
	{ name: 'A', x: 0, y: 0, w: 32, h: 32, stored: [32, 32], store: (px, py) => [px, py] },
	{ name: 'B', x: 40, y: 0, w: 32, h: 16, stored: [16, 32], store: (px, py) => [32 - (py - 0), px - 40] },
	{ name: 'C', x: 64, y: 40, w: 20, h: 12, stored: [20, 12], store: (px, py) => [px - 64, py - 40] },
];
const SPINE_ATLAS = `
skel.png
size: 128, 64
format: RGBA8888
filter: Linear, Linear
pma: false
A
bounds: 0, 0, 32, 32
B
bounds: 40, 0, 32, 16
rotate: 90
C
bounds: 64, 40, 20, 12
offsets: 4, 6, 32, 24
`;
/* The same atlas in the older keys (xy, size, orig, offset, rotate: true). */
const SPINE_ATLAS_OLD = `
skel.png
size: 128,64
format: RGBA8888
filter: Linear,Linear
repeat: none
A
  rotate: false
  xy: 0, 0
  size: 32, 32
  orig: 32, 32
  offset: 0, 0
  index: -1
B
  rotate: true
  xy: 40, 0
  size: 32, 16
  orig: 32, 16
  offset: 0, 0
  index: -1
C
  rotate: false
  xy: 64, 40
  size: 20, 12
  orig: 32, 24
  offset: 4, 6
  index: -1
`;

/* Slot origins on the test's stage (the slot's world: a translation). */
const SPINE_SLOTS = {
	a: { origin: [120, 120], att: 'A', region: { w: 32, h: 32, origW: 32, origH: 32, left: 0, bottomCut: 0 }, spec: { x: 0, y: 0, width: 96, height: 96 } },
	b: { origin: [330, 120], att: 'B', region: { w: 32, h: 16, origW: 32, origH: 16, left: 0, bottomCut: 0 }, spec: { x: 12, y: 20, rotation: 30, scaleX: 1.25, scaleY: 0.75, width: 128, height: 64 } },
	c: { origin: [540, 120], att: 'C', region: { w: 20, h: 12, origW: 32, origH: 24, left: 4, bottomCut: 6 }, spec: { x: -10, y: -8, rotation: -20, width: 128, height: 96 } },
	d: { origin: [680, 120], att: 'D', spec: { x: 0, y: 0, width: 60, height: 40 } },
};

function spineSkeleton() {
	const attachments = {};
	for (const [slot, s] of Object.entries(SPINE_SLOTS)) attachments[slot] = { [s.att]: { ...s.spec } };
	return {
		skeleton: { spine: '4.2.0', width: 100, height: 100 },
		bones: [{ name: 'root' }],
		slots: Object.keys(SPINE_SLOTS).map((name) => ({ name, bone: 'root', attachment: SPINE_SLOTS[name].att })),
		skins: [{ name: 'default', attachments }],
	};
}

/*
 * Where a point of a Spine region attachment's original image lands in
 * rigd's y-down frame, from Spine's formulas alone: the attachment's
 * width x height spans the original image (origW x origH) centred on the
 * attachment's origin, y up; that local point is scaled by (scaleX,
 * scaleY), rotated counter-clockwise by 'rotation' degrees and moved by
 * (x, y), all y up; rigd's frame is Spine's with y negated. (u, v) are
 * original-image pixels, v down from the image's top.
 */
function spinePoint(spec, region, u, v) {
	const w = spec.width;
	const h = spec.height;
	const lx = -w / 2 + (u * w) / region.origW;
	const ly = h / 2 - (v * h) / region.origH; // y up
	const sx = (spec.scaleX ?? 1) * lx;
	const sy = (spec.scaleY ?? 1) * ly;
	const r = ((spec.rotation ?? 0) * Math.PI) / 180;
	const X = (spec.x ?? 0) + Math.cos(r) * sx - Math.sin(r) * sy;
	const Y = (spec.y ?? 0) + Math.sin(r) * sx + Math.cos(r) * sy;
	return [X, -Y];
}

/* The DragonBones page: "plain" at (0,0) 32x32; "rot", 32 wide and 16 tall
 * upright, stored turned a quarter clockwise (SubTexture width 16, height
 * 32: upright (u, v) at page (x + h - v, y + u)); "trim" 20x12 inside a
 * 32x24 frame at frameX -4, frameY -6. */
const DB_REGIONS = [
	{ name: 'plain', x: 0, y: 0, w: 32, h: 32, stored: [32, 32], store: (px, py) => [px, py] },
	{ name: 'rot', x: 40, y: 0, w: 32, h: 16, stored: [16, 32], store: (px, py) => [py - 0, 40 + 16 - px] },
	{ name: 'trim', x: 64, y: 40, w: 20, h: 12, stored: [20, 12], store: (px, py) => [px - 64, py - 40] },
];
const DB_TEX = {
	name: 'db',
	imagePath: 'db_tex.png',
	width: 128,
	height: 64,
	SubTexture: [
		{ name: 'plain', x: 0, y: 0, width: 32, height: 32 },
		{ name: 'rot', x: 40, y: 0, width: 16, height: 32, rotated: true },
		{ name: 'trim', x: 64, y: 40, width: 20, height: 12, frameX: -4, frameY: -6, frameWidth: 32, frameHeight: 24 },
	],
};
const DB_SLOTS = {
	p: { origin: [120, 360], region: { w: 32, h: 32, fw: 32, fh: 32, left: 0, top: 0 }, display: { name: 'plain', transform: { x: 5, y: 7, skX: 20, skY: 35, scX: 2.5, scY: 1.8 } } },
	r: { origin: [330, 360], region: { w: 32, h: 16, fw: 32, fh: 16, left: 0, top: 0 }, display: { name: 'rot', transform: { x: 0, y: 0, skX: -40, skY: -40, scX: 3, scY: 3 } } },
	t: { origin: [540, 360], region: { w: 20, h: 12, fw: 32, fh: 24, left: 4, top: 6 }, display: { name: 'trim', pivot: { x: 0.25, y: 0.75 }, transform: { x: 10, y: -5, skX: 0, skY: 0, scX: 4, scY: 4 } } },
};

function dbSkeleton() {
	return {
		version: '5.5',
		name: 'db',
		armature: [
			{
				name: 'arm',
				bone: [{ name: 'root' }],
				slot: Object.keys(DB_SLOTS).map((name) => ({ name, parent: 'root' })),
				skin: [{ name: '', slot: Object.entries(DB_SLOTS).map(([name, s]) => ({ name, display: [{ ...s.display }] })) }],
			},
		],
	};
}

/*
 * Where a point of a DragonBones image display lands in the slot's frame
 * (y down, as DragonBones): the frame (frameWidth x frameHeight, or the
 * SubTexture's size) is placed with its pivot (fractions, 0.5 0.5 unless
 * given) at the display's origin; the display's x axis is turned by skY
 * and scaled by scX, its y axis turned by skX from straight down and
 * scaled by scY; then moved by (x, y). (u, v) are frame pixels.
 */
function dbPoint(display, region, u, v) {
	const t = display.transform;
	const px = display.pivot ? display.pivot.x : 0.5;
	const py = display.pivot ? display.pivot.y : 0.5;
	const lx = -region.fw * px + u;
	const ly = -region.fh * py + v;
	const rad = Math.PI / 180;
	const xAxis = [Math.cos(t.skY * rad) * t.scX, Math.sin(t.skY * rad) * t.scX];
	const yAxis = [-Math.sin(t.skX * rad) * t.scY, Math.cos(t.skX * rad) * t.scY];
	return [t.x + xAxis[0] * lx + yAxis[0] * ly, t.y + xAxis[1] * lx + yAxis[1] * ly];
}

/* The four quadrant centres of a region's stored pixels, in
 * original-image (frame) pixels: [u, v, colour]. */
function quadrantCentres(w, h, left, top) {
	const out = [];
	for (const [fu, fv] of [
		[0.25, 0.25],
		[0.75, 0.25],
		[0.25, 0.75],
		[0.75, 0.75],
	])
		out.push([left + fu * w, top + fv * h, quadrant(fu * w, fv * h, w, h)]);
	return out;
}

const near = (got, want, tol = 48) => want.every((c, i) => Math.abs(got[i] - c) <= tol);

/*
 * Draws, in the page, each slot's cut() group under a translation to its
 * origin on an 800 x 480 white stage, and answers the stage's pixels.
 * 'setup' names the asset to build: {format, skeleton, atlas, atlasKind,
 * pagePng (base64) , pageName, slots: [[group, origin]...]}.
 */
async function drawStage(page, setup) {
	await page.evaluate(async (s) => {
		const m = await import('/app/skeleton_layers.js');
		document.getElementById('skel-stage')?.remove();
		const NS = 'http://www.w3.org/2000/svg';
		const svg = document.createElementNS(NS, 'svg');
		svg.id = 'skel-stage';
		svg.setAttribute('width', '800');
		svg.setAttribute('height', '480');
		Object.assign(svg.style, { position: 'fixed', left: '0', top: '0', zIndex: '100000', background: 'white' });
		const bg = document.createElementNS(NS, 'rect');
		for (const [k, v] of Object.entries({ width: 800, height: 480, fill: 'white' })) bg.setAttribute(k, String(v));
		svg.append(bg);
		document.body.append(svg);
		const files = new Map();
		if (s.atlas !== null) {
			files.set(s.atlasName, new Response(s.atlas, { headers: { 'Content-Type': 'text/plain' } }));
			const bin = Uint8Array.from(atob(s.pagePng), (c) => c.charCodeAt(0));
			files.set(s.pageName, new Response(new Blob([bin], { type: 'image/png' }), { headers: { 'Content-Type': 'image/png' } }));
		}
		const asset = await m.loadSkeleton(s.file, s.skeleton, async (name) => files.get(name) || null);
		window.skelAsset = asset;
		for (const [group, [x, y]] of s.slots) {
			const cut = asset.cut(group, new Set());
			if (!cut) throw new Error(`no group ${group}`);
			const g = document.createElementNS(NS, 'g');
			g.setAttribute('transform', `translate(${x} ${y})`);
			g.append(cut.element);
			svg.append(g);
		}
	}, setup);
	// Two frames, so the images have painted.
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
	return decodePng(await page.locator('#skel-stage').screenshot());
}

const at = (png, [x, y]) => png.at(Math.round(x - 0.5), Math.round(y - 0.5)).slice(0, 3);
const add = (a, b) => [a[0] + b[0], a[1] + b[1]];

describe('skeleton_layers.js: regions drawn where the formats say', () => {
	let server;
	let page;
	let handle;
	before(async () => {
		server = await rigd.startRigd({ args: ['--sync', 'normal'] });
		handle = await openPage(browser, `${server.url}/`, { waitLive: false, width: 900, height: 600 });
		page = handle.page;
	});
	after(async () => {
		if (handle) await handle.context.close();
		if (server) await server.stop();
	});

	const spineSetup = (atlas) => ({
		file: 'skel.json',
		skeleton: spineSkeleton(),
		atlas,
		atlasName: 'skel.json.atlas',
		pageName: 'skel.png',
		pagePng: makePage(SPINE_REGIONS).toString('base64'),
		slots: Object.entries(SPINE_SLOTS).map(([slot, s]) => [`${slot}.${s.att}`, s.origin]),
	});

	for (const [label, atlas] of [
		['4.x keys', SPINE_ATLAS],
		['older keys', SPINE_ATLAS_OLD],
	]) {
		it(`Spine region attachments: upright, rotated and trimmed regions (${label})`, async () => {
			const png = await drawStage(page, spineSetup(atlas));
			if (label === '4.x keys') fs.writeFileSync(path.join(artifacts(), 'skeleton2d-spine-regions.png'), await page.locator('#skel-stage').screenshot());
			const misses = [];
			for (const [slot, s] of Object.entries(SPINE_SLOTS)) {
				if (!s.region) continue;
				const r = s.region;
				const top = r.origH - r.bottomCut - r.h; // Spine counts the cut from the bottom
				for (const [u, v, colour] of quadrantCentres(r.w, r.h, r.left, top)) {
					const p = add(s.origin, spinePoint(s.spec, r, u, v));
					const got = at(png, p);
					if (!near(got, colour)) misses.push(`${slot} (${u},${v}) at ${p.map((c) => c.toFixed(1))}: ${got} not ${colour}`);
				}
				if (r.left > 0) {
					// The trimmed margin: nothing drawn there.
					const p = add(s.origin, spinePoint(s.spec, r, r.left / 2, r.origH / 2));
					if (!near(at(png, p), WHITE, 8)) misses.push(`${slot}: the trimmed margin at ${p} is ${at(png, p)}`);
				}
			}
			// The extent the asset reports for A (no turn, 96 x 96 at 0, 0).
			const box = await page.evaluate(() => window.skelAsset.cut('a.A', new Set()).box);
			assert.ok(box && [-48, -48, 48, 48].every((v, i) => Math.abs(box[i] - v) < 1e-9), `box ${box}`);
			// D is not in the atlas: an outline of its rect, hollow.
			const d = SPINE_SLOTS.d;
			const edge = add(d.origin, [0, -d.spec.height / 2]);
			const darkest = Math.min(...[-1, 0, 1].map((dy) => Math.min(...at(png, add(edge, [0.5, dy + 0.5])))));
			assert.ok(darkest < 230, `D's outline shows at its top edge (${darkest})`);
			assert.ok(near(at(png, d.origin), WHITE, 8), 'D is hollow');
			assert.deepEqual(misses, []);
		});
	}

	it('DragonBones image displays with skew: plain, rotated and trimmed SubTextures', async () => {
		const png = await drawStage(page, {
			file: 'db_ske.json',
			skeleton: dbSkeleton(),
			atlas: JSON.stringify(DB_TEX),
			atlasName: 'db_ske.json.tex.json',
			pageName: 'db_tex.png',
			pagePng: makePage(DB_REGIONS).toString('base64'),
			slots: Object.entries(DB_SLOTS).map(([slot, s]) => [`${slot}.${s.display.name}`, s.origin]),
		});
		fs.writeFileSync(path.join(artifacts(), 'skeleton2d-dragonbones-regions.png'), await page.locator('#skel-stage').screenshot());
		const misses = [];
		for (const [slot, s] of Object.entries(DB_SLOTS)) {
			const r = s.region;
			for (const [u, v, colour] of quadrantCentres(r.w, r.h, r.left, r.top)) {
				const p = add(s.origin, dbPoint(s.display, r, u, v));
				const got = at(png, p);
				if (!near(got, colour)) misses.push(`${slot} (${u},${v}) at ${p.map((c) => c.toFixed(1))}: ${got} not ${colour}`);
			}
			if (r.left > 0) {
				const p = add(s.origin, dbPoint(s.display, r, r.left / 2, r.fh / 2));
				if (!near(at(png, p), WHITE, 8)) misses.push(`${slot}: the trimmed margin at ${p} is ${at(png, p)}`);
			}
		}
		assert.deepEqual(misses, []);
	});

	it('without an atlas every Spine region is an outline of its rect', async () => {
		const png = await drawStage(page, { ...spineSetup(null), atlas: null });
		for (const [slot, s] of Object.entries(SPINE_SLOTS)) {
			const region = { origW: 1, origH: 1 };
			// The middle of the rect's top edge and its centre.
			const edge = add(s.origin, spinePoint(s.spec, region, 0.5, 0));
			const darkest = Math.min(...[-1, 0, 1].flatMap((dx) => [-1, 0, 1].map((dy) => Math.min(...at(png, add(edge, [dx + 0.5, dy + 0.5]))))));
			assert.ok(darkest < 230, `slot ${slot}: outline at its top edge ${edge} (${darkest})`);
			const centre = add(s.origin, spinePoint(s.spec, region, 0.5, 0.5));
			assert.ok(near(at(png, centre), WHITE, 8), `slot ${slot}: hollow at ${centre} (${at(png, centre)})`);
		}
		const titles = await page.evaluate(() => [...document.querySelectorAll('#skel-stage title')].map((t) => t.textContent));
		assert.ok(titles.length >= 4 && titles.every((t) => /no atlas/.test(t)), titles.join('; '));
	});

	it('meshes: an unweighted one is its region over its vertices\' box, a weighted one waits for its bones\' worlds', async () => {
		// Vertices (Spine, y up) spanning x -40..60 and y -30..50: in rigd's
		// frame the box is x -40..60, y -50..30.
		const mesh = { type: 'mesh', path: 'A', uvs: [0, 0, 1, 0, 1, 1, 0, 1], triangles: [0, 1, 2, 2, 3, 0], vertices: [-40, 50, 60, 50, 60, -30, -40, -30], width: 32, height: 32 };
		const weighted = { type: 'mesh', path: 'A', uvs: [0, 0, 1, 0, 1, 1], triangles: [0, 1, 2], vertices: [1, 0, 5, 5, 1, 1, 0, 9, 9, 1, 1, 0, 2, 2, 1], width: 32, height: 32 };
		const skeleton = {
			skeleton: { spine: '4.2.0' },
			bones: [{ name: 'root' }],
			slots: [
				{ name: 'm', bone: 'root', attachment: 'M' },
				{ name: 'w', bone: 'root', attachment: 'W' },
			],
			skins: [{ name: 'default', attachments: { m: { M: mesh }, w: { W: weighted } } }],
		};
		const png = await drawStage(page, {
			file: 'mesh.json',
			skeleton,
			atlas: SPINE_ATLAS,
			atlasName: 'mesh.json.atlas',
			pageName: 'skel.png',
			pagePng: makePage(SPINE_REGIONS).toString('base64'),
			slots: [
				['m.M', [200, 200]],
				['w.W', [500, 200]],
			],
		});
		// Region A's quadrants over the box: red at a quarter from the top left.
		const box = [-40, -50, 60, 30];
		const misses = [];
		for (const [fu, fv, colour] of [
			[0.25, 0.25, COLOURS[0]],
			[0.75, 0.25, COLOURS[1]],
			[0.25, 0.75, COLOURS[2]],
			[0.75, 0.75, COLOURS[3]],
		]) {
			const p = [200 + box[0] + fu * (box[2] - box[0]), 200 + box[1] + fv * (box[3] - box[1])];
			if (!near(at(png, p), colour)) misses.push(`${p}: ${at(png, p)} not ${colour}`);
		}
		assert.deepEqual(misses, []);
		const info = await page.evaluate(() => [...document.querySelectorAll('#skel-stage title')].map((t) => t.textContent));
		assert.deepEqual(info, ['mesh drawn as its region\u2019s bounding quad', 'Spine mesh: weighted, deformed by its bones, 1 triangles']);
		// Nothing drawn for the weighted one until deform() gives it its
		// bones' worlds (the viewer's part: the next test).
		for (const dx of [-20, 0, 20]) assert.ok(near(at(png, [500 + dx, 200]), WHITE, 8), `weighted mesh area at ${dx}`);
		// Bone 'root' at (100, 50) turned a quarter, the slot at the origin:
		// the vertices (5, -5), (9, -9), (2, -2) in rigd's frame (Spine's y
		// up) land at (100 - y, 50 + x): (105, 55), (109, 59), (102, 52),
		// the box in the slot's frame (the identity).
		const skinned = await page.evaluate(() => {
			const cut = window.skelAsset.cut('w.W', new Set());
			const world = (x, y, c, s) => [c, s, 0, 0, -s, c, 0, 0, 0, 0, 1, 0, x, y, 0, 1];
			return cut.deform((id) => (id === 'root' ? world(100, 50, 0, 1) : null), world(0, 0, 1, 0));
		});
		assert.deepEqual(skinned.map((v) => Math.round(v * 1e9) / 1e9), [102, 52, 109, 59]);
		const none = await page.evaluate(() => window.skelAsset.cut('w.W', new Set()).deform(() => null, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]));
		assert.equal(none, null, 'a bone without a world: nothing drawn');
	});

	it('premultiplied pages are un-premultiplied once: a half-transparent edge keeps its colour', async () => {
		// One 8x8 page, every pixel red at alpha 128 stored premultiplied
		// (r = 255 * 128 / 255 = 128).
		const pma = encodePng(8, 8, () => [128, 0, 0, 128]).toString('base64');
		const colours = await page.evaluate(async (b64) => {
			const m = await import('/app/skeleton_layers.js');
			const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
			const read = async (flag) => {
				const p = await m.pageImage(new Blob([bin], { type: 'image/png' }), flag, []);
				const img = new Image();
				img.src = p.url;
				await img.decode();
				const c = document.createElement('canvas');
				c.width = 8;
				c.height = 8;
				const ctx = c.getContext('2d');
				ctx.drawImage(img, 0, 0);
				return [...ctx.getImageData(4, 4, 1, 1).data];
			};
			return { straight: await read(false), pma: await read(true) };
		}, pma);
		assert.ok(Math.abs(colours.straight[0] - 128) <= 2, `as stored: ${colours.straight}`);
		assert.ok(Math.abs(colours.pma[0] - 255) <= 3 && Math.abs(colours.pma[3] - 128) <= 1, `un-premultiplied: ${colours.pma}`);
	});

	it('measures: 100 regions cropped by nested <svg> and by clipPath', async (t) => {
		const png = makePage(SPINE_REGIONS).toString('base64');
		const ms = await page.evaluate(async (b64) => {
			const m = await import('/app/skeleton_layers.js');
			const NS = 'http://www.w3.org/2000/svg';
			const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
			const pg = await m.pageImage(new Blob([bin], { type: 'image/png' }), false, []);
			const atlas = m.parseSpineAtlas('p.png\nsize: 128, 64\nA\nbounds: 0, 0, 32, 32\n');
			const r = atlas.regions.get('A');
			const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
			const run = async (make) => {
				document.getElementById('skel-stage')?.remove();
				const svg = document.createElementNS(NS, 'svg');
				svg.id = 'skel-stage';
				svg.setAttribute('width', '800');
				svg.setAttribute('height', '480');
				Object.assign(svg.style, { position: 'fixed', left: '0', top: '0', zIndex: '100000', background: 'white' });
				document.body.append(svg);
				const groups = [];
				for (let i = 0; i < 100; i++) {
					const g = document.createElementNS(NS, 'g');
					g.append(make(svg, i));
					svg.append(g);
					groups.push(g);
				}
				await frame();
				await frame();
				const t0 = performance.now();
				const FRAMES = 30;
				for (let f = 0; f < FRAMES; f++) {
					groups.forEach((g, i) => g.setAttribute('transform', `translate(${(i % 10) * 80 + 40} ${Math.floor(i / 10) * 45 + 30}) rotate(${f * 3 + i})`));
					await frame();
				}
				return (performance.now() - t0) / FRAMES;
			};
			const makeNested = () => m.regionElement(r, pg, -16, -16, 32, 32);
			const makeClipped = (svg, i) => {
				const clip = document.createElementNS(NS, 'clipPath');
				clip.id = `bench-clip-${i}`;
				const rect = document.createElementNS(NS, 'rect');
				for (const [k, v] of Object.entries({ x: 0, y: 0, width: 32, height: 32 })) rect.setAttribute(k, String(v));
				clip.append(rect);
				svg.append(clip);
				const g = document.createElementNS(NS, 'g');
				g.setAttribute('transform', 'translate(-16 -16)');
				const img = document.createElementNS(NS, 'image');
				for (const [k, v] of Object.entries({ width: 128, height: 64, 'clip-path': `url(#bench-clip-${i})`, href: pg.url })) img.setAttribute(k, String(v));
				g.append(img);
				return g;
			};
			// Alternating rounds, medians: the machine is shared.
			const a = [];
			const b = [];
			for (let round = 0; round < 5; round++) {
				a.push(await run(makeNested));
				b.push(await run(makeClipped));
			}
			const median = (v) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
			const nested = median(a);
			const clipped = median(b);
			document.getElementById('skel-stage')?.remove();
			return { nested, clipped };
		}, png);
		t.diagnostic(`100 regions, ms per frame while all move: nested <svg> ${ms.nested.toFixed(2)}, clipPath ${ms.clipped.toFixed(2)}`);
		assert.ok(ms.nested > 0 && ms.clipped > 0);
	});

	it('measures: a weighted mesh of 200 triangles deformed every frame, beside its bounding quad moved', async (t) => {
		const png = makePage(SPINE_REGIONS).toString('base64');
		const ms = await page.evaluate(async (b64) => {
			const m = await import('/app/skeleton_layers.js');
			const NS = 'http://www.w3.org/2000/svg';
			const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
			const pg = await m.pageImage(new Blob([bin], { type: 'image/png' }), false, []);
			const atlas = m.parseSpineAtlas('p.png\nsize: 128, 64\nA\nbounds: 0, 0, 32, 32\n');
			// An 11 x 11 grid over 400 x 400 units, each vertex half on
			// 'root', half on 'arm'; the same grid unweighted for the peer.
			const N = 11;
			const uvs = [];
			const weighted = [];
			const plain = [];
			const triangles = [];
			for (let r = 0; r < N; r++)
				for (let c = 0; c < N; c++) {
					const x = (400 * c) / (N - 1) - 200;
					const y = 200 - (400 * r) / (N - 1);
					uvs.push(c / (N - 1), r / (N - 1));
					weighted.push(2, 0, x, y, 0.5, 1, x, y, 0.5);
					plain.push(x, y);
					if (r < N - 1 && c < N - 1) {
						const i = r * N + c;
						triangles.push(i, i + 1, i + N, i + 1, i + N + 1, i + N);
					}
				}
			const skeleton = (vertices) => ({
				skeleton: { spine: '4.2.0' },
				bones: [{ name: 'root' }, { name: 'arm', parent: 'root' }],
				slots: [{ name: 'm', bone: 'root', attachment: 'A' }],
				skins: [{ name: 'default', attachments: { m: { A: { type: 'mesh', uvs, triangles, vertices, width: 32, height: 32 } } } }],
			});
			const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
			const world = (x, y, a) => [Math.cos(a), Math.sin(a), 0, 0, -Math.sin(a), Math.cos(a), 0, 0, 0, 0, 1, 0, x, y, 0, 1];
			const run = async (vertices) => {
				document.getElementById('skel-stage')?.remove();
				const svg = document.createElementNS(NS, 'svg');
				svg.id = 'skel-stage';
				svg.setAttribute('width', '800');
				svg.setAttribute('height', '480');
				Object.assign(svg.style, { position: 'fixed', left: '0', top: '0', zIndex: '100000', background: 'white' });
				document.body.append(svg);
				const asset = new m.SkeletonAsset('bench.json', 'spine', skeleton(vertices), atlas, new Map([['p.png', pg]]));
				const cut = asset.cut('m.A', new Set());
				const g = document.createElementNS(NS, 'g');
				g.append(cut.element);
				svg.append(g);
				const slot = world(400, 240, 0);
				g.setAttribute('transform', 'matrix(1 0 0 1 400 240)');
				let js = 0;
				const FRAMES = 30;
				await frame();
				await frame();
				const t0 = performance.now();
				for (let f = 0; f < FRAMES; f++) {
					const arm = world(400 + f, 240, f * 0.02);
					const j0 = performance.now();
					if (cut.deform) cut.deform((id) => (id === 'root' ? slot : arm), slot);
					else g.setAttribute('transform', `matrix(${arm[0]} ${arm[1]} ${arm[4]} ${arm[5]} ${arm[12]} ${arm[13]})`);
					js += performance.now() - j0;
					await frame();
				}
				return [(performance.now() - t0) / FRAMES, js / FRAMES];
			};
			const a = [];
			const b = [];
			for (let round = 0; round < 5; round++) {
				a.push(await run(weighted));
				b.push(await run(plain));
			}
			const median = (v, k) => v.map((x) => x[k]).sort((x, y) => x - y)[Math.floor(v.length / 2)];
			document.getElementById('skel-stage')?.remove();
			return { skinned: median(a, 0), skinnedJs: median(a, 1), quad: median(b, 0), quadJs: median(b, 1) };
		}, png);
		t.diagnostic(`a 200-triangle mesh, ms per frame while its bone moves: weighted (deformed) ${ms.skinned.toFixed(2)} (deform ${ms.skinnedJs.toFixed(3)}), unweighted bounding quad ${ms.quad.toFixed(2)} (transform ${ms.quadJs.toFixed(3)})`);
		assert.ok(ms.skinned > 0 && ms.quad > 0);
	});

	it('hostile names and values stay text and numbers', async () => {
		const evil = '<img src=x onerror="window.pwned=1">';
		const got = await page.evaluate(async (name) => {
			const m = await import('/app/skeleton_layers.js');
			const skeleton = {
				skeleton: { spine: '4.2.0' },
				bones: [{ name: 'root' }],
				slots: [{ name, bone: 'root', attachment: name }],
				skins: [{ name: 'default', attachments: { [name]: { [name]: { x: '1) scale(900', y: '2', rotation: 'rotate(1)', width: 40, height: 30, path: `${name}</svg>` } } } }],
			};
			const atlas = `p.png\nsize: 8, 8\n${name}</svg>\nbounds: 0, 0, 4, 4\n`;
			const files = new Map([[`evil.json.atlas`, new Response(atlas)]]);
			const asset = await m.loadSkeleton('evil.json', skeleton, async (f) => files.get(f) || null);
			const cut = asset.cut(`${m.encodePart(name)}.${m.encodePart(name)}`, new Set());
			document.body.append(cut.element);
			const out = {
				imgs: cut.element.querySelectorAll('img, image, foreignObject').length,
				title: cut.element.querySelector('title').textContent,
				transforms: [...cut.element.querySelectorAll('[transform]')].map((e) => e.getAttribute('transform')),
				attrs: [...cut.element.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name)).sort(),
				pwned: window.pwned === 1,
			};
			cut.element.remove();
			return out;
		}, evil);
		assert.equal(got.imgs, 0);
		assert.equal(got.pwned, false);
		assert.match(got.title, /^page 'p.png' of region '<img src=x onerror="window.pwned=1"><\/svg>' did not load/);
		assert.deepEqual(got.transforms, ['translate(0 -2) rotate(0) scale(1 1)']);
		assert.ok(got.attrs.every((a) => !/^on/i.test(a)), got.attrs.join(' '));
	});

	it('names decode as the import encodes them', async () => {
		const got = await page.evaluate(async () => {
			const m = await import('/app/skeleton_layers.js');
			return [m.splitGroup('arm_2eL.h_c3_a9ad'), m.encodePart('é.x y'), m.splitGroup('a.b.c'), m.splitGroup('a_zz.b')];
		});
		assert.deepEqual(got, [{ slot: 'arm.L', attachment: 'héad' }, '_c3_a9_2ex_20y', null, null]);
		assert.deepEqual(handle.problems, []);
	});
});

/* ---- through the real import routes, in the viewer ---- */

const DB_SAMPLE = process.env.RIGD_GLTF_SAMPLES ? path.join(path.dirname(process.env.RIGD_GLTF_SAMPLES), 'dragonbones', 'mecha_1406') : null;

/* The import's enc() of a name, written here from its definition. */
const enc = (name) => [...Buffer.from(name, 'utf8')].map((b) => (/[A-Za-z0-9-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `_${b.toString(16).padStart(2, '0')}`)).join('');

/* A column-major 2D world matrix applied to a point. */
const apply = (m, [x, y]) => [m[0] * x + m[4] * y + m[12], m[1] * x + m[5] * y + m[13]];

/* Page pixels of scene points, through the viewer's camera. */
function pagePoints(page, points) {
	return page.evaluate((pts) => {
		const cam = document.querySelector('svg.view2d g.camera');
		const m = cam.getScreenCTM();
		return pts.map(([x, y]) => {
			const p = new DOMPoint(x, y).matrixTransform(m);
			return [p.x, p.y];
		});
	}, points);
}

/* A screenshot of the viewer without its bone overlay (lines and joint
 * handles would cover the artwork's pixels). */
async function artworkShot(page, file) {
	await page.evaluate(() => {
		document.querySelector('canvas.view2d-overlay').style.visibility = 'hidden';
	});
	await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
	const buf = await page.screenshot(file ? { path: file } : {});
	await page.evaluate(() => {
		document.querySelector('canvas.view2d-overlay').style.visibility = '';
	});
	return decodePng(buf);
}

/* Waits until the page draws 'count' layer groups, each holding an image. */
async function waitDrawn(page, count) {
	await page.waitForFunction((n) => {
		const groups = document.querySelectorAll('svg.view2d g.layer');
		return groups.length === n && [...groups].every((g) => g.querySelector('image'));
	}, count, { timeout: 20000 });
}

describe('skeleton rigs imported through the routes, in the viewer', () => {
	let server;
	const pages = [];
	before(async () => {
		server = await rigd.startRigd({ args: ['--sync', 'normal'] });
	});
	after(async () => {
		for (const p of pages) await p.context.close();
		if (server) await server.stop();
	});

	/* A Spine rig: a root bone and an arm turned 30 degrees, the three
	 * regions of the generated page on their slots. */
	const SPINE_RIG = {
		skeleton: { spine: '4.2.0' },
		bones: [{ name: 'root' }, { name: 'arm', parent: 'root', x: 200, y: -40, rotation: 30 }],
		slots: [
			{ name: 'a', bone: 'root', attachment: 'A' },
			{ name: 'b', bone: 'arm', attachment: 'B' },
			{ name: 'c', bone: 'arm', attachment: 'C' },
		],
		skins: [
			{
				name: 'default',
				attachments: {
					a: { A: SPINE_SLOTS.a.spec },
					b: { B: SPINE_SLOTS.b.spec },
					c: { C: { ...SPINE_SLOTS.c.spec, x: 120 } },
				},
			},
		],
	};
	const SPINE_RIG_REGIONS = { a: SPINE_SLOTS.a.region, b: SPINE_SLOTS.b.region, c: SPINE_SLOTS.c.region };
	const specOf = (slot) => SPINE_RIG.skins[0].attachments[slot][SPINE_RIG.slots.find((s) => s.name === slot).attachment];

	/* Each quadrant's expected page point and colour, from the world
	 * matrices the page holds (the server's) and Spine's formulas. */
	async function spineExpectations(page) {
		const want = [];
		for (const slot of Object.keys(SPINE_RIG_REGIONS)) {
			const r = SPINE_RIG_REGIONS[slot];
			const world = await page.evaluate((id) => window.rigd.worldOf(id), `slot:${enc(slot)}`);
			assert.ok(world, `slot ${slot} has a world matrix`);
			const top = r.origH - r.bottomCut - r.h;
			for (const [u, v, colour] of quadrantCentres(r.w, r.h, r.left, top)) want.push({ slot, colour, scene: apply(world, spinePoint(specOf(slot), r, u, v)) });
		}
		const onPage = await pagePoints(page, want.map((w) => w.scene));
		return want.map((w, i) => ({ ...w, at: onPage[i] }));
	}

	function misses(png, want) {
		return want.filter((w) => !near(at(png, w.at), w.colour)).map((w) => `${w.slot} at ${w.at.map((c) => c.toFixed(1))}: ${at(png, w.at)} not ${w.colour}`);
	}

	it('a Spine rig with its atlas: each region where the bones put it, and it follows a bone moved in another page', async () => {
		const r = await rigd.post(server, '/api/scenes/sprig/spine', { skeleton: SPINE_RIG, file: 'skel.json', atlas: SPINE_ATLAS, images: { 'skel.png': makePage(SPINE_REGIONS).toString('base64') } });
		assert.equal(r.status, 200, r.text);
		const list = JSON.parse((await rigd.get(server, '/api/scenes/sprig/assets')).text);
		assert.deepEqual(list.map((a) => [a.file, a.kind]).sort(), [
			['skel.json', 'spine'],
			['skel.json.atlas', 'spine-atlas'],
			['skel.png', 'png'],
		]);
		const A = await openPage(browser, `${server.url}/#/scene/sprig`, { name: 'alice' });
		const B = await openPage(browser, `${server.url}/#/scene/sprig`, { name: 'bob' });
		pages.push(A, B);
		await waitDrawn(A.page, 3);
		const before = await spineExpectations(A.page);
		assert.deepEqual(misses(await artworkShot(A.page, path.join(artifacts(), 'skeleton2d-spine-viewer.png')), before), []);

		// Bob's page sends an edit (as the page's own client would: POST
		// .../edits with its credentials, none here) that moves the arm.
		const armBefore = await A.page.evaluate(() => window.rigd.worldOf('arm'));
		await waitDrawn(B.page, 3);
		const status = await B.page.evaluate(async () => {
			const res = await fetch('/api/scenes/sprig/edits', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ops: [{ op: 'set', id: 'arm', t: [260, 60, 0] }] }) });
			return res.status;
		});
		assert.equal(status, 200);
		await A.page.waitForFunction((old) => {
			const w = window.rigd.worldOf('arm');
			return w && Math.hypot(w[12] - old[12], w[13] - old[13]) > 1;
		}, armBefore, { timeout: 10000 });
		await A.page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
		const moved = await spineExpectations(A.page);
		const bi = moved.findIndex((w) => w.slot === 'b');
		const shift = Math.hypot(moved[bi].at[0] - before[bi].at[0], moved[bi].at[1] - before[bi].at[1]);
		assert.ok(shift > 10, `the artwork moved on the page (${shift.toFixed(1)} px)`);
		assert.deepEqual(misses(await artworkShot(A.page), moved), []);
		// ...and where the arm's regions were, they are no longer drawn.
		const stale = misses(await artworkShot(A.page), before.filter((w) => w.slot !== 'a'));
		assert.ok(stale.length > 0, 'the arm\'s old places changed');
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});

	/*
	 * Weighted meshes: a 3 x 3 grid of vertices over a 32 x 32 region of
	 * four coloured quadrants (uvs 0, 0.5, 1), two triangles per cell, so
	 * each cell shows one quadrant. The left column follows bone 'root',
	 * the right one bone 'arm', the middle half of each. The expected
	 * places are the documented skinning, sum of w * (boneWorld * bind),
	 * computed here from the server's world matrices.
	 */
	const GRID = [0, 1, 2];
	const meshTriangles = () => {
		const t = [];
		for (const r of [0, 1]) for (const c of [0, 1]) {
			const i = r * 3 + c;
			t.push(i, i + 1, i + 3, i + 1, i + 4, i + 3);
		}
		return t;
	};
	const meshUvs = () => GRID.flatMap((r) => GRID.flatMap((c) => [c / 2, r / 2]));
	/* Spine: bind positions in each bone's frame, y up; arm sits at x 200. */
	const spineMeshVertices = () =>
		GRID.flatMap((r) => {
			const Y = 100 - 100 * r;
			return [[1, 0, 0, Y, 1], [2, 0, 100, Y, 0.5, 1, -100, Y, 0.5], [1, 1, 0, Y, 1]].flat();
		});
	/* [{bone id, x, y (rigd's frame, y down), w}] per vertex, as the formats define them. */
	const spineBinds = () =>
		GRID.flatMap((r) => {
			const y = -(100 - 100 * r);
			return [[{ bone: 'root', x: 0, y, w: 1 }], [{ bone: 'root', x: 100, y, w: 0.5 }, { bone: 'arm', x: -100, y, w: 0.5 }], [{ bone: 'arm', x: 0, y, w: 1 }]];
		});

	async function meshExpectations(page, binds) {
		const worlds = {};
		for (const id of ['root', 'arm']) worlds[id] = await page.evaluate((x) => window.rigd.worldOf(x), id);
		const pos = binds.map((list) => list.reduce((acc, f) => {
			const [x, y] = apply(worlds[f.bone], [f.x, f.y]);
			return [acc[0] + f.w * x, acc[1] + f.w * y];
		}, [0, 0]));
		const uvs = meshUvs();
		const tris = meshTriangles();
		const want = [];
		for (let t = 0; t < tris.length; t += 3) {
			const k = [tris[t], tris[t + 1], tris[t + 2]];
			const scene = [0, 1].map((j) => k.reduce((a, i) => a + pos[i][j], 0) / 3);
			const [u, v] = [0, 1].map((j) => k.reduce((a, i) => a + uvs[2 * i + j], 0) / 3);
			want.push({ slot: `triangle ${t / 3}`, colour: quadrant(u * 32, v * 32, 32, 32), scene });
		}
		const onPage = await pagePoints(page, want.map((w) => w.scene));
		return want.map((w, i) => ({ ...w, at: onPage[i] }));
	}

	/* Opens 'scene' (one mesh slot), checks every triangle's colour, moves
	 * the arm with an edit, and checks them again where the bones put them
	 * now (and that the old places of the arm's side changed). */
	async function meshFollowsBones(scene, binds, armMoved, shotName) {
		const A = await openPage(browser, `${server.url}/#/scene/${scene}`, { name: `mesh-${scene}` });
		pages.push(A);
		await waitDrawn(A.page, 1);
		const title = await A.page.evaluate(() => document.querySelector('svg.view2d g.layer title').textContent);
		assert.match(title, /weighted, deformed by its bones, 8 triangles/);
		const before = await meshExpectations(A.page, binds);
		assert.deepEqual(misses(await artworkShot(A.page, path.join(artifacts(), shotName)), before), []);
		const armBefore = await A.page.evaluate(() => window.rigd.worldOf('arm'));
		const r = await rigd.post(server, `/api/scenes/${scene}/edits`, { ops: [{ op: 'set', id: 'arm', t: armMoved }] });
		assert.equal(r.status, 200, r.text);
		await A.page.waitForFunction((old) => {
			const w = window.rigd.worldOf('arm');
			return w && Math.hypot(w[12] - old[12], w[13] - old[13]) > 1;
		}, armBefore, { timeout: 10000 });
		await A.page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
		const moved = await meshExpectations(A.page, binds);
		const shift = Math.max(...moved.map((w, i) => Math.hypot(w.at[0] - before[i].at[0], w.at[1] - before[i].at[1])));
		assert.ok(shift > 20, `the mesh's triangles moved on the page (${shift.toFixed(1)} px)`);
		const shot = await artworkShot(A.page);
		assert.deepEqual(misses(shot, moved), []);
		assert.ok(misses(shot, before).length > 0, 'where the arm\'s side was, it is drawn no longer');
		assert.deepEqual(A.problems, []);
	}

	it('a Spine weighted mesh: its triangles textured where the bones put them, following a bone moved by an edit', async () => {
		const rig = {
			skeleton: { spine: '4.2.0' },
			bones: [{ name: 'root' }, { name: 'arm', parent: 'root', x: 200 }],
			slots: [{ name: 'm', bone: 'root', attachment: 'A' }],
			skins: [{ name: 'default', attachments: { m: { A: { type: 'mesh', uvs: meshUvs(), triangles: meshTriangles(), vertices: spineMeshVertices(), hull: 8, width: 32, height: 32 } } } }],
		};
		const r = await rigd.post(server, '/api/scenes/spmesh/spine', { skeleton: rig, file: 'skel.json', atlas: SPINE_ATLAS, images: { 'skel.png': makePage(SPINE_REGIONS).toString('base64') } });
		assert.equal(r.status, 200, r.text);
		await meshFollowsBones('spmesh', spineBinds(), [200, 80, 0], 'skeleton2d-spine-mesh.png');
	});

	it('a DragonBones weighted mesh (weights, bonePose, slotPose): likewise', async () => {
		// The mesh was bound with the slot at (10, 20) and the arm at x 200:
		// its vertices are in the slot pose's frame, y down.
		const slotPose = [1, 0, 0, 1, 10, 20];
		const vertices = GRID.flatMap((r) => GRID.flatMap((c) => [100 * c - 10, -100 + 100 * r - 20]));
		const weights = GRID.flatMap(() => [[1, 0, 1], [2, 0, 0.5, 1, 0.5], [1, 1, 1]].flat());
		const ske = {
			version: '5.5',
			name: 'dbm',
			armature: [
				{
					name: 'arm',
					bone: [{ name: 'root' }, { name: 'arm', parent: 'root', transform: { x: 200 } }],
					slot: [{ name: 'm', parent: 'root' }],
					skin: [{ name: '', slot: [{ name: 'm', display: [{ type: 'mesh', name: 'plain', uvs: meshUvs(), triangles: meshTriangles(), vertices, weights, slotPose, bonePose: [0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 200, 0], edges: [], userEdges: [] }] }] }],
				},
			],
		};
		const r = await rigd.post(server, '/api/scenes/dbmesh/dragonbones', { skeleton: ske, atlas: DB_TEX, images: { 'db_tex.png': makePage(DB_REGIONS).toString('base64') } });
		assert.equal(r.status, 200, r.text);
		// Bind positions: the vertex in the armature's frame (slotPose), in
		// the bone's by its bonePose's inverse (translations here).
		const binds = GRID.flatMap((r) => {
			const y = -100 + 100 * r;
			return [[{ bone: 'root', x: 0, y, w: 1 }], [{ bone: 'root', x: 100, y, w: 0.5 }, { bone: 'arm', x: -100, y, w: 0.5 }], [{ bone: 'arm', x: 0, y, w: 1 }]];
		});
		await meshFollowsBones('dbmesh', binds, [200, 80, 0], 'skeleton2d-dragonbones-mesh.png');
	});

	it('DragonBones mecha_1406 with its atlas: every slot draws pixels inside its expected box', { skip: !DB_SAMPLE || !fs.existsSync(DB_SAMPLE) ? `no DragonBones sample at ${DB_SAMPLE}` : false }, async () => {
		const ske = JSON.parse(fs.readFileSync(path.join(DB_SAMPLE, 'mecha_1406_ske.json'), 'utf8'));
		const tex = JSON.parse(fs.readFileSync(path.join(DB_SAMPLE, 'mecha_1406_tex.json'), 'utf8'));
		const png = fs.readFileSync(path.join(DB_SAMPLE, 'mecha_1406_tex.png')).toString('base64');
		const r = await rigd.post(server, '/api/scenes/mecha/dragonbones', { skeleton: ske, atlas: tex, images: { 'mecha_1406_tex.png': png } });
		assert.equal(r.status, 200, r.text);
		const tree = await rigd.tree(server, 'mecha');
		const slots = tree.nodes.filter((n) => n.layer);
		assert.ok(slots.length > 5, `${slots.length} slot nodes with layers`);
		const A = await openPage(browser, `${server.url}/#/scene/mecha`, { width: 900, height: 800 });
		pages.push(A);
		await waitDrawn(A.page, slots.length);
		const shot = await artworkShot(A.page, path.join(artifacts(), 'skeleton2d-mecha.png'));
		const bg = at(shot, [A.page.viewportSize().width - 4, A.page.viewportSize().height - 4]);
		const subs = new Map(tex.SubTexture.map((s) => [s.name, s]));
		const arm = ske.armature[0];
		const empty = [];
		const all = [Infinity, Infinity, -Infinity, -Infinity]; // the drawn extent on the page
		for (const node of slots) {
			const [, group] = node.layer.split('#');
			const [slotEnc, dispEnc] = group.split('.');
			const skinSlot = arm.skin[0].slot.find((s) => enc(s.name) === slotEnc);
			const display = skinSlot.display.find((d) => enc(d.name) === dispEnc);
			const sub = subs.get(display.path || display.name);
			const fw = sub.frameWidth || sub.width;
			const fh = sub.frameHeight || sub.height;
			const d = { ...display, transform: { x: 0, y: 0, skX: 0, skY: 0, scX: 1, scY: 1, ...display.transform } };
			const corners = [
				[0, 0],
				[fw, 0],
				[0, fh],
				[fw, fh],
			].map(([u, v]) => apply(node.world, dbPoint(d, { fw, fh }, u, v)));
			const onPage = await pagePoints(A.page, corners);
			const xs = onPage.map((p) => p[0]);
			const ys = onPage.map((p) => p[1]);
			all.splice(0, 4, Math.min(all[0], ...xs), Math.min(all[1], ...ys), Math.max(all[2], ...xs), Math.max(all[3], ...ys));
			let drawn = 0;
			let total = 0;
			for (let y = Math.ceil(Math.min(...ys)); y < Math.max(...ys); y++) {
				for (let x = Math.ceil(Math.min(...xs)); x < Math.max(...xs); x++) {
					if (x < 0 || y < 0 || x >= shot.width || y >= shot.height) continue;
					total++;
					if (!near(shot.at(x, y).slice(0, 3), bg, 12)) drawn++;
				}
			}
			if (!total || drawn < total * 0.1) empty.push(`${node.id}: ${drawn} of ${total} pixels drawn`);
		}
		assert.deepEqual(empty, []);
		// Framed on what is drawn (not on the atlas pages' extents).
		const v = await A.page.evaluate(() => {
			const r = document.querySelector('svg.view2d').getBoundingClientRect();
			return [r.width, r.height];
		});
		const frame = [(all[2] - all[0]) / v[0], (all[3] - all[1]) / v[1]];
		assert.ok(Math.max(...frame) > 0.5, `the rig fills the view (${frame})`);
		assert.deepEqual(A.problems, []);
	});

	/* A Spine leg with a two-bone IK constraint: dragging its target's
	 * joint in page A moves the target (move ops, in its parent's frame)
	 * and the server solves the constraint, so page B draws the leg
	 * reaching the target where the drag left it. */
	it('dragging an IK target moves it, and the constrained leg follows in another page', async () => {
		const rig = {
			skeleton: { spine: '4.2.0' },
			bones: [
				{ name: 'root', x: 300, y: -300 },
				{ name: 'hip', parent: 'root', rotation: 90, scaleX: 1.5, scaleY: 1.5 },
				{ name: 'thigh', parent: 'hip', length: 80, rotation: -120 },
				{ name: 'shin', parent: 'thigh', x: 80, length: 80 },
				{ name: 'goal', parent: 'hip', x: -100, y: 60 },
			],
			slots: [],
			ik: [{ name: 'leg', bones: ['thigh', 'shin'], target: 'goal' }],
		};
		const r = await rigd.post(server, '/api/scenes/leg/spine', { skeleton: rig });
		assert.equal(r.status, 200, r.text);
		assert.ok(r.json.report.kept.includes("ik 'leg': solved live"), r.text);
		const A = await openPage(browser, `${server.url}/#/scene/leg`, { name: 'alice' });
		const B = await openPage(browser, `${server.url}/#/scene/leg`, { name: 'bob' });
		pages.push(A, B);
		for (const P of [A, B]) await P.page.waitForFunction(() => window.rigd.view2d() && window.rigd.jointOnPage('goal'));
		const tipOf = (t) => {
			const shin = t.nodes.find((n) => n.id === 'shin').world;
			return [shin[12] + 80 * shin[0], shin[13] + 80 * shin[1]];
		};
		const at = (t, id) => t.nodes.find((n) => n.id === id).world.slice(12, 14);
		const start = await rigd.tree(server, 'leg');
		// The solve at import: the shin's tip on the goal.
		assert.ok(Math.hypot(...tipOf(start).map((v, i) => v - at(start, 'goal')[i])) < 1e-6, 'reaches at import');

		// Where the joint is once the view has framed the rig (it frames
		// once, when the rig is ready): the same place two frames apart.
		const from = (await poll(async () => {
			const a = await A.page.evaluate(() => window.rigd.jointOnPage('goal'));
			await A.page.evaluate(() => new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res))));
			const b = await A.page.evaluate(() => window.rigd.jointOnPage('goal'));
			return a.x === b.x && a.y === b.y ? b : null;
		}, { timeout: 10000, what: 'the view framed' })).value;
		await A.page.mouse.move(from.x, from.y);
		await A.page.mouse.down();
		await A.page.mouse.move(from.x + 40, from.y + 30, { steps: 8 });
		await A.page.mouse.up();
		// The target goes where the pointer went. The drag's last move may
		// still be on its way when the first ones have landed: wait for the
		// joint to sit under the pointer in page A and for the server's goal
		// to be the one page A draws.
		const pointer = { x: from.x + 40, y: from.y + 30 };
		const { moved } = (await poll(async () => {
			const to = await A.page.evaluate(() => window.rigd.jointOnPage('goal'));
			if (Math.hypot(to.x - pointer.x, to.y - pointer.y) >= 3) return null;
			const t = await rigd.tree(server, 'leg');
			const g = at(t, 'goal'), g0 = at(start, 'goal');
			const shown = await A.page.evaluate(() => window.rigd.worldOf('goal'));
			const same = shown && Math.abs(shown[12] - g[0]) < 1e-6 && Math.abs(shown[13] - g[1]) < 1e-6;
			return same && Math.hypot(g[0] - g0[0], g[1] - g0[1]) > 5 ? { moved: t } : null;
		}, { timeout: 10000, what: `the joint under the pointer (${JSON.stringify(pointer)}) and on the server` })).value;
		// ...by move ops on the target alone, which the log holds...
		const log = (await rigd.get(server, '/api/scenes/leg/log')).text.trim().split('\n').map((l) => JSON.parse(l)).slice(1);
		assert.ok(log.length > 0 && log.every((l) => l.ops.every((o) => o.id === 'goal' && o.op === 'set')), JSON.stringify(log.map((l) => l.ops)));
		// ...and the leg reaches it, in the server's numbers and in page B.
		assert.ok(Math.hypot(...tipOf(moved).map((v, i) => v - at(moved, 'goal')[i])) < 1e-6, 'the leg reaches the moved goal');
		await B.page.waitForFunction((w) => {
			const got = window.rigd.worldOf('shin');
			return got && Math.abs(got[12] - w[12]) < 1e-6 && Math.abs(got[13] - w[13]) < 1e-6 && Math.abs(got[0] - w[0]) < 1e-6;
		}, moved.nodes.find((n) => n.id === 'shin').world, { timeout: 10000 });
		assert.deepEqual(A.problems, []);
		assert.deepEqual(B.problems, []);
	});
});
