"""Room codes: how they are drawn, compared and shown in logs (issue 10, item 10).

A public room (listed by the lobby) gets a short code, easy to read out: anyone can see it
anyway. A private room's code is its link's only secret, so it is long: 20 characters of 32
(100 bits). Guessing a private room is then hopeless, and lookups that find nothing are
limited per address besides (server/guard.py).
"""

from __future__ import annotations

import secrets

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
#: a public room's code: short, easy to read out (the lobby lists it anyway)
CODE_LENGTH = 5
#: a private room's code: the link is its only key, so 20 characters (100 bits) nobody guesses
PRIVATE_CODE_LENGTH = 20


def new_code(length: int = CODE_LENGTH) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def shown(code: str) -> str:
    """A room code as logs may show it: a private room's code is its link's secret, so only
    its first characters (enough to follow one room through a log)."""
    return code if len(code) <= CODE_LENGTH else code[:CODE_LENGTH] + "…"


def guessable(code: str) -> bool:
    """A short code: one a client could find by trying codes (public rooms only)."""
    return len(code) <= CODE_LENGTH


def normalize_code(code: str) -> str:
    return code.strip().upper()
