/*
 * wire.js: rigd's binary snapshot and update frames (docs/protocol.md,
 * "Binary frames"), decoded into the very message a JSON subscriber gets:
 * {type:'snapshot', scene, seq, nodes} or {type:'update', scene, seq,
 * world: {id: [16]}, nodes, removed} (and a 2D scene's order, when its frame
 * carries one), every node record with its "world"
 * (column-major, 16 numbers, the fourth row 0 0 0 1). float64 frames give
 * the server's doubles bit for bit; float32 frames each element rounded
 * to float32. An update of version 2 also carries locals entries: nodes
 * whose record changed in its transform channels only, sent as numbers;
 * the decoder keeps every index's last record and gives each such node its
 * whole record, as a JSON subscriber gets it.
 *
 * Pure: no DOM, no sockets; runs in the browser and under node. It never
 * throws on bad input and never reads past the buffer: every length is
 * checked against the bytes before anything after the header is read, and
 * a malformed frame is reported as {error}.
 */

export const FORMATS = ['json', 'f32', 'f64'];
const HEAD = 38;
const HEAD_LOCALS = 42;
/* A locals entry's channels after its index and sibling index, as float64. */
const CHANNELS = {
	16: [['t', 3], ['r', 4], ['s', 3], ['pivot', 3], ['euler', 3]],
	17: [['t', 3], ['r', 4], ['angle', 1], ['s', 3], ['pivot', 3], ['euler', 3]],
};
const MAX_INDEX = 1 << 27;
const KINDS = { 1: 'snapshot', 2: 'update' };

/*
 * The format the viewer subscribes with: ?format= in the page's query
 * string ('search'), else the stored setting ('stored', localStorage's
 * rigd.format), else float32. An unknown name counts as absent.
 */
export function chooseFormat(search, stored) {
	const asked = new URLSearchParams(search || '').get('format');
	if (FORMATS.includes(asked)) return asked;
	if (FORMATS.includes(stored)) return stored;
	return 'f32';
}

/* True when 'buf' (ArrayBuffer or a typed array's view) starts with the magic. */
export function isBinaryFrame(buf) {
	const b = bytesOf(buf);
	return b !== null && b.length >= 4 && b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x47 && b[3] === 0x42;
}

function bytesOf(buf) {
	if (buf instanceof ArrayBuffer) return new Uint8Array(buf);
	if (ArrayBuffer.isView(buf)) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
	return null;
}

/*
 * The header and the places of a frame's parts: {version, kind, elem, seq,
 * from, scene, nNodes, nWorld, jsonLen, nLocals, channels, nodeAt, worldAt,
 * matAt, localsAt, jsonAt}, or
 * {error} naming what is wrong. seq and from are Numbers (exact below 2^53).
 */
export function readHeader(buf) {
	const b = bytesOf(buf);
	if (!b) return { error: 'length: not a byte buffer' };
	if (b.length < HEAD) return { error: 'length: shorter than its header' };
	if (!isBinaryFrame(b)) return { error: 'magic: does not start with RIGB' };
	const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
	const version = b[4];
	if (version !== 1 && version !== 2) return { error: `version: unknown version ${b[4]}` };
	const kind = KINDS[b[5]];
	if (!kind) return { error: `kind: unknown kind ${b[5]}` };
	const elem = b[6];
	if (elem !== 4 && elem !== 8) return { error: 'format: element size must be 4 or 8' };
	if (version === 1 && b[7] !== 0) return { error: 'format: element size must be 4 or 8, reserved byte 0' };
	if (version === 2 && !CHANNELS[b[7]]) return { error: 'version: version 2 needs 16 or 17 channels (byte 7)' };
	const head = version === 1 ? HEAD : HEAD_LOCALS;
	if (b.length < head) return { error: 'length: shorter than its header' };
	const u64 = (at) => v.getUint32(at, true) + v.getUint32(at + 4, true) * 2 ** 32;
	const h = {
		version, kind, elem, seq: u64(8), from: u64(16),
		nNodes: v.getUint32(24, true), nWorld: v.getUint32(28, true), jsonLen: v.getUint32(32, true),
		nLocals: version === 1 ? 0 : v.getUint32(36, true), channels: version === 1 ? 0 : b[7],
	};
	if (version === 2 && (kind !== 'update' || h.nLocals === 0)) return { error: 'locals: version 2 is an update with locals entries' };
	const nameLen = v.getUint16(head - 2, true);
	const need = head + nameLen + 4 * h.nNodes + h.nWorld * (4 + 12 * elem) + h.nLocals * (8 + 8 * h.channels) + h.jsonLen;
	if (need !== b.length) return { error: need > b.length ? 'length: counts run past the end' : 'length: trailing bytes' };
	try {
		h.scene = new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(head, head + nameLen));
	} catch {
		return { error: 'scene: not UTF-8' };
	}
	h.nodeAt = head + nameLen;
	h.worldAt = h.nodeAt + 4 * h.nNodes;
	h.matAt = h.worldAt + 4 * h.nWorld;
	h.localsAt = h.matAt + 12 * elem * h.nWorld;
	h.jsonAt = h.localsAt + h.nLocals * (8 + 8 * h.channels);
	return h;
}

function parseSection(b, h) {
	let section;
	try {
		section = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(h.jsonAt, h.jsonAt + h.jsonLen)));
	} catch {
		return { error: 'json: the JSON section is not JSON' };
	}
	if (!section || typeof section !== 'object' || Array.isArray(section)) return { error: 'json: the JSON section is not an object' };
	/* A 2D scene's frames may also carry its draw order, and a
	 * subscription with a view "hidden" (docs/protocol.md, Views). */
	const keys = Object.keys(section).filter((k) => k !== 'order' && k !== 'hidden').sort().join(',');
	if (keys !== (h.kind === 'update' ? 'nodes,removed' : 'nodes')) return { error: 'json: the JSON section\'s members are not nodes (and removed, order, hidden)' };
	const { nodes, removed = [], order, hidden } = section;
	if (order !== undefined && !(Array.isArray(order) && order.every((id) => typeof id === 'string'))) return { error: 'json: order must be an array of ids' };
	if (!Array.isArray(nodes) || !Array.isArray(removed)) return { error: 'json: nodes and removed must be arrays' };
	if (hidden !== undefined && (!Array.isArray(hidden) || !hidden.every((id) => typeof id === 'string'))) return { error: 'json: hidden must be an array of ids' };
	if (nodes.length !== h.nNodes) return { error: 'json: the node count differs from the header\'s' };
	if (!nodes.every((n) => n && typeof n === 'object' && typeof n.id === 'string')) return { error: 'json: a node record without an id' };
	if (!removed.every((id) => typeof id === 'string')) return { error: 'json: removed holds a non-string' };
	const out = { nodes, removed };
	if (order !== undefined) out.order = order;
	if (hidden !== undefined) out.hidden = hidden;
	return out;
}

/*
 * The records of a frame's locals entries: each the last record of its
 * index ('records') with its sibling index and channels replaced. {error}
 * for an index without a record or a channel that is not finite.
 */
function localsRecords(v, h, records) {
	const out = [];
	const size = 8 + 8 * h.channels;
	for (let k = 0; k < h.nLocals; k++) {
		const at = h.localsAt + size * k;
		const index = v.getUint32(at, true);
		const last = records.get(index);
		if (last === undefined) return { error: 'index: a locals entry for an index no frame bound' };
		const node = { ...last, index: v.getUint32(at + 4, true) };
		let c = at + 8;
		for (const [key, n] of CHANNELS[h.channels]) {
			const vals = [];
			for (let i = 0; i < n; i++, c += 8) vals.push(v.getFloat64(c, true));
			if (!vals.every(Number.isFinite)) return { error: 'locals: a channel is not finite' };
			node[key] = n === 1 ? vals[0] : vals;
		}
		out.push([index, node]);
	}
	return out;
}

/*
 * A decoder for one connection: keeps, per scene, the table of index -> id
 * the frames bind, and each index's last record (for locals entries).
 * decode(buf) returns the JSON-shaped message, or {error} (a frame that
 * failed may have rebound some indices; the next snapshot starts afresh).
 */
export class WireDecoder {
	constructor() {
		this.names = new Map(); // scene -> Map(index -> id)
		this.records = new Map(); // scene -> Map(index -> record without world)
	}

	/* Forgets every binding (a new connection). */
	reset() {
		this.names.clear();
		this.records.clear();
	}

	decode(buf) {
		const h = readHeader(buf);
		if (h.error) return h;
		const b = bytesOf(buf);
		const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
		const section = parseSection(b, h);
		if (section.error) return section;
		let names = this.names.get(h.scene);
		let records = this.records.get(h.scene);
		if (!names || !records || h.kind === 'snapshot') {
			names = new Map();
			records = new Map();
			this.names.set(h.scene, names);
			this.records.set(h.scene, records);
		}
		for (let i = 0; i < h.nNodes; i++) {
			const index = v.getUint32(h.nodeAt + 4 * i, true);
			if (index >= MAX_INDEX) return { error: 'index: an index beyond the largest scene' };
			names.set(index, section.nodes[i].id);
			records.set(index, { ...section.nodes[i] });
		}
		const locals = localsRecords(v, h, records);
		if (locals.error) return locals;
		for (const [index, node] of locals) {
			records.set(index, { ...node });
			section.nodes.push(node);
		}
		const world = {};
		const read = h.elem === 4 ? (at) => v.getFloat32(at, true) : (at) => v.getFloat64(at, true);
		for (let k = 0; k < h.nWorld; k++) {
			const id = names.get(v.getUint32(h.worldAt + 4 * k, true));
			if (id === undefined) return { error: 'index: a matrix for an index no frame bound' };
			const at = h.matAt + 12 * h.elem * k;
			const m = new Array(16);
			for (let c = 0; c < 4; c++) {
				for (let r = 0; r < 3; r++) m[c * 4 + r] = read(at + h.elem * (c * 3 + r));
				m[c * 4 + 3] = c === 3 ? 1 : 0;
			}
			if (!m.every(Number.isFinite)) return { error: 'matrix: a matrix element is not finite' };
			world[id] = m;
		}
		for (const node of section.nodes) if (world[node.id]) node.world = world[node.id];
		const extra = {};
		if (section.order !== undefined) extra.order = section.order;
		if (section.hidden) extra.hidden = section.hidden;
		if (h.kind === 'snapshot') return { type: 'snapshot', scene: h.scene, seq: h.seq, nodes: section.nodes, ...extra };
		return { type: 'update', scene: h.scene, seq: h.seq, world, nodes: section.nodes, removed: section.removed, ...extra };
	}
}
