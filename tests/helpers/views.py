"""Reading what a client was sent, shared by the server's end-to-end tests.

These work on the wire data alone (a player's own view, any message), so the tests that use
them stay independent of the Python client library under test elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

CARD = re.compile(r"^[A23456789TJQK][CDHS]$")
#: the address a spectator who is none of the racers connects from: every test client connects
#: from 127.0.0.1, and the server shows no board of a race to a racer's address (issue 10)
ELSEWHERE = "127.0.0.2"
RANKS = "A23456789TJQK"


def putt_move(view: dict[str, Any], deal: bool = True) -> str | None:
    """A Putt Putt move from a player's own view: a tX-f1 play when one is legal, else `deal`
    while the stock has cards (when `deal`), else None."""
    piles = view["piles"]
    r = RANKS.index(piles["f1"][-1][0])
    near = {RANKS[(r + 1) % 13], RANKS[(r - 1) % 13]}
    for i in range(1, 8):
        pile = piles[f"t{i}"]
        if pile and isinstance(pile[-1], str) and pile[-1][0] in near:
            return f"t{i}-f1"
    return "deal" if deal and view["stock"] > 0 else None


def strings(obj: Any) -> Iterator[str]:
    """Every string in a decoded message, map keys included."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)
