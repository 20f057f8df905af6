/*
 * rigd as cmake --install lays it out, used as an installed program is:
 * the build installed into a fresh prefix, then the installed rigd started
 * from an unrelated working directory with no --web. It must serve the
 * viewer it was installed with (found from its own executable), with every
 * file the page loads (three.js, its controls, DOMPurify) from the install,
 * never from the source or build tree: the 3D demo and the 2D demo
 * character come up live in Chromium with no failed request and no console
 * error. The layout (programs, docs, licences, man pages) and --version
 * of both installed programs are checked too.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launch, rigd } from './lib/browser.mjs';

const BUILD = rigd.BUILD_DIR;

describe('an installed rigd', () => {
	let prefix;
	let server;
	let browser;
	let url;

	before(async () => {
		prefix = path.join(rigd.tempDir(), 'prefix');
		execFileSync('cmake', ['--install', BUILD, '--prefix', prefix], { stdio: 'pipe' });
		const cwd = rigd.tempDir();
		const proc = spawn('timeout', ['--kill-after=5', '240', path.join(prefix, 'bin', 'rigd'),
			'--listen', '127.0.0.1:0', '--db', path.join(cwd, 'rig.db'), '--demo2d', 'on',
			'--sync', 'normal'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
		server = { proc, stderr: '' };
		proc.stderr.on('data', (d) => { server.stderr += d; });
		url = await new Promise((resolve, reject) => {
			let out = '';
			const timer = setTimeout(() => reject(new Error(`rigd did not start:\n${server.stderr}`)), 20000);
			proc.stdout.on('data', (d) => {
				out += d;
				const m = /serving (http:\/\/[^/]+)\//.exec(out);
				if (m) {
					clearTimeout(timer);
					resolve(m[1]);
				}
			});
			proc.on('exit', (code) => reject(new Error(`rigd exited ${code}:\n${server.stderr}`)));
		});
		browser = await launch();
	});

	after(async () => {
		if (browser) await browser.close();
		if (server && server.proc.exitCode === null) {
			server.proc.kill('SIGTERM');
			await new Promise((resolve) => server.proc.on('exit', resolve));
		}
	});

	it('lays out the programs, the viewer, the docs, the licences and the man pages', () => {
		for (const f of ['bin/rigd', 'bin/rigctl', 'share/rigd/web/index.html',
			'share/rigd/web/node_modules/three/build/three.module.js',
			'share/rigd/web/node_modules/dompurify/dist/purify.es.mjs',
			'share/doc/rigd/README.md', 'share/doc/rigd/protocol.md',
			'share/doc/rigd/licenses/three/LICENSE', 'share/doc/rigd/licenses/dompurify/LICENSE',
			'share/man/man1/rigd.1.gz', 'share/man/man1/rigctl.1.gz', 'share/doc/rigd/copyright',
			'lib/systemd/system/rigd.service'])
			assert.ok(fs.existsSync(path.join(prefix, f)), `${f} is installed`);
		for (const prog of ['rigd', 'rigctl']) {
			const v = execFileSync(path.join(prefix, 'bin', prog), ['--version']).toString();
			assert.match(v, new RegExp(`^${prog} \\d+\\.\\d+\\.\\d+`));
		}
		assert.doesNotMatch(server.stderr, /web root .* is not a directory/);
	});

	it('serves its own viewer, byte for byte the installed one', async () => {
		const r = await fetch(`${url}/`);
		assert.equal(r.status, 200);
		assert.equal(await r.text(), fs.readFileSync(path.join(prefix, 'share/rigd/web/index.html'), 'utf8'));
	});

	for (const [scene, what] of [['demo', 'the 3D demo'], ['demo2d', 'the 2D demo character']]) {
		it(`brings ${what} up live with every file from the install`, async () => {
			const context = await browser.newContext({ viewport: { width: 1120, height: 700 } });
			const page = await context.newPage();
			const problems = [];
			page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
			page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
			page.on('requestfailed', (q) => problems.push(`failed: ${q.url()}`));
			page.on('response', (q) => { if (q.status() >= 400) problems.push(`${q.status()}: ${q.url()}`); });
			await page.goto(`${url}/#/scene/${scene}`);
			await page.waitForFunction(() => window.rigd && window.rigd.phase() === 'live', null,
				{ timeout: 20000 });
			const tree = await rigd.tree({ host: new URL(url).hostname, port: Number(new URL(url).port) }, scene);
			assert.ok(tree.nodes.length > 0);
			assert.deepEqual(problems, []);
			await context.close();
		});
	}
});
