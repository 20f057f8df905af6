'use strict';
/*
 * Shared helpers for the end-to-end tests: start the real rigd on a free
 * port with a fresh database, talk to it over HTTP and websockets as a
 * browser or a script would, and validate everything it sends against
 * schema/protocol.schema.json.
 *
 * The tests run under CTest with RIGD_BUILD_DIR and RIGD_SOURCE_DIR in the
 * environment (tests/CMakeLists.txt, rigd_node_test). npm packages come from
 * web/node_modules.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const crypto = require('node:crypto');
const http = require('node:http');
const https = require('node:https');
const netMod = require('node:net');
const tls = require('node:tls');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');

/* Relative directories (RIGD_BUILD_DIR=build) are taken from the current
 * directory. */
const SOURCE_DIR = path.resolve(process.env.RIGD_SOURCE_DIR || path.join(__dirname, '..', '..'));
const BUILD_DIR = path.resolve(process.env.RIGD_BUILD_DIR || path.join(SOURCE_DIR, 'build'));
const SANITIZED = /^(1|ON|TRUE|YES)$/i.test(process.env.RIGD_SANITIZE || '');
const webRequire = createRequire(path.join(SOURCE_DIR, 'web', 'package.json'));
const WebSocket = webRequire('ws');
const Ajv2020 = webRequire('ajv/dist/2020').default;

/* Every server lives at most this long, whatever happens to the test. */
const SERVER_LIFETIME_S = 600;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/* ---- the schema ---- */

const schemaDoc = JSON.parse(
  fs.readFileSync(path.join(SOURCE_DIR, 'schema', 'protocol.schema.json'), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: false });
ajv.addSchema(schemaDoc);
const validators = new Map();

/* Returns null when 'data' is a valid 'def' (a name under $defs), else a
 * readable list of the violations. */
function schemaErrors(def, data) {
  let v = validators.get(def);
  if (!v) {
    v = ajv.getSchema(`${schemaDoc.$id}#/$defs/${def}`);
    if (!v) throw new Error(`no schema definition ${def}`);
    validators.set(def, v);
  }
  if (v(data)) return null;
  return ajv.errorsText(v.errors, { separator: '; ' });
}

function assertSchema(def, data) {
  const errors = schemaErrors(def, data);
  if (errors) {
    throw new Error(`${def} does not validate: ${errors}\n${JSON.stringify(data).slice(0, 2000)}`);
  }
}

/* ---- the server ---- */

function tempDir(prefix = 'rigd-e2e-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

const running = new Set();
function killRunning() {
  for (const s of running) {
    try { process.kill(s.rigdPid || s.pid, 'SIGKILL'); } catch { /* gone */ }
    try { process.kill(s.pid, 'SIGKILL'); } catch { /* gone */ }
  }
}
process.on('exit', killRunning);
/* A test that fails before stopping its server would otherwise leave the
 * server's pipes holding the test process open until the `timeout` wrapper
 * ends it. When the file's tests are done, give its own after-hooks time to
 * stop their servers gracefully (they assert the exit status), then kill
 * whatever is left; the timer is unref'd, so a clean file exits at once. */
require('node:test').after(() => { setTimeout(killRunning, 90000).unref(); });

/* The pid of the rigd under `timeout` (its only child). */
function childPid(pid) {
  try {
    const kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return kids ? Number(kids.split(/\s+/)[0]) : null;
  } catch {
    return null;
  }
}

/*
 * Starts rigd. opts: db (path; default a new temporary directory's rig.db),
 * args (more flags), listen (default 127.0.0.1:0), web (default the
 * source's web/), env (added to the environment), wrapper (a command and
 * its arguments that run rigd, e.g. valgrind; default none), startTimeout
 * (ms). Resolves to a handle once the server printed its URL.
 */
async function startRigd(opts = {}) {
  const dir = opts.dir || tempDir();
  const db = opts.db || path.join(dir, 'data', 'rig.db');
  const args = [
    '--kill-after=5', String(opts.lifetime || SERVER_LIFETIME_S), ...(opts.wrapper || []),
    path.join(BUILD_DIR, 'rigd'),
    '--listen', opts.listen || '127.0.0.1:0',
    '--db', db,
    '--web', opts.web || path.join(SOURCE_DIR, 'web'),
    ...(opts.args || []),
  ];
  const env = { ...process.env, ...(opts.env || {}) };
  const proc = spawn('timeout', args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const server = {
    proc, dir, db, stdout: '', stderr: '', exited: null, pid: proc.pid,
  };
  running.add(server);
  server.exit = new Promise((resolve) => {
    proc.on('exit', (code, signal) => {
      running.delete(server);
      server.exited = { code, signal };
      resolve(server.exited);
    });
  });
  proc.stderr.on('data', (d) => {
    server.stderr += d;
    if (process.env.RIGD_TEST_VERBOSE) process.stderr.write(d);
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rigd did not start:\n${server.stderr}`)),
      opts.startTimeout || (SANITIZED ? 60000 : 20000));
    proc.stdout.on('data', (d) => {
      server.stdout += d;
      const m = /serving ((https?):\/\/(\S+?):(\d+))\//.exec(server.stdout);
      if (m && !server.url) {
        clearTimeout(timer);
        server.url = m[1];
        server.tls = m[2] === 'https';
        server.host = m[3];
        server.port = Number(m[4]);
        server.wsUrl = `${server.tls ? 'wss' : 'ws'}://${m[3]}:${m[4]}/ws`;
        resolve();
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      if (!server.url) reject(new Error(`rigd exited with ${code} before serving:\n${server.stderr}`));
    });
  });
  server.rigdPid = childPid(proc.pid) || proc.pid;
  /* Stops the server with 'signal' and resolves to its exit code. */
  server.stop = async (signal = 'SIGTERM', timeoutMs = SANITIZED ? 60000 : 20000) => {
    if (!server.exited) {
      try { process.kill(server.rigdPid, signal); } catch { /* gone */ }
    }
    let handle;
    const timer = new Promise((resolve) => { handle = setTimeout(resolve, timeoutMs, 'timeout'); });
    const result = await Promise.race([server.exit, timer]);
    clearTimeout(handle);
    if (result === 'timeout') {
      try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ }
      throw new Error(`rigd did not stop within ${timeoutMs} ms`);
    }
    return result.code;
  };
  /* Resident anonymous memory in kB (RssAnon in /proc): what the server
   * allocated. File-backed pages are left out on purpose: the store maps the
   * database for reads, so pages of a growing database file would count as
   * "growth" in VmRSS without being memory the server holds on to. */
  server.rssKb = () => {
    const status = fs.readFileSync(`/proc/${server.rigdPid}/status`, 'utf8');
    return Number(/RssAnon:\s+(\d+)/.exec(status)[1]);
  };
  /* User + system CPU seconds so far. */
  server.cpuSeconds = () => {
    const stat = fs.readFileSync(`/proc/${server.rigdPid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  };
  return server;
}

let ticksPerSecond;
function clockTicks() {
  if (!ticksPerSecond) ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100;
  return ticksPerSecond;
}

/* ---- HTTP ---- */

/*
 * One HTTP request. 'target' is a path sent as is (no normalisation), so
 * tests can send "/../x". Resolves to {status, headers, text, json, body}
 * (body: the bytes, for a binary answer).
 */
function request(server, method, target, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined
      : (typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
    const req = (server.tls ? https : http).request({
      host: server.host, port: server.port, method, path: target, agent: false,
      rejectUnauthorized: false,
      headers: { ...(data !== undefined ? { 'content-length': Buffer.byteLength(data) } : {}),
        ...headers },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, text, json, body });
      });
    });
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

const get = (server, target, headers) => request(server, 'GET', target, undefined, headers);
const post = (server, target, body, headers) => request(server, 'POST', target, body, headers);

/* GET /api/scenes/NAME, validated; resolves to the tree. */
async function tree(server, scene, at) {
  const r = await get(server, `/api/scenes/${scene}${at === undefined ? '' : `?at=${at}`}`);
  if (r.status !== 200) throw new Error(`GET ${scene}: ${r.status} ${r.text}`);
  assertSchema('HttpTree', r.json);
  return r.json;
}

/* POST one batch to /api/scenes/NAME/edits; resolves to {status, json}. */
async function postEdit(server, scene, batch) {
  const r = await post(server, `/api/scenes/${scene}/edits`, batch);
  assertSchema(r.status === 200 ? 'HttpAck' : 'HttpError', r.json);
  return r;
}

/* id -> world matrix of a tree or snapshot's nodes. */
function worldsOf(nodes) {
  const out = {};
  for (const n of nodes) out[n.id] = n.world;
  return out;
}

/* ---- websockets ---- */

/*
 * A websocket client that keeps every message it received (validated
 * against ServerMessage), mirrors the scenes it subscribed to (snapshot plus
 * updates) and matches replies to requests by req.
 */
class Client {
  constructor(server, opts = {}) {
    this.server = server;
    this.messages = [];
    this.schemaViolations = [];
    this.scenes = new Map();   /* name -> {seq, nodes: Map id -> node} */
    this.waiters = [];
    this.nextReq = 1;
    this.name = opts.name;
    /* validate: false skips the schema check of every message (load tests,
     * where hundreds of clients share one node thread). */
    this.validate = opts.validate !== false;
    const headers = opts.origin ? { origin: opts.origin } : {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    /* deflate: true offers permessage-deflate as a browser does (the server
     * takes it only with --deflate on); by default nothing is offered. */
    this.ws = new WebSocket(opts.url || server.wsUrl, { headers,
      perMessageDeflate: opts.deflate ? { threshold: 0 } : false,
      maxPayload: 256 * 1024 * 1024, rejectUnauthorized: false });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
      this.ws.once('unexpected-response', (req, res) => reject(
        Object.assign(new Error(`handshake refused: ${res.statusCode}`), { status: res.statusCode })));
    });
    this.closed = new Promise((resolve) => {
      this.ws.on('close', (code, reason) => {
        this.closeCode = code;
        resolve({ code, reason: reason.toString() });
        this.notify();
      });
    });
    this.ws.on('error', () => { /* 'close' follows */ });
    this.ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
  }

  static async connect(server, opts) {
    const c = new Client(server, opts);
    await c.opened;
    return c;
  }

  onMessage(data, isBinary) {
    const text = data.toString('utf8');
    let msg;
    try {
      msg = JSON.parse(text);
    } catch (e) {
      this.schemaViolations.push(`not JSON: ${text.slice(0, 200)}`);
      return;
    }
    if (isBinary) this.schemaViolations.push('binary frame');
    const errors = this.validate ? schemaErrors('ServerMessage', msg) : null;
    if (errors) this.schemaViolations.push(`${errors}: ${text.slice(0, 500)}`);
    msg.receivedAt = process.hrtime.bigint();
    this.messages.push(msg);
    this.apply(msg);
    this.notify();
  }

  /* Keeps the mirror of a scene: the snapshot, then every update. */
  apply(msg) {
    if (msg.type === 'snapshot') {
      const nodes = new Map();
      for (const n of msg.nodes) nodes.set(n.id, { ...n });
      /* A 2D scene's draw order comes with its snapshot, and with an
       * update whenever it changed. With a view (docs/protocol.md,
       * Views): what not to draw. */
      for (const id of msg.hidden || []) if (nodes.has(id)) nodes.get(id).hidden = true;
      this.scenes.set(msg.scene, { seq: msg.seq, nodes, order: msg.order });
    } else if (msg.type === 'update') {
      const s = this.scenes.get(msg.scene);
      if (!s) {
        this.schemaViolations.push(`update for ${msg.scene} before its snapshot`);
        return;
      }
      /* A frame answering a view message may repeat the seq; it has hidden. */
      if (msg.seq < s.seq || (msg.seq === s.seq && !msg.hidden)) this.schemaViolations.push(`update seq ${msg.seq} after ${s.seq}`);
      for (const id of msg.removed) s.nodes.delete(id);
      for (const n of msg.nodes) s.nodes.set(n.id, { ...n });
      for (const [id, w] of Object.entries(msg.world)) {
        const n = s.nodes.get(id);
        if (!n) this.schemaViolations.push(`world for unknown node ${id}`);
        else { n.world = w; delete n.hidden; }
      }
      for (const id of msg.hidden || []) {
        const n = s.nodes.get(id);
        if (!n) this.schemaViolations.push(`hidden names unknown node ${id}`);
        else n.hidden = true;
      }
      if (msg.order) s.order = msg.order;
      s.seq = msg.seq;
    }
  }

  notify() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /* Resolves to the first message at index >= from matching pred. */
  async waitFor(pred, { from = 0, timeout = 10000, what = 'a message' } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      for (let i = from; i < this.messages.length; i++) {
        if (pred(this.messages[i])) return this.messages[i];
      }
      if (this.closeCode !== undefined) throw new Error(`closed (${this.closeCode}) waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  send(obj) {
    this.ws.send(typeof obj === 'string' || Buffer.isBuffer(obj) ? obj : JSON.stringify(obj));
  }

  /* Sends obj with a fresh req and resolves to its ack or error. */
  request(obj, timeout) {
    const req = this.nextReq++;
    const from = this.messages.length;
    this.send({ ...obj, req });
    return this.waitFor((m) => (m.type === 'ack' || m.type === 'error') && m.req === req,
      { from, timeout, what: `the reply to req ${req}` });
  }

  async subscribe(scene) {
    const from = this.messages.length;
    this.send({ type: 'subscribe', scene });
    return this.waitFor((m) => (m.type === 'snapshot' && m.scene === scene) ||
      (m.type === 'error' && m.field === 'scene'), { from, what: `the snapshot of ${scene}` });
  }

  /* Waits until the mirror of 'scene' reached at least 'seq'. */
  async waitSeq(scene, seq, timeout) {
    await this.waitFor(() => (this.scenes.get(scene)?.seq ?? -1) >= seq,
      { timeout, what: `${scene} at seq ${seq}` });
  }

  worlds(scene) {
    const s = this.scenes.get(scene);
    const out = {};
    for (const [id, n] of s.nodes) out[id] = n.world;
    return out;
  }

  close(code) {
    this.ws.close(code);
    return this.closed;
  }
}

/* ---- a websocket peer at the frame level ---- */

/*
 * A websocket client written on a raw socket, for what a well-behaved
 * library will not do: frames after a close, fragments of one byte, binary
 * frames, invalid UTF-8, a peer that never reads. It records every frame it
 * receives ({fin, opcode, payload}) in order, and whether any data frame
 * came after a close frame (RFC 6455 forbids it).
 */
class RawWs {
  /* opts: headers (object), path (default /ws), tls (connect with TLS,
   * accepting any certificate), noRead (never read the socket). */
  static connect(server, opts = {}) {
    return new Promise((resolve, reject) => {
      const key = crypto.randomBytes(16).toString('base64');
      const connectOpts = { host: server.host, port: server.port };
      const sock = opts.tls || server.tls
        ? tls.connect({ ...connectOpts, rejectUnauthorized: false })
        : netMod.connect(connectOpts);
      const raw = new RawWs(sock);
      const headers = { Host: `${server.host}:${server.port}`, Upgrade: 'websocket',
        Connection: 'Upgrade', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13',
        ...(opts.headers || {}) };
      let head = `GET ${opts.path || '/ws'} HTTP/1.1\r\n`;
      for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
      sock.once(opts.tls || server.tls ? 'secureConnect' : 'connect', () => sock.write(`${head}\r\n`));
      sock.on('error', (e) => { raw.error = e; if (!raw.upgraded) reject(e); });
      sock.on('close', () => { raw.socketClosed = true; raw.notify(); if (!raw.upgraded) reject(new Error(`closed before upgrade: ${raw.buf.toString('latin1').slice(0, 200)}`)); });
      raw.onUpgrade = (status) => {
        if (status === 101) resolve(raw);
        else reject(Object.assign(new Error(`handshake refused: ${status}`), { status }));
      };
      if (opts.noRead) {
        /* Read only the handshake's answer, then never again: the kernel's
         * buffers fill and the peer looks dead. */
        raw.noRead = true;
      }
    });
  }

  constructor(sock) {
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.frames = [];
    this.upgraded = false;
    this.dataAfterClose = 0;
    this.waiters = [];
    sock.on('data', (d) => this.onData(d));
  }

  onData(d) {
    this.buf = Buffer.concat([this.buf, d]);
    if (!this.upgraded) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(this.buf.toString('latin1', 0, end))?.[1]);
      this.buf = this.buf.subarray(end + 4);
      this.upgraded = status === 101;
      this.onUpgrade(status);
      if (this.noRead && this.upgraded) { this.sock.pause(); return; }
    }
    for (;;) {
      if (this.buf.length < 2) break;
      const b0 = this.buf[0];
      const b1 = this.buf[1];
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) { if (this.buf.length < 4) break; len = this.buf.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (this.buf.length < 10) break; len = Number(this.buf.readBigUInt64BE(2)); off = 10; }
      if (this.buf.length < off + len) break;
      const frame = { fin: !!(b0 & 0x80), opcode: b0 & 0x0f, payload: this.buf.subarray(off, off + len) };
      this.buf = this.buf.subarray(off + len);
      if (this.closeFrame && frame.opcode !== 0x8 && frame.opcode !== 0xa) this.dataAfterClose++;
      if (frame.opcode === 0x8 && !this.closeFrame) {
        this.closeFrame = frame;
        this.closeCode = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1005;
        /* Answer the close as a browser does, at once; the socket stays
         * readable until the server ends it. */
        if (!this.noRead && !this.sock.destroyed) this.sendFrame(0x8, frame.payload.subarray(0, 2));
      }
      if (frame.opcode === 0x9 && !this.noPong && !this.closeFrame) this.sendFrame(0xa, frame.payload);
      this.frames.push(frame);
    }
    this.notify();
  }

  notify() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /* Resolves when pred() holds, rejects after timeout ms. */
  async until(pred, timeout = 10000, what = 'a condition') {
    const deadline = Date.now() + timeout;
    while (!pred()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  /* Text messages (JSON-parsed where possible) received so far. */
  messages() {
    const out = [];
    let parts = [];
    for (const f of this.frames) {
      if (f.opcode === 0x1 || f.opcode === 0x0) {
        parts.push(f.payload);
        if (f.fin) {
          const text = Buffer.concat(parts).toString('utf8');
          parts = [];
          try { out.push(JSON.parse(text)); } catch { out.push(text); }
        }
      }
    }
    return out;
  }

  /* Writes one frame, masked as a client must. */
  sendFrame(opcode, payload = Buffer.alloc(0), fin = true) {
    const data = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
    const len = data.length;
    const head = len < 126 ? Buffer.alloc(6) : len < 65536 ? Buffer.alloc(8) : Buffer.alloc(14);
    head[0] = (fin ? 0x80 : 0) | opcode;
    let off;
    if (len < 126) { head[1] = 0x80 | len; off = 2; }
    else if (len < 65536) { head[1] = 0x80 | 126; head.writeUInt16BE(len, 2); off = 4; }
    else { head[1] = 0x80 | 127; head.writeBigUInt64BE(BigInt(len), 2); off = 10; }
    const mask = crypto.randomBytes(4);
    mask.copy(head, off);
    const masked = Buffer.allocUnsafe(len);
    for (let i = 0; i < len; i++) masked[i] = data[i] ^ mask[i & 3];
    return this.sock.write(Buffer.concat([head, masked]));
  }

  sendText(text) { return this.sendFrame(0x1, Buffer.from(typeof text === 'string' ? text : JSON.stringify(text))); }

  destroy() { this.sock.destroy(); }
}

/* ---- rigs ---- */

/*
 * The 59-bone skeleton of docs/transforms.md 6.2, as one batch of creates: root ->
 * spine1..5; spine5 -> neck -> head -> head_end; spine5 -> each upper arm ->
 * forearm -> wrist -> hand -> five fingers of three bones; root -> each
 * thigh -> shin -> ankle -> foot -> two toes.
 */
function skeletonOps() {
  const ops = [];
  const add = (id, parent, t) => ops.push({ op: 'create', id, ...(parent ? { parent } : {}),
    t, bounds: { min: [-0.02, -0.02, -0.02], max: [0.02, 0.02, 0.02] } });
  add('root', null, [0, 1, 0]);
  let prev = 'root';
  for (let i = 1; i <= 5; i++) { add(`spine${i}`, prev, [0, 0.1, 0]); prev = `spine${i}`; }
  add('neck', 'spine5', [0, 0.1, 0]);
  add('head', 'neck', [0, 0.1, 0]);
  add('head_end', 'head', [0, 0.15, 0]);
  for (const side of ['l', 'r']) {
    const x = side === 'l' ? 1 : -1;
    add(`upper_arm_${side}`, 'spine5', [0.15 * x, 0, 0]);
    add(`forearm_${side}`, `upper_arm_${side}`, [0.25 * x, 0, 0]);
    add(`wrist_${side}`, `forearm_${side}`, [0.25 * x, 0, 0]);
    add(`hand_${side}`, `wrist_${side}`, [0.05 * x, 0, 0]);
    for (let f = 1; f <= 5; f++) {
      let p = `hand_${side}`;
      for (let k = 1; k <= 3; k++) {
        const id = `finger${f}_${k}_${side}`;
        add(id, p, [0.03 * x, 0, (f - 3) * 0.015]);
        p = id;
      }
    }
    add(`thigh_${side}`, 'root', [0.1 * x, -0.05, 0]);
    add(`shin_${side}`, `thigh_${side}`, [0, -0.45, 0]);
    add(`ankle_${side}`, `shin_${side}`, [0, -0.45, 0]);
    add(`foot_${side}`, `ankle_${side}`, [0, -0.05, 0.05]);
    add(`toe1_${side}`, `foot_${side}`, [0, 0, 0.1]);
    add(`toe2_${side}`, `toe1_${side}`, [0, 0, 0.03]);
  }
  return ops;
}

/* Creates scene 'name' over HTTP (201). */
async function createScene(server, name) {
  const r = await post(server, '/api/scenes', { name });
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
  assertSchema('HttpSceneCreated', r.json);
}

/* Runs a built program (rigctl) and resolves to {code, stdout, stderr}. */
function run(program, args, { input, timeout = 60000, env } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(path.join(BUILD_DIR, program), args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`${program} timed out`)); },
      timeout);
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    /* 'close', not 'exit': the process may exit before its pipes are read
     * to the end, and a test would then see part of what it printed. */
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    if (input !== undefined) p.stdin.end(input);
    else p.stdin.end();
  });
}

function percentile(values, p) {
  const v = [...values].sort((a, b) => a - b);
  if (!v.length) return NaN;
  return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
}

module.exports = {
  SOURCE_DIR, BUILD_DIR, SANITIZED, WebSocket, sleep, tempDir, startRigd, request, get, post,
  tree, postEdit, worldsOf, Client, schemaErrors, assertSchema, skeletonOps, createScene, run,
  percentile, execFileSync, RawWs, childPid,
};
