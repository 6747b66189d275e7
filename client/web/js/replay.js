// The replay viewer at /replay/ID: every seat's board side by side, moved by one clock that
// plays, pauses, steps and scrubs. The boards are the server's (GET /api/replay/ID: each
// seat's engine view at the start and what each move changed); this page only applies them.

import { h } from "./dom.js";
import { renderBoard } from "./board.js";
import { STATUS_TEXT, formatTime, plural } from "./text.js";
import { nextTime, prepare, prevTime, seatAt } from "./replay-model.js";
import { fetchJson, pageHeader, pageError, placeText } from "./pages.js";

export const SPEEDS = [1, 2, 4, 8];
const TICK_MS = 50;

/** The replay page for record `id` in `root`; `search` may say ?t=SECONDS to start there. */
export async function start(root, id, search = location.search) {
  root.replaceChildren(h("div.app.replay-page", pageHeader(), h("p.boot", "Loading the replay…")));
  // The record is written just after the results: a link followed at once may be early.
  const got = await fetchJson(`/api/replay/${encodeURIComponent(id)}`, { retry404: 4 });
  if (!got.ok) {
    root.replaceChildren(h("div.app.replay-page", pageHeader(), pageError(got, "race record")));
    return null;
  }
  const viewer = new Viewer(root, prepare(got.body), startTime(search, got.body.duration));
  window.solraceReplay = viewer; // for the browser tests and the console; not used by the page
  document.title = `solrace — replay: ${got.body.title}, ${got.body.seats.map((s) => s.name).join(", ")}`;
  viewer.mount();
  return viewer;
}

/** ?t=SECONDS as ms within the race (0 when absent or not a number). */
export function startTime(search, duration) {
  const t = Number(new URLSearchParams(search).get("t"));
  return Number.isFinite(t) && t > 0 ? Math.min(duration, Math.round(t * 1000)) : 0;
}

class Viewer {
  constructor(root, replay, t) {
    this.root = root;
    this.replay = replay;
    this.t = t;
    this.speed = 1;
    this.timer = null;
    this.drawn = []; // per seat: the move count its board was last drawn at
  }

  get playing() {
    return this.timer !== null;
  }

  mount() {
    const doc = this.replay.doc;
    this.clock = h("span.clock", { dataset: { testid: "replay-clock" } });
    this.scrub = h("input.scrub", { type: "range", min: "0", max: String(doc.duration), step: "1", value: String(this.t),
      "aria-label": "Time in the race", dataset: { testid: "scrub" },
      oninput: (e) => this.seek(Number(e.target.value)) });
    this.playButton = h("button.primary.play", { dataset: { testid: "play" }, onclick: () => this.toggle() });
    const speed = h("select.speed", { "aria-label": "Speed", dataset: { testid: "speed" },
      onchange: (e) => { this.speed = Number(e.target.value); } },
    SPEEDS.map((s) => h("option", { value: String(s), selected: s === this.speed }, `${s}×`)));
    this.seats = doc.seats.map((seat, i) => this.seatPanel(seat, i));
    this.root.replaceChildren(h("div.app.replay-page", pageHeader(),
      h("main.replay",
        h("div.race-bar.replay-bar",
          h("span.game-name", doc.title),
          h("span.stat", new Date(doc.starts_at).toLocaleString()),
          h("span.spacer"),
          h("a.small-link", { href: `/api/record/${doc.id}.txt`, download: `solrace-${doc.id}.txt`, dataset: { testid: "download" } },
            "Download the record")),
        h("div.replay-controls",
          h("button.small", { dataset: { testid: "step-back" }, title: "Step back (←)", "aria-label": "Step back", onclick: () => this.step(-1) }, "« Step"),
          this.playButton,
          h("button.small", { dataset: { testid: "step-forward" }, title: "Step forward (→)", "aria-label": "Step forward", onclick: () => this.step(1) }, "Step »"),
          this.clock, this.scrub, speed),
        h("div.board-grid.replay-grid", this.seats.map((s) => s.el)))));
    document.addEventListener("keydown", (e) => this.key(e));
    // a focused button clicks on the space bar's release: space is play/pause here
    document.addEventListener("keyup", (e) => { if (e.key === " " && e.target.closest?.("button")) e.preventDefault(); });
    this.draw();
  }

  seatPanel(seat, i) {
    const name = seat.player
      ? h("a.name", { href: `/player/${seat.player}` }, seat.name || `seat ${seat.seat}`)
      : h("span.name", seat.name || `seat ${seat.seat}`);
    const moves = h("span.replay-moves", { dataset: { testid: "seat-moves" } });
    const last = h("span.replay-last", { dataset: { testid: "seat-last" } });
    const wrap = h("div.board-wrap");
    const fill = h("div.fill");
    const el = h("section.panel.watch.replay-seat", { dataset: { seat: String(seat.seat), index: String(i) } },
      h("div.watch-head",
        h("span.chip.place", placeText(seat.place)), name,
        h("span.muted", STATUS_TEXT[seat.status] || seat.status, seat.time != null ? ` ${formatTime(seat.time)}` : ""),
        h("span.spacer"), moves, last),
      h("div.bar", fill),
      wrap);
    return { el, moves, last, wrap, fill, total: seat.frames.length };
  }

  /** Draw the clock, the scrub bar, and each board whose move count changed. */
  draw() {
    const { doc } = this.replay;
    this.clock.textContent = `${formatTime(this.t)} / ${formatTime(doc.duration)}`;
    if (Number(this.scrub.value) !== this.t) this.scrub.value = String(this.t);
    this.playButton.textContent = this.playing ? "Pause" : "Play";
    this.playButton.setAttribute("aria-pressed", String(this.playing));
    this.seats.forEach((s, i) => {
      const at = seatAt(this.replay, i, this.t);
      if (this.drawn[i] === at.k) return;
      this.drawn[i] = at.k;
      s.moves.textContent = `${at.k}/${plural(s.total, "move")} · ${Math.round(at.view.progress * 100)}%`;
      s.fill.style.width = `${at.view.progress * 100}%`;
      s.last.textContent = at.last ? `${at.k}. ${at.last}` : "";
      s.el.dataset.moves = String(at.k);
      s.wrap.replaceChildren(renderBoard(at.view, {}, { owner: String(doc.seats[i].seat) }));
    });
  }

  seek(t) {
    this.t = Math.max(0, Math.min(this.replay.end, t));
    this.draw();
    if (!this.playing) this.remember();
  }

  /** The page's address says where it stands, so a paused replay can be linked. */
  remember() {
    const url = `${location.pathname}${this.t ? `?t=${(this.t / 1000).toFixed(3)}` : ""}`;
    history.replaceState(null, "", url);
  }

  step(dir) {
    this.pause();
    const { times, end } = this.replay;
    this.seek(dir > 0 ? nextTime(times, this.t, end) : prevTime(times, this.t));
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  play() {
    if (this.t >= this.replay.end) this.t = 0; // at the end, play starts over
    let last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      const t = this.t + (now - last) * this.speed;
      last = now;
      if (t >= this.replay.end) {
        this.seek(this.replay.end);
        this.pause();
      } else this.seek(t);
    }, TICK_MS);
    this.draw();
  }

  pause() {
    if (!this.playing) return;
    clearInterval(this.timer);
    this.timer = null;
    this.t = Math.round(this.t);
    this.draw();
    this.remember();
  }

  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target.closest?.("select, textarea, input:not([type=range])")) return;
    if (e.key === " ") this.toggle();
    else if (e.key === "ArrowRight") this.step(1);
    else if (e.key === "ArrowLeft") this.step(-1);
    else return;
    e.preventDefault(); // not the range's own step, nor a focused button's click
  }
}
