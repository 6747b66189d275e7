"""Klondike dead positions: a least fixpoint of "could ever happen" facts.

A position is *dead* when some card can never reach its foundation, whatever is
played. The test computes, for the position P at hand, the least set of facts
closed under the rules below; every fact is a necessary condition for an event
of any line of play from P. If some card never gets ``home``, no line of play
from P wins, so the search may give P no successors (every verdict is kept:
a position reached only through P is lost too).

Facts, for P's cards (face-down and face-up alike; the solver knows them all):

* ``leave(c)``, c a tableau card of P: c can leave the place it has in P.
* ``free(c)``: every card above c in P's pile can leave, so c can be a top.
* ``can_top(d)``: d can be the top of a tableau pile at some time: d is a
  tableau card with ``free(d)``, or d is not in P's tableau (talon or
  foundation) and can be placed there: a parent of d has ``can_top``, or d is
  a King and some pile can be emptied (all its cards can leave; a pile empty in
  P can). Parents have a higher rank, so this recursion ends.
* ``home(c)``: c can reach its foundation: it is there in P, or c's same-suit
  predecessor has ``home`` (or c is an Ace) and c is not in P's tableau or has
  ``free(c)``.
* ``leave(c)`` holds when ``free(c)`` and: ``home(c)``, or a parent of c (other
  colour, one rank up) has ``can_top``, or c is a King and some *other* pile can
  be emptied. With ``moves=build`` a card may also leave as the base of a run:
  then the cards above c that still sit on it in P's valid face-up run may stay
  (it moves them along), and c's home is not a way out (a run does not go to a
  foundation); a card of such a run leaves when the card under it does.

Soundness. Take any line of play from P and order its events by time. By
induction each event satisfies its fact: (1) a tableau card c first leaves its
place at time t: the cards above it in P had left before t (or, moves=build,
move with it as the run on top of c, face up and in P's order), so ``free(c)``
(or the run clause); c goes to its foundation (``home(c)``, shown first by the
same induction), or onto a parent d that is a top at t, or (a King) onto a pile
that is empty at t, another pile than c's, whose P cards all left before t.
(2) d is a top at t: a tableau card of P at its place with all above gone, or
one that left its place before t (``free`` follows from ``leave``); a card not
in P's tableau was put there from the talon or a foundation before t, onto a
parent that was a top then or onto an empty pile. (3) c first reaches its
foundation at t: its predecessor was there before t, and c is the top of a pile
(so ``free(c)`` as in 2) or comes from the talon or a foundation. A win takes
every card home, so every card gets ``home``. The talon is treated as if every
card in it could be dealt at any time, an over-approximation of draw three and
pass limits, so the test holds for every option set.

The last pass (a pass limit, no recycle left): the waste is a stack. A waste card
can leave the waste only as its top, so after every card above it has left (to
its foundation or the tableau): ``free(c)`` for a waste card c holds when every
waste card above it in P can leave, where a free waste card leaves as any talon
card does (``home(c)``, or onto a parent with ``can_top``, or a King onto a pile
that can be emptied). Until then c is neither ``home`` nor ``can_top``. This
adds a necessary condition of the same kind as a tableau pile's (a card dealt
later onto the waste adds another, left out), so the proof above holds with it
(docs/SOLVABILITY.md, sixteenth pass). The stock's cards stay free.

Computation. ``home`` is a prefix of each suit and ``leave`` a top part of each
pile (a card leaves only after the cards above it, or with them), so the
fixpoint is four suit heights and seven pile frontiers. It is computed by
propagation: each card that becomes a possible top is queued once, and it can
only advance its own suit and the piles holding a card that may lie on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import RANK, RED, SUIT

#: card -> the cards it may lie on in the tableau (other colour, one rank up)
PARENTS: list[tuple[int, ...]] = [
    tuple(s * 13 + RANK[c] for s in range(4) if (s in (1, 2)) != RED[c]) if RANK[c] < 13 else ()
    for c in range(52)
]
#: card -> the cards that may lie on it in the tableau (other colour, one rank down)
CHILDREN: list[tuple[int, ...]] = [
    tuple(s * 13 + RANK[c] - 2 for s in range(4) if (s in (1, 2)) != RED[c]) if RANK[c] > 1 else ()
    for c in range(52)
]
KINGS = (12, 25, 38, 51)
T = 7


def dead(
    tab: Sequence[Sequence[int]],
    down: Sequence[int],
    found: Sequence[int],
    build: bool,
    waste: Sequence[int] = (),
) -> bool:
    """True when some card can never reach its foundation (proof in the module docstring).

    ``tab`` lists the seven piles bottom to top with ``down`` face-down cards each,
    ``found`` the four foundation heights by suit; every other card is in the talon.
    ``waste``: in the last pass, the waste bottom to top (a stack); else empty.
    A waste card under the top is marked ``pile`` -2 until every card above it can leave.

    A pile waits at most once in ``todo`` (``queued``): its scan starts from its current
    frontier with the facts known when it runs, so a second entry would find nothing new.
    A suit's climb (``_climb``) starts where it stopped. Both only save CPU: the facts, and
    so the answer, are those of the fixpoint above.
    """
    rank = RANK
    suit = SUIT
    parents = PARENTS
    children = CHILDREN
    pile = [-1] * 52
    at = [0] * 52
    front = [0] * T
    top = [False] * 52
    newtop: list[int] = []
    empties = 0
    for y in range(T):
        p = tab[y]
        n = len(p) - 1
        front[y] = n
        if n >= 0:
            for i, c in enumerate(p):
                pile[c] = y
                at[c] = i
            c = p[n]
            top[c] = True
            newtop.append(c)
        else:
            empties += 1
    wf = len(waste) - 1  # the waste's free card (its top), then the next one to be free
    for c in waste[:-1]:
        pile[c] = -2
    if empties:
        for k in KINGS:
            if pile[k] == -1:
                top[k] = True
                newtop.append(k)
    todo = list(range(T))
    queued = [True] * T
    # each suit's "can go home" height: each next card must be able to be a top; a pile
    # whose frontier card can go home gets another look
    hs = [0, 0, 0, 0]
    done = 0
    for s in range(4):
        h = hs[s] = _climb(s, found[s], pile, top, at, front, queued, todo)
        if h == 13:
            done += 1
    if done == 4:
        return False
    while True:
        while newtop:
            d = newtop.pop()
            s = suit[d]
            h = hs[s]
            if rank[d] == h + 1:
                h = hs[s] = _climb(s, h, pile, top, at, front, queued, todo)
                if h == 13:
                    done += 1
                    if done == 4:
                        return False
            for e in children[d]:
                y = pile[e]
                if y == -1:
                    if not top[e]:
                        top[e] = True
                        newtop.append(e)
                elif y >= 0 and not queued[y] and at[e] <= front[y]:
                    queued[y] = True
                    todo.append(y)
        # the waste's free card can leave: the one under it is free now
        freed = False
        while wf >= 0:
            c = waste[wf]
            if not top[c] and rank[c] > hs[suit[c]]:
                break
            wf -= 1
            if wf < 0:
                break
            e = waste[wf]
            pile[e] = -1
            freed = True
            pa = parents[e]
            if (top[pa[0]] or top[pa[1]]) if pa else empties:
                top[e] = True
                newtop.append(e)
            s = suit[e]
            if rank[e] == hs[s] + 1:
                h = hs[s] = _climb(s, hs[s], pile, top, at, front, queued, todo)
                if h == 13:
                    done += 1
                    if done == 4:
                        return False
        if freed:
            continue
        if not todo:
            break
        y = todo.pop()
        queued[y] = False
        p = tab[y]
        i = front[y]
        start = i
        while i >= 0:
            c = p[i]
            if not top[c]:
                top[c] = True
                newtop.append(c)
            if rank[c] <= hs[suit[c]]:
                i -= 1
                continue
            pa = parents[c]
            if pa:
                if top[pa[0]] or top[pa[1]]:
                    i -= 1
                    continue
            elif empties:  # a King, and some pile can be emptied
                i -= 1
                continue
            if not build:
                break
            low = -1
            j = i - 1
            dy = down[y]
            while j >= dy and p[j] in parents[p[j + 1]]:
                pe = parents[p[j]]
                if pe:
                    if top[pe[0]] or top[pe[1]]:
                        low = j
                elif empties:
                    low = j
                j -= 1
            if low < 0:
                break
            for j in range(low, i):
                if not top[p[j]]:
                    top[p[j]] = True
                    newtop.append(p[j])
            i = low - 1
        if i != start:
            front[y] = i
            if i < 0:
                empties += 1
                if empties == 1:
                    for k in KINGS:
                        if pile[k] == -1 and not top[k]:
                            top[k] = True
                            newtop.append(k)
                    for z in range(T):
                        if not queued[z]:
                            queued[z] = True
                            todo.append(z)
    return True


def _climb(
    s: int,
    h: int,
    pile: list[int],
    top: list[bool],
    at: list[int],
    front: list[int],
    queued: list[bool],
    todo: list[int],
) -> int:
    """``dead``'s climb of suit s from height h (a card is ``suit * 13 + rank - 1``): past
    every card that is a top now or lies in the talon, free; queues each pile whose front
    card it passes. The new height."""
    base = s * 13
    while h < 13:
        c = base + h
        y = pile[c]
        if y >= 0:
            if not top[c]:
                break
            if at[c] == front[y] and not queued[y]:
                queued[y] = True
                todo.append(y)
        elif y == -2:
            break
        h += 1
    return h


def stays_alive(c: int, tab: Sequence[Sequence[int]], found: Sequence[int], placed: bool) -> bool:
    """After one move of card c from a position that is not dead: True when the new one is not.

    ``placed``: c was just put on a tableau pile (from a pile, the talon or a
    foundation, perhaps with a run on it); else c just went from the top of a
    pile to its foundation. The test gives the moved card an immediate fact
    that needs nothing from the pile under it: (placed) c can go home (when it
    is the top: a run carried on c does not go home with it), or onto a parent
    that is a top now or can be put on one (a card out of the tableau whose
    parent is a top, two levels up), or (a King) to an empty pile; (to its
    foundation) every card that may lie on c is home already, or c can come
    down onto a top. Every other card's facts are the old position's, or
    stronger (the place c left lost its card), so the old derivation, with c's
    fact first, still takes every card home. When this says False, ``dead``
    decides.
    """
    r = RANK[c]
    if placed:
        if found[SUIT[c]] == r - 1 and any(p and p[-1] == c for p in tab):
            return True
    elif all(found[SUIT[e]] >= r - 1 for e in CHILDREN[c]):
        return True
    if r == 13:
        return not all(tab)
    tops = {p[-1] for p in tab if p}
    for d in PARENTS[c]:
        if d in tops:
            return True
        if RANK[d] > found[SUIT[d]] and any(d in p for p in tab):
            continue  # d is in the tableau, under another card
        if RANK[d] == 13:
            if not all(tab):
                return True
            continue
        for e in PARENTS[d]:
            if e in tops:
                return True
            if RANK[e] == 13 and not all(tab) and not any(e in p for p in tab):
                return True
    return False
