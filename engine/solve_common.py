"""What every family solver shares: the position it starts from and the answer it gives.

A solver reads its position through the game's position text (RULES.md 4), the
one public, complete description of a position (stock order and face-down cards
included), so no solver depends on an engine class's private fields and none
can change the game it was given.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .cards import CARD_OF

#: verdicts a solver can give
WON = "won"
LOST = "lost"
UNKNOWN = "unknown"


@dataclass
class Position:
    """A parsed position text: the game line and every pile bottom to top.

    ``piles[name]`` lists card ints; ``down[name]`` counts the face-down cards at
    the bottom of a pile (Klondike only); the stock lists the first-dealt card first.
    """

    game: str
    options: dict[str, str] = field(default_factory=dict)
    piles: dict[str, list[int]] = field(default_factory=dict)
    down: dict[str, int] = field(default_factory=dict)

    def opt(self, name: str, default: int) -> int:
        """An integer item of the game line (an option or hidden state), or its default."""
        value = self.options.get(name)
        return default if value is None else int(value)


def parse_position(text: str) -> Position:
    """Read position text that ``Game.to_text()`` wrote (so it is known to be valid)."""
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    head = lines[0]
    pos = Position(game=head[1])
    for item in head[2:]:
        key, _, value = item.partition("=")
        pos.options[key] = value
    for name, *items in lines[1:]:
        cards = []
        down = 0
        for it in items:
            if it.startswith("["):
                down += 1
                it = it[1:-1]
            cards.append(CARD_OF[it])
        pos.piles[name] = cards
        pos.down[name] = down
    return pos


@dataclass
class Answer:
    """A family solver's answer: verdict, the winning moves (texts) when won, nodes expanded."""

    verdict: str
    moves: list[str]
    nodes: int


class BudgetSpent(Exception):
    """Raised inside a search when it has expanded its budget of positions."""


class SearchState(Protocol):
    """A family's mutable search position for ``search``: make/unmake moves, key, goal."""

    def key(self) -> Hashable: ...

    def won(self) -> bool: ...

    def moves(self) -> list[Any]: ...

    def apply(self, move: Any) -> None: ...

    def undo(self, move: Any) -> None: ...


def search(state: SearchState, budget: int) -> tuple[str, list[Any], int]:
    """Depth-first reachability search with a visited set; exact unless the budget runs out.

    Iterative (an explicit stack of move iterators), since a Klondike or Tabby Cat
    line can run thousands of moves deep. Returns (verdict, moves from the start
    to a won state, positions expanded). Every position is expanded at most once,
    so when the stack empties no won position is reachable: "lost".
    """
    if state.won():
        return WON, [], 0
    seen = {state.key()}
    nodes = 1
    if budget < 1:
        return UNKNOWN, [], 0
    stack = [iter(state.moves())]
    path: list[Any] = []
    add = seen.add
    while stack:
        m = next(stack[-1], None)
        if m is None:
            stack.pop()
            if path:
                state.undo(path.pop())
            continue
        state.apply(m)
        k = state.key()
        if k in seen:
            state.undo(m)
            continue
        add(k)
        path.append(m)
        if state.won():
            return WON, path, nodes
        nodes += 1
        if nodes > budget:
            return UNKNOWN, [], nodes - 1
        stack.append(iter(state.moves()))
    return LOST, [], nodes


#: ``seen`` value of a position proved lost (its strongly connected component completed)
PROVED_LOST = -1


def search_run(
    state: SearchState, budget: int, seen: dict[Hashable, int]
) -> tuple[str, list[Any], int]:
    """One run of a restartable depth-first search (``search_restarts``); exact when it ends.

    Like ``search`` but with Tarjan's bookkeeping of strongly connected components:
    ``seen`` maps each visited position to its index, or to ``PROVED_LOST`` once its
    component is complete. When a component completes without a win, every position in
    it is lost: each of its moves leads into the component or into a component completed
    before (lost, by induction), and none of its positions is won (the search stops at
    the first won one). So ``seen``'s ``PROVED_LOST`` entries stay true across runs that
    try moves in other orders. When the run's ``budget`` of expanded positions is spent,
    the positions whose component is not complete are removed from ``seen`` (they are
    expanded again by a later run) and the verdict is "unknown". Returns (verdict, moves
    to a won state, positions expanded in this run).
    """
    k0 = state.key()
    if seen.get(k0) == PROVED_LOST:
        return LOST, [], 0
    if state.won():
        return WON, [], 0
    if budget < 1:
        return UNKNOWN, [], 0
    index = 0
    seen[k0] = index
    low = [index]  # lowlink per frame of the depth-first stack
    comp = [k0]  # Tarjan's stack: visited positions whose component is not complete
    keys = [k0]  # key per frame
    stack = [iter(state.moves())]
    path: list[Any] = []
    nodes = 1
    get = seen.get
    #: optional: True when a position proved lost can do all this one can (Klondike's talon)
    dominated = getattr(state, "dominated", None)
    while stack:
        m = next(stack[-1], None)
        if m is None:
            # the frame is finished: complete its component or pass its lowlink up
            stack.pop()
            k = keys.pop()
            lk = low.pop()
            i = seen[k]
            if lk == i:
                while True:
                    w = comp.pop()
                    seen[w] = PROVED_LOST
                    if w == k:
                        break
            elif low and lk < low[-1]:
                low[-1] = lk
            if path:
                state.undo(path.pop())
            continue
        state.apply(m)
        k = state.key()
        j = get(k)
        if j is not None:
            state.undo(m)
            if j != PROVED_LOST and j < low[-1]:
                low[-1] = j
            continue
        if state.won():
            path.append(m)
            return WON, path, nodes
        if dominated is not None and dominated(k, seen):
            # as good as a position proved lost, so lost itself (the family's proof)
            seen[k] = PROVED_LOST
            state.undo(m)
            continue
        if nodes >= budget:
            state.undo(m)
            for w in comp:
                del seen[w]
            while path:
                state.undo(path.pop())
            return UNKNOWN, [], nodes
        nodes += 1
        index += 1
        seen[k] = index
        comp.append(k)
        keys.append(k)
        low.append(index)
        path.append(m)
        stack.append(iter(state.moves()))
    return LOST, [], nodes
