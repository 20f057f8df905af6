/*
 * The 2D viewer's pure parts under node: the model keeps a 2D scene's dims
 * and the server's draw order (taken with the matrices of the same update),
 * binary frames carry the order, and order2d.js's facing and order rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SceneModel, isTwoD } from '../../web/app/model.js';
import { det2, drawOrder, effectiveFacing, zFor, zText } from '../../web/app/order2d.js';
import { WireDecoder } from '../../web/app/wire.js';

const I = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
const MIRROR = [-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
const node = (id, parent, index, extra = {}) => ({ id, parent, index, angle: 0, world: I, ...extra });

/* A binary frame (docs/protocol.md "Binary frames") with float64 matrices. */
function frame(kind, seq, section, bindings, worlds) {
	const name = Buffer.from('fig');
	const json = Buffer.from(JSON.stringify(section));
	const n = bindings.length;
	const w = worlds.length;
	const buf = Buffer.alloc(38 + name.length + 4 * n + 4 * w + 96 * w + json.length);
	buf.write('RIGB', 0, 'latin1');
	buf[4] = 1;
	buf[5] = kind === 'snapshot' ? 1 : 2;
	buf[6] = 8;
	buf.writeBigUInt64LE(BigInt(seq), 8);
	buf.writeUInt32LE(n, 24);
	buf.writeUInt32LE(w, 28);
	buf.writeUInt32LE(json.length, 32);
	buf.writeUInt16LE(name.length, 36);
	name.copy(buf, 38);
	let at = 38 + name.length;
	for (const i of bindings) (buf.writeUInt32LE(i, at), (at += 4));
	for (const [i] of worlds) (buf.writeUInt32LE(i, at), (at += 4));
	for (const [, m] of worlds) for (const c of [0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14]) (buf.writeDoubleLE(m[c], at), (at += 8));
	json.copy(buf, at);
	return buf;
}

describe('2D model', () => {
	it('knows a 2D scene by its dims, its order or its angles', () => {
		assert.equal(isTwoD({ dims: 2, nodes: [] }), true);
		assert.equal(isTwoD({ order: [], nodes: [] }), true);
		assert.equal(isTwoD({ nodes: [{ id: 'a', angle: 0 }] }), true);
		assert.equal(isTwoD({ nodes: [{ id: 'a' }] }), false);
		assert.equal(isTwoD({ dims: 3, order: [], nodes: [] }), false);
	});

	it('keeps the server\'s order and takes an update\'s order with its matrices', () => {
		const m = new SceneModel('fig');
		m.load([node('body', null, 0, { layer: 'f.svg#body' }), node('arm', 'body', 0, { layer: 'f.svg#arm', z: { right: 1, left: -1 } })], 3, { dims: 2, order: ['body', 'arm'] });
		assert.equal(m.dims, 2);
		assert.deepEqual(m.drawOrder, ['body', 'arm']);
		assert.deepEqual(m.get('arm').z, { right: 1, left: -1 });
		assert.equal(m.get('arm').layer, 'f.svg#arm');
		const seen = [];
		m.on('update', (info) => seen.push([info.order, m.drawOrder.join(','), m.get('arm').world[12]]));
		m.applyUpdate({ seq: 4, world: { arm: [...I.slice(0, 12), 5, 0, 0, 1] }, nodes: [], removed: [], order: ['arm', 'body'] });
		m.applyUpdate({ seq: 5, world: { arm: [...I.slice(0, 12), 6, 0, 0, 1] }, nodes: [], removed: [] });
		assert.deepEqual(seen, [[true, 'arm,body', 5], [false, 'arm,body', 6]]);
	});

	it('reads the order from binary frames and refuses a malformed one', () => {
		const d = new WireDecoder();
		const snap = d.decode(frame('snapshot', 2, { nodes: [{ id: 'body', parent: null, index: 0 }], order: ['body'] }, [7], [[7, I]]));
		assert.deepEqual(snap.order, ['body']);
		assert.equal(snap.type, 'snapshot');
		const up = d.decode(frame('update', 3, { nodes: [], removed: [], order: [] }, [], [[7, MIRROR]]));
		assert.deepEqual(up.order, []);
		assert.deepEqual(up.world.body, MIRROR);
		const plain = d.decode(frame('update', 4, { nodes: [], removed: [] }, [], []));
		assert.equal('order' in plain, false);
		assert.match(d.decode(frame('update', 5, { nodes: [], removed: [], order: [3] }, [], [])).error, /^json: order/);
		assert.match(d.decode(frame('update', 6, { nodes: [], removed: [], other: 1 }, [], [])).error, /^json:/);
	});
});

describe('order2d', () => {
	const model = () => {
		const m = new SceneModel('fig');
		m.load(
			[
				node('body', null, 0, { layer: 'f.svg#body', z: 0 }),
				node('armA', 'body', 0, { layer: 'f.svg#armA', z: { right: 1, left: -1 } }),
				node('armB', 'body', 1, { layer: 'f.svg#armB', z: { right: -1, left: 1 } }),
				node('hat', 'body', 2, { layer: 'f.svg#hat', z: 0, facing: 'left' }),
				node('bone', 'body', 3),
			],
			1,
			{ dims: 2 },
		);
		return m;
	};

	it('a node\'s facing is its own, else its ancestors\', else its root\'s natural one', () => {
		const m = model();
		assert.equal(effectiveFacing(m, 'armA'), 'right');
		assert.equal(effectiveFacing(m, 'hat'), 'left');
		m.get('body').world = MIRROR;
		assert.equal(det2(MIRROR), -1);
		assert.equal(effectiveFacing(m, 'armA'), 'left');
		m.get('body').facing = 'right';
		assert.equal(effectiveFacing(m, 'armA'), 'right');
	});

	it('without the server\'s order: by z of the effective facing, ties in preorder', () => {
		const m = model();
		assert.deepEqual(drawOrder(m), ['armB', 'body', 'hat', 'armA']);
		m.get('body').facing = 'left';
		assert.deepEqual(drawOrder(m), ['armA', 'body', 'hat', 'armB']);
		m.drawOrder = ['hat', 'gone', 'body'];
		assert.deepEqual(drawOrder(m), ['hat', 'body'], 'the server\'s order, without ids the model lacks');
		assert.equal(zFor(m.get('armA'), 'left'), -1);
		assert.equal(zText({ right: 1, left: -1 }), 'right 1 / left -1');
		assert.equal(zText({ right: 2, left: 2 }), '2');
		assert.equal(zText(3), '3');
	});
});
