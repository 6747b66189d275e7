// The replay viewer's model (client/web/js/replay-model.js; run by tests/web/test_web_units.py):
// frames applied to the server's first view, the merged timeline, steps and seeking.
import test from "node:test";
import assert from "node:assert/strict";
import { applyFrame, seatViews, movesAt, timeline, nextTime, prevTime, prepare, seatAt } from "../../../client/web/js/replay-model.js";
import { startTime } from "../../../client/web/js/replay.js";

const first = { game: "puttputt", options: {}, piles: { t1: ["2C", "3D"], f1: ["AH"], s: [{ hidden: 2 }] }, stock: 2, moves: 0, home: 1, progress: 0 };
const seatA = { seat: 0, view: first, frames: [
  [100, "t1-f1", { t1: [1], f1: [1, "3D"] }, { home: 2, progress: 0.5 }],
  [900, "deal", { s: [0, { hidden: 1 }], f1: [2, "4S"] }, { stock: 1 }],
] };
const seatB = { seat: 1, view: first, frames: [[100, "deal", { s: [0, { hidden: 1 }], f1: [1, "4S"] }, { stock: 1 }], [400, "t1-f1", { t1: [0, "2C"] }]] };
const doc = { duration: 900, seats: [seatA, seatB] };

test("a frame keeps the first items of each pile it names and adds the rest", () => {
  const v = applyFrame(first, seatA.frames[0]);
  assert.deepEqual(v.piles, { t1: ["2C"], f1: ["AH", "3D"], s: [{ hidden: 2 }] });
  assert.equal(v.moves, 1);
  assert.equal(v.home, 2);
  assert.equal(v.piles.s, first.piles.s); // unchanged piles are shared
  assert.deepEqual(first.piles.t1, ["2C", "3D"]); // the old view is untouched
});

test("a seat's views: one per move, the last the board after all of them", () => {
  const views = seatViews(seatA);
  assert.equal(views.length, 3);
  assert.deepEqual(views[2].piles, { t1: ["2C"], f1: ["AH", "3D", "4S"], s: [{ hidden: 1 }] });
  assert.equal(views[2].stock, 1);
  assert.equal(views[2].moves, 2);
});

test("moves by a time, the merged timeline, and steps along it", () => {
  assert.deepEqual([0, 99, 100, 899, 900, 5000].map((t) => movesAt(seatA.frames, t)), [0, 0, 1, 1, 2, 2]);
  const times = timeline(doc);
  assert.deepEqual(times, [100, 400, 900]);
  assert.deepEqual([0, 100, 399, 400, 900].map((t) => nextTime(times, t, 900)), [100, 400, 400, 900, 900]);
  assert.deepEqual([0, 100, 399, 400, 900].map((t) => prevTime(times, t)), [0, 0, 0, 100, 400]);
});

test("a seat at a time: its board, its move count and its last move", () => {
  const r = prepare(doc);
  assert.deepEqual(seatAt(r, 0, 0), { view: first, k: 0, last: null, done: false });
  const b = seatAt(r, 1, 400);
  assert.equal(b.k, 2);
  assert.equal(b.last, "t1-f1");
  assert.equal(b.done, true);
  assert.deepEqual(b.view.piles.t1, ["2C"]);
});

test("?t=SECONDS starts within the race", () => {
  assert.equal(startTime("?t=0.5", 900), 500);
  assert.equal(startTime("?t=60", 900), 900);
  assert.equal(startTime("", 900), 0);
  assert.equal(startTime("?t=abc", 900), 0);
  assert.equal(startTime("?t=-3", 900), 0);
});
