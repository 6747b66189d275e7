"""The engine's exceptions: one base, one subclass per kind of bad input.

Every error the engine raises for bad input is an ``EngineError``, and that is a
``ValueError``, so a caller that only cares "was the input wrong" keeps catching
``ValueError`` while one that answers differently per kind (a protocol error code,
a CLI message) catches the subclass. ``BadMoveText`` is an ``IllegalMove`` too:
text that is not a move is one more way a move is refused, and code written
before the split (``except IllegalMove``) still sees every refused move.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base of every engine error; still a ValueError for callers that catch that."""


class IllegalMove(EngineError):
    """A move that is not legal here (or not canonical text); nothing was changed.

    ``reason`` is the human reason, ``move`` the move text when known, and
    ``index`` the move's position in a replayed sequence (else None).
    """

    def __init__(self, reason: str, move: str | None = None, index: int | None = None) -> None:
        self.reason = reason
        self.move = move
        self.index = index
        if index is not None:
            msg = f"move {index} ({move!r}): {reason}"
        elif move is not None:
            msg = f"{move}: {reason}"
        else:
            msg = reason
        super().__init__(msg)


class BadMoveText(IllegalMove):
    """Move text (or a Move's parts) that is not a canonical move of any game."""


class BadPosition(EngineError):
    """A position text that is not a position of its game (unknown pile, wrong cards, ...)."""


class BadOptions(EngineError):
    """An unknown game, an unknown option, or a value an option does not take."""


class BadSeed(EngineError):
    """A seed that is neither an unsigned 64-bit int nor a text."""
