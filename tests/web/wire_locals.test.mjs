/*
 * The viewer's decoder (web/app/wire.js) on updates of version 2
 * (docs/protocol.md, "Locals entries (version 2)"), under node, no server:
 * after a snapshot binds indices 0..3 with their records, the committed
 * fuzz corpus's locals frames (tests/fuzz/corpus/bin/locals-*.bin, built
 * by the table) decode into whole records with the entries' channels and
 * sibling index, in 3D and 2D (angle, order, hidden), float32 and float64;
 * the record kept is the new one; and an entry for an unbound index, a bad
 * channel count, no entries, every truncation and every changed byte give
 * {error} or a clean decode, never an exception.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { WireDecoder, readHeader } from '../../web/app/wire.js';

const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fuzz', 'corpus', 'bin');
const load = (name) => new Uint8Array(fs.readFileSync(path.join(CORPUS, name)));

/* A version 1 snapshot of scene 'fz' binding index i to records[i]. */
function snapshot(records) {
	const name = Buffer.from('fz');
	const text = Buffer.from(JSON.stringify({ nodes: records }));
	const b = Buffer.alloc(38 + name.length + 4 * records.length + records.length * (4 + 96) + text.length);
	b.write('RIGB', 0, 'latin1');
	b[4] = 1; b[5] = 1; b[6] = 8;
	b.writeBigUInt64LE(1n, 8);
	b.writeUInt32LE(records.length, 24);
	b.writeUInt32LE(records.length, 28);
	b.writeUInt32LE(text.length, 32);
	b.writeUInt16LE(name.length, 36);
	name.copy(b, 38);
	let at = 38 + name.length;
	for (let i = 0; i < records.length; i++) { b.writeUInt32LE(i, at); at += 4; }
	for (let i = 0; i < records.length; i++) { b.writeUInt32LE(i, at); at += 4; }
	for (let i = 0; i < records.length; i++) {
		for (const v of [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]) { b.writeDoubleLE(v, at); at += 8; }
	}
	text.copy(b, at);
	return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

const rec = (id, parent, index, twoD) => ({
	id, name: null, parent, index, t: [0, 0, 0], r: [0, 0, 0, 1], ...(twoD ? { angle: 0 } : {}),
	s: [1, 1, 1], pivot: [0, 0, 0], euler: [0, 0, 0], bounds: null, mesh: null, kind: 'group',
	camera: { fov: 60, near: 0.1, far: 1000 }, visible: true,
	...(twoD ? { layer: null, z: 0, facing: null } : {}),
});
const scene = (twoD) => [rec('root', null, 0, twoD), rec('arm', 'root', 0, twoD), rec('hand', 'arm', 0, twoD), rec('b2', null, 1, twoD)];
const Q = [0, 0, 0.38268343236508984, 0.9238795325112867];

function decoder(twoD = false) {
	const d = new WireDecoder();
	assert.equal(d.decode(snapshot(scene(twoD))).type, 'snapshot');
	return d;
}

describe('locals entries', () => {
	it('a float32 update of version 2 gives the whole record with the new channels', () => {
		const d = decoder();
		const buf = load('locals-f32.bin');
		const h = readHeader(buf);
		assert.equal(h.version, 2);
		assert.equal(h.nLocals, 1);
		assert.equal(h.channels, 16);
		const u = d.decode(buf);
		assert.equal(u.error, undefined, u.error);
		assert.equal(u.type, 'update');
		assert.equal(u.nodes.length, 1);
		const { world, ...r } = u.nodes[0];
		assert.deepEqual(r, { ...rec('hand', 'arm', 0), t: [0.1, 0.2, 0.3], r: Q, s: [1, 2, 0.5], pivot: [0.01, 0, -0.02], euler: [0, 0, 45] });
		assert.deepEqual(world, u.world.hand);
		assert.deepEqual(Object.keys(r), Object.keys(rec('hand', 'arm', 0)), 'the members keep their order');
		/* The record kept is the new one. */
		assert.deepEqual(d.records.get('fz').get(2), r);
	});

	it('two entries in float64; a 2D entry carries the angle with order and hidden', () => {
		const u = decoder().decode(load('locals-f64-two.bin'));
		assert.equal(u.error, undefined, u.error);
		assert.deepEqual(u.nodes.map((n) => n.id), ['hand', 'arm']);
		const v = decoder(true).decode(load('locals-2d-order-hidden.bin'));
		assert.equal(v.error, undefined, v.error);
		assert.deepEqual(v.nodes.map((n) => n.id), ['b2', 'hand']);
		assert.equal(v.nodes[1].angle, 45);
		assert.equal(v.nodes[1].index, 1);
		assert.deepEqual(v.order, ['root', 'arm', 'hand', 'b2']);
		assert.deepEqual(v.hidden, ['b2']);
	});

	it('refuses what it must and never throws', () => {
		const buf = load('locals-f32.bin');
		assert.match(new WireDecoder().decode(buf).error, /^index/, 'an entry for an unbound index');
		const bad = buf.slice();
		bad[7] = 15;
		assert.match(decoder().decode(bad).error, /^version/);
		const none = buf.slice();
		none[36] = 0;
		assert.ok(decoder().decode(none).error);
		for (const name of ['locals-f32.bin', 'locals-f64-two.bin', 'locals-2d-order-hidden.bin']) {
			const f = load(name);
			for (let n = 0; n < f.length; n++) assert.ok(decoder().decode(f.slice(0, n)).error, `${name} cut at ${n}`);
			for (let i = 0; i < f.length; i++) {
				const g = f.slice();
				g[i] ^= 0xa5;
				const m = decoder(name.includes('2d')).decode(g);
				assert.ok(m.error || m.type === 'update', `${name} byte ${i}`);
			}
		}
	});
});
