"""Game name -> family class, and the constructors built on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .deal import normalize_seed
from .game import Game
from .position_text import from_text as _from_text
from .replay import replay as _replay

_CLASSES: dict[str, type[Game]] = {}


def register(name: str, cls: type[Game]) -> None:
    _CLASSES[name] = cls


def game_class(name: str) -> type[Game]:
    cls = _CLASSES.get(name)
    if cls is None:
        raise ValueError(f"unknown game {name!r} (games: {', '.join(_CLASSES)})")
    return cls


def new_game(
    game: str, seed: int | str | None = None, options: dict[str, Any] | None = None
) -> Game:
    """Deal ``game`` from ``seed`` (u64 int, or text -> SHA-256; None: a fresh secret seed)."""
    cls = game_class(game)
    opts = cls.normalize_options(options)
    return cls._deal(game, normalize_seed(seed), opts)


def from_text(text: str) -> Game:
    """Rebuild a game from position text (seed None); BadPosition says what is wrong."""
    return _from_text(text, _CLASSES)


def replay(
    game: str, seed: int | str, options: dict[str, Any] | None, moves: Iterable[str]
) -> Game:
    """Deal and play ``moves``; IllegalMove carries the bad move's ``index``."""
    return _replay(game, seed, options, moves, new_game)
