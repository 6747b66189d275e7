// Carry your identity to another device: this browser's player key (session.js) shown as a
// code and a QR code (uqr, a maintained QR library: client/web/node_modules), and a key from
// another device taken in its place. The key is a secret: whoever has it races as you.
// The QR code holds a link whose fragment (#key=...) carries the key: a fragment never goes to
// the server, and the page drops it from the address at once.

import { renderSVG } from "../node_modules/uqr/dist/index.mjs";
import { h } from "./dom.js";

const KEY_RE = /^[\x21-\x7e]{22,128}$/; // the server's rule (server/players.py): printable ASCII

export function validKey(text) {
  return KEY_RE.test(text);
}

/** The key in groups of four, easier to read out and type. */
export function keyCode(key) {
  return key.match(/.{1,4}/g).join(" ");
}

/** What was typed or pasted, as a key: groups' spaces dropped. */
export function keyFromCode(text) {
  return (text || "").replace(/\s+/g, "");
}

/** A link that hands the key to another device (the fragment stays in the browser). */
export function importLink(origin, key) {
  return `${origin}/#key=${encodeURIComponent(key)}`;
}

/** `#key=...` in the address: the key offered, once (the caller drops it from the address). */
export function keyFromLocation(loc) {
  const m = /^#key=([^&]+)$/.exec(loc.hash || "");
  if (!m) return null;
  const key = decodeURIComponent(m[1]);
  return validKey(key) ? key : null;
}

/** The landing page's panel: show the key (with the warning) or take another device's. */
export function identityPanel(ui, key, origin) {
  const id = ui.identity;
  return h("section.panel.identity", { dataset: { testid: "identity" } },
    h("h2", "Your identity on another device"),
    h("p.muted", "Your races, ratings and streak belong to a secret key kept in this browser. To be the same player on your phone, copy the key there."),
    id.offered ? h("div.notice.info", { role: "status" },
      h("p", "This link carries a player key from another device. Use it here? This browser's own key is replaced (keep a copy of it if it has races of its own)."),
      h("div.actions", h("button.primary", { dataset: { action: "identity-use-offered" } }, "Use it"),
        h("button", { dataset: { action: "identity-dismiss" } }, "Ignore"))) : null,
    id.shown && key ? h("div.identity-key", { dataset: { testid: "identity-key" } },
      h("p.warning", { role: "alert" }, "This code is a secret, like a password: whoever has it races as you. Show it only to your own devices."),
      h("code", { dataset: { testid: "identity-code" } }, keyCode(key)),
      qrCode(importLink(origin, key)),
      h("button.small", { dataset: { action: "identity-hide" } }, "Hide")) : null,
    !id.shown ? h("button", { dataset: { action: "identity-show", testid: "identity-show" } }, "Show my key") : null,
    h("label.field", h("span", "Key from another device"),
      h("input#identity-input", { autocomplete: "off", spellcheck: "false", placeholder: "paste the code", dataset: { form: "identityInput" } })),
    h("button", { dataset: { action: "identity-use", testid: "identity-use" } }, "Use this key"));
}

function qrCode(text) {
  const el = h("div.qr", { "aria-label": "QR code of a link that hands this key to another device", role: "img",
    dataset: { testid: "identity-qr" } });
  el.innerHTML = renderSVG(text, { border: 2 }); // uqr's own SVG markup (no outside text in it but the link)
  return el;
}
