"""Leap Year: four-deck Auld Lang Syne (RULES.md 5.4).

The 16 Aces start the foundations ``f1..f16`` in the order the shuffle put
them; tableau tops go up one rank onto any foundation regardless of suit, with
no wrap, and 23 deals of eight refill ``t1..t8``.
"""

from __future__ import annotations

from .cards import RANK, TEXT
from .deal import shuffled_deck
from .errors import BadPosition
from .game import Effect, Game, Options, PileItems, fill_table, move_table, pile_index
from .moves import DEAL, Move

T = 8
F = 8  # f1..f16 are indexes 8..23
NF = 16
S = 24
NAMES = tuple(f"t{i}" for i in range(1, 9)) + tuple(f"f{i}" for i in range(1, 17)) + ("s",)
_TABLE = move_table(len(NAMES), 1)
for _x in range(T):
    for _k in range(F, F + NF):
        fill_table(_TABLE, NAMES, _x, _k, range(1, 2))
#: TO_F[x][k] is the move tX-f(k+1)
TO_F: list[list[Move]] = [[_TABLE[x][F + k][1] for k in range(NF)] for x in range(T)]


class LeapYear(Game):
    NAME = "leapyear"
    PILE_NAMES = NAMES
    PILE_INDEX = pile_index(NAMES)
    _STATE = (*Game._STATE, "_undo")
    STOCK = S
    DECKS = 4
    HOME0 = 16
    TOTAL = 208

    #: per move: -k for a deal of k cards, else si * 64 + di
    _undo: list[int]

    @classmethod
    def _deal(cls, game: str, seed: int, options: Options) -> LeapYear:
        cards = shuffled_deck(seed, 4)
        piles: list[list[int]] = [[] for _ in NAMES]
        aces = [c for c in cards if RANK[c] == 1]
        rest = [c for c in cards if RANK[c] != 1]
        for k, c in enumerate(aces):
            piles[F + k].append(c)
        for i in range(T):
            piles[i].append(rest[i])
        piles[S] = rest[T:][::-1]
        return cls._make(game, options, seed, piles)

    @classmethod
    def _make(
        cls, game: str, options: Options, seed: int | None, piles: list[list[int]]
    ) -> LeapYear:
        g = cls._blank(game, options, seed, piles)
        g._undo = []
        g._home = sum(len(piles[k]) for k in range(F, F + NF))
        return g

    @classmethod
    def _from_piles(
        cls, game: str, options: Options, state: dict[str, int], piles: PileItems
    ) -> LeapYear:
        out = [[c for c, _ in piles[name]] for name in NAMES]
        for k in range(F, F + NF):
            if [RANK[c] for c in out[k]] != list(range(1, len(out[k]) + 1)) or not out[k]:
                raise BadPosition(
                    f"{NAMES[k]} must hold A, 2, 3, ... in order (any suits), starting with its Ace"
                )
        out[S].reverse()
        return cls._make(game, options, None, out)

    @property
    def deals_left(self) -> int:
        return -(-len(self.piles[S]) // T)

    def _legal(self) -> list[Move]:
        if self._home == 208:
            return []
        piles = self.piles
        # foundation indexes by the rank they accept next
        wants: dict[int, list[int]] = {}
        for k in range(NF):
            r = RANK[piles[F + k][-1]] + 1
            if r <= 13:
                if r in wants:
                    wants[r].append(k)
                else:
                    wants[r] = [k]
        out: list[Move] = []
        for x in range(T):
            p = piles[x]
            if p:
                ks = wants.get(RANK[p[-1]])
                if ks:
                    row = TO_F[x]
                    out.extend([row[k] for k in ks])
        if piles[S]:
            out.append(DEAL)
        return out

    def _check_move(self, m: Move, si: int, di: int, n: int) -> str | None:
        if si >= T:
            return "only tableau cards move"
        if not F <= di < S:
            return "cards move only to the foundations (no building on the tableau)"
        if n != 1:
            return "only single top cards move"
        p = self.piles[si]
        if not p:
            return f"{m.src} is empty"
        c = p[-1]
        d = self.piles[di][-1]
        if RANK[d] == 13:
            return f"{m.dst} is complete (a King ends a foundation)"
        if RANK[c] != RANK[d] + 1:
            return f"{TEXT[c]} is not one rank above {TEXT[d]}"
        return None

    def _do(self, m: Move) -> Effect:
        piles = self.piles
        if m is DEAL:
            stock = piles[S]
            revealed = []
            k = min(T, len(stock))
            for i in range(k):
                c = stock.pop()
                piles[i].append(c)
                revealed.append(TEXT[c])
            self._undo.append(-k)
            return Effect(m, tuple(revealed), 0)
        si = self.PILE_INDEX[m.src]
        di = self.PILE_INDEX[m.dst]
        piles[di].append(piles[si].pop())
        self._home += 1
        self._undo.append(si * 64 + di)
        return Effect(m, (), 1)

    def _undo_last(self) -> None:
        rec = self._undo.pop()
        piles = self.piles
        if rec < 0:
            stock = piles[S]
            for i in range(-rec - 1, -1, -1):
                stock.append(piles[i].pop())
            return
        si, di = divmod(rec, 64)
        piles[si].append(piles[di].pop())
        self._home -= 1
