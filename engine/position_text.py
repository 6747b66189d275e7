"""Reading position text (RULES.md section 4) back into a Game.

Writing is ``Game.to_text()``; reading validates everything a hand-written or
pasted text can get wrong (unknown game, option or pile, a repeated or missing
pile, brackets where no card can be face down, cards that are not exactly the
game's deck(s)) and hands the family class clean piles to rebuild its state from.
"""

from __future__ import annotations

from collections import Counter

from .cards import CARD_OF, deck
from .errors import BadOptions, BadPosition
from .game import Game, Options


def _parse_item(item: str, pile: str, brackets: bool) -> tuple[int, bool]:
    down = False
    if item.startswith("[") and item.endswith("]"):
        if not brackets:
            raise BadPosition(f"pile {pile}: no card is face down there ({item})")
        item = item[1:-1]
        down = True
    c = CARD_OF.get(item)
    if c is None:
        raise BadPosition(f"pile {pile}: {item!r} is not a card (e.g. 'TH')")
    return c, down


def parse_game_line(
    line: str, games: dict[str, type[Game]]
) -> tuple[str, type[Game], Options, dict[str, int]]:
    parts = line.split()
    if len(parts) < 2 or parts[0] != "game":
        raise BadPosition("the first line must be 'game NAME [option=value ...]'")
    name = parts[1]
    cls = games.get(name)
    if cls is None:
        raise BadPosition(f"unknown game {name!r} (games: {', '.join(games)})")
    raw: dict[str, str] = {}
    state: dict[str, int] = {}
    for kv in parts[2:]:
        key, eq, value = kv.partition("=")
        if not eq or not key or not value:
            raise BadPosition(f"{kv!r} on the game line is not key=value")
        if key in raw or key in state:
            raise BadPosition(f"{key} appears twice on the game line")
        if key in cls.STATE_KEYS:
            if not value.isdigit():
                raise BadPosition(f"{key} takes a count, not {value!r}")
            state[key] = int(value)
        else:
            raw[key] = value
    try:
        options = cls.normalize_options(raw)
    except BadOptions as exc:
        raise BadPosition(str(exc)) from None
    return name, cls, options, state


def from_text(text: str, games: dict[str, type[Game]]) -> Game:
    """Rebuild a game from its position text; BadPosition (a ValueError) says what is wrong."""
    if not isinstance(text, str):
        raise BadPosition("a position text is a str")
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        raise BadPosition("empty position text")
    name, cls, options, state = parse_game_line(lines[0], games)
    brackets = cls.FACE_DOWN_PILES
    piles: dict[str, list[tuple[int, bool]]] = {}
    for line in lines[1:]:
        pile, *items = line.split()
        if pile not in cls.PILE_INDEX:
            raise BadPosition(
                f"unknown pile {pile!r} in {name} (piles: {' '.join(cls.PILE_NAMES)})"
            )
        if pile in piles:
            raise BadPosition(f"pile {pile} appears twice")
        piles[pile] = [_parse_item(it, pile, pile in brackets) for it in items]
    missing = [p for p in cls.PILE_NAMES if p not in piles]
    if missing:
        raise BadPosition(f"missing pile(s): {' '.join(missing)}")
    have = Counter(c for items in piles.values() for c, _ in items)
    want = Counter(deck(cls.DECKS))
    if have != want:
        extra = have - want
        short = want - have
        from .cards import TEXT

        parts = []
        if extra:
            parts.append("extra " + " ".join(TEXT[c] for c in sorted(extra.elements())))
        if short:
            parts.append("missing " + " ".join(TEXT[c] for c in sorted(short.elements())))
        decks = "one deck" if cls.DECKS == 1 else f"{cls.DECKS} decks"
        raise BadPosition(f"the cards are not exactly {decks}: {'; '.join(parts)}")
    return cls._from_piles(name, options, state, piles)
