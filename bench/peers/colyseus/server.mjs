/**
 * The peer: a Colyseus room doing the race server's job, for `solrace bench peer`.
 *
 * A room of N players races on one seeded Klondike deal. Each `move` message is checked
 * (the move number `n` must be the player's next, the move must be legal), applied to the
 * player's game in memory, RPUSHed to Redis and, once Redis answered, acked to the mover with
 * its view (as solrace's ack carries it). Progress (moves, cards home, status of every seat)
 * reaches the room as Colyseus schema state patches every 50 ms. Presence is Redis
 * (RedisPresence), as a deployment of more than one process would run it.
 *
 *   node server.mjs --port P --redis-url redis://127.0.0.1:6379/0 --prefix KEYPREFIX [--parent-pid PID]
 *
 * Colyseus loses a room with its process (no log to rebuild it from): what the bench compares
 * is the cost of a move, not the guarantees.
 */
// ESM throughout: @colyseus/ws-transport loads @colyseus/core as ESM, and a CommonJS
// require of core here would be a second copy of the matchmaker (seats reserved in one,
// looked up in the other).
import { Server, Room } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";
import { RedisPresence } from "@colyseus/redis-presence";
import { schema, t, MapSchema } from "@colyseus/schema";
import { Redis } from "ioredis";
import klondike from "./klondike.js";

const { Klondike } = klondike;

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const port = Number(arg("port", "2567"));
const redisUrl = arg("redis-url", "redis://127.0.0.1:6379/0");
const prefix = arg("prefix", "solrace-peer:");
const redis = new Redis(redisUrl);

const Seat = schema(
  { seat: t.uint8(), moves: t.uint32(), home: t.uint8(), status: t.string() },
  "Seat",
);
const RaceState = schema({ seats: t.map(Seat) }, "RaceState");

const MAX_PLAYERS = 8;

class RaceRoom extends Room {
  onCreate(options) {
    this.maxClients = Math.min(MAX_PLAYERS, Math.max(1, Number(options.players) || MAX_PLAYERS));
    this.patchRate = 50; // progress reaches the room as state patches every 50 ms
    this.seed = typeof options.seed === "string" ? options.seed.slice(0, 64) : "solrace-bench";
    this.key = `${prefix}room:${this.roomId}:moves`;
    this.games = new Map(); // sessionId -> { game, seat }
    this.nextSeat = 0;
    this.state = new RaceState();
    this.state.seats = new MapSchema();
    this.onMessage("move", (client, msg) => this.move(client, msg));
  }

  onJoin(client) {
    const seat = this.nextSeat++;
    this.games.set(client.sessionId, { game: new Klondike(this.seed), seat });
    const line = new Seat();
    Object.assign(line, { seat, moves: 0, home: 0, status: "racing" });
    this.state.seats.set(String(seat), line);
  }

  onLeave(client) {
    this.games.delete(client.sessionId);
  }

  async move(client, msg) {
    const ref = msg && Number.isInteger(msg.id) ? msg.id : null;
    const player = this.games.get(client.sessionId);
    if (!player || !msg || typeof msg.move !== "string" || msg.move.length > 16) {
      client.send("error", { ref, code: "bad_message" });
      return;
    }
    const { game, seat } = player;
    if (msg.n !== undefined && msg.n !== game.moves + 1) {
      client.send("error", { ref, code: "out_of_sync", n: game.moves });
      return;
    }
    const why = game.check(msg.move);
    if (why !== null) {
      client.send("error", { ref, code: "illegal_move", message: why });
      return;
    }
    // applied in memory at once (the next move is checked against it), acked once durable
    const revealed = game.play(msg.move);
    const n = game.moves;
    try {
      await redis.rpush(this.key, JSON.stringify({ seat, n, move: msg.move, at: Date.now() }));
    } catch (err) {
      client.send("error", { ref, code: "internal" });
      return;
    }
    const line = this.state.seats.get(String(seat));
    line.moves = n;
    line.home = game.home;
    const view = game.view();
    client.send("ack", { ref, n, move: msg.move, revealed, view, status: "racing" });
  }
}

async function main() {
  const server = new Server({
    transport: new WebSocketTransport({ perMessageDeflate: false, maxPayload: 8192 }),
    presence: new RedisPresence(redisUrl),
    greet: false,
    gracefullyShutdown: false,
  });
  server.define("race", RaceRoom);
  await server.listen(port, "127.0.0.1");
  console.log(`colyseus peer listening on 127.0.0.1:${port}`);
  const stop = async () => {
    setTimeout(() => process.exit(0), 3000); // a shutdown stuck on Redis does not keep it
    try {
      await server.gracefullyShutdown(false);
    } catch (_) {}
    redis.disconnect();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // started in a session of its own (bench/load_procs.py), so no terminal's ^C reaches it:
  // it stops when the bench that started it (--parent-pid) is gone
  const parent = Number(arg("parent-pid", "0"));
  if (parent) setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
