// Pointer input on the player's own board: one code path for mouse, pen and touch.
// A press that moves more than a few pixels becomes a drag (a floating copy of the picked-up
// cards follows the pointer; the drop target is the pile under it); otherwise it is a click.
// What a click or drop means is decided by app.js, which knows the view.

const DRAG_THRESHOLD = 6;

function pileAt(x, y, boardSelector) {
  const el = document.elementFromPoint(x, y);
  const pile = el && el.closest("[data-pile]");
  if (!pile || !pile.closest(boardSelector)) return null;
  return pile.dataset.pile;
}

/**
 * @param {Element} root element that holds the board (re-rendered freely underneath)
 * @param {object} h handlers: pickUp(pile, index) -> sel|null, click(pile, index|null, at),
 *   background(), dragStart(sel), drop(sel, to|null)
 */
export function attachPointer(root, h, boardSelector = ".board-wrap.mine") {
  let press = null;
  let drag = null;
  let target = null;

  function markTarget(name) {
    if (name === target) return;
    root.querySelectorAll(".drop-target").forEach((el) => el.classList.remove("drop-target"));
    target = name;
    if (name) root.querySelectorAll(`${boardSelector} .pile[data-pile="${name}"]`).forEach((el) => el.classList.add("drop-target"));
  }

  function startDrag(e) {
    const sel = h.pickUp(press.pile, press.index);
    if (!sel) return false;
    const cards = [...root.querySelectorAll(`${boardSelector} .card[data-pile="${sel.pile}"][data-index]`)]
      .filter((el) => Number(el.dataset.index) >= Number(el.closest(".pile").dataset.count) - sel.count);
    if (!cards.length) return false;
    const first = cards[0].getBoundingClientRect();
    const ghost = document.createElement("div");
    ghost.className = "drag-ghost";
    ghost.style.left = `${first.left}px`;
    ghost.style.top = `${first.top}px`;
    // Card sizes come from container units that do not resolve outside the board: pin them.
    ghost.style.setProperty("--cw", `${first.width}px`);
    ghost.style.setProperty("--ch", `${first.height}px`);
    for (const el of cards) {
      const r = el.getBoundingClientRect();
      const copy = el.cloneNode(true);
      copy.classList.remove("selected");
      copy.style.left = `${r.left - first.left}px`;
      copy.style.top = `${r.top - first.top}px`;
      copy.style.width = `${r.width}px`;
      copy.style.height = `${r.height}px`;
      ghost.append(copy);
    }
    document.body.append(ghost);
    drag = { sel, ghost, dx: e.clientX - first.left, dy: e.clientY - first.top };
    h.dragStart(sel);
    return true;
  }

  root.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || press) return;
    const inBoard = e.target.closest(boardSelector);
    if (!inBoard) return;
    const pileEl = e.target.closest("[data-pile]");
    if (!pileEl) {
      h.background();
      return;
    }
    e.preventDefault();
    const card = e.target.closest(".card[data-index]");
    press = { x: e.clientX, y: e.clientY, id: e.pointerId, pile: pileEl.dataset.pile,
      index: card ? Number(card.dataset.index) : null };
  });

  window.addEventListener("pointermove", (e) => {
    if (!press || e.pointerId !== press.id) return;
    if (!drag) {
      if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < DRAG_THRESHOLD) return;
      if (!startDrag(e)) { press.noDrag = true; return; }
    }
    drag.ghost.style.left = `${e.clientX - drag.dx}px`;
    drag.ghost.style.top = `${e.clientY - drag.dy}px`;
    markTarget(pileAt(e.clientX, e.clientY, boardSelector));
  });

  function finish(e, cancelled) {
    if (!press || e.pointerId !== press.id) return;
    const p = press;
    press = null;
    if (drag) {
      const d = drag;
      drag = null;
      d.ghost.remove();
      const to = cancelled ? null : pileAt(e.clientX, e.clientY, boardSelector);
      markTarget(null);
      h.drop(d.sel, to);
      return;
    }
    // `at`: when the press was released (the event's own time, not when this handler runs: a
    // busy page may run the second click of a double click long after the first was done)
    if (!cancelled && !p.noDrag) h.click(p.pile, p.index, e.timeStamp);
  }

  window.addEventListener("pointerup", (e) => finish(e, false));
  window.addEventListener("pointercancel", (e) => finish(e, true));
}
