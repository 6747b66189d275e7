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

const RANK_WORDS = ["Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King"];
const SUIT_WORDS = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };

/** A card as a screen reader should say it: "10 of hearts", "Queen of spades". */
export function cardSpoken(text) {
  const c = parseCard(text);
  return `${RANK_WORDS[c.rank - 1]} of ${SUIT_WORDS[c.suit]}`;
}

const PILE_WORDS = { s: "the stock", w: "the waste", r: "the tail" };

/** A pile name as the table shows it: "t3" -> "pile 3", "f2" -> "foundation 2", "w" -> "the waste". */
export function pileName(name) {
  const m = /^([tf])(\d{1,2})$/.exec(name);
  if (m) return `${m[1] === "t" ? "pile" : "foundation"} ${m[2]}`;
  return PILE_WORDS[name] || name;
}

/**
 * A server message in the table's words: card texts become the faces drawn ("JC" -> "J♣",
 * "TH" -> "10♥") and pile names the piles' names ("t1" -> "pile 1"); the move the refusal
 * repeats at its start is dropped (the player just made it).
 */
export function tableWords(text) {
  if (!text) return text;
  const body = text.replace(/^(?:[a-z]\d{0,2}-[a-z]\d{0,2}(?::\d+)?|deal|recycle): /, "");
  return body
    .replace(/(?<![\w'])([A2-9TJQK])([CDHS])(?![\w'])/g, (card) => cardName(card))
    .replace(/(?<![\w'-])(?:pile )?([tf]\d{1,2}|[swr])(?![\w'-])/g, (_, pile) => pileName(pile));
}
