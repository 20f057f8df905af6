/*
 * touch.js: what the views share for fingers (Pointer Events): how far a
 * tap may wander, how long a press must last to open a node's menu, and
 * how large a hit target must be on a touch screen.
 *
 * A long press is a single pointer held still for LONG_PRESS_MS; a second
 * finger, a move beyond TAP_SLOP_PX or a release before then cancels it.
 * Never: sends an edit or changes what is drawn; it only says when a
 * press became long.
 */

export const TAP_SLOP_PX = 10; // a touch that moved less is a tap
export const MOUSE_SLOP_PX = 4; // the same for a mouse
export const LONG_PRESS_MS = 550;
export const TOUCH_TARGET_PX = 44; // WCAG 2.5.5 target size, CSS pixels

/* True when the device's main pointer is a finger (a phone, a tablet). */
export function coarsePointer() {
	return typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;
}

/* How far a press may move and still be a tap, for pointer event 'e'. */
export function slopOf(e) {
	return e.pointerType === 'mouse' ? MOUSE_SLOP_PX : TAP_SLOP_PX;
}

export class LongPress {
	/* 'fire(x, y)' is called once a touch or pen press has been held still
	 * for LONG_PRESS_MS; 'fired' then stays true until the next down. */
	constructor(fire) {
		this._fire = fire;
		this._timer = 0;
		this._at = null;
		this.fired = false;
	}

	down(e, pointers) {
		this.cancel();
		this.fired = false;
		if (e.pointerType === 'mouse' || pointers > 1) return;
		this._at = { x: e.clientX, y: e.clientY, id: e.pointerId };
		this._timer = setTimeout(() => {
			this._timer = 0;
			this.fired = true;
			this._fire(this._at.x, this._at.y);
		}, LONG_PRESS_MS);
	}

	move(e) {
		if (!this._timer || e.pointerId !== this._at.id) return;
		if (Math.hypot(e.clientX - this._at.x, e.clientY - this._at.y) > TAP_SLOP_PX) this.cancel();
	}

	cancel() {
		clearTimeout(this._timer);
		this._timer = 0;
	}
}
