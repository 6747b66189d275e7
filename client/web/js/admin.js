// The operators' page (/admin, server/net/admin.py): every live process's rooms, a room's
// seats, kick and close, and this process's recent warnings. Everything it shows comes from
// `admin` requests over the same WebSocket the game uses; the token stays in this tab only.

import { Connection } from "./net.js";

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 2000;
let token = sessionStorage.getItem("solrace-admin") || "";
let inspected = null;
let conn = null;
let timer = null;

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.append(td);
  return td;
}

function table(headers) {
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  for (const h of headers) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    head.append(th);
  }
  t.createTBody();
  return t;
}

function status(text) {
  $("status").textContent = text;
}

async function ask(op, extra = {}) {
  const reply = await conn.request({ type: "admin", token, op, ...extra }, { wait: true });
  if (reply.type === "error") throw new Error(`${reply.code}: ${reply.message}`);
  return reply;
}

function showRooms(procs) {
  const t = table(["Room", "Process", "State", "Game", "Seats", "Connected", "Spectators", "Moves", "Moves/min", ""]);
  let count = 0;
  for (const proc of procs) {
    for (const r of proc.rooms) {
      count += 1;
      const row = t.tBodies[0].insertRow();
      cell(row, r.code, "code");
      cell(row, proc.proc.slice(0, 8) + (proc.here ? " (this)" : ""));
      cell(row, r.state);
      cell(row, r.game);
      cell(row, String(r.seats));
      cell(row, String(r.connected));
      cell(row, String(r.spectators));
      cell(row, String(r.moves));
      cell(row, String(r.moves_per_min));
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "Inspect";
      b.setAttribute("aria-label", `Inspect room ${r.code}`);
      b.addEventListener("click", () => inspect(r.code));
      cell(row, "").append(b);
    }
  }
  $("rooms").replaceChildren(count ? t : document.createTextNode("No live rooms."));
  $("rooms-section").hidden = false;
}

function showRoom(room) {
  $("room-code").textContent = room.code;
  const t = table(["Seat", "Name", "Status", "Moves", "Connected", ""]);
  for (const s of room.seats) {
    const row = t.tBodies[0].insertRow();
    cell(row, String(s.seat));
    cell(row, s.name + (s.bot ? " (bot)" : ""));
    cell(row, s.status);
    cell(row, String(s.moves));
    cell(row, s.connected ? "yes" : "no");
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = "Kick";
    b.setAttribute("aria-label", `Kick seat ${s.seat} (${s.name})`);
    b.addEventListener("click", () => act("kick", { room: room.code, seat: s.seat }));
    cell(row, "").append(b);
  }
  const p = document.createElement("p");
  p.textContent = `${room.game}, ${room.state}, round ${room.round}`;
  $("room").replaceChildren(p, t);
  $("room-section").hidden = false;
}

function showErrors(errors) {
  $("errors").replaceChildren(...errors.map((e) => {
    const li = document.createElement("li");
    li.textContent = `${new Date(e.at).toISOString()} ${e.level} ${e.logger}: ${e.message}`;
    return li;
  }));
  $("errors-section").hidden = false;
}

async function inspect(code) {
  inspected = code;
  try {
    showRoom((await ask("room", { room: code })).room);
  } catch (err) {
    status(String(err.message));
  }
}

async function act(op, extra) {
  try {
    showRoom((await ask(op, extra)).room);
    status(`${op} done`);
  } catch (err) {
    status(String(err.message));
  }
}

async function refresh() {
  try {
    showRooms((await ask("rooms")).procs);
    showErrors((await ask("errors")).errors);
    if (inspected) showRoom((await ask("room", { room: inspected })).room);
    status("");
  } catch (err) {
    status(String(err.message));
    if (String(err.message).startsWith("bad_token")) stop();
  }
}

function stop() {
  clearInterval(timer);
  timer = null;
}

function open() {
  stop();
  if (!conn) {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
    conn = new Connection(url, { onMessage() {}, onStatus() {}, onReady() {} });
    conn.start();
  }
  refresh();
  timer = setInterval(refresh, REFRESH_MS);
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  token = $("token").value;
  sessionStorage.setItem("solrace-admin", token);
  open();
});
$("close-room").addEventListener("click", () => {
  if (inspected && confirm(`Close room ${inspected}? Every seat is kicked.`)) act("close", { room: inspected });
});
if (token) {
  $("token").value = token;
  open();
}
