// The pages one browses: the all-time leaderboards per game (/leaderboard/GAME/KIND: rating,
// wins, best time), a daily's board (/daily/DATE/GAME), the archive of past dailies to
// practise (/dailies) and how ratings work (/ratings). All from the server's JSON
// (PROTOCOL.md: /api/leaderboard, /api/daily); every name links to its player's page.

import { h } from "./dom.js";
import { STATUS_TEXT, formatTime, plural } from "./text.js";
import { fetchJson, pageError, pageHeader } from "./pages.js";

const KINDS = [["rating", "Rating"], ["wins", "Wins"], ["time", "Best time"]];
const GAMES = ["klondike", "tabbycat", "manx", "puttputt", "leapyear"]; // until the answer names them
const PAGE = 50;

function frame(root, title, ...body) {
  document.title = `solrace — ${title}`;
  root.replaceChildren(h("div.app.browse-page", pageHeader(), ...body));
}

const playerLink = (e) => h("a", { href: `/player/${encodeURIComponent(e.player)}`, dataset: { testid: "player-link" } }, e.name || "anonymous");

function startParam() {
  const n = Number(new URLSearchParams(location.search).get("start") || 0);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

function pager(page, base) {
  const start = page.entries.length ? page.entries[0].rank - 1 : 0;
  return h("p.pager",
    start > 0 ? h("a", { href: `${base}?start=${Math.max(0, start - PAGE)}` }, "← Higher") : null,
    start > 0 && page.next != null ? " · " : null,
    page.next != null ? h("a", { href: `${base}?start=${page.next}` }, "Lower →") : null);
}

// ---- /leaderboard/GAME/KIND --------------------------------------------------------------

export async function start(root, game, kind) {
  game = game || "klondike";
  kind = KINDS.some(([k]) => k === kind) ? kind : "rating";
  frame(root, "Leaderboards", h("main.board-page", h("p.boot", "Loading…")));
  const got = await fetchJson(`/api/leaderboard/${encodeURIComponent(game)}/${kind}?start=${startParam()}&count=${PAGE}`);
  if (!got.ok) return frame(root, "Leaderboards", pageError(got, "leaderboard"));
  const titles = got.body.titles || {};
  frame(root, `${titles[game] || game} leaderboard`, leaderboardPage(got.body, titles));
}

/** The page for a leaderboard's JSON (pure: the browser tests check what it draws). */
export function leaderboardPage(page, titles) {
  const { game, kind } = page;
  const games = Object.keys(titles).length ? Object.keys(titles) : GAMES;
  const kindName = KINDS.find(([k]) => k === kind)?.[1] || kind;
  return h("main.board-page", { dataset: { testid: "leaderboard", game, kind } },
    h("section.panel",
      h("h1", `${titles[game] || game}: ${kindName.toLowerCase()}`),
      h("nav.tabs", { "aria-label": "Game" }, games.map((g) => h("a", { href: `/leaderboard/${g}/${kind}`, "aria-current": g === game ? "page" : null }, titles[g] || g))),
      h("nav.tabs", { "aria-label": "Board" }, KINDS.map(([k, text]) => h("a", { href: `/leaderboard/${game}/${k}`, "aria-current": k === kind ? "page" : null }, text))),
      h("p.muted", kind === "rating"
        ? ["Established players of rated races (provisional ratings are not listed yet). ", h("a", { href: "/ratings" }, "How ratings work")]
        : kind === "wins" ? "Races won, all time, with the game's default rules." : "The fastest won deals, all time, with the game's default rules (then fewest moves)."),
      page.entries.length ? boardTable(page) : h("p.muted", { dataset: { testid: "board-empty" } }, "Nobody on this board yet."),
      pager(page, `/leaderboard/${game}/${kind}`)));
}

function boardTable(page) {
  const head = { rating: ["Rating", "Races"], wins: ["Wins"], time: ["Time", "Moves", "Race"] }[page.kind];
  return h("table.leaderboard", { dataset: { testid: "board-table" } },
    h("thead", h("tr", h("th.num", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      head.map((t, i) => h(`th${i ? ".col-extra" : ""}${t === "Race" ? "" : ".num"}`, { scope: "col" }, t)))),
    h("tbody", page.entries.map((e) => h("tr", { dataset: { player: e.player } },
      h("td.num", String(e.rank)),
      h("td", playerLink(e), e.bot ? h("span.chip", "bot") : null),
      page.kind === "rating" ? [h("td.num", String(e.rating ?? Math.round(e.ordinal))), h("td.num.col-extra", String(e.rated ?? ""))]
        : page.kind === "wins" ? h("td.num", String(-e.score))
          : [h("td.num", formatTime(e.time)), h("td.num.col-extra", String(e.moves ?? "")),
            h("td.col-extra", e.record ? h("a", { href: `/replay/${e.record}` }, "Replay") : "")]))));
}

// ---- /daily/DATE/GAME ----------------------------------------------------------------------

export async function startDaily(root, date, game) {
  frame(root, `Daily ${date}`, h("main.board-page", h("p.boot", "Loading…")));
  const got = await fetchJson(`/api/daily/${date}/${encodeURIComponent(game)}?start=${startParam()}&count=${PAGE}`);
  if (!got.ok) return frame(root, "Daily", pageError(got, "daily"));
  frame(root, `Daily ${date} · ${game}`, dailyBoardPage(got.body, todayUtc()));
}

const todayUtc = () => new Date().toISOString().slice(0, 10);

export function dailyBoardPage(board, today) {
  const past = board.date < today;
  return h("main.board-page", { dataset: { testid: "daily-board-page" } },
    h("section.panel",
      h("h1", `Daily · ${board.date} · ${board.game}`),
      h("p.muted", `${board.racing} racing now · ${board.finished} finished · ${plural(board.total, "player")}`),
      h("p", past
        ? h("a", { href: `/?practice=${board.date}/${board.game}`, dataset: { testid: "practise-link" } }, "Practise this deal (not on the board)")
        : h("a", { href: "/" }, "Play today's dailies")),
      board.entries.length
        ? h("table.leaderboard", { dataset: { testid: "board-table" } },
          h("thead", h("tr", h("th.num", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Result"), h("th.num.col-extra", { scope: "col" }, "Moves"))),
          h("tbody", board.entries.map((e) => h("tr", { dataset: { player: e.player } },
            h("td.num", String(e.rank)), h("td", playerLink(e)),
            h("td", e.status === "won" ? formatTime(e.time) : `${STATUS_TEXT[e.status] || e.status} ${Math.round((e.progress || 0) * 100)}%`),
            h("td.num.col-extra", String(e.moves ?? ""))))))
        : h("p.muted", "Nobody has played it yet."),
      pager(board, `/daily/${board.date}/${board.game}`)));
}

// ---- /dailies ------------------------------------------------------------------------------

export async function startArchive(root) {
  frame(root, "Past dailies", h("main.board-page", h("p.boot", "Loading…")));
  const got = await fetchJson("/api/daily/archive");
  if (!got.ok) return frame(root, "Past dailies", pageError(got, "archive"));
  frame(root, "Past dailies", archivePage(got.body));
}

export function archivePage(archive) {
  return h("main.board-page", { dataset: { testid: "archive" } },
    h("section.panel",
      h("h1", "Past dailies"),
      h("p.muted", "Every past day's deal, to practise as often as you like (practice is never on a board). Today's dailies are on the landing page."),
      archive.days.length
        ? h("table.leaderboard",
          h("thead", h("tr", h("th", { scope: "col" }, "Day"), h("th", { scope: "col" }, "Game"), h("th.num.col-extra", { scope: "col" }, "Players"), h("th", { scope: "col" }, ""))),
          h("tbody", archive.days.flatMap((d) => d.dailies.map((x) => h("tr", { dataset: { daily: x.id } },
            h("td", d.date), h("td", h("a", { href: `/daily/${x.id}` }, x.title)),
            h("td.num.col-extra", String(x.players)),
            h("td", h("a", { href: `/?practice=${x.id}`, dataset: { testid: "practise-link" } }, "Practise")))))))
        : h("p.muted", "No past dailies yet.")));
}

// ---- /ratings ------------------------------------------------------------------------------

export function startRatingsHelp(root) {
  frame(root, "How ratings work", ratingsHelp());
}

/** How ratings work, in short (the rules: docs/LEADERBOARDS.md). */
export function ratingsHelp() {
  return h("main.info-page", { dataset: { testid: "ratings-help" } },
    h("section.panel",
      h("h1", "How ratings work"),
      h("p", "A room whose host ticks “Rated” moves its players' ratings when the race ends, by finishing place: ",
        "beating stronger players gains more, losing to weaker ones costs more. Each game has its own rating."),
      h("ul",
        h("li", "Everyone starts at ", h("b", "1000"), ". The rating shown is a cautious estimate (openskill's μ − 3σ, scaled): ",
          "it rises while the system learns your level, then moves by your results."),
        h("li", "A ", h("b", "?"), " after a rating (1040?) means ", h("b", "provisional"),
          ": fewer than 10 rated races or fewer than 5 established opponents met. Provisional players are not on the leaderboard yet."),
        h("li", "Beating a provisional player counts for nothing (a fresh name cannot be farmed); losing to one still costs."),
        h("li", "Bots are rated against bots, people against people, unless the room rates them together."),
        h("li", "After a rated race the results show each change (+12, −8)."),
        h("li", "Wins and best times count every keyed race except practice and deals from a chosen seed.")),
      h("p", h("a", { href: "/leaderboard" }, "Leaderboards"), " · ", h("a", { href: "/" }, "Race"))));
}
