'use strict';
/*
 * The client side of scripts/test-compose.sh: three rigd containers of
 * docker/compose.yaml on one Redis, driven as three users would drive them
 * from their browsers, with a crash of the scene's owner in the middle.
 *
 * A scene is created through rigd1, edited over HTTP through rigd2 (each
 * batch named by client and client_seq, so that a resend after the crash
 * is applied once), watched over a websocket on rigd3. GET /api/cluster on
 * each process says which one owns the scene; its container is killed
 * (SIGKILL, a crash), and edits go on through a survivor, each sent again
 * while it is answered 503 `unavailable`, until a survivor has taken the
 * scene over. The watcher, moved to a survivor if its own process was the
 * one killed, must see the last edit. Then every acknowledged edit must be
 * in the scene's log on every survivor, exactly once, with the seq of its
 * ack, and the log gapless.
 *
 * Usage: node compose.js TOKEN SERVICES ENGINE, SERVICES being JSON
 * {"rigd1":{"port":8081,"container":"NAME"},...}; ENGINE (podman or
 * docker) is run as `ENGINE kill NAME`. Needs the ws package (NODE_PATH
 * to web/node_modules). Prints "compose: ok: ..." lines and the failover
 * time; exits 1 with the reason on the first failed check.
 */
const { execFileSync } = require('node:child_process');
const WebSocket = require('ws');

const [token, servicesJson, engine] = process.argv.slice(2);
const services = JSON.parse(servicesJson);
const names = Object.keys(services).sort();
const scene = `compose${process.pid}`;
const CLIENT = 'compose-test';
const BEFORE = 10;
const AFTER = 10;
const FAILOVER_MS = 60000;

const say = (s) => console.log(`compose: ${s}`);
const fail = (s) => { console.error(`compose: FAILED: ${s}`); process.exit(1); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const base = (svc) => `http://127.0.0.1:${services[svc].port}`;

async function call(svc, method, path, body) {
  const headers = { authorization: `Bearer ${token}`, origin: base(svc) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const r = await fetch(base(svc) + path, { method, headers,
      body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(15000) });
    const text = await r.text();
    let json = null;
    try { json = JSON.parse(text); } catch { /* NDJSON or an error page */ }
    return { status: r.status, text, json };
  } catch (e) {
    return { status: 0, text: String(e), json: null };
  }
}

/* The watcher: a websocket subscriber that keeps the highest seq it saw. */
function watch(svc) {
  return new Promise((resolve, reject) => {
    const w = { svc, seq: -1, updates: 0, closed: false };
    const ws = new WebSocket(`ws://127.0.0.1:${services[svc].port}/ws`, { origin: base(svc) });
    const timer = setTimeout(() => reject(new Error(`no snapshot from ${svc} within 15 s`)), 15000);
    ws.on('error', (e) => { if (!w.closed) reject(e); });
    ws.on('close', () => { w.closed = true; });
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'auth', token, req: 1 }));
      ws.send(JSON.stringify({ type: 'subscribe', scene, req: 2 }));
    });
    ws.on('message', (data) => {
      const m = JSON.parse(data);
      if (m.type === 'error') reject(new Error(`${svc}: ${JSON.stringify(m)}`));
      if (m.type === 'snapshot') { w.seq = Math.max(w.seq, m.seq); clearTimeout(timer); resolve(w); }
      if (m.type === 'update') { w.seq = Math.max(w.seq, m.seq); w.updates++; }
    });
    w.close = () => { w.closed = true; ws.terminate(); };
  });
}

async function until(what, ms, fn) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) fail(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

/* One edit through SVC, sent again while a survivor takes the scene over. */
async function edit(svc, i, retryMs) {
  const body = { client: CLIENT, client_seq: i, ops: [{ op: 'set', id: 'arm', euler: [0, 0, i] }] };
  const end = Date.now() + retryMs;
  for (;;) {
    const r = await call(svc, 'POST', `/api/scenes/${scene}/edits`, body);
    if (r.status === 200 && r.json && Number.isInteger(r.json.seq)) return r.json.seq;
    if ((r.status !== 503 && r.status !== 0) || Date.now() > end)
      fail(`edit ${i} through ${svc}: ${r.status} ${r.text.slice(0, 300)}`);
    await sleep(200);
  }
}

async function owner() {
  for (const svc of names) {
    const r = await call(svc, 'GET', '/api/cluster');
    if (r.status !== 200) continue;
    const l = (r.json.leases || []).find((x) => x.scene === scene && x.state === 'owned');
    if (l) return { svc, id: r.json.process, token: l.token };
  }
  return null;
}

async function main() {
  await until('three live processes on every rigd, Redis up', 60000, async () => {
    const v = await Promise.all(names.map((s) => call(s, 'GET', '/api/cluster')));
    return v.every((r) => r.status === 200 && r.json.redis.state === 'up' && r.json.processes.length === 3);
  });
  say('three rigd processes see each other and Redis');

  const [creator, editor, watcher] = names;
  const c = await call(creator, 'POST', '/api/scenes', { name: scene });
  if (c.status !== 201) fail(`POST /api/scenes through ${creator}: ${c.status} ${c.text}`);
  await until(`the scene on ${editor} and ${watcher}`, 10000, async () =>
    (await call(editor, 'GET', `/api/scenes/${scene}`)).status === 200 &&
    (await call(watcher, 'GET', `/api/scenes/${scene}`)).status === 200);
  const made = await call(editor, 'POST', `/api/scenes/${scene}/edits`,
    { client: CLIENT, client_seq: 0, ops: [{ op: 'create', id: 'arm' }] });
  if (made.status !== 200) fail(`create the node through ${editor}: ${made.status} ${made.text}`);
  const acks = [{ client_seq: 0, seq: made.json.seq }];
  say(`scene '${scene}' created through ${creator}, its node through ${editor}`);

  let w = await watch(watcher);
  for (let i = 1; i <= BEFORE; i++) acks.push({ client_seq: i, seq: await edit(editor, i, 0) });
  await until(`the watcher on ${watcher} at seq ${acks.at(-1).seq}`, 10000, async () => w.seq >= acks.at(-1).seq);
  if (w.updates === 0) fail('the watcher got no update');
  say(`${BEFORE} edits through ${editor} acknowledged; the watcher on ${watcher} got ${w.updates} updates up to seq ${w.seq}`);

  const own = await until('an owner of the scene', 10000, owner);
  say(`GET /api/cluster: ${own.svc} (${own.id}) owns '${scene}', fencing token ${own.token}`);
  const t0 = Date.now();
  execFileSync(engine, ['kill', services[own.svc].container], { stdio: 'ignore' });
  say(`killed ${services[own.svc].container} (${own.svc}, the owner)`);
  const survivors = names.filter((s) => s !== own.svc);
  const editor2 = survivors.includes(editor) ? editor : survivors[0];
  if (w.svc === own.svc) {
    w.close();
    w = null;
  }

  const first = await edit(editor2, BEFORE + 1, FAILOVER_MS);
  const failover = Date.now() - t0;
  acks.push({ client_seq: BEFORE + 1, seq: first });
  for (let i = BEFORE + 2; i <= BEFORE + AFTER; i++) acks.push({ client_seq: i, seq: await edit(editor2, i, FAILOVER_MS) });
  const now = await until('a new owner among the survivors', 10000, async () => {
    const o = await owner();
    return o && o.svc !== own.svc ? o : null;
  });
  if (!(now.token > own.token)) fail(`the new owner's fencing token ${now.token} is not above ${own.token}`);
  say(`edits resume through ${editor2} ${failover} ms after the kill; ${now.svc} owns the scene now (token ${now.token}); ${AFTER} more acknowledged`);

  /* The watcher: still on its survivor, or subscribed anew on one. */
  const updatesBefore = w ? w.updates : 0;
  if (!w) w = await watch(survivors.find((s) => s !== editor2) || editor2);
  const last = acks.at(-1).seq;
  await until(`the watcher on ${w.svc} at seq ${last}`, 10000, async () => w.seq >= last);
  if (w.updates === updatesBefore && w.seq < last) fail('the watcher got nothing after the kill');
  say(`the watcher on ${w.svc} sees seq ${w.seq}, the last acknowledged edit`);
  w.close();

  /* Every acknowledged edit, once, with its seq, in every survivor's copy. */
  for (const svc of survivors) {
    const log = await until(`${svc}'s copy at seq ${last}`, 15000, async () => {
      const r = await call(svc, 'GET', `/api/scenes/${scene}/log`);
      if (r.status !== 200) return null;
      const lines = r.text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      return lines.length && lines.at(-1).seq >= last ? lines : null;
    });
    const seqs = log.map((l) => l.seq);
    if (seqs.some((s, k) => s !== k + 1)) fail(`${svc}: the log is not gapless: ${seqs.join(',')}`);
    for (const a of acks) {
      const rows = log.filter((l) => l.client === CLIENT && l.client_seq === a.client_seq);
      if (rows.length !== 1) fail(`${svc}: edit ${a.client_seq} is in the log ${rows.length} times`);
      if (rows[0].seq !== a.seq) fail(`${svc}: edit ${a.client_seq} has seq ${rows[0].seq}, acknowledged as ${a.seq}`);
    }
    if (log.length !== acks.length) fail(`${svc}: ${log.length} batches in the log, ${acks.length} acknowledged`);
    const tree = await call(svc, 'GET', `/api/scenes/${scene}`);
    if (tree.status !== 200 || tree.json.seq !== last) fail(`${svc}: the scene is at ${tree.json && tree.json.seq}, not ${last}`);
  }
  say(`every one of the ${acks.length} acknowledged edits is in the log of ${survivors.join(' and ')}, once, with its seq; the scene is at seq ${last} on both`);
  say(`failover ${failover} ms`);
}

main().catch((e) => fail(e.stack || String(e)));
