/*
 * connection.js: one websocket to rigd's /ws that stays up.
 *
 * It reconnects after any close with exponential backoff (with jitter),
 * numbers requests ("req") and settles each request's promise with the
 * server's ack or error, and reports its state (connecting, open, waiting to
 * retry, closed) to whoever shows it. With a token, the first message of
 * every connection is {"type":"auth","token"}, before anyone subscribes
 * (the server reads a connection's messages in order, so nobody waits for
 * its ack); the token never goes into the URL. What a message means is the
 * session's business (session.js); this module knows only frames: JSON
 * text, and binary snapshots and updates, which it turns into the same
 * messages with wire.js.
 */
import { Emitter, backoffDelay } from './util.js';
import { WireDecoder } from './wire.js';

/* A request answered by an error frame rejects with this. */
export class ServerError extends Error {
	constructor(msg) {
		super(msg.message || msg.code || 'error');
		this.code = msg.code || 'error';
		this.op = typeof msg.op === 'number' ? msg.op : null;
		this.field = msg.field || null;
		this.reply = msg;
	}
}

/* Raised for requests still open when the socket went away. */
export class DisconnectedError extends Error {
	constructor() {
		super('the connection to the server was lost before it answered');
		this.code = 'disconnected';
	}
}

export class Connection extends Emitter {
	/*
	 * 'url' is the websocket URL (ws://host/ws). Events:
	 *   state    {state: 'connecting'|'open'|'waiting'|'closed', retryAt, attempt, reason}
	 *   open     the socket is open and the token sent (subscribe again here)
	 *   auth     {ok, code, message} the answer to the token
	 *   refused  {code, message} an error frame that says unauthorized or
	 *            forbidden (also when a request's promise gets it)
	 *   message  every frame that is not the answer to a request
	 * 'token' returns the token to send, or null for none.
	 */
	constructor(url, { WebSocketImpl = globalThis.WebSocket, token = () => null } = {}) {
		super();
		this.url = url;
		this._WebSocket = WebSocketImpl;
		this._token = token;
		this._socket = null;
		this._attempt = 0;
		this._timer = null;
		this._nextReq = 1;
		this._pending = new Map();
		this._closedByUser = false;
		this._wire = new WireDecoder();
		this.state = { state: 'closed', retryAt: 0, attempt: 0, reason: '' };
	}

	get isOpen() {
		return this._socket !== null && this._socket.readyState === 1;
	}

	open() {
		this._closedByUser = false;
		if (this._socket) return;
		clearTimeout(this._timer);
		this._timer = null;
		this._setState({ state: 'connecting', retryAt: 0, attempt: this._attempt, reason: this.state.reason });
		let socket;
		try {
			socket = new this._WebSocket(this.url);
		} catch (e) {
			this._scheduleRetry(`cannot open ${this.url}: ${e.message}`);
			return;
		}
		this._socket = socket;
		socket.binaryType = 'arraybuffer';
		// Index bindings belong to one connection's frames.
		this._wire.reset();
		socket.onopen = () => {
			performance.mark('rigd:socket-open');
			this._attempt = 0;
			this._setState({ state: 'open', retryAt: 0, attempt: 0, reason: '' });
			this.authenticate();
			this.emit('open');
		};
		socket.onmessage = (event) => this._onMessage(event.data);
		socket.onclose = (event) => {
			if (this._socket !== socket) return;
			this._socket = null;
			this._failPending();
			if (this._closedByUser) {
				this._setState({ state: 'closed', retryAt: 0, attempt: 0, reason: '' });
				return;
			}
			this._scheduleRetry(closeReason(event));
		};
		// An error is always followed by a close; the close handler retries.
		socket.onerror = () => {};
	}

	/* Closes for good (no retry) and forgets every listener's requests. */
	close() {
		this._closedByUser = true;
		clearTimeout(this._timer);
		this._timer = null;
		if (this._socket) {
			const socket = this._socket;
			this._socket = null;
			socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
			socket.close(1000);
		}
		this._failPending();
		this._setState({ state: 'closed', retryAt: 0, attempt: 0, reason: '' });
	}

	/*
	 * Sends the current token (if any) on the open socket; the server
	 * answers with an ack or unauthorized, reported as an 'auth' event. A
	 * later token replaces the earlier one for this connection.
	 */
	authenticate() {
		const token = this._token();
		if (!token || !this.isOpen) return;
		this.request({ type: 'auth', token }).then(
			() => this.emit('auth', { ok: true, code: '', message: '' }),
			(err) => err instanceof ServerError && this.emit('auth', { ok: false, code: err.code, message: err.message }),
		);
	}

	/* Drops the socket and connects again at once (a token was forgotten:
	 * only a new connection has none). */
	reconnect() {
		if (this._closedByUser) return;
		const socket = this._socket;
		if (socket) {
			this._socket = null;
			socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
			socket.close(1000);
			this._failPending();
		}
		clearTimeout(this._timer);
		this._timer = null;
		this._attempt = 0;
		this.open();
	}

	/* Retries now instead of waiting out the backoff (the "retry now" link). */
	retryNow() {
		if (this._socket || this._closedByUser) return;
		this._attempt = 0;
		this.open();
	}

	/* Sends a message without waiting for an answer. Returns false when the
	 * socket is not open. */
	send(msg) {
		if (!this.isOpen) return false;
		this._socket.send(JSON.stringify(msg));
		return true;
	}

	/*
	 * Sends a message with a fresh "req" and resolves with the ack (or
	 * rejects with ServerError / DisconnectedError). The message object gets
	 * its req field set.
	 */
	request(msg) {
		if (!this.isOpen) return Promise.reject(new DisconnectedError());
		const req = this._nextReq++;
		msg.req = req;
		return new Promise((resolve, reject) => {
			this._pending.set(req, { resolve, reject });
			this._socket.send(JSON.stringify(msg));
		});
	}

	_onMessage(text) {
		let msg;
		if (typeof text !== 'string') {
			msg = this._wire.decode(text);
			if (msg.error) this.emit('message', { type: 'error', code: 'bad_frame', message: `the server sent a broken binary frame: ${msg.error}` });
			else this.emit('message', msg);
			return;
		}
		try {
			if (text.length > 1e6) performance.mark('rigd:large-frame');
			msg = JSON.parse(text);
		} catch {
			this.emit('message', { type: 'error', code: 'bad_json', message: 'the server sent a frame that is not JSON' });
			return;
		}
		if (msg.type === 'error' && (msg.code === 'unauthorized' || msg.code === 'forbidden')) this.emit('refused', { code: msg.code, message: msg.message || '' });
		if ((msg.type === 'ack' || msg.type === 'error') && msg.req !== undefined && this._pending.has(msg.req)) {
			const { resolve, reject } = this._pending.get(msg.req);
			this._pending.delete(msg.req);
			if (msg.type === 'ack') resolve(msg);
			else reject(new ServerError(msg));
			return;
		}
		this.emit('message', msg);
	}

	_failPending() {
		const pending = [...this._pending.values()];
		this._pending.clear();
		for (const { reject } of pending) reject(new DisconnectedError());
	}

	_scheduleRetry(reason) {
		const delay = backoffDelay(this._attempt);
		this._attempt++;
		this._setState({ state: 'waiting', retryAt: Date.now() + delay, attempt: this._attempt, reason });
		this._timer = setTimeout(() => {
			this._timer = null;
			this.open();
		}, delay);
	}

	_setState(state) {
		this.state = state;
		this.emit('state', state);
	}
}

function closeReason(event) {
	const codes = {
		1000: 'closed',
		1001: 'the server is shutting down or restarting',
		1006: 'the connection dropped',
		1008: 'refused by the server (policy)',
		1009: 'a message was too large',
		1011: 'the server hit an internal error',
	};
	const text = codes[event.code] || `closed with code ${event.code}`;
	return event.reason ? `${text}: ${event.reason}` : text;
}
