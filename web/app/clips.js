/*
 * clips.js: the clips panel of a 2D scene, under the inspector.
 *
 * ClipPanel lists the animations (clips) of the skeletons imported into
 * the scene (GET /api/scenes/NAME/clips, at the seq shown, read again when
 * the scene's node count changes, which is what an import does) and poses the skeleton at a
 * time of one of them with `clip` ops: the server samples the clip and
 * turns the op into plain sets of the bones (and of the slots' z and
 * layer), broadcast to everyone viewing the scene like any edit. The page
 * never samples a clip itself.
 *
 * The controls: the list (a button per clip: name and duration), a time
 * slider in frames of the clip's frame rate (1/60 s for a clip without
 * one: Spine's), the time shown, play / pause, loop, and a weight slider.
 * Space toggles play and the arrow keys step a frame while focus is inside
 * the panel (on a slider the arrows move that slider, a frame for time).
 *
 * Every op goes through one coalescing channel of the session ('live'):
 * at most one batch is in flight, and the last value is always sent. While
 * playing, each animation frame sends the clip's time then, unless the
 * previous batch has not been acknowledged yet: that frame is skipped and
 * counted, and a later one sends the then-current time.
 *
 * Never: sends anything but through the 'live' callback; samples a clip.
 */
import { getClips } from './api.js';
import { Listeners, clear, el, fmt } from './util.js';

/* The frames a second a clip's time advances in: its own, or 60 for a clip
 * without one (a Spine animation, whose keys are in seconds). */
export function framesPerSecond(clip) {
	return clip && clip.frame_rate > 0 ? clip.frame_rate : 60;
}

/* The last frame of 'clip' (the slider's maximum): its duration in frames,
 * rounded up so the end itself can be reached. */
export function lastFrame(clip) {
	return Math.max(0, Math.ceil(clip.duration * framesPerSecond(clip) - 1e-9));
}

/* The time, in seconds, of frame 'frame' of 'clip' (never past its end). */
export function timeOfFrame(clip, frame) {
	return Math.min(clip.duration, Math.max(0, frame) / framesPerSecond(clip));
}

/* The frame of 'clip' shown at 'time': the last one at or before it. */
export function frameOfTime(clip, time) {
	if (time >= clip.duration) return lastFrame(clip);
	return Math.max(0, Math.floor(time * framesPerSecond(clip) + 1e-9));
}

/*
 * Where play is after 'dt' seconds from 'time' in a clip 'duration' long:
 * {time, ended}. Looping wraps past the end; otherwise play stops at the
 * end (ended true). A clip of zero length stays at 0.
 */
export function advance(time, dt, duration, loop) {
	if (!(duration > 0)) return { time: 0, ended: !loop };
	const t = time + dt;
	if (t < duration) return { time: t, ended: false };
	if (!loop) return { time: duration, ended: true };
	return { time: t % duration, ended: false };
}

/* The time sent for play at 'time': a clip with a frame rate is posed at
 * its frames (DragonBones keys sit on them), one without at the time
 * itself; the end is sent as it is. */
export function sentTime(clip, time) {
	if (!(clip.frame_rate > 0) || time >= clip.duration) return time;
	return timeOfFrame(clip, frameOfTime(clip, time));
}

/* A clip's key in the list: its file and name. */
const keyOf = (clip) => `${clip.file}\n${clip.name}`;

export class ClipPanel {
	/* 'scene' names the scene; 'live(key, ops)' sends through a coalescing
	 * channel; 'gesture(on)' brackets the batches undone as one step. */
	constructor(container, { scene, live, gesture }) {
		this.scene = scene;
		this._live = live;
		this._gesture = gesture;
		this._listeners = new Listeners();
		this.clips = [];
		this.clip = null;
		this.time = 0; // seconds
		this.playing = false;
		this.editable = true;
		this._outstanding = 0; // clip batches not yet acknowledged or superseded
		this._lastSent = null;
		this._picked = null; // keyOf() the clip the user picked last
		this.stats = { sent: 0, acked: 0, skipped: 0, frames: 0 };
		this.list = el('div.clip-list', { role: 'group', 'aria-label': 'Clips of the scene' });
		this.timeSlider = el('input.slider.clip-time', { type: 'range', min: 0, max: 0, step: 1, value: 0, 'aria-label': 'Clip time' });
		this.timeText = el('span.muted.small.clip-time-text', {}, '');
		this.playButton = el('button.clip-play', { type: 'button', 'aria-label': 'Play clip', 'aria-pressed': 'false', title: 'Play the clip for everyone watching (Space)' }, '▶');
		this.loopBox = el('input.clip-loop', { type: 'checkbox', checked: true });
		this.weightSlider = el('input.slider.clip-weight', { type: 'range', min: 0, max: 1, step: 0.01, value: 1, 'aria-label': 'Clip weight' });
		this.weightText = el('span.muted.small.clip-weight-text', {}, '1.00');
		this.message = el('div.panel-message', { role: 'status' });
		this.element = el(
			'section.panel2d.clips-panel',
			{ 'aria-label': 'Clips', tabindex: '-1', hidden: true },
			el('div.panel-head', {}, el('h2', {}, 'Clips'), el('span.muted.small', {}, 'Space: play · ←/→: a frame')),
			this.list,
			el('div.clip-row', {}, this.playButton, this.timeSlider, this.timeText),
			el('div.clip-row', {}, el('label.toggle-chip.clip-loop-label', { title: 'Start again at the end' }, this.loopBox, 'Loop'), el('span.muted.small', {}, 'weight'), this.weightSlider, this.weightText),
			this.message,
		);
		container.append(this.element);
		const L = this._listeners;
		L.listen(this.playButton, 'click', () => this.toggle());
		L.listen(this.timeSlider, 'input', () => {
			this.pause();
			this._setTime(timeOfFrame(this.clip, Number(this.timeSlider.value)));
			this._send();
		});
		// A drag is one undo step; it stops play first (which ends play's).
		L.listen(this.timeSlider, 'pointerdown', () => {
			this.pause();
			this._gesture(true);
		});
		L.listen(this.timeSlider, 'change', () => this._gesture(false));
		L.listen(this.weightSlider, 'input', () => {
			this._showWeight();
			if (!this.playing) this._send();
		});
		// A weight drag while a clip plays belongs to play's undo step.
		L.listen(this.weightSlider, 'pointerdown', () => (this._weightGesture = !this.playing) && this._gesture(true));
		L.listen(this.weightSlider, 'change', () => {
			if (this._weightGesture) this._gesture(false);
			this._weightGesture = false;
		});
		L.listen(this.element, 'keydown', (e) => this._onKey(e));
	}

	setModel(model) {
		if (this._unsubs) this._unsubs.forEach((off) => off());
		this.model = model;
		this._unsubs = [
			model.on('reset', () => this.refresh()),
			// An import adds nodes; a clip op or a drag only moves them.
			model.on('update', () => model.size !== this._readAtSize && this.refresh()),
		];
		this.refresh();
	}

	setEditable(on) {
		this.editable = on;
		if (!on) this.pause();
		const usable = on && !!this.clip;
		for (const c of [this.playButton, this.timeSlider, this.loopBox, this.weightSlider]) c.disabled = !usable;
		for (const b of this.list.querySelectorAll('button')) b.disabled = !on;
	}

	/* Reads the clip list again, one request at a time (a change while one
	 * is out reads once more after it). */
	refresh() {
		if (this._reading) {
			this._again = true;
			return;
		}
		this._reading = true;
		const model = this.model;
		this._readAtSize = model.size;
		getClips(this.scene, model.readOnly ? model.seq : null)
			.then((clips) => model === this.model && this._show(clips))
			.catch((err) => (this.message.textContent = err.message))
			.finally(() => {
				this._reading = false;
				if (this._again) (this._again = false), this.refresh();
			});
	}

	_show(clips) {
		this.clips = Array.isArray(clips) ? clips : [];
		this.element.hidden = this.clips.length === 0;
		const files = new Set(this.clips.map((c) => c.file));
		clear(this.list);
		for (const clip of this.clips) {
			const from = files.size > 1 ? ` (${clip.file})` : '';
			const b = el(
				'button.clip-pick',
				{ type: 'button', 'aria-pressed': 'false', dataset: { clip: clip.name, file: clip.file }, 'aria-label': `${clip.name}${from}, ${fmt(clip.duration, 2)} seconds`, title: `Pose the skeleton with clip ${clip.name}${from}` },
				el('span.clip-name', {}, clip.name),
				el('span.muted.small', {}, ` ${fmt(clip.duration, 2)} s${from}`),
			);
			b.addEventListener('click', () => this.pick(clip));
			this.list.append(b);
		}
		// The clip picked stays picked while the list lacks it (an earlier
		// seq, before the import) and comes back with it.
		const again = this.clips.find((c) => keyOf(c) === this._picked);
		if (again) this._choose(again, this.time);
		else if (this.clip) this._choose(null, 0);
		this.setEditable(this.editable && !this.model.readOnly);
	}

	/* Picks 'clip' (an entry of the list) and poses the skeleton at its
	 * start. */
	pick(clip) {
		this.pause();
		this._picked = keyOf(clip);
		this._choose(clip, 0);
		this.setEditable(this.editable && !this.model.readOnly);
		this._send();
	}

	_choose(clip, time) {
		this.clip = clip;
		for (const b of this.list.querySelectorAll('button.clip-pick')) b.setAttribute('aria-pressed', String(!!clip && b.dataset.clip === clip.name && b.dataset.file === clip.file));
		this.timeSlider.max = String(clip ? lastFrame(clip) : 0);
		this._setTime(clip ? Math.min(time, clip.duration) : 0);
	}

	_setTime(time) {
		this.time = time;
		if (!this.clip) {
			this.timeSlider.value = '0';
			this.timeText.textContent = '';
			return;
		}
		const frame = frameOfTime(this.clip, time);
		this.timeSlider.value = String(frame);
		const text = `${fmt(time, 3)} s of ${fmt(this.clip.duration, 3)} s`;
		this.timeSlider.setAttribute('aria-valuetext', `${text}, frame ${frame}`);
		this.timeText.textContent = `${fmt(time, 3)} / ${fmt(this.clip.duration, 3)} s`;
	}

	_showWeight() {
		this.weightText.textContent = Number(this.weightSlider.value).toFixed(2);
	}

	/* Steps 'by' frames (negative: back) from the frame shown, and sends. */
	step(by) {
		if (!this.clip || !this.editable) return;
		this.pause();
		const frame = Math.max(0, Math.min(lastFrame(this.clip), frameOfTime(this.clip, this.time) + by));
		this._setTime(timeOfFrame(this.clip, frame));
		this._send();
	}

	toggle() {
		if (this.playing) this.pause();
		else this.play();
	}

	/* Plays the clip from the time shown (from the start when it is at the
	 * end and does not loop). The batches of one play undo as one step. */
	play() {
		if (this.playing || !this.clip || !this.editable) return;
		if (!this.loopBox.checked && this.time >= this.clip.duration) this._setTime(0);
		this.playing = true;
		this._gesture(true);
		this.playButton.textContent = '❚❚';
		this.playButton.setAttribute('aria-label', 'Pause clip');
		this.playButton.setAttribute('aria-pressed', 'true');
		this._lastFrameAt = null;
		this._raf = requestAnimationFrame((now) => this._frame(now));
	}

	pause() {
		if (!this.playing) return;
		this.playing = false;
		cancelAnimationFrame(this._raf);
		this.playButton.textContent = '▶';
		this.playButton.setAttribute('aria-label', 'Play clip');
		this.playButton.setAttribute('aria-pressed', 'false');
		// Play stops on what it would pose now: a clip's frame when it has
		// a frame rate, sent unless the last batch carried it already (a
		// skipped frame's time was never sent).
		if (this.clip) {
			const t = sentTime(this.clip, this.time);
			this._setTime(t);
			if (this._lastSent !== t) this._send(t);
		}
		this._gesture(false);
	}

	/* One animation frame of play: the time advances by the real time
	 * since the previous frame. */
	_frame(now) {
		if (!this.playing) return;
		const dt = this._lastFrameAt === null ? 0 : (now - this._lastFrameAt) / 1000;
		this._lastFrameAt = now;
		this.stats.frames++;
		const { time, ended } = advance(this.time, dt, this.clip.duration, this.loopBox.checked);
		this._setTime(time);
		const t = sentTime(this.clip, time);
		if (t !== this._lastSent) {
			if (this._outstanding > 0) this.stats.skipped++;
			else this._send(t);
		}
		if (ended) this.pause();
		else this._raf = requestAnimationFrame((n) => this._frame(n));
	}

	/* Sends the clip op for 'time' (default the time shown). */
	_send(time = this.time) {
		if (!this.clip || !this.editable) return;
		const op = { op: 'clip', clip: this.clip.name, file: this.clip.file, time, weight: Number(this.weightSlider.value) };
		this._lastSent = time;
		this._outstanding++;
		this.stats.sent++;
		this.message.textContent = '';
		this._live('clip', [op])
			.then(
				(ack) => ack && this.stats.acked++,
				(err) => {
					this.message.textContent = err.message;
					this.pause();
				},
			)
			.finally(() => this._outstanding--);
	}

	_onKey(e) {
		if (e.altKey || e.ctrlKey || e.metaKey) return;
		const range = e.target.matches && e.target.matches('input[type=range]');
		if (e.key === ' ') {
			this.toggle();
		} else if (['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown'].includes(e.key)) {
			// A slider's own arrows move it (the time slider by a frame).
			if (range) return e.stopPropagation();
			this.step(e.key === 'ArrowRight' || e.key === 'ArrowUp' ? 1 : -1);
		} else return;
		e.preventDefault();
		e.stopPropagation();
	}

	/* What the panel is doing, for tests (window.rigd.clips()). */
	state() {
		return {
			clips: this.clips.map((c) => ({ ...c })),
			clip: this.clip ? this.clip.name : null,
			file: this.clip ? this.clip.file : null,
			time: this.time,
			playing: this.playing,
			loop: this.loopBox.checked,
			weight: Number(this.weightSlider.value),
			outstanding: this._outstanding,
			...this.stats,
		};
	}

	dispose() {
		if (this._unsubs) this._unsubs.forEach((off) => off());
		// Stops play without a last batch: the scene is being closed.
		this.editable = false;
		this.pause();
		this._listeners.dispose();
		this.element.remove();
	}
}
