// The solver's answers on the page: the practice hint (solo rooms with hints on) and the
// post-race verdicts (the `solved` event, kept in the results). The server decides both;
// this only shows them.

/** The pile a move text takes cards from, and how many: "t2-t5:3", "w-f1", "deal", "recycle". */
export function hintSource(move) {
  if (move === "deal" || move === "recycle") return { pile: "s", count: 1 };
  const m = /^([a-z]+\d*)-([a-z]+\d*)(?::(\d+))?$/.exec(move || "");
  return m ? { pile: m[1], count: m[3] ? Number(m[3]) : 1 } : null;
}

/** A hint still applies while the player has not moved since it was asked. */
export function currentHint(hint, view) {
  return hint && view && hint.n === view.moves + 1 ? hint : null;
}

/** The hint in words, for the race bar. */
export function hintText(hint) {
  if (!hint) return "";
  if (hint.verdict === "won" && hint.move) return `Hint: ${hint.move}`;
  if (hint.verdict === "lost") return "No win from here";
  return "The solver cannot tell";
}

/** Mark the cards the hinted move picks up on the player's own board (class `hint`). */
export function markHint(root, hint, view) {
  for (const el of root.querySelectorAll(".hint-card")) el.classList.remove("hint-card");
  const now = currentHint(hint, view);
  const src = now && now.move ? hintSource(now.move) : null;
  if (!src) return;
  const pile = root.querySelector(`.board-wrap.mine .pile[data-pile="${src.pile}"]`);
  if (!pile) return;
  const size = Number(pile.dataset.count || 0);
  const cards = [...pile.querySelectorAll(".card[data-index]")].filter((el) => Number(el.dataset.index) >= size - src.count);
  for (const el of cards.length ? cards : [pile]) el.classList.add("hint-card");
}

const WORDS = { won: "winnable", lost: "not winnable", unknown: "unknown (the solver ran out of budget)" };

/** "Was it winnable?" in words, from the results (null while the solver is still at it). */
export function verdictLines(results, players = []) {
  const s = results && results.solved;
  if (!s) return null;
  const lines = [`The deal was ${WORDS[s.deal] || s.deal}${s.deal_moves ? ` (the solver won it in ${s.deal_moves} moves)` : ""}.`];
  for (const [seat, verdict] of Object.entries(s.seats || {})) {
    const p = players.find((x) => String(x.seat) === seat);
    lines.push(`${p?.name || `Seat ${seat}`}'s final position: ${WORDS[verdict] || verdict}.`);
  }
  return lines;
}
