// One seat, one tab. The seat's token lives in sessionStorage so a reload keeps it, but a
// duplicated tab (or one opened from this one) copies sessionStorage too: without a check both
// tabs would play the same seat and neither would know. Tabs of one origin talk over a
// BroadcastChannel: before a tab resumes a seat it asks whether another tab holds it, and
// lets the player choose (play here, which tells the holder to let go, or watch). A reload is
// unaffected: the reloaded page is gone, and so is its hold on the seat.
//
// Where the browser has Web Locks (a secure context: https, or localhost), a tab that plays a
// seat holds a lock named after it, which the browser drops with the page: asking is then a
// lookup, with no wait. Elsewhere (plain http on a LAN) the holder answers on the channel, and
// a tab waits a moment for that answer before it resumes the seat.

const ASK_MS = 400; // without Web Locks: how long a tab waits for a holder's answer

/**
 * @param {{onTaken: Function}} handlers onTaken() runs when another tab takes this tab's seat.
 * @param {Function} makeChannel for tests: () => a BroadcastChannel-like object, or null.
 */
export function seatGuard(handlers, makeChannel = defaultChannel, locks = globalThis.navigator?.locks) {
  const tab = Math.random().toString(36).slice(2) + Date.now().toString(36);
  const channel = makeChannel();
  let held = null; // {room, token} of the seat this tab plays
  let unlock = null; // lets go of this tab's Web Lock
  const waiting = new Map(); // question id -> resolve
  const lockName = (room, token) => `solrace-seat:${room}:${token}`;

  function setHeld(next) {
    if (unlock) unlock();
    unlock = null;
    held = next;
    if (!next || !locks) return;
    const release = new Promise((resolve) => { unlock = resolve; });
    locks.request(lockName(next.room, next.token), () => release).catch(() => {});
  }

  const same = (m) => held && m.room === held.room && m.token === held.token;

  if (channel) {
    channel.onmessage = (e) => {
      const m = e.data || {};
      if (m.from === tab) return;
      if (m.type === "who" && same(m)) channel.postMessage({ type: "mine", to: m.from, ask: m.ask, from: tab });
      else if (m.type === "mine" && m.to === tab && waiting.has(m.ask)) waiting.get(m.ask)(true);
      else if (m.type === "take" && same(m)) {
        setHeld(null);
        handlers.onTaken?.();
      }
    };
  }

  return {
    /** This tab now plays the seat (after create, join or resume). */
    hold(room, token) {
      if (held && held.room === room && held.token === token) return;
      setHeld(room && token ? { room, token } : null);
    },
    release() {
      setHeld(null);
    },
    get held() {
      return held;
    },
    /** Whether another open tab plays this seat; false without BroadcastChannel. */
    async heldElsewhere(room, token) {
      if (!token) return false;
      if (locks) {
        const { held: taken = [] } = await locks.query();
        return taken.some((l) => l.name === lockName(room, token));
      }
      if (!channel) return false;
      const ask = `${tab}:${Math.random()}`;
      return new Promise((resolve) => {
        const done = (answer) => {
          waiting.delete(ask);
          resolve(answer);
        };
        waiting.set(ask, done);
        channel.postMessage({ type: "who", room, token, ask, from: tab });
        setTimeout(() => waiting.has(ask) && done(false), ASK_MS);
      });
    },
    /** Tell the tab that holds this seat to let go of it (this tab plays it from now on). */
    take(room, token) {
      channel?.postMessage({ type: "take", room, token, from: tab });
      setHeld({ room, token });
    },
  };
}

function defaultChannel() {
  return typeof BroadcastChannel === "function" ? new BroadcastChannel("solrace-seats") : null;
}
