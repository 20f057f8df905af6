/*
 * timeline.js: the scene's history along the bottom of the window.
 *
 * A slider over the scene's seqs. At its right end the view is live; drag
 * it back and the viewer shows the scene as it was at that seq, read-only,
 * from the server's time travel (GET /api/scenes/NAME?at=SEQ). Play steps
 * through the log with its recorded timing (or faster), fetching each seq's
 * state from the server: the browser never re-applies edits itself. Undo
 * and redo buttons sit here too.
 */
import { getLog, getTree } from './api.js';
import { SceneModel, isTwoD } from './model.js';
import { Emitter, Listeners, el } from './util.js';

const SPEEDS = [
	['1', '1×'],
	['2', '2×'],
	['4', '4×'],
	['10', '10×'],
	['max', 'max'],
];

export class Timeline extends Emitter {
	/*
	 * Events:
	 *   show   {model, seq}   show this historical model (read-only)
	 *   live   {}             back to the live scene
	 *   undo / redo
	 *   error  {message}
	 */
	constructor(container, sceneName) {
		super();
		this.scene = sceneName;
		this._listeners = new Listeners();
		this.liveSeq = 0;
		this.viewSeq = null; // null: live
		this._log = null;
		this._fetching = false;
		this._wanted = null;
		this._play = null;
		this._abort = null;

		this.undoButton = el('button', { title: 'Undo your last edit (Ctrl+Z)', 'aria-label': 'Undo', disabled: true }, '↶ Undo');
		this.redoButton = el('button', { title: 'Redo (Ctrl+Shift+Z)', 'aria-label': 'Redo', disabled: true }, '↷ Redo');
		this.playButton = el('button.play', { title: 'Replay the log from the shown seq (or from the start)', 'aria-label': 'Play' }, '▶');
		this.speed = el('select', { 'aria-label': 'Replay speed', title: 'Replay speed: recorded timing, faster, or as fast as possible' }, ...SPEEDS.map(([v, t]) => el('option', { value: v }, t)));
		this.slider = el('input.timeline-slider', { type: 'range', min: 0, max: 0, step: 1, value: 0, 'aria-label': 'Scene history (seq)' });
		this.label = el('span.timeline-label', { 'aria-live': 'polite' });
		this.liveButton = el('button.live', { title: 'Back to the live scene', disabled: true }, '● Live');
		this.message = el('span.timeline-error', { role: 'alert' });
		container.append(
			el('div.history-buttons', {}, this.undoButton, this.redoButton),
			el('div.sep'),
			this.playButton,
			this.speed,
			this.slider,
			this.label,
			this.liveButton,
			this.message,
		);

		const L = this._listeners;
		L.listen(this.undoButton, 'click', () => this.emit('undo'));
		L.listen(this.redoButton, 'click', () => this.emit('redo'));
		L.listen(this.slider, 'input', () => {
			this.stop();
			this.goTo(Number(this.slider.value));
		});
		L.listen(this.liveButton, 'click', () => {
			this.stop();
			this.goLive();
		});
		L.listen(this.playButton, 'click', () => (this._play ? this.stop() : this.play()));
		this._render();
	}

	setHistoryState({ canUndo, canRedo }) {
		this._hist = { canUndo, canRedo };
		this._render();
	}

	/* The live scene reached 'seq'. */
	setLiveSeq(seq) {
		// Updates that only show or hide nodes (a moving camera's view)
		// keep the seq: writing the same values would still cost a layout.
		if (seq === this.liveSeq) return;
		if (seq > this.liveSeq && this._log) this._log = this._log.filter((e) => e.seq <= seq);
		this.liveSeq = seq;
		this.slider.max = String(seq);
		if (this.viewSeq === null) this.slider.value = String(seq);
		this._render();
	}

	/* Shows the scene at 'seq' (read-only); the live end goes live. */
	goTo(seq) {
		seq = Math.max(0, Math.min(this.liveSeq, Math.round(seq)));
		if (seq >= this.liveSeq) return this.goLive();
		this.slider.value = String(seq);
		this._wanted = seq;
		this._render();
		this._fetchWanted();
		return this._settled();
	}

	goLive() {
		this._wanted = null;
		if (this._abort) this._abort.abort();
		this.viewSeq = null;
		this.slider.value = String(this.liveSeq);
		this.message.textContent = '';
		this._render();
		this.emit('live', {});
		return Promise.resolve();
	}

	/* A promise that resolves once the shown seq is the wanted one. */
	_settled() {
		return new Promise((resolve) => {
			const check = () => (this._wanted === null || (!this._fetching && this.viewSeq === this._wanted) ? resolve() : setTimeout(check, 10));
			check();
		});
	}

	/* Fetches the latest wanted seq; a drag that outruns the server skips
	 * the seqs it passed over rather than queueing them. */
	async _fetchWanted() {
		if (this._fetching) return;
		this._fetching = true;
		try {
			while (this._wanted !== null && this._wanted !== this.viewSeq) {
				const seq = this._wanted;
				this._abort = new AbortController();
				let tree;
				try {
					tree = await getTree(this.scene, seq, { signal: this._abort.signal });
				} catch (err) {
					if (err.name === 'AbortError' || this._wanted === null) break;
					this.message.textContent = err.message;
					this.emit('error', { message: err.message });
					this._wanted = null;
					break;
				}
				if (this._wanted === null) break; // went live meanwhile
				const model = new SceneModel(this.scene, { readOnly: true });
				model.load(tree.nodes, tree.seq, { dims: isTwoD(tree) ? 2 : 3, order: tree.order });
				this.viewSeq = seq;
				this.message.textContent = '';
				this._render();
				this.emit('show', { model, seq });
			}
		} finally {
			this._fetching = false;
			this._abort = null;
		}
	}

	/*
	 * Replays the log from the shown seq (from seq 0 when live) to the live
	 * end, keeping the recorded time between batches divided by the speed;
	 * 'max' shows every seq as fast as the server answers. Seqs whose time
	 * has already passed when the previous one arrives are skipped.
	 */
	async play() {
		if (this._play) return;
		const token = {};
		this._play = token;
		this._render();
		try {
			if (!this._log || this._log.length < this.liveSeq) this._log = (await getLog(this.scene, 1, this.liveSeq)).map((e) => ({ seq: e.seq, time: e.time }));
			const start = this.viewSeq === null ? 0 : this.viewSeq;
			const entries = this._log.filter((e) => e.seq > start);
			if (!entries.length) return;
			const speed = this.speed.value;
			const t0 = performance.now();
			const logT0 = (this._log.find((e) => e.seq === start) || entries[0]).time;
			await this.goTo(start);
			for (let i = 0; i < entries.length; i++) {
				if (this._play !== token) return;
				let next = i;
				if (speed !== 'max') {
					const due = (entries[i].time - logT0) / 1000 / Number(speed); // ms after t0
					const wait = due - (performance.now() - t0);
					if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 5000)));
					if (this._play !== token) return;
					// Skip what is already late.
					const elapsed = performance.now() - t0;
					while (next + 1 < entries.length && (entries[next + 1].time - logT0) / 1000 / Number(speed) <= elapsed) next++;
				}
				i = next;
				await this.goTo(entries[i].seq);
			}
		} catch (err) {
			this.message.textContent = err.message;
		} finally {
			if (this._play === token) this._play = null;
			this._render();
		}
	}

	stop() {
		this._play = null;
		this._render();
	}

	_render() {
		const live = this.viewSeq === null && this._wanted === null;
		this.liveButton.disabled = live;
		this.liveButton.classList.toggle('on', live);
		this.playButton.textContent = this._play ? '❚❚' : '▶';
		this.playButton.setAttribute('aria-label', this._play ? 'Pause' : 'Play');
		const shown = live ? this.liveSeq : this._wanted ?? this.viewSeq;
		const entry = this._log && this._log.find((e) => e.seq === shown);
		const when = entry ? ` · ${new Date(entry.time / 1000).toLocaleTimeString()}` : '';
		this.label.textContent = live ? `seq ${this.liveSeq} · live` : `seq ${shown} of ${this.liveSeq}${when} · read-only`;
		const hist = this._hist || { canUndo: false, canRedo: false };
		this.undoButton.disabled = !hist.canUndo || !live;
		this.redoButton.disabled = !hist.canRedo || !live;
	}

	dispose() {
		this.stop();
		if (this._abort) this._abort.abort();
		this._listeners.dispose();
	}
}
