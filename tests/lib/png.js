'use strict';
/*
 * png.js: the little of PNG the tests need: encode an RGBA image (8 bits
 * per channel, one IDAT, filter 0, optional ancillary chunks) and decode a
 * screenshot or a served page (8-bit greyscale, RGB or RGBA, with or
 * without alpha, not interlaced, every filter), with node's zlib. The
 * server's own PNG check is libpng; this is an independent writer and
 * reader, so a test's expected pixels never come from the code under test.
 */
const zlib = require('node:zlib');

const CRC_TABLE = (() => {
	const t = new Uint32Array(256);
	for (let n = 0; n < 256; n++) {
		let c = n;
		for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
		t[n] = c >>> 0;
	}
	return t;
})();

function crc32(buf) {
	let c = 0xffffffff;
	for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
	const head = Buffer.alloc(8);
	head.writeUInt32BE(data.length, 0);
	head.write(type, 4, 'latin1');
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
	return Buffer.concat([head, data, crc]);
}

/* A PNG (Buffer) of 'width' x 'height' pixels; pixel(x, y) answers [r, g, b, a];
 * 'extra' chunks [type, data] go between IHDR and IDAT. */
function encodePng(width, height, pixel, extra = []) {
	const raw = Buffer.alloc((width * 4 + 1) * height);
	for (let y = 0; y < height; y++) {
		const row = y * (width * 4 + 1);
		raw[row] = 0;
		for (let x = 0; x < width; x++) raw.set(pixel(x, y), row + 1 + x * 4);
	}
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(width, 0);
	ihdr.writeUInt32BE(height, 4);
	ihdr.set([8, 6, 0, 0, 0], 8);
	return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr),
		...extra.map(([type, data]) => chunk(type, data)), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/* Decodes a PNG: {width, height, at(x, y) -> [r, g, b, a]}. Throws on what
 * it does not read. */
function decodePng(buf) {
	let off = 8;
	let width = 0;
	let height = 0;
	let channels = 0;
	const idat = [];
	while (off < buf.length) {
		const len = buf.readUInt32BE(off);
		const type = buf.toString('latin1', off + 4, off + 8);
		const data = buf.subarray(off + 8, off + 8 + len);
		if (type === 'IHDR') {
			width = data.readUInt32BE(0);
			height = data.readUInt32BE(4);
			const depth = data[8];
			const color = data[9];
			channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[color];
			if (depth !== 8 || !channels || data[12] !== 0) throw new Error(`png: depth ${depth} colour ${color} interlace ${data[12]} not read`);
		} else if (type === 'IDAT') idat.push(data);
		else if (type === 'IEND') break;
		off += 12 + len;
	}
	const raw = zlib.inflateSync(Buffer.concat(idat));
	const stride = width * channels;
	const out = Buffer.alloc(stride * height);
	for (let y = 0; y < height; y++) {
		const f = raw[y * (stride + 1)];
		const src = y * (stride + 1) + 1;
		for (let i = 0; i < stride; i++) {
			const x = raw[src + i];
			const a = i >= channels ? out[y * stride + i - channels] : 0;
			const b = y ? out[(y - 1) * stride + i] : 0;
			const c = y && i >= channels ? out[(y - 1) * stride + i - channels] : 0;
			let v;
			if (f === 0) v = x;
			else if (f === 1) v = x + a;
			else if (f === 2) v = x + b;
			else if (f === 3) v = x + ((a + b) >> 1);
			else {
				const p = a + b - c;
				const pa = Math.abs(p - a);
				const pb = Math.abs(p - b);
				const pc = Math.abs(p - c);
				v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
			}
			out[y * stride + i] = v & 0xff;
		}
	}
	const at = (x, y) => {
		const i = y * stride + x * channels;
		if (channels === 1) return [out[i], out[i], out[i], 255];
		if (channels === 2) return [out[i], out[i], out[i], out[i + 1]];
		if (channels === 3) return [out[i], out[i + 1], out[i + 2], 255];
		return [out[i], out[i + 1], out[i + 2], out[i + 3]];
	};
	return { width, height, at };
}

module.exports = { encodePng, decodePng, crc32 };
