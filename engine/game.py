"""The Game base: history, checked play, exact undo, text, views, copies.

A game family subclasses Game and supplies four things: ``_legal()`` (every legal
move, in the documented order), ``_check_move(move, si, di, n)`` (None, or the
reason a pile-to-pile move is illegal, without generating the legal moves; the
checks every game shares run first in ``_check``), ``_do(move)`` (the unchecked
apply, which pushes an undo record and returns the Effect) and ``_undo_last()``.
Everything else (history, parsing, views, position text) lives here once.

Instances are built with ``cls.__new__`` (``_blank`` then the family's
``_make``), not ``__init__``, so every attribute is declared with its type in the
class body: the shared ones here, each family's own state (its ``_undo`` record
list, whose record shape differs per family, and caches) in the family class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self, TypeAlias, cast

from .cards import TEXT
from .errors import BadOptions, IllegalMove
from .moves import _PARSED, DEAL, Move, _parse_slow

NO_CARDS: tuple[str, ...] = ()

#: an option's value: a count (draw, passes) or a word (moves)
OptionValue: TypeAlias = int | str
#: a game's full options, defaults included
Options: TypeAlias = dict[str, OptionValue]
#: an option's default and its allowed values (None: any count >= 0)
OptionSpec: TypeAlias = tuple[OptionValue, tuple[OptionValue, ...] | None]
#: what position text hands ``_from_piles``: pile name -> (card, face down) bottom first
PileItems: TypeAlias = dict[str, list[tuple[int, bool]]]
#: one pile in a view: card texts, with ``{"hidden": n}`` for n hidden cards in a row
PileView: TypeAlias = list[str | dict[str, int]]
#: table[si][di][n] -> the interned move of n cards from pile index si to di
MoveTable: TypeAlias = list[list[list[Move]]]


class Effect:
    """What one move did: the move, the cards it made visible, and the change in ``home``."""

    __slots__ = ("home_delta", "move", "revealed")

    def __init__(
        self, move: Move, revealed: tuple[str, ...] = NO_CARDS, home_delta: int = 0
    ) -> None:
        self.move = move
        self.revealed = revealed
        self.home_delta = home_delta

    def __repr__(self) -> str:
        return (
            f"Effect(move={self.move!r}, revealed={self.revealed!r}, home_delta={self.home_delta})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Effect)
            and self.move == other.move
            and self.revealed == other.revealed
            and self.home_delta == other.home_delta
        )


def pile_index(names: tuple[str, ...]) -> dict[str | None, int]:
    """A family's pile name -> index map (``Game.PILE_INDEX``), from its pile order."""
    return {n: i for i, n in enumerate(names)}


def _parse(move: Move | str) -> Move:
    if move.__class__ is Move:
        return move
    m = _PARSED.get(move) if isinstance(move, str) else None
    return m if m is not None else _parse_slow(move)


class Game:
    """One position of one game plus the moves that led to it.

    Piles live in ``self.piles`` in position-text order (``PILE_NAMES``); the
    stock is stored reversed (next card last) so a deal is a list pop.
    """

    #: the family's own name (Tabby Cat's class also plays Manx under that name)
    NAME: ClassVar[str]
    PILE_NAMES: ClassVar[tuple[str, ...]]
    #: pile name -> index; keyed ``str | None`` only so that a pile move's ``dst``
    #: (typed optional for deal/recycle) indexes it on the hot path without a check
    PILE_INDEX: ClassVar[dict[str | None, int]]
    STOCK: ClassVar[int]
    DECKS: ClassVar[int] = 1
    HOME0: ClassVar[int] = 0
    TOTAL: ClassVar[int] = 52
    #: option name -> (default, allowed values or None for "positive int or 0")
    OPTIONS: ClassVar[dict[str, OptionSpec]] = {}
    #: game-line keys that carry hidden state rather than options
    STATE_KEYS: ClassVar[tuple[str, ...]] = ()
    #: why 'deal' is refused on an empty stock (games word it for their redeal rule)
    EMPTY_STOCK: ClassVar[str] = "the stock is empty"
    #: piles whose cards may be face down in position text (Klondike's tableau)
    FACE_DOWN_PILES: ClassVar[frozenset[str]] = frozenset()

    game: str
    options: Options
    seed: int | None
    piles: list[list[int]]
    history: list[Move]
    #: cards on the foundations (or discards), kept up to date by ``_do``/``_undo_last``
    _home: int
    #: every instance attribute, for ``copy`` (each family adds its own; a test checks that
    #: the list names every attribute the classes declare)
    _STATE: ClassVar[tuple[str, ...]] = ("game", "options", "seed", "piles", "history", "_home")

    # ----------------------------------------------------------------- setup

    @classmethod
    def normalize_options(cls, options: Mapping[str, object] | None) -> Options:
        """The full option dict (defaults filled in); unknown names or values are BadOptions."""
        out: Options = {name: default for name, (default, _) in cls.OPTIONS.items()}
        for name, value in (options or {}).items():
            spec = cls.OPTIONS.get(name)
            if spec is None:
                known = ", ".join(cls.OPTIONS) or "none"
                raise BadOptions(f"unknown option {name!r} for {cls.NAME} (options: {known})")
            out[name] = _option_value(name, value, *spec)
        return out

    @classmethod
    def _blank(cls, game: str, options: Options, seed: int | None, piles: list[list[int]]) -> Self:
        """A game with these piles and no history yet; each ``_make`` adds its own state."""
        g = cls.__new__(cls)
        g.game = game
        g.options = options
        g.seed = seed
        g.history = []
        g.piles = piles
        return g

    # ------------------------------------------------------------ moves

    def legal_moves(self) -> list[Move]:
        """Every legal move once, in the documented stable order."""
        return self._legal()

    def play(self, move: Move | str) -> Effect:
        """Play a move checked against the rules; IllegalMove (changing nothing) if it is not legal."""
        m = move if move.__class__ is Move else _parse(move)  # the bot path skips a call
        reason = self._check(m)
        if reason is not None:
            raise IllegalMove(reason, move=m.text)
        eff = self._do(m)
        self.history.append(m)
        return eff

    def is_legal(self, move: Move | str) -> bool:
        try:
            return self._check(_parse(move)) is None
        except IllegalMove:
            return False

    def apply(self, move: Move) -> Effect:
        """Unchecked play for bots and solvers: ``move`` must come from legal_moves()."""
        eff = self._do(move)
        self.history.append(move)
        return eff

    def undo(self) -> Move:
        """Take back the last move exactly (flips, recycles and pass counts included)."""
        if not self.history:
            raise IndexError("no move to undo")
        self._undo_last()
        return self.history.pop()

    # ------------------------------------------------------------ status

    def home(self) -> int:
        return self._home

    def is_won(self) -> bool:
        return self._home == self.TOTAL

    def is_dead(self) -> bool:
        """Not won and no legal move (Klondike refines this, RULES.md 5.3)."""
        return not self.is_won() and not self._legal()

    def progress(self) -> float:
        return (self.home() - self.HOME0) / (self.TOTAL - self.HOME0)

    @property
    def deals_left(self) -> int | None:
        return None

    @property
    def passes_left(self) -> int | None:
        return None

    # ------------------------------------------------------------ text and views

    def _game_line_extras(self) -> list[str]:
        """key=value items for the game line: non-default options, then hidden state."""
        out: list[str] = []
        for name, (default, _) in self.OPTIONS.items():
            if self.options[name] != default:
                out.append(f"{name}={self.options[name]}")
        return out

    def _pile_text_items(self, i: int) -> list[str]:
        p = self.piles[i]
        if i == self.STOCK:
            return [TEXT[c] for c in reversed(p)]
        return [TEXT[c] for c in p]

    def to_text(self) -> str:
        """The position text of RULES.md section 4 (stock first-dealt first)."""
        lines = [" ".join(["game", self.game, *self._game_line_extras()])]
        for i, name in enumerate(self.PILE_NAMES):
            lines.append(" ".join([name, *self._pile_text_items(i)]))
        return "\n".join(lines) + "\n"

    def _view_pile(self, i: int) -> PileView:
        p = self.piles[i]
        if i == self.STOCK:
            return [{"hidden": len(p)}] if p else []
        return [TEXT[c] for c in p]

    def view(self) -> dict[str, Any]:
        """What a viewer may see: visible cards as text, hidden ones only as counts.

        Plain JSON-like data (shape in the package docstring); typed ``dict[str, Any]``
        because that is how the server and protocol hold and extend views.
        """
        return {
            "game": self.game,
            "options": dict(self.options),
            "piles": {name: self._view_pile(i) for i, name in enumerate(self.PILE_NAMES)},
            "stock": len(self.piles[self.STOCK]),
            "deals_left": self._view_deals_left(),
            "passes_left": self.passes_left,
            "moves": len(self.history),
            "home": self.home(),
            "progress": self.progress(),
            "won": self.is_won(),
            "dead": self.is_dead(),
        }

    def _pile_state(self, i: int) -> Any:
        """What pile i's view is built from, as a value kept to compare (``view_since``)."""
        return tuple(self.piles[i])

    def touched(self, move: Move) -> tuple[int, ...] | None:
        """The indexes of the piles ``move`` changes when it is played, and when it is taken
        back (the same piles), for ``view_since``; None: not known, every pile is compared.
        A family whose moves change only the piles they name says so by overriding this."""
        return None

    def view_since(
        self,
        before: dict[str, Any] | None,
        states: list[Any],
        touched: set[int] | None = None,
    ) -> dict[str, Any]:
        """The same view as ``view()``, built from ``before``, an earlier view of this game:
        only the piles whose state changed since are built again (the others are shared with
        ``before``; views are never changed in place). ``states`` holds each pile's state as
        ``before`` was built (``_pile_state``), and is brought up to date here; empty (or
        ``before`` None): the whole view is built. ``touched``, when given, holds every pile
        that may have changed since ``before`` (``touched()`` of each move played or taken
        back): only those are compared (a server's move compares 2 piles of Klondike's 13)."""
        names = self.PILE_NAMES
        if before is None or len(states) != len(names):
            states[:] = [self._pile_state(i) for i in range(len(names))]
            return self.view()
        piles = dict(before["piles"])
        for i in range(len(names)) if touched is None else touched:
            state = self._pile_state(i)
            if state != states[i]:
                states[i] = state
                piles[names[i]] = self._view_pile(i)
        view = dict(before)
        view["piles"] = piles
        view["stock"] = len(self.piles[self.STOCK])
        view["deals_left"] = self._view_deals_left()
        view["passes_left"] = self.passes_left
        view["moves"] = len(self.history)
        view["home"] = self.home()
        view["progress"] = self.progress()
        view["won"] = self.is_won()
        view["dead"] = self._dead_since(touched)
        return view

    def _dead_since(self, touched: set[int] | None) -> bool:
        """``is_dead()`` for ``view_since``: a family may skip the search while ``touched``
        (every pile changed since the last view) leaves its last answer true."""
        return self.is_dead()

    def _view_deals_left(self) -> int | None:
        return self.deals_left

    def copy(self) -> Game:
        """An independent copy (history and undo records included), attribute by attribute
        (``_STATE``): a compiled game (setup.py) has no ``__dict__`` to copy."""
        new = self.__class__.__new__(self.__class__)
        for name in self._STATE:
            try:
                v = getattr(self, name)
            except AttributeError:
                continue  # not set (a cache not made yet)
            if isinstance(v, list):
                v = [list(x) if isinstance(x, list) else x for x in v]
            elif isinstance(v, dict):
                v = dict(v)
            setattr(new, name, v)
        return new

    def __repr__(self) -> str:
        return (
            f"<{self.__class__.__name__} {self.game} moves={len(self.history)} home={self.home()}>"
        )

    # ------------------------------------------------------------ hooks

    def _legal(self) -> list[Move]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check(self, m: Move) -> str | None:
        """None, or why ``m`` is illegal: the refusals every game words alike, then ``_check_move``."""
        if self._home == self.TOTAL:
            return "the game is won"
        if m.dst is None:
            return self._check_stock(m)
        idx = self.PILE_INDEX
        si = idx.get(m.src)
        di = idx.get(m.dst)
        if si is None or di is None:
            return self._unknown(m)
        return self._check_move(m, si, di, m.count)

    def _check_stock(self, m: Move) -> str | None:
        """A move without a destination ('deal', or 'recycle' where the game has none)."""
        if m is DEAL:
            return None if self.piles[self.STOCK] else self.EMPTY_STOCK
        return f"there is no {m.src} in {self.game}"

    def _check_move(
        self, m: Move, si: int, di: int, n: int
    ) -> str | None:  # pragma: no cover - abstract
        """A move of ``n`` cards from pile index ``si`` to ``di``, both known piles of this game."""
        raise NotImplementedError

    def _do(self, m: Move) -> Effect:  # pragma: no cover - abstract
        raise NotImplementedError

    def _undo_last(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def _deal(cls, game: str, seed: int, options: Options) -> Self:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def _from_piles(
        cls, game: str, options: Options, state: dict[str, int], piles: PileItems
    ) -> Self:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------ helpers for subclasses

    def _unknown(self, m: Move) -> str:
        for name in (m.src, m.dst):
            if name not in self.PILE_INDEX:
                return f"there is no pile {name} in {self.game}"
        return f"{m.text} is not a move of {self.game}"


def move_cards(p: list[int], q: list[int], n: int) -> None:
    """Move the top ``n`` cards of ``p`` onto ``q`` in order; apply and undo both use it."""
    if n == 1:
        q.append(p.pop())
    else:
        q.extend(p[-n:])
        del p[-n:]


def move_table(n_piles: int, max_count: int) -> MoveTable:
    """table[si][di][n] -> the interned Move, so generation never builds objects.

    Entries no rule can produce stay None although the table is typed as holding
    Moves: generation reads only entries its rules allow (a None slipping out
    would fail at its first use), and a ``Move | None`` type would cost a check
    per generated move on the hottest path for no caught bug.
    """
    empty: list[list[list[Move | None]]] = [
        [[None] * (max_count + 1) for _ in range(n_piles)] for _ in range(n_piles)
    ]
    return cast(MoveTable, empty)


def fill_table(table: MoveTable, names: tuple[str, ...], si: int, di: int, counts: range) -> None:
    """Intern the moves of each count in ``counts`` from pile index ``si`` to ``di``."""
    for n in counts:
        table[si][di][n] = Move(names[si], names[di], n)


def _option_value(
    name: str, value: object, default: OptionValue, allowed: tuple[OptionValue, ...] | None
) -> OptionValue:
    """``value`` checked against its option (a digit string counts as an int); else BadOptions."""
    if isinstance(default, int):
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadOptions(f"option {name} takes an int, not {value!r}")
        if allowed is None:
            if value < 0:
                raise BadOptions(f"option {name} is 0 (unlimited) or a positive count, not {value}")
            return value
        if value not in allowed:
            raise BadOptions(f"option {name} is one of {', '.join(map(str, allowed))}, not {value}")
        return value
    if allowed is None or not isinstance(value, str) or value not in allowed:
        choices = ", ".join(map(str, allowed or ()))
        raise BadOptions(f"option {name} is one of {choices}, not {value!r}")
    return value
