"""Game id -> family class and title, and the constructors built on it.

The registry is the one list of games: ``GAMES`` and ``game_titles()`` are read
from it in registration order, so adding a game is one ``register`` call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .deal import normalize_seed
from .errors import BadOptions
from .game import Game
from .position_text import from_text as _from_text
from .replay import replay as _replay

_CLASSES: dict[str, type[Game]] = {}
_TITLES: dict[str, str] = {}


def register(name: str, cls: type[Game], title: str) -> None:
    """Make ``name`` a game played by ``cls`` and shown to people as ``title``."""
    _CLASSES[name] = cls
    _TITLES[name] = title


def game_titles() -> dict[str, str]:
    """Game id -> human title ("puttputt" -> "Putt Putt"), in registration order."""
    return dict(_TITLES)


def game_class(name: str) -> type[Game]:
    """The family class that plays game ``name``; an unknown name is BadOptions."""
    cls = _CLASSES.get(name)
    if cls is None:
        raise BadOptions(f"unknown game {name!r} (games: {', '.join(_CLASSES)})")
    return cls


def new_game(
    game: str, seed: int | str | None = None, options: Mapping[str, object] | None = None
) -> Game:
    """Deal ``game`` from ``seed`` (u64 int, or text -> SHA-256; None: a fresh secret seed)."""
    cls = game_class(game)
    opts = cls.normalize_options(options)
    return cls._deal(game, normalize_seed(seed), opts)


def from_text(text: str) -> Game:
    """Rebuild a game from position text (seed None); BadPosition says what is wrong."""
    return _from_text(text, _CLASSES)


def replay(
    game: str, seed: int | str, options: Mapping[str, object] | None, moves: Iterable[str]
) -> Game:
    """Deal and play ``moves``; IllegalMove carries the bad move's ``index``."""
    return _replay(game, seed, options, moves, new_game)
