// What the pages with their own address (/replay/ID, /player/ID) share: reading the server's
// JSON, the header, and how a missing or hidden record is said.

import { h } from "./dom.js";

/** GET a JSON URL: {ok, status, body}; a 404 is asked again `retry404` times, 0.7 s apart
 * (a race's record is written just after its results, so a fresh link may be early). */
export async function fetchJson(url, { retry404 = 0 } = {}) {
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await fetch(url, { headers: { Accept: "application/json" } });
    } catch (err) {
      return { ok: false, status: 0, body: { error: `the server cannot be reached (${err.message})` } };
    }
    if (res.status === 404 && attempt < retry404) {
      await new Promise((r) => setTimeout(r, 700));
      continue;
    }
    const body = await res.json().catch(() => ({}));
    return { ok: res.ok, status: res.status, body };
  }
}

/** The pages' header: the logo (the landing page) and the pages one browses. */
export function pageHeader() {
  return h("header.top", h("a.logo", { href: "/", "aria-label": "solrace: the landing page" }, "sol", h("b", "race")), h("span.spacer"),
    h("nav.page-nav", { "aria-label": "Pages" },
      h("a", { href: "/leaderboard" }, "Leaderboards"),
      h("a", { href: "/dailies" }, "Past dailies"),
      h("a", { href: "/ratings" }, "Ratings")));
}

/** The panel shown instead of a page whose data did not come. */
export function pageError(got, what) {
  let text = got.body?.error || `the server answered ${got.status}`;
  if (got.status === 404) text = `There is no such ${what} (or it has expired).`;
  // a player is kept from their first finished race with a key (nothing at hello)
  if (got.status === 404 && what === "player") text = "No finished races for this player yet (or they have expired).";
  if (got.status === 403 && got.body?.reveal_at) {
    text = `This is a daily race: it stays hidden until the day ends (${new Date(got.body.reveal_at).toLocaleString()}).`;
  }
  return h("main.home", h("section.panel.page-error", { dataset: { testid: "page-error", status: String(got.status) } },
    h("p", text), h("a", { href: "/" }, "Back to solrace")));
}

/** "1st", "2nd", "3rd", "11th"; "–" for none. */
export function placeText(n) {
  if (n == null) return "–";
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
}
