// Race now's words while waiting (client/web/js/quick.js; run by tests/web/test_web_units.py).
import test from "node:test";
import assert from "node:assert/strict";
import { waitingText, quickText } from "../../../client/web/js/quick.js";

test("asking, then looking near the rating the server pairs by, with the time waited", () => {
  const q = { game: "klondike", rating: null, since: 1000, matched: null };
  assert.equal(waitingText(q, "Klondike", 1000), "Asking for a Klondike race…");
  const queued = { ...q, rating: 27.25 };
  assert.equal(waitingText(queued, "Klondike", 66_500),
    "Looking for Klondike players near your rating · 1:05");
});

test("matched: who the race is with (not the player itself), and that it is joining", () => {
  const matched = { players: ["Ann", "Bob", "Cy"], seat: 1 };
  const q = { game: "puttputt", rating: 25, since: 0, matched };
  assert.equal(waitingText(q, "Putt Putt", 5000), "Matched with Ann, Cy: joining the race…");
});

test("the clock's line uses the game's title, and is null with no request", () => {
  const state = { games: [{ id: "manx", title: "Manx" }] };
  assert.equal(quickText(state, { quick: null }, 0), null);
  const ui = { quick: { game: "manx", rating: 25, since: 0, matched: null } };
  assert.equal(quickText(state, ui, 3000), "Looking for Manx players near your rating · 0:03");
});
