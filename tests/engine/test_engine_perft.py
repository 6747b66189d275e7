"""Perft-style regression anchors: legal-move sequences to depth 4 from fixed seeds.

Any change to move generation (a rule, an order, a missed equivalent move)
changes one of these numbers. Depth-1 counts were checked by hand against the
deals (e.g. Klondike seed 42: 7C-8H, 6D-7C, deal; Tabby Cat seed 42: K on A,
four tail moves, deal).
"""

from __future__ import annotations

import pytest
from solrace.engine import new_game

PERFT = {
    ("tabbycat", (), 0): [6, 37, 206, 1254],
    ("tabbycat", (), 42): [6, 43, 311, 2269],
    ("manx", (), 0): [6, 36, 195, 1147],
    ("manx", (), 42): [6, 41, 284, 1989],
    ("puttputt", (), 0): [2, 5, 15, 34],
    ("puttputt", (), 42): [3, 6, 14, 26],
    ("klondike", (), 0): [6, 19, 40, 69],
    ("klondike", (), 42): [3, 7, 17, 46],
    ("klondike", (("draw", 3), ("moves", "build")), 0): [6, 19, 40, 69],
    ("klondike", (("draw", 3), ("moves", "build")), 42): [3, 8, 21, 57],
    ("leapyear", (), 0): [1, 1, 17, 49],
    ("leapyear", (), 42): [1, 33, 529, 1761],
}


def perft(g, depth: int, checked: bool) -> int:
    if depth == 0:
        return 1
    n = 0
    for m in g.legal_moves():
        g.play(m) if checked else g.apply(m)
        n += perft(g, depth - 1, checked)
        g.undo()
    return n


@pytest.mark.parametrize("key", list(PERFT), ids=lambda k: f"{k[0]}{dict(k[1]) or ''}-{k[2]}")
def test_perft(key):
    game, options, seed = key
    g = new_game(game, seed, dict(options))
    start = g.to_text()
    assert [perft(g, d, checked=(d <= 2)) for d in range(1, 5)] == PERFT[key]
    assert g.to_text() == start and g.history == []
