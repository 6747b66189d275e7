// The WebSocket link to the server: msgpack binary frames, the hello handshake, request ids,
// an application ping (browsers cannot send WebSocket pings) and reconnection with backoff.
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

/**
 * The WebSocket URL naming the room this page is in (or about to join, resume or watch):
 * the server routes every connection of a room to the process serving it by this code
 * (`solrace serve --workers N`, or a proxy hashing it). Without one any process serves it.
 */
export function urlWithRoom(url, room) {
  if (!room) return url;
  return `${url}${url.includes("?") ? "&" : "?"}room=${encodeURIComponent(room)}`;
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
    const ws = new WebSocket(urlWithRoom(this.url, this.handlers.room?.()));
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
      this.handlers.onReady?.(msg);
      for (const resolve of this.readyWaiters.splice(0)) resolve();
      return;
    }
    if (msg.ref != null && this.pending.has(msg.ref)) {
      const { resolve } = this.pending.get(msg.ref);
      this.pending.delete(msg.ref);
      resolve(msg);
    }
    if (msg.type !== "pong") this.handlers.onMessage?.(msg);
  }

  _closed(ws) {
    if (ws !== this.ws) return;
    this.ready = false;
    clearInterval(this.pingTimer);
    for (const { reject } of this.pending.values()) reject(new Error("connection lost"));
    this.pending.clear();
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
    if (!this.ready || this.ws.readyState !== WebSocket.OPEN) {
      if (wait && !this.stopped) return this.whenReady().then(() => this.request(msg, { wait }));
      return Promise.reject(new Error("not connected to the server"));
    }
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(encodeMessage({ ...msg, id }));
    });
  }

  /** Drop the socket as a network failure would (used by the page's own tests). */
  dropForTest() {
    if (this.ws) this.ws.close(4000, "test drop");
  }
}
