"""Room codes: how they are drawn, compared and shown in logs (issue 10, item 10).

A public room (listed by the lobby) gets a short code, easy to read out: anyone can see it
anyway. A private room's code is its link's only secret, so it is long: 20 characters of 32
(100 bits). Guessing a private room is then hopeless, and lookups that find nothing are
limited per address besides (server/net/guard.py).
"""

from __future__ import annotations

import re
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


#: a private room's code alone in its word (in a channel or key name, an exception's text)
PRIVATE_CODE_SHAPE = re.compile(
    rf"(?<![A-Za-z0-9])[{CODE_ALPHABET}]{{{PRIVATE_CODE_LENGTH}}}(?![A-Za-z0-9])"
)


def shown_in(text: str | bytes) -> str:
    """Any text a log line may hold (a pub/sub channel, a Redis key, an error message), with
    every private room code in it cut as `shown` cuts one: the log filter's second line of
    defence (server/common/redact.py) and what a line naming a channel uses."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return PRIVATE_CODE_SHAPE.sub(lambda found: shown(found.group()), text)


def guessable(code: str) -> bool:
    """A short code: one a client could find by trying codes (public rooms only)."""
    return len(code) <= CODE_LENGTH


def normalize_code(code: str) -> str:
    return code.strip().upper()
