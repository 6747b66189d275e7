"""Exact positions built through from_text: name only the cards that matter."""

from __future__ import annotations

from collections import Counter

from solrace.engine import from_text
from solrace.engine.cards import TEXT

PILES = {
    "tabbycat": ["t1", "t2", "t3", "t4", "f1", "f2", "f3", "f4", "r", "s"],
    "manx": ["t1", "t2", "t3", "t4", "f1", "f2", "f3", "f4", "r", "s"],
    "puttputt": ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "f1", "s"],
    "klondike": [f"t{i}" for i in range(1, 8)] + ["f1", "f2", "f3", "f4", "s", "w"],
    "leapyear": [f"t{i}" for i in range(1, 9)] + [f"f{i}" for i in range(1, 17)] + ["s"],
}


def build_position(game_line: str, fill: str = "s", **piles: str):
    """A Game from the given piles; every card not named goes to ``fill``.

    Leftovers are appended after the given stock cards, or put under the given
    cards of any other pile (face down in a Klondike tableau pile), so tests
    name only the cards that matter.
    """
    game = game_line.split()[0]
    decks = 4 if game == "leapyear" else 1
    used = Counter()
    for text in piles.values():
        for item in text.split():
            used[item.strip("[]")] += 1
    want = Counter(dict.fromkeys(TEXT, decks))
    rest = sorted((want - used).elements(), key=TEXT.index)
    lines = [f"game {game_line}"]
    for name in PILES[game]:
        items = piles.get(name, "").split()
        if name == fill:
            if name == "s":
                items = items + rest
            elif game == "klondike" and name.startswith("t"):
                items = [f"[{c}]" for c in rest] + items
            else:
                items = rest + items
        lines.append(" ".join([name, *items]))
    return from_text("\n".join(lines) + "\n")
