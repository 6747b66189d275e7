// Words and numbers as every page writes them: a player's status, a time, a count.
// Their own module, so that the pages (room, daily, replay, player) share them without
// importing one another: render.js imports daily.js, so daily.js must not import render.js.

export const STATUS_TEXT = {
  waiting: "waiting", racing: "racing", won: "won", dead: "stuck", resigned: "resigned", timeout: "timed out", left: "left",
};

/** "1:05.3" from milliseconds; "–" for none. */
export function formatTime(ms) {
  if (ms == null || Number.isNaN(ms)) return "–";
  const total = Math.max(0, ms) / 1000;
  const m = Math.floor(total / 60);
  const s = total - m * 60;
  return `${m}:${s.toFixed(1).padStart(4, "0")}`;
}

/** "1 move", "4 moves". */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
