// Move animations: each card of the player's own board that changed piles slides from where
// it was to where it is now (FLIP: measure before the redraw, invert, play). Skipped for
// Leap Year (four decks: equal cards cannot be told apart), after a drag (the card is already
// where the pointer left it) and for people who ask their system for reduced motion.

const BOARD = ".board-wrap.mine";
export const animated = { count: 0 }; // for the page's tests

function keyed(root) {
  const seen = {};
  const out = new Map();
  for (const el of root.querySelectorAll(`${BOARD} .card.face[data-card]`)) {
    const card = el.dataset.card;
    seen[card] = (seen[card] || 0) + 1;
    out.set(`${card}#${seen[card]}`, el);
  }
  return out;
}

/** Where each card of the own board is now (call before the redraw). */
export function measure(root) {
  const out = new Map();
  for (const [key, el] of keyed(root)) out.set(key, { pile: el.dataset.pile, rect: el.getBoundingClientRect() });
  return out;
}

/** Slide the cards that changed piles since `before` (call after the redraw). */
export function play(root, before, game) {
  if (!before || !before.size || game === "leapyear") return;
  if (globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches) return;
  for (const [key, el] of keyed(root)) {
    const was = before.get(key);
    if (!was || was.pile === el.dataset.pile) continue;
    const now = el.getBoundingClientRect();
    const dx = was.rect.left - now.left;
    const dy = was.rect.top - now.top;
    if (Math.abs(dx) + Math.abs(dy) < 2 || typeof el.animate !== "function") continue;
    // A sliding card is drawn over the pile it left: it must not take that pile's clicks (the
    // first click of the next double-click there picked the card up again from its
    // foundation, and the second sent it back: `f1-t4` instead of the next card home).
    el.style.pointerEvents = "none";
    const slide = el.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], { duration: 180, easing: "ease-out" });
    slide.onfinish = slide.oncancel = () => { el.style.pointerEvents = ""; };
    animated.count++;
  }
}
