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

Restarts (2026-11-27, issue 24). Nearly all of a search's positions lie past the
last deal (96-99.5% of the 30,000 of each of seeds 1-10 but the won seed 8): the
first line plays every card it can before each deal and reaches an empty stock
with cards that can never all go home (its dead ends kept 3 to 94 cards at best,
seeds 1-10), and the depth-first search spends the whole budget on the orders of
that end game, never going back to the choices between deals. So the search runs
in slices of ``RUN`` positions, each 5% (and one) larger than the one before: the
first in the order above, each later one with the plays of every position in a
pseudo-random order (``xorshift`` seeded by the run's number; deal stays last),
so each run follows another line through the deals. The runs share one table of
positions proved lost (``solve_common.search_run``: a position is kept between
runs only once its strongly connected component is complete, which proves it
lost), so a run that ends without a win still proves "lost". Orders only change
which win is found first: a position's moves are the same set in every run.
Deterministic: the same position and budget give the same answer.

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

Compiled (2026-12-05, issue 24, fourth pass). ``solve_leapyear`` runs its search in C
(``_solve_leapyear_c.c``, built by the install) when that built (``C_SEARCH``). It is
the same search in its moves and prunings (the safe play, the dead test, plays in the
orders above, deal last) with another key and another schedule, so its position counts
and verdicts are its own, not this module's. Key: each pile's cards, now and to come,
are one fixed sequence (the cards it holds, then the stock cards the deals will put on
it), so a position is the deals made and, per pile, the set of that sequence's cards
still there (a bit mask). Every move plays a card or deals, so no position repeats on a
line: the graph is acyclic, a position all of whose moves were searched without a win is
lost, and the table keeps every position entered except those on the stack of a run cut
by its budget (unfinished), so what a run leaves in it is proved lost and later runs
share it. Schedule: many short runs (``C_RUN`` positions, one more each run, so a run
eventually holds the whole tree and "lost" is still reached; the first run is never shorter
than the line left, one position a move: a shorter run cannot win, and from a deal's start
(215 moves) runs of 200 won nothing below about 3,400 positions, 0 of seeds 1-100 at 3,000
where runs from 216 win 6, and 87 of seeds 1-200 at 1,000,000 either way), because a run's
depth-first search spends itself on the last deals' choices of the line it starts with:
the end games are small (seeds 1, 3, 4, 5, 7 at 3,000,000 positions: 2.7-2.9 million
positions past the last deal over 35,000-156,000 end games, about 20 positions each),
so what decides a win is how many lines through the 23 deals are tried. On seeds 1-50
at 3,000,000 positions runs of 200 won 22 deals, runs growing 5% from 1,000 (this
module's schedule) 17. Each odd run also tries first, for a random number of its first
moves, the moves of the line whose dead end left the fewest cards so far (an order, so
"lost" stays exact): 87 of seeds 1-200 won at 1,000,000 positions against 77 without
(docs/SOLVABILITY.md, "Leap Year, fourth pass"). About 3 million positions a CPU s
against the Python search's ~120,000.

Beams (2026-12-05, issue 24, fifth pass). From ``BEAM_FROM`` positions the compiled search
gets a quarter of the budget (at most ``C_DFS_MAX``; half before the sixth pass) and beams
the rest (``_c.beam``): level by level through the deals, every position a level's plays
reach from each kept position is dealt from, and the ``width`` best of the next level are
kept by a score (cards left, and pairs of cards in a pile whose upper card outranks the
lower one, now and with the cards still to be dealt). Each of ``BEAMS`` (other weights)
wins other deals, so they run in turn, the width tripled after each round. A beam that
found no win proves nothing unless it dropped no position (then it followed every line:
"lost"). Seeds 1-100: 59 won at 1,000,000 positions against the search's 48 alone
(docs/SOLVABILITY.md, "Leap Year, fifth pass").

Last-card test (2026-12-05, issue 24, sixth pass; the compiled searches only). The k-th
rank-r card played follows the k-th rank r-1 one, so the last rank-r card played follows
every card of a lower rank and every other rank-r card, while the cards below it in its
pile follow it: a line that wins has, for each rank with cards left, one with nothing of its
rank or lower below it (or one still in the stock). The dead test above sees each card
alone and misses this. The depth-first search's dead test and the beams (each position of
a phase, and a position before it takes a place in the next level) run it: seeds 1-2,000
at 1,000,000 positions won 66.7% against 56.1%, and 68.8% with the depth-first search's
share cut to a quarter (``C_DFS_SHARE``; docs/SOLVABILITY.md, "Leap Year, sixth pass").
This module's own search (the fallback) does not run it, so its counts stay its own.
"""

from __future__ import annotations

from collections.abc import Hashable

from .cards import RANK
from .solve_common import UNKNOWN, WON, Answer, Position, search_run

try:
    from . import _solve_leapyear_c as _c
except ImportError:  # not built: the Python search below (slower; its own position counts)
    _c = None  # type: ignore[assignment]

#: True when ``solve_leapyear`` runs the compiled search (``_solve_leapyear_c``); False when
#: the extension did not build, or set False to use the Python search
C_SEARCH = _c is not None
#: positions of the compiled search's first run; each later run may expand one more
C_RUN = 200
#: budgets from which the compiled depth-first search shares them with the beams
BEAM_FROM = 200_000
#: the depth-first search's share then: a quarter of the budget (`C_DFS_SHARE`: half until
#: the last-card test, which made the beams' levels better), at most this many positions
C_DFS_MAX = 1_500_000
C_DFS_SHARE = 4
#: the beams' weights in turn, thousandths of a card per (inversion, inversion with a card
#: still to be dealt, rank held below a higher card): the beam's comment in the C file
BEAMS = ((16000, 8000, 0), (16000, 2000, 0), (16000, 0, 0), (0, 0, 3000), (16000, 16000, 0))
#: the widest beam: a level lists up to ``BEAM_PHASE_CAP`` positions a kept one, ~100 bytes
#: each (~0.5 GB at this width). Seed 1 (unknown): widths up to 300 at 1,000,000 positions
#: (a process of 74 MB at its largest), 2,700 at 6,000,000 (130 MB), 8,100 at 20,000,000
#: (217 MB); a round at this width repeats the last, so the search ends there
BEAM_WIDTH_MAX = 30_000
#: positions a beam may list from one position of a level: seeds 101-150 at 6,000,000 won
#: 24, 32, 31, 29 and 27 at caps of 50, 150, 500, 2,000 and 20,000 (a smaller cap spends
#: less of the budget on one position's partial plays, so the levels are searched wider)
BEAM_PHASE_CAP = 150

T = 8
NF = 16
DEAL = -1
#: positions of the first run of the restarting search; each later run may expand 5% more
RUN = 1_000


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
        #: xorshift32 state for the order of plays; 0: tallest pile first
        self.rng = 0

    def reorder(self, run: int) -> None:
        """Run 0 plays from the tallest pile first; run k > 0 in a pseudo-random order."""
        self.rng = 0 if run == 0 else (run * 2654435761) % 2**32 or 1

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
            if self.rng:
                out = self._shuffled(out)
            else:
                out.sort(key=lambda x: -len(tab[x]))
        if self.stock:
            out.append(DEAL)
        return out

    def _shuffled(self, out: list[int]) -> list[int]:
        """``out`` in a pseudo-random order (Fisher-Yates on xorshift32)."""
        z = self.rng
        for i in range(len(out) - 1, 0, -1):
            z ^= (z << 13) & 0xFFFFFFFF
            z ^= z >> 17
            z ^= (z << 5) & 0xFFFFFFFF
            j = z % (i + 1)
            out[i], out[j] = out[j], out[i]
        self.rng = z
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
    """Restarting depth-first search: runs of ``RUN`` positions, each 5% (and one) larger
    than the one before (so a win deeper than a run is still reached), each in another order of
    plays, all sharing the positions proved lost (module docstring); the last run is given
    what is left of the budget. Any run that ends without a win proves "lost". Compiled
    (``C_SEARCH``): runs of ``C_RUN`` positions and one more each run, then beams
    (``_solve_c``)."""
    if C_SEARCH:
        answer = _solve_c(pos, budget)
        if answer is not None:
            return answer
    state = LeapState(pos)
    seen: dict[Hashable, int] = {}
    spent = 0
    run = 0
    size = RUN
    while True:
        state.reorder(run)
        verdict, path, nodes = search_run(state, min(size, budget - spent), seen)
        spent += nodes
        if verdict != UNKNOWN or spent >= budget:
            break
        run += 1
        size += size // 20 + 1
    if verdict != WON:
        return Answer(verdict, [], spent)
    return Answer(WON, texts(pos, path), spent)


#: cards a pile may hold now and get from the deals for the compiled search (its key's masks)
C_SEQ_MAX = 32


def c_args(pos: Position) -> tuple[list[list[int]], list[int], list[int]] | None:
    """The compiled search's arguments (piles and stock as ranks, foundations per top rank),
    or None when a pile's cards now and to come exceed its masks (the Python search then)."""
    tab = [[RANK[c] for c in pos.piles[f"t{i}"]] for i in range(1, T + 1)]
    stock = [RANK[c] for c in pos.piles["s"]]
    if any(len(p) + len(stock[i::T]) > C_SEQ_MAX for i, p in enumerate(tab)):
        return None
    tops = [0] * 15
    for k in range(1, NF + 1):
        tops[RANK[pos.piles[f"f{k}"][-1]]] += 1
    return tab, stock, tops


def _solve_c(pos: Position, budget: int) -> Answer | None:
    """The compiled depth-first search, then (from ``BEAM_FROM`` positions) beams with the
    rest of the budget: each of ``BEAMS`` in turn, the width tripled after each round. A beam
    that left out no position searched them all: its "lost" is a proof too."""
    args = c_args(pos)
    if args is None or _c is None:
        return None
    tab, stock, _tops = args
    line = sum(len(p) for p in tab) + len(stock) + -(-len(stock) // T)  # plays and deals
    dfs = budget if budget < BEAM_FROM else min(budget // C_DFS_SHARE, C_DFS_MAX)
    verdict, path, spent, _ = _c.solve(*args, dfs, max(C_RUN, line + 1), 0)
    width = max(100, min(300, budget // 20_000))  # 100 at 1,000,000; 300 from 6,000,000
    turn = 0
    while verdict == UNKNOWN and spent < budget:
        weights = BEAMS[turn % len(BEAMS)]
        verdict, path, nodes = _c.beam(*args, width, *weights, BEAM_PHASE_CAP, budget - spent)
        spent += nodes
        turn += 1
        if turn % len(BEAMS) == 0:
            if width == BEAM_WIDTH_MAX:
                break  # the next round would repeat this one
            width = min(width * 3, BEAM_WIDTH_MAX)
    if verdict == WON:
        return Answer(WON, texts(pos, path), spent)
    return Answer(verdict, [], spent)  # "lost" or "unknown"


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
