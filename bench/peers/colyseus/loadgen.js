"use strict";
/**
 * A load-generator process for the Colyseus peer, driven by `solrace bench peer`.
 *
 *   node loadgen.js --url ws://127.0.0.1:P --rooms R --players N --pace MOVES_PER_S [--parent-pid PID]
 *
 * Opens R rooms of N players with the official client (@colyseus/sdk), prints one JSON line
 * {"ready": connections} on stdout, then reads one JSON line {"t0": s, "t1": s} on stdin
 * (CLOCK_MONOTONIC seconds, the clock of Python's time.monotonic()) and runs the bots: each
 * player moves (pace 0: as soon as its ack returns; else pace moves a second) from at once
 * until t1, the same policy as bench/load_policy.py reading the view each ack carries. It
 * then prints one JSON line with what bench/loadgen.py's `run` returns: acks of moves sent
 * in [t0, t1), their move-to-ack latency as a bench/load_hist.py histogram, errors, late
 * paced sends, frames received in the window (acks and state patches), and exits.
 */
const readline = require("node:readline");
const { Client } = require("@colyseus/sdk");

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const url = arg("url");
const rooms = Number(arg("rooms", "1"));
const players = Number(arg("players", "8"));
const pace = Number(arg("pace", "0"));
const seed = arg("seed", "solrace-bench");

/** CLOCK_MONOTONIC seconds (libuv's hrtime), comparable with Python's time.monotonic(). */
const now = () => Number(process.hrtime.bigint()) / 1e9;

// -- the histogram of bench/load_hist.py (log-linear, 64 buckets per power of two, 1 us) ----
const SUB_BUCKETS = 64;
const MIN_VALUE = 1e-6;
class Histogram {
  constructor() {
    this.counts = {};
    this.count = 0;
    this.total = 0;
    this.max = 0;
    this.min = null;
  }
  record(v) {
    const b = v <= MIN_VALUE ? 0 : Math.floor(Math.log2(v / MIN_VALUE) * SUB_BUCKETS) + 1;
    this.counts[b] = (this.counts[b] || 0) + 1;
    this.count++;
    this.total += v;
    if (v > this.max) this.max = v;
    if (this.min === null || v < this.min) this.min = v;
  }
}

// -- the bots' policy: bench/load_policy.py's klondike_move ---------------------------------
const RANKS = "A23456789TJQK";
const rank = (card) => RANKS.indexOf(card[0]) + 1;
const isRed = (card) => card[1] === "D" || card[1] === "H";
const top = (pile) => {
  if (!pile || !pile.length) return null;
  const last = pile[pile.length - 1];
  return typeof last === "string" ? last : null;
};
function homeTarget(card, piles) {
  let empty = null;
  for (const name of ["f1", "f2", "f3", "f4"]) {
    const pile = piles[name];
    const t = top(pile);
    if (t === null) {
      if (!pile.length && empty === null) empty = name;
      continue;
    }
    if (t[1] === card[1] && rank(t) + 1 === rank(card)) return name;
  }
  return rank(card) === 1 ? empty : null;
}
function fitsTableau(card, onto, pile) {
  if (!pile.length) return rank(card) === 13;
  if (onto === null) return false;
  return isRed(card) !== isRed(onto) && rank(card) + 1 === rank(onto);
}
const TABLEAU = ["t1", "t2", "t3", "t4", "t5", "t6", "t7"];
function nextMove(view) {
  if (!view) return "deal";
  const piles = view.piles;
  const waste = top(piles.w);
  if (waste !== null) {
    const dest = homeTarget(waste, piles);
    if (dest) return `w-${dest}`;
  }
  for (const name of TABLEAU) {
    const card = top(piles[name]);
    if (card !== null) {
      const dest = homeTarget(card, piles);
      if (dest) return `${name}-${dest}`;
    }
  }
  if (waste !== null) {
    for (const name of TABLEAU) {
      if (fitsTableau(waste, top(piles[name]), piles[name])) return `w-${name}`;
    }
  }
  return view.stock > 0 ? "deal" : "recycle";
}

// -- bots -----------------------------------------------------------------------------------
const stats = { acks: 0, hist: new Histogram(), errors: {}, late: 0, frames: 0 };
let measured = { t0: Infinity, t1: Infinity };

class Bot {
  constructor(room) {
    this.room = room;
    this.view = null;
    this.n = 0;
    this.ids = 0;
    this.pending = null; // { id, ts, resolve }
    room.onMessage("ack", (msg) => this.reply(msg, true));
    room.onMessage("error", (msg) => this.reply(msg, false));
    room.onStateChange(() => {
      const t = now();
      if (t >= measured.t0 && t < measured.t1) stats.frames++;
    });
  }
  reply(msg, ok) {
    const p = this.pending;
    if (!p || msg.ref !== p.id) return;
    this.pending = null;
    p.resolve({ t: now(), ok, msg });
  }
  send(move) {
    const id = ++this.ids;
    return new Promise((resolve) => {
      this.pending = { id, resolve };
      this.room.send("move", { move, n: this.n + 1, id });
    });
  }
  async run(t1) {
    const period = pace ? 1 / pace : 0;
    let next = now() + Math.random() * period;
    while (true) {
      if (period) {
        const delay = next - now();
        if (delay > 0) await new Promise((r) => setTimeout(r, delay * 1000));
      }
      const ts = now();
      if (ts >= t1) break;
      const { t, ok, msg } = await this.send(nextMove(this.view));
      const inWindow = ts >= measured.t0 && ts < t1;
      if (inWindow) stats.frames++;
      if (ok) {
        if (inWindow) {
          stats.hist.record(t - ts);
          stats.acks++;
        }
        this.n = msg.n;
        this.view = msg.view;
      } else {
        stats.errors[msg.code] = (stats.errors[msg.code] || 0) + 1;
        if (msg.code === "out_of_sync") this.n = msg.n;
        else this.view = null;
        if (!period) await new Promise((r) => setTimeout(r, 10));
      }
      if (period) {
        next += period;
        if (next < now()) {
          stats.late++;
          next = now();
        }
      }
    }
  }
}

async function openRoom(client) {
  const host = await client.create("race", { seed, players });
  const rest = [];
  for (let i = 1; i < players; i++) rest.push(client.joinById(host.roomId, {}));
  return [host, ...(await Promise.all(rest))];
}

// run in a session of its own, so nothing stops it with the bench: it stops when the bench
// that started it (--parent-pid) is gone
const parent = Number(arg("parent-pid", "0"));
if (parent) setInterval(() => process.ppid !== parent && process.exit(1), 1000).unref();

async function main() {
  const client = new Client(url);
  const bots = [];
  // a few rooms at a time: matchmaking requests are HTTP, and a burst is not what is measured
  for (let r = 0; r < rooms; r += 8) {
    const batch = [];
    for (let k = r; k < Math.min(rooms, r + 8); k++) batch.push(openRoom(client));
    for (const seats of await Promise.all(batch)) for (const s of seats) bots.push(new Bot(s));
  }
  process.stdout.write(JSON.stringify({ ready: bots.length }) + "\n");
  const lines = readline.createInterface({ input: process.stdin });
  const gone = () => process.exit(1); // the bench went away before the start
  lines.once("close", gone);
  const go = await new Promise((resolve) => lines.once("line", (l) => resolve(JSON.parse(l))));
  lines.off("close", gone);
  lines.close();
  measured = { t0: go.t0, t1: go.t1 };
  await Promise.all(bots.map((b) => b.run(go.t1)));
  const h = stats.hist;
  const out = {
    ack: { counts: h.counts, count: h.count, total: h.total, max: h.max, min: h.min },
    acks: stats.acks,
    errors: stats.errors,
    late: stats.late,
    frames: stats.frames,
    connections: bots.length,
  };
  await Promise.all(bots.map((b) => b.room.leave(true).catch(() => {})));
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
