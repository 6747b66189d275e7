"""Leap Year: a depth-first search with a transposition table, on ranks only.

No Leap Year rule looks at a suit, and any foundation whose top is one rank
lower takes a card, so a position is the tableau piles as ranks, how many
foundations show each top rank, and the stock's length. While the stock has
cards the piles are told apart (each gets its own next card); once it is empty
they are interchangeable and the key sorts them. Forced moves. Playing a card to a foundation is not always safe: it can take
the foundation another card of its rank needed. But when at least as many
foundations show rank r-1 as there are rank-r cards left (tableau and stock), a
rank-r top is played at once as the only move: any win that plays it later
still finds, at each of its own rank-r plays, one more r-1 foundation than it
uses, so it runs unchanged with this card already home (and the extra rank-r
top only helps the rank r+1 cards). All other choices are searched, so "lost"
is exact. Move order: plays from the tallest pile first, deal last.

Dead test. Say a foundation can *show* rank r if one shows it now or some card
of rank r can ever be played. A card of rank r can be played only onto a
foundation showing r-1, and a tableau card only after every card above it in
its pile now has been played (a stock card: no such condition is assumed). So
the least set of cards closed under "r-1 can be shown (a foundation shows it
now, or a card of rank r-1 is in the set) and, for a tableau card, every card
above it is in the set" contains every card that is ever played (by induction
on the time of play). Computed as a fixpoint: if it misses a card, no line wins
and the position gets no moves (a leaf: "lost" stays exact). With cards in the
stock it bites only when a rank is missing from the stock, so it runs then.
``tests/engine/test_solve.py`` checks it against the naive search.
"""

from __future__ import annotations

from .cards import RANK
from .solve_common import WON, Answer, Position, search

T = 8
NF = 16
DEAL = -1


class LeapState:
    """Piles as rank lists, ``tops[r]`` foundations showing rank r, the stock (next last)."""

    def __init__(self, pos: Position) -> None:
        self.tab = [[RANK[c] for c in pos.piles[f"t{i}"]] for i in range(1, T + 1)]
        self.stock = [RANK[c] for c in reversed(pos.piles["s"])]
        self.tops = [0] * 15
        for k in range(1, NF + 1):
            self.tops[RANK[pos.piles[f"f{k}"][-1]]] += 1
        self.left = sum(len(p) for p in self.tab) + len(self.stock)
        #: remaining[r]: cards of rank r still in the tableau or the stock
        self.remaining = [0] * 15
        for p in [*self.tab, self.stock]:
            for r in p:
                self.remaining[r] += 1
        #: instock[r]: cards of rank r in the stock
        self.instock = [0] * 15
        for r in self.stock:
            self.instock[r] += 1
        self._dealt: list[int] = []
        self._played: list[int] = []

    def key(self) -> bytes:
        # one bytes object: piles as ranks (0xFF between), foundation counts, stock length
        piles = [bytes(p) for p in self.tab]
        if not self.stock:
            piles.sort()
        return b"\xff".join(piles) + b"\xfe" + bytes(self.tops[1:14]) + bytes([len(self.stock)])

    def won(self) -> bool:
        return self.left == 0

    def dead(self) -> bool:
        """Some card can never be played (the fixpoint above)."""
        shows = [t > 0 for t in self.tops]
        instock = self.instock
        tab = self.tab
        depth = [len(p) for p in tab]  # cards of each pile not (yet) in the set
        grew = True
        while grew:
            grew = False
            for r in range(2, 14):
                if instock[r] and shows[r - 1] and not shows[r]:
                    shows[r] = grew = True
            for x in range(T):
                p = tab[x]
                h = depth[x]
                while h and shows[p[h - 1] - 1]:
                    h -= 1
                    shows[p[h]] = True
                if h != depth[x]:
                    depth[x] = h
                    grew = True
        return any(depth)

    def moves(self) -> list[int]:
        tab = self.tab
        tops = self.tops
        if (not self.stock or 0 in self.instock[2:14]) and self.dead():
            return []
        out = [x for x in range(T) if tab[x] and tops[tab[x][-1] - 1]]
        remaining = self.remaining
        for x in out:
            r = tab[x][-1]
            if tops[r - 1] >= remaining[r]:
                return [x]
        if len(out) > 1:
            out.sort(key=lambda x: -len(tab[x]))
        if self.stock:
            out.append(DEAL)
        return out

    def apply(self, x: int) -> None:
        if x == DEAL:
            stock = self.stock
            k = min(T, len(stock))
            for i in range(k):
                r = stock.pop()
                self.tab[i].append(r)
                self.instock[r] -= 1
            self._dealt.append(k)
            return
        r = self.tab[x].pop()
        self.tops[r - 1] -= 1
        self.tops[r] += 1
        self.left -= 1
        self.remaining[r] -= 1
        self._played.append(r)

    def undo(self, x: int) -> None:
        if x == DEAL:
            k = self._dealt.pop()
            for i in range(k - 1, -1, -1):
                r = self.tab[i].pop()
                self.stock.append(r)
                self.instock[r] += 1
            return
        r = self._played.pop()
        self.tab[x].append(r)
        self.tops[r] -= 1
        self.tops[r - 1] += 1
        self.left += 1
        self.remaining[r] += 1


def solve_leapyear(pos: Position, budget: int) -> Answer:
    state = LeapState(pos)
    verdict, path, nodes = search(state, budget)
    if verdict != WON:
        return Answer(verdict, [], nodes)
    return Answer(WON, texts(pos, path), nodes)


def texts(pos: Position, path: list[int]) -> list[str]:
    """Move texts: each card goes to the first foundation whose top is one rank lower."""
    tab = [[RANK[c] for c in pos.piles[f"t{i}"]] for i in range(1, T + 1)]
    stock = [RANK[c] for c in reversed(pos.piles["s"])]
    ftop = [RANK[pos.piles[f"f{k}"][-1]] for k in range(1, NF + 1)]
    out: list[str] = []
    for x in path:
        if x == DEAL:
            for i in range(min(T, len(stock))):
                tab[i].append(stock.pop())
            out.append("deal")
            continue
        r = tab[x].pop()
        k = ftop.index(r - 1)
        ftop[k] = r
        out.append(f"t{x + 1}-f{k + 1}")
    return out
