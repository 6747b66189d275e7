// A player's page at /player/ID: the name, per game figures (when the server has them), and
// the newest races, each linking to its replay. All of it from GET /api/player/ID.

import { h } from "./dom.js";
import { STATUS_TEXT, formatTime, plural } from "./text.js";
import { fetchJson, pageError, pageHeader, placeText } from "./pages.js";

export async function start(root, id) {
  root.replaceChildren(h("div.app.player-page", pageHeader(), h("p.boot", "Loading…")));
  const got = await fetchJson(`/api/player/${encodeURIComponent(id)}`);
  if (got.ok) document.title = `solrace — ${got.body.name || "a player"}`;
  root.replaceChildren(h("div.app.player-page", pageHeader(),
    got.ok ? playerPage(got.body) : pageError(got, "player")));
}

const titleOf = (page, game) => page.titles?.[game] || game;

/** The page for a player's JSON (pure: the browser tests check what it draws). */
export function playerPage(page) {
  const races = page.races || [];
  return h("main.player",
    h("section.panel.player-head",
      h("h1", { dataset: { testid: "player-name" } }, page.name || "anonymous"),
      h("p.muted", plural(page.total ?? races.length, "race"))),
    page.streak ? streakPanel(page.streak) : null,
    page.games && Object.keys(page.games).length ? gamesPanel(page) : null,
    h("section.panel.player-races",
      h("h2", "Newest races"),
      races.length
        ? h("table.races", h("thead", h("tr", ["When", "Game", "Place", "Result", "Time", "Moves", ""].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", races.map((r) => h("tr", { dataset: { race: r.id } },
            h("td", new Date(r.finished_at).toLocaleString()),
            h("td", titleOf(page, r.game)),
            h("td", `${placeText(r.place)} of ${r.players}`),
            h("td", STATUS_TEXT[r.status] || r.status || ""),
            h("td.time", formatTime(r.time)),
            h("td", String(r.moves ?? "")),
            h("td.act", h("a", { href: `/replay/${r.id}`, dataset: { testid: "replay-link" } }, "Replay"))))))
        : h("p.muted", "No races yet.")));
}

/** Daily streak: days in a row with a scored daily (PROTOCOL.md, /api/player's streak). */
function streakPanel(st) {
  const text = st.current
    ? `${plural(st.current, "day")} in a row${st.today ? "" : " (play today's daily to keep it)"}`
    : "No daily streak right now.";
  return h("section.panel.player-streak", { dataset: { testid: "streak", current: String(st.current) } },
    h("h2", "Daily streak"),
    h("p", h("b", text)),
    h("p.muted", `Best: ${plural(st.best, "day")} · ${plural(st.days.length, "daily day")} in the last month. `,
      h("a", { href: "/dailies" }, "Past dailies")));
}

/** Races, wins, best time and rating per game. */
function gamesPanel(page) {
  const rows = Object.entries(page.games);
  return h("section.panel.player-games", { dataset: { testid: "player-games" } },
    h("h2", "By game"),
    h("table.games", h("thead", h("tr", ["Game", "Races", "Wins", "Best time", "Rating"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", rows.map(([game, g]) => h("tr", { dataset: { game } },
        h("td", titleOf(page, game)),
        h("td", String(g.races ?? 0)),
        h("td", String(g.wins ?? 0)),
        h("td.time", formatTime(g.best_time)),
        h("td.rating", ratingText(g)))))),
    h("p.muted", h("a", { href: "/ratings" }, "How ratings work"), " · ", h("a", { href: "/leaderboard" }, "Leaderboards")));
}

function ratingText(g) {
  const r = g.rating;
  if (!r) return "–";
  const rated = g.rated != null ? ` (${plural(g.rated, "rated race")})` : "";
  // provisional (not on the rating board yet: docs/LEADERBOARDS.md): shown with "?", as lichess does
  const mark = r.provisional ? "?" : "";
  const title = `μ ${r.mu.toFixed(1)}, σ ${r.sigma.toFixed(1)}${r.provisional ? ", provisional" : ""}`;
  // the rating as shown everywhere (the server's: 1000 + 40 x ordinal); older answers had none
  const shown = r.rating ?? Math.round(1000 + 40 * r.ordinal);
  return h("span", { title }, `${shown}${mark}${rated}`);
}
