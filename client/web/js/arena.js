// Arenas (PROTOCOL.md, Arena): the landing page's Arena card (create one, or join by its id),
// the member's live leaderboard while racing in it, and the event pages /event/ID (the
// standings and every race, with its record) and /broadcast/event/ID (the leaderboard large,
// for a stream). The server pairs, scores and moves members between rooms; this only shows
// what it pushes (`arena`) and asks (`arena_create`, `arena_join`, `arena_leave`).

import { h } from "./dom.js";
import { Connection } from "./net.js";

const ARENA_KEY = "solrace.arena";

/** The arena this tab takes part in (kept over reloads), or null. */
export function loadArena() {
  try {
    return JSON.parse(sessionStorage.getItem(ARENA_KEY) || "null");
  } catch {
    return null;
  }
}

export function saveArena(a) {
  if (a) sessionStorage.setItem(ARENA_KEY, JSON.stringify({ id: a.id, paused: Boolean(a.paused) }));
  else sessionStorage.removeItem(ARENA_KEY);
}

/** An arena id as typed or pasted (a link to its page works too). */
export function arenaIdFrom(text) {
  const m = String(text || "").trim().match(/([a-z0-9]{6,32})\/?$/i);
  return m ? m[1].toLowerCase() : null;
}

/** "12:34 left", "ended", from the arena's end and the clock. */
export function timeLeft(view, now = Date.now()) {
  if (!view) return "";
  if (view.state !== "running") return view.running ? `ended · ${view.running} still racing` : "ended";
  const s = Math.max(0, Math.round((view.ends_at - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left`;
}

/** The leaderboard as a table: rank, name (bot, on fire), score, recent points, races. */
export function leaderboardTable(view, me = null, { limit = 50, big = false } = {}) {
  const rows = (view?.standings || []).slice(0, limit);
  if (!rows.length) return h("p.muted", "Nobody has joined yet.");
  return h(`table.arena-board${big ? ".big" : ""}`, { dataset: { testid: "arena-board" } },
    h("caption.sr-only", "Arena standings"),
    h("thead", h("tr", h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      h("th", { scope: "col" }, "Points"), h("th", { scope: "col" }, "Recent"), h("th", { scope: "col" }, "Races"))),
    h("tbody", rows.map((r) => h(`tr${r.player === me ? ".me" : ""}`, { dataset: { player: r.player, score: String(r.score) } },
      h("td", String(r.rank)),
      h("td", r.name, r.bot ? h("span.chip", "bot") : null, r.fire ? h("span.chip.fire", { title: "On fire: two wins in a row, points doubled until a race is not a win" }, "on fire ×2") : null,
        r.paused ? h("span.chip", "paused") : null, r.racing ? h("span.chip", "racing") : null),
      h("td.num", h("b", String(r.score))),
      h("td.sheet", (r.sheet || []).slice(-8).join(" ")),
      h("td.num", `${r.wins}/${r.races}`)))));
}

/** The landing page's card: create an arena or join one; in one: its live leaderboard. */
export function arenaPanel(state, ui, now = Date.now()) {
  const games = state.games || [];
  const a = ui.arena;
  if (a && a.view) {
    const v = a.view;
    return h("section.panel.arena", { dataset: { testid: "arena" } },
      h("div.panel-head", h("h2", `Arena: ${v.title || v.id}`),
        h("span.muted", { dataset: { clock: "arena" } }, timeLeft(v, now))),
      h("p.muted", a.paused
        ? "Paused: you are not paired. Resume to race again; your points stay."
        : v.state === "running"
          ? "You race whoever is free, by score; after each race you are paired again by yourself."
          : "The arena is over."),
      leaderboardTable(v, state.player, { limit: 10 }),
      h("div.actions",
        v.state === "running"
          ? h("button", { dataset: { action: a.paused ? "arena-resume" : "arena-pause", testid: "arena-pause" } }, a.paused ? "Resume" : "Pause")
          : null,
        h("a", { href: `/event/${v.id}`, target: "_blank", rel: "noopener" }, "Event page"),
        h("a", { href: `/broadcast/event/${v.id}`, target: "_blank", rel: "noopener" }, "Broadcast view"),
        h("button.ghost", { dataset: { action: "arena-close" } }, "Close")));
  }
  if (!games.length) return null;
  const f = ui.form;
  return h("section.panel.arena", { dataset: { testid: "arena" } },
    h("div.panel-head", h("h2", "Arena")),
    h("p.muted", "A timed event: race after race on fresh deals, paired by score, points for each place (4, 2, 1), double after two wins in a row."),
    h("div.arena-create",
      h("label", "Game ",
        h("select", { dataset: { form: "arenaGame", testid: "arena-game" }, "aria-label": "Arena game" },
          games.map((g) => h("option", { value: g.id, selected: (f.arenaGame || games[0].id) === g.id }, g.title)))),
      h("label", "Minutes ", h("input", { type: "number", min: "1", max: "240", value: f.arenaMinutes || "30", dataset: { form: "arenaMinutes", testid: "arena-minutes" } })),
      h("label", "Room size ", h("input", { type: "number", min: "2", max: "8", value: f.arenaSize || "4", dataset: { form: "arenaSize", testid: "arena-size" } })),
      h("button.primary", { dataset: { action: "arena-create", testid: "arena-create" } }, "Create an arena")),
    h("div.join-row",
      h("input", { value: f.arenaId || "", placeholder: "Arena id or link", "aria-label": "Arena id or link", maxlength: "80", dataset: { form: "arenaId", testid: "arena-id" } }),
      h("button.primary", { dataset: { action: "arena-join", testid: "arena-join" } }, "Join")));
}

/** While racing in an arena: a strip under the race with the top of the leaderboard. */
export function arenaStrip(state, ui, now = Date.now()) {
  const v = ui.arena?.view;
  if (!v) return null;
  return h("section.panel.arena-strip", { dataset: { testid: "arena-strip" }, "aria-label": "Arena standings" },
    h("div.panel-head", h("h2", `Arena: ${v.title || v.id}`), h("span.muted", { dataset: { clock: "arena" } }, timeLeft(v, now))),
    leaderboardTable(v, state.player, { limit: 5 }),
    h("p.muted", v.state === "running" ? "Your next race starts by itself after this one." : "The arena is over."));
}

// ---- the event pages (page.html: /event/ID, /broadcast/event/ID) ------------------------

function racesList(full) {
  const races = full?.race_list || [];
  if (!races.length) return null;
  const names = new Map((full.standings || []).map((r) => [r.player, r.name]));
  return h("section.panel", h("h2", `Races (${races.length})`),
    h("p.muted", "Each race's record is signed; the points replay from them in this order."),
    h("ol.arena-races", races.map((r) => h("li",
      h("a", { href: `/replay/${r.record}` }, `Race ${r.record}`), " · ",
      r.ranking.map((s) => `${s.place}. ${names.get(s.player) || s.name} +${r.points?.[s.player] ?? 0}`).join(", "),
      " · ", h("a", { href: `/api/record/${r.record}` }, "record")))));
}

export async function startEventPage(root, id, { broadcast = false, search = location.search } = {}) {
  const params = new URLSearchParams(search);
  if (broadcast) {
    document.documentElement.classList.add("broadcast-page");
    if (["1", "true", "yes"].includes(params.get("transparent") || "")) document.documentElement.classList.add("transparent");
  }
  let view = null;
  let full = null;
  let missing = false;
  const draw = () => {
    document.title = `${view?.title || "Arena"} · solrace`;
    if (missing) {
      root.replaceChildren(h("main.page", h("h1", "No such arena"), h("p", "Its results may have expired (they are kept 7 days)."), h("a", { href: "/" }, "solrace")));
      return;
    }
    if (!view) return;
    const head = h("header.bc-head",
      h("span.logo", "sol", h("b", "race")),
      h("h1.bc-title", view.title || "Arena"),
      h("span.bc-round", `${view.members} players · ${view.races} races`),
      h("span.bc-clock", { dataset: { clock: "arena" } }, timeLeft(view)));
    if (broadcast) {
      root.replaceChildren(h("main.broadcast.arena-broadcast", head,
        h("section.bc-progress", leaderboardTable(view, null, { limit: Number(params.get("rows")) || 12, big: true }))));
    } else {
      root.replaceChildren(h("main.page.arena-page", head,
        h("section.panel",
          h("p", `${view.game} · rooms of up to ${view.max_players} · hosted by ${view.host_name || "a player"} · `,
            view.state === "running" ? h("a", { href: `/?arena=${view.id}` }, "Join this arena") : "final standings",
            " · ", h("a", { href: `/broadcast/event/${view.id}` }, "broadcast view"),
            " · ", h("a", { href: `/api/event/${view.id}` }, "JSON")),
          h("h2", "Standings"), leaderboardTable(full && view.state !== "running" ? full : view, null, { limit: 500 })),
        racesList(full)));
    }
  };
  async function fetchFull() {
    try {
      const res = await fetch(`/api/event/${encodeURIComponent(id)}`);
      if (res.status === 404) missing = true;
      else if (res.ok) {
        full = await res.json();
        view = view && view.version > full.version ? view : full;
      }
    } catch { /* offline: the pushes still come */ }
    draw();
  }
  const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  const conn = new Connection(wsUrl, {
    onStatus() {},
    onMessage(msg) {
      if (msg.type !== "arena") return;
      const ended = view && view.state === "running" && msg.arena.state !== "running";
      view = msg.arena;
      draw();
      if (ended || (msg.arena.state !== "running" && !msg.arena.running && full?.races !== msg.arena.races)) fetchFull();
    },
    async onReady() {
      try {
        await conn.request({ type: "arena_watch", arena: id });
      } catch { /* gone: the fetch says so */ }
    },
  });
  window.solrace = { get view() { return view; }, conn };
  await fetchFull();
  if (!missing) conn.start();
  setInterval(() => {
    const el = root.querySelector("[data-clock=arena]");
    if (el && view) el.textContent = timeLeft(view);
  }, 1000);
}
