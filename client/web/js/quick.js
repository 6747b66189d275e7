// Quick match on the landing page: a "Race now" button per game, and the waiting state with
// its Cancel. The server pairs and makes the room (PROTOCOL.md, Quick match); this only asks,
// shows the wait, and hands app.js the seat `matched` names.

import { h } from "./dom.js";

/** What the page knows of its quick-match request: null, or {game, rating, since, matched}. */
export function quickState() {
  return null;
}

function waited(since, now) {
  const s = Math.max(0, Math.floor((now - since) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The wait in words: looking (the server pairs by rating), or matched and joining. */
export function waitingText(q, title, now) {
  if (q.matched) {
    const others = q.matched.players.filter((_, i) => i !== q.matched.seat);
    return `Matched with ${others.join(", ") || "another player"}: joining the race…`;
  }
  if (q.rating == null) return `Asking for a ${title} race…`;
  return `Looking for ${title} players near your rating · ${waited(q.since, now)}`;
}

/** The waiting line as the page's clock redraws it (app.js `tick`), or null. */
export function quickText(state, ui, now = Date.now()) {
  const q = ui.quick;
  if (!q) return null;
  return waitingText(q, (state.games || []).find((g) => g.id === q.game)?.title || q.game, now);
}

/** The landing page's panel: one Race now per game, or the wait with a Cancel. */
export function quickPanel(state, ui, now = Date.now()) {
  const games = state.games || [];
  if (!games.length) return null;
  const q = ui.quick;
  const title = (id) => games.find((g) => g.id === id)?.title || id;
  return h("section.panel.quick", { dataset: { testid: "quick" } },
    h("div.panel-head", h("h2", "Race now")),
    q
      ? h("div.quick-wait", { role: "status", "aria-live": "polite", dataset: { testid: "quick-waiting" } },
        h("span.spinner", { "aria-hidden": "true" }),
        h("p", { dataset: { clock: "quick" } }, waitingText(q, title(q.game), now)),
        q.matched ? null : h("button", { dataset: { action: "quick-cancel" } }, "Cancel"))
      : [
        h("p.muted", "Race whoever is waiting now, paired by rating: rated, same deal for everyone."),
        h("div.quick-games", games.map((g) => h("button.primary", {
          dataset: { action: "quick", game: g.id, testid: `quick-${g.id}` },
          "aria-label": `Race now: ${g.title}`,
        }, g.title))),
      ]);
}
