// Pure parts added for issue 12: card and pile names in messages, spoken card names, undo only
// when the server would do it, ranked times, room links, and the one-seat-one-tab guard.
import test from "node:test";
import assert from "node:assert/strict";
import { tableWords, cardSpoken, pileName } from "../../../client/web/js/cards.js";
import { initialState, reduce, canUndo, rankedTime } from "../../../client/web/js/state.js";
import { roomFromLocation } from "../../../client/web/js/session.js";
import { seatGuard } from "../../../client/web/js/seats.js";
import { clockTexts } from "../../../client/web/js/render.js";
import { RULES } from "../../../client/web/js/help.js";

test("refusals read in the table's words: card faces, pile names, no repeated move text", () => {
  assert.equal(tableWords("t1-t2: 9H does not go on 3S (one rank lower, other colour)"),
    "9♥ does not go on 3♠ (one rank lower, other colour)");
  assert.equal(tableWords("w-f1: an empty foundation takes only an Ace, not TD"), "an empty foundation takes only an Ace, not 10♦");
  assert.equal(tableWords("t9-f1: there is no pile t9 in puttputt"), "there is no pile 9 in puttputt");
  assert.equal(tableWords("t2-t5:3: only the face-up run of t2 moves (2 cards)"), "only the face-up run of pile 2 moves (2 cards)");
  assert.equal(tableWords("nothing moves onto w"), "nothing moves onto the waste");
  assert.equal(tableWords("the card's rank"), "the card's rank", "words are not pile names");
  assert.equal(cardSpoken("TH"), "10 of hearts");
  assert.equal(cardSpoken("QS"), "Queen of spades");
  assert.deepEqual(["t3", "f12", "s", "r"].map(pileName), ["pile 3", "foundation 12", "the stock", "the tail"]);
});

const racing = (undo = "safe") => reduce(initialState(), { type: "joined", room: "R1", role: "player", seat: 0, token: "t",
  snapshot: { room: "R1", state: "racing", event: 5, options: { game: "puttputt", undo }, players: [{ seat: 0, name: "a", status: "racing", moves: 0 }],
    you: { seat: 0, view: { game: "puttputt", piles: {}, moves: 0 } } } });
const ack = (n, revealed, extra = {}) => ({ type: "ack", n, revealed, view: { game: "puttputt", piles: {}, moves: n, home: 0, progress: 0 }, status: "racing", ...extra });

test("undo is offered only for a last move that revealed nothing, in a room that allows it", () => {
  let s = racing();
  assert.equal(canUndo(s), false, "no move yet");
  s = reduce(s, ack(1, []));
  assert.equal(canUndo(s), true);
  s = reduce(s, ack(2, ["7H"]));
  assert.equal(canUndo(s), false, "the deal revealed a card");
  s = reduce(racing(), ack(1, []));
  s = reduce(s, ack(2, []));
  s = reduce(s, { ...ack(1, undefined), undone: "t2-f1" });
  assert.equal(canUndo(s), true, "after an undo, the move before is the last one");
  assert.equal(canUndo(reduce(racing("none"), ack(1, []))), false, "the room's undo is off");
});

test("after the results the race's times are the ranking's", () => {
  let s = racing();
  s = reduce(s, { type: "event", n: 6, kind: "progress", seat: 0, moves: 2, home: 1, progress: 0.03, status: "resigned", time: 5400 });
  s = reduce(s, { type: "event", n: 7, kind: "results", ranking: [{ seat: 0, name: "a", place: 1, status: "resigned", progress: 0.03, moves: 2, time: 3100 }], seed: 1, salt: "00" });
  assert.equal(rankedTime(s, 0), 3100);
  assert.equal(rankedTime(s, 4), undefined);
  assert.equal(clockTexts(s, Date.now()).elapsed, "0:03.1");
});

test("room links: /#CODE, /r/CODE and ?room=CODE", () => {
  const loc = (pathname, hash = "", search = "") => ({ pathname, hash, search });
  assert.equal(roomFromLocation(loc("/", "#kx7qf")), "KX7QF");
  assert.equal(roomFromLocation(loc("/r/KX7QF")), "KX7QF");
  assert.equal(roomFromLocation(loc("/r/KX7QF/")), "KX7QF");
  assert.equal(roomFromLocation(loc("/", "", "?room=AB12")), "AB12");
  assert.equal(roomFromLocation(loc("/r/")), null);
  // a private room's code is 20 characters (its link is its only key)
  assert.equal(roomFromLocation(loc("/", "#abcdefghjk23456789mn")), "ABCDEFGHJK23456789MN");
  assert.equal(roomFromLocation(loc("/r/ABCDEFGHJK23456789MN")), "ABCDEFGHJK23456789MN");
});

/** BroadcastChannels of one origin: every other channel hears a post. */
function hub() {
  const chans = [];
  return () => {
    const c = { onmessage: null, postMessage(data) { for (const o of chans) if (o !== c) setTimeout(() => o.onmessage?.({ data }), 0); } };
    chans.push(c);
    return c;
  };
}

test("a tab asks before it plays a seat another tab holds, and taking it makes the other let go", async () => {
  const make = hub();
  let taken = 0;
  const a = seatGuard({ onTaken: () => taken++ }, make, null);
  const b = seatGuard({}, make, null);
  assert.equal(await b.heldElsewhere("R1", "tok"), false, "nobody holds it yet");
  a.hold("R1", "tok");
  assert.equal(await b.heldElsewhere("R1", "tok"), true);
  assert.equal(await b.heldElsewhere("R1", "other"), false, "another seat");
  b.take("R1", "tok");
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(taken, 1);
  assert.equal(a.held, null);
  assert.deepEqual(b.held, { room: "R1", token: "tok" });
  assert.equal(await seatGuard({}, () => null, null).heldElsewhere("R1", "tok"), false, "no BroadcastChannel: no question");
});

/** Web Locks of one origin (held until the holder's promise settles). */
function lockManager() {
  const held = new Map();
  return {
    async request(name, fn) {
      while (held.has(name)) await held.get(name);
      const p = Promise.resolve().then(fn);
      held.set(name, p);
      try { return await p; } finally { held.delete(name); }
    },
    async query() { return { held: [...held.keys()].map((name) => ({ name })) }; },
  };
}

test("with Web Locks, asking is a lookup: the seat's lock is held while a tab plays it", async () => {
  const make = hub();
  const locks = lockManager();
  const a = seatGuard({ onTaken() {} }, make, locks);
  const b = seatGuard({}, make, locks);
  a.hold("R1", "tok");
  await new Promise((r) => setTimeout(r, 1));
  assert.equal(await b.heldElsewhere("R1", "tok"), true);
  a.release(); // the tab closed or left the room
  await new Promise((r) => setTimeout(r, 1));
  assert.equal(await b.heldElsewhere("R1", "tok"), false);
});

test("how to play covers every game the engine deals", () => {
  for (const id of ["tabbycat", "manx", "puttputt", "klondike", "leapyear"]) {
    assert.ok(RULES[id].goal && RULES[id].rules.length >= 4, id);
  }
});
