"""Replaying a recorded race: the server's and a verifier's way to rebuild a board."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .moves import IllegalMove


def replay(
    game: str, seed: int | str, options: dict[str, Any] | None, moves: Iterable[str], new_game
) -> Any:
    """Deal ``(game, seed, options)`` and play ``moves``; IllegalMove names the bad move's index."""
    g = new_game(game, seed, options)
    for i, text in enumerate(moves):
        try:
            g.play(text)
        except IllegalMove as exc:
            raise IllegalMove(exc.reason, move=str(text), index=i) from None
    return g
