// The arena's words and ids (client/web/js/arena.js; run by tests/web/test_web_units.py).
import test from "node:test";
import assert from "node:assert/strict";
import { arenaIdFrom, timeLeft } from "../../../client/web/js/arena.js";

test("an arena id is read from the id itself, its event page's link or the join link", () => {
  assert.equal(arenaIdFrom("k3v9qz2m8a"), "k3v9qz2m8a");
  assert.equal(arenaIdFrom(" https://solrace.example/event/K3V9QZ2M8A/ "), "k3v9qz2m8a");
  assert.equal(arenaIdFrom("http://127.0.0.1:8765/broadcast/event/k3v9qz2m8a"), "k3v9qz2m8a");
  assert.equal(arenaIdFrom(""), null);
  assert.equal(arenaIdFrom("a b"), null);
});

test("the time left while running; once ended, the races still on", () => {
  const view = { state: "running", ends_at: 100_000, running: 0 };
  assert.equal(timeLeft(view, 100_000 - 65_000), "1:05 left");
  assert.equal(timeLeft(view, 200_000), "0:00 left");
  assert.equal(timeLeft({ ...view, state: "ended", running: 2 }), "ended · 2 still racing");
  assert.equal(timeLeft({ ...view, state: "ended" }), "ended");
  assert.equal(timeLeft(null), "");
});
