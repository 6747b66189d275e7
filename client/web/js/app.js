// Glue: the connection feeds server messages to the reducer, the reducer's state and the
// page's ui state are rendered, and clicks / drags / form changes become requests.

import { Connection, newRoomCode } from "./net.js";
import { initialState, reduce, me, isHost, gameOptionValue, canUndo } from "./state.js";
import { markHint } from "./hint.js";
import { renderApp, clockTexts, finishText } from "./render.js";
import { attachPointer } from "./input.js";
import { pickUp, dropMove, stockMove, foundationMove, growSelection, autoMove } from "./moves.js";
import { pileKind } from "./cards.js";
import { loadSession, saveSession, loadName, saveName, roomFromLocation, watchFromLocation, todaySeed, loadSetting, saveSetting } from "./session.js";
import { seatGuard } from "./seats.js";
import { keyIntent } from "./keys.js";
import { playSound, played } from "./sound.js";
import { measure, play as animate, animated } from "./anim.js";
import { dailyState, loadDailies, loadBoard } from "./daily.js";
import { fitName } from "./text.js";
import { refreshRatings } from "./ratings.js";
import { keyFromCode, keyFromLocation, validKey } from "./identity.js";
import { playerKey, setPlayerKey } from "./session.js";
import { seriesChange } from "./series.js";
import { quickState, quickText } from "./quick.js";
import { loadArena, saveArena, arenaIdFrom, timeLeft } from "./arena.js";
import morphdom from "../node_modules/morphdom/dist/morphdom-esm.js";

const root = document.getElementById("app");
let state = initialState();
const ui = {
  form: { name: loadName(), code: roomFromLocation(location) || "" },
  sel: null,
  drag: null,
  origin: location.origin,
  lastClick: null,
  seatConflict: null, // a saved seat that another open tab plays: the player chooses
  movedAway: false,   // another tab took this tab's seat
  routeRoom: null,    // the room a create, join or watch from the home page is about to enter
  help: null,         // the game whose "How to play" is open
  racersOpen: false,  // the race panel, unfolded (phones fold it)
  settings: { auto: loadSetting("auto", "off"), sound: loadSetting("sound", "off") === "on" },
  daily: dailyState(), // today's dailies and their boards (daily.js)
  quick: quickState(), // a Race now request waiting for its match (quick.js)
  // the arena this tab takes part in (arena.js): {id, paused, view}; kept over reloads
  arena: (() => { const a = loadArena(); return a ? { ...a, view: null } : null; })(),
  holdMs: 1000,        // the longest a pressed button holds the page's redraws back
  doubleClickMs: 400,  // a second click on a pile within this sends its card home (boardClick)
  invite: null,        // a room link opened: {code, info (GET /api/room/CODE), missing}
  practice: practiceFromLocation(), // /?practice=DATE/GAME: an archived daily to play
  identity: { shown: false, key: null, offered: keyFromLocation(location) }, // identity.js
  pendingOptions: {},  // the host's option changes the room has not echoed yet (configure)
};
// a key handed over by a link (#key=...): out of the address bar and history at once
if (ui.identity.offered) history.replaceState(null, "", "/");

/** Take another device's key: this browser is that player from the next connection on. */
function useKey(key) {
  if (!validKey(key)) return notify("That is not a player key (22 to 128 letters, digits and signs, as shown on the other device).", "error", "identity");
  if (key === playerKey()) return notify("This browser already has that key.", "info", "identity");
  if (!confirm("Use this key here? This browser's own key is replaced: its races stay with the old key.")) return;
  if (!setPlayerKey(key)) return notify("This browser keeps no storage (private mode?): the key cannot be kept.", "error", "identity");
  location.reload(); // the next hello says the new key
}

function practiceFromLocation() {
  const m = /^(\d{4}-\d{2}-\d{2})\/([a-z]+)$/.exec(new URLSearchParams(location.search).get("practice") || "");
  return m ? { date: m[1], game: m[2] } : null;
}

/** A room link (`/#CODE`, `/r/CODE`) opened with no seat in that room: its invite page. */
async function openInvite(code) {
  if (!code || watchFromLocation(location)) return;
  ui.invite = { code, info: null, missing: false };
  render();
  try {
    const res = await fetch(`/api/room/${encodeURIComponent(code)}`, { cache: "no-store" });
    if (ui.invite?.code !== code) return;
    if (res.ok) ui.invite.info = await res.json();
    else if (res.status === 404) ui.invite.missing = true;
    else ui.invite = null; // rate-limited or an older server: the plain landing page with the code
  } catch {
    ui.invite = null;
  }
  render();
}
/** A room link opened (or the bare root): a finished room saved from last time is left. */
const linkedRoom = roomFromLocation(location);
let openedAtRoot = (location.pathname === "/" && !location.hash && !location.search)
  || Boolean(linkedRoom && linkedRoom !== loadSession()?.room);
// The reader went to the landing page from that link's invite: a resume that answers later
// (a slow connection) must not bring the invite back.
let linkLeft = false;
const auto = { busy: false, paused: false }; // one automatic move at a time; an error pauses it
let resyncing = false;

const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
// Each (re)connection names the room it is for, so it reaches the process serving the room.
// A room about to be created, joined or watched from here is named before its request goes
// (ui.routeRoom, then conn.reroute()): the room's first connection reaches its process too.
const roomToConnect = () =>
  state.room || loadSession()?.room || ui.routeRoom || roomFromLocation(location);
const conn = new Connection(wsUrl, { onMessage: dispatch, onStatus, onReady, room: roomToConnect });
const seats = seatGuard({ onTaken: seatTaken });

// ---- state changes ----------------------------------------------------------------------

let noticeTimer = null;

/** Which page the state shows: an error said on one page means nothing on the next. */
function screenOf(s) {
  if (s.kicked) return "kicked";
  return s.room && s.snap ? s.snap.state : "home";
}

function setState(next) {
  if (next.notice && next.notice === state.notice && screenOf(next) !== screenOf(state)) {
    next = { ...next, notice: null };
  }
  const fresh = next.notice && next.notice !== state.notice;
  state = next;
  persist();
  render();
  if (fresh) {
    // Explanations stay long enough to read, then get out of the way of the table.
    clearTimeout(noticeTimer);
    const shown = state.notice;
    noticeTimer = setTimeout(() => { if (state.notice === shown) setState({ ...state, notice: null }); }, 8000);
  }
}

const received = []; // the last server messages, for debugging from the console and the tests

function dispatch(msg) {
  received.push(msg);
  if (received.length > 300) received.shift();
  const before = state;
  const next = reduce(state, msg);
  echoedOptions(msg);
  if (msg.type === "ack" || msg.type === "error") ui.sel = null;
  if (msg.type === "event" && msg.kind === "rematch") ui.sel = null;
  setState(next);
  if (state.kicked) {
    saveSession(null);
    seats.release();
  }
  announce(before, msg);
  if (msg.type === "matched") takeMatch(msg);
  if (msg.type === "arena_paired") takeMatch(msg);
  if (msg.type === "arena" && ui.arena && msg.arena.id === ui.arena.id) {
    ui.arena = { ...ui.arena, view: msg.arena };
    render();
  }
  if (msg.type === "joined") ui.quick = null; // in the room: the wait is over
  if (msg.type === "event" && msg.kind === "results" && state.snap?.daily) refreshDaily();
  maybeResync();
  autoStep();
}

function persist() {
  if (!state.room || state.kicked) return;
  saveSession({ room: state.room, role: state.role, token: state.token, hostToken: state.hostToken,
    lastEvent: state.lastEvent });
}

function notify(text, kind = "error", code = "") {
  setState({ ...state, notice: { kind, text, code, at: Date.now() } });
}

function onStatus(s) {
  setState({ ...state, conn: s });
}

/** After every (re)connect: learn the server's games, then take the seat back or look at the
 * public rooms. */
async function onReady(welcome, { rerouted = false } = {}) {
  setState(reduce(state, welcome));
  // an arena member's presence is its connection: every new one says so again (arena.js)
  if (ui.arena) arenaHello();
  if (rerouted) return; // reopened for a room about to be entered: its request follows
  if (ui.quick && !ui.quick.matched) {
    // the socket that held the ticket is gone, and so is the ticket: ask again
    const { game } = ui.quick;
    ui.quick = null;
    raceNow(game);
  }
  const saved = loadSession();
  if (!saved || !saved.room) {
    const watch = watchFromLocation(location);
    if (watch && !ui.watchedLink) {
      ui.watchedLink = true; // once: "Back" to the lobby must not watch again
      watchRoom(watch);
      return;
    }
    refreshLobby();
    refreshDaily();
    return;
  }
  // A seat this tab does not play yet (a reload, a duplicated tab): another tab may play it.
  const mine = seats.held && seats.held.token === saved.token;
  if (saved.role === "player" && saved.token && !mine && await seats.heldElsewhere(saved.room, saved.token)) {
    ui.seatConflict = saved;
    render();
    return;
  }
  await rejoin(saved);
}

async function rejoin(saved) {
  // With the room's model in memory, only the missed events are needed; after a reload the
  // model is gone, so ask without last_event and get a full snapshot.
  const have = state.snap && state.room === saved.room;
  const since = have ? { last_event: state.lastEvent } : {};
  const player = saved.role === "player" && saved.token;
  const msg = player
    ? { type: "resume", room: saved.room, token: saved.token, ...since }
    : { type: "spectate", room: saved.room, ...since };
  // The resume reply does not repeat the tokens: keep them, or the next resync (and the next
  // reload) would have none and come back as a spectator.
  state = { ...state, token: player ? saved.token : state.token, hostToken: state.hostToken || saved.hostToken || null };
  try {
    const reply = await conn.request(msg);
    if (reply.type === "error") {
      saveSession(null);
      seats.release();
      setState({ ...initialState(), conn: state.conn, games: state.games, server: state.server, player: state.player,
        notice: { kind: "error", code: reply.code, text: `Could not rejoin ${saved.room}: ${reply.message}`, at: Date.now() } });
      refreshLobby();
      refreshDaily();
      return;
    }
    if (player) seats.hold(saved.room, saved.token);
    persist();
    // The site root typed in (no room in the address) is the landing page: a finished room
    // kept from last time is left, not shown again (a reload keeps /#CODE, so stays).
    // So is a link to another room: its invite page, not the finished room.
    if (openedAtRoot && state.snap?.state === "finished") {
      openedAtRoot = false;
      leaveRoom();
      if (linkedRoom && !linkLeft) {
        history.replaceState(null, "", `/#${linkedRoom}`);
        ui.form.code = linkedRoom;
        openInvite(linkedRoom);
      }
      return;
    }
    openedAtRoot = false;
  } catch (err) {
    /* the link dropped again; onReady runs on the next welcome */
  }
}

/** Another tab took this tab's seat: stop talking for it here. */
function seatTaken() {
  ui.movedAway = true;
  conn.stop();
  render();
}

/** Play the seat in this tab: the tab that has it lets go. */
function takeSeat() {
  const saved = ui.seatConflict || loadSession();
  ui.seatConflict = null;
  ui.movedAway = false;
  if (!saved || !saved.token) return render();
  seats.take(saved.room, saved.token);
  if (conn.ready) rejoin(saved);
  else conn.start(); // onReady resumes: this tab holds the seat now
  render();
}

function watchInstead() {
  const saved = ui.seatConflict;
  ui.seatConflict = null;
  if (!saved) return render();
  const watching = { room: saved.room, role: "spectator", token: null, hostToken: null, lastEvent: 0 };
  saveSession(watching);
  state = { ...state, token: null, hostToken: null };
  rejoin(watching);
  render();
}

/** A toast when someone else finishes, and the optional sounds of one's own race. */
function announce(before, msg) {
  if (msg.type === "ack" && (msg.view || msg.change)) {
    if (ui.settings.sound) playSound(msg.status === "won" ? "won" : "move");
    return;
  }
  if (msg.type !== "event" || msg.kind !== "progress" || msg.status === "racing") return;
  if (state.role === "player" && msg.seat === state.seat) return;
  const was = before.snap?.players.find((p) => p.seat === msg.seat);
  if (!was || was.status !== "racing") return;
  const now = state.snap.players.find((p) => p.seat === msg.seat);
  if (!now) return;
  notify(finishText(now), "info", "finish");
  if (ui.settings.sound) playSound("finish");
}

/** Cards to the foundations by themselves, as the player's setting says (and a forced finish). */
function autoStep() {
  if (auto.busy || auto.paused || !racing() || ui.drag) return;
  const move = autoMove(state.view, ui.settings.auto);
  if (!move) return;
  auto.busy = true;
  const n = state.view.moves + 1;
  setTimeout(() => {
    if (!racing() || state.view.moves + 1 !== n) {
      auto.busy = false;
      return autoStep();
    }
    conn.request({ type: "move", move, n }).then((reply) => {
      auto.busy = false;
      if (reply.type === "error") auto.paused = true; // the player's next move resumes it
      else autoStep();
    }, () => { auto.busy = false; });
  }, 180);
}

/** An event gap, or a race that started without our board: ask for the room again. */
async function maybeResync() {
  if (!state.needResync || !state.room || resyncing) return;
  resyncing = true;
  try {
    await rejoin({ room: state.room, role: state.role, token: state.token, hostToken: state.hostToken, lastEvent: state.lastEvent });
  } finally {
    resyncing = false;
  }
  if (state.needResync) setState({ ...state, needResync: false }); // asked once; do not loop
}

async function refreshLobby() {
  try {
    await conn.request({ type: "lobby" });
  } catch { /* offline: the list stays as it was */ }
}

/** The dailies as the page shows them now: the landing page's list (and the open board), or
 * the board of the daily being raced. Polled every few seconds: the server caches each page. */
async function refreshDaily() {
  const info = state.snap?.daily;
  const room = state.room;
  try {
    if (info) await loadBoard(ui.daily, info.id, state.player);
    else if (!room) {
      await loadDailies(ui.daily, state.player);
      if (ui.daily.open) await loadBoard(ui.daily, ui.daily.open, state.player);
    } else return;
  } catch { return; /* offline or an older server: the page goes on without dailies */ }
  if (state.room === room) render(); // the page has not moved on to another room meanwhile
}

async function playDaily(game, practice, date = null) {
  const name = playerName();
  if (!name) return;
  const code = newRoomCode(false); // the attempt's room, routed by its code as `create` is
  const msg = { type: "daily", game, name, code, ...(practice ? { practice: true } : {}), ...(date ? { date } : {}) };
  if (!conn.ready) notify("Connecting to the server…", "info", "connecting");
  let reply;
  try {
    ui.routeRoom = code;
    await conn.reroute();
    reply = await conn.request(msg, { wait: true });
  } catch (err) {
    return notify(err.message);
  }
  if (reply.type === "error") {
    // the reducer shows the server's words; the card offers practice from now on
    if (reply.code === "daily_played") refreshDaily();
    return;
  }
  enteredRoom(reply);
  refreshDaily();
}

// ---- quick match (quick.js) -------------------------------------------------------------

async function raceNow(game) {
  const name = playerName();
  if (!name || ui.quick) return;
  ui.quick = { game, rating: null, since: Date.now(), matched: null };
  render();
  const reply = await ask({ type: "quick", game, name }, true);
  if (!reply) {
    ui.quick = null;
    return render();
  }
  if (ui.quick?.game === game && !ui.quick.matched) ui.quick = { ...ui.quick, rating: reply.rating };
  render();
}

async function cancelRaceNow() {
  if (!ui.quick || ui.quick.matched) return;
  const reply = await ask({ type: "quick_cancel" });
  if (reply && !ui.quick?.matched) ui.quick = null; // refused: `matched` is on its way
  render();
}

/** Matched: the seat is ours. Resumed on this socket when its process serves the room
 * (`here`); else a new socket naming the room reaches that process, and its welcome resumes
 * the seat as after a reload (onReady). */
function takeMatch(msg) {
  ui.quick = { ...(ui.quick || { game: msg.game, since: Date.now() }), matched: msg };
  render();
  const saved = { room: msg.room, role: "player", token: msg.token, hostToken: null, lastEvent: 0 };
  saveSession(saved);
  seats.hold(msg.room, msg.token);
  history.replaceState(null, "", `/#${msg.room}`);
  ui.form.code = msg.room;
  if (msg.here) rejoin(saved);
  else conn.reconnect();
}

// ---- arenas (arena.js) -----------------------------------------------------------------

/** This connection is the member's presence (or, paused, a watcher of its leaderboard). */
async function arenaHello() {
  const a = ui.arena;
  const name = (ui.form.name || "").trim() || loadName() || "player";
  const reply = await ask(a.paused
    ? { type: "arena_watch", arena: a.id }
    : { type: "arena_join", arena: a.id, name: fitName(name) });
  if (!reply) {
    if (ui.arena?.id === a.id && !state.room) {
      ui.arena = null; // gone (expired) or refused: the card offers to create or join again
      saveArena(null);
      render();
    }
    return;
  }
  if (ui.arena?.id === a.id) ui.arena = { ...ui.arena, view: reply.arena };
  render();
}

async function joinArena(id) {
  const name = playerName();
  if (!name || !id) return;
  const reply = await ask({ type: "arena_join", arena: id, name }, true);
  if (!reply) return;
  ui.arena = { id, paused: false, view: reply.arena };
  saveArena(ui.arena);
  ui.form.arenaId = "";
  render();
}

async function createArena() {
  const name = playerName();
  if (!name) return;
  const f = ui.form;
  const game = f.arenaGame || state.games[0]?.id;
  const minutes = Number(f.arenaMinutes || 30);
  const size = Number(f.arenaSize || 4);
  const reply = await ask({ type: "arena_create", game, minutes, max_players: size, name, title: `${name}'s arena` }, true);
  if (reply) await joinArena(reply.arena.id);
}

async function pauseArena(paused) {
  const a = ui.arena;
  if (!a) return;
  const reply = await ask(paused ? { type: "arena_leave", arena: a.id } : { type: "arena_join", arena: a.id, name: playerName() || "player" });
  if (!reply) return;
  ui.arena = { ...a, paused, view: reply.arena };
  saveArena(ui.arena);
  render();
}

// ---- requests -----------------------------------------------------------------------

/** A request whose error reply is shown by the reducer; `wait`: queue it until connected. */
async function ask(msg, wait = false, route = null) {
  if (wait && !conn.ready) notify("Connecting to the server…", "info", "connecting");
  try {
    if (route) {
      ui.routeRoom = route;
      await conn.reroute();
    }
    const reply = await conn.request(msg, { wait });
    if (wait && state.notice?.code === "connecting") setState({ ...state, notice: null });
    return reply.type === "error" ? null : reply;
  } catch (err) {
    notify(err.message);
    return null;
  }
}

function enteredRoom(reply) {
  if (!reply) return;
  ui.invite = null;
  ui.practice = null;
  history.replaceState(null, "", `/#${reply.room}`); // also drops a ?watch= link's query
  ui.form.code = reply.room;
  if (reply.role === "player") seats.hold(reply.room, state.token);
  persist();
}

function playerName() {
  const name = fitName((ui.form.name || "").trim().split(/\s+/).join(" "));
  if (!name) {
    notify("Choose a name first.", "error", "name");
    return null;
  }
  saveName(name);
  return name;
}

function joinCode(code) {
  const c = (code || ui.form.code || "").trim().toUpperCase();
  if (!c) notify("Enter a room code.", "error", "code");
  return c || null;
}

function sendMove(move) {
  if (!move || !state.view) return;
  auto.paused = false;
  ui.sel = null;
  ui.lastClick = null; // the click that completed a move is not half of a double click
  conn.request({ type: "move", move, n: state.view.moves + 1 }).catch((err) => notify(err.message));
  render();
}

/**
 * The host changes room options. Each change shows as made until the room's `options` event
 * echoes it (dispatch) or the server refuses it: a room message in between (a join, a ping's
 * answer) would otherwise draw the room's old value back for a moment, and a click on a box
 * seemed undone under load.
 */
async function configure(options) {
  Object.assign(ui.pendingOptions, options);
  const reply = await ask({ type: "configure", host_token: state.hostToken, options });
  let dropped = false;
  for (const [key, value] of Object.entries(options)) {
    // refused: the room's value is back; taken: a key the event does not show (a secret
    // seed) is done with too
    const done = !reply || !(key in (state.snap?.options || {}));
    if (done && ui.pendingOptions[key] === value) {
      delete ui.pendingOptions[key];
      dropped = true;
    }
  }
  if (dropped) render();
}

/** A room message that says the room's options: what it echoes is no longer pending. */
function echoedOptions(msg) {
  if (msg.type === "event" && msg.kind === "options") {
    for (const key of Object.keys(msg.options || {})) delete ui.pendingOptions[key];
  } else if (msg.type === "joined") {
    ui.pendingOptions = {}; // another room's (or this one's again, from its snapshot)
  }
}

function leaveRoom() {
  if (state.room && !ui.movedAway) conn.send({ type: "leave" });
  saveSession(null);
  seats.release();
  ui.routeRoom = null;
  history.replaceState(null, "", "/");
  ui.sel = null;
  ui.seatConflict = null;
  ui.form.code = ""; // no stale code (a daily's private one) left in the Join box
  ui.invite = null;
  ui.pendingOptions = {};
  state = { ...initialState(), conn: state.conn, games: state.games, server: state.server, player: state.player };
  if (ui.movedAway) {
    ui.movedAway = false;
    conn.start();
  }
  render();
  refreshLobby();
  refreshDaily();
}

async function createRoom(play, options) {
  const name = playerName();
  if (!name) return;
  // the page draws the code (a rare `code_taken` is shown; the next try draws another)
  const code = newRoomCode(Boolean(options?.public));
  enteredRoom(await ask({ type: "create", name, play, code, ...(options ? { options } : {}) }, true, code));
}

/** A non-host after the results: a new room with this room's settings, this player hosting. */
async function raceAgainElsewhere() {
  const mine = me(state);
  const { text_seed, seed, ...options } = state.snap?.options || {};
  if (mine?.name) ui.form.name = mine.name;
  // answered before the socket is reopened for the new room's process: a leave still in
  // flight as its socket closes would be lost, and the seat would stay in the old room
  if (state.room) await conn.request({ type: "leave" }).catch(() => null);
  saveSession(null);
  seats.release();
  state = { ...initialState(), conn: state.conn, games: state.games, server: state.server, player: state.player };
  await createRoom(true, options);
}

async function joinRoom(code) {
  const name = playerName();
  const room = joinCode(code);
  if (!name || !room) return;
  enteredRoom(await ask({ type: "join", room, name }, true, room));
}

async function watchRoom(code) {
  const room = joinCode(code);
  if (room) enteredRoom(await ask({ type: "spectate", room }, true, room));
}

/** Click handlers by data-action; each gets the clicked element. */
const actions = {
  create: () => createRoom(true),
  "create-host": () => createRoom(false),
  join: () => joinRoom(),
  spectate: () => watchRoom(),
  "join-room": (el) => joinRoom(el.dataset.room),
  "watch-room": (el) => watchRoom(el.dataset.room),
  lobby: refreshLobby,
  "daily-play": (el) => playDaily(el.dataset.game, Boolean(el.dataset.practice)),
  quick: (el) => raceNow(el.dataset.game),
  "quick-cancel": cancelRaceNow,
  "arena-create": createArena,
  "arena-join": () => joinArena(arenaIdFrom(ui.form.arenaId)),
  "arena-pause": () => pauseArena(true),
  "arena-resume": () => pauseArena(false),
  async "arena-close"() {
    const a = ui.arena;
    if (a && !a.paused && a.view?.state === "running") await ask({ type: "arena_leave", arena: a.id });
    ui.arena = null;
    saveArena(null);
    render();
  },
  "identity-show"() {
    ui.identity.key = playerKey();
    ui.identity.shown = true;
    render();
  },
  "identity-hide"() {
    ui.identity.shown = false;
    ui.identity.key = null;
    render();
  },
  "identity-use": () => useKey(keyFromCode(ui.form.identityInput)),
  "identity-use-offered": () => useKey(ui.identity.offered),
  "identity-dismiss"() {
    ui.identity.offered = null;
    render();
  },
  "practice-past": () => ui.practice && playDaily(ui.practice.game, true, ui.practice.date),
  landing() {
    // the landing page itself, whatever link opened this one
    linkLeft = true;
    ui.invite = null;
    ui.practice = null;
    ui.form.code = "";
    history.replaceState(null, "", "/");
    render();
    refreshLobby();
    refreshDaily();
  },
  "daily-board"(el) {
    ui.daily.open = ui.daily.open === el.dataset.id ? null : el.dataset.id;
    render();
    refreshDaily();
  },
  ready() {
    const mine = me(state);
    if (mine) ask({ type: "ready", ready: !mine.ready });
  },
  start() {
    // The rule: everyone seated races; a race needs one player; the host is asked about
    // players who have not said they are ready.
    const players = state.snap?.players || [];
    if (!players.length) return notify("A race needs at least one player: share the link first.", "error", "start");
    const waiting = players.filter((p) => !p.ready).map((p) => p.name || `seat ${p.seat}`);
    if (waiting.length && !confirm(`Not ready yet: ${waiting.join(", ")}. Start anyway? Everyone seated races.`)) return;
    ask({ type: "start", host_token: state.hostToken });
  },
  "new-room": raceAgainElsewhere,
  "how-to-play"() {
    ui.help = state.snap?.options?.game || state.games[0]?.id || "klondike";
    render();
    root.querySelector(".help")?.focus();
  },
  "help-game"(el) {
    ui.help = el.dataset.game;
    render();
  },
  "close-help"() {
    ui.help = null;
    render();
  },
  "inside-help"() {},
  "toggle-sound"() {
    ui.settings.sound = !ui.settings.sound;
    saveSetting("sound", ui.settings.sound ? "on" : "off");
    render();
  },
  "toggle-racers"() {
    ui.racersOpen = !ui.racersOpen;
    render();
  },
  rematch: () => ask({ type: "rematch", host_token: state.hostToken }),
  "end-series"() {
    if (confirm("End the series now? The standings so far are final.")) ask({ type: "end_series", host_token: state.hostToken });
  },
  kick: (el) => ask({ type: "kick", host_token: state.hostToken, seat: Number(el.dataset.seat) }),
  leave: leaveRoom,
  home: leaveRoom,
  resign() {
    if (confirm("Resign this race?")) ask({ type: "resign" });
  },
  undo() {
    if (state.view) ask({ type: "undo", n: state.view.moves });
  },
  async hint() {
    const reply = await ask({ type: "hint" });
    if (reply) {
      ui.hint = reply;
      render();
    }
  },
  daily() {
    ui.form.seed = todaySeed();
    configure({ seed: ui.form.seed });
  },
  "copy-link"() {
    const link = `${location.origin}/#${state.room}`;
    navigator.clipboard?.writeText(link).then(() => notify("Link copied.", "info"), () => notify(link, "info"));
  },
  dismiss: () => setState({ ...state, notice: null }),
  "take-seat": takeSeat,
  "watch-instead": watchInstead,
};

// ---- DOM wiring -----------------------------------------------------------------------

// A button pressed while a message re-renders the page would be replaced under the pointer:
// its release lands on the new copy and the browser sends the click to neither (a lost tap,
// likeliest mid-race, when progress arrives many times a second). So while a button is held
// the page is not redrawn; the redraw waits until just after the click (a touch's click may
// come a moment after the finger lifts: RELEASE_MS), and never longer than `ui.holdMs` (1 s;
// the browser tests, whose presses last as long as a loaded machine makes them, stretch it).
const RELEASE_MS = 300;
let held = null; // { timer, pending }: a button is pressed; pending: a render waits for it
root.addEventListener("pointerdown", (e) => {
  if (held || !e.target.closest("[data-action]")) return;
  held = { pending: false, timer: setTimeout(release, ui.holdMs) };
});
window.addEventListener("pointerup", () => { if (held) setTimeout(release, RELEASE_MS); });
window.addEventListener("pointercancel", () => release());

function release() {
  if (!held) return;
  const { timer, pending } = held;
  held = null;
  clearTimeout(timer);
  if (pending) render();
}

root.addEventListener("click", (e) => {
  const el = e.target.closest("[data-action]");
  if (!el || el.disabled) return;
  e.preventDefault();
  const fn = actions[el.dataset.action];
  if (fn) fn(el);
});
root.addEventListener("click", () => release()); // after the action: the page may redraw now

// A second room link opened in the same tab changes only the fragment: no reload.
window.addEventListener("hashchange", () => {
  const code = roomFromLocation(location);
  if (!code || state.room) return;
  ui.form.code = code;
  openInvite(code);
});

root.addEventListener("input", (e) => {
  const key = e.target.dataset.form;
  if (key === "name") {
    // the server's rule (protocol/names.py): 1 to NAME_MAX user-perceived characters
    const fitted = fitName(e.target.value);
    if (fitted !== e.target.value) e.target.value = fitted;
  }
  if (key) ui.form[key] = e.target.value;
});

root.addEventListener("keydown", (e) => {
  if (e.key !== "Enter") return;
  if (e.target.dataset.form === "code") joinRoom();
  else if (e.target.dataset.form === "name") (ui.form.code ? joinRoom() : createRoom(true));
});

root.addEventListener("change", (e) => {
  if (e.target.dataset.setting === "auto") {
    ui.settings.auto = e.target.value;
    saveSetting("auto", ui.settings.auto);
    auto.paused = false;
    autoStep();
    return;
  }
  const key = e.target.dataset.option;
  if (!key || !isHost(state)) return;
  const el = e.target;
  const value = el.type === "checkbox" ? el.checked : el.type === "number" ? Number(el.value) : el.value;
  if (key === "game") return configure({ game: value, game_options: {} });
  if (key.startsWith("series.")) return configure({ series: seriesChange(state.snap.options.series, key, value) });
  if (key === "seed") ui.form.seed = value;
  if (key.startsWith("game_options.")) {
    const sub = key.slice("game_options.".length);
    const typed = gameOptionValue(state, state.snap.options.game, sub, value);
    return configure({ game_options: { ...(state.snap.options.game_options || {}), [sub]: typed } });
  }
  configure({ [key]: value });
});

// ---- keyboard -----------------------------------------------------------------------

document.addEventListener("keydown", (e) => {
  const field = e.target.closest?.("input, select, textarea, [contenteditable]");
  const intent = keyIntent(e.key, { ctrl: e.ctrlKey, meta: e.metaKey, alt: e.altKey }, Boolean(field));
  if (!intent) return;
  if (intent.type === "escape") {
    if (ui.help) ui.help = null;
    else if (ui.sel) ui.sel = null;
    else return;
    render();
    return;
  }
  if (intent.type === "help") return actions["how-to-play"]();
  if (ui.help || !racing() || e.target.closest?.("button")) return;
  e.preventDefault();
  const view = state.view;
  if (intent.type === "undo") {
    if (canUndo(state)) actions.undo();
  } else if (intent.type === "deal") {
    ui.sel = null;
    sendMove(stockMove(view));
  } else if (intent.type === "home") {
    if (ui.sel) sendMove(foundationMove(view, ui.sel.pile));
  } else if (intent.type === "pile") {
    keyPile(view, intent.pile);
  }
});

/** A pile's key: pick up its top card; again: one more card of the run; another pile's: move there. */
function keyPile(view, pile) {
  if (!view.piles[pile]) return;
  ui.dropped = false;
  if (ui.sel && ui.sel.pile === pile) ui.sel = growSelection(view, ui.sel);
  else if (ui.sel) {
    const move = dropMove(view, ui.sel, pile);
    ui.sel = null;
    if (move) return sendMove(move);
  } else ui.sel = pickUp(view, pile, null);
  render();
}

attachPointer(root, {
  pickUp: (pile, index) => (racing() ? pickUp(state.view, pile, index) : null),
  background() {
    if (ui.sel) { ui.sel = null; render(); }
  },
  dragStart(sel) {
    ui.sel = null;
    ui.drag = sel;
    render();
  },
  drop(sel, to) {
    ui.drag = null;
    ui.dropped = true; // the card is already where the pointer left it: no slide
    const move = racing() ? dropMove(state.view, sel, to) : null;
    if (move) sendMove(move);
    else render();
  },
  click: boardClick,
});

function racing() {
  const mine = me(state);
  return Boolean(state.view && state.snap && state.snap.state === "racing" && mine && mine.status === "racing");
}

/** Click-click moves: pick up, then click a destination; a quick second click sends home
 * (quick by the clicks' own times, `at`: the redraw after the first may take long on a busy
 * phone, and a double click then picked the card up and put it down). */
function boardClick(pile, index, at) {
  if (!racing()) return;
  ui.dropped = false;
  const view = state.view;
  const last = ui.lastClick;
  ui.lastClick = { pile, index, t: at };
  if (pileKind(pile) === "stock") {
    ui.sel = null;
    const move = stockMove(view);
    if (move) sendMove(move);
    return;
  }
  if (last && last.pile === pile && at - last.t < ui.doubleClickMs) {
    ui.lastClick = null;
    const move = foundationMove(view, pile);
    if (move) return sendMove(move);
  }
  if (ui.sel) {
    if (ui.sel.pile === pile) {
      ui.sel = null;
      return render();
    }
    const move = dropMove(view, ui.sel, pile);
    ui.sel = null;
    if (move) return sendMove(move);
    return render();
  }
  ui.sel = pickUp(view, pile, index);
  render();
}

// ---- rendering ---------------------------------------------------------------------------

// The page is drawn as a fresh tree on every message and the page morphed into it (morphdom):
// only what changed is touched, so the element that has the keyboard focus, an open <details>
// and a sliding card (anim.js) are the same elements after the redraw. When the morph still
// replaces the focused element (its place changed), its key finds its successor: the id, else
// the tag and every data-* attribute (and the aria-label), with its place among the elements
// that share them.
function focusKey(el) {
  if (!el || el === document.body) return null;
  if (el.id) return { sel: `#${CSS.escape(el.id)}`, i: 0 };
  const attrs = Object.entries(el.dataset).map(
    ([k, v]) => `[data-${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${CSS.escape(v)}"]`);
  const label = el.getAttribute("aria-label");
  if (label != null) attrs.push(`[aria-label="${CSS.escape(label)}"]`);
  if (!attrs.length) return null;
  const sel = el.tagName.toLowerCase() + attrs.join("");
  return { sel, i: [...root.querySelectorAll(sel)].indexOf(el) };
}

let drawnMoves = null; // the own board's move count when last drawn: a change is a move to animate

function render() {
  if (held) {
    held.pending = true;
    return;
  }
  const active = document.activeElement;
  const key = root.contains(active) ? focusKey(active) : null;
  const typed = key && "value" in active ? { value: active.value, start: active.selectionStart, end: active.selectionEnd } : null;
  const moved = state.view && drawnMoves != null && state.view.moves !== drawnMoves;
  const before = moved && !ui.dropped ? measure(root) : null;
  // a details box the reader opened (the results' verify box) stays open when drawn again
  const opened = [...root.querySelectorAll("details[open]")].map(focusKey).filter(Boolean);
  morph(root, renderApp(state, ui, Date.now()), typed ? active : null);
  for (const { sel, i } of opened) {
    const el = root.querySelectorAll(sel)[Math.max(0, i)];
    if (el instanceof HTMLDetailsElement) el.open = true;
  }
  if (state.snap) refreshRatings(state.snap, render);
  if (before) animate(root, before, state.view.game);
  drawnMoves = state.view ? state.view.moves : null;
  if (moved) ui.dropped = false;
  markHint(root, ui.hint, state.view);
  if (key && document.activeElement !== active) {
    const el = root.querySelectorAll(key.sel)[Math.max(0, key.i)];
    if (el) {
      el.focus();
      if (typed && el.type !== "checkbox" && el.tagName !== "SELECT") {
        el.value = typed.value;
        try { el.setSelectionRange(typed.start, typed.end); } catch { /* number inputs have no selection */ }
      }
    }
  }
}

/**
 * Morph the page (`root`'s children) into `tree`. Elements are matched by place, or by key:
 * the id, else data-key (the own board's face cards: board.js). Kept as they are:
 * - the text field being typed in (`typing`): its attributes are brought up to date but not
 *   its value, so an update arriving mid-typing keeps all the browser knows of the typing (a
 *   new copy lost a number field's selection, no setSelectionRange there, so "select all,
 *   type 4" over an update gave "48", and "0" over "180" sent 180);
 * - a <details> the reader opened;
 * - a sliding card's pointer-events (anim.js sets them for the slide, and clears them).
 */
const TYPED_INPUTS = new Set(["text", "number", "search", "email", "url", "tel", "password"]);
const morphOptions = (typing) => ({
  childrenOnly: true,
  getNodeKey: (node) => (node.nodeType === 1 ? node.id || node.getAttribute("data-key") || undefined : undefined),
  onBeforeElUpdated(from, to) {
    if (from === typing && to.tagName === from.tagName && to.type === from.type) {
      for (const { name } of [...from.attributes]) if (!to.hasAttribute(name)) from.removeAttribute(name);
      for (const { name, value } of to.attributes) if (name !== "value" && from.getAttribute(name) !== value) from.setAttribute(name, value);
      return false;
    }
    if (from.open && from.tagName === "DETAILS") to.open = true;
    const pe = from.style?.pointerEvents;
    if (pe && !to.style.pointerEvents) to.style.pointerEvents = pe;
    return true;
  },
});

function morph(target, tree, active) {
  const typing = active && (active.tagName === "TEXTAREA" || (active.tagName === "INPUT" && TYPED_INPUTS.has(active.type)))
    ? active : null;
  const next = document.createElement("div");
  next.append(tree);
  morphdom(target, next, morphOptions(typing));
}

function tick() {
  const texts = clockTexts(state, Date.now());
  if (ui.quick) texts.quick = quickText(state, ui, Date.now());
  if (ui.arena?.view) texts.arena = timeLeft(ui.arena.view, Date.now());
  for (const el of root.querySelectorAll("[data-clock]")) {
    const t = texts[el.dataset.clock];
    if (t != null && el.textContent !== t) el.textContent = t;
  }
}

{
  // a link to join an arena: /?arena=ID (the event page's "Join this arena")
  const id = arenaIdFrom(new URLSearchParams(location.search).get("arena"));
  if (id && ui.arena?.id !== id) {
    ui.form.arenaId = id;
    history.replaceState(null, "", "/");
  }
}

{
  const code = roomFromLocation(location);
  if (code && loadSession()?.room !== code) openInvite(code);
}

setInterval(tick, 100);
// The public room list stays fresh while someone is choosing a room.
setInterval(() => { if (!state.room && state.conn === "open") refreshLobby(); }, 10000);
// The dailies' live figures ("3 racing now"), on the landing page and beside a daily race.
setInterval(() => { if (!document.hidden && (!state.room || state.snap?.daily)) refreshDaily(); }, 5000);
// Exposed for the browser tests and for debugging from the console; not used by the page.
window.solrace = { get state() { return state; }, ui, conn, received, sounds: played, animated, redraw: () => render() };
render();
conn.start();
