/*
 * session.js: one open scene over one connection.
 *
 * The session subscribes (again after every reconnect, so a snapshot
 * resynchronises the model without a page reload), feeds snapshots and
 * updates into the SceneModel, sends every edit as one batch with this
 * browser's client id and a client_seq (so a batch resent after a dropped
 * connection is acknowledged once, never applied twice), coalesces the
 * stream of batches a slider drag produces, groups a drag's batches so one
 * Ctrl+Z undoes the whole gesture, and keeps the list of the other people
 * in the scene (presence).
 */
import { DisconnectedError, ServerError } from './connection.js';
import { SceneModel, isTwoD } from './model.js';
import { Emitter, randomToken } from './util.js';

/* Ids a view's "always" may hold (docs/protocol.md, Views). */
export const VIEW_ALWAYS_MAX = 256;

export class SceneSession extends Emitter {
	/*
	 * Events:
	 *   status    {phase: 'loading'|'live'|'error', message}
	 *   presence  the map of others changed
	 *   history   undo/redo availability changed {canUndo, canRedo, busy}
	 *   notice    {level: 'error'|'info', message, code} not tied to a request
	 */
	constructor(connection, sceneName, { clientId, displayName, format = 'json' } = {}) {
		super();
		this.conn = connection;
		this.scene = sceneName;
		// 'json', or binary frames 'f32' / 'f64' (docs/protocol.md).
		this.format = format;
		this.model = new SceneModel(sceneName);
		this.clientId = clientId || `web-${randomToken(10)}`;
		this.displayName = displayName || 'guest';
		// client_seq only has to grow within this client id; starting from the
		// clock keeps it unique even if an id were ever reused.
		this._clientSeq = Date.now();
		this.phase = 'loading';
		// True from our snapshot until the connection drops: only then may
		// edits and presence go out (the server refuses them from a
		// connection that has not subscribed yet).
		this._subscribed = false;
		this.others = new Map();
		this.selection = [];
		this._channels = new Map();
		this._inflight = 0;
		this._idleWaiters = [];
		this._resend = [];
		this._undoGroups = [];
		this._redoGroups = [];
		this._gesture = null;
		// Undo and redo steps run one at a time, in the order asked for:
		// _historyTail settles when the last one queued has ended, and
		// _historyQueued counts those not ended (the history is busy).
		this._historyQueued = 0;
		this._historyTail = Promise.resolve();
		this._subReq = 0;
		this._unsubs = [
			connection.on('open', () => this._subscribe()),
			// A token accepted on the open socket: a scene refused for want
			// of it is asked for again (one already live stays as it is).
			connection.on('auth', ({ ok }) => ok && this.phase === 'error' && this._retry()),
			connection.on('message', (msg) => this._onMessage(msg)),
			connection.on('state', (s) => {
				if (s.state === 'open') return;
				this._subscribed = false;
				this.others.clear();
				this.emit('presence', this.others);
			}),
		];
		if (connection.isOpen) this._subscribe();
	}

	dispose() {
		for (const off of this._unsubs) off();
		this._unsubs = [];
		if (this.conn.isOpen) this.conn.send({ type: 'unsubscribe', scene: this.scene });
		for (const entry of this._resend) entry.reject(new DisconnectedError());
		this._resend = [];
	}

	get canUndo() {
		return this._undoGroups.length > 0 && this._historyQueued === 0;
	}
	get canRedo() {
		return this._redoGroups.length > 0 && this._historyQueued === 0;
	}

	_retry() {
		this.phase = 'loading';
		this.emit('status', { phase: 'loading', message: '' });
		this._subscribe();
	}

	_subscribe() {
		this._subReq++;
		const msg = { type: 'subscribe', scene: this.scene, req: `sub-${this._subReq}` };
		if (this.format !== 'json') msg.format = this.format;
		this.conn.send(msg);
		// A new connection has no view: declare it again after subscribing.
		if (this._view) this._sendView();
	}

	/* --- per-viewer interest (interest.js) --- */

	/*
	 * Declares 'view' ({vp, viewport, min_px}) for this scene, now and after
	 * every resubscribe, with this browser's selection as its "always" ids
	 * (sent wherever the camera looks: a selected node is framed, inspected
	 * and dragged at its current matrix). The frame that answers it (the
	 * first with hidden after its ack) is counted in viewApplied.
	 */
	setView(view) {
		this._view = view;
		if (this.conn.isOpen) this._sendView();
	}

	/*
	 * Withdraws the view declared by setView: the server's next frame sends
	 * the matrices of every node the view had hidden, and the frames after
	 * it are plain ones (docs/protocol.md, Views). Nothing is sent when the
	 * connection is down: a new connection's subscription has no view.
	 */
	clearView() {
		if (!this._view) return;
		this._view = null;
		if (!this.conn.isOpen) return;
		this.viewSent = (this.viewSent || 0) + 1;
		this.conn.send({ type: 'view', scene: this.scene, req: `view-${this.viewSent}`, clear: true });
	}

	/* The view message's members as last sent ({vp, viewport, min_px,
	 * always?}); null without a view. */
	get viewDeclared() {
		return this._view ? this._viewMembers() : null;
	}

	_viewMembers() {
		const always = this.selection.slice(0, VIEW_ALWAYS_MAX);
		return always.length ? { ...this._view, always } : { ...this._view };
	}

	_sendView() {
		this.viewSent = (this.viewSent || 0) + 1;
		this.conn.send({ type: 'view', scene: this.scene, req: `view-${this.viewSent}`, ...this._viewMembers() });
	}

	_onMessage(msg) {
		if (msg.scene !== undefined && msg.scene !== this.scene) return;
		switch (msg.type) {
			case 'snapshot': {
				performance.mark('rigd:snapshot-received');
				this.model.load(msg.nodes, msg.seq, { dims: isTwoD(msg) ? 2 : 3, order: msg.order, hidden: msg.hidden });
				this._viewAnswered(msg);
				performance.mark('rigd:snapshot-loaded');
				this.phase = 'live';
				this._subscribed = true;
				this.emit('status', { phase: 'live', message: '' });
				// Presence is only accepted from a subscriber: announce
				// ourselves once the snapshot says we are one.
				this._sendPresence();
				if (this._resend.length) this._flushResend();
				break;
			}
			case 'update':
				if (this.phase === 'live') this.model.applyUpdate(msg);
				this._viewAnswered(msg);
				break;
			case 'ack':
				if (typeof msg.req === 'string' && msg.req.startsWith('view-')) this._viewAcked = Number(msg.req.slice(5));
				break;
			case 'join':
				this.others.set(msg.client, { client: msg.client, name: msg.name || msg.client, selection: [] });
				this.emit('presence', this.others);
				break;
			case 'presence': {
				const entry = this.others.get(msg.client) || { client: msg.client };
				entry.name = msg.name || entry.name || msg.client;
				entry.selection = msg.selection || [];
				this.others.set(msg.client, entry);
				this.emit('presence', this.others);
				break;
			}
			case 'leave':
				this.others.delete(msg.client);
				this.emit('presence', this.others);
				break;
			case 'error':
				// A refused subscribe, or (without req) the scene was deleted
				// while we watched it: either way this view has no scene.
				if ((typeof msg.req === 'string' && msg.req.startsWith('sub-')) || (msg.req === undefined && msg.code === 'unknown_scene')) {
					this._subscribed = false;
					this.phase = 'error';
					this.emit('status', { phase: 'error', message: msg.message || msg.code, code: msg.code });
				} else {
					this.emit('notice', { level: 'error', message: msg.message || msg.code, code: msg.code });
				}
				break;
			default:
				break;
		}
	}

	/* A frame with hidden after a view's ack answers that view. */
	_viewAnswered(msg) {
		if (msg.hidden && this._viewAcked) this.viewApplied = this._viewAcked;
	}

	/* --- presence --- */

	setSelection(ids) {
		const same = ids.length === this.selection.length && ids.every((id, i) => id === this.selection[i]);
		this.selection = ids.slice();
		this._sendPresence();
		// The view's "always" follows the selection.
		if (!same && this._view && this.conn.isOpen) this._sendView();
	}

	setDisplayName(name) {
		this.displayName = name;
		this._sendPresence();
	}

	_sendPresence() {
		if (!this._subscribed) return;
		this.conn.send({ type: 'presence', scene: this.scene, selection: this.selection, name: this.displayName });
	}

	/* --- edits --- */

	/*
	 * Sends one batch of ops and resolves with the ack {seq, recomputed}, or
	 * rejects with a ServerError (code, message, op, field). A batch whose
	 * connection drops before the answer is resent after the next snapshot
	 * with the same client_seq, so the promise still settles exactly once
	 * with the server's verdict.
	 */
	edit(ops, gesture = this._gesture) {
		const msg = { type: 'edit', scene: this.scene, ops, client: this.clientId, client_seq: ++this._clientSeq };
		const group = gesture || { count: 0, listed: false };
		this._inflight++;
		const settle = () => {
			this._inflight--;
			this._checkIdle();
		};
		return new Promise((resolve, reject) => {
			this._send({ msg, resolve, reject, group });
		}).finally(settle);
	}

	/* Resolves once no batch of ours is waiting for its answer and no
	 * coalesced one is queued (undo must count a drag's batches only when
	 * all of them have been answered). */
	_idle() {
		if (this._inflight === 0 && ![...this._channels.values()].some((c) => c.busy)) return Promise.resolve();
		return new Promise((resolve) => this._idleWaiters.push(resolve));
	}

	_checkIdle() {
		queueMicrotask(() => {
			if (this._inflight !== 0 || [...this._channels.values()].some((c) => c.busy)) return;
			const waiters = this._idleWaiters;
			this._idleWaiters = [];
			for (const w of waiters) w();
		});
	}

	_send(entry) {
		if (!this.conn.isOpen || !this._subscribed) {
			this._resend.push(entry);
			return;
		}
		this.conn.request(entry.msg).then(
			(ack) => {
				this._recordAccepted(entry.group);
				entry.resolve(ack);
			},
			(err) => {
				if (err instanceof DisconnectedError) this._resend.push(entry);
				else entry.reject(err);
			},
		);
	}

	_flushResend() {
		const queue = this._resend;
		this._resend = [];
		for (const entry of queue) this._send(entry);
	}

	/*
	 * For continuous input (a slider, a gizmo drag): at most one batch per
	 * 'key' is in flight; while it is, later ops replace each other and only
	 * the latest is sent when the answer comes. The returned promise settles
	 * with the answer to the batch that carried these ops (or resolves with
	 * null when newer ops superseded them before they were sent).
	 */
	live(key, ops) {
		let channel = this._channels.get(key);
		if (!channel) this._channels.set(key, (channel = { busy: false, next: null }));
		// The gesture is the one under way now, even if the batch goes out
		// after the gesture has ended (the last value of a drag usually does).
		const gesture = this._gesture;
		if (channel.busy) {
			if (channel.next) channel.next.resolve(null);
			return new Promise((resolve, reject) => (channel.next = { ops, gesture, resolve, reject }));
		}
		channel.busy = true;
		const run = (ops, gesture) =>
			this.edit(ops, gesture).finally(() => {
				const next = channel.next;
				channel.next = null;
				if (next) run(next.ops, next.gesture).then(next.resolve, next.reject);
				else {
					channel.busy = false;
					this._checkIdle();
				}
			});
		return run(ops, gesture);
	}

	/* Batches sent between beginGesture and endGesture undo as one step. */
	beginGesture() {
		this._gesture = { count: 0, listed: false };
	}
	endGesture() {
		this._gesture = null;
	}

	_recordAccepted(group) {
		group.count++;
		if (!group.listed) {
			group.listed = true;
			this._undoGroups.push(group);
			if (this._undoGroups.length > 500) this._undoGroups.shift();
		}
		this._redoGroups = [];
		this._emitHistory();
	}

	_emitHistory() {
		this.emit('history', { canUndo: this.canUndo, canRedo: this.canRedo, busy: this._historyQueued > 0 });
	}

	/*
	 * Undoes this browser's last gesture (one or more batches) through the
	 * server's per-client undo. Rejects with the server's error (for example
	 * undo_conflict when someone else has since changed the same node).
	 * A step asked for while another is under way runs after it, in order:
	 * Ctrl+Z pressed three times quickly undoes three gestures, and a redo
	 * pressed before the undo's replies arrived redoes it.
	 */
	undo() {
		return this._queueHistory(() => this._walkHistory('undo', this._undoGroups, this._redoGroups));
	}
	redo() {
		return this._queueHistory(() => this._walkHistory('redo', this._redoGroups, this._undoGroups));
	}

	_queueHistory(walk) {
		this._historyQueued++;
		this._emitHistory();
		const done = this._historyTail.then(walk).finally(() => {
			this._historyQueued--;
			this._emitHistory();
		});
		this._historyTail = done.catch(() => {});
		return done;
	}

	/* One step; runs only when the steps queued before it have ended. */
	async _walkHistory(type, from, to) {
		const pending = this._inflight > 0 || [...this._channels.values()].some((c) => c.busy);
		if (!from.length && !pending) return null;
		if (!this.conn.isOpen) throw new DisconnectedError();
		// A drag released a moment ago may still have batches on the way;
		// they belong to the gesture being undone.
		await this._idle();
		if (!from.length) return null;
		const group = from.pop();
		let done = 0;
		try {
			// All of the gesture's requests go out at once: the server takes
			// them in order, usually in one commit. If one is refused, the
			// ones after it are refused for the same reason (the server's
			// latest undoable batch has not changed), so nothing is skipped.
			const replies = [];
			for (let i = 0; i < group.count; i++) replies.push(this.conn.request({ type, scene: this.scene, client: this.clientId }));
			const results = await Promise.allSettled(replies);
			const failed = results.find((r) => r.status === 'rejected');
			done = results.filter((r) => r.status === 'fulfilled').length;
			if (failed) throw failed.reason;
		} catch (err) {
			if (err instanceof ServerError && (err.code === 'nothing_to_undo' || err.code === 'undo_conflict')) {
				// The server refuses this step until we edit anew (or its
				// history was trimmed): what we remember beyond it is moot.
				from.length = 0;
			} else if (done < group.count) {
				from.push({ count: group.count - done, listed: true });
			}
			throw err;
		} finally {
			if (done > 0) to.push({ count: done, listed: true });
		}
		return done;
	}
}
