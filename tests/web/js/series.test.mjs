// A series in the page's model (state.js) and the host's controls (series.js); run by
// tests/web/test_web_units.py.
import test from "node:test";
import assert from "node:assert/strict";
import { initialState, reduce } from "../../../client/web/js/state.js";
import { seriesChange, standingsTitle, roundText, DEFAULT_POINTS } from "../../../client/web/js/series.js";
import { raceOrder } from "../../../client/web/js/broadcast.js";

const player = (seat, name) => ({ seat, name, ready: false, connected: true, status: "waiting", moves: 0, home: 0, progress: 0, time: null });
const snapshot = { room: "KX7QF", state: "lobby", event: 2, options: { game: "puttputt", series: { rounds: 3, scoring: "places", points: [10, 7] } },
  host_seat: 0, commitment: null, starts_at: null, ends_at: null, now: 10_000, players: [player(0, "ann"), player(1, "bob")], spectators: 0,
  you: null, boards: null, results: null, series: null };
const ev = (n, kind, fields) => ({ type: "event", n, kind, at: 10_000 + n, ...fields });

test("a series' standings follow its events, and a late joiner enters on 0", () => {
  let s = reduce(initialState(), { type: "joined", room: "KX7QF", role: "spectator", snapshot }, 9_000);
  s = reduce(s, ev(3, "countdown", { starts_at: 11_000, commitment: "ab", players: [0, 1], series: { id: "s1", round: 1, rounds: 3 } }));
  assert.equal(s.snap.series.id, "s1");
  assert.deepEqual(s.snap.series.standings.map((r) => [r.name, r.points]), [["ann", 0], ["bob", 0]]);
  const after1 = { id: "s1", number: 1, rounds: 3, scoring: "places", points: [10, 7], played: 1, ended: false, records: ["r1"],
    standings: [{ seat: 1, name: "bob", place: 1, points: 10, rounds: [10] }, { seat: 0, name: "ann", place: 2, points: 7, rounds: [7] }] };
  s = reduce(s, ev(4, "results", { ranking: [], seed: 1, salt: "00", game: "puttputt", game_options: {}, moves: {}, series: after1 }));
  assert.equal(s.snap.series.played, 1);
  assert.equal(standingsTitle(s.snap.series), "Standings after round 1 of 3");
  s = reduce(s, ev(5, "rematch", { options: snapshot.options, series: after1 }));
  assert.equal(s.snap.state, "lobby");
  assert.equal(s.snap.series.standings[0].points, 10, "the points stay across the rematch");
  s = reduce(s, ev(6, "player_joined", { seat: 2, name: "cy", player: null, bot: true }));
  const cy = s.snap.series.standings.find((r) => r.seat === 2);
  assert.deepEqual([cy.points, cy.rounds, cy.bot], [0, [null], true]);
  s = reduce(s, ev(7, "series_end", { series: { ...after1, ended: true } }));
  assert.equal(standingsTitle(s.snap.series), "Final standings (1 round)");
});

test("the host's controls make the series option", () => {
  assert.equal(seriesChange(null, "series.mode", "off"), null);
  assert.deepEqual(seriesChange(null, "series.mode", "rounds"), { rounds: 3, scoring: "places", points: DEFAULT_POINTS });
  assert.equal(seriesChange({ rounds: 3 }, "series.mode", "open").rounds, 0);
  assert.equal(seriesChange({ rounds: 3 }, "series.rounds", "7").rounds, 7);
  assert.deepEqual(seriesChange({ rounds: 3 }, "series.points", "10, 6 ,4").points, [10, 6, 4]);
  assert.equal(seriesChange({ rounds: 3 }, "series.scoring", "time").scoring, "time");
  assert.equal(roundText({ rounds: 0 }, 4), "Round 4");
  assert.equal(roundText({ rounds: 5 }, 4), "Round 4 of 5");
});

test("the broadcast orders seats: winners by time, then by progress", () => {
  const snap = { state: "racing", players: [
    { seat: 0, status: "racing", progress: 0.2 }, { seat: 1, status: "won", progress: 1, time: 9000 },
    { seat: 2, status: "won", progress: 1, time: 5000 }, { seat: 3, status: "dead", progress: 0.5 }] };
  assert.deepEqual(raceOrder(snap).map((p) => p.seat), [2, 1, 3, 0]);
});
