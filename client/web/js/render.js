// The page as a pure function of (state, ui, now): state is the server's truth as the
// reducer keeps it, ui is what only this page knows (selection, drag, form fields).
// Controls carry data-action / data-option; app.js wires them by event delegation.

import { h } from "./dom.js";
import { helpDialog } from "./help.js";
import { renderBoard } from "./board.js";
import { canUndo, gameInfo, gameTitle, isHost, me, rankedTime, serverNow } from "./state.js";
import { currentHint, hintText, verdictLines } from "./hint.js";
import { dailyCards, dailyPanel, dailyRank } from "./daily.js";
import { quickPanel } from "./quick.js";
import { arenaPanel, arenaStrip } from "./arena.js";
import { changeChip, ratingChip } from "./ratings.js";
import { identityPanel } from "./identity.js";
import { NAME_CODE_POINTS, NAME_MAX, STATUS_TEXT, formatTime, plural } from "./text.js";
import { roundText, seriesActive, seriesControls, standingsTable } from "./series.js";

// Games, their titles and their rule options come from the server's welcome; the page only
// words the options it knows (any other option shows its own name and values).
const OPTION_TEXT = {
  draw: { label: "Draw", choices: { 1: "one", 3: "three" } },
  moves: { label: "Moves", choices: { top: "top card only", build: "any run" } },
  passes: { label: "Passes (0 = ∞)" },
};

/** Text of every live clock, from state and the local time (app.js refreshes these often). */
export function clockTexts(state, now) {
  const snap = state.snap;
  if (!snap) return {};
  const t = serverNow(state, now);
  const out = {};
  if (snap.state === "countdown" && snap.starts_at) out.countdown = String(Math.max(0, Math.ceil((snap.starts_at - t) / 1000)));
  if ((snap.state === "racing" || snap.state === "countdown") && snap.starts_at) {
    out.elapsed = t < snap.starts_at ? "0:00.0" : formatTime(t - snap.starts_at);
  }
  if (snap.state === "finished") {
    // The race's length is the last ranked time, as the results table shows it.
    const rows = snap.results?.ranking || snap.players;
    const times = rows.map((p) => p.time).filter((x) => x != null);
    out.elapsed = times.length ? formatTime(Math.max(...times)) : null;
  }
  if (snap.state === "racing" && timeLimited(snap)) out.left = formatTime(snap.ends_at - t);
  if (snap.state === "racing") {
    for (const p of snap.players || []) {
      if (!p.connected && p.status === "racing") out[`grace-${p.seat}`] = graceText(state, p, t);
    }
  }
  return out;
}

/** A disconnected racer keeps the seat for the server's grace period (welcome's limits), then
 * counts as resigned: "resigns in 23 s" from the `connected` event's time. */
export function graceText(state, p, serverTime) {
  const grace = state.grace;
  if (grace == null) return "disconnected";
  if (p.offAt == null) return `disconnected · resigns within ${Math.round(grace)} s unless back`;
  // (clamped: the local estimate of server time may be a moment off)
  const left = Math.min(Math.round(grace), Math.max(0, Math.ceil((p.offAt + grace * 1000 - serverTime) / 1000)));
  return `disconnected · resigns in ${left} s`;
}

/** The toast when another player finishes: "Bob cleared the table in 1:05.3". */
export function finishText(p) {
  const name = p.name || `seat ${p.seat}`;
  const at = `${pct(p.progress)}`;
  switch (p.status) {
    case "won": return `${name} cleared the table in ${formatTime(p.time)}!`;
    case "dead": return `${name} is out of moves at ${at}.`;
    case "resigned": return `${name} resigned at ${at}.`;
    case "timeout": return `${name} ran out of time at ${at}.`;
    case "left": return `${name} left the race at ${at}.`;
    default: return `${name} finished at ${at}.`;
  }
}

function pct(p) {
  return `${Math.round((p || 0) * 100)}%`;
}

function header(state) {
  const dot = h(`span.conn.${state.conn}`, { title: `connection ${state.conn}`, dataset: { conn: state.conn } });
  return h("header.top",
    h("a.logo", { href: "./", dataset: { action: "home" } }, "sol", h("b", "race")),
    state.room ? h("span.room-chip", { title: state.room, dataset: { testid: "room-code" } }, state.room) : null,
    state.role === "spectator" ? h("span.chip", "spectating") : null,
    h("span.spacer"),
    state.player ? h("a.my-page", { href: `/player/${state.player}`, dataset: { testid: "my-page" }, title: "Your races" }, "My races") : null,
    dot);
}

function notice(state) {
  if (!state.notice) return null;
  return h(`div.notice.${state.notice.kind}`, { role: "alert", dataset: { testid: "notice", code: state.notice.code || "" } },
    h("span", state.notice.text),
    h("button.x", { dataset: { action: "dismiss" }, "aria-label": "dismiss" }, "×"));
}

// ---- home: create, join, public rooms -------------------------------------------------

const nameField = (ui) => h("label.field", h("span", "Your name"),
  h("input#name", { value: ui.form.name || "", maxlength: String(2 * NAME_CODE_POINTS), // UTF-16 units: the exact rule is fitName's (app.js)
    "aria-describedby": "name-rule", autocomplete: "nickname", placeholder: "e.g. Ann", dataset: { form: "name" } }),
  h("small#name-rule.muted", `Up to ${NAME_MAX} characters; emoji welcome.`));

const ROOM_STATE = { lobby: "waiting for players", countdown: "about to start", racing: "racing now", finished: "finished" };

/** A room link's page: who invites you to what, before you join (GET /api/room/CODE). */
function invitePanel(state, ui) {
  const inv = ui.invite;
  const info = inv.info;
  const racing = info && info.state !== "lobby";
  const full = info && info.players.length >= info.max_players;
  const title = info
    ? `${info.host || "Someone"} invites you to ${info.title}`
    : inv.missing ? "This room link leads nowhere" : "You are invited to a race";
  const facts = info ? [`${info.players.length}/${info.max_players} seated`, ROOM_STATE[info.state] || info.state,
    info.rated ? "rated" : null, info.time_limit ? `${Math.round(info.time_limit / 60)} min limit` : null].filter(Boolean).join(" · ") : null;
  return h("section.panel.hero.invite", { dataset: { testid: "invite", state: info?.state || (inv.missing ? "missing" : "loading") } },
    h("h1", title),
    h("p.lead", info ? facts : inv.missing ? "No such room (or it has ended): ask for a new link, or start your own from the landing page." : "Looking the room up…"),
    info && info.players.length ? h("p.muted", { dataset: { testid: "invite-players" } }, "Seated: ",
      info.players.map((p, i) => [i ? ", " : "", p.name, ratingChip(p.player)])) : null,
    inv.missing ? null : [nameField(ui),
      h("div.join-row",
        h("input#join-code", { value: ui.form.code || "", "aria-label": "Room code", readonly: true, dataset: { form: "code" } }),
        h(racing || full ? "button" : "button.primary", { dataset: { action: "join" }, disabled: Boolean(racing || full),
          title: racing ? "The race has started: watch it, or wait for the rematch" : full ? "Every seat is taken" : null }, "Join"),
        info && !info.spectators ? null : h(racing ? "button.primary" : "button", { dataset: { action: "spectate" } }, "Watch"))],
    h("p", h("a", { href: "/", dataset: { action: "landing" } }, "Not this room: to the landing page")));
}

/** Practice of an archived daily (`/?practice=DATE/GAME`, linked from /dailies). */
function practicePanel(state, ui) {
  const { date, game } = ui.practice;
  return h("section.panel.hero.practice", { dataset: { testid: "practice-past" } },
    h("h1", `Practise the ${gameTitle(state, game)} daily of ${date}`),
    h("p.lead", "The deal everyone raced that day, alone against the clock. Practice is never on a board."),
    nameField(ui),
    h("div.actions",
      h("button.primary", { dataset: { action: "practice-past" } }, "Play it"),
      h("a", { href: "/", dataset: { action: "landing" } }, "Not now")));
}

/** Public races going on now, to watch ("Live now"). */
function liveNow(state) {
  const live = (state.lobby || []).filter((r) => r.state === "racing" || r.state === "countdown");
  return h("section.panel.live-list", { dataset: { testid: "live-now" } },
    h("div.panel-head", h("h2", "Live now")),
    live.length
      ? h("ul", live.map((r) => h("li", { dataset: { room: r.room } },
        `${gameTitle(state, r.game)} · ${r.players} racing${r.rated ? " · rated" : ""}${r.spectators ? ` · ${r.spectators} watching` : ""} `,
        h("button.small", { dataset: { action: "watch-room", room: r.room } }, "Watch"))))
      : h("p.muted", "No public race right now. Start one and tick “public” to appear here."));
}

function homeScreen(state, ui) {
  const rooms = state.lobby || [];
  if (ui.invite) return h("main.home", invitePanel(state, ui));
  return h("main.home",
    quickPanel(state, ui),
    arenaPanel(state, ui),
    ui.practice ? practicePanel(state, ui) : null,
    dailyCards(state, ui.daily),
    h("nav.panel.page-links", { "aria-label": "More of solrace" }, h("a", { href: "/leaderboard" }, "Leaderboards"), " · ", h("a", { href: "/dailies" }, "Past dailies"),
      " · ", h("a", { href: "/ratings" }, "How ratings work")),
    liveNow(state),
    h("section.panel.hero",
      h("h1", "Race your friends on the same deal"),
      h("p.lead", "Patience games, one shuffle for everyone, live progress bars. First to clear the table wins."),
      ui.practice ? null : nameField(ui), // (the practice panel above has it)
      h("div.actions",
        h("button.primary", { dataset: { action: "create" } }, "Create a room"),
        h("button", { dataset: { action: "create-host" }, title: "Host the race without a seat and watch it" }, "Host & watch"),
        h("button.ghost", { dataset: { action: "how-to-play" } }, "How to play")),
      h("div.join-row",
        h("input#join-code", { value: ui.form.code || "", placeholder: "Room code", "aria-label": "Room code", maxlength: "32", autocapitalize: "characters", dataset: { form: "code" } }),
        h("button.primary", { dataset: { action: "join" } }, "Join"),
        h("button", { dataset: { action: "spectate" } }, "Watch"))),
    h("section.panel.lobby-list",
      h("div.panel-head", h("h2", "Public rooms"), h("button.small", { dataset: { action: "lobby" } }, "Refresh")),
      rooms.length
        ? h("table.rooms", h("tbody", rooms.map((r) => h("tr", { dataset: { room: r.room } },
          h("td.code", r.room), h("td", gameTitle(state, r.game), r.deal === "winnable" ? h("span.chip", "winnable") : null, r.rated ? h("span.chip", "rated") : null), h("td", r.state),
          h("td", `${r.players}/${r.max_players}`),
          h("td.act", h("button.small", { dataset: { action: "join-room", room: r.room } }, "Join"),
            h("button.small", { dataset: { action: "watch-room", room: r.room } }, "Watch"))))))
        : h("p.muted", "No public rooms right now. Create one and tick “public”.")),
    identityPanel(ui, ui.identity?.key, ui.origin));
}

// ---- room lobby ---------------------------------------------------------------------

function optionControl(label, key, control) {
  return h("label.field.opt", { dataset: { opt: key } }, h("span", label), control);
}

function select(key, value, choices, disabled) {
  return h("select", { dataset: { option: key }, disabled },
    choices.map(([v, text]) => h("option", { value: String(v), selected: String(v) === String(value) }, text)));
}

function numberInput(key, value, min, max, disabled) {
  return h("input", { type: "number", value: String(value ?? ""), min: String(min), max: String(max), dataset: { option: key }, disabled });
}

function checkbox(key, value, disabled) {
  return h("input", { type: "checkbox", checked: Boolean(value), dataset: { option: key }, disabled });
}

/** One control per rule option the server lists for the game: a choice, or a count >= 0. */
function gameOptionControls(info, values, off) {
  return Object.entries(info?.options || {}).map(([name, spec]) => {
    const text = OPTION_TEXT[name] || {};
    const key = `game_options.${name}`;
    const value = values[name] ?? spec.default;
    const control = spec.choices
      ? select(key, value, spec.choices.map((c) => [c, text.choices?.[c] ?? String(c)]), off)
      : numberInput(key, value, 0, 99, off);
    return optionControl(text.label || name, name, control);
  });
}

function optionsPanel(state, ui) {
  // the host's changes on their way (app.js configure) over the room's last word
  const o = { ...(state.snap.options || {}), ...(ui.pendingOptions || {}) };
  const off = !isHost(state);
  const game = o.game;
  const games = state.games.map((g) => [g.id, g.title]);
  if (game && !gameInfo(state, game)) games.push([game, game]);
  return h("section.panel.options",
    h("h2", "Game"),
    h("div.opt-grid",
      optionControl("Game", "game", select("game", game, games, off)),
      gameOptionControls(gameInfo(state, game), o.game_options || {}, off),
      optionControl("Deal (text seed)", "seed", h("span.seed-row",
        // The server keeps a text seed secret until the results (options say only text_seed).
        h("input", { value: o.seed ?? (o.text_seed ? ui.form.seed || "" : ""), dataset: { option: "seed" }, disabled: off,
          placeholder: o.text_seed ? "text seed set (secret)" : "secret shuffle" }),
        off ? null : h("button.small", { dataset: { action: "daily" }, title: "Today's daily deal" }, "Daily")))),
    h("h2", "Room"),
    h("div.opt-grid",
      optionControl("Max players", "max_players", numberInput("max_players", o.max_players ?? 8, 1, 64, off)),
      optionControl("Time limit (s, 0 = none)", "time_limit", numberInput("time_limit", o.time_limit ?? 0, 0, 86400, off)),
      optionControl("Countdown (s)", "countdown", numberInput("countdown", o.countdown ?? 3, 0, 60, off)),
      optionControl("Undo", "undo", select("undo", o.undo ?? "none", [["none", "never"], ["safe", "if nothing was revealed"]], off)),
      optionControl("Spectators", "spectators", checkbox("spectators", o.spectators ?? true, off)),
      optionControl("Spectators see", "spectator_view", select("spectator_view", o.spectator_view ?? "boards", [["boards", "boards"], ["progress", "progress only"]], off)),
      optionControl("Spectator delay (s)", "spectator_delay", numberInput("spectator_delay", o.spectator_delay ?? 0, 0, 600, off)),
      optionControl("Public", "public", checkbox("public", o.public ?? false, off)),
      optionControl("Deal", "deal", select("deal", o.deal ?? "any", [["any", "any shuffle"], ["winnable", "winnable (solver-checked)"]], off)),
      optionControl("Hints (solo practice)", "hints", checkbox("hints", o.hints ?? false, off)),
      // rated: every seat needs a player key (the web client always has one); not with hints
      optionControl("Rated", "rated", checkbox("rated", o.rated ?? false, off))),
    h("h2", "Series"),
    h("div.opt-grid", { dataset: { testid: "series-options" } }, seriesControls(o, off, optionControl)));
}

/** The host's button that ends the series under way (between races). */
function endSeriesButton(state) {
  const series = seriesActive(state.snap);
  if (!isHost(state) || !series || !series.played) return null;
  return h("div.actions", h("button", { dataset: { action: "end-series", testid: "end-series" } }, "End the series"));
}

function playerRow(state, p) {
  const host = state.snap.host_seat === p.seat;
  return h("li.player", { dataset: { seat: String(p.seat), ready: String(p.ready) } },
    h(`span.dot.${p.connected ? "on" : "off"}`, { title: p.connected ? "connected" : "disconnected" }),
    h("span.name", p.name || `seat ${p.seat}`), ratingChip(p.player), host ? h("span.chip", "host") : null,
    p.seat === state.seat && state.role === "player" ? h("span.chip.you", "you") : null,
    p.bot ? h("span.chip", "bot") : null,
    h("span.spacer"),
    h(`span.ready.${p.ready ? "yes" : "no"}`, p.ready ? "ready" : "not ready"),
    isHost(state) && p.seat !== state.seat ? h("button.small.ghost", { dataset: { action: "kick", seat: String(p.seat) } }, "kick") : null);
}

function shareBox(state, ui) {
  const link = `${ui.origin}/#${state.room}`;
  return h("section.panel.share",
    h(state.room.length > 8 ? "div.big-code.long" : "div.big-code", { dataset: { testid: "share-code" } }, state.room),
    h("div.join-row", h("input", { value: link, readonly: true, "aria-label": "Link to this room", dataset: { testid: "share-link" } }),
      h("button.small", { dataset: { action: "copy-link" } }, "Copy link")));
}

/** The start rule, in words: who races, and what the host still waits for. */
function startHint(state, players) {
  const waiting = players.filter((p) => !p.ready);
  if (!players.length) return "A race needs at least one player: share the link. Everyone seated races when the host starts.";
  const who = waiting.map((p) => p.name || `seat ${p.seat}`).join(", ");
  if (isHost(state)) {
    return waiting.length ? `Not ready yet: ${who}. Everyone seated races when you start.` : "Everyone is ready.";
  }
  return waiting.length ? `Not ready yet: ${who}. The host starts the race; everyone seated races.` : "Everyone is ready: waiting for the host to start.";
}

function roomLobby(state, ui) {
  const mine = me(state);
  const players = state.snap.players || [];
  const readyCount = players.filter((p) => p.ready).length;
  return h("main.room",
    shareBox(state, ui),
    h("section.panel.players",
      h("div.panel-head", h("h2", `Players ${players.length}/${state.snap.options?.max_players ?? 8}`),
        h("span.muted", { dataset: { testid: "watching" } }, `${state.snap.spectators || 0} watching`)),
      seriesActive(state.snap) ? h("p.series-round", { dataset: { testid: "series-round" } },
        `${roundText(state.snap.series, state.snap.series.played + 1)} is next`) : null,
      h("ul.player-list", players.map((p) => playerRow(state, p))),
      h("p.muted.start-hint", { dataset: { testid: "start-hint" } }, startHint(state, players)),
      h("div.actions",
        mine ? h(`button.${mine.ready ? "on" : "primary"}`, { dataset: { action: "ready", testid: "ready" } }, mine.ready ? "Ready ✓" : "I'm ready") : null,
        isHost(state) ? h("button.primary.go", { dataset: { action: "start", testid: "start" }, disabled: !players.length },
          players.length && readyCount < players.length ? `Start race (${readyCount}/${players.length} ready)` : "Start race") : null,
        h("button.ghost", { dataset: { action: "how-to-play" } }, "How to play"),
        h("button.ghost", { dataset: { action: "leave" } }, "Leave"))),
    state.snap.series ? standingsTable(state, { links: true, actions: endSeriesButton(state) }) : null,
    optionsPanel(state, ui));
}

// ---- race -------------------------------------------------------------------------

function racerRow(state, p) {
  const mine = state.role === "player" && p.seat === state.seat;
  const ranked = rankedTime(state, p.seat);
  const time = ranked === undefined ? p.time : ranked;
  return h(`li.racer.${p.status}`, { dataset: { seat: String(p.seat), status: p.status, progress: String(p.progress) } },
    h("div.racer-head",
      h(`span.dot.${p.connected ? "on" : "off"}`),
      h("span.name", p.name || `seat ${p.seat}`, mine ? " (you)" : ""), ratingChip(p.player),
      h("span.spacer"),
      h("span.pct", pct(p.progress))),
    h("div.bar", h("div.fill", { style: { width: pct(p.progress) } })),
    h("div.racer-meta", h("span", plural(p.moves, "move")), h("span", `${p.home} home`),
      h("span.status", STATUS_TEXT[p.status] || p.status),
      time != null && p.status !== "racing" ? h("span.time", formatTime(time)) : null),
    !p.connected && p.status === "racing" && state.snap.state === "racing"
      ? h("div.racer-grace", { dataset: { clock: `grace-${p.seat}`, testid: "grace" } }, graceText(state, p, serverNow(state, Date.now())))
      : null);
}

const RANK_RULE = "Ranking: whoever cleared the table comes first, fastest first. Everyone else follows by "
  + "progress (the share of cards brought home) and, on equal progress, whoever got there first, so a "
  + "player who resigned can rank above one who played on. Time: when each player won, or reached "
  + "their final progress.";

/** Seed, salt and commitment, one click away: enough to check the deal was fixed before the start. */
function verifyBox(state, r) {
  const commitment = r.commitment || state.snap.commitment;
  if (r.seed == null && r.reveal_at) {
    return h("details.verify", { dataset: { testid: "verify" } },
      h("summary", "Verify this race"),
      h("p.muted", `Today's daily deal stays secret until the day ends (${new Date(r.reveal_at).toUTCString()}): `
        + "then the seed, the salt and this race's record are published for anyone to check."),
      commitment ? h("dl.fair", h("dt", "Commitment"), h("dd", h("code", commitment))) : null);
  }
  return h("details.verify", { dataset: { testid: "verify" } },
    h("summary", "Verify this race"),
    h("p.muted", "Before the countdown the server published the commitment. It must equal SHA-256 of the "
      + "salt's bytes followed by the seed as 8 big-endian bytes; replaying everyone's moves on that seed "
      + "gives the boards you saw."),
    h("dl.fair",
      h("dt", "Seed"), h("dd", h("code", String(r.seed))),
      h("dt", "Salt"), h("dd", h("code", String(r.salt || ""))),
      commitment ? [h("dt", "Commitment"), h("dd", h("code", commitment))] : null));
}

function rematchBox(state) {
  const series = seriesActive(state.snap);
  if (isHost(state)) {
    return h("div.actions", h("button.primary", { dataset: { action: "rematch", testid: "rematch" } },
      series ? `Next: ${roundText(series, series.played + 1).toLowerCase()} (new deal)` : "Rematch (new deal)"),
    endSeriesButton(state)?.firstChild || null);
  }
  const host = state.snap.players.find((p) => p.seat === state.snap.host_seat);
  return h("div.actions.rematch-ask",
    h("span.muted", host ? `${host.name} (the host) can start a rematch here; or race again in a new room and share its link.`
      : "The host can start a rematch here; or race again in a new room and share its link."),
    h("button.primary", { dataset: { action: "new-room", testid: "new-room" } }, "Race again in a new room"));
}

/** The race's record: its replay, and its text file (`solrace verify` checks it). */
function recordLinks(r) {
  if (!r.record) return null;
  return h("p.record-links", { dataset: { testid: "record-links" } },
    h("a", { href: `/replay/${r.record}`, dataset: { testid: "replay-link" } }, "Watch the replay"),
    " · ",
    h("a", { href: `/api/record/${r.record}.txt`, download: `solrace-${r.record}.txt` }, "Download the record"));
}

function resultsTable(state, ui) {
  const r = state.snap.results;
  if (!r || !r.ranking) return null;
  return h("section.panel.results", { dataset: { testid: "results" } },
    h("h2", "Results"),
    state.snap.options?.rated ? h("p.muted", { dataset: { testid: "rated-note" } }, "A rated race: ratings move by place. ",
      h("a", { href: "/ratings" }, "How ratings work")) : null,
    h("table.ranking",
      h("thead", h("tr", h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Result"),
        h("th", { scope: "col" }, "Time"), h("th", { scope: "col" }, "Progress"), h("th.col-moves", { scope: "col" }, "Moves"))),
      h("tbody", r.ranking.map((x) => h(`tr.${x.seat === state.seat && state.role === "player" ? "me" : "other"}`, { dataset: { seat: String(x.seat) } },
        h("td", String(x.place)), h("td.name", x.name, " ", ratingChip(x.player), changeChip(x.player, r.record)),
        h("td", STATUS_TEXT[x.status] || x.status),
        h("td.time", formatTime(x.time)), h("td", pct(x.progress)), h("td.col-moves", String(x.moves ?? "")))))),
    h("p.muted.rank-rule", { dataset: { testid: "rank-rule" } }, RANK_RULE),
    recordLinks(r),
    r.series ? standingsTable(state, { links: true }) : null,
    h("div.verdicts", { dataset: { testid: "verdicts" } },
      (verdictLines(r, state.snap.players) || ["Was it winnable? The solver is checking…"]).map((t) => h("p.muted", t))),
    dailyRank(state, ui.daily),
    verifyBox(state, r),
    state.snap.daily ? h("div.actions", h("button.primary", { dataset: { action: "home", testid: "daily-home" } }, "Back to the dailies"))
      : state.role === "player" || isHost(state) ? rematchBox(state) : null);
}

/** The player's own settings: automatic moves to the foundations, and sound. */
function playSettings(state, ui) {
  const game = state.snap.options?.game;
  const autoChoices = game === "puttputt" ? null : [["off", "off"], ["safe", "safe cards"], ["all", "every card"]];
  return h("span.settings",
    autoChoices ? h("label.setting", h("span", "Auto-move"),
      h("select", { dataset: { setting: "auto", testid: "auto-move" }, "aria-label": "Move cards to the foundations automatically" },
        autoChoices.map(([v, t]) => h("option", { value: v, selected: ui.settings.auto === v }, t)))) : null,
    h(`button.small.ghost${ui.settings.sound ? ".on" : ""}`, { dataset: { action: "toggle-sound", testid: "sound" },
      "aria-pressed": String(ui.settings.sound), title: "Sound" }, ui.settings.sound ? "Sound on" : "Sound off"));
}

/** A race ends at `ends_at`: its time limit's end, or the server's longest race (hours) for
 * one with no limit of its own, which no clock counts down. */
function timeLimited(snap) {
  return Boolean(snap.ends_at && snap.options?.time_limit);
}

function raceBar(state, ui, clocks) {
  const snap = state.snap;
  const mine = me(state);
  const view = state.view;
  return h("div.race-bar",
    h("span.game-name", gameTitle(state, snap.options?.game)),
    seriesActive(snap) && snap.state !== "finished"
      ? h("span.chip.series-chip", { dataset: { testid: "race-round" } }, roundText(snap.series, snap.series.played + 1)) : null,
    snap.state === "finished"
      // after the race: its length (the last ranked time), no clock counting down
      ? h("span.stat", { dataset: { testid: "race-over" } }, "Race over",
        clocks.elapsed ? [" · ", h("span.clock", { title: "race time" }, clocks.elapsed)] : null)
      : h("span.clock", { dataset: { clock: "elapsed" } }, clocks.elapsed || "0:00.0"),
    timeLimited(snap) && snap.state !== "finished"
      ? h("span.clock.left", { dataset: { testid: "time-left" } }, h("span", { dataset: { clock: "left" } }, clocks.left || ""), " left")
      : null,
    view ? h("span.stat", { dataset: { testid: "my-moves" } }, plural(view.moves, "move")) : null,
    view ? h("span.stat", { dataset: { testid: "my-progress" } }, pct(view.progress)) : null,
    h("span.spacer"),
    mine && snap.state !== "finished" ? playSettings(state, ui) : null,
    h("button.small.ghost", { dataset: { action: "how-to-play" }, title: "How to play" }, "Rules"),
    canUndo(state) ? h("button.small", { dataset: { action: "undo" }, title: "Take back your last move (Ctrl+Z)" }, "Undo") : null,
    snap.options?.hints && mine && mine.status === "racing" ? [
      h("button.small", { dataset: { action: "hint", testid: "hint" }, title: "Show the next move of a winning line" }, "Hint"),
      currentHint(ui.hint, view) ? h("span.stat.hint-text", { dataset: { testid: "hint-text" } }, hintText(ui.hint)) : null] : null,
    mine && mine.status === "racing" ? h("button.small.ghost", { dataset: { action: "resign" } }, "Resign") : null,
    snap.state === "finished" ? h("button.small.ghost", { dataset: { action: "leave" } }, "Leave") : null);
}

function spectatorBoards(state) {
  const snap = state.snap;
  if (snap.options?.spectator_view === "progress") return h("p.muted.center", "This room shows spectators progress only.");
  const seats = snap.players.map((p) => p.seat).filter((s) => state.boards[s]);
  if (!seats.length) {
    if (snap.state === "countdown") return h("p.muted.center", "The race is about to start…");
    // the server keeps a race's boards from the network of anyone still racing in it
    if (snap.state !== "racing") return h("p.muted.center", "Waiting for boards…");
    const delay = snap.options?.spectator_delay ?? 0;
    return h("section.panel.no-boards", { dataset: { testid: "no-boards" } },
      h("h2", "No boards on this network during the race"),
      h("p", "Someone on your network (the same Wi-Fi or address) is racing in this room. Every racer plays the same deal, ",
        "so another racer's board would show their hidden cards: the server sends no board here until they finish."),
      h("p", delay > 0
        ? `Then the boards appear ${delay} s late (this room's spectator delay), as every spectator sees them. Progress stays live.`
        : "Then the boards appear live. Progress stays live meanwhile."));
  }
  const delay = snap.options?.spectator_delay ?? 0;
  const late = snap.state === "racing" && delay > 0
    ? h("p.center.delay-note", `Boards are shown ${delay} s late, so racers cannot read each other's cards.`)
    : null;
  return h("div", late, h("div.board-grid", seats.map((seat) => {
    const p = snap.players.find((x) => x.seat === seat);
    return h("section.panel.watch", { dataset: { seat: String(seat) } },
      h("div.watch-head", h("span.name", p?.name || `seat ${seat}`), h("span.spacer"),
        h("span", `${plural(state.boards[seat].moves, "move")} · ${pct(state.boards[seat].progress)}`)),
      h("div.board-wrap", renderBoard(state.boards[seat], {}, { owner: String(seat) })));
  })));
}

function statusBanner(state) {
  const mine = me(state);
  if (!mine || !["won", "dead", "resigned", "timeout"].includes(mine.status)) return null;
  const text = { won: "You cleared it! 🎉", dead: "No moves left.", resigned: "You resigned.", timeout: "Time is up." }[mine.status];
  return h(`div.banner.${mine.status}`, text);
}

function raceScreen(state, ui, clocks) {
  const snap = state.snap;
  const players = snap.players || [];
  const main = state.role === "player"
    ? (state.view
      ? h("div.board-wrap.mine", renderBoard(state.view, ui, { keyed: true }))
      : h("p.muted.center", snap.state === "countdown" ? "Shuffling…" : "Loading your board…"))
    : spectatorBoards(state);
  return h(`main.race.state-${snap.state}`, { dataset: { state: snap.state } },
    raceBar(state, ui, clocks),
    snap.state === "countdown" ? h("div.countdown-overlay", h("span", { dataset: { clock: "countdown" } }, clocks.countdown || "")) : null,
    resultsTable(state, ui),
    statusBanner(state),
    h("div.race-layout",
      h("div.race-main", main),
      state.snap.daily
        ? h("div.race-side", racersPanel(state, ui, players), dailyPanel(state, ui.daily))
        : racersPanel(state, ui, players)));
}

/** Everyone's progress; on a phone it folds to one line above the board (tap to open). */
function racersPanel(state, ui, players) {
  const open = Boolean(ui.racersOpen);
  const leader = [...players].sort((a, b) => (b.progress || 0) - (a.progress || 0))[0];
  const mine = me(state);
  const summary = [mine ? `you ${pct(mine.progress)}` : null,
    leader && leader !== mine ? `${leader.name || `seat ${leader.seat}`} ${pct(leader.progress)}` : null,
    plural(players.length, "player")].filter(Boolean).join(" · ");
  return h(`aside.panel.racers.${open ? "open" : "folded"}`, { "aria-label": "Race progress" },
    h("h2", "Race"),
    h("button.racers-toggle", { dataset: { action: "toggle-racers", testid: "racers-toggle" }, "aria-expanded": String(open) },
      h("span", summary), h("span.caret", { "aria-hidden": "true" }, open ? "▴" : "▾")),
    h("ul", players.map((p) => racerRow(state, p))),
    h("p.muted.watching", `${state.snap.spectators || 0} watching`),
    state.snap.series && state.snap.state !== "finished" ? standingsTable(state, { compact: true }) : null);
}

/** The whole page for (state, ui) at local time `now`. */
export function renderApp(state, ui, now = Date.now()) {
  let body;
  if (ui.seatConflict) {
    body = h("main.home", h("section.panel.seat-choice", { dataset: { testid: "seat-conflict" } },
      h("h2", `Room ${ui.seatConflict.room}`),
      h("p", "Your seat in this room is open in another tab. Play here, and that tab lets go of it, or watch from this one."),
      h("div.actions",
        h("button.primary", { dataset: { action: "take-seat" } }, "Play here"),
        h("button", { dataset: { action: "watch-instead" } }, "Watch instead"))));
  } else if (ui.movedAway) {
    body = h("main.home", h("section.panel.seat-choice", { dataset: { testid: "moved-away" } },
      h("h2", `Room ${state.room || ""}`),
      h("p", "Your seat is now played in another tab."),
      h("div.actions",
        h("button.primary", { dataset: { action: "take-seat" } }, "Play here instead"),
        h("button", { dataset: { action: "home" } }, "Back to the lobby"))));
  } else if (state.kicked) {
    body = h("main.home", h("section.panel", h("h2", "You were removed from the room."),
      h("button.primary", { dataset: { action: "home" } }, "Back")));
  } else if (!state.room || !state.snap) {
    body = homeScreen(state, ui);
  } else if (state.snap.state === "lobby") {
    body = roomLobby(state, ui);
  } else {
    body = raceScreen(state, ui, clockTexts(state, now));
  }
  const strip = state.room && state.snap && ui.arena?.view ? arenaStrip(state, ui, now) : null;
  return h(`div.app.state-${state.snap?.state || "home"}`, header(state), body, strip, notice(state),
    ui.help ? helpDialog(ui.help, state.games) : null);
}
