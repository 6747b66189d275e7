"""Tabby Cat and Manx (RULES.md 5.1): one class, the tail rule is the option.

Four tableau piles built down in any suit with K on A, a one-slot tail ``r``,
four discard piles that each take one complete K..A run, and 12 deals of four.
Each pile's top-build length is cached in ``self._blen`` and kept up to date
incrementally, so neither move generation nor checking ever rescans a long build
unless the move cut the build off exactly at its base.
"""

from __future__ import annotations

from .cards import RANK, SUCC, TEXT
from .deal import shuffled_deck
from .errors import BadPosition
from .game import (
    Effect,
    Game,
    Options,
    PileItems,
    fill_table,
    move_cards,
    move_table,
    pile_index,
)
from .moves import DEAL, Move

T = 4
F = 4  # f1..f4 are indexes 4..7
R = 8
S = 9
NAMES = ("t1", "t2", "t3", "t4", "f1", "f2", "f3", "f4", "r", "s")
MAX = 52
_TABLE = move_table(len(NAMES), MAX)
for _x in range(T):
    for _y in range(T):
        if _x != _y:
            fill_table(_TABLE, NAMES, _x, _y, range(1, MAX + 1))
    for _k in range(F, F + 4):
        fill_table(_TABLE, NAMES, _x, _k, range(13, 14))
    fill_table(_TABLE, NAMES, _x, R, range(1, MAX + 1))
    fill_table(_TABLE, NAMES, R, _x, range(1, MAX + 1))


def build_len(p: list[int]) -> int:
    """Length of the top build: the longest top run where each card lies on the one below."""
    i = len(p) - 1
    if i < 0:
        return 0
    k = 1
    while i > 0 and SUCC[RANK[p[i]]] == RANK[p[i - 1]]:
        k += 1
        i -= 1
    return k


class TabbyCat(Game):
    """Tabby Cat (tail takes any top part of a build) or Manx (tail takes one card)."""

    NAME = "tabbycat"
    PILE_NAMES = NAMES
    PILE_INDEX = pile_index(NAMES)
    _STATE = (*Game._STATE, "_manx", "_blen", "_undo")
    STOCK = S
    TOTAL = 52
    EMPTY_STOCK = "the stock is empty (no redeal)"

    #: Manx: the tail takes a single card
    _manx: bool
    #: top-build length of each tableau pile
    _blen: list[int]
    #: per move: the move, the build lengths before it, the cards a deal dealt
    _undo: list[tuple[Move, tuple[int, ...], int]]

    @classmethod
    def _deal(cls, game: str, seed: int, options: Options) -> TabbyCat:
        cards = shuffled_deck(seed)
        piles: list[list[int]] = [[] for _ in NAMES]
        for i in range(T):
            piles[i].append(cards[i])
        piles[S] = cards[4:][::-1]
        return cls._make(game, options, seed, piles)

    @classmethod
    def _make(
        cls, game: str, options: Options, seed: int | None, piles: list[list[int]]
    ) -> TabbyCat:
        g = cls._blank(game, options, seed, piles)
        g._undo = []
        g._manx = game == "manx"
        g._blen = [build_len(piles[i]) for i in range(T)]
        g._home = sum(len(piles[k]) for k in range(F, F + 4))
        return g

    @classmethod
    def _from_piles(
        cls, game: str, options: Options, state: dict[str, int], piles: PileItems
    ) -> TabbyCat:
        out = [[c for c, _ in piles[name]] for name in NAMES]
        for k in range(F, F + 4):
            f = out[k]
            if f and [RANK[c] for c in f] != list(range(13, 0, -1)):
                raise BadPosition(
                    f"{NAMES[k]} must be empty or hold exactly K Q J T 9 8 7 6 5 4 3 2 A"
                )
        tail = out[R]
        if tail and build_len(tail) != len(tail):
            raise BadPosition("the tail must be a build (each card lying on the one below)")
        if game == "manx" and len(tail) > 1:
            raise BadPosition("Manx's tail holds at most one card")
        out[S].reverse()
        return cls._make(game, options, None, out)

    @property
    def deals_left(self) -> int:
        return -(-len(self.piles[S]) // 4)

    # ------------------------------------------------------------ generation

    def _legal(self) -> list[Move]:
        if self._home == 52:
            return []
        piles = self.piles
        blen = self._blen
        table = _TABLE
        out: list[Move] = []
        tail = piles[R]
        for x in range(T):
            p = piles[x]
            if not p:
                continue
            b = blen[x]
            rt = RANK[p[-1]]
            row = table[x]
            for y in range(T):
                if y == x:
                    continue
                q = piles[y]
                if not q:
                    out.extend(row[y][1 : b + 1])
                else:
                    n = (RANK[q[-1]] - rt) % 13 or 13
                    while n <= b:
                        out.append(row[y][n])
                        n += 13
            if b >= 13 and rt == 1:
                for k in range(F, F + 4):
                    if not piles[k]:
                        out.append(row[k][13])
            if not tail:
                if self._manx:
                    out.append(row[R][1])
                else:
                    out.extend(row[R][1 : b + 1])
        if tail:
            n = len(tail)
            need = RANK[tail[0]]
            row = table[R]
            for y in range(T):
                q = piles[y]
                if not q or SUCC[need] == RANK[q[-1]]:
                    out.append(row[y][n])
        if piles[S]:
            out.append(DEAL)
        return out

    # ------------------------------------------------------------ checking

    def _accepts(self, y: int, c: int) -> str | None:
        q = self.piles[y]
        if q and SUCC[RANK[c]] != RANK[q[-1]]:
            return f"{TEXT[c]} does not lie on {TEXT[q[-1]]}"
        return None

    def _check_move(self, m: Move, si: int, di: int, n: int) -> str | None:
        piles = self.piles
        if si == di:
            return "a pile cannot move onto itself"
        if si == R:
            tail = piles[R]
            if not tail:
                return "the tail is empty"
            if di >= T:
                return "the tail goes only to a tableau pile"
            if n != len(tail):
                return f"the whole tail moves at once (r-{m.dst}{'' if len(tail) == 1 else ':' + str(len(tail))})"
            return self._accepts(di, tail[0])
        if si >= T:
            return f"nothing moves from {m.src}"
        p = piles[si]
        if not p:
            return f"{m.src} is empty"
        b = self._blen[si]
        if di < T:
            if n > b:
                return f"only the top build of {m.src} moves ({b} card{'s' if b > 1 else ''})"
            return self._accepts(di, p[-n])
        if di == R:
            if piles[R]:
                return "the tail is not empty"
            if self._manx:
                return "Manx's tail takes only a single card" if n != 1 else None
            if n > b:
                return f"only the top build of {m.src} moves to the tail ({b} card{'s' if b > 1 else ''})"
            return None
        if di < R:
            if n != 13:
                return "only a complete 13-card run K..A goes to a discard pile (:13)"
            if piles[di]:
                return f"{m.dst} is not empty"
            if b < 13 or RANK[p[-1]] != 1:
                return f"the top 13 cards of {m.src} are not K Q J T 9 8 7 6 5 4 3 2 A"
            return None
        return f"nothing moves onto {m.dst}"

    # ------------------------------------------------------------ make / unmake

    def _do(self, m: Move) -> Effect:
        piles = self.piles
        blen = self._blen
        if m is DEAL:
            stock = piles[S]
            revealed = []
            k = min(T, len(stock))
            self._undo.append((m, tuple(blen), k))
            for i in range(k):
                c = stock.pop()
                p = piles[i]
                if p and SUCC[RANK[c]] == RANK[p[-1]]:
                    blen[i] += 1
                else:
                    blen[i] = 1
                p.append(c)
                revealed.append(TEXT[c])
            return Effect(m, tuple(revealed), 0)
        self._undo.append((m, tuple(blen), 0))
        idx = self.PILE_INDEX
        si = idx[m.src]
        di = idx[m.dst]
        n = m.count
        p = piles[si]
        q = piles[di]
        if di < T:
            if q and SUCC[RANK[p[-n]]] == RANK[q[-1]]:
                blen[di] += n
            else:
                blen[di] = n
        move_cards(p, q, n)
        if si < T:
            b = blen[si]
            blen[si] = b - n if n < b else build_len(p)
        if R > di >= T:
            self._home += 13
            return Effect(m, (), 13)
        return Effect(m, (), 0)

    def _undo_last(self) -> None:
        m, blen, m_n = self._undo.pop()
        piles = self.piles
        self._blen[:] = blen
        if m is DEAL:
            stock = piles[S]
            for i in range(m_n - 1, -1, -1):
                stock.append(piles[i].pop())
            return
        di = self.PILE_INDEX[m.dst]
        move_cards(piles[di], piles[self.PILE_INDEX[m.src]], m.count)
        if R > di >= T:
            self._home -= 13
