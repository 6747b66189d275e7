// Auto-move, the forced finish, keyboard intents and the finish toast (issue 12).
import test from "node:test";
import assert from "node:assert/strict";
import { autoMove, forcedFinish, growSelection } from "../../../client/web/js/moves.js";
import { keyIntent } from "../../../client/web/js/keys.js";
import { finishText } from "../../../client/web/js/render.js";

const kl = (piles) => ({ game: "klondike", options: { draw: 1, moves: "build", passes: 0 }, moves: 5,
  piles: { s: [{ hidden: 10 }], w: [], f1: [], f2: [], f3: [], f4: [], t1: [], t2: [], t3: [], t4: [], t5: [], t6: [], t7: [], ...piles } });

test("Klondike auto-move: safe cards only, or every card that fits", () => {
  const v = kl({ f1: ["AC"], f2: ["AS"], f3: ["AH", "2H"], t1: [{ hidden: 2 }, "3H"], t2: ["2C"] });
  assert.equal(autoMove(v, "off"), null);
  assert.equal(autoMove(v, "safe"), "t2-f1", "a 2 is always safe");
  const after = kl({ f1: ["AC", "2C"], f2: ["AS"], f3: ["AH", "2H"], t1: [{ hidden: 2 }, "3H"] });
  assert.equal(autoMove(after, "safe"), null, "3♥ could still hold a black 2 (2♠ is not home)");
  assert.equal(autoMove(after, "all"), "t1-f3");
  const blacks = kl({ f1: ["AC", "2C"], f2: ["AS", "2S"], f3: ["AH", "2H"], t1: [{ hidden: 2 }, "3H"] });
  assert.equal(autoMove(blacks, "safe"), "t1-f3", "both black 2s are home");
  assert.equal(autoMove(kl({ w: [{ hidden: 3 }, "AD"] }), "safe"), "w-f1", "an Ace from the waste to an empty foundation");
});

test("a Klondike game with nothing left to find finishes by itself", () => {
  const done = kl({ s: [], w: [], f1: ["AC"], f2: ["AS"], f3: ["AH"], f4: ["AD"], t1: ["3H", "2S"], t2: ["2C"] });
  assert.equal(forcedFinish(done), true);
  assert.ok(autoMove(done, "off"), "even with auto-move off");
  assert.equal(forcedFinish(kl({ s: [], w: [], t1: [{ hidden: 1 }, "5H"] })), false, "a face-down card");
  assert.equal(forcedFinish(kl({ t1: ["5H"] })), false, "cards in the stock");
});

test("Leap Year and Tabby Cat auto-moves; Putt Putt never", () => {
  const leap = { game: "leapyear", piles: { s: [{ hidden: 8 }], f1: ["AC"], f2: ["AD", "2D", "3D"], t1: ["4S"], t2: ["9H"] } };
  assert.equal(autoMove(leap, "safe"), "t1-f2");
  const run = ["KC", "QD", "JS", "TH", "9C", "8D", "7S", "6H", "5C", "4D", "3S", "2H", "AC"];
  const cat = { game: "tabbycat", piles: { s: [], f1: [], f2: [], f3: [], f4: [], t1: ["5H", ...run], t2: [], t3: [], t4: [], r: [] } };
  assert.equal(autoMove(cat, "safe"), "t1-f1:13");
  assert.equal(autoMove({ ...cat, piles: { ...cat.piles, t1: run.slice(1) } }, "all"), null);
  assert.equal(autoMove({ game: "puttputt", piles: { s: [], f1: ["5H"], t1: ["4C"] } }, "all"), null);
});

test("keys become intents; typing in a field plays nothing", () => {
  assert.deepEqual(keyIntent("3"), { type: "pile", pile: "t3" });
  assert.deepEqual(keyIntent(" "), { type: "deal" });
  assert.deepEqual(keyIntent("z", { ctrl: true }), { type: "undo" });
  assert.deepEqual(keyIntent("Z", { meta: true }), { type: "undo" });
  assert.deepEqual(keyIntent("0"), { type: "home" });
  assert.deepEqual(keyIntent("w"), { type: "pile", pile: "w" });
  assert.deepEqual(keyIntent("Escape", {}, true), { type: "escape" });
  assert.equal(keyIntent("3", {}, true), null);
  assert.equal(keyIntent("r", { ctrl: true }), null, "Ctrl+R reloads, as always");
});

test("pressing a pile again takes one more card of its run", () => {
  const view = kl({ t1: [{ hidden: 1 }, "9S", "8H", "7C"] });
  let sel = { pile: "t1", count: 1 };
  sel = growSelection(view, sel);
  assert.deepEqual(sel, { pile: "t1", count: 2 });
  sel = growSelection(view, growSelection(view, sel));
  assert.deepEqual(sel, { pile: "t1", count: 1 }, "back to one after the whole run");
});

test("the finish toast says who and how", () => {
  assert.equal(finishText({ seat: 1, name: "Bob", status: "won", progress: 1, time: 65300 }), "Bob cleared the table in 1:05.3!");
  assert.equal(finishText({ seat: 1, name: "Bob", status: "resigned", progress: 0.42 }), "Bob resigned at 42%.");
  assert.equal(finishText({ seat: 2, name: "", status: "dead", progress: 0.5 }), "seat 2 is out of moves at 50%.");
});
