// The reducer that keeps the page's model of a room (run by tests/web/test_web_units.py).
import test from "node:test";
import assert from "node:assert/strict";
import { initialState, reduce, me, serverNow, gameInfo, gameTitle, gameOptionValue } from "../../../client/web/js/state.js";
import { clockTexts } from "../../../client/web/js/render.js";
import { formatTime } from "../../../client/web/js/text.js";

const player = (seat, name) => ({ seat, name, ready: false, connected: true, status: "waiting", moves: 0, home: 0, progress: 0, time: null });
const snapshot = (extra = {}) => ({ room: "KX7QF", state: "lobby", event: 2, options: { game: "puttputt", undo: "none" },
  host_seat: 0, commitment: null, starts_at: null, ends_at: null, now: 10_000, players: [player(0, "ann")], spectators: 0,
  you: { seat: 0, view: null }, boards: null, results: null, ...extra });
const view = (moves) => ({ game: "puttputt", options: {}, piles: { t1: ["2C"], f1: ["3D"], s: [{ hidden: 16 }] }, moves, home: moves, progress: moves / 35 });

function joined(extra) {
  return reduce(initialState(), { type: "joined", ref: 1, room: "KX7QF", role: "player", seat: 0, token: "tok", host_token: "host", snapshot: snapshot(extra) }, 9_000);
}

test("joined stores the seat, tokens, snapshot and clock offset", () => {
  const s = joined();
  assert.equal(s.room, "KX7QF");
  assert.equal(s.seat, 0);
  assert.equal(s.token, "tok");
  assert.equal(s.hostToken, "host");
  assert.equal(s.lastEvent, 2);
  assert.equal(s.clockOffset, 1000);
  assert.equal(serverNow(s, 9_500), 10_500);
  assert.equal(me(s).name, "ann");
  assert.equal("you" in s.snap, false, "the snapshot keeps no board of its own");
});

test("numbered events update the room; replays of seen events change nothing", () => {
  let s = joined();
  s = reduce(s, { type: "event", n: 3, kind: "player_joined", seat: 1, name: "bob" });
  s = reduce(s, { type: "event", n: 4, kind: "ready", seat: 1, ready: true });
  assert.deepEqual(s.snap.players.map((p) => [p.name, p.ready]), [["ann", false], ["bob", true]]);
  const again = reduce(s, { type: "event", n: 3, kind: "player_joined", seat: 1, name: "bob" });
  assert.equal(again, s);
  s = reduce(s, { type: "event", n: 5, kind: "options", options: { undo: "safe" } });
  assert.equal(s.snap.options.undo, "safe");
  assert.equal(s.snap.options.game, "puttputt");
  assert.equal(s.needResync, false);
  s = reduce(s, { type: "event", n: 7, kind: "connected", seat: 1, connected: false });
  assert.equal(s.needResync, true, "a gap in the numbers asks for a resync");
  assert.equal(s.snap.players[1].connected, false);
});

test("countdown, start, progress and acks drive the race; results finish it", () => {
  let s = joined();
  s = reduce(s, { type: "event", n: 3, kind: "player_joined", seat: 1, name: "bob" });
  s = reduce(s, { type: "event", n: 4, kind: "countdown", starts_at: 13_000, commitment: "ab", players: [0, 1] });
  assert.equal(s.snap.state, "countdown");
  assert.equal(clockTexts(s, 9_000).countdown, "3");
  s = reduce(s, { type: "snapshot", snapshot: snapshot({ state: "countdown", event: 4, starts_at: 13_000, players: s.snap.players, you: { seat: 0, view: view(0) } }) }, 9_000);
  assert.equal(s.view.moves, 0);
  s = reduce(s, { type: "event", n: 5, kind: "start", starts_at: 13_000, ends_at: null });
  assert.equal(s.snap.state, "racing");
  assert.deepEqual(s.snap.players.map((p) => p.status), ["racing", "racing"]);
  assert.equal(s.needResync, false, "the board is already here");
  assert.equal(clockTexts(s, 73_500).elapsed, "1:01.5");
  s = reduce(s, { type: "ack", ref: 9, n: 1, move: "t1-f1", revealed: [], view: view(1), status: "racing" });
  assert.equal(s.view.moves, 1);
  assert.equal(me(s).moves, 1);
  s = reduce(s, { type: "event", n: 6, kind: "progress", seat: 1, moves: 4, home: 2, progress: 2 / 35, status: "racing", time: null });
  assert.equal(s.snap.players[1].moves, 4);
  s = reduce(s, { type: "error", ref: 10, code: "illegal_move", message: "t1-f1: 2C is not next to 3D" }, 50);  // in the table's words (issue 12, bug 6)
  assert.deepEqual(s.notice, { kind: "error", code: "illegal_move", text: "2♣ is not next to 3♦", at: 50 });
  const ranking = [{ seat: 1, name: "bob", place: 1, status: "won", progress: 1, moves: 40, time: 61_000 },
    { seat: 0, name: "ann", place: 2, status: "resigned", progress: 1 / 35, moves: 1, time: null }];
  s = reduce(s, { type: "event", n: 7, kind: "results", at: 1, ranking, seed: 42, salt: "00", game: "puttputt", game_options: {}, moves: {} });
  assert.equal(s.snap.state, "finished");
  assert.deepEqual(s.snap.results.ranking, ranking);
  assert.equal(s.snap.results.seed, 42);
  s = reduce(s, { type: "event", n: 8, kind: "rematch", options: { game: "klondike" } });
  assert.equal(s.snap.state, "lobby");
  assert.equal(s.view, null);
  assert.deepEqual(s.snap.players.map((p) => [p.ready, p.status, p.moves]), [[false, "waiting", 0], [false, "waiting", 0]]);
});

test("an ack is the mover's own progress event when it is the next one", () => {
  let s = joined({ state: "racing", event: 5, starts_at: 13_000, players: [player(0, "ann"), player(1, "bob")],
    you: { seat: 0, view: view(0) } });
  const ack = { type: "ack", ref: 9, n: 1, move: "t1-f1", revealed: [], view: view(1), status: "racing",
    event: 6, at: 15_000, home: 1, progress: 1 / 35, time: 2000 };
  s = reduce(s, ack);
  assert.equal(s.lastEvent, 6);
  assert.equal(me(s).time, 2000);
  s = reduce(s, { type: "event", n: 7, kind: "progress", seat: 1, moves: 1, home: 0, progress: 0, status: "racing", time: 2100 });
  assert.equal(s.needResync, false, "no gap: the ack counted as event 6");
  // an ack whose event is not the next (event 8 is still on its way) does not count; the
  // event itself follows in order
  s = reduce(s, { ...ack, ref: 10, n: 2, view: view(2), event: 9, time: 2500 });
  assert.equal(s.lastEvent, 7);
  assert.equal(me(s).moves, 2);
  s = reduce(s, { type: "event", n: 8, kind: "progress", seat: 1, moves: 2, home: 0, progress: 0, status: "racing", time: 2600 });
  s = reduce(s, { type: "event", n: 9, kind: "progress", seat: 0, moves: 2, home: 2, progress: 2 / 35, status: "racing", time: 2500 });
  assert.equal(s.lastEvent, 9);
  assert.equal(s.needResync, false);
});

test("a coalesced progress frame updates every seat it carries and counts as its events", () => {
  let s = joined({ state: "racing", event: 5, starts_at: 13_000, players: [player(0, "ann"), player(1, "bob"), player(2, "cy")],
    you: { seat: 0, view: view(0) } });
  const line = (seat, moves) => ({ seat, moves, home: moves, progress: moves / 35, status: "racing", time: moves * 100 });
  s = reduce(s, { type: "progress", from: 6, n: 9, at: 1, seats: [line(1, 3), line(2, 1)] });
  assert.equal(s.lastEvent, 9);
  assert.equal(s.needResync, false);
  assert.deepEqual(s.snap.players.map((p) => p.moves), [0, 3, 1]);
  // overlapping what we had (our own move came in our ack as event 10): applied, no gap
  s = reduce(s, { type: "ack", ref: 3, n: 1, move: "t1-f1", revealed: [], view: view(1), status: "racing",
    event: 10, at: 2, home: 1, progress: 1 / 35, time: 50 });
  s = reduce(s, { type: "progress", from: 10, n: 12, at: 3, seats: [line(0, 1), line(1, 5)] });
  assert.equal(s.lastEvent, 12);
  assert.equal(s.snap.players[1].moves, 5);
  assert.equal(s.needResync, false);
  const again = reduce(s, { type: "progress", from: 11, n: 12, at: 3, seats: [line(1, 5)] });
  assert.equal(again, s, "nothing new");
  s = reduce(s, { type: "progress", from: 15, n: 16, at: 4, seats: [line(2, 4)] });
  assert.equal(s.needResync, true, "events 13 and 14 are missing");
});

test("a race that starts without our board asks for it; a resume reply without snapshot brings it", () => {
  let s = joined({ state: "countdown", starts_at: 13_000, options: { game: "puttputt", undo: "none", time_limit: 60 } });
  s = reduce(s, { type: "event", n: 3, kind: "start", starts_at: 13_000, ends_at: 73_000 });
  assert.equal(s.needResync, true);
  s = reduce(s, { type: "joined", ref: 4, room: "KX7QF", role: "player", seat: 0, event: 3, you: { seat: 0, view: view(0) } });
  assert.equal(s.view.moves, 0);
  assert.equal(s.needResync, false);
  assert.equal(s.snap.state, "racing", "the snapshot kept from before stays");
  assert.equal(clockTexts(s, 22_000).left, "0:50.0", "server clock = local + 1 s offset");
});

test("a race with no time limit of its own shows no time left (it ends at the server's longest race)", () => {
  let s = joined({ state: "countdown", starts_at: 13_000 });
  s = reduce(s, { type: "event", n: 3, kind: "start", starts_at: 13_000, ends_at: 13_000 + 7_200_000 });
  assert.equal(s.snap.ends_at, 13_000 + 7_200_000);
  assert.equal(clockTexts(s, 22_000).left, undefined);
  assert.equal(clockTexts(s, 22_000).elapsed, "0:10.0");
});

test("spectators keep every board they are sent", () => {
  let s = reduce(initialState(), { type: "joined", ref: 1, room: "KX7QF", role: "spectator", snapshot: snapshot({ you: null, boards: { 0: view(3) } }) });
  assert.equal(s.role, "spectator");
  assert.equal(s.seat, null);
  assert.equal(s.boards[0].moves, 3);
  s = reduce(s, { type: "board", seat: 1, moves: 2, view: view(2) });
  assert.deepEqual(Object.keys(s.boards), ["0", "1"]);
  assert.equal(me(s), null);
});

test("times read as m:ss.t", () => {
  assert.equal(formatTime(0), "0:00.0");
  assert.equal(formatTime(65_300), "1:05.3");
  assert.equal(formatTime(null), "–");
});

const welcome = { type: "welcome", version: 1, server: "solrace/0.1.0", limits: { max_frame: 8192 },
  games: [{ id: "puttputt", title: "Putt Putt", options: {} },
    { id: "klondike", title: "Klondike", options: { draw: { default: 1, choices: [1, 3] },
      moves: { default: "top", choices: ["top", "build"] }, passes: { default: 0, choices: null } } }] };

test("welcome tells the page the games, their titles and options; nothing is hard-coded", () => {
  const s = reduce(initialState(), welcome);
  assert.deepEqual(s.games.map((g) => g.id), ["puttputt", "klondike"]);
  assert.equal(s.server, "solrace/0.1.0");
  assert.equal(gameTitle(s, "puttputt"), "Putt Putt");
  assert.equal(gameTitle(s, "newgame"), "newgame", "a game the server did not list shows its id");
  assert.equal(gameTitle(initialState(), "klondike"), "klondike", "before welcome: the id");
  assert.equal(gameInfo(s, "klondike").options.draw.default, 1);
  assert.equal(gameInfo(s, "chess"), null);
});

test("a rule option from a form control is sent in its default's type", () => {
  const s = reduce(initialState(), welcome);
  assert.strictEqual(gameOptionValue(s, "klondike", "draw", "3"), 3);
  assert.strictEqual(gameOptionValue(s, "klondike", "moves", "build"), "build");
  assert.strictEqual(gameOptionValue(s, "klondike", "passes", 2), 2);
  assert.strictEqual(gameOptionValue(s, "chess", "x", "3"), "3", "unknown option: as typed");
});

test("a second welcome (a reconnect) replaces the games and keeps the room", () => {
  let s = reduce(joined(), welcome);
  s = reduce(s, { ...welcome, games: [{ id: "manx", title: "Manx", options: {} }] });
  assert.deepEqual(s.games.map((g) => g.id), ["manx"]);
  assert.equal(s.room, "KX7QF");
});

test("an ack's change is applied to the board we had; one that does not fit asks for a resync", () => {
  let s = joined({ state: "racing", event: 5 });
  s = { ...s, view: view(0) };
  // the move took 2C from t1 onto f1: t1 kept nothing, f1 kept its first card and got 2C
  const change = { piles: { t1: [0], f1: [1, "2C"] }, fields: { home: 1, progress: 1 / 35 } };
  s = reduce(s, { type: "ack", ref: 9, n: 1, move: "t1-f1", revealed: [], change, status: "racing", event: 6 });
  assert.deepEqual(s.view.piles, { t1: [], f1: ["3D", "2C"], s: [{ hidden: 16 }] });
  assert.equal(s.view.moves, 1);
  assert.equal(s.view.home, 1);
  assert.equal(s.view.game, "puttputt", "what did not change is kept");
  assert.equal(me(s).moves, 1);
  assert.equal(s.needResync, false);
  // an undo's change applies to the board one move on
  s = reduce(s, { type: "ack", ref: 10, n: 0, undone: "t1-f1", change: { piles: { t1: [0, "2C"], f1: [1] }, fields: { home: 0, progress: 0 } }, status: "racing", event: 7 });
  assert.deepEqual(s.view.piles, view(0).piles);
  assert.equal(s.view.moves, 0);
  // a change for another board (the seat moved from elsewhere): no guess, a resync
  const before = s.view;
  s = reduce(s, { type: "ack", ref: 11, n: 5, move: "t1-f1", revealed: [], change, status: "racing", event: 8 });
  assert.equal(s.view, before);
  assert.equal(s.needResync, true);
});

test("a second solved event (a verdict searched further) replaces the first in the results", () => {
  let s = joined({ state: "finished", results: { ranking: [], seed: 7 } });
  s = reduce(s, { type: "event", n: 3, kind: "solved", deal: "unknown", deal_moves: null, seats: { 0: "unknown" } });
  assert.deepEqual(s.snap.results.solved, { deal: "unknown", deal_moves: null, seats: { 0: "unknown" } });
  s = reduce(s, { type: "event", n: 4, kind: "solved", deal: "won", deal_moves: 240, seats: { 0: "won" } });
  assert.deepEqual(s.snap.results.solved, { deal: "won", deal_moves: 240, seats: { 0: "won" } });
  assert.equal(s.snap.results.seed, 7);
});
