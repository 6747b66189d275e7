// The broadcast view, /broadcast/CODE: a room as a streamer puts it on screen (an OBS browser
// source at 1920x1080). It is a spectator like any other: it sends `spectate`, keeps the room
// with the same reducer as the racing app (state.js), and shows only what the server sent it
// (server/projection.py decides: the boards late by the room's delay, none to a racer's
// address, none at all in a progress-only room). No controls. Query options:
//   ?transparent=1   no background (the stream's own scene shows through)
//   ?boards=N        the leaders' boards shown, 0-4 (default 2)

import { Connection } from "./net.js";
import { initialState, reduce, gameTitle } from "./state.js";
import { h } from "./dom.js";
import { renderBoard } from "./board.js";
import { clockTexts } from "./render.js";
import { roundText, seriesActive, standingsTable } from "./series.js";
import { STATUS_TEXT, formatTime, plural } from "./text.js";

const MAX_BOARDS = 4;

function pct(p) {
  return `${Math.round((p || 0) * 100)}%`;
}

/** The seats in race order now: winners by time, then by progress (the page's guess; the
 * results' ranking, once there is one, is the server's). */
export function raceOrder(snap) {
  if (snap.state === "finished" && snap.results?.ranking) {
    const bySeat = new Map(snap.players.map((p) => [p.seat, p]));
    return snap.results.ranking.map((r) => ({ ...(bySeat.get(r.seat) || {}), ...r }));
  }
  const inRace = snap.players.filter((p) => p.status !== "waiting");
  const rows = inRace.length ? inRace : snap.players;
  return [...rows].sort((a, b) => {
    const aw = a.status === "won" ? 0 : 1;
    const bw = b.status === "won" ? 0 : 1;
    if (aw !== bw) return aw - bw;
    if (aw === 0) return (a.time ?? 0) - (b.time ?? 0);
    return (b.progress || 0) - (a.progress || 0) || a.seat - b.seat;
  });
}

function progressRow(p, place) {
  const done = p.status && p.status !== "racing" && p.status !== "waiting";
  return h(`li.bc-racer.${p.status || "waiting"}`, { dataset: { seat: String(p.seat), status: p.status || "", progress: String(p.progress ?? 0) } },
    h("span.bc-place", String(place)),
    h("span.bc-name", p.name || `seat ${p.seat}`, p.bot ? h("span.chip", "bot") : null),
    h("div.bc-bar", { role: "img", "aria-label": `${p.name || `seat ${p.seat}`}: ${pct(p.progress)}` },
      h("div.fill", { style: { width: pct(p.progress) } })),
    h("span.bc-pct", pct(p.progress)),
    h("span.bc-meta", plural(p.moves || 0, "move"), done ? ` · ${STATUS_TEXT[p.status] || p.status}` : "",
      done && p.time != null ? ` · ${formatTime(p.time)}` : ""));
}

function leaderBoards(state, count) {
  const snap = state.snap;
  if (!count || snap.state === "lobby") return null;
  if (snap.options?.spectator_view === "progress") return null;
  const seats = raceOrder(snap).map((p) => p.seat).filter((s) => state.boards[s]).slice(0, count);
  if (!seats.length) {
    return h("p.bc-note", snap.state === "racing" ? "Boards are not shown here during this race." : "");
  }
  const delay = snap.options?.spectator_delay ?? 0;
  return h("section.bc-boards", { "aria-label": "The leaders' boards" },
    snap.state === "racing" && delay > 0 ? h("p.bc-note", `Boards ${delay} s behind`) : null,
    h("div.bc-board-grid", { style: { "--n": String(seats.length) } }, seats.map((seat) => {
      const p = snap.players.find((x) => x.seat === seat);
      const board = state.boards[seat];
      return h("div.bc-board", { dataset: { seat: String(seat) } },
        h("div.bc-board-head", h("span.bc-name", p?.name || `seat ${seat}`), h("span", `${plural(board.moves, "move")} · ${pct(board.progress)}`)),
        h("div.board-wrap", renderBoard(board, {}, { owner: String(seat) })));
    })));
}

/** The headline's clock: what the race is at (the countdown, the race time), as of `now`. */
export function clockLine(state, now) {
  const clocks = clockTexts(state, now);
  return { lobby: "Next race soon", countdown: `Starting in ${clocks.countdown || ""}`, racing: clocks.elapsed || "", finished: "Finished" }[state.snap.state] || "";
}

function headline(state, now) {
  const snap = state.snap;
  const series = seriesActive(snap);
  // the round racing (or next, in the lobby); after the results, the one just played
  const round = series ? roundText(series, series.played + (snap.state === "finished" ? 0 : 1)) : null;
  return h("header.bc-head",
    h("span.logo", "sol", h("b", "race")),
    h("h1.bc-title", gameTitle(state, snap.options?.game)),
    // a private room's code is its only key: never on a stream
    snap.options?.public ? h("span.bc-code", snap.room) : null,
    round ? h("span.bc-round", { dataset: { testid: "bc-round" } }, round) : null,
    h("span.spacer"),
    h("span.bc-clock", { dataset: { testid: "bc-clock" } }, clockLine(state, now)),
    h("span.bc-watching", `${snap.spectators || 0} watching`));
}

export function renderBroadcast(state, opts, now = Date.now()) {
  const snap = state.snap;
  if (!snap) {
    return h("main.broadcast", h("p.bc-note", state.notice ? state.notice.text : "Connecting…"));
  }
  const order = raceOrder(snap);
  return h(`main.broadcast.state-${snap.state}`, { dataset: { state: snap.state } },
    headline(state, now),
    h("div.bc-top",
      h("section.bc-progress", { "aria-label": "Race progress" },
        h("h2", snap.state === "finished" ? "Results" : snap.state === "lobby" ? "Players" : "Race"),
        h("ol.bc-racers", order.map((p, i) => progressRow(p, snap.state === "finished" && p.place ? p.place : i + 1)))),
      snap.series ? standingsTable({ ...state, role: "spectator" }) : null),
    leaderBoards(state, opts.boards));
}

export async function start(root, code, search = location.search) {
  const params = new URLSearchParams(search);
  const opts = { boards: Math.max(0, Math.min(MAX_BOARDS, Number(params.get("boards") ?? 2) || 0)) };
  if (params.has("boards") && params.get("boards") === "0") opts.boards = 0;
  if (["1", "true", "yes"].includes(params.get("transparent") || "")) document.documentElement.classList.add("transparent");
  document.documentElement.classList.add("broadcast-page");
  document.title = "solrace broadcast";
  let state = initialState();
  let resyncing = false;
  const draw = () => root.replaceChildren(renderBroadcast(state, opts));
  const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  const conn = new Connection(wsUrl, {
    room: () => code,
    onStatus(s) { state = { ...state, conn: s }; },
    onMessage(msg) {
      state = reduce(state, msg);
      draw();
      // the race is over: the boards are no longer late, but only those of a seat that moves
      // are pushed, so ask for the room again (a full snapshot has every board, as it is now)
      if (msg.type === "event" && msg.kind === "results") state = { ...state, needResync: true, full: true };
      if (state.needResync && !resyncing) resync();
    },
    async onReady(welcome) {
      state = reduce(state, welcome);
      await watch();
    },
  });
  async function watch() {
    const since = state.snap && state.room && !state.full ? { last_event: state.lastEvent } : {};
    try {
      await conn.request({ type: "spectate", room: code, ...since });
    } catch { /* the link dropped: onReady watches again */ }
  }
  async function resync() {
    resyncing = true;
    try {
      await watch();
    } finally {
      resyncing = false;
      state = { ...state, needResync: false, full: false };
    }
  }
  window.solrace = { get state() { return state; }, conn };
  draw();
  conn.start();
  // The clock ticks on its own: the page is drawn again only when a message changes it (a
  // whole broadcast, boards and all, drawn twice a second cost a busy machine its CPU).
  setInterval(() => {
    const clock = root.querySelector("[data-testid=bc-clock]");
    const text = state.snap ? clockLine(state, Date.now()) : null;
    if (clock && text != null && clock.textContent !== text) clock.textContent = text;
  }, 500);
}
