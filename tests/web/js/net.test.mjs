// The WebSocket link's pure parts (run by tests/web/test_web_units.py).
import test from "node:test";
import assert from "node:assert/strict";
import { protocolVersion, encodeMessage, decodeFrame, Connection } from "../../../client/web/js/net.js";

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
