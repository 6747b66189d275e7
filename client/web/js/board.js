// Drawing one engine view as a card table: a pure function of (view, selection state).
// Every card and pile carries data-pile / data-index so input handling can work from the
// DOM alone, and data-card gives tests and assistive tech the card's text.

import { h } from "./dom.js";
import { cardSpoken, expandPile, parseCard, pileKind, pileName, pileSize } from "./cards.js";

const HIDDEN_STEP = 0.12;   // fan offset of a face-down card, in card heights
const FACEUP_STEP = 0.27;   // fan offset of a face-up card

/** Rows of pile names (null = gap) and the column count each game's table uses. */
export function tableLayout(view) {
  const names = Object.keys(view.piles);
  const of = (kind) => names.filter((n) => pileKind(n) === kind);
  const t = of("tableau"), f = of("foundation");
  switch (view.game) {
    case "klondike":
      return { cols: 7, maxSpan: 3.4, rows: [["s", "w", null, ...f], t] };
    case "puttputt":
      return { cols: 7, maxSpan: 2.4, rows: [t, ["s", "f1"]] };
    case "tabbycat":
    case "manx":
      return { cols: 5, maxSpan: 4.2, rows: [["s", ...f], [...t, "r"]] };
    case "leapyear":
      return { cols: 9, maxSpan: 3.2, rows: [["s", ...f.slice(0, 8)], [null, ...f.slice(8)], [null, ...t]] };
    default:
      return { cols: Math.max(t.length, f.length + 1, 4), maxSpan: 3, rows: [[...of("stock"), ...of("waste"), ...f], [...t, ...of("tail")]] };
  }
}

function cardFace(text) {
  const c = parseCard(text);
  const corner = h("span.corner", h("span.rank", c.rankLabel), h("span.suit", c.symbol));
  return [corner, h("span.pip", c.symbol), h("span.corner.br", h("span.rank", c.rankLabel), h("span.suit", c.symbol))];
}

/** One card element; `entry` is {card: "TH"} or {hidden: true}. `keyed`: the player's own
 * board, whose face cards carry data-key (pile, place and card): the redraw's morph keeps a
 * card's element only while that card stays where it is (app.js), so a sliding card (anim.js)
 * is never reused for another. */
export function cardEl(entry, pile, index, extra = {}, keyed = false) {
  if (entry.hidden) {
    return h("div.card.back", { dataset: { pile, index: String(index) }, role: "img", "aria-label": "face-down card", ...extra });
  }
  const c = parseCard(entry.card);
  return h(`div.card.face.${c.red ? "red" : "black"}`, {
    dataset: { pile, index: String(index), card: entry.card, ...(keyed ? { key: `${pile}.${index}.${entry.card}` } : {}) },
    role: "img",
    "aria-label": cardSpoken(entry.card),
    title: `${c.rankLabel}${c.symbol}`,
    ...extra,
  }, cardFace(entry.card));
}

function cardClasses(index, size, sel, drag, pile) {
  const cls = [];
  if (sel && sel.pile === pile && index >= size - sel.count) cls.push("selected");
  if (drag && drag.pile === pile && index >= size - drag.count) cls.push("lifted");
  return cls.join(" ");
}

function fanPile(name, cards, layout, ui) {
  const steps = cards.map((c) => (c.hidden ? HIDDEN_STEP : FACEUP_STEP));
  const raw = steps.slice(0, -1).reduce((a, b) => a + b, 0);
  const scale = raw > layout.maxSpan ? layout.maxSpan / raw : 1;
  let off = 0;
  const els = cards.map((entry, i) => {
    const el = cardEl(entry, name, i, { class: cardClasses(i, cards.length, ui.sel, ui.drag, name) || null,
      style: { top: `calc(var(--ch) * ${off.toFixed(3)})`, "z-index": String(i + 1) } }, layout.keyed);
    off += steps[i] * scale;
    return el;
  });
  const span = cards.length ? off - steps[cards.length - 1] * scale : 0;
  return { els, span };
}

function emptySlot(name, label) {
  return h("div.slot", { dataset: { pile: name } }, label);
}

function slotLabel(view, name) {
  const kind = pileKind(name);
  if (kind === "foundation") return view.game === "tabbycat" || view.game === "manx" ? "K→A" : view.game === "puttputt" ? "" : "A";
  if (kind === "tail") return ""; // the pile's own label says "tail" already
  if (kind === "stock") return view.game === "klondike" && pileSize(view.piles.w) > 0 ? "↺" : "∅";
  if (kind === "tableau" && view.game === "klondike") return "K";
  return "";
}

/** What is left of the stock in words: the card count (also on the badge), deals, passes. */
function stockWords(view) {
  const parts = [`${view.stock ?? pileSize(view.piles.s)} in stock`];
  const more = stockCaption(view);
  if (more) parts.push(`${more} left`);
  return parts.join(", ");
}

/** The short caption drawn on the stock itself: deals or passes left (the badge counts cards). */
function stockCaption(view) {
  if (view.deals_left != null) return `${view.deals_left} deal${view.deals_left === 1 ? "" : "s"}`;
  if (view.passes_left != null) return `${view.passes_left} pass${view.passes_left === 1 ? "" : "es"}`;
  return "";
}

function pileEl(view, name, layout, ui) {
  const items = view.piles[name] || [];
  const cards = expandPile(items);
  const kind = pileKind(name);
  const size = cards.length;
  const attrs = { dataset: { pile: name, kind, count: String(size) } };
  const label = kind === "tail" ? h("div.pile-label", "tail") : null;
  if (kind === "stock") {
    const words = stockWords(view);
    const top = size
      ? h("div.card.back.stock-top", { dataset: { pile: name, index: String(size - 1) }, role: "button", "aria-label": `Stock: ${words}` },
        h("span.badge", { "aria-hidden": "true" }, String(size)))
      : emptySlot(name, slotLabel(view, name));
    const caption = stockCaption(view);
    return h("div.pile.stock", { ...attrs, title: words }, top,
      caption ? h("div.pile-caption", { "aria-hidden": "true" }, caption) : null);
  }
  if (kind === "tableau" || kind === "tail") {
    if (!size) return h(`div.pile.fan.${kind}`, attrs, label, emptySlot(name, slotLabel(view, name)));
    const { els, span } = fanPile(name, cards, layout, ui);
    return h(`div.pile.fan.${kind}`, { ...attrs, style: { height: `calc(var(--ch) * ${(1 + span).toFixed(3)})` } }, label, els);
  }
  if (kind === "waste") {
    // Only the visible top cards are drawn, fanned sideways (draw three shows up to 3).
    const shown = cards.slice(-3).filter((c) => c.card);
    const start = size - shown.length;
    const els = shown.map((entry, k) => cardEl(entry, name, start + k, {
      class: cardClasses(start + k, size, ui.sel, ui.drag, name) || null,
      style: { left: `calc(var(--cw) * ${(0.22 * k).toFixed(2)})`, "z-index": String(k + 1) } }, layout.keyed));
    return h("div.pile.waste", attrs, size && !els.length ? cardEl({ hidden: true }, name, size - 1) : null,
      els.length ? els : size ? null : emptySlot(name, ""));
  }
  // foundation: the top card, with the count of cards below it
  if (!size) return h("div.pile.foundation", attrs, emptySlot(name, slotLabel(view, name)));
  const topEntry = cards[size - 1];
  return h("div.pile.foundation", attrs,
    size > 1 ? h("div.card.under", { "aria-hidden": "true" }) : null,
    cardEl(topEntry, name, size - 1, { class: cardClasses(size - 1, size, ui.sel, ui.drag, name) || null }, layout.keyed),
    size > 1 ? h("span.badge", String(size)) : null);
}

/** The whole table for one view; `ui` holds {sel, drag} (only on the player's own board);
 * `opts.keyed`: the cards carry data-key (cardEl; one keyed board a page). */
export function renderBoard(view, ui = {}, opts = {}) {
  const layout = { ...tableLayout(view), keyed: Boolean(opts.keyed) };
  const rows = layout.rows.map((row) =>
    h("div.board-row", row.map((name) => (name && view.piles[name] ? pileEl(view, name, layout, ui) : h("div.pile.gap")))));
  return h(`div.board.game-${view.game}`, {
    dataset: { game: view.game, moves: String(view.moves), board: opts.owner ?? "me" },
    style: { "--cols": String(layout.cols) },
  }, rows);
}
