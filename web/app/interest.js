/*
 * interest.js: per-viewer interest for the 3D view (docs/protocol.md,
 * "Views"). While interest is on, the viewer declares its camera's view to
 * the server whenever the camera moves, at most once per VIEW_INTERVAL_MS
 * and once more after the last move, so the server sends it the matrices of
 * the nodes it can see and lists the others as hidden (the model keeps the
 * flag; the node layer does not draw them).
 *
 * Whether it is on follows the page's ?interest= (interestMode): 'auto' (the
 * default) turns it on for a 3D scene of AUTO_INTEREST_NODES nodes or more
 * and off again below AUTO_INTEREST_OFF_NODES, following the scene as it
 * grows and shrinks (a withdrawn view is cleared with {"clear": true});
 * 'on' forces it on at any size, 'off' forces it off. A 2D scene never
 * declares a view: its SVG view does not look through the 3D camera.
 *
 * Sends nothing but view messages; composes no world matrix (the camera's
 * view-projection is three.js's own product of its two matrices).
 */

export const VIEW_INTERVAL_MS = 100;

/*
 * With ?interest=auto, a 3D scene of this many nodes or more gets a view.
 * Below a few thousand nodes a view saves nothing worth having: the browser
 * draws every node with a handful of draw calls (web_bigscene orbits
 * 10,000), a frame of every matrix is at most a few hundred kB, and most
 * updates carry only the nodes an edit moved; but a view costs a message
 * per camera move and a server cull per view, and nodes that enter the
 * view appear one round trip after the camera got there instead of being
 * drawn already. Past it the matrices the camera cannot see are most of
 * the bytes and of the work of every update (100,000 nodes: 6.4 MB of
 * float32 matrices for a root edit, against the 1% in view).
 */
export const AUTO_INTEREST_NODES = 2000;

/* ...and keeps it until the scene has fewer than this many nodes, so a
 * scene that hovers at the threshold (a node created and one deleted each
 * edit) does not declare and withdraw its view on every update. */
export const AUTO_INTEREST_OFF_NODES = 1500;

/* The page's choice: 'on' (?interest=on or =1), 'off' (=off or =0), else
 * 'auto' (absent, =auto, or a value the viewer does not know). */
export function interestMode(search) {
	const v = new URLSearchParams(search || '').get('interest');
	if (v === 'on' || v === '1') return 'on';
	if (v === 'off' || v === '0') return 'off';
	return 'auto';
}

/*
 * Whether a scene of 'dims' (2 or 3) with 'nodes' nodes should have a view
 * under 'mode', given whether it has one now ('wasOn': the hysteresis of
 * AUTO_INTEREST_OFF_NODES). Pure: the unit tests call it directly.
 */
export function wantsInterest(mode, { dims, nodes }, wasOn = false) {
	if (dims === 2 || mode === 'off') return false;
	if (mode === 'on') return true;
	return nodes >= (wasOn ? AUTO_INTEREST_OFF_NODES : AUTO_INTEREST_NODES);
}

/* ?min_px=N (pixels, 0 or more; default 0: every node in view). */
export function minPxOf(search) {
	const v = Number(new URLSearchParams(search || '').get('min_px'));
	return Number.isFinite(v) && v > 0 ? v : 0;
}

/*
 * Sends 'viewport''s camera to 'session' as its view: on every camera
 * event ({vp: 16 numbers, viewport: [w, h]}), throttled. dispose() stops.
 */
export class ViewSender {
	constructor(session, viewport, { intervalMs = VIEW_INTERVAL_MS, minPx = 0 } = {}) {
		this.session = session;
		this.intervalMs = intervalMs;
		this.minPx = minPx;
		this.sent = 0;
		this._last = -Infinity;
		this._timer = 0;
		this._pending = null;
		this._off = viewport.on('camera', (v) => this.moved(v));
		const now = viewport.currentView();
		if (now) this.moved(now);
	}

	/* The camera moved: send now if the last send is old enough, else
	 * once the interval has passed (with the latest view then). */
	moved(view) {
		this._pending = {
			vp: Array.from(view.vp),
			viewport: view.viewport.map((n) => Math.max(1, Math.min(65536, Math.round(n)))),
			min_px: this.minPx,
		};
		if (this._timer) return;
		const wait = this._last + this.intervalMs - performance.now();
		if (wait <= 0) this._flush();
		else this._timer = setTimeout(() => this._flush(), wait);
	}

	_flush() {
		this._timer = 0;
		if (!this._pending) return;
		this._last = performance.now();
		this.session.setView(this._pending);
		this._pending = null;
		this.sent++;
	}

	dispose() {
		clearTimeout(this._timer);
		this._timer = 0;
		this._off();
	}
}

/*
 * Turns the view on and off as wantsInterest says for 'session''s live
 * model: checked after every snapshot and update (a scene grows and
 * shrinks while open). On, it owns a ViewSender; turned off, it disposes
 * of it and clears the view on the server. dispose() stops listening (and
 * leaves the server alone: the session's unsubscribe drops the view).
 */
export class InterestControl {
	constructor(session, viewport, { mode = 'auto', minPx = 0 } = {}) {
		this.session = session;
		this.viewport = viewport;
		this.mode = mode;
		this.minPx = minPx;
		this.sender = null;
		const model = session.model;
		// The snapshot's reset comes before the session says it is live,
		// so the status event decides the first time.
		this._offs = [
			session.on('status', ({ phase }) => phase === 'live' && this.check()),
			model.on('reset', () => this.check()),
			model.on('update', () => this.check()),
		];
		this.check();
	}

	get enabled() {
		return this.sender !== null;
	}

	/* Declares or withdraws the view if the scene crossed a threshold. */
	check() {
		const model = this.session.model;
		// Nothing to decide before the first snapshot (dims unknown).
		if (this.session.phase !== 'live') return;
		const want = wantsInterest(this.mode, { dims: model.dims, nodes: model.size }, this.enabled);
		if (want && !this.sender) {
			this.sender = new ViewSender(this.session, this.viewport, { minPx: this.minPx });
		} else if (!want && this.sender) {
			this.sender.dispose();
			this.sender = null;
			this.session.clearView();
		}
	}

	dispose() {
		for (const off of this._offs) off();
		this._offs = [];
		if (this.sender) this.sender.dispose();
		this.sender = null;
	}
}
