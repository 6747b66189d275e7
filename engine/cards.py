"""Cards as small ints, text only at the edges.

A card is ``suit * 13 + rank - 1`` (0..51) with suits in the unshuffled order
C D H S, so the unshuffled deck is simply ``range(52)``. Multi-deck games hold
the same int more than once, exactly as the notation cannot tell equal cards
apart. Every per-card property is a precomputed list lookup, which is what
keeps move generation fast in pure Python.
"""

from __future__ import annotations

from .errors import EngineError

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"

#: rank 1..13 of each card
RANK: list[int] = [c % 13 + 1 for c in range(52)]
#: suit 0..3 (C D H S) of each card
SUIT: list[int] = [c // 13 for c in range(52)]
#: True for diamonds and hearts
RED: list[bool] = [c // 13 in (1, 2) for c in range(52)]
#: text of each card, e.g. "TH"
TEXT: list[str] = [RANK_CHARS[c % 13] + SUIT_CHARS[c // 13] for c in range(52)]
#: text -> card
CARD_OF: dict[str, int] = {t: c for c, t in enumerate(TEXT)}
#: SUCC[r] is the next rank up with wrap-around (SUCC[13] == 1); index 0 unused
SUCC: list[int] = [0] + [r % 13 + 1 for r in range(1, 14)]


def card(rank: int, suit: int) -> int:
    """The card of ``rank`` (1..13) and ``suit`` (0..3 = C D H S)."""
    if not (1 <= rank <= 13 and 0 <= suit <= 3):
        raise EngineError(f"no card of rank {rank} and suit {suit}")
    return suit * 13 + rank - 1


def parse_card(text: str) -> int:
    """Parse canonical card text ("TH"); anything else is an EngineError (a ValueError)."""
    c = CARD_OF.get(text)
    if c is None:
        raise EngineError(f"{text!r} is not a card (rank A23456789TJQK then suit CDHS, e.g. 'TH')")
    return c


def deck(decks: int = 1) -> list[int]:
    """The unshuffled order: each deck in turn, suits C D H S, each suit A..K."""
    return list(range(52)) * decks
