// Unit tests of the web client's pure modules (run by tests/web/test_web_units.py via `node --test`).
import test from "node:test";
import assert from "node:assert/strict";
import { parseCard, expandPile, pileSize, topCard, pileKind, cardName } from "../../../client/web/js/cards.js";
import { moveText, pickUp, dropMove, stockMove, foundationMove, movesRuns } from "../../../client/web/js/moves.js";

const klondike = (piles, options = { draw: 1, moves: "top", passes: 0 }) => ({ game: "klondike", options, piles, moves: 0 });

test("cards parse into rank, suit, colour and a readable label", () => {
  assert.deepEqual(parseCard("TH"), { text: "TH", rank: 10, suit: "H", red: true, rankLabel: "10", symbol: "♥" });
  assert.equal(parseCard("AS").red, false);
  assert.equal(parseCard("KC").rank, 13);
  assert.equal(cardName("QD"), "Q♦");
  assert.throws(() => parseCard("1X"));
  assert.throws(() => parseCard("TH "));
});

test("view piles expand hidden runs into one entry per card", () => {
  const pile = [{ hidden: 3 }, "7H", "6S"];
  assert.equal(expandPile(pile).length, 5);
  assert.deepEqual(expandPile(pile)[2], { hidden: true });
  assert.deepEqual(expandPile(pile)[3], { card: "7H" });
  assert.equal(pileSize(pile), 5);
  assert.equal(topCard(pile), "6S");
  assert.equal(topCard([{ hidden: 2 }]), null);
  assert.equal(topCard([]), null);
  assert.deepEqual(["t3", "f12", "r", "s", "w"].map(pileKind), ["tableau", "foundation", "tail", "stock", "waste"]);
});

test("move texts are canonical: :N exactly when N >= 2", () => {
  assert.equal(moveText("t1", "t3"), "t1-t3");
  assert.equal(moveText("t1", "t3", 1), "t1-t3");
  assert.equal(moveText("t1", "t3", 4), "t1-t3:4");
  assert.equal(moveText("t2", "f1", 13), "t2-f1:13");
});

test("a click inside a face-up run picks up from that card to the top where runs move", () => {
  const v = klondike({ t1: [{ hidden: 2 }, "9H", "8S", "7D"], t2: [], w: [{ hidden: 4 }, "QD"], s: [{ hidden: 10 }], f1: ["AS"] },
    { draw: 1, moves: "build", passes: 0 });
  assert.ok(movesRuns(v));
  assert.deepEqual(pickUp(v, "t1", 2), { pile: "t1", count: 3 });
  assert.deepEqual(pickUp(v, "t1", 4), { pile: "t1", count: 1 });
  assert.equal(pickUp(v, "t1", 1), null, "a face-down card cannot be picked up");
  assert.equal(pickUp(v, "t2", null), null, "an empty pile has nothing");
  assert.equal(pickUp(v, "s", 9), null, "the stock is clicked, not picked up");
  assert.deepEqual(pickUp(v, "w", 4), { pile: "w", count: 1 });
  assert.deepEqual(pickUp(v, "f1", 0), { pile: "f1", count: 1 }, "Klondike foundation cards may come back");
  assert.equal(dropMove(v, { pile: "t1", count: 3 }, "t2"), "t1-t2:3");
  assert.equal(dropMove(v, { pile: "t1", count: 3 }, "t1"), null);
  assert.equal(dropMove(v, { pile: "t1", count: 1 }, "w"), null);
});

test("where only top cards move, any click on a pile picks up its top card", () => {
  const v = klondike({ t1: ["9H", "8S", "7D"], s: [], w: [] });
  assert.deepEqual(pickUp(v, "t1", 0), { pile: "t1", count: 1 });
  const golf = { game: "puttputt", options: {}, piles: { t1: ["2C", "3D"], f1: ["4H"], s: [{ hidden: 16 }] } };
  assert.deepEqual(pickUp(golf, "t1", 0), { pile: "t1", count: 1 });
  assert.equal(pickUp(golf, "f1", 0), null, "nothing leaves the Putt Putt foundation");
  const tabby = { game: "tabbycat", options: {}, piles: { t1: ["5C", "4D", "3S"], r: ["9H", "8C"], s: [] } };
  assert.deepEqual(pickUp(tabby, "t1", 1), { pile: "t1", count: 2 });
  assert.deepEqual(pickUp(tabby, "r", 0), { pile: "r", count: 2 }, "the tail moves whole");
  assert.equal(dropMove(tabby, { pile: "r", count: 2 }, "t1"), "r-t1:2");
});

test("the stock deals, and Klondike recycles an empty stock", () => {
  assert.equal(stockMove(klondike({ s: [{ hidden: 3 }], w: [] })), "deal");
  assert.equal(stockMove(klondike({ s: [], w: [{ hidden: 2 }, "4C"] })), "recycle");
  assert.equal(stockMove(klondike({ s: [], w: [] })), null);
  assert.equal(stockMove({ game: "puttputt", piles: { s: [], f1: ["3C"] } }), null);
});

test("a double click proposes the foundation move the visible cards allow", () => {
  const v = klondike({ t1: ["AH"], t2: ["2H"], t3: ["3S"], w: [{ hidden: 1 }, "2S"],
    f1: ["AS"], f2: ["AH"], f3: [], f4: [], s: [] });
  assert.equal(foundationMove(v, "t1"), "t1-f3", "an Ace goes to the first empty foundation");
  assert.equal(foundationMove(v, "t2"), "t2-f2", "same suit, one rank up");
  assert.equal(foundationMove(v, "w"), "w-f1");
  assert.equal(foundationMove(v, "t3"), "t3-f1", "no fit: the first foundation, and the server explains");
  const leap = { game: "leapyear", options: {}, piles: { t1: ["3D"], f1: ["AS"], f2: ["2C"], s: [] } };
  assert.equal(foundationMove(leap, "t1"), "t1-f2", "Leap Year: one rank up, any suit");
  const golf = { game: "puttputt", options: {}, piles: { t4: ["9C"], f1: ["TH"], s: [] } };
  assert.equal(foundationMove(golf, "t4"), "t4-f1");
  const tabby = { game: "tabbycat", options: {}, piles: { t2: ["KS", "QH"], f1: ["KC"], f2: [], s: [] } };
  assert.equal(foundationMove(tabby, "t2"), "t2-f2:13", "Tabby Cat discards whole K..A runs to an empty pile");
  assert.equal(foundationMove(v, "s"), null);
});
