"use strict";
/**
 * Just enough Klondike (docs/RULES.md 5.3, draw one, moves=top, unlimited passes) for the
 * peer room to do the race server's job: the same seeded deal as solrace's engine
 * (engine/deal.py: SplitMix64, Fisher-Yates, text seeds through SHA-256), the same view
 * shape, and a legality check of every move the load bots send (deal, recycle, and one
 * card from the waste or a tableau pile onto a tableau or foundation pile).
 *
 * A port of engine/klondike.py's rules, not its options: the bench rooms use the defaults.
 */
const crypto = require("node:crypto");

const MASK64 = (1n << 64n) - 1n;
const GOLDEN = 0x9e3779b97f4a7c15n;
const RANK_CHARS = "A23456789TJQK";
const SUIT_CHARS = "CDHS";
const TEXT = [];
for (let c = 0; c < 52; c++) TEXT.push(RANK_CHARS[c % 13] + SUIT_CHARS[Math.floor(c / 13)]);
const RANK = (c) => (c % 13) + 1;
const SUIT = (c) => Math.floor(c / 13);
const RED = (c) => SUIT(c) === 1 || SUIT(c) === 2;

const T = 7; // t1..t7 are 0..6
const F = 7; // f1..f4 are 7..10
const S = 11;
const W = 12;
const NAMES = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "f1", "f2", "f3", "f4", "s", "w"];
const INDEX = Object.fromEntries(NAMES.map((n, i) => [n, i]));

class SplitMix64 {
  constructor(seed) {
    this.state = BigInt.asUintN(64, seed);
  }
  next() {
    this.state = (this.state + GOLDEN) & MASK64;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    return z ^ (z >> 31n);
  }
  below(n) {
    const big = BigInt(n);
    const limit = (1n << 64n) - ((1n << 64n) % big);
    for (;;) {
      const r = this.next();
      if (r < limit) return Number(r % big);
    }
  }
}

/** A text seed as the first 8 bytes, big-endian, of SHA-256 of its UTF-8 (engine/deal.py). */
function seedFromText(text) {
  return crypto.createHash("sha256").update(text, "utf8").digest().readBigUInt64BE(0);
}

function shuffledDeck(seed) {
  const cards = Array.from({ length: 52 }, (_, i) => i);
  const rng = new SplitMix64(seed);
  for (let i = cards.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

function tabOk(c, q) {
  if (q.length === 0) return RANK(c) === 13;
  const d = q[q.length - 1];
  return RED(c) !== RED(d) && RANK(c) + 1 === RANK(d);
}

function foundOk(c, f) {
  if (f.length === 0) return RANK(c) === 1;
  const d = f[f.length - 1];
  return SUIT(c) === SUIT(d) && RANK(c) === RANK(d) + 1;
}

class Klondike {
  /** The deal of `seed` (a text, as the bench's rooms use, or a u64 BigInt). */
  constructor(seed) {
    const cards = shuffledDeck(typeof seed === "string" ? seedFromText(seed) : seed);
    this.piles = NAMES.map(() => []);
    let i = 0;
    for (let row = 0; row < T; row++) {
      for (let p = row; p < T; p++) this.piles[p].push(cards[i++]);
    }
    this.piles[S] = cards.slice(i).reverse();
    this.down = [0, 1, 2, 3, 4, 5, 6];
    this.moves = 0;
    this.home = 0;
  }

  /** Why `move` (canonical text) is illegal now, or null when it is legal. */
  check(move) {
    if (move === "deal") return this.piles[S].length ? null : "the stock is empty";
    if (move === "recycle") {
      if (this.piles[S].length) return "the stock is not empty yet";
      return this.piles[W].length ? null : "the waste is empty";
    }
    if (typeof move !== "string") return "a move is a text";
    const dash = move.indexOf("-");
    const src = INDEX[move.slice(0, dash)];
    const dst = INDEX[move.slice(dash + 1)];
    if (dash < 0 || src === undefined || dst === undefined) return `${move} is not a move`;
    if (src === dst) return "a pile cannot move onto itself";
    if (dst >= S) return `nothing moves onto ${NAMES[dst]}`;
    if (src === S) return "the stock is used by 'deal'";
    const p = this.piles[src];
    if (!p.length) return `${NAMES[src]} is empty`;
    const c = p[p.length - 1];
    const q = this.piles[dst];
    if (dst < T) return tabOk(c, q) ? null : `${TEXT[c]} does not go on ${NAMES[dst]}`;
    if (src >= F && src < S) return "a foundation card goes back only to the tableau";
    return foundOk(c, q) ? null : `${TEXT[c]} does not go on ${NAMES[dst]}`;
  }

  /** Play a move `check` passed; returns the cards it turned face up (text). */
  play(move) {
    const piles = this.piles;
    this.moves++;
    if (move === "deal") {
      const c = piles[S].pop();
      piles[W].push(c);
      return [TEXT[c]];
    }
    if (move === "recycle") {
      piles[S] = piles[W].reverse();
      piles[W] = [];
      return [];
    }
    const dash = move.indexOf("-");
    const src = INDEX[move.slice(0, dash)];
    const dst = INDEX[move.slice(dash + 1)];
    const p = piles[src];
    piles[dst].push(p.pop());
    this.home += (dst >= F && dst < S ? 1 : 0) - (src >= F && src < S ? 1 : 0);
    if (src < T && this.down[src] && p.length === this.down[src]) {
      this.down[src]--;
      return [TEXT[p[p.length - 1]]];
    }
    if (src === W && p.length) return [TEXT[p[p.length - 1]]];
    return [];
  }

  /** The player's own view, shaped as engine Game.view() (what solrace's ack carries). */
  view() {
    const piles = {};
    for (let i = 0; i < NAMES.length; i++) {
      const p = this.piles[i];
      let hidden = 0;
      if (i < T) hidden = this.down[i];
      else if (i === S) hidden = p.length;
      else if (i === W) hidden = Math.max(0, p.length - 1);
      const out = hidden ? [{ hidden }] : [];
      for (let k = hidden; k < p.length; k++) out.push(TEXT[p[k]]);
      piles[NAMES[i]] = out;
    }
    return {
      game: "klondike",
      options: { draw: 1, moves: "top", passes: 0 },
      piles,
      stock: this.piles[S].length,
      deals_left: null,
      passes_left: null,
      moves: this.moves,
      home: this.home,
      progress: Math.round((this.home / 52) * 10000) / 10000,
      won: this.home === 52,
      dead: false,
    };
  }
}

module.exports = { Klondike, seedFromText, shuffledDeck, TEXT };
