// The client's model of a room, kept current from server messages by one pure reducer:
// reduce(state, message, localNow) -> new state. The page renders this model, never raw
// messages, so a fresh join, a resume that replays missed events and a resync all draw the
// same way.

import { tableWords } from "./cards.js";
import { seriesActive, zeroRow } from "./series.js";

export function initialState() {
  return {
    conn: "connecting",      // connecting | open | closed
    room: null, role: null, seat: null, hostToken: null, token: null,
    snap: null,              // the room snapshot, minus `you` and `boards`, kept current by events
    view: null,              // this player's own engine view
    boards: {},              // spectators: seat -> view
    boardMoves: {},          // spectators: seat -> moves of the board shown
    lastEvent: 0,
    clockOffset: 0,          // server clock minus local clock, ms
    lobby: [],               // public rooms
    games: [],               // from welcome: [{id, title, options: {name: {default, choices}}}]
    server: null,            // from welcome: the server's name and version
    player: null,            // from welcome: this browser's public player id (its player key's)
    notice: null,            // {kind: "error" | "info", text, code, at}
    needResync: false,       // an event arrived after a gap, or the race started without our board
    undoable: {},            // move number -> whether the server would take that move back (it revealed nothing)
    kicked: false,
  };
}

function newPlayer(seat, name, player = null) {
  return { seat, name, player, ready: false, connected: true, status: "waiting", moves: 0, home: 0,
    progress: 0, time: null };
}

function withPlayer(snap, seat, fn) {
  const players = snap.players.map((p) => (p.seat === seat ? fn({ ...p }) : p));
  return { ...snap, players };
}

function applySnapshot(state, snapshot, localNow) {
  const { you, boards, ...snap } = snapshot;
  const next = { ...state, snap, lastEvent: snapshot.event || 0, needResync: false };
  if (typeof snapshot.now === "number") next.clockOffset = snapshot.now - localNow;
  if (you) {
    next.view = you.view || null;
    if (you.seat != null) next.seat = you.seat;
  } else if (state.role === "player") {
    next.view = null;
  }
  next.boards = boards ? { ...boards } : {};
  return next;
}

/** Apply one numbered room event to the snapshot. */
export function applyEvent(state, e) {
  if (!state.snap) return state;
  if (e.n <= state.lastEvent) return state; // already seen (a replay overlapping what we had)
  let snap = { ...state.snap, event: e.n };
  let next = { ...state, lastEvent: e.n };
  if (e.n !== state.lastEvent + 1) next.needResync = true;
  switch (e.kind) {
    case "player_joined":
      snap.players = snap.players.filter((p) => p.seat !== e.seat).concat([newPlayer(e.seat, e.name, e.player)]);
      snap.players.sort((a, b) => a.seat - b.seat);
      if (seriesActive(snap) && !snap.series.standings.some((r) => r.seat === e.seat)) {
        // a late joiner enters the standings on 0 (the server's next snapshot agrees)
        snap.series = { ...snap.series, standings: snap.series.standings.concat([zeroRow(snap.series, e.seat, e.name, e.bot)]) };
      }
      break;
    case "player_left":
      snap = snap.state === "lobby"
        ? { ...snap, players: snap.players.filter((p) => p.seat !== e.seat) }
        : withPlayer(snap, e.seat, (p) => ({ ...p, status: "left", connected: false }));
      break;
    case "connected":
      // offAt: when the seat's grace period started (server time), for "resigns in N s"
      snap = withPlayer(snap, e.seat, (p) => ({ ...p, connected: e.connected, offAt: e.connected ? null : e.at }));
      break;
    case "ready":
      snap = withPlayer(snap, e.seat, (p) => ({ ...p, ready: e.ready }));
      break;
    case "watchers":
      snap.spectators = e.count;
      break;
    case "options":
      snap.options = { ...snap.options, ...e.options };
      break;
    case "kicked":
      snap.players = snap.players.filter((p) => p.seat !== e.seat);
      if (e.seat === state.seat && state.role === "player") next.kicked = true;
      break;
    case "countdown":
      snap.state = "countdown";
      snap.starts_at = e.starts_at;
      snap.commitment = e.commitment;
      if (e.series) {
        if (!snap.series || snap.series.id !== e.series.id) {
          const option = snap.options?.series || {};
          const fresh = { id: e.series.id, number: (snap.series?.number || 0) + 1, rounds: e.series.rounds,
            scoring: option.scoring || "places", points: option.points || [], played: 0, ended: false, records: [] };
          fresh.standings = snap.players.map((p) => zeroRow(fresh, p.seat, p.name, p.bot));
          snap.series = fresh;
        }
      }
      break;
    case "start":
      snap.state = "racing";
      if (e.starts_at != null) snap.starts_at = e.starts_at;
      snap.ends_at = e.ends_at ?? null;
      snap.players = snap.players.map((p) => (p.status === "waiting" ? { ...p, status: "racing" } : p));
      // Boards are pushed on moves: fetch the starting ones unless a snapshot brought them.
      if (state.role === "player" && !state.view) next.needResync = true;
      if (state.role === "spectator" && snap.options?.spectator_view !== "progress"
        && snap.players.some((p) => !state.boards[p.seat])) next.needResync = true;
      break;
    case "progress":
      if (!snap.players.some((p) => p.seat === e.seat)) snap.players = snap.players.concat([newPlayer(e.seat, "")]);
      snap = withPlayer(snap, e.seat, (p) => ({ ...p, moves: e.moves, home: e.home, progress: e.progress,
        status: e.status, time: e.time ?? null }));
      break;
    case "results": {
      const { type, n, kind, at, ...results } = e;
      snap.state = "finished";
      snap.results = results;
      if (results.series) snap.series = results.series;
      break;
    }
    case "solved": // the solver's verdicts on the race just finished (PROTOCOL.md, Solver)
      if (snap.results) snap.results = { ...snap.results, solved: { deal: e.deal, deal_moves: e.deal_moves, seats: e.seats } };
      break;
    case "rematch":
      snap = { ...snap, state: "lobby", options: e.options ? { ...e.options } : snap.options,
        commitment: null, starts_at: null, ends_at: null, results: null,
        players: snap.players.map((p) => ({ ...p, ready: false, status: "waiting", moves: 0, home: 0,
          progress: 0, time: null })) };
      if (e.series) snap.series = e.series;
      next.view = null;
      next.boards = {};
      next.boardMoves = {};
      next.undoable = {};
      break;
    case "series_end":
      snap.series = e.series;
      break;
    default:
      break;
  }
  next.snap = snap;
  return next;
}

/**
 * A coalesced `progress` frame: room events `from`..`n`, all progress of racing seats, with each
 * seat's latest line. It may overlap events we have (our own, from our ack); one that starts
 * past the next event leaves a gap.
 */
export function applyProgress(state, frame) {
  if (!state.snap || frame.n <= state.lastEvent) return state;
  let snap = { ...state.snap, event: frame.n };
  const next = { ...state, lastEvent: frame.n };
  if (frame.from > state.lastEvent + 1) next.needResync = true;
  for (const line of frame.seats || []) {
    if (!snap.players.some((p) => p.seat === line.seat)) snap.players = snap.players.concat([newPlayer(line.seat, "")]);
    snap = withPlayer(snap, line.seat, (p) => ({ ...p, moves: line.moves, home: line.home, progress: line.progress,
      status: line.status, time: line.time ?? null }));
  }
  next.snap = snap;
  return next;
}

/**
 * The player's board after an ack: its whole `view`, or its `change` (what the move did:
 * each changed pile as [keep, ...items], the other fields that changed) applied to the board
 * we had; null when ours is not the board the change applies to (moves made elsewhere).
 */
export function ackedView(view, ack) {
  if (ack.view) return ack.view;
  const base = ack.undone ? ack.n + 1 : ack.n - 1;
  if (!ack.change || !view || view.moves !== base) return null;
  const piles = { ...view.piles };
  for (const [name, [keep, ...items]] of Object.entries(ack.change.piles || {})) {
    piles[name] = [...(piles[name] || []).slice(0, keep), ...items];
  }
  return { ...view, ...(ack.change.fields || {}), piles, moves: ack.n };
}

/** Take the player's own board (and own progress line) from a move or undo reply. */
function applyAck(state, msg) {
  const view = ackedView(state.view, msg);
  if (!view) return (msg.change && state.room) ? { ...state, needResync: true } : state;
  const ack = { ...msg, view };
  // Undo takes back only a last move that revealed no card: remember which moves those are,
  // so the page offers undo only when the server would do it.
  const undoable = { ...state.undoable };
  if (ack.undone) delete undoable[ack.n + 1];
  else if (typeof ack.n === "number") undoable[ack.n] = !(ack.revealed && ack.revealed.length);
  const next = { ...state, view: ack.view, undoable };
  if (state.snap && state.seat != null) {
    next.snap = withPlayer(state.snap, state.seat, (p) => ({ ...p, moves: ack.view.moves, home: ack.view.home,
      progress: ack.view.progress, status: ack.status || p.status,
      time: ack.event != null ? (ack.time ?? null) : p.time }));
    // The ack is this player's own progress event (no separate one comes): it counts as
    // applied when it is the next event; otherwise it follows the events still on their way.
    if (ack.event === state.lastEvent + 1) {
      next.lastEvent = ack.event;
      next.snap = { ...next.snap, event: ack.event };
    }
  }
  return next;
}

/** The single entry point: any decoded server message in, the next state out. */
export function reduce(state, msg, localNow = Date.now()) {
  switch (msg.type) {
    case "joined": {
      const next = { ...state, room: msg.room, role: msg.role, kicked: false,
        seat: msg.role === "player" ? msg.seat : null,
        token: msg.token ?? state.token, hostToken: msg.host_token ?? state.hostToken };
      if (msg.role !== "player") { next.token = null; next.hostToken = msg.host_token ?? state.hostToken; }
      if (msg.snapshot) return applySnapshot(next, msg.snapshot, localNow);
      // A resume whose missed events follow: no snapshot, only this viewer's own board.
      if (msg.you && msg.you.view) next.view = msg.you.view;
      if (msg.boards) next.boards = { ...state.boards, ...msg.boards };
      next.needResync = false;
      return next;
    }
    case "snapshot":
      return applySnapshot(state, msg.snapshot || {}, localNow);
    case "event":
      return applyEvent(state, msg);
    case "progress":
      return applyProgress(state, msg);
    case "ack":
      return applyAck(state, msg);
    case "board":
      return { ...state, boards: { ...state.boards, [msg.seat]: msg.view },
        boardMoves: { ...state.boardMoves, [msg.seat]: msg.moves } };
    case "lobby":
      return { ...state, lobby: msg.rooms || [] };
    case "welcome":
      return { ...state, games: msg.games || [], server: msg.server || null, player: msg.player ?? null,
        grace: msg.limits?.grace ?? null }; // seconds a disconnected racer keeps the seat
    case "error": {
      const text = ["illegal_move", "undo_refused"].includes(msg.code) ? tableWords(msg.message) : msg.message;
      return { ...state, notice: { kind: "error", code: msg.code, text: text || msg.code, at: localNow } };
    }
    default:
      return state;
  }
}

/** The server's clock now, estimated from the local one. */
export function serverNow(state, localNow = Date.now()) {
  return localNow + state.clockOffset;
}

/** Whether this client holds the host token of its room. */
export function isHost(state) {
  return Boolean(state.hostToken);
}

/** What the server said of a game (title, rule options), or null for a game it did not list. */
export function gameInfo(state, id) {
  return state.games.find((g) => g.id === id) || null;
}

/** A game's title as the server names it (its id until the server has said). */
export function gameTitle(state, id) {
  return gameInfo(state, id)?.title || id || "";
}

/**
 * A rule option's value from a form control (always text) in the type of the option's
 * default, so that {"draw": 3} is sent, not {"draw": "3"}.
 */
export function gameOptionValue(state, game, name, text) {
  const spec = gameInfo(state, game)?.options?.[name];
  return spec && typeof spec.default === "number" ? Number(text) : text;
}

/** Whether the server would take back this player's last move now. */
export function canUndo(state) {
  const mine = me(state);
  const view = state.view;
  return Boolean(state.snap?.options?.undo === "safe" && state.snap.state === "racing" && mine
    && mine.status === "racing" && view && view.moves > 0 && state.undoable[view.moves] === true);
}

/** A seat's time as the results rank it (the time it won or reached its final progress). */
export function rankedTime(state, seat) {
  const row = state.snap?.results?.ranking?.find((r) => r.seat === seat);
  return row ? row.time ?? null : undefined;
}

/** This client's own player line, if it is a player. */
export function me(state) {
  if (!state.snap || state.seat == null || state.role !== "player") return null;
  return state.snap.players.find((p) => p.seat === state.seat) || null;
}
