"""Which move a load-bot makes next, from nothing but its own view.

Bots must send moves the server accepts, or the benchmark measures the error
path. A player sees only its own view (no engine state with hidden cards), so
the policies read the visible tops. They are deliberately simple:

* Klondike (the default game): every visible card that can go home does, a
  waste card that fits a tableau pile goes there, else `deal`/`recycle`. With
  unlimited passes the deal/recycle cycle never runs out, so a race lasts as
  long as the benchmark wants, and the cards that do move are real moves.
  Tableau-to-tableau moves are left out: with top-card-only moves they can
  shuttle a King between empty piles forever.
* Putt Putt: a tableau top one rank off the foundation top (with wrap) goes
  home, else `deal`; the race then ends for real (won or dead), which the
  memory scenario needs ("Redis memory per finished room").
"""

from __future__ import annotations

from typing import Any

RANKS = "A23456789TJQK"
RED = {"D", "H"}


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def top(pile: list[Any]) -> str | None:
    """The visible top card of a pile, or None when empty or face down."""
    if not pile:
        return None
    last = pile[-1]
    return last if isinstance(last, str) else None


def _home_target(card: str, piles: dict[str, list[Any]]) -> str | None:
    """The foundation a Klondike card can go to (Ace to the first empty one)."""
    empty = None
    for name, pile in piles.items():
        if not name.startswith("f"):
            continue
        t = top(pile)
        if t is None:
            if not pile and empty is None:
                empty = name
            continue
        if t[1] == card[1] and rank(t) + 1 == rank(card):
            return name
    return empty if rank(card) == 1 else None


def _fits_tableau(card: str, onto: str | None, pile: list[Any]) -> bool:
    if not pile:
        return rank(card) == 13
    if onto is None:
        return False
    return (card[1] in RED) != (onto[1] in RED) and rank(card) + 1 == rank(onto)


def klondike_move(view: dict[str, Any]) -> str:
    piles: dict[str, list[Any]] = view["piles"]
    waste = top(piles.get("w", []))
    if waste is not None:
        dest = _home_target(waste, piles)
        if dest:
            return f"w-{dest}"
    for name, pile in piles.items():
        if name.startswith("t"):
            card = top(pile)
            if card is not None:
                dest = _home_target(card, piles)
                if dest:
                    return f"{name}-{dest}"
    if waste is not None:
        for name, pile in piles.items():
            if name.startswith("t") and _fits_tableau(waste, top(pile), pile):
                return f"w-{name}"
    if view.get("stock", 0) > 0:
        return "deal"
    return "recycle"


def puttputt_move(view: dict[str, Any]) -> str:
    piles: dict[str, list[Any]] = view["piles"]
    f1 = top(piles.get("f1", []))
    if f1 is not None:
        base = rank(f1)
        for name, pile in piles.items():
            card = top(pile) if name.startswith("t") else None
            if card is not None and (rank(card) - base) % 13 in (1, 12):
                return f"{name}-f1"
    return "deal"


POLICIES = {"klondike": klondike_move, "puttputt": puttputt_move}


def next_move(game: str, view: dict[str, Any] | None) -> str:
    """The bot's next move; `deal` when it has no view yet (legal at the start of both games)."""
    if view is None:
        return "deal"
    return POLICIES[game](view)
