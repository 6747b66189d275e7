// Card texts ("TH", "AS") and view pile items, turned into what the board draws.
// Kept free of the DOM so the rules of display can be tested in Node.

export const RANK_TEXT = "A23456789TJQK";
export const SUIT_SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RED = new Set(["D", "H"]);

/** Parse a card text into rank 1..13, suit letter, colour and a readable label. */
export function parseCard(text) {
  const rank = RANK_TEXT.indexOf(text[0]) + 1;
  const suit = text[1];
  if (rank < 1 || !(suit in SUIT_SYMBOL) || text.length !== 2) {
    throw new Error(`not a card: ${text}`);
  }
  return { text, rank, suit, red: RED.has(suit), rankLabel: rankLabel(rank), symbol: SUIT_SYMBOL[suit] };
}

/** "10" reads better than "T" on a card face. */
export function rankLabel(rank) {
  return rank === 10 ? "10" : RANK_TEXT[rank - 1];
}

/**
 * A view pile is a list of card texts and {hidden: n} runs; the board wants one entry per
 * physical card so that indexes match what the player sees and clicks.
 */
export function expandPile(items) {
  const out = [];
  for (const item of items || []) {
    if (typeof item === "string") out.push({ card: item });
    else for (let i = 0; i < (item.hidden || 0); i++) out.push({ hidden: true });
  }
  return out;
}

/** Number of physical cards in a view pile. */
export function pileSize(items) {
  let n = 0;
  for (const item of items || []) n += typeof item === "string" ? 1 : item.hidden || 0;
  return n;
}

/** The top card text of a view pile, or null when it is empty or its top is face down. */
export function topCard(items) {
  if (!items || !items.length) return null;
  const last = items[items.length - 1];
  return typeof last === "string" ? last : null;
}

/** What kind of pile a name denotes, from the rules' naming (t1, f3, r, s, w). */
export function pileKind(name) {
  switch (name[0]) {
    case "t": return "tableau";
    case "f": return "foundation";
    case "r": return "tail";
    case "s": return "stock";
    case "w": return "waste";
    default: return "other";
  }
}

/** A card text spelled for people, e.g. "10♥" (used in messages and aria labels). */
export function cardName(text) {
  const c = parseCard(text);
  return c.rankLabel + c.symbol;
}
