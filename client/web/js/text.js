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

/** The longest name the server takes, in user-perceived characters (protocol/names.py). */
export const NAME_MAX = 24;
/** Its bound in code points on the wire (protocol/messages.py NAME_CODE_POINTS). */
export const NAME_CODE_POINTS = 384;
/** The most code points one character may hold (names.py CLUSTER_MAX). */
export const CLUSTER_MAX = 16;

/** A text's user-perceived characters: 👩‍👩‍👧‍👦 is one, as the server counts them. */
export function graphemes(text) {
  if (typeof Intl !== "undefined" && Intl.Segmenter) {
    return Array.from(new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text), (s) => s.segment);
  }
  return Array.from(text); // an old browser: code points (the server may then refuse a long one)
}

/** The name field's text cut to what the server takes: NAME_MAX characters of at most CLUSTER_MAX code points. */
export function fitName(text) {
  const parts = graphemes(text).slice(0, NAME_MAX).map((c) => (Array.from(c).length > CLUSTER_MAX ? Array.from(c).slice(0, CLUSTER_MAX).join("") : c));
  const out = parts.join("");
  return out === text ? text : out;
}
