// What survives a reload: the seat (room, token, host token, role, last event seen) in
// sessionStorage, so each tab keeps its own seat; the display name and the player key in
// localStorage.

const KEY = "solrace.session";
const NAME_KEY = "solrace.name";

export function loadSession() {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) || "null");
  } catch {
    return null;
  }
}

export function saveSession(s) {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}

const PLAYER_KEY = "solrace.playerKey";

/**
 * This browser's player key: a secret made once (32 random bytes, base64url) and sent in every
 * hello; the server keeps only its hash and lists this player's races under the public id it
 * derives (PROTOCOL.md, Identity). Null when storage is off (private mode): the page then says
 * hello without one and races anonymously.
 */
/** Take another device's key as this browser's (identity.js); false when storage is off. */
export function setPlayerKey(key) {
  try {
    localStorage.setItem(PLAYER_KEY, key);
    return true;
  } catch {
    return false;
  }
}

export function playerKey() {
  try {
    let key = localStorage.getItem(PLAYER_KEY);
    if (!key) {
      const bytes = crypto.getRandomValues(new Uint8Array(32));
      key = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      localStorage.setItem(PLAYER_KEY, key);
    }
    return key;
  } catch {
    return null;
  }
}

export function loadName() {
  return localStorage.getItem(NAME_KEY) || "";
}

export function saveName(name) {
  localStorage.setItem(NAME_KEY, name);
}

/**
 * The room code a link names: `/#CODE` (what the page shares), `/r/CODE` (what the
 * command-line tools print; the server redirects it to `/#CODE`) or `/?room=CODE`.
 */
export function roomFromLocation(loc) {
  const params = new URLSearchParams(loc.search);
  const q = params.get("room") || params.get("watch");
  const hash = decodeURIComponent((loc.hash || "").replace(/^#/, ""));
  const path = /^\/r\/([^/]+)\/?$/.exec(loc.pathname || "");
  const code = (q || hash || (path ? decodeURIComponent(path[1]) : "") || "").trim().toUpperCase();
  return /^[A-Z0-9]{3,32}$/.test(code) ? code : null;
}

/** The room a watch link (`/?watch=CODE`, printed by `solrace bot --create`) opens as a spectator. */
export function watchFromLocation(loc) {
  const code = (new URLSearchParams(loc.search).get("watch") || "").trim().toUpperCase();
  return /^[A-Z0-9]{3,32}$/.test(code) ? code : null;
}

/** Today's date as YYYY-MM-DD in local time: the text seed of the daily deal. */
export function todaySeed(d = new Date()) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** A player's own setting (auto-move, sound), kept in this browser for every room. */
export function loadSetting(key, fallback) {
  try {
    return localStorage.getItem(`solrace.${key}`) ?? fallback;
  } catch {
    return fallback;
  }
}

export function saveSetting(key, value) {
  try {
    localStorage.setItem(`solrace.${key}`, String(value));
  } catch {
    /* private mode: the setting lasts for this page only */
  }
}
