// The WebSocket link to the server: msgpack binary frames, the hello handshake, request ids,
// an application ping (browsers cannot send WebSocket pings), reconnection with backoff, and
// requests refused `busy` or `rate_limited` sent again after a pause (as client/retry.py).
// It knows nothing of rooms: app.js decides what to send once the link is (re)established.

import { encode, Decoder } from "../node_modules/@msgpack/msgpack/dist.esm/index.mjs";
import { playerKey } from "./session.js";

const decoder = new Decoder({ useBigInt64: true });

/** 64-bit integers arrive as BigInt; those that fit a double exactly become plain numbers. */
function normalize(value) {
  if (typeof value === "bigint") {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value;
  }
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = normalize(v);
    return out;
  }
  return value;
}

export function decodeFrame(buffer) {
  return normalize(decoder.decode(new Uint8Array(buffer)));
}

export function encodeMessage(msg) {
  return encode(msg);
}

export const CLIENT_NAME = "solrace-web/0.1";

// What the server calls normal (PROTOCOL.md, Errors): a request refused `busy` or
// `rate_limited` did nothing, so it is sent again, as it was, after the server's `retry_after`
// (plus up to a fifth, as jitter) or else a backoff of 0.1 s doubling up to 3 s, the upper
// half jittered: the Python client's numbers (client/retry.py, protocol/retry.py's Backoff).
/** the codes a request is sent again for */
export const RETRYABLE = new Set(["busy", "rate_limited"]);
/** tries of a request refused with a retryable code (the first included) */
export const REQUEST_TRIES = 8;
const FIRST_MS = 100;
const CAP_MS = 3000;
/** the longest `retry_after` waited out (a longer one is the server saying no) */
const MAX_RETRY_AFTER_MS = 10000;

/**
 * Milliseconds to wait before sending a refused request again (`attempt` counts from 0), or
 * null not to: the reply is not a retryable refusal, the tries are spent, or the server's
 * `retry_after` is too long to wait for.
 */
export function retryDelay(reply, attempt, random = Math.random) {
  if (reply?.type !== "error" || !RETRYABLE.has(reply.code) || attempt + 1 >= REQUEST_TRIES) return null;
  const after = reply.retry_after;
  if (typeof after === "number" && after > 0) {
    return after > MAX_RETRY_AFTER_MS ? null : after * (1 + 0.2 * random());
  }
  const top = Math.min(CAP_MS, FIRST_MS * 2 ** attempt);
  return top * (0.5 + 0.5 * random());
}

/**
 * The WebSocket URL naming the room this page is in (or about to join, resume or watch):
 * the server routes every connection of a room to the process serving it by this code
 * (`solrace serve --workers N`, or a proxy hashing it). Without one any process serves it.
 */
export function urlWithRoom(url, room) {
  if (!room) return url;
  return `${url}${url.includes("?") ? "&" : "?"}room=${encodeURIComponent(room)}`;
}

/** Room codes (PROTOCOL.md, Room codes and links; protocol/codes.py): this alphabet, 5
 * characters for a public room, 20 for a private one (its link's only secret). */
export const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/**
 * A fresh code for a room this page is about to create: the page names it in its connection's
 * URL before `create`, so the room's first connection reaches the process its later ones will.
 * 32 letters: a random byte's low 5 bits pick one without bias.
 */
export function newRoomCode(isPublic, random = (n) => crypto.getRandomValues(new Uint8Array(n))) {
  const bytes = random(isPublic ? 5 : 20);
  return Array.from(bytes, (b) => CODE_ALPHABET[b & 31]).join("");
}

/**
 * The protocol version to say in hello: the server writes it into the page it serves
 * (<meta name="solrace-protocol">, see server/net/http.py), since hello goes before anything else.
 * 0 when the page did not come from a solrace server: that server then refuses the hello.
 */
export function protocolVersion(doc = globalThis.document) {
  const v = Number(doc?.querySelector('meta[name="solrace-protocol"]')?.content);
  return Number.isInteger(v) ? v : 0;
}

export class Connection {
  /**
   * @param {string} url ws:// or wss:// address of the server's /ws endpoint
   * @param {{onMessage: Function, onStatus: Function, onReady: Function}} handlers
   *   onReady runs after every welcome (first connect and each reconnect).
   */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.ws = null;
    this.ready = false;
    this.seq = 0;
    this.pending = new Map();
    this.backoff = 250;
    this.stopped = false;
    this.pingTimer = null;
    this.readyWaiters = [];
    this.socketRoom = null; // the room the open socket's URL names
    this.rerouted = false; // the socket was reopened for another room (reroute)
    this.retries = 0; // requests sent again after a `busy` or `rate_limited` (for the tests)
  }

  start() {
    this.stopped = false;
    this._open();
  }

  stop() {
    this.stopped = true;
    if (this.ws) this.ws.close(1000);
  }

  _status(s) {
    this.handlers.onStatus?.(s);
  }

  _open() {
    this._status("connecting");
    this.socketRoom = this.handlers.room?.() || null;
    const ws = new WebSocket(urlWithRoom(this.url, this.socketRoom));
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    ws.onopen = () => {
      const hello = { type: "hello", version: protocolVersion(), client: CLIENT_NAME };
      const key = playerKey();
      if (key) hello.player_key = key;
      ws.send(encodeMessage(hello));
    };
    ws.onmessage = (ev) => this._receive(ev.data);
    ws.onclose = () => this._closed(ws);
    ws.onerror = () => {};
  }

  _receive(data) {
    if (typeof data === "string") return; // the protocol is binary only
    let msg;
    try {
      msg = decodeFrame(data);
    } catch (err) {
      console.warn("undecodable frame", err);
      return;
    }
    // A spectator's tick is one `batch` frame: its messages are handled one by one, in order.
    if (msg.type === "batch") {
      for (const item of Array.isArray(msg.messages) ? msg.messages : []) this._message(item);
      return;
    }
    this._message(msg);
  }

  _message(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "welcome") {
      this.ready = true;
      this.backoff = 250;
      this._status("open");
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: "ping", t: Date.now() }), 15000);
      const rerouted = this.rerouted;
      this.rerouted = false;
      this.handlers.onReady?.(msg, { rerouted });
      for (const resolve of this.readyWaiters.splice(0)) resolve();
      return;
    }
    if (msg.ref != null && this.pending.has(msg.ref)) {
      const req = this.pending.get(msg.ref);
      this.pending.delete(msg.ref);
      const delay = retryDelay(msg, req.attempt);
      if (delay != null) {
        // nothing was done: ask again later; the page hears of the refusal only if it lasts
        req.attempt += 1;
        this.retries += 1;
        setTimeout(() => this._ask(req), delay);
        return;
      }
      req.resolve(msg);
    }
    if (msg.type !== "pong") this.handlers.onMessage?.(msg);
  }

  _closed(ws) {
    if (ws !== this.ws) return;
    this._linkLost();
    this._status("closed");
    if (this.stopped) return;
    const wait = this.backoff;
    this.backoff = Math.min(this.backoff * 2, 5000);
    setTimeout(() => this._open(), wait);
  }

  /** Send without waiting for a reply; false when the link is down. */
  send(msg) {
    if (!this.ready || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encodeMessage(msg));
    return true;
  }

  /**
   * Make the link name the room `handlers.room()` names now: unless its socket's URL does
   * already, it is closed and another opened at once (the server and its proxy send each
   * connection to the process of the room its URL names). Resolves at the new welcome.
   */
  reroute() {
    const room = this.handlers.room?.() || null;
    if (this.stopped || !this.ws || this.socketRoom === room) return this.whenReady();
    this.rerouted = true;
    this._reopen();
    return this.whenReady();
  }

  /** Resolves at the next welcome (at once when the link is up). */
  whenReady() {
    if (this.ready && this.ws?.readyState === WebSocket.OPEN) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /**
   * Send with an `id` and resolve with the reply carrying that `ref` (error replies too).
   * With `wait`, a request made while the link is down waits for it to come up (what a person
   * pressing Create expects); without, it fails at once (a move must not land later).
   */
  request(msg, { wait = false } = {}) {
    return new Promise((resolve, reject) => this._ask({ msg, wait, resolve, reject, attempt: 0 }));
  }

  /** Send one try of a request (a retry gets a new id: a late reply to the old one is not its). */
  _ask(req) {
    if (!this.ready || this.ws.readyState !== WebSocket.OPEN) {
      if (req.wait && !this.stopped) this.whenReady().then(() => this._ask(req));
      else req.reject(new Error("not connected to the server"));
      return;
    }
    const id = ++this.seq;
    this.pending.set(id, req);
    this.ws.send(encodeMessage({ ...req.msg, id }));
  }

  /** A new socket now, the old one closed: its URL names the room the page is in by then
   * (a quick match's room: it reaches the process serving it). */
  reconnect() {
    this._reopen();
  }

  /** The socket closed on purpose and another opened: its requests fail ("connection
   * lost"), and its close is no loss to recover from (`_closed` ignores a replaced socket). */
  _reopen() {
    const old = this.ws;
    this.ws = null;
    this._linkLost();
    if (old) old.close(1000);
    this._open();
  }

  /** The link is down: not ready, no pings, every pending request failed. */
  _linkLost() {
    this.ready = false;
    clearInterval(this.pingTimer);
    for (const { reject } of this.pending.values()) reject(new Error("connection lost"));
    this.pending.clear();
  }

  /** Drop the socket as a network failure would (used by the page's own tests). */
  dropForTest() {
    if (this.ws) this.ws.close(4000, "test drop");
  }
}
