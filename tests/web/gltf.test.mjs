/*
 * glTF in the viewer: a sample file dropped on the page (a real
 * DataTransfer carrying a File, dispatched as dragenter, dragover and drop)
 * becomes a new scene, named after the file, whose nodes the hierarchy
 * shows, drawn with the server's world matrices; a second drop of the same
 * file gets a unique name; a malformed file shows the server's error, naming
 * the node, next to the drop target, and creates nothing; the hidden file
 * input behind "Import glTF" takes a file too; "⇩ glTF" downloads the scene
 * (live, or the seq the timeline shows) as a file the Khronos validator
 * accepts without errors. The naming rule is checked under node as well.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { SOURCE_DIR, launch, maxDiff, openPage, poll, rigd } from './lib/browser.mjs';
import samples from '../lib/gltf_samples.js';

/* The sample models (outside the repository; RIGD_GLTF_SAMPLES names the folder). */
const { GLTF_SAMPLES: SAMPLES, skipWithoutSamples } = samples;
const MALFORMED = path.join(SOURCE_DIR, 'tests', 'gltf', 'malformed');
const validator = createRequire(path.join(SOURCE_DIR, 'web', 'package.json'))('gltf-validator');
const { sceneNameForFile, isGltfFile } = await import(pathToFileURL(path.join(SOURCE_DIR, 'web', 'app', 'gltfio.js')).href);

/* The browser's own report of a refused request is expected where a test
 * provokes one. */
const refusedRequest = /^console error: Failed to load resource: the server responded with a status of 4\d\d/;

/* Drops a file with 'name' and 'bytes' on the page as a person would. */
async function dropFile(page, name, bytes) {
	const dt = await page.evaluateHandle(
		({ name: n, data }) => {
			const transfer = new DataTransfer();
			transfer.items.add(new File([new Uint8Array(data)], n, { type: n.endsWith('.glb') ? 'model/gltf-binary' : 'model/gltf+json' }));
			return transfer;
		},
		{ name, data: Array.from(bytes) },
	);
	for (const type of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('main.viewport, .scene-list', type, { dataTransfer: dt });
	await dt.dispose();
}

async function sceneNames(server) {
	return (await rigd.get(server, '/api/scenes')).json.scenes.map((s) => s.name);
}

describe('scene names for dropped files', () => {
	it('are valid, unique and at most 64 characters', () => {
		assert.equal(sceneNameForFile('CesiumMan.gltf', []), 'CesiumMan');
		assert.equal(sceneNameForFile('CesiumMan.gltf', ['CesiumMan']), 'CesiumMan-2');
		assert.equal(sceneNameForFile('CesiumMan.GLB', new Set(['CesiumMan', 'CesiumMan-2'])), 'CesiumMan-3');
		assert.equal(sceneNameForFile('my rig (final).gltf'), 'my_rig__final_');
		assert.equal(sceneNameForFile('C:\\rigs\\arm.glb'), 'arm');
		assert.equal(sceneNameForFile('.gltf'), 'scene');
		assert.equal(sceneNameForFile('ü.gltf'), 'scene');
		const long = sceneNameForFile(`${'x'.repeat(80)}.gltf`, [`${'x'.repeat(64)}`]);
		assert.equal(long.length, 64);
		assert.match(long, /-2$/);
		assert.ok(isGltfFile('a.glb') && isGltfFile('b.GLTF') && !isGltfFile('c.png'));
	});
});

describe('viewer: glTF in and out', () => {
	let browser;
	let server;
	let P;

	before(async () => {
		browser = await launch();
		server = await rigd.startRigd({ args: ['--sync', 'normal'] });
		P = await openPage(browser, `${server.url}/#/scene/demo`);
	});
	after(async () => {
		if (P) await P.context.close();
		if (browser) await browser.close();
		if (server) await server.stop();
	});

	it('a dropped file becomes a new scene that opens with its nodes in the hierarchy', async (t) => {
		if (skipWithoutSamples(t)) return;
		const { page } = P;
		const bytes = fs.readFileSync(path.join(SAMPLES, 'CesiumMan.gltf'));
		await dropFile(page, 'CesiumMan.gltf', bytes);
		await page.waitForFunction(() => location.hash === '#/scene/CesiumMan' && window.rigd.phase() === 'live' && window.rigd.liveSeq() === 1, null, { timeout: 10000 });
		const tree = await rigd.tree(server, 'CesiumMan');
		assert.equal(tree.nodes.length, 22);
		/* The hierarchy lists the file's nodes: the first rows are there. */
		for (const n of tree.nodes.slice(0, 5)) await page.waitForSelector(`.tree-row[data-id="${n.id}"]`, { timeout: 5000 });
		const ids = (shape) => shape.flatMap(([id, kids]) => [id, ...ids(kids)]);
		assert.deepEqual(ids(await page.evaluate(() => window.rigd.tree())).sort(), tree.nodes.map((n) => n.id).sort());
		for (const n of tree.nodes) assert.equal(maxDiff(await page.evaluate((id) => window.rigd.worldOf(id), n.id), n.world), 0, n.id);
		assert.match(await page.textContent('.import-status'), /Imported CesiumMan\.gltf as scene CesiumMan: 22 nodes/);

		/* The same file again: a new, unique name. */
		await dropFile(page, 'CesiumMan.gltf', bytes);
		await page.waitForFunction(() => location.hash === '#/scene/CesiumMan-2' && window.rigd.phase() === 'live', null, { timeout: 10000 });
		assert.ok((await sceneNames(server)).includes('CesiumMan-2'));
		assert.deepEqual(P.problems, []);
	});

	it('a malformed file shows the error naming the node and creates nothing', async () => {
		const { page } = P;
		const before = await sceneNames(server);
		const open = await page.evaluate(() => location.hash);
		await dropFile(page, 'cycle.gltf', fs.readFileSync(path.join(MALFORMED, 'cycle.gltf')));
		await page.waitForSelector('.import-status.error', { timeout: 5000 });
		const text = await page.textContent('.import-status');
		assert.match(text, /^Cannot import cycle\.gltf as scene cycle: node 1\b/);
		assert.deepEqual(await sceneNames(server), before);
		assert.equal(await page.evaluate(() => location.hash), open, 'the open scene stays open');
		await dropFile(page, 'notes.txt', Buffer.from('hello'));
		await poll(async () => /Cannot import notes\.txt: rigd imports glTF \(\.gltf, \.glb\)/.test(await page.textContent('.import-status')), { what: 'the refusal of a .txt' });
		await page.click('.import-status .import-close');
		assert.equal(await page.isVisible('.import-status'), false);
		assert.deepEqual(P.problems.filter((p) => !refusedRequest.test(p)), []);
		P.problems.length = 0;
	});

	it('the Import glTF button takes a file through the same input', async (t) => {
		if (skipWithoutSamples(t)) return;
		const { page } = P;
		await page.setInputFiles('input.import-input', path.join(SAMPLES, 'NegativeScaleTest.gltf'));
		// The hash changes before the page routes to the new scene (on
		// 'hashchange'): until then the hook still answers for the scene
		// that was open. The title changes with the route.
		await page.waitForFunction(
			() => location.hash === '#/scene/NegativeScaleTest' && document.title.startsWith('NegativeScaleTest ') && window.rigd.phase() === 'live' && window.rigd.liveSeq() === 1,
			null,
			{ timeout: 10000 },
		);
		const tree = await rigd.tree(server, 'NegativeScaleTest');
		assert.equal((await page.evaluate(() => window.rigd.tree())).length, tree.nodes.filter((n) => n.parent === null).length);
		assert.deepEqual(P.problems, []);
	});

	it('⇩ glTF downloads the scene as valid glTF, live or at the seq shown', async () => {
		const { page } = P;
		await page.goto(`${server.url}/#/scene/demo`);
		await page.waitForFunction(() => window.rigd.phase() === 'live', null, { timeout: 10000 });
		const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), page.click('button.export-gltf')]);
		assert.equal(download.suggestedFilename(), 'demo.gltf');
		const file = await download.path();
		const bytes = fs.readFileSync(file);
		const report = await validator.validateBytes(new Uint8Array(bytes), { uri: 'demo.gltf', format: 'gltf' });
		assert.equal(report.issues.numErrors, 0, JSON.stringify(report.issues.messages.slice(0, 5)));
		const doc = JSON.parse(bytes.toString('utf8'));
		const tree = await rigd.tree(server, 'demo');
		const exported = doc.nodes.map((n) => n.extras?.rigd?.id).filter(Boolean).sort();
		assert.deepEqual(exported, tree.nodes.map((n) => n.id).sort());

		/* Back in time: the timeline's seq is what is exported. */
		const r = await rigd.postEdit(server, 'demo', { ops: [{ op: 'delete', id: 'hand' }] });
		assert.equal(r.status, 200);
		await page.waitForFunction((seq) => window.rigd.liveSeq() === seq, r.json.seq, { timeout: 5000 });
		const slider = page.locator('.timeline-slider');
		await slider.focus();
		await slider.press('End');
		await slider.press('ArrowLeft');
		await page.waitForFunction((seq) => window.rigd.seq() === seq, r.json.seq - 1, { timeout: 5000 });
		const [past] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), page.click('button.export-gltf')]);
		assert.equal(past.suggestedFilename(), `demo-seq${r.json.seq - 1}.gltf`);
		const then = JSON.parse(fs.readFileSync(await past.path(), 'utf8'));
		assert.ok(then.nodes.some((n) => n.extras?.rigd?.id === 'hand'), 'the past export has the deleted node');
		assert.deepEqual(P.problems, []);
	});
});
