// Turning what the player pointed at into canonical move texts (RULES.md section 3).
// The client cannot know legality perfectly (hidden cards, game subtleties), so these
// functions propose the natural move and the server's answer decides; an illegal proposal
// comes back as an error that the page shows.

import { expandPile, parseCard, pileKind, pileSize, topCard } from "./cards.js";

/** Canonical text of a pile-to-pile move: ":N" appears exactly when N >= 2. */
export function moveText(from, to, count = 1) {
  return count >= 2 ? `${from}-${to}:${count}` : `${from}-${to}`;
}

/** Whether a game moves runs of cards (Tabby Cat, Manx, Klondike with moves=build). */
export function movesRuns(view) {
  if (view.game === "tabbycat" || view.game === "manx") return true;
  if (view.game === "klondike") return (view.options || {}).moves === "build";
  return false;
}

/**
 * What a click or a drag start on card `index` (0 = bottom, physical cards) of `pile`
 * picks up: {pile, count} or null when nothing there can move.
 */
export function pickUp(view, pile, index) {
  const items = view.piles[pile];
  if (!items) return null;
  const cards = expandPile(items);
  const size = cards.length;
  if (size === 0) return null;
  const kind = pileKind(pile);
  if (kind === "stock") return null;
  if (kind === "tail") return { pile, count: size };
  if (kind === "waste") return cards[size - 1].card ? { pile, count: 1 } : null;
  if (kind === "foundation") {
    return view.game === "klondike" && cards[size - 1].card ? { pile, count: 1 } : null;
  }
  if (index == null || index < 0 || index >= size) index = size - 1;
  if (cards[index].hidden) return null;
  if (!movesRuns(view)) return cards[size - 1].card ? { pile, count: 1 } : null;
  return { pile, count: size - index };
}

/** The move that drops a picked-up selection onto pile `to`, or null for no move. */
export function dropMove(view, sel, to) {
  if (!sel || !to || sel.pile === to) return null;
  const kind = pileKind(to);
  if (kind === "stock" || kind === "waste") return null;
  return moveText(sel.pile, to, sel.count);
}

/** `deal` while the stock has cards; Klondike's `recycle` when it is empty and the waste is not. */
export function stockMove(view) {
  const stock = pileSize(view.piles.s);
  if (stock > 0) return "deal";
  if (view.game === "klondike" && pileSize(view.piles.w) > 0) return "recycle";
  return null;
}

function foundations(view) {
  return Object.keys(view.piles).filter((p) => pileKind(p) === "foundation");
}

/**
 * The foundation move a double click on a card of `pile` asks for, computed from the visible
 * cards: Klondike (same suit, one up, Ace on empty), Leap Year (one up, any suit), Putt Putt
 * (f1, one up or down with wrap), Tabby Cat / Manx (a whole K..A run to an empty discard pile).
 * When no foundation fits visibly, the first foundation is proposed so that the server explains.
 */
export function foundationMove(view, pile) {
  const kind = pileKind(pile);
  if (kind !== "tableau" && kind !== "waste") return null;
  const items = view.piles[pile] || [];
  const top = topCard(items);
  if (!top) return null;
  const fs = foundations(view);
  if (!fs.length) return null;
  const card = parseCard(top);
  if (view.game === "tabbycat" || view.game === "manx") {
    // Only a whole K..A run is ever discarded; when the top 13 are not one, the server says why.
    const empty = fs.find((f) => pileSize(view.piles[f]) === 0) || fs[0];
    return moveText(pile, empty, 13);
  }
  if (view.game === "puttputt") return moveText(pile, "f1");
  for (const f of fs) {
    const ftop = topCard(view.piles[f]);
    if (view.game === "klondike") {
      if (!ftop ? card.rank === 1 : parseCard(ftop).suit === card.suit && parseCard(ftop).rank === card.rank - 1) {
        return moveText(pile, f);
      }
    } else if (ftop && parseCard(ftop).rank === card.rank - 1) {
      return moveText(pile, f);
    }
  }
  return moveText(pile, fs[0]);
}

/**
 * The keyboard's "press the same pile again": one more card of the movable run, back to one
 * after the whole run (games that move single cards stay at one).
 */
export function growSelection(view, sel) {
  const size = pileSize(view.piles[sel.pile]);
  const more = pickUp(view, sel.pile, size - sel.count - 1);
  return more && more.count > sel.count ? more : pickUp(view, sel.pile, size - 1);
}

function rankOf(card) {
  return parseCard(card).rank;
}

function klondikeHome(view) {
  const fs = foundations(view);
  const tops = fs.map((f) => topCard(view.piles[f]));
  const out = [];
  const sources = Object.keys(view.piles).filter((p) => pileKind(p) === "tableau" || pileKind(p) === "waste");
  for (const src of sources) {
    const top = topCard(view.piles[src]);
    if (!top) continue;
    const c = parseCard(top);
    const i = tops.findIndex((t) => (t ? parseCard(t).suit === c.suit && rankOf(t) === c.rank - 1 : c.rank === 1));
    if (i >= 0) out.push({ move: moveText(src, fs[i]), card: c });
  }
  return out;
}

/** Klondike's safe rule: a card goes home safely when no card of the other colour could still need it. */
function klondikeSafe(view, c) {
  if (c.rank <= 2) return true;
  const homeRank = {};
  for (const f of foundations(view)) {
    const t = topCard(view.piles[f]);
    if (t) homeRank[parseCard(t).suit] = rankOf(t);
  }
  const others = c.red ? ["C", "S"] : ["D", "H"];
  return others.every((s) => (homeRank[s] || 0) >= c.rank - 1);
}

function leapYearHome(view) {
  const fs = foundations(view);
  for (const src of Object.keys(view.piles).filter((p) => pileKind(p) === "tableau")) {
    const top = topCard(view.piles[src]);
    if (!top) continue;
    const r = rankOf(top);
    const f = fs.find((x) => {
      const t = topCard(view.piles[x]);
      return t && rankOf(t) === r - 1 && rankOf(t) < 13;
    });
    if (f) return moveText(src, f);
  }
  return null;
}

function tabbyDiscard(view) {
  const empty = foundations(view).find((f) => pileSize(view.piles[f]) === 0);
  if (!empty) return null;
  for (const src of Object.keys(view.piles).filter((p) => pileKind(p) === "tableau")) {
    const items = view.piles[src] || [];
    if (items.length < 13 || items.slice(-13).some((x) => typeof x !== "string")) continue;
    if (items.slice(-13).every((card, i) => rankOf(card) === 13 - i)) return moveText(src, empty, 13);
  }
  return null;
}

/** Klondike with nothing left to find: no face-down card, stock and waste empty. */
export function forcedFinish(view) {
  if (view.game !== "klondike" || view.won) return false;
  if (pileSize(view.piles.s) || pileSize(view.piles.w)) return false;
  return Object.values(view.piles).every((items) => (items || []).every((x) => typeof x === "string"));
}

/**
 * The next automatic move to a foundation, or null. `mode`: "off", "safe" (only cards no other
 * play could need: Klondike's safe rule; Leap Year's home moves and Tabby Cat / Manx discards,
 * which never block anything) or "all" (any card that fits). Putt Putt's foundation is the game
 * itself, so nothing there is automatic. A forced finish (see forcedFinish) plays every card.
 */
export function autoMove(view, mode) {
  if (!view || view.won || view.dead) return null;
  const finishing = forcedFinish(view);
  if (mode !== "safe" && mode !== "all" && !finishing) return null;
  switch (view.game) {
    case "klondike": {
      const fits = klondikeHome(view);
      const pick = finishing || mode === "all" ? fits[0] : fits.find((x) => klondikeSafe(view, x.card));
      return pick ? pick.move : null;
    }
    case "leapyear":
      return leapYearHome(view);
    case "tabbycat":
    case "manx":
      return tabbyDiscard(view);
    default:
      return null;
  }
}
