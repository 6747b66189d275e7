"""Putt Putt: Golf with wrap-around (RULES.md 5.2).

Seven piles of five, one foundation ``f1`` that takes a tableau top one rank
above or below its own top (A and K are neighbours both ways), and a stock
dealt onto ``f1`` one card at a time, at any time.
"""

from __future__ import annotations

from .cards import RANK, TEXT
from .deal import shuffled_deck
from .errors import BadPosition
from .game import Effect, Game, Options, PileItems, fill_table, move_table, pile_index
from .moves import DEAL, Move

T = 7
F1 = 7
S = 8
NAMES = ("t1", "t2", "t3", "t4", "t5", "t6", "t7", "f1", "s")
#: NEIGHBOUR[a][b]: ranks a and b are one apart, with K-A wrapping both ways
NEIGHBOUR = [[abs(a - b) in (1, 12) and a > 0 and b > 0 for b in range(14)] for a in range(14)]
_TABLE = move_table(len(NAMES), 1)
for _x in range(T):
    fill_table(_TABLE, NAMES, _x, F1, range(1, 2))
#: TO_F1[x] is the move tX-f1
TO_F1: list[Move] = [_TABLE[x][F1][1] for x in range(T)]


class PuttPutt(Game):
    NAME = "puttputt"
    PILE_NAMES = NAMES
    PILE_INDEX = pile_index(NAMES)
    _STATE = (*Game._STATE, "_undo")
    STOCK = S
    TOTAL = 35

    #: per move: the pile index the f1 card came from (S for a deal)
    _undo: list[int]

    @classmethod
    def _deal(cls, game: str, seed: int, options: Options) -> PuttPutt:
        cards = shuffled_deck(seed)
        piles: list[list[int]] = [[] for _ in NAMES]
        for row in range(5):
            for p in range(T):
                piles[p].append(cards[row * T + p])
        piles[F1].append(cards[35])
        piles[S] = cards[36:][::-1]
        return cls._make(game, options, seed, piles)

    @classmethod
    def _make(
        cls, game: str, options: Options, seed: int | None, piles: list[list[int]]
    ) -> PuttPutt:
        g = cls._blank(game, options, seed, piles)
        g._undo = []
        g._home = 35 - sum(len(piles[i]) for i in range(T))
        return g

    @classmethod
    def _from_piles(
        cls, game: str, options: Options, state: dict[str, int], piles: PileItems
    ) -> PuttPutt:
        out = [[c for c, _ in piles[name]] for name in NAMES]
        if not out[F1]:
            raise BadPosition("f1 must hold at least one card (the game starts with one there)")
        if sum(len(out[i]) for i in range(T)) > 35:
            raise BadPosition("the tableau holds more than 35 cards")
        out[S].reverse()
        return cls._make(game, options, None, out)

    @property
    def deals_left(self) -> int:
        return len(self.piles[S])

    def _legal(self) -> list[Move]:
        if self._home == 35:
            return []
        piles = self.piles
        near = NEIGHBOUR[RANK[piles[F1][-1]]]
        out = [TO_F1[x] for x in range(T) if piles[x] and near[RANK[piles[x][-1]]]]
        if piles[S]:
            out.append(DEAL)
        return out

    def _check_move(self, m: Move, si: int, di: int, n: int) -> str | None:
        if di != F1:
            return "cards move only to f1"
        if si >= T:
            return "only tableau cards move to f1"
        if n != 1:
            return "only single top cards move"
        p = self.piles[si]
        if not p:
            return f"{m.src} is empty"
        top = self.piles[F1][-1]
        if not NEIGHBOUR[RANK[p[-1]]][RANK[top]]:
            return f"{TEXT[p[-1]]} is not one rank above or below {TEXT[top]}"
        return None

    def _do(self, m: Move) -> Effect:
        piles = self.piles
        if m is DEAL:
            c = piles[S].pop()
            piles[F1].append(c)
            self._undo.append(S)
            return Effect(m, (TEXT[c],), 0)
        si = self.PILE_INDEX[m.src]
        piles[F1].append(piles[si].pop())
        self._home += 1
        self._undo.append(si)
        return Effect(m, (), 1)

    def _undo_last(self) -> None:
        si = self._undo.pop()
        c = self.piles[F1].pop()
        self.piles[si].append(c)
        if si != S:
            self._home -= 1
