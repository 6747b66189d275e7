"""Klondike (every option set): exact depth-first search over a canonical key.

Key. The seven tableau piles are interchangeable (no rule names a pile), so
the key holds them sorted, each as its face-down count and cards. The
foundations are four heights by suit (which of f1..f4 holds a suit does not
matter; the move texts pick the right pile at the end). The stock and waste are
one sequence, the *talon*, with a pointer (the waste's length): cards only
leave it, so which talon cards remain follows from the tableau and foundations
and only the pointer and the recycles made enter the key, and not even those
with draw one and unlimited passes, where every talon card can be reached from
any pointer. With draw three and unlimited passes a pointer at a multiple of the draw (or past
the last card) reaches exactly the cards a pointer at 0 does, and a
play from the talon leaves the same position whichever way it reached its card, so those
pointers share the key 0.

Moves. Dealing and recycling commute with every other move, so a solution can
always deal just before it plays from the waste: the search has no bare
``deal`` but one macro move per talon card the deals (and at most one
recycle: later passes repeat it) can bring to the waste top, followed by its
play. With a pass limit a recycle is counted and the key holds the count.

Forced moves. A card c of rank r goes to its foundation at once, as the only
move, when both cards of the other colour and rank r-1 and the other suit of
c's colour up to r-2 are already there: then every card that could ever lie on
c in the tableau, and every card that could lie on those, is on a foundation,
and any win that keeps c out longer converts into one that skips c's and
those cards' moves (the proof is in docs/SOLVABILITY.md). It holds for c on
the tableau, for the waste top with draw one, and for any talon card with draw
one and unlimited passes (the talon keeps its order without c); with draw three
removing a waste card shifts the groups, so there it is used only from the tableau. With
draw three (``LOOSE_SAFE_DRAW``) the test is Solvitaire's, one rank looser on each side: the
other colour's foundations at r-2 or more and the other suit of c's colour at r-3 or more
(every card below those is home and never needs to come down, so whatever a win puts on c
can go home instead and come back down when needed: proof in docs/SOLVABILITY.md).

Deferred plays. A talon card put on the tableau (draw one, unlimited passes:
it was as reachable in the talon) and a foundation card brought back down only
pay off through a later move onto them, so they are offered only when a card
that could make that move is somewhere it could come from (``hostable``,
``worth_lowering``; proof in docs/SOLVABILITY.md). With draw one and unlimited
passes a card that would come from the talon counts only when it heads such a
chain of its own: talon cards each on the one before, ending at a card that
can move from the tableau or a foundation (*talon chains*).

Talon cards go home just before their successor. With draw one and unlimited
passes a talon card c that is not forced home is played there only when the
next card of its suit is not buried (a top, or face up with moves=build, or in
the talon), or c is a King. Proof: in a shortest win, c never comes back down
from its foundation before c+1 goes home (playing it from the talon straight
to where it came down to would be shorter), so its play home can move to just
before c+1's, past moves that neither read c's foundation nor touch c; there
c+1 is a top or in the talon (proof in docs/SOLVABILITY.md).

Safe cards stay home. A foundation card that ``safe`` calls safe is never
brought back down: moves are offered only where nothing is forced, lowering c
changes no other card's ``safe`` test (it reads the other suits) and makes only
c next on its foundation, so c would be forced straight back up to the very
position it left, through a position with no other successor.

A pointer that reaches more. With draw three and unlimited passes, a position is lost
when the same layout with a pointer that reaches a superset of its talon cards is proved
lost (``dominated``, asked by ``search_run``).

A pass limit, relaxed (``RELAXED``; draw one). With a pass limit the same deal is searched
with unlimited passes beside the search, turn about: every line of the game with a pass
limit is a line of the game without one, so a loss there is the deal's loss, and a position
proved lost there is lost here whatever its pointer and recycles (``pass_dominated``). That
search stops once it is won (its wins use more recycles than the limit allows). With draw
three it is not used: its turns cost more than they save there (most such deals are lost
within a few thousand positions anyway).

The last pass's waste (``WASTE_STACK``). With a pass limit and no recycle left, a waste card
can leave only as the waste's top: the dead test sees the waste as a stack
(solve_klondike_dead).

A card back in the talon. With draw one and unlimited passes, a position is lost when the
same one with a tableau top that came from the talon back in the talon is proved lost
(``returned_lost``): from there that card can be played straight back to where it lies.

Part moves pay only for a twin (moves=build). A part of a face-up run moved off a
face-up card c is offered only when c is next on its foundation or the twin of the run's
base (the other card that may lie on c) can be put on c right away (``partial_pays``;
proof in docs/SOLVABILITY.md).

Dead positions. A position where some card can never reach its foundation
(``solve_klondike_dead.dead``, a least fixpoint of could-ever-happen facts)
gets no moves; it is tested only after a move that may have killed a live
position and that ``stays_alive`` cannot clear at a glance (``may_be_dead``).

Order. Reveals by a foundation play, other reveals, tableau cards home, talon
cards home, talon cards to the tableau, other tableau moves, foundation cards
back down.

Restarts. ``solve_klondike`` searches in runs of growing size (1.3x from 500
positions with draw one and unlimited passes, 500 times the Luby sequence with draw three
and unlimited passes, doubling from 2,000 with a pass limit; the first in
the order above, each later one in a seeded random order within each of those
groups), all sharing the positions proved lost: ``solve_common.search_run``
keeps a position only once its strongly connected component is complete
(Tarjan), which proves it lost; the rest of a run cut short is searched again.
A run that is stuck in a large losing subtree is cut and the next one tries
other moves first, while a loss proof loses only the unfinished components.

Compiled. ``solve_klondike`` runs its restarts in C (``_solve_klondike_c.c``, built by the
install) when that built (``C_SEARCH``): an exact port of ``KlondikeState``, the dead test,
``search_run`` and the schedule below (keys equal exactly when these are, moves in the same order, the
restarts' orders from CPython's Mersenne Twister seeded as here, the same prunings and
counts), so it returns the verdict, positions and winning line this module's search does,
about 30x faster; the tests compare the two (tests/engine/test_solve_c.py). The class below
stays the reference, the fallback, and what the tests walk.

Finish. With no face-down card, every pile descending and the talon empty
(or fully reachable: draw one, unlimited passes), the game is won by playing
the lowest card left each time; the search stops there and plays that out.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Hashable

from .cards import RANK, RED, SUIT
from .solve_common import LOST, PROVED_LOST, UNKNOWN, WON, Answer, Position, search_run
from .solve_klondike_dead import CHILDREN, PARENTS, T, dead, stays_alive

try:
    from . import _solve_klondike_c as _c
except ImportError:  # not built: the Python search below does the same, more slowly
    _c = None  # type: ignore[assignment]

#: True when ``solve_klondike`` runs the compiled search (``_solve_klondike_c``, an exact
#: port: the same verdict and positions for the same position and budget); False when the
#: extension did not build (the Python search is used), or set False to use Python anyway
C_SEARCH = _c is not None

OTHER_COLOUR = [(1, 2), (0, 3), (0, 3), (1, 2)]
SAME_COLOUR = [3, 2, 1, 0]
FULL = 13 * (1 + 16 + 256 + 4096)

# move kinds: (kind, a, b, n, card, talon macro); card is the (lowest) card moved
TT = 0  # tableau a -> tableau b, n cards
TF = 1  # tableau a -> foundation
WT = 2  # talon card a -> tableau b
WF = 3  # talon card a -> foundation
FT = 4  # foundation suit a -> tableau b

#: the rule "talon cards go home just before their successor" (off only to measure it)
DEFER_HOME = True
#: talon chains in ``hostable`` and ``worth_lowering`` (off only to measure them)
CHAIN = True
#: part-run moves only where the card they leave may be used (``partial_pays``; off only
#: to measure it)
TWIN = True
#: draw three, unlimited passes: pointers that reach the same cards share a key (off only
#: to measure it)
POINTER_KEY = True
#: draw three, unlimited passes: a position is lost when the same one with a pointer that
#: reaches more is (``dominated``; off only to measure it)
DOMINANCE = True

#: draw one, unlimited passes: a position is lost when the same one with a top card back in
#: the talon is (``returned_lost``; off only to measure it)
RETURNED = True

#: draw three (or more): a tableau card is forced home under the looser test Solvitaire
#: uses (the other colour's foundations at r-2 or more, the other suit of its colour at r-3
#: or more) instead of r-1 and r-2 (``safe``; proof in docs/SOLVABILITY.md, fourteenth
#: pass). Draw one keeps the strict test, so the default rules' searches do not change
LOOSE_SAFE_DRAW = True

#: draw one with a pass limit: the same deal is searched with unlimited passes beside the
#: search, turn about; its loss is the deal's loss and its positions proved lost are lost
#: here too (``pass_dominated``; docs/SOLVABILITY.md, sixteenth pass; off only to measure it)
RELAXED = True

#: a pass limit, the last pass: the dead test sees the waste as a stack, each card free only
#: once every card above it can leave (solve_klondike_dead; off only to measure it)
WASTE_STACK = True

#: moves after which a position that was not dead may be (solve_klondike_dead)
SUSPECT = (TT, TF, WT, FT)

Move = tuple[int, int, int, int, int, tuple[int, int, int, int]]
NO_MACRO = (0, 0, 0, 0)


def talon_key_of(draw: int, passes: int) -> int:
    """What of the talon enters a position's key (``KlondikeState.talon_key``): 0 nothing
    (draw one, unlimited passes), 1 the pointer (draw three, unlimited passes), 2 the
    pointer and the recycles made (a pass limit)."""
    return 2 if passes else 0 if draw == 1 else 1


class KlondikeState:
    """The mutable search position (see the module docstring for what the key holds)."""

    def __init__(self, pos: Position) -> None:
        self.draw = pos.opt("draw", 1)
        self.build = pos.options.get("moves", "top") == "build"
        self.passes = pos.opt("passes", 0)
        self.rec = pos.opt("recycled", 0)
        self.tab = [list(pos.piles[f"t{i}"]) for i in range(1, T + 1)]
        self.down = [pos.down[f"t{i}"] for i in range(1, T + 1)]
        self.found = [0, 0, 0, 0]
        self.fsuit: list[int | None] = []
        for k in range(1, 5):
            f = pos.piles[f"f{k}"]
            self.fsuit.append(SUIT[f[0]] if f else None)
            if f:
                self.found[SUIT[f[0]]] = len(f)
        self.fint = sum(h << 4 * s for s, h in enumerate(self.found))
        self.talon = list(pos.piles["w"]) + list(pos.piles["s"])
        #: the cards in the talon at the start: the only ones a searched position can hold
        #: there (cards never go back), so the only tops ``returned_lost`` asks about
        self.from_talon = [False] * 52
        for c in self.talon:
            self.from_talon[c] = True
        self.p = len(pos.piles["w"])
        #: 0: the talon does not enter the key; 1: the pointer does; 2: pointer and recycles
        self.talon_key = talon_key_of(self.draw, self.passes)
        self.pkey = [bytes([self.down[x], *self.tab[x]]) for x in range(T)]
        self._undo: list[int] = []
        #: the move that led here: moves() tests the position for death after one that may kill
        self.last: Move | None = None
        #: when set, each group of moves is tried in a random order (restarts; see solve_klondike)
        self.rng: random.Random | None = None
        #: a pass limit with RELAXED: the visited set of the same deal's search with unlimited
        #: passes (``pass_dominated``)
        self.relaxed: dict[Hashable, int] | None = None

    def unlimited(self) -> KlondikeState:
        """The same position with unlimited passes: a relaxation of a pass limit (every line
        of this game is a line of that one, so a loss there is a loss here)."""
        out = copy.copy(self)
        out.tab = [list(p) for p in self.tab]
        out.down = list(self.down)
        out.found = list(self.found)
        out.talon = list(self.talon)
        out.pkey = list(self.pkey)
        out._undo = []
        out.passes = 0
        out.talon_key = talon_key_of(self.draw, 0)
        out.relaxed = None
        return out

    # ------------------------------------------------------------ search protocol

    def key(self) -> bytes:
        # one bytes object (piles sorted, 0xFF between them; cards and counts are < 0xFF),
        # about a third of the memory of a tuple of tuples in the visited set
        head = b"\xff".join(sorted(self.pkey))
        if self.talon_key == 0:
            return head + self.fint.to_bytes(3)
        if self.talon_key == 1:
            # a pointer at a multiple of the draw, or past the last card, reaches the very
            # cards a pointer at 0 does (``talon_pointer_key``)
            p = self.p
            if POINTER_KEY and (p % self.draw == 0 or p >= len(self.talon)):
                p = 0
            return head + self.fint.to_bytes(3) + p.to_bytes(1)
        return head + self.fint.to_bytes(3) + self.p.to_bytes(1) + self.rec.to_bytes(8)

    def dominated(self, key: bytes, seen: dict[Hashable, int]) -> bool:
        """Draw three (or more), unlimited passes: the same position with a pointer that
        reaches a superset of the talon cards this one reaches is proved lost.

        A pointer p reaches, besides what pointer 0 reaches (every draw-th card and the
        last, after a recycle), the cards p-1, p-1+draw, ... before the last: so pointer 0
        reaches least, and among pointers of one residue modulo the draw a lower one reaches
        more. A play from the talon leaves the same position from either pointer, and every
        other move keeps both pointers, so from the one that reaches more every line of the
        other can be played (the search offers every move there that it offers here: only
        ``partial_pays`` reads the reachable cards, and more of them only allows more). So
        this position is lost if that one is (proof in docs/SOLVABILITY.md).
        """
        if self.talon_key == 0:
            return RETURNED and self.returned_lost(seen)
        if self.talon_key == 2:
            return self.pass_dominated(key)
        if not DOMINANCE or self.talon_key != 1:
            return False
        n = len(self.talon)
        p = key[-1]
        base = key[:-1]
        d = self.draw
        get = seen.get
        # pointer 0 is reached by every pointer that is not keyed 0; a pointer by each lower
        # one of its residue
        stronger = (q for q in range(1, n) if q % d) if p == 0 else range(p % d, p, d)
        return any(get(base + bytes((q,))) == PROVED_LOST for q in stronger)

    def pass_dominated(self, key: bytes) -> bool:
        """Draw one with a pass limit and ``RELAXED``: this position is lost when the same
        one with unlimited passes is proved lost (``relaxed``, that search's visited set):
        every line of a game with a pass limit is a line of the same game without one. Its
        key there is this key without the pointer and the recycles (the last 9 bytes)."""
        return self.relaxed is not None and self.relaxed.get(key[:-9]) == PROVED_LOST

    def returned_lost(self, seen: dict[Hashable, int]) -> bool:
        """Draw one, unlimited passes: this position A is lost when B, the same position with
        one tableau top c back in the talon, is proved lost.

        c lies on a face-up card d (or is a King alone on its pile), and in B, d is a top
        (the pile is empty) while c is in the talon, where every card can be reached from any
        pointer: so B can play c straight onto d (into the empty pile), which gives A with
        the talon in another order, and with draw one and unlimited passes the order does not
        change which moves can ever be made (the key leaves the talon out for that reason).
        So a win from A is a win from B, and B lost makes A lost. Only a card that was in the
        talon at the start can be in B's talon, so only such tops are asked about (proof in
        docs/SOLVABILITY.md, ninth pass).
        """
        tab = self.tab
        down = self.down
        pkey = self.pkey
        origin = self.from_talon
        tail = self.fint.to_bytes(3)
        get = seen.get
        for x in range(T):
            p = tab[x]
            n = len(p)
            if not n or not origin[p[-1]]:
                continue
            if n - down[x] >= 2 or (n == 1 and RANK[p[0]] == 13):
                keys = pkey[:x] + pkey[x + 1 :]
                keys.append(pkey[x][:-1])
                if get(b"\xff".join(sorted(keys)) + tail) == PROVED_LOST:
                    return True
        return False

    def won(self) -> bool:
        return self.fint == FULL or self.trivially_won()

    def trivially_won(self) -> bool:
        if any(self.down):
            return False
        if self.talon and self.talon_key != 0:
            return False
        for p in self.tab:
            for i in range(1, len(p)):
                if RANK[p[i]] >= RANK[p[i - 1]]:
                    return False
        return True

    def safe(self, c: int) -> bool:
        """Card c (ready for its foundation) may go there as a forced move (module docstring;
        with draw three, ``LOOSE_SAFE_DRAW``: one rank looser on each side)."""
        r = RANK[c]
        if r <= 1:
            return True
        s = SUIT[c]
        f = self.found
        a, b = OTHER_COLOUR[s]
        if LOOSE_SAFE_DRAW and self.draw > 1:
            return f[a] >= r - 2 and f[b] >= r - 2 and f[SAME_COLOUR[s]] >= r - 3
        return f[a] >= r - 1 and f[b] >= r - 1 and f[SAME_COLOUR[s]] >= r - 2

    def buried(self) -> set[int]:
        """The tableau cards that cannot be moved now: face-down ones, and with top-card
        moves every card under a pile's top. Every other card (a top, a face-up card with
        moves=build, a talon card, a foundation card) could be moved later."""
        out: set[int] = set()
        if self.build:
            for x in range(T):
                d = self.down[x]
                if d:
                    out.update(self.tab[x][:d])
        else:
            for p in self.tab:
                if len(p) > 1:
                    out.update(p[:-1])
        return out

    def hostable(self, c: int, buried: set[int]) -> bool:
        """Talon-to-tableau play of card c may pay off (draw one, unlimited passes).

        There a talon card is as reachable in the talon as on the tableau, so
        putting it on the tableau pays only when a card is later put on it, and
        the play can be deferred to just before that: some win keeps only plays
        after which a card that may lie on c is not buried (a top, or any face-up
        card with moves=build, on a foundation, or in the talon; one deck, so that
        card is never c itself).

        Talon chains: if that card e is itself in the talon, its play onto c is such
        a talon play too, deferred in turn to just before a card is put on e; so in
        some win the plays of a chain of talon cards come one after the other, just
        before a card that is not in the talon (a tableau card that is not buried, or
        a foundation card) is put on the last, and nothing between them changes where
        those cards are. So e counts only when it heads such a chain itself.
        """
        if not CHAIN:
            return any(e not in buried for e in CHILDREN[c])
        talon = self.talon
        for e in CHILDREN[c]:
            if e in buried:
                continue
            if e not in talon or self.hostable(e, buried):
                return True
        return False

    def worth_lowering(self, s: int, buried: set[int]) -> bool:
        """A foundation-to-tableau play of suit s's top card d may pay off.

        It pays only when a card is later put on d or d's suit-mate below it
        comes down too; deferring it to just before that keeps a win, so some
        win only lowers d when a card that may lie on d is not buried (a top, or
        face up with moves=build, on a foundation, or in the talon), or when a
        card that d-1 may lie on is. Deferring such plays only moves cards between
        those places, so the rule holds for all of them at once (and together with
        the talon rule above). Any talon card counts, reachable now or not: the card
        later put on d may come from the talon by then (a superset of the places
        keeps the rule sound in every mode). With draw one and unlimited passes a
        talon card counts only when it heads a chain that pays (``hostable``): its play
        onto d comes just after d's, and its own payoff just after that.
        """
        h = self.found[s]
        d = s * 13 + h - 1
        chain = CHAIN and self.talon_key == 0
        for e in CHILDREN[d]:
            if e not in buried and (not chain or e not in self.talon or self.hostable(e, buried)):
                return True
        if h >= 2:
            for t in PARENTS[d - 1]:
                if t not in buried:
                    return True
        return False

    def partial_pays(self, c: int, b: int, buried: set[int], reach: set[int]) -> bool:
        """A part of a face-up run, based at b, moved off face-up c (moves=build) may pay off.

        Such a move leaves c a top and changes nothing else a later move reads, so it
        can be deferred to just before the first later move that uses c (a card put
        on it, c moved, c home) or moves b as a base. In a shortest win that move is not
        b going back onto c (the pair would cancel) nor b home (b could go home from c
        one move sooner); c moved onto another card is the same as c moved with the
        run on it, then the run moved off, so the part move comes later and is judged
        there. So some shortest win makes each such move just before c goes home or
        b's twin (the other card of b's rank and colour, the only other card that may
        lie on c) is put on c: the move is offered only when c is next on its
        foundation or that twin can move onto c right now (face up in the tableau,
        reachable in the talon, or the top of its foundation; the part move does not
        change which). Proof in docs/SOLVABILITY.md.
        """
        found = self.found
        if found[SUIT[c]] == RANK[c] - 1:
            return True
        s = SAME_COLOUR[SUIT[b]]
        r = RANK[b]
        h = found[s]
        if h >= r:
            return h == r
        e = s * 13 + r - 1
        if e in buried:
            return False
        return e in reach or e not in self.talon

    def talon_tops(self) -> list[tuple[int, tuple[int, int, int, int]]]:
        """Each talon index that deals (and a recycle) can bring to the waste top, once.

        The macro is (deals, recycled 0/1, deals after the recycle, recycles made after).
        """
        talon = self.talon
        n = len(talon)
        if not n:
            return []
        draw = self.draw
        p = self.p
        rec = self.rec
        if draw == 1:
            # the same list as the loop below makes for draw one, in the same order: p-1,
            # then p..n-1 dealing, then 0..p-2 after a recycle
            out: list[tuple[int, tuple[int, int, int, int]]] = (
                [(p - 1, (0, 0, 0, rec))] if p > 0 else []
            )
            out += [(i, (i - p + 1, 0, 0, rec)) for i in range(p, n)]
            if p > 1 and (not self.passes or rec + 1 < self.passes):
                k = n - p
                out += [(i, (k, 1, i + 1, rec + 1)) for i in range(p - 1)]
            return out
        out = []
        got = set()
        if p > 0:
            out.append((p - 1, (0, 0, 0, rec)))
            got.add(p - 1)
        q = p
        k = 0
        while q < n:
            q = min(q + draw, n)
            k += 1
            out.append((q - 1, (k, 0, 0, rec)))
            got.add(q - 1)
        if not self.passes or rec + 1 < self.passes:
            q = 0
            k2 = 0
            while q < n:
                q = min(q + draw, n)
                k2 += 1
                if q - 1 not in got:
                    got.add(q - 1)
                    out.append((q - 1, (k, 1, k2, rec + 1)))
        return out

    def last_pass(self) -> bool:
        """A pass limit and no recycle left: the waste is a stack (``WASTE_STACK``)."""
        return WASTE_STACK and self.passes > 0 and self.rec + 1 >= self.passes

    def stacked_waste(self) -> list[int]:
        """The waste, bottom to top, in the last pass (the dead test's stack); else none."""
        return self.talon[: self.p] if self.last_pass() else []

    def may_be_dead(self) -> bool:
        """The last move may have made a position that was not dead dead (solve_klondike_dead).

        Only the starting position and moves that put a card on the tableau or take one
        from it home can, and in the last pass a play from the talon that deals or recycles
        (it puts cards under the waste's top); ``stays_alive`` clears most of the others at a
        glance.
        """
        m = self.last
        if m is None:
            return True
        kind = m[0]
        if kind in (WT, WF) and (m[5][0] or m[5][1]) and self.last_pass():
            return True
        return kind in SUSPECT and not stays_alive(m[4], self.tab, self.found, kind != TF)

    def moves(self) -> list[Move]:
        tab = self.tab
        down = self.down
        found = self.found
        if self.may_be_dead() and dead(tab, down, found, self.build, self.stacked_waste()):
            return []
        tops: dict[int, int] = {}
        empty = -1
        for y in range(T):
            q = tab[y]
            if q:
                tops[q[-1]] = y
            elif empty < 0:
                empty = y
        # forced: a safe card to its foundation
        for x in range(T):
            p = tab[x]
            if p:
                c = p[-1]
                if found[SUIT[c]] == RANK[c] - 1 and self.safe(c):
                    return [(TF, x, 0, 1, c, NO_MACRO)]
        tt_tops = self.talon_tops()
        talon = self.talon
        if self.draw == 1:
            for i, macro in tt_tops:
                if macro[1] and self.passes:
                    continue
                if macro[0] and self.talon_key != 0:
                    continue
                c = talon[i]
                if found[SUIT[c]] == RANK[c] - 1 and self.safe(c):
                    return [(WF, i, 0, 1, c, macro)]
        reveal_home: list[Move] = []
        reveal: list[Move] = []
        home: list[Move] = []
        talon_home: list[Move] = []
        from_talon: list[Move] = []
        other: list[Move] = []
        back: list[Move] = []
        build = self.build
        # the rules below ask whether a card could be moved onto the one in question later:
        # with moves=build that card may be the base of a run, so every face-up card counts
        buried = self.buried()
        reach = {talon[i] for i, _ in tt_tops} if build else set()
        for x in range(T):
            p = tab[x]
            if not p:
                continue
            c = p[-1]
            up = len(p) - down[x]
            if found[SUIT[c]] == RANK[c] - 1:
                (reveal_home if up == 1 and down[x] else home).append((TF, x, 0, 1, c, NO_MACRO))
            if not build:
                for par in PARENTS[c]:
                    y = tops.get(par, -1)
                    if y >= 0:
                        (reveal if up == 1 and down[x] else other).append(
                            (TT, x, y, 1, c, NO_MACRO)
                        )
                if empty >= 0 and RANK[c] == 13 and (down[x] or len(p) > 1):
                    (reveal if up == 1 and down[x] else other).append(
                        (TT, x, empty, 1, c, NO_MACRO)
                    )
                continue
            # moves=build: any part of the face-up run; a part that leaves a face-up card
            # on the pile only where that card may be used (``partial_pays``)
            run = 1
            i = len(p) - 1
            while run < up and RED[p[i]] != RED[p[i - 1]] and RANK[p[i]] + 1 == RANK[p[i - 1]]:
                run += 1
                i -= 1
            rt = RANK[c]
            for y in range(T):
                if y == x:
                    continue
                q = tab[y]
                if q:
                    d = q[-1]
                    n = RANK[d] - rt
                    if (
                        1 <= n <= run
                        and RED[p[-n]] != RED[d]
                        and (
                            n == up
                            # the run's base on a face-up card it does not lie on (not in
                            # play, where face-up cards always make one run; a position text
                            # may have it): the twin rule's premise fails, so the move stays
                            or n == run
                            or not TWIN
                            or self.partial_pays(p[-n - 1], p[-n], buried, reach)
                        )
                    ):
                        (reveal if n == up and down[x] else other).append(
                            (TT, x, y, n, c, NO_MACRO)
                        )
                elif y == empty:
                    n = 14 - rt
                    if n <= run and (down[x] or n < len(p)):
                        (reveal if n == up and down[x] else other).append(
                            (TT, x, y, n, c, NO_MACRO)
                        )
        defer = self.talon_key == 0
        for i, macro in tt_tops:
            c = talon[i]
            if found[SUIT[c]] == RANK[c] - 1 and (
                not defer or not DEFER_HOME or RANK[c] == 13 or c + 1 not in buried
            ):
                talon_home.append((WF, i, 0, 1, c, macro))
            if defer and not self.hostable(c, buried):
                continue
            for par in PARENTS[c]:
                y = tops.get(par, -1)
                if y >= 0:
                    from_talon.append((WT, i, y, 1, c, macro))
            if empty >= 0 and RANK[c] == 13:
                from_talon.append((WT, i, empty, 1, c, macro))
        for s in range(4):
            h = found[s]
            c = s * 13 + h - 1
            # a safe card brought down would be the only card forced home at once (no other
            # card was forced here, and a lower foundation makes no other card safe), so the
            # move leads back to this very position through one more, pointless one
            if h and not self.safe(c) and self.worth_lowering(s, buried):
                for par in PARENTS[c]:
                    y = tops.get(par, -1)
                    if y >= 0:
                        back.append((FT, s, y, 1, c, NO_MACRO))
                if empty >= 0 and h == 13:
                    back.append((FT, s, empty, 1, c, NO_MACRO))
        groups = (reveal_home, reveal, home, talon_home, from_talon, other, back)
        if self.rng is not None:
            for g in groups:
                if len(g) > 1:
                    self.rng.shuffle(g)
        return [m for g in groups for m in g]

    def apply(self, m: Move) -> None:
        kind, a, b, n, c, macro = m
        tab = self.tab
        if kind in (TT, TF):
            p = tab[a]
            if kind == TT:
                q = tab[b]
                if n == 1:
                    q.append(p.pop())
                else:
                    q.extend(p[-n:])
                    del p[-n:]
                self.pkey[b] = bytes([self.down[b], *q])
            else:
                p.pop()
                s = SUIT[c]
                self.found[s] += 1
                self.fint += 1 << 4 * s
            d = self.down[a]
            if d and len(p) == d:
                self.down[a] = d - 1
                self._undo.append(1)
            else:
                self._undo.append(0)
            self.pkey[a] = bytes([self.down[a], *p])
        elif kind in (WT, WF):
            self._undo.append(self.p << 16 | self.rec)
            del self.talon[a]
            self.p = a
            self.rec = macro[3]
            if kind == WT:
                q = tab[b]
                q.append(c)
                self.pkey[b] = bytes([self.down[b], *q])
            else:
                s = SUIT[c]
                self.found[s] += 1
                self.fint += 1 << 4 * s
        else:
            self.found[a] -= 1
            self.fint -= 1 << 4 * a
            q = tab[b]
            q.append(c)
            self.pkey[b] = bytes([self.down[b], *q])
        self.last = m

    def undo(self, m: Move) -> None:
        kind, a, b, n, c, _ = m
        self.last = None
        tab = self.tab
        if kind in (TT, TF):
            p = tab[a]
            if self._undo.pop():
                self.down[a] += 1
            if kind == TT:
                q = tab[b]
                if n == 1:
                    p.append(q.pop())
                else:
                    p.extend(q[-n:])
                    del q[-n:]
                self.pkey[b] = bytes([self.down[b], *q])
            else:
                p.append(c)
                s = SUIT[c]
                self.found[s] -= 1
                self.fint -= 1 << 4 * s
            self.pkey[a] = bytes([self.down[a], *p])
        elif kind in (WT, WF):
            u = self._undo.pop()
            self.talon.insert(a, c)
            self.p = u >> 16
            self.rec = u & 0xFFFF
            if kind == WT:
                q = tab[b]
                q.pop()
                self.pkey[b] = bytes([self.down[b], *q])
            else:
                s = SUIT[c]
                self.found[s] -= 1
                self.fint -= 1 << 4 * s
        else:
            self.found[a] += 1
            self.fint += 1 << 4 * a
            q = tab[b]
            q.pop()
            self.pkey[b] = bytes([self.down[b], *q])

    def finish(self) -> list[Move]:
        """From a trivially won position: play the lowest card left each time, to the end."""
        out: list[Move] = []
        while self.fint != FULL:
            best: Move | None = None
            low = 99
            for x in range(T):
                p = self.tab[x]
                if p and RANK[p[-1]] < low and self.found[SUIT[p[-1]]] == RANK[p[-1]] - 1:
                    low = RANK[p[-1]]
                    best = (TF, x, 0, 1, p[-1], NO_MACRO)
            for i, macro in self.talon_tops():
                c = self.talon[i]
                if RANK[c] < low and self.found[SUIT[c]] == RANK[c] - 1:
                    low = RANK[c]
                    best = (WF, i, 0, 1, c, macro)
            if best is None:  # pragma: no cover - trivially_won() promised a finish
                raise AssertionError("no card to play in a trivially won position")
            self.apply(best)
            out.append(best)
        return out


#: draw three (or more), unlimited passes: a position is lost when the same one with a
#: tableau top that came from the talon back in the talon (at the index the pointer shows)
#: is proved lost (docs/SOLVABILITY.md, twelfth pass). In the compiled search only: the
#: Python search ignores it, so it is off by default and the two stay equal with it off
RETURNED_DRAW = False

#: positions of the first run of the restarting search; each later run may expand twice as many
FIRST_RUN = 2_000
#: each run may expand this many times as many positions as the one before
GROWTH = 2.0
#: the same with unlimited passes (every draw and moves setting): shorter runs, more orders
#: (docs/SOLVABILITY.md: draw three, sixth pass; draw one, seventh pass); with a pass limit
#: runs double from 2,000
FIRST_RUN_SHORT = 500
GROWTH_SHORT = 1.3
#: unlimited passes: runs of FIRST_RUN_SHORT times the Luby sequence (1, 1, 2, 1, 1, 2, 4, ...)
#: instead of growing 1.3x; off (measured only, docs/SOLVABILITY.md, eighth pass): turning
#: it on changes which deals are won at a budget, so the shipped pool would be made again
LUBY = False
#: the same for draw three or more only (unlimited passes), on: standard Klondike's wins come
#: 2.3x sooner in positions and its loss proofs cost the same (docs/SOLVABILITY.md, twelfth
#: pass); the default rules keep the 1.3x runs (their shipped pool depends on them)
LUBY_DRAW = True


def luby(i: int) -> int:
    """The i-th term (from 1) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while (1 << k) - 1 != i:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


def _luby(state: KlondikeState) -> bool:
    """Whether the runs follow the Luby sequence (unlimited passes only): ``LUBY`` for every
    draw, ``LUBY_DRAW`` for draw three or more."""
    return LUBY or (LUBY_DRAW and state.draw > 1)


def solve_klondike(pos: Position, budget: int) -> Answer:
    """Restarting depth-first search: runs of growing size (doubling from 2,000 with a pass
    limit; 1.3x from 500 with unlimited passes, where more, shorter runs find wins
    sooner; with draw three and unlimited passes 500 times the Luby sequence), the first
    in the fixed move
    order, each later one in its own seeded random order within each group of moves, all
    sharing the positions proved lost (``search_run``), the last one given what is left of
    the budget. A run that gets lost in a large losing subtree is cut short and the next one
    tries other moves first; nothing a run proves is thrown away.

    With draw one, a pass limit and ``RELAXED`` the same deal's search with unlimited
    passes takes turns beside it (``_solve_relaxed``); the positions counted are both
    searches'.

    With ``C_SEARCH`` the compiled port does the runs (the same verdict, positions and
    winning line); the finish and the move texts are made here either way."""
    state = KlondikeState(pos)
    if C_SEARCH and _c is not None:
        verdict, path, nodes = _c.solve(
            state.tab,
            state.down,
            state.found,
            state.talon,
            state.p,
            state.rec,
            state.draw,
            state.build,
            state.passes,
            budget,
            (
                DEFER_HOME,
                CHAIN,
                TWIN,
                POINTER_KEY,
                DOMINANCE,
                RETURNED,
                RETURNED_DRAW,
                LOOSE_SAFE_DRAW,
                RELAXED,
                WASTE_STACK,
            ),
            (FIRST_RUN, GROWTH, FIRST_RUN_SHORT, GROWTH_SHORT, _luby(state)),
        )
        if verdict != WON:
            return Answer(verdict, [], nodes)
        for m in path:
            state.apply(m)
        path = path + state.finish()
        return Answer(WON, texts(pos, path), nodes)
    here = Runs(state)
    if state.passes and state.draw == 1 and RELAXED:
        verdict, path, nodes = _solve_relaxed(here, budget)
    else:
        while True:
            verdict, path = here.next(budget - here.nodes)
            if verdict != UNKNOWN or here.nodes >= budget:
                break
        nodes = here.nodes
    if verdict != WON:
        return Answer(verdict, [], nodes)
    path = path + state.finish()
    return Answer(WON, texts(pos, path), nodes)


class Runs:
    """One search's runs (``solve_klondike``): the first in the fixed order, each later one
    in its own seeded random order, of growing size, sharing the positions proved lost."""

    def __init__(self, state: KlondikeState) -> None:
        self.state = state
        self.seen: dict[Hashable, int] = {}
        self.short = not state.passes
        self.size = FIRST_RUN_SHORT if self.short else FIRST_RUN
        self.growth = GROWTH_SHORT if self.short else GROWTH
        self.run = 0
        self.nodes = 0

    def next(self, left: int) -> tuple[str, list[Move]]:
        """The next run, of at most ``left`` positions: its verdict and a win's moves."""
        state = self.state
        state.rng = random.Random(self.run) if self.run else None
        verdict, path, n = search_run(state, min(self.size, left), self.seen)
        self.nodes += n
        self.run += 1
        if _luby(state) and self.short:
            self.size = FIRST_RUN_SHORT * luby(self.run + 1)
        else:
            self.size = max(self.size + 1, int(self.size * self.growth))
        return verdict, path


def _solve_relaxed(here: Runs, budget: int) -> tuple[str, list[Move], int]:
    """A pass limit: this search and the same deal's with unlimited passes, turn about (this
    one first, the other whenever it has expanded fewer positions). The other's loss is the
    deal's (a relaxation), its positions proved lost are lost here (``pass_dominated``), and
    once it is won it stops, leaving the rest of the budget to this search. The verdict, a
    win's moves, and the positions both searches expanded."""
    loose = Runs(here.state.unlimited())
    here.state.relaxed = loose.seen
    open_ = True
    try:
        while True:
            if open_ and loose.nodes < here.nodes:
                verdict, _ = loose.next(budget - here.nodes - loose.nodes)
                if verdict == LOST:
                    return LOST, [], here.nodes + loose.nodes
                if verdict == WON:
                    open_ = False
            else:
                verdict, path = here.next(budget - here.nodes - loose.nodes)
                if verdict != UNKNOWN:
                    return verdict, path, here.nodes + loose.nodes
            if here.nodes + loose.nodes >= budget:
                return UNKNOWN, [], here.nodes + loose.nodes
    finally:
        here.state.relaxed = None


def texts(pos: Position, path: list[Move]) -> list[str]:
    """The engine's move texts for a solver path, naming the foundation pile each card uses."""
    fsuit: list[int | None] = []
    height = [0, 0, 0, 0]
    for k in range(1, 5):
        f = pos.piles[f"f{k}"]
        fsuit.append(SUIT[f[0]] if f else None)
        if f:
            height[SUIT[f[0]]] = len(f)
    out: list[str] = []
    for kind, a, b, n, c, macro in path:
        if kind in (WT, WF):
            deals, recycled, after, _ = macro
            out.extend(["deal"] * deals)
            if recycled:
                out.append("recycle")
            out.extend(["deal"] * after)
        src = f"t{a + 1}" if kind in (TT, TF) else "w"
        if kind in (TF, WF):
            s = SUIT[c]
            k = fsuit.index(s) if s in fsuit else fsuit.index(None)
            fsuit[k] = s
            height[s] += 1
            out.append(f"{src}-f{k + 1}")
        elif kind == FT:
            k = fsuit.index(a)
            height[a] -= 1
            if not height[a]:
                fsuit[k] = None
            out.append(f"f{k + 1}-t{b + 1}")
        else:
            out.append(f"{src}-t{b + 1}" + (f":{n}" if n > 1 else ""))
    return out
