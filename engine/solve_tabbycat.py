"""Tabby Cat and Manx: a depth-first search with a transposition table.

Key: the four tableau piles, the tail and the stock's length (the discard piles
follow: they hold what is nowhere else, and which of f1..f4 holds a run does
not matter). While the stock has cards the piles are told apart, since a deal
gives each pile its own next card; once it is empty they are interchangeable,
so the key sorts them and moves onto an empty pile go to the first empty one.

Ranks only. No Tabby Cat or Manx rule looks at a suit: a card lies on another by
rank (K on A), a discard takes 13 cards of ranks K..A, the tail takes and gives
builds, and a deal's cards go to fixed piles. So two positions whose piles, tail
and stock length agree rank for rank (the stock itself is the same deal's) have
the same moves as ``(kind, pile, pile, count)`` and each move leads to positions
that again agree rank for rank; one is won exactly when the other is. The key
writes each card as its rank, merging them (about three quarters of the deals
that 30,000 positions left "unknown" are won with it; solutions still name piles
and counts only, and ``solve()`` replays them on the real cards).

Nothing is pruned that a proof does not allow, so "lost" is exact; the tree is
large, so a deal whose answer the budget does not reach is "unknown".
Restarts (since 2026-11-26, issue 24): runs of doubling size (``FIRST_RUN``,
then twice as many each time, the last given what is left of the budget), each
in the next order of ``ORDERS``, all sharing one table of positions proved lost
(``solve_common.search_run``: a position is kept between runs only once its
strongly connected component is complete, which proves it lost). A run cut
short loses nothing it proved; a run that ends without a win proves "lost" on
its own. Move orders (for finding wins early; they change nothing else) are
strings of the move classes: discard a complete run (d), a whole top build onto
a card, which uncovers the card below it (g), part of a top build onto a card
(o), the tail's moves (t), onto an empty pile (e), deal (s). Every order must
name every class (a test checks), or a run would skip moves. With one order and
10,000 positions, "dgtose" won 43 of Tabby Cat seeds 1-60, "dgotse" 38; the three
orders of ``ORDERS`` with restarts 47-49 (SOLVABILITY.md, 2026-11-26 issue 24).
"""

from __future__ import annotations

from collections.abc import Hashable

from .cards import RANK, SUCC
from .solve_common import UNKNOWN, WON, Answer, Position, search_run
from .tabbycat import build_len

T = 4
# a move: (kind, a, b, n): kind 0 pile a -> pile b (n cards), 1 pile a -> tail (n),
# 2 tail -> pile b (n = whole tail), 3 pile a -> discard, 4 deal
PP, PR, RP, PD, DEAL = 0, 1, 2, 3, 4
Move = tuple[int, int, int, int]
#: the move-class orders of the successive runs (see the module docstring)
ORDERS = ("dgtose", "dtegos", "dgoets")
#: card int -> its rank, for ``bytes.translate`` (no rule looks at a suit)
_RANKS = bytes(RANK[i] if i < 52 else i for i in range(256))


class TabbyState:
    """The mutable search position: piles, tail, stock (next card last), cards discarded."""

    def __init__(self, pos: Position, order: str = ORDERS[0]) -> None:
        self.manx = pos.game == "manx"
        self.order = order
        self.tab = [list(pos.piles[f"t{i}"]) for i in range(1, T + 1)]
        self.tail = list(pos.piles["r"])
        self.stock = list(reversed(pos.piles["s"]))  # next card last
        self.home = sum(len(pos.piles[f"f{k}"]) for k in range(1, 5))
        self._discarded: list[list[int]] = []
        self._dealt: list[int] = []

    def key(self) -> bytes:
        # one bytes object: piles as ranks (0xFF between), the tail, the stock's length
        piles = [bytes(p).translate(_RANKS) for p in self.tab]
        if not self.stock:
            piles.sort()
        tail = bytes(self.tail).translate(_RANKS)
        return b"\xff".join(piles) + b"\xfe" + tail + bytes([len(self.stock)])

    def won(self) -> bool:
        return self.home == 52

    def moves(self) -> list[Move]:
        tab = self.tab
        tail = self.tail
        first_empty_only = not self.stock
        # move classes, by letter: d discard, g a whole top build onto a card (uncovers the
        # card under it), o part of a top build onto a card, t the tail's moves, e onto an
        # empty pile, s deal
        discard: list[Move] = []
        gain: list[Move] = []
        onto: list[Move] = []
        to_tail: list[Move] = []
        to_empty: list[Move] = []
        empties = [y for y in range(T) if not tab[y]]
        if first_empty_only:
            empties = empties[:1]
        for x in range(T):
            p = tab[x]
            if not p:
                continue
            b = build_len(p)
            rt = RANK[p[-1]]
            if b >= 13 and rt == 1 and RANK[p[-13]] == 13:
                discard.append((PD, x, 0, 13))
            for y in range(T):
                q = tab[y]
                if y == x or not q:
                    continue
                n = (RANK[q[-1]] - rt) % 13 or 13
                while n <= b:
                    (gain if n == b else onto).append((PP, x, y, n))
                    n += 13
            for y in empties:
                # moving a whole pile to an empty one changes nothing once piles are interchangeable
                top = b if not (first_empty_only and b == len(p)) else b - 1
                for n in range(1, top + 1):
                    to_empty.append((PP, x, y, n))
            if not tail:
                for n in range(1, (1 if self.manx else b) + 1):
                    to_tail.append((PR, x, 0, n))
        if tail:
            need = RANK[tail[0]]
            n = len(tail)
            for y in range(T):
                q = tab[y]
                if q and SUCC[need] == RANK[q[-1]]:
                    to_tail.append((RP, 0, y, n))
            for y in empties:
                to_tail.append((RP, 0, y, n))
        cls = {"d": discard, "g": gain, "o": onto, "t": to_tail, "e": to_empty}
        cls["s"] = [(DEAL, 0, 0, 0)] if self.stock else []
        out: list[Move] = []
        for c in self.order:
            out += cls[c]
        return out

    def apply(self, m: Move) -> None:
        kind, a, b, n = m
        if kind == PP:
            p = self.tab[a]
            self.tab[b].extend(p[-n:])
            del p[-n:]
        elif kind == PR:
            p = self.tab[a]
            self.tail.extend(p[-n:])
            del p[-n:]
        elif kind == RP:
            self.tab[b].extend(self.tail)
            self.tail.clear()
        elif kind == PD:
            p = self.tab[a]
            self._discarded.append(p[-13:])
            del p[-13:]
            self.home += 13
        else:
            stock = self.stock
            k = min(T, len(stock))
            for i in range(k):
                self.tab[i].append(stock.pop())
            self._dealt.append(k)

    def undo(self, m: Move) -> None:
        kind, a, b, n = m
        if kind == PP:
            q = self.tab[b]
            self.tab[a].extend(q[-n:])
            del q[-n:]
        elif kind == PR:
            self.tab[a].extend(self.tail)
            self.tail.clear()
        elif kind == RP:
            q = self.tab[b]
            self.tail.extend(q[-n:])
            del q[-n:]
        elif kind == PD:
            self.tab[a].extend(self._discarded.pop())
            self.home -= 13
        else:
            stock = self.stock
            k = self._dealt.pop()
            for i in range(k - 1, -1, -1):
                stock.append(self.tab[i].pop())


#: positions of the first run of the restarting search; each later run may expand twice as many
FIRST_RUN = 2_000


def solve_tabbycat(pos: Position, budget: int) -> Answer:
    """Restarting depth-first search: runs of doubling size, each in the next of ``ORDERS``,
    all sharing the positions proved lost (``search_run``: a position is kept only once its
    strongly connected component is complete, which proves it lost), the last one given what
    is left of the budget. Any run that ends without a win proves "lost"."""
    state = TabbyState(pos)
    seen: dict[Hashable, int] = {}
    spent = 0
    run = 0
    size = FIRST_RUN
    while True:
        state.order = ORDERS[run % len(ORDERS)]
        verdict, path, nodes = search_run(state, min(size, budget - spent), seen)
        spent += nodes
        if verdict != UNKNOWN or spent >= budget:
            break
        run += 1
        size *= 2
    if verdict != WON:
        return Answer(verdict, [], spent)
    return Answer(WON, texts(pos, path), spent)


def texts(pos: Position, path: list[Move]) -> list[str]:
    fill = [bool(pos.piles[f"f{k}"]) for k in range(1, 5)]
    out: list[str] = []
    for kind, a, b, n in path:
        suffix = f":{n}" if n > 1 else ""
        if kind == PP:
            out.append(f"t{a + 1}-t{b + 1}{suffix}")
        elif kind == PR:
            out.append(f"t{a + 1}-r{suffix}")
        elif kind == RP:
            out.append(f"r-t{b + 1}{suffix}")
        elif kind == PD:
            k = fill.index(False)
            fill[k] = True
            out.append(f"t{a + 1}-f{k + 1}:13")
        else:
            out.append("deal")
    return out
