/*
 * The viewer's pure modules under node, no browser: matrix arithmetic on
 * server matrices (against the numbers of docs/transforms.md), the scene model fed
 * with snapshots and updates, subtree boxes, and the session's edit
 * discipline (coalescing, gesture undo, resend after a dropped connection)
 * over a fake websocket.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Connection } from '../../web/app/connection.js';
import { det3, eulerDegFromQuat, invertAffine, multiply, quatFromEulerDeg, shear, transformPoint, worldBox } from '../../web/app/mat.js';
import { SceneModel } from '../../web/app/model.js';
import { subtreeBoxes } from '../../web/app/overlays.js';
import { SceneSession } from '../../web/app/session.js';
import { AUTO_INTEREST_NODES, AUTO_INTEREST_OFF_NODES, InterestControl, VIEW_INTERVAL_MS, interestMode, wantsInterest } from '../../web/app/interest.js';
import { Emitter, backoffDelay, fmt, validId } from '../../web/app/util.js';

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

/* Column-major builders for test fixtures (the browser never composes). */
const T = (x, y, z) => [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1];
const S = (x, y, z) => [x, 0, 0, 0, 0, y, 0, 0, 0, 0, z, 0, 0, 0, 0, 1];
const Rz = (deg) => {
	const c = Math.cos((deg * Math.PI) / 180);
	const s = Math.sin((deg * Math.PI) / 180);
	return [c, s, 0, 0, -s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
};
const Ry = (deg) => {
	const c = Math.cos((deg * Math.PI) / 180);
	const s = Math.sin((deg * Math.PI) / 180);
	return [c, 0, -s, 0, 0, 1, 0, 0, s, 0, c, 0, 0, 0, 0, 1];
};

/* The demo rig at its default pose (docs/transforms.md 4.1), as the server sends it. */
function demoNodes() {
	const base = multiply(T(0, 0.2, 0), Ry(30));
	const arm = multiply(base, multiply(T(0, 0.2, 0), multiply(Rz(40), T(0, 0.7, 0))));
	const hand = multiply(arm, T(0, 0.7, 0));
	const node = (id, parent, index, world, half) => ({
		id, parent, index, world, t: [0, 0, 0], r: [0, 0, 0, 1], s: [1, 1, 1], pivot: [0, 0, 0], euler: [0, 0, 0],
		bounds: { min: half.map((v) => -v), max: half }, mesh: 'box', kind: 'mesh', visible: true, name: null,
		camera: { fov: 60, near: 0.1, far: 1000 },
	});
	return [
		node('base', null, 0, base, [0.35, 0.2, 0.35]),
		node('arm', 'base', 0, arm, [0.12, 0.7, 0.12]),
		node('hand', 'arm', 0, hand, [0.22, 0.12, 0.22]),
	];
}

describe('mat: derived quantities of server matrices', () => {
	it('reads the hand\'s world position and a positive determinant (transforms.md 4.1)', () => {
		const hand = demoNodes()[2].world;
		const p = transformPoint(hand, [0, 0, 0]);
		[-0.779, 1.472, 0.45].forEach((v, i) => close(p[i], v, 5e-4, `hand ${i}`));
		close(det3(hand), 1, 1e-12, 'det');
	});

	it('world boxes and the whole tree\'s box match transforms.md 8.1', () => {
		const [base, arm, hand] = demoNodes();
		const x = (n) => worldBox(n.world, n.bounds);
		close(x(base).min[0], -0.478, 5e-4, 'base min x');
		close(x(base).max[0], 0.478, 5e-4, 'base max x');
		close(x(arm).min[0], -0.919, 5e-4, 'arm min x');
		close(x(arm).max[0], 0.14, 5e-4, 'arm max x');
		close(x(hand).min[0], -1.102, 5e-4, 'hand min x');
		close(x(hand).max[0], -0.457, 5e-4, 'hand max x');
		const model = new SceneModel('demo');
		model.load(demoNodes(), 1);
		const boxes = new Map(subtreeBoxes(model).map((b) => [b.id, b]));
		close(boxes.get('arm').box.min[0], -1.102, 5e-4, 'arm subtree min x');
		close(boxes.get('arm').box.max[0], 0.14, 5e-4, 'arm subtree max x');
		const tree = boxes.get('base').box;
		close(tree.min[0], -1.102, 5e-4, 'tree min x');
		close(tree.max[0], 0.478, 5e-4, 'tree max x');
		const centre = tree.min.map((v, i) => (v + tree.max[i]) / 2);
		const radius = Math.hypot(...tree.min.map((v, i) => tree.max[i] - v)) / 2;
		[-0.312, 0.853, 0.143].forEach((v, i) => close(centre[i], v, 5e-4, `sphere centre ${i}`));
		close(radius, 1.318, 5e-4, 'sphere radius');
		assert.equal(boxes.get('hand').leaf, true);
	});

	it('measures inherited shear (transforms.md 9.2) and none for a scale below a rotation (9.3)', () => {
		const sheared = shear(multiply(S(2, 1, 1), Rz(45)));
		close(sheared.deg, 126.87, 0.005, 'angle between x and y');
		assert.equal(sheared.axes, 'xy');
		close(shear(multiply(S(1, 3, 1), Rz(30))).deg, 40.9, 0.05, 'exercise 9, sheared');
		close(shear(multiply(Rz(30), S(1, 3, 1))).deg, 90, 1e-9, 'exercise 9, safe order');
	});

	it('a mirror has a negative determinant; the inverse undoes W', () => {
		const W = multiply(S(-1, 1, 1), demoNodes()[1].world);
		assert.ok(det3(W) < 0);
		const I = multiply(invertAffine(W), W);
		I.forEach((v, k) => close(v, k % 5 === 0 ? 1 : 0, 1e-12, `I[${k}]`));
		assert.equal(invertAffine(S(0, 1, 1)), null, 'a singular matrix has no inverse');
	});

	it('the camera on the hand: view = W^-1 sends its eye to the origin (transforms.md 5.3)', () => {
		const cam = multiply(demoNodes()[2].world, T(0, 0.3, 0));
		[-0.946, 1.702, 0.546].forEach((v, i) => close(cam[12 + i], v, 5e-4, `camera ${i}`));
		const V = invertAffine(cam);
		transformPoint(V, cam.slice(12, 15)).forEach((v) => close(v, 0, 1e-12, 'eye'));
		close(V[13], -2.01, 5e-3, 'V row 2 translation');
	});

	it('Euler XYZ and quaternions agree with the glTF example (transforms.md 10)', () => {
		quatFromEulerDeg([0, 30, 0]).forEach((v, i) => close(v, [0, 0.2588, 0, 0.9659][i], 5e-5, `yaw ${i}`));
		quatFromEulerDeg([0, 0, 40]).forEach((v, i) => close(v, [0, 0, 0.342, 0.9397][i], 5e-5, `bend ${i}`));
		const e = eulerDegFromQuat(quatFromEulerDeg([10, -20, 130]));
		[10, -20, 130].forEach((v, i) => close(e[i], v, 1e-9, `round trip ${i}`));
	});
});

describe('model: snapshots and updates', () => {
	it('loads a snapshot in tree order', () => {
		const m = new SceneModel('demo');
		m.load(demoNodes(), 1);
		assert.deepEqual(m.shape(), [['base', [['arm', [['hand', []]]]]]]);
		assert.deepEqual(m.order(), ['base', 'arm', 'hand']);
		assert.equal(m.depth('hand'), 2);
		assert.ok(m.isAncestor('base', 'hand'));
		assert.ok(!m.isAncestor('hand', 'base'));
	});

	it('applies worlds, moves, creations and removals exactly as sent', () => {
		const m = new SceneModel('demo');
		m.load(demoNodes(), 1);
		const events = [];
		m.on('update', (info) => events.push(info));
		const hand = { ...demoNodes()[2], parent: 'base', index: 1 };
		const newWorld = T(1, 2, 3);
		let info = m.applyUpdate({ seq: 2, world: { hand: newWorld }, nodes: [hand], removed: [] });
		assert.deepEqual(m.shape(), [['base', [['arm', []], ['hand', []]]]]);
		assert.deepEqual(m.get('hand').world, newWorld);
		assert.ok(info.structure);
		assert.deepEqual([...info.world], ['hand']);
		// Two new nodes in one update, the child listed before its sibling's
		// earlier index, and one inserted before an existing sibling.
		const mk = (id, parent, index) => ({ ...demoNodes()[0], id, parent, index, world: T(index, 0, 0) });
		info = m.applyUpdate({ seq: 3, world: {}, nodes: [mk('c', 'base', 2), mk('a', 'base', 0), mk('x', 'a', 0)], removed: [] });
		assert.deepEqual(m.shape(), [['base', [['a', [['x', []]]], ['arm', []], ['c', []], ['hand', []]]]]);
		assert.deepEqual([...info.created].sort(), ['a', 'c', 'x']);
		assert.equal(m.get('hand').index, 3);
		// Deleting a subtree (the server lists every node of it).
		info = m.applyUpdate({ seq: 4, world: {}, nodes: [], removed: ['a', 'x'] });
		assert.deepEqual(m.shape(), [['base', [['arm', []], ['c', []], ['hand', []]]]]);
		assert.equal(m.size, 4);
		// A stale update is ignored.
		assert.equal(m.applyUpdate({ seq: 3, world: { hand: T(9, 9, 9) }, nodes: [], removed: [] }), null);
		assert.deepEqual(m.get('hand').world, newWorld);
		assert.equal(events.length, 3);
	});

	it('drops the orphans of a removed node the server did not list', () => {
		const m = new SceneModel('demo');
		m.load(demoNodes(), 1);
		m.applyUpdate({ seq: 2, world: {}, nodes: [], removed: ['arm'] });
		assert.deepEqual(m.shape(), [['base', []]]);
		assert.equal(m.get('hand'), undefined);
	});

	it('refuses a snapshot whose parent is missing, with the node named', () => {
		const m = new SceneModel('demo');
		assert.throws(() => m.load([{ ...demoNodes()[1] }], 1), /'arm'.*'base'/);
	});
});

describe('util', () => {
	it('backs off exponentially with jitter, up to a cap', () => {
		const mid = () => 0.5;
		assert.deepEqual([0, 1, 2, 3, 10].map((n) => backoffDelay(n, { random: mid })), [250, 500, 1000, 2000, 8000]);
		for (let n = 0; n < 30; n++) {
			const d = backoffDelay(n);
			assert.ok(d >= 200 && d <= 9600, `attempt ${n}: ${d}`);
		}
	});
	it('formats without negative zero and checks ids like the server', () => {
		assert.equal(fmt(-0.0001, 3), '0.000');
		assert.equal(fmt(-1.2345, 2), '-1.23');
		assert.ok(validId('arm_2.l:x-1'));
		assert.ok(!validId('arm 2'));
		assert.ok(!validId(''));
		assert.ok(!validId('x'.repeat(65)));
	});
});

/* A websocket stand-in: records what is sent, lets the test answer. */
class FakeSocket {
	static last = null;
	constructor(url) {
		this.url = url;
		this.readyState = 0;
		this.sent = [];
		FakeSocket.last = this;
		queueMicrotask(() => {
			this.readyState = 1;
			this.onopen && this.onopen();
		});
	}
	send(text) {
		this.sent.push(JSON.parse(text));
	}
	close() {
		this.readyState = 3;
	}
	reply(msg) {
		this.onmessage({ data: JSON.stringify(msg) });
	}
	drop() {
		this.readyState = 3;
		this.onclose({ code: 1006, reason: '' });
	}
	ofType(type) {
		return this.sent.filter((m) => m.type === type);
	}
}

const tick = () => new Promise((r) => setTimeout(r, 0));

async function liveSession() {
	const conn = new Connection('ws://test/ws', { WebSocketImpl: FakeSocket });
	conn.open();
	await tick();
	const session = new SceneSession(conn, 'demo', { clientId: 'web-test' });
	await tick();
	const sock = FakeSocket.last;
	sock.reply({ type: 'snapshot', scene: 'demo', seq: 1, nodes: demoNodes() });
	return { conn, session, sock };
}

describe('session: the edit discipline', () => {
	it('keeps one batch per control in flight and sends only the latest value after it', async () => {
		const { conn, session, sock } = await liveSession();
		const results = [];
		for (let y = 1; y <= 5; y++) results.push(session.live('base:euler', [{ op: 'set', id: 'base', euler: [0, y, 0] }]));
		let edits = sock.ofType('edit');
		assert.equal(edits.length, 1, 'one in flight');
		sock.reply({ type: 'ack', req: edits[0].req, seq: 2, recomputed: 3 });
		await tick();
		edits = sock.ofType('edit');
		assert.equal(edits.length, 2);
		assert.deepEqual(edits[1].ops[0].euler, [0, 5, 0], 'the superseded values were never sent');
		sock.reply({ type: 'ack', req: edits[1].req, seq: 3, recomputed: 3 });
		const settled = await Promise.all(results);
		assert.deepEqual(settled.map((a) => a && a.seq), [2, null, null, null, 3]);
		assert.ok(edits[1].client_seq > edits[0].client_seq);
		assert.equal(edits[0].client, 'web-test');
		conn.close();
	});

	it('undoes a gesture of several batches with one undo per batch, sent together', async () => {
		const { conn, session, sock } = await liveSession();
		session.beginGesture();
		for (let y = 1; y <= 3; y++) {
			const p = session.edit([{ op: 'set', id: 'base', euler: [0, y, 0] }]);
			const e = sock.ofType('edit').at(-1);
			sock.reply({ type: 'ack', req: e.req, seq: 1 + y, recomputed: 3 });
			await p;
		}
		session.endGesture();
		assert.ok(session.canUndo);
		const undone = session.undo();
		await tick();
		const undos = sock.ofType('undo');
		assert.equal(undos.length, 3, 'all three at once');
		assert.ok(undos.every((u) => u.client === 'web-test'));
		undos.forEach((u, i) => sock.reply({ type: 'ack', req: u.req, seq: 5 + i, recomputed: 3 }));
		assert.equal(await undone, 3);
		assert.ok(!session.canUndo);
		assert.ok(session.canRedo);
		// A refused redo names the server's reason and forgets the redo stack.
		const redone = session.redo();
		await tick();
		for (const r of sock.ofType('redo')) sock.reply({ type: 'error', req: r.req, code: 'undo_conflict', message: 'op 0: unknown node \'base\'' });
		await assert.rejects(redone, (err) => err.code === 'undo_conflict' && /base/.test(err.message));
		assert.ok(!session.canRedo);
		conn.close();
	});

	it('runs an undo and a redo asked for back to back one after the other, neither dropped', async () => {
		const { conn, session, sock } = await liveSession();
		for (let y = 1; y <= 2; y++) {
			const p = session.edit([{ op: 'set', id: 'base', euler: [0, y, 0] }]);
			sock.reply({ type: 'ack', req: sock.ofType('edit').at(-1).req, seq: 1 + y, recomputed: 3 });
			await p;
		}
		// Two undos and a redo before the server answers any of them.
		const steps = [session.undo(), session.undo(), session.redo()];
		assert.ok(!session.canUndo && !session.canRedo, 'the buttons wait while steps are queued');
		for (const [k, type] of ['undo', 'undo', 'redo'].entries()) {
			await tick();
			const sent = [...sock.ofType('undo'), ...sock.ofType('redo')];
			assert.equal(sent.length, k + 1, `step ${k} sent only after the one before it ended`);
			assert.equal(sent.at(-1).type, type);
			sock.reply({ type: 'ack', req: sent.at(-1).req, seq: 4 + k, recomputed: 3 });
		}
		assert.deepEqual(await Promise.all(steps), [1, 1, 1]);
		assert.ok(session.canUndo && session.canRedo, 'one edit left to undo, one undo to redo');
		conn.close();
	});

	it('waits for a released drag\'s last batches before counting what to undo', async () => {
		const { conn, session, sock } = await liveSession();
		session.beginGesture();
		const a = session.live('k', [{ op: 'set', id: 'base', t: [1, 0, 0] }]);
		const b = session.live('k', [{ op: 'set', id: 'base', t: [2, 0, 0] }]);
		session.endGesture();
		const undone = session.undo();
		await tick();
		assert.equal(sock.ofType('undo').length, 0, 'nothing undone while the drag is unanswered');
		sock.reply({ type: 'ack', req: sock.ofType('edit')[0].req, seq: 2, recomputed: 3 });
		await tick();
		assert.equal(sock.ofType('undo').length, 0);
		sock.reply({ type: 'ack', req: sock.ofType('edit')[1].req, seq: 3, recomputed: 3 });
		await Promise.all([a, b]);
		await tick();
		const undos = sock.ofType('undo');
		assert.equal(undos.length, 2, 'both batches of the drag');
		undos.forEach((u, i) => sock.reply({ type: 'ack', req: u.req, seq: 4 + i, recomputed: 3 }));
		assert.equal(await undone, 2);
		conn.close();
	});

	it('resends an unanswered batch after reconnecting, with the same client_seq', async () => {
		const { conn, session, sock } = await liveSession();
		const pending = session.edit([{ op: 'set', id: 'hand', t: [0, 0.8, 0] }]);
		const first = sock.ofType('edit')[0];
		sock.drop();
		assert.equal(conn.state.state, 'waiting');
		conn.retryNow();
		await tick();
		const sock2 = FakeSocket.last;
		assert.notEqual(sock2, sock);
		assert.equal(sock2.ofType('subscribe').length, 1, 'subscribes again');
		assert.equal(sock2.ofType('edit').length, 0, 'waits for the snapshot before resending');
		sock2.reply({ type: 'snapshot', scene: 'demo', seq: 7, nodes: demoNodes() });
		const again = sock2.ofType('edit');
		assert.equal(again.length, 1);
		assert.equal(again[0].client_seq, first.client_seq);
		assert.deepEqual(again[0].ops, first.ops);
		sock2.reply({ type: 'ack', req: again[0].req, seq: 6, recomputed: 1 });
		assert.equal((await pending).seq, 6);
		assert.equal(session.model.seq, 7, 'resynchronised from the snapshot');
		conn.close();
	});

	it('reports a refused edit with the server\'s code, op and field', async () => {
		const { conn, session, sock } = await liveSession();
		const p = session.edit([{ op: 'set', id: 'nope', t: [0, 0, 0] }]);
		const e = sock.ofType('edit')[0];
		sock.reply({ type: 'error', req: e.req, code: 'unknown_node', message: "op 0: unknown node 'nope'", op: 0, field: 'id' });
		await assert.rejects(p, (err) => err.code === 'unknown_node' && err.op === 0 && err.field === 'id' && /nope/.test(err.message));
		assert.ok(!session.canUndo, 'a refused batch is not on the undo stack');
		conn.close();
	});

	it('tracks who else is here from join, presence and leave', async () => {
		const { conn, session, sock } = await liveSession();
		sock.reply({ type: 'join', scene: 'demo', client: 'c1', name: null });
		sock.reply({ type: 'presence', scene: 'demo', client: 'c1', name: 'bob', selection: ['arm'] });
		assert.deepEqual([...session.others.values()], [{ client: 'c1', name: 'bob', selection: ['arm'] }]);
		sock.reply({ type: 'presence', scene: 'other', client: 'c2', name: 'eve', selection: [] });
		assert.equal(session.others.size, 1, 'another scene\'s presence is not ours');
		sock.reply({ type: 'leave', scene: 'demo', client: 'c1' });
		assert.equal(session.others.size, 0);
		session.setSelection(['hand']);
		assert.deepEqual(sock.ofType('presence').at(-1), { type: 'presence', scene: 'demo', selection: ['hand'], name: 'guest' });
		conn.close();
	});
});

describe('interest: when the viewer declares its view', () => {
	it('reads ?interest= as auto, on or off', () => {
		assert.equal(interestMode(''), 'auto');
		assert.equal(interestMode('?interest=auto'), 'auto');
		assert.equal(interestMode('?interest=bogus'), 'auto');
		assert.equal(interestMode('?interest=on'), 'on');
		assert.equal(interestMode('?interest=1&min_px=2'), 'on');
		assert.equal(interestMode('?interest=off'), 'off');
		assert.equal(interestMode('?format=f64&interest=0'), 'off');
	});

	it('auto: on from AUTO_INTEREST_NODES, off under AUTO_INTEREST_OFF_NODES, never for 2D', () => {
		assert.ok(AUTO_INTEREST_OFF_NODES < AUTO_INTEREST_NODES);
		const auto = (nodes, wasOn, dims = 3) => wantsInterest('auto', { dims, nodes }, wasOn);
		assert.equal(auto(AUTO_INTEREST_NODES - 1, false), false);
		assert.equal(auto(AUTO_INTEREST_NODES, false), true);
		assert.equal(auto(AUTO_INTEREST_OFF_NODES, true), true, 'kept on down to the lower threshold');
		assert.equal(auto(AUTO_INTEREST_OFF_NODES - 1, true), false);
		assert.equal(auto(100000, false, 2), false, 'a 2D scene');
		assert.equal(wantsInterest('on', { dims: 3, nodes: 3 }), true);
		assert.equal(wantsInterest('on', { dims: 2, nodes: 3 }), false);
		assert.equal(wantsInterest('off', { dims: 3, nodes: 100000 }), false);
	});

	it('follows the scene: a view once it grows past the threshold, a clear once it shrinks under', async () => {
		const { conn, session, sock } = await liveSession();
		const viewport = new Emitter();
		viewport.currentView = () => ({ vp: Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)), viewport: [800, 600] });
		const control = new InterestControl(session, viewport, { mode: 'auto' });
		assert.equal(control.enabled, false);
		assert.equal(sock.ofType('view').length, 0, 'the demo is small: no view');
		const many = Array.from({ length: AUTO_INTEREST_NODES }, (_, i) => ({ id: `n${i}`, parent: null, index: 1 + i, world: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] }));
		sock.reply({ type: 'update', scene: 'demo', seq: 2, nodes: many, world: {}, removed: [] });
		assert.equal(control.enabled, true);
		const views = sock.ofType('view');
		assert.equal(views.length, 1);
		assert.deepEqual(views[0].viewport, [800, 600]);
		sock.reply({ type: 'ack', req: views[0].req, seq: 2, recomputed: 0 });
		sock.reply({ type: 'update', scene: 'demo', seq: 2, nodes: [], world: {}, removed: [], hidden: ['n0', 'n1'] });
		assert.equal(session.viewApplied, 1);
		assert.ok(session.model.get('n0').hidden);
		/* Down to AUTO_INTEREST_OFF_NODES: still on; one fewer: cleared. */
		const size = session.model.size;
		sock.reply({ type: 'update', scene: 'demo', seq: 3, nodes: [], world: {}, removed: many.slice(0, size - AUTO_INTEREST_OFF_NODES).map((n) => n.id), hidden: [] });
		assert.equal(session.model.size, AUTO_INTEREST_OFF_NODES);
		assert.equal(control.enabled, true);
		sock.reply({ type: 'update', scene: 'demo', seq: 4, nodes: [], world: {}, removed: ['n1999'], hidden: [] });
		assert.equal(control.enabled, false);
		assert.deepEqual(sock.ofType('view').at(-1), { type: 'view', scene: 'demo', req: 'view-2', clear: true });
		/* The camera moves on: nothing more is sent. */
		viewport.emit('camera', viewport.currentView());
		assert.equal(sock.ofType('view').length, 2);
		control.dispose();
		conn.close();
	});

	it('the view\'s "always" is the selection, sent again when the selection changes', async () => {
		const { conn, session, sock } = await liveSession();
		const viewport = new Emitter();
		viewport.currentView = () => ({ vp: Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)), viewport: [800, 600] });
		const control = new InterestControl(session, viewport, { mode: 'on' });
		assert.equal(sock.ofType('view').at(-1).always, undefined, 'nothing selected');
		session.setSelection(['hand']);
		assert.deepEqual(sock.ofType('view').at(-1).always, ['hand']);
		assert.deepEqual(sock.ofType('view').at(-1).viewport, [800, 600], 'the same camera');
		const n = sock.ofType('view').length;
		session.setSelection(['hand']);
		assert.equal(sock.ofType('view').length, n, 'the same selection sends nothing');
		viewport.emit('camera', { vp: viewport.currentView().vp, viewport: [640, 480] });
		await new Promise((r) => setTimeout(r, VIEW_INTERVAL_MS + 50));
		assert.deepEqual(sock.ofType('view').at(-1).always, ['hand'], 'a camera move keeps it');
		session.setSelection(Array.from({ length: 300 }, (_, i) => `n${i}`));
		assert.equal(sock.ofType('view').at(-1).always.length, 256, 'at most 256 ids');
		session.setSelection([]);
		assert.equal(sock.ofType('view').at(-1).always, undefined);
		control.dispose();
		conn.close();
	});

	it('?interest=on: a view for a small 3D scene, none for a 2D one', async () => {
		const { conn, session, sock } = await liveSession();
		const viewport = new Emitter();
		viewport.currentView = () => ({ vp: Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)), viewport: [800, 600] });
		const control = new InterestControl(session, viewport, { mode: 'on' });
		assert.equal(control.enabled, true);
		assert.equal(sock.ofType('view').length, 1);
		sock.reply({ type: 'snapshot', scene: 'demo', seq: 5, dims: 2, nodes: [{ id: 'root', parent: null, index: 0 }], order: ['root'] });
		assert.equal(control.enabled, false, 'a 2D scene');
		assert.equal(sock.ofType('view').at(-1).clear, true);
		control.dispose();
		conn.close();
	});
});
