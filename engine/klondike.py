"""Klondike (RULES.md 5.3) with options draw=1|3, moves=top|build, passes=0|N.

State beyond the piles: ``_down[x]`` face-down cards at the bottom of each
tableau pile, ``_wvis`` how many waste cards are visible (1 with draw one; with
draw three the dealt fan, see docs/RULES.md section 7) and
``_recycled`` the recycles made, which the pass limit counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from .cards import RANK, RED, SUIT, TEXT
from .deal import shuffled_deck
from .errors import BadPosition
from .game import (
    NO_CARDS,
    Effect,
    Game,
    Options,
    OptionSpec,
    PileItems,
    PileView,
    fill_table,
    move_cards,
    move_table,
    pile_index,
)
from .moves import DEAL, RECYCLE, Move

T = 7
F = 7  # f1..f4 are indexes 7..10
S = 11
W = 12
#: what a deal or a recycle changes (`Klondike.touched`)
_STOCK_WASTE = (S, W)
NAMES = ("t1", "t2", "t3", "t4", "t5", "t6", "t7", "f1", "f2", "f3", "f4", "s", "w")
_TABLE = move_table(len(NAMES), 13)
for _x in range(T):
    for _y in range(T):
        if _x != _y:
            fill_table(_TABLE, NAMES, _x, _y, range(1, 14))
    for _k in range(F, F + 4):
        fill_table(_TABLE, NAMES, _x, _k, range(1, 2))
        fill_table(_TABLE, NAMES, _k, _x, range(1, 2))
for _y in range(F + 4):
    fill_table(_TABLE, NAMES, W, _y, range(1, 2))


def _tab_ok(c: int, q: list[int]) -> bool:
    """Card c may go on tableau pile q (an empty pile takes only a King)."""
    if not q:
        return RANK[c] == 13
    d = q[-1]
    return RED[c] != RED[d] and RANK[c] + 1 == RANK[d]


def _found_ok(c: int, f: list[int]) -> bool:
    if not f:
        return RANK[c] == 1
    d = f[-1]
    return SUIT[c] == SUIT[d] and RANK[c] == RANK[d] + 1


#: the cards a tableau pile topped by card d takes: rank one lower, the other colour
_TAB_WANT: list[tuple[int, ...]] = [
    tuple(c for c in range(52) if RANK[c] + 1 == RANK[d] and RED[c] != RED[d]) for d in range(52)
]
#: the card a foundation topped by card d takes (none on a King)
_HOME_NEXT: list[tuple[int, ...]] = [(d + 1,) if RANK[d] < 13 else () for d in range(52)]
_ACES: tuple[int, ...] = tuple(c for c in range(52) if RANK[c] == 1)


def _tops_playable(order: list[int], draw: int, playable: Callable[[int], bool]) -> bool:
    """Would dealing ``order`` (first dealt first) in groups of ``draw`` ever top the waste with a playable card?"""
    n = len(order)
    for i in range(draw - 1, n, draw):
        if playable(order[i]):
            return True
    return bool(n % draw) and playable(order[-1])


class Klondike(Game):
    NAME = "klondike"
    PILE_NAMES = NAMES
    PILE_INDEX = pile_index(NAMES)
    _STATE = (
        *Game._STATE,
        "_alive",
        "_down",
        "_recycled",
        "_wvis",
        "_draw",
        "_build",
        "_passes",
        "_undo",
    )
    STOCK = S
    TOTAL = 52
    OPTIONS: ClassVar[dict[str, OptionSpec]] = {
        "draw": (1, (1, 3)),
        "moves": ("top", ("top", "build")),
        "passes": (0, None),
    }
    STATE_KEYS = ("recycled", "shown")
    FACE_DOWN_PILES = frozenset(NAMES[:T])
    #: the two piles of a move the last dead check found (``_dead_since``); None: none kept
    _alive: tuple[int, int] | None = None

    #: face-down cards at the bottom of each tableau pile
    _down: list[int]
    #: recycles made (the pass limit counts them)
    _recycled: int
    #: visible waste cards (the draw-three fan)
    _wvis: int
    #: the options, unpacked once for the hot paths
    _draw: int
    _build: bool
    _passes: int
    #: per move: the move, its card count, the waste fan before it, whether it flipped a card
    #: per move played, an int: the cards moved << 3 | the waste's fan before << 1 | a flip
    #: (the move is the history's last: no tuple, nothing for the garbage collector to walk
    #: for as long as the game lives)
    _undo: list[int]

    @classmethod
    def _deal(cls, game: str, seed: int, options: Options) -> Klondike:
        cards = shuffled_deck(seed)
        piles: list[list[int]] = [[] for _ in NAMES]
        i = 0
        for row in range(T):
            for p in range(row, T):
                piles[p].append(cards[i])
                i += 1
        piles[S] = cards[i:][::-1]
        return cls._make(game, options, seed, piles, list(range(T)), 0, 0)

    @classmethod
    def _make(
        cls,
        game: str,
        options: Options,
        seed: int | None,
        piles: list[list[int]],
        down: list[int],
        recycled: int,
        wvis: int,
    ) -> Klondike:
        g = cls._blank(game, options, seed, piles)
        g._undo = []
        g._down = down
        g._recycled = recycled
        g._wvis = wvis
        g._draw = int(options["draw"])
        g._build = options["moves"] == "build"
        g._passes = int(options["passes"])
        g._home = sum(len(piles[k]) for k in range(F, F + 4))
        return g

    @classmethod
    def _from_piles(
        cls, game: str, options: Options, state: dict[str, int], piles: PileItems
    ) -> Klondike:
        out = []
        down = []
        for i, name in enumerate(NAMES):
            items = piles[name]
            out.append([c for c, _ in items])
            if i < T:
                d = 0
                while d < len(items) and items[d][1]:
                    d += 1
                if any(fd for _, fd in items[d:]):
                    raise BadPosition(
                        f"{name}: face-down cards must all lie below the face-up ones"
                    )
                if items and d == len(items):
                    raise BadPosition(f"{name}: the top card of a tableau pile is face up")
                down.append(d)
        for k in range(F, F + 4):
            f = out[k]
            for j, c in enumerate(f):
                if RANK[c] != j + 1 or SUIT[c] != SUIT[f[0]]:
                    raise BadPosition(f"{NAMES[k]} must build up by suit from the Ace")
        recycled = state.get("recycled", 0)
        passes = int(options["passes"])
        if passes and recycled >= passes:
            raise BadPosition(f"recycled={recycled} uses more than the {passes} passes allowed")
        waste = out[W]
        if options["draw"] == 1:
            if "shown" in state:
                raise BadPosition("shown= applies only to draw=3")
            wvis = 1 if waste else 0
        else:
            wvis = state.get("shown", min(3, len(waste)))
            if waste and not 1 <= wvis <= min(3, len(waste)):
                raise BadPosition(f"shown={wvis} must be 1..{min(3, len(waste))}")
            if not waste and wvis:
                raise BadPosition("shown= needs a non-empty waste")
        out[S].reverse()
        return cls._make(game, options, None, out, down, recycled, wvis)

    # ------------------------------------------------------------ state views

    def _game_line_extras(self) -> list[str]:
        out = super()._game_line_extras()
        if self._passes and self._recycled:
            out.append(f"recycled={self._recycled}")
        w = self.piles[W]
        if self._draw == 3 and w and self._wvis != min(3, len(w)):
            out.append(f"shown={self._wvis}")
        return out

    def _pile_text_items(self, i: int) -> list[str]:
        if i < T:
            p = self.piles[i]
            d = self._down[i]
            return [f"[{TEXT[c]}]" for c in p[:d]] + [TEXT[c] for c in p[d:]]
        return super()._pile_text_items(i)

    def _view_pile(self, i: int) -> PileView:
        p = self.piles[i]
        if i < T:
            d = self._down[i]
            head: PileView = [{"hidden": d}] if d else []
            return head + [TEXT[c] for c in p[d:]]
        if i == W:
            hidden = len(p) - self._wvis
            head = [{"hidden": hidden}] if hidden else []
            return head + [TEXT[c] for c in p[hidden:]]
        return super()._view_pile(i)

    def _pile_state(self, i: int) -> Any:
        if i < T:
            return (tuple(self.piles[i]), self._down[i])
        if i == W:
            return (tuple(self.piles[i]), self._wvis)
        return tuple(self.piles[i])

    def _view_deals_left(self) -> int | None:
        return None

    def touched(self, move: Move) -> tuple[int, ...] | None:
        """A deal or a recycle changes the stock and the waste (its visible fan too); a pile
        move its two piles (a flip, a waste fan's change included): nothing else has a pile
        state (``_pile_state``)."""
        if move.dst is None:
            return _STOCK_WASTE
        idx = self.PILE_INDEX
        return (idx[move.src], idx[move.dst])

    @property
    def deals_left(self) -> int:
        """Deals left in this pass through the stock."""
        return -(-len(self.piles[S]) // self._draw)

    @property
    def passes_left(self) -> int | None:
        """Recycles still allowed (None: unlimited)."""
        if not self._passes:
            return None
        return self._passes - 1 - self._recycled

    def face_down(self, pile: str) -> int:
        """How many face-down cards lie at the bottom of tableau pile ``pile``."""
        return self._down[self.PILE_INDEX[pile]]

    def visible_waste(self) -> int:
        return self._wvis

    def _can_recycle(self) -> bool:
        return (
            not self.piles[S]
            and bool(self.piles[W])
            and (not self._passes or self._recycled + 1 < self._passes)
        )

    def _run(self, x: int) -> int:
        """Length of the movable run on top of tableau pile x (1 with moves=top)."""
        p = self.piles[x]
        if not self._build:
            return 1
        up = len(p) - self._down[x]
        i = len(p) - 1
        k = 1
        while k < up and RED[p[i]] != RED[p[i - 1]] and RANK[p[i]] + 1 == RANK[p[i - 1]]:
            k += 1
            i -= 1
        return k

    # ------------------------------------------------------------ generation

    def _legal(self) -> list[Move]:
        return self._legal_moves(True)

    def _legal_moves(self, with_stock: bool) -> list[Move]:
        if self._home == 52:
            return []
        piles = self.piles
        table = _TABLE
        out: list[Move] = []
        found = piles[F : F + 4]
        for x in range(T):
            p = piles[x]
            if not p:
                continue
            top = p[-1]
            rt = RANK[top]
            run = self._run(x) if self._build else 1
            row = table[x]
            for y in range(T):
                if y == x:
                    continue
                q = piles[y]
                if not q:
                    n = 14 - rt
                    if n <= run:
                        out.append(row[y][n])
                else:
                    d = q[-1]
                    n = RANK[d] - rt
                    if 1 <= n <= run and RED[p[-n]] != RED[d]:
                        out.append(row[y][n])
            for k in range(4):
                if _found_ok(top, found[k]):
                    out.append(row[F + k][1])
        for k in range(4):
            f = found[k]
            if f:
                c = f[-1]
                row = table[F + k]
                for y in range(T):
                    if _tab_ok(c, piles[y]):
                        out.append(row[y][1])
        w = piles[W]
        if w:
            c = w[-1]
            row = table[W]
            for y in range(T):
                if _tab_ok(c, piles[y]):
                    out.append(row[y][1])
            for k in range(4):
                if _found_ok(c, found[k]):
                    out.append(row[F + k][1])
        if with_stock:
            if piles[S]:
                out.append(DEAL)
            elif self._can_recycle():
                out.append(RECYCLE)
        return out

    def is_dead(self) -> bool:
        """No move but deal/recycle, and no stock or waste card could ever become a playable waste top."""
        self._alive = None
        if self._home == 52 or self._any_move():
            return False
        return not self._cycle_finds_play()

    def _dead_since(self, touched: set[int] | None) -> bool:
        """``is_dead``, skipped when the move the last dead check found (``_alive``: its two
        piles) is still there: neither pile changed since (``touched``, as ``view_since``'s)."""
        alive = self._alive
        if alive is not None and touched is not None and touched.isdisjoint(alive):
            return False
        return self.is_dead()

    def _witness(self, src: int, c: int, home_too: bool) -> bool:
        """``_any_move`` found card ``c`` of pile ``src`` a place: keep that move's two piles
        (``_alive``: while neither changes, the move is still legal, and the game not dead)."""
        piles = self.piles
        for y in range(T):
            if y != src and _tab_ok(c, piles[y]):
                self._alive = (src, y)
                return True
        if home_too:
            for k in range(F, F + 4):
                if _found_ok(c, piles[k]):
                    self._alive = (src, k)
                    return True
        return True

    def _any_move(self) -> bool:
        """Whether ``_legal_moves(False)`` would find a move (the dead check runs after every
        move a server stores). Instead of trying each source on each target, it collects the
        cards the targets take (two per tableau top, the next card of each foundation) and
        looks each source card up once: about a tenth of the pairwise checks."""
        piles = self.piles
        want: set[int] = set()  # cards some non-empty tableau pile takes
        empty = False  # an empty tableau pile takes any King
        for y in range(T):
            q = piles[y]
            if q:
                want.update(_TAB_WANT[q[-1]])
            else:
                empty = True
        home: set[int] = set()  # cards some foundation takes
        for k in range(F, F + 4):
            f = piles[k]
            if f:
                home.update(_HOME_NEXT[f[-1]])
            else:
                home.update(_ACES)
        w = piles[W]
        if w:
            c = w[-1]
            if c in want or c in home or (empty and RANK[c] == 13):
                return self._witness(W, c, True)
        build = self._build
        down = self._down
        for x in range(T):
            p = piles[x]
            if not p:
                continue
            c = p[-1]
            if c in home or c in want or (empty and RANK[c] == 13):
                return self._witness(x, c, True)
            if build:
                # the movable run below the top (the cards `_run` counts): any of them may
                # move with the cards above it onto a pile that takes it
                i = len(p) - 1
                low = down[x]
                while i > low:
                    below = p[i - 1]
                    c = p[i]
                    if RED[c] == RED[below] or RANK[c] + 1 != RANK[below]:
                        break
                    if below in want or (empty and RANK[below] == 13):
                        return self._witness(x, below, False)
                    i -= 1
        for k in range(F, F + 4):
            f = piles[k]
            if f:
                c = f[-1]
                if c in want or (empty and RANK[c] == 13):
                    return self._witness(k, c, False)
        return False

    def _cycle_finds_play(self) -> bool:
        """Simulate dealing (and recycling, within the pass limit) with no other move.

        Only deal/recycle are possible, so the cycle is deterministic: the waste
        tops it produces are exactly the cards that could become playable.
        After one recycle the stock holds every stock and waste card and every
        later pass repeats that one, so at most one full pass is simulated.
        """
        piles = self.piles
        found = piles[F : F + 4]
        tabs = piles[:T]

        def playable(c: int) -> bool:
            return any(_found_ok(c, f) for f in found) or any(_tab_ok(c, q) for q in tabs)

        draw = self._draw
        stock_order = piles[S][::-1]  # first dealt first
        if _tops_playable(stock_order, draw, playable):
            return True
        recycles_left = None if not self._passes else self._passes - 1 - self._recycled
        if recycles_left is not None and recycles_left <= 0:
            return False
        return _tops_playable(piles[W] + stock_order, draw, playable)

    # ------------------------------------------------------------ checking

    def _check_stock(self, m: Move) -> str | None:
        piles = self.piles
        if m is DEAL:
            if piles[S]:
                return None
            return (
                "the stock is empty (recycle the waste)"
                if self._can_recycle()
                else "the stock is empty"
            )
        if m is RECYCLE:
            if piles[S]:
                return "the stock is not empty yet"
            if not piles[W]:
                return "the waste is empty"
            if self._passes and self._recycled + 1 >= self._passes:
                return f"no passes left (passes={self._passes})"
            return None
        return self._unknown(m)

    def _check_move(self, m: Move, si: int, di: int, n: int) -> str | None:
        if si == di:
            return "a pile cannot move onto itself"
        if di >= S:
            return f"nothing moves onto {m.dst}"
        if si == S:
            return "the stock is used by 'deal'"
        piles = self.piles
        p = piles[si]
        if not p:
            return f"{m.src} is empty"
        if n > 1:
            if si >= T or di >= T:
                return "only single cards move from or to the foundations and the waste"
            if not self._build:
                return "only the top card of a pile moves (moves=top)"
            run = self._run(si)
            if n > run:
                return f"only the face-up run of {m.src} moves ({run} card{'s' if run > 1 else ''})"
        c = p[-n]
        q = piles[di]
        if di < T:
            if _tab_ok(c, q):
                return None
            if not q:
                return f"an empty tableau pile takes only a King, not {TEXT[c]}"
            return f"{TEXT[c]} does not go on {TEXT[q[-1]]} (one rank lower, other colour)"
        if si >= F and si < S:
            return "a foundation card goes back only to the tableau"
        if _found_ok(c, q):
            return None
        if not q:
            return f"an empty foundation takes only an Ace, not {TEXT[c]}"
        return f"{TEXT[c]} does not go on {TEXT[q[-1]]} (same suit, one rank up)"

    # ------------------------------------------------------------ make / unmake

    def _do(self, m: Move) -> Effect:
        piles = self.piles
        if m is DEAL:
            stock = piles[S]
            w = piles[W]
            k = min(self._draw, len(stock))
            old_vis = self._wvis
            for _ in range(k):
                w.append(stock.pop())
            L = len(w)
            vis = 1 if self._draw == 1 else min(3, L)
            self._wvis = vis
            self._undo.append(k << 3 | old_vis << 1)
            # newly visible: the dealt cards, plus old waste cards the fan uncovers again
            lo, hi = L - vis, L - k - old_vis
            shown = w[lo:hi] + w[L - k :] if lo < hi else w[L - k :]
            return Effect(m, tuple([TEXT[c] for c in shown]), 0)
        if m is RECYCLE:
            w = piles[W]
            self._undo.append(self._wvis << 1)
            w.reverse()
            piles[S] = w
            piles[W] = []
            self._wvis = 0
            self._recycled += 1
            return Effect(m, NO_CARDS, 0)
        idx = self.PILE_INDEX
        si = idx[m.src]
        di = idx[m.dst]
        n = m.count
        p = piles[si]
        q = piles[di]
        move_cards(p, q, n)
        delta = (1 if F <= di < S else 0) - (1 if F <= si < S else 0)
        self._home += delta
        revealed = NO_CARDS
        flipped = False
        old_vis = self._wvis
        if si < T:
            d = self._down[si]
            if d and len(p) == d:
                self._down[si] = d - 1
                flipped = True
                revealed = (TEXT[p[-1]],)
        elif si == W:
            if old_vis > 1:
                self._wvis = old_vis - 1
            elif p:
                revealed = (TEXT[p[-1]],)
            else:
                self._wvis = 0
        self._undo.append(n << 3 | old_vis << 1 | flipped)
        return Effect(m, revealed, delta)

    def _undo_last(self) -> None:
        rec = self._undo.pop()
        m = self.history[-1]
        n = rec >> 3
        piles = self.piles
        self._wvis = (rec >> 1) & 3
        if m is DEAL:
            stock = piles[S]
            w = piles[W]
            for _ in range(n):
                stock.append(w.pop())
            return
        if m is RECYCLE:
            s = piles[S]
            s.reverse()
            piles[W] = s
            piles[S] = []
            self._recycled -= 1
            return
        idx = self.PILE_INDEX
        si = idx[m.src]
        di = idx[m.dst]
        if rec & 1:
            self._down[si] += 1
        move_cards(piles[di], piles[si], n)
        self._home -= (1 if F <= di < S else 0) - (1 if F <= si < S else 0)
