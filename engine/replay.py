"""Replaying a recorded race: the server's and a verifier's way to rebuild a board."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .errors import IllegalMove
from .game import Game

#: ``new_game``'s shape, passed in so this module needs no registry
NewGame = Callable[[str, int | str, Mapping[str, object] | None], Game]


def replay(
    game: str,
    seed: int | str,
    options: Mapping[str, object] | None,
    moves: Iterable[str],
    new_game: NewGame,
) -> Game:
    """Deal ``(game, seed, options)`` and play ``moves``; the error names the bad move's index.

    The error keeps its class (BadMoveText for text that is not a move, IllegalMove
    for a move the position refuses) so a verifier can tell a garbled record from
    a cheating one.
    """
    g = new_game(game, seed, options)
    for i, text in enumerate(moves):
        try:
            g.play(text)
        except IllegalMove as exc:
            raise type(exc)(exc.reason, move=str(text), index=i) from None
    return g
