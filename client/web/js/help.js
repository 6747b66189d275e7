// "How to play": each game's rules in plain words, written from docs/RULES.md (section 5, the
// engine's contract), so the page explains exactly what the server enforces. When a rule changes
// there, change it here too. Plus how a race works and how to play with mouse, touch and keys.

import { h } from "./dom.js";

/** Per game: the goal, then the rules as short sentences. Keys are the engine's game ids. */
export const RULES = {
  tabbycat: {
    goal: "Build four runs from King down to Ace and discard them.",
    rules: [
      "The table: four piles of one card each, a stock of 48 cards, four empty discard piles and an empty tail (a spare pile).",
      "A card goes on the card one rank above it, in any suit: a 7 on an 8, a Queen on a King, and a King on an Ace (ranks wrap round).",
      "The top run of a pile (cards lying on each other that way), or the top part of it, moves as one onto an empty pile or onto a card one rank above the run's lowest card.",
      "The tail: while it is empty you may put any top part of a run there. Only the whole tail moves out again, onto an empty pile or a card that takes its lowest card.",
      "When the top 13 cards of a pile run King, Queen, … 2, Ace, move them to an empty discard pile (double click the pile). Discarded cards stay there.",
      "Deal at any time: one card from the stock onto each of the four piles, empty ones too. There are 12 deals and no redeal.",
      "You win with all four discard piles full; you are stuck when no move is left.",
    ],
  },
  manx: {
    goal: "Build four runs from King down to Ace and discard them (Tabby Cat with a smaller tail).",
    rules: [
      "The table: four piles of one card each, a stock of 48 cards, four empty discard piles and an empty tail (a spare pile).",
      "A card goes on the card one rank above it, in any suit: a 7 on an 8, a Queen on a King, and a King on an Ace (ranks wrap round).",
      "The top run of a pile, or the top part of it, moves as one onto an empty pile or onto a card one rank above the run's lowest card.",
      "The tail: while it is empty you may put one card there, the top card of any pile. It moves out onto an empty pile or a card that takes it.",
      "When the top 13 cards of a pile run King, Queen, … 2, Ace, move them to an empty discard pile (double click the pile). Discarded cards stay there.",
      "Deal at any time: one card from the stock onto each of the four piles, empty ones too. There are 12 deals and no redeal.",
      "You win with all four discard piles full; you are stuck when no move is left.",
    ],
  },
  puttputt: {
    goal: "Clear all seven piles onto the foundation (Golf, with King and Ace next to each other).",
    rules: [
      "The table: seven piles of five cards, all face up, one card on the foundation and 16 cards in the stock.",
      "Move the top card of any pile to the foundation when it is one rank above or below the foundation's top card, whatever the suit. Ace and King are neighbours both ways: King, Ace, 2.",
      "Nothing is ever put on the piles, and an empty pile stays empty.",
      "Deal at any time: the next stock card goes onto the foundation, whatever its rank.",
      "You win when the seven piles are empty, even with cards left in the stock; you are stuck when no move is left.",
    ],
  },
  klondike: {
    goal: "Bring all 52 cards to the four foundations, each built from Ace to King in one suit.",
    rules: [
      "The table: seven piles of 1 to 7 cards, only the top card of each face up, and 24 cards in the stock.",
      "On the table, a card goes on a card one rank higher of the other colour: a red 6 on a black 7. Only a King goes into an empty pile.",
      "By default only the top card of a pile moves. With the room option “Moves: any run”, any face-up run moves as one (into an empty pile, a run that starts with a King).",
      "Foundations build up by suit from the Ace; an Ace goes on any empty foundation. A foundation's top card may come back onto the table.",
      "A face-down card that is uncovered turns face up by itself.",
      "Click the stock to turn one card (or three, with “Draw: three”) onto the waste; the waste's top card can be played. When the stock is empty, click it to turn the waste over and go through again (as often as you like, unless the room sets “Passes”).",
      "You win with all 52 cards on the foundations; you are stuck when no card can ever be played again.",
    ],
  },
  leapyear: {
    goal: "Bring all 208 cards of four decks to the 16 foundations.",
    rules: [
      "The table: the 16 Aces start the 16 foundations, eight piles get one card each, and the other 184 cards are the stock.",
      "Move the top card of a pile onto a foundation whose top card is one rank lower, in any suit: a 2 on an Ace, a 3 on a 2, up to the King, which ends that foundation.",
      "Cards are never built on the table, and nothing comes back from a foundation.",
      "Deal at any time: one card from the stock onto each of the eight piles, empty ones too (23 deals). Empty piles are filled only by deals.",
      "You win with all 208 cards on the foundations; you are stuck when no move is left.",
    ],
  },
};

export const RACE_RULES = [
  "Everyone in the room gets the same deal: the server shuffles once, and proves it afterwards (“Verify this race” under the results).",
  "Progress is the share of the cards you have brought home. Everyone sees everyone's progress live.",
  "The race ends when nobody is still playing, or at the time limit. Whoever cleared the table ranks first, fastest first; everyone else follows by progress, and on equal progress whoever got there first.",
  "Stuck? Resign to stop your clock; your progress still counts.",
];

export const CONTROLS = [
  ["Click a card, then click where it goes", "move it (or drag it there)"],
  ["Double click a card", "send it to a foundation"],
  ["Click the stock, or press Space", "deal"],
  ["Press a pile's number (1–9), then another's", "move between piles (0 or F: to a foundation; W: the waste)"],
  ["Ctrl+Z", "undo, when the room allows it"],
  ["Esc", "drop the card you picked up"],
];

/** The "How to play" dialog for `game` (the games list comes from the server's welcome). */
export function helpDialog(game, games) {
  const known = games.filter((g) => RULES[g.id]);
  const id = RULES[game] ? game : known[0]?.id || "klondike";
  const rules = RULES[id];
  const title = games.find((g) => g.id === id)?.title || id;
  return h("div.help-backdrop", { dataset: { action: "close-help" } },
    h("section.panel.help", { role: "dialog", "aria-modal": "true", "aria-labelledby": "help-title", tabindex: "-1",
      dataset: { testid: "help", game: id, action: "inside-help" } },
      h("div.panel-head",
        h("h2#help-title", `How to play ${title}`),
        h("button.small.ghost", { dataset: { action: "close-help" }, "aria-label": "Close how to play" }, "Close")),
      h("nav.help-games", { "aria-label": "Games" }, known.map((g) =>
        h(`button.small${g.id === id ? ".on" : ""}`, { dataset: { action: "help-game", game: g.id }, "aria-pressed": String(g.id === id) }, g.title))),
      h("p.help-goal", h("strong", "Goal: "), rules.goal),
      h("ul.help-rules", rules.rules.map((r) => h("li", r))),
      h("h3", "The race"),
      h("ul.help-rules", RACE_RULES.map((r) => h("li", r))),
      h("h3", "Controls"),
      h("dl.help-keys", CONTROLS.map(([k, v]) => [h("dt", k), h("dd", v)]))));
}
