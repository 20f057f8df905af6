/*
 * The viewer's decoder of binary frames (web/app/wire.js) under node, no
 * server: frames built here by the layout of docs/protocol.md ("Binary
 * frames") decode into the JSON messages they stand for; float32 elements
 * come out as float32 values; a reused index is bound again; and hostile
 * input (every truncation, every byte of every frame changed, counts past
 * the end, wrong versions, random bytes, a frame inside a larger buffer)
 * gets {error} or a clean decode, never an exception: the decoder's
 * DataView spans exactly the frame, so a read past it would throw.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { WireDecoder, chooseFormat, isBinaryFrame, readHeader } from '../../web/app/wire.js';

/* A frame by the table: kind 1 snapshot / 2 update; nodes [[index, record]];
 * world [{index, m: 12 numbers}]. */
function frame({ kind = 1, elem = 8, seq = 5, from = 0, scene = 'demo', nodes = [], world = [], removed = [], version = 1, json = null }) {
	const name = Buffer.from(scene, 'utf8');
	const section = json ?? JSON.stringify(kind === 1
		? { nodes: nodes.map(([, r]) => r) }
		: { nodes: nodes.map(([, r]) => r), removed });
	const text = Buffer.from(section, 'utf8');
	const size = 38 + name.length + 4 * nodes.length + world.length * (4 + 12 * elem) + text.length;
	const b = Buffer.alloc(size);
	b.write('RIGB', 0, 'latin1');
	b[4] = version;
	b[5] = kind;
	b[6] = elem;
	b.writeBigUInt64LE(BigInt(seq), 8);
	b.writeBigUInt64LE(BigInt(from), 16);
	b.writeUInt32LE(nodes.length, 24);
	b.writeUInt32LE(world.length, 28);
	b.writeUInt32LE(text.length, 32);
	b.writeUInt16LE(name.length, 36);
	name.copy(b, 38);
	let at = 38 + name.length;
	for (const [index] of nodes) { b.writeUInt32LE(index, at); at += 4; }
	for (const w of world) { b.writeUInt32LE(w.index, at); at += 4; }
	for (const w of world) {
		for (const v of w.m) {
			if (elem === 4) b.writeFloatLE(v, at);
			else b.writeDoubleLE(v, at);
			at += elem;
		}
	}
	text.copy(b, at);
	return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

const rec = (id, parent = null) => ({ id, name: null, parent, index: 0, t: [0, 0, 0], r: [0, 0, 0, 1], s: [1, 1, 1] });
const M = (x) => [1, 0, 0, 0, 1, 0, 0, 0, 1, x, 0.1, -0.3];
const M16 = (x) => [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, 0.1, -0.3, 1];

const snapshot = (elem = 8) => frame({
	elem, nodes: [[0, rec('root')], [7, rec('arm', 'root')]],
	world: [{ index: 0, m: M(1) }, { index: 7, m: M(1 / 3) }],
});

describe('binary frames', () => {
	it('a float64 snapshot and update decode into the JSON messages', () => {
		const d = new WireDecoder();
		const s = d.decode(snapshot());
		assert.deepEqual(s, { type: 'snapshot', scene: 'demo', seq: 5, nodes: [
			{ ...rec('root'), world: M16(1) }, { ...rec('arm', 'root'), world: M16(1 / 3) }] });
		const u = d.decode(frame({ kind: 2, seq: 6, from: 5, nodes: [[9, rec('hand', 'arm')]],
			world: [{ index: 7, m: M(2) }, { index: 9, m: M(-0) }], removed: ['gone'] }));
		assert.deepEqual(u, { type: 'update', scene: 'demo', seq: 6,
			world: { arm: M16(2), hand: M16(-0) }, nodes: [{ ...rec('hand', 'arm'), world: M16(-0) }], removed: ['gone'] });
		assert.ok(Object.is(u.world.hand[12], -0), '-0 stays -0');
		assert.equal(readHeader(snapshot()).from, 0);
	});

	it('float32 elements are the float32 values; a reused index is bound again', () => {
		const d = new WireDecoder();
		const s = d.decode(snapshot(4));
		assert.equal(s.nodes[1].world[12], Math.fround(1 / 3));
		assert.notEqual(s.nodes[1].world[12], 1 / 3);
		/* Index 7 (arm) deleted, its index reused by 'leg'. */
		const u = d.decode(frame({ kind: 2, elem: 4, seq: 6, from: 5, nodes: [[7, rec('leg', 'root')]],
			world: [{ index: 7, m: M(4) }], removed: ['arm'] }));
		assert.deepEqual(Object.keys(u.world), ['leg']);
		const v = d.decode(frame({ kind: 2, elem: 4, seq: 7, from: 6, world: [{ index: 7, m: M(5) }] }));
		assert.deepEqual(Object.keys(v.world), ['leg']);
	});

	it('a matrix for an index nobody bound, or for a scene without a snapshot, is an error', () => {
		const d = new WireDecoder();
		assert.match(d.decode(frame({ kind: 2, world: [{ index: 3, m: M(0) }] })).error, /^index/);
		d.decode(snapshot());
		assert.match(d.decode(frame({ kind: 2, world: [{ index: 3, m: M(0) }] })).error, /^index/);
		assert.match(d.decode(frame({ kind: 2, scene: 'other', world: [{ index: 0, m: M(0) }] })).error, /^index/);
	});

	it('names the broken part of a malformed frame', () => {
		const d = new WireDecoder();
		const err = (b) => d.decode(b).error;
		assert.match(err(new Uint8Array(10)), /^length/);
		assert.match(err(frame({ version: 2 })), /^version/);
		assert.match(err(frame({ kind: 3 })), /^kind/);
		assert.match(err(frame({ elem: 2 })), /^format/);
		assert.match(err(frame({ json: '[1]' })), /^json/);
		assert.match(err(frame({ json: '{"nodes":[' })), /^json/);
		assert.match(err(frame({ json: '{"nodes":[],"extra":1}' })), /^json/);
		assert.match(err(frame({ json: '{"nodes":[]}', nodes: [[1, { id: 'a' }]] })), /^json/);
		assert.match(err(frame({ kind: 2, json: '{"nodes":[],"removed":[1]}' })), /^json/);
		assert.match(err(frame({ world: [{ index: 0, m: M(NaN) }], nodes: [[0, rec('a')]] })), /^matrix/);
		const b = snapshot();
		const copy = new Uint8Array(b.length + 1);
		copy.set(b);
		assert.match(err(copy), /^length: trailing/);
		for (const [at, v] of [[24, 0xffffffff], [28, 0xffffffff], [32, 0xffffffff], [24, 3]]) {
			const c = snapshot();
			new DataView(c.buffer, c.byteOffset, c.byteLength).setUint32(at, v, true);
			assert.match(err(c), /^length: counts run past the end/);
		}
		assert.equal(err('not bytes'), 'length: not a byte buffer');
		assert.equal(isBinaryFrame(snapshot()), true);
		assert.equal(isBinaryFrame(new TextEncoder().encode('{"type":"update"}')), false);
	});

	it('never throws: every truncation, every byte changed, random bytes, frames inside larger buffers', () => {
		const frames = [snapshot(), snapshot(4), frame({ kind: 2, seq: 9, from: 5, nodes: [[2, rec('x')]],
			world: [{ index: 2, m: M(3) }, { index: 0, m: M(1) }], removed: ['arm'] })];
		let decoded = 0;
		let refused = 0;
		const tryDecode = (bytes) => {
			const d = new WireDecoder();
			d.decode(snapshot());
			const out = d.decode(bytes);
			if (out.error) refused++;
			else decoded++;
		};
		for (const f of frames) {
			for (let n = 0; n < f.length; n++) tryDecode(f.subarray(0, n));
			for (let i = 0; i < f.length; i++) {
				for (const v of [0, 1, 0x7f, 0x80, 0xff, f[i] ^ 0x20]) {
					const c = f.slice();
					c[i] = v;
					tryDecode(c);
				}
			}
			/* The frame as a view in the middle of a larger buffer. */
			const big = new Uint8Array(f.length + 64).fill(0xee);
			big.set(f, 32);
			tryDecode(big.subarray(32, 32 + f.length));
			tryDecode(big.subarray(32, 32 + f.length - 1));
		}
		let seed = 12345;
		const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
		for (let k = 0; k < 2000; k++) {
			const n = Math.floor(rand() * 200);
			const c = new Uint8Array(n);
			for (let i = 0; i < n; i++) c[i] = Math.floor(rand() * 256);
			if (n >= 8 && rand() < 0.5) c.set([0x52, 0x49, 0x47, 0x42, 1, 1 + (k & 1), k & 2 ? 4 : 8, 0]);
			tryDecode(c);
		}
		assert.ok(refused > 1000 && decoded > 3, `refused ${refused}, decoded ${decoded}`);
	});

	it('the viewer subscribes with float32 unless the page or the setting asks for another', () => {
		assert.equal(chooseFormat('', null), 'f32');
		assert.equal(chooseFormat('?format=f64', null), 'f64');
		assert.equal(chooseFormat('?format=json', 'f64'), 'json');
		assert.equal(chooseFormat('', 'f64'), 'f64');
		assert.equal(chooseFormat('?format=f16', 'nonsense'), 'f32');
	});
});
