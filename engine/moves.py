"""Moves: small interned value objects whose str() is the canonical text.

Like UCI in chess, a move is ``src-dst`` with ``:N`` exactly when N >= 2, or one
of the words ``deal`` and ``recycle``. Each distinct move exists once
(``Move('t1', 't3', 4) is Move.parse('t1-t3:4')``), so move generation hands out
ready-made objects and the hot paths never build new ones.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .errors import BadMoveText

_PILE = r"(?:[tf][1-9][0-9]*|[swr])"
_MOVE_RE = re.compile(rf"({_PILE})-({_PILE})(?::([1-9][0-9]*))?")
_PILE_RE = re.compile(_PILE)
SPECIAL = ("deal", "recycle")
#: cache of parsed canonical texts; bounded so hostile input cannot grow it forever
_PARSED: dict[str, Move] = {}
_PARSE_CACHE_MAX = 20000
#: only moves that some game can make are interned (a pile number of at most two
#: digits, a count of at most 64 cards), so hostile texts like ``t1-t2:N`` for
#: every N cannot grow the intern table without bound
_INTERN_MAX_COUNT = 64
_INTERN_MAX_NAME = 3
#: no game has a move text this long ("t16-f16:52" is 10); longer input is
#: refused before any work (int() of a huge digit string would even raise a
#: plain ValueError instead of BadMoveText)
_MAX_TEXT = 20


class Move:
    """One move: ``src``, ``dst`` (None for deal/recycle) and ``count`` (0 for deal/recycle)."""

    __slots__ = ("count", "dst", "src", "text")
    _interned: ClassVar[dict[tuple[str, str | None, int], Move]] = {}

    src: str
    dst: str | None
    count: int
    text: str

    def __new__(cls, src: str, dst: str | None = None, count: int = 1) -> Move:
        if count.__class__ is not int:
            raise BadMoveText(f"a move's count is an int, not {count!r}")
        key = (src, dst, count)
        m = cls._interned.get(key)
        if m is not None:
            return m
        if dst is None:
            if src not in SPECIAL:
                raise BadMoveText(
                    f"a move without a destination is 'deal' or 'recycle', not {src!r}"
                )
            count = 0
            text = src
        else:
            if not (isinstance(src, str) and _PILE_RE.fullmatch(src)):
                raise BadMoveText(f"{src!r} is not a pile name")
            if not (isinstance(dst, str) and _PILE_RE.fullmatch(dst)):
                raise BadMoveText(f"{dst!r} is not a pile name")
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise BadMoveText(f"a move's count is an int >= 1, not {count!r}")
            text = f"{src}-{dst}" if count == 1 else f"{src}-{dst}:{count}"
        m = object.__new__(cls)
        object.__setattr__(m, "src", src)
        object.__setattr__(m, "dst", dst)
        object.__setattr__(m, "count", count)
        object.__setattr__(m, "text", text)
        if dst is None:
            cls._interned[key] = m
            cls._interned[(src, None, 0)] = m
        elif (
            count <= _INTERN_MAX_COUNT
            and len(src) <= _INTERN_MAX_NAME
            and len(dst) <= _INTERN_MAX_NAME
        ):
            cls._interned[key] = m
        return m

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Move is immutable")

    def __reduce__(self) -> tuple[type[Move], tuple[str, str, int] | tuple[str]]:
        return (Move, (self.src, self.dst, self.count) if self.dst is not None else (self.src,))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        if self.dst is None:
            return f"Move({self.src!r})"
        if self.count == 1:
            return f"Move({self.src!r}, {self.dst!r})"
        return f"Move({self.src!r}, {self.dst!r}, {self.count})"

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Move) and self.text == other.text)

    def __hash__(self) -> int:
        return hash(self.text)

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse canonical move text only; anything else raises BadMoveText with the reason."""
        m = _PARSED.get(text) if isinstance(text, str) else None
        if m is not None:
            return m
        return _parse_slow(text)


def _parse_slow(text: object) -> Move:
    if not isinstance(text, str):
        raise BadMoveText(f"a move is text, not {type(text).__name__}")
    if len(text) > _MAX_TEXT:
        raise BadMoveText(
            f"{text[:_MAX_TEXT]!r}... is too long to be a move of any game", move=text[:_MAX_TEXT]
        )
    if text in SPECIAL:
        m = Move(text)
    else:
        match = _MOVE_RE.fullmatch(text)
        if match is None:
            raise BadMoveText(
                f"{text!r} is not canonical move text (e.g. 't1-t3', 't1-t3:4', 'deal')", move=text
            )
        src, dst, count = match.groups()
        if count == "1":
            raise BadMoveText(
                f"{text!r} is not canonical move text (':N' is written only for N >= 2)", move=text
            )
        m = Move(src, dst, int(count) if count else 1)
    if len(_PARSED) < _PARSE_CACHE_MAX:
        _PARSED[text] = m
    return m


DEAL = Move("deal")
RECYCLE = Move("recycle")
