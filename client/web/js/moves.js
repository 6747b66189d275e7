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
