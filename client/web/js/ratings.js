// Ratings beside names (room lobby, race, results): the server's /api/ratings/GAME answer for
// the room's players, kept here; after a rated race it is asked again until every rated
// player's latest race is this one, and the change it made is shown ("+12", "−8").
// How ratings work, in words: /ratings (ratings-help.js).

import { h } from "./dom.js";

const store = { key: null, game: null, players: {}, asking: null, record: null, tries: 0 };
export const ratingsStore = store; // for the tests

/** A player's shown rating in the room's game: "1043", "1000?" (provisional); null: none. */
export function ratingText(r) {
  if (!r) return null;
  return `${r.rating}${r.provisional ? "?" : ""}`;
}

/** "+12", "−8", "±0". */
export function changeText(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${-n}`;
  return "±0";
}

/** The chip beside a name (nothing for a player without an id or a rating). */
export function ratingChip(player) {
  const r = player && store.players[player];
  if (!r) return null;
  const title = r.provisional
    ? `rating ${r.rating}, provisional (${r.rated} rated races): see How ratings work`
    : `rating ${r.rating} (${r.rated} rated races)`;
  return h("span.rating", { title, dataset: { testid: "rating", player } }, ratingText(r));
}

/** The change a finished rated race made to the player's rating (once the server has it). */
export function changeChip(player, record) {
  const r = player && store.players[player];
  if (!r || !record || r.last?.race !== record) return null;
  const n = r.last.change;
  return h(`span.rating-change.${n > 0 ? "up" : n < 0 ? "down" : "same"}`, { dataset: { testid: "rating-change" } }, changeText(n));
}

/** Ask the server for the room's players' ratings when the game or the players change, and
 * after a rated race until its changes are in. `done()` redraws. */
export function refreshRatings(snap, done) {
  const ids = [...new Set((snap?.players || []).map((p) => p.player).filter(Boolean))].sort();
  const game = snap?.options?.game;
  if (!game || !ids.length) return;
  const record = snap.options?.rated && snap.state === "finished" ? snap.results?.record || null : null;
  const key = `${game}|${ids.join(",")}`;
  const settled = !record || ids.every((id) => !store.players[id] || store.players[id].last?.race === record)
    && ids.some((id) => store.players[id]?.last?.race === record);
  if (key === store.key && record === store.record && (settled || store.tries >= 8)) return;
  if (store.asking) return;
  if (key !== store.key || record !== store.record) store.tries = 0;
  const wait = store.key === key && record && store.tries ? 700 : 0; // ratings land just after the results
  store.asking = setTimeout(async () => {
    try {
      const res = await fetch(`/api/ratings/${encodeURIComponent(game)}?players=${ids.join(",")}`);
      if (res.ok) {
        const body = await res.json();
        store.players = body.players || {};
      }
    } catch { /* offline: names go without ratings */ }
    store.key = key;
    store.game = game;
    store.record = record;
    store.tries += 1;
    store.asking = null;
    done();
  }, wait);
}
