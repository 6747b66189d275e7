"""Putt Putt (Golf with K-A wrap): an exact depth-first search with a counting bound.

State. A Golf position is fully determined by the heights of the seven piles,
how many stock cards were dealt and the rank on top of ``f1`` (suits never
matter). Better still, the future depends on that rank only through *which
piles it lets play* (after any move the top is the moved or dealt card), so the
transposition key is ``(heights, stock dealt, playable-pile mask)`` packed into
one int. The search is a plain reachability search with a visited set, which is
exact: "lost" means every reachable class of positions was expanded.

Bound. In a win every remaining tableau card is played onto a card one rank
away, and each card on ``f1`` is covered by at most one card: the current top,
the stock cards and the tableau cards must hold an injective "predecessor"
map for the tableau cards. Grouped by rank that is a bipartite graph shaped as
one 26-cycle (rank r needs r-1 or r+1, and 13 is odd), where Hall's condition
only has to be checked on arcs. A move lowers the supply of exactly one rank
(the old top's: it gets covered) and never raises a need, so after a move only
the arcs through that rank can break; they are checked, up to six need ranks on
each side. A position that fails is lost: the cut is sound, and on unwinnable
deals it removes about seven positions in eight.
"""

from __future__ import annotations

import sys

from .cards import RANK
from .solve_common import LOST, UNKNOWN, WON, Answer, BudgetSpent, Position

PILES = ("t1", "t2", "t3", "t4", "t5", "t6", "t7")
#: ADJ_INT[a][b]: 1 when ranks a and b are one apart, K-A wrapping both ways (0 is "no card")
ADJ_INT = [[int(abs(a - b) in (1, 12) and a > 0 and b > 0) for b in range(14)] for a in range(14)]
#: BITS[mask]: the pile indexes whose bit is set in mask, lowest first
BITS = [tuple(x for x in range(7) if m >> x & 1) for m in range(128)]
#: arcs of the need/supply cycle through supply rank q: (need rank, supply rank) pairs
#: walking away from q on each side; Hall asks min(left) + min(right) + supply[q] >= 0
ARC_SIDE = 6


def _rank(r: int) -> int:
    return (r - 1) % 13 + 1


LEFT = [
    tuple((_rank(q - 2 * i + 1), _rank(q - 2 * i)) for i in range(1, ARC_SIDE + 1))
    for q in range(14)
]
RIGHT = [
    tuple((_rank(q + 2 * i - 1), _rank(q + 2 * i)) for i in range(1, ARC_SIDE + 1))
    for q in range(14)
]


def hall_ok(need: list[int], supply: list[int], q: int) -> bool:
    """Hall's condition on the arcs through supply rank q (need/supply indexed by rank)."""
    low = 0
    s = 0
    for n, p in LEFT[q]:
        s += supply[p] - need[n]
        if s < low:
            low = s
    s = 0
    m = 0
    for n, p in RIGHT[q]:
        s += supply[p] - need[n]
        if s < m:
            m = s
    return low + m + supply[q] >= 0


def hall_all(need: list[int], supply: list[int]) -> bool:
    """Hall's condition on every arc (the start position, before any move)."""
    return all(hall_ok(need, supply, q) for q in range(1, 14))


def solve_puttputt(pos: Position, budget: int) -> Answer:
    ranks = [[RANK[c] for c in pos.piles[name]] for name in PILES]
    stock = [RANK[c] for c in pos.piles["s"]]
    h = [len(p) for p in ranks]
    left0 = sum(h)
    if left0 == 0:
        return Answer(WON, [], 0)
    fr0 = RANK[pos.piles["f1"][-1]]
    # need[r]: tableau cards of rank r; supply[r]: cards of rank r that may yet be covered
    # by a tableau card (tableau + stock + the current top)
    need = [0] * 14
    supply = [0] * 14
    for p in ranks:
        for r in p:
            need[r] += 1
            supply[r] += 1
    for r in stock:
        supply[r] += 1
    supply[fr0] += 1
    if not hall_all(need, supply):
        return Answer(LOST, [], 0)
    # tops[x][k]: rank of the card at height k of pile x (1-based; 0 below the bottom)
    tops = [[0, *p] for p in ranks]
    top = [tops[x][h[x]] for x in range(7)]
    mult = []
    m = 1
    for x in range(7):
        mult.append(m)
        m *= h[x] + 1
    ns = len(stock)
    ns1 = ns + 1
    seen: set[int] = set()
    path: list[int] = []
    nodes = 0
    bits = BITS
    adj_int = ADJ_INT

    def dfs(hk: int, si: int, fr: int, left: int) -> bool:
        nonlocal nodes
        a = adj_int[fr]
        mask = (
            a[top[0]]
            | a[top[1]] << 1
            | a[top[2]] << 2
            | a[top[3]] << 3
            | a[top[4]] << 4
            | a[top[5]] << 5
            | a[top[6]] << 6
        )
        # the future depends on fr only through which piles it lets play
        k = (hk * ns1 + si) << 7 | mask
        n = len(seen)
        seen.add(k)
        if len(seen) == n:
            return False
        nodes += 1
        if nodes > budget:
            raise BudgetSpent
        if mask:
            cand: tuple[int, ...] | list[int] = bits[mask]
            if left == 1:
                path.append(cand[0])
                return True
            if len(cand) > 1:
                cand = sorted(cand, key=h.__getitem__, reverse=True)
            # every move covers fr: one less supply of its rank
            supply[fr] -= 1
            for x in cand:
                hx = h[x]
                r = top[x]
                need[r] -= 1
                if hall_ok(need, supply, fr):
                    h[x] = hx - 1
                    top[x] = tops[x][hx - 1]
                    path.append(x)
                    if dfs(hk - mult[x], si, r, left - 1):
                        return True
                    path.pop()
                    h[x] = hx
                    top[x] = r
                need[r] += 1
            supply[fr] += 1
        if si < ns:
            supply[fr] -= 1
            if hall_ok(need, supply, fr):
                path.append(7)
                if dfs(hk, si + 1, stock[si], left):
                    return True
                path.pop()
            supply[fr] += 1
        return False

    hk0 = sum(h[x] * mult[x] for x in range(7))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 200 + 2 * (left0 + ns)))
    try:
        won = dfs(hk0, 0, fr0, left0)
    except BudgetSpent:
        return Answer(UNKNOWN, [], budget)
    finally:
        sys.setrecursionlimit(limit)
    if not won:
        return Answer(LOST, [], nodes)
    return Answer(WON, [PILES[x] + "-f1" if x < 7 else "deal" for x in path], nodes)
