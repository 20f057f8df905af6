/*
 * interest.js: per-viewer interest for the 3D view (docs/protocol.md,
 * "Views"). With ?interest=on in the page's URL, the viewer declares its
 * camera's view to the server whenever the camera moves, at most once per
 * VIEW_INTERVAL_MS and once more after the last move, so the server sends
 * it the matrices of the nodes it can see and lists the others as hidden
 * (the model keeps the flag; the node layer does not draw them).
 *
 * Sends nothing but view messages; composes no world matrix (the camera's
 * view-projection is three.js's own product of its two matrices).
 */

export const VIEW_INTERVAL_MS = 100;

/* Whether the page asked for interest (?interest=on or =1). */
export function interestEnabled(search) {
	const v = new URLSearchParams(search || '').get('interest');
	return v === 'on' || v === '1';
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
