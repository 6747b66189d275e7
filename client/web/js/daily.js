// Daily races: the landing page's cards, a daily's board, and the player's rank after a race.
// The server decides everything (which dailies exist, scored or practice, the order); this
// reads /api/daily (PROTOCOL.md, Daily races) and words it.

import { h } from "./dom.js";
import { formatTime, plural } from "./text.js";

/** What this page knows of the dailies: today's list, the boards it looked at, which board is open. */
export function dailyState() {
  return { list: null, boards: {}, open: null };
}

async function getJson(path) {
  const r = await fetch(path, { cache: "no-cache" });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

/** Today's dailies (with `played` for this player). */
export async function loadDailies(daily, player) {
  daily.list = await getJson(`/api/daily${player ? `?player=${player}` : ""}`);
  // the player's daily streak, for the cards (PROTOCOL.md, /api/player's streak)
  if (player) {
    try {
      daily.streak = (await getJson(`/api/player/${encodeURIComponent(player)}`)).streak || null;
    } catch {
      daily.streak = null; // no finished race yet (404), or an older server: no streak line
    }
  }
  return daily.list;
}

/** The landing cards' streak line: days in a row with a scored daily, while there is one. */
function streakLine(st) {
  if (!st || !st.current) return null;
  const keep = st.today ? "" : " · play one today to keep it";
  return h("p.streak", { dataset: { testid: "daily-streak" } },
    h("b", `Your streak: ${plural(st.current, "day")} in a row`), keep);
}

/** A daily's top 10 and the player's own entry. */
export async function loadBoard(daily, id, player) {
  const board = await getJson(`/api/daily/${id}?count=10${player ? `&player=${player}` : ""}`);
  daily.boards[id] = board;
  return board;
}

export function liveText(x) {
  return `${x.racing} racing now · ${x.finished} finished`;
}

const STATUS = { won: "won", dead: "stuck", resigned: "resigned", timeout: "timed out", left: "left", racing: "racing" };

function boardRow(e, player) {
  const result = e.status === "won" ? formatTime(e.time) : `${STATUS[e.status] || e.status} ${Math.round((e.progress || 0) * 100)}%`;
  return h(`tr.${e.player === player ? "me" : "other"}`, { dataset: { player: e.player } },
    h("td", String(e.rank)), h("td.name", h("a", { href: `/player/${encodeURIComponent(e.player)}` }, e.name)), h("td", result), h("td.col-moves", String(e.moves ?? "")));
}

/** A daily's board: the top 10, and the player's own entry when it is further down. */
export function boardTable(board, player) {
  if (!board) return h("p.muted", "Loading the board…");
  if (!board.entries.length) return h("p.muted", "Nobody has finished yet: be the first.");
  const rows = board.entries.map((e) => boardRow(e, player));
  const you = board.you;
  if (you && you.rank > board.entries.length) rows.push(h("tr.gap", h("td", { colspan: "4" }, "…")), boardRow(you, player));
  return h("table.daily-board", { dataset: { testid: "daily-board" } }, h("tbody", rows));
}

/** One card per game on the landing page: the live figures, Play (or Practice), the board. */
export function dailyCards(state, daily) {
  const list = daily.list;
  if (!list) return null;
  return h("section.panel.dailies", { dataset: { testid: "dailies" } },
    h("div.panel-head", h("h2", `Today's dailies · ${list.date}`)),
    h("p.muted", "One deal per game for everyone today, alone against the clock. Your first go counts on the board; practice plays yesterday's deal."),
    streakLine(daily.streak),
    h("div.daily-cards", list.dailies.map((x) => h("article.daily-card", { dataset: { game: x.game, testid: `daily-${x.game}` } },
      h("h3", x.title),
      h("p.live", { dataset: { testid: "daily-live" } }, liveText(x)),
      h("div.actions",
        x.played
          ? h("button", { dataset: { action: "daily-play", game: x.game, practice: "1" } }, "Practice")
          : h("button.primary", { dataset: { action: "daily-play", game: x.game } }, "Play"),
        h("button.small.ghost", { dataset: { action: "daily-board", id: x.id }, "aria-expanded": String(daily.open === x.id) }, "Board"),
        h("a.small", { href: `/daily/${x.id}`, dataset: { testid: "daily-page" } }, "Full board")),
      daily.open === x.id ? boardTable(daily.boards[x.id], state.player) : null))));
}

/** What an attempt is, in words: practice names the past day whose deal it plays. */
export function attemptText(info) {
  if (info.scored) return "Scored: your first go today.";
  return `Practice on the daily of ${info.date}: not on the board.`;
}

/** Beside a daily race: which daily, how many race it now, its board. */
export function dailyPanel(state, daily) {
  const info = state.snap?.daily;
  if (!info) return null;
  const board = daily.boards[info.id];
  return h("section.panel.daily-race", { dataset: { testid: "daily-race" } },
    h("h2", `Daily · ${info.date}`),
    h("p.muted", { dataset: { testid: "daily-kind" } }, attemptText(info)),
    board ? h("p.live", { dataset: { testid: "daily-live" } }, liveText(board)) : null,
    boardTable(board, state.player));
}

/** The results screen's line: the player's rank on the daily's board. */
export function dailyRank(state, daily) {
  const info = state.snap?.daily;
  if (!info) return null;
  if (!info.scored) return h("p.daily-rank", { dataset: { testid: "daily-rank" } }, attemptText(info));
  const you = daily.boards[info.id]?.you;
  const text = you && you.status !== "racing"
    ? `Daily board: #${you.rank} of ${plural(daily.boards[info.id].total, "player")}.`
    : "Daily board: placing you…";
  return h("p.daily-rank", { dataset: { testid: "daily-rank" } }, text);
}
