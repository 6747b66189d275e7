// The WebSocket link's pure parts (run by tests/web/test_web_units.py).
import test from "node:test";
import assert from "node:assert/strict";
import { protocolVersion, encodeMessage, decodeFrame, Connection, newRoomCode, CODE_ALPHABET } from "../../../client/web/js/net.js";

/** A stand-in for the page's document holding the served <meta> tag (or none). */
function page(content) {
  return {
    querySelector(selector) {
      assert.equal(selector, 'meta[name="solrace-protocol"]');
      return content === undefined ? null : { content };
    },
  };
}

test("hello says the protocol version the server wrote into the page", () => {
  assert.equal(protocolVersion(page("1")), 1);
  assert.equal(protocolVersion(page("7")), 7);
});

test("a page not served by a solrace server says version 0, which a server refuses", () => {
  assert.equal(protocolVersion(page("{{PROTOCOL_VERSION}}")), 0);
  assert.equal(protocolVersion(page(undefined)), 0);
  assert.equal(protocolVersion(undefined), 0);
});

test("frames are msgpack maps; 64-bit integers that fit a double come back as numbers", () => {
  const msg = { type: "hello", version: 1, client: "x" };
  assert.deepEqual(decodeFrame(encodeMessage(msg)), msg);
  // {"s": u64} as the server packs a seed: 0xcf then 8 bytes, big-endian
  const u64 = (...bytes) => new Uint8Array([0x81, 0xa1, 0x73, 0xcf, ...bytes]);
  assert.strictEqual(decodeFrame(u64(0, 0, 0, 0, 0, 0, 1, 2)).s, 258);
  assert.strictEqual(decodeFrame(u64(0x80, 0, 0, 0, 0, 0, 0, 0)).s, 2n ** 63n);
});

test("a drawn room code has the protocol's shape: 5 characters public, 20 private", () => {
  const shape = (n) => new RegExp(`^[${CODE_ALPHABET}]{${n}}$`);
  assert.match(newRoomCode(true), shape(5));
  assert.match(newRoomCode(false), shape(20));
  assert.notEqual(newRoomCode(false), newRoomCode(false));
  // every byte maps into the alphabet, the last letters too
  assert.equal(newRoomCode(true, (n) => new Uint8Array(n).fill(255)), "99999");
  assert.equal(newRoomCode(true, (n) => new Uint8Array(n).fill(32)), "AAAAA");
});

test("a spectator's batch frame is handled as its messages, one by one, in order", () => {
  const seen = [];
  const conn = new Connection("ws://x/ws", { onMessage: (msg) => seen.push(msg) });
  const items = [
    { type: "event", n: 7, kind: "progress", at: 1, seat: 0, moves: 3, home: 0, progress: 0, status: "racing", time: 5 },
    { type: "progress", from: 8, n: 9, at: 2, seats: [] },
    { type: "board", seat: 0, moves: 3, view: { moves: 3 } },
  ];
  const frame = encodeMessage({ type: "batch", messages: items });
  conn._receive(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength));
  assert.deepEqual(seen, items);
  // a frame that is one message stays one message
  const one = encodeMessage(items[2]);
  conn._receive(one.buffer.slice(one.byteOffset, one.byteOffset + one.byteLength));
  assert.deepEqual(seen.at(-1), items[2]);
  assert.equal(seen.length, 4);
});

// ---- requests refused `busy` or `rate_limited` are sent again (PROTOCOL.md, Errors) ----

import { mock } from "node:test";
import { retryDelay, REQUEST_TRIES } from "../../../client/web/js/net.js";

test("a retryable refusal waits the server's retry_after, else a doubling backoff; others are not retried", () => {
  const busy = { type: "error", code: "busy" };
  const top = (attempt) => retryDelay(busy, attempt, () => 1);
  const low = (attempt) => retryDelay(busy, attempt, () => 0);
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map(top), [100, 200, 400, 800, 1600, 3000, 3000]);
  assert.deepEqual([0, 1, 2].map(low), [50, 100, 200]); // the upper half is jittered
  assert.equal(retryDelay(busy, REQUEST_TRIES - 1), null); // the tries are spent
  const limited = { type: "error", code: "rate_limited", retry_after: 4200 };
  assert.equal(retryDelay(limited, 0, () => 0), 4200);
  assert.equal(retryDelay(limited, 0, () => 1), 4200 * 1.2);
  assert.equal(retryDelay({ ...limited, retry_after: 60000 }, 0), null); // the server says no
  assert.equal(retryDelay({ type: "error", code: "illegal_move" }, 0), null);
  assert.equal(retryDelay({ type: "ack" }, 0), null);
});

/** A stand-in WebSocket: records what the page sends; the test answers as the server. */
class FakeSocket {
  static OPEN = 1;
  static last = null;
  constructor() {
    this.readyState = FakeSocket.OPEN;
    this.sent = [];
    FakeSocket.last = this;
  }
  send(bytes) {
    this.sent.push(decodeFrame(bytes));
  }
  close() {}
  answer(msg) {
    this.onmessage({ data: encodeMessage(msg).slice().buffer });
  }
}

function connected() {
  mock.timers.enable({ apis: ["setTimeout", "setInterval"] });
  globalThis.WebSocket = FakeSocket;
  const heard = [];
  const conn = new Connection("ws://test/ws", { onMessage: (m) => heard.push(m) });
  conn.start();
  FakeSocket.last.onopen();
  FakeSocket.last.answer({ type: "welcome", server: "t", limits: {} });
  return { conn, ws: FakeSocket.last, heard };
}

test("a request refused busy or rate_limited is sent again and resolves with the real answer", async (t) => {
  t.after(() => mock.timers.reset());
  const { conn, ws, heard } = connected();
  const reply = conn.request({ type: "configure", options: { countdown: 0 } });
  const first = ws.sent.at(-1);
  assert.equal(first.type, "configure");
  ws.answer({ type: "error", code: "busy", ref: first.id, message: "try again" });
  assert.equal(ws.sent.length, 2); // hello, configure: nothing sent before the pause
  mock.timers.tick(100);
  const second = ws.sent.at(-1);
  assert.deepEqual({ ...second, id: 0 }, { ...first, id: 0 }); // the same request, a new id
  assert.notEqual(second.id, first.id);
  ws.answer({ type: "error", code: "rate_limited", ref: second.id, retry_after: 1000 });
  mock.timers.tick(999);
  assert.equal(ws.sent.length, 3);
  mock.timers.tick(201);
  const third = ws.sent.at(-1);
  ws.answer({ type: "ack", ref: third.id });
  assert.deepEqual(await reply, { type: "ack", ref: third.id });
  assert.equal(conn.retries, 2);
  // the page's reducer never heard of the refusals (no notice for what was retried)
  assert.deepEqual(heard.map((m) => m.type), ["ack"]);
});

test("a refusal that lasts past the tries reaches the page", async (t) => {
  t.after(() => mock.timers.reset());
  const { conn, ws, heard } = connected();
  const reply = conn.request({ type: "lobby" });
  for (let i = 0; i < REQUEST_TRIES; i++) {
    const last = ws.sent.findLast((m) => m.type === "lobby"); // not the ping sent every 15 s
    ws.answer({ type: "error", code: "busy", ref: last.id });
    mock.timers.tick(3000);
  }
  assert.equal(ws.sent.filter((m) => m.type === "lobby").length, REQUEST_TRIES);
  assert.equal((await reply).code, "busy");
  assert.deepEqual(heard.map((m) => m.code), ["busy"]);
});

test("other errors resolve at once, as before", async (t) => {
  t.after(() => mock.timers.reset());
  const { conn, ws } = connected();
  const reply = conn.request({ type: "move", move: "t1-t2", n: 1 });
  ws.answer({ type: "error", code: "illegal_move", ref: ws.sent.at(-1).id });
  assert.equal((await reply).code, "illegal_move");
  assert.equal(ws.sent.length, 2);
});
